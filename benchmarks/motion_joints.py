"""Benchmark: the cost of ``estimate_up_from_motion`` against the number of joints.

The estimator solves the inertial parameters out of per-joint Gram blocks of ``4 p + 4`` columns
(``p`` base parameters, about 7 per joint), so its work grows with the joint count: forming the
blocks as ``n p^2`` per sample, the search as ``n p^2`` per evaluation of the information and
``(p + 4 n)^3`` per evaluation of the profiled cost. The motion functions refuse chains of more
than ``MAX_JOINTS`` joints (``gravdir.motion._inputs``); this prints the CPU time of one call per
joint count within that cap, as ratios to a six-joint arm, and the same ratios divided by
``(n / 6)^3``, the growth of a cubic.

Each chain is a DH chain with links of random lengths and twists (seeded), moving along a random
Fourier trajectory of 4 s at 100 Hz (400 samples); the torques come from the regressor with
gains ±15%, offsets, Coulomb and viscous friction and noise of 0.5% of each joint's peak.
Two configurations: the defaults (the ripple search and the load-friction passes included), and
``load_friction="none", ripple_components=0`` (one search). CPU time of the calling process with
one BLAS thread (``OPENBLAS_NUM_THREADS=1`` is set before numpy loads); the machine may be
shared, so the load average is printed before and after.

Run: ``python benchmarks/motion_joints.py [n ...]`` (default 2 3 4 6 8 10 12 14 16).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from motion import random_dh_arm  # noqa: E402  (benchmarks/motion.py)

from gravdir import GravdirWarning, estimate_up_from_motion  # noqa: E402
from gravdir.dynamics import inverse_dynamics_regressor  # noqa: E402
from gravdir.motion._inputs import MAX_JOINTS  # noqa: E402
from gravdir.synthetic.motion import fourier_trajectory, motion_log  # noqa: E402

warnings.simplefilter("ignore", GravdirWarning)
REFERENCE = 6  # a six-joint arm


def log_of(n: int, seed: int = 0) -> tuple:
    """A chain of `n` joints and a noisy torque log of it."""
    rng = np.random.default_rng([seed, n])
    chain, pi = random_dh_arm(rng, n)
    up = rng.normal(size=3)
    up /= np.linalg.norm(up)
    traj = fourier_trajectory(n, 4.0, 100.0, rng=rng)
    tau = inverse_dynamics_regressor(chain, traj.q, traj.velocity, traj.acceleration, up=up) @ pi
    peak = np.abs(tau).max(axis=0)
    log = motion_log(
        traj, tau, rng=rng, gains=rng.uniform(0.85, 1.15, n),
        offsets=rng.uniform(-0.03, 0.03, n) * peak, coulomb=rng.uniform(0.02, 0.1, n) * peak,
        viscous=0.02 * peak, noise_std=0.005 * peak,
    )  # fmt: skip
    return chain, log, traj.acceleration, up


def cpu_seconds(n: int, **options: object) -> tuple[float, float]:
    """CPU time of one call and the direction error, degrees."""
    chain, log, acc, up = log_of(n)
    start = time.process_time()
    est = estimate_up_from_motion(
        chain,
        log.time,
        q=log.q,
        velocity=log.velocity,
        torque=log.torque,
        acceleration=acc,
        **options,
    )
    spent = time.process_time() - start
    error = float(np.degrees(np.arctan2(np.linalg.norm(np.cross(est.up, up)), est.up @ up)))
    return spent, error


def main(joints: list[int]) -> None:
    print(f"load average before: {os.getloadavg()}")
    print(
        f"cap: {MAX_JOINTS} joints; CPU s per call, ratio to {REFERENCE} joints, and that ratio "
        f"over (n/{REFERENCE})^3"
    )
    configs = {
        "defaults": {},
        "one search": {"load_friction": "none", "ripple_components": 0},
    }
    for label, options in configs.items():
        print(f"\n{label}")
        print("   n     CPU s    ratio   ratio/(n/6)^3   error °")
        ref, ref_error = cpu_seconds(REFERENCE, **options)
        for n in joints:
            spent, error = (ref, ref_error) if n == REFERENCE else cpu_seconds(n, **options)
            ratio = spent / ref
            print(
                f"  {n:2d}  {spent:8.2f}  {ratio:7.2f}  {ratio / (n / REFERENCE) ** 3:14.2f}"
                f"  {error:8.4f}",
                flush=True,
            )
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    chosen = [int(a) for a in sys.argv[1:]] or [2, 3, 4, 6, 8, 10, 12, 14, 16]
    main([n for n in chosen if n <= MAX_JOINTS])
