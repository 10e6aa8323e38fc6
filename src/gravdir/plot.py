"""Optional matplotlib views of gravdir results.

Install the ``plot`` extra (``pip install gravdir[plot]``). matplotlib is imported only when a
function here is called, so ``import gravdir`` never needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from gravdir._checks import check_array
from gravdir.errors import InsufficientDataError
from gravdir.sweep import SweepFit
from gravdir.sweep._design import check_sweep_angles

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_sweep"]


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("gravdir.plot needs matplotlib: pip install 'gravdir[plot]'") from exc
    return plt


def plot_sweep(
    fit: SweepFit,
    q: ArrayLike,
    torque: ArrayLike,
    velocity: ArrayLike,
    *,
    ax: Axes | None = None,
    degrees: bool = True,
) -> Axes:
    """Draw a sweep with its fitted gravity sinusoid, friction band and gravity zeros.

    Parameters
    ----------
    fit : SweepFit
        The fit of this sweep (a single sweep, not a batch: index a batched fit, ``fit[i]``).
    q, torque, velocity : array_like, shape (n,)
        The samples that were fitted.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new figure is made when omitted.
    degrees : bool, optional
        Label the joint angle in degrees (default) or radians.

    Returns
    -------
    matplotlib.axes.Axes
        The axes, holding the lines labelled ``"forward"``, ``"backward"`` (measured samples),
        ``"offset + gravity"`` (:math:`c + A \\sin(q + \\varphi)`), a shaded band labelled
        ``"friction"`` between the forward and backward model curves, and vertical lines
        labelled ``"unstable zero"`` and ``"stable zero"`` at the gravity zeros inside the swept
        range.

    Raises
    ------
    ValueError
        If `fit` is not the :class:`~gravdir.sweep.SweepFit` of a single sweep, the arrays are
        not finite, real and of one shape ``(n,)`` (no broadcasting), `q` is not radians (joint
        positions beyond ±4π or a span beyond two turns: "degrees?"), the model torque of `fit`
        is not finite over the sweep, `ax` is not matplotlib Axes or `degrees` not a bool.
    InsufficientDataError
        If fewer than 2 samples are given.

    References
    ----------
    The forward and backward torque curves of a sweep as in US 11,446,825 B2, FIGS. 3A-3B, and
    the gravity zeros of its FIG. 4A.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from gravdir import fit_sweep
    >>> q = np.concatenate([np.linspace(-1, 2, 200), np.linspace(2, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.3), np.full(200, -0.3)])
    >>> torque = 4 * np.sin(q - 0.5) + 0.5 * np.sign(v)
    >>> ax = plot_sweep(fit_sweep(q, torque, v), q, torque, v)
    >>> [line.get_label() for line in ax.get_lines()]
    ['forward', 'backward', 'offset + gravity', 'stable zero']
    """
    if not isinstance(fit, SweepFit):
        raise ValueError(f"Expected `fit` to be a SweepFit, got {type(fit).__name__}.")
    if fit.batch_shape:
        raise ValueError(
            f"Expected `fit` to be the fit of a single sweep, got a batch of shape "
            f"{fit.batch_shape}."
        )
    qq = check_array(q, "q", min_ndim=1)
    tt = check_array(torque, "torque", min_ndim=1)
    vv = check_array(velocity, "velocity", min_ndim=1)
    if qq.ndim != 1 or not qq.shape == tt.shape == vv.shape:
        raise ValueError(
            f"Expected `q`, `torque` and `velocity` of one shape (n,), got {qq.shape}, "
            f"{tt.shape} and {vv.shape}."
        )
    if qq.size < 2:
        raise InsufficientDataError(
            f"Expected at least 2 samples in `q`, `torque` and `velocity`, got {qq.size}."
        )
    q_lo, q_hi = float(qq.min()), float(qq.max())
    check_sweep_angles(q_hi, q_lo)
    if not isinstance(degrees, bool | np.bool_):
        raise ValueError(f"Expected `degrees` to be True or False, got {degrees!r}.")
    plt = _pyplot()
    from matplotlib.axes import Axes

    if ax is not None and not isinstance(ax, Axes):
        raise ValueError(f"Expected `ax` to be matplotlib Axes, got {type(ax).__name__}.")
    # Underflow (speeds or torques of 1e-300) only rounds towards zero, in numpy and matplotlib.
    with np.errstate(under="ignore"):
        moving = vv[vv != 0]
        speed = float(np.median(np.abs(moving))) if moving.size else 0.0
        grid = np.linspace(q_lo, q_hi, 400)
        # The model over the samples: a fit of other data may leave the float range there.
        with np.errstate(over="ignore", invalid="ignore"):
            gravity = float(fit.offset) + fit.gravity_torque(grid)
            fr = float(fit.friction_torque(np.array([speed]))[0])
            band = (gravity - fr, gravity + fr)
        if not (np.isfinite(band[0]).all() and np.isfinite(band[1]).all()):
            raise ValueError(
                "Expected `fit` and `velocity` whose model torque (offset, gravity and friction at "
                f"the median speed {speed:.3g}) is finite over the sweep, got values beyond the "
                "float range."
            )
        if ax is None:
            _, ax = plt.subplots(figsize=(7, 4))
        scale = np.degrees(1.0) if degrees else 1.0
        fwd, bwd = vv > 0, vv < 0
        ax.plot(qq[fwd] * scale, tt[fwd], ".", ms=2, color="C0", label="forward")
        ax.plot(qq[bwd] * scale, tt[bwd], ".", ms=2, color="C1", label="backward")
        ax.plot(grid * scale, gravity, "-", color="k", lw=1.5, label="offset + gravity")
        ax.fill_between(grid * scale, band[0], band[1], color="0.5", alpha=0.25, label="friction")
        zeros = fit.zeros()
        for value, label, style in (
            (zeros.unstable, "unstable zero", "--"),
            (zeros.stable, "stable zero", ":"),
        ):
            # Draw each zero at its copies inside the swept range (angles may be unwrapped).
            base = float(value)
            k = np.arange(
                np.ceil((q_lo - base) / (2 * np.pi)), np.floor((q_hi - base) / (2 * np.pi)) + 1
            )
            for i, qz in enumerate(base + 2 * np.pi * k):
                ax.axvline(
                    qz * scale, color="C3", ls=style, lw=1, label=label if i == 0 else "_nolegend_"
                )
        ax.set_xlabel("joint angle [deg]" if degrees else "joint angle [rad]")
        ax.set_ylabel("torque")
        ax.set_title(
            f"A = {float(fit.amplitude):.4g}, φ = {np.degrees(float(fit.phase)):.3f}°, "
            f"friction at {speed:.3g} rad/s = {fr:.3g}"
        )
        ax.legend(loc="best", fontsize="small")
        return ax
