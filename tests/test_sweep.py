"""Tests of gravdir.sweep: exactness, batching, zeros, uncertainty, the result contract, the
Gauss-Newton load column and bad input."""

from __future__ import annotations

import dataclasses
import json
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravdir._results import Result
from gravdir.errors import ConvergenceWarning, GravdirWarning, InsufficientDataError
from gravdir.sweep import (
    SweepFit,
    SweepZeros,
    amplitude_phase_bound,
    fit_sweep,
    fit_sweep_common_mode,
    joint_acceleration,
    joint_velocity,
    wrap_angle,
)


def trapezoid_sweep(
    start: float, stop: float, speed: float, rate: float = 200.0, ramp: float = 0.3
) -> tuple[np.ndarray, np.ndarray]:
    """Forward start->stop then back, trapezoidal velocity with linear ramps of `ramp` seconds."""
    span = stop - start
    cruise = span / speed - ramp  # time at full speed such that the distance is span
    assert cruise > 0
    t_pass = 2 * ramp + cruise
    t = np.arange(0.0, t_pass, 1.0 / rate)
    v = speed * np.clip(np.minimum(t / ramp, (t_pass - t) / ramp), 0.0, 1.0)
    # Integrate the piecewise-linear velocity exactly.
    q = np.where(
        t < ramp,
        0.5 * speed * t**2 / ramp,
        np.where(
            t < ramp + cruise,
            0.5 * speed * ramp + speed * (t - ramp),
            span - 0.5 * speed * (t_pass - t) ** 2 / ramp,
        ),
    )
    q_all = np.concatenate([start + q, stop - q])
    v_all = np.concatenate([v, -v])
    return q_all, v_all


def model_torque(q, v, amp, phase, offset=0.0, coulomb=0.0, viscous=0.0, load=0.0):
    tg = amp * np.sin(q + phase)
    return offset + tg + (coulomb + load * np.abs(tg)) * np.sign(v) + viscous * v


angles = st.floats(-np.pi, np.pi)


@given(
    amp=st.floats(0.5, 50.0),
    phase=angles,
    offset=st.floats(-3, 3),
    coulomb=st.floats(0.0, 2.0),
    viscous=st.floats(0.0, 5.0),
    arc_deg=st.floats(60.0, 360.0),
    centre=angles,
    speed=st.floats(0.05, 1.0),
)
def test_exact_on_noise_free_sweeps(amp, phase, offset, coulomb, viscous, arc_deg, centre, speed):
    arc = np.radians(arc_deg)
    q, v = trapezoid_sweep(centre - arc / 2, centre + arc / 2, speed, ramp=0.2 * arc / speed)
    torque = model_torque(q, v, amp, phase, offset, coulomb, viscous)
    fit = fit_sweep(q, velocity=v, torque=torque, min_speed=0.05 * speed)
    assert abs(fit.amplitude - amp) <= 1e-10 * amp
    assert abs(wrap_angle(fit.phase - phase)) <= 1e-10
    assert fit.offset == pytest.approx(offset, abs=1e-9 * amp)
    assert fit.coulomb == pytest.approx(coulomb, abs=1e-8 * amp)
    assert fit.viscous == pytest.approx(viscous, abs=1e-7 * amp)
    assert not fit.single_speed
    assert fit.residual_rms <= 1e-10 * amp


@given(
    amp=st.floats(0.5, 50.0),
    phase=angles,
    load=st.floats(0.0, 0.1),
    coulomb=st.floats(0.0, 2.0),
    arc_deg=st.floats(60.0, 360.0),
    centre=angles,
)
def test_load_dependent_friction_abs_is_exact_across_zeros(
    amp, phase, load, coulomb, arc_deg, centre
):
    arc = np.radians(arc_deg)
    q, v = trapezoid_sweep(centre - arc / 2, centre + arc / 2, 0.3, ramp=0.1)
    torque = model_torque(q, v, amp, phase, 0.5, coulomb, 0.7, load)
    fit = fit_sweep(q, velocity=v, torque=torque, load_friction="abs")
    assert abs(fit.amplitude - amp) <= 1e-10 * amp
    assert abs(wrap_angle(fit.phase - phase)) <= 1e-10
    assert fit.load_coefficient == pytest.approx(load, abs=1e-8)
    assert fit.coulomb == pytest.approx(coulomb, abs=1e-8 * amp)


def test_load_dependent_friction_signed_exact_without_zero_crossing():
    # Gravity torque 10 sin(q + 0.2) keeps its sign on q in [0.3, 2.2].
    q, v = trapezoid_sweep(0.3, 2.2, 0.4, ramp=0.1)
    torque = model_torque(q, v, 10.0, 0.2, 0.1, 0.5, 0.3, load=0.04)
    fit = fit_sweep(q, velocity=v, torque=torque, load_friction="signed")
    assert fit.amplitude == pytest.approx(10.0, rel=1e-10)
    assert fit.load_coefficient == pytest.approx(0.04, rel=1e-8)
    # and the same data on the negative side of gravity
    fit_neg = fit_sweep(
        q,
        velocity=v,
        torque=model_torque(q, v, 10.0, 0.2 + np.pi, 0, 0.5, 0.3, 0.04),
        load_friction="signed",
    )
    assert fit_neg.load_coefficient == pytest.approx(0.04, rel=1e-8)


def test_ignoring_load_friction_biases_the_fit_that_models_it_does_not():
    q, v = trapezoid_sweep(-2.0, 2.0, 0.4, ramp=0.1)
    torque = model_torque(q, v, 10.0, 0.2, 0.1, 0.5, 0.3, load=0.05)
    plain = fit_sweep(q, velocity=v, torque=torque)
    modelled = fit_sweep(q, velocity=v, torque=torque, load_friction="abs")
    assert plain.residual_rms > 1e-3
    assert modelled.residual_rms < 1e-10


def test_harmonics_are_fitted_exactly():
    q, v = trapezoid_sweep(-np.pi, np.pi, 0.5, ramp=0.1)
    torque = model_torque(q, v, 3.0, -1.0, 0.2, 0.4) + 0.05 * np.sin(30 * q + 0.3)
    fit = fit_sweep(q, velocity=v, torque=torque, harmonics=[30])
    assert fit.amplitude == pytest.approx(3.0, rel=1e-10)
    assert fit.harmonic_coefficients.shape == (1, 2)
    np.testing.assert_allclose(
        fit.harmonic_coefficients[0], [0.05 * np.cos(0.3), 0.05 * np.sin(0.3)], atol=1e-11
    )
    unmodelled = fit_sweep(q, velocity=v, torque=torque)
    assert unmodelled.residual_rms > 0.01


def test_single_speed_fits_one_friction_term_and_says_so():
    q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 300)])
    v = np.concatenate([np.full(300, 0.2), np.full(300, -0.2)])
    torque = model_torque(q, v, 5.0, 0.4, 0.3, 0.8, 2.0)  # viscous 2.0 at 0.2 rad/s = 0.4
    fit = fit_sweep(q, velocity=v, torque=torque)
    assert fit.single_speed
    assert fit.coulomb == pytest.approx(0.8 + 2.0 * 0.2, rel=1e-10)
    assert fit.viscous == 0.0
    assert fit.column_names == ("offset", "sin", "cos", "coulomb")
    assert fit.covariance.shape == (4, 4)
    with pytest.raises(InsufficientDataError, match="single speed"):
        fit_sweep(q, velocity=v, torque=torque, friction="coulomb-viscous")


def test_mixed_batch_pins_viscous_at_zero_only_where_speeds_are_single():
    q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 300)])
    v1 = np.concatenate([np.full(300, 0.2), np.full(300, -0.2)])
    v2 = np.concatenate([np.linspace(0.1, 0.3, 300), np.full(300, -0.2)])
    v = np.stack([v1, v2])
    torque = model_torque(q, v, 5.0, 0.4, 0.3, 0.8, 2.0)
    fit = fit_sweep(np.stack([q, q]), velocity=v, torque=torque)
    np.testing.assert_array_equal(fit.single_speed, [True, False])
    iv = fit.column_names.index("viscous")
    assert fit.viscous[0] == 0.0
    assert np.all(fit.covariance[0, iv] == 0.0) and np.all(fit.covariance[0, :, iv] == 0.0)
    assert fit.coulomb[0] == pytest.approx(0.8 + 2.0 * 0.2, rel=1e-10)
    assert fit.viscous[1] == pytest.approx(2.0, rel=1e-9)
    assert fit.coulomb[1] == pytest.approx(0.8, rel=1e-9)
    np.testing.assert_allclose(fit.amplitude, 5.0, rtol=1e-10)


def test_one_speed_per_direction_is_still_a_single_friction_term():
    # v = -0.1 + 0.3 sgn(v): offset, Coulomb and viscous are not separable, gravity is.
    q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 150)])
    v = np.concatenate([np.full(300, 0.2), np.full(150, -0.4)])
    torque = model_torque(q, v, 5.0, 0.4, 0.3, 0.8, 2.0)
    fit = fit_sweep(q, velocity=v, torque=torque)
    assert fit.single_speed
    assert fit.amplitude == pytest.approx(5.0, rel=1e-10)
    assert fit.coulomb == pytest.approx(0.8 + 2.0 * 0.3, rel=1e-9)
    assert fit.offset == pytest.approx(0.3 - 2.0 * 0.1, rel=1e-9)


def test_two_speeds_in_one_direction_separate_coulomb_and_viscous():
    q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, 0, 100), np.linspace(0, -1, 50)])
    v = np.concatenate([np.full(300, 0.2), np.full(100, -0.2), np.full(50, -0.4)])
    torque = model_torque(q, v, 5.0, 0.4, 0.3, 0.8, 2.0)
    fit = fit_sweep(q, velocity=v, torque=torque)
    assert not fit.single_speed
    assert fit.coulomb == pytest.approx(0.8, rel=1e-9)
    assert fit.viscous == pytest.approx(2.0, rel=1e-9)
    assert fit.offset == pytest.approx(0.3, rel=1e-9)


