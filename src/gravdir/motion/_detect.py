"""The tracker's change detector: each window against a reference of earlier windows.

The windows of one log scatter about each other by more than their own covariances say: the
model error a stretch of trajectory fixes does not average out within a window. The reference
therefore carries a model-error variance, given or estimated from the reference windows'
scatter (the Paule--Mandel rule of :func:`gravdir.fuse_up`), and an estimated one makes the
test's reference distribution an F one. Derivation, threshold rule and measured figures: the
*Tracking* page of the documentation.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import satterthwaite_dof
from gravdir._model_error import paule_mandel
from gravdir._results import _equal
from gravdir._sphere import tangent_basis
from gravdir._tails import chi2_sf, f_sf
from gravdir.motion._windows import Window

__all__ = ["MIN_ESTIMATE_WINDOWS", "Detector", "Verdict"]

#: Fewest reference windows a model-error variance is estimated from (ν = 8: a variance estimated
#: with ν degrees of freedom is uncertain by sqrt(2 / ν) of itself, here half; from fewer, a
#: small estimate by chance would make the test confident where nothing is known).
MIN_ESTIMATE_WINDOWS = 5


class _Entry(NamedTuple):
    """A determined window in the detector's memory: its solve, its span and its place."""

    window: Window
    start: float
    end: float
    id: int  # its place in the log's sequence of determined windows


class _Part(NamedTuple):
    """A covariance (2, 2) and the degrees of freedom it is estimated with (inf: known)."""

    cov: NDArray[np.float64]
    dof: float


class _Reference(NamedTuple):
    up: NDArray[np.float64]
    own: _Part  # the reference mean's covariance from its windows' own ones
    tau: NDArray[np.float64]  # ... from the model error, (2, 2) in the tangent basis of `up`
    variance: float  # the model-error variance, rad², per tangent direction
    dof: float  # of the variance (inf where given)


class Verdict(NamedTuple):
    """One window's test: whether it was tested, its statistic, p-value (over every change time
    tried), the denominator degrees of freedom of its F reference (inf: chi-square), the angle
    of the changed windows' mean to the reference, the alarm, the reference's `up`, the
    model-error standard deviation used and how many windows the mean holds."""

    tested: bool
    chi2: float
    p_value: float
    dof: float
    angle: float
    alarm: bool
    reference_up: NDArray[np.float64]
    model_error_std: float
    n_windows: int


def _satterthwaite(*parts: _Part) -> float:
    """Degrees of freedom of a sum of covariances each estimated with its own (Satterthwaite,
    on their traces): ``(sum tr C)^2 / sum (tr C)^2 / dof``; inf where every part is known."""
    return satterthwaite_dof([float(np.trace(p.cov)) for p in parts], [p.dof for p in parts])


def _tangent(
    entries: list[_Entry], up: NDArray[np.float64]
) -> tuple[NDArray[np.float64], ...] | None:
    """Gnomonic coordinates (R, 2) of the windows about `up`, their own covariances and their
    white-noise ones (R, 2, 2); None where one lies 90° or more away."""
    e = tangent_basis(up)
    ups = np.array([w.window.up for w in entries])
    cos = ups @ up
    if np.any(cos <= 0):
        return None
    own = np.linalg.inv(np.array([e @ w.window.information @ e.T for w in entries]))
    white = np.linalg.inv(np.array([e @ w.window.white @ e.T for w in entries]))
    return ups @ e.T / cos[:, None], own, white


def _fixed_weight_mean(
    x: NDArray[np.float64],
    own: NDArray[np.float64],
    white: NDArray[np.float64],
    dofs: list[float],
    variance: float,
) -> tuple[NDArray[np.float64], _Part, NDArray[np.float64]]:
    """The mean of tangent points `x` with the weights ``(white + variance I)^-1`` (fixed: the
    white-noise covariances are not estimated), its covariance from the windows' own ones
    ``T sum W C W T`` (linear in them, so unbiased where they are, with its Satterthwaite
    degrees of freedom), and from the model error ``variance T sum W W T``;
    ``T = (sum W)^-1``."""
    w = np.linalg.inv(white + variance * np.eye(2))
    t = np.linalg.inv(w.sum(axis=0))
    mean = t @ np.einsum("rab,rb->a", w, x)
    pieces = [_Part(t @ wi @ ci @ wi @ t, dof) for wi, ci, dof in zip(w, own, dofs, strict=True)]
    own_cov = np.sum([p.cov for p in pieces], axis=0)
    tau = variance * t @ np.einsum("rab,rbc->ac", w, w) @ t
    return mean, _Part(own_cov, _satterthwaite(*pieces)), tau


