"""Exact calibration (Lemma 1 and 2) against an independent 50-digit mpmath implementation (tests/support/mpref.py).

The reference finds the threshold u = sup{z : psi(z) - psi(z - d) <= eps} by its own bracketed Newton
iteration in 70 digits, evaluates delta = S(u - d) - e^eps S(u) from the family definitions, and finds
the exact minimal scale by a second root find (on log d, or on log(d - eps) for the MLR-bounded
Laplace and Logistic, where d* - eps ~ delta needs -log10(delta) extra digits). The Lemma 1 form itself
is cross-checked against direct quadrature of the hockey-stick divergence.

Requirements checked: minimal_scale within 1e-9 relative of the exact minimal scale and never
below it; the privacy condition holds at the returned scale both in the library's own evaluation and in
the 50-digit one; privacy_profile within 1e-13 + 8 * kappa * 2^-53 relative of the exact delta, with
kappa = 2 d f(u - d) / delta + eps e^eps S(u) / delta the relative condition number of delta in
(scale, sensitivity, epsilon) (the size of the error produced by rounding D / scale or epsilon once).
"""
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import mpref as R
from support import refdata

import pydp_core
from pydp_core import (
    CalibrationError,
    Gaussian,
    Laplace,
    Logistic,
    Subbotin,
    Truncated,
    epsilon_for_delta,
    geng_truncated_laplace,
    log_privacy_profile,
    minimal_scale,
    privacy_profile,
)

SCALE_RTOL = 1e-9
EPSILONS, DELTAS = refdata.EPSILONS, refdata.DELTAS
FAMILIES = [Subbotin(k[1]) if k[0] == "Subbotin" else getattr(pydp_core, k[0])() for k in refdata.FAMILY_KEYS]


def _scale_failures(noise, eps, delta, sens=1.0):
    """Every way minimal_scale(noise, eps, delta, sens) can be wrong, as messages with the numbers."""
    key = R.family_key(noise)
    s = minimal_scale(noise, epsilon=eps, delta=delta, sensitivity=sens)
    exact = refdata.value("minimal_scale", key, eps, delta, sens)
    out = []
    with mp.workdps(50):
        err = float((R.X(s) - exact) / exact)
        if R.X(s) < exact:
            out.append(f"UNDER-NOISED: scale {s!r} < exact {mp.nstr(exact, 20)} (rel {err:.3g})")
        if abs(err) > SCALE_RTOL:
            out.append(f"scale {s!r} vs exact {mp.nstr(exact, 20)}: rel err {err:.3g} > {SCALE_RTOL}")
        own = privacy_profile(noise, epsilon=eps, scale=s, sensitivity=sens)
        if not own <= delta:
            out.append(f"library's own profile at the returned scale {own!r} > delta")
        # the documented safety margin: the condition held with delta reduced by (at least half of) 1e-12
        own_log = log_privacy_profile(noise, epsilon=eps, scale=s, sensitivity=sens)
        if not own_log <= math.log(delta) - 5e-13:
            out.append(f"library's own log delta {own_log!r} is within 5e-13 of log delta {math.log(delta)!r}")
        ld = R.log_privacy_profile(key, eps, s, sens)
        if ld > mp.log(R.X(delta)):
            out.append(f"exact delta at the returned scale {mp.nstr(mp.exp(ld), 12)} > delta (exceeds by "
                       f"{float(mp.exp(ld) / R.X(delta) - 1):.3g} relative)")
    return [f"{noise!r} eps={eps!r} delta={delta!r} D={sens!r}: {m}" for m in out]


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_minimal_scale_against_reference(noise):
    bad = []
    for eps in EPSILONS:
        for delta in DELTAS:
            bad += _scale_failures(noise, eps, delta)
    assert not bad, f"{len(bad)} problems:\n" + "\n".join(bad)


@pytest.mark.parametrize("r", refdata.MORE_ORDERS)
def test_minimal_scale_more_orders_and_sensitivities(r):
    # Orders between the grid points, sensitivities other than 1, eps and delta between the grid values.
    bad = []
    for eps, delta, sens in refdata.MORE_POINTS:
        bad += _scale_failures(Subbotin(r), eps, delta, sens)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("noise", [Laplace(), Logistic()], ids=repr)
@pytest.mark.parametrize("eps", [1e-3, 0.1, 0.3, 0.7, 1.1, 3.0, 7.0, 10.0, 709.0, 1000.0])
def test_pure_dp_scale_is_exactly_private(noise, eps):
    """delta = 0: the MLR-bounded families are (eps, 0)-DP iff D / s <= eps (t = inf). The returned double
    s must satisfy this exactly (in 50 digits), not only after rounding D / s."""
    for sens in (1.0, 3.0, 0.1):
        s = minimal_scale(noise, epsilon=eps, delta=0.0, sensitivity=sens)
        with mp.workdps(50):
            d = R.X(sens) / R.X(s)
            assert d <= R.X(eps), f"{noise!r} eps={eps} D={sens}: s={s!r} gives D/s = {mp.nstr(d, 20)} > eps"
            assert (R.X(eps) - d) / R.X(eps) < 1e-15  # and it is the smallest such double, up to an ulp or two
        assert privacy_profile(noise, epsilon=eps, scale=s, sensitivity=sens) == 0.0


