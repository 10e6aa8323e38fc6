"""The batched fast path of fit_sweep equals the general path entry by entry, and hands every
unusual batch to it, which decides (and refuses) as before."""

from __future__ import annotations

import numpy as np
import pytest

from gravdir import fit_sweep
from gravdir.sweep import _fast


def sweeps(rng, m=12, n=400, single=False):
    """`m` forward/backward sweeps of `n` samples: a cosine-shaped stroke whose speed rises from
    zero (the slow ends fall under the speed mask), or constant speeds of ±0.3 (`single`)."""
    half = n // 2
    s = np.linspace(0.0, 1.0, half)
    centre = rng.uniform(-2.0, 2.0, (m, 1))
    arc = rng.uniform(1.0, 2.5, (m, 1))
    if single:
        fwd, speed = centre + arc * (s - 0.5), np.full((m, half), 0.3)
    else:
        fwd = centre - 0.5 * arc * np.cos(np.pi * s)
        speed = 0.5 * np.pi * arc * np.sin(np.pi * s)
    q = np.concatenate([fwd, fwd[:, ::-1]], axis=1)
    v = np.concatenate([speed, -speed[:, ::-1]], axis=1)
    amp, phase = rng.uniform(2.0, 40.0, (m, 1)), rng.uniform(-np.pi, np.pi, (m, 1))
    torque = (
        rng.uniform(-0.1, 0.1, (m, 1)) * amp
        + amp * np.sin(q + phase)
        + rng.uniform(0.02, 0.1, (m, 1)) * amp * np.sign(v)
        + rng.uniform(0.0, 0.05, (m, 1)) * amp * v
        + rng.normal(0.0, 0.005, q.shape) * amp
    )
    return q, torque, v


def general(q, torque, v, **kwargs):
    """The general path: lists are not ndarrays, so no fast path is tried."""
    return fit_sweep(q.tolist(), velocity=v.tolist(), torque=torque.tolist(), **kwargs)


@pytest.fixture
def taken(monkeypatch):
    """What the batched fast path returned, call by call (None: handed to the general path)."""
    returned = []
    original = _fast.fast_batch

    def spy(*args):
        fit = original(*args)
        returned.append(fit)
        return fit

    monkeypatch.setattr(_fast, "fast_batch", spy)
    return returned


