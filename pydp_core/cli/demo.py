"""``pydp-core demo``, the main job: exact calibration of a few mechanisms, printed as a table."""
from __future__ import annotations

import argparse
import sys
from typing import TextIO

HELP = "calibrate a few mechanisms exactly and print them"


def configure(p: argparse.ArgumentParser) -> None:
    """The demo takes no arguments."""


def run(args: argparse.Namespace) -> int:
    """Print the demo on standard output."""
    write(sys.stdout)
    return 0


def write(out: TextIO) -> None:
    """Write the demo tables to ``out``."""
    from ..calibration import epsilon_for_delta, minimal_scale, privacy_profile, select_subbotin
    from ..mechanisms import GaussianMechanism, LaplaceMechanism, LogisticMechanism, SubbotinMechanism
    from ..noise import Gaussian

    eps, delta, sens = 1.0, 1e-5, 1.0
    out.write(f"Minimal noise scales for (epsilon={eps}, delta={delta}), sensitivity {sens} (Vinterbo 2022):\n")
    out.write(f"{'noise':<16}{'scale':>16}{'std. dev.':>16}{'delta at scale':>18}\n")
    mechanisms = [
        LaplaceMechanism(epsilon=eps, delta=delta, sensitivity=sens),
        LogisticMechanism(epsilon=eps, delta=delta, sensitivity=sens),
        GaussianMechanism(epsilon=eps, delta=delta, sensitivity=sens),
        SubbotinMechanism(1.5, epsilon=eps, delta=delta, sensitivity=sens),
        SubbotinMechanism(3, epsilon=eps, delta=delta, sensitivity=sens),
    ]
    for mech in mechanisms:
        fam, s = mech.noise, mech.scale
        achieved = privacy_profile(fam, epsilon=eps, sensitivity=sens, scale=s)
        out.write(f"{fam!r:<16}{s:>16.10g}{mech.std:>16.10g}{achieved:>18.6e}\n")
    out.write("\nThe Gaussian at tiny delta (exact, log space):\n")
    for d in (1e-10, 1e-50, 1e-300):
        s = minimal_scale(Gaussian(), epsilon=eps, delta=d)
        back = epsilon_for_delta(Gaussian(), delta=d, scale=s)
        out.write(f"  delta={d:<8g} sigma={s:.12g}  epsilon back from delta: {back:.12g}\n")
    orders = [1 + 0.5 * k for k in range(27)]
    choice = select_subbotin(epsilon=1.0, delta=1e-4, dimension=1000, linf_sensitivity=1 / 500, orders=orders)
    out.write(
        f"\nMean of 500 records in 1000 dimensions, eps=1, delta=1e-4: best Subbotin order r={choice.order:g}, "
        f"scale {choice.scale:.4f}, per-coordinate MSE {choice.mse:.3e}\n"
    )
