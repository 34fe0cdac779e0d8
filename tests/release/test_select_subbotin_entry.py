"""``pydp_core.select_subbotin``: the continuous choice by default, the order with its lattice release plan
with ``release=True``; the former names stay callable."""
from __future__ import annotations

import numpy as np
import pytest

import pydp_core as dp
from pydp_core import calibration, release

ARGS = dict(epsilon=1.0, delta=1e-6, dimension=3, linf_sensitivity=0.01)


def test_default_is_the_continuous_choice():
    a = dp.select_subbotin(**ARGS, orders=[1.0, 2.0, 3.0])
    b = calibration.select_subbotin(**ARGS, orders=[1.0, 2.0, 3.0])
    assert isinstance(a, calibration.SubbotinChoice) and a == b


def test_release_true_returns_the_order_and_its_plan():
    c = dp.select_subbotin(**ARGS, orders=[1.0, 1.5, 2.0], release=True, releases=2)
    assert isinstance(c, release.SubbotinReleaseChoice)
    assert c.order in c.lattice_rmse and c.rmse == min(c.lattice_rmse.values())
    assert c.plan.dimension == 3 and c.plan.releases == 2 and c.plan.delta_achieved <= 1e-6
    assert c.plan.r == c.order
    same = release.select_subbotin_release(**ARGS, orders=[1.0, 1.5, 2.0], releases=2)
    assert (same.order, same.rmse) == (c.order, c.rmse)
    y = c.plan.release(np.zeros((2, 3)), rng=dp.Random(1), simulation=True)
    assert y.shape == (2, 3)


def test_bad_input_names_the_argument():
    with pytest.raises(TypeError, match="release"):
        dp.select_subbotin(**ARGS, release="yes")
    with pytest.raises(ValueError, match="releases"):
        dp.select_subbotin(**ARGS, releases=2)
    with pytest.raises(ValueError, match="orders"):
        dp.select_subbotin(**ARGS, orders=[], release=True)
