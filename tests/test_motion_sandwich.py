"""The motion estimator's sandwich: each term of its streaming passes against its definition,
formed here from dense matrices over the whole log (``docs/real_logs.md``, "The loss to the
fitted columns").

The design's chunks are made a few dozen samples long, so that the recursive filters, the
kernel's tails and the windows all cross chunk boundaries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _newton_euler import random_bodies, random_chain, reference_torques

import gravdir.motion._design as design_module
import gravdir.motion._sandwich as sandwich_module
from gravdir.motion import estimate_up_from_motion
from gravdir.synthetic import up_from_base_tilt
from gravdir.synthetic.motion import fourier_trajectory, motion_log

G = 9.80665
RATE = 200.0


def _captured_terms(
    monkeypatch: pytest.MonkeyPatch, load_friction: str, correlation_time: float
) -> tuple[tuple[Any, ...], sandwich_module.Terms]:
    """The arguments and result of `sandwich_terms` in one estimate of a 3-joint arm's 3 s log
    (AR(1) torque noise of `correlation_time`), the design cut into chunks of 37 samples."""
    rng = np.random.default_rng(29)
    chain = random_chain(rng, 3, "poe")
    bodies = random_bodies(rng, 3)
    traj = fourier_trajectory(3, 3.0, RATE, rng=rng)
    up = up_from_base_tilt(0.3, 1.1)
    tau = reference_torques(chain, traj.q, traj.velocity, traj.acceleration, *bodies, G * up)
    peak = np.abs(tau).max(axis=0)
    log = motion_log(
        traj, tau, rng=rng, noise_std=0.02 * peak, noise_correlation_time=correlation_time,
        coulomb=0.05 * peak,
    )  # fmt: skip
    seen: list[tuple[tuple[Any, ...], sandwich_module.Terms]] = []
    terms = sandwich_module.sandwich_terms

    def spy(*args: Any) -> sandwich_module.Terms:
        seen.append((args, terms(*args)))
        return seen[-1][1]

    monkeypatch.setattr(sandwich_module, "sandwich_terms", spy)
    monkeypatch.setattr(design_module, "_CHUNK_VALUES", 37 * 3 * (4 * 10 + 5))
    estimate_up_from_motion(
        chain, log.time, q=log.q, velocity=log.velocity, torque=log.torque,
        acceleration=traj.acceleration, covariance="hac", bandwidth=0.25,
        ripple_components=0, load_friction=load_friction, n_grid=60, n_starts=1,
    )  # fmt: skip
    assert len(seen) == 1
    return seen[0]


def _dense_terms(args: tuple[Any, ...]) -> dict[str, np.ndarray]:
    """Every term from its definition, over the whole log at once."""
    design, d, m, root, h_mat, c_hat, lags = args
    rows = list(design_module.design_rows(design))
    a = np.concatenate([r[0] for r in rows], axis=1)  # (n, N, columns)
    w = np.concatenate([r[1] for r in rows], axis=1)
    t = np.concatenate([r[2] for r in rows], axis=1)
    x = np.einsum("jsm,jmp->jsp", a, d)  # X_tj S
    e = t - np.einsum("jsm,jm->js", a, m)
    n_pseudo, n = w.shape
    joint = np.arange(n_pseudo) % (n_pseudo // 2 if design.source.split else n_pseudo)
    n_j = joint.max() + 1
    lag = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    kernel = np.clip(1.0 - lag / (lags + 1), 0.0, None)
    y = np.zeros((n_j, n, x.shape[2]))
    u = np.zeros((n_j, n))
    for j in range(n_pseudo):
        y[joint[j]] += (w[j] * root[j])[:, None] * x[j]
        u[joint[j]] += w[j] * root[j] * e[j]
    rho = np.clip(np.sum(u[:, 1:] * u[:, :-1], 1) / np.sum(u * u, 1), 0.0, lags / (lags + 1))
    corr = [r**lag for r in rho]  # S_J, (N, N) each
    v = sum(y[j].T @ corr[j] @ y[j] for j in range(n_j))
    h = y @ h_mat.T
    k = sum(h[j].T @ (kernel * corr[j]) @ h[j] for j in range(n_j))
    hx = x @ h_mat.T
    hu = np.einsum("jsr,jsp,js->srp", hx, x, w * root[:, None] ** 2)  # H U_t S
    hq = sum(np.einsum("sr,sp->srp", h[j], corr[j] @ y[j]) for j in range(n_j))  # H Q_t S
    hg = np.einsum("jsr,js->sr", hx, w * root[:, None] ** 2 * e)  # H g_t
    width = lags + 1
    return {
        "rho": rho,
        "v": v,
        "k": k,
        "cross": width * np.einsum("tu,trp,uvp->rv", kernel, hu @ c_hat, hq),
        "quad": width * np.einsum("tu,trp,uvp->rv", kernel, hu @ (c_hat @ v @ c_hat), hu),
        "meat": width * hg.T @ kernel @ hg,
    }


@pytest.mark.parametrize(
    ("load_friction", "correlation_time"), [("none", 0.05), ("abs", 0.05), ("none", 0.0)]
)
def test_every_term_of_the_sandwich_is_its_definition(
    monkeypatch: pytest.MonkeyPatch, load_friction: str, correlation_time: float
) -> None:
    """``V``, ``K``, ``A``, ``C`` and the kernel's sum of the scores, streamed in chunks of 37
    samples through the recursive filters, agree within 1e-7 (relative to each term's largest
    entry: ``C`` sums products of the inverse information, whose rounding is about 1e-8 of
    it) with the dense double sums over 600 samples, with and without the load term's
    pseudo-joints; the correlated noise gives each joint ``r_J > 0.5``, the white one below 0.2
    (clipped at 0: the fitted columns make white residuals' lag-1 correlation negative)."""
    args, terms = _captured_terms(monkeypatch, load_friction, correlation_time)
    assert args[0].source.split == (load_friction == "abs")
    want = _dense_terms(args)
    if correlation_time > 0:
        assert np.all(want["rho"] > 0.5), want["rho"]
    else:
        assert np.all(want["rho"] < 0.2), want["rho"]
    for name, value in want.items():
        got = getattr(terms, name)
        scale = 1.0 if name == "rho" else np.max(np.abs(value))
        assert scale > 0, name
        np.testing.assert_allclose(got, value, rtol=0, atol=1e-7 * scale, err_msg=name)
