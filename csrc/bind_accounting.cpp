// Bindings for the accounting area (kernels in csrc/include/pydp/accounting/conversions.hpp and pld.hpp).
#include <pybind11/stl.h>

#include <algorithm>
#include <vector>

#include "bind_util.hpp"
#include "pydp/accounting/conversions.hpp"
#include "pydp/accounting/pld.hpp"
#include "pydp/accounting/pld_allocation.hpp"
#include "register.hpp"

namespace pydp_bind {
namespace acc = pydp::accounting;
using pydp::noise::Family;
using pydp::noise::Kind;

namespace {
// Second line of defence (the Python layer checks first): reject out-of-domain inputs before any work.
template <class Pred>
void require_all(const darray& a, Pred ok, const char* message) {
    const double* p = a.data();
    for (py::ssize_t i = 0; i < a.size(); ++i) {
        if (!ok(p[i])) throw std::invalid_argument(message);
    }
}

bool mu_ok(double u) { return u >= 0.0; }
bool delta_closed_ok(double d) { return d >= 0.0 && d <= 1.0; }
bool delta_open_ok(double d) { return d > 0.0 && d < 1.0; }
bool alpha_ok(double a) { return a > 1.0; }
bool rho_ok(double r) { return r >= 0.0; }

}  // namespace

// ----- privacy-loss distributions (kernels in csrc/include/pydp/accounting/pld.hpp) ----------------------
namespace {
namespace pld = pydp::accounting::pld;

py::array_t<double> to_numpy(const std::vector<double>& v) {
    py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

// (lower(x), max(upper(x), lower(x))) elementwise, GIL released.
template <class Lo, class Up>
py::tuple interval(const darray& x, Lo lower, Up upper) {
    darray lo(shape_of(x)), up(shape_of(x));
    const double* in = x.data();
    double *pl = lo.mutable_data(), *pu = up.mutable_data();
    {
        py::gil_scoped_release release;
        for (py::ssize_t i = 0; i < x.size(); ++i) {
            pl[i] = lower(in[i]);
            pu[i] = std::max(upper(in[i]), pl[i]);
        }
    }
    return py::make_tuple(lo, up);
}

void check_step(double h) {
    if (!(h > 0.0) || !std::isfinite(h)) throw std::invalid_argument("value_step must be finite and > 0");
}

void register_pld(py::module_ m) {
    py::class_<pld::TwoSided>(m, "PldDiscrete", "a pessimistic and an optimistic discretisation of one PLD")
        .def_property_readonly("pess_offset", [](const pld::TwoSided& t) { return t.pess.offset; })
        .def_property_readonly("opt_offset", [](const pld::TwoSided& t) { return t.opt.offset; })
        .def_property_readonly("pess_pmf", [](const pld::TwoSided& t) { return to_numpy(t.pess.p); })
        .def_property_readonly("opt_pmf", [](const pld::TwoSided& t) { return to_numpy(t.opt.p); })
        .def_property_readonly("pess_inf", [](const pld::TwoSided& t) { return t.pess.inf; })
        .def_property_readonly("opt_inf", [](const pld::TwoSided& t) { return t.opt.inf; });

    py::class_<pld::Bounds>(m, "PldBounds", "upper and lower privacy profiles of one composed direction")
        .def("delta", [](const pld::Bounds& b, const darray& eps) {
            require_all(eps, rho_ok, "epsilon must be >= 0 and not NaN");
            return interval(eps, [&b](double e) { return b.lower.delta(e); }, [&b](double e) { return b.upper.delta(e); });
        }, py::arg("epsilon"))
        .def("epsilon", [](const pld::Bounds& b, const darray& delta) {
            require_all(delta, delta_closed_ok, "delta must lie in [0, 1]");
            return interval(delta, [&b](double d) { return b.lower.epsilon(d); }, [&b](double d) { return b.upper.epsilon(d); });
        }, py::arg("delta"));

    m.def("pld_tradeoff", [](const pld::Bounds& pq, const pld::Bounds& qp, const darray& alpha) {
        require_all(alpha, delta_closed_ok, "alpha must lie in [0, 1]");
        // Lower bound on beta from the upper profiles, upper bound from the lower profiles.
        return interval(alpha, [&](double a) { return pld::tradeoff(pq.upper, qp.upper, a); },
                        [&](double a) { return pld::tradeoff(pq.lower, qp.lower, a); });
    }, py::arg("pq"), py::arg("qp"), py::arg("alpha"));

    m.def("pld_noise", [](const Family& fam, double d, double q, bool remove, double h, double tail, double thin, bool substitution) {
        check_step(h);
        if (!(tail > 0.0 && tail < 1.0)) throw std::invalid_argument("tail_mass must lie in (0, 1)");
        if (!(thin >= 0.0 && thin < 1.0)) throw std::invalid_argument("thin must lie in [0, 1)");
        const pld::Relation rel = substitution ? pld::Relation::replace : remove ? pld::Relation::remove : pld::Relation::add;
        const pld::NoiseLoss loss(fam, d, q, rel);
        py::gil_scoped_release release;
        return loss.discretise(h, tail, thin);
    }, py::arg("family"), py::arg("shift"), py::arg("sampling_rate"), py::arg("remove"), py::arg("value_step"), py::arg("tail_mass"),
       py::arg("thin") = 0.0, py::arg("substitution") = false,
       "one discretised order of additive noise at shift d: remove / add (Poisson sampling, add/remove "
       "neighbours) or, with substitution, the replace-one pair (1-q) f + q f(. - d) vs (1-q) f + q f(. + d)");

    m.def("pld_allocation_convolve", [](const darray& va, const darray& wa, const darray& vb, const darray& wb,
                                        double ma, double mb, const darray& grid, bool spread) {
        require_same_shape(va, wa, "wa");
        require_same_shape(vb, wb, "wb");
        if (grid.size() < 2) throw std::invalid_argument("the grid needs at least two points");
        if (!(ma > 0.0 && mb > 0.0)) throw std::invalid_argument("the weights must be > 0");
        const std::size_t ng = static_cast<std::size_t>(grid.size());
        std::vector<double> mass(ng, 0.0), moment(ng, 0.0);
        {
            py::gil_scoped_release release;
            pld::allocation_convolve(va.data(), wa.data(), static_cast<std::size_t>(va.size()), vb.data(), wb.data(),
                                     static_cast<std::size_t>(vb.size()), ma, mb, grid.data(), ng, spread,
                                     mass.data(), moment.data());
        }
        return py::make_tuple(to_numpy(mass), to_numpy(moment));
    }, py::arg("va"), py::arg("wa"), py::arg("vb"), py::arg("wb"), py::arg("ma"), py::arg("mb"), py::arg("grid"),
       py::arg("spread"),
       "the law of (ma A + mb B) / (ma + mb) on a sorted grid: spread onto the grid points (mean kept) or "
       "the mass and first moment of each cell");

    m.def("pld_atoms", [](const darray& loss, const darray& p, const darray& q, double inf_p, double h) {
        check_step(h);
        require_same_shape(loss, p, "p");
        require_same_shape(loss, q, "q");
        require_all(loss, [](double v) { return std::isfinite(v); }, "losses must be finite");
        require_all(p, [](double v) { return v >= 0.0 && v <= 1.0; }, "P-masses must lie in [0, 1]");
        require_all(q, [](double v) { return v >= 0.0 && v <= 1.0; }, "Q-masses must lie in [0, 1]");
        if (!(inf_p >= 0.0 && inf_p <= 1.0)) throw std::invalid_argument("the mass at +inf must lie in [0, 1]");
        const std::vector<double> l(loss.data(), loss.data() + loss.size()), pv(p.data(), p.data() + p.size()),
            qv(q.data(), q.data() + q.size());
        return pld::from_atoms(l, pv, qv, inf_p, h);
    }, py::arg("loss"), py::arg("p"), py::arg("q"), py::arg("inf_mass"), py::arg("value_step"));

    m.def("pld_sides", [](const pld::TwoSided& pess, const pld::TwoSided& opt) {
        pld::TwoSided out;
        out.pess = pess.pess;
        out.opt = opt.opt;
        return out;
    }, py::arg("pessimistic"), py::arg("optimistic"),
       "the pessimistic side of one discretisation with the optimistic side of another (both on one grid)");

    m.def("pld_window", [](const std::vector<const pld::TwoSided*>& parts, const std::vector<long>& counts, double h, double tail) {
        check_step(h);
        if (parts.empty() || parts.size() != counts.size()) throw std::invalid_argument("parts and counts must be non-empty and of one length");
        py::gil_scoped_release release;
        std::vector<pld::MgfTable> tables;
        std::vector<const pld::MgfTable*> tp;
        for (const pld::TwoSided* p : parts) tables.push_back(pld::mgf_table(*p, h));
        for (const pld::MgfTable& t : tables) tp.push_back(&t);
        return pld::window(pld::Cgf(tp, counts), std::log(tail));
    }, py::arg("parts"), py::arg("counts"), py::arg("value_step"), py::arg("tail_mass"));

    m.def("pld_circular", [](const std::vector<darray>& pess, const std::vector<darray>& opt, const std::vector<long>& counts, long n) {
        if (pess.empty() || pess.size() != opt.size() || pess.size() != counts.size()) {
            throw std::invalid_argument("pess, opt and counts must be non-empty and of one length");
        }
        if (n < 2 || n > pld::kMaxPoints || (n & (n - 1)) != 0) throw std::invalid_argument("n must be a power of two in [2, 2^25]");
        std::vector<pld::TwoSided> parts(pess.size());
        std::vector<const pld::TwoSided*> ptrs;
        for (std::size_t j = 0; j < pess.size(); ++j) {
            require_all(pess[j], [](double v) { return v >= 0.0 && v <= 1.0; }, "pmf entries must lie in [0, 1]");
            require_all(opt[j], [](double v) { return v >= 0.0 && v <= 1.0; }, "pmf entries must lie in [0, 1]");
            if (counts[j] < 0) throw std::invalid_argument("counts must be >= 0");
            parts[j].pess.p.assign(pess[j].data(), pess[j].data() + pess[j].size());
            parts[j].opt.p.assign(opt[j].data(), opt[j].data() + opt[j].size());
            ptrs.push_back(&parts[j]);
        }
        std::vector<pld::Circular> out;
        pld::Scratch scratch;
        {
            py::gil_scoped_release release;
            const pydp::accounting::fft::Plan plan(static_cast<std::size_t>(n));
            out = pld::circular_compose(ptrs, {counts}, plan, scratch);
        }
        std::vector<double> re(static_cast<std::size_t>(n)), im(static_cast<std::size_t>(n));
        for (long i = 0; i < n; ++i) {
            re[static_cast<std::size_t>(i)] = out[0].w[static_cast<std::size_t>(i)].real();
            im[static_cast<std::size_t>(i)] = out[0].w[static_cast<std::size_t>(i)].imag();
        }
        return py::make_tuple(to_numpy(re), to_numpy(im), out[0].tail);
    }, py::arg("pess"), py::arg("opt"), py::arg("counts"), py::arg("n"),
       "circular composition of pmfs (offset 0) by FFT: (pessimistic, optimistic, rounding bound of any sum of consecutive entries)");

    m.def("pld_compose", [](const std::vector<std::vector<const pld::TwoSided*>>& directions, const std::vector<long>& counts,
                            double h, double tail) {
        check_step(h);
        if (!(tail > 0.0 && tail < 1.0)) throw std::invalid_argument("tail_mass must lie in (0, 1)");
        std::vector<std::vector<pld::Component>> comps;
        for (const auto& parts : directions) {
            if (parts.empty()) throw std::invalid_argument("nothing to compose");
            if (parts.size() != counts.size()) throw std::invalid_argument("parts and counts differ in length");
            comps.emplace_back();
            for (std::size_t i = 0; i < parts.size(); ++i) {
                if (parts[i] == nullptr) throw std::invalid_argument("parts must not be None");
                comps.back().push_back({parts[i], counts[i]});
            }
        }
        py::gil_scoped_release release;
        pld::Plans plans;  // shared by the directions (same lengths)
        std::vector<pld::Bounds> out;
        for (const auto& c : comps) out.emplace_back(pld::compose(c, h, tail, plans));
        return out;
    }, py::arg("directions"), py::arg("counts"), py::arg("value_step"), py::arg("tail_mass"),
       "one composition per neighbour order (each a list of discretised mechanisms, with shared counts)");
}
}  // namespace

void register_accounting(py::module_ m) {
    m.doc() = "accounting kernels: exact GDP profile and RDP -> (eps, delta) conversions";
    py::enum_<acc::RdpMethod>(m, "RdpMethod", "the RDP -> (epsilon, delta) conversions (Mironov 2017; Asoodeh et al. 2021; Balle et al. 2020)")
        .value("mironov", acc::RdpMethod::Mironov)
        .value("asoodeh", acc::RdpMethod::Asoodeh)
        .value("balle2020", acc::RdpMethod::Balle2020);
    m.def("gdp_epsilon", [](const darray& mu, const darray& delta, long t) {
        require_all(mu, mu_ok, "mu must be >= 0 and not NaN");
        require_all(delta, delta_closed_ok, "delta must lie in [0, 1]");
        const Family g = Family::make(Kind::Gaussian);
        return map2(mu, delta, t, [&g](double u, double d) { return acc::gdp_epsilon(g, u, d); });
    }, py::arg("mu"), py::arg("delta"), py::arg("threads") = 0);
    m.def("gdp_log_delta", [](const darray& mu, const darray& eps, long t) {
        require_all(mu, mu_ok, "mu must be >= 0 and not NaN");
        require_all(eps, rho_ok, "epsilon must be >= 0 and not NaN");
        const Family g = Family::make(Kind::Gaussian);
        return map2(mu, eps, t, [&g](double u, double e) { return acc::gdp_log_delta(g, u, e); });
    }, py::arg("mu"), py::arg("epsilon"), py::arg("threads") = 0);
    m.def("pure_dp_mu", [](const darray& eps, long t) {
        require_all(eps, rho_ok, "epsilon must be >= 0 and not NaN");
        return map1(eps, t, [](double e) { return acc::pure_dp_mu(e); });
    }, py::arg("epsilon"), py::arg("threads") = 0,
       "mu of the GDP bound of epsilon-DP, -2 Phi^-1(1 / (1 + e^epsilon)), rounded up (Dong, Roth and Su 2022)");
    m.def("rdp_to_epsilon", [](const darray& alpha, const darray& rho, const darray& delta, acc::RdpMethod meth, long t) {
        require_all(alpha, alpha_ok, "alpha must be > 1");
        require_all(rho, rho_ok, "rho must be >= 0 and not NaN");
        require_all(delta, delta_open_ok, "delta must lie in (0, 1)");
        return map3(alpha, rho, delta, t, [meth](double a, double r, double d) { return acc::rdp_to_epsilon(a, r, d, meth); });
    }, py::arg("alpha"), py::arg("rho"), py::arg("delta"), py::arg("method"), py::arg("threads") = 0);
    // Scalar fast paths (no array allocation) for optimisers calling one value at a time.
    m.def("gdp_epsilon_scalar", [](double mu, double delta) {
        if (!mu_ok(mu)) throw std::invalid_argument("mu must be >= 0 and not NaN");
        if (!delta_closed_ok(delta)) throw std::invalid_argument("delta must lie in [0, 1]");
        static const Family g = Family::make(Kind::Gaussian);
        return acc::gdp_epsilon(g, mu, delta);
    }, py::arg("mu"), py::arg("delta"));
    m.def("rdp_to_epsilon_scalar", [](double alpha, double rho, double delta, acc::RdpMethod method) {
        if (!alpha_ok(alpha)) throw std::invalid_argument("alpha must be > 1");
        if (!rho_ok(rho)) throw std::invalid_argument("rho must be >= 0 and not NaN");
        if (!delta_open_ok(delta)) throw std::invalid_argument("delta must lie in (0, 1)");
        return acc::rdp_to_epsilon(alpha, rho, delta, method);
    }, py::arg("alpha"), py::arg("rho"), py::arg("delta"), py::arg("method"));
    m.def("zcdp_log_delta", [](double rho, double eps) {
        if (!(rho > 0.0) || !std::isfinite(rho)) throw std::invalid_argument("rho must be finite and > 0");
        if (!(eps >= 0.0) || !std::isfinite(eps)) throw std::invalid_argument("epsilon must be finite and >= 0");
        const acc::ZcdpDelta z = acc::zcdp_log_delta(rho, eps);
        return py::make_tuple(z.log_delta, z.alpha, z.alpha_minus_1);
    }, py::arg("rho"), py::arg("epsilon"), "(log delta rounded up, alpha, alpha - 1) of rho-zCDP at epsilon.");

    register_pld(m);
}
}  // namespace pydp_bind
