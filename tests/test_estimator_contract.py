"""One contract for every gravity-direction estimator, run through the same checks.

In the manner of SciPy's per-method test mixins (``class TestTRF(BaseMixin, ...)`` in
``scipy/optimize/tests/test_least_squares.py``), :class:`EstimatorContract` holds the checks and
each estimator gets a small subclass that knows three things: how to draw a synthetic problem
with a known `up` and noise of a known level (from :mod:`gravdir.synthetic`, which imports no
estimator; for fusion, estimates drawn here around the truth), how to run the estimator on it, and
how to rotate the problem. The estimators: the closed forms of the joint-torque sweeps
(`solve_point_mass`, `solve_l2_offset`, `solve_l3_offset`, `solve_two_branch`), `estimate_up`,
the touch estimators (`up_from_touch_points`, `up_from_touches`, `up_from_three_points`,
`tool_tip_and_up_from_touches`), `up_from_accelerometer`, `estimate_up_from_motion` and
`fuse_up`. The checks:

- the result: an :class:`~gravdir._results.UpResult` whose `up` is a finite unit vector of shape
  (3,) and whose `up_cov` is finite, symmetric, positive semi-definite of rank 2 with `up` in its
  null space, and `up_std_deg` the root of its trace in degrees;
- rotation equivariance: rotating the problem by ``R`` (the robot's base, the touched points, the
  fused estimates) rotates `up` by ``R`` and `up_cov` to ``R C Rᵀ``;
- honesty: over a small seeded Monte Carlo the squared Mahalanobis distance of the truth from the
  estimate, in the tangent plane and in the metric of the reported covariance, averages like a
  chi-square of 2 degrees of freedom (bounds below). Sixty draws each, in the default tier, but
  for the motion estimator, the costliest call here, whose Monte Carlo is in the slow tier.

Everything measured here (the truth's distance, the tangent basis) is written out in this file and
not taken from the library.
"""

from __future__ import annotations

import dataclasses
import warnings
from functools import cache
from typing import Any, ClassVar

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.stats import chi2

from gravdir._results import UpResult
from gravdir.accelerometer import up_from_accelerometer
from gravdir.closed_form import (
    solve_l2_offset,
    solve_l3_offset,
    solve_point_mass,
    solve_two_branch,
)
from gravdir.controllers import express_up
from gravdir.errors import GravdirWarning
from gravdir.fusion import fuse_up
from gravdir.general import estimate_up, joint_sweep_from_chain
from gravdir.kinematics import chain_from_dh
from gravdir.motion import estimate_up_from_motion
from gravdir.sweep import fit_sweep
from gravdir.synthetic import (
    SyntheticArm,
    accelerometer_readings,
    canonical_arm,
    realistic_accelerometer,
    touch_contacts,
    up_from_base_tilt,
    ur5_arm,
)
from gravdir.synthetic.motion import fourier_trajectory, motion_log
from gravdir.touch import (
    tool_tip_and_up_from_touches,
    up_from_three_points,
    up_from_touch_points,
    up_from_touches,
)

# The Monte Carlo test. With d_i the squared Mahalanobis distance of draw i, an honest estimate
# with Gaussian errors makes each d_i chi-square with 2 degrees of freedom, so N times their mean
# is chi-square with 2N degrees of freedom (mean 2, standard deviation 2 / sqrt(N) = 0.26 for
# N = 60). The mean is accepted within the central 1 - P_FALSE_ALARM of that law: 1.15 to 3.16
# for N = 60, which a correct estimator misses once in 10^4 seeds (once in about 800 for the
# twelve estimators here). A standard deviation reported 2x too large divides every d_i by 4
# (mean near 0.5), one 2x too small multiplies it by 4 (near 8); since the interval's ends are
# less than a factor 4 apart, no mean that passes could pass after either error, and the test
# asserts that too.
P_FALSE_ALARM = 1e-4


def _unit(v: Any) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _tangent(up: np.ndarray) -> np.ndarray:
    """(3, 2): two orthonormal columns orthogonal to `up`, from the axis least along it."""
    helper = np.eye(3)[np.argmin(np.abs(up))]
    e1 = _unit(np.cross(up, helper))
    return np.stack([e1, np.cross(up, e1)], axis=1)


