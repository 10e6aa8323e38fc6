"""Serial chains from pinocchio models.

:func:`chain_from_pinocchio` turns the joints between two frames of a ``pinocchio.Model`` into
the :class:`~gravdir.kinematics.SerialChain` every estimator takes, for users who already hold a
pinocchio model; :func:`gravdir.urdf.chain_from_urdf` does the same from URDF text without it.

pinocchio is optional: ``pip install -e '.[pinocchio]'`` installs it. Its package on PyPI is
``pin``; the PyPI package named ``pinocchio`` is an unrelated plugin of the nose test runner. It
is imported when :func:`chain_from_pinocchio` is called, never when gravdir is imported.

What is read (pinocchio's documented model API): ``model.frames`` (each frame's ``name``,
``type``, ``parentJoint``, ``parentFrame`` and ``placement`` in its parent joint's frame),
``model.parents``, ``model.jointPlacements`` (each joint's placement in its parent joint's
frame), ``model.joints`` (each joint's ``shortname()``, and its motion subspace at the neutral
configuration) and ``model.names``.

References
----------
pinocchio, ``include/pinocchio/multibody/model.hpp`` (``ModelTpl``: ``jointPlacements``,
``parents``, ``names``, ``frames``), ``model-item.hpp`` (``ModelItem``: ``parentJoint``,
``parentFrame``, ``placement``), and the Python docstring of ``JointModel.shortname`` (the joint
types). https://docs.ros.org/en/jazzy/p/pinocchio/generated/structpinocchio_1_1ModelTpl.html,
https://docs.ros.org/en/jazzy/p/pinocchio/generated/structpinocchio_1_1ModelItem.html.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir.kinematics import SerialChain

__all__ = ["chain_from_pinocchio"]

# pinocchio's one-degree-of-freedom revolute joint models, by `JointModel.shortname()`: about x,
# y or z of the joint frame, or an arbitrary axis, bounded (a URDF `revolute`) or unbounded
# (a URDF `continuous`, configured by the cosine and sine of its angle).
_REVOLUTE = (
    "JointModelRX",
    "JointModelRY",
    "JointModelRZ",
    "JointModelRevoluteUnaligned",
    "JointModelRUBX",
    "JointModelRUBY",
    "JointModelRUBZ",
    "JointModelRevoluteUnboundedUnaligned",
)
# Largest coordinate accepted, in the model's length unit (as in gravdir.kinematics).
_MAX_LENGTH = 1e100
_INSTALL = "pip install -e '.[pinocchio]'"


def _pinocchio() -> Any:
    """The pinocchio module, or an ImportError saying how to install it."""
    try:
        module = importlib.import_module("pinocchio")
    except ImportError as exc:
        raise ImportError(
            f"gravdir.chain_from_pinocchio needs the pinocchio robotics library: {_INSTALL} "
            "(its PyPI package is `pin`)."
        ) from exc
    if not hasattr(module, "Model"):
        raise ImportError(
            "The installed `pinocchio` module is not the robotics library (PyPI's `pinocchio` "
            f"is a nose plugin): uninstall it, then {_INSTALL} (its PyPI package is `pin`)."
        )
    return module


def _frame(pin: Any, model: Any, name: object, what: str) -> int:
    """Index of the frame `name`; a name shared by several frames means the BODY frame."""
    if not isinstance(name, str):
        raise ValueError(f"Expected `{what}` to be a frame name (str), got {name!r}.")
    found = [i for i, frame in enumerate(model.frames) if frame.name == name]
    if not found:
        raise ValueError(f"Expected `{what}` to be a frame of `model`, got {name!r}.")
    if len(found) > 1:
        bodies = [i for i in found if model.frames[i].type == pin.FrameType.BODY]
        if len(bodies) != 1:
            types = ", ".join(str(model.frames[i].type).rsplit(".", 1)[-1] for i in found)
            raise ValueError(
                f"Expected `{what}` to name one frame of `model`, got {name!r}, the name of "
                f"{len(found)} frames ({types})."
            )
        return bodies[0]
    return found[0]


def _leaves(model: Any, base: int) -> list[int]:
    """The frames below frame `base` in the frame tree that no frame has as parent."""
    parents = [int(frame.parentFrame) for frame in model.frames]
    n = len(parents)
    has_child = {p for i, p in enumerate(parents) if p != i and p < n}
    leaves = []
    for i in range(n):
        if i == base or i in has_child:
            continue
        k, steps = i, 0
        # An unset parent frame (pinocchio stores the largest index) ends the walk.
        while k != base and k < n and parents[k] != k and steps <= n:
            k, steps = parents[k], steps + 1
        if k == base:
            leaves.append(i)
    return leaves


def _homogeneous(placement: Any, what: str) -> NDArray[np.float64]:
    pose = np.array(placement.homogeneous, dtype=np.float64)
    if not np.all(np.isfinite(pose)) or not np.all(np.abs(pose[:3, 3]) <= _MAX_LENGTH):
        raise ValueError(
            f"Expected the placements of `model` to be finite and within +-{_MAX_LENGTH:g}, got "
            f"{what} with {pose[:3, 3]}."
        )
    return pose


def chain_from_pinocchio(
    model: Any, *, base_frame: str | None = None, tip_frame: str | None = None
) -> SerialChain:
    """The serial chain from `base_frame` to `tip_frame` of a pinocchio model.

    Needs pinocchio (``pip install -e '.[pinocchio]'``; the PyPI package is ``pin``).

    Parameters
    ----------
    model : pinocchio.Model
        The kinematic tree, for instance from ``pinocchio.buildModelFromUrdf`` or
        ``pinocchio.buildModelFromXML``, with or without a root joint.
    base_frame : str, optional
        Name of the frame that is the chain's base frame (default: ``"universe"``, pinocchio's
        world frame, which is the root link's frame of a model built from a URDF without a root
        joint). A name shared by several frames (pinocchio keeps a URDF link and a joint of the
        same name as two frames) means the BODY frame, the link.
    tip_frame : str, optional
        Name of the frame that is the flange. Required when several frames below `base_frame`
        in the frame tree have no child frame; by default the one such frame.

    Returns
    -------
    SerialChain
        One joint per joint of `model` between `base_frame`'s parent joint (excluded) and
        `tip_frame`'s parent joint (included), base first; chain joint ``i`` turns by the
        pinocchio joint's angle (for an unbounded joint, configured by ``(cos q, sin q)``, by
        ``q``). Link ``i``'s frame is that joint's frame, which for a model built from a URDF
        is the frame of the joint's child link; the flange is `tip_frame`. Stored as a product
        of exponentials (``description="poe"``).

    Raises
    ------
    ImportError
        If pinocchio is not installed, or the installed ``pinocchio`` module is not the
        robotics library.
    ValueError
        If `model` is not a ``pinocchio.Model``; `base_frame` or `tip_frame` is not a str or
        not the name of a frame (or names several frames none or more than one of which is a
        BODY frame); `tip_frame` is needed and missing (the error lists the candidates), or
        its joint is not below `base_frame`'s joint; a joint on the path is not revolute (a
        prismatic, free-flyer, planar, spherical, translation, universal, helical, mimic or
        composite joint; the error names it and its type); the path holds no joint; or a
        placement on the path is not finite or has a coordinate beyond 1e100.

    Notes
    -----
    pinocchio places joint ``j``'s frame at ``jointPlacements[j]`` in its parent joint's frame
    and moves it by the joint's own motion, here a rotation about the unit axis ``a`` of the
    joint's motion subspace (its angular part; the linear part is zero for a revolute joint),
    an axis of the joint frame through its origin. With :math:`B` the placement of
    `base_frame` in its joint's frame and :math:`P_k` the placements along the path, the home
    pose (all angles zero, pinocchio's neutral configuration) of link ``i`` in the base frame
    and of the flange are

    .. math:: M_i = B^{-1} P_1 \\cdots P_i, \\qquad
       M = M_n F,

    :math:`F` being `tip_frame`'s placement in the last joint's frame, and joint ``i``'s axis
    is :math:`R_{M_i} a_i` through the origin of :math:`M_i`, the
    :func:`~gravdir.kinematics.chain_from_poe` description. Only the placements on the path
    are read, so joints off the path, and a free-flyer or other joint above `base_frame`, do
    not matter. A URDF's fixed joints are frames in pinocchio, not joints: they are folded
    into the placements as in :func:`~gravdir.urdf.chain_from_urdf`, and on a model built
    from the same URDF text the two chains agree.

    References
    ----------
    pinocchio, ``ModelTpl`` (``jointPlacements``: "placement of a joint *i* wrt its parent
    joint frame"; ``parents``; ``frames``) and ``ModelItem`` (``parentJoint``,
    ``parentFrame``, ``placement`` "wrt the parent joint frame"):
    https://docs.ros.org/en/jazzy/p/pinocchio/generated/structpinocchio_1_1ModelTpl.html,
    https://docs.ros.org/en/jazzy/p/pinocchio/generated/structpinocchio_1_1ModelItem.html;
    the joint types: the docstring of ``pinocchio.JointModel.shortname``.

    See Also
    --------
    gravdir.urdf.chain_from_urdf : the same chain from URDF text, without pinocchio.

    Examples
    --------
    >>> import pytest
    >>> pin = pytest.importorskip("pinocchio")  # skips this example where it is not installed
    >>> from gravdir.kinematics import link_frames
    >>> text = '''<robot name="arm">
    ...   <link name="base"/> <link name="upper"/> <link name="lower"/> <link name="tool"/>
    ...   <joint name="shoulder" type="revolute">
    ...     <parent link="base"/> <child link="upper"/> <axis xyz="0 0 1"/>
    ...     <limit lower="-3" upper="3" effort="1" velocity="1"/>
    ...   </joint>
    ...   <joint name="elbow" type="continuous">
    ...     <parent link="upper"/> <child link="lower"/>
    ...     <origin xyz="1 0 0"/> <axis xyz="0 0 1"/>
    ...   </joint>
    ...   <joint name="flange" type="fixed">
    ...     <parent link="lower"/> <child link="tool"/> <origin xyz="1 0 0"/>
    ...   </joint>
    ... </robot>'''
    >>> chain = chain_from_pinocchio(pin.buildModelFromXML(text))
    >>> chain.n_joints
    2
    >>> link_frames(chain, [np.pi / 2, 0.0]).flange[:3, 3].round(12) + 0.0
    array([0., 2., 0.])
    """
    pin = _pinocchio()
    if not isinstance(model, pin.Model):
        raise ValueError(f"Expected `model` to be a pinocchio.Model, got {type(model).__name__}.")
    base = 0 if base_frame is None else _frame(pin, model, base_frame, "base_frame")
    base_name = str(model.frames[base].name)
    if tip_frame is None:
        leaves = _leaves(model, base)
        if len(leaves) != 1:
            names = sorted(str(model.frames[i].name) for i in leaves)
            listed = f": {', '.join(names)}" if names else ""
            raise ValueError(
                f"Expected `tip_frame` for a model with {len(leaves)} leaf frames below "
                f"{base_name!r}{listed}."
            )
        tip = leaves[0]
        tip_frame = str(model.frames[tip].name)
    else:
        tip = _frame(pin, model, tip_frame, "tip_frame")
    base_joint = int(model.frames[base].parentJoint)
    path: list[int] = []
    joint = int(model.frames[tip].parentJoint)
    while joint != base_joint:
        if joint == 0 or len(path) > len(model.parents):
            raise ValueError(
                f"Expected `tip_frame` below `base_frame` {base_name!r} in `model`, got "
                f"{tip_frame!r}."
            )
        path.append(joint)
        joint = int(model.parents[joint])
    path.reverse()
    for joint in path:
        kind = str(model.joints[joint].shortname())
        if kind not in _REVOLUTE:
            raise ValueError(
                f"Expected revolute joints between `base_frame` and `tip_frame` of `model`, got "
                f"{kind} joint {str(model.names[joint])!r}."
            )
    if not path:
        raise ValueError(
            f"Expected at least one revolute joint between `base_frame` {base_name!r} and "
            f"`tip_frame` {tip_frame!r} of `model`, got none."
        )
    neutral = pin.neutral(model)
    joint_from_base = _homogeneous(model.frames[base].placement, f"frame {base_name!r}")
    pose = np.eye(4)  # base_from_joint: the rigid inverse of joint_from_base
    pose[:3, :3] = joint_from_base[:3, :3].T
    pose[:3, 3] = -joint_from_base[:3, :3].T @ joint_from_base[:3, 3]
    links, axes = [], []
    with np.errstate(under="ignore"):
        for joint in path:
            name = f"joint {str(model.names[joint])!r}"
            data = model.joints[joint].createData()
            model.joints[joint].calc(data, neutral)
            motion = np.asarray(data.S, dtype=np.float64).reshape(6)  # [linear, angular]
            pose = pose @ _homogeneous(model.jointPlacements[joint], name)
            pose = pose @ _homogeneous(data.M, name)
            axis = motion[3:]
            if not np.all(np.isfinite(motion)) or not np.linalg.norm(axis) > 0:
                raise ValueError(
                    f"Expected the revolute {name} of `model` to have a non-zero axis, got the "
                    f"motion subspace {motion}."
                )
            links.append(pose)
            axes.append(pose[:3, :3] @ (axis / np.linalg.norm(axis)))
        flange = pose @ _homogeneous(model.frames[tip].placement, f"frame {tip_frame!r}")
    home_links = np.stack(links)
    if not np.all(np.abs(home_links[:, :3, 3]) <= _MAX_LENGTH) or not np.all(
        np.abs(flange[:3, 3]) <= _MAX_LENGTH
    ):
        raise ValueError(
            f"Expected the frames of `model` on the path to lie within +-{_MAX_LENGTH:g} of "
            f"`base_frame`, got {np.abs(home_links[:, :3, 3]).max():.3g}."
        )
    return SerialChain(
        np.stack(axes), home_links[:, :3, 3].copy(), home_links, flange, description="poe"
    )
