"""Independent 50-digit mpmath references for the special functions, the noise families and Lemma 1.

Written from the definitions (Vinterbo 2022, with the corrections derived in the proof pages), not from the C++ kernels:
nothing here imports pydp_core. Every reference works on the *exact* value of its double inputs
(``mpf(float(x))``) and returns an mpf; tests convert at the end. Results are cached per process, so
the test modules that share this file (through :func:`load`) share the work.

Conventions (standardised units, Lemma 2): the mechanism adds ``scale * X`` to a query of sensitivity D;
everything depends on the shift ``d = D / scale`` only. Lemma 1:

    delta(eps, d) = S(u - d) - e^eps S(u),   u = sup{z : psi(z) - psi(z - d) <= eps},

with f = exp(-psi) the standard density and S its survival function. For a family truncated to
(-A, A) the privacy-loss set is {z > min(u, A)} (on [A, A + d) only the shifted density is positive),
so delta = S_T(min(u, A) - d) - e^eps S_T(min(u, A)).
"""
from __future__ import annotations

import functools
import math

import mpmath as mp

DPS = 50  # digits of the references
_WORK = 70  # internal digits (cancellation in delta = A - e^eps B and in truncations)
mpf = mp.mpf


def X(x) -> mp.mpf:
    """The exact value of a double."""
    return mpf(float(x))


def rel_err(got: float, ref) -> float:
    """|got - ref| / |ref| in 50-digit arithmetic (0 when both are equal, inf on a sign/inf mismatch)."""
    with mp.workdps(DPS):
        if mp.isinf(ref) or ref == 0:
            return 0.0 if float(got) == float(ref) else math.inf
        if not math.isfinite(got):
            return math.inf
        return float(abs((X(got) - ref) / ref))


# ----------------------------------------------------------------------------------------------------
# Special functions
# ----------------------------------------------------------------------------------------------------
def _sqrt2():
    return mp.sqrt(2)


@functools.cache
def ndtr(x: float):
    with mp.workdps(_WORK):
        v = mp.erfc(-X(x) / _sqrt2()) / 2
    return +v


@functools.cache
def log_ndtr(x: float):
    with mp.workdps(_WORK):
        xx = X(x)
        if xx > 0:  # Phi(x) = 1 - Phi(-x): log1p keeps the tiny upper tail
            v = mp.log1p(-mp.erfc(xx / _sqrt2()) / 2)
        else:
            v = mp.log(mp.erfc(-xx / _sqrt2()) / 2)
    return +v


@functools.cache
def erfcx(x: float):
    with mp.workdps(_WORK):
        xx = X(x)
        if xx > 1e8:  # asymptotic series 1/(x sqrt(pi)) sum (-1)^n (2n-1)!! / (2x^2)^n: error < 1e-64
            t = 1 / (2 * xx * xx)
            v = (1 - t + 3 * t ** 2 - 15 * t ** 3 + 105 * t ** 4) / (xx * mp.sqrt(mp.pi))
        else:
            v = mp.exp(xx * xx) * mp.erfc(xx)
    return +v


@functools.cache
def ndtri(p: float):
    """Phi^{-1}(p): Newton on log Phi at 70 digits from scipy's double estimate (only a start point)."""
    from scipy.special import ndtri as sc_ndtri

    if p == 0.5:
        return mpf(0)
    with mp.workdps(_WORK):
        pp = X(p)
        lower = pp < mpf("0.5")
        q = pp if lower else 1 - pp  # solve for the lower-tail point, then mirror
        lq = mp.log(q)
        x = mpf(float(sc_ndtri(float(q))))
        for _ in range(100):
            lphi = mp.log(mp.erfc(-x / _sqrt2()) / 2)
            dens = mp.exp(-x * x / 2 - lphi) / mp.sqrt(2 * mp.pi)  # d log Phi / dx
            step = (lphi - lq) / dens
            x -= step
            if abs(step) <= abs(x) * mpf(10) ** (-(_WORK - 5)):
                break
        v = x if lower else -x
    return +v


@functools.cache
def gammaincc(a: float, x: float):
    """Regularised upper incomplete gamma Q(a, x)."""
    with mp.workdps(_WORK):
        v = mp.gammainc(X(a), X(x), mp.inf, regularized=True)
    return +v


@functools.cache
def gammainc(a: float, x: float):
    """Regularised lower incomplete gamma P(a, x)."""
    with mp.workdps(_WORK):
        v = mp.gammainc(X(a), 0, X(x), regularized=True)
    return +v


def log_gammaincc(a: float, x: float):
    with mp.workdps(_WORK):
        p = gammainc(a, x)
        v = mp.log1p(-p) if p < mpf("0.5") else mp.log(gammaincc(a, x))
    return +v


def log_gammainc(a: float, x: float):
    with mp.workdps(_WORK):
        q = gammaincc(a, x)
        v = mp.log1p(-q) if q < mpf("0.5") else mp.log(gammainc(a, x))
    return +v


