"""A gravity-direction result given to `fuse_up`, `compare_setting`, `express_up` and the
controller settings is read by one rule (``gravdir._sphere.checked_up_information``, and
``gravdir._results.check_covariance_dof`` for its degrees of freedom): a corrupt result is
refused with the field it names, never judged, and the figures of a sound one do not depend on
the scale of its information."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

import gravdir
from gravdir import compare_setting, express_up, fuse_up
from gravdir.controllers import GravityDirection


@dataclass(frozen=True, eq=False, repr=False)
class _Estimated(GravityDirection):
    """A gravity direction whose covariance is an estimate of `covariance_dof` degrees of
    freedom."""

    covariance_dof: float = math.inf


def _result(up, information, dof=math.inf):
    return _Estimated(
        up=np.asarray(up, dtype=np.float64),
        up_information=np.asarray(information, dtype=np.float64),
        frame="",
        covariance_dof=dof,
    )


def _tilted(x, y=0.0):
    v = np.array([x, y, 1.0])
    return v / np.linalg.norm(v)


PLANE = np.diag([1.0, 1.0, 0.0]) * 1e6  # 1 mrad per tangent direction at +z
SETTING = "ur_set_gravity"
SOUND = _result([0.0, 0.0, 1.0], PLANE)
CORRUPT = [
    ("result.up_information", _result([0.0, 0.0, 1.0], np.full((3, 3), np.nan))),
    ("result.up", _result([np.nan, 0.0, 1.0], PLANE)),
    ("result.up", _result([0.0, 0.0, 2.0], PLANE)),
    ("result.up", _result([0.0, 0.0, 0.0], PLANE)),
    ("result.up_information", _result([0.0, 0.0, 1.0], -PLANE)),
    ("result.up_information", _result([0.0, 0.0, 1.0], np.diag([1e6, -1e6, 0.0]))),
    ("result.up_information", _result([0.0, 0.0, 1.0], np.eye(2))),
    ("result.up_information", _result([0.0, 0.0, 1.0], [[1e6, 5e5, 0], [0, 1e6, 0], [0, 0, 0]])),
    ("result.up_information", _result([0.0, 0.0, 1.0], np.diag([1.7e308, 1.7e308, 0.0]))),
]


@pytest.mark.parametrize(("field", "result"), CORRUPT)
def test_compare_setting_refuses_a_corrupt_result_instead_of_judging_it(field, result):
    """Before, a NaN or negative information gave p = 1 ("agrees with the installed setting"),
    and a NaN `up` a NaN angle."""
    with pytest.raises(ValueError, match=f"`{field}`"):
        compare_setting(result, [0.0, 1.0, 0.0])


@pytest.mark.parametrize(("field", "result"), CORRUPT)
def test_express_up_and_fuse_up_refuse_the_same_corrupt_results(field, result):
    with pytest.raises(ValueError, match=f"`{field}`"):
        express_up(result, np.eye(3))
    # fuse_up names the estimate (and the field, but for a shape: one direction per estimate).
    with pytest.raises(ValueError, match=r"`estimates\[0\]"):
        fuse_up(result, SOUND)


def test_an_installed_result_is_checked_as_a_vector_is():
    for up in ([np.nan, 0.0, 1.0], [0.0, 0.0, 2.0]):
        with pytest.raises(ValueError, match="`installed.up`"):
            compare_setting(SOUND, _result(up, np.zeros((3, 3))))
    with pytest.raises(ValueError, match="`installed`"):
        compare_setting(SOUND, [0.0, 1.0])


@pytest.mark.parametrize("dof", [0.0, -3.0, math.nan])
def test_a_covariance_dof_that_is_not_positive_is_refused(dof):
    """Before, 0 gave NaN p-values and a verdict decided on them; -3 and NaN were taken as an
    exact covariance."""
    bad = _result(_tilted(1e-3), PLANE, dof)
    with pytest.raises(ValueError, match=r"`result.covariance_dof`"):
        compare_setting(bad, [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"`estimates\[1\].covariance_dof`"):
        fuse_up(SOUND, bad)


def test_degrees_of_freedom_beyond_1e15_are_the_chi_square_limit():
    """F(k, ν) tends to chi-square(k) / k; SciPy's F tail is NaN near ν = 1e300."""
    for dof in (1e16, 1e300):
        check = compare_setting(_result(_tilted(1e-3), PLANE, dof), [0.0, 0.0, 1.0])
        exact = compare_setting(_result(_tilted(1e-3), PLANE), [0.0, 0.0, 1.0])
        assert check.p_value == pytest.approx(exact.p_value, rel=1e-12)
        sources = [_result(_tilted(a, b), PLANE, dof) for a, b in ((0, 0), (2e-3, 0), (0, 2e-3))]
        fused = fuse_up(*sources)
        assert np.isfinite(fused.p_value) and 0.0 < fused.p_value < 1.0
        assert np.all(np.isfinite(fused.source_p_value))


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_the_fused_degrees_of_freedom_do_not_depend_on_the_scale_of_the_information():
    """The Welch--Satterthwaite degrees of freedom are a ratio of variances: the same three
    sources with their informations scaled from 1e-190 to 1e160 give the same degrees of
    freedom, and a statistic in proportion to the scale. Before, 1e160 overflowed in the shares
    and reported an exact covariance (infinite), with numpy warnings."""
    figures = []
    for scale in (1e-190, 1e-100, 1.0, 1e100, 1e160):
        sources = [
            _result(_tilted(a, b), PLANE * scale, dof)
            for (a, b), dof in zip(((0, 0), (1e-3, 0), (0, 1e-3)), (10.0, 12.0, 15.0), strict=True)
        ]
        fused = fuse_up(*sources)
        figures.append((fused.covariance_dof, fused.chi2 / scale))
    assert math.isfinite(figures[0][0])
    np.testing.assert_allclose(figures, [figures[2]] * len(figures), rtol=1e-9)


def test_the_controller_setting_writers_refuse_a_corrupt_result():
    for _, result in CORRUPT[:2]:
        with pytest.raises(ValueError, match="`result"):
            gravdir.setting_from_up(result, SETTING)
