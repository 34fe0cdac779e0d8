// Tests of the aggregation kernels (csrc/include/pydp/aggregation/): on fixed pseudo-random data,
// - contribution bounding keeps at most max_partitions groups per person and max_contributions rows per
//   (person, group) pair, and exactly that many where a person has more (the choice is maximal); a person
//   with few rows keeps them all; units[g] counts the kept pairs; the streaming, partitioned and sorted
//   paths and every thread count agree, and the kept rows do not depend on the row order;
// - the exact limb sums of quantized terms equal the naive integer sum of the same terms, and for values
//   on the grid the naive floating-point sum (exact there) as well.
// Built by CMake (PYDP_BUILD_TESTS) and run by ctest; the exit status is the number of failures.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "pydp/aggregation/bounding.hpp"
#include "pydp/aggregation/exact_sums.hpp"

#include "check.hpp"

namespace {
namespace agg = pydp::aggregation;

struct Rng {  // splitmix64: a fixed, portable stream for the test data
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
};

struct Data {
    std::size_t persons = 500, groups = 40;
    std::vector<std::int64_t> person, group;
    std::vector<double> value;
    std::vector<std::uint64_t> person_hash, group_hash;
};

// n rows; person p has about p % 37 + 1 rows on average (many persons with few rows, some with many), in
// few or many groups; every row's value is distinct (it identifies the row).
Data make_data(std::size_t n) {
    Data d;
    Rng r{12345};
    for (std::size_t p = 0; p < d.persons; ++p) d.person_hash.push_back(r.next());
    for (std::size_t g = 0; g < d.groups; ++g) d.group_hash.push_back(r.next());
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t p = r.below(d.persons) % (r.below(d.persons) + 1);
        d.person.push_back(static_cast<std::int64_t>(p));
        d.group.push_back(static_cast<std::int64_t>(p % 3 == 0 ? r.below(3) : r.below(d.groups)));
        d.value.push_back(static_cast<double>(i) * 0.25 - 1000.0);
    }
    return d;
}

struct Result {
    std::vector<std::int64_t> kept;
    std::vector<std::int64_t> units;
};

Result bound(const Data& d, std::size_t max_partitions, std::size_t max_contributions, unsigned threads,
             std::size_t bucket_persons) {
    const double* cols[1] = {d.value.data()};
    const agg::BoundingInput in{d.person.size(), d.person.data(), d.person_hash.data(), d.persons, d.group.data(),
                                d.group_hash.data(), d.groups, cols, 1, 0x5eedULL, nullptr};
    const agg::BoundingKeys keys{11, 22, 33, 44, 55, 66, 77};
    Result out;
    out.units.assign(d.groups, 0);
    std::vector<std::uint8_t> seen(d.groups, 0);
    agg::bound_contributions(in, max_partitions, max_contributions, keys, threads, out.kept, out.units.data(), seen.data(),
                             bucket_persons);
    return out;
}

// The kept rows by their values (row identities), sorted.
std::vector<double> kept_values(const Data& d, const Result& r) {
    std::vector<double> v;
    for (std::int64_t i : r.kept) v.push_back(d.value[static_cast<std::size_t>(i)]);
    std::sort(v.begin(), v.end());
    return v;
}

void check_limits(const Data& d, const Result& r, std::size_t kp, std::size_t kc) {
    std::map<std::int64_t, std::map<std::int64_t, std::size_t>> all, kept;  // person -> group -> rows
    for (std::size_t i = 0; i < d.person.size(); ++i) ++all[d.person[i]][d.group[i]];
    for (std::int64_t i : r.kept) ++kept[d.person[static_cast<std::size_t>(i)]][d.group[static_cast<std::size_t>(i)]];
    std::vector<std::int64_t> units(d.groups, 0);
    for (const auto& [p, groups] : all) {
        const auto it = kept.find(p);
        const std::size_t rows = [&] {
            std::size_t s = 0;
            for (const auto& gc : groups) s += gc.second;
            return s;
        }();
        CHECK(it != kept.end());  // every person keeps something
        if (it == kept.end()) continue;
        CHECK(it->second.size() == std::min(kp, groups.size()));  // at most kp groups, and maximal
        std::size_t kept_rows = 0;
        for (const auto& [g, c] : it->second) {
            CHECK(groups.count(g) == 1);
            CHECK(c == std::min(kc, groups.at(g)));  // at most kc rows, and maximal
            kept_rows += c;
            ++units[static_cast<std::size_t>(g)];
        }
        if (rows <= std::min(kp, kc)) CHECK(kept_rows == rows);
    }
    CHECK(units == r.units);
    CHECK(std::is_sorted(r.kept.begin(), r.kept.end()));
}

