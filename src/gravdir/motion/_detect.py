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
    up: NDArray[np.float64]
    information: NDArray[np.float64]
    end: float
    dof: float  # of the window's covariance


class _Reference(NamedTuple):
    up: NDArray[np.float64]
    cov: NDArray[np.float64]  # (2, 2) in the tangent basis of `up`
    variance: float  # the model-error variance, rad², per tangent direction
    dof: float  # of the estimate behind `cov` and the variance


class Verdict(NamedTuple):
    """One window's test: whether it was tested, its statistic, p-value, the denominator
    degrees of freedom of its F reference (inf: chi-square), its angle to the reference, the
    alarm, the reference's `up` and the model-error standard deviation used."""

    tested: bool
    chi2: float
    p_value: float
    dof: float
    angle: float
    alarm: bool
    reference_up: NDArray[np.float64]
    model_error_std: float


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


def _satterthwaite(*parts: tuple[NDArray[np.float64], float]) -> float:
    """Degrees of freedom of a sum of covariances each estimated with its own (Satterthwaite,
    on their traces): ``(sum tr C)^2 / sum (tr C)^2 / dof``; inf where every part is known."""
    total = sum(float(np.trace(c)) for c, _ in parts)
    spread = sum(float(np.trace(c)) ** 2 / dof for c, dof in parts if math.isfinite(dof))
    return total**2 / spread if spread > 0 else math.inf


class Detector:
    """The change detector's state: the windows of the current segment that form the reference.

    A window is compared with the weighted mean of the last `reference_windows` earlier windows
    of its segment that do not overlap it, each widened by the model-error variance (given, or
    estimated from their scatter). It raises an alarm when the angle between them exceeds
    `min_change` *and* the p-value of their difference falls below `significance`: F(2, ν), ν
    the Satterthwaite degrees of freedom of the sum of the window's covariance (a sandwich is
    estimated from the window itself) and the reference's (estimated, with the variance, from
    the ``R`` reference windows: ``2 (R - 1)``; a window with fewer than
    :data:`MIN_ESTIMATE_WINDOWS` before it is not tested); chi-square where every part is
    known. After an alarm the segment restarts with the windows that start after the alarming
    window ends.
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
        self.refs: list[_Entry] = []
        self.segment_start = -np.inf

    __hash__ = None  # type: ignore[assignment]  # compared by value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _equal(vars(self), vars(other))

    def _reference(self, start: float) -> _Reference | None:
        usable = [r for r in self.refs if r.end <= start][-self.reference_windows :]
        estimate = self.model_error == "estimate"
        if len(usable) < (MIN_ESTIMATE_WINDOWS if estimate else 1):
            return None
        base = usable[-1].up
        e = tangent_basis(base)
        # Gnomonic coordinates about `base` and the tangent covariances.
        x = np.array([e @ r.up / float(base @ r.up) for r in usable])
        cov = np.linalg.inv(np.array([e @ r.information @ e.T for r in usable]))
        if estimate:
            dof = 2.0 * (len(usable) - 1)
            _, _, q = _weighted_mean(x, cov, 0.0)
            spread = float(np.sum((x - x.mean(axis=0)) ** 2))
            variance = (
                paule_mandel(lambda v: _weighted_mean(x, cov, v)[2] - dof, spread / dof)
                if q > dof
                else 0.0
            )
        else:  # the windows' own covariances are all that is estimated
            dof, variance = float(sum(r.dof for r in usable)), float(self.model_error) ** 2
        mean, mean_cov, _ = _weighted_mean(x, cov, variance)
        up = np.asarray(base + e.T @ mean, dtype=np.float64)
        up /= np.linalg.norm(up)
        f = tangent_basis(up)
        return _Reference(up, f @ e.T @ mean_cov @ e @ f.T, variance, dof)

    def step(self, win: Window, start: float, end: float) -> Verdict:
        """Test one window and update the segment."""
        ref = self._reference(start) if win.determined else None
        verdict = Verdict(False, 0.0, 1.0, math.inf, 0.0, False, win.up, 0.0)
        if ref is not None:
            cos = float(np.clip(ref.up @ win.up, -1.0, 1.0))
            angle = math.atan2(float(np.linalg.norm(np.cross(ref.up, win.up))), cos)
            e = tangent_basis(ref.up)
            own = np.asarray(np.linalg.inv(e @ win.information @ e.T), dtype=np.float64)
            rest = ref.variance * np.eye(2) + ref.cov
            dof = _satterthwaite((own, win.dof), (rest, ref.dof))
            if cos > 0:
                d = e @ win.up / cos
                chi2 = float(d @ np.linalg.solve(own + rest, d))
                p = chi2_sf(chi2, 2) if math.isinf(dof) else f_sf(0.5 * chi2, 2, dof)
            else:  # more than 90° away: the tangent coordinates do not reach it
                chi2, p = math.inf, 0.0
            alarm = p < self.significance and angle > self.min_change
            verdict = Verdict(True, chi2, p, dof, angle, alarm, ref.up, math.sqrt(ref.variance))
        if verdict.alarm:
            self.refs = []
            self.segment_start = end
        elif win.determined and start >= self.segment_start:
            self.refs.append(_Entry(win.up, win.information, end, win.dof))
            self.refs = self.refs[-(self.reference_windows + self.overlap) :]
        return verdict
