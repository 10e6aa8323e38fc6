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
    "check_angle_span",
    "check_count",
    "check_array",
    "check_finite",
    "check_option",
    "check_positive",
    "check_rotation_matrix",
    "check_scalar",
    "check_same_shape",
    "check_unit_vector",
    "check_vectors",
    "norm",
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


def _refuse_text(x: Any, name: str) -> None:
    """Refuse strings, bytes and booleans (and arrays of them), which numpy would otherwise turn
    into numbers."""
    if isinstance(x, str | bytes | bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number or an array of numbers, got {x!r}.")
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "USO" and (x.dtype.kind != "O" or _holds_text(x)):
            raise ValueError(
                f"Expected `{name}` to be numeric, got an array of dtype {x.dtype.str!r}."
            )
        if x.dtype.kind == "b":
            raise ValueError(f"Expected `{name}` to be numeric, got booleans.")
    elif isinstance(x, list | tuple):
        if _holds_text(x):
            raise ValueError(f"Expected `{name}` to be numeric, got text among its elements.")
        if _all_bool(x):
            raise ValueError(f"Expected `{name}` to be numeric, got booleans.")


def _all_bool(x: Any) -> bool:
    """True if a non-empty (nested) sequence holds only booleans (numpy would make them 0/1)."""
    if isinstance(x, bool | np.bool_):
        return True
    if isinstance(x, list | tuple):
        return bool(x) and all(_all_bool(v) for v in x)
    return False


def _holds_text(x: Any) -> bool:
    """True if a (nested) sequence or object array holds a str or bytes anywhere."""
    if isinstance(x, str | bytes):
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "US" or (x.dtype.kind == "O" and any(map(_holds_text, x.flat)))
    if isinstance(x, list | tuple):
        return any(_holds_text(v) for v in x)
    return False


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
    _refuse_text(x, name)
    try:
        if np.iscomplexobj(x):
            raise ValueError(f"Expected `{name}` to be real, got complex values.")
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        if str(exc).startswith(f"Expected `{name}`"):
            raise
        raise ValueError(
            f"Expected `{name}` to be numeric (a number or a regular array), "
            f"got {type(x).__name__}."
        ) from exc
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
    if normalize:
        # Scale by the largest component first: any finite non-zero vector, from 1e-300 to
        # 1e300, normalises without underflow or overflow; only an exact zero is refused.
        scale = np.max(np.abs(v), axis=-1, keepdims=True)
        if np.any(scale == 0):
            raise ValueError(f"Expected `{name}` to be non-zero vector(s), got a zero vector.")
        with np.errstate(under="ignore"):
            scaled = v / scale
            unit: NDArray[np.float64] = scaled / np.linalg.norm(scaled, axis=-1, keepdims=True)
        return unit
    length = norm(v)[..., None]
    worst = float(np.max(np.abs(length - 1.0))) if length.size else 0.0
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
    # Entries of a rotation are at most 1 in magnitude; refusing larger ones first keeps the
    # product below from overflowing into NaN, which would pass the comparison.
    big = float(np.max(np.abs(r))) if r.size else 0.0
    if big > 1.0 + atol:
        raise ValueError(
            f"Expected `{name}` to be rotation matrices (entries within ±1), got an entry of "
            f"magnitude {big:.3g}."
        )
    with np.errstate(under="ignore"):
        err = np.abs(np.swapaxes(r, -1, -2) @ r - np.eye(3))
    worst = float(np.max(err)) if err.size else 0.0
    if worst > atol:
        raise ValueError(
            f"Expected `{name}` to be rotation matrices (R^T R = I within {atol:g}), "
            f"got a deviation of {worst:.3g}."
        )
    with np.errstate(under="ignore"):
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


def check_positive(x: Any, name: str, *, allow_zero: bool = False) -> float:
    """Check that the scalar `x` is finite and positive (or non-negative); return it as float.

    Examples
    --------
    >>> check_positive(0.5, "min_speed")
    0.5
    """
    if isinstance(x, str | bytes | bool | np.bool_) or (
        isinstance(x, np.ndarray) and x.dtype.kind not in "iuf"
    ):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    try:
        value = float(x)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"Expected `{name}` to be a number, got {type(x).__name__}.") from exc
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        want = "non-negative" if allow_zero else "positive"
        raise ValueError(f"Expected `{name}` to be a finite {want} number, got {x!r}.")
    return value


def check_count(x: Any, name: str, *, minimum: int = 1, maximum: int) -> int:
    """Check that `x` is an integer in ``[minimum, maximum]``; return it as ``int``.

    `maximum` is a documented cap that keeps the work of a call bounded; booleans, floats and
    strings are refused even where they would convert.

    Examples
    --------
    >>> check_count(np.int64(8), "n_contacts", minimum=3, maximum=10_000)
    8
    """
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
        raise ValueError(f"Expected `{name}` to be an integer, got {x!r}.")
    value = int(x)
    if value < minimum or value > maximum:
        raise ValueError(
            f"Expected `{name}` to be an integer from {minimum} to {maximum}, got {value}."
        )
    return value


def check_angle_span(span: float, name: str, *, limit: float = 4 * np.pi) -> float:
    """Refuse an angle span of one joint larger than `limit` radians as probably degrees.

    A single joint's sweep, arc or sample span of a few turns at most is radians; beyond `limit`
    (two full turns by default) the numbers are almost certainly degrees.

    Examples
    --------
    >>> check_angle_span(2.0, "arc")
    2.0
    """
    value = float(span)
    if abs(value) > limit:
        raise ValueError(
            f"Expected `{name}` in radians, got a span of {value:.6g} rad "
            f"({np.degrees(value):.6g}°, more than {np.degrees(limit):.0f}°): degrees?"
        )
    return value


def norm(x: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """Euclidean norm along `axis` without overflow or underflow (scaled by the largest entry)."""
    scale = np.max(np.abs(x), axis=axis, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    # Components far below the largest underflow when squared; they do not change the norm.
    with np.errstate(under="ignore"):
        out: NDArray[np.float64] = np.linalg.norm(x / safe, axis=axis) * np.squeeze(safe, axis)
    return out


def check_option(value: Any, name: str, options: Iterable[Any]) -> Any:
    """Check that `value` is one of `options`; return it.

    Examples
    --------
    >>> check_option("auto", "friction", ("auto", "none"))
    'auto'
    """
    opts = tuple(options)
    # An array or other unhashable value is never an option (and `in` would compare element-wise).
    if not isinstance(value, str | int) or isinstance(value, bool) or value not in opts:
        listed = ", ".join(repr(o) for o in opts)
        raise ValueError(f"Expected `{name}` to be one of {listed}, got {value!r}.")
    return value
