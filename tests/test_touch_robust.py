"""The high-breakdown touch fits: several bad contacts among twelve, seeded Monte Carlo.

A bad contact is a flange position moved along the true plane normal by 0.1-2 mm (10-200 times
the 10 µm contact noise): all on the upper side ("same") or alternating sides ("mixed"). A draw
*names* its bad contacts when every one of them is rejected. The reference is the fit of the
same draw given only its good contacts. Figures are in docs/touch.md ("Outliers").
"""

from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy.stats import binom, chi2

from gravdir.errors import ConvergenceWarning, GravdirWarning, InsufficientDataError
from gravdir.synthetic import touch_contacts
from gravdir.touch import (
    _robust as robust_module,
)
from gravdir.touch import (
    contact_points,
    tool_tip_and_up_from_touches,
    up_from_touch_points,
)
from gravdir.touch._common import ROBUST_CONTACTS_CAP
from gravdir.touch._robust import TOP_SUBSETS, sample_size, subsets

SIGMA = 1e-5  # 10 µm
N = 12
D_PLANE = 150
D_TOOL = 120


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle between unit vectors (..., 3), radians, by atan2 of cross and dot."""
    cross = np.linalg.norm(np.cross(a, b), axis=-1)
    return np.arctan2(cross, np.einsum("...i,...i->...", a, b))


def _draws(seed: int, n_draws: int, n_bad: int, mode: str):
    """Touch sets with `n_bad` contacts moved along the true normal, and the bad mask."""
    rng = np.random.default_rng(seed)
    data = touch_contacts(rng, N, size=(n_draws,), noise_std=SIGMA)
    bad = np.argsort(rng.random((n_draws, N)), axis=1)[:, :n_bad]
    size = rng.uniform(1e-4, 2e-3, (n_draws, n_bad))
    if mode == "mixed":
        size = size * np.where(np.arange(n_bad) % 2 == 0, 1.0, -1.0)
    poses = data.flange_poses.copy()
    rows = np.arange(n_draws)
    for j in range(n_bad):
        poses[rows, bad[:, j], :3, 3] += size[:, j, None] * data.up
    is_bad = np.zeros((n_draws, N), dtype=bool)
    np.put_along_axis(is_bad, bad, True, axis=1)
    return data, poses, is_bad


def _good_only(poses: np.ndarray, is_bad: np.ndarray) -> np.ndarray:
    """The good contacts' poses, shape (D, N - n_bad, 4, 4) (every draw has n_bad bad)."""
    n_draws = len(poses)
    return poses[~is_bad].reshape(n_draws, -1, 4, 4)


def _named(outliers: np.ndarray, is_bad: np.ndarray) -> np.ndarray:
    """Per draw: every bad contact rejected."""
    return np.all(outliers | ~is_bad, axis=1)


@pytest.mark.slow
@pytest.mark.parametrize("n_bad", [2, 3, 4])
@pytest.mark.parametrize("mode", ["same", "mixed"])
def test_plane_fit_names_up_to_four_bad_contacts_among_twelve(n_bad: int, mode: str) -> None:
    data, poses, is_bad = _draws(100 + 10 * n_bad + (mode == "mixed"), D_PLANE, n_bad, mode)
    pts = contact_points(poses, data.tool_tip)
    good = pts[~is_bad].reshape(D_PLANE, N - n_bad, 3)
    ref = np.median(_angle(up_from_touch_points(good).up, data.up))
    plain = np.median(_angle(up_from_touch_points(pts).up, data.up))
    for kwargs in ({"noise_std": SIGMA}, {}):
        fit = up_from_touch_points(pts, robust=True, **kwargs)
        err = np.median(_angle(fit.up, data.up))
        assert err <= 1.1 * ref, (kwargs, err / ref)
        assert np.mean(_named(fit.outliers, is_bad)) >= 0.95, kwargs
        assert plain > 3.0 * ref  # the bad contacts matter: the plain fit is far off
        assert np.all(fit.converged)


