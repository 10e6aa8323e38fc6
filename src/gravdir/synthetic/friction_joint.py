"""A synthetic joint with asymmetric Stribeck, viscous and load-dependent friction.

The joint is written out term by term, independently of :mod:`gravdir.friction`, so that tests of
the estimators can fail. The drive torque of the joint following a trajectory is

.. math::

    \\tau = k\\,[J \\ddot q + \\tau_g + \\tau_f(\\dot q, \\tau_g)] + c_0 + \\varepsilon,

with friction :math:`\\tau_f = \\pm[F_c^\\pm + \\mu |\\tau_g| + (F_s^\\pm - F_c^\\pm)
\\exp(-|\\dot q / v_s^\\pm|^{\\delta^\\pm})] + F_v^\\pm \\dot q` (sign of :math:`\\dot q`, zero at
rest), torque gain :math:`k`, offset :math:`c_0` and white noise :math:`\\varepsilon`. The
load-dependent term :math:`\\mu |\\tau_g|` is the friction that CN 107423515 B identifies as
the difference between a gravity-free and a gravity-loaded run of the same excitation trajectory
(claims 1 and 4); the friction shape is that of Armstrong-Hélouvry, Dupont & Canudas de Wit (1994).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_angle_span,
    check_array,
    check_direction,
    check_positive,
    check_scalar,
    check_vectors,
)
from gravdir._constants import STANDARD_GRAVITY

__all__ = ["SyntheticFrictionJoint", "holding_torque", "panda_like_joint"]


@dataclass(frozen=True)
class SyntheticFrictionJoint:
    """A joint with asymmetric Stribeck + viscous + load-dependent friction, inertia and noise.

    Attributes
    ----------
    coulomb_positive, coulomb_negative : float
        Coulomb levels per direction of motion, N·m (magnitudes).
    static_positive, static_negative : float
        Breakaway levels per direction, N·m (magnitudes).
    stribeck_velocity_positive, stribeck_velocity_negative : float
        Stribeck velocities, rad/s.
    viscous_positive, viscous_negative : float
        Viscous coefficients, N·m·s/rad.
    exponent_positive, exponent_negative : float
        Stribeck exponents.
    load_coefficient : float
        μ: Coulomb friction added per N·m of gravity torque.
    inertia : float
        Reflected inertia of joint and distal links about the axis, kg·m².
    offset : float
        Torque-sensor offset, N·m.
    gain : float
        Torque-sensor gain (1: exact).
    noise_std : float
        Standard deviation of white torque noise, N·m.

    Examples
    --------
    Torque measured on a short excitation plan; on the constant-speed passes it is the friction
    alone (Coulomb plus viscous, the Stribeck bump has died out):

    >>> from gravdir.friction import excitation_trajectory
    >>> plan = excitation_trajectory(
    ...     0.0, 1.0, [0.1, 0.5], max_acceleration=1.0, sample_rate=100.0
    ... )
    >>> joint = SyntheticFrictionJoint()
    >>> torque = joint.measure(plan.q, plan.velocity, plan.acceleration)
    >>> torque.shape == plan.time.shape
    True
    >>> np.unique(torque[plan.cruising].round(2))
    array([-3.75, -2.83,  3.2 ,  4.  ])
    """

    coulomb_positive: float = 3.0
    coulomb_negative: float = 2.6
    static_positive: float = 4.2
    static_negative: float = 3.8
    stribeck_velocity_positive: float = 0.04
    stribeck_velocity_negative: float = 0.03
    viscous_positive: float = 2.0
    viscous_negative: float = 2.3
    exponent_positive: float = 2.0
    exponent_negative: float = 1.5
    load_coefficient: float = 0.03
    inertia: float = 0.8
    offset: float = 0.0
    gain: float = 1.0
    noise_std: float = 0.0

    def __post_init__(self) -> None:
        positive = (
            "stribeck_velocity_positive",
            "stribeck_velocity_negative",
            "exponent_positive",
            "exponent_negative",
            "gain",
        )
        for name in (f.name for f in dataclasses.fields(self)):
            value = getattr(self, name)
            if name in positive:
                checked = check_positive(value, name)
            elif name == "noise_std":
                checked = check_positive(value, name, allow_zero=True)
            else:
                checked = _real(value, name)
            object.__setattr__(self, name, checked)

    def friction(
        self, velocity: ArrayLike, gravity_torque: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Friction torque at `velocity` under `gravity_torque` (default none), shape (n,).

        Raises
        ------
        ValueError
            If `gravity_torque` is neither a scalar nor of the shape of `velocity`, an input is
            not real and finite, or the torque exceeds the float range.
        """
        v = check_array(velocity, "velocity")
        g = (
            np.zeros_like(v)
            if gravity_torque is None
            else check_array(gravity_torque, "gravity_torque")
        )
        if g.ndim and g.shape != v.shape:
            raise ValueError(
                f"Expected `gravity_torque` to be a scalar or of shape {v.shape}, got {g.shape}."
            )
        return _finite(lambda: self._friction(v, g), "`velocity` and `gravity_torque`")

    def _friction(self, v: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros(np.broadcast_shapes(v.shape, g.shape))
        v, g = np.broadcast_arrays(v, g)
        for sign, fc, fs, vs, fv, dl in (
            (
                1.0,
                self.coulomb_positive,
                self.static_positive,
                self.stribeck_velocity_positive,
                self.viscous_positive,
                self.exponent_positive,
            ),
            (
                -1.0,
                self.coulomb_negative,
                self.static_negative,
                self.stribeck_velocity_negative,
                self.viscous_negative,
                self.exponent_negative,
            ),
        ):
            moving = sign * v > 0
            speed = np.abs(v[moving])
            level = fc + self.load_coefficient * np.abs(g[moving])
            level = level + (fs - fc) * np.exp(-((speed / vs) ** dl))
            out[moving] = sign * level + fv * v[moving]
        return out

    def measure(
        self,
        q: ArrayLike,
        velocity: ArrayLike,
        acceleration: ArrayLike,
        *,
        gravity_torque: ArrayLike | None = None,
        rng: np.random.Generator | None = None,
    ) -> NDArray[np.float64]:
        """Drive torque measured while following a trajectory.

        Parameters
        ----------
        q, velocity, acceleration : array_like, shape (n,)
            The trajectory, e.g. an :class:`gravdir.friction.ExcitationPlan`'s arrays.
        gravity_torque : array_like, shape (n,), optional
            Gravity torque the drive supplies at each sample (zero in a gravity-free pose).
        rng : numpy.random.Generator, optional
            Noise source; required when `noise_std` > 0.

        Returns
        -------
        ndarray, shape (n,)
            Measured drive torque, N·m.

        Raises
        ------
        ValueError
            If the arrays are not of one shape (n,), real and finite, `rng` is missing (with
            noise) or not a Generator, or the torque exceeds the float range.

        Examples
        --------
        >>> joint = SyntheticFrictionJoint(inertia=0.0)
        >>> joint.measure([0.0, 0.0], [1.0, -1.0], [0.0, 0.0]).round(4)
        array([ 5. , -4.9])
        """
        q = check_array(q, "q")
        v = check_array(velocity, "velocity")
        a = check_array(acceleration, "acceleration")
        if not (q.shape == v.shape == a.shape) or q.ndim != 1:
            raise ValueError(
                "Expected `q`, `velocity`, `acceleration` of one shape (n,), got "
                f"{q.shape}, {v.shape}, {a.shape}."
            )
        g = np.zeros_like(v)
        if gravity_torque is not None:
            g = check_array(gravity_torque, "gravity_torque")
            if g.shape != v.shape:
                raise ValueError(f"Expected `gravity_torque` of shape {v.shape}, got {g.shape}.")
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(f"Expected `rng` to be a numpy Generator, got {type(rng).__name__}.")
        friction = self.friction(v, g)
        torque = _finite(
            lambda: self.gain * (self.inertia * a + g + friction) + self.offset,
            "`velocity`, `acceleration` and `gravity_torque`",
        )
        if self.noise_std > 0:
            if rng is None:
                raise ValueError("Expected `rng` (a numpy Generator) when noise_std > 0, got None.")
            torque = _finite(
                lambda: torque + rng.normal(0.0, self.noise_std, size=torque.shape), "`noise_std`"
            )
        return torque


def panda_like_joint(**changes: float) -> SyntheticFrictionJoint:
    """A joint with friction of the size published for the Franka Emika Panda's large joints.

    Gaz et al. (2019) fit :math:`\\tau_f = \\varphi_1 / (1 + e^{-\\varphi_2(\\dot q +
    \\varphi_3)}) - \\varphi_1 / (1 + e^{-\\varphi_2 \\varphi_3})` with, for joint 1,
    :math:`\\varphi_1 \\approx 0.54` N·m, :math:`\\varphi_2 \\approx 5.1` s/rad,
    :math:`\\varphi_3 \\approx 0.04` rad/s: an asymmetric, smooth curve of about half a newton
    metre. Geared arms of larger payload show Coulomb levels of 1-10 N·m; the defaults here
    (Coulomb about 3 N·m, breakaway 40% higher, Stribeck velocities 0.03-0.04 rad/s, viscous
    2 N·m·s/rad, μ = 0.03) sit in that range. Keyword arguments override fields.

    References
    ----------
    C. Gaz, M. Cognetti, A. Oliva, P. Robuffo Giordano, A. De Luca, "Dynamic identification of
    the Franka Emika Panda robot with retrieval of feasible parameters using penalty-based
    optimization", IEEE RA-L 4(4), 2019.

    Examples
    --------
    >>> panda_like_joint(noise_std=0.05).noise_std
    0.05
    """
    return SyntheticFrictionJoint(**changes)


def holding_torque(
    q: ArrayLike,
    *,
    joint_axis: ArrayLike,
    up: ArrayLike,
    first_moment: ArrayLike,
    gravity: float = STANDARD_GRAVITY,
) -> NDArray[np.float64]:
    """Torque a joint must apply to hold a distal body against gravity, by cross products.

    Parameters
    ----------
    q : array_like, shape (n,)
        Joint angle, rad.
    joint_axis : array_like, shape (3,)
        Joint axis, base frame, any non-zero length.
    up : array_like, shape (3,)
        Unit vector opposite to gravity, base frame.
    first_moment : array_like, shape (3,)
        m·(c − p) at joint angle 0: mass times the offset of the distal centre of mass from a
        point on the axis, kg·m, base frame.
    gravity : float, optional
        Acceleration of gravity, m/s² (default ``STANDARD_GRAVITY`` = 9.80665).

    Returns
    -------
    ndarray, shape (n,)
        :math:`\\tau = -a^\\top (R(a, q) s \\times (-g\\,u))`, N·m.

    Raises
    ------
    ValueError
        If `q` is not real and finite or spans more than two turns (degrees?), a vector
        is not shape (3,), real and finite, `joint_axis` is zero, `up` is not unit, `gravity` is not
        a positive number, or the torque exceeds the float range.

    Examples
    --------
    >>> holding_torque([0.0], joint_axis=[0, 1, 0], up=[0, 0, 1], first_moment=[1.0, 0, 0]).round(5)
    array([-9.80665])
    """
    q = check_array(q, "q")
    if q.size:
        check_angle_span(float(np.max(q)) - float(np.min(q)), "q")
    a = check_direction(joint_axis, "joint_axis")
    u = _vector3(up, "up")
    # The largest entry first: a vector of 1e300 entries is far from unit, and its norm would
    # overflow.
    biggest = float(np.max(np.abs(u)))
    with np.errstate(under="ignore"):
        off = abs(float(np.linalg.norm(u)) - 1.0) if 0.5 <= biggest <= 2.0 else math.inf
    if off > 1e-6:
        raise ValueError(f"Expected `up` to have unit norm (within 1e-06), got {u.tolist()}.")
    s = _vector3(first_moment, "first_moment")
    g0 = check_positive(gravity, "gravity")
    return _finite(lambda: _holding_torque(q, a, u, s, g0), "`first_moment` and `gravity`")


def _holding_torque(
    q: NDArray[np.float64],
    a: NDArray[np.float64],
    u: NDArray[np.float64],
    s: NDArray[np.float64],
    g0: float,
) -> NDArray[np.float64]:
    c, sn = np.cos(q)[..., None], np.sin(q)[..., None]
    # Rodrigues' rotation of s about a by q.
    s_q = (
        s * c
        + np.cross(a, s) * sn
        + np.outer(np.ravel(1 - c), a * float(a @ s)).reshape(q.shape + (3,))
    )
    force = -g0 * u
    torque_gravity = np.cross(s_q, force) @ a
    out: NDArray[np.float64] = -torque_gravity
    return out


def _real(x: Any, name: str) -> float:
    """One finite real number, not a bool or a string."""
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    return check_scalar(x, name)


def _vector3(x: ArrayLike, name: str) -> NDArray[np.float64]:
    v = check_vectors(x, name)
    if v.shape != (3,):
        raise ValueError(f"Expected `{name}` to have shape (3,), got {v.shape}.")
    return v


def _finite(compute: Callable[[], NDArray[np.float64]], names: str) -> NDArray[np.float64]:
    """The torque `compute` returns, refused with a ValueError naming `names` if not finite."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = compute()
    if not np.all(np.isfinite(out)):
        raise ValueError(f"Expected {names} where the torque is finite, got an overflow.")
    return out
