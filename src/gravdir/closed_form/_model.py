"""Roots of the canonical two-joint model: each lumped-mass model's equations, solved.

Every root finder takes the data vector ``d = (A1, phi1, A2, phi2[, A2', phi2'])`` (amplitudes
and phases of the J1 fit and of the J2 fit(s)) and returns an array ``(k, 7)`` of rows (see the
column indices below) and how far a clipped quantity lay beyond its admissible range (0 where
nothing was clipped). Besides the angles, each row carries what turns the
J1 fit's Cartesian coefficients into `up` (docs/closed_form.md, "`up` from the sinusoid
coefficients"): the horizontal part of `up` is ``K * R(arm_azimuth + delta) @ (-a1, b1)``, with
``K = sin(theta2) / A1`` written as a smooth function of the data wherever the root comes from
the amplitude ratio.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from gravdir.sweep import wrap_angle

# Columns of a root row.
THETA1, THETA2, BETA, L3_RATIO, MERGE, SCALE, DELTA = range(7)
N_COLUMNS = 7

# A polynomial root z = exp(iu) of the out-of-plane offset equation counts as real (on the unit
# circle) when ||z| - 1| is below ROOT_ATOL; above CLIP_ATOL it was pulled off the circle by noise
# (a tangent double root split into a complex pair) and the projection onto the circle is
# flagged `clipped`.
_ROOT_ATOL = 1e-3
_CLIP_ATOL = 1e-6
# Tolerance (rad) for accepting a computed theta2 just outside [0, pi] through rounding.
_RANGE_ATOL = 1e-12
# Standard-deviation floors of the out-of-plane consistency score (phase, rad; amplitude ratio,
# relative): a noise-free fit reports a covariance at the rounding level (~1e-15), and these
# floors, far above it and far below any noise a sweep leaves, keep the score finite.
_SCORE_PHASE_FLOOR = 1e-9
_SCORE_RATIO_FLOOR = 1e-9
# Two roots are the same when all their angles agree to this (rad): rounding only.
_DEDUPE_ATOL = 1e-12

# (root rows, excess): the excess is how far the clipped quantity lay beyond its admissible range
# (0.0 where nothing was clipped).
Roots = tuple[NDArray[np.float64], float]
RootFinder = Callable[[NDArray[np.float64]], Roots]


def wrap(x: float) -> float:
    """A scalar angle wrapped to (-pi, pi], as :func:`gravdir.sweep.wrap_angle` does."""
    w = (float(x) + math.pi) % (2.0 * math.pi) - math.pi
    return w + 2.0 * math.pi if w <= -math.pi else w


def _dedupe(rows: list[list[float]]) -> NDArray[np.float64]:
    """The distinct rows; a row with a non-finite entry (a lever arm that overflowed) is not a
    root."""
    out: list[list[float]] = []
    for row in rows:
        if not all(math.isfinite(v) for v in row):
            continue
        if not any(
            abs(wrap(row[THETA1] - o[THETA1])) < _DEDUPE_ATOL
            and abs(row[THETA2] - o[THETA2]) < _DEDUPE_ATOL
            and abs(wrap(row[BETA] - o[BETA])) < _DEDUPE_ATOL
            and abs(row[L3_RATIO] - o[L3_RATIO]) < _DEDUPE_ATOL
            for o in out
        ):
            out.append(row)
    return np.array(out, dtype=np.float64).reshape(-1, N_COLUMNS)


def _inverse(x: float) -> float:
    """1 / x for x >= 0, infinite at 0 (Python floats: an overflow gives infinity)."""
    return 1.0 / x if x > 0.0 else math.inf


def _offset_scale(theta2: float, s: float, lam: float, delta: float, a2: float) -> float:
    """sin(theta2) / A1 of an amplitude root: N / (A2 sqrt(s**2 + lambda**2)), smooth in A1."""
    n = math.sqrt(max(1.0 - (math.sin(theta2) * math.sin(delta)) ** 2, 0.0))
    return n * _inverse(a2 * math.hypot(s, lam))


def point_mass_roots(d: NDArray[np.float64], sigma: int, gamma: float) -> Roots:
    """Lumped point-mass model: sin(theta2) = A1 / (A2 sin(gamma)), two roots."""
    a1, phi1, a2 = float(d[0]), float(d[1]), float(d[2])
    lever = a2 * math.sin(gamma)
    x = a1 * _inverse(lever) if a1 > 0 else 0.0
    excess = max(x - 1.0, 0.0)
    t = math.asin(min(x, 1.0))
    theta1 = wrap(math.pi - phi1)
    # Clipped (x > 1): theta2 = 90 deg and `up` horizontal, along the J1 fit's direction.
    scale = _inverse(lever) if excess == 0.0 else _inverse(a1)
    rows = [[theta1, th, 0.0, 0.0, abs(th - math.pi / 2), scale, 0.0] for th in (t, math.pi - t)]
    return _dedupe(rows), excess


def l2_roots(d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float) -> Roots:
    """In-plane offset (L2): cos(a + 2t) = cos(a) - 2 sigma r, up to two admissible roots."""
    a1, phi1, a2, phi2 = (float(v) for v in d[:4])
    r = a1 / a2
    kappa = wrap(gamma0 + np.pi - phi2)
    a = gamma - kappa
    c = math.cos(a) - 2.0 * sigma * r
    excess = max(abs(c) - 1.0, 0.0)
    ac = math.acos(min(max(c, -1.0), 1.0))
    theta1 = wrap(np.pi - phi1)
    rows = []
    for sgn in (1.0, -1.0):
        t0 = (sgn * ac - a) / 2.0
        for k in range(-3, 4):
            t = t0 + k * np.pi
            theta2 = sigma * t
            if not -_RANGE_ATOL <= theta2 <= np.pi + _RANGE_ATOL:
                continue
            # The model assumes the mass on the arm's side of the J1 axis: sin(gamma + beta) > 0.
            s = float(np.sin(a + t))
            if s <= 0.0:
                continue
            beta = wrap(t - kappa)
            # Roots merge where the slope sin(a + 2t) of sin(a + t) sin t vanishes.
            merge = abs(wrap(2.0 * (a + 2.0 * t))) / 4.0
            theta2 = float(np.clip(theta2, 0.0, np.pi))
            rows.append([theta1, theta2, beta, 0.0, merge, _inverse(a2 * s), 0.0])
    return _dedupe(rows), excess


def theta2_from_inplane(t: float, delta: float) -> float:
    """theta2 from the in-plane angle t = theta2' and the azimuth offset delta."""
    n = 1.0 / np.sqrt(1.0 + (np.sin(t) * np.tan(delta)) ** 2)
    return float(np.arccos(np.clip(n * np.cos(t), -1.0, 1.0)))


