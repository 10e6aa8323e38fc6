"""Tests of gravdir.fusion: fusing gravity directions, the consistency test, shared data.

The truth is built here independently of the code under test: sources are drawn around a true
`up` by the exponential map of the sphere written out with cos and sin, their informations
carried to the drawn point by an explicit Rodrigues rotation, and the real pipelines are run on
the synthetic arm and touch sets of :mod:`gravdir.synthetic`, the touch set brought into the
arm's base frame by a rotation built here from a cross product.

What is asserted (acceptance of the fusion):

* exact Gaussian sources, 2000 draws of three sources with random rank-2 informations
  (standard deviations 0.01°-0.03° along random axes): the normalised squared error of the
  fused `up` averages 2 within 15%, its RMS matches the combined bound within 15%, and the
  false-alarm rate of the test at 1% lies in the binomial 99% interval;
* the same sources with one biased by 6 standard deviations of its difference from the other
  two's combination: the test at 1% names it in at least 95% of 2000 draws;
* real pipelines (`estimate_up` on sweeps of `ur5_arm` with `realistic_sensors`,
  `up_from_touch_points` on `touch_contacts`): consistent, and a moved base is named;
* shared data (two solvers on the same fits, two `estimate_up` on overlapping sweeps) is refused
  without `cross_cov` and accepted with it; a frame mismatch is refused.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from scipy.stats import binom

import gravdir.fusion
from gravdir import (
    FusedEstimate,
    angle_between,
    chain_from_dh,
    contact_points,
    estimate_up,
    express_up,
    fit_sweep,
    fit_sweep_common_mode,
    fuse_up,
    joint_sweep_from_chain,
    setting_from_up,
    solve_point_mass,
    solve_two_branch,
    up_from_setting,
    up_from_touch_points,
)
from gravdir.controllers import GravityDirection
from gravdir.errors import ConvergenceWarning, DegenerateGeometryError, InsufficientDataError
from gravdir.fusion import SharedDataError
from gravdir.synthetic import canonical_arm, realistic_sensors, up_from_base_tilt, ur5_arm
from gravdir.synthetic.touch import touch_contacts

N_DRAWS = 2000
UP = up_from_base_tilt(0.05, 0.7)


# --------------------------------------------------------------------------------------------
# Sphere geometry written out independently


def _basis(u):
    """Two orthonormal vectors perpendicular to `u` (Gram-Schmidt from the least-aligned axis)."""
    axis = np.zeros(3)
    axis[int(np.argmin(np.abs(u)))] = 1.0
    e1 = axis - (axis @ u) * u
    e1 /= np.linalg.norm(e1)
    return np.stack([e1, np.cross(u, e1)])


def _rodrigues(a, b):
    """The rotation about a x b taking unit a to unit b."""
    v = np.cross(a, b)
    s, c = np.linalg.norm(v), a @ b
    if s == 0:
        return np.eye(3)
    k = v / s
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * kx + (1 - c) * kx @ kx


def _exp(u, t):
    n = np.linalg.norm(t)
    return u if n == 0 else np.cos(n) * u + np.sin(n) * t / n


def _tangent_error(fused_up, true_up):
    """The tangent vector at `fused_up` pointing to the truth, of length the angle."""
    angle = float(np.arccos(np.clip(fused_up @ true_up, -1.0, 1.0)))
    w = true_up - (fused_up @ true_up) * fused_up
    return w / np.linalg.norm(w) * angle


def _random_cov(rng, lo_deg=0.01, hi_deg=0.03):
    s = np.radians(rng.uniform(lo_deg, hi_deg, 2))
    a = rng.uniform(0, np.pi)
    r = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return r @ np.diag(s**2) @ r.T


def _source(rng, up, cov2, bias2=(0.0, 0.0)):
    """A gravity direction drawn around `up` with tangent covariance `cov2` and a bias."""
    b = _basis(up)
    x = rng.multivariate_normal(np.asarray(bias2), cov2)
    u = _exp(up, x @ b)
    r = _rodrigues(up, u)
    info = r @ b.T @ np.linalg.inv(cov2) @ b @ r.T
    return GravityDirection(up=u, up_information=0.5 * (info + info.T), frame="")


def _random_up(rng):
    u = rng.normal(size=3)
    return u / np.linalg.norm(u)


def _hand(up, cov=1e-6, frame=""):
    return express_up(np.asarray(up, dtype=float), np.eye(3), up_cov=np.eye(3) * cov, frame=frame)


# --------------------------------------------------------------------------------------------
# Acceptance: exact Gaussian sources


@pytest.mark.slow
def test_consistent_sources_match_the_bound_and_the_false_alarm_rate():
    rng = np.random.default_rng(20261)
    nse, err2, trace, alarms = [], [], [], 0
    for _ in range(N_DRAWS):
        up = _random_up(rng)
        fused = fuse_up(*[_source(rng, up, _random_cov(rng)) for _ in range(3)])
        e = _tangent_error(fused.up, up)
        nse.append(e @ fused.up_information @ e)
        err2.append(e @ e)
        trace.append(np.trace(fused.up_cov))
        alarms += not fused.consistent
        assert fused.dof == 4 and fused.converged
    assert abs(np.mean(nse) / 2.0 - 1.0) < 0.15
    assert abs(np.sqrt(np.mean(err2) / np.mean(trace)) - 1.0) < 0.15
    lo, hi = binom.interval(0.99, N_DRAWS, 0.01)
    assert lo <= alarms <= hi


@pytest.mark.slow
def test_a_source_biased_by_six_sigma_is_named():
    rng = np.random.default_rng(20262)
    named = 0
    for _ in range(N_DRAWS):
        up = _random_up(rng)
        covs = [_random_cov(rng) for _ in range(3)]
        k = int(rng.integers(3))
        others = np.linalg.inv(sum(np.linalg.inv(covs[i]) for i in range(3) if i != k))
        s = covs[k] + others
        d = rng.normal(size=2)
        bias = 6.0 * d / np.sqrt(d @ np.linalg.solve(s, d))
        sources = [_source(rng, up, covs[i], bias if i == k else (0, 0)) for i in range(3)]
        fused = fuse_up(*sources)
        if fused.outlier == k:
            named += 1
            assert fused.without_outlier is not None and fused.without_outlier.n_sources == 2
            assert fused.outlier_nsigma == pytest.approx(fused.nsigma[k])
    assert named >= 0.95 * N_DRAWS


def test_two_sources_can_only_disagree():
    a, b = _hand([0.0, 0.0, 1.0]), _hand([np.sin(0.01), 0.0, np.cos(0.01)])
    fused = fuse_up(a, b)
    assert not fused.consistent and fused.outlier is None and fused.without_outlier is None
    # Both leave-one-out statistics are the pair's difference: 0.01 rad over sqrt(2) mrad.
    assert np.allclose(fused.nsigma, 0.01 / np.sqrt(2e-6), rtol=1e-4)
    assert fused.dof == 2 and fused.chi2 == pytest.approx(0.01**2 / 2e-6, rel=1e-4)


def test_fusion_of_two_equal_sources_is_the_midpoint_with_added_information():
    t = 0.002
    a = _hand([np.sin(t), 0.0, np.cos(t)], 1e-6)
    b = _hand([-np.sin(t), 0.0, np.cos(t)], 1e-6)
    fused = fuse_up(a, b)
    assert float(angle_between(fused.up, [0.0, 0.0, 1.0])) < 1e-12
    assert fused.up_std_deg == pytest.approx(np.degrees(1e-3), rel=1e-5)
    assert np.allclose(fused.up_information @ fused.up, 0.0, atol=1e-6)


def test_large_disagreement_keeps_its_geodesic_angle():
    # 60 degrees apart, equal weights: the fused up is the geodesic midpoint.
    a = _hand([np.sin(np.pi / 6), 0.0, np.cos(np.pi / 6)])
    b = _hand([-np.sin(np.pi / 6), 0.0, np.cos(np.pi / 6)])
    fused = fuse_up(a, b)
    assert float(angle_between(fused.up, [0.0, 0.0, 1.0])) < 1e-10
    assert fused.chi2 == pytest.approx((np.pi / 6) ** 2 / 1e-6 * 2, rel=1e-9)


def test_rank_one_source_adds_one_direction():
    # Gravity Beta says nothing about base y: fused with a full source it sharpens x only.
    beta = up_from_setting("abb_gravity_beta", 0.0, values_cov=1e-6)
    full = _hand([0.0, 0.0, 1.0], 1e-6)
    fused = fuse_up(beta, full)
    assert fused.dof == 1
    cov = fused.up_cov
    assert cov[0, 0] == pytest.approx(0.5e-6, rel=1e-6)
    assert cov[1, 1] == pytest.approx(1e-6, rel=1e-6)
    # Two rank-1 sources sharing their blind direction leave up open.
    with pytest.raises(DegenerateGeometryError, match="`estimates` together to determine"):
        fuse_up(beta, up_from_setting("abb_gravity_beta", 0.001, values_cov=1e-6))


def test_source_without_information_is_refused():
    plain = express_up([0.0, 0.0, 1.0], np.eye(3))
    with pytest.raises(InsufficientDataError, match=r"`estimates\[1\]`"):
        fuse_up(_hand([0.0, 0.0, 1.0]), plain)


# --------------------------------------------------------------------------------------------
# Acceptance: real pipelines


def _torque_estimate(rng, sweep_set):
    """`estimate_up` on J2 sweeps of a UR5-like arm with realistic sensor errors."""
    arm = ur5_arm(up=UP)
    chain = chain_from_dh(*arm.dh.T)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    base = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    sweeps = []
    for turn in sweep_set:
        pose = base.copy()
        pose[0] += turn
        rec = arm.sweep(1, pose, -2.9, -0.3, 0.3, 100.0, sensor=sensors, rng=rng)
        pose[1] = rec.q[0]
        fit = fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs")
        sweeps.append(joint_sweep_from_chain(chain, pose, 1, fit))
    return sweeps


def _touch_estimate(rng, noise_std=1e-4):
    """A plane fit to 12 touches, in its own frame, and the rotation to the arm's base frame."""
    data = touch_contacts(rng, 12, noise_std=noise_std)
    points = contact_points(data.flange_poses, data.tool_tip)
    fit = up_from_touch_points(points, noise_std=noise_std)
    return fit, _rodrigues(data.up, UP)


