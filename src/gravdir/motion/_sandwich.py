"""The Bartlett sandwich covariance of :func:`gravdir.estimate_up_from_motion`'s estimate.

The kernel's sum of the fitted scores falls short of the long-run variance it estimates: the
model's smooth columns absorb part of the noise at the low frequencies the kernel sums. Its
expectation is formed where each joint's noise is a first-order autoregressive series with the
lag-1 correlation its residuals show, and the estimate rescaled to be unbiased there
(derivation: *Real logs*, "The loss to the fitted columns"). Three passes over the design's
samples, memory independent of the log's length but for one row per chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import (
    FittedScoreSums,
    ar1_kernel,
    bartlett_dof,
    influence_moments,
    rescaled_meat,
    rescaling_lag1,
    residual_lag1,
)
from gravdir._imports import IMPORT_LOCK
from gravdir._sphere import tangent_basis
from gravdir.motion._design import (
    Layout,
    _Design,
    covariance,
    derivative,
    design_rows,
    gains_std,
    model_vector,
)
from gravdir.motion._profile import Optimum


class _Chunk(NamedTuple):
    """A chunk of the design's samples as the sandwich reads it."""

    x: NDArray[np.float64]  # X_tj S, (n, s, size)
    e: NDArray[np.float64]  # residuals, (n, s)
    w: NDArray[np.float64]  # weights, (n, s)
    y: NDArray[np.float64]  # y_tJ = sum_j w_tj X_tj S / s_j, (J, s, size)
    u: NDArray[np.float64]  # sum_j w_tj e_tj / s_j, (J, s)
    torque: NDArray[np.float64]  # sum_j w_tj tau_tj / s_j, (J, s)


def _joints(design: _Design) -> int:
    """The joints of the arm: the design's pseudo-joints, or half of them where each joint is
    split into its driving and braking samples."""
    split = design.source is not None and design.source.split
    return design.n // 2 if split else design.n


def _rows(
    design: _Design,
    d: NDArray[np.float64],
    m: NDArray[np.float64],
    root: NDArray[np.float64],
    derivatives: bool = True,
) -> Iterator[_Chunk]:
    """The design's samples in chunks, each joint's standardised series summed over its
    pseudo-joints (their weights are disjoint, so the sum keeps each sample's one row).
    Without `derivatives`, the rows ``x`` and ``y`` are empty."""
    n_j = _joints(design)

    def fold(series: NDArray[np.float64]) -> NDArray[np.float64]:
        return series[:n_j] + series[n_j:] if series.shape[0] > n_j else series

    for a, w, t in design_rows(design):
        e = t - np.einsum("jsm,jm->js", a, m)
        x = a @ d if derivatives else np.zeros((*a.shape[:2], 0))
        ws = w * root[:, None]
        yield _Chunk(x, e, w, fold(x * ws[..., None]), fold(ws * e), fold(ws * t))


def _lag1(
    design: _Design,
    d: NDArray[np.float64],
    m: NDArray[np.float64],
    root: NDArray[np.float64],
    lags: int,
) -> NDArray[np.float64]:
    """Each joint's lag-1 autocorrelation of its standardised residuals (samples left out count
    as zero; 0 at the rounding of the torque), as the rescaling takes it."""
    num, den, yy, last = (np.zeros(_joints(design)) for _ in range(4))
    for chunk in _rows(design, d, m, root, derivatives=False):
        u = chunk.u
        num = num + last * u[:, 0] + np.sum(u[:, 1:] * u[:, :-1], axis=1)
        den = den + np.sum(u * u, axis=1)
        yy = yy + np.sum(chunk.torque**2, axis=1)
        last = u[:, -1]
    return np.asarray(rescaling_lag1(residual_lag1(num, den, yy), lags), dtype=np.float64)


class Terms(NamedTuple):
    """The parts of the sandwich (parameters in the column-scaled units of `c_hat`)."""

    v: NDArray[np.float64]  # S V S: the variance of the scores' sum, (size, size)
    k: NDArray[np.float64]  # K, (r, r)
    cross: NDArray[np.float64]  # (L + 1) A, (r, r)
    quad: NDArray[np.float64]  # (L + 1) C, (r, r)
    meat: NDArray[np.float64]  # (L + 1) H M H^T, the kernel's sum of the fitted scores
    rho: NDArray[np.float64]  # each joint's r_J
    second: NDArray[np.float64]  # sum_t a_Jt a_Jt^T, a_Jt = (H y_tJ^T) on `up`, (J, 2, 2)
    fourth: NDArray[np.float64]  # sum_t a_Jt a_Kt a_Jt a_Kt by index, (J, J, 2, 2, 2, 2)


def _filter(
    y: NDArray[np.float64],
    rho: NDArray[np.float64],
    state: NDArray[np.float64],
    backward: bool = False,
) -> NDArray[np.float64]:
    """Each joint's first-order recursive filter of its rows `y` (J, s, size) along the samples:
    ``c_t = y_t + r_J c_(t-1)`` from `state` (``r_J`` times the output before the chunk), or
    with `backward` ``a_t = y_t + r_J a_(t+1)`` from the output after it."""
    with IMPORT_LOCK:
        from scipy.signal import lfilter  # slow to import: only when needed

    out = y.copy()
    for j, x in enumerate(rho):
        if x > 0.0:
            series = y[j][::-1] if backward else y[j]
            done = lfilter([1.0], [1.0, -x], series, axis=0, zi=state[j][None, :])[0]
            out[j] = done[::-1] if backward else done
    return out


