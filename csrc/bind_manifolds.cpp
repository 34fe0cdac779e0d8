// Bindings for the manifolds area (kernels in csrc/include/pydp/manifolds/).
// Arrays arrive from the Python layer (pydp_core.manifolds) already broadcast and flattened to (rows, n);
// these wrappers check shapes and points again (a second line of defence), release the GIL and run in
// fixed chunks.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "bind_util.hpp"
#include "pydp/manifolds/geometry.hpp"
#include "pydp/manifolds/montecarlo.hpp"
#include "pydp/manifolds/radial.hpp"
#include "pydp/manifolds/sphere_simd.hpp"
#include "pydp/random/bulk.hpp"
#include "pydp/random/generator.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace mf = pydp::manifolds;

namespace {

enum class Geo : int { Sphere = 0, Hyperbolic = 1 };

// The embedded geometries of dist / exp / log: the sphere and the hyperboloid.
Geo embedded(mf::Geometry geo) {
    if (geo == mf::Geometry::Sphere) return Geo::Sphere;
    if (geo == mf::Geometry::Hyperbolic) return Geo::Hyperbolic;
    throw std::invalid_argument("dist, exp and log of embedded points need the sphere or the hyperboloid");
}

struct Rows {
    std::size_t rows, n;
};

Rows rows_of(const darray& a, const char* name) {
    if (a.ndim() != 2) throw std::invalid_argument(std::string(name) + " must be a 2-D array of points");
    if (a.shape(1) < 2) throw std::invalid_argument(std::string(name) + " must have at least 2 coordinates");
    return {static_cast<std::size_t>(a.shape(0)), static_cast<std::size_t>(a.shape(1))};
}

bool on_manifold(Geo g, const double* x, std::size_t n, double atol) {
    return g == Geo::Sphere ? mf::sphere_on(x, n, atol) : mf::hyp_on(x, n, atol);
}

const char* manifold_name(Geo g) { return g == Geo::Sphere ? "the sphere" : "the hyperboloid"; }

// First row (in chunk order) of `a` that is not on the manifold, or SIZE_MAX.
[[noreturn]] void bad_row(const char* name, std::size_t row, Geo g) {
    std::ostringstream os;
    os << name << " is not on " << manifold_name(g) << " (row " << row << " of the flattened batch)";
    throw std::invalid_argument(os.str());
}

// Runs fn(row) over all rows in fixed chunks with the GIL released, after checking that every row of
// each array in `checks` lies on the manifold. Errors name the first bad row of the first bad array.
template <class F>
void for_rows(std::size_t rows, long threads, F fn) {
    const unsigned nt = resolve_threads(threads);
    py::gil_scoped_release release;
    pydp::parallel_chunks(rows, 1024, nt, [&](std::size_t, std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) fn(i);
    });
}

void check_points(Geo g, const darray& a, const char* name, double atol, long threads) {
    const Rows r = rows_of(a, name);
    const double* p = a.data();
    std::vector<unsigned char> bad(r.rows, 0);
    unsigned char* pb = bad.data();
    for_rows(r.rows, threads, [&](std::size_t i) { pb[i] = on_manifold(g, p + i * r.n, r.n, atol) ? 0 : 1; });
    for (std::size_t i = 0; i < r.rows; ++i)
        if (pb[i]) bad_row(name, i, g);
}

