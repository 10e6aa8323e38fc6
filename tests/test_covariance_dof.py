"""Degrees of freedom of estimated covariances, and the F references that use them.

A covariance estimated from residuals (the white form's residual variance, a Bartlett sandwich)
is itself random: a test built on it refers its statistic to an F distribution with the
covariance's degrees of freedom (docs/real_logs.md, "Degrees of freedom of a covariance").
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
import scipy.stats
from _spread import wishart_dof

import gravdir
from gravdir._hac import bartlett_dof, covariance_dof, satterthwaite_dof
from gravdir.errors import GravdirWarning
from gravdir.motion._windows import WindowSamples, solve_windows

RATE = 100.0


def test_the_rules_for_the_degrees_of_freedom():
    # White form: the residual variance's chi-square.
    assert covariance_dof(400, 5) == 395
    np.testing.assert_allclose(covariance_dof(np.array([200, 400]), 5), [195.0, 395.0])
    # Welch-Satterthwaite: equal shares of equal dof add; an exact share adds none.
    assert satterthwaite_dof([1.0, 1.0, 1.0], [10.0, 10.0, 10.0]) == pytest.approx(30.0)
    assert satterthwaite_dof([1.0, 3.0], [10.0, math.inf]) == pytest.approx(160.0)
    assert satterthwaite_dof([1.0, 2.0], [math.inf, math.inf]) == math.inf
    # Against its definition: the chi-square whose variance matches that of the sum.
    v, nu = np.array([0.5, 2.0, 1.5]), np.array([8.0, 40.0, 20.0])
    variance_of_sum = np.sum(2 * v**2 / nu)  # Var(v_k chi2_nu / nu) = 2 v_k^2 / nu
    assert satterthwaite_dof(v, nu) == pytest.approx(2 * v.sum() ** 2 / variance_of_sum)


def _moments(influence: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The second and fourth moments of each series' influence (n, k) that `bartlett_dof` takes."""
    second = np.array([a.T @ a for a in influence])
    fourth = np.array(
        [[np.einsum("ta,tb,tc,td->abcd", a, b, a, b) for b in influence] for a in influence]
    )
    return second, fourth


def _exact_dof(influence: list[np.ndarray], lag1: list[float], lags: int) -> float:
    """The degrees of freedom of the F reference for the Bartlett sum ``C = sum_ts k(t - s)
    g_t g_s^T`` of the scores ``g_t = sum_J a_Jt e_Jt`` (k coordinates) by their definition:
    ``2 k (k + 2) / (2 E tr(D^2) + E tr(D)^2)``, ``D`` the deviation of ``C`` whitened by its
    mean, from the exact moments of quadratic forms in Gaussian noise of covariance ``S`` (each
    series first-order autoregressive, independent of the others): the entry ``(i, j)`` is
    ``e^T B_ij e`` with mean ``tr(B_ij S)`` and covariances ``2 tr(B_ij S B_lm S)``. Dense
    matrices over every (series, sample)."""
    n, k = influence[0].shape
    t = np.arange(n)
    lag = np.abs(t[:, None] - t[None, :])
    kernel = np.kron(np.ones((len(influence),) * 2), np.clip(1.0 - lag / (lags + 1), 0.0, None))
    a = np.concatenate(influence)  # (J n, k): series after series
    cov = scipy.linalg.block_diag(*(r**lag for r in lag1))
    forms = [
        [kernel * (np.outer(a[:, i], a[:, j]) + np.outer(a[:, j], a[:, i])) / 2 for j in range(k)]
        for i in range(k)
    ]  # symmetric, as the moments below ask
    mean = np.array([[np.sum(f * cov) for f in row] for row in forms])  # tr(B S), B symmetric
    root = np.linalg.inv(np.linalg.cholesky(mean))
    white = [
        [sum(root[i, p] * forms[p][q] * root[j, q] for p in range(k) for q in range(k))
         for j in range(k)]
        for i in range(k)
    ]  # fmt: skip
    prod = [[w @ cov for w in row] for row in white]  # B S
    entries = sum(2 * np.sum(prod[i][j] * prod[i][j].T) for i in range(k) for j in range(k))
    trace = sum(prod[i][i] for i in range(k))
    return float(2 * k * (k + 2) / (2 * entries + 2 * np.sum(trace * trace.T)))