@pytest.mark.slow
def test_real_pipelines_are_consistent_and_a_moved_base_is_named():
    rng = np.random.default_rng(20263)
    nse, alarms, named = [], 0, 0
    n = 60
    for _ in range(n):
        torque = estimate_up(_torque_estimate(rng, (0.0, np.pi / 2, np.pi)))
        touch, base_from_touch = _touch_estimate(rng)
        touch2, base_from_touch2 = _touch_estimate(rng)
        a = express_up(touch, base_from_touch, frame="base")
        b = express_up(touch2, base_from_touch2, frame="base")
        fused = fuse_up(torque, a, b)
        assert fused.up_std_deg < min(torque.up_std_deg, a.up_std_deg, b.up_std_deg)
        e = _tangent_error(fused.up, UP)
        nse.append(e @ fused.up_information @ e)
        alarms += not fused.consistent
        # The second touch set taken after the base moved by 0.3 degrees about base x.
        c, s = np.cos(np.radians(0.3)), np.sin(np.radians(0.3))
        moved = np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ base_from_touch2
        fused_moved = fuse_up(torque, a, express_up(touch2, moved, frame="base"))
        named += fused_moved.outlier == 2
    assert 1.5 < np.mean(nse) < 2.5
    assert alarms <= 4  # 1% nominal: 0.6 expected of 60
    assert named >= 0.95 * n


