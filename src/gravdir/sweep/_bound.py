"""amplitude_phase_bound: the Cramér-Rao bound of a planned sweep."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_option, check_positive, check_same_shape
from gravdir.sweep._design import (
    DEFAULT_SINGLE_SPEED_RTOL,
    FRICTION_OPTIONS,
    Friction,
    check_harmonics,
    prepare,
)
from gravdir.sweep._result import amplitude_phase_covariance
from gravdir.sweep._solve import solve_normal


def amplitude_phase_bound(
    q: ArrayLike,
    velocity: ArrayLike,
    amplitude: ArrayLike,
    phase: ArrayLike,
    noise_std: ArrayLike,
    *,
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
        :func:`~gravdir.sweep.fit_sweep`.
    amplitude, phase : array_like, shape (...)
        The gravity sinusoid assumed for the bound (a prior or a first fit).
    noise_std : array_like, shape (...)
        Standard deviation of the white torque noise.
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
        If an array is not finite, `amplitude` is negative, `noise_std` is not positive, the
        shapes do not broadcast, or an option is unknown.
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
    >>> bound = amplitude_phase_bound(q, np.ones_like(q), 2.0, 0.3, 0.1, friction="none")
    >>> var_a, var_phi = bound[0, 0], bound[1, 1]
    >>> print(f"{var_a / (2 * 0.1**2 / 1000):.6f} {var_phi / (2 * 0.1**2 / (1000 * 2.0**2)):.6f}")
    1.000000 1.000000
    """
    qq = check_array(q, "q", min_ndim=1)
    vv = check_array(velocity, "velocity", min_ndim=1)
    amp = check_array(amplitude, "amplitude")
    ph = check_array(phase, "phase")
    sd = check_array(noise_std, "noise_std")
    if np.any(amp < 0) or np.any(sd <= 0):
        raise ValueError(
            "Expected `amplitude` >= 0 and `noise_std` > 0, got "
            f"min amplitude {float(np.min(amp)):g}, min noise_std {float(np.min(sd)):g}."
        )
    shape = check_same_shape(q=qq, velocity=vv)
    batch = check_same_shape(q_batch=np.empty(shape[:-1]), amplitude=amp, phase=ph, noise_std=sd)
    orders = check_harmonics(harmonics)
    check_option(friction, "friction", FRICTION_OPTIONS)
    single_speed_rtol = check_positive(single_speed_rtol, "single_speed_rtol", allow_zero=True)
    d = prepare(
        np.broadcast_to(qq, shape),
        np.broadcast_to(vv, shape),
        min_speed,
        friction,
        "none",
        orders,
        0.0,
        single_speed_rtol,
    )
    _, inv_gram, _ = solve_normal(d.x, np.zeros(shape), d.gram, d.pinned)
    ab = np.broadcast_to(np.stack([amp * np.cos(ph), amp * np.sin(ph)], -1), batch + (2,))
    cov_ab = np.broadcast_to(inv_gram[..., 1:3, 1:3], batch + (2, 2))
    var = np.broadcast_to(sd**2, batch)[..., None, None]
    return amplitude_phase_covariance(np.ascontiguousarray(ab), var * cov_ab)
