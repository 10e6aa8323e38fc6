"""An excitation planner for gravity: Fourier trajectories that minimise the bound on `up`.

The derivation is on the *Tracking* page of the documentation.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_count,
    check_direction,
    check_per_joint,
    check_positive,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._imports import IMPORT_LOCK
from gravdir._options import Friction
from gravdir._results import Result
from gravdir._sphere import cov_from_up_information, tangent_basis
from gravdir.dynamics import (
    BaseParameters,
    _refuse_overflow,
    _regressor_of_frames,
    base_parameters,
)
from gravdir.errors import DegenerateGeometryError
from gravdir.kinematics import SerialChain, link_frames
from gravdir.motion._design import drop_duplicate_armature, gain_basis, joint_columns
from gravdir.motion._fixed import gravity_columns
from gravdir.motion._inputs import (
    FRICTION_COLUMNS,
    check_chain,
    check_joint_parameters,
    friction_mask,
)

__all__ = ["MotionExcitationPlan", "plan_motion_excitation"]

# Samples per regressor evaluation: bounds the memory of one call to a few tens of MB.
_CHUNK = 2048


# ---------------------------------------------------------------------------------------------
# The excitation planner

# Caps that keep a call's work bounded.
MAX_HARMONICS = 20
MAX_GRID = 2000
# Samples the reported bound is computed on (more are accounted for by scaling).
_MAX_BOUND_SAMPLES = 20_000
_OVERFLOW = (
    "Expected `inertial_parameters`, `noise_std` and the limits at a scale that keeps the "
    "torques and the Fisher information finite, got an overflow."
)
_FD_STEP = 1e-6  # forward-difference step of a state variable (rad, rad/s, rad/s²)


class _Problem(NamedTuple):
    """Everything the objective and the constraints need, fixed during the optimisation."""

    chain: SerialChain
    base: BaseParameters
    theta: NDArray[np.float64]
    gains: NDArray[np.float64]
    joint: NDArray[np.float64]
    weight: NDArray[np.float64]  # (n,) 1 / noise_std
    up: NDArray[np.float64]
    tangent: NDArray[np.float64]  # (2, 3)
    gravity: float
    friction: Friction  # the estimator's option: which joint columns it fits
    gain_dirs: NDArray[np.float64]  # (n, n - 1)
    scale: float  # samples of the real trajectory per grid point


def _basis(
    time: NDArray[np.float64], omega: float, n_harmonics: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-joint maps (G, 1 + 2L) from ``(q0, a_1..a_L, b_1..b_L)`` to q, q̇ and q̈."""
    wl = omega * np.arange(1, n_harmonics + 1)
    s, c = np.sin(np.outer(time, wl)), np.cos(np.outer(time, wl))
    one, zero = np.ones((time.size, 1)), np.zeros((time.size, 1))
    pos = np.hstack([one, s / wl, -c / wl])
    vel = np.hstack([zero, c, s])
    acc = np.hstack([zero, -s * wl, c * wl])
    return pos, vel, acc


def _states(
    x: NDArray[np.float64], maps: tuple[NDArray[np.float64], ...], n: int
) -> tuple[NDArray[np.float64], ...]:
    """q, q̇, q̈ on a grid (G, n) from the flat coefficients `x` (n (1 + 2L),)."""
    coef = x.reshape(n, -1)
    return tuple(m @ coef.T for m in maps)


