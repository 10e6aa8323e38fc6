"""The sign rule: (up, w) and (-up, -w) give the same torques; the caller's knowledge decides."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._results import tangent_basis
from gravdir.errors import GravdirWarning
from gravdir.general._bilinear import _jacobian, _Problem
from gravdir.general._model import _direction

SignRule = Literal["hemisphere", "moment hint"]

# A moment hint within ~0.6 degrees of the joint axis says nothing about the moment's side.
_HINT_MIN_SINE = 1e-2


def _check_moment_hints(
    moment_hints: Mapping[Hashable, ArrayLike] | None,
    keys: list[Hashable],
    axes: NDArray[np.float64],
    group_of: NDArray[np.int64],
) -> dict[int, NDArray[np.float64]]:
    """Validated hints as {group index: unit vector of a x m_hint in the link frame}."""
    if moment_hints is None:
        return {}
    if not isinstance(moment_hints, Mapping):
        raise ValueError(
            f"Expected `moment_hints` to be a mapping {{group: m}}, got "
            f"{type(moment_hints).__name__}."
        )
    out: dict[int, NDArray[np.float64]] = {}
    for key, value in moment_hints.items():
        if key not in keys:
            raise ValueError(
                f"Expected the keys of `moment_hints` to be groups of `sweeps` "
                f"({', '.join(repr(k) for k in keys)}), got {key!r}."
            )
        m = _direction(value, f"moment_hints[{key!r}]")
        g = keys.index(key)
        a = axes[int(np.flatnonzero(group_of == g)[0])]
        am = np.cross(a, m)
        norm = float(np.linalg.norm(am))
        if norm < _HINT_MIN_SINE:
            raise ValueError(
                f"Expected `moment_hints[{key!r}]` to point away from the joint axis, got a "
                f"vector at {np.degrees(np.arcsin(min(norm, 1.0))):.2f}° from it."
            )
        out[g] = am / norm
    if not out:
        raise ValueError("Expected `moment_hints` to hold at least one group, got none.")
    return out


def _sign(
    up: NDArray[np.float64],
    moments: NDArray[np.float64],
    hint: NDArray[np.float64],
    hints: dict[int, NDArray[np.float64]],
) -> tuple[bool, SignRule, float]:
    """Whether to flip (up, w), the rule's name and its (signed-after-flip) cosine margin.

    With moment hints, the moments (``w = kappa g (a x m)``, kappa > 0) must point along
    ``a x m_hint``; otherwise `up` must lie in the hemisphere of `hint`.
    """
    if hints:
        total = 0.0
        weight = 0.0
        for g, direction in hints.items():
            w = moments[g]
            total += float(w @ direction)
            weight += float(np.linalg.norm(w))
        cosine = total / weight if weight > 0 else 0.0
        return cosine < 0, "moment hint", abs(cosine)
    cosine = float(up @ hint)
    return cosine < 0, "hemisphere", abs(cosine)


def _sign_sigmas(
    prob: _Problem,
    up: NDArray[np.float64],
    x: NDArray[np.float64],
    information: NDArray[np.float64],
    hint: NDArray[np.float64],
    hints: dict[int, NDArray[np.float64]],
) -> float:
    """How many of its standard deviations the sign rule's deciding quantity is from zero.

    The hemisphere rule decides by ``up . up_hint``, whose variance is ``h^T I^-1 h`` with `h`
    the hint in the tangent basis of `up` and `I` the reduced information; the moment-hint rule
    by ``sum_g w_g . (a_g x m_g)``, linear in the moments, whose covariance (with `up` free) is
    the pseudo-inverse of the full Fisher information.
    """
    if hints:
        jac = _jacobian(prob, up, tangent_basis(up), x)
        cov = np.linalg.pinv(jac.T @ jac, rcond=1e-13, hermitian=True)
        c = np.zeros(jac.shape[1])
        total = 0.0
        for g, direction in hints.items():
            coeff = prob.bases[g].T @ direction  # w_g . d = (E_g x_g) . d = x_g . (E_g^T d)
            c[2 + 2 * g : 4 + 2 * g] = coeff
            total += float(coeff @ x[g])
        variance = float(c @ cov @ c)
    else:
        h = tangent_basis(up) @ hint
        total = float(up @ hint)
        variance = float(h @ np.linalg.solve(information, h))
    if not variance > 0.0:
        return math.inf
    return abs(total) / math.sqrt(variance)


def _warn_if_marginal(
    rule: SignRule, margin: float, sigmas: float, sign_tol: float, sign_nsigma: float
) -> None:
    """Warn (at the caller of the caller) when the sign rule's cosine is below `sign_tol` or
    within `sign_nsigma` of its standard deviations of zero."""
    if margin < sign_tol or sigmas < sign_nsigma:
        boundary = np.degrees(np.arcsin(np.clip(margin, 0.0, 1.0)))
        warnings.warn(
            f"The sign of `up` is marginal: the {rule} rule decided by a cosine of "
            f"{margin:.3g} ({boundary:.3g}° from its boundary), {sigmas:.3g} standard "
            f"deviation(s) of it from zero; a sign is flagged below `sign_tol` = {sign_tol:g} "
            f"or within `sign_nsigma` = {sign_nsigma:g} standard deviations. Give a better "
            "`up_hint` or `moment_hints`.",
            GravdirWarning,
            stacklevel=3,
        )
