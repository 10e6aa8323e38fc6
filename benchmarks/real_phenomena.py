"""Benchmark: today's motion estimator in a synthetic world with the phenomena of real logs.

One synthetic 6-joint arm (the UR5e-like URDF, base tilted 3°) logs K random Fourier
trajectories (20 s at a nominal 100 Hz, 5 harmonics of 0.1 Hz, the arm's usual pose ± 0.3 rad),
with per-joint gain, offset, Coulomb and viscous errors fixed for the robot. Each trajectory goes
through ``estimate_up_from_motion`` with its defaults, q̈ from ``joint_acceleration`` on the log's
own time stamps (0.2 s window, the estimator's own), and ``fuse_up`` tests whether the K
estimates agree:

(a) white torque noise only (0.3 N·m on J1-J3, 0.1 N·m on the wrists: a third of a UR10e's,
    as the UR5e-like arm's gravity torques are about a third), regular stamps: χ²/dof across
    the trajectories should be about 1;
(b) the same robot with the phenomena of real logs, at round orders of magnitude (not values
    fitted to any log): a slower correlated torque noise (0.7 × the white level, correlation
    time 0.1 s), one unmodelled torque per robot (quadratic velocity friction of scale 2, 2, 1,
    0.1, 0.1, 0.1 N·m/(rad/s)² and two harmonics of each joint's angle of 0.3 N·m on J1-J3,
    0.03 N·m on the wrists), zero offsets of 0.002 rad on J2 and J3, stamps with 1 ms jitter and
    a rate 6 % slow, and a 1 s rest plus a 2 s smooth start and stop at each end. No gaps and no
    corrupted rows: today's estimator has no rule for either (it refuses the corrupted values,
    and its derivatives would span a gap).

It prints χ²/dof and p of ``fuse_up``, the RMS angle of the estimates to the truth and to their
fusion against the RMS reported ``up_std_deg``. With ``--track`` it also identifies on trajectory
0 and runs ``track_up`` (defaults) over the others, and prints the alarms per hour of log.

Run: ``python benchmarks/real_phenomena.py [K] [--track]`` (default K = 6; about 3 minutes on
one core for both worlds, the tracker part adds about a minute).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from gravdir import (
    GravdirWarning,
    chain_from_urdf,
    estimate_up_from_motion,
    fuse_up,
    joint_acceleration,
    track_up,
)
from gravdir.synthetic import (
    UR5E_LIKE_URDF,
    arm_from_urdf,
    random_model_error,
    up_from_base_tilt,
)
from gravdir.synthetic.motion import fourier_trajectory, motion_log

warnings.simplefilter("ignore", GravdirWarning)
CHAIN = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
HOME = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
RATE, DURATION, WINDOW = 100.0, 20.0, 0.2
# Torque magnitudes a third of a UR10e's: the UR5e-like arm's gravity torques are about 3 times
# smaller, so the ratio of noise and model error to the tilt signature stays of that order.
WHITE = np.array([0.3, 0.3, 0.3, 0.1, 0.1, 0.1])
PHENOMENA_TRAJECTORY = {"time_jitter": 1e-3, "rate_error": 0.06, "rest_time": 1.0,
                        "ramp_time": 2.0}  # fmt: skip
QUADRATIC = np.array([2.0, 2.0, 1.0, 0.1, 0.1, 0.1])
HARMONIC = np.array([0.3, 0.3, 0.3, 0.03, 0.03, 0.03])
OFFSETS = np.array([0.0, 0.002, 0.002, 0.0, 0.0, 0.0])


def angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b)))


def robot() -> tuple:
    """The robot of this world (seeded): `up` of its base (tilted 3°), the arm on it, its
    joints' gain, offset, Coulomb and viscous errors and its unmodelled torque."""
    rng = np.random.default_rng(7)
    up = up_from_base_tilt(np.radians(3.0), 0.7)
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    sensor = {
        "gains": rng.uniform(0.9, 1.1, 6),
        "offsets": rng.uniform(-1.0, 1.0, 6),
        "coulomb": rng.uniform(1.0, 5.0, 6),
        "viscous": rng.uniform(0.5, 3.0, 6),
    }
    error = random_model_error(6, rng=rng, quadratic=QUADRATIC, harmonic_std=HARMONIC)
    return up, arm, sensor, error


