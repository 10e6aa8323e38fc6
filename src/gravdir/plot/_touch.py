"""The touch plot: contacts on the fitted plane and their residuals."""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array
from gravdir._results import tilt_azimuth_text, up_spread
from gravdir._sphere import tangent_basis
from gravdir.plot._common import check_label, legend_outside, panels
from gravdir.touch import PlaneFit, ToolPlaneFit

__all__ = ["plot_touches"]

# Agreement demanded between the residuals recomputed from the contacts and the fit's own,
# relative to the largest coordinate: far above the rounding of a plane fit (1e-15), far below
# any change of the data that would matter.
_RESIDUAL_RTOL = 1e-9


def _contacts(
    fit: PlaneFit | ToolPlaneFit,
    points: ArrayLike | None,
    flange_poses: ArrayLike | None,
    tool_tip: ArrayLike | None,
) -> NDArray[np.float64]:
    """The contact points (N, 3) the fit was made from, checked against its residuals."""
    if (points is None) == (flange_poses is None):
        raise ValueError(
            "Expected exactly one of `points` and `flange_poses`, got "
            f"{'both' if points is not None else 'neither'}."
        )
    if points is not None:
        if tool_tip is not None:
            raise ValueError("Expected `tool_tip` only with `flange_poses`, got it with `points`.")
        pts = check_array(points, "points", tail=(3,), finite=False)
        if pts.ndim != 2:
            raise ValueError(f"Expected `points` to have shape (N, 3), got {pts.shape}.")
        name = "points"
    else:
        poses = check_array(
            cast(ArrayLike, flange_poses), "flange_poses", tail=(4, 4), finite=False
        )
        if poses.ndim != 3:
            raise ValueError(f"Expected `flange_poses` to have shape (N, 4, 4), got {poses.shape}.")
        if tool_tip is None:
            if not isinstance(fit, ToolPlaneFit):
                raise ValueError(
                    "Expected `tool_tip` with `flange_poses` for a PlaneFit (a ToolPlaneFit "
                    "holds its own), got None."
                )
            tip = np.asarray(fit.tool_tip, dtype=np.float64)
        else:
            tip = check_array(tool_tip, "tool_tip", tail=(3,))
            if tip.shape != (3,):
                raise ValueError(f"Expected `tool_tip` to have shape (3,), got {tip.shape}.")
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            pts = np.einsum("nij,j->ni", poses[:, :3, :3], tip) + poses[:, :3, 3]
        name = "flange_poses"
    # Contacts the fit dropped for a NaN (nan_policy="omit") are dropped here too.
    bad = ~np.isfinite(pts).all(axis=-1)
    if np.isinf(pts).any() or (bad.any() and int(bad.sum()) != fit.n_omitted):
        raise ValueError(
            f"Expected `{name}` finite, or with NaN in exactly the {fit.n_omitted} contacts the "
            f"fit omitted, got {int(bad.sum())} non-finite contacts."
        )
    pts = pts[~bad]
    residuals = np.asarray(fit.residuals, dtype=np.float64)
    if pts.shape[0] != residuals.shape[-1]:
        raise ValueError(
            f"Expected `{name}` of the {residuals.shape[-1]} contacts `fit` was fitted on, got "
            f"{pts.shape[0]}."
        )
    scale = float(np.max(np.abs(pts))) or 1.0
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        mine = (pts / scale) @ fit.up - float(fit.offset) / scale
        differs = not np.all(np.abs(mine - residuals / scale) <= _RESIDUAL_RTOL)
    if differs:
        raise ValueError(
            f"Expected `{name}` to be the contacts `fit` was fitted on, got contacts whose "
            "distances to its plane differ from fit.residuals."
        )
    return pts


