"""An independent Newton-Euler computation of joint torques, for the tests.

Built from the link frames and explicit inertias: velocities and accelerations from sums over
the joint axes (the time derivative of the Jacobian written out), wrenches at the centres of
mass, inertias rotated into the base frame -- no recursion in link frames and no regressor.
:func:`reference_torque` does one sample with plain loops; :func:`reference_torques` the same
sums over a batch of samples (loops over links, arrays over samples), checked against it.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from gravdir.kinematics import SerialChain, chain_from_dh, chain_from_poe, link_frames


def unit(rng: np.random.Generator, *shape: int) -> np.ndarray:
    v = rng.normal(size=shape + (3,))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_chain(rng: np.random.Generator, n: int, kind: str) -> SerialChain:
    if kind == "dh":
        return chain_from_dh(
            rng.uniform(-0.4, 0.4, n),
            rng.uniform(-np.pi, np.pi, n),
            rng.uniform(-0.5, 0.5, n),
            rng.uniform(-np.pi, np.pi, n),
            convention="standard" if rng.random() < 0.5 else "modified",
        )
    axes = unit(rng, n)
    points = rng.uniform(-0.5, 0.5, (n, 3))
    screws = np.concatenate([axes, -np.cross(axes, points)], axis=1)
    links = np.tile(np.eye(4), (n, 1, 1))
    links[:, :3, :3] = Rotation.random(n, random_state=rng).as_matrix()
    links[:, :3, 3] = rng.uniform(-0.5, 0.5, (n, 3))
    flange = np.eye(4)
    flange[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    return chain_from_poe(screws, flange, home_links=links)


def random_bodies(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Masses, COMs (link frame) and physical inertias about the COMs (link axes)."""
    mass = rng.uniform(0.2, 5.0, n)
    com = rng.uniform(-0.3, 0.3, (n, 3))
    # Second moments a, b, c >= 0 give principal inertias (b + c, a + c, a + b): positive
    # definite and satisfying the triangle inequality; then turned by a random rotation.
    second = mass[:, None] * rng.uniform(0.001, 0.05, (n, 3))
    a, b, c = second.T
    principal = np.stack([b + c, a + c, a + b], axis=1)
    rot = Rotation.random(n, random_state=rng).as_matrix()
    inertia = np.einsum("nij,nj,nkj->nik", rot, principal, rot)
    return mass, com, inertia


def reference_torque(
    chain: SerialChain,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    mass: np.ndarray,
    com: np.ndarray,
    inertia: np.ndarray,
    a0: np.ndarray,
) -> np.ndarray:
    """Newton-Euler for one sample with plain loops: Jacobian sums, wrenches at the COMs."""
    n = chain.n_joints
    frames = link_frames(chain, q)
    rot, org = frames.rotations, frames.origins
    z, p = frames.joint_axes, frames.joint_points
    c = np.array([org[i] + rot[i] @ com[i] for i in range(n)])
    omega = np.array([sum(z[k] * qd[k] for k in range(i + 1)) for i in range(n)])
    z_dot = np.array([np.cross(omega[k], z[k]) for k in range(n)])
    # Velocity of a point x fixed in link i: sum over joints k <= i of z_k x (x - p_k) qd_k.
    p_dot = np.array(
        [sum(np.cross(z[m], p[k] - p[m]) * qd[m] for m in range(k + 1)) for k in range(n)]
    )
    torque = np.zeros(n)
    for i in range(n):
        c_dot = sum(np.cross(z[k], c[i] - p[k]) * qd[k] for k in range(i + 1))
        acc = a0.copy()
        omega_dot = np.zeros(3)
        for k in range(i + 1):
            acc += np.cross(z_dot[k], c[i] - p[k]) * qd[k]
            acc += np.cross(z[k], c_dot - p_dot[k]) * qd[k]
            acc += np.cross(z[k], c[i] - p[k]) * qdd[k]
            omega_dot += z[k] * qdd[k] + z_dot[k] * qd[k]
        inertia_base = rot[i] @ inertia[i] @ rot[i].T
        force = mass[i] * acc
        moment = inertia_base @ omega_dot + np.cross(omega[i], inertia_base @ omega[i])
        for j in range(i + 1):
            torque[j] += z[j] @ (moment + np.cross(c[i] - p[j], force))
    return torque


def reference_torques(
    chain: SerialChain,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    mass: np.ndarray,
    com: np.ndarray,
    inertia: np.ndarray,
    a0: np.ndarray,
) -> np.ndarray:
    """:func:`reference_torque` of samples (N, n) at once; `a0` (3,) or (N, 3). Shape (N, n)."""
    n = chain.n_joints
    frames = link_frames(chain, q)
    rot, org = frames.rotations, frames.origins  # (N, n, 3, 3), (N, n, 3)
    z, p = frames.joint_axes, frames.joint_points
    qd_, qdd_ = qd[..., None], qdd[..., None]  # (N, n, 1)
    c = org + np.einsum("sikl,il->sik", rot, com)
    omega = np.cumsum(z * qd_, axis=1)
    z_dot = np.cross(omega, z)
    p_dot = np.zeros_like(p)
    for k in range(n):
        for m in range(k + 1):
            p_dot[:, k] += np.cross(z[:, m], p[:, k] - p[:, m]) * qd_[:, m]
    torque = np.zeros(q.shape)
    for i in range(n):
        c_dot = np.zeros_like(c[:, i])
        for k in range(i + 1):
            c_dot += np.cross(z[:, k], c[:, i] - p[:, k]) * qd_[:, k]
        acc = np.broadcast_to(a0, c_dot.shape).copy()
        omega_dot = np.zeros_like(c_dot)
        for k in range(i + 1):
            acc += np.cross(z_dot[:, k], c[:, i] - p[:, k]) * qd_[:, k]
            acc += np.cross(z[:, k], c_dot - p_dot[:, k]) * qd_[:, k]
            acc += np.cross(z[:, k], c[:, i] - p[:, k]) * qdd_[:, k]
            omega_dot += z[:, k] * qdd_[:, k] + z_dot[:, k] * qd_[:, k]
        inertia_base = rot[:, i] @ inertia[i] @ np.swapaxes(rot[:, i], -1, -2)
        force = mass[i] * acc
        moment = np.einsum("skl,sl->sk", inertia_base, omega_dot) + np.cross(
            omega[:, i], np.einsum("skl,sl->sk", inertia_base, omega[:, i])
        )
        for j in range(i + 1):
            torque[:, j] += np.einsum(
                "sk,sk->s", z[:, j], moment + np.cross(c[:, i] - p[:, j], force)
            )
    return torque