def _log_map(up: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """The tangent vector at `up` pointing to `truth`, its length the angle between them."""
    along = truth - (truth @ up) * up
    sine = np.linalg.norm(along)
    angle = np.arctan2(sine, truth @ up)
    return along * (angle / sine) if sine > 0 else np.zeros(3)


def mahalanobis2(result: UpResult, truth: np.ndarray) -> float:
    """Squared distance of `truth` from `result.up` in the metric of `result.up_cov`."""
    up, cov = np.asarray(result.up), np.asarray(result.up_cov)
    basis = _tangent(up)
    error = basis.T @ _log_map(up, truth)
    return float(error @ np.linalg.solve(basis.T @ cov @ basis, error))


def _pose(rotation: np.ndarray, translation: Any = (0.0, 0.0, 0.0)) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = translation
    return pose


def _about_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """A synthetic problem: the true `up` and what the estimator is given."""

    up: np.ndarray
    data: dict[str, Any]


_SEED_RESULTS: dict[type, tuple[Problem, UpResult]] = {}


class EstimatorContract:
    """The checks every gravity-direction estimator passes; a subclass supplies the case."""

    #: Seed of the problem of the result and rotation checks; the Monte Carlo uses seed + 1.
    seed: ClassVar[int] = 0
    #: Monte Carlo draws.
    draws: ClassVar[int] = 60
    #: Largest angle between `up` of the rotated problem and the rotated `up`: this many rad,
    #: or this many reported standard deviations (an estimator that iterates states in its
    #: subclass where its tolerance comes from); the default is rounding.
    rotation_atol: ClassVar[float] = 1e-12
    rotation_sigmas: ClassVar[float] = 0.0
    #: Largest difference between the rotated problem's `up_cov` and ``R C Rᵀ``, relative to
    #: the largest entry of ``C``.
    rotation_cov_rtol: ClassVar[float] = 1e-12

    def problem(self, rng: np.random.Generator) -> Problem:
        """One draw: the fixed geometry of the case with fresh noise."""
        raise NotImplementedError

    def estimate(self, problem: Problem) -> UpResult:
        raise NotImplementedError

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        """The same problem with its frame turned by `rotation` (new from old coordinates)."""
        raise NotImplementedError

    def rotation(self) -> np.ndarray:
        """The rotation of the equivariance check: any rotation, unless the case narrows it."""
        return Rotation.from_rotvec([0.4, -1.1, 0.7]).as_matrix()

    def seed_result(self) -> tuple[Problem, UpResult]:
        """The problem of `seed` and its estimate, computed once per case."""
        if type(self) not in _SEED_RESULTS:
            problem = self.problem(np.random.default_rng(self.seed))
            _SEED_RESULTS[type(self)] = problem, self.estimate(problem)
        return _SEED_RESULTS[type(self)]

    # ---------------------------------------------------------------------------------------

    def test_result_is_a_unit_up_with_a_tangent_covariance(self) -> None:
        _, result = self.seed_result()
        assert isinstance(result, UpResult)
        up, cov = result.up, result.up_cov
        assert isinstance(up, np.ndarray) and up.shape == (3,) and up.dtype == np.float64
        assert isinstance(cov, np.ndarray) and cov.shape == (3, 3) and cov.dtype == np.float64
        assert np.all(np.isfinite(up)) and np.all(np.isfinite(cov))
        assert abs(np.linalg.norm(up) - 1.0) <= 1e-12
        scale = float(np.abs(cov).max())
        assert scale > 0.0
        np.testing.assert_allclose(cov, cov.T, rtol=0.0, atol=1e-12 * scale)
        eigenvalues = np.linalg.eigvalsh(cov)
        assert eigenvalues[0] >= -1e-12 * scale
        assert eigenvalues[1] > 1e-9 * scale  # positive along both tangent directions
        assert np.linalg.norm(cov @ up) <= 1e-12 * scale
        std = result.up_std_deg
        assert np.isfinite(std) and std > 0.0
        assert np.isclose(std, np.degrees(np.sqrt(np.trace(cov))), rtol=1e-12, atol=0.0)

    def test_rotating_the_problem_rotates_up_and_its_covariance(self) -> None:
        problem, result = self.seed_result()
        rotation = self.rotation()
        turned = self.rotate(problem, rotation)
        np.testing.assert_allclose(turned.up, rotation @ problem.up, rtol=0.0, atol=1e-15)
        result_turned = self.estimate(turned)
        angle = np.linalg.norm(_log_map(rotation @ result.up, result_turned.up))
        sigma = np.radians(result.up_std_deg)
        assert angle <= max(self.rotation_atol, self.rotation_sigmas * sigma), angle
        cov = rotation @ result.up_cov @ rotation.T
        scale = float(np.abs(cov).max())
        np.testing.assert_allclose(
            result_turned.up_cov, cov, rtol=0.0, atol=self.rotation_cov_rtol * scale
        )

    def test_monte_carlo_distance_is_chi_square_with_two_dof(self) -> None:
        rng = np.random.default_rng(self.seed + 1)
        d2 = np.empty(self.draws)
        with warnings.catch_warnings():
            # A named warning (residuals above the stated noise, say) flags a draw; the draw
            # still counts, with the covariance the estimator reported for it.
            warnings.simplefilter("ignore", GravdirWarning)
            for i in range(self.draws):
                problem = self.problem(rng)
                d2[i] = mahalanobis2(self.estimate(problem), problem.up)
        low, high = (
            chi2.ppf(q, 2 * self.draws) / self.draws
            for q in (P_FALSE_ALARM / 2, 1 - P_FALSE_ALARM / 2)
        )
        mean = float(np.mean(d2))
        assert low <= mean <= high, (mean, low, high)
        # A sigma 2x too large or too small (the mean over or under 4) could not pass.
        assert high < 4 * low


# ---------------------------------------------------------------------------------------------
# The closed forms of the joint-torque sweeps (canonical two-joint arm)
#
# J1 is swept, J2 is swept at each of J1's gravity zeros; white torque noise of a known level on
# noise-free records. The solvers see the base only through J1's encoder, so the symmetry is a
# turn of the base about J1's axis (base +z): it adds the turn to every J1 position.


@cache
def _canonical_records(
    L2: float, L3: float, tilt: float
) -> tuple[np.ndarray, tuple[tuple[np.ndarray, ...], ...], float, float]:
    up = up_from_base_tilt(tilt, 0.8)
    arm = canonical_arm(L1=0.6, L2=L2, L3=L3, gamma0=0.1, mass=3.0, up=up)
    r1 = arm.sweep(0, [0.0, 1.2], -2.5, 2.5, 1.0, 40.0)
    zeros = fit_sweep(r1.q, torque=r1.torque, velocity=r1.velocity).zeros()
    zu, zs = float(zeros.unstable), float(zeros.stable)
    records = (r1, *(arm.sweep(1, [z, 0.0], -1.5, 1.5, 1.0, 40.0) for z in (zu, zs)))
    return up, tuple((r.q, r.velocity, r.torque) for r in records), zu, zs


class _ClosedForm(EstimatorContract):
    L2: ClassVar[float] = 0.0
    L3: ClassVar[float] = 0.0
    tilt: ClassVar[float] = 0.5
    noise_std: ClassVar[float] = 0.05  # N·m, on torques of about 15 N·m
    gamma: ClassVar[float] = 1.3  # J1 swept at q2 = 1.2 with gamma0 = 0.1
    gamma0: ClassVar[float] = 0.1
    # `up` agrees to rounding; its covariance goes through the J1 fit of the turned sweep, a
    # least-squares problem in sin(q1 + 0.7) and cos(q1 + 0.7) that rounds differently: measured
    # 1e-10 of the largest entry.
    rotation_cov_rtol = 1e-9

    def problem(self, rng: np.random.Generator) -> Problem:
        up, records, zu, zs = _canonical_records(self.L2, self.L3, self.tilt)
        noisy = tuple(
            (q, v, tau + self.noise_std * rng.standard_normal(tau.shape)) for q, v, tau in records
        )
        return Problem(up, {"records": noisy, "zu": zu, "zs": zs})

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        turn = float(np.arctan2(rotation[1, 0], rotation[0, 0]))
        (q1, v1, tau1), ru, rs = problem.data["records"]
        return Problem(
            rotation @ problem.up,
            {
                "records": ((q1 + turn, v1, tau1), ru, rs),
                "zu": problem.data["zu"] + turn,
                "zs": problem.data["zs"] + turn,
            },
        )

    def rotation(self) -> np.ndarray:
        return _about_z(0.7)

    def fits(self, problem: Problem) -> tuple[Any, float, Any, float, Any]:
        f1, fu, fs = (fit_sweep(q, torque=tau, velocity=v) for q, v, tau in problem.data["records"])
        return f1, problem.data["zu"], fu, problem.data["zs"], fs


class TestSolvePointMass(_ClosedForm):
    seed = 10

    def estimate(self, problem: Problem) -> UpResult:
        f1, zu, fu, _, _ = self.fits(problem)
        return solve_point_mass(f1, fu, zu, self.gamma, self.gamma0)


class TestSolveL2Offset(_ClosedForm):
    seed = 20
    L2 = 0.05

    def estimate(self, problem: Problem) -> UpResult:
        f1, zu, fu, zs, fs = self.fits(problem)
        return solve_l2_offset(
            f1, fu, zu, self.gamma, self.gamma0, fit_j2_other=fs, q1_at_j2_other=zs
        )


class TestSolveL3Offset(_ClosedForm):
    seed = 30
    L2, L3 = 0.05, 0.1

    def estimate(self, problem: Problem) -> UpResult:
        f1, zu, fu, zs, fs = self.fits(problem)
        return solve_l3_offset(
            f1, fu, zu, self.gamma, self.gamma0,
            l3_ratio=self.L3 / np.hypot(0.6, self.L2), fit_j2_other=fs, q1_at_j2_other=zs,
        )  # fmt: skip


class TestSolveTwoBranch(_ClosedForm):
    seed = 40
    L2 = 0.05

    def estimate(self, problem: Problem) -> UpResult:
        f1, zu, fu, zs, fs = self.fits(problem)
        return solve_two_branch(f1, fu, zu, fs, zs)


# ---------------------------------------------------------------------------------------------
# The general estimator: J2 of a UR5-like arm swept at three J1 positions. Rotating the base
# turns every link rotation the chain gives; the torques do not change.

_UR5_CONFIG = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])