def dlogq_dlogx(a: float, x: float):
    """d log Q(a, x) / d log x = -x^a e^{-x} / (Gamma(a) Q(a, x)): the condition number of log Q in x."""
    with mp.workdps(_WORK):
        xx = x if isinstance(x, mp.mpf) else X(x)
        q = mp.gammainc(X(a), xx, mp.inf, regularized=True)
        v = -mp.exp(X(a) * mp.log(xx) - xx - mp.loggamma(X(a))) / q
    return +v


# ----------------------------------------------------------------------------------------------------
# Noise families (standard, unit scale), from their definitions
# ----------------------------------------------------------------------------------------------------
class RefFamily:
    """psi, log f and log S of a standard symmetric log-concave family; subclasses give the formulas."""

    mlr_bounded = False
    bound = mp.inf

    # Required: logpdf(x) (mpf in, mpf out) and logsf_pos(x) = log S(x) for x >= 0.
    def logpdf(self, x):
        raise NotImplementedError

    def logsf_pos(self, x):
        raise NotImplementedError

    def logsf(self, x):
        if x >= 0:
            return self.logsf_pos(x)
        return mp.log1p(-mp.exp(self.logsf_pos(-x)))

    def sf(self, x):
        return mp.exp(self.logsf(x))

    def logcdf(self, x):
        return self.logsf(-x)

    def cdf(self, x):
        return mp.exp(self.logsf(-x))

    def pdf(self, x):
        return mp.exp(self.logpdf(x))

    def psi_diff(self, u, d):
        """psi(u) - psi(u - d) = log f(u - d) - log f(u)."""
        return self.logpdf(u - d) - self.logpdf(u)

    def psi_diff_prime(self, u, d):
        """d/du [psi(u) - psi(u - d)] = psi'(u) - psi'(u - d)."""
        return self.dlogpdf(u - d) - self.dlogpdf(u)

    far = mpf(10) ** 7  # a y with log S(y) < -1e7 (so delta is far below any target beyond it)

    def dlogpdf(self, x):
        """(log f)'(x) = -psi'(x)."""
        raise NotImplementedError

    def variance(self):
        raise NotImplementedError

    def condition(self, method: str, x):
        """Relative condition number |x g'(x) / g(x)| of g = ``method`` at x: the factor by which a
        relative perturbation of x (one rounding of x or of x^r inside any implementation) is amplified."""
        if x == 0:
            return mpf(0)
        lf = self.logpdf(x)
        if lf == mpf("-inf"):
            return mpf(0)
        if method == "pdf":
            return abs(x * self.dlogpdf(x))
        if method == "logpdf":
            return abs(x * self.dlogpdf(x) / lf) if lf != 0 else mpf(0)
        tail = self.logsf(x) if method in ("sf", "logsf") else self.logcdf(x)
        if tail == mpf("-inf"):
            return mpf(0)
        c = abs(x) * mp.exp(lf - tail)  # |x| f / S  (or |x| f / F)
        if method in ("sf", "cdf"):
            return c
        return c / abs(tail) if tail != 0 else mpf(0)


class RefLaplace(RefFamily):
    mlr_bounded = True

    def logpdf(self, x):
        return -abs(x) - mp.log(2)

    def logsf_pos(self, x):
        return -x - mp.log(2)

    def dlogpdf(self, x):
        return -mp.sign(x)

    def variance(self):
        return mpf(2)


class RefGaussian(RefFamily):
    def logpdf(self, x):
        return -x * x / 2 - mp.log(2 * mp.pi) / 2

    def logsf_pos(self, x):
        return mp.log(mp.erfc(x / mp.sqrt(2)) / 2)

    def psi_diff(self, u, d):
        return d * (u - d / 2)

    far = mpf(5000)

    def dlogpdf(self, x):
        return -x

    def variance(self):
        return mpf(1)


class RefLogistic(RefFamily):
    mlr_bounded = True

    def logpdf(self, x):
        ax = abs(x)
        return -ax - 2 * mp.log1p(mp.exp(-ax))

    def logsf_pos(self, x):  # S(x) = 1 / (1 + e^x)
        return -x - mp.log1p(mp.exp(-x))

    def dlogpdf(self, x):
        return -mp.tanh(x / 2)

    def psi_diff(self, u, d):
        """psi(z) = |z| + 2 log1p(e^-|z|): the difference of the linear parts is formed exactly."""
        v = u - d
        return (abs(u) - abs(v)) + 2 * (mp.log1p(mp.exp(-abs(u))) - mp.log1p(mp.exp(-abs(v))))

    def psi_diff_prime(self, u, d):  # tanh(u/2) - tanh((u-d)/2) = sinh(d/2) / (cosh(u/2) cosh((u-d)/2))
        return mp.sinh(d / 2) / (mp.cosh(u / 2) * mp.cosh((u - d) / 2))

    def variance(self):
        return mp.pi ** 2 / 3


