"""``pydp-core compose``: the certified composition of a list of mechanisms given in a JSON file.

The file holds ``{"mechanisms": [...]}`` (or the list itself); each entry is one of

- ``{"noise": "gaussian" | "laplace" | "logistic" | "subbotin", "scale": S, "sensitivity": D,
  "sampling_rate": q, "r": R}`` (``r`` for Subbotin only; ``sensitivity`` 1 and ``sampling_rate`` 1 by
  default),
- ``{"gdp": mu}``, ``{"approx_dp": {"epsilon": E, "delta": D}}``, ``{"randomized_response": {"epsilon": E}}``,

with an optional ``"count": k`` (k-fold self-composition). The command prints the interval that
contains the exact epsilon(delta) (``--delta``) or delta(epsilon) (``--epsilon``) of the composition,
computed from the privacy-loss distributions of ``pydp_core.accounting.pld`` (docs/pld.md).
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from ._args import finite_float

HELP = "certified epsilon(delta) or delta(epsilon) of a composition of mechanisms listed in a JSON file"

_FAMILIES = ("gaussian", "laplace", "logistic", "subbotin")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="JSON file with the mechanisms (see `pydp-core compose --help`)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", type=finite_float, help="report the interval of epsilon at this delta")
    g.add_argument("--epsilon", type=finite_float, help="report the interval of delta at this epsilon")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def entry(item: Any, where: str) -> Any:
    """The PLD of one mechanism entry (a dict in the format above); errors name the entry as ``where``."""
    from .. import noise
    from ..accounting.pld import PLD

    if not isinstance(item, dict):
        raise ValueError(f"{where} must be a JSON object, not {type(item).__name__}")
    known = {"noise", "scale", "sensitivity", "sampling_rate", "r", "gdp", "approx_dp", "randomized_response", "count"}
    extra = set(item) - known
    if extra:
        raise ValueError(f"{where} has unknown fields {sorted(extra)}")
    if "noise" in item:
        name = item["noise"]
        if name not in _FAMILIES:
            raise ValueError(f"{where}.noise must be one of {_FAMILIES}, got {name!r}")
        fam = noise.Subbotin(item["r"]) if name == "subbotin" else getattr(noise, name.capitalize())()
        if "scale" not in item:
            raise ValueError(f"{where} needs a scale")
        pld = PLD.from_noise(fam, scale=item["scale"], sensitivity=item.get("sensitivity", 1.0),
                             sampling_rate=item.get("sampling_rate", 1.0))
    elif "gdp" in item:
        pld = PLD.from_gdp(item["gdp"])
    elif "approx_dp" in item:
        pld = PLD.from_approx_dp(**dict(item["approx_dp"]))
    elif "randomized_response" in item:
        pld = PLD.from_randomized_response(**dict(item["randomized_response"]))
    else:
        raise ValueError(f"{where} names no mechanism (noise, gdp, approx_dp or randomized_response)")
    count = item.get("count", 1)
    return pld if count == 1 else pld.self_compose(count)


def run(args: argparse.Namespace) -> int:
    from ..accounting.pld import PLD

    with open(args.file, encoding="utf-8") as fh:
        try:
            doc = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{args.file}: not JSON ({exc})") from None
    items = doc.get("mechanisms") if isinstance(doc, dict) else doc
    if not isinstance(items, list) or not items:
        raise ValueError(f"{args.file}: expected a non-empty list of mechanisms")
    total = PLD.composition([entry(item, f"mechanisms[{i}]") for i, item in enumerate(items)])
    if args.delta is not None:
        iv = total.epsilon(args.delta)
        what, at = "epsilon", {"delta": args.delta}
    else:
        iv = total.delta(args.epsilon)
        what, at = "delta", {"epsilon": args.epsilon}
    if args.json:
        print(json.dumps({**at, what: {"lower": float(iv.lower), "upper": float(iv.upper)}}))
    else:
        name, value = next(iter(at.items()))
        lo, hi = float(iv.lower), float(iv.upper)
        print(f"{what} at {name} = {value:g}: [{lo:.10g}, {hi:.10g}] (certified: the exact value lies inside)")
    return 0
