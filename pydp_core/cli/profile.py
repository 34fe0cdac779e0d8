"""``pydp-core profile``: privacy curves of mechanisms, as a table, a plot or a CSV.

Two modes:

- one mechanism (``pydp-core profile NOISE --scale S``): the exact privacy profile delta(epsilon) of
  Vinterbo's Lemma 1, printed as a table;
- curves (any of ``--mechanism``, ``--compose``, ``--curves``, ``--out``, ``--csv``): the certified privacy
  profile, trade-off function and ROC curve of each mechanism (the positional NOISE one and every
  ``--mechanism SPEC``), each at every ``--compose K`` (:func:`pydp_core.accounting.curves.privacy_curves`,
  computed from privacy-loss distributions), written to ``--csv FILE`` (columns mechanism, compose, curve,
  x, lower, upper), to stdout, or drawn by ``--out FILE``.

The figure (matplotlib: the ``plot`` extra) is made for a paper: one panel per curve, one legend shared by
the panels below them, labels from the mechanisms (``Gaussian, σ = 1, k = 10``; ``--label`` overrides
them), lines at the upper bounds, the certified band shaded where it is wide enough to be seen and a note
in the legend where it is not, and a pure-DP profile drawn down to delta = 0 at its epsilon. ``--title``,
``--size W H`` (inches), ``--style`` (a matplotlib style), ``--dpi`` and ``--format`` (png, svg, pdf;
default from the suffix of ``--out``) shape it. ``--png FILE`` is a deprecated alias of ``--out FILE``.

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
import textwrap
from typing import Any

from ._args import FAMILIES, add_noise_args, analysed, finite_float, fmt, positive_int

HELP = ("print or plot the privacy profile of a mechanism; with --mechanism/--compose, overlay the certified "
        "profile, trade-off and ROC bands of several mechanisms and compositions")

CURVES = ("profile", "tradeoff", "roc")
_FORMATS = ("png", "svg", "pdf")
# Legend names and the symbol of the scale of each noise family (the standard deviation of the Gaussian,
# b of the Laplace density exp(-|x|/b)/(2b)).
_NAMES = {"gaussian": ("Gaussian", "σ"), "laplace": ("Laplace", "b"), "logistic": ("logistic", "scale"),
          "subbotin": ("Subbotin", "scale")}
# A band narrower than this fraction of the panel's height is hidden by the line drawn over it.
_VISIBLE = 0.004
_FLOOR = {"profile": 1e-10, "tradeoff": 0.0, "roc": 1e-6}  # lower end of each panel's y axis
_NOISE = FAMILIES
_OTHER = ("gdp", "approx_dp", "randomized_response")


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``profile``."""
    add_noise_args(p, optional=True)
    p.add_argument("--eps-max", type=finite_float, default=None, help="largest epsilon (default: auto)")
    p.add_argument("--points", type=positive_int, default=None,
                   help="number of epsilon (and alpha) values (default 21 for the table, 200 for the curves)")
    g = p.add_argument_group("several mechanisms: certified bands from privacy-loss distributions")
    g.add_argument("-m", "--mechanism", action="append", metavar="SPEC",
                   help="a mechanism to overlay, e.g. gaussian:scale=2 or subbotin:r=1.5,scale=1 (repeatable)")
    g.add_argument("--compose", type=positive_int, nargs="+", metavar="K",
                   help="overlay the K-fold composition of every mechanism (several K allowed; default 1)")
    g.add_argument("--curves", nargs="+", choices=CURVES, help="panels of the figure (default: all three)")
    g.add_argument("--csv", metavar="FILE", help="write the curves and their certified bounds to FILE")
    f = p.add_argument_group("the figure (needs matplotlib: the 'plot' extra)")
    f.add_argument("--out", metavar="FILE", help="write the figure to FILE (.png, .svg or .pdf)")
    # The one-mechanism plot flag of earlier versions: the same figure as --out, with a warning.
    f.add_argument("--png", metavar="FILE", help=argparse.SUPPRESS)
    f.add_argument("--format", choices=_FORMATS, help="format of --out (default: from its suffix)")
    f.add_argument("--label", action="append", metavar="TEXT",
                   help="legend label of a mechanism, one per mechanism in order (NOISE first, then each "
                        "--mechanism); default: its name and parameters, e.g. 'Gaussian, σ = 1'")
    f.add_argument("--title", metavar="TEXT", help="title above the panels (default: none)")
    f.add_argument("--size", nargs=2, type=finite_float, metavar=("WIDTH", "HEIGHT"),
                   help="figure size in inches (default: 3.6 x 3.4 per panel)")
    f.add_argument("--style", metavar="NAME",
                   help="a matplotlib style (e.g. seaborn-v0_8-paper, grayscale) or a .mplstyle file")
    f.add_argument("--dpi", type=positive_int, default=200, help="resolution of a PNG (default 200)")