class RefSubbotin(RefFamily):
    """f_r(x) = exp(-|x|^r / r) / C(r), C(r) = 2 Gamma(1/r) r^(1/r - 1); S(x) = Q(1/r, x^r / r) / 2."""

    def __init__(self, r: float):
        self.r = X(r)
        self.a = 1 / self.r
        self.log_c = mp.log(2) + mp.loggamma(self.a) + (self.a - 1) * mp.log(self.r)

    def logpdf(self, x):
        return -(abs(x) ** self.r) / self.r - self.log_c

    def logsf_pos(self, x):
        if x == 0:
            return -mp.log(2)
        z = x ** self.r / self.r
        return mp.log(mp.gammainc(self.a, z, mp.inf, regularized=True)) - mp.log(2)

    def dlogpdf(self, x):
        return -mp.sign(x) * abs(x) ** (self.r - 1)

    def psi_diff(self, u, d):
        """(|u|^r - |u - d|^r) / r; for u > d as -u^r expm1(r log1p(-d/u)) / r (no cancellation)."""
        r = self.r
        if u > d:
            return -(u ** r) * mp.expm1(r * mp.log1p(-d / u)) / r
        return (abs(u) ** r - abs(u - d) ** r) / r

    def psi_diff_prime(self, u, d):
        r = self.r
        if u > d:
            return -(u ** (r - 1)) * mp.expm1((r - 1) * mp.log1p(-d / u))
        return abs(u) ** (r - 1) + abs(u - d) ** (r - 1)

    @property
    def far(self):
        return (self.r * mpf("1.1e7")) ** (1 / self.r) + 1

    def variance(self):
        r = self.r
        return r ** (2 / r) * mp.gamma(3 / r) / mp.gamma(1 / r)


class RefTruncated(RefFamily):
    """``base`` restricted to (-A, A) and renormalised: S_T(x) = (S(x) - S(A)) / (1 - 2 S(A)).

    S(x) - S(A) cancels for x near A, so the tails are formed with 40 extra digits (enough for the
    test grids, which stay at relative distances >= 1e-12 from the bound and q >= 1e-30).
    """

    def __init__(self, base: RefFamily, bound: float):
        self.base = base
        self.bound = X(bound)
        self.mlr_bounded = base.mlr_bounded

    def _log_sa_mass(self):
        log_sa = self.base.logsf_pos(self.bound)
        return log_sa, mp.log1p(-2 * mp.exp(log_sa))

    def dlogpdf(self, x):
        return self.base.dlogpdf(x)

    def logpdf(self, x):
        if abs(x) >= self.bound:
            return mpf("-inf")
        return self.base.logpdf(x) - self._log_sa_mass()[1]

    def logsf(self, x):
        if x <= -self.bound:
            return mpf(0)
        if x >= self.bound:
            return mpf("-inf")
        with mp.workdps(mp.mp.dps + 40):
            log_sa, log_mass = self._log_sa_mass()
            if x < 0:  # 1 - S_T(-x): log1p keeps the tiny values near -A
                v = mp.log1p(-mp.exp(self.logsf(-x)))
            else:
                ls = self.base.logsf(x)
                v = ls + mp.log(-mp.expm1(log_sa - ls)) - log_mass
        return +v

    def logsf_pos(self, x):
        return self.logsf(x)

    def psi_diff(self, u, d):
        return self.base.psi_diff(u, d)

    def variance(self):
        m = mp.quad(lambda t: t * t * mp.exp(self.base.logpdf(t)), [0, min(self.bound, 1), self.bound])
        return 2 * m / mp.exp(self._log_sa_mass()[1])


@functools.cache
def family(key: tuple) -> RefFamily:
    """key: ("Laplace",), ("Gaussian",), ("Logistic",), ("Subbotin", r), ("Truncated", base_key, A)."""
    kind = key[0]
    if kind == "Laplace":
        return RefLaplace()
    if kind == "Gaussian":
        return RefGaussian()
    if kind == "Logistic":
        return RefLogistic()
    if kind == "Subbotin":
        return RefSubbotin(key[1])
    if kind == "Truncated":
        return RefTruncated(family(key[1]), key[2])
    raise KeyError(key)


@functools.cache
def evaluate(key: tuple, method: str, x: float):
    """One of logpdf, pdf, logsf, sf, logcdf, cdf of family ``key`` at the exact double x."""
    f = family(key)
    with mp.workdps(_WORK):
        v = getattr(f, method)(X(x))
    return +v


@functools.cache
def ppf(key: tuple, q: float):
    """x with P(X <= x) = q, by a bracketed root find on log S in 70 digits."""
    f = family(key)
    if q == 0.5:
        return mpf(0)
    with mp.workdps(_WORK):
        qq = X(q)
        lower = qq < mpf("0.5")
        tail = qq if lower else 1 - qq  # the tail mass: find y >= 0 with S(y) = tail
        lt = mp.log(tail)
        lo, hi = mpf(0), mpf(1)
        bound = f.bound
        if bound != mp.inf:
            hi = bound
        else:
            while f.logsf(hi) > lt:
                lo, hi = hi, hi * 2
        y = _newton_increasing(lambda y: lt - f.logsf(y), lambda y: mp.exp(f.logpdf(y) - f.logsf(y)), lo, hi)
        v = -y if lower else y
    return +v


