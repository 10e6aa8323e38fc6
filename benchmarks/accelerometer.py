# %% [markdown]
# # Accelerometer on a link: accuracy of `up` against its Cramér-Rao bound
#
# Synthetic static poses of a UR5-like (6 joints) and an iiwa-like (7 joints) arm from
# `gravdir.synthetic`, the sensor on the last link with the realistic errors of
# `gravdir.synthetic.accelerometer.realistic_accelerometer` (150 µg/√Hz, bias ±50 mg, scales
# ±2%, non-orthogonality and misalignment ±2°), 2 s averaging per pose and joint-encoder noise
# 0.003° per joint; fixed random seeds; a new sensor is drawn for every draw. Printed per case:
#
# 1. RMS direction error against the Cramér-Rao bound (encoder noise included, evaluated at each
#    draw's true sensor), the trace ratio of the empirical covariance to the mean reported one,
#    the 50th and 95th percentiles of the angle error, and the time per fit.
# 2. Cases: 8 planned poses (`plan_accelerometer_poses`), 8 random poses, 8 planned poses with
#    exact encoders, 16 planned poses, a tilted base (up 20° off +z).
#
# Run with one thread:
# `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/accelerometer.py`.

# %%
from __future__ import annotations

import time

import numpy as np

from gravdir import (
    chain_from_dh,
    crlb_up_from_accelerometer,
    plan_accelerometer_poses,
    up_from_accelerometer,
)
from gravdir.synthetic import iiwa_arm, ur5_arm
from gravdir.synthetic.accelerometer import (
    MICRO_G,
    accelerometer_readings,
    realistic_accelerometer,
)

DRAWS = 2000
ENCODER_STD = np.radians(0.003)
NOISE_STD = 150 * MICRO_G / 2.0


def _unit(v: list[float]) -> np.ndarray:
    a = np.asarray(v, dtype=float)
    return a / np.linalg.norm(a)


def run(name: str, arm, n_poses: int, planned: bool, encoder_std: float, seed: int) -> None:
    chain = chain_from_dh(*np.asarray(arm.dh).T)
    link = chain.n_joints - 1
    rng = np.random.default_rng(seed)
    if planned:
        q = plan_accelerometer_poses(
            chain, link, n_poses, noise_std=NOISE_STD, encoder_std=encoder_std, up_hint=arm.up
        ).q
    else:
        q = rng.uniform(-np.pi, np.pi, (n_poses, chain.n_joints))
    errors = np.empty((DRAWS, 3))
    reported = np.empty((DRAWS, 3, 3))
    bound = np.empty(DRAWS)
    start = time.perf_counter()
    for i in range(DRAWS):
        sensor = realistic_accelerometer(rng)
        data = accelerometer_readings(arm, q, sensor, rng, link=link, encoder_std=encoder_std)
        fit = up_from_accelerometer(
            chain,
            data.measured_q,
            readings=data.readings,
            link=link,
            noise_std=data.noise_std,
            encoder_std=encoder_std,
        )
        errors[i] = fit.up - arm.up
        reported[i] = fit.up_cov
    elapsed = time.perf_counter() - start
    for i in range(0, DRAWS, 50):  # the bound barely varies with the sensor: every 50th draw
        sensor = realistic_accelerometer(np.random.default_rng(i))
        b = crlb_up_from_accelerometer(
            chain,
            q,
            link=link,
            noise_std=NOISE_STD,
            encoder_std=encoder_std,
            up_hint=arm.up,
            sensitivity=sensor.sensitivity,
            link_from_sensor=sensor.link_from_sensor,
        )
        bound[i // 50] = np.trace(b.up_cov)
    crb = np.sqrt(np.mean(bound[: (DRAWS + 49) // 50]))
    rms = np.sqrt(np.mean(np.sum(errors**2, axis=1)))
    empirical = errors.T @ errors / DRAWS
    angle = np.degrees(np.linalg.norm(errors, axis=1))
    print(
        f"{name:<34} RMS {np.degrees(rms):.5f}°  CRB {np.degrees(crb):.5f}°  "
        f"RMS/CRB {rms / crb:.3f}  "
        f"cov ratio {np.trace(empirical) / np.trace(reported.mean(0)):.3f}  "
        f"p50 {np.percentile(angle, 50):.5f}°  p95 {np.percentile(angle, 95):.5f}°  "
        f"{1e3 * elapsed / DRAWS:.1f} ms/fit"
    )


# %%
if __name__ == "__main__":
    ur5 = ur5_arm(up=_unit([0.05, -0.03, 1.0]))
    iiwa = iiwa_arm(up=_unit([-0.2, 0.1, 1.0]))
    run("UR5-like, 8 planned", ur5, 8, True, ENCODER_STD, 1)
    run("UR5-like, 8 random", ur5, 8, False, ENCODER_STD, 2)
    run("UR5-like, 8 planned, exact encoders", ur5, 8, True, 0.0, 3)
    run("UR5-like, 16 planned", ur5, 16, True, ENCODER_STD, 4)
    run(
        "UR5-like, 8 planned, tilted 20°",
        ur5_arm(up=_unit([np.tan(np.radians(20)), 0, 1])),
        8,
        True,
        ENCODER_STD,
        5,
    )
    run("iiwa-like, 8 planned", iiwa, 8, True, ENCODER_STD, 6)
    run("iiwa-like, 8 random", iiwa, 8, False, ENCODER_STD, 7)
