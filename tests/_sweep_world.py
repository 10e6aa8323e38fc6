"""The synthetic sweep world with a real phenomenon, shared by ``tests/test_sweep_hac.py`` and
``benchmarks/reference_distributions.py``.

A UR5-like arm tilted 0.6 rad, its J2 swept over 120° at 100 Hz at J1 = 0.4, 0.4 + 90°,
0.4 + 180° by the realistic sensors with their noise correlated over 0.15 s (a joint's
residuals worth about a thirtieth of their samples at 0.25 rad/s; the real logs' J1 residuals
are worth a third to a twentieth). Each draw fits the three sweeps with ``covariance="white"``
and with ``covariance="hac"`` and estimates `up` from each set (``estimate_up``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

import gravdir
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm

RATE = 100.0
COVARIANCES = {"white": {}, "hac": {"covariance": "hac", "sample_rate": RATE}}


def correlated_sweep_estimates(
    n: int, speed: float
) -> tuple[dict[str, list[gravdir.UpEstimate]], np.ndarray]:
    """`n` draws of the world at J2 `speed` (rad/s): the estimates of each covariance (the
    same sweeps fitted both ways) and the true `up`. Seeded: the first draws of a larger `n`
    are those of a smaller one."""
    rng = np.random.default_rng(11)
    arm = ur5_arm(up=up_from_base_tilt(0.6, 0.7))
    chain = gravdir.chain_from_dh(*arm.dh.T)
    sensors = [
        dataclasses.replace(s, noise_correlation_time=0.15)
        for s in realistic_sensors(rng, arm.peak_gravity_torque())
    ]
    fit_kw = {"load_friction": "abs", "harmonics": (sensors[1].ripple_order,)}
    out: dict[str, list[gravdir.UpEstimate]] = {name: [] for name in COVARIANCES}
    for _ in range(n):
        sweeps: dict[str, list[gravdir.JointSweep]] = {name: [] for name in COVARIANCES}
        for turn in (0.0, np.pi / 2, np.pi):
            c = np.array([0.4 + turn, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
            rec = arm.sweep(1, c, c[1] - np.pi / 3, c[1] + np.pi / 3, speed, RATE,
                            sensor=sensors, rng=rng)  # fmt: skip
            c[1] = rec.q[0]
            for name, extra in COVARIANCES.items():
                fit = gravdir.fit_sweep(
                    rec.q, velocity=rec.velocity, torque=rec.torque, **fit_kw, **extra
                )
                sweeps[name].append(gravdir.joint_sweep_from_chain(chain, c, 1, fit))
        for name, group in sweeps.items():
            out[name].append(gravdir.estimate_up(group, up_hint=arm.up))
    return out, arm.up
