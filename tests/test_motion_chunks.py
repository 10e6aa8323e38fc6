"""A motion log read in chunks: the derivative and the tracker equal those of the whole log.

`AccelerationStream` is checked against `acceleration_from_log` (the rule of every motion
function) on logs with jittered stamps, gaps, short segments and chunks of any size, and
`track_up_from_chunks` against `track_up` on a tracked arm whose base tilts by 2°. Torques come
from the regressor with the true parameters (a stand-in for a fit), plus noise.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from gravdir.dynamics import inertial_parameters, inverse_dynamics_regressor
from gravdir.errors import InsufficientDataError
from gravdir.kinematics import chain_from_dh
from gravdir.motion import (
    UpTrack,
    estimate_up_from_motion,
    estimate_up_from_motion_chunks,
    track_up,
    track_up_from_chunks,
)
from gravdir.motion._derive import AccelerationStream
from gravdir.motion._samples import acceleration_from_log

CHAIN = chain_from_dh([0.3, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
THETA = inertial_parameters(
    [2.0, 3.0], [[0, 0, 0.1], [-0.2, 0, 0.05]], np.tile(np.eye(3) * 0.01, (2, 1, 1))
)
FIT = SimpleNamespace(
    up=np.array([np.sin(0.1), 0, np.cos(0.1)]),
    inertial_parameters=THETA,
    gains=np.ones(2),
    joint_parameters=np.zeros((2, 4)),
    noise_std=np.full(2, 0.01),
    chain=CHAIN,
    gravity=9.80665,
)


def _stamps(rng: np.random.Generator, n: int, dt: float, jitter: bool, gaps: int) -> np.ndarray:
    step = np.full(n - 1, dt)
    if jitter:
        step *= rng.uniform(0.75, 1.3, n - 1)
    for g in rng.integers(0, n - 1, gaps):
        step[g] *= rng.uniform(2.5, 40.0)
    return np.concatenate([[rng.uniform(0.0, 100.0)], step]).cumsum()


def _cuts(rng: np.random.Generator, n: int, count: int) -> list[tuple[int, int]]:
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(n - 1, count), replace=False))
    return list(zip(np.r_[0, cuts].tolist(), np.r_[cuts, n].tolist(), strict=True))


@pytest.mark.parametrize("seed", range(12))
def test_the_stream_derives_what_the_whole_log_does(seed):
    """Sample for sample the same acceleration and the same samples that count, bitwise, for
    chunks of any size (one sample up to the whole log); the stream's buffer never holds more
    than a chunk and the filter's reach."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(100, 3000))
    dt = [0.01, 0.001, 0.004][seed % 3]
    time = _stamps(rng, n, dt, jitter=seed % 4 != 0, gaps=int(rng.integers(0, 5)))
    velocity = 2.0 * np.sin(np.outer(time, rng.uniform(0.5, 3.0, 3)))
    velocity += rng.normal(size=velocity.shape) * 1e-3
    window = float(rng.uniform(0.05, 0.4)) * dt / 0.01
    acceleration, counts = acceleration_from_log(time, velocity, window)
    assert counts.sum() > n // 4
    stream = AccelerationStream(time, window)
    parts, largest = [], 0
    pieces = _cuts(rng, n, int(rng.integers(1, 60)))
    for lo, hi in pieces:
        part = stream.feed({"time": time[lo:hi], "velocity": velocity[lo:hi]})
        largest = max(largest, stream._buffer["time"].size)
        parts.append(part)
    parts.append(stream.finish())
    joined = [p for p in parts if p is not None]
    np.testing.assert_array_equal(np.concatenate([p["time"] for p in joined]), time)
    np.testing.assert_array_equal(np.concatenate([p["counts"] for p in joined]), counts)
    np.testing.assert_array_equal(np.concatenate([p["acceleration"] for p in joined]), acceleration)
    chunk = max(hi - lo for lo, hi in pieces)
    reach = 8 * window / np.median(np.diff(time)) + 8
    assert largest <= chunk + reach


def _tracked_log(seed: int) -> dict[str, np.ndarray]:
    """40 s at 100 Hz with jitter, a 0.5 s gap at 17 s and a 2° step of the tilt at 25 s."""
    rng = np.random.default_rng(seed)
    t = _stamps(rng, 4000, 0.01, jitter=True, gaps=0)
    t -= t[0]
    t[t > 17.0] += 0.5
    q = np.stack([np.sin(0.9 * t), 0.8 * np.sin(1.3 * t) + 0.5], axis=-1)
    v = np.stack([0.9 * np.cos(0.9 * t), 1.04 * np.cos(1.3 * t)], axis=-1)
    a = np.stack([-0.81 * np.sin(0.9 * t), -1.352 * np.sin(1.3 * t)], axis=-1)
    tilt = np.where(t < 25.0, 0.1, 0.1 + np.radians(2.0))
    up = np.stack([np.sin(tilt), 0 * t, np.cos(tilt)], axis=-1)
    tau = inverse_dynamics_regressor(CHAIN, q, v, a, up=up) @ THETA
    tau += rng.normal(0.0, 0.01, tau.shape)
    return {"time": t, "q": q, "velocity": v, "torque": tau, "acceleration": a}


