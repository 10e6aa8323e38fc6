"""SweepAccumulator(covariance="hac"): the Bartlett sandwich from a state of fixed size.

Checked against the double sums of its definition (``_one_sweep.sandwich_definition``, with
the white-noise rescaling the stream takes), against ``fit_sweep(covariance="hac")`` where the
residuals show no positive lag-1 correlation (its rescaling is then the white one), and by
Monte Carlo on sweeps whose residuals are correlated in time.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _one_sweep import RATE, ar1_noise, sandwich_definition, sweep, sweep_torque

import gravdir
from gravdir import SweepAccumulator, fit_sweep
from gravdir.errors import InsufficientDataError

OPTIONS = dict(min_speed=0.0, friction="coulomb-viscous")


def _streamed(q, v, tau, rng, **options) -> SweepAccumulator:
    """An accumulator fed `q`, `v`, `tau` (..., n) in chunks of random lengths."""
    acc = SweepAccumulator(**{**OPTIONS, "covariance": "hac", "sample_rate": RATE, **options})
    start = 0
    while start < q.shape[-1]:
        stop = start + int(rng.integers(1, 700))
        acc.add(q[..., start:stop], velocity=v[..., start:stop], torque=tau[..., start:stop])
        start = stop
    return acc


def _assert_close(cov: np.ndarray, want: np.ndarray, tol: float) -> None:
    """`cov` within `tol` of `want` entry by entry, in units of the product of the standard
    deviations of `want`."""
    std = np.sqrt(np.diagonal(want, axis1=-2, axis2=-1))
    scaled = (cov - want) / (std[..., :, None] * std[..., None, :])
    assert np.abs(scaled).max() <= tol, np.abs(scaled).max()


def _split(q, v, tau, cut, lags, rng, **options) -> tuple[SweepAccumulator, ...]:
    """Accumulators of the samples before `cut` and from it, and one of all of them with `lags`
    samples standing still (zero scores) between the two parts, so that no window of the
    kernel holds samples of both."""
    a = _streamed(q[:cut], v[:cut], tau[:cut], rng, **options)
    b = _streamed(q[cut:], v[cut:], tau[cut:], rng, **options)
    gap = np.zeros(lags)
    joined = _streamed(
        np.concatenate([q[:cut], np.full(lags, q[cut]), q[cut:]]),
        np.concatenate([v[:cut], gap, v[cut:]]),
        np.concatenate([tau[:cut], gap, tau[cut:]]),
        rng,
        **options,
    )
    return a, b, joined


def _ma_noise(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Noise of lag-1 correlation about -0.4: residuals whose correlation fit_sweep's rescaling
    takes as zero."""
    w = rng.normal(0, 0.05, shape[:-1] + (shape[-1] + 1,))
    return w[..., 1:] - 0.6 * w[..., :-1]


@pytest.mark.parametrize("lags", [0, 7, 99])
def test_the_streamed_sandwich_is_the_double_sum_of_its_definition(lags: int) -> None:
    """Residuals of lag-1 correlation 0.5, fed in chunks of random length: the sandwich with
    the white-noise rescaling written out as double sums, to 1e-10 of the product of the
    standard deviations (measured: 1.3e-12 to 2.2e-12). The torque enters the state measured
    from the coefficients so far, so the quadratic form of the meat does not cancel the torque
    against the model (without that, 5e-10 to 8e-9 here, the torque 60 times the residuals)."""
    rng = np.random.default_rng(40 + lags)
    q, v = sweep(600)
    tau = sweep_torque(q, v) + ar1_noise(rng, (1, q.size), 0.5)[0]
    fit = _streamed(q, v, tau, rng, bandwidth=(lags + 1) / RATE).fit()
    x = np.stack([np.ones_like(q), np.sin(q), np.cos(q), np.sign(v), v], axis=1)
    beta = np.linalg.lstsq(x, tau, rcond=None)[0]
    e = tau - x @ beta
    assert e[1:] @ e[:-1] > 0.3 * (e @ e)  # fit_sweep would rescale for it; the stream does not
    want = sandwich_definition(x, e, lags=lags, lag1=0.0)
    np.testing.assert_allclose(fit.coefficients, beta, rtol=1e-10, atol=1e-12)
    _assert_close(fit.covariance, want, 1e-10)


