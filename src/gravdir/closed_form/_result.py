"""The results of the closed-form solvers, and the uncertainty of `up` they carry.

`up` is a smooth function of the Cartesian coefficients ``(a, b) = A (cos phi, sin phi)`` of
the fitted gravity sinusoids (docs/closed_form.md, "`up` from the sinusoid coefficients"), so
its covariance is propagated from theirs, never through (theta1, theta2): theta1 is undefined
where gravity lies along joint 1, `up` is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import norm
from gravdir._results import UpResult
from gravdir._sphere import up_information_from_cov
from gravdir.closed_form._inputs import _Fit
from gravdir.closed_form._model import (
    BETA,
    DELTA,
    L3_RATIO,
    MERGE,
    SCALE,
    THETA1,
    THETA2,
    RootFinder,
)
from gravdir.frames import up_from_canonical
from gravdir.sweep import wrap_angle

__all__ = ["ClosedFormEstimate", "ClosedFormRoot"]

Zero = Literal["unstable", "stable", "none"]
SolverName = Literal["point_mass", "l2_offset", "l3_offset", "two_branch"]

# Relative step of the central-difference Jacobian of `up` and (theta1, theta2) with respect to
# the sinusoid coefficients (a, b) of each fit, in units of that fit's amplitude: the truncation
# error is ~ step**2 = 1e-12 and the rounding error ~ eps / step = 2e-10 (relative), the same
# step as an amplitude step of 1e-6 A or a phase step of 1e-6 rad.
_FD_STEP = 1e-6
# Smallest standard deviation of `up` along a tangent direction, rad: a unit vector in float64
# is known to about 1.1e-16 (its rounding); a noise-free fit's covariance is at that level, and
# the floor keeps its information finite instead of reporting an exact direction.
_UP_STD_FLOOR = 1e-15


@dataclass(frozen=True, eq=False, repr=False)
class ClosedFormRoot(UpResult):
    """One solution of a closed-form solver, with the `up` it gives and that `up`'s information.

    Attributes
    ----------
    theta1 : float
        J1 position, rad in (-pi, pi], at which the arm's horizontal direction points toward the
        horizontal part of `up`.
    theta2 : float
        Angle between `up` and the J1 axis, rad in [0, pi].
    beta : float
        Angle of the lumped mass from the link line in the J2 plane, rad (0 for a point mass).
    l3_ratio : float
        :math:`L_3 / R_{12}`, the mass's offset along the J2 axis over its distance from the J2
        axis (0 unless the out-of-plane offset solver used or estimated it).
    up : ndarray, shape (3,)
        ``up_from_canonical(theta1, theta2, arm_azimuth=arm_azimuth)``.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad², from the fits' coefficient covariances (first
        order); `up` is in its null space. :attr:`up_cov` and :attr:`up_std_deg` follow.
    """

    _units = {
        "theta1": "rad", "theta2": "rad", "beta": "rad", "l3_ratio": "",
    }

    theta1: float
    theta2: float
    beta: float
    l3_ratio: float
    up: NDArray[np.float64]
    up_information: NDArray[np.float64]

    def __repr__(self) -> str:
        return (
            f"ClosedFormRoot(theta1={np.degrees(self.theta1):.4f}°, "
            f"theta2={np.degrees(self.theta2):.4f}°, beta={np.degrees(self.beta):.4f}°, "
            f"l3_ratio={self.l3_ratio:.6g}, up_std={self.up_std_deg:.2g}°)"
        )


@dataclass(frozen=True, eq=False, repr=False)
class ClosedFormEstimate(UpResult):
    """Gravity direction estimated by a closed-form solver of the torque-sweep method.

    Attributes
    ----------
    up : ndarray, shape (3,)
        Unit vector opposite to gravity, base frame:
        ``up_from_canonical(theta1, theta2, arm_azimuth=arm_azimuth)``.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad², propagated from the Cartesian coefficients of the
        fitted sinusoids (symmetric, rank 2, `up` in its null space). It stays finite where
        theta1 is undefined (gravity along J1); :attr:`up_cov` (rad²) and :attr:`up_std_deg`
        follow from it. Where the J2 sweeps do not see a tangent direction and the J1 sweep
        cannot scale it (the two-branch solver with gravity along J1), that direction has zero
        information and `up_std_deg` is infinite.
    theta1 : float
        J1 position, rad in (-pi, pi], at which the arm's horizontal direction points toward the
        horizontal part of `up`. Without an L3 offset it is the J1 zero with the mass highest.
    theta2 : float
        Angle between `up` and the J1 axis (the tilt of the J1 axis), rad in [0, pi].
    theta_cov : ndarray, shape (2, 2)
        Covariance of ``(theta1, theta2)``, rad², to first order. The theta1 variance grows
        without bound as gravity approaches the J1 axis and is infinite where theta1 is
        undefined; the uncertainty of `up` is `up_information`, not this.
    beta : float
        The returned root's :math:`\\beta`, rad (0 for the point-mass and two-branch solvers).
    l3_ratio : float
        The returned root's :math:`L_3 / R_{12}` (given or estimated; 0 when not modelled).
    roots : tuple of ClosedFormRoot
        Every admissible root, each with its own `up` and `up_information`; the returned one is
        ``roots[root_index]``.
    root_index : int
        Index of the returned root in `roots`.
    rule : str
        Which rule picked the returned root.
    zero : {"unstable", "stable", "none"}
        The J1 zero at which the (first) J2 sweep was taken; ``"none"`` where A1 is not
        significant.
    gravity_parallel_to_j1 : bool
        A1 was not significant: gravity is (nearly) parallel to the J1 axis, theta1 is undefined
        (reported as the J1 position of the J2 sweep) and theta2 comes from the J2 sweep(s).
    clipped : bool
        Noise pushed an arcsin/arccos argument (or a polynomial root) outside its admissible
        range and it was clipped to the boundary (theta2 = 90 deg for the lumped point-mass
        model).
    near_singular : bool
        The returned root lies within ``singular_tol`` of the point where it merges with another
        root (theta2 = 90 deg for the lumped point-mass model): precision is lost there.
    solver : {"point_mass", "l2_offset", "l3_offset", "two_branch"}
        Name of the solver.
    fingerprint : frozenset of str
        The union of the input fits' fingerprints (keyword-only, out of the ``repr``; the roots
        carry the same): an estimate from the same sweeps as another shares its data.
    """

    _units = {
        "theta1": "rad", "theta2": "rad", "theta_cov": "rad²", "beta": "rad", "l3_ratio": "",
        "root_index": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    theta1: float
    theta2: float
    theta_cov: NDArray[np.float64]
    beta: float
    l3_ratio: float
    roots: tuple[ClosedFormRoot, ...]
    root_index: int
    rule: str
    zero: Zero
    gravity_parallel_to_j1: bool
    clipped: bool
    near_singular: bool
    solver: SolverName

    @property
    def theta1_std_deg(self) -> float:
        """Standard deviation of `theta1`, degrees (infinite where theta1 is undefined)."""
        return float(np.degrees(np.sqrt(self.theta_cov[0, 0])))

    @property
    def theta2_std_deg(self) -> float:
        """Standard deviation of `theta2`, degrees."""
        return float(np.degrees(np.sqrt(self.theta_cov[1, 1])))

    def __repr__(self) -> str:
        flags = [
            name
            for name in ("gravity_parallel_to_j1", "clipped", "near_singular")
            if getattr(self, name)
        ]
        return (
            f"ClosedFormEstimate(solver={self.solver!r}, "
            f"up={np.array2string(self.up, precision=6, suppress_small=True)} "
            f"± {self.up_std_deg:.2g}°, "
            f"theta1={np.degrees(self.theta1):.4f}° ± {self.theta1_std_deg:.2g}°, "
            f"theta2={np.degrees(self.theta2):.4f}° ± {self.theta2_std_deg:.2g}°, "
            f"roots={len(self.roots)}, rule={self.rule!r}, zero={self.zero!r}, "
            f"flags={flags})"
        )


# --------------------------------------------------------------------------------------------
# `up` from the coefficients and its information


def _rotation2(angle: NDArray[np.float64] | float) -> NDArray[np.float64]:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]], dtype=np.float64)


def _ups(rows: NDArray[np.float64], c1: NDArray[np.float64], az: float) -> NDArray[np.float64]:
    """`up` of each root row from the J1 coefficients c1 = (a1, b1).

    Horizontal part ``K R(az + delta) (-a1, b1)``, vertical part ``cos(theta2)``, normalised
    (which only matters where a root was clipped).
    """
    angle = az + rows[:, DELTA]
    x, y = -c1[0], c1[1]
    k = rows[:, SCALE]
    up = np.stack(
        [
            k * (np.cos(angle) * x - np.sin(angle) * y),
            k * (np.sin(angle) * x + np.cos(angle) * y),
            np.cos(rows[:, THETA2]),
        ],
        axis=-1,
    )
    out: NDArray[np.float64] = up / norm(up)[..., None]
    return out


def _polar(c: NDArray[np.float64]) -> NDArray[np.float64]:
    """(A, phi) of each fit from its (a, b): d = (A1, phi1, A2, phi2, ...)."""
    ab = c.reshape(-1, 2)
    return np.stack([np.hypot(ab[:, 0], ab[:, 1]), np.arctan2(ab[:, 1], ab[:, 0])], -1).ravel()


def _information(up: NDArray[np.float64], cov3: NDArray[np.float64]) -> NDArray[np.float64]:
    """(3, 3) information of `up` from a (3, 3) covariance of it; none where it is not finite."""
    if not np.all(np.isfinite(cov3)):
        return np.zeros((3, 3))
    return up_information_from_cov(up, cov3, min_variance=_UP_STD_FLOOR**2)


def _horizontal_cov(fit: _Fit, scale: float, angle: float) -> NDArray[np.float64]:
    """Covariance of ``scale R(angle) (-a, b)`` (the horizontal part of `up`), (2, 2).

    Infinite where the fit's covariance is not finite or the lever arm `1 / scale` vanishes.
    """
    if not (fit.finite and math.isfinite(scale)):
        return np.diag([np.inf, np.inf])
    m = _rotation2(angle) @ np.diag([-1.0, 1.0])
    out: NDArray[np.float64] = m @ fit.coef_cov @ m.T
    # Scaled last, in Python floats: a lever arm near zero gives an infinite variance.
    return np.array([[float(v) * scale * scale for v in row] for row in out])


# --------------------------------------------------------------------------------------------
# First-order propagation


@dataclass(frozen=True)
class _Problem:
    """What every solver's result assembly needs besides the roots."""

    fits: tuple[_Fit, ...]
    az: float
    singular_tol: float
    zero: Zero
    solver: SolverName


