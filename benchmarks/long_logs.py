"""Benchmark: long logs read in chunks (``track_up_from_chunks``,
``estimate_up_from_motion_chunks``) -- memory and time against the length of the log.

A seeded 7-joint DH chain (as ``benchmarks/motion.py``'s 1 kHz log) moves along a random Fourier
trajectory for 1, 2, 5 and 10 minutes at 1 kHz with jittered stamps; its torques come from the
regressor with the drawn inertial parameters on a base tilted 12°, plus noise, and the fit is a
stand-in with those parameters. The log is a re-iterable source of one-second chunks whose
arrays are computed when read (as a file reader's would be), so no pass holds more than a chunk
of it. Each length runs in a fresh interpreter: its peak resident memory (``ru_maxrss``) and CPU
seconds per second of log, the log's computation included. On the 1-minute log each result is
compared with the same call on the samples in memory (``track_up``, ``estimate_up_from_motion``),
and on the 10-minute log the estimator's memory with that of ``estimate_up_from_motion`` on the
log joined in memory (what a user without chunks would run).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/long_logs.py`` (about fifteen minutes).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from types import SimpleNamespace

import numpy as np

from gravdir.dynamics import inverse_dynamics_regressor
from gravdir.motion import (
    estimate_up_from_motion,
    estimate_up_from_motion_chunks,
    track_up,
    track_up_from_chunks,
)
from gravdir.synthetic.motion import fourier_trajectory

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from motion import random_dh_arm, up_from  # noqa: E402

RATE, N_JOINTS, CHUNK = 1000.0, 7, 1000
MINUTES = (1, 2, 5, 10)


class _Chunk(Mapping[str, np.ndarray]):
    """One second of the log; `q`, `velocity` and `torque` computed when read."""

    def __init__(self, log: _Log, k: int) -> None:
        self.log, self.k = log, k

    def __iter__(self) -> Iterator[str]:
        return iter(("time", "q", "velocity", "torque"))

    def __len__(self) -> int:
        return 4

    def __getitem__(self, key: str) -> np.ndarray:
        t = self.log.stamps[self.k * CHUNK : (self.k + 1) * CHUNK]
        if key == "time":
            return t
        traj = self.log.traj.at(t % self.log.period)
        if key == "q":
            return traj.q
        if key == "velocity":
            return traj.velocity
        if key == "torque":
            y = inverse_dynamics_regressor(
                self.log.chain, traj.q, traj.velocity, traj.acceleration, up=self.log.up
            )
            rng = np.random.default_rng([11, self.k])
            return y @ self.log.pi + rng.normal(0.0, 0.05, (t.size, N_JOINTS))
        raise KeyError(key)


class _Log:
    """A re-iterable source of the chunks of a `minutes` long log."""

    def __init__(self, minutes: float) -> None:
        rng = np.random.default_rng([0, N_JOINTS])
        self.chain, self.pi = random_dh_arm(rng, N_JOINTS)
        self.up = up_from(np.radians(12.0), 0.7)
        self.period = 20.0
        self.traj = fourier_trajectory(N_JOINTS, self.period, RATE, rng=rng)
        n = int(minutes * 60 * RATE)
        step = np.random.default_rng(5).uniform(0.8, 1.2, n) / RATE
        self.stamps = np.cumsum(step) - step[0]
        self.fit = SimpleNamespace(
            up=self.up, inertial_parameters=self.pi, gains=np.ones(N_JOINTS),
            joint_parameters=np.zeros((N_JOINTS, 4)), noise_std=np.full(N_JOINTS, 0.05),
            chain=self.chain, gravity=9.80665,
        )  # fmt: skip

    def __iter__(self) -> Iterator[_Chunk]:
        return (_Chunk(self, k) for k in range(-(-self.stamps.size // CHUNK)))


def child(kind: str, minutes: float) -> None:
    """One call in this interpreter: its CPU seconds per second of log, the peak resident memory
    and what it returned; on the shortest log, the comparison with the call in memory."""
    log = _Log(minutes)
    if kind == "in-memory":  # the estimator on the joined arrays, as a user without chunks
        series = {k: np.concatenate([c[k] for c in log]) for k in ("q", "velocity", "torque")}
        t0 = time.process_time()
        estimate_up_from_motion(log.chain, log.stamps, **series)
    else:
        call = track_up_from_chunks if kind == "track" else estimate_up_from_motion_chunks
        first = log.fit if kind == "track" else log.chain
        t0 = time.process_time()
        result = call(first, log)
    spent = time.process_time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    agree = ""
    if minutes == MINUTES[0] and kind != "in-memory":
        series = {k: np.concatenate([c[k] for c in log]) for k in ("q", "velocity", "torque")}
        if kind == "track":
            whole = track_up(log.fit, log.stamps, **series)
        else:
            whole = estimate_up_from_motion(log.chain, log.stamps, **series)
        largest = float(np.max(np.abs(result.up - whole.up)))
        agree = f" {largest:.3g} {int(result.fingerprint == whole.fingerprint)}"
    print(f"{spent / (minutes * 60):.5f} {rss:.1f}{agree}")


def _run(kind: str, minutes: float) -> list[str]:
    return subprocess.run(
        [sys.executable, __file__, "--child", kind, str(minutes)],
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        child(sys.argv[2], float(sys.argv[3]))
        return
    print("A 1 kHz 7-joint log in one-second chunks, each call in a fresh interpreter; CPU per")
    print("second of log includes computing the chunks' arrays (read twice).")
    for kind, name in (("track", "track_up_from_chunks"),
                       ("estimate", "estimate_up_from_motion_chunks")):  # fmt: skip
        print(f"   {name}:")
        per_second = {}
        for minutes in MINUTES:
            out = _run(kind, minutes)
            per_second[minutes] = float(out[0])
            print(f"      {minutes:2d} min: {float(out[0]):.4f} s of CPU per s of log, peak RSS "
                  f"{float(out[1]):.0f} MB")  # fmt: skip
            if len(out) > 2:
                print(f"              against the call in memory: largest difference of `up` "
                      f"{out[2]}, same fingerprint {bool(int(out[3]))}")  # fmt: skip
        ratio = per_second[MINUTES[-1]] / per_second[MINUTES[0]]
        print(f"      CPU per second of log, {MINUTES[-1]} min over {MINUTES[0]} min: {ratio:.2f} "
              "(1 is linear in the length)")  # fmt: skip
    out = _run("in-memory", MINUTES[-1])
    print(f"   estimate_up_from_motion on the {MINUTES[-1]}-minute log joined in memory: "
          f"{float(out[0]):.4f} s of CPU per s of log, "
          f"peak RSS {float(out[1]):.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
