"""Random allocation figure: the certified epsilon interval of one pass and its CPU time.

``python bench/sweep_random_allocation.py [--peer]`` prints, for t in {1e3, 1e4, 1e5}, k in {1, 4, 16},
sigma in {0.5, 1, 3} and delta in {1e-5, 1e-10}, the interval [lower, upper] of
``PLD.random_allocation(Gaussian(), scale=sigma, steps=t, participations=k).epsilon(delta)``, its width
and the CPU time of the first query (building the laws included; the second delta reuses them). With
``--peer`` it also times pld-accounting 2.0's ``gaussian_allocation_epsilon_range`` (its default
accuracy) on the t = 1e3 rows. With ``--calibrate`` it times ``PLD.calibrate_random_allocation`` instead
(epsilon = 1, the same t, k and delta; CPU time, the bracket on the minimal scale and its relative width).
With ``--discrete`` it prints the discrete Gaussian's interval at t = 1e4, k = 4, delta = 1e-5 for sigma in
{0.5, 0.75, 1, 2, 3}, beside the continuous Gaussian's at the same sigma, with the CPU time of each first query.
"""
from __future__ import annotations

import sys
import time
import warnings

from pydp_core.accounting.pld import PLD
from pydp_core.noise import Gaussian


def main(peer: bool) -> None:
    for t in (1000, 10000, 100000):
        for k in (1, 4, 16):
            for sigma in (0.5, 1.0, 3.0):
                pld = PLD.random_allocation(Gaussian(), scale=sigma, steps=t, participations=k)
                for delta in (1e-5, 1e-10):
                    t0 = time.process_time()
                    iv = pld.epsilon(delta)
                    cpu = time.process_time() - t0
                    line = (f"t={t:6d} k={k:2d} sigma={sigma:3.1f} delta={delta:.0e} eps=[{iv.lower:.6f}, "
                            f"{iv.upper:.6f}] width={iv.upper - iv.lower:.1e} cpu={cpu:.2f}s")
                    if peer and t == 1000:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            from PLD_accounting import gaussian_allocation_epsilon_range
                        t0 = time.process_time()
                        up, lo = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=t,
                                                                   num_selected=k)
                        line += f" | pld-accounting [{lo:.6f}, {up:.6f}] cpu={time.process_time() - t0:.1f}s"
                    print(line, flush=True)


def calibrate() -> None:
    for t in (1000, 10000, 100000):
        for k in (1, 4, 16):
            for delta in (1e-5, 1e-10):
                t0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # k > 1: the bracket is wide
                    c = PLD.calibrate_random_allocation(Gaussian(), epsilon=1.0, delta=delta, steps=t,
                                                        participations=k, certificate=True)
                cpu = time.process_time() - t0
                lo, hi = c.scale_bounds
                print(f"t={t:6d} k={k:2d} delta={delta:.0e} sigma={hi:.6f} bracket=[{lo:.6f}, {hi:.6f}] "
                      f"rel={hi / lo - 1 if lo > 0 else float('inf'):.1e} cpu={cpu:.2f}s", flush=True)


def discrete() -> None:
    t, k, delta = 10000, 4, 1e-5
    for sigma in (0.5, 0.75, 1.0, 2.0, 3.0):
        line = f"t={t} k={k} sigma={sigma:4.2f} delta={delta:.0e}"
        for name, noise in (("discrete_gaussian", "discrete_gaussian"), ("gaussian", Gaussian())):
            t0 = time.process_time()
            iv = PLD.random_allocation(noise, scale=sigma, steps=t, participations=k).epsilon(delta)
            line += f" | {name} eps=[{iv.lower:.6f}, {iv.upper:.6f}] cpu={time.process_time() - t0:.2f}s"
        print(line, flush=True)


if __name__ == "__main__":
    if "--discrete" in sys.argv:
        discrete()
    elif "--calibrate" in sys.argv:
        calibrate()
    else:
        main("--peer" in sys.argv)
