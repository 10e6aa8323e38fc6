"""A motion log read in chunks: the tracker and the estimator on a log not held whole.

A log is given as a re-iterable source of chunks, each a mapping with the keyword arrays of
:func:`gravdir.motion.track_up` or :func:`gravdir.motion.estimate_up_from_motion` for
consecutive stretches of samples. A first pass reads the stamps (and the rows a NaN drops: the
derivative's gaps and grids depend on all of them); a second pass derives the acceleration as the
samples arrive (:class:`gravdir.motion._derive.AccelerationStream`) and feeds the tracker, or
keeps the samples the estimator fits. The tracker's memory: the stamps (8 bytes a sample), a
chunk and a window of samples; the estimator's: the samples it fits, 40 bytes a joint.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, check_array, check_option, check_per_joint, check_positive
from gravdir._constants import STANDARD_GRAVITY
from gravdir._hac import DEFAULT_BANDWIDTH
from gravdir._options import CovarianceOption, Friction, LoadFriction
from gravdir._results import ChunkFingerprint
from gravdir._time import check_time
from gravdir.errors import InsufficientDataError
from gravdir.kinematics import SerialChain
from gravdir.motion._derive import AccelerationStream
from gravdir.motion._estimate import Settings, estimate
from gravdir.motion._fit import MotionFit
from gravdir.motion._inputs import (
    DEFAULT_MIN_SPEED,
    DEFAULT_SPEED_TAPER,
    MAX_SAMPLES,
    check_base_acceleration,
    check_chain,
    check_log,
    sample_weights,
)
from gravdir.motion._samples import DEFAULT_DERIVATIVE_WINDOW, Samples, check_covariance
from gravdir.motion._track import (
    DEFAULT_MAX_STD,
    DEFAULT_MIN_CHANGE,
    DEFAULT_REFERENCE_WINDOWS,
    DEFAULT_SIGNIFICANCE,
    DEFAULT_WINDOW,
    UpTrack,
    UpTracker,
    _assemble,
    _Row,
)

__all__ = ["estimate_up_from_motion_chunks", "track_up_from_chunks"]

# The keys of a chunk: the keyword arrays of track_up (`acceleration` and `base_acceleration`
# optional).
REQUIRED = ("time", "q", "velocity", "torque")
OPTIONAL = ("acceleration", "base_acceleration")


def check_chunks(chunks: object) -> Iterable[Mapping[str, ArrayLike]]:
    """`chunks` if it can be iterated more than once (not an iterator, a mapping or a string)."""
    if isinstance(chunks, str | bytes | Mapping | np.ndarray) or not isinstance(chunks, Iterable):
        raise ValueError(
            "Expected `chunks` to be a re-iterable source of chunks (a list of mappings, or an "
            f"object whose __iter__ reads the log from its start), got {type(chunks).__name__}."
        )
    if isinstance(chunks, Iterator):
        raise ValueError(
            f"Expected `chunks` to be re-iterable (a list, or an object whose __iter__ starts "
            f"again), got an iterator ({type(chunks).__name__}), which the second pass would "
            "find empty."
        )
    return chunks


def _chunk(chunk: object, k: int, optional: tuple[str, ...] = OPTIONAL) -> Mapping[str, ArrayLike]:
    if not isinstance(chunk, Mapping):
        raise ValueError(
            f"Expected every chunk of `chunks` to be a mapping of {', '.join(REQUIRED)}, got "
            f"{type(chunk).__name__} at chunk {k}."
        )
    missing = [key for key in REQUIRED if key not in chunk]
    unknown = sorted(str(key) for key in chunk if key not in REQUIRED + optional)
    if missing or unknown:
        raise ValueError(
            f"Expected chunk {k} of `chunks` to hold {', '.join(REQUIRED)} (and optionally "
            f"{', '.join(optional)}), got {'no ' + ', '.join(missing) if missing else ''}"
            f"{' and ' if missing and unknown else ''}"
            f"{'unknown ' + ', '.join(unknown) if unknown else ''}."
        )
    return chunk


def read_stamps(
    chunks: Iterable[Mapping[str, ArrayLike]],
    optional: tuple[str, ...] = OPTIONAL,
    finite: tuple[str, ...] | None = None,
    n: int = 0,
) -> tuple[NDArray[np.float64], bool, NDArray[np.bool_] | None]:
    """The stamps of the whole log (checked: finite, strictly increasing across chunks),
    whether its chunks carry `acceleration` (all or none) and, where `finite` names the
    columns (of `n` joints) whose NaN rows are dropped, the rows without one."""
    stamps: list[NDArray[np.float64]] = []
    rows: list[NDArray[np.bool_]] = []
    last = -math.inf
    given: bool | None = None
    for k, raw in enumerate(chunks):
        chunk = _chunk(raw, k, optional)
        t = check_time(chunk["time"], None)
        if finite is not None:
            keep = np.ones(t.size, dtype=bool)
            for key in finite:
                if chunk.get(key) is not None:
                    keep &= np.isfinite(check_log(chunk[key], key, n, t.size, finite=False)).all(1)
            rows.append(keep)
        if not t[0] > last:
            raise ValueError(
                f"Expected `time` to increase strictly across chunks, got chunk {k} starting at "
                f"{t[0]:.9g} s after {last:.9g} s."
            )
        has = "acceleration" in chunk and chunk["acceleration"] is not None
        if given is not None and has != given:
            raise ValueError(
                "Expected `acceleration` in every chunk of `chunks` or in none, got it in some."
            )
        given, last = has, float(t[-1])
        stamps.append(t)
    if not stamps:
        raise InsufficientDataError("Expected `chunks` to hold at least one chunk, got none.")
    return np.concatenate(stamps), bool(given), np.concatenate(rows) if rows else None


def read_chunks(
    chunks: Iterable[Mapping[str, ArrayLike]],
    stamps: NDArray[np.float64],
    n: int,
    finite: bool = True,
) -> Iterator[dict[str, NDArray[np.float64]]]:
    """The chunks again, their arrays checked (shape (s, n), finite unless not `finite`;
    `base_acceleration` (s, 3); `weights` as given) and their stamps those of the first pass."""
    start = 0
    for k, raw in enumerate(chunks):
        chunk = _chunk(raw, k, OPTIONAL + ("weights",))
        t = np.asarray(chunk["time"], dtype=np.float64).reshape(-1)
        if not np.array_equal(t, stamps[start : start + t.size]):
            raise ValueError(
                f"Expected `chunks` to give the same samples on every pass, got other stamps in "
                f"chunk {k}."
            )
        s = t.size
        out = {"time": t}
        for key in ("q", "velocity", "torque", "acceleration"):
            if chunk.get(key) is not None:
                out[key] = check_log(chunk[key], key, n, s, finite=finite)
        acc = check_base_acceleration(chunk.get("base_acceleration"), s)
        if acc is not None:
            out["base_acceleration"] = np.broadcast_to(acc, (s, 3))
        if chunk.get("weights") is not None:
            out["weights"] = check_array(chunk["weights"], "weights")
        start += s
        yield out
    if start != stamps.size:
        raise ValueError(
            "Expected `chunks` to give the same samples on every pass, got "
            f"{start} samples on the second pass and {stamps.size} on the first."
        )


def track_up_from_chunks(
    fit: Any,
    chunks: Iterable[Mapping[str, ArrayLike]],
    *,
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
    """:func:`track_up` on a log read in chunks, for logs too long to hold in memory.

    Parameters
    ----------
    fit : MotionFit
        As for :func:`track_up`.
    chunks : iterable of mappings
        The log as consecutive chunks, each a mapping with the arrays ``"time"`` (s,), ``"q"``,
        ``"velocity"``, ``"torque"`` (s, n) and optionally ``"acceleration"`` (s, n; in every
        chunk or in none) and ``"base_acceleration"`` (3,) or (s, 3), as the arguments of
        :func:`track_up`; any number of samples per chunk. It is read twice (the stamps first),
        so it must start again when iterated again: a list, or an object whose ``__iter__``
        reads the log from its start, not a generator.
    derivative_window, window, hop, min_speed, significance, min_change, max_std, \
