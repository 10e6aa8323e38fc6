"""Noise correlated in time: the stationary first-order process sampled at time stamps."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive
from gravdir._time import check_increasing
from gravdir.synthetic._validate import check_rng

__all__ = ["MAX_SAMPLES", "correlated_noise"]

# Cap on the samples of one synthetic series (bounded work).
MAX_SAMPLES = 5_000_000


def correlated_noise(
    time: ArrayLike, noise_std: ArrayLike, correlation_time: float, *, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Stationary first-order autoregressive noise sampled at the time stamps `time`.

    The Ornstein-Uhlenbeck process sampled exactly at each stamp:
    :math:`x_k = \\rho_k x_{k-1} + \\sigma \\sqrt{1 - \\rho_k^2}\\, \\varepsilon_k` with
    :math:`\\rho_k = e^{-(t_k - t_{k-1})/\\tau}` and :math:`x_0 \\sim N(0, \\sigma^2)`, so every
    sample has standard deviation :math:`\\sigma` and two samples correlate as
    :math:`e^{-|t_k - t_i|/\\tau}`, whatever the spacing (jitter, gaps).

    Parameters
    ----------
    time : array_like, shape (N,)
        Increasing time stamps, s (at most 5,000,000).
    noise_std : float or array_like, shape (n,)
        Stationary standard deviation of each column, non-negative; a scalar gives one column.
    correlation_time : float
        :math:`\\tau`, s, non-negative (0 gives white noise).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    ndarray, shape (N, n), or (N,) for a scalar `noise_std`

    Raises
    ------
    ValueError
        If `time` is not 1-D, finite and strictly increasing, a level or time is negative or
        not finite, or `rng` is not a generator.

    Notes
    -----
    The recursion runs as a parallel prefix scan of the affine maps
    :math:`x \\mapsto \\rho_k x + e_k` (:math:`\\lceil \\log_2 N \\rceil` vectorised passes).

    Examples
    --------
    >>> t = np.arange(20000) * 0.01
    >>> x = correlated_noise(t, 2.0, 0.1, rng=np.random.default_rng(0))
    >>> round(float(np.corrcoef(x[1:], x[:-1])[0, 1]), 1), round(float(x.std()), 1)
    (0.9, 2.0)
    """
    t = check_array(time, "time")
    if t.ndim != 1 or not 1 <= t.size <= MAX_SAMPLES:
        raise ValueError(
            f"Expected `time` of shape (N,) with 1 <= N <= {MAX_SAMPLES}, got {t.shape}."
        )
    check_increasing(t)
    step = np.diff(t)
    level = check_array(noise_std, "noise_std")
    if level.ndim > 1 or np.any(level < 0):
        raise ValueError(f"Expected `noise_std` non-negative, scalar or (n,), got {level!r}.")
    tau = check_positive(correlation_time, "correlation_time", allow_zero=True)
    check_rng(rng)
    columns = level.reshape(-1)
    e = rng.normal(size=(t.size, columns.size))
    if tau > 0:
        with np.errstate(under="ignore", over="ignore"):
            rho = np.exp(-step / tau)
        a = np.concatenate([[0.0], rho])[:, None] * np.ones(columns.size)
        b = e * np.sqrt(np.concatenate([[1.0], -np.expm1(-2.0 * step / tau)]))[:, None]
        shift = 1
        while shift < t.size:
            with np.errstate(under="ignore"):
                b[shift:] = a[shift:] * b[:-shift] + b[shift:]
                a[shift:] = a[shift:] * a[:-shift]
            shift *= 2
        e = b
    with np.errstate(over="ignore"):
        out = columns * e
    if not np.all(np.isfinite(out)):
        raise ValueError("Expected `noise_std` to give noise within the float range.")
    return out if level.ndim == 1 else out[:, 0]