def test_batched_call_equals_loop_of_single_calls():
    rng = np.random.default_rng(1)
    batch = []
    for _ in range(6):
        arc = rng.uniform(np.radians(60), 2 * np.pi)
        c = rng.uniform(-np.pi, np.pi)
        q, v = trapezoid_sweep(c - arc / 2, c + arc / 2, rng.uniform(0.1, 0.5), ramp=0.15)
        # Common length: resample the index so every sweep has 400 samples.
        idx = np.linspace(0, q.size - 1, 400).astype(int)
        q, v = q[idx], v[idx]
        torque = model_torque(q, v, rng.uniform(1, 10), rng.uniform(-3, 3), 0.2, 0.5, 0.3)
        torque = torque + rng.normal(0, 0.05, q.size)
        batch.append((q, torque, v))
    qb, tb, vb = (np.stack(a).reshape(2, 3, -1) for a in zip(*batch, strict=True))
    fb = fit_sweep(qb, velocity=vb, torque=tb, min_speed=0.05)
    for i, (q, torque, v) in enumerate(batch):
        f = fit_sweep(q, velocity=v, torque=torque, min_speed=0.05)
        j = np.unravel_index(i, (2, 3))
        for name in ("amplitude", "phase", "offset", "coulomb", "viscous", "residual_rms"):
            assert getattr(fb, name)[j] == pytest.approx(
                float(getattr(f, name)), rel=1e-9, abs=1e-12
            )
        assert fb.n_used[j] == f.n_used
        np.testing.assert_allclose(fb.covariance[j], f.covariance, rtol=1e-8, atol=1e-15)


def test_large_batch_residuals_and_covariance_match_an_explicit_solve():
    # 300 sweeps of 500 samples span several of the blocks the design matrix is built in, and
    # noisy data take the normal-equation expansion of the residual sum of squares.
    rng = np.random.default_rng(5)
    n_sweeps, half = 300, 250
    centre = rng.uniform(-np.pi, np.pi, (n_sweeps, 1))
    fwd = np.linspace(-1.0, 1.0, half)
    q = centre + np.concatenate([fwd, fwd[::-1]])
    v = np.concatenate([np.full(half, 0.3), np.full(half, -0.3)]) * np.ones((n_sweeps, 1))
    amp = rng.uniform(1, 10, (n_sweeps, 1))
    torque = model_torque(q, v, amp, rng.uniform(-np.pi, np.pi, (n_sweeps, 1)), 0.2, 0.5)
    torque = torque + rng.normal(0, 0.01, q.shape) * amp
    fit = fit_sweep(q, velocity=v, torque=torque)
    assert fit.column_names == ("offset", "sin", "cos", "coulomb")
    for i in (0, 63, 64, 150, 299):
        x = np.column_stack([np.ones(q.shape[1]), np.sin(q[i]), np.cos(q[i]), np.sign(v[i])])
        beta, rss, _, _ = np.linalg.lstsq(x, torque[i], rcond=None)
        np.testing.assert_allclose(fit.coefficients[i], beta, rtol=1e-9, atol=1e-12)
        assert fit.residual_rms[i] == pytest.approx(np.sqrt(rss[0] / q.shape[1]), rel=1e-9)
        cov = rss[0] / (q.shape[1] - 4) * np.linalg.inv(x.T @ x)
        np.testing.assert_allclose(fit.covariance[i], cov, rtol=1e-8, atol=1e-15)
    # Noise-free sweeps in the same batch keep their residuals at rounding level.
    clean = model_torque(q, v, amp, 0.3, 0.2, 0.5)
    torque_mixed = np.where(np.arange(n_sweeps)[:, None] % 2 == 0, clean, torque)
    mixed = fit_sweep(q, velocity=v, torque=torque_mixed)
    assert np.all(mixed.residual_rms[::2] <= 1e-10 * amp[::2, 0])
    assert np.all(mixed.residual_rms[1::2] > 1e-3 * amp[1::2, 0])


@given(amp=st.floats(0.1, 20.0), phase=angles)
def test_zeros_are_true_zeros_with_right_stability(amp, phase):
    q, v = trapezoid_sweep(-2.0, 1.0, 0.3, ramp=0.1)
    fit = fit_sweep(q, velocity=v, torque=model_torque(q, v, amp, phase, 0.1, 0.2))
    z = fit.zeros()
    for q0, slope_sign in ((z.unstable, -1.0), (z.stable, 1.0)):
        assert -np.pi < q0 <= np.pi
        assert abs(amp * np.sin(q0 + phase)) <= 1e-9 * amp  # a zero of the true torque
        h = 1e-4
        slope = (amp * np.sin(q0 + h + phase) - amp * np.sin(q0 - h + phase)) / (2 * h)
        assert np.sign(slope) == slope_sign
    assert abs(wrap_angle(z.unstable - z.stable)) == pytest.approx(np.pi)


def test_zero_amplitude_gives_infinite_phase_std_not_nan():
    q, v = trapezoid_sweep(-2.0, 2.0, 0.3, ramp=0.1)
    torque = 0.5 + 0.2 * np.sign(v)
    fit = fit_sweep(q, velocity=v, torque=torque)
    assert fit.amplitude == pytest.approx(0.0, abs=1e-12)
    assert not np.isnan(fit.phase_std)
    assert not np.isnan(fit.amplitude_std)


def test_common_mode_method_matches_on_smooth_data():
    q, v = trapezoid_sweep(-1.5, 1.5, 0.3, rate=500, ramp=0.2)
    torque = model_torque(q, v, 8.0, 0.7, 0.4, 0.6)
    cm = fit_sweep_common_mode(q, velocity=v, torque=torque, min_speed=0.05)
    assert cm.method == "common-mode"
    assert cm.amplitude == pytest.approx(8.0, rel=1e-4)
    assert cm.phase == pytest.approx(0.7, abs=1e-4)
    assert cm.coulomb == pytest.approx(0.6, rel=1e-3)
    batched = fit_sweep_common_mode(
        np.stack([q, q]),
        velocity=np.stack([v, v]),
        torque=np.stack([torque, 2 * torque]),
        min_speed=0.05,
    )
    assert batched.amplitude[1] == pytest.approx(2 * float(cm.amplitude), rel=1e-12)


def test_bound_matches_full_circle_formula():
    n = 720
    q = np.linspace(0, 2 * np.pi, n, endpoint=False)
    bound = amplitude_phase_bound(
        q, velocity=np.ones(n), amplitude=3.0, phase=1.0, noise_std=0.2, friction="none"
    )
    assert bound[0, 0] == pytest.approx(2 * 0.04 / n, rel=1e-10)
    assert bound[1, 1] == pytest.approx(2 * 0.04 / (n * 9.0), rel=1e-10)


def test_partial_arc_costs_more_than_full_circle():
    # docs/sweep.md: 90 degree arc, N var(A) / sigma^2 from 5.5 (arc centred on a zero crossing) to
    # 129 (centred on the torque peak), with columns [1, sin q, cos q].
    n = 2000
    arc = np.linspace(-np.pi / 4, np.pi / 4, n)
    on_zero = amplitude_phase_bound(
        arc, velocity=np.ones(n), amplitude=1.0, phase=0.0, noise_std=1.0, friction="none"
    )
    on_peak = amplitude_phase_bound(
        arc + np.pi / 2,
        velocity=np.ones(n),
        amplitude=1.0,
        phase=0.0,
        noise_std=1.0,
        friction="none",
    )
    assert n * on_zero[0, 0] == pytest.approx(5.5, abs=0.1)
    assert n * on_peak[0, 0] == pytest.approx(129, rel=0.02)


@pytest.mark.slow
@pytest.mark.parametrize("arc_deg, centre", [(360.0, 0.0), (90.0, 0.3)])
def test_monte_carlo_variance_reaches_the_cramer_rao_bound(arc_deg, centre):
    rng = np.random.default_rng(20261202)
    draws, sigma, amp, phase = 2000, 0.05, 4.0, 0.5
    arc = np.radians(arc_deg)
    q, v = trapezoid_sweep(centre - arc / 2, centre + arc / 2, 0.4, rate=100, ramp=0.1)
    clean = model_torque(q, v, amp, phase, 0.3, 0.5, 0.8)
    torque = clean + rng.normal(0.0, sigma, (draws, q.size))
    fit = fit_sweep(q, velocity=v, torque=torque, min_speed=0.02)
    bound = amplitude_phase_bound(
        q, velocity=v, amplitude=amp, phase=phase, noise_std=sigma, min_speed=0.02
    )
    emp_a = np.var(fit.amplitude)
    emp_p = np.var(wrap_angle(fit.phase - phase))
    assert emp_a / bound[0, 0] == pytest.approx(1.0, abs=0.1)
    assert emp_p / bound[1, 1] == pytest.approx(1.0, abs=0.1)
    # The covariance each fit reports, averaged, matches the spread across draws.
    assert np.mean(fit.amplitude_std**2) / emp_a == pytest.approx(1.0, abs=0.1)
    assert np.mean(fit.phase_std**2) / emp_p == pytest.approx(1.0, abs=0.1)
    cov_emp = np.cov(fit.coefficients.T)
    np.testing.assert_allclose(np.diag(np.mean(fit.covariance, axis=0)), np.diag(cov_emp), rtol=0.1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(q=np.zeros((2, 5)), torque=np.zeros((3, 5)), velocity=np.ones(5)), "broadcastable"),
        (dict(q=[0.0, np.nan, 1.0], torque=[0, 0, 0], velocity=[1, 1, 1]), "`q` to be finite"),
        (
            dict(q=[0.0, 0.5, 1.0], torque=[0, np.inf, 0], velocity=[1, 1, 1]),
            "`torque` to be finite",
        ),
        (
            dict(q=[0.0, 0.5, 1.0], torque=[0, 0, 0], velocity=[1, 1, np.nan]),
            "`velocity` to be finite",
        ),
        (dict(q=5.0, torque=1.0, velocity=1.0), "shape"),
    ],
)
def test_bad_arrays_raise_value_error_naming_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_sweep(**kwargs)