def world(k: int, phenomena: bool) -> list[dict]:
    """K logs of one robot: the trajectory, its log and the q̈ a user derives from it."""
    up, arm, sensor, error = robot()
    logs = []
    for i in range(k):
        rng = np.random.default_rng(100 + i)
        options = PHENOMENA_TRAJECTORY if phenomena else {}
        traj = fourier_trajectory(6, DURATION, RATE, rng=rng, q0=HOME + rng.uniform(-0.3, 0.3, 6),
                                  **options)  # fmt: skip
        tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
        extra = (
            {"slow_noise_std": 0.7 * WHITE, "slow_correlation_time": 0.1, "model_error": error,
             "encoder_offsets": OFFSETS}
            if phenomena else {}
        )  # fmt: skip
        log = motion_log(traj, tau, rng=rng, noise_std=WHITE, **sensor, **extra)
        qdd = joint_acceleration(log.time, velocity=log.velocity, window=WINDOW, axis=0)
        logs.append({"up": up, "log": log, "qdd": qdd})
    return logs


def estimate(logs: list[dict]) -> list:
    fits = []
    for item in logs:  # fits[0] identifies the tracker's parameters
        log = item["log"]
        fits.append(
            estimate_up_from_motion(
                CHAIN,
                log.time,
                q=log.q,
                velocity=log.velocity,
                acceleration=item["qdd"],
                torque=log.torque,
            )
        )
    return fits


def report(label: str, logs: list[dict], fits: list, seconds: float) -> None:
    up = logs[0]["up"]
    undetermined = [i for i, f in enumerate(fits) if not np.isfinite(f.up_std_deg)]
    fits = [f for f in fits if np.isfinite(f.up_std_deg)]
    if undetermined:
        print(f"\n{label}: trajectories {undetermined} do not determine `up` (left out)")
    fused = fuse_up(*fits)
    to_truth = np.array([angle(f.up, up) for f in fits])
    to_fusion = np.array([angle(f.up, fused.up) for f in fits])
    std = np.array([f.up_std_deg for f in fits])
    print(f"\n{label}: {len(fits)} trajectories, {seconds / len(fits):.1f} s per estimate")
    print(f"   fuse_up chi2/dof {fused.chi2 / fused.dof:.2f} (chi2 {fused.chi2:.1f} on "
          f"{fused.dof} dof, p = {fused.p_value:.2g})")  # fmt: skip
    print(f"   RMS angle to the truth {np.sqrt(np.mean(to_truth**2)):.3f}°, to the fusion "
          f"{np.sqrt(np.mean(to_fusion**2)):.3f}°; RMS reported up_std_deg "
          f"{np.sqrt(np.mean(std**2)):.3f}° (ratio to the truth "
          f"{np.sqrt(np.mean(to_truth**2) / np.mean(std**2)):.1f})")  # fmt: skip
    print(
        "   per trajectory, angle to the truth / reported std (°): "
        + ", ".join(f"{a:.3f}/{s:.3f}" for a, s in zip(to_truth, std, strict=True))
    )


def tracker(logs: list[dict], fits: list, label: str) -> None:
    alarms, seconds, windows, determined = 0, 0.0, 0, 0
    for item in logs[1:]:
        log = item["log"]
        track = track_up(fits[0], log.time, q=log.q, velocity=log.velocity, torque=log.torque,
                         acceleration=item["qdd"])  # fmt: skip
        alarms += int(np.count_nonzero(track.alarm))
        windows += int(track.alarm.size)
        determined += int(np.count_nonzero(track.determined))
        seconds += float(log.time[-1] - log.time[0])
    print(f"   {label} tracker (identified on trajectory 0, track_up defaults over "
          f"{len(logs) - 1} others): {alarms} alarms in {windows} windows "
          f"({determined} determined) over {seconds:.0f} s: {3600 * alarms / seconds:.0f} per "
          "hour")  # fmt: skip


def main() -> None:
    args = [a for a in sys.argv[1:] if a.isdigit()]
    k = int(args[0]) if args else 6
    for label, phenomena in (("(a) white noise only", False), ("(b) real phenomena", True)):
        logs = world(k, phenomena)
        t0 = time.perf_counter()
        fits = estimate(logs)
        report(label, logs, fits, time.perf_counter() - t0)
        if "--track" in sys.argv:
            tracker(logs, fits, label[:3])


if __name__ == "__main__":
    main()
