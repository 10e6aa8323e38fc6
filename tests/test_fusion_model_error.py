"""Tests of the model-error component of :func:`gravdir.fuse_up` (``model_error_std``).

The sources are drawn here around a true `up` (tests/test_fusion.py's independent sphere
geometry) with their own covariance and, on top, an isotropic model error of known standard
deviation per source. What is asserted:

* a given model error equals sources whose covariances were enlarged by hand;
* the estimated (Paule--Mandel) one makes the statistic equal its degrees of freedom, is 0 for
  sources that agree, and names a source biased far beyond the others' spread;
* when the model error dominates the sources' own covariances, the leave-one-out p-values on the
  F reference are uniform (the rule is exact there), where the chi-square reference of a known
  covariance fires two to three times too often; in a world where both are alike, the global
  test's false-alarm rate at 5% is at most 5% (Bonferroni) and not below 1%;
* when a source's own covariance dominates and is itself estimated (a Wishart draw of few
  degrees of freedom, as a short log's HAC covariance), its leave-one-out p-values hold their
  level on the Hotelling reference, where the F reference of the others' degrees of freedom
  fires about three times too often; Hotelling's tail is the closed form of two dimensions;
* the degrees of freedom of a fusion of estimated covariances do not depend on how far apart
  the sources lie (first order, in one tangent plane).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.stats import binom, chi2, f
from test_fusion import _basis, _exp, _random_cov, _random_up, _rodrigues

from gravdir import compare_setting, fuse_up
from gravdir._tails import hotelling_sf
from gravdir.controllers import GravityDirection
from gravdir.errors import InsufficientDataError


@dataclass(frozen=True, eq=False, repr=False)
class _Estimated(GravityDirection):
    """A gravity direction whose covariance is an estimate of `covariance_dof` degrees of
    freedom (as a HAC covariance carries them)."""

    covariance_dof: float = math.inf


def _draw(rng, up, cov2, model_std, bias2=(0.0, 0.0)):
    """A source drawn with tangent covariance ``cov2 + model_std² I`` around `up` (plus a
    bias) whose reported information is that of `cov2` alone."""
    b = _basis(up)
    total = cov2 + model_std**2 * np.eye(2)
    x = rng.multivariate_normal(np.asarray(bias2), total)
    u = _exp(up, x @ b)
    r = _rodrigues(up, u)
    info = r @ b.T @ np.linalg.inv(cov2) @ b @ r.T
    return GravityDirection(up=u, up_information=0.5 * (info + info.T), frame=""), cov2


def _enlarged(source, cov2, up, variance):
    """The same direction with its covariance, in the tangent basis of the truth carried to
    it, enlarged by `variance` on both axes."""
    b = _basis(up)
    r = _rodrigues(up, source.up)
    info = r @ b.T @ np.linalg.inv(cov2 + variance * np.eye(2)) @ b @ r.T
    return GravityDirection(up=source.up, up_information=0.5 * (info + info.T), frame="")


def _world(seed, n=5, model_deg=0.05, lo_deg=0.01, hi_deg=0.03):
    rng = np.random.default_rng(seed)
    up = _random_up(rng)
    drawn = [_draw(rng, up, _random_cov(rng, lo_deg, hi_deg), np.radians(model_deg))
             for _ in range(n)]  # fmt: skip
    return up, [s for s, _ in drawn], [c for _, c in drawn]


def test_a_given_model_error_enlarges_every_covariance():
    up, sources, covs = _world(0)
    tau = np.radians(0.04)
    fused = fuse_up(*sources, model_error_std=tau)
    by_hand = fuse_up(*[_enlarged(s, c, up, tau**2) for s, c in zip(sources, covs, strict=True)])
    assert fused.model_error_std == pytest.approx(tau)
    assert np.allclose(fused.up, by_hand.up, atol=1e-12)
    assert np.allclose(fused.up_information, by_hand.up_information, rtol=1e-6)
    assert fused.chi2 == pytest.approx(by_hand.chi2, rel=1e-6)
    assert np.allclose(fused.nsigma, by_hand.nsigma, rtol=1e-6)
    # Without it, the same sources look less certain of nothing: the fusion is tighter.
    assert fuse_up(*sources).up_std_deg < fused.up_std_deg


def test_the_estimated_model_error_makes_the_statistic_equal_its_dof():
    up, sources, _ = _world(1, n=6)
    plain = fuse_up(*sources)
    assert plain.chi2 > plain.dof  # the model error shows
    fused = fuse_up(*sources, model_error_std="estimate")
    assert fused.chi2 == pytest.approx(fused.dof, rel=1e-5)
    assert 0.0 < fused.model_error_std < np.radians(0.5)
    again = fuse_up(*sources, model_error_std=fused.model_error_std)
    assert np.allclose(again.up, fused.up, atol=1e-12)
    # The p-value is the leave-one-out tests', Bonferroni-combined.
    assert fused.p_value == pytest.approx(min(1.0, 6 * fused.source_p_value.min()))


def test_sources_that_agree_estimate_no_model_error():
    """Sources drawn without model error whose statistic stays below its dof: the estimate is
    0, and the fusion is the plain one."""
    for seed in range(40):
        up, sources, _ = _world(seed, model_deg=0.0)
        plain = fuse_up(*sources)
        if plain.chi2 <= plain.dof:
            break
    fused = fuse_up(*sources, model_error_std="estimate")
    assert fused.model_error_std == 0.0
    assert np.allclose(fused.up, plain.up, atol=1e-14)
    assert fused.chi2 == pytest.approx(plain.chi2)


def test_a_source_far_beyond_the_others_spread_is_named():
    rng = np.random.default_rng(7)
    up = _random_up(rng)
    model = np.radians(0.05)
    sources = [_draw(rng, up, _random_cov(rng), model)[0] for _ in range(5)]
    sources.append(_draw(rng, up, _random_cov(rng), model, bias2=(np.radians(1.0), 0.0))[0])
    fused = fuse_up(*sources, model_error_std="estimate")
    assert not fused.consistent
    assert fused.outlier == 5
    assert fused.without_outlier is not None and fused.without_outlier.consistent
    # The others' spread alone calibrates its test: it stands far out.
    assert fused.nsigma[5] > 5.0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"model_error_std": "auto"}, ValueError, "model_error_std"),
        ({"model_error_std": -0.1}, ValueError, "model_error_std"),
        ({"model_error_std": 2.0}, ValueError, "model_error_std"),
        ({"model_error_std": True}, ValueError, "model_error_std"),
        ({"model_error_std": [0.1]}, ValueError, "model_error_std"),
    ],
)
def test_bad_model_errors_are_refused(kwargs, error, match):
    _, sources, _ = _world(2, n=3)
    with pytest.raises(error, match=match):
        fuse_up(*sources, **kwargs)


def test_too_few_sources_or_correlated_ones_are_refused():
    _, sources, _ = _world(3, n=3)
    with pytest.raises(InsufficientDataError, match="at least 3"):
        fuse_up(*sources[:2], model_error_std="estimate")
    with pytest.raises(ValueError, match="cross_cov"):
        fuse_up(*sources, cross_cov={(0, 1): np.zeros((3, 3))}, model_error_std=0.01)


@pytest.mark.slow
def test_leave_one_out_is_exact_on_f_where_the_model_error_dominates():
    """Sources of 1e-4° covariance under a 0.1° model error, five per draw, 300 draws: the
    others' spread estimates the model error with ν = 6 degrees of freedom, independently of
    the source judged, so ``nsigma² / 2`` follows F(2, 6) exactly; the known-covariance
    reference (chi-square with 2 dof) fires at 5% in about 12.5% of them (12.1% measured, the F
    reference 4.9%)."""
    p_values, statistics = [], []
    for seed in range(300):
        _, sources, _ = _world(1000 + seed, model_deg=0.1, lo_deg=1e-4, hi_deg=2e-4)
        fused = fuse_up(*sources, model_error_std="estimate")
        p_values.extend(fused.source_p_value)
        statistics.extend(fused.nsigma**2)
    p = np.asarray(p_values)
    for level in (0.05, 0.2, 0.5):
        lo, hi = binom.interval(0.999, p.size, level)
        assert lo <= np.count_nonzero(p < level) <= hi, level
    naive = chi2.sf(np.asarray(statistics), 2)
    assert np.count_nonzero(naive < 0.05) > 2 * 0.05 * p.size


@pytest.mark.slow
def test_the_global_false_alarm_rate_holds_where_both_errors_are_alike():
    """Own covariances 0.01-0.03° and a 0.03° model error, five sources, 400 draws: the
    Bonferroni combination of the leave-one-out tests fires at 5% in at most 5% of draws
    (binomial 99.9% bound) and in at least 1% of them (not blind; 3% measured)."""
    rejected = 0
    n_draws = 400
    for seed in range(n_draws):
        _, sources, _ = _world(5000 + seed, model_deg=0.03)
        rejected += fuse_up(*sources, model_error_std="estimate", significance=0.05).p_value < 0.05
    assert 0.01 * n_draws <= rejected <= binom.interval(0.999, n_draws, 0.05)[1]


def test_compare_setting_judges_an_estimated_covariance_on_f():
    """The fusion with its model error estimated carries the degrees of freedom of that
    estimate, and `compare_setting` refers its distance to F(2, ν): for two numerator degrees
    of freedom the survival is ``(1 + m² / ν)^(-ν / 2)``, written out here."""
    up, sources, _ = _world(11, n=5)
    fused = fuse_up(*sources, model_error_std="estimate")
    assert fused.model_error_std > 0 and fused.covariance_dof == fused.dof == 8
    check = compare_setting(fused, up)
    m2 = float(check.mahalanobis) ** 2
    assert check.covariance_dof == 8
    assert check.p_value == pytest.approx((1.0 + m2 / 8) ** -4, rel=1e-9)
    assert check.p_value > np.exp(-0.5 * m2)  # heavier tail than the chi-square
    # A known covariance (none estimated, or a given model error) keeps the chi-square.
    given = compare_setting(fuse_up(*sources, model_error_std=fused.model_error_std), up)
    assert given.covariance_dof == np.inf
    assert given.p_value == pytest.approx(np.exp(-0.5 * float(given.mahalanobis) ** 2))


@pytest.mark.slow
def test_compare_setting_on_a_fusion_with_model_error_has_its_false_alarm_rate():
    """Five sources under a dominant model error (0.1°, own covariances 1e-4°), 300 draws, the
    truth as the installed `up`: the F reference puts 5% of p-values below 5% (binomial 99.9%
    interval); the chi-square reference, which trusts the estimated covariance as known, fires
    about twice as often (10.7% expected with ν = 8; 9.3% here)."""
    p_f, p_chi2 = [], []
    for seed in range(300):
        up, sources, _ = _world(9000 + seed, model_deg=0.1, lo_deg=1e-4, hi_deg=2e-4)
        check = compare_setting(fuse_up(*sources, model_error_std="estimate"), up)
        p_f.append(check.p_value)
        p_chi2.append(np.exp(-0.5 * float(check.mahalanobis) ** 2))
    lo, hi = binom.interval(0.999, 300, 0.05)
    assert lo <= np.count_nonzero(np.asarray(p_f) < 0.05) <= hi
    assert np.count_nonzero(np.asarray(p_chi2) < 0.05) > 1.5 * 0.05 * 300


def test_rank_one_sources_whose_others_leave_a_direction_open_are_not_judged():
    """One rank-2 source and three rank-1 sources along the same tangent direction: without the
    first, the others determine one direction only, so no model error can be calibrated to
    judge it (its p-value is 1, its distance 0) and no error is raised; the rank-1 sources are
    judged along the line they determine."""
    up = np.array([0.0, 0.0, 1.0])
    e1 = np.array([1.0, 0.0, 0.0])

    def line(tilt, precision):
        u = np.array([np.sin(tilt), 0.0, np.cos(tilt)])
        t = np.cross(np.cross(u, e1), u)
        return GravityDirection(up=u, up_information=precision * np.outer(t, t), frame="")

    full = GravityDirection(up=up, up_information=1e6 * (np.eye(3) - np.outer(up, up)), frame="")
    lines = (line(0.002, 1e6), line(-0.003, 1e6), line(0.001, 1e6))
    fused = fuse_up(full, *lines, model_error_std="estimate")
    assert fused.source_p_value[0] == 1.0 and fused.nsigma[0] == 0.0
    assert np.all(fused.source_p_value[1:] < 1.0)


def test_hotellings_tail_in_two_dimensions_is_its_closed_form():
    """For d = 2, ``t (ν - 1) / (2ν)`` on F(2, ν - 1) has the survival ``(1 + t/ν)^(-(ν-1)/2)``;
    for d = 1 it is Student's t (F(1, ν)); ν infinite gives the chi-square; ν ≤ d - 1 none."""
    for t in (0.5, 3.0, 20.0):
        for nu in (2.5, 4.0, 30.0):
            assert hotelling_sf(t, 2, nu) == pytest.approx((1 + t / nu) ** (-(nu - 1) / 2))
            assert hotelling_sf(t, 1, nu) == pytest.approx(f.sf(t, 1, nu))
        assert hotelling_sf(t, 2, math.inf) == pytest.approx(np.exp(-t / 2))
    assert hotelling_sf(5.0, 2, 1.0) == 1.0
    assert hotelling_sf(5.0, 2, 4.0) > f.sf(2.5, 2, 4.0)  # heavier than F(2, ν)


