"""One window of the tracker: `up` on the sphere, its information and the joints' residuals.

With the fit's parameters fixed the torques are affine in `up`, :math:`\\tau = a + B\\,u`; a
window's `up` is the least-squares point of the unit sphere and its covariance the white-noise
one or the Bartlett sandwich of its scores (the *Tracking* page of the documentation).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import (
    FittedScoreSums,
    ar1_correlate,
    ar1_kernel_correlate,
    bartlett_dof,
    bartlett_lags,
    influence_moments,
    rescaled_meat,
    rescaling_lag1,
    residual_lag1,
)
from gravdir._sphere import tangent_basis
from gravdir.motion._fixed import FixedModel
from gravdir.motion._sphere import sphere_least_squares

__all__ = ["Window", "WindowSamples", "solve_windows", "take"]

# A tangent direction with information below this fraction of the largest is undetermined.
_RANK_TOL = 1e-12


class WindowSamples(NamedTuple):
    """Per-sample pieces of the window sums: times, torque residual at zero `up`, slope, mask,
    and the torque of each hidden combination of mass moments per component of `up`."""

    time: NDArray[np.float64]  # (N,)
    residual: NDArray[np.float64]  # (N, n) measured torque minus the offset a
    slope: NDArray[np.float64]  # (N, n, 3)
    used: NDArray[np.float64]  # (N, n) 1 where the joint sample is used, else 0
    hidden: NDArray[np.float64]  # (N, n, 3 k): slope of each of the k hidden combinations


class Window(NamedTuple):
    up: NDArray[np.float64]
    information: NDArray[np.float64]
    residual_rms: NDArray[np.float64]
    n_samples: int
    determined: bool
    rate: NDArray[np.float64]
    dof: float  # of the covariance behind `information` (inf: known, the white-noise form)
    white: NDArray[np.float64]  # the white-noise information (a fixed weight, not estimated)


def solve_windows(
    parts: list[WindowSamples],
    model: FixedModel,
    bounds: list[tuple[float, float]],
    drift: bool,
    max_std: float,
    bandwidth: float | None,
) -> list[Window]:
    """Each window's `up` at its centre (least squares on the sphere), its information and the
    joints' residual spread. Profiled out of each window: a constant rate of change of `up`
    when `drift`, and the torques of the hidden mass moments (see :func:`hidden_directions`).
    With a `bandwidth` (s) the information is the inverse of the Bartlett sandwich of the
    window's profiled scores, its lags counted at the window's median interval; without, the
    white-noise form. A window is determined when its information has rank 2 and its standard
    deviation (the root-mean-square angle) is at most `max_std`."""
    w = 1.0 / model.noise_std**2
    hess = np.zeros((len(parts), 3, 3))
    grad = np.zeros((len(parts), 3))
    nuisance_parts = []
    for k, (s, (lo, hi)) in enumerate(zip(parts, bounds, strict=True)):
        # Time from the centre in half windows, in [-1, 1].
        x = (s.time - 0.5 * (lo + hi)) / (0.5 * (hi - lo))
        ws = s.slope * (s.used * w)[..., None]
        h = np.einsum("tja,tjb->ab", ws, s.slope)
        g = np.einsum("tja,tj->a", ws, s.residual)
        columns = ([s.slope * x[:, None, None]] if drift else []) + [s.hidden]
        nu = np.concatenate(columns, axis=-1)
        solve = np.zeros((0, 0))
        h_un = np.zeros((3, 0))
        g_n = np.zeros(0)
        if nu.shape[-1]:
            wn = nu * (s.used * w)[..., None]
            h_un = np.einsum("tja,tjm->am", ws, nu)
            g_n = np.einsum("tjm,tj->m", wn, s.residual)
            solve = np.linalg.pinv(np.einsum("tjm,tjl->ml", wn, nu), rcond=1e-12, hermitian=True)
            h = h - h_un @ solve @ h_un.T
            g = g - h_un @ solve @ g_n
        nuisance_parts.append((solve, h_un, g_n, nu))
        hess[k] = 0.5 * (h + h.T)
        grad[k] = g
    ups = sphere_least_squares(hess, grad, model.up)
    out = []
    for k, s in enumerate(parts):
        u = ups[k]
        solve, h_un, g_n, nu = nuisance_parts[k]
        coef = solve @ (g_n - h_un.T @ u)
        fitted = s.slope @ u + nu @ coef
        change = coef[:3] if drift else np.zeros(3)  # the rate, per half window
        count = s.used.sum(axis=0)
        sq = np.sum(s.used * (s.residual - fitted) ** 2, axis=0)
        std = np.sqrt(sq / np.maximum(count, 1.0))
        e = tangent_basis(u)
        info2 = e @ hess[k] @ e.T
        white = _lift(info2, e)
        if bandwidth is not None:
            info2, dof = _sandwich_information(s, fitted, w, e, info2, nuisance_parts[k], bandwidth)
        else:
            dof = math.inf
        vals = np.linalg.eigvalsh(info2)
        determined = bool(
            vals[0] > _RANK_TOL * max(vals[1], 0.0)
            and vals[1] > 0
            and float(np.sum(1.0 / vals)) <= max_std**2
        )
        rate = (change - (change @ u) * u) / (0.5 * (bounds[k][1] - bounds[k][0]))
        info3 = _lift(info2, e)
        out.append(Window(u, info3, std, int(count.sum()), determined, rate, dof, white))
    return out


def _lift(info2: NDArray[np.float64], e: NDArray[np.float64]) -> NDArray[np.float64]:
    """A tangent information (2, 2) in basis `e` (2, 3) as the symmetric (3, 3) one."""
    info3 = e.T @ info2 @ e
    return np.asarray(0.5 * (info3 + info3.T), dtype=np.float64)


def _sandwich_information(
    s: WindowSamples,
    fitted: NDArray[np.float64],
    w: NDArray[np.float64],
    e: NDArray[np.float64],
    info2: NDArray[np.float64],
    nuisance: tuple[NDArray[np.float64], ...],
    bandwidth: float,
) -> tuple[NDArray[np.float64], float]:
    """The tangent information of one window from the Bartlett sandwich ``P T M T^T P``, and
    the sandwich's degrees of freedom.

    ``P`` is the inverse of the white-noise information `info2`; ``M`` the Bartlett long-run
    covariance of the per-sample scores of the two tangent directions, the nuisance parameters
    profiled out of them (``g - H_un H_nn^+ h``); ``T = V^(1/2) E^(-1/2)`` the rescaling that
    makes it unbiased where each joint's residuals are a first-order autoregressive series of
    the lag-1 correlation and variance they show in the window: ``V`` the variance of the
    scores' sum and ``E`` the expectation of ``M``, less what the kernel's truncation and the
    fitted columns (tangent and nuisance) take out of it, as in the other sandwiches (the
    *Tracking* page). The degrees of freedom are :func:`gravdir._hac.bartlett_dof`'s (each
    joint's influence on the tangent coordinates and its lag-1 correlation), at most the white
    form's ``N - 2``. Zero information where `info2` is not positive definite."""
    vals = np.linalg.eigvalsh(info2)
    if not (vals[1] > 0 and vals[0] > _RANK_TOL * vals[1]) or s.time.size < 2:
        return np.zeros((2, 2)), math.inf
    solve, h_un, _, nu = nuisance
    residual = s.used * (s.residual - fitted)
    weight = s.used * w  # (N, n)
    # Each joint's fitted columns (tangent, nuisance) and its coefficients of its residuals
    # in the profiled tangent scores, (N, n, q) and (N, n, 2).
    columns = np.concatenate([s.slope @ e.T, nu], axis=-1)
    coefficient = s.slope
    if nu.shape[-1]:
        coefficient = coefficient - nu @ solve @ h_un.T
    influence = (coefficient * weight[..., None]) @ e.T
    score = np.einsum("tja,tj->ta", influence, residual)
    lags = bartlett_lags(bandwidth, 1.0 / float(np.median(np.diff(s.time))))
    lag = np.sum(residual[1:] * residual[:-1], axis=0)
    rss = np.sum(residual * residual, axis=0)
    yy = np.sum(s.used * s.residual**2, axis=0)
    rho = rescaling_lag1(residual_lag1(lag, rss, yy), lags)
    spread = np.sqrt(rss / np.maximum(s.used.sum(axis=0), 1.0))  # each joint's noise level
    # V, E's first term, and the joints' rows z = S (w x) of the fitted columns' scores.
    gram = np.einsum("tjq,tj,tjr->qr", columns, weight, columns)
    p = np.linalg.pinv(gram, rcond=1e-12, hermitian=True)
    v_sum, t1 = np.zeros((2, 2)), np.zeros((2, 2))
    q_rows, v = np.zeros(influence.shape[:1] + (2, columns.shape[-1])), np.zeros(gram.shape)
    for j, r in enumerate(rho):
        a = influence[:, j] * spread[j]
        b = columns[:, j] * (weight[:, j] * spread[j])[:, None]
        z = ar1_correlate(np.concatenate([a, b], axis=1), float(r))
        v_sum += a.T @ z[:, :2]
        t1 += a.T @ ar1_kernel_correlate(a, float(r), lags)
        q_rows += a[:, :, None] * z[:, None, 2:]
        v += b.T @ z[:, 2:]
    sums = FittedScoreSums(p, p @ v @ p, 2, lags)
    sums.add(score, np.einsum("tja,tjq->taq", influence, columns), q_rows)
    bread = np.linalg.inv(info2)
    cov = bread @ rescaled_meat(sums.result(), t1, v_sum, lags) @ bread
    cov_vals = np.linalg.eigvalsh(0.5 * (cov + cov.T))
    if not cov_vals[0] > 0:
        return np.zeros((2, 2)), math.inf
    info = np.linalg.inv(0.5 * (cov + cov.T))
    moments = influence_moments(np.swapaxes(influence, 0, 1))
    dof = min(bartlett_dof(*moments, rho, lags), float(s.time.size - 2))
    return np.asarray(0.5 * (info + info.T), dtype=np.float64), dof


def take(s: WindowSamples, lo: int, hi: int) -> WindowSamples:
    return WindowSamples(*(x[lo:hi] for x in s))
