# %% [markdown]
# # Touch plane: cost of the robust fits against the number of contacts
#
# The robust fits examine a fixed number of candidate subsets whatever the number N of contacts
# (all of them up to 3000 subsets; above, a fixed sample of 345 triples for the plane and 2925
# six-row subsets for the joint fit, see `gravdir.touch._robust.sample_size`), so their work
# grows as N (times log N for the sorting of the C-steps), and their temporaries stay within a
# fixed chunk of residuals plus a few arrays of N, up to the cap of 10000 contacts per set.
# Printed for N = 100, 1000, 5000 and the cap: the time of one call
# (median of repeats), the time per contact relative to N = 100, and the peak memory that
# `tracemalloc` sees (NumPy reports its arrays to it).
#
# Data: contacts over a 0.6 m square on a plane tilted 3°, σ = 0.01 mm, one contact in five
# moved 0.1-2 mm along the normal (the deletion, which masks several outliers, stops at its
# first test on such data; its last table has N / 10, at most 100, outliers of 100 to 1 mm,
# each significant after the larger ones are gone, so it runs up to its default 50 tests, and
# its ratio is of the time per contact and test). `n_iter` is the result's count of refits
# (`robust=True` of the plane fit), of tests (`"deletion"`) or of Gauss-Newton iterations (the
# joint fit).
#
# Run with one thread:
# `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/touch_robust_cost.py`.

# %%
from __future__ import annotations

import time
import tracemalloc
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from gravdir import tool_tip_and_up_from_touches, up_from_touch_points
from gravdir.synthetic import touch_contacts

SIGMA = 1e-5  # 0.01 mm in metres
SIZES = (100, 1000, 5000, 10_000)  # the last is the cap
UP = np.array([0.05, -0.02, 1.0]) / np.linalg.norm([0.05, -0.02, 1.0])


def plane_points(n: int, seed: int) -> np.ndarray:
    """`n` contacts on the tilted plane, one in five moved 0.1-2 mm along its normal."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(-0.3, 0.3, (n, 2))
    pts = np.c_[xy, 1 - xy @ UP[:2] / UP[2]] + SIGMA * rng.standard_normal((n, 3))
    bad = rng.random(n) < 0.2
    pts[bad] += rng.uniform(1e-4, 2e-3, (int(bad.sum()), 1)) * UP
    return pts


def deletion_points(n: int, seed: int) -> np.ndarray:
    """`n` clean contacts, the first n / 10 (at most 100) moved 100 to 1 mm along the normal."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(-0.3, 0.3, (n, 2))
    pts = np.c_[xy, 1 - xy @ UP[:2] / UP[2]] + SIGMA * rng.standard_normal((n, 3))
    bad = min(n // 10, 100)
    pts[:bad] += np.geomspace(0.1, 1e-3, bad)[:, None] * UP
    return pts


def tool_poses(n: int, seed: int) -> np.ndarray:
    """Flange poses of `n` contacts, one in five moved 0.1-2 mm along the plane normal."""
    rng = np.random.default_rng(seed)
    data = touch_contacts(rng, n, noise_std=SIGMA)
    poses = np.array(data.flange_poses)
    bad = rng.random(n) < 0.2
    poses[bad, :3, 3] += rng.uniform(1e-4, 2e-3, (int(bad.sum()), 1)) * data.up
    return poses


def measure(call: Callable[[], Any]) -> tuple[float, float, int]:
    """Median time of `call` (s) over repeats worth about a second, its peak memory (MiB) and
    the tests or refits of its result (`n_iter`)."""
    times = []
    while len(times) < 3 or (sum(times) < 1.0 and len(times) < 20):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    result = call()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return float(np.median(times)), peak, int(np.max(result.n_iter))


def table(name: str, make: Callable[[int], Callable[[], Any]], per_test: bool = False) -> None:
    """One row per N; the ratio is of the time per contact (per contact and test if
    `per_test`) to that at N = 100."""
    print(name)
    unit = "us/contact/test" if per_test else "us/contact"
    print(f"       N    time s  n_iter  {unit:>15s}  x N=100   peak MiB")
    base = None
    for n in SIZES:
        seconds, peak, n_iter = measure(make(n))
        per = seconds / n / (max(n_iter, 1) if per_test else 1)
        base = per if base is None else base
        print(
            f"   {n:5d}  {seconds:8.3f}  {n_iter:6d}  {per * 1e6:15.2f}  {per / base:7.2f}"
            f"  {peak:9.1f}"
        )


# %%
if __name__ == "__main__":
    warnings.simplefilter("ignore")  # the deletion rows stop at `max_iter`, by design
    t_start = time.perf_counter()
    up_from_touch_points(plane_points(12, 0), robust=True)  # import SciPy's statistics first
    table(
        "up_from_touch_points(robust=True, noise_std=1e-5)",
        lambda n: partial(up_from_touch_points, plane_points(n, 1), robust=True, noise_std=SIGMA),
    )
    table(
        "up_from_touch_points(robust=True), noise estimated",
        lambda n: partial(up_from_touch_points, plane_points(n, 2), robust=True),
    )
    table(
        'up_from_touch_points(robust="deletion"), one test',
        lambda n: partial(up_from_touch_points, plane_points(n, 3), robust="deletion"),
    )
    table(
        'up_from_touch_points(robust="deletion"), N / 10 outliers (at most 50 tests)',
        lambda n: partial(up_from_touch_points, deletion_points(n, 4), robust="deletion"),
        per_test=True,
    )
    table(
        "tool_tip_and_up_from_touches(robust=True, noise_std=1e-5)",
        lambda n: partial(
            tool_tip_and_up_from_touches, tool_poses(n, 5), robust=True, noise_std=SIGMA
        ),
    )
    print(f"total run time {time.perf_counter() - t_start:.0f} s")