def test_the_sandwich_degrees_of_freedom_against_their_definition():
    """`bartlett_dof` against the exact moments of the kernel's sum (:func:`_exact_dof`), for
    two series of 400 samples with a slowly varying influence on two coordinates and noise of
    lag-1 correlation 0.5 and 0.8 (to within one degree of freedom); with white noise and a
    constant influence on one coordinate it is the equivalent degrees of freedom
    3 n / (2 (L + 1)) of Lazarus et al."""
    n, lags = 400, 12
    phase = np.linspace(0.0, 2.0, n)
    influence = [
        np.column_stack([np.cos(phase), 0.5 * np.sin(phase)]),
        np.column_stack([0.3 + phase**2, np.cos(2 * phase)]),
    ]
    lag1 = [0.5, 0.8]
    got = bartlett_dof(*_moments(influence), np.array(lag1), lags)
    # The kernel's sum is cut at the series' ends, which the formula does not see: it comes out
    # below the exact figure by a fraction of one degree of freedom, whatever the length.
    exact = _exact_dof(influence, lag1, lags)
    assert exact - 1.0 <= got <= exact
    # Correlated noise and a varying influence cost degrees of freedom.
    lazarus = 1.5 * n / (lags + 1)
    assert got < 0.8 * lazarus
    flat = [np.ones((n, 1))]
    white = bartlett_dof(*_moments(flat), np.zeros(1), lags)
    assert white == pytest.approx(lazarus, rel=0.01)
    flat_exact = _exact_dof(flat, [0.0], lags)
    assert flat_exact - 1.0 <= white <= flat_exact


