"""The friction plot: a fitted friction curve with its confidence band over the data."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array
from gravdir.friction import FrictionFit, LoadDependentFriction
from gravdir.plot._common import check_sigma, legend_outside, panels

__all__ = ["friction_band", "plot_friction"]

# Agreement demanded between the residuals recomputed from the samples and the fit's own,
# relative to the largest torque: far above the rounding of the fit (it works in scaled units,
# about 1e-13), far below any change of the data that would matter.
_RESIDUAL_RTOL = 1e-6
# Relative step of the central differences of the curve by its parameters: the curve is linear
# in its levels (exact for any step) and smooth in the Stribeck velocity and exponent, where a
# step of 1e-6 leaves a truncation error near 1e-12 and a rounding error near 1e-10.
_STEP = 1e-6
_GRID = 300


def friction_band(
    fit: FrictionFit, velocity: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The load-free friction curve of `fit` at `velocity` and its standard deviation there.

    The standard deviation is :math:`\\sqrt{g^\\top C g}` with :math:`g` the gradient of the
    curve by the parameters it has (central differences) and :math:`C` their block of
    ``fit.parameters_cov`` (the delta method); infinite where that block is.
    """
    base = fit.model.base if isinstance(fit.model, LoadDependentFriction) else fit.model
    curve = base.evaluate(velocity)
    fields = {f.name for f in dataclasses.fields(base)}
    index = [i for i, n in enumerate(fit.parameter_names) if n in fields]
    cov = np.asarray(fit.parameters_cov, dtype=np.float64)[np.ix_(index, index)]
    if not np.isfinite(cov).all():
        return curve, np.full_like(curve, np.inf)
    grad = np.empty((len(index), velocity.size))
    for row, i in enumerate(index):
        name = fit.parameter_names[i]
        value = float(getattr(base, name))
        h = _STEP * (abs(value) or float(fit.parameters_std[i]) or 1.0)
        model: Any = base
        up = dataclasses.replace(model, **{name: value + h}).evaluate(velocity)
        down = dataclasses.replace(model, **{name: value - h}).evaluate(velocity)
        grad[row] = (up - down) / (2 * h)
    var = np.einsum("in,ij,jn->n", grad, cov, grad)
    return curve, np.sqrt(np.maximum(var, 0.0))


def _samples(fit: FrictionFit, arrays: dict[str, Any]) -> dict[str, NDArray[np.float64] | None]:
    """The sample arrays, of one shape (n,) matching `fit.mask`, without the omitted NaN."""
    out: dict[str, NDArray[np.float64] | None] = {}
    for name, value in arrays.items():
        if value is None:
            out[name] = None
            continue
        arr = check_array(value, name, min_ndim=1, finite=False)
        if arr.ndim != 1:
            raise ValueError(f"Expected `{name}` to have shape (n,), got {arr.shape}.")
        if np.isinf(arr).any():
            raise ValueError(f"Expected `{name}` without infinities, got some.")
        out[name] = arr
    given = [a for a in out.values() if a is not None]
    if len({a.shape for a in given}) != 1:
        raise ValueError(
            "Expected `velocity`, `torque` (and `acceleration`, `gravity_torque`) of one shape "
            "(n,), got " + ", ".join(str(a.shape) for a in given) + "."
        )
    bad = np.zeros(given[0].shape, dtype=bool)
    for a in given:
        bad |= np.isnan(a)
    if bad.any() and int(bad.sum()) != fit.n_omitted:
        raise ValueError(
            f"Expected `velocity` and `torque` without NaN, or with NaN in exactly the "
            f"{fit.n_omitted} samples the fit omitted, got {int(bad.sum())}."
        )
    out = {k: (None if a is None else a[~bad]) for k, a in out.items()}
    v = out["velocity"]
    assert v is not None
    if v.shape != fit.mask.shape:
        raise ValueError(
            f"Expected `velocity` and `torque` of the {fit.mask.size} samples `fit` was fitted "
            f"on, got {v.size}."
        )
    return out


