"""The covariance of a friction fit: the delta method on the column-scaled Jacobian, and the
covariance carried back to the caller's units."""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import NDArray

from gravdir._rank import reciprocal_condition
from gravdir.errors import GravdirWarning, InsufficientDataError
from gravdir.friction._inputs import lost_in_scaling, representable

__all__ = ["JACOBIAN_RCOND", "delta_method_cov", "unscaled_cov"]

#: The Jacobian at the optimum must have a reciprocal condition above this once its columns are
#: scaled to unit norm (its normalised information J^T J a condition number below 1e12): below,
#: a parameter's standard error is dominated by round-off of the other columns.
JACOBIAN_RCOND = 1e-6


def delta_method_cov(
    jac: NDArray[np.float64], sigma2: float, names: list[str], model: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``sigma2 (JᵀJ)⁻¹`` and the standard errors of the parameters `names` of the fit of
    `model`, from the column-scaled Jacobian `jac` (m, p).

    Each column is divided by its largest entry and then by its norm before any product is
    formed, so no square of a column overflows or underflows whatever the scale of the
    parameters (a torque dominated by one sample of 1e300 makes the other columns' entries
    1e-300 in scaled units); the decision that the data determine the parameters is taken on
    those scaled columns, before anything is inverted. Where a variance leaves the float range
    the covariance is infinite throughout; the standard errors are then computed without
    squaring the scales and stay finite.
    """
    if not np.all(np.isfinite(jac)):
        raise ValueError(
            "Expected `velocity`, `torque` and `acceleration` whose model derivatives fit the "
            "float range, got an overflow in the Jacobian of the fit."
        )
    top = np.max(np.abs(jac), axis=0)
    zero = [n for n, t in zip(names, top, strict=True) if t == 0]
    if zero:
        raise InsufficientDataError(
            "Expected every parameter to affect the torque at the samples used (`velocity` with "
            "|velocity| >= `min_speed`), got no effect of "
            + ", ".join(f"`{n}`" for n in zero)
            + " at any sample."
        )
    rcond = reciprocal_condition(jac)
    unit = jac / top
    norms = np.linalg.norm(unit, axis=0)
    unit = unit / norms
    if not rcond > JACOBIAN_RCOND:
        involved = np.abs(np.linalg.svd(unit)[2][-1]) > 0.1
        raise InsufficientDataError(
            f"Expected `velocity` and `torque` to determine every parameter of the "
            f"{model!r} model, got nearly dependent terms "
            + ", ".join(f"`{n}`" for n, i in zip(names, involved, strict=True) if i)
            + f" at the optimum (reciprocal condition {rcond:.1e}, at most {JACOBIAN_RCOND:g})."
        )
    inv = np.linalg.inv(unit.T @ unit)
    scale = top * norms
    with np.errstate(over="ignore", under="ignore"):
        cov = sigma2 * ((inv / scale[:, None]) / scale[None, :])
        std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        direct = math.sqrt(sigma2) * np.sqrt(np.clip(np.diag(inv), 0.0, None)) / scale
    # Where the variance left the float range, the standard error from the unsquared scales, and
    # the covariance infinite throughout (never a variance lost to underflow reported as zero).
    lost = ~representable(np.diag(cov)) | ~representable(std)
    if np.any(lost):
        std = np.where(lost, direct, std)
        if np.any(lost & (direct > 0)):
            cov = np.full_like(cov, np.inf)
    return cov, std


def unscaled_cov(cov: NDArray[np.float64], k: NDArray[np.int64]) -> NDArray[np.float64]:
    """`cov` scaled by ``2**(k_i + k_j)``; infinite throughout, with a warning, if it leaves the
    float range (an uncertainty lost to overflow or underflow is never reported as zero)."""
    if not np.any(k) and np.all(np.isfinite(cov)):
        return cov
    with np.errstate(over="ignore"):
        out: NDArray[np.float64] = np.ldexp(cov, k[:, None] + k[None, :])
    if np.any(lost_in_scaling(cov, out)) or not np.all(np.isfinite(out)):
        warnings.warn(
            "The covariance of the friction fit leaves the float range in the units of the data: "
            "`parameters_cov` is returned as infinite; `parameters_std` holds the standard errors.",
            GravdirWarning,
            stacklevel=5,
        )
        return np.full_like(cov, np.inf)
    return out
