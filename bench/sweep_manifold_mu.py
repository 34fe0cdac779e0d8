"""Cost and tightness of the certified ``manifolds.gdp_mu`` across regimes: S^2, S^3, H^2, H^3 x sigma in
{0.003, 0.03, 0.3, 1, 3} (H^d to 1) x D in {1e-6, 0.01, 0.5, 2, 3.1}. For each case: the certified mu, its
inflation over the search's estimate, and the CPU time of the certified call. Exits non-zero if any
case raises.

Run: ``PYTHONPATH=. python3 bench/sweep_manifold_mu.py`` (about 10 minutes on one core).
"""
from __future__ import annotations

import sys
import time

from pydp_core import manifolds as M
from pydp_core.manifolds import mu as P


def main() -> int:
    failures = cases = 0
    for manifold in (M.Sphere(2), M.Sphere(3), M.Hyperbolic(2), M.Hyperbolic(3)):
        for sigma in (0.003, 0.03, 0.3, 1.0, 3.0):
            if isinstance(manifold, M.Hyperbolic) and sigma > 1.0:
                continue
            for D in (1e-6, 0.01, 0.5, 2.0, 3.1):
                cases += 1
                start = time.process_time()
                try:
                    mu = M.gdp_mu(manifold, sigma=sigma, sensitivity=D)
                except ArithmeticError as exc:
                    failures += 1
                    print(f"{manifold!r} sigma={sigma} D={D}: {exc}", flush=True)
                    continue
                spent = time.process_time() - start
                est = P._mu_exact(manifold, sigma, D, certify=False)
                print(f"{manifold!r} sigma={sigma} D={D}: mu {mu:.12g}, inflation {mu / est - 1:.2e}, {spent:.2f} s",
                      flush=True)
    print(f"{cases} cases, {failures} not certified")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
