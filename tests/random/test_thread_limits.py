"""threads= beyond what the system can start.

std::thread used to throw inside the pool loop, so the vector of joinable threads was destroyed during
unwinding and the process died in std::terminate (SIGABRT). The pool now runs on the threads it could
start; the output is the same as with one thread. The failure is provoked in a subprocess whose address
space is limited (as root a pids limit does not apply, but every thread stack needs 8 MiB of it), with a
time limit. The Python layer rejects absurd counts (and bool) with an error naming ``threads``.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from support.paths import subprocess_env  # noqa: E402

import pydp_core as dp

_SCRIPT = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from pydp_core import _core
    n = 1 << 21
    mu = np.full(n, 1.5)
    eps = np.linspace(0.0, 3.0, n)
    serial = _core.accounting.gdp_log_delta(mu, eps, 1)
    rng1 = _core.random.Generator(b"k" * 32, 0)
    ref = np.empty(1 << 22)
    _core.random.normal(rng1, ref, 0.0, 1.0, 1)
    # about 1.5 GiB of address space beyond what is mapped now: a few hundred 8 MiB thread stacks at most
    used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + (3 << 29), resource.RLIM_INFINITY))
    for threads in (10**6, 100000, 8191):
        many = _core.accounting.gdp_log_delta(mu, eps, threads)
        assert np.array_equal(many, serial), threads
    rng2 = _core.random.Generator(b"k" * 32, 0)
    out = np.empty(1 << 22)
    _core.random.normal(rng2, out, 0.0, 1.0, 10**6)
    assert np.array_equal(out, ref)
    print("ok")
""")


def test_more_threads_than_the_system_can_start_does_not_abort():
    res = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=300, env=subprocess_env())
    assert res.returncode == 0 and res.stdout.strip() == "ok", (res.returncode, res.stderr[-3000:])


@pytest.mark.parametrize("call", [
    lambda t: dp.Random(threads=t),
    lambda t: dp.gdp.gdp_epsilon(1.0, delta=1e-5, threads=t),
    lambda t: dp.gdp.gdp_delta(1.0, epsilon=1.0, threads=t),
    lambda t: dp.gdp.rdp_epsilon(1.0, alpha=2.0, delta=1e-5, threads=t),
], ids=["Random", "gdp.gdp_epsilon", "gdp.gdp_delta", "gdp.rdp_epsilon"])
@pytest.mark.parametrize("bad,exc", [(True, TypeError), (-1, ValueError), (10**6, ValueError), (2**64, ValueError),
                                     (1.5, TypeError), ("4", TypeError)])
def test_bad_thread_counts_name_threads(call, bad, exc):
    with pytest.raises(exc, match="threads"):
        call(bad)


def test_good_thread_counts_agree():
    ref = dp.gdp.gdp_epsilon(np.linspace(0.1, 5, 1000), delta=1e-6, threads=1)
    for t in (0, 2, 7, 4096):
        assert np.array_equal(dp.gdp.gdp_epsilon(np.linspace(0.1, 5, 1000), delta=1e-6, threads=t), ref)


def test_one_thread_cap_in_python_the_bindings_and_the_c_abi():
    import re

    from support.paths import REPO_ROOT

    from pydp_core import _core, _validation

    assert _validation.MAX_THREADS == _core.MAX_THREADS
    header = (REPO_ROOT / "csrc" / "include" / "pydp" / "capi.h").read_text()
    assert int(re.search(r"#define PYDP_MAX_THREADS (\d+)u", header).group(1)) == _core.MAX_THREADS
