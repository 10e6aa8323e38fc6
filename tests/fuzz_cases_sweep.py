"""Valid calls of `gravdir.sweep` and `gravdir.plot` for the fuzz suite (tests/test_fuzz.py).

Each factory builds a small, seeded forward/backward sweep (300 samples) and returns the
arguments of one valid call; the suite then replaces each argument in turn by hostile variants.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gravdir.sweep import fit_sweep  # noqa: E402


def _sweep(seed: int = 11) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 2.2 rad forward/backward sweep whose speed varies within each pass, with noise; the
    velocity is that of samples 0.02 s apart (the acceleration of the inertia column is
    `_acceleration`)."""
    rng = np.random.default_rng(seed)
    half = 150
    fwd = np.linspace(-1.0, 1.2, half)
    q = 0.3 + np.concatenate([fwd, fwd[::-1]])
    speed = np.linspace(0.2, 0.4, half)
    v = np.concatenate([speed, -speed[::-1]])
    torque = 0.2 + 4.0 * np.sin(q + 0.5) + 0.6 * np.sign(v) + 0.3 * v
    torque = torque + 0.05 * np.abs(4.0 * np.sin(q + 0.5)) * np.sign(v)
    return q, torque + rng.normal(0.0, 0.02, q.size), v


def _acceleration() -> np.ndarray:
    """The acceleration of `_sweep`'s velocity (samples 0.02 s apart); with inertia 0.4 in the
    torque of `_fit_sweep`."""
    _, _, v = _sweep()
    return np.gradient(v, 0.02)


def _fit_sweep() -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, torque, v = _sweep()
    acceleration = _acceleration()
    kwargs = dict(
        velocity=v,
        acceleration=acceleration,
        torque=torque + 0.4 * acceleration,
        min_speed=0.05,
        load_friction="abs",
        harmonics=[3.0],
        min_arc=0.5,
        single_speed_rtol=1e-6,
        max_iter=50,
        load_amplitude_rtol=1e-9,
        torque_sign=1,
        nan_policy="raise",
        covariance="hac",
        bandwidth=0.2,
        sample_rate=50.0,
    )
    return (q,), kwargs


def _fit_sweep_common_mode() -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, torque, v = _sweep()
    return (q,), dict(
        velocity=v,
        torque=torque,
        min_speed=0.05,
        n_grid=64,
        min_arc=0.5,
        torque_sign=1,
        nan_policy="raise",
    )


def _amplitude_phase_bound() -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, _, v = _sweep()
    return (q,), dict(
        velocity=v,
        acceleration=_acceleration(),
        amplitude=4.0,
        phase=0.5,
        noise_std=0.02,
        min_speed=0.05,
        single_speed_rtol=1e-6,
    )


def _joint_acceleration() -> tuple[tuple[Any, ...], dict[str, Any]]:
    _, _, v = _sweep()
    rng = np.random.default_rng(5)
    time = (np.arange(v.size) + rng.uniform(-0.2, 0.2, v.size)) * 0.02
    return (time,), dict(velocity=v, window=0.1, polyorder=3, nan_policy="raise", axis=-1)


def _joint_velocity() -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, _, _ = _sweep()
    time = np.arange(q.size) * 0.02
    return (time,), dict(q=q, window=0.1, polyorder=2, nan_policy="raise", axis=-1)


def _wrap_angle() -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (np.array([-7.0, -np.pi, 0.0, 1.0, np.pi, 10.0]),), {}


class _SharedAxes(Axes):
    """Axes that deep-copy to themselves.

    Drawing into the axes it is given is what `plot_sweep` is for, so the suite's check that
    the arguments are unchanged must compare these axes by identity (its deep copy of the
    arguments still checks every array), and a repeated call returns the same axes.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedAxes:
        return self


_AXES: list[Axes] = []


def _shared_axes() -> Axes:
    if not _AXES:
        _AXES.append(Figure().add_subplot(axes_class=_SharedAxes))
    return _AXES[0]


def _plot_sweep() -> tuple[tuple[Any, ...], dict[str, Any]]:
    q, torque, v = _sweep()
    ax = _shared_axes()
    ax.cla()
    return (fit_sweep(q, velocity=v, torque=torque, min_speed=0.05), q), dict(
        velocity=v, torque=torque, ax=ax, degrees=True
    )


CASES: dict[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "gravdir.sweep.fit_sweep": _fit_sweep,
    "gravdir.sweep.fit_sweep_common_mode": _fit_sweep_common_mode,
    "gravdir.sweep.amplitude_phase_bound": _amplitude_phase_bound,
    "gravdir.sweep.joint_acceleration": _joint_acceleration,
    "gravdir.sweep.joint_velocity": _joint_velocity,
    "gravdir.sweep.wrap_angle": _wrap_angle,
    "gravdir.plot.plot_sweep": _plot_sweep,
}

def _fit_sweep_batch() -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Two sweeps with the default options: the batched fast path of fit_sweep."""
    q, torque, v = _sweep()
    return (np.stack([q, q[::-1]]),), dict(
        velocity=np.stack([v, -v[::-1]]),
        torque=np.stack([torque, 1.5 * torque[::-1]]),
        min_speed=None,
        friction="auto",
        min_arc=0.5,
        single_speed_rtol=1e-6,
        torque_sign=1,
        nan_policy="raise",
    )


# Further calls of a public callable that take another path through it (tests/test_fuzz.py).
PATH_CASES: dict[str, Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "gravdir.sweep.fit_sweep[batched fast path]": _fit_sweep_batch,
}

NOT_CALLED: dict[str, str] = {
    "gravdir.sweep.SweepFit": "a result: returned by fit_sweep and fit_sweep_common_mode",
    "gravdir.sweep.SweepZeros": "a result: returned by SweepFit.zeros()",
}