@cache
def _ur5_j2_records() -> tuple[SyntheticArm, tuple[tuple[np.ndarray, ...], ...]]:
    arm = ur5_arm(up_from_base_tilt(0.6, 0.7))
    records = []
    for j1 in 0.4 + np.array([0.0, np.pi / 2, np.pi]):
        config = _UR5_CONFIG.copy()
        config[0] = j1
        rec = arm.sweep(1, config, config[1] - 1.0, config[1] + 1.0, 0.5, 100.0)
        config[1] = rec.q[0]
        records.append((config, rec.q, rec.velocity, rec.torque))
    return arm, tuple(records)


def _chain(arm: SyntheticArm, base: np.ndarray) -> Any:
    d, theta, a, alpha = np.asarray(arm.dh).T
    return chain_from_dh(d, theta, a, alpha, base=_pose(base))


class TestEstimateUp(EstimatorContract):
    seed = 50
    noise_std = 0.1  # N·m, on a J2 torque of about 40 N·m
    # The refinement stops at a step below `xtol` = 1e-10 rad, from a start grid that does not
    # turn with the base: the two runs end within a few such steps (measured 6e-13 rad, and
    # 1e-12 of the covariance's largest entry).
    rotation_atol = 1e-9
    rotation_cov_rtol = 1e-9

    def problem(self, rng: np.random.Generator) -> Problem:
        arm, records = _ur5_j2_records()
        noisy = tuple(
            (c, q, v, tau + self.noise_std * rng.standard_normal(tau.shape))
            for c, q, v, tau in records
        )
        # The mount's nominal up picks the sign, as a user's would.
        return Problem(arm.up, {"base": np.eye(3), "records": noisy, "hint": np.eye(3)[2]})

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        data = dict(problem.data, base=rotation @ problem.data["base"])
        data["hint"] = rotation @ problem.data["hint"]
        return Problem(rotation @ problem.up, data)

    def estimate(self, problem: Problem) -> UpResult:
        arm, _ = _ur5_j2_records()
        chain = _chain(arm, problem.data["base"])
        sweeps = [
            joint_sweep_from_chain(chain, c, 1, fit_sweep(q, torque=tau, velocity=v))
            for c, q, v, tau in problem.data["records"]
        ]
        return estimate_up(sweeps, up_hint=problem.data["hint"])


