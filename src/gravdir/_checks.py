"""Argument validators shared by every module.

Every public function of gravdir validates its arguments with the ``check_*`` helpers below before
it computes anything. Each helper coerces its input to a float64 array (or returns the validated
value) and raises :class:`ValueError` -- or one of the documented subclasses -- whose message names
the argument in backticks and says what was expected and what was got.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from scipy.spatial.transform import Rotation

__all__ = [
    "apply_torque_sign",
    "check_angle_span",
    "check_bool",
    "check_radians",
    "check_count",
    "check_array",
    "check_direction",
    "check_finite",
    "check_option",
    "check_per_joint",
    "check_positive",
    "check_rotation_matrix",
    "check_scalar",
    "check_same_shape",
    "check_sweep_angles",
    "check_unit_vector",
    "check_vectors",
    "describe_shape",
    "drop_nan_samples",
    "matrix_if_rotation",
    "norm",
    "MAX_JOINT_ANGLE",
    "NAN_POLICIES",
    "NanPolicy",
    "RotationLike",
]

#: What an argument that takes rotations accepts: rotation matrices ``(..., 3, 3)`` (array-like)
#: or a :class:`scipy.spatial.transform.Rotation` (one, or a stack of them).
RotationLike: TypeAlias = "ArrayLike | Rotation"

#: The values a ``nan_policy`` argument takes: ``"raise"`` (the default everywhere) refuses a NaN
#: with an error that names the array; ``"omit"`` drops every sample that holds one.
NAN_POLICIES: tuple[str, ...] = ("raise", "omit")
NanPolicy = Literal["raise", "omit"]

#: Largest magnitude of a joint position or an azimuth, rad: two full turns. No joint of a serial
#: arm is held farther from its zero, an azimuth (often a joint position plus an offset) needs no
#: more, and an angle typed in degrees passes it as soon as it exceeds 12.6°.
MAX_JOINT_ANGLE = 4 * np.pi


def describe_shape(shape: tuple[int, ...]) -> str:
    """A shape as Python writes it, for messages: ``(3,)``, ``(2, 3)``."""
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


def _describe_int(x: int) -> str:
    """A Python int for a message, short however many digits it has."""
    if abs(x) < 10**15:
        return str(x)
    return f"an integer of about {'-' if x < 0 else ''}1e{int(math.log10(abs(x)))}"


def _numeric_array(x: Any, name: str, *, allow_complex: bool = False) -> NDArray[Any]:
    """`x` as a float64 array, or complex128 where `allow_complex` and `x` is complex.

    Refuses, naming `name`, what numpy would quietly turn into numbers or refuse without a name:
    text and booleans, a ragged nesting of sequences, complex values where reals are expected
    (numpy would keep their real part) and integers beyond the float64 range.
    """
    _refuse_text(x, name)
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:
        got = type(x).__name__
        if isinstance(x, list | tuple):
            got = f"a ragged {got} (nested sequences of unequal lengths)"
        raise ValueError(
            f"Expected `{name}` to be numeric (a number or a regular array), got {got}."
        ) from exc
    if raw.dtype.kind == "c" and not allow_complex:
        raise ValueError(f"Expected `{name}` to be real, got complex values.")
    try:
        return raw.astype(np.complex128 if raw.dtype.kind == "c" else np.float64, copy=False)
    except OverflowError as exc:
        got = _describe_int(x) if isinstance(x, int) else "an integer beyond it"
        raise ValueError(
            f"Expected `{name}` within the float64 range (magnitude at most "
            f"{np.finfo(np.float64).max:.4g}), got {got}."
        ) from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"Expected `{name}` to be numeric (a number or a regular array), "
            f"got {type(x).__name__}."
        ) from exc


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
        If `x` is not real and numeric (text, booleans, complex values, a ragged nesting of
        sequences, an integer beyond the float64 range), has the wrong shape, or is not finite.

    Examples
    --------
    >>> check_array([[1, 0, 0]], "up", tail=(3,)).shape
    (1, 3)
    """
    arr: NDArray[np.float64] = _numeric_array(x, name)
    ndim = max(min_ndim, len(tail))
    if arr.ndim < ndim or (tail and arr.shape[arr.ndim - len(tail) :] != tail):
        want = "(..., " + ", ".join(str(t) for t in tail) + ")" if tail else f"{ndim}-D or more"
        raise ValueError(
            f"Expected `{name}` to have shape {want}, got {describe_shape(arr.shape)}."
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
    if normalize:
        return check_direction(x, name, batch=True)
    v = check_vectors(x, name)
    length = norm(v)[..., None]
    worst = float(np.max(np.abs(length - 1.0))) if length.size else 0.0
    if worst > atol:
        raise ValueError(
            f"Expected `{name}` to have unit norm (within {atol:g}), got norms off by {worst:.3g}."
        )
    return v


def check_direction(value: ArrayLike, name: str, *, batch: bool = False) -> NDArray[np.float64]:
    """Check that `value` is a non-zero finite 3-vector (a direction); return it normalised.

    Every argument that gives a direction (``up_hint``, an axis, a normal, a moment hint) is
    checked here: any length is accepted, from 1e-300 to 1e300, since only the direction counts.

    Parameters
    ----------
    value : array_like, shape (3,) or, with ``batch=True``, (..., 3)
        The direction(s).
    name : str
        The argument's name, used in error messages.
    batch : bool, optional
        Accept a stack of directions, shape ``(..., 3)``, each normalised on its own.

    Returns
    -------
    ndarray of float64, shape (3,) or (..., 3)
        Unit vectors, a new array.

    Raises
    ------
    ValueError
        If `value` is not real and numeric, has another shape, is not finite or holds a zero
        vector.

    Notes
    -----
    Each vector is divided by its largest component before its norm is taken, so it normalises
    without underflow or overflow; only an exact zero is refused.

    Examples
    --------
    >>> check_direction([0, 0, 2], "up_hint")
    array([0., 0., 1.])
    >>> check_direction([[3, 0, 4], [0, -1e-300, 0]], "axes", batch=True).tolist()
    [[0.6, 0.0, 0.8], [0.0, -1.0, 0.0]]
    """
    if batch:
        v = check_vectors(value, name)
    else:
        v = check_array(value, name, finite=False)
        if v.shape != (3,):
            raise ValueError(
                f"Expected `{name}` to have shape (3,), got {describe_shape(v.shape)}."
            )
        check_finite(v, name)
    scale = np.max(np.abs(v), axis=-1, keepdims=True, initial=0.0)
    if np.any(scale == 0):
        what = "non-zero vector(s)" if batch else "non-zero"
        raise ValueError(f"Expected `{name}` to be {what}, got a zero vector.")
    with np.errstate(under="ignore"):
        scaled = v / scale
        unit: NDArray[np.float64] = scaled / np.linalg.norm(scaled, axis=-1, keepdims=True)
    return unit


def check_per_joint(
    value: ArrayLike,
    name: str,
    n: int,
    *,
    scalar: bool = True,
    sign: Literal["positive", "non-negative", "any"] = "positive",
) -> NDArray[np.float64]:
    """Check that `value` holds one finite number per joint of a chain of `n` joints.

    Parameters
    ----------
    value : array_like, shape (n,) or scalar
        The values (gains, noise levels, limits, masses, joint positions, ...).
    name : str
        The argument's name, used in error messages.
    n : int
        The number of joints.
    scalar : bool, optional
        Accept a scalar, shared by every joint (the default).
    sign : {"positive", "non-negative", "any"}, optional
        Which values are accepted: positive (the default: gains, noise levels, limits),
        non-negative (masses, friction levels) or any finite value (offsets, joint positions).

    Returns
    -------
    ndarray of float64, shape (n,)
        The values, a new array.

    Raises
    ------
    ValueError
        If `value` is not real and numeric, not finite, of another shape, or of the wrong sign.

    Examples
    --------
    >>> check_per_joint(0.5, "noise_std", 3)
    array([0.5, 0.5, 0.5])
    >>> check_per_joint([1.0, -1.0], "gains", 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Expected `gains` to be positive, got a minimum of -1.
    """
    arr = check_array(value, name, finite=False)
    if arr.shape != (n,) and not (scalar and arr.ndim == 0):
        want = f"be a scalar or have shape ({n},)" if scalar else f"have shape ({n},)"
        raise ValueError(f"Expected `{name}` to {want}, got {describe_shape(arr.shape)}.")
    check_finite(arr, name)
    out = np.array(np.broadcast_to(arr, (n,)), dtype=np.float64)
    low = float(np.min(out)) if out.size else math.inf
    if (sign == "positive" and low <= 0) or (sign == "non-negative" and low < 0):
        raise ValueError(f"Expected `{name}` to be {sign}, got a minimum of {low:.6g}.")
    return out


def matrix_if_rotation(x: Any) -> Any:
    """`x` as rotation matrices if it is a SciPy ``Rotation``, else `x` unchanged.

    A single ``Rotation`` gives shape ``(3, 3)``, a stack of ``n`` gives ``(n, 3, 3)``. SciPy is
    not imported for the test: if :mod:`scipy.spatial.transform` has not been imported, `x`
    cannot be one of its rotations.

    Examples
    --------
    >>> from scipy.spatial.transform import Rotation
    >>> matrix_if_rotation(Rotation.from_rotvec([[0, 0, 1.0], [0, 1.0, 0]])).shape
    (2, 3, 3)
    >>> matrix_if_rotation([[1, 0, 0], [0, 1, 0], [0, 0, 1]])[0]
    [1, 0, 0]
    """
    module = sys.modules.get("scipy.spatial.transform")
    rotation = getattr(module, "Rotation", None)
    if rotation is not None and isinstance(x, rotation):
        with np.errstate(under="ignore"):
            return np.array(x.as_matrix(), dtype=np.float64)
    return x


def check_rotation_matrix(
    x: RotationLike, name: str, *, atol: float = 1e-6
) -> NDArray[np.float64]:
    """Check `x` is a stack of proper rotation matrices, shape ``(..., 3, 3)``.

    ``R^T R = I`` and ``det R = +1`` must hold within `atol`. A SciPy
    :class:`~scipy.spatial.transform.Rotation` is accepted and turned into its matrices: shape
    ``(3, 3)`` for a single rotation, ``(n, 3, 3)`` for a stack of ``n``.

    Examples
    --------
    >>> check_rotation_matrix(np.eye(3), "rotation").shape
    (3, 3)
    >>> from scipy.spatial.transform import Rotation
    >>> check_rotation_matrix(Rotation.from_rotvec([0, 0, np.pi / 2]), "rotation").round(12)[0]
    array([ 0., -1.,  0.])
    """
    r = check_array(matrix_if_rotation(x), name, tail=(3, 3))
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


def nearest_rotation(x: RotationLike, name: str, *, atol: float = 1e-6) -> NDArray[np.float64]:
    """Check `x` as :func:`check_rotation_matrix` does, then return the nearest exact rotations.

    The nearest rotation is the orthogonal polar factor :math:`U V^\\top` of the SVD
    :math:`R = U \\Sigma V^\\top`, so that rounding in a printed matrix (six decimals pass the
    default `atol`) does not leak into the vectors it rotates. The output is a new array.

    Examples
    --------
    >>> r = nearest_rotation(np.round([[0.6, -0.8, 0], [0.8, 0.6, 0], [0, 0, 1.0000004]], 6), "r")
    >>> bool(np.allclose(r.T @ r, np.eye(3), rtol=0, atol=1e-15))
    True
    """
    r = check_rotation_matrix(x, name, atol=atol)
    if r.size == 0:
        return r.copy()
    with np.errstate(under="ignore"):
        u, _, vt = np.linalg.svd(r)
        out: NDArray[np.float64] = u @ vt
    return out


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
        shapes = ", ".join(f"`{k}` {describe_shape(v.shape)}" for k, v in arrays.items())
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
            f"Expected `{name}` to be a scalar, got shape {describe_shape(arr.shape)}."
        )
    return float(arr)