@pytest.mark.slow
@pytest.mark.parametrize("n_bad", [2, 3])
def test_joint_fit_names_up_to_three_bad_contacts_among_twelve(n_bad: int) -> None:
    # Per mode, D_TOOL draws; the median ratio over both modes' draws together (the benchmark
    # gives it per mode over 1000 draws, docs/touch.md).
    errors: dict[str, list[np.ndarray]] = {"ref": [], "known": [], "free": []}
    for mode in ("same", "mixed"):
        data, poses, is_bad = _draws(200 + 10 * n_bad + (mode == "mixed"), D_TOOL, n_bad, mode)
        good = _good_only(poses, is_bad)
        ref = tool_tip_and_up_from_touches(good, noise_std=SIGMA)
        fit = tool_tip_and_up_from_touches(poses, robust=True, noise_std=SIGMA)
        assert np.mean(_named(fit.outliers, is_bad)) >= 0.95, mode
        # Without `noise_std` the scale has N - 6 - n_bad degrees of freedom: 3 with three bad
        # contacts, where a 0.1 mm contact (10 sigma) is beyond the reach of the 1 % test in
        # about one draw in six (docs/touch.md: 82-85 % named, 96-98 % when every bad contact
        # is at least 0.3 mm, 300 draws). Two bad contacts: named as above.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            free = tool_tip_and_up_from_touches(poses, robust=True)
        named = _named(free.outliers, is_bad)
        if n_bad == 2:
            assert np.mean(named) >= 0.95, mode
        else:
            size = np.abs(poses[..., :3, 3] - data.flange_poses[..., :3, 3]).max(axis=-1)
            large = np.all((size >= 3e-4) | ~is_bad, axis=1)
            assert np.mean(named[large]) >= 0.92, mode
            assert np.mean(named) >= 0.75, mode
        for key, result in (("ref", ref), ("known", fit), ("free", free)):
            errors[key].append(_angle(result.up, data.up))
    ref_median = np.median(np.concatenate(errors["ref"]))
    assert np.median(np.concatenate(errors["known"])) <= 1.1 * ref_median
    if n_bad == 2:
        assert np.median(np.concatenate(errors["free"])) <= 1.1 * ref_median


@pytest.mark.slow
def test_plane_false_rejections_on_clean_data_match_the_documented_level() -> None:
    # Per contact at `significance` = 0.01: 0.01 with `noise_std`; 0.027 without (the scale
    # estimated from the same twelve contacts; docs/touch.md).
    data, poses, is_bad = _draws(300, 500, 0, "same")
    pts = contact_points(poses, data.tool_tip)
    n = pts.shape[0] * N
    for kwargs, level in (({"noise_std": SIGMA}, 0.01), ({}, 0.027)):
        lo, hi = binom.interval(0.99, n, level)
        fit = up_from_touch_points(pts, robust=True, **kwargs)
        count = int(np.sum(fit.outliers))
        assert lo <= count <= hi, (kwargs, count, lo, hi)
        # A rejected contact is one whose studentised residual exceeds its threshold, but in a
        # cycle of borderline contacts (the smaller set is kept): about one set in ten without
        # `noise_std` (docs/touch.md).
        beyond = fit.rejection_nsigma > fit.rejection_threshold
        assert np.mean(np.all(fit.outliers == beyond, axis=1)) >= (0.97 if kwargs else 0.85)
        # Nothing rejected: the fit is the plain total-least-squares fit.
        plain = up_from_touch_points(pts, **kwargs)
        clean = ~np.any(fit.outliers, axis=1)
        np.testing.assert_allclose(fit.up[clean], plain.up[clean], rtol=0, atol=1e-13)


