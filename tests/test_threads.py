"""The estimators called from several threads at once give what the serial calls give.

Every call below runs first serially, then many times at once from a pool of threads in a
shuffled order; each concurrent result must equal its serial one. The calls must also leave the
process's global state alone (NumPy's error settings and its global random generator), and
results of concurrent calls share no memory. A fresh interpreter checks that the first access of
the public names -- which imports their modules and SciPy's slow submodules on demand -- is safe
from several threads at once.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import gravdir
from gravdir import (
    JointSweep,
    KinematicErrorModel,
    SweepAccumulator,
    estimate_up,
    express_up,
    fit_friction,
    fit_sweep,
    fuse_up,
    solve_point_mass,
    up_from_accelerometer,
    up_from_touch_points,
)
from gravdir.frames import up_from_canonical
from gravdir.friction import StribeckFriction
from gravdir.kinematics import chain_from_dh, link_frames
from gravdir.synthetic import canonical_arm

N_THREADS = 8
ROUNDS = 4


def _sweep(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A forward-and-back sweep: torque = offset + sinusoid + Coulomb friction + noise."""
    rng = np.random.default_rng(seed)
    q = np.concatenate([np.linspace(-1.0, 1.0, 250), np.linspace(1.0, -1.0, 250)])
    v = np.concatenate([np.full(250, 0.3), np.full(250, -0.3)])
    torque = 0.1 + 4.0 * np.sin(q + 0.3) + 0.25 * np.sign(v) + rng.normal(0.0, 0.01, q.size)
    return q, torque, v


def _fit_sweep() -> Any:
    q, torque, v = _sweep(1)
    return fit_sweep(q, velocity=v, torque=torque)


def _fit_sweep_batch() -> Any:
    data = [_sweep(s) for s in (2, 3, 4)]
    q, torque, v = (np.stack(x) for x in zip(*data, strict=True))
    return fit_sweep(q, velocity=v, torque=torque, friction="coulomb")


def _accumulate() -> Any:
    q, torque, v = _sweep(5)
    acc = SweepAccumulator(min_speed=0.03)
    for i in range(0, q.size, 10):
        acc.add(q[i : i + 10], velocity=v[i : i + 10], torque=torque[i : i + 10])
    return acc.fit()


def _estimate_up() -> Any:
    chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    up_true = np.array([np.sin(0.3), 0.0, np.cos(0.3)])
    q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 300)])
    v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    w = np.array([0.0, 9.81, 0.0])
    rng = np.random.default_rng(6)
    sweeps = []
    for q1 in (0.0, np.pi / 2, np.pi):
        frames = link_frames(chain, [q1, 0.0])
        r, a = frames.rotations[1], chain.axes_in_link[1]
        moment = np.cos(q)[:, None] * w + np.sin(q)[:, None] * np.cross(a, w)
        tau = (r @ moment.T).T @ up_true + 0.2 * np.sign(v) + rng.normal(0, 0.01, q.size)
        sweeps.append(JointSweep(1, r, a, 0.0, fit_sweep(q, velocity=v, torque=tau)))
    return estimate_up(sweeps)


def _touch_plane() -> Any:
    rng = np.random.default_rng(7)
    grid = np.array([[x, y, 0.0] for x in np.linspace(0, 0.4, 5) for y in (0.0, 0.1, 0.2)])
    tilt = np.array([0.02, -0.01, 1.0]) / np.linalg.norm([0.02, -0.01, 1.0])
    pts = grid - np.outer(grid @ tilt, tilt) + rng.normal(0.0, 1e-5, grid.shape)
    pts[4] += 3e-3 * tilt  # one bad contact
    return up_from_touch_points(pts, up_hint=tilt, robust=True)