def test_naive_fusion_across_frames_is_refused_and_express_up_fixes_it():
    rng = np.random.default_rng(20264)
    torque = express_up(
        estimate_up(_torque_estimate(rng, (0.0, np.pi / 2, np.pi))), np.eye(3), frame="base"
    )
    touch, base_from_target = _touch_estimate(rng, 2e-5)
    in_target = express_up(touch, np.eye(3), frame="target")
    with pytest.raises(ValueError, match="express_up"):
        fuse_up(torque, in_target)
    # Unlabelled, the naive fusion is not refused but fails the consistency test by far.
    naive = fuse_up(estimate_up(_torque_estimate(rng, (0.0, np.pi / 2, np.pi))), touch)
    assert not naive.consistent and naive.chi2 > 1e3
    fused = fuse_up(torque, express_up(touch, base_from_target, frame="base"))
    assert fused.consistent
    assert float(angle_between(fused.up, UP)) < np.radians(5 * fused.up_std_deg)


# --------------------------------------------------------------------------------------------
# Acceptance: shared data


def _sqrt_psd(c):
    vals, vecs = np.linalg.eigh(c)
    return (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T


def test_two_solvers_on_the_same_fits_are_refused_without_cross_cov():
    rng = np.random.default_rng(20265)
    arm = canonical_arm(L1=0.8, gamma0=0.4, up=UP)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())

    def fit(joint, conf):
        lo, hi = (-2.5, 2.5) if joint == 0 else (conf[1] - 1.5, conf[1] + 1.5)
        rec = arm.sweep(joint, list(conf), lo, hi, 1.0, 40.0, sensor=sensors, rng=rng)
        return fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque)

    f1 = fit(0, [0.0, 1.2 - 0.4])
    zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)
    fu, fs = fit(1, [zu, 0.0]), fit(1, [zs, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = solve_point_mass(f1, fu, zu, 1.2, 0.4)
        branch = solve_two_branch(f1, fu, zu, fs, zs)
    assert point.fingerprint & branch.fingerprint
    assert point.fingerprint == f1.fingerprint | fu.fingerprint
    with pytest.raises(SharedDataError, match=r"`estimates\[0\]`.*`estimates\[1\]`"):
        fuse_up(point, branch)
    x = 0.5 * _sqrt_psd(point.up_cov) @ _sqrt_psd(branch.up_cov)
    fused = fuse_up(point, branch, cross_cov={(0, 1): x})
    assert isinstance(fused, FusedEstimate) and repr(fused).startswith("FusedEstimate(")
    assert not hasattr(gravdir.fusion, "FusedUp")  # renamed, not aliased
    assert fused.fingerprint == point.fingerprint | branch.fingerprint
    # Correlated sources carry less than the sum of their informations.
    summed = np.linalg.eigvalsh(point.up_information + branch.up_information)[-2:]
    assert np.all(np.linalg.eigvalsh(fused.up_information)[-2:] < summed)


def test_estimates_on_overlapping_sweeps_share_data():
    rng = np.random.default_rng(20266)
    sweeps = _torque_estimate(rng, (0.0, np.pi / 2, np.pi, 3 * np.pi / 2))
    a, b = estimate_up(sweeps[:3]), estimate_up(sweeps[1:])
    assert a.fingerprint == frozenset().union(*(s.fit.fingerprint for s in sweeps[:3]))
    with pytest.raises(SharedDataError, match="cross_cov"):
        fuse_up(a, b)
    # A result re-expressed in another frame keeps its data's fingerprint.
    with pytest.raises(SharedDataError):
        fuse_up(a, express_up(a, np.eye(3)))
    # Independent sweeps: accepted.
    c = estimate_up(_torque_estimate(rng, (0.0, np.pi / 2, np.pi)))
    assert fuse_up(a, c).fingerprint == a.fingerprint | c.fingerprint


def test_batched_fit_entries_carry_their_own_sweeps_fingerprint():
    q = np.concatenate([np.linspace(-1, 1, 50), np.linspace(1, -1, 50)])
    v = np.concatenate([np.full(50, 0.2), np.full(50, -0.2)])
    t = 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v)
    batch = fit_sweep(np.stack([q, q, q]), velocity=v, torque=np.stack([t, 2 * t, 3 * t]))
    assert len(batch.fingerprint) == 3
    assert batch[1].fingerprint == fit_sweep(q, velocity=v, torque=2 * t).fingerprint
    assert batch[1:].fingerprint == batch[1].fingerprint | batch[2].fingerprint
    assert batch[1:][1].fingerprint == batch[2].fingerprint
    assert not batch[0].fingerprint & batch[1].fingerprint
    assert pickle.loads(pickle.dumps(batch))[2].fingerprint == batch[2].fingerprint
    single = fit_sweep(q, velocity=v, torque=t)
    assert single.fingerprint != fit_sweep(q, velocity=v, torque=t + 1e-9).fingerprint
    assert single.fingerprint == fit_sweep(q.tolist(), velocity=v, torque=t).fingerprint
    # The order of the samples does not matter; the torque sign of the controller neither.
    order = np.random.default_rng(1).permutation(q.size)
    assert single.fingerprint == fit_sweep(q[order], velocity=v[order], torque=t[order]).fingerprint
    assert single.fingerprint == fit_sweep(q, velocity=v, torque=t, torque_sign=-1).fingerprint
    # NaN samples omitted: the fingerprint of the clean samples.
    tn = t.copy()
    tn[[3, 60]] = np.nan
    keep = ~np.isnan(tn)
    omitted = fit_sweep(q, velocity=v, torque=tn, nan_policy="omit")
    assert omitted.fingerprint == fit_sweep(q[keep], velocity=v[keep], torque=t[keep]).fingerprint


def test_same_object_twice_is_refused_even_without_fingerprint():
    a = _hand([0.0, 0.0, 1.0])
    with pytest.raises(SharedDataError, match="same object"):
        fuse_up(a, a)


# --------------------------------------------------------------------------------------------
# Input checks


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"significance": 0.0}, "`significance`"),
        ({"significance": 1.0}, "`significance`"),
        ({"max_iter": 0}, "`max_iter`"),
        ({"xtol": 1.0}, "`xtol`"),
        ({"cross_cov": [[0.0]]}, "`cross_cov`"),
        ({"cross_cov": {(0, 0): np.zeros((3, 3))}}, "`cross_cov`"),
        ({"cross_cov": {(0, 5): np.zeros((3, 3))}}, "`cross_cov`"),
        ({"cross_cov": {(0, 1): np.zeros((2, 2))}}, r"`cross_cov\["),
        ({"cross_cov": {(0, 1): np.eye(3) * 1.0}}, "positive definite"),
    ],
)
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fuse_up(
            _hand([0.0, 0.0, 1.0]),
            _hand([0.0, 0.001, 1.0] / np.linalg.norm([0, 0.001, 1])),
            **kwargs,
        )


