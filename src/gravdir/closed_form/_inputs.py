"""Argument checks and thresholds shared by the closed-form solvers."""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_positive, check_radians, check_scalar
from gravdir.errors import DegenerateGeometryError, GravdirWarning
from gravdir.sweep import SweepFit, wrap_angle

# A1 counts as "not significant" (gravity parallel to the J1 axis) below
# max(PARALLEL_SIGMA * std(A1), PARALLEL_RTOL * A2). Three standard deviations is the usual
# detection threshold for a fitted amplitude; the relative floor 1e-9 sits far above the
# ~1e-15 relative rounding of a noise-free fit and far below any tilt a sweep resolves
# (A1 / A2 = 1e-9 is a tilt of about 1e-9 rad).
#: Standard deviations of the J1 amplitude below which gravity counts as parallel to J1's axis.
DEFAULT_PARALLEL_SIGMA = 3.0
#: Floor, relative to the J2 amplitude, below which the J1 amplitude counts as zero.
DEFAULT_PARALLEL_RTOL = 1e-9
# The J1 position held during a J2 sweep must lie within max(ZERO_SIGMA * std(phi1), ZERO_ATOL)
# of a J1 zero. Being off by eps tilts the J2 sweep plane by eps and biases theta2 by at most
# eps**2 / 4 (0.0014 deg at eps = 0.01 rad), so 0.01 rad is a safe floor; five standard
# deviations of the fitted zero cover the zero's own uncertainty.
#: Standard deviations of a fitted J1 zero within which a J2 sweep's J1 position must lie.
DEFAULT_ZERO_SIGMA = 5.0
#: Floor, rad, of how far a J2 sweep's J1 position may lie from a J1 zero.
DEFAULT_ZERO_ATOL = 1e-2
# A root closer than this (rad) to the point where it merges with another root (the slope of the
# amplitude equation vanishes: theta2 = 90 deg for the lumped point-mass model) is flagged
# `near_singular`: there a relative amplitude error e moves theta2 by about sqrt(2 e).
#: Distance, rad, from where two roots merge below which a root is flagged ``near_singular``.
DEFAULT_SINGULAR_TOL = 1e-3
# Two J2 sweeps of one joint at the two J1 zeros have equal gravity amplitudes in the model; a
# relative difference above 25% (far beyond noise, friction leakage or a few degrees of
# positioning error) means the fits do not belong together.
#: Relative difference of two J2 amplitudes above which their sweeps are refused as unrelated.
DEFAULT_AMPLITUDE_MISMATCH_RTOL = 0.25
# In the consistency score of the out-of-plane offset solver (kinematic ratio and a second J2
# sweep both given), the amplitude ratio A1 / A2 counts with a relative standard deviation of at
# least this on top of its fit covariance: it mixes the torque gains of two joints, and per-joint
# gain errors of +-15% (usual for current-based torque estimates, uniform) spread the ratio by
# about 12% (one standard deviation), which no fit covariance contains. Phases do not depend on
# gains.
#: Relative standard deviation added to the amplitude ratio A1 / A2 for the joints' gains.
DEFAULT_AMPLITUDE_RATIO_RTOL = 0.12

# |L3 / R12| above this is not a lumped mass beside a link (an offset along the J2 axis a
# thousand times the mass's distance from it); refused, which also keeps lambda**2 finite.
L3_RATIO_MAX = 1e3
# A J2 gravity amplitude below this fraction of the J1 amplitude is refused: the amplitude ratio
# A1 / A2 of a lumped-mass arm is sin(theta2) sqrt(s**2 + lambda**2) / N, far below a billion
# unless the mass lies on the J2 axis, where the J2 sweep sees no gravity load. The floor also
# bounds every ratio the solvers form.
J2_RATIO_FLOOR = 1e-9
# `amplitude_ratio_rtol` above this counts for nothing more: the amplitude ratio is already
# ignored by the consistency score far below it.
AMPLITUDE_RATIO_RTOL_MAX = 1e6
# A decision between roots (theta2 or pi - theta2, up or down, the branch of half a phase
# difference) whose measured margin is below this many standard deviations is warned about:
# three standard deviations is the detection threshold used for amplitudes above.
DECISION_SIGMA = 3.0
# A clipped root is refused when the amplitude ratio would have to change by more than
# DEFAULT_AMPLITUDE_MISMATCH_RTOL (25%: far beyond gain errors of +-15% per joint) and by more
# than this many standard deviations of the fits to reach an admissible root; the data then
# contradict `gamma` (or `gamma0`), not noise.
CLIP_SIGMA = 5.0


