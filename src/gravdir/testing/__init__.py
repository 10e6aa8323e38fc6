"""Property testing against synthetic robots: hypothesis strategies and uncertainty-aware checks.

Strategies draw the synthetic world together with its truth: directions of gravity and mounts
(:func:`ups`, :func:`mounts`), serial chains (:func:`serial_chains`: random standard and
modified DH tables, UR5, Panda), arms with masses (:func:`arms`), realistic sensor errors
(:func:`sensor_errors`), joint sweeps (:func:`sweep_experiments`), touch sets with flange poses
(:func:`touch_sets`), harmonic-drive joints (:func:`harmonic_drive_joints`) and friction joints
(:func:`friction_joints`), and what real motion logs hold beyond white noise
(:func:`motion_phenomena`: correlated noise, model error, zero offsets, stamps, rests, corrupted
rows). Each draws a small frozen record that carries the truth.

Assertions judge an estimate against the truth in units of the uncertainty the estimate reports
(:func:`assert_within_uncertainty`, :func:`assert_up_consistent`,
:func:`assert_tilt_azimuth_consistent`) and judge the reported covariances themselves over many
draws (:func:`assert_covariance_honest`, :func:`assert_up_covariance_honest`).

This module needs hypothesis, the optional extra ``gravdir[testing]``; ``import gravdir`` does
not import it. ``docs/testing.md`` shows a calibration wrapper tested with it.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "gravdir.testing needs hypothesis: install the extra with `pip install -e '.[testing]'`."
    ) from exc

from gravdir.testing._assertions import (
    InconsistentEstimateError,
    assert_covariance_honest,
    assert_tilt_azimuth_consistent,
    assert_up_consistent,
    assert_up_covariance_honest,
    assert_within_uncertainty,
    up_error_tangent,
)
from gravdir.testing._experiments import (
    SweepExperiment,
    friction_joints,
    harmonic_drive_joints,
    sweep_experiments,
    touch_sets,
)
from gravdir.testing._phenomena import MotionPhenomena, motion_phenomena
from gravdir.testing._world import (
    ChainCase,
    Mount,
    arms,
    azimuths,
    mounts,
    sensor_errors,
    serial_chains,
    tilts,
    ups,
)

__all__ = [
    "ChainCase",
    "InconsistentEstimateError",
    "Mount",
    "MotionPhenomena",
    "SweepExperiment",
    "arms",
    "assert_covariance_honest",
    "assert_tilt_azimuth_consistent",
    "assert_up_consistent",
    "assert_up_covariance_honest",
    "assert_within_uncertainty",
    "azimuths",
    "friction_joints",
    "harmonic_drive_joints",
    "motion_phenomena",
    "mounts",
    "sensor_errors",
    "serial_chains",
    "sweep_experiments",
    "tilts",
    "touch_sets",
    "up_error_tangent",
    "ups",
]
