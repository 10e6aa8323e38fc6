"""Serial chains and link inertials from URDF text.

:func:`chain_from_urdf` turns the joints on the path from a base link to a tip link of a URDF
robot description into the :class:`~gravdir.kinematics.SerialChain` every estimator takes;
:func:`inertials_from_urdf` reads the ``<inertial>`` elements of the same links into a
:class:`UrdfInertials`. Both take the *text* of the description, never a file name, URL or
xacro macro: gravdir does no I/O. The text is parsed with the standard library only, and any
document type or entity declaration is refused before parsing, so a description from anywhere
cannot expand entities ("billion laughs") or reach external resources.

What is read: each ``<joint>``'s ``type``, ``<parent link>``, ``<child link>``, ``<origin xyz
rpy>`` (default zero) and ``<axis xyz>`` (default ``1 0 0``, normalised), and each ``<link>``'s
``<inertial>`` (``<origin>``, ``<mass value>``, ``<inertia ixx ixy ixz iyy iyz izz>``).
Everything else (limits, dynamics, mimic, visual and collision geometry) is ignored.

References
----------
ROS URDF specification, http://wiki.ros.org/urdf/XML/joint (``<joint>``, ``<origin>``,
``<axis>``) and http://wiki.ros.org/urdf/XML/link (``<inertial>``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from gravdir._results import Result
from gravdir.kinematics import SerialChain

__all__ = ["UrdfInertials", "chain_from_urdf", "inertials_from_urdf"]

# Longest text accepted: a URDF of a humanoid with every joint spelled out is ~1 MB; 10 MB keeps
# the parse of any accepted text well under a second.
_MAX_CHARS = 10_000_000
# Most links accepted; robots have tens, a large multi-arm cell a few hundred.
_MAX_LINKS = 10_000
# Largest coordinate accepted, in the length unit of the text (as in gravdir.kinematics).
_MAX_LENGTH = 1e100
# Largest magnitude of an `rpy` angle: a full turn. Angles typed in degrees lie beyond it.
_MAX_ANGLE = 2 * np.pi
# Anything `<!` that is not a comment or CDATA: a DOCTYPE, ENTITY, ELEMENT ... declaration.
_DECLARATION = re.compile(r"<!(?!--|\[CDATA\[)")
# A URDF number is an XML Schema xs:double: the URDF schema (urdfdom's xsd/urdf.xsd) types the
# mass and inertia attributes as xs:double, and xyz and rpy as strings of such numbers separated
# by spaces. The lexical space of xs:double (XML Schema Part 2, 3.2.5) is ASCII only: digits
# 0-9, and lists are split at XML whitespace (space, tab, CR, LF). Python's `\d`, `str.split()`
# and `float()` also take other Unicode digits and spaces ("١ ٠ ٠" would read as 1 0 0), so the
# grammar is spelled out here. INF and NaN, which xs:double allows, are refused: a robot's
# geometry is finite.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_XML_SPACE = re.compile(r"[ \t\r\n]+")
_REVOLUTE = ("revolute", "continuous")
_REFUSED = ("prismatic", "floating", "planar")


@dataclass(frozen=True)
class _Joint:
    name: str
    kind: str
    parent: str
    child: str
    origin: NDArray[np.float64]  # parent_from_child at q = 0, (4, 4)
    axis: NDArray[np.float64]  # unit, in the child frame


@dataclass(frozen=True)
class _Model:
    links: dict[str, ET.Element]
    joint_of_child: dict[str, _Joint]  # the joint whose child each non-root link is
    children: dict[str, list[_Joint]]
    root: str


def _error(what: str) -> ValueError:
    return ValueError(f"Expected `urdf_text` to be a valid URDF robot description: {what}.")


def _numbers(text: str | None, count: int, where: str, default: tuple[float, ...]) -> list[float]:
    if text is None:
        return list(default)
    parts = _XML_SPACE.split(text.strip(" \t\r\n"))
    if len(parts) != count or not all(_NUMBER.fullmatch(p) for p in parts):
        want = "a decimal number" if count == 1 else f"{count} decimal numbers"
        if not text.isascii():
            want += " written in ASCII (digits 0-9, XML whitespace)"
        raise _error(f"{where} should be {want}, got {text!r}")
    values = [float(p) for p in parts]
    if not all(np.isfinite(values)):
        raise _error(f"{where} should be finite, got {text!r}")
    return values


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """``Rz(yaw) Ry(pitch) Rx(roll)``: URDF's fixed-axis roll, pitch, yaw."""
    cr, sr, cp, sp, cy, sy = (
        np.cos(roll),
        np.sin(roll),
        np.cos(pitch),
        np.sin(pitch),
        np.cos(yaw),
        np.sin(yaw),
    )
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _origin(parent: ET.Element, where: str) -> NDArray[np.float64]:
    """The pose given by `parent`'s ``<origin>`` element (identity if there is none)."""
    element = parent.find("origin")
    t = np.eye(4)
    if element is None:
        return t
    xyz = _numbers(element.get("xyz"), 3, f"the origin xyz of {where}", (0.0, 0.0, 0.0))
    rpy = _numbers(element.get("rpy"), 3, f"the origin rpy of {where}", (0.0, 0.0, 0.0))
    if max(abs(v) for v in xyz) > _MAX_LENGTH:
        raise _error(f"the origin xyz of {where} should be within +-{_MAX_LENGTH:g}, got {xyz}")
    if max(abs(v) for v in rpy) > _MAX_ANGLE:
        raise ValueError(
            f"Expected the origin rpy of {where} in `urdf_text` in radians, got {rpy} (beyond "
            f"2 pi): degrees?"
        )
    with np.errstate(under="ignore"):
        t[:3, :3] = _rpy_matrix(*rpy)
    t[:3, 3] = xyz
    return t


