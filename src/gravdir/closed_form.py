"""Closed-form gravity direction from a joint-1 sweep and joint-2 sweeps (torque-sweep method).

Joint 1 (J1) is swept with every other joint locked; its fitted gravity sinusoid
:math:`A_1 \\sin(q_1 + \\varphi_1)` gives the two J1 positions where the gravity torque vanishes.
Joint 2 (J2) is then swept with J1 held at one of those zeros (or one sweep at each), giving
:math:`A_2 \\sin(q_2 + \\varphi_2)`. The solvers here turn these fits into the two reference angles
of the canonical two-joint model -- :math:`\\theta_1`, the J1 position at which the arm's
horizontal direction points toward the horizontal part of `up`, and :math:`\\theta_2`, the angle
between `up` and the J1 axis -- and into `up` itself:

* :func:`solve_point_mass`: the distal mass lumped on the link line (seed model 500);
* :func:`solve_l2_offset`: the mass offset across the link in the J2 plane (models 800/900);
* :func:`solve_l3_offset`: the mass also offset along the J2 axis (model 1100), exact;
* :func:`solve_two_branch`: half the J2 phase difference between sweeps at both J1 zeros,
  free of per-joint gains, offsets, symmetric friction, :math:`\\beta` and :math:`\\gamma_0`.

Every solver returns a :class:`ClosedFormResult` with all admissible roots, the rule that picked
one, a first-order covariance of :math:`(\\theta_1, \\theta_2)` and flags for the degenerate
cases. docs/closed_form.md derives each solver.

References
----------
Seed ``000_fd3a83f130b85770.txt`` (gravity direction from joint torques) and the
derivations in ``docs/closed_form.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import DegenerateGeometryError, check_positive, check_scalar
from gravdir.frames import up_from_canonical
from gravdir.sweep import SweepFit, wrap_angle

__all__ = [
    "ClosedFormResult",
    "ClosedFormRoot",
    "solve_l2_offset",
    "solve_l3_offset",
    "solve_point_mass",
    "solve_two_branch",
]

# A1 counts as "not significant" (gravity parallel to the J1 axis) below
# max(PARALLEL_SIGMA * std(A1), PARALLEL_RTOL * A2). Three standard deviations is the usual
# detection threshold for a fitted amplitude; the relative floor 1e-9 sits far above the
# ~1e-15 relative rounding of a noise-free fit and far below any tilt a sweep resolves
# (A1 / A2 = 1e-9 is a tilt of about 1e-9 rad).
DEFAULT_PARALLEL_SIGMA = 3.0
DEFAULT_PARALLEL_RTOL = 1e-9
# The J1 position held during a J2 sweep must lie within max(ZERO_SIGMA * std(phi1), ZERO_ATOL)
# of a J1 zero. Being off by eps tilts the J2 sweep plane by eps and biases theta2 by at most
# eps**2 / 4 (0.0014 deg at eps = 0.01 rad), so 0.01 rad is a safe floor; five standard
# deviations of the fitted zero cover the zero's own uncertainty.
DEFAULT_ZERO_SIGMA = 5.0
DEFAULT_ZERO_ATOL = 1e-2
# A root closer than this (rad) to the point where it merges with another root (the slope of the
# amplitude equation vanishes: theta2 = 90 deg for the point-mass model) is flagged
# `near_singular`: there a relative amplitude error e moves theta2 by about sqrt(2 e).
DEFAULT_SINGULAR_TOL = 1e-3
# Two J2 sweeps of one joint at the two J1 zeros have equal gravity amplitudes in the model; a
# relative difference above 25% (far beyond noise, friction leakage or a few degrees of
# positioning error) means the fits do not belong together.
DEFAULT_AMPLITUDE_MISMATCH_RTOL = 0.25
# In the consistency score of the L3 solver (kinematic ratio and a second J2 sweep both given),
# the amplitude ratio A1 / A2 counts with a relative standard deviation of at least this on top
# of its fit covariance: it mixes the torque gains of two joints, and per-joint gain errors of
# +-15% (usual for current-based torque estimates, uniform) spread the ratio by about 12% (one
# standard deviation), which no fit covariance contains. Phases do not depend on gains.
DEFAULT_AMPLITUDE_RATIO_RTOL = 0.12
# A polynomial root z = exp(iu) of the L3 equation counts as real (on the unit circle) when
# ||z| - 1| is below ROOT_ATOL; above CLIP_ATOL it was pulled off the circle by noise (a tangent
# double root split into a complex pair) and the projection onto the circle is flagged `clipped`.
_ROOT_ATOL = 1e-3
_CLIP_ATOL = 1e-6
# Relative finite-difference step for the first-order covariance: central differences have a
# truncation error ~ step**2 = 1e-12 and a rounding error ~ eps / step = 2e-10 (relative).
_FD_STEP = 1e-6
# Tolerance (rad) for accepting a computed theta2 just outside [0, pi] through rounding.
_RANGE_ATOL = 1e-12
# Standard-deviation floors of the L3 consistency score (phase, rad; amplitude ratio, relative):
# a noise-free fit reports a covariance at the rounding level (~1e-15), and these floors, far
# above it and far below any noise a sweep leaves, keep the score finite.
_SCORE_PHASE_FLOOR = 1e-9
_SCORE_RATIO_FLOOR = 1e-9
# The phase-determined L3 root duplicates an amplitude root when both are within this (rad):
# on noise-free fits they differ by rounding only (~1e-13 rad).
_SAME_ROOT_ATOL = 1e-9


@dataclass(frozen=True)
class ClosedFormRoot:
    """One solution of a closed-form solver.

    Attributes
    ----------
    theta1 : float
        J1 position, rad in (-pi, pi], at which the arm's horizontal direction points toward the
        horizontal part of `up`.
    theta2 : float
        Angle between `up` and the J1 axis, rad in [0, pi].
    beta : float
        Angle of the lumped mass from the link line in the J2 plane, rad (0 for a point mass).
    l3_ratio : float
        :math:`L_3 / R_{12}`, the mass's offset along the J2 axis over its distance from the J2
        axis (0 unless the L3 solver estimated it).
    """

    theta1: float
    theta2: float
    beta: float
    l3_ratio: float

    def __repr__(self) -> str:
        return (
            f"ClosedFormRoot(theta1={np.degrees(self.theta1):.4f}°, "
            f"theta2={np.degrees(self.theta2):.4f}°, beta={np.degrees(self.beta):.4f}°, "
            f"l3_ratio={self.l3_ratio:.6g})"
        )


@dataclass(frozen=True, repr=False)
class ClosedFormResult:
    """Gravity direction from a closed-form solver of the torque-sweep method.

    Attributes
    ----------
    theta1 : float
        J1 position, rad in (-pi, pi], at which the arm's horizontal direction points toward the
        horizontal part of `up`. Without an L3 offset it is the J1 zero with the mass highest.
    theta2 : float
        Angle between `up` and the J1 axis (the tilt of the J1 axis), rad in [0, pi].
    up : ndarray, shape (3,)
        ``up_from_canonical(theta1, theta2, arm_azimuth=arm_azimuth)`` in the base frame.
    beta : float
        The returned root's :math:`\\beta`, rad (0 for the point-mass and two-branch solvers).
    l3_ratio : float
        The returned root's :math:`L_3 / R_{12}` (given or estimated; 0 when not modelled).
    roots : tuple of ClosedFormRoot
        Every admissible root; the returned one is ``roots[root_index]``.
    root_index : int
        Index of the returned root in `roots`.
    rule : str
        Which rule picked the returned root.
    covariance : ndarray, shape (2, 2)
        Covariance of ``(theta1, theta2)``, rad², by first-order propagation of the fits'
        amplitude-phase covariances. The theta1 variance is infinite where theta1 is undefined.
    zero : str
        ``"unstable"`` or ``"stable"``: the J1 zero at which the (first) J2 sweep was taken;
        ``"none"`` where A1 is not significant.
    gravity_parallel_to_j1 : bool
        A1 was not significant: gravity is (nearly) parallel to the J1 axis, theta1 is undefined
        (reported as the J1 position of the J2 sweep) and theta2 comes from the J2 sweep(s).
    clipped : bool
        Noise pushed an arcsin/arccos argument (or a polynomial root) outside its admissible
        range and it was clipped to the boundary.
    near_singular : bool
        The returned root lies within ``singular_tol`` of the point where it merges with another
        root (theta2 = 90 deg for the point-mass solver): precision is lost there.
    solver : str
        Name of the solver.
    """

    theta1: float
    theta2: float
    up: NDArray[np.float64]
    beta: float
    l3_ratio: float
    roots: tuple[ClosedFormRoot, ...]
    root_index: int
    rule: str
    covariance: NDArray[np.float64]
    zero: str
    gravity_parallel_to_j1: bool
    clipped: bool
    near_singular: bool
    solver: str

    @property
    def theta1_std_deg(self) -> float:
        """Standard deviation of `theta1`, degrees (infinite where theta1 is undefined)."""
        return float(np.degrees(np.sqrt(self.covariance[0, 0])))

    @property
    def theta2_std_deg(self) -> float:
        """Standard deviation of `theta2`, degrees."""
        return float(np.degrees(np.sqrt(self.covariance[1, 1])))

    def __repr__(self) -> str:
        flags = [
            name
            for name in ("gravity_parallel_to_j1", "clipped", "near_singular")
            if getattr(self, name)
        ]
        return (
            f"ClosedFormResult(solver={self.solver!r}, "
            f"theta1={np.degrees(self.theta1):.4f}° ± {self.theta1_std_deg:.2g}°, "
            f"theta2={np.degrees(self.theta2):.4f}° ± {self.theta2_std_deg:.2g}°, "
            f"up={np.array2string(self.up, precision=6, suppress_small=True)}, "
            f"roots={len(self.roots)}, rule={self.rule!r}, zero={self.zero!r}, "
            f"flags={flags})"
        )


# --------------------------------------------------------------------------------------------
# Argument checks


@dataclass(frozen=True)
class _Fit:
    amplitude: float
    phase: float
    cov: NDArray[np.float64]
    amplitude_std: float
    phase_std: float


def _check_fit(fit: object, name: str) -> _Fit:
    if not isinstance(fit, SweepFit):
        raise ValueError(f"Expected `{name}` to be a SweepFit, got {type(fit).__name__}.")
    if np.shape(fit.amplitude) != ():
        raise ValueError(
            f"Expected `{name}` to be the fit of a single sweep (batch shape ()), got batch "
            f"shape {np.shape(fit.amplitude)}; call the solver once per sweep set."
        )
    amp, phase = float(fit.amplitude), float(fit.phase)
    if not (np.isfinite(amp) and np.isfinite(phase)):
        raise ValueError(f"Expected `{name}` to have a finite amplitude and phase, got NaN.")
    cov = np.asarray(fit.amplitude_phase_covariance, dtype=np.float64)
    if not np.all(np.isfinite(cov)):
        # An exactly zero amplitude has an undefined phase (infinite variance); keep the
        # amplitude variance and leave the phase unusable.
        cov = np.array([[cov[0, 0], 0.0], [0.0, np.inf]])
    return _Fit(amp, phase, cov, float(np.sqrt(cov[0, 0])), float(np.sqrt(cov[1, 1])))


def _check_j2_fit(fit: object, name: str, sigma: float, rtol: float) -> _Fit:
    f = _check_fit(fit, name)
    # Significant: above `sigma` standard deviations and above the rounding level (`rtol`) of
    # the largest fitted coefficient (offset, friction), which a noise-free fit leaves.
    scale = float(np.max(np.abs(np.asarray(fit.coefficients))))  # type: ignore[attr-defined]
    threshold = max(sigma * f.amplitude_std, rtol * scale)
    if f.amplitude <= 0 or f.amplitude <= threshold:
        raise DegenerateGeometryError(
            f"Expected `{name}` to have a significant gravity amplitude (above {threshold:.3g}: "
            f"{sigma:g} standard deviations or {rtol:g} of the largest coefficient), got "
            f"{f.amplitude:.3g}: the J2 sweep carries no gravity load."
        )
    return f


def _check_gamma(gamma: ArrayLike) -> float:
    value = check_scalar(gamma, "gamma")
    if not 0.0 < value < np.pi:
        raise ValueError(
            f"Expected `gamma` in (0, pi) (the link angle from +z during the J1 sweep), got "
            f"{value!r} rad: outside it the mass is not on the arm's side of the J1 axis."
        )
    return value


def _check_sigma(x: float, name: str) -> float:
    return check_positive(x, name, allow_zero=True)


def _check_one_zero_inputs(
    fit_j1: object,
    fit_j2: object,
    q1_at_j2: ArrayLike,
    gamma: ArrayLike,
    gamma0: ArrayLike,
    arm_azimuth: ArrayLike,
    singular_tol: float,
    parallel_sigma: float,
    parallel_rtol: float,
) -> tuple[_Fit, _Fit, float, float, float, float, float, float, float]:
    """Validated inputs shared by the solvers fed a J1 fit and one J2 sweep at a J1 zero."""
    f1 = _check_fit(fit_j1, "fit_j1")
    sig_p = _check_sigma(parallel_sigma, "parallel_sigma")
    rtol_p = _check_sigma(parallel_rtol, "parallel_rtol")
    f2 = _check_j2_fit(fit_j2, "fit_j2", sig_p, rtol_p)
    q1 = check_scalar(q1_at_j2, "q1_at_j2")
    g = _check_gamma(gamma)
    g0 = check_scalar(gamma0, "gamma0")
    az = check_scalar(arm_azimuth, "arm_azimuth")
    tol = check_positive(singular_tol, "singular_tol", allow_zero=True)
    return f1, f2, q1, g, g0, az, tol, sig_p, rtol_p


def _is_parallel(f1: _Fit, a2: float, sigma: float, rtol: float) -> bool:
    return f1.amplitude <= max(sigma * f1.amplitude_std, rtol * a2)


def _which_zero(f1: _Fit, q1: float, name: str, zero_tol: float | None) -> int:
    """+1 if `q1` is the unstable J1 zero, -1 if the stable one; ValueError if neither."""
    if zero_tol is None:
        tol = max(DEFAULT_ZERO_SIGMA * f1.phase_std, DEFAULT_ZERO_ATOL)
    else:
        tol = check_positive(zero_tol, "zero_tol")
    unstable = float(wrap_angle(np.pi - f1.phase))
    stable = float(wrap_angle(-f1.phase))
    d_u = abs(float(wrap_angle(q1 - unstable)))
    d_s = abs(float(wrap_angle(q1 - stable)))
    if min(d_u, d_s) > tol:
        raise ValueError(
            f"Expected `{name}` within {tol:.3g} rad of a gravity zero of joint 1 (unstable "
            f"{unstable:.6g} rad, stable {stable:.6g} rad), got {q1:.6g} rad "
            f"({min(d_u, d_s):.3g} rad from the nearer zero)."
        )
    return 1 if d_u <= d_s else -1


def _check_pair_amplitudes(a: _Fit, b: _Fit, name: str) -> None:
    rel = abs(a.amplitude - b.amplitude) / max(a.amplitude, b.amplitude)
    if rel > DEFAULT_AMPLITUDE_MISMATCH_RTOL:
        raise ValueError(
            f"Expected `{name}` to have the same gravity amplitude as the first J2 sweep "
            f"(within {DEFAULT_AMPLITUDE_MISMATCH_RTOL:.0%}), got {b.amplitude:.6g} against "
            f"{a.amplitude:.6g}: the two J2 fits do not belong to one arm posture."
        )


# --------------------------------------------------------------------------------------------
# Root finders. Each takes the data vector d and returns an array (k, 5) of rows
# (theta1, theta2, beta, l3_ratio, merge distance) and a clipped flag.

_Roots = tuple[NDArray[np.float64], bool]


def _dedupe(rows: list[list[float]]) -> NDArray[np.float64]:
    out: list[list[float]] = []
    for row in rows:
        if not any(
            abs(float(wrap_angle(row[0] - o[0]))) < 1e-12
            and abs(row[1] - o[1]) < 1e-12
            and abs(float(wrap_angle(row[2] - o[2]))) < 1e-12
            and abs(row[3] - o[3]) < 1e-12
            for o in out
        ):
            out.append(row)
    return np.array(out, dtype=np.float64).reshape(-1, 5)


def _point_mass_roots(d: NDArray[np.float64], sigma: int, gamma: float) -> _Roots:
    a1, phi1, a2 = d[0], d[1], d[2]
    x = a1 / (a2 * np.sin(gamma))
    clipped = bool(x > 1.0)
    t = float(np.arcsin(min(x, 1.0)))
    theta1 = float(wrap_angle(np.pi - phi1))
    rows = [[theta1, th, 0.0, 0.0, abs(th - np.pi / 2)] for th in (t, np.pi - t)]
    return _dedupe(rows), clipped


def _l2_roots(d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float) -> _Roots:
    a1, phi1, a2, phi2 = d[0], d[1], d[2], d[3]
    r = a1 / a2
    kappa = float(wrap_angle(gamma0 + np.pi - phi2))
    a = gamma - kappa
    c = np.cos(a) - 2.0 * sigma * r
    clipped = bool(abs(c) > 1.0)
    ac = float(np.arccos(np.clip(c, -1.0, 1.0)))
    theta1 = float(wrap_angle(np.pi - phi1))
    rows = []
    for sgn in (1.0, -1.0):
        t0 = (sgn * ac - a) / 2.0
        for k in range(-3, 4):
            t = t0 + k * np.pi
            theta2 = sigma * t
            if not -_RANGE_ATOL <= theta2 <= np.pi + _RANGE_ATOL:
                continue
            # The model assumes the mass on the arm's side of the J1 axis: sin(gamma + beta) > 0.
            if np.sin(a + t) <= 0.0:
                continue
            beta = float(wrap_angle(t - kappa))
            # Roots merge where the slope sin(a + 2t) of sin(a + t) sin t vanishes.
            merge = abs(float(wrap_angle(2.0 * (a + 2.0 * t)))) / 4.0
            rows.append([theta1, float(np.clip(theta2, 0.0, np.pi)), beta, 0.0, merge])
    return _dedupe(rows), clipped


def _theta2_from_inplane(t: float, delta: float) -> float:
    """theta2 from the in-plane angle t = theta2' and the azimuth offset delta."""
    n = 1.0 / np.sqrt(1.0 + (np.sin(t) * np.tan(delta)) ** 2)
    return float(np.arccos(np.clip(n * np.cos(t), -1.0, 1.0)))


