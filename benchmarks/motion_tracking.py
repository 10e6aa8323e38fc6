"""Tracking `up` from ordinary motion, and the excitation planner: the figures of the docs.

Run: ``python benchmarks/motion_tracking.py [n_seeds]`` (default 10). For each seed, a
UR5e-like arm (``gravdir.synthetic``) with realistic torque errors is identified once by
``estimate_up_from_motion`` on 20 s of a fast random excitation at 500 Hz, then

* tracks 32 s of ordinary motion at 1 kHz on a base whose tilt ramps by 5° over 30 s (RMS error
  at the windows' centres after the first window);
* tracks 24 s with a 1° step of the base at a random time (latency of the first alarm, in
  windows, counted from the step);
* tracks one hour of ordinary motion without steps at 50 Hz, the noise scaled by
  sqrt(50/1000) so that each window carries the information of a 1 kHz log (false alarms).

The same is repeated with the identification on an upright base (tilt 0), where the parameters
that only a tilted base reveals are not identified (the tracker profiles their torques out).
Finally the planner: a 10 s plan against the best of 20 random feasible trajectories with the
same limits.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np

from gravdir.dynamics import inertial_parameters
from gravdir.frames import angle_between
from gravdir.motion import (
    UpTracker,
    crlb_up_from_motion,
    plan_motion_excitation,
    track_up,
)
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf, up_from_base_tilt
from gravdir.urdf import inertials_from_urdf

# The synthetic world of the tracker's tests: a UR5e-like arm on a base whose `up` may change.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _tilting_world import CHAIN, identify, log_of, ordinary, sensor_errors  # noqa: E402

# The synthetic world's torque noise is white: its figures are of 2 s windows with the
# white-noise form and the drift rate, by name (the defaults are for real logs).
WHITE = {
    "window": 2.0,
    "covariance": "white",
    "drift": True,
    "model_error_std": 0.0,
    "significance": 1e-6,
    "reference_windows": 5,
}


def one_seed(seed, upright, hours=1.0):
    rng = np.random.default_rng(seed)
    errors = sensor_errors(rng)
    tilt0 = 0.0 if upright else rng.uniform(math.radians(3.0), math.radians(10.0))
    azimuth = rng.uniform(-np.pi, np.pi)
    up0 = up_from_base_tilt(tilt0, azimuth)
    fit = identify(rng, errors, up0)
    out = {"fit_error": float(np.degrees(angle_between(fit.up, up0)))}
    # Ramp.
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
        **WHITE,
    )
    err = np.degrees(angle_between(track.up, up_from_base_tilt(tilt(track.time_centre), azimuth)))
    out["ramp_rms"] = float(np.sqrt(np.mean(err[1:] ** 2)))
    out["window_std"] = float(np.median(track.up_std_deg))
    # Step.
    traj = ordinary(24.0, 1000.0, rng)
    t_step = rng.uniform(10.0, 14.0)
    turned = (
        up_from_base_tilt(tilt0 + math.radians(1.0), azimuth)
        if tilt0 > 0
        else up_from_base_tilt(math.radians(1.0), rng.uniform(-np.pi, np.pi))
    )
    up = np.where((traj.time < t_step)[:, None], up0, turned)
    log = log_of(traj, up, errors, rng)
    track = track_up(
        fit,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=traj.acceleration,
        **WHITE,
    )
    alarms = track.alarm_times
    out["early_alarm"] = bool(np.any(alarms <= t_step))
    late = alarms[alarms > t_step]
    out["latency_windows"] = float((late[0] - t_step) / 2.0) if late.size else math.inf
    # An hour without steps.
    scale = math.sqrt(50.0 / 1000.0)
    tracker = UpTracker(dataclasses.replace(fit, noise_std=fit.noise_std * scale), **WHITE)
    for k in range(int(6 * hours)):
        traj = ordinary(600.0, 50.0, rng, base_frequency=rng.uniform(0.05, 0.15))
        log = log_of(traj, up0, errors, rng, scale)
        tracker.update(
            log.time[:-1] + 600.0 * k,
            q=log.q[:-1],
            velocity=log.velocity[:-1],
            torque=log.torque[:-1],
            acceleration=traj.acceleration[:-1],
        )
    out["false_alarms_per_hour"] = tracker.n_alarms / hours
    return out


def planner(n_random=20):
    bodies = inertials_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    theta = inertial_parameters(bodies.mass, bodies.com_in_link, bodies.inertia_in_link)
    up = np.array([0.05, 0.03, 1.0]) / np.linalg.norm([0.05, 0.03, 1.0])
    limits = {
        "q_limits": np.array([[-np.pi, np.pi], [-np.pi, 0.0], [-2.5, 2.5]] + 3 * [[-np.pi, np.pi]]),
        "velocity_limits": np.full(6, 1.5),
        "acceleration_limits": np.full(6, 5.0),
        "torque_limits": np.array([150.0, 150.0, 150.0, 28.0, 28.0, 28.0]),
    }
    noise = 0.005 * np.array([63.0, 62.0, 20.0, 2.0, 2.0, 2.0])
    start = time.perf_counter()
    plan = plan_motion_excitation(
        CHAIN, theta, duration=10.0, noise_std=noise, up_hint=up, max_iter=100, **limits
    )
    seconds = time.perf_counter() - start
    t = np.arange(2000) / 200.0
    rng = np.random.default_rng(2024)
    ell = np.arange(1, 6)
    grid = np.linspace(0.0, 10.0, 1001)
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    centre = limits["q_limits"].mean(axis=1)

    def states(a, b, times):
        wl = 2 * np.pi / 10.0 * ell
        s, c = np.sin(np.outer(times, wl)), np.cos(np.outer(times, wl))
        return (
            centre + (s / wl) @ a.T - (c / wl) @ b.T,
            c @ a.T + s @ b.T,
            (-s * wl) @ a.T + (c * wl) @ b.T,
        )

    def ok(q, qd, qdd):
        lo, hi = limits["q_limits"].T
        tau = arm.inverse_dynamics(q, qd, qdd)
        return (
            np.all(q >= lo)
            and np.all(q <= hi)
            and np.all(np.abs(qd) <= 1.5)
            and np.all(np.abs(qdd) <= 5.0)
            and np.all(np.abs(tau) <= limits["torque_limits"])
        )

    def bound(q, qd, qdd):
        return crlb_up_from_motion(
            CHAIN,
            q,
            velocity=qd,
            acceleration=qdd,
            inertial_parameters=theta,
            joint_parameters=np.zeros((6, 4)),
            gains=np.ones(6),
            noise_std=noise,
            up_hint=up,
        ).up_std_deg / math.sqrt(5.0)  # 200 Hz -> 1 kHz

    randoms = []
    for _ in range(n_random):
        a = rng.normal(size=(6, 5)) / ell
        b = rng.normal(size=(6, 5)) / ell
        a -= a.mean(axis=1, keepdims=True)
        b -= np.outer(b @ ell, ell) / (ell @ ell)
        lo, hi = 0.0, 10.0
        for _ in range(20):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if ok(*states(mid * a, mid * b, grid)) else (lo, mid)
        randoms.append(bound(*states(lo * a, lo * b, t)))
    return plan, seconds, np.array(randoms)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    for upright in (False, True):
        rows = [one_seed(100 + s, upright) for s in range(n)]
        label = "identified on an upright base" if upright else "identified at 3-10° tilt"
        ramp = np.array([r["ramp_rms"] for r in rows])
        lat = np.array([r["latency_windows"] for r in rows])
        fa = np.array([r["false_alarms_per_hour"] for r in rows])
        print(f"{label}: {n} seeds")
        print(f"  fit error median {np.median([r['fit_error'] for r in rows]):.4f}°")
        print(f"  window up_std median {np.median([r['window_std'] for r in rows]):.4f}°")
        print(f"  ramp RMS: median {np.median(ramp):.4f}°, max {ramp.max():.4f}°")
        print(
            f"  step latency (windows): max {lat.max():.2f}, early alarms "
            f"{sum(r['early_alarm'] for r in rows)}"
        )
        print(f"  false alarms per hour: mean {fa.mean():.2f}, max {fa.max():.0f}")
    plan, seconds, randoms = planner()
    print(f"planner: {plan!r} in {seconds:.1f} s")
    print(f"  random feasible (1 kHz): best {randoms.min():.4f}°, median {np.median(randoms):.4f}°")


if __name__ == "__main__":
    main()
