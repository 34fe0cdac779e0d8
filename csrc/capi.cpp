// The C ABI (csrc/include/pydp/capi.h) over the C++ kernels. Every entry point checks its arguments
// with the same rules as the Python API (pydp_core/_validation.py), runs the kernel inside a catch-all
// guard, and returns an error code: no C++ exception crosses the ABI.
#include "pydp/capi.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "pydp/accounting/pld.hpp"
#include "pydp/aggregation/keyed_noise.hpp"
#include "pydp/calibration/profile.hpp"
#include "pydp/release/grid_plan.hpp"
#include "pydp/release/lattice_plan.hpp"
#include "pydp/release/profile.hpp"
#include "pydp/release/release.hpp"
#include "pydp/release/table.hpp"
#include "pydp/noise/families.hpp"
#include "pydp/parallel.hpp"
#include "pydp/random/fill.hpp"
#include "pydp/random/generator.hpp"
#include "pydp/status.hpp"
#include "pydp/version.hpp"

// One thread cap: the C header states the C++ constant.
static_assert(PYDP_MAX_THREADS == pydp::kMaxThreads, "capi.h's PYDP_MAX_THREADS must be pydp::kMaxThreads");

// One list of error codes: each pydp_status of capi.h is the value of its pydp::Status (pydp/status.hpp).
constexpr bool same_code(pydp_status c, pydp::Status s) { return static_cast<int>(c) == static_cast<int>(s); }
static_assert(same_code(PYDP_OK, pydp::Status::ok) && same_code(PYDP_ERR_NULL, pydp::Status::null_argument) &&
                  same_code(PYDP_ERR_INVALID, pydp::Status::invalid) &&
                  same_code(PYDP_ERR_NO_FINITE_SCALE, pydp::Status::no_finite_scale) &&
                  same_code(PYDP_ERR_VERIFY_FAILED, pydp::Status::verify_failed) &&
                  same_code(PYDP_ERR_NO_CONVERGENCE, pydp::Status::no_convergence) &&
                  same_code(PYDP_ERR_EXHAUSTED, pydp::Status::exhausted) &&
                  same_code(PYDP_ERR_NO_MEMORY, pydp::Status::no_memory) &&
                  same_code(PYDP_ERR_ENTROPY, pydp::Status::entropy) &&
                  same_code(PYDP_ERR_INTERNAL, pydp::Status::internal) &&
                  same_code(PYDP_ERR_SCALE_OVERFLOW, pydp::Status::scale_overflow) &&
                  same_code(PYDP_ERR_RANGE, pydp::Status::range),
              "capi.h's pydp_status codes must equal pydp::Status");

struct pydp_rng {
    pydp::random::Generator gen;
};

