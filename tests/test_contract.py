"""One contract for every result type, checked on results of real calls.

Every public class that derives from `gravdir._results.Result` (found in the `__all__` of every
module, so a new result type cannot be missed) is built here by the calls a user makes, and
checked: read-only arrays, `==` that never raises, a pickled copy equal to the original,
`json.dumps(to_dict())`, a `repr`; gravity-direction results also carry an information matrix
that is symmetric, positive semi-definite, has `up` in its null space, and whose pseudo-inverse
is `up_cov` with `up_std_deg` matching it.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pickle
import pkgutil
import warnings
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from fuzz_cases_urdf import URDF_TEXT

import gravdir
from gravdir import (
    FrictionRun,
    InfluenceTuner,
    KinematicErrorModel,
    chain_from_dh,
    contact_points,
    crlb_up,
    estimate_up,
    excitation_trajectory,
    fit_phasor_response,
    fit_sweep,
    gravity_free_check,
    harmonic_drive_orders,
    identify_arm_friction,
    joint_sweep_from_chain,
    measure_run,
    order_spectrum,
    plan_sweeps,
    plan_touches,
    solve_l2_offset,
    solve_point_mass,
    tilt_azimuth_from_up,
    tool_tip_and_up_from_touches,
    up_from_three_points,
    up_from_touch_points,
)
from gravdir._results import Fingerprinted, Result, UpResult
from gravdir.frames import canonical_from_up
from gravdir.kinematic_error import (
    BoldDriverTuner,
    RpropTuner,
    bold_driver_update,
    rprop_update,
)
from gravdir.kinematics import link_frames
from gravdir.synthetic import (
    canonical_arm,
    realistic_sensors,
    touch_contacts,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic.friction_joint import SyntheticFrictionJoint
from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
from gravdir.synthetic.sensors import TorqueSensor
from gravdir.urdf import inertials_from_urdf

UP = up_from_base_tilt(np.radians(7.0), np.radians(25.0))


def _public_result_types() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(gravdir.__path__, "gravdir."):
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, Result)
                and obj not in (Result, Fingerprinted, UpResult)
            ):
                found[obj.__name__] = obj
    return found


@cache
def _sweep_results() -> dict[str, Any]:
    """Sweeps of a tilted two-joint arm and of a UR5-like arm, fitted and solved."""
    arm = canonical_arm(L1=0.8, gamma0=0.4, up=UP)
    rec1 = arm.sweep(0, np.array([0.0, 1.2 - 0.4]), -np.pi, np.pi, 0.5, 100.0)
    fit1 = fit_sweep(rec1.q, velocity=rec1.velocity, torque=rec1.torque)
    zero = float(fit1.zeros().unstable)
    rec2 = arm.sweep(1, np.array([zero, 0.0]), -1.0, 2.5, 0.5, 100.0)
    fit2 = fit_sweep(rec2.q, velocity=rec2.velocity, torque=rec2.torque)

    rng = np.random.default_rng(3)
    ur5 = ur5_arm(up=UP)
    sensors = realistic_sensors(rng, ur5.peak_gravity_torque())
    chain = chain_from_dh(*ur5.dh.T)
    base = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    records = []
    for j, turn in ((0, 0.0), (1, 0.0), (1, np.pi / 2), (1, np.pi)):
        pose_k = base.copy()
        pose_k[0] += turn
        lo, hi = (-1.7, 1.8) if j == 0 else (-2.9, -0.3)
        rec = ur5.sweep(j, pose_k, lo, hi, 0.3, 100.0, sensor=sensors, rng=rng)
        records.append((j, pose_k, rec))
    batch = fit_sweep(
        np.stack([r.q for _, _, r in records[1:]]),
        velocity=np.stack([r.velocity for _, _, r in records[1:]]),
        torque=np.stack([r.torque for _, _, r in records[1:]]),
    )
    sweeps = [
        joint_sweep_from_chain(chain, p, j, fit_sweep(r.q, velocity=r.velocity, torque=r.torque))
        for j, p, r in records
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = plan_sweeps(
            chain, base, masses=ur5.masses, coms=ur5.coms, noise_std=0.05,
            target_std=np.radians(0.1),
        )
    return {
        "fit1": fit1,
        "fit2": fit2,
        "batch": batch,
        "record": rec1,
        "arm": arm,
        "sensor": sensors[0],
        "sweep": sweeps[0],
        "estimate": estimate_up(sweeps),
        "bound": crlb_up(plan.sweeps, up_hint=UP),
        "plan": plan,
        "chain": chain,
        "frames": link_frames(chain, base),
    }


@cache
def _accelerometer_results() -> dict[str, Any]:
    from fuzz_cases_accelerometer import sample_results

    return sample_results()  # type: ignore[no-any-return]


def _touch_results() -> dict[str, Any]:
    rng = np.random.default_rng(5)
    sigma = 2e-5
    data = touch_contacts(rng, 8, noise_std=sigma, min_orientation=np.radians(20.0))
    pts = contact_points(data.flange_poses, data.tool_tip)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        three_free = up_from_three_points(pts[0], pts[1], pts[2])
    return {
        "data": data,
        "three": up_from_three_points(pts[0], pts[1], pts[2], noise_std=sigma),
        "three_undetermined": three_free,
        "plane": up_from_touch_points(pts),
        "tool": tool_tip_and_up_from_touches(data.flange_poses, noise_std=sigma),
        "plan": plan_touches(8),
    }


@cache
def _kinematic_error_results() -> dict[str, Any]:
    orders = harmonic_drive_orders(200, 202)
    joint = HarmonicDriveJoint(noise_density=150e-6 * 9.80665, up=np.array([0.0, -1.0, 0.0]))
    rng = np.random.default_rng(0)
    run = constant_speed_run(joint, 31.4, 110, rng=rng)
    spectrum = order_spectrum(run.motor_angle, signal=run.acceleration[..., 0], orders=orders)
    measured = measure_run(run.motor_angle, readings=run.acceleration, orders=orders)
    model = KinematicErrorModel(orders, joint.cancelling_coefficients(orders))
    influence = InfluenceTuner(orders)
    for _ in range(2):
        r = constant_speed_run(joint, 31.4, 110, correction=influence.model, rng=rng)
        influence.step(r.motor_angle, readings=r.acceleration)
    bold = BoldDriverTuner(orders)
    rprop = RpropTuner(orders)
    for tuner in (bold, rprop):
        r = constant_speed_run(joint, 31.4, 110, correction=tuner.model, rng=rng)
        tuner.step(r.motor_angle, readings=r.acceleration)
    grad = np.ones((len(orders), 2))
    corrections = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    gains = np.array([[0.5 - 0.2j, 1.5 + 0.1j]])
    deviations = gains * corrections[:, None, :] + (0.1 + 0.3j)
    return {
        "joint": joint,
        "run": run,
        "spectrum": spectrum,
        "measured": measured,
        "model": model,
        "tuner_run": influence.history[-1],
        "bold": bold_driver_update(np.zeros_like(grad), grad, -grad, 1e-5),
        "rprop": rprop_update(np.zeros_like(grad), grad, grad, np.full_like(grad, 1e-5)),
        "response": fit_phasor_response(corrections, deviations),
    }


@cache
def _friction_results() -> dict[str, Any]:
    plan = excitation_trajectory(
        -1.2, 1.2, np.geomspace(0.005, 1.0, 8), max_acceleration=2.0, sample_rate=100.0,
        cruise_time=2.0,
    )
    joint = SyntheticFrictionJoint(noise_std=0.05)
    rng = np.random.default_rng(13)
    gravity = 3.0 * np.sin(plan.q + 0.4)
    free = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
    loaded = joint.measure(
        plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
    )
    up = np.array([0.0, 0.0, 1.0])
    pose = gravity_free_check(up, up, [0, 0, 0], [0.3, 0.1, 0.2], 3.0)
    runs = {
        "J1": (
            FrictionRun(plan.velocity, acceleration=plan.acceleration, torque=free),
            FrictionRun(
                plan.velocity, acceleration=plan.acceleration, torque=loaded, gravity_torque=gravity
            ),
        )
    }
    table = identify_arm_friction(runs, model="asymmetric-stribeck", free_poses={"J1": pose})
    joint_fit = table["J1"]
    return {
        "plan": plan,
        "check": pose,
        "run": runs["J1"][1],
        "table": table,
        "joint_fit": joint_fit,
        "free": joint_fit.free,
        "load": joint_fit.load,
        "free_model": joint_fit.free.model,
        "load_model": joint_fit.model,
        "coulomb_viscous": gravdir.CoulombViscousFriction(1.0, 2.0),
        "stribeck": gravdir.StribeckFriction(2.0, 3.0, 0.04, 1.5),
    }


def _closed_form_results() -> dict[str, Any]:
    s = _sweep_results()
    zero = float(s["fit1"].zeros().unstable)
    point = solve_point_mass(s["fit1"], s["fit2"], zero, 1.2, 0.4)
    l2 = solve_l2_offset(s["fit1"], s["fit2"], zero, 1.2, 0.4)
    return {"point": point, "root": point.roots[0], "l2": l2}


@cache
def _testing_records() -> dict[str, Any]:
    """One draw of each record of gravdir.testing's strategies (first example, no shrinking)."""
    from hypothesis import Phase, find, settings

    from gravdir import testing

    once = settings(max_examples=1, phases=[Phase.generate], database=None, derandomize=True)
    return {
        key: find(strategy, lambda _: True, settings=once)
        for key, strategy in (
            ("mount", testing.mounts()),
            ("chain", testing.serial_chains(kinds=("panda",))),
            ("experiment", testing.sweep_experiments(n_sweeps=2)),
            ("phenomena", testing.motion_phenomena(3, corrupt=True)),
        )
    }