def run(args: argparse.Namespace) -> int:
    """Print the table, or compute the curves of several mechanisms and write their figure or CSV."""
    if args.png is not None:
        if args.out is not None:
            raise ValueError("give --out FILE only (--png is its deprecated alias)")
        print("pydp-core profile: warning: --png is deprecated; use --out FILE (.png, .svg or .pdf)", file=sys.stderr)
        args.out = args.png
    if args.out is None:
        for name in ("format", "label", "title", "size", "style"):
            if getattr(args, name) is not None:
                raise ValueError(f"--{name} applies to a figure: give --out FILE")
    if any(v is not None for v in (args.mechanism, args.compose, args.curves, args.out, args.csv)):
        return _overlay(args)
    if args.noise is None:
        raise ValueError("give a NOISE family, or --mechanism SPEC (see pydp-core profile --help)")
    return _single(args)


# ----- several mechanisms -----------------------------------------------------------------------------------
def parse_spec(spec: str) -> dict[Any, Any]:
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


def _num(v: Any) -> str:
    return f"{float(v):.4g}"


def mechanism_label(item: dict[Any, Any]) -> str:
    """The legend label of a mechanism entry, in the notation of the papers: ``Gaussian, σ = 1``,
    ``Laplace, b = 2, Δ = 0.5, q = 0.01``, ``GDP, μ = 0.5``, ``(ε, δ)-DP, ε = 1, δ = 1e-06``."""
    if "noise" in item:
        name, symbol = _NAMES[item["noise"]]
        parts = [f"r = {_num(item['r'])}"] if "r" in item else []
        if "scale" in item:
            parts.append(f"{symbol} = {_num(item['scale'])}")
        if float(item.get("sensitivity", 1.0)) != 1.0:
            parts.append(f"Δ = {_num(item['sensitivity'])}")
        if float(item.get("sampling_rate", 1.0)) != 1.0:
            parts.append(f"q = {_num(item['sampling_rate'])}")
        return ", ".join([name, *parts])
    if "gdp" in item:
        return f"GDP, μ = {_num(item['gdp'])}"
    if "approx_dp" in item:
        p = item["approx_dp"]
        return f"(ε, δ)-DP, ε = {_num(p.get('epsilon', float('nan')))}, δ = {_num(p.get('delta', 0.0))}"
    return f"randomized response, ε = {_num(item['randomized_response'].get('epsilon', float('nan')))}"


def _mechanisms(args: argparse.Namespace) -> list[tuple[str, str, Any]]:
    """(CSV name, legend label, PLD) of each mechanism, the positional NOISE first."""
    from ..accounting.pld import PLD
    from .compose import entry

    out = []
    if args.noise is not None:
        fam, sens, scale = analysed(args)
        item: dict[str, Any] = {"noise": args.noise, "scale": scale, "sensitivity": sens}
        if args.r is not None:
            item["r"] = args.r
        out.append((f"{fam!r}, scale {scale:.4g}, sensitivity {sens:g}", mechanism_label(item),
                    PLD.from_noise(fam, scale=scale, sensitivity=sens)))
    for spec in args.mechanism or []:
        item = parse_spec(spec)
        pld = entry(item, f"--mechanism {spec!r}")
        out.append((spec, mechanism_label(item), pld))
    if args.label is not None:
        if len(args.label) != len(out):
            raise ValueError(f"--label: give one per mechanism ({len(out)}), got {len(args.label)}")
        out = [(name, text, pld) for (name, _, pld), text in zip(out, args.label)]
    return out


def _figure_format(args: argparse.Namespace) -> str | None:
    """The format of the figure (``png``, ``svg``, ``pdf``), from ``--format`` or the suffix of ``--out``."""
    if args.out is None:
        return None
    suffix = os.path.splitext(args.out)[1].lower().lstrip(".")
    if args.format is None:
        if suffix not in _FORMATS:
            raise ValueError(f"--out must end in {', '.join('.' + f for f in _FORMATS)}, got {args.out!r} "
                             "(or give --format)")
        result: str | None = suffix
        return result
    if suffix in _FORMATS and suffix != args.format:
        raise ValueError(f"--out {args.out!r} ends in .{suffix} but --format is {args.format}")
    return str(args.format)


def _check_figure_args(args: argparse.Namespace, plt: Any) -> None:
    if args.size is not None and not all(0 < v <= 100 for v in args.size):
        raise ValueError(f"--size must be two lengths in (0, 100] inches, got {args.size[0]:g} {args.size[1]:g}")
    if args.style is not None and args.style not in plt.style.available and not os.path.isfile(args.style):
        raise ValueError(f"--style: unknown style {args.style!r}; give a .mplstyle file or one of "
                         f"{', '.join(sorted(plt.style.available))}")


