"""Upper tails of the reference distributions of gravdir's tests (chi-square and F).

SciPy's special functions are imported on first use, under the lock of every deferred import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gravdir._imports import IMPORT_LOCK

__all__ = ["chi2_sf", "f_sf"]


def chi2_sf(x: float, dof: int) -> float:
    """Probability that a chi-square variable of `dof` degrees of freedom exceeds `x` (1 when
    `dof` is 0)."""
    if dof <= 0:
        return 1.0
    with IMPORT_LOCK:
        from scipy.special import chdtrc

    return float(chdtrc(dof, max(x, 0.0)))


def f_sf(x: Any, dfn: Any, dfd: float) -> Any:
    """Probability that an F(`dfn`, `dfd`) variable exceeds `x`, elementwise (1 where `dfn` is
    0); a float for scalar arguments."""
    with IMPORT_LOCK:
        from scipy.special import fdtrc

    k = np.asarray(dfn)
    value = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
    out = np.where(k >= 1, fdtrc(np.maximum(k, 1), dfd, value), 1.0)
    return float(out) if out.ndim == 0 else out