def _window_covariances(rho: float, draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """A tracker window of 6 s at 100 Hz (the default window and bandwidth) on two joints whose
    torques follow `up` through slopes that turn once in the window, with AR(1) noise of lag-1
    correlation `rho` (standard deviations 1 and 2), drawn `draws` times: each draw's sandwich
    covariance of `up`'s tangent coordinates, the degrees of freedom it reports, its error in
    those coordinates, and the number of samples."""
    rate, window = 100.0, 6.0
    time = np.arange(0.0, window, 1.0 / rate)
    n = time.size
    turn = 2.0 * np.pi * time / window
    slope = np.stack(
        [
            np.column_stack([np.cos(turn), np.sin(turn), np.full(n, 0.5)]),
            np.column_stack([np.sin(2.0 * turn), np.full(n, 0.3), np.full(n, 0.8)]),
        ],
        axis=1,
    )
    up = np.array([0.0, 0.0, 1.0])
    model = SimpleNamespace(noise_std=np.ones(2), up=up)
    rng = np.random.default_rng(47)
    covs, dofs, errors = np.empty((draws, 2, 2)), np.empty(draws), np.empty((draws, 2))
    for k in range(draws):
        white = rng.normal(size=(n + 200, 2)) * [1.0, 2.0]
        noise = scipy.signal.lfilter([1.0], [1.0, -rho], white, axis=0)
        samples = WindowSamples(
            time, slope @ up + noise[200:], slope, np.ones((n, 2)), np.zeros((n, 2, 0))
        )
        (win,) = solve_windows([samples], model, [(0.0, window)], False, math.inf, 1.0)
        covs[k] = np.linalg.pinv(win.information)[:2, :2]
        dofs[k] = win.dof
        errors[k] = win.up[:2]
    return covs, dofs, errors, n


def test_a_tracker_window_carries_an_unbiased_covariance_and_its_degrees_of_freedom():
    """Over draws of AR(1) noise of lag-1 correlation 0.7, a tracker window's sandwich
    covariance has the mean of its estimate's spread (the Bartlett sum alone, without the
    rescaling, has about 0.7 of it), and the degrees of freedom it reports (``change_dof``
    combines them) match the spread of that covariance, which a constant influence and white
    noise (3 n / (2 (L + 1)) = 9) overstate by more than half."""
    covs, dofs, errors, n = _window_covariances(0.7, 600)
    mean = covs.mean(axis=0)
    scatter = errors.T @ errors / errors.shape[0]  # about the true `up`, (0, 0) here
    assert 0.85 < float(np.trace(mean) / np.trace(scatter)) < 1.15
    spread = wishart_dof(covs)
    assert 0.75 < float(np.median(dofs)) / spread < 1.3
    assert 1.5 * n / 100 > 1.6 * spread


def _sweep(n: int) -> tuple[np.ndarray, np.ndarray]:
    half = n // 2
    q = np.concatenate([np.linspace(-1.2, 1.2, half), np.linspace(1.2, -1.2, half)])
    return q, np.where(np.arange(2 * half) < half, 0.3, -0.3)


def test_a_sweep_fit_carries_the_degrees_of_freedom_of_its_covariance():
    rng = np.random.default_rng(2)
    q, v = _sweep(3000)
    tau = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v) + rng.normal(0, 0.05, (2, q.size))
    options = dict(velocity=v, friction="coulomb")
    white = gravdir.fit_sweep(q, torque=tau[0], **options)
    assert float(white.covariance_dof) == 3000 - 4
    hac = gravdir.fit_sweep(q, torque=tau[0], covariance="hac", sample_rate=RATE, **options)
    # The sandwich's, in the directions of the gravity term: the influence of each sample on
    # the sine and cosine coefficients, from columns built here.
    x = np.column_stack([np.ones_like(q), np.sin(q), np.cos(q), np.sign(v)])
    influence = (np.linalg.solve(x.T @ x, x.T)[1:3]).T
    lag1 = max(float(hac.residual_lag1), 0.0)
    expected = bartlett_dof(*_moments([influence]), np.array([lag1]), 99)  # 1 s at 100 Hz
    assert float(hac.covariance_dof) == pytest.approx(expected, rel=0.02)
    assert float(hac.covariance_dof) < 1.5 * 3000 / 100  # a varying influence costs some
    batch = gravdir.fit_sweep(np.broadcast_to(q, tau.shape), torque=tau, **options)
    np.testing.assert_array_equal(batch.covariance_dof, [3000 - 4, 3000 - 4])
    acc = gravdir.SweepAccumulator(min_speed=0.05, friction="coulomb")
    acc.add(q, velocity=v, torque=tau[0])
    assert float(acc.fit().covariance_dof) == 3000 - 4


