"""The sensitivity index module (Kaissis et al. 2023) against 50-digit mpmath references and the paper's claims."""
import math

import mpmath as mp
import numpy as np
import pytest

import pydp_core as pc
from pydp_core import gdp as G


def mp_delta(eps, mu):
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def mp_epsilon(mu, delta):
    """The exact epsilon by bisection on log delta at 50 digits (an independent reference)."""
    ld = mp.log(mp.mpf(delta))
    if mp_delta(0, mu) <= delta:
        return mp.mpf(0)
    f = lambda e: mp.log(mp_delta(e, mu)) - ld  # noqa: E731
    lo, hi = mp.mpf(0), mp.mpf(mu) * mp.sqrt(2 * abs(ld)) + mp.mpf(mu) ** 2 / 2 + 1
    while f(hi) > 0:
        hi *= 2
    for _ in range(400):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < mp.mpf(10) ** -35 * hi:
            break
    return hi


MUS = [0.01, 0.05, 0.3, 1.0, 2.5, 7.0, 20.0]
DELTAS = [1e-300, 1e-150, 1e-50, 1e-12, 1e-5, 1e-2, 0.2, 0.5]


@pytest.mark.parametrize("mu", MUS)
def test_epsilon_relative_error_1e10_against_mpmath(mu):
    """GDP(mu).to_approx_dp(delta): relative error <= 1e-10 for mu in [0.01, 20], delta in [1e-300, 0.5]."""
    got = G.gdp_epsilon(mu, delta=np.array(DELTAS))
    for d, e in zip(DELTAS, got):
        ref = mp_epsilon(mu, d)
        if ref == 0:
            assert e == 0.0
        else:
            assert abs(e - ref) / ref <= 1e-10, (mu, d, e, ref)
        assert pc.GDP(mu).to_approx_dp(d).epsilon == e  # scalar and vector paths agree exactly


def test_epsilon_just_below_total_variation():
    # delta just below TV = delta(0): epsilon -> 0 and delta(eps) = target is ill-conditioned (condition
    # number delta / (eps |d delta / d eps|) up to 1e15 here); the kernel solves TV - delta(eps) = TV - target
    # with TV in double-double instead, and must keep 1e-10 relative accuracy (it reaches ~1e-15).
    for mu in (0.01, 0.5, 1.3, 5.0, 8.0):
        tv = float(mp_delta(0, mu))
        for frac in (0.9, 0.999, 1 - 1e-7, 1 - 1e-10, 1 - 1e-13):
            d = tv * frac
            ref = mp_epsilon(mu, d)
            assert abs(G.gdp_epsilon(mu, delta=d) - ref) <= 1e-10 * ref, (mu, frac)
            assert mp_delta(G.gdp_epsilon(mu, delta=d), mu) <= d * (1 + 1e-15)  # conservative to rounding
        assert G.gdp_epsilon(mu, delta=tv * (1 + 1e-13)) == 0.0


def test_delta_profile_and_vectorisation():
    eps = np.array([0.0, 0.5, 3.0, 40.0])
    for mu in (0.1, 1.0, 6.0):
        got = G.gdp_delta(mu, epsilon=eps)
        for e, g in zip(eps, got):
            ref = mp_delta(e, mu)
            assert g == pytest.approx(float(ref), rel=1e-12, abs=1e-310)
    out = G.gdp_epsilon(np.array([[0.5], [1.0]]), delta=np.array([1e-5, 1e-8, 1e-3]))
    assert out.shape == (2, 3)
    assert G.gdp_delta(0.0, epsilon=1.0) == 0.0 and G.gdp_epsilon(0.0, delta=1e-5) == 0.0
    assert isinstance(G.gdp_epsilon(1.0, delta=1e-5), float)