namespace {

using pydp::noise::Family;
using pydp::noise::Kind;
namespace cal = pydp::calibration;

// The calling thread's last message (pydp_last_error): a fixed buffer, so nothing to destroy at exit.
thread_local char last_message[512];

void set_message(const char* msg) noexcept {
    std::snprintf(last_message, sizeof last_message, "%s", msg);
}

// Records a failure's message and returns its code.
pydp_status fail(pydp_status code, const char* msg) noexcept {
    set_message(msg);
    return code;
}
pydp_status fail(pydp::Status s, const char* msg) noexcept { return fail(static_cast<pydp_status>(s), msg); }

// A kernel's Status (a calibration that found no scale) as a failure described by its code.
pydp_status fail(pydp::Status s) noexcept {
    return s == pydp::Status::ok ? PYDP_OK : fail(s, pydp::status_text(s));
}

// "<name> <rule>, got <value>" as the message of a PYDP_ERR_INVALID.
pydp_status bad(const char* name, const char* rule, double value) noexcept {
    std::snprintf(last_message, sizeof last_message, "%s %s, got %.17g", name, rule, value);
    return PYDP_ERR_INVALID;
}

// Runs fn() with the message cleared, and maps every exception to its code and message
// (pydp::current_failure, the library's one mapping).
template <class Fn>
pydp_status guarded(Fn&& fn) noexcept {
    last_message[0] = '\0';
    try {
        return fn();
    } catch (...) {
        const pydp::Failure f = pydp::current_failure();
        return fail(f.status, f.message);
    }
}

// A NULL check that records which argument was NULL.
#define PYDP_REQUIRE(ptr)                                                                        \
    do {                                                                                         \
        if (!(ptr)) return fail(PYDP_ERR_NULL, #ptr " must not be NULL");                        \
    } while (0)

pydp_status check_size(std::size_t n) noexcept {
    if (n > PYDP_MAX_ELEMENTS) return bad("n", "must be at most PYDP_MAX_ELEMENTS = 2^37", static_cast<double>(n));
    return PYDP_OK;
}

pydp_status make_family(int family, double r, Family* out) noexcept {
    switch (family) {
        case PYDP_LAPLACE: *out = Family::make(Kind::Laplace); return PYDP_OK;
        case PYDP_GAUSSIAN: *out = Family::make(Kind::Gaussian); return PYDP_OK;
        case PYDP_LOGISTIC: *out = Family::make(Kind::Logistic); return PYDP_OK;
        case PYDP_SUBBOTIN:
            if (!(r >= 1.0) || !std::isfinite(r)) return bad("r", "must be finite and >= 1 for PYDP_SUBBOTIN", r);
            *out = Family::make(Kind::Subbotin, r);
            return PYDP_OK;
        default: return bad("family", "must be PYDP_LAPLACE, PYDP_GAUSSIAN, PYDP_LOGISTIC or PYDP_SUBBOTIN", family);
    }
}

pydp_status check_epsilon(double eps, bool allow_inf) noexcept {
    if (eps >= 0.0 && (allow_inf || std::isfinite(eps))) return PYDP_OK;
    return bad("epsilon", allow_inf ? "must be >= 0" : "must be finite and >= 0", eps);
}
pydp_status check_delta(double delta) noexcept {
    return delta >= 0.0 && delta < 1.0 ? PYDP_OK : bad("delta", "must lie in [0, 1)", delta);
}
pydp_status check_positive(const char* name, double v) noexcept {
    return v > 0.0 && std::isfinite(v) ? PYDP_OK : bad(name, "must be finite and > 0", v);
}

// Returns the status of a check if it failed.
#define PYDP_CHECK(expr)                                       \
    do {                                                       \
        const pydp_status rc_ = (expr);                        \
        if (rc_ != PYDP_OK) return rc_;                        \
    } while (0)

pydp_status log_profile(int family, double r, double eps, double scale, double sens, double* out) {
    Family f;
    PYDP_CHECK(make_family(family, r, &f));
    PYDP_CHECK(check_epsilon(eps, true));
    PYDP_CHECK(check_positive("scale", scale));
    PYDP_CHECK(check_positive("sensitivity", sens));
    *out = std::isinf(eps) ? -cal::kInf : cal::log_privacy_profile(f, eps, scale, sens);
    return PYDP_OK;
}

// Reads 32 bytes from the operating system's entropy source.
bool os_entropy(unsigned char key[32]) {
#if defined(__linux__) && defined(SYS_getrandom)
    std::size_t got = 0;
    while (got < 32) {
        const long n = syscall(SYS_getrandom, key + got, 32 - got, 0);
        if (n > 0) got += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else break;
    }
    if (got == 32) return true;
#endif
    const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::size_t got2 = 0;
    while (got2 < 32) {
        const ssize_t n = read(fd, key + got2, 32 - got2);
        if (n > 0) got2 += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR) continue;
        else break;
    }
    close(fd);
    return got2 == 32;
}


pydp_status new_rng(const unsigned char key[32], std::uint64_t stream, pydp_rng** out) {
    *out = new pydp_rng{pydp::random::Generator(key, stream)};
    return PYDP_OK;
}

// The checks every bulk call shares: the generator, the buffers (NULL allowed only for n = 0), the size.
pydp_status check_bulk(const pydp_rng* rng, const void* in, const void* out, std::size_t n) noexcept {
    PYDP_REQUIRE(rng);
    if (n > 0) {
        PYDP_REQUIRE(in);
        PYDP_REQUIRE(out);
    }
    return check_size(n);
}

template <class MakeDraw>
pydp_status sample(pydp_rng* rng, double* out, std::size_t n, unsigned threads, MakeDraw&& make) noexcept {
    return guarded([&]() -> pydp_status {
        PYDP_CHECK(check_bulk(rng, out, out, n));
        const pydp::random::BulkDraw draw = make();
        const pydp::random::ChunkPlan plan = pydp::random::plan_chunks(rng->gen, n);
        draw.fill(rng->gen, plan, pydp::cap_threads(threads), out);
        return PYDP_OK;
    });
}

// The grid release of x[0..n) with `sampler` (the kernel of the Python plans' release).
template <class MakeSampler>
pydp_status grid_release(pydp_rng* rng, int grid_exponent, double low, double high, const double* x, double* out,
                         std::size_t n, unsigned threads, MakeSampler&& make) noexcept {
    return guarded([&]() -> pydp_status {
        PYDP_CHECK(check_bulk(rng, x, out, n));
        if (grid_exponent < pydp::release::kMinGridExponent || grid_exponent > pydp::release::kMaxGridExponent)
            return bad("grid_exponent", "must lie in [-1021, 970]", grid_exponent);
        if (std::isnan(low) || std::isnan(high) || !(low <= high))
            return fail(PYDP_ERR_INVALID, "low and high must not be NaN and must satisfy low <= high");
        const auto sampler = make();  // checks its own parameters (std::invalid_argument with a message)
        const pydp::release::ChunkSources src = pydp::release::reserve_sources(rng->gen, n);
        pydp::release::release_on_grid(sampler, x, out, n, grid_exponent, low, high, pydp::cap_threads(threads), src);
        return PYDP_OK;
    });
}

// The keyed per-group grid release of x[0..n) with `sampler` (the aggregation kernel).
template <class MakeSampler>
pydp_status keyed_release(const pydp_rng* rng, const std::uint64_t* streams, int grid_exponent, const double* x,
                          double* out, std::size_t n, unsigned threads, MakeSampler&& make) noexcept {
    return guarded([&]() -> pydp_status {
        PYDP_CHECK(check_bulk(rng, x, out, n));
        if (n > 0) PYDP_REQUIRE(streams);
        if (grid_exponent < pydp::release::kMinGridExponent || grid_exponent > pydp::release::kMaxGridExponent)
            return bad("grid_exponent", "must lie in [-1021, 970]", grid_exponent);
        for (std::size_t j = 0; j < n; ++j) {
            if (streams[j] == ~std::uint64_t{0})
                return fail(PYDP_ERR_INVALID, "streams[j] must be below 2^64 - 1 (reserved for key derivation)");
        }
        const auto sampler = make();
        pydp::aggregation::keyed_grid_release(sampler, rng->gen, streams, x, out, n, grid_exponent, pydp::cap_threads(threads));
        return PYDP_OK;
    });
}


// ---- calibration of the grid releases (pydp_core.release.calibrate_*_release, dimension 1) -----------
namespace rel = pydp::release;

// The relative margin on delta of every check (the calibration's and the Python plans').
constexpr double kDeltaMargin = rel::kPlanDeltaMargin;
using rel::grid_shift;
using rel::kGaussMaxBits;
using rel::kLaplaceMaxBits;
using rel::ratio_at_most;

// rel::grid_exponent with a PYDP_ERR_INVALID outside the range a float64 grid serves.
pydp_status grid_exponent(double scale, double sensitivity, int grid_bits, int max_bits, int* e) noexcept {
    if (!rel::grid_exponent(scale, sensitivity, grid_bits, max_bits, e))
        return bad("scale", "is outside the range a float64 grid can serve", scale);
    return PYDP_OK;
}

pydp_status check_release_args(double epsilon, double delta, double sensitivity, int grid_bits, pydp_grid_plan* plan) noexcept {
    PYDP_REQUIRE(plan);
    PYDP_CHECK(check_epsilon(epsilon, false));
    PYDP_CHECK(check_delta(delta));
    PYDP_CHECK(check_positive("sensitivity", sensitivity));
    if (grid_bits < 0 || grid_bits > 30) return bad("grid_bits", "must lie in [0, 30]", grid_bits);
    return PYDP_OK;
}

// ---- vector plans (pydp_core.release.calibrate_*_release, dimension > 1) --------------------------------
pydp_status check_dimension(std::uint64_t m) noexcept {
    if (m < 1 || m > rel::kMaxDimension) return bad("dimension", "must lie in [1, 2^40]", static_cast<double>(m));
    return PYDP_OK;
}

// The plan's fields, or its status as a code and message.
pydp_status from_plan(const rel::GridPlan& p, pydp_vector_plan* out) noexcept {
    switch (p.status) {
        case rel::PlanStatus::Ok: break;
        case rel::PlanStatus::Invalid: return fail(PYDP_ERR_INVALID, p.message);
        case rel::PlanStatus::NoFiniteScale: return fail(PYDP_ERR_NO_FINITE_SCALE, p.message);
        case rel::PlanStatus::ScaleOverflow: return fail(PYDP_ERR_SCALE_OVERFLOW, p.message);
        case rel::PlanStatus::VerifyFailed: return fail(PYDP_ERR_VERIFY_FAILED, p.message);
        default: return fail(PYDP_ERR_INTERNAL, "unknown plan status");
    }
    out->num = p.num, out->den = p.den, out->grid_exponent = p.grid_exponent, out->shift = p.shift;
    out->delta_achieved = p.delta_achieved;
    return PYDP_OK;
}

// A vector plan into *plan: for dimension 1 the scalar plan (`scalar`, a pydp_calibrate_*_release), else
// `vector(&out)` after the scalar plans' argument checks. Called inside guarded.
template <class Vector>
pydp_status vector_plan(double epsilon, double delta, double sensitivity, int grid_bits, pydp_vector_plan out,
                        pydp_vector_plan* plan,
                        pydp_status (*scalar)(double, double, double, int, pydp_grid_plan*), Vector&& vector) {
    PYDP_REQUIRE(plan);
    PYDP_CHECK(check_dimension(out.dimension));
    if (out.dimension == 1) {
        pydp_grid_plan g{};
        PYDP_CHECK(scalar(epsilon, delta, sensitivity, grid_bits, &g));
        out.num = g.num, out.den = g.den, out.grid_exponent = g.grid_exponent, out.shift = g.shift;
        out.delta_achieved = g.delta_achieved;
    } else {
        pydp_grid_plan unused{};
        PYDP_CHECK(check_release_args(epsilon, delta, sensitivity, grid_bits, &unused));
        PYDP_CHECK(vector(&out));
    }
    *plan = out;
    return PYDP_OK;
}

// `vectors` rows of plan->dimension values, each row one reservation of the stream (one Python call).
// Called inside guarded with the plan's dimension checked and vectors * dimension <= PYDP_MAX_ELEMENTS.
template <class MakeSampler>
pydp_status rows_release(pydp_rng* rng, const pydp_vector_plan* plan, double low, double high, const double* x,
                         double* out, std::size_t vectors, unsigned threads, MakeSampler&& make) {
    const std::size_t m = static_cast<std::size_t>(plan->dimension);
    PYDP_CHECK(check_bulk(rng, x, out, vectors * m));
    if (plan->grid_exponent < rel::kMinGridExponent || plan->grid_exponent > rel::kMaxGridExponent)
        return bad("plan->grid_exponent", "must lie in [-1021, 970]", plan->grid_exponent);
    if (std::isnan(low) || std::isnan(high) || !(low <= high))
        return fail(PYDP_ERR_INVALID, "low and high must not be NaN and must satisfy low <= high");
    const auto sampler = make();  // checks its own parameters (std::invalid_argument with a message)
    const unsigned nt = pydp::cap_threads(threads);
    for (std::size_t i = 0; i < vectors; ++i) {
        const rel::ChunkSources src = rel::reserve_sources(rng->gen, m);
        rel::release_on_grid(sampler, x + i * m, out + i * m, m, plan->grid_exponent, low, high, nt, src);
    }
    return PYDP_OK;
}


}  // namespace