def test_bad_estimates_are_refused():
    a = _hand([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"`estimates\[1\]`.*express_up"):
        fuse_up(a, np.array([0.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="one direction"):
        fuse_up(a, express_up([[0.0, 0.0, 1.0]] * 2, np.eye(3), up_cov=np.eye(3) * 1e-6))
    with pytest.raises(InsufficientDataError, match="at least 2"):
        fuse_up(a)


def test_not_converging_warns():
    a = _hand([np.sin(0.5), 0.0, np.cos(0.5)])
    b = _hand([0.0, np.sin(0.5), np.cos(0.5)], 4e-6)
    with pytest.warns(ConvergenceWarning):
        fused = fuse_up(a, b, max_iter=1)
    assert not fused.converged and fused.n_iter == 1


def test_an_unreachable_xtol_converges_at_the_resolution_of_the_data():
    # Sources 0.5 rad apart and 1e4 times apart in precision: with `xtol` below rounding the
    # steps stop shrinking at rounding level; the run has converged there, without a warning.
    a = _hand([np.sin(0.5), 0.0, np.cos(0.5)])
    b = _hand([0.0, np.sin(0.5), np.cos(0.5)], 1e-10)
    ref = fuse_up(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused = fuse_up(a, b, xtol=1e-300)
    assert fused.converged and fused.n_iter < 30
    assert float(np.arccos(min(1.0, float(fused.up @ ref.up)))) < 1e-6 * 1e-5


def test_result_contract_and_repr():
    rng = np.random.default_rng(7)
    up = _random_up(rng)
    covs = [_random_cov(rng) for _ in range(3)]
    sources = [_source(rng, up, c, (0.01, 0.0) if i == 1 else (0, 0)) for i, c in enumerate(covs)]
    fused = fuse_up(*sources)
    assert fused.outlier == 1 and "outlier=1" in repr(fused)
    d = fused.to_dict()
    assert d["without_outlier"]["n_sources"] == 2 and d["outlier"] == 1
    assert fused == fuse_up(*sources)


def test_controller_results_keep_the_input_fingerprint():
    rng = np.random.default_rng(20267)
    est = estimate_up(_torque_estimate(rng, (0.0, np.pi / 2, np.pi)))
    assert est.fingerprint
    assert express_up(est, np.eye(3)).fingerprint == est.fingerprint
    for setting in ("ur_set_gravity", "abb_gravity_beta"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert setting_from_up(est, setting).fingerprint == est.fingerprint
    assert express_up([0.0, 0.0, 1.0], np.eye(3)).fingerprint == frozenset()
    assert up_from_setting("ur_set_gravity", [0.0, 0.0, 9.8]).fingerprint == frozenset()


def test_common_mode_fit_of_the_same_arrays_shares_the_fingerprint():
    q = np.concatenate([np.linspace(-1, 1, 50), np.linspace(1, -1, 50)])
    v = np.concatenate([np.full(50, 0.2), np.full(50, -0.2)])
    t = 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v)
    assert (
        fit_sweep_common_mode(q, velocity=v, torque=t).fingerprint
        == fit_sweep(q, velocity=v, torque=t).fingerprint
    )


# --------------------------------------------------------------------------------------------
# Sources of very different precision


def _offset_source(x, y, info2):
    """A gravity direction tilted by the small angles (x, y) rad from +z, with the information
    `info2` (2, 2) in the tangent basis of `_basis`; rank 1 when `info2` is."""
    up = _exp(np.array([0.0, 0.0, 1.0]), np.array([x, y, 0.0]))
    b = _basis(up)
    info = b.T @ np.asarray(info2, dtype=float) @ b
    return GravityDirection(up=up, up_information=0.5 * (info + info.T), frame="")


def _exact_leave_one_out(sources, cross_cov=None):
    """Per source k: chi2 of all minus chi2 of the fusion of the others (the drop of chi2 when
    k gets a free bias), each from its own fusion."""
    total = fuse_up(*sources, cross_cov=cross_cov).chi2
    out = []
    for k in range(len(sources)):
        rest = sources[:k] + sources[k + 1 :]
        sub = {
            (i - (i > k), j - (j > k)): x
            for (i, j), x in (cross_cov or {}).items()
            if k not in (i, j)
        }
        out.append(total - fuse_up(*rest, cross_cov=sub or None).chi2)
    return np.array(out)


def test_a_source_1e12_times_more_precise_keeps_the_outlier_test():
    # Was: one source 1e12 times more precise gave chi2 54.6 (p 4e-11, inconsistent) but nsigma
    # [0, 4.5e-6, 0] and no outlier -- a relative rank threshold on the joint information of the
    # free-bias fit dropped the other sources' directions. At a ratio of 1e10 the same data name
    # source 1 at 6.4 sigma; the statistic now compares each source with the fusion of the others.
    def source(u, ratio):
        cov = np.diag([1e-4, 2e-4, 3e-4]) / ratio
        return express_up(np.array(u) / np.linalg.norm(u), np.eye(3), up_cov=cov)

    def fused(ratio):
        return fuse_up(
            source([0.0523, 0, 0.9986], 1.0),
            source([0, 0.0523, 0.9986], ratio),
            source([0, 0, 1.0], 1.0),
        )

    ref = fused(1e10)
    assert ref.outlier == 1 and ref.outlier_nsigma == pytest.approx(6.396, abs=1e-3)
    for ratio in (1e12, 1e16, 1e20):
        f = fused(ratio)
        assert f.chi2 == pytest.approx(ref.chi2, rel=1e-9)
        assert not f.consistent and f.outlier == 1
        assert np.allclose(f.nsigma, ref.nsigma, rtol=1e-7)
        assert np.allclose(f.source_p_value, ref.source_p_value, rtol=1e-5)


@pytest.mark.parametrize("ratio", [1.0, 1e4, 1e10, 1e12, 1e16])
def test_leave_one_out_is_exact_at_any_precision_ratio(ratio):
    # Source 0 is `ratio` times more precise than the others; source 3 (rank 1, blind along the
    # second tangent direction) agrees, source 2 is 8 standard deviations off. Small angles
    # (1e-5 rad): the fusions of the subsets are linear to 1e-10, so chi2 minus the chi2 of the
    # others is the exact leave-one-out statistic.
    s = 1e-6  # rad
    base = np.array([[1.0, 0.3], [0.3, 2.0]]) / s**2
    sources = [
        _offset_source(1e-6, -2e-6, base * ratio),
        _offset_source(2e-6, 1e-6, np.diag([1.0, 3.0]) / s**2),
        _offset_source(9e-6, -8e-6, np.diag([2.0, 1.0]) / s**2),
        _offset_source(-1e-6, 7e-6, np.diag([1.5, 0.0]) / s**2),
    ]
    fused = fuse_up(*sources)
    exact = _exact_leave_one_out(sources)
    assert fused.outlier == 2 and not fused.consistent
    assert np.allclose(fused.nsigma**2, exact, rtol=1e-8, atol=1e-12 * fused.chi2)
    assert fused.dof == 5 and fused.source_p_value[3] > fused.source_p_value[2]


@pytest.mark.parametrize("ratio", [1.0, 1e6, 1e12, 1e16])
def test_leave_one_out_with_cross_cov_at_any_precision_ratio(ratio):
    # The precise source correlated (0.3) with another: the joint covariance is judged on its
    # correlations (at 1e12 it was refused as "a correlation beyond 1") and every source's
    # statistic is the exact drop of chi2.
    s = 1e-6
    c0, c1 = np.diag([1.0, 2.0]) * s**2 / ratio, np.diag([2.0, 1.0]) * s**2
    sources = [
        _offset_source(1e-6, -1e-6, np.linalg.inv(c0)),
        _offset_source(2e-6, 2e-6, np.linalg.inv(c1)),
        _offset_source(-1e-6, 1e-6, np.diag([1.0, 2.0]) / s**2),
        _offset_source(9e-6, 1e-6, np.diag([3.0, 1.0]) / s**2),
    ]
    b0, b1 = _basis(sources[0].up), _basis(sources[1].up)
    cross = {(0, 1): b0.T @ (0.3 * np.sqrt(np.diag(c0) * np.diag(c1)) * np.eye(2)) @ b1}
    fused = fuse_up(*sources, cross_cov=cross)
    exact = _exact_leave_one_out(sources, cross)
    assert np.allclose(fused.nsigma**2, exact, rtol=1e-8, atol=1e-12 * fused.chi2)
    assert fused.outlier == 3


def test_asymmetric_information_is_refused():
    a, b = _hand([0.0, 0.0, 1.0]), _hand([0.0, 0.001, 1.0] / np.linalg.norm([0, 0.001, 1]))
    info = b.up_information.copy()
    info[0, 1] += 1e-3 * np.abs(info).max()
    lopsided = GravityDirection(up=b.up, up_information=info, frame="")
    with pytest.raises(ValueError, match=r"`estimates\[1\]\.up_information` to be symmetric"):
        fuse_up(a, lopsided)
    # Rounding (1e-12 of the largest entry) is not asymmetry.
    info = b.up_information.copy()
    info[0, 1] += 1e-12 * np.abs(info).max()
    assert fuse_up(a, GravityDirection(up=b.up, up_information=info, frame="")).consistent
