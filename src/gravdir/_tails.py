"""Upper tails of the reference distributions of gravdir's tests (chi-square, F and
Hotelling's T²).

SciPy's special functions are imported on first use, under the lock of every deferred import;
the chi-square tail of even degrees of freedom (every test of 2-D directions) needs none.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gravdir._imports import IMPORT_LOCK

__all__ = ["chi2_sf", "f_sf", "hotelling_sf"]


def chi2_sf(x: float, dof: int) -> float:
    """Probability that a chi-square variable of `dof` degrees of freedom exceeds `x` (1 when
    `dof` is 0).

    For even `dof` it is the Poisson sum ``exp(-h) sum_{j < dof/2} h^j / j!``, ``h = x / 2``,
    each term in logarithms so that none overflows (exact, and without SciPy); for odd `dof`,
    SciPy's ``chdtrc``.
    """
    if dof <= 0:
        return 1.0
    h = 0.5 * x
    if h <= 0.0:
        return 1.0
    if dof % 2 == 0:
        log_h = math.log(h)
        terms = (math.exp(j * log_h - h - math.lgamma(j + 1.0)) for j in range(dof // 2))
        return min(math.fsum(terms), 1.0)
    with IMPORT_LOCK:
        from scipy.special import chdtrc

    return float(chdtrc(dof, x))


# Beyond these denominator degrees of freedom F(k, dfd) is chi-square(k) / k to double
# precision (the tails differ by O(1 / dfd)); SciPy's ``fdtrc`` returns NaN near 1e300.
_F_LIMIT_DFD = 1e15


def f_sf(x: Any, dfn: Any, dfd: float) -> Any:
    """Probability that an F(`dfn`, `dfd`) variable exceeds `x`, elementwise (1 where `dfn` is
    0); a float for scalar arguments. An infinite `dfd`, or one beyond 1e15, gives the
    chi-square tail of ``dfn x``."""
    with IMPORT_LOCK:
        from scipy.special import chdtrc, fdtrc

    k = np.asarray(dfn)
    value = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    kk = np.maximum(k, 1)
    tail = chdtrc(kk, kk * value) if dfd > _F_LIMIT_DFD else fdtrc(kk, dfd, value)
    out = np.where(k >= 1, tail, 1.0)
    return float(out) if out.ndim == 0 else out


def hotelling_sf(t: float, d: int, nu: float) -> float:
    """Probability that Hotelling's T² of a `d`-dimensional Gaussian difference, measured in a
    covariance estimated with `nu` degrees of freedom (a Wishart matrix over `nu`), exceeds `t`:
    ``t (nu - d + 1) / (d nu)`` on F(d, nu - d + 1); the chi-square for an infinite `nu`, and 1
    where `d` is 0 or ``nu <= d - 1`` (no reference)."""
    if d < 1 or not nu > d - 1:
        return 1.0
    if not math.isfinite(nu):
        return chi2_sf(t, d)
    return float(f_sf(t * (nu - d + 1) / (d * nu), d, nu - d + 1))