@functools.cache
def variance(key: tuple):
    with mp.workdps(_WORK):
        v = family(key).variance()
    return +v


# ----------------------------------------------------------------------------------------------------
# Lemma 1: threshold, privacy profile, minimal scale
# ----------------------------------------------------------------------------------------------------
def _newton_increasing(g, dg, lo, hi, x0=None, rel=None, max_iter=400):
    """Root of an increasing g in a bracket [lo, hi] (g(lo) <= 0 <= g(hi)): Newton, with a bisection
    (geometric while the bracket spans more than a factor 4) whenever Newton would leave the bracket."""
    if rel is None:
        rel = mpf(10) ** (-(mp.mp.dps - 10))
    x = (lo + hi) / 2 if x0 is None or not (lo <= x0 <= hi) else x0
    for _ in range(max_iter):
        gx = g(x)
        if gx == 0:
            return x
        if gx < 0:
            lo = x
        else:
            hi = x
        slope = dg(x) if mp.isfinite(gx) else mpf(0)
        nxt = x - gx / slope if slope > 0 else None
        if nxt is not None and abs(nxt - x) <= rel * abs(x):
            return nxt
        if nxt is None or not (lo < nxt < hi):
            nxt = mp.sqrt(lo * hi) if (lo > 0 and hi > 4 * lo) else (lo + hi) / 2
        if abs(nxt - x) <= rel * abs(x) or hi - lo <= rel * abs(hi):
            return nxt
        x = nxt
    raise ArithmeticError("reference root finder did not converge")


def threshold(f: RefFamily, eps, d, capped=True):
    """u = sup{z >= d/2 : psi(z) - psi(z - d) <= eps} of the *untruncated* density (mp.inf if unbounded).

    psi(z) - psi(z - d) is nondecreasing on z >= d/2 for a convex even psi. The Laplace and Logistic
    differences tend to d from below, so u = inf exactly when eps >= d (the Laplace difference reaches
    d at z = d; its sup{...} is then +inf as well).
    """
    if isinstance(f, RefTruncated):
        f = f.base
    lo = d / 2
    if eps <= 0:
        return lo
    if f.mlr_bounded and eps >= d:
        return mp.inf
    if isinstance(f, RefLaplace):
        return (eps + d) / 2
    if isinstance(f, RefGaussian):
        return eps / d + d / 2
    hi = max(d, mpf(1))
    cap = f.far + d
    while f.psi_diff(hi, d) <= eps:
        lo, hi = hi, hi * 2
        if capped and lo > cap:
            return lo  # a lower bound: u - d is so far out that delta < e^(-1e7) (see _profile_parts)
    return _newton_increasing(lambda z: f.psi_diff(z, d) - eps, lambda z: f.psi_diff_prime(z, d), lo, hi)


_FAR = mpf(-10) ** 7  # log delta below this is reported as this upper bound (only its sign matters)


def _profile_parts(f: RefFamily, eps, d):
    """(log delta, u) in the current precision; log delta = -inf for delta = 0.

    Where the threshold is so far out that log S(u - d) < -1e7, delta is far below every target and
    the exact value would need thousands of digits; the bound log S(u' - d) is returned instead
    (u' <= u is the lower bound threshold() stops at, and log delta <= log S(u - d) <= log S(u' - d)).
    """
    if isinstance(f, RefTruncated) and d >= 2 * f.bound:
        return mpf(0), f.bound
    u = threshold(f, eps, d)
    if isinstance(f, RefTruncated):
        u = min(u, f.bound)
    if u == mp.inf:
        return mpf("-inf"), u
    la = f.logsf(u - d)
    if la < _FAR:
        return la, u
    lb = f.logsf(u)
    x = eps + lb - la
    if x >= 0:
        return mpf("-inf"), u
    return la + mp.log(-mp.expm1(x)), u


def _log_profile(f, eps, d):
    return _profile_parts(f, eps, d)[0]


@functools.cache
def log_privacy_profile(key: tuple, eps: float, scale: float, sensitivity: float = 1.0):
    """log delta for q(d) + scale * X, sensitivity D, at the exact doubles given."""
    f = family(key)
    with mp.workdps(_WORK):
        v = _log_profile(f, X(eps), X(sensitivity) / X(scale))
    return +v


def privacy_profile(key, eps, scale, sensitivity=1.0):
    with mp.workdps(_WORK):
        v = mp.exp(log_privacy_profile(key, eps, scale, sensitivity))
    return +v


