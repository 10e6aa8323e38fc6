"""Identify once, then track: `up` over sliding windows of a motion log, with a change detector.

With the inertial parameters, gains and joint terms of a :class:`MotionFit` held fixed,
the measured torques are affine in `up`, :math:`\\tau = a + B\\,u`; each window's `up` is the
least-squares point of the unit sphere (a trust-region subproblem, solved exactly through its
secular equation) and its covariance is the Bartlett sandwich of its scores (or, by name, the
white-noise form from the per-joint noise levels): gravdir.motion._windows. The
derivation, the change detector and its measured false-alarm and detection figures are on the
*Tracking* page of the documentation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_count, check_option, check_positive
from gravdir._hac import DEFAULT_BANDWIDTH
from gravdir._model_error import check_model_error
from gravdir._options import COVARIANCE_OPTIONS, CovarianceOption
from gravdir._results import UpResult, _equal, data_fingerprint
from gravdir._threads import one_blas_thread
from gravdir._time import check_time
from gravdir.errors import InsufficientDataError
from gravdir.kinematics import link_frames
from gravdir.motion._detect import Detector, Verdict
from gravdir.motion._excite import overflow_error
from gravdir.motion._fixed import (
    FixedModel,
    affine_torque,
    fixed_model,
    gravity_columns,
    hidden_directions,
)
from gravdir.motion._inputs import (
    DEFAULT_MIN_SPEED,
    MAX_SAMPLES,
    check_base_acceleration,
    check_log,
)
from gravdir.motion._samples import DEFAULT_DERIVATIVE_WINDOW, acceleration_from_log
from gravdir.motion._windows import Window, WindowSamples, solve_windows, take

__all__ = ["UpTrack", "UpTracker", "track_up"]

# Caps on the windows of one call and on the reference of the change detector (bounded work).
MAX_WINDOWS, MAX_REFERENCE_WINDOWS = 1_000_000, 1000
# Default largest standard deviation of a window's `up` (root-mean-square angle, rad) that
# counts as determined: a window with less motion says so instead of being compared.
DEFAULT_MAX_STD = math.radians(2.0)
# Default smallest change of `up` the detector reports: five times the largest window-to-window
# scatter that model errors left in the synthetic cases of the documentation (about 0.04°).
DEFAULT_MIN_CHANGE = math.radians(0.25)
# Default window, s: six Bartlett bandwidths (1 s), so that the sandwich of one window has
# degrees of freedom of order 1.5 times the window over the bandwidth (*Tracking* page).
DEFAULT_WINDOW = 6.0
# Default size of the change test per window and the default number of reference windows.
DEFAULT_SIGNIFICANCE, DEFAULT_REFERENCE_WINDOWS = 1e-4, 20
_OVERFLOW = (
    "Expected `torque`, `velocity` and `acceleration` at a scale that keeps the model's torques "
    "and their squares finite, got an overflow."
)


@dataclass(frozen=True, eq=False, repr=False)
class UpTrack(UpResult):
    """`up` over sliding windows of a motion log, by :func:`track_up` or :class:`UpTracker`.

    Attributes
    ----------
    up : ndarray, shape (W, 3)
        Each window's unit vector opposite to gravity, base frame.
    up_information : ndarray, shape (W, 3, 3)
        Its information, 1/rad², given the fit's parameters: the inverse of the window's
        covariance (the Bartlett sandwich by default, the Fisher information of the fit's noise
        levels with ``covariance="white"``); rank below 2, infinite :attr:`up_std_deg`, where a
        window does not determine `up`.
    time_centre : ndarray, shape (W,)
        Middle of each window, s, in the log's time.
    time_start, time_end : ndarray, shape (W,)
        A window holds the samples with ``time_start <= t < time_end``.
    n_samples : ndarray of int, shape (W,)
        Joint samples used in each window (after `min_speed`).
    residual_rms : ndarray, shape (W, n)
        RMS residual of each joint in each window (compare with the fit's `noise_std`).
    determined : ndarray of bool, shape (W,)
        Whether the window's torques determine both tangent directions of `up` with a standard
        deviation (:attr:`up_std_deg`, in radians) of at most `max_std`; only determined
        windows are tested or enter a reference.
    tested : ndarray of bool, shape (W,)
        Whether the window was compared with a reference (not one of the first windows of a
        segment: one before it is needed, two with `model_error_std` estimated).
    change_chi2 : ndarray, shape (W,)
        Squared Mahalanobis distance from its reference of the mean of the last
        `change_windows` windows (the change time that fits best; covariance the windows', the
        model error's and the reference's); 0 where not tested.
    change_windows : ndarray of int, shape (W,)
        How many windows, this one the last, that mean holds (1: the window alone); 0 where not
        tested.
    change_p : ndarray, shape (W,)
        Its p-value over every change time tried: the smallest F(2, ν) tail of
        ``change_chi2 / 2`` (ν = `change_dof`) times the number tried; 1 where not tested.
    change_dof : ndarray, shape (W,)
        Denominator degrees of freedom of that F reference: the Satterthwaite combination of
        the window's sandwich (from each joint's influence on the window's `up` and the lag-1
        correlation of its residuals: *Real logs*, "Degrees of freedom of a covariance") and
        the reference (``2 (R - 1)`` with the model error estimated from ``R`` windows); inf
        (chi-square with 2 degrees of freedom) where every covariance is known, and where not
        tested.
    change_angle : ndarray, shape (W,)
        Angle between that mean and its reference, rad; 0 where not tested.
    alarm : ndarray of bool, shape (W,)
        ``change_p < significance`` and ``change_angle > min_change``.
    reference_up : ndarray, shape (W, 3)
        The reference each window was compared with (the window's own `up` where not tested).
    model_error_std : ndarray, shape (W,)
        Model-error standard deviation per tangent direction the window was tested with, rad
        (given, or estimated from its reference windows); 0 where not tested.
    up_rate : ndarray, shape (W, 3)
        Rate of change of `up` within each window, tangent to it, rad/s (zero without `drift`).
    window, hop : float
        Window length and spacing of window starts, s.
    significance : float
        Probability per tested window without a change of an alarm on the test alone.
    min_change : float
        Smallest change reported, rad.
    max_std : float
        Largest standard deviation of a determined window, rad.
    drift : bool
        Whether the windows estimated a rate of change.
    fingerprint : frozenset of str
        The fit's fingerprint and a digest of the torques tracked (keyword-only).
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    time_centre: NDArray[np.float64]
    time_start: NDArray[np.float64]
    time_end: NDArray[np.float64]
    n_samples: NDArray[np.int64]
    residual_rms: NDArray[np.float64]
    determined: NDArray[np.bool_]
    tested: NDArray[np.bool_]
    change_chi2: NDArray[np.float64]
    change_p: NDArray[np.float64]
    change_dof: NDArray[np.float64]
    change_windows: NDArray[np.int64]
    change_angle: NDArray[np.float64]
    alarm: NDArray[np.bool_]
    reference_up: NDArray[np.float64]
    model_error_std: NDArray[np.float64]
    up_rate: NDArray[np.float64]
    window: float
    hop: float
    significance: float
    min_change: float
    max_std: float
    drift: bool

    _units: ClassVar[Mapping[str, str]] = {
        **dict.fromkeys(("time_centre", "time_start", "time_end", "window", "hop"), "s"),
        **dict.fromkeys(("n_samples", "determined", "tested", "change_chi2", "change_p"), ""),
        **{"change_dof": "", "change_windows": ""},
        **{"alarm": "", "reference_up": "", "significance": "", "drift": "", "alarm_times": "s"},
        **{"residual_rms": "N·m", "change_angle": "rad", "min_change": "rad", "up_rate": "rad/s"},
        **{"max_std": "rad", "model_error_std": "rad"},
    }

    @property
    def n_windows(self) -> int:
        """Number of windows ``W``."""
        return int(self.up.shape[0])

    @property
    def alarm_times(self) -> NDArray[np.float64]:
        """End times of the windows that raised an alarm, s (when the change became known)."""
        return np.asarray(self.time_end[self.alarm], dtype=np.float64)

    def __repr__(self) -> str:
        if self.n_windows == 0:
            return f"UpTrack(0 windows, window={self.window:g} s, hop={self.hop:g} s)"
        std = np.asarray(self.up_std_deg, dtype=np.float64)
        times = ", ".join(f"{t:.4g}" for t in self.alarm_times[:5])
        more = ", ..." if self.alarm_times.size > 5 else ""
        return (
            f"UpTrack({self.n_windows} windows of {self.window:g} s every {self.hop:g} s, "
            f"t={float(self.time_start[0]):.4g}..{float(self.time_end[-1]):.4g} s, "
            f"median up_std={float(np.median(std)):.3g}°, "
            f"min_change={math.degrees(self.min_change):.3g}°, "
            f"{int(self.alarm.sum())} alarm(s) at t=[{times}{more}] s)"
        )


class _Settings(NamedTuple):
    window: float
    hop: float
    min_speed: float
    significance: float
    min_change: float
    max_std: float
    reference_windows: int
    drift: bool
    bandwidth: float | None  # of the Bartlett sandwich, s; None: the white-noise form
    model_error: float | Literal["estimate"]


def _settings(*args: Any) -> _Settings:
    window, hop, min_speed, significance, min_change, max_std, reference_windows, drift = args[:8]
    covariance, bandwidth, model_error_std = args[8:]
    w = check_positive(window, "window")
    h = w if hop is None else check_positive(hop, "hop")
    if h > w or w / h > 1000:
        raise ValueError(f"Expected `hop` in [`window` / 1000, `window`], got {h:g} s.")
    change = check_positive(min_change, "min_change", allow_zero=True)
    if change > math.pi:
        raise ValueError(
            f"Expected `min_change` in radians within [0, π], got {change:.6g}: degrees?"
        )
    largest = check_positive(max_std, "max_std")
    if largest > math.pi:
        raise ValueError(
            f"Expected `max_std` in radians within (0, π], got {largest:.6g}: degrees?"
        )
    prob = check_positive(significance, "significance")
    if not prob < 1.0:
        raise ValueError(f"Expected `significance` in (0, 1), got {prob!r}.")
    if not isinstance(drift, bool | np.bool_):
        raise ValueError(f"Expected `drift` to be True or False, got {drift!r}.")
    count = check_count(reference_windows, "reference_windows", maximum=MAX_REFERENCE_WINDOWS)
    speed = check_positive(min_speed, "min_speed", allow_zero=True)
    check_option(covariance, "covariance", COVARIANCE_OPTIONS)
    b = check_positive(bandwidth, "bandwidth", allow_zero=True)
    if covariance == "hac" and b > 0.5 * w:
        raise ValueError(
            f"Expected `bandwidth` at most half the `window` ({0.5 * w:g} s) with "
            f"covariance='hac', got {b:g} s."
        )
    return _Settings(
        w,
        h,
        speed,
        prob,
        change,
        largest,
        count,
        bool(drift),
        b if covariance == "hac" else None,
        check_model_error(model_error_std),
    )


def _check_time(time: ArrayLike, previous: float) -> NDArray[np.float64]:
    t = check_time(time, None)
    if not 1 <= t.size <= MAX_SAMPLES:
        raise ValueError(f"Expected `time` to hold 1 to {MAX_SAMPLES} samples, got {t.size}.")
    if not t[0] > previous:
        raise ValueError(f"Expected `time` to start after {previous:.9g} s, got {t[0]:.9g} s.")
    return t


def _samples(
    model: FixedModel,
    settings: _Settings,
    hidden: NDArray[np.float64],
    time: NDArray[np.float64],
    *log: Any,
    counts: NDArray[np.bool_] | None = None,
) -> WindowSamples:
    q, velocity, torque, acceleration, base_acceleration, derivative_window = log
    n_samples, n = time.size, model.chain.n_joints
    qq = check_log(q, "q", n, n_samples)
    qd = check_log(velocity, "velocity", n, n_samples)
    tau = check_log(torque, "torque", n, n_samples)
    if counts is None:
        counts = np.ones(n_samples, dtype=bool)  # where the acceleration counts
    if acceleration is None:  # the estimator's derivative rule
        qdd, counts = acceleration_from_log(
            time, qd, check_positive(derivative_window, "derivative_window")
        )
    else:
        qdd = check_log(acceleration, "acceleration", n, n_samples)
    base = check_base_acceleration(base_acceleration, n_samples)
    offset, slope = affine_torque(model, qq, qd, qdd, base)
    residual = tau - offset
    if not (np.isfinite(residual).all() and np.isfinite(slope).all()):
        raise ValueError("Expected `torque` and the model's torques to be finite, got an overflow.")
    used = ((np.abs(qd) >= settings.min_speed) & counts[:, None]).astype(np.float64)
    scale = (model.gains * model.gravity)[:, None]
    if hidden.shape[-1]:
        frames = link_frames(model.chain, qq)
        hidden_slope = np.concatenate(
            [scale * gravity_columns(frames, th) for th in hidden.T], axis=-1
        )
    else:
        hidden_slope = np.zeros((n_samples, n, 0))
    return WindowSamples(time, residual, slope, used, hidden_slope)


# A window, its start and end, and the change detector's verdict.
_Row = tuple[Window, float, float, Verdict]


def _assemble(
    rows: list[_Row],
    settings: _Settings,
    n: int,
    fingerprint: frozenset[str],
) -> UpTrack:
    w = len(rows)
    start = np.array([r[1] for r in rows], dtype=np.float64)
    end = np.array([r[2] for r in rows], dtype=np.float64)
    return UpTrack(
        np.array([r[0].up for r in rows], dtype=np.float64).reshape(w, 3),
        np.array([r[0].information for r in rows], dtype=np.float64).reshape(w, 3, 3),
        0.5 * (start + end),
        start,
        end,
        np.array([r[0].n_samples for r in rows], dtype=np.int64),
        np.array([r[0].residual_rms for r in rows], dtype=np.float64).reshape(w, n),
        np.array([r[0].determined for r in rows], dtype=bool),
        np.array([r[3].tested for r in rows], dtype=bool),
        np.array([r[3].chi2 for r in rows], dtype=np.float64),
        np.array([r[3].p_value for r in rows], dtype=np.float64),
        np.array([r[3].dof for r in rows], dtype=np.float64),
        np.array([r[3].n_windows for r in rows], dtype=np.int64),
        np.array([r[3].angle for r in rows], dtype=np.float64),
        np.array([r[3].alarm for r in rows], dtype=bool),
        np.array([r[3].reference_up for r in rows], dtype=np.float64).reshape(w, 3),
        np.array([r[3].model_error_std for r in rows], dtype=np.float64),
        np.array([r[0].rate for r in rows], dtype=np.float64).reshape(w, 3),
        settings.window,
        settings.hop,
        settings.significance,
        settings.min_change,
        settings.max_std,
        settings.drift,
        fingerprint=fingerprint,
    )


class UpTracker:
    """Incremental form of :func:`track_up` for controller code: feed samples, get windows.

    Parameters
    ----------
    fit : MotionFit
        The identification whose inertial parameters, gains, joint parameters and noise levels
        are held fixed (:func:`gravdir.estimate_up_from_motion`).
    window, hop, min_speed, significance, min_change, max_std, reference_windows, drift, \
covariance, bandwidth, model_error_std
        As for :func:`track_up`.

    Raises
    ------
    ValueError
        As :func:`track_up` for the fit and the settings.

    Notes
    -----
    :meth:`update` buffers samples, solves every window they complete (once a sample at or after
    its end has arrived), runs the change detector and drops the samples no later window needs:
    fed in any pieces it gives the windows of one :func:`track_up` call on the whole log.

    See Also
    --------
    track_up : the same on a whole log at once.

    Examples
    --------
    A one-joint pendulum about base y (its parameters known exactly, a stand-in for a fit) on a
    base tilted 0.1 rad about y, fed in pieces of 0.3 s:

    >>> from types import SimpleNamespace
    >>> from gravdir.kinematics import chain_from_poe
    >>> from gravdir.dynamics import inertial_parameters, inverse_dynamics_regressor
    >>> chain = chain_from_poe([[0, 1, 0, 0, 0, 0]], np.eye(4))
    >>> theta = inertial_parameters([2.0], [[0.5, 0, 0]], [np.eye(3) * 0.01])
    >>> fit = SimpleNamespace(up=np.array([0, 0, 1.0]), inertial_parameters=theta,
    ...     gains=np.ones(1), joint_parameters=np.zeros((1, 4)), noise_std=np.full(1, 0.01),
    ...     chain=chain, gravity=9.80665)
    >>> t = np.arange(0, 3, 0.01)[:, None]
    >>> q, v, a = np.sin(2 * t), 2 * np.cos(2 * t), -4 * np.sin(2 * t)
    >>> tau = inverse_dynamics_regressor(chain, q, v, a, up=[np.sin(0.1), 0, np.cos(0.1)]) @ theta
    >>> tracker = UpTracker(fit, window=1.0, covariance="white")  # white noise, exact model
    >>> pieces = [tracker.update(t[i:i + 30, 0], q=q[i:i + 30], velocity=v[i:i + 30],
    ...                          acceleration=a[i:i + 30], torque=tau[i:i + 30])
    ...           for i in range(0, 300, 30)]
    >>> [p.n_windows for p in pieces], tracker.n_windows
    ([0, 0, 0, 1, 0, 0, 1, 0, 0, 0], 2)
    >>> float(np.arcsin(pieces[3].up[0, 0]).round(9))
    0.1
    """

    def __init__(
        self,
        fit: Any,
        *,
        window: float = DEFAULT_WINDOW,
        hop: float | None = None,
        min_speed: float = DEFAULT_MIN_SPEED,
        significance: float = DEFAULT_SIGNIFICANCE,
        min_change: float = DEFAULT_MIN_CHANGE,
        max_std: float = DEFAULT_MAX_STD,
        reference_windows: int = DEFAULT_REFERENCE_WINDOWS,
        drift: bool = False,
        covariance: CovarianceOption = "hac",
        bandwidth: float = DEFAULT_BANDWIDTH,
        model_error_std: float | Literal["estimate"] = "estimate",
    ) -> None:
        self._model = fixed_model(fit)
        self._settings = _settings(
            window,
            hop,
            min_speed,
            significance,
            min_change,
            max_std,
            reference_windows,
            drift,
            covariance,
            bandwidth,
            model_error_std,
        )
        s = self._settings
        overlap = math.ceil(s.window / s.hop - 1e-9)
        self._detector = Detector(
            s.significance, s.min_change, s.reference_windows, overlap, s.model_error
        )
        self._hidden = hidden_directions(self._model)
        self._buffer: WindowSamples | None = None
        self._t0 = 0.0
        self._next = 0
        self._last = -math.inf
        self.n_windows = 0
        self.n_alarms = 0

    __hash__ = None  # type: ignore[assignment]  # compared by value

    def __eq__(self, other: object) -> bool:
        """Two trackers are equal when their fit, settings, buffer and detector state are."""
        return type(other) is type(self) and _equal(vars(self), vars(other))

    def update(
        self,
        time: ArrayLike,
        *,
        q: ArrayLike,
        velocity: ArrayLike,
        acceleration: ArrayLike,
        torque: ArrayLike,
        base_acceleration: ArrayLike | None = None,
    ) -> UpTrack:
        """Add samples; return the windows they complete (possibly none).

        Parameters
        ----------
        time : array_like, shape (N,)
            Sample times, s, strictly increasing and after every sample already given; none
            (N = 0, a cycle that brought no samples) completes no window.
        q, velocity, acceleration, torque : array_like, shape (N, n)
            Joint positions (rad), velocities (rad/s), accelerations (rad/s²; computed by the
            caller, e.g. with :func:`gravdir.sweep.joint_acceleration` over a buffer) and
            measured torques (the fit's units); keyword-only.
        base_acceleration : array_like, shape (N, 3), optional
            Acceleration of the base, base frame, m/s² (a mobile platform); default none.

        Returns
        -------
        UpTrack
            The completed windows, ``W >= 0`` of them, already run through the change detector.

        Raises
        ------
        ValueError
            If a shape is wrong, a value is not finite, `time` does not increase past the
            samples already seen, `q` lies beyond ±4π ("degrees?"), or the samples complete
            more than 1,000,000 windows at once.
        """
        if acceleration is None:
            raise ValueError("Expected `acceleration` (N, n), got None.")
        if np.shape(time) == (0,):  # a cycle that brought no samples completes no window
            n = self._model.chain.n_joints
            series = {"q": q, "velocity": velocity, "acceleration": acceleration, "torque": torque}
            for name, x in series.items():
                check_log(x, name, n, 0)
            return _assemble([], self._settings, n, self._model.fingerprint)
        return self._ingest(time, q, velocity, torque, acceleration, base_acceleration, None)

    def _ingest(self, time: ArrayLike, *log: Any) -> UpTrack:
        rows = self._rows(time, *log)
        n = self._model.chain.n_joints
        fingerprint = data_fingerprint(np.asarray(log[2], dtype=np.float64))
        return _assemble(rows, self._settings, n, self._model.fingerprint | fingerprint)

    def _rows(
        self, time: ArrayLike, *log: Any, counts: NDArray[np.bool_] | None = None
    ) -> list[_Row]:
        """The windows that the samples complete, with their verdicts; `counts` (N,) where a
        given acceleration counts (default everywhere)."""
        t = _check_time(time, self._last)
        # BLAS on one thread for the samples and the windows' solves (gravdir._threads): both
        # track_up and update come through here.
        with one_blas_thread():
            with (
                np.errstate(under="ignore", over="raise", invalid="raise"),
                overflow_error(_OVERFLOW),
            ):
                part = _samples(self._model, self._settings, self._hidden, t, *log, counts=counts)
            buf = self._buffer
            t0 = float(t[0]) if buf is None else self._t0
            if buf is not None:
                part = WindowSamples(
                    *(np.concatenate([x, y]) for x, y in zip(buf, part, strict=True))
                )
            return self._emit(part, t0, float(t[-1]))

    def _emit(self, buf: WindowSamples, t0: float, last: float) -> list[_Row]:
        """The windows of the samples `buf` (those kept and the new ones; the first at `t0`,
        the last at `last`). The tracker's state changes only once every window is solved: a
        chunk refused on the way leaves it as it was."""
        s = self._settings
        bounds: list[tuple[float, float]] = []
        after = self._next
        while True:
            start = t0 + after * s.hop
            end = start + s.window
            if end > last:
                break
            bounds.append((start, end))
            after += 1
            if len(bounds) > MAX_WINDOWS:
                raise ValueError(
                    f"Expected `time` to span at most {MAX_WINDOWS} windows at once, got more."
                )
        parts = [
            take(buf, int(np.searchsorted(buf.time, a)), int(np.searchsorted(buf.time, b)))
            for a, b in bounds
        ]
        with np.errstate(under="ignore", over="raise", invalid="raise"), overflow_error(_OVERFLOW):
            wins = (
                solve_windows(parts, self._model, bounds, s.drift, s.max_std, s.bandwidth)
                if parts
                else []
            )
        rows = [
            (win, a, b, self._detector.step(win, a, b))
            for win, (a, b) in zip(wins, bounds, strict=True)
        ]
        keep = int(np.searchsorted(buf.time, t0 + after * s.hop))
        self._buffer = take(buf, keep, buf.time.size)
        self._t0, self._next, self._last = t0, after, last
        self.n_windows += len(rows)
        self.n_alarms += sum(bool(r[3].alarm) for r in rows)
        return rows


def track_up(
    fit: Any,
    time: ArrayLike,
    *,
    q: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike | None = None,
    torque: ArrayLike,
    base_acceleration: ArrayLike | None = None,
    derivative_window: float = DEFAULT_DERIVATIVE_WINDOW,
    window: float = DEFAULT_WINDOW,
    hop: float | None = None,
    min_speed: float = DEFAULT_MIN_SPEED,
    significance: float = DEFAULT_SIGNIFICANCE,
    min_change: float = DEFAULT_MIN_CHANGE,
    max_std: float = DEFAULT_MAX_STD,
    reference_windows: int = DEFAULT_REFERENCE_WINDOWS,
    drift: bool = False,
    covariance: CovarianceOption = "hac",
    bandwidth: float = DEFAULT_BANDWIDTH,
    model_error_std: float | Literal["estimate"] = "estimate",
) -> UpTrack:
    """Track `up` over sliding windows of a motion log, the arm's parameters identified once.

    Parameters
    ----------
    fit : MotionFit
        An identification by :func:`gravdir.estimate_up_from_motion` (of this arm, earlier or
        on another part of the log): its `inertial_parameters`, `gains`, `joint_parameters` and
        `noise_std` are held fixed; only `up` is estimated per window.
    time : array_like, shape (N,)
        Sample times, s, strictly increasing (jitter allowed).
    q, velocity : array_like, shape (N, n)
        Joint positions (rad, within ±4π) and velocities (rad/s); keyword-only, as the series
        that follow.
    acceleration : array_like, shape (N, n), optional
        Joint accelerations, rad/s². Default: the derivative of `velocity` by the rule of
        :func:`gravdir.estimate_up_from_motion` (split at gaps, `derivative_window`, the ends of
        each stretch left out).
    torque : array_like, shape (N, n)
        Measured joint torques (the units the fit was made in).
    base_acceleration : array_like, shape (N, 3), optional
        Acceleration of the base, base frame, m/s² (a mobile platform); default none. Without
        it the tracker sees the apparent gravity.
    derivative_window : float, optional
        Window of that derivative, s (default 0.2, as the estimator's).
    window : float, optional
        Window length, s (default 6: six Bartlett bandwidths, see `covariance`).
    hop : float, optional
        Spacing of window starts, s, in ``(0, window]`` (default `window`: windows that do not
        overlap). At most 1000 windows overlap.
    min_speed : float, optional
        A joint's sample is left out where its speed is below this, rad/s (default 0.02, as
        :func:`gravdir.estimate_up_from_motion`): near a reversal the drive sticks.
    significance : float, optional
        Probability, per tested window without a change, that the test fires (default 1e-4:
        with 6 s windows, 0.06 an hour): the window raises an alarm where its `change_p` is
        below it.
    min_change : float, optional
        Smallest change of `up` reported, rad (default 0.25° in radians): guards against model
        error, which the chi-square test does not see.
    max_std : float, optional
        Largest standard deviation of `up` (root-mean-square angle, rad) of a window that counts
        as determined (default 2° in radians, at most π). A window with less motion (the arm
        starting from rest, a nudge) is reported undetermined: it is neither tested nor part of a
        reference.
    reference_windows : int, optional
        How many earlier windows of the segment form the reference (default 20, at most 1000):
        with `model_error_std` estimated, the more the better the estimate and the stronger
        the test (``ν = 2 (R - 1)``).
    drift : bool, optional
        Whether each window also estimates a constant rate of change of `up` (default False):
        `up` then refers to the window's centre even while the base tilts steadily (without it
        a ramp biases a window by up to its whole drift, not half of it); the rate is profiled
        out of the information, at the cost of the information it shares with `up`.
    covariance : {"hac", "white"}, optional
        Each window's covariance of `up`: ``"hac"`` (default) the Bartlett sandwich of the
        window's own per-sample scores, honest when the torque residuals are correlated in time
        as on real arms; ``"white"`` the Fisher information of independent residuals with the
        fit's `noise_std`.
    bandwidth : float, optional
        Bandwidth of the Bartlett kernel of ``covariance="hac"``, s (default 1, as
        :func:`gravdir.estimate_up_from_motion`), its lags counted at each window's median
        interval; at most half the `window`.
    model_error_std : float or "estimate", optional
        Model-error standard deviation of a window, per tangent direction, rad: the error the
        stretch of trajectory in a window fixes, which no within-window covariance sees (the
        windows of one real log scatter about each other by about twice their sandwich
        standard deviations). ``"estimate"`` (default) estimates it from the reference windows'
        scatter (the Paule--Mandel rule of :func:`gravdir.fuse_up`) and refers the change test
        to F(2, ν); a number (0 for none) is added to every window and keeps the chi-square
        reference.

    Returns
    -------
    UpTrack
        One row per complete window ``[t0 + k hop, t0 + k hop + window)`` (complete when a
        sample at or after its end exists), ``t0 = time[0]``.

    Raises
    ------
    ValueError
        If `fit` lacks a field of a :class:`MotionFit` or has the wrong shapes for
        its chain; a shape is wrong or a value not finite; `time` does not increase strictly;
        `q` lies beyond ±4π ("degrees?"); `window`, `hop`, `min_speed`, `min_change`,
        `max_std`, `significance`, `reference_windows`, `covariance` or `bandwidth` is out of
        range (`min_change` or `max_std` beyond π ends with "degrees?").
    InsufficientDataError
        If the log does not span one window.

    Notes
    -----
    With the fit's parameters fixed the torques are affine in `up`, :math:`\\tau = a + B u`; per
    window the maximum-likelihood `up` minimises :math:`u^\\top H u - 2 b^\\top u` on the unit
    sphere, solved through its secular equation, with information :math:`P H P` (white noise)
    or the inverse of the Bartlett sandwich of the window's scores (the default). Where the fit was
    made on a base that hides some mass moments from the torques (an upright base hides link 1's
    horizontal first moments), their torques on a later tilt are profiled out of every window, so
    the tracking is unbiased for any tilt. Derivation, change detector,
    threshold rule and measured figures: the *Tracking* page of the documentation.

    See Also
    --------
    UpTracker : the same, fed piece by piece.
    track_up_from_chunks : the same on a log read in chunks (too long for memory).
    gravdir.estimate_up_from_motion : the identification the tracker starts from.

    References
    ----------
    W. Gander, "Least squares with a quadratic constraint", *Numer. Math.* 36 (1981) 291--307
    (the secular equation); S. M. Kay, *Fundamentals of Statistical Signal Processing, Vol. II:
    Detection Theory* (1998), ch. 6 (the chi-square test of a change in a Gaussian mean).

    Examples
    --------
    A two-joint arm on a base tilted 0.1 rad about y whose tilt steps by 2° at t = 5 s; its
    parameters known exactly (a stand-in for a fit made on that base), torque noise 0.01 N·m:

    >>> from types import SimpleNamespace
    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.dynamics import inertial_parameters, inverse_dynamics_regressor
    >>> chain = chain_from_dh([0.3, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> theta = inertial_parameters([2.0, 3.0], [[0, 0, 0.1], [-0.2, 0, 0.05]],
    ...                             np.tile(np.eye(3) * 0.01, (2, 1, 1)))
    >>> fit = SimpleNamespace(up=np.array([np.sin(0.1), 0, np.cos(0.1)]),
    ...                       inertial_parameters=theta,
    ...                       gains=np.ones(2), joint_parameters=np.zeros((2, 4)),
    ...                       noise_std=np.full(2, 0.01), chain=chain, gravity=9.80665)
    >>> t = np.arange(0, 10, 0.01)
    >>> q = np.stack([np.sin(0.9 * t), 0.8 * np.sin(1.3 * t) + 0.5], axis=-1)
    >>> v = np.stack([0.9 * np.cos(0.9 * t), 1.04 * np.cos(1.3 * t)], axis=-1)
    >>> a = np.stack([-0.81 * np.sin(0.9 * t), -1.352 * np.sin(1.3 * t)], axis=-1)
    >>> tilt = np.where(t < 5, 0.1, 0.1 + np.radians(2.0))
    >>> up = np.stack([np.sin(tilt), 0 * t, np.cos(tilt)], axis=-1)
    >>> y = inverse_dynamics_regressor(chain, q, v, a, up=up)
    >>> rng = np.random.default_rng(0)
    >>> tau = y @ theta + rng.normal(0, 0.01, (t.size, 2))
    >>> track = track_up(fit, t, q=q, velocity=v, acceleration=a, torque=tau, window=1.0,
    ...                  covariance="white")  # white noise and an exact model: no sandwich
    >>> track.n_windows, track.alarm_times.tolist()
    (9, [6.0])
    >>> bool(np.all(np.abs(np.arcsin(track.up[:, 0]) - np.where(track.time_end <= 5, 0.1,
    ...      0.1 + np.radians(2))) < np.radians(0.2)))
    True
    """
    tracker = UpTracker(
        fit,
        window=window,
        hop=hop,
        min_speed=min_speed,
        significance=significance,
        min_change=min_change,
        max_std=max_std,
        reference_windows=reference_windows,
        drift=drift,
        covariance=covariance,
        bandwidth=bandwidth,
        model_error_std=model_error_std,
    )
    t = _check_time(time, -math.inf)
    if float(t[-1] - t[0]) < tracker._settings.window:
        raise InsufficientDataError(
            f"Expected `time` to span at least one `window` ({tracker._settings.window:g} s), "
            f"got {float(t[-1] - t[0]):.6g} s."
        )
    log = (q, velocity, torque, acceleration, base_acceleration, derivative_window)
    return tracker._ingest(t, *log)