def warn(message: str) -> None:
    """Warn with :class:`GravdirWarning`, attributed to the first caller outside this package."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        "gravdir.closed_form"
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, GravdirWarning, stacklevel=level + 1)


def check_number(x: Any, name: str) -> float:
    """One finite real number: not a bool, not text (numeric strings included)."""
    if isinstance(x, bool | np.bool_) or (isinstance(x, np.ndarray) and x.dtype == np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    return check_scalar(x, name)


def check_angle(
    x: Any, name: str, kind: Literal["joint positions", "azimuths"] = "joint positions"
) -> float:
    """One number, an angle in radians within ±4π: beyond, it is taken for degrees
    (:func:`~gravdir._checks.check_radians`)."""
    value = check_number(x, name)
    check_radians(value, name, kind=kind)
    return value


def check_tolerance(x: Any, name: str, *, allow_zero: bool = True) -> float:
    """A finite non-negative (or positive) tolerance; bools and text (numeric strings and
    arrays of them included) refused."""
    return check_positive(check_number(x, name), name, allow_zero=allow_zero)


def check_l3_ratio(x: Any) -> float:
    """`l3_ratio`: finite, at most L3_RATIO_MAX in magnitude."""
    value = check_number(x, "l3_ratio")
    if abs(value) > L3_RATIO_MAX:
        raise ValueError(
            f"Expected `l3_ratio` (L3 / R12) within +-{L3_RATIO_MAX:g}, got {value:.6g}."
        )
    return value


def check_l3_sign(x: Any) -> int:
    """`l3_sign`: the number 1 or -1 (not a bool, not a string)."""
    number = isinstance(x, int | float | np.integer | np.floating)
    if isinstance(x, bool | np.bool_) or not number or x not in (1, -1):
        raise ValueError(f"Expected `l3_sign` to be 1 or -1, got {x!r}.")
    return int(x)


def check_ratio_rtol(x: Any) -> float:
    """`amplitude_ratio_rtol`: finite, non-negative, at most AMPLITUDE_RATIO_RTOL_MAX."""
    value = check_tolerance(x, "amplitude_ratio_rtol")
    if value > AMPLITUDE_RATIO_RTOL_MAX:
        raise ValueError(
            f"Expected `amplitude_ratio_rtol` at most {AMPLITUDE_RATIO_RTOL_MAX:g}, got {x!r}."
        )
    return value


@dataclass(frozen=True)
class _Fit:
    """What the solvers use of one single-sweep fit.

    `cov` is the covariance of (amplitude, phase); `coef` = (a, b) = A (cos phi, sin phi) are the
    Cartesian coefficients of the gravity sinusoid a sin q + b cos q, `coef_cov` their covariance.
    Amplitudes, coefficients and their covariances are in units of `unit` (the largest amplitude
    of the fits of one call, once :func:`in_common_unit` has divided it out), so that the fits of
    any finite scale are solved without overflow; every angle and `up` is scale invariant.
    `finite` is false where the fit's covariance is infinite or NaN: every variance is then
    infinite and the result carries no information.
    """

    amplitude: float
    phase: float
    cov: NDArray[np.float64]
    amplitude_std: float
    phase_std: float
    coef: NDArray[np.float64]
    coef_cov: NDArray[np.float64]
    scale: float
    finite: bool
    name: str
    unit: float = 1.0
    fingerprint: frozenset[str] = frozenset()


_INFINITE = np.diag([np.inf, np.inf])
_NON_FINITE = (
    "has an infinite or NaN covariance of its gravity coefficients (as a fit of overflowing "
    "torques leaves; a negative variance counts the same): its uncertainty is unknown, so the "
    "result's is infinite (`theta_cov` infinite, `up_information` zero)."
)


def _polar_covariance(
    amplitude: float, phase: float, c: NDArray[np.float64]
) -> tuple[float, float, float]:
    """var(A), cov(A, phi), var(phi) from the covariance c of (a, b) = A (cos phi, sin phi).

    The Jacobian rows are u = (cos phi, sin phi) and v / A, v = (-sin phi, cos phi); Python
    floats, so an overflow gives infinity instead of an exception.
    """
    c00, c01, c11 = float(c[0, 0]), float(c[0, 1]), float(c[1, 1])
    if amplitude == 0.0:
        # The phase is undefined (infinite variance); A varies as the larger principal value.
        return float(np.linalg.eigvalsh(c)[-1]), 0.0, math.inf
    co, si = math.cos(phase), math.sin(phase)
    var_a = co * co * c00 + 2.0 * co * si * c01 + si * si * c11
    cov_ap = (-si * co * c00 + (co * co - si * si) * c01 + si * co * c11) / amplitude
    var_p = (si * si * c00 - 2.0 * si * co * c01 + co * co * c11) / amplitude / amplitude
    return max(var_a, 0.0), cov_ap, max(var_p, 0.0)


def _fit_record(
    name: str,
    amp: float,
    phase: float,
    coef: NDArray[np.float64],
    coef_cov: NDArray[np.float64],
    scale: float,
    unit: float,
    fingerprint: frozenset[str] = frozenset(),
) -> _Fit:
    """A _Fit from its coefficients and their covariance; non-finite anything: infinite."""
    finite = bool(np.all(np.isfinite(coef_cov)) and coef_cov[0, 0] >= 0 and coef_cov[1, 1] >= 0)
    if finite:
        var_a, cov_ap, var_p = _polar_covariance(amp, phase, coef_cov)
        finite = (
            math.isfinite(var_a) and math.isfinite(cov_ap) and (math.isfinite(var_p) or amp == 0)
        )
    if not finite:
        return _Fit(
            amplitude=amp,
            phase=phase,
            cov=_INFINITE.copy(),
            amplitude_std=math.inf,
            phase_std=math.inf,
            coef=coef,
            coef_cov=_INFINITE.copy(),
            scale=scale,
            finite=False,
            name=name,
            unit=unit,
            fingerprint=fingerprint,
        )
    return _Fit(
        amplitude=amp,
        phase=phase,
        cov=np.array([[var_a, cov_ap], [cov_ap, var_p]]),
        amplitude_std=math.sqrt(var_a),
        phase_std=math.sqrt(var_p),
        coef=coef,
        coef_cov=np.array(coef_cov, dtype=np.float64),
        scale=scale,
        finite=True,
        name=name,
        unit=unit,
        fingerprint=fingerprint,
    )


def _check_fit(fit: object, name: str) -> _Fit:
    if not isinstance(fit, SweepFit):
        raise ValueError(f"Expected `{name}` to be a SweepFit, got {type(fit).__name__}.")
    if np.shape(fit.amplitude) != ():
        raise ValueError(
            f"Expected `{name}` to be the fit of a single sweep (batch shape ()), got batch "
            f"shape {np.shape(fit.amplitude)}; call the solver once per sweep set."
        )
    names = tuple(fit.column_names)
    try:
        amp, phase = float(fit.amplitude), float(fit.phase)
        coefficients = np.asarray(fit.coefficients, dtype=np.float64)
        covariance = np.asarray(fit.covariance, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Expected `{name}` to hold numbers, got {exc}.") from None
    p = len(names)
    if (
        "sin" not in names
        or "cos" not in names
        or coefficients.shape != (p,)
        or covariance.shape != (p, p)
    ):
        raise ValueError(
            f"Expected `{name}` to have `sin` and `cos` columns, coefficients of shape (p,) and "
            f"a covariance of shape (p, p), got columns {names}, shapes {coefficients.shape} "
            f"and {covariance.shape}."
        )
    ab = [names.index("sin"), names.index("cos")]
    coef = np.array(coefficients[ab])
    if not (math.isfinite(amp) and math.isfinite(phase) and np.all(np.isfinite(coef))):
        raise ValueError(
            f"Expected `{name}` to have a finite amplitude, phase and gravity coefficients, got "
            f"amplitude {amp!r} and phase {phase!r}."
        )
    record = _fit_record(
        name,
        amp,
        phase,
        coef,
        np.array(covariance[np.ix_(ab, ab)]),
        float(np.max(np.abs(coefficients[np.isfinite(coefficients)]), initial=0.0)),
        1.0,
        fit.fingerprint,
    )
    if not record.finite:
        warn(f"`{name}` {_NON_FINITE}")
    return record


def in_common_unit(*fits: _Fit) -> tuple[_Fit, ...]:
    """The fits with the largest amplitude among them divided out (see :class:`_Fit`)."""
    unit = max(f.amplitude for f in fits)
    if not (unit > 0 and math.isfinite(unit)):
        return fits
    out = []
    for f in fits:
        with np.errstate(over="ignore", under="ignore"):
            coef_cov = f.coef_cov / unit / unit
        rescaled = _fit_record(
            f.name,
            f.amplitude / unit,
            f.phase,
            f.coef / unit,
            coef_cov,
            f.scale / unit,
            unit,
            f.fingerprint,
        )
        if f.finite and not rescaled.finite:
            warn(f"`{f.name}` {_NON_FINITE}")
        out.append(rescaled)
    return tuple(out)


def _check_j2_fit(fit: object, name: str, sigma: float, rtol: float) -> _Fit:
    f = _check_fit(fit, name)
    # Significant: above `sigma` standard deviations and above the rounding level (`rtol`) of
    # the largest fitted coefficient (offset, friction), which a noise-free fit leaves. Without a
    # finite covariance only the second test can be made.
    noise = sigma * f.amplitude_std if f.finite and sigma > 0 else 0.0
    threshold = max(noise, rtol * f.scale)
    if f.amplitude <= 0 or f.amplitude <= threshold:
        raise DegenerateGeometryError(
            f"Expected `{name}` to have a significant gravity amplitude (above {threshold:.3g}: "
            f"{sigma:g} standard deviations or {rtol:g} of the largest coefficient), got "
            f"{f.amplitude:.3g}: the J2 sweep carries no gravity load."
        )
    return f


def _check_j2_against_j1(f1: _Fit, f2: _Fit) -> None:
    if f2.amplitude < J2_RATIO_FLOOR * f1.amplitude:
        raise DegenerateGeometryError(
            f"Expected `{f2.name}` to have a gravity amplitude of at least {J2_RATIO_FLOOR:g} of "
            f"the J1 amplitude, got {f2.amplitude:.3g} against {f1.amplitude:.3g}: the J2 sweep "
            "carries no gravity load the solvers can resolve."
        )


def _check_gamma(gamma: ArrayLike) -> float:
    """`gamma`, the link's angle from +z (the J1 axis): a tilt, in [0, pi] (beyond pi it is taken
    for degrees), and neither end, where the mass would lie on the J1 axis."""
    value = check_number(gamma, "gamma")
    check_radians(value, "gamma", kind="tilts")
    if not 0.0 < value < np.pi:
        raise ValueError(
            f"Expected `gamma` in (0, pi) (the link angle from +z during the J1 sweep), got "
            f"{value!r} rad; at 0 or pi the mass is not on the arm's side of the J1 axis."
        )
    return value


def _check_j1_and_j2(
    fit_j1: object,
    fits_j2: dict[str, object],
    parallel_sigma: float,
    parallel_rtol: float,
) -> tuple[_Fit, list[_Fit], float, float]:
    """The J1 fit, the J2 fits (each significant) and the two parallel-test thresholds, all in
    the common unit of the fits."""
    sig_p = check_tolerance(parallel_sigma, "parallel_sigma")
    rtol_p = check_tolerance(parallel_rtol, "parallel_rtol")
    f1 = _check_fit(fit_j1, "fit_j1")
    f2 = [_check_j2_fit(fit, name, sig_p, rtol_p) for name, fit in fits_j2.items()]
    for f in f2:
        _check_j2_against_j1(f1, f)
    f1, *f2 = in_common_unit(f1, *f2)
    return f1, f2, sig_p, rtol_p


def check_zero_tol(zero_tol: Any) -> float | None:
    """`zero_tol`: None (the default rule) or a positive finite distance, rad."""
    return None if zero_tol is None else check_tolerance(zero_tol, "zero_tol", allow_zero=False)


@dataclass(frozen=True)
class _OneZero:
    """Validated inputs of a solver fed a J1 fit and one J2 sweep at a J1 zero (and possibly a
    second J2 sweep, `fo` at `q1_other`, at the other zero)."""

    f1: _Fit
    f2: _Fit
    fo: _Fit | None
    q1: float
    q1_other: float | None
    gamma: float
    gamma0: float
    az: float
    zero_tol: float | None
    singular_tol: float
    parallel_sigma: float
    parallel_rtol: float


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
    zero_tol: Any = None,
    fit_j2_other: object = None,
    q1_at_j2_other: Any = None,
) -> _OneZero:
    """Validated inputs shared by the solvers fed a J1 fit and one J2 sweep at a J1 zero."""
    q1 = check_angle(q1_at_j2, "q1_at_j2")
    g = _check_gamma(gamma)
    g0 = check_angle(gamma0, "gamma0")
    az = check_angle(arm_azimuth, "arm_azimuth", "azimuths")
    tol = check_zero_tol(zero_tol)
    singular = check_tolerance(singular_tol, "singular_tol")
    if fit_j2_other is None and q1_at_j2_other is not None:
        raise ValueError(
            "Expected `q1_at_j2_other` only together with `fit_j2_other`, got a position "
            "without a fit."
        )
    if fit_j2_other is not None and q1_at_j2_other is None:
        raise ValueError(
            "Expected `q1_at_j2_other` (the J1 position of the second J2 sweep), got None."
        )
    q_other = None if q1_at_j2_other is None else check_angle(q1_at_j2_other, "q1_at_j2_other")
    fits_j2 = {"fit_j2": fit_j2}
    if fit_j2_other is not None:
        fits_j2["fit_j2_other"] = fit_j2_other
    f1, f2s, sig_p, rtol_p = _check_j1_and_j2(fit_j1, fits_j2, parallel_sigma, parallel_rtol)
    return _OneZero(
        f1=f1,
        f2=f2s[0],
        fo=f2s[1] if len(f2s) > 1 else None,
        q1=q1,
        q1_other=q_other,
        gamma=g,
        gamma0=g0,
        az=az,
        zero_tol=tol,
        singular_tol=singular,
        parallel_sigma=sig_p,
        parallel_rtol=rtol_p,
    )


def _is_parallel(f1: _Fit, a2: float, sigma: float, rtol: float) -> bool:
    noise = sigma * f1.amplitude_std if f1.finite and sigma > 0 else 0.0
    return f1.amplitude <= max(noise, rtol * a2)


def _which_zero(f1: _Fit, q1: float, name: str, zero_tol: float | None) -> int:
    """+1 if `q1` is the unstable J1 zero, -1 if the stable one; ValueError if neither."""
    if zero_tol is None:
        own = DEFAULT_ZERO_SIGMA * f1.phase_std
        tol = max(own, DEFAULT_ZERO_ATOL) if math.isfinite(own) else DEFAULT_ZERO_ATOL
    else:
        tol = zero_tol
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
            f"(within {DEFAULT_AMPLITUDE_MISMATCH_RTOL:.0%}), got {b.amplitude * b.unit:.6g} "
            f"against {a.amplitude * a.unit:.6g}: the two J2 fits do not belong to one arm "
            "posture."
        )


def _check_other_zero(sigma_other: int, sigma: int, name: str, first: str) -> None:
    if sigma_other == sigma:
        raise ValueError(
            f"Expected `{name}` at the other J1 zero than `{first}`, got both at the "
            f"{'unstable' if sigma == 1 else 'stable'} zero."
        )


def _other_sweep(inputs: _OneZero, sigma: int) -> _Fit | None:
    """The optional J2 sweep at the other J1 zero, checked against the first (None if absent)."""
    fo, q = inputs.fo, inputs.q1_other
    if fo is None or q is None:
        return None
    sigma_o = _which_zero(inputs.f1, q, "q1_at_j2_other", inputs.zero_tol)
    _check_other_zero(sigma_o, sigma, "q1_at_j2_other", "q1_at_j2")
    _check_pair_amplitudes(inputs.f2, fo, "fit_j2_other")
    return fo


# --------------------------------------------------------------------------------------------
# Decisions near their boundary


def relative_ratio_std(*fits: _Fit) -> float:
    """Relative standard deviation of a ratio (or product) of the fits' amplitudes."""
    total = 0.0
    for f in fits:
        if not f.finite or f.amplitude <= 0:
            return math.inf
        total = math.hypot(total, f.amplitude_std / f.amplitude)
    return total


