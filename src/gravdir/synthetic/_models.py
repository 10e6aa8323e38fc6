"""Factories of synthetic arms: the canonical two-joint model, random arms, UR5- and iiwa-like arms.

Also :func:`up_from_base_tilt`, the `up` of a base tilted by a given angle, written out here so the
synthetic arms stay independent of :mod:`gravdir.frames`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_count, check_positive, check_radians
from gravdir._constants import STANDARD_GRAVITY
from gravdir.synthetic._arm import (
    _MAX_FIXED_ANGLE,
    _MAX_JOINTS,
    _MAX_LENGTH,
    SyntheticArm,
    _check_rng,
    _real_scalar,
)

__all__ = ["canonical_arm", "iiwa_arm", "random_arm", "up_from_base_tilt", "ur5_arm"]


def up_from_base_tilt(tilt: ArrayLike, azimuth: ArrayLike = 0.0) -> NDArray[np.float64]:
    """`up` in the base frame of a base tilted by `tilt` toward `azimuth`.

    Parameters
    ----------
    tilt : array_like, shape (...)
        Angle between `up` and base +z, rad, in [0, pi] (``0``: upright, ``pi/2``: wall mount,
        ``pi``: ceiling mount).
    azimuth : array_like, shape (...), optional
        Angle of `up`'s horizontal part from base +x toward +y, rad, within ±4π. Broadcasts
        against `tilt`.

    Returns
    -------
    ndarray, shape (..., 3)
        :math:`(\\sin t \\cos a, \\sin t \\sin a, \\cos t)`.

    Raises
    ------
    ValueError
        If an argument is not numeric and finite (booleans and numeric strings are refused), a
        tilt lies outside [0, pi] or an azimuth beyond ±4π (beyond pi, or 4π, the numbers are
        taken for degrees: the message ends in "degrees?"), or the shapes do not broadcast.

    Examples
    --------
    >>> up_from_base_tilt(np.pi / 2, np.pi / 2).round(12) + 0.0
    array([0., 1., 0.])
    """
    t = check_radians(check_array(tilt, "tilt"), "tilt", kind="tilts")
    a = check_radians(check_array(azimuth, "azimuth"), "azimuth", kind="azimuths")
    try:
        t, a = np.broadcast_arrays(t, a)
    except ValueError:
        raise ValueError(
            f"Expected `tilt` and `azimuth` to broadcast, got shapes {t.shape} and {a.shape}."
        ) from None
    with np.errstate(under="ignore"):  # a product of two tiny angles rounds to zero
        return np.stack([np.sin(t) * np.cos(a), np.sin(t) * np.sin(a), np.cos(t)], axis=-1)


def canonical_arm(
    *,
    L1: float,
    L2: float = 0.0,
    L3: float = 0.0,
    gamma0: float = 0.0,
    mass: float = 1.0,
    up: ArrayLike = (0.0, 0.0, 1.0),
    gravity: float = STANDARD_GRAVITY,
) -> SyntheticArm:
    """The canonical two-joint model of the closed-form solvers, as a :class:`SyntheticArm`.

    Parameters
    ----------
    L1, L2, L3 : float
        Position of the lumped mass along the link, across it in the J2 plane, and along the J2
        axis, m (signed). Keyword-only.
    gamma0 : float, optional
        :math:`\\gamma_0`: the link's angle from +z at ``q2 = 0``, rad.
    mass : float, optional
        The lumped distal mass :math:`m`, kg, non-negative.
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame.
    gravity : float, optional
        Gravitational acceleration, m/s² (default: standard gravity, 9.80665).

    Returns
    -------
    SyntheticArm
        Two joints; link 0 is massless, link 1 carries `mass`.

    Raises
    ------
    ValueError
        If an argument is not a finite real number (booleans and numeric strings are refused),
        `mass` is negative, a length lies beyond 1e100 m, `gamma0` lies beyond a full turn
        (degrees?) or `up` is not a unit vector; see :class:`SyntheticArm` for the rest.

    Notes
    -----
    J1 turns about base +z through the origin. At angle :math:`q_1` the arm's horizontal
    direction is :math:`h = (\\cos q_1, \\sin q_1, 0)` and J2's axis, through the origin, is
    :math:`a_2 = z \\times h`. With :math:`\\gamma = q_2 + \\gamma_0` and
    :math:`\\ell(\\gamma) = \\cos\\gamma\\, z + \\sin\\gamma\\, h`, the mass sits at

    .. math::

        c = L_1\\,\\ell(\\gamma) + L_2\\,\\ell(\\gamma + \\pi/2) + L_3\\,a_2 .

    In DH terms: row 0 is ``(0, 0, 0, -pi/2)`` (frame 0 has x = h, z = a2), row 1 is
    ``(0, gamma0 - pi/2, 0, 0)`` (frame 1 has x = ℓ(γ), y = ℓ(γ + π/2), z = a2), and the mass
    sits at ``(L1, L2, L3)`` in frame 1.

    ``L2 = L3 = 0`` is the lumped point-mass model of US 11,446,825 B2 (FIG. 5), ``L2 != 0``
    its in-plane offset (FIGS. 8 and 9) and ``L3 != 0`` its out-of-plane offset (FIG. 11).

    References
    ----------
    US 11,446,825 B2, the simplified models of FIGS. 5, 8, 9 and 11 (a lumped mass on
    massless links, with the reference angles θ1, θ2).

    Examples
    --------
    Point mass, upright base: gravity pulls the mass toward larger :math:`\\gamma`, so J2 holds
    :math:`-m g L_1 \\sin\\gamma`.

    >>> arm = canonical_arm(L1=0.5, mass=2.0)
    >>> arm.gravity_torque([0.0, np.pi / 2]).round(6) + 0.0
    array([ 0.     , -9.80665])
    """
    lengths = np.array([_real_scalar(x, name) for x, name in ((L1, "L1"), (L2, "L2"), (L3, "L3"))])
    gamma = _real_scalar(gamma0, "gamma0")
    if abs(gamma) > _MAX_FIXED_ANGLE:
        raise ValueError(f"Expected `gamma0` in radians, got {gamma:.6g} (beyond 2 pi): degrees?")
    m = check_positive(mass, "mass", allow_zero=True)
    dh = np.array([[0.0, 0.0, 0.0, -np.pi / 2], [0.0, gamma - np.pi / 2, 0.0, 0.0]])
    return SyntheticArm(
        dh=dh,
        masses=np.array([0.0, m]),
        coms=np.stack([np.zeros(3), lengths]),
        up=up,
        gravity=gravity,
        name="canonical",
    )


def random_arm(
    rng: np.random.Generator,
    n_joints: int = 6,
    *,
    max_tilt: float = np.pi / 2,
    link_length: float = 0.4,
    mass_range: tuple[float, float] = (0.5, 8.0),
    gravity: float = STANDARD_GRAVITY,
) -> SyntheticArm:
    """A random serial arm with a random base tilt.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the random draws.
    n_joints : int, optional
        Number of joints, from 1 to 100 (default 6).
    max_tilt : float, optional
        Largest angle between `up` and base +z, rad, in :math:`[0, \\pi]` (default
        :math:`\\pi/2`; a larger value is taken for degrees). `up` is uniform over the
        spherical cap of that half-angle.
    link_length : float, optional
        Scale of the DH lengths and centre-of-mass offsets, m, positive, at most 1e100
        (default 0.4).
    mass_range : tuple of float, optional
        Link masses are uniform in this range ``(low, high)``, kg, ``0 <= low <= high``
        (default 0.5 to 8).
    gravity : float, optional
        Gravitational acceleration, m/s² (default: standard gravity, 9.80665).

    Returns
    -------
    SyntheticArm
        DH rows with ``d, a`` uniform in :math:`[-L, L]`, ``theta_offset`` uniform in
        :math:`[-\\pi, \\pi)`, ``alpha`` a right angle (0, ±π/2, π) half of the time and uniform
        in :math:`[-\\pi, \\pi)` otherwise; centres of mass uniform in :math:`[-L/2, L/2]^3`.

    Raises
    ------
    ValueError
        If an argument has the wrong type (booleans and numeric strings are refused) or is out
        of range, with "degrees?" for a `max_tilt` beyond pi.

    Examples
    --------
    >>> arm = random_arm(np.random.default_rng(3), 4, max_tilt=0.2)
    >>> arm.n_joints, bool(arm.up[2] >= np.cos(0.2))
    (4, True)
    """
    _check_rng(rng)
    n = check_count(n_joints, "n_joints", maximum=_MAX_JOINTS)
    tilt_max = check_positive(max_tilt, "max_tilt", allow_zero=True)
    check_radians(tilt_max, "max_tilt", kind="tilts")
    length = check_positive(link_length, "link_length")
    if length > _MAX_LENGTH:
        raise ValueError(f"Expected `link_length` at most {_MAX_LENGTH:g} m, got {length:.3g}.")
    limits = check_array(mass_range, "mass_range")
    if limits.shape != (2,):
        raise ValueError(f"Expected `mass_range` to have shape (2,), got {limits.shape}.")
    low, high = float(limits[0]), float(limits[1])
    if not 0 <= low <= high:
        raise ValueError(
            f"Expected `mass_range` (low, high) with 0 <= low <= high, got ({low:g}, {high:g})."
        )
    right = rng.choice([0.0, np.pi / 2, -np.pi / 2, np.pi], size=n)
    alpha = np.where(rng.random(n) < 0.5, right, rng.uniform(-np.pi, np.pi, size=n))
    dh = np.column_stack(
        [
            rng.uniform(-length, length, size=n),
            rng.uniform(-np.pi, np.pi, size=n),
            rng.uniform(-length, length, size=n),
            alpha,
        ]
    )
    masses = rng.uniform(low, high, size=n)
    coms = rng.uniform(-length / 2, length / 2, size=(n, 3))
    cos_tilt = rng.uniform(np.cos(tilt_max), 1.0)
    up = up_from_base_tilt(np.arccos(cos_tilt), rng.uniform(-np.pi, np.pi))
    return SyntheticArm(dh=dh, masses=masses, coms=coms, up=up, gravity=gravity, name="random")


def ur5_arm(up: ArrayLike = (0.0, 0.0, 1.0), *, gravity: float = STANDARD_GRAVITY) -> SyntheticArm:
    """A UR5-like six-joint arm with Universal Robots' published DH and mass parameters.

    Parameters
    ----------
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame. Default upright.
    gravity : float, optional
        Gravitational acceleration, m/s² (default: standard gravity, 9.80665).

    Returns
    -------
    SyntheticArm
        Standard DH ``d = (0.089159, 0, 0, 0.10915, 0.09465, 0.0823)``,
        ``a = (0, -0.425, -0.39225, 0, 0, 0)``, ``alpha = (pi/2, 0, 0, pi/2, -pi/2, 0)``,
        masses ``(3.7, 8.393, 2.33, 1.219, 1.219, 0.1879)`` kg.

    Raises
    ------
    ValueError
        If `up` is not a unit vector or `gravity` is not a positive number.

    Notes
    -----
    Centres of mass (in each link's DH frame, m): ``(0, -0.02561, 0.00193)``,
    ``(0.2125, 0, 0.11336)``, ``(0.15, 0, 0.0265)``, ``(0, -0.0018, 0.01634)``,
    ``(0, 0.0018, 0.01634)``, ``(0, 0, -0.001159)``, the values Universal Robots lists with its
    DH table for dynamics. Joint 5's distal mass lies on its axis, so J6 carries no gravity load.
    J1 and J2 do not intersect in the canonical way: the shoulder offset (``d``-components along
    J2's axis, about 0.11 m) is the canonical model's :math:`L_3`.

    References
    ----------
    Universal Robots, "DH parameters for calculations of kinematics and dynamics".

    Examples
    --------
    >>> ur5_arm()
    SyntheticArm(name='UR5-like', n_joints=6, total_mass=17 kg, tilt=0.00°, azimuth=0.00°,
                 gravity=9.80665 m/s²)
    """
    dh = np.array(
        [
            [0.089159, 0.0, 0.0, np.pi / 2],
            [0.0, 0.0, -0.425, 0.0],
            [0.0, 0.0, -0.39225, 0.0],
            [0.10915, 0.0, 0.0, np.pi / 2],
            [0.09465, 0.0, 0.0, -np.pi / 2],
            [0.0823, 0.0, 0.0, 0.0],
        ]
    )
    masses = np.array([3.7, 8.393, 2.33, 1.219, 1.219, 0.1879])
    coms = np.array(
        [
            [0.0, -0.02561, 0.00193],
            [0.2125, 0.0, 0.11336],
            [0.15, 0.0, 0.0265],
            [0.0, -0.0018, 0.01634],
            [0.0, 0.0018, 0.01634],
            [0.0, 0.0, -0.001159],
        ]
    )
    return SyntheticArm(dh=dh, masses=masses, coms=coms, up=up, gravity=gravity, name="UR5-like")


def iiwa_arm(up: ArrayLike = (0.0, 0.0, 1.0), *, gravity: float = STANDARD_GRAVITY) -> SyntheticArm:
    """A seven-joint arm shaped like a KUKA LBR iiwa 14 R820.

    Parameters
    ----------
    up : array_like, shape (3,), optional
        Unit vector opposite to gravity in the base frame. Default upright.
    gravity : float, optional
        Gravitational acceleration, m/s² (default: standard gravity, 9.80665).

    Returns
    -------
    SyntheticArm
        Standard DH ``d = (0.36, 0, 0.42, 0, 0.4, 0, 0.126)``, ``a = 0``,
        ``alpha = (-pi/2, pi/2, pi/2, -pi/2, -pi/2, pi/2, 0)``; link masses
        ``(4, 4, 3, 2.7, 1.7, 1.8, 0.3)`` kg.

    Raises
    ------
    ValueError
        If `up` is not a unit vector or `gravity` is not a positive number.

    Notes
    -----
    The DH table and masses are the arm's published kinematics and the link masses of its
    widely used URDF description. The centres of mass are plausible values, not the
    manufacturer's: at ``q = 0`` (arm straight up) each lies on or within a few centimetres of
    the vertical line through the joints, between the joints that bound its link. J1 and J2
    intersect, as the canonical model assumes (L3 = 0). J7's distal mass lies on its axis, so
    J7 carries no gravity load.

    Examples
    --------
    >>> arm = iiwa_arm()
    >>> arm.com_positions(np.zeros(7))[:, 2].round(2)
    array([0.28, 0.4 , 0.62, 0.81, 1.03, 1.19, 1.25])
    """
    dh = np.array(
        [
            [0.36, 0.0, 0.0, -np.pi / 2],
            [0.0, 0.0, 0.0, np.pi / 2],
            [0.42, 0.0, 0.0, np.pi / 2],
            [0.0, 0.0, 0.0, -np.pi / 2],
            [0.4, 0.0, 0.0, -np.pi / 2],
            [0.0, 0.0, 0.0, np.pi / 2],
            [0.126, 0.0, 0.0, 0.0],
        ]
    )
    masses = np.array([4.0, 4.0, 3.0, 2.7, 1.7, 1.8, 0.3])
    coms = np.array(
        [
            [0.0, 0.08, -0.03],
            [0.0, 0.04, 0.04],
            [0.0, -0.16, -0.03],
            [0.0, 0.04, 0.03],
            [0.0, 0.15, 0.02],
            [0.0, 0.0, 0.01],
            [0.0, 0.0, -0.06],
        ]
    )
    return SyntheticArm(dh=dh, masses=masses, coms=coms, up=up, gravity=gravity, name="iiwa-like")