// ---- privacy-loss distributions --------------------------------------------------------------------------
namespace {
namespace pld = pydp::accounting::pld;

// The truncated mass of a composition (pydp_core.accounting.pld's default tail_mass).
constexpr double kTailMass = 1e-15;
// In a composition, loss blocks of P-mass <= kThin stay one cell (as the Python PLD discretises them).
constexpr double kThin = 1e-9;
// The largest number of composed mechanisms.
constexpr std::uint64_t kMaxSteps = std::uint64_t{1} << 40;

// One mechanism (family, order, shift d = sensitivity / scale, rate q, relation) and its count.
struct Term {
    int family;
    double r, shift, q;
    bool substitution;
    long count;
    bool same_mechanism(const Term& o) const {
        return family == o.family && (family != PYDP_SUBBOTIN || r == o.r) && shift == o.shift && q == o.q &&
               substitution == o.substitution;
    }
    bool symmetric() const { return q == 1.0 || substitution; }
};

// A composition's terms, merged by mechanism in order of first appearance (as the Python PLD merges).
std::vector<Term> merged(const std::vector<Term>& a, const std::vector<Term>& b) {
    std::vector<Term> out;
    for (const std::vector<Term>* src : {&a, &b}) {
        for (const Term& t : *src) {
            auto it = std::find_if(out.begin(), out.end(), [&](const Term& o) { return o.same_mechanism(t); });
            if (it == out.end()) out.push_back(t);
            else it->count += t.count;
        }
    }
    return out;
}

std::uint64_t total_steps(const std::vector<Term>& terms) {
    std::uint64_t k = 0;
    for (const Term& t : terms) k += static_cast<std::uint64_t>(t.count);
    return k;
}

// The bounds of each neighbour order (remove, and add unless every term is symmetric) on the grid h.
std::vector<pld::Bounds> compose_terms(const std::vector<Term>& terms, double h) {
    const std::uint64_t steps = total_steps(terms);
    const double tail = kTailMass / static_cast<double>(std::max<std::uint64_t>(1, steps));
    const double thin = steps > 1 ? kThin : 0.0;
    const bool symmetric = std::all_of(terms.begin(), terms.end(), [](const Term& t) { return t.symmetric(); });
    std::vector<bool> orders{true};
    if (!symmetric) orders.push_back(false);
    std::vector<std::vector<pld::TwoSided>> parts(orders.size());
    for (std::size_t o = 0; o < orders.size(); ++o) {
        for (const Term& t : terms) {
            Family f;
            make_family(t.family, t.r, &f);
            const pld::Relation rel = t.substitution ? pld::Relation::replace : orders[o] ? pld::Relation::remove : pld::Relation::add;
            parts[o].push_back(pld::NoiseLoss(f, t.shift, t.q, rel).discretise(h, tail, thin));
        }
    }
    pld::Plans plans;  // shared by the orders (same lengths)
    std::vector<pld::Bounds> out;
    for (std::size_t o = 0; o < orders.size(); ++o) {
        std::vector<pld::Component> comps;
        for (std::size_t i = 0; i < terms.size(); ++i) comps.push_back({&parts[o][i], terms[i].count});
        out.emplace_back(pld::compose(comps, h, kTailMass, plans));
    }
    return out;
}

// (max over orders of the lower bounds, max over orders of max(upper, lower)).
template <class Query>
void order_maximum(const std::vector<pld::Bounds>& bounds, Query q, double* lower, double* upper) {
    double lo = -cal::kInf, up = -cal::kInf;
    for (const pld::Bounds& b : bounds) {
        const double l = q(b.lower);
        lo = std::max(lo, l);
        up = std::max(up, std::max(q(b.upper), l));
    }
    *lower = lo;
    *upper = up;
}

pydp_status make_term(int family, double r, double scale, double sensitivity, double q, int neighbours, Term* out) {
    Family f;
    PYDP_CHECK(make_family(family, r, &f));
    PYDP_CHECK(check_positive("scale", scale));
    PYDP_CHECK(check_positive("sensitivity", sensitivity));
    if (!(q > 0.0 && q <= 1.0)) return bad("sampling_rate", "must lie in (0, 1]", q);
    if (neighbours != PYDP_ADD_REMOVE && neighbours != PYDP_SUBSTITUTION)
        return bad("neighbours", "must be PYDP_ADD_REMOVE or PYDP_SUBSTITUTION", neighbours);
    double shift = sensitivity / scale;
    bool substitution = neighbours == PYDP_SUBSTITUTION;
    if (substitution && q == 1.0) {  // f(. - d) vs f(. + d): the add/remove pair at shift 2d
        shift *= 2.0;
        substitution = false;
    }
    if (!(shift > 0.0) || !std::isfinite(shift)) return bad("sensitivity / scale", "must be finite and > 0", shift);
    *out = Term{family, family == PYDP_SUBBOTIN ? r : 0.0, shift, q, substitution, 1};
    return PYDP_OK;
}

pydp_status check_step(double h) noexcept {
    return h > 0.0 && h <= 1.0 ? PYDP_OK : bad("value_step", "must lie in (0, 1]", h);
}

}  // namespace

