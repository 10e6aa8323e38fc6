"""The real robot logs the tests read: found outside the repository, never copied into it.

The logs live in ``../shared/realdata`` beside the repository (their README says what each one
is), or where ``GRAVDIR_REALDATA`` points. Where they are absent (a newcomer's clone) the tests
that need them skip, saying why; with ``GRAVDIR_REQUIRE_REALDATA=1`` (as in CI) their absence
fails instead.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = os.environ.get("GRAVDIR_REQUIRE_REALDATA") == "1"
LOGS = "ur10e_logs.npz"
URDF = "ur10e.urdf"

# Published drive gains of the UR10e, N·m per A (the folder's README, from the source's paper).
DRIVE_GAINS = np.array([10.0, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232])
# The development logs of the motion estimator, and the short clean ones (the README's table).
LONG_LOGS = (
    "19_12_23_free",
    "20_01_13_load_2600",
    "20_02_05_20sec_8harm",
    "20_02_06_20sec_5harm",
    "20_02_10_20sec_7harm",
)
SHORT_LOGS = (
    "19_09_27_11_28_22",
    "19_09_27_15_11_06",
    "19_10_01_13_51_41",
    "19_10_01_14_04_13",
    "19_10_01_14_04_41",
)
CORRUPTED_LOG = "19_09_27_11_32_02"
PUSH_LOG = "20_01_22_push_pose_1"


def folder() -> Path:
    """The folder of the real logs (``GRAVDIR_REALDATA``, else ``../shared/realdata``)."""
    given = os.environ.get("GRAVDIR_REALDATA")
    return Path(given) if given else ROOT.parent / "shared" / "realdata"


def require() -> Path:
    """The folder, or a skip (a failure under ``GRAVDIR_REQUIRE_REALDATA=1``) naming what is
    missing."""
    where = folder()
    missing = [name for name in (LOGS, URDF) if not (where / name).is_file()]
    if missing:
        reason = (
            f"the real robot logs are not in {where} (missing {', '.join(missing)}); set "
            "GRAVDIR_REALDATA to their folder, or GRAVDIR_REQUIRE_REALDATA=1 to make their "
            "absence fail"
        )
        try:
            import pytest
        except ImportError:  # a benchmark that reads the logs, run without the test extra
            raise FileNotFoundError(reason) from None
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)
    return where


@dataclass(frozen=True)
class Log:
    """One real log as the controller recorded it: (samples, joints) arrays."""

    name: str
    time: np.ndarray
    q: np.ndarray
    velocity: np.ndarray
    torque: np.ndarray


@cache
def log(name: str) -> Log:
    """The log `name`, torque = motor current x published drive gain."""
    with np.load(require() / LOGS) as data:
        table = np.array(data[name], dtype=np.float64)
    return Log(
        name,
        time=table[:, 0],
        q=table[:, 1:7],
        velocity=table[:, 7:13],
        torque=table[:, 13:19] * DRIVE_GAINS,
    )


@cache
def urdf_text() -> str:
    """The robot's URDF as shipped with the logs."""
    return (require() / URDF).read_text(encoding="utf-8")


def urdf_with_tilted_base(angle: float, axis: tuple[float, float, float]) -> str:
    """The URDF with a link ``tilted_base`` inserted above ``base_link``: a fixed joint rotated
    `angle` rad about the unit `axis` carries ``base_link``, so a vector ``v`` of ``base_link``'s
    frame is ``R v`` in ``tilted_base``'s."""
    from scipy.spatial.transform import Rotation

    root = ET.fromstring(urdf_text())
    for joint in root.findall("joint"):  # the joint that held base_link now holds tilted_base
        child = joint.find("child")
        if child is not None and child.get("link") == "base_link":
            child.set("link", "tilted_base")
    rpy = Rotation.from_rotvec(angle * np.asarray(axis, dtype=float)).as_euler("xyz")
    ET.SubElement(root, "link", name="tilted_base")
    joint = ET.SubElement(root, "joint", name="tilt", type="fixed")
    ET.SubElement(joint, "parent", link="tilted_base")
    ET.SubElement(joint, "child", link="base_link")
    ET.SubElement(joint, "origin", xyz="0 0 0", rpy=" ".join(repr(float(v)) for v in rpy))
    return ET.tostring(root, encoding="unicode")
