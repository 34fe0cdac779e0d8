"""The embedding adapters: the cost of arrays beyond numpy, and the dp-accounting / Opacus accountants
against the peers' own accountants in the same run.

- Arrays: ``Random.normal(loc)`` with a torch tensor (read and returned without a copy) against the same
  call with a numpy array; 1e6 values, one thread, best CPU time of 20.
- Accounting: epsilon at delta = 1e-5 of Poisson-subsampled Gaussian DP-SGD (q = 0.01, sigma = 1,
  1000 steps) through ``pydp_core.adapters.dp_accounting.epsilon`` (refined to width <= 1e-5) against
  dp-accounting's ``PLDAccountant`` and ``RdpAccountant``; the certified upper end is asserted to be no
  looser than dp-accounting's PLD estimate (+ 1e-5) and tighter than RDP.
- The accountant: ``PLDAccountant.get_epsilon`` for the same step composed 1e4 times against the engine's
  ``PLD.epsilon`` of that composition (the same answer; a ratio near 1) and dp-accounting's
  ``PLDAccountant``.
"""
from __future__ import annotations

import dp_accounting as dpa
import numpy as np
import torch

import pydp_core as dp
from pydp_core.accounting.pld import PLD
from pydp_core.adapters import dp_accounting as ada
from pydp_core.noise import Gaussian

EVENT = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 1000)


def test_torch_tensor_through_a_sampler(speed):
    rng = dp.Random(1, threads=1)
    # ones, not zeros: numpy's zeros are untouched calloc pages (reads hit the shared zero page), torch's
    # are written, which alone made the numpy side look 20% faster.
    loc_np = np.ones(1_000_000)
    loc_t = torch.ones(1_000_000, dtype=torch.float64)
    out = speed.benchmark.pedantic(rng.normal, args=(loc_t, 1.0), rounds=1, iterations=1)
    assert isinstance(out, torch.Tensor) and out.shape == (1_000_000,)
    ours = speed.cpu_time(lambda: rng.normal(loc_t, 1.0), repeat=20)
    base = speed.cpu_time(lambda: rng.normal(loc_np, 1.0), repeat=20)
    # A ratio near 1 means the tensor path adds no copy (reported, no goal).
    speed.ratio("normal_torch_vs_numpy", ours, base)


def _google_pld() -> float:
    acc = dpa.pld.PLDAccountant()
    acc.compose(EVENT)
    return acc.get_epsilon(1e-5)


def _google_rdp() -> float:
    acc = dpa.rdp.RdpAccountant()
    acc.compose(EVENT)
    return acc.get_epsilon(1e-5)


def test_dp_accounting_event(speed):
    iv = speed.benchmark.pedantic(ada.epsilon, args=(EVENT,), kwargs={"delta": 1e-5}, rounds=1, iterations=1)
    pld, rdp = _google_pld(), _google_rdp()
    assert iv.lower <= pld and iv.upper <= pld + 1e-5 and iv.upper < rdp
    print(f"\nDP-SGD 1000 steps: ours [{iv.lower:.7f}, {iv.upper:.7f}], dp-accounting PLD {pld:.7f}, RDP {rdp:.5f}")
    ours = speed.cpu_time(lambda: ada.epsilon(EVENT, delta=1e-5), repeat=3)
    speed.ratio("dpsgd_1000_vs_dp_accounting_pld", ours, speed.cpu_time(_google_pld, repeat=3))
    speed.ratio("dpsgd_1000_vs_dp_accounting_rdp", ours, speed.cpu_time(_google_rdp, repeat=3))


STEPS_1E4 = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 10_000)


def _accountant_1e4() -> float:
    acc = ada.PLDAccountant()
    acc.compose(STEPS_1E4)
    return acc.get_epsilon(1e-5)


def _engine_1e4() -> float:
    return float(PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=0.01).self_compose(10_000).epsilon(1e-5).upper)


def _google_pld_1e4() -> float:
    acc = dpa.pld.PLDAccountant()
    acc.compose(STEPS_1E4)
    return acc.get_epsilon(1e-5)


def test_accountant_against_its_engine(speed):
    # PLDAccountant.get_epsilon is one query of the engine (the same certified upper end): a ratio near 1.
    eps = speed.benchmark.pedantic(_accountant_1e4, rounds=1, iterations=1)
    assert eps == _engine_1e4()
    ours = speed.cpu_time(_accountant_1e4, repeat=3)
    speed.ratio("dpsgd_1e4_accountant_vs_engine", ours, speed.cpu_time(_engine_1e4, repeat=3))
    speed.ratio("dpsgd_1e4_accountant_vs_dp_accounting_pld", ours, speed.cpu_time(_google_pld_1e4, repeat=3))