# ---------------------------------------------------------------------------------------------
# Touches of a plane: the truth is drawn with the plane (10° of tilt at most, the synthetic
# default). A rigid motion of the base moves every point and flange pose.

TOUCH_NOISE = 2e-5  # m, per coordinate of each contact


def _touches(rng: np.random.Generator, n: int, **kwargs: Any) -> Problem:
    data = touch_contacts(rng, n, noise_std=TOUCH_NOISE, **kwargs)
    poses = np.asarray(data.flange_poses)
    # Contact points written out: the tool tip carried by each reported flange pose.
    points = poses[:, :3, :3] @ np.asarray(data.tool_tip) + poses[:, :3, 3]
    return Problem(
        np.asarray(data.up),
        {
            "poses": poses,
            "points": points,
            "tool_tip": np.asarray(data.tool_tip),
            "hint": np.eye(3)[2],
        },
    )


class _Touch(EstimatorContract):
    n_contacts: ClassVar[int] = 8
    translation: ClassVar[tuple[float, float, float]] = (0.3, -0.2, 0.5)

    def problem(self, rng: np.random.Generator) -> Problem:
        return _touches(rng, self.n_contacts)

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        move = _pose(rotation, self.translation)
        data = dict(problem.data)
        data["poses"] = move @ problem.data["poses"]
        data["points"] = problem.data["points"] @ rotation.T + self.translation
        data["hint"] = rotation @ problem.data["hint"]
        return Problem(rotation @ problem.up, data)


