"""Argument checks and scaling shared by the friction modules.

The fits work in *scaled units*: each series is divided by a power of two chosen so that its
largest magnitude is of order one, which is exact in floating point, and the estimates are scaled
back by the matching powers of two. Series whose largest magnitude already lies within
:math:`2^{\\pm 64}` are left as they are (exponent 0), so ordinary data give bit for bit the
figures of an unscaled fit; squares and products of four such numbers stay far inside the float
range.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    NAN_POLICIES,
    check_array,
    check_option,
    check_scalar,
    check_vectors,
    drop_nan_samples,
)

__all__ = [
    "FLOAT_TINY",
    "MAX_SPEED_SPAN",
    "check_real",
    "check_series",
    "check_speed_span",
    "check_unit",
    "ignore_underflow",
    "length",
    "lost_in_scaling",
    "omitted_text",
    "pow2_exponent",
    "representable",
    "vector3",
]

# Smallest positive normal float: below it a number has lost precision (or become zero).
FLOAT_TINY = float(np.finfo(np.float64).tiny)
# Largest magnitude left unscaled: 2**64 (about 1.8e19), and its inverse.
_WINDOW = 64
#: Largest ratio of the fastest to the slowest speed of the samples a fit uses: 2**64, about
#: 1.8e19. A joint's speeds, from one count per second of a 24-bit encoder (4e-7 rad/s) to a
#: motor at 100 000 rpm (1e4 rad/s), span less than 1e11; a series spanning more holds a
#: corrupt sample or mixes units. Within it, every speed scaled to the fastest is at least
#: 2**-64, so the Stribeck terms and their derivatives (powers up to 5 of a speed over a
#: Stribeck velocity searched between half the slowest and twice the fastest speed) and their
#: squares stay inside the float range.
MAX_SPEED_SPAN = 2.0**_WINDOW

P = ParamSpec("P")
R = TypeVar("R")


def ignore_underflow(func: Callable[P, R]) -> Callable[P, R]:
    """Run `func` with floating-point underflow ignored, whatever the caller's numpy setting.

    A product or an exponential below the smallest float rounds to a subnormal or to zero, the
    correct limit for every quantity of these modules (a Stribeck dip that has died out, the square
    of a negligible residual). Overflow and invalid operations keep the caller's setting: the
    code avoids them by working in scaled units.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with np.errstate(under="ignore"):
            return func(*args, **kwargs)

    return wrapper


def check_real(x: Any, name: str) -> float:
    """One finite real number (not a bool, not a string); return it as float."""
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    return check_scalar(x, name)


def pow2_exponent(x: NDArray[np.float64] | float) -> int:
    """The exponent ``k`` of the power of two that brings the largest ``|x|`` to order one.

    0 when the largest magnitude is zero or lies within ``2**±64``, so that ordinary data are
    not rescaled at all.
    """
    m = float(np.max(np.abs(x))) if np.size(x) else 0.0
    if m == 0.0 or 2.0**-_WINDOW <= m <= 2.0**_WINDOW:
        return 0
    return math.frexp(m)[1]


