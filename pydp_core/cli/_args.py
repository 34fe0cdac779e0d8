"""Argument types and the noise arguments shared by the commands."""
from __future__ import annotations

import argparse
import math
from typing import Any

# pydp_core.noise.NAMES, written out so that building the parser does not load the extension
# (tests/cli/test_cli_family_names.py checks that the two agree).
FAMILIES = ("gaussian", "laplace", "logistic", "subbotin")


def finite_float(text: str) -> float:
    """argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be finite: {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an int > 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def mechanism_arg(text: str) -> str:
    """argparse type: a family name, or ``subbotin:r=R`` (the order in the name; :func:`split_mechanism`)."""
    name, _, rest = text.partition(":")
    if name not in FAMILIES:
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(FAMILIES)}, or subbotin:r=R)")
    if rest:
        key, _, value = rest.partition("=")
        if name != "subbotin" or key != "r":
            raise argparse.ArgumentTypeError(f"{text!r}: only subbotin takes a parameter, as subbotin:r=R")
        finite_float(value)
    return text


def split_mechanism(text: str, r: float | None) -> tuple[str, float | None]:
    """(name, r) from ``--mechanism`` (checked by :func:`mechanism_arg`) and ``--r``; both orders given is refused."""
    name, _, rest = text.partition(":")
    if not rest:
        return name, r
    if r is not None:
        raise ValueError(f"give the Subbotin order once: --mechanism {text} or --r, not both")
    return name, finite_float(rest.partition("=")[2])


def sensitivity_arg(text: str) -> float | str:
    """argparse type: a finite float or the word ``bounds``."""
    return "bounds" if text == "bounds" else finite_float(text)


def add_noise_args(p: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The noise family (a positional argument, ``optional`` or not), its target or scale, sensitivity, bounds."""
    if optional:
        p.add_argument("noise", nargs="?", choices=FAMILIES, help="noise family of the mechanism")
    else:
        p.add_argument("noise", choices=FAMILIES, help="noise family of the mechanism")
    p.add_argument("--r", type=finite_float, help="Subbotin order r >= 1 (subbotin only)")
    p.add_argument("--epsilon", type=finite_float, help="target epsilon (calibrates the scale)")
    p.add_argument("--delta", type=finite_float, default=0.0, help="target delta (default 0)")
    p.add_argument("--scale", type=finite_float, help="analyse this noise scale instead of calibrating")
    p.add_argument(
        "--sensitivity", type=sensitivity_arg, default=1.0,
        help="sensitivity D (default 1), or 'bounds' for upper - lower of --bounds",
    )
    p.add_argument("--bounds", nargs=2, type=finite_float, metavar=("LOWER", "UPPER"), help="clamping bounds")


def family(args: argparse.Namespace) -> Any:
    """The noise family named by ``args.noise`` (and ``args.r``)."""
    from ..noise import from_name

    return from_name(args.noise, args.r, name_arg="noise", r_arg="--r")


def sensitivity(args: argparse.Namespace) -> float:
    """The sensitivity: ``--sensitivity``, or upper - lower of ``--bounds`` (:func:`pydp_core.io.sensitivity_from_bounds`)."""
    from ..io import check_bounds, sensitivity_from_bounds

    bounds = check_bounds(args.bounds, "--bounds")
    if args.sensitivity == "bounds":
        if bounds is None:
            raise ValueError("--sensitivity bounds needs --bounds LOWER UPPER")
        return sensitivity_from_bounds(bounds)
    if not args.sensitivity > 0:
        raise ValueError(f"--sensitivity must be > 0, got {args.sensitivity}")
    return float(args.sensitivity)


def scale(args: argparse.Namespace, fam: Any, sens: float) -> float:
    """The given ``--scale``, or the minimal scale for ``--epsilon``/``--delta`` (:func:`pydp_core.minimal_scale`)."""
    from ..calibration import minimal_scale

    if args.scale is not None:
        if args.epsilon is not None:
            raise ValueError("give either --scale or --epsilon/--delta, not both")
        if not args.scale > 0:
            raise ValueError(f"--scale must be > 0, got {args.scale}")
        return float(args.scale)
    if args.epsilon is None:
        raise ValueError("give --epsilon (and --delta) to calibrate, or --scale to analyse a given scale")
    return float(minimal_scale(fam, epsilon=args.epsilon, delta=args.delta, sensitivity=sens))


def analysed(args: argparse.Namespace) -> tuple[Any, float, float]:
    """(family, sensitivity, scale) from the shared noise arguments."""
    fam = family(args)
    sens = sensitivity(args)
    return fam, sens, scale(args, fam, sens)


def fmt(v: float) -> str:
    """A number for the tables: ten significant digits, ``inf``, or ``n/a`` for NaN."""
    return "n/a" if v != v else ("inf" if v == float("inf") else f"{v:.10g}")
