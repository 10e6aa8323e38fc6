"""Link frames of a serial chain of revolute joints, batched over configurations.

A chain is described by standard or modified (Craig) Denavit-Hartenberg parameters
(:func:`chain_from_dh`, ``convention="standard"`` or ``"modified"``) or as a product of
exponentials (:func:`chain_from_poe`). Every description is turned into one representation,
:class:`SerialChain`: the axis of each joint (a direction and a point, in the base frame, at
``q = 0``), the pose of each link frame and of the flange at ``q = 0``. :func:`link_frames`
evaluates the chain at joint positions ``q`` of shape ``(..., n)``.

Conventions. Joint ``i`` (0-based in arrays) moves link ``i``; the frame of link ``i`` moves
rigidly with that link. Joint ``i``'s axis is then a constant vector in link ``i``'s frame
(:attr:`SerialChain.axes_in_link`), whatever the joint positions. Only revolute joints are
supported. All poses are 4x4 homogeneous transforms ``[[R, p], [0, 0, 0, 1]]`` and all outputs
are in the base frame.

References
----------
Denavit & Hartenberg (1955), standard DH parameters; Craig (2005), modified DH parameters;
Lynch & Park (2017), the product of exponentials.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_finite,
    check_option,
    check_positive,
    check_radians,
    check_rotation_matrix,
    describe_shape,
    norm,
)
from gravdir._results import Result

__all__ = [
    "ChainFrames",
    "SerialChain",
    "chain_from_dh",
    "chain_from_poe",
    "link_frames",
]

# Default tolerance for unit axes, zero screw pitch and rigid poses. Parameters typed from a
# datasheet or computed in float64 meet these to ~1e-12; 1e-6 still catches a wrong unit
# (millimetres for metres) or a pose that is not a rigid transform.
_ATOL = 1e-6

# Largest length (and coordinate of a position) a chain may hold, in its length unit. A robot
# in nanometres spans ~1e9; 1e100 is far beyond any unit, and keeps every composition of a few
# thousand poses, and every cross product of an axis with a position, within the float range.
_MAX_LENGTH = 1e100

# Largest magnitude of a fixed angle of a DH table (`alpha`, `theta_offset`): a full turn. A
# table typed in degrees (twists of 90, offsets of 180) lies beyond it.
_MAX_FIXED_ANGLE = 2 * np.pi

#: The two Denavit-Hartenberg conventions of :func:`chain_from_dh`.
DHConvention = Literal["standard", "modified"]
_DH_CONVENTIONS: tuple[DHConvention, ...] = ("standard", "modified")

#: Where a :class:`SerialChain` came from.
ChainDescription = Literal["dh", "modified_dh", "poe"]
_DESCRIPTIONS: tuple[ChainDescription, ...] = ("dh", "modified_dh", "poe")



def _orthonormalize(r: NDArray[np.float64]) -> NDArray[np.float64]:
    """Nearest rotation matrix (polar factor) of nearly orthonormal matrices, det > 0."""
    with np.errstate(under="ignore"):
        u, _, vt = np.linalg.svd(r)
        return u @ vt  # type: ignore[no-any-return]


def _check_atol(atol: float) -> float:
    """`atol` in (0, 1): at 1 or more a zero axis would pass as unit."""
    value = check_positive(atol, "atol")
    if value >= 1.0:
        raise ValueError(f"Expected `atol` to be below 1, got {atol!r}.")
    return value


def _check_lengths(x: NDArray[np.float64], name: str, what: str = "") -> None:
    """Refuse lengths or coordinates beyond `_MAX_LENGTH` in magnitude."""
    largest = float(np.max(np.abs(x))) if x.size else 0.0
    if largest > _MAX_LENGTH:
        raise ValueError(
            f"Expected {what or 'the lengths of'} `{name}` within +-{_MAX_LENGTH:g}, got "
            f"{largest:.3g}."
        )


def _check_fixed_angles(x: NDArray[np.float64], name: str) -> None:
    """Refuse a fixed DH angle beyond a full turn as probably degrees."""
    largest = float(np.max(np.abs(x))) if x.size else 0.0
    if largest > _MAX_FIXED_ANGLE:
        raise ValueError(
            f"Expected `{name}` in radians, got {largest:.6g} (beyond 2 pi = "
            f"{_MAX_FIXED_ANGLE:.6g}): degrees?"
        )


def _check_poses(
    x: ArrayLike, name: str, atol: float, *, lead: int | None = None
) -> NDArray[np.float64]:
    """Validate a rigid transform (4, 4), or `lead` of them (lead, 4, 4) if `lead` is set."""
    t = check_array(x, name, finite=False)
    want = (4, 4) if lead is None else (lead, 4, 4)
    if t.shape != want:
        raise ValueError(
            f"Expected `{name}` to have shape {describe_shape(want)}, "
            f"got {describe_shape(t.shape)}."
        )
    check_finite(t, name)
    # A rotation within atol < 1 has no entry beyond sqrt(1 + atol): refuse larger entries
    # before R^T R is formed, where they would overflow.
    largest = float(np.max(np.abs(t[..., :3, :3])))
    if largest > 1.0 + atol:
        raise ValueError(
            f"Expected the rotation part [:3, :3] of `{name}` to be rotation matrices (entries "
            f"within [-1, 1]), got an entry of magnitude {largest:.3g}."
        )
    try:
        with np.errstate(under="ignore"):
            rot = check_rotation_matrix(t[..., :3, :3], name, atol=atol)
    except ValueError as exc:
        text = str(exc).replace(f"`{name}`", f"the rotation part [:3, :3] of `{name}`", 1)
        raise ValueError(text) from None
    _check_lengths(t[..., :3, 3], name, "the translations of")
    bottom = t[..., 3, :]
    worst = float(np.max(np.abs(bottom - [0.0, 0.0, 0.0, 1.0]))) if bottom.size else 0.0
    if worst > atol:
        raise ValueError(
            f"Expected the last row of `{name}` to be (0, 0, 0, 1) within {atol:g}, "
            f"got a deviation of {worst:.3g}."
        )
    out = t.copy()
    out[..., :3, :3] = _orthonormalize(rot)
    out[..., 3, :] = [0.0, 0.0, 0.0, 1.0]
    return out


def _rot_z(angle: NDArray[np.float64]) -> NDArray[np.float64]:
    c, s = np.cos(angle), np.sin(angle)
    t = np.zeros(np.shape(angle) + (4, 4))
    t[..., 0, 0], t[..., 0, 1], t[..., 1, 0], t[..., 1, 1] = c, -s, s, c
    t[..., 2, 2] = t[..., 3, 3] = 1.0
    return t


def _rot_x(angle: NDArray[np.float64]) -> NDArray[np.float64]:
    c, s = np.cos(angle), np.sin(angle)
    t = np.zeros(np.shape(angle) + (4, 4))
    t[..., 1, 1], t[..., 1, 2], t[..., 2, 1], t[..., 2, 2] = c, -s, s, c
    t[..., 0, 0] = t[..., 3, 3] = 1.0
    return t


def _trans(x: float, y: float, z: float) -> NDArray[np.float64]:
    t = np.eye(4)
    t[:3, 3] = (x, y, z)
    return t


def _skew(w: NDArray[np.float64]) -> NDArray[np.float64]:
    k = np.zeros(w.shape[:-1] + (3, 3))
    k[..., 0, 1], k[..., 0, 2] = -w[..., 2], w[..., 1]
    k[..., 1, 0], k[..., 1, 2] = w[..., 2], -w[..., 0]
    k[..., 2, 0], k[..., 2, 1] = -w[..., 1], w[..., 0]
    return k


def _revolute_exp(
    axis: NDArray[np.float64], point: NDArray[np.float64], angle: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Rigid motion turning by `angle` (shape (...)) about the line (axis, point): (..., 4, 4)."""
    k = _skew(axis)
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    r = np.eye(3) + s * k + (1.0 - c) * (k @ k)
    t = np.zeros(np.shape(angle) + (4, 4))
    t[..., :3, :3] = r
    t[..., :3, 3] = point - r @ point
    t[..., 3, 3] = 1.0
    return t


