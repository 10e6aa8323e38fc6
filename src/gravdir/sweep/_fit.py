"""fit_sweep: the linear least-squares sweep fit and the Gauss-Newton load-friction column."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, apply_torque_sign, check_option, check_positive
from gravdir._hac import DEFAULT_BANDWIDTH, covariance_dof, least_squares_sandwich, series_lags
from gravdir._options import COVARIANCE_OPTIONS, CovarianceOption, Friction, LoadFriction
from gravdir._results import warn_not_converged
from gravdir.sweep._design import (
    DEFAULT_MIN_ARC,
    DEFAULT_SINGLE_SPEED_RTOL,
    FRICTION_OPTIONS,
    LOAD_FRICTION_OPTIONS,
    MAX_ITER_CAP,
    SCALE_HI,
    SCALE_LO,
    Design,
    check_friction_option,
    check_harmonics,
    check_max_iter,
    check_min_arc,
    check_min_speed,
    check_rtol,
    check_sweep_inputs,
    is_unit,
    pow2_scale,
    prepare,
    refuse_non_finite,
    to_caller_units,
)
from gravdir.sweep._fast import fast_options, fast_path
from gravdir.sweep._nan import check_nan_policy, omit_nan_samples, sample_fingerprints
from gravdir.sweep._result import SweepFit, make_fit, warn_correlated
from gravdir.sweep._solve import (
    all_,
    all_finite,
    covariance_rms,
    dot,
    extreme,
    predict,
    residual_lag1_of,
    solve_normal,
)

# Gravity amplitude, relative to the RMS of the used torque, at or below which the load column
# sgn(v) |a sin q + b cos q| of load_friction="abs" is not identifiable: the fitted (a, b) of a
# sweep without gravity load are rounding (about 1e-14 relative on noise-free data), so the
# column would be rounding too. 1e-9 sits far above that rounding and far below any gravity load
# a torque sensor resolves (the same floor as the closed-form solvers' test of gravity parallel
# to joint 1).
DEFAULT_LOAD_AMPLITUDE_RTOL = 1e-9
# A Gauss-Newton step ends the iteration when it is below this relative to 1 + |coefficient| for
# every coefficient (the step is at the rounding of the coefficients), or when it changes the
# fitted torque by less than this relative to the torque's norm: a coefficient the data determine
# poorly (the load coefficient of a faint gravity sinusoid) keeps moving at its own, larger
# rounding level while the fit no longer changes.
_STEP_RTOL = 1e-14
# Halvings of a Gauss-Newton step that would raise the residual before the step is dropped: 2^-48
# of a step is below the rounding of any coefficient it could move.
_MAX_HALVINGS = 48
# Relative rise of the residual sum of squares a step may show and still count as not raising it:
# a few hundred ulps of the sum, its rounding over a few thousand samples.
_RSS_SLACK = 1e-13


def fit_sweep(
    q: ArrayLike,
    *,
    velocity: ArrayLike,
    acceleration: ArrayLike | None = None,
    torque: ArrayLike,
    min_speed: float | None = None,
    friction: Friction = "auto",
    load_friction: LoadFriction = "none",
    harmonics: Sequence[float] = (),
    min_arc: float = DEFAULT_MIN_ARC,
    single_speed_rtol: float = DEFAULT_SINGLE_SPEED_RTOL,
    max_iter: int = 50,
    load_amplitude_rtol: float = DEFAULT_LOAD_AMPLITUDE_RTOL,
    torque_sign: Literal[1, -1] = 1,
    nan_policy: NanPolicy = "raise",
    covariance: CovarianceOption = "white",
    bandwidth: float = DEFAULT_BANDWIDTH,
    sample_rate: float | None = None,
) -> SweepFit:
    """Fit the gravity sinusoid, offset and friction of a joint sweep by linear least squares.

    Parameters
    ----------
    q : array_like, shape (..., n)
        Joint angles of the swept joint, radians (unwrapped: a sweep is a continuous arc),
        within ±4π and spanning at most 4π (two turns) per sweep: anything beyond is taken for
        degrees and refused.
    velocity : array_like, shape (..., n)
        Joint velocity, rad/s; its sign says the direction of motion. The leading axes of the
        sample arrays broadcast together and are independent sweeps, fitted in one batched
        solve; the last (sample) axis must be the same in all of them (a column vector does not
        broadcast into one-sample sweeps).
    acceleration : array_like, shape (..., n), optional
        Joint acceleration, rad/s², with the same shape rules as `velocity` (for a log, from
        :func:`~gravdir.sweep.joint_acceleration`). Given, the model gains the inertial torque
        :math:`I \\ddot q` (the column ``"inertia"``; :math:`I` is the joint's effective
        inertia about its axis times the sensor's gain, reported as ``inertia`` and
        ``inertia_std``), so that reversals and speed changes fit instead of inflating the
        residual. It must be non-zero at some used sample of each sweep. With
        ``load_friction="abs"`` the load-dependent friction then grows with the whole torque
        the joint transmits, :math:`\\mu |\\tau_g + I \\ddot q|`. Default: no inertial
        torque (quasi-static sweeps).
    torque : array_like, shape (..., n)
        Measured joint torque (the torque the actuator applies about +axis), any finite
        magnitude.
    min_speed : float, optional
        Samples with ``|velocity| < min_speed`` (reversals, the slow ends of acceleration ramps,
        where stiction is not modelled) are dropped: a finite number >= 0. Default: 10% of the
        largest ``|velocity|`` of each sweep, with or without `acceleration`: the inertia column
        models the torque of the acceleration, not the friction of a joint near standstill
        (whose sign is undefined at :math:`v = 0` and which is not Coulomb-like below the
        Stribeck speed), so the slowest samples stay out (docs/sweep.md).
    friction : {"auto", "coulomb-viscous", "coulomb", "none"}, optional
        Friction columns. ``"coulomb-viscous"`` fits ``sign(v)`` and ``v``; ``"coulomb"`` only
        ``sign(v)``; ``"none"`` neither. ``"auto"`` (default) fits both unless each direction
        moves at a single speed (see `single_speed_rtol`): then
        ``[1, sign(v), v]`` has rank 2 and a single term is fitted; ``single_speed`` in the
        result says which. (With different single speeds per direction the offset then absorbs
        :math:`F_v (v_+ - v_-)/2`; gravity is unaffected.) With ``"coulomb-viscous"`` at a
        single speed an error is raised.
    load_friction : {"none", "signed", "abs"}, optional
        Friction growing with the gravity load, :math:`\\mu |\\tau_g| \\mathrm{sgn}\\, v`.
        ``"signed"`` adds the columns ``sign(v) sin q`` and ``sign(v) cos q`` (exact while the
        gravity torque keeps its sign over the arc); ``"abs"`` fits the column
        ``sign(v) |A sin(q + φ)|`` by Gauss-Newton from the load-free fit (exact across gravity
        zeros too). Where the gravity sinusoid is negligible (see `load_amplitude_rtol`) the
        ``"abs"`` column vanishes and its coefficient is held at zero. ``"auto"`` (a value of
        the shared option type) is refused.
    harmonics : sequence of float, optional
        Orders :math:`k \\ne 1` of nuisance harmonics ``sin(k q), cos(k q)`` (gear ripple,
        unmodelled posture dependence) fitted beside gravity: at most 100 distinct orders, each
        from 0.01 to 10 000.
    min_arc : float, optional
        Smallest accepted span of the used joint angles, radians, from 0 to 4π (default 30°:
        below it the offset and the gravity sinusoid are nearly collinear; see docs/sweep.md).
    single_speed_rtol : float, optional
        Each direction counts as moving at one speed when the RMS deviation of ``v`` from its
        per-direction mean is below `single_speed_rtol` times the RMS of ``v`` (from 0 to 1;
        default 1e-6: a commanded constant speed gives exactly zero).
    max_iter : int, optional
        Gauss-Newton iteration limit for ``load_friction="abs"``, an integer from 1 to 10 000
        (default 50). A sweep that reaches it is returned with ``converged`` false and a
        :class:`~gravdir.errors.ConvergenceWarning` is issued.
    load_amplitude_rtol : float, optional
        For ``load_friction="abs"``: the gravity sinusoid of a sweep counts as negligible where
        the amplitude of its load-free fit is at most `load_amplitude_rtol` times the RMS of the
        used torque (from 0 to 1; default 1e-9). There the load coefficient is not
        identifiable: it is held at zero, its variance in ``covariance`` is infinite (its
        covariances with the other coefficients zero), and every other coefficient and its
        covariance are those of the load-free fit; ``n_iter`` is 0. No warning is issued:
        without gravity load there is no load-dependent friction for the sweep to show, and the
        fit of every other term is complete.
    torque_sign : {1, -1}, optional
        ``-1`` for a controller that reports the torque with the opposite sign to gravdir's
        (the torque the actuator applies to the distal link about +axis); `torque` is negated
        before the fit. Never guessed: a wrong sign moves the phase by pi.
    nan_policy : {"raise", "omit"}, optional
        ``"raise"`` (default) refuses a NaN in any sample array with an error naming the array.
        ``"omit"`` leaves out every sample that holds a NaN in any of them, sweep by sweep: a
        sweep of a batch loses only its own NaN samples (they become zero rows of its batched
        solve), and the fit equals that of the remaining samples alone; ``n_used`` counts
        them. The residuals' `residual_lag1` pairs only samples next to each other in the
        sweep, under either covariance. Infinities are refused under both.
    covariance : {"white", "hac"}, optional
        The coefficients' covariance. ``"white"`` (default): :math:`\\hat\\sigma^2 (X^\\top
        X)^{-1}`, exact for residuals independent from sample to sample. ``"hac"``: the
        Bartlett sandwich of the per-sample scores, honest when the residuals are correlated
        in time, as those of real drives are; it needs `sample_rate`. Both are unbiased under
        white noise.
    bandwidth : float, optional
        Bandwidth of the Bartlett kernel of ``covariance="hac"``, s (default 1, as
        :func:`gravdir.estimate_up_from_motion`; 0 gives the heteroskedasticity-consistent
        form without lags); shorter than the sweep. Ignored under ``"white"``.
    sample_rate : float, optional
        Samples per second of the sweeps, Hz: counts the kernel's lags (``ceil(bandwidth *
        sample_rate) - 1``; a rate a few percent off moves the covariance by less than that).
        Required by ``covariance="hac"``, ignored (but checked) otherwise. Samples left out
        (slow, NaN) stay in the count: the lags are distances along the sample axis.

    Returns
    -------
    SweepFit
        Amplitude, phase, offset, friction, covariance and residuals of each sweep, and whether
        the solve converged (``converged``, ``n_iter``: always true and 0 for the linear
        solves). A batched fit indexes like an array over its batch axes.

    Raises
    ------
    ValueError
        If an array is not real and numeric (numeric strings included), contains infinity or
        (under ``nan_policy="raise"``) NaN, or the arrays do not share their sample axis or do
        not broadcast; if `q`
        looks like degrees (a position beyond ±4π or a span beyond two turns: the message says
        "degrees?"); if an option is unknown, a number is a string or a bool, or a value lies
        outside its documented range; if ``covariance="hac"`` comes without `sample_rate` or
        with a `bandwidth` not shorter than the sweep; or if a fitted coefficient itself lies
        beyond the float range.
    InsufficientDataError
        If, in any sweep, no sample or too few samples remain after the speed mask (and the
        omitted NaN samples), `acceleration` is zero at every used sample, a direction has no
        samples while friction columns are on, the arc is shorter than `min_arc`, or the
        samples do not determine every coefficient (too few distinct angles, or a harmonic order
        too close to another column: condition number of the equilibrated normal equations
        above 1e13).

    Warns
    -----
    ConvergenceWarning
        If the Gauss-Newton iteration of ``load_friction="abs"`` stops at `max_iter` in any
        sweep.
    GravdirWarning
        If a variance of the coefficients lies outside the normal float range (torques or
        speeds beyond about 1e±150): it is reported as infinite, with zero covariances, never
        as zero.

    See Also
    --------
    fit_sweep_common_mode : forward/backward averaging on a common grid, then a fit.
    amplitude_phase_bound : the Cramér-Rao bound of the same model, before the robot moves.

    Notes
    -----
    The model is linear in its coefficients,
    :math:`\\tau = X\\beta + \\varepsilon` with columns
    :math:`[1, \\sin q, \\cos q, \\mathrm{sgn}\\,v, v, [\\ddot q,] \\dots]`, so one least-squares
    solve gives the maximum-likelihood estimate under white Gaussian noise; no interpolation of
    the forward and backward passes is needed. The inertia column is exact for a single joint
    moving with every other joint locked: the rigid-body torque is then
    :math:`M_{jj} \\ddot q_j + g_j(q)` with :math:`M_{jj}` independent of :math:`q_j`, so no
    Coriolis or centrifugal term (docs/sweep.md). Then :math:`A = \\operatorname{hypot}(a, b)` and
    :math:`\\varphi = \\operatorname{atan2}(b, a)`. The covariance is
    :math:`\\hat\\sigma^2 (X^\\top X)^{-1}`, or under ``covariance="hac"`` the sandwich
    :math:`P \\hat M P` (:math:`P = (X^\\top X)^{-1}`, :math:`\\hat M` the Bartlett long-run
    covariance of the scores :math:`x_t \\hat e_t`, rescaled to be unbiased where the
    residuals are first-order autoregressive with the lag-1 correlation they show, white noise
    included: docs/sweep.md, "Correlated residuals"); amplitude and phase variances follow to
    first order (:attr:`SweepFit.amplitude_phase_covariance`). The solve uses equilibrated
    normal equations, refined once where ill-conditioned; unused samples are zero rows, so
    sweeps with different masks share one batched solve. A sweep whose largest torque or speed
    lies outside :math:`[2^{-100}, 2^{100}]` is fitted in units of a power of two near it (an
    exact scaling, undone on the results), so every finite input gives finite coefficients and
    residuals.

    With ``load_friction="abs"`` the column :math:`\\mathrm{sgn}\\,v\\,|a \\sin q + b \\cos q|`
    depends on :math:`(a, b)`, and Gauss-Newton iterates from the load-free fit with the
    Jacobian :math:`\\sin q\\,(1 + \\mu\\,\\mathrm{sgn}\\,v\\,\\mathrm{sgn}\\,\\tau_g)` for
    :math:`a` (likewise :math:`\\cos q` for :math:`b`) until a step is below 1e-14 of every
    coefficient or changes the fitted torque by less than 1e-14 of its norm (``converged``,
    ``n_iter``); the covariance uses that Jacobian. A sweep whose load-free amplitude is at
    most `load_amplitude_rtol` times the RMS torque skips the iteration: there the load term
    :math:`\\mu\\,\\mathrm{sgn}\\,v\\,|\\tau_g|` is the same for every :math:`\\mu`, which is
    held at zero with infinite variance. (US 11,446,825 B2 states the same rule for the amplitude
    itself, after its Equation 13: an amplitude below a threshold means gravity along the
    joint axis.)

    References
    ----------
    US 11,446,825 B2, FIGS. 3A-3B and the description of method 200 (FIG. 2): the joint is
    swept forward and backward at a substantially constant speed over a predetermined range
    (90° to 180°), and the sinusoidal portion :math:`A \\sin(q + \\varphi)` (Equation 2) is
    separated from friction. Kay (1993), ch. 4 and 8 (linear least squares, its covariance and
    the maximum-likelihood estimate under Gaussian noise). Nocedal & Wright (2006), ch. 10
    (Gauss-Newton, for ``load_friction="abs"``). Armstrong-Hélouvry, Dupont & Canudas de Wit
    (1994) (Coulomb and viscous friction). Derivations in ``docs/sweep.md``.

    Examples
    --------
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> torque = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v)
    >>> fit = fit_sweep(q, velocity=v, torque=torque)
    >>> print(f"{fit.amplitude:.6f} {fit.phase:.6f} {fit.coulomb:.6f} {bool(fit.single_speed)}")
    5.000000 0.400000 0.800000 True

    A batch of sweeps is one call; each entry is the fit of its sweep:

    >>> fits = fit_sweep(np.stack([q, q]), velocity=v, torque=np.stack([torque, 2 * torque]))
    >>> len(fits), f"{fits[1].amplitude:.6f}"
    (2, '10.000000')

    A sweep that accelerates: the inertial torque 0.9 kg·m² times the acceleration joins the
    model, and a NaN sample is left out on request:

    >>> acc = -0.5 * np.sin(3 * q) * np.sign(v)
    >>> torque_acc = torque + 0.9 * acc
    >>> torque_acc[10] = np.nan
    >>> fit = fit_sweep(q, velocity=v, acceleration=acc, torque=torque_acc, nan_policy="omit")
    >>> print(f"{fit.amplitude:.6f} {fit.inertia:.6f} {int(fit.n_used)}")
    5.000000 0.900000 399
    """
    if (
        type(q) is np.ndarray
        and type(torque) is np.ndarray
        and type(velocity) is np.ndarray
        and acceleration is None
        and 1 <= q.ndim <= 2
        and q.dtype == np.float64
        and torque.dtype == np.float64
        and velocity.dtype == np.float64
        and load_friction == "none"
        and (nan_policy == "raise" or nan_policy == "omit")
        and type(harmonics) is tuple
        and not harmonics
        and type(max_iter) is int
        and 1 <= max_iter <= MAX_ITER_CAP
        and type(load_amplitude_rtol) is float
        and 0.0 <= load_amplitude_rtol <= 1.0
        and fast_options(friction, min_speed, min_arc, single_speed_rtol, torque_sign)
        and isinstance(covariance, str)
        and covariance == "white"
        and sample_rate is None
    ):
        # One ordinary sweep or a batch of them, with every option checked above: the validated
        # fast paths, which return None wherever the general path below must decide (and raise).
        fit = fast_path(
            q,
            torque,
            velocity,
            min_speed,
            friction,
            min_arc,
            single_speed_rtol,
            torque_sign,
            nan_policy == "omit",
        )
        if fit is not None:
            warn_correlated(fit, _HAC_REMEDY, stacklevel=2)
            return fit
    qq, tt, vv, aa = check_sweep_inputs(q, torque, velocity, acceleration, finite=False)
    omit = check_nan_policy(nan_policy)
    fingerprint = sample_fingerprints((qq, tt, vv, aa), omit)
    tt = apply_torque_sign(tt, torque_sign)
    if (
        not (isinstance(friction, str) and isinstance(load_friction, str))
        or friction not in FRICTION_OPTIONS
        or load_friction not in LOAD_FRICTION_OPTIONS
    ):
        check_friction_option(friction, "friction", FRICTION_OPTIONS)
        check_friction_option(load_friction, "load_friction", LOAD_FRICTION_OPTIONS)
    orders = check_harmonics(harmonics)
    min_speed = check_min_speed(min_speed)
    min_arc = check_min_arc(min_arc)
    single_speed_rtol = check_rtol(single_speed_rtol, "single_speed_rtol")
    max_iter = check_max_iter(max_iter)
    rtol = check_rtol(load_amplitude_rtol, "load_amplitude_rtol")
    lags = _check_covariance(covariance, bandwidth, sample_rate, qq.shape[-1])
    keep = None
    if omit:
        (qq, tt, vv, aa), keep = omit_nan_samples((qq, tt, vv, aa))
    args = (qq, tt, vv, min_speed, friction, load_friction, orders, min_arc, single_speed_rtol)
    try:
        fit = _fit(*args, max_iter, rtol, aa, keep, fingerprint, lags)
    except FloatingPointError:
        # numpy's default error state ignores underflow, which only rounds towards zero (a sample
        # of 1e-300 beside one of 1); a caller's stricter state would turn it into an error, so
        # the fit is repeated with underflow ignored. (Entering np.errstate on every call would
        # cost a few percent of a single-sweep fit.)
        with np.errstate(under="ignore"):
            fit = _fit(*args, max_iter, rtol, aa, keep, fingerprint, lags)
    if lags is None:
        warn_correlated(fit, _HAC_REMEDY, stacklevel=2)
    return fit


# What a caller of fit_sweep does about residuals correlated in time.
_HAC_REMEDY = "Pass covariance='hac' with `sample_rate`."


def hac_rate(covariance: Any, sample_rate: Any) -> float | None:
    """The checked `sample_rate` of ``covariance="hac"`` (None: the white-noise form, whose
    `sample_rate` is checked but not used)."""
    check_option(covariance, "covariance", COVARIANCE_OPTIONS)
    rate = None if sample_rate is None else check_positive(sample_rate, "sample_rate")
    if covariance == "white":
        return None
    if rate is None:
        raise ValueError(
            "Expected `sample_rate` (Hz) with covariance='hac': the kernel's `bandwidth` is in "
            "seconds, got None."
        )
    return rate


def _check_covariance(covariance: Any, bandwidth: Any, sample_rate: Any, n: int) -> int | None:
    """The largest lag of the Bartlett sandwich, samples (None: the white-noise form)."""
    rate = hac_rate(covariance, sample_rate)
    if rate is None:
        return None
    return series_lags(bandwidth, rate, n, "sweep", f"at {rate:g} Hz (`sample_rate` in Hz?)")


def _fit(
    qq: NDArray[np.float64],
    tt: NDArray[np.float64],
    vv: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    load_friction: str,
    orders: tuple[float, ...],
    min_arc: float,
    single_speed_rtol: float,
    max_iter: int,
    rtol: float,
    aa: NDArray[np.float64] | None = None,
    keep: NDArray[np.bool_] | None = None,
    fingerprint: tuple[frozenset[str], Any] = (frozenset(), None),
    lags: int | None = None,
) -> SweepFit:
    """:func:`fit_sweep` on checked arguments; the result carries `fingerprint` (the fit's
    and each sweep's, from :func:`~gravdir.sweep._nan.sample_fingerprints`), and the Bartlett
    sandwich covariance of largest lag `lags` (None: the white-noise form)."""
    tt, torque_scale, yy = _scaled_torque(tt)
    d = prepare(
        qq, vv, min_speed, friction, load_friction, orders, min_arc, single_speed_rtol, aa, keep, tt
    )
    y, yy = (tt, yy) if d.used is None else (tt * d.used, None)
    names = d.names
    pinned = d.pinned
    # A linear solve converges without iterating.
    converged: Any = True
    n_iter: Any = 0
    rows, resid = d.x, None
    if load_friction == "abs":
        gn = _fit_load_abs(vv, y, d, max_iter, rtol)
        beta, inv_gram, rss, pinned = gn.beta, gn.inv_gram, gn.rss, gn.pinned
        rows, resid = gn.jac, gn.resid
        converged, n_iter = gn.converged, gn.n_iter
        if not converged.ndim:
            converged, n_iter = bool(converged), int(n_iter)
        names = [*names, "load_abs"]
        if not all_(converged):
            warn_not_converged(
                "fit_sweep (load_friction='abs', Gauss-Newton)", max_iter, stacklevel=4
            )
    else:
        beta, inv_gram, rss = solve_normal(d.x, y, d.gram, pinned, yy, d.xty)
        if beta.ndim > 1:
            converged = np.ones(beta.shape[:-1], dtype=bool)
            n_iter = np.zeros(beta.shape[:-1], dtype=np.int64)
    # For one sweep the scalars are Python numbers: 0-d array arithmetic costs several times more.
    n_used = d.n_used if isinstance(d.n_used, np.ndarray) else int(d.n_used)
    n_free = len(names) - (0 if pinned is None else pinned.sum(axis=-1))
    cov, rms = covariance_rms(inv_gram, rss, n_used, n_free)
    if resid is None:
        resid = y - predict(beta, rows)
    lag1 = residual_lag1_of(resid, yy if yy is not None else dot(y, y))
    dof = covariance_dof(n_used, n_free)
    if lags is not None:
        cov, hac_dof = _sandwich(rows, resid, inv_gram, lags)
        dof = np.minimum(hac_dof, dof)
    load: Any = None
    if load_friction == "signed":
        # A ratio of coefficients: the same in scaled units.
        load = _signed_load_coefficient(beta, d.gram, names)
        load = load if load.ndim else load[()]
    scales = (torque_scale, d.velocity_scale, d.acceleration_scale)
    beta, cov, rms = to_caller_units(beta, cov, rms, names, scales, "fit_sweep", 4)
    if load_friction == "abs":
        load = beta[..., -1] if beta.ndim > 1 else beta[-1]
        if pinned is not None:
            # A load coefficient held at zero for want of gravity load: nothing is known of it.
            cov[..., -1, -1] = np.where(pinned[..., -1], np.inf, cov[..., -1, -1])
    return make_fit(
        beta,
        cov,
        names,
        orders,
        load,
        rms,
        lag1,
        dof,
        d.n_used,
        d.single_speed,
        d.arc,
        "least-squares",
        converged,
        n_iter,
        fingerprint,
    )


def _scaled_torque(tt: NDArray[np.float64]) -> tuple[NDArray[np.float64], Any, Any]:
    """`torque` checked finite and, where its magnitude is extreme, in scaled units.

    Returns the torque to fit, the per-sweep scale to undo on the results (1.0: none) and, for a
    batch, ``torque . torque`` where it is already known (None otherwise).
    """
    if tt.ndim == 1:
        # One sweep: the largest magnitude carries any NaN or infinity (every comparison with
        # NaN is false) and gives the scale.
        top = float(np.maximum.reduce(np.abs(tt)))
        if SCALE_LO <= top <= SCALE_HI:
            return tt, 1.0, None
        if not math.isfinite(top):
            refuse_non_finite(tt, "torque")
        scale = pow2_scale(top)
        return (tt, 1.0, None) if scale == 1.0 else (tt / scale, scale, None)
    # A batch: torque . torque is needed for the residuals anyway, and carries any NaN or
    # infinity (squares cannot cancel); only where it is out of range are the extremes needed.
    with np.errstate(over="ignore", under="ignore"):
        yy = dot(tt, tt)
    n = tt.shape[-1]
    # Inside these bounds the largest magnitude of each sweep lies in [SCALE_LO, SCALE_HI].
    if np.all((yy >= n * SCALE_LO**2) & (yy <= SCALE_HI**2)):
        return tt, 1.0, yy
    hi, lo = extreme(np.maximum, tt), extreme(np.minimum, tt)
    if not (all_finite(hi) and all_finite(lo)):
        refuse_non_finite(tt, "torque")
    scale = pow2_scale(np.maximum(hi, -lo))
    if is_unit(scale):
        return tt, 1.0, yy
    return tt / scale[..., None], scale, None


class _GaussNewton(NamedTuple):
    beta: NDArray[np.float64]
    inv_gram: NDArray[np.float64]
    rss: Any
    pinned: NDArray[np.bool_] | None
    converged: NDArray[np.bool_]
    n_iter: NDArray[np.int64]
    jac: NDArray[np.float64]  # the model's derivative at `beta` (..., p + 1, n)
    resid: NDArray[np.float64]  # the residuals at `beta` (..., n)


# The columns of the gravity term, ``a sin q + b cos q``, in every sweep design (`._design`).
_GRAVITY = (1, 2)


def _sandwich(
    rows: NDArray[np.float64],
    resid: NDArray[np.float64],
    inv_gram: NDArray[np.float64],
    lags: int,
) -> tuple[NDArray[np.float64], Any]:
    """The Bartlett sandwich covariance of each sweep of a batch and its degrees of freedom in
    the directions of the gravity term's sine and cosine: design `rows` (..., p, n) (the
    model's derivative), residuals (..., n), inverse Gram matrix (..., p, p)."""
    out = np.empty_like(inv_gram)
    dof = np.empty(resid.shape[:-1])
    for i in np.ndindex(resid.shape[:-1]):
        out[i], dof[i] = least_squares_sandwich(rows[i].T, resid[i], inv_gram[i], lags, _GRAVITY)
    return out, (dof if dof.ndim else float(dof))


def _fit_load_abs(
    v: NDArray[np.float64],
    y: NDArray[np.float64],
    d: Design,
    max_iter: int,
    amplitude_rtol: float,
) -> _GaussNewton:
    """Gauss-Newton for torque = X beta + mu sgn(v) |a sin q + b cos q [+ I acc]|, from the
    load-free fit (the inertial torque I acc is part of the load where an inertia column is).

    Where the load-free amplitude is at most `amplitude_rtol` times the RMS of `y`, mu is pinned
    at zero and the load-free coefficients, inverse Gram matrix and RSS are kept as they are.
    """
    x = d.x
    ii = d.names.index("inertia") if "inertia" in d.names else None
    batch = x.shape[:-2]
    beta0, inv0, rss0 = solve_normal(x, y, d.gram, d.pinned)
    n_used = d.n_used if isinstance(d.n_used, np.ndarray) else int(d.n_used)
    scale2 = dot(y, y) / n_used
    amp2 = beta0[..., 1] ** 2 + beta0[..., 2] ** 2
    negligible = np.asarray(amp2 <= amplitude_rtol**2 * scale2)
    p = beta0.shape[-1]
    pinned = np.zeros(batch + (p + 1,), dtype=bool)
    if d.pinned is not None:
        pinned[..., :p] = d.pinned
    pinned[..., p] = negligible
    beta = np.concatenate([beta0, np.zeros(batch + (1,))], axis=-1)
    inv_gram = np.zeros(batch + (p + 1, p + 1))
    inv_gram[..., :p, :p] = inv0
    # The load-free design, its load column held at zero.
    free = np.concatenate([x, np.zeros_like(x[..., :1, :])], axis=-2)
    if negligible.all():
        converged = np.ones(batch, dtype=bool)
        return _GaussNewton(
            beta, inv_gram, rss0, pinned, converged, np.zeros(batch, np.int64), free,
            y - predict(beta0, x),
        )  # fmt: skip
    if not negligible.any():
        gn_pinned = pinned if d.pinned is not None else None
        gn = _gauss_newton(x, y, v, d.used, beta, gn_pinned, max_iter, ii)
        return gn._replace(pinned=gn_pinned)
    gn = _gauss_newton(x, y, v, d.used, beta, pinned, max_iter, ii)
    # Sweeps without gravity load keep the load-free fit exactly.
    keep = negligible[..., None]
    return _GaussNewton(
        np.where(keep, beta, gn.beta),
        np.where(keep[..., None], inv_gram, gn.inv_gram),
        np.where(negligible, rss0, gn.rss),
        pinned,
        gn.converged | negligible,
        np.where(negligible, 0, gn.n_iter),
        np.where(keep[..., None], free, gn.jac),
        np.where(keep, y - predict(beta0, x), gn.resid),
    )


def _gauss_newton(
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    v: NDArray[np.float64],
    used: NDArray[np.float64] | None,
    beta: NDArray[np.float64],
    pinned: NDArray[np.bool_] | None,
    max_iter: int,
    ii: int | None = None,
) -> _GaussNewton:
    """The Gauss-Newton iteration of the load column from `beta` (its last entry is mu); `ii`
    is the index of the inertia column, whose torque is part of the load (None: no column).

    Returns the coefficients, the inverse Gram matrix of the last Jacobian, the RSS, `pinned`,
    per sweep whether a step met the `_STEP_RTOL` test and after how many steps (`max_iter` if
    not), and the Jacobian and the residuals at the coefficients returned.
    """
    batch = beta.shape[:-1]
    sgn = np.sign(v) if used is None else np.sign(v) * used
    still = _STEP_RTOL**2 * dot(y, y)
    model = np.concatenate([x, np.empty_like(x[..., :1, :])], axis=-2)
    jac = model.copy()
    inv_gram = np.zeros(beta.shape + beta.shape[-1:])
    converged = np.zeros(batch, dtype=bool)
    n_iter = np.full(batch, max_iter, dtype=np.int64)
    for it in range(1, max_iter + 1):
        _load_jacobian(beta, x, sgn, ii, model, jac)
        resid = y - predict(beta, model)
        rss = dot(resid, resid)
        step, inv_step, _ = solve_normal(jac, resid, None, pinned)
        if converged.any():
            # A sweep of a batch that has converged stays where it stopped, with the Jacobian
            # it stopped with, exactly as if it had been fitted alone.
            step = np.where(converged[..., None], 0.0, step)
            inv_gram = np.where(converged[..., None, None], inv_gram, inv_step)
        else:
            inv_gram = inv_step
        step, rss_new = _backtrack(beta, step, rss, x, y, sgn, ii)
        beta = beta + step
        change = predict(step, jac)
        small = np.all(np.abs(step) <= _STEP_RTOL * (1.0 + np.abs(beta)), axis=-1)
        small |= dot(change, change) <= still
        # At a kink the line search creeps towards it in ever smaller steps that lower the
        # residual by nothing that matters: stop when a step gains less than _RSS_SLACK of it.
        small |= np.asarray(rss - rss_new <= _RSS_SLACK * rss)
        n_iter = np.where(small & ~converged, it, n_iter)
        converged = converged | small
        if converged.all():
            break
    _load_jacobian(beta, x, sgn, ii, model, jac)
    resid = y - predict(beta, model)
    return _GaussNewton(beta, inv_gram, dot(resid, resid), pinned, converged, n_iter, jac, resid)


def _load_jacobian(
    beta: NDArray[np.float64],
    x: NDArray[np.float64],
    sgn: Any,
    ii: int | None,
    model: NDArray[np.float64],
    jac: NDArray[np.float64],
) -> None:
    """Fill the load column of `model` and the Jacobian `jac` (both (..., p + 1, n)) at `beta`."""
    tg = _load_torque(beta, x, ii)
    model[..., -1, :] = sgn * np.abs(tg)
    # d/da of mu sgn(v)|tg| is mu sgn(v) sgn(tg) sin q (likewise for b and I).
    jac[...] = model
    factor = 1 + beta[..., -1:] * sgn * np.sign(tg)
    jac[..., 1, :] *= factor
    jac[..., 2, :] *= factor
    if ii is not None:
        jac[..., ii, :] *= factor


def _load_torque(
    beta: NDArray[np.float64], x: NDArray[np.float64], ii: int | None
) -> NDArray[np.float64]:
    """The torque the load friction grows with: ``a sin q + b cos q`` [``+ I acc``]."""
    tg = beta[..., 1:2] * x[..., 1, :] + beta[..., 2:3] * x[..., 2, :]
    if ii is not None:
        tg = tg + beta[..., ii : ii + 1] * x[..., ii, :]
    return tg


def _load_rss(
    beta: NDArray[np.float64],
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    sgn: Any,
    ii: int | None = None,
) -> Any:
    """The residual sum of squares of ``X beta[:-1] + mu sgn(v) |load torque|``."""
    tg = _load_torque(beta, x, ii)
    resid = y - predict(beta[..., :-1], x) - beta[..., -1:] * sgn * np.abs(tg)
    return dot(resid, resid)


def _backtrack(
    beta: NDArray[np.float64],
    step: NDArray[np.float64],
    rss: Any,
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    sgn: Any,
    ii: int | None = None,
) -> tuple[NDArray[np.float64], Any]:
    """`step`, halved for each sweep until it does not raise that sweep's residual, and the
    residual sum of squares after it.

    The load column is not differentiable where the gravity torque of a sample changes sign: a
    full Gauss-Newton step can jump across such a kink and back, forever. Halving a step that
    raises the residual (a backtracking line search, Nocedal & Wright 2006, ch. 3) makes the
    residual non-increasing, so the iteration settles at the kink; a step still raising it after
    `_MAX_HALVINGS` halvings is dropped (zero).
    """
    # Rounding of the sums lets an exact step appear to raise the residual by a few ulps.
    limit = rss * (1.0 + _RSS_SLACK)
    scale = np.ones(step.shape[:-1] + (1,))
    for halvings in range(_MAX_HALVINGS + 1):
        rss_new = _load_rss(beta + scale * step, x, y, sgn, ii)
        worse = np.asarray(rss_new > limit)
        if not worse.any():
            return (step if halvings == 0 else scale * step), rss_new
        scale = np.where(worse[..., None], 0.5 * scale, scale)
    return np.where(worse[..., None], 0.0, scale) * step, np.where(worse, rss, rss_new)


def _signed_load_coefficient(
    beta: NDArray[np.float64], gram: NDArray[np.float64], names: list[str]
) -> NDArray[np.float64]:
    """mu from the signed load columns.

    sgn(v)(d sin q + e cos q) = mu sgn(v)|tau_g| with tau_g = a sin q + b cos q of one sign s over
    the arc gives (d, e) = mu s (a, b), so mu = s (d a + e b) / A^2; s is the sign of the sum of
    tau_g over the used samples, a G[0, 1] + b G[0, 2].
    """
    a, b = beta[..., 1], beta[..., 2]
    d, e = beta[..., names.index("load_sin")], beta[..., names.index("load_cos")]
    side = np.sign(a * gram[..., 0, 1] + b * gram[..., 0, 2])
    amp2 = a * a + b * b
    safe = np.where(amp2 > 0, amp2, 1.0)
    out: NDArray[np.float64] = np.where(amp2 > 0, side * (d * a + e * b) / safe, 0.0)
    return out