def _assert_same_track(got: UpTrack, whole: UpTrack) -> None:
    assert got.n_windows == whole.n_windows
    assert got.fingerprint == whole.fingerprint
    for field in dataclasses.fields(UpTrack):
        value, expected = getattr(got, field.name), getattr(whole, field.name)
        if isinstance(expected, np.ndarray) and expected.dtype.kind == "f":
            np.testing.assert_allclose(value, expected, rtol=1e-9, atol=1e-12, err_msg=field.name)
        elif isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(value, expected, err_msg=field.name)


@pytest.mark.parametrize("given", [False, True])
def test_chunks_give_the_track_of_the_whole_log(given):
    """Derived or given acceleration, chunks from one sample to 7 s: the windows, their
    verdicts and the fingerprint of `track_up` on the joined log; the step is found."""
    log = _tracked_log(3)
    if not given:
        del log["acceleration"]
    whole = track_up(FIT, log["time"], **{k: x for k, x in log.items() if k != "time"}, hop=1.0)
    assert whole.alarm.any() and whole.n_windows > 30
    rng = np.random.default_rng(4)
    pieces = [(0, 1), (1, 2)] + [
        (max(lo, 2), hi) for lo, hi in _cuts(rng, log["time"].size, 25) if hi > 2
    ]
    chunks = [{k: x[lo:hi] for k, x in log.items()} for lo, hi in pieces]
    _assert_same_track(track_up_from_chunks(FIT, chunks, hop=1.0), whole)


def test_a_constant_base_acceleration_per_chunk():
    log = _tracked_log(5)
    acc = np.array([0.3, -0.2, 0.0])
    whole = track_up(FIT, log["time"], **{k: x for k, x in log.items() if k != "time"},
                     base_acceleration=acc)  # fmt: skip
    chunks = [
        {**{k: x[lo : lo + 700] for k, x in log.items()}, "base_acceleration": acc}
        for lo in range(0, log["time"].size, 700)
    ]
    _assert_same_track(track_up_from_chunks(FIT, chunks), whole)


class _Reader:
    """A re-iterable source, as a file reader would be; `drift` changes the second pass."""

    def __init__(self, log: dict[str, np.ndarray], size: int, drift: float = 0.0) -> None:
        self.log, self.size, self.drift, self.passes = log, size, drift, 0

    def __iter__(self):
        self.passes += 1
        shift = self.drift * (self.passes - 1)
        for lo in range(0, self.log["time"].size, self.size):
            chunk = {k: x[lo : lo + self.size] for k, x in self.log.items()}
            chunk["time"] = chunk["time"] + shift
            yield chunk


def test_a_reader_is_read_twice_and_must_give_the_same_samples():
    log = _tracked_log(6)
    reader = _Reader(log, 333)
    whole = track_up(FIT, log["time"], **{k: x for k, x in log.items() if k != "time"})
    _assert_same_track(track_up_from_chunks(FIT, reader), whole)
    assert reader.passes == 2
    with pytest.raises(ValueError, match="same samples on every pass"):
        track_up_from_chunks(FIT, _Reader(log, 333, drift=1e-3))


def test_bad_chunks_are_refused_with_the_argument_named():
    log = _tracked_log(7)
    good = [{k: x[lo : lo + 500] for k, x in log.items()} for lo in range(0, 4000, 500)]
    with pytest.raises(ValueError, match="`chunks` to be re-iterable.*iterator"):
        track_up_from_chunks(FIT, iter(good))
    with pytest.raises(ValueError, match="re-iterable source"):
        track_up_from_chunks(FIT, good[0])
    with pytest.raises(ValueError, match="chunk 1 of `chunks` to hold.*no torque"):
        track_up_from_chunks(FIT, [good[0], {k: x for k, x in good[1].items() if k != "torque"}])
    with pytest.raises(ValueError, match="unknown tau"):
        track_up_from_chunks(FIT, [good[0], {**good[1], "tau": good[1]["torque"]}])
    with pytest.raises(ValueError, match="increase strictly across chunks, got chunk 2"):
        track_up_from_chunks(FIT, [good[0], good[2], good[1]])
    partial = [good[0], {k: x for k, x in good[1].items() if k != "acceleration"}]
    with pytest.raises(ValueError, match="`acceleration` in every chunk"):
        track_up_from_chunks(FIT, partial)
    with pytest.raises(ValueError, match="`torque` to have shape"):
        track_up_from_chunks(FIT, [good[0], {**good[1], "torque": good[1]["torque"][:, :1]}])
    with pytest.raises(InsufficientDataError, match="at least one chunk"):
        track_up_from_chunks(FIT, [])
    with pytest.raises(InsufficientDataError, match="span at least one `window`"):
        track_up_from_chunks(FIT, good[:1])
    with pytest.raises(ValueError, match="`derivative_window`"):
        no_acc = [{k: x for k, x in c.items() if k != "acceleration"} for c in good]
        track_up_from_chunks(FIT, no_acc, derivative_window=-1.0)
    assert math.isfinite(track_up_from_chunks(FIT, good).up_std_deg.max())