def _accelerometer() -> Any:
    chain = chain_from_dh([0.3, 0, 0], [0, 0, 0], [0, 0.4, 0.3], [np.pi / 2, 0, np.pi / 2])
    rng = np.random.default_rng(8)
    q = rng.uniform(-1.5, 1.5, (12, 3))
    up = np.array([0.1, 0.0, 1.0]) / np.hypot(0.1, 1.0)
    rot = link_frames(chain, q).rotations[:, 2]
    f = 9.80665 * np.einsum("mji,j->mi", rot, up) + [0.1, -0.2, 0.05]
    f = f + rng.normal(0.0, 1e-3, f.shape)
    return up_from_accelerometer(chain, q, readings=f, link=2, noise_std=1e-3)


def _fuse() -> Any:
    sources = []
    for tilt, std in ((0.01, 1e-3), (-0.004, 2e-3), (0.002, 5e-4)):
        up = [np.sin(tilt), 0.0, np.cos(tilt)]
        sources.append(express_up(up, np.eye(3), up_cov=np.eye(3) * std**2))
    return fuse_up(*sources)


def _friction() -> Any:
    v = np.concatenate([np.geomspace(0.005, 1, 40), -np.geomspace(0.005, 1, 40)])
    truth = StribeckFriction(2.0, 3.0, 0.05, 1.5, exponent=2.0, offset=0.1)
    rng = np.random.default_rng(9)
    return fit_friction(
        v, torque=truth.evaluate(v) + rng.normal(0, 0.01, v.size), model="stribeck"
    )


def _point_mass() -> Any:
    arm = canonical_arm(L1=0.6, gamma0=0.2, up=up_from_canonical(0.5, 0.3))
    r1 = arm.sweep(0, [0.0, 1.2], -2.0, 2.0, 0.5, 100.0)
    f1 = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque)
    q1 = float(f1.zeros().unstable)
    r2 = arm.sweep(1, [q1, 0.0], -1.5, 1.5, 0.5, 100.0)
    f2 = fit_sweep(r2.q, velocity=r2.velocity, torque=r2.torque)
    return solve_point_mass(f1, f2, q1, gamma=1.4, gamma0=0.2)


_MODEL = KinematicErrorModel([1.0, 2.0, 51.0], [[1e-3, -2e-4], [5e-4, 3e-4], [-1e-4, 2e-5]])
_ANGLES = np.random.default_rng(10).uniform(-100.0, 100.0, 200)


def _correction_scalar() -> Any:
    return np.array([_MODEL.correction(float(x)) for x in _ANGLES])


def _correction_array() -> Any:
    return _MODEL.correction(_ANGLES)


CALLS: dict[str, Callable[[], Any]] = {
    "fit_sweep": _fit_sweep,
    "fit_sweep batch": _fit_sweep_batch,
    "SweepAccumulator": _accumulate,
    "estimate_up": _estimate_up,
    "up_from_touch_points": _touch_plane,
    "up_from_accelerometer": _accelerometer,
    "fuse_up": _fuse,
    "fit_friction": _friction,
    "solve_point_mass": _point_mass,
    "correction float": _correction_scalar,
    "correction array": _correction_array,
}


def _same(a: Any, b: Any) -> bool:
    """Equal values, floats to 1e-12 relative (a shared buffer or state would differ grossly)."""
    if isinstance(a, gravdir._results.Result):
        return type(a) is type(b) and _same(a.to_dict(), b.to_dict())
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float | np.ndarray | np.floating):
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return x.shape == y.shape and bool(
            np.allclose(x, y, rtol=1e-12, atol=1e-300, equal_nan=True)
        )
    return bool(a == b)


def _arrays(x: Any) -> list[np.ndarray]:
    """Every array held by a result (or an array itself)."""
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, gravdir._results.Result):
        return [a for v in vars(x).values() for a in _arrays(v)]
    if isinstance(x, list | tuple):
        return [a for v in x for a in _arrays(v)]
    return []


@pytest.fixture(scope="module")
def serial() -> dict[str, Any]:
    return {name: call() for name, call in CALLS.items()}


def test_serial_calls_are_repeatable(serial):
    """The reference: two serial calls agree (else the threaded comparison means nothing)."""
    for name, call in CALLS.items():
        assert _same(call(), serial[name]), name


