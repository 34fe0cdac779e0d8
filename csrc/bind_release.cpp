// Bindings for the discrete area (kernels in csrc/include/pydp/release/): exact discrete Laplace and
// discrete Gaussian noise from the ChaCha20 generator, the lattice tables of the Subbotin and Logistic
// releases (table.hpp), the grid release kernel, and the exact profiles.
// The Python layer (pydp_core.release) validates every argument first; the kernels re-check.
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "bind_util.hpp"
#include "pydp/release/grid_plan.hpp"
#include "pydp/release/lattice_plan.hpp"
#include "pydp/release/profile.hpp"
#include "pydp/release/release.hpp"
#include "pydp/release/samplers.hpp"
#include "pydp/release/table.hpp"
#include "pydp/random/generator.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace rel = pydp::release;
using pydp::random::Generator;
using i64array = py::array_t<std::int64_t, py::array::c_style>;

namespace {

using rel::ChunkSources;

ChunkSources reserve(Generator& gen, std::size_t n) { return rel::reserve_sources(gen, n); }

template <class Sampler>
i64array sample(const Sampler& sampler, Generator& gen, py::ssize_t n, long threads) {
    checked_elements(n, 1, sizeof(std::int64_t), "size");
    i64array out(n);
    std::int64_t* o = out.mutable_data();
    const unsigned nt = resolve_threads(threads);
    const ChunkSources src = reserve(gen, static_cast<std::size_t>(n));
    {
        py::gil_scoped_release release;
        rel::fill_noise(sampler, o, static_cast<std::size_t>(n), nt, src);
    }
    return out;
}

// Test and bench hook: n values drawn one at a time (the path of a single-value release: a fresh chunk of
// gen for one value, made before the clock starts), each draw timed with the steady clock; returns
// (values, nanoseconds).
template <class Sampler>
py::tuple time_draws(const Sampler& sampler, Generator& gen, py::ssize_t n) {
    checked_elements(n, 1, sizeof(std::int64_t), "size");
    i64array vals(n), ns(n);
    std::int64_t* v = vals.mutable_data();
    std::int64_t* t = ns.mutable_data();
    {
        py::gil_scoped_release release;
        const std::uint64_t first = gen.reserve_chunks(static_cast<std::size_t>(n));
        for (py::ssize_t i = 0; i < n; ++i) {
            Generator source = gen.chunk(first + static_cast<std::uint64_t>(i));
            const auto t0 = std::chrono::steady_clock::now();
            rel::fill_chunk(sampler, source, v + i, 1);
            const auto t1 = std::chrono::steady_clock::now();
            t[i] = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
        }
    }
    return py::make_tuple(vals, ns);
}

template <class Sampler>
darray release(const Sampler& sampler, Generator& gen, const darray& x, int grid_exponent, double low, double high,
               long threads) {
    if (grid_exponent < rel::kMinGridExponent || grid_exponent > rel::kMaxGridExponent) {
        throw std::invalid_argument("grid exponent out of range [-1021, 970]");
    }
    darray out(shape_of(x));
    const double* in = x.data();
    double* o = out.mutable_data();
    const std::size_t n = static_cast<std::size_t>(x.size());
    const unsigned nt = resolve_threads(threads);
    const ChunkSources src = reserve(gen, n);
    {
        py::gil_scoped_release release;
        rel::release_on_grid(sampler, in, o, n, grid_exponent, low, high, nt, src);
    }
    return out;
}

// A bit source that hands out given words (test hook).
struct WordSource {
    const std::uint64_t* w;
    std::size_t n, i;
    std::uint64_t next_u64() {
        if (i >= n) throw py::index_error("the given words are exhausted");
        return w[i++];
    }
};

// The source over a 1-d array of at least 16 words (the bit reader takes 16 at a time).
WordSource word_source(const py::array_t<std::uint64_t, py::array::c_style>& words) {
    if (words.ndim() != 1 || words.size() < 16) throw std::invalid_argument("words: a 1-d array of at least 16 words");
    return WordSource{words.data(), static_cast<std::size_t>(words.size()), 0};
}

// The discrete Laplace with every magnitude decided by exact comparisons (test hook).
struct ExactLaplace {
    rel::DiscreteLaplace lap;
};
void fill_chunk(const ExactLaplace& sampler, Generator& source, std::int64_t* out, std::size_t n) {
    sampler.lap.fill<true>(source, out, n);
}
// The discrete Gaussian with every proposal and acceptance trial decided by exact comparisons (test hook).
struct ExactGaussian {
    rel::DiscreteGaussian gauss;
};
void fill_chunk(const ExactGaussian& sampler, Generator& source, std::int64_t* out, std::size_t n) {
    sampler.gauss.fill<true>(source, out, n);
}

}  // namespace

