"""``pydp-core profile``: privacy curves of mechanisms, as a table, a plot or a CSV.

Two modes:

- one mechanism (``pydp-core profile NOISE --scale S``): the exact privacy profile delta(epsilon) of
  Vinterbo's Lemma 1, printed as a table, or plotted with ``--png FILE``;
- several mechanisms and compositions (any of ``--mechanism``, ``--compose``, ``--curves``, ``--out``,
  ``--csv``): the certified privacy profile, trade-off function and ROC curve of each mechanism (the
  positional NOISE one and every ``--mechanism SPEC``), each at every ``--compose K``, overlaid in one
  figure with their certified bands filled between the lower and upper bounds
  (:func:`pydp_core.accounting.curves.privacy_curves`, computed from privacy-loss distributions). The
  figure goes to ``--out FILE`` (.png, .svg or .pdf, needs matplotlib: the ``plot`` extra), the curves to
  ``--csv FILE`` (columns mechanism, compose, curve, x, lower, upper), or to stdout when neither is given.

A SPEC is ``NAME`` or ``NAME:key=value,...``: ``gaussian``, ``laplace``, ``logistic``, ``subbotin`` with
keys ``scale`` (required), ``sensitivity``, ``sampling_rate`` (Poisson, add/remove neighbours) and ``r``
(Subbotin); ``gdp:mu=M``; ``approx_dp:epsilon=E,delta=D``; ``randomized_response:epsilon=E``.
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from typing import Any

from ._args import add_noise_args, analysed, finite_float, fmt, positive_int

HELP = ("print or plot the privacy profile of a mechanism; with --mechanism/--compose, overlay the certified "
        "profile, trade-off and ROC bands of several mechanisms and compositions")

CURVES = ("profile", "tradeoff", "roc")
_FORMATS = (".png", ".svg", ".pdf")
_FLOOR = {"profile": 1e-10, "tradeoff": 0.0, "roc": 1e-6}  # lower end of each panel's y axis
_NOISE = ("gaussian", "laplace", "logistic", "subbotin")
_OTHER = ("gdp", "approx_dp", "randomized_response")


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``profile``."""
    add_noise_args(p, optional=True)
    p.add_argument("--eps-max", type=finite_float, default=None, help="largest epsilon (default: auto)")
    p.add_argument("--points", type=positive_int, default=None,
                   help="number of epsilon (and alpha) values (default 21 for the table, 200 for the curves)")
    p.add_argument("--png", metavar="FILE", help="write a plot of delta(epsilon) (log scale) to FILE (needs matplotlib)")
    g = p.add_argument_group("several mechanisms: certified bands from privacy-loss distributions")
    g.add_argument("-m", "--mechanism", action="append", metavar="SPEC",
                   help="a mechanism to overlay, e.g. gaussian:scale=2 or subbotin:r=1.5,scale=1 (repeatable)")
    g.add_argument("--compose", type=positive_int, nargs="+", metavar="K",
                   help="overlay the K-fold composition of every mechanism (several K allowed; default 1)")
    g.add_argument("--curves", nargs="+", choices=CURVES, help="panels of the figure (default: all three)")
    g.add_argument("--out", metavar="FILE", help="write the figure to FILE (.png, .svg or .pdf; the 'plot' extra)")
    g.add_argument("--csv", metavar="FILE", help="write the curves and their certified bounds to FILE")


def run(args: argparse.Namespace) -> int:
    """Print the table or write the plot (one mechanism), or the overlaid curves (several)."""
    if any(v is not None for v in (args.mechanism, args.compose, args.curves, args.out, args.csv)):
        return _overlay(args)
    if args.noise is None:
        raise ValueError("give a NOISE family, or --mechanism SPEC (see pydp-core profile --help)")
    return _single(args)


