// Bindings for the random area (kernels in csrc/include/pydp/random/).
//
// _core.random.Generator wraps pydp::random::Generator. Other areas' bindings may take a
// `pydp::random::Generator&` argument directly: pybind11 resolves it to this registered class. Bulk
// samplers fill a preallocated C-contiguous float64 or float32 array `out` (allocated and validated by
// pydp_core.random), reserve their chunks with the GIL held and sample with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bind_util.hpp"
#include "pydp/random/bitgen.hpp"
#include "pydp/random/chacha.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/random/fill.hpp"
#include "pydp/random/samplers.hpp"
#include "register.hpp"

namespace py = pybind11;

namespace pydp_bind {
namespace {

using pydp::random::BitGenState;
using pydp::random::ChaChaImpl;
using pydp::random::Generator;

std::string key_arg(const py::bytes& key) {
    std::string k = key;
    if (k.size() != 32) throw std::invalid_argument("key must be exactly 32 bytes");
    return k;
}

ChaChaImpl impl_from_name(const std::string& name);

Generator make_generator(const py::bytes& key, std::uint64_t stream, const std::string& impl, bool secure) {
    const std::string k = key_arg(key);
    const ChaChaImpl im = impl_from_name(impl);
    if (!pydp::random::chacha_impl_available(im)) throw std::invalid_argument("impl not available on this CPU: " + impl);
    return Generator(reinterpret_cast<const unsigned char*>(k.data()), stream, im, secure);
}

// The output array: C-contiguous, writeable, float64 or float32.
enum class OutType { F64, F32 };

OutType out_type(const py::array& out) {
    if (!(out.flags() & py::array::c_style)) throw std::invalid_argument("out must be C-contiguous");
    if (!out.writeable()) throw std::invalid_argument("out must be writeable");
    if (out.dtype().is(py::dtype::of<double>())) return OutType::F64;
    if (out.dtype().is(py::dtype::of<float>())) return OutType::F32;
    throw std::invalid_argument("out must have dtype float64 or float32");
}

// Fill `out` with a bulk draw: chunks reserved with the GIL held, sampling with the GIL released.
void bulk(Generator& gen, py::array& out, long threads, const pydp::random::BulkDraw& draw) {
    const OutType t = out_type(out);
    const std::size_t n = static_cast<std::size_t>(out.size());
    const unsigned nt = resolve_threads(threads);
    const pydp::random::ChunkPlan plan = pydp::random::plan_chunks(gen, n);
    void* data = out.mutable_data();
    py::gil_scoped_release release;
    if (t == OutType::F64)
        draw.fill(gen, plan, nt, static_cast<double*>(data));
    else
        draw.fill(gen, plan, nt, static_cast<float*>(data));
}

using pydp::random::check_finite;
using pydp::random::check_scale;

// numpy's "BitGenerator" capsule for a BitGen object. The capsule holds a reference to the object (its
// context), so the bitgen_t it points to lives as long as the capsule, whoever keeps it.
void release_capsule_owner(PyObject* capsule) {
    Py_XDECREF(static_cast<PyObject*>(PyCapsule_GetContext(capsule)));
}

py::object bitgen_capsule(py::object self) {
    BitGenState& st = self.cast<BitGenState&>();
    PyObject* cap = PyCapsule_New(st.interface(), "BitGenerator", &release_capsule_owner);
    if (!cap) throw py::error_already_set();
    if (PyCapsule_SetContext(cap, self.ptr()) != 0) {
        Py_DECREF(cap);
        throw py::error_already_set();
    }
    Py_INCREF(self.ptr());
    return py::reinterpret_steal<py::object>(cap);
}

ChaChaImpl impl_from_name(const std::string& name) {
    if (name == "auto") return ChaChaImpl::Auto;
    if (name == "scalar") return ChaChaImpl::Scalar;
    if (name == "avx2") return ChaChaImpl::AVX2;
    if (name == "avx512") return ChaChaImpl::AVX512;
    throw std::invalid_argument("impl must be 'auto', 'scalar', 'avx2' or 'avx512'");
}

}  // namespace

void register_random(py::module_ m) {
    m.doc() = "random kernels: ChaCha20 counter-based generator and bulk samplers";

    py::class_<Generator>(m, "Generator",
                          "ChaCha20 counter-based generator from a 32-byte key and a 64-bit stream id "
                          "(see csrc/include/pydp/random/generator.hpp). Not thread-safe; copies are cheap.")
        .def(py::init(&make_generator), py::arg("key"), py::arg("stream") = 0, py::arg("impl") = "auto",
             py::arg("secure") = false)
        .def("ensure_owner", &Generator::ensure_owner,
             "re-key from OS entropy if this secure generator was copied into another process (fork)")
        .def_property_readonly("secure", &Generator::secure)
        .def("next_u64", &Generator::next_u64)
        .def("uniform", &Generator::uniform)
        .def("uniform_open", &Generator::uniform_open)
        .def("normal", &Generator::normal)
        .def("exponential", &Generator::exponential)
        .def("random_raw",
             [](Generator& g, py::ssize_t n) {
                 checked_elements(n, 1, sizeof(std::uint64_t), "n");
                 py::array_t<std::uint64_t> out(n);
                 // Sequential draws move the generator itself, so the GIL stays held: another Python
                 // thread using the same generator must not run concurrently.
                 g.fill_u64(out.mutable_data(), static_cast<std::size_t>(n));
                 return out;
             },
             py::arg("n"), "the next n 64-bit words of the stream (sequential, one thread)")
        .def("direction",
             [](Generator& g, py::ssize_t d) {
                 if (d < 1) throw std::invalid_argument("d must be >= 1");
                 checked_elements(d, 1, sizeof(double), "d");
                 py::array_t<double> out(d);
                 pydp::random::sphere_direction(g, out.mutable_data(), static_cast<std::size_t>(d));
                 return out;
             },
             py::arg("d"), "one uniform direction on S^{d-1} from the sequential stream")
        .def("chunk", [](Generator& g, std::uint64_t c) { g.ensure_owner(); return g.chunk(c); }, py::arg("c"))
        .def("spawn", [](Generator& g, std::uint64_t i) { g.ensure_owner(); return g.spawn(i); }, py::arg("i"))
        .def("reserve_chunks", &Generator::reserve_chunks, py::arg("k"))
        .def("copy", [](Generator& g) { g.ensure_owner(); return Generator(g); })
        .def_property_readonly("stream", &Generator::stream)
        .def_property_readonly("block_counter", &Generator::block_counter)
        .def_property_readonly("key", [](const Generator& g) {
            unsigned char k[32];
            g.key_bytes(k);
            return py::bytes(reinterpret_cast<const char*>(k), 32);
        });

    py::class_<BitGenState>(m, "BitGen",
                            "numpy's bitgen_t over a ChaCha20 Generator (csrc/include/pydp/random/bitgen.hpp); "
                            "pydp_core's ChaCha20 BitGenerator holds one. Not thread-safe: hold the lock.")
        .def(py::init([](const py::bytes& key, std::uint64_t stream) {
                 return std::make_unique<BitGenState>(make_generator(key, stream, "auto", false));
             }),
             py::arg("key"), py::arg("stream") = 0)
        .def("capsule", &bitgen_capsule, "a new PyCapsule 'BitGenerator' pointing at the bitgen_t (keeps this object alive)")
        .def_property_readonly("address", [](BitGenState& s) { return reinterpret_cast<std::uintptr_t>(s.interface()); },
                               "the address of the bitgen_t (for ctypes)")
        .def("random_raw",
             [](BitGenState& s, py::ssize_t n) {
                 if (n < 0) throw std::invalid_argument("size must be >= 0");
                 py::array_t<std::uint64_t> out(n);
                 std::uint64_t* o = out.mutable_data();
                 for (py::ssize_t i = 0; i < n; ++i) o[i] = s.u64();
                 return out;
             },
             py::arg("n"), "the next n 64-bit words (the caller holds the lock)")
        .def("spawn_key",
             [](const BitGenState& s, std::uint64_t i) {
                 unsigned char k[32];
                 s.generator().spawn(i).key_bytes(k);
                 return py::bytes(reinterpret_cast<const char*>(k), 32);
             },
             py::arg("i"), "the key of stream i (Generator::spawn), whose stream id is 0")
        .def("get_state",
             [](const BitGenState& s) {
                 unsigned char k[32];
                 s.generator().key_bytes(k);
                 std::uint64_t block = 0;
                 unsigned word = 0;
                 s.position(&block, &word);
                 return py::make_tuple(py::bytes(reinterpret_cast<const char*>(k), 32), s.generator().stream(), block,
                                       word, s.has_uint32(), s.uinteger());
             },
             "(key, stream, block, word, has_uint32, uinteger)")
        .def("set_state",
             [](BitGenState& s, const py::bytes& key, std::uint64_t stream, std::uint64_t block, unsigned word,
                bool has_uint32, std::uint32_t uinteger) {
                 s.set(make_generator(key, stream, "auto", false), block, word, has_uint32, uinteger);
             },
             py::arg("key"), py::arg("stream"), py::arg("block"), py::arg("word"), py::arg("has_uint32"),
             py::arg("uinteger"));

    m.attr("CHUNK") = py::int_(pydp::random::kFillChunk);
    m.attr("CHUNK_BLOCKS") = py::int_(Generator::kChunkBlocks);

    m.def("chacha20_block",
          [](const py::bytes& key, std::uint64_t counter, std::uint64_t nonce, std::size_t nblocks, const std::string& impl) {
              const std::string k = key_arg(key);
              const ChaChaImpl im = impl_from_name(impl);
              if (!pydp::random::chacha_impl_available(im)) throw std::invalid_argument("impl not available on this CPU: " + impl);
              std::uint32_t kw[8];
              pydp::random::key_from_bytes(reinterpret_cast<const unsigned char*>(k.data()), kw);
              if (nblocks > static_cast<std::size_t>(std::numeric_limits<long long>::max()))
                  throw std::invalid_argument("nblocks is too large");
              // 4 bytes per word in `words` and again in the returned bytes
              const std::size_t nwords = checked_elements(static_cast<long long>(nblocks), pydp::random::kBlockWords, 8, "nblocks");
              std::vector<std::uint32_t> words(nwords);
              pydp::random::chacha20_blocks(kw, counter, nonce, words.data(), nblocks, im);
              std::string bytes(words.size() * 4, '\0');
              for (std::size_t i = 0; i < words.size(); ++i)
                  for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<char>((words[i] >> (8 * b)) & 0xff);
              return py::bytes(bytes);
          },
          py::arg("key"), py::arg("counter"), py::arg("nonce"), py::arg("nblocks") = 1, py::arg("impl") = "auto",
          "keystream bytes of nblocks ChaCha20 blocks (64-bit counter in state words 12-13, 64-bit nonce in 14-15)");
    m.def("chacha_impls", [] {
        std::vector<std::string> v{"scalar"};
        if (pydp::random::chacha_impl_available(ChaChaImpl::AVX2)) v.push_back("avx2");
        if (pydp::random::chacha_impl_available(ChaChaImpl::AVX512)) v.push_back("avx512");
        return v;
    });
    m.def("chacha_best_impl", [] {
        switch (pydp::random::chacha_best_impl()) {
            case ChaChaImpl::AVX512: return std::string("avx512");
            case ChaChaImpl::AVX2: return std::string("avx2");
            default: return std::string("scalar");
        }
    });
    m.def("ziggurat_closure", [] {
        return py::make_tuple(pydp::random::normal_table().closure, pydp::random::exponential_table().closure);
    }, "how far the layer recursion misses f(0) = 1 (normal, exponential); ~0 when R is right");

    m.def("det_log", [](const darray& x) { return map1(x, 1, [](double v) { return pydp::random::detail::det_log(v); }); },
          py::arg("x"), "the sampler's own log (Subbotin path), for accuracy tests; finite normal x > 0 only");
    m.def("det_exp", [](const darray& x) { return map1(x, 1, [](double v) { return pydp::random::detail::det_exp(v); }); },
          py::arg("x"), "the sampler's own exp (Subbotin path), for accuracy tests; |x| <= 700");

    // ---- bulk samplers (arguments validated in pydp_core.random; re-checked here) -----------------
    using namespace pydp::random;
    m.def("normal", [](Generator& g, py::array out, double loc, double scale, long threads) {
        bulk(g, out, threads, BulkDraw::normal(loc, scale));
    }, py::arg("gen"), py::arg("out"), py::arg("loc"), py::arg("scale"), py::arg("threads"));
    m.def("laplace", [](Generator& g, py::array out, double loc, double scale, long threads) {
        bulk(g, out, threads, BulkDraw::laplace(loc, scale));
    }, py::arg("gen"), py::arg("out"), py::arg("loc"), py::arg("scale"), py::arg("threads"));
    m.def("logistic", [](Generator& g, py::array out, double loc, double scale, long threads) {
        bulk(g, out, threads, BulkDraw::logistic(loc, scale));
    }, py::arg("gen"), py::arg("out"), py::arg("loc"), py::arg("scale"), py::arg("threads"));
    m.def("exponential", [](Generator& g, py::array out, double scale, long threads) {
        bulk(g, out, threads, BulkDraw::exponential(scale));
    }, py::arg("gen"), py::arg("out"), py::arg("scale"), py::arg("threads"));
    m.def("uniform", [](Generator& g, py::array out, double low, double high, long threads) {
        bulk(g, out, threads, BulkDraw::uniform(low, high));
    }, py::arg("gen"), py::arg("out"), py::arg("low"), py::arg("high"), py::arg("threads"));
    m.def("gamma", [](Generator& g, py::array out, double shape, double scale, long threads) {
        bulk(g, out, threads, BulkDraw::gamma(shape, scale));
    }, py::arg("gen"), py::arg("out"), py::arg("shape"), py::arg("scale"), py::arg("threads"));
    m.def("subbotin", [](Generator& g, py::array out, double r, double loc, double scale, long threads) {
        bulk(g, out, threads, BulkDraw::subbotin(r, loc, scale));
    }, py::arg("gen"), py::arg("out"), py::arg("r"), py::arg("loc"), py::arg("scale"), py::arg("threads"));
    m.def("arsinh_normal", [](Generator& g, py::array out, double A, double sigma, double loc, long threads) {
        if (!(A > 0.0) || !std::isfinite(A)) throw std::invalid_argument("A must be finite and > 0");
        check_scale(sigma, "sigma");
        check_finite(loc, "loc");
        const double ratio = sigma / A;
        const OutType t = out_type(out);
        const std::size_t n = static_cast<std::size_t>(out.size());
        const unsigned nt = resolve_threads(threads);
        const ChunkPlan plan = plan_chunks(g, n);
        void* data = out.mutable_data();
        auto post = [A, ratio, loc](double z) { return loc + A * std::asinh(ratio * z); };
        py::gil_scoped_release release;
        if (t == OutType::F64)
            fill_tiled_post(g, plan, nt, static_cast<double*>(data), NormalTile{}, post);
        else
            fill_tiled_post(g, plan, nt, static_cast<float*>(data), NormalTile{}, post);
    }, py::arg("gen"), py::arg("out"), py::arg("A"), py::arg("sigma"), py::arg("loc"), py::arg("threads"));
    m.def("sphere", [](Generator& g, py::array out, long threads) {
        const OutType t = out_type(out);
        if (out.ndim() < 1) throw std::invalid_argument("out must have a last axis (the dimension d)");
        const std::size_t d = static_cast<std::size_t>(out.shape(out.ndim() - 1));
        if (d == 0) throw std::invalid_argument("dimension d must be >= 1");
        const std::size_t rows = static_cast<std::size_t>(out.size()) / d;
        const unsigned nt = resolve_threads(threads);
        const auto plan = pydp::random::plan_chunks(g, rows, pydp::random::sphere_rows_per_chunk(d));
        void* data = out.mutable_data();
        py::gil_scoped_release release;
        if (t == OutType::F64)
            pydp::random::fill_sphere(g, plan, nt, static_cast<double*>(data), d);
        else
            pydp::random::fill_sphere(g, plan, nt, static_cast<float*>(data), d);
    }, py::arg("gen"), py::arg("out"), py::arg("threads"));
}

}  // namespace pydp_bind
