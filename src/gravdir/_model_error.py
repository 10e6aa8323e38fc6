"""The Paule--Mandel model-error variance: the one root rule behind every estimated model error.

A model error every source carries whole adds a variance :math:`\\tau^2` to each source's
covariance; the consistency statistic of the sources, :math:`Q(\\tau^2)`, then falls as
:math:`\\tau^2` grows (every weight falls in the Loewner order). The Paule--Mandel estimate is
0 where :math:`Q(0)` is at most its degrees of freedom, else the root of :math:`Q(\\tau^2) =`
dof. Each caller supplies its statistic: :func:`gravdir.fuse_up` on the sphere, the tracker's
change detector in the tangent plane of its reference. Derivation: the *Fusion* page, "Model
error".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from gravdir._imports import IMPORT_LOCK

__all__ = ["MAX_MODEL_ERROR", "ModelError", "check_model_error", "paule_mandel"]

ModelError = float | Literal["estimate"]

#: Largest model-error standard deviation given, rad (a quarter turn: beyond it the tangent
#: plane no longer describes the errors).
MAX_MODEL_ERROR = 0.5 * math.pi
#: Relative tolerance of the Paule--Mandel variance: far below the spread of its own estimate
#: (estimated with ν degrees of freedom, a variance is uncertain by about sqrt(2 / ν) of itself).
VARIANCE_RTOL = 1e-6
#: Doublings of the bracket allowed when the sphere's curvature moves the statistic past the
#: bound of the tangent-plane model (which holds in that model exactly).
MAX_DOUBLINGS = 60


def paule_mandel(excess: Callable[[float], float], high: float) -> float:
    """The variance at which ``excess(variance)`` (the statistic less its degrees of freedom,
    decreasing, positive at 0) reaches 0, rad².

    `high` is a variance expected to bracket the root (``S / dof``, S the sum of squared
    tangent distances to the fusion, brackets it in the tangent-plane model exactly); it is
    doubled up to :data:`MAX_DOUBLINGS` times until ``excess(high) <= 0``, and the largest tried
    is returned if none does (beyond any variance a tangent plane describes). Brent's method
    finds the root to :data:`VARIANCE_RTOL`.
    """
    high = max(high, np.finfo(float).tiny)
    for _ in range(MAX_DOUBLINGS):
        if excess(high) <= 0.0:
            break
        high *= 2.0
    else:
        return high
    with IMPORT_LOCK:
        from scipy.optimize import brentq  # imported here: the rest of gravdir does without it

    return float(brentq(excess, 0.0, high, xtol=VARIANCE_RTOL * high * 1e-3, rtol=VARIANCE_RTOL))


def check_model_error(model_error_std: Any) -> ModelError:
    """`model_error_std` checked: ``"estimate"`` or a standard deviation in [0, π/2] rad."""
    if isinstance(model_error_std, str):
        if model_error_std != "estimate":
            raise ValueError(
                "Expected `model_error_std` to be a standard deviation, rad, or 'estimate', got "
                f"{model_error_std!r}."
            )
        return "estimate"
    if isinstance(model_error_std, bool | np.bool_) or not isinstance(
        model_error_std, int | float | np.integer | np.floating
    ):
        raise ValueError(
            "Expected `model_error_std` to be a standard deviation, rad, or 'estimate', got "
            f"{type(model_error_std).__name__}."
        )
    value = float(model_error_std)
    if not 0.0 <= value <= MAX_MODEL_ERROR:
        raise ValueError(
            f"Expected `model_error_std` in [0, {MAX_MODEL_ERROR:.4g}] rad, got {value!r}."
        )
    return value
