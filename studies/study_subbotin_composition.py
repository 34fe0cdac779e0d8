"""Vinterbo 2022, Section 4.1, under composition: which Subbotin order r minimises the error?

The mean of n = 500 records in an l_inf ball of width 1 in m dimensions (per-coordinate sensitivity
w = 1/500), released k times with iid Subbotin_r noise in every coordinate, under one total
(epsilon, delta). The corner of the ball is the worst neighbouring shift (docs/study-subbotin.md), so the
exact guarantee is the PLD of the one-dimensional mechanism with shift w / scale, self-composed N = m k
times; :func:`pydp_core.calibration.calibrate_box` finds the smallest scale whose certified upper
delta(epsilon) meets the target, and certified bounds on the exact minimal scale. The error reported is
the per-coordinate RMSE scale * std(X_r) (the paper's criterion, equation 5).

For k = 1 the paper's Theorem 9 calibration (l_r sensitivity m^(1/r) w paired with Subbotin_r noise) is
checked against the exact PLD: the columns theorem9_* give its scale and the certified true delta there.
A second CSV checks the paper's printed Section 4.1 choices (delta = 1e-4).

With --lattice the same calibrations are repeated for the exact lattice release
(:func:`pydp_core.release.calibrate_vector_release`: integer table noise on a power-of-two grid, certified
through the PLD of the N-fold product table law at the corner shift) and the columns lattice_* are added:
its per-coordinate noise RMSE (from the table's integers), the ratio to the continuous RMSE, its certified
delta, and whether the order is the best on the lattice too.

Outputs: studies/results/subbotin_composition.csv, subbotin_paper_check.csv and subbotin_composition.png.
The CSVs are the cache: the plot is redrawn from them unless --recompute is given (about two minutes).
Run: .venv/bin/python studies/study_subbotin_composition.py [--recompute]
"""
from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

import pydp_core as dp
from pydp_core.calibration import box_pld, calibrate_box
from pydp_core.noise import Subbotin

N_RECORDS = 500
SENSITIVITY = 1.0 / N_RECORDS  # per coordinate: records in a box of width 1
DELTA = 1e-6
EPSILONS = (1.0, 4.0)
DIMENSIONS = (1, 2, 5, 10, 50)
RELEASES = (1, 10, 100, 1000)
ORDERS = (1.0, 1.1, 1.25, 1.5, 1.75, 1.9, 2.0, 2.25, 2.5, 3.0, 4.0, 6.0, 8.0)
# The paper's Section 4.1 setting (delta = 1e-4, one release) and its order grid 1, 1.5, ..., 14.
PAPER_DELTA = 1e-4
PAPER_EPSILONS = (1.0, 0.1, 0.01)
PAPER_DIMENSIONS = (10, 100, 500, 1000, 2000)
PAPER_GRID = tuple(1.0 + 0.5 * i for i in range(27))

RESULTS = Path(__file__).resolve().parent / "results"
CSV_PATH = RESULTS / "subbotin_composition.csv"
PAPER_CSV = RESULTS / "subbotin_paper_check.csv"
PNG_PATH = RESULTS / "subbotin_composition.png"

FIELDS = ["epsilon", "delta", "m", "k", "N", "r", "scale", "scale_lower", "rmse", "rmse_lower", "value_step",
          "delta_lower", "delta_upper", "ratio_vs_gaussian", "ratio_vs_laplace", "best", "best_certified",
          "theorem9_scale", "theorem9_delta_lower", "theorem9_delta_upper", "theorem9_verdict"]
LATTICE_FIELDS = ["lattice_rmse", "lattice_vs_continuous", "lattice_delta_upper", "lattice_best"]
PAPER_FIELDS = ["epsilon", "delta", "m", "r_paper", "scale_paper", "true_delta_lower", "true_delta_upper",
                "exact_scale_same_r", "exact_scale_gaussian", "paper_mse_vs_exact_gaussian_mse", "exact_best_r",
                "exact_best_rmse", "exact_gaussian_rmse", "paper_claimed_rmse"]