struct pydp_pld {
    std::vector<Term> terms;
    double h;
    mutable std::mutex mu;  // guards the cached bounds
    mutable std::vector<pld::Bounds> bounds;

    pydp_pld(std::vector<Term> t, double step) : terms(std::move(t)), h(step) {}
    const std::vector<pld::Bounds>& composed() const {
        std::lock_guard<std::mutex> lock(mu);
        if (bounds.empty()) bounds = compose_terms(terms, h);
        return bounds;
    }
};

extern "C" {

const char* pydp_strerror(int code) { return pydp::status_text(static_cast<pydp::Status>(code)); }

const char* pydp_last_error(void) { return last_message; }
const char* pydp_version(void) { return PYDP_VERSION_STRING; }
int pydp_abi_version(void) { return PYDP_ABI_VERSION; }

pydp_status pydp_minimal_scale(int family, double r, double epsilon, double delta, double sensitivity, double* scale) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(scale);
        Family f;
        PYDP_CHECK(make_family(family, r, &f));
        PYDP_CHECK(check_epsilon(epsilon, false));
        PYDP_CHECK(check_delta(delta));
        PYDP_CHECK(check_positive("sensitivity", sensitivity));
        const cal::MinimalScale m = cal::minimal_scale(f, epsilon, delta, sensitivity);
        if (m.status != cal::kOk) return fail(m.status);
        *scale = m.scale;
        return PYDP_OK;
    });
}

pydp_status pydp_log_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity, double* log_delta) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(log_delta);
        return log_profile(family, r, epsilon, scale, sensitivity, log_delta);
    });
}

pydp_status pydp_privacy_profile(int family, double r, double epsilon, double scale, double sensitivity, double* delta) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(delta);
        double ld = 0.0;
        PYDP_CHECK(log_profile(family, r, epsilon, scale, sensitivity, &ld));
        *delta = std::exp(ld);
        return PYDP_OK;
    });
}

pydp_status pydp_epsilon_for_delta(int family, double r, double delta, double scale, double sensitivity, double* epsilon) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(epsilon);
        Family f;
        PYDP_CHECK(make_family(family, r, &f));
        PYDP_CHECK(check_delta(delta));
        PYDP_CHECK(check_positive("scale", scale));
        PYDP_CHECK(check_positive("sensitivity", sensitivity));
        *epsilon = pydp::calibration::epsilon_for_delta(f, delta, scale, sensitivity);
        return PYDP_OK;
    });
}

pydp_status pydp_rng_new_os(pydp_rng** out) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(out);
        unsigned char key[32];
        if (!os_entropy(key)) return fail(PYDP_ERR_ENTROPY, "the operating system's entropy source failed");
        return new_rng(key, 0, out);
    });
}