class _LongRun(NamedTuple):
    v: NDArray[np.float64]  # S V S
    k: NDArray[np.float64]  # K
    entering: list[NDArray[np.float64]]  # the anticausal filter's state at each chunk's end
    second: NDArray[np.float64]  # Terms.second
    fourth: NDArray[np.float64]  # Terms.fourth


def _long_run(
    chunks: Iterator[_Chunk], rho: NDArray[np.float64], h_mat: NDArray[np.float64], lags: int
) -> _LongRun:
    """``V`` and ``K`` of :func:`hac_uncertainty`, and what the anticausal filter carries into
    each chunk from the samples after it, in one pass: ``V = sum_t y_t^T c_t + (...)^T -
    sum_t y_t^T y_t`` from the causal filter ``c``; ``K`` likewise from the convolution of
    ``H y`` with the kernel ``(1 - l / (L + 1)) r^l``, carrying its last rows over; each chunk's
    anticausal sum ``sum_t r^(t - t0) y_t`` from its first sample ``t0``, combined backwards;
    and the second and fourth moments of each joint's influence on `up`'s tangent coordinates
    (:func:`gravdir._hac.bartlett_dof`)."""
    with IMPORT_LOCK:
        from scipy.signal import fftconvolve  # slow to import: only when needed

    r, size = h_mat.shape
    kernels = [ar1_kernel(float(x), lags) for x in rho]
    tails = [np.zeros((k.size - 1, r)) for k in kernels]
    state = np.zeros((rho.size, size))
    v_half, v_diag, k_half = np.zeros((size, size)), np.zeros((size, size)), np.zeros((r, r))
    chunk_sums, lengths = [], []
    second, fourth = np.zeros((rho.size, 2, 2)), np.zeros((rho.size, rho.size, 2, 2, 2, 2))
    for chunk in chunks:
        y = chunk.y
        c = _filter(y, rho, rho[:, None] * state)
        state = c[:, -1]
        flat = y.reshape(-1, size)
        v_half += flat.T @ c.reshape(-1, size)
        v_diag += flat.T @ flat
        h = y @ h_mat.T  # H y_tJ^T, (J, s, r)
        moments = influence_moments(h[..., :2])
        second += moments[0]
        fourth += moments[1]
        for j, k in enumerate(kernels):
            ext = np.concatenate([tails[j], h[j]])
            k_half += h[j].T @ fftconvolve(ext, k[:, None], axes=0)[k.size - 1 : ext.shape[0]]
            tails[j] = ext[ext.shape[0] - (k.size - 1) :]
        powers = rho[:, None] ** np.arange(y.shape[1])[None, :]
        chunk_sums.append(np.einsum("js,jsp->jp", powers, y))
        lengths.append(y.shape[1])
    entering = [np.zeros((rho.size, size)) for _ in lengths]
    for i in range(len(lengths) - 2, -1, -1):
        entering[i] = chunk_sums[i + 1] + rho[:, None] ** lengths[i + 1] * entering[i + 1]
    # The kernels count lag 0 once, the two halves twice.
    v = v_half + v_half.T - v_diag
    k_sum = k_half + k_half.T - h_mat @ v_diag @ h_mat.T
    return _LongRun(v, k_sum, entering, second, fourth)


def _windows(
    chunks: Iterator[_Chunk],
    rho: NDArray[np.float64],
    long_run: _LongRun,
    root: NDArray[np.float64],
    h_mat: NDArray[np.float64],
    c_hat: NDArray[np.float64],
    lags: int,
) -> tuple[NDArray[np.float64], ...]:
    """The window sums (:class:`~gravdir._hac.FittedScoreSums`) of the scores ``H g_t``, of
    ``H U_t S`` and of ``H Q_t S``, ``Q_t = sum_J y_tJ^T z_tJ``, ``z = c + a - y``: the meat,
    ``(L + 1) A`` and ``(L + 1) C``."""
    size = h_mat.shape[1]
    sums = FittedScoreSums(c_hat, c_hat @ long_run.v @ c_hat, h_mat.shape[0], lags)
    state = np.zeros((rho.size, size))
    for i, chunk in enumerate(chunks):
        x, e, w, y = chunk.x, chunk.e, chunk.w, chunk.y
        c = _filter(y, rho, rho[:, None] * state)
        state = c[:, -1]
        z = c - y + _filter(y, rho, rho[:, None] * long_run.entering[i], backward=True)
        wv = w * root[:, None] ** 2
        hx = x @ h_mat.T  # H X_tj^T, (n, s, r)
        sums.add(
            np.einsum("jsr,js->sr", hx, wv * e),  # H g_t
            np.einsum("jsr,jsp,js->srp", hx, x, wv),  # H U_t S
            np.einsum("jsr,jsp->srp", y @ h_mat.T, z),  # H Q_t S
        )
    return sums.result()


