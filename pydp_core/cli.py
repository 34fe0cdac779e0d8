"""The ``pydp-core`` command line (argparse: standard library, no extra dependency).

Sub-commands register themselves in :data:`COMMANDS`; ``demo`` is the main job of the README.

- ``calibrate NOISE --epsilon E [--delta D] [--sensitivity S | --sensitivity bounds --bounds L U]``
  (or ``--scale S`` to analyse a given scale): scale, std, variance and the guarantees under each
  definition (pure DP, (epsilon, delta)-DP, GDP, zCDP, RDP, Rao DP) where they are known; ``--json``.
- ``profile NOISE ...``: the delta(epsilon) table, or ``--png FILE`` for a plot (matplotlib).
- ``privatize IN OUT --column C ... --mechanism M --epsilon E --sensitivity S [--bounds L U]
  [--key-file K]``: Parquet or CSV, streamed by batch, atomic output, never the input.
- ``mu MANIFOLD --sigma S``: the GDP parameter of the Riemannian Gaussian (pydp_core.manifolds).
- ``keygen FILE``: a fresh 256-bit release key, mode 0600.

Why argparse rather than typer or click: it ships with Python (the base install stays numpy + scipy),
its conventions are the ones users expect from standard tools (``--help``, usage errors on stderr with
exit status 2), and sub-commands register through one decorator without a framework.

Exit codes: 0 success; 1 runtime failure (bad value, missing or existing file, calibration failure),
with one ``pydp-core COMMAND: error: ...`` line on stderr and nothing on stdout; 2 usage error
(argparse's convention); 130 interrupted (Ctrl-C or SIGTERM during ``privatize``, which leaves no output).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def command(name: str, help: str, configure: Callable[[argparse.ArgumentParser], None]):
    def wrap(fn: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help, configure, fn)
        return fn

    return wrap


@command("demo", "calibrate a few mechanisms exactly and print them", lambda p: None)
def _demo(args: argparse.Namespace) -> int:
    from .demo import run

    run(sys.stdout)
    return 0


# -- shared arguments -------------------------------------------------------------------------------------
_FAMILIES = ("laplace", "gaussian", "logistic", "subbotin")


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"must be finite: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def _sensitivity_arg(text: str):
    return "bounds" if text == "bounds" else _finite_float(text)


def _add_noise_args(p: argparse.ArgumentParser, *, need_scale_or_budget: bool = True) -> None:
    p.add_argument("noise", choices=_FAMILIES, help="noise family of the mechanism")
    p.add_argument("--r", type=_finite_float, help="Subbotin order r >= 1 (subbotin only)")
    p.add_argument("--epsilon", type=_finite_float, help="target epsilon (calibrates the scale)")
    p.add_argument("--delta", type=_finite_float, default=0.0, help="target delta (default 0)")
    p.add_argument("--scale", type=_finite_float, help="analyse this noise scale instead of calibrating")
    p.add_argument(
        "--sensitivity", type=_sensitivity_arg, default=1.0,
        help="sensitivity D (default 1), or 'bounds' for upper - lower of --bounds",
    )
    p.add_argument("--bounds", nargs=2, type=_finite_float, metavar=("LOWER", "UPPER"), help="clamping bounds")


def _family(args: argparse.Namespace):
    from . import noise

    if args.noise == "subbotin":
        if args.r is None:
            raise ValueError("--r is required with subbotin noise")
        return noise.Subbotin(args.r)
    if args.r is not None:
        raise ValueError(f"--r applies to subbotin noise only, not {args.noise}")
    return {"laplace": noise.Laplace, "gaussian": noise.Gaussian, "logistic": noise.Logistic}[args.noise]()


def _sensitivity(args: argparse.Namespace) -> float:
    from .etl import check_bounds, sensitivity_from_bounds

    bounds = check_bounds(args.bounds, "--bounds")
    if args.sensitivity == "bounds":
        if bounds is None:
            raise ValueError("--sensitivity bounds needs --bounds LOWER UPPER")
        return sensitivity_from_bounds(bounds)
    if not args.sensitivity > 0:
        raise ValueError(f"--sensitivity must be > 0, got {args.sensitivity}")
    return float(args.sensitivity)


def _scale(args: argparse.Namespace, fam, sens: float) -> float:
    from .calibration import minimal_scale

    if args.scale is not None:
        if args.epsilon is not None:
            raise ValueError("give either --scale or --epsilon/--delta, not both")
        if not args.scale > 0:
            raise ValueError(f"--scale must be > 0, got {args.scale}")
        return float(args.scale)
    if args.epsilon is None:
        raise ValueError("give --epsilon (and --delta) to calibrate, or --scale to analyse a given scale")
    return float(minimal_scale(fam, args.epsilon, args.delta, sens))


def _analysed(args: argparse.Namespace):
    """(family, sensitivity, scale) from the shared noise arguments."""
    fam = _family(args)
    sens = _sensitivity(args)
    return fam, sens, _scale(args, fam, sens)


def _fisher_theta(fam, scale: float, sens: float) -> float:
    """Rao-DP theta = D sqrt(I) for a location family of scale s (SPEC-NOTES, paper 000)."""
    import math

    name = type(fam).__name__
    if name in ("Laplace", "Gaussian"):
        info = 1.0
    elif name == "Logistic":
        info = 1.0 / 3.0
    elif name == "Subbotin":
        r = fam.r
        info = math.exp((2 - 2 / r) * math.log(r) + math.lgamma(2 - 1 / r) - math.lgamma(1 / r))
    else:
        return math.nan
    return sens * math.sqrt(info) / scale


def laplace_rdp(alpha: float, b: float) -> float:
    """RDP epsilon(alpha) of the Laplace mechanism with sensitivity 1 and scale b (Mironov 2017, Table II)."""
    import math

    if alpha == 1.0:
        return 1.0 / b + math.exp(-1.0 / b) - 1.0
    # 1/(a-1) log( a/(2a-1) e^{(a-1)/b} + (a-1)/(2a-1) e^{-a/b} ), summed in log space.
    t1 = math.log(alpha / (2 * alpha - 1)) + (alpha - 1) / b
    t2 = math.log((alpha - 1) / (2 * alpha - 1)) - alpha / b
    hi = max(t1, t2)
    return (hi + math.log1p(math.exp(min(t1, t2) - hi))) / (alpha - 1)


def guarantees(fam, scale: float, sens: float) -> dict:
    """The guarantees of ``sens``-sensitive additive noise ``scale * fam`` under each definition.

    Exact: pure DP and (epsilon, delta)-DP (the exact profile, every family); GDP, zCDP and RDP of the
    Gaussian (mu = D / sigma); RDP of the Laplace (Mironov 2017); Rao DP (the Fisher information of the
    location). Bounds: GDP, zCDP and RDP implied by pure DP for the other MLR-bounded families
    (pydp_core.PureDP conversions).
    """
    import math

    from .budgets import GDP, PureDP
    from .calibration import epsilon_for_delta

    name = type(fam).__name__
    if name == "Subbotin" and fam.r in (1.0, 2.0):
        name = "Laplace" if fam.r == 1.0 else "Gaussian"
    out: dict = {}
    eps0 = float(epsilon_for_delta(fam, 0.0, scale, sens))
    out["pure DP epsilon"] = eps0
    out["(epsilon, delta)-DP"] = {d: float(epsilon_for_delta(fam, d, scale, sens)) for d in (1e-3, 1e-6, 1e-9, 1e-12)}
    alphas = (1.5, 2.0, 4.0, 8.0, 16.0, 32.0)
    if name == "Gaussian":
        gdp = GDP(sens / scale)
        out["GDP mu"] = gdp.mu
        out["zCDP rho"] = gdp.to_zcdp().rho
        out["RDP epsilon(alpha)"] = {a: gdp.to_rdp(a).epsilon for a in alphas}
    elif math.isfinite(eps0):
        pure = PureDP(eps0)
        out["GDP mu (bound via pure DP)"] = pure.to_gdp().mu
        out["zCDP rho (bound via pure DP)"] = pure.to_zcdp().rho
        if name == "Laplace":
            out["RDP epsilon(alpha)"] = {a: laplace_rdp(a, scale / sens) for a in alphas}
        else:
            out["RDP epsilon(alpha) (bound via pure DP)"] = {a: float(pure.rdp_epsilon(a)) for a in alphas}
    out["Rao-DP theta"] = _fisher_theta(fam, scale, sens)
    return out


def _fmt(v) -> str:
    return "n/a" if v != v else ("inf" if v == float("inf") else f"{v:.10g}")


def _configure_calibrate(p: argparse.ArgumentParser) -> None:
    _add_noise_args(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


@command("calibrate", "scale, variance and guarantees of an additive noise mechanism under each definition", _configure_calibrate)
def _calibrate(args: argparse.Namespace) -> int:
    import json

    fam, sens, scale = _analysed(args)
    g = guarantees(fam, scale, sens)
    variance = scale * scale * fam.variance
    if args.json:
        doc = {"noise": repr(fam), "sensitivity": sens, "scale": scale, "std": variance**0.5, "variance": variance}
        for k, v in g.items():
            doc[k] = {str(kk): vv for kk, vv in v.items()} if isinstance(v, dict) else v
        print(json.dumps(doc, indent=2, default=lambda x: None if x != x else x).replace("Infinity", '"inf"'))
        return 0
    from .calibration import privacy_profile

    print(f"mechanism        {fam!r}, sensitivity {_fmt(sens)}")
    if args.epsilon is not None:
        got = float(privacy_profile(fam, args.epsilon, scale, sens))
        print(f"target           ({_fmt(args.epsilon)}, {_fmt(args.delta)})-DP; exact delta at this scale {got:.6g}")
    print(f"scale            {_fmt(scale)}")
    print(f"std              {_fmt(variance ** 0.5)}")
    print(f"variance         {_fmt(variance)}")
    print("guarantees (exact unless noted)")
    for k, v in g.items():
        if isinstance(v, dict):
            label = "delta" if k.startswith("(") else "alpha"
            print(f"  {k}")
            for kk, vv in v.items():
                print(f"    {label} {kk:<8g} epsilon {_fmt(vv)}")
        else:
            print(f"  {k:<16s} {_fmt(v)}")
    return 0


def _configure_profile(p: argparse.ArgumentParser) -> None:
    _add_noise_args(p)
    p.add_argument("--eps-max", type=_finite_float, default=None, help="largest epsilon of the table (default: auto)")
    p.add_argument("--points", type=_positive_int, default=21, help="number of epsilon values (default 21)")
    p.add_argument("--png", metavar="FILE", help="write a plot of delta(epsilon) (log scale) to FILE (needs matplotlib)")


@command("profile", "print the privacy profile delta(epsilon) of a mechanism, or plot it to a PNG", _configure_profile)
def _profile(args: argparse.Namespace) -> int:
    import numpy as np

    from .calibration import epsilon_for_delta, log_privacy_profile

    fam, sens, scale = _analysed(args)
    eps_max = args.eps_max
    if eps_max is None:
        eps_max = float(epsilon_for_delta(fam, 1e-12, scale, sens))
        if not np.isfinite(eps_max) or eps_max <= 0:
            eps_max = 10.0
    if not eps_max > 0:
        raise ValueError(f"--eps-max must be > 0, got {eps_max}")
    eps = np.linspace(0.0, eps_max, args.points)
    log_delta = np.asarray(log_privacy_profile(fam, eps, scale, sens), dtype=float)
    if args.png:
        try:
            import matplotlib
        except ImportError:
            raise OSError("--png needs matplotlib: pip install 'pydp_core[plot]'") from None
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ._atomic import atomic_output

        fine = np.linspace(0.0, eps_max, 400)
        ld = np.asarray(log_privacy_profile(fam, fine, scale, sens), dtype=float)
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
    print(f"# {fam!r}, scale {_fmt(scale)}, sensitivity {_fmt(sens)}")
    print(f"{'epsilon':>14s} {'delta':>24s}")
    for e, ld in zip(eps, log_delta):
        d = float(np.exp(ld))
        text = f"{d:.6e}" if d > 0 else (f"1e{ld / np.log(10.0):.2f}" if np.isfinite(ld) else "0")
        print(f"{e:14.6g} {text:>24s}")
    return 0


def _configure_privatize(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="input Parquet or CSV file (only read)")
    p.add_argument("output", metavar="OUT", help="output file, written atomically (temporary file, then rename)")
    p.add_argument("--column", "-c", action="append", required=True, metavar="C", help="column to privatise (repeat for more)")
    p.add_argument("--mechanism", "-m", choices=_FAMILIES, required=True, help="noise mechanism")
    p.add_argument("--r", type=_finite_float, help="Subbotin order r >= 1 (subbotin only)")
    p.add_argument("--epsilon", type=_finite_float, required=True)
    p.add_argument("--delta", type=_finite_float, default=0.0, help="default 0")
    p.add_argument(
        "--sensitivity", type=_sensitivity_arg, required=True,
        help="sensitivity D of one value, or 'bounds' for upper - lower of --bounds",
    )
    p.add_argument("--bounds", nargs=2, type=_finite_float, metavar=("LOWER", "UPPER"), help="clamp values to [LOWER, UPPER] first")
    p.add_argument("--key-file", "-k", metavar="FILE", help="256-bit release key from 'pydp-core keygen' (default: a fresh random key)")
    p.add_argument("--format", choices=("parquet", "csv"), help="input format (default: from the file name)")
    p.add_argument("--output-format", choices=("parquet", "csv"), help="output format (default: from OUT's name, else the input's)")
    p.add_argument(
        "--compression", choices=("snappy", "zstd", "lz4", "gzip", "brotli", "none"), default="snappy",
        help="Parquet output compression (default snappy, as pyarrow; noisy floats hardly compress, 'none' is fastest)",
    )
    p.add_argument("--batch-rows", type=_positive_int, default=1 << 20, help="rows read at a time (default 1048576, one keyed block)")
    p.add_argument(
        "--block-rows", type=_positive_int, default=1 << 20,
        help="rows per keyed noise block (default 1048576; part of the noise's definition: keep it fixed per key)",
    )
    p.add_argument("--force", "-f", action="store_true", help="replace OUT if it exists (never the input)")
    p.add_argument(
        "--simulate", action="store_true",
        help="floating-point noise for simulations (NOT a release: unsafe against least-significant-bit attacks); "
        "by default Laplace and Gaussian noise use the exact discrete release path",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show a progress bar")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show a progress bar")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")


def _progress_bar(enabled: bool, total, label: str):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=" rows", unit_scale=True, desc=label, file=sys.stderr, leave=False)


@command("privatize", "add calibrated noise to columns of a Parquet or CSV file (streaming, atomic)", _configure_privatize)
def _privatize(args: argparse.Namespace) -> int:
    from . import etl

    bounds = etl.check_bounds(args.bounds, "--bounds")
    mech = etl.mechanism(args.mechanism, args.epsilon, args.delta, args.sensitivity, bounds=bounds, r=args.r)
    key = etl.load_key(args.key_file) if args.key_file else None
    extra = {"release": False} if args.simulate else {}
    fmt = etl.file_format(args.input, args.format)
    show = sys.stderr.isatty() if args.progress is None else args.progress
    total = None
    if show and fmt == "parquet" and os.path.isfile(args.input):
        import pyarrow.parquet as pq

        total = pq.ParquetFile(args.input).metadata.num_rows
    bar = _progress_bar(show, total, "privatize")
    try:
        rows = etl.privatize_file(
            args.input, args.output, args.column, mech, key=key, bounds=bounds, format=args.format,
            output_format=args.output_format, batch_rows=args.batch_rows, block_rows=args.block_rows, overwrite=args.force,
            progress=None if bar is None else bar.update, compression=args.compression, **extra,
        )
    finally:
        if bar is not None:
            bar.close()
    if not args.quiet:
        print(f"wrote {args.output}: {rows} rows, column(s) {', '.join(args.column)} privatised with {mech!r}", file=sys.stderr)
    return 0


def _configure_mu(p: argparse.ArgumentParser) -> None:
    p.add_argument("manifold", choices=("euclidean", "circle", "sphere", "hyperbolic"))
    p.add_argument("--dim", type=_positive_int, default=None, help="dimension d (euclidean, sphere, hyperbolic)")
    p.add_argument("--sigma", type=_finite_float, required=True, help="Riemannian Gaussian sigma")
    p.add_argument("--sensitivity", type=_finite_float, default=1.0, help="geodesic sensitivity (default 1)")
    p.add_argument("--method", choices=("exact", "monte_carlo"), default="exact")


@command("mu", "the GDP parameter mu of the Riemannian Gaussian mechanism on a manifold", _configure_mu)
def _mu(args: argparse.Namespace) -> int:
    try:
        from . import manifolds
    except ImportError:
        raise RuntimeError("pydp_core.manifolds is not available in this build") from None
    if args.manifold == "circle":
        if args.dim not in (None, 1):
            raise ValueError("--dim does not apply to the circle (dimension 1)")
        m = manifolds.Circle()
    else:
        if args.dim is None:
            raise ValueError(f"--dim is required for the {args.manifold} manifold")
        m = {"euclidean": manifolds.Euclidean, "sphere": manifolds.Sphere, "hyperbolic": manifolds.Hyperbolic}[args.manifold](args.dim)
    res = manifolds.gdp_mu(m, args.sigma, args.sensitivity, method=args.method)
    if args.method == "exact":
        print(_fmt(float(res)))
    else:
        lo, hi = res.confidence_interval if hasattr(res, "confidence_interval") else res.ci
        print(f"{_fmt(res.mu)} (stderr {_fmt(res.stderr)}, 95% interval [{_fmt(lo)}, {_fmt(hi)}])")
    return 0


def _configure_keygen(p: argparse.ArgumentParser) -> None:
    p.add_argument("output", metavar="FILE", help="key file to create (mode 0600)")
    p.add_argument("--force", "-f", action="store_true", help="replace FILE if it exists")


@command("keygen", "write a fresh 256-bit release key, readable by its owner only", _configure_keygen)
def _keygen(args: argparse.Namespace) -> int:
    from .etl import write_key

    try:
        write_key(args.output, overwrite=args.force)
    except FileExistsError:
        raise FileExistsError(f"{args.output!r} exists: a key is never overwritten without --force") from None
    print(f"wrote a 256-bit key to {args.output} (mode 0600); keep it secret and use it for one release only", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="pydp-core", description="Exact differential-privacy numerics.")
    parser.add_argument("--version", action="version", version=f"pydp-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (help_text, configure, _) in COMMANDS.items():
        configure(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _, _, fn = COMMANDS[args.command]
    try:
        return fn(args)
    except (ValueError, TypeError, OSError, ArithmeticError, RuntimeError) as exc:
        print(f"pydp-core {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"pydp-core {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
