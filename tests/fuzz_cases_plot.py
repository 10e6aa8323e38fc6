"""Valid calls of `gravdir.plot` (other than `plot_sweep`) for the fuzz suite (tests/test_fuzz.py).

Each call draws into shared Axes that deep-copy to themselves (see `fuzz_cases_sweep`): drawing
into them is what the plots are for, and a repeated call then returns the same figure and axes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gravdir.friction import FrictionFit, excitation_trajectory, fit_friction  # noqa: E402
from gravdir.general import JointSweep, UpEstimate, estimate_up  # noqa: E402
from gravdir.kinematic_error import InfluenceTuner, order_spectrum  # noqa: E402
from gravdir.kinematics import chain_from_dh, link_frames  # noqa: E402
from gravdir.sweep import fit_sweep  # noqa: E402
from gravdir.synthetic import (  # noqa: E402
    HarmonicDriveJoint,
    SyntheticFrictionJoint,
    constant_speed_run,
    touch_contacts,
)
from gravdir.touch import up_from_touch_points  # noqa: E402

Case = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]


class _SharedAxes(Axes):
    """Axes that deep-copy to themselves, so the harness compares them by identity."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedAxes:
        return self


_FIGURES: dict[int, list[Axes]] = {}


def _axes(n: int) -> list[Axes]:
    """`n` shared Axes of one figure, cleared."""
    if n not in _FIGURES:
        fig = Figure()
        _FIGURES[n] = [fig.add_subplot(1, n, i + 1, axes_class=_SharedAxes) for i in range(n)]
    for ax in _FIGURES[n]:
        ax.cla()
    return _FIGURES[n]


@cache
def _estimate() -> tuple[UpEstimate, tuple[JointSweep, ...], np.ndarray]:
    """J2 of a two-joint arm swept at J1 = 0, 90°, 180° on a tilted base, and the estimate."""
    rng = np.random.default_rng(3)
    chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    up = np.array([np.sin(0.3), 0.0, np.cos(0.3)])
    w = np.array([0.0, 9.81, 0.0])
    q = np.concatenate([np.linspace(-1, 1, 100), np.linspace(1, -1, 100)])
    v = np.concatenate([np.full(100, 0.3), np.full(100, -0.3)])
    sweeps = []
    for q1 in (0.0, np.pi / 2, np.pi):
        r = link_frames(chain, [q1, 0.0]).rotations[1]
        a = chain.axes_in_link[1]
        tau = np.cos(q)[:, None] * (r @ w) + np.sin(q)[:, None] * (r @ np.cross(a, w))
        torque = tau @ up + 0.2 * np.sign(v) + 0.01 * rng.standard_normal(q.size)
        sweeps.append(JointSweep(1, r, a, 0.0, fit_sweep(q, velocity=v, torque=torque)))
    return estimate_up(sweeps), tuple(sweeps), up


def _plot_up() -> tuple[tuple[Any, ...], dict[str, Any]]:
    est, sweeps, up = _estimate()
    return (est, list(sweeps)), dict(truth=up * 2.0, ax=_axes(1)[0])


def _plot_touches() -> tuple[tuple[Any, ...], dict[str, Any]]:
    data = touch_contacts(np.random.default_rng(5), 8, noise_std=2e-5)
    pts = np.einsum("nij,j->ni", data.flange_poses[:, :3, :3], data.tool_tip)
    pts = pts + data.flange_poses[:, :3, 3]
    return (up_from_touch_points(pts), pts), dict(length_unit="m", ax=_axes(2))


@cache
def _spectra() -> tuple[Any, Any]:
    th = np.linspace(0.0, 2 * np.pi * 6, 1200)
    before_signal = 0.3 * np.cos(2 * th + 0.5) + 0.05 * np.cos(th)
    after_signal = 0.01 * np.cos(2 * th + 0.5) + 0.04 * np.cos(th)
    before = order_spectrum(th, signal=before_signal, orders=[1.0, 2.0])
    after = order_spectrum(th, signal=after_signal, orders=[1.0, 2.0])
    return before, after


def _plot_order_spectrum() -> tuple[tuple[Any, ...], dict[str, Any]]:
    before, after = _spectra()
    return (before, after), dict(unit="m/s²", ax=_axes(1)[0])


@cache
def _tuner() -> InfluenceTuner:
    joint = HarmonicDriveJoint(noise_density=0.0, up=np.array([0.0, -1.0, 0.0]))
    tuner = InfluenceTuner([1.0, 2.0])
    for _ in range(3):
        run = constant_speed_run(joint, 31.4, 12, correction=tuner.model)
        tuner.step(run.motor_angle, readings=run.acceleration)
    return tuner


def _plot_tuner() -> tuple[tuple[Any, ...], dict[str, Any]]:
    return (_tuner(),), dict(threshold=1e-3, ax=_axes(2))


@cache
def _friction() -> tuple[FrictionFit, np.ndarray, np.ndarray, np.ndarray]:
    plan = excitation_trajectory(
        -0.6, 0.6, [0.01, 0.05, 0.2, 0.6], max_acceleration=3.0, sample_rate=50.0, cruise_time=0.3
    )
    joint = SyntheticFrictionJoint(offset=0.2, noise_std=0.02)
    v, a = np.array(plan.velocity), np.array(plan.acceleration)
    tau = joint.measure(plan.q, v, a, rng=np.random.default_rng(11))
    fit = fit_friction(v, acceleration=a, torque=tau, model="stribeck", exponent=2.0)
    return fit, v, tau, a


def _plot_friction() -> tuple[tuple[Any, ...], dict[str, Any]]:
    fit, v, tau, a = _friction()
    return (fit, v.copy()), dict(torque=tau.copy(), acceleration=a.copy(), nsigma=2.0, ax=_axes(2))


CASES: dict[str, Case] = {
    "gravdir.plot.plot_up": _plot_up,
    "gravdir.plot.plot_touches": _plot_touches,
    "gravdir.plot.plot_order_spectrum": _plot_order_spectrum,
    "gravdir.plot.plot_tuner": _plot_tuner,
    "gravdir.plot.plot_friction": _plot_friction,
}
