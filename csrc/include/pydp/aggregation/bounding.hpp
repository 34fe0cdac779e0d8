// Per-person contribution bounding for differentially private group-by aggregation (docs/aggregate.md,
// section 2). Each person keeps the max_partitions groups with the smallest keyed pair priority and, in
// each kept (person, group) pair, the max_contributions rows with the smallest keyed row priority; the
// priorities are keyed 64-bit mixes of identity hashes and row content, so the kept rows depend on the
// key and the identifiers only, never on the row order. The choice is a function of one person's rows,
// which is all the privacy proof needs (Lemma 1); the mixing makes it a uniform random choice.
//
// Algorithm: a counting sort of the rows by person (O(n + persons), parallel over row ranges); per person, the max_partitions
// smallest (pair priority, group) keys by insertion (limits up to 16; a full sort otherwise), a sort of
// the rows of those pairs by (pair priority, group, row index), and for the pairs that overflow
// max_contributions only, the row priorities (from the row content) and a partial sort. A person with at most min(max_partitions,
// max_contributions) rows keeps everything. Persons are processed in fixed chunks; the output (a keep flag
// per row and the kept pairs' groups) does not depend on the thread count. Checked against the numpy
// reference implementation in tests/aggregation/test_aggregate_kernel.py. For max_partitions <= 16 the streaming path
// (bound_contributions_streaming) avoids the sort, and for a persons' table much larger than a core's cache
// the partitioned path (bound_contributions_partitioned) first routes the rows to buckets of persons.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "pydp/parallel.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pydp::aggregation {