class TestUpFromTouchPoints(_Touch):
    seed = 60

    def estimate(self, problem: Problem) -> UpResult:
        return up_from_touch_points(
            problem.data["points"], up_hint=problem.data["hint"], noise_std=TOUCH_NOISE
        )


class TestUpFromTouches(_Touch):
    seed = 70

    def estimate(self, problem: Problem) -> UpResult:
        return up_from_touches(
            problem.data["poses"], problem.data["tool_tip"],
            up_hint=problem.data["hint"], noise_std=TOUCH_NOISE,
        )  # fmt: skip


class TestUpFromThreePoints(_Touch):
    seed = 80
    n_contacts = 3

    def estimate(self, problem: Problem) -> UpResult:
        p1, p2, p3 = problem.data["points"]
        return up_from_three_points(p1, p2, p3, up_hint=problem.data["hint"], noise_std=TOUCH_NOISE)


class TestToolTipAndUpFromTouches(_Touch):
    seed = 90
    n_contacts = 10
    # Gauss-Newton on (up, tool tip) from a start grid that does not turn with the base stops
    # when a step no longer lowers the cost. The residuals (2e-5 m) are differences of
    # positions of 0.5 m, so the cost is resolved to about 5e-12 of itself and a move of `up`
    # smaller than sqrt(N 5e-12), about 1e-5 standard deviations, cannot be told apart: measured
    # 7e-7 standard deviations (1e-10 rad), and 3e-9 of the covariance's largest entry.
    rotation_sigmas = 1e-5
    rotation_cov_rtol = 1e-7

    def problem(self, rng: np.random.Generator) -> Problem:
        # The tool tip is observable only through orientations that differ (20° at least).
        return _touches(rng, self.n_contacts, min_orientation=np.radians(20.0))

    def estimate(self, problem: Problem) -> UpResult:
        return tool_tip_and_up_from_touches(
            problem.data["poses"], up_hint=problem.data["hint"], noise_std=TOUCH_NOISE
        )


# ---------------------------------------------------------------------------------------------
# An accelerometer on the UR5-like arm's last link, read at eight fixed poses; each draw a new
# sensor (bias, scale, mounting) with its noise. Rotating the base leaves the readings alone.

_ACCEL_Q = np.random.default_rng(7).uniform(-2.0, 2.0, (8, 6))


class TestUpFromAccelerometer(EstimatorContract):
    seed = 100
    # Gauss-Newton to a step below `tol` = 1e-12, from a start that does not turn with the base:
    # measured 5e-12 rad, and 8e-12 of the covariance's largest entry.
    rotation_atol = 1e-10
    rotation_cov_rtol = 1e-9

    def problem(self, rng: np.random.Generator) -> Problem:
        arm = ur5_arm(up_from_base_tilt(0.3, -1.0))
        sensor = realistic_accelerometer(rng)
        data = accelerometer_readings(arm, _ACCEL_Q, sensor, rng, link=5)
        return Problem(
            arm.up,
            {"base": np.eye(3), "readings": np.asarray(data.readings), "noise": data.noise_std},
        )

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        data = dict(problem.data, base=rotation @ problem.data["base"])
        return Problem(rotation @ problem.up, data)

    def estimate(self, problem: Problem) -> UpResult:
        chain = _chain(ur5_arm(), problem.data["base"])
        return up_from_accelerometer(
            chain,
            _ACCEL_Q,
            readings=problem.data["readings"],
            link=5,
            noise_std=problem.data["noise"],
        )


