"""The model a fit holds fixed, for the tracker of :mod:`gravdir.motion._track`.

:class:`FixedModel` is what the tracker takes from a :class:`MotionFit`;
:func:`gravity_columns` is the arm's gravity torque per unit base acceleration,
:func:`affine_torque` the measured torque's affine form in `up` and :func:`hidden_directions`
the mass moments the fit could not see. The derivation is on the *Tracking* page of the
documentation.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import check_array, check_positive
from gravdir._constants import STANDARD_GRAVITY
from gravdir.dynamics import _regressor_of_frames, _rest_regressors
from gravdir.kinematics import ChainFrames, SerialChain, link_frames
from gravdir.motion._design import joint_torque
from gravdir.motion._inputs import check_chain, check_joint_parameters
from gravdir.motion._load import load_sign
from gravdir.motion._ripple import ripple_coefficients, ripple_torque

__all__ = ["FixedModel", "affine_torque", "fixed_model", "gravity_columns", "hidden_directions"]

# Samples per regressor evaluation: bounds the memory of one call to a few tens of MB.
_CHUNK = 2048


class FixedModel(NamedTuple):
    """What the tracker takes from a fit: the parameters it holds fixed."""

    theta: NDArray[np.float64]  # (10 n,) inertial parameters, pinocchio order
    gains: NDArray[np.float64]  # (n,)
    joint: NDArray[np.float64]  # (n, 5) armature, Coulomb, viscous, offset, quadratic
    noise_std: NDArray[np.float64]  # (n,)
    up: NDArray[np.float64]  # (3,)
    fingerprint: frozenset[str]
    chain: SerialChain
    gravity: float
    load: NDArray[np.float64]  # (n,) load-friction coefficient (zero without the term)
    ripple: NDArray[np.float64]  # (r, 4) rows (joint, order, a, b) of a sin(k q) + b cos(k q)


def _field(fit: Any, name: str, shape: tuple[int, ...] | None = None) -> NDArray[np.float64]:
    if not hasattr(fit, name):
        raise ValueError(
            f"Expected `fit` to be a MotionFit (with `{name}`), got {type(fit).__name__}."
        )
    arr = check_array(getattr(fit, name), f"fit.{name}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"Expected `fit.{name}` to have shape {shape}, got {arr.shape}.")
    return arr


def fixed_model(fit: Any) -> FixedModel:
    """The parameters of a :class:`MotionFit` (or of an object with its fields)."""
    if not hasattr(fit, "chain"):
        raise ValueError(
            f"Expected `fit` to be a MotionFit (with `chain`), got {type(fit).__name__}."
        )
    chain = check_chain(fit.chain)
    n = chain.n_joints
    theta = _field(fit, "inertial_parameters", (10 * n,))
    gains = _field(fit, "gains", (n,))
    joint = check_joint_parameters(_field(fit, "joint_parameters"), n, "fit.joint_parameters")
    noise = _field(fit, "noise_std", (n,))
    up = _field(fit, "up", (3,))
    if not np.all(noise > 0):
        raise ValueError(f"Expected `fit.noise_std` to be positive, got {noise.min():.3g}.")
    fingerprint = frozenset(getattr(fit, "fingerprint", frozenset()))
    gravity = check_positive(getattr(fit, "gravity", STANDARD_GRAVITY), "fit.gravity")
    unit = up / np.linalg.norm(up)
    # A fit without the load-friction term (or a stand-in without the field) carries zeros.
    load = _field(fit, "load_coefficient", (n,)) if hasattr(fit, "load_coefficient") else None
    load = np.zeros(n) if load is None else load
    ripple = np.zeros((0, 4))
    if hasattr(fit, "ripple"):
        rows = check_array(fit.ripple, "fit.ripple")
        if rows.ndim != 2 or rows.shape[1] != 4 or not np.all(np.isin(rows[:, 0], np.arange(n))):
            raise ValueError(
                f"Expected `fit.ripple` to have rows (joint, order, amplitude, phase) with "
                f"joints 0 to {n - 1}, got shape {rows.shape}."
            )
        ripple = ripple_coefficients(rows)
    return FixedModel(theta, gains, joint, noise, unit, fingerprint, chain, gravity, load, ripple)


def gravity_columns(frames: ChainFrames, theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """Joint torques per unit base acceleration at rest, (N, n, 3): ``tau_j = B_j . a0``, at
    the chain's link `frames` (:func:`~gravdir.kinematics.link_frames` of N samples).

    With the arm at rest under a base acceleration :math:`a_0`, link ``i`` carries the force
    :math:`m_i a_0` at its origin and the moment :math:`(R_i h_i) \\times a_0`, so
    :math:`\\tau_j = (z_j \\times s_j) \\cdot a_0` with :math:`s_j = \\sum_{i \\ge j} m_i (o_i -
    p_j) + R_i h_i`: the inverse-dynamics regressor at zero speed and acceleration
    (``gravdir.dynamics._rest_regressors``) times :math:`\\theta`, summed over the links
    without forming it.
    """
    n = frames.origins.shape[-2]
    par = theta.reshape(n, 10)
    with np.errstate(under="ignore"):
        h = np.einsum("...iab,ib->...ia", frames.rotations, par[:, 1:4])
        s = par[:, 0, None] * frames.origins + h
        tail = np.cumsum(s[..., ::-1, :], axis=-2)[..., ::-1, :]
        mass = np.cumsum(par[::-1, 0])[::-1]
        s_j = tail - mass[:, None] * frames.joint_points
        return np.asarray(np.cross(frames.joint_axes, s_j), dtype=np.float64)


def affine_torque(
    model: FixedModel,
    q: NDArray[np.float64],
    velocity: NDArray[np.float64],
    acceleration: NDArray[np.float64],
    base_acceleration: NDArray[np.float64] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Offset (N, n) and slope (N, n, 3) of the measured torque in `up`: ``tau = a + B up``.

    The model of :class:`MotionFit`:
    :math:`\\tau_j = r_j + \\mu_j s_j r_j + J_j \\ddot q_j
    + F_{c,j} \\operatorname{sign} \\dot q_j + F_{v,j} \\dot q_j + \\tau_{0,j}` plus the gear
    ripple, with the
    rigid-body torque :math:`r_j = \\kappa_j (Y(q, \\dot q, \\ddot q, g\\,u + a_b)\\,\\theta)_j`,
    linear in the base acceleration, and :math:`s_j = \\operatorname{sign}(r_j + J_j \\ddot q_j)
    \\operatorname{sign} \\dot q_j` (module ``_load``). The load-friction term is affine in `up`
    once that sign is taken at the fit's `up` (it changes only where its argument crosses
    zero): a factor :math:`1 + \\mu_j s_j` on :math:`r_j`.
    """
    n_samples, n = q.shape
    offset = np.empty((n_samples, n))
    slope = np.empty((n_samples, n, 3))
    for lo in range(0, n_samples, _CHUNK):
        sl = slice(lo, min(lo + _CHUNK, n_samples))
        zero = np.zeros((sl.stop - lo, 3))
        frames = link_frames(model.chain, q[sl])
        y = _regressor_of_frames(frames, velocity[sl], acceleration[sl], zero)
        cols = gravity_columns(frames, model.theta)
        rigid = y @ model.theta
        if base_acceleration is not None:
            rigid = rigid + np.einsum("tjk,tk->tj", cols, base_acceleration[sl])
        offset[sl] = model.gains * rigid
        slope[sl] = (model.gains * model.gravity)[:, None] * cols
        if np.any(model.load):
            at_fit = offset[sl] + slope[sl] @ model.up
            sign = load_sign(at_fit, model.joint[:, 0], velocity[sl], acceleration[sl])
            factor = 1.0 + model.load * sign
            offset[sl] *= factor
            slope[sl] *= factor[..., None]
    offset += joint_torque(model.joint, velocity, acceleration)
    if model.ripple.size:
        offset += ripple_torque(q, model.ripple)
    return offset, slope