def _weighted_mean(
    x: NDArray[np.float64], cov: NDArray[np.float64], variance: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """The information-weighted mean of tangent points `x` (R, 2) of covariances `cov`
    (R, 2, 2) each widened by `variance`, its covariance, and their consistency statistic."""
    weights = np.linalg.inv(cov + variance * np.eye(2))
    total = weights.sum(axis=0)
    mean_cov = np.linalg.inv(total)
    mean = mean_cov @ np.einsum("rab,rb->a", weights, x)
    d = x - mean
    return mean, mean_cov, float(np.einsum("ra,rab,rb->", d, weights, d))


class Detector:
    """The change detector's state: the determined windows of the current segment.

    For each new determined window and each earlier window ``j`` of a chain of windows that do
    not overlap, back to `reference_windows` of them, the weighted mean of the windows from
    ``j`` to the new one is compared with the reference of ``j``: the weighted mean of the last
    `reference_windows` windows that end before ``j`` starts, each widened by the model-error
    variance (given, or estimated from their scatter; cached per ``j``). The test of one
    candidate refers its statistic to F(2, ν), ν the Satterthwaite degrees of freedom of the
    sum of the windows' own covariances (each sandwich estimated from its window) and the
    reference's (estimated, with the variance, from its ``R`` windows: ``2 (R - 1)``; no
    reference from fewer than :data:`MIN_ESTIMATE_WINDOWS`); chi-square where every part is
    known. The window's p-value is the smallest over the candidates times their number
    (Bonferroni), and it raises an alarm when that is below `significance` *and* the angle of
    the best candidate's mean to its reference exceeds `min_change`. After an alarm the segment
    restarts with the windows that start after the alarming window ends.
    """

    def __init__(
        self,
        significance: float,
        min_change: float,
        reference_windows: int,
        overlap: int,
        model_error: float | Literal["estimate"],
    ) -> None:
        self.significance = significance
        self.min_change = min_change
        self.reference_windows = reference_windows
        self.overlap = overlap  # how many later windows overlap a window
        self.model_error = model_error
        self.entries: list[_Entry] = []
        self.references: dict[int, _Reference | None] = {}
        self.count = 0
        self.segment_start = -np.inf

    __hash__ = None  # type: ignore[assignment]  # compared by value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _equal(vars(self), vars(other))

    def _reference(self, first: _Entry) -> _Reference | None:
        """The reference of a change that starts with window `first` (cached)."""
        if first.id in self.references:
            return self.references[first.id]
        usable = [r for r in self.entries if r.end <= first.start][-self.reference_windows :]
        estimate = self.model_error == "estimate"
        ref = None
        points = _tangent(usable, usable[-1].window.up) if usable else None
        if points is not None and len(usable) >= (MIN_ESTIMATE_WINDOWS if estimate else 1):
            x, own, white = points
            if estimate:
                dof = 2.0 * (len(usable) - 1)
                q = _weighted_mean(x, own, 0.0)[2]
                spread = float(np.sum((x - x.mean(axis=0)) ** 2))
                variance = (
                    paule_mandel(lambda v: _weighted_mean(x, own, v)[2] - dof, spread / dof)
                    if q > dof
                    else 0.0
                )
            else:
                dof, variance = math.inf, float(self.model_error) ** 2
            dofs = [r.window.dof for r in usable]
            mean, own_part, tau = _fixed_weight_mean(x, own, white, dofs, variance)
            e = tangent_basis(usable[-1].window.up)
            up = np.asarray(usable[-1].window.up + e.T @ mean, dtype=np.float64)
            up /= np.linalg.norm(up)
            f = tangent_basis(up)
            move = f @ e.T  # from the tangent basis of the last window to that of `up`
            ref = _Reference(
                up, _Part(move @ own_part.cov @ move.T, own_part.dof), move @ tau @ move.T,
                variance, dof,
            )  # fmt: skip
        self.references[first.id] = ref
        return ref

    def _candidate(self, ref: _Reference, post: list[_Entry]) -> tuple[float, float, float, float]:
        """(chi2, p-value, dof, angle) of the mean of the windows `post` against `ref`."""
        points = _tangent(post, ref.up)
        if points is None:  # more than 90° away: the tangent coordinates do not reach it
            return math.inf, 0.0, math.inf, math.pi / 2
        x, own, white = points
        dofs = [w.window.dof for w in post]
        mean, own_part, tau = _fixed_weight_mean(x, own, white, dofs, ref.variance)
        total = own_part.cov + tau + ref.own.cov + ref.tau
        dof = _satterthwaite(own_part, ref.own, _Part(tau + ref.tau, ref.dof))
        chi2 = float(mean @ np.linalg.solve(total, mean))
        p = chi2_sf(chi2, 2) if math.isinf(dof) else f_sf(0.5 * chi2, 2, dof)
        return chi2, float(p), dof, math.atan(float(np.linalg.norm(mean)))

    def step(self, win: Window, start: float, end: float) -> Verdict:
        """Test one window and update the segment."""
        verdict = Verdict(False, 0.0, 1.0, math.inf, 0.0, False, win.up, 0.0, 0)
        if not win.determined or start < self.segment_start:
            return verdict
        new = _Entry(win, start, end, self.count)
        self.count += 1
        chain = [new]  # the windows that do not overlap, back from the new one
        for entry in reversed(self.entries):
            if len(chain) == self.reference_windows:
                break
            if entry.end <= chain[-1].start:
                chain.append(entry)
        best: tuple[float, ...] | None = None
        tried = 0
        for m in range(1, len(chain) + 1):
            ref = self._reference(chain[m - 1])
            if ref is None:
                continue
            tried += 1
            result = (*self._candidate(ref, chain[:m]), m)
            if best is None or result[1] < best[1]:
                best, best_ref = result, ref
        if best is not None:
            chi2, p, dof, angle, count = best
            p = min(1.0, tried * p)
            alarm = p < self.significance and angle > self.min_change
            tau = best_ref.variance**0.5
            verdict = Verdict(True, chi2, p, dof, angle, alarm, best_ref.up, tau, int(count))
        if verdict.alarm:
            self.entries, self.references = [], {}
            self.segment_start = end
            return verdict
        self.entries.append(new)
        keep = 2 * self.reference_windows + self.overlap + 1
        self.entries = self.entries[-keep:]
        alive = {entry.id for entry in self.entries}
        self.references = {k: v for k, v in self.references.items() if k in alive}
        return verdict
