"""The Bartlett long-run covariance (gravdir._hac) against its definition as a sum over lags."""

from __future__ import annotations

import numpy as np
import pytest

from gravdir._hac import FittedScoreSums, WindowSums, autocorrelation_time, bartlett_lags


def _by_lags(g: np.ndarray, lags: int) -> np.ndarray:
    """sum_{|l| <= L} (1 - |l| / (L + 1)) sum_t g_t g_{t+l}^T, term by term."""
    n = g.shape[0]
    out = g.T @ g
    for lag in range(1, min(lags, n - 1) + 1):
        gamma = g[: n - lag].T @ g[lag:]
        out = out + (1.0 - lag / (lags + 1)) * (gamma + gamma.T)
    return out


@pytest.mark.parametrize(("n", "size", "lags"), [(50, 3, 0), (50, 3, 4), (37, 2, 10), (5, 2, 9)])
def test_the_window_sums_give_the_lag_sum_in_any_chunking(n, size, lags):
    rng = np.random.default_rng([n, size, lags])
    g = rng.normal(size=(n, size)) + 0.3  # a mean: the window sums must not lose it
    want = _by_lags(g, lags)
    none = np.zeros((1, 1))  # one fitted column, no information: the meat alone
    for pieces in (1, 3, n):
        sums = FittedScoreSums(none, none, size, lags)
        for part in np.array_split(g, pieces):
            sums.add(part, np.zeros((part.shape[0], size, 1)), np.zeros((part.shape[0], size, 1)))
        meat = sums.result()[0] / (lags + 1)
        np.testing.assert_allclose(meat, want, rtol=0, atol=1e-12 * np.abs(want).max())


def test_every_window_that_overlaps_the_series_is_summed():
    sums = WindowSums(1, 2)
    inside = sums.add(np.array([[1.0], [2.0], [4.0], [8.0]]))
    np.testing.assert_array_equal(inside[:, 0], [1.0, 3.0, 7.0, 14.0])
    np.testing.assert_array_equal(sums.tail()[:, 0], [12.0, 8.0])


def test_the_lags_follow_the_bandwidth_in_seconds():
    assert bartlett_lags(1.0, 100.0) == 99  # weights reach zero at 100 samples, 1 s
    assert bartlett_lags(0.0, 100.0) == 0  # the white-noise (heteroskedasticity-consistent) form
    assert bartlett_lags(0.004, 1000.0) == 3
    with pytest.raises(ValueError, match="`bandwidth`"):
        bartlett_lags(-1.0, 100.0)


def test_the_autocorrelation_time_of_ar1_series():
    """An AR(1) series with coefficient rho has lag-1 autocorrelation rho and integrated time
    (1 + rho) / (1 - rho); samples outside `used` count as zero, not as data."""
    rng = np.random.default_rng(5)
    n = 40_000
    series = np.zeros((n, 3))
    for j, rho in enumerate((0.0, 0.5, 0.9)):
        eps = rng.normal(size=n)
        for t in range(1, n):
            series[t, j] = rho * series[t - 1, j] + eps[t]
    used = np.ones((n, 3), dtype=bool)
    lag1, tau = autocorrelation_time(series, used)
    np.testing.assert_allclose(lag1, [0.0, 0.5, 0.9], atol=0.02)
    np.testing.assert_allclose(tau, [1.0, 3.0, 19.0], rtol=0.3)  # Sokal window: ~10% noise
    half = used.copy()
    half[n // 2 :] = False
    lag1_half, _ = autocorrelation_time(np.where(half, series, 1e6), half)
    np.testing.assert_allclose(lag1_half, [0.0, 0.5, 0.9], atol=0.03)
