"""The `up` plot: an estimate in the tangent plane around it, its ellipses and the sweeps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array
from gravdir._results import UpResult, tilt_azimuth_text, up_spread
from gravdir._sphere import tangent_basis
from gravdir.general import JointSweep, UpEstimate
from gravdir.plot._common import legend_outside, panels

__all__ = ["plot_up", "sweep_constraint", "tangent_coordinates"]

# Points of a constraint curve farther than this from the estimate are not drawn: the
# azimuthal-equidistant projection is singular at the antipode.
_MAX_DRAWN_ANGLE = np.radians(150.0)
# Number of points per constraint curve.
_CURVE_POINTS = 1441
# The truth is drawn in the view when it lies within this many view half-widths (6 sigma by
# default) of the estimate; farther, an arrow at the edge points to it.
_TRUTH_IN_VIEW = 10.0
# The 1-sigma and 2-sigma ellipses of a 2-D Gaussian hold 1 - exp(-k²/2) of its mass.
_LEVELS = (1.0, 2.0)


def tangent_coordinates(
    up: NDArray[np.float64], points: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Azimuthal-equidistant coordinates (..., 2), degrees, of unit vectors around `up`.

    The distance from the origin is the angle between `up` and the point; the direction is that
    of the point's component in the tangent plane, in the basis :func:`tangent_basis` of `up`.
    """
    basis = tangent_basis(up)
    tangential = points @ basis.T
    sin = np.hypot(tangential[..., 0], tangential[..., 1])
    angle = np.arctan2(sin, points @ up)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(sin > 0, angle / np.where(sin > 0, sin, 1.0), 1.0)
    out: NDArray[np.float64] = np.degrees(tangential * factor[..., None])
    return out


def sweep_constraint(
    sweep: JointSweep, moment: NDArray[np.float64], up: NDArray[np.float64]
) -> dict[str, Any]:
    """What one sweep says of `up` when its group's moment is `moment` (link frame).

    Returns the base-frame frame ``(u, v, n)`` (``n`` the joint axis, ``u`` along the moment),
    the angle ``theta`` between `up` and ``n`` on the branch of `up`, its standard deviation
    ``theta_std`` (from the amplitude's), the azimuth ``azimuth`` of `up` about ``n`` from ``u``
    and its standard deviation ``azimuth_std`` (the phase's). See the documentation page
    "Plots" for the derivation.
    """
    rot, a = sweep.rotation, sweep.joint_axis
    w_norm = float(np.linalg.norm(moment))
    w_hat = moment / w_norm
    n = rot @ a
    u = rot @ w_hat
    v = rot @ np.cross(a, w_hat)
    v = v / np.linalg.norm(v)
    alpha, beta = sweep.alpha_beta
    amplitude = float(np.hypot(alpha, beta))
    ratio = min(amplitude / w_norm, 1.0)
    theta = float(np.arcsin(ratio))
    if float(up @ n) < 0:
        theta = np.pi - theta
    cos = abs(np.cos(theta))
    amp_std = float(sweep.fit.amplitude_std)
    theta_std = amp_std / (w_norm * cos) if cos > 0 else np.inf
    return {
        "u": u,
        "v": v,
        "n": n,
        "theta": theta,
        "theta_std": theta_std,
        "azimuth": float(np.arctan2(beta, alpha)),
        "azimuth_std": float(sweep.fit.phase_std),
    }


