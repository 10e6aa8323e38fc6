"""Flange orientations and contact spots that determine the tool tip in the joint fit."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import RotationLike, check_count, check_positive, check_rotation_matrix
from gravdir._results import Result
from gravdir.touch._common import fmt

# Most contacts a plan may have: far beyond any touch-up session, and it bounds the work of a call.
MAX_CONTACTS = 10_000


@dataclass(frozen=True, eq=False, repr=False)
class TouchPlan(Result):
    """Flange orientations and contact spots for the joint tool-and-plane fit.

    Attributes
    ----------
    flange_rotations : ndarray, shape (..., N, 3, 3)
        ``base_from_flange`` rotation for each contact: ``nominal @ relative_rotations[i]``.
    relative_rotations : ndarray, shape (N, 3, 3)
        The same rotations relative to the nominal orientation (in the nominal flange frame).
    spots : ndarray, shape (..., N, 3)
        Where each contact should touch, as an offset in the base frame from a centre of the
        caller's choice; perpendicular to the nominal approach axis (flange +z).
    tilt : ndarray, shape (N,)
        Angle, in radians, between each contact's flange +z axis and the nominal one
        (`tilt_deg` in degrees).
    tilt_axis : ndarray, shape (N, 3)
        Unit axis of each tilt in the nominal flange frame (perpendicular to its +z axis; zero
        for the straight contacts).
    """

    _units = {
        "flange_rotations": "", "relative_rotations": "", "spots": "m", "tilt": "rad",
        "tilt_axis": "",
    }

    flange_rotations: NDArray[np.float64]
    relative_rotations: NDArray[np.float64]
    spots: NDArray[np.float64]
    tilt: NDArray[np.float64]
    tilt_axis: NDArray[np.float64]

    @property
    def tilt_deg(self) -> NDArray[np.float64]:
        """`tilt` in degrees, shape (N,)."""
        return np.asarray(np.degrees(self.tilt), dtype=np.float64)

    def __repr__(self) -> str:
        return f"TouchPlan(n_contacts={len(self.tilt)}, tilt_deg={fmt(self.tilt_deg)})"


def _rotations_about(axes: NDArray[np.float64], angles: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rodrigues: ``R = I + sin(a) [k]x + (1 - cos(a)) [k]x^2`` for unit (or zero) axes k."""
    kx = np.zeros((len(axes), 3, 3))
    kx[:, 0, 1], kx[:, 0, 2] = -axes[:, 2], axes[:, 1]
    kx[:, 1, 0], kx[:, 1, 2] = axes[:, 2], -axes[:, 0]
    kx[:, 2, 0], kx[:, 2, 1] = -axes[:, 1], axes[:, 0]
    s = np.sin(angles)[:, None, None]
    c = np.cos(angles)[:, None, None]
    out: NDArray[np.float64] = np.eye(3) + s * kx + (1.0 - c) * (kx @ kx)
    return out


