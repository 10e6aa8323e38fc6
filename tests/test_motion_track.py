"""The tracker of `up` over sliding windows, with the arm's parameters identified once.

The synthetic world (`tests/_tilting_world.py`) is a UR5e-like arm with realistic torque errors
on a base whose `up` may change with time, its torques from the synthetic arm's explicit
Newton-Euler dynamics, not from the regressor the tracker uses.
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache
from types import SimpleNamespace

import numpy as np
import pytest
from _tilting_world import (
    ARMS,
    CHAIN,
    HOME,
    identify,
    log_of,
    ordinary,
    sensor_errors,
    torques,
)

from gravdir.dynamics import inertial_parameters, inverse_dynamics_regressor
from gravdir.errors import InsufficientDataError
from gravdir.frames import angle_between
from gravdir.motion import UpTrack, UpTracker, track_up
from gravdir.motion._fixed import fixed_model, hidden_directions
from gravdir.synthetic import UR5E_LIKE_URDF, up_from_base_tilt
from gravdir.urdf import inertials_from_urdf

WINDOW = 2.0
# The white-noise world of these tests: the white-noise covariance, the drift rate, no model
# error and the chi-square test at 1e-6 against 5 windows, by name (the defaults are for real
# logs: the *Tracking* page).
WHITE = {
    "covariance": "white",
    "drift": True,
    "model_error_std": 0.0,
    "significance": 1e-6,
    "reference_windows": 5,
}


@cache
def _identified(seed: int = 7, upright: bool = False):
    """Sensor errors, base direction and the fit identified once on 20 s at 500 Hz, on a base
    tilted 3-10° or, with `upright`, on an exactly upright one (a mobile base on level ground)."""
    rng = np.random.default_rng(seed)
    errors = sensor_errors(rng)
    tilt0 = 0.0 if upright else rng.uniform(math.radians(3.0), math.radians(10.0))
    azimuth = rng.uniform(-np.pi, np.pi)
    return errors, tilt0, azimuth, identify(rng, errors, up_from_base_tilt(tilt0, azimuth))


def _angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.degrees(angle_between(a, b))


# ----------------------------------------------------------------------------------------------
# Acceptance: ramp, step, false alarms


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_tracks_a_five_degree_ramp_within_a_tenth_of_a_degree(seed):
    errors, tilt0, azimuth, fit = _identified()
    rng = np.random.default_rng(seed)
    traj = ordinary(32.0, 1000.0, rng)
    tilt = lambda t: tilt0 + math.radians(5.0) * np.clip(t / 30.0, 0.0, 1.0)  # noqa: E731
    log = log_of(traj, up_from_base_tilt(tilt(traj.time), azimuth), errors, rng)
    track = track_up(
        fit,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=traj.acceleration,
        window=WINDOW,
        **WHITE,
    )
    assert isinstance(track, UpTrack) and track.n_windows == 16
    err = _angle_deg(track.up, up_from_base_tilt(tilt(track.time_centre), azimuth))
    rms = float(np.sqrt(np.mean(err[1:] ** 2)))
    assert rms <= 0.1, err
    # The windows see the ramp: the estimated rate is 5°/30 s along the tilt.
    rate = np.degrees(np.linalg.norm(track.up_rate, axis=-1))
    assert np.median(rate) == pytest.approx(5.0 / 30.0, rel=0.3)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [21, 22, 23])
def test_detects_a_one_degree_step_within_two_windows(seed):
    errors, tilt0, azimuth, fit = _identified()
    rng = np.random.default_rng(seed)
    traj = ordinary(24.0, 1000.0, rng)
    t_step = rng.uniform(10.0, 14.0)
    direction = rng.uniform(-np.pi, np.pi)  # the step tilts the base about a random axis
    before = up_from_base_tilt(tilt0, azimuth)
    axis = np.array([np.cos(direction), np.sin(direction), 0.0])
    turned = (
        before * math.cos(math.radians(1.0))
        + np.cross(axis, before) * math.sin(math.radians(1.0))
        + axis * (axis @ before) * (1 - math.cos(math.radians(1.0)))
    )
    up = np.where((traj.time < t_step)[:, None], before, turned)
    log = log_of(traj, up, errors, rng)
    track = track_up(
        fit,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=traj.acceleration,
        window=WINDOW,
        **WHITE,
    )
    alarms = track.alarm_times
    assert alarms.size >= 1
    assert alarms[0] > t_step  # nothing before the step
    assert alarms[0] <= t_step + 2 * WINDOW  # the step is known within two windows


@pytest.mark.slow
def test_at_most_one_false_alarm_in_an_hour_without_steps():
    """An hour of ordinary motion at 50 Hz, the torque noise scaled by sqrt(50/1000) so that
    each 2 s window carries the information of a 1 kHz log (the model errors are not scaled).
    The motion changes every 10 minutes (a new random trajectory and base frequency)."""
    errors, tilt0, azimuth, fit = _identified()
    rng = np.random.default_rng(31)
    rate, scale = 50.0, math.sqrt(50.0 / 1000.0)
    quiet = dataclasses.replace(fit, noise_std=fit.noise_std * scale)
    tracker = UpTracker(quiet, window=WINDOW, **WHITE)
    up = up_from_base_tilt(tilt0, azimuth)
    n_windows, n_alarms = 0, 0
    for k in range(6):
        traj = ordinary(600.0, rate, rng, base_frequency=rng.uniform(0.05, 0.15))
        log = log_of(traj, up, errors, rng, noise_scale=scale)
        part = tracker.update(
            log.time[:-1] + 600.0 * k,
            q=log.q[:-1],
            velocity=log.velocity[:-1],
            torque=log.torque[:-1],
            acceleration=traj.acceleration[:-1],
        )
        n_windows += part.n_windows
        n_alarms += int(part.alarm.sum())
        err = _angle_deg(part.up, up)
        assert np.sqrt(np.mean(err**2)) < 0.1
    assert n_windows >= 1790
    assert n_alarms <= 1
    assert (tracker.n_windows, tracker.n_alarms) == (n_windows, n_alarms)


# ----------------------------------------------------------------------------------------------
# Exactness, uncertainty, the incremental form


def _exact_fit(noise=0.05):
    """A stand-in for a fit with the true parameters of the UR5e-like arm."""
    b = inertials_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    theta = inertial_parameters(b.mass, b.com_in_link, b.inertia_in_link)
    return SimpleNamespace(
        up=np.array([0.0, 0.0, 1.0]),
        inertial_parameters=theta,
        gains=np.ones(6),
        joint_parameters=np.zeros((6, 4)),
        noise_std=np.full(6, noise),
        chain=CHAIN,
        gravity=ARMS[0].gravity,
    )


@pytest.mark.parametrize("drift", [True, False])
def test_noise_free_windows_are_exact(drift):
    rng = np.random.default_rng(41)
    traj = ordinary(8.9, 200.0, rng)
    up = up_from_base_tilt(0.3, 2.0)
    tau = torques(traj, up)
    track = track_up(
        _exact_fit(),
        traj.time,
        q=traj.q,
        velocity=traj.velocity,
        torque=tau,
        acceleration=traj.acceleration,
        window=2.0,
        hop=1.0,
        drift=drift,
    )
    assert track.n_windows == 7
    assert np.max(np.radians(_angle_deg(track.up, up))) < 1e-9
    assert np.all(track.determined) and not np.any(track.alarm)
    assert np.max(track.residual_rms) < 1e-9


def test_a_window_with_little_motion_says_it_does_not_determine_up():
    """The arm rests and starts moving 0.05 s before the first window ends: that window's
    standard deviation is beyond `max_std` (2°), so it is reported undetermined, never tested
    and never a reference (the second window has no earlier one to be compared with). With
    `max_std` at π the same window would count as determined; the estimates are the same."""
    rng = np.random.default_rng(44)
    traj = ordinary(12.0, 200.0, rng, rest_time=1.9, ramp_time=0.05)
    up = up_from_base_tilt(0.2, 1.0)
    tau = torques(traj, up) + rng.normal(size=traj.q.shape) * 0.05
    kw = {"q": traj.q, "velocity": traj.velocity, "torque": tau, "acceleration": traj.acceleration}
    track = track_up(_exact_fit(), traj.time, **kw, window=WINDOW, **WHITE)
    loose = track_up(_exact_fit(), traj.time, **kw, window=WINDOW, **WHITE, max_std=math.pi)
    assert track.max_std == pytest.approx(math.radians(2.0))
    np.testing.assert_array_equal(track.determined, track.up_std_deg <= 2.0)
    assert track.up_std_deg[0] > 2.0 and not track.determined[0] and loose.determined[0]
    assert np.all(track.determined[1:])
    assert not track.tested[0] and not track.tested[1] and loose.tested[1]
    np.testing.assert_allclose(track.up, loose.up, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_reported_information_matches_the_scatter():
    """With the true parameters, the windows' errors whitened by their information are
    chi-square with 2 degrees of freedom (mean 2)."""
    rng = np.random.default_rng(51)
    fit = _exact_fit(noise=0.2)
    up = up_from_base_tilt(0.2, -1.0)
    traj = ordinary(121.0, 250.0, rng)
    tau = torques(traj, up) + rng.normal(0.0, 0.2, traj.q.shape)
    track = track_up(
        fit,
        traj.time,
        q=traj.q,
        velocity=traj.velocity,
        torque=tau,
        acceleration=traj.acceleration,
        window=2.0,
        **WHITE,
    )
    d = track.up - up
    z2 = np.einsum("wi,wij,wj->w", d, track.up_information, d)
    assert track.n_windows == 60
    assert 1.4 < float(np.mean(z2)) < 2.8
    assert np.all(np.isfinite(track.up_std_deg))


def test_incremental_tracker_equals_one_call():
    errors, tilt0, azimuth, fit = _identified()
    rng = np.random.default_rng(61)
    traj = ordinary(14.9, 200.0, rng)
    tilt = tilt0 + math.radians(2.0) * (traj.time > 7.3)
    log = log_of(traj, up_from_base_tilt(tilt, azimuth), errors, rng)
    series = {"q": log.q, "velocity": log.velocity, "acceleration": traj.acceleration}
    series["torque"] = log.torque
    whole = track_up(fit, log.time, **series, window=2.0, hop=0.5)
    tracker = UpTracker(fit, window=2.0, hop=0.5)
    cuts = np.sort(rng.choice(np.arange(1, log.time.size), 12, replace=False))
    parts = [
        tracker.update(log.time[lo:hi], **{k: x[lo:hi] for k, x in series.items()})
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, log.time.size], strict=True)
    ]
    assert sum(p.n_windows for p in parts) == whole.n_windows == 26
    assert whole.alarm.any()
    for field in dataclasses.fields(UpTrack):
        if field.name == "fingerprint":
            continue
        joined = getattr(whole, field.name)
        if isinstance(joined, np.ndarray):
            got = np.concatenate([getattr(p, field.name) for p in parts])
            assert np.allclose(got, joined, rtol=1e-9, atol=1e-12), field.name
    assert whole.fingerprint >= fit.fingerprint


def test_a_refused_chunk_leaves_the_tracker_as_it_was():
    """A chunk whose torques overflow the model's squares is refused (ValueError) once its
    windows are being solved; the tracker then goes on as if it had never been given it: the
    same chunk, sound, gives the windows of one `track_up` call. Before, the refused chunk's
    samples stayed in the buffer and its last stamp in the clock, and every later update was
    refused."""
    fit = _exact_fit()
    rng = np.random.default_rng(43)
    traj = ordinary(8.9, 200.0, rng)
    tau = torques(traj, up_from_base_tilt(0.3, 2.0))
    series = {"q": traj.q, "velocity": traj.velocity, "acceleration": traj.acceleration}
    whole = track_up(fit, traj.time, **series, torque=tau, window=2.0, hop=0.5)
    tracker = UpTracker(fit, window=2.0, hop=0.5)
    cut, end = 500, 900

    def update(lo, hi, scale=1.0):
        part = {k: x[lo:hi] for k, x in series.items()}
        return tracker.update(traj.time[lo:hi], **part, torque=scale * tau[lo:hi])

    first = update(0, cut)
    with pytest.raises(ValueError, match="overflow"):
        update(cut, end, 1e200)
    parts = [first, update(cut, end), update(end, traj.time.size)]
    assert sum(p.n_windows for p in parts) == whole.n_windows
    joined = np.concatenate([p.up for p in parts])
    np.testing.assert_allclose(joined, whole.up, rtol=0, atol=1e-12)


def test_a_cycle_without_samples_completes_no_window():
    """A controller cycle may bring no new samples: `update` with none returns no window and
    changes nothing (the next samples give the windows they would have given), while series
    that are not empty alongside empty stamps are refused."""
    fit = _exact_fit()
    traj = ordinary(4.9, 200.0, np.random.default_rng(47))
    tau = torques(traj, up_from_base_tilt(0.3, 2.0))
    series = {"q": traj.q, "velocity": traj.velocity, "acceleration": traj.acceleration}
    whole = track_up(fit, traj.time, **series, torque=tau, window=2.0, hop=0.5)
    tracker = UpTracker(fit, window=2.0, hop=0.5)
    empty = tracker.update(traj.time[:0], **{k: x[:0] for k, x in series.items()}, torque=tau[:0])
    assert empty.n_windows == 0 and empty.up.shape == (0, 3)
    with pytest.raises(ValueError, match="`q`"):
        tracker.update(traj.time[:0], **series, torque=tau)
    again = tracker.update(traj.time, **series, torque=tau)
    np.testing.assert_allclose(again.up, whole.up, rtol=0, atol=1e-12)


def test_accelerations_default_to_the_derivative_of_the_velocities():
    errors, tilt0, azimuth, fit = _identified()
    rng = np.random.default_rng(71)
    traj = ordinary(10.5, 500.0, rng)
    log = log_of(traj, up_from_base_tilt(tilt0, azimuth), errors, rng)
    track = track_up(
        fit, log.time, q=log.q, velocity=log.velocity, torque=log.torque, window=WINDOW, **WHITE
    )
    assert track.n_windows == 5
    assert np.max(_angle_deg(track.up, up_from_base_tilt(tilt0, azimuth))) < 0.1


def test_a_base_acceleration_is_taken_out():
    """A platform accelerating at 0.5 m/s² tilts the apparent gravity by about 2.9°; given
    the acceleration the tracker returns the true `up`."""
    rng = np.random.default_rng(81)
    fit = _exact_fit()
    traj = ordinary(6.5, 200.0, rng)
    up = up_from_base_tilt(0.1, 0.5)
    accel = np.array([0.5, 0.0, 0.0])
    apparent = ARMS[0].gravity * up + accel
    tau = torques(traj, apparent / ARMS[0].gravity)  # the dynamics are linear in a0
    args = (fit, traj.time)
    kw = {"q": traj.q, "velocity": traj.velocity, "acceleration": traj.acceleration, "torque": tau}
    given = track_up(*args, **kw, base_acceleration=np.tile(accel, (traj.time.size, 1)))
    assert np.max(np.radians(_angle_deg(given.up, up))) < 1e-9
    blind = track_up(*args, **kw)
    assert np.min(_angle_deg(blind.up, up)) > 2.5


# ----------------------------------------------------------------------------------------------
# Input checks and the result


def test_bad_input_is_refused_with_the_argument_named():
    fit = _exact_fit()
    t = np.arange(0.0, 7.0, 0.01)
    q = np.zeros((t.size, 6)) + HOME
    args = (fit, t)
    kw = {"q": q, "velocity": q * 0 + 0.1, "torque": q * 0}
    with pytest.raises(ValueError, match="`window`"):
        track_up(*args, **kw, window=-1.0)
    with pytest.raises(ValueError, match="`hop`"):
        track_up(*args, **kw, window=1.0, hop=2.0)
    with pytest.raises(ValueError, match="degrees"):
        track_up(*args, **kw, min_change=5.0)
    with pytest.raises(ValueError, match="`max_std`.*degrees"):
        track_up(*args, **kw, max_std=5.0)
    with pytest.raises(ValueError, match="`max_std`"):
        track_up(*args, **kw, max_std=0.0)
    with pytest.raises(ValueError, match="`significance`"):
        track_up(*args, **kw, significance=1.5)
    with pytest.raises(ValueError, match="`time`"):
        track_up(fit, t[::-1], q=q, velocity=q, torque=q)
    with pytest.raises(ValueError, match="`torque`"):
        track_up(fit, t, q=q, velocity=q, torque=q[:, :5])
    with pytest.raises(ValueError, match="degrees"):
        track_up(fit, t, q=np.degrees(q), velocity=q, torque=q)
    with pytest.raises(ValueError, match="`fit`"):
        track_up(object(), t, q=q, velocity=q, torque=q)
    with pytest.raises(ValueError, match="`drift`"):
        track_up(*args, **kw, drift="yes")
    with pytest.raises(InsufficientDataError, match="`time`"):
        track_up(*args, **kw, window=8.0)
    with pytest.raises(ValueError, match="`covariance`"):
        track_up(*args, **kw, covariance="robust")
    with pytest.raises(ValueError, match="`bandwidth`"):
        track_up(*args, **kw, window=1.5, bandwidth=1.0)
    tracker = UpTracker(fit, window=1.0, covariance="white")
    assert (
        tracker.update(
            t[:50], q=q[:50], velocity=q[:50] + 0.1, torque=q[:50], acceleration=q[:50]
        ).n_windows
        == 0
    )
    with pytest.raises(ValueError, match="`time`"):
        tracker.update(t[:50], q=q[:50], velocity=q[:50], torque=q[:50], acceleration=q[:50])
    with pytest.raises(ValueError, match="`acceleration`"):
        tracker.update(t[50:], q=q[50:], velocity=q[50:], torque=q[50:], acceleration=None)
    # The series after `time` are keyword-only: the old positional order fails, never swaps.
    with pytest.raises(TypeError):
        track_up(fit, t, q, q * 0 + 0.1, q * 0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        tracker.update(t[50:], q[50:], q[50:], q[50:], q[50:])  # type: ignore[misc]


def test_track_repr_and_fields():
    errors, tilt0, azimuth, fit = _identified()
    rng = np.random.default_rng(91)
    traj = ordinary(8.5, 200.0, rng)
    log = log_of(traj, up_from_base_tilt(tilt0, azimuth), errors, rng)
    track = track_up(
        fit,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=traj.acceleration,
        window=WINDOW,
        **WHITE,
    )
    text = repr(track)
    assert text.startswith("UpTrack(4 windows of 2 s") and "alarm" in text
    assert track.up_std_deg.shape == (4,) and track.up_cov.shape == (4, 3, 3)
    assert np.allclose(track.time_centre, [1.0, 3.0, 5.0, 7.0])
    assert track.significance == 1e-6
    # The chi-square tail of the best change time, times the number of change times tried.
    tail = np.exp(-0.5 * track.change_chi2[track.tested])
    tried = track.change_p[track.tested] / tail
    assert np.allclose(tried, np.round(tried), rtol=1e-9) and np.all(tried >= 1.0 - 1e-9)
    assert list(track.tested) == [False, True, True, True]
    assert np.allclose(np.linalg.norm(track.up, axis=-1), 1.0)


def test_an_upright_base_hides_two_mass_moments_and_a_tilted_one_none():
    """Upright, link 1's horizontal first moments (and the moments along the parallel axes of
    joints 2-4 that go with them) reach no torque; tilted, every moment does."""
    fit = _exact_fit()
    hidden = hidden_directions(fixed_model(fit))
    assert hidden.shape == (60, 2)
    rng = np.random.default_rng(3)
    traj = ordinary(4.0, 100.0, rng)
    zero = np.zeros_like(traj.q)
    gravity = [
        inverse_dynamics_regressor(CHAIN, traj.q, zero, zero, up=u) @ hidden
        for u in ([0.0, 0.0, 1.0], up_from_base_tilt(0.1, 0.5))
    ]
    typical = np.abs(inverse_dynamics_regressor(CHAIN, traj.q, zero, zero, up=[0, 0, 1.0])).max()
    assert np.abs(gravity[0]).max() < 1e-9 * typical  # no torque upright
    assert np.abs(gravity[1]).max() > 1e-3 * typical  # torque once tilted
    tilted = _exact_fit()
    tilted.up = up_from_base_tilt(0.1, 0.5)
    assert hidden_directions(fixed_model(tilted)).shape == (60, 0)
    assert hidden_directions(fixed_model(_identified()[3])).shape == (60, 0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_a_fit_made_on_an_upright_base_tracks_a_later_ramp(seed):
    """Identified on level ground, then a ramp of 5° in 30 s: the hidden moments are profiled
    out of every window, so the later tilt is tracked without their bias (2.6° without)."""
    errors, _, azimuth, fit = _identified(upright=True)
    rng = np.random.default_rng(seed)
    traj = ordinary(32.0, 1000.0, rng)
    tilt = lambda t: math.radians(5.0) * np.clip(t / 30.0, 0.0, 1.0)  # noqa: E731
    log = log_of(traj, up_from_base_tilt(tilt(traj.time), azimuth), errors, rng)
    track = track_up(
        fit,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=traj.acceleration,
        window=WINDOW,
        **WHITE,
    )
    err = _angle_deg(track.up, up_from_base_tilt(tilt(track.time_centre), azimuth))
    assert float(np.sqrt(np.mean(err[1:] ** 2))) <= 0.1, err