def _trig_cubic_roots(
    f: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    df: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    r: float,
) -> tuple[list[float], float]:
    """Real roots u of a trigonometric polynomial f of degree 3, and how far the farthest
    clipped one lay off the unit circle (0.0 where none was clipped)."""
    # f's Fourier coefficients from 16 samples are exact (no aliasing) and z**3 f(u) is a
    # degree-6 polynomial in z = exp(iu).
    m = 16
    coef = np.fft.fft(f(2.0 * np.pi * np.arange(m) / m)) / m
    poly = np.array([coef[k % m] for k in range(3, -4, -1)])
    z = np.roots(poly) if np.any(np.abs(poly) > 0) else np.zeros(0, dtype=complex)
    excess = 0.0
    us: list[float] = []
    for zk in z:
        off = abs(abs(zk) - 1.0)
        if not off <= _ROOT_ATOL:  # also drops a non-finite root
            continue
        u = np.array(float(np.angle(zk)))
        # Polish with guarded Newton steps on the real equation.
        for _ in range(3):
            g, dg = f(u), df(u)
            if dg == 0:
                break
            step = u - g / dg
            if abs(f(step)) < abs(g):
                u = step
        if off > _CLIP_ATOL and abs(f(u)) > 1e-9 * max(r, 1.0):
            excess = max(excess, float(off))
        us.append(float(u))
    return us, excess