def _direction(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """A non-zero finite 3-vector, normalised without overflow or underflow."""
    v = check_array(x, name, tail=(3,))
    if v.shape != (3,):
        raise ValueError(f"Expected `{name}` to have shape (3,), got {v.shape}.")
    top = float(np.max(np.abs(v)))
    if top == 0.0:
        raise ValueError(f"Expected `{name}` to be a non-zero vector, got zeros.")
    with np.errstate(under="ignore"):
        v = v / top
        out: NDArray[np.float64] = v / np.linalg.norm(v)
    return out


def _check_sweeps(result: UpResult, sweeps: Any) -> list[tuple[JointSweep, NDArray[np.float64]]]:
    """Each sweep with its group's moment from `result` (an UpEstimate)."""
    if sweeps is None:
        return []
    if not isinstance(result, UpEstimate):
        raise ValueError(
            "Expected `sweeps` only with an UpEstimate (whose group moments they need), got "
            f"`result` of type {type(result).__name__}."
        )
    if isinstance(sweeps, JointSweep) or not isinstance(sweeps, Sequence):
        raise ValueError(
            f"Expected `sweeps` to be a sequence of JointSweep, got {type(sweeps).__name__}."
        )
    out = []
    for i, s in enumerate(sweeps):
        if not isinstance(s, JointSweep):
            raise ValueError(f"Expected `sweeps[{i}]` to be a JointSweep, got {type(s).__name__}.")
        if s.group not in result.groups:
            raise ValueError(
                f"Expected `sweeps[{i}]` of a group of `result` {result.groups!r}, "
                f"got group {s.group!r}."
            )
        moment = np.asarray(result.moments[result.groups.index(s.group)], dtype=np.float64)
        if not (np.isfinite(moment).all() and np.any(moment)):
            raise ValueError(
                f"Expected `result` to hold a finite non-zero moment for the group of "
                f"`sweeps[{i}]`, got {moment}."
            )
        out.append((s, moment))
    return out


def plot_up(
    result: UpResult,
    sweeps: Sequence[JointSweep] | None = None,
    *,
    truth: ArrayLike | None = None,
    ax: Any = None,
) -> tuple[Any, tuple[Any, ...]]:
    """Draw an `up` estimate in the tangent plane around it, with its uncertainty ellipses.

    Parameters
    ----------
    result : UpResult
        A gravity-direction result of one `up` (shape (3,)): :class:`~gravdir.UpEstimate`,
        :class:`~gravdir.touch.PlaneFit`, a fusion, an accelerometer estimate, a bound.
    sweeps : sequence of JointSweep, optional
        With an :class:`~gravdir.UpEstimate`: the sweeps it was estimated from. Each is drawn as
        the two curves its fitted amplitude and phase place `up` on, given its group's moment
        in ``result.moments`` (see Notes), each with its ±1σ band.
    truth : array_like, shape (3,), optional
        The true `up` (any non-zero vector; normalised), drawn as a marker with its angle to the
        estimate, or as an arrow at the edge of the view where it lies far outside it.
    ax : matplotlib Axes, optional
        Axes to draw into; a new figure is made when omitted.

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : tuple of one matplotlib Axes
        Holding the marker ``"estimate"`` at the origin, the ellipse patches ``"1σ"`` and
        ``"2σ"`` (where the covariance is finite), the marker ``"truth"`` (or an annotation
        ``"truth ... away"``) and, per sweep, lines ``"sweep i (Jk): amplitude"`` and
        ``"sweep i (Jk): phase"`` with two unlabelled band lines each. Both axes are in degrees
        with equal scales; the legend sits outside the axes.

    Raises
    ------
    ValueError
        If `result` is not an :class:`~gravdir._results.UpResult` of one `up`; `sweeps` is given
        without an :class:`~gravdir.UpEstimate`, is not a sequence of
        :class:`~gravdir.general.JointSweep` or holds a sweep of a group the estimate does not
        have; `truth` is not a finite non-zero 3-vector; or `ax` is not matplotlib Axes.

    Notes
    -----
    The projection is azimuthal equidistant around the estimate: a unit vector :math:`p` is
    drawn at :math:`\\angle(p, \\hat u)` in the direction of its tangential part, in the basis
    :func:`~gravdir._sphere.tangent_basis` of the estimate (first axis: towards larger tilt).
    Unlike a tilt/azimuth chart it has no singularity at tilt 0. The ellipses are
    :math:`x^\\top C^{-1} x = k^2` (:math:`k` = 1, 2) of the tangent-plane covariance
    :math:`C` (the pseudo-inverse of ``up_information``); they hold 39% and 86% of a Gaussian
    error, and the root-sum-square of the 1σ semi-axes is ``result.up_std_deg``.

    A sweep of joint axis :math:`n` (base frame) with the group moment :math:`w` measures
    :math:`(\\alpha, \\beta) = |w| \\sin\\theta\\,(\\cos\\psi, \\sin\\psi)`, where
    :math:`\\theta` is the angle between `up` and :math:`n` and :math:`\\psi` the azimuth of
    `up` about :math:`n` from the moment's direction. So the amplitude fixes the cone
    :math:`\\sin\\theta = A/|w|` about the joint axis (the branch of the estimate), and the
    phase the half great circle of azimuth :math:`\\psi`. The bands are
    :math:`\\sigma_\\theta = \\sigma_A / (|w| |\\cos\\theta|)` and
    :math:`\\sigma_\\psi = \\sigma_\\varphi`, with :math:`w` held at its estimate (derivation
    in the documentation page "Plots").

    References
    ----------
    US 11,446,825 B2, FIG. 2 (sweeps of joints and the direction of gravity estimated from them)
    and eqs. (2) and (12) (the gravity sinusoid of a sweep). S. M. Kay (1993), ch. 3 (the
    Cramér-Rao bound whose ellipses are drawn).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from gravdir import up_from_touch_points
    >>> rng = np.random.default_rng(0)
    >>> pts = np.c_[rng.uniform(-0.2, 0.2, (8, 2)), rng.normal(0, 1e-4, 8)]
    >>> fit = up_from_touch_points(pts)
    >>> fig, (ax,) = plot_up(fit, truth=[0, 0, 1])
    >>> ax.get_xlabel()
    'towards larger tilt [deg]'
    >>> [p.get_label() for p in ax.patches]
    ['1σ', '2σ']
    """
    if not isinstance(result, UpResult):
        raise ValueError(f"Expected `result` to be an UpResult, got {type(result).__name__}.")
    up = np.asarray(result.up, dtype=np.float64)
    if up.shape != (3,):
        raise ValueError(
            f"Expected `result` to hold one `up` of shape (3,), got shape {up.shape}: pass one "
            "entry of a batch."
        )
    with_moments = _check_sweeps(result, sweeps)
    truth_up = None if truth is None else _direction(truth, "truth")
    fig, axes = panels(ax, 1, (8.0, 5.5))
    with np.errstate(under="ignore", over="ignore"):
        _draw(result, up, with_moments, truth_up, axes[0])
    return fig, axes


def _draw(
    result: UpResult,
    up: NDArray[np.float64],
    sweeps: list[tuple[JointSweep, NDArray[np.float64]]],
    truth: NDArray[np.float64] | None,
    ax: Any,
) -> None:
    from matplotlib.patches import Ellipse

    basis = tangent_basis(up)
    cov3 = np.asarray(result.up_cov, dtype=np.float64)
    bounded = bool(np.isfinite(cov3).all())
    cov = basis @ cov3 @ basis.T if bounded else cov3[:2, :2]
    half = 5.0  # view half-width, degrees, where the covariance is infinite
    ax.plot([0.0], [0.0], "k+", ms=12, mew=2, label="estimate")
    if bounded:
        vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
        semi = np.degrees(np.sqrt(np.maximum(vals, 0.0)))
        angle = float(np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1])))
        for k, style in zip(_LEVELS, ("-", "--"), strict=True):
            ax.add_patch(
                Ellipse(
                    (0.0, 0.0),
                    2 * k * semi[1],
                    2 * k * semi[0],
                    angle=angle,
                    fill=False,
                    ls=style,
                    lw=1.5,
                    color="k",
                    label=f"{k:g}σ",
                )
            )
        half = 3.0 * _LEVELS[-1] * float(semi[1]) if semi[1] > 0 else half
    else:
        ax.text(0.02, 0.02, "uncertainty unbounded (no information)", transform=ax.transAxes)
    if truth is not None:
        xy = tangent_coordinates(up, truth)
        dist = float(np.hypot(*xy))
        err = float(np.degrees(np.arctan2(np.linalg.norm(np.cross(up, truth)), up @ truth)))
        if dist <= _TRUTH_IN_VIEW * half:
            half = max(half, 1.25 * dist)
            label = f"truth ({err:.3g}° off)"
            ax.plot([xy[0]], [xy[1]], "x", color="C3", ms=10, mew=2, label=label)
        else:
            d = xy / dist if dist > 0 else np.array([1.0, 0.0])
            ax.annotate(
                f"truth {err:.3g}° away",
                xy=tuple(0.95 * half * d),
                xytext=tuple(0.55 * half * d),
                color="C3",
                arrowprops={"arrowstyle": "->", "color": "C3"},
            )
    for i, (sweep, moment) in enumerate(sweeps):
        c = sweep_constraint(sweep, moment, up)
        color = f"C{i % 10}"
        name = f"sweep {i} (J{sweep.joint + 1})"
        for kind, center, std in (
            ("amplitude", c["theta"], c["theta_std"]),
            ("phase", c["azimuth"], c["azimuth_std"]),
        ):
            offsets = (0.0, -1.0, 1.0) if np.isfinite(std) else (0.0,)
            for j, s in enumerate(offsets):
                pts = _curve(c, kind, center + s * std, up)
                xy = tangent_coordinates(up, pts)
                far = np.arccos(np.clip(pts @ up, -1.0, 1.0)) > _MAX_DRAWN_ANGLE
                xy[far] = np.nan
                ax.plot(
                    xy[:, 0],
                    xy[:, 1],
                    "-" if kind == "amplitude" else "-.",
                    color=color,
                    lw=1.2 if j == 0 else 0.6,
                    alpha=1.0 if j == 0 else 0.6,
                    label=f"{name}: {kind}" if j == 0 else "_nolegend_",
                )
    ax.set_xlim(-half, half)
    ax.set_ylim(-half, half)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("towards larger tilt [deg]")
    ax.set_ylabel("up × that direction [deg]")
    ax.set_title(
        f"{type(result).__name__}: {tilt_azimuth_text(up_spread(result))}, "
        f"up_std_deg {result.up_std_deg:.3g}°",
        fontsize="medium",
    )
    legend_outside(ax)


def _curve(
    c: dict[str, Any], kind: str, value: float, up: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Unit vectors of the cone ``theta = value`` or the half great circle ``azimuth = value``,
    sampled from the point nearest `up` outwards in geometric steps, so that the chords stay
    far finer than the view at any size of the ellipse."""
    half = np.geomspace(1e-12, np.pi, _CURVE_POINTS // 2)
    t = np.concatenate([-half[::-1], [0.0], half])
    # `up` in the frame (u, v, n): its azimuth about n and its angle from n
    psi0 = float(np.arctan2(up @ c["v"], up @ c["u"]))
    theta0 = float(np.arccos(np.clip(up @ c["n"], -1.0, 1.0)))
    if kind == "amplitude":
        theta, psi = np.full_like(t, np.clip(value, 0.0, np.pi)), psi0 + t
    else:
        theta, psi = np.clip(theta0 + t, 0.0, np.pi), np.full_like(t, value)
    s = np.sin(theta)
    out: NDArray[np.float64] = (
        (s * np.cos(psi))[:, None] * c["u"]
        + (s * np.sin(psi))[:, None] * c["v"]
        + np.cos(theta)[:, None] * c["n"]
    )
    return out