@dataclass(frozen=True, eq=False, repr=False)
class SerialChain(Result):
    """A serial chain of revolute joints, described at ``q = 0`` in the base frame.

    Build one with :func:`chain_from_dh` or :func:`chain_from_poe`; direct construction
    validates the fields the same way and keeps private read-only copies of the arrays.

    Attributes
    ----------
    home_axes : ndarray, shape (n, 3)
        Unit direction of joint ``i``'s axis at ``q = 0``, base frame. Positive joint motion
        turns the distal links right-handedly about it.
    home_points : ndarray, shape (n, 3)
        A point on joint ``i``'s axis at ``q = 0``, base frame.
    home_links : ndarray, shape (n, 4, 4)
        Pose of link ``i``'s frame (the link joint ``i`` moves) at ``q = 0``, base frame.
    home_flange : ndarray, shape (4, 4)
        Pose of the flange at ``q = 0``, base frame; it moves with the last link.
    description : {"dh", "modified_dh", "poe"}
        Where the chain came from: standard DH, modified DH or a product of exponentials.
    atol : float
        Tolerance the fields were validated with (unit axes, rigid poses); default 1e-6, in
        (0, 1).

    Raises
    ------
    ValueError
        If a field has the wrong shape or is not numeric and finite, an axis is not unit or a
        pose not rigid within `atol`, a coordinate of a point or a translation lies beyond
        1e100 (in any length unit no robot comes near it; it keeps every composition of poses
        finite), or `description` is not an option.
    """

    _units = {
        "home_axes": "", "home_points": "m", "home_links": "m (translation)",
        "home_flange": "m (translation)", "atol": "",
    }

    home_axes: NDArray[np.float64]
    home_points: NDArray[np.float64]
    home_links: NDArray[np.float64]
    home_flange: NDArray[np.float64]
    description: ChainDescription = "poe"
    atol: float = _ATOL

    def __post_init__(self) -> None:
        check_option(self.description, "description", _DESCRIPTIONS)
        atol = _check_atol(self.atol)
        axes = check_array(self.home_axes, "home_axes", tail=(3,))
        if axes.ndim != 2 or axes.shape[0] < 1:
            raise ValueError(
                "Expected `home_axes` to have shape (n, 3) with n >= 1, "
                f"got {describe_shape(axes.shape)}."
            )
        n = axes.shape[0]
        with np.errstate(under="ignore"):
            length = norm(axes)  # overflow-safe: a huge axis is refused, not an overflow
        worst = float(np.max(np.abs(length - 1.0)))
        if worst > atol:
            raise ValueError(
                f"Expected `home_axes` to be unit vectors (within {atol:g}), got norms off by "
                f"{worst:.3g}."
            )
        points = check_array(self.home_points, "home_points", tail=(3,))
        if points.shape != (n, 3):
            raise ValueError(
                f"Expected `home_points` to have shape {describe_shape((n, 3))} like `home_axes`, "
                f"got {describe_shape(points.shape)}."
            )
        _check_lengths(points, "home_points", "the coordinates of")
        links = _check_poses(self.home_links, "home_links", atol, lead=n)
        flange = _check_poses(self.home_flange, "home_flange", atol)
        with np.errstate(under="ignore"):
            object.__setattr__(self, "home_axes", axes / length[:, None])
        object.__setattr__(self, "home_points", np.array(points, dtype=np.float64))
        object.__setattr__(self, "home_links", links)
        object.__setattr__(self, "home_flange", flange)
        object.__setattr__(self, "atol", atol)
        super().__post_init__()

    @property
    def n_joints(self) -> int:
        """Number of joints ``n``."""
        return int(self.home_axes.shape[0])

    @property
    def screws(self) -> NDArray[np.float64]:
        """Screw axes at ``q = 0`` in the base frame, shape (n, 6): ``[w, v]``, ``v = -w x p``."""
        with np.errstate(under="ignore"):
            v = -np.cross(self.home_axes, self.home_points)
        return np.concatenate([self.home_axes, v], axis=-1)

    @property
    def axes_in_link(self) -> NDArray[np.float64]:
        """Joint ``i``'s axis in link ``i``'s own frame, shape (n, 3); constant in ``q``."""
        r = self.home_links[:, :3, :3]
        with np.errstate(under="ignore"):
            return np.asarray(np.einsum("nji,nj->ni", r, self.home_axes), dtype=np.float64)

    @property
    def points_in_link(self) -> NDArray[np.float64]:
        """The point of joint ``i``'s axis given by `home_points`, in link ``i``'s frame (n, 3)."""
        r = self.home_links[:, :3, :3]
        offset = self.home_points - self.home_links[:, :3, 3]
        with np.errstate(under="ignore"):
            return np.asarray(np.einsum("nji,nj->ni", r, offset), dtype=np.float64)

    def __repr__(self) -> str:
        return f"SerialChain(n_joints={self.n_joints}, description={self.description!r})"


