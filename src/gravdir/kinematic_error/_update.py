"""Pure update rules: the phasor model of a run, its gradient, and two step rules."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive
from gravdir._results import Result
from gravdir.errors import InsufficientDataError
from gravdir.kinematic_error._common import _check_complex, _require_finite


def _check_grow_shrink(
    grow: float, shrink: float, grow_name: str, shrink_name: str
) -> tuple[float, float]:
    """Validate a growth factor (> 1, finite) and a shrink factor (in (0, 1))."""
    gr = check_positive(grow, grow_name)
    sh = check_positive(shrink, shrink_name)
    if gr <= 1.0:
        raise ValueError(f"Expected `{grow_name}` > 1, got {grow!r}.")
    if sh >= 1.0:
        raise ValueError(f"Expected `{shrink_name}` in (0, 1), got {shrink!r}.")
    return gr, sh


def _check_step_bounds(step_min: float, step_max: float) -> tuple[float, float]:
    lo = check_positive(step_min, "step_min")
    hi = check_positive(step_max, "step_max")
    if lo > hi:
        raise ValueError(f"Expected `step_min` ≤ `step_max`, got {lo!r} and {hi!r}.")
    return lo, hi


def _check_current(coefficients: ArrayLike) -> NDArray[np.float64]:
    c = check_array(coefficients, "coefficients")
    if c.ndim != 2 or c.shape[1] != 2 or c.shape[0] == 0:
        raise ValueError(f"Expected `coefficients` to have shape (k, 2), k ≥ 1, got {c.shape}.")
    return c


def _check_coefficient_like(x: ArrayLike, name: str, shape: tuple[int, ...]) -> NDArray[np.float64]:
    arr = check_array(x, name)
    if arr.shape != shape:
        raise ValueError(f"Expected `{name}` to have shape {shape}, got {arr.shape}.")
    return arr


def phasor_gradient(response: ArrayLike, deviation: ArrayLike) -> NDArray[np.float64]:
    """Gradient of :math:`J = \\sum |Y|^2` with respect to the correction coefficients.

    Parameters
    ----------
    response : array_like of complex, shape (m, k)
        :math:`g_k`: deviation phasor per unit correction phasor, for each of `m` channels (all
        directions and axes flattened) and each order.
    deviation : array_like of complex, shape (m, k)
        Measured deviation phasors :math:`Y_k` at the current correction.

    Returns
    -------
    ndarray, shape (k, 2)
        :math:`(\\partial J/\\partial a_k, \\partial J/\\partial b_k)`.

    Raises
    ------
    ValueError
        If the shapes differ, values are not finite (or are text), or the gradient overflows
        float64.

    See Also
    --------
    fit_phasor_response : identifies `response` from runs.

    Notes
    -----
    US 2025/0065499 A1 (paragraph 24, claim 11) steps along the gradient of the deviation with
    respect to the weighting coefficients of the correction. With the linear phasor model
    :math:`Y_k = g_k c_k + y_k`, :math:`c_k = a_k - i b_k` (influence coefficients, Goodman 1964),
    :math:`\\partial J/\\partial a_k = 2\\,\\mathrm{Re}(Y_k^H g_k)` and
    :math:`\\partial J/\\partial b_k = 2\\,\\mathrm{Im}(Y_k^H g_k)`.

    References
    ----------
    US 2025/0065499 A1, paragraph 24 and claim 11.
    Goodman (1964), "A least-squares method for computing balance corrections", J. Eng. Ind.
    86(3), 273-279.

    Examples
    --------
    >>> phasor_gradient([[2.0 + 0j]], [[1.0 + 0j]])
    array([[4., 0.]])
    """
    g = _check_complex(response, "response")
    y = _check_complex(deviation, "deviation")
    if g.ndim != 2 or g.shape != y.shape:
        raise ValueError(
            f"Expected `response` and `deviation` of one shape (m, k), got {g.shape}, {y.shape}."
        )
    with np.errstate(all="ignore"):
        z = np.sum(np.conj(y) * g, axis=0)
        out = np.stack([2 * z.real, 2 * z.imag], axis=-1)
    _require_finite(out, "Expected `response` times `deviation` to fit in float64, got overflow.")
    return out


@dataclass(frozen=True, eq=False, repr=False)
class PhasorResponseFit(Result):
    """Linear phasor model :math:`Y_k = g_k (c_k - c_k^*)` fitted to runs.

    :meth:`to_dict` writes each complex array as ``{"real": ..., "imag": ...}``.

    Attributes
    ----------
    response : ndarray of complex, shape (m, k)
        :math:`g_k` per channel and order: deviation (m/s²) per unit correction (rad of motor
        angle).
    offset : ndarray of complex, shape (m, k)
        :math:`y_k = -g_k c_k^*`, the deviation with no correction (m/s²).
    optimum : ndarray of complex, shape (k,)
        :math:`c_k^*`, the correction phasors that minimise :math:`\\sum|Y_k|^2` (rad).
    """

    _units = {
        "response": "(m/s²)/rad", "offset": "m/s²", "optimum": "rad",
    }

    response: NDArray[np.complex128]
    offset: NDArray[np.complex128]
    optimum: NDArray[np.complex128]


def fit_phasor_response(corrections: ArrayLike, deviations: ArrayLike) -> PhasorResponseFit:
    """Fit :math:`Y_k = g_k c_k + y_k` per order to runs at different corrections.

    Parameters
    ----------
    corrections : array_like of complex, shape (r, k)
        Correction phasors :math:`c_k` of `r` runs.
    deviations : array_like of complex, shape (r, m, k)
        Deviation phasors measured in those runs, `m` channels.

    Returns
    -------
    PhasorResponseFit
        :math:`g_k`, :math:`y_k` and the optimum :math:`c_k^* = -g_k^H y_k / g_k^H g_k`.

    Raises
    ------
    ValueError
        If shapes disagree, values are not finite (or are text), or the fitted response and
        optimum do not fit in float64.
    InsufficientDataError
        If some order was not varied between runs (fewer than two distinct corrections), or the
        deviations do not respond to it at all (the optimum is then undefined).

    See Also
    --------
    InfluenceTuner : runs this after every run and applies the optimum.
    phasor_gradient : the gradient of the deviation under this model.

    Notes
    -----
    At constant speed the joint and link are linear and time-invariant in the small, so a
    correction :math:`\\mathrm{Re}(c e^{iq\\theta})` produces a deviation
    :math:`\\mathrm{Re}(g c\\,e^{iq\\theta})` at the same order: :math:`g_k` is a complex number per
    channel (its magnitude and phase are the transfer function of the arm at that frequency), an
    influence coefficient in the sense of rotor balancing (Goodman 1964). Two runs with different
    :math:`c_k` determine it; more runs are fitted by least squares. The fit is direct (one linear
    least-squares solve per order), not iterative.

    References
    ----------
    Goodman (1964), "A least-squares method for computing balance corrections", J. Eng. Ind.
    86(3), 273-279.

    Examples
    --------
    >>> c = np.array([[0.0], [1.0]])
    >>> y = np.array([[[2.0 + 1j]], [[3.0 + 1j]]])
    >>> fit = fit_phasor_response(c, y)
    >>> bool(np.isclose(fit.response[0, 0], 1.0)), bool(np.isclose(fit.optimum[0], -2 - 1j))
    (True, True)
    """
    c = _check_complex(corrections, "corrections")
    y = _check_complex(deviations, "deviations")
    if c.ndim != 2 or y.ndim != 3 or y.shape[0] != c.shape[0] or y.shape[2] != c.shape[1]:
        raise ValueError(
            "Expected `corrections` of shape (r, k) and `deviations` of shape (r, m, k), "
            f"got {c.shape} and {y.shape}."
        )
    r, m, k = y.shape
    if r < 2:
        raise InsufficientDataError(
            f"Expected `corrections` of at least two runs with different corrections, "
            f"got {r} run(s)."
        )
    g = np.empty((m, k), dtype=np.complex128)
    y0 = np.empty((m, k), dtype=np.complex128)
    opt = np.empty(k, dtype=np.complex128)
    with np.errstate(all="ignore"):
        for j in range(k):
            # solve in units of the spread of the corrections and the size of the deviations
            cj = c[:, j]
            centre = cj.mean() if np.all(np.isfinite(cj.mean())) else cj[0]
            spread = float(np.max(np.abs(cj - centre)))
            size = float(np.max(np.abs(cj)))
            if not spread > 1e-9 * size:
                raise InsufficientDataError(
                    f"Expected `corrections` of at least two runs with different corrections at "
                    f"order index {j}, got {r} run(s) with a spread of {spread:.3g}."
                )
            ys = float(np.max(np.abs(y[:, :, j])))
            ys = ys if ys > 0 else 1.0
            x = np.stack([(cj - centre) / spread, np.ones(r)], axis=1)
            sol, *_ = np.linalg.lstsq(x, y[:, :, j] / ys, rcond=None)
            gs, y0s = sol[0], sol[1]  # deviation = gs (c - centre)/spread + y0s, in units of ys
            gg = float(np.sum(np.abs(gs) ** 2))
            # in these units a response below 1e-12 is rounding: the deviations did not respond
            if not gg > 1e-24:
                raise InsufficientDataError(
                    f"Expected `deviations` that respond to the correction at order index {j}, "
                    f"got a response of {math.sqrt(gg):.3g} of their size: the optimum is "
                    "undefined."
                )
            opt[j] = centre - spread * np.sum(np.conj(gs) * y0s) / gg
            g[:, j] = gs * (ys / spread)
            y0[:, j] = (y0s - gs * (centre / spread)) * ys
    for part in (g, y0, opt):
        _require_finite(
            part,
            "Expected `corrections` and `deviations` of scales whose ratio fits in float64, "
            "got overflow.",
        )
    return PhasorResponseFit(response=g, offset=y0, optimum=opt)


@dataclass(frozen=True, eq=False, repr=False)
class BoldDriverUpdate(Result):
    """One step of :func:`bold_driver_update`.

    Attributes
    ----------
    coefficients : ndarray, shape (k, 2)
        The new coefficients (rad of motor angle).
    factor : float
        The adapted scalar factor (rad per unit of gradient).
    """

    _units = {
        "coefficients": "rad", "factor": "rad per unit of gradient",
    }

    coefficients: NDArray[np.float64]
    factor: float


def bold_driver_update(
    coefficients: ArrayLike,
    gradient: ArrayLike,
    previous_gradient: ArrayLike | None,
    factor: float,
    *,
    grow: float = 1.2,
    shrink: float = 0.5,
) -> BoldDriverUpdate:
    """One bold-driver step: the gradient times one scalar factor, adapted by sign changes.

    Parameters
    ----------
    coefficients : array_like, shape (k, 2)
        Current coefficients (rad).
    gradient : array_like, shape (k, 2)
        Gradient of the deviation measure at `coefficients`.
    previous_gradient : array_like, shape (k, 2), or None
        Gradient of the previous step; None on the first step (the factor is kept).
    factor : float
        Current scalar factor (positive).
    grow, shrink : float, optional
        Multipliers applied when no component changed sign (``grow`` > 1, finite) and when one
        did (``0 < shrink`` < 1). The defaults are those of iRprop−, the per-component relative
        (:func:`rprop_update`).

    Returns
    -------
    BoldDriverUpdate
        ``coefficients - factor' * gradient`` and the adapted ``factor'``.

    Raises
    ------
    ValueError
        If shapes differ, values are not finite, `factor` is not a finite positive number (a
        negative factor would climb), `grow` ≤ 1, `shrink` outside (0, 1), or the step overflows
        float64.

    See Also
    --------
    BoldDriverTuner : the stateful loop around this rule.
    rprop_update : per-coefficient steps from signs only.

    Notes
    -----
    One scalar step for all coefficients (US 2025/0065499 A1, paragraphs 24-26 and claims
    11-12): a steady gradient direction (no component changes sign between successive gradients)
    means the optimum is still far, so the factor grows; a sign change in any component means it
    was overshot, so the factor shrinks. This is the "bold driver" rule of Vogl et al. (1988) and
    Battiti (1989), with the sign test of the patent in place of their test on the objective. The
    step descends: the gradient times the factor is subtracted.

    References
    ----------
    US 2025/0065499 A1, paragraphs 24-26 and claims 11-12.
    Vogl et al. (1988), "Accelerating the convergence of the back-propagation method",
    Biol. Cybern. 59, 257-263.
    Battiti (1989), "Accelerated backpropagation learning: two optimization methods",
    Complex Systems 3, 331-342.

    Examples
    --------
    >>> step = bold_driver_update([[0.0, 0.0]], [[1.0, -1.0]], [[1.0, -2.0]], 0.1)
    >>> step.coefficients.round(3), round(step.factor, 3)
    (array([[-0.12,  0.12]]), 0.12)
    """
    c = _check_current(coefficients)
    g = _check_coefficient_like(gradient, "gradient", c.shape)
    f = check_positive(factor, "factor")
    gr, sh = _check_grow_shrink(grow, shrink, "grow", "shrink")
    if previous_gradient is not None:
        p = _check_coefficient_like(previous_gradient, "previous_gradient", c.shape)
        f = f * (sh if np.any(np.sign(g) * np.sign(p) < 0) else gr)
    with np.errstate(all="ignore"):
        new = c - f * g
    _require_finite(
        [f, *np.ravel(new)],
        "Expected `factor` times `gradient` to fit in float64, got overflow.",
    )
    return BoldDriverUpdate(coefficients=new, factor=float(f))


@dataclass(frozen=True, eq=False, repr=False)
class RpropUpdate(Result):
    """One step of :func:`rprop_update`.

    Attributes
    ----------
    coefficients : ndarray, shape (k, 2)
        The new coefficients (rad of motor angle).
    gradient : ndarray, shape (k, 2)
        The gradient to remember for the next step (zeroed where the sign changed).
    step_sizes : ndarray, shape (k, 2)
        The adapted step sizes (rad of motor angle).
    """

    _units = {
        "coefficients": "rad", "gradient": "unit of the deviation per rad", "step_sizes": "rad",
    }

    coefficients: NDArray[np.float64]
    gradient: NDArray[np.float64]
    step_sizes: NDArray[np.float64]


def rprop_update(
    coefficients: ArrayLike,
    gradient: ArrayLike,
    previous_gradient: ArrayLike | None,
    step_sizes: ArrayLike,
    *,
    eta_plus: float = 1.2,
    eta_minus: float = 0.5,
    step_min: float = 1e-7,
    step_max: float = 0.05,
) -> RpropUpdate:
    """One iRprop− step: per-coefficient step sizes driven by gradient signs only.

    Parameters
    ----------
    coefficients : array_like, shape (k, 2)
        Current coefficients (rad of motor angle).
    gradient : array_like, shape (k, 2)
        Gradient at `coefficients`.
    previous_gradient : array_like, shape (k, 2), or None
        The gradient memory returned by the previous step (None on the first).
    step_sizes : array_like, shape (k, 2)
        Current step sizes (rad of motor angle), within [`step_min`, `step_max`]. A zero or
        negative step would stall or climb and is refused.
    eta_plus, eta_minus : float, optional
        Growth and shrink factors; 1.2 and 0.5 are the published iRprop− values.
    step_min, step_max : float, optional
        Bounds of the step sizes in radians of motor angle. The default cap of 0.05 rad exceeds
        :math:`N` times a typical harmonic-drive kinematic error (about 1e-4 rad at the output,
        :math:`N \\approx 100`).

    Returns
    -------
    RpropUpdate
        New coefficients, the gradient to remember (zeroed where the sign changed) and step sizes.

    Raises
    ------
    ValueError
        If shapes differ, values are not finite, `step_sizes` lie outside
        [`step_min`, `step_max`] (zero and negative steps included), `eta_plus` ≤ 1, `eta_minus`
        outside (0, 1), the bounds are not finite positive numbers with `step_min` ≤ `step_max`,
        or the step overflows float64.

    See Also
    --------
    RpropTuner : the stateful loop around this rule.
    bold_driver_update : one scalar factor for all coefficients.

    Notes
    -----
    Rprop (Riedmiller and Braun 1993) in the iRprop− variant (Igel and Hüsken 2003): where
    :math:`g_i g_i^{prev} > 0` the step grows by :math:`\\eta^+`, where :math:`< 0` it shrinks by
    :math:`\\eta^-` and :math:`g_i` is set to 0 (no move this step), then
    :math:`x_i \\leftarrow x_i - \\mathrm{sign}(g_i)\\Delta_i`.

    References
    ----------
    Riedmiller & Braun (1993), "A direct adaptive method for faster backpropagation learning:
    the RPROP algorithm", Proc. IEEE ICNN, 586-591.
    Igel & Hüsken (2003), "Empirical evaluation of the improved Rprop learning algorithms",
    Neurocomputing 50, 105-123.

    Examples
    --------
    >>> step = rprop_update([[0.0, 0.0]], [[1.0, -1.0]], [[1.0, 1.0]], [[0.1, 0.1]], step_max=1.0)
    >>> step.coefficients.round(3), step.step_sizes.round(3)
    (array([[-0.12,  0.  ]]), array([[0.12, 0.05]]))
    """
    c = _check_current(coefficients)
    g = np.array(_check_coefficient_like(gradient, "gradient", c.shape), dtype=np.float64)
    d = np.array(_check_coefficient_like(step_sizes, "step_sizes", c.shape), dtype=np.float64)
    ep, em = _check_grow_shrink(eta_plus, eta_minus, "eta_plus", "eta_minus")
    lo, hi = _check_step_bounds(step_min, step_max)
    if d.size and not (float(np.min(d)) >= lo and float(np.max(d)) <= hi):
        raise ValueError(
            f"Expected `step_sizes` within [`step_min`, `step_max`] = [{lo:g}, {hi:g}], got "
            f"values from {float(np.min(d)):.3g} to {float(np.max(d)):.3g}."
        )
    if previous_gradient is not None:
        p = _check_coefficient_like(previous_gradient, "previous_gradient", c.shape)
        prod = np.sign(g) * np.sign(p)  # signs only: no overflow or underflow
        with np.errstate(over="ignore"):
            d = np.where(
                prod > 0, np.minimum(d * ep, hi), np.where(prod < 0, np.maximum(d * em, lo), d)
            )
        g = np.where(prod < 0, 0.0, g)
    with np.errstate(over="ignore", invalid="ignore"):
        new = c - np.sign(g) * d
    _require_finite(new, "Expected `coefficients` minus a step to fit in float64, got overflow.")
    return RpropUpdate(coefficients=new, gradient=g, step_sizes=d)
