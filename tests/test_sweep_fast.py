"""The validated fast path of fit_sweep equals the general path, and hands every unusual call to
it; ill-conditioned sweeps are solved by QR to the accuracy of the exact least squares."""

from __future__ import annotations

import numpy as np
import pytest

from gravdir import fit_sweep
from gravdir.errors import InsufficientDataError
from gravdir.sweep import _fast


def sweep(rng, n=500, speeds=(0.3, 0.3)):
    half = n // 2
    q = np.concatenate([np.linspace(-1.0, 1.0, half), np.linspace(1.0, -1.0, n - half)]) + 0.4
    v = np.concatenate([np.full(half, speeds[0]), np.full(n - half, -speeds[1])])
    v = v * (1.0 + 0.2 * np.cos(3.0 * q))
    torque = 0.2 + 5.0 * np.sin(q + 0.7) + 0.3 * np.sign(v) + 0.1 * v + rng.normal(0, 0.02, n)
    return q, torque, v


def general(q, torque, v, **kwargs):
    """The general path: a list is not an ndarray, so the fast path is not tried."""
    return fit_sweep(list(q), velocity=list(v), torque=list(torque), **kwargs)


def assert_close(a, b, rms_rtol=1e-11):
    assert a.column_names == b.column_names
    np.testing.assert_allclose(a.coefficients, b.coefficients, rtol=1e-11, atol=1e-13)
    # Covariances relative to the product of the standard deviations (a correlation of 1e-9).
    sd = np.sqrt(np.diag(b.covariance))
    assert np.all(np.abs(a.covariance - b.covariance) <= 1e-9 * np.outer(sd, sd))
    np.testing.assert_allclose(a.residual_rms, b.residual_rms, rtol=rms_rtol)
    for name in ("n_used", "single_speed", "arc", "converged", "n_iter", "method", "fingerprint"):
        assert getattr(a, name) == getattr(b, name), name
    assert type(a.converged) is bool and type(a.n_iter) is int


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"friction": "coulomb"},
        {"friction": "none"},
        {"friction": "coulomb-viscous"},
        {"min_speed": 0.28},
        {"torque_sign": -1},
        {"min_arc": 0.1, "single_speed_rtol": 1e-3},
    ],
)
def test_fast_path_equals_the_general_path(kwargs, monkeypatch):
    rng = np.random.default_rng(1)
    q, torque, v = sweep(rng)
    calls = []
    original = _fast.fast_fit
    monkeypatch.setattr(_fast, "fast_fit", lambda *a: calls.append(1) or original(*a))
    fast = fit_sweep(q, velocity=v, torque=torque, **kwargs)
    assert (
        calls
        and original(
            q,
            torque,
            v,
            kwargs.get("min_speed"),
            kwargs.get("friction", "auto"),
            kwargs.get("min_arc", 0.5236),
            kwargs.get("single_speed_rtol", 1e-6),
            kwargs.get("torque_sign", 1),
        )
        is not None
    )
    assert_close(fast, general(q, torque, v, **kwargs))
    assert not fast.coefficients.flags.writeable and not fast.covariance.flags.writeable
    assert fast == fit_sweep(q, velocity=v, torque=torque, **kwargs)


def test_single_speed_and_nan_omission_agree_with_the_general_path():
    rng = np.random.default_rng(2)
    q, torque, v = sweep(rng)
    v_single = np.where(v > 0, 0.3, -0.3)
    fast = fit_sweep(q, velocity=v_single, torque=torque)
    assert fast.column_names == ("offset", "sin", "cos", "coulomb") and fast.single_speed
    assert_close(fast, general(q, torque, v_single))
    t_nan = torque.copy()
    t_nan[[3, 300]] = np.nan
    keep = ~np.isnan(t_nan)
    omitted = fit_sweep(q, velocity=v, torque=t_nan, nan_policy="omit")
    # NaN samples go to the general path, which leaves them out in place: the fit of the
    # remaining samples alone, whose residuals' lag-1 correlation pairs no samples across them.
    assert omitted == general(q, t_nan, v, nan_policy="omit")
    clean = fit_sweep(q[keep], velocity=v[keep], torque=t_nan[keep])
    assert_close(omitted, clean, rms_rtol=1e-9)
    assert omitted.residual_lag1 != clean.residual_lag1


