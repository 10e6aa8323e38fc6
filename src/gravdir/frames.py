"""Frames and directions: `up` in the base frame and in target frames.

Conventions: `up` is the unit vector opposite to gravity, in the robot's base frame. A rotation
named ``base_from_target`` maps coordinates in the target frame to coordinates in the base frame
(its columns are the target frame's axes written in the base frame), so
``v_base = base_from_target @ v_target`` and ``v_target = base_from_target.T @ v_base``.

The module converts `up` to and from its equivalent descriptions:

* tilt and azimuth, ``up = (sin t cos a, sin t sin a, cos t)``
  (:func:`up_from_tilt_azimuth`, :func:`tilt_from_up`, :func:`azimuth_from_up`,
  :func:`tilt_azimuth_from_up`);
* the minimal rotation that maps base +z to `up` (:func:`rotation_matrix_from_up`,
  :func:`rotation_from_up`);
* the two angles of the canonical two-joint model, ``theta1`` (a joint-1 position) and
  ``theta2`` (the angle between `up` and the joint-1 axis) (:func:`up_from_canonical`,
  :func:`canonical_from_up`);

and measures angles between directions robustly (:func:`angle_between`, a building block
importable from this module only).

References
----------
US 11,446,825 B2 (the reference angles θ1, θ2 of FIGS. 5, 8, 9 and 11); CN 112476435 B,
claims 1 and 3 (a gravity direction expressed in a target frame).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_option,
    check_positive,
    check_rotation_matrix,
    check_same_shape,
    check_unit_vector,
    check_vectors,
)
from gravdir._results import Result

if TYPE_CHECKING:
    from scipy.spatial.transform import Rotation

__all__ = [
    "CanonicalAngles",
    "TiltAzimuth",
    "angle_between",
    "azimuth_from_up",
    "canonical_from_up",
    "rotation_from_up",
    "rotation_matrix_from_up",
    "tilt_azimuth_from_up",
    "tilt_from_up",
    "up_from_canonical",
    "up_from_tilt_azimuth",
    "vector_in_target_frame",
]

# Default tolerance on |up| - 1. An `up` computed in float64 is unit to ~1e-15 and one that went
# through float32 to ~1e-7; 1e-6 accepts both and still rejects a raw, unnormalised measurement
# (an accelerometer reading of norm 9.81, a plane normal of arbitrary length).
_UNIT_ATOL = 1e-6

# Default horizontal norm sin(tilt) below which `up` counts as vertical (azimuth undefined).
# Rounding leaves ~1e-16 in the horizontal components of a vertical vector that went through a
# few float64 rotations; 1e-12 (2e-10 degrees of tilt) is far above that and far below any tilt
# a measurement can resolve.
_VERTICAL_ATOL = 1e-12

#: Which gravity zero of joint 1 the angle `theta1` names (see :func:`up_from_canonical`).
Zero = Literal["unstable", "stable"]
_ZERO_OPTIONS: tuple[Zero, ...] = ("unstable", "stable")


def _unit_up(up: ArrayLike, name: str, atol: float, normalize: bool) -> NDArray[np.float64]:
    """Validate `up` as (..., 3) unit vectors (or non-zero ones if `normalize`); normalise."""
    check_positive(atol, "atol")
    u = check_unit_vector(up, name, atol=atol, normalize=normalize)
    # Also normalise vectors that were accepted as unit within `atol`, so that every derived
    # quantity (a rotation matrix in particular) is exact to rounding.
    return np.asarray(u / np.linalg.norm(u, axis=-1, keepdims=True), dtype=np.float64)


def _wrap_pi(angle: NDArray[np.float64]) -> NDArray[np.float64]:
    """Wrap angles to (-pi, pi]."""
    wrapped = np.pi - np.mod(np.pi - angle, 2.0 * np.pi)
    return np.asarray(wrapped, dtype=np.float64)


def _scalar_or_array(x: NDArray[Any]) -> Any:
    """Return a numpy scalar for a 0-d array, the array itself otherwise."""
    return x[()] if x.ndim == 0 else x


def _own(value: ArrayLike, dtype: type[np.generic]) -> Any:
    """A private copy of `value` as `dtype`: a numpy scalar for 0-d input, an array otherwise."""
    return _scalar_or_array(np.array(value, dtype=dtype))


def _deg_text(x: NDArray[np.float64]) -> str:
    deg = np.degrees(np.asarray(x, dtype=np.float64))
    if deg.ndim == 0:
        return f"{float(deg):.4f}"
    return np.array2string(deg, precision=4, separator=", ", threshold=12)


def vector_in_target_frame(v_base: ArrayLike, base_from_target: ArrayLike) -> NDArray[np.float64]:
    """Express base-frame vectors in a target frame.

    Parameters
    ----------
    v_base : array_like, shape (..., 3)
        Vectors (for example `up`) in the base frame.
    base_from_target : array_like, shape (..., 3, 3)
        Orientation of the target frame in the base frame: its columns are the target's x, y, z
        axes written in base coordinates. Broadcasts against `v_base`.

    Returns
    -------
    ndarray, shape (..., 3)
        The same vectors in target-frame coordinates, ``base_from_target.T @ v_base``.

    Raises
    ------
    ValueError
        If `v_base` is not ``(..., 3)`` and finite, or `base_from_target` is not a stack of
        proper rotation matrices.

    Notes
    -----
    A free vector has no position, so only the orientation of the target frame matters:
    :math:`v_T = R_{BT}^{\\top} v_B` with :math:`R_{BT}` = `base_from_target`.

    References
    ----------
    CN 112476435 B, claim 1: the gravity direction found in the base frame is expressed in a
    target frame by the rotation between the two frames (claim 3 computes the contact points
    in the target frame directly, which gives the same vector).

    Examples
    --------
    A target frame turned 90 degrees about base x sees base +z as its +y:

    >>> R = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    >>> vector_in_target_frame([0, 0, 1], R).round(12) + 0.0
    array([0., 1., 0.])
    """
    v = check_vectors(v_base, "v_base")
    r = check_rotation_matrix(base_from_target, "base_from_target")
    check_same_shape(v_base=v[..., None, :], base_from_target=r)
    return np.asarray(np.einsum("...ji,...j->...i", r, v), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Tilt and azimuth
# --------------------------------------------------------------------------------------------


def up_from_tilt_azimuth(tilt: ArrayLike, azimuth: ArrayLike) -> NDArray[np.float64]:
    """Unit `up` vectors from tilt and azimuth angles.

    Parameters
    ----------
    tilt : array_like, shape (...)
        Angle between `up` and base +z, radians. Any real value is accepted; the canonical range
        is [0, pi].
    azimuth : array_like, shape (...)
        Angle of the horizontal component of `up`, measured from base +x towards base +y,
        radians. Broadcasts against `tilt`.

    Returns
    -------
    ndarray, shape (..., 3)
        ``up = (sin t cos a, sin t sin a, cos t)``, unit to rounding.

    Raises
    ------
    ValueError
        If `tilt` or `azimuth` is not finite or the two do not broadcast.

    Notes
    -----
    Spherical coordinates with the polar axis along base +z:

    .. math:: u = (\\sin t \\cos a,\\; \\sin t \\sin a,\\; \\cos t).

    Examples
    --------
    >>> up_from_tilt_azimuth(np.pi / 2, np.pi / 2).round(12) + 0.0
    array([0., 1., 0.])
    >>> up_from_tilt_azimuth([0.0, np.pi], 0.3).round(12) + 0.0
    array([[ 0.,  0.,  1.],
           [ 0.,  0., -1.]])
    """
    t = check_array(tilt, "tilt")
    a = check_array(azimuth, "azimuth")
    try:
        t, a = np.broadcast_arrays(t, a)
    except ValueError:
        raise ValueError(
            f"Expected `tilt` and `azimuth` to broadcast, got shapes {t.shape} and {a.shape}."
        ) from None
    s = np.sin(t)
    return np.stack([s * np.cos(a), s * np.sin(a), np.cos(t)], axis=-1)


def tilt_from_up(
    up: ArrayLike, *, atol: float = _UNIT_ATOL, normalize: bool = False
) -> NDArray[np.float64]:
    """Tilt of `up`: the angle between `up` and base +z, in [0, pi].

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False.
    normalize : bool, optional
        If True, accept any non-zero vector and use its direction. Default False: `up` must be
        unit within `atol`, which catches a raw measurement passed by mistake.

    Returns
    -------
    ndarray or float, shape (...)
        Tilt in radians, in [0, pi].

    Raises
    ------
    ValueError
        If `up` is not ``(..., 3)`` and finite, not unit within `atol` (or zero with
        ``normalize=True``), or `atol` is not positive.

    Notes
    -----
    :math:`t = \\operatorname{atan2}(\\sqrt{u_x^2 + u_y^2},\\, u_z)`, exact to rounding at every
    tilt, unlike :math:`\\arccos u_z`, which loses half the digits near 0 and pi.

    Examples
    --------
    >>> float(np.degrees(tilt_from_up([0.0, np.sin(0.5), np.cos(0.5)])).round(9))
    28.647889757
    >>> tilt_from_up([0, 0, 9.81], normalize=True)
    np.float64(0.0)
    """
    u = _unit_up(up, "up", atol, normalize)
    tilt = np.arctan2(np.hypot(u[..., 0], u[..., 1]), u[..., 2])
    return _scalar_or_array(np.asarray(tilt))  # type: ignore[no-any-return]


def azimuth_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> NDArray[np.float64]:
    """Azimuth of `up`: the direction of its horizontal component, in (-pi, pi].

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False.
    normalize : bool, optional
        If True, accept any non-zero vector and use its direction (default False).
    vertical_atol : float, optional
        Where the horizontal norm ``sin(tilt)`` of the unit `up` is at most this (default 1e-12,
        i.e. 2e-10 degrees of tilt), `up` counts as vertical: the azimuth is undefined there and
        returned as 0.

    Returns
    -------
    ndarray or float, shape (...)
        Azimuth in radians, in (-pi, pi], measured from base +x towards base +y; 0 where `up`
        is vertical (tilt 0 or pi).

    Raises
    ------
    ValueError
        If `up` is invalid (see :func:`tilt_from_up`) or a tolerance is not positive.

    Notes
    -----
    :math:`a = \\operatorname{atan2}(u_y, u_x)`. A horizontal component of norm below
    `vertical_atol` is rounding noise, whose direction says nothing; reporting 0 there keeps
    the result reproducible. Use :func:`tilt_azimuth_from_up` to learn which entries were
    vertical.

    Examples
    --------
    >>> float(np.degrees(azimuth_from_up([-1.0, 0.0, 0.0])))
    180.0
    >>> azimuth_from_up([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    array([0., 0.])
    """
    check_positive(vertical_atol, "vertical_atol")
    u = _unit_up(up, "up", atol, normalize)
    horizontal = np.hypot(u[..., 0], u[..., 1])
    az = np.arctan2(u[..., 1], u[..., 0])
    # atan2(-0.0, x < 0) is -pi: fold it onto pi so the range is (-pi, pi].
    az = np.where(az <= -np.pi, np.pi, az)
    az = np.where(horizontal <= vertical_atol, 0.0, az)
    return _scalar_or_array(np.asarray(az, dtype=np.float64))  # type: ignore[no-any-return]


@dataclass(frozen=True, eq=False, repr=False)
class TiltAzimuth(Result):
    """Tilt and azimuth of `up` vectors.

    Attributes
    ----------
    tilt : ndarray or float, shape (...)
        Angle between `up` and base +z, radians, in [0, pi].
    azimuth : ndarray or float, shape (...)
        Direction of the horizontal component of `up` from base +x towards +y, radians, in
        (-pi, pi]; 0 where `up` is vertical.
    azimuth_defined : ndarray or bool, shape (...)
        False where `up` is vertical (tilt 0 or pi within the `vertical_atol` of
        :func:`tilt_azimuth_from_up`), so that the azimuth was set to 0 by convention.
    """

    tilt: NDArray[np.float64]
    azimuth: NDArray[np.float64]
    azimuth_defined: NDArray[np.bool_]

    def __post_init__(self) -> None:
        object.__setattr__(self, "tilt", _own(self.tilt, np.float64))
        object.__setattr__(self, "azimuth", _own(self.azimuth, np.float64))
        object.__setattr__(self, "azimuth_defined", _own(self.azimuth_defined, np.bool_))
        super().__post_init__()

    @property
    def tilt_deg(self) -> NDArray[np.float64]:
        """Tilt in degrees."""
        return np.degrees(self.tilt)

    @property
    def azimuth_deg(self) -> NDArray[np.float64]:
        """Azimuth in degrees."""
        return np.degrees(self.azimuth)

    @property
    def up(self) -> NDArray[np.float64]:
        """The unit `up` vectors, shape (..., 3), rebuilt from tilt and azimuth."""
        return up_from_tilt_azimuth(self.tilt, self.azimuth)

    def __repr__(self) -> str:
        return (
            f"TiltAzimuth(tilt_deg={_deg_text(self.tilt)}, azimuth_deg={_deg_text(self.azimuth)})"
        )


def tilt_azimuth_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> TiltAzimuth:
    """Tilt and azimuth of `up`, with a flag for the vertical case.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False.
    normalize : bool, optional
        If True, accept any non-zero vector and use its direction (default False).
    vertical_atol : float, optional
        Horizontal norm ``sin(tilt)`` at or below which `up` counts as vertical and the azimuth
        is set to 0 (default 1e-12); see :func:`azimuth_from_up`.

    Returns
    -------
    TiltAzimuth
        Tilt in [0, pi], azimuth in (-pi, pi], and `azimuth_defined`.

    Raises
    ------
    ValueError
        If `up` is invalid (see :func:`tilt_from_up`) or a tolerance is not positive.

    Notes
    -----
    The inverse of :func:`up_from_tilt_azimuth` on the canonical ranges:
    :math:`t = \\operatorname{atan2}(\\sqrt{u_x^2+u_y^2}, u_z)`,
    :math:`a = \\operatorname{atan2}(u_y, u_x)`.

    Examples
    --------
    >>> tilt_azimuth_from_up([0.5, 0.5, np.sqrt(0.5)])
    TiltAzimuth(tilt_deg=45.0000, azimuth_deg=45.0000)
    >>> tilt_azimuth_from_up([[0, 0, 1], [0, -1, 0]]).azimuth_defined
    array([False,  True])
    """
    check_positive(vertical_atol, "vertical_atol")
    u = _unit_up(up, "up", atol, normalize)
    horizontal = np.hypot(u[..., 0], u[..., 1])
    tilt = np.arctan2(horizontal, u[..., 2])
    az = np.asarray(azimuth_from_up(u, vertical_atol=vertical_atol), dtype=np.float64)
    defined = np.asarray(horizontal > vertical_atol)
    return TiltAzimuth(tilt=tilt, azimuth=az, azimuth_defined=defined)


# --------------------------------------------------------------------------------------------
# Rotations
# --------------------------------------------------------------------------------------------


def rotation_matrix_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> NDArray[np.float64]:
    """The minimal rotation that maps base +z onto `up`.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False. The vector is
        normalised before use in either case.
    normalize : bool, optional
        If True, accept any non-zero vector and use its direction (default False).
    vertical_atol : float, optional
        Where `up` points down (``up_z < 0``) with horizontal norm ``sin(tilt)`` at most this
        (default 1e-12), the axis of the minimal rotation is undefined and the rotation by pi
        about base x, ``diag(1, -1, -1)``, is returned; ``R @ z`` then differs from `up` by at
        most `vertical_atol`.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Rotation matrices R with ``R @ [0, 0, 1] = up``, rotating by the tilt about the axis
        ``z x up``.

    Raises
    ------
    ValueError
        If `up` is invalid (see :func:`tilt_from_up`) or a tolerance is not positive.

    Notes
    -----
    Many rotations map +z onto `up` (any of them followed by a turn about `up`); gravdir's is
    the one of least angle, about :math:`k = z \\times u = (-u_y, u_x, 0)` by the tilt
    :math:`t`, with :math:`|k| = \\sin t`, :math:`\\cos t = u_z`. Rodrigues' formula without
    dividing by :math:`\\sin t`:

    .. math:: R = I + [k]_\\times + \\frac{[k]_\\times^2}{1 + u_z}
       = \\begin{pmatrix} 1 - h u_x^2 & -h u_x u_y & u_x \\\\
                          -h u_x u_y & 1 - h u_y^2 & u_y \\\\
                          -u_x & -u_y & u_z \\end{pmatrix},
       \\qquad h = \\frac{1}{1 + u_z} = \\frac{1 - u_z}{u_x^2 + u_y^2}.

    The first form of :math:`h` is used where :math:`u_z \\ge 0` and the second where
    :math:`u_z < 0`, so no digits are lost to the cancellation in :math:`1 + u_z` near
    :math:`u = -z`. The result is exact to rounding at tilt 0 and continuous there; at
    :math:`u = -z` every horizontal axis gives a rotation by pi, and the choice of base x is
    the limit of the formula as `up` approaches :math:`-z` within the base y-z plane.

    Examples
    --------
    >>> up = up_from_tilt_azimuth(0.2, 1.0)
    >>> R = rotation_matrix_from_up(up)
    >>> bool(np.allclose(R @ [0, 0, 1], up)), bool(np.isclose(np.linalg.det(R), 1.0))
    (True, True)
    >>> rotation_matrix_from_up([0, 0, -1]) + 0.0
    array([[ 1.,  0.,  0.],
           [ 0., -1.,  0.],
           [ 0.,  0., -1.]])
    """
    check_positive(vertical_atol, "vertical_atol")
    u = _unit_up(up, "up", atol, normalize)
    ux, uy, uz = u[..., 0], u[..., 1], u[..., 2]
    s2 = ux * ux + uy * uy
    down = (uz < 0) & (np.sqrt(s2) <= vertical_atol)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(uz >= 0, 1.0 / (1.0 + np.maximum(uz, 0.0)), (1.0 - uz) / s2)
    h = np.where(down, 0.0, h)
    r = np.empty(u.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1.0 - h * ux * ux
    r[..., 0, 1] = -h * ux * uy
    r[..., 0, 2] = ux
    r[..., 1, 0] = -h * ux * uy
    r[..., 1, 1] = 1.0 - h * uy * uy
    r[..., 1, 2] = uy
    r[..., 2, 0] = -ux
    r[..., 2, 1] = -uy
    r[..., 2, 2] = uz
    r[down] = np.diag([1.0, -1.0, -1.0])
    return r


def rotation_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> Rotation:
    """The minimal rotation that maps base +z onto `up`, as a SciPy ``Rotation``.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol, normalize, vertical_atol
        As in :func:`rotation_matrix_from_up`.

    Returns
    -------
    scipy.spatial.transform.Rotation
        Rotation(s) of shape ``up.shape[:-1]`` (a single rotation for one vector).

    Raises
    ------
    ValueError
        As :func:`rotation_matrix_from_up`.

    Notes
    -----
    ``Rotation.from_matrix(rotation_matrix_from_up(up))``; see
    :func:`rotation_matrix_from_up` for the convention, including the case ``up = -z``.

    Examples
    --------
    >>> rot = rotation_from_up(up_from_tilt_azimuth(0.3, -2.0))
    >>> float(rot.magnitude().round(12))
    0.3
    """
    from scipy.spatial.transform import Rotation

    matrix = rotation_matrix_from_up(
        up, atol=atol, normalize=normalize, vertical_atol=vertical_atol
    )
    return Rotation.from_matrix(matrix)


# --------------------------------------------------------------------------------------------
# The canonical two-joint model
# --------------------------------------------------------------------------------------------


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
        Joint-1 position, radians, at which the arm's horizontal direction points towards the
        horizontal component of `up` (``zero="unstable"``: the gravity zero of joint 1 with the
        distal mass highest) or away from it (``zero="stable"``: the zero with the mass lowest).
    theta2 : array_like, shape (...)
        Angle between `up` and the joint-1 axis (base +z), radians. The canonical range is
        [0, pi]; a negative value turns the horizontal component of `up` by pi.
    arm_azimuth : array_like, shape (...), optional
        Azimuth of the arm's horizontal direction at joint-1 position 0, from base +x towards
        +y (default 0: the arm points along +x at ``q1 = 0``).
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
        If an angle is not finite, the angles do not broadcast, or `zero` is not an option.

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
    t1 = check_array(theta1, "theta1")
    t2 = check_array(theta2, "theta2")
    a0 = check_array(arm_azimuth, "arm_azimuth")
    try:
        shape = np.broadcast_shapes(t1.shape, t2.shape, a0.shape)
    except ValueError:
        raise ValueError(
            "Expected `theta1`, `theta2` and `arm_azimuth` to broadcast, got shapes "
            f"{t1.shape}, {t2.shape} and {a0.shape}."
        ) from None
    psi = t1 + a0 + (np.pi if zero == "stable" else 0.0)
    return up_from_tilt_azimuth(np.broadcast_to(t2, shape), np.broadcast_to(psi, shape))


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
        Azimuth of the arm's horizontal direction at joint-1 position 0 (default 0).
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
        If `up` or `arm_azimuth` is invalid, they do not broadcast, or `zero` is not an option.

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
    a0 = check_array(arm_azimuth, "arm_azimuth")
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


# --------------------------------------------------------------------------------------------
# Angles between directions
# --------------------------------------------------------------------------------------------


def angle_between(u: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """Angle between directions, accurate at every angle from 0 to pi.

    Parameters
    ----------
    u, v : array_like, shape (..., 3)
        Non-zero vectors; need not be unit. The two broadcast against each other.

    Returns
    -------
    ndarray or float, shape (...)
        Angle in radians, in [0, pi].

    Raises
    ------
    ValueError
        If `u` or `v` is not ``(..., 3)`` and finite, contains a zero vector (norm at most
        1e-12), or the two do not broadcast.

    Notes
    -----
    :math:`\\angle(u, v) = \\operatorname{atan2}(|\\hat u \\times \\hat v|,\\,
    \\hat u \\cdot \\hat v)`, which keeps full relative precision for small angles (where
    :math:`\\arccos` of the dot product is limited to about 1e-8 rad) and near pi (where
    :math:`\\arcsin` of the cross product fails).

    Examples
    --------
    >>> float(angle_between([1, 0, 0], [1, 1e-10, 0]))
    1e-10
    >>> angle_between([0, 0, 1], [[0, 0, -2], [0, 3, 0]]).round(6)
    array([3.141593, 1.570796])
    """
    a = check_unit_vector(u, "u", normalize=True)
    b = check_unit_vector(v, "v", normalize=True)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(
            f"Expected `u` and `v` to broadcast, got shapes {a.shape} and {b.shape}."
        ) from None
    cross = np.linalg.norm(np.cross(a, b), axis=-1)
    dot = np.einsum("...i,...i->...", a, b)
    return _scalar_or_array(np.asarray(np.arctan2(cross, dot)))  # type: ignore[no-any-return]
