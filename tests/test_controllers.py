"""Tests of gravdir.controllers: base frames, controller settings out and in, and the comparison.

Expected settings are built independently of the code under test: explicit elementary rotations
and each vendor's stated definition (docs/controllers.md), not the conversion functions.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import gravdir
from gravdir import testing
from gravdir.controllers import (
    BASE_FROM_ROOT,
    SETTINGS,
    ControllerSetting,
    GravityDirection,
    SettingCheck,
    compare_setting,
    express_up,
    setting_from_up,
    up_from_setting,
)
from gravdir.errors import DegenerateGeometryError, GravdirWarning

sys.path.insert(0, str(Path(__file__).parent))
from test_fuzz import _check_error, _check_result, _mutations, _outcome  # noqa: E402

VECTOR_SETTINGS = (
    "ur_set_gravity",
    "franka_gravity_earth",
    "epson_gravity_direction",
    "gravity_vector",
)


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _random_ups(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _edge_ups() -> np.ndarray:
    """Valid ups at and next to every singular-looking place: axes, near-vertical, tiny parts."""
    ups = [np.eye(3)[i] * s for i in range(3) for s in (1.0, -1.0)]
    for t in (1e-9, 1e-5, np.pi / 2, np.pi - 1e-5, np.pi - 1e-9):
        for a in (0.0, 0.3, -2.9, np.pi):
            ups.append([np.sin(t) * np.cos(a), np.sin(t) * np.sin(a), np.cos(t)])
    ups.append([1e-300, 0.0, 1.0])
    ups.append([1.0, 1e-160, -1e-300])
    u = np.array(ups, dtype=float)
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def _xz_ups(rng: np.random.Generator, n: int) -> np.ndarray:
    """Ups in the base x-z plane (the ones Gravity Beta expresses), with the edge angles."""
    b = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, n),
            [0.0, np.pi, -np.pi, np.pi / 2, -np.pi / 2, 1e-12, np.pi - 1e-12, -np.pi + 1e-12],
        ]
    )
    return np.stack([np.sin(b), np.zeros_like(b), np.cos(b)], axis=-1)


def _expected_values(setting: str, up: np.ndarray, g: float) -> np.ndarray:
    """Each vendor's stated definition, written out."""
    if setting == "ur_set_gravity":  # "an acceleration of g away from the earth's centre"
        return g * up
    if setting in ("franka_gravity_earth", "gravity_vector"):  # default {0, 0, -9.81}
        return -g * up
    if setting == "epson_gravity_direction":  # unit gravity direction, default (0, 0, -1)
        return -up
    raise AssertionError(setting)


def _tangent_basis(u: np.ndarray) -> np.ndarray:
    a = np.eye(3)[int(np.argmin(np.abs(u)))]
    e1 = a - (a @ u) * u
    e1 /= np.linalg.norm(e1)
    return np.stack([e1, np.cross(u, e1)])


def _random_tangent_cov(rng: np.random.Generator, u: np.ndarray, std: float) -> np.ndarray:
    """A 3x3 covariance of `u`, rank 2 in its tangent plane, standard deviations ~ `std`."""
    b = _tangent_basis(u)
    a = rng.normal(size=(2, 2)) * std
    return b.T @ (a @ a.T + np.eye(2) * std**2 * 0.2) @ b