def hockey_stick(key: tuple, eps: float, scale: float, sensitivity: float = 1.0):
    """delta by direct quadrature of int max(0, f(z - d) - e^eps f(z)) dz (no Lemma 1 at all).

    The integrand is positive exactly where psi(z) - psi(z - d) > eps. The quadrature is split at d/2,
    at the support edges and at the zero of the integrand found by bisection on a grid of the integrand
    itself (not by the threshold code above). Moderate delta only.
    """
    f = family(key)
    with mp.workdps(30):
        dd, ee = X(sensitivity) / X(scale), X(eps)
        bound = f.bound

        def log_ratio(z):  # log f(z - d) - eps - log f(z); +inf where only the shifted density lives
            a = f.logpdf(z - dd)
            b = f.logpdf(z)
            if a == mpf("-inf"):
                return mpf("-inf")
            if b == mpf("-inf"):
                return mp.inf
            return a - ee - b

        def integrand(z):
            lr = log_ratio(z)
            if lr <= 0:
                return mpf(0)
            a = f.logpdf(z - dd)
            return mp.exp(a) * (-mp.expm1(-lr))

        lo = dd / 2
        hi = bound + dd if bound != mp.inf else dd + 60
        # log_ratio is nondecreasing on z >= d/2: bisect its sign change on [d/2, hi].
        a, b = lo, (hi - mpf(10) ** -20 if bound != mp.inf else hi)  # inside the shifted support
        if log_ratio(b) <= 0:
            a = b
        for _ in range(200):
            if log_ratio(a) > 0 or b - a < mpf(10) ** -25:
                break
            m = (a + b) / 2
            if log_ratio(m) > 0:
                b = m
            else:
                a = m
        z0 = b
        # breakpoints: the sign change, the kinks of the densities (0 and d) and the support edges
        kinks = [mpf(0), dd] + ([bound, -bound + dd, bound + dd] if bound != mp.inf else [])
        pts = sorted({z0, hi, *(k for k in kinks if z0 < k < hi)})
        v = mp.quad(integrand, pts)
    return +v


@functools.cache
def max_shift(key: tuple, eps: float, delta: float, guess: float = 0.0):
    """The exact d* = D / s* with delta(eps, d*) = delta: Lemma 2 makes the minimal scale D / s* = d*.

    log delta(eps, d) is increasing in d. Safeguarded Newton on w = log d (w = log(d - eps) for the
    Laplace and Logistic) with the envelope derivative d delta / d d = f(u - d). ``guess`` (for instance the value under test) is only a
    starting point: the answer is the root of the 70-digit condition, bracketed on both sides. For
    MLR-bounded families at delta = 0, d* = eps (t = inf iff d <= eps).
    """
    f = family(key)
    # MLR-bounded families: d* - eps is of order delta (Laplace) or sqrt(delta) (Logistic), so resolve
    # d* needs -log10(delta) extra digits.
    extra = int(-math.log10(delta)) + 10 if (f.mlr_bounded and 0 < delta < 1e-20) else 0
    with mp.workdps(_WORK + extra):
        ee = X(eps)
        if delta == 0:
            if not f.mlr_bounded or f.bound != mp.inf:
                raise ValueError("no finite scale")
            return +ee
        lt = mp.log(X(delta))
        # Unknown w: w = log(d - eps) for the MLR-bounded families on the whole line (delta = 0 for
        # d <= eps, and log delta ~ w near the root), else w = log d.
        excess = f.mlr_bounded and f.bound == mp.inf and ee > 0

        def shift(w):
            return ee + mp.exp(w) if excess else mp.exp(w)

        cache = {}

        def parts(w):
            if w not in cache:
                cache[w] = _profile_parts(f, ee, shift(w))
            return cache[w]

        def g(w):
            return parts(w)[0] - lt

        def dg(w):  # d log delta / dw = (dd/dw) f(u - d) / delta
            ld, u = parts(w)
            if ld == mpf("-inf") or ld < _FAR:
                return mpf(0)
            return mp.exp(w + f.logpdf(u - shift(w)) - ld)

        if guess > 0 and (not excess or X(guess) > ee):
            w0 = mp.log(X(guess) - ee) if excess else mp.log(X(guess))
            step = mpf("0.01")
        else:
            w0 = lt if excess else mpf(0)
            step = mpf(1)
        lo, hi = w0 - step, w0 + step
        while g(lo) > 0:
            lo, step = lo - 2 * step, 2 * step
        while g(hi) < 0:
            hi, step = hi + 2 * step, 2 * step
        w = _newton_increasing(g, dg, lo, hi, x0=w0, rel=mpf(10) ** -(_WORK - 15))
        res = shift(w)
    return +res


def minimal_scale(key: tuple, eps: float, delta: float, sensitivity: float = 1.0, guess: float = 0.0):
    """The exact minimal scale D / d*; ``guess`` is a starting point for d* only (see max_shift)."""
    with mp.workdps(_WORK):
        v = X(sensitivity) / max_shift(key, eps, delta, guess)
    return +v