def _parse(urdf_text: str) -> _Model:
    """Check and parse the text into links and joints forming one tree."""
    if not isinstance(urdf_text, str):
        raise ValueError(f"Expected `urdf_text` to be a str, got {type(urdf_text).__name__}.")
    if len(urdf_text) > _MAX_CHARS:
        raise ValueError(
            f"Expected `urdf_text` to have at most {_MAX_CHARS} characters, got {len(urdf_text)}."
        )
    if _DECLARATION.search(urdf_text):
        raise ValueError(
            "Expected `urdf_text` without a DOCTYPE or ENTITY declaration (refused: entity "
            "expansion is unsafe and a URDF needs none), got a `<!` declaration."
        )
    try:
        root = ET.fromstring(urdf_text)
    except ET.ParseError as exc:
        raise ValueError(f"Expected `urdf_text` to be well-formed XML, got: {exc}.") from None
    if root.tag != "robot":
        raise _error(f"the root element should be <robot>, got <{root.tag}>")
    links: dict[str, ET.Element] = {}
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise _error("a <link> has no name")
        if name in links:
            raise _error(f"link {name!r} is defined twice")
        links[name] = element
    if not links:
        raise _error("it has no <link>")
    if len(links) > _MAX_LINKS:
        raise _error(f"at most {_MAX_LINKS} links are accepted, got {len(links)}")
    joint_of_child: dict[str, _Joint] = {}
    children: dict[str, list[_Joint]] = {name: [] for name in links}
    names: set[str] = set()
    for element in root.findall("joint"):
        joint = _read_joint(element, links)
        if joint.name in names:
            raise _error(f"joint {joint.name!r} is defined twice")
        names.add(joint.name)
        if joint.child in joint_of_child:
            other = joint_of_child[joint.child].name
            raise _error(
                f"link {joint.child!r} is the child of two joints, {other!r} and "
                f"{joint.name!r} (a URDF is a tree)"
            )
        joint_of_child[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in links if name not in joint_of_child]
    if len(roots) > 1:
        raise _error(f"it should have one root link, got {len(roots)}: {', '.join(roots)}")
    if not roots:
        raise _error("it has no root link: its joints form a cycle")
    reached = {roots[0]}
    stack = [roots[0]]
    while stack:
        for joint in children[stack.pop()]:
            reached.add(joint.child)
            stack.append(joint.child)
    if len(reached) < len(links):
        cut = sorted(joint_of_child[name].name for name in links if name not in reached)
        raise _error(f"joints {', '.join(cut)} form a cycle")
    return _Model(links, joint_of_child, children, roots[0])


