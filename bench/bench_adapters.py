"""The embedding adapters: the cost of arrays beyond numpy, and the dp-accounting / Opacus accountants
against the peers' own accountants in the same run.

- Arrays: ``Random.normal(loc)`` with a torch tensor (read and returned without a copy) against the same
  call with a numpy array; 1e6 values, one thread, best CPU time of 20.
- Accounting: epsilon at delta = 1e-5 of Poisson-subsampled Gaussian DP-SGD (q = 0.01, sigma = 1,
  1000 steps) through ``pydp_core.adapters.dp_accounting.epsilon`` (refined to width <= 1e-5) against
  dp-accounting's ``PLDAccountant`` and ``RdpAccountant``; the certified upper end is asserted to be no
  looser than dp-accounting's PLD estimate (+ 1e-5) and tighter than RDP.
"""
from __future__ import annotations

import dp_accounting as dpa
import numpy as np
import torch

import pydp_core as dp
from pydp_core.adapters import dp_accounting as ada

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