def _dh_params(
    d: ArrayLike, theta_offset: ArrayLike, a: ArrayLike, alpha: ArrayLike
) -> tuple[NDArray[np.float64], ...]:
    arrays = {
        "d": check_array(d, "d"),
        "theta_offset": check_array(theta_offset, "theta_offset"),
        "a": check_array(a, "a"),
        "alpha": check_array(alpha, "alpha"),
    }
    if arrays["d"].ndim != 1 or arrays["d"].size < 1:
        raise ValueError(
            f"Expected `d` to have shape (n,) with n >= 1, got {describe_shape(arrays['d'].shape)}."
        )
    n = arrays["d"].size
    for name, arr in arrays.items():
        if arr.shape != (n,):
            raise ValueError(
                f"Expected `{name}` to have shape ({n},) like `d`, got {describe_shape(arr.shape)}."
            )
    for name in ("d", "a"):
        _check_lengths(arrays[name], name)
    for name in ("theta_offset", "alpha"):
        _check_fixed_angles(arrays[name], name)
    return arrays["d"], arrays["theta_offset"], arrays["a"], arrays["alpha"]


def _optional_pose(x: ArrayLike | None, name: str, atol: float) -> NDArray[np.float64]:
    return np.eye(4) if x is None else _check_poses(x, name, atol)


