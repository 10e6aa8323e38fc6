"""Valid calls of gravdir.accelerometer and gravdir.synthetic.accelerometer for the fuzz suite."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from gravdir.accelerometer import (
    crlb_up_from_accelerometer,
    plan_accelerometer_poses,
    up_from_accelerometer,
)
from gravdir.kinematics import chain_from_dh
from gravdir.synthetic import ur5_arm
from gravdir.synthetic.accelerometer import accelerometer_readings, realistic_accelerometer

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]


class _Rng(np.random.Generator):
    """A seeded generator that compares equal to any generator (see fuzz_cases_touch)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, np.random.Generator)

    __hash__ = None  # type: ignore[assignment]


def _arm() -> Any:
    return ur5_arm()


def _chain() -> Any:
    return chain_from_dh(*np.asarray(_arm().dh).T)


def _q() -> np.ndarray:
    return np.random.default_rng(0).uniform(-2.0, 2.0, (8, 6))


@functools.cache
def sample_results() -> dict[str, Any]:
    """One instance of every accelerometer result type, from real calls."""
    rng = np.random.default_rng(1)
    sensor = realistic_accelerometer(rng)
    data = accelerometer_readings(_arm(), _q(), sensor, rng, link=5, encoder_std=5e-5)
    fit = up_from_accelerometer(
        _chain(),
        data.measured_q,
        readings=data.readings,
        link=5,
        noise_std=data.noise_std,
        encoder_std=5e-5,
    )
    bound = crlb_up_from_accelerometer(_chain(), _q(), link=5, noise_std=7e-4, encoder_std=5e-5)
    plan = plan_accelerometer_poses(_chain(), 5, 6, noise_std=7e-4, n_candidates=30)
    return {"sensor": sensor, "data": data, "fit": fit, "bound": bound, "plan": plan}


def _readings() -> np.ndarray:
    return np.array(sample_results()["data"].readings)


def _measured() -> np.ndarray:
    return np.array(sample_results()["data"].measured_q)


CASES: dict[str, Case] = {
    "gravdir.accelerometer.up_from_accelerometer": lambda: (
        (_chain(), _measured()),
        {
            "readings": _readings(),
            "link": 5,
            "noise_std": 7e-4,
            "encoder_std": 5e-5,
            "gravity": 9.81,
            "up_hint": np.array([0.0, 0.0, 1.0]),
            "max_iter": 20,
            "xtol": 1e-10,
        },
    ),
    "gravdir.accelerometer.crlb_up_from_accelerometer": lambda: (
        (_chain(), _q()),
        {
            "link": 5,
            "reading_cov": np.eye(3) * 5e-7,
            "encoder_std": np.full(6, 5e-5),
            "up_hint": np.array([0.0, 0.1, 1.0]),
            "sensitivity": np.eye(3),
            "link_from_sensor": np.eye(3),
            "gravity": 9.81,
        },
    ),
    "gravdir.accelerometer.plan_accelerometer_poses": lambda: (
        (_chain(), 5, 6),
        {
            "noise_std": 7e-4,
            "encoder_std": 5e-5,
            "q_limits": np.tile([-2.0, 2.0], (6, 1)),
            "up_hint": np.array([0.0, 0.0, 1.0]),
            "n_candidates": 30,
            "rng": _Rng(np.random.PCG64(0)),
            "gravity": 9.81,
        },
    ),
    "gravdir.synthetic.accelerometer.realistic_accelerometer": lambda: (
        (_Rng(np.random.PCG64(0)),),
        {"link_from_sensor": np.eye(3)},
    ),
    "gravdir.synthetic.accelerometer.accelerometer_readings": lambda: (
        (_arm(), _q(), sample_results()["sensor"], _Rng(np.random.PCG64(0))),
        {"link": 5, "averaging_time": 2.0, "encoder_std": 5e-5},
    ),
    "gravdir.synthetic.accelerometer.AccelerometerSensor": lambda: (
        (1.5e-3, np.zeros(3), np.ones(3), np.zeros(3), np.eye(3)),
        {"vibration_amplitude": 0.1, "vibration_frequency": 20.0},
    ),
}

NOT_CALLED: dict[str, str] = {
    "gravdir.accelerometer.AccelerometerFit": "result of up_from_accelerometer",
    "gravdir.accelerometer.AccelerometerBound": "result of crlb_up_from_accelerometer",
    "gravdir.accelerometer.AccelerometerPlan": "result of plan_accelerometer_poses",
    "gravdir.synthetic.accelerometer.AccelerometerReadings": "result of accelerometer_readings",
}
