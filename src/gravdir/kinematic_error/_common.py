"""Validators and the result base shared by the parts of :mod:`gravdir.kinematic_error`."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array


def _check_orders(orders: ArrayLike, name: str = "orders") -> NDArray[np.float64]:
    arr = check_array(orders, name)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"Expected `{name}` to be a non-empty 1-D array, got shape {arr.shape}.")
    if np.any(arr <= 0):
        raise ValueError(f"Expected `{name}` to be positive, got {arr.tolist()}.")
    srt = np.sort(arr)
    if np.any(np.diff(srt) <= 1e-12):
        raise ValueError(f"Expected `{name}` to be distinct, got {arr.tolist()}.")
    return arr


def _check_motor_angle(motor_angle: ArrayLike, name: str = "motor_angle") -> NDArray[np.float64]:
    return check_array(motor_angle, name)


def _order_index(orders: NDArray[np.float64], order: float, name: str = "order") -> int:
    i = int(np.argmin(np.abs(orders - order)))
    if abs(orders[i] - order) > 1e-9:
        raise ValueError(
            f"Expected `{name}` to be one of {orders.round(6).tolist()}, got {order!r}."
        )
    return i