ARM = chain_from_dh(
    [0.1, 0.05, 0.0], [0.0, 0.2, 0.1], [0.05, 0.4, 0.3], [np.pi / 2, 0.3, -np.pi / 2]
)
ARM_PI = np.tile([2.0, 0.3, 0.1, 0.05, 0.2, 0.01, 0.25, 0.0, 0.02, 0.1], 3)


def _motion_log(seed: int) -> dict[str, np.ndarray]:
    """20 s at 200 Hz of a three-joint arm on a base tilted 10°: jittered stamps, a 0.3 s gap,
    gains, Coulomb friction and noise, five rows with a NaN."""
    rng = np.random.default_rng(seed)
    t = _stamps(rng, 4000, 0.005, jitter=True, gaps=0)
    t -= t[0]
    t[t > 9.0] += 0.3
    w = np.array([0.9, 1.3, 1.7])
    q = np.sin(w * t[:, None])
    qd, qdd = w * np.cos(w * t[:, None]), -(w**2) * np.sin(w * t[:, None])
    up = np.array([np.sin(0.17), 0.0, np.cos(0.17)])
    tau = inverse_dynamics_regressor(ARM, q, qd, qdd, up=up) @ ARM_PI * [1.1, 0.9, 1.0]
    tau += 0.05 * np.sign(qd) + rng.normal(0.0, 0.01, tau.shape)
    tau[rng.choice(t.size, 5, replace=False), rng.integers(0, 3, 5)] = np.nan
    return {"time": t, "q": q, "velocity": qd, "torque": tau}


def test_chunks_give_the_estimate_of_the_whole_log():
    """NaN rows omitted, the acceleration derived across chunk ends and a gap, weights and a
    base acceleration per chunk, the sandwich covariance: the same estimate, to the last bit."""
    log = _motion_log(8)
    n = log["time"].size
    log["weights"] = np.where(np.arange(n) % 97 < 5, 0.5, 1.0)
    log["base_acceleration"] = np.tile([0.05, 0.0, 0.0], (n, 1))
    settings = {"nan_policy": "omit", "covariance": "hac", "bandwidth": 0.5}
    whole = estimate_up_from_motion(
        ARM, log["time"], **{k: x for k, x in log.items() if k != "time"}, **settings
    )
    assert whole.n_omitted == 5 and np.degrees(np.arccos(whole.up[2])) == pytest.approx(10, abs=1)
    rng = np.random.default_rng(9)
    chunks = [{k: x[lo:hi] for k, x in log.items()} for lo, hi in _cuts(rng, n, 30)]
    got = estimate_up_from_motion_chunks(ARM, chunks, **settings)
    for field in dataclasses.fields(got):
        value, expected = getattr(got, field.name), getattr(whole, field.name)
        if isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(value, expected, err_msg=field.name)
        else:
            assert value == expected, field.name


def test_bad_chunks_for_the_estimator_are_refused():
    log = _motion_log(10)
    del log["torque"]
    log["torque"] = np.nan_to_num(_motion_log(10)["torque"])
    good = [{k: x[lo : lo + 800] for k, x in log.items()} for lo in range(0, 4000, 800)]
    with pytest.raises(ValueError, match="`chunks` to be re-iterable"):
        estimate_up_from_motion_chunks(ARM, (c for c in good))
    mixed = [{**good[0], "base_acceleration": [0.0, 0.0, 0.1]}, *good[1:]]
    with pytest.raises(ValueError, match="`base_acceleration` in every chunk"):
        estimate_up_from_motion_chunks(ARM, mixed)
    with pytest.raises(ValueError, match="`weights` in \\[0, 1\\]"):
        estimate_up_from_motion_chunks(ARM, [{**good[0], "weights": np.full(800, 2.0)}])
    nan = [dict(c) for c in good]
    nan[2]["q"] = nan[2]["q"].copy()
    nan[2]["q"][3, 1] = np.nan
    with pytest.raises(ValueError, match="`q` to be finite"):
        estimate_up_from_motion_chunks(ARM, nan)
    with pytest.raises(ValueError, match="`nan_policy`"):
        estimate_up_from_motion_chunks(ARM, good, nan_policy="drop")
    with pytest.raises(ValueError, match="unknown weights"):
        track_up_from_chunks(FIT, [{**good[0], "weights": np.ones(800)}])
    assert estimate_up_from_motion_chunks(ARM, good, nan_policy="omit").n_omitted == 0
