"""Valid calls of gravdir.closed_form for the fuzz suite.

The fits (`SweepFit` objects) are passed as they are; the harness mutates the scalar arguments
(J1 positions, link angles, azimuth, tolerances, the L3 ratio and sign).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gravdir.frames import up_from_canonical
from gravdir.sweep import SweepFit, fit_sweep
from gravdir.synthetic import TorqueSensor, canonical_arm

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]

GAMMA, GAMMA0 = 1.3, 0.1
L1, L2, L3 = 0.6, 0.05, 0.1
LAM = L3 / float(np.hypot(L1, L2))


@functools.cache
def _fits() -> tuple[SweepFit, float, SweepFit, float, SweepFit]:
    """J1 fit, unstable zero, J2 fit there, stable zero, J2 fit there: noisy, 200 samples each."""
    arm = canonical_arm(
        L1=L1, L2=L2, L3=L3, gamma0=GAMMA0, mass=3.0, up=up_from_canonical(0.8, 0.5)
    )
    sensors = (TorqueSensor(noise_std=0.02), TorqueSensor(noise_std=0.02))
    rng = np.random.default_rng(11)

    def fit(joint: int, conf: list[float]) -> SweepFit:
        start, stop = (-2.0, 2.0) if joint == 0 else (conf[1] - 1.5, conf[1] + 1.5)
        speed, rate = (1.0, 25.0) if joint == 0 else (1.0, 33.0)
        rec = arm.sweep(joint, conf, start, stop, speed, rate, sensor=sensors, rng=rng)
        return fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque)

    f1 = fit(0, [0.0, GAMMA - GAMMA0])
    zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    return f1, zu, fit(1, [zu, 0.0]), zs, fit(1, [zs, 0.0])


def _point_mass() -> tuple[tuple[Any, ...], dict[str, Any]]:
    f1, zu, fu, _, _ = _fits()
    return (f1, fu, zu, GAMMA, GAMMA0), {
        "arm_azimuth": 0.2,
        "zero_tol": 0.05,
        "parallel_sigma": 3.0,
        "parallel_rtol": 1e-9,
        "singular_tol": 1e-3,
    }


def _l2_offset() -> tuple[tuple[Any, ...], dict[str, Any]]:
    f1, zu, fu, zs, fs = _fits()
    return (f1, fu, zu, GAMMA, GAMMA0), {
        "fit_j2_other": fs,
        "q1_at_j2_other": zs,
        "arm_azimuth": 0.2,
        "zero_tol": 0.05,
        "parallel_sigma": 3.0,
        "parallel_rtol": 1e-9,
        "singular_tol": 1e-3,
    }


def _l3_offset() -> tuple[tuple[Any, ...], dict[str, Any]]:
    f1, zu, fu, zs, fs = _fits()
    return (f1, fu, zu, GAMMA, GAMMA0), {
        "l3_ratio": LAM,
        "fit_j2_other": fs,
        "q1_at_j2_other": zs,
        "l3_sign": 1,
        "arm_azimuth": 0.2,
        "zero_tol": 0.05,
        "parallel_sigma": 3.0,
        "parallel_rtol": 1e-9,
        "singular_tol": 1e-3,
        "amplitude_ratio_rtol": 0.12,
    }


def _two_branch() -> tuple[tuple[Any, ...], dict[str, Any]]:
    f1, zu, fu, zs, fs = _fits()
    return (f1, fu, zu, fs, zs), {
        "arm_azimuth": 0.2,
        "zero_tol": 0.05,
        "parallel_sigma": 3.0,
        "parallel_rtol": 1e-9,
    }


CASES: dict[str, Case] = {
    "gravdir.closed_form.solve_point_mass": _point_mass,
    "gravdir.closed_form.solve_l2_offset": _l2_offset,
    "gravdir.closed_form.solve_l3_offset": _l3_offset,
    "gravdir.closed_form.solve_two_branch": _two_branch,
}

NOT_CALLED: dict[str, str] = {
    "gravdir.closed_form.ClosedFormEstimate": "a result type, returned by the solvers only",
    "gravdir.closed_form.ClosedFormRoot": "a result type, one root inside a ClosedFormEstimate",
}
