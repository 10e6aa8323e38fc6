"""MotionFit: the result of :func:`gravdir.estimate_up_from_motion`, and the per-joint view of
a fit made on load-friction pseudo-joints."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import UpResult, up_text
from gravdir.kinematics import SerialChain
from gravdir.motion._inputs import check_base_acceleration, check_log
from gravdir.motion._load import model_torque

__all__ = ["MotionFit"]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class MotionFit(UpResult):
    """`up` estimated from a log of ordinary motion by :func:`estimate_up_from_motion`.

    Attributes
    ----------
    up : ndarray, shape (3,)
        Unit vector opposite to gravity (apparent gravity if the base accelerates and no
        `base_acceleration` was given), base frame.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad², from the curvature of the log-likelihood with the
        inertial parameters, gains and joint parameters profiled out (Schur complement); with
        ``covariance="hac"`` the inverse of the sandwich covariance instead.
    gains : ndarray, shape (n,)
        Torque gain of each joint (logged torque = gain × actuator torque + joint terms), mean
        fixed at 1 when estimated: only ratios are identifiable.
    gains_std : ndarray, shape (n,)
        Their standard deviations (zero for gains given).
    inertial_parameters : ndarray, shape (10 n,)
        The minimum-norm standard parameters with the identified base parameters (one member of
        the set giving the same torques), in units of the logged torque divided by the mean gain.
    base_parameters : ndarray, shape (p,)
        The identified base parameters (:func:`gravdir.dynamics.base_parameters`, same units).
    joint_parameters : ndarray, shape (n, 5)
        Armature, Coulomb, viscous friction, offset and quadratic friction of each joint,
        logged-torque units (zero where `friction` leaves the term out). Joint 1's armature is
        zero: its column is that of link 1's inertia about joint 1's axis, which a base
        parameter carries.
    load_coefficient : ndarray, shape (n,)
        Load-dependent friction of each joint, :math:`\\mu_j s_j r_j` with :math:`r_j` the
        rigid-body torque in logged units and :math:`s_j = \\operatorname{sign}(r_j + J_j
        \\ddot q_j) \\operatorname{sign} \\dot q_j` (:math:`\\mu_j |r_j| \\operatorname{sign}
        \\dot q_j` wherever the armature torque does not outweigh :math:`r_j` against its sign);
        zero where the term was not fitted or not kept, see `load_friction`.
    ripple : ndarray, shape (r, 4)
        Gear ripple found in the log (see `ripple_components`), one row per component:
        joint (0-based), order :math:`k` (cycles per joint revolution), amplitude :math:`a`
        and phase :math:`\\varphi` of the logged-torque term :math:`a \\sin(k q_j + \\varphi)`.
    noise_std : ndarray, shape (n,)
        Torque noise per joint, given or estimated from the residuals.
    residual_rms : ndarray, shape (n,)
        RMS residual of each joint over its samples used.
    residual_lag1 : ndarray, shape (n,)
        Lag-1 autocorrelation of each joint's residuals over its samples used: about 0 where
        the model leaves white noise, near 1 where it leaves a slow misfit.
    effective_samples : ndarray, shape (n,)
        Each joint's samples used divided by the integrated autocorrelation time of its
        residuals: how many independent samples they are worth. Far below `n_used` (a third or
        less), the residuals are correlated in time and the ``covariance="white"`` form
        understates the spread of `up`: a warning says so.
    covariance_dof : float
        Degrees of freedom of the covariance of `up`, itself an estimate: under
        ``covariance="hac"`` those of the sandwich's spread in the tangent coordinates of `up`,
        from each sample's influence on them and each joint's lag-1 correlation of its
        residuals (the *Real logs* page, "Degrees of freedom of a covariance"); under
        ``"white"`` the residuals used less the model's columns.
        :func:`~gravdir.fusion.fuse_up` and :func:`~gravdir.controllers.compare_setting` use an
        F reference with them.
    sign_margin : float
        How decisively the dynamics fix the sign of `up`: the best fit with `up` on the other
        hemisphere is worse by this many standard deviations (square root of twice the
        log-likelihood ratio); infinite when no such fit was found. With ``covariance="hac"``
        it is divided by the ratio of the sandwich's standard deviation of `up` to the white
        form's, where that exceeds 1 (the ratio of a likelihood that takes correlated residuals
        for independent ones is too large by about that factor squared).
    sign_determined : bool
        ``sign_margin >= 5``; a warning is issued otherwise.
    up_determined : bool
        Whether the log confines `up` to the region its information describes. False when a
        direction of the starting grid (on the estimate's hemisphere) fits the log within the
        likelihood's three-sigma level although the curvature at the estimate puts it beyond
        4.2 standard deviations: the likelihood is flat or has other minima far from the
        estimate, `up_information` is then zero (`up_std_deg` infinite) and a warning is issued.
    far_fit_deg : float
        The angle from `up` of the farthest such direction, degrees (0 when `up_determined`).
    n_used : ndarray of int, shape (n,)
        Samples used in each joint's torque equation (after `min_speed`, `torque_limits` and
        zero `weights`).
    n_omitted : int
        Samples dropped for NaN (``nan_policy="omit"``).
    converged : bool
        Whether the final refinement met its step tolerance.
    n_iter : int
        Gauss--Newton iterations of the final refinement.
    chain : SerialChain
        The arm (kept for :meth:`predict_torque`; out of the ``repr``).
    gravity : float
        m/s².
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    gains: NDArray[np.float64]
    gains_std: NDArray[np.float64]
    inertial_parameters: NDArray[np.float64]
    base_parameters: NDArray[np.float64]
    joint_parameters: NDArray[np.float64]
    load_coefficient: NDArray[np.float64]
    ripple: NDArray[np.float64]
    noise_std: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    residual_lag1: NDArray[np.float64]
    effective_samples: NDArray[np.float64]
    sign_margin: float
    sign_determined: bool
    up_determined: bool
    far_fit_deg: float
    n_used: NDArray[np.int64]
    n_omitted: int
    converged: bool
    n_iter: int
    chain: SerialChain = dataclasses.field(repr=False)
    covariance_dof: float = math.inf
    gravity: float = STANDARD_GRAVITY

    _units: ClassVar[Mapping[str, str]] = {
        "gains": "",
        "gains_std": "",
        "inertial_parameters": "kg, kg·m, kg·m² (× gain)",
        "base_parameters": "kg, kg·m, kg·m² (× gain)",
        "joint_parameters": "kg·m², N·m, N·m·s/rad, N·m, N·m·s²/rad²",
        "load_coefficient": "",
        "ripple": "joint, cycles/rev, N·m, rad",
        "noise_std": "N·m",
        "residual_rms": "N·m",
        "residual_lag1": "",
        "effective_samples": "",
        "covariance_dof": "",
        "sign_margin": "σ",
        "sign_determined": "",
        "up_determined": "",
        "far_fit_deg": "deg",
        "n_used": "",
        "n_omitted": "",
        "converged": "",
        "n_iter": "",
        "gravity": "m/s²",
    }

    def __repr__(self) -> str:
        return (
            f"MotionFit({up_text(self)}, gains={np.array2string(self.gains, precision=4)}, "
            f"residual_rms={np.array2string(self.residual_rms, precision=3)} N·m, "
            f"sign_margin={self.sign_margin:.3g}σ, n_used={self.n_used.tolist()}, "
            f"converged={self.converged})"
        )

    def predict_torque(
        self,
        q: ArrayLike,
        *,
        velocity: ArrayLike,
        acceleration: ArrayLike,
        base_acceleration: ArrayLike | None = None,
        up: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """The logged torques the fitted model predicts, shape (N, n).

        Parameters
        ----------
        q, velocity, acceleration : array_like, shape (N, n)
            Joint positions (rad), velocities (rad/s) and accelerations (rad/s²); all but `q`
            keyword-only.
        base_acceleration : array_like, shape (3,) or (N, 3), optional
            The base's own linear acceleration, m/s²; default none.
        up : array_like, shape (3,), optional
            Direction of gravity to predict with; default the estimate.

        Returns
        -------
        ndarray, shape (N, n)
            ``r + load |r| sign(q̇) + armature q̈ + coulomb sign(q̇) + viscous q̇ + offset
            + quadratic q̇ |q̇|`` plus the `ripple`, with the rigid-body torque
            ``r = gains * (Y(up) pi)``.

        Raises
        ------
        ValueError
            If an argument has the wrong shape or is not finite.
        """
        n = self.chain.n_joints
        qq = check_log(q, "q", n, None)
        qd = check_log(velocity, "velocity", n, qq.shape[0])
        qdd = check_log(acceleration, "acceleration", n, qq.shape[0])
        u = self.up if up is None else np.asarray(up, dtype=np.float64)
        acc = check_base_acceleration(base_acceleration, qq.shape[0])
        if u.shape != (3,):
            raise ValueError(f"Expected `up` to have shape (3,), got {u.shape}.")
        return model_torque(self, qq, qd, qdd, acc, u)


def combine(pseudo: MotionFit, n: int, ripple: NDArray[np.float64]) -> MotionFit:
    """The estimate per joint from that per pseudo-joint (driving ``j``, braking ``n + j``):
    gain ``(k+ + k-) / 2`` and load coefficient ``(k+ - k-) / (k+ + k-)``; the joint parameters
    (shared by the pair); noise levels and residuals the root mean square over the two sample
    sets."""
    kp, km = pseudo.gains[:n], pseudo.gains[n:]
    cp, cm = pseudo.n_used[:n].astype(float), pseudo.n_used[n:].astype(float)
    total = np.maximum(cp + cm, 1.0)

    def rms(x: NDArray[np.float64]) -> NDArray[np.float64]:
        # Scaled by the larger of the pair, so that the squares of any finite levels are finite.
        big = np.maximum(x[:n], x[n:])
        safe = np.where(big > 0, big, 1.0)
        share = (cp * (x[:n] / safe) ** 2 + cm * (x[n:] / safe) ** 2) / total
        return np.asarray(big * np.sqrt(share))

    return dataclasses.replace(
        pseudo,
        gains=0.5 * (kp + km),
        gains_std=0.5 * np.hypot(pseudo.gains_std[:n], pseudo.gains_std[n:]),
        load_coefficient=(kp - km) / (kp + km),
        ripple=ripple,
        joint_parameters=pseudo.joint_parameters[:n],
        noise_std=rms(pseudo.noise_std),
        residual_rms=rms(pseudo.residual_rms),
        residual_lag1=np.zeros(n),  # set on the returned estimate (`_diagnose`)
        effective_samples=(pseudo.n_used[:n] + pseudo.n_used[n:]).astype(np.float64),
        n_used=pseudo.n_used[:n] + pseudo.n_used[n:],
    )