def theorem9(r: float, eps: float, delta: float, m: int) -> tuple[float, object]:
    """The paper's Theorem 9 scale (l_r sensitivity m^(1/r) w) and the certified true delta(eps) there."""
    s9 = float(dp.minimal_scale(Subbotin(r), epsilon=eps, delta=delta, sensitivity=m ** (1.0 / r) * SENSITIVITY))
    return s9, box_pld(Subbotin(r), scale=s9, shifts=[SENSITIVITY], releases=m).delta(eps)


def verdict(iv, target: float) -> str:
    """'unsafe' if the certified lower delta exceeds the target, 'safe' if the upper meets it, else 'open'.

    'open' covers the exact cases (r = 2, and m = 1, where Theorem 9 is Lemma 1: the true delta equals the
    target) and those the discretisation cannot decide.
    """
    return "unsafe" if iv.lower > target else ("safe" if iv.upper <= target else "open")


def study() -> list[dict]:
    """Every (epsilon, m, k, r) row; the calibration depends on m and k only through N = m k."""
    cache: dict = {}
    rows = []
    for eps in EPSILONS:
        for m in DIMENSIONS:
            for k in RELEASES:
                n = m * k
                cells = {}
                for r in ORDERS:
                    if (eps, n, r) not in cache:
                        cache[eps, n, r] = calibrate_box(Subbotin(r), epsilon=eps, delta=DELTA, sensitivity=SENSITIVITY,
                                                         dimension=n)
                    cells[r] = cache[eps, n, r]
                rmse = {r: c.rmse for r, c in cells.items()}
                best = min(rmse, key=rmse.__getitem__)
                # Certified: the best's upper RMSE is below every other order's lower RMSE.
                certified = all(cells[best].rmse_bounds.upper < c.rmse_bounds.lower for r, c in cells.items() if r != best)
                for r, c in cells.items():
                    row = {"epsilon": eps, "delta": DELTA, "m": m, "k": k, "N": n, "r": r, "scale": c.scale,
                           "scale_lower": c.scale_bounds.lower, "rmse": c.rmse, "rmse_lower": c.rmse_bounds.lower,
                           "value_step": c.value_step, "delta_lower": c.delta_bounds.lower,
                           "delta_upper": c.delta_bounds.upper, "ratio_vs_gaussian": c.rmse / rmse[2.0],
                           "ratio_vs_laplace": c.rmse / rmse[1.0], "best": int(r == best),
                           "best_certified": int(r == best and certified),
                           "theorem9_scale": "", "theorem9_delta_lower": "", "theorem9_delta_upper": "",
                           "theorem9_verdict": ""}
                    if k == 1:
                        s9, iv = theorem9(r, eps, DELTA, m)
                        row.update(theorem9_scale=s9, theorem9_delta_lower=iv.lower, theorem9_delta_upper=iv.upper,
                                   theorem9_verdict=verdict(iv, DELTA))
                    rows.append(row)
    return rows


def lattice(rows: list[dict]) -> list[dict]:
    """The rows with the lattice release's RMSE for every (epsilon, N, r) and its best order per (epsilon, N)."""
    import time

    from pydp_core.release import calibrate_vector_release

    cache: dict = {}
    for row in rows:
        key = (row["epsilon"], row["N"], row["r"])
        if key not in cache:
            t0 = time.process_time()
            plan = calibrate_vector_release(Subbotin(row["r"]), epsilon=row["epsilon"], delta=DELTA,
                                            sensitivity=SENSITIVITY, dimension=row["N"])
            cache[key] = (plan.noise_std, plan.delta_achieved)
            print(f"lattice eps={key[0]:g} N={key[1]} r={key[2]:g}: rmse {plan.noise_std:.6g} "
                  f"(x{plan.noise_std / row['rmse']:.5f}), {time.process_time() - t0:.1f} s CPU", flush=True)
        rmse, dup = cache[key]
        row.update(lattice_rmse=rmse, lattice_vs_continuous=rmse / row["rmse"], lattice_delta_upper=dup)
    for row in rows:
        group = [o for o in rows if o["epsilon"] == row["epsilon"] and o["N"] == row["N"]]
        row["lattice_best"] = int(row["lattice_rmse"] == min(o["lattice_rmse"] for o in group))
    return rows


