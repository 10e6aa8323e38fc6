"""The motion estimator's design against a slow reference path of the same estimator.

The design (``gravdir.motion._design``) forms the gravity blocks of the regressor from the
closed form at rest (``gravdir.dynamics._rest_regressors``), its Gram blocks as one symmetric
product per joint over the samples that joint uses, and skips a start the search has already
refined. The reference path here forms every block with the general regressor (velocities and
accelerations set to zero for the gravity blocks) and the Gram blocks as ``A^T (W A)`` over every
sample, as the estimator did before; the estimate must be the same to 1e-9.

The joint parameters agree to 1e-9 of the largest too, and the load coefficients, each a
difference of two gains over their sum, to 1e-9 as the gains do. (Before joint 1's
armature column was dropped, the minimum-norm solve split its sum with link 1's inertia about
joint 1's axis, and that split moved with rounding.) The sign margin is the square root of a cost
difference with the best fit on the other hemisphere, whose search may run out of iterations
while its gains creep towards zero: that cost moves with rounding, so the margin is compared to
1e-6 of itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gravdir import GravdirWarning, chain_from_urdf, estimate_up_from_motion
from gravdir.dynamics import BaseParameters, inverse_dynamics_regressor
from gravdir.kinematics import SerialChain
from gravdir.motion import _design
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf, realistic_sensors
from gravdir.synthetic.motion import fourier_trajectory

CHAIN = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")


def _reference_rows(
    chain: SerialChain,
    base: BaseParameters,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    base_acceleration: np.ndarray | None,
) -> np.ndarray:
    keep = base.independent
    y0 = inverse_dynamics_regressor(chain, q, qd, qdd, base_acceleration=base_acceleration)
    zero = np.zeros_like(q)
    yk = inverse_dynamics_regressor(chain, q, zero, zero, base_acceleration=np.eye(3)[:, None])
    a = np.concatenate([y0[..., keep]] + [yk[k][..., keep] for k in range(3)], axis=-1)
    joint = _design.joint_columns(qd, qdd)
    _design.drop_duplicate_armature(joint)
    return np.concatenate([a, joint], axis=-1).transpose(1, 0, 2)


def _reference_accumulate(
    j: int,
    a: np.ndarray,
    w: np.ndarray,
    torques: np.ndarray | None,
    gram: np.ndarray,
    gram_sq: np.ndarray | None,
    cross: np.ndarray,
    tt: np.ndarray,
    n_rows: int,
) -> None:
    wa = a * w[:, None]
    gram[j] += wa.T @ a
    if gram_sq is not None:
        gram_sq[j] += (wa * w[:, None]).T @ a
    if torques is not None:
        t = torques[:, :, j % n_rows]
        cross[:, j] += t @ wa
        tt[:, j] += np.sum(w * t * t, axis=-1)


def _log(seed: int) -> tuple[np.ndarray, ...]:
    """A 500 Hz, 6 s log of the UR5e-like arm with every realistic sensor error (load friction
    and gear ripple, so that every pass of the estimator runs), tilt 0-30 degrees."""
    rng = np.random.default_rng([seed, 1729])
    tilt, azimuth = rng.uniform(0.0, np.radians(30.0)), rng.uniform(-np.pi, np.pi)
    up = np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)])
    arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
    home = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
    traj = fourier_trajectory(6, 6.0, 500.0, rng=rng, q0=home + rng.uniform(-0.3, 0.3, 6))
    tau = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    logged = np.stack(
        [s.measure(traj.q[:, j], traj.velocity[:, j], tau[:, j], rng) for j, s in
         enumerate(sensors)], axis=-1,
    )  # fmt: skip
    return traj.time, traj.q, traj.velocity, logged


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "covariance"), [(0, "hac"), (1, "white")])
def test_the_fast_design_gives_the_reference_estimate(
    seed: int, covariance: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    time, q, qd, tau = _log(seed)

    def estimate() -> object:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GravdirWarning)
            return estimate_up_from_motion(
                CHAIN, time, q=q, velocity=qd, torque=tau, covariance=covariance
            )

    fast = estimate()
    with monkeypatch.context() as m:
        m.setattr(_design, "_rows", _reference_rows)
        m.setattr(_design, "_accumulate", _reference_accumulate)
        slow = estimate()
    assert fast.up_determined and slow.up_determined  # type: ignore[attr-defined]
    for name in ("up", "gains", "noise_std"):
        a, b = getattr(fast, name), getattr(slow, name)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * np.abs(b).max(), err_msg=name)
    np.testing.assert_allclose(
        fast.joint_parameters,  # type: ignore[attr-defined]
        slow.joint_parameters,  # type: ignore[attr-defined]
        rtol=0,
        atol=1e-9 * np.abs(slow.joint_parameters).max(),  # type: ignore[attr-defined]
    )
    # A load coefficient is a difference of two gains over their sum: to 1e-9 as the gains are.
    np.testing.assert_allclose(fast.load_coefficient, slow.load_coefficient, rtol=0, atol=1e-9)  # type: ignore[attr-defined]
    info_fast, info_slow = fast.up_information, slow.up_information  # type: ignore[attr-defined]
    np.testing.assert_allclose(info_fast, info_slow, rtol=0, atol=1e-9 * np.abs(info_slow).max())
    np.testing.assert_allclose(fast.up_std_deg, slow.up_std_deg, rtol=1e-9)  # type: ignore[attr-defined]
    np.testing.assert_allclose(fast.sign_margin, slow.sign_margin, rtol=1e-6)  # type: ignore[attr-defined]
    assert fast.n_iter == slow.n_iter  # type: ignore[attr-defined]