# ----- several mechanisms -----------------------------------------------------------------------------------
def parse_spec(spec: str) -> dict:
    """The mechanism entry (the ``pydp-core compose`` format) that a ``--mechanism`` SPEC names."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    where = f"--mechanism {spec!r}"
    if name not in _NOISE + _OTHER:
        raise ValueError(f"{where}: unknown mechanism {name!r}; one of {', '.join(_NOISE + _OTHER)}")
    values: dict[str, float] = {}
    for part in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, text = part.partition("=")
        if not eq:
            raise ValueError(f"{where}: expected key=value, got {part!r}")
        try:
            values[key.strip()] = float(text)
        except ValueError:
            raise ValueError(f"{where}: {key.strip()} is not a number: {text!r}") from None
    if name in _NOISE:
        return {"noise": name, **values}
    if name == "gdp":
        if set(values) != {"mu"}:
            raise ValueError(f"{where}: gdp takes exactly one key, mu")
        return {"gdp": values["mu"]}
    return {name: values}


def _mechanisms(args: argparse.Namespace) -> list[tuple[str, Any]]:
    from ..accounting.pld import PLD
    from .compose import entry

    out = []
    if args.noise is not None:
        fam, sens, scale = analysed(args)
        out.append((f"{fam!r}, scale {scale:.4g}, sensitivity {sens:g}", PLD.from_noise(fam, scale=scale, sensitivity=sens)))
    for spec in args.mechanism or []:
        out.append((spec, entry(parse_spec(spec), f"--mechanism {spec!r}")))
    return out


def _overlay(args: argparse.Namespace) -> int:
    import numpy as np

    from ..accounting.curves import privacy_curves

    if args.png:
        raise ValueError("--png plots the exact profile of one mechanism; with several, use --out FILE")
    if args.out is not None and os.path.splitext(args.out)[1].lower() not in _FORMATS:
        raise ValueError(f"--out must end in {', '.join(_FORMATS)}, got {args.out!r}")
    points = 200 if args.points is None else args.points
    if points < 2:
        raise ValueError(f"--points must be >= 2 for curves, got {points}")
    if args.eps_max is not None and not args.eps_max > 0:
        raise ValueError(f"--eps-max must be > 0, got {args.eps_max}")
    plt = _pyplot() if args.out is not None else None  # fail before the computation if matplotlib is missing
    mechs = _mechanisms(args)
    runs = [(label, k, pld if k == 1 else pld.self_compose(k)) for label, pld in mechs for k in (args.compose or [1])]
    eps_max = args.eps_max
    if eps_max is None:
        ends = [float(pld.epsilon(1e-9).upper) for _, _, pld in runs]
        finite = [e for e in ends if np.isfinite(e) and e > 0]
        eps_max = max(finite) if finite else 10.0
    eps = np.linspace(0.0, eps_max, points)
    alpha = np.unique(np.concatenate([np.linspace(0.0, 1.0, points), np.geomspace(_FLOOR["roc"], 0.1, points // 2)]))
    curves = [(label, k, privacy_curves(pld, epsilon=eps, alpha=alpha)) for label, k, pld in runs]
    panels = list(dict.fromkeys(args.curves or CURVES))
    if args.csv is not None:
        from .._files import atomic_output

        with atomic_output(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            _write_csv(fh, curves, panels)
        print(f"wrote {args.csv}")
    if args.out is not None:
        _plot(plt, curves, panels, args.out)
        print(f"wrote {args.out}")
    if args.csv is None and args.out is None:
        buf = io.StringIO()
        _write_csv(buf, curves, panels)
        sys.stdout.write(buf.getvalue())
    return 0


def _series(c: Any, panel: str) -> tuple[Any, Any]:
    """(x, Interval) of one panel."""
    return {"profile": (c.epsilon, c.delta), "tradeoff": (c.alpha, c.beta), "roc": (c.alpha, c.power)}[panel]


def _write_csv(fh: Any, curves: list, panels: list[str]) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["mechanism", "compose", "curve", "x", "lower", "upper"])
    for label, k, c in curves:
        for panel in panels:
            x, iv = _series(c, panel)
            for xi, lo, up in zip(x, iv.lower, iv.upper):
                w.writerow([label, k, panel, repr(float(xi)), repr(float(lo)), repr(float(up))])


def _pyplot() -> Any:
    from .._validation import require_extra

    (matplotlib,) = require_extra("plot", "matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plot(plt: Any, curves: list, panels: list[str], path: str) -> None:
    import numpy as np

    from .._files import atomic_output

    titles = {"profile": ("epsilon", "delta(epsilon)", "privacy profile"),
              "tradeoff": ("type I error alpha", "type II error beta(alpha)", "trade-off function"),
              "roc": ("false-positive rate", "true-positive rate", "ROC of the best attack")}
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    colours = plt.get_cmap("tab10")
    labels = list(dict.fromkeys(label for label, _, _ in curves))
    ks = list(dict.fromkeys(k for _, k, _ in curves))
    styles = ("-", "--", "-.", ":")
    for ax, panel in zip(axes[0], panels):
        # Log axes show values down to FLOOR; the bands are drawn from max(lower, FLOOR) (display only).
        floor = _FLOOR[panel]
        for label, k, c in curves:
            x, iv = _series(c, panel)
            colour, style = colours(labels.index(label) % 10), styles[ks.index(k) % len(styles)]
            name = label if k == 1 else f"{label} (x{k})"
            ax.fill_between(x, np.maximum(iv.lower, floor), np.maximum(iv.upper, floor), color=colour, alpha=0.3, lw=0)
            ax.plot(x, iv.upper, color=colour, lw=1.3, ls=style, label=name)
        xlabel, ylabel, title = titles[panel]
        if panel == "profile":
            ax.set_yscale("log", nonpositive="mask")
            ax.set_ylim(bottom=floor)
        elif panel == "tradeoff":
            ax.plot([0, 1], [1, 0], color="grey", ls="--", lw=0.8, label="no leakage")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
        else:
            ax.plot([floor, 1], [floor, 1], color="grey", ls="--", lw=0.8, label="no leakage")
            ax.set_xscale("log", nonpositive="mask")
            ax.set_yscale("log", nonpositive="mask")
            ax.set_xlim(floor, 1)
            ax.set_ylim(floor, 1.5)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} (bands: certified bounds)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fmt_name = os.path.splitext(path)[1].lower().lstrip(".")
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format=fmt_name, dpi=120)
    plt.close(fig)


# ----- one mechanism ----------------------------------------------------------------------------------------
def _single(args: argparse.Namespace) -> int:
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
    eps = np.linspace(0.0, eps_max, 21 if args.points is None else args.points)
    log_delta = np.asarray(log_privacy_profile(fam, epsilon=eps, sensitivity=sens, scale=scale), dtype=float)
    delta = np.asarray(privacy_profile(fam, epsilon=eps, sensitivity=sens, scale=scale), dtype=float)
    if args.png:
        from .._files import atomic_output

        plt = _pyplot()
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