# Each public result type, and how to obtain instances of it from real calls.
FACTORIES: dict[str, Callable[[], list[Any]]] = {
    "UpTrack": lambda: [importlib.import_module("fuzz_cases_motion_track").example_track()],
    "MotionExcitationPlan": lambda: [
        importlib.import_module("fuzz_cases_motion_track").example_plan()
    ],
    "Mount": lambda: [_testing_records()["mount"]],
    "ChainCase": lambda: [_testing_records()["chain"]],
    "SweepExperiment": lambda: [_testing_records()["experiment"]],
    "MotionPhenomena": lambda: [_testing_records()["phenomena"]],
    "SweepFit": lambda: [_sweep_results()[k] for k in ("fit1", "batch")]
    + [_sweep_results()["batch"][1]],
    "SweepZeros": lambda: [_sweep_results()["fit1"].zeros(), _sweep_results()["batch"].zeros()],
    "JointSweep": lambda: [_sweep_results()["sweep"]],
    "UpEstimate": lambda: [_sweep_results()["estimate"]],
    "UpBound": lambda: [_sweep_results()["bound"]],
    "SweepPlan": lambda: [_sweep_results()["plan"]],
    "PlannedSweep": lambda: list(_sweep_results()["plan"].sweeps),
    "SerialChain": lambda: [_sweep_results()["chain"]],
    "ChainFrames": lambda: [_sweep_results()["frames"]],
    "UrdfInertials": lambda: [inertials_from_urdf(URDF_TEXT, tip_link="tool")],
    "SweepRecord": lambda: [_sweep_results()["record"]],
    "SyntheticArm": lambda: [_sweep_results()["arm"]],
    "SyntheticUrdfArm": lambda: [
        gravdir.synthetic.arm_from_urdf(URDF_TEXT, base_link="base", tip_link="tool", up=UP)
    ],
    "ControllerLog": lambda: [
        gravdir.synthetic.controller_log(
            ur5_arm(up=UP),
            [0, 1],
            np.zeros((2, 6)),
            [[-0.5, 0.5], [-1.0, 0.0]],
            0.5,
            realistic_sensors(np.random.default_rng(4), ur5_arm().peak_gravity_torque()),
            np.random.default_rng(5),
            time_jitter=0.001,
        )
    ],
    "TorqueSensor": lambda: [_sweep_results()["sensor"], TorqueSensor()],
    "ClosedFormEstimate": lambda: [_closed_form_results()[k] for k in ("point", "l2")],
    "ClosedFormRoot": lambda: [_closed_form_results()["root"]],
    "TiltAzimuth": lambda: [tilt_azimuth_from_up(UP), tilt_azimuth_from_up([UP, -UP])],
    "CanonicalAngles": lambda: [canonical_from_up(UP)],
    "ThreePointFit": lambda: [_touch_results()[k] for k in ("three", "three_undetermined")],
    "PlaneFit": lambda: [_touch_results()["plane"]],
    "ToolPlaneFit": lambda: [_touch_results()["tool"]],
    "TouchPlan": lambda: [_touch_results()["plan"]],
    "SyntheticTouches": lambda: [_touch_results()["data"]],
    "HarmonicDriveJoint": lambda: [_kinematic_error_results()["joint"]],
    "JointRun": lambda: [_kinematic_error_results()["run"]],
    "OrderSpectrum": lambda: [_kinematic_error_results()["spectrum"]],
    "RunSpectrum": lambda: [_kinematic_error_results()["measured"]],
    "KinematicErrorModel": lambda: [_kinematic_error_results()["model"]],
    "TunerRun": lambda: [_kinematic_error_results()["tuner_run"]],
    "BoldDriverUpdate": lambda: [_kinematic_error_results()["bold"]],
    "RpropUpdate": lambda: [_kinematic_error_results()["rprop"]],
    "PhasorResponseFit": lambda: [_kinematic_error_results()["response"]],
    "ExcitationPlan": lambda: [_friction_results()["plan"]],
    "GravityFreeCheck": lambda: [_friction_results()["check"]],
    "FrictionRun": lambda: [_friction_results()["run"]],
    "ArmFrictionFit": lambda: [_friction_results()["table"]],
    "JointFrictionFit": lambda: [_friction_results()["joint_fit"]],
    "FrictionFit": lambda: [_friction_results()["free"]],
    "LoadFrictionFit": lambda: [_friction_results()["load"]],
    "AsymmetricStribeckFriction": lambda: [_friction_results()["free_model"]],
    "LoadDependentFriction": lambda: [_friction_results()["load_model"]],
    "CoulombViscousFriction": lambda: [_friction_results()["coulomb_viscous"]],
    "StribeckFriction": lambda: [_friction_results()["stribeck"]],
    "FusedEstimate": lambda: [
        gravdir.fuse_up(
            _sweep_results()["estimate"],
            gravdir.express_up(UP, np.eye(3), up_cov=np.eye(3) * 1e-4),
            gravdir.express_up(-UP, np.eye(3), up_cov=np.eye(3) * 1e-6),
        )
    ],
    "GravityDirection": lambda: [
        gravdir.express_up(_sweep_results()["estimate"], gravdir.controllers.BASE_FROM_ROOT["ur"]),
        gravdir.up_from_setting("abb_gravity_beta", [0.1, 3.0], values_cov=[1e-6, 1e-6]),
        gravdir.up_from_setting("ur_set_gravity", [0.0, 0.1, 9.8]),
    ],
    "ControllerSetting": lambda: [
        gravdir.setting_from_up(_sweep_results()["estimate"], "ur_set_gravity"),
        gravdir.setting_from_up([UP, -UP], "epson_gravity_direction", up_cov=np.eye(3) * 1e-6),
        gravdir.setting_from_up(
            [np.sin(0.3), 0.0, np.cos(0.3)], "abb_gravity_beta", up_cov=np.eye(3) * 1e-6
        ),
    ],
    "AccelerometerFit": lambda: [_accelerometer_results()["fit"]],
    "AccelerometerBound": lambda: [_accelerometer_results()["bound"]],
    "AccelerometerPlan": lambda: [_accelerometer_results()["plan"]],
    "AccelerometerSensor": lambda: [_accelerometer_results()["sensor"]],
    "AccelerometerReadings": lambda: [_accelerometer_results()["data"]],
    "SettingCheck": lambda: [
        gravdir.compare_setting(
            _sweep_results()["estimate"], gravdir.up_from_setting("ur_set_gravity", [0, 0, 9.82])
        ),
        gravdir.compare_setting([UP, -UP], [0.0, 0.0, 1.0], up_cov=np.eye(3) * 1e-6),
    ],
    "BaseParameters": lambda: importlib.import_module("fuzz_cases_motion").instances(
        "BaseParameters"
    ),
    "FourierTrajectory": lambda: importlib.import_module("fuzz_cases_motion").instances(
        "FourierTrajectory"
    ),
    "MotionLog": lambda: importlib.import_module("fuzz_cases_motion").instances(
        "MotionLog"
    ),
    "ModelError": lambda: importlib.import_module("fuzz_cases_motion").instances("ModelError"),
    "MotionBound": lambda: importlib.import_module("fuzz_cases_motion").instances("MotionBound"),
    "MotionFit": lambda: importlib.import_module("fuzz_cases_motion").instances("MotionFit"),
}


