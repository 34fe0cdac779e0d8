// Bindings for the discrete area (kernels in csrc/include/pydp/discrete/): exact discrete Laplace and
// discrete Gaussian noise from the ChaCha20 generator, the grid release kernel, and the exact profiles.
// The Python layer (pydp_core/discrete.py) validates every argument first; the kernels re-check.
#include <cstdint>
#include <stdexcept>

#include "bind_util.hpp"
#include "pydp/discrete/profile.hpp"
#include "pydp/discrete/release.hpp"
#include "pydp/discrete/samplers.hpp"
#include "pydp/random/generator.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace dsc = pydp::discrete;
using pydp::random::Generator;
using i64array = py::array_t<std::int64_t, py::array::c_style>;

namespace {

// Reserves fresh chunks of `gen` for n values and returns the per-chunk source maker: chunk c of the
// batch reads the generator's chunk first + c, so the output depends only on the key and the position,
// never on the thread count.
struct ChunkSources {
    const Generator* gen;
    std::uint64_t first;
    Generator operator()(std::size_t c) const { return gen->chunk(first + c); }
};

ChunkSources reserve(Generator& gen, std::size_t n) {
    const std::size_t nchunks = (n + dsc::kNoiseChunk - 1) / dsc::kNoiseChunk;
    return ChunkSources{&gen, nchunks ? gen.reserve_chunks(nchunks) : 0};
}

template <class Sampler>
i64array sample(const Sampler& sampler, Generator& gen, py::ssize_t n, long threads) {
    if (n < 0) throw std::invalid_argument("size must be >= 0");
    i64array out(n);
    std::int64_t* o = out.mutable_data();
    const unsigned nt = resolve_threads(threads);
    const ChunkSources src = reserve(gen, static_cast<std::size_t>(n));
    {
        py::gil_scoped_release release;
        dsc::fill_noise(sampler, o, static_cast<std::size_t>(n), nt, src);
    }
    return out;
}

template <class Sampler>
darray release(const Sampler& sampler, Generator& gen, const darray& x, int grid_exponent, long threads) {
    if (grid_exponent < -1074 || grid_exponent > 970) throw std::invalid_argument("grid exponent out of range [-1074, 970]");
    darray out(shape_of(x));
    const double* in = x.data();
    double* o = out.mutable_data();
    const std::size_t n = static_cast<std::size_t>(x.size());
    const unsigned nt = resolve_threads(threads);
    const ChunkSources src = reserve(gen, n);
    {
        py::gil_scoped_release release;
        dsc::release_on_grid(sampler, in, o, n, grid_exponent, nt, src);
    }
    return out;
}

}  // namespace

void register_discrete(py::module_ m) {
    m.doc() = "exact discrete noise (Canonne, Kamath, Steinke 2020) and its privacy profiles";
    m.attr("CHUNK") = dsc::kNoiseChunk;
    m.attr("MAX_PARAM") = dsc::kMaxParam;
    m.attr("MAX_LAPLACE_T") = dsc::kMaxLaplaceT;

    m.def("discrete_laplace", [](Generator& gen, std::uint64_t s, std::uint64_t d, py::ssize_t n, long threads) {
        return sample(dsc::DiscreteLaplace(s, d), gen, n, threads);
    }, py::arg("gen"), py::arg("s"), py::arg("d"), py::arg("size"), py::arg("threads") = 0,
       "n integers from the discrete Laplace law with t = s/d: P(y) ~ exp(-|y| / t).");
    m.def("discrete_gaussian", [](Generator& gen, std::uint64_t num, std::uint64_t den, py::ssize_t n, long threads) {
        return sample(dsc::DiscreteGaussian(num, den), gen, n, threads);
    }, py::arg("gen"), py::arg("num"), py::arg("den"), py::arg("size"), py::arg("threads") = 0,
       "n integers from the discrete Gaussian law with sigma^2 = num/den: P(y) ~ exp(-y^2 / (2 sigma^2)).");
    m.def("gaussian_proposal_t", [](std::uint64_t num, std::uint64_t den) { return dsc::DiscreteGaussian(num, den).t(); },
          py::arg("num"), py::arg("den"), "The discrete Laplace proposal parameter t used for sigma^2 = num/den.");

    m.def("release_laplace", [](Generator& gen, const darray& x, std::uint64_t s, std::uint64_t d, int e, long threads) {
        return release(dsc::DiscreteLaplace(s, d), gen, x, e, threads);
    }, py::arg("gen"), py::arg("x"), py::arg("s"), py::arg("d"), py::arg("grid_exponent"), py::arg("threads") = 0);
    m.def("release_gaussian", [](Generator& gen, const darray& x, std::uint64_t num, std::uint64_t den, int e, long threads) {
        return release(dsc::DiscreteGaussian(num, den), gen, x, e, threads);
    }, py::arg("gen"), py::arg("x"), py::arg("num"), py::arg("den"), py::arg("grid_exponent"), py::arg("threads") = 0);

    m.def("dlaplace_log_delta", &dsc::dlaplace_log_delta, py::arg("epsilon"), py::arg("inv_t"), py::arg("shift"));
    m.def("dlaplace_log_cdf", &dsc::dlaplace_log_cdf, py::arg("m"), py::arg("inv_t"));
    m.def("dgauss_log_delta", &dsc::dgauss_log_delta, py::arg("epsilon"), py::arg("sigma2"), py::arg("shift"),
          py::arg("direct") = false);
    m.def("dgauss_log_cdf", &dsc::dgauss_log_cdf, py::arg("m"), py::arg("sigma2"));
    m.def("dgauss_log_normaliser", &dsc::dgauss_log_normaliser, py::arg("sigma2"));
}
}  // namespace pydp_bind