pydp_status pydp_rng_new(const uint8_t key[32], uint64_t stream, pydp_rng** out) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(key);
        PYDP_REQUIRE(out);
        return new_rng(key, stream, out);
    });
}

pydp_status pydp_rng_spawn(const pydp_rng* rng, uint64_t i, pydp_rng** out) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(rng);
        PYDP_REQUIRE(out);
        // The same range as Random.stream(i).
        if (i == ~std::uint64_t{0}) return fail(PYDP_ERR_INVALID, "i must be below 2^64 - 1 (reserved for key derivation)");
        *out = new pydp_rng{rng->gen.spawn(i)};
        return PYDP_OK;
    });
}

void pydp_rng_free(pydp_rng* rng) { delete rng; }

pydp_status pydp_rng_fill_u64(pydp_rng* rng, uint64_t* out, size_t n) {
    return guarded([&]() -> pydp_status {
        PYDP_CHECK(check_bulk(rng, out, out, n));
        rng->gen.fill_u64(out, n);
        return PYDP_OK;
    });
}

pydp_status pydp_rng_normal(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::normal(loc, scale); });
}
pydp_status pydp_rng_laplace(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::laplace(loc, scale); });
}
pydp_status pydp_rng_logistic(pydp_rng* rng, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::logistic(loc, scale); });
}
pydp_status pydp_rng_subbotin(pydp_rng* rng, double r, double loc, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::subbotin(r, loc, scale); });
}
pydp_status pydp_rng_exponential(pydp_rng* rng, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::exponential(scale); });
}
pydp_status pydp_rng_uniform(pydp_rng* rng, double low, double high, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::uniform(low, high); });
}
pydp_status pydp_rng_gamma(pydp_rng* rng, double shape, double scale, double* out, size_t n, unsigned threads) {
    return sample(rng, out, n, threads, [&] { return pydp::random::BulkDraw::gamma(shape, scale); });
}

pydp_status pydp_release_laplace(pydp_rng* rng, uint64_t t_num, uint64_t t_den, int grid_exponent, double low,
                                 double high, const double* x, double* out, size_t n, unsigned threads) {
    return grid_release(rng, grid_exponent, low, high, x, out, n, threads,
                        [&] { return pydp::release::DiscreteLaplace(t_num, t_den); });
}

pydp_status pydp_release_gaussian(pydp_rng* rng, uint64_t sigma2_num, uint64_t sigma2_den, int grid_exponent,
                                  double low, double high, const double* x, double* out, size_t n, unsigned threads) {
    return grid_release(rng, grid_exponent, low, high, x, out, n, threads,
                        [&] { return pydp::release::DiscreteGaussian(sigma2_num, sigma2_den); });
}

pydp_status pydp_release_lattice(pydp_rng* rng, int family, double r, uint64_t s, int weight_bits, int timing_stable,
                                 int grid_exponent, double low, double high, const double* x, double* out, size_t n,
                                 unsigned threads) {
    namespace rel = pydp::release;
    if (family != PYDP_SUBBOTIN && family != PYDP_LOGISTIC)
        return bad("family", "must be PYDP_SUBBOTIN or PYDP_LOGISTIC for a lattice release", family);
    if (s == 0 || s > (std::uint64_t{1} << 53)) return bad("s", "must lie in [1, 2^53]", static_cast<double>(s));
    if (timing_stable != 0 && timing_stable != 1) return bad("timing_stable", "must be 0 or 1", timing_stable);
    std::unique_ptr<rel::LatticeTable> table;
    const pydp_status rc = guarded([&]() -> pydp_status {
        table = std::make_unique<rel::LatticeTable>(family == PYDP_SUBBOTIN ? rel::LatticeKind::Subbotin : rel::LatticeKind::Logistic,
                                                    r, static_cast<double>(s), weight_bits, rel::kMaxTableHalf);
        return PYDP_OK;
    });
    // A table too long (length_error) or too heavy for its weight bits (overflow_error) is a bad
    // parameter here, not an exhausted stream or a noisy value out of range; the message is kept.
    if (rc == PYDP_ERR_EXHAUSTED || rc == PYDP_ERR_RANGE) return PYDP_ERR_INVALID;
    if (rc != PYDP_OK) return rc;
    const rel::TableSampler sampler{table.get(), timing_stable == 1};
    return grid_release(rng, grid_exponent, low, high, x, out, n, threads, [&] { return sampler; });
}

namespace {
// The pure-DP Logistic table of the plan (s, weight_bits) into *table; an invalid plan is PYDP_ERR_INVALID.
pydp_status pure_logistic_table(uint64_t s, int weight_bits, std::unique_ptr<pydp::release::LatticeTable>* table) {
    namespace rel = pydp::release;
    if (s == 0 || s > (std::uint64_t{1} << 40)) return bad("s", "must lie in [1, 2^40]", static_cast<double>(s));
    if (weight_bits <= rel::kLatticeTailBits || weight_bits > 62) return bad("weight_bits", "must lie in [13, 62]", weight_bits);
    const pydp_status rc = guarded([&]() -> pydp_status {
        *table = std::make_unique<rel::LatticeTable>(rel::LatticeKind::Logistic, 1.0, static_cast<double>(s), weight_bits,
                                                     rel::kMaxTableHalf, rel::kLatticeTailBits);
        return PYDP_OK;
    });
    // A table too long or too heavy for its weight bits is a bad parameter here; the message is kept.
    return rc == PYDP_ERR_EXHAUSTED || rc == PYDP_ERR_RANGE ? PYDP_ERR_INVALID : rc;
}
}  // namespace

pydp_status pydp_release_pure_logistic(pydp_rng* rng, uint64_t s, int weight_bits, int grid_exponent, double low,
                                       double high, const double* x, double* out, size_t n, unsigned threads) {
    std::unique_ptr<pydp::release::LatticeTable> table;
    PYDP_CHECK(pure_logistic_table(s, weight_bits, &table));
    const pydp::release::TableSampler sampler{table.get(), false};
    return grid_release(rng, grid_exponent, low, high, x, out, n, threads, [&] { return sampler; });
}