@pytest.mark.slow
def test_joint_false_rejections_on_clean_data_match_the_documented_level() -> None:
    # Per contact: 0.01 with `noise_std`; 0.0425 without (the scale from 12 - 6 residual
    # degrees of freedom after trimming, docs/touch.md).
    data, poses, _ = _draws(301, 100, 0, "same")
    n = poses.shape[0] * N
    for kwargs, level in (({"noise_std": SIGMA}, 0.01), ({}, 0.0425)):
        fit = tool_tip_and_up_from_touches(poses, robust=True, **kwargs)
        lo, hi = binom.interval(0.99, n, level)
        count = int(np.sum(fit.outliers))
        assert lo <= count <= hi, (kwargs, count, lo, hi)
        beyond = fit.rejection_nsigma > fit.rejection_threshold
        # Cycles of borderline contacts: about one set in six without `noise_std`.
        assert np.mean(np.all(fit.outliers == beyond, axis=1)) >= (0.97 if kwargs else 0.75)


def test_two_bad_contacts_of_two_millimetres_on_one_side_are_both_rejected() -> None:
    # Seen to fail: the deletion test rejected 0.01 points on average and gave a median error
    # of 0.104 deg, the same as no rejection, with or without `noise_std`.
    data, poses, is_bad = _draws(400, 200, 2, "same")
    rows = np.arange(200)
    moved = data.flange_poses.copy()
    bad = np.argwhere(is_bad)[:, 1].reshape(200, 2)
    for j in range(2):
        moved[rows, bad[:, j], :3, 3] += 2e-3 * data.up
    pts = contact_points(moved, data.tool_tip)
    good = pts[~is_bad].reshape(200, N - 2, 3)
    ref = np.median(np.degrees(_angle(up_from_touch_points(good).up, data.up)))
    old = up_from_touch_points(pts, robust="deletion")
    assert np.median(np.degrees(_angle(old.up, data.up))) > 0.05  # the old failure
    for kwargs in ({"noise_std": SIGMA}, {}):
        fit = up_from_touch_points(pts, robust=True, **kwargs)
        assert np.all(_named(fit.outliers, is_bad))
        assert np.median(np.degrees(_angle(fit.up, data.up))) <= 1.1 * ref
        assert np.all(fit.rejection_nsigma[is_bad] > 20.0)


def test_rejection_report_and_fingerprints() -> None:
    rng = np.random.default_rng(500)
    data = touch_contacts(rng, N, noise_std=SIGMA)
    pts = contact_points(data.flange_poses, data.tool_tip)
    pts[[3, 8]] += 1e-3 * data.up
    fit = up_from_touch_points(pts, robust=True, noise_std=SIGMA)
    assert fit.rejected.tolist() == [3, 8]
    assert np.all(fit.rejection_nsigma[[3, 8]] > 50)
    assert np.all(fit.rejection_threshold == fit.rejection_threshold[0])
    again = up_from_touch_points(pts.copy(), robust=True, noise_std=SIGMA)
    assert fit.fingerprint == again.fingerprint and len(fit.fingerprint) == 1
    pts[0, 0] += 1e-9
    assert not fit.fingerprint & up_from_touch_points(pts).fingerprint
    batch = up_from_touch_points(np.stack([pts, pts]), robust=True, noise_std=SIGMA)
    assert batch.rejected.shape[1] == 2
    poses = data.flange_poses.copy()
    poses[[1, 6], :3, 3] -= 1e-3 * data.up
    tool = tool_tip_and_up_from_touches(poses, robust=True, noise_std=SIGMA)
    assert tool.rejected.tolist() == [1, 6]
    assert tool.fingerprint and not tool.fingerprint & fit.fingerprint
    plain = tool_tip_and_up_from_touches(poses, noise_std=SIGMA)
    assert not np.any(plain.outliers)
    assert np.all(plain.rejection_nsigma[[1, 6]] > plain.rejection_threshold[[1, 6]])
    with pytest.raises(InsufficientDataError, match="at least 8 contacts for the robust"):
        tool_tip_and_up_from_touches(poses[:7], robust=True)
    with pytest.raises(ValueError, match="`robust` to be True or False"):
        up_from_touch_points(pts, robust="huber")  # type: ignore[arg-type]


