"""Contact points from flange poses, `up` from three of them, and the tilt of a tool-tip error."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_direction, check_same_shape, check_vectors, describe_shape
from gravdir._results import UpResult, data_fingerprint
from gravdir.errors import InsufficientDataError
from gravdir.poses import check_poses
from gravdir.touch._common import (
    MIN_CONDITIONING,
    batch_repr,
    check_conditioning,
    check_contacts,
    check_min_conditioning,
    check_noise_std,
    check_pose_stack,
    check_vector_batch,
    fmt,
    in_units,
    noise_floor,
    noise_in_units,
    orient,
    plane_information,
    plane_normal_variance,
    scatter,
    set_scale,
    warn_no_information,
    warn_noise_not_estimable,
    warn_sign_margin,
)


def contact_points(
    flange_poses: ArrayLike,
    tool_tip: ArrayLike,
    *,
    base_from_target: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Contact points from flange poses and the tool-tip offset.

    Parameters
    ----------
    flange_poses : array_like, shape (..., N, 4, 4)
        ``base_from_flange`` pose of each contact.
    tool_tip : array_like, shape (..., 3)
        Tool-tip offset ``[x_t, y_t, z_t]`` in the flange frame; its leading axes broadcast
        against those of `flange_poses` (one offset per set of contacts).
    base_from_target : array_like, shape (..., 4, 4), optional
        Pose of a target frame in the base frame. When given, the points are returned in target
        coordinates.

    Returns
    -------
    ndarray, shape (..., N, 3)
        Contact points in the base frame (or the target frame).

    Raises
    ------
    ValueError
        If a pose is not rigid, not finite or of the wrong shape, `tool_tip` is not
        ``(..., 3)``, `flange_poses` is a single pose ``(4, 4)`` (the contact axis ``N`` is
        required, so one contact is passed as ``T[None]``, shape ``(1, 4, 4)``), or a contact
        point overflows the float range.

    See Also
    --------
    up_from_touches : the plane through these points.

    Notes
    -----
    ``[c_i; 1] = T_i [t; 1]``, i.e. ``c_i = R_i t + p_i`` (formula one of CN 112476435 B,
    claim 2). In a target frame with pose ``(R_BT, o_BT)``: ``c_i^T = R_BT^T (c_i - o_BT)``
    (claim 3: the contact points computed in the target frame directly).

    References
    ----------
    CN 112476435 B, claims 2 and 3.

    Examples
    --------
    >>> T = np.eye(4)[None].repeat(2, axis=0)
    >>> T[1, :3, 3] = [0.1, 0.0, 0.0]
    >>> contact_points(T, [0.0, 0.0, 0.2])
    array([[0. , 0. , 0.2],
           [0.1, 0. , 0.2]])
    """
    t_pose = check_pose_stack(flange_poses)
    tip = check_vectors(tool_tip, "tool_tip")
    try:
        np.broadcast_shapes(tip.shape[:-1], t_pose.shape[:-3])
    except ValueError:
        raise ValueError(
            f"Expected `tool_tip` of shape (3,) or with leading axes broadcasting against "
            f"`flange_poses` {t_pose.shape}, got {tip.shape}."
        ) from None
    bt = None if base_from_target is None else check_poses(base_from_target, "base_from_target")
    if bt is not None:
        try:
            np.broadcast_shapes(bt.shape[:-2], t_pose.shape[:-3])
        except ValueError:
            raise ValueError(
                f"Expected `base_from_target` of shape (4, 4) or with leading axes broadcasting "
                f"against those of `flange_poses` {describe_shape(t_pose.shape)}, "
                f"got {describe_shape(bt.shape)}."
            ) from None
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        pts = np.einsum("...ij,...j->...i", t_pose[..., :3, :3], tip[..., None, :])
        pts = pts + t_pose[..., :3, 3]
        check_contacts(pts, "`flange_poses` and `tool_tip`")
        if bt is None:
            return np.asarray(pts, dtype=np.float64)
        rel = pts - bt[..., None, :3, 3]
        out = np.einsum("...ji,...j->...i", bt[..., None, :3, :3], rel)
    return check_contacts(out, "`flange_poses`, `tool_tip` and `base_from_target`")


