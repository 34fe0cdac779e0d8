"""Run one expression in a fresh interpreter with a time limit, so that a crash or a hang fails a test
instead of taking the test run with it."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from .paths import subprocess_env

_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import pydp_core as dp
    from pydp_core import _core
    try:
        eval(sys.argv[1])
    except ({catch}) as exc:
        print(type(exc).__name__, exc)
    else:
        print("NO ERROR")
""")


def error_of(call: str, *, catch: tuple[type[BaseException], ...], timeout: float) -> str:
    """The ``"Name message"`` of the exception among ``catch`` that ``call`` raises, or ``"NO ERROR"``.

    The expression sees ``np``, ``dp`` and ``_core``. A crash (the interpreter did not exit cleanly) and
    a run past ``timeout`` seconds fail the calling test.
    """
    script = _SCRIPT.format(catch=", ".join(c.__name__ for c in catch) + ",")
    try:
        res = subprocess.run([sys.executable, "-c", script, call], capture_output=True, text=True, timeout=timeout,
                             env=subprocess_env())
    except subprocess.TimeoutExpired:
        pytest.fail(f"{call!r} did not return within {timeout} s (a hang)")
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    return res.stdout.strip()