def paper_check() -> list[dict]:
    """The paper's printed Section 4.1 choices, checked against the exact PLD of the corner shift."""
    rows = []
    for eps in PAPER_EPSILONS:
        for m in PAPER_DIMENSIONS:
            choice = dp.select_subbotin(epsilon=eps, delta=PAPER_DELTA, dimension=m, linf_sensitivity=SENSITIVITY,
                                        orders=PAPER_GRID)
            r = choice.order
            iv = box_pld(Subbotin(r), scale=choice.scale, shifts=[SENSITIVITY], releases=m).delta(eps)
            same = calibrate_box(Subbotin(r), epsilon=eps, delta=PAPER_DELTA, sensitivity=SENSITIVITY, dimension=m)
            gauss = calibrate_box(Subbotin(2.0), epsilon=eps, delta=PAPER_DELTA, sensitivity=SENSITIVITY, dimension=m)
            # The exact best order on the paper's grid (the per-coordinate RMSE at the exact scale).
            exact = {q: calibrate_box(Subbotin(q), epsilon=eps, delta=PAPER_DELTA, sensitivity=SENSITIVITY,
                                      dimension=m).rmse for q in PAPER_GRID}
            best = min(exact, key=exact.__getitem__)
            rows.append({"epsilon": eps, "delta": PAPER_DELTA, "m": m, "r_paper": r, "scale_paper": choice.scale,
                         "true_delta_lower": iv.lower, "true_delta_upper": iv.upper, "exact_scale_same_r": same.scale,
                         "exact_scale_gaussian": gauss.scale,
                         "paper_mse_vs_exact_gaussian_mse": choice.mse / gauss.scale ** 2, "exact_best_r": best,
                         "exact_best_rmse": exact[best], "exact_gaussian_rmse": gauss.rmse,
                         "paper_claimed_rmse": math.sqrt(choice.mse)})
    return rows


def write(rows: list[dict], fields: list[str], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for row in rows:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})


