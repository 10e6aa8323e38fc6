# %% [markdown]
# # SweepAccumulator(covariance="hac"): honesty and cost of the streamed sandwich
#
# Printed, first: over 300 sweeps of 30 s at 100 Hz (forward and back over ±1.2 rad at a speed
# varying by ±30 %, `"coulomb-viscous"`, AR(1) residuals of lag-1 correlation 0, 0.7 and 0.9, fed
# in chunks of 250 samples), the mean squared error of the phase in units of its reported
# variance for the white form, the streamed sandwich and `fit_sweep(covariance="hac")`, the
# streamed sandwich's mean variance over the white form's, and both sandwiches' median degrees
# of freedom (docs/sweep.md, "Correlated residuals in a stream"). Second, through `estimate_up`
# in the world of `tests/_sweep_world.py` (a UR5-like arm tilted 0.6 rad, J2 swept at 0.25 rad/s
# at three J1 angles, sensor noise correlated over 0.15 s), each sweep streamed in chunks of 100
# with the load columns the accumulator fits (`load_friction="signed"`) and the ripple harmonic:
# the mean squared error of `up` per degree of freedom in units of its reported covariance, for
# the white form, the streamed sandwich and `fit_sweep`'s with the same columns (200 draws).
# Third, rounding: the largest difference from `fit_sweep(covariance="hac")` in units of the
# product of the standard deviations, on sweeps whose residuals have a negative lag-1
# correlation (where the two agree exactly), for designs of growing condition number, fed in
# one call and in chunks of random length, each folded as it arrives (as a poll of `n_used`
# folds it). Then the cost: CPU time per sample of `add` in chunks
# of 1000 and of one `fit`, with the sandwich over without it, at 100 Hz and 1 kHz with the
# default 1 s bandwidth (medians of five repeats, measured in one run).

# %%
from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _one_sweep import RATE, ar1_noise, sweep, sweep_torque  # noqa: E402

from gravdir import (  # noqa: E402
    GravdirWarning,
    SweepAccumulator,
    chain_from_dh,
    estimate_up,
    fit_sweep,
    joint_sweep_from_chain,
)
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm  # noqa: E402

FRICTION = "coulomb-viscous"


def normalised_error(fit) -> float:
    return float(np.mean((fit.phase - 0.4) ** 2 / fit.phase_std**2))


def honesty() -> None:
    print("lag-1  white  streamed  fit_sweep  var(streamed)/var(white)  dof streamed, fit_sweep")
    for rho in (0.0, 0.7, 0.9):
        rng = np.random.default_rng(int(10 * rho) + 100)
        q, v = sweep(3000)
        shape = (300, q.size)
        tau = sweep_torque(q, v) + ar1_noise(rng, shape, rho)
        qs, vs = np.broadcast_to(q, shape), np.broadcast_to(v, shape)
        acc = SweepAccumulator(min_speed=0.0, friction=FRICTION, covariance="hac", sample_rate=RATE)
        for i in range(0, q.size, 250):
            acc.add(qs[:, i : i + 250], velocity=vs[:, i : i + 250], torque=tau[:, i : i + 250])
        streamed = acc.fit()
        options = dict(velocity=vs, torque=tau, friction=FRICTION)
        batch = fit_sweep(qs, **options, covariance="hac", sample_rate=RATE)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GravdirWarning)
            white = fit_sweep(qs, **options)
        ratio = np.mean(streamed.phase_std**2) / np.mean(white.phase_std**2)
        print(
            f"{rho:5.1f}  {normalised_error(white):5.2f}  {normalised_error(streamed):8.2f}  "
            f"{normalised_error(batch):9.2f}  {ratio:24.3f}  "
            f"{np.median(streamed.covariance_dof):.1f}, {np.median(batch.covariance_dof):.1f}"
        )


