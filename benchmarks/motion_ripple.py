"""Benchmark: the gear-ripple search of ``estimate_up_from_motion`` (``gravdir.motion._ripple``).

1. False alarms: white residuals at the angles of a swinging joint (2000-20000 samples, spans
   0.6-4 rad), the threshold's excess over the log of the resolution cells of the band at tail
   probabilities 0.1-0.003 (which sets the factor of three orders per cell), and the rate of
   components found at the default false-alarm probability 1e-3.
2. Cost and agreement: the gridded-FFT periodogram against the direct sum
   ``|sum e exp(-i k x)|^2`` evaluated at each order of the same grid, on one 20000-sample
   joint, in one run: the ratio of the times and the largest relative difference of the peaks.

Run: ``python benchmarks/motion_ripple.py`` (about 15 s).
"""

from __future__ import annotations

import math
import time

import numpy as np

from gravdir.motion._ripple import (
    _CONTINUOUS,
    MAX_ORDER,
    MIN_ORDER,
    _fit_sines,
    _periodogram,
    _refine,
    detect_ripple,
)


def angles(rng: np.random.Generator, n: int) -> np.ndarray:
    t = np.linspace(0.0, 20.0, n)
    span = rng.uniform(0.3, 2.0)
    return span * np.sin(0.7 * t + rng.uniform(0, 6)) + 0.3 * span * np.sin(1.9 * t)


def false_alarms(draws: int) -> None:
    rng = np.random.default_rng(0)
    excess = []
    found = 0
    for i in range(draws):
        n = (2000, 4000, 20000)[i % 3]
        x = angles(rng, n)
        e = rng.standard_normal(n)
        span = float(x.max() - x.min())
        lo = max(MIN_ORDER, 4.0 * math.pi / span)
        cells = max((MAX_ORDER - lo) * span / (2.0 * math.pi), 1.0)
        grid, power = _periodogram(x, e - e.mean(), lo, MAX_ORDER)
        k = _refine(x, e, [], float(grid[int(np.argmax(power))]), 2.0 * math.pi / span, lo)
        _, reduction = _fit_sines(x, e, [k])
        excess.append(0.5 * reduction / float(np.var(e)) - math.log(cells))
        found += detect_ripple(x[:, None], e[:, None], np.ones((n, 1), bool), 1).shape[0]
    v = np.array(excess)
    print(f"1. White residuals, {draws} joints")
    for a in (0.1, 0.01, 0.003):
        q = float(np.quantile(v, 1 - a))
        print(f"   tail {a:<6}: excess over ln(cells) {q:.2f}, "
              f"ln(1/a) {math.log(1 / a):.2f}, difference {q - math.log(1 / a):.2f} "
              f"(ln {_CONTINUOUS:g} = {math.log(_CONTINUOUS):.2f})")  # fmt: skip
    print(f"   components found at false-alarm probability 1e-3: {found} of {draws} "
          f"(rate {found / draws:.2e})")  # fmt: skip


def cost() -> None:
    rng = np.random.default_rng(1)
    n = 20000
    x = angles(rng, n)
    e = 0.3 * np.sin(144.0 * x + 0.4) + rng.standard_normal(n)
    e -= e.mean()
    lo = MIN_ORDER
    t0 = time.perf_counter()
    for _ in range(5):
        grid, power = _periodogram(x, e, lo, MAX_ORDER)
    t_fft = (time.perf_counter() - t0) / 5
    sub = grid[:: max(grid.size // 2000, 1)]  # the direct sum on a subset of the same orders
    t0 = time.perf_counter()
    direct = np.empty(sub.size)
    for i in range(0, sub.size, 50):
        k = sub[i : i + 50]
        phase = np.exp(-1j * x[:, None] * k[None, :])
        direct[i : i + 50] = np.abs(e @ phase) ** 2
    t_direct = (time.perf_counter() - t0) * grid.size / sub.size
    at = np.searchsorted(grid, sub)
    peak = int(np.argmax(direct))
    rel = abs(power[at[peak]] - direct[peak]) / direct[peak]
    print(f"\n2. Periodogram of one 20000-sample joint, {grid.size} orders from {lo:g} to "
          f"{MAX_ORDER:g}")  # fmt: skip
    print(f"   gridded FFT {1e3 * t_fft:.1f} ms, direct sum {1e3 * t_direct:.0f} ms (scaled from "
          f"{sub.size} orders): {t_direct / t_fft:.0f}x faster; peak at order "
          f"{sub[peak]:.2f}, relative difference there {rel:.1e}")  # fmt: skip


def main() -> None:
    false_alarms(1500)
    cost()


if __name__ == "__main__":
    main()
