"""One sweep of a joint, its torque and residual noise, and the Bartlett sandwich written out
from the double sums of its definition: shared by ``tests/test_sweep_hac.py`` and
``tests/test_accumulator_hac.py``."""

from __future__ import annotations

import numpy as np
import scipy.linalg

RATE = 100.0


def sweep(n: int, rate: float = RATE) -> tuple[np.ndarray, np.ndarray]:
    """A forward and backward sweep over ±1.2 rad at `rate` samples a second (Hz) whose speed
    varies by ±30%."""
    half = n // 2
    q = np.concatenate([np.linspace(-1.2, 1.2, half), np.linspace(1.2, -1.2, half)])
    speed = 2.4 / (half / rate) * (1 + 0.3 * np.sin(np.arange(2 * half) / 50.0))
    return q, np.concatenate([speed[:half], -speed[half:]])


def sweep_torque(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v) + 0.5 * v


def sandwich_definition(
    x: np.ndarray, e: np.ndarray, lags: int, lag1: float | None = None
) -> np.ndarray:
    """P T M Tᵀ P from the double sums, in unit-norm columns (the symmetric square roots depend
    on the columns' scale), scaled back: M = Σ_|l|≤L (1 - |l|/(L+1)) Σ_t g_t g_{t+l}ᵀ,
    T = V^½ E^-½ with V = Xᵀ S X, E = Xᵀ (K ∘ (I - H) S (I - H)) X, S_ts = r^|t-s| for the
    residuals' lag-1 correlation r clipped to [0, L / (L + 1)] (or `lag1` where given), K the
    kernel, H the hat matrix.
    """
    n, p = x.shape
    norms = np.linalg.norm(x, axis=0)
    x = x / norms
    inv = np.linalg.inv(x.T @ x)
    g = x * e[:, None]
    lag = np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
    k = np.clip(1.0 - lag / (lags + 1), 0, None)
    r = float(np.clip(e[1:] @ e[:-1] / (e @ e), 0.0, lags / (lags + 1)))
    r = r if lag1 is None else lag1
    s = r**lag
    rest = np.eye(n) - x @ inv @ x.T
    v = x.T @ s @ x
    expected = x.T @ (k * (rest @ s @ rest)) @ x
    t = np.real(scipy.linalg.sqrtm(v)) @ np.linalg.inv(np.real(scipy.linalg.sqrtm(expected)))
    return (inv @ t @ (g.T @ k @ g) @ t.T @ inv) / np.outer(norms, norms)


def ar1_noise(rng: np.random.Generator, shape: tuple[int, int], rho: float) -> np.ndarray:
    w = rng.normal(0, 0.05, shape)
    e = np.empty(shape)
    e[:, 0] = w[:, 0] / np.sqrt(1 - rho**2)
    for t in range(1, shape[1]):
        e[:, t] = rho * e[:, t - 1] + w[:, t]
    return e