# ---------------------------------------------------------------------------------------------
# Motion: a three-joint arm follows a 2 s Fourier trajectory logged at 40 Hz; torques from the
# synthetic arm's own Newton-Euler, with gains, offsets, friction and noise of a known level. Its
# calls are the costliest here (0.2 to 1 s each), so its Monte Carlo is in the slow tier.

_MOTION_DH = np.array(
    [[0.1, 0.0, 0.0, np.pi / 2], [0.0, 0.2, 0.5, 0.0], [0.0, 0.0, 0.4, np.pi / 2]]
)


@cache
def _motion_truth() -> tuple[SyntheticArm, Any, np.ndarray]:
    rng = np.random.default_rng(5)
    masses = np.array([3.0, 2.0, 1.0])
    arm = SyntheticArm(
        dh=_MOTION_DH,
        masses=masses,
        coms=[[0.0, 0.05, 0.02], [-0.2, 0.0, 0.01], [-0.1, 0.02, 0.0]],
        up=up_from_base_tilt(0.35, 0.9),
        inertias=masses[:, None, None] * np.diag([0.02, 0.03, 0.04]),
    )
    traj = fourier_trajectory(3, 2.0, 40.0, rng=rng, base_frequency=0.5, max_velocity=2.0)
    torque = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
    return arm, traj, torque


class TestEstimateUpFromMotion(EstimatorContract):
    seed = 110
    noise_std = 0.005  # N·m per joint, on torques of 5 to 17 N·m
    # The refinement stops at a step below a millionth of a standard deviation (a decrement of
    # 1e-12 in chi-square), from a start grid that does not turn with the base: the two runs
    # end within a few such steps (measured 6e-8 standard deviations, and 8e-9 of the
    # covariance's largest entry; 6e-7 and 8e-8 on other logs).
    rotation_sigmas = 1e-5
    rotation_cov_rtol = 1e-6

    def problem(self, rng: np.random.Generator) -> Problem:
        arm, traj, torque = _motion_truth()
        log = motion_log(
            traj, torque, rng=rng, gains=[1.1, 0.95, 1.0], offsets=[0.1, -0.2, 0.05],
            coulomb=0.2, viscous=0.05, noise_std=self.noise_std,
        )  # fmt: skip
        return Problem(arm.up, {"base": np.eye(3), "torque": np.asarray(log.torque)})

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        data = dict(problem.data, base=rotation @ problem.data["base"])
        return Problem(rotation @ problem.up, data)

    def estimate(self, problem: Problem) -> UpResult:
        arm, traj, _ = _motion_truth()
        # The log holds no load-dependent friction, so the model leaves it out; the small
        # start grid of a three-joint arm (as in the fuzz suite) keeps a call near a second.
        return estimate_up_from_motion(
            _chain(arm, problem.data["base"]), traj.time, q=traj.q,
            velocity=traj.velocity, torque=problem.data["torque"],
            acceleration=traj.acceleration, noise_std=self.noise_std, load_friction="none",
            n_grid=60, n_starts=1,
        )  # fmt: skip

    @pytest.mark.slow
    def test_monte_carlo_distance_is_chi_square_with_two_dof(self) -> None:
        super().test_monte_carlo_distance_is_chi_square_with_two_dof()


# ---------------------------------------------------------------------------------------------
# Fusion: three independent estimates of one `up`, each with its own anisotropic covariance and
# an error drawn from it. Rotating the frame re-expresses each estimate.

_FUSION_UP = up_from_base_tilt(0.4, 2.0)
_FUSION_STD = ((2e-3, 5e-4), (1e-3, 1e-3), (3e-4, 4e-3))  # rad, along the two tangent axes


class TestFuseUp(EstimatorContract):
    seed = 120

    def problem(self, rng: np.random.Generator) -> Problem:
        basis = _tangent(_FUSION_UP)
        estimates = []
        for std in _FUSION_STD:
            error = basis @ (np.asarray(std) * rng.standard_normal(2))
            angle = np.linalg.norm(error)
            up = np.cos(angle) * _FUSION_UP + np.sin(angle) * error / angle
            cov = basis @ np.diag(np.square(std)) @ basis.T
            estimates.append(express_up(up, np.eye(3), up_cov=cov))
        return Problem(_FUSION_UP, {"estimates": estimates})

    def rotate(self, problem: Problem, rotation: np.ndarray) -> Problem:
        estimates = [express_up(e, rotation) for e in problem.data["estimates"]]
        return Problem(rotation @ problem.up, {"estimates": estimates})

    def estimate(self, problem: Problem) -> UpResult:
        return fuse_up(*problem.data["estimates"])