@dataclass(frozen=True, eq=False, repr=False)
class ThreePointFit(UpResult):
    """The plane through three contact points: `up` by the cross product.

    Attributes
    ----------
    up : ndarray, shape (..., 3)
        Unit normal of the plane through the three points, on the side of the hint.
    up_information : ndarray, shape (..., 3, 3)
        Fisher information of `up`, 1/rad²: ``sigma^-2 sum_i q_i q_i^T`` over the points'
        in-plane coordinates ``q_i`` for the caller's `noise_std` ``sigma``. Without a noise
        level three points leave the uncertainty of `up` undetermined: the information is then
        zero and `up_std_deg` infinite.
    cross : ndarray, shape (..., 3)
        ``P = (c_2 - c_1) x (c_3 - c_1)`` as written in CN 112476435 B, claim 1,
        unnormalised; its sign follows the order of the points.
    conditioning : ndarray, shape (...)
        ``sqrt(lambda_2 / lambda_1)`` of the points' scatter matrix: 0 for collinear points,
        1 for an equilateral triangle.
    up_cov, up_std_deg
        Covariance of `up` (..., 3, 3), rad², and its RMS angle in degrees (properties, see
        :class:`~gravdir._results.UpResult`).
    """

    _units = {
        "cross": "m²", "conditioning": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    cross: NDArray[np.float64]
    conditioning: NDArray[np.float64]

    def __repr__(self) -> str:
        extra = f"up_std_deg={fmt(self.up_std_deg)} deg, conditioning={fmt(self.conditioning)}"
        return batch_repr("ThreePointFit", self.up, extra)


def up_from_three_points(
    p1: ArrayLike,
    p2: ArrayLike,
    p3: ArrayLike,
    *,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    noise_std: float | None = None,
    min_conditioning: float = MIN_CONDITIONING,
) -> ThreePointFit:
    """`up` as the normal of the plane through three contact points, by the cross product.

    Parameters
    ----------
    p1, p2, p3 : array_like, shape (..., 3)
        Contact points (broadcast together).
    up_hint : array_like, shape (..., 3), optional
        Any vector on the upper side of the plane; `up` is the normal with a positive component
        along it. Its leading axes broadcast to those of the points. Default base +z.
    noise_std : float, optional
        Standard deviation of each contact coordinate (used at least as large as the
        coordinates' round-off ``eps * max |c|``). Three points leave no residual to
        estimate it from: without it the information of `up` is zero, `up_std_deg` infinite,
        and a :class:`~gravdir.errors.GravdirWarning` says so.
    min_conditioning : float, optional
        Smallest accepted ``sqrt(lambda_2 / lambda_1)``, in (0, 1] (default 1e-6, the limit
        below which round-off dominates the normal).

    Returns
    -------
    ThreePointFit

    Raises
    ------
    DegenerateGeometryError
        If the points are collinear or two coincide, or `up_hint` lies in their plane.
    ValueError
        If an argument is not ``(..., 3)`` and finite, the points do not broadcast together,
        `up_hint` is zero or does not broadcast to their batch shape, `noise_std` is not
        positive, `min_conditioning` is not in (0, 1], or the points are so far apart that
        `cross` overflows.

    Warns
    -----
    GravdirWarning
        If `noise_std` is not given: the uncertainty of `up` is then undetermined. If
        `up_hint` is within three standard deviations of the plane (the sign of `up` is then
        uncertain; the warning gives the margin). If `noise_std` is so large that the
        information underflows to zero.

    See Also
    --------
    up_from_touch_points : the total-least-squares plane of three or more points.

    Notes
    -----
    ``P = (p_2 - p_1) x (p_3 - p_1)`` is normal to the plane (parallel to gravity), and
    ``up = sign(P . h) P / |P|`` with ``h`` = `up_hint`. With isotropic noise ``sigma`` on the
    points, the Fisher information of the normal is ``sigma^-2 sum_i q_i q_i^T`` over the
    points' centred in-plane coordinates (the three-point case of :func:`up_from_touch_points`).

    References
    ----------
    CN 112476435 B, claim 1 (the cross product of two contact differences); claim 3 (the same
    with points in a target frame).

    Examples
    --------
    >>> r = up_from_three_points([0, 0, 0], [0, 1, 0], [1, 0, 0], noise_std=1e-3)
    >>> r.up + 0.0, r.cross
    (array([0., 0., 1.]), array([ 0.,  0., -1.]))
    >>> round(r.up_std_deg, 3)
    0.115
    """
    a = check_vectors(p1, "p1")
    b = check_vectors(p2, "p2")
    c = check_vectors(p3, "p3")
    hint = check_direction(up_hint, "up_hint", batch=True)
    noise = check_noise_std(noise_std)
    min_conditioning = check_min_conditioning(min_conditioning)
    shape = check_same_shape(p1=a, p2=b, p3=c)
    fingerprint = data_fingerprint(a, b, c)  # the caller's points, before broadcasting
    a, b, c = np.broadcast_arrays(a, b, c)
    check_vector_batch(hint, "up_hint", shape[:-1], a, "p1, p2, p3")
    names = "`p1`, `p2`, `p3`"
    raw = np.stack([a, b, c], axis=-2)
    scale = set_scale(raw)
    pts = in_units(raw, scale[..., None, None])
    _, lam, vec = scatter(pts, np.ones(pts.shape[:-1]), names)
    cond = check_conditioning(pts, lam, min_conditioning, names)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        cross = np.cross(b - a, c - a)
    if not np.all(np.isfinite(cross)):
        raise ValueError(
            f"Expected {names} close enough together for a finite `cross` "
            "(differences below about 1e154), got a cross product beyond the float range."
        )
    # The unit normal in scaled units (the raw cross product may have underflowed).
    unit = np.cross(pts[..., 1, :] - pts[..., 0, :], pts[..., 2, :] - pts[..., 0, :])
    unit = unit / np.linalg.norm(unit, axis=-1, keepdims=True)
    sign = orient(unit, hint, "`up_hint`")
    up = unit * sign[..., None]
    if noise is None:
        warn_noise_not_estimable(3, 3, stacklevel=3)
        sigma = np.full(cond.shape, np.inf)
    else:
        sigma = noise_in_units(noise, scale, noise_floor(pts))
        var = plane_normal_variance(lam, vec, sigma, np.broadcast_to(hint, up.shape))
        warn_sign_margin(up, hint, var, "`up_hint`", stacklevel=3)
    # Three points: lambda_3 is zero up to round-off; the information lives in the tangent
    # plane of the fitted normal, which is `up` up to sign.
    info = plane_information(lam, vec, sigma)
    if noise is not None and np.any(np.all(info == 0.0, axis=(-2, -1))):
        warn_no_information(stacklevel=3)
    return ThreePointFit(
        up=up,
        up_information=info,
        cross=cross,
        conditioning=cond,
        fingerprint=fingerprint,
    )


def tilt_from_tool_tip_error(
    flange_poses: ArrayLike,
    tool_tip: ArrayLike,
    tool_tip_error: ArrayLike,
    *,
    min_conditioning: float = MIN_CONDITIONING,
) -> NDArray[np.float64]:
    """Angle by which an error in the tool tip tilts the fitted plane normal.

    Parameters
    ----------
    flange_poses : array_like, shape (..., N, 4, 4)
        ``base_from_flange`` pose of each contact, N >= 3 (N = 3 is the three-point result).
    tool_tip : array_like, shape (..., 3)
        Tool-tip offset used, in the flange frame.
    tool_tip_error : array_like, shape (..., 3)
        Error ``delta`` of that offset, in the flange frame (true = `tool_tip` + `tool_tip_error`).
    min_conditioning : float, optional
        As in :func:`up_from_touch_points`.

    Returns
    -------
    ndarray, shape (...)
        Angle in radians between the normals fitted with ``t`` and with ``t + delta``.

    Raises
    ------
    DegenerateGeometryError
        If either set of contacts is collinear.
    InsufficientDataError
        If N < 3.
    ValueError
        If an argument has the wrong shape or is not finite, `min_conditioning` is not in
        (0, 1], or a contact point overflows the float range.

    See Also
    --------
    tool_tip_and_up_from_touches : estimate the tool tip with the plane instead.

    Notes
    -----
    The error moves contact ``i`` by ``R_i delta``; only its component along ``n`` tilts the
    plane, to first order by ``delta n = -sum_k u_k (sum_i (u_k . q_i)(n^T R_i delta))
    / lambda_k``. With identical orientations ``n^T R_i delta`` is the same for every contact and
    the plane only shifts: no tilt.

    References
    ----------
    CN 112476435 B, claim 2 (the contact points depend on the tool-tip offset); Golub & Van Loan
    (1980) (the total-least-squares plane and its first-order perturbation).

    Examples
    --------
    Same orientation at every contact: a tool-tip error does not tilt the plane.

    >>> T = np.array([np.eye(4)] * 3)
    >>> T[:, :3, 3] = [[0, 0, 0], [0.3, 0, 0], [0, 0.3, 0]]
    >>> float(tilt_from_tool_tip_error(T, [0, 0, -0.2], [0.001, 0.002, 0.003])) < 1e-12
    True
    """
    err = check_vectors(tool_tip_error, "tool_tip_error")
    min_conditioning = check_min_conditioning(min_conditioning)
    a = contact_points(flange_poses, tool_tip)
    if a.shape[-2] < 3:
        raise InsufficientDataError(
            f"Expected `flange_poses` to hold at least 3 contacts, got {a.shape[-2]}."
        )
    tip = check_vectors(tool_tip, "tool_tip")
    with np.errstate(over="ignore"):
        moved = tip + err
    if not np.all(np.isfinite(moved)):
        raise ValueError(
            "Expected `tool_tip` + `tool_tip_error` within the float range, got an overflow."
        )
    try:
        b = contact_points(flange_poses, moved)
    except ValueError:
        raise ValueError(
            "Expected `tool_tip_error` to give finite contact points, got contacts beyond the "
            "float range."
        ) from None
    normals = []
    for pts in (a, b):
        unit = in_units(pts, set_scale(pts)[..., None, None])
        _, lam, vec = scatter(unit, np.ones(unit.shape[:-1]), "`flange_poses`")
        check_conditioning(unit, lam, min_conditioning, "`flange_poses`")
        normals.append(vec[..., :, 0])
    cross = np.linalg.norm(np.cross(normals[0], normals[1]), axis=-1)
    dot = np.abs(np.einsum("...i,...i->...", normals[0], normals[1]))
    return np.asarray(np.arctan2(cross, dot), dtype=np.float64)
