"""The model-adequacy diagnostic of every sweep fit: the residuals' lag-1 autocorrelation and the
independent samples they are worth, with a warning where the white-noise covariance would
understate the spread.

Checked against residuals computed here from columns built without gravdir's design code, on
every path that fits a sweep (single, batch, general, accumulator).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gravdir
from gravdir.errors import GravdirWarning

RATE = 100.0


def _sweep(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A forward and backward sweep over ±1.2 rad, slowing to a stop at each end."""
    half = n // 2
    s = np.linspace(0.0, 1.0, half)
    q_fwd = -1.2 + 2.4 * (s - np.sin(2 * np.pi * s) / (2 * np.pi))
    v_fwd = 2.4 * (1 - np.cos(2 * np.pi * s)) * RATE / (half - 1)
    return np.concatenate([q_fwd, q_fwd[::-1]]), np.concatenate([v_fwd, -v_fwd[::-1]])


def _ar1(rng: np.random.Generator, shape: tuple[int, ...], rho: float) -> np.ndarray:
    w = rng.normal(0, 0.05, shape)
    e = np.empty(shape)
    e[..., 0] = w[..., 0] / np.sqrt(1 - rho**2)
    for t in range(1, shape[-1]):
        e[..., t] = rho * e[..., t - 1] + w[..., t]
    return e


def _lag1(q: np.ndarray, v: np.ndarray, tau: np.ndarray, min_speed: float) -> tuple[float, int]:
    """The lag-1 autocorrelation of the least-squares residuals over the samples at least
    `min_speed` fast, the others counting as zero (no pair spans them), and their number."""
    used = np.abs(v) >= min_speed
    x = np.stack([np.ones_like(q), np.sin(q), np.cos(q), np.sign(v), v], axis=1)
    beta = np.linalg.lstsq(x[used], tau[used], rcond=None)[0]
    e = np.where(used, tau - x @ beta, 0.0)
    return float(e[1:] @ e[:-1] / (e @ e)), int(used.sum())