# ------------------------------------------------------------------------------------------------------
# The privacy profile and its inverse
# ------------------------------------------------------------------------------------------------------
def _profile_points(noise):
    """(eps, scale) pairs: near the minimal scales of the grid deltas (delta down to 1e-300), and beyond."""
    pts = []
    for eps in (1e-3, 0.1, 1.0, 20.0, 1000.0):
        for delta in (0.3, 1e-6, 1e-15, 1e-100, 1e-300):
            s = minimal_scale(noise, epsilon=eps, delta=delta)
            pts += [(eps, s * 1.001), (eps, s * 0.999)]
    return pts


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_privacy_profile_against_reference(noise):
    key = R.family_key(noise)
    pts = _profile_points(noise)
    eps = np.array([p[0] for p in pts])
    scale = np.array([p[1] for p in pts])
    got = log_privacy_profile(noise, epsilon=eps, scale=scale)
    bad = []
    for e, s, g in zip(eps, scale, got):
        ref = R.log_privacy_profile(key, float(e), float(s))
        if ref < -7e5:  # below every delta of interest: only check that the library says so too
            if not g < -7e5 * 0.99:
                bad.append(f"eps={e!r} scale={s!r}: log delta {g!r}, exact {mp.nstr(ref, 10)}")
            continue
        kappa = R.profile_condition(key, float(e), float(s))
        # Relative error of delta = absolute error of log delta.
        with mp.workdps(30):
            err = abs(R.X(g) - ref) if math.isfinite(g) else mp.inf
        # 8 kappa ulps: the library evaluates at D / s rounded UP (conservative), which alone costs up to
        # 2 kappa ulps on top of the arithmetic in the tail (about 700 in magnitude there).
        tol = 1e-13 + 8 * kappa * R.EPS_MACH
        if not err <= tol:
            bad.append(f"eps={e!r} scale={s!r}: log delta {g!r} vs exact {mp.nstr(ref, 20)}: delta rel err "
                       f"{float(err):.3g} > tol {tol:.3g} (kappa {kappa:.3g})")
    assert not bad, f"{noise!r}: {len(bad)} of {len(pts)} points:\n" + "\n".join(bad)


@pytest.mark.parametrize("noise", [Laplace(), Logistic(), Gaussian(), Subbotin(3.0), Truncated(Laplace(), 4.0),
                                   Truncated(Subbotin(1.5), 6.0)], ids=repr)
def test_lemma1_against_hockey_stick_quadrature(noise):  # the keys of refdata.HOCKEY_KEYS
    """The reference's Lemma 1 form and the library against the definition of delta by quadrature."""
    key = R.family_key(noise)
    for eps, s in refdata.HOCKEY_POINTS:
        quad = refdata.value("hockey_stick", key, eps, s)
        lemma = R.privacy_profile(key, eps, s)
        assert mp.almosteq(quad, lemma, rel_eps=mp.mpf(10) ** -18), (eps, s, quad, lemma)
        assert R.mismatch(privacy_profile(noise, epsilon=eps, scale=s), lemma, 1e-12, R.profile_condition(key, eps, s)) is None


@pytest.mark.parametrize("noise", FAMILIES, ids=repr)
def test_epsilon_for_delta_against_reference(noise):
    key = R.family_key(noise)
    bad = []
    for delta in refdata.EFD_DELTAS:
        for s in refdata.EFD_SCALES:
            e = epsilon_for_delta(noise, delta=delta, scale=s)
            ref = refdata.value("epsilon_for_delta", key, delta, s, 1.0)
            if not math.isfinite(e):
                # Documented cap for Subbotin_r (numerical threshold): answers beyond epsilon = 1e6 are
                # reported as +inf (conservative); double arithmetic cannot resolve the threshold there.
                if not ref > 1e6:
                    bad.append(f"delta={delta} scale={s}: eps {e!r}, exact {mp.nstr(ref, 12)}")
                continue
            with mp.workdps(50):
                if ref == 0:
                    if e != 0.0:
                        bad.append(f"delta={delta} scale={s}: eps {e!r}, exact 0")
                    continue
                err = float((R.X(e) - ref) / ref)
                ld = R.log_privacy_profile(key, e, s)
                if err < 0 and ld > mp.log(R.X(delta)):
                    bad.append(f"delta={delta} scale={s}: eps {e!r} below exact {mp.nstr(ref, 20)} (rel {err:.3g}); "
                               f"exact delta there {mp.nstr(mp.exp(ld), 12)} > delta (not conservative)")
                if abs(err) > SCALE_RTOL:
                    bad.append(f"delta={delta} scale={s}: eps {e!r} vs exact {mp.nstr(ref, 20)}: rel err {err:.3g}")
    assert not bad, f"{noise!r}:\n" + "\n".join(bad)