def _perturb(u: np.ndarray, cov: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
    """Draws on the sphere around `u`: the exponential map of tangent normals of covariance
    `cov`."""
    b = _tangent_basis(u)
    c2 = b @ cov @ b.T
    xi = rng.multivariate_normal(np.zeros(2), c2, size=n)
    d = xi @ b
    ang = np.linalg.norm(d, axis=1, keepdims=True)
    return np.cos(ang) * u + np.sin(ang) * d / ang


# --------------------------------------------------------------------------------------------
# Base frames


def test_ur_base_from_root_is_the_urdf_fixed_joint_inverted():
    # ur_description: joint base_link-base_fixed_joint, parent base_link, child base,
    # origin rpy="0 0 pi". URDF rpy is R = Rz(yaw) Ry(pitch) Rx(roll), parent_from_child.
    base_link_from_base = _rz(np.pi) @ _ry(0.0) @ _rx(0.0)
    assert np.allclose(BASE_FROM_ROOT["ur"], base_link_from_base.T, atol=1e-15)
    assert not BASE_FROM_ROOT["ur"].flags.writeable
    with pytest.raises(TypeError):
        BASE_FROM_ROOT["other"] = np.eye(3)  # type: ignore[index]
    # An `up` tilted towards base_link +x (the arm's "forward") tilts towards base -x.
    est = express_up([np.sin(0.2), 0.0, np.cos(0.2)], BASE_FROM_ROOT["ur"])
    assert np.allclose(est.up, [-np.sin(0.2), 0.0, np.cos(0.2)], atol=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_express_up_rotates_up_and_information(seed):
    rng = np.random.default_rng(seed)
    ups = _random_ups(rng, 6)
    for u in ups:
        cov = _random_tangent_cov(rng, u, 1e-3)
        r = Rotation.random(random_state=rng).as_matrix()
        out = express_up(u, r, up_cov=cov, frame="target")
        assert isinstance(out, GravityDirection) and out.frame == "target"
        assert np.allclose(out.up, r @ u, atol=1e-14)
        b = _tangent_basis(u)
        info = b.T @ np.linalg.inv(b @ cov @ b.T) @ b
        assert np.allclose(out.up_information, r @ info @ r.T, rtol=1e-9, atol=1e-6)
        assert np.allclose(out.up_cov, r @ cov @ r.T, rtol=1e-9, atol=1e-18)
        # Angles, hence the RMS error, are unchanged by a rotation.
        assert math.isclose(out.up_std_deg, math.degrees(math.sqrt(np.trace(cov))), rel_tol=1e-9)
        # A SciPy Rotation is taken like its matrix; rotating back gives the original.
        same = express_up(u, Rotation.from_matrix(r), up_cov=cov, frame="target")
        assert np.allclose(same.up, out.up, atol=1e-15)
        back = express_up(out, r.T)
        assert np.allclose(back.up, u, atol=1e-14)
        assert np.allclose(back.up_cov, cov, rtol=1e-8, atol=1e-18)


def test_express_up_batches_and_takes_every_up_result():
    rng = np.random.default_rng(11)
    ups = _random_ups(rng, 5)
    rots = Rotation.random(5, random_state=rng)
    batch = express_up(ups, rots, up_cov=np.eye(3) * 1e-6)
    for i in range(5):
        one = express_up(ups[i], rots[i], up_cov=np.eye(3) * 1e-6)
        assert np.allclose(batch.up[i], one.up, atol=1e-15)
        assert np.allclose(batch.up_information[i], one.up_information, rtol=1e-12, atol=1e-6)
    # One rotation broadcast over a batch of ups, and a controller setting as the input.
    setting = setting_from_up(ups, "ur_set_gravity", up_cov=np.eye(3) * 1e-6)
    out = express_up(setting, BASE_FROM_ROOT["ur"])
    assert np.allclose(out.up, ups @ BASE_FROM_ROOT["ur"].T, atol=1e-15)
    # Without a covariance the uncertainty is unknown: zero information, infinite spread.
    plain = express_up(ups[0], np.eye(3))
    assert np.all(plain.up_information == 0) and math.isinf(plain.up_std_deg)


def test_express_up_refuses_bad_input():
    u = [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="`new_from_old`"):
        express_up(u, np.diag([1.0, 1.0, -1.0]))  # a reflection
    with pytest.raises(ValueError, match="`new_from_old`"):
        express_up(u, np.eye(3) * 2)
    with pytest.raises(ValueError, match="`result`"):
        express_up([0.0, 0.0, 2.0], np.eye(3))
    with pytest.raises(ValueError, match="`frame`"):
        express_up(u, np.eye(3), frame=3)
    with pytest.raises(ValueError, match="`up_cov` only"):
        express_up(up_from_setting("ur_set_gravity", [0, 0, 9.8]), np.eye(3), up_cov=np.eye(3))
    with pytest.raises(ValueError, match="positive definite"):
        express_up(u, np.eye(3), up_cov=np.diag([1e-6, 0.0, 1e-6]))  # zero variance along y
    with pytest.raises(ValueError, match="symmetric"):
        express_up(u, np.eye(3), up_cov=[[1e-6, 1e-7, 0], [0, 1e-6, 0], [0, 0, 1e-6]])
    with pytest.raises(ValueError, match="broadcast"):
        express_up(_random_ups(np.random.default_rng(0), 3), Rotation.random(2, random_state=1))


# --------------------------------------------------------------------------------------------
# Settings out: each vendor's definition, written out independently


@pytest.mark.parametrize("setting", VECTOR_SETTINGS)
def test_vector_settings_follow_the_vendor_definition(setting):
    rng = np.random.default_rng(5)
    for u in np.concatenate([_random_ups(rng, 20), _edge_ups()]):
        out = setting_from_up(u, setting, gravity=9.81)
        assert np.allclose(out.values, _expected_values(setting, u, 9.81), rtol=0, atol=1e-14)
        assert out.representation_error == 0.0
        assert np.allclose(out.up, u, rtol=0, atol=1e-15)


def test_vendor_examples_give_the_vendors_own_lines():
    floor = [0.0, 0.0, 1.0]
    # UR installation, floor mount: set_gravity(0.0, 0.0, 9.82) (URScript: a vector along +up).
    assert setting_from_up(floor, "ur_set_gravity", gravity=9.82).line == (
        "set_gravity([0.000000, 0.000000, 9.820000])"
    )
    # URScript manual: a robot rotated theta about the base x axis takes
    # set_gravity([0, 9.82*sin(theta), 9.82*cos(theta)]).
    theta = 0.4
    up = _rx(theta).T @ np.array([0.0, 0.0, 1.0])  # world_from_base = Rx(theta)
    out = setting_from_up(up, "ur_set_gravity", gravity=9.82)
    assert np.allclose(out.values, [0.0, 9.82 * np.sin(theta), 9.82 * np.cos(theta)], atol=1e-14)
    # libfranka: gravity_earth defaults to {0, 0, -9.81} (robot on the floor).
    assert setting_from_up(floor, "franka_gravity_earth", gravity=9.81).line == (
        "std::array<double, 3> gravity_earth{{0.000000, 0.000000, -9.810000}};"
    )
    # Epson Force Guide: GravityDirection defaults to (0, 0, -1).
    assert setting_from_up(floor, "epson_gravity_direction").line == (
        "F_GravityDirection 0.000000, 0.000000, -1.000000"
    )
    # ABB: floor 0, tilted 15 degrees 0.261799, suspended 3.141593 (product manual table).
    for degrees, text in ((0.0, "0.000000"), (15.0, "0.261799"), (180.0, "3.141593")):
        beta = math.radians(degrees)
        up = _ry(beta).T @ np.array([0.0, 0.0, 1.0])  # robot turned by +beta about base y
        assert setting_from_up(up, "abb_gravity_beta").line == f"Gravity Beta = {text}"
    assert setting_from_up(floor, "gravity_vector", gravity=9.81).line == (
        "[0.000000, 0.000000, -9.810000]"
    )


def test_abb_gravity_beta_is_the_rotation_about_base_y():
    rng = np.random.default_rng(2)
    for beta in rng.uniform(-np.pi, np.pi, 50):
        up = _ry(beta).T @ np.array([0.0, 0.0, 1.0])
        out = setting_from_up(up, "abb_gravity_beta")
        assert abs(out.values[0] - beta) < 1e-12
        assert np.allclose(out.up, up, atol=1e-15)


def test_abb_reports_what_gravity_beta_cannot_express():
    t = math.radians(3.0)
    up = np.array([math.sin(t), 0.0, math.cos(t)])
    tilted = _rx(math.radians(0.5)).T @ up  # half a degree out of the x-z plane
    tilted /= np.linalg.norm(tilted)
    with pytest.warns(GravdirWarning, match="Gravity Alpha"):
        out = setting_from_up(
            tilted, "abb_gravity_beta", up_cov=np.eye(3) * math.radians(0.05) ** 2
        )
    assert math.isclose(out.representation_error, math.asin(abs(tilted[1])), rel_tol=1e-12)
    assert abs(out.up[1]) == 0.0 and math.isclose(np.linalg.norm(out.up), 1.0, rel_tol=1e-15)
    # Within the estimate's uncertainty: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", GravdirWarning)
        setting_from_up(tilted, "abb_gravity_beta", up_cov=np.eye(3) * math.radians(1.0) ** 2)
    # Uncertainty unknown: anything beyond the 1e-6 unit-vector tolerance is reported.
    with pytest.warns(GravdirWarning):
        setting_from_up(tilted, "abb_gravity_beta")
    # Along base y no Gravity Beta expresses gravity.
    with pytest.raises(DegenerateGeometryError, match="base \\+y or -y"):
        setting_from_up([0.0, -1.0, 0.0], "abb_gravity_beta")
    # The setting's `up` information lies along d up / d beta only.
    assert np.allclose(out.up_information @ np.array([0.0, 1.0, 0.0]), 0.0)
    assert math.isinf(out.up_std_deg)


def test_setting_from_up_refuses_bad_input():
    u = [0.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="`setting`"):
        setting_from_up(u, "kuka_robroot")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mm/s²\\?"):
        setting_from_up(u, "ur_set_gravity", gravity=9806.65)
    for bad in (0.0, -9.8, float("nan"), "9.8", True):
        with pytest.raises(ValueError, match="`gravity`"):
            setting_from_up(u, "ur_set_gravity", gravity=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`result`"):
        setting_from_up(compare_setting(u, u), "ur_set_gravity")


def test_lines_of_a_batch_and_repr():
    ups = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    out = setting_from_up(ups, "epson_gravity_direction")
    assert out.line == [
        "F_GravityDirection 0.000000, 0.000000, -1.000000",
        "F_GravityDirection 0.000000, 0.000000, 1.000000",
    ]
    assert "batch_shape=(2,)" in repr(out)
    one = setting_from_up(ups[0], "ur_set_gravity", up_cov=np.eye(3) * 1e-6)
    assert repr(one).startswith("ControllerSetting('set_gravity([")
    assert one.vendor == "Universal Robots" and one.units == ("m/s^2",) * 3


# --------------------------------------------------------------------------------------------
# Round trips (acceptance): up -> setting -> up everywhere; setting -> up -> setting away from
# each convention's singular set, and at it the documented choice.


def _round_trip_up(setting: str, ups: np.ndarray) -> float:
    out = setting_from_up(ups, setting)
    back = up_from_setting(setting, out.values)
    return float(np.max(np.abs(back.up - ups)))


@pytest.mark.parametrize("setting", VECTOR_SETTINGS)
def test_round_trip_up_setting_up_is_exact(setting):
    rng = np.random.default_rng(20261212)
    ups = np.concatenate([_random_ups(rng, 2000), _edge_ups()])
    assert _round_trip_up(setting, ups) <= 1e-12


def test_round_trip_up_setting_up_is_exact_for_gravity_beta():
    ups = _xz_ups(np.random.default_rng(20261212), 2000)
    assert _round_trip_up("abb_gravity_beta", ups) <= 1e-12


@pytest.mark.parametrize("setting", VECTOR_SETTINGS)
def test_round_trip_setting_up_setting_is_exact(setting):
    rng = np.random.default_rng(7)
    g = rng.uniform(9.7, 9.9, 500)
    values = _expected_values(setting, np.concatenate([_random_ups(rng, 500)]), 1.0)
    if setting != "epson_gravity_direction":
        values = values * g[:, None]
    up = up_from_setting(setting, values)
    for i in range(0, 500, 50):  # gravity (the vector's length) given, as the yaw is for angles
        again = setting_from_up(up.up[i], setting, gravity=float(np.linalg.norm(values[i]))).values
        assert np.max(np.abs(again - values[i])) <= 1e-12 * max(1.0, np.abs(values[i]).max())


def test_round_trip_beta_up_beta_is_exact_and_wraps_at_pi():
    rng = np.random.default_rng(8)
    beta = np.concatenate([rng.uniform(-np.pi, np.pi, 2000), [0.0, 1e-12, np.pi - 1e-12]])
    again = setting_from_up(up_from_setting("abb_gravity_beta", beta), "abb_gravity_beta").values
    assert np.max(np.abs(again[:, 0] - beta)) <= 1e-12
    # The singular set of Gravity Beta is its wrap: -pi and pi (and 2 pi and 0) are one
    # mounting, returned as pi (and 0): beta in (-pi, pi].
    edge = np.array([-np.pi, np.pi, 2 * np.pi, -2 * np.pi])
    back = setting_from_up(up_from_setting("abb_gravity_beta", edge), "abb_gravity_beta").values
    assert np.allclose(back[:, 0], [np.pi, np.pi, 0.0, 0.0], atol=1e-12)


@given(
    tilt=testing.tilts(),
    azimuth=testing.azimuths(),
    setting=st.sampled_from(VECTOR_SETTINGS),
)
def test_round_trip_property(tilt, azimuth, setting):
    up = np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)])
    up /= np.linalg.norm(up)
    back = up_from_setting(setting, setting_from_up(up, setting).values).up
    assert np.max(np.abs(back - up)) <= 1e-12


