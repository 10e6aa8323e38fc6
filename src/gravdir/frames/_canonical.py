"""The two reference angles of the canonical two-joint model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_option
from gravdir._results import Result
from gravdir.frames._common import (
    _UNIT_ATOL,
    _VERTICAL_ATOL,
    _ZERO_OPTIONS,
    Zero,
    _check_angles,
    _deg_text,
    _own,
    _wrap_pi,
)
from gravdir.frames._tilt import _up, tilt_azimuth_from_up

__all__ = ["CanonicalAngles", "canonical_from_up", "up_from_canonical"]


def up_from_canonical(
    theta1: ArrayLike,
    theta2: ArrayLike,
    *,
    arm_azimuth: ArrayLike = 0.0,
    zero: Zero = "unstable",
) -> NDArray[np.float64]:
    """`up` from the two reference angles of the canonical two-joint model.

    Parameters
    ----------
    theta1 : array_like, shape (...)
        Joint-1 position, radians, within ±4π, at which the arm's horizontal direction points
        towards the horizontal component of `up` (``zero="unstable"``: the gravity zero of
        joint 1 with the distal mass highest) or away from it (``zero="stable"``: the zero with
        the mass lowest).
    theta2 : array_like, shape (...)
        Angle between `up` and the joint-1 axis (base +z), radians, in [0, pi].
    arm_azimuth : array_like, shape (...), optional
        Azimuth of the arm's horizontal direction at joint-1 position 0, from base +x towards
        +y, radians, within ±4π (default 0: the arm points along +x at ``q1 = 0``).
    zero : {"unstable", "stable"}, optional
        Which of the two gravity zeros of joint 1 `theta1` names (default "unstable").

    Returns
    -------
    ndarray, shape (..., 3)
        ``up = (sin theta2 cos psi, sin theta2 sin psi, cos theta2)`` with
        ``psi = theta1 + arm_azimuth`` (``+ pi`` for ``zero="stable"``).

    Raises
    ------
    ValueError
        If an angle is not numeric and finite (booleans and numeric strings are refused),
        `theta2` lies outside [0, pi] or `theta1` or `arm_azimuth` beyond ±4π (beyond pi, or
        4π, the numbers are taken for degrees: the message ends in "degrees?"), the angles do
        not broadcast, or `zero` is not an option.

    Notes
    -----
    Joint 1 turns about base +z; at joint-1 position :math:`q_1` the arm's horizontal
    direction is :math:`h = (\\cos(q_1 + a_0), \\sin(q_1 + a_0), 0)`, :math:`a_0` =
    `arm_azimuth`. The gravity torque on joint 1 vanishes where the distal centre of mass lies
    in the vertical plane through the joint-1 axis, i.e. where :math:`h` is parallel to the
    horizontal part of `up`: at :math:`q_1 + a_0 = \\psi` (mass highest, unstable) and at
    :math:`\\psi + \\pi` (mass lowest, stable), with :math:`\\psi` the azimuth of `up`. In the
    notation of US 11,446,825 B2 (Equation 1) :math:`\\theta_1 = -\\varphi_1` or
    :math:`\\pi - \\varphi_1`, the two zeros of the joint-1 sinusoid
    :math:`A_1 \\sin(q_1 + \\varphi_1)`; for a point mass whose horizontal offset along :math:`h`
    is positive, :math:`\\varphi_1 = \\pi - \\psi`, so the unstable zero is
    :math:`\\theta_1 = \\pi - \\varphi_1`.

    References
    ----------
    US 11,446,825 B2: the reference angles θ1 (a joint-1 gravity zero, Equation 1 and
    Equations 6–8) and θ2 (the angle between gravity and the joint-1 axis) of FIGS. 5, 8, 9
    and 11. The canonical two-joint model is set out in docs/conventions.md.

    Examples
    --------
    >>> up_from_canonical(np.pi / 2, np.pi / 2).round(12) + 0.0
    array([0., 1., 0.])
    >>> up_from_canonical(np.pi / 2, np.pi / 2, zero="stable").round(12) + 0.0
    array([ 0., -1.,  0.])
    """
    check_option(zero, "zero", _ZERO_OPTIONS)
    t1 = _check_angles(theta1, "theta1", "joint positions")
    t2 = _check_angles(theta2, "theta2", "tilts")
    a0 = _check_angles(arm_azimuth, "arm_azimuth", "azimuths")
    try:
        shape = np.broadcast_shapes(t1.shape, t2.shape, a0.shape)
    except ValueError:
        raise ValueError(
            "Expected `theta1`, `theta2` and `arm_azimuth` to broadcast, got shapes "
            f"{t1.shape}, {t2.shape} and {a0.shape}."
        ) from None
    # psi may reach 8π + π: it is a sum of checked angles, not an azimuth given by the caller.
    psi = t1 + a0 + (np.pi if zero == "stable" else 0.0)
    return _up(np.broadcast_to(t2, shape), np.broadcast_to(psi, shape))


@dataclass(frozen=True, eq=False, repr=False)
class CanonicalAngles(Result):
    """The reference angles of the canonical two-joint model.

    Attributes
    ----------
    theta1 : ndarray or float, shape (...)
        Joint-1 position of the chosen gravity zero, radians, in (-pi, pi].
    theta2 : ndarray or float, shape (...)
        Angle between `up` and the joint-1 axis, radians, in [0, pi].
    theta1_defined : ndarray or bool, shape (...)
        False where `up` is parallel to the joint-1 axis: every joint-1 position is then a
        gravity zero and `theta1` was computed from azimuth 0 by convention.
    zero : {"unstable", "stable"}
        Which gravity zero `theta1` names.

    References
    ----------
    US 11,446,825 B2, the reference angles θ1 and θ2 of FIGS. 5, 8, 9 and 11.
    """

    _units = {
        "theta1": "rad", "theta2": "rad",
    }

    theta1: NDArray[np.float64]
    theta2: NDArray[np.float64]
    theta1_defined: NDArray[np.bool_]
    zero: Zero

    def __post_init__(self) -> None:
        check_option(self.zero, "zero", _ZERO_OPTIONS)
        object.__setattr__(self, "theta1", _own(self.theta1, np.float64))
        object.__setattr__(self, "theta2", _own(self.theta2, np.float64))
        object.__setattr__(self, "theta1_defined", _own(self.theta1_defined, np.bool_))
        super().__post_init__()

    @property
    def theta1_deg(self) -> NDArray[np.float64]:
        """`theta1` in degrees."""
        return np.degrees(self.theta1)

    @property
    def theta2_deg(self) -> NDArray[np.float64]:
        """`theta2` in degrees."""
        return np.degrees(self.theta2)

    def __repr__(self) -> str:
        return (
            f"CanonicalAngles(theta1_deg={_deg_text(self.theta1)}, "
            f"theta2_deg={_deg_text(self.theta2)}, zero={self.zero!r})"
        )


def canonical_from_up(
    up: ArrayLike,
    *,
    arm_azimuth: ArrayLike = 0.0,
    zero: Zero = "unstable",
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> CanonicalAngles:
    """The reference angles of the canonical two-joint model for a given `up`.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    arm_azimuth : array_like, shape (...), optional
        Azimuth of the arm's horizontal direction at joint-1 position 0, radians, within ±4π
        (default 0).
    zero : {"unstable", "stable"}, optional
        Which gravity zero of joint 1 `theta1` names (default "unstable").
    atol, normalize, vertical_atol
        As in :func:`tilt_azimuth_from_up`.

    Returns
    -------
    CanonicalAngles
        ``theta1`` wrapped to (-pi, pi], ``theta2`` in [0, pi], and ``theta1_defined``.

    Raises
    ------
    ValueError
        If `up` or `arm_azimuth` is invalid (an `arm_azimuth` beyond ±4π is taken for degrees:
        the message ends in "degrees?"), they do not broadcast, or `zero` is not an option.

    Notes
    -----
    The inverse of :func:`up_from_canonical`: :math:`\\theta_2` is the tilt and
    :math:`\\theta_1 = \\psi - a_0` (:math:`- \\pi` for the stable zero), wrapped, with
    :math:`\\psi` the azimuth of `up`.

    References
    ----------
    US 11,446,825 B2, Equation 1 and FIGS. 5, 8, 9 and 11 (the reference angles θ1, θ2).

    Examples
    --------
    >>> canonical_from_up(up_from_canonical(0.4, 0.1, zero="stable"), zero="stable")
    CanonicalAngles(theta1_deg=22.9183, theta2_deg=5.7296, zero='stable')
    """
    check_option(zero, "zero", _ZERO_OPTIONS)
    a0 = _check_angles(arm_azimuth, "arm_azimuth", "azimuths")
    ta = tilt_azimuth_from_up(up, atol=atol, normalize=normalize, vertical_atol=vertical_atol)
    tilt = np.asarray(ta.tilt, dtype=np.float64)
    try:
        shape = np.broadcast_shapes(tilt.shape, a0.shape)
    except ValueError:
        raise ValueError(
            "Expected `up` (without its last axis) and `arm_azimuth` to broadcast, got shapes "
            f"{tilt.shape} and {a0.shape}."
        ) from None
    theta1 = _wrap_pi(ta.azimuth - a0 - (np.pi if zero == "stable" else 0.0))
    return CanonicalAngles(
        theta1=np.broadcast_to(theta1, shape),
        theta2=np.broadcast_to(tilt, shape),
        theta1_defined=np.broadcast_to(ta.azimuth_defined, shape),
        zero=zero,
    )