def test_robust_fits_are_deterministic_and_batch_equals_loop() -> None:
    data, poses, _ = _draws(600, 3, 3, "mixed")
    pts = contact_points(poses, data.tool_tip)
    batch = up_from_touch_points(pts, robust=True)
    for i in range(3):
        one = up_from_touch_points(pts[i], robust=True)
        np.testing.assert_array_equal(one.inliers, batch.inliers[i])
        np.testing.assert_allclose(one.up, batch.up[i], rtol=0, atol=1e-14)
    tool = tool_tip_and_up_from_touches(poses, robust=True, noise_std=SIGMA)
    again = tool_tip_and_up_from_touches(poses, robust=True, noise_std=SIGMA)
    np.testing.assert_array_equal(tool.up, again.up)
    np.testing.assert_array_equal(tool.inliers, again.inliers)


# ------------------------------------------------- bounded work, misfits, `significance` floor


def _stepped(n: int, n_high: int, step: float, seed: int, noise: float = 1e-4):
    """`n` contacts over 0.6 m on a tilted plane, the first `n_high` of them `step` higher."""
    rng = np.random.default_rng(seed)
    up = np.array([0.05, -0.02, 1.0]) / np.linalg.norm([0.05, -0.02, 1.0])
    xy = rng.uniform(-0.3, 0.3, (n, 2))
    pts = np.c_[xy, 1 - xy @ up[:2] / up[2]] + noise * rng.standard_normal((n, 3))
    pts[:n_high] += step * up
    return pts, up


def test_stepped_surface_beyond_the_breakdown_warns_and_inflates_the_uncertainty() -> None:
    # Seen to fail: five of twelve contacts on a plane 5 mm higher (one more than the fit
    # survives) gave `up` 0.71 deg off with up_std_deg 0.016 (44 sigma) and no warning;
    # "deletion" kept all twelve, 0.41 deg off with 0.013.
    pts, up = _stepped(12, 5, 5e-3, 0)
    for robust in (True, "deletion", False):
        with pytest.warns(GravdirWarning, match="not consistent with `noise_std`") as record:
            fit = up_from_touch_points(pts, noise_std=1e-4, robust=robust)
        message = str(record[0].message)
        assert "not to be trusted" in message
        # The chi-square test of the inliers' residuals against `noise_std`, and its inflation.
        r = fit.residuals[fit.inliers]
        dof = r.size - 3
        assert np.sum(r**2) / 1e-8 > chi2.isf(0.01, dof)
        np.testing.assert_allclose(fit.noise_std, np.sqrt(np.sum(r**2) / dof), rtol=1e-12)
        assert fit.noise_std > 10 * 1e-4
        plain = up_from_touch_points(pts[fit.inliers], noise_std=float(fit.noise_std))
        np.testing.assert_allclose(fit.up_std_deg, plain.up_std_deg, rtol=1e-9)
        # Honest: the truth within 3 reported sigma, or the warning says the fit is not to be
        # trusted (asserted above). The robust fit's compromise plane stays 3.2 sigma off; the
        # plain and the deletion fit, which keep every contact, are honest as well as warned.
        if robust is not True:
            assert np.degrees(_angle(fit.up, up)) <= 3 * fit.up_std_deg


def test_joint_fit_beyond_its_breakdown_warns_and_inflates_the_uncertainty() -> None:
    rng = np.random.default_rng(5)
    data = touch_contacts(rng, N, noise_std=SIGMA)
    poses = data.flange_poses.copy()
    poses[:5, :3, 3] += 5e-3 * data.up  # five of twelve: two more than the fit survives
    with pytest.warns(GravdirWarning, match="not consistent with `noise_std`.*not to be trusted"):
        fit = tool_tip_and_up_from_touches(poses, robust=True, noise_std=SIGMA)
    r = fit.residuals[fit.inliers]
    np.testing.assert_allclose(fit.noise_std, np.sqrt(np.sum(r**2) / (r.size - 6)), rtol=1e-9)
    assert fit.noise_std > 10 * SIGMA


