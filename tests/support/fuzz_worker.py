"""Run one public function with each bad argument and print one JSON line per call (used by
tests/hardening/test_fuzz_api.py in a subprocess with a time limit, so that a crash or a hang is seen, not suffered).

Outcomes: "ok" (returned, no NaN where the inputs had none), "error" (ValueError, TypeError, ImportError or
pydp_core's own errors, with a message), "bad" (any other exception, or a silent NaN or inf from finite
inputs)."""
from __future__ import annotations

import json
import math
import signal
import sys
import traceback

import numpy as np

import pydp_core as dp

ALLOWED = (ValueError, TypeError, ImportError, dp.CalibrationError, dp.BudgetExceededError)


def bad_numbers():
    """Named bad values for a numeric argument."""
    be = np.array([1.0, 2.0], dtype=">f8")
    return {
        "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0.0": -0.0, "zero": 0.0, "negative": -1.0,
        "huge": 1e308, "tiny": 1e-308, "denormal": 5e-324, "2**64": 2**64, "bool": True, "str": "1.0",
        "None": None, "complex": 1 + 1j, "empty": np.array([]), "float16": np.float16(1.5),
        "nan_array": np.array([1.0, np.nan]), "big_endian": be, "strided": np.arange(10.0)[::3],
        "object": np.array([1.0, None], dtype=object), "strings": np.array(["a", "b"]),
        "zero_d": np.array(1.0), "list": [1.0, 2.0], "ragged": [[1.0], [1.0, 2.0]],
    }


def bad_sizes():
    return {"1e12": 10**12, "2**64": 2**64, "negative": -1, "float": 1.5, "str": "3", "tuple_huge": (10**6, 10**6),
            "bool": True}


def bad_threads():
    return {"-1": -1, "1e6": 10**6, "bool": True, "float": 1.5, "2**31": 2**31, "str": "2"}


def finite_in(value):
    try:
        arr = np.asarray(value, dtype=float)
    except Exception:
        return False
    return bool(np.all(np.isfinite(arr)))


def classify(fn, kwargs, inputs_finite):
    try:
        out = fn(**kwargs)
    except ALLOWED as exc:
        return ("error", f"{type(exc).__name__}: {exc}"[:200]) if str(exc) else ("bad", f"{type(exc).__name__} without a message")
    except Exception as exc:  # noqa: BLE001 - the point is to catch what should not happen
        return "bad", f"{type(exc).__name__}: {exc}"[:200] + " | " + traceback.format_exc().splitlines()[-3][:120]
    if inputs_finite and out is not None:
        vals = out if isinstance(out, (tuple, list)) else (out,)
        for v in vals:
            try:
                arr = np.asarray(v, dtype=float)
            except Exception:
                continue
            if arr.size and np.isnan(arr).any():
                return "bad", "silent NaN"
    return "ok", ""


def main():
    spec = json.loads(sys.argv[1])
    ns = {"dp": dp, "np": np}
    fn = eval(spec["call"], ns)  # noqa: S307 - the spec is the test's own
    base = eval(spec["kwargs"], ns)  # noqa: S307
    kinds = spec["args"]
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("call took over 20 s")))
    for arg, kind in kinds.items():
        table = {"number": bad_numbers, "size": bad_sizes, "threads": bad_threads}[kind]()
        for label, value in table.items():
            kwargs = dict(base)
            kwargs[arg] = value
            finite = all(finite_in(v) for v in kwargs.values() if isinstance(v, (int, float, np.ndarray, list)))
            signal.alarm(20)
            try:
                outcome, detail = classify(fn, kwargs, finite)
            except TimeoutError as exc:
                outcome, detail = "bad", str(exc)
            finally:
                signal.alarm(0)
            print(json.dumps({"fn": spec["name"], "arg": arg, "value": label, "outcome": outcome, "detail": detail}), flush=True)


if __name__ == "__main__":
    main()
