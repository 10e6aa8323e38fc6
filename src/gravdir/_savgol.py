"""The Savitzky-Golay derivative of a record of samples, planned once and evaluated on any
stretch of it: :func:`gravdir.sweep.joint_acceleration` takes it on whole records, and the motion
functions' stream (``gravdir.motion._derive``) on a log as its chunks arrive."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._imports import IMPORT_LOCK
from gravdir.errors import InsufficientDataError

# Polynomial order of the derivative by default (joint_acceleration's `polyorder`, and the
# motion functions' rule): a cubic.
DEFAULT_POLYORDER = 3
# Sample intervals within this fraction of their median count as uniform: the derivative is then
# taken on the samples as they are. Timestamps written as k * dt in floating point differ from
# uniform by ~1e-12 relative; jitter of a real clock is far above 1e-6.
UNIFORM_RTOL = 1e-6
# A log whose span holds more than this many median intervals per sample has gaps (a pause
# between sweeps): the uniform grid it would need is refused rather than built.
MAX_GRID_PER_SAMPLE = 4


class GridPlan(NamedTuple):
    """How the derivative is taken on one record of samples: its median interval,
    the filter's window in samples, whether the samples are uniform (the filter runs on them)
    or are interpolated onto a grid of `m` points from `t0` to `t1`."""

    step: float
    length: int
    uniform: bool
    m: int
    t0: float
    t1: float

    def grid(self, lo: int, hi: int) -> NDArray[np.float64]:
        """Points ``lo`` to ``hi - 1`` of the grid, as ``np.linspace(t0, t1, m)[lo:hi]``."""
        if self.m < 2:
            return np.full(hi - lo, self.t0)
        g: NDArray[np.float64] = (
            np.arange(lo, hi, dtype=np.float64) * ((self.t1 - self.t0) / (self.m - 1)) + self.t0
        )
        if hi == self.m:
            g[-1] = self.t1
        return g


def grid_plan(
    t: NDArray[np.float64],
    name: str,
    window: float,
    polyorder: int,
    window_name: str = "window",
) -> GridPlan:
    """The plan of the derivative of a record with increasing times `t` (1-D, finite), or the
    error that refuses it (naming the series `name` and the caller's `window_name`)."""
    n = t.size
    dt = np.diff(t)
    if n < 2:
        raise InsufficientDataError(f"Expected at least 2 samples of `{name}`, got {n}.")
    step = float(np.median(dt))
    with np.errstate(over="ignore"):
        span = float(t[-1] - t[0]) / step
        per_window = window / step
    if not (math.isfinite(step) and math.isfinite(span)):
        raise ValueError(
            f"Expected `time` whose span and intervals lie within the float range, got "
            f"{float(t[0]):.6g} s to {float(t[-1]):.6g} s."
        )
    if per_window > 2 * n + 1:
        raise InsufficientDataError(
            f"Expected more samples of `{name}` than the {window:g} s window holds at the median "
            f"sample interval {step:.6g} s (about {per_window:.3g}), got {n}."
        )
    length = 2 * math.floor((per_window - 1) / 2 + 0.5) + 1
    if length <= polyorder:
        raise ValueError(
            f"Expected `{window_name}` to span more than the polynomial's order, {polyorder} "
            f"samples, got {window:g} s = {length} sample(s) at the median sample interval "
            f"{step:.6g} s: lengthen `{window_name}` (is `time` in seconds?)."
        )
    uniform = bool(np.all(np.abs(dt - step) <= UNIFORM_RTOL * step))
    if span > MAX_GRID_PER_SAMPLE * n:
        raise ValueError(
            f"Expected `time` without long gaps, got a span of {float(t[-1] - t[0]):.6g} s for "
            f"{n} samples at a median interval of {step:.6g} s: split the log at its gaps."
        )
    m = n if uniform else round(span) + 1
    if m < length:
        raise InsufficientDataError(
            f"Expected at least {length} samples of `{name}` (the {window:g} s window at the "
            f"median sample interval {step:.6g} s), got {m}."
        )
    return GridPlan(step, length, uniform, m, float(t[0]), float(t[-1]))


def stretch_derivative(
    plan: GridPlan,
    polyorder: int,
    t: NDArray[np.float64],
    x: NDArray[np.float64],
    grid_lo: int,
    grid_hi: int,
    first: int,
    stop: int,
    name: str,
) -> NDArray[np.float64]:
    """The derivative of a record planned by `plan` at its samples ``t[first:stop]``, from a
    stretch of it: the samples `t`, `x` (..., len(t)) and the grid points ``grid_lo`` to
    ``grid_hi - 1`` (on uniform samples the grid is the samples, and `t` starts at sample
    `grid_lo`). Equal to the whole record's derivative at those samples wherever the stretch
    holds the filter windows of their grid points and the samples around those points; the
    whole record is the stretch ``0, m``. `name` names `x` in the error that refuses a
    derivative beyond the float range.

    Samples of extreme magnitude are differentiated in units of a power of two near their
    largest magnitude (exact, undone on the result), so the filter's sums neither overflow nor
    underflow.
    """
    scale = np.max(np.abs(x), axis=-1, keepdims=True)
    scale = np.where(scale > 0, np.ldexp(1.0, np.frexp(scale)[1]), 1.0)
    with IMPORT_LOCK:
        from scipy.signal import savgol_filter  # slow to import: only when needed

    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if plan.uniform:
            out = savgol_filter(
                x / scale, plan.length, polyorder, deriv=1, delta=plan.step, axis=-1,
                mode="interp",
            )[..., first:stop]  # fmt: skip
        else:
            # The grid spans the samples exactly: its interval is the median one to within 1/m.
            grid = plan.grid(grid_lo, grid_hi)
            delta = float(plan.grid(0, 2)[1] - plan.t0)
            on_grid = _interp_rows(grid, t, x / scale)
            d_grid = savgol_filter(
                on_grid, plan.length, polyorder, deriv=1, delta=delta, axis=-1, mode="interp"
            )
            out = _interp_rows(t[first:stop], grid, d_grid)
        result: NDArray[np.float64] = out * scale
    if not np.isfinite(result).all():
        raise ValueError(
            f"Expected `time` and `{name}` whose derivative lies within the float range, got "
            f"samples up to {float(np.max(np.abs(x))):.3g} at intervals of {plan.step:.3g} s."
        )
    return result


def _interp_rows(
    x_new: NDArray[np.float64], x_old: NDArray[np.float64], y: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Linear interpolation of every row of `y` (..., len(x_old)) at `x_new`, as np.interp
    (held constant beyond the ends), with the bracketing indices found once for all rows."""
    hi = np.clip(np.searchsorted(x_old, x_new, side="right"), 1, x_old.size - 1)
    lo = hi - 1
    w = np.clip((x_new - x_old[lo]) / (x_old[hi] - x_old[lo]), 0.0, 1.0)
    out: NDArray[np.float64] = y[..., lo] * (1.0 - w) + y[..., hi] * w
    return out