def test_without_positive_residual_correlation_it_is_fit_sweeps_hac() -> None:
    """A batch of three sweeps, one with NaN samples left out and slow samples below
    `min_speed` (zero scores in place, on both paths), one at a torque of 2^120 N·m (the
    accumulator's units rescale its state): covariance and degrees of freedom as
    ``fit_sweep(covariance="hac")`` gives them."""
    rng = np.random.default_rng(7)
    q, v = sweep(1200)
    v = np.where((np.arange(q.size) // 50) % 7 == 3, 0.01, v)  # stretches below min_speed
    tau = sweep_torque(q, v) + _ma_noise(rng, (3, q.size))
    tau[1] *= 2.0**120
    tau[2, [5, 400, 401, 402, 1000]] = np.nan
    qs, vs = np.broadcast_to(q, tau.shape), np.broadcast_to(v, tau.shape)
    options = dict(min_speed=0.05, friction="coulomb-viscous", nan_policy="omit")
    acc = _streamed(qs, vs, tau, rng, **options)
    fit = acc.fit()
    ref = fit_sweep(qs, velocity=vs, torque=tau, covariance="hac", sample_rate=RATE, **options)
    assert np.all(ref.residual_lag1 < 0)
    np.testing.assert_allclose(fit.coefficients, ref.coefficients, rtol=1e-9)
    _assert_close(fit.covariance, ref.covariance, 1e-9)
    np.testing.assert_allclose(fit.covariance_dof, ref.covariance_dof, rtol=1e-9)
    white = fit_sweep(qs, velocity=vs, torque=tau, **options)
    assert not np.allclose(fit.covariance, white.covariance, rtol=0.1)


@pytest.mark.parametrize(("n", "rate", "first"), [(6000, 100.0, 7), (20000, 1000.0, 7)])
def test_a_long_sweep_after_a_first_flush_of_a_few_samples_is_fit_sweeps(
    n: int, rate: float, first: int
) -> None:
    """A first chunk of a few samples, folded at once by a `ready` poll, then the rest of a long
    sweep that runs one way for half its length: the centre the state measures the torque from
    moves from coefficients the first samples barely fix to the sweep's. Against fit_sweep's
    sandwich (residuals of negative lag-1 correlation), within 1e-9 of the product of the
    standard deviations (measured: 3e-12 and 1.5e-10; with every direction in the centre,
    2e-5 and 19, with negative variances)."""
    rng = np.random.default_rng(n)
    q, v = sweep(n, rate)
    tau = sweep_torque(q, v) + _ma_noise(rng, (n,))
    acc = SweepAccumulator(**OPTIONS, covariance="hac", sample_rate=rate)
    acc.add(q[:first], velocity=v[:first], torque=tau[:first])
    assert not acc.ready
    acc.add(q[first:], velocity=v[first:], torque=tau[first:])
    ref = fit_sweep(
        q, velocity=v, torque=tau, covariance="hac", sample_rate=rate, friction="coulomb-viscous"
    )
    assert ref.residual_lag1 < 0
    _assert_close(acc.fit().covariance, ref.covariance, 1e-9)


def test_a_merge_after_a_piece_of_six_samples_at_1_khz_is_the_joined_series() -> None:
    """``a + b`` with `a` six samples of a 1 kHz sweep whose coefficients they barely fix: both
    states move at once to the centre of the merged fit (through `a`'s first, the merge was
    9e-7 of the product of the standard deviations from the joined series)."""
    rng = np.random.default_rng(12)
    n, rate, cut, lags = 20000, 1000.0, 6, 999
    q, v = sweep(n, rate)
    tau = sweep_torque(q, v) + _ma_noise(rng, (n,))
    a, b, joined = _split(q, v, tau, cut, lags, rng, min_speed=0.05, sample_rate=rate)
    _assert_close((a + b).fit().covariance, joined.fit().covariance, 1e-8)


def test_a_first_fold_of_subnormal_torques_leaves_no_infinity() -> None:
    """Five samples of torque near 1e-310 folded first (a `ready` poll), then ordinary ones: the
    torque unit of the first fold is subnormal, and the rows were once multiplied by its
    reciprocal, an infinity (NaN coefficients, and a failed eigendecomposition with "hac")."""
    q, v = sweep(2000)
    tau = sweep_torque(q, v) + np.random.default_rng(0).normal(0, 0.05, q.size)
    tau[:5] *= 1e-310
    for covariance in ("white", "hac"):
        acc = SweepAccumulator(**OPTIONS, covariance=covariance, sample_rate=RATE)
        acc.add(q[:5], velocity=v[:5], torque=tau[:5])
        assert not acc.ready
        acc.add(q[5:], velocity=v[5:], torque=tau[5:])
        with warnings.catch_warnings():  # the five samples misfit: correlated residuals
            warnings.simplefilter("ignore", gravdir.GravdirWarning)
            fit = acc.fit()
            ref = fit_sweep(q, velocity=v, torque=tau, friction="coulomb-viscous")
        assert np.all(np.isfinite(fit.coefficients)) and np.all(np.isfinite(fit.covariance))
        np.testing.assert_allclose(fit.coefficients, ref.coefficients, rtol=1e-9)


def test_a_sweep_at_one_speed_drops_the_viscous_column_from_the_sandwich() -> None:
    """friction="auto" at a single speed: the fit and its sandwich leave out the viscous column
    (its row of the state is kept but unused), as fit_sweep does."""
    rng = np.random.default_rng(8)
    n = 1000
    q = np.concatenate([np.linspace(-1.2, 1.2, n // 2), np.linspace(1.2, -1.2, n // 2)])
    v = np.where(np.arange(n) < n // 2, 0.5, -0.5)
    tau = sweep_torque(q, v) + _ma_noise(rng, (n,))
    fit = _streamed(q, v, tau, rng, friction="auto").fit()
    ref = fit_sweep(q, velocity=v, torque=tau, covariance="hac", sample_rate=RATE)
    assert fit.column_names == ref.column_names and "viscous" not in fit.column_names
    _assert_close(fit.covariance, ref.covariance, 1e-9)


@pytest.mark.parametrize("cut", [6, 700])
def test_a_merge_joins_two_series_as_if_separated_by_a_kernel_of_nothing(cut: int) -> None:
    """``a + b`` closes `a`'s series and goes on with `b`'s: the same fit as one accumulator fed
    `a`'s samples, ``L`` samples left out (standing still: zero scores, so no window holds
    samples of both), then `b`'s. The merge is the same in either order, also where `a` holds
    six samples, whose coefficients are barely fixed."""
    rng = np.random.default_rng(9)
    q, v = sweep(1600)
    tau = sweep_torque(q, v) + ar1_noise(rng, (1, q.size), 0.7)[0]
    options = dict(min_speed=0.05, bandwidth=0.5)  # 50 samples: L = 49
    a, b, joined = _split(q, v, tau, cut, 49, rng, **options)
    want = joined.fit()
    for merged in (a + b, b + a):
        fit = merged.fit()
        np.testing.assert_allclose(fit.coefficients, want.coefficients, rtol=1e-10)
        _assert_close(fit.covariance, want.covariance, 1e-9)
        assert fit.covariance_dof == pytest.approx(want.covariance_dof, rel=1e-8)
    # Windows across the cut would add the products of scores on both sides of it.
    whole = _streamed(q, v, tau, rng, **options).fit()
    assert not np.allclose(whole.covariance, want.covariance, rtol=1e-5)
    # An accumulator that took only empty chunks merges as nothing.
    empty = SweepAccumulator(**{**OPTIONS, "covariance": "hac", "sample_rate": RATE, **options})
    empty.add(q[:0], velocity=v[:0], torque=tau[:0])
    for merged in (a + empty, empty + a):
        assert merged == a


def test_the_state_follows_the_torque_unit_as_it_grows() -> None:
    """Torques below 2^-100 N·m take a unit of their own, a power of two; here it grows by 4
    after a gap, mid-stream (and in ``a + b`` the left operand's state moves to the right's
    unit), while the samples before it still weigh in the sums: the double sums of the
    definition, with the gap's samples as zero rows."""
    rng = np.random.default_rng(11)
    q, v = sweep(1200)
    tau = (sweep_torque(q, v) + ar1_noise(rng, (1, q.size), 0.5)[0]) * 2.0**-112
    cut, gap = 500, 20
    used = np.ones(q.size + gap, dtype=bool)
    used[cut : cut + gap] = False
    qq = np.concatenate([q[:cut], np.full(gap, q[cut]), q[cut:]])
    vv = np.concatenate([v[:cut], np.zeros(gap), v[cut:]])
    tt = np.concatenate([tau[:cut], np.zeros(gap), tau[cut:] * 4.0])
    options = dict(min_speed=0.05, bandwidth=0.2)  # L = 19 < gap
    joined = _streamed(qq, vv, tt, rng, **options)
    a = _streamed(qq[:cut], vv[:cut], tt[:cut], rng, **options)
    b = _streamed(qq[cut + gap :], vv[cut + gap :], tt[cut + gap :], rng, **options)
    assert a.n_used == cut  # (n_used folds the buffer, which sets the units)
    assert joined.n_used == q.size
    assert joined._unit[0] == 4 * a._unit[0] < 2.0**-100  # the unit grew with the torque
    x = (
        np.stack([np.ones_like(qq), np.sin(qq), np.cos(qq), np.sign(vv), vv], axis=1)
        * used[:, None]
    )
    beta = np.linalg.lstsq(x, tt, rcond=None)[0]
    want = sandwich_definition(x, (tt - x @ beta) * used, lags=19, lag1=0.0)
    for fit in (joined.fit(), (a + b).fit()):
        _assert_close(fit.covariance, want, 1e-9)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e5])
@pytest.mark.parametrize("n", [1000, 1600])
def test_a_noise_free_sweep_has_a_covariance_at_rounding_never_negative(
    scale: float, n: int
) -> None:
    """Torque exactly of the model: the residuals are rounding, and so is the sandwich (its
    standard deviations below 1e-13 of the coefficients), with no negative variance, as
    fit_sweep's. Without the centre a quadratic form in the raw torque left variances of either
    sign at 1e-13 to 1e-3 of the coefficients' squares."""
    q, v = sweep(n)
    tau = scale * sweep_torque(q, v)
    fit = _streamed(q, v, tau, np.random.default_rng(2)).fit()
    variances = np.diagonal(fit.covariance)
    assert np.all(variances >= 0.0) and np.all(np.isfinite(fit.covariance))
    assert np.all(np.sqrt(variances) <= 1e-13 * np.abs(fit.coefficients).max())


def test_the_streamed_sandwich_is_honest_where_the_residuals_are_correlated() -> None:
    """300 sweeps of 30 s at 100 Hz, residuals AR(1) with lag-1 correlation 0.7: the squared
    error of the phase in units of its reported variance averages within [0.7, 1.5] (under the
    white form about the integrated autocorrelation time, 5.7)."""
    rng = np.random.default_rng(7)
    q, v = sweep(3000)
    shape = (300, q.size)
    tau = sweep_torque(q, v) + ar1_noise(rng, shape, 0.7)
    qs, vs = np.broadcast_to(q, shape), np.broadcast_to(v, shape)
    fit = _streamed(qs, vs, tau, rng).fit()
    z2 = np.mean((fit.phase - 0.4) ** 2 / fit.phase_std**2)
    assert 0.7 <= z2 <= 1.5, z2
    white = fit_sweep(qs, velocity=vs, torque=tau, **OPTIONS)
    assert np.mean((white.phase - 0.4) ** 2 / white.phase_std**2) >= 4.0


def test_bad_options_and_too_short_a_series_are_refused() -> None:
    with pytest.raises(ValueError, match="`sample_rate`"):
        SweepAccumulator(min_speed=0.0, covariance="hac")
    with pytest.raises(ValueError, match="`covariance`"):
        SweepAccumulator(min_speed=0.0, covariance="newey-west")
    with pytest.raises(ValueError, match="`bandwidth`"):
        SweepAccumulator(min_speed=0.0, covariance="hac", sample_rate=RATE, bandwidth=-1.0)
    q, v = sweep(80)
    acc = SweepAccumulator(**OPTIONS, covariance="hac", sample_rate=RATE)
    acc.add(q, velocity=v, torque=sweep_torque(q, v))
    assert acc.missing is not None and "Bartlett kernel's 100" in acc.missing
    with pytest.raises(InsufficientDataError, match="kernel"):
        acc.fit()
    # Accumulators of different kernels do not merge.
    other = SweepAccumulator(**OPTIONS, covariance="hac", sample_rate=RATE, bandwidth=0.5)
    other.add(q, velocity=v, torque=sweep_torque(q, v))
    with pytest.raises(ValueError, match="hac_lags"):
        acc + other
    # Correlated residuals: the white form warns and names the remedy; the sandwich does not.
    rng = np.random.default_rng(3)
    q, v = sweep(2000)
    tau = sweep_torque(q, v) + ar1_noise(rng, (1, q.size), 0.9)[0]
    with pytest.warns(gravdir.GravdirWarning, match="covariance='hac'"):
        _streamed(q, v, tau, rng, covariance="white").fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _streamed(q, v, tau, rng).fit()


def test_a_state_beyond_the_cap_is_refused_and_leaves_the_accumulator_usable():
    """The sandwich's state grows with the kernel's length and the columns; beyond 2**25
    numbers (256 MiB) the first `add` is refused naming `bandwidth`, before anything is
    allocated. Before, the accumulator kept its batch shape without its state: every later
    call failed with an AttributeError. The same accumulator then takes its sweep when the
    sweep's batch fits (a batch of one, here after a batch of 2500 was refused)."""
    q, v = sweep(2000)
    tau = sweep_torque(q, v)
    options = {**OPTIONS, "covariance": "hac", "sample_rate": RATE, "bandwidth": 5.0}
    acc = SweepAccumulator(**options)
    many = np.broadcast_to
    with pytest.raises(ValueError, match="`bandwidth`"):
        acc.add(many(q, (2500, q.size)), velocity=many(v, (2500, q.size)),
                torque=many(tau, (2500, q.size)))  # fmt: skip
    assert acc.batch_shape is None
    acc.add(q, velocity=v, torque=tau)
    want = fit_sweep(q, velocity=v, torque=tau, **options)
    np.testing.assert_allclose(acc.fit().coefficients, want.coefficients, rtol=1e-10)
    with pytest.raises(ValueError, match="`bandwidth`"):
        SweepAccumulator(covariance="hac", sample_rate=RATE, bandwidth=1e5, **OPTIONS).add(
            q, velocity=v, torque=tau
        )


def test_the_lag_1_correlation_of_a_sweep_with_omitted_samples_is_one_figure():
    """Under ``nan_policy="omit"`` the residuals' lag-1 correlation (which drives the warning
    for correlated residuals) pairs only samples next to each other in the sweep: `fit_sweep`
    white and HAC and the accumulator give one figure. Before, the white form of one sweep
    closed the gaps and paired samples across them."""
    q, v = sweep(1000)
    tau = sweep_torque(q, v) + np.random.default_rng(5).normal(0.0, 0.1, q.size)
    tau[[10, 100, 101, 300]] = np.nan
    options = {"min_speed": 0.05, "nan_policy": "omit"}
    white = fit_sweep(q, velocity=v, torque=tau, **options)
    hac = fit_sweep(q, velocity=v, torque=tau, covariance="hac", sample_rate=RATE, **options)
    acc = SweepAccumulator(**options)
    acc.add(q, velocity=v, torque=tau)
    streamed = acc.fit()
    assert white.residual_lag1 == pytest.approx(hac.residual_lag1, abs=1e-12)
    assert streamed.residual_lag1 == pytest.approx(hac.residual_lag1, abs=1e-10)
    keep = ~np.isnan(tau)
    closed = fit_sweep(q[keep], velocity=v[keep], torque=tau[keep], min_speed=0.05)
    np.testing.assert_allclose(white.coefficients, closed.coefficients, rtol=1e-12, atol=1e-12)
    assert abs(closed.residual_lag1 - white.residual_lag1) > 1e-5