def test_epsilon_for_delta_edges():
    assert epsilon_for_delta(Gaussian(), delta=0.0, scale=1.0) == math.inf  # MLR-unbounded: no finite eps at delta 0
    assert epsilon_for_delta(Laplace(), delta=0.0, scale=2.0) == 0.5  # (D/s, 0)-DP
    assert epsilon_for_delta(Logistic(), delta=0.0, scale=4.0) == 0.25
    assert epsilon_for_delta(Gaussian(), delta=0.9, scale=1.0) == 0.0  # delta(0) = TV < 0.9
    # round trip: epsilon_for_delta(privacy_profile(eps)) ~ eps
    for noise in (Gaussian(), Subbotin(3.0), Logistic()):
        d = privacy_profile(noise, epsilon=1.3, scale=0.5)  # D / s = 2 > 1.3: delta > 0 for the Logistic too
        assert epsilon_for_delta(noise, delta=d, scale=0.5) == pytest.approx(1.3, rel=1e-9)


# ------------------------------------------------------------------------------------------------------
# Closed forms (Theorem 3, Theorem 4, Balle-Wang) against the general condition
# ------------------------------------------------------------------------------------------------------
CLOSED_POINTS = refdata.CLOSED_POINTS


def _laplace_closed(eps, delta):
    return 1 / (R.X(eps) - 2 * mp.log1p(-R.X(delta)))  # Theorem 3, D = 1


def _logistic_closed(eps, delta):  # Theorem 4, D = 1
    e, d = R.X(eps), R.X(delta)
    return 1 / (2 * mp.log((mp.exp(e / 2) + mp.sqrt(d * (mp.exp(e) + d - 1))) / (1 - d)))


@pytest.mark.parametrize("noise,closed", [(Laplace(), _laplace_closed), (Logistic(), _logistic_closed)], ids=["Laplace", "Logistic"])
def test_closed_forms_against_general_condition(noise, closed):
    key = R.family_key(noise)
    bad = []
    for eps, delta in CLOSED_POINTS:
        with mp.workdps(400):  # d* - eps ~ delta: enough digits for delta = 1e-300
            c = closed(eps, delta)
        general = refdata.value("minimal_scale", key, eps, delta, 1.0)
        with mp.workdps(60):
            if abs(c / general - 1) > mp.mpf(10) ** -40:
                bad.append(f"reference: closed form {mp.nstr(c, 25)} != Lemma 1 root {mp.nstr(general, 25)} at {eps}, {delta}")
        s = minimal_scale(noise, epsilon=eps, delta=delta)
        with mp.workdps(60):
            if R.X(s) < c or abs(R.X(s) / c - 1) > SCALE_RTOL:
                bad.append(f"eps={eps} delta={delta}: library {s!r} vs closed form {mp.nstr(c, 20)} "
                           f"(rel {float(R.X(s) / c - 1):.3g})")
    assert not bad, "\n".join(bad)


def test_gaussian_threshold_balle_wang():
    """t = (2 eps s^2 + D^2) / (2 D): the general threshold root of psi(z) - psi(z - d) = eps (in the
    reference's generic root finder, not its Gaussian shortcut) and the library's threshold both give it."""
    g = R.family(("Gaussian",))
    fam = Gaussian().kernel
    for eps, s, D in [(0.1, 2.0, 1.0), (1.0, 1.0, 1.0), (5.0, 0.3, 2.0), (1000.0, 0.05, 1.0), (1e-3, 40.0, 0.5)]:
        with mp.workdps(60):
            d = R.X(D) / R.X(s)
            e = R.X(eps)
            generic = R._newton_increasing(lambda z: R.RefFamily.psi_diff(g, z, d) - e,
                                           lambda z: g.dlogpdf(z - d) - g.dlogpdf(z), d / 2, d / 2 + e / d + 10)
            bw = (2 * e * R.X(s) ** 2 + R.X(D) ** 2) / (2 * R.X(D))
            assert mp.almosteq(generic * R.X(s), bw, rel_eps=mp.mpf(10) ** -40)
            lib = fam.threshold(D / s, eps)
            assert abs(R.X(lib) / generic - 1) < 1e-13, (eps, s, D, lib, generic)


