"""The tracker's change detector: each window against a reference of earlier windows.

Derivation, threshold rule and measured figures: the *Tracking* page of the documentation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._results import _equal
from gravdir._sphere import tangent_basis
from gravdir.motion._windows import Window

__all__ = ["Detector"]


class _Reference(NamedTuple):
    up: NDArray[np.float64]
    information: NDArray[np.float64]
    end: float


class Detector:
    """The change detector's state: the windows of the current segment that form the reference.

    A window is compared with the information-weighted mean of the last `reference_windows`
    earlier windows of its segment that do not overlap it. It raises an alarm when the angle
    between them exceeds `min_change` *and* the chi-square of their difference (2 degrees of
    freedom, covariance the sum of both) exceeds `threshold`. After an alarm the segment restarts
    with the windows that start after the alarming window ends.
    """

    def __init__(
        self, threshold: float, min_change: float, reference_windows: int, overlap: int
    ) -> None:
        self.threshold = threshold
        self.min_change = min_change
        self.reference_windows = reference_windows
        self.overlap = overlap  # how many later windows overlap a window
        self.refs: list[_Reference] = []
        self.segment_start = -np.inf

    __hash__ = None  # type: ignore[assignment]  # compared by value

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _equal(vars(self), vars(other))

    def _reference(self, start: float) -> _Reference | None:
        usable = [r for r in self.refs if r.end <= start][-self.reference_windows :]
        if not usable:
            return None
        base = usable[-1].up
        e = tangent_basis(base)
        info = np.zeros((2, 2))
        rhs = np.zeros(2)
        for r in usable:
            i2 = e @ r.information @ e.T
            d = e @ r.up / float(base @ r.up)  # gnomonic coordinates about `base`
            info += i2
            rhs += i2 @ d
        mean = np.linalg.solve(info, rhs)
        up = np.asarray(base + e.T @ mean, dtype=np.float64)
        up /= np.linalg.norm(up)
        return _Reference(up, e.T @ info @ e, usable[-1].end)

    def step(
        self, win: Window, start: float, end: float
    ) -> tuple[bool, float, float, bool, NDArray[np.float64]]:
        """Test one window; return (tested, chi2, angle, alarm, reference up)."""
        ref = self._reference(start) if win.determined else None
        tested, chi2, angle, alarm = False, 0.0, 0.0, False
        ref_up = win.up
        if ref is not None:
            tested = True
            ref_up = ref.up
            cos = float(np.clip(ref.up @ win.up, -1.0, 1.0))
            angle = math.atan2(float(np.linalg.norm(np.cross(ref.up, win.up))), cos)
            e = tangent_basis(ref.up)
            cov = np.linalg.inv(e @ win.information @ e.T) + np.linalg.inv(
                e @ ref.information @ e.T
            )
            if cos > 0:
                d = e @ win.up / cos
                chi2 = float(d @ np.linalg.solve(cov, d))
            else:  # more than 90° away: the tangent coordinates do not reach it
                chi2 = math.inf
            alarm = chi2 > self.threshold and angle > self.min_change
        if alarm:
            self.refs = []
            self.segment_start = end
        elif win.determined and start >= self.segment_start:
            self.refs.append(_Reference(win.up, win.information, end))
            self.refs = self.refs[-(self.reference_windows + self.overlap) :]
        return tested, chi2, angle, alarm, ref_up