reference_windows, drift, covariance, bandwidth, model_error_std
        As for :func:`track_up`.

    Returns
    -------
    UpTrack
        The track of :func:`track_up` on the whole log (the chunks joined): the same windows,
        values and fingerprint.

    Raises
    ------
    ValueError
        If `chunks` is not re-iterable (a generator or other iterator), a chunk is not a
        mapping or lacks a key, `time` does not increase strictly across chunks, `acceleration`
        is in some chunks only, a second pass gives other samples than the first, or as
        :func:`track_up`.
    InsufficientDataError
        If `chunks` is empty or the log does not span one window.

    Notes
    -----
    The acceleration derived from `velocity` follows the rule of :func:`track_up` (split at
    gaps of the whole log, each segment filtered on its own stamps), computed as the samples
    arrive: each sample's filter reads one derivative window of samples around it. Memory
    holds the stamps of the whole log (8 bytes a sample), the chunk being read, a derivative
    window and a tracking window of samples, and one row per window of the result; time is
    linear in the length of the log. The *Tracking* page gives the measured figures.

    See Also
    --------
    track_up : the same on a log in memory.
    UpTracker : windows as samples arrive, for controller code (acceleration given).

    Examples
    --------
    A one-joint pendulum about base y (its parameters known exactly, a stand-in for a fit) on a
    base tilted 0.1 rad about y, in chunks of 0.5 s:

    >>> from types import SimpleNamespace
    >>> from gravdir.kinematics import chain_from_poe
    >>> from gravdir.dynamics import inertial_parameters, inverse_dynamics_regressor
    >>> from gravdir.motion import track_up
    >>> chain = chain_from_poe([[0, 1, 0, 0, 0, 0]], np.eye(4))
    >>> theta = inertial_parameters([2.0], [[0.5, 0, 0]], [np.eye(3) * 0.01])
    >>> fit = SimpleNamespace(up=np.array([0, 0, 1.0]), inertial_parameters=theta,
    ...     gains=np.ones(1), joint_parameters=np.zeros((1, 4)), noise_std=np.full(1, 0.01),
    ...     chain=chain, gravity=9.80665)
    >>> t = np.arange(0, 3, 0.01)
    >>> q, v, a = np.sin(2 * t)[:, None], 2 * np.cos(2 * t)[:, None], -4 * np.sin(2 * t)[:, None]
    >>> tau = inverse_dynamics_regressor(chain, q, v, a, up=[np.sin(0.1), 0, np.cos(0.1)]) @ theta
    >>> chunks = [{"time": t[i:i + 50], "q": q[i:i + 50], "velocity": v[i:i + 50],
    ...            "torque": tau[i:i + 50]} for i in range(0, 300, 50)]
    >>> track = track_up_from_chunks(fit, chunks, window=1.0, covariance="white")
    >>> whole = track_up(fit, t, q=q, velocity=v, torque=tau, window=1.0, covariance="white")
    >>> track.n_windows, bool(np.array_equal(track.up, whole.up)), track == whole
    (2, True, True)
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
    source = check_chunks(chunks)
    stamps, given, _ = read_stamps(source)
    span = float(stamps[-1] - stamps[0])
    if span < tracker._settings.window:
        raise InsufficientDataError(
            f"Expected `time` to span at least one `window` ({tracker._settings.window:g} s), "
            f"got {span:.6g} s."
        )
    n = tracker._model.chain.n_joints
    stream = None
    if not given:
        stream = AccelerationStream(stamps, check_positive(derivative_window, "derivative_window"))
    digest = ChunkFingerprint((stamps.size, n))
    rows: list[_Row] = []

    def add(part: dict[str, NDArray[Any]] | None) -> None:
        if part is not None and part["time"].size:
            rows.extend(
                tracker._rows(
                    part["time"], part["q"], part["velocity"], part["torque"],
                    part["acceleration"], part.get("base_acceleration"), None,
                    counts=part.get("counts"),
                )
            )  # fmt: skip

    for chunk in read_chunks(source, stamps, n):
        digest.add(chunk["torque"])
        add(chunk if stream is None else stream.feed(chunk))
    if stream is not None:
        add(stream.finish())
    return _assemble(rows, tracker._settings, n, tracker._model.fingerprint | digest.result())