def _gaussian_branch_points():
    """(eps, d) in every regime of the library's Gaussian profile (gaussian_point in calibration/profile.hpp),
    placed by t1 = (eps/d - d/2) / sqrt 2 and h = d / sqrt 2: the continued fractions (t1 >= 6: every
    term-count band and its edges, shifts h from 1e-9 to 2 t1), the Taylor series of erfcx(t1 + h) / erfcx(t1)
    (h <= 0.01 t1 + 0.05: both sides of that edge), the two-erfcx form, and a1 <= 0 (t1 in [-h/2, 0]) with
    h on both sides of 0.05 (Taylor series or log_ndtr), including eps = 0."""
    sq2 = math.sqrt(2.0)
    pts = []

    def add(t1, h):
        d = h * sq2
        pts.append((max(t1 * sq2 * d + d * d / 2, 0.0), d))

    for t1 in (6.0, 6.9, 7.0, 8.0, 9.0, 10.0, 12.0, 14.0, 18.0, 25.0, 26.5, 40.0):
        for h in (1e-9, 1e-3, 0.3, t1 / 3, 2 * t1):
            add(t1, h)
    for t1 in (1e-6, 0.01, 0.3, 1.0, 2.5, 5.99):
        edge = 0.01 * t1 + 0.05
        for h in (1e-9, 1e-5, edge * 0.999, edge * 1.001, 1.0, 4.0):
            add(t1, h)
    for h in (1e-9, 1e-4, 0.03, 0.0499, 0.0501, 0.3, 3.0):
        for frac in (0.0, 0.5, 1.0):  # eps = (1 - frac) d^2 / 2
            add(-frac * h / 2, h)
    return pts


def test_gaussian_profile_every_branch_against_reference():
    """At exact inputs (scale 1, sensitivity d: the shift is d itself) the Gaussian profile is accurate to
    the arithmetic floor: |log delta - exact| <= 1e-13 + 2 * 2^-53 |log delta| (the last term is the spacing
    of doubles near log delta, i.e. what storing delta in log space costs). No condition-number allowance:
    the exponent a1^2 / 2 is formed from a compensated a1, and no form subtracts nearly equal terms. (The
    earlier form lost up to 1.6e-9 relative for a small shift with a1 <= 0 and 3.4e-13 in the deep tail.)"""
    pts = _gaussian_branch_points()
    eps = np.array([p[0] for p in pts])
    d = np.array([p[1] for p in pts])
    got = log_privacy_profile(Gaussian(), epsilon=eps, scale=1.0, sensitivity=d)
    bad = []
    for e, dd, g in zip(eps, d, got):
        ref = R.log_privacy_profile(("Gaussian",), float(e), 1.0, float(dd))
        with mp.workdps(30):
            err = abs(R.X(g) - ref) if math.isfinite(g) else mp.inf
            tol = 1e-13 + 2 * R.EPS_MACH * abs(ref)
        if not err <= tol:
            bad.append(f"eps={e!r} d={dd!r}: log delta {g!r} vs exact {mp.nstr(ref, 20)} (error {float(err):.3g} > {tol:.3g})")
    assert not bad, f"{len(bad)} of {len(pts)} points:\n" + "\n".join(bad)


def _balle_wang_log_delta(eps, d):
    """log delta of the Gaussian mechanism (Balle and Wang 2018, Theorem 8) in the current precision."""
    a1, a2 = eps / d - d / 2, eps / d + d / 2
    return mp.log(mp.ncdf(-a1) - mp.exp(eps) * mp.ncdf(-a2))


@pytest.mark.parametrize("eps", [0.0, 1e-300, 1e-12, 1e-6])
def test_gaussian_minimal_scale_tiny_epsilon(eps):
    """eps -> 0 with delta down to 1e-300: both terms of delta are near 1/2, beyond the 70 digits of the
    general reference, so the exact scale comes from Balle and Wang's formula in -log10(delta) + 60 digits
    (secant on log d from the library's answer). The earlier library read delta = 0 there (eps = 0,
    delta = 1e-300 gave a scale 1.9e173 times too small, i.e. no privacy)."""
    bad = []
    for delta in (0.3, 1e-20, 1e-100, 1e-300):
        s = minimal_scale(Gaussian(), epsilon=eps, delta=delta)
        with mp.workdps(int(-math.log10(delta)) + 60):
            e, dl = R.X(eps), R.X(delta)
            w = mp.findroot(lambda v: _balle_wang_log_delta(e, mp.exp(v)) - mp.log(dl), -mp.log(R.X(s)))
            exact = mp.exp(-w)
            err = float(R.X(s) / exact - 1)
            if not (0 <= err <= SCALE_RTOL and _balle_wang_log_delta(e, 1 / R.X(s)) <= mp.log(dl)):
                bad.append(f"delta={delta!r}: scale {s!r} vs exact {mp.nstr(exact, 20)} (rel {err:.3g})")
        if not privacy_profile(Gaussian(), epsilon=eps, scale=s) <= delta:
            bad.append(f"delta={delta!r}: library's own profile at {s!r} exceeds delta")
    assert not bad, "\n".join(bad)


