"""Argument checks and thresholds shared by the closed-form solvers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_positive, check_scalar
from gravdir.errors import DegenerateGeometryError
from gravdir.sweep import SweepFit, wrap_angle

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
# amplitude equation vanishes: theta2 = 90 deg for the lumped point-mass model) is flagged
# `near_singular`: there a relative amplitude error e moves theta2 by about sqrt(2 e).
DEFAULT_SINGULAR_TOL = 1e-3
# Two J2 sweeps of one joint at the two J1 zeros have equal gravity amplitudes in the model; a
# relative difference above 25% (far beyond noise, friction leakage or a few degrees of
# positioning error) means the fits do not belong together.
DEFAULT_AMPLITUDE_MISMATCH_RTOL = 0.25
# In the consistency score of the out-of-plane offset solver (kinematic ratio and a second J2
# sweep both given), the amplitude ratio A1 / A2 counts with a relative standard deviation of at
# least this on top of its fit covariance: it mixes the torque gains of two joints, and per-joint
# gain errors of +-15% (usual for current-based torque estimates, uniform) spread the ratio by
# about 12% (one standard deviation), which no fit covariance contains. Phases do not depend on
# gains.
DEFAULT_AMPLITUDE_RATIO_RTOL = 0.12


@dataclass(frozen=True)
class _Fit:
    """What the solvers use of one single-sweep fit.

    `cov` is the covariance of (amplitude, phase); `coef` = (a, b) = A (cos phi, sin phi) are the
    Cartesian coefficients of the gravity sinusoid a sin q + b cos q, `coef_cov` their covariance.
    """

    amplitude: float
    phase: float
    cov: NDArray[np.float64]
    amplitude_std: float
    phase_std: float
    coef: NDArray[np.float64]
    coef_cov: NDArray[np.float64]
    scale: float


@dataclass(frozen=True)
class _OneZero:
    """Validated inputs of a solver fed a J1 fit and one J2 sweep at a J1 zero."""

    f1: _Fit
    f2: _Fit
    q1: float
    gamma: float
    gamma0: float
    az: float
    singular_tol: float
    parallel_sigma: float
    parallel_rtol: float


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
    names = tuple(fit.column_names)
    ab = [names.index("sin"), names.index("cos")]
    coefficients = np.asarray(fit.coefficients, dtype=np.float64)
    return _Fit(
        amplitude=amp,
        phase=phase,
        cov=cov,
        amplitude_std=float(np.sqrt(cov[0, 0])),
        phase_std=float(np.sqrt(cov[1, 1])),
        coef=np.array(coefficients[ab]),
        coef_cov=np.array(np.asarray(fit.covariance, dtype=np.float64)[np.ix_(ab, ab)]),
        scale=float(np.max(np.abs(coefficients))),
    )


def _check_j2_fit(fit: object, name: str, sigma: float, rtol: float) -> _Fit:
    f = _check_fit(fit, name)
    # Significant: above `sigma` standard deviations and above the rounding level (`rtol`) of
    # the largest fitted coefficient (offset, friction), which a noise-free fit leaves.
    threshold = max(sigma * f.amplitude_std, rtol * f.scale)
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


def _check_j1_and_j2(
    fit_j1: object,
    fits_j2: dict[str, object],
    parallel_sigma: float,
    parallel_rtol: float,
) -> tuple[_Fit, list[_Fit], float, float]:
    """The J1 fit, the J2 fits (each significant) and the two parallel-test thresholds."""
    f1 = _check_fit(fit_j1, "fit_j1")
    sig_p = check_positive(parallel_sigma, "parallel_sigma", allow_zero=True)
    rtol_p = check_positive(parallel_rtol, "parallel_rtol", allow_zero=True)
    f2 = [_check_j2_fit(fit, name, sig_p, rtol_p) for name, fit in fits_j2.items()]
    return f1, f2, sig_p, rtol_p


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
) -> _OneZero:
    """Validated inputs shared by the solvers fed a J1 fit and one J2 sweep at a J1 zero."""
    f1, (f2,), sig_p, rtol_p = _check_j1_and_j2(
        fit_j1, {"fit_j2": fit_j2}, parallel_sigma, parallel_rtol
    )
    return _OneZero(
        f1=f1,
        f2=f2,
        q1=check_scalar(q1_at_j2, "q1_at_j2"),
        gamma=_check_gamma(gamma),
        gamma0=check_scalar(gamma0, "gamma0"),
        az=check_scalar(arm_azimuth, "arm_azimuth"),
        singular_tol=check_positive(singular_tol, "singular_tol", allow_zero=True),
        parallel_sigma=sig_p,
        parallel_rtol=rtol_p,
    )


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


def _check_other_zero(sigma_other: int, sigma: int, name: str, first: str) -> None:
    if sigma_other == sigma:
        raise ValueError(
            f"Expected `{name}` at the other J1 zero than `{first}`, got both at the "
            f"{'unstable' if sigma == 1 else 'stable'} zero."
        )


def _other_sweep(
    inputs: _OneZero,
    fit_other: SweepFit | None,
    q1_other: float | None,
    sigma: int,
    zero_tol: float | None,
) -> _Fit | None:
    """The optional J2 sweep at the other J1 zero, validated (None if not given)."""
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
    fo = _check_j2_fit(fit_other, "fit_j2_other", inputs.parallel_sigma, inputs.parallel_rtol)
    q = check_scalar(q1_other, "q1_at_j2_other")
    sigma_o = _which_zero(inputs.f1, q, "q1_at_j2_other", zero_tol)
    _check_other_zero(sigma_o, sigma, "q1_at_j2_other", "q1_at_j2")
    _check_pair_amplitudes(inputs.f2, fo, "fit_j2_other")
    return fo
