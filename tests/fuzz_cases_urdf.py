"""Fuzz cases for gravdir.urdf and gravdir.pinocchio.

The URDF text is a string, which the harness does not mutate; the hostile texts (entity
declarations, cycles, missing links) are tested one by one in tests/test_urdf.py. A pinocchio
model is not an array either: its case checks the valid call, a repeat and a misspelled
keyword, and is skipped where pinocchio is not installed (it fails instead when
GRAVDIR_REQUIRE_PINOCCHIO=1, as in CI).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

import pytest

URDF_TEXT = """<?xml version="1.0"?>
<robot name="fuzz_arm">
  <link name="world"/>
  <link name="base"/>
  <link name="upper">
    <inertial>
      <origin xyz="0.2 0 0" rpy="0 0.1 0"/>
      <mass value="1.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/>
    </inertial>
  </link>
  <link name="lower">
    <inertial><mass value="0.5"/></inertial>
  </link>
  <link name="tool"/>
  <link name="camera"/>
  <joint name="mount" type="fixed">
    <parent link="world"/><child link="base"/><origin xyz="0 0 0.1" rpy="0.05 0 0"/>
  </joint>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="lower"/>
    <origin xyz="0.4 0 0" rpy="1.5707963267948966 0 0"/><axis xyz="0 0 1"/>
  </joint>
  <joint name="flange" type="fixed">
    <parent link="lower"/><child link="tool"/><origin xyz="0.3 0 0"/>
  </joint>
  <joint name="camera_joint" type="fixed">
    <parent link="upper"/><child link="camera"/><origin xyz="0.1 0 0.05"/>
  </joint>
</robot>
"""



def _pinocchio_model_case() -> tuple[tuple, dict]:
    if os.environ.get("GRAVDIR_REQUIRE_PINOCCHIO") == "1":
        pin = importlib.import_module("pinocchio")
    else:
        pin = pytest.importorskip("pinocchio", reason="pinocchio (PyPI `pin`) is not installed")
    return (pin.buildModelFromXML(URDF_TEXT),), {"base_frame": "world", "tip_frame": "tool"}


CASES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "gravdir.urdf.chain_from_urdf": lambda: (
        (URDF_TEXT,),
        {"base_link": "world", "tip_link": "tool"},
    ),
    "gravdir.urdf.inertials_from_urdf": lambda: (
        (URDF_TEXT,),
        {"base_link": "base", "tip_link": "tool"},
    ),
    "gravdir.pinocchio.chain_from_pinocchio": _pinocchio_model_case,
}

NOT_CALLED: dict[str, str] = {
    "gravdir.urdf.UrdfInertials": "a result returned by inertials_from_urdf",
}
