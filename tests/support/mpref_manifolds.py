"""50-digit mpmath references of the manifold privacy losses, written from their definitions (Jiang et al. 2023).

The circle's profile as a direct integral, and the two tails P1(L > eps), P1(L < -eps) of the privacy loss
on S^2, S^3, H^2 and H^3 from the law of the angle at the first point."""

import mpmath as mp


def circle_delta_direct(eps, sigma, D):
    """delta(eps) on S^1 straight from the densities: P1(A) - e^eps P2(A), A = {loss >= eps}, 50 digits."""
    eps, sigma, D = mp.mpf(eps), mp.mpf(sigma), mp.mpf(D)
    C = mp.ncdf(mp.pi / sigma) - mp.ncdf(-mp.pi / sigma)

    def arc(a, b):
        return abs(((b - a + mp.pi) % (2 * mp.pi)) - mp.pi)

    def dens(th, eta):
        return mp.npdf(arc(th, eta) / sigma) / (sigma * C)

    def integrand(th):
        loss = (arc(th, D) ** 2 - arc(th, 0) ** 2) / (2 * sigma**2)
        return max(dens(th, 0) - mp.exp(eps) * dens(th, D), 0) if loss >= eps else 0

    a = sigma**2 * eps / (2 * mp.pi - D) - mp.pi + D / 2
    b = D / 2 - sigma**2 * eps / D
    pts = sorted({-mp.pi, a, b, D - mp.pi, mp.pi, D / 2 - mp.pi, D / 2})
    pts = [p for p in pts if -mp.pi <= p <= mp.pi]
    return mp.quad(integrand, pts)


def tails_s2(eps, sigma, D):
    """S^2: P1(L > eps), P1(L < -eps) by mpmath (phi uniform, P(cos phi < c) = 1 - acos(c)/pi)."""
    eps, sigma, D = mp.mpf(eps), mp.mpf(sigma), mp.mpf(D)

    def f(t):
        return mp.exp(-t * t / (2 * sigma**2)) * mp.sin(t)

    def pr_lt(t, r):  # P(d(eta2, y) > r | t)
        c = (mp.cos(r) - mp.cos(t) * mp.cos(D)) / (mp.sin(t) * mp.sin(D))
        if c <= -1:
            return mp.mpf(0)
        if c >= 1:
            return mp.mpf(1)
        return 1 - mp.acos(c) / mp.pi

    q = sigma**2 * eps
    up = lambda t: f(t) * pr_lt(t, mp.sqrt(t * t + 2 * q))  # noqa: E731
    lo = lambda t: f(t) * (0 if t * t <= 2 * q else 1 - pr_lt(t, mp.sqrt(t * t - 2 * q)))  # noqa: E731
    E = 2 * mp.pi - D
    kinks = [D / 2 - q / D, q / D - D / 2, D / 2 + q / D, mp.sqrt(2 * q), E / 2 - q / E, E / 2 + q / E]
    pts = sorted({mp.mpf(0), mp.pi, *[k for k in kinks if 0 < k < mp.pi]})
    Z = mp.quad(f, [0, mp.pi])
    return mp.quad(up, pts) / Z, mp.quad(lo, pts) / Z


def tails(eps, sigma, D, kind, d):
    """P1(L > eps), P1(L < -eps) on S^d (kind 'S') or H^d (kind 'H'), d in {2, 3}, by mpmath: the law of
    phi at eta1 gives P(cos phi < c) = 1 - acos(c)/pi (d = 2) or (1 + c)/2 (d = 3)."""
    eps, sigma, D = mp.mpf(eps), mp.mpf(sigma), mp.mpf(D)
    if kind == "S":
        S, C, top = mp.sin, mp.cos, mp.pi
    else:
        S, C, top = mp.sinh, mp.cosh, 12 + (d - 1) * sigma**2 + 30 * sigma

    def f(t):
        return mp.exp(-t * t / (2 * sigma**2)) * S(t) ** (d - 1)

    def p_far(t, r):  # P(d(eta2, y) > r | t): cos d2 = C t C D +- S t S D cos phi
        c = (C(r) - C(t) * C(D)) / (S(t) * S(D)) if kind == "S" else (C(t) * C(D) - C(r)) / (S(t) * S(D))
        c = max(min(c, 1), -1)
        return 1 - mp.acos(c) / mp.pi if d == 2 else (1 + c) / 2

    q = sigma**2 * eps
    up = lambda t: f(t) * p_far(t, mp.sqrt(t * t + 2 * q))  # noqa: E731
    lo = lambda t: f(t) * (0 if t * t <= 2 * q else 1 - p_far(t, mp.sqrt(t * t - 2 * q)))  # noqa: E731
    E = 2 * mp.pi - D
    kinks = [D / 2 - q / D, q / D - D / 2, D / 2 + q / D, mp.sqrt(2 * q)] + ([E / 2 - q / E, E / 2 + q / E] if kind == "S" else [])
    pts = sorted({mp.mpf(0), top, *[k for k in kinks if 0 < k < top]} | ({1, 2, 4, 8} if kind == "H" else set()))
    Z = mp.quad(f, pts)
    return mp.quad(up, pts) / Z, mp.quad(lo, pts) / Z

