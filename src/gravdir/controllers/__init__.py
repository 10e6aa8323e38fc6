"""Gravity directions in the controller's own frame, and the settings controllers take.

A gravdir estimate is an `up` in the frame of the chain it was computed with. This package takes
it the last steps to the robot:

* **base frames**: :func:`express_up` re-expresses any gravity-direction result (and its
  information) in another frame; :data:`BASE_FROM_ROOT` holds, for the robot descriptions where
  it could be established from the description's own source, the rotation from the
  description's root link to the frame the controller expresses gravity in (UR's
  ``base_link`` is turned by pi about z from the controller's *Base*);
* **settings out**: :func:`setting_from_up` gives the numbers a controller takes -- UR
  ``set_gravity``, libfranka's ``gravity_earth``, Epson's ``F_GravityDirection``, ABB's Gravity
  Beta, or a plain gravity vector -- with their covariance in the setting's own units and the
  exact line to type (:class:`ControllerSetting`);
* **settings in**: :func:`up_from_setting` reads a controller's current setting back as an `up`
  (:class:`GravityDirection`), and :func:`compare_setting` measures the angle between a
  calibration and what is installed, in standard deviations of the calibration
  (:class:`SettingCheck`).

Each vendor's sign and order of angles, with the document it comes from, is in
docs/controllers.md, as are the settings left out because their definition could not be
established (UR's installation-screen tilt and rotation, ABB's Gravity Alpha, KUKA's mounting
angles).

References
----------
Universal Robots, *The URScript Programming Language* (``set_gravity``) and ``ur_description``
(``urdf/ur_macro.xacro``); Franka Robotics, libfranka (``include/franka/model.h``,
``robot_state.h``); Epson, *Force Guide SPEL+ Language Reference*; ABB product manuals
(Gravity Beta). CN 112476435 B, claim 1 (a gravity direction expressed in a target frame).
"""

from gravdir.controllers._compare import SettingCheck, compare_setting
from gravdir.controllers._conventions import SETTINGS as SETTINGS
from gravdir.controllers._conventions import Setting as Setting
from gravdir.controllers._frames import BASE_FROM_ROOT, GravityDirection, express_up
from gravdir.controllers._settings import ControllerSetting, setting_from_up, up_from_setting

__all__ = [
    "BASE_FROM_ROOT",
    "ControllerSetting",
    "GravityDirection",
    "SETTINGS",
    "SettingCheck",
    "compare_setting",
    "express_up",
    "setting_from_up",
    "up_from_setting",
]