def test_roc_auc_tradeoff():
    for psi in (0.1, 1.0, 4.0):
        for x in (1e-12, 0.01, 0.3, 0.9):
            ref = mp.ncdf(psi + mp.sqrt(2) * mp.erfinv(2 * mp.mpf(x) - 1))
            assert G.roc(x, psi) == pytest.approx(float(ref), rel=1e-12)
            tref = mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(x)) - psi)
            assert G.tradeoff(x, psi) == pytest.approx(float(tref), rel=1e-10)
            assert G.tradeoff(x, psi) == pytest.approx(1 - G.roc(x, psi), rel=1e-9, abs=1e-15)  # Lemma 5
        assert G.auc(psi) == pytest.approx(float(mp.ncdf(psi / mp.sqrt(2))), rel=1e-14)
        # AUC is the integral of the ROC curve (Lemma 3)
        area = mp.quad(lambda t: mp.ncdf(psi + mp.sqrt(2) * mp.erfinv(2 * t - 1)), [0, 0.5, 1])
        assert G.auc(psi) == pytest.approx(float(area), rel=1e-10)
    assert G.roc(0.0, 1.0) == 0.0 and G.roc(1.0, 1.0) == 1.0
    assert G.tradeoff(0.0, 1.0) == 1.0 and G.tradeoff(1.0, 1.0) == 0.0
    assert G.auc(0.0) == 0.5
    # a tiny level keeps its digits (the 1 - alpha form would lose them)
    assert G.tradeoff(1e-300, 1.0) == pytest.approx(float(mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf("1e-300")) - 1)), rel=1e-8)


def test_rdp_group_composition():
    assert G.rdp(3.0, 2.0) == 6.0
    assert np.allclose(G.rdp(np.array([2.0, 4.0]), 1.0), [1.0, 2.0])
    assert G.group_privacy(0.5, 3) == 1.5
    assert G.composition([3.0, 4.0]) == 5.0
    assert G.composition([1e200, 1e200]) == pytest.approx(math.sqrt(2) * 1e200)
    assert G.gdp_mu(sensitivity=2.0, sigma=4.0) == 0.5
    # composition in psi = GDP composition = the RDP of the sum (alpha psi^2 / 2 adds)
    psis = [0.3, 0.7, 1.1]
    assert G.rdp(5.0, G.composition(psis)) == pytest.approx(sum(G.rdp(5.0, p) for p in psis), rel=1e-14)
    assert pc.compose([pc.GDP(p) for p in psis]).mu == pytest.approx(G.composition(psis), rel=1e-15)


def _mp_dpsgd(p, sigma, T):
    s = mp.mpf(sigma)
    h = mp.exp(1 / s**2) * mp.ncdf(mp.mpf(1.5) / s) + 3 * mp.ncdf(-mp.mpf(0.5) / s) - 2
    return mp.mpf(p) * mp.sqrt(T) * mp.sqrt(2 * h)


@pytest.mark.parametrize("sigma", [0.2, 0.5, 0.7, 1.0, 1.99, 2.01, 5.0, 100.0, 1e4, 1e7])
def test_dpsgd_mu_equation_5_7(sigma):
    got = G.dpsgd_mu(0.01, sigma, 1000)
    ref = _mp_dpsgd(0.01, sigma, 1000)
    assert got == pytest.approx(float(ref), rel=1e-12)


def test_dpsgd_mu_extremes_and_bad_input():
    assert math.isinf(G.dpsgd_mu(0.5, 0.01, 10**6)) or G.dpsgd_mu(0.5, 0.01, 10**6) > 1e100
    assert G.dpsgd_mu(0.5, 0.035, 10) == pytest.approx(float(_mp_dpsgd(0.5, 0.035, 10)), rel=1e-10)
    with pytest.raises(ValueError, match="sampling_rate"):
        G.dpsgd_mu(1.5, 1.0, 10)
    with pytest.raises(ValueError, match="noise_multiplier"):
        G.dpsgd_mu(0.1, 0.0, 10)
    with pytest.raises(ValueError, match="steps"):
        G.dpsgd_mu(0.1, 1.0, 2.5)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="psi"):
        G.gdp_epsilon(-1.0, delta=1e-5)
    with pytest.raises(ValueError, match="psi"):
        G.gdp_epsilon(float("nan"), delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        G.gdp_epsilon(1.0, delta=0.0)
    with pytest.raises(ValueError, match="delta"):
        G.gdp_epsilon(1.0, delta=1.0)
    with pytest.raises(ValueError, match="alpha"):
        G.rdp(1.0, 1.0)
    with pytest.raises(ValueError, match="fpr"):
        G.roc(1.5, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        G.gdp_mu(sensitivity=1.0, sigma=0.0)
    with pytest.raises(ValueError, match="method"):
        G.rdp_epsilon(1.0, alpha=2.0, delta=1e-5, method="best")
    with pytest.raises(ValueError, match="group_size"):
        G.group_privacy(1.0, 0.5)


# ------------------------------------------------------------------------------------------------------
# Figure 6 (Section 6): psi in [0.1, 6], delta = 1e-5, alpha in (1, 64]
# ------------------------------------------------------------------------------------------------------
def test_figure_6_claims():
    psis = np.linspace(0.1, 6.0, 60)
    alphas = np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 30)[:-1], np.linspace(2.0, 64.0, 125)])
    delta = 1e-5
    P, A = np.meshgrid(psis, alphas, indexing="ij")
    exact = G.gdp_epsilon(psis, delta=delta)
    curves = {m: G.rdp_epsilon(P, alpha=A, delta=delta, method=m) for m in ("mironov", "asoodeh", "balle2020")}
    # the profile-based conversion is the tightest, at every psi and alpha
    for m, e in curves.items():
        assert (e >= exact[:, None] * (1 - 1e-13)).all(), m
    # asoodeh <= balle2020 <= mironov at every alpha
    assert (curves["asoodeh"] <= curves["balle2020"] * (1 + 1e-14)).all()
    assert (curves["balle2020"] <= curves["mironov"] * (1 + 1e-14)).all()
    # the paper's observations on the optimal order: low alpha for large psi, higher alpha for psi ~ 1
    best_alpha = A[0][np.argmin(curves["balle2020"], axis=1)]
    assert best_alpha[-1] <= 3.0 and best_alpha[np.argmin(abs(psis - 1.0))] >= 5.0
    # near psi ~ 1 the best RDP conversion nearly matches the profile; at psi = 0.1 asoodeh helps most
    i1 = np.argmin(abs(psis - 1.0))
    assert curves["asoodeh"][i1].min() / exact[i1] < 1.2
    # Asoodeh's second branch gains most at small alpha, and more the smaller psi (Figure 6B)
    small = A[0] < 2.0
    gain = (curves["balle2020"] / curves["asoodeh"])[:, small].max(axis=1)
    assert gain[0] > 10.0 and (np.diff(gain) <= 1e-12).all()


