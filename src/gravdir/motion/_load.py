"""The load-friction model of :func:`gravdir.estimate_up_from_motion` and the fitted torque.

A friction that grows with the load, :math:`\\mu s r` with :math:`s = \\operatorname{sign}(r + J
\\ddot q) \\operatorname{sign} \\dot q` (:math:`\\mu |r| \\operatorname{sign} \\dot q` wherever the
armature torque :math:`J \\ddot q` does not outweigh the rigid-body torque :math:`r` against its
sign), is a gain :math:`k (1 + \\mu s)` on :math:`r`: the estimator fits it as two pseudo-joints
per joint (driving and braking samples), which :func:`combine` turns back into one gain and one
load coefficient. Joint 1 has no armature of its own (a base parameter carries it,
:func:`gravdir.motion._design.drop_duplicate_armature`), so its sign is that of :math:`r`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from gravdir._tails import chi2_sf
from gravdir.dynamics import inverse_dynamics_regressor
from gravdir.kinematics import SerialChain
from gravdir.motion._design import joint_torque
from gravdir.motion._ripple import ripple_coefficients, ripple_torque

# False-alarm probability of the likelihood-ratio test of load_friction="auto".
LOAD_FALSE_ALARM = 1e-3


class FittedMotion(Protocol):
    """The fields of a :class:`~gravdir.motion.MotionFit` that its torque model reads."""

    @property
    def up(self) -> NDArray[np.float64]: ...
    @property
    def gains(self) -> NDArray[np.float64]: ...
    @property
    def inertial_parameters(self) -> NDArray[np.float64]: ...
    @property
    def joint_parameters(self) -> NDArray[np.float64]: ...
    @property
    def load_coefficient(self) -> NDArray[np.float64]: ...
    @property
    def ripple(self) -> NDArray[np.float64]: ...
    @property
    def chain(self) -> SerialChain: ...
    @property
    def gravity(self) -> float: ...


# Samples per block of the per-sample model: its temporaries (a regressor of 2000 rows) stay a
# few megabytes whatever the length of the log.
_ROWS = 2000


def rigid_torque(
    est: FittedMotion,
    q: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    base_acceleration: NDArray[np.float64] | None,
    up: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """The fitted rigid-body torque in logged units, ``gains * (Y(g up + a_b) pi)``, (N, n)."""
    a0 = est.gravity * (est.up if up is None else up)
    acc = a0 if base_acceleration is None else a0 + base_acceleration
    out = np.empty_like(q)
    for lo in range(0, q.shape[0], _ROWS):
        sl = slice(lo, lo + _ROWS)
        a = acc if acc.ndim == 1 else acc[sl]
        y = inverse_dynamics_regressor(est.chain, q[sl], qd[sl], qdd[sl], base_acceleration=a)
        out[sl] = est.gains * (y @ est.inertial_parameters)
    return out


def model_torque(
    est: FittedMotion,
    q: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    base_acceleration: NDArray[np.float64] | None,
    up: NDArray[np.float64] | None = None,
    rigid: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """The logged torque the fit predicts: rigid body (`rigid` if already computed), load
    friction, joint terms, ripple."""
    ripple = ripple_coefficients(est.ripple)
    out = np.empty_like(q)
    for lo in range(0, q.shape[0], _ROWS):  # in blocks of rows: the temporaries stay small
        sl = slice(lo, lo + _ROWS)
        acc = base_acceleration
        if acc is not None and acc.ndim == 2:
            acc = acc[sl]
        r = rigid_torque(est, q[sl], qd[sl], qdd[sl], acc, up) if rigid is None else rigid[sl]
        joint = joint_torque(est.joint_parameters, qd[sl], qdd[sl])
        s = load_sign(r, est.joint_parameters[:, 0], qd[sl], qdd[sl])
        out[sl] = r + est.load_coefficient * s * r + joint + ripple_torque(q[sl], ripple)
    return out


def load_sign(
    rigid: NDArray[np.float64],
    armature: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The sign ``s = sign(r + J q̈) sign(q̇)`` of the load-friction term ``μ s r`` per sample
    and joint: +1 where the drive drives, -1 where it brakes, 0 at rest."""
    out: NDArray[np.float64] = np.sign(rigid + armature * qdd) * np.sign(qd)
    return out


def load_is_significant(
    n_used: NDArray[np.int64],
    plain_rms: NDArray[np.float64],
    loaded_rms: NDArray[np.float64],
) -> bool:
    """Likelihood-ratio test of the load-friction model: with a noise level per joint, twice
    the log-likelihood ratio is ``sum_j N_j log(rss_plain_j / rss_load_j)``, chi-square with
    2 n degrees of freedom (a second gain and noise level per joint) when the log carries no
    load friction."""
    tiny = np.finfo(np.float64).tiny
    ratio = np.maximum(plain_rms, tiny) / np.maximum(loaded_rms, tiny)
    stat = float(np.sum(n_used * 2.0 * np.log(ratio)))
    return chi2_sf(stat, 2 * n_used.size) < LOAD_FALSE_ALARM
