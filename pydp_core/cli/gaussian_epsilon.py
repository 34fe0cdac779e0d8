"""``pydp-core gaussian-epsilon``: the exact epsilon(delta) of the Gaussian mechanism by its sensitivity index."""
from __future__ import annotations

import argparse

HELP = "exact epsilon(delta) of the Gaussian mechanism by psi, and the RDP routes"


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``gaussian-epsilon``."""
    p.add_argument("--psi", type=float, nargs="+", required=True, help="sensitivity index(es) D / sigma")
    p.add_argument("--delta", type=float, default=1e-5, help="target delta in (0, 1) (default 1e-5)")


def run(args: argparse.Namespace) -> int:
    """Print the table of epsilons by psi."""
    from ..accounting import GDP, gdp

    print("psi\texact\tmironov\tasoodeh\tballe2020\tauc")
    for psi in args.psi:
        exact = gdp.gdp_epsilon(psi, delta=args.delta)
        curve = GDP(psi).to_rdp_curve()
        routes = [curve.best_alpha(args.delta, m)[0] for m in ("mironov", "asoodeh", "balle2020")]
        print(f"{psi:g}\t{exact:.10g}\t" + "\t".join(f"{c:.10g}" for c in routes) + f"\t{gdp.auc(psi):.10g}")
    return 0