def _read_joint(element: ET.Element, links: dict[str, ET.Element]) -> _Joint:
    name = element.get("name")
    if not name:
        raise _error("a <joint> has no name")
    kind = element.get("type", "")
    ends = {}
    for end in ("parent", "child"):
        tag = element.find(end)
        link = tag.get("link") if tag is not None else None
        if not link:
            raise _error(f"joint {name!r} has no <{end} link=...>")
        if link not in links:
            raise _error(f"the {end} link {link!r} of joint {name!r} is not defined")
        ends[end] = link
    where = f"joint {name!r}"
    axis_element = element.find("axis")
    axis_text = axis_element.get("xyz") if axis_element is not None else None
    axis = np.array(_numbers(axis_text, 3, f"the axis of {where}", (1.0, 0.0, 0.0)))
    if kind in _REVOLUTE:
        scale = float(np.max(np.abs(axis)))
        if scale == 0.0:
            raise _error(f"the axis of {where} should be non-zero, got {axis_text!r}")
        with np.errstate(under="ignore"):
            axis = axis / scale
            axis = axis / np.linalg.norm(axis)
    return _Joint(name, kind, ends["parent"], ends["child"], _origin(element, where), axis)


def _path(model: _Model, base_link: str | None, tip_link: str | None) -> list[_Joint]:
    """The joints from `base_link` to `tip_link`, base first."""
    for value, name in ((base_link, "base_link"), (tip_link, "tip_link")):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"Expected `{name}` to be a link name (str), got {value!r}.")
        if value is not None and value not in model.links:
            raise ValueError(f"Expected `{name}` to be a link of `urdf_text`, got {value!r}.")
    base = model.root if base_link is None else base_link
    if tip_link is None:
        leaves, stack = [], [base]
        while stack:
            link = stack.pop()
            below = model.children[link]
            if not below:
                leaves.append(link)
            stack.extend(j.child for j in below)
        if len(leaves) > 1:
            raise ValueError(
                f"Expected `tip_link` for a tree with several leaves below {base!r}: "
                f"{', '.join(sorted(leaves))}."
            )
        tip_link = leaves[0]
    path: list[_Joint] = []
    link = tip_link
    while link != base:
        if link not in model.joint_of_child:
            raise ValueError(
                f"Expected `tip_link` below `base_link` {base!r} in `urdf_text`, got {tip_link!r}."
            )
        joint = model.joint_of_child[link]
        path.append(joint)
        link = joint.parent
    path.reverse()
    for joint in path:
        if joint.kind in _REFUSED:
            raise ValueError(
                f"Expected revolute, continuous or fixed joints between `base_link` and "
                f"`tip_link` of `urdf_text`, got {joint.kind} joint {joint.name!r}."
            )
        if joint.kind not in (*_REVOLUTE, "fixed"):
            raise _error(f"joint {joint.name!r} has an unknown type {joint.kind!r}")
    if not any(j.kind in _REVOLUTE for j in path):
        raise ValueError(
            f"Expected at least one revolute or continuous joint between `base_link` "
            f"{base!r} and `tip_link` {tip_link!r} of `urdf_text`, got none."
        )
    return path


