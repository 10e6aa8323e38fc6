"""fit_sweep's covariance="hac": the Bartlett sandwich of the per-sample scores.

Checked against the double sum of its definition, computed here from columns built without
gravdir's design code, and by Monte Carlo on sweeps whose residuals are correlated in time.
"""

from __future__ import annotations

import numpy as np
import pytest
from _one_sweep import RATE, ar1_noise, sandwich_definition, sweep, sweep_torque
from _spread import wishart_dof
from _sweep_world import correlated_sweep_estimates

import gravdir


@pytest.mark.parametrize(
    ("noise", "bandwidth", "lags"),
    [
        ("random walk", 0.05, 4),  # the residuals' lag-1 correlation clipped to 4/5
        ("ar1", 0.2, 19),  # within the clip
        ("white", 0.2, 19),  # at or below zero: the white-noise rescaling
    ],
)
def test_the_sandwich_is_the_double_sum_of_its_definition(
    noise: str, bandwidth: float, lags: int
) -> None:
    rng = np.random.default_rng(3)
    q, v = sweep(160)
    if noise == "random walk":
        e = np.cumsum(rng.normal(0, 0.02, q.size))
    else:
        e = ar1_noise(rng, (1, q.size), 0.5 if noise == "ar1" else 0.0)[0]
    tau = sweep_torque(q, v) + e
    fit = gravdir.fit_sweep(
        q, velocity=v, torque=tau, friction="coulomb-viscous", covariance="hac",
        bandwidth=bandwidth, sample_rate=RATE,
    )  # fmt: skip
    x = np.stack([np.ones_like(q), np.sin(q), np.cos(q), np.sign(v), v], axis=1)
    beta = np.linalg.lstsq(x, tau, rcond=None)[0]
    want = sandwich_definition(x, tau - x @ beta, lags=lags)
    np.testing.assert_allclose(fit.coefficients, beta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.covariance, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    white = gravdir.fit_sweep(q, velocity=v, torque=tau, friction="coulomb-viscous")
    if noise != "white":
        assert not np.allclose(fit.covariance, white.covariance, rtol=0.1)


def test_the_sandwich_of_the_load_friction_fit_uses_its_jacobian() -> None:
    """load_friction="abs": the rows of the sandwich are the model's derivative at the fit,
    here by central differences of the model written out."""
    rng = np.random.default_rng(4)
    q, v = sweep(120)
    tg = 5.0 * np.sin(q + 0.4)
    tau = (
        sweep_torque(q, v) + 0.05 * np.sign(v) * np.abs(tg) + np.cumsum(rng.normal(0, 0.02, q.size))
    )
    fit = gravdir.fit_sweep(
        q, velocity=v, torque=tau, friction="coulomb-viscous", load_friction="abs",
        covariance="hac", bandwidth=0.08, sample_rate=RATE,
    )  # fmt: skip
    assert fit.column_names == ("offset", "sin", "cos", "coulomb", "viscous", "load_abs")

    def model(b: np.ndarray) -> np.ndarray:
        load = np.sign(v) * np.abs(b[1] * np.sin(q) + b[2] * np.cos(q))
        return (
            b[0] + b[1] * np.sin(q) + b[2] * np.cos(q) + b[3] * np.sign(v) + b[4] * v + b[5] * load
        )

    beta = fit.coefficients
    step = 1e-6
    jac = np.stack(
        [(model(beta + step * d) - model(beta - step * d)) / (2 * step) for d in np.eye(6)], 1
    )
    want = sandwich_definition(jac, tau - model(beta), lags=7)
    np.testing.assert_allclose(fit.covariance, want, rtol=1e-6)


def test_the_sandwich_scales_with_the_torque_and_fits_a_batch_as_its_sweeps() -> None:
    rng = np.random.default_rng(5)
    q, v = sweep(400)
    tau = sweep_torque(q, v) + rng.normal(0, 0.05, (3, q.size))
    options = dict(velocity=v, friction="coulomb-viscous", covariance="hac", sample_rate=RATE)
    batch = gravdir.fit_sweep(np.broadcast_to(q, tau.shape), torque=tau, **options)
    for i in range(3):
        one = gravdir.fit_sweep(q, torque=tau[i], **options)
        np.testing.assert_allclose(batch.covariance[i], one.covariance, rtol=1e-10)
    big = gravdir.fit_sweep(q, torque=tau[0] * 2.0**120, **options)
    assert np.all(np.isfinite(big.covariance))
    np.testing.assert_allclose(big.covariance / 2.0**240, batch.covariance[0], rtol=1e-9)


@pytest.mark.parametrize("rho", [0.0, 0.7])
def test_the_sandwich_is_honest_where_the_residuals_are_correlated(rho: float) -> None:
    """300 sweeps of 30 s at 100 Hz, residuals AR(1) with lag-1 correlation `rho` (0.7 is what
    real drives show). The squared error of the phase in units of its reported variance
    averages about 1 under the sandwich; under the white form it averages about the
    integrated autocorrelation time (1 + rho) / (1 - rho), 5.7 at 0.7."""
    rng = np.random.default_rng(int(10 * rho))
    q, v = sweep(3000)
    shape = (300, q.size)
    tau = sweep_torque(q, v) + ar1_noise(rng, shape, rho)
    qs, vs = np.broadcast_to(q, shape), np.broadcast_to(v, shape)
    options = dict(velocity=vs, torque=tau, friction="coulomb-viscous")
    hac = gravdir.fit_sweep(qs, **options, covariance="hac", sample_rate=RATE)
    white = gravdir.fit_sweep(qs, **options)
    z2_hac = np.mean((hac.phase - 0.4) ** 2 / hac.phase_std**2)
    z2_white = np.mean((white.phase - 0.4) ** 2 / white.phase_std**2)
    assert 0.7 <= z2_hac <= 1.5, z2_hac
    if rho == 0.0:
        # Unbiased under white noise: the mean variance is the white form's.
        ratio = np.mean(hac.phase_std**2) / np.mean(white.phase_std**2)
        assert 0.95 <= ratio <= 1.05, ratio
    else:
        assert z2_white >= 4.0, z2_white


def test_the_sandwich_degrees_of_freedom_match_its_spread() -> None:
    """1000 sweeps as above with residuals of lag-1 correlation 0.7: the spread of the
    sandwich's covariance ``C`` of the gravity term, as the degrees of freedom
    ``2 k (k + 2) / (2 E tr(D^2) + E tr(D)^2)`` of the deviations ``D`` of ``C`` whitened by
    its mean (``k = 2``: what a Wishart estimate with those degrees of freedom shows), against
    the median `covariance_dof`. The equivalent degrees of freedom of a constant influence and
    white noise (45 here) would overstate it by more than half."""
    rng = np.random.default_rng(17)
    q, v = sweep(3000)
    shape = (1000, q.size)
    qs, vs = np.broadcast_to(q, shape), np.broadcast_to(v, shape)
    tau = sweep_torque(q, v) + ar1_noise(rng, shape, 0.7)
    hac = gravdir.fit_sweep(
        qs, velocity=vs, torque=tau, friction="coulomb-viscous", covariance="hac",
        sample_rate=RATE,
    )  # fmt: skip
    spread = wishart_dof(hac.covariance[:, 1:3, 1:3])
    assert spread <= 0.65 * 1.5 * 3000 / 100, spread
    assert 0.8 <= np.median(hac.covariance_dof) / spread <= 1.15, (hac.covariance_dof, spread)


def test_nan_samples_stay_in_place_under_the_sandwich_for_one_sweep_as_for_a_batch() -> None:
    """nan_policy="omit" with covariance="hac": the lags are distances along the sample axis, so
    a NaN sample is a zero score in place, for one sweep as for a batch (one sweep once had its
    NaN samples removed and the gaps closed: 3e-3 of the product of the standard deviations
    from the same sweep as a batch of one)."""
    rng = np.random.default_rng(6)
    q, v = sweep(1200)
    w = rng.normal(0, 0.05, q.size + 1)
    tau = sweep_torque(q, v) + w[1:] - 0.6 * w[:-1]
    tau[[5, 400, 401, 402, 1000]] = np.nan
    options = dict(friction="coulomb-viscous", nan_policy="omit", covariance="hac")
    one = gravdir.fit_sweep(q, velocity=v, torque=tau, sample_rate=RATE, **options)
    batch = gravdir.fit_sweep(q[None], velocity=v[None], torque=tau[None], sample_rate=RATE,
                              **options)  # fmt: skip
    assert one.n_used == 1195 and np.ndim(one.phase) == 0
    np.testing.assert_allclose(one.covariance, batch.covariance[0], rtol=1e-12, atol=0)
    assert one.covariance_dof == pytest.approx(float(batch.covariance_dof[0]), rel=1e-12)


def test_bad_covariance_options_are_refused_naming_the_argument() -> None:
    q, v = sweep(200)
    tau = sweep_torque(q, v)
    with pytest.raises(ValueError, match="`sample_rate`"):
        gravdir.fit_sweep(q, velocity=v, torque=tau, covariance="hac")
    with pytest.raises(ValueError, match="`sample_rate`"):
        gravdir.fit_sweep(q, velocity=v, torque=tau, covariance="hac", sample_rate=-100.0)
    with pytest.raises(ValueError, match="`bandwidth` shorter than the sweep"):
        gravdir.fit_sweep(
            q, velocity=v, torque=tau, covariance="hac", sample_rate=RATE, bandwidth=3.0
        )
    with pytest.raises(ValueError, match="`covariance`"):
        gravdir.fit_sweep(q, velocity=v, torque=tau, covariance="newey-west")
    with pytest.raises(ValueError, match="`covariance`"):
        gravdir.fit_sweep(q, velocity=v, torque=tau, covariance=np.array(["white", "hac"]))
    # Under the white form the bandwidth is not used, on the fast path as on the general one.
    white = gravdir.fit_sweep(q, velocity=v, torque=tau)
    ignored = gravdir.fit_sweep(q, velocity=v, torque=tau, bandwidth=np.array([1.0, 2.0]))
    np.testing.assert_array_equal(ignored.covariance, white.covariance)
    with pytest.raises(ValueError, match="`bandwidth`"):
        gravdir.fit_sweep(
            q, velocity=v, torque=tau, covariance="hac", sample_rate=RATE, bandwidth=-1.0
        )


@pytest.mark.slow
def test_estimate_up_from_sweeps_with_correlated_noise_is_honest_under_the_sandwich() -> None:
    """The synthetic world with a real phenomenon (``tests/_sweep_world.py``: torque noise
    correlated over 0.15 s), sweeps at 0.25 rad/s, 200 draws. With the sweeps' sandwich
    covariance, the squared error of `estimate_up` in units of its reported covariance averages
    within [0.7, 1.5] per degree of freedom; with the white form, by name, at least 20: the
    world is as hard as the real logs. ``compare_setting`` against the true `up`, on the F
    reference of the sandwich's degrees of freedom, rejects it at 1 % in at most 2 % of the
    draws and at 5 % in at most 9 % (here 0 % and 3.5 %; ``benchmarks/reference_distributions.py``
    measures 0.8 % at 1 % over 600 draws)."""
    estimates, truth = correlated_sweep_estimates(200, 0.25)
    basis = np.linalg.svd(truth[None, :])[2][1:]  # two unit vectors normal to `up`
    nse: dict[str, list[float]] = {name: [] for name in estimates}
    for name, group in estimates.items():
        for est in group:
            x = basis @ (est.up - truth)
            nse[name].append(float(x @ np.linalg.solve(basis @ est.up_cov @ basis.T, x)) / 2)
    p_hac = [float(gravdir.compare_setting(est, truth).p_value) for est in estimates["hac"]]
    assert 0.7 <= np.mean(nse["hac"]) <= 1.5, np.mean(nse["hac"])
    rejected = np.array(p_hac)[:, None] < np.array([0.01, 0.05])
    assert np.all(rejected.mean(axis=0) <= [0.02, 0.09]), rejected.mean(axis=0)
    assert np.mean(nse["white"]) >= 20.0, np.mean(nse["white"])