def test_bad_options_raise():
    q, v = trapezoid_sweep(-1, 1, 0.3, ramp=0.1)
    torque = np.sin(q)
    with pytest.raises(ValueError, match="`friction`"):
        fit_sweep(q, velocity=v, torque=torque, friction="stribeck")
    # A value of the shared type the motion functions implement: at one speed per direction the
    # quadratic column is the Coulomb one.
    with pytest.raises(ValueError, match="`friction`.*'coulomb-viscous-quadratic'"):
        fit_sweep(q, velocity=v, torque=torque, friction="coulomb-viscous-quadratic")
    with pytest.raises(ValueError, match="`load_friction`"):
        fit_sweep(q, velocity=v, torque=torque, load_friction="yes")
    with pytest.raises(ValueError, match="`harmonics`"):
        fit_sweep(q, velocity=v, torque=torque, harmonics=[1])
    with pytest.raises(ValueError, match="`harmonics`"):
        fit_sweep(q, velocity=v, torque=torque, harmonics=[3, 3])
    with pytest.raises(ValueError, match="`min_speed`"):
        fit_sweep(q, velocity=v, torque=torque, min_speed=-1.0)
    with pytest.raises(ValueError, match="`max_iter`"):
        fit_sweep(q, velocity=v, torque=torque, max_iter=0)


def test_too_few_samples_after_speed_mask():
    q = np.array([-1.0, 0.0, 1.0, 1.0, 0.0, -1.0])
    v = np.array([0.3, 0.3, 0.01, -0.01, -0.3, -0.3])  # four samples above min_speed, four terms
    with pytest.raises(InsufficientDataError, match="more than 4 samples"):
        fit_sweep(q, velocity=v, torque=np.sin(q), min_speed=0.1, friction="coulomb")


def test_one_direction_only_with_friction_columns():
    q = np.linspace(-1, 1, 100)
    v = np.full(100, 0.3)
    with pytest.raises(InsufficientDataError, match="both directions"):
        fit_sweep(q, velocity=v, torque=np.sin(q))
    fit = fit_sweep(q, velocity=v, torque=2 * np.sin(q + 0.1), friction="none")
    assert fit.amplitude == pytest.approx(2.0, rel=1e-10)


def test_too_few_distinct_angles_are_refused_not_fitted():
    # A long arc sampled at two angles only: offset, sin and cos are not determined.
    q = np.r_[np.zeros(100), np.ones(100)]
    v = np.r_[np.ones(50), -np.ones(50), np.ones(50), -np.ones(50)]
    with pytest.raises(InsufficientDataError, match="condition number"):
        fit_sweep(q, velocity=v, torque=1 + np.sin(q + 0.3))
    with pytest.raises(InsufficientDataError, match="condition number"):
        fit_sweep(
            np.zeros(50), velocity=np.r_[np.ones(25), -np.ones(25)], torque=np.ones(50), min_arc=0.0
        )


def test_harmonic_next_to_the_gravity_order_is_refused():
    q, v = trapezoid_sweep(-1.0, 1.0, 0.3, ramp=0.1)
    with pytest.raises(InsufficientDataError, match="`harmonics`"):
        fit_sweep(q, velocity=v, torque=5 * np.sin(q + 0.3), harmonics=(1.000001,))


def test_empty_and_complex_and_string_inputs():
    with pytest.raises(InsufficientDataError, match="at least one sample"):
        fit_sweep([], velocity=[], torque=[])
    q, v = trapezoid_sweep(-1.0, 1.0, 0.3, ramp=0.1)
    with pytest.raises(ValueError, match="`q` to be real"):
        fit_sweep(q + 0j, velocity=v, torque=np.sin(q))
    with pytest.raises(ValueError, match="`harmonics`"):
        fit_sweep(q, velocity=v, torque=np.sin(q), harmonics="2")


def test_min_speed_above_every_sample_says_so():
    q, v = trapezoid_sweep(-1.0, 1.0, 0.3, ramp=0.1)
    with pytest.raises(InsufficientDataError, match="got none.*largest |velocity| there is 0.3"):
        fit_sweep(q, velocity=v, torque=np.sin(q), min_speed=10.0)


def test_bound_broadcasts_priors_and_rejects_mismatched_shapes():
    q = np.linspace(0, 2 * np.pi, 100)
    many = amplitude_phase_bound(
        q,
        velocity=np.ones(100),
        amplitude=[1.0, 2.0, 3.0],
        phase=0.3,
        noise_std=0.1,
        friction="none",
    )
    assert many.shape == (3, 2, 2)
    one = amplitude_phase_bound(
        q, velocity=np.ones(100), amplitude=2.0, phase=0.3, noise_std=0.1, friction="none"
    )
    np.testing.assert_allclose(many[1], one, rtol=1e-12)
    with pytest.raises(ValueError, match="`amplitude`"):
        amplitude_phase_bound(
            np.stack([q, q]),
            velocity=np.ones(100),
            amplitude=[1.0, 2.0, 3.0],
            phase=0.3,
            noise_std=0.1,
        )


def test_torque_sign_flag_negates_the_torque_and_is_never_guessed():
    q, v = trapezoid_sweep(-1.0, 1.5, 0.3, ramp=0.1)
    torque = model_torque(q, v, 4.0, 0.3, 0.2, 0.5)
    flipped = fit_sweep(q, velocity=v, torque=-torque, torque_sign=-1)
    assert flipped.amplitude == pytest.approx(4.0, rel=1e-10)
    assert flipped.phase == pytest.approx(0.3, abs=1e-10)
    assert flipped.coulomb == pytest.approx(0.5, rel=1e-9)
    unflagged = fit_sweep(q, velocity=v, torque=-torque)
    assert abs(wrap_angle(unflagged.phase - 0.3)) == pytest.approx(np.pi, abs=1e-9)
    cm = fit_sweep_common_mode(q, velocity=v, torque=-torque, torque_sign=-1)
    assert cm.phase == pytest.approx(0.3, abs=1e-3)
    for bad in (0, 2, True, -1.5):
        with pytest.raises(ValueError, match="`torque_sign`"):
            fit_sweep(q, velocity=v, torque=torque, torque_sign=bad)


def test_arc_too_short():
    q, v = trapezoid_sweep(0.0, np.radians(20), 0.1, ramp=0.1)
    with pytest.raises(InsufficientDataError, match="min_arc"):
        fit_sweep(q, velocity=v, torque=np.sin(q))
    fit = fit_sweep(q, velocity=v, torque=np.sin(q), min_arc=np.radians(10))
    assert fit.amplitude == pytest.approx(1.0, rel=1e-8)


def test_batch_error_names_the_failing_sweep():
    q, v = trapezoid_sweep(-1, 1, 0.3, ramp=0.1)
    vb = np.stack([v, np.abs(v)])
    with pytest.raises(InsufficientDataError, match=r"batch index \(1,\)"):
        fit_sweep(np.stack([q, q]), velocity=vb, torque=np.stack([q, q]))


def test_repr_is_readable_in_degrees():
    q, v = trapezoid_sweep(-1, 1, 0.3, ramp=0.1)
    fit = fit_sweep(q, velocity=v, torque=2 * np.sin(q + np.radians(30)))
    text = repr(fit)
    assert "phase=30.0000°" in text
    assert "unstable=150.0000°" in text and "stable=-30.0000°" in text


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("kwargs", [{}, {"load_friction": "abs", "min_speed": 0.1}])
@pytest.mark.parametrize(
    "name, bad",
    [
        ("q", lambda q, t, v: (np.r_[-np.inf, q[1:-1], np.inf], t, v)),
        ("q", lambda q, t, v: (np.r_[q[:-1], np.nan], t, v)),
        ("torque", lambda q, t, v: (q, np.r_[-np.inf, t[1:-1], np.inf], v)),
        ("torque", lambda q, t, v: (q, np.r_[t[:-1], np.nan], v)),
        ("velocity", lambda q, t, v: (q, t, np.r_[v[:-1], np.nan])),
        ("velocity", lambda q, t, v: (q, t, np.r_[v[:-1], -np.inf])),
    ],
)
def test_non_finite_input_is_named_without_floating_point_warnings(name, bad, kwargs, batch):
    # The test configuration turns RuntimeWarning into an error, so this also checks that no
    # "invalid value" warning escapes before the argument is named.
    q = np.linspace(-1, 1, 100)
    v = np.r_[np.ones(50), -np.ones(50)] * 0.3
    arrays = bad(q, np.sin(q), v)
    if batch:
        arrays = tuple(np.stack([a, a]) for a in arrays)
    with pytest.raises(ValueError, match=f"`{name}` to be finite"):
        fit_sweep(arrays[0], velocity=arrays[2], torque=arrays[1], **kwargs)


def test_empty_batches_give_empty_results():
    q = np.linspace(-1, 1, 50)
    v = np.where(np.arange(50) % 2, 0.3, -0.3)
    for shape in [(0, 50), (2, 0, 50)]:
        qb, vb = np.broadcast_to(q, shape), np.broadcast_to(v, shape)
        fit = fit_sweep(qb, velocity=vb, torque=np.zeros(shape))
        assert fit.amplitude.shape == shape[:-1]
        bound = amplitude_phase_bound(
            qb,
            velocity=vb,
            amplitude=np.ones(shape[:-1]),
            phase=np.zeros(shape[:-1]),
            noise_std=np.ones(shape[:-1]),
        )
        assert bound.shape == shape[:-1] + (2, 2)


