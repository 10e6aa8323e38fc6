"""The accelerometer model shared by the estimator, its bound and the planner.

Readings are used in units of `gravity` (a reading of 1 is one local g) and `up` in the base
frame: with :math:`v_i = R_i^\\top u` the gravity direction in link coordinates at pose ``i``,

.. math:: \\tilde f_i = M v_i + \\tilde b, \\qquad M = T R_m^\\top,

and the covariance of pose ``i`` is the readings' own plus the joint-encoder noise carried
through :math:`\\partial R_i / \\partial q_j`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_array,
    check_per_joint,
    check_positive,
    check_radians,
    describe_shape,
)
from gravdir._rank import check_determined, reciprocal_condition
from gravdir._sphere import tangent_basis
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.kinematics import SerialChain, link_frames

# Fewest poses: 14 unknowns (9 of M, 3 of b, 2 of `up`), three equations per pose.
MIN_POSES = 5
# Most poses of one call: 10 000 keeps every call's work to a few milliseconds per iteration.
MAX_POSES = 10_000
# Largest encoder standard deviation, rad: the two turns a joint position may lie from its zero
# (beyond, the numbers are degrees). `check_radians` checks angles, not their deviations, whose
# range starts at 0 and whose message names them as such.
MAX_ENCODER_STD = MAX_JOINT_ANGLE
# Relative size of the second singular value of the poses' relative rotation vectors below
# which the link's orientations are taken as turns about one axis: rounding of float64 rotation
# matrices leaves ~1e-15; 1e-9 still accepts a second axis turned by a microradian.
SINGLE_AXIS_TOL = 1e-9
# Reciprocal condition number of the column-scaled whitened Jacobian below which the poses do
# not determine `up` and the sensor parameters (its square would exhaust float64's 1e-16). It is
# scale-aware in the turns between poses: poses that barely differ put the gravity directions in
# the link frame on a small patch of the sphere, whose departure from a plane is of the order of
# the squared turn, and so is the reciprocal condition (0.01 to 0.02 times the square of the
# largest turn between poses, in radians, measured on UR5- and iiwa-like wrists): poses all
# within about a milliradian of one another do not pass, whatever the noise.
RCOND = 1e-8
# Noise levels are accepted from 1e-12 to 1e3 of `gravity`: below, the information overflows
# the float range of the bound's products; above, the readings hold no gravity at all.
MIN_RELATIVE_NOISE = 1e-12
MAX_RELATIVE_NOISE = 1e3
# Largest magnitude of the readings (and of the bound's nominal `sensitivity`) from 1e-6 to 1e6
# times `gravity`: a sensor at rest reads about one g along `up`, so beyond either end the
# readings are in other units or hold no gravity; within, the information of `up` (about
# |M|^2 / sigma^2, sigma within the noise levels above) stays from 1e-18 to 1e36 1/rad^2, where
# float64 holds it and its inverse.
MIN_RELATIVE_READING = 1e-6
MAX_RELATIVE_READING = 1e6
# Largest ratio of the largest to the smallest eigenvalue of a reading covariance: rounding its
# entries moves the smallest eigenvalue by about 1e-16 of the largest, so beyond 1e12 whether it
# is positive at all would be decided by rounding (on one BLAS kernel and not another).
MAX_COV_CONDITION = 1e12


_P = ParamSpec("_P")
_R = TypeVar("_R")


def quiet_underflow(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run `func` with underflow ignored: tiny products round to zero harmlessly."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with np.errstate(under="ignore"):
            return func(*args, **kwargs)

    return wrapper



def check_chain(chain: Any) -> SerialChain:
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    return chain


def check_link(link: Any, chain: SerialChain) -> int:
    n = chain.n_joints
    if isinstance(link, bool | np.bool_) or not isinstance(link, int | np.integer):
        raise ValueError(f"Expected `link` to be an integer, got {link!r}.")
    if not 0 <= int(link) < n:
        raise ValueError(
            f"Expected `link` to be a link index from 0 to {n - 1} (0-based, link i is moved by "
            f"joint i), got {int(link)}."
        )
    return int(link)


def check_configurations(q: ArrayLike, chain: SerialChain, name: str) -> NDArray[np.float64]:
    arr = check_array(q, name)
    n = chain.n_joints
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(
            f"Expected `{name}` to have shape (m, {n}) for a chain of {n} joints, got "
            f"{describe_shape(arr.shape)}."
        )
    if arr.shape[0] > MAX_POSES:
        raise ValueError(f"Expected at most {MAX_POSES} poses in `{name}`, got {arr.shape[0]}.")
    return check_radians(arr, name)


def check_encoder_std(encoder_std: Any, n_joints: int) -> NDArray[np.float64]:
    """Per-joint encoder standard deviations (n,), rad, non-negative, at most `MAX_ENCODER_STD`."""
    arr = check_per_joint(encoder_std, "encoder_std", n_joints, sign="non-negative")
    if float(np.max(arr)) > MAX_ENCODER_STD:
        raise ValueError(
            f"Expected `encoder_std` in radians, got {float(np.max(arr)):.6g} (beyond 4π): degrees?"
        )
    return arr


def reading_covariance(
    noise_std: Any, reading_cov: Any, n_poses: int, gravity: float
) -> NDArray[np.float64]:
    """Covariance (m, 3, 3) of the readings in units of g², from exactly one of the two."""
    if (noise_std is None) == (reading_cov is None):
        raise ValueError(
            "Expected exactly one of `noise_std` and `reading_cov`, got "
            + ("neither." if noise_std is None else "both.")
        )
    if noise_std is not None:
        with np.errstate(over="ignore"):
            std = check_positive(noise_std, "noise_std") / gravity
        _check_relative(std, "noise_std")
        return np.broadcast_to(std**2 * np.eye(3), (n_poses, 3, 3)).copy()
    cov = check_array(reading_cov, "reading_cov")
    if cov.shape not in ((3, 3), (n_poses, 3, 3)):
        raise ValueError(
            f"Expected `reading_cov` to have shape (3, 3) or ({n_poses}, 3, 3), got "
            f"{describe_shape(cov.shape)}."
        )
    top = float(np.max(np.abs(cov))) if cov.size else 0.0
    with np.errstate(over="ignore"):
        _check_relative(np.sqrt(top) / gravity, "reading_cov")
    cov = np.broadcast_to(cov, (n_poses, 3, 3)) / gravity**2
    if not np.allclose(cov, np.swapaxes(cov, -1, -2), rtol=1e-9, atol=0.0):
        raise ValueError("Expected `reading_cov` to be symmetric, got an asymmetric matrix.")
    eig = np.linalg.eigvalsh(cov)
    if not np.all(eig > eig[..., -1:] / MAX_COV_CONDITION):
        raise ValueError(
            "Expected `reading_cov` to be positive definite with eigenvalues within a factor "
            f"{MAX_COV_CONDITION:g} of each other, got an eigenvalue "
            f"{float(eig.min()) * gravity**2:.3g} beside {float(eig.max()) * gravity**2:.3g}."
        )
    _check_relative(float(np.sqrt(eig.min())), "reading_cov")
    _check_relative(float(np.sqrt(eig.max())), "reading_cov")
    return np.array(cov)


def check_reading_scale(readings: NDArray[np.float64], gravity: float) -> None:
    """Refuse readings (m/s²) whose largest magnitude lies outside the accepted range."""
    relative = float(np.max(np.abs(readings))) / gravity
    if not MIN_RELATIVE_READING <= relative <= MAX_RELATIVE_READING:
        raise ValueError(
            f"Expected `readings` in m/s², from {MIN_RELATIVE_READING:g} to "
            f"{MAX_RELATIVE_READING:g} times `gravity` at their largest (a sensor at rest reads "
            f"about one g), got {relative:.3g} times: check their units."
        )


def _check_relative(std: float, name: str) -> None:
    std = float(std)
    if not MIN_RELATIVE_NOISE <= std <= MAX_RELATIVE_NOISE:
        raise ValueError(
            f"Expected `{name}` from {MIN_RELATIVE_NOISE:g} to {MAX_RELATIVE_NOISE:g} times "
            f"`gravity`, got {std:.3g} times: check its units (m/s²)."
        )


def link_geometry(
    chain: SerialChain, q: NDArray[np.float64], link: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Link orientations (m, 3, 3) and the base-frame axes (m, link + 1, 3) of its joints."""
    frames = link_frames(chain, q)
    rot = np.array(frames.rotations[:, link])
    axes = np.array(frames.joint_axes[:, : link + 1])
    return rot, axes