def l3_ratio_roots(
    d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float, lam: float
) -> Roots:
    """Out-of-plane offset (L3) with lambda = L3 / R12 given: the degree-3 trigonometric roots."""
    a1, phi1, a2, phi2 = (float(v) for v in d[:4])
    r = a1 / a2
    kappa = wrap(gamma0 + np.pi - phi2)
    a = gamma - kappa

    def f(u: NDArray[np.float64]) -> NDArray[np.float64]:
        s = np.sin(a + u)
        out: NDArray[np.float64] = sigma * np.sin(u) * (s * s + lam * lam) - r * s
        return out

    def df(u: NDArray[np.float64]) -> NDArray[np.float64]:
        s, cs = np.sin(a + u), np.cos(a + u)
        out: NDArray[np.float64] = (
            sigma * (np.cos(u) * (s * s + lam * lam) + 2.0 * np.sin(u) * s * cs) - r * cs
        )
        return out

    us, excess = _trig_cubic_roots(f, df, r)
    theta1_zero = wrap(np.pi - phi1)
    rows = []
    for i, ui in enumerate(us):
        s = float(np.sin(a + ui))
        if s <= 0.0:  # the mass on the arm's side of the J1 axis during the J1 sweep
            continue
        t = sigma * ui
        if np.sin(t) <= 0.0:
            continue
        delta = float(np.arctan2(lam, s))
        theta2 = theta2_from_inplane(t, delta)
        beta = wrap(ui - kappa)
        others = [abs(wrap(ui - v)) / 2.0 for j, v in enumerate(us) if j != i]
        merge = min(others) if others else np.pi
        scale = _offset_scale(theta2, s, lam, delta, a2)
        theta1 = wrap(theta1_zero + delta)
        rows.append([theta1, theta2, beta, lam, merge, scale, delta])
    return _dedupe(rows), excess


def _inplane_from_phases(
    d: NDArray[np.float64], sigma: int, gamma0: float
) -> tuple[float, float]:
    """theta2' in (0, pi] and beta from the J2 phases at both zeros, d = (.., phi2, .., phi2')."""
    phi_u, phi_s = (d[3], d[5]) if sigma == 1 else (d[5], d[3])
    half = wrap(phi_s - phi_u) / 2.0
    t = half if half > 0 else half + np.pi  # theta2' in (0, pi]: sin(theta2') > 0
    return t, wrap(phi_u - gamma0 - np.pi + t)


def l3_pair_roots(d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float) -> Roots:
    """L3 unknown, J2 sweeps at both zeros: d = (A1, phi1, A2, phi2, A2', phi2')."""
    a1, phi1 = float(d[0]), float(d[1])
    a2m = 0.5 * (float(d[2]) + float(d[4]))
    r = a1 / a2m
    t, beta = _inplane_from_phases(d, sigma, gamma0)
    s = math.sin(gamma + beta)
    if s <= 0.0 or math.sin(t) <= 0.0:
        return np.zeros((0, N_COLUMNS)), 0.0
    lam2 = s * (r / math.sin(t) - s)
    # A negative lambda**2 beyond rounding (1e-12 against s**2 <= 1) means noise pushed the
    # amplitude ratio below its L3 = 0 value.
    excess = -lam2 if lam2 < -1e-12 else 0.0
    lam = math.sqrt(max(lam2, 0.0))
    theta1_zero = wrap(np.pi - phi1)
    rows = []
    for sgn in (1.0, -1.0):
        delta = float(np.arctan2(sgn * lam, s))
        theta2 = theta2_from_inplane(t, delta)
        # The mirror roots +-lambda merge at L3 = 0, where lambda = sqrt(lambda**2) loses half
        # the digits: the distance to the merge point is |delta|.
        scale = _offset_scale(theta2, s, lam, delta, a2m)
        theta1 = wrap(theta1_zero + delta)
        rows.append([theta1, theta2, beta, sgn * lam, abs(delta), scale, delta])
    return _dedupe(rows), excess


