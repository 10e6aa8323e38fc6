"""The URDF text of a UR5e-like arm, written for gravdir (no third-party file is shipped)."""

from __future__ import annotations

from typing import Final

__all__ = ["UR5E_LIKE_URDF"]

#: URDF text of a six-joint arm shaped like a Universal Robots UR5e, for examples and tests.
#:
#: Kinematics: Universal Robots' published UR5e DH table (``d1 = 0.1625``, ``a2 = -0.425``,
#: ``a3 = -0.3922``, ``d4 = 0.1333``, ``d5 = 0.0997``, ``d6 = 0.0996`` m, ``alpha = (pi/2, 0,
#: 0, pi/2, -pi/2, 0)``) written as URDF joint origins, with the link frames and names of the
#: ROS description of UR arms. Masses and centres of mass: the published UR5e values (link
#: masses 3.761, 8.058, 2.846, 1.37, 1.3, 0.365 kg), the centres moved from the DH frames into
#: the link frames. Inertias: gravdir's own, from solid cylinders of the links' rough size
#: (Universal Robots publishes none for the UR5e). The base (4 kg) does not move.
#:
#: Frames: the root link ``base_link`` follows REP 103 (x forward); the chain's joints start
#: from ``base_link_inertia``, and the leaf ``base`` is the frame in which the UR controller
#: expresses positions and gravity. Both are ``base_link`` turned by pi about z, as in
#: ``ur_description`` (``urdf/ur_macro.xacro``, joints ``base_link-base_link_inertia`` and
#: ``base_link-base_fixed_joint``), so a vector ``(x, y, z)`` in ``base_link`` reads
#: ``(-x, -y, z)`` in the controller's base. Leaves: ``base`` and ``tool0``; pass
#: ``tip_link="tool0"``. At ``q = 0`` the DH table's zero configuration (arm stretched along
#: the controller base's -x).
UR5E_LIKE_URDF: Final[str] = """<?xml version="1.0"?>
<robot name="ur5e_like">
  <link name="base_link"/>
  <link name="base_link_inertia">
    <inertial>
      <origin xyz="0 0 0" rpy="0 0 0"/>
      <mass value="4.0"/>
      <inertia ixx="0.00443" ixy="0" ixz="0" iyy="0.00443" iyz="0" izz="0.0072"/>
    </inertial>
  </link>
  <link name="shoulder_link">
    <inertial>
      <origin xyz="0 -0.00193 -0.02561" rpy="1.5707963267948966 0 0"/>
      <mass value="3.761"/>
      <inertia ixx="0.0104" ixy="0" ixz="0" iyy="0.0104" iyz="0" izz="0.0068"/>
    </inertial>
  </link>
  <link name="upper_arm_link">
    <inertial>
      <origin xyz="-0.2125 0 0.11336" rpy="0 0 0"/>
      <mass value="8.058"/>
      <inertia ixx="0.0145" ixy="0" ixz="0" iyy="0.1285" iyz="0" izz="0.1285"/>
    </inertial>
  </link>
  <link name="forearm_link">
    <inertial>
      <origin xyz="-0.2422 0 0.0265" rpy="0 0 0"/>
      <mass value="2.846"/>
      <inertia ixx="0.0029" ixy="0" ixz="0" iyy="0.0379" iyz="0" izz="0.0379"/>
    </inertial>
  </link>
  <link name="wrist_1_link">
    <inertial>
      <origin xyz="0 -0.01634 -0.0018" rpy="1.5707963267948966 0 0"/>
      <mass value="1.37"/>
      <inertia ixx="0.00234" ixy="0" ixz="0" iyy="0.00234" iyz="0" izz="0.00139"/>
    </inertial>
  </link>
  <link name="wrist_2_link">
    <inertial>
      <origin xyz="0 0.01634 -0.0018" rpy="-1.5707963267948966 0 0"/>
      <mass value="1.3"/>
      <inertia ixx="0.00222" ixy="0" ixz="0" iyy="0.00222" iyz="0" izz="0.00132"/>
    </inertial>
  </link>
  <link name="wrist_3_link">
    <inertial>
      <origin xyz="0 0 -0.001159" rpy="0 0 0"/>
      <mass value="0.365"/>
      <inertia ixx="0.000173" ixy="0" ixz="0" iyy="0.000173" iyz="0" izz="0.000292"/>
    </inertial>
  </link>
  <link name="flange"/>
  <link name="tool0"/>
  <link name="base"/>
  <joint name="base_link-base_link_inertia" type="fixed">
    <parent link="base_link"/>
    <child link="base_link_inertia"/>
    <origin xyz="0 0 0" rpy="0 0 3.141592653589793"/>
  </joint>
  <joint name="shoulder_pan_joint" type="revolute">
    <parent link="base_link_inertia"/>
    <child link="shoulder_link"/>
    <origin xyz="0 0 0.1625" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-6.2832" upper="6.2832" effort="150" velocity="3.14"/>
  </joint>
  <joint name="shoulder_lift_joint" type="revolute">
    <parent link="shoulder_link"/>
    <child link="upper_arm_link"/>
    <origin xyz="0 0 0" rpy="1.5707963267948966 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-6.2832" upper="6.2832" effort="150" velocity="3.14"/>
  </joint>
  <joint name="elbow_joint" type="revolute">
    <parent link="upper_arm_link"/>
    <child link="forearm_link"/>
    <origin xyz="-0.425 0 0" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-3.1416" upper="3.1416" effort="150" velocity="3.14"/>
  </joint>
  <joint name="wrist_1_joint" type="revolute">
    <parent link="forearm_link"/>
    <child link="wrist_1_link"/>
    <origin xyz="-0.3922 0 0.1333" rpy="0 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-6.2832" upper="6.2832" effort="28" velocity="3.14"/>
  </joint>
  <joint name="wrist_2_joint" type="revolute">
    <parent link="wrist_1_link"/>
    <child link="wrist_2_link"/>
    <origin xyz="0 -0.0997 0" rpy="1.5707963267948966 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-6.2832" upper="6.2832" effort="28" velocity="3.14"/>
  </joint>
  <joint name="wrist_3_joint" type="revolute">
    <parent link="wrist_2_link"/>
    <child link="wrist_3_link"/>
    <origin xyz="0 0.0996 0" rpy="-1.5707963267948966 0 0"/>
    <axis xyz="0 0 1"/>
    <limit lower="-6.2832" upper="6.2832" effort="28" velocity="3.14"/>
  </joint>
  <joint name="wrist_3-flange" type="fixed">
    <parent link="wrist_3_link"/>
    <child link="flange"/>
    <origin xyz="0 0 0" rpy="0 -1.5707963267948966 -1.5707963267948966"/>
  </joint>
  <joint name="flange-tool0" type="fixed">
    <parent link="flange"/>
    <child link="tool0"/>
    <origin xyz="0 0 0" rpy="1.5707963267948966 0 1.5707963267948966"/>
  </joint>
  <joint name="base_link-base_fixed_joint" type="fixed">
    <parent link="base_link"/>
    <child link="base"/>
    <origin xyz="0 0 0" rpy="0 0 3.141592653589793"/>
  </joint>
</robot>
"""
