"""Property tests written only with gravdir.testing find planted bugs in a calibration wrapper.

`calibrate` is the kind of dozen-line wrapper a user puts around gravdir: fit the sweeps, estimate
`up` with the sign fixed by the arm's mass model, report `up`, its covariance, tilt and azimuth.
Three variants each carry one subtle bug. The property tests (as in ``docs/testing.md``) pass on
the correct wrapper; each buggy variant is run under the same tests inside a test that expects
the failure. Settings come from the project's profile (``tests/conftest.py``, derandomized);
the expected-failure runs skip shrinking and stop at the first failing example.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import Phase, given, settings

from gravdir.general import estimate_up, joint_sweep_from_chain, moment_from_mass_model
from gravdir.sweep import fit_sweep
from gravdir.testing import (
    SweepExperiment,
    arms,
    assert_tilt_azimuth_consistent,
    assert_up_consistent,
    assert_up_covariance_honest,
    mounts,
    sweep_experiments,
)

# ---------------------------------------------------------------------------------------------
# The wrapper under test


@dataclass(frozen=True)
class Calibration:
    up: np.ndarray
    up_cov: np.ndarray
    tilt: float
    azimuth: float


def calibrate(
    exp: SweepExperiment,
    *,
    torque_signs: Mapping[int, float] | None = None,
    cov_scale: float = 1.0,
    azimuth_axes: tuple[int, int] = (0, 1),
) -> Calibration:
    """Fit every sweep, estimate `up`, report tilt and azimuth (keywords plant the bugs)."""
    signs = torque_signs or {}
    chain, sweeps = exp.chain, []
    for rec, config in zip(exp.records, exp.configurations, strict=True):
        sign = int(signs.get(rec.joint, 1))
        fit = fit_sweep(
            rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs", torque_sign=sign
        )
        sweeps.append(joint_sweep_from_chain(chain, config, rec.joint, fit))
    w = moment_from_mass_model(chain, exp.configurations[0], 1, exp.arm.masses, exp.arm.coms)
    est = estimate_up(sweeps, moment_hints={1: np.cross(w, chain.axes_in_link[1])})
    x, y = azimuth_axes
    tilt = float(np.arccos(np.clip(est.up[2], -1.0, 1.0)))
    return Calibration(
        est.up, cov_scale * est.up_cov, tilt, float(np.arctan2(est.up[y], est.up[x]))
    )


# The planted bugs: J2's torque sign flipped, the covariance halved, azimuth from +y.
flipped_sign = functools.partial(calibrate, torque_signs={1: -1})
halved_cov = functools.partial(calibrate, cov_scale=0.5)
azimuth_from_y = functools.partial(calibrate, azimuth_axes=(1, 0))

Wrapper = Callable[[SweepExperiment], Calibration]

# ---------------------------------------------------------------------------------------------
# The property tests, written with gravdir.testing only

experiments = sweep_experiments(arms(transverse_j2=True, up=mounts().map(lambda m: m.up)))


def check_consistent(wrapper: Wrapper, **options: object) -> None:
    """Every estimate lies within its own reported uncertainty of the truth."""

    @settings(**options)
    @given(experiments)
    def check(exp: SweepExperiment) -> None:
        cal = wrapper(exp)
        assert_up_consistent(cal, exp.arm.up)
        assert_tilt_azimuth_consistent(cal.tilt, cal.azimuth, exp.arm.up, cal.up_cov)

    check()


def check_honest(wrapper: Wrapper, **options: object) -> None:
    """Over 80 noise draws of one experiment the reported covariance matches the scatter."""

    @settings(max_examples=3, **options)
    @given(
        sweep_experiments(arms(transverse_j2=True, up=mounts().map(lambda m: m.up)), ripple=False)
    )
    def check(exp: SweepExperiment) -> None:
        results = [wrapper(exp.with_noise(seed)) for seed in range(80)]
        assert_up_covariance_honest(results, exp.arm.up)

    check()


def expect_failure(check: Callable[..., None], wrapper: Wrapper, match: str) -> None:
    """Run `check` on `wrapper` until the first failing example, without shrinking."""
    with pytest.raises(AssertionError, match=match):
        check(
            wrapper,
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
            report_multiple_bugs=False,
        )


# ---------------------------------------------------------------------------------------------
# The correct wrapper passes ...


def test_correct_wrapper_is_consistent():
    check_consistent(calibrate)


@pytest.mark.slow
def test_correct_wrapper_reports_an_honest_covariance():
    check_honest(calibrate)


# ... and each planted bug is found.


def test_flipped_torque_sign_is_found():
    expect_failure(check_consistent, flipped_sign, r"`up` lies .* standard deviations")


@pytest.mark.slow
def test_halved_covariance_is_found():
    check_consistent(halved_cov)  # a halved covariance passes the one-draw test ...
    expect_failure(check_honest, halved_cov, "too small")  # ... and fails the test over many draws


def test_azimuth_from_the_wrong_axis_is_found():
    expect_failure(check_consistent, azimuth_from_y, "^`azimuth` = ")