// The MurmurHash3 64-bit finaliser (a bijection of uint64).
constexpr std::uint64_t fmix(std::uint64_t h) noexcept {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

// fmix(fmix(x ^ k0) + k1): a keyed bijection.
constexpr std::uint64_t keyed_mix(std::uint64_t x, std::uint64_t k0, std::uint64_t k1) noexcept {
    return fmix(fmix(x ^ k0) + k1);
}

struct BoundingKeys {
    std::uint64_t group_salt;
    std::uint64_t pair0, pair1;  // pair priority
    std::uint64_t row0, row1;    // row priority from the content
    std::uint64_t dup0, dup1;    // duplicate index of identical rows
};

struct BoundingInput {
    std::size_t n;                    // rows
    const std::int64_t* person;       // [n] codes in [0, persons)
    const std::uint64_t* person_hash; // [persons]
    std::size_t persons;
    const std::int64_t* group;        // [n] codes in [0, groups)
    const std::uint64_t* group_hash;  // [groups]
    std::size_t groups;
    const double* const* values;      // [columns][n] values, NaN refused: the row content after clamping
    std::size_t columns;
    std::uint64_t content_seed;
    const double* bounds = nullptr;   // [columns][2] (low, high) clamping bounds, or null: values already clamped
};

// The row content hash: h = seed, then h = fmix(h ^ bits(v + 0.0)) for each clamped value v of the row
// (clamped as numpy.clip does: min(max(x, low), high)).
inline std::uint64_t content_hash(const BoundingInput& in, std::size_t i) noexcept {
    std::uint64_t h = in.content_seed;
    for (std::size_t c = 0; c < in.columns; ++c) {
        double x = in.values[c][i];
        if (in.bounds != nullptr) x = std::min(std::max(x, in.bounds[2 * c]), in.bounds[2 * c + 1]);
        const double v = x + 0.0;  // -0.0 -> 0.0
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        h = fmix(h ^ bits);
    }
    return h;
}

namespace detail {
// Throws for the first values column with a NaN in nan[c] (flags or-ed over the rows).
inline void check_no_nan(const std::vector<std::vector<std::uint8_t>>& nan, std::size_t columns) {
    for (std::size_t c = 0; c < columns; ++c)
        for (const auto& flags : nan)
            if (flags[c]) throw std::invalid_argument("values column " + std::to_string(c) + " has NaN");
}
struct Row {
    std::int64_t index;
    std::int64_t group;
};
struct Entry {
    std::uint64_t pair;
    std::int64_t group;
    std::uint64_t row;
    std::int64_t index;
    bool operator<(const Entry& o) const noexcept {
        return std::tie(pair, group, row, index) < std::tie(o.pair, o.group, o.row, o.index);
    }
};

// The max_contributions rows of one (person, group) pair e[s, t) (sorted by row priority, then row index)
// with the smallest keyed priorities; identical rows are told apart by their rank among equals, so the
// choice depends on the rows' content and the key, never on their order in the input.
template <class Mark>
void keep_smallest_rows(const std::vector<Entry>& e, std::size_t s, std::size_t t, std::size_t max_contributions,
                        const BoundingKeys& k, std::vector<std::pair<std::uint64_t, std::size_t>>& prio, Mark mark) {
    prio.clear();
    std::size_t run = s;
    for (std::size_t j = s; j < t; ++j) {
        if (e[j].row != e[run].row) run = j;
        const std::uint64_t dup = static_cast<std::uint64_t>(j - run);
        prio.emplace_back(fmix(e[j].row ^ keyed_mix(dup, k.dup0, k.dup1)), j);
    }
    std::partial_sort(prio.begin(), prio.begin() + static_cast<std::ptrdiff_t>(max_contributions), prio.end());
    for (std::size_t j = 0; j < max_contributions; ++j) mark(e[prio[j].second].index);
}
}  // namespace detail

// Sets keep[i] = 1 for the kept rows (0 otherwise; rows of group -1 are dropped) and adds one to units[g]
// per kept (person, group) pair. The general path: any max_partitions.
inline void bound_contributions_sorted(const BoundingInput& in, std::size_t max_partitions, std::size_t max_contributions,
                                const BoundingKeys& k, unsigned threads, std::uint8_t* keep, std::int64_t* units) {
    if (max_partitions == 0 || max_contributions == 0) throw std::invalid_argument("limits must be >= 1");
    const std::size_t n = in.n;
    // Counting sort of the rows by person, carrying each row's group so that the per-person pass below
    // reads memory sequentially. Parallel over contiguous row ranges: range c writes its rows of person p
    // after those of ranges < c, so every bucket lists its rows in increasing index order whatever the
    // number of ranges.
    const unsigned nt = std::max(1u, std::min(threads, 64u));
    const std::size_t span = std::max<std::size_t>(1, (n + nt - 1) / nt);
    const std::size_t nranges = n == 0 ? 0 : (n + span - 1) / span;
    std::vector<std::vector<std::size_t>> fill(nranges, std::vector<std::size_t>(in.persons, 0));
    pydp::parallel_chunks(n, span, nt, [&](std::size_t c, std::size_t i0, std::size_t i1) {
        std::vector<std::size_t>& h = fill[c];
        for (std::size_t i = i0; i < i1; ++i) {
            if (in.person[i] < 0 || static_cast<std::size_t>(in.person[i]) >= in.persons || in.group[i] < -1 ||
                in.group[i] >= static_cast<std::int64_t>(in.groups))
                throw std::invalid_argument("person or group code out of range");
            if (in.group[i] >= 0) ++h[static_cast<std::size_t>(in.person[i])];  // group -1: row dropped
        }
    });
    std::vector<std::size_t> start(in.persons + 1, 0);
    for (std::size_t p = 0; p < in.persons; ++p) {
        std::size_t at = start[p];
        for (std::size_t c = 0; c < nranges; ++c) {
            const std::size_t count = fill[c][p];
            fill[c][p] = at;
            at += count;
        }
        start[p + 1] = at;
    }
    // Every slot is written below: no zero-fill of this (large) buffer.
    const std::unique_ptr<detail::Row[]> rows(new detail::Row[start[in.persons]]);
    pydp::parallel_chunks(n, span, nt, [&](std::size_t c, std::size_t i0, std::size_t i1) {
        std::vector<std::size_t>& f = fill[c];
        for (std::size_t i = i0; i < i1; ++i)
            if (in.group[i] >= 0) rows[f[static_cast<std::size_t>(in.person[i])]++] = detail::Row{static_cast<std::int64_t>(i), in.group[i]};
    });
    fill.clear();
    std::vector<std::uint64_t> group_mix(in.groups);
    for (std::size_t g = 0; g < in.groups; ++g) group_mix[g] = fmix(in.group_hash[g] ^ k.group_salt);
    constexpr std::size_t kPersonChunk = 1024;
    const std::size_t nchunks = (in.persons + kPersonChunk - 1) / kPersonChunk;
    std::vector<std::vector<std::int64_t>> kept_groups(nchunks);
    pydp::parallel_chunks(in.persons, kPersonChunk, threads, [&](std::size_t c, std::size_t p0, std::size_t p1) {
        std::vector<detail::Entry> e;
        std::vector<std::pair<std::uint64_t, std::int64_t>> top;  // the smallest (pair, group) keys
        std::vector<std::int64_t> gs;
        std::vector<std::pair<std::uint64_t, std::size_t>> prio;
        auto& out_groups = kept_groups[c];
        for (std::size_t p = p0; p < p1; ++p) {
            const std::size_t b = start[p], m = start[p + 1] - b;
            if (m == 0) continue;
            if (m <= max_partitions && m <= max_contributions) {  // nothing to drop: every row, every group
                gs.clear();
                for (std::size_t j = 0; j < m; ++j) {
                    keep[rows[b + j].index] = 1;
                    gs.push_back(rows[b + j].group);
                }
                std::sort(gs.begin(), gs.end());
                out_groups.insert(out_groups.end(), gs.begin(), std::unique(gs.begin(), gs.end()));
                continue;
            }
            const std::uint64_t hp = in.person_hash[p];
            auto pair_of = [&](std::int64_t g) { return keyed_mix(hp ^ group_mix[static_cast<std::size_t>(g)], k.pair0, k.pair1); };
            // The max_partitions smallest distinct (pair priority, group) keys, by insertion (small limits).
            const bool select = max_partitions < m && max_partitions <= 16;
            top.clear();
            if (select) {
                for (std::size_t j = 0; j < m; ++j) {
                    const std::int64_t g = rows[b + j].group;
                    const std::pair<std::uint64_t, std::int64_t> key{pair_of(g), g};
                    if (top.size() == max_partitions && !(key < top.back())) continue;
                    auto pos = std::lower_bound(top.begin(), top.end(), key);
                    if (pos != top.end() && *pos == key) continue;
                    top.insert(pos, key);
                    if (top.size() > max_partitions) top.pop_back();
                }
            }
            // The rows of the chosen pairs, by (pair priority, group, row index); row priorities (and the
            // row content) are computed below for the pairs that overflow only.
            e.clear();
            for (std::size_t j = 0; j < m; ++j) {
                const detail::Row& r = rows[b + j];
                if (select && std::none_of(top.begin(), top.end(), [&](const auto& t) { return t.second == r.group; }))
                    continue;
                e.push_back(detail::Entry{pair_of(r.group), r.group, 0, r.index});
            }
            std::sort(e.begin(), e.end());
            const std::size_t me = e.size();
            std::size_t rank = 0;
            for (std::size_t s = 0; s < me && rank < max_partitions; ++rank) {
                std::size_t t = s + 1;
                while (t < me && e[t].pair == e[s].pair && e[t].group == e[s].group) ++t;
                out_groups.push_back(e[s].group);
                if (t - s <= max_contributions) {
                    for (std::size_t j = s; j < t; ++j) keep[e[j].index] = 1;
                } else {
                    for (std::size_t j = s; j < t; ++j)
                        e[j].row = keyed_mix(e[j].pair ^ content_hash(in, static_cast<std::size_t>(e[j].index)), k.row0, k.row1);
                    std::sort(e.begin() + static_cast<std::ptrdiff_t>(s), e.begin() + static_cast<std::ptrdiff_t>(t));
                    detail::keep_smallest_rows(e, s, t, max_contributions, k, prio,
                                               [&](std::int64_t i) { keep[i] = 1; });
                }
                s = t;
            }
        }
    });
    for (const auto& v : kept_groups)
        for (std::int64_t g : v) ++units[g];
}

namespace detail {
// A hint to load the cache line of p (the streaming passes read one random line per row: the loads of
// rows i + kPrefetch are started while row i is processed).
inline void prefetch_line(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}
inline constexpr std::size_t kPrefetch = 16;

// 64-byte-aligned words (zeroed unless zero is false) for a table read at random, one line per row, or a
// large scratch area: on Linux the kernel is asked for transparent huge pages (madvise), so that random
// reads of a large table do not miss the TLB and a large area is mapped with few page faults.
class LineBuffer {
public:
    explicit LineBuffer(std::size_t words, bool zero = true) {
        const std::size_t bytes = std::max<std::size_t>(words, 1) * sizeof(std::uint64_t);
        const std::size_t align = bytes >= (std::size_t{1} << 22) ? (std::size_t{1} << 21) : 64;
        size_ = (bytes + align - 1) / align * align;
        p_ = static_cast<std::uint64_t*>(std::aligned_alloc(align, size_));
        if (p_ == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (align > 64) madvise(p_, size_, MADV_HUGEPAGE);  // a hint: failure leaves normal pages
#endif
        if (zero) std::memset(p_, 0, size_);
    }
    LineBuffer(const LineBuffer&) = delete;
    LineBuffer& operator=(const LineBuffer&) = delete;
    LineBuffer(LineBuffer&& o) noexcept : p_(o.p_), size_(o.size_) { o.p_ = nullptr; }
    ~LineBuffer() { std::free(p_); }
    std::uint64_t* data() const noexcept { return p_; }

private:
    std::uint64_t* p_ = nullptr;
    std::size_t size_ = 0;
};

// Per person, its hash and the smallest (pair priority, group) keys seen so far, at most k of them, in
// increasing order: words [person hash][filled][pair 0 .. k-1][group 0 .. k-1], padded to a power of two
// up to 8 words (one 64-byte line for k <= 3), so each row touches one line.
class TopKeys {
public:
    TopKeys(std::size_t persons, std::size_t k, const std::uint64_t* person_hash)
        : k_(k), stride_(stride_for(k)), w_(persons * stride_for(k)) {
        for (std::size_t p = 0; p < persons; ++p) w_.data()[p * stride_] = person_hash[p];
    }
    std::uint64_t* at(std::size_t p) noexcept { return w_.data() + p * stride_; }
    const std::uint64_t* at(std::size_t p) const noexcept { return w_.data() + p * stride_; }
    void prefetch(std::size_t p) const noexcept { prefetch_line(w_.data() + p * stride_); }
    static std::uint64_t hash(const std::uint64_t* r) noexcept { return r[0]; }
    static std::size_t filled(const std::uint64_t* r) noexcept { return static_cast<std::size_t>(r[1]); }
    const std::uint64_t* pairs(const std::uint64_t* r) const noexcept { return r + 2; }
    const std::uint64_t* groups(const std::uint64_t* r) const noexcept { return r + 2 + k_; }

    // Insert (pair, group) in record r unless it is there already or not among the k smallest; true if it
    // is in the record afterwards.
    bool insert(std::uint64_t* r, std::uint64_t pair, std::uint64_t group) const noexcept {
        const std::size_t f = static_cast<std::size_t>(r[1]);
        std::uint64_t* pairs = r + 2;
        std::uint64_t* groups = r + 2 + k_;
        if (f == k_ && (pair > pairs[f - 1] || (pair == pairs[f - 1] && group > groups[f - 1]))) return false;
        std::size_t pos = 0;
        while (pos < f && (pairs[pos] < pair || (pairs[pos] == pair && groups[pos] < group))) ++pos;
        if (pos < f && pairs[pos] == pair && groups[pos] == group) return true;
        for (std::size_t j = (f < k_ ? f : k_ - 1); j > pos; --j) {
            pairs[j] = pairs[j - 1];
            groups[j] = groups[j - 1];
        }
        pairs[pos] = pair;
        groups[pos] = group;
        if (f < k_) r[1] = f + 1;
        return true;
    }

    static std::size_t stride_for(std::size_t k) noexcept {
        const std::size_t w = 2 + 2 * k;
        if (w > 8) return (w + 7) / 8 * 8;
        std::size_t s = 1;
        while (s < w) s *= 2;
        return s;
    }

private:
    std::size_t k_, stride_;
    LineBuffer w_;
};

struct Candidate {
    std::int64_t index;  // row
    std::size_t slot;    // person * k + rank of the pair among the person's kept pairs
};
struct Seen {  // a row whose pair was among its range's smallest keys when the row was read
    std::int64_t index;
    std::uint32_t person, group;
};

// The kept rows among cands (the rows of the kept pairs of persons [first, first + persons) of top, in row
// order; slot = (person - first) * kp + rank of the pair), appended to kept in row order: every row of a pair with at most
// max_contributions rows, else the max_contributions rows with the smallest row priorities.
inline void keep_candidate_rows(const BoundingInput& in, const TopKeys& top, std::size_t first, std::size_t persons, std::size_t kp,
                                std::size_t max_contributions, const BoundingKeys& k, const std::vector<Candidate>& cands,
                                std::vector<std::int64_t>& kept) {
    std::vector<std::uint32_t> count(persons * kp, 0);
    for (const auto& c : cands) ++count[c.slot];
    std::vector<std::uint8_t> keep(cands.size(), 1);
    std::vector<Entry> e;
    for (std::size_t j = 0; j < cands.size(); ++j) {
        const std::size_t slot = cands[j].slot;
        if (count[slot] <= max_contributions) continue;
        const std::uint64_t* r = top.at(first + slot / kp);
        const std::uint64_t pair = top.pairs(r)[slot % kp];
        const std::uint64_t row = keyed_mix(pair ^ content_hash(in, static_cast<std::size_t>(cands[j].index)), k.row0, k.row1);
        // the candidate's position orders like its row index (candidates are in row order)
        e.push_back(Entry{pair, static_cast<std::int64_t>(top.groups(r)[slot % kp]), row, static_cast<std::int64_t>(j)});
        keep[j] = 0;
    }
    std::sort(e.begin(), e.end());
    std::vector<std::pair<std::uint64_t, std::size_t>> prio;
    for (std::size_t s = 0; s < e.size();) {
        std::size_t t = s + 1;
        while (t < e.size() && e[t].pair == e[s].pair && e[t].group == e[s].group) ++t;
        keep_smallest_rows(e, s, t, max_contributions, k, prio, [&](std::int64_t i) { keep[static_cast<std::size_t>(i)] = 1; });
        s = t;
    }
    for (std::size_t j = 0; j < cands.size(); ++j)
        if (keep[j]) kept.push_back(cands[j].index);
}
}  // namespace detail

// The same kept rows and pairs as bound_contributions_sorted, for max_partitions <= kMaxStreamingPartitions
// (and fewer than 2^32 persons and groups), without sorting the rows by person: (1) one pass over the rows
// keeps per person the max_partitions smallest (pair priority, group) keys (one table per row range, merged
// per person: the smallest keys of a union do not depend on how it was split) and records the rows whose
// key was among them when read; (2) of those, the rows of the finally kept pairs are collected in row
// order; (3) pairs with at most max_contributions rows keep them all, the others keep the rows with the
// smallest row priorities exactly as the sorted path does. One random access per row, to one cache line
// per person (prefetched ahead), and no copy of the rows. Returns the kept row indices in increasing order.
inline constexpr std::size_t kMaxStreamingPartitions = 16;

// About how many rows of a range enter a person's smallest keys when read (a capacity hint, not a bound):
// r rows of a person in random key order enter the k smallest about k (1 + ln(r / k)) times.
inline std::size_t expected_inserts(std::size_t rows, std::size_t persons, std::size_t k) {
    if (rows == 0 || persons == 0) return 0;
    const double r = static_cast<double>(rows) / static_cast<double>(persons);
    const double per = r <= static_cast<double>(k) ? r : static_cast<double>(k) * (1.0 + std::log(r / static_cast<double>(k)));
    return std::min(rows, static_cast<std::size_t>(1.1 * per * static_cast<double>(persons)) + 1024);
}

inline void bound_contributions_streaming(const BoundingInput& in, std::size_t max_partitions,
                                          std::size_t max_contributions, const BoundingKeys& k, unsigned threads,
                                          std::vector<std::int64_t>& kept, std::int64_t* units, std::uint8_t* seen) {
    if (max_partitions == 0 || max_contributions == 0) throw std::invalid_argument("limits must be >= 1");
    if (max_partitions > kMaxStreamingPartitions || in.persons >= (std::size_t{1} << 32) || in.groups >= (std::size_t{1} << 32))
        throw std::invalid_argument("streaming bounding needs max_partitions <= 16 and fewer than 2^32 persons and groups");
    const std::size_t n = in.n, kp = max_partitions;
    const unsigned nt = std::max(1u, std::min(threads, 64u));
    const std::size_t span = std::max<std::size_t>(1 << 16, (n + nt - 1) / nt);
    const std::size_t nranges = n == 0 ? 0 : (n + span - 1) / span;
    std::vector<std::uint64_t> group_mix(in.groups);
    for (std::size_t g = 0; g < in.groups; ++g) group_mix[g] = fmix(in.group_hash[g] ^ k.group_salt);
    auto pair_of = [&](std::uint64_t person_hash, std::int64_t g) {
        return keyed_mix(person_hash ^ group_mix[static_cast<std::size_t>(g)], k.pair0, k.pair1);
    };
    // (1) the kept pairs of every person
    std::vector<detail::TopKeys> tables;
    tables.reserve(std::max<std::size_t>(1, nranges));
    for (std::size_t c = 0; c < std::max<std::size_t>(1, nranges); ++c) tables.emplace_back(in.persons, kp, in.person_hash);
    std::vector<std::vector<std::uint8_t>> seen_in(std::max<std::size_t>(1, nranges), std::vector<std::uint8_t>(in.groups, 0));
    std::vector<std::vector<detail::Seen>> early(std::max<std::size_t>(1, nranges));
    std::vector<std::vector<std::uint8_t>> nan_in(std::max<std::size_t>(1, nranges), std::vector<std::uint8_t>(in.columns, 0));
    pydp::parallel_chunks(n, span, nt, [&](std::size_t c, std::size_t i0, std::size_t i1) {
        detail::TopKeys& t = tables[c];
        std::uint8_t* const saw = seen_in[c].data();
        std::uint8_t* const nan = nan_in[c].data();
        std::vector<detail::Seen>& maybe = early[c];
        maybe.reserve(expected_inserts(i1 - i0, in.persons, kp));
        for (std::size_t i = i0; i < i1; ++i) {
            if (i + detail::kPrefetch < i1) {
                const std::int64_t q = in.person[i + detail::kPrefetch];
                if (q >= 0 && static_cast<std::size_t>(q) < in.persons) t.prefetch(static_cast<std::size_t>(q));
            }
            const std::int64_t p = in.person[i], g = in.group[i];
            if (p < 0 || static_cast<std::size_t>(p) >= in.persons || g < -1 || g >= static_cast<std::int64_t>(in.groups))
                throw std::invalid_argument("person or group code out of range");
            for (std::size_t v = 0; v < in.columns; ++v) nan[v] |= static_cast<std::uint8_t>(std::isnan(in.values[v][i]));
            if (g < 0) continue;
            saw[g] = 1;
            std::uint64_t* r = t.at(static_cast<std::size_t>(p));
            if (t.insert(r, pair_of(detail::TopKeys::hash(r), g), static_cast<std::uint64_t>(g)))
                maybe.push_back(detail::Seen{static_cast<std::int64_t>(i), static_cast<std::uint32_t>(p),
                                             static_cast<std::uint32_t>(g)});
        }
    });
    detail::check_no_nan(nan_in, in.columns);
    for (const auto& v : seen_in)
        for (std::size_t g = 0; g < in.groups; ++g) seen[g] |= v[g];
    detail::TopKeys& top = tables[0];
    if (tables.size() > 1) {
        pydp::parallel_chunks(in.persons, 1 << 14, nt, [&](std::size_t, std::size_t p0, std::size_t p1) {
            for (std::size_t c = 1; c < tables.size(); ++c)
                for (std::size_t p = p0; p < p1; ++p) {
                    const std::uint64_t* r = tables[c].at(p);
                    for (std::size_t j = 0; j < detail::TopKeys::filled(r); ++j)
                        top.insert(top.at(p), tables[c].pairs(r)[j], tables[c].groups(r)[j]);
                }
        });
        while (tables.size() > 1) tables.pop_back();
    }
    // (2) the rows of the kept pairs, in row order. A row of a finally kept pair was among its range's
    // smallest keys when it was read (a key among the smallest of all is among the smallest of any subset
    // that holds it), so only the rows recorded in (1) need to be checked against the final keys.
    std::vector<std::vector<detail::Candidate>> found(early.size());
    pydp::parallel_chunks(early.size(), 1, nt, [&](std::size_t c, std::size_t, std::size_t) {
        const std::vector<detail::Seen>& maybe = early[c];
        std::vector<detail::Candidate>& out = found[c];
        for (std::size_t j = 0; j < maybe.size(); ++j) {
            if (j + detail::kPrefetch < maybe.size()) top.prefetch(maybe[j + detail::kPrefetch].person);
            const std::uint64_t* r = top.at(maybe[j].person);
            const std::uint64_t* groups = top.groups(r);
            for (std::size_t q = 0; q < detail::TopKeys::filled(r); ++q)
                if (groups[q] == maybe[j].group) {
                    out.push_back(detail::Candidate{maybe[j].index, static_cast<std::size_t>(maybe[j].person) * kp + q});
                    break;
                }
        }
        std::vector<detail::Seen>().swap(early[c]);
    });
    std::vector<detail::Candidate> cands;
    if (found.size() == 1) {
        cands.swap(found[0]);
    } else {
        std::size_t total = 0;
        for (const auto& f : found) total += f.size();
        cands.reserve(total);
        for (auto& f : found) {
            cands.insert(cands.end(), f.begin(), f.end());
            std::vector<detail::Candidate>().swap(f);
        }
    }
    // (3) the rows of each kept pair: all of them, or the max_contributions smallest row priorities
    kept.clear();
    detail::keep_candidate_rows(in, top, 0, in.persons, kp, max_contributions, k, cands, kept);
    for (std::size_t p = 0; p < in.persons; ++p) {
        const std::uint64_t* r = top.at(p);
        for (std::size_t j = 0; j < detail::TopKeys::filled(r); ++j) ++units[top.groups(r)[j]];
    }
}

namespace detail {
// A row routed to the bucket of its person: its index, its person relative to the bucket's first, its group.
struct Routed {
    std::uint32_t index, person, group;
};
// Copies bytes (a multiple of 16; both pointers 16-byte aligned) from src to dst with non-temporal stores
// where available (dst's lines are not read first); stream_fence orders them before later stores.
inline void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept {
#if defined(__SSE2__)
    auto* d = static_cast<__m128i*>(dst);
    const auto* s = static_cast<const __m128i*>(src);
    for (std::size_t j = 0; j < bytes / 16; ++j) _mm_stream_si128(d + j, _mm_load_si128(s + j));
#else
    std::memcpy(dst, src, bytes);
#endif
}
inline void stream_fence() noexcept {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}
inline constexpr std::size_t kRoutedBlock = 512;          // rows per block of a bucket's list
inline constexpr std::size_t kRoutePiece = 1 << 20;       // rows routed by one task
inline constexpr std::size_t kRoutePieces = 8;            // pieces per round: the rows of a round are routed, then bucketed
// Persons per bucket (a power of two, at least 64) so that a bucket's part of the table of smallest keys
// takes about kBucketBytes: small enough to stay in a core's L2 cache while the bucket's rows are read.
inline constexpr std::size_t kBucketBytes = std::size_t{1} << 18;
inline constexpr std::size_t kMaxBuckets = 4096;
}  // namespace detail

// The largest power of two, at least 64, of persons per bucket whose part of the table of smallest keys
// (for max_partitions = kp) fits in kBucketBytes, raised until there are at most kMaxBuckets buckets.
inline std::size_t partitioned_bucket_persons(std::size_t persons, std::size_t kp) {
    const std::size_t bytes = detail::TopKeys::stride_for(kp) * sizeof(std::uint64_t);
    std::size_t b = 64;
    while (2 * b * bytes <= detail::kBucketBytes) b *= 2;
    while ((persons + b - 1) / b > detail::kMaxBuckets) b *= 2;
    return b;
}

// The same kept rows and pairs as bound_contributions_streaming, for fewer than 2^32 rows, with better cache
// locality when the persons' table of smallest keys is much larger than a core's cache. The rows are read
// in rounds of kRoutePieces * kRoutePiece rows: (1) the round's rows are routed (in parallel over fixed
// pieces) to the buckets of their persons (bucket_persons consecutive person codes, a power of two), as 12
// bytes (row, person within bucket, group) in a scratch area reused by every round; (2) per bucket, in
// parallel, the bucket's rows update its part of the table of smallest keys (which stays in cache meanwhile)
// and the rows that entered it are recorded, in row order. (3) Per bucket, the rows of the finally kept
// pairs and the kept rows, as in the streaming path; the buckets' kept rows are merged into row order.
// Every bucket sees its rows in increasing row order, whatever the thread count.
inline void bound_contributions_partitioned(const BoundingInput& in, std::size_t max_partitions,
                                            std::size_t max_contributions, const BoundingKeys& k, unsigned threads,
                                            std::vector<std::int64_t>& kept, std::int64_t* units, std::uint8_t* seen,
                                            std::size_t bucket_persons) {
    if (max_partitions == 0 || max_contributions == 0) throw std::invalid_argument("limits must be >= 1");
    if (max_partitions > kMaxStreamingPartitions || in.persons >= (std::size_t{1} << 32) ||
        in.groups >= (std::size_t{1} << 32) || in.n >= (std::size_t{1} << 32))
        throw std::invalid_argument("partitioned bounding needs max_partitions <= 16 and fewer than 2^32 rows, persons and groups");
    if (bucket_persons == 0 || (bucket_persons & (bucket_persons - 1)) != 0)
        throw std::invalid_argument("bucket_persons must be a power of two");
    const std::size_t n = in.n, kp = max_partitions;
    unsigned shift = 0;
    while ((std::size_t{1} << shift) < bucket_persons) ++shift;
    const std::size_t nbuckets = std::max<std::size_t>(1, (in.persons + bucket_persons - 1) / bucket_persons);
    const unsigned nt = std::max(1u, std::min(threads, 64u));
    const std::size_t npieces = n == 0 ? 0 : (n + detail::kRoutePiece - 1) / detail::kRoutePiece;
    const std::size_t slots = std::min(npieces, detail::kRoutePieces);
    using Span = std::pair<const detail::Routed*, const detail::Routed*>;
    std::vector<detail::LineBuffer> arena;
    arena.reserve(slots);
    for (std::size_t c = 0; c < slots; ++c)
        arena.emplace_back(((detail::kRoutePiece + nbuckets * detail::kRoutedBlock) * sizeof(detail::Routed) + 7) / 8, false);
    std::vector<std::vector<std::vector<Span>>> lists(slots, std::vector<std::vector<Span>>(nbuckets));
    // flags or-ed over the pieces that used a scratch slot
    std::vector<std::vector<std::uint8_t>> seen_in(std::max<std::size_t>(1, slots), std::vector<std::uint8_t>(in.groups, 0));
    std::vector<std::vector<std::uint8_t>> nan_in(std::max<std::size_t>(1, slots), std::vector<std::uint8_t>(in.columns, 0));
    std::vector<std::uint64_t> group_mix(in.groups);
    for (std::size_t g = 0; g < in.groups; ++g) group_mix[g] = fmix(in.group_hash[g] ^ k.group_salt);
    detail::TopKeys top(in.persons, kp, in.person_hash);
    std::vector<std::vector<detail::Seen>> maybe(nbuckets);
    for (std::size_t r0 = 0; r0 < npieces; r0 += slots) {
        const std::size_t r1 = std::min(npieces, r0 + slots);
        // (1) route the round's rows: piece c carves blocks of kRoutedBlock rows from its scratch area
        pydp::parallel_chunks(r1 - r0, 1, nt, [&](std::size_t c, std::size_t, std::size_t) {
            const std::size_t i0 = (r0 + c) * detail::kRoutePiece, i1 = std::min(n, i0 + detail::kRoutePiece);
            detail::Routed* next = reinterpret_cast<detail::Routed*>(arena[c].data());
            std::vector<detail::Routed*> cur(nbuckets, nullptr), end(nbuckets, nullptr);
            std::vector<std::vector<Span>>& list = lists[c];
            for (auto& l : list) l.clear();
            std::uint8_t* const saw = seen_in[c].data();
            std::uint8_t* const nan = nan_in[c].data();
            const std::int64_t* const person = in.person;
            const std::int64_t* const group = in.group;
            const std::uint64_t persons = in.persons, groups = in.groups, mask = bucket_persons - 1;
            const unsigned sh = shift;
            for (std::size_t v = 0; v < in.columns; ++v) {
                const double* const x = in.values[v];
                bool any = false;
                for (std::size_t i = i0; i < i1; ++i) any |= std::isnan(x[i]);
                nan[v] |= static_cast<std::uint8_t>(any);
            }
            // Rows are staged per bucket in a buffer of kStage rows (3 cache lines) and written out a whole
            // buffer at a time, bypassing the cache: the scratch lines are not read before being written.
            constexpr std::size_t kStage = 16;
            detail::LineBuffer stage_buf((nbuckets * kStage * sizeof(detail::Routed) + 7) / 8);
            detail::Routed* const stage = reinterpret_cast<detail::Routed*>(stage_buf.data());
            std::vector<std::uint32_t> staged(nbuckets, 0);
            auto block = [&](std::size_t b) {
                if (cur[b] == end[b]) {
                    if (cur[b] != nullptr) list[b].back().second = cur[b];
                    cur[b] = next;
                    end[b] = next + detail::kRoutedBlock;
                    next = end[b];
                    list[b].emplace_back(cur[b], nullptr);
                }
            };
            for (std::size_t i = i0; i < i1; ++i) {
                const std::int64_t p = person[i], g = group[i];
                if (static_cast<std::uint64_t>(p) >= persons || g < -1 || g >= static_cast<std::int64_t>(groups))
                    throw std::invalid_argument("person or group code out of range");
                if (g < 0) continue;
                saw[g] = 1;
                const std::size_t b = static_cast<std::size_t>(p) >> sh;
                detail::Routed* const st = stage + b * kStage;
                const std::uint32_t f = staged[b];
                st[f] = detail::Routed{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(static_cast<std::uint64_t>(p) & mask),
                                       static_cast<std::uint32_t>(g)};
                if (f + 1 < kStage) {
                    staged[b] = f + 1;
                    continue;
                }
                staged[b] = 0;
                block(b);
                detail::stream_copy(cur[b], st, kStage * sizeof(detail::Routed));
                cur[b] += kStage;
            }
            detail::stream_fence();
            for (std::size_t b = 0; b < nbuckets; ++b) {
                if (staged[b] != 0) {
                    block(b);
                    std::memcpy(cur[b], stage + b * kStage, staged[b] * sizeof(detail::Routed));
                    cur[b] += staged[b];
                }
                if (cur[b] != nullptr) list[b].back().second = cur[b];
            }
        });
        // (2) per bucket, its rows of the round against its part of the table
        pydp::parallel_chunks(nbuckets, 1, nt, [&](std::size_t b, std::size_t, std::size_t) {
            const std::size_t base = b << shift;
            std::vector<detail::Seen>& out = maybe[b];
            for (std::size_t c = 0; c < r1 - r0; ++c)
                for (const Span& sp : lists[c][b])
                    for (const detail::Routed* x = sp.first; x != sp.second; ++x) {
                        if (x + detail::kPrefetch < sp.second) top.prefetch(base + x[detail::kPrefetch].person);
                        std::uint64_t* r = top.at(base + x->person);
                        const std::uint64_t pair = keyed_mix(detail::TopKeys::hash(r) ^ group_mix[x->group], k.pair0, k.pair1);
                        if (top.insert(r, pair, x->group))
                            out.push_back(detail::Seen{x->index, static_cast<std::uint32_t>(base + x->person), x->group});
                    }
        });
    }
    arena.clear();
    detail::check_no_nan(nan_in, in.columns);
    for (const auto& v : seen_in)
        for (std::size_t g = 0; g < in.groups; ++g) seen[g] |= v[g];
    // (3) per bucket: the rows of the kept pairs, the kept rows
    std::vector<std::vector<std::int64_t>> kept_in(nbuckets);
    pydp::parallel_chunks(nbuckets, 1, nt, [&](std::size_t b, std::size_t, std::size_t) {
        const std::size_t base = b << shift, persons = std::min(bucket_persons, in.persons - std::min(in.persons, base));
        std::vector<detail::Candidate> cands;
        for (const detail::Seen& s : maybe[b]) {
            const std::uint64_t* r = top.at(s.person);
            const std::uint64_t* groups = top.groups(r);
            for (std::size_t q = 0; q < detail::TopKeys::filled(r); ++q)
                if (groups[q] == s.group) {
                    cands.push_back(detail::Candidate{s.index, (static_cast<std::size_t>(s.person) - base) * kp + q});
                    break;
                }
        }
        std::vector<detail::Seen>().swap(maybe[b]);
        detail::keep_candidate_rows(in, top, base, persons, kp, max_contributions, k, cands, kept_in[b]);
    });
    // the kept rows of all buckets in row order (a bit per row)
    std::vector<std::uint64_t> bits((n + 63) / 64, 0);
    std::size_t total = 0;
    for (auto& v : kept_in) {
        for (std::int64_t i : v) bits[static_cast<std::size_t>(i) >> 6] |= std::uint64_t{1} << (i & 63);
        total += v.size();
        std::vector<std::int64_t>().swap(v);
    }
    kept.clear();
    kept.reserve(total);
    for (std::size_t w = 0; w < bits.size(); ++w)
        for (std::uint64_t x = bits[w]; x != 0; x &= x - 1)
            kept.push_back(static_cast<std::int64_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(x))));
    for (std::size_t p = 0; p < in.persons; ++p) {
        const std::uint64_t* r = top.at(p);
        for (std::size_t j = 0; j < detail::TopKeys::filled(r); ++j) ++units[top.groups(r)[j]];
    }
}