def _home_poses(path: list[_Joint]) -> tuple[list[NDArray[np.float64]], NDArray[np.float64]]:
    """Pose at ``q = 0`` of each movable joint's child link, and of the tip link, base frame."""
    pose = np.eye(4)
    links = []
    with np.errstate(under="ignore"):
        for joint in path:
            pose = pose @ joint.origin
            if joint.kind in _REVOLUTE:
                links.append(pose)
    if not np.all(np.abs(pose[:3, 3]) <= _MAX_LENGTH) or not all(
        np.all(np.abs(t[:3, 3]) <= _MAX_LENGTH) for t in links
    ):
        raise _error(f"the frame origins should lie within +-{_MAX_LENGTH:g}")
    return links, pose


def chain_from_urdf(
    urdf_text: str, *, base_link: str | None = None, tip_link: str | None = None
) -> SerialChain:
    """The serial chain from `base_link` to `tip_link` of a URDF robot description.

    Parameters
    ----------
    urdf_text : str
        The URDF XML itself (not a file name, URL or xacro), at most 10,000,000 characters
        and 10,000 links. A DOCTYPE or ENTITY declaration is refused.
    base_link : str, optional
        The link whose frame is the chain's base frame (default: the root link).
    tip_link : str, optional
        The link whose frame is the flange. Required when the tree below `base_link` has
        several leaves; by default its one leaf.

    Returns
    -------
    SerialChain
        One joint per revolute or continuous joint on the path from `base_link` to `tip_link`,
        base first. Link ``i``'s frame is the URDF frame of joint ``i``'s child link; the flange
        is `tip_link`'s frame. The chain is stored as a product of exponentials
        (``description="poe"``).

    Raises
    ------
    ValueError
        If `urdf_text` is not a str, is too long, holds a ``<!DOCTYPE`` or ``<!ENTITY``
        declaration, is not well-formed XML or not a ``<robot>``; if a link or joint lacks a
        name or is defined twice, a joint names a parent or child link that is not defined,
        the links do not form one tree (several roots, a link with two parents, a cycle); if
        an ``xyz``, ``rpy`` or axis is not three finite decimal numbers in ASCII digits
        (``xs:double``; other Unicode digits and spaces are refused), an axis is zero, a
        coordinate lies beyond 1e100 or an ``rpy`` angle beyond 2 pi (degrees?); if
        `base_link` or `tip_link` is not a link, `tip_link` is not below `base_link` or is
        needed and missing (the error lists the leaves); or if a prismatic, floating, planar
        or unknown joint lies on the path, or none of its joints is revolute or continuous.

    Notes
    -----
    A URDF joint places its child frame at ``origin`` in its parent's frame,

    .. math:: T_{\\text{parent}\\leftarrow\\text{child}}(q)
       = \\begin{pmatrix} R_z(y) R_y(p) R_x(r) & x \\\\ 0 & 1 \\end{pmatrix}
       \\begin{pmatrix} e^{[a] q} & 0 \\\\ 0 & 1 \\end{pmatrix},

    ``rpy`` = :math:`(r, p, y)` being rotations about the fixed x, y and z axes and :math:`a`
    the unit axis in the child frame, through its origin. At ``q = 0`` the product of the
    origins along the path gives each child link's pose :math:`M_i`; joint ``i``'s axis is
    :math:`R_{M_i} a_i` through the origin of :math:`M_i`. A fixed joint contributes its
    origin only: it is folded into the next joint's placement or into the flange. Joints off
    the path are ignored. Continuous and revolute joints are the same here (limits are not
    read).

    References
    ----------
    ROS URDF specification, ``<joint>`` and ``<origin>``: http://wiki.ros.org/urdf/XML/joint.

    See Also
    --------
    inertials_from_urdf : masses and inertias of the same links.
    gravdir.kinematics.chain_from_dh, gravdir.kinematics.chain_from_poe : other descriptions.

    Examples
    --------
    >>> from gravdir.kinematics import link_frames
    >>> text = '''<robot name="arm">
    ...   <link name="base"/> <link name="upper"/> <link name="lower"/> <link name="tool"/>
    ...   <joint name="shoulder" type="revolute">
    ...     <parent link="base"/> <child link="upper"/> <axis xyz="0 0 1"/>
    ...   </joint>
    ...   <joint name="elbow" type="continuous">
    ...     <parent link="upper"/> <child link="lower"/>
    ...     <origin xyz="1 0 0"/> <axis xyz="0 0 1"/>
    ...   </joint>
    ...   <joint name="flange" type="fixed">
    ...     <parent link="lower"/> <child link="tool"/> <origin xyz="1 0 0" rpy="0 0 0"/>
    ...   </joint>
    ... </robot>'''
    >>> chain = chain_from_urdf(text)
    >>> chain.n_joints
    2
    >>> link_frames(chain, [np.pi / 2, 0.0]).flange[:3, 3].round(12) + 0.0
    array([0., 2., 0.])
    """
    model = _parse(urdf_text)
    path = _path(model, base_link, tip_link)
    links, flange = _home_poses(path)
    moving = [j for j in path if j.kind in _REVOLUTE]
    home_links = np.stack(links)
    axes = np.einsum("nij,nj->ni", home_links[:, :3, :3], np.stack([j.axis for j in moving]))
    return SerialChain(axes, home_links[:, :3, 3].copy(), home_links, flange, description="poe")