def chain_from_dh(
    d: ArrayLike,
    theta_offset: ArrayLike,
    a: ArrayLike,
    alpha: ArrayLike,
    *,
    convention: DHConvention = "standard",
    base: ArrayLike | None = None,
    link_from_flange: ArrayLike | None = None,
    atol: float = _ATOL,
) -> SerialChain:
    """A revolute chain from standard or modified (Craig) Denavit-Hartenberg parameters.

    Parameters
    ----------
    d, theta_offset, a, alpha : array_like, shape (n,)
        Row ``i`` of the DH table, metres and radians, in the same order for both conventions.
        Standard: offset along, and angle about, the previous z axis
        (``theta_i = q_i + theta_offset[i]``), length along, and twist about, the new x axis.
        Modified: ``d[i]`` = :math:`d_i`, ``theta_offset[i]`` = :math:`\\theta_i - q_i`, and
        ``a[i]``, ``alpha[i]`` = :math:`a_{i-1}`, :math:`\\alpha_{i-1}` (the length and twist
        *before* joint ``i``; Craig's table puts them on joint ``i``'s row too).
    convention : {"standard", "modified"}, optional
        Which Denavit-Hartenberg convention the table follows (default "standard").
    base : array_like, shape (4, 4), optional
        Pose of frame 0 in the base frame (default identity).
    link_from_flange : array_like, shape (4, 4), optional
        Pose of the flange in the last frame ``n`` (default identity: the flange is frame
        ``n``).
    atol : float, optional
        Tolerance for rigid `base` and `link_from_flange` (default 1e-6).

    Returns
    -------
    SerialChain
        The chain, with `description` ``"dh"`` or ``"modified_dh"``. Link ``i``'s frame is
        frame ``i`` (1-based); joint ``i`` turns about the z axis of frame ``i - 1``
        (standard) or of frame ``i`` (modified).

    Raises
    ------
    ValueError
        If the four parameter arrays are not 1-D of one length ``n >= 1``, numeric and
        finite; a twist `alpha` or an offset `theta_offset` lies beyond a full turn
        (``|angle| > 2 pi``: degrees?); a length `d`, `a` or a translation (or a frame origin
        they add up to) lies beyond 1e100; `convention` is not an option; `atol` is not in
        (0, 1); or a pose is not a rigid transform.

    Notes
    -----
    Each joint contributes

    .. math:: A_i^{\\text{std}} = R_z(\\theta_i)\\, T_z(d_i)\\, T_x(a_i)\\, R_x(\\alpha_i),
       \\qquad A_i^{\\text{mod}} = R_x(\\alpha_{i-1})\\, T_x(a_{i-1})\\, R_z(\\theta_i)\\, T_z(d_i),
       \\qquad T_i = T_{\\text{base}} A_1 \\cdots A_i.

    Standard: joint ``i`` turns about :math:`z_{i-1}` through the origin of frame ``i - 1``;
    in link ``i``'s frame that axis is the constant :math:`(0, \\sin\\alpha_i, \\cos\\alpha_i)`.
    Modified: joint ``i`` turns about :math:`z_i` through the origin of frame ``i``, and its
    axis in link ``i``'s frame is :math:`(0, 0, 1)`. Only revolute joints are supported (a
    prismatic joint's variable would be `d`).

    References
    ----------
    Denavit & Hartenberg (1955), "A kinematic notation for lower-pair mechanisms based on
    matrices", J. Appl. Mech. 22, 215-221 (the standard convention). Craig (2005),
    Introduction to Robotics: Mechanics and Control, 3rd ed., ch. 3 (the modified convention).

    Examples
    --------
    A planar two-link arm with unit links, straight along x at ``q = 0``:

    >>> chain = chain_from_dh([0, 0], [0, 0], [1, 1], [0, 0])
    >>> frames = link_frames(chain, [np.pi / 2, 0.0])
    >>> frames.flange[:3, 3].round(12) + 0.0
    array([0., 2., 0.])
    >>> chain.axes_in_link
    array([[0., 0., 1.],
           [0., 0., 1.]])

    The same arm in the modified convention: the first link's length sits on the second row
    and the second link's length becomes the flange offset.

    >>> tool = np.eye(4)
    >>> tool[0, 3] = 1.0
    >>> chain = chain_from_dh(
    ...     [0, 0], [0, 0], [0, 1], [0, 0], convention="modified", link_from_flange=tool
    ... )
    >>> link_frames(chain, [np.pi / 2, 0.0]).flange[:3, 3].round(12) + 0.0
    array([0., 2., 0.])
    """
    check_option(convention, "convention", _DH_CONVENTIONS)
    atol = _check_atol(atol)
    d_, th, a_, al = _dh_params(d, theta_offset, a, alpha)
    frame = _optional_pose(base, "base", atol)
    tool = _optional_pose(link_from_flange, "link_from_flange", atol)
    n = d_.size
    axes, points, links = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 4, 4))
    with np.errstate(under="ignore"):  # products of tiny lengths and angles round to zero
        for i in range(n):
            if convention == "standard":
                axes[i], points[i] = frame[:3, 2], frame[:3, 3]
                frame = frame @ _rot_z(th[i]) @ _trans(0.0, 0.0, d_[i]) @ _trans(a_[i], 0.0, 0.0)
                frame = frame @ _rot_x(al[i])
            else:
                frame = frame @ _rot_x(al[i]) @ _trans(a_[i], 0.0, 0.0)
                frame = frame @ _rot_z(th[i]) @ _trans(0.0, 0.0, d_[i])
                axes[i], points[i] = frame[:3, 2], frame[:3, 3]
            links[i] = frame
        flange = frame @ tool
    origins = np.concatenate([points.ravel(), links[:, :3, 3].ravel(), flange[:3, 3]])
    _check_lengths(origins, "d`, `a`, `base` and `link_from_flange", "the frame origins of")
    description: ChainDescription = "dh" if convention == "standard" else "modified_dh"
    return SerialChain(axes, points, links, flange, description=description, atol=atol)


