"""``pydp-core compose``: the certified composition of a list of mechanisms given in a JSON file.

The file holds ``{"mechanisms": [...]}`` (or the list itself); each entry is one of

- ``{"noise": "gaussian" | "laplace" | "logistic" | "subbotin", "scale": S, "sensitivity": D,
  "sampling_rate": q, "r": R, "bound": B}`` (``r`` for Subbotin only; ``bound`` truncates the family to
  (-B, B); ``sensitivity`` 1 and ``sampling_rate`` 1 by default),
- ``{"gdp": mu}``, ``{"approx_dp": {"epsilon": E, "delta": D}}``, ``{"randomized_response": {"epsilon": E}}``,
- ``{"discrete_laplace": {"scale": T, "sensitivity": K, "sampling_rate": q}}``,
  ``{"discrete_gaussian": {"sigma2": S2, "sensitivity": K, "sampling_rate": q}}`` (integer outputs),

with an optional ``"count": k`` (k-fold self-composition); the schema is that of
:meth:`pydp_core.accounting.pld.PLD.from_spec`. The command prints the interval that
contains the exact epsilon(delta) (``--delta``) or delta(epsilon) (``--epsilon``) of the composition,
computed from the privacy-loss distributions of ``pydp_core.accounting.pld`` (docs/pld.md).
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from ._args import finite_float

HELP = "certified epsilon(delta) or delta(epsilon) of a composition of mechanisms listed in a JSON file"

_EPILOG = """\
the JSON file: {"mechanisms": [ENTRY, ...]} or the list itself; each ENTRY is one of
  {"noise": "gaussian" | "laplace" | "logistic" | "subbotin", "scale": S,
   "sensitivity": D, "sampling_rate": Q, "r": R, "bound": B}
      (r for subbotin only; bound truncates the noise to (-B, B); sensitivity and sampling_rate 1 by default)
  {"gdp": MU}
  {"approx_dp": {"epsilon": E, "delta": D}}
  {"randomized_response": {"epsilon": E}}
  {"discrete_laplace": {"scale": T, "sensitivity": K, "sampling_rate": Q}}
  {"discrete_gaussian": {"sigma2": S2, "sensitivity": K, "sampling_rate": Q}}
with an optional "count": K (the K-fold composition of the entry).

example:
  echo '{"mechanisms": [{"noise": "gaussian", "scale": 2, "count": 10}, {"gdp": 0.5}]}' > m.json
  pydp-core compose m.json --delta 1e-6
"""


def configure(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = _EPILOG
    p.add_argument("file", metavar="FILE", help="JSON file with the mechanisms (its format is below)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--delta", type=finite_float, help="report the interval of epsilon at this delta")
    g.add_argument("--epsilon", type=finite_float, help="report the interval of delta at this epsilon")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def entry(item: Any, where: str) -> Any:
    """The PLD of one mechanism entry (:meth:`PLD.from_spec <pydp_core.accounting.pld.PLD.from_spec>`);
    errors name the entry as ``where``."""
    from ..accounting.pld import PLD

    try:
        return PLD.from_spec(item)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None


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
