"""gravdir.dynamics: the inverse-dynamics regressor against independent computations.

The reference torques of this file come from ``tests/_newton_euler.py``, computed from the link
frames and explicit inertias: velocities and accelerations from sums over the joint axes (the
time derivative of the Jacobian written out), wrenches at the centres of mass, inertias rotated
into the base frame -- no recursion in link frames and no regressor. The synthetic URDF arm
and, where installed, pinocchio are two more independent references.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _newton_euler import random_bodies as _random_bodies
from _newton_euler import random_chain as _random_chain
from _newton_euler import reference_torque as _reference_torque
from _newton_euler import reference_torques
from _newton_euler import unit as _unit

from gravdir import chain_from_urdf
from gravdir.dynamics import (
    _rest_regressors,
    base_parameters,
    inertial_parameters,
    inverse_dynamics_regressor,
    joint_regressor,
)
from gravdir.kinematics import SerialChain, link_frames
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf
from gravdir.urdf import inertials_from_urdf

G = 9.80665
TOL = 1e-10  # relative to the largest torque of the case
REQUIRED = os.environ.get("GRAVDIR_REQUIRE_PINOCCHIO") == "1"


# --------------------------------------------------------------------------------------------
# The arm of the synthetic URDF


def _ur5e() -> tuple[SerialChain, np.ndarray]:
    chain = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    body = inertials_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    return chain, inertial_parameters(body.mass, body.com_in_link, body.inertia_in_link)


# --------------------------------------------------------------------------------------------
# Acceptance: Y pi against the independent references


@pytest.mark.parametrize("kind", ["dh", "poe"])
@pytest.mark.parametrize("seed", range(6))
def test_regressor_matches_independent_newton_euler(kind: str, seed: int) -> None:
    rng = np.random.default_rng([seed, kind == "dh"])
    n = int(rng.integers(3, 8))
    chain = _random_chain(rng, n, kind)
    mass, com, inertia = _random_bodies(rng, n)
    pi = inertial_parameters(mass, com, inertia)
    up = _unit(rng)
    g = float(rng.uniform(1.0, 20.0))
    q = rng.uniform(-np.pi, np.pi, (5, n))
    qd = rng.uniform(-3.0, 3.0, (5, n))
    qdd = rng.uniform(-10.0, 10.0, (5, n))
    y = inverse_dynamics_regressor(chain, q, qd, qdd, up=up, gravity=g)
    assert y.shape == (5, n, 10 * n)
    got = y @ pi
    want = np.array(
        [
            _reference_torque(chain, q[s], qd[s], qdd[s], mass, com, inertia, g * up)
            for s in range(5)
        ]
    )
    scale = np.max(np.abs(want))
    assert scale > 1.0  # the case is not trivially zero
    assert np.max(np.abs(got - want)) <= TOL * scale


@pytest.mark.parametrize("kind", ["dh", "poe"])
@pytest.mark.parametrize("seed", range(4))
def test_rest_regressors_give_the_holding_torque_of_every_base_acceleration(
    kind: str, seed: int
) -> None:
    """The motion estimator's regressors at rest (`_rest_regressors`, the design's gravity
    blocks) against the plain-loop Newton-Euler reference at rest, one base axis at a time, and
    against the general regressor with zero velocity and acceleration."""
    rng = np.random.default_rng([seed, kind == "dh", 7])
    n = int(rng.integers(1, 8))
    chain = _random_chain(rng, n, kind)
    mass, com, inertia = _random_bodies(rng, n)
    pi = inertial_parameters(mass, com, inertia)
    q = rng.uniform(-np.pi, np.pi, (4, n))
    rest = _rest_regressors(link_frames(chain, q))
    assert rest.shape == (3, 4, n, 10 * n)
    zero = np.zeros(n)
    for k in range(3):
        want = np.array(
            [
                _reference_torque(chain, q[s], zero, zero, mass, com, inertia, np.eye(3)[k])
                for s in range(4)
            ]
        )
        np.testing.assert_allclose(rest[k] @ pi, want, rtol=0, atol=1e-12 * np.abs(want).max())
    general = inverse_dynamics_regressor(
        chain, q, 0 * q, 0 * q, base_acceleration=np.eye(3)[:, None]
    )
    np.testing.assert_allclose(rest, general, rtol=0, atol=1e-13 * np.abs(general).max())


def test_batched_reference_equals_the_per_sample_one() -> None:
    rng = np.random.default_rng(31)
    chain = _random_chain(rng, 5, "poe")
    mass, com, inertia = _random_bodies(rng, 5)
    q, qd, qdd = rng.uniform(-2.0, 2.0, (3, 4, 5))
    a0 = 9.8 * _unit(rng)
    batch = reference_torques(chain, q, qd, qdd, mass, com, inertia, a0)
    loop = np.array(
        [_reference_torque(chain, q[s], qd[s], qdd[s], mass, com, inertia, a0) for s in range(4)]
    )
    np.testing.assert_allclose(batch, loop, rtol=0, atol=1e-12 * np.abs(loop).max())


def test_regressor_matches_synthetic_urdf_arm() -> None:
    rng = np.random.default_rng(14)
    chain, pi = _ur5e()
    for _ in range(3):
        up = _unit(rng)
        arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up, gravity=G)
        q = rng.uniform(-np.pi, np.pi, (20, 6))
        qd = rng.uniform(-3.0, 3.0, (20, 6))
        qdd = rng.uniform(-10.0, 10.0, (20, 6))
        got = inverse_dynamics_regressor(chain, q, qd, qdd, up=up) @ pi
        want = arm.inverse_dynamics(q, qd, qdd)
        assert np.max(np.abs(got - want)) <= TOL * np.max(np.abs(want))


def test_static_regressor_gives_holding_torque() -> None:
    rng = np.random.default_rng(15)
    chain, pi = _ur5e()
    up = _unit(rng)
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    q = rng.uniform(-np.pi, np.pi, (30, 6))
    zero = np.zeros(6)
    got = inverse_dynamics_regressor(chain, q, zero, zero, up=up) @ pi
    want = arm.gravity_torque(q)
    assert np.max(np.abs(want)) > 10.0
    assert np.max(np.abs(got - want)) <= TOL * np.max(np.abs(want))


def test_regressor_columns_give_the_mass_matrix() -> None:
    rng = np.random.default_rng(16)
    chain, pi = _ur5e()
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
    q = rng.uniform(-np.pi, np.pi, 6)
    # No gravity, no velocity, unit accelerations: the torques are the columns of M(q).
    y = inverse_dynamics_regressor(chain, np.tile(q, (6, 1)), np.zeros(6), np.eye(6))
    mass_matrix = (y @ pi).T
    want = arm.mass_matrix(q)
    assert np.max(np.abs(mass_matrix - want)) <= TOL * np.max(np.abs(want))


def test_gravity_as_base_acceleration() -> None:
    rng = np.random.default_rng(17)
    chain = _random_chain(rng, 4, "poe")
    q, qd, qdd = rng.uniform(-2, 2, (3, 4))
    up = _unit(rng)
    by_up = inverse_dynamics_regressor(chain, q, qd, qdd, up=up, gravity=3.7)
    by_base = inverse_dynamics_regressor(chain, q, qd, qdd, base_acceleration=3.7 * up)
    np.testing.assert_allclose(by_up, by_base, rtol=0, atol=1e-12)
    # Without gravity a chain at rest needs no torque, whatever its parameters.
    assert np.all(inverse_dynamics_regressor(chain, q, 0 * q, 0 * q) == 0.0)


def test_regressor_structure() -> None:
    rng = np.random.default_rng(18)
    chain = _random_chain(rng, 5, "dh")
    q, qd, qdd = rng.uniform(-2, 2, (3, 5))
    y = inverse_dynamics_regressor(chain, q, qd, qdd, up=[0, 0, 1])
    for j in range(5):
        for i in range(j):  # a link proximal to joint j does not load it
            assert np.all(y[j, 10 * i : 10 * (i + 1)] == 0.0)
    assert np.any(y[4, 40:] != 0.0)


def test_batch_equals_loop_and_broadcasts() -> None:
    rng = np.random.default_rng(19)
    chain = _random_chain(rng, 3, "poe")
    q = rng.uniform(-2, 2, (2, 4, 3))
    qd = rng.uniform(-2, 2, (4, 3))
    qdd = rng.uniform(-2, 2, 3)
    up = _unit(rng, 2, 1)
    y = inverse_dynamics_regressor(chain, q, qd, qdd, up=up)
    assert y.shape == (2, 4, 3, 30)
    for a in range(2):
        for b in range(4):
            one = inverse_dynamics_regressor(chain, q[a, b], qd[b], qdd, up=up[a, 0])
            np.testing.assert_allclose(y[a, b], one, rtol=0, atol=1e-13)


# --------------------------------------------------------------------------------------------
# Parameters and the per-joint columns


def test_inertial_parameters_parallel_axis_and_order() -> None:
    rng = np.random.default_rng(20)
    mass, com, inertia = _random_bodies(rng, 3)
    pi = inertial_parameters(mass, com, inertia).reshape(3, 10)
    for i in range(3):
        # Inertia about the origin as a sum over point masses would give: I_c + m [c]x^T [c]x.
        cx = np.array(
            [[0, -com[i, 2], com[i, 1]], [com[i, 2], 0, -com[i, 0]], [-com[i, 1], com[i, 0], 0]]
        )
        about_origin = inertia[i] + mass[i] * cx.T @ cx
        assert pi[i, 0] == mass[i]
        np.testing.assert_allclose(pi[i, 1:4], mass[i] * com[i], rtol=1e-15)
        (xx, xy, xz), (_, yy, yz), (_, _, zz) = about_origin
        np.testing.assert_allclose(pi[i, 4:], [xx, xy, yy, xz, yz, zz], rtol=1e-13, atol=1e-16)


def test_joint_regressor_columns() -> None:
    qd = np.array([[0.5, -2.0, 0.0], [1.0, 1.0, -1.0]])
    qdd = np.array([1.0, -3.0, 2.0])
    y = joint_regressor(qd, qdd)
    assert y.shape == (2, 3, 12)
    params = np.array([0.1, 2.0, 0.3, -0.5, 0.2, 1.0, 0.4, 0.0, 0.3, 1.5, 0.5, 0.25])
    j, c, v, o = params.reshape(3, 4).T
    want = j * qdd + c * np.sign(qd) + v * qd + o
    np.testing.assert_allclose(y @ params, want, rtol=1e-15)
    assert y[0, 2, 9] == 0.0  # sign 0 = 0
    assert np.count_nonzero(y[1, 0, 4:]) == 0


# --------------------------------------------------------------------------------------------
# Base parameters


@pytest.mark.parametrize("seed", range(4))
def test_base_parameters_reproduce_the_torques_at_any_tilt(seed: int) -> None:
    rng = np.random.default_rng([seed, 40])
    n = int(rng.integers(2, 8))
    chain = _random_chain(rng, n, "dh" if seed % 2 else "poe")
    base = base_parameters(chain)
    assert 0 < base.rank < 10 * n
    np.testing.assert_array_equal(base.combination[:, base.independent], np.eye(base.rank))
    pi = rng.normal(size=10 * n)  # any parameters, physical or not
    q, qd, qdd = rng.uniform(-3.0, 3.0, (3, 7, n))
    for up in [*_unit(rng, 3), np.array([0.0, 0.0, 1.0])]:
        y = inverse_dynamics_regressor(chain, q, qd, qdd, up=up)
        full = y @ pi
        reduced = y[..., base.independent] @ (base.combination @ pi)
        assert np.max(np.abs(full - reduced)) <= 1e-10 * np.max(np.abs(full))
        # The minimum-norm representative gives the same torques.
        rep = base.standard_from_base(base.combination @ pi)
        assert np.max(np.abs(y @ rep - full)) <= 1e-9 * np.max(np.abs(full))
    # The kept columns are independent on a tilted base: a stacked regressor has full rank.
    q, qd, qdd = rng.uniform(-3.0, 3.0, (3, 40, n))
    y = inverse_dynamics_regressor(chain, q, qd, qdd, up=_unit(rng))
    stacked = y[..., base.independent].reshape(-1, base.rank)
    assert np.linalg.matrix_rank(stacked / np.linalg.norm(stacked, axis=0)) == base.rank


def test_base_parameters_of_a_tilt_exceed_those_of_an_upright_base() -> None:
    # A single joint about base +z: on an upright base only I_zz carries torque; a tilted base
    # adds the two first moments m c_x, m c_y (gravity turns about the axis as the joint moves).
    from gravdir.kinematics import chain_from_poe

    chain = chain_from_poe([[0, 0, 1, 0, 0, 0]], np.eye(4))
    base = base_parameters(chain)
    assert sorted(base.independent.tolist()) == [1, 2, 9]
    q = np.linspace(-3, 3, 20)[:, None]
    y = inverse_dynamics_regressor(chain, q, np.ones_like(q), np.ones_like(q), up=[0, 0, 1])
    assert np.linalg.matrix_rank(y.reshape(-1, 10)) == 1
    assert "rank=3 of 10" in repr(base)


def test_base_parameters_input_checks() -> None:
    chain = _chain3()
    with pytest.raises(ValueError, match="`chain`"):
        base_parameters("ur5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`n_states`"):
        base_parameters(chain, n_states=0)
    with pytest.raises(ValueError, match="`rng`"):
        base_parameters(chain, rng=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`rtol`"):
        base_parameters(chain, rtol=2.0)


# --------------------------------------------------------------------------------------------
# Input checks


def _chain3() -> SerialChain:
    return _random_chain(np.random.default_rng(21), 3, "dh")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"chain": "ur5"}, "chain"),
        ({"q": np.zeros(4)}, "q"),
        ({"q": np.full(3, np.nan)}, "q"),
        ({"q": np.full(3, 90.0)}, "degrees"),
        ({"q": "1.0"}, "q"),
        ({"velocity": np.zeros((2, 3)), "acceleration": np.zeros((3, 3))}, "velocity"),
        ({"acceleration": [True, False, True]}, "acceleration"),
        ({"up": [0, 0, 2]}, "up"),
        ({"up": [0, 0, 1], "base_acceleration": [0, 0, 9.8]}, "base_acceleration"),
        ({"up": [0, 0, 1], "gravity": -9.8}, "gravity"),
        ({"base_acceleration": [0, 9.8]}, "base_acceleration"),
        ({"velocity": np.full(3, 1e200)}, "overflow"),
    ],
)
def test_regressor_input_checks(kwargs: dict[str, Any], name: str) -> None:
    args: dict[str, Any] = {
        "chain": _chain3(),
        "q": np.zeros(3),
        "velocity": np.zeros(3),
        "acceleration": np.zeros(3),
    }
    args.update(kwargs)
    chain, q = args.pop("chain"), args.pop("q")
    velocity, acceleration = args.pop("velocity"), args.pop("acceleration")
    with pytest.raises(
        ValueError, match=f"`{name}`" if name not in ("overflow", "degrees") else name
    ):
        inverse_dynamics_regressor(chain, q, velocity, acceleration, **args)


def test_regressor_refuses_joint_positions_in_degrees_by_the_shared_check() -> None:
    # The regressor's q follows the rule of every joint position (link_frames among them): the
    # message names `q`, gives the value farthest outside ±4π with its sign, asks "degrees?".
    chain = _chain3()
    zero = np.zeros(3)
    q = np.zeros((4, 3))
    q[2, 1] = -4 * np.pi * (1 + 1e-12)
    held = r"`q` to hold joint positions in radians within ±4π, got -12\.566.*degrees\?$"
    with pytest.raises(ValueError, match=held):
        inverse_dynamics_regressor(chain, q, zero, zero)
    # Refused before `up` is looked at, as every check of q comes first.
    with pytest.raises(ValueError, match=r"`q`.*degrees\?$"):
        inverse_dynamics_regressor(chain, np.full(3, 90.0), zero, zero, up=[0, 0, 2])
    # Two full turns either way are radians, and the same configuration as none.
    q[2, 1] = -4 * np.pi
    q[1] = 4 * np.pi
    y = inverse_dynamics_regressor(chain, q, np.ones(3), np.ones(3), up=[0, 0, 1])
    np.testing.assert_allclose(y[1:3], y[[0, 0]], atol=1e-12)


@pytest.mark.parametrize(
    ("mass", "com", "inertia", "name"),
    [
        ([1.0, -1.0], np.zeros((2, 3)), np.zeros((2, 3, 3)), "mass"),
        ([1.0, 1.0], np.zeros((3, 3)), np.zeros((2, 3, 3)), "com_in_link"),
        ([1.0, 1.0], np.zeros((2, 3)), np.zeros((2, 3)), "inertia_in_link"),
        (
            [1.0, 1.0],
            np.zeros((2, 3)),
            np.array([np.eye(3), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]]),
            "inertia_in_link",
        ),
        ([[1.0, 1.0]], np.zeros((2, 3)), np.zeros((2, 3, 3)), "mass"),
        ([1.0, 1.0], np.full((2, 3), np.inf), np.zeros((2, 3, 3)), "com_in_link"),
        ([1e300, 1.0], np.full((2, 3), 1e200), np.zeros((2, 3, 3)), "overflow"),
    ],
)
def test_inertial_parameters_input_checks(mass: Any, com: Any, inertia: Any, name: str) -> None:
    with pytest.raises(ValueError, match=f"`{name}`" if name != "overflow" else name):
        inertial_parameters(mass, com, inertia)


def test_joint_regressor_input_checks() -> None:
    with pytest.raises(ValueError, match="`velocity`"):
        joint_regressor(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="`acceleration`"):
        joint_regressor(np.zeros(3), [np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="`velocity`"):
        joint_regressor(1.0, 1.0)


def test_extreme_but_finite_states_give_finite_regressors() -> None:
    chain = _chain3()
    y = inverse_dynamics_regressor(
        chain, np.full(3, 4 * np.pi), np.full(3, 1e50), np.full(3, -1e50)
    )
    assert np.isfinite(y).all()
    y = inverse_dynamics_regressor(
        chain, np.zeros(3), np.full(3, 1e-300), np.zeros(3), up=[1, 0, 0]
    )
    assert np.isfinite(y).all()


# --------------------------------------------------------------------------------------------
# pinocchio (example-robot-data arms), where installed


def _pinocchio() -> Any:
    why = (
        "pinocchio is not installed (pip install '.[pinocchio]'); set "
        "GRAVDIR_REQUIRE_PINOCCHIO=1 to make its absence fail"
    )
    if REQUIRED:
        return importlib.import_module("pinocchio")
    return pytest.importorskip("pinocchio", reason=why)


def _robot_text(relative: str) -> str:
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if str(file).replace("\\", "/").endswith("example-robot-data/robots/" + relative):
            return Path(str(file.locate())).read_text(encoding="utf-8")
    if REQUIRED:
        pytest.fail(f"example-robot-data does not ship {relative}")
    pytest.skip(f"example-robot-data with {relative} is not installed")


@pytest.mark.parametrize(
    ("relative", "tip"),
    [
        ("ur_description/urdf/ur5_robot.urdf", "tool0"),
        ("panda_description/urdf/panda.urdf", "panda_hand"),
    ],
)
def test_regressor_matches_pinocchio(relative: str, tip: str) -> None:
    pin = _pinocchio()
    text = _robot_text(relative)
    model = pin.buildModelFromXML(text)
    fingers = [i for i, name in enumerate(model.names) if "finger" in name]
    if fingers:  # locked: the hand and fingers become part of the last link
        model = pin.buildReducedModel(model, fingers, pin.neutral(model))
    data = model.createData()
    chain = chain_from_urdf(text, tip_link=tip)
    body = inertials_from_urdf(text, tip_link=tip)
    pi = inertial_parameters(body.mass, body.com_in_link, body.inertia_in_link)
    assert model.nv == chain.n_joints
    pin_pi = np.concatenate(
        [model.inertias[i].toDynamicParameters() for i in range(1, model.njoints)]
    )
    np.testing.assert_allclose(pi, pin_pi, rtol=0, atol=1e-12 * np.max(np.abs(pin_pi)))
    rng = np.random.default_rng(22)
    for _ in range(5):
        up = _unit(rng)
        model.gravity.linear = -G * up
        q, qd, qdd = rng.uniform(-2.5, 2.5, (3, chain.n_joints))
        want = pin.computeJointTorqueRegressor(model, data, q, qd, qdd)
        got = inverse_dynamics_regressor(chain, q, qd, qdd, up=up)
        assert np.max(np.abs(got - want)) <= TOL * np.max(np.abs(want))
        torque = pin.rnea(model, data, q, qd, qdd)
        assert np.max(np.abs(got @ pi - torque)) <= TOL * np.max(np.abs(torque))