def test_batched_residual_matches_single_sweep_at_low_noise():
    # A large offset and small noise put RSS / torque.torque near 2e-8, where an expanded RSS would
    # lose ~1e-8 relative; the batch must agree with the single-sweep fit to 1e-9.
    rng = np.random.default_rng(0)
    n = 500
    q = np.concatenate([np.linspace(-1, 1, n // 2), np.linspace(1, -1, n // 2)])
    v = np.concatenate([np.full(n // 2, 0.3), np.full(n // 2, -0.3)])
    torque = 20.0 + 3 * np.sin(q + 0.3) + 0.7 * np.sign(v) + 3e-3 * rng.normal(size=n)
    single = fit_sweep(q, velocity=v, torque=torque)
    batch = fit_sweep(q[None], velocity=v[None], torque=torque[None])
    assert batch.residual_rms[0] == pytest.approx(float(single.residual_rms), rel=1e-9)
    np.testing.assert_allclose(batch.covariance[0], single.covariance, rtol=1e-9)


def test_common_mode_names_mixed_infinities_without_warnings():
    q = np.r_[-np.inf, np.linspace(-1, 1, 98), np.inf]
    v = np.where(np.arange(100) % 2, 0.3, -0.3)
    with pytest.raises(ValueError, match="`q` to be finite"):
        fit_sweep_common_mode(q, velocity=v, torque=np.zeros(100))


# --------------------------------------------------------------------------------------------
# The result contract
# --------------------------------------------------------------------------------------------


def noisy_sweep(rng, amp=4.0, phase=0.3, load=0.03, noise=0.01):
    q, v = trapezoid_sweep(-1.5, 1.0, 0.3, ramp=0.1)
    torque = model_torque(q, v, amp, phase, 0.2, 0.5, 0.1, load=load)
    return q, torque + rng.normal(0.0, noise, q.size), v


def every_kind_of_fit():
    rng = np.random.default_rng(3)
    q, torque, v = noisy_sweep(rng)
    return [
        fit_sweep(q, velocity=v, torque=torque),
        fit_sweep(q, velocity=v, torque=torque, load_friction="abs"),
        fit_sweep(q, velocity=v, torque=torque, load_friction="signed", harmonics=[3]),
        fit_sweep_common_mode(q, velocity=v, torque=torque),
        fit_sweep(np.stack([q, q]), velocity=v, torque=np.stack([torque, 2 * torque])),
        fit_sweep(
            np.stack([q, q]), velocity=v, torque=np.stack([torque, 2 * torque]), load_friction="abs"
        ),
        fit_sweep_common_mode(np.stack([q, q]), velocity=v, torque=np.stack([torque, 2 * torque])),
    ]


@pytest.mark.parametrize("index", range(7))
def test_sweep_results_follow_the_result_contract(index):
    fit = every_kind_of_fit()[index]
    assert isinstance(fit, SweepFit) and isinstance(fit.zeros(), SweepZeros)
    for result in (fit, fit.zeros()):
        assert isinstance(result, Result)
        for field in dataclasses.fields(result):
            value = getattr(result, field.name)
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable, field.name
                with pytest.raises(ValueError, match="read-only"):
                    value[...] = 0
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.method = "other"  # type: ignore[misc]
        copy = pickle.loads(pickle.dumps(result))
        assert copy == result
        assert (copy != result) is False
        for field in dataclasses.fields(copy):
            value = getattr(copy, field.name)
            assert not isinstance(value, np.ndarray) or not value.flags.writeable
        text = json.dumps(result.to_dict())
        assert json.loads(text).keys() == {f.name for f in dataclasses.fields(result)}
        assert result != 1.0  # another type: False, never an exception
    other = every_kind_of_fit()[(index + 1) % 7]
    assert (fit == other) is False


def test_equal_fits_compare_equal_and_different_ones_do_not():
    rng = np.random.default_rng(4)
    q, torque, v = noisy_sweep(rng)
    assert fit_sweep(q, velocity=v, torque=torque) == fit_sweep(q, velocity=v, torque=torque)
    assert fit_sweep(q, velocity=v, torque=torque) != fit_sweep(q, velocity=v, torque=torque + 1e-3)
    # NaN compares equal to NaN, and infinities (an undetermined coefficient) to themselves.
    flat = fit_sweep(
        q, velocity=v, torque=model_torque(q, v, 0.0, 0.0, 0.2, 0.5), load_friction="abs"
    )
    assert np.isinf(flat.covariance[-1, -1])
    assert flat == pickle.loads(pickle.dumps(flat))
    assert json.loads(json.dumps(flat.to_dict()))["covariance"][-1][-1] == np.inf


def test_fit_keeps_no_reference_to_the_callers_arrays():
    rng = np.random.default_rng(5)
    q, torque, v = noisy_sweep(rng)
    fit = fit_sweep(q, velocity=v, torque=torque)
    before = pickle.dumps(fit)
    q[:] = 0.0
    torque[:] = 0.0
    v[:] = 1.0
    assert pickle.loads(before) == fit


def test_repr_shows_units_and_uncertainty():
    rng = np.random.default_rng(6)
    q, torque, v = noisy_sweep(rng)
    text = repr(fit_sweep(q, velocity=v, torque=torque, load_friction="abs"))
    assert "amplitude=" in text and "±" in text and "°" in text
    assert "load_coefficient=" in text
    zeros = repr(fit_sweep(q, velocity=v, torque=torque).zeros())
    # The same three quantities as its notebook table: both zeros and their one σ, in degrees.
    assert zeros.startswith("SweepZeros(unstable=") and ", std=" in zeros and "°" in zeros
    batch = fit_sweep(np.stack([q, q]), velocity=v, torque=torque)
    assert repr(batch).startswith("SweepFit(batch shape (2,)")
    assert "°" in repr(batch.zeros())


# --------------------------------------------------------------------------------------------
# Indexing a batched fit
# --------------------------------------------------------------------------------------------


def assert_same_fit(a: SweepFit, b: SweepFit) -> None:
    """Field by field: arrays within rounding, everything else exactly."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray | np.generic) and np.asarray(x).dtype.kind == "f":
            assert np.shape(x) == np.shape(y), field.name
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-13, err_msg=field.name)
        else:
            assert np.shape(x) == np.shape(y), field.name
            assert np.all(np.asarray(x) == np.asarray(y)), field.name


def batch_of_sweeps(rng, n_sweeps=4, n=400):
    qs, torques, vs = [], [], []
    for _ in range(n_sweeps):
        arc = rng.uniform(np.radians(60), 2 * np.pi)
        c = rng.uniform(-np.pi, np.pi)
        q, v = trapezoid_sweep(c - arc / 2, c + arc / 2, rng.uniform(0.1, 0.5), ramp=0.15)
        idx = np.linspace(0, q.size - 1, n).astype(int)
        q, v = q[idx], v[idx]
        amp = rng.uniform(1, 10)
        torque = model_torque(q, v, amp, rng.uniform(-3, 3), 0.2, 0.5, 0.3, load=0.02)
        qs.append(q)
        torques.append(torque + rng.normal(0, 0.01 * amp, q.size))
        vs.append(v)
    return np.stack(qs), np.stack(torques), np.stack(vs)


@pytest.mark.parametrize("kwargs", [{}, {"load_friction": "abs"}, {"harmonics": [2.5]}])
def test_batched_fit_indexes_into_the_fits_of_its_sweeps(kwargs):
    q, torque, v = batch_of_sweeps(np.random.default_rng(8))
    fit = fit_sweep(q, velocity=v, torque=torque, min_speed=0.05, **kwargs)
    assert len(fit) == 4
    for i in range(4):
        single = fit_sweep(q[i], velocity=v[i], torque=torque[i], min_speed=0.05, **kwargs)
        # Equal within rounding, not bit for bit (`fit[i] == single` is False here): the batched
        # solve forms its Gram matrices and residual sums with other numpy calls than the
        # single-sweep solve.
        assert_same_fit(fit[i], single)
        assert fit[i].batch_shape == () and type(fit[i].converged) is bool
        assert type(fit[i].n_iter) is int
    # Negative indices, slices and iteration select the same entries, exactly.
    assert fit[-1] == fit[3] and fit[-4] == fit[0]
    sub = fit[1:3]
    assert len(sub) == 2 and sub.batch_shape == (2,)
    assert sub[0] == fit[1] and sub[1] == fit[2]
    assert fit[::2][1] == fit[2]
    assert fit[np.array([3, 0])][0] == fit[3]
    assert fit[np.array([True, False, False, True])][1] == fit[3]
    assert [f.amplitude for f in fit] == [fit[i].amplitude for i in range(4)]
    with pytest.raises(IndexError):
        fit[4]
    with pytest.raises(IndexError):
        fit[-5]
    with pytest.raises(IndexError, match="at most 1 indices"):
        fit[0, 0]


def test_multi_axis_batches_index_by_tuples_and_ellipsis():
    q, torque, v = batch_of_sweeps(np.random.default_rng(9), n_sweeps=6)
    flat = fit_sweep(q, velocity=v, torque=torque)
    grid = fit_sweep(
        q.reshape(2, 3, -1), velocity=v.reshape(2, 3, -1), torque=torque.reshape(2, 3, -1)
    )
    assert len(grid) == 2 and grid.batch_shape == (2, 3)
    assert grid[1, 2] == grid[1][2]
    assert_same_fit(grid[1, 2], flat[5])
    column = grid[..., 1]
    assert column.batch_shape == (2,)
    assert column[1] == grid[1, 1]
    assert column.coefficients.shape == (2, len(grid.column_names))
    assert grid[:, 0].covariance.shape == (2,) + grid.covariance.shape[-2:]
    with pytest.raises(IndexError):
        grid[0, 3]
    with pytest.raises(IndexError, match="at most 2 indices"):
        grid[0, 0, 0]


def test_a_single_sweep_fit_has_no_length_and_no_index():
    rng = np.random.default_rng(10)
    q, torque, v = noisy_sweep(rng)
    fit = fit_sweep(q, velocity=v, torque=torque)
    assert fit.batch_shape == ()
    with pytest.raises(TypeError, match="single sweep"):
        len(fit)
    with pytest.raises(TypeError, match="single sweep"):
        fit[0]
    assert fit  # a result is true in a boolean context, batched or not
    assert fit_sweep(
        np.empty((0, q.size)), velocity=v, torque=np.empty((0, q.size))
    )  # an empty batch too


def test_entries_of_a_batched_fit_feed_the_general_estimator():
    from gravdir.general import JointSweep

    q, torque, v = batch_of_sweeps(np.random.default_rng(12), n_sweeps=3)
    fit = fit_sweep(q, velocity=v, torque=torque)
    sweep = JointSweep(
        joint=1, rotation=np.eye(3), joint_axis=np.array([0.0, 0.0, 1.0]), q_ref=0.0, fit=fit[2]
    )
    single = fit_sweep(q[2], velocity=v[2], torque=torque[2])
    reference = JointSweep(
        joint=1, rotation=np.eye(3), joint_axis=np.array([0.0, 0.0, 1.0]), q_ref=0.0, fit=single
    )
    np.testing.assert_allclose(sweep.fit.coefficients, reference.fit.coefficients, rtol=1e-9)


# --------------------------------------------------------------------------------------------
# The Gauss-Newton iteration of load_friction="abs"
# --------------------------------------------------------------------------------------------


def test_linear_solves_converge_without_iterating():
    rng = np.random.default_rng(13)
    q, torque, v = noisy_sweep(rng)
    for fit in (
        fit_sweep(q, velocity=v, torque=torque),
        fit_sweep(q, velocity=v, torque=torque, load_friction="signed"),
        fit_sweep_common_mode(q, velocity=v, torque=torque),
    ):
        assert fit.converged is True and fit.n_iter == 0
    batch = fit_sweep(np.stack([q, q, q]), velocity=v, torque=torque)
    assert batch.converged.shape == (3,) and batch.converged.all()
    assert batch.n_iter.shape == (3,) and np.all(batch.n_iter == 0)


def test_load_abs_reports_its_iterations():
    q, v = trapezoid_sweep(-2.0, 2.0, 0.4, ramp=0.1)
    torque = model_torque(q, v, 10.0, 0.2, 0.1, 0.5, 0.3, load=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = fit_sweep(q, velocity=v, torque=torque, load_friction="abs")
    assert fit.converged is True and 2 <= fit.n_iter < 50
    assert fit.load_coefficient == pytest.approx(0.05, rel=1e-8)
    # A batch reports each sweep: without load friction one step already meets the tolerance.
    clean = model_torque(q, v, 10.0, 0.2, 0.1, 0.5, 0.3)
    batch = fit_sweep(
        np.stack([q, q]), velocity=v, torque=np.stack([torque, clean]), load_friction="abs"
    )
    assert batch.converged.tolist() == [True, True]
    assert batch.n_iter[0] == fit.n_iter and batch.n_iter[1] < fit.n_iter


def test_load_abs_stops_at_max_iter_with_a_convergence_warning():
    q, v = trapezoid_sweep(-2.0, 2.0, 0.4, ramp=0.1)
    torque = model_torque(q, v, 10.0, 0.2, 0.1, 0.5, 0.3, load=0.05)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        fit = fit_sweep(q, velocity=v, torque=torque, load_friction="abs", max_iter=1)
    assert fit.converged is False
    assert fit.n_iter == 1
    assert "converged=False" in repr(fit)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        batch = fit_sweep(
            np.stack([q, q]),
            velocity=v,
            torque=np.stack([torque, 2 * torque]),
            load_friction="abs",
            max_iter=1,
        )
    assert not batch.converged.any()
    assert np.all(batch.n_iter == 1)
    assert "not converged: 2 of 2" in repr(batch)


# --------------------------------------------------------------------------------------------
# load_friction="abs" on a sweep without gravity load
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arc_deg, harmonics, min_speed",
    [(172.0, (), None), (40.0, (), None), (360.0, (3.0,), 0.05)],
)
def test_load_abs_without_gravity_holds_the_load_coefficient_at_zero(arc_deg, harmonics, min_speed):
    # Gravity along the joint axis: no gravity torque, hence no load-dependent friction either.
    arc = np.radians(arc_deg)
    q, v = trapezoid_sweep(0.4 - arc / 2, 0.4 + arc / 2, 0.4, ramp=0.1)
    torque = model_torque(q, v, 0.0, 0.0, -0.3, 1.6, 0.8) + 0.02 * np.sin(3 * q) * bool(harmonics)
    kwargs = dict(harmonics=harmonics, min_speed=min_speed, min_arc=np.radians(30))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fit is complete: no warning of any kind
        fit = fit_sweep(q, velocity=v, torque=torque, load_friction="abs", **kwargs)
    free = fit_sweep(q, velocity=v, torque=torque, **kwargs)
    assert fit.column_names == (*free.column_names, "load_abs")
    assert fit.load_coefficient == 0.0
    # Nothing is known of the load coefficient: infinite variance, no correlation.
    assert np.isposinf(fit.covariance[-1, -1])
    assert np.all(fit.covariance[-1, :-1] == 0.0) and np.all(fit.covariance[:-1, -1] == 0.0)
    # Every other coefficient and its covariance are those of the load-free fit.
    np.testing.assert_array_equal(fit.coefficients[:-1], free.coefficients)
    np.testing.assert_array_equal(fit.covariance[:-1, :-1], free.covariance)
    assert fit.residual_rms == free.residual_rms
    assert fit.amplitude == free.amplitude and fit.amplitude_std == free.amplitude_std
    assert fit.converged is True and fit.n_iter == 0
    assert "± inf" in repr(fit)


def test_load_abs_threshold_is_relative_to_the_torque_and_mixed_batches_keep_both_rules():
    q, v = trapezoid_sweep(-1.5, 1.5, 0.4, ramp=0.1)
    loaded = model_torque(q, v, 5.0, 0.7, 0.3, 0.8, 0.5, load=0.04)
    # A gravity torque of 1e-6 of the torque RMS is still fitted with the default 1e-9 ...
    faint = model_torque(q, v, 1e-6, 0.7, 0.3, 0.8, 0.5, load=0.04)
    fit = fit_sweep(q, velocity=v, torque=faint, load_friction="abs")
    assert fit.load_coefficient == pytest.approx(0.04, rel=1e-3)
    assert np.isfinite(fit.covariance[-1, -1])
    # ... and held at zero when `load_amplitude_rtol` says it is negligible.
    held = fit_sweep(q, velocity=v, torque=faint, load_friction="abs", load_amplitude_rtol=1e-5)
    assert held.load_coefficient == 0.0 and np.isposinf(held.covariance[-1, -1])
    # In a batch each sweep follows its own rule.
    flat = model_torque(q, v, 0.0, 0.0, 0.3, 0.8, 0.5)
    batch = fit_sweep(
        np.stack([q, q]), velocity=v, torque=np.stack([loaded, flat]), load_friction="abs"
    )
    assert_same_fit(batch[0], fit_sweep(q, velocity=v, torque=loaded, load_friction="abs"))
    assert_same_fit(batch[1], fit_sweep(q, velocity=v, torque=flat, load_friction="abs"))
    assert batch.n_iter[1] == 0 and batch.n_iter[0] > 0
    with pytest.raises(ValueError, match="`load_amplitude_rtol`"):
        fit_sweep(q, velocity=v, torque=loaded, load_friction="abs", load_amplitude_rtol=-1.0)


# --------------------------------------------------------------------------------------------
# Input checks and numerics at extreme scales (issue 11)
# --------------------------------------------------------------------------------------------


def docstring_sweep():
    """The sweep of fit_sweep's docstring: amplitude 5, phase 0.4, Coulomb 0.8, +-1 rad."""
    q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    return q, 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v), v


def test_degrees_for_radians_are_refused():
    # Seen: fit_sweep(np.degrees(q), ...) returned an amplitude of 0.07 instead of 5, no warning.
    q, torque, v = docstring_sweep()
    for fit in (fit_sweep, fit_sweep_common_mode):
        with pytest.raises(ValueError, match=r"`q` in radians.*degrees\?"):
            fit(np.degrees(q), velocity=v, torque=torque)
    with pytest.raises(ValueError, match=r"`q` in radians.*degrees\?"):
        amplitude_phase_bound(np.degrees(q), velocity=v, amplitude=5.0, phase=0.4, noise_std=0.01)
    # A short arc in degrees spans little but sits far outside +-2 pi.
    short = np.radians(5) * q + np.radians(90)
    with pytest.raises(ValueError, match=r"joint positions up to 95.*degrees\?"):
        fit_sweep(np.degrees(short), velocity=v, torque=torque, min_arc=0.0)
    # A span of more than two turns, even around zero.
    with pytest.raises(ValueError, match=r"span of 13.*degrees\?"):
        fit_sweep(6.5 * q, velocity=v, torque=torque)
    # Unwrapped one turn on is still radians; a degree-valued `min_arc` is refused.
    assert fit_sweep(q + 2 * np.pi, velocity=v, torque=torque).amplitude == pytest.approx(
        5.0, rel=1e-10
    )
    with pytest.raises(ValueError, match=r"`min_arc` in radians.*degrees\?"):
        fit_sweep(q, velocity=v, torque=torque, min_arc=30.0)


def test_a_column_vector_does_not_broadcast_into_one_sample_sweeps():
    # Seen: fit_sweep(q, tau[:, None], v) returned 400 constant-torque "sweeps".
    q, torque, v = docstring_sweep()
    with pytest.raises(ValueError, match=r"last \(sample\) axis.*\(400, 1\)"):
        fit_sweep(q, velocity=v, torque=torque[:, None])
    with pytest.raises(ValueError, match=r"last \(sample\) axis"):
        fit_sweep_common_mode(q, velocity=v[:, None], torque=torque)
    with pytest.raises(ValueError, match=r"last \(sample\) axis"):
        amplitude_phase_bound(q[:, None], velocity=v, amplitude=5.0, phase=0.4, noise_std=0.01)
    with pytest.raises(ValueError, match=r"last \(sample\) axis"):
        fit_sweep(q[:1], velocity=v, torque=torque)
    # Leading (batch) axes still broadcast.
    batch = fit_sweep(np.stack([q, q]), velocity=v, torque=np.stack([torque, 2 * torque]))
    np.testing.assert_allclose(batch.amplitude, [5.0, 10.0], rtol=1e-10)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(min_arc="1"), "min_arc"),
        (dict(min_arc=True), "min_arc"),
        (dict(min_speed="0.05"), "min_speed"),
        (dict(single_speed_rtol="1e-6"), "single_speed_rtol"),
        (dict(single_speed_rtol=2.0), "single_speed_rtol"),
        (dict(load_amplitude_rtol="1e-9"), "load_amplitude_rtol"),
        (dict(load_amplitude_rtol=1e300), "load_amplitude_rtol"),
        (dict(max_iter="50"), "max_iter"),
        (dict(max_iter=50.0), "max_iter"),
        (dict(max_iter=10**12), "max_iter"),
        (dict(harmonics=["3"]), "harmonics"),
        (dict(harmonics=[True]), "harmonics"),
        (dict(harmonics=[3e300]), "harmonics"),
        (dict(harmonics=[3e-300]), "harmonics"),
        (dict(harmonics=[[3.0]]), "harmonics"),
        (dict(harmonics=np.arange(2.0, 103.0)), "harmonics"),
        (dict(friction=1), "friction"),
        (dict(torque_sign=1.0), "torque_sign"),
        (dict(torque_sign="1"), "torque_sign"),
    ],
)
def test_numeric_strings_booleans_and_out_of_range_options_are_refused(kwargs, name):
    # Seen: min_arc="1" was accepted as the number 1.
    q, torque, v = docstring_sweep()
    with pytest.raises(ValueError, match=f"`{name}`"):
        fit_sweep(q, velocity=v, torque=torque, **kwargs)


def test_common_mode_and_bound_refuse_strings_caps_and_booleans():
    q, torque, v = docstring_sweep()
    for kwargs, name in [
        (dict(min_arc="1"), "min_arc"),
        (dict(n_grid="64"), "n_grid"),
        (dict(n_grid=10**12), "n_grid"),
        (dict(n_grid=64.0), "n_grid"),
    ]:
        with pytest.raises(ValueError, match=f"`{name}`"):
            fit_sweep_common_mode(q, velocity=v, torque=torque, **kwargs)
    for args, name in [
        ((5.0, 0.4, "0.01"), "noise_std"),
        ((True, 0.4, 0.01), "amplitude"),
        ((5.0, [True], 0.01), "phase"),
        ((0.0, 0.4, 0.01), "amplitude"),  # a zero amplitude leaves the phase undetermined
        ((5.0, 0.4, 1e300), "noise_std"),  # a variance beyond the float range
    ]:
        with pytest.raises(ValueError, match=f"`{name}`"):
            amplitude, phase, noise_std = args
            amplitude_phase_bound(
                q, velocity=v, amplitude=amplitude, phase=phase, noise_std=noise_std
            )


def assert_scaled_fit(fit, reference, factor, rtol=1e-12):
    """Every estimate of `fit` is `factor` times that of `reference`, its phase the same."""
    for name in ("amplitude", "offset", "coulomb", "viscous"):
        assert float(getattr(fit, name)) == pytest.approx(
            factor * float(getattr(reference, name)), rel=rtol, abs=1e-300
        ), name
    assert float(fit.phase) == pytest.approx(float(reference.phase), abs=1e-12)
    rms = factor * float(reference.residual_rms)
    assert float(fit.residual_rms) == pytest.approx(rms, rel=1e-9)


@pytest.mark.parametrize("fit_function", [fit_sweep, fit_sweep_common_mode])
def test_torques_near_the_overflow_of_their_squares_keep_a_finite_covariance(fit_function):
    # Seen: residual and covariance became inf/NaN (a RuntimeWarning only) once |torque| passed
    # about 1e154, where torque . torque overflows.
    rng = np.random.default_rng(21)
    q, torque, v = docstring_sweep()
    torque = torque + rng.normal(0.0, 0.01, q.size)
    reference = fit_function(q, velocity=v, torque=torque)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            fit = fit_function(q, velocity=v, torque=torque * 1e154)
    assert_scaled_fit(fit, reference, 1e154)
    np.testing.assert_allclose(fit.covariance / 1e154 / 1e154, reference.covariance, rtol=1e-9)
    assert float(fit.phase_std) == pytest.approx(float(reference.phase_std), rel=1e-9)


@pytest.mark.parametrize("fit_function", [fit_sweep, fit_sweep_common_mode])
@pytest.mark.parametrize("factor", [1e200, 1e300, 1e-300])
def test_extreme_torques_give_finite_estimates_and_never_a_zero_uncertainty(fit_function, factor):
    rng = np.random.default_rng(22)
    q, torque, v = docstring_sweep()
    torque = torque + rng.normal(0.0, 0.01, q.size)
    reference = fit_function(q, velocity=v, torque=torque)
    with pytest.warns(GravdirWarning, match="outside the float range"), np.errstate(all="raise"):
        fit = fit_function(q, velocity=v, torque=torque * factor)
    assert_scaled_fit(fit, reference, factor)
    # The variances (about factor**2) do not fit in a float: infinite, never zero or NaN, and
    # so is every uncertainty that follows from them.
    assert np.all(np.isposinf(np.diag(fit.covariance)))
    assert not np.isnan(fit.covariance).any()
    assert np.isposinf(fit.amplitude_std) and np.isposinf(fit.phase_std)
    assert np.isposinf(fit.zeros().std)
    assert "± inf" in repr(fit)


def test_one_sample_of_1e300_gives_finite_estimates_and_residual():
    # Seen: one torque sample of 1e300 made the residual and covariance inf/NaN.
    q, torque, v = docstring_sweep()
    torque = torque.copy()
    torque[17] = 1e300
    with pytest.warns(GravdirWarning, match="outside the float range"), np.errstate(all="raise"):
        fit = fit_sweep(q, velocity=v, torque=torque)
    for name in ("amplitude", "phase", "offset", "coulomb", "residual_rms"):
        assert np.isfinite(getattr(fit, name)), name
    assert fit.residual_rms > 1e297
    assert np.isposinf(fit.amplitude_std) and not np.isnan(fit.covariance).any()
    with pytest.warns(GravdirWarning, match="outside the float range"):
        common = fit_sweep_common_mode(q, velocity=v, torque=torque)
    assert np.isfinite(common.amplitude) and np.isfinite(common.residual_rms)


def test_extreme_speeds_scale_only_the_viscous_coefficient():
    q, v = trapezoid_sweep(-1.5, 1.5, 0.4, ramp=0.3)
    rng = np.random.default_rng(24)
    torque = model_torque(q, v, 4.0, 0.3, 0.2, 0.5, 0.7) + rng.normal(0.0, 0.01, q.size)
    reference = fit_sweep(q, velocity=v, torque=torque, min_speed=0.02)
    for factor in (1e300, 1e-300):
        with pytest.warns(GravdirWarning, match="viscous"), np.errstate(all="raise"):
            fit = fit_sweep(q, velocity=v * factor, torque=torque, min_speed=0.02 * factor)
        np.testing.assert_allclose(fit.coefficients[:4], reference.coefficients[:4], rtol=1e-12)
        assert fit.viscous == pytest.approx(reference.viscous / factor, rel=1e-12)
        # Entries that vanish in exact arithmetic are rounding, 1e-14 of the variances (~1e-6).
        np.testing.assert_allclose(
            fit.covariance[:4, :4], reference.covariance[:4, :4], rtol=1e-9, atol=1e-18
        )
        assert np.isposinf(fit.covariance[4, 4])


def test_a_batch_scales_each_sweep_on_its_own():
    q, torque, v = docstring_sweep()
    with pytest.warns(GravdirWarning):
        batch = fit_sweep(np.stack([q, q]), velocity=v, torque=np.stack([torque, 1e300 * torque]))
    assert_same_fit(batch[0], fit_sweep(q, velocity=v, torque=torque))
    assert batch.amplitude[1] == pytest.approx(5e300, rel=1e-10)
    assert np.isposinf(batch.covariance[1, 0, 0]) and np.isfinite(batch.covariance[0]).all()


def test_bound_survives_extreme_scales_or_says_why():
    q = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    reference = amplitude_phase_bound(
        q, velocity=np.ones(720), amplitude=3.0, phase=1.0, noise_std=0.2, friction="none"
    )
    with np.errstate(all="raise"):
        fast = amplitude_phase_bound(
            q,
            velocity=1e300 * np.ones(720),
            amplitude=3.0,
            phase=1.0,
            noise_std=0.2,
            friction="none",
        )
        loud = amplitude_phase_bound(
            q, velocity=np.ones(720), amplitude=3e150, phase=1.0, noise_std=2e149, friction="none"
        )
    np.testing.assert_allclose(fast, reference, rtol=1e-12)
    # noise_std 1e150 times larger: var A by 1e300, the phase variance (a ratio) unchanged.
    assert loud[0, 0] == pytest.approx(reference[0, 0] * 1e300, rel=1e-9)
    assert loud[1, 1] == pytest.approx(reference[1, 1], rel=1e-9)
    with pytest.raises(ValueError, match="`amplitude` and `noise_std`.*float range"):
        amplitude_phase_bound(
            q, velocity=np.ones(720), amplitude=3e-300, phase=1.0, noise_std=0.2, friction="none"
        )
    with pytest.raises(InsufficientDataError, match="condition number"), np.errstate(all="raise"):
        amplitude_phase_bound(
            q * 1e-300,
            velocity=np.ones(720),
            amplitude=3.0,
            phase=1.0,
            noise_std=0.2,
            friction="none",
        )


def test_amplitude_phase_covariance_of_a_lost_covariance_is_infinite_never_nan_or_zero():
    rng = np.random.default_rng(23)
    q, torque, v = noisy_sweep(rng)
    fit = fit_sweep(q, velocity=v, torque=torque)
    lost = dataclasses.replace(fit, covariance=np.full_like(fit.covariance, np.inf))
    cov = lost.amplitude_phase_covariance
    assert np.isposinf(cov[0, 0]) and np.isposinf(cov[1, 1]) and cov[0, 1] == 0.0
    nan = dataclasses.replace(fit, covariance=np.full_like(fit.covariance, np.nan))
    assert np.isposinf(nan.amplitude_std) and np.isposinf(nan.phase_std)
    assert np.isposinf(nan.zeros().std)
    # A tiny amplitude: the phase variance beyond the float range is infinite, not NaN.
    coefficients = fit.coefficients.copy()
    coefficients[1:3] *= 1e-300
    tiny = dataclasses.replace(fit, coefficients=coefficients)
    with np.errstate(all="raise"):
        assert np.isposinf(tiny.phase_std) and np.isfinite(tiny.amplitude_std)


def test_wrap_angle_refuses_what_is_not_a_finite_angle():
    for bad in (np.nan, np.inf, [0.0, np.nan], "1.0", ["1"], True, np.array([True])):
        with pytest.raises(ValueError, match="`x`"):
            wrap_angle(bad)
    expected = float(np.mod(1e300 + np.pi, 2 * np.pi) - np.pi)
    assert float(wrap_angle(1e300)) == pytest.approx(expected)
    assert wrap_angle([]).shape == (0,)


def test_a_strict_numpy_error_state_meets_no_underflow_error():
    # Underflow only rounds towards zero: a caller's np.errstate(all="raise") must not turn a
    # sample of 1e-200 beside torques of 1e233 (scaled: 1e-433) into a FloatingPointError.
    q, torque, v = docstring_sweep()
    torque = torque * 1e233
    torque[5] = 1e-200
    with pytest.warns(GravdirWarning):
        reference = fit_sweep(q, velocity=v, torque=torque)
    with pytest.warns(GravdirWarning), np.errstate(all="raise"):
        strict = fit_sweep(q, velocity=v, torque=torque)
    assert strict == reference
    with pytest.warns(GravdirWarning), np.errstate(all="raise"):
        common = fit_sweep_common_mode(q, velocity=v, torque=torque)
    assert np.isfinite(common.amplitude)


# --- nan_policy -----------------------------------------------------------------------------------


def _noisy_sweep(seed: int = 4, n_sweeps: int = 3):
    rng = np.random.default_rng(seed)
    q, v = trapezoid_sweep(-0.9, 1.1, 0.4)
    q, v = np.tile(q, (n_sweeps, 1)), np.tile(v, (n_sweeps, 1))
    amp = np.array([3.0, 6.0, 9.0])[:n_sweeps, None]
    torque = model_torque(q, v, amp, 0.4, 0.1, 0.5, 0.2) + rng.normal(0, 0.02, q.shape)
    return q, torque, v


def test_a_nan_sample_raises_with_the_way_out_and_omit_fits_the_clean_subset():
    q, torque, v = _noisy_sweep(n_sweeps=1)
    q, torque, v = q[0], torque[0].copy(), v[0]
    torque[[7, 150]] = np.nan  # a dropped packet: it used to raise, with no way to drop it
    with pytest.raises(ValueError, match=r'`torque` to be finite.*nan_policy="omit"'):
        fit_sweep(q, velocity=v, torque=torque)
    keep = ~np.isnan(torque)
    omitted = fit_sweep(q, velocity=v, torque=torque, nan_policy="omit")
    clean = fit_sweep(q[keep], velocity=v[keep], torque=torque[keep])
    # The fit of the remaining samples alone; the residuals' lag-1 correlation pairs only
    # samples next to each other in the sweep, as a batch of one does.
    np.testing.assert_allclose(omitted.coefficients, clean.coefficients, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(omitted.covariance, clean.covariance, rtol=1e-9, atol=1e-20)
    assert omitted.n_used == clean.n_used and omitted.residual_lag1 != clean.residual_lag1
    batch = fit_sweep(q[None], velocity=v[None], torque=torque[None], nan_policy="omit")
    assert omitted.residual_lag1 == pytest.approx(float(batch.residual_lag1[0]), abs=1e-12)
    np.testing.assert_allclose(omitted.amplitude, 3.0, rtol=0.02)


def test_omit_in_a_batch_drops_each_sweeps_own_nan_samples():
    q, torque, v = _noisy_sweep()
    q, torque, v = q.copy(), torque.copy(), v.copy()
    acc = np.gradient(v, axis=-1) * 200.0
    q[0, 40] = np.nan
    torque[1, [3, 90, 91]] = np.nan
    v[2, 200] = np.nan
    acc[2, 17] = np.nan
    batch = fit_sweep(
        q, velocity=v, torque=torque, acceleration=acc, load_friction="abs", nan_policy="omit"
    )
    for i in range(3):
        keep = ~(np.isnan(q[i]) | np.isnan(torque[i]) | np.isnan(v[i]) | np.isnan(acc[i]))
        single = fit_sweep(
            q[i][keep], velocity=v[i][keep], torque=torque[i][keep], acceleration=acc[i][keep],
            load_friction="abs",
        )  # fmt: skip
        assert batch.n_used[i] == single.n_used
        np.testing.assert_allclose(batch[i].coefficients, single.coefficients, rtol=1e-9)
        np.testing.assert_allclose(batch[i].covariance, single.covariance, rtol=1e-7, atol=1e-14)
        np.testing.assert_allclose(batch[i].residual_rms, single.residual_rms, rtol=1e-9)
    # Clean data: omit changes nothing.
    q0, t0, v0 = _noisy_sweep()
    assert fit_sweep(q0, velocity=v0, torque=t0, nan_policy="omit") == fit_sweep(
        q0, velocity=v0, torque=t0
    )


def test_omit_refuses_infinities_all_nan_sweeps_and_unknown_policies():
    q, torque, v = _noisy_sweep()
    bad = torque.copy()
    bad[1, 5] = np.inf
    with pytest.raises(ValueError, match="infinite.*every `nan_policy`"):
        fit_sweep(q, velocity=v, torque=bad, nan_policy="omit")
    bad = torque.copy()
    bad[2] = np.nan
    with pytest.raises(InsufficientDataError, match=r"\(2,\)\): every sample holds a NaN"):
        fit_sweep(q, velocity=v, torque=bad, nan_policy="omit")
    with pytest.raises(InsufficientDataError, match="every sample holds a NaN"):
        fit_sweep(q[0], velocity=v[0], torque=bad[2], nan_policy="omit")
    for policy in ("propagate", "OMIT", 1, None, True):
        with pytest.raises(ValueError, match="`nan_policy`"):
            fit_sweep(q, velocity=v, torque=torque, nan_policy=policy)
        with pytest.raises(ValueError, match="`nan_policy`"):
            fit_sweep_common_mode(q, velocity=v, torque=torque, nan_policy=policy)


def test_common_mode_omit_equals_the_clean_subset_sweep_by_sweep():
    q, torque, v = _noisy_sweep()
    torque = torque.copy()
    torque[0, 11] = np.nan
    torque[2, [60, 61]] = np.nan
    with pytest.raises(ValueError, match='nan_policy="omit"'):
        fit_sweep_common_mode(q, velocity=v, torque=torque)
    batch = fit_sweep_common_mode(q, velocity=v, torque=torque, nan_policy="omit", n_grid=100)
    for i in range(3):
        keep = ~np.isnan(torque[i])
        single = fit_sweep_common_mode(
            q[i][keep], velocity=v[i][keep], torque=torque[i][keep], n_grid=100
        )
        np.testing.assert_allclose(batch[i].coefficients, single.coefficients, rtol=1e-12)


# --- joint_velocity, joint_acceleration -------------------------------------------------------


def _motion(t):
    """Velocity and acceleration of q(t) = sin(1.3 t) + 0.3 sin(3.1 t + 0.5)."""
    v = 1.3 * np.cos(1.3 * t) + 0.93 * np.cos(3.1 * t + 0.5)
    a = -1.69 * np.sin(1.3 * t) - 2.883 * np.sin(3.1 * t + 0.5)
    return v, a


@pytest.mark.parametrize("jitter", [0.0, 0.2])
def test_acceleration_matches_the_analytic_one_on_uniform_and_jittered_timestamps(jitter):
    rng = np.random.default_rng(8)
    n, dt = 1000, 0.01
    t = (np.arange(n) + rng.uniform(-jitter, jitter, n)) * dt
    v, a = _motion(t)
    err = joint_acceleration(t, velocity=v) - a
    inner, rms = slice(5, -5), np.sqrt(np.mean(err**2))
    # Peak |a| is 4.6 rad/s^2. Uniform: the smoothing bias of a cubic over 0.07 s (measured
    # 5.6e-7 inside, 1.9e-4 at the ends). Jittered: the linear interpolation onto the uniform
    # grid and back, dt^2 |dv/dt^2| / 8 at worst (measured 5.5e-3 at most, 1.1e-3 RMS).
    if not jitter:
        assert np.abs(err[inner]).max() <= 1e-5 and rms <= 1e-4
    else:
        assert np.abs(err[inner]).max() <= 1e-2 and rms <= 2e-3
        # Taking the jittered samples for uniform ones puts the timing error into the result
        # (measured 0.13 rad/s^2 RMS).
        from scipy.signal import savgol_filter

        naive = savgol_filter(v, 7, 3, deriv=1, delta=dt) - a
        assert np.sqrt(np.mean(naive**2)) >= 50 * rms


def test_derivatives_are_exact_for_polynomials_and_chain_from_positions():
    rng = np.random.default_rng(9)
    t = np.arange(80) * 0.01 + 3.0
    jittered = t + rng.uniform(-0.002, 0.002, t.size)
    cubic = 0.1 + 0.4 * t - 0.3 * t**2 + 0.05 * t**3
    np.testing.assert_allclose(
        joint_acceleration(t, velocity=cubic), 0.4 - 0.6 * t + 0.15 * t**2, rtol=0, atol=1e-9
    )
    # Linear interpolation is exact for a linear velocity, whatever the jitter.
    np.testing.assert_allclose(
        joint_acceleration(jittered, velocity=1.0 + 2.0 * jittered), 2.0, atol=1e-9
    )
    q = 0.2 + 0.5 * t + 0.25 * t**2
    np.testing.assert_allclose(joint_velocity(t, q=q), 0.5 + 0.5 * t, atol=1e-9)
    np.testing.assert_allclose(
        joint_acceleration(t, velocity=joint_velocity(t, q=q)), 0.5, atol=1e-9
    )


def test_a_trapezoid_corner_is_blurred_over_half_a_window_each_side_only():
    # A step of 2 rad/s^2 in the acceleration, between samples: the derivative is exact beyond
    # half the window (three samples at 100 Hz and 0.07 s) from the corner, off by at most the
    # measured 0.6 rad/s^2 next to it, and its error sums to zero (the speed change is kept).
    t = np.arange(300) * 0.01
    corner = 1.005
    v = np.where(t < corner, 0.0, np.minimum(2.0 * (t - corner), 1.0))
    a = np.where((t >= corner) & (2.0 * (t - corner) < 1.0), 2.0, 0.0)
    err = joint_acceleration(t, velocity=v) - a
    near = np.abs(t - corner) <= 0.035 + 1e-9
    second = np.abs(t - (corner + 0.5)) <= 0.035 + 1e-9
    assert np.abs(err[~(near | second)]).max() <= 1e-9
    assert 0.5 <= np.abs(err[near]).max() <= 0.6
    assert abs(err[near].sum()) <= 1e-9


def test_derivative_batches_and_per_sweep_time_axes_equal_loops():
    rng = np.random.default_rng(10)
    t = np.arange(300) * 0.0133 + rng.uniform(-0.002, 0.002, (3, 300))
    v = np.stack([_motion(ti)[0] * (i + 1) for i, ti in enumerate(t)])
    batch = joint_acceleration(t, velocity=v)
    for i in range(3):
        np.testing.assert_allclose(
            batch[i], joint_acceleration(t[i], velocity=v[i]), rtol=0, atol=1e-12
        )
    shared = joint_acceleration(t[0], velocity=v)
    for i in range(3):
        np.testing.assert_allclose(shared[i], joint_acceleration(t[0], velocity=v[i]), atol=1e-12)


def test_derivative_omit_keeps_nan_where_it_was_and_fits_the_rest_alone():
    rng = np.random.default_rng(11)
    t = np.arange(400) * 0.01 + rng.uniform(-0.002, 0.002, 400)
    v = np.stack([_motion(t)[0]] * 2)
    v[0, [30, 31, 200]] = np.nan
    tt = np.stack([t, t])
    tt[1, 77] = np.nan
    with pytest.raises(ValueError, match=r'`velocity` to be finite.*nan_policy="omit"'):
        joint_acceleration(t, velocity=v)
    out = joint_acceleration(tt, velocity=v, nan_policy="omit")
    assert np.array_equal(np.isnan(out), np.isnan(v) | np.isnan(tt))
    keep = ~np.isnan(v[0])
    np.testing.assert_allclose(
        out[0, keep], joint_acceleration(t[keep], velocity=v[0, keep]), atol=1e-12
    )
    # The omitted samples fit into fit_sweep's own omission.
    q = np.sin(1.3 * t) + 0.3 * np.sin(3.1 * t + 0.5)
    torque = 4.0 * np.sin(q + 0.2) + 0.7 * out[0]
    f = fit_sweep(
        q, velocity=v[0], torque=torque, acceleration=out[0], friction="none", nan_policy="omit"
    )
    np.testing.assert_allclose([f.amplitude, f.inertia], [4.0, 0.7], rtol=1e-9)


def test_derivative_omit_refuses_a_sweep_left_with_no_sample():
    """A sweep whose every sample holds a NaN (in `velocity` or in `time`) has fewer samples
    than the window after the omission, like one left with six: refused, never an acceleration
    of NaN alone."""
    t = np.arange(200) * 0.01
    v = np.stack([np.sin(t), np.full(200, np.nan)])
    for args in ((t, v), (np.full(200, np.nan), np.sin(t)), (t, v[1])):
        with pytest.raises(InsufficientDataError, match="`velocity`"):
            joint_acceleration(args[0], velocity=args[1], nan_policy="omit")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(time=np.r_[0.0, 0.01, 0.01, np.arange(3, 30) * 0.01]), ValueError, "increasing"),
        (dict(time=np.arange(30)[::-1] * 0.01), ValueError, "strictly increasing"),
        (dict(time=np.arange(30) * 10.0), ValueError, "seconds\\?"),
        (dict(window=0.5), InsufficientDataError, "samples of `velocity`"),
        (dict(time=np.r_[np.arange(15) * 0.01, 100 + np.arange(15) * 0.01]), ValueError, "gaps"),
        (dict(window=-0.1), ValueError, "`window`"),
        (dict(window=True), ValueError, "`window`"),
        (dict(window="0.07"), ValueError, "`window`"),
        (dict(polyorder=0), ValueError, "`polyorder`"),
        (dict(polyorder=7), ValueError, "`polyorder`"),
        (dict(polyorder=2.5), ValueError, "`polyorder`"),
        (dict(velocity=np.ones(29)), ValueError, "share their last"),
        (dict(velocity=np.ones((2, 30)), time=np.ones((3, 30))), ValueError, "broadcast"),
        (dict(velocity=np.r_[np.inf, np.ones(29)]), ValueError, "infinite"),
        (dict(time=np.r_[np.nan, np.arange(1, 30) * 0.01]), ValueError, "`time` to be finite"),
        (dict(velocity=np.ones(1), time=np.zeros(1)), InsufficientDataError, "at least 2"),
        (dict(nan_policy="ignore"), ValueError, "`nan_policy`"),
    ],
)
def test_derivative_refuses_bad_input_naming_it(kwargs, error, match):
    args = dict(time=np.arange(30) * 0.01, velocity=np.linspace(0, 1, 30)) | kwargs
    with pytest.raises(error, match=match):
        joint_acceleration(args.pop("time"), velocity=args.pop("velocity"), **args)