darray dist(mf::Geometry geo, const darray& x, const darray& y, double atol, long threads) {
    const Geo g = embedded(geo);
    const Rows r = rows_of(x, "x");
    require_same_shape(x, y, "x and y");
    const double *px = x.data(), *py_ = y.data();
    darray out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(r.rows)});
    double* o = out.mutable_data();
    std::vector<unsigned char> bad(r.rows, 0);
    unsigned char* pb = bad.data();
    const std::size_t n = r.n;
    if (g == Geo::Sphere && n == 3) {  // S^2: AVX2 kernel when available
        const unsigned nt = resolve_threads(threads);
        py::gil_scoped_release release;
        pydp::parallel_chunks(r.rows, 4096, nt, [&](std::size_t, std::size_t b, std::size_t e) {
            mf::sphere3_dist_rows(px, py_, b, e, atol, o, pb);
        });
    } else if (g == Geo::Sphere) {
        for_rows(r.rows, threads, [&](std::size_t i) {
            const double* a = px + i * n;
            const double* b = py_ + i * n;
            double sums[2];
            o[i] = mf::sphere_dist(a, b, n, sums);
            pb[i] = static_cast<unsigned char>((mf::unit_norm2(sums[0], atol) ? 0 : 1) | (mf::unit_norm2(sums[1], atol) ? 0 : 2));
        });
    } else {
        for_rows(r.rows, threads, [&](std::size_t i) {
            const double* a = px + i * n;
            const double* b = py_ + i * n;
            pb[i] = static_cast<unsigned char>((mf::hyp_on(a, n, atol) ? 0 : 1) | (mf::hyp_on(b, n, atol) ? 0 : 2));
            o[i] = mf::hyp_dist(a, b, n);
        });
    }
    for (std::size_t i = 0; i < r.rows; ++i)
        if (pb[i]) bad_row(pb[i] & 1 ? "x" : "y", i, g);
    return out;
}

// which = 0: exp(p, v); which = 1: log(p, q).
darray exp_log(mf::Geometry geo, int which, const darray& p, const darray& v, double atol, long threads) {
    const Geo g = embedded(geo);
    if (which != 0 && which != 1) throw std::invalid_argument("which must be 0 (exp) or 1 (log)");
    const Rows r = rows_of(p, "p");
    require_same_shape(p, v, "p and v");
    const char* vname = which == 0 ? "v" : "q";
    check_points(g, p, "p", atol, threads);
    if (which == 1) check_points(g, v, "q", atol, threads);
    const double *pp = p.data(), *pv = v.data();
    darray out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(r.rows), static_cast<py::ssize_t>(r.n)});
    double* o = out.mutable_data();
    std::vector<unsigned char> bad(r.rows, 0);
    unsigned char* pb = bad.data();
    const std::size_t n = r.n;
    for_rows(r.rows, threads, [&](std::size_t i) {
        const double* a = pp + i * n;
        const double* b = pv + i * n;
        double* oi = o + i * n;
        if (g == Geo::Sphere) {
            if (which == 0) {
                if (!mf::sphere_tangent(a, b, n, atol)) { pb[i] = 1; return; }
                mf::sphere_exp(a, b, oi, n);
            } else if (!mf::sphere_log(a, b, oi, n)) {
                pb[i] = 2;
            }
        } else {
            if (which == 0) {
                if (!mf::hyp_tangent(a, b, n, atol)) { pb[i] = 1; return; }
                mf::hyp_exp(a, b, oi, n);
            } else {
                mf::hyp_log(a, b, oi, n);
            }
        }
    });
    for (std::size_t i = 0; i < r.rows; ++i) {
        if (pb[i] == 1) {
            std::ostringstream os;
            os << vname << " is not a tangent vector at p (row " << i << " of the flattened batch)";
            throw std::invalid_argument(os.str());
        }
        if (pb[i] == 2) {
            std::ostringstream os;
            os << "q is the antipode of p (row " << i << "): the logarithm is not defined on the cut locus";
            throw std::invalid_argument(os.str());
        }
    }
    return out;
}

// size points of the Riemannian Gaussian/Laplace around p (n coordinates; n = 1 on the circle).
darray sample(mf::Geometry geo, mf::RadialKind kind, double k, double sigma, bool laplace, double tmax, double mode, double scale,
              const darray& p, const darray& basis, py::ssize_t size, pydp::random::Generator& gen, long threads) {
    if (p.ndim() != 1 || basis.ndim() != 2 || basis.shape(0) != p.shape(0))
        throw std::invalid_argument("footpoint and tangent basis do not match");
    mf::RadialDensity f;
    f.kind = mf::radial_kind_from_code(static_cast<int>(kind));
    f.k = k;
    f.sigma = sigma;
    f.laplace = laplace;
    f.tmax = tmax;
    const mf::RadialSampler radial(f, mode, scale);
    const mf::Geometry g = mf::geometry_from_code(static_cast<int>(geo));
    const std::size_t n = static_cast<std::size_t>(p.shape(0)), d = static_cast<std::size_t>(basis.shape(1));
    mf::check_sample_dims(g, n, d);
    checked_elements(size, g == mf::Geometry::Circle ? 1 : static_cast<long long>(n), sizeof(double), "size");
    std::vector<py::ssize_t> shape{size};
    if (g != mf::Geometry::Circle) shape.push_back(static_cast<py::ssize_t>(n));
    darray out(shape);
    double* o = out.mutable_data();
    const double *pp = p.data(), *pb = basis.data();
    const unsigned nt = resolve_threads(threads);
    const auto plan = pydp::random::plan_chunks(gen, static_cast<std::size_t>(size), 8192);
    {
        py::gil_scoped_release release;
        pydp::random::run_chunks(gen, plan, nt, [&](pydp::random::Generator& cg, std::size_t b, std::size_t e) {
            std::vector<double> scratch(d + 1);
            for (std::size_t i = b; i < e; ++i) mf::sample_point(g, radial, pp, pb, n, d, cg, o + i * n, scratch.data());
        });
    }
    return out;
}