def _in_sigmas(margin: float, std: float) -> float:
    if std > 0:
        return margin / std
    return math.inf if margin > 0 else 0.0


def warn_decision(solver: str, what: str, margin: float, std: float) -> None:
    """Warn where a decision's margin is below DECISION_SIGMA standard deviations.

    Nothing is said where the standard deviation is unknown (a non-finite covariance, warned
    about already).
    """
    if not math.isfinite(std):
        return
    k = _in_sigmas(margin, std)
    if k < DECISION_SIGMA:
        warn(
            f"{solver}: {what}, by a margin of {margin:.3g} rad, {k:.3g} standard deviations "
            f"(below {DECISION_SIGMA:g}): the other choice is nearly as likely."
        )


def clip_decision(
    solver: str, quantity: str, excess: float, std: float, relative: float | None, checks: str
) -> None:
    """Warn about a clipped root, or refuse data that no admissible root comes near.

    `excess` is how far `quantity` lies beyond its admissible range, `std` its standard
    deviation from the fits (infinite where unknown), `relative` the relative change of the
    amplitude ratio that would bring it back (None where that does not apply). Refused where
    `relative` exceeds DEFAULT_AMPLITUDE_MISMATCH_RTOL and `excess` exceeds CLIP_SIGMA standard
    deviations: neither noise nor a gain mismatch explains it.
    """
    known = math.isfinite(std)
    k = _in_sigmas(excess, std) if known else 0.0
    margin = f"{k:.3g} standard deviations of the fits" if known else "no standard deviation"
    if relative is not None:
        margin += f", {relative:.2%} of the amplitude ratio"
    if relative is not None and relative > DEFAULT_AMPLITUDE_MISMATCH_RTOL and k > CLIP_SIGMA:
        raise DegenerateGeometryError(
            f"Expected fits consistent with {checks}: {quantity} lies {excess:.3g} beyond its "
            f"admissible range ({margin}; more than {CLIP_SIGMA:g} standard deviations, and "
            f"more than the {DEFAULT_AMPLITUDE_MISMATCH_RTOL:.0%} of the ratio a gain mismatch "
            "explains)."
        )
    warn(
        f"{solver}: {quantity} lies {excess:.3g} beyond its admissible range ({margin}) and was "
        f"clipped to the boundary (`clipped` set): noise near merging roots, a gain mismatch of "
        f"the two joints or a wrong {checks}."
    )