def _estimated(at, cov2, up, nu):
    """A direction `at` whose information is that of the tangent covariance `cov2`, in the
    basis of the truth `up` carried to it (`_enlarged`'s), estimated with `nu` degrees of
    freedom."""
    plain = _enlarged(
        GravityDirection(up=at, up_information=np.zeros((3, 3)), frame=""), cov2, up, 0.0
    )
    return _Estimated(plain.up, plain.up_information, "", covariance_dof=nu)


def _short_among_long(seed, nu=4.0, own_deg=2.0, model_deg=0.05):
    """Four sources of exact 0.01-0.03° covariances and one whose own covariance (isotropic
    `own_deg` per direction, rotated at random) dominates and is reported as a Wishart draw of
    `nu` degrees of freedom about it; every source carries a model error of `model_deg`."""
    rng = np.random.default_rng(seed)
    up = _random_up(rng)
    model = np.radians(model_deg)
    sources = [_draw(rng, up, _random_cov(rng), model)[0] for _ in range(4)]
    own = _random_cov(rng, own_deg, own_deg)
    drawn, _ = _draw(rng, up, own, model)
    root = np.linalg.cholesky(own)
    g = rng.normal(size=(int(nu), 2)) @ root.T
    reported = g.T @ g / nu
    return [_estimated(drawn.up, reported, up, nu), *sources]


