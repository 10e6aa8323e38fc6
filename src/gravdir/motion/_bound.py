"""crlb_up_from_motion: the Cramér-Rao bound of `up` from a planned or logged trajectory."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_direction, check_per_joint, check_positive
from gravdir._constants import STANDARD_GRAVITY
from gravdir._options import Friction
from gravdir._results import UpResult
from gravdir._sphere import tangent_basis, up_information_from_tangent
from gravdir.dynamics import BaseParameters
from gravdir.dynamics import base_parameters as chain_base_parameters
from gravdir.kinematics import SerialChain
from gravdir.motion._design import (
    Layout,
    build_design,
    covariance,
    gain_basis,
    gains_std,
    information,
)
from gravdir.motion._inputs import (
    DEFAULT_MIN_SPEED,
    check_base_acceleration,
    check_chain,
    check_joint_parameters,
    check_log,
    friction_mask,
    sample_weights,
)

__all__ = ["MotionBound", "crlb_up_from_motion"]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class MotionBound(UpResult):
    """The Cramér-Rao bound of `up` from a trajectory, every other parameter unknown.

    Attributes
    ----------
    up : ndarray, shape (3,)
        The direction the bound is computed at.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad², with the inertial parameters, the gains (unless
        fixed) and the joint parameters profiled out; ``up_cov`` and ``up_std_deg`` follow.
    gains_std : ndarray, shape (n,)
        Bound on the standard deviation of each torque gain (zero for fixed gains, infinite
        for a gain the trajectory does not determine).
    n_samples : int
        Samples of the trajectory.
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    gains_std: NDArray[np.float64]
    n_samples: int

    _units: ClassVar[Mapping[str, str]] = {"gains_std": "", "n_samples": ""}

    def __repr__(self) -> str:
        up = np.array2string(np.asarray(self.up), precision=6, separator=", ")
        return (
            f"MotionBound(up={up}, up_std_deg={self.up_std_deg:.4g}°, n_samples={self.n_samples})"
        )