pydp_status pydp_pure_logistic_epsilon(uint64_t s, int weight_bits, uint64_t shift, double* epsilon) {
    if (!epsilon) return fail(PYDP_ERR_NULL, "epsilon must not be NULL");
    if (shift == 0) return bad("shift", "must be >= 1", 0);
    std::unique_ptr<pydp::release::LatticeTable> table;
    PYDP_CHECK(pure_logistic_table(s, weight_bits, &table));
    return guarded([&]() -> pydp_status {
        *epsilon = table->log_ratio_bound(shift);
        return PYDP_OK;
    });
}

pydp_status pydp_keyed_release_laplace(const pydp_rng* rng, const uint64_t* streams, uint64_t t_num, uint64_t t_den,
                                       int grid_exponent, const double* x, double* out, size_t n, unsigned threads) {
    return keyed_release(rng, streams, grid_exponent, x, out, n, threads,
                         [&] { return pydp::release::DiscreteLaplace(t_num, t_den); });
}

pydp_status pydp_keyed_release_gaussian(const pydp_rng* rng, const uint64_t* streams, uint64_t sigma2_num,
                                        uint64_t sigma2_den, int grid_exponent, const double* x, double* out, size_t n,
                                        unsigned threads) {
    return keyed_release(rng, streams, grid_exponent, x, out, n, threads,
                         [&] { return pydp::release::DiscreteGaussian(sigma2_num, sigma2_den); });
}

pydp_status pydp_pld_from_noise(int family, double r, double scale, double sensitivity, double sampling_rate,
                                int neighbours, double value_step, pydp_pld** out) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(out);
        Term t{};
        PYDP_CHECK(make_term(family, r, scale, sensitivity, sampling_rate, neighbours, &t));
        PYDP_CHECK(check_step(value_step));
        *out = new pydp_pld({t}, value_step);
        return PYDP_OK;
    });
}

pydp_status pydp_pld_compose(const pydp_pld* a, const pydp_pld* b, pydp_pld** out) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(a);
        PYDP_REQUIRE(b);
        PYDP_REQUIRE(out);
        if (total_steps(a->terms) + total_steps(b->terms) > kMaxSteps)
            return fail(PYDP_ERR_INVALID, "the composition would exceed 2^40 mechanisms");
        *out = new pydp_pld(merged(a->terms, b->terms), a->h);
        return PYDP_OK;
    });
}

pydp_status pydp_pld_self_compose(const pydp_pld* a, uint64_t k, pydp_pld** out) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(a);
        PYDP_REQUIRE(out);
        if (k == 0 || k > kMaxSteps / total_steps(a->terms))
            return bad("k", "must be >= 1 with at most 2^40 mechanisms in all", static_cast<double>(k));
        std::vector<Term> terms = a->terms;
        for (Term& t : terms) t.count *= static_cast<long>(k);
        *out = new pydp_pld(std::move(terms), a->h);
        return PYDP_OK;
    });
}

pydp_status pydp_pld_delta(const pydp_pld* pld, double epsilon, double* lower, double* upper) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(pld);
        PYDP_REQUIRE(lower);
        PYDP_REQUIRE(upper);
        PYDP_CHECK(check_epsilon(epsilon, false));
        order_maximum(pld->composed(), [&](const pld::Profile& p) { return p.delta(epsilon); }, lower, upper);
        return PYDP_OK;
    });
}

pydp_status pydp_pld_epsilon(const pydp_pld* pld, double delta, double* lower, double* upper) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(pld);
        PYDP_REQUIRE(lower);
        PYDP_REQUIRE(upper);
        if (!(delta >= 0.0 && delta <= 1.0)) return bad("delta", "must lie in [0, 1]", delta);
        order_maximum(pld->composed(), [&](const pld::Profile& p) { return p.epsilon(delta); }, lower, upper);
        return PYDP_OK;
    });
}

pydp_status pydp_pld_steps(const pydp_pld* pld, uint64_t* steps) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(pld);
        PYDP_REQUIRE(steps);
        *steps = total_steps(pld->terms);
        return PYDP_OK;
    });
}

void pydp_pld_free(pydp_pld* pld) { delete pld; }

pydp_status pydp_pld_calibrate(int family, double r, double epsilon, double delta, double sensitivity, uint64_t steps,
                               double sampling_rate, int neighbours, double value_step, double* scale) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(scale);
        PYDP_CHECK(check_epsilon(epsilon, false));
        if (!(delta > 0.0 && delta < 1.0)) return bad("delta", "must lie in (0, 1)", delta);
        if (steps == 0 || steps > kMaxSteps) return bad("steps", "must lie in [1, 2^40]", static_cast<double>(steps));
        PYDP_CHECK(check_step(value_step));
        Term probe{};
        PYDP_CHECK(make_term(family, r, sensitivity, sensitivity, sampling_rate, neighbours, &probe));
        // passes(s): the composition's certified upper bound on delta(epsilon) at scale s is <= delta.
        auto passes = [&](double s) {
            Term t{};
            if (make_term(family, r, s, sensitivity, sampling_rate, neighbours, &t) != PYDP_OK) return false;
            t.count = static_cast<long>(steps);
            double lo = 0.0, up = 0.0;
            order_maximum(compose_terms({t}, value_step), [&](const pld::Profile& p) { return p.delta(epsilon); }, &lo, &up);
            return up <= delta;
        };
        double lo = sensitivity, hi = sensitivity;  // lo fails, hi passes
        if (passes(hi)) {
            do {
                lo /= 2.0;
                if (!(lo > sensitivity * 0x1p-60)) return fail(PYDP_ERR_NO_CONVERGENCE, "no failing scale found above 2^-60 sensitivity");
            } while (passes(lo));
        } else {
            do {
                hi *= 2.0;
                if (!(hi < sensitivity * 0x1p60)) return fail(PYDP_ERR_NO_FINITE_SCALE, "no scale up to 2^60 sensitivity reaches (epsilon, delta)");
            } while (!passes(hi));
            lo = hi / 2.0;
        }
        last_message[0] = '\0';  // the probes' messages are not this call's
        while (hi / lo - 1.0 > 1e-6) {
            const double mid = std::sqrt(lo) * std::sqrt(hi);
            (passes(mid) ? hi : lo) = mid;
        }
        *scale = hi;
        return PYDP_OK;
    });
}

