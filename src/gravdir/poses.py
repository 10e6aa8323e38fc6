"""Flange poses as robot controllers report them, converted to and from 4x4 homogeneous matrices.

A pose here is the 4x4 matrix ``T = [[R, p], [0, 0, 0, 1]]`` that maps flange (or tool)
coordinates to base coordinates (``base_from_flange``), with the translation ``p`` in metres.
Controllers report the same pose as a position plus an orientation in their own convention and
length unit; every converter takes the length unit as a required keyword (``unit="mm"`` or
``unit="m"``) and, where the controller reports angles, the angle unit as a required keyword
(``angles="deg"`` or ``angles="rad"``), so that a silent factor of 1000 or 57.3 cannot happen.

Conventions (``Rx``, ``Ry``, ``Rz`` are the elementary right-handed rotations):

============  =====================  ===============================================
controller    reported as            rotation
============  =====================  ===============================================
UR            x, y, z, rx, ry, rz    rotation vector (axis times angle, radians)
KUKA          X, Y, Z, A, B, C       ``R = Rz(A) Ry(B) Rx(C)`` (intrinsic Z-Y'-X'')
Fanuc         X, Y, Z, W, P, R       ``R = Rz(R) Ry(P) Rx(W)`` (fixed axes X, Y, Z)
ABB           x, y, z, q1..q4        unit quaternion, scalar first (q1 = w)
============  =====================  ===============================================

Wherever a quaternion is taken its order is in the argument's name (``quaternion_wxyz``,
``quaternion_xyzw``); where one is returned the docstring gives the layout.

KUKA's A, B, C and Fanuc's W, P, R describe the same matrix with the roles of the first and last
angle exchanged: ``(A, B, C) = (R, P, W)``.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_array,
    check_option,
    check_positive,
    check_rotation_matrix,
    norm,
)
from gravdir._imports import IMPORT_LOCK
from gravdir.errors import GravdirWarning

if TYPE_CHECKING:
    from scipy.spatial.transform import Rotation

__all__ = [
    "QUATERNION_ATOL",
    "abb_from_pose",
    "check_poses",
    "fanuc_from_pose",
    "kuka_from_pose",
    "pose_from_abb",
    "pose_from_fanuc",
    "pose_from_kuka",
    "pose_from_ur",
    "ur_from_pose",
]

_METRES_PER = {"mm": 1e-3, "m": 1.0}
_RADIANS_PER = {"deg": np.pi / 180.0, "rad": 1.0}
# Accepted deviation of a quaternion's norm from 1 (`pose_from_abb`): a unit quaternion printed
# with 6 decimals has each component off by at most 5e-7 and its norm by at most
# 5e-7 * sum|q_i| <= 1e-6 (first order; 2e-6 with margin); 1e-5 keeps a factor of five above that
# and refuses a quaternion whose norm is off by 1e-3 (a value rounded to 3 decimals, or edited).
#: Tolerance on the norm of a pose's quaternion: one further from 1 is refused.
QUATERNION_ATOL = 1e-5
# The two Euler conventions: KUKA's intrinsic Z-Y'-X'' and Fanuc's fixed X, Y, Z (scipy's names).
_EulerSequence = Literal["ZYX", "xyz"]


def check_poses(x: ArrayLike, name: str, *, atol: float = 1e-6) -> NDArray[np.float64]:
    """Check `x` is a stack of rigid homogeneous transforms, shape ``(..., 4, 4)``.

    A building block for functions that take poses; import it from :mod:`gravdir.poses`.

    The upper-left 3x3 block must be a proper rotation (``R^T R = I`` within `atol`,
    ``det R = +1``) and the bottom row ``[0, 0, 0, 1]`` within `atol`.

    Parameters
    ----------
    x : array_like, shape (..., 4, 4)
        The poses.
    name : str
        The argument's name, used in error messages.
    atol : float, optional
        Tolerance of the rigidity checks, in (0, 1). The default 1e-6 admits matrices assembled
        from controller read-outs printed with six or more significant digits.

    Returns
    -------
    ndarray of float64, shape (..., 4, 4)
        The validated poses.

    Raises
    ------
    ValueError
        If `x` has the wrong shape, is not finite, or is not rigid (a rotation entry beyond
        ``1 + atol`` in magnitude is refused before any product is formed), or `atol` is not a
        number in (0, 1).

    Examples
    --------
    >>> check_poses(np.eye(4), "pose").shape
    (4, 4)
    """
    tol = _check_atol(atol)
    t = check_array(x, name, tail=(4, 4))
    bottom = np.abs(t[..., 3, :] - np.array([0.0, 0.0, 0.0, 1.0]))
    worst = float(np.max(bottom)) if bottom.size else 0.0
    if worst > tol:
        raise ValueError(
            f"Expected `{name}` to have bottom row [0, 0, 0, 1] (within {tol:g}), "
            f"got a deviation of {worst:.3g}."
        )
    check_rotation_matrix(t[..., :3, :3], name, atol=tol)
    return t


def _check_atol(atol: float) -> float:
    """A rigidity tolerance: a number in (0, 1) (1 would admit any matrix of entries in ±2)."""
    tol = check_positive(atol, "atol")
    if tol >= 1.0:
        raise ValueError(f"Expected `atol` to be a number in (0, 1), got {atol!r}.")
    return tol


def _split(
    x: ArrayLike, name: str, width: int, unit: Literal["mm", "m"]
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    check_option(unit, "unit", tuple(_METRES_PER))
    arr = check_array(x, name, tail=(width,))
    return arr[..., :3], arr[..., 3:], _METRES_PER[unit]


def _check_angles(
    ang: NDArray[np.float64], name: str, what: str, angles: Literal["deg", "rad"] = "rad"
) -> None:
    """Refuse angles beyond two turns (`MAX_JOINT_ANGLE`): degrees passed as radians, or not angles.

    A rotation angle (a rotation vector's norm, an Euler angle) has the bound of a joint position:
    a controller reports orientations within one turn; beyond two the numbers are degrees passed
    as radians, or not angles at all.
    """
    worst = float(np.max(np.abs(ang))) if ang.size else 0.0
    if worst <= MAX_JOINT_ANGLE / _RADIANS_PER[angles]:
        return
    if angles == "rad":
        raise ValueError(
            f"Expected {what} of `{name}` in radians, at most 4 pi (two turns), got "
            f"{worst:.6g} rad ({math.degrees(worst):.6g}°): degrees?"
        )
    raise ValueError(
        f"Expected {what} of `{name}` in degrees, at most 720 (two turns), got {worst:.6g}°."
    )


def _assemble(
    rot: Rotation, xyz: NDArray[np.float64], scale: float, batch: tuple[int, ...]
) -> NDArray[np.float64]:
    out = np.zeros((*batch, 4, 4))
    with np.errstate(under="ignore"):
        out[..., :3, :3] = rot.as_matrix().reshape(*batch, 3, 3)
    with np.errstate(under="ignore"):  # millimetres below 1e-305 become metres of zero
        out[..., :3, 3] = xyz * scale
    out[..., 3, 3] = 1.0
    return out


def _rotation(
    pose: ArrayLike, name: str, unit: Literal["mm", "m"]
) -> tuple[Rotation, NDArray[np.float64]]:
    check_option(unit, "unit", tuple(_METRES_PER))
    t = check_poses(pose, name)
    with IMPORT_LOCK:
        from scipy.spatial.transform import Rotation  # slow to import: only when needed

    # A writable copy: scipy refuses read-only buffers.
    with np.errstate(under="ignore"):
        rot = Rotation.from_matrix(np.array(t[..., :3, :3].reshape(-1, 3, 3)))
    with np.errstate(over="ignore"):
        xyz = t[..., :3, 3] / _METRES_PER[unit]
    if not np.all(np.isfinite(xyz)):
        raise ValueError(
            f"Expected the translation of `{name}` to be finite in {unit}, got a translation "
            f"beyond the float range once converted."
        )
    return rot, xyz


def pose_from_ur(pose: ArrayLike, *, unit: Literal["mm", "m"]) -> NDArray[np.float64]:
    """4x4 pose from a Universal Robots pose ``p[x, y, z, rx, ry, rz]``.

    Parameters
    ----------
    pose : array_like, shape (..., 6)
        Position and rotation vector (axis times angle, radians), as URScript's
        ``get_actual_tcp_pose()`` returns it (metres) or the teach pendant shows it (mm).
    unit : {"mm", "m"}
        Length unit of the position.

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``base_from_flange`` with the translation in metres.

    Raises
    ------
    ValueError
        If `pose` is not ``(..., 6)`` and finite, `unit` is not ``"mm"`` or ``"m"``, or a
        rotation angle ``|r|`` exceeds 4 pi (two turns: degrees passed as radians, most likely).

    Notes
    -----
    ``R = exp([r]_x)``: a rotation by ``|r|`` about ``r / |r|`` (Rodrigues' formula). A
    read-only `pose` is accepted (and never changed).

    References
    ----------
    Universal Robots, *The URScript Programming Language*, module "motion": a pose is a position
    vector followed by an axis-angle rotation vector.

    Examples
    --------
    UR's documented "tool pointing down" pose turns pi about base y:

    >>> T = pose_from_ur([0.4, -0.1, 0.3, 0.0, np.pi, 0.0], unit="m")
    >>> T[:3, 2].round(12) + 0.0
    array([ 0.,  0., -1.])
    """
    xyz, rv, scale = _split(pose, "pose", 6, unit)
    with np.errstate(under="ignore"):
        _check_angles(norm(rv), "pose", "the rotation angle |r|")
    batch = xyz.shape[:-1]
    with IMPORT_LOCK:
        from scipy.spatial.transform import Rotation  # slow to import: only when needed

    # A writable copy: scipy refuses read-only buffers.
    with np.errstate(under="ignore"):
        rot = Rotation.from_rotvec(np.array(rv.reshape(-1, 3)))
    return _assemble(rot, xyz, scale, batch)


def ur_from_pose(pose: ArrayLike, *, unit: Literal["mm", "m"]) -> NDArray[np.float64]:
    """Universal Robots pose ``[x, y, z, rx, ry, rz]`` from a 4x4 pose.

    The inverse of :func:`pose_from_ur`; the rotation vector comes back with its angle in
    ``[0, pi]``.

    Parameters
    ----------
    pose : array_like, shape (..., 4, 4)
        ``base_from_flange``, translation in metres.
    unit : {"mm", "m"}
        Length unit of the returned position.

    Returns
    -------
    ndarray, shape (..., 6)
        Position (in `unit`) and rotation vector (radians).

    Raises
    ------
    ValueError
        If `pose` is not a stack of rigid transforms, `unit` is unknown, or the translation
        overflows in `unit`.

    References
    ----------
    Universal Robots, *The URScript Programming Language*, module "motion": a pose is a position
    vector followed by an axis-angle rotation vector.

    Examples
    --------
    >>> ur_from_pose(pose_from_ur([400, 0, 300, 0, 0, 1.0], unit="mm"), unit="mm").round(9)
    array([400.,   0., 300.,   0.,   0.,   1.])
    """
    rot, xyz = _rotation(pose, "pose", unit)
    with np.errstate(under="ignore"):
        rv = rot.as_rotvec().reshape(*xyz.shape[:-1], 3)
    return np.concatenate([xyz, rv], axis=-1)


def _euler_to_pose(
    x: ArrayLike,
    name: str,
    *,
    unit: Literal["mm", "m"],
    angles: Literal["deg", "rad"],
    seq: _EulerSequence,
) -> NDArray[np.float64]:
    check_option(angles, "angles", tuple(_RADIANS_PER))
    xyz, ang, scale = _split(x, name, 6, unit)
    _check_angles(ang, name, "the angles", angles)
    batch = xyz.shape[:-1]
    with np.errstate(under="ignore"):
        rad = ang * _RADIANS_PER[angles]
    with IMPORT_LOCK:
        from scipy.spatial.transform import Rotation  # slow to import: only when needed

    with np.errstate(under="ignore"):
        rot = Rotation.from_euler(seq, rad.reshape(-1, 3))
    return _assemble(rot, xyz, scale, batch)


def _pose_to_euler(
    pose: ArrayLike,
    *,
    unit: Literal["mm", "m"],
    angles: Literal["deg", "rad"],
    seq: _EulerSequence,
) -> NDArray[np.float64]:
    check_option(angles, "angles", tuple(_RADIANS_PER))
    rot, xyz = _rotation(pose, "pose", unit)
    with warnings.catch_warnings(record=True) as caught, np.errstate(under="ignore"):
        warnings.simplefilter("always")
        eul = rot.as_euler(seq).reshape(*xyz.shape[:-1], 3)
    if any("Gimbal" in str(w.message) for w in caught):
        warnings.warn(
            "`pose` is at gimbal lock (middle angle +-90 degrees): the first and last angles are "
            "not unique; the returned triple gives the same rotation.",
            GravdirWarning,
            stacklevel=3,
        )
    return np.concatenate([xyz, eul / _RADIANS_PER[angles]], axis=-1)


def pose_from_kuka(
    xyzabc: ArrayLike, *, unit: Literal["mm", "m"], angles: Literal["deg", "rad"]
) -> NDArray[np.float64]:
    """4x4 pose from a KUKA frame ``{X, Y, Z, A, B, C}``.

    Parameters
    ----------
    xyzabc : array_like, shape (..., 6)
        Position and the angles A (about Z), B (about the new Y), C (about the newest X).
        KSS shows millimetres and degrees.
    unit : {"mm", "m"}
        Length unit of the position.
    angles : {"deg", "rad"}
        Unit of A, B, C.

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``base_from_flange``, translation in metres.

    Raises
    ------
    ValueError
        If `xyzabc` is not ``(..., 6)`` and finite, `unit` / `angles` is unknown, or an angle
        exceeds two turns (4 pi rad or 720°; in radians most likely degrees).

    Notes
    -----
    ``R = Rz(A) Ry(B) Rx(C)`` (intrinsic Z, Y', X''), KUKA's documented convention.

    References
    ----------
    Roboception, *rc_visard documentation*, "KUKA XYZ-ABC format" (A about z, B about y, C about
    x, composed ``Rz(A) Ry(B) Rx(C)``). KUKA's own manual was not found; see ``docs/poses.md``.

    Examples
    --------
    ``A = 90`` alone turns the flange x axis onto base y:

    >>> T = pose_from_kuka([500, 0, 800, 90, 0, 0], unit="mm", angles="deg")
    >>> T[:3, 0].round(12) + 0.0, T[:3, 3]
    (array([0., 1., 0.]), array([0.5, 0. , 0.8]))
    """
    return _euler_to_pose(xyzabc, "xyzabc", unit=unit, angles=angles, seq="ZYX")


def kuka_from_pose(
    pose: ArrayLike, *, unit: Literal["mm", "m"], angles: Literal["deg", "rad"]
) -> NDArray[np.float64]:
    """KUKA frame ``{X, Y, Z, A, B, C}`` from a 4x4 pose.

    Parameters
    ----------
    pose : array_like, shape (..., 4, 4)
        ``base_from_flange``, translation in metres.
    unit : {"mm", "m"}
        Length unit of the returned position.
    angles : {"deg", "rad"}
        Unit of the returned A, B, C; A and C in (-180, 180], B in [-90, 90] degrees.

    Returns
    -------
    ndarray, shape (..., 6)

    Raises
    ------
    ValueError
        If `pose` is not rigid, `unit` / `angles` is unknown, or the translation overflows in
        `unit`.

    Warns
    -----
    GravdirWarning
        At gimbal lock (B = +-90 degrees), where only A - C (or A + C) is determined.

    References
    ----------
    Roboception, *rc_visard documentation*, "KUKA XYZ-ABC format" (A about z, B about y, C about
    x, composed ``Rz(A) Ry(B) Rx(C)``). KUKA's own manual was not found; see ``docs/poses.md``.

    Examples
    --------
    >>> T = pose_from_kuka([500, 0, 800, 30, -20, 175], unit="mm", angles="deg")
    >>> kuka_from_pose(T, unit="mm", angles="deg").round(9)
    array([500.,   0., 800.,  30., -20., 175.])
    """
    return _pose_to_euler(pose, unit=unit, angles=angles, seq="ZYX")


def pose_from_fanuc(
    xyzwpr: ArrayLike, *, unit: Literal["mm", "m"], angles: Literal["deg", "rad"]
) -> NDArray[np.float64]:
    """4x4 pose from a Fanuc position ``(X, Y, Z, W, P, R)``.

    Fanuc turns by W about the fixed X axis, then by P about fixed Y, then by R about fixed Z:
    ``R = Rz(R) Ry(P) Rx(W)``, the matrix of :func:`pose_from_kuka` with the first and last
    angle exchanged, ``(A, B, C) = (R, P, W)``.

    Parameters
    ----------
    xyzwpr : array_like, shape (..., 6)
        Position and the angles W (yaw), P (pitch) and R (roll); the controller shows
        millimetres and degrees.
    unit, angles : {"mm", "m"} and {"deg", "rad"}
        Length unit of the position; unit of W, P, R.

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``base_from_flange``, translation in metres.

    Raises
    ------
    ValueError
        If `xyzwpr` is not ``(..., 6)`` and finite, `unit` / `angles` is unknown, or an angle
        exceeds two turns (4 pi rad or 720°; in radians most likely degrees).

    References
    ----------
    Roboception, *rc_visard documentation*, "FANUC XYZ-WPR format" (``Rz(R) Ry(P) Rx(W)``).
    FANUC's own manual was not found; see ``docs/poses.md``.

    Examples
    --------
    >>> Tf = pose_from_fanuc([500, 0, 800, 175, -20, 30], unit="mm", angles="deg")
    >>> Tk = pose_from_kuka([500, 0, 800, 30, -20, 175], unit="mm", angles="deg")
    >>> bool(np.allclose(Tf, Tk))
    True
    """
    return _euler_to_pose(xyzwpr, "xyzwpr", unit=unit, angles=angles, seq="xyz")


def fanuc_from_pose(
    pose: ArrayLike, *, unit: Literal["mm", "m"], angles: Literal["deg", "rad"]
) -> NDArray[np.float64]:
    """Fanuc position ``(X, Y, Z, W, P, R)`` from a 4x4 pose, the inverse of `pose_from_fanuc`.

    W and R come back in (-180, 180] degrees, P in [-90, 90]. At gimbal lock (P = +-90 degrees)
    only a combination of W and R is determined: a :class:`~gravdir.errors.GravdirWarning` is
    issued and the returned triple gives the same rotation.

    Parameters
    ----------
    pose : array_like, shape (..., 4, 4)
        ``base_from_flange``, translation in metres.
    unit, angles : {"mm", "m"} and {"deg", "rad"}
        Length unit of the returned position; unit of the returned W, P, R.

    Returns
    -------
    ndarray, shape (..., 6)

    Raises
    ------
    ValueError
        If `pose` is not rigid, `unit` / `angles` is unknown, or the translation overflows in
        `unit`.

    References
    ----------
    Roboception, *rc_visard documentation*, "FANUC XYZ-WPR format" (``Rz(R) Ry(P) Rx(W)``).
    FANUC's own manual was not found; see ``docs/poses.md``.

    Examples
    --------
    >>> T = pose_from_fanuc([500, 0, 800, 175, -20, 30], unit="mm", angles="deg")
    >>> fanuc_from_pose(T, unit="mm", angles="deg").round(9)
    array([500.,   0., 800., 175., -20.,  30.])
    """
    return _pose_to_euler(pose, unit=unit, angles=angles, seq="xyz")


def _check_quaternion(q: ArrayLike, name: str, tol: float) -> NDArray[np.float64]:
    """A stack of quaternions ``(..., 4)`` of unit norm within `tol`, returned normalised."""
    arr = check_array(q, name, tail=(4,))
    with np.errstate(under="ignore"):
        size = norm(arr)
    worst = float(np.max(np.abs(size - 1.0))) if size.size else 0.0
    if worst > tol:
        raise ValueError(
            f"Expected `{name}` to have unit norm (within `atol`={tol:g}; a unit quaternion "
            f"printed with 6 decimals is off by at most 2e-6), got norms off by {worst:.3g}."
        )
    with np.errstate(under="ignore"):
        out: NDArray[np.float64] = arr / size[..., None]
    return out


def pose_from_abb(
    trans: ArrayLike,
    *,
    quaternion_wxyz: ArrayLike | None = None,
    quaternion_xyzw: ArrayLike | None = None,
    unit: Literal["mm", "m"],
    atol: float = QUATERNION_ATOL,
) -> NDArray[np.float64]:
    """4x4 pose from an ABB ``robtarget``'s ``trans`` and ``rot``.

    The quaternion's order is in the argument's name, and exactly one of the two is given:
    RAPID's ``rot`` ``[q1, q2, q3, q4]`` has the scalar first and goes in `quaternion_wxyz`; a
    quaternion with the scalar last (SciPy's default order in ``Rotation.from_quat`` and
    ``Rotation.as_quat``) goes in `quaternion_xyzw`. The values cannot tell the two orders
    apart -- both are unit quaternions, and a quaternion read in the wrong order is a valid
    rotation, typically far (up to 180°) from the intended one -- so the name is the guard.

    Parameters
    ----------
    trans : array_like, shape (..., 3)
        Position ``[x, y, z]`` (RAPID's ``trans``; RAPID shows millimetres).
    quaternion_wxyz : array_like, shape (..., 4), keyword-only
        Unit quaternion with the scalar first, ``[w, x, y, z]`` = RAPID's ``[q1, q2, q3, q4]``.
    quaternion_xyzw : array_like, shape (..., 4), keyword-only
        The same rotation with the scalar last, ``[x, y, z, w]``.
    unit : {"mm", "m"}
        Length unit of `trans`.
    atol : float, optional
        Accepted deviation of the quaternion's norm from 1 before it is normalised, in (0, 1).
        The default `QUATERNION_ATOL` = 1e-5 admits quaternions printed with 6 decimals (each
        component off by at most 5e-7, the norm by at most 2e-6) and refuses a norm off by 1e-3
        (a quaternion rounded to 3 decimals, or edited by hand). Pass ``atol=1e-4`` for a log
        printed with 4 decimals.

    Returns
    -------
    ndarray, shape (..., 4, 4)
        ``base_from_flange``, translation in metres. The leading axes of `trans` and the
        quaternion broadcast.

    Raises
    ------
    ValueError
        If `trans` is not ``(..., 3)`` and finite, not exactly one quaternion argument is given
        (the 7-column form ``pose_from_abb([x, y, z, q1, q2, q3, q4], unit=...)`` of earlier
        versions is refused this way, the message showing the call that replaces it),
        the quaternion is not ``(..., 4)`` and finite or not of unit norm within `atol`, the two
        do not broadcast, `unit` is unknown, or `atol` is not a number in (0, 1).

    Notes
    -----
    With ``q = (w, x, y, z)`` normalised: ``R = I + 2w[v]_x + 2[v]_x^2``, ``v = (x, y, z)``.

    References
    ----------
    ABB, *RAPID Reference Manual*, data type ``orient``: a normalised quaternion
    ``[q1, q2, q3, q4]`` (the sum of squares equals 1) with ``[1, 0, 0, 0]`` no rotation
    (scalar first). SciPy, ``scipy.spatial.transform.Rotation.from_quat``: scalar-last
    ``(x, y, z, w)`` unless ``scalar_first=True``.

    Examples
    --------
    The quaternion ``[0, 0, 1, 0]`` (pi about y) is ABB's usual tool-down orientation:

    >>> T = pose_from_abb([600, 0, 400], quaternion_wxyz=[0, 0, 1, 0], unit="mm")
    >>> T[:3, 2].round(12) + 0.0
    array([ 0.,  0., -1.])

    The same rotation with the scalar last gives the same pose:

    >>> bool(np.allclose(pose_from_abb([600, 0, 400], quaternion_xyzw=[0, 1, 0, 0], unit="mm"), T))
    True
    """
    tol = _check_atol(atol)
    if (quaternion_wxyz is None) == (quaternion_xyzw is None):
        hint = ""
        try:
            columns = np.shape(trans)[-1:]
        except ValueError:  # a ragged sequence: its own check below names it
            columns = ()
        if columns == (7,):
            hint = (
                " (`trans` has 7 columns: for a [x, y, z, q1, q2, q3, q4] row pass "
                "`trans=r[..., :3], quaternion_wxyz=r[..., 3:]`)"
            )
        raise ValueError(
            "Expected exactly one of `quaternion_wxyz` (scalar first, RAPID's [q1, q2, q3, q4]) "
            "and `quaternion_xyzw` (scalar last), got "
            f"{'both' if quaternion_wxyz is not None else 'neither'}{hint}."
        )
    check_option(unit, "unit", tuple(_METRES_PER))
    xyz = check_array(trans, "trans", tail=(3,))
    if quaternion_wxyz is not None:
        q = _check_quaternion(quaternion_wxyz, "quaternion_wxyz", tol)
        xyzw = q[..., [1, 2, 3, 0]]
        qname = "quaternion_wxyz"
    elif quaternion_xyzw is not None:
        xyzw = _check_quaternion(quaternion_xyzw, "quaternion_xyzw", tol)
        qname = "quaternion_xyzw"
    try:
        batch = tuple(np.broadcast_shapes(xyz.shape[:-1], xyzw.shape[:-1]))
    except ValueError:
        raise ValueError(
            f"Expected `trans` (..., 3) and `{qname}` (..., 4) with leading axes that broadcast, "
            f"got shapes {xyz.shape} and {xyzw.shape}."
        ) from None
    xyz = np.broadcast_to(xyz, (*batch, 3))
    with IMPORT_LOCK:
        from scipy.spatial.transform import Rotation  # slow to import: only when needed

    # A writable copy: scipy refuses read-only buffers. Scalar last is SciPy's own order.
    with np.errstate(under="ignore"):
        rot = Rotation.from_quat(np.array(np.broadcast_to(xyzw, (*batch, 4)).reshape(-1, 4)))
    return _assemble(rot, xyz, _METRES_PER[unit], batch)


def _canonical_wxyz(xyzw: NDArray[np.float64]) -> NDArray[np.float64]:
    """Scalar-first quaternions ``(..., 4)`` from scalar-last ones, with ``w >= 0``.

    ``q`` and ``-q`` are the same rotation; where ``w = 0`` the first non-zero of x, y, z is
    made positive, so the choice is unique.
    """
    wxyz = xyzw[..., [3, 0, 1, 2]]
    lead = np.zeros(wxyz.shape[:-1])
    for i in range(4):  # the first non-zero component decides the sign
        lead = np.where(lead == 0.0, wxyz[..., i], lead)
    return np.asarray(np.where((lead < 0)[..., None], -wxyz, wxyz) + 0.0, dtype=np.float64)


def abb_from_pose(pose: ArrayLike, *, unit: Literal["mm", "m"]) -> NDArray[np.float64]:
    """ABB ``[x, y, z, q1, q2, q3, q4]`` from a 4x4 pose, the quaternion scalar first.

    The layout is RAPID's ``robtarget`` ``trans`` then ``rot``: ``q1`` is the scalar ``w``, so
    the quaternion is ``[w, x, y, z]``. Back to a pose:
    ``pose_from_abb(r[..., :3], quaternion_wxyz=r[..., 3:], unit=unit)``.

    Parameters
    ----------
    pose : array_like, shape (..., 4, 4)
        ``base_from_flange``, translation in metres.
    unit : {"mm", "m"}
        Length unit of the returned position.

    Returns
    -------
    ndarray, shape (..., 7)
        Position ``[x, y, z]`` in `unit`, then the quaternion ``[q1, q2, q3, q4]`` =
        ``[w, x, y, z]`` with ``q1 >= 0`` (``q`` and ``-q`` are the same rotation; where
        ``q1 = 0`` the first non-zero component is positive).

    Raises
    ------
    ValueError
        If `pose` is not rigid, `unit` is unknown, or the translation overflows in `unit`.

    References
    ----------
    ABB, *RAPID Reference Manual*, data type ``orient``: a normalised quaternion
    ``[q1, q2, q3, q4]`` with ``[1, 0, 0, 0]`` no rotation (scalar first).

    Examples
    --------
    >>> T = pose_from_abb([600, 0, 400], quaternion_wxyz=[0, 0, 1, 0], unit="mm")
    >>> abb_from_pose(T, unit="mm").round(9)
    array([600.,   0., 400.,   0.,   0.,   1.,   0.])
    """
    rot, xyz = _rotation(pose, "pose", unit)
    with np.errstate(under="ignore"):
        q = _canonical_wxyz(rot.as_quat().reshape(*xyz.shape[:-1], 4))
    return np.concatenate([xyz, q], axis=-1)
