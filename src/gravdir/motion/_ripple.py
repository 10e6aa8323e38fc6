"""Gear ripple in a motion log: torque components periodic in a high order of a joint's angle.

A harmonic drive or a geared motor adds to the logged torque of joint ``j`` a ripple
:math:`\\sum_c a_c \\sin(k_c q_j) + b_c \\cos(k_c q_j)` whose orders :math:`k_c` (cycles per joint
revolution) are high: the gear ratio and its multiples. Such a component is almost orthogonal to
the rigid-body and friction columns of the motion model, which are smooth in the joint angle,
except where the joint moves slowly and the ripple looks like a slowly varying torque. It is
found in the residuals of a fit without it (a periodogram over the joint angle) and removed from
the logged torque before the fit is repeated: block-coordinate least squares, which converges to
the joint fit in one or two rounds because the blocks are nearly orthogonal.

The periodogram of samples :math:`x_s` (joint angle) and residuals :math:`e_s` is
:math:`P(k) = |\\sum_s e_s \\exp(-i k x_s)|^2 / (N \\hat\\sigma^2)`, which is exponentially
distributed with mean 1 at each order for white residuals whatever the spread of the angles. It
is evaluated for all orders at once by spreading the residuals onto a uniform grid of angles
(linear interpolation, whose transform :math:`\\operatorname{sinc}^2(k h / 2)` is divided out) and
one FFT; the highest peak is refined by maximizing the exact least-squares fit of a sine and a
cosine of that order, and kept when the reduction of the sum of squares it gives, over
:math:`\\hat\\sigma^2`, exceeds :math:`2 \\ln(M / \\alpha)`: for one order that ratio is chi-square
with two degrees of freedom (tail :math:`e^{-x/2}`), and :math:`M` counts six orders per
resolution cell :math:`2\\pi/\\text{span}` of the band (the maximum over a continuous band, as
measured on white residuals), so that white residuals give a component with probability
:math:`\\alpha` = `significance`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from gravdir._imports import IMPORT_LOCK

# Orders searched, cycles per joint revolution: below the lower bound a periodic torque is a
# smooth function of the angle that the rigid-body model competes for; the upper bound is the
# gear ratio of a harmonic drive (at most about 160) several times over.
MIN_ORDER = 50.0
MAX_ORDER = 2000.0
# Grid points per period of the highest order, and zero padding of the FFT.
_POINTS_PER_PERIOD = 8
_PAD = 4
# Effective independent orders per resolution cell when the peak is refined over the band (the
# maximum over a continuous band exceeds that over the cell centres): benchmarks/motion_ripple.py.
_CONTINUOUS = 6.0
# False-alarm probability of one detection on white residuals (over every order searched).
SIGNIFICANCE = 1e-3


def _basis(x: NDArray[np.float64], orders: list[float]) -> NDArray[np.float64]:
    """Columns ``sin(k x), cos(k x)`` of every order, shape (N, 2 c)."""
    if not orders:
        return np.zeros((x.size, 0))
    k = np.asarray(orders)
    kx = x[:, None] * k[None, :]
    return np.stack([np.sin(kx), np.cos(kx)], axis=2).reshape(x.size, 2 * k.size)


def _fit_sines(
    x: NDArray[np.float64], e: NDArray[np.float64], orders: list[float]
) -> tuple[NDArray[np.float64], float]:
    """Least-squares sine and cosine coefficients (c, 2) of `orders` in `e` (with a constant),
    and the reduction of the sum of squares they give over the constant alone."""
    b = np.concatenate([np.ones((x.size, 1)), _basis(x, orders)], axis=1)
    rhs = b.T @ e
    coef = np.linalg.lstsq(b.T @ b, rhs, rcond=1e-12)[0]
    reduction = float(coef @ rhs) - float(e.sum()) ** 2 / e.size
    return coef[1:].reshape(-1, 2), reduction


def _periodogram(
    x: NDArray[np.float64], e: NDArray[np.float64], lo: float, hi: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Orders in [lo, hi] and their unnormalized periodogram ``|sum e exp(-i k x)|^2``."""
    h = 2.0 * math.pi / (hi * _POINTS_PER_PERIOD)
    t = (x - x.min()) / h
    i = np.floor(t).astype(np.int64)
    f = t - i
    size = int(i.max()) + 2
    grid = np.bincount(i, (1.0 - f) * e, minlength=size) + np.bincount(i + 1, f * e, minlength=size)
    n_fft = 1 << int(math.ceil(math.log2(_PAD * size)))
    spectrum = np.fft.rfft(grid, n_fft)
    orders = (2.0 * math.pi / (n_fft * h)) * np.arange(spectrum.size, dtype=np.float64)
    keep = (orders >= lo) & (orders <= hi)
    kernel = np.sinc(orders[keep] * h / (2.0 * math.pi)) ** 2  # numpy's sinc has the pi
    power: NDArray[np.float64] = np.abs(spectrum[keep] / kernel) ** 2
    return orders[keep], power