def assert_entries_close(fast, slow):
    """Field by field, to the rounding of normal equations formed in another order: the RSS of a
    batch is expanded from them, good to about eps * (y . y) / RSS (gravdir.sweep._solve)."""
    assert fast.column_names == slow.column_names and fast.batch_shape == slow.batch_shape
    np.testing.assert_allclose(fast.coefficients, slow.coefficients, rtol=1e-10, atol=1e-12)
    sd = np.sqrt(np.diagonal(slow.covariance, axis1=-2, axis2=-1))
    scale = sd[..., :, None] * sd[..., None, :]
    assert np.all(np.abs(fast.covariance - slow.covariance) <= 1e-9 * scale)
    np.testing.assert_allclose(fast.residual_rms, slow.residual_rms, rtol=1e-9)
    for name in ("n_used", "single_speed", "arc", "converged", "n_iter"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.fingerprint == slow.fingerprint
    for i in range(len(fast)):
        assert fast[i].fingerprint == slow[i].fingerprint


@pytest.mark.parametrize(
    "kwargs, single",
    [
        ({}, False),
        ({}, True),
        ({"friction": "coulomb"}, False),
        ({"friction": "none"}, False),
        ({"friction": "coulomb-viscous"}, False),
        ({"min_speed": 0.2}, False),
        ({"torque_sign": -1}, False),
        ({"torque_sign": -1}, True),
        ({"min_arc": 0.1, "single_speed_rtol": 1e-3}, False),
    ],
)
def test_batched_fast_path_equals_the_general_path(kwargs, single, taken):
    rng = np.random.default_rng(11)
    q, torque, v = sweeps(rng, single=single)
    fast = fit_sweep(q, velocity=v, torque=torque, **kwargs)
    assert len(taken) == 1 and taken[0] is fast
    slow = general(q, torque, v, **kwargs)
    assert_entries_close(fast, slow)
    if not single and "min_speed" not in kwargs:
        # The cosine strokes start and end slowly: the speed mask left samples out.
        assert np.all(fast.n_used < q.shape[1])
    assert not fast.coefficients.flags.writeable and not fast.covariance.flags.writeable


def test_each_entry_is_the_fit_of_its_sweep_alone(taken):
    rng = np.random.default_rng(12)
    q, torque, v = sweeps(rng, m=5)
    fits = fit_sweep(q, velocity=v, torque=torque)
    assert taken[0] is fits
    for i in range(5):
        one = fit_sweep(q[i], velocity=v[i], torque=torque[i])
        np.testing.assert_allclose(fits[i].coefficients, one.coefficients, rtol=1e-10)
        assert fits[i].fingerprint == one.fingerprint and fits[i].n_used == one.n_used


def test_strided_inputs_and_a_strict_error_state_give_the_same_fit(taken):
    rng = np.random.default_rng(13)
    q, torque, v = sweeps(rng, n=800)
    default = fit_sweep(q[:, ::2], velocity=v[:, ::2], torque=torque[:, ::2])
    with np.errstate(all="raise"):
        strict = fit_sweep(q[:, ::2], velocity=v[:, ::2], torque=torque[:, ::2])
    assert taken[0] is default and taken[1] is strict
    assert strict == default
    assert_entries_close(default, general(q[:, ::2], torque[:, ::2], v[:, ::2]))


def spoil(kind, q, torque, v):
    """One sweep (index 3) of the batch made unusual in one way."""
    q, torque, v = q.copy(), torque.copy(), v.copy()
    if kind == "nan":
        torque[3, 17] = np.nan
    elif kind == "mixed speeds":
        v[3] = np.where(v[3] > 0, 0.3, -0.3)
    elif kind == "noise-free":
        torque[3] = 1.0 + 4.0 * np.sin(q[3] + 0.2) + 0.5 * np.sign(v[3]) + 0.1 * v[3]
    elif kind == "huge torque":
        torque[3] *= 2.0**120
    elif kind == "slow":
        v[3] *= 2.0**-110
    return q, torque, v


@pytest.mark.parametrize("kind", ["nan", "mixed speeds", "noise-free", "huge torque", "slow"])
def test_unusual_batches_are_fitted_by_the_general_path(kind, taken):
    rng = np.random.default_rng(14)
    q, torque, v = spoil(kind, *sweeps(rng))
    fit = fit_sweep(q, velocity=v, torque=torque, nan_policy="omit")
    assert taken == [None]
    assert_entries_close(fit, general(q, torque, v, nan_policy="omit"))
    if kind == "mixed speeds":
        # The viscous coefficient is held at zero where the speed is single.
        assert fit.single_speed[3] and not fit.single_speed[2]
        assert fit.viscous[3] == 0.0 and fit.covariance[3, 4, 4] == 0.0
    if kind == "nan":
        alone = fit_sweep(
            np.delete(q[3], 17), velocity=np.delete(v[3], 17), torque=np.delete(torque[3], 17)
        )
        assert fit[3].n_used == alone.n_used and fit[3].fingerprint == alone.fingerprint


@pytest.mark.parametrize(
    "change, error",
    [
        (lambda q, t, v: (np.degrees(q), t, v), "degrees"),
        (lambda q, t, v: (q, np.where(np.arange(q.shape[1]) == 5, np.nan, t), v), "nan_policy"),
        (lambda q, t, v: (q, t, np.abs(v)), "both directions"),
        (lambda q, t, v: (q * 0.05, t, v), "span at least"),
        (lambda q, t, v: (q, t, v), "single speed"),
    ],
)
def test_refused_batches_get_the_general_paths_error(change, error, taken):
    rng = np.random.default_rng(15)
    q, torque, v = change(*sweeps(rng, single=error == "single speed"))
    kwargs = {"friction": "coulomb-viscous"} if error == "single speed" else {}
    with pytest.raises(ValueError, match=error) as fast:
        fit_sweep(q, velocity=v, torque=torque, **kwargs)
    assert taken == [None]
    with pytest.raises(ValueError) as slow:
        general(q, torque, v, **kwargs)
    assert type(fast.value) is type(slow.value) and str(fast.value) == str(slow.value)


def test_an_ill_conditioned_sweep_sends_the_batch_to_the_general_solve(taken):
    # A 0.15 rad arc: [1, sin q, cos q] are nearly collinear there, a condition bound far above
    # 1e4, which the general path solves by QR (docs/sweep.md, "Numerical method").
    rng = np.random.default_rng(16)
    q, torque, v = sweeps(rng)
    q[3] = q[3].mean() + 0.15 * (q[3] - q[3].min()) / np.ptp(q[3])
    fit = fit_sweep(q, velocity=v, torque=torque, min_arc=0.1)
    assert taken == [None]
    assert_entries_close(fit, general(q, torque, v, min_arc=0.1))
