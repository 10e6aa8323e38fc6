"""The real-log phenomena of the synthetic motion world, checked independently of any estimator:
correlated noise against its autocorrelation, stamps and rests against the series, offsets,
corrupted rows and the robot's model error against clean logs drawn with the same seeds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from gravdir.synthetic import ModelError, correlated_noise, random_model_error
from gravdir.synthetic.motion import fourier_trajectory, motion_log
from gravdir.testing import MotionPhenomena, motion_phenomena


def _lag1(x: np.ndarray) -> float:
    x = x - x.mean()
    return float(x[1:] @ x[:-1] / (x @ x))


# --------------------------------------------------------------------------------------------
# Correlated noise


def test_ar1_noise_has_the_lag1_correlation_and_variance_of_its_parameters():
    """Regular stamps 0.01 s, tau 0.05 s: rho = exp(-0.2); 200,000 samples give the lag-1
    correlation within 0.01 (its standard error is about 0.0013) and the standard deviation
    within 3 % (effective sample size about 20,000)."""
    t = np.arange(200_000) * 0.01
    x = correlated_noise(t, 1.5, 0.05, rng=np.random.default_rng(0))
    assert x.shape == t.shape
    assert _lag1(x) == pytest.approx(np.exp(-0.2), abs=0.01)
    assert x.std() == pytest.approx(1.5, rel=0.03)


def test_zero_correlation_time_is_white_noise():
    x = correlated_noise(np.arange(100_000) * 0.01, [1.0, 3.0], 0.0, rng=np.random.default_rng(1))
    assert x.shape == (100_000, 2)
    assert abs(_lag1(x[:, 0])) < 0.02 and abs(_lag1(x[:, 1])) < 0.02
    assert x.std(axis=0) == pytest.approx([1.0, 3.0], rel=0.02)


def test_ar1_noise_at_irregular_stamps_correlates_as_exp_of_the_time_step():
    """Across 20,000 independent columns, each pair of neighbouring samples correlates as
    exp(-dt / tau) for its own dt, including across a gap; every sample has the stationary std."""
    t = np.array([0.0, 0.01, 0.013, 0.05, 0.30, 0.31])
    tau = 0.1
    x = correlated_noise(t, np.full(20_000, 2.0), tau, rng=np.random.default_rng(2))
    corr = [np.corrcoef(x[k], x[k + 1])[0, 1] for k in range(t.size - 1)]
    assert corr == pytest.approx(np.exp(-np.diff(t) / tau), abs=0.02)
    assert x.std(axis=1) == pytest.approx(np.full(t.size, 2.0), rel=0.03)


def test_two_noise_components_add_their_variances_in_a_log():
    rng = np.random.default_rng(3)
    traj = fourier_trajectory(2, 600.0, 100.0, rng=rng)
    zero = np.zeros_like(traj.q)
    log = motion_log(traj, zero, rng=rng, noise_std=1.0, slow_noise_std=[0.0, 1.0],
                     slow_correlation_time=0.2)  # fmt: skip
    assert log.torque.std(axis=0) == pytest.approx([1.0, np.sqrt(2.0)], rel=0.05)
    # lag-1 of white plus a slow component of equal variance: exp(-0.05) / 2.
    assert _lag1(log.torque[:, 1]) == pytest.approx(np.exp(-0.05) / 2, abs=0.03)
    assert abs(_lag1(log.torque[:, 0])) < 0.03


# --------------------------------------------------------------------------------------------
# Stamps and rests


def _old_fourier(n, duration, rate, rng, harmonics=5, f=0.1, vmax=1.5, amax=1.5):
    """The trajectory as drawn before the phenomena existed."""
    centre = rng.uniform(-np.pi / 2, np.pi / 2, n)
    a = rng.normal(size=(n, harmonics))
    b = rng.normal(size=(n, harmonics))
    omega = 2.0 * np.pi * f * np.arange(1, harmonics + 1)
    size = np.abs(a) + np.abs(b)
    scale = np.minimum(vmax / (size @ omega), amax / size.sum(axis=1))
    a *= scale[:, None]
    b *= scale[:, None]
    time = np.arange(int(np.floor(duration * rate)) + 1) / rate
    phase = time[:, None] * omega[None, :]
    s, c = np.sin(phase), np.cos(phase)
    q = centre + s @ a.T + c @ b.T
    return time, q, (c * omega) @ a.T - (s * omega) @ b.T


def test_defaults_leave_the_trajectory_and_log_unchanged():
    time, q, qd = _old_fourier(3, 2.9, 100.0, np.random.default_rng(4))
    traj = fourier_trajectory(3, 2.9, 100.0, rng=np.random.default_rng(4))
    assert np.array_equal(traj.time, time) and np.array_equal(traj.q, q)
    assert np.array_equal(traj.velocity, qd)
    rng = np.random.default_rng(5)
    log = motion_log(traj, np.ones_like(traj.q), rng=rng, noise_std=0.1, encoder_noise_std=1e-4)
    rng = np.random.default_rng(5)
    torque = 1.0 + 0.1 * rng.normal(size=traj.q.shape)
    assert np.array_equal(log.torque, torque)
    assert np.array_equal(log.q, traj.q + 1e-4 * rng.normal(size=q.shape))
    assert log.corrupted_rows.size == 0 and not np.any(log.unmodelled_torque)


def test_stamps_have_the_rate_error_jitter_and_gaps_asked_for():
    traj = fourier_trajectory(2, 100.0, 100.0, rng=np.random.default_rng(6), time_jitter=1e-4,
                              rate_error=0.06, gaps=4, max_gap_rows=5)  # fmt: skip
    step = np.diff(traj.time)
    assert np.all(step > 0) and traj.time[0] >= 0 and traj.time[-1] <= 100.0
    regular = step[step < 0.015]
    assert regular.mean() == pytest.approx(0.0106, rel=1e-3)
    assert regular.std() == pytest.approx(np.sqrt(2) * 1e-4, rel=0.1)
    assert np.count_nonzero(step > 0.015) == 4
    assert np.all(step[step > 0.015] < 6.5 * 0.0106)


def test_trajectory_at_jittered_stamps_is_the_series_and_its_derivatives():
    traj = fourier_trajectory(3, 20.0, 50.0, rng=np.random.default_rng(7), time_jitter=4e-3,
                              rate_error=-0.05, gaps=2, rest_time=1.0, ramp_time=2.0)  # fmt: skip
    h = 1e-5
    plus, minus = traj.at(traj.time + h), traj.at(traj.time - h)
    assert np.allclose((plus.q - minus.q) / (2 * h), traj.velocity, atol=1e-6)
    assert np.allclose((plus.velocity - minus.velocity) / (2 * h), traj.acceleration, atol=1e-5)
    again = traj.at(traj.time)
    assert np.array_equal(again.q, traj.q) and np.array_equal(again.acceleration, traj.acceleration)


def test_rest_segments_are_still_and_the_start_is_smooth():
    traj = fourier_trajectory(4, 30.0, 100.0, rng=np.random.default_rng(8), rest_time=2.0,
                              ramp_time=3.0)  # fmt: skip
    rest = (traj.time <= 2.0) | (traj.time >= 28.0)
    assert np.all(traj.velocity[rest] == 0) and np.all(traj.acceleration[rest] == 0)
    assert np.array_equal(traj.q[rest], np.broadcast_to(traj.q0, traj.q[rest].shape))
    assert np.abs(traj.velocity[~rest]).max() > 0.1
    # C2: velocity and acceleration are continuous where the ramp begins and ends.
    edges = np.array([2.0, 5.0, 25.0, 28.0])
    left, right = traj.at(edges - 1e-7), traj.at(edges + 1e-7)
    assert np.allclose(left.velocity, right.velocity, atol=1e-5)
    assert np.allclose(left.acceleration, right.acceleration, atol=1e-4)


# --------------------------------------------------------------------------------------------
# Offsets, corrupted rows, model error


def _pair(**options):
    traj = fourier_trajectory(3, 5.0, 100.0, rng=np.random.default_rng(9))
    tau = np.sin(traj.q) * 10.0
    base = {"noise_std": 0.2, "noise_correlation_time": 0.05, "encoder_noise_std": 1e-5}
    clean = motion_log(traj, tau, rng=np.random.default_rng(10), **base)
    other = motion_log(traj, tau, rng=np.random.default_rng(10), **base, **options)
    return traj, clean, other


def test_zero_offsets_appear_in_q_only():
    offsets = np.array([0.01, -0.002, 0.0])
    _, clean, shifted = _pair(encoder_offsets=offsets)
    assert np.allclose(shifted.q - clean.q, offsets, rtol=0, atol=1e-15)
    assert np.array_equal(shifted.velocity, clean.velocity)
    assert np.array_equal(shifted.torque, clean.torque)


@pytest.mark.parametrize("seed", range(6))
def test_corrupted_rows_are_exactly_the_rows_that_differ(seed):
    traj = fourier_trajectory(3, 5.0, 100.0, rng=np.random.default_rng(seed))
    tau = np.cos(traj.q)
    clean = motion_log(traj, tau, rng=np.random.default_rng(seed), noise_std=0.1)
    bad = motion_log(traj, tau, rng=np.random.default_rng(seed), noise_std=0.1,
                     corrupted_rows=12)  # fmt: skip
    differs = np.flatnonzero(
        np.any(bad.q != clean.q, axis=1)
        | np.any(bad.velocity != clean.velocity, axis=1)
        | np.any(bad.torque != clean.torque, axis=1)
    )
    assert np.array_equal(differs, bad.corrupted_rows)
    assert np.array_equal(np.diff(bad.corrupted_rows), np.ones(11))
    assert np.array_equal(bad.time, clean.time)
    rows = np.hstack([bad.q, bad.velocity, bad.torque])[bad.corrupted_rows]
    assert np.any(np.all(rows == 0, axis=1)) or np.any(np.abs(rows) > 1e250) or np.any(rows == 253)


def test_model_error_is_one_function_across_logs_of_one_robot():
    error = random_model_error(3, rng=np.random.default_rng(11), quadratic=[6.0, 3.0, 1.0],
                               harmonic_std=0.5)  # fmt: skip
    assert error == random_model_error(3, rng=np.random.default_rng(11), quadratic=[6.0, 3.0, 1.0],
                                       harmonic_std=0.5)  # fmt: skip
    assert np.all(
        (np.abs(error.quadratic) >= [3.0, 1.5, 0.5]) & (np.abs(error.quadratic) <= [6, 3, 1])
    )
    for seed in (12, 13):
        traj = fourier_trajectory(3, 5.0, 100.0, rng=np.random.default_rng(seed))
        tau = np.zeros_like(traj.q)
        plain = motion_log(traj, tau, rng=np.random.default_rng(seed), noise_std=0.1)
        with_error = motion_log(traj, tau, rng=np.random.default_rng(seed), noise_std=0.1,
                                model_error=error)  # fmt: skip
        q, qd = traj.q, traj.velocity
        expected = error.quadratic * qd * np.abs(qd) + sum(
            error.sine[:, h] * np.sin((h + 1) * q) + error.cosine[:, h] * np.cos((h + 1) * q)
            for h in range(2)
        )
        assert np.allclose(with_error.unmodelled_torque, expected, rtol=1e-12, atol=1e-12)
        assert np.allclose(with_error.torque - plain.torque, expected, rtol=0, atol=1e-12)


def test_model_error_call_equals_torque_and_checks_shapes():
    error = ModelError(np.array([2.0, -1.0]), np.zeros((2, 1)), np.array([[0.5], [0.0]]))
    q, qd = np.array([[0.0, 1.0]]), np.array([[1.0, -2.0]])
    assert error(q, qd).tolist() == [[2.5, 4.0]]
    with pytest.raises(ValueError, match="`q`"):
        error.torque(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="`q` and `velocity`"):
        error.torque(np.zeros((2, 2)), np.zeros((3, 2)))


# --------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"rate_error": 0.7}, "rate_error"),
        ({"gaps": 40, "max_gap_rows": 5}, "gaps"),
        ({"max_gap_rows": 0}, "max_gap_rows"),
        ({"rest_time": 0.5}, "ramp_time"),
        ({"ramp_time": 1e-3}, "ramp_time"),
        ({"rest_time": 1.0, "ramp_time": 1.5}, "rest_time"),
        ({"time_jitter": 0.01}, "time_jitter"),
    ],
)
def test_bad_stamp_and_rest_options_name_the_argument(options, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        fourier_trajectory(2, 4.0, 100.0, rng=np.random.default_rng(0), **options)


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"corrupted_rows": 500}, "corrupted_rows"),
        ({"corrupted_rows": -1}, "corrupted_rows"),
        ({"model_error": random_model_error(3, rng=np.random.default_rng(0))}, "model_error"),
        ({"slow_correlation_time": 0.0}, "slow_correlation_time"),
        ({"noise_correlation_time": -1.0}, "noise_correlation_time"),
        ({"encoder_offsets": [0.0, np.nan]}, "encoder_offsets"),
    ],
)
def test_bad_log_options_name_the_argument(options, name):
    traj = fourier_trajectory(2, 1.0, 100.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=f"`{name}`"):
        motion_log(traj, np.zeros_like(traj.q), rng=np.random.default_rng(1), **options)


def test_noise_needs_increasing_stamps():
    with pytest.raises(ValueError, match="`time`"):
        correlated_noise([0.0, 0.1, 0.1], 1.0, 0.1, rng=np.random.default_rng(0))


# --------------------------------------------------------------------------------------------
# The strategy


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(motion_phenomena(3, duration=10.0, sample_rate=50.0, corrupt=True))
def test_drawn_phenomena_make_a_log(drawn):
    assert isinstance(drawn, MotionPhenomena)
    traj = fourier_trajectory(3, 10.0, 50.0, rng=np.random.default_rng(0),
                              **drawn.trajectory_options())  # fmt: skip
    log = motion_log(traj, np.zeros_like(traj.q), rng=np.random.default_rng(1), noise_std=0.1,
                     **drawn.log_options())  # fmt: skip
    assert log.corrupted_rows.size == drawn.corrupted_rows >= 1
    assert np.array_equal(log.encoder_offsets, drawn.encoder_offsets)
    assert np.all(np.diff(traj.time) > 0)


def test_strategy_refuses_bad_arguments():
    with pytest.raises(ValueError, match="`scale`"):
        motion_phenomena(3, scale=-1.0)
    with pytest.raises(ValueError, match="`corrupt`"):
        motion_phenomena(3, corrupt=1)
    with pytest.raises(ValueError, match="`duration`"):
        motion_phenomena(3, duration=0.01)
