"""
A fleet on a Dask cluster
=========================

120 UR5-like robots, each on its own tilted base with its own torque sensors (realistic
gains, offsets, friction, gear ripple and noise), run the same short calibration every
night: joint 1 swept once with the arm stretched out, joint 2 swept at three joint-1 angles
90° apart. Their controllers log each night's sweeps in packets of 50 samples. Over four
nights, one ``SweepAccumulator`` per robot, planned sweep and night holds what was logged; the
four nights of each robot and sweep are merged (``a + b``, exact up to rounding: the triangular
factors are stacked and factored again) and fitted, and ``estimate_up`` turns each robot's four
fits into its direction of gravity.

The work runs on a Dask ``LocalCluster`` of two single-threaded worker processes: one task per
robot and night, a tree of merge tasks per robot across the nights (and so across workers),
one calibration task per robot. The same functions then run in a plain loop in this process,
and the script checks that the cluster changed nothing: every robot's calibration equal to
the loop's bit for bit, and the merged accumulators equal to a merge in another order to
1e-12. It exits with status 1 if a check fails. Run it with the ``fleet`` extra installed
(``pip install -e '.[fleet]'``): ``python examples/fleet.py``.

This page shows the script without its output: the documentation build does not install the
``fleet`` extra and does not run it; CI runs it in a step of its own, in a venv that has the
extra.
"""

# %%
import os

# One BLAS and OpenMP thread in this process, set before NumPy loads its BLAS, and the same in
# the workers (below): bit-for-bit equality between the cluster and the loop holds for one
# thread setting on one machine.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import sys
import time
from functools import cache, reduce

import dask
import numpy as np
from distributed import Client, LocalCluster, get_task_stream

from gravdir import (
    SweepAccumulator,
    UpEstimate,
    angle_between,
    chain_from_dh,
    estimate_up,
    joint_sweep_from_chain,
)
from gravdir.sweep import SweepFit
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm

FLEET_SEED = 2026
N_ROBOTS = 120
N_NIGHTS = 4
PACKET = 50  # samples per log packet of the controller
SAMPLE_RATE = 100.0  # Hz
SPEED = 0.4  # rad/s
STRETCHED = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
# The nightly plan: (joint, joint-1 angle, start, stop), angles in rad.
PLAN = (
    (0, 0.0, -1.7, 1.8),
    (1, 0.0, -2.9, -0.3),
    (1, np.pi / 2, -2.9, -0.3),
    (1, np.pi, -2.9, -0.3),
)

# %%
# The work of one robot
# ---------------------
#
# Every function takes a robot's index and rebuilds what it needs from seeds (a robot's arm
# and sensors from ``[FLEET_SEED, robot]``, a night's noise from ``[FLEET_SEED, robot, night]``),
# so a task needs no data shipped to it and gives the same numbers wherever it runs.


# %%
@cache
def robot(index: int):
    """The arm (a random tilt of up to 5°) and torque sensors of robot `index` (built once per
    process: both are immutable)."""
    rng = np.random.default_rng([FLEET_SEED, index])
    up = up_from_base_tilt(rng.uniform(0.0, np.radians(5.0)), rng.uniform(-np.pi, np.pi))
    arm = ur5_arm(up=up)
    return arm, realistic_sensors(rng, arm.peak_gravity_torque())


def sweep_pose(joint: int, q1: float, start: float) -> np.ndarray:
    """The configuration of a planned sweep at its start."""
    pose = STRETCHED.copy()
    pose[0] = q1
    pose[joint] = start
    return pose


def log_night(index: int, night: int) -> tuple[SweepAccumulator, ...]:
    """One night of robot `index`: its planned sweeps, fed packet by packet to one accumulator
    per sweep, as its controller logs them."""
    arm, sensors = robot(index)
    rng = np.random.default_rng([FLEET_SEED, index, night])
    parts = []
    for joint, q1, start, stop in PLAN:
        pose = sweep_pose(joint, q1, start)
        rec = arm.sweep(
            joint, pose, start, stop, speed=SPEED, sample_rate=SAMPLE_RATE, sensor=sensors, rng=rng
        )
        acc = SweepAccumulator(min_speed=0.1 * SPEED, harmonics=[sensors[joint].ripple_order])
        for lo in range(0, rec.q.size, PACKET):
            packet = slice(lo, lo + PACKET)
            acc.add(rec.q[packet], velocity=rec.velocity[packet], torque=rec.torque[packet])
        parts.append(acc)
    return tuple(parts)


