"""Kinematic-error plots: an order spectrum before and after tuning, and a tuner's runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import check_positive
from gravdir.kinematic_error import (
    BoldDriverTuner,
    InfluenceTuner,
    OrderSpectrum,
    RpropTuner,
    RunSpectrum,
    TunerRun,
)
from gravdir.plot._common import check_label, legend_outside, panels

__all__ = ["order_amplitudes", "plot_order_spectrum", "plot_tuner"]

_Tuners = BoldDriverTuner | RpropTuner | InfluenceTuner
_MARKERS = {"base": "o", "trial": "s", "probe": "^"}


def order_amplitudes(spectrum: OrderSpectrum | RunSpectrum) -> NDArray[np.float64]:
    """Amplitude per order, shape (k,): :meth:`RunSpectrum.amplitude` of each order, or for an
    :class:`OrderSpectrum` the root-sum-square of :math:`|c_k|` over its batch entries (the
    channels)."""
    if isinstance(spectrum, RunSpectrum):
        return np.array([spectrum.amplitude(float(q)) for q in spectrum.orders])
    mag = np.abs(spectrum.phasors).reshape(-1, spectrum.orders.size)
    top = float(np.max(mag)) if mag.size else 0.0
    top = top if top > 0 else 1.0
    with np.errstate(under="ignore"):
        out: NDArray[np.float64] = np.sqrt(np.sum((mag / top) ** 2, axis=0)) * top
    return out


def _check_spectrum(value: Any, name: str) -> OrderSpectrum | RunSpectrum:
    if not isinstance(value, OrderSpectrum | RunSpectrum):
        raise ValueError(
            f"Expected `{name}` to be an OrderSpectrum or RunSpectrum, got {type(value).__name__}."
        )
    return value


def plot_order_spectrum(
    before: OrderSpectrum | RunSpectrum,
    after: OrderSpectrum | RunSpectrum | None = None,
    *,
    unit: str = "m/s²",
    ax: Any = None,
) -> tuple[Any, tuple[Any, ...]]:
    """Draw the amplitude at each order before (and after) tuning, as paired bars.

    Parameters
    ----------
    before : OrderSpectrum or RunSpectrum
        The spectrum of the uncorrected run (:func:`~gravdir.order_spectrum`,
        :func:`~gravdir.measure_run`, ``tuner.history[0].spectrum``).
    after : OrderSpectrum or RunSpectrum, optional
        The spectrum after tuning, on the same orders.
    unit : str, optional
        Unit of the signal for the label (default ``"m/s²"``, a deviation acceleration).
    ax : matplotlib Axes, optional
        Axes to draw into; a new figure is made when omitted.

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : tuple of one matplotlib Axes
        Bars ``"before"`` (and ``"after"``), one pair per order at the positions 0, 1, ...
        (tick labels: the orders), of height the amplitude at that order
        (:meth:`~gravdir.kinematic_error.RunSpectrum.amplitude`; for an OrderSpectrum of several
        channels the root-sum-square of their amplitudes); a logarithmic amplitude axis where
        every amplitude is positive; with `after`, the change at each order in dB above its
        pair. The legend sits outside the axes.

    Raises
    ------
    ValueError
        If `before` or `after` is not an OrderSpectrum or RunSpectrum, their orders differ,
        `unit` is not a short string or `ax` is not Axes.

    Notes
    -----
    The change in dB is :math:`20 \\log_{10}(a_{after}/a_{before})`.

    References
    ----------
    US 2025/0065499 A1, paragraph 22 and claims 8-9 (the spectrum of the acceleration against
    the motor angle, whose 2x component is the usual measure).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from gravdir import order_spectrum
    >>> th = np.linspace(0, 2 * np.pi * 20, 8001)
    >>> a = order_spectrum(th, signal=0.3 * np.cos(2 * th) + 0.1 * np.cos(4 * th), orders=[2, 4])
    >>> b = order_spectrum(th, signal=0.03 * np.cos(2 * th) + 0.1 * np.cos(4 * th), orders=[2, 4])
    >>> fig, (ax,) = plot_order_spectrum(a, b)
    >>> [round(float(p.get_height()), 6) for p in ax.patches]
    [0.3, 0.1, 0.03, 0.1]
    """
    first = _check_spectrum(before, "before")
    second = None if after is None else _check_spectrum(after, "after")
    if second is not None and (
        second.orders.shape != first.orders.shape or not np.allclose(second.orders, first.orders)
    ):
        raise ValueError(
            f"Expected `after` on the orders of `before` {first.orders.round(6).tolist()}, got "
            f"{second.orders.round(6).tolist()}."
        )
    label = check_label(unit, "unit")
    fig, axes = panels(ax, 1, (7.5, 4.0))
    ax0 = axes[0]
    orders = np.asarray(first.orders, dtype=np.float64)
    amps = [order_amplitudes(first)] + ([] if second is None else [order_amplitudes(second)])
    # One slot per order, labelled with it: orders of a harmonic drive lie 0.01 apart.
    slots = np.arange(orders.size, dtype=np.float64)
    width = 0.8 / len(amps)
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        for j, (a, name) in enumerate(zip(amps, ("before", "after"), strict=False)):
            shift = (j - 0.5 * (len(amps) - 1)) * width
            ax0.bar(slots + shift, a, width=width, color=f"C{j}", label=name)
        if second is not None:
            change = 20 * np.log10(amps[1] / amps[0])
            for q, a0, a1, db in zip(slots, amps[0], amps[1], change, strict=True):
                if np.isfinite(db):
                    ax0.annotate(
                        f"{db:+.1f} dB",
                        (q, max(a0, a1)),
                        textcoords="offset points",
                        xytext=(0, 3),
                        ha="center",
                        fontsize="x-small",
                    )
        if all(bool(np.all(a > 0)) for a in amps):
            ax0.set_yscale("log")
    ax0.set_xticks(slots)
    ax0.set_xticklabels([f"{q:.4g}" for q in orders], rotation=45 if orders.size > 8 else 0)
    ax0.set_xlabel("order [cycles per motor revolution]")
    ax0.set_ylabel(f"amplitude [{label}]")
    legend_outside(ax0)
    return fig, axes


def _runs(tuner: Any) -> tuple[TunerRun, ...]:
    if isinstance(tuner, _Tuners):
        runs = tuner.history
    elif isinstance(tuner, Sequence) and not isinstance(tuner, str):
        runs = tuple(tuner)
        for i, r in enumerate(runs):
            if not isinstance(r, TunerRun):
                raise ValueError(f"Expected `tuner[{i}]` to be a TunerRun, got {type(r).__name__}.")
    else:
        raise ValueError(
            "Expected `tuner` to be a BoldDriverTuner, RpropTuner, InfluenceTuner or a sequence "
            f"of TunerRun, got {type(tuner).__name__}."
        )
    if not runs:
        raise ValueError("Expected `tuner` with at least one run, got none.")
    orders = runs[0].spectrum.orders
    for i, r in enumerate(runs):
        if r.spectrum.orders.shape != orders.shape or not np.allclose(r.spectrum.orders, orders):
            raise ValueError(
                f"Expected every run of `tuner` on one set of orders, run {i} differs."
            )
    return runs


def plot_tuner(
    tuner: _Tuners | Sequence[TunerRun],
    *,
    threshold: float | None = None,
    ax: Any = None,
) -> tuple[Any, tuple[Any, ...]]:
    """Draw a kinematic-error tuner's runs: deviation and correction amplitude per order.

    Parameters
    ----------
    tuner : BoldDriverTuner, RpropTuner, InfluenceTuner or sequence of TunerRun
        A tuner (its ``history``) or the runs themselves.
    threshold : float, optional
        The tuner's stopping threshold, m/s², drawn as a horizontal line (a tuner does not
        expose the one it was built with).
    ax : matplotlib Axes or sequence of 2 Axes, optional
        Two Axes receive the deviation and the correction panels, one Axes the deviation panel
        only; omitted, a new figure with both, one above the other (shared run axis).

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : tuple of matplotlib Axes
        Deviation panel: per order a line ``"order q"`` of the deviation amplitude
        (:meth:`~gravdir.kinematic_error.RunSpectrum.amplitude`, m/s²) against the run number
        (1, 2, ...), log scale, with markers by run kind (circle: base, square: trial, triangle:
        probe, each once in the legend as ``"base run"``, ...), and ``"threshold"``. Correction
        panel: per order a line of the magnitude :math:`|c_k|` of the correction applied in
        that run, rad of motor angle. Legends sit outside the axes.

    Raises
    ------
    ValueError
        If `tuner` is neither a tuner nor a sequence of TunerRun, holds no run or runs on
        different orders; `threshold` is not a finite positive number; or `ax` is not Axes.

    References
    ----------
    US 2025/0065499 A1, paragraphs 24-26 and claims 11-12 (the measurement loop repeated with an
    updated correction until the amplitude falls below a threshold).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from gravdir import InfluenceTuner
    >>> from gravdir.synthetic import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint(noise_density=0.0, up=np.array([0.0, -1.0, 0.0]))
    >>> tuner = InfluenceTuner([1.0, 2.0])
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, 31.4, 40, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, readings=run.acceleration)
    >>> fig, axes = plot_tuner(tuner)
    >>> len(axes), [x.get_label() for x in axes[1].get_lines()]
    (2, ['order 1', 'order 2'])
    """
    runs = _runs(tuner)
    limit = None if threshold is None else check_positive(threshold, "threshold")
    fig, axes = panels(ax, 2, (8.0, 6.5))
    orders = np.asarray(runs[0].spectrum.orders, dtype=np.float64)
    number = np.arange(1, len(runs) + 1)
    deviation = np.array([order_amplitudes(r.spectrum) for r in runs])
    correction = np.array([np.abs(r.model.phasors) for r in runs])
    kinds = np.array([r.kind for r in runs])
    dax = axes[0]
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        for j, q in enumerate(orders):
            color = f"C{j % 10}"
            dax.plot(number, deviation[:, j], "-", color=color, lw=1, label=f"order {q:.4g}")
            for kind, marker in _MARKERS.items():
                at = kinds == kind
                if at.any():
                    dax.plot(
                        number[at],
                        deviation[at, j],
                        marker,
                        color=color,
                        ls="none",
                        label="_nolegend_",
                    )
        for kind, marker in _MARKERS.items():
            if (kinds == kind).any():
                dax.plot([], [], marker, color="0.4", ls="none", label=f"{kind} run")
        if limit is not None:
            dax.axhline(limit, color="k", ls="--", lw=1, label="threshold")
        if np.all(deviation > 0):
            dax.set_yscale("log")
    dax.set_ylabel("deviation amplitude [m/s²]")
    name = type(tuner).__name__ if isinstance(tuner, _Tuners) else "runs"
    dax.set_title(f"{name}: {len(runs)} runs", fontsize="medium")
    legend_outside(dax)
    if len(axes) == 1:
        dax.set_xlabel("run")
        return fig, axes
    cax = axes[1]
    for j, q in enumerate(orders):
        cax.plot(
            number, correction[:, j], "o-", color=f"C{j % 10}", ms=3, lw=1, label=f"order {q:.4g}"
        )
    cax.set_xlabel("run")
    cax.set_ylabel("correction amplitude |c_k| [rad]")
    cax.set_xticks(number)
    legend_outside(cax)
    return fig, axes
