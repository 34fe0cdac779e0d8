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
// reference implementation in tests/test_aggregate_kernel.py.
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

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace pydp::aggregate {

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

// Zeroed 64-byte-aligned words for a table read at random, one line per row: on Linux the kernel is asked
// for transparent huge pages (madvise), so that random reads of a large table do not miss the TLB.
class LineBuffer {
public:
    explicit LineBuffer(std::size_t words) {
        const std::size_t bytes = std::max<std::size_t>(words, 1) * sizeof(std::uint64_t);
        const std::size_t align = bytes >= (std::size_t{1} << 22) ? (std::size_t{1} << 21) : 64;
        size_ = (bytes + align - 1) / align * align;
        p_ = static_cast<std::uint64_t*>(std::aligned_alloc(align, size_));
        if (p_ == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (align > 64) madvise(p_, size_, MADV_HUGEPAGE);  // a hint: failure leaves normal pages
#endif
        std::memset(p_, 0, size_);
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

private:
    static std::size_t stride_for(std::size_t k) noexcept {
        const std::size_t w = 2 + 2 * k;
        if (w > 8) return (w + 7) / 8 * 8;
        std::size_t s = 1;
        while (s < w) s *= 2;
        return s;
    }
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
    std::vector<std::uint32_t> count(in.persons * kp, 0);
    for (const auto& c : cands) ++count[c.slot];
    std::vector<std::uint8_t> keep(cands.size(), 1);
    std::vector<detail::Entry> e;
    for (std::size_t j = 0; j < cands.size(); ++j) {
        const std::size_t slot = cands[j].slot;
        if (count[slot] <= max_contributions) continue;
        const std::uint64_t* r = top.at(slot / kp);
        const std::uint64_t pair = top.pairs(r)[slot % kp];
        const std::uint64_t row = keyed_mix(pair ^ content_hash(in, static_cast<std::size_t>(cands[j].index)), k.row0, k.row1);
        // the candidate's position orders like its row index (candidates are in row order)
        e.push_back(detail::Entry{pair, static_cast<std::int64_t>(top.groups(r)[slot % kp]), row, static_cast<std::int64_t>(j)});
        keep[j] = 0;
    }
    std::sort(e.begin(), e.end());
    std::vector<std::pair<std::uint64_t, std::size_t>> prio;
    for (std::size_t s = 0; s < e.size();) {
        std::size_t t = s + 1;
        while (t < e.size() && e[t].pair == e[s].pair && e[t].group == e[s].group) ++t;
        detail::keep_smallest_rows(e, s, t, max_contributions, k, prio,
                                   [&](std::int64_t i) { keep[static_cast<std::size_t>(i)] = 1; });
        s = t;
    }
    kept.clear();
    for (std::size_t j = 0; j < cands.size(); ++j)
        if (keep[j]) kept.push_back(cands[j].index);
    for (std::size_t p = 0; p < in.persons; ++p) {
        const std::uint64_t* r = top.at(p);
        for (std::size_t j = 0; j < detail::TopKeys::filled(r); ++j) ++units[top.groups(r)[j]];
    }
}

// The kept row indices (increasing), per group the number of kept (person, group) pairs, and seen[g] = 1
// for the groups with at least one row (before bounding; seen must hold zeros on entry).
inline void bound_contributions(const BoundingInput& in, std::size_t max_partitions, std::size_t max_contributions,
                                const BoundingKeys& k, unsigned threads, std::vector<std::int64_t>& kept,
                                std::int64_t* units, std::uint8_t* seen) {
    if (max_partitions <= kMaxStreamingPartitions && in.persons < (std::size_t{1} << 32) &&
        in.groups < (std::size_t{1} << 32)) {
        bound_contributions_streaming(in, max_partitions, max_contributions, k, threads, kept, units, seen);
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

}  // namespace pydp::aggregate