def l3_phase_root(
    d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float, lam: float
) -> Roots:
    """L3 ratio given, J2 sweeps at both zeros: the root fixed by the two J2 phases alone.

    d = (A1, phi1, A2, phi2, A2', phi2'). Half the phase difference is theta2', their mean gives
    beta, and the given lambda gives delta: no amplitude enters, so no gain does.
    """
    a1, phi1 = float(d[0]), float(d[1])
    t, beta = _inplane_from_phases(d, sigma, gamma0)
    s = math.sin(gamma + beta)
    if s <= 0.0 or math.sin(t) <= 0.0:
        return np.zeros((0, N_COLUMNS)), 0.0
    delta = math.atan2(lam, s)
    theta2 = theta2_from_inplane(t, delta)
    theta1 = wrap(math.pi - phi1 + delta)
    # No other root of these equations: it never merges (distance pi, as the two-branch root).
    # theta2 comes from phases, so sin(theta2) / A1 is taken as it is.
    row = [theta1, theta2, beta, lam, math.pi, math.sin(theta2) * _inverse(a1), delta]
    return _dedupe([row]), 0.0


def l3_scores(
    rows: NDArray[np.float64],
    d: NDArray[np.float64],
    cov_d: NDArray[np.float64],
    sigma: int,
    gamma: float,
    gamma0: float,
    ratio_rtol: float,
) -> NDArray[np.float64]:
    """Consistency score of L3 roots with all the data d = (A1, phi1, A2, phi2, A2', phi2').

    Sum of squared residuals, each over its variance, of the two J2 phases and of the
    amplitude ratio A1 / mean(A2, A2') predicted by each root. phi1 and the J2 amplitudes'
    common scale are fitted exactly by every root and do not discriminate.
    """
    theta2, beta, lam = rows[:, THETA2], rows[:, BETA], rows[:, L3_RATIO]
    s = np.sin(gamma + beta)
    delta = np.arctan2(lam, s)
    t = np.arctan2(np.sin(theta2) * np.cos(delta), np.cos(theta2))  # theta2'
    phi_this = gamma0 + beta - sigma * t + np.pi
    phi_other = gamma0 + beta + sigma * t + np.pi
    r_pred = np.sin(t) * (s + lam * lam / s)
    a1, a2, ao = d[0], d[2], d[4]
    a2m = 0.5 * (a2 + ao)
    r = a1 / a2m
    rel_var = cov_d[0, 0] / a1**2 + 0.25 * (cov_d[2, 2] + cov_d[4, 4]) / a2m**2
    var_r = r * r * (rel_var + ratio_rtol**2 + _SCORE_RATIO_FLOOR**2)
    var_this = cov_d[3, 3] + _SCORE_PHASE_FLOOR**2
    var_other = cov_d[5, 5] + _SCORE_PHASE_FLOOR**2
    out: NDArray[np.float64] = (
        np.asarray(wrap_angle(d[3] - phi_this)) ** 2 / var_this
        + np.asarray(wrap_angle(d[5] - phi_other)) ** 2 / var_other
        + (r - r_pred) ** 2 / var_r
    )
    return out


def two_branch_roots(d: NDArray[np.float64], sigma: int) -> Roots:
    """Two-branch (phase-difference) solver: theta2 = half the J2 phase difference."""
    a1, phi1 = float(d[0]), float(d[1])
    phi_u, phi_s = (d[3], d[5]) if sigma == 1 else (d[5], d[3])
    half = wrap(phi_s - phi_u) / 2.0
    theta2 = half if half >= 0 else half + math.pi
    theta1 = wrap(math.pi - phi1)
    # theta2 comes from phases, so sin(theta2) / A1 is taken as it is.
    row = [theta1, theta2, 0.0, 0.0, math.pi, math.sin(theta2) * _inverse(a1), 0.0]
    return _dedupe([row]), 0.0