@functools.cache
def epsilon_for_delta(key: tuple, delta: float, scale: float, sensitivity: float = 1.0):
    """The smallest eps >= 0 with delta(eps) <= delta (delta(eps) is decreasing in eps).

    Newton on eps with the envelope derivative d log delta / d eps = -e^eps S(u) / delta.
    """
    f = family(key)
    with mp.workdps(_WORK):
        d = X(sensitivity) / X(scale)
        lt = mp.log(X(delta))
        if _log_profile(f, mpf(0), d) <= lt:
            return mpf(0)
        cache = {}

        def parts(e):
            if e not in cache:
                cache[e] = _profile_parts(f, e, d)
            return cache[e]

        def g(e):  # increasing in e
            return lt - parts(e)[0]

        def dg(e):
            ld, u = parts(e)
            if ld == mpf("-inf") or ld < _FAR:
                return mpf(0)
            return mp.exp(e + f.logsf(u) - ld)

        lo, hi = mpf(0), max(d, mpf(1))
        while g(hi) < 0:
            lo, hi = hi, hi * 2
        v = _newton_increasing(g, dg, lo, hi, rel=mpf(10) ** -(_WORK - 15))
    return +v


def family_key(noise) -> tuple:
    """The reference key of a pydp_core family object (reads only its public attributes)."""
    name = type(noise).__name__
    if name == "Truncated":
        return ("Truncated", family_key(noise.base), float(noise.bound))
    if name == "Subbotin":
        r = float(noise.r)
        if r == 1.0:
            return ("Laplace",)
        if r == 2.0:
            return ("Gaussian",)
        return ("Subbotin", r)
    return (name,)


# ----------------------------------------------------------------------------------------------------
# The Riemannian Gaussian mechanism on the circle S^1
# ----------------------------------------------------------------------------------------------------
def _arc(x, y):
    """Geodesic (arc) distance between the angles x and y on the unit circle."""
    return abs(((x - y + mp.pi) % (2 * mp.pi)) - mp.pi)


@functools.cache
def circle_delta(eps: float, sigma: float, sensitivity: float):
    """delta(eps) of N_{S^1}(eta, sigma^2) against N_{S^1}(eta', sigma^2), d(eta, eta') = D, from the
    definition: the integral over the circle of (p - e^eps q)_+, p and q the densities
    exp(-d(eta, y)^2 / (2 sigma^2)) / Z with Z = sigma sqrt(2 pi) (Phi(pi/sigma) - Phi(-pi/sigma)).

    eta = 0, eta' = D. The integrand is written p (1 - e^(eps - L)) with L = (d(eta', y)^2 - d(eta, y)^2)
    / (2 sigma^2), so that it is non-negative term by term; mpmath quad is split at the kinks of the two
    distances (0, pi, D, D - pi) and at the points where p = e^eps q, found here by bisection on L - eps
    (L is piecewise monotone between the kinks), not from a closed form.
    """
    with mp.workdps(_WORK):
        e, s, D = X(eps), X(sigma), X(sensitivity)
        Z = s * mp.sqrt(2 * mp.pi) * (mp.ncdf(mp.pi / s) - mp.ncdf(-mp.pi / s))

        def loss(th):
            return (_arc(th, D) ** 2 - _arc(th, 0) ** 2) / (2 * s * s)

        def integrand(th, c=0):  # the density divided by e^c
            g = loss(th) - e
            if g <= 0:
                return mpf(0)
            return mp.exp(-_arc(th, 0) ** 2 / (2 * s * s) - c) * -mp.expm1(-g)

        kinks = sorted({-mp.pi, mp.pi, mpf(0), D, D - mp.pi, D / 2 - mp.pi, D / 2})
        pts = set(kinks)
        for lo, hi in zip(kinks[:-1], kinks[1:]):  # L is monotone on each piece: bisect for L = eps
            glo, ghi = loss(lo) - e, loss(hi) - e
            if glo * ghi < 0:
                a, b = lo, hi
                for _ in range(400):
                    m = (a + b) / 2
                    if (loss(m) - e) * glo > 0:
                        a = m
                    else:
                        b = m
                    if b - a < mpf(2) ** (-_WORK * 4):
                        break
                pts.add((a + b) / 2)
        pts = sorted(pts)
        # The Gaussian factor falls by e^-1 within sigma^2 / |theta| of a piece end away from 0 (and
        # within sigma of 0): split every piece geometrically from its end nearest 0, so that tanh-sinh
        # sees no sharp interior peak. mp.quad stops on an absolute error: the density is divided by its
        # largest value on the piece, so that the tolerance is relative.
        total = mpf(0)
        for lo, hi in zip(pts[:-1], pts[1:]):
            if not hi > lo or (integrand(lo) == 0 and integrand(hi) == 0 and integrand((lo + hi) / 2) == 0):
                continue
            sub = [lo, hi] + ([mpf(0)] if lo < 0 < hi else [])
            for a, b in zip(sorted(sub)[:-1], sorted(sub)[1:]):
                near, far = (a, b) if abs(a) <= abs(b) else (b, a)
                h = s * s / max(abs(near), s)
                cuts = [near, far]
                step = h / 4
                while step < abs(far - near):
                    cuts.append(near + step if far > near else near - step)
                    step *= 2
                c = -near * near / (2 * s * s)
                total += mp.quad(lambda th: integrand(th, c), sorted(cuts)) * mp.exp(c)
    return +(total / Z)