def check_two_axes(rot: NDArray[np.float64]) -> None:
    """Refuse orientations generated by turns about one axis: they leave `up` undetermined."""
    rel = np.einsum("mij,kj->mik", rot, rot[0])  # R_i R_0^T, base frame
    # Rotation vectors from the skew part (exact direction for angles below π; the size is
    # sin(angle), which keeps the test of parallel directions).
    w = 0.5 * np.stack(
        [rel[:, 2, 1] - rel[:, 1, 2], rel[:, 0, 2] - rel[:, 2, 0], rel[:, 1, 0] - rel[:, 0, 1]],
        axis=-1,
    )
    # A half turn has no skew part: use the symmetric part's axis there.
    half = np.linalg.norm(w, axis=-1) < 1e-6
    for i in np.flatnonzero(half):
        vals, vecs = np.linalg.eigh(0.5 * (rel[i] + rel[i].T))
        if vals[-1] > 1 - 1e-6 and np.trace(rel[i]) < 3 - 1e-9:
            w[i] = vecs[:, -1] * (1.0 - np.trace(rel[i])) / 2.0
    s = np.linalg.svd(w, compute_uv=False)
    if s[0] == 0.0 or s[1] <= SINGLE_AXIS_TOL * s[0]:
        raise DegenerateGeometryError(
            "Expected the link's orientations in `q` to differ by turns about at "
            "least two non-parallel axes, got "
            + ("a single orientation" if s[0] == 0.0 else "turns about one axis only")
            + ": with the sensor's scale, bias and mounting unknown, such poses leave the "
            "whole of `up` undetermined (for the first link, every pose turns about joint 1)."
        )


