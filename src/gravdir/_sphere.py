"""The maths on the unit sphere that every gravity-direction estimator calls.

One place for the tangent basis of a unit vector, the retraction of a tangent step, the
Fibonacci start grids, the damped Gauss–Newton loop that refines `up` on the sphere
(:func:`refine_direction`), and the conversion between the information and the covariance of
`up` with its one floor: a tangent direction whose information is at most :data:`REL_FLOOR` of the
largest, or below :data:`ABS_FLOOR` 1/rad², is undetermined and gets infinite variance.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_same_shape, check_unit_vector

__all__ = [
    "ABS_FLOOR",
    "DECREMENT",
    "INFORMATION_RTOL",
    "REL_FLOOR",
    "Linearisation",
    "Refined",
    "checked_up_information",
    "cov_from_up_information",
    "fibonacci_directions",
    "informative",
    "refine_direction",
    "retract",
    "tangent_basis",
    "up_information_from_cov",
    "up_information_from_tangent",
]

# Eigenvalues of a tangent-plane information at or below this fraction of the largest carry no
# information: rounding of a product ``Bᵀ F B`` is near 1e-16 of the largest, so 1e-12 leaves
# four digits of margin above it.
REL_FLOOR = 1e-12
# Information of `up` below this (a standard deviation beyond 1e100 rad) counts as none: its
# inverse would overflow.
ABS_FLOOR = 1e-200
# An information's asymmetry, and its most negative tangent eigenvalue, that count as rounding:
# this fraction of its largest entry (eigenvalue). A product ``Bᵀ F B`` rounds near 1e-16 of it.
INFORMATION_RTOL = 1e-9
# The golden angle, rad: successive points of a Fibonacci lattice turn by it about the z axis.
_GOLDEN_ANGLE = math.pi * (3.0 - math.sqrt(5.0))
# The caller's state carried through :func:`refine_direction` (its linear parameters, ...).
S = TypeVar("S")


def tangent_basis(up: ArrayLike) -> NDArray[np.float64]:
    """Orthonormal rows (2, 3) spanning the plane perpendicular to the unit vector `up`.

    The first row is the direction of increasing tilt where `up` is not vertical (the
    Gram–Schmidt complement of the base axis least aligned with `up` otherwise); the second is
    ``up × first``, so (first, second, up) is right-handed. A stack of unit vectors (..., 3)
    gives a stack of bases (..., 2, 3); the columns of a basis are its transpose.

    Examples
    --------
    >>> tangent_basis([0.0, 0.6, 0.8]).round(6) + 0.0
    array([[ 0. ,  0.8, -0.6],
           [-1. ,  0. ,  0. ]])
    """
    u = np.asarray(up, dtype=np.float64)
    if u.ndim > 1:
        return _tangent_bases(u)
    axis = np.zeros(3)
    axis[int(np.argmin(np.abs(u)))] = 1.0
    if abs(u[2]) < 1.0 - 1e-12:
        axis = np.array([0.0, 0.0, -1.0])
    e1 = axis - (axis @ u) * u
    e1 /= np.linalg.norm(e1)
    return np.stack([e1, np.cross(u, e1)])


def _tangent_bases(u: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`tangent_basis` of every unit vector of a stack (..., 3) at once: (..., 2, 3)."""
    axis = np.zeros_like(u)
    np.put_along_axis(axis, np.argmin(np.abs(u), axis=-1)[..., None], 1.0, axis=-1)
    tilted = np.abs(u[..., 2]) < 1.0 - 1e-12
    axis = np.where(tilted[..., None], np.array([0.0, 0.0, -1.0]), axis)
    with np.errstate(under="ignore"):
        e1 = axis - np.sum(axis * u, axis=-1, keepdims=True) * u
        e1 = e1 / np.linalg.norm(e1, axis=-1, keepdims=True)
        e2 = np.cross(u, e1)
    return np.stack([e1, e2], axis=-2)


def retract(
    up: NDArray[np.float64], basis: NDArray[np.float64], step: NDArray[np.float64]
) -> NDArray[np.float64]:
    """`up` moved by `step` (2,) in the tangent plane spanned by the rows of `basis`, normalised."""
    v = up + step @ basis
    out: NDArray[np.float64] = v / np.linalg.norm(v)
    return out