def test_concurrent_calls_equal_serial_calls(serial):
    jobs = [name for name in CALLS for _ in range(ROUNDS)]
    np.random.default_rng(11).shuffle(jobs)
    # The legacy global generator is what a library must not draw from: its state is checked.
    errors, random_state = np.geterr(), np.random.get_state()  # noqa: NPY002
    with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
        results = list(pool.map(lambda name: (name, CALLS[name]()), jobs))
    assert np.geterr() == errors
    after = np.random.get_state()  # noqa: NPY002
    assert after[0] == random_state[0] and np.array_equal(after[1], random_state[1])
    assert after[2:] == random_state[2:]
    for name, result in results:
        assert _same(result, serial[name]), name
    # No buffer is shared between the results of two calls.
    for name in CALLS:
        mine = [r for n, r in results if n == name]
        for other in mine[1:]:
            for a in _arrays(mine[0]):
                for b in _arrays(other):
                    if a.size and b.size:
                        assert not np.shares_memory(a, b), name


def test_concurrent_accumulators_merge_to_the_serial_fit():
    """Four accumulators fed from four threads, merged, give the fit of all the samples."""
    q, torque, v = _sweep(12)
    parts = np.array_split(np.arange(q.size), 4)

    def feed(idx: np.ndarray) -> SweepAccumulator:
        acc = SweepAccumulator(min_speed=0.03)
        for chunk in np.array_split(idx, 7):
            acc.add(q[chunk], velocity=v[chunk], torque=torque[chunk])
        return acc

    with ThreadPoolExecutor(max_workers=4) as pool:
        accs = list(pool.map(feed, parts))
    merged = accs[0] + accs[1] + accs[2] + accs[3]
    fit, ref = merged.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=0.03)
    np.testing.assert_allclose(fit.coefficients, ref.coefficients, rtol=1e-10)
    np.testing.assert_allclose(fit.residual_rms, ref.residual_rms, rtol=1e-10)


def test_first_access_from_several_threads_in_a_fresh_interpreter():
    """The lazy imports behind the public names are safe when threads race to trigger them."""
    script = """
import threading
import numpy as np
import gravdir
barrier = threading.Barrier(6)
out = {}
def touch():
    barrier.wait()
    pts = [[0, 0, 1.0], [1, 0, 1.0], [0, 1, 1.0], [1, 1, 1.001], [0.5, 0.5, 1.0]]
    out['touch'] = gravdir.up_from_touch_points(pts, robust=True).up  # scipy.stats inside
def rotation():
    barrier.wait()
    out['rotation'] = gravdir.rotation_from_up([0.0, 0.6, 0.8]).as_matrix()  # scipy.spatial
def sweep():
    barrier.wait()
    q = np.linspace(-1, 1, 200)
    fit = gravdir.fit_sweep(q, velocity=np.full(200, 0.2), torque=np.sin(q), friction='none')
    out['sweep'] = fit.amplitude
def velocity():
    barrier.wait()
    t = np.linspace(0, 1, 200)
    out['velocity'] = gravdir.joint_velocity(t, q=t**2, window=0.05)  # scipy.signal inside
def names():
    barrier.wait()
    out['names'] = all(getattr(gravdir, n) is not None for n in gravdir.__all__)
def friction():
    barrier.wait()
    v = np.concatenate([np.geomspace(0.01, 1, 30), -np.geomspace(0.01, 1, 30)])
    tau = np.sign(v) * (1 + np.exp(-np.abs(v / 0.1) ** 2)) + 0.5 * v
    fit = gravdir.fit_friction(v, torque=tau, model='stribeck')  # scipy.optimize
    out['friction'] = fit.converged
threads = [threading.Thread(target=f) for f in (touch, rotation, sweep, velocity, names, friction)]
for th in threads: th.start()
for th in threads: th.join()
print(sorted(out))
"""
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[-2] == str(
        ["friction", "names", "rotation", "sweep", "touch", "velocity"]
    )
