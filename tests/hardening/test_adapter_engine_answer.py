"""dp-accounting's PLDAccountant answers with the engine's own certified interval on its automatic grid
(one query, as PLD.epsilon / PLD.delta), and refines the grid only when asked to (tolerance, rtol)."""
import pytest

dpa = pytest.importorskip("dp_accounting")
ad = pytest.importorskip("pydp_core.adapters.dp_accounting")

DELTA = 1e-5
STEP = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0))


def test_get_epsilon_and_get_delta_are_the_engine_answers():
    ev = dpa.SelfComposedDpEvent(STEP, 10_000)
    acc = ad.PLDAccountant()
    acc.compose(ev)
    pld = ad.to_pld(ev)
    eps = acc.get_epsilon(DELTA)
    assert eps == pld.epsilon(DELTA).upper
    assert acc.get_delta(eps) == pld.delta(eps).upper
    # Refined on request, to the module functions' answers (contained in the engine's interval).
    refining = ad.PLDAccountant(tolerance=1e-5, rtol=1e-3)
    refining.compose(ev)
    refined = ad.epsilon(ev, delta=DELTA, tolerance=1e-5)
    assert refining.get_epsilon(DELTA) == refined.upper
    assert pld.epsilon(DELTA).lower <= refined.upper <= eps
    assert refining.get_delta(eps) == ad.delta(ev, epsilon=eps, rtol=1e-3).upper


def test_events_composed_one_by_one_are_the_composed_tree():
    # No neutral element is composed in: the accountant's PLD is the tree's, term by term.
    first, second = dpa.SelfComposedDpEvent(STEP, 300), dpa.GaussianDpEvent(5.0)
    acc = ad.PLDAccountant()
    acc.compose(first)
    acc.compose(second)
    tree = ad.to_pld(dpa.ComposedDpEvent([first, second]))
    assert acc.get_epsilon(DELTA) == tree.epsilon(DELTA).upper


def test_an_empty_accountant_spends_nothing():
    acc = ad.PLDAccountant()
    assert acc.get_epsilon(DELTA) == 0.0 and acc.get_delta(0.0) == 0.0