def _pdiff(a, b):
    """Phi(b) - Phi(a) for a <= b, from the tail on the side of the interval (no cancellation)."""
    if a >= 0:
        return mp.ncdf(-a) - mp.ncdf(-b)
    if b <= 0:
        return mp.ncdf(b) - mp.ncdf(a)
    return 1 - mp.ncdf(a) - mp.ncdf(-b)


@functools.cache
def circle_parts(eps: float, sigma: float, sensitivity: float):
    """(delta(eps), 1 - delta(eps)) on S^1 from the arcs where the privacy loss L exceeds eps.

    eta = 0, eta' = D, theta0 = D - pi (the antipode of eta'). L = (d(eta', y)^2 - d(eta, y)^2) / (2 sigma^2)
    is linear on each arc between the kinks; it reaches its largest value D (2 pi - D) / (2 sigma^2) at
    theta0 and falls with slope D / sigma^2 towards eta' and (2 pi - D) / sigma^2 towards -pi, so with
    g = largest - eps, {L > eps} = [theta0 - w_f, theta0 + w_n], w_n = sigma^2 g / D,
    w_f = sigma^2 g / (2 pi - D). Reflection theta -> D - theta swaps eta and eta' and negates L:
    {L < -eps} = [pi - w_n, pi] with [-pi, -pi + w_f]. delta = P1(L > eps) - e^eps P1(L < -eps) and
    1 - delta = P1(L <= eps) + e^eps P1(L < -eps), P1 the normal law on (-pi, pi] divided by its mass.
    (:func:`circle_delta` integrates the definition instead; the tests check the two agree.)
    """
    with mp.workdps(_WORK):
        return _circle_parts_mp(X(eps), X(sigma), X(sensitivity))


def mu_for_delta(eps, delta, comp, guess):
    """The mu with delta_mu(eps) = delta (from 1 - delta_mu = comp where delta is the nearer to 1),
    delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2): bisection in log mu to 1e-8, then
    secant steps on the logarithms to full precision."""
    with mp.workdps(_WORK):
        e = mpf(eps)
        if delta <= 0:
            return mpf(0)
        near_one = comp < delta

        def above(m):  # delta_mu(m) > delta?
            if near_one:
                return mp.ncdf(e / m - m / 2) + mp.exp(e) * mp.ncdf(-e / m - m / 2) < comp
            return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2) > delta

        lo, hi = mpf(guess) / 2, mpf(guess) * 2
        while above(lo):
            lo /= 2
        while not above(hi):
            hi *= 2
        while hi / lo - 1 > mpf(10) ** -8:
            mid = mp.sqrt(lo * hi)
            lo, hi = (lo, mid) if above(mid) else (mid, hi)

        def f(x):  # log delta_mu - log delta (or the same for the complements) at mu = e^x
            m = mp.exp(x)
            if near_one:
                return mp.log(comp) - mp.log(mp.ncdf(e / m - m / 2) + mp.exp(e) * mp.ncdf(-e / m - m / 2))
            return mp.log(mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)) - mp.log(delta)

        x = mp.findroot(f, (mp.log(lo), mp.log(hi)), solver="secant", tol=mpf(10) ** -60)
        if not mp.log(lo) - mpf(10) ** -6 <= x <= mp.log(hi) + mpf(10) ** -6:
            raise ArithmeticError("mu_for_delta: the secant steps left the bracket")
        return mp.exp(x)


@functools.cache
def circle_mu(sigma: float, sensitivity: float):
    """mu of the Riemannian Gaussian mechanism on S^1: the supremum over eps of mu_eps, from
    :func:`circle_parts`. A grid (0, E (k/32)^2 and 33 points around (D/sigma)^2 / 2, where a Gaussian
    mechanism's delta is moderate), then golden-section search on the bracket of the best point (mu_eps
    has one maximum per bracket there; 70 steps leave a bracket of 1e-14 of its width, so the error in
    mu, quadratic at an interior maximum, is below 1e-25 relative, as is the bisection's)."""
    with mp.workdps(_WORK):
        s, D = X(sigma), X(sensitivity)
        top = D * (2 * mp.pi - D) / (2 * s * s)
        mg = D / s
        grid = sorted({mpf(0), *[top * mpf(k) ** 2 / 32**2 for k in range(1, 32)],
                       *[mg * mg / 2 + mg * k / 2 for k in range(-16, 17) if 0 < mg * mg / 2 + mg * k / 2 < top]})

        def mu_at(e):
            d, c = _circle_parts_mp(e, s, D)
            return mu_for_delta(e, d, c, float(mg) if mg < 1e300 else 1.0)

        vals = [mu_at(e) for e in grid]
        i = max(range(len(grid)), key=lambda k: vals[k])
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        r = (mp.sqrt(5) - 1) / 2
        x1, x2 = b - r * (b - a), a + r * (b - a)
        f1, f2 = mu_at(x1), mu_at(x2)
        best = max(vals[i], f1, f2)
        for _ in range(70):
            if f1 >= f2:
                b, x2, f2 = x2, x1, f1
                x1 = b - r * (b - a)
                f1 = mu_at(x1)
            else:
                a, x1, f1 = x1, x2, f2
                x2 = a + r * (b - a)
                f2 = mu_at(x2)
            best = max(best, f1, f2)
        return +best