def estimate_up_from_motion_chunks(
    chain: SerialChain,
    chunks: Iterable[Mapping[str, ArrayLike]],
    *,
    derivative_window: float = DEFAULT_DERIVATIVE_WINDOW,
    noise_std: ArrayLike | None = None,
    gains: ArrayLike | Literal["estimate"] = "estimate",
    friction: Friction = "coulomb-viscous",
    load_friction: LoadFriction = "auto",
    ripple_components: int = 2,
    gravity: float = STANDARD_GRAVITY,
    min_speed: float = DEFAULT_MIN_SPEED,
    speed_taper: float = DEFAULT_SPEED_TAPER,
    torque_limits: ArrayLike | None = None,
    nan_policy: NanPolicy = "raise",
    covariance: CovarianceOption = "white",
    bandwidth: float = DEFAULT_BANDWIDTH,
    n_grid: int = 400,
    n_starts: int = 6,
    max_iter: int = 200,
    xtol: float = 1e-10,
) -> MotionFit:
    """:func:`estimate_up_from_motion` on a log read in chunks, keeping only the samples it fits.

    Parameters
    ----------
    chain : SerialChain
        As for :func:`estimate_up_from_motion`.
    chunks : iterable of mappings
        The log as consecutive chunks, each a mapping with the arrays ``"time"`` (s,), ``"q"``,
        ``"velocity"``, ``"torque"`` (s, n) and optionally ``"acceleration"`` (s, n; in every
        chunk or in none), ``"base_acceleration"`` (3,) or (s, 3) and ``"weights"`` (s,) or
        (s, n), as the arguments of :func:`estimate_up_from_motion`; any number of samples per
        chunk, at most 5,000,000 in all. It is read twice (the stamps and rows holding a NaN
        first), so it must start again when iterated again: a list, or an object whose
        ``__iter__`` reads the log from its start, not a generator.
    derivative_window, noise_std, gains, friction, load_friction, ripple_components, gravity, \
min_speed, speed_taper, torque_limits, nan_policy, covariance, bandwidth, n_grid, n_starts, \
max_iter, xtol
        As for :func:`estimate_up_from_motion`.

    Returns
    -------
    MotionFit
        The estimate of :func:`estimate_up_from_motion` on the whole log (the chunks joined):
        the same samples are fitted, to the last bit.

    Raises
    ------
    ValueError
        If `chunks` is not re-iterable (a generator or other iterator), a chunk is not a
        mapping or lacks a key, `time` does not increase strictly across chunks, `acceleration`
        is in some chunks only, a second pass gives other samples than the first, the chunks
        hold more than 5,000,000 samples, or as :func:`estimate_up_from_motion`.
    InsufficientDataError
        If `chunks` is empty, or as :func:`estimate_up_from_motion`.
    DegenerateGeometryError
        As :func:`estimate_up_from_motion`.

    Warns
    -----
    GravdirWarning, ConvergenceWarning
        As :func:`estimate_up_from_motion`.

    Notes
    -----
    The first pass reads the stamps (and, under ``nan_policy="omit"``, which rows hold a NaN);
    the second derives the acceleration as the samples arrive, by the rule of
    :func:`estimate_up_from_motion`, and keeps what the fit uses: per sample the angles,
    velocities, accelerations, torques and weights of every joint (40 bytes a joint). The
    estimator then works on those as the in-memory one does, with its per-sample work in
    blocks of rows, so that its memory beyond them stays a small multiple of them: it needs
    every sample several times (the ripple search, the load-friction passes, the residuals'
    autocorrelation), and a log whose fitted samples do not fit in memory is estimated from a
    part of it. Measured memory and time: the *Performance* page, "Long logs in chunks".

    See Also
    --------
    estimate_up_from_motion : the same on a log in memory.
    track_up_from_chunks : the tracker on a log read in chunks.

    Examples
    --------
    The three-joint arm of :func:`estimate_up_from_motion`'s example, its log in chunks of
    400 samples:

    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.dynamics import inverse_dynamics_regressor
    >>> from gravdir.motion import estimate_up_from_motion
    >>> chain = chain_from_dh([0.1, 0.05, 0.0], [0.0, 0.2, 0.1], [0.05, 0.4, 0.3],
    ...                       [np.pi / 2, 0.3, -np.pi / 2])
    >>> t = np.linspace(0.0, 10.0, 2001)[:, None]
    >>> w = np.array([0.9, 1.3, 1.7])
    >>> q, qd, qdd = np.sin(w * t), w * np.cos(w * t), -w**2 * np.sin(w * t)
    >>> pi = np.tile([2.0, 0.3, 0.1, 0.05, 0.2, 0.01, 0.25, 0.0, 0.02, 0.1], 3)
    >>> up = np.array([np.sin(0.17), 0.0, np.cos(0.17)])
    >>> tau = inverse_dynamics_regressor(chain, q, qd, qdd, up=up) @ pi * [1.1, 0.9, 1.0]
    >>> chunks = [{"time": t[i:i + 400, 0], "q": q[i:i + 400], "velocity": qd[i:i + 400],
    ...            "acceleration": qdd[i:i + 400], "torque": tau[i:i + 400]}
    ...           for i in range(0, 2001, 400)]
    >>> est = estimate_up_from_motion_chunks(chain, chunks)
    >>> whole = estimate_up_from_motion(chain, t[:, 0], q=q, velocity=qd, acceleration=qdd,
    ...                                 torque=tau)
    >>> bool(np.linalg.norm(est.up - up) < 1e-9), bool(np.array_equal(est.up, whole.up))
    (True, True)
    """
    chain = check_chain(chain)
    n = chain.n_joints
    source = check_chunks(chunks)
    option = check_option(nan_policy, "nan_policy", ("raise", "omit"))
    omit = ("q", "velocity", "torque", "acceleration") if option == "omit" else None
    stamps, given, keep = read_stamps(source, OPTIONAL + ("weights",), omit, n)
    if stamps.size > MAX_SAMPLES:
        raise ValueError(
            f"Expected `chunks` to hold at most {MAX_SAMPLES} samples, got {stamps.size}."
        )
    window = check_positive(derivative_window, "derivative_window")
    model = Settings.check(
        n, noise_std, gains, friction, load_friction, ripple_components, gravity, n_grid,
        n_starts, max_iter, xtol,
    )  # fmt: skip
    lags = check_covariance(covariance, bandwidth, stamps)
    limits = None if torque_limits is None else check_per_joint(torque_limits, "torque_limits", n)
    speeds = (min_speed, speed_taper, limits)
    samples = _samples(source, stamps, keep, n, window, given, speeds, option == "raise")
    return estimate(chain, samples, model, lags)