@pytest.mark.parametrize("rho", [0.0, 0.8])
def test_every_path_reports_the_lag1_autocorrelation_of_its_residuals(rho: float) -> None:
    rng = np.random.default_rng(21 + int(10 * rho))
    q, v = _sweep(2000)
    tau = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v) + 0.5 * v + _ar1(rng, (3, q.size), rho)
    min_speed = 0.1 * np.abs(v).max()  # fit_sweep's default mask: the slow ends are left out
    want = [_lag1(q, v, t, min_speed) for t in tau]
    options = dict(velocity=v, friction="coulomb-viscous")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GravdirWarning)
        batch = gravdir.fit_sweep(np.broadcast_to(q, tau.shape), torque=tau, **options)
        singles = [gravdir.fit_sweep(q, torque=t, **options) for t in tau]
        general = gravdir.fit_sweep(q.tolist(), torque=tau[0].tolist(), **options)
        acc = gravdir.SweepAccumulator(min_speed=min_speed, friction="coulomb-viscous")
        for i, size in enumerate([1, 7, 500, 1000, 492]):
            start = sum([1, 7, 500, 1000, 492][:i])
            acc.add(q[start : start + size], velocity=v[start : start + size],
                    torque=tau[0, start : start + size])  # fmt: skip
        streamed = acc.fit()
    r = np.array([w[0] for w in want])
    np.testing.assert_allclose(batch.residual_lag1, r, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose([s.residual_lag1 for s in singles], r, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(general.residual_lag1, r[0], rtol=1e-9)
    np.testing.assert_allclose(streamed.residual_lag1, r[0], rtol=1e-9)
    n_used = want[0][1]
    assert int(batch.n_used[0]) == n_used < q.size
    tau_int = np.maximum((1 + r) / (1 - r), 1.0)
    np.testing.assert_allclose(batch.effective_samples, batch.n_used / tau_int, rtol=1e-9)
    if rho == 0.0:
        # White noise: the estimate's spread is 1/sqrt(n); nearly every sample counts.
        assert np.all(np.abs(r) < 4 / np.sqrt(n_used))
        assert np.all(batch.effective_samples > 0.85 * batch.n_used)
    else:
        assert np.all(np.abs(r - rho) < 0.05)
        assert np.all(batch.effective_samples < 0.2 * batch.n_used)


def test_correlated_residuals_warn_under_the_white_form_only() -> None:
    rng = np.random.default_rng(5)
    q, v = _sweep(2000)
    clean = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v) + 0.5 * v
    tau = clean + _ar1(rng, (2, q.size), 0.8) * np.array([[0.1], [1.0]])
    options = dict(velocity=v, friction="coulomb-viscous")
    with pytest.warns(GravdirWarning, match=r"sweep \(1,\).*covariance='hac'"):
        gravdir.fit_sweep(np.broadcast_to(q, tau.shape), torque=tau, **options)
    with pytest.warns(GravdirWarning, match="lag-1 autocorrelation 0.8"):
        gravdir.fit_sweep(q, torque=tau[1], **options)
    acc = gravdir.SweepAccumulator(min_speed=0.05, friction="coulomb-viscous")
    acc.add(q, velocity=v, torque=tau[1])
    with pytest.warns(GravdirWarning, match="accumulator with covariance='hac'"):
        acc.fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", GravdirWarning)
        hac = gravdir.SweepAccumulator(
            min_speed=0.05, friction="coulomb-viscous", covariance="hac", sample_rate=RATE
        )
        hac.add(q, velocity=v, torque=tau[1])
        hac.fit()
        gravdir.fit_sweep(q, torque=tau[1], covariance="hac", sample_rate=RATE, **options)
        white = gravdir.fit_sweep(q, torque=clean + rng.normal(0, 0.05, q.size), **options)
        assert abs(float(white.residual_lag1)) < 0.2
        # A noise-free sweep leaves rounding: no correlation to report.
        exact = gravdir.fit_sweep(
            np.broadcast_to(q, (2, q.size)), torque=np.stack([clean, 2 * clean]), **options
        )
        np.testing.assert_array_equal(exact.residual_lag1, 0.0)
        np.testing.assert_array_equal(exact.effective_samples, exact.n_used)


def test_the_accumulator_keeps_its_lag1_products_through_units_and_merges() -> None:
    rng = np.random.default_rng(8)
    q, v = _sweep(1200)
    tau = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v) + 0.5 * v + _ar1(rng, (q.size,), 0.6)
    options = dict(min_speed=0.05, friction="coulomb-viscous")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GravdirWarning)
        want = gravdir.fit_sweep(q, velocity=v, torque=tau, **options)
        # The torque unit changes half way through (2^120 is beyond fit_sweep's unit range).
        acc = gravdir.SweepAccumulator(**options)
        acc.add(q[:600], velocity=v[:600], torque=tau[:600] * 2.0**120)
        acc.add(q[600:], velocity=v[600:], torque=tau[600:] * 2.0**121)
        mixed = acc.fit()
        ref = gravdir.fit_sweep(
            q, velocity=v, torque=np.concatenate([tau[:600] * 2.0**120, tau[600:] * 2.0**121]),
            **options,
        )  # fmt: skip
        a, b = gravdir.SweepAccumulator(**options), gravdir.SweepAccumulator(**options)
        a.add(q[:600], velocity=v[:600], torque=tau[:600])
        b.add(q[600:], velocity=v[600:], torque=tau[600:])
        merged = (a + b).fit()
    np.testing.assert_allclose(mixed.residual_lag1, ref.residual_lag1, rtol=1e-9)
    assert abs(float(ref.residual_lag1) - float(want.residual_lag1)) > 1e-3
    # `a + b` counts no pair across the join: one of the n_used - 1 pairs is missing.
    e = tau - want.coefficients @ np.stack([np.ones_like(q), np.sin(q), np.cos(q), np.sign(v), v])
    e = np.where(np.abs(v) >= 0.05, e, 0.0)
    np.testing.assert_allclose(
        float(merged.residual_lag1), float(want.residual_lag1) - e[599] * e[600] / (e @ e),
        rtol=1e-9,
    )  # fmt: skip