# --------------------------------------------------------------------------------------------
# Uncertainty: linear propagation against Monte Carlo of the conversion


def _monte_carlo_ratio(setting: str, u: np.ndarray, cov: np.ndarray, seed: int) -> np.ndarray:
    """Sample variance of each value over the propagated variance (Monte Carlo of 40 000)."""
    rng = np.random.default_rng(seed)
    draws = _perturb(u, cov, rng, 40_000)
    predicted = setting_from_up(u, setting, up_cov=cov)
    values = setting_from_up(draws, setting).values
    var = np.var(values, axis=0)
    pred = np.diagonal(predicted.values_cov)
    use = pred > 1e-12 * pred.max()
    return var[use] / pred[use]


@pytest.mark.slow
@pytest.mark.parametrize("setting", [*VECTOR_SETTINGS, "abb_gravity_beta"])
def test_propagated_covariance_matches_monte_carlo(setting):
    rng = np.random.default_rng(30)
    ups = _xz_ups(rng, 3)[:3] if setting == "abb_gravity_beta" else _random_ups(rng, 3)
    for k, u in enumerate(ups):
        cov = _random_tangent_cov(rng, u, math.radians(0.05))
        if setting == "abb_gravity_beta":  # keep the draws in the plane Gravity Beta expresses
            b = np.array([u[2], 0.0, -u[0]])
            cov = np.outer(b, b) * math.radians(0.05) ** 2 + _random_tangent_cov(rng, u, 1e-9)
        ratio = _monte_carlo_ratio(setting, u, cov, seed=100 + k)
        # 40 000 draws: a variance is estimated to sqrt(2 / 40 000) = 0.7 %.
        assert np.all(np.abs(ratio - 1.0) < 0.04), ratio