def fibonacci_directions(count: int, *, hemisphere: bool = False) -> NDArray[np.float64]:
    """`count` nearly uniform unit vectors (count, 3) on a Fibonacci lattice.

    The lattice of the whole sphere, or with `hemisphere` of the upper half (z > 0), where each
    line through the origin is met once: the start grid of a cost that is even in `up`. Point
    ``k`` has ``z = 1 - (k + 1/2) s / count`` (``s`` = 2 on the sphere, 1 on the hemisphere) and
    turns by the golden angle from point ``k - 1``.

    Examples
    --------
    >>> grid = fibonacci_directions(100, hemisphere=True)
    >>> grid.shape, bool(np.allclose(np.linalg.norm(grid, axis=1), 1.0)), bool(grid[:, 2].min() > 0)
    ((100, 3), True, True)
    """
    k = np.arange(count) + 0.5
    z = 1.0 - (1.0 if hemisphere else 2.0) * k / count
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = _GOLDEN_ANGLE * k
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1)


def informative(values: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Which eigenvalues (..., k) of an information carry information: the one floor.

    An eigenvalue counts where it exceeds :data:`REL_FLOOR` times the largest of its row and
    :data:`ABS_FLOOR`; none counts where the largest is not positive (or NaN).
    """
    top = np.max(values, axis=-1, keepdims=True)
    with np.errstate(under="ignore", invalid="ignore"):
        out: NDArray[np.bool_] = (top > 0) & (values > np.maximum(REL_FLOOR * top, ABS_FLOOR))
    return out


def checked_up_information(
    result: Any, name: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """`up` (..., 3) and `up_information` (..., 3, 3) of the gravity-direction result `result`,
    checked: the one rule for every function that reads a result's direction and information.

    `up` is a unit vector within 1e-6 (returned normalised); the information is finite, its
    leading axes broadcast with `up`'s, symmetric and positive semidefinite in the tangent plane
    of `up` (both within :data:`INFORMATION_RTOL` of its largest entry, eigenvalue), with
    eigenvalues that do not overflow. It is returned symmetrised, broadcast to `up`'s leading
    axes. A `ValueError` names ``{name}.up`` or ``{name}.up_information``.
    """
    up = check_unit_vector(result.up, f"{name}.up")
    with np.errstate(under="ignore"):
        up = up / np.linalg.norm(up, axis=-1, keepdims=True)
    label = f"{name}.up_information"
    info = check_array(result.up_information, label, tail=(3, 3))
    batch = check_same_shape(**{f"{name}.up": up[..., 0], label: info[..., 0, 0]})
    up = np.broadcast_to(up, (*batch, 3))
    info = np.broadcast_to(info, (*batch, 3, 3))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scale = np.max(np.abs(info), axis=(-2, -1), initial=0.0)
        asymmetry = np.max(np.abs(info - np.swapaxes(info, -1, -2)), axis=(-2, -1), initial=0.0)
        info = 0.5 * (info + np.swapaxes(info, -1, -2))
        b = tangent_basis(up)
        vals = np.linalg.eigvalsh(b @ info @ np.swapaxes(b, -1, -2)) if info.size else info
    if np.any(asymmetry > INFORMATION_RTOL * scale):
        worst = float(np.max(asymmetry / np.where(scale > 0, scale, 1.0)))
        raise ValueError(
            f"Expected `{label}` to be symmetric (within {INFORMATION_RTOL:g} of its largest "
            f"entry), got an asymmetry of {worst:.3g} of it."
        )
    if not np.all(np.isfinite(vals)):
        raise ValueError(
            f"Expected `{label}` to be representable: its eigenvalues overflow the float range."
        )
    if vals.size:
        top = np.max(np.abs(vals), axis=-1)
        low = np.min(vals, axis=-1)
        if np.any(low < -INFORMATION_RTOL * top):
            worst = float(np.min(low / np.where(top > 0, top, 1.0)))
            raise ValueError(
                f"Expected `{label}` to be positive semidefinite in the tangent plane of `up` "
                f"(an information), got an eigenvalue of {worst:.3g} times its largest."
            )
    return np.array(up), np.array(info)


def up_information_from_tangent(
    up: ArrayLike, basis: ArrayLike, information: ArrayLike
) -> NDArray[np.float64]:
    """The (3, 3) information :math:`B^\\top I B` of a (2, 2) tangent-plane information `I`.

    `basis` (2, 3) has orthonormal rows perpendicular to `up`. Stacks (..., 2, 3) and
    (..., 2, 2) give a stack (..., 3, 3).
    """
    b = np.asarray(basis, dtype=np.float64)
    info = np.swapaxes(b, -1, -2) @ np.asarray(information, dtype=np.float64) @ b
    out: NDArray[np.float64] = 0.5 * (info + np.swapaxes(info, -1, -2))
    return out


def up_information_from_cov(
    up: ArrayLike,
    cov: ArrayLike,
    *,
    basis: ArrayLike | None = None,
    min_variance: float = 0.0,
) -> NDArray[np.float64]:
    """The information of `up` from a (3, 3) or tangent-plane (2, 2) covariance of it.

    The covariance is projected on the tangent plane of `up` and pseudo-inverted there; a (2, 2)
    covariance is in the rows of `basis` (by default :func:`tangent_basis` of `up`). Variances
    are first raised to `min_variance` (a caller whose estimate is exact to rounding keeps its
    information finite that way). A direction of infinite (or non-finite) variance carries zero
    information; a direction of zero variance (with `min_variance` 0) would carry infinite
    information and is refused by the callers that build results.
    """
    u = np.asarray(up, dtype=np.float64)
    b = tangent_basis(u) if basis is None else np.asarray(basis, dtype=np.float64)
    c = np.asarray(cov, dtype=np.float64)
    c2 = b @ c @ b.T if c.shape == (3, 3) else c
    if not np.all(np.isfinite(c2)):
        # An infinite variance along one direction: keep the other direction only where the
        # finite part is diagonal in the tangent basis; otherwise nothing is known.
        info2 = np.zeros((2, 2))
        for k in range(2):
            var = max(c2[k, k], min_variance) if np.isfinite(c2[k, k]) else c2[k, k]
            if np.isfinite(var) and var > 0 and np.all(np.isfinite(c2[k])):
                other = 1 - k
                if not np.isfinite(c2[other, other]):
                    info2[k, k] = 1.0 / var
        return up_information_from_tangent(u, b, info2)
    c2 = 0.5 * (c2 + c2.T)
    vals, vecs = np.linalg.eigh(c2)
    vals = np.maximum(vals, min_variance)
    pos = vals > 0
    scaled = np.where(pos, vecs / np.where(pos, vals, 1.0), 0.0)
    return up_information_from_tangent(u, b, scaled @ vecs.T)


def cov_from_up_information(up: ArrayLike, information: ArrayLike) -> NDArray[np.float64]:
    """The (3, 3) covariance of `up` from its (3, 3) information (pseudo-inverse in the plane).

    A tangent direction whose information is zero by :func:`informative` (at most 1e-12 of the
    largest, below 1e-200 1/rad² — a standard deviation beyond 1e100 rad — or exactly zero when
    all are) gets infinite variance: the covariance is infinite along it and finite elsewhere,
    with exact zeros kept where that direction has no component.

    Examples
    --------
    >>> up = np.array([0.0, 0.0, 1.0])
    >>> cov_from_up_information(up, np.diag([4.0, 0.0, 0.0]))
    array([[0.25, 0.  , 0.  ],
           [0.  ,  inf, 0.  ],
           [0.  , 0.  , 0.  ]])
    """
    u = np.asarray(up, dtype=np.float64)
    b = tangent_basis(u)
    info2 = b @ np.asarray(information, dtype=np.float64) @ b.T
    vals, vecs = np.linalg.eigh(0.5 * (info2 + info2.T))
    kept = informative(vals)
    cov = np.zeros((3, 3))
    for k in range(2):
        d = vecs[:, k] @ b  # the eigen-direction in base coordinates
        outer = np.outer(d, d)
        if kept[k]:
            cov += outer / vals[k]
        else:
            cov = np.where(np.abs(outer) > 1e-15, np.inf, cov)
    return cov


# The damped Gauss–Newton loop on the sphere (see `refine_direction`). Levenberg–Marquardt
# damping, relative to the unit diagonal of the Jacobi-scaled normal matrix: small enough that
# steps near the solution are Gauss–Newton steps (quadratic convergence on noise-free data),
# large enough to keep a step from a poor start on the sphere. It shrinks tenfold after a step
# that is kept and grows tenfold after one that is refused; beyond _DAMPING_MAX (a step 1e-12 of
# the Gauss–Newton step along the weakest direction) no step lowers the cost and the run stops.
_DAMPING_START = 1e-3
_DAMPING_MIN = 1e-12
_DAMPING_MAX = 1e12
# A Gauss–Newton decrement (the chi-square the remaining step would remove) at most this is a
# remaining step below 1e-6 of the estimate's standard deviation: nothing the data can tell.
DECREMENT = 1e-12
# A cost that changed by at most this fraction of itself (or the caller's `cost_slack`) did not
# change: a sum of squares in float64 rounds near 1e-16 of itself, times the terms' count.
_TIE = 1e-12
# Iterations in a row at the resolution of the data (see `refine_direction`) after which the
# run has converged though its proposed steps still move: steps at the rounding level of the
# sums that build the gradient wander rather than shrink.
_STALL = 8
# Directions of the Jacobi-scaled normal matrix kept in a step: eigenvalues above 1e-12 of the
# largest for a formed matrix (rounded near 1e-16 of it), singular values above 1e-12 of the
# largest for a Jacobian (rounded near 1e-16 of itself); the rest are undetermined and dropped.
_RCOND = 1e-12


@dataclass(frozen=True)
class Linearisation:
    """The Gauss–Newton model of a cost ``r^T r`` at a point: ``grad = J^T r`` (k,) and either
    ``info = J^T J`` (k, k) or `jacobian` ``J`` (m, k) itself (more accurate where it is at hand).

    The first two of the k parameters are the tangent coordinates of `up` in the rows of its
    :func:`tangent_basis`; the rest are the caller's (nonlinear ones it moves itself, linear ones
    it projects out again at every trial). ``r`` is whitened (data minus model over its standard
    deviation), so ``info`` is a Fisher information and the cost a chi-square.
    """

    grad: NDArray[np.float64]
    info: NDArray[np.float64] | None = None
    jacobian: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class Refined(Generic[S]):
    """What :func:`refine_direction` returns: the final `up`, its `cost` and the caller's `state`
    there, whether the run `converged` and its iterations `n_iter` (trial steps, kept or not)."""

    up: NDArray[np.float64]
    cost: float
    state: S
    converged: bool
    n_iter: int


class _Steps:
    """Damped Gauss–Newton steps of one linearisation: Jacobi-scaled, pseudo-inverse on the
    directions it determines (:data:`_RCOND`)."""

    def __init__(self, lin: Linearisation) -> None:
        if lin.jacobian is not None:
            diag = np.sqrt(np.einsum("ij,ij->j", lin.jacobian, lin.jacobian))
        else:
            assert lin.info is not None
            diag = np.sqrt(np.maximum(np.diag(lin.info), 0.0))
        self.scale = np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)
        self.finite = bool(np.all(np.isfinite(diag)) and np.all(np.isfinite(lin.grad)))
        self.informative = self.finite and bool(np.any(diag[:2] > 0))
        if not self.informative:
            return
        if lin.jacobian is not None:
            _, sv, vt = np.linalg.svd(lin.jacobian * self.scale, full_matrices=False)
            keep = sv > _RCOND * sv.max(initial=0.0)
            self.vals, self.vecs = sv**2, vt.T
        else:
            assert lin.info is not None
            vals, self.vecs = np.linalg.eigh(lin.info * self.scale[:, None] * self.scale[None, :])
            keep = vals > _RCOND * max(float(vals.max()), 0.0)
            self.vals = vals
        self.keep = keep
        self.proj = self.vecs.T @ (lin.grad * self.scale)
        safe = np.where(keep, self.vals, 1.0)
        # The chi-square the Gauss-Newton step removes: g^T F^+ g.
        self.decrement = float(np.sum(np.where(keep, self.proj**2 / safe, 0.0)))

    def step(self, damping: float) -> NDArray[np.float64]:
        """The step ``(F + damping D)^+ g``, D the diagonal of F (Marquardt's scaling)."""
        inv = np.where(self.keep, 1.0 / (np.where(self.keep, self.vals, 1.0) + damping), 0.0)
        out: NDArray[np.float64] = (self.vecs @ (inv * self.proj)) * self.scale
        return out


def refine_direction(
    up: NDArray[np.float64],
    cost: float,
    state: S,
    evaluate: Callable[[NDArray[np.float64], NDArray[np.float64], S], tuple[float, S] | None],
    linearise: Callable[[NDArray[np.float64], NDArray[np.float64], S], Linearisation],
    *,
    max_iter: int,
    xtol: float,
    n_free: int = 2,
    cost_slack: float = 0.0,
) -> Refined[S]:
    """Damped Gauss–Newton (variable projection) from the unit vector `up` on the sphere.

    `cost` and `state` are the caller's at `up`. At every point reached the loop asks
    `linearise(up, basis, state)` for the Gauss–Newton model (:class:`Linearisation`, ``basis``
    the :func:`tangent_basis` of `up`); each iteration takes the Levenberg–Marquardt step ``δ``
    and asks `evaluate(trial, δ, state)` for the cost and state at ``trial = retract(up, basis,
    δ[:2])`` (the caller moves its other nonlinear parameters by ``δ[2:n_free]`` and projects
    its linear ones out; None refuses the trial). A trial is kept when its cost does not exceed
    the current one by more than the cost's rounding level (`cost_slack`, at least 1e-12 of the
    cost). At most `max_iter` trials, kept or refused.

    Converged when the undamped step ``δ₀`` is at most `xtol` rad in the tangent plane and at
    most `xtol` in every other free parameter; or after :data:`_STALL` points in a row at the
    resolution of the data, where the decrement ``g^T F^+ g`` of ``δ₀`` (the chi-square it would
    remove) is at most :data:`DECREMENT` or the step to the point changed the cost by its
    rounding level only; or, when the trials or the
    damping run out, if the decrement is at most :data:`DECREMENT` (a remaining step below 1e-6
    standard deviation). Not converged otherwise, and where the model holds no information on
    `up` or is not finite. Derivation: the *General estimator* page of the documentation.
    """
    damping = _DAMPING_START
    steps: _Steps | None = None
    basis = tangent_basis(up)
    stalled, flat = 0, False
    for it in range(1, max_iter + 1):
        if steps is None:
            basis = tangent_basis(up)
            steps = _Steps(linearise(up, basis, state))
            if not steps.informative:
                return Refined(up, cost, state, False, it)
            full = steps.step(0.0)
            size = max(
                float(np.linalg.norm(full[:2])), float(np.max(np.abs(full[2:n_free]), initial=0))
            )
            if size <= xtol:
                return Refined(up, cost, state, True, it)
            stalled = stalled + 1 if steps.decrement <= DECREMENT or flat else 0
            if stalled >= _STALL:
                return Refined(up, cost, state, True, it)
        delta = steps.step(damping)
        trial = retract(up, basis, delta[:2])
        out = evaluate(trial, delta, state)
        tie = max(cost_slack, _TIE * abs(cost))
        if out is not None and out[0] <= cost + tie:
            flat = out[0] >= cost - tie
            up, (cost, state) = trial, out
            damping = max(damping / 10.0, _DAMPING_MIN)
            steps = None
        else:
            damping *= 10.0
            if damping > _DAMPING_MAX:
                return Refined(up, cost, state, steps.decrement <= DECREMENT, it)
    if steps is None:  # the last trial was kept: the model at the point reached
        steps = _Steps(linearise(up, tangent_basis(up), state))
    return Refined(up, cost, state, steps.informative and steps.decrement <= DECREMENT, max_iter)