def compute(args: argparse.Namespace) -> tuple[list[Any], list[str]]:
    """The curves of every mechanism at every ``--compose K`` and the panels to draw.

    Returns ``(curves, panels)``: each curve is ``(name, label, k, PrivacyCurves)``, ``name`` being the
    CSV's mechanism column and ``label`` the legend's (``, k = K`` added when K > 1 or several K are given).
    """
    import numpy as np

    from ..accounting.curves import privacy_curves

    points = 200 if args.points is None else args.points
    if points < 2:
        raise ValueError(f"--points must be >= 2 for curves, got {points}")
    if args.eps_max is not None and not args.eps_max > 0:
        raise ValueError(f"--eps-max must be > 0, got {args.eps_max}")
    mechs = _mechanisms(args)
    ks = list(dict.fromkeys(args.compose or [1]))
    runs = [(name, label if k == 1 and len(ks) == 1 else f"{label}, k = {k}", k,
             pld if k == 1 else pld.self_compose(k)) for name, label, pld in mechs for k in ks]
    eps_max = args.eps_max
    if eps_max is None:
        # Far enough that each curve is seen to reach delta = 1e-9, or delta = 0 where the mechanism is
        # pure DP (epsilon(0) finite), with a margin of a tenth beyond it.
        ends = [float(e) for _, _, _, pld in runs for e in (pld.epsilon(1e-9).upper, pld.epsilon(0.0).upper)]
        finite = [e for e in ends if np.isfinite(e) and e > 0]
        eps_max = 1.1 * max(finite) if finite else 10.0
    eps = np.linspace(0.0, eps_max, points)
    alpha = np.unique(np.concatenate([np.linspace(0.0, 1.0, points), np.geomspace(_FLOOR["roc"], 0.1, points // 2)]))
    curves = [(name, label, k, privacy_curves(pld, epsilon=eps, alpha=alpha)) for name, label, k, pld in runs]
    return curves, list(dict.fromkeys(args.curves or CURVES))


def figure(args: argparse.Namespace) -> Any:
    """The matplotlib figure that ``--out`` writes (the options of ``args``); the caller closes it."""
    plt = _pyplot()
    _check_figure_args(args, plt)
    curves, panels = compute(args)
    return _draw(plt, curves, panels, args)


def _overlay(args: argparse.Namespace) -> int:
    from .._files import atomic_output

    fmt_name = _figure_format(args)
    plt: Any = None
    if args.out is not None:  # fail before the computation if matplotlib is missing or an option is bad
        plt = _pyplot()
        _check_figure_args(args, plt)
    curves, panels = compute(args)
    if args.csv is not None:
        with atomic_output(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            _write_csv(fh, curves, panels)
        print(f"wrote {args.csv}")
    if args.out is not None:
        fig = _draw(plt, curves, panels, args)
        try:
            with _style(plt, args.style), atomic_output(args.out) as tmp:
                fig.savefig(tmp, format=fmt_name, dpi=args.dpi)
        finally:
            plt.close(fig)
        print(f"wrote {args.out}")
    if args.csv is None and args.out is None:
        buf = io.StringIO()
        _write_csv(buf, curves, panels)
        sys.stdout.write(buf.getvalue())
    return 0


def _series(c: Any, panel: str) -> tuple[Any, Any]:
    """(x, Interval) of one panel."""
    return {"profile": (c.epsilon, c.delta), "tradeoff": (c.alpha, c.beta), "roc": (c.alpha, c.power)}[panel]


def _write_csv(fh: Any, curves: list[Any], panels: list[str]) -> None:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["mechanism", "compose", "curve", "x", "lower", "upper"])
    for name, _, k, c in curves:
        for panel in panels:
            x, iv = _series(c, panel)
            for xi, lo, up in zip(x, iv.lower, iv.upper):
                w.writerow([name, k, panel, repr(float(xi)), repr(float(lo)), repr(float(up))])


def _pyplot() -> Any:
    from .._validation import require_extra

    (matplotlib,) = require_extra("plot", "matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _style(plt: Any, style: str | None) -> Any:
    """The style context of the figure: matplotlib's defaults, or ``--style``."""
    return plt.style.context("default" if style is None else style)


# Axes of each panel: (x label, y label, title, x log?, y log?, (x low, x high) or None, (y low, y high)).
_AXES = {"profile": ("privacy loss ε", "δ(ε)", "privacy profile", False, True, None, (_FLOOR["profile"], 1.0)),
         "tradeoff": ("type I error α", "type II error β(α)", "trade-off function", False, False, (0.0, 1.0), (0.0, 1.0)),
         "roc": ("false-positive rate", "true-positive rate", "ROC of the best attack", True, True,
                 (_FLOOR["roc"], 1.0), (_FLOOR["roc"], 1.0))}


def _band_width(panel: str, iv: Any) -> float:
    """The widest gap between the certified bounds, as a fraction of the panel's height."""
    import numpy as np

    _, _, _, _, ylog, _, (y0, y1) = _AXES[panel]
    lo, up = np.asarray(iv.lower, dtype=float), np.asarray(iv.upper, dtype=float)
    if ylog:
        seen = (lo > y0) & (up > y0)
        gap = np.log(up[seen] / lo[seen]) / np.log(y1 / y0)
    else:
        gap = (up - lo) / (y1 - y0)
    return float(np.max(gap, initial=0.0))


def _shown(panel: str, x: Any, upper: Any) -> tuple[Any, Any]:
    """The plotted line: the upper bound; on a log axis, a curve that reaches 0 (a pure-DP profile at its
    epsilon) is drawn down through the bottom of the axis at the first zero and stops there."""
    import numpy as np

    y = np.array(upper, dtype=float)
    if _AXES[panel][4]:
        zero = np.flatnonzero(y <= 0)
        if zero.size:
            y[zero[0]] = _AXES[panel][6][0] * 1e-3
            y[zero[0] + 1:] = np.nan
    return np.asarray(x, dtype=float), y


def _draw(plt: Any, curves: list[Any], panels: list[str], args: argparse.Namespace) -> Any:
    import numpy as np

    n = len(panels)
    size = tuple(args.size) if args.size is not None else (3.6 * n, 3.4)
    with _style(plt, args.style):
        fig, axes = plt.subplots(1, n, figsize=size, squeeze=False, layout="constrained")
        colours = plt.rcParams["axes.prop_cycle"].by_key().get("color") or ["C0"]
        names = list(dict.fromkeys(name for name, _, _, _ in curves))
        ks = list(dict.fromkeys(k for _, _, k, _ in curves))
        styles = ("-", "--", "-.", ":")
        shaded, unshaded = False, None
        for ax, panel in zip(axes[0], panels):
            xlabel, ylabel, title, xlog, ylog, xlim, ylim = _AXES[panel]
            for i, (name, label, k, c) in enumerate(curves):
                x, iv = _series(c, panel)
                colour = colours[names.index(name) % len(colours)]
                width = _band_width(panel, iv)
                if width >= _VISIBLE:
                    shaded = True
                    ax.fill_between(x, np.maximum(iv.lower, ylim[0]), np.maximum(iv.upper, ylim[0]), color=colour,
                                    alpha=0.25, lw=0)
                else:
                    unshaded = max(unshaded or 0.0, width)
                # Later curves are drawn thinner on top of earlier ones: curves that coincide stay visible.
                ax.plot(*_shown(panel, x, iv.upper), color=colour, ls=styles[ks.index(k) % len(styles)],
                        lw=max(0.8, 3.0 * 0.6 ** i), label=label, zorder=2 + i)
            if panel != "profile":
                ax.plot(xlim, ylim, color="grey", ls=":", lw=0.8, label="no leakage", zorder=1)
            if xlog:
                ax.set_xscale("log", nonpositive="mask")
            if ylog:
                ax.set_yscale("log", nonpositive="mask")
            ax.set_xlim(*(xlim or (0.0, float(np.max(curves[0][3].epsilon)))))
            ax.set_ylim(*ylim)
            ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
            ax.grid(True, which="major", alpha=0.3)
        handles, texts = [], []
        for ax in axes[0]:
            for h, t in zip(*ax.get_legend_handles_labels()):
                if t not in texts:
                    handles.append(h)
                    texts.append(t)
        note = "lines: upper bounds" + ("; shaded: certified bounds" if shaded else "")
        if unshaded is not None:
            note += (f"; certified bounds{' elsewhere' if shaded else ''} within {unshaded:.1g} of the panel "
                     "height (too narrow to shade)")
        note = textwrap.fill(note, width=max(30, int(13 * size[0])))
        fig.legend(handles, texts, loc="outside lower center", ncol=min(len(texts), 3), title=note,
                   title_fontsize="small", fontsize="small", frameon=False)
        if args.title is not None:
            fig.suptitle(args.title)
    return fig


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
    print(f"# {fam!r}, scale {fmt(scale)}, sensitivity {fmt(sens)}")
    print(f"{'epsilon':>24s} {'delta':>24s}")
    for e, d, ld in zip(eps, delta, log_delta):
        # below the double range the exact log delta is printed as a power of ten
        text = f"{d:.6e}" if d > 0 else (f"1e{ld / np.log(10.0):.2f}" if np.isfinite(ld) else "0")
        # the epsilon is printed exactly (shortest round-trip form): a rounded label could show a pure-DP
        # mechanism with delta > 0 at its own epsilon
        print(f"{float(e)!r:>24s} {text:>24s}")
    return 0
