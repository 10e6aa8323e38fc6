"""``nan_policy="omit"`` for the sweep fits: the samples holding a NaN, sweep by sweep."""

from __future__ import annotations

import zlib
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

    One sweep (1-D): the samples holding a NaN in any array are removed
    (:func:`gravdir._checks.drop_nan_samples`), and the mask is None. A batch: each sweep loses
    only its own NaN samples, so the arrays keep their shape; the omitted samples are replaced
    by finite stand-ins (a kept angle of the sweep, zero torque, speed and acceleration) and the
    returned mask (..., n), false there, takes them out of the fit as zero rows (weights of zero
    are exact in least squares). None when no sample holds a NaN. Infinities are refused.
    """
    q = arrays[0]
    if q.ndim == 1:
        kept, keep = drop_nan_samples(_named(arrays), "omit")
        if not keep.any():
            raise InsufficientDataError(
                "Expected samples without NaN in `q`, `torque`, `velocity` and `acceleration`, "
                "got none: every sample holds a NaN."
            )
        out = (kept["q"], kept["torque"], kept["velocity"], kept.get("acceleration"))
        return out, None
    nan = np.zeros(q.shape, dtype=bool)
    for a in arrays:
        if a is not None:
            nan |= np.isnan(a)
    if not nan.any():
        return arrays, None
    batch = q.shape[:-1]
    keep = np.ones(q.shape, dtype=bool)
    for index in zip(*np.nonzero(nan.any(axis=-1)), strict=True):
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


def _digest(row: NDArray[np.float64]) -> str:
    """16 hexadecimal digits identifying the samples of one contiguous row."""
    data = np.ascontiguousarray(row).data
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def sample_fingerprints(arrays: Arrays, omit: bool) -> tuple[frozenset[str], NDArray[Any] | None]:
    """The data fingerprint of a fit and the digest of each of its sweeps (batch shape).

    A sweep's digest is the CRC-32 and Adler-32 checksums of its torque samples as given (before
    any sign change), sorted, as 16 hexadecimal digits (a fast checksum rather than a
    cryptographic hash: it identifies shared data, it does not guard against forgery). The
    torque carries the measurement noise (the angles and speeds of different sweeps are often
    the same commanded trajectory), and sorting makes it independent of the order of the
    samples at the cost of one sort. Under
    ``nan_policy="omit"`` the samples holding a NaN in any array are left out first. So a sweep
    has the same digest alone and in a batch, and a fit that omits NaN samples the same as the
    fit of the clean samples. The fit's fingerprint is the set of its sweeps' digests; the
    digests come back as an object array of the batch shape (None for one sweep).
    """
    present = [a for a in arrays if a is not None]
    shape = present[0].shape
    if any(a.shape != shape for a in present):
        shape = np.broadcast_shapes(*(a.shape for a in present))
    torque = arrays[1]
    nan: NDArray[np.bool_] | None = None
    if omit:
        nan = np.zeros(shape, dtype=bool)
        for a in present:
            nan = nan | np.isnan(a)
        if not nan.any():
            nan = None
    if len(shape) == 1:  # one sweep: the common call, without the batch machinery
        row = np.sort(torque if nan is None else torque[~nan])
        digest = _digest(row)
        return frozenset((digest,)), None
    n = shape[-1]
    full = np.broadcast_to(torque, shape).reshape(-1, n)
    if nan is None:
        # One sort for the whole batch; the checksums read each sorted row in place.
        ordered = np.ascontiguousarray(np.sort(full, axis=-1))
        flat = [_digest(r) for r in ordered]
    else:
        keep = ~nan.reshape(-1, n)
        flat = [
            _digest(np.sort(t[k]))
            for t, k in zip(full, keep, strict=True)
        ]
    column = np.empty(len(flat), dtype=object)
    column[:] = flat
    digests: NDArray[Any] = column.reshape(shape[:-1])
    digests.flags.writeable = False
    return frozenset(flat), digests