@pytest.mark.slow
def test_a_source_whose_own_estimated_covariance_dominates_holds_its_level():
    """The short source of `_short_among_long` (own covariance 2°, estimated with 4 degrees of
    freedom), 400 draws: its leave-one-out p-values fall below 5% and 20% at their rates
    (binomial 99.9% intervals); the F reference of the others' 6 degrees of freedom alone, which
    takes its covariance as known, fires at 5% about three times too often (14.8% expected)."""
    p_values, statistics = [], []
    for seed in range(400):
        fused = fuse_up(*_short_among_long(20_000 + seed), model_error_std="estimate")
        p_values.append(fused.source_p_value[0])
        statistics.append(fused.nsigma[0] ** 2)
    p = np.asarray(p_values)
    for level in (0.05, 0.2):
        lo, hi = binom.interval(0.999, p.size, level)
        assert lo <= np.count_nonzero(p < level) <= hi, level
    others_only = f.sf(np.asarray(statistics) / 2, 2, 6)
    assert np.count_nonzero(others_only < 0.05) > 2 * 0.05 * p.size


def test_the_dof_of_a_fusion_does_not_depend_on_how_far_apart_its_sources_lie():
    """Two sources of estimated covariances (10 and 40 degrees of freedom), at one `up` and
    1° apart: the fusion's degrees of freedom agree to 1% (an information summed in 3-D at
    two tangent planes has a small eigenvalue along the normal, not a variance of `up`)."""
    rng = np.random.default_rng(3)
    up = _random_up(rng)
    covs = [_random_cov(rng, 0.1, 0.3), _random_cov(rng, 0.1, 0.3)]
    apart = _exp(up, np.radians(1.0) * _basis(up)[0])
    together = fuse_up(_estimated(up, covs[0], up, 10.0), _estimated(up, covs[1], up, 40.0))
    spread = fuse_up(_estimated(up, covs[0], up, 10.0), _estimated(apart, covs[1], up, 40.0))
    assert 10.0 < together.covariance_dof < 50.0
    assert spread.covariance_dof == pytest.approx(together.covariance_dof, rel=0.01)