def _rows(
    prob: _Problem,
    q: NDArray[np.float64],
    qd: NDArray[np.float64],
    qdd: NDArray[np.float64],
    sign: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Whitened Jacobian rows (..., n, P) of the torques in every parameter, and the torques
    the model predicts (..., n). Columns: the two tangent directions of `up`, the base inertial
    parameters, the gain changes that keep the mean gain, the joint parameters."""
    n = prob.chain.n_joints
    lead = q.shape[:-1]
    flat = (-1, n)
    # The link frames once, for the regressor and the gravity columns.
    frames = link_frames(prob.chain, q.reshape(flat))
    acc = np.broadcast_to(prob.gravity * prob.up, frames.origins.shape[:-2] + (3,))
    y = _refuse_overflow(
        _regressor_of_frames(frames, qd.reshape(flat), qdd.reshape(flat), acc),
        "`q`, `velocity`, `acceleration` and the base acceleration",
    ).reshape(*lead, n, -1)
    cols = gravity_columns(frames, prob.theta).reshape(*lead, n, 3)
    rigid = y @ prob.theta
    eye = np.eye(n)
    tangent = (prob.gains * prob.gravity)[:, None] * (cols @ prob.tangent.T)
    inertial = prob.gains[:, None] * y[..., prob.base.independent]
    gain = (rigid[..., :, None] * eye) @ prob.gain_dirs
    columns = joint_columns(qd, qdd, sign)
    torque = rigid + np.einsum("...jc,jc->...j", columns, prob.joint)
    drop_duplicate_armature(columns)
    fitted = np.array(FRICTION_COLUMNS[prob.friction])
    joint_cols = columns[..., fitted][..., :, None, :] * eye[..., None]
    jac = np.concatenate(
        [tangent, inertial, gain, joint_cols.reshape(*lead, n, n * int(fitted.sum()))], axis=-1
    )
    return jac * prob.weight[:, None], torque


def _objective(
    prob: _Problem, q: NDArray[np.float64], qd: NDArray[np.float64], qdd: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """log tr C of the tangent covariance, its gradient in every state variable (G, 3n), the
    torques (G, n) and their gradient in the state of their own sample (G, n, 3n)."""
    g_n, n = q.shape
    sign = np.sign(qd)
    # The unperturbed state and one forward step in each state variable, all at once.
    k = 3 * n
    shift = np.zeros((k + 1, 3, n))
    shift[1:].reshape(k, 3 * n)[np.arange(k), np.arange(k)] = _FD_STEP
    state = np.stack([q, qd, qdd], axis=1)[None] + shift[:, None]  # (k + 1, G, 3, n)
    jac, tau = _rows(prob, state[:, :, 0], state[:, :, 1], state[:, :, 2], sign)
    j0 = jac[0].reshape(g_n * n, -1)
    info = prob.scale * (j0.T @ j0)
    d = np.sqrt(np.diag(info))
    d = np.where(d > 0, d, 1.0)
    scaled = info / np.outer(d, d) + 1e-12 * np.eye(d.size)
    inv = np.linalg.inv(scaled) / np.outer(d, d)
    trace = float(inv[0, 0] + inv[1, 1])
    # d tr(S F^-1 S^T) / dJ = -2 c J F^-1 S^T S F^-1, divided by the trace for the log.
    sel = inv[:, :2] @ inv[:2, :]
    grad_j = (-2.0 * prob.scale / trace) * (jac[0] @ sel)  # (G, n, P)
    djac = (jac[1:] - jac[0]) / _FD_STEP  # (k, G, n, P)
    grad_state = np.einsum("gjp,kgjp->gk", grad_j, djac)
    dtau = np.moveaxis((tau[1:] - tau[0]) / _FD_STEP, 0, -1)  # (G, n, k)
    return math.log(trace), grad_state, tau[0], dtau


class _Limits(NamedTuple):
    q: NDArray[np.float64]  # (n, 2)
    velocity: NDArray[np.float64]  # (n,)
    acceleration: NDArray[np.float64]  # (n,)
    torque: NDArray[np.float64] | None  # (n,)


def _margins(limits: _Limits, *states: Any) -> tuple[NDArray[np.float64], ...]:
    """Smallest distance of each joint to each limit over a grid (negative: violated), from
    q, q̇, q̈ and the torques (None without torque limits)."""
    q, qd, qdd, tau = states
    pos = np.minimum(q.min(axis=0) - limits.q[:, 0], limits.q[:, 1] - q.max(axis=0))
    vel = limits.velocity - np.abs(qd).max(axis=0)
    acc = limits.acceleration - np.abs(qdd).max(axis=0)
    no_torque = limits.torque is None or tau is None
    trq = np.full(q.shape[1], np.inf) if no_torque else limits.torque - np.abs(tau).max(axis=0)
    return pos, vel, acc, trq


def _model_torque(
    prob: _Problem, q: NDArray[np.float64], qd: NDArray[np.float64], qdd: NDArray[np.float64]
) -> NDArray[np.float64]:
    out = np.empty_like(q)
    for lo in range(0, q.shape[0], _CHUNK):
        sl = slice(lo, lo + _CHUNK)
        out[sl] = _rows(prob, q[sl], qd[sl], qdd[sl], np.sign(qd[sl]))[1]
    return out


def _feasible(
    prob: _Problem, limits: _Limits, x: NDArray[np.float64], maps: tuple[NDArray[np.float64], ...]
) -> bool:
    n = prob.chain.n_joints
    q, qd, qdd = _states(x, maps, n)
    tau = _model_torque(prob, q, qd, qdd) if limits.torque is not None else None
    return all(bool(np.all(m >= 0)) for m in _margins(limits, q, qd, qdd, tau))


def _shrink(
    prob: _Problem, limits: _Limits, x: NDArray[np.float64], maps: tuple[NDArray[np.float64], ...]
) -> NDArray[np.float64]:
    """`x` with its oscillating part scaled by the largest factor in [0, 1] that keeps every
    limit on the grid (bisection); the centre `q0` must itself be feasible."""
    if _feasible(prob, limits, x, maps):
        return x
    coef = x.reshape(prob.chain.n_joints, -1)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        trial = np.hstack([coef[:, :1], mid * coef[:, 1:]]).reshape(-1)
        lo, hi = (mid, hi) if _feasible(prob, limits, trial, maps) else (lo, mid)
    return np.hstack([coef[:, :1], lo * coef[:, 1:]]).reshape(-1)


def _chain_rule_state(
    grad_state: NDArray[np.float64], maps: tuple[NDArray[np.float64], ...], n: int
) -> NDArray[np.float64]:
    """Gradient in the coefficients (n (1 + 2L),) from the gradient in the states (G, 3n)."""
    parts = grad_state.reshape(grad_state.shape[0], 3, n)
    out = sum(m.T @ parts[:, i, :] for i, m in enumerate(maps))  # (1 + 2L, n)
    return np.asarray(out, dtype=np.float64).T.reshape(-1)


def _linear_constraints(
    limits: _Limits, maps: tuple[NDArray[np.float64], ...], n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``A x + c >= 0`` for the position, velocity and acceleration limits on a grid."""
    pos, vel, acc = maps
    g, width = pos.shape
    rows, consts = [], []
    for j in range(n):
        for m, lo, hi in (
            (pos, limits.q[j, 0], limits.q[j, 1]),
            (vel, -limits.velocity[j], limits.velocity[j]),
            (acc, -limits.acceleration[j], limits.acceleration[j]),
        ):
            block = np.zeros((2 * g, n * width))
            block[:g, j * width : (j + 1) * width] = m
            block[g:, j * width : (j + 1) * width] = -m
            rows.append(block)
            consts.append(np.concatenate([np.full(g, -lo), np.full(g, hi)]))
    return np.vstack(rows), np.concatenate(consts)


@dataclass(frozen=True, eq=False, repr=False)
class MotionExcitationPlan(Result):
    """A finite-Fourier trajectory planned by :func:`plan_motion_excitation`.

    Joint ``j`` follows (Swevers' form, :math:`\\omega = 2\\pi f`):

    .. math::

        q_j(t) = q_{0,j} + \\sum_{l=1}^{L} \\frac{a_{jl}}{l\\omega} \\sin(l\\omega t)
                 - \\frac{b_{jl}}{l\\omega} \\cos(l\\omega t), \\qquad
        \\dot q_j(t) = \\sum_l a_{jl} \\cos(l\\omega t) + b_{jl} \\sin(l\\omega t).

    Attributes
    ----------
    q0 : ndarray, shape (n,)
        :math:`q_{0,j}`, rad.
    sine_coefficients, cosine_coefficients : ndarray, shape (n, L)
        :math:`a_{jl}` and :math:`b_{jl}`, rad/s (amplitudes of the velocity).
    base_frequency : float
        :math:`f = 1 / \\text{duration}`, Hz: the trajectory repeats after `duration`.
    duration : float
        s.
    sample_rate : float
        Samples per second the bound assumes, Hz.
    crlb_deg : float
        Cramér-Rao bound on the RMS angular error of `up` estimated from the trajectory
        (:func:`crlb_up_from_motion` at `up_hint`, every other parameter unknown), degrees.
    initial_crlb_deg : float
        The same for the seeded feasible start of the optimisation.
    up_hint : ndarray, shape (3,)
        The direction the bound is computed at.
    up_information : ndarray, shape (3, 3)
        The Fisher information of `up` from the planned trajectory, 1/rad².
    position_margin, velocity_margin, acceleration_margin, torque_margin : ndarray, shape (n,)
        Smallest distance of each joint to its limit over a grid eight times finer than the one
        the optimiser enforced (rad, rad/s, rad/s², N·m; infinite without torque limits):
        non-negative.
    converged : bool
        Whether SLSQP met its tolerance.
    n_iter : int
        SLSQP iterations.
    """

    q0: NDArray[np.float64]
    sine_coefficients: NDArray[np.float64]
    cosine_coefficients: NDArray[np.float64]
    base_frequency: float
    duration: float
    sample_rate: float
    crlb_deg: float
    initial_crlb_deg: float
    up_hint: NDArray[np.float64]
    up_information: NDArray[np.float64]
    position_margin: NDArray[np.float64]
    velocity_margin: NDArray[np.float64]
    acceleration_margin: NDArray[np.float64]
    torque_margin: NDArray[np.float64]
    converged: bool
    n_iter: int

    _units: ClassVar[Mapping[str, str]] = {
        "q0": "rad",
        "sine_coefficients": "rad/s",
        "cosine_coefficients": "rad/s",
        "base_frequency": "Hz",
        "duration": "s",
        "sample_rate": "Hz",
        "crlb_deg": "deg",
        "initial_crlb_deg": "deg",
        "up_hint": "",
        "up_information": "1/rad²",
        "position_margin": "rad",
        "velocity_margin": "rad/s",
        "acceleration_margin": "rad/s²",
        "torque_margin": "N·m",
        "converged": "",
        "n_iter": "",
    }

    def trajectory(
        self, time: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Joint positions, velocities and accelerations at `time`.

        Parameters
        ----------
        time : array_like, shape (...)
            Times, s (any; the trajectory is periodic with period `duration`).

        Returns
        -------
        q, velocity, acceleration : ndarray, shape (..., n)
            rad, rad/s, rad/s².

        Raises
        ------
        ValueError
            If `time` is not numeric and finite.
        """
        t = check_array(time, "time")
        n, n_harmonics = self.sine_coefficients.shape
        maps = _basis(t.reshape(-1), 2 * np.pi * self.base_frequency, n_harmonics)
        x = np.hstack([self.q0[:, None], self.sine_coefficients, self.cosine_coefficients])
        q, qd, qdd = _states(x.reshape(-1), maps, n)
        return tuple(a.reshape(*t.shape, n) for a in (q, qd, qdd))  # type: ignore[return-value]

    def __repr__(self) -> str:
        n, n_harmonics = self.sine_coefficients.shape
        return (
            f"MotionExcitationPlan(n_joints={n}, harmonics={n_harmonics}, "
            f"duration={self.duration:.4g} s, crlb={self.crlb_deg:.3g}° "
            f"(start {self.initial_crlb_deg:.3g}°) at {self.sample_rate:g} Hz, "
            f"converged={self.converged})"
        )


def _check_limits(
    n: int,
    q: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike,
    torque: ArrayLike | None,
) -> _Limits:
    pos = check_array(q, "q_limits")
    if pos.shape != (n, 2) or not np.all(pos[:, 1] > pos[:, 0]):
        raise ValueError(f"Expected `q_limits` (lower, upper) shape ({n}, 2), got {pos!r}.")
    if np.abs(pos).max() > 4 * np.pi:
        raise ValueError(f"Expected `q_limits` in radians within ±4π, got {pos!r}: degrees?")
    torque_arr = None if torque is None else check_per_joint(torque, "torque_limits", n)
    vel = check_per_joint(velocity, "velocity_limits", n)
    return _Limits(pos, vel, check_per_joint(acceleration, "acceleration_limits", n), torque_arr)


def _inner(limits: _Limits, safety: float) -> _Limits:
    """The limits tightened by the fraction `safety` (of the half range for positions)."""
    half = 0.5 * (limits.q[:, 1] - limits.q[:, 0])
    pos = limits.q + safety * half[:, None] * np.array([1.0, -1.0])
    keep = 1.0 - safety
    torque = None if limits.torque is None else keep * limits.torque
    return _Limits(pos, keep * limits.velocity, keep * limits.acceleration, torque)


def plan_motion_excitation(
    chain: SerialChain,
    inertial_parameters: ArrayLike,
    *,
    duration: float,
    q_limits: ArrayLike,
    velocity_limits: ArrayLike,
    acceleration_limits: ArrayLike,
    noise_std: ArrayLike,
    torque_limits: ArrayLike | None = None,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    gains: ArrayLike | None = None,
    joint_parameters: ArrayLike | None = None,
    friction: Friction = "coulomb-viscous",
    n_harmonics: int = 5,
    sample_rate: float = 1000.0,
    gravity: float = STANDARD_GRAVITY,
    q_centre: ArrayLike | None = None,
    n_grid: int = 120,
    max_iter: int = 100,
    safety: float = 0.02,
    rng: np.random.Generator | None = None,
) -> MotionExcitationPlan:
    """Fourier trajectory, within joint limits, that minimises the Cramér-Rao bound on `up`.

    Parameters
    ----------
    chain : SerialChain
        The arm.
    inertial_parameters : array_like, shape (10 n,)
        A rough model of the links (from a URDF, :func:`gravdir.dynamics.inertial_parameters`,
        or a fit's `inertial_parameters`): the bound depends on it.
    duration : float
        Length (and period) of the trajectory, s, in (0, 3600].
    q_limits : array_like, shape (n, 2)
        Lower and upper joint limits, rad (within ±4π).
    velocity_limits, acceleration_limits : float or array_like, shape (n,)
        Largest joint speed (rad/s) and acceleration (rad/s²), positive.
    noise_std : float or array_like, shape (n,)
        Torque noise per joint, positive, in the units of the torques.
    torque_limits : float or array_like, shape (n,), optional
        Largest torque the model may ask of each joint, N·m (rigid-body dynamics on the base at
        `up_hint` plus the joint terms); default none.
    up_hint : array_like, shape (3,), optional
        The direction the bound is computed at (default upright).
    gains, joint_parameters : array_like, shape (n,) and (n, 5), optional
        Torque gains (default 1) and armature, Coulomb, viscous friction, offset and quadratic
        friction of each joint (default zeros; (n, 4) leaves the last out) of the model; the
        estimator fits them either way.
    friction : {"coulomb-viscous", "coulomb-viscous-quadratic", "coulomb", "none"}, optional
        The friction the estimator will fit (default ``"coulomb-viscous"``), as its `friction`.
    n_harmonics : int, optional
        Harmonics ``L`` per joint, 1 to 20 (default 5).
    sample_rate, gravity : float, optional
        Samples per second the bound assumes (default 1000); m/s² (default standard gravity).
    q_centre : array_like, shape (n,), optional
        Centre of the seeded start (default: the middle of `q_limits`); its static
        torques must respect `torque_limits`.
    n_grid : int, optional
        Points of the grid the bound and the torque limits are evaluated on, 20 to 2000 (default
        120); the position, velocity and acceleration limits are enforced on a grid of
        ``max(200, 40 L)`` points and checked on one eight times finer.
    max_iter : int, optional
        SLSQP iterations, 1 to 10000 (default 100).
    safety : float, optional
        The optimiser works to limits tightened by this fraction (default 0.02), so that the
        trajectory keeps the true limits between grid points; in [0, 0.5).
    rng : numpy.random.Generator, optional
        Source of the seeded start (default ``numpy.random.default_rng(0)``).

    Returns
    -------
    MotionExcitationPlan

    Raises
    ------
    ValueError
        If an argument has the wrong shape, type or range; `q_centre` lies outside the position
        limits or its static torques exceed `torque_limits`.
    DegenerateGeometryError
        If no trajectory within the limits informs `up` (an infinite bound).

    Notes
    -----
    The objective is :math:`\\log \\operatorname{tr} C`, :math:`C` the tangent-plane block of
    the inverse Fisher information of every parameter the estimator fits (the nuisance
    parameters profiled out), on a grid scaled to `sample_rate`, with an analytic gradient.
    SLSQP keeps the position, velocity and acceleration limits (linear in the coefficients),
    the torque limits, and rest at both ends (:math:`\\sum_l a_{jl} = 0`,
    :math:`\\sum_l l\\, b_{jl} = 0`), from a seeded feasible start. The derivation, the grids
    and the check are on the *Tracking* page of the documentation.

    References
    ----------
    J. Swevers, C. Ganseman, D. B. Tükel, J. De Schutter and H. Van Brussel, "Optimal robot
    excitation and identification", *IEEE Trans. Robot. Autom.* 13(5) (1997) 730--740 (the
    finite-Fourier trajectory); D. Kraft, "A software package for sequential quadratic
    programming", DFVLR-FB 88-28 (1988) (SLSQP).

    Examples
    --------
    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.dynamics import inertial_parameters
    >>> chain = chain_from_dh([0.3, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> theta = inertial_parameters([2.0, 3.0], [[0, 0, 0.1], [-0.2, 0, 0.05]],
    ...                             np.tile(np.eye(3) * 0.01, (2, 1, 1)))
    >>> plan = plan_motion_excitation(chain, theta, duration=4.0,
    ...     q_limits=[[-2, 2], [-1, 2]], velocity_limits=1.5, acceleration_limits=4.0,
    ...     noise_std=0.05, n_harmonics=3, max_iter=30)
    >>> bool(plan.crlb_deg < plan.initial_crlb_deg), bool(plan.velocity_margin.min() >= 0)
    (True, True)
    """
    chain = check_chain(chain)
    n = chain.n_joints
    theta = check_array(inertial_parameters, "inertial_parameters")
    if theta.shape != (10 * n,):
        raise ValueError(
            f"Expected `inertial_parameters` to have shape ({10 * n},), got {theta.shape}."
        )
    span = check_positive(duration, "duration")
    if span > 3600:
        raise ValueError(f"Expected `duration` at most 3600 s, got {span:g}.")
    limits = _check_limits(n, q_limits, velocity_limits, acceleration_limits, torque_limits)
    sigma = check_per_joint(noise_std, "noise_std", n)
    up = check_direction(up_hint, "up_hint")
    k = np.ones(n) if gains is None else check_per_joint(gains, "gains", n)
    joint = np.zeros((n, 5)) if joint_parameters is None else joint_parameters
    joint = check_joint_parameters(joint, n)
    friction_mask(friction)  # checked: one of the options the estimator implements
    n_harm = check_count(n_harmonics, "n_harmonics", maximum=MAX_HARMONICS)
    rate = check_positive(sample_rate, "sample_rate")
    g = check_positive(gravity, "gravity")
    grid = check_count(n_grid, "n_grid", minimum=20, maximum=MAX_GRID)
    iters = check_count(max_iter, "max_iter", maximum=10_000)
    margin = check_positive(safety, "safety", allow_zero=True)
    if margin >= 0.5:
        raise ValueError(f"Expected `safety` in [0, 0.5), got {margin:g}.")
    gen = np.random.default_rng(0) if rng is None else rng
    if not isinstance(gen, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {rng!r}.")
    centre = (
        limits.q.mean(axis=1)
        if q_centre is None
        else check_per_joint(q_centre, "q_centre", n, scalar=False, sign="any")
    )

    with np.errstate(under="ignore", over="raise", invalid="raise"), overflow_error(_OVERFLOW):
        basis, dirs, scale = tangent_basis(up), gain_basis(n), rate * span / grid
        args = (theta, k / k.mean(), joint, 1.0 / sigma, up, basis, g, friction, dirs, scale)
        prob = _Problem(chain, base_parameters(chain), *args)
        omega = 2.0 * np.pi / span
        inner = _inner(limits, margin)
        n_kin = max(200, 40 * n_harm)
        info_maps = _basis((np.arange(grid) + 0.5) * span / grid, omega, n_harm)
        kin_maps = _basis(np.arange(n_kin) * span / n_kin, omega, n_harm)
        fine_maps = _basis(np.arange(8 * n_kin) * span / (8 * n_kin), omega, n_harm)
        start = _seeded_start(prob, inner, centre, kin_maps, n_harm, gen)
        maps = (info_maps, kin_maps, fine_maps)
        x, success, n_iter = _optimise(prob, limits, inner, start, maps, grid, iters)
        return _plan(prob, limits, x, start, fine_maps, n_harm, span, rate, success, n_iter)


def _seeded_start(
    prob: _Problem,
    inner: _Limits,
    centre: NDArray[np.float64],
    kin_maps: tuple[NDArray[np.float64], ...],
    n_harm: int,
    gen: np.random.Generator,
) -> NDArray[np.float64]:
    """A feasible start within the `inner` limits: random coefficients decaying as 1/l about
    `centre`, at rest at both ends, scaled to the velocity limits and shrunk to fit.

    Raises
    ------
    ValueError
        If `centre` itself violates the limits.
    """
    n, width = prob.chain.n_joints, 1 + 2 * n_harm
    x0 = np.zeros((n, width))
    x0[:, 0] = centre
    if not _feasible(prob, inner, x0.reshape(-1), kin_maps):
        raise ValueError(
            "Expected `q_centre` (default: the middle of `q_limits`) inside the "
            "position limits, its static torques within `torque_limits`; it violates them."
        )
    ell = np.arange(1, n_harm + 1)
    a = gen.normal(size=(n, n_harm)) / ell
    b = gen.normal(size=(n, n_harm)) / ell
    a -= a.mean(axis=1, keepdims=True)  # sum_l a_l = 0: no speed at t = 0
    b -= np.outer(b @ ell, ell) / (ell @ ell)  # sum_l l b_l = 0: no acceleration at t = 0
    scale = np.max(
        np.abs(_states(np.hstack([0 * centre[:, None], a, b]).reshape(-1), kin_maps, n)[1]),
        axis=0,
    )
    x0[:, 1:] = np.hstack([a, b]) * (inner.velocity / np.maximum(scale, 1e-12))[:, None]
    start = _shrink(prob, inner, x0.reshape(-1), kin_maps).reshape(n, width)
    start[:, 1:] *= 0.9  # into the interior
    return _shrink(prob, inner, start.reshape(-1), kin_maps)


def _optimise(
    prob: _Problem,
    limits: _Limits,
    inner: _Limits,
    start: NDArray[np.float64],
    maps: tuple[tuple[NDArray[np.float64], ...], ...],
    grid: int,
    iters: int,
) -> tuple[NDArray[np.float64], bool, int]:
    """SLSQP from `start` within the `inner` limits, shrunk into `limits` on the fine grid; the
    coefficients (`start` if no better), whether SLSQP converged and its iterations.

    `maps` are the bases of the information grid, the kinematic-limit grid and the fine grid.
    """
    info_maps, kin_maps, fine_maps = maps
    n = prob.chain.n_joints
    width = info_maps[0].shape[1]  # 1 + 2 L coefficients per joint
    n_harm = (width - 1) // 2
    ell = np.arange(1, n_harm + 1)
    cache: dict[bytes, Any] = {}

    def evaluate(x: NDArray[np.float64]) -> Any:
        key = x.tobytes()
        if key not in cache:
            cache.clear()
            value, grad_state, tau, dtau = _objective(prob, *_states(x, info_maps, n))
            grad = _chain_rule_state(grad_state, info_maps, n)
            # d tau_{g,j} / d x: (G, n, n, width) -> rows (G n), columns n width.
            dt = dtau.reshape(grid, n, 3, n)
            jac = sum(dt[:, :, i, :, None] * m[:, None, None, :] for i, m in enumerate(info_maps))
            cache[key] = (value, grad, tau, np.asarray(jac).reshape(grid * n, n * width))
        return cache[key]

    a_lin, c_lin = _linear_constraints(inner, kin_maps, n)
    constraints: list[dict[str, Any]] = [
        {"type": "ineq", "fun": lambda x: a_lin @ x + c_lin, "jac": lambda x: a_lin}
    ]
    rest = np.zeros((2 * n, n * width))
    for j in range(n):
        rest[2 * j, j * width + 1 : j * width + 1 + n_harm] = 1.0
        rest[2 * j + 1, j * width + 1 + n_harm : (j + 1) * width] = ell
    constraints.append({"type": "eq", "fun": lambda x: rest @ x, "jac": lambda x: rest})
    if inner.torque is not None:
        lim = np.tile(inner.torque, grid)
        constraints.append(
            {
                "type": "ineq",
                "fun": lambda x: np.concatenate(
                    [lim - evaluate(x)[2].reshape(-1), lim + evaluate(x)[2].reshape(-1)]
                ),
                "jac": lambda x: np.vstack([-evaluate(x)[3], evaluate(x)[3]]),
            }
        )
    with IMPORT_LOCK:
        from scipy.optimize import minimize  # slow to import: only when needed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(
            lambda x: evaluate(x)[0],
            start,
            jac=lambda x: evaluate(x)[1],
            method="SLSQP",
            constraints=constraints,
            options={"maxiter": iters, "ftol": 1e-6},
        )
    x = _shrink(prob, limits, np.asarray(res.x, dtype=np.float64), fine_maps)
    if not evaluate(x)[0] < evaluate(start)[0]:
        x = start
    return x, bool(res.success), int(res.nit)


@contextmanager
def overflow_error(message: str) -> Iterator[None]:
    """Turn a floating-point overflow inside the block into a ``ValueError(message)``."""
    try:
        yield
    except FloatingPointError:
        raise ValueError(message) from None


def _bound(
    prob: _Problem, x: NDArray[np.float64], n_harm: int, span: float, rate: float
) -> NDArray[np.float64]:
    """The information of `up` by :func:`crlb_up_from_motion` at `rate` (sub-sampled)."""
    from gravdir.motion._bound import crlb_up_from_motion

    n = prob.chain.n_joints
    n_samples = max(int(span * rate), 1)
    used = min(n_samples, _MAX_BOUND_SAMPLES)
    maps = _basis(np.arange(used) * span / used, 2 * np.pi / span, n_harm)
    q, qd, qdd = _states(x, maps, n)
    bound = crlb_up_from_motion(
        prob.chain,
        q,
        velocity=qd,
        acceleration=qdd,
        inertial_parameters=prob.theta,
        joint_parameters=prob.joint,
        gains=prob.gains,
        noise_std=1.0 / prob.weight,
        up_hint=prob.up,
        gravity=prob.gravity,
        friction=prob.friction,
    )
    return np.asarray(bound.up_information, dtype=np.float64) * (n_samples / used)


def _plan(
    prob: _Problem,
    limits: _Limits,
    x: NDArray[np.float64],
    start: NDArray[np.float64],
    fine_maps: tuple[NDArray[np.float64], ...],
    n_harm: int,
    span: float,
    rate: float,
    converged: bool,
    n_iter: int,
) -> MotionExcitationPlan:
    n = prob.chain.n_joints
    q, qd, qdd = _states(x, fine_maps, n)
    tau = _model_torque(prob, q, qd, qdd) if limits.torque is not None else None
    pos, vel, acc, trq = _margins(limits, q, qd, qdd, tau)
    info = _bound(prob, x, n_harm, span, rate)
    info0 = _bound(prob, start, n_harm, span, rate)
    std = [
        math.degrees(math.sqrt(float(np.trace(cov_from_up_information(prob.up, i)))))
        for i in (info, info0)
    ]
    if not math.isfinite(std[0]):
        raise DegenerateGeometryError(
            "Expected `inertial_parameters` and `noise_std` to let a trajectory within the limits "
            "inform `up`, got an infinite bound (no gravity torque, or the limits allow no motion)."
        )
    coef = x.reshape(n, -1)
    return MotionExcitationPlan(
        coef[:, 0].copy(),
        coef[:, 1 : 1 + n_harm].copy(),
        coef[:, 1 + n_harm :].copy(),
        1.0 / span,
        span,
        rate,
        std[0],
        std[1],
        prob.up.copy(),
        info,
        pos,
        vel,
        acc,
        trq,
        converged,
        n_iter,
    )