@dataclass(frozen=True)
class _Part:
    """Root rows found by one root finder, which also gives their derivatives."""

    solve: RootFinder
    rows: NDArray[np.float64]
    clipped: bool
    # The root finder reads the coefficients of the first `n_coef` / 2 fits only (all: None).
    n_coef: int | None = None


def _nearest(
    rows: NDArray[np.float64],
    ups: NDArray[np.float64],
    row: NDArray[np.float64],
    up: NDArray[np.float64],
) -> int:
    """Index of the root in (rows, ups) that continues `row` (nearest `up`, beta and lambda)."""
    dist = (
        np.linalg.norm(ups - up, axis=-1)
        + np.abs(wrap_angle(rows[:, BETA] - row[BETA]))
        + np.abs(rows[:, L3_RATIO] - row[L3_RATIO])
    )
    return int(np.argmin(dist))


def _jacobians(
    part: _Part, c: NDArray[np.float64], cov_c: NDArray[np.float64], problem: _Problem
) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """Central-difference Jacobians, with respect to the coefficients c, of every root's `up`
    (k, 3, n) and of every root's (theta1, theta2) (k, 2, n); None where a root disappears."""
    rows = part.rows
    ups = _ups(rows, c[:2], problem.az)
    k, n = rows.shape[0], c.size
    largest = max(f.amplitude for f in problem.fits)
    jac_up, jac_theta = np.zeros((k, 3, n)), np.zeros((k, 2, n))
    for i in range(n if part.n_coef is None else part.n_coef):
        if cov_c[i, i] == 0:
            continue
        amplitude = problem.fits[i // 2].amplitude
        h = _FD_STEP * (amplitude if amplitude > 0 else largest)
        ends = []
        for sgn in (1.0, -1.0):
            cc = c.copy()
            cc[i] += sgn * h
            found, _ = part.solve(_polar(cc))
            if found.shape[0] == 0:
                return None
            found_ups = _ups(found, cc[:2], problem.az)
            match = [_nearest(found, found_ups, rows[j], ups[j]) for j in range(k)]
            ends.append((found_ups[match], found[match][:, [THETA1, THETA2]]))
        jac_up[:, :, i] = (ends[0][0] - ends[1][0]) / (2.0 * h)
        diff = ends[0][1] - ends[1][1]
        diff[:, 0] = wrap_angle(diff[:, 0])
        jac_theta[:, :, i] = diff / (2.0 * h)
    return jac_up, jac_theta


def _coefficients(fits: Sequence[_Fit]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The coefficient vector (a1, b1, a2, b2, ...) and its block-diagonal covariance."""
    c = np.concatenate([f.coef for f in fits])
    cov = np.zeros((c.size, c.size))
    for i, f in enumerate(fits):
        cov[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = f.coef_cov
    return c, cov


def _estimate(
    problem: _Problem, parts: Sequence[_Part], index: int, rule: str
) -> ClosedFormEstimate:
    """The result of a solver whose roots came from the root finders of `parts`.

    `index` counts over the rows of all parts in order. The uncertainty of each root comes from
    the root finder that found it.
    """
    c, cov_c = _coefficients(problem.fits)
    finite = all(f.finite for f in problem.fits) and bool(np.all(np.isfinite(cov_c)))
    rows_all, ups_all, infos = [], [], []
    theta_cov = np.diag([np.inf, np.inf])
    clipped, start = False, 0
    for part in parts:
        if part.rows.shape[0] == 0:
            continue
        ups = _ups(part.rows, c[:2], problem.az)
        jac = _jacobians(part, c, cov_c, problem) if finite else None
        for j in range(part.rows.shape[0]):
            if jac is None:
                infos.append(np.zeros((3, 3)))
            else:
                infos.append(_information(ups[j], jac[0][j] @ cov_c @ jac[0][j].T))
            if start + j == index:
                clipped = part.clipped
                if jac is not None:
                    theta_cov = jac[1][j] @ cov_c @ jac[1][j].T
        rows_all.append(part.rows)
        ups_all.append(ups)
        start += part.rows.shape[0]
    rows = np.concatenate(rows_all)
    near = bool(rows[index, MERGE] < problem.singular_tol)
    return _assemble(
        problem, rows, np.concatenate(ups_all), infos, index, rule, theta_cov, clipped, near
    )


def _assemble(
    problem: _Problem,
    rows: NDArray[np.float64],
    ups: NDArray[np.float64],
    infos: Sequence[NDArray[np.float64]],
    index: int,
    rule: str,
    theta_cov: NDArray[np.float64],
    clipped: bool,
    near: bool,
) -> ClosedFormEstimate:
    # The union of the input fits' fingerprints: every root is computed from all of them.
    fingerprint = frozenset[str]().union(*(f.fingerprint for f in problem.fits))
    roots = tuple(
        ClosedFormRoot(
            theta1=float(r[THETA1]),
            theta2=float(r[THETA2]),
            beta=float(r[BETA]),
            l3_ratio=float(r[L3_RATIO]),
            up=np.array(u, dtype=np.float64),
            up_information=np.array(info, dtype=np.float64),
            fingerprint=fingerprint,
        )
        for r, u, info in zip(rows, ups, infos, strict=True)
    )
    pick = roots[index]
    return ClosedFormEstimate(
        up=pick.up,
        up_information=pick.up_information,
        theta1=pick.theta1,
        theta2=pick.theta2,
        theta_cov=np.array(theta_cov, dtype=np.float64),
        beta=pick.beta,
        l3_ratio=pick.l3_ratio,
        roots=roots,
        root_index=index,
        rule=rule,
        zero=problem.zero,
        gravity_parallel_to_j1=problem.zero == "none",
        clipped=clipped,
        near_singular=near,
        solver=problem.solver,
        fingerprint=fingerprint,
    )


# --------------------------------------------------------------------------------------------
# Gravity parallel to J1


def _parallel_estimate(
    problem: _Problem,
    rows: NDArray[np.float64],
    index: int,
    rule: str,
    tangent_covs: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]],
    theta2_var: float,
) -> ClosedFormEstimate:
    """Result where A1 is not significant: theta1 undefined (infinite variance).

    `tangent_covs` gives, per root, a tangent basis (2, 3) of its `up` and the (2, 2)
    covariance of `up` in it.
    """
    ups = np.array([up_from_canonical(r[THETA1], r[THETA2], arm_azimuth=problem.az) for r in rows])
    if all(f.finite for f in problem.fits):
        infos = [
            up_information_from_cov(u, cov2, basis=basis, min_variance=_UP_STD_FLOOR**2)
            for u, (basis, cov2) in zip(ups, tangent_covs, strict=True)
        ]
        theta_cov = np.array([[np.inf, 0.0], [0.0, theta2_var]])
    else:  # a fit without a finite covariance: nothing is known about the uncertainty
        infos = [np.zeros((3, 3)) for _ in rows]
        theta_cov = np.diag([np.inf, np.inf])
    return _assemble(problem, rows, ups, infos, index, rule, theta_cov, False, False)


def _in_plane_basis(up: NDArray[np.float64], q1: float, az: float) -> NDArray[np.float64]:
    """Tangent basis of an `up` in the plane of a J2 sweep at J1 position q1: (in-plane, a2)."""
    a2 = np.array([-np.sin(q1 + az), np.cos(q1 + az), 0.0])
    return np.stack([np.cross(a2, up), a2])


def _parallel_in_plane(
    problem: _Problem,
    rows: NDArray[np.float64],
    index: int,
    rule: str,
    q1: float,
    in_plane_var: float,
    a2_var: float,
) -> ClosedFormEstimate:
    """Parallel result whose roots lie in the plane of the J2 sweep(s) at J1 position q1.

    The J2 phase(s) give the in-plane angle (variance `in_plane_var`); the component of `up`
    along that sweep's J2 axis a2 is set to zero, with variance `a2_var` (what the J1 sweep
    bounds it by, or infinite where the solver cannot scale the J1 amplitude).
    """
    covs = []
    for r in rows:
        up = up_from_canonical(r[THETA1], r[THETA2], arm_azimuth=problem.az)
        covs.append((_in_plane_basis(up, q1, problem.az), np.diag([in_plane_var, a2_var])))
    return _parallel_estimate(problem, rows, index, rule, covs, in_plane_var)


def _a2_variance(fit: _Fit, scale: float, q1: float) -> float:
    """Variance of the J1 fit's horizontal `up` ``scale R(az) (-a1, b1)`` along a2 at q1.

    a2 = R(az) (-sin q1, cos q1), so the component is ``scale (sin q1, cos q1) . (a1, b1)``:
    the azimuth drops out. Infinite where the fit's covariance is not finite or the lever arm
    ``1 / scale`` vanishes.
    """
    if not (fit.finite and math.isfinite(scale)):
        return math.inf
    v = np.array([math.sin(q1), math.cos(q1)])
    return float(v @ fit.coef_cov @ v) * scale * scale


def _parallel_vertical(
    problem: _Problem,
    rows: NDArray[np.float64],
    index: int,
    rule: str,
    gamma: float,
    lam: float,
) -> ClosedFormEstimate:
    """Parallel result with `up` = +-z (theta2 in {0, pi}): the J2 phase gives beta only.

    The horizontal part of `up` is known from the J1 sweep alone: ``R(az + delta) (-a1, b1)``
    over ``A2 sqrt(s**2 + lambda**2)``, s = sin(gamma + beta) (N = 1 on the J1 axis).
    """
    f1, f2 = problem.fits[0], problem.fits[1]
    basis = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    covs = []
    for r in rows:
        s = math.sin(gamma + r[BETA])
        lever = f2.amplitude * math.hypot(s, lam)
        if lever > 0:
            angle = problem.az + math.atan2(lam, s)
            covs.append((basis, _horizontal_cov(f1, 1.0 / lever, angle)))
        else:
            covs.append((basis, np.diag([np.inf, np.inf])))
    # theta2 is 0 or pi; its error is the tilt the J1 sweep leaves room for.
    theta2_var = float(np.trace(covs[index][1]))
    return _parallel_estimate(problem, rows, index, rule, covs, theta2_var)