def chain_from_poe(
    screws: ArrayLike,
    home_flange: ArrayLike,
    *,
    home_links: ArrayLike | None = None,
    base: ArrayLike | None = None,
    atol: float = _ATOL,
) -> SerialChain:
    """A revolute chain from a product of exponentials in the space frame.

    Parameters
    ----------
    screws : array_like, shape (n, 6)
        Screw axis ``[w, v]`` of each joint at ``q = 0`` in the space frame: ``w`` the unit
        axis direction, ``v = -w x p`` for a point ``p`` on the axis (zero pitch: revolute).
    home_flange : array_like, shape (4, 4)
        Pose ``M`` of the flange at ``q = 0`` in the space frame.
    home_links : array_like, shape (n, 4, 4), optional
        Pose of each link's frame at ``q = 0`` in the space frame. Default: a frame with the
        space frame's orientation at the point of joint ``i``'s axis nearest the space origin,
        ``w x v``.
    base : array_like, shape (4, 4), optional
        Pose of the space frame in the base frame (default identity).
    atol : float, optional
        Tolerance (default 1e-6) on ``|w| - 1``, on the pitch ``w . v`` (in length units) and
        on the rigidity of the poses. Accepted axes are normalised and their pitch removed.

    Returns
    -------
    SerialChain
        The chain, in the base frame.

    Raises
    ------
    ValueError
        If `screws` is not ``(n, 6)`` with ``n >= 1``, numeric and finite, an axis is not
        unit or has non-zero pitch (a prismatic or helical joint), a moment ``v``, a
        translation or a frame origin lies beyond 1e100, `atol` is not in (0, 1), or a pose is
        not a rigid transform of the expected shape.

    Notes
    -----
    .. math:: T_i(q) = e^{[S_1] q_1} \\cdots e^{[S_i] q_i} M_i, \\qquad
       T_{\\text{flange}}(q) = e^{[S_1] q_1} \\cdots e^{[S_n] q_n} M,

    each exponential a rotation by :math:`q_k` about the line of :math:`S_k`. Joint ``i``'s
    axis is fixed in link ``i``'s frame, so any rigid choice of :math:`M_i` is valid.

    References
    ----------
    Lynch & Park (2017), Modern Robotics: Mechanics, Planning, and Control, ch. 4 (the
    space-frame product of exponentials).

    Examples
    --------
    >>> screws = [[0, 0, 1, 0, 0, 0], [0, 0, 1, 0, -1, 0]]
    >>> home = np.eye(4)
    >>> home[0, 3] = 2.0
    >>> chain = chain_from_poe(screws, home)
    >>> link_frames(chain, [np.pi / 2, 0.0]).flange[:3, 3].round(12) + 0.0
    array([0., 2., 0.])
    """
    atol = _check_atol(atol)
    s = check_array(screws, "screws", tail=(6,))
    if s.ndim != 2 or s.shape[0] < 1:
        raise ValueError(
            f"Expected `screws` to have shape (n, 6) with n >= 1, got {describe_shape(s.shape)}."
        )
    n = s.shape[0]
    w, v = s[:, :3], s[:, 3:]
    with np.errstate(under="ignore"):
        length = norm(w)  # overflow-safe: a huge axis is refused, not an overflow
    worst = float(np.max(np.abs(length - 1.0)))
    if worst > atol:
        raise ValueError(
            f"Expected the axes (first three columns) of `screws` to be unit (revolute joints "
            f"only, within {atol:g}), got norms off by {worst:.3g}."
        )
    _check_lengths(v, "screws", "the moments (last three columns) of")
    with np.errstate(under="ignore"):  # products of tiny components round to zero
        w = w / length[:, None]
        v = v / length[:, None]
        pitch = np.abs(np.einsum("ij,ij->i", w, v))
        if float(np.max(pitch)) > atol:
            raise ValueError(
                f"Expected zero pitch w . v in `screws` (revolute joints only, within "
                f"{atol:g}), got {float(np.max(pitch)):.3g}."
            )
        p = np.cross(w, v)
        flange = _check_poses(home_flange, "home_flange", atol)
        if home_links is None:
            links = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
            links[:, :3, 3] = p
        else:
            links = _check_poses(home_links, "home_links", atol, lead=n)
        frame = _optional_pose(base, "base", atol)
        r, o = frame[:3, :3], frame[:3, 3]
        points, links, flange = p @ r.T + o, frame @ links, frame @ flange
    origins = np.concatenate([points.ravel(), links[:, :3, 3].ravel(), flange[:3, 3]])
    _check_lengths(origins, "screws`, `home_links`, `home_flange` and `base", "the origins of")
    return SerialChain(w @ r.T, points, links, flange, description="poe", atol=atol)