def check_positive(x: Any, name: str, *, allow_zero: bool = False) -> float:
    """Check that the scalar `x` is finite and positive (or non-negative); return it as float.

    A real number or a 0-d array of one; text, booleans, complex values (whose imaginary part
    a conversion would drop), arrays with axes and integers beyond the float64 range are refused.

    Examples
    --------
    >>> check_positive(0.5, "min_speed")
    0.5
    """
    want = "non-negative" if allow_zero else "positive"
    if isinstance(x, str | bytes | bool | np.bool_) or (
        isinstance(x, np.ndarray) and x.dtype.kind not in "iufc"
    ):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    if isinstance(x, complex | np.complexfloating) or (
        isinstance(x, np.ndarray) and x.dtype.kind == "c"
    ):
        raise ValueError(f"Expected `{name}` to be a real number, got complex {x!r}.")
    if isinstance(x, np.ndarray) and x.ndim:
        raise ValueError(
            f"Expected `{name}` to be a number, got an array of shape {describe_shape(x.shape)}."
        )
    try:
        value = float(x)
    except OverflowError as exc:
        got = _describe_int(x) if isinstance(x, int) else f"a {type(x).__name__} beyond it"
        raise ValueError(
            f"Expected `{name}` to be a finite {want} number (within the float64 range), "
            f"got {got}."
        ) from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Expected `{name}` to be a number, got {type(x).__name__}.") from exc
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"Expected `{name}` to be a finite {want} number, got {x!r}.")
    return value