def merge(
    a: tuple[SweepAccumulator, ...], b: tuple[SweepAccumulator, ...]
) -> tuple[SweepAccumulator, ...]:
    """Sweep by sweep, the accumulators of `a` merged with those of `b`."""
    return tuple(x + y for x, y in zip(a, b, strict=True))


def tree_reduce(items: list, combine):
    """Pairwise rounds, ``[a, b, c, d, e] -> [ab, cd, e] -> [abcd, e] -> [abcde]``: with
    `combine` a Dask submission, the rounds of one robot run side by side on the workers."""
    while len(items) > 1:
        paired = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = paired + items[len(paired) * 2 :]
    return items[0]


def calibrate(
    index: int, merged: tuple[SweepAccumulator, ...]
) -> tuple[tuple[SweepFit, ...], UpEstimate]:
    """Robot `index`'s sweep fits (every night's samples) and its direction of gravity."""
    arm, _ = robot(index)
    chain = chain_from_dh(*arm.dh.T)  # columns: d, theta offset, a, alpha
    fits = tuple(acc.fit() for acc in merged)
    sweeps = [
        joint_sweep_from_chain(chain, sweep_pose(joint, q1, start), joint, fit)
        for (joint, q1, start, _), fit in zip(PLAN, fits, strict=True)
    ]
    return fits, estimate_up(sweeps)


# %%
# How close two merges of the same samples are
# --------------------------------------------
#
# Two merge orders of the same samples factor the same matrix in different orders, so their
# fits agree to rounding, not bit for bit: coefficients relative to the sweep's largest
# coefficient, covariances relative to the product of the standard deviations, the residual
# RMS relative to itself; the sample counts and the torque checksum (``fingerprint``) exactly.


# %%
def relative_gap(a: SweepFit, b: SweepFit) -> float:
    """The largest relative difference between two fits of the same samples (inf if their
    counts or checksums differ)."""
    if a.column_names != b.column_names or a.n_used != b.n_used:
        return float("inf")
    if a.fingerprint != b.fingerprint:
        return float("inf")
    coefficients = np.max(np.abs(a.coefficients - b.coefficients))
    coefficients /= np.max(np.abs(b.coefficients))
    std = np.sqrt(np.diagonal(b.covariance))
    covariance = np.max(np.abs(a.covariance - b.covariance) / np.outer(std, std))
    rms = abs(a.residual_rms - b.residual_rms) / b.residual_rms
    return float(max(coefficients, covariance, rms))


# %%
# The fleet on the cluster
# ------------------------
#
# Dask's nanny sets the environment variables of ``distributed.nanny.pre-spawn-environ`` in each
# worker process before the interpreter starts, so the workers' BLAS starts with one thread as
# this process's does. ``client.submit`` accepts futures as arguments: a merge task starts when
# its two inputs are done and moves them to one worker if they lie on two.