@pytest.mark.parametrize("setting", VECTOR_SETTINGS)
def test_inverse_covariance_matches_monte_carlo(setting):
    rng = np.random.default_rng(31)
    u = _random_ups(rng, 1)[0]
    values = setting_from_up(u, setting).values
    a = rng.normal(size=(3, 3))
    scale = 0.01 if setting != "epson_gravity_direction" else 0.001
    values_cov = (a @ a.T + np.eye(3)) * scale**2
    predicted = up_from_setting(setting, values, values_cov=values_cov)
    draws = rng.multivariate_normal(values, values_cov, size=40_000)
    ups = up_from_setting(setting, draws).up
    b = _tangent_basis(u)
    t = (ups - u) @ b.T  # tangent coordinates, to first order
    sample = np.cov(t.T)
    pred = b @ predicted.up_cov @ b.T
    ratio = np.linalg.eigvalsh(np.linalg.solve(pred, sample))
    assert np.all(np.abs(ratio - 1.0) < 0.04), ratio


def test_values_std_is_in_the_setting_units():
    s = math.radians(0.01)
    out = setting_from_up(
        [0.0, 0.0, 1.0], "ur_set_gravity", gravity=9.82, up_cov=np.diag([s**2, s**2, 0.0])
    )
    assert np.allclose(out.values_std, [9.82 * s, 9.82 * s, 0.0], rtol=1e-12, atol=1e-18)
    unknown = setting_from_up([0.0, 0.0, 1.0], "ur_set_gravity")
    assert np.array_equal(np.isinf(unknown.values_std), [True, True, False])