def _refine(
    x: NDArray[np.float64],
    e: NDArray[np.float64],
    orders: list[float],
    k0: float,
    width: float,
    lo: float,
) -> float:
    """The order near `k0` (within `width`, and in [lo, MAX_ORDER]) whose sine and cosine,
    fitted with `orders`, reduce the sum of squares of `e` most."""
    with IMPORT_LOCK:
        from scipy.optimize import minimize_scalar  # slow to import: only when needed

    res = minimize_scalar(
        lambda k: -_fit_sines(x, e, [*orders, float(k)])[1],
        bounds=(max(k0 - width, lo), min(k0 + width, MAX_ORDER)),
        method="bounded",
        options={"xatol": 1e-6 * max(k0, 1.0)},
    )
    return float(res.x)


def detect_ripple(
    q: NDArray[np.float64],
    residual: NDArray[np.float64],
    used: NDArray[np.bool_],
    max_components: int,
    significance: float = SIGNIFICANCE,
) -> NDArray[np.float64]:
    """Ripple components of every joint found in the residuals of a fit.

    `q`, `residual` and `used` are (N, n); at most `max_components` per joint. Returns rows
    ``(joint, order, a, b)`` (0-based joint) of the ripple ``a sin(order q) + b cos(order q)``,
    shape (r, 4).
    """
    rows: list[list[float]] = []
    for j in range(q.shape[1]):
        x = q[used[:, j], j]
        e = residual[used[:, j], j]
        # In units of the largest residual, so that any finite log gives finite sums.
        scale = float(np.max(np.abs(e), initial=0.0))
        if x.size < 16 or not (0.0 < scale < math.inf):
            continue
        e = e / scale
        span = float(x.max() - x.min())
        # Orders resolved over the angles the joint covers: at least two periods of the lowest.
        lo = max(MIN_ORDER, 4.0 * math.pi / max(span, 1e-300))
        if not span > 0 or lo >= MAX_ORDER:
            continue
        # Orders in the band: one independent order per 2 pi / span, six times over for the
        # maximum over a continuous band (the refined peak), as measured on white residuals.
        n_independent = max(_CONTINUOUS * (MAX_ORDER - lo) * span / (2.0 * math.pi), 1.0)
        # Twice the reduction over the noise variance is chi-square with 2 degrees of freedom
        # for one order: its tail exp(-x / 2), over every independent order.
        level = 2.0 * math.log(n_independent / significance)
        orders: list[float] = []
        total = float(np.sum((e - e.mean()) ** 2))
        explained = 0.0
        for _ in range(max_components):
            coef, explained = _fit_sines(x, e, orders)
            left = e - e.mean() - _basis(x, orders) @ coef.ravel()
            sigma2 = (total - explained) / e.size
            if not sigma2 > 0:
                break
            grid, power = _periodogram(x, left - left.mean(), lo, MAX_ORDER)
            if grid.size == 0:
                break
            k0 = float(grid[int(np.argmax(power))])
            k = _refine(x, e, orders, k0, 2.0 * math.pi / span, lo)
            _, more = _fit_sines(x, e, [*orders, k])
            # The periodogram statistic of the refined component given the others.
            if not (more - explained) / sigma2 > level:
                break
            orders.append(k)
        if orders:
            coef, _ = _fit_sines(x, e, orders)
            coef = coef * scale
            for k, (a, b) in zip(orders, coef, strict=True):
                rows.append([float(j), k, float(a), float(b)])
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4)


def ripple_torque(q: NDArray[np.float64], ripple: NDArray[np.float64]) -> NDArray[np.float64]:
    """The ripple torque of rows ``(joint, order, a, b)`` at joint angles `q` (N, n)."""
    out = np.zeros_like(q)
    for j, k, a, b in ripple:
        col = int(j)
        out[:, col] += a * np.sin(k * q[:, col]) + b * np.cos(k * q[:, col])
    return out


def ripple_rows(ripple: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows (joint, order, a, b) of ``a sin(k q) + b cos(k q)`` as (joint, order, amplitude,
    phase) of ``amplitude sin(k q + phase)``."""
    out = ripple.copy()
    out[:, 2] = np.hypot(ripple[:, 2], ripple[:, 3])
    out[:, 3] = np.arctan2(ripple[:, 3], ripple[:, 2])
    return out


def ripple_coefficients(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """The inverse of :func:`ripple_rows`."""
    out = rows.copy()
    out[:, 2] = rows[:, 2] * np.cos(rows[:, 3])
    out[:, 3] = rows[:, 2] * np.sin(rows[:, 3])
    return out