@dataclass(frozen=True, eq=False, repr=False)
class ChainFrames(Result):
    """Link frames and joint axes of a serial chain at joint positions ``q``, base frame.

    Attributes
    ----------
    rotations : ndarray, shape (..., n, 3, 3)
        Orientation of link ``i``'s frame (columns: its axes in base coordinates).
    origins : ndarray, shape (..., n, 3)
        Origin of link ``i``'s frame.
    joint_axes : ndarray, shape (..., n, 3)
        Unit direction of joint ``i``'s axis, ``rotations @ axes_in_link``.
    joint_points : ndarray, shape (..., n, 3)
        A point on joint ``i``'s axis (the one given by :attr:`SerialChain.home_points`,
        carried along with link ``i``).
    flange : ndarray, shape (..., 4, 4)
        Pose of the flange.
    axes_in_link : ndarray, shape (n, 3)
        Joint ``i``'s axis in link ``i``'s own frame; constant, not batched.
    """

    _units = {
        "rotations": "", "origins": "m", "joint_axes": "", "joint_points": "m",
        "flange": "m (translation)", "axes_in_link": "",
    }

    rotations: NDArray[np.float64]
    origins: NDArray[np.float64]
    joint_axes: NDArray[np.float64]
    joint_points: NDArray[np.float64]
    flange: NDArray[np.float64]
    axes_in_link: NDArray[np.float64]

    @property
    def link_poses(self) -> NDArray[np.float64]:
        """Pose of link ``i``'s frame, shape (..., n, 4, 4)."""
        t = np.zeros(self.rotations.shape[:-2] + (4, 4))
        t[..., :3, :3] = self.rotations
        t[..., :3, 3] = self.origins
        t[..., 3, 3] = 1.0
        return t

    def __repr__(self) -> str:
        batch = self.origins.shape[:-2]
        return f"ChainFrames(batch_shape={batch}, n_joints={self.origins.shape[-2]})"