def test_the_sample_axis_is_chosen_by_axis_as_in_scipy_signal():
    """``axis=0`` differentiates a log of shape (samples, joints) along its samples: the same
    numbers as the default last axis on its transpose; an axis the array lacks is refused."""
    rng = np.random.default_rng(3)
    t = np.arange(300) * 0.01 + rng.uniform(-0.002, 0.002, 300)
    log = np.stack([np.sin(t), np.cos(2 * t), t**2], axis=1)  # (samples, joints)
    along_rows = joint_acceleration(t, velocity=log, axis=0)
    assert along_rows.shape == log.shape
    np.testing.assert_array_equal(along_rows, joint_acceleration(t, velocity=log.T).T)
    np.testing.assert_allclose(along_rows[:, 2], 2 * t, atol=1e-2)  # d(t²)/dt, jitter aside
    stamps = np.repeat(t[:, None], 3, axis=1)  # one time column per joint, same axis
    np.testing.assert_array_equal(
        joint_velocity(stamps, q=log, axis=0), joint_velocity(t, q=log, axis=0)
    )
    for axis in (2, -3, 0.0, True):
        with pytest.raises(ValueError, match="`axis`"):
            joint_acceleration(t, velocity=log, axis=axis)


def test_positional_series_fail_loudly():
    """The series after the first are keyword-only: the old positional order
    ``fit_sweep(q, torque, velocity)`` is a `TypeError`, never a silent swap."""
    q, torque, v = docstring_sweep()
    t = np.arange(q.size) * 0.01
    calls = [
        lambda: fit_sweep(q, torque, v),
        lambda: fit_sweep_common_mode(q, torque, v),
        lambda: amplitude_phase_bound(q, v, 5.0, 0.4, 0.01),
        lambda: joint_acceleration(t, v),
        lambda: joint_velocity(t, q),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="positional argument"):
            call()  # type: ignore[misc]