def _l3_ratio_roots(
    d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float, lam: float
) -> _Roots:
    a1, phi1, a2, phi2 = d[0], d[1], d[2], d[3]
    r = a1 / a2
    kappa = float(wrap_angle(gamma0 + np.pi - phi2))
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

    # f is a trigonometric polynomial of degree 3: its Fourier coefficients from 16 samples are
    # exact (no aliasing) and z**3 f(u) is a degree-6 polynomial in z = exp(iu).
    m = 16
    samples = f(2.0 * np.pi * np.arange(m) / m)
    coef = np.fft.fft(samples) / m
    poly = np.array([coef[k % m] for k in range(3, -4, -1)])
    z = np.roots(poly) if np.any(np.abs(poly) > 0) else np.zeros(0, dtype=complex)
    clipped = False
    us: list[float] = []
    for zk in z:
        off = abs(abs(zk) - 1.0)
        if off > _ROOT_ATOL:
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
        clipped = clipped or off > _CLIP_ATOL and abs(f(u)) > 1e-9 * max(r, 1.0)
        us.append(float(u))
    theta1_zero = float(wrap_angle(np.pi - phi1))
    rows = []
    for i, ui in enumerate(us):
        s = float(np.sin(a + ui))
        if s <= 0.0:  # the mass on the arm's side of the J1 axis during the J1 sweep
            continue
        t = sigma * ui
        if np.sin(t) <= 0.0:
            continue
        delta = float(np.arctan2(lam, s))
        theta2 = _theta2_from_inplane(t, delta)
        beta = float(wrap_angle(ui - kappa))
        others = [abs(float(wrap_angle(ui - v))) / 2.0 for j, v in enumerate(us) if j != i]
        merge = min(others) if others else np.pi
        rows.append([float(wrap_angle(theta1_zero + delta)), theta2, beta, lam, merge])
    return _dedupe(rows), clipped