def read(path: Path) -> list[dict]:
    """The rows of a results CSV, numbers parsed (words and empty cells stay strings)."""
    def parse(v: str):
        try:
            f = float(v)
        except ValueError:
            return v
        return int(f) if f.is_integer() and "." not in v and "e" not in v else f

    with open(path, newline="") as fh:
        return [{k: parse(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def summary(rows: list[dict]) -> list[dict]:
    """One line per (epsilon, N): the best order and its RMSE against the Gaussian and the Laplace."""
    out, seen = [], set()
    for row in rows:
        if row["best"] and (row["epsilon"], row["N"]) not in seen:
            seen.add((row["epsilon"], row["N"]))
            out.append(row)
    return sorted(out, key=lambda r: (r["epsilon"], r["N"]))


def plot(rows: list[dict], paper: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = (1.0, 1.25, 1.5, 1.75, 2.0, 3.0, 4.0, 8.0)
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    for ax, eps in zip(axes[:2], EPSILONS):
        for i, r in enumerate(shown):
            pts = sorted({(row["N"], row["ratio_vs_gaussian"]) for row in rows if row["epsilon"] == eps and row["r"] == r})
            style = dict(color="black", lw=2.2) if r == 2.0 else dict(color=cmap(i / (len(shown) - 1)), lw=1.4)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=f"r = {r:g}", **style)
        best = sorted({(row["N"], row["ratio_vs_gaussian"], row["r"]) for row in rows if row["epsilon"] == eps and row["best"]})
        ax.scatter([b[0] for b in best], [b[1] for b in best], s=90, facecolors="none", edgecolors="red", zorder=5,
                   label="best order on the grid")
        if "lattice_rmse" in rows[0]:  # the lattice release's RMSE of the lattice-best order (same ratio scale)
            lat = sorted({(row["N"], row["ratio_vs_gaussian"] * row["lattice_vs_continuous"]) for row in rows
                          if row["epsilon"] == eps and row["lattice_best"]})
            ax.scatter([b[0] for b in lat], [b[1] for b in lat], marker="x", s=40, color="red", zorder=6,
                       label="lattice release, its best order")
        for n, ratio, r in best:
            ax.annotate(f"{r:g}", (n, ratio), textcoords="offset points", xytext=(0, -14), ha="center", fontsize=8,
                        color="red")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(0.25, 5.0)
        ax.set_xlabel("N = m k (dimensions x releases)")
        ax.set_ylabel("per-coordinate RMSE / Gaussian's")
        ax.set_title(f"exact calibration, total eps = {eps:g}, delta = {DELTA:g}, n = {N_RECORDS}", fontsize=11)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8, ncol=2, loc="upper right")
    ax = axes[2]
    for i, r in enumerate((1.5, 3.0, 4.0, 8.0)):
        pts = sorted({(row["m"], row["theorem9_delta_lower"]) for row in rows
                      if row["epsilon"] == 1.0 and row["r"] == r and row["k"] == 1})
        ax.plot([p[0] for p in pts], [p[1] / DELTA for p in pts], marker="o", color=cmap(i / 3), label=f"r = {r:g}, eps = 1, delta {DELTA:g}")
    for eps in PAPER_EPSILONS:
        pts = [(row["m"], row["true_delta_lower"] / PAPER_DELTA) for row in paper if row["epsilon"] == eps]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", ls="--",
                label=f"paper's chosen r, eps = {eps:g}, delta {PAPER_DELTA:g}")
    ax.axhline(1.0, color="black", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("m (one release)")
    ax.set_ylabel("certified lower bound of the true delta / target")
    ax.set_title("true delta at Theorem 9's scale (exact PLD)", fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recompute", action="store_true", help="recompute the CSVs (else redraw from them)")
    parser.add_argument("--lattice", action="store_true", help="(re)compute the lattice_* columns")
    args = parser.parse_args(argv)
    if args.recompute or not (CSV_PATH.exists() and PAPER_CSV.exists()):
        write(study(), FIELDS, CSV_PATH)
        write(paper_check(), PAPER_FIELDS, PAPER_CSV)
    rows, paper = read(CSV_PATH), read(PAPER_CSV)
    if args.lattice or "lattice_rmse" not in rows[0]:
        rows = lattice([{k: v for k, v in row.items() if k not in LATTICE_FIELDS} for row in rows])
        write(rows, FIELDS + LATTICE_FIELDS, CSV_PATH)
    plot(rows, paper, PNG_PATH)
    print(f"{'eps':>4s} {'N=mk':>6s} {'best r':>6s} {'RMSE':>10s} {'vs Gauss':>8s} {'vs Laplace':>10s} certified "
          f"{'lattice best r':>14s} {'lattice/cont':>12s}")
    for row in summary(rows):
        lat = [o for o in rows if o["epsilon"] == row["epsilon"] and o["N"] == row["N"] and o["lattice_best"]]
        print(f"{row['epsilon']:4g} {row['N']:6d} {row['r']:6g} {row['rmse']:10.4g} {row['ratio_vs_gaussian']:8.4f} "
              f"{row['ratio_vs_laplace']:10.4f} {'yes' if row['best_certified'] else 'no':>9s} "
              f"{lat[0]['r']:14g} {row['lattice_vs_continuous']:12.5f}")
    ratios = [row["lattice_vs_continuous"] for row in rows]
    print(f"lattice / continuous RMSE over all {len(rows)} rows: {min(ratios):.5f} to {max(ratios):.5f}")
    print(f"wrote {CSV_PATH}, {PAPER_CSV} and {PNG_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