// The persons' table of smallest keys above which the rows are routed to person buckets first.
inline constexpr std::size_t kPartitionAboveBytes = std::size_t{16} << 20;
inline constexpr std::size_t kChoosePath = ~std::size_t{0};

// The kept row indices (increasing), per group the number of kept (person, group) pairs, and seen[g] = 1
// for the groups with at least one row (before bounding; seen must hold zeros on entry). bucket_persons:
// kChoosePath chooses the path from the sizes, 0 never routes rows to person buckets, a power of two
// routes them to buckets of that many persons (when the partitioned path's preconditions hold). Every path
// gives the same output.
inline void bound_contributions(const BoundingInput& in, std::size_t max_partitions, std::size_t max_contributions,
                                const BoundingKeys& k, unsigned threads, std::vector<std::int64_t>& kept,
                                std::int64_t* units, std::uint8_t* seen, std::size_t bucket_persons = kChoosePath) {
    if (max_partitions <= kMaxStreamingPartitions && in.persons < (std::size_t{1} << 32) &&
        in.groups < (std::size_t{1} << 32)) {
        const bool big = in.persons * detail::TopKeys::stride_for(max_partitions) * sizeof(std::uint64_t) > kPartitionAboveBytes;
        if (in.n < (std::size_t{1} << 32) && bucket_persons != 0 && (bucket_persons != kChoosePath || big)) {
            if (bucket_persons == kChoosePath) bucket_persons = partitioned_bucket_persons(in.persons, max_partitions);
            bound_contributions_partitioned(in, max_partitions, max_contributions, k, threads, kept, units, seen, bucket_persons);
        } else {
            bound_contributions_streaming(in, max_partitions, max_contributions, k, threads, kept, units, seen);
        }
        return;
    }
    std::vector<std::vector<std::uint8_t>> nan(1, std::vector<std::uint8_t>(in.columns, 0));
    for (std::size_t c = 0; c < in.columns; ++c)
        for (std::size_t i = 0; i < in.n; ++i) nan[0][c] |= static_cast<std::uint8_t>(std::isnan(in.values[c][i]));
    detail::check_no_nan(nan, in.columns);
    std::vector<std::uint8_t> keep(in.n, 0);
    bound_contributions_sorted(in, max_partitions, max_contributions, k, threads, keep.data(), units);
    kept.clear();
    for (std::size_t i = 0; i < in.n; ++i) {
        if (keep[i]) kept.push_back(static_cast<std::int64_t>(i));
        if (in.group[i] >= 0) seen[in.group[i]] = 1;
    }
}

}  // namespace pydp::aggregation
