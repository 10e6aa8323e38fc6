"""What a fleet calibration on a cluster relies on (docs/fleet.md, examples/fleet.py).

A `SweepAccumulator` pickles to an equal one that goes on taking samples and merging as the
original would; merging chunk accumulators in any tree gives the same fit to 1e-12; and on a Dask
cluster (threads, `LocalCluster(processes=False)`) a tree of merge tasks gives bit for bit what
the same tree gives in a loop. The pickling of `SweepFit` is in `test_sweep.py` and
`test_contract.py`, the merge of accumulators against `fit_sweep` in `test_accumulator.py`.

The Dask test is skipped where Dask is not installed (``pip install '.[fleet]'``); with
``GRAVDIR_REQUIRE_DASK=1`` (as in CI) its absence fails.
"""

from __future__ import annotations

import importlib
import operator
import os
import pickle
from functools import reduce
from types import ModuleType

import numpy as np
import pytest

from gravdir import SweepAccumulator, SweepFit
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm

WHY = (
    "Dask is not installed (pip install '.[fleet]'); set GRAVDIR_REQUIRE_DASK=1 to make its "
    "absence fail"
)
CHUNK = 37  # samples per chunk: not a divisor of the accumulator's internal block
N_CHUNKS = 8


def _distributed() -> ModuleType:
    if os.environ.get("GRAVDIR_REQUIRE_DASK") == "1":
        return importlib.import_module("distributed")  # an ImportError here fails the test
    return pytest.importorskip("distributed", reason=WHY)


def _j2_sweeps(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Three joint-2 sweeps of a UR5-like arm with realistic sensors, at joint-1 angles 90°
    apart, stacked into a batch of shape (3,): q, velocity, torque and the ripple order."""
    rng = np.random.default_rng(seed)
    arm = ur5_arm(up=up_from_base_tilt(np.radians(4.0), 0.7))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    records = []
    for q1 in (0.0, np.pi / 2, np.pi):
        pose = np.array([q1, -2.9, 0.0, -np.pi / 2, 0.0, 0.0])
        records.append(
            arm.sweep(1, pose, -2.9, -0.3, speed=0.4, sample_rate=60.0, sensor=sensors, rng=rng)
        )
    q, v, tau = (
        np.stack([getattr(r, name) for r in records]) for name in ("q", "velocity", "torque")
    )
    return q, v, tau, sensors[1].ripple_order


def _new(order: float) -> SweepAccumulator:
    return SweepAccumulator(min_speed=0.04, harmonics=[order])


def _chunk_accumulators(seed: int) -> list[SweepAccumulator]:
    """The sweeps cut into `N_CHUNKS` pieces, each fed to an accumulator of its own in chunks of
    `CHUNK` samples."""
    q, v, tau, order = _j2_sweeps(seed)
    parts = []
    for piece in np.array_split(np.arange(q.shape[-1]), N_CHUNKS):
        acc = _new(order)
        for lo in range(0, piece.size, CHUNK):
            idx = piece[lo : lo + CHUNK]
            acc.add(q[:, idx], velocity=v[:, idx], torque=tau[:, idx])
        parts.append(acc)
    return parts


def _pairwise(items: list, combine):  # type: ignore[no-untyped-def]
    """``[a, b, c, d, e] -> [ab, cd, e] -> [abcd, e] -> [abcde]``."""
    while len(items) > 1:
        paired = [combine(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = paired + items[len(paired) * 2 :]
    return items[0]


def _assert_close(fit: SweepFit, ref: SweepFit, rtol: float = 1e-12) -> None:
    """Coefficients relative to each sweep's largest, covariances relative to the product of the
    standard deviations, residual RMS relative; counts and the torque checksum exactly."""
    assert fit.column_names == ref.column_names
    np.testing.assert_array_equal(fit.n_used, ref.n_used)
    assert fit.fingerprint == ref.fingerprint
    scale = np.max(np.abs(ref.coefficients), axis=-1, keepdims=True)
    assert np.all(np.abs(fit.coefficients - ref.coefficients) <= rtol * scale)
    std = np.sqrt(np.diagonal(ref.covariance, 0, -2, -1))
    assert np.all(
        np.abs(fit.covariance - ref.covariance) <= rtol * std[..., :, None] * std[..., None, :]
    )
    assert np.all(np.abs(fit.residual_rms - ref.residual_rms) <= rtol * ref.residual_rms)


def test_an_unpickled_accumulator_equals_the_original_and_goes_on_as_it_would():
    q, v, tau, order = _j2_sweeps(11)
    half = q.shape[-1] // 2
    acc = _new(order)
    assert pickle.loads(pickle.dumps(acc)) == acc  # before any sample
    for lo in range(0, half, CHUNK):  # samples left in the buffer, not yet folded in
        hi = min(lo + CHUNK, half)
        acc.add(q[:, lo:hi], velocity=v[:, lo:hi], torque=tau[:, lo:hi])
    copy = pickle.loads(pickle.dumps(acc))
    assert copy == acc and copy is not acc
    # Fed the same second half, the copy stays equal to the original, and so do their fits.
    for a in (acc, copy):
        a.add(q[:, half:], velocity=v[:, half:], torque=tau[:, half:])
    assert copy == acc
    assert copy.fit() == acc.fit()
    # An accumulator of other samples merges with the copy as with the original, bit for bit.
    other = _new(order)
    other.add(q[:, ::-1], velocity=-v[:, ::-1], torque=tau[:, ::-1] + 0.5)
    assert (copy + other) == (acc + other)
    assert (copy + other).fit() == (acc + other).fit()
    # A copy fed different samples is no longer equal.
    copy.add(q[:, :5], velocity=v[:, :5], torque=tau[:, :5])
    assert copy != acc


def test_every_merge_tree_of_chunk_accumulators_gives_the_same_fit_to_1e_12():
    parts = _chunk_accumulators(12)
    n = sum(p.n for p in parts)
    rng = np.random.default_rng(13)
    shuffled = [parts[i] for i in rng.permutation(len(parts))]
    trees = {
        "pairwise": _pairwise(list(parts), operator.add),
        "left fold": reduce(operator.add, parts),
        "right fold": reduce(lambda a, b: b + a, reversed(parts)),
        "shuffled pairwise": _pairwise(shuffled, operator.add),
        "shuffled fold": reduce(operator.add, shuffled),
    }
    ref = trees["pairwise"].fit()
    assert ref.batch_shape == (3,)
    for name, merged in trees.items():
        assert merged.n == n, name
        _assert_close(merged.fit(), ref)
    # The tolerance is not met by accident: leaving one chunk out moves the fit by far more.
    partial = _pairwise(list(parts[1:]), operator.add).fit()
    with pytest.raises(AssertionError):
        _assert_close(partial, ref, rtol=1e-6)


def test_a_tree_of_merge_tasks_on_a_dask_cluster_equals_the_same_tree_in_a_loop():
    distributed = _distributed()
    serial_parts = _chunk_accumulators(14)
    serial = _pairwise(list(serial_parts), operator.add)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        parts = client.scatter(_chunk_accumulators(14))
        merged_future = _pairwise(parts, lambda a, b: client.submit(operator.add, a, b))
        merged = merged_future.result()
        on_workers = {w for ws in client.who_has(parts).values() for w in ws}
    assert len(on_workers) == 2  # the chunks lay on both workers
    assert merged == serial
    assert merged.fit() == serial.fit()
    _assert_close(merged.fit(), reduce(operator.add, serial_parts).fit())
