"""estimate_up_from_motion: `up` by maximum likelihood from a log of ordinary motion."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, check_count, check_positive
from gravdir._constants import STANDARD_GRAVITY
from gravdir._hac import (
    CORRELATED_TIME,
    DEFAULT_BANDWIDTH,
    ROUNDING,
    autocorrelation_time,
    covariance_dof,
)
from gravdir._options import CovarianceOption, Friction, LoadFriction
from gravdir._results import data_fingerprint, warn_not_converged
from gravdir._sphere import tangent_basis, up_information_from_tangent
from gravdir._threads import one_blas_thread
from gravdir.dynamics import BaseParameters, base_parameters
from gravdir.errors import GravdirWarning
from gravdir.kinematics import SerialChain
from gravdir.motion._design import Layout, _Design, build_design, gain_basis
from gravdir.motion._fit import MotionFit, combine
from gravdir.motion._inputs import (
    DEFAULT_MIN_SPEED,
    DEFAULT_SPEED_TAPER,
    check_base_acceleration,
    check_chain,
)
from gravdir.motion._load import load_is_significant, load_sign, model_torque, rigid_torque
from gravdir.motion._profile import (
    NOISE_FLOOR,
    Optimum,
    _Search,
    maximise_likelihood,
    uncertainty,
)
from gravdir.motion._ripple import (
    detect_ripple,
    ripple_rows,
    ripple_torque,
)
from gravdir.motion._samples import (
    DEFAULT_DERIVATIVE_WINDOW,
    Samples,
    check_arrays,
    check_covariance,
    check_identifiable,
    check_model,
    select_samples,
)
from gravdir.motion._sandwich import hac_uncertainty

__all__ = ["estimate_up_from_motion"]


# The sign of `up` counts as decided when the best fit on the other hemisphere is worse by at
# least this many standard deviations (square root of twice the log-likelihood ratio).
SIGN_SIGMAS = 5.0
_MAX_GRID = 100_000
_MAX_STARTS = 50
_MAX_ITER = 10_000
# Cap on the ripple components looked for per joint (each is one more periodogram and fit).
_MAX_RIPPLE = 20


def estimate_up_from_motion(
    chain: SerialChain,
    time: ArrayLike,
    *,
    q: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike | None = None,
    torque: ArrayLike,
    base_acceleration: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    derivative_window: float = DEFAULT_DERIVATIVE_WINDOW,
    noise_std: ArrayLike | None = None,
    gains: ArrayLike | Literal["estimate"] = "estimate",
    friction: Friction = "coulomb-viscous",
    load_friction: LoadFriction = "auto",
    ripple_components: int = 2,
    gravity: float = STANDARD_GRAVITY,
    min_speed: float = DEFAULT_MIN_SPEED,
    speed_taper: float = DEFAULT_SPEED_TAPER,
    torque_limits: ArrayLike | None = None,
    nan_policy: NanPolicy = "raise",
    covariance: CovarianceOption = "white",
    bandwidth: float = DEFAULT_BANDWIDTH,
    n_grid: int = 400,
    n_starts: int = 6,
    max_iter: int = 200,
    xtol: float = 1e-10,
) -> MotionFit:
    """Estimate `up` from logged joint positions, velocities and torques of ordinary motion.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics (:func:`~gravdir.urdf.chain_from_urdf`, ...), at most 12 joints.
        Its inertial parameters are not needed: they are estimated.
    time : array_like, shape (N,)
        Sample times, s, finite and strictly increasing (jitter and gaps allowed: the
        derivative of `velocity` is taken on these stamps and never across a gap). A uniformly
        sampled log passes ``np.arange(N) / rate``.
    q : array_like, shape (N, n)
        Logged joint positions, rad (within ±4π); keyword-only, as the series that follow (an
        old call ``estimate_up_from_motion(chain, q, velocity=...)`` fails with ``TypeError``:
        `q` is missing).
    velocity : array_like, shape (N, n)
        Logged joint velocities, rad/s.
    acceleration : array_like, shape (N, n), optional
        Joint accelerations, rad/s². Default: the Savitzky--Golay derivative of `velocity` on
        the stamps of `time` (a cubic over `derivative_window`,
        :func:`gravdir.sweep.joint_acceleration`), taken on each stretch between gaps (intervals
        longer than twice the median) on its own; the samples within half a window of a
        stretch's ends, and stretches shorter than the window, are then left out (the *Motion*
        page: "Time stamps and the derivative rule").
    torque : array_like, shape (N, n)
        Logged joint torques (sign convention of the Conventions page), any unit shared by
        the joints up to a per-joint gain.
    base_acceleration : array_like, shape (3,) or (N, 3), optional
        The base's own linear acceleration in the base frame, m/s² (a mobile platform); the
        estimator sees gravity plus this. Without it an accelerating base shows as apparent
        gravity, about 0.6° per 0.1 m/s² of horizontal acceleration.
    weights : array_like, shape (N,) or (N, n), optional
        Weights in [0, 1] of the samples or of each joint's samples: 0 leaves out a contact
        phase, values between down-weight it.
    derivative_window : float, optional
        Window of that derivative, s, positive (default 0.2; its accuracy against noise is on
        the *Motion* page).
    noise_std : float or array_like, shape (n,), optional
        Torque noise per joint. Default: estimated with the other parameters (maximum
        likelihood with a noise level per joint).
    gains : "estimate" or array_like, shape (n,)
        ``"estimate"`` (default): per-joint torque gains are estimated with their mean fixed at
        1 (the direction does not depend on a common scale). An array fixes them.
    friction : {"coulomb-viscous", "coulomb-viscous-quadratic", "coulomb", "none"}, optional
        The friction fitted per joint: ``"coulomb-viscous"`` (default) fits Coulomb and viscous
        friction, ``"coulomb-viscous-quadratic"`` also the quadratic term
        :math:`f_q \\dot q |\\dot q|` (friction that is not linear in the speed beyond its
        Coulomb step), ``"coulomb"`` Coulomb friction only, ``"none"``
        neither; armature and offset always are. ``"auto"`` (the sweep functions' choice for a
        sweep at one speed) is refused.
    load_friction : {"auto", "abs", "none"}, optional
        The friction that grows with the load, :math:`\\mu_j |r_j| \\operatorname{sign}
        \\dot q_j` (:math:`r_j` the joint's rigid-body torque, :math:`\\mu_j` dimensionless;
        the sign of :math:`r_j` taken from :math:`r_j + J_j \\ddot q_j`, see
        `MotionFit.load_coefficient`), per joint: ``"auto"`` (default) fits it and keeps it
        where a likelihood-ratio test finds it, ``"abs"`` keeps it, ``"none"`` does not fit
        it. ``"abs"`` needs ``gains="estimate"``; ``"auto"`` with `gains` given does not fit
        it. (``"signed"``, the column pair of a sweep, is refused.) Method, cost and effect:
        *Motion* page.
    ripple_components : int, optional
        Gear-ripple components looked for per joint, 0 to 20 (default 2; 0 looks for none):
        torques periodic in the joint angle with an order between 50 and 2000 cycles per
        revolution (a harmonic drive's gear ratio and its multiples), found in the residuals,
        each kept at a false-alarm probability of 1e-3 per joint, and removed from the logged
        torque before the fit is repeated. Method and effect: *Motion* page.
    gravity : float, optional
        m/s², default standard gravity.
    min_speed : float, optional
        A joint's samples slower than this, rad/s, are left out of its own torque equation
        (Coulomb friction switches and drives stick there); default 0.02. 0 keeps all.
    speed_taper : float, optional
        Below this speed, rad/s, a joint's samples are down-weighted smoothly, with the weight
        :math:`3x^2 - 2x^3` of :math:`x = |\\dot q| / v_\\text{taper}` (default 0.2; 0 weights
        every sample above `min_speed` fully). A hard cut-off at low speed turns what the model
        leaves out near a reversal (a ripple below the detection threshold, friction unlike the
        Coulomb-plus-viscous model) into a bias of `up`; the smooth weight averages it out. The
        covariance accounts for the weights (a sandwich estimate), so it stays honest.
    torque_limits : float or array_like, shape (n,), optional
        A joint's samples at or above this absolute logged torque (saturation) are left out of
        its equation.
    nan_policy : {"raise", "omit"}, optional
        ``"omit"`` drops every sample holding a NaN (counted in `n_omitted`).
    covariance : {"white", "hac"}, optional
        How `up_information` and `gains_std` are computed. ``"white"`` (default): from the
        curvature of the likelihood, which treats the torque residuals as white noise (with
        fractional weights, the sandwich of the weighted estimate). ``"hac"``: the sandwich
        :math:`P M P` with :math:`M` the Bartlett long-run covariance of the per-sample scores
        of every parameter and joint at once, honest where the residuals are correlated in
        time (real drives: the *Real logs* page); its lags are counted at the reciprocal of
        the median interval of `time`.
    bandwidth : float, optional
        Bandwidth of the Bartlett kernel of ``covariance="hac"``, s (default 1; 0 gives the
        heteroskedasticity-consistent form without lags); shorter than the log.
    n_grid : int, optional
        Points of the Fibonacci grid of starting directions (default 400, at most 100000).
    n_starts : int, optional
        Lowest grid points refined (default 6, at most 50), plus the best point of the other
        hemisphere for the sign check.
    max_iter : int, optional
        Gauss--Newton iterations per refinement (default 200, at most 10000).
    xtol : float, optional
        Step tolerance of the refinement, rad (and gain units); default 1e-10. A search whose
        steps stop shrinking below 1e-7 (the rounding level of the data) has also converged.

    Returns
    -------
    MotionFit
        `up`, its information, the gains, the identified parameters and the diagnostics.

    Raises
    ------
    ValueError
        If an argument has the wrong type, shape or range (named in the message), `time` is not
        finite and strictly increasing (the message names the first row that is not), a 2-D
        `time` is passed (joint angles in the old first place: `q` is keyword-only), or `chain`
        has more than 12 joints (the work of the search grows with the cube of the joints).
    InsufficientDataError
        If fewer samples remain than parameters to estimate, or (`acceleration` not given) no
        stretch of `time` between gaps is longer than `derivative_window`.
    DegenerateGeometryError
        If the log does not determine the direction (a joint that never moves can leave it
        undetermined: the information of a tangent direction vanishes), naming `q` and
        `velocity`.

    Warns
    -----
    GravdirWarning
        If the sign of `up` is weakly determined (``sign_margin < 5``), or if the likelihood
        reaches far beyond the curvature at the estimate (``up_determined`` False; the
        information is then zero and the gains' standard deviations infinite).
    ConvergenceWarning
        If the refinement stops at `max_iter`.

    Notes
    -----
    Logged torque of joint ``j``: :math:`\\tau_j = k_j (Y(q, \\dot q, \\ddot q, a_0) \\pi)_j +
    J_j \\ddot q_j + F_{c,j} \\operatorname{sign}\\dot q_j + F_{v,j} \\dot q_j + \\tau_{0,j} +
    e_j` with :math:`a_0 = g\\,\\mathrm{up} + a_\\text{base}` and :math:`e_j \\sim
    N(0, \\sigma_j^2)`. The regressor is linear in :math:`a_0`, so the torques are linear in
    the base parameters and joint parameters for fixed `up` and gains: they are solved out
    (variable projection) from per-joint Gram blocks formed once, and the search runs over the
    sphere and the ``n - 1`` free gains. The sign of `up` is fixed by the dynamics: the
    inertial torques of positive masses and inertias distinguish :math:`(\\mathrm{up}, \\pi)`
    from :math:`(-\\mathrm{up}, -\\pi)`. What the log does not determine gets no information;
    a grid direction that fits within the likelihood's three-sigma level where the curvature
    puts it beyond 4.2 standard deviations sets ``up_determined`` False. Derivation, data
    selection and accuracy are on the *Motion* page.

    References
    ----------
    G. H. Golub and V. Pereyra, "The differentiation of pseudo-inverses and nonlinear least
    squares problems whose variables separate", *SIAM J. Numer. Anal.* 10(2) (1973) 413--432;
    M. Gautier and W. Khalil, "Exciting trajectories for the identification of base inertial
    parameters of robots", *Int. J. Robot. Res.* 11(4) (1992) 362--375; S. M. Kay (1993),
    ch. 3.

    Examples
    --------
    A three-joint arm on a base tilted by 10°, torque gains off by ±10%, noise-free torques from
    the regressor itself:

    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.dynamics import inverse_dynamics_regressor
    >>> chain = chain_from_dh([0.1, 0.05, 0.0], [0.0, 0.2, 0.1], [0.05, 0.4, 0.3],
    ...                       [np.pi / 2, 0.3, -np.pi / 2])
    >>> t = np.linspace(0.0, 10.0, 2001)[:, None]
    >>> w = np.array([0.9, 1.3, 1.7])
    >>> q, qd, qdd = np.sin(w * t), w * np.cos(w * t), -w**2 * np.sin(w * t)
    >>> pi = np.tile([2.0, 0.3, 0.1, 0.05, 0.2, 0.01, 0.25, 0.0, 0.02, 0.1], 3)
    >>> up = np.array([np.sin(0.17), 0.0, np.cos(0.17)])
    >>> tau = inverse_dynamics_regressor(chain, q, qd, qdd, up=up) @ pi
    >>> est = estimate_up_from_motion(chain, t[:, 0], q=q, velocity=qd, acceleration=qdd,
    ...                               torque=tau * [1.1, 0.9, 1.0])
    >>> bool(np.linalg.norm(est.up - up) < 1e-9), est.gains.round(6).tolist()
    (True, [1.1, 0.9, 1.0])
    """
    chain = check_chain(chain)
    n = chain.n_joints
    log = check_arrays(n, time, q, velocity, torque, acceleration, derivative_window, nan_policy)
    model = Settings.check(
        n, noise_std, gains, friction, load_friction, ripple_components, gravity, n_grid,
        n_starts, max_iter, xtol, base_acceleration=(base_acceleration, log.q.shape[0]),
    )  # fmt: skip
    lags = check_covariance(covariance, bandwidth, log.time)
    samples = select_samples(
        log, model.base_acceleration, min_speed, speed_taper, torque_limits, weights
    )
    return estimate(chain, samples, model, lags)


class Settings(NamedTuple):
    """The checked model and search settings of :func:`estimate_up_from_motion`."""

    sigma_given: NDArray[np.float64] | None
    fixed_gains: NDArray[np.float64] | None
    mask: NDArray[np.bool_]
    load_friction: LoadFriction
    n_ripple: int
    gravity: float
    search: _Search
    base_acceleration: NDArray[np.float64] | None

    @classmethod
    def check(
        cls,
        n: int,
        noise_std: ArrayLike | None,
        gains: ArrayLike | Literal["estimate"],
        friction: Friction,
        load_friction: LoadFriction,
        ripple_components: int,
        gravity: float,
        n_grid: int,
        n_starts: int,
        max_iter: int,
        xtol: float,
        base_acceleration: tuple[ArrayLike | None, int] = (None, 0),
    ) -> Settings:
        """The settings checked, in the order of the estimator's arguments; a base
        acceleration given with its log's length (None: given with the samples)."""
        sigma_given, fixed_gains, mask = check_model(n, noise_std, gains, friction, load_friction)
        acc_base = check_base_acceleration(*base_acceleration)
        g = check_positive(gravity, "gravity")
        search = _Search(
            check_count(n_grid, "n_grid", maximum=_MAX_GRID),
            check_count(n_starts, "n_starts", maximum=_MAX_STARTS),
            check_count(max_iter, "max_iter", maximum=_MAX_ITER),
            check_positive(xtol, "xtol"),
        )
        n_ripple = check_count(
            ripple_components, "ripple_components", minimum=0, maximum=_MAX_RIPPLE
        )
        return cls(sigma_given, fixed_gains, mask, load_friction, n_ripple, g, search, acc_base)


def estimate(chain: SerialChain, samples: Samples, model: Settings, lags: int | None) -> MotionFit:
    """The estimate from the checked, selected samples of a log (in memory or read in chunks)."""
    fixed_gains, search, n_ripple = model.fixed_gains, model.search, model.n_ripple
    load_friction, n = model.load_friction, chain.n_joints
    base = base_parameters(chain)
    n_used, unit = check_identifiable(samples, base, model.mask, fixed_gains is None)
    problem = _Problem(
        chain, base, samples, model.gravity, model.mask, unit, fixed_gains, model.sigma_given,
        search, n_used, data_fingerprint(samples.torque), lags,
    )  # fmt: skip
    # Sums of tiny regressor products may underflow to zero: harmless. BLAS on one thread
    # (gravdir._threads), inside the body so that the warnings' stack levels stay the caller's.
    with np.errstate(under="ignore"), one_blas_thread():
        design = problem.design(samples.torque)
        plain = problem.fit(design)
        if not plain.fit.up_determined:
            # The refinements below start from this `up`: with no direction to start from, the
            # fit is returned as it is, with its warning.
            return _warn(_diagnose(problem, plain.fit), search.max_iter)
        plain, ripple, design = _remove_ripple(problem, plain, design, n_ripple)
        free = None
        if fixed_gains is None:
            plain, free = _hold_weak_gains(problem, plain, design, ripple)
        if load_friction != "none" and fixed_gains is None and plain.fit.up_determined:
            pseudo, rows = _fit_load_friction(problem, plain.fit, free, ripple, n_ripple)
            if load_friction != "auto" or load_is_significant(
                plain.fit.n_used, plain.fit.residual_rms, combine(pseudo.fit, n, rows).residual_rms
            ):
                est = combine(problem.finish(pseudo), n, rows)
                return _warn(_diagnose(problem, est), search.max_iter)
        return _warn(_diagnose(problem, problem.finish(plain)), search.max_iter)


class _Fitted(NamedTuple):
    """A fit with what its uncertainty was computed from."""

    fit: MotionFit
    design: _Design
    layout: Layout
    dirs: NDArray[np.float64]
    optimum: Optimum
    mean_gain: float


@dataclasses.dataclass(frozen=True)
class _Problem:
    """A checked log and the settings of its fits: the design of any torques and the fit of any
    design, in the log's torque units."""

    chain: SerialChain
    base: BaseParameters
    samples: Samples
    gravity: float
    mask: NDArray[np.bool_]  # joint parameters fitted: armature, Coulomb, viscous, offset
    unit: float  # the largest torque used: the designs are of torques in this unit
    fixed_gains: NDArray[np.float64] | None
    sigma_given: NDArray[np.float64] | None
    search: _Search
    n_used: NDArray[np.int64]
    fingerprint: frozenset[str]
    lags: int | None  # the Bartlett sandwich's largest lag, samples (None: white noise)

    def design(
        self,
        torque: NDArray[np.float64],
        weights: NDArray[np.float64] | None = None,
        driving: NDArray[np.bool_] | None = None,
    ) -> _Design:
        """The Gram blocks of `torque` (default weights those of the samples; `driving` splits
        each joint into its driving and braking samples)."""
        s = self.samples
        w = s.weights if weights is None else weights
        args = (self.chain, self.base, s.q, s.velocity, s.acceleration, w, torque / self.unit)
        if driving is None:
            return build_design(*args, s.base_acceleration, self.gravity, self.mask)
        return build_design(*args, s.base_acceleration, self.gravity, self.mask, driving)

    def fit(self, design: _Design, free: NDArray[np.bool_] | None = None) -> _Fitted:
        """The maximum-likelihood fit of `design` (`free`: the gains estimated, default all)."""
        sigma = None if self.sigma_given is None else self.sigma_given / self.unit
        return _fit(
            design, self.chain, self.fixed_gains, sigma, self.search, self.n_used,
            self.samples.n_omitted, self.fingerprint, self.unit, free=free,
        )  # fmt: skip

    def finish(self, fitted: _Fitted) -> MotionFit:
        """The returned estimate: with the Bartlett sandwich covariance unless the white-noise
        form was asked for, or the log does not determine `up` (nothing to make honest).

        The sign margin is a likelihood ratio of the white-noise likelihood; where the sandwich
        says the spread is ``kappa`` times the white form's variance, that ratio is about
        ``kappa`` times too large, so the margin is divided by ``sqrt(kappa)`` (never made larger).
        """
        est = fitted.fit
        if self.lags is None or not est.up_determined or not np.any(est.up_information):
            return est
        hac = hac_uncertainty(fitted.design, fitted.layout, fitted.dirs, fitted.optimum, self.lags)
        if hac is None:  # residuals at the rounding level: the curvature's form stands
            return est
        info = up_information_from_tangent(est.up, tangent_basis(est.up), hac.up_information)
        out = dataclasses.replace(
            est,
            up_information=info,
            gains_std=hac.gains_std * fitted.mean_gain,
            covariance_dof=hac.dof,
        )
        ratio = max(out.up_std_deg / est.up_std_deg, 1.0)
        margin = est.sign_margin / ratio
        return dataclasses.replace(
            out, sign_margin=margin, sign_determined=bool(margin >= SIGN_SIGMAS)
        )


def _remove_ripple(
    problem: _Problem, plain: _Fitted, design: _Design, n_ripple: int
) -> tuple[_Fitted, NDArray[np.float64], _Design]:
    """Gear ripple found in the residuals of `plain` (the fit of `design`), removed from the
    torques, and the fit repeated; the ripple's rows (joint, order, a, b) of
    ``a sin(k q) + b cos(k q)`` and the design of the torques without it."""
    s = problem.samples
    ripple = np.zeros((0, 4))
    if n_ripple:
        with np.errstate(over="ignore", invalid="ignore"):  # a joint that overflows is skipped
            model = model_torque(plain.fit, s.q, s.velocity, s.acceleration, s.base_acceleration)
            resid = s.torque - model
        ripple = detect_ripple(s.q, resid, s.weights > 0, n_ripple)
        if ripple.size:
            design = problem.design(s.torque - ripple_torque(s.q, ripple))
            plain = problem.fit(design)
            plain = plain._replace(fit=dataclasses.replace(plain.fit, ripple=ripple_rows(ripple)))
    return plain, ripple, design


def _hold_weak_gains(
    problem: _Problem, plain: _Fitted, design: _Design, ripple: NDArray[np.float64]
) -> tuple[_Fitted, NDArray[np.bool_] | None]:
    """The fit with the gains of weak joints held, and which gains are free (None: all).

    A joint whose rigid-body torque is lost in its noise (a tool flange turning about its own
    axis) does not identify its gain, and a free gain there lets the base parameters grow to fit
    that joint's friction and ripple: such gains are held at the mean of the others.
    """
    s, unit = problem.samples, problem.unit
    used = s.weights > 0
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is a strong joint
        rigid = rigid_torque(plain.fit, s.q, s.velocity, s.acceleration, s.base_acceleration)
        rigid = rigid / unit
        power = np.sum(np.where(used, rigid, 0.0) ** 2, axis=0) / np.maximum(problem.n_used, 1)
    free = ~(np.sqrt(power) < _GAIN_SNR * plain.fit.noise_std / unit)
    if free.all() or not free.any():
        return plain, None
    plain = problem.fit(design, free=free)
    return plain._replace(fit=dataclasses.replace(plain.fit, ripple=ripple_rows(ripple))), free


def _fit_load_friction(
    problem: _Problem,
    plain: MotionFit,
    free: NDArray[np.bool_] | None,
    ripple: NDArray[np.float64],
    n_ripple: int,
) -> tuple[_Fitted, NDArray[np.float64]]:
    """The fit with load friction, in passes that start from `plain`: the last pass's fit of
    the pseudo-joints and the ripple rows, which :func:`combine` turns into the estimate.

    Load friction mu s r with s = sign(r + J qdd) sign(qd) is a gain k (1 + mu s) on
    the rigid-body torque r. Each joint becomes two pseudo-joints, the samples where the drive
    drives (s > 0) and where it brakes, each with its gain and noise level, both with the
    joint's armature, friction and offset; the sign pattern comes from the previous estimate (it
    is wrong only where r crosses zero, where the term vanishes).
    """
    s, mask, n = problem.samples, problem.mask, problem.chain.n_joints
    qq, qd, qdd, acc_base, tau = s.q, s.velocity, s.acceleration, s.base_acceleration, s.torque
    used = s.weights > 0
    sigma_given = problem.sigma_given
    est = plain
    last: _Fitted | None = None
    # The passes start near the answer: a coarser grid of starts is enough.
    search = problem.search
    load_search = dataclasses.replace(
        search, n_grid=min(search.n_grid, 100), n_starts=min(search.n_starts, 2)
    )
    for clearance in _SIGN_CLEARANCE:
        # The previous pass's design is no longer needed: its memory is freed first (a long
        # log's per-sample arrays are what the estimator's memory is made of).
        last = None
        rigid = rigid_torque(est, qq, qd, qdd, acc_base)
        # The sign pattern and the clearance are read from the rigid-body torque plus the
        # armature's, whose sum does not depend on the frame of the base (module _load).
        load = rigid + est.joint_parameters[:, 0] * qdd
        driving = load_sign(rigid, est.joint_parameters[:, 0], qd, qdd) > 0
        if n_ripple:
            # The ripple found again in this estimate's residuals, which no longer carry the
            # load friction that a fit without it leaves there.
            with np.errstate(over="ignore", invalid="ignore"):
                resid = tau - model_torque(est, qq, qd, qdd, acc_base, rigid=rigid)
                resid += ripple_torque(qq, ripple)
            ripple = detect_ripple(qq, resid, used, n_ripple)
            del resid
        del rigid
        clean = tau - ripple_torque(qq, ripple)
        # Where the rigid-body torque is within a few per cent of its largest value, its sign
        # is uncertain (an error of `up` moves it by about that): those samples are left out
        # of the split fit; the load term is small there anyway.
        np.abs(load, out=load)
        clear = load >= clearance * np.max(load * used, axis=0)
        del load
        w_split = np.where(clear, s.weights, 0.0)
        kept = w_split > 0
        split = problem.design(clean, w_split, driving)
        del clean, w_split
        counts = np.concatenate([(kept & driving).sum(0), (kept & ~driving).sum(0)])
        pseudo_free = counts > int(mask.sum()) + 1
        if free is not None:
            pseudo_free &= np.concatenate([free, free])
        sigma2 = None if sigma_given is None else np.concatenate([sigma_given] * 2) / problem.unit
        last = _fit(
            split, problem.chain, None, sigma2, load_search, counts, s.n_omitted,
            problem.fingerprint, problem.unit, free=None if pseudo_free.all() else pseudo_free,
        )  # fmt: skip
        del split  # held by `last` alone, freed at the next pass
        previous, est = est, combine(last.fit, n, ripple_rows(ripple))
        if float(np.arccos(np.clip(previous.up @ est.up, -1.0, 1.0))) <= _LOAD_XTOL:
            break
    assert last is not None
    return last, est.ripple


def _diagnose(problem: _Problem, est: MotionFit) -> MotionFit:
    """`est` with the lag-1 autocorrelation and the effective samples of its residuals; under
    the white-noise covariance, a warning where they are visibly correlated in time."""
    s = problem.samples
    with np.errstate(over="ignore", invalid="ignore"):  # a joint beyond the floats is inf
        resid = s.torque - model_torque(est, s.q, s.velocity, s.acceleration, s.base_acceleration)
    used = (s.weights > 0) & np.isfinite(resid)
    lag1, tau = autocorrelation_time(np.where(used, resid, 0.0) / problem.unit, used)
    # The model's columns: base parameters, each joint's five and its gain, the two of `up`.
    columns = est.base_parameters.size + 6 * est.gains.size + 2
    # The white form's residual degrees of freedom; the sandwich's (set by `finish`) at most.
    dof = float(covariance_dof(int(np.sum(est.n_used)), columns))
    est = dataclasses.replace(
        est, residual_lag1=lag1, effective_samples=est.n_used / tau,
        covariance_dof=min(est.covariance_dof, dof) if problem.lags is not None else dof,
    )  # fmt: skip
    # A fit to a part in a million (a noise-free log) leaves rounding, whatever its correlation.
    with np.errstate(over="ignore", invalid="ignore"):  # an unused sample may exceed the unit
        torque = np.where(used, s.torque / problem.unit, 0.0)  # at most 1 where used
    scale = np.sqrt(np.sum(torque**2, axis=0) / np.maximum(est.n_used, 1))
    visible = (tau > CORRELATED_TIME) & (est.residual_rms / problem.unit > ROUNDING * scale)
    if problem.lags is None and np.any(visible):
        j = int(np.argmax(np.where(visible, tau, 0.0)))
        warnings.warn(
            f"The torque residuals are correlated in time: joint {j + 1}'s are worth "
            f"{est.effective_samples[j]:.0f} independent samples of {est.n_used[j]} (lag-1 "
            f"autocorrelation {est.residual_lag1[j]:.2f}), so the white-noise covariance "
            "understates the spread of `up`. Pass covariance='hac'; the "
            "Real logs page says what else to check.",
            GravdirWarning,
            stacklevel=4,
        )
    return est


def _refuse_collapsed_gains(est: MotionFit) -> tuple[MotionFit, bool]:
    """The estimate, made undetermined with a warning where it was determined and an estimated
    gain fell below :data:`_MIN_PLAUSIBLE_GAIN` of their mean; and whether it did.

    The gains trade against the model's torque scale (the base parameters grow as one over a
    gain), so a fit can lower the gains of the joints that carry gravity towards zero, another
    joint's towards the bound the mean sets, and fit a torque of any shape with `up` anywhere:
    a degenerate optimum, whose curvature still looks confident.
    """
    estimated = est.gains_std > 0
    low = estimated & (est.gains < _MIN_PLAUSIBLE_GAIN * float(np.mean(est.gains)))
    if not est.up_determined or not np.any(low):
        # An undetermined estimate already says so (its own warning).
        return est, False
    joints = (np.flatnonzero(low) + 1).tolist()
    warnings.warn(
        f"The fitted gains collapse: joints {joints} (1-based) came out at "
        f"{np.array2string(est.gains[low], precision=3)} of the mean gain, below "
        f"{_MIN_PLAUSIBLE_GAIN:g}: the model's torque scale has traded against `up`, and `up` "
        "is reported undetermined. Give the gains (`gains=`, from the drive's torque constants) "
        "or log motion that reverses every joint.",
        GravdirWarning,
        stacklevel=5,
    )
    flagged = dataclasses.replace(
        est,
        up_information=np.zeros((3, 3)),
        up_determined=False,
        sign_determined=False,
        sign_margin=0.0,
    )
    return flagged, True


# An estimated gain below this fraction of the mean gain is a collapse, not a calibration: the
# torque constants of one arm's drives agree within tens of per cent, and torques logged in
# units other than the drives' share (the estimator's premise) differ by far more.
_MIN_PLAUSIBLE_GAIN = 0.1


def _warn(est: MotionFit, max_iter: int) -> MotionFit:
    """The warnings of the returned estimate (the intermediate fits issue none); an estimate
    whose gains collapse is returned undetermined (:func:`_refuse_collapsed_gains`)."""
    est, collapsed = _refuse_collapsed_gains(est)
    if not est.converged:
        warn_not_converged("estimate_up_from_motion", max_iter, stacklevel=5)
    if collapsed:
        return est
    if not est.sign_determined:
        warnings.warn(
            f"The sign of `up` is weakly determined by the dynamics: the best fit on the "
            f"other hemisphere fits worse by only {est.sign_margin:.3g} standard deviations. "
            "The log has too little acceleration (or the chain a mirror symmetry); check `up` "
            "against what you know of the mounting.",
            GravdirWarning,
            stacklevel=4,
        )
    if not est.up_determined:
        warnings.warn(
            f"The log does not determine `up`: directions up to {est.far_fit_deg:.3g}° away fit "
            "it within three standard deviations where the curvature says beyond four, so "
            "`up_std_deg` is infinite. Joints that never reverse or accelerate let the inertial "
            "parameters and gains trade against `up`: log motion that reverses every joint.",
            GravdirWarning,
            stacklevel=4,
        )
    return est


# Passes of the load-friction fit, each with the sign pattern of the previous: samples whose
# rigid-body torque is below this fraction of the joint's largest are left out of that pass
# (their sign is uncertain), less so as `up` improves.
_SIGN_CLEARANCE = (0.2, 0.05, 0.02)
# A gain is estimated only where the joint's RMS rigid-body torque is this many noise levels.
_GAIN_SNR = 1.0
# The change of `up` (rad) between passes of the load-friction fit that ends them early.
_LOAD_XTOL = 1e-7


def _fit(
    design: _Design,
    chain: SerialChain,
    fixed_gains: NDArray[np.float64] | None,
    sigma_given: NDArray[np.float64] | None,
    search: _Search,
    n_used: NDArray[np.int64],
    n_omitted: int,
    fingerprint: frozenset[str],
    unit: float = 1.0,
    free: NDArray[np.bool_] | None = None,
) -> _Fitted:
    """The maximum-likelihood search on the Gram blocks of a checked log.

    The blocks are of the torques divided by `unit`; parameters, noise levels and residuals are
    returned in the caller's units. With estimated gains, `free` (default all) says which are
    estimated; the others stay at the mean of the free ones (1).
    """
    n, base, mask, g = design.n, design.base, design.joint_mask, design.gravity
    n_free = 0 if fixed_gains is not None else n if free is None else int(free.sum())
    n_gain = max(n_free - 1, 0)
    n_params = base.rank + int(mask.sum()) * design.n_theta + 2 + n_gain
    layout = Layout(n, base.rank, n_gain, design.n_theta)
    dirs = gain_basis(n, free)
    k0 = np.ones(n) if fixed_gains is None else fixed_gains / fixed_gains.mean()
    rms = np.sqrt(design.tt / np.maximum(design.count, 1.0))
    floor = NOISE_FLOOR * np.where(rms > 0, rms, 1.0)
    sigma = sigma_given if sigma_given is not None else np.maximum(rms, floor)
    reweight = floor if sigma_given is None else None  # noise levels estimated
    optimum = maximise_likelihood(design, layout, dirs, k0, sigma, reweight, search, n_params)
    best, sigma, margin = optimum.best, optimum.sigma, optimum.margin
    info2, k_std, reach, basis = uncertainty(design, layout, dirs, optimum)
    mean_gain = 1.0 if fixed_gains is None else float(fixed_gains.mean())
    k_std = k_std * mean_gain
    if reach > 0:
        # The curvature does not describe the likelihood: nothing it gives is an uncertainty.
        info2 = np.zeros((2, 2))
        k_std = np.where(k_std > 0, np.inf, k_std)
    gains_out = best.gains * mean_gain
    theta = best.theta * mask
    resid = np.sqrt(best.rss / np.maximum(design.count, 1.0))
    fit = MotionFit(
        best.up,
        up_information_from_tangent(best.up, basis, info2),
        gains_out,
        k_std,
        base.standard_from_base(best.beta) * (unit / mean_gain),
        best.beta * (unit / mean_gain),
        theta * unit,
        np.zeros(n),
        np.zeros((0, 4)),
        sigma * unit,
        resid * unit,
        np.zeros(n),  # the residual diagnostics: set on the returned estimate (`_diagnose`)
        n_used.astype(np.float64),
        float(margin),
        bool(margin >= SIGN_SIGMAS),
        reach == 0,
        float(np.degrees(reach)),
        n_used,
        n_omitted,
        bool(best.converged),
        int(best.n_iter),
        chain,
        g,
        fingerprint=fingerprint,
    )
    return _Fitted(fit, design, layout, dirs, optimum, mean_gain)