@dataclass(frozen=True, eq=False, repr=False)
class UrdfInertials(Result):
    """Mass, centre of mass and inertia of each body of a URDF chain (:func:`inertials_from_urdf`).

    Body ``i`` is everything joint ``i`` moves up to the next joint of the chain: its child
    link and every link hanging from it off the path.

    Attributes
    ----------
    mass : ndarray, shape (n,)
        Mass of body ``i``, in the text's mass unit (kg in a URDF).
    com_in_link : ndarray, shape (n, 3)
        Its centre of mass in link ``i``'s frame (zero for a massless body).
    inertia_in_link : ndarray, shape (n, 3, 3)
        Its inertia tensor about its centre of mass, axes of link ``i``'s frame.
    joint_names : tuple of str
        Name of joint ``i`` in the URDF.
    link_names : tuple of str
        Name of joint ``i``'s child link, whose frame is link ``i``'s frame.
    """

    _units = {
        "mass": "kg", "com_in_link": "m", "inertia_in_link": "kg·m²",
    }

    mass: NDArray[np.float64]
    com_in_link: NDArray[np.float64]
    inertia_in_link: NDArray[np.float64]
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]


def _inertial(
    link: ET.Element, name: str
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """(mass, link_from_inertial pose, inertia in the inertial frame) of one link."""
    element = link.find("inertial")
    if element is None:
        return 0.0, np.eye(4), np.zeros((3, 3))
    where = f"the inertial of link {name!r}"
    mass_element = element.find("mass")
    mass_text = mass_element.get("value") if mass_element is not None else None
    if mass_text is None:
        raise _error(f"{where} has no <mass value=...>")
    (mass,) = _numbers(mass_text, 1, f"the mass of link {name!r}", ())
    if mass < 0:
        raise _error(f"the mass of link {name!r} should be non-negative, got {mass_text!r}")
    inertia = np.zeros((3, 3))
    inertia_element = element.find("inertia")
    if inertia_element is not None:
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        values = [_numbers(inertia_element.get(k), 1, f"{k} of {where}", (0.0,))[0] for k in keys]
        ixx, ixy, ixz, iyy, iyz, izz = values
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if max(abs(mass), float(np.max(np.abs(inertia)))) > _MAX_LENGTH:
        raise _error(f"the mass and inertia of link {name!r} should be within +-{_MAX_LENGTH:g}")
    return mass, _origin(element, where), inertia


def inertials_from_urdf(
    urdf_text: str, *, base_link: str | None = None, tip_link: str | None = None
) -> UrdfInertials:
    """Mass, centre of mass and inertia of each body of the chain of :func:`chain_from_urdf`.

    Parameters
    ----------
    urdf_text, base_link, tip_link
        As for :func:`chain_from_urdf`, which picks the same joints.

    Returns
    -------
    UrdfInertials
        One body per revolute or continuous joint on the path, in link ``i``'s frame (the frame
        of joint ``i``'s child link).

    Raises
    ------
    ValueError
        Everything :func:`chain_from_urdf` refuses; and an ``<inertial>`` without a ``<mass
        value>``, a negative mass, an inertia entry or origin that is not a finite decimal
        number, or a value beyond 1e100. The inertia tensor is taken as written: its physical
        consistency (positive semi-definite, triangle inequality) is not checked.

    Notes
    -----
    Body ``i`` holds joint ``i``'s child link and every link below it that no joint of the
    path separates from it, whatever the joint (a gripper's fingers, links beyond `tip_link`),
    placed with the joints off the path at zero. Links above the first joint of the chain do
    not move and are left out; a link without ``<inertial>`` has no mass. The links of a body
    combine by the parallel-axis theorem,

    .. math:: m = \\sum_k m_k, \\qquad c = \\frac{1}{m} \\sum_k m_k c_k, \\qquad
       I = \\sum_k R_k I_k R_k^\\top + m_k \\left(\\lVert d_k \\rVert^2 E - d_k d_k^\\top\\right),
       \\quad d_k = c_k - c,

    with :math:`R_k, c_k` the orientation and origin of link ``k``'s ``<inertial>`` frame in
    link ``i``'s frame.

    References
    ----------
    ROS URDF specification, ``<inertial>``: http://wiki.ros.org/urdf/XML/link.

    Examples
    --------
    >>> text = '''<robot name="pendulum">
    ...   <link name="base"/>
    ...   <link name="arm">
    ...     <inertial>
    ...       <origin xyz="0.5 0 0"/> <mass value="2"/>
    ...       <inertia ixx="0" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
    ...     </inertial>
    ...   </link>
    ...   <joint name="hinge" type="revolute">
    ...     <parent link="base"/> <child link="arm"/> <axis xyz="0 1 0"/>
    ...   </joint>
    ... </robot>'''
    >>> body = inertials_from_urdf(text)
    >>> body.mass, body.com_in_link, body.joint_names
    (array([2.]), array([[0.5, 0. , 0. ]]), ('hinge',))
    """
    model = _parse(urdf_text)
    path = _path(model, base_link, tip_link)
    on_path = {j.name for j in path}
    moving = [j for j in path if j.kind in _REVOLUTE]
    masses, coms, inertias = [], [], []
    # Values up to 1e100 may overflow in the sums: checked below, not raised here.
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        for joint in moving:
            # Links of the body with their poses in the frame of joint's child link.
            parts: list[tuple[str, NDArray[np.float64]]] = []
            stack = [(joint.child, np.eye(4))]
            while stack:
                link, pose = stack.pop()
                parts.append((link, pose))
                for below in model.children[link]:
                    if below.name in on_path and below.kind in _REVOLUTE:
                        continue
                    stack.append((below.child, pose @ below.origin))
            total, weighted, rotated = 0.0, np.zeros(3), np.zeros((3, 3))
            pieces = []
            for link, pose in parts:
                mass, origin, inertia = _inertial(model.links[link], link)
                frame = pose @ origin
                r = frame[:3, :3]
                pieces.append((mass, frame[:3, 3]))
                total += mass
                weighted += mass * frame[:3, 3]
                rotated += r @ inertia @ r.T
            com = weighted / total if total > 0 else np.zeros(3)
            for mass, centre in pieces:
                d = centre - com
                rotated += mass * (float(d @ d) * np.eye(3) - np.outer(d, d))
            masses.append(total)
            coms.append(com)
            inertias.append(0.5 * (rotated + rotated.T))
    result = UrdfInertials(
        mass=np.array(masses),
        com_in_link=np.stack(coms),
        inertia_in_link=np.stack(inertias),
        joint_names=tuple(j.name for j in moving),
        link_names=tuple(j.child for j in moving),
    )
    arrays = (result.mass, result.com_in_link, result.inertia_in_link)
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise _error("the masses and inertias should add up to finite values")
    return result
