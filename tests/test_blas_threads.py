"""The motion estimator and the tracker run BLAS on one thread, and give back the limits.

``gravdir._threads.one_blas_thread`` limits the BLAS libraries to one thread while the motion
estimator or the tracker runs (their many small BLAS calls are slower with threads on a loaded
machine: ``benchmarks/threads.py``). Checked here with threadpoolctl's own view of the libraries:
inside a call from the main thread every BLAS library runs one thread; after it the limits the
caller had are back, also after nested limits and after a call that raised; calls from other
threads and calls with ``GRAVDIR_BLAS_THREADS=keep`` leave the limits alone.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from gravdir import GravdirWarning, _threads, chain_from_urdf, estimate_up_from_motion
from gravdir._threads import ENV, one_blas_thread
from gravdir.motion import _design, track_up
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf
from gravdir.synthetic.motion import fourier_trajectory, motion_log

CHAIN = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")


def _blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


@pytest.fixture
def two_threads() -> Iterator[None]:
    """The caller's limits: two threads in every BLAS library."""
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == {2}
        yield


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[set[int]]:
    """The BLAS thread counts at every Gram product of the motion design."""
    record: list[set[int]] = []
    accumulate = _design._accumulate

    def spy(*args: object) -> None:
        record.append(_blas_threads())
        accumulate(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_design, "_accumulate", spy)
    return record


def _log(noise_correlation_time: float = 0.0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(8)
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=[0.1, 0.0, np.sqrt(0.99)])
    traj = fourier_trajectory(6, 6.0, 100.0, rng=rng)
    tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
    noise = 0.01 * (np.abs(tau).max(axis=0) + 0.5)
    log = motion_log(
        traj, tau, rng=rng, noise_std=noise, noise_correlation_time=noise_correlation_time
    )
    return log.time, log.q, log.velocity, log.torque


def _estimate() -> object:
    time, q, qd, tau = _log()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GravdirWarning)
        return estimate_up_from_motion(CHAIN, time, q=q, velocity=qd, torque=tau)


def test_the_estimator_runs_one_blas_thread_and_restores_the_callers_limits(
    two_threads: None, seen: list[set[int]]
) -> None:
    _estimate()
    assert seen and all(s == {1} for s in seen)
    assert _blas_threads() == {2}


def test_the_tracker_runs_one_blas_thread_and_restores_the_callers_limits(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    fit = _estimate()
    time, q, qd, tau = _log()
    from gravdir.motion import _track

    record: list[set[int]] = []
    affine = _track.affine_torque

    def spy(*args: object) -> object:
        record.append(_blas_threads())
        return affine(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_track, "affine_torque", spy)
    track_up(fit, time, q=q, velocity=qd, torque=tau, window=2.0, bandwidth=0.5)
    assert record == [{1}]
    assert _blas_threads() == {2}


def test_the_limits_come_back_after_a_call_that_raises(two_threads: None) -> None:
    time, q, qd, tau = _log()
    with pytest.raises(ValueError, match="torque"):
        estimate_up_from_motion(CHAIN, time, q=q, velocity=qd, torque=tau[:, :5])
    assert _blas_threads() == {2}


def test_nested_limits_restore_at_the_outermost(two_threads: None) -> None:
    with one_blas_thread():
        with one_blas_thread():
            assert _blas_threads() == {1}
        assert _blas_threads() == {1}
    assert _blas_threads() == {2}


def test_calls_from_other_threads_leave_the_settings_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A limit set and restored from several threads could be left behind where the setting is
    per thread: only calls from the main thread ask threadpoolctl for a limit."""
    asked: list[str] = []

    class Controller:
        def limit(self, **kwargs: object) -> object:
            asked.append(threading.current_thread().name)
            return threadpool_limits(limits=1, user_api="blas")

    monkeypatch.setattr(_threads, "_controller", lambda: Controller())
    workers = [threading.Thread(target=_estimate, name=f"worker {i}") for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert asked == []
    _estimate()
    assert asked == [threading.main_thread().name]


def test_keep_leaves_the_limits_alone(
    two_threads: None, seen: list[set[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "keep")
    _estimate()
    assert seen and all(s == {2} for s in seen)
    assert _blas_threads() == {2}


def test_the_estimators_warnings_point_at_the_callers_line() -> None:
    """The limit wraps the estimator's work inside its body, not its call: a warning's stack
    level still names the caller's line, not gravdir's."""
    time, q, qd, tau = _log(noise_correlation_time=0.1)
    with pytest.warns(GravdirWarning) as caught:
        estimate_up_from_motion(CHAIN, time, q=q, velocity=qd, torque=tau, covariance="white")
    assert caught.list and {w.filename for w in caught.list} == {__file__}