def plan_touches(
    n_contacts: int = 8,
    *,
    max_tilt: float = math.radians(30.0),
    radius: float = 0.1,
    nominal: RotationLike | None = None,
) -> TouchPlan:
    """Orientations and contact spots that pin the tool tip's lateral components.

    Parameters
    ----------
    n_contacts : int, optional
        Number of contacts, 6 <= N <= 10000 (default 8).
    max_tilt : float, optional
        Tilt of the flange from the nominal orientation, in radians, in (0, pi/2) (default
        30°, pi/6).
    radius : float, optional
        Radius of the circle of contact spots, in the unit of the poses (default 0.1, i.e.
        100 mm for metres).
    nominal : array_like, shape (..., 3, 3), or scipy.spatial.transform.Rotation, optional
        ``base_from_flange`` rotation at which the tool points straight into the plane, flange
        +z toward it. Default identity: the rotations are then relative to that orientation and
        the spots are in its flange frame. A SciPy ``Rotation`` stands for its matrix (a stack
        of ``n`` rotations for a batch of shape ``(n,)``).

    Returns
    -------
    TouchPlan

    Raises
    ------
    ValueError
        If `n_contacts` is not an integer from 6 to 10000 (the cap bounds the work of a call),
        `max_tilt` is not in (0, pi/2) (beyond pi the message asks "degrees?"), `radius` is
        not positive and finite, or `nominal` is not a rotation.

    See Also
    --------
    tool_tip_and_up_from_touches : the fit these contacts feed.

    Notes
    -----
    A tool-tip error ``delta`` moves the normal component of contact ``i`` by ``m_i^T delta``
    with ``m_i = R_i^T n``, the plane normal seen from the flange. At the nominal orientation
    ``m_0 = -e_z``; tilting the flange by ``theta_i`` about an axis ``a_i`` perpendicular to
    ``e_z`` leaves ``-cos(theta_i)`` along ``e_z`` and a part of size ``sin(theta_i)`` along
    ``a_i x e_z``, perpendicular to it. With ``d`` absorbing the mean of ``m_i^T delta`` and
    the plane's tilt absorbing any part linear in the contacts' in-plane positions ``q_i``, the
    Fisher information on ``t`` is ``sigma^-2`` times the part of
    ``sum_i (m_i - m̄)(m_i - m̄)^T`` not explained by ``q_i``. Hence:

    * lateral components need ``sin(theta_i)`` large in directions spread around the approach
      axis: information ``sum_i sin^2(theta_i) / 2`` per lateral axis;
    * the approach component needs different ``cos(theta_i)``: information
      ``sum_i (cos(theta_i) - mean)^2``, small for any tilt within ±30°;
    * neither may correlate with ``q_i``: tilting each contact away from the centre (the
      natural motion around a circle) makes a lateral tool error look like a plane tilt and
      costs a factor of about ten.

    The plan touches each of ``K = (N - 2) // 2`` spots, evenly on a circle, twice with
    opposite tilts ``±theta`` about an axis at ``180° k / K`` (the lateral parts cancel at each
    spot and are spread evenly around the approach axis), and makes the remaining 2 or 3
    contacts straight, at spots symmetric about the centre. Then
    ``sum_i q_i (m_i - m̄)^T = 0`` exactly: tool tip and plane tilt decouple, and for N = 8
    and 30° the lateral standard deviations are ``sigma / sqrt(0.75) = 1.15 sigma`` and the
    approach one ``6.1 sigma``.

    References
    ----------
    CN 112476435 B, claims 1-2 (contacts on a level plane through ``c_i = R_i t + p_i``; the
    orientations that determine ``t`` are gravdir's design); Kay (1993) (the Fisher information
    and the Cramér-Rao bound the design is judged by).

    Examples
    --------
    >>> plan = plan_touches(8)
    >>> plan.tilt_deg.round(1)
    array([30., 30., 30., 30., 30., 30.,  0.,  0.])
    >>> z = plan.relative_rotations[:, :, 2]
    >>> bool(np.allclose(z[0] + z[3], 2 * np.cos(np.radians(30)) * np.array([0, 0, 1])))
    True
    """
    try:
        n_contacts = check_count(n_contacts, "n_contacts", minimum=6, maximum=MAX_CONTACTS)
    except ValueError:
        raise ValueError(
            f"Expected `n_contacts` to be an integer >= 6 and <= {MAX_CONTACTS}, "
            f"got {n_contacts!r}."
        ) from None
    theta = check_positive(max_tilt, "max_tilt")
    if theta > math.pi:
        raise ValueError(
            f"Expected `max_tilt` in radians, in (0, pi/2), got {theta:.6g} "
            f"({math.degrees(theta):.6g}°, more than a half turn): degrees?"
        )
    if theta >= math.pi / 2:
        raise ValueError(f"Expected `max_tilt` in (0, pi/2) radians, got {max_tilt!r}.")
    radius = check_positive(radius, "radius")
    nom = np.eye(3) if nominal is None else check_rotation_matrix(nominal, "nominal")
    with np.errstate(under="ignore"):  # a tiny radius or tiny rotation entries round to zero
        return _plan(n_contacts, theta, radius, nom)


def _plan(
    n_contacts: int, theta: float, radius: float, nom: NDArray[np.float64]
) -> TouchPlan:
    """The design of :func:`plan_touches` for checked arguments."""
    n_pairs = (int(n_contacts) - 2) // 2
    n_straight = int(n_contacts) - 2 * n_pairs

    # Pair k: spot at angle 2 pi k / K on the circle, tilt axis at pi k / K, tilts +theta and
    # -theta (the two contacts of a pair are k and k + K).
    k = np.arange(n_pairs)
    beta = np.pi * k / n_pairs
    axis_pair = np.stack([np.cos(beta), np.sin(beta), np.zeros(n_pairs)], axis=-1)
    alpha = 2.0 * np.pi * k / n_pairs
    spot_pair = radius * np.stack([np.cos(alpha), np.sin(alpha), np.zeros(n_pairs)], axis=-1)
    # Straight contacts: half the radius, evenly spaced (centroid at the centre), turned by 90
    # degrees against the pairs' spots.
    gamma = np.pi / 2 + 2.0 * np.pi * np.arange(n_straight) / n_straight
    spot_straight = (radius / 2) * np.stack(
        [np.cos(gamma), np.sin(gamma), np.zeros(n_straight)], axis=-1
    )
    axes = np.concatenate([axis_pair, axis_pair, np.zeros((n_straight, 3))])
    angles = np.concatenate(
        [np.full(n_pairs, theta), np.full(n_pairs, -theta), np.zeros(n_straight)]
    )
    spots_f = np.concatenate([spot_pair, spot_pair, spot_straight])
    relative = _rotations_about(axes, angles)

    flange = np.einsum("...ij,njk->...nik", nom, relative)
    spots = np.einsum("...ij,nj->...ni", nom, spots_f)
    signed_axis = axes * np.sign(angles)[:, None]
    return TouchPlan(
        flange_rotations=flange,
        relative_rotations=relative,
        spots=spots,
        tilt=np.abs(angles),
        tilt_axis=signed_axis + 0.0,
    )
