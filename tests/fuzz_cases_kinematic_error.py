"""Valid calls of gravdir.kinematic_error and gravdir.synthetic.harmonic_drive for the fuzz suite.

Records are small (a few hundred samples over a few motor revolutions) so that every call stays
cheap; the orders are 1 and 2 cycles per motor revolution, which such a record resolves.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from gravdir.kinematic_error import KinematicErrorModel
from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]

KE = "gravdir.kinematic_error"
HD = "gravdir.synthetic.harmonic_drive"


def _orders() -> np.ndarray:
    return np.array([1.0, 2.0])


def _motor_angle(revolutions: float = 4.0, n: int = 400) -> np.ndarray:
    return np.linspace(0.0, 2 * math.pi * revolutions, n) + 0.3


def _readings(theta: np.ndarray) -> np.ndarray:
    """A deviation of orders 1 and 2 on a static reading of gravity, seeded noise."""
    rng = np.random.default_rng(11)
    acc = np.zeros((theta.size, 3))
    acc[:, 0] = -0.8 + 0.05 * np.cos(theta + 0.4)
    acc[:, 1] = 0.2 * np.cos(2 * theta - 0.7)
    acc[:, 2] = 9.80665
    return acc + 1e-3 * rng.normal(size=acc.shape)


def _signal(theta: np.ndarray) -> np.ndarray:
    return 1.5 + 0.3 * np.cos(2 * theta + 0.5) + 0.1 * np.sin(theta)


def _joint() -> HarmonicDriveJoint:
    return HarmonicDriveJoint()


def _phasors(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Real-valued phasors: a valid complex input that the harness can vary."""
    return np.random.default_rng(seed).normal(size=shape)


def _tuner_kwargs() -> dict[str, Any]:
    return {
        "threshold": 0.01,
        "threshold_order": 2.0,
        "trial_amplitude": 2e-3,
        "trim_revolutions": 0.5,
        "window_revolutions": 1.0,
    }


def _time(n: int = 300, rate: float = 500.0) -> np.ndarray:
    return np.arange(n) / rate