pydp_status pydp_calibrate_laplace_release(double epsilon, double delta, double sensitivity, int grid_bits,
                                           pydp_grid_plan* plan) {
    return guarded([&]() -> pydp_status {
        PYDP_CHECK(check_release_args(epsilon, delta, sensitivity, grid_bits, plan));
        const double denom = epsilon - 2.0 * std::log1p(-delta);
        if (!(denom > 0.0))
            return fail(PYDP_ERR_NO_FINITE_SCALE, "epsilon = 0 with delta = 0 requires an infinite scale");
        int e = 0;
        PYDP_CHECK(grid_exponent(sensitivity / denom, sensitivity, grid_bits, kLaplaceMaxBits, &e));
        const std::uint64_t k = grid_shift(sensitivity, e);
        const double log_target = std::log(delta) + std::log1p(-kDeltaMargin);
        // t passes: pure k / t <= epsilon (exact), else the exact delta(epsilon; t, k) within the margin.
        auto ok = [&](std::uint64_t t) {
            if (ratio_at_most(k, t, epsilon)) return true;
            if (delta == 0.0) return false;
            return rel::dlaplace_log_delta(epsilon, 1.0 / static_cast<double>(t), static_cast<double>(k)) <= log_target;
        };
        std::uint64_t hi = 1;
        while (!ok(hi)) {
            hi *= 2;
            if (hi >= rel::kMaxLaplaceT)
                return fail(PYDP_ERR_SCALE_OVERFLOW, "discrete Laplace calibration: t would exceed 2^40");
        }
        std::uint64_t lo = hi / 2;  // fails (or 0)
        while (hi - lo > 1) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            (ok(mid) ? hi : lo) = mid;
        }
        if (!ok(hi) || (hi > 1 && ok(hi - 1)))
            return fail(PYDP_ERR_VERIFY_FAILED, "discrete Laplace calibration could not be verified");
        const bool pure = ratio_at_most(k, hi, epsilon);
        *plan = pydp_grid_plan{hi, 1, e, k,
                               pure ? 0.0 : std::exp(rel::dlaplace_log_delta(epsilon, 1.0 / static_cast<double>(hi),
                                                                             static_cast<double>(k)))};
        return PYDP_OK;
    });
}

pydp_status pydp_calibrate_gaussian_release(double epsilon, double delta, double sensitivity, int grid_bits,
                                            pydp_grid_plan* plan) {
    return guarded([&]() -> pydp_status {
        PYDP_CHECK(check_release_args(epsilon, delta, sensitivity, grid_bits, plan));
        if (delta == 0.0) return fail(PYDP_ERR_NO_FINITE_SCALE, "the discrete Gaussian needs delta > 0 (no finite scale gives delta = 0)");
        const cal::MinimalScale m = cal::minimal_scale(Family::make(Kind::Gaussian), epsilon, delta, sensitivity);
        if (m.status != cal::kOk) return fail(m.status);
        int e = 0;
        PYDP_CHECK(grid_exponent(m.scale, sensitivity, grid_bits, kGaussMaxBits, &e));
        const std::uint64_t k = grid_shift(sensitivity, e);
        const double log_target = std::log(delta) + std::log1p(-kDeltaMargin);
        // sigma2 = n passes: the exact delta(epsilon; n, k) of the discrete Gaussian within the margin.
        auto ok = [&](std::uint64_t n) {
            return rel::dgauss_log_delta(epsilon, static_cast<double>(n), static_cast<double>(k)) <= log_target;
        };
        // A bracket around the continuous scale for the shift k, in grid steps squared; then bisection.
        const double guess = std::pow(m.scale / sensitivity * static_cast<double>(k), 2.0);
        std::uint64_t hi = std::max<std::uint64_t>(2, static_cast<std::uint64_t>(std::min(guess * 1.001, 0x1p62)) + 1);
        while (!ok(hi)) {
            if (hi > rel::kMaxParam / 2)
                return fail(PYDP_ERR_SCALE_OVERFLOW, "discrete Gaussian calibration: sigma2 would exceed 2^62 grid steps squared");
            hi *= 2;
        }
        std::uint64_t lo = std::min(hi - 1, static_cast<std::uint64_t>(guess * 0.999));  // fails, or 0
        while (lo > 0 && ok(lo)) lo /= 2;
        if (lo == 0 && ok(1)) hi = 1;
        while (hi - lo > 1) {
            const std::uint64_t mid = lo + (hi - lo) / 2;
            (ok(mid) ? hi : lo) = mid;
        }
        if (!ok(hi) || (hi > 1 && ok(hi - 1)) || hi > rel::kMaxParam)
            return fail(PYDP_ERR_VERIFY_FAILED, "discrete Gaussian calibration could not be verified");
        *plan = pydp_grid_plan{hi, 1, e, k,
                               std::exp(rel::dgauss_log_delta(epsilon, static_cast<double>(hi), static_cast<double>(k)))};
        return PYDP_OK;
    });
}

pydp_status pydp_release_calibrate_laplace_vector(double epsilon, double delta, double sensitivity, int norm,
                                                  uint64_t dimension, int grid_bits, pydp_vector_plan* plan) {
    return guarded([&]() -> pydp_status {
        if (norm != PYDP_NORM_L1 && norm != PYDP_NORM_LINF)
            return bad("norm", "must be PYDP_NORM_L1 or PYDP_NORM_LINF for a discrete Laplace vector plan", norm);
        const rel::VectorNorm vn = norm == PYDP_NORM_L1 ? rel::VectorNorm::L1 : rel::VectorNorm::Linf;
        return vector_plan(epsilon, delta, sensitivity, grid_bits, {PYDP_MECH_LAPLACE, norm, dimension, 0, 1, 0, 0, 0.0},
                           plan, pydp_calibrate_laplace_release, [&](pydp_vector_plan* out) {
            if (epsilon == 0.0) return fail(PYDP_ERR_NO_FINITE_SCALE, "epsilon = 0 requires an infinite scale for a vector plan");
            return from_plan(rel::laplace_vector_plan(epsilon, sensitivity, grid_bits, dimension, vn), out);
        });
    });
}

