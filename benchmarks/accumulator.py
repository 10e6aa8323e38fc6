# %% [markdown]
# # SweepAccumulator: latency per update and per fit against a 1 kHz cycle
#
# A controller running at 1 kHz has 1 ms per cycle. Printed: the cost of one `add` of a chunk of
# 1, 10 and 1000 samples (median over many chunks, and per sample), the cost of `fit` (median),
# each as a share of the 1 ms cycle; then the cost per sample and the accumulator's state size
# after 10^3 to 10^6 samples, which must stay flat; then how the streamed fit compares with
# `fit_sweep` on all samples at once (largest relative difference of the coefficients and the
# residual RMS). Latencies are wall-clock medians; the means per sample (which include the block
# factorisations every 512 samples) are CPU time of this process. Targets: <= 20 us per chunk of
# 10 samples, <= 2 us per sample amortised over chunks of 1000. Every timing is the median of
# five repeats; the load average is printed, since the machine may be shared.

# %%
from __future__ import annotations

import os
import time

import numpy as np

from gravdir import SweepAccumulator, fit_sweep

CYCLE = 1e-3  # seconds: one cycle of a 1 kHz controller
MIN_SPEED = 0.05


def sweep(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Back-and-forth passes of 1000 samples over 120 degrees, torque with noise."""
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, 500)
    one = np.radians(120.0) * (s - np.sin(2 * np.pi * s) / (2 * np.pi)) - np.radians(60.0)
    speed = 0.4 * (1 - np.cos(2 * np.pi * s))
    reps = -(-n // 1000)
    q = np.tile(np.concatenate([one, one[::-1]]), reps)[:n]
    v = np.tile(np.concatenate([speed, -speed[::-1]]), reps)[:n]
    torque = 0.2 + 5.0 * np.sin(q + 0.4) + 0.3 * np.sign(v) + 0.1 * v + rng.normal(0, 0.02, n)
    return q, torque, v


def median(values: list[float]) -> float:
    return float(np.median(values))


def add_latency(chunk: int, n_chunks: int) -> float:
    """Median over five repeats of the median time of one add() of `chunk` samples."""
    q, torque, v = sweep(chunk * n_chunks)
    runs = []
    for _ in range(5):
        acc = SweepAccumulator(min_speed=MIN_SPEED)
        times = []
        for i in range(0, chunk * n_chunks, chunk):
            a, b, c = q[i : i + chunk], torque[i : i + chunk], v[i : i + chunk]
            t0 = time.perf_counter()
            acc.add(a, velocity=c, torque=b)
            times.append(time.perf_counter() - t0)
        runs.append(median(times))
    return median(runs)


def add_mean(chunk: int, n_samples: int) -> float:
    """Median over five repeats of the mean CPU time per sample of feeding `n_samples` in chunks
    (the mean includes the block factorisations that the median of single adds leaves out; CPU
    time of this process, so that other processes of a shared machine do not inflate it)."""
    q, torque, v = sweep(n_samples)
    runs = []
    for _ in range(5):
        acc = SweepAccumulator(min_speed=MIN_SPEED)
        t0 = time.process_time()
        for i in range(0, n_samples, chunk):
            acc.add(q[i : i + chunk], velocity=v[i : i + chunk], torque=torque[i : i + chunk])
        runs.append((time.process_time() - t0) / n_samples)
    return median(runs)


def state_bytes(acc: SweepAccumulator) -> int:
    return sum(x.nbytes for x in vars(acc).values() if isinstance(x, np.ndarray))


def main() -> None:
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    print("\nadd() latency (median), share of a 1 ms cycle")
    for chunk, n_chunks in ((1, 5000), (10, 3000), (1000, 100)):
        t = add_latency(chunk, n_chunks)
        amortised = add_mean(chunk, chunk * n_chunks)
        print(
            f"chunk of {chunk:5d}: {t * 1e6:8.2f} us/chunk ({100 * t / CYCLE:5.2f}% of 1 ms), "
            f"{t / chunk * 1e6:7.3f} us/sample; mean CPU incl. block folds "
            f"{amortised * 1e6:7.3f} us/sample"
        )

    q, torque, v = sweep(10_000)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    acc.add(q, velocity=v, torque=torque)
    runs = []
    for _ in range(5):
        times = []
        for _ in range(200):
            acc.add(
                q[:10], velocity=v[:10], torque=torque[:10]
            )  # a few samples waiting in the buffer
            t0 = time.perf_counter()
            acc.fit()
            times.append(time.perf_counter() - t0)
        runs.append(median(times))
    t_fit = median(runs)
    print(f"fit(): {t_fit * 1e6:8.1f} us ({100 * t_fit / CYCLE:5.2f}% of 1 ms)")

    print("\nflat in the number of samples: mean CPU time per sample (chunks of 10 and of 1000)")
    print(f"{'samples':>9s} {'us/sample (10)':>15s} {'us/sample (1000)':>17s} {'state bytes':>12s}")
    for n in (1_000, 10_000, 100_000, 1_000_000):
        per10 = add_mean(10, min(n, 100_000))
        per1000 = add_mean(1000, n)
        q, torque, v = sweep(n)
        acc = SweepAccumulator(min_speed=MIN_SPEED)
        for i in range(0, n, 1000):
            acc.add(q[i : i + 1000], velocity=v[i : i + 1000], torque=torque[i : i + 1000])
        print(f"{n:9d} {per10 * 1e6:15.3f} {per1000 * 1e6:17.3f} {state_bytes(acc):12d}")

    print("\nstreamed fit against fit_sweep on all samples at once (chunks of 10)")
    for n in (1_000, 100_000):
        q, torque, v = sweep(n, seed=5)
        acc = SweepAccumulator(min_speed=MIN_SPEED)
        for i in range(0, n, 10):
            acc.add(q[i : i + 10], velocity=v[i : i + 10], torque=torque[i : i + 10])
        fit, ref = acc.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED)
        coef = float(np.max(np.abs(fit.coefficients - ref.coefficients) / np.abs(ref.coefficients)))
        rms = abs(float(fit.residual_rms) / float(ref.residual_rms) - 1)
        print(
            f"{n:9d} samples: coefficients {coef:.1e} relative, residual_rms {rms:.1e} relative, "
            f"fingerprint equal: {fit.fingerprint == ref.fingerprint}"
        )
    print(f"\nload average (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()
