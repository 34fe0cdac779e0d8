"""``pydp-core mu``: the GDP parameter mu of the Riemannian Gaussian mechanism on a manifold."""
from __future__ import annotations

import argparse

from ._args import finite_float, fmt, positive_int

HELP = "the GDP parameter mu of the Riemannian Gaussian mechanism on a manifold"


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``mu``."""
    p.add_argument("manifold", choices=("euclidean", "circle", "sphere", "hyperbolic"))
    p.add_argument("--dim", type=positive_int, default=None, help="dimension d (euclidean, sphere, hyperbolic)")
    p.add_argument("--sigma", type=finite_float, required=True, help="Riemannian Gaussian sigma")
    p.add_argument("--sensitivity", type=finite_float, default=1.0, help="geodesic sensitivity (default 1)")
    p.add_argument("--method", choices=("exact", "monte_carlo"), default="exact")


def run(args: argparse.Namespace) -> int:
    """Print mu (with its interval for the Monte Carlo method)."""
    from ..manifolds import Circle, Euclidean, Hyperbolic, Sphere, gdp_mu

    if args.manifold == "circle":
        if args.dim not in (None, 1):
            raise ValueError("--dim does not apply to the circle (dimension 1)")
        m = Circle()
    else:
        if args.dim is None:
            raise ValueError(f"--dim is required for the {args.manifold} manifold")
        spaces = {"euclidean": Euclidean, "sphere": Sphere, "hyperbolic": Hyperbolic}
        m = spaces[args.manifold](args.dim)
    if args.method == "exact":
        print(fmt(gdp_mu(m, sensitivity=args.sensitivity, sigma=args.sigma)))
    else:
        res = gdp_mu(m, sensitivity=args.sensitivity, sigma=args.sigma, method="monte_carlo")
        lo, hi = res.confidence_interval
        print(f"{fmt(res.mu)} (stderr {fmt(res.stderr)}, 95% interval [{fmt(lo)}, {fmt(hi)}])")
    return 0
