"""``pydp-core calibrate``: scale, variance and guarantees of an additive noise mechanism."""
from __future__ import annotations

import argparse
import json

from ._args import add_noise_args, analysed, fmt

HELP = "scale, variance and guarantees of an additive noise mechanism under each definition"


def configure(p: argparse.ArgumentParser) -> None:
    """Register the arguments of ``calibrate``."""
    add_noise_args(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Print the calibration table (or JSON)."""
    from ..accounting.guarantees import guarantees
    from ..calibration import privacy_profile

    fam, sens, scale = analysed(args)
    g = guarantees(fam, sensitivity=sens, scale=scale)
    variance, std = g.pop("variance"), g.pop("std")
    if args.json:
        doc = {"noise": repr(fam), "sensitivity": sens, "scale": scale, "std": std, "variance": variance}
        for k, v in g.items():
            doc[k] = {str(kk): vv for kk, vv in v.items()} if isinstance(v, dict) else v
        print(json.dumps(doc, indent=2, default=lambda x: None if x != x else x).replace("Infinity", '"inf"'))
        return 0
    print(f"mechanism        {fam!r}, sensitivity {fmt(sens)}")
    if args.epsilon is not None:
        got = float(privacy_profile(fam, epsilon=args.epsilon, sensitivity=sens, scale=scale))
        print(f"target           ({fmt(args.epsilon)}, {fmt(args.delta)})-DP; exact delta at this scale {got:.6g}")
    print(f"scale            {fmt(scale)}")
    print(f"std              {fmt(std)}")
    print(f"variance         {fmt(variance)}")
    print("guarantees (exact unless noted)")
    for k, v in g.items():
        if isinstance(v, dict):
            label = "delta" if k.startswith("(") else "alpha"
            print(f"  {k}")
            for kk, vv in v.items():
                print(f"    {label} {kk:<8g} epsilon {fmt(vv)}")
        else:
            print(f"  {k:<16s} {fmt(v)}")
    return 0
