# %% [markdown]
# # The fleet example's night task under Dask's default MALLOC_TRIM_THRESHOLD_
#
# Dask's nanny starts each worker process with `MALLOC_TRIM_THRESHOLD_=65536` (its
# `distributed.nanny.pre-spawn-environ` default), which makes glibc hand freed memory back to
# the system at once. `examples/fleet.py` unsets it in its workers. Printed: the CPU time of
# one night task of that example (`log_night`: a robot's four sweeps simulated and fed to
# accumulators packet by packet), median of five rounds of 20 tasks, in fresh interpreters
# with and without the setting, run in turn, and their ratio. One BLAS thread throughout. Needs
# the `fleet` extra (the example imports Dask); run `python benchmarks/fleet_tasks.py`.

# %%
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 5
TASK = f"""
import sys, time
sys.path.insert(0, {str(ROOT / "examples")!r})
import fleet
fleet.log_night(0, 0)
start = time.thread_time()
for robot in range(20):
    fleet.log_night(robot, 1)
print((time.thread_time() - start) / 20)
"""


def cpu_per_task(trim: bool) -> float:
    """CPU seconds per night task in a fresh interpreter, with or without the trim setting."""
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if trim:
        env["MALLOC_TRIM_THRESHOLD_"] = "65536"
    out = subprocess.run(
        [sys.executable, "-c", TASK], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip())


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


if __name__ == "__main__":
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    plain, trimmed = [], []
    for _ in range(ROUNDS):
        plain.append(cpu_per_task(trim=False))
        trimmed.append(cpu_per_task(trim=True))
    a, b = median(plain), median(trimmed)
    print(f"night task, CPU time: {a * 1e3:.1f} ms without the setting")
    print(f"night task, CPU time: {b * 1e3:.1f} ms with MALLOC_TRIM_THRESHOLD_=65536")
    print(f"ratio: {b / a:.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
