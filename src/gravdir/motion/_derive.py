"""The derivative rule of the motion functions, on a whole log or on a log read in chunks.

A log is split at its gaps (intervals longer than :data:`GAP_FACTOR` times the median interval
of the whole log) into segments, and each segment differentiated on its own stamps by
:func:`gravdir.sweep.joint_acceleration`'s filter (:func:`segments` plans them).
:class:`AccelerationStream` gives the same acceleration for samples that arrive in chunks: the
filter of a sample reads only the samples and grid points of one window around it (away from a
segment's ends, where the whole segment's first or last window serves), so the stream holds
only those and hands every sample on as soon as its window has arrived. The stamps of the whole
log are known in advance (a first pass): the median interval, the gaps and each segment's grid
depend on all of them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from gravdir._savgol import DEFAULT_POLYORDER, GridPlan, grid_plan, stretch_derivative
from gravdir.errors import InsufficientDataError

__all__ = ["GAP_FACTOR", "AccelerationStream", "Segment", "derive", "segments"]

# A gap of a log is an interval longer than this many median intervals: the derivative is not
# taken across it. Real logs at a nominal 100 Hz jitter by up to 1.3 times the median interval
# and drop rows in gaps of at least twice it (tens of ms), so 2 splits at every gap and at no
# jitter.
GAP_FACTOR = 2.0


class Segment(NamedTuple):
    """Samples ``lo`` to ``hi - 1`` of a log between gaps, and the plan of their derivative
    (None: shorter than the window, not differentiated)."""

    lo: int
    hi: int
    plan: GridPlan | None


def segments(time: NDArray[np.float64], window: float) -> list[Segment]:
    """The segments of a log with checked stamps `time` (N,) and the derivative's `window`, s.

    Raises
    ------
    InsufficientDataError
        If no segment is longer than `window`.
    """
    n_samples = time.size
    out: list[Segment] = []
    if n_samples > 1:
        step = np.diff(time)
        gaps = np.flatnonzero(step > GAP_FACTOR * np.median(step))
        edges = np.concatenate([[0], gaps + 1, [n_samples]])
        for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            t = time[lo:hi]
            plan = None
            if t[-1] - t[0] >= window:
                try:
                    plan = grid_plan(t, "velocity", window, DEFAULT_POLYORDER, "derivative_window")
                except InsufficientDataError:  # fewer samples than its window holds
                    plan = None
            out.append(Segment(lo, hi, plan))
    else:
        out.append(Segment(0, n_samples, None))
    if all(s.plan is None for s in out):
        raise InsufficientDataError(
            f"Expected `time` to hold a stretch without gaps (intervals beyond {GAP_FACTOR:g} "
            f"times the median) longer than the derivative's window ({window:g} s) to "
            f"differentiate `velocity`, got {n_samples} samples and none."
        )
    return out


def derive(
    plan: GridPlan,
    t: NDArray[np.float64],
    velocity: NDArray[np.float64],
    grid: tuple[int, int],
    targets: tuple[int, int],
) -> NDArray[np.float64]:
    """The acceleration (s, n) of the samples ``targets`` of the stretch `t`, `velocity` (S, n)
    of a segment planned by `plan`, from its grid points `grid` (see
    :func:`gravdir._savgol.stretch_derivative`)."""
    out = stretch_derivative(
        plan, DEFAULT_POLYORDER, t, velocity.T, grid[0], grid[1], targets[0], targets[1],
        "velocity",
    )  # fmt: skip
    result: NDArray[np.float64] = out.T
    return result


def counted(t: NDArray[np.float64], plan: GridPlan, window: float) -> NDArray[np.bool_]:
    """Where the samples at `t` of a segment count: beyond half a window from its ends (nearer,
    the filter extrapolates)."""
    half = 0.5 * window
    result: NDArray[np.bool_] = (t - plan.t0 > half) & (plan.t1 - t > half)
    return result


class _Span(NamedTuple):
    """What the derivative of the samples ``a`` to ``b - 1`` of a segment (its own indices)
    reads: grid points ``grid_lo`` to ``grid_hi - 1`` and samples ``lo`` to ``hi - 1``."""

    grid_lo: int
    grid_hi: int
    lo: int
    hi: int


class _Reach:
    """Which grid points and samples the derivative of each sample of one segment reads."""

    def __init__(self, seg: Segment, time: NDArray[np.float64]) -> None:
        assert seg.plan is not None
        self.plan = seg.plan
        self.t = time[seg.lo : seg.hi]
        self.grid = None if seg.plan.uniform else seg.plan.grid(0, seg.plan.m)

    def _grid_of(self, k: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The grid points that bracket samples `k`, as the back interpolation finds them."""
        if self.grid is None:
            return k, k
        m = self.plan.m
        hi = np.clip(np.searchsorted(self.grid, self.t[k], side="right"), 1, m - 1)
        return hi - 1, hi

    def _window(self, i: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The grid points the filter reads for the value at grid points `i` (mode "interp":
        the first or last window near the ends)."""
        m, length = self.plan.m, self.plan.length
        h = length // 2
        lo = np.where(i < h, 0, np.where(i >= m - h, m - length, i - h))
        hi = np.where(i < h, length, np.where(i >= m - h, m, i + h + 1))
        return lo, hi

    def _samples_of(
        self, lo: NDArray[np.int64], hi: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The samples the interpolation onto grid points ``lo`` to ``hi - 1`` reads."""
        if self.grid is None:
            return lo, hi
        n = self.t.size
        s_lo = np.clip(np.searchsorted(self.t, self.grid[lo], side="right"), 1, n - 1) - 1
        s_hi = np.clip(np.searchsorted(self.t, self.grid[hi - 1], side="right"), 1, n - 1) + 1
        return s_lo, s_hi

    def last_sample(self, k: NDArray[np.int64]) -> NDArray[np.int64]:
        """One past the last sample read for each of the samples `k`."""
        _, g_hi = self._window(self._grid_of(k)[1])
        return self._samples_of(g_hi - 1, g_hi)[1]

    def first_sample(self, k: int) -> int:
        """The first sample read for sample `k`."""
        g_lo, _ = self._window(self._grid_of(np.array([k]))[0])
        return int(self._samples_of(g_lo, g_lo + 1)[0][0])

    def span(self, a: int, b: int) -> _Span:
        ends = np.array([a, b - 1])
        g_lo = self._window(self._grid_of(ends[:1])[0])[0]
        g_hi = self._window(self._grid_of(ends[1:])[1])[1]
        s_lo, _ = self._samples_of(g_lo, g_lo + 1)
        _, s_hi = self._samples_of(g_hi - 1, g_hi)
        return _Span(int(g_lo[0]), int(g_hi[0]), int(s_lo[0]), int(s_hi[0]))


class AccelerationStream:
    """The acceleration of a log read in chunks: equal, sample for sample, to the derivative
    rule of the whole log (:func:`gravdir.motion._samples.acceleration_from_log`).

    `time` holds the stamps of the whole log (checked). :meth:`feed` takes the next chunk's
    columns (``"time"`` and ``"velocity"`` among them, every column a row per sample) and
    returns the columns of the samples now complete, in order, with ``"acceleration"`` (0 where
    it does not count) and ``"counts"`` added, or None; :meth:`finish` returns the rest. It
    holds the samples not yet returned and those the next ones read: a window and a chunk.
    """

    def __init__(self, time: NDArray[np.float64], window: float) -> None:
        self._time = time
        self._window = window
        self._segments = segments(time, window)
        self._seg = 0
        self._reach: _Reach | None = None
        self._buffer: dict[str, NDArray[np.float64]] = {}
        self._start = 0  # index in the log of the buffer's first sample
        self._next = 0  # the next sample to return

    def feed(self, columns: dict[str, NDArray[np.float64]]) -> dict[str, NDArray[Any]] | None:
        if self._buffer:
            columns = {k: np.concatenate([self._buffer[k], v]) for k, v in columns.items()}
        self._buffer = columns
        return self._emit()

    def finish(self) -> dict[str, NDArray[Any]] | None:
        """The samples not yet returned (none once every chunk has been fed: the last chunk
        completes every stretch)."""
        return self._emit()

    @property
    def _stop(self) -> int:
        return self._start + (self._buffer["time"].shape[0] if self._buffer else 0)

    def _segment(self) -> Segment:
        while self._segments[self._seg].hi <= self._next:
            self._seg += 1
            self._reach = None
        return self._segments[self._seg]

    def _emit(self) -> dict[str, NDArray[Any]] | None:
        stop = self._stop
        pieces: list[tuple[int, int, NDArray[np.float64], NDArray[np.bool_]]] = []
        n = self._buffer["velocity"].shape[1] if self._buffer else 0
        while self._next < stop:
            seg = self._segment()
            a, end = self._next, min(seg.hi, stop)
            if seg.plan is None:
                pieces.append((a, end, np.zeros((end - a, n)), np.zeros(end - a, bool)))
                self._next = end
                continue
            if self._reach is None:
                self._reach = _Reach(seg, self._time)
            reach = self._reach
            if stop < seg.hi:  # the stretch goes on: only the samples whose reach has arrived
                ends = reach.last_sample(np.arange(a - seg.lo, end - seg.lo))
                end = a + int(np.count_nonzero(ends <= stop - seg.lo))
            if end == a:
                break
            span = reach.span(a - seg.lo, end - seg.lo)
            rows = slice(seg.lo + span.lo - self._start, seg.lo + span.hi - self._start)
            acc = derive(
                seg.plan,
                self._buffer["time"][rows],
                self._buffer["velocity"][rows],
                (span.grid_lo, span.grid_hi),
                (a - seg.lo - span.lo, end - seg.lo - span.lo),
            )
            counts = counted(self._time[a:end], seg.plan, self._window)
            acc[~counts] = 0.0
            pieces.append((a, end, acc, counts))
            self._next = end
        return self._hand_on(pieces)

    def _hand_on(
        self, pieces: list[tuple[int, int, NDArray[np.float64], NDArray[np.bool_]]]
    ) -> dict[str, NDArray[Any]] | None:
        """The columns of the samples of `pieces`, and the buffer trimmed to what is still read."""
        if not pieces:
            return None
        a, b = pieces[0][0], pieces[-1][1]
        out: dict[str, NDArray[Any]] = {
            k: v[a - self._start : b - self._start] for k, v in self._buffer.items()
        }
        out["acceleration"] = np.concatenate([p[2] for p in pieces])
        out["counts"] = np.concatenate([p[3] for p in pieces])
        keep = self._next
        if keep < self._time.size:
            seg = self._segment()
            if seg.plan is not None:
                if self._reach is None:
                    self._reach = _Reach(seg, self._time)
                keep = min(keep, seg.lo + self._reach.first_sample(keep - seg.lo))
        assert keep >= self._start
        # A copy, so that the chunk the rows were cut from is freed.
        self._buffer = {k: v[keep - self._start :].copy() for k, v in self._buffer.items()}
        self._start = keep
        return out
