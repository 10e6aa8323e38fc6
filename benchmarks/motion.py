"""Benchmark: `up` from ordinary motion (``estimate_up_from_motion``) -- accuracy, bound, cost.

Five parts, all on arms whose torques come from the synthetic arm models (``SyntheticUrdfArm``
for the UR5e-like URDF arm: explicit transforms and cross products, not the regressor):

1. Torque errors only, exact q, q', q'': one 20 s, 1 kHz random Fourier trajectory, per-joint gain
   ±15%, offsets ±3%, Coulomb 2-10% and viscous friction, noise 0.5% of each joint's peak. The RMS
   direction error over the draws against the Cramér-Rao bound (``crlb_up_from_motion``), and the
   reported covariance against the empirical one. The regressors are formed once for all draws.
2. Encoder noise as well (1e-5 rad on the positions, velocities differenced from them,
   accelerations differentiated by the estimator): a new trajectory and tilt (0-30°) per draw;
   median, 95th percentile and the time per estimate.
3. The sweep method on the same arm and sensor errors (``estimate_up`` on J1 over 180° and J2 over
   120° at three J1 positions, 0.5 rad/s forward and back, 100 Hz): the same statistics and the
   robot time the sweeps take.
4. Apparent gravity: the direction error when a constant horizontal base acceleration is not
   passed in.
5. The full realistic sensor errors (``realistic_sensors``: load-dependent friction and gear
   ripple as well), eight logs, with the defaults and with the load-friction term or the ripple
   search switched off.

6. Cost (``--cost``): CPU seconds per second of log of ``estimate_up_from_motion`` with its
   defaults (q'' derived from the stamps, the ripple search and the load-friction passes) on a
   60 s, 100 Hz log of the UR5e-like arm with the realistic sensor errors, and on a 60 s, 1 kHz
   log of a seeded 7-joint DH chain (link lengths, offsets and twists drawn as in
   ``benchmarks/motion_joints.py``) with gains, offsets, friction and noise; and of ``track_up``
   over each log with the parameters of that estimate. Medians of three interleaved runs in one
   process, after one call on a short log (the first call imports SciPy's signal module).

Run: ``python benchmarks/motion.py [draws]`` (default 100 draws for parts 2-3; about 20 minutes
on two shared cores); ``python benchmarks/motion.py --realistic N`` runs part 5 alone on N logs;
``OPENBLAS_NUM_THREADS=1 python benchmarks/motion.py --cost`` part 6 alone (about two minutes).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np

from gravdir import (
    GravdirWarning,
    chain_from_dh,
    chain_from_urdf,
    estimate_up,
    estimate_up_from_motion,
    fit_sweep,
    joint_sweep_from_chain,
)
from gravdir.dynamics import base_parameters, inertial_parameters, inverse_dynamics_regressor
from gravdir.kinematics import SerialChain
from gravdir.motion import crlb_up_from_motion, track_up
from gravdir.motion._design import build_design, build_designs
from gravdir.motion._estimate import _fit, _Search
from gravdir.motion._inputs import DEFAULT_SPEED_TAPER, friction_mask, sample_weights
from gravdir.sweep import joint_acceleration
from gravdir.synthetic import UR5E_LIKE_URDF, SyntheticUrdfArm, arm_from_urdf, realistic_sensors
from gravdir.synthetic.motion import FourierTrajectory, fourier_trajectory, motion_log
from gravdir.urdf import inertials_from_urdf

warnings.simplefilter("ignore", GravdirWarning)
G = 9.80665
RATE = 1000.0
DURATION = 20.0
CHAIN = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")


def angle(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b)))


def up_from(tilt: float, azimuth: float) -> np.ndarray:
    return np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)])


def sensor_errors(rng: np.random.Generator, peak: np.ndarray) -> dict[str, np.ndarray]:
    n = peak.shape[0]
    return {
        "gains": rng.uniform(0.85, 1.15, n),
        "offsets": rng.uniform(-0.03, 0.03, n) * peak,
        "coulomb": rng.uniform(0.02, 0.10, n) * peak,
        "viscous": rng.uniform(0.0, 0.05, n) * peak,
    }


def random_dh_arm(rng: np.random.Generator, n: int) -> tuple[SerialChain, np.ndarray]:
    """A DH chain of `n` joints with drawn link lengths, offsets and twists, and its drawn
    inertial parameters (the arms of this file's seven-joint log and of motion_joints.py)."""
    alpha = rng.choice([-np.pi / 2, np.pi / 2], n) + rng.uniform(-0.3, 0.3, n)
    chain = chain_from_dh(rng.uniform(0.0, 0.2, n), np.zeros(n), rng.uniform(0.05, 0.3, n), alpha)
    pi = inertial_parameters(
        rng.uniform(0.5, 3.0, n),
        rng.uniform(-0.1, 0.1, (n, 3)),
        np.array([np.diag(rng.uniform(0.005, 0.05, 3)) for _ in range(n)]),
    )
    return chain, pi


def realistic_torque(
    arm: SyntheticUrdfArm, traj: FourierTrajectory, rng: np.random.Generator
) -> np.ndarray:
    """The torques `arm` logs along `traj` through one ``realistic_sensors`` sensor per joint."""
    tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    return np.stack(
        [s.measure(traj.q[:, j], traj.velocity[:, j], tau[:, j], rng) for j, s in
         enumerate(sensors)], axis=-1,
    )  # fmt: skip


def torque_only(rng: np.random.Generator, draws: int) -> None:
    up = up_from(np.radians(20.0), 0.8)
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    traj = fourier_trajectory(6, DURATION, RATE, rng=rng)
    tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
    peak = np.abs(tau).max(axis=0) + 0.5  # the wrist joints carry little gravity
    err = sensor_errors(rng, peak)
    sigma = 0.005 * peak
    body = inertials_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    bound = crlb_up_from_motion(
        CHAIN,
        traj.q,
        velocity=traj.velocity,
        acceleration=traj.acceleration,
        inertial_parameters=inertial_parameters(body.mass, body.com_in_link, body.inertia_in_link),
        joint_parameters=np.stack([0 * sigma, err["coulomb"], err["viscous"], err["offsets"]], 1),
        gains=err["gains"],
        noise_std=sigma,
        up_hint=up,
    )
    weights = sample_weights(traj.velocity, None, 0.02, None, None, DEFAULT_SPEED_TAPER)
    n_used = np.count_nonzero(weights > 0, axis=0)
    base = base_parameters(CHAIN)
    fits, seconds = [], 0.0
    for start in range(0, draws, 50):  # 50 logs at a time keep the memory bounded
        logs = np.array(
            [
                motion_log(traj, tau, rng=rng, noise_std=sigma, **err).torque
                for _ in range(min(50, draws - start))
            ]
        )
        designs = build_designs(
            CHAIN, base, traj.q, traj.velocity, traj.acceleration, weights, logs, None, G,
            np.ones(4, bool),
        )  # fmt: skip
        t0 = time.perf_counter()
        fits += [
            _fit(d, CHAIN, None, None, _Search(400, 3, 200, 1e-10), n_used, 0, frozenset())
            for d in designs
        ]
        seconds += time.perf_counter() - t0
    per_fit = seconds / draws
    errors = np.array([f.up - up for f in fits])
    empirical = errors.T @ errors / draws
    reported = np.mean([f.up_cov for f in fits], axis=0)
    rms = np.degrees(np.sqrt(np.trace(empirical)))
    print(f"\n1. UR5e-like, torque errors only, {draws} draws of one 20 s 1 kHz trajectory")
    print(f"   RMS error {rms:.4f}°, Cramér-Rao bound {bound.up_std_deg:.4f}°, ratio "
          f"{rms / bound.up_std_deg:.3f}")  # fmt: skip
    print(f"   trace(reported cov) / trace(empirical cov) = "
          f"{np.trace(reported) / np.trace(empirical):.3f}")  # fmt: skip
    ang = [angle(f.up, up) for f in fits]
    print(f"   median {np.median(ang):.4f}°, p95 {np.percentile(ang, 95):.4f}°, "
          f"search on the Gram blocks {1e3 * per_fit:.0f} ms per log")  # fmt: skip


def encoder_noise(rng: np.random.Generator, draws: int) -> None:
    errors, stds, times = [], [], []
    for _ in range(draws):
        up = up_from(rng.uniform(0.0, np.radians(30.0)), rng.uniform(-np.pi, np.pi))
        arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
        traj = fourier_trajectory(6, DURATION, RATE, rng=rng)
        tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
        peak = np.abs(tau).max(axis=0) + 0.5
        log = motion_log(
            traj, tau, rng=rng, noise_std=0.005 * peak, encoder_noise_std=1e-5,
            **sensor_errors(rng, peak),
        )  # fmt: skip
        t0 = time.perf_counter()
        est = estimate_up_from_motion(
            CHAIN, log.time, q=log.q, velocity=log.velocity, torque=log.torque
        )
        times.append(time.perf_counter() - t0)
        errors.append(angle(est.up, up))
        stds.append(est.up_std_deg)
    e = np.array(errors)
    print(f"\n2. UR5e-like, encoder noise 1e-5 rad, derived acceleration, {draws} draws "
          "(tilt 0-30°, 20 s at 1 kHz)")  # fmt: skip
    print(f"   median {np.median(e):.4f}°, p95 {np.percentile(e, 95):.4f}°, max {e.max():.4f}°, "
          f"RMS {np.sqrt(np.mean(e**2)):.4f}° "
          f"(RMS reported {np.sqrt(np.mean(np.square(stds))):.4f}°), "
          f"{np.median(times):.1f} s per estimate")  # fmt: skip


def sweeps(rng: np.random.Generator, draws: int) -> None:
    errors, robot = [], []
    config = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    for _ in range(draws):
        up = up_from(rng.uniform(0.0, np.radians(30.0)), rng.uniform(-np.pi, np.pi))
        arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
        sensors = realistic_sensors(rng, arm.peak_gravity_torque())
        rec1 = arm.sweep(0, config, -np.pi / 2, np.pi / 2, 0.5, 100.0, sensor=sensors, rng=rng)
        fit1 = fit_sweep(rec1.q, velocity=rec1.velocity, torque=rec1.torque, load_friction="abs")
        theta1 = float(fit1.zeros().unstable)
        items, seconds = [], rec1.time[-1] - rec1.time[0]
        for k in range(3):
            c = config.copy()
            c[0] = theta1 + k * np.pi / 2
            arc = np.radians(60.0)
            rec = arm.sweep(1, c, c[1] - arc, c[1] + arc, 0.5, 100.0, sensor=sensors, rng=rng)
            seconds += rec.time[-1] - rec.time[0]
            fit = fit_sweep(
                rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs",
                harmonics=(sensors[1].ripple_order,),
            )  # fmt: skip
            ref = c.copy()
            ref[1] = rec.q[0]
            items.append(joint_sweep_from_chain(CHAIN, ref, 1, fit))
        est = estimate_up(items, up_hint=[0.0, 0.0, 1.0])
        errors.append(angle(est.up, up))
        robot.append(seconds)
    e = np.array(errors)
    print(f"\n3. UR5e-like, sweep method (estimate_up, J1 180° + 3 x J2 120°), realistic sensors, "
          f"{draws} draws")  # fmt: skip
    print(f"   median {np.median(e):.4f}°, p95 {np.percentile(e, 95):.4f}°; dedicated robot time "
          f"{np.median(robot):.0f} s of sweeps (plus the moves between them)")  # fmt: skip


def apparent_gravity(rng: np.random.Generator) -> None:
    up = up_from(np.radians(10.0), 0.3)
    traj = fourier_trajectory(6, 10.0, 200.0, rng=rng)
    print("\n4. UR5e-like, constant horizontal base acceleration not passed in")
    print("   base acc. m/s²   error °   atan(a/g) °")
    for push in (0.01, 0.05, 0.1, 0.2, 0.5):
        a0 = G * up + np.array([push, 0.0, 0.0])
        arm = arm_from_urdf(
            UR5E_LIKE_URDF, tip_link="tool0", up=a0 / np.linalg.norm(a0),
            gravity=float(np.linalg.norm(a0)),
        )  # fmt: skip
        tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
        est = estimate_up_from_motion(
            CHAIN,
            traj.time,
            q=traj.q,
            velocity=traj.velocity,
            torque=tau,
            acceleration=traj.acceleration,
        )
        known = estimate_up_from_motion(
            CHAIN, traj.time, q=traj.q, velocity=traj.velocity, torque=tau,
            acceleration=traj.acceleration, base_acceleration=[push, 0.0, 0.0],
        )  # fmt: skip
        print(f"   {push:14.2f}{angle(est.up, up):10.4f}{np.degrees(np.arctan(push / G)):14.4f}"
              f"   (passed in: {angle(known.up, up):.1e}°)")  # fmt: skip


# Part 5: the defaults, each of the two terms that realistic sensors need switched off, and the
# speed taper off and at three times its default.
REALISTIC_OPTIONS: tuple[tuple[str, dict[str, object]], ...] = (
    ("defaults                     ", {}),
    ("load_friction='none'         ", {"load_friction": "none"}),
    ("ripple_components=0          ", {"ripple_components": 0}),
    ("speed_taper=0                ", {"speed_taper": 0.0}),
    ("speed_taper=0.6              ", {"speed_taper": 0.6}),
)


def realistic(draws: int) -> None:
    """The full realistic sensor errors (gravdir.synthetic.realistic_sensors: gain, offset,
    Coulomb, viscous and load-dependent friction, gear ripple, noise), 20 s at 1 kHz, tilts
    0-30°, exact accelerations: the estimate with its defaults, without the load-friction term
    and without the ripple search."""
    home = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
    rows = []
    for seed in range(draws):
        rng = np.random.default_rng(500 + seed)
        up = up_from(rng.uniform(0.0, np.radians(30.0)), rng.uniform(-np.pi, np.pi))
        arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
        traj = fourier_trajectory(6, 20.0, 1000.0, rng=rng, q0=home + rng.uniform(-0.3, 0.3, 6))
        logged = realistic_torque(arm, traj, rng)
        row = []
        for _, options in REALISTIC_OPTIONS:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = estimate_up_from_motion(
                    CHAIN, traj.time, q=traj.q, velocity=traj.velocity,
                    acceleration=traj.acceleration, torque=logged, **options,  # type: ignore[arg-type]
                )  # fmt: skip
            row += [angle(est.up, up), est.up_std_deg, time.perf_counter() - t0]
        rows.append(row)
    r = np.array(rows)
    print(f"\n5. UR5e-like, realistic sensor errors (load friction, gear ripple), {draws} draws")
    for i, (label, _) in enumerate(REALISTIC_OPTIONS):
        e = r[:, 3 * i]
        print(f"   {label}: median {np.median(e):.4f}°, p95 {np.percentile(e, 95):.4f}°, "
              f"max {e.max():.4f}°, RMS error {np.sqrt(np.mean(e**2)):.4f}°, RMS reported std "
              f"{np.sqrt(np.mean(r[:, 3 * i + 1] ** 2)):.4f}°, "
              f"{np.median(r[:, 3 * i + 2]):.1f} s per log")  # fmt: skip


def _ur_log(duration: float, rate: float) -> tuple[object, tuple[np.ndarray, ...]]:
    """A log of the UR5e-like arm with the realistic sensor errors, tilt 12 degrees."""
    rng = np.random.default_rng([77, int(rate)])
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up_from(np.radians(12.0), 0.7))
    home = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
    traj = fourier_trajectory(6, duration, rate, rng=rng, q0=home + rng.uniform(-0.3, 0.3, 6))
    return CHAIN, (traj.time, traj.q, traj.velocity, realistic_torque(arm, traj, rng))


