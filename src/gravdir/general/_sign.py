"""The sign rule: (up, w) and (-up, -w) give the same torques; the caller's knowledge decides."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_direction
from gravdir._sphere import tangent_basis
from gravdir.errors import GravdirWarning, SignConflictError
from gravdir.general._bilinear import _jacobian, _Problem

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
        m = check_direction(value, f"moment_hints[{key!r}]")
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


def _moment_terms(
    prob: _Problem,
    up: NDArray[np.float64],
    x: NDArray[np.float64],
    hints: dict[int, NDArray[np.float64]],
) -> tuple[NDArray[np.float64], dict[int, tuple[NDArray[np.float64], float]]]:
    """The covariance of (t, x) and, per hinted group, the row `c` and value of ``w_g . d_g``.

    ``w_g . d_g = (E_g x_g) . d_g = x_g . (E_g^T d_g)`` is linear in the moments; its variance
    (with `up` free) is ``c^T C c`` with `C` the pseudo-inverse of the full Fisher information.
    """
    jac = _jacobian(prob, up, tangent_basis(up), x)
    cov: NDArray[np.float64] = np.linalg.pinv(jac.T @ jac, rcond=1e-13, hermitian=True).astype(
        np.float64
    )
    rows: dict[int, tuple[NDArray[np.float64], float]] = {}
    for g, direction in hints.items():
        coeff = prob.bases[g].T @ direction
        c = np.zeros(jac.shape[1])
        c[2 + 2 * g : 4 + 2 * g] = coeff
        rows[g] = (c, float(coeff @ x[g]))
    return cov, rows


def _sigmas(value: float, variance: float) -> float:
    """``|value|`` in standard deviations; infinite where the variance is zero."""
    if not variance > 0.0:
        return math.inf
    return abs(value) / math.sqrt(variance)


def _hemisphere_sigmas(
    up: NDArray[np.float64], information: NDArray[np.float64], hint: NDArray[np.float64]
) -> float:
    """``up . hint`` in its standard deviations: variance ``h^T I^-1 h``, `h` the hint in the
    tangent basis of `up` and `I` the reduced information."""
    h = tangent_basis(up) @ hint
    return _sigmas(float(up @ hint), float(h @ np.linalg.solve(information, h)))


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
    if not hints:
        return _hemisphere_sigmas(up, information, hint)
    cov, rows = _moment_terms(prob, up, x, hints)
    c = sum((row for row, _ in rows.values()), np.zeros(cov.shape[0]))
    total = sum(value for _, value in rows.values())
    return _sigmas(total, float(c @ cov @ c))


def _check_sign_agreement(
    prob: _Problem,
    up: NDArray[np.float64],
    x: NDArray[np.float64],
    information: NDArray[np.float64],
    hint: NDArray[np.float64] | None,
    hints: dict[int, NDArray[np.float64]],
    keys: list[Hashable],
    sign_tol: float,
    sign_nsigma: float,
) -> None:
    """Raise when the caller's sign knowledge contradicts itself on these data; warn when it
    disagrees only within the margins.

    Runs after the moment-hint rule has fixed the sign (`up`, `x` already flipped). `hint` is
    the caller's own `up_hint` (None when not given). A statement disagrees when its cosine is
    negative: `up` more than 90° from `up_hint`, or a hinted group's fitted moment more than 90°
    from its hint (in the plane perpendicular to the axis). It contradicts decisively when the
    cosine is at most ``-sign_tol`` and the deciding quantity is at least `sign_nsigma` of its
    standard deviations beyond zero: the thresholds below which a sign counts as marginal.
    """
    if not hints:
        return
    decisive: list[str] = []
    marginal: list[str] = []
    subject = "`moment_hints`"
    if hint is not None:
        cosine = float(up @ hint)
        if cosine < 0.0:
            sigmas = _hemisphere_sigmas(up, information, hint)
            line = (
                f"the moment hints put `up` at {_angle_deg(cosine):.1f}° from `up_hint` "
                f"(a cosine of {cosine:.3g}, {sigmas:.3g} standard deviation(s) beyond 90°; "
                f"they give up = {np.array2string(up, precision=4)}, `up_hint` its opposite)"
            )
            if -cosine >= sign_tol and sigmas >= sign_nsigma:
                decisive.append(line)
                subject = "`up_hint` and `moment_hints`"
            else:
                marginal.append(line)
    if len(hints) > 1:
        cov, rows = _moment_terms(prob, up, x, hints)
        for g, direction in hints.items():
            w = prob.bases[g] @ x[g]
            size = float(np.linalg.norm(w))
            cosine = float(w @ direction) / size if size > 0.0 else 0.0
            if cosine >= 0.0:
                continue
            c, value = rows[g]
            sigmas = _sigmas(value, float(c @ cov @ c))
            line = (
                f"the fitted moment of group {keys[g]!r} points {_angle_deg(cosine):.1f}° away "
                f"from `moment_hints[{keys[g]!r}]` (a cosine of {cosine:.3g}, {sigmas:.3g} "
                "standard deviation(s) beyond 90°) while the hints together decide the other way"
            )
            (decisive if -cosine >= sign_tol and sigmas >= sign_nsigma else marginal).append(line)
    if decisive:
        raise SignConflictError(
            f"Expected {subject} to select one sign of `up`, got a contradiction: "
            f"{'; '.join(decisive)}. The two answers are 180° apart, so none is returned. "
            "The torque sign may be flipped: a controller reporting the opposite of gravdir's "
            "torque (the torque the actuator applies to the distal link about +axis, +dV/dq "
            "when holding still) needs `fit_sweep(..., torque_sign=-1)` for those sweeps. "
            "Otherwise a hint is wrong; see the torque-signal table in the documentation for "
            "each controller's sign and a one-pose check."
        )
    if marginal:
        warnings.warn(
            f"The sign hints disagree within their margins: {'; '.join(marginal)}. The sign "
            "was taken from `moment_hints`; check the torque sign of the sweeps "
            "(`fit_sweep(..., torque_sign=-1)`) and the hints.",
            GravdirWarning,
            stacklevel=3,
        )


def _angle_deg(cosine: float) -> float:
    """The angle of `cosine`, in degrees."""
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


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