def test_every_public_result_type_is_covered():
    assert sorted(_public_result_types()) == sorted(FACTORIES)


def test_every_result_type_keeps_value_equality():
    """A `@dataclass` with the default eq=True would replace the contract's `__eq__`."""
    for cls in _public_result_types().values():
        assert cls.__eq__ is Result.__eq__, cls.__name__
        assert cls.__hash__ is None, cls.__name__


def _arrays(obj: Any, seen: set[int] | None = None) -> list[np.ndarray]:
    """Every array held by `obj`, through nested results, tuples, lists and dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, Result):
        return [a for f in dataclasses.fields(obj) for a in _arrays(getattr(obj, f.name), seen)]
    if isinstance(obj, list | tuple):
        return [a for v in obj for a in _arrays(v, seen)]
    if isinstance(obj, dict):
        return [a for v in obj.values() for a in _arrays(v, seen)]
    return []


def _check_up_result(result: UpResult) -> None:
    up = np.asarray(result.up)
    info = np.asarray(result.up_information)
    assert info.shape == up.shape[:-1] + (3, 3)
    assert np.all(np.isfinite(info))
    for index in np.ndindex(up.shape[:-1]):
        u, m = up[index], info[index]
        scale = max(float(np.abs(m).max()), 1e-300)
        assert np.allclose(m, m.T, rtol=0, atol=1e-9 * scale)
        assert np.linalg.eigvalsh(m).min() >= -1e-9 * scale
        assert np.allclose(m @ u, 0.0, rtol=0, atol=1e-9 * scale)
        cov = np.asarray(result.up_cov)[index]
        std = np.asarray(result.up_std_deg)[index]
        assert not np.any(np.isnan(cov)) and not np.isnan(std)
        rank = int(np.sum(np.linalg.eigvalsh(m) > 1e-12 * scale)) if scale > 1e-300 else 0
        if rank == 2:
            pinv = np.linalg.pinv(m, rcond=1e-12, hermitian=True)
            assert np.allclose(cov, pinv, rtol=1e-7, atol=1e-12 * np.abs(pinv).max())
            assert np.linalg.matrix_rank(cov, tol=1e-9 * np.abs(cov).max()) == 2
            assert np.isclose(std, np.degrees(np.sqrt(np.trace(pinv))), rtol=1e-7)
        else:
            # An undetermined direction: zero information there, infinite spread, never zero.
            assert np.isposinf(std)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_result_contract(name):
    cls = _public_result_types()[name]
    instances = FACTORIES[name]()
    assert instances
    for obj in instances:
        assert type(obj) is cls
        for arr in _arrays(obj):
            assert not arr.flags.writeable
            with pytest.raises(ValueError):
                arr[...] = 0
        assert obj == obj
        copy = pickle.loads(pickle.dumps(obj))
        assert copy == obj
        assert (copy != obj) is False
        assert all(not a.flags.writeable for a in _arrays(copy))
        assert (obj == "something else") is False
        text = json.dumps(obj.to_dict())
        assert json.loads(text).keys() == obj.to_dict().keys()
        assert isinstance(repr(obj), str) and repr(obj).startswith(cls.__name__)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, dataclasses.fields(obj)[0].name, None)
        if isinstance(obj, UpResult):
            _check_up_result(obj)


def test_equality_compares_values_with_nan_equal():
    fit = _sweep_results()["fit1"]
    same = pickle.loads(pickle.dumps(fit))
    assert same == fit
    other = dataclasses.replace(fit, offset=fit.offset + 1.0)
    assert other != fit
    nan = dataclasses.replace(fit, offset=np.array(np.nan))
    assert nan == pickle.loads(pickle.dumps(nan))