void bounding() {
    const Data d = make_data(20000);
    for (const auto& [kp, kc] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 2}, {16, 5}, {20, 3}}) {
        const Result a = bound(d, kp, kc, 1, agg::kChoosePath);
        check_limits(d, a, kp, kc);
        for (unsigned threads : {1u, 3u}) {
            for (std::size_t bucket : {std::size_t{0}, std::size_t{64}, agg::kChoosePath}) {
                const Result b = bound(d, kp, kc, threads, bucket);
                CHECK(b.kept == a.kept && b.units == a.units);
            }
        }
        // The same rows in reverse order keep the same rows.
        Data rev = d;
        std::reverse(rev.person.begin(), rev.person.end());
        std::reverse(rev.group.begin(), rev.group.end());
        std::reverse(rev.value.begin(), rev.value.end());
        const Result c = bound(rev, kp, kc, 2, agg::kChoosePath);
        CHECK(kept_values(rev, c) == kept_values(d, a));
        CHECK(c.units == a.units);
    }
}

void exact_sums() {
    Rng r{777};
    const std::size_t n_groups = 7, m = 50000;
    std::vector<std::int64_t> groups(m), rows(m), count(n_groups, 0);
    std::vector<double> values(m), on_grid(m);
    for (std::size_t i = 0; i < m; ++i) {
        groups[i] = static_cast<std::int64_t>(r.below(n_groups));
        rows[i] = static_cast<std::int64_t>(i);
        ++count[static_cast<std::size_t>(groups[i])];
        // Values of every magnitude in [-1e6, 1e6], and values on the grid 2^-10.
        const double u = static_cast<double>(r.next() >> 11) * 0x1p-53;
        values[i] = (u - 0.5) * std::ldexp(1.0, static_cast<int>(r.below(21)));
        on_grid[i] = std::ldexp(static_cast<double>(static_cast<std::int64_t>(r.below(1 << 20)) - (1 << 19)), -10);
    }
    const double lo = -1e6, hi = 1e6;
    const int e_gamma = -20;
    const agg::TermSpec term{agg::Term::Sum, 1e6, e_gamma};
    for (const std::vector<double>* x : {&values, &on_grid}) {
        std::vector<std::int64_t> limbs(3 * n_groups, 0);
        agg::component_limbs(groups.data(), x->data(), rows.data(), m, lo, hi, &term, 1, n_groups, limbs.data(), 3);
        std::vector<double> out(n_groups);
        agg::limbs_on_grid(limbs.data(), limbs.data() + n_groups, limbs.data() + 2 * n_groups, count.data(), n_groups,
                           e_gamma, e_gamma, out.data());
        std::vector<std::int64_t> naive(n_groups, 0);  // the quantized terms summed as integers
        std::vector<double> naive_fp(n_groups, 0.0);
        for (std::size_t i = 0; i < m; ++i) {
            const double t = std::min(std::max((*x)[i], lo), hi);
            naive[static_cast<std::size_t>(groups[i])] += static_cast<std::int64_t>(std::nearbyint(std::ldexp(t, -e_gamma)));
            naive_fp[static_cast<std::size_t>(groups[i])] += t;
        }
        for (std::size_t g = 0; g < n_groups; ++g) {
            CHECK(out[g] == std::ldexp(static_cast<double>(naive[g]), e_gamma));
            if (x == &on_grid) CHECK(out[g] == naive_fp[g]);  // sums of multiples of 2^-10 below 2^43: exact
        }
        // The serial kernel gives the same limbs.
        std::vector<std::int64_t> serial(3 * n_groups, 0);
        agg::component_limbs_serial(groups.data(), x->data(), rows.data(), m, lo, hi, &term, 1, n_groups, serial.data());
        CHECK(serial == limbs);
    }
}
}  // namespace

int main() {
    bounding();
    exact_sums();
    return pydp_test::report();
}