def hidden_directions(model: FixedModel, tol: float = 0.02) -> NDArray[np.float64]:
    """Combinations of the masses and first moments (10 n, k; pinocchio's order) that move the
    torques at the fit's `up` by less than `tol` of their average effect at random directions.

    An upright base hides two (link 1's horizontal first moments, and with them the moments
    along the parallel axes that follow): the fit leaves them at whatever its pseudo-inverse
    gave, and they reach the torques once the base tilts. Each is bilinear with `up` in the
    torque, and each window profiles the three products with the components of `up` out as
    free linear terms, so the tracker is unbiased on any later tilt at the cost of the
    information those terms carried.
    """
    n = model.chain.n_joints
    q = np.random.default_rng(0).uniform(-np.pi, np.pi, (60, n))
    index = (10 * np.arange(n)[:, None] + np.arange(4)).reshape(-1)  # masses, first moments
    unit = np.zeros((4 * n, 10 * n))
    unit[np.arange(4 * n), index] = 1.0
    # Each column's torque per unit base acceleration at rest, (t, j, axis, column).
    cols = np.moveaxis(_rest_regressors(link_frames(model.chain, q))[..., index], 0, 2)
    cols *= (model.gains / model.noise_std)[:, None, None]
    ups = np.random.default_rng(1).normal(size=(6, 3))
    ups /= np.linalg.norm(ups, axis=-1, keepdims=True)  # the average effect over 6 directions:
    m_any = np.einsum("tjae,ka->ktje", cols, ups).reshape(-1, 4 * n) / np.sqrt(6.0)
    _, sv, vt = np.linalg.svd(m_any, full_matrices=False)
    keep = sv > 1e-9 * sv[0]
    white = vt[keep].T / sv[keep]  # directions of unit average effect
    m_fit = np.einsum("tjae,a->tje", cols, model.up).reshape(-1, 4 * n)
    _, sv_fit, vt_fit = np.linalg.svd(m_fit @ white, full_matrices=False)
    small = vt_fit[sv_fit < tol].T  # (r, k), in the whitened coordinates
    directions = unit.T @ (white @ small)
    return np.asarray(directions / np.linalg.norm(directions, axis=0), dtype=np.float64)