# --------------------------------------------------------------------------------------------
# Settings in


def test_up_from_setting_reads_each_controller():
    assert np.array_equal(up_from_setting("ur_set_gravity", [0, 0, 9.82]).up, [0.0, 0.0, 1.0])
    assert np.array_equal(up_from_setting("franka_gravity_earth", [0, 0, -9.81]).up, [0, 0, 1.0])
    assert np.array_equal(up_from_setting("epson_gravity_direction", [0, 0, -1]).up, [0, 0, 1.0])
    # UR's 7th-axis example set_gravity(4.91, 0, 9.82): up leans towards +x.
    lean = up_from_setting("ur_set_gravity", [4.91, 0.0, 9.82]).up
    assert np.allclose(lean, np.array([4.91, 0.0, 9.82]) / math.hypot(4.91, 9.82), atol=1e-15)
    wall = up_from_setting("abb_gravity_beta", math.pi / 2)  # wall mount, 1.570796
    assert np.allclose(wall.up, _ry(math.pi / 2).T @ [0, 0, 1.0], atol=1e-15)
    assert wall.frame == "ABB base"
    assert math.isinf(wall.up_std_deg)  # read without a covariance: unknown


def test_up_from_setting_refuses_bad_input():
    with pytest.raises(ValueError, match="degrees\\?"):
        up_from_setting("abb_gravity_beta", 180.0)
    with pytest.raises(ValueError, match="`values`"):
        up_from_setting("ur_set_gravity", [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="shape"):
        up_from_setting("ur_set_gravity", [0.0, 9.8])
    with pytest.raises(ValueError, match="`values_cov`"):
        up_from_setting("ur_set_gravity", [0, 0, 9.8], values_cov=np.diag([1e-4, 0.0, 1e-4]))
    with pytest.raises(ValueError, match="`values_cov`"):
        up_from_setting("abb_gravity_beta", 0.1, values_cov=0.0)
    with pytest.raises(ValueError, match="`values_cov`"):
        up_from_setting("ur_set_gravity", [0, 0, 9.8], values_cov=np.eye(2))
    with pytest.raises(ValueError, match="`setting`"):
        up_from_setting("ur_mounting", [0.0, 0.0])  # type: ignore[arg-type]


def test_batch_equals_loop():
    rng = np.random.default_rng(40)
    ups = _random_ups(rng, 4)
    for setting in VECTOR_SETTINGS:
        batch = setting_from_up(ups, setting, up_cov=np.eye(3) * 1e-6)
        for i in range(4):
            one = setting_from_up(ups[i], setting, up_cov=np.eye(3) * 1e-6)
            assert np.allclose(batch.values[i], one.values, atol=1e-15)
            assert np.allclose(batch.values_cov[i], one.values_cov, rtol=1e-12, atol=1e-20)
            back = up_from_setting(setting, batch.values[i], values_cov=np.eye(3) * 1e-4)
            both = up_from_setting(setting, batch.values, values_cov=np.eye(3) * 1e-4)
            assert np.allclose(both.up_information[i], back.up_information, rtol=1e-10)


def test_leading_axes_that_do_not_broadcast_are_refused_naming_both_arguments():
    # Three ups against two of the other argument: the leading axes (3,) and (2,) disagree,
    # while the core axes (3,) and (3, 3) of each argument are right.
    ups = _random_ups(np.random.default_rng(41), 3)
    two_ups = _random_ups(np.random.default_rng(42), 2)
    two_covs = np.stack([np.eye(3) * 1e-6] * 2)
    cases = [
        (lambda: express_up(ups, Rotation.random(2, random_state=1)), "new_from_old", "up"),
        (lambda: express_up(ups, np.eye(3), up_cov=two_covs), "up_cov", "up"),
        (lambda: compare_setting(ups, two_ups), "installed", "result"),
        (
            lambda: up_from_setting("ur_set_gravity", ups * 9.8, values_cov=two_covs),
            "values_cov",
            "values",
        ),
        (
            lambda: up_from_setting("abb_gravity_beta", [0.1, 0.2, 0.3], values_cov=[1e-6, 1e-6]),
            "values_cov",
            "values",
        ),
    ]
    for call, first, second in cases:
        with pytest.raises(ValueError, match="broadcast") as info:
            call()
        message = str(info.value)
        assert f"`{first}` (2,)" in message and f"`{second}` (3,)" in message, message
    # The leading axes broadcast when one side has none: one rotation, one covariance.
    assert express_up(ups, np.eye(3), up_cov=np.eye(3) * 1e-6).up.shape == (3, 3)
    assert compare_setting(ups, [0.0, 0.0, 1.0]).angle.shape == (3,)


# --------------------------------------------------------------------------------------------
# Comparing a calibration with what is installed


def test_compare_setting_angle_and_mahalanobis_are_exact():
    rng = np.random.default_rng(50)
    for u in _random_ups(rng, 10):
        s = 1e-3
        b = _tangent_basis(u)
        for angle in (1e-9, 1e-3, 0.5, 3.0):
            w = math.cos(angle) * u + math.sin(angle) * b[1]  # the geodesic along b[1]
            check = compare_setting(u, w, up_cov=np.eye(3) * s**2)
            # Unit vectors carry ~1e-16 of rounding: the angle is exact to that, absolutely.
            assert math.isclose(check.angle, angle, rel_tol=1e-9, abs_tol=1e-15)
            assert math.isclose(check.mahalanobis, angle / s, rel_tol=1e-9, abs_tol=1e-12)
            assert check.dof == 2
            assert math.isclose(check.p_value, math.exp(-0.5 * (angle / s) ** 2), rel_tol=1e-9)
    antipodal = compare_setting([0, 0, 1.0], [0, 0, -1.0], up_cov=np.diag([1e-6, 4e-6, 0]))
    assert math.isclose(antipodal.angle, math.pi) and math.isclose(
        antipodal.mahalanobis, math.pi / 2e-3, rel_tol=1e-9
    )  # the least informative direction (std 2e-3)
    unknown = compare_setting([0, 0, 1.0], [0, 0.6, 0.8])
    assert unknown.mahalanobis == 0.0 and unknown.dof == 0 and unknown.p_value == 1.0


def test_compare_setting_is_chi_square_with_two_degrees_of_freedom():
    rng = np.random.default_rng(51)
    truth = _random_ups(rng, 1)[0]
    cov = _random_tangent_cov(rng, truth, math.radians(0.03))
    estimates = _perturb(truth, cov, rng, 20_000)
    # The estimate's covariance is the one it was drawn with (to first order, at the truth).
    checks = compare_setting(estimates, truth, up_cov=cov)
    mean = float(np.mean(checks.mahalanobis**2))
    assert abs(mean - 2.0) < 0.1, mean  # 20 000 draws: the mean of chi2(2) to 1 %
    assert abs(float(np.mean(checks.p_value)) - 0.5) < 0.02
    assert isinstance(checks, SettingCheck) and checks.angle.shape == (20_000,)


def test_compare_setting_takes_results_and_settings():
    installed = up_from_setting("ur_set_gravity", [0.0, 0.0, 9.82])
    est = setting_from_up(
        [0.01, 0.0, math.sqrt(1 - 1e-4)], "ur_set_gravity", up_cov=np.eye(3) * 1e-6
    )
    check = compare_setting(est, installed)
    assert math.isclose(check.angle, math.asin(0.01), rel_tol=1e-12)
    assert math.isclose(check.mahalanobis, math.asin(0.01) / 1e-3, rel_tol=1e-9)
    assert "angle_deg=" in repr(check)
    with pytest.raises(ValueError, match="`installed`"):
        compare_setting(est, [0.0, 0.0, 2.0])


# --------------------------------------------------------------------------------------------
# Hostile inputs for every setting (the fuzz suite's variants, applied to each option)


@pytest.mark.parametrize("setting", SETTINGS)
def test_hostile_variants_for_every_setting(setting):
    up = np.array([np.sin(0.2), 0.0, np.cos(0.2)])
    cov = np.diag([1e-6, 2e-6, 3e-6])
    out = setting_from_up(up, setting, up_cov=cov)
    k = out.values.shape[-1]
    calls = [
        (setting_from_up, (up, setting), {"gravity": 9.81, "up_cov": cov}),
        (up_from_setting, (setting, out.values.copy()), {"values_cov": np.eye(k) * 1e-6}),
    ]
    for func, args, kwargs in calls:
        kind, value = _outcome(func, args, kwargs)
        assert kind == "result", value
        for context, a, kw in _mutations(args, kwargs):
            kind, value = _outcome(func, a, kw)
            where = f"{func.__name__}({setting}), {context}"
            if kind == "error":
                _check_error(value, where)
            else:
                assert kind == "result", f"{where}: {value!r}"
                _check_result(value, where)


def test_public_names_at_the_top_level():
    for name in (
        "ControllerSetting",
        "GravityDirection",
        "SettingCheck",
        "compare_setting",
        "express_up",
        "setting_from_up",
        "up_from_setting",
    ):
        assert getattr(gravdir, name) is getattr(gravdir.controllers, name)
    assert isinstance(setting_from_up([0, 0, 1.0], "gravity_vector"), ControllerSetting)


def test_batched_tangent_basis_is_the_results_one():
    # The infinite pattern of a propagated covariance depends on the tangent basis; the batched
    # one (a stack of ups) must be the basis `up_cov` uses for each up.
    from gravdir._sphere import tangent_basis

    ups = np.concatenate([_random_ups(np.random.default_rng(60), 50), _edge_ups()])
    batch = tangent_basis(ups)
    for i, u in enumerate(ups):
        assert np.allclose(batch[i], tangent_basis(u), rtol=0, atol=1e-15)


def test_settings_table_matches_the_setting_names():
    # SETTINGS is derived from the table of conventions; the Literal type must name the same keys.
    import typing

    from gravdir.controllers._conventions import SETTINGS, Setting

    assert typing.get_args(Setting) == SETTINGS