def link_frames(chain: SerialChain, q: ArrayLike) -> ChainFrames:
    """Evaluate the link frames and joint axes of `chain` at joint positions `q`.

    Parameters
    ----------
    chain : SerialChain
        The chain, from :func:`chain_from_dh` or :func:`chain_from_poe`.
    q : array_like, shape (..., n)
        Joint positions, radians, within ±4π (two turns); leading axes are batch axes.

    Returns
    -------
    ChainFrames
        Link frame orientations and origins, joint axes and points, and the flange pose, all in
        the base frame, with the batch shape of `q`.

    Raises
    ------
    ValueError
        If `chain` is not a :class:`SerialChain`, `q` is not numeric and finite with last
        axis ``n``, or a joint position lies beyond ±4π: no joint of a serial arm is held two
        turns from its zero, so such numbers are taken for degrees (the message ends in
        "degrees?").

    Notes
    -----
    With :math:`(\\omega_k, p_k)` the axis of joint ``k`` at ``q = 0`` and
    :math:`E_k(q_k) = e^{[S_k] q_k}` the rotation by :math:`q_k` about that line,

    .. math:: T_i(q) = E_1(q_1) \\cdots E_i(q_i)\\, M_i, \\qquad
       \\omega_i(q) = R_i(q)\\, a_i, \\qquad p_i(q) = T_i(q)\\, \\bar p_i,

    with :math:`M_i` the home pose of link ``i``, :math:`a_i = R_{M_i}^\\top \\omega_i` its
    axis and :math:`\\bar p_i = M_i^{-1} p_i` its point in link coordinates. The batch is
    vectorised; the loop runs over joints.

    References
    ----------
    Lynch & Park (2017), Modern Robotics, ch. 4 (forward kinematics as a product of
    exponentials).

    Examples
    --------
    >>> chain = chain_from_dh([0.1, 0], [0, 0], [0, 0.5], [np.pi / 2, 0])
    >>> frames = link_frames(chain, np.zeros((4, 2)))
    >>> frames.rotations.shape, frames.joint_axes.shape, frames.flange.shape
    ((4, 2, 3, 3), (4, 2, 3), (4, 4, 4))
    >>> frames.joint_axes[0].round(12) + 0.0
    array([[ 0.,  0.,  1.],
           [ 0., -1.,  0.]])
    """
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    n = chain.n_joints
    qq = check_array(q, "q", min_ndim=1)
    if qq.shape[-1] != n:
        raise ValueError(
            f"Expected `q` to have shape (..., {n}) for a chain of {n} joints, "
            f"got {describe_shape(qq.shape)}."
        )
    check_radians(qq, "q")
    batch = qq.shape[:-1]
    # Positions stay within n * 1e100 (rigid motions keep distances), far from overflow; tiny
    # angles and lengths only underflow, harmlessly, to zero.
    with np.errstate(under="ignore"):
        prod = np.broadcast_to(np.eye(4), batch + (4, 4))
        links = np.empty(batch + (n, 4, 4))
        for i in range(n):
            prod = prod @ _revolute_exp(chain.home_axes[i], chain.home_points[i], qq[..., i])
            links[..., i, :, :] = prod @ chain.home_links[i]
        rot = links[..., :3, :3]
        org = links[..., :3, 3]
        a_local = chain.axes_in_link
        axes = np.einsum("...nij,nj->...ni", rot, a_local)
        points = np.einsum("...nij,nj->...ni", rot, chain.points_in_link) + org
        flange = prod @ chain.home_flange
    return ChainFrames(
        rotations=rot,
        origins=org,
        joint_axes=axes,
        joint_points=points,
        flange=flange,
        axes_in_link=a_local,
    )