def check_count(x: Any, name: str, *, minimum: int = 1, maximum: int) -> int:
    """Check that `x` is an integer in ``[minimum, maximum]``; return it as ``int``.

    `maximum` is a documented cap that keeps the work of a call bounded; booleans, floats and
    strings are refused even where they would convert. A 0-d integer array counts as its value.

    Examples
    --------
    >>> check_count(np.int64(8), "n_contacts", minimum=3, maximum=10_000)
    8
    """
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu":
        x = x[()]
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
        raise ValueError(f"Expected `{name}` to be an integer, got {x!r}.")
    value = int(x)
    if value < minimum or value > maximum:
        raise ValueError(
            f"Expected `{name}` to be an integer from {minimum} to {maximum}, "
            f"got {_describe_int(value)}."
        )
    return value


def check_angle_span(span: float, name: str, *, limit: float = MAX_JOINT_ANGLE) -> float:
    """Refuse an angle span of one joint larger than `limit` radians as probably degrees.

    A single joint's sweep, arc or sample span of a few turns at most is radians; beyond `limit`
    (:data:`MAX_JOINT_ANGLE`, two full turns, by default) the numbers are almost certainly
    degrees. A NaN span is refused as not finite.

    Examples
    --------
    >>> check_angle_span(2.0, "arc")
    2.0
    """
    value = float(span)
    if math.isnan(value):
        raise ValueError(f"Expected `{name}` to be finite, got a span of NaN.")
    if abs(value) > limit:
        # math.degrees, unlike np.degrees, returns inf beyond 3e306 rad without an overflow.
        raise ValueError(
            f"Expected `{name}` in radians, got a span of {value:.6g} rad "
            f"({math.degrees(value):.6g}°, more than {math.degrees(limit):.0f}°): degrees?"
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


def check_bool(value: Any, name: str) -> bool:
    """`value` if it is True or False (a numpy bool included); else a ValueError naming it.

    Examples
    --------
    >>> check_bool(np.True_, "robust")
    True
    """
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be True or False, got {value!r}.")
    return bool(value)


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


def drop_nan_samples(
    arrays: Mapping[str, NDArray[Any]], nan_policy: str, *, axis: int = -1
) -> tuple[dict[str, NDArray[Any]], NDArray[np.bool_]]:
    """Drop the samples that hold a NaN in any of `arrays` (``nan_policy="omit"``), or refuse them.

    A *sample* is one index along `axis`; it is dropped when any array holds a NaN anywhere at
    that index (in any of its other axes, so a NaN in one row of a batch drops that sample from
    every row and the arrays stay rectangular). Infinities are refused under both policies: an
    infinite reading is a fault of the log, not a missing value.

    Parameters
    ----------
    arrays : mapping of str to ndarray
        The sample arrays by argument name (the names appear in error messages), already validated
        for shape but not for finiteness. Each has the same length ``n`` along `axis`, or length 1
        there (or is 0-d): those broadcast over the samples and are returned unchanged.
    nan_policy : {"raise", "omit"}
        ``"raise"``: a NaN raises ``ValueError`` naming the array and suggesting
        ``nan_policy="omit"``. ``"omit"``: the samples holding a NaN are removed.
    axis : int, optional
        The sample axis of every array (``-1`` for ``(..., n)`` series, ``-2`` for ``(..., n, 3)``
        point sets, ``-3`` for ``(..., n, 4, 4)`` poses).

    Returns
    -------
    arrays : dict of str to ndarray
        The arrays with the dropped samples removed (the same objects when none is dropped).
    keep : ndarray of bool, shape (n,)
        ``True`` for every sample kept; ``(~keep).sum()`` is the number omitted.

    Raises
    ------
    ValueError
        If `nan_policy` is not one of the options, an array holds an infinity, an array holds a
        NaN under ``"raise"``, or the arrays disagree on the number of samples.

    Notes
    -----
    The caller checks afterwards that enough samples are left for its fit (it knows how many it
    needs) and reports how many were omitted.

    Examples
    --------
    >>> q = np.array([0.0, 0.1, 0.2, 0.3])
    >>> tau = np.array([1.0, np.nan, 1.2, 1.3])
    >>> kept, keep = drop_nan_samples({"q": q, "tau": tau}, "omit")
    >>> kept["q"].tolist(), int((~keep).sum())
    ([0.0, 0.2, 0.3], 1)
    """
    check_option(nan_policy, "nan_policy", NAN_POLICIES)
    items = {name: np.asarray(a) for name, a in arrays.items()}

    def along(a: NDArray[Any]) -> int:
        # Length along the sample axis; 1 for an array too small to have that axis (broadcast).
        return int(a.shape[axis]) if a.ndim >= (-axis if axis < 0 else axis + 1) else 1

    lengths = {name: along(a) for name, a in items.items() if along(a) != 1}
    n = max(lengths.values(), default=1)
    if any(m != n for m in lengths.values()):
        shapes = ", ".join(f"`{k}` {describe_shape(items[k].shape)}" for k in items)
        raise ValueError(f"Expected the same number of samples along axis {axis}, got {shapes}.")
    sliced = {name for name, a in items.items() if along(a) == n and a.ndim}
    keep = np.ones(n, dtype=np.bool_)
    for name, a in items.items():
        if a.dtype.kind not in "fc":
            continue  # integer and boolean arrays hold no NaN or infinity
        n_inf = int(np.count_nonzero(np.isinf(a)))
        if n_inf:
            raise ValueError(
                f"Expected `{name}` to be finite, got {n_inf} infinite value(s) "
                "(refused under every `nan_policy`)."
            )
        nan = np.isnan(a)
        if not nan.any():
            continue
        if nan_policy == "raise":
            raise ValueError(
                f"Expected `{name}` to be finite, got {int(np.count_nonzero(nan))} NaN value(s); "
                'pass nan_policy="omit" to drop the samples that hold them.'
            )
        if name not in sliced:
            keep[:] = False  # a NaN in an array broadcast over the samples spoils every sample
            continue
        ax = axis % a.ndim
        other = tuple(i for i in range(a.ndim) if i != ax)
        keep &= ~(nan.any(axis=other) if other else nan)
    if keep.all():
        return dict(items), keep
    out = {
        name: (np.compress(keep, a, axis=axis) if name in sliced else a)
        for name, a in items.items()
    }
    return out, keep


# The range of each kind of angle that `check_radians` checks, with its text for messages.
_RADIAN_RANGES: dict[str, tuple[float, float, str]] = {
    "joint positions": (-MAX_JOINT_ANGLE, MAX_JOINT_ANGLE, "±4π"),
    "azimuths": (-MAX_JOINT_ANGLE, MAX_JOINT_ANGLE, "±4π"),
    "tilts": (0.0, np.pi, "[0, π]"),
}


def check_radians(
    x: ArrayLike,
    name: str,
    *,
    kind: Literal["joint positions", "azimuths", "tilts"] = "joint positions",
    allow_nan: bool = False,
    rows: bool = False,
) -> NDArray[np.float64]:
    """Refuse angles outside their range in radians, as probably degrees; return a float64 array.

    Joint positions and azimuths lie within ±4π (:data:`MAX_JOINT_ANGLE`, two turns), tilts
    (angles from base +z, and limits on them) in [0, π]. A value beyond the range's largest
    magnitude is taken for degrees and the message ends in "degrees?", unless it lies beyond
    the range read in degrees too (720 for ±4π): then it is no angle at all and the message says
    so (a corrupted sample?). A tilt in [-π, 0) is refused without either. A NaN is refused as
    not finite, unless `allow_nan` (samples a ``nan_policy="omit"`` drops later): then the range
    is checked on the other values. With `rows` (a log: axis 0 counts its samples) the message
    names the first row holding a value outside the range, and how many rows do.

    Examples
    --------
    >>> check_radians([0.1, -2.0], "q")
    array([ 0.1, -2. ])
    >>> check_radians(45.0, "tilt", kind="tilts")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Expected `tilt` to hold tilts in radians within [0, π], got 45 (...): degrees?
    """
    arr = np.asarray(x, dtype=np.float64)
    low, high, text = _RADIAN_RANGES[kind]
    if arr.size == 0:
        return arr
    lo, hi = float(np.min(arr)), float(np.max(arr))
    if not (math.isfinite(lo) and math.isfinite(hi)):  # min and max propagate a NaN
        check_finite(np.where(np.isnan(arr), 0.0, arr) if allow_nan else arr, name)
        # Only allowed NaN are left: fmin and fmax skip them.
        lo, hi = float(np.fmin.reduce(arr, axis=None)), float(np.fmax.reduce(arr, axis=None))
    if not (lo < low or hi > high):  # all NaN (allowed) compares False: nothing to refuse
        return arr
    where = ""
    if rows and arr.ndim >= 2:
        outside = (arr < low) | (arr > high)  # NaN compares False: never outside
        bad = np.flatnonzero(outside.reshape(arr.shape[0], -1).any(axis=1))
        row = arr[bad[0]][outside[bad[0]]]
        lo, hi = float(row.min()), float(row.max())
        count = f"the first of {bad.size} rows outside it" if bad.size > 1 else "the only one"
        where = f" at row {int(bad[0])}, {count}"
    worst = hi if hi - high >= low - lo else lo  # the value farthest outside
    limit = max(-low, high)
    if abs(worst) <= limit:
        hint = "."
    elif abs(worst) <= math.degrees(limit):
        # math.degrees, unlike np.degrees, returns inf beyond 3e306 rad without an FP error.
        hint = f" ({math.degrees(worst):.6g}° if radians): degrees?"
    else:
        hint = f": beyond {math.degrees(limit):.6g} it is no angle in degrees either (corrupted?)."
    raise ValueError(
        f"Expected `{name}` to hold {kind} in radians within {text}, got {worst:.6g}{where}{hint}"
    )


def check_sweep_angles(q_hi: Any, q_lo: Any, name: str = "q") -> None:
    """Refuse joint positions beyond ``MAX_JOINT_ANGLE`` or a sweep spanning more: degrees.

    `q_hi` and `q_lo` are the per-sweep extremes (Python floats for one sweep), already finite.
    """
    if isinstance(q_hi, float):
        top = max(q_hi, -q_lo)
    elif q_hi.size:
        top = float(max(np.max(q_hi), -np.min(q_lo)))
    else:
        return
    if top > MAX_JOINT_ANGLE:
        raise ValueError(
            f"Expected `{name}` in radians within ±4π = ±{MAX_JOINT_ANGLE:.4f} (two turns), got "
            f"joint positions up to {top:.6g} rad ({math.degrees(top):.6g}°): degrees? Wrap "
            "multi-turn positions into that range first."
        )
    span = q_hi - q_lo if isinstance(q_hi, float) else float(np.max(q_hi - q_lo))
    if span > MAX_JOINT_ANGLE:
        check_angle_span(span, name, limit=MAX_JOINT_ANGLE)


def apply_torque_sign(torque: NDArray[np.float64], torque_sign: Any) -> NDArray[np.float64]:
    """`torque` in gravdir's sign convention; `torque_sign` must be the integer 1 or -1."""
    if not (type(torque_sign) is int or isinstance(torque_sign, np.integer)) or (
        torque_sign not in (1, -1)
    ):
        raise ValueError(f"Expected `torque_sign` to be 1 or -1, got {torque_sign!r}.")
    return torque if torque_sign == 1 else -torque