CASES: dict[str, Case] = {
    f"{KE}.harmonic_drive_orders": lambda: (
        (200, 202),
        {"motor_multiples": np.array([1, 2, 4]), "flexspline_multiples": np.array([1, 2])},
    ),
    f"{KE}.KinematicErrorModel": lambda: (
        (_orders(), np.array([[1e-3, -2e-3], [5e-4, 0.0]])),
        {},
    ),
    f"{KE}.motor_speed_for_resonance": lambda: ((10.0,), {"order": 2.0}),
    f"{KE}.expected_acceleration": lambda: (
        (
            np.linspace(-0.5, 0.5, 50),
            np.full(50, 0.3),
            0.1 * np.sin(np.linspace(0.0, 3.0, 50)),
            0.8,
            np.array([0.6, 0.0, 0.8]),
        ),
        {"gravity": 9.81},
    ),
    f"{KE}.combine_axes": lambda: (
        (_readings(_motor_angle(2.0, 60)),),
        {"method": "norm"},
    ),
    f"{KE}.moving_average_expected": lambda: (
        (_motor_angle(), _signal(_motor_angle())),
        {"window_revolutions": 1.0},
    ),
    f"{KE}.split_at_reversals": lambda: (
        (np.concatenate([np.linspace(0.0, 4.0, 40), np.linspace(4.0, 1.0, 30)[1:]]),),
        {},
    ),
    f"{KE}.order_spectrum": lambda: (
        (_motor_angle(),),
        {
            "signal": _signal(_motor_angle()),
            "orders": _orders(),
            "resolution": 1.0,
            "min_samples_per_period": 2.5,
        },
    ),
    f"{KE}.measure_run": lambda: (
        (_motor_angle(),),
        {
            "readings": _readings(_motor_angle()),
            "orders": _orders(),
            "trim_revolutions": 0.25,
            "window_revolutions": 1.0,
            "resolution": 1.0,
        },
    ),
    f"{KE}.phasor_gradient": lambda: (
        (_phasors((3, 2), 1), _phasors((3, 2), 2)),
        {},
    ),
    f"{KE}.fit_phasor_response": lambda: (
        (_phasors((3, 2), 3), _phasors((3, 4, 2), 4)),
        {},
    ),
    f"{KE}.bold_driver_update": lambda: (
        (
            np.array([[1e-3, 0.0], [0.0, -2e-3]]),
            np.array([[1.0, -2.0], [0.5, 0.1]]),
            np.array([[0.8, -1.0], [-0.2, 0.3]]),
            1e-3,
        ),
        {"grow": 1.2, "shrink": 0.5},
    ),
    f"{KE}.rprop_update": lambda: (
        (
            np.array([[1e-3, 0.0], [0.0, -2e-3]]),
            np.array([[1.0, -2.0], [0.5, 0.1]]),
            np.array([[0.8, -1.0], [-0.2, 0.3]]),
            np.array([[2e-3, 1e-3], [4e-3, 1e-4]]),
        ),
        {"eta_plus": 1.2, "eta_minus": 0.5, "step_min": 1e-7, "step_max": 0.05},
    ),
    f"{KE}.BoldDriverTuner": lambda: (
        (_orders(),),
        {**_tuner_kwargs(), "initial_step": 2e-3, "grow": 1.2, "shrink": 0.5},
    ),
    f"{KE}.RpropTuner": lambda: (
        (_orders(),),
        {
            **_tuner_kwargs(),
            "initial_step": 2e-3,
            "eta_plus": 1.2,
            "eta_minus": 0.5,
            "step_min": 1e-7,
            "step_max": 0.05,
        },
    ),
    f"{KE}.InfluenceTuner": lambda: (
        (_orders(),),
        {**_tuner_kwargs(), "initial": KinematicErrorModel.zero(_orders())},
    ),
    f"{HD}.HarmonicDriveJoint": lambda: (
        (),
        {
            "flexspline_teeth": 100,
            "circular_spline_teeth": 102,
            "te_orders": np.array([1.0, 2.0, 100 / 102]),
            "te_amplitudes": np.array([2e-5, 5e-5, 1e-5]),
            "te_phases": np.array([0.3, -1.1, 0.7]),
            "output_amplitude": 2e-5,
            "output_phase": 0.4,
            "natural_frequency": 12.0,
            "damping_ratio": 0.05,
            "radius": 0.8,
            "up": np.array([0.0, 0.6, 0.8]),
            "noise_density": 1e-3,
            "bias": np.array([0.01, -0.02, 0.03]),
            "sample_rate": 500.0,
            "gravity": 9.81,
        },
    ),
    f"{HD}.simulate_run": lambda: (
        (_joint(), _time(), 10.0 * _time(), np.full(300, 10.0), np.zeros(300)),
        {"correction": KinematicErrorModel([2.0], [[1e-3, 0.0]]), "settle_time": 0.1},
    ),
    f"{HD}.constant_speed_run": lambda: (
        (_joint(), 31.4, 1.0),
        {"settle_time": 0.2},
    ),
    f"{HD}.oscillating_run": lambda: (
        (_joint(), 31.4, 0.5, 2),
        {"ramp_time": 0.1},
    ),
}

NOT_CALLED: dict[str, str] = {
    f"{KE}.BoldDriverUpdate": "result of bold_driver_update",
    f"{KE}.OrderSpectrum": "result of order_spectrum",
    f"{KE}.PhasorResponseFit": "result of fit_phasor_response",
    f"{KE}.RpropUpdate": "result of rprop_update",
    f"{KE}.RunSpectrum": "result of measure_run",
    f"{KE}.TunerRun": "a run recorded by a tuner's step",
    f"{HD}.JointRun": "result of the simulators",
    f"{HD}.MotorCorrection": "a Protocol: any object with a derivative method",
}
