"""The time stamps of a motion log: the derivative rule of gravdir.motion and the `time` checks.

The estimator and the tracker derive q̈ from the logged velocity on the log's own stamps,
split at gaps (intervals beyond GAP_FACTOR times the median), each stretch's ends left out
(``gravdir.motion._samples.acceleration_from_log``). Torques come from ``tests/_newton_euler.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _newton_euler import random_bodies, random_chain, reference_torques

from gravdir import joint_acceleration
from gravdir.errors import InsufficientDataError
from gravdir.motion import estimate_up_from_motion, track_up
from gravdir.motion._derive import GAP_FACTOR
from gravdir.motion._samples import DEFAULT_DERIVATIVE_WINDOW, acceleration_from_log
from gravdir.synthetic.motion import FourierTrajectory, fourier_trajectory

G = 9.80665
RATE = 100.0  # nominal samples per second
SLOW = 0.07  # the stamps' true mean interval is 7% longer than the nominal one, as on real logs
UP = np.array([np.sin(0.4) * np.cos(1.1), np.sin(0.4) * np.sin(1.1), np.cos(0.4)])


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b))


def _arm_and_trajectory(seed: int) -> tuple[Any, tuple[np.ndarray, ...], FourierTrajectory]:
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, 3, "dh")
    bodies = random_bodies(rng, 3)
    traj = fourier_trajectory(3, 12.0, RATE, rng=rng, base_frequency=0.25, max_velocity=2.0)
    return chain, bodies, traj


def _log(
    chain: Any, bodies: tuple[np.ndarray, ...], traj: FourierTrajectory, time: np.ndarray
) -> dict[str, np.ndarray]:
    """The trajectory at `time`, its torques with noise of 0.1% of each joint's peak (a fixed
    draw per sample index)."""
    at = traj.at(time)
    tau = reference_torques(chain, at.q, at.velocity, at.acceleration, *bodies, G * UP)
    noise = np.random.default_rng(1).standard_normal(tau.shape)[: time.size]
    tau = tau + 1e-3 * np.abs(tau).max(axis=0) * noise
    return {"q": at.q, "velocity": at.velocity, "torque": tau}


def _fit(chain: Any, time: np.ndarray, log: dict[str, np.ndarray]) -> Any:
    kw: dict[str, Any] = {"load_friction": "none", "ripple_components": 0, "n_grid": 100}
    return estimate_up_from_motion(chain, time, **log, **kw)


def test_jittered_stamps_give_the_uniform_estimate_and_a_nominal_rate_does_not() -> None:
    """Stamps 7% slower than nominal and jittered by ±20% of the interval: differentiated on
    the stamps, `up` agrees with the log sampled uniformly at the true rate within a fraction
    of its σ; differentiated at the nominal rate (``np.arange(N) / rate``) q̈ is 7% too large
    and the jitter lands in it, and `up` is measurably worse."""
    chain, bodies, traj = _arm_and_trajectory(3)
    interval = (1.0 + SLOW) / RATE
    n = int(11.9 / interval)
    uniform_time = np.arange(n) * interval
    jitter = np.random.default_rng(2).uniform(-0.1, 0.1, n) * interval  # intervals within ±20%
    stamps = uniform_time + jitter
    steps = np.diff(stamps) / interval
    assert steps.min() < 0.85 and steps.max() > 1.15
    uniform = _fit(chain, uniform_time, _log(chain, bodies, traj, uniform_time))
    log = _log(chain, bodies, traj, stamps)
    stamped = _fit(chain, stamps, log)
    nominal = _fit(chain, np.arange(n) / RATE, log)
    sigma = np.radians(stamped.up_std_deg)
    assert _angle(stamped.up, uniform.up) < 0.5 * sigma
    assert _angle(stamped.up, UP) < 3.0 * sigma
    # Measured: 0.02° between the two, 0.14° and 0.44° from the truth, σ 0.10°.
    assert _angle(nominal.up, UP) > 2.0 * _angle(stamped.up, UP)
    assert _angle(nominal.up, UP) > 3.0 * sigma


def test_gaps_split_the_derivative_and_barely_move_up() -> None:
    """Two runs of rows (7 and 18) missing from the log: the derivative is taken on each
    stretch between them, their ends left out, and `up` moves by less than its σ."""
    chain, bodies, traj = _arm_and_trajectory(4)
    time = np.arange(int(11.9 * RATE)) / RATE
    keep = np.ones(time.size, dtype=bool)
    keep[300:307] = False
    keep[800:818] = False
    full = _fit(chain, time, _log(chain, bodies, traj, time))
    log = {k: v[keep] for k, v in _log(chain, bodies, traj, time).items()}
    gapped = _fit(chain, time[keep], log)
    assert _angle(gapped.up, full.up) < np.radians(full.up_std_deg)
    # The samples within half a window of each gap are left out, for every joint.
    half = int(round(0.5 * DEFAULT_DERIVATIVE_WINDOW * RATE))
    assert np.all(full.n_used - gapped.n_used >= 7 + 18 + 4 * half - 4)


def test_no_derivative_spans_a_gap() -> None:
    """A velocity that jumps across a gap of 10 rows: a derivative across the gap would see an
    acceleration of hundreds of rad/s² there; the rule gives the true 0.5 rad/s² wherever a
    sample counts and leaves out the samples within half a window of the gap."""
    time = np.delete(np.arange(400) / RATE, np.s_[150:160])
    velocity = np.stack([0.5 * time + 3.0 * (time > 1.55), np.sin(time)], axis=-1)
    across = joint_acceleration(time, velocity=velocity, window=0.2, axis=0)
    near = np.abs(time - 1.55) < 0.2
    assert np.max(np.abs(across[near, 0] - 0.5)) > 10.0  # what the rule avoids
    acceleration, counts = acceleration_from_log(time, velocity, 0.2)
    np.testing.assert_allclose(acceleration[counts, 0], 0.5, atol=1e-9)
    np.testing.assert_allclose(acceleration[counts, 1], np.cos(time[counts]), atol=1e-4)
    half = 0.1 - 1e-9  # half the window, less rounding
    gap_start, gap_end = time[149], time[150]
    left_out = ((time <= gap_start) & (time >= gap_start - half)) | (
        (time >= gap_end) & (time <= gap_end + half)
    )
    assert not counts[left_out].any()
    ends = (time <= time[0] + half) | (time >= time[-1] - half)
    assert not counts[ends].any()
    far = np.minimum.reduce([time - time[0], time[-1] - time, np.abs(time - gap_start),
                             np.abs(time - gap_end)]) > 0.1 + 1e-9  # fmt: skip
    assert counts[far].all()
    assert np.all(acceleration[~counts] == 0.0)


def test_jitter_is_not_a_gap_and_a_short_stretch_counts_for_nothing() -> None:
    """Intervals of up to 1.3 times the median do not split the log; one of GAP_FACTOR times
    and a bit does. A stretch shorter than the window contributes no sample; a log with no
    stretch longer than the window is refused."""
    assert GAP_FACTOR == 2.0
    rng = np.random.default_rng(5)
    steps = np.full(299, 0.01)
    steps[::7] = 0.013  # jitter of real logs
    time = np.concatenate([[0.0], np.cumsum(steps)])
    velocity = np.sin(time)[:, None] + 0.0 * rng.normal(size=(300, 1))
    _, counts = acceleration_from_log(time, velocity, 0.2)
    assert counts.sum() == 300 - 2 * np.count_nonzero(time <= 0.1)  # only the two ends
    split = time.copy()
    split[150:] += 0.011  # one interval of 2.1 times the median
    _, counts = acceleration_from_log(split, velocity, 0.2)
    assert not counts[(split > split[149] - 0.1) & (split < split[150] + 0.1)].any()
    short = np.concatenate([time[:100], time[100:115] + 1.0, time[115:] + 2.0])
    _, counts = acceleration_from_log(short, velocity, 0.2)
    assert not counts[100:115].any() and counts[:100].any() and counts[115:].any()
    with pytest.raises(InsufficientDataError, match="`time`.*derivative_window|`time`"):
        acceleration_from_log(time[:15], velocity[:15], 0.2)


def test_the_tracker_uses_the_same_rule() -> None:
    """track_up without `acceleration` leaves out the samples the estimator's rule leaves out
    (here: half a window each side of a gap) and uses the same window."""
    chain, bodies, traj = _arm_and_trajectory(6)
    time = np.delete(np.arange(600) / RATE, np.s_[250:262])
    log = _log(chain, bodies, traj, time)
    fit = _fit(chain, time, log)
    acceleration, counts = acceleration_from_log(time, log["velocity"], 0.3)
    track = track_up(
        fit, time, **log, derivative_window=0.3, window=1.0, bandwidth=0.5, min_speed=0.0
    )
    for k in range(track.n_windows):
        inside = (time >= track.time_start[k]) & (time < track.time_end[k])
        assert track.n_samples[k] == 3 * np.count_nonzero(counts & inside)
    given = track_up(
        fit, time, **log, acceleration=acceleration, window=1.0, bandwidth=0.5, min_speed=0.0
    )
    assert np.all(given.n_samples >= track.n_samples)
    assert np.any(given.n_samples > track.n_samples)


# --------------------------------------------------------------------------------------------
# The checks of `time`


def _small() -> tuple[Any, np.ndarray, dict[str, np.ndarray]]:
    chain, bodies, traj = _arm_and_trajectory(7)
    time = np.arange(400) / RATE
    return chain, time, _log(chain, bodies, traj, time)


@pytest.mark.parametrize("function", ["estimate", "track"])
def test_time_that_does_not_increase_is_refused_naming_its_first_row(function: str) -> None:
    chain, time, log = _small()
    fit = _fit(chain, time, log) if function == "track" else None

    def call(t: np.ndarray) -> Any:
        if fit is not None:
            return track_up(fit, t, **log, window=1.0, bandwidth=0.5)
        return estimate_up_from_motion(chain, t, **log)

    bad = time.copy()
    bad[[12, 30]] = bad[[11, 29]]
    with pytest.raises(ValueError, match=r"`time` to be strictly increasing.* row 12, the first "):
        call(bad)
    bad = time.copy()
    bad[5] = 1.0  # the stamp of another sample: row 6 is then earlier than row 5
    with pytest.raises(ValueError, match=r"`time` to be strictly increasing.* row 6\.$"):
        call(bad)
    for value, what in ((np.nan, "NaN"), (np.inf, "an infinity")):
        bad = time.copy()
        bad[[40, 41, 90]] = value
        with pytest.raises(ValueError, match=r"`time` to be finite.* at row 40, the first of 3"):
            call(bad)
        assert what  # both non-finite kinds are named by row


def test_time_in_milliseconds_is_refused_naming_derivative_window() -> None:
    """Stamps in milliseconds put one sample in the derivative's 0.2 s window: the error names
    the estimator's own argument, `derivative_window` (not the `window` of
    `joint_acceleration`), and asks whether `time` is in seconds."""
    chain, time, log = _small()
    with pytest.raises(ValueError, match=r"`derivative_window` to span .* in seconds\?"):
        estimate_up_from_motion(chain, 1000.0 * time, **log)


def test_joint_angles_where_time_stands_are_refused_saying_q_is_keyword_only() -> None:
    """An old call (joint angles first, no `q=`) fails with TypeError naming the missing `q`;
    joint angles passed as `time` beside `q=` are refused saying `q` is keyword-only."""
    chain, time, log = _small()
    q = log.pop("q")
    with pytest.raises(TypeError, match=r"'q'"):
        estimate_up_from_motion(chain, q, **log)
    with pytest.raises(ValueError, match=r"`time` of shape \(400,\).*`q` is keyword-only"):
        estimate_up_from_motion(chain, q, q=q, **log)
    with pytest.raises(ValueError, match=r"`time` of shape \(400,\) like the samples of `q`"):
        estimate_up_from_motion(chain, time[:-1], q=q, **log)


def test_nan_rows_dropped_under_omit_make_a_gap_only_when_long() -> None:
    """Rows holding a NaN are dropped before the rule: one dropped row leaves an interval of
    twice the median, not beyond it, so nothing more is left out; three make a gap."""
    chain, time, log = _small()
    base = estimate_up_from_motion(chain, time, **log, nan_policy="omit")
    for rows, extra in (([200], 0), ([200, 201, 202], 1)):
        torque = log["torque"].copy()
        torque[rows, 1] = np.nan
        est = estimate_up_from_motion(chain, time, **{**log, "torque": torque}, nan_policy="omit")
        assert est.n_omitted == len(rows)
        lost = base.n_used - est.n_used
        if extra:
            assert np.all(lost >= len(rows) + 18)  # half a window each side of the gap
        else:
            assert np.all(lost <= len(rows))
