"""Validators and the propagation of `up`'s information shared by the controller conversions."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import gravdir._sphere
from gravdir._checks import (
    check_array,
    check_same_shape,
    check_unit_vector,
    nearest_rotation,
)
from gravdir._results import Result, UpResult
from gravdir._sphere import (
    checked_up_information,
    informative,
    tangent_basis,
    up_information_from_tangent,
)

# Tangent-plane eigenvalues at or below REL_FLOOR of the largest (and below ABS_FLOOR 1/rad², a
# standard deviation beyond 1e100 rad) count as zero information: the one rule of
# `gravdir._sphere.informative`, so a variance is infinite exactly where `up_cov` is.
REL_FLOOR = gravdir._sphere.REL_FLOOR
ABS_FLOOR = gravdir._sphere.ABS_FLOOR

# A component of a propagated outer product at or below this fraction of the largest is rounding
# noise of an exact zero (a direction with no component there), not an infinite variance.
ZERO_COMPONENT = 1e-15


def fmt(v: ArrayLike) -> str:
    """Compact text of a small array for a ``repr``."""
    return np.array2string(np.asarray(v, dtype=float), precision=6, suppress_small=True)



def check_text(x: Any, name: str) -> str:
    """A string argument (a frame label); anything else is refused."""
    if not isinstance(x, str):
        raise ValueError(f"Expected `{name}` to be a string, got {type(x).__name__}.")
    return x


def unit_up(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """(..., 3) unit vectors within 1e-6, normalised to rounding."""
    v = check_unit_vector(x, name)
    with np.errstate(under="ignore"):
        out: NDArray[np.float64] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return out


def information_from_up_cov(
    up: NDArray[np.float64], cov: ArrayLike, name: str = "up_cov"
) -> NDArray[np.float64]:
    """The (..., 3, 3) information of `up` from a finite (..., 3, 3) covariance of it.

    The covariance is projected on the tangent plane of `up` (its component along `up` says
    nothing about a direction) and inverted there. It must be symmetric and positive definite in
    the plane: a zero variance would be an infinite information, a negative one no covariance.
    `up` and `cov` broadcast over their leading axes.
    """
    c = check_array(cov, name, tail=(3, 3))
    batch = check_same_shape(**{name: c[..., 0, 0], "up": up[..., 0]})  # the leading axes
    u = np.broadcast_to(up, (*batch, 3))
    c = np.broadcast_to(c, (*batch, 3, 3))
    scale = np.max(np.abs(c), axis=(-2, -1)) if c.size else np.zeros(batch)
    if np.any(scale == 0.0):
        raise ValueError(
            f"Expected `{name}` to be positive definite in the tangent plane of `up`, got a zero "
            "matrix (an exactly known `up`); pass None for an unknown uncertainty."
        )
    with np.errstate(under="ignore"):
        cs = c / scale[..., None, None]
        asym = float(np.max(np.abs(cs - np.swapaxes(cs, -1, -2)))) if cs.size else 0.0
        if asym > 1e-9:
            raise ValueError(f"Expected `{name}` to be symmetric, got an asymmetric matrix.")
        b = tangent_basis(u)
        c2 = b @ cs @ np.swapaxes(b, -1, -2)
        vals, vecs = np.linalg.eigh(0.5 * (c2 + np.swapaxes(c2, -1, -2)))
    low = vals[..., 0] <= REL_FLOOR * np.abs(vals).max(axis=-1, initial=0.0)
    if np.any(low):
        i = tuple(np.argwhere(low)[0])
        raise ValueError(
            f"Expected `{name}` to be positive definite in the tangent plane of `up`, got "
            f"eigenvalues there of {vals[i][0] * scale[i]:.3g} and {vals[i][1] * scale[i]:.3g} "
            "rad² (a zero or negative variance)."
        )
    with np.errstate(over="ignore", under="ignore"):
        inv = 1.0 / (vals * scale[..., None])
    if not np.all(np.isfinite(inv)):
        raise ValueError(
            f"Expected `{name}` to be representable: its inverse (the information of `up`) "
            "overflows the float range."
        )
    return _checked_information(u, b, vecs, inv, name)


def fingerprint_of(result: Any) -> frozenset[str]:
    """The data fingerprint of a gravity-direction result; a plain vector has none."""
    return result.fingerprint if isinstance(result, UpResult) else frozenset()


def up_and_information(
    result: Any, up_cov: ArrayLike | None, name: str = "result"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """`up` (..., 3) and its information (..., 3, 3) from a gravity-direction result or a vector.

    A plain vector must be unit within 1e-6; with `up_cov` None its information is zero (the
    uncertainty is unknown and every derived variance infinite).
    """
    if isinstance(result, UpResult):
        if up_cov is not None:
            raise ValueError(
                f"Expected `up_cov` only with a plain `{name}` vector: a gravity-direction "
                "result carries its own information."
            )
        return checked_up_information(result, name)
    if isinstance(result, Result):
        raise ValueError(
            f"Expected `{name}` to be a gravity-direction result or an array of `up` vectors, "
            f"got a {type(result).__name__}."
        )
    up = unit_up(result, name)
    if up_cov is None:
        return up, np.zeros((*up.shape[:-1], 3, 3))
    info = information_from_up_cov(up, up_cov)
    return np.broadcast_to(up, (*info.shape[:-2], 3)).copy(), info


def rotation_matrices(x: Any, name: str) -> NDArray[np.float64]:
    """(..., 3, 3) proper rotations from matrices or a SciPy ``Rotation``, made exactly orthogonal.

    A matrix is accepted within 1e-6 of a rotation (six printed decimals) and replaced by the
    nearest rotation (:func:`gravdir._checks.nearest_rotation`), so that a rotated unit vector
    stays unit to rounding.
    """
    return nearest_rotation(x, name)


def propagate(
    up: NDArray[np.float64], info: NDArray[np.float64], jac: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Covariance (..., k, k) of ``f(up)`` to first order, from `up`'s information.

    `jac` (..., k, 3) is the Jacobian of ``f`` at `up` (only its action on the tangent plane of
    `up` matters). Writing the tangent information as ``sum_j lambda_j v_j v_j^T``, the
    covariance is ``sum_j (J v_j)(J v_j)^T / lambda_j``; a direction with no information
    (``lambda_j`` zero by the rule of :func:`gravdir._sphere.informative`) makes
    the covariance infinite where ``J v_j`` has a component, and leaves exact zeros elsewhere.
    """
    b = tangent_basis(up)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        info2 = b @ info @ np.swapaxes(b, -1, -2)
        vals, vecs = np.linalg.eigh(0.5 * (info2 + np.swapaxes(info2, -1, -2)))
        kept = informative(vals)
        # Directions of the eigenvectors in base coordinates, (..., 2, 3), mapped by J: (..., 2, k)
        dirs = np.swapaxes(vecs, -1, -2) @ b
        d = dirs @ np.swapaxes(jac, -1, -2)
        outer = d[..., :, :, None] * d[..., :, None, :]  # (..., 2, k, k)
        weight = np.where(kept, 1.0 / np.where(kept, vals, 1.0), 0.0)
        cov = np.sum(outer * weight[..., None, None], axis=-3)
        big = np.max(np.abs(outer), axis=(-2, -1), keepdims=True)
        unknown = (~kept)[..., None, None] & (np.abs(outer) > ZERO_COMPONENT * big) & (big > 0)
    out: NDArray[np.float64] = np.where(np.any(unknown, axis=-3), np.inf, cov)
    return out