def _samples(
    source: Iterable[Mapping[str, ArrayLike]],
    stamps: NDArray[np.float64],
    keep: NDArray[np.bool_] | None,
    n: int,
    window: float,
    given: bool,
    speeds: tuple[float, float, NDArray[np.float64] | None],
    finite: bool,
) -> Samples:
    """The samples fitted, read in the second pass: the rows of `keep` (default all), the
    acceleration derived as they arrive unless `given`, and their weights."""
    kept = np.ones(stamps.size, dtype=bool) if keep is None else keep
    size = int(kept.sum())
    q, qd, qdd, tau, w = (np.zeros((size, n)) for _ in range(5))
    acc_base: NDArray[np.float64] | None = None
    stream = None if given else AccelerationStream(stamps[kept], window)
    start = stored = derived = 0
    for k, chunk in enumerate(read_chunks(source, stamps, n, finite)):
        s = chunk["time"].size
        rows = kept[start : start + s]
        start += s
        m = int(rows.sum())
        has = "base_acceleration" in chunk
        if k and has != (acc_base is not None):
            raise ValueError(
                "Expected `base_acceleration` in every chunk of `chunks` or in none, got it in "
                f"some (chunk {k})."
            )
        if has and acc_base is None:
            acc_base = np.zeros((size, 3))
        part = slice(stored, stored + m)
        q[part], qd[part], tau[part] = (
            chunk["q"][rows],
            chunk["velocity"][rows],
            chunk["torque"][rows],
        )
        user = chunk.get("weights")
        if user is not None:
            user = user[rows]
        w[part] = sample_weights(qd[part], tau[part], speeds[0], speeds[2], user, speeds[1])
        if acc_base is not None:
            acc_base[part] = chunk["base_acceleration"][rows]
        if stream is None:
            qdd[part] = chunk["acceleration"][rows]
        else:
            derived = _store(
                stream.feed({"time": chunk["time"][rows], "velocity": qd[part]}), qdd, w, derived
            )
        stored += m
    if stream is not None:
        derived = _store(stream.finish(), qdd, w, derived)
    return Samples(q, qd, qdd, tau, w, acc_base, stamps.size - size)


def _store(
    part: dict[str, NDArray[Any]] | None,
    acceleration: NDArray[np.float64],
    weights: NDArray[np.float64],
    at: int,
) -> int:
    """The derived acceleration of `part` stored from row `at`, the weights of the samples where
    it does not count set to 0; the next row."""
    if part is None:
        return at
    rows = slice(at, at + part["time"].size)
    acceleration[rows] = part["acceleration"]
    weights[rows][~part["counts"]] = 0.0
    return rows.stop