def test_gaussian_minimal_scale_random_points():
    """Seeded points over the whole range: eps in [1e-3, 1e3], delta in [1e-300, 0.5], D in [1e-3, 1e3]
    (log-uniform), each checked like the grid (never under-noised, within 1e-9, private in both evaluations)."""
    rng = np.random.default_rng(20261121)
    bad = []
    for _ in range(24):
        eps = float(10 ** rng.uniform(-3, 3))
        delta = float(10 ** rng.uniform(-300, math.log10(0.5)))
        sens = float(10 ** rng.uniform(-3, 3))
        bad += _scale_failures(Gaussian(), eps, delta, sens)
        # The Gaussian solver returns only a scale at which it evaluated log_privacy_profile's own condition
        # with the full margin, so that evaluation, repeated, must show it.
        s = minimal_scale(Gaussian(), epsilon=eps, delta=delta, sensitivity=sens)
        if not log_privacy_profile(Gaussian(), epsilon=eps, scale=s, sensitivity=sens) <= math.log(delta) - 1e-12:
            bad.append(f"eps={eps!r} delta={delta!r} D={sens!r}: the full 1e-12 margin does not hold at {s!r}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("noise", [Logistic()] + [Subbotin(k[1]) for k in refdata.THRESHOLD_KEYS[1:]], ids=repr)
def test_library_threshold_against_reference(noise):
    key = R.family_key(noise)
    f = R.family(key)
    bad = []
    for d in refdata.THRESHOLD_SHIFTS:
        for eps in refdata.THRESHOLD_EPSILONS:
            if noise.mlr_bounded and eps >= d:
                if noise.kernel.threshold(d, eps) != math.inf:
                    bad.append(f"d={d} eps={eps}: expected inf")
                continue
            with mp.workdps(60):
                u = refdata.value("threshold", key, eps, d)
                lib = noise.kernel.threshold(d, eps)
                if u > mp.mpf(np.finfo(float).max):
                    if lib != math.inf:
                        bad.append(f"d={d} eps={eps}: got {lib!r}, exact {mp.nstr(u, 10)} overflows")
                    continue
                # cond of u in (eps, d): eps / (u L'(u)) + d |dL/dd| / (u L'(u)), L(u) = psi(u) - psi(u - d);
                # plus the rounding of u^r = exp(r log u) inside L (relative r |log u| 2^-53 on L), which
                # moves u by L / (u L') times that.
                lp = f.psi_diff_prime(u, R.X(d))
                r = getattr(f, "r", 1)
                cond = float((R.X(eps) + R.X(d) * abs(f.dlogpdf(u - R.X(d)))) / (u * lp)
                             + R.X(eps) / (u * lp) * r * abs(mp.log(u)))
                m = R.mismatch(lib, u, 1e-13, cond)
            if m:
                bad.append(f"d={d} eps={eps}: {m}")
    assert not bad, f"{noise!r}:\n" + "\n".join(bad)


# ------------------------------------------------------------------------------------------------------
# Bounded support: Truncated(...) and Geng et al.'s truncated Laplace (Remark 2)
# ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta", [(0.1, 1e-3), (1.0, 1e-6), (1.0, 1e-15), (5.0, 1e-40), (0.5, 1e-300), (20.0, 0.2)])
def test_geng_truncated_laplace_meets_lemma1_with_equality(eps, delta):
    for sens in (1.0, 0.25):
        trunc, scale = geng_truncated_laplace(epsilon=eps, delta=delta, sensitivity=sens)
        assert scale == sens / eps
        key = R.family_key(trunc)
        exact = R.privacy_profile(key, eps, scale, sens)
        kappa = R.profile_condition(key, eps, scale, sens)
        # the bound is a rounded double, so equality holds up to its conditioning
        with mp.workdps(40):
            a = R.X(trunc.bound)
            kappa_a = float(a * mp.exp(R.family(key).logpdf(a - R.X(sens) / R.X(scale)) - mp.log(exact)))
        assert R.mismatch(delta, exact, 1e-13, kappa + kappa_a) is None, (delta, exact)
        assert R.mismatch(privacy_profile(trunc, epsilon=eps, scale=scale, sensitivity=sens), exact, 1e-12, kappa + kappa_a) is None
        # and its minimal scale for (eps, delta) is the Geng scale (the construction is tight)
        s = minimal_scale(trunc, epsilon=eps, delta=delta, sensitivity=sens)
        assert s >= scale * (1 - 1e-12) and s == pytest.approx(scale, rel=1e-9)


@pytest.mark.parametrize("noise", [Truncated(Laplace(), 5.0), Truncated(Gaussian(), 4.0), Truncated(Subbotin(3.0), 3.0),
                                   Truncated(Logistic(), 8.0)], ids=repr)
def test_truncated_minimal_scale_and_profile(noise):
    key = R.family_key(noise)
    bad = []
    for eps in (0.1, 1.0, 5.0):
        floor = R.privacy_profile(key, eps, 1e6)  # delta reachable only above the mass beyond the bound
        for delta in (0.3, 1e-3, 1e-6):
            if delta <= float(floor) * 1.01:
                continue
            bad += _scale_failures(noise, eps, delta)
    assert not bad, "\n".join(bad)
    # Shifts of twice the bound or more are never private: delta = 1.
    assert privacy_profile(noise, epsilon=1.0, scale=1.0, sensitivity=2.0 * noise.bound) == 1.0
    with pytest.raises(ValueError, match="delta = 0 is not reachable"):
        minimal_scale(noise, epsilon=1.0, delta=0.0)


# ------------------------------------------------------------------------------------------------------
# Peers: their known failures, next to our answer at the same point
# ------------------------------------------------------------------------------------------------------
def test_peer_autodp_analytic_gaussian():
    pytest.importorskip("autodp", reason="autodp not importable")
    # autodp.privacy_calibrator has a circular import unless its banks are imported first
    pytest.importorskip("autodp.rdp_bank", reason="autodp not importable")
    pytest.importorskip("autodp.dp_bank", reason="autodp not importable")
    calib = pytest.importorskip("autodp.privacy_calibrator", reason="autodp not importable")
    bad = []
    for delta in (1e-10, 1e-12, 1e-16, 1e-20):
        eps = 1.0
        exact = R.minimal_scale(("Gaussian",), eps, delta)
        peer = calib.ana_gaussian_mech(eps, delta)["sigma"]
        ours = minimal_scale(Gaussian(), epsilon=eps, delta=delta)
        with mp.workdps(30):
            peer_err = float(R.X(peer) / exact - 1)
            assert R.X(ours) >= exact and float(R.X(ours) / exact - 1) < SCALE_RTOL
        bad.append((delta, peer_err))
    # autodp stops its bisection at |delta(s) - delta| <= 1e-12 (absolute): below that it is not conservative.
    errs = dict(bad)
    assert errs[1e-10] < 0, errs  # under-noised already at delta = 1e-10
    # about 10% off below 1e-15 (the sign depends on where the bisection stops: -10% at 1e-16, +11% at 1e-20)
    assert abs(errs[1e-16]) > 0.05 and abs(errs[1e-20]) > 0.05, errs


def test_peer_pydp_gaussian_huge_epsilon():
    nm = pytest.importorskip("pydp.algorithms.numerical_mechanisms", reason="python-dp not importable")
    for eps in (700.0, 709.0, 710.0, 1000.0):
        peer = nm.GaussianMechanism(epsilon=eps, delta=1e-5, sensitivity=1.0).std
        ours = minimal_scale(Gaussian(), epsilon=eps, delta=1e-5)
        exact = R.minimal_scale(("Gaussian",), eps, 1e-5)
        with mp.workdps(30):
            assert R.X(ours) >= exact and float(R.X(ours) / exact - 1) < SCALE_RTOL
        if eps > 709.78:
            assert peer < 1e-300 < float(exact), (eps, peer)  # PyDP: sigma ~ 2e-308, i.e. no noise at all
        assert ours > 0.02


def test_peer_diffprivlib_gaussian_analytic():
    mech = pytest.importorskip("diffprivlib.mechanisms", reason="diffprivlib not importable")
    exact = R.minimal_scale(("Gaussian",), 1.0, 1e-30)
    peer = mech.GaussianAnalytic(epsilon=1.0, delta=1e-30, sensitivity=1.0)._scale
    ours = minimal_scale(Gaussian(), epsilon=1.0, delta=1e-30)
    with mp.workdps(30):
        assert abs(float(R.X(peer) / exact - 1)) > 0.2  # diffprivlib: about 26% off here
        assert R.X(ours) >= exact and float(R.X(ours) / exact - 1) < SCALE_RTOL


# ------------------------------------------------------------------------------------------------------
# Properties (hypothesis), evaluated by the library alone
# ------------------------------------------------------------------------------------------------------
_noise = st.sampled_from([Laplace(), Logistic(), Gaussian(), Subbotin(1.001), Subbotin(1.5), Subbotin(3.0),
                          Subbotin(7.0), Subbotin(20.0)])
_eps = st.floats(1e-3, 50.0)
_log_delta = st.floats(-300.0, math.log10(0.5))
_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(noise=_noise, eps=_eps, s1=st.floats(1e-3, 1e3), ratio=st.floats(1.0 + 1e-6, 10.0))
def test_profile_decreasing_in_scale(noise, eps, s1, ratio):
    assert privacy_profile(noise, epsilon=eps, scale=s1 * ratio) <= privacy_profile(noise, epsilon=eps, scale=s1)


@_settings
@given(noise=_noise, e1=_eps, ratio=st.floats(1.0 + 1e-6, 10.0), s=st.floats(1e-2, 1e2))
def test_profile_decreasing_in_epsilon(noise, e1, ratio, s):
    assert privacy_profile(noise, epsilon=e1 * ratio, scale=s) <= privacy_profile(noise, epsilon=e1, scale=s)


@_settings
@given(noise=_noise, eps=_eps, ld=_log_delta, sens=st.floats(1e-6, 1e6))
def test_scale_linear_in_sensitivity_and_private(noise, eps, ld, sens):
    delta = 10.0 ** ld
    s1 = minimal_scale(noise, epsilon=eps, delta=delta)
    sd = minimal_scale(noise, epsilon=eps, delta=delta, sensitivity=sens)
    assert sd == pytest.approx(sens * s1, rel=2 * SCALE_RTOL)  # Lemma 2
    assert privacy_profile(noise, epsilon=eps, scale=sd, sensitivity=sens) <= delta  # the condition holds at the returned scale
    assert privacy_profile(noise, epsilon=eps, scale=s1) <= delta


@_settings
@given(noise=_noise, eps=_eps, ld=_log_delta, f_eps=st.floats(1.0 + 1e-6, 4.0), f_delta=st.floats(1.0 + 1e-6, 1e3))
def test_scale_monotone_in_epsilon_and_delta(noise, eps, ld, f_eps, f_delta):
    # Monotone up to rounding: each scale is the exact minimum rounded up by at most ~1e-12 relative
    # (the documented safety margin), so two calibrations may differ from monotone by a few ulps.
    delta = 10.0 ** ld
    s = minimal_scale(noise, epsilon=eps, delta=delta)
    slack = s * (1 + 4e-15)
    assert minimal_scale(noise, epsilon=eps * f_eps, delta=delta) <= slack
    if delta * f_delta < 1:
        assert minimal_scale(noise, epsilon=eps, delta=delta * f_delta) <= slack


# ------------------------------------------------------------------------------------------------------
# Broadcasting, threads, bad input
# ------------------------------------------------------------------------------------------------------
def test_broadcasting_shapes_and_values():
    eps = np.array([[0.1], [1.0], [5.0]])
    delta = np.array([1e-3, 1e-6, 1e-12, 1e-100])
    for noise in (Gaussian(), Subbotin(3.0), Laplace()):
        out = minimal_scale(noise, epsilon=eps, delta=delta)
        assert out.shape == (3, 4)
        for i in range(3):
            for j in range(4):
                assert out[i, j] == minimal_scale(noise, epsilon=float(eps[i, 0]), delta=float(delta[j]))
        prof = privacy_profile(noise, epsilon=eps, scale=out)
        assert prof.shape == (3, 4) and np.all(prof <= delta)
        assert epsilon_for_delta(noise, delta=delta, scale=out).shape == (3, 4)
        sens = np.array([0.5, 2.0]).reshape(2, 1, 1)
        assert minimal_scale(noise, epsilon=eps, delta=delta, sensitivity=sens).shape == (2, 3, 4)
    assert isinstance(minimal_scale(Gaussian(), epsilon=1.0, delta=1e-5), float)
    assert isinstance(privacy_profile(Gaussian(), epsilon=1.0, scale=1.0), float)
    assert isinstance(epsilon_for_delta(Gaussian(), delta=1e-5, scale=1.0), float)
    assert minimal_scale(Gaussian(), epsilon=[1.0, 2.0], delta=1e-5).shape == (2,)


def test_threaded_equals_serial():
    cal = pydp_core._core.calibration
    rng = np.random.default_rng(7)
    eps = rng.uniform(0.01, 10, 3000)
    delta = 10.0 ** rng.uniform(-300, -1, 3000)
    sens = np.ones(3000)
    for noise in (Subbotin(3.0), Gaussian()):
        one, ok = cal.minimal_scale(noise.kernel, epsilon=eps, delta=delta, sensitivity=sens, threads=1)
        assert (ok == int(cal.Status.ok)).all()
        for threads in (2, 5):
            scale, status = cal.minimal_scale(noise.kernel, epsilon=eps, delta=delta, sensitivity=sens, threads=threads)
            assert np.array_equal(one, scale) and np.array_equal(ok, status)
        p1 = cal.log_privacy_profile(noise.kernel, epsilon=eps, scale=one, sensitivity=sens, threads=1)
        assert np.array_equal(p1, cal.log_privacy_profile(noise.kernel, epsilon=eps, scale=one, sensitivity=sens, threads=3))


def test_no_nan_anywhere_on_a_wide_grid():
    eps = np.array([0.0, 1e-8, 1e-3, 1.0, 50.0, 709.0, 710.0, 1e3, 1e5])[:, None]
    scale = np.geomspace(1e-6, 1e6, 25)[None, :]
    for noise in FAMILIES + [Truncated(Laplace(), 2.0), Truncated(Subbotin(3.0), 1.0)]:
        lp = log_privacy_profile(noise, epsilon=eps, scale=scale)
        assert not np.isnan(lp).any(), noise
        assert np.all(lp <= 0)
        p = privacy_profile(noise, epsilon=eps, scale=scale)
        assert np.all((p >= 0) & (p <= 1))


_PUBLIC = {
    "privacy_profile": lambda **k: privacy_profile(k.get("noise", Gaussian()), epsilon=k.get("epsilon", 1.0), scale=k.get("scale", 1.0), sensitivity=k.get("sensitivity", 1.0)),
    "log_privacy_profile": lambda **k: log_privacy_profile(k.get("noise", Gaussian()), epsilon=k.get("epsilon", 1.0), scale=k.get("scale", 1.0), sensitivity=k.get("sensitivity", 1.0)),
    "epsilon_for_delta": lambda **k: epsilon_for_delta(k.get("noise", Gaussian()), delta=k.get("delta", 1e-5), scale=k.get("scale", 1.0), sensitivity=k.get("sensitivity", 1.0)),
    "minimal_scale": lambda **k: minimal_scale(k.get("noise", Gaussian()), epsilon=k.get("epsilon", 1.0), delta=k.get("delta", 1e-5), sensitivity=k.get("sensitivity", 1.0)),
}
_ARGS = {
    "privacy_profile": ("epsilon", "scale", "sensitivity"),
    "log_privacy_profile": ("epsilon", "scale", "sensitivity"),
    "epsilon_for_delta": ("delta", "scale", "sensitivity"),
    "minimal_scale": ("epsilon", "delta", "sensitivity"),
}
_BAD_VALUES = {
    "epsilon": [(-1.0, "epsilon must be >= 0"), (np.nan, "epsilon must not be NaN"), ([1.0, -0.5], "epsilon must be >= 0")],
    "delta": [(-0.1, r"delta must lie in \[0, 1\)"), (1.0, r"delta must lie in \[0, 1\)"), (1.5, r"delta must lie in"),
              (np.nan, "delta must not be NaN"), (np.inf, "delta must lie in")],
    "scale": [(0.0, "scale must be > 0"), (-1.0, "scale must be > 0"), (np.nan, "scale must not be NaN"),
              (np.inf, "scale must be finite")],
    "sensitivity": [(0.0, "sensitivity must be > 0"), (-2.0, "sensitivity must be > 0"), (np.nan, "sensitivity must not be NaN"),
                    (np.inf, "sensitivity must be finite")],
}


@pytest.mark.parametrize("fn", list(_PUBLIC))
def test_bad_values_name_the_argument(fn):
    for arg in _ARGS[fn]:
        for value, msg in _BAD_VALUES[arg]:
            with pytest.raises(ValueError, match=msg):
                _PUBLIC[fn](**{arg: value})
        for value in ("1.0", 1 + 2j, True, None, object()):
            with pytest.raises(TypeError, match=arg):
                _PUBLIC[fn](**{arg: value})
    with pytest.raises(TypeError, match="noise must be a noise family"):
        _PUBLIC[fn](noise="gaussian")
    first, second = _ARGS[fn][0], _ARGS[fn][1]
    with pytest.raises(ValueError, match="cannot be broadcast"):
        _PUBLIC[fn](**{first: np.ones(3) * 0.5, second: np.ones(4) * 0.5})


def test_infinite_epsilon():
    with pytest.raises(ValueError, match="epsilon must be finite"):
        minimal_scale(Gaussian(), epsilon=np.inf, delta=1e-5)
    # privacy_profile accepts eps = inf (delta = 0 there) by design
    assert privacy_profile(Gaussian(), epsilon=np.inf, scale=1.0) == 0.0


@pytest.mark.parametrize("noise", [Gaussian(), Subbotin(1.001), Subbotin(3.0), Subbotin(50.0), Truncated(Laplace(), 3.0)], ids=repr)
def test_delta_zero_with_unbounded_likelihood_ratio_is_a_clear_error(noise):
    with pytest.raises(ValueError, match="delta = 0 is not reachable"):
        minimal_scale(noise, epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="delta = 0 is not reachable"):
        minimal_scale(noise, epsilon=[1.0, 2.0], delta=[1e-5, 0.0])


def test_epsilon_and_delta_zero():
    with pytest.raises(ValueError, match="epsilon = 0 with delta = 0"):
        minimal_scale(Laplace(), epsilon=0.0, delta=0.0)
    # eps = 0 with delta > 0 is fine: Remark 3, s_1(0, delta) = D / (2 log(1 / (1 - delta)))
    s = minimal_scale(Laplace(), epsilon=0.0, delta=0.1)
    exact = 1 / (-2 * mp.log1p(-R.X(0.1)))
    assert R.X(s) >= exact and abs(float(R.X(s) / exact - 1)) < SCALE_RTOL
    s = minimal_scale(Logistic(), epsilon=0.0, delta=0.1)
    exact = 1 / (2 * mp.log((1 + R.X(0.1)) / (1 - R.X(0.1))))
    assert R.X(s) >= exact and abs(float(R.X(s) / exact - 1)) < SCALE_RTOL


def test_calibration_error_is_exported():
    assert issubclass(CalibrationError, ArithmeticError)
