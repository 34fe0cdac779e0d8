"""A table-driven fuzzer over the public API: every listed argument of every listed function gets NaN,
inf, -0.0, extreme magnitudes, empty and 0-d arrays, non-contiguous, big-endian, float16, bool, complex,
object and string values, None, huge sizes and odd thread counts. Each function runs in its own
subprocess with a time limit: no crash, no hang, no exception other than a clear ValueError/TypeError
(or the library's own errors), and no silent NaN from finite inputs."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from support.paths import TESTS_DIR, subprocess_env  # noqa: E402

WORKER = TESTS_DIR / "support" / "fuzz_worker.py"
N = "number"
SPECS = [
    ("minimal_scale", "dp.minimal_scale", "dict(noise=dp.Gaussian(), epsilon=1.0, delta=1e-6, sensitivity=1.0)",
     {"epsilon": N, "delta": N, "sensitivity": N}),
    ("minimal_scale_subbotin", "dp.minimal_scale", "dict(noise=dp.Subbotin(3), epsilon=1.0, delta=1e-6)", {"epsilon": N, "delta": N}),
    ("privacy_profile", "dp.privacy_profile", "dict(noise=dp.Laplace(), epsilon=1.0, scale=2.0)",
     {"epsilon": N, "scale": N, "sensitivity": N}),
    ("epsilon_for_delta", "dp.epsilon_for_delta", "dict(noise=dp.Logistic(), delta=1e-6, scale=2.0)", {"delta": N, "scale": N}),
    ("Subbotin", "dp.Subbotin", "dict(r=3.0)", {"r": N}),
    ("Gaussian.logsf", "dp.Gaussian().logsf", "dict(x=1.0)", {"x": N}),
    ("Subbotin.ppf", "dp.Subbotin(3).ppf", "dict(q=0.3)", {"q": N}),
    ("Truncated.variance", "lambda bound: dp.Truncated(dp.Gaussian(), bound).variance", "dict(bound=3.0)", {"bound": N}),
    ("select_subbotin", "dp.select_subbotin", "dict(epsilon=1.0, delta=1e-4, dimension=10, linf_sensitivity=0.01)",
     {"epsilon": N, "linf_sensitivity": N}),
    ("linear_query_sensitivity", "dp.linear_query_sensitivity", "dict(p=2.0, dimension=10, linf_diameter=1.0, weight=0.5)",
     {"p": N, "linf_diameter": N, "weight": N}),
    ("GaussianMechanism", "dp.GaussianMechanism", "dict(epsilon=1.0, delta=1e-6, sensitivity=1.0)",
     {"epsilon": N, "delta": N, "sensitivity": N}),
    ("SubbotinMechanism", "dp.SubbotinMechanism", "dict(r=3.0, epsilon=1.0, delta=1e-6, sensitivity=1.0)", {"sensitivity": N}),
    ("release_laplace", "dp.release_laplace", "dict(values=np.zeros(3), epsilon=1.0, sensitivity=1.0, rng=dp.Random(1))",
     {"values": N, "epsilon": N, "sensitivity": N}),
    ("release_gaussian", "dp.release_gaussian", "dict(values=np.zeros(3), epsilon=1.0, delta=1e-6, rng=dp.Random(1))",
     {"values": N, "delta": N}),
    ("discrete_gaussian_log_delta", "dp.release.discrete_gaussian_log_delta", "dict(epsilon=1.0, sigma2=4, shift=1)",
     {"epsilon": N, "sigma2": N, "shift": N}),
    ("sample_discrete_laplace", "dp.release.sample_discrete_laplace", "dict(t=3, size=5, rng=dp.Random(1))", {"t": N, "size": "size"}),
    ("Random.normal", "dp.Random(1).normal", "dict(loc=0.0, scale=1.0, size=5)", {"loc": N, "scale": N, "size": "size"}),
    ("Random.subbotin", "dp.Random(1).subbotin", "dict(r=3.0, size=5)", {"r": N, "size": "size"}),
    ("Random.gamma", "dp.Random(1).gamma", "dict(shape=0.5, size=5)", {"shape": N, "size": "size"}),
    ("Random.logistic", "dp.Random(1).logistic", "dict(scale=1.0, size=5)", {"scale": N}),
    ("Random.threads", "dp.Random", "dict(seed=1, threads=2)", {"threads": "threads"}),
    ("PureDP.to_gdp", "lambda epsilon: dp.PureDP(epsilon).to_gdp()", "dict(epsilon=1.0)", {"epsilon": N}),
    ("PureDP.rdp_epsilon", "dp.PureDP(1.0).rdp_epsilon", "dict(alpha=2.0)", {"alpha": N}),
    ("GDP.to_approx_dp", "dp.GDP(1.0).to_approx_dp", "dict(delta=1e-5)", {"delta": N}),
    ("gdp.gdp_epsilon", "dp.gdp.gdp_epsilon", "dict(psi=1.0, delta=1e-5)", {"psi": N, "delta": N}),
    ("gaussian_sigma", "dp.gaussian_sigma", "dict(budget=dp.ApproxDP(1.0, 1e-5), sensitivity=1.0)", {"sensitivity": N}),
    ("subsample", "dp.subsample", "dict(budget=dp.RDP(10, 3.0), rate=0.02)", {"rate": N}),
    ("spend_laplace", "dp.Accountant(dp.PureDP(10.0)).spend_laplace", "dict(scale=2.0)", {"scale": N, "sensitivity": N}),
    ("rao.calibrate", "dp.rao.calibrate", "dict(noise=dp.Subbotin(3), theta=0.5)", {"theta": N, "sensitivity": N}),
    ("manifolds.gdp_mu", "dp.manifolds.gdp_mu", "dict(manifold=dp.manifolds.Sphere(2), sigma=1.0, sensitivity=1.0)",
     {"sigma": N, "sensitivity": N}),
    ("manifolds.Sphere.dist", "dp.manifolds.Sphere(2).dist", "dict(x=np.array([1.0, 0, 0]), y=np.array([0, 1.0, 0]))", {"x": N}),
    ("special.log_ndtr", "dp.special.log_ndtr", "dict(x=1.0)", {"x": N}),
    ("special.gammaincc", "dp.special.gammaincc", "dict(a=0.5, x=1.0)", {"a": N, "x": N}),
    ("privatize", "dp.privatize", "dict(data=np.zeros(4), mechanism=dp.LaplaceMechanism(epsilon=1.0), key=bytes(32))",
     {"data": N}),
]


def _run(spec):
    name, call, kwargs, args = spec
    payload = json.dumps({"name": name, "call": call, "kwargs": kwargs, "args": args})
    env = subprocess_env()
    try:
        res = subprocess.run([sys.executable, str(WORKER), payload], capture_output=True, text=True, timeout=600, env=env)
    except subprocess.TimeoutExpired:
        return [], f"{name}: the whole run hung (over 600 s)"
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    if res.returncode != 0:
        return rows, f"{name}: the worker died with status {res.returncode} after {len(rows)} calls: {res.stderr[-800:]}"
    return rows, None


@pytest.mark.parametrize("spec", SPECS, ids=[s[0] for s in SPECS])
def test_fuzz(spec, record_property):
    rows, died = _run(spec)
    assert died is None, died
    counts = Counter(r["outcome"] for r in rows)
    record_property("outcomes", dict(counts))
    bad = [f"{r['arg']}={r['value']}: {r['detail']}" for r in rows if r["outcome"] == "bad"]
    assert not bad, f"{spec[0]}: {len(bad)} bad outcomes of {len(rows)}:\n" + "\n".join(bad)
