"""The discrete Gaussian privacy profile at small sigma2 and large shifts.

With sigma2 below about 0.75 and a shift above about 80 sigma the sum used to start where the Gaussian
factor had underflowed (delta 6.3e-106 where the exact delta is 1), and at sigma2 = 1/100 it never ended
(the loop waited for a positive sum, with a signed counter that overflowed). Each row of the grid runs
in a subprocess with a time limit, so a hang fails the test instead of hanging the suite; the values are
compared with a 50-digit mpmath enumeration of sum_y max(0, P(y) - e^eps P(y - k)).
"""
import json
import math
import subprocess
import sys
from fractions import Fraction

import mpmath as mp
import pytest
from support.paths import subprocess_env

SIGMA2 = [Fraction(1, 100), Fraction(1, 50), Fraction(1, 10), Fraction(1, 4), Fraction(1, 2), Fraction(3, 4),
          Fraction(1), Fraction(3), Fraction(10)]
SHIFTS = [1, 2, 5, 10, 20, 40, 80, 100, 128]
EPSILONS = [0.0, 0.5, 3.0, 30.0]

_WORKER = r"""
import json, sys
from fractions import Fraction
import pydp_core as dp
s2 = Fraction(sys.argv[1])
out = {}
for k in json.loads(sys.argv[2]):
    for e in json.loads(sys.argv[3]):
        out[f"{k} {e!r}"] = dp.release.discrete_gaussian_log_delta(epsilon=e, sigma2=s2, shift=k)
print(json.dumps(out))
"""


def _ref_log_delta(eps: float, s2: Fraction, k: int):
    """log of sum_y max(0, P(y) - e^eps P(y - k)), P(y) = exp(-y^2 / (2 s2)) / Z, in 50 digits."""
    with mp.workdps(50):
        v = mp.mpf(s2.numerator) / s2.denominator
        e = mp.exp(mp.mpf(eps))
        reach = int(math.isqrt(int(2 * 200 * float(s2) + 1))) + 2  # exp(-y^2 / (2 s2)) < e^-200 beyond: Z

        def w(y):
            return mp.exp(-mp.mpf(y) ** 2 / (2 * v))

        z = sum(w(y) for y in range(-reach - 1, reach + 2))
        # Enumerate max(0, P(y) - e^eps P(y - k)) over a window: positive terms lie below c = k/2 - eps s2 / k,
        # and below min(c, 0) they fall by more than e^-200 within `reach` steps.
        c = k / 2 - eps * float(s2) / k
        top = math.floor(c) + 1
        total = mp.fsum(max(mp.mpf(0), w(y) - e * w(y - k)) for y in range(min(top, 0) - reach, top + 1))
        return mp.log(total / z)


@pytest.mark.parametrize("s2", SIGMA2, ids=str)
def test_discrete_gaussian_profile_small_sigma_large_shift(s2):
    try:
        res = subprocess.run([sys.executable, "-c", _WORKER, str(s2), json.dumps(SHIFTS), json.dumps(EPSILONS)],
                             capture_output=True, text=True, timeout=60, env=subprocess_env())
    except subprocess.TimeoutExpired:
        pytest.fail(f"sigma2={s2}: discrete_gaussian_log_delta did not finish within 60 s (hang)")
    assert res.returncode == 0, res.stderr[-2000:]
    got = json.loads(res.stdout)
    bad = []
    for k in SHIFTS:
        for e in EPSILONS:
            g = got[f"{k} {e!r}"]
            ref = _ref_log_delta(e, s2, k)
            ok = math.isfinite(g) and abs(g - float(ref)) <= 1e-11 + 1e-11 * abs(float(ref))
            if not ok:
                bad.append(f"sigma2={s2} k={k} eps={e}: log delta {g!r}, exact {mp.nstr(ref, 17)}")
    assert not bad, "\n".join(bad)