def _circle_parts_mp(e, s, D):
    """:func:`circle_parts` at mpf arguments."""
    top = D * (2 * mp.pi - D) / (2 * s * s)
    if e >= top:
        return mpf(0), mpf(1)
    g = top - e
    wn, wf, th0 = s * s * g / D, s * s * g / (2 * mp.pi - D), D - mp.pi
    C = _pdiff(-mp.pi / s, mp.pi / s)
    P = lambda a, b: _pdiff(a / s, b / s) / C  # noqa: E731
    up = P(th0 - wf, th0 + wn)
    low = P(mp.pi - wn, mp.pi) + P(-mp.pi, -mp.pi + wf)
    rest = P(-mp.pi, th0 - wf) + P(th0 + wn, mp.pi)
    return up - mp.exp(e) * low, rest + mp.exp(e) * low


# ----------------------------------------------------------------------------------------------------
# Comparison helpers
# ----------------------------------------------------------------------------------------------------
EPS_MACH = 2.0 ** -53  # unit roundoff
TINY = 2.0 ** -1022  # smallest normal double
SUB_ULP = 2.0 ** -1074  # spacing of the subnormals


def mismatch(got: float, ref, rtol: float, cond=0.0) -> str | None:
    """None if ``got`` matches the mpf ``ref``, else a description with the numbers.

    Relative error <= rtol + 4 * cond * EPS_MACH, where cond is the relative condition number of the
    quantity in its input (0 for well-conditioned ones): an error of that size is what perturbing the
    exact input by a few ulps produces, so no double implementation can be held to less. Where |ref|
    lies below the normal range the result may underflow: |got - ref| <= 2 subnormal ulps + rtol |ref|.
    """
    tol = rtol + 4.0 * float(cond) * EPS_MACH
    with mp.workdps(DPS):
        if not mp.isfinite(ref) or ref == 0:
            return None if float(got) == float(ref) else f"got {got!r}, expected {mp.nstr(ref, 17)}"
        if not math.isfinite(got):
            return f"got {got!r}, expected {mp.nstr(ref, 17)}"
        if abs(ref) < TINY:
            if abs(X(got) - ref) <= 2 * SUB_ULP + tol * abs(ref):
                return None
            return f"got {got!r}, expected {mp.nstr(ref, 17)} (subnormal range)"
        err = float(abs((X(got) - ref) / ref))
    if err <= tol:
        return None
    return f"got {got!r}, expected {mp.nstr(ref, 20)}, rel err {err:.3g} > tol {tol:.3g} (cond {float(cond):.3g})"


def profile_condition(key: tuple, eps: float, scale: float, sensitivity: float = 1.0):
    """Relative condition numbers of delta(eps, scale, D) in its inputs, summed:
    kappa_D = kappa_s = d f(u - d) / delta (d = D / s) and kappa_eps = eps e^eps S(u) / delta
    (envelope theorem). Rounding d = D / s once, or eps once, moves delta by kappa * 2^-53 relative."""
    f = family(key)
    with mp.workdps(_WORK):
        d, ee = X(sensitivity) / X(scale), X(eps)
        ld, u = _profile_parts(f, ee, d)
        if ld == mpf("-inf") or ld < _FAR:
            return 0.0
        k_d = d * mp.exp(f.logpdf(u - d) - ld)
        k_e = ee * mp.exp(ee + f.logsf(u) - ld) if u != mp.inf else 0
        return float(2 * k_d + k_e)


def laplace_renyi(alpha: float, b: float) -> mp.mpf:
    """D_alpha(Lap(1, b) || Lap(0, b)), the Renyi divergence of the Laplace mechanism, by quadrature of its definition."""
    with mp.workdps(50):
        a, b = mp.mpf(alpha), mp.mpf(b)
        p = lambda x: mp.exp(-abs(x - 1) / b) / (2 * b)  # noqa: E731
        q = lambda x: mp.exp(-abs(x) / b) / (2 * b)  # noqa: E731
        integral = mp.quad(lambda x: p(x) ** a * q(x) ** (1 - a), [-mp.inf, 0, 1, mp.inf])
        return mp.log(integral) / (a - 1)