def crlb_up_from_motion(
    chain: SerialChain,
    q: ArrayLike,
    *,
    velocity: ArrayLike,
    acceleration: ArrayLike,
    base_acceleration: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    inertial_parameters: ArrayLike,
    joint_parameters: ArrayLike,
    gains: ArrayLike,
    noise_std: ArrayLike,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    gravity: float = STANDARD_GRAVITY,
    friction: Friction = "coulomb-viscous",
    estimate_gains: bool = True,
    min_speed: float = DEFAULT_MIN_SPEED,
    base_parameters: BaseParameters | None = None,
) -> MotionBound:
    """Cramér-Rao bound of `up` estimated from a trajectory by :func:`estimate_up_from_motion`.

    Parameters
    ----------
    chain : SerialChain
        The arm, at most 12 joints.
    q, velocity, acceleration : array_like, shape (N, n)
        The trajectory: joint positions (rad, within ±4π), velocities (rad/s) and
        accelerations (rad/s²), exact (the bound has torque noise only); all but `q`
        keyword-only.
    base_acceleration : array_like, shape (3,) or (N, 3), optional
        Known linear acceleration of the base, m/s².
    weights : array_like, shape (N,) or (N, n), optional
        Weights in [0, 1] of the samples (or of each joint's samples).
    inertial_parameters : array_like, shape (10 n,)
        The links' standard parameters (:func:`gravdir.dynamics.inertial_parameters`).
    joint_parameters : array_like, shape (n, 5) or (n, 4)
        Armature, Coulomb, viscous friction, offset and quadratic friction of every joint
        (without the last: zero), measured-torque units. The entries `friction` leaves out are
        ignored.
    gains : array_like, shape (n,)
        Torque gains, positive (measured = gain × actuator torque + joint terms).
    noise_std : float or array_like, shape (n,)
        Torque noise per joint, measured units, positive.
    up_hint : array_like, shape (3,), optional
        The direction the bound is computed at, any non-zero length (default upright).
    gravity : float, optional
        m/s², default standard gravity.
    friction : {"coulomb-viscous", "coulomb-viscous-quadratic", "coulomb", "none"}, optional
        The friction estimated per joint, as in the estimator (default ``"coulomb-viscous"``:
        Coulomb and viscous; ``"coulomb-viscous-quadratic"``: the quadratic term as well;
        ``"coulomb"``: Coulomb only; ``"none"``: neither).
    estimate_gains : bool, optional
        Whether the gains are unknown (default True; their mean is fixed at its value).
    min_speed : float, optional
        A joint's samples slower than this (rad/s) are left out of its torque equation, as in
        the estimator; default 0.02.
    base_parameters : BaseParameters, optional
        The base parameters of `chain` (:func:`gravdir.dynamics.base_parameters`); computed
        when not given. A planner that calls the bound many times passes it once.

    Returns
    -------
    MotionBound
        `up`, its Fisher information (``up_std_deg`` is the bound on the RMS angular error) and
        the gains' bounds.

    Raises
    ------
    ValueError
        If an argument has the wrong type, shape or range (named in the message), or `chain`
        has more than 12 joints.

    Notes
    -----
    The log-likelihood of joint ``j``'s torques is Gaussian with standard deviation
    :math:`\\sigma_j`. Its Fisher information for every parameter is
    :math:`\\sum_j D_j^\\top A_j^\\top W_j A_j D_j / \\sigma_j^2`, with :math:`A_j` the per-joint
    design of the *Motion* page and :math:`D_j` the derivative of its coefficients; the
    information of the two tangent parameters of `up` is its Schur complement (the other
    parameters profiled out), computed in :math:`O(1)` per sample after the Gram blocks.
    What the trajectory does not determine is decided on the information scaled to unit
    diagonal: its eigenvalues at most 1e-12 of the largest span the undetermined directions,
    and a tangent direction of `up` or a gain with a share of more than 1e-3 along them gets
    zero information (an infinite standard deviation). From one sample, for example, neither
    is determined.

    References
    ----------
    S. M. Kay, *Fundamentals of Statistical Signal Processing: Estimation Theory* (Prentice
    Hall, 1993), ch. 3 (the Cramér-Rao bound with nuisance parameters).

    Examples
    --------
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.0, 0.4], [np.pi / 2, 0.0], [0.3, 0.0], [0.0, 0.0])
    >>> t = np.linspace(0.0, 4.0, 2001)[:, None]
    >>> q = np.sin(np.array([1.3, 1.7]) * t)
    >>> qd = np.array([1.3, 1.7]) * np.cos(np.array([1.3, 1.7]) * t)
    >>> qdd = -np.array([1.3, 1.7]) ** 2 * q
    >>> pi = np.tile([2.0, 0.3, 0.1, 0.05, 0.2, 0.0, 0.2, 0.0, 0.0, 0.1], 2)
    >>> bound = crlb_up_from_motion(chain, q, velocity=qd, acceleration=qdd,
    ...     inertial_parameters=pi, joint_parameters=np.zeros((2, 4)), gains=[1.0, 1.0],
    ...     noise_std=0.05, up_hint=[0.0, 0.6, 0.8])
    >>> bool(0 < bound.up_std_deg < 5.0)
    True
    """
    chain = check_chain(chain)
    n = chain.n_joints
    qq = check_log(q, "q", n, None)
    qd = check_log(velocity, "velocity", n, qq.shape[0])
    qdd = check_log(acceleration, "acceleration", n, qq.shape[0])
    pi = check_array(inertial_parameters, "inertial_parameters")
    if pi.shape != (10 * n,):
        raise ValueError(
            f"Expected `inertial_parameters` to have shape ({10 * n},), got {pi.shape}."
        )
    # The joint parameters enter linearly: their values do not change the information.
    check_joint_parameters(joint_parameters, n)
    k_given = check_per_joint(gains, "gains", n)
    sigma = check_per_joint(noise_std, "noise_std", n)
    u = check_direction(up_hint, "up_hint")
    g = check_positive(gravity, "gravity")
    acc = check_base_acceleration(base_acceleration, qq.shape[0])
    mask = friction_mask(friction)
    if not isinstance(estimate_gains, bool | np.bool_):
        raise ValueError(f"Expected `estimate_gains` to be True or False, got {estimate_gains!r}.")
    # Sums of tiny regressor products may underflow to zero: harmless.
    with np.errstate(under="ignore"):
        base = base_parameters
        if base is None:
            base = chain_base_parameters(chain)
        elif not isinstance(base, BaseParameters) or base.combination.shape[1] != 10 * n:
            raise ValueError(
                f"Expected `base_parameters` to be the BaseParameters of `chain`, got {base!r}."
            )
        w = sample_weights(qd, None, min_speed, None, weights)
        design = build_design(chain, base, qq, qd, qdd, w, None, acc, g, mask)
        k = k_given / k_given.mean()  # the scale is fixed by the mean gain: only ratios matter
        beta = base.combination @ pi
        layout = Layout(n, base.rank, n - 1 if estimate_gains else 0)
        basis = tangent_basis(u)
        dirs = gain_basis(n)
        # In units of the largest noise level (and back), so that any finite level works.
        top = np.float64(sigma.max())
        with np.errstate(over="ignore", invalid="ignore"):
            info = information(
                design, design.gram, layout, u, basis, k, dirs, beta, (top / sigma) ** 2
            )
        if not np.isfinite(info).all():
            raise ValueError(
                "Expected `inertial_parameters`, `noise_std` and the trajectory to give a finite "
                "information, got an overflow: rescale the torques' units."
            )
        # Directions the information does not determine get infinite standard deviations.
        cov = covariance(info)
        with np.errstate(over="ignore", invalid="ignore"):  # refused below
            info2 = cov.tangent_information() / top / top
        if not np.abs(info2).max() < 1e300:
            raise ValueError(
                "Expected `inertial_parameters`, `noise_std` and the trajectory to give a finite "
                "information, got an overflow: rescale the torques' units."
            )
        with np.errstate(over="ignore"):  # a standard deviation beyond the floats is infinite
            k_std = gains_std(cov, layout, dirs) * top * float(np.mean(k_given))
        return MotionBound(
            u,
            up_information_from_tangent(u, basis, info2),
            k_std,
            int(qq.shape[0]),
        )
