"""The PLD constructors, compositions and calibration at the edges of their domains (scales from 1e-300
to 1e300, epsilon up to 50, k up to 2^62, sampling rates down to 1e-12, tiny delta, epsilon and rtol),
each call in a fresh interpreter with a time limit and a 2 GiB address-space limit: the answer is an
interval that contains the exact value (Gaussian compositions are mu-GDP, mu = sqrt(k) / scale; exact
delta from mpmath) or a clean one, or a ValueError / TypeError that names an argument of the call;
never a crash, a hang, an allocation failure or a NaN."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap

import mpmath as mp
import pytest
from support.paths import subprocess_env

LIMIT_BYTES = 2 * 1024**3
TIMEOUT = 90.0

_WORKER = textwrap.dedent("""
    import json, math, resource, sys
    import numpy as np
    from pydp_core.accounting.pld import PLD
    from pydp_core.noise import Gaussian, Laplace, Subbotin
    resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
    try:
        out = eval(sys.argv[1])
    except (ValueError, TypeError) as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}))
    else:
        vals = [float(v) for v in out] if isinstance(out, tuple) else [float(out)]
        print(json.dumps({"result": vals}))
""")


def _gdp_delta(mu: float, eps: float):
    with mp.workdps(60):
        m, e = mp.mpf(mu), mp.mpf(eps)
        z = e / m - m / 2
        if z > 1e6:  # delta < Phi(-z) < e^{-z^2 / 2}: far below the smallest double
            return mp.mpf(0)
        return mp.ncdf(-z) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


def _gdp(scale, k, eps):
    return ("gdp", f"PLD.from_noise(Gaussian(), scale={scale!r}).self_compose({k}).delta({eps!r})",
            math.sqrt(k) / scale, eps, ("scale", "k", "steps", "value_step", "epsilon"))


CASES = [
    # Gaussian compositions: the exact delta is known.
    *[_gdp(s, k, e) for s, k, e in [
        (1.0, 1, 50.0), (1e-5, 1, 1.0), (1e-300, 1, 1.0), (1e300, 1, 1.0), (1e150, 1, 0.0),
        (1e3, 10**6, 1.0), (3e4, 10**9, 1.0), (5e4, 2**31, 1.0), (1.0, 2**62, 1.0), (1e300, 2**62, 1.0),
    ]],
    # Other constructors: a clean interval (no NaN, 0 <= lower <= upper <= 1) or a clean error.
    ("delta", "PLD.from_noise(Gaussian(), scale=1.0, sampling_rate=1e-12).delta(1.0)", None, None, ("sampling_rate", "scale")),
    ("delta", "PLD.from_noise(Laplace(), scale=1e-300).delta(50.0)", None, None, ("scale",)),
    ("delta", "PLD.from_noise(Subbotin(3.0), scale=1e300).delta(0.0)", None, None, ("scale",)),
    ("delta", "PLD.from_randomized_response(epsilon=1e300).delta(1.0)", None, None, ("epsilon",)),
    ("delta", "PLD.from_randomized_response(epsilon=50.0).delta(1.0)", None, None, ("epsilon",)),
    ("delta", "PLD.from_approx_dp(epsilon=1.0, delta=1 - 2**-53).self_compose(3).delta(0.5)", None, None, ("delta",)),
    ("delta", "PLD.from_discrete_gaussian(scale=1e-12).delta(1.0)", None, None, ("scale",)),
    ("delta", "PLD.from_discrete_laplace(scale=1e-300).delta(1.0)", None, None, ("scale",)),
    ("epsilon", "PLD.from_noise(Gaussian(), scale=3e4).self_compose(10**9).epsilon(1e-5)", None, None, ("k", "scale")),
    ("epsilon", "PLD.from_noise(Gaussian(), scale=1.0).self_compose(2**31).epsilon(1e-5)", None, None, ("k", "scale")),
    # Calibration at the edges: a scale, or an error naming the argument.
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1e-12, delta=1e-5)", None, None, ("epsilon",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=50.0, delta=1e-5)", None, None, ("epsilon",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-300)", None, None, ("delta",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=5e-324)", None, None, ("delta",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, steps=10**12)", None, None, ("steps",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, steps=2**62)", None, None, ("steps",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, rtol=1e-15)", None, None, ("rtol",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, steps=1000, sampling_rate=0.01, rtol=1e-15)",
     None, None, ("rtol",)),
    ("scale", "PLD.calibrate(Gaussian(), epsilon=1.0, delta=1e-5, sampling_rate=1e-12)", None, None, ("sampling_rate",)),
]


def _run(call: str) -> dict:
    try:
        res = subprocess.run([sys.executable, "-c", _WORKER, call, str(LIMIT_BYTES)], capture_output=True, text=True,
                             timeout=TIMEOUT, env=subprocess_env(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call}: still running after {TIMEOUT:g} s")
    assert res.returncode == 0, (call, res.returncode, res.stderr[-1500:])
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind, call, mu, eps, names", CASES, ids=[c[1] for c in CASES])
def test_an_edge_call_answers_correctly_or_names_an_argument(kind, call, mu, eps, names):
    out = _run(call)
    if "error" in out:
        msg = out["message"]
        assert any(n in msg for n in names), (call, out)
        return
    vals = out["result"]
    assert all(math.isfinite(v) or (kind == "epsilon" and v == math.inf) for v in vals), (call, vals)
    if kind == "scale":
        assert vals[0] > 0.0, (call, vals)
        return
    lo, up = vals
    assert 0.0 <= lo <= up, (call, vals)
    if kind in ("delta", "gdp"):
        assert up <= 1.0, (call, vals)
    if kind == "gdp":
        exact = _gdp_delta(mu, eps)
        assert mp.mpf(lo) <= exact <= mp.mpf(up), (call, vals, mp.nstr(exact, 17))
