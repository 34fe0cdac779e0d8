// Bindings for the aggregate area (kernels in csrc/include/pydp/aggregation/): per-person contribution
// bounding and keyed per-group discrete Laplace and discrete Gaussian noise. The Python layer (pydp_core/aggregation/bounding.py) validates every argument first.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bind_util.hpp"
#include "pydp/aggregation/bounding.hpp"
#include "pydp/aggregation/exact_sums.hpp"
#include "pydp/aggregation/keyed_noise.hpp"
#include "pydp/random/generator.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace agg = pydp::aggregation;
using i64array = py::array_t<std::int64_t, py::array::c_style>;
using u64array = py::array_t<std::uint64_t, py::array::c_style>;

namespace {
// x[j] + noise of gen.spawn(streams[j]) for integers, and the grid release of x[j] with that noise, for
// one exact sampler family parameterised by the rational s/d (pydp/aggregation/keyed_noise.hpp).
template <class Sampler>
void bind_keyed_noise(py::module_& m, const char* integers, const char* release, const char* law) {
    m.def(
        integers,
        [](const pydp::random::Generator& base, const u64array& streams, const i64array& x, std::uint64_t s,
           std::uint64_t d, long threads) {
            if (streams.ndim() != 1 || x.ndim() != 1 || streams.size() != x.size())
                throw std::invalid_argument("streams and x must be 1-d arrays of one length");
            const Sampler sampler(s, d);
            i64array out(x.size());
            const std::uint64_t* st = streams.data();
            const std::int64_t* in = x.data();
            std::int64_t* o = out.mutable_data();
            const unsigned nt = resolve_threads(threads);
            {
                py::gil_scoped_release release;
                agg::keyed_integer_noise(sampler, base, st, in, o, static_cast<std::size_t>(x.size()), nt);
            }
            return out;
        },
        py::arg("gen"), py::arg("streams"), py::arg("x"), py::arg("s"), py::arg("d"), py::arg("threads"),
        (std::string("x[j] + ") + law + " noise from gen.spawn(streams[j]) (see pydp/aggregation/keyed_noise.hpp)").c_str());
    m.def(
        release,
        [](const pydp::random::Generator& base, const u64array& streams, const darray& x, std::uint64_t s,
           std::uint64_t d, int grid_exponent, long threads) {
            if (streams.ndim() != 1 || x.ndim() != 1 || streams.size() != x.size())
                throw std::invalid_argument("streams and x must be 1-d arrays of one length");
            const Sampler sampler(s, d);
            darray out(x.size());
            const std::uint64_t* st = streams.data();
            const double* in = x.data();
            double* o = out.mutable_data();
            const unsigned nt = resolve_threads(threads);
            {
                py::gil_scoped_release release;
                agg::keyed_grid_release(sampler, base, st, in, o, static_cast<std::size_t>(x.size()), grid_exponent, nt);
            }
            return out;
        },
        py::arg("gen"), py::arg("streams"), py::arg("x"), py::arg("s"), py::arg("d"), py::arg("grid_exponent"),
        py::arg("threads"), (std::string("the grid release of x[j] with ") + law + " noise of gen.spawn(streams[j])").c_str());
}
}  // namespace