// losses: (m, n); thresholds: (n_eps,) -> (m, n_eps) fractions of each batch at or above each threshold.
darray mc_fractions(const darray& losses, const darray& thresholds, long threads) {
    if (losses.ndim() != 2 || thresholds.ndim() != 1) throw std::invalid_argument("losses must be 2-D, thresholds 1-D");
    const std::size_t m = static_cast<std::size_t>(losses.shape(0)), n = static_cast<std::size_t>(losses.shape(1));
    const std::size_t ne = static_cast<std::size_t>(thresholds.shape(0));
    darray out(std::vector<py::ssize_t>{static_cast<py::ssize_t>(m), static_cast<py::ssize_t>(ne)});
    double* o = out.mutable_data();
    const double *pl = losses.data(), *pt = thresholds.data();
    const unsigned nt = resolve_threads(threads);
    {
        py::gil_scoped_release release;
        pydp::parallel_chunks(m, 1, nt, [&](std::size_t, std::size_t b, std::size_t e) {
            for (std::size_t j = b; j < e; ++j) mf::fraction_at_least(pl + j * n, n, pt, ne, o + j * ne);
        });
    }
    return out;
}

}  // namespace

void register_manifolds(py::module_ m) {
    m.doc() = "manifolds kernels: geodesics, radial samplers, Monte Carlo counts";
    py::enum_<mf::Geometry>(m, "Geometry", "the model spaces")
        .value("sphere", mf::Geometry::Sphere)
        .value("hyperbolic", mf::Geometry::Hyperbolic)
        .value("euclidean", mf::Geometry::Euclidean)
        .value("circle", mf::Geometry::Circle);
    py::enum_<mf::RadialKind>(m, "RadialKind", "the factor S(t)^(d-1) of a radial law: sin, sinh, t, or none (circle)")
        .value("sin", mf::RadialKind::Sin)
        .value("sinh", mf::RadialKind::Sinh)
        .value("linear", mf::RadialKind::Linear)
        .value("none", mf::RadialKind::None);
    m.def("dist", &dist, py::arg("geo"), py::arg("x"), py::arg("y"), py::arg("atol"), py::arg("threads") = 0);
    m.def("exp_log", &exp_log, py::arg("geo"), py::arg("which"), py::arg("p"), py::arg("v"), py::arg("atol"),
          py::arg("threads") = 0);
    m.def("circle_dist", [](const darray& a, const darray& b, long t) {
        return map3(a, b, b, t, [](double x, double y, double) { return mf::circle_dist(x, y); });
    }, py::arg("a"), py::arg("b"), py::arg("threads") = 0);
    m.def("wrap_angle", [](const darray& a, long t) { return map1(a, t, mf::wrap_angle); }, py::arg("a"),
          py::arg("threads") = 0);
    m.def("sample", &sample, py::arg("geo"), py::arg("kind"), py::arg("k"), py::arg("sigma"), py::arg("laplace"),
          py::arg("tmax"), py::arg("mode"), py::arg("scale"), py::arg("p"), py::arg("basis"), py::arg("size"),
          py::arg("gen"), py::arg("threads") = 0);
    m.def("mc_fractions", &mc_fractions, py::arg("losses"), py::arg("thresholds"), py::arg("threads") = 0);
}
}  // namespace pydp_bind