def _l3_pair_roots(d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float) -> _Roots:
    """L3 unknown, J2 sweeps at both zeros: d = (A1, phi1, A2, phi2, A2', phi2')."""
    a1, phi1 = d[0], d[1]
    phi_u, phi_s = (d[3], d[5]) if sigma == 1 else (d[5], d[3])
    r = a1 / (0.5 * (d[2] + d[4]))
    half = float(wrap_angle(phi_s - phi_u)) / 2.0
    t = half if half > 0 else half + np.pi  # theta2' in (0, pi]: sin(theta2') > 0
    beta = float(wrap_angle(phi_u - gamma0 - np.pi + t))
    s = float(np.sin(gamma + beta))
    if s <= 0.0 or np.sin(t) <= 0.0:
        return np.zeros((0, 5)), False
    lam2 = s * (r / np.sin(t) - s)
    # A negative lambda**2 beyond rounding (1e-12 against s**2 <= 1) means noise pushed the
    # amplitude ratio below its L3 = 0 value.
    clipped = bool(lam2 < -1e-12)
    lam = float(np.sqrt(max(lam2, 0.0)))
    theta1_zero = float(wrap_angle(np.pi - phi1))
    rows = []
    for sgn in (1.0, -1.0):
        delta = float(np.arctan2(sgn * lam, s))
        theta2 = _theta2_from_inplane(t, delta)
        # The mirror roots +-lambda merge at L3 = 0, where lambda = sqrt(lambda**2) loses half
        # the digits: the distance to the merge point is |delta|.
        merge = abs(delta)
        rows.append([float(wrap_angle(theta1_zero + delta)), theta2, beta, sgn * lam, merge])
    return _dedupe(rows), clipped


def _l3_phase_root(
    d: NDArray[np.float64], sigma: int, gamma: float, gamma0: float, lam: float
) -> _Roots:
    """L3 ratio given, J2 sweeps at both zeros: the root fixed by the two J2 phases alone.

    d = (A1, phi1, A2, phi2, A2', phi2'). Half the phase difference is theta2', their mean gives
    beta, and the given lambda gives delta: no amplitude enters, so no gain does.
    """
    phi1 = d[1]
    phi_u, phi_s = (d[3], d[5]) if sigma == 1 else (d[5], d[3])
    half = float(wrap_angle(phi_s - phi_u)) / 2.0
    t = half if half > 0 else half + np.pi  # theta2' in (0, pi]: sin(theta2') > 0
    beta = float(wrap_angle(phi_u - gamma0 - np.pi + t))
    s = float(np.sin(gamma + beta))
    if s <= 0.0 or np.sin(t) <= 0.0:
        return np.zeros((0, 5)), False
    delta = float(np.arctan2(lam, s))
    theta2 = _theta2_from_inplane(t, delta)
    theta1 = float(wrap_angle(np.pi - phi1 + delta))
    # No other root of these equations: it never merges (distance pi, as the two-branch root).
    return np.array([[theta1, theta2, beta, lam, np.pi]]), False