def representable(x: ArrayLike) -> Any:
    """Where `x` is zero or a finite float of normal size (no overflow, no lost precision)."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    return (a == 0.0) | ((a >= FLOAT_TINY) & (a < np.inf))


def lost_in_scaling(before: ArrayLike, after: ArrayLike) -> Any:
    """Where a value of normal size, `before`, became zero, subnormal, infinite or NaN,
    `after`, when multiplied by a power of two (an underflow or an overflow)."""
    b = np.abs(np.asarray(before, dtype=np.float64))
    a = np.abs(np.asarray(after, dtype=np.float64))
    normal_before = (b >= FLOAT_TINY) & (b < np.inf)
    return normal_before & ~((a >= FLOAT_TINY) & (a < np.inf))


def length(x: NDArray[np.float64]) -> float:
    """Euclidean length of the vector `x` without overflow or underflow (scaled by a power of
    two, exactly ``np.linalg.norm`` for entries of ordinary size)."""
    k = pow2_exponent(x)
    if k == 0:
        return float(np.linalg.norm(x))
    with np.errstate(over="ignore"):
        return float(np.ldexp(np.linalg.norm(np.ldexp(x, -k)), k))


def check_unit(x: ArrayLike, name: str, *, atol: float = 1e-6) -> NDArray[np.float64]:
    """A (3,) unit vector (norm within `atol` of one, computed without overflow); return it."""
    v = vector3(x, name)
    if pow2_exponent(v) != 0:  # the largest entry is beyond 2**±64: far from unit length
        biggest = float(np.max(np.abs(v)))
        raise ValueError(
            f"Expected `{name}` to have unit norm (within {atol:g}), got a vector whose largest "
            f"entry is {biggest:.3g}."
        )
    length = float(np.linalg.norm(v))
    if abs(length - 1.0) > atol:
        raise ValueError(
            f"Expected `{name}` to have unit norm (within {atol:g}), got norm {length:.6g}."
        )
    return v


def vector3(x: ArrayLike, name: str) -> NDArray[np.float64]:
    v = check_vectors(x, name)
    if v.shape != (3,):
        raise ValueError(f"Expected `{name}` to have shape (3,), got {v.shape}.")
    return v


def check_series(
    nan_policy: str, series: dict[str, ArrayLike | None], optional: tuple[str, ...] = ()
) -> tuple[dict[str, NDArray[np.float64] | None], int]:
    """The sample series of one run, validated together, without the NaN samples under "omit".

    The first entry of `series` is the reference (``velocity``), shape (n,); every other one
    must have its shape exactly (a column vector is refused, not broadcast). Entries named in
    `optional` may be None (and stay None). A sample is dropped when any series holds a NaN
    there (``nan_policy="omit"``); under ``"raise"`` a NaN raises naming the series and the
    option; an infinity raises under both. Returns the series and the number of samples omitted.
    """
    check_option(nan_policy, "nan_policy", NAN_POLICIES)
    arrays: dict[str, NDArray[np.float64]] = {}
    ref_name = next(iter(series))
    for name, x in series.items():
        if x is None and name in optional:
            continue
        arr = check_array(x, name, finite=False)  # type: ignore[arg-type]  # None is refused
        if name == ref_name and arr.ndim != 1:
            raise ValueError(f"Expected `{name}` to have shape (n,), got {arr.shape}.")
        if name != ref_name and arr.shape != arrays[ref_name].shape:
            raise ValueError(
                f"Expected `{name}` to have the shape of `{ref_name}` "
                f"{arrays[ref_name].shape}, got {arr.shape}."
            )
        arrays[name] = arr
    kept, keep = drop_nan_samples(arrays, nan_policy)
    out: dict[str, NDArray[np.float64] | None] = {name: kept.get(name) for name in series}
    return out, int(keep.size - np.count_nonzero(keep))


def check_speed_span(speed: NDArray[np.float64], min_speed: float) -> None:
    """Refuse speeds (the samples used, all non-zero) spanning more than `MAX_SPEED_SPAN`.

    The fits of this package scale each series by one power of two, so a single sample far
    beyond the others (1e300 rad/s among speeds of 1 rad/s) would push the others towards zero
    and dominate every velocity column; the error names `velocity`, the two speeds and the bound.
    """
    if speed.size == 0:
        return
    a = np.abs(speed)
    slow, fast = float(a.min()), float(a.max())
    k = pow2_exponent(a)
    # Compared in scaled units: fast / slow may overflow where both speeds are finite.
    if float(np.ldexp(fast, -k)) > MAX_SPEED_SPAN * float(np.ldexp(slow, -k)):
        raise ValueError(
            f"Expected `velocity` to span at most a factor 2**{_WINDOW} ({MAX_SPEED_SPAN:.2g}) "
            f"over the samples used (|velocity| >= `min_speed`={min_speed:g}): a joint's speeds "
            f"span far less, so a larger span is a corrupt sample or mixed units; got speeds "
            f"from {slow:.3g} to {fast:.3g} rad/s."
        )


def omitted_text(n_omitted: int) -> str:
    """`` after omitting k sample(s) with NaN`` for an error about too few samples, or nothing."""
    return f" after omitting {n_omitted} sample(s) with NaN" if n_omitted else ""