# %%
def environ_of_interest() -> dict[str, str | None]:
    """The environment variables this example sets in the workers, as a worker sees them."""
    return {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")}


def run_on_cluster(client: Client, robots: range):
    """Submit every night, merge and calibration; gather the calibrations and the merged
    accumulators, and count the merge tasks and those that fetched an input from the other
    worker (Dask's task stream records such a transfer)."""
    with get_task_stream(client) as stream:
        nights = [[client.submit(log_night, r, n) for n in range(N_NIGHTS)] for r in robots]
        merged = [tree_reduce(days, lambda a, b: client.submit(merge, a, b)) for days in nights]
        calibrations = [client.submit(calibrate, r, m) for r, m in zip(robots, merged, strict=True)]
        results = client.gather(calibrations)
    merges = [t for t in stream.data if str(t["key"]).startswith("merge-")]
    fetched = sum(any(s["action"] == "transfer" for s in t["startstops"]) for t in merges)
    return results, client.gather(merged), len(merges), fetched


def main() -> int:
    robots = range(N_ROBOTS)
    environ = "distributed.nanny.pre-spawn-environ"
    worker_env = {
        f"{environ}.{name}": "1"
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    }
    # Dask's default MALLOC_TRIM_THRESHOLD_ (65536) hands freed memory back to the system at
    # once, for workers that hold large data; these tasks allocate and free arrays of about
    # 1 MB many times each, and ran 1.6x slower with it (docs/fleet.md). None unsets it.
    worker_env[f"{environ}.MALLOC_TRIM_THRESHOLD_"] = None
    start = time.perf_counter()
    with (
        dask.config.set(worker_env),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.wait_for_workers(2)
        started = time.perf_counter()
        worker_environ = client.run(environ_of_interest)
        cluster_results, cluster_merged, n_merges, fetched = run_on_cluster(client, robots)
    fleet_time = time.perf_counter() - start

    # The same functions in a loop in this process: the serial reference.
    serial_start = time.perf_counter()
    serial_nights = [[log_night(r, n) for n in range(N_NIGHTS)] for r in robots]
    serial_merged = [tree_reduce(list(days), merge) for days in serial_nights]
    serial_results = [calibrate(r, m) for r, m in zip(robots, serial_merged, strict=True)]
    serial_time = time.perf_counter() - serial_start
    # The same samples merged night after night instead of in a tree.
    folded = [reduce(merge, days) for days in serial_nights]

    print(f"robots: {N_ROBOTS}, nights: {N_NIGHTS}, sweeps per robot and night: {len(PLAN)}")
    print("cluster: 2 worker processes, 1 thread each; in the workers:")
    for address, env in sorted(worker_environ.items()):
        print(f"  {address}: {env}")
    print(f"merge tasks: {n_merges}, of which {fetched} fetched an input from the other worker")
    print(
        f"fleet on the cluster: {fleet_time:.1f} s including {started - start:.1f} s of "
        f"start-up; the loop in one process: {serial_time:.1f} s "
        f"({serial_time / fleet_time:.2f}x the cluster's wall time)"
    )
    same = sum(c == s for c, s in zip(cluster_results, serial_results, strict=True))
    same_acc = sum(c == s for c, s in zip(cluster_merged, serial_merged, strict=True))
    gap = max(
        relative_gap(c.fit(), f.fit())
        for merged, fold in zip(cluster_merged, folded, strict=True)
        for c, f in zip(merged, fold, strict=True)
    )
    errors = np.degrees(
        [
            float(angle_between(result[1].up, robot(r)[0].up))
            for r, result in zip(robots, cluster_results, strict=True)
        ]
    )
    print(
        f"direction of gravity against the truth: median {np.median(errors):.4f}°, "
        f"largest {errors.max():.4f}°"
    )
    checks = {
        "workers with one BLAS thread": all(
            env["OPENBLAS_NUM_THREADS"] == "1" for env in worker_environ.values()
        ),
        "merges across the two workers": fetched > 0,
        "calibrations equal to the loop's, bit for bit": same == N_ROBOTS,
        "merged accumulators equal to the loop's, bit for bit": same_acc == N_ROBOTS,
        "merged accumulators within 1e-12 of a night-by-night merge": gap <= 1e-12,
    }
    print(f"calibrations equal to the loop's: {same} of {N_ROBOTS}")
    print(f"merged accumulators equal to the loop's: {same_acc} of {N_ROBOTS}")
    print(f"largest relative difference from a night-by-night merge: {gap:.1e}")
    for name, ok in checks.items():
        print(f"{'ok    ' if ok else 'FAILED'} {name}")
    return 0 if all(checks.values()) else 1


# %%
# Worker processes are started by ``spawn``, which imports this script afresh in each of them:
# the cluster is started only under the main-module guard.

# %%
if __name__ == "__main__":
    sys.exit(main())
