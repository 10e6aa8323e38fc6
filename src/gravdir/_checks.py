"""Argument validators shared by every module.

Every public function of gravdir validates its arguments with the ``check_*`` helpers below before
it computes anything. Each helper coerces its input to a float64 array (or returns the validated
value) and raises :class:`ValueError` -- or one of the documented subclasses -- whose message names
the argument in backticks and says what was expected and what was got.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "check_array",
    "check_finite",
    "check_option",
    "check_positive",
    "check_rotation_matrix",
    "check_scalar",
    "check_same_shape",
    "check_unit_vector",
    "check_vectors",
]


def _describe_shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def check_finite(x: NDArray[np.float64], name: str) -> NDArray[np.float64]:
    """Raise ``ValueError`` naming `name` if `x` contains NaN or infinity; return `x`."""
    # The sum is NaN or infinite whenever an element is; only then (or on overflow) look closer.
    # (+inf and -inf together make the sum NaN with an "invalid" flag: not worth a warning.)
    with np.errstate(invalid="ignore", over="ignore"):
        total = x.sum()
    if not np.isfinite(total) and not np.isfinite(x).all():
        bad = int(np.size(x) - np.count_nonzero(np.isfinite(x)))
        raise ValueError(f"Expected `{name}` to be finite, got {bad} NaN or infinite value(s).")
    return x


def check_array(
    x: ArrayLike,
    name: str,
    *,
    min_ndim: int = 0,
    tail: tuple[int, ...] = (),
    finite: bool = True,
) -> NDArray[np.float64]:
    """Coerce `x` to a float64 array and check its trailing shape and finiteness.

    Parameters
    ----------
    x : array_like
        The argument.
    name : str
        Its name, used in error messages.
    min_ndim : int, optional
        Smallest number of dimensions accepted.
    tail : tuple of int, optional
        Required trailing shape, e.g. ``(3,)`` for vectors or ``(3, 3)`` for rotations.
    finite : bool, optional
        Whether NaN and infinity are rejected.

    Returns
    -------
    ndarray of float64
        The validated array.

    Raises
    ------
    ValueError
        If `x` is not real and numeric, has the wrong shape, or is not finite.

    Examples
    --------
    >>> check_array([[1, 0, 0]], "up", tail=(3,)).shape
    (1, 3)
    """
    if np.iscomplexobj(x):
        raise ValueError(f"Expected `{name}` to be real, got complex values.")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Expected `{name}` to be numeric, got {type(x).__name__}.") from exc
    ndim = max(min_ndim, len(tail))
    if arr.ndim < ndim or (tail and arr.shape[arr.ndim - len(tail) :] != tail):
        want = "(..., " + ", ".join(str(t) for t in tail) + ")" if tail else f"{ndim}-D or more"
        raise ValueError(
            f"Expected `{name}` to have shape {want}, got {_describe_shape(arr.shape)}."
        )
    if finite:
        check_finite(arr, name)
    return arr


def check_vectors(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """Check `x` is an array of 3-vectors, shape ``(..., 3)``, finite; return it as float64."""
    return check_array(x, name, tail=(3,))


def check_unit_vector(
    x: ArrayLike, name: str, *, atol: float = 1e-6, normalize: bool = False
) -> NDArray[np.float64]:
    """Check `x` has shape ``(..., 3)`` and unit norm within `atol`.

    With ``normalize=True`` any non-zero vector is accepted and returned normalised.

    Examples
    --------
    >>> check_unit_vector([0, 0, 2], "axis", normalize=True)
    array([0., 0., 1.])
    """
    v = check_vectors(x, name)
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    if normalize:
        if np.any(norm <= 1e-12):
            raise ValueError(f"Expected `{name}` to be non-zero vector(s), got a zero vector.")
        unit: NDArray[np.float64] = v / norm
        return unit
    worst = float(np.max(np.abs(norm - 1.0))) if norm.size else 0.0
    if worst > atol:
        raise ValueError(
            f"Expected `{name}` to have unit norm (within {atol:g}), got norms off by {worst:.3g}."
        )
    return v


def check_rotation_matrix(x: ArrayLike, name: str, *, atol: float = 1e-6) -> NDArray[np.float64]:
    """Check `x` is a stack of proper rotation matrices, shape ``(..., 3, 3)``.

    ``R^T R = I`` and ``det R = +1`` must hold within `atol`.

    Examples
    --------
    >>> check_rotation_matrix(np.eye(3), "rotation").shape
    (3, 3)
    """
    r = check_array(x, name, tail=(3, 3))
    err = np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(3))
    worst = float(np.max(err)) if err.size else 0.0
    if worst > atol:
        raise ValueError(
            f"Expected `{name}` to be rotation matrices (R^T R = I within {atol:g}), "
            f"got a deviation of {worst:.3g}."
        )
    det = np.linalg.det(r)
    if np.any(det < 0):
        raise ValueError(f"Expected `{name}` to be proper rotations (det = +1), got det = -1.")
    return r


def check_same_shape(**arrays: NDArray[Any]) -> tuple[int, ...]:
    """Check that the keyword arrays broadcast together; return the broadcast shape.

    Examples
    --------
    >>> check_same_shape(q=np.zeros((2, 5)), tau=np.zeros(5))
    (2, 5)
    """
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in arrays.values())))
    except ValueError:
        shapes = ", ".join(f"`{k}` {_describe_shape(v.shape)}" for k, v in arrays.items())
        raise ValueError(f"Expected arrays of broadcastable shapes, got {shapes}.") from None


def check_scalar(x: ArrayLike, name: str) -> float:
    """Check that `x` is one finite real number (a Python number or a 0-d array); return it.

    Examples
    --------
    >>> check_scalar(np.float32(0.25), "gamma")
    0.25
    """
    arr = check_array(x, name)
    if arr.ndim != 0:
        raise ValueError(
            f"Expected `{name}` to be a scalar, got shape {_describe_shape(arr.shape)}."
        )
    return float(arr)


def check_positive(x: float, name: str, *, allow_zero: bool = False) -> float:
    """Check that the scalar `x` is finite and positive (or non-negative); return it as float.

    Examples
    --------
    >>> check_positive(0.5, "min_speed")
    0.5
    """
    try:
        value = float(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Expected `{name}` to be a number, got {type(x).__name__}.") from exc
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        want = "non-negative" if allow_zero else "positive"
        raise ValueError(f"Expected `{name}` to be a finite {want} number, got {x!r}.")
    return value


def check_option(value: str, name: str, options: Iterable[str]) -> str:
    """Check that `value` is one of `options`; return it.

    Examples
    --------
    >>> check_option("auto", "friction", ("auto", "none"))
    'auto'
    """
    opts = tuple(options)
    if value not in opts:
        listed = ", ".join(repr(o) for o in opts)
        raise ValueError(f"Expected `{name}` to be one of {listed}, got {value!r}.")
    return value
