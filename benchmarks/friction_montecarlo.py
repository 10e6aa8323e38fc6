"""Monte Carlo of the two-pose friction identification: accuracy, covariance calibration, time.

A Panda-sized asymmetric Stribeck joint with inertia and load-dependent friction follows an
8-speed plan (0.005-1 rad/s) in a gravity-free and a loaded pose (gravity torque up to 20 N·m),
with white torque noise. Prints, per parameter, the 95th percentile of the relative error, the
ratio of the empirical spread to the reported standard error, and the mean time per fit.
"""

from __future__ import annotations

import time

import numpy as np

from gravdir import excitation_trajectory, fit_friction, load_dependent_friction
from gravdir.synthetic import SyntheticFrictionJoint, holding_torque

NAMES = (
    "coulomb_positive",
    "coulomb_negative",
    "viscous_positive",
    "viscous_negative",
    "stribeck_velocity_positive",
    "stribeck_velocity_negative",
    "inertia",
)


def run(noise_std: float, n_draws: int, exponent: float | None, seed: int = 0) -> None:
    plan = excitation_trajectory(
        -1.2,
        1.2,
        np.geomspace(0.005, 1.0, 8),
        max_acceleration=2.0,
        sample_rate=100.0,
        cruise_time=2.0,
    )
    joint = SyntheticFrictionJoint(offset=0.25, noise_std=noise_std)
    if exponent is not None:
        joint = SyntheticFrictionJoint(
            offset=0.25,
            noise_std=noise_std,
            exponent_positive=exponent,
            exponent_negative=exponent,
        )
    gravity = holding_torque(plan.q, joint_axis=[0, 1, 0], up=[0, 0, 1], first_moment=[2, 0, 0.5])
    truth = np.array([3.25, 2.35, 2.0, 2.3, 0.04, 0.03, 0.8, 0.03])
    rng = np.random.default_rng(seed)
    est = np.empty((n_draws, truth.size))
    se = np.empty_like(est)
    t_fit = 0.0
    for i in range(n_draws):
        free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
        loaded = joint.measure(
            plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
        )
        t0 = time.perf_counter()
        fit = fit_friction(
            plan.velocity,
            acceleration=plan.acceleration,
            torque=free,
            model="asymmetric-stribeck",
            exponent=exponent,
        )
        res = load_dependent_friction(
            fit,
            plan.velocity,
            acceleration=plan.acceleration,
            torque=loaded,
            gravity_torque=gravity,
        )
        t_fit += time.perf_counter() - t0
        idx = [fit.parameter_names.index(n) for n in NAMES]
        est[i, :-1], se[i, :-1] = fit.parameters[idx], fit.parameters_std[idx]
        est[i, -1], se[i, -1] = res.load_coefficient, res.load_coefficient_std
    rel = np.abs(est / truth - 1)
    ratio = est.std(axis=0, ddof=1) / np.sqrt(np.mean(se**2, axis=0))
    label = "free" if exponent is None else f"fixed {exponent:g}"
    print(
        f"\nnoise {noise_std:g} N·m, exponent {label}, {n_draws} draws, {plan.time.size} samples, "
        f"{1e3 * t_fit / n_draws:.1f} ms per joint (both fits)"
    )
    print(f"{'parameter':28s} {'p95 rel err':>12s} {'spread/se':>10s}")
    for k, name in enumerate((*NAMES, "load_coefficient")):
        print(f"{name:28s} {np.percentile(rel[:, k], 95):12.4f} {ratio[k]:10.3f}")


if __name__ == "__main__":
    run(0.1, 300, None)
    run(0.3, 300, None)
    run(0.3, 300, 2.0)