def plot_friction(
    fit: FrictionFit,
    velocity: ArrayLike,
    *,
    torque: ArrayLike,
    acceleration: ArrayLike | None = None,
    gravity_torque: ArrayLike | None = None,
    nsigma: float = 2.0,
    ax: Any = None,
) -> tuple[Any, tuple[Any, ...]]:
    """Draw a fitted friction curve with its confidence band over the data it was fitted on.

    Parameters
    ----------
    fit : FrictionFit
        The result of :func:`~gravdir.fit_friction`.
    velocity, torque : array_like, shape (n,)
        The samples that were fitted, rad/s and N·m (NaN only in the samples the fit omitted).
    acceleration, gravity_torque : array_like, shape (n,), optional
        Given to the fit, they must be given here: the inertial torque :math:`J \\ddot q`, the
        gravity torque and the load-dependent friction :math:`\\mu |\\tau_g| \\mathrm{sgn}\\,v`
        are taken off the torque, so the dots are the load-free friction the curve describes.
    nsigma : float, optional
        Half-width of the band in standard deviations of the curve (default 2; at most 10).
    ax : matplotlib Axes or sequence of 2 Axes, optional
        Two Axes receive the linear and the symmetric-logarithmic velocity panels, one Axes the
        linear panel only; omitted, a new figure with both side by side.

    Returns
    -------
    figure : matplotlib.figure.Figure
    axes : tuple of matplotlib Axes
        Each panel holds ``"data"`` (the used samples), ``"not used"`` (those below
        ``fit.min_speed``, if any), the curve ``"fitted friction"`` on a grid of each direction
        with data (a NaN separates the directions) and the band ``"± nσ"`` (one filled
        collection per direction). Velocity in rad/s, torque in N·m; the second panel's velocity
        axis is symmetric-logarithmic, linear within ``fit.min_speed``. Legends sit outside the
        axes.

    Raises
    ------
    ValueError
        If `fit` is not a FrictionFit; the arrays are not real, of one shape (n,) matching
        ``fit.mask``, or hold infinities or NaN outside the omitted samples; `acceleration` is
        missing for a fit with inertia (or `gravity_torque` for a load-dependent fit); the
        samples are not those of the fit (residuals differing from ``fit.residuals`` by more
        than 1e-6 of the largest torque); `nsigma` is not in (0, 10]; or `ax` is not Axes.

    Notes
    -----
    The band is the delta method: the curve's standard deviation at :math:`v` is
    :math:`\\sqrt{g(v)^\\top C\\, g(v)}`, :math:`g` the gradient of the curve by its parameters
    (central differences) and :math:`C` their covariance from ``fit.parameters_cov``. It is the
    uncertainty of the curve, not the scatter of the samples (``fit.residual_rms``).

    References
    ----------
    CN 107423515 B, claims 1-4 (friction identified from an excitation run, without and with
    gravity load). Armstrong-Hélouvry, Dupont & Canudas de Wit (1994), sec. 2 (the models).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from gravdir import fit_friction
    >>> rng = np.random.default_rng(0)
    >>> v = np.concatenate([np.geomspace(0.01, 1, 200), -np.geomspace(0.01, 1, 200)])
    >>> tau = 2.0 * np.sign(v) + 0.5 * v + rng.normal(0, 0.05, v.size)
    >>> fit = fit_friction(v, torque=tau, model="coulomb-viscous")
    >>> fig, axes = plot_friction(fit, v, torque=tau)
    >>> len(axes), axes[0].get_xlabel(), axes[0].get_ylabel()
    (2, 'velocity [rad/s]', 'friction torque [N·m]')
    """
    if not isinstance(fit, FrictionFit):
        raise ValueError(f"Expected `fit` to be a FrictionFit, got {type(fit).__name__}.")
    s = _samples(
        fit,
        {
            "velocity": velocity,
            "torque": torque,
            "acceleration": acceleration,
            "gravity_torque": gravity_torque,
        },
    )
    k = check_sigma(nsigma, "nsigma")
    v, t, a, g = s["velocity"], s["torque"], s["acceleration"], s["gravity_torque"]
    assert v is not None and t is not None
    load = isinstance(fit.model, LoadDependentFriction)
    if load and g is None:
        raise ValueError("Expected `gravity_torque` for a load-dependent fit, got None.")
    if fit.inertia is not None and a is None:
        raise ValueError("Expected `acceleration` for a fit with inertia, got None.")
    mask = np.asarray(fit.mask, dtype=bool)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        data = t if g is None else t - g
        model = fit.predict(
            v[mask],
            acceleration=None if a is None else a[mask],
            load=None if g is None else g[mask],
        )
        scale = float(np.max(np.abs(data[mask]))) or 1.0
        ok = np.all(np.abs((data[mask] - model) - fit.residuals) <= _RESIDUAL_RTOL * scale)
    if not ok:
        raise ValueError(
            "Expected the samples `fit` was fitted on (`velocity`, `torque` and, as given to the "
            "fit, `acceleration` and `gravity_torque`), got samples whose residuals differ from "
            "fit.residuals."
        )
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        friction = data - (0.0 if a is None or fit.inertia is None else fit.inertia * a)
        if load and g is not None:
            assert isinstance(fit.model, LoadDependentFriction)
            friction = friction - fit.model.load_coefficient * np.abs(g) * np.sign(v)
    fig, axes = panels(ax, 2, (11.0, 4.5), rows=False)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        _draw(fit, axes, v, friction, mask, k)
    return fig, axes


