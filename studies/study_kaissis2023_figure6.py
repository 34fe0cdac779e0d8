"""Kaissis et al. 2023, Figure 6: converting the Gaussian mechanism's psi to (eps, delta = 1e-5)-DP.

Four strategies: the exact privacy profile (Corollary 14), and (alpha, alpha psi^2/2)-RDP followed by
Mironov's (Corollary 11), Asoodeh et al.'s (Corollary 12) or Balle et al.'s (Corollary 13) conversion,
for psi in [0.1, 6] and alpha in (1, 64]. The table has, per psi: the exact epsilon; each RDP method at
alpha = 2 and alpha = 6 (the orders of the paper's panels A and B); and each method at its best alpha.

Run ``python studies/study_kaissis2023_figure6.py`` to write ``studies/results/figure6.csv`` (and ``figure6.png`` where
matplotlib imports); ``pytest studies/study_kaissis2023_figure6.py`` checks the paper's claims on the same table.
"""
from __future__ import annotations

import csv
import os
import sys

import numpy as np

from pydp_core import gdp as G

METHODS = ("mironov", "asoodeh", "balle2020")
DELTA = 1e-5
PSIS = np.round(np.linspace(0.1, 6.0, 60), 10)
# (1, 64]: dense near 1, then every 0.25 up to 64
ALPHAS = np.unique(np.concatenate([1.0 + np.geomspace(1e-4, 1.0, 80), np.arange(2.0, 64.0 + 1e-9, 0.25)]))


def table(psis=PSIS, alphas=ALPHAS, delta=DELTA):
    P, A = np.meshgrid(psis, alphas, indexing="ij")
    exact = G.gdp_epsilon(psis, delta=delta)
    curves = {m: G.rdp_epsilon(P, alpha=A, delta=delta, method=m) for m in METHODS}
    rows = []
    for i, psi in enumerate(psis):
        row = {"psi": float(psi), "eps_profile": float(exact[i])}
        for m in METHODS:
            c = curves[m][i]
            j = int(np.argmin(c))
            row[f"eps_{m}_alpha2"] = float(c[np.searchsorted(alphas, 2.0)])
            row[f"eps_{m}_alpha6"] = float(c[np.searchsorted(alphas, 6.0)])
            row[f"eps_{m}_best"] = float(c[j])
            row[f"alpha_{m}_best"] = float(alphas[j])
        rows.append(row)
    return rows, exact, curves


def check_claims(rows, exact, curves):
    """The paper's claims, on every (psi, alpha) of the table."""
    for m in METHODS:
        assert (curves[m] >= exact[:, None] * (1 - 1e-13)).all(), f"{m} beat the exact profile"
    assert (curves["asoodeh"] <= curves["balle2020"] * (1 + 1e-14)).all()
    assert (curves["balle2020"] <= curves["mironov"] * (1 + 1e-14)).all()
    for r in rows:
        assert r["eps_profile"] <= min(r[f"eps_{m}_best"] for m in METHODS)


def write_csv(rows, path):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: f"{v:.12g}" for k, v in r.items()})


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    psi = [r["psi"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    for ax, key, title in zip(axes, ("alpha2", "alpha6", "best"), ("alpha = 2 (panel A)", "alpha = 6 (panel B)", "best alpha in (1, 64]")):
        ax.plot(psi, [r["eps_profile"] for r in rows], "k-", lw=2, label="privacy profile (exact)")
        for m, style in zip(METHODS, ("C0--", "C1-.", "C2:")):
            ax.plot(psi, [r[f"eps_{m}_{key}"] for r in rows], style, lw=1.5, label=f"RDP, {m}")
        ax.set_title(title)
        ax.set_xlabel("psi = sensitivity / sigma")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("epsilon at delta = 1e-5")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def test_figure6(benchmark, tmp_path):
    rows, exact, curves = benchmark(table)
    check_claims(rows, exact, curves)
    write_csv(rows, tmp_path / "figure6.csv")
    assert len(rows) == PSIS.size
    # the optimal order falls as psi grows (the paper: low alpha for large psi, higher alpha near psi = 1)
    best = np.array([r["alpha_balle2020_best"] for r in rows])
    assert best[-1] <= 3.0 and best[np.argmin(abs(PSIS - 1.0))] >= 5.0


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    os.makedirs(out, exist_ok=True)
    rows, exact, curves = table()
    check_claims(rows, exact, curves)
    write_csv(rows, os.path.join(out, "figure6.csv"))
    made = plot(rows, os.path.join(out, "figure6.png"))
    print(f"wrote {out}/figure6.csv" + (" and figure6.png" if made else " (matplotlib missing: no PNG)"), file=sys.stderr)
    for r in rows[:: len(rows) // 6] + [rows[-1]]:
        print(
            f"psi={r['psi']:.2f} exact={r['eps_profile']:.4f} "
            + " ".join(f"{m}={r[f'eps_{m}_best']:.4f}@{r[f'alpha_{m}_best']:g}" for m in METHODS)
        )