@pytest.mark.parametrize(
    "change, error",
    [
        (lambda q, t, v: (np.degrees(q), t, v), "degrees"),
        (lambda q, t, v: (q, np.where(np.arange(q.size) == 5, np.nan, t), v), "nan_policy"),
        (lambda q, t, v: (q, t, np.abs(v)), "both directions"),
        (lambda q, t, v: (q * 0.1, t, v), "span at least"),
    ],
)
def test_unusual_calls_take_the_general_path_and_its_errors(change, error):
    rng = np.random.default_rng(3)
    q, torque, v = change(*sweep(rng))
    with pytest.raises(ValueError, match=error):
        fit_sweep(q, velocity=v, torque=torque)


def test_options_outside_the_fast_checks_are_refused_as_before():
    rng = np.random.default_rng(4)
    q, torque, v = sweep(rng)
    with pytest.raises(ValueError, match="`torque_sign`"):
        fit_sweep(q, velocity=v, torque=torque, torque_sign=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`friction`"):
        fit_sweep(q, velocity=v, torque=torque, friction="Coulomb")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`min_speed`"):
        fit_sweep(q, velocity=v, torque=torque, min_speed=-0.1)
    with pytest.raises(InsufficientDataError, match="min_speed"):
        fit_sweep(q, velocity=v, torque=torque, min_speed=10.0)


def test_extreme_torques_are_left_to_the_general_path_and_scaled_there():
    rng = np.random.default_rng(5)
    q, torque, v = sweep(rng)
    big = fit_sweep(q, velocity=v, torque=torque * 2.0**120)
    np.testing.assert_allclose(
        big.coefficients[:4],
        fit_sweep(q, velocity=v, torque=torque).coefficients[:4] * 2.0**120,
        rtol=1e-12,
    )


def refined_least_squares(x, y):
    """The least-squares solution with residual refinement in extended precision."""
    beta = np.linalg.lstsq(x, y, rcond=None)[0].astype(np.longdouble)
    xl, yl = x.astype(np.longdouble), y.astype(np.longdouble)
    for _ in range(4):
        beta = beta + np.linalg.lstsq(x, (yl - xl @ beta).astype(float), rcond=None)[0]
    return beta.astype(float)


def test_ill_conditioned_sweeps_are_solved_to_least_squares_accuracy():
    # 60 samples on a 1.3 rad arc with harmonics of orders 3 and 5: the normal equations have a
    # condition number near 1e8; the QR solve stays within a few 1e-11 of the exact solution.
    rng = np.random.default_rng(6)
    n = 60
    s = np.linspace(0.0, 1.0, n // 2)
    fwd = -0.6 + 1.3 * s
    q = np.concatenate([fwd, fwd[::-1]])
    v = np.concatenate([np.full(n // 2, 0.4), np.full(n // 2, -0.4)])
    cols = [np.ones(n), np.sin(q), np.cos(q), np.sign(v)]
    cols += [f(k * q) for k in (3.0, 5.0) for f in (np.sin, np.cos)]
    x = np.stack(cols, axis=-1)
    truth = np.array([0.4, -3.0, 2.0, 0.3, 0.2, -0.1, 0.15, 0.05])
    torque = x @ truth + rng.normal(0.0, 1e-3, n)
    fit = fit_sweep(q, velocity=v, torque=torque, friction="coulomb", harmonics=(3.0, 5.0))
    g = x.T @ x
    d = np.sqrt(np.diag(g))
    assert 8 * np.trace(np.linalg.inv(g / np.outer(d, d))) > 1e6
    exact = refined_least_squares(x, torque)
    assert np.all(np.abs(fit.coefficients - exact) <= 1e-10 * np.abs(exact))


@pytest.mark.parametrize("friction", ["auto", "coulomb", "none"])
def test_fast_general_batched_and_streamed_fits_agree_field_by_field(friction, monkeypatch):
    # One design and one solve serve every path: the fast path, the general path for one sweep,
    # an entry of a batch and the accumulator fed in chunks give the same fit.
    from gravdir import SweepAccumulator

    rng = np.random.default_rng(7)
    q, torque, v = sweep(rng)
    calls = []
    original = _fast.fast_fit
    monkeypatch.setattr(_fast, "fast_fit", lambda *a: calls.append(1) or original(*a))
    kwargs = {"min_speed": 0.05, "friction": friction}
    fast = fit_sweep(q, velocity=v, torque=torque, **kwargs)
    assert calls
    one = general(q, torque, v, **kwargs)
    rows = np.stack([q, q[::-1]]), np.stack([torque, torque[::-1]]), np.stack([v, -v[::-1]])
    batched = fit_sweep(rows[0], velocity=rows[2], torque=rows[1], **kwargs)[0]
    acc = SweepAccumulator(**kwargs)
    for i in range(0, q.size, 45):
        acc.add(q[i : i + 45], velocity=v[i : i + 45], torque=torque[i : i + 45])
    streamed = acc.fit()
    # A batch expands its RSS from the normal equations: good to about eps * (y.y) / RSS
    # relative (here ~1e-11), so its RMS is compared at 1e-9 (gravdir.sweep._solve).
    for other, rms_rtol in ((one, 1e-11), (batched, 1e-9), (streamed, 1e-11)):
        assert_close(fast, other, rms_rtol)
        for name in ("amplitude", "phase", "offset", "coulomb", "viscous"):
            np.testing.assert_allclose(getattr(fast, name), getattr(other, name), rtol=1e-11)


def test_every_path_refuses_undetermined_coefficients_with_one_error():
    # A harmonic order next to the gravity sinusoid's: the condition test and its message are
    # shared by the normal equations (fit_sweep, one sweep or a batch) and the streamed factor.
    from gravdir import SweepAccumulator

    rng = np.random.default_rng(8)
    q, torque, v = sweep(rng)
    kwargs = {"min_speed": 0.05, "harmonics": (1.0001,)}
    acc = SweepAccumulator(**kwargs)
    acc.add(q, velocity=v, torque=torque)
    messages = []
    for fit in (
        lambda: fit_sweep(q, velocity=v, torque=torque, **kwargs),
        lambda: fit_sweep(
            np.stack([q, q]), velocity=v, torque=np.stack([torque, torque]), **kwargs
        ),
        acc.fit,
    ):
        with pytest.raises(InsufficientDataError, match="condition number") as info:
            fit()
        messages.append(str(info.value).split("condition number")[0])
    assert len(set(messages)) == 1


def test_lapack_routines_are_resolved_once_from_scipy():
    from scipy.linalg import get_lapack_funcs

    from gravdir.sweep import _solve

    routine = _solve.lapack("posv")
    assert routine is _solve.lapack("posv")
    assert routine is get_lapack_funcs(("posv",), dtype=np.float64)[0]


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"harmonics": (2.0,)}, {"load_friction": "signed"}, {"load_friction": "abs"}],
)
def test_single_sweep_results_hold_only_read_only_arrays(kwargs):
    # One sweep's record is filled without the constructor's freezing, on every path.
    from dataclasses import fields

    from gravdir import SweepAccumulator

    rng = np.random.default_rng(9)
    q, torque, v = sweep(rng)
    fits = [fit_sweep(q, velocity=v, torque=torque, **kwargs), general(q, torque, v, **kwargs)]
    if kwargs.get("load_friction") != "abs":
        acc = SweepAccumulator(min_speed=0.05, **kwargs)
        acc.add(q, velocity=v, torque=torque)
        fits.append(acc.fit())
    for fit in fits:
        for field in fields(fit):
            value = getattr(fit, field.name)
            assert not isinstance(value, np.ndarray) or not value.flags.writeable, field.name