def sandwich_terms(
    design: _Design,
    d: NDArray[np.float64],
    m: NDArray[np.float64],
    root: NDArray[np.float64],
    h_mat: NDArray[np.float64],
    c_hat: NDArray[np.float64],
    lags: int,
) -> Terms:
    """The terms of :func:`hac_uncertainty` for the model's derivative `d` (scaled columns) and
    vector `m`, the pseudo-joints' inverse noise levels `root`, ``H S^-1`` = `h_mat` and
    ``S^-1 P S^-1`` = `c_hat`, in three passes over the samples: the lag-1 sums, the long-run
    terms, the windows."""
    rho = _lag1(design, d, m, root, lags)
    long_run = _long_run(_rows(design, d, m, root), rho, h_mat, lags)
    meat, cross, quad = _windows(_rows(design, d, m, root), rho, long_run, root, h_mat, c_hat, lags)
    return Terms(long_run.v, long_run.k, cross, quad, meat, rho, long_run.second, long_run.fourth)


class Sandwich(NamedTuple):
    """What :func:`hac_uncertainty` returns."""

    up_information: NDArray[np.float64]  # of the tangent coordinates, (2, 2)
    gains_std: NDArray[np.float64]  # (n,)
    dof: float  # of the covariance of `up` (:func:`gravdir._hac.bartlett_dof`)


def hac_uncertainty(
    design: _Design, layout: Layout, dirs: NDArray[np.float64], optimum: Optimum, lags: int
) -> Sandwich | None:
    """The information of `up` (tangent plane), the gains' standard deviations at `optimum` and
    the degrees of freedom of the covariance of `up` (None where the residuals leave no spread
    to estimate) from the sandwich ``H M H^T``:
    ``H = F P`` the influence of the estimate on the tangent parameters and the gains (``P``
    the inverse of the full information), ``M`` the Bartlett long-run covariance (largest lag
    `lags`, samples) of the per-sample scores ``g_t = sum_j X_tj^T w_tj e_tj / s_j^2`` over every
    parameter and joint at once (``X_tj`` the model's derivative at sample ``t``, joint ``j``).

    Where joint ``J``'s noise has the correlation ``S_J(l) = r_J^|l|`` (``r_J`` its residuals'
    lag-1 autocorrelation, clipped), the scores' sum has the variance ``V = sum_t Q_t``,
    ``Q_t = sum_J y_tJ^T z_tJ``, ``z_tJ = sum_u S_J(t - u) y_uJ``, and the kernel's sum the
    expectation ``E = K - (A + A^T) + C``: ``K = sum_J sum_tu k(t-u) S_J(t-u) H y_tJ^T y_uJ
    H^T``, ``A = sum_tu k(t-u) H U_t P Q_u H^T``, ``C = sum_tu k(t-u) H U_t P V P U_u H^T``
    (``U_t`` sample ``t``'s information). The estimate is rescaled by ``T = (H V H^T)^(1/2)
    E^(-1/2)``, unbiased there and positive semi-definite; with every ``r_J = 0`` this is the
    white-noise rescaling. Passes: the lag-1 sums; ``V``, ``K`` and each chunk's share of the
    anticausal filter ``z``; the windows. The degrees of freedom are those of the kernel's sum
    in the tangent coordinates of `up`.
    """
    best = optimum.best
    basis = tangent_basis(best.up)
    # Every product is formed in the column-scaled parameters of `covariance` (P = S C S, S the
    # scales): a parameter whose column is tiny has a huge scale, and P itself would overflow.
    cov = covariance(best.info)
    sc, c_hat = cov.scale, cov.scaled
    d = derivative(design, layout, best.up, basis, best.gains, dirs, best.beta) * sc
    m = model_vector(design, best.up, best.gains, best.beta, best.theta)
    root = 1.0 / optimum.sigma  # each pseudo-joint's 1 / s_j
    size, r = layout.size, 2 + design.n
    fun = np.zeros((size, r))
    fun[0, 0] = fun[1, 1] = 1.0
    if layout.n_gain:  # gains fixed: no gain rows to report
        fun[layout.gain, 2:] = dirs.T
    h_mat = (fun.T * sc[None, :]) @ c_hat  # H S^-1, (r, size)
    terms = sandwich_terms(design, d, m, root, h_mat, c_hat, lags)
    sums = (terms.meat, terms.cross, terms.quad)
    cov_r = rescaled_meat(sums, terms.k, h_mat @ terms.v @ h_mat.T, lags)
    white = gains_std(cov, layout, dirs)
    k_std = np.sqrt(np.maximum(np.diag(cov_r)[2:], 0.0))
    k_std = np.where(np.isfinite(white) & (white > 0), k_std, white)
    vals, vecs = np.linalg.eigh(cov_r[:2, :2])
    if not vals.min() > 0:  # residuals at the rounding level: no spread to estimate
        return None
    info = (vecs / vals) @ vecs.T
    return Sandwich(info, k_std, bartlett_dof(terms.second, terms.fourth, terms.rho, lags))