def _three_sweeps(
    rng: np.random.Generator, hac: bool, realistic: bool = True
) -> list[gravdir.JointSweep]:
    """J2 of a UR5-like arm swept at three J1 angles over unequal arcs, with the realistic
    sensors' noise correlated over 0.15 s (or, `realistic` false, the coefficients of the
    noise-free sweeps with the covariances of fits to that noise alone)."""
    from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm
    from gravdir.synthetic.sensors import TorqueSensor

    arm = ur5_arm(up=up_from_base_tilt(0.3, 1.1))
    chain = gravdir.chain_from_dh(*arm.dh.T)
    sensors = [
        dataclasses.replace(s, noise_correlation_time=0.15)
        if realistic
        else TorqueSensor(noise_std=s.noise_std, noise_correlation_time=0.15)
        for s in realistic_sensors(rng, arm.peak_gravity_torque())
    ]
    extra = {"covariance": "hac", "sample_rate": RATE} if hac else {}
    sweeps = []
    for turn, span in ((0.0, 1.0), (np.pi / 2, 0.7), (np.pi, 0.5)):  # unequal shares
        c = np.array([0.4 + turn, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
        rec = arm.sweep(1, c, c[1] - span, c[1] + span, 0.25, RATE, sensor=sensors, rng=rng)
        c[1] = rec.q[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GravdirWarning)
            fit = gravdir.fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, **extra)
        if not realistic:
            # The coefficients of the noise-free sweep with the noisy fit's covariance: a
            # problem without residuals, whose weights do not move `up`.
            clean = arm.sweep(1, c, c[1] - span, c[1] + span, 0.25, RATE, sensor=TorqueSensor())
            exact = gravdir.fit_sweep(clean.q, velocity=clean.velocity, torque=clean.torque)
            fit = dataclasses.replace(
                exact, covariance=fit.covariance, covariance_dof=fit.covariance_dof
            )
        sweeps.append(gravdir.joint_sweep_from_chain(chain, c, 1, fit))
    return sweeps


def test_estimate_up_combines_the_sweeps_degrees_of_freedom():
    """Each sweep's share of the trace of `up`'s covariance, found here from its definition:
    the derivative of the trace with respect to a scale (1 + h) of that sweep's covariance
    (the shares add up to the trace), combined by Welch-Satterthwaite. The sensors carry noise
    alone, and the fits' coefficients are the noise-free sweeps': the scaled weights then do not
    move `up`."""
    sweeps = _three_sweeps(np.random.default_rng(4), hac=True, realistic=False)
    est = gravdir.estimate_up(sweeps)
    dofs = np.array([float(s.fit.covariance_dof) for s in sweeps])
    assert np.all(dofs < 50)
    # Shares by the definition: sweep s's noise scaled by (1 + h) scales its share by (1 + h)
    # and leaves the others', so d tr C / d h = v_s; the fits' covariances scaled here.
    h = 1e-4
    base = np.trace(est.up_cov)
    shares = []
    for k in range(3):
        scaled = [
            dataclasses.replace(s, fit=dataclasses.replace(s.fit, covariance=s.fit.covariance
                                                           * (1 + h))) if i == k else s
            for i, s in enumerate(sweeps)
        ]  # fmt: skip
        shares.append((np.trace(gravdir.estimate_up(scaled).up_cov) - base) / h)
    shares = np.array(shares)
    assert shares.sum() == pytest.approx(base, rel=1e-3)
    assert est.covariance_dof == pytest.approx(satterthwaite_dof(shares, dofs), rel=1e-3)
    assert dofs.max() < est.covariance_dof < dofs.sum()


def test_compare_setting_and_fuse_up_refer_estimated_covariances_to_f():
    rng = np.random.default_rng(9)
    a = gravdir.estimate_up(_three_sweeps(rng, hac=True))
    b = gravdir.estimate_up(_three_sweeps(rng, hac=True))
    check = gravdir.compare_setting(a, (0.0, 0.0, 1.0))
    d = float(check.mahalanobis)
    assert check.covariance_dof == a.covariance_dof < 100
    assert check.p_value == pytest.approx(scipy.stats.f.sf(d * d / 2, 2, a.covariance_dof))
    assert check.p_value > scipy.stats.chi2.sf(d * d, 2)
    fused = gravdir.fuse_up(a, b)
    nu = satterthwaite_dof(
        [np.trace(a.up_cov), np.trace(b.up_cov)], [a.covariance_dof, b.covariance_dof]
    )
    assert fused.p_value == pytest.approx(scipy.stats.f.sf(fused.chi2 / 2, 2, nu), rel=1e-9)
    assert np.isfinite(fused.covariance_dof)
    # A model error given is exact: its share of the variance carries no sampling error.
    tau = np.radians(0.2)
    widened = gravdir.fuse_up(a, b, model_error_std=tau)
    nu = satterthwaite_dof(
        [np.trace(a.up_cov), np.trace(b.up_cov), 2 * tau**2, 2 * tau**2],
        [a.covariance_dof, b.covariance_dof, math.inf, math.inf],
    )
    assert widened.p_value == pytest.approx(scipy.stats.f.sf(widened.chi2 / 2, 2, nu), rel=1e-9)
    assert widened.covariance_dof > fused.covariance_dof
    # A plain vector with a covariance is exact: the chi-square reference.
    plain = gravdir.express_up(a.up, np.eye(3), up_cov=a.up_cov)
    other = gravdir.express_up(b.up, np.eye(3), up_cov=b.up_cov)
    exact = gravdir.fuse_up(plain, other)
    assert exact.covariance_dof == math.inf
    assert exact.p_value == pytest.approx(scipy.stats.chi2.sf(exact.chi2, 2), rel=1e-9)
