"""Checks of a log's time stamps, shared by the estimators that take sample times and by the
synthetic sensors that draw noise at them."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, describe_shape


def first_row(bad: NDArray[np.bool_]) -> str:
    """Where the rows flagged in `bad` (N,) are, for an error message: "at row 4." or "at row 4,
    the first of 7 such rows." (0-based)."""
    rows = np.flatnonzero(bad)
    more = f", the first of {rows.size} such rows." if rows.size > 1 else "."
    return f"at row {int(rows[0])}{more}"


def check_increasing(t: NDArray[np.float64]) -> None:
    """Refuse time stamps `t` (N,) that are not strictly increasing, naming the first row at or
    before its predecessor (a NaN compares false, so it is refused too)."""
    step = np.diff(t)
    if not np.all(step > 0):
        raise ValueError(
            "Expected `time` to be strictly increasing, got a time at or before the previous "
            + first_row(np.concatenate([[False], ~(step > 0)]))
        )


def check_time(time: ArrayLike, n_samples: int | None) -> NDArray[np.float64]:
    """The sample times of a log, shape (N,) (`n_samples` None: any N): finite and strictly
    increasing, s.

    A 2-D `time` is most likely the joint angles of a call written before `time` came first:
    the error says that `q` is keyword-only.
    """
    t = check_array(time, "time", finite=False)
    expected = "N" if n_samples is None else str(n_samples)
    if t.ndim == 2:
        raise ValueError(
            f"Expected `time` of shape ({expected},) (the sample times, s), got "
            f"{describe_shape(t.shape)}: joint angles? `time` comes first and `q` is "
            "keyword-only (`q=q`); a uniformly sampled log passes `np.arange(N) / rate`."
        )
    if t.ndim != 1 or (n_samples is not None and t.size != n_samples):
        raise ValueError(
            f"Expected `time` of shape ({expected},) like the samples of `q`, got "
            f"{describe_shape(t.shape)}."
        )
    if not np.isfinite(t).all():
        raise ValueError(f"Expected `time` to be finite, got {first_row(~np.isfinite(t))}")
    check_increasing(t)
    return t
