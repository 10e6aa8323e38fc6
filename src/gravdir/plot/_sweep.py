"""The sweep plot: samples, fitted model, its terms and the residuals of one sweep."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import apply_torque_sign, check_bool, check_positive, check_sweep_angles
from gravdir.errors import InsufficientDataError
from gravdir.plot._common import check_label, legend_outside, panels, samples_1d
from gravdir.sweep import SweepFit

__all__ = ["plot_sweep", "sweep_terms"]

# Agreement demanded between the residual RMS recomputed from the samples and the fit's own:
# relative to the fit's RMS, plus a floor relative to the RMS torque (the fit forms its residual
# from normal equations, whose rounding is about 1e-8 of the torque for noise-free data).
_RMS_RTOL = 1e-6
_RMS_FLOOR = 1e-7


def _column(
    name: str,
    beta: NDArray[np.float64],
    names: tuple[str, ...],
    q: NDArray[np.float64],
    v: NDArray[np.float64],
    acc: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """The design-matrix column `name` of :func:`~gravdir.fit_sweep` at the samples."""
    sgn = np.sign(v)
    if name == "offset":
        return np.ones_like(q)
    if name in ("sin", "cos"):
        return np.sin(q) if name == "sin" else np.cos(q)
    if name == "coulomb":
        return sgn
    if name == "viscous":
        return v
    if name == "inertia":
        assert acc is not None
        return acc
    if name in ("load_sin", "load_cos"):
        return sgn * (np.sin(q) if name == "load_sin" else np.cos(q))
    if name == "load_abs":
        load = beta[1] * np.sin(q) + beta[2] * np.cos(q)
        if "inertia" in names:
            assert acc is not None
            load = load + beta[names.index("inertia")] * acc
        signed: NDArray[np.float64] = sgn * np.abs(load)
        return signed
    kind, _, order = name.partition("_")
    k = float(order)
    out: NDArray[np.float64] = np.sin(k * q) if kind == "sin" else np.cos(k * q)
    return out


def sweep_terms(
    fit: SweepFit,
    q: NDArray[np.float64],
    velocity: NDArray[np.float64],
    acceleration: NDArray[np.float64] | None,
) -> dict[str, NDArray[np.float64]]:
    """The fitted model of `fit` at the samples, term by term (in the order of its columns).

    Keys: ``"offset"``, ``"gravity"`` (:math:`a\\sin q + b\\cos q`), ``"friction"`` (Coulomb and
    viscous), ``"inertia"``, ``"load friction"`` (the signed or the ``abs`` load columns) and
    ``"harmonic k"`` for each nuisance order; only the terms the fit has.
    """
    names = tuple(fit.column_names)
    beta = np.asarray(fit.coefficients, dtype=np.float64)
    groups = {
        "offset": "offset",
        "sin": "gravity",
        "cos": "gravity",
        "coulomb": "friction",
        "viscous": "friction",
        "inertia": "inertia",
        "load_sin": "load friction",
        "load_cos": "load friction",
        "load_abs": "load friction",
    }
    terms: dict[str, NDArray[np.float64]] = {}
    for i, name in enumerate(names):
        key = groups.get(name, f"harmonic {name.partition('_')[2]}")
        value = beta[i] * _column(name, beta, names, q, velocity, acceleration)
        terms[key] = terms[key] + value if key in terms else value
    return terms


def _check_inputs(
    fit: Any,
    q: ArrayLike,
    torque: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike | None,
    torque_sign: Any,
    min_speed: Any,
) -> tuple[Any, ...]:
    if not isinstance(fit, SweepFit):
        raise ValueError(f"Expected `fit` to be a SweepFit, got {type(fit).__name__}.")
    if fit.batch_shape:
        raise ValueError(
            f"Expected `fit` to be the fit of a single sweep, got a batch of shape "
            f"{fit.batch_shape}: pass one entry, fit[i]."
        )
    qq = samples_1d(q, "q")
    tt = samples_1d(torque, "torque")
    vv = samples_1d(velocity, "velocity")
    arrays = [qq, tt, vv]
    if acceleration is not None:
        arrays.append(samples_1d(acceleration, "acceleration"))
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(
            "Expected `q`, `torque`, `velocity` (and `acceleration`) of one shape (n,), got "
            + ", ".join(str(a.shape) for a in arrays)
            + "."
        )
    if qq.size < 2:
        raise InsufficientDataError(
            f"Expected at least 2 samples in `q`, `torque` and `velocity`, got {qq.size}."
        )
    check_sweep_angles(float(qq.max()), float(qq.min()))
    has_inertia = "inertia" in fit.column_names
    if has_inertia != (acceleration is not None):
        raise ValueError(
            "Expected `acceleration` exactly when `fit` has an inertia column, got "
            f"{'none' if acceleration is None else 'one'} for a fit "
            f"{'with' if has_inertia else 'without'} it."
        )
    tt = apply_torque_sign(tt, torque_sign)
    speed = np.abs(vv)
    if min_speed is None:
        threshold = 0.1 * float(speed.max())
        used = speed >= threshold
    else:
        threshold = check_positive(min_speed, "min_speed", allow_zero=True)
        used = speed >= threshold
        # As the fit: standing samples are left out where friction is modelled.
        names = fit.column_names
        if threshold <= 0 and ("coulomb" in names or any(n.startswith("load") for n in names)):
            used &= speed > 0
    acc = arrays[3] if acceleration is not None else np.zeros(0)
    return qq, tt, vv, acc, used


def plot_sweep(
    fit: SweepFit,
    q: ArrayLike,
    *,
    velocity: ArrayLike,
    acceleration: ArrayLike | None = None,
    torque: ArrayLike,
    torque_sign: Literal[1, -1] = 1,
    min_speed: float | None = None,
    torque_unit: str = "N·m",
    ax: Any = None,
    degrees: bool = True,
) -> tuple[Any, tuple[Any, ...]]:
    """Draw a sweep, its fitted model term by term and the residuals, in three panels.

    Parameters
    ----------
    fit : SweepFit
        The fit of this sweep (a single sweep: index a batched fit, ``fit[i]``), from
        :func:`~gravdir.fit_sweep` or :func:`~gravdir.fit_sweep_common_mode`.
    q, velocity : array_like, shape (n,)
        The samples that were fitted (radians, rad/s); for a fit made with
        ``nan_policy="omit"``, the samples without NaN.
    acceleration : array_like, shape (n,), optional
        The joint acceleration, rad/s², given exactly when the fit has an inertia column.
    torque : array_like, shape (n,)
        The torque samples that were fitted, as the controller reports it.
    torque_sign : {1, -1}, optional
        The `torque_sign` the fit was made with (default 1): the samples are drawn in gravdir's
        sign convention, as fitted.
    min_speed : float, optional
        The `min_speed` the fit was made with (default as in :func:`~gravdir.fit_sweep`: 10% of
        the largest speed). Samples below it were not fitted and are drawn grey.
    torque_unit : str, optional
        Unit of the torque for the axis labels (default ``"N·m"``).
    ax : matplotlib Axes or sequence of 3 Axes, optional
        Where to draw: three Axes receive the fit, the terms and the residual panels; a single
        Axes receives the fit panel only; omitted, a new figure with the three panels one above
        the other (shared angle axis).
    degrees : bool, optional
        Joint angle axis in degrees (default) or radians.

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : tuple of matplotlib Axes
        The panels drawn. Fit panel: lines ``"forward"``, ``"backward"`` (used samples),
        ``"not used"`` (samples below `min_speed`, if any), ``"model, forward"`` and
        ``"model, backward"`` (the whole fitted torque at the used samples),
        ``"offset + gravity"`` (:math:`c + A\\sin(q + \\varphi)` on a grid) and vertical lines
        ``"unstable zero"`` / ``"stable zero"`` at the gravity zeros in the swept range. Terms
        panel: one artist per fitted term (offset, gravity, friction, inertia, load friction,
        each harmonic order), the terms that depend on the angle only as lines on a grid, the
        others as dots at the samples. Residual panel: ``"data − model"`` at the used samples and
        dashed lines at ± `fit.residual_rms`. Every legend sits outside its axes, to the right.

    Raises
    ------
    ValueError
        If `fit` is not the :class:`~gravdir.sweep.SweepFit` of a single sweep; the arrays are
        not finite, real and of one shape ``(n,)``; `q` is not radians ("degrees?");
        `acceleration` is given without an inertia column in `fit` or missing with one;
        `torque_sign` is not 1 or -1, `min_speed` not a number >= 0; for a least-squares fit, the
        samples are not those `fit` was fitted on (another count of used samples, or a residual
        RMS that differs from ``fit.residual_rms``); or `ax`, `degrees` or `torque_unit` is not
        of its type.
    InsufficientDataError
        If fewer than 2 samples are given.

    Notes
    -----
    The model is rebuilt from ``fit.coefficients`` and ``fit.column_names``: the columns of
    :func:`~gravdir.fit_sweep` (``1, sin q, cos q, sgn v, v, q̈``, the signed load columns
    ``sgn v sin q, sgn v cos q`` or ``sgn v |a sin q + b cos q [+ I q̈]|``, and ``sin kq, cos kq``
    per harmonic order) times their coefficients. For a least-squares fit the RMS of the
    residual panel over the used samples equals ``fit.residual_rms``, which is checked.

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
    >>> fit = fit_sweep(q, velocity=v, torque=torque)
    >>> fig, axes = plot_sweep(fit, q, velocity=v, torque=torque)
    >>> len(axes), axes[0].get_ylabel(), axes[2].get_ylabel()
    (3, 'torque [N·m]', 'data − model [N·m]')
    >>> [line.get_label() for line in axes[0].get_lines()][:5]
    ['forward', 'backward', 'model, forward', 'model, backward', 'offset + gravity']
    """
    qq, tt, vv, acc_arr, used = _check_inputs(
        fit, q, torque, velocity, acceleration, torque_sign, min_speed
    )
    acc = acc_arr if acceleration is not None else None
    degrees = check_bool(degrees, "degrees")
    unit = check_label(torque_unit, "torque_unit")
    # Underflow (speeds or torques of 1e-300) only rounds towards zero, in numpy and matplotlib;
    # a fit of other data may put the model beyond the float range (checked below).
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        terms = sweep_terms(fit, qq, vv, acc)
        model = np.sum(list(terms.values()), axis=0)
        resid = tt - model
    if not (np.isfinite(model).all() and np.isfinite(resid).all()):
        raise ValueError(
            "Expected `fit` and the samples (`q`, `torque`, `velocity`) to give a model torque "
            "within the float range, got values beyond it: are these the samples of the fit?"
        )
    n_used = int(np.count_nonzero(used))
    if fit.method == "least-squares":
        _check_same_samples(fit, tt, resid, used, n_used)
    fig, axes = panels(ax, 3, (8.0, 8.0))
    with np.errstate(under="ignore"):
        _draw(fit, axes, qq, tt, vv, used, model, resid, terms, degrees, unit)
    return fig, axes


def _check_same_samples(
    fit: SweepFit,
    tt: NDArray[np.float64],
    resid: NDArray[np.float64],
    used: NDArray[np.bool_],
    n_used: int,
) -> None:
    """Refuse samples other than those `fit` was fitted on (count and residual RMS)."""
    if n_used != int(fit.n_used):
        raise ValueError(
            f"Expected the samples `fit` was fitted on, with its `min_speed`: {int(fit.n_used)} "
            f"used samples, got {n_used} samples with |`velocity`| >= `min_speed`."
        )
    # In units of the largest torque: squares of 1e±300 stay in range.
    scale = float(max(np.max(np.abs(tt[used])), np.max(np.abs(resid[used])))) or 1.0
    with np.errstate(under="ignore"):
        rms = float(np.sqrt(np.mean((resid[used] / scale) ** 2))) * scale
        rms_torque = float(np.sqrt(np.mean((tt[used] / scale) ** 2))) * scale
    expected = float(fit.residual_rms)
    if not abs(rms - expected) <= _RMS_RTOL * expected + _RMS_FLOOR * rms_torque:
        raise ValueError(
            f"Expected the samples `fit` was fitted on (`q`, `torque`, `velocity`, with its "
            f"`torque_sign` and `acceleration`), got samples whose residual RMS {rms:.6g} differs "
            f"from fit.residual_rms {expected:.6g}."
        )


_TERM_STYLE: dict[str, tuple[str, str | None]] = {
    "offset": ("offset", "C7"),
    "gravity": ("gravity A sin(q + φ)", "k"),
    "friction": ("friction F_c sgn v + F_v v", "C2"),
    "inertia": ("inertia I q̈", "C4"),
    "load friction": ("load friction μ |τ_g| sgn v", "C5"),
}


def _draw(
    fit: SweepFit,
    axes: tuple[Any, ...],
    qq: NDArray[np.float64],
    tt: NDArray[np.float64],
    vv: NDArray[np.float64],
    used: NDArray[np.bool_],
    model: NDArray[np.float64],
    resid: NDArray[np.float64],
    terms: dict[str, NDArray[np.float64]],
    degrees: bool,
    unit: str,
) -> None:
    scale = np.degrees(1.0) if degrees else 1.0
    x = qq * scale
    q_lo, q_hi = float(qq.min()), float(qq.max())
    grid = np.linspace(q_lo, q_hi, 400)
    fwd, bwd = used & (vv > 0), used & (vv < 0)
    ax = axes[0]
    ax.plot(x[fwd], tt[fwd], ".", ms=2, color="C0", label="forward")
    ax.plot(x[bwd], tt[bwd], ".", ms=2, color="C1", label="backward")
    if not used.all():
        ax.plot(x[~used], tt[~used], ".", ms=2, color="0.6", label="not used")
    for mask, label, color in ((fwd, "model, forward", "C0"), (bwd, "model, backward", "C1")):
        if mask.any():
            order = np.argsort(qq[mask], kind="stable")
            ax.plot(x[mask][order], model[mask][order], "-", color=color, lw=1, label=label)
    gravity = float(fit.offset) + fit.gravity_torque(grid)
    ax.plot(grid * scale, gravity, "-", color="k", lw=1.5, label="offset + gravity")
    zeros = fit.zeros()
    for value, label, style in (
        (zeros.unstable, "unstable zero", "--"),
        (zeros.stable, "stable zero", ":"),
    ):
        # Each zero at its copies inside the swept range (angles may be unwrapped).
        base = float(value)
        k = np.arange(
            np.ceil((q_lo - base) / (2 * np.pi)), np.floor((q_hi - base) / (2 * np.pi)) + 1
        )
        for i, qz in enumerate(base + 2 * np.pi * k):
            ax.axvline(
                qz * scale, color="C3", ls=style, lw=1, label=label if i == 0 else "_nolegend_"
            )
    ax.set_ylabel(f"torque [{unit}]")
    ax.set_title(
        f"A = {float(fit.amplitude):.4g} ± {float(fit.amplitude_std):.2g} {unit}, "
        f"φ = {np.degrees(float(fit.phase)):.3f}° ± {np.degrees(float(fit.phase_std)):.2g}°, "
        f"rms = {float(fit.residual_rms):.3g} {unit}",
        fontsize="medium",
    )
    legend_outside(ax)
    angle_label = "joint angle [deg]" if degrees else "joint angle [rad]"
    if len(axes) == 1:
        ax.set_xlabel(angle_label)
        return
    tax = axes[1]
    names = fit.column_names
    for key, value in terms.items():
        term_label, term_color = _TERM_STYLE.get(
            key, (key.replace("harmonic ", "harmonic k = "), None)
        )
        if key == "gravity" or key.startswith("harmonic"):
            # Terms of the angle alone: a line on the grid.
            i = names.index("sin" if key == "gravity" else f"sin_{key.partition(' ')[2]}")
            kq = (1.0 if key == "gravity" else float(key.partition(" ")[2])) * grid
            line = fit.coefficients[i] * np.sin(kq) + fit.coefficients[i + 1] * np.cos(kq)
            tax.plot(grid * scale, line, "-", color=term_color, lw=1.2, label=term_label)
        elif key == "offset":
            offset = float(fit.offset)
            tax.axhline(offset, color=term_color, lw=1.2, label=f"offset c = {offset:.4g}")
        else:
            tax.plot(x[used], value[used], ".", ms=2, color=term_color, label=term_label)
    tax.set_ylabel(f"fitted term [{unit}]")
    legend_outside(tax)
    rax = axes[2]
    rax.plot(x[used], resid[used], ".", ms=2, color="C0", label="data − model")
    rms = float(fit.residual_rms)
    rax.axhline(rms, color="k", ls="--", lw=1, label="± residual_rms")
    rax.axhline(-rms, color="k", ls="--", lw=1, label="_nolegend_")
    rax.set_ylabel(f"data − model [{unit}]")
    rax.set_xlabel(angle_label)
    legend_outside(rax)
