"""Tolerances, validators and small helpers shared by the frames functions."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_radians, check_vectors

# Default tolerance on |up| - 1. An `up` computed in float64 is unit to ~1e-15 and one that went
# through float32 to ~1e-7; 1e-6 accepts both and still rejects a raw, unnormalised measurement
# (an accelerometer reading of norm 9.81, a plane normal of arbitrary length).
_UNIT_ATOL = 1e-6

# Default horizontal norm sin(tilt) below which `up` counts as vertical (azimuth undefined).
# Rounding leaves ~1e-16 in the horizontal components of a vertical vector that went through a
# few float64 rotations; 1e-12 (2e-10 degrees of tilt) is far above that and far below any tilt
# a measurement can resolve.
_VERTICAL_ATOL = 1e-12

#: Which gravity zero of joint 1 the angle `theta1` names (see :func:`up_from_canonical`).
Zero = Literal["unstable", "stable"]
_ZERO_OPTIONS: tuple[Zero, ...] = ("unstable", "stable")


def _check_tolerance(x: float, name: str) -> float:
    """A tolerance in (0, 1): `atol` on ``|up| - 1`` or `vertical_atol` on ``sin(tilt)``.

    At 1 or more a unit-norm tolerance accepts the zero vector, and a vertical tolerance calls
    every direction vertical, so both are refused.
    """
    value = check_positive(x, name)
    if value >= 1.0:
        raise ValueError(f"Expected `{name}` to be below 1, got {x!r}.")
    return value


def _check_angles(
    x: ArrayLike, name: str, kind: Literal["joint positions", "azimuths", "tilts"]
) -> NDArray[np.float64]:
    """Finite real angles in radians, shape (...); booleans (``True`` for 1 rad) are refused.

    Joint positions and azimuths lie within ±4π, tilts in [0, π]; beyond, the numbers are taken
    for degrees (see :func:`gravdir._checks.check_radians`).
    """
    if isinstance(x, bool | np.bool_) or (isinstance(x, np.ndarray) and x.dtype.kind == "b"):
        raise ValueError(f"Expected `{name}` to be angles in radians, got a boolean.")
    return check_radians(check_array(x, name), name, kind=kind)


def _unit_vectors(
    x: ArrayLike, name: str, *, atol: float = _UNIT_ATOL, normalize: bool = False
) -> NDArray[np.float64]:
    """Validate `x` as (..., 3) unit vectors (any non-zero ones if `normalize`); normalise them.

    Each vector is divided by its largest component before its norm is taken, so that no
    vector within the float range over- or underflows: ``(1e300, 0, 1e300)`` and
    ``(1e-13, 0, 0)`` are directions like any other, and only an exact zero vector is zero.
    """
    v = check_vectors(x, name)
    with np.errstate(under="ignore", over="ignore"):
        scale = np.max(np.abs(v), axis=-1, keepdims=True)
        w = v / np.where(scale > 0, scale, 1.0)  # largest component +-1, or all zero
        w_norm = np.linalg.norm(w, axis=-1, keepdims=True)  # in [1, sqrt(3)], or 0
        length = scale * w_norm  # |v|; infinite only beyond the float range
    if normalize:
        if np.any(scale == 0):
            raise ValueError(f"Expected `{name}` to be non-zero vector(s), got a zero vector.")
    else:
        worst = float(np.max(np.abs(length - 1.0))) if length.size else 0.0
        if worst > atol:
            raise ValueError(
                f"Expected `{name}` to have unit norm (within {atol:g}), got norms off by "
                f"{worst:.3g}."
            )
    # Normalise accepted unit vectors too, so that every derived quantity (a rotation matrix
    # in particular) is exact to rounding. With atol < 1 no zero vector gets this far.
    with np.errstate(under="ignore"):  # a tiny component rounds to a subnormal or zero
        unit: NDArray[np.float64] = w / w_norm
    return unit


def _unit_up(up: ArrayLike, name: str, atol: float, normalize: bool) -> NDArray[np.float64]:
    """Validate `atol` and `up` as (..., 3) unit vectors (non-zero ones if `normalize`)."""
    tol = _check_tolerance(atol, "atol")
    if not isinstance(normalize, bool | np.bool_):
        raise ValueError(f"Expected `normalize` to be True or False, got {normalize!r}.")
    return _unit_vectors(up, name, atol=tol, normalize=bool(normalize))


def _wrap_pi(angle: NDArray[np.float64]) -> NDArray[np.float64]:
    """Wrap angles to (-pi, pi]."""
    wrapped = np.pi - np.mod(np.pi - angle, 2.0 * np.pi)
    return np.asarray(wrapped, dtype=np.float64)


def _scalar_or_array(x: NDArray[Any]) -> Any:
    """Return a numpy scalar for a 0-d array, the array itself otherwise."""
    return x[()] if x.ndim == 0 else x


def _own(value: ArrayLike, dtype: type[np.generic]) -> Any:
    """A private copy of `value` as `dtype`: a numpy scalar for 0-d input, an array otherwise."""
    return _scalar_or_array(np.array(value, dtype=dtype))


def _deg_text(x: NDArray[np.float64]) -> str:
    deg = np.degrees(np.asarray(x, dtype=np.float64))
    if deg.ndim == 0:
        return f"{float(deg):.4f}"
    return np.array2string(deg, precision=4, separator=", ", threshold=12)
