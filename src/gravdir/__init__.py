"""gravdir: calibrate robot arms from their own sensors.

Public names are re-exported here from the modules that define them: what a calibration pipeline
calls and the result types it receives (the rule and the table are in ``docs/api.md``). Building
blocks stay importable from their modules.

The names are imported on first use (``import gravdir`` loads none of the estimators, and no
heavy SciPy submodule). To add a public name, add it in three places, each kept sorted: the
import block of its module under ``TYPE_CHECKING`` (what type checkers and IDEs read), the tuple
of its module in ``_EXPORTS`` (what is imported at run time), and ``__all__``.
``tests/test_import.py`` checks that the three agree.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from gravdir._imports import IMPORT_LOCK

if TYPE_CHECKING:
    from gravdir._constants import STANDARD_GRAVITY
    from gravdir.accelerometer import (
        AccelerometerBound,
        AccelerometerFit,
        AccelerometerPlan,
        crlb_up_accelerometer,
        plan_accelerometer_poses,
        up_from_accelerometer,
    )
    from gravdir.closed_form import (
        ClosedFormEstimate,
        ClosedFormRoot,
        solve_l2_offset,
        solve_l3_offset,
        solve_point_mass,
        solve_two_branch,
    )
    from gravdir.controllers import (
        ControllerSetting,
        GravityDirection,
        SettingCheck,
        compare_setting,
        express_up,
        setting_from_up,
        up_from_setting,
    )
    from gravdir.errors import (
        ConvergenceWarning,
        DegenerateGeometryError,
        GravdirWarning,
        InsufficientDataError,
        SignConflictError,
    )
    from gravdir.frames import (
        CanonicalAngles,
        TiltAzimuth,
        angle_between,
        azimuth_from_up,
        canonical_from_up,
        rotation_from_up,
        rotation_matrix_from_up,
        tilt_azimuth_from_up,
        tilt_from_up,
        up_from_canonical,
        up_from_tilt_azimuth,
        vector_in_target_frame,
    )
    from gravdir.friction import (
        ArmFrictionFit,
        AsymmetricStribeckFriction,
        CoulombViscousFriction,
        ExcitationPlan,
        FrictionFit,
        FrictionRun,
        GravityFreeCheck,
        JointFrictionFit,
        LoadDependentFriction,
        LoadFrictionFit,
        StribeckFriction,
        excitation_trajectory,
        fit_friction,
        gravity_free_check,
        identify_arm_friction,
        identify_joint_friction,
        load_dependent_friction,
    )
    from gravdir.fusion import FusedUp, fuse_up
    from gravdir.general import (
        JointSweep,
        PlannedSweep,
        SweepPlan,
        UpBound,
        UpEstimate,
        crlb_up,
        estimate_up,
        joint_sweep_from_chain,
        plan_sweeps,
        planned_sweep_from_chain,
    )
    from gravdir.kinematic_error import (
        BoldDriverTuner,
        InfluenceTuner,
        KinematicErrorModel,
        OrderSpectrum,
        PhasorResponseFit,
        RpropTuner,
        RunSpectrum,
        TunerRun,
        fit_phasor_response,
        harmonic_drive_orders,
        measure_run,
        motor_speed_for_resonance,
        order_spectrum,
    )
    from gravdir.kinematics import (
        ChainFrames,
        SerialChain,
        chain_from_dh,
        chain_from_poe,
        link_frames,
    )
    from gravdir.motion import (
        MotionExcitationPlan,
        MotionUpBound,
        MotionUpEstimate,
        UpTrack,
        UpTracker,
        crlb_up_from_motion,
        estimate_up_from_motion,
        plan_motion_excitation,
        track_up,
    )
    from gravdir.pinocchio import chain_from_pinocchio
    from gravdir.poses import (
        abb_from_pose,
        fanuc_from_pose,
        kuka_from_pose,
        pose_from_abb,
        pose_from_fanuc,
        pose_from_kuka,
        pose_from_ur,
        ur_from_pose,
    )
    from gravdir.sweep import (
        SweepAccumulator,
        SweepFit,
        SweepZeros,
        amplitude_phase_bound,
        fit_sweep,
        fit_sweep_common_mode,
        joint_acceleration,
        joint_velocity,
    )
    from gravdir.touch import (
        PlaneFit,
        ThreePointFit,
        ToolPlaneFit,
        TouchPlan,
        contact_points,
        plan_touches,
        tilt_from_tool_tip_error,
        tool_tip_and_up_from_touches,
        up_from_three_points,
        up_from_touch_points,
        up_from_touches,
    )
    from gravdir.urdf import chain_from_urdf

# Module -> the public names it defines: imported from there on first access.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "gravdir._constants": ("STANDARD_GRAVITY",),
    "gravdir.accelerometer": (
        "AccelerometerBound",
        "AccelerometerFit",
        "AccelerometerPlan",
        "crlb_up_accelerometer",
        "plan_accelerometer_poses",
        "up_from_accelerometer",
    ),
    "gravdir.closed_form": (
        "ClosedFormEstimate",
        "ClosedFormRoot",
        "solve_l2_offset",
        "solve_l3_offset",
        "solve_point_mass",
        "solve_two_branch",
    ),
    "gravdir.controllers": (
        "ControllerSetting",
        "GravityDirection",
        "SettingCheck",
        "compare_setting",
        "express_up",
        "setting_from_up",
        "up_from_setting",
    ),
    "gravdir.errors": (
        "ConvergenceWarning",
        "DegenerateGeometryError",
        "GravdirWarning",
        "InsufficientDataError",
        "SignConflictError",
    ),
    "gravdir.frames": (
        "CanonicalAngles",
        "TiltAzimuth",
        "angle_between",
        "azimuth_from_up",
        "canonical_from_up",
        "rotation_from_up",
        "rotation_matrix_from_up",
        "tilt_azimuth_from_up",
        "tilt_from_up",
        "up_from_canonical",
        "up_from_tilt_azimuth",
        "vector_in_target_frame",
    ),
    "gravdir.friction": (
        "ArmFrictionFit",
        "AsymmetricStribeckFriction",
        "CoulombViscousFriction",
        "ExcitationPlan",
        "FrictionFit",
        "FrictionRun",
        "GravityFreeCheck",
        "JointFrictionFit",
        "LoadDependentFriction",
        "LoadFrictionFit",
        "StribeckFriction",
        "excitation_trajectory",
        "fit_friction",
        "gravity_free_check",
        "identify_arm_friction",
        "identify_joint_friction",
        "load_dependent_friction",
    ),
    "gravdir.fusion": ("FusedUp", "fuse_up"),
    "gravdir.general": (
        "JointSweep",
        "PlannedSweep",
        "SweepPlan",
        "UpBound",
        "UpEstimate",
        "crlb_up",
        "estimate_up",
        "joint_sweep_from_chain",
        "plan_sweeps",
        "planned_sweep_from_chain",
    ),
    "gravdir.kinematic_error": (
        "BoldDriverTuner",
        "InfluenceTuner",
        "KinematicErrorModel",
        "OrderSpectrum",
        "PhasorResponseFit",
        "RpropTuner",
        "RunSpectrum",
        "TunerRun",
        "fit_phasor_response",
        "harmonic_drive_orders",
        "measure_run",
        "motor_speed_for_resonance",
        "order_spectrum",
    ),
    "gravdir.kinematics": (
        "ChainFrames",
        "SerialChain",
        "chain_from_dh",
        "chain_from_poe",
        "link_frames",
    ),
    "gravdir.motion": (
        "MotionExcitationPlan",
        "MotionUpBound",
        "MotionUpEstimate",
        "UpTrack",
        "UpTracker",
        "crlb_up_from_motion",
        "estimate_up_from_motion",
        "plan_motion_excitation",
        "track_up",
    ),
    "gravdir.pinocchio": ("chain_from_pinocchio",),
    "gravdir.poses": (
        "abb_from_pose",
        "fanuc_from_pose",
        "kuka_from_pose",
        "pose_from_abb",
        "pose_from_fanuc",
        "pose_from_kuka",
        "pose_from_ur",
        "ur_from_pose",
    ),
    "gravdir.sweep": (
        "SweepAccumulator",
        "SweepFit",
        "SweepZeros",
        "amplitude_phase_bound",
        "fit_sweep",
        "fit_sweep_common_mode",
        "joint_acceleration",
        "joint_velocity",
    ),
    "gravdir.touch": (
        "PlaneFit",
        "ThreePointFit",
        "ToolPlaneFit",
        "TouchPlan",
        "contact_points",
        "plan_touches",
        "tilt_from_tool_tip_error",
        "tool_tip_and_up_from_touches",
        "up_from_three_points",
        "up_from_touch_points",
        "up_from_touches",
    ),
    "gravdir.urdf": ("chain_from_urdf",),
}

__all__ = [
    "STANDARD_GRAVITY",
    "AccelerometerBound",
    "AccelerometerFit",
    "AccelerometerPlan",
    "ArmFrictionFit",
    "AsymmetricStribeckFriction",
    "BoldDriverTuner",
    "CanonicalAngles",
    "ChainFrames",
    "ClosedFormEstimate",
    "ClosedFormRoot",
    "ControllerSetting",
    "ConvergenceWarning",
    "CoulombViscousFriction",
    "DegenerateGeometryError",
    "ExcitationPlan",
    "FrictionFit",
    "FrictionRun",
    "FusedUp",
    "GravdirWarning",
    "GravityDirection",
    "GravityFreeCheck",
    "InfluenceTuner",
    "InsufficientDataError",
    "JointFrictionFit",
    "JointSweep",
    "KinematicErrorModel",
    "LoadDependentFriction",
    "LoadFrictionFit",
    "MotionExcitationPlan",
    "MotionUpBound",
    "MotionUpEstimate",
    "OrderSpectrum",
    "PhasorResponseFit",
    "PlaneFit",
    "PlannedSweep",
    "RpropTuner",
    "RunSpectrum",
    "SerialChain",
    "SettingCheck",
    "SignConflictError",
    "StribeckFriction",
    "SweepAccumulator",
    "SweepFit",
    "SweepPlan",
    "SweepZeros",
    "ThreePointFit",
    "TiltAzimuth",
    "ToolPlaneFit",
    "TouchPlan",
    "TunerRun",
    "UpBound",
    "UpEstimate",
    "UpTrack",
    "UpTracker",
    "abb_from_pose",
    "amplitude_phase_bound",
    "angle_between",
    "azimuth_from_up",
    "canonical_from_up",
    "chain_from_dh",
    "chain_from_pinocchio",
    "chain_from_poe",
    "chain_from_urdf",
    "compare_setting",
    "contact_points",
    "crlb_up",
    "crlb_up_accelerometer",
    "crlb_up_from_motion",
    "estimate_up",
    "estimate_up_from_motion",
    "excitation_trajectory",
    "express_up",
    "fanuc_from_pose",
    "fit_friction",
    "fit_phasor_response",
    "fit_sweep",
    "fit_sweep_common_mode",
    "fuse_up",
    "gravity_free_check",
    "harmonic_drive_orders",
    "identify_arm_friction",
    "identify_joint_friction",
    "joint_acceleration",
    "joint_sweep_from_chain",
    "joint_velocity",
    "kuka_from_pose",
    "link_frames",
    "load_dependent_friction",
    "measure_run",
    "motor_speed_for_resonance",
    "order_spectrum",
    "plan_accelerometer_poses",
    "plan_motion_excitation",
    "plan_sweeps",
    "plan_touches",
    "planned_sweep_from_chain",
    "pose_from_abb",
    "pose_from_fanuc",
    "pose_from_kuka",
    "pose_from_ur",
    "rotation_from_up",
    "rotation_matrix_from_up",
    "setting_from_up",
    "solve_l2_offset",
    "solve_l3_offset",
    "solve_point_mass",
    "solve_two_branch",
    "tilt_azimuth_from_up",
    "tilt_from_tool_tip_error",
    "tilt_from_up",
    "tool_tip_and_up_from_touches",
    "track_up",
    "up_from_accelerometer",
    "up_from_canonical",
    "up_from_setting",
    "up_from_three_points",
    "up_from_tilt_azimuth",
    "up_from_touch_points",
    "up_from_touches",
    "ur_from_pose",
    "vector_in_target_frame",
]

__version__ = "0.1.0"

_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access of the name (PEP 562).

    Subpackages (``gravdir.sweep``, ``gravdir.plot``, ...) are imported on first access too,
    as ``import gravdir.sweep`` would. The imports run under gravdir's import lock
    (:mod:`gravdir._imports`), which makes concurrent first accesses from several threads safe.
    """
    module = _MODULE_OF.get(name)
    if module is not None:
        with IMPORT_LOCK:
            value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        with IMPORT_LOCK:
            return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