def check_count_poses(n: int, name: str) -> None:
    if n < MIN_POSES:
        raise InsufficientDataError(
            f"Expected at least {MIN_POSES} poses in `{name}` (14 unknowns: up, 9 entries of "
            f"T R_m^T and 3 of the bias, 3 equations per pose), got {n}."
        )


def encoder_spread(
    rot: NDArray[np.float64],
    axes: NDArray[np.float64],
    enc_std: NDArray[np.float64],
    up: NDArray[np.float64],
    m: NDArray[np.float64],
) -> NDArray[np.float64]:
    """D_i (m, 3, k), units of g: the encoder part of pose i's covariance is D_i D_i^T.

    Turning joint j by dq turns the link about the joint's base axis w_j, so
    d(R^T u)/dq_j = -R^T (w_j x u) and the reading moves by d_j = -M R^T (w_j x u); column j of
    D_i is sigma_j d_ij (the sign drops out of D D^T).
    """
    cross = np.cross(axes, up)  # (m, k, 3)
    d = np.einsum("ab,mcb,mkc->mak", m, rot, cross)
    out: NDArray[np.float64] = d * enc_std[: axes.shape[1]]
    return out


def whiteners(
    cov_r: NDArray[np.float64], spread: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """W_i (m, 3, 3) with W_i^T W_i = (cov_r_i + D_i D_i^T)^-1, D_i = `spread` (default none).

    Nothing here can fail where a Cholesky factor of the sum might: `cov_r` is positive definite
    with a condition number of at most MAX_COV_CONDITION (checked by `reading_covariance`), so its
    eigendecomposition gives W_r = L^-1/2 V^T; the encoder part, which may exceed the readings'
    noise by any factor, enters through the singular values s of E = W_r D = U S Q^T:
    W_r (cov_r + D D^T) W_r^T = I + E E^T = U (I + S^2) U^T, so W = (1 + S^2)^-1/2 U^T W_r.
    """
    vals, vecs = np.linalg.eigh(cov_r)
    white: NDArray[np.float64] = np.swapaxes(vecs, -1, -2) / np.sqrt(vals)[..., None]
    if spread is None:
        return white
    u, s, _ = np.linalg.svd(white @ spread)
    sv = np.zeros(white.shape[:-1])
    sv[..., : s.shape[-1]] = s
    out: NDArray[np.float64] = (np.swapaxes(u, -1, -2) / np.hypot(1.0, sv)[..., None]) @ white
    return out


def design(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """A_i (..., m, 3, 12): d(M v_i + b)/d(M.ravel(), b)."""
    shape = v.shape[:-1]
    a = np.zeros((*shape, 3, 12))
    for r in range(3):
        a[..., r, 3 * r : 3 * r + 3] = v
        a[..., r, 9 + r] = 1.0
    return a


def jacobian(
    rot: NDArray[np.float64],
    up: NDArray[np.float64],
    m: NDArray[np.float64],
    white: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Whitened Jacobian (3m, 14) of the model in (tangent of up, M.ravel(), b) and the basis."""
    basis = tangent_basis(up)
    v = np.einsum("mji,j->mi", rot, up)
    j_up = np.einsum("ab,mcb,kc->mak", m, rot, basis)  # M R^T B^T
    full = np.concatenate([j_up, design(v)], axis=-1)
    return np.einsum("mab,mbc->mac", white, full).reshape(-1, 14), basis


# What the poses must determine, for the message of the rank test.
_DETERMINED = (
    "`up` and the sensor parameters (the link turned about two non-parallel axes, far enough "
    "that the gravity directions in the link frame lie neither on one circle of the sphere nor "
    "close together)"
)


def check_design(jac: NDArray[np.float64]) -> None:
    """Refuse poses whose whitened Jacobian (3m, 14) does not determine all 14 parameters.

    The scale-free rank test of :func:`gravdir._rank.check_determined` against RCOND, made
    before anything is factorised.
    """
    check_determined(jac, "q", _DETERMINED, rcond=RCOND)


def split_information(
    jac: NDArray[np.float64], jac_r: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Tangent information (2, 2) of `up`, covariance (14, 14) of all parameters, condition.

    `jac` is the whitened Jacobian (3m, 14), `jac_r` the same whitened by the readings' noise
    alone where encoder noise entered `jac`. Where `jac` fails the rank test, the poses are
    refused (DegenerateGeometryError naming `q`) if `jac_r` fails it too; otherwise
    the encoder noise is to blame and the ValueError names `encoder_std`.
    """
    rc = reciprocal_condition(jac)
    if not rc > RCOND:
        check_design(jac if jac_r is None else jac_r)
        raise ValueError(
            "Expected `encoder_std` to leave the sensor parameters determined beside the "
            "readings' own noise, got encoder noise so far above it that the weighted design's "
            f"column-scaled reciprocal condition is {rc:.2g} (at most {RCOND:g}): the poses "
            "determine them only through readings weighted too differently for float64."
        )
    scale = np.linalg.norm(jac, axis=0)
    _, s, vt = np.linalg.svd(jac / scale, full_matrices=False)
    cov_s = (vt.T / s**2) @ vt
    cov = cov_s / np.outer(scale, scale)
    cov = 0.5 * (cov + cov.T)
    info_up = np.linalg.inv(cov[:2, :2])
    info_up = 0.5 * (info_up + info_up.T)
    vals = np.linalg.eigvalsh(info_up)
    condition = float(vals[-1] / vals[0]) if vals[0] > 0 else float("inf")
    return info_up, cov, condition


def factor_sensor(
    m: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """M = T R_m^T with T upper triangular (positive diagonal) and R_m a rotation.

    Returns T, R_m and the (9, 9) map from d(M.ravel()) to (T's upper entries
    T00, T01, T02, T11, T12, T22, then the rotation vector w of R_m -> R_m exp([w]x)).
    """
    t, qm = scipy.linalg.rq(m)
    d = np.sign(np.diag(t))
    d[d == 0] = 1.0
    t = t * d  # columns scaled
    qm = d[:, None] * qm
    r_m = qm.T
    # dM R_m = dT - T [w]x: build the linear map p -> vec(dM) and invert it.
    upper = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    cols = []
    for i, j in upper:
        dt = np.zeros((3, 3))
        dt[i, j] = 1.0
        cols.append((dt @ r_m.T).ravel())
    for k in range(3):
        w = np.zeros(3)
        w[k] = 1.0
        skew = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        cols.append((-t @ skew @ r_m.T).ravel())
    jac = np.stack(cols, axis=-1)  # vec(dM) = jac @ p
    return t, r_m, np.linalg.inv(jac)
