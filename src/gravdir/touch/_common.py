"""Helpers of :mod:`gravdir.touch`: checks, the scatter matrix, signs, the batched result base."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive
from gravdir.errors import DegenerateGeometryError, GravdirWarning
from gravdir.poses import check_poses

# Points whose in-plane aspect ratio sqrt(lambda_2 / lambda_1) is below this are collinear for
# double precision: the normal then carries more than 1e-10 rad of round-off per unit of relative
# coordinate error (1e-16 / 1e-6).
MIN_CONDITIONING = 1e-6
# Relative size (to the point cloud's extent) below which residuals count as zero; keeps the
# robust scale positive on noise-free data.
ZERO_RESIDUAL = 1e-9


def fmt(v: ArrayLike) -> str:
    return np.array2string(np.asarray(v, dtype=float), precision=6, suppress_small=True)


def batch_repr(name: str, up: NDArray[np.float64], extra: str) -> str:
    if up.ndim == 1:
        return f"{name}(up={fmt(up)}, {extra})"
    return f"{name}(batch_shape={up.shape[:-1]}, {extra})"


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def check_vector_batch(
    x: NDArray[np.float64],
    name: str,
    batch: tuple[int, ...],
    data: NDArray[np.float64],
    data_name: str,
) -> None:
    """Raise unless the leading axes of `x` (..., 3) broadcast to the batch shape `batch`."""
    try:
        fits = tuple(np.broadcast_shapes(x.shape[:-1], batch)) == batch
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"Expected `{name}` of shape (3,) or with leading axes broadcasting to the batch "
            f"shape {shape_text(batch)} of `{data_name}` {shape_text(data.shape)}, "
            f"got {shape_text(x.shape)}."
        )


def check_pose_stack(flange_poses: ArrayLike) -> NDArray[np.float64]:
    """Validate ``(..., N, 4, 4)`` contact poses; a lone ``(4, 4)`` pose is refused."""
    poses = check_array(flange_poses, "flange_poses", tail=(4, 4))
    if poses.ndim < 3:
        raise ValueError(
            "Expected `flange_poses` to have shape (..., N, 4, 4) with N contacts, got a single "
            "pose (4, 4); pass `flange_poses[None]` for one contact."
        )
    return check_poses(poses, "flange_poses")


def check_noise_std(noise_std: float | None) -> float | None:
    return None if noise_std is None else check_positive(noise_std, "noise_std")


def check_count(value: int, name: str) -> int:
    """A positive integer (an iteration limit or a count of directions or starts)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"Expected `{name}` to be a positive integer, got {value!r}.")
    return int(value)


def warn_noise_not_estimable(n_contacts: int, n_unknowns: int, stacklevel: int) -> None:
    """Warn that without `noise_std` the uncertainty of `up` is unknown (no residual left)."""
    warnings.warn(
        f"{n_contacts} contacts determine the {n_unknowns} unknowns exactly and no `noise_std` "
        "was given: the contact noise cannot be estimated, so `up` carries zero information "
        "and `up_std_deg` is infinite. Pass `noise_std` to get its uncertainty.",
        GravdirWarning,
        stacklevel=stacklevel,
    )


def noise_floor(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """Round-off of the coordinates of each set of points (..., N, 3): ``eps * max |c|``.

    An estimated noise level is kept at least this large, so that exact data (zero residuals)
    give a large but finite information rather than an infinite one.
    """
    return np.asarray(np.finfo(np.float64).eps * np.max(np.abs(points), axis=(-2, -1)))


def scatter(
    points: NDArray[np.float64], weights: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Centroid, ascending eigenvalues and eigenvectors of the weighted scatter matrix."""
    w = weights[..., None]
    centroid = np.sum(w * points, axis=-2) / np.sum(w, axis=-2)
    x = (points - centroid[..., None, :]) * w
    s = np.einsum("...ni,...nj->...ij", x, x)
    lam, vec = np.linalg.eigh(s)
    return centroid, np.maximum(lam, 0.0), vec


def plane_information(
    lam: NDArray[np.float64], vec: NDArray[np.float64], sigma: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Information ``sigma^-2 sum_k (lambda_k - lambda_3) u_k u_k^T`` of a plane's normal.

    `lam` ascending and `vec` (columns) from :func:`scatter`; zero where `sigma` is infinite.
    """
    with np.errstate(divide="ignore"):
        inv_var = np.where(np.isfinite(sigma), 1.0 / sigma**2, 0.0)
    gap = lam[..., 1:] - lam[..., :1]
    tang = vec[..., :, 1:]
    info = np.einsum("...ik,...k,...jk->...ij", tang, gap, tang) * inv_var[..., None, None]
    return np.asarray(0.5 * (info + np.swapaxes(info, -1, -2)), dtype=np.float64)


def check_conditioning(
    points: NDArray[np.float64],
    lam: NDArray[np.float64],
    min_conditioning: float,
    name: str,
) -> NDArray[np.float64]:
    """Return sqrt(lambda_2 / lambda_1); raise DegenerateGeometryError below the threshold."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = np.where(lam[..., 2] > 0, np.sqrt(lam[..., 1] / lam[..., 2]), 0.0)
    bad = cond < min_conditioning
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        pts = points[where]
        dist = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=-1)
        extent = float(np.max(dist))
        close = np.argwhere(np.triu(dist <= max(extent, 1.0) * 1e-12, k=1))
        at = f" (batch index {where})" if where else ""
        if extent == 0.0:
            detail = "all points coincide"
        elif close.size:
            detail = f"points {int(close[0, 0])} and {int(close[0, 1])} coincide"
        else:
            detail = f"conditioning sqrt(lambda2/lambda1) = {float(cond[where]):.3g}"
        raise DegenerateGeometryError(
            f"Expected `{name}` to span a plane (not collinear, conditioning >= "
            f"{min_conditioning:g}), got {detail}{at}."
        )
    return np.asarray(cond, dtype=np.float64)


def orient(
    normal: NDArray[np.float64], hint: NDArray[np.float64], name: str
) -> NDArray[np.float64]:
    """Sign (+1/-1) that puts `normal` on the side of `hint`."""
    dot = np.einsum("...i,...i->...", normal, hint)
    # A hint within 1e-9 rad of the plane itself cannot choose a side.
    if np.any(np.abs(dot) <= 1e-9 * np.linalg.norm(hint, axis=-1)):
        raise DegenerateGeometryError(
            f"Expected `{name}` to point off the fitted plane, got a vector lying in it."
        )
    return np.where(dot < 0, -1.0, 1.0)


def tangent_columns(n: NDArray[np.float64]) -> NDArray[np.float64]:
    """Two unit vectors perpendicular to `n` (..., 3) as columns, shape (..., 3, 2)."""
    helper = np.where(
        (np.abs(n[..., 0]) < 0.9)[..., None], np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    )
    u = np.cross(n, helper)
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    v = np.cross(n, u)
    return np.stack([u, v], axis=-1)