void register_release(py::module_ m) {
    m.doc() = "exact discrete noise (Canonne, Kamath, Steinke 2020) and its privacy profiles";
    m.attr("CHUNK") = rel::kNoiseChunk;
    m.attr("MAX_PARAM") = rel::kMaxParam;
    m.attr("MAX_LAPLACE_T") = rel::kMaxLaplaceT;
    m.attr("MAX_TABLE_HALF") = rel::kMaxTableHalf;

    m.def("discrete_laplace", [](Generator& gen, std::uint64_t s, std::uint64_t d, py::ssize_t n, long threads) {
        return sample(rel::DiscreteLaplace(s, d), gen, n, threads);
    }, py::arg("gen"), py::arg("s"), py::arg("d"), py::arg("size"), py::arg("threads") = 0,
       "n integers from the discrete Laplace law with t = s/d: P(y) ~ exp(-|y| / t).");
    m.def("discrete_gaussian", [](Generator& gen, std::uint64_t num, std::uint64_t den, py::ssize_t n, long threads) {
        return sample(rel::DiscreteGaussian(num, den), gen, n, threads);
    }, py::arg("gen"), py::arg("num"), py::arg("den"), py::arg("size"), py::arg("threads") = 0,
       "n integers from the discrete Gaussian law with sigma^2 = num/den: P(y) ~ exp(-y^2 / (2 sigma^2)).");
    m.def("gaussian_proposal_t", [](std::uint64_t num, std::uint64_t den) { return rel::DiscreteGaussian(num, den).t(); },
          py::arg("num"), py::arg("den"), "The discrete Laplace proposal parameter t used for sigma^2 = num/den.");

    m.def("_discrete_laplace_exact", [](Generator& gen, std::uint64_t s, std::uint64_t d, py::ssize_t n, long threads) {
        return sample(ExactLaplace{rel::DiscreteLaplace(s, d)}, gen, n, threads);
    }, py::arg("gen"), py::arg("s"), py::arg("d"), py::arg("size"), py::arg("threads") = 0,
       "Test hook: discrete_laplace with every magnitude found by exact comparisons (same law, same bits).");
    m.def("_geometric_exact", [](const py::array_t<std::uint64_t, py::array::c_style>& words, std::uint64_t s,
                                 std::uint64_t d) {
        const rel::ExactGeometric geo(s, d);
        WordSource src = word_source(words);
        rel::BitReader<WordSource> br(src);
        const std::uint64_t U = br.word();
        return py::make_tuple(geo.exact(br, U, false), geo.fast_answer(U));
    }, py::arg("words"), py::arg("s"), py::arg("d"),
       "Test hook: (X, the fast path's answer or -1) of the exact geometric for W = 0.words[0] words[1] ... (each word "
       "most significant first; the reader takes 16 words at a time).");
    m.def("_discrete_gaussian_exact", [](Generator& gen, std::uint64_t num, std::uint64_t den, py::ssize_t n, long threads) {
        return sample(ExactGaussian{rel::DiscreteGaussian(num, den)}, gen, n, threads);
    }, py::arg("gen"), py::arg("num"), py::arg("den"), py::arg("size"), py::arg("threads") = 0,
       "Test hook: discrete_gaussian with every trial decided by exact comparisons (same law, same bits).");
    m.def("_exp_ratio_words", [](const py::array_t<std::uint64_t, py::array::c_style>& words, std::uint64_t u,
                                 std::uint64_t s) {
        if (s == 0 || s > rel::kMaxParam || u >= s) throw std::invalid_argument("need 0 <= u < s <= 2^62");
        const rel::ExpRatio trial(s);
        WordSource src = word_source(words);
        rel::BitReader<WordSource> br(src);
        return trial(br, u);
    }, py::arg("words"), py::arg("u"), py::arg("s"),
       "Test hook: the Bernoulli(exp(-u/s)) trial of the CKS geometric stage on given words (W = 0.words[0], then "
       "the bits of words[1:], least significant first).");
    m.def("_exp_neg_bracket", [](std::uint64_t p_hi, std::uint64_t p_lo, std::uint64_t q, std::size_t J) {
        if (q == 0 || J == 0 || J > 64) throw std::invalid_argument("need q >= 1 and 1 <= J <= 64");
        const rel::Bracket b = rel::exp_neg_bracket(rel::BigUInt::from((static_cast<rel::u128>(p_hi) << 64) | p_lo), q, J);
        return py::make_tuple(b.lo.to_string(), b.hi.to_string());
    }, py::arg("p_hi"), py::arg("p_lo"), py::arg("q"), py::arg("words"),
       "Test hook: decimal strings lo, hi with lo <= 2^(64 words) exp(-p/q) <= hi, p = p_hi 2^64 + p_lo.");


    py::class_<rel::LatticeTable>(m, "LatticeTable", "The integer weight table of a lattice noise law (table.hpp).")
        .def(py::init([](int kind, double r, double s, int weight_bits, std::size_t max_half, int tail_bits) {
                 if (kind != 0 && kind != 1) throw std::invalid_argument("kind: 0 (Subbotin) or 1 (Logistic)");
                 py::gil_scoped_release release;
                 return std::make_unique<rel::LatticeTable>(static_cast<rel::LatticeKind>(kind), r, s, weight_bits,
                                                            max_half, tail_bits);
             }),
             py::arg("kind"), py::arg("r"), py::arg("scale"), py::arg("weight_bits"), py::arg("max_half"),
             py::arg("tail_bits") = 0,
             "tail_bits > 0 (Logistic, integer scale): the table stops at the last weight >= 2^(P - tail_bits) and "
             "an exact geometric tail of ratio exp(-1/scale) follows (pure epsilon-DP).")
        .def_property_readonly("half_size", &rel::LatticeTable::half_size)
        .def_property_readonly("has_tail", &rel::LatticeTable::has_tail)
        .def_property_readonly("tail_weight", &rel::LatticeTable::tail_weight,
                               "W_t: P(Y = K + 1 + g) = W_t (1 - q) q^g / total, q = exp(-1/scale) (0: no tail).")
        .def("log_ratio_bound", [](const rel::LatticeTable& t, std::uint64_t shift) {
            py::gil_scoped_release release;
            return t.log_ratio_bound(shift);
        }, py::arg("shift"), "A certified upper bound on max_y log(P(y) / P(y + shift)) (a table with a geometric tail).")
        .def_property_readonly("total", &rel::LatticeTable::total)
        .def_property_readonly("search_steps", &rel::LatticeTable::search_steps)
        .def("weights", [](const rel::LatticeTable& t) {
            const std::size_t K = t.half_size();
            py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(K + 1));
            std::uint64_t* o = out.mutable_data();
            for (std::size_t y = 0; y <= K; ++y) o[y] = t.weight(static_cast<std::int64_t>(y));
            return out;
        }, "W(0), ..., W(K).")
        .def("log_delta", [](const rel::LatticeTable& t, double eps, std::uint64_t shift) {
            py::gil_scoped_release release;
            return t.log_delta(eps, shift);
        }, py::arg("epsilon"), py::arg("shift"), "An upper bound on log delta(epsilon) for the integer shift.")
        .def("sample", [](const rel::LatticeTable& t, Generator& gen, py::ssize_t n, bool stable, long threads) {
            return sample(rel::TableSampler{&t, stable}, gen, n, threads);
        }, py::arg("gen"), py::arg("size"), py::arg("timing_stable") = false, py::arg("threads") = 0)
        .def("release", [](const rel::LatticeTable& t, Generator& gen, const darray& x, int e, double low, double high,
                           bool stable, long threads) {
            return release(rel::TableSampler{&t, stable}, gen, x, e, low, high, threads);
        }, py::arg("gen"), py::arg("x"), py::arg("grid_exponent"), py::arg("low"), py::arg("high"),
           py::arg("timing_stable") = false, py::arg("threads") = 0)
        .def("_time_draws", [](const rel::LatticeTable& t, Generator& gen, py::ssize_t n, bool stable) {
            return time_draws(rel::TableSampler{&t, stable}, gen, n);
        }, py::arg("gen"), py::arg("size"), py::arg("timing_stable") = false,
           "Bench hook: (values, ns) of n single-value draws.")
        .def("_draw_words", [](const rel::LatticeTable& t, const py::array_t<std::uint64_t, py::array::c_style>& words,
                               py::ssize_t n, bool stable) {
            // Test hook: n values one at a time from the given words, with the words and search steps of each.
            if (t.has_tail()) throw std::invalid_argument("_draw_words: not for a table with a geometric tail");
            WordSource src{words.data(), static_cast<std::size_t>(words.size()), 0};  // src.i counts the words
            i64array vals(n), used(n), steps(n);
            for (py::ssize_t i = 0; i < n; ++i) {
                const std::size_t before = src.i;
                std::uint64_t U;
                if (stable) {
                    const std::uint64_t x2 = src.next_u64(), x1 = src.next_u64(), x0 = src.next_u64();
                    U = rel::LatticeTable::uniform_stable(x2, x1, x0, t.total());
                } else {
                    U = t.uniform_exact(src);
                }
                unsigned it = 0;
                std::int64_t blockv = 0;
                t.fill_from_uniform(&U, &blockv, 1, &it);
                vals.mutable_at(i) = blockv;
                used.mutable_at(i) = static_cast<std::int64_t>(src.i - before);
                steps.mutable_at(i) = it;
            }
            return py::make_tuple(vals, used, steps);
        }, py::arg("words"), py::arg("size"), py::arg("timing_stable") = false)
        .def("_from_uniform", [](const rel::LatticeTable& t, const py::array_t<std::uint64_t, py::array::c_style>& u,
                                 bool guided) {
            // Test hook: the values for given uniforms U < T, by the guide table or the fixed-step search.
            if (t.has_tail()) throw std::invalid_argument("_from_uniform: not for a table with a geometric tail");
            const std::uint64_t* up = u.data();
            const std::size_t n = static_cast<std::size_t>(u.size());
            for (std::size_t i = 0; i < n; ++i)
                if (up[i] >= t.total()) throw py::value_error("every uniform must be below the table's total");
            i64array out(static_cast<py::ssize_t>(n));
            std::int64_t* o = out.mutable_data();
            const std::size_t step = guided ? rel::LatticeTable::kSpan : rel::LatticeTable::kBlock;
            for (std::size_t b = 0; b < n; b += step) {
                const std::size_t len = std::min(n - b, step);
                if (guided)
                    t.fill_guided(up + b, o + b, len);
                else
                    t.fill_from_uniform(up + b, o + b, len);
            }
            return out;
        }, py::arg("u"), py::arg("guided"));

    const double inf = std::numeric_limits<double>::infinity();
    m.def("release_laplace", [](Generator& gen, const darray& x, std::uint64_t s, std::uint64_t d, int e, double low,
                                double high, long threads) {
        return release(rel::DiscreteLaplace(s, d), gen, x, e, low, high, threads);
    }, py::arg("gen"), py::arg("x"), py::arg("s"), py::arg("d"), py::arg("grid_exponent"), py::arg("low") = -inf,
       py::arg("high") = inf, py::arg("threads") = 0);
    m.def("release_gaussian", [](Generator& gen, const darray& x, std::uint64_t num, std::uint64_t den, int e, double low,
                                 double high, long threads) {
        return release(rel::DiscreteGaussian(num, den), gen, x, e, low, high, threads);
    }, py::arg("gen"), py::arg("x"), py::arg("num"), py::arg("den"), py::arg("grid_exponent"), py::arg("low") = -inf,
       py::arg("high") = inf, py::arg("threads") = 0);

    m.def("_time_laplace_draws", [](Generator& gen, std::uint64_t s, std::uint64_t d, py::ssize_t n) {
        return time_draws(rel::DiscreteLaplace(s, d), gen, n);
    }, py::arg("gen"), py::arg("s"), py::arg("d"), py::arg("size"), "Bench hook: (values, ns) of n single-value draws.");
    m.def("_time_gaussian_draws", [](Generator& gen, std::uint64_t num, std::uint64_t den, py::ssize_t n) {
        return time_draws(rel::DiscreteGaussian(num, den), gen, n);
    }, py::arg("gen"), py::arg("num"), py::arg("den"), py::arg("size"), "Bench hook: (values, ns) of n single-value draws.");

    m.def("dlaplace_log_delta", &rel::dlaplace_log_delta, py::arg("epsilon"), py::arg("inv_t"), py::arg("shift"));
    m.def("dlaplace_log_cdf", &rel::dlaplace_log_cdf, py::arg("m"), py::arg("inv_t"));
    m.def("dgauss_log_delta", &rel::dgauss_log_delta, py::arg("epsilon"), py::arg("sigma2"), py::arg("shift"),
          py::arg("direct") = false);
    m.def("dgauss_log_cdf", &rel::dgauss_log_cdf, py::arg("m"), py::arg("sigma2"));
    m.def("dgauss_log_normaliser", &rel::dgauss_log_normaliser, py::arg("sigma2"));

    // The vector plans (grid_plan.hpp), shared with the C ABI: (status, message, num, grid_exponent,
    // shift, delta_achieved); the Python layer turns a status into its exception.
    auto plan_tuple = [](const rel::GridPlan& p) {
        return py::make_tuple(static_cast<int>(p.status), std::string(p.message), p.num, p.grid_exponent, p.shift,
                              p.delta_achieved);
    };
    m.def("laplace_vector_plan", [plan_tuple](double eps, double sens, int grid_bits, std::uint64_t dim, int norm) {
        return plan_tuple(rel::laplace_vector_plan(eps, sens, grid_bits, dim, static_cast<rel::VectorNorm>(norm)));
    }, py::arg("epsilon"), py::arg("sensitivity"), py::arg("grid_bits"), py::arg("dimension"), py::arg("norm"));
    // The lattice plans (lattice_plan.hpp), shared with the C ABI: (status, message, s, weight_bits,
    // grid_exponent, shift, delta_achieved, epsilon_achieved, table); the Python layer turns a status into
    // its exception. kind: 0 Subbotin, 1 Logistic; tail: the pure-DP Logistic (delta = 0); grid_bits -1:
    // the automatic grid; s0: the continuous scale.
    auto lattice_spec = [](int kind, double r, bool timing_stable, bool tail) {
        if (kind != 0 && kind != 1) throw std::invalid_argument("kind: 0 (Subbotin) or 1 (Logistic)");
        return rel::Lattice{static_cast<rel::LatticeKind>(kind), r, timing_stable, tail};
    };
    m.def("lattice_plan", [lattice_spec](int kind, double r, double eps, double delta, double sens, int grid_bits,
                                         bool timing_stable, bool tail, double s0) -> py::tuple {
        const rel::Lattice L = lattice_spec(kind, r, timing_stable, tail);
        rel::LatticePlan p;
        std::string too_long;  // a table too long: a calibration failure, with its text
        {
            py::gil_scoped_release release;
            try {
                p = rel::lattice_plan(L, eps, delta, sens, grid_bits, s0);
            } catch (const std::length_error& err) {
                p = rel::lattice_failure(rel::PlanStatus::TableTooLong, "");
                too_long = err.what();
            }
        }
        if (p.status == rel::PlanStatus::TableTooLong)
            return py::make_tuple(static_cast<int>(p.status), too_long, 0, 0, 0, 0, 0.0, 0.0, py::none());
        return py::make_tuple(static_cast<int>(p.status), std::string(p.message), p.s, p.weight_bits, p.grid_exponent,
                              p.shift, p.delta_achieved, p.epsilon_achieved, py::cast(std::move(p.table)));
    }, py::arg("kind"), py::arg("r"), py::arg("epsilon"), py::arg("delta"), py::arg("sensitivity"), py::arg("grid_bits"),
       py::arg("timing_stable"), py::arg("tail"), py::arg("s0"),
       "(status, message, s, weight_bits, grid_exponent, shift, delta_achieved, epsilon_achieved, table).");
    m.def("lattice_table", [lattice_spec](int kind, double r, std::uint64_t s, bool tail) -> py::tuple {
        const rel::Lattice L = lattice_spec(kind, r, false, tail);
        rel::BuiltTable bt;
        try {
            py::gil_scoped_release release;
            bt = rel::build_lattice_table(L, s);
        } catch (const std::length_error& err) {
            return py::make_tuple(static_cast<int>(rel::PlanStatus::TableTooLong), std::string(err.what()), py::none(), 0);
        }
        return py::make_tuple(0, std::string(), py::cast(std::move(bt.table)), bt.bits);
    }, py::arg("kind"), py::arg("r"), py::arg("s"), py::arg("tail"),
       "(status, message, table, weight_bits): the table of the integer scale s with the largest weight bits "
       "P <= 62 whose total stays below 2^63.");
    m.def("lattice_grid", [lattice_spec](int kind, double r, double sens, int grid_bits, double s0, bool refine) -> py::tuple {
        int e = 0;
        const bool ok = rel::lattice_grid(lattice_spec(kind, r, false, false), sens, grid_bits, s0, refine, &e);
        return py::make_tuple(ok, e, ok ? rel::grid_shift(sens, e) : 0);
    }, py::arg("kind"), py::arg("r"), py::arg("sensitivity"), py::arg("grid_bits"), py::arg("s0"), py::arg("refine"),
       "(ok, grid_exponent, shift) of the lattice plans' grid for the continuous scale s0 (refine: a finer grid "
       "for small epsilon, within the table budget).");
    // The automatic grid's constants (the vector plans apply the same rule to their own searches).
    m.attr("LATTICE_AUTO_GRID_BITS") = rel::kAutoGridBits;
    m.attr("LATTICE_COARSER_GRID_BITS") = py::make_tuple(rel::kCoarserGridBits[0], rel::kCoarserGridBits[1], rel::kCoarserGridBits[2]);
    m.attr("LATTICE_AUTO_GRID_SLACK") = rel::kAutoGridSlack;
    {
        py::list bits;
        for (int b : rel::kStableGridBits) bits.append(b);
        m.attr("LATTICE_STABLE_GRID_BITS") = py::tuple(bits);
    }
    m.attr("LATTICE_STABLE_TABLE_ENTRIES") = rel::kStableTableEntries;
    m.def("lattice_smallest_passing", [lattice_spec](int kind, double r, double start, bool tail,
                                                     const py::function& excess) -> py::tuple {
        const rel::Lattice L = lattice_spec(kind, r, false, tail);
        rel::PlanStatus st = rel::PlanStatus::Ok;
        std::uint64_t s = 0;
        try {
            s = rel::smallest_passing(start, [&](std::uint64_t q) {
                return excess(py::cast(std::move(rel::build_lattice_table(L, q).table))).cast<double>();
            }, &st);
        } catch (const std::length_error& err) {
            return py::make_tuple(static_cast<int>(rel::PlanStatus::TableTooLong), std::string(err.what()), 0);
        }
        return py::make_tuple(static_cast<int>(st), std::string(), s);
    }, py::arg("kind"), py::arg("r"), py::arg("start"), py::arg("tail"), py::arg("excess"),
       "(status, message, s): the search of lattice_plan with excess(table) <= 0 passing (lattice_plan.hpp).");
    m.def("gaussian_vector_plan", [plan_tuple](double eps, double delta, double sens, int grid_bits, std::uint64_t dim) {
        return plan_tuple(rel::gaussian_vector_plan(eps, delta, sens, grid_bits, dim));
    }, py::arg("epsilon"), py::arg("delta"), py::arg("sensitivity"), py::arg("grid_bits"), py::arg("dimension"));
}
}  // namespace pydp_bind
