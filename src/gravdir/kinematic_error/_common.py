"""Validators, limits and numeric guards shared by the parts of :mod:`gravdir.kinematic_error`."""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import _numeric_array, check_array, check_scalar

#: Largest order accepted, in cycles per motor revolution. The tooth-mesh order of a harmonic
#: drive (twice the flexspline teeth, a few hundred) lies well below it; beyond it an
#: accelerometer record cannot sample the order at any practical motor speed.
MAX_ORDER: Final[float] = 1e4

#: Largest magnitude of a motor angle, in radians (about 1.6e8 motor revolutions). Motor angles
#: legitimately span thousands of radians and are exempt from the degree checks of other modules,
#: but float64 resolves an angle of 1e9 rad only to 1.2e-7 rad; subtract the start angle of a
#: longer record.
MAX_MOTOR_ANGLE: Final[float] = 1e9

#: Largest magnitude of a correction coefficient, in radians of motor angle (half a motor
#: revolution). A harmonic-drive correction is of order N times the kinematic error, about 1e-2 rad.
MAX_COEFFICIENT: Final[float] = math.pi


def _check_orders(orders: ArrayLike, name: str = "orders") -> NDArray[np.float64]:
    arr = check_array(orders, name)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"Expected `{name}` to be a non-empty 1-D array, got shape {arr.shape}.")
    if np.any(arr <= 0) or np.any(arr > MAX_ORDER):
        raise ValueError(
            f"Expected `{name}` in (0, {MAX_ORDER:g}] cycles per motor revolution, "
            f"got {arr.tolist()}."
        )
    srt = np.sort(arr)
    if np.any(np.diff(srt) / srt[1:] <= 1e-12):
        raise ValueError(f"Expected `{name}` to be distinct, got {arr.tolist()}.")
    return arr


def _check_motor_angle(motor_angle: ArrayLike, name: str = "motor_angle") -> NDArray[np.float64]:
    theta = check_array(motor_angle, name)
    if theta.size and float(np.max(np.abs(theta))) > MAX_MOTOR_ANGLE:
        raise ValueError(
            f"Expected `{name}` within ±{MAX_MOTOR_ANGLE:g} rad (float64 resolves it to 1.2e-7 "
            f"rad there; subtract the start angle), got {float(np.max(np.abs(theta))):.3g} rad."
        )
    return theta


def _check_record(
    motor_angle: ArrayLike, name: str = "motor_angle", minimum: int = 2
) -> NDArray[np.float64]:
    """A 1-D motor-angle record of at least `minimum` samples."""
    theta = _check_motor_angle(motor_angle, name)
    if theta.ndim != 1 or theta.size < minimum:
        raise ValueError(
            f"Expected `{name}` to have shape (n,) with n ≥ {minimum}, got {theta.shape}."
        )
    return theta


def _check_order_value(value: Any, name: str) -> float:
    """A real, finite order (not a bool or a string)."""
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {value!r}.")
    return check_scalar(value, name)


def _order_index(orders: NDArray[np.float64], order: Any, name: str = "order") -> int:
    value = _check_order_value(order, name)
    i = int(np.argmin(np.abs(orders - value)))
    if not abs(orders[i] - value) <= 1e-9:
        raise ValueError(
            f"Expected `{name}` to be one of {orders.round(6).tolist()}, got {order!r}."
        )
    return i


def _check_complex(x: ArrayLike, name: str) -> NDArray[np.complex128]:
    """Coerce `x` to a finite complex128 array; real input is accepted. Text, booleans, ragged
    sequences and integers beyond the float range are refused as by :func:`check_array`."""
    arr = _numeric_array(x, name, allow_complex=True).astype(np.complex128)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"Expected `{name}` to be finite, got NaN or infinite value(s).")
    return arr


def _check_coefficients(coefficients: ArrayLike, k: int, name: str) -> NDArray[np.float64]:
    c = check_array(coefficients, name, tail=(2,))
    if c.shape != (k, 2):
        raise ValueError(f"Expected `{name}` to have shape ({k}, 2), got {tuple(c.shape)}.")
    worst = float(np.max(np.abs(c)))
    if worst > MAX_COEFFICIENT:
        raise ValueError(
            f"Expected `{name}` within ±{MAX_COEFFICIENT:.4g} rad of motor angle (half a motor "
            f"revolution), got {worst:.3g} rad."
        )
    return c


def _require_finite(values: Any, message: str) -> None:
    """Raise ``ValueError(message)`` unless every element of `values` is finite."""
    if not np.all(np.isfinite(values)):
        raise ValueError(message)