@pytest.mark.slow
def test_noise_test_false_alarms_at_the_stated_rate_and_inflation_is_honest() -> None:
    # Good contacts with the right `noise_std`: the plain fit's chi-square test warns in a
    # fraction `significance` of the sets; the robust fit's inliers (kept within the test's
    # threshold) warn less often.
    data, poses, _ = _draws(700, 2000, 0, "same")
    pts = contact_points(poses, data.tool_tip)
    lo, hi = binom.interval(0.99, 2000, 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GravdirWarning)
        plain = up_from_touch_points(pts, noise_std=SIGMA)
        robust = up_from_touch_points(pts, noise_std=SIGMA, robust=True)
    assert lo <= np.count_nonzero(plain.noise_std > SIGMA) <= hi
    assert np.count_nonzero(robust.noise_std > SIGMA) <= hi
    # A `noise_std` three times too small: nearly every set warns (9 sigma^2 chi-square(9) is
    # below its 1 % quantile with probability 1.7 %), and the inflated uncertainty is the right
    # one (the mean squared error over the mean reported variance near 1).
    noisy = touch_contacts(np.random.default_rng(701), N, size=(400,), noise_std=3 * SIGMA)
    pts = contact_points(noisy.flange_poses, noisy.tool_tip)
    with pytest.warns(GravdirWarning, match="not consistent with `noise_std` in 3.. of 400"):
        fit = up_from_touch_points(pts, noise_std=SIGMA)
    assert np.mean(fit.noise_std > SIGMA) >= 0.95
    ratio = np.mean(_angle(fit.up, noisy.up) ** 2) / np.mean(np.radians(fit.up_std_deg) ** 2)
    assert 0.8 <= ratio <= 1.25, ratio


def test_robust_fits_refuse_more_contacts_than_the_cap_by_name() -> None:
    pts, _ = _stepped(ROBUST_CONTACTS_CAP + 1, 0, 0.0, 1)
    for robust in (True, "deletion"):
        with pytest.raises(ValueError, match=r"`points` to hold at most 10000 points"):
            up_from_touch_points(pts, robust=robust)
    plain = up_from_touch_points(pts, noise_std=1e-4)  # the plain fit has no cap
    assert plain.inliers.shape == (ROBUST_CONTACTS_CAP + 1,)
    data = touch_contacts(np.random.default_rng(2), ROBUST_CONTACTS_CAP + 1, noise_std=SIGMA)
    with pytest.raises(ValueError, match=r"`flange_poses` to hold at most 10000 contacts"):
        tool_tip_and_up_from_touches(data.flange_poses, robust=True)