def plot_touches(
    fit: PlaneFit | ToolPlaneFit,
    points: ArrayLike | None = None,
    *,
    flange_poses: ArrayLike | None = None,
    tool_tip: ArrayLike | None = None,
    length_unit: str = "m",
    ax: Any = None,
) -> tuple[Any, tuple[Any, ...]]:
    """Draw touch contacts on their fitted plane, coloured by residual, and the residuals.

    Parameters
    ----------
    fit : PlaneFit or ToolPlaneFit
        The plane fit of one set of contacts (:func:`~gravdir.up_from_touch_points`,
        :func:`~gravdir.up_from_touches`, :func:`~gravdir.tool_tip_and_up_from_touches`).
    points : array_like, shape (N, 3), optional
        The contact points the fit was made from, in its frame.
    flange_poses : array_like, shape (N, 4, 4), optional
        Instead of `points`: the flange poses of the contacts (base frame); the points are
        ``R_i t + p_i`` with `tool_tip` ``t`` (default: the fitted ``fit.tool_tip`` of a
        :class:`~gravdir.touch.ToolPlaneFit`). Contacts holding a NaN are dropped where the fit
        dropped as many (``nan_policy="omit"``).
    tool_tip : array_like, shape (3,), optional
        Tool-tip offset in the flange frame, with `flange_poses` of a
        :class:`~gravdir.touch.PlaneFit`.
    length_unit : str, optional
        Unit of the coordinates for the labels (default ``"m"``).
    ax : matplotlib Axes or sequence of 2 Axes, optional
        Two Axes receive the plane and the residual panels, one Axes the plane panel only;
        omitted, a new figure with both side by side.

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : tuple of matplotlib Axes
        Plane panel: the contacts in the plane's coordinates (a scatter ``"contacts"`` coloured
        by signed residual, with a colour bar in `length_unit`, each numbered), rejected
        contacts crossed (``"rejected"``). Residual panel: one bar per contact (its signed
        distance ``fit.residuals``), inliers blue, rejected red, and dashed lines at
        ± ``fit.noise_std`` where it is finite. Legends sit outside the axes.

    Raises
    ------
    ValueError
        If `fit` is not the PlaneFit or ToolPlaneFit of one set of contacts; not exactly one of
        `points` and `flange_poses` is given; `tool_tip` is given with `points` or missing with
        the flange poses of a PlaneFit; an array has the wrong shape or is not real and finite
        (NaN allowed only in the contacts the fit omitted); the contacts are not those of the
        fit (their distances to its plane differ from ``fit.residuals`` by more than 1e-9 of
        the largest coordinate); `length_unit` is not a short string or `ax` not Axes.

    Notes
    -----
    The plane coordinates are the components of each contact along the basis
    :func:`~gravdir._sphere.tangent_basis` of ``fit.up`` (first axis: the plane's downhill
    direction, towards larger tilt), relative to the inliers' centroid; the residual is the
    signed distance :math:`\\hat u \\cdot c_i - d` along `up`.

    References
    ----------
    CN 112476435 B, claims 1-3 (contacts of a tool tip with a reference plane; the plane's
    normal is the direction of gravity).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from gravdir import up_from_touch_points
    >>> rng = np.random.default_rng(1)
    >>> pts = np.c_[rng.uniform(-0.2, 0.2, (6, 2)), rng.normal(0, 1e-4, 6)]
    >>> fig, axes = plot_touches(up_from_touch_points(pts), pts)
    >>> len(axes), axes[1].get_ylabel()
    (2, 'signed distance to the plane [m]')
    >>> len(axes[1].patches)
    6
    """
    if not isinstance(fit, PlaneFit | ToolPlaneFit):
        raise ValueError(
            f"Expected `fit` to be a PlaneFit or ToolPlaneFit, got {type(fit).__name__}."
        )
    if np.shape(fit.up) != (3,):
        raise ValueError(
            f"Expected `fit` of one set of contacts, got a batch of shape {np.shape(fit.up)[:-1]}."
        )
    pts = _contacts(fit, points, flange_poses, tool_tip)
    unit = check_label(length_unit, "length_unit")
    fig, axes = panels(ax, 2, (11.0, 4.5), rows=False)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        _draw(fit, pts, axes, unit, fig)
    return fig, axes


def _draw(
    fit: PlaneFit | ToolPlaneFit,
    pts: NDArray[np.float64],
    axes: tuple[Any, ...],
    unit: str,
    fig: Any,
) -> None:
    inliers = np.asarray(fit.inliers, dtype=bool)
    residuals = np.asarray(fit.residuals, dtype=np.float64)
    basis = tangent_basis(np.asarray(fit.up, dtype=np.float64))
    centre = pts[inliers].mean(axis=0) if inliers.any() else pts.mean(axis=0)
    xy = (pts - centre) @ basis.T
    top = float(np.max(np.abs(residuals))) or 1.0
    # The colour scale in a unit of a power of ten of `unit` where the residuals are small or
    # large, named in its label: matplotlib's own scale factor would collide with the label.
    power = math.floor(math.log10(top)) if not 1e-2 <= top < 1e4 else 0
    top /= 10.0**power
    colour_unit = unit if power == 0 else f"$10^{{{power}}}$ {unit}"
    ax = axes[0]
    sc = ax.scatter(
        xy[:, 0],
        xy[:, 1],
        c=residuals / 10.0**power,
        cmap="coolwarm",
        vmin=-top,
        vmax=top,
        s=40,
        edgecolors="k",
        label="contacts",
    )
    if (~inliers).any():
        ax.plot(xy[~inliers, 0], xy[~inliers, 1], "x", color="C3", ms=12, mew=2, label="rejected")
    for i, (x, y) in enumerate(xy):
        ax.annotate(str(i), (x, y), textcoords="offset points", xytext=(4, 4), fontsize="x-small")
    fig.colorbar(
        sc, ax=ax, label=f"signed distance to the plane [{colour_unit}]", location="bottom"
    )
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel(f"in-plane, towards larger tilt [{unit}]")
    ax.set_ylabel(f"in-plane, up × that [{unit}]")
    title = f"{type(fit).__name__}: {tilt_azimuth_text(up_spread(fit))}"
    if isinstance(fit, ToolPlaneFit):
        tip = ", ".join(f"{t:.4g}" for t in fit.tool_tip)
        title += f"\ntool tip ({tip}) {unit}, weak-axis std {float(fit.weak_axis_std):.2g} {unit}"
    ax.set_title(title, fontsize="medium")
    legend_outside(ax)
    if len(axes) == 1:
        return
    rax = axes[1]
    index = np.arange(residuals.size)
    colors = np.where(inliers, "C0", "C3")
    bars = rax.bar(index, residuals, color=colors, width=0.6)
    bars.set_label("residual (inliers blue, rejected red)")
    sigma = float(fit.noise_std)
    if np.isfinite(sigma):
        rax.axhline(sigma, color="k", ls="--", lw=1, label=f"± noise_std = {sigma:.3g} {unit}")
        rax.axhline(-sigma, color="k", ls="--", lw=1, label="_nolegend_")
    rax.axhline(0.0, color="0.5", lw=0.8, label="_nolegend_")
    rax.set_xticks(index)
    rax.set_xlabel("contact")
    rax.set_ylabel(f"signed distance to the plane [{unit}]")
    rax.set_title(f"rms {float(fit.residual_rms):.3g} {unit}", fontsize="medium")
    legend_outside(rax)