def _l3_scores(
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
    theta2, beta, lam = rows[:, 1], rows[:, 2], rows[:, 3]
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


def _two_branch_roots(d: NDArray[np.float64], sigma: int) -> _Roots:
    phi1 = d[1]
    phi_u, phi_s = (d[3], d[5]) if sigma == 1 else (d[5], d[3])
    half = float(wrap_angle(phi_s - phi_u)) / 2.0
    theta2 = half if half >= 0 else half + np.pi
    theta1 = float(wrap_angle(np.pi - phi1))
    return np.array([[theta1, theta2, 0.0, 0.0, np.pi]]), False


# --------------------------------------------------------------------------------------------
# Covariance and result assembly


def _covariance(
    solve: Callable[[NDArray[np.float64]], _Roots],
    d: NDArray[np.float64],
    cov_d: NDArray[np.float64],
    picked: NDArray[np.float64],
    theta1_defined: bool,
) -> NDArray[np.float64]:
    """First-order covariance of (theta1, theta2) by central differences on the picked root."""
    n = d.size
    jac = np.zeros((2, n))
    for i in range(n):
        if cov_d[i, i] == 0:
            continue
        h = _FD_STEP * (max(abs(d[i]), 1e-300) if i % 2 == 0 else 1.0)
        ends = []
        for sgn in (1.0, -1.0):
            dd = d.copy()
            dd[i] += sgn * h
            rows, _ = solve(dd)
            if rows.shape[0] == 0:
                return np.diag([np.inf, np.inf])
            dist = np.abs(wrap_angle(rows[:, 0] - picked[0])) + np.abs(rows[:, 1] - picked[1])
            ends.append(rows[int(np.argmin(dist)), :2])
        diff = ends[0] - ends[1]
        diff[0] = float(wrap_angle(diff[0]))
        jac[:, i] = diff / (2.0 * h)
    finite = np.isfinite(cov_d)
    if not np.all(finite):
        # Only the phase variance of an exactly zero amplitude can be infinite; it is used only
        # where its derivative is zero (theta1 undefined).
        cov_d = np.where(finite, cov_d, 0.0)
    out: NDArray[np.float64] = jac @ cov_d @ jac.T
    if not theta1_defined:
        out = np.array([[np.inf, 0.0], [0.0, out[1, 1]]])
    return out


def _block_cov(*fits: _Fit) -> NDArray[np.float64]:
    n = 2 * len(fits)
    cov = np.zeros((n, n))
    for i, f in enumerate(fits):
        cov[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = f.cov
    return cov


def _result(
    rows: NDArray[np.float64],
    index: int,
    rule: str,
    cov: NDArray[np.float64],
    *,
    zero: str,
    parallel: bool,
    clipped: bool,
    singular_tol: float,
    arm_azimuth: float,
    solver: str,
) -> ClosedFormResult:
    roots = tuple(ClosedFormRoot(float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in rows)
    pick = roots[index]
    up = up_from_canonical(pick.theta1, pick.theta2, arm_azimuth=arm_azimuth)
    near = bool(rows[index, 4] < singular_tol) and not parallel
    return ClosedFormResult(
        theta1=pick.theta1,
        theta2=pick.theta2,
        up=np.asarray(up, dtype=np.float64),
        beta=pick.beta,
        l3_ratio=pick.l3_ratio,
        roots=roots,
        root_index=index,
        rule=rule,
        covariance=cov,
        zero=zero,
        gravity_parallel_to_j1=parallel,
        clipped=clipped,
        near_singular=near,
        solver=solver,
    )


def _phase_pick(rows: NDArray[np.float64], predicted: NDArray[np.float64], measured: float) -> int:
    return int(np.argmin(np.abs(wrap_angle(predicted - measured))))


def _parallel_result(
    f1: _Fit,
    f2: _Fit,
    q1: float,
    gamma0: float,
    *,
    unknown_beta: bool,
    parallel_cov_fits: Sequence[_Fit],
    arm_azimuth: float,
    solver: str,
) -> ClosedFormResult:
    """theta2 from one J2 sweep when A1 is not significant (theta1 undefined)."""
    kappa = float(wrap_angle(gamma0 + np.pi - f2.phase))
    if unknown_beta:
        # theta2 in {0, pi}; beta = theta2 - kappa; the smaller |beta| decides.
        rows = np.array(
            [
                [float(wrap_angle(q1)), 0.0, float(wrap_angle(-kappa)), 0.0, np.pi],
                [float(wrap_angle(q1)), np.pi, float(wrap_angle(np.pi - kappa)), 0.0, np.pi],
            ]
        )
        index = int(np.argmin(np.abs(rows[:, 2])))
        cov = np.array([[np.inf, 0.0], [0.0, 0.0]])
        rule = "gravity parallel to J1: theta2 in {0, pi}, smaller |beta|"
    else:
        # kappa is the signed angle of `up` from +z in the plane of the J2 sweep at q1.
        theta1 = float(wrap_angle(q1 if kappa >= 0 else q1 + np.pi))
        rows = np.array([[theta1, abs(kappa), 0.0, 0.0, np.pi]])
        index = 0
        var = sum(f.cov[1, 1] for f in parallel_cov_fits)
        cov = np.array([[np.inf, 0.0], [0.0, var]])
        rule = "gravity parallel to J1: theta2 from the J2 phase"
    return _result(
        rows,
        index,
        rule,
        cov,
        zero="none",
        parallel=True,
        clipped=False,
        singular_tol=0.0,
        arm_azimuth=arm_azimuth,
        solver=solver,
    )


# --------------------------------------------------------------------------------------------
# Public solvers


def solve_point_mass(
    fit_j1: SweepFit,
    fit_j2: SweepFit,
    q1_at_j2: float,
    gamma: float,
    gamma0: float,
    *,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
    singular_tol: float = DEFAULT_SINGULAR_TOL,
) -> ClosedFormResult:
    """Gravity direction for a point mass on the link line (the seed's model 500).

    Parameters
    ----------
    fit_j1 : SweepFit
        Fit of the J1 sweep (single sweep, batch shape ``()``).
    fit_j2 : SweepFit
        Fit of the J2 sweep taken with J1 held at `q1_at_j2`.
    q1_at_j2 : float
        J1 position during the J2 sweep, rad: one of the J1 gravity zeros of `fit_j1` (the
        solver works out which). Any value is accepted where A1 is not significant.
    gamma : float
        Angle of the link from +z during the J1 sweep, rad, in (0, pi).
    gamma0 : float
        Link angle at J2 position 0 (:math:`\\gamma = q_2 + \\gamma_0`), rad. It only decides
        between the two amplitude roots :math:`\\theta_2` and :math:`\\pi - \\theta_2`.
    arm_azimuth : float, optional
        Azimuth of the arm's horizontal direction at J1 position 0 (default 0: along +x).
    zero_tol : float, optional
        Largest distance of `q1_at_j2` from a J1 zero, rad. Default
        ``max(5 * fit_j1.phase_std, 0.01)``.
    parallel_sigma, parallel_rtol : float, optional
        A1 is not significant (gravity parallel to J1) when
        ``A1 <= max(parallel_sigma * std(A1), parallel_rtol * A2)``; defaults 3 and 1e-9.
    singular_tol : float, optional
        `near_singular` is set when theta2 is within this distance of 90 deg (default 1e-3 rad).

    Returns
    -------
    ClosedFormResult
        Roots :math:`\\theta_2` and :math:`\\pi - \\theta_2` from the amplitude ratio; the one
        whose predicted J2 phase is nearer the measured one is returned.

    Raises
    ------
    ValueError
        If a fit is not a single :class:`~gravdir.sweep.SweepFit`, `gamma` is outside (0, pi),
        an angle is not finite, or `q1_at_j2` is not at a J1 zero.
    DegenerateGeometryError
        If the J2 amplitude is not significant.

    Notes
    -----
    With the mass :math:`m` at distance :math:`L_1` along the link,
    :math:`A_1 = m g L_1 \\sin\\gamma \\sin\\theta_2` and, at the unstable J1 zero,
    :math:`A_2 = m g L_1` and :math:`\\varphi_2 = \\gamma_0 - \\theta_2 + \\pi` (at the stable
    zero :math:`\\theta_2 \\to -\\theta_2`). Hence

    .. math:: \\sin\\theta_2 = \\frac{A_1}{A_2 \\sin\\gamma}, \\qquad
              \\theta_1 = \\pi - \\varphi_1 .

    The ratio mixes the gains of two joints: a gain error scales :math:`\\sin\\theta_2`.

    References
    ----------
    Seed ``000_fd3a83f130b85770.txt``, equations (1)--(11).

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm
    >>> arm = canonical_arm(L1=0.6, gamma0=0.2, up=up_from_canonical(0.5, 0.3))
    >>> r1 = arm.sweep(0, [0.0, 1.2], -2.0, 2.0, 0.5, 100.0)
    >>> f1 = fit_sweep(r1.q, r1.torque, r1.velocity)
    >>> q1 = float(f1.zeros().unstable)
    >>> r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    >>> f2 = fit_sweep(r2.q, r2.torque, r2.velocity)
    >>> res = solve_point_mass(f1, f2, q1, gamma=1.4, gamma0=0.2)
    >>> round(res.theta1, 9), round(res.theta2, 9)
    (0.5, 0.3)
    """
    f1, f2, q1, g, g0, az, tol, sig_p, rtol_p = _check_one_zero_inputs(
        fit_j1,
        fit_j2,
        q1_at_j2,
        gamma,
        gamma0,
        arm_azimuth,
        singular_tol,
        parallel_sigma,
        parallel_rtol,
    )
    if _is_parallel(f1, f2.amplitude, sig_p, rtol_p):
        return _parallel_result(
            f1,
            f2,
            q1,
            g0,
            unknown_beta=False,
            parallel_cov_fits=(f2,),
            arm_azimuth=az,
            solver="point_mass",
        )
    sigma = _which_zero(f1, q1, "q1_at_j2", zero_tol)
    d = np.array([f1.amplitude, f1.phase, f2.amplitude, f2.phase])

    def solve(dd: NDArray[np.float64]) -> _Roots:
        return _point_mass_roots(dd, sigma, g)

    rows, clipped = solve(d)
    predicted = g0 - sigma * rows[:, 1] + np.pi
    index = _phase_pick(rows, predicted, f2.phase)
    cov = _covariance(solve, d, _block_cov(f1, f2), rows[index], True)
    return _result(
        rows,
        index,
        "J2 phase (with gamma0) picks theta2 or pi - theta2",
        cov,
        zero="unstable" if sigma == 1 else "stable",
        parallel=False,
        clipped=clipped,
        singular_tol=tol,
        arm_azimuth=az,
        solver="point_mass",
    )


def _other_sweep(
    f1: _Fit,
    fit_other: SweepFit | None,
    q1_other: float | None,
    f2: _Fit,
    sigma: int,
    zero_tol: float | None,
    sig_p: float,
    rtol_p: float,
) -> _Fit | None:
    if fit_other is None:
        if q1_other is not None:
            raise ValueError(
                "Expected `q1_at_j2_other` only together with `fit_j2_other`, got a position "
                "without a fit."
            )
        return None
    if q1_other is None:
        raise ValueError(
            "Expected `q1_at_j2_other` (the J1 position of the second J2 sweep), got None."
        )
    fo = _check_j2_fit(fit_other, "fit_j2_other", sig_p, rtol_p)
    q = check_scalar(q1_other, "q1_at_j2_other")
    sigma_o = _which_zero(f1, q, "q1_at_j2_other", zero_tol)
    if sigma_o == sigma:
        raise ValueError(
            "Expected `q1_at_j2_other` at the other J1 zero than `q1_at_j2`, got both at the "
            f"{'unstable' if sigma == 1 else 'stable'} zero."
        )
    _check_pair_amplitudes(f2, fo, "fit_j2_other")
    return fo


def solve_l2_offset(
    fit_j1: SweepFit,
    fit_j2: SweepFit,
    q1_at_j2: float,
    gamma: float,
    gamma0: float,
    *,
    fit_j2_other: SweepFit | None = None,
    q1_at_j2_other: float | None = None,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
    singular_tol: float = DEFAULT_SINGULAR_TOL,
) -> ClosedFormResult:
    """Gravity direction for a mass offset across the link in the J2 plane (models 800/900).

    Parameters
    ----------
    fit_j1, fit_j2, q1_at_j2, gamma, gamma0
        As in :func:`solve_point_mass`; `gamma` is the angle of the link line (not of the mass)
        from +z during the J1 sweep.
    fit_j2_other : SweepFit, optional
        A J2 sweep at the other J1 zero. Its phase picks the root (and removes the two-root
        ambiguity).
    q1_at_j2_other : float, optional
        J1 position of `fit_j2_other`, rad; required with it.
    arm_azimuth, zero_tol, parallel_sigma, parallel_rtol
        As in :func:`solve_point_mass`.
    singular_tol : float, optional
        `near_singular` is set when the returned root is within this distance (rad) of merging
        with the other root, i.e. where :math:`\\gamma + \\beta + \\theta_2` is within
        ``2 * singular_tol`` of pi (default 1e-3).

    Returns
    -------
    ClosedFormResult
        Up to two admissible roots :math:`(\\theta_2, \\beta)`; the one with the smaller
        :math:`|\\beta|` (the lumped mass nearest the link line) is returned, or, with
        `fit_j2_other`, the one that predicts its phase best.

    Raises
    ------
    ValueError
        As :func:`solve_point_mass`, and if `fit_j2_other` is not at the other J1 zero, its
        amplitude differs from `fit_j2`'s by more than 25%, or one of the pair is missing.
    DegenerateGeometryError
        If a J2 amplitude is not significant or no root satisfies the model.

    Notes
    -----
    With :math:`R_{12} = \\sqrt{L_1^2 + L_2^2}` and :math:`\\beta = \\operatorname{atan2}(L_2,
    L_1)`: :math:`r = A_1/A_2 = \\sin(\\gamma + \\beta)\\sin\\theta_2` and, with
    :math:`\\sigma = \\pm 1` at the unstable/stable zero,
    :math:`\\kappa = \\gamma_0 + \\pi - \\varphi_2 = \\sigma\\theta_2 - \\beta`. With
    :math:`t = \\sigma\\theta_2` and :math:`a = \\gamma - \\kappa`, the product-to-sum identity
    gives

    .. math:: \\cos(a + 2t) = \\cos a - 2\\sigma r, \\qquad
              t = \\tfrac12\\,(\\pm\\arccos(\\cos a - 2\\sigma r) - a) + k\\pi,

    of which the roots with :math:`\\theta_2 \\in [0, \\pi]` and :math:`\\sin(\\gamma + \\beta) > 0`
    are admissible.

    References
    ----------
    Seed ``000_fd3a83f130b85770.txt``, equations (14)--(19).

    Examples
    --------
    The two-root example of ``docs/closed_form.md`` (:math:`\\gamma` = 137.7°):

    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm
    >>> beta = np.radians(-4.39)
    >>> arm = canonical_arm(L1=np.cos(beta), L2=np.sin(beta),
    ...                     up=up_from_canonical(0.0, np.radians(56.35)))
    >>> gamma = np.radians(137.7)
    >>> r1 = arm.sweep(0, [0.0, gamma], -2.0, 2.0, 0.5, 100.0)
    >>> f1 = fit_sweep(r1.q, r1.torque, r1.velocity)
    >>> q1 = float(f1.zeros().unstable)
    >>> r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    >>> f2 = fit_sweep(r2.q, r2.torque, r2.velocity)
    >>> res = solve_l2_offset(f1, f2, q1, gamma=gamma, gamma0=0.0)
    >>> [(float(np.degrees(r.theta2).round(2)), float(np.degrees(r.beta).round(2)))
    ...  for r in res.roots]
    [(46.69, -14.05), (56.35, -4.39)]
    >>> round(float(np.degrees(res.theta2)), 2), res.rule
    (56.35, 'smaller |beta| (lumped mass nearest the link line)')
    """
    f1, f2, q1, g, g0, az, tol, sig_p, rtol_p = _check_one_zero_inputs(
        fit_j1,
        fit_j2,
        q1_at_j2,
        gamma,
        gamma0,
        arm_azimuth,
        singular_tol,
        parallel_sigma,
        parallel_rtol,
    )
    if _is_parallel(f1, f2.amplitude, sig_p, rtol_p):
        return _parallel_result(
            f1,
            f2,
            q1,
            g0,
            unknown_beta=True,
            parallel_cov_fits=(f2,),
            arm_azimuth=az,
            solver="l2_offset",
        )
    sigma = _which_zero(f1, q1, "q1_at_j2", zero_tol)
    fo = _other_sweep(f1, fit_j2_other, q1_at_j2_other, f2, sigma, zero_tol, sig_p, rtol_p)
    d = np.array([f1.amplitude, f1.phase, f2.amplitude, f2.phase])

    def solve(dd: NDArray[np.float64]) -> _Roots:
        return _l2_roots(dd, sigma, g, g0)

    rows, clipped = solve(d)
    if rows.shape[0] == 0:
        raise DegenerateGeometryError(
            "Expected fits consistent with the L2 model (mass on the arm's side of the J1 "
            "axis during the J1 sweep), got no admissible root: check `gamma` and `gamma0`."
        )
    if fo is None:
        index = int(np.argmin(np.abs(rows[:, 2])))
        rule = "smaller |beta| (lumped mass nearest the link line)"
    else:
        predicted = g0 + rows[:, 2] + sigma * rows[:, 1] + np.pi
        index = _phase_pick(rows, predicted, fo.phase)
        rule = "phase of the J2 sweep at the other J1 zero"
    cov = _covariance(solve, d, _block_cov(f1, f2), rows[index], True)
    return _result(
        rows,
        index,
        rule,
        cov,
        zero="unstable" if sigma == 1 else "stable",
        parallel=False,
        clipped=clipped,
        singular_tol=tol,
        arm_azimuth=az,
        solver="l2_offset",
    )


def solve_l3_offset(
    fit_j1: SweepFit,
    fit_j2: SweepFit,
    q1_at_j2: float,
    gamma: float,
    gamma0: float,
    *,
    l3_ratio: float | None = None,
    fit_j2_other: SweepFit | None = None,
    q1_at_j2_other: float | None = None,
    l3_sign: float = 1.0,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
    singular_tol: float = DEFAULT_SINGULAR_TOL,
    amplitude_ratio_rtol: float = DEFAULT_AMPLITUDE_RATIO_RTOL,
) -> ClosedFormResult:
    """Gravity direction for a mass offset across the link and along the J2 axis (model 1100).

    Exact for any :math:`\\gamma` in (0, pi). The four numbers :math:`(A_1, \\varphi_1, A_2,
    \\varphi_2)` are one short of the unknowns, so one more fact is needed: the ratio
    :math:`L_3/R_{12}` from the kinematic model (`l3_ratio`) or a J2 sweep at the other J1 zero
    (`fit_j2_other`); both may be given.

    Parameters
    ----------
    fit_j1, fit_j2, q1_at_j2, gamma, gamma0
        As in :func:`solve_l2_offset`.
    l3_ratio : float, optional
        :math:`\\lambda = L_3 / R_{12}` (signed; :math:`L_3` along the J2 axis
        :math:`a_2 = z \\times h`).
    fit_j2_other, q1_at_j2_other : optional
        A J2 sweep at the other J1 zero and its J1 position. The two J2 phases determine
        :math:`\\theta_2'` and :math:`\\beta`. With `l3_ratio` they add a root of their own
        (free of the torque gains) and a consistency score over both J2 phases and the
        amplitude ratio picks among all roots; without `l3_ratio` the amplitude ratio gives
        :math:`|\\lambda|`.
    l3_sign : float, optional
        Sign of :math:`L_3` used to pick between the two mirror roots :math:`\\pm\\lambda`
        (which fit the data equally) when `l3_ratio` is not given (default +1).
    arm_azimuth, zero_tol, parallel_sigma, parallel_rtol
        As in :func:`solve_point_mass`.
    singular_tol : float, optional
        `near_singular` is set when the returned root is within this distance (rad, in the
        in-plane angle) of merging with another root (default 1e-3).
    amplitude_ratio_rtol : float, optional
        Relative standard deviation added to the fit variance of :math:`A_1/A_2` in the
        consistency score (used when `l3_ratio` and `fit_j2_other` are both given): the
        spread of the ratio of two joints' torque gains (default 0.12, gains within ±15%).

    Returns
    -------
    ClosedFormResult
        All admissible roots; with `l3_ratio` only, the smaller :math:`|\\beta|` is returned;
        with both facts, the root with the smallest consistency score.
        `theta1` includes the azimuth offset :math:`\\delta`, so it is not the J1 zero.

    Raises
    ------
    ValueError
        As :func:`solve_l2_offset`, and if neither `l3_ratio` nor `fit_j2_other` is given,
        `l3_sign` is zero or `amplitude_ratio_rtol` is negative.
    DegenerateGeometryError
        If a J2 amplitude is not significant or no root satisfies the model.

    Notes
    -----
    The J1 zero puts the mass, not the arm, in the vertical plane: the arm's azimuth differs by
    :math:`\\delta = \\operatorname{atan2}(L_3, D)`, :math:`D = R_{12}\\sin(\\gamma+\\beta)`, so
    :math:`\\theta_1 = \\pi - \\varphi_1 + \\delta`. At the zero the J2 sweep sees the in-plane
    part of `up`: :math:`A_2 = m g R_{12} N`,
    :math:`N = \\sqrt{1 - \\sin^2\\theta_2\\sin^2\\delta}`,
    :math:`\\varphi_2 = \\gamma_0 + \\beta - \\sigma\\theta_2' + \\pi` with
    :math:`\\theta_2' = \\operatorname{atan2}(\\sin\\theta_2\\cos\\delta, \\cos\\theta_2)`. Since
    :math:`A_1 = m g \\sin\\theta_2 \\sqrt{D^2 + L_3^2}`, the ratio reduces to

    .. math:: r = \\frac{A_1}{A_2} = \\sin\\theta_2' \\Big(s + \\frac{\\lambda^2}{s}\\Big),
              \\qquad s = \\sin(\\gamma + \\beta),\\ \\beta = \\sigma\\theta_2' - \\kappa,

    a trigonometric polynomial of degree 3 in :math:`\\theta_2'` (six roots at most, found as
    the roots of a degree-6 polynomial and polished by Newton steps). Then
    :math:`\\tan\\theta_2 = \\tan\\theta_2' / \\cos\\delta`.

    With a second J2 sweep, :math:`\\varphi_2^s - \\varphi_2^u = 2\\theta_2'` and the mean phase
    gives :math:`\\beta`, so with :math:`\\lambda` known the phases alone fix a root. Unequal
    torque gains of J1 and J2 scale :math:`r`; beyond a local maximum of the right-hand side
    above they turn the true root and its neighbour into a complex pair, and the amplitude
    roots left over are far from the truth. The phase root is therefore a candidate too, and
    each candidate :math:`k` is scored by

    .. math:: S_k = \\frac{(\\varphi_2 - \\hat\\varphi_{2,k})^2}{\\sigma_{\\varphi_2}^2}
              + \\frac{(\\varphi_2^o - \\hat\\varphi^o_{2,k})^2}{\\sigma_{\\varphi_2^o}^2}
              + \\frac{(r - \\hat r_k)^2}{\\sigma_r^2 + (\\epsilon r)^2},

    with fit variances, :math:`r = A_1 / \\tfrac12(A_2 + A_2^o)` and :math:`\\epsilon` =
    `amplitude_ratio_rtol`; the smallest :math:`S_k` wins.

    References
    ----------
    Seed ``000_fd3a83f130b85770.txt``, equations (20)--(24), whose formulas neglect
    :math:`\\delta` (docs/closed_form.md measures the difference).

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm
    >>> arm = canonical_arm(L1=0.5, L2=0.05, L3=0.12, up=up_from_canonical(1.0, 0.4))
    >>> r1 = arm.sweep(0, [0.0, np.pi / 2], -2.0, 2.0, 0.5, 100.0)
    >>> f1 = fit_sweep(r1.q, r1.torque, r1.velocity)
    >>> q1 = float(f1.zeros().unstable)
    >>> r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    >>> f2 = fit_sweep(r2.q, r2.torque, r2.velocity)
    >>> res = solve_l3_offset(f1, f2, q1, np.pi / 2, 0.0, l3_ratio=0.12 / np.hypot(0.5, 0.05))
    >>> round(res.theta1, 9), round(res.theta2, 9)
    (1.0, 0.4)
    """
    f1, f2, q1, g, g0, az, tol, sig_p, rtol_p = _check_one_zero_inputs(
        fit_j1,
        fit_j2,
        q1_at_j2,
        gamma,
        gamma0,
        arm_azimuth,
        singular_tol,
        parallel_sigma,
        parallel_rtol,
    )
    ratio_rtol = check_positive(amplitude_ratio_rtol, "amplitude_ratio_rtol", allow_zero=True)
    sign = check_scalar(l3_sign, "l3_sign")
    if sign == 0:
        raise ValueError(f"Expected `l3_sign` to be +1 or -1, got {l3_sign!r}.")
    lam = None if l3_ratio is None else check_scalar(l3_ratio, "l3_ratio")
    if lam is None and fit_j2_other is None:
        raise ValueError(
            "Expected `l3_ratio` or `fit_j2_other` (the model is one equation short without "
            "one of them), got neither."
        )
    if _is_parallel(f1, f2.amplitude, sig_p, rtol_p):
        return _parallel_result(
            f1,
            f2,
            q1,
            g0,
            unknown_beta=True,
            parallel_cov_fits=(f2,),
            arm_azimuth=az,
            solver="l3_offset",
        )
    sigma = _which_zero(f1, q1, "q1_at_j2", zero_tol)
    fo = _other_sweep(f1, fit_j2_other, q1_at_j2_other, f2, sigma, zero_tol, sig_p, rtol_p)
    if lam is not None and fo is not None:
        return _l3_both_facts(
            f1, f2, fo, sigma, g, g0, lam, ratio_rtol=ratio_rtol, singular_tol=tol, az=az
        )
    if lam is not None:
        lam_v = lam
        d = np.array([f1.amplitude, f1.phase, f2.amplitude, f2.phase])
        cov_d = _block_cov(f1, f2)

        def solve(dd: NDArray[np.float64]) -> _Roots:
            return _l3_ratio_roots(dd, sigma, g, g0, lam_v)

    else:
        assert fo is not None  # guaranteed by the check above
        d = np.array([f1.amplitude, f1.phase, f2.amplitude, f2.phase, fo.amplitude, fo.phase])
        cov_d = _block_cov(f1, f2, fo)

        def solve(dd: NDArray[np.float64]) -> _Roots:
            return _l3_pair_roots(dd, sigma, g, g0)

    rows, clipped = solve(d)
    if rows.shape[0] == 0:
        raise DegenerateGeometryError(
            "Expected fits consistent with the L3 model (mass on the arm's side of the J1 "
            "axis during the J1 sweep), got no admissible root: check `gamma`, `gamma0` and "
            "`l3_ratio`."
        )
    if lam is None:
        index = int(np.argmax(rows[:, 3] * np.sign(sign)))
        rule = "l3_sign picks between the mirror roots +-L3"
    else:
        index = int(np.argmin(np.abs(rows[:, 2])))
        rule = "smaller |beta| (lumped mass nearest the link line)"
    cov = _covariance(solve, d, cov_d, rows[index], True)
    return _result(
        rows,
        index,
        rule,
        cov,
        zero="unstable" if sigma == 1 else "stable",
        parallel=False,
        clipped=clipped,
        singular_tol=tol,
        arm_azimuth=az,
        solver="l3_offset",
    )


def _l3_both_facts(
    f1: _Fit,
    f2: _Fit,
    fo: _Fit,
    sigma: int,
    gamma: float,
    gamma0: float,
    lam: float,
    *,
    ratio_rtol: float,
    singular_tol: float,
    az: float,
) -> ClosedFormResult:
    """L3 solver with the kinematic ratio and J2 sweeps at both J1 zeros: score every root."""
    d = np.array([f1.amplitude, f1.phase, f2.amplitude, f2.phase, fo.amplitude, fo.phase])
    cov_d = _block_cov(f1, f2, fo)

    def solve_amplitude(dd: NDArray[np.float64]) -> _Roots:
        return _l3_ratio_roots(dd[:4], sigma, gamma, gamma0, lam)

    def solve_phase(dd: NDArray[np.float64]) -> _Roots:
        return _l3_phase_root(dd, sigma, gamma, gamma0, lam)

    amp_rows, amp_clipped = solve_amplitude(d)
    phase_rows, _ = solve_phase(d)
    # The phase root joins the candidates unless an amplitude root already is that root (always
    # so on noise-free data): the amplitude ratio can miss it, by pushing it and a neighbour
    # off the unit circle as a complex pair, when the joints' gains differ.
    duplicate = phase_rows.shape[0] == 0 or any(
        abs(float(wrap_angle(row[0] - phase_rows[0, 0]))) < _SAME_ROOT_ATOL
        and abs(row[1] - phase_rows[0, 1]) < _SAME_ROOT_ATOL
        for row in amp_rows
    )
    rows = amp_rows if duplicate else np.concatenate([amp_rows, phase_rows])
    if rows.shape[0] == 0:
        raise DegenerateGeometryError(
            "Expected fits consistent with the L3 model (mass on the arm's side of the J1 "
            "axis during the J1 sweep), got no admissible root: check `gamma`, `gamma0` and "
            "`l3_ratio`."
        )
    scores = _l3_scores(rows, d, cov_d, sigma, gamma, gamma0, ratio_rtol)
    index = int(np.argmin(scores))
    from_phases = index >= amp_rows.shape[0]
    rule = (
        "consistency with both J2 phases and the amplitude ratio (kinematic L3 ratio and a "
        "J2 sweep at each J1 zero)"
    )
    solve = solve_phase if from_phases else solve_amplitude
    cov = _covariance(solve, d, cov_d, rows[index], True)
    return _result(
        rows,
        index,
        rule,
        cov,
        zero="unstable" if sigma == 1 else "stable",
        parallel=False,
        clipped=False if from_phases else amp_clipped,
        singular_tol=singular_tol,
        arm_azimuth=az,
        solver="l3_offset",
    )


def solve_two_branch(
    fit_j1: SweepFit,
    fit_j2_a: SweepFit,
    q1_at_j2_a: float,
    fit_j2_b: SweepFit,
    q1_at_j2_b: float,
    *,
    arm_azimuth: float = 0.0,
    zero_tol: float | None = None,
    parallel_sigma: float = DEFAULT_PARALLEL_SIGMA,
    parallel_rtol: float = DEFAULT_PARALLEL_RTOL,
) -> ClosedFormResult:
    """Gravity direction from J2 sweeps at both J1 zeros: half their phase difference.

    Uses phases only, so it is invariant to the per-joint torque gains, offsets, symmetric
    friction, :math:`\\beta` and :math:`\\gamma_0`; exact when :math:`L_3 = 0`.

    Parameters
    ----------
    fit_j1 : SweepFit
        Fit of the J1 sweep.
    fit_j2_a, fit_j2_b : SweepFit
        Fits of the two J2 sweeps, one at each J1 zero (in either order).
    q1_at_j2_a, q1_at_j2_b : float
        Their J1 positions, rad.
    arm_azimuth, zero_tol, parallel_sigma, parallel_rtol
        As in :func:`solve_point_mass`. Where A1 is not significant the two positions must be
        pi apart within `zero_tol` (default 0.01 rad).

    Returns
    -------
    ClosedFormResult
        One root. Where A1 is not significant, two roots (`up` in the plane of the J2 sweeps
        at angle :math:`\\theta_2'` or :math:`\\theta_2' + \\pi`) and the one within 90 deg of
        the J1 axis is returned.

    Raises
    ------
    ValueError
        If a fit is not a single :class:`~gravdir.sweep.SweepFit`, a position is not at a J1
        zero, both sweeps are at the same zero, or the J2 amplitudes differ by more than 25%.
    DegenerateGeometryError
        If a J2 amplitude is not significant.

    Notes
    -----
    With the mass on the arm's side of the J1 axis during the J1 sweep,
    :math:`\\varphi_2^u = \\gamma_0 + \\beta - \\theta_2 + \\pi` at the unstable zero and
    :math:`\\varphi_2^s = \\gamma_0 + \\beta + \\theta_2 + \\pi` at the stable one, so

    .. math:: \\theta_2 = \\tfrac12 \\operatorname{wrap}(\\varphi_2^s - \\varphi_2^u)
              \\pmod \\pi \\in [0, \\pi), \\qquad \\theta_1 = \\pi - \\varphi_1 .

    A gain or offset leaves a phase unchanged. With an :math:`L_3` offset the difference
    gives :math:`\\theta_2' = \\operatorname{atan2}(\\sin\\theta_2\\cos\\delta, \\cos\\theta_2)`
    instead of :math:`\\theta_2` and :math:`\\theta_1` misses :math:`\\delta`.

    References
    ----------
    Seed ``000_fd3a83f130b85770.txt``; the two-branch section of ``docs/closed_form.md``.

    Examples
    --------
    >>> from gravdir.sweep import fit_sweep
    >>> from gravdir.frames import up_from_canonical
    >>> from gravdir.synthetic import canonical_arm, TorqueSensor
    >>> arm = canonical_arm(L1=0.5, L2=0.1, gamma0=0.3, up=up_from_canonical(-2.0, 0.25))
    >>> sensors = (TorqueSensor(gain=0.85, offset=0.3), TorqueSensor(gain=1.15, coulomb=0.2))
    >>> def fit(j, conf):
    ...     r = arm.sweep(j, conf, -1.5, 1.5, 0.5, 100.0, sensor=sensors)
    ...     return fit_sweep(r.q, r.torque, r.velocity)
    >>> f1 = fit(0, [0.0, 1.0])
    >>> zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    >>> res = solve_two_branch(f1, fit(1, [zu, 0.0]), zu, fit(1, [zs, 0.0]), zs)
    >>> round(res.theta1, 9), round(res.theta2, 9)
    (-2.0, 0.25)
    """
    f1 = _check_fit(fit_j1, "fit_j1")
    sig_p = _check_sigma(parallel_sigma, "parallel_sigma")
    rtol_p = _check_sigma(parallel_rtol, "parallel_rtol")
    fa = _check_j2_fit(fit_j2_a, "fit_j2_a", sig_p, rtol_p)
    fb = _check_j2_fit(fit_j2_b, "fit_j2_b", sig_p, rtol_p)
    qa = check_scalar(q1_at_j2_a, "q1_at_j2_a")
    qb = check_scalar(q1_at_j2_b, "q1_at_j2_b")
    az = check_scalar(arm_azimuth, "arm_azimuth")
    _check_pair_amplitudes(fa, fb, "fit_j2_b")
    if _is_parallel(f1, max(fa.amplitude, fb.amplitude), sig_p, rtol_p):
        tol = DEFAULT_ZERO_ATOL if zero_tol is None else check_positive(zero_tol, "zero_tol")
        gap = abs(float(wrap_angle(qb - qa - np.pi)))
        if gap > tol:
            raise ValueError(
                f"Expected `q1_at_j2_b` pi away from `q1_at_j2_a` (within {tol:.3g} rad) "
                f"because A1 is not significant, got them {gap:.3g} rad off."
            )
        # In the plane of sweep a: phi_a = c - t, phi_b = c + t (t = signed in-plane angle).
        half = float(wrap_angle(fb.phase - fa.phase)) / 2.0
        prow = []
        for t in (half, half + np.pi):
            t = float(wrap_angle(t))
            theta1 = float(wrap_angle(qa if t >= 0 else qa + np.pi))
            prow.append([theta1, abs(t), 0.0, 0.0, np.pi])
        arr = np.array(prow)
        index = int(np.argmin(arr[:, 1]))
        var = (fa.cov[1, 1] + fb.cov[1, 1]) / 4.0
        return _result(
            arr,
            index,
            "gravity parallel to J1: half phase difference, up within 90 deg of the J1 axis",
            np.array([[np.inf, 0.0], [0.0, var]]),
            zero="none",
            parallel=True,
            clipped=False,
            singular_tol=0.0,
            arm_azimuth=az,
            solver="two_branch",
        )
    sigma_a = _which_zero(f1, qa, "q1_at_j2_a", zero_tol)
    sigma_b = _which_zero(f1, qb, "q1_at_j2_b", zero_tol)
    if sigma_a == sigma_b:
        raise ValueError(
            "Expected `q1_at_j2_b` at the other J1 zero than `q1_at_j2_a`, got both at the "
            f"{'unstable' if sigma_a == 1 else 'stable'} zero."
        )
    d = np.array([f1.amplitude, f1.phase, fa.amplitude, fa.phase, fb.amplitude, fb.phase])

    def solve(dd: NDArray[np.float64]) -> _Roots:
        return _two_branch_roots(dd, sigma_a)

    rows, clipped = solve(d)
    cov = _covariance(solve, d, _block_cov(f1, fa, fb), rows[0], True)
    return _result(
        rows,
        0,
        "half the J2 phase difference between the two J1 zeros",
        cov,
        zero="unstable" if sigma_a == 1 else "stable",
        parallel=False,
        clipped=clipped,
        singular_tol=0.0,
        arm_azimuth=az,
        solver="two_branch",
    )