def test_cli_gaussian_epsilon(capsys):
    from pydp_core.cli import main

    assert main(["gaussian-epsilon", "--psi", "1.0", "2.0", "--delta", "1e-5"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].split("\t")[:2] == ["psi", "exact"] and len(lines) == 3
    assert float(lines[1].split("\t")[1]) == pytest.approx(G.gdp_epsilon(1.0, delta=1e-5), rel=1e-9)
    assert main(["gaussian-epsilon", "--psi", "-1"]) == 1
    assert "psi must be >= 0" in capsys.readouterr().err


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(log10_mu=st.floats(-2.0, math.log10(20.0)), log10_delta=st.floats(-300.0, math.log10(0.5)))
def test_epsilon_random_points_against_mpmath(log10_mu, log10_delta):
    mu, d = 10.0**log10_mu, 10.0**log10_delta
    ref = mp_epsilon(mu, d)
    got = G.gdp_epsilon(mu, delta=d)
    if ref == 0:
        assert got == 0.0
        return
    assert abs(got - ref) <= 1e-10 * ref


def test_the_former_module_gaussian_is_a_deprecated_alias_of_gdp():
    import pydp_core
    from pydp_core.accounting import gdp

    for old, new in (("psi", "gdp_mu"), ("epsilon", "gdp_epsilon"), ("delta", "gdp_delta"), ("roc", "roc")):
        with pytest.warns(DeprecationWarning, match="pydp_core.gaussian is deprecated: use pydp_core.accounting.gdp"):
            former = pydp_core.gaussian
        with pytest.warns(DeprecationWarning, match=f"gaussian.{old} is deprecated: use pydp_core.accounting.gdp.{new}"):
            assert getattr(former, old) is getattr(gdp, new)
    with pytest.warns(DeprecationWarning):
        from pydp_core.accounting.gaussian import epsilon
    assert epsilon is gdp.gdp_epsilon
    with pytest.warns(DeprecationWarning):
        assert pydp_core.accounting.gaussian.gaussian_sigma is pydp_core.gaussian_sigma
    with pytest.raises(AttributeError):
        pydp_core.accounting.gaussian.no_such_name  # noqa: B018
    assert "gaussian" not in pydp_core.__all__ and "gdp" in pydp_core.__all__


@pytest.mark.parametrize("old,new", [("discrete", "release"), ("etl", "io")])
def test_former_subpackage_names_warn_and_name_the_new_one(old, new):
    import importlib

    import pydp_core

    with pytest.warns(DeprecationWarning, match=f"pydp_core.{old} is deprecated: use pydp_core.{new}"):
        assert getattr(pydp_core, old) is importlib.import_module(f"pydp_core.{new}")
    assert old not in pydp_core.__all__
