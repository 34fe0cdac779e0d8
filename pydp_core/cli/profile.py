"""``pydp-core profile``: the privacy profile delta(epsilon) of a mechanism, as a table or a plot."""
from __future__ import annotations

import argparse

from ._args import add_noise_args, analysed, finite_float, fmt, positive_int

HELP = "print the privacy profile delta(epsilon) of a mechanism, or plot it to a PNG"


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``profile``."""
    add_noise_args(p)
    p.add_argument("--eps-max", type=finite_float, default=None, help="largest epsilon of the table (default: auto)")
    p.add_argument("--points", type=positive_int, default=21, help="number of epsilon values (default 21)")
    p.add_argument("--png", metavar="FILE", help="write a plot of delta(epsilon) (log scale) to FILE (needs matplotlib)")


def run(args: argparse.Namespace) -> int:
    """Print the delta(epsilon) table, or write the plot."""
    import numpy as np

    from ..calibration import epsilon_for_delta, log_privacy_profile, privacy_profile

    fam, sens, scale = analysed(args)
    eps_max = args.eps_max
    if eps_max is None:
        eps_max = float(epsilon_for_delta(fam, delta=1e-12, sensitivity=sens, scale=scale))
        if not np.isfinite(eps_max) or eps_max <= 0:
            eps_max = 10.0
    if not eps_max > 0:
        raise ValueError(f"--eps-max must be > 0, got {eps_max}")
    eps = np.linspace(0.0, eps_max, args.points)
    log_delta = np.asarray(log_privacy_profile(fam, epsilon=eps, sensitivity=sens, scale=scale), dtype=float)
    delta = np.asarray(privacy_profile(fam, epsilon=eps, sensitivity=sens, scale=scale), dtype=float)
    if args.png:
        try:
            import matplotlib
        except ImportError:
            raise OSError("--png needs matplotlib: pip install 'pydp_core[plot]'") from None
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..io.atomic import atomic_output

        fine = np.linspace(0.0, eps_max, 400)
        ld = np.asarray(log_privacy_profile(fam, epsilon=fine, sensitivity=sens, scale=scale), dtype=float)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(fine, ld / np.log(10.0))
        ax.set_xlabel("epsilon")
        ax.set_ylabel("log10 delta(epsilon)")
        ax.set_title(f"{fam!r}, scale {scale:.4g}, sensitivity {sens:g}")
        ax.grid(True, alpha=0.3)
        with atomic_output(args.png) as tmp:
            fig.savefig(tmp, format="png", dpi=120)
        plt.close(fig)
        print(f"wrote {args.png}")
        return 0
    print(f"# {fam!r}, scale {fmt(scale)}, sensitivity {fmt(sens)}")
    print(f"{'epsilon':>24s} {'delta':>24s}")
    for e, d, ld in zip(eps, delta, log_delta):
        # below the double range the exact log delta is printed as a power of ten
        text = f"{d:.6e}" if d > 0 else (f"1e{ld / np.log(10.0):.2f}" if np.isfinite(ld) else "0")
        # the epsilon is printed exactly (shortest round-trip form): a rounded label could show a pure-DP
        # mechanism with delta > 0 at its own epsilon
        print(f"{float(e)!r:>24s} {text:>24s}")
    return 0