def _seven_joint_log(duration: float, rate: float) -> tuple[object, tuple[np.ndarray, ...]]:
    """A log of a seeded 7-joint DH chain: gains, offsets, friction, noise, encoder noise."""
    n = 7
    rng = np.random.default_rng([0, n])
    chain, pi = random_dh_arm(rng, n)
    up = up_from(np.radians(12.0), 0.7)
    traj = fourier_trajectory(n, duration, rate, rng=rng)
    tau = inverse_dynamics_regressor(chain, traj.q, traj.velocity, traj.acceleration, up=up) @ pi
    peak = np.abs(tau).max(axis=0)
    log = motion_log(
        traj, tau, rng=rng, noise_std=0.005 * peak, encoder_noise_std=1e-5,
        **sensor_errors(rng, peak),
    )  # fmt: skip
    return chain, (log.time, log.q, log.velocity, log.torque)


def warm_up() -> None:
    """One estimate on a short log: the first call imports SciPy's signal module."""
    chain, (t, q, qd, tau) = _ur_log(5.0, 100.0)
    estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau)  # type: ignore[arg-type]


def cost(runs: int = 3) -> None:
    threads = os.environ.get("OPENBLAS_NUM_THREADS")
    print(f"\n6. CPU seconds per second of log (medians of {runs} interleaved runs; "
          f"OPENBLAS_NUM_THREADS={threads})")  # fmt: skip
    cases = {
        "60 s, 100 Hz, 6 joints (UR5e-like, realistic sensors)": _ur_log(60.0, 100.0),
        "60 s, 1 kHz, 7 joints (DH chain)": _seven_joint_log(60.0, 1000.0),
    }
    warm_up()
    spent: dict[tuple[str, str], list[float]] = {}
    for _ in range(runs):
        for label, (chain, (t, q, qd, tau)) in cases.items():
            seconds = float(t[-1] - t[0])
            t0 = time.process_time()
            est = estimate_up_from_motion(chain, t, q=q, velocity=qd, torque=tau)  # type: ignore[arg-type]
            t1 = time.process_time()
            track_up(est, t, q=q, velocity=qd, torque=tau)
            t2 = time.process_time()
            qdd = joint_acceleration(t, velocity=qd, axis=0)
            weights = sample_weights(qd, tau, 0.02, None, None, DEFAULT_SPEED_TAPER)
            t3 = time.process_time()
            build_design(
                chain, base_parameters(chain), q, qd, qdd, weights, tau, None, G,  # type: ignore[arg-type]
                friction_mask("coulomb-viscous"),
            )  # fmt: skip
            t4 = time.process_time()
            spent.setdefault((label, "estimate_up_from_motion"), []).append((t1 - t0) / seconds)
            spent.setdefault((label, "track_up"), []).append((t2 - t1) / seconds)
            spent.setdefault((label, "one design build"), []).append((t4 - t3) / seconds)
    targets = {"estimate_up_from_motion": {0: 0.1, 1: 0.5}, "track_up": {0: 0.02, 1: 0.02}}
    for i, label in enumerate(cases):
        floor = float(np.median(spent[(label, "one design build")]))
        print(f"   {label}:")
        print(f"      one design build (the floor) {floor:.4f} s per s of log")
        for call in ("estimate_up_from_motion", "track_up"):
            median = float(np.median(spent[(label, call)]))
            target = targets[call][i]
            print(f"      {call} {median:.4f} s per s of log, {median / floor:.1f}x the floor "
                  f"(target <= {target}: {median / target:.2f} of it)")  # fmt: skip


def main() -> None:
    draws = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100
    if "--cost" in sys.argv:
        cost()
        return
    if "--realistic" in sys.argv:
        realistic(int(sys.argv[sys.argv.index("--realistic") + 1]))
        return
    rng = np.random.default_rng(2026)
    torque_only(rng, 4 * draws)
    encoder_noise(rng, draws)
    sweeps(rng, draws)
    apparent_gravity(rng)
    realistic(8)


if __name__ == "__main__":
    main()
