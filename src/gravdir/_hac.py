"""The Bartlett (Newey--West) long-run covariance of a series of scores, fed in order.

An estimate :math:`\\hat x` that solves :math:`\\sum_t g_t(\\hat x) = 0` has, to first order,
the covariance :math:`P M P` with :math:`P` the inverse of the expected Hessian and :math:`M`
the long-run covariance of the sum of the scores :math:`g_t`. With serially correlated
residuals :math:`M` is not :math:`\\sum_t g_t g_t^\\top`: the Bartlett estimate is

.. math::

    M = \\sum_{|l| \\le L} \\Bigl(1 - \\frac{|l|}{L + 1}\\Bigr) \\sum_t g_t g_{t+l}^\\top
      = \\frac{1}{L + 1} \\sum_t B_t B_t^\\top, \\qquad B_t = \\sum_{i = t - L}^{t} g_i,

the second form summing over every window of :math:`L + 1` consecutive scores that overlaps the
series (scores outside it are zero): each pair :math:`(i, k)` lies in :math:`L + 1 - |i - k|` such
windows. It is positive semi-definite by construction and costs :math:`O(N P^2)`, whatever
:math:`L`. The derivation and the choice of the bandwidth are on the *Real logs* page.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import check_positive
from gravdir._imports import IMPORT_LOCK

# Default bandwidth of the Bartlett kernel, s: the torque residuals of real arms stay correlated
# over about a second (the Real logs page), and the long-run variance has levelled off by then.
DEFAULT_BANDWIDTH = 1.0


def bartlett_lags(bandwidth: float, sample_rate: float) -> int:
    """The largest lag ``L`` of a Bartlett kernel of `bandwidth` seconds at `sample_rate`:
    weights ``1 - |l| / (L + 1)`` that reach zero at ``bandwidth``, ``L + 1`` the bandwidth in
    samples (at least one: ``L = 0`` is the white-noise form)."""
    b = check_positive(bandwidth, "bandwidth", allow_zero=True)
    return max(math.ceil(b * sample_rate - 1e-9) - 1, 0)


def series_lags(bandwidth: float, sample_rate: float, n: int, series: str, at: str) -> int:
    """:func:`bartlett_lags` of a `series` ("log", "sweep") of `n` samples, refused where the
    kernel is not shorter than the series: it would sum every score, and their sum vanishes at
    the estimate. `at` says how the rate was found, for the message."""
    lags = bartlett_lags(bandwidth, sample_rate)
    if lags >= n:
        raise ValueError(
            f"Expected `bandwidth` shorter than the {series} with covariance='hac', got "
            f"{bandwidth!r} s against {n} samples {at}."
        )
    return lags


def extend_windows(
    tails: NDArray[np.float64], rows: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The sums of the windows of ``L + 1`` consecutive rows that end at each of `rows`
    (..., s, K), the next rows of a series whose last ``L + 1`` partial sums are `tails`
    (..., L + 1, K): ``-tails[j]`` sums the rows after the ``L + 1 - j``-th last (zeros before
    the series starts); returns those window sums and the new `tails`. Each window is a
    difference of sums over the chunk and the tails alone, whatever the series' length."""
    s = rows.shape[-2]
    if not s:
        return np.zeros(rows.shape), tails
    c = np.cumsum(rows, axis=-2)  # sums from the chunk's start; the tails' are negative
    both = np.concatenate([tails, c], axis=-2)
    b = c - both[..., :s, :]
    return b, both[..., -tails.shape[-2] :, :] - c[..., -1:, :]


def window_tail(tails: NDArray[np.float64]) -> NDArray[np.float64]:
    """The sums of the ``L`` windows that start within a series and run past its last row,
    (..., L, K), from the `tails` of :func:`extend_windows`."""
    return np.asarray(-tails[..., :-1, :], dtype=np.float64)


class WindowSums:
    """The sums of every window of ``L + 1`` consecutive rows of a series fed in order by
    :meth:`add` (rows outside the series are zero): the :math:`B_t` of the Bartlett form.

    Holds the last ``L + 1`` partial sums only: memory ``O(L K)``, whatever the length.
    """

    def __init__(self, size: int, lags: int) -> None:
        self.lags = lags
        self._tails = np.zeros((lags + 1, size))  # see extend_windows

    def add(self, rows: NDArray[np.float64]) -> NDArray[np.float64]:
        """Feed the next rows (s, K); return the sums of the windows that end at each (s, K)."""
        b, self._tails = extend_windows(self._tails, rows)
        return b

    def tail(self) -> NDArray[np.float64]:
        """The sums of the ``L`` windows that run past the last row fed (L, K)."""
        return window_tail(self._tails)


