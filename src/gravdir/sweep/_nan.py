"""``nan_policy="omit"`` for the sweep fits: the samples holding a NaN, sweep by sweep."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import NAN_POLICIES, check_option, drop_nan_samples
from gravdir.errors import InsufficientDataError
from gravdir.sweep._solve import batch_index

Arrays = tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None
]


def check_nan_policy(nan_policy: object) -> bool:
    """Whether `nan_policy` asks to omit NaN samples; refuses anything but the two options."""
    if isinstance(nan_policy, str) and nan_policy == "raise":
        return False
    return bool(check_option(nan_policy, "nan_policy", NAN_POLICIES) == "omit")


def _named(arrays: Arrays) -> dict[str, NDArray[np.float64]]:
    names = ("q", "torque", "velocity", "acceleration")
    return {name: a for name, a in zip(names, arrays, strict=True) if a is not None}


def omit_nan_samples(arrays: Arrays) -> tuple[Arrays, NDArray[np.bool_] | None]:
    """The sample arrays of a fit (one shape, already broadcast) with their NaN samples omitted.

    Each sweep loses only its own NaN samples, in place, so the arrays keep their shape: the
    omitted samples are replaced by finite stand-ins (a kept angle of the sweep, zero torque,
    speed and acceleration) and the returned mask (..., n), false there, takes them out of the
    fit as zero rows (weights of zero are exact in least squares). In place, a lag along the
    sample axis (the sandwich's, the residuals' lag-1 correlation) is a distance in samples, and
    a pair across an omitted sample counts as none. None when no sample holds a NaN.
    Infinities are refused.
    """
    q = arrays[0]
    nan = np.zeros(q.shape, dtype=bool)
    for a in arrays:
        if a is not None:
            nan |= np.isnan(a)
    if not nan.any():
        return arrays, None
    batch = q.shape[:-1]
    keep = np.ones(q.shape, dtype=bool)
    rows = [()] if q.ndim == 1 else zip(*np.nonzero(nan.any(axis=-1)), strict=True)
    for index in rows:
        row = tuple(None if a is None else a[index] for a in arrays)
        keep[index] = drop_nan_samples(_named(row), "omit")[1]  # type: ignore[arg-type]
    empty = ~keep.any(axis=-1)
    if empty.any():
        raise InsufficientDataError(
            "Expected samples without NaN in `q`, `torque`, `velocity` and `acceleration`, "
            f"got none{batch_index(batch, np.asarray(empty))}: every sample holds a NaN."
        )
    first = np.argmax(keep, axis=-1)[..., None]
    q_fill = np.take_along_axis(q, first, axis=-1)
    filled = (
        np.where(keep, q, q_fill),
        *(None if a is None else np.where(keep, a, 0.0) for a in arrays[1:]),
    )
    return filled, keep  # type: ignore[return-value]


# Odd multipliers (the 64-bit golden ratio and two of xxHash's primes) that mix the three sums
# of a sweep's checksum into one 64-bit digest.
_MIX = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9)
_MASK = (1 << 64) - 1


def torque_sums(
    torque: NDArray[np.float64], keep: NDArray[np.bool_] | None = None
) -> tuple[Any, Any]:
    """The checksum sums of the torque samples of each sweep: the sum of their 64-bit patterns
    and the sum of their squares, both modulo 2^64 (shape (...); `keep` false leaves a sample
    out). Both are sums, so they add over chunks in any order."""
    bits = np.ascontiguousarray(torque).view(np.uint64)
    if keep is not None:
        bits = np.where(keep, bits, np.uint64(0))
    # Unsigned integer arithmetic wraps modulo 2^64 without a warning; vecdot forms the sum of
    # squares without a temporary of the samples' size.
    return np.add.reduce(bits, axis=-1), np.vecdot(bits, bits)


def _mixed(s1: Any, s2: Any, n: Any) -> Any:
    """The 64-bit digest of the checksum sums and the count: Python integers, masked to 64
    bits, or uint64 arrays, whose arithmetic wraps modulo 2^64 as the mask does."""
    return (s1 * _MIX[0] + s2 * _MIX[1] + n * _MIX[2]) & _MASK


def multiset_digest(s1: int, s2: int, n: int) -> str:
    """16 hexadecimal digits from the two checksum sums of :func:`torque_sums` and the count."""
    return f"{_mixed(s1, s2, n):016x}"


def fingerprint_from_sums(s1: Any, s2: Any, counts: Any) -> tuple[frozenset[str], Any]:
    """The fingerprint of a fit and the digest of each of its sweeps (an object array of the
    batch shape; None for one sweep) from the checksum sums of :func:`torque_sums` and the
    sample counts of each sweep, shape (...)."""
    shape = np.shape(s1)
    if not shape:
        return frozenset((multiset_digest(int(s1), int(s2), int(counts)),)), None
    # The digests of every sweep at once, in uint64 arithmetic.
    n = np.broadcast_to(np.asarray(counts).astype(np.uint64), shape)
    mixed = _mixed(np.asarray(s1, dtype=np.uint64), np.asarray(s2, dtype=np.uint64), n)
    # Big-endian bytes in hexadecimal are each digest's 16 digits in turn.
    digits = mixed.astype(">u8").tobytes().hex()
    flat = [digits[i : i + 16] for i in range(0, len(digits), 16)]
    column = np.empty(len(flat), dtype=object)
    column[:] = flat
    digests: NDArray[Any] = column.reshape(shape)
    digests.flags.writeable = False
    return frozenset(flat), digests


def sample_fingerprints(arrays: Arrays, omit: bool) -> tuple[frozenset[str], NDArray[Any] | None]:
    """The data fingerprint of a fit and the digest of each of its sweeps (batch shape).

    A sweep's digest is a checksum of the multiset of its torque samples as given (before any
    sign change): the sum of their 64-bit patterns and the sum of their squares, both modulo
    2^64, and their count, mixed into 16 hexadecimal digits (a fast checksum rather than a
    cryptographic hash: it identifies shared data, it does not guard against forgery). The
    torque carries the measurement noise (the angles and speeds of different sweeps are often
    the same commanded trajectory), and sums make the digest independent of the order of the
    samples and of how they were split into chunks, without a sort: a
    :class:`~gravdir.sweep.SweepAccumulator` fed the same samples in any chunks and merge order
    gives the same digest. Under ``nan_policy="omit"`` the samples holding a NaN in any array
    are left out first. So a sweep has the same digest alone and in a batch, and a fit that
    omits NaN samples the same as the fit of the clean samples. The fit's fingerprint is the set
    of its sweeps' digests; the digests come back as an object array of the batch shape (None
    for one sweep).
    """
    present = [a for a in arrays if a is not None]
    shape = present[0].shape
    if any(a.shape != shape for a in present):
        shape = np.broadcast_shapes(*(a.shape for a in present))
    torque = arrays[1]
    keep: NDArray[np.bool_] | None = None
    if omit:
        nan = np.zeros(shape, dtype=bool)
        for a in present:
            nan = nan | np.isnan(a)
        if nan.any():
            keep = ~nan
    if len(shape) == 1:  # one sweep: the common call, without the batch machinery
        s1, s2 = torque_sums(torque, keep)
        n = shape[0] if keep is None else int(keep.sum())
        return frozenset((multiset_digest(int(s1), int(s2), n),)), None
    full = np.broadcast_to(torque, shape)
    s1, s2 = torque_sums(full, keep)
    counts = shape[-1] if keep is None else keep.sum(axis=-1)
    return fingerprint_from_sums(s1, s2, counts)