def information_from_tangent_cov(
    up: NDArray[np.float64], tangent_cov: NDArray[np.float64], name: str
) -> NDArray[np.float64]:
    """Information (3, 3) of one `up` from a finite (2, 2) covariance in its tangent basis.

    Refused (naming `name`) where a variance is zero or the information overflows; a variance
    too large to invert gives zero information there (a standard deviation beyond 1e100 rad).
    """
    b = tangent_basis(up)
    scale = float(np.max(np.abs(tangent_cov)))
    if not np.isfinite(scale):
        return np.zeros((3, 3))
    if scale == 0.0:
        raise ValueError(
            f"Expected `{name}` to give `up` a positive variance in every tangent direction, got "
            "zero (an exactly known setting); pass None for an unknown uncertainty."
        )
    with np.errstate(under="ignore"):
        vals, vecs = np.linalg.eigh(0.5 * (tangent_cov + tangent_cov.T) / scale)
    if vals.min() <= REL_FLOOR * float(np.abs(vals).max()):
        raise ValueError(
            f"Expected `{name}` to give `up` a positive variance in every tangent direction, got "
            "a zero or negative one (the covariance is singular across the gravity direction)."
        )
    with np.errstate(over="ignore", under="ignore"):
        inv = 1.0 / (vals * scale)
    if not np.all(np.isfinite(inv)):
        raise ValueError(
            f"Expected `{name}` to be representable: the information of `up` it implies "
            "overflows the float range."
        )
    inv = np.where(inv < ABS_FLOOR, 0.0, inv)
    return _checked_information(up, b, vecs, inv, name)


def _checked_information(
    up: NDArray[np.float64],
    b: NDArray[np.float64],
    vecs: NDArray[np.float64],
    inv: NDArray[np.float64],
    name: str,
) -> NDArray[np.float64]:
    """``Bᵀ V diag(inv) Vᵀ B``, refused (naming `name`) where it overflows the float range."""
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        info2 = (vecs * inv[..., None, :]) @ np.swapaxes(vecs, -1, -2)
        info = up_information_from_tangent(up, b, info2)
    if not np.all(np.isfinite(info)):
        raise ValueError(
            f"Expected `{name}` to be representable: the information of `up` it implies "
            "overflows the float range."
        )
    return info