class FittedScoreSums:
    """The window sums of a sandwich over fitted scores, fed in order by :meth:`add`: the
    kernel's sum of the scores ``g_t`` (the meat) and the two sums of the expectation of that
    sum that the fitted columns take out of it, ``sum_tu c(t - u) U_t P Q_u^T`` and
    ``sum_tu c(t - u) U_t P V P U_u^T`` (``c(l) = L + 1 - |l|``, the windows a pair shares).

    ``U_t`` is sample ``t``'s information (its rows, as projected by the caller) and ``Q_t``
    its covariance with the scores' sum (``U_t`` itself under white noise). Memory ``O(L K)``,
    ``K`` the numbers of a sample's rows; the derivations are on the *Sweep fitting* ("Correlated
    residuals") and *Real logs* ("The loss to the fitted columns") pages.
    """

    def __init__(
        self, p: NDArray[np.float64], pvp: NDArray[np.float64], rows: int, lags: int
    ) -> None:
        self._p, self._pvp = p, pvp
        self._r, self._size = rows, p.shape[0]
        self._sums = WindowSums(rows + 2 * rows * self._size, lags)
        self._totals = tuple(np.zeros((rows, rows)) for _ in range(3))  # meat, cross, quad

    def add(
        self, score: NDArray[np.float64], u: NDArray[np.float64], q: NDArray[np.float64]
    ) -> None:
        """Feed the next samples' scores (s, R) and their ``U`` and ``Q`` rows (s, R, P)."""
        n = score.shape[0]
        self._accumulate(
            self._sums.add(np.concatenate([score, u.reshape(n, -1), q.reshape(n, -1)], axis=1))
        )

    def result(self) -> tuple[NDArray[np.float64], ...]:
        """The three sums (R, R), each ``L + 1`` times the kernel's: meat, cross, quad (the
        windows that run past the last sample fed included; the state is left as it was)."""
        tail = self._terms(self._sums.tail())
        return tuple(total + part for total, part in zip(self._totals, tail, strict=True))

    def _accumulate(self, b: NDArray[np.float64]) -> None:
        for total, part in zip(self._totals, self._terms(b), strict=True):
            total += part

    def _terms(self, b: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        r, size = self._r, self._size
        bu = b[:, r : r + r * size].reshape(-1, r, size)
        bq = b[:, r + r * size :].reshape(-1, r, size)
        return (
            b[:, :r].T @ b[:, :r],
            np.einsum("wrp,wup->ru", bu @ self._p, bq),
            np.einsum("wrp,wup->ru", bu @ self._pvp, bu),
        )


def rescaled_meat(
    sums: tuple[NDArray[np.float64], ...],
    first: NDArray[np.float64],
    variance: NDArray[np.float64],
    lags: int,
) -> NDArray[np.float64]:
    """The kernel's sum of the scores rescaled to be unbiased, ``T (M / (L + 1)) T^T``, from
    the three sums `sums` of :meth:`FittedScoreSums.result` (meat ``M``, cross, quad): ``T =
    V^(1/2) E^(-1/2)``, ``V`` the `variance` of the scores' sum and ``E = first - (cross +
    cross^T - quad) / (L + 1)`` the kernel's expectation of the meat, `first` its part before
    the fitted columns take theirs (symmetric, (R, R))."""
    meat, cross, quad = sums
    expected = first - (cross + cross.T - quad) / (lags + 1)
    t = sqrtm_psd(variance) @ sqrtm_psd(expected, inverse=True)
    out = t @ (meat / (lags + 1)) @ t.T
    return np.asarray(0.5 * (out + out.T), dtype=np.float64)


# The autocorrelation sum of `autocorrelation_time` stops at the first lag at least this many
# times the running estimate (Sokal's window): beyond it the sum adds noise, not correlation.
_SOKAL_WINDOW = 5.0


def autocorrelation_time(
    residuals: NDArray[np.float64], used: NDArray[np.bool_]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The lag-1 autocorrelation and the integrated autocorrelation time (in samples) of each
    column of `residuals` (N, n), over the samples `used` (the others count as zero).

    ``tau = 1 + 2 sum_{l=1}^{M} rho_l``, with ``M`` the first lag with ``M >= 5 tau(M)`` (at
    most ``N / 4``), floored at 1: a series of independent samples has ``tau = 1``, and
    ``N_used / tau`` samples carry its information. Autocorrelations by FFT, ``O(N log N)``.
    """
    n, k = residuals.shape
    size = 1 << int(2 * n - 1).bit_length()
    acov = np.empty((min(max(n // 4, 2), size), k))
    for j in range(k):  # a column at a time: the transforms are twice the log's length
        spectrum = np.fft.rfft(np.where(used[:, j], residuals[:, j], 0.0), size)
        spectrum *= np.conj(spectrum)
        acov[:, j] = np.fft.irfft(spectrum, size)[: acov.shape[0]]
    zero = acov[0]
    rho = np.divide(acov, zero, out=np.zeros_like(acov), where=zero > 0)
    lag1 = rho[1] if rho.shape[0] > 1 else np.zeros(k)
    running = 1.0 + 2.0 * np.cumsum(rho[1:], axis=0)  # tau(M) for M = 1, 2, ...
    lags = np.arange(1, running.shape[0] + 1)[:, None]
    stop = lags >= _SOKAL_WINDOW * running
    first = np.where(stop.any(axis=0), stop.argmax(axis=0), running.shape[0] - 1)
    tau = running[first, np.arange(k)]
    return np.asarray(lag1, dtype=np.float64), np.maximum(tau, 1.0)


# A series whose integrated autocorrelation time exceeds this many samples makes the white-noise
# covariance understate the spread of an estimate visibly (its variance by about that factor).
CORRELATED_TIME = 3.0
# Residuals below this fraction of the RMS torque are rounding (and derivative error) of a
# noise-free series, not a misfit: their correlation says nothing about the model.
ROUNDING = 1e-6


def residual_lag1(lag: Any, rss: Any, yy: Any) -> Any:
    """The lag-1 autocorrelation ``lag / rss`` of residuals whose lag-1 products sum to `lag`
    and squares to `rss`, of a torque whose squares sum to `yy` (arrays broadcast; a float for
    floats): clipped to [-1, 1], and 0 where the residuals are at the rounding of the torque
    (``rss <= ROUNDING**2 * yy``)."""
    if isinstance(lag, float) and isinstance(rss, float) and isinstance(yy, float):
        if not rss > ROUNDING * ROUNDING * yy:  # one sweep: without the array calls' cost
            return 0.0
        return min(max(lag / rss, -1.0), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.clip(np.divide(lag, rss), -1.0, 1.0)
    return np.where(np.asarray(rss) > ROUNDING * ROUNDING * np.asarray(yy), r, 0.0)


def rescaling_lag1(lag1: Any, lags: int) -> Any:
    """The lag-1 correlation `lag1` of residuals as a sandwich's rescaling takes it, for a
    Bartlett kernel of largest lag `lags`: clipped to ``[0, L / (L + 1)]``. A correlation time
    beyond the bandwidth is one the kernel cannot estimate, and ``r <= 0`` takes the white-noise
    rescaling (a float for a float)."""
    if isinstance(lag1, float):
        return min(max(lag1, 0.0), lags / (lags + 1))
    return np.clip(lag1, 0.0, lags / (lags + 1))


# The autoregressive kernel is cut where r^l falls below this: what lies beyond is below the
# rounding of the sums it enters.
_KERNEL_TAIL = 1e-17


def _reach(lag1: float, tail: float) -> int:
    """The first lag ``l`` at which ``r^l``, ``0 < r < 1`` the lag-1 correlation `lag1` of a
    first-order autoregressive series, falls to `tail` or below."""
    return math.ceil(math.log(tail) / math.log(lag1))


def ar1_kernel(lag1: float, lags: int) -> NDArray[np.float64]:
    """The Bartlett weights times the correlation of a first-order autoregressive series of
    lag-1 correlation `lag1`, ``(1 - l / (L + 1)) r^l`` for ``l = 0, 1, ...`` up to `lags`,
    cut where ``r^l`` is rounding (one weight, 1, where ``r <= 0``)."""
    if lag1 <= 0.0:
        return np.ones(1)
    k = min(lags, _reach(lag1, _KERNEL_TAIL))
    lag = np.arange(k + 1)
    return np.asarray((1.0 - lag / (lags + 1)) * lag1**lag, dtype=np.float64)


def ar1_correlate(x: NDArray[np.float64], lag1: float) -> NDArray[np.float64]:
    """``S x`` along the first axis of `x`, ``S_ts = r^|t - s|`` the correlation of a
    first-order autoregressive series of lag-1 correlation `lag1` ``r`` (`x` itself where
    ``r <= 0``): the causal and the anti-causal filter ``1 / (1 - r B)``, less the diagonal
    counted twice. ``O(N)`` per column."""
    if lag1 <= 0.0:
        return x
    with IMPORT_LOCK:
        from scipy.signal import lfilter  # slow to import: only when needed

    z = lfilter([1.0], [1.0, -lag1], x, axis=0)
    z += lfilter([1.0], [1.0, -lag1], x[::-1], axis=0)[::-1] - x
    return np.asarray(z, dtype=np.float64)


def ar1_kernel_correlate(x: NDArray[np.float64], lag1: float, lags: int) -> NDArray[np.float64]:
    """``sum_l (1 - |l| / (L + 1)) r^|l| x_(t+l)`` along the first axis of `x` (rows outside
    it zero): :func:`ar1_kernel` on both sides as one convolution, ``O(N log N)`` per column
    (`x` itself where ``r <= 0``)."""
    if lag1 <= 0.0:
        return x
    with IMPORT_LOCK:
        from scipy.signal import fftconvolve  # slow to import: only when needed

    half = ar1_kernel(lag1, lags)
    weights = np.concatenate([half[:0:-1], half]).reshape((-1,) + (1,) * (x.ndim - 1))
    return np.asarray(fftconvolve(x, weights, "same", axes=0), dtype=np.float64)


def ar1_correlation_time(lag1: Any) -> Any:
    """The integrated autocorrelation time ``(1 + r) / (1 - r)`` (samples) of a first-order
    autoregressive series of lag-1 correlation `r`, floored at 1 (``r <= 0``) and infinite at
    ``r = 1`` (a float for a float)."""
    if isinstance(lag1, float):  # one sweep: without the array calls' cost
        return math.inf if lag1 >= 1.0 else max((1.0 + lag1) / (1.0 - lag1), 1.0)
    r = np.clip(np.asarray(lag1, dtype=np.float64), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return (1.0 + r) / (1.0 - r)  # r = 1 divides 2 by 0: inf


def covariance_dof(n_used: Any, n_free: Any) -> Any:
    """The degrees of freedom ``n_used - n_free`` of a white-noise least-squares covariance
    estimated from `n_used` samples with `n_free` coefficients (the residual variance's
    chi-square; float64, of the shape of the arguments). A Bartlett sandwich's are
    :func:`bartlett_dof`'s."""
    return np.asarray(n_used, dtype=np.float64) - np.asarray(n_free, dtype=np.float64)


# The autoregressive correlation of `bartlett_dof` is cut where r^l falls below this: the
# degrees of freedom it gives change by less than that fraction.
_DOF_TAIL = 1e-12


def _smoothed_kernel(lag1: float, lags: int) -> NDArray[np.float64]:
    """The Bartlett weights ``k(l) = 1 - |l| / (L + 1)`` convolved with the correlation
    ``r^|l|`` of a first-order autoregressive series, ``h = k * rho``, centred: ``h[c + m]`` for
    ``|m| <= L + M`` with ``M`` the lag where ``r^M`` falls below :data:`_DOF_TAIL`."""
    lag = np.arange(-lags, lags + 1)
    k = 1.0 - np.abs(lag) / (lags + 1)
    if lag1 <= 0.0:
        return np.asarray(k, dtype=np.float64)
    cut = max(_reach(lag1, _DOF_TAIL), 1)
    rho = lag1 ** np.abs(np.arange(-cut, cut + 1))
    with IMPORT_LOCK:
        from scipy.signal import fftconvolve  # slow to import: only when needed

    return np.asarray(fftconvolve(k, rho), dtype=np.float64)


def influence_moments(a: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The moments of the influences `a` (J, s, k) of ``s`` samples of ``J`` series that
    :func:`bartlett_dof` takes: ``sum_t a_Jt a_Jt^T`` (J, k, k) and ``sum_t a_Jt[a] a_Kt[b]
    a_Jt[c] a_Kt[d]`` (J, J, k, k, k, k), the latter as the Gram matrix of the products
    ``a_Jt a_Kt^T``. Sums over chunks of samples add."""
    n, _, k = a.shape
    second = np.einsum("jsa,jsb->jab", a, a)
    pair = (a[:, None, :, :, None] * a[None, :, :, None, :]).reshape(n, n, -1, k * k)
    fourth = (np.swapaxes(pair, -1, -2) @ pair).reshape(n, n, k, k, k, k)
    return np.asarray(second, dtype=np.float64), np.asarray(fourth, dtype=np.float64)


def bartlett_dof(
    second: NDArray[np.float64],
    fourth: NDArray[np.float64],
    lag1: NDArray[np.float64],
    lags: int,
) -> float:
    """The degrees of freedom ``nu`` of an F reference for a quadratic form in the inverse of a
    Bartlett sandwich's covariance of ``k`` tested coordinates.

    The scores are ``sum_J a_Jt e_Jt`` over independent series ``J`` (the joints), ``a_Jt``
    (k,) the influence of sample ``t`` of series ``J`` on the tested coordinates and ``e_J``
    first-order autoregressive noise of lag-1 correlation `lag1` ``r_J`` (J,), as the
    rescaling takes it; `second` and `fourth` their moments (:func:`influence_moments`).
    Where the influence varies slowly over the kernel's reach, the kernel's sum of the scores
    has the mean
    ``M = sum_J h_J(0) sum_t a_Jt a_Jt^T`` and, whitened by ``G = M^-1``, deviations ``D``
    with ``2 E tr(D^2) + E tr(D)^2 = 2 sum_JK H_JK sum_t (|a_Jt|^2 |a_Kt|^2 + 2 (a_Jt .
    a_Kt)^2)`` in the metric ``G``: ``h_J = k * rho_J`` the Bartlett weights convolved with the
    noise's correlation, ``H_JK = sum_m h_J(m) h_K(m)``. That is the variance of ``d^T D d``
    for ``d ~ N(0, I)``, the first-order change the estimate makes in a statistic
    ``d^T C^-1 d``; a Wishart estimate with ``nu`` degrees of freedom and a chi-square scale of
    ``nu`` (for which the statistic over ``k`` is exactly ``F(k, nu)``) both give
    ``2 k (k + 2) / nu``, so ``nu = k (k + 2) / sum_JK H_JK sum_t (...)``.
    For one coordinate, white noise and a constant influence this is ``3 n / (2 (L + 1))``,
    the equivalent degrees of freedom of Lazarus, Lewis, Stock & Watson (2018); a varying
    influence and correlated noise make it smaller.
    Derivation: *Real logs*, "Degrees of freedom of a covariance".
    """
    kernels = [_smoothed_kernel(float(r), lags) for r in np.asarray(lag1, dtype=np.float64)]
    size = max(h.size for h in kernels)
    padded = np.zeros((len(kernels), size))
    for j, h in enumerate(kernels):
        start = (size - h.size) // 2
        padded[j, start : start + h.size] = h
    mean = np.einsum("j,jab->ab", padded[:, size // 2], second)
    k = mean.shape[0]
    if not np.all(np.isfinite(mean)) or not np.linalg.eigvalsh(mean)[0] > 0.0:
        return math.inf
    g = np.linalg.inv(mean)
    spread = np.einsum("jkabcd,ac,bd->jk", fourth, g, g) + 2.0 * np.einsum(
        "jkabcd,ab,cd->jk", fourth, g, g
    )
    total = float(np.sum((padded @ padded.T) * spread))
    if not total > 0.0:
        return math.inf
    return float(k * (k + 2)) / total


def satterthwaite_dof(variances: Any, dofs: Any) -> float:
    """The Welch--Satterthwaite degrees of freedom of a sum of independent variance estimates
    `variances` (k,), each with degrees of freedom `dofs` (k,): ``(sum v)^2 / sum(v^2 / nu)``
    (infinite where every estimate is exact, ``nu = inf``, or the sum is zero)."""
    v = np.asarray(variances, dtype=np.float64)
    nu = np.asarray(dofs, dtype=np.float64)
    top = float(np.max(np.abs(v), initial=0.0))
    if 0.0 < top < math.inf:
        v = v / top  # the ratio is scale-free; in these units v² neither under- nor overflows
    exact = ~np.isfinite(nu)
    spread = float(np.sum(np.where(exact, 0.0, v * v / np.where(exact, 1.0, nu))))
    total = float(np.sum(v))
    if not spread > 0.0 or not math.isfinite(total):
        return math.inf
    return total * total / spread


def sqrtm_psd(a: NDArray[np.float64], inverse: bool = False) -> NDArray[np.float64]:
    """The symmetric square root of a positive semi-definite matrix (or of its inverse, on the
    eigenvalues above rounding)."""
    vals, vecs = np.linalg.eigh(0.5 * (a + a.T))
    top = max(float(vals.max(initial=0.0)), 0.0)
    keep = vals > 1e-14 * top
    root = np.sqrt(np.where(keep, vals, 0.0))
    if inverse:
        root = np.where(keep, 1.0 / np.where(keep, root, 1.0), 0.0)
    return np.asarray((vecs * root) @ vecs.T, dtype=np.float64)


# Rows of the window sums formed at a time by `least_squares_sandwich`: memory O(chunk p^2)
# whatever the length of the series.
_CHUNK = 4096


def least_squares_sandwich(
    x: NDArray[np.float64],
    e: NDArray[np.float64],
    inv_gram: NDArray[np.float64],
    lags: int,
    tested: tuple[int, ...],
) -> tuple[NDArray[np.float64], float]:
    """The Bartlett sandwich covariance ``P M P`` of a least-squares fit with design rows `x`
    (N, P), residuals `e` (N,) and ``P`` = `inv_gram` (P, P), the inverse of ``X^T X`` (zero
    rows and columns for coefficients held fixed, whose columns are left out), and its degrees
    of freedom (:func:`bartlett_dof`) in the directions of the coefficients `tested`.

    ``M`` is the Bartlett estimate (largest lag `lags`, samples) of the long-run covariance of
    the scores ``g_t = x_t e_t``, rescaled by ``T = V^(1/2) E^(-1/2)`` so that it is unbiased
    where the residuals are a first-order autoregressive series with the lag-1 correlation
    ``r`` they show (clipped to ``[0, L / (L + 1)]``; ``r = 0`` is white noise):
    ``V = X^T S X`` the variance of the scores' sum and ``E`` the expectation of the estimate
    under the covariance ``S_ts = r^|t-s|`` of the noise, what the kernel's truncation and the
    fitted columns take out of it (docs/sweep.md, "Correlated residuals"). Rows outside the fit
    (zero rows) count as zero scores. Formed in unit-norm columns; memory
    ``O(chunk P^2)``, time ``O(N P^3 + P N log N)``. An exact fit has a zero covariance and
    infinite degrees of freedom.
    """
    n, p = x.shape
    held = ~np.any(inv_gram != 0.0, axis=0)
    x = np.where(held[None, :], 0.0, x)
    norms = np.sqrt(np.einsum("np,np->p", x, x))
    d = np.where(norms > 0.0, 1.0 / np.where(norms > 0.0, norms, 1.0), 0.0)
    xs = x * d
    top = float(np.max(np.abs(e), initial=0.0))
    if not top > 0.0:  # an exact fit: nothing to estimate a spread from
        return np.zeros((p, p)), math.inf
    es = e / top
    ps = np.where(
        (norms[:, None] > 0.0) & (norms[None, :] > 0.0),
        inv_gram * norms[:, None] * norms[None, :],
        0.0,
    )
    r = rescaling_lag1(float(es[1:] @ es[:-1]) / float(es @ es), lags)
    z = ar1_correlate(xs, r)  # S X
    v = xs.T @ z
    t1 = xs.T @ ar1_kernel_correlate(xs, r, lags)
    sums = FittedScoreSums(ps, ps @ v @ ps, p, lags)
    for i in range(0, n, _CHUNK):
        xc, zc = xs[i : i + _CHUNK], z[i : i + _CHUNK]
        outer = np.einsum("np,nq->npq", xc, xc)
        sums.add(xc * es[i : i + _CHUNK, None], outer, np.einsum("np,nq->npq", xc, zc))
    cov = ps @ rescaled_meat(sums.result(), t1, v, lags) @ ps
    cov = 0.5 * (cov + cov.T)
    a = xs @ ps[:, list(tested)]  # each sample's influence on the tested coefficients
    dof = bartlett_dof(*influence_moments(a[None]), np.array([r]), lags)
    cov = (top * top) * (d[:, None] * cov * d[None, :])
    return np.asarray(cov, dtype=np.float64), dof