def through_estimate_up(n: int) -> None:
    rng = np.random.default_rng(11)
    arm = ur5_arm(up=up_from_base_tilt(0.6, 0.7))
    chain = chain_from_dh(*arm.dh.T)
    sensors = [
        dataclasses.replace(s, noise_correlation_time=0.15)
        for s in realistic_sensors(rng, arm.peak_gravity_torque())
    ]
    model = dict(load_friction="signed", harmonics=(sensors[1].ripple_order,))
    basis = np.linalg.svd(arm.up[None, :])[2][1:]
    errors: dict[str, list[float]] = {"white": [], "streamed": [], "fit_sweep": []}
    for _ in range(n):
        groups: dict[str, list] = {name: [] for name in errors}
        for turn in (0.0, np.pi / 2, np.pi):
            c = np.array([0.4 + turn, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
            rec = arm.sweep(1, c, c[1] - np.pi / 3, c[1] + np.pi / 3, 0.25, RATE,
                            sensor=sensors, rng=rng)  # fmt: skip
            c[1] = rec.q[0]
            for name, covariance in (("white", "white"), ("streamed", "hac")):
                acc = SweepAccumulator(min_speed=0.05, covariance=covariance, sample_rate=RATE,
                                       **model)  # fmt: skip
                for i in range(0, rec.q.size, 100):
                    part = slice(i, i + 100)
                    acc.add(rec.q[part], velocity=rec.velocity[part], torque=rec.torque[part])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", GravdirWarning)
                    groups[name].append(joint_sweep_from_chain(chain, c, 1, acc.fit()))
            fit = fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, covariance="hac",
                            sample_rate=RATE, min_speed=0.05, **model)  # fmt: skip
            groups["fit_sweep"].append(joint_sweep_from_chain(chain, c, 1, fit))
        for name, group in groups.items():
            est = estimate_up(group, up_hint=arm.up)
            x = basis @ (est.up - arm.up)
            errors[name].append(float(x @ np.linalg.solve(basis @ est.up_cov @ basis.T, x)) / 2)
    means = ", ".join(f"{name} {np.mean(e):.2f}" for name, e in errors.items())
    print(f"estimate_up over {n} draws, NSE per dof: {means}")


def rounding() -> None:
    designs = [
        ("coulomb-viscous, ±1.2 rad, 100 Hz", 6000, 100.0, 1.2, {}),
        ("coulomb-viscous, ±1.2 rad, 1 kHz", 20000, 1000.0, 1.2, {}),
        ("signed load columns, ±1.2 rad, 1 kHz", 20000, 1000.0, 1.2, {"load_friction": "signed"}),
        ("second harmonic, ±0.6 rad, 1 kHz", 30000, 1000.0, 0.6, {"harmonics": (2.0,)}),
    ]
    for label, n, rate, arc, extra in designs:
        rng = np.random.default_rng(36)
        half = n // 2
        q = np.concatenate([np.linspace(-arc, arc, half), np.linspace(arc, -arc, n - half)])
        speed = 2 * arc / (half / rate) * (1 + 0.3 * np.sin(np.arange(n) / 50.0))
        v = np.where(np.arange(n) < half, speed, -speed)
        w = rng.normal(0, 0.05, n + 1)
        harmonic = 0.3 * np.sin(2 * q) if extra.get("harmonics") else 0.0
        tau = sweep_torque(q, v) + harmonic + w[1:] - 0.6 * w[:-1]
        options = dict(friction=FRICTION, **extra)
        ref = fit_sweep(q, velocity=v, torque=tau, covariance="hac", sample_rate=rate, **options)
        std = np.sqrt(np.diag(ref.covariance))
        worst = []
        for chunked in (False, True):
            acc = SweepAccumulator(min_speed=0.0, covariance="hac", sample_rate=rate, **options)
            start = 0
            while start < n:
                stop = int(start + rng.integers(1, 700)) if chunked else n
                acc.add(q[start:stop], velocity=v[start:stop], torque=tau[start:stop])
                _ = acc.n_used  # folds the chunk at once, where a poll would
                start = stop
            diff = np.abs(acc.fit().covariance - ref.covariance) / np.outer(std, std)
            worst.append(float(diff.max()))
        print(
            f"{label:40s} one call {worst[0]:.1e}, folded chunks {worst[1]:.1e} "
            f"(residual lag-1 {float(ref.residual_lag1):.2f})"
        )


def cost(rate: float, n: int) -> tuple[float, float]:
    """CPU time per sample of add() in chunks of 1000 and of one fit(), the sandwich's over the
    white form's: medians of five repeats."""
    q, v = sweep(2000)
    reps = -(-n // q.size)
    q, v = np.tile(q, reps)[:n], np.tile(v, reps)[:n]
    tau = sweep_torque(q, v) + np.random.default_rng(1).normal(0, 0.05, n)
    times: dict[str, list[tuple[float, float]]] = {"white": [], "hac": []}
    for _ in range(5):
        for name in times:
            acc = SweepAccumulator(
                min_speed=0.0, friction=FRICTION, covariance=name, sample_rate=rate
            )
            t0 = time.process_time()
            for i in range(0, n, 1000):
                acc.add(q[i : i + 1000], velocity=v[i : i + 1000], torque=tau[i : i + 1000])
            t1 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", GravdirWarning)
                acc.fit()
            times[name].append(((t1 - t0) / n, time.process_time() - t1))
    med = {name: np.median(np.array(t), axis=0) for name, t in times.items()}
    print(
        f"{rate:6.0f} Hz: add {med['hac'][0] * 1e6:.2f} us a sample against "
        f"{med['white'][0] * 1e6:.2f} ({med['hac'][0] / med['white'][0]:.1f}x); fit "
        f"{med['hac'][1] * 1e3:.2f} ms against {med['white'][1] * 1e3:.2f} ms "
        f"({med['hac'][1] / med['white'][1]:.1f}x)"
    )
    return med["hac"][0] / med["white"][0], med["hac"][1] / med["white"][1]


# %%
if __name__ == "__main__":
    honesty()
    print()
    through_estimate_up(200)
    print()
    rounding()
    print()
    cost(100.0, 60_000)
    cost(1000.0, 60_000)