def test_robust_plane_fit_at_the_cap_examines_a_fixed_number_of_subsets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Seen to fail: 24 s at N = 1000 and 201 s at N = 5000 (every one of 3000 candidate planes
    # concentrated over all points); "deletion" asked for 7.3 TiB at N = 1e6 (an N x N x 3
    # scatter per test). Now a fixed sample of subsets and O(N) memory, whatever N.
    assert len(subsets(ROBUST_CONTACTS_CAP, 3)) == sample_size(3) == 345
    assert len(subsets(ROBUST_CONTACTS_CAP, 6)) == sample_size(6) == 2925
    assert (7 / 8) ** 345 < 1e-20 and (63 / 64) ** 2925 < 1e-20
    pts, up = _stepped(ROBUST_CONTACTS_CAP, 2000, 1e-3, 2, noise=1e-5)
    examined = []
    planes = robust_module._subset_planes

    def counting(q, sub, extent):
        examined.append(sub.shape[0] * sub.shape[1])
        return planes(q, sub, extent)

    monkeypatch.setattr(robust_module, "_subset_planes", counting)
    tracemalloc.start()
    try:
        fit = up_from_touch_points(pts, robust=True, noise_std=1e-5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The sample's exact fits, then the TOP_SUBSETS best concentrated.
    assert sum(examined) == sample_size(3) + TOP_SUBSETS
    # No N x N array (800 MB here): the temporaries stay near CHUNK_ROWS residuals.
    assert peak < 100 * 2**20, peak
    assert np.all(fit.outliers[:2000]) and np.mean(fit.outliers[2000:]) < 0.02
    assert np.degrees(_angle(fit.up, up)) < 0.01
    # The deletion: one O(N) pass per test, at most 50 tests by default.
    heights = _stepped(ROBUST_CONTACTS_CAP, 0, 0.0, 3, noise=1e-5)[0]
    heights[:100] += np.geomspace(0.1, 1e-3, 100)[:, None] * up
    tracemalloc.start()
    try:
        with pytest.warns(ConvergenceWarning, match="`max_iter`=50"):
            deletion = up_from_touch_points(heights, robust="deletion")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert int(deletion.n_iter) == 50 and not bool(deletion.converged)
    assert np.all(deletion.outliers[:50]) and np.count_nonzero(deletion.outliers) == 50
    assert peak < 100 * 2**20, peak


def test_the_fixed_sample_of_subsets_is_distinct_unbiased_and_repeatable() -> None:
    for n, size in ((28, 3), (500, 3), (14, 6), (ROBUST_CONTACTS_CAP, 6)):
        idx = subsets(n, size)
        assert idx.shape == (sample_size(size), size)
        assert np.all(np.diff(idx, axis=1) > 0)  # distinct contacts, sorted
        assert len(np.unique(idx, axis=0)) == len(idx)  # distinct subsets
        np.testing.assert_array_equal(idx, subsets(n, size))
        # Every contact equally likely: the mean index is (n - 1) / 2 within 4 standard errors.
        std = np.sqrt((n**2 - 1) / 12 / idx.size)
        assert abs(np.mean(idx) - (n - 1) / 2) < 4 * std, (n, size)
    # All subsets up to SUBSET_CAP of them.
    assert len(subsets(27, 3)) == math.comb(27, 3) and len(subsets(13, 6)) == math.comb(13, 6)
    # A sampled fit is deterministic: the same input gives the same output.
    pts, _ = _stepped(60, 20, 1e-3, 4, noise=1e-5)
    one = up_from_touch_points(pts, robust=True)
    two = up_from_touch_points(pts.copy(), robust=True)
    np.testing.assert_array_equal(one.up, two.up)
    np.testing.assert_array_equal(one.inliers, two.inliers)
    assert np.all(one.outliers[:20]) and np.count_nonzero(one.outliers[20:]) <= 2


def test_false_alarm_whose_threshold_overflows_is_refused() -> None:
    # Seen to fail: `significance`=5e-324 made `rejection_threshold` infinite (and SciPy's
    # Student quantile is -inf below about 1e-236 with three degrees of freedom).
    pts, _ = _stepped(12, 0, 0.0, 6, noise=1e-5)
    data = touch_contacts(np.random.default_rng(6), N, noise_std=SIGMA)
    for tiny in (5e-324, 1e-300, 9e-201):
        with pytest.raises(ValueError, match=r"`significance` of at least 1e-200"):
            up_from_touch_points(pts, robust=True, significance=tiny)
        with pytest.raises(ValueError, match=r"`significance` of at least 1e-200"):
            tool_tip_and_up_from_touches(data.flange_poses, significance=tiny)
    fits = [
        up_from_touch_points(pts, significance=1e-200),
        up_from_touch_points(pts, robust=True, significance=1e-200),
        up_from_touch_points(pts, robust=True, noise_std=1e-5, significance=1e-200),
        up_from_touch_points(pts, robust="deletion", significance=1e-200),
        tool_tip_and_up_from_touches(data.flange_poses, robust=True, significance=1e-200),
        # The deletion's Bonferroni level significance / (2 N) at the cap.
        up_from_touch_points(
            _stepped(ROBUST_CONTACTS_CAP, 0, 0.0, 7, noise=1e-5)[0],
            robust="deletion",
            significance=1e-200,
        ),
    ]
    for fit in fits:
        assert np.all(np.isfinite(fit.rejection_threshold)), fit.rejection_threshold