@pytest.mark.parametrize("load_friction", ["signed", "abs"])
def test_load_coefficient_std_matches_the_scatter(load_friction):
    """`load_coefficient_std` (the delta method for the signed columns, the column variance
    for "abs") agrees with the spread of the coefficient over 200 seeded noise draws."""
    rng = np.random.default_rng(26)
    n = 1200
    q = np.concatenate([np.linspace(0.2, 2.0, n // 2), np.linspace(2.0, 0.2, n // 2)])
    v = np.concatenate([np.full(n // 2, 0.5), np.full(n // 2, -0.5)]) * (1 + 0.5 * np.sin(3 * q))
    gravity = 20.0 * np.sin(q + 0.3)
    clean = gravity + 0.1 + 1.5 * np.sign(v) + 0.4 * v + 0.05 * np.abs(gravity) * np.sign(v)
    mus, stds = [], []
    for _ in range(200):
        fit = fit_sweep(
            q, velocity=v, torque=clean + rng.normal(0.0, 0.3, n), load_friction=load_friction
        )
        mus.append(float(fit.load_coefficient))
        stds.append(float(fit.load_coefficient_std))
    # The spread of 200 draws is known to about 5% (one sigma): 15% is three of those.
    assert np.mean(stds) == pytest.approx(np.std(mus), rel=0.15)
    assert np.mean(mus) == pytest.approx(0.05, abs=4 * np.mean(stds) / np.sqrt(200))
    none = fit_sweep(q, velocity=v, torque=clean)
    assert float(none.load_coefficient_std) == 0.0