def _branches(fit: FrictionFit, v: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """A log-spaced velocity grid per direction with used samples, from the slowest to the
    fastest of them."""
    out = []
    used = v[np.asarray(fit.mask, dtype=bool)]
    for sign in (-1.0, 1.0):
        speed = np.abs(used[np.sign(used) == sign])
        if speed.size:
            lo, hi = float(speed.min()), float(speed.max())
            grid = np.geomspace(lo, hi, _GRID) if hi > lo else np.array([lo])
            out.append(sign * (grid if sign > 0 else grid[::-1]))
    return out


def _draw(
    fit: FrictionFit,
    axes: tuple[Any, ...],
    v: NDArray[np.float64],
    friction: NDArray[np.float64],
    mask: NDArray[np.bool_],
    k: float,
) -> None:
    branches = _branches(fit, v)
    curves = [friction_band(fit, b) for b in branches]
    xs = np.concatenate([np.r_[b, np.nan] for b in branches])[:-1]
    ys = np.concatenate([np.r_[c, np.nan] for c, _ in curves])[:-1]
    used_speeds = np.abs(v[mask])
    linthresh = max(float(fit.min_speed), float(used_speeds.min()) if used_speeds.size else 0.0)
    for j, ax in enumerate(axes):
        ax.plot(v[mask], friction[mask], ".", ms=2, alpha=0.4, color="C0", label="data")
        if not mask.all():
            ax.plot(v[~mask], friction[~mask], ".", ms=2, alpha=0.4, color="0.6", label="not used")
        ax.plot(xs, ys, "k-", lw=1.5, label="fitted friction")
        for i, (b, (c, std)) in enumerate(zip(branches, curves, strict=True)):
            if np.isfinite(std).all():
                ax.fill_between(
                    b,
                    c - k * std,
                    c + k * std,
                    color="C1",
                    alpha=0.35,
                    lw=0,
                    label=f"± {k:g}σ of the curve" if i == 0 else "_nolegend_",
                )
        if j == 1 and linthresh > 0:
            ax.set_xscale("symlog", linthresh=linthresh)
        ax.set_xlabel("velocity [rad/s]")
        ax.set_ylabel("friction torque [N·m]")
        legend_outside(ax)
    axes[0].set_title(
        f"{fit.model_name}: rms {fit.residual_rms:.3g} N·m, "
        f"{int(mask.sum())}/{mask.size} samples used",
        fontsize="medium",
    )
