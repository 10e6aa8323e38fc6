"""amplitude_phase_bound: the Cramér-Rao bound of a planned sweep."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_same_shape
from gravdir._options import Friction
from gravdir.errors import InsufficientDataError
from gravdir.sweep._design import (
    DEFAULT_SINGLE_SPEED_RTOL,
    FRICTION_OPTIONS,
    check_friction_option,
    check_harmonics,
    check_min_speed,
    check_rtol,
    prepare,
)
from gravdir.sweep._solve import solve_normal


def amplitude_phase_bound(
    q: ArrayLike,
    *,
    velocity: ArrayLike,
    acceleration: ArrayLike | None = None,
    amplitude: ArrayLike,
    phase: ArrayLike,
    noise_std: ArrayLike,
    min_speed: float | None = None,
    friction: Friction = "auto",
    harmonics: Sequence[float] = (),
    single_speed_rtol: float = DEFAULT_SINGLE_SPEED_RTOL,
) -> NDArray[np.float64]:
    """Cramér-Rao bound of ``(amplitude, phase)`` for a planned sweep under white noise.

    Parameters
    ----------
    q, velocity : array_like, shape (..., n)
        Joint angles and velocities of the sweep, as they will be passed to
        :func:`~gravdir.sweep.fit_sweep` (radians within ±4π; the two share their last,
        sample, axis).
    acceleration : array_like, shape (..., n), optional
        The planned joint acceleration, rad/s², for the bound of the model with the inertia
        column (:func:`~gravdir.sweep.fit_sweep` with `acceleration`); same shape rules as
        `velocity`, non-zero at some used sample. Default: no inertia column.
    amplitude, phase : array_like, shape (...)
        The gravity sinusoid assumed for the bound (a prior or a first fit); the amplitude is
        positive (the phase of a zero sinusoid is undetermined).
    noise_std : array_like, shape (...)
        Standard deviation of the white torque noise, positive.
    min_speed, friction, harmonics, single_speed_rtol
        As in :func:`~gravdir.sweep.fit_sweep`; the bound is that of the same model.

    Returns
    -------
    ndarray, shape (..., 2, 2)
        The smallest covariance of ``(amplitude, phase)`` an unbiased estimator of that model can
        reach. :func:`~gravdir.sweep.fit_sweep` (least squares, hence maximum likelihood for
        Gaussian noise) attains it to first order.

    Raises
    ------
    ValueError
        If an array is not real and numeric (strings and booleans are refused) or not finite,
        `amplitude` or `noise_std` is not positive, `q` looks like degrees, the sample axes
        differ or the batch shapes do not broadcast, an option is unknown or out of range, or a
        variance of the bound lies beyond the float range (`noise_std` / `amplitude` above
        about 1e150).
    InsufficientDataError
        If the planned samples do not determine the model, as in
        :func:`~gravdir.sweep.fit_sweep`.

    See Also
    --------
    fit_sweep : the fit whose covariance this bounds.

    Notes
    -----
    The model is linear in :math:`\\beta`, so its Fisher information is
    :math:`X^\\top X / \\sigma^2` and the bound on :math:`(a, b)` is the corresponding block of
    :math:`\\sigma^2 (X^\\top X)^{-1}`; :math:`(A, \\varphi)` is a smooth reparametrisation, whose
    bound is :math:`J\\,C_{ab}\\,J^\\top`. For uniform samples over a full period and no other
    columns this gives :math:`\\mathrm{var}\\,A = 2\\sigma^2/N` and
    :math:`\\mathrm{var}\\,\\varphi = 2\\sigma^2/(N A^2)`.

    References
    ----------
    Kay (1993), ch. 3 (the Cramér-Rao bound, its transformation to functions of the parameters,
    and the bound of a sinusoid's amplitude and phase).

    Examples
    --------
    >>> q = np.linspace(0, 2 * np.pi, 1000, endpoint=False)
    >>> bound = amplitude_phase_bound(
    ...     q, velocity=np.ones_like(q), amplitude=2.0, phase=0.3, noise_std=0.1, friction="none"
    ... )
    >>> var_a, var_phi = bound[0, 0], bound[1, 1]
    >>> print(f"{var_a / (2 * 0.1**2 / 1000):.6f} {var_phi / (2 * 0.1**2 / (1000 * 2.0**2)):.6f}")
    1.000000 1.000000
    """
    qq = check_array(q, "q", min_ndim=1)
    vv = check_array(velocity, "velocity", min_ndim=1)
    aa = None if acceleration is None else check_array(acceleration, "acceleration", min_ndim=1)
    if aa is not None and aa.shape[-1] != qq.shape[-1]:
        raise ValueError(
            "Expected `q` and `acceleration` to share their last (sample) axis, got shapes "
            f"{qq.shape} and {aa.shape}: leading axes broadcast over sweeps, the sample axis "
            "does not."
        )
    if qq.shape[-1] != vv.shape[-1]:
        raise ValueError(
            "Expected `q` and `velocity` to share their last (sample) axis, got shapes "
            f"{qq.shape} and {vv.shape}: leading axes broadcast over sweeps, the sample axis "
            "does not."
        )
    amp = check_array(amplitude, "amplitude")
    ph = check_array(phase, "phase")
    sd = check_array(noise_std, "noise_std")
    if np.any(amp <= 0):
        raise ValueError(
            f"Expected `amplitude` > 0, got {float(np.min(amp)):g}: the phase of a sinusoid of "
            "zero amplitude is undetermined (its bound is infinite)."
        )
    if np.any(sd <= 0):
        raise ValueError(f"Expected `noise_std` > 0, got {float(np.min(sd)):g}.")
    shape = (
        check_same_shape(q=qq, velocity=vv)
        if aa is None
        else check_same_shape(q=qq, velocity=vv, acceleration=aa)
    )
    batch = check_same_shape(q_batch=np.empty(shape[:-1]), amplitude=amp, phase=ph, noise_std=sd)
    orders = check_harmonics(harmonics)
    check_friction_option(friction, "friction", FRICTION_OPTIONS)
    single_speed_rtol = check_rtol(single_speed_rtol, "single_speed_rtol")
    min_speed = check_min_speed(min_speed)
    if shape[-1] == 0:
        raise InsufficientDataError(f"Expected at least one sample, got `q` {qq.shape}.")
    # Underflow (angles or speeds of 1e-300) only rounds towards zero here; the condition
    # number of the normal equations then refuses what the samples do not determine.
    with np.errstate(under="ignore"):
        d = prepare(
            np.broadcast_to(qq, shape),
            np.broadcast_to(vv, shape),
            min_speed,
            friction,
            "none",
            orders,
            0.0,
            single_speed_rtol,
            None if aa is None else np.broadcast_to(aa, shape),
        )
        _, inv_gram, _ = solve_normal(d.x, np.zeros(shape), d.gram, d.pinned)
    # The (sin, cos) block of the inverse does not depend on the scale of the viscous column.
    cov_ab = np.broadcast_to(inv_gram[..., 1:3, 1:3], batch + (2, 2))
    c, s = np.broadcast_to(np.cos(ph), batch), np.broadcast_to(np.sin(ph), batch)
    sd_b, amp_b = np.broadcast_to(sd, batch), np.broadcast_to(amp, batch)
    c00, c01, c11 = cov_ab[..., 0, 0], cov_ab[..., 0, 1], cov_ab[..., 1, 1]
    # J C J^T with J = [[c, s], [-s/A, c/A]], times noise_std^2, in factors that cannot overflow
    # on the way to a representable result (noise_std / A may be large, its square larger).
    with np.errstate(over="ignore", under="ignore"):
        ratio = sd_b / amp_b
        var_a = sd_b * (sd_b * np.maximum(c * c * c00 + 2.0 * c * s * c01 + s * s * c11, 0.0))
        cross = sd_b * (ratio * (c * s * (c11 - c00) + (c * c - s * s) * c01))
        var_p = ratio * (ratio * np.maximum(s * s * c00 - 2.0 * c * s * c01 + c * c * c11, 0.0))
    out = np.stack([np.stack([var_a, cross], -1), np.stack([cross, var_p], -1)], -2)
    if not np.isfinite(out).all():
        raise ValueError(
            "Expected `amplitude` and `noise_std` whose bound lies within the float range, got "
            f"noise_std / amplitude up to {float(np.max(ratio)):.3g}: a variance beyond "
            "1.8e308."
        )
    return out
