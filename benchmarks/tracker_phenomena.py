"""Benchmark: false alarms of the tracker, with its defaults, in the synthetic world of real logs.

The world of ``benchmarks/real_phenomena.py`` (its arm, robot errors and phenomena: correlated
torque noise, an unmodelled torque fixed for the robot, encoder zero offsets, stamps with jitter
and a 6 % rate error, rest and smooth starts at each end): the arm is identified once on a 30 s
trajectory (quadratic friction, the rule of the real logs), then logs ten-minute random Fourier
trajectories, each with its own base frequency, each tracked by ``track_up`` with its defaults
(q̈ by the estimator's derivative rule). The base never moves: every alarm is false. It prints
the alarms per hour, the windows determined and tested, the fraction of tested windows within
4 standard deviations (window, model error and reference combined: ``change_chi2 <= 16``) of
their reference, and the same with the former defaults (2 s windows, white noise, drift rate,
no model error, chi-square at 1e-6 against 5 windows).

Run: ``python benchmarks/tracker_phenomena.py [hours]`` (default 10; about a minute per hour on
one core).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np
from real_phenomena import (
    CHAIN,
    HOME,
    OFFSETS,
    PHENOMENA_TRAJECTORY,
    RATE,
    WHITE,
    robot,
)

from gravdir import GravdirWarning, estimate_up_from_motion, track_up
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf
from gravdir.synthetic.motion import fourier_trajectory, motion_log

warnings.simplefilter("ignore", GravdirWarning)
PIECE = 600.0  # s of one trajectory
FORMER = {"window": 2.0, "covariance": "white", "drift": True, "model_error_std": 0.0,
          "significance": 1e-6, "reference_windows": 5}  # fmt: skip


def log_of(arm, sensor, error, duration: float, rng: np.random.Generator, step=None, **trajectory):
    """A log of `duration` s; with `step` ``(time, arm)`` the base is the other arm's from
    that time on (the torques of the two spliced: the base turned between two samples)."""
    traj = fourier_trajectory(6, duration, RATE, rng=rng, q0=HOME + rng.uniform(-0.3, 0.3, 6),
                              **PHENOMENA_TRAJECTORY, **trajectory)  # fmt: skip
    tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
    if step is not None:
        after = step[1].inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
        tau = np.where((traj.time >= step[0])[:, None], after, tau)
    return motion_log(traj, tau, rng=rng, noise_std=WHITE, slow_noise_std=0.7 * WHITE,
                      slow_correlation_time=0.1, model_error=error, encoder_offsets=OFFSETS,
                      **sensor)  # fmt: skip


def main(hours: float) -> None:
    up, arm, sensor, error = robot()
    first = log_of(arm, sensor, error, 30.0, np.random.default_rng(100))
    fit = estimate_up_from_motion(
        CHAIN, first.time, q=first.q, velocity=first.velocity, torque=first.torque,
        friction="coulomb-viscous-quadratic", covariance="hac",
    )  # fmt: skip
    settings = {"defaults": {}, "former defaults": FORMER}
    counts = {k: np.zeros(5) for k in settings}  # windows, determined, tested, within 4σ, alarms
    rng = np.random.default_rng(200)
    seconds, start = 0.0, time.process_time()
    for _ in range(max(round(hours * 3600 / PIECE), 1)):
        log = log_of(arm, sensor, error, PIECE, rng, base_frequency=rng.uniform(0.05, 0.15))
        series = {"q": log.q, "velocity": log.velocity, "torque": log.torque}
        for name, options in settings.items():
            part = track_up(fit, log.time, **series, **options)
            within = np.sum(part.change_chi2[part.tested] <= 16.0)
            counts[name] += [part.n_windows, part.determined.sum(), part.tested.sum(), within,
                             part.alarm.sum()]  # fmt: skip
        seconds += float(log.time[-1] - log.time[0])
    # A 1° step of the base at a random time in the middle of each of six more logs.
    latencies: list[str] = []
    for _ in range(6):
        azimuth = rng.uniform(-np.pi, np.pi)
        v = np.cross(up, [np.cos(azimuth), np.sin(azimuth), 0.0])
        v /= np.linalg.norm(v)  # a unit tangent of `up` in a random direction
        turned = up * np.cos(np.radians(1.0)) + v * np.sin(np.radians(1.0))
        other = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=turned)
        t_step = rng.uniform(250.0, 350.0)
        log = log_of(arm, sensor, error, PIECE, rng, step=(t_step, other),
                     base_frequency=rng.uniform(0.05, 0.15))  # fmt: skip
        part = track_up(fit, log.time, q=log.q, velocity=log.velocity, torque=log.torque)
        early = part.alarm_times[part.alarm_times <= log.time[0] + t_step]
        late = part.alarm_times[part.alarm_times > log.time[0] + t_step]
        latencies.append(
            "early" if early.size else f"{late[0] - log.time[0] - t_step:.0f} s" if late.size
            else "missed"
        )  # fmt: skip
    print(f"{seconds / 3600:.2f} hours of synthetic log with the phenomena of real logs, "
          f"{time.process_time() - start:.0f} s of CPU")  # fmt: skip
    for name, (windows, determined, tested, within, alarms) in counts.items():
        print(f"  {name}: {alarms:.0f} alarms ({alarms * 3600 / seconds:.2f} per hour) in "
              f"{windows:.0f} windows, {determined / windows:.1%} determined, {tested:.0f} "
              f"tested, {within / max(tested, 1):.1%} of them within 4σ of their "
              "reference")  # fmt: skip
    print("  1° step of the base in the middle of six ten-minute logs (defaults): first alarm "
          + ", ".join(latencies) + " after the step (early: an alarm before it; missed: none "
          "after it)")  # fmt: skip


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)
