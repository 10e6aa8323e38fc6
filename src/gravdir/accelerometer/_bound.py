"""The Cramér-Rao bound of the accelerometer estimator and a planner of its poses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

import gravdir.accelerometer._model as mdl
from gravdir._checks import (
    check_array,
    check_count,
    check_direction,
    check_positive,
    check_rotation_matrix,
    describe_shape,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._rank import reciprocal_condition
from gravdir._results import Result, UpResult
from gravdir._sphere import tangent_basis, up_information_from_tangent
from gravdir.errors import DegenerateGeometryError
from gravdir.kinematics import SerialChain

__all__ = [
    "AccelerometerBound",
    "AccelerometerPlan",
    "crlb_up_from_accelerometer",
    "plan_accelerometer_poses",
]

# Caps of the planner: 100 poses are far more than the 14 unknowns need; 20 000 candidates of
# one configuration each cost about 50 ms of kinematics and keep a plan within seconds.
MAX_PLAN_POSES = 100
MAX_CANDIDATES = 20_000
# Exchange passes of the planner after the greedy choice (each tries every candidate in every
# slot); the criterion rarely improves after two.
_EXCHANGE_PASSES = 2
# Ridge added to the information (relative to its largest diagonal entry) while fewer poses than
# unknowns are chosen, so the greedy D-optimal step is defined from the first pose.
_RIDGE = 1e-9


@dataclass(frozen=True, eq=False, repr=False)
class AccelerometerBound(UpResult):
    """Cramér-Rao bound of `up` for accelerometer poses (:func:`crlb_up_from_accelerometer`).

    Attributes
    ----------
    up : ndarray, shape (3,)
        The `up` the bound was evaluated at.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up` with the sensor parameters eliminated, 1/rad².
        :attr:`up_cov` is the smallest covariance an unbiased estimator reaches,
        :attr:`up_std_deg` its root-mean-square angle.
    condition : float
        Ratio of the largest to the smallest eigenvalue of the information in the tangent
        plane.

    References
    ----------
    S. M. Kay (1993), ch. 3: the Cramér-Rao bound.
    """

    _units = {
        "condition": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    condition: float

    def __repr__(self) -> str:
        return (
            f"AccelerometerBound(up={np.array2string(self.up, precision=4)}, "
            f"up_std={self.up_std_deg:.3g}°, condition={self.condition:.3g})"
        )


@dataclass(frozen=True, eq=False, repr=False)
class AccelerometerPlan(Result):
    """Configurations to visit with an accelerometer on a link (:func:`plan_accelerometer_poses`).

    Attributes
    ----------
    q : ndarray, shape (m, n)
        Joint positions of the poses, rad, within the joint limits.
    bound : AccelerometerBound
        The Cramér-Rao bound of `up` from these poses.
    """

    _units = {
        "q": "rad",
    }

    q: NDArray[np.float64]
    bound: AccelerometerBound

    def __repr__(self) -> str:
        return f"AccelerometerPlan(poses={self.q.shape[0]}, up_std={self.bound.up_std_deg:.3g}°)"


def _nominal_sensor(
    sensitivity: ArrayLike | None, link_from_sensor: ArrayLike | None
) -> NDArray[np.float64]:
    t = np.eye(3) if sensitivity is None else check_array(sensitivity, "sensitivity")
    if t.shape != (3, 3):
        raise ValueError(
            f"Expected `sensitivity` to have shape (3, 3), got {describe_shape(t.shape)}."
        )
    top = float(np.max(np.abs(t)))
    # A condition number beyond 1e8 leaves a sensing direction without signal.
    if top == 0.0 or np.linalg.cond(t / top) > 1e8:
        raise ValueError("Expected `sensitivity` to be invertible, got a singular matrix.")
    # The readings it gives, of about `sensitivity` times one g, within the estimator's range.
    if not mdl.MIN_RELATIVE_READING <= top <= mdl.MAX_RELATIVE_READING:
        raise ValueError(
            f"Expected `sensitivity` from {mdl.MIN_RELATIVE_READING:g} to "
            f"{mdl.MAX_RELATIVE_READING:g} at its largest entry (readings of about that many "
            f"times `gravity`, as `up_from_accelerometer` accepts), got {top:.3g}."
        )
    r = (
        np.eye(3)
        if link_from_sensor is None
        else check_rotation_matrix(link_from_sensor, "link_from_sensor")
    )
    if r.shape != (3, 3):
        raise ValueError(
            f"Expected `link_from_sensor` to have shape (3, 3), got {describe_shape(r.shape)}."
        )
    return t @ r.T


def _pose_jacobians(
    rot: NDArray[np.float64],
    axes: NDArray[np.float64],
    up: NDArray[np.float64],
    m: NDArray[np.float64],
    cov_r: NDArray[np.float64],
    enc_std: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Whitened Jacobians (m, 3, 14) of each pose."""
    white = mdl.whiteners(cov_r, mdl.encoder_spread(rot, axes, enc_std, up, m))
    jac, _ = mdl.jacobian(rot, up, m, white)
    return jac.reshape(-1, 3, 14)


@mdl.quiet_underflow
def crlb_up_from_accelerometer(
    chain: SerialChain,
    q: ArrayLike,
    *,
    link: int,
    noise_std: float | None = None,
    reading_cov: ArrayLike | None = None,
    encoder_std: ArrayLike = 0.0,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    sensitivity: ArrayLike | None = None,
    link_from_sensor: ArrayLike | None = None,
    gravity: float = STANDARD_GRAVITY,
) -> AccelerometerBound:
    """Cramér-Rao bound of `up` from an accelerometer on `link` at the poses `q`.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    q : array_like, shape (m, n)
        Joint positions of the planned poses, rad, within ±4π.
    link : int
        The link carrying the sensor, 0-based (as in :func:`up_from_accelerometer`).
    noise_std : float, optional
        Standard deviation of each axis of a time-averaged reading, m/s². Exactly one of
        `noise_std` and `reading_cov`.
    reading_cov : array_like, shape (3, 3) or (m, 3, 3), optional
        Covariance of the readings, m²/s⁴.
    encoder_std : float or array_like, shape (n,), optional
        Standard deviation of each joint's measured position, rad (default 0).
    up_hint : array_like, shape (3,), optional
        The `up` at which the bound is evaluated (default upright); normalised.
    sensitivity : array_like, shape (3, 3), optional
        The sensor's ``T`` (default identity); its overall scale matters, its small errors
        barely do.
    link_from_sensor : array_like, shape (3, 3), optional
        The sensor's mounting ``R_m`` (default identity). With isotropic reading noise the bound
        does not depend on it.
    gravity : float, optional
        Gravitational acceleration, m/s² (default ``STANDARD_GRAVITY``).

    Returns
    -------
    AccelerometerBound
        `up_hint` (normalised) and the information of `up` there.

    Raises
    ------
    ValueError
        As :func:`up_from_accelerometer` for the shared arguments; or if `sensitivity` is
        singular, its largest entry lies outside 1e-6 to 1e6 (readings of that many times
        `gravity`, beyond what the estimator accepts), or `link_from_sensor` is not a rotation.
    InsufficientDataError
        If fewer than five poses are given.
    DegenerateGeometryError
        If the poses do not determine `up` (turns about one axis only, poses that barely
        differ, a rank-deficient design).

    See Also
    --------
    up_from_accelerometer : the estimator whose bound this is.
    plan_accelerometer_poses : chooses poses with this bound.

    Notes
    -----
    With Gaussian errors of covariance :math:`\\Sigma_i` per pose — the readings' plus the
    encoder noise through the link's orientation, :math:`\\sum_j \\sigma_{q_j}^2 d_{ij}
    d_{ij}^\\top` with :math:`d_{ij} = M R_i^\\top (\\omega_j \\times u)` — the Fisher matrix of
    (tangent of `up`, :math:`M`, :math:`b`) is :math:`\\sum_i J_i^\\top \\Sigma_i^{-1} J_i`; the
    bound of `up` is the inverse of its Schur complement on the sensor block. The dependence of
    :math:`\\Sigma_i` on the parameters adds information of order one per pose, negligible
    beside the :math:`g^2/\\sigma^2` of the mean, and is left out (as the estimator leaves it).

    References
    ----------
    S. M. Kay (1993), Fundamentals of Statistical Signal Processing: Estimation Theory, ch. 3
    (Fisher information with nuisance parameters).

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.3, 0, 0, 0.1], [0, 0, 0, 0], [0, 0.4, 0.3, 0],
    ...                       [np.pi / 2, 0, np.pi / 2, 0])
    >>> q = np.random.default_rng(0).uniform(-1.5, 1.5, (8, 4))
    >>> bound = crlb_up_from_accelerometer(chain, q, link=3, noise_std=7.4e-4,
    ...                                    encoder_std=np.radians(0.003))
    >>> 0.0 < bound.up_std_deg < 0.05
    True
    """
    chain = mdl.check_chain(chain)
    q = mdl.check_configurations(q, chain, "q")
    k = mdl.check_link(link, chain)
    g = check_positive(gravity, "gravity")
    enc = mdl.check_encoder_std(encoder_std, chain.n_joints)
    u = check_direction(up_hint, "up_hint")
    m = _nominal_sensor(sensitivity, link_from_sensor)
    n = q.shape[0]
    mdl.check_count_poses(n, "q")
    cov_r = mdl.reading_covariance(noise_std, reading_cov, n, g)
    rot, axes = mdl.link_geometry(chain, q, k)
    mdl.check_two_axes(rot)
    # The rank test on the readings' own noise first: the encoder part of the weights follows.
    jac_r = mdl.jacobian(rot, u, m, mdl.whiteners(cov_r))[0]
    mdl.check_design(jac_r)
    jac = _pose_jacobians(rot, axes, u, m, cov_r, enc).reshape(-1, 14)
    info2, _, condition = mdl.split_information(jac, jac_r)
    return AccelerometerBound(
        up=u,
        up_information=up_information_from_tangent(u, tangent_basis(u), info2),
        condition=condition,
    )


def _up_variance(info: NDArray[np.float64]) -> float:
    """tr of the (2, 2) up block of inv(info), info (14, 14); inf where singular."""
    if reciprocal_condition(info, gram=True) <= mdl.RCOND:
        return float("inf")
    scale = np.sqrt(np.diag(info))
    s = info / np.outer(scale, scale)
    try:
        cov = np.linalg.inv(s) / np.outer(scale, scale)
    except np.linalg.LinAlgError:
        return float("inf")
    value = float(cov[0, 0] + cov[1, 1])
    return value if value > 0 else float("inf")


@mdl.quiet_underflow
def plan_accelerometer_poses(
    chain: SerialChain,
    link: int,
    n_poses: int,
    *,
    noise_std: float,
    encoder_std: ArrayLike = 0.0,
    q_limits: ArrayLike | None = None,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    n_candidates: int = 500,
    rng: np.random.Generator | None = None,
    gravity: float = STANDARD_GRAVITY,
) -> AccelerometerPlan:
    """Choose `n_poses` configurations, within joint limits, that make `up` accurate.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    link : int
        The link carrying the sensor, 0-based.
    n_poses : int
        Number of poses to plan, 5 to 100.
    noise_std : float
        Standard deviation of each axis of a time-averaged reading, m/s².
    encoder_std : float or array_like, shape (n,), optional
        Standard deviation of each joint's measured position, rad (default 0).
    q_limits : array_like, shape (n, 2), optional
        Lower and upper limit of each joint, rad, within ±4π (default ±π). Joints distal to
        `link` do not move the sensor and are kept at the middle of their range.
    up_hint : array_like, shape (3,), optional
        A rough `up` at which the bounds are evaluated (default upright); normalised.
    n_candidates : int, optional
        Random configurations drawn within the limits to choose from (default 500, from
        `n_poses` to 20 000).
    rng : numpy.random.Generator, optional
        Source of the candidates (default ``numpy.random.default_rng(0)``: the same plan every
        call).
    gravity : float, optional
        Gravitational acceleration, m/s² (default ``STANDARD_GRAVITY``).

    Returns
    -------
    AccelerometerPlan
        The configurations and their bound (:func:`crlb_up_from_accelerometer`).

    Raises
    ------
    ValueError
        If an argument has the wrong type, shape or value, a limit exceeds 4π (degrees?) or a
        lower limit is not below its upper limit.
    InsufficientDataError
        If `n_poses` is below five.
    DegenerateGeometryError
        If no choice among the candidates determines `up` (always for ``link=0``, whose
        orientations turn about joint 1 only).

    See Also
    --------
    crlb_up_from_accelerometer : the bound the plan minimises.
    up_from_accelerometer : the estimator.

    Notes
    -----
    Each candidate contributes :math:`J_i^\\top \\Sigma_i^{-1} J_i` to the Fisher matrix of
    (`up`, :math:`M`, :math:`b`), evaluated at `up_hint` with a nominal sensor (identity
    sensitivity and mounting: the bound of `up` does not depend on the mounting under
    isotropic noise). The poses are chosen greedily by D-optimality of the whole matrix (a
    ridge of 1e-9 of its largest diagonal entry while it is singular), then improved by
    exchange passes that minimise the trace of the bound of `up` (A-optimality on `up`).

    References
    ----------
    V. V. Fedorov (1972), Theory of Optimal Experiments, ch. 3 (greedy and exchange
    algorithms for D-optimal designs).

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.3, 0, 0, 0.1], [0, 0, 0, 0], [0, 0.4, 0.3, 0],
    ...                       [np.pi / 2, 0, np.pi / 2, 0])
    >>> plan = plan_accelerometer_poses(chain, 3, 8, noise_std=7.4e-4, n_candidates=200)
    >>> plan.q.shape, bool(plan.bound.up_std_deg < 0.01)
    ((8, 4), True)
    """
    chain = mdl.check_chain(chain)
    k = mdl.check_link(link, chain)
    n_poses = check_count(n_poses, "n_poses", minimum=1, maximum=MAX_PLAN_POSES)
    mdl.check_count_poses(n_poses, "n_poses")
    n_candidates = check_count(
        n_candidates, "n_candidates", minimum=n_poses, maximum=MAX_CANDIDATES
    )
    g = check_positive(gravity, "gravity")
    enc = mdl.check_encoder_std(encoder_std, chain.n_joints)
    u = check_direction(up_hint, "up_hint")
    nj = chain.n_joints
    if q_limits is None:
        limits = np.tile([-np.pi, np.pi], (nj, 1))
    else:
        limits = mdl.check_configurations(
            np.asarray(check_array(q_limits, "q_limits")).T, chain, "q_limits"
        ).T
        if not np.all(limits[:, 0] < limits[:, 1]):
            raise ValueError(
                "Expected each row of `q_limits` to be (lower, upper) with lower < upper."
            )
    if rng is None:
        rng = np.random.default_rng(0)
    elif not isinstance(rng, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {type(rng)}.")
    cov_one = mdl.reading_covariance(noise_std, None, n_candidates, g)
    cand = rng.uniform(limits[:, 0], limits[:, 1], (n_candidates, nj))
    cand[:, k + 1 :] = limits[k + 1 :].mean(axis=-1)
    rot, axes = mdl.link_geometry(chain, cand, k)
    jac = _pose_jacobians(rot, axes, u, np.eye(3), cov_one, enc)
    blocks = np.einsum("cai,caj->cij", jac, jac)  # (c, 14, 14)
    chosen: list[int] = []
    info = np.zeros((14, 14))
    ridge = _RIDGE * float(np.max(np.einsum("cii->i", blocks)))
    for _ in range(n_poses):
        trial = info + blocks + ridge * np.eye(14)
        _, logdet = np.linalg.slogdet(trial)
        logdet[chosen] = -np.inf
        best = int(np.argmax(logdet))
        chosen.append(best)
        info = info + blocks[best]
    current = _up_variance(info)
    for _ in range(_EXCHANGE_PASSES):
        improved = False
        for slot in range(n_poses):
            base = info - blocks[chosen[slot]]
            for c in range(n_candidates):
                if c in chosen:
                    continue
                value = _up_variance(base + blocks[c])
                if value < current * (1 - 1e-9):
                    current, info = value, base + blocks[c]
                    chosen[slot] = c
                    base = info - blocks[c]
                    improved = True
        if not improved:
            break
    if not np.isfinite(current):
        raise DegenerateGeometryError(
            f"Expected some {n_poses} of the {n_candidates} candidate configurations to "
            "determine `up`, got none: the link's orientations turn about one axis only (the "
            "first link) or the joint limits are too narrow."
        )
    configs = cand[np.array(chosen)]
    bound = crlb_up_from_accelerometer(
        chain, configs, link=k, noise_std=noise_std, encoder_std=enc, up_hint=u, gravity=g
    )
    return AccelerometerPlan(q=configs, bound=bound)
