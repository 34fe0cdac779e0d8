"""Fork safety of the secure generator.

A secure ``Random()`` created before ``os.fork()`` must not give the same noise in the parent and the
children: each forked child re-keys from OS entropy (the words already buffered in the parent included).
A seeded ``Random(seed)`` keeps its determinism across a fork. Each scenario runs in a fresh interpreter
(no test-runner threads at fork time) with a time limit; it prints the draws as JSON.
"""
import json
import subprocess
import sys
import textwrap

import pytest
from support.paths import subprocess_env

_PRELUDE = """
import json, os, sys
import multiprocessing as mp
import pydp_core as dp

def draws(rng):
    # sequential buffered words, a bulk sampler (chunked, threaded), and a kernel of another area
    return [list(map(int, rng.random_raw(3))), [float(v) for v in rng.laplace(size=5)],
            [int(v) for v in dp.release.sample_discrete_laplace(3, size=5, rng=rng)]]
"""

_POOL = _PRELUDE + """
SEED = None if sys.argv[1] == "none" else int(sys.argv[1])
RNG = dp.Random(SEED)
RNG.random_raw(1)  # the parent has buffered words when it forks
STREAM = RNG.stream(7)
STREAM.random_raw(1)

def work(i):
    return {"rng": draws(RNG), "stream": draws(STREAM)}

if __name__ == "__main__":
    with mp.get_context("fork").Pool(3) as pool:
        kids = pool.map(work, range(6))
    print(json.dumps({"parent": work(0), "kids": kids}))
"""

_FORK = _PRELUDE + """
SEED = None if sys.argv[1] == "none" else int(sys.argv[1])
RNG = dp.Random(SEED)
RNG.normal(size=1)
out = []
for _ in range(3):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, json.dumps(draws(RNG)).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.waitpid(pid, 0)
    out.append(json.loads(data))
print(json.dumps({"parent": draws(RNG), "kids": out}))
"""


def _run(script: str, seed: str) -> dict:
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(script), seed], capture_output=True, text=True, timeout=120, env=subprocess_env())
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout)


def _flat(d):
    return json.dumps(d, sort_keys=True)


@pytest.mark.parametrize("script", [_POOL, _FORK], ids=["fork-pool", "os.fork"])
def test_secure_generator_differs_in_every_forked_process(script):
    out = _run(script, "none")
    seen = [_flat(out["parent"])] + [_flat(k) for k in out["kids"]]
    # a pool worker may run several tasks: draws within one process differ anyway, so all must be distinct
    assert len(set(seen)) == len(seen), "a forked child repeated another process's noise"
    for part in range(3):  # no single component is shared either (buffered words, bulk, discrete kernel)
        for key in ("rng", "stream") if script is _POOL else (None,):
            vals = [json.dumps((p[key] if key else p)[part]) for p in [out["parent"], *out["kids"]]]
            assert len(set(vals)) == len(vals), (key, part, vals)


def test_seeded_generator_keeps_its_stream_across_fork():
    out = _run(_FORK, "12345")
    first = _flat(out["kids"][0])
    assert all(_flat(k) == first for k in out["kids"]), "seeded streams must be reproducible in a forked child"
    assert _flat(out["parent"]) == first
