"""joint_velocity, joint_acceleration: Savitzky-Golay derivatives of logged joint samples."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    NanPolicy,
    check_array,
    check_count,
    check_positive,
    drop_nan_samples,
)
from gravdir._savgol import DEFAULT_POLYORDER, grid_plan, stretch_derivative
from gravdir._time import check_increasing
from gravdir.errors import InsufficientDataError
from gravdir.sweep._design import refuse_non_finite
from gravdir.sweep._nan import check_nan_policy

# Default window, seconds, and polynomial order: at 100 Hz seven samples under a cubic. On 100 Hz
# logs with jittered timestamps of reversals at 1-5 rad/s^2 this kept the inertia fitted from the
# derived acceleration within 0.2% (mean) of the truth, where a quadratic over 0.05 s was off by
# 0.9%; a velocity noise of 1e-3 rad/s becomes about 0.04 rad/s^2 RMS (docs/sweep.md tabulates the
# choices). The order is gravdir._savgol's, which the motion functions' rule shares.
DEFAULT_WINDOW = 0.07
# Largest polynomial order: beyond 6 a Savitzky-Golay derivative amplifies noise more than it
# removes bias for any window a log of joint samples needs.
MAX_POLYORDER = 6


def joint_acceleration(
    time: ArrayLike,
    *,
    velocity: ArrayLike,
    window: float = DEFAULT_WINDOW,
    polyorder: int = DEFAULT_POLYORDER,
    nan_policy: NanPolicy = "raise",
    axis: int = -1,
) -> NDArray[np.float64]:
    """Joint acceleration from logged joint velocity: a Savitzky-Golay derivative in time.

    Parameters
    ----------
    time : array_like, shape (n,) or the shape of `velocity`
        Sample times, s, strictly increasing along the sample axis (jitter allowed): one time
        axis for every series, or one per series (its sample axis is `axis` too, and its other
        axes broadcast against those of `velocity`).
    velocity : array_like, shape (..., n)
        Joint velocity, rad/s (any unit per second: the result is that unit per second); the
        sample axis is `axis`.
    window : float, optional
        Length of the smoothing window, s (default 0.07): the number of samples in the window is
        the odd number nearest to ``window / dt`` (``dt`` the median sample interval), at least
        ``polyorder + 1``. Longer windows smooth noise more and blur fast changes of the
        acceleration more (see Notes).
    polyorder : int, optional
        Order of the local polynomial, an integer from 1 to 6 (default 3). Away from the ends of
        a record order 2 gives the same derivative as order 1, and order 4 the same as order 3;
        order 2 smooths noise more (about 1.6 times less noise over the same window) and blurs
        fast changes more.
    nan_policy : {"raise", "omit"}, optional
        ``"raise"`` (default) refuses a NaN in `time` or `velocity` with an error naming the
        array. ``"omit"`` leaves the samples holding a NaN out of the derivative (a sweep of a
        batch loses only its own) and returns NaN at exactly those samples, as
        ``scipy.stats.zscore`` does with ``nan_policy="omit"``: the other samples are computed
        as if they were absent, and ``fit_sweep(..., nan_policy="omit")`` drops the NaN samples
        again. Infinities are refused under both.
    axis : int, optional
        The sample axis of `velocity`, as in ``scipy.signal.savgol_filter`` (default -1: a
        batch of sweeps, one per row; ``axis=0`` for a log of shape (samples, joints)).

    Returns
    -------
    ndarray
        The acceleration at each sample time, rad/s² (the broadcast shape of the inputs, the
        sample axis where `axis` says).

    Raises
    ------
    ValueError
        If an array is not real and numeric, holds an infinity (or a NaN under ``"raise"``),
        `axis` is not an axis of the arrays, the arrays do not share their sample axis or do
        not broadcast, `time` is not strictly
        increasing, its span holds more than 4 median intervals per sample (a gap: split the
        log there), `window` is not a positive number or spans fewer than ``polyorder + 1``
        samples (time in milliseconds?), or `polyorder` is not an integer from 1 to 6.
    InsufficientDataError
        If a sweep has fewer samples than the window (after omitted NaN samples).

    See Also
    --------
    joint_velocity : the same derivative of logged joint positions.
    fit_sweep : takes the result as its `acceleration` (the inertia column).

    Notes
    -----
    The derivative of the least-squares polynomial of order `polyorder` through the samples of
    a sliding window, at the window's centre (Savitzky & Golay 1964), is
    ``scipy.signal.savgol_filter(velocity, window_length, polyorder, deriv=1, delta=dt,
    mode="interp")``; at the ends of a record the polynomial of the first (last) window is
    evaluated instead. The filter assumes uniform samples. With uniform timestamps (every
    interval within 1e-6 of the median ``dt``) it runs on the samples as they are; with jitter or
    gaps the velocity is first interpolated linearly onto a uniform grid from the first to the
    last sample time at (very nearly) the median interval, differentiated there, and the
    acceleration interpolated linearly back to the sample times. Treating jittered samples as
    uniform would put the timing error straight into the acceleration (±20% jitter of the
    period: about 100 times the error on a smooth motion); the grid leaves only the error of
    linear interpolation, at most :math:`\\Delta t^2 |\\dddot q| / 8` in the velocity.

    A window of :math:`w` seconds blurs a step of the acceleration (the corner of a trapezoidal
    velocity profile) over half a window each side: the sample at the corner is off by up to
    half the step, and the errors around it sum to zero (the change of speed is kept). Smooth
    profiles keep a small bias, of order :math:`w^4` for the default cubic. docs/sweep.md gives
    the measured figures, and the effect on a fitted inertia.

    References
    ----------
    Savitzky, A. & Golay, M. J. E. (1964), Smoothing and differentiation of data by simplified
    least squares procedures, Analytical Chemistry 36(8), 1627-1639. SciPy,
    ``scipy.signal.savgol_filter`` (arguments ``deriv``, ``delta``, ``mode="interp"``) and
    ``scipy.stats.zscore`` (its ``nan_policy="omit"`` keeps NaN at the NaN samples).

    Examples
    --------
    A constant acceleration of 2 rad/s² sampled at 100 Hz with jittered timestamps:

    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(200) * 0.01 + rng.uniform(-0.002, 0.002, 200)
    >>> acceleration = joint_acceleration(t, velocity=0.1 + 2.0 * t)
    >>> bool(np.allclose(acceleration, 2.0, atol=1e-9))
    True

    A velocity log with a missing sample, omitted on request:

    >>> velocity = np.sin(t)
    >>> velocity[50] = np.nan
    >>> acceleration = joint_acceleration(t, velocity=velocity, nan_policy="omit")
    >>> bool(np.isnan(acceleration[50])), bool(np.allclose(np.delete(acceleration, 50),
    ...                                                    np.cos(np.delete(t, 50)), atol=2e-3))
    (True, True)
    """
    return _derivative(time, velocity, "velocity", window, polyorder, nan_policy, axis)


def joint_velocity(
    time: ArrayLike,
    *,
    q: ArrayLike,
    window: float = DEFAULT_WINDOW,
    polyorder: int = DEFAULT_POLYORDER,
    nan_policy: NanPolicy = "raise",
    axis: int = -1,
) -> NDArray[np.float64]:
    """Joint velocity from logged joint positions: a Savitzky-Golay derivative in time.

    Parameters
    ----------
    time : array_like, shape (n,) or the shape of `q`
        Sample times, s, as in :func:`joint_acceleration`.
    q : array_like, shape (..., n)
        Joint positions, rad (unwrapped); the sample axis is `axis`.
    window, polyorder, nan_policy, axis
        As in :func:`joint_acceleration`.

    Returns
    -------
    ndarray
        The velocity at each sample time, rad/s. For the acceleration of a log that holds
        positions only, apply :func:`joint_acceleration` to it (two windows in series: the
        smoothing is that of both).

    Raises
    ------
    ValueError, InsufficientDataError
        As :func:`joint_acceleration`.

    See Also
    --------
    joint_acceleration : the same derivative of logged joint velocity.

    Notes
    -----
    The same filter as :func:`joint_acceleration`, applied to the positions.

    References
    ----------
    Savitzky & Golay (1964); SciPy ``scipy.signal.savgol_filter``.

    Examples
    --------
    >>> t = np.arange(100) * 0.01
    >>> velocity = joint_velocity(t, q=0.3 + 0.5 * t)
    >>> bool(np.allclose(velocity, 0.5, atol=1e-9))
    True
    """
    return _derivative(time, q, "q", window, polyorder, nan_policy, axis)


def _derivative(
    time: ArrayLike,
    x: ArrayLike,
    name: str,
    window: Any,
    polyorder: Any,
    nan_policy: Any,
    axis: Any,
) -> NDArray[np.float64]:
    """The first time derivative of `x` (checked here) along `axis`, for both public
    functions: the sample axis is moved last, differentiated there and moved back."""
    tt = check_array(time, "time", min_ndim=1, finite=False)
    xx = check_array(x, name, min_ndim=1, finite=False)
    sample_axis = _check_axis(axis, xx.ndim, name)
    if sample_axis != xx.ndim - 1:
        if tt.ndim > 1:
            if tt.ndim != xx.ndim:
                raise ValueError(
                    f"Expected `time` of shape (n,) or with the {xx.ndim} axes of `{name}` when "
                    f"`axis` is not the last, got shapes {tt.shape} and {xx.shape}."
                )
            tt = np.moveaxis(tt, sample_axis, -1)
        moved = _derivative(
            tt, np.moveaxis(xx, sample_axis, -1), name, window, polyorder, nan_policy, -1
        )
        return np.moveaxis(moved, -1, sample_axis)
    if tt.shape[-1] != xx.shape[-1]:
        raise ValueError(
            f"Expected `time` and `{name}` to share their last (sample) axis, got shapes "
            f"{tt.shape} and {xx.shape}: leading axes broadcast over sweeps, the sample axis "
            "does not."
        )
    try:
        shape = np.broadcast_shapes(tt.shape, xx.shape)
    except ValueError:
        raise ValueError(
            f"Expected `time` and `{name}` whose leading (batch) axes broadcast, got shapes "
            f"{tt.shape} and {xx.shape}."
        ) from None
    omit = check_nan_policy(nan_policy)
    if isinstance(window, bool | np.bool_):
        raise ValueError(f"Expected `window` to be a positive number of seconds, got {window!r}.")
    window = check_positive(window, "window")
    polyorder = check_count(polyorder, "polyorder", minimum=1, maximum=MAX_POLYORDER)
    if shape[-1] < 2:
        raise InsufficientDataError(
            f"Expected at least 2 samples of `{name}`, got shape {xx.shape}."
        )
    has_nan = omit and bool(np.isnan(tt).any() or np.isnan(xx).any())
    if not has_nan:
        # A NaN under "raise", or an infinity under either policy, is refused here.
        for arr, arr_name in ((tt, "time"), (xx, name)):
            if not np.isfinite(arr).all():
                refuse_non_finite(arr, arr_name)
    out = np.empty(shape)
    if tt.ndim == 1 and not has_nan:
        # One time axis for every sweep (the common case): a single filter call over the batch.
        out[...] = _differentiate(tt, np.broadcast_to(xx, shape), name, window, polyorder)
        return out
    t_rows = np.broadcast_to(tt, shape).reshape(-1, shape[-1])
    x_rows = np.broadcast_to(xx, shape).reshape(-1, shape[-1])
    flat = out.reshape(-1, shape[-1])
    for i in range(t_rows.shape[0]):
        ti, xi = t_rows[i], x_rows[i]
        if omit:
            kept, keep = drop_nan_samples({"time": ti, name: xi}, "omit")
            if keep.all():
                flat[i] = _differentiate(ti, xi, name, window, polyorder)
                continue
            if not keep.any():
                raise InsufficientDataError(
                    f"Expected samples of `{name}` free of NaN, got none in sweep {i} (a NaN at "
                    "every sample of `time` or of it)."
                )
            flat[i] = np.nan
            flat[i, keep] = _differentiate(kept["time"], kept[name], name, window, polyorder)
            continue
        flat[i] = _differentiate(ti, xi, name, window, polyorder)
    return out


def _check_axis(axis: Any, ndim: int, name: str) -> int:
    """Check that `axis` is an integer axis of an array `name` of `ndim` axes (negative counts
    from the end, as in NumPy); return it as a non-negative ``int``.

    """
    if isinstance(axis, np.ndarray) and axis.ndim == 0 and axis.dtype.kind in "iu":
        axis = axis[()]
    if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer):
        raise ValueError(f"Expected `axis` to be an integer, got {axis!r}.")
    if not -ndim <= int(axis) < ndim:
        raise ValueError(
            f"Expected `axis` to be an axis of `{name}` ({ndim}-d: from {-ndim} to {ndim - 1}), "
            f"got {int(axis)}."
        )
    return int(axis) % ndim


def _differentiate(
    t: NDArray[np.float64], x: NDArray[np.float64], name: str, window: float, polyorder: int
) -> NDArray[np.float64]:
    """d`x`/dt at the times `t` (1-D, finite) for every row of `x` (..., n), finite."""
    check_increasing(t)
    plan = grid_plan(t, name, window, polyorder)
    return stretch_derivative(plan, polyorder, t, x, 0, plan.m, 0, t.size, name)
