"""Driver for instruction counts of the Gaussian minimal_scale (load-independent, unlike timings).

Solves the first N points of the bench_calibration.py grid (eps in [1e-3, 20], delta in [1e-300, 0.5],
log-uniform, seed 2) with one thread. Instructions per solve = (Ir(N = 10000) - Ir(N = 10)) / 9990:

    for n in 10 10000; do PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. valgrind --tool=callgrind \\
        --callgrind-out-file=/dev/null "$(python3 -c 'import sys; print(sys.executable)')" \\
        bench/callgrind_gaussian.py $n 2>&1 | grep Collected; done

(the real interpreter, not a pyenv shim script; PYTHONHASHSEED=0 makes the interpreter's own start-up
count repeatable and OPENBLAS_NUM_THREADS=1 stops idle BLAS threads spinning into it). Not collected by
pytest.
"""
import math
import sys

import numpy as np

import pydp_core as dp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
rng = np.random.default_rng(2)
eps = 10 ** rng.uniform(-3, math.log10(20.0), 10_000)
delta = 10 ** rng.uniform(-300, math.log10(0.5), 10_000)
dp._core.calibration.minimal_scale(dp.Gaussian().kernel, eps[:n], delta[:n], np.ones(n), 1)