void register_aggregation(py::module_ m) {
    m.doc() = "aggregate kernels: per-person contribution bounding, keyed per-group noise";
    m.def(
        "bound_contributions",
        [](const i64array& person, const u64array& person_hash, const i64array& group, const u64array& group_hash,
           const std::vector<darray>& values, const darray& bounds, std::uint64_t content_seed,
           std::size_t max_partitions, std::size_t max_contributions, const u64array& keys, long threads,
           long bucket_persons) {
            if (bucket_persons < -1) throw std::invalid_argument("bucket_persons: -1 (choose), 0 (none) or a power of two");
            const py::ssize_t n = person.size();
            if (person.ndim() != 1 || group.ndim() != 1 || group.size() != n)
                throw std::invalid_argument("person and group must be 1-d arrays of one length");
            std::vector<const double*> columns;
            for (const darray& v : values) {
                if (v.ndim() != 1 || v.size() != n) throw std::invalid_argument("values: 1-d arrays of the rows' length");
                columns.push_back(v.data());
            }
            if (bounds.size() != 0 && bounds.size() != static_cast<py::ssize_t>(2 * columns.size()))
                throw std::invalid_argument("bounds: empty, or (low, high) per values column");
            for (py::ssize_t j = 0; j + 1 < bounds.size(); j += 2)
                if (!(bounds.data()[j] <= bounds.data()[j + 1])) throw std::invalid_argument("bounds: low <= high");
            if (keys.size() != 7) throw std::invalid_argument("keys must hold 7 words");
            const std::uint64_t* w = keys.data();
            const agg::BoundingKeys k{w[0], w[1], w[2], w[3], w[4], w[5], w[6]};
            const agg::BoundingInput in{static_cast<std::size_t>(n), person.data(), person_hash.data(),
                                        static_cast<std::size_t>(person_hash.size()), group.data(), group_hash.data(),
                                        static_cast<std::size_t>(group_hash.size()), columns.data(), columns.size(),
                                        content_seed, bounds.size() ? bounds.data() : nullptr};
            i64array units(group_hash.size());
            std::fill(units.mutable_data(), units.mutable_data() + units.size(), std::int64_t{0});
            std::int64_t* up = units.mutable_data();
            py::array_t<std::uint8_t> seen(group_hash.size());
            std::fill(seen.mutable_data(), seen.mutable_data() + seen.size(), std::uint8_t{0});
            std::uint8_t* sp = seen.mutable_data();
            std::vector<std::int64_t> kept;
            const unsigned nt = resolve_threads(threads);
            {
                py::gil_scoped_release release;
                agg::bound_contributions(in, max_partitions, max_contributions, k, nt, kept, up, sp,
                                         bucket_persons < 0 ? agg::kChoosePath : static_cast<std::size_t>(bucket_persons));
            }
            i64array rows(static_cast<py::ssize_t>(kept.size()));
            std::copy(kept.begin(), kept.end(), rows.mutable_data());
            return py::make_tuple(rows, units, seen);
        },
        py::arg("person"), py::arg("person_hash"), py::arg("group"), py::arg("group_hash"), py::arg("values"),
        py::arg("bounds"), py::arg("content_seed"), py::arg("max_partitions"), py::arg("max_contributions"),
        py::arg("keys"), py::arg("threads"), py::arg("bucket_persons") = -1,
        "(kept row indices, increasing; kept (person, group) pairs per group; groups with rows); see pydp/aggregation/bounding.hpp");

    m.def(
        "component_limbs",
        [](const i64array& groups, const darray& values, const i64array& rows, double lo, double hi,
           const std::vector<int>& terms, const std::vector<double>& b, const std::vector<int>& e_gamma, std::size_t n_groups,
           long threads) {
            if (groups.ndim() != 1 || rows.ndim() != 1 || values.ndim() != 1 || groups.size() != rows.size())
                throw std::invalid_argument("groups and rows must be 1-d arrays of one length, values 1-d");
            if (terms.empty() || b.size() != terms.size() || e_gamma.size() != terms.size())
                throw std::invalid_argument("terms, b and e_gamma: one entry per term, at least one");
            std::vector<agg::TermSpec> spec;
            for (std::size_t j = 0; j < terms.size(); ++j) {
                if (terms[j] < 0 || terms[j] > 2) throw std::invalid_argument("terms: 0 (sum), 1 (centred sum) or 2 (centred squares)");
                spec.push_back(agg::TermSpec{static_cast<agg::Term>(terms[j]), b[j], e_gamma[j]});
            }
            const std::size_t m = static_cast<std::size_t>(rows.size());
            const std::int64_t* r = rows.data();
            for (std::size_t i = 0; i < m; ++i)
                if (r[i] < 0 || r[i] >= values.size()) throw std::invalid_argument("rows: index out of range");
            const std::size_t width = 3 * spec.size();
            py::array_t<std::int64_t> limbs({static_cast<py::ssize_t>(width), static_cast<py::ssize_t>(n_groups)});
            std::int64_t* out = limbs.mutable_data();
            std::fill(out, out + width * n_groups, std::int64_t{0});
            const std::int64_t* g = groups.data();
            const double* v = values.data();
            const unsigned nt = resolve_threads(threads);
            {
                py::gil_scoped_release release;
                agg::component_limbs(g, v, r, m, lo, hi, spec.data(), spec.size(), n_groups, out, nt);
            }
            return limbs;
        },
        py::arg("groups"), py::arg("values"), py::arg("rows"), py::arg("lo"), py::arg("hi"), py::arg("terms"), py::arg("b"),
        py::arg("e_gamma"), py::arg("n_groups"), py::arg("threads"),
        "(3 terms, n_groups) int64 limb sums of the quantized terms of values[rows] (see pydp/aggregation/exact_sums.hpp)");
    m.def(
        "limbs_on_grid",
        [](const i64array& l0, const i64array& l1, const i64array& l2, const i64array& rows, int e_gamma, int e_grid) {
            const py::ssize_t n = rows.size();
            if (l0.size() != n || l1.size() != n || l2.size() != n || rows.ndim() != 1)
                throw std::invalid_argument("limbs and rows must be 1-d arrays of one length");
            darray out(n);
            agg::limbs_on_grid(l0.data(), l1.data(), l2.data(), rows.data(), static_cast<std::size_t>(n), e_gamma, e_grid,
                               out.mutable_data());
            return out;
        },
        py::arg("l0"), py::arg("l1"), py::arg("l2"), py::arg("rows"), py::arg("e_gamma"), py::arg("e_grid"),
        "the exact group totals of limb sums rounded to the grid 2**e_grid (see pydp/aggregation/exact_sums.hpp)");
    m.def(
        "keyed_words",
        [](const pydp::random::Generator& base, const u64array& streams, std::size_t words, long threads) {
            if (streams.ndim() != 1) throw std::invalid_argument("streams must be a 1-d array");
            if (words == 0 || words > agg::kMaxKeyedWords) throw std::invalid_argument("words must lie in [1, 64]");
            const std::size_t n = static_cast<std::size_t>(streams.size());
            py::array_t<std::uint64_t> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(words)});
            const std::uint64_t* st = streams.data();
            std::uint64_t* o = out.mutable_data();
            const unsigned nt = resolve_threads(threads);
            {
                py::gil_scoped_release release;
                agg::keyed_words(base, st, n, words, o, nt);
            }
            return out;
        },
        py::arg("gen"), py::arg("streams"), py::arg("words"), py::arg("threads"),
        "row j: the first `words` 64-bit words of gen.spawn(streams[j]) (see pydp/aggregation/keyed_noise.hpp)");

    bind_keyed_noise<pydp::release::DiscreteLaplace>(m, "keyed_laplace_integers", "keyed_laplace_release",
                                                     "discrete Laplace(t = s/d)");
    bind_keyed_noise<pydp::release::DiscreteGaussian>(m, "keyed_gaussian_integers", "keyed_gaussian_release",
                                                      "discrete Gaussian(sigma^2 = s/d)");
}

}  // namespace pydp_bind