pydp_status pydp_release_calibrate_gaussian_vector(double epsilon, double delta, double sensitivity, uint64_t dimension,
                                                   int grid_bits, pydp_vector_plan* plan) {
    return guarded([&]() -> pydp_status {
        return vector_plan(epsilon, delta, sensitivity, grid_bits, {PYDP_MECH_GAUSSIAN, PYDP_NORM_L2, dimension, 0, 1, 0, 0, 0.0},
                           plan, pydp_calibrate_gaussian_release, [&](pydp_vector_plan* out) {
            if (delta == 0.0)
                return fail(PYDP_ERR_NO_FINITE_SCALE, "the discrete Gaussian needs delta > 0 (no finite scale gives delta = 0)");
            return from_plan(rel::gaussian_vector_plan(epsilon, delta, sensitivity, grid_bits, dimension), out);
        });
    });
}

pydp_status pydp_zcdp_log_delta(double rho, double epsilon, double* log_delta, double* alpha) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(log_delta);
        PYDP_CHECK(check_positive("rho", rho));
        PYDP_CHECK(check_epsilon(epsilon, false));
        const pydp::accounting::ZcdpDelta z = pydp::accounting::zcdp_log_delta(rho, epsilon);
        *log_delta = z.log_delta;
        if (alpha) *alpha = z.alpha;
        return PYDP_OK;
    });
}

pydp_status pydp_release_vector(pydp_rng* rng, const pydp_vector_plan* plan, double low, double high, const double* x,
                                double* out, size_t vectors, unsigned threads) {
    return guarded([&]() -> pydp_status {
        PYDP_REQUIRE(plan);
        PYDP_CHECK(check_dimension(plan->dimension));
        const std::size_t m = static_cast<std::size_t>(plan->dimension);
        if (vectors > PYDP_MAX_ELEMENTS / m)
            return bad("vectors", "times plan->dimension must be at most PYDP_MAX_ELEMENTS = 2^37", static_cast<double>(vectors));
        switch (plan->mechanism) {
            case PYDP_MECH_LAPLACE:
                return rows_release(rng, plan, low, high, x, out, vectors, threads,
                                    [&] { return rel::DiscreteLaplace(plan->num, plan->den); });
            case PYDP_MECH_GAUSSIAN:
                return rows_release(rng, plan, low, high, x, out, vectors, threads,
                                    [&] { return rel::DiscreteGaussian(plan->num, plan->den); });
            default: return bad("plan->mechanism", "must be PYDP_MECH_LAPLACE or PYDP_MECH_GAUSSIAN", plan->mechanism);
        }
    });
}

pydp_status pydp_calibrate_lattice_release(int family, double r, double epsilon, double delta, double sensitivity,
                                           int grid_bits, int timing_stable, pydp_lattice_plan* plan) {
    const pydp_status rc = guarded([&]() -> pydp_status {
        PYDP_REQUIRE(plan);
        if (family != PYDP_SUBBOTIN && family != PYDP_LOGISTIC)
            return bad("family", "must be PYDP_SUBBOTIN or PYDP_LOGISTIC for a lattice release", family);
        Family fam;
        PYDP_CHECK(make_family(family, r, &fam));
        PYDP_CHECK(check_epsilon(epsilon, false));
        PYDP_CHECK(check_delta(delta));
        PYDP_CHECK(check_positive("sensitivity", sensitivity));
        const bool pure = delta == 0.0;
        if (pure && family == PYDP_SUBBOTIN)
            return fail(PYDP_ERR_NO_FINITE_SCALE, "delta must be > 0 for a Subbotin lattice release: its table has finite support");
        if (pure && !(epsilon > 0.0)) return bad("epsilon", "must be > 0 for the pure-DP (delta = 0) Logistic release", epsilon);
        if (grid_bits < -1 || grid_bits > 30) return bad("grid_bits", "must be -1 (automatic) or lie in [0, 30]", grid_bits);
        if (timing_stable != 0 && timing_stable != 1) return bad("timing_stable", "must be 0 or 1", timing_stable);
        if (pure && timing_stable == 1)
            return bad("timing_stable", "must be 0 with delta = 0: the pure-DP Logistic law has infinite support", timing_stable);
        const rel::Lattice L{family == PYDP_SUBBOTIN ? rel::LatticeKind::Subbotin : rel::LatticeKind::Logistic,
                             family == PYDP_SUBBOTIN ? r : 1.0, timing_stable == 1, pure};
        const cal::MinimalScale m = cal::minimal_scale(fam, epsilon, delta, sensitivity);
        if (m.status != cal::kOk) return fail(m.status);
        const rel::LatticePlan p = rel::lattice_plan(L, epsilon, delta, sensitivity, grid_bits, m.scale);
        switch (p.status) {
            case rel::PlanStatus::Ok: break;
            case rel::PlanStatus::Invalid: return bad("scale", "is outside the range a float64 grid can serve", m.scale);
            case rel::PlanStatus::ScaleOverflow: return fail(PYDP_ERR_SCALE_OVERFLOW, p.message);
            case rel::PlanStatus::VerifyFailed: return fail(PYDP_ERR_VERIFY_FAILED, p.message);
            default: return fail(PYDP_ERR_INTERNAL, "unknown plan status");
        }
        last_message[0] = '\0';
        *plan = pydp_lattice_plan{p.s, p.weight_bits, p.grid_exponent, p.shift, p.delta_achieved, p.table->half_size()};
        return PYDP_OK;
    });
    // A table too long for its size limit (length_error) is a parameter problem here, not an exhausted
    // stream; the message is kept.
    return rc == PYDP_ERR_EXHAUSTED ? PYDP_ERR_INVALID : rc;
}

}  // extern "C"
