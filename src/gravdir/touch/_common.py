"""Helpers of :mod:`gravdir.touch`: checks, the scatter matrix, signs, the batched result base."""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    NAN_POLICIES,
    check_array,
    check_count,
    check_option,
    check_positive,
    describe_shape,
    drop_nan_samples,
)
from gravdir._imports import IMPORT_LOCK
from gravdir._sphere import ABS_FLOOR
from gravdir.errors import DegenerateGeometryError, GravdirWarning
from gravdir.poses import check_poses

# Points whose in-plane aspect ratio sqrt(lambda_2 / lambda_1) is below this are collinear for
# double precision: the normal then carries more than 1e-10 rad of round-off per unit of relative
# coordinate error (1e-16 / 1e-6).
MIN_CONDITIONING = 1e-6
# Relative size (to the point cloud's extent) below which residuals count as zero; keeps the
# robust scale positive on noise-free data.
ZERO_RESIDUAL = 1e-9
# A hint closer to the fitted plane than this many standard deviations of the normal across it
# decides the sign of `up` with a warning (a Gaussian error flips it with probability 0.13 %).
SIGN_MARGIN = 3.0
# Information of `up` (1/rad²) below which it counts as none (see `drop_negligible`): the absolute
# part of the one floor of `gravdir._sphere.informative`.
INFO_FLOOR = ABS_FLOOR
# Caps on the iteration and search counts (documented in docs/touch.md, "Input checks").
MAX_ITER_CAP = 10_000
N_DIRECTIONS_CAP = 10_000
N_STARTS_CAP = 1_000
SEARCH_MAX_ITER_CAP = 100
# Contacts of one set at most for the robust fits (docs/touch.md, "Input checks"): their work
# is the contacts times the candidate subsets (at most 3000, see `_robust.sample_size`) plus a
# pass over the contacts per refit or deletion test, and no temporary grows faster than N.
ROBUST_CONTACTS_CAP = 10_000
# Smallest accepted `significance`. The tests' critical values are normal and Student quantiles
# at significance / 2, and the deletion's at significance / (2 N), N <= ROBUST_CONTACTS_CAP: at
# least 5e-205 from this floor, where SciPy's Student quantile is finite and positive for every
# degree of freedom (checked from 1 to 1e7; below about 1e-236 it returns -inf at 3 degrees of
# freedom, and at 5e-324 even significance / 2 underflows to zero, an infinite normal quantile).
MIN_SIGNIFICANCE = 1e-200


def fmt(v: ArrayLike) -> str:
    return np.array2string(np.asarray(v, dtype=float), precision=6, suppress_small=True)


def batch_repr(name: str, up: NDArray[np.float64], extra: str) -> str:
    if up.ndim == 1:
        return f"{name}(up={fmt(up)}, {extra})"
    return f"{name}(batch_shape={up.shape[:-1]}, {extra})"



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
            f"shape {describe_shape(batch)} of `{data_name}` {describe_shape(data.shape)}, "
            f"got {describe_shape(x.shape)}."
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


def omit_nan_contacts(
    x: ArrayLike, name: str, tail: tuple[int, ...], nan_policy: str
) -> tuple[NDArray[np.float64], int]:
    """`x` (..., N, *tail) without the contacts that hold a NaN (``nan_policy="omit"``).

    Returns the array and the number of contacts omitted (a contact with a NaN in any batch
    item is omitted from every item, so the sets stay of one size). Under ``"raise"`` a NaN
    raises, naming `name` and the option; an infinity raises under both. An array without the
    contact axis is returned as it is, for the caller's own shape check to refuse.
    """
    check_option(nan_policy, "nan_policy", NAN_POLICIES)
    arr = check_array(x, name, tail=tail, finite=False)
    if arr.ndim < len(tail) + 1:
        return arr, 0
    kept, keep = drop_nan_samples({name: arr}, nan_policy, axis=-len(tail) - 1)
    return kept[name], int(keep.size - np.count_nonzero(keep))


def omitted_text(n_omitted: int) -> str:
    """`` after omitting k with NaN`` for an error about too few contacts, or nothing."""
    return f" after omitting {n_omitted} with NaN" if n_omitted else ""


def check_limit(value: object, name: str, maximum: int) -> int:
    """A positive integer up to a documented cap (an iteration limit, a count of directions)."""
    try:
        return check_count(value, name, minimum=1, maximum=maximum)
    except ValueError:
        raise ValueError(
            f"Expected `{name}` to be a positive integer (at most {maximum}), got {value!r}."
        ) from None


def check_noise_std(noise_std: float | None) -> float | None:
    return None if noise_std is None else check_positive(noise_std, "noise_std")


def check_significance(significance: float) -> float:
    """`significance` in [`MIN_SIGNIFICANCE`, 1): below it the tests' thresholds overflow."""
    value = check_positive(significance, "significance")
    if value >= 1.0:
        raise ValueError(f"Expected `significance` in (0, 1), got {significance!r}.")
    if value < MIN_SIGNIFICANCE:
        raise ValueError(
            f"Expected `significance` of at least {MIN_SIGNIFICANCE:g} (below, the tests' "
            f"critical values are not finite), got {significance!r}."
        )
    return value


def check_robust_size(n_contacts: int, name: str, what: str) -> None:
    """Refuse more than `ROBUST_CONTACTS_CAP` contacts per set for a robust fit."""
    if n_contacts > ROBUST_CONTACTS_CAP:
        raise ValueError(
            f"Expected `{name}` to hold at most {ROBUST_CONTACTS_CAP} {what} per set for the "
            f"robust fit, got {n_contacts}. Fit a subset of them, or fit without `robust`."
        )


def check_min_conditioning(min_conditioning: float) -> float:
    """`min_conditioning` in (0, 1]: the conditioning sqrt(lambda_2 / lambda_1) is at most 1."""
    value = check_positive(min_conditioning, "min_conditioning")
    if value > 1.0:
        raise ValueError(
            f"Expected `min_conditioning` in (0, 1] (the conditioning of a round cloud is 1), "
            f"got {min_conditioning!r}."
        )
    return value



def set_scale(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """A power of two per set of points (..., N, 3) with ``max |c| / scale`` in [1, 2).

    The fits divide the points by it and compute in these units, so that coordinates anywhere
    in the float range neither overflow nor underflow; a power of two makes the division exact.
    All-zero sets get 1.
    """
    big = np.max(np.abs(points), axis=(-2, -1), initial=0.0)
    _, exponent = np.frexp(big)
    return np.asarray(np.where(big > 0, np.ldexp(1.0, exponent - 1), 1.0), dtype=np.float64)


def in_units(x: NDArray[np.float64], scale: NDArray[np.float64]) -> NDArray[np.float64]:
    """`x` divided by `scale` (a power of two); what underflows there is below round-off."""
    with np.errstate(under="ignore"):
        return np.asarray(x / scale, dtype=np.float64)


def drop_negligible(info: NDArray[np.float64]) -> NDArray[np.float64]:
    """Zero an information (..., 3, 3) whose entries are all below `INFO_FLOOR`.

    Such an information means a standard deviation above 1e100 rad: no knowledge of `up`, and
    its inverse would overflow the covariance.
    """
    small = np.max(np.abs(info), axis=(-2, -1), keepdims=True, initial=0.0) < INFO_FLOOR
    return np.asarray(np.where(small, 0.0, info), dtype=np.float64)


def to_units(
    x: NDArray[np.float64], scale: NDArray[np.float64], names: str
) -> NDArray[np.float64]:
    """`x` (computed in units of `scale`) times `scale`; raise if that overflows."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.asarray(x * scale, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"Expected {names} with coordinates small enough for finite results, got "
            "coordinates whose plane offset or residuals overflow the float range."
        )
    return out


def check_contacts(points: NDArray[np.float64], names: str) -> NDArray[np.float64]:
    """Raise if computed contact points overflowed (R t + p beyond the float range)."""
    if not np.all(np.isfinite(points)):
        raise ValueError(
            f"Expected {names} to give finite contact points, got contacts beyond the float "
            "range (R t + p overflows)."
        )
    return points


def warn_noise_not_estimable(n_contacts: int, n_unknowns: int, stacklevel: int) -> None:
    """Warn that without `noise_std` the uncertainty of `up` is unknown (no residual left)."""
    warnings.warn(
        f"{n_contacts} contacts determine the {n_unknowns} unknowns exactly and no `noise_std` "
        "was given: the contact noise cannot be estimated, so `up` carries zero information "
        "and `up_std_deg` is infinite. Pass `noise_std` to get its uncertainty.",
        GravdirWarning,
        stacklevel=stacklevel,
    )


def warn_no_information(stacklevel: int) -> None:
    """Warn that a finite `noise_std` left no representable information on `up`."""
    warnings.warn(
        "`noise_std` is so large against the spread of the contacts that the information on "
        "`up` underflows to zero: `up_std_deg` is infinite.",
        GravdirWarning,
        stacklevel=stacklevel,
    )


def check_noise_fit(
    ss: NDArray[np.float64],
    dof: NDArray[np.int64],
    sigma: NDArray[np.float64],
    significance: float,
    cause: str,
    stacklevel: int,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Test the inliers' residuals against the caller's noise level; inflate it where they fail.

    `ss` (...) is the inliers' sum of squared residuals, `dof` their number less the fitted
    parameters, `sigma` the caller's noise, all in one unit. With Gaussian noise of that level
    ``ss / sigma^2`` is chi-square with `dof` degrees of freedom (to first order; the robust fits'
    inliers, kept within the test's threshold, give less, so their test errs on the side of
    silence). A set whose survival probability is below `significance` is a misfit: a
    :class:`~gravdir.errors.GravdirWarning` says so, naming `cause` as what to check, and its
    noise becomes the residuals' own scale ``sqrt(ss / dof)``, which inflates the covariance
    by the observed residual variance. Returns the noise (...) and the misfit mask (...).
    """
    with IMPORT_LOCK:
        from scipy.stats import chi2  # scipy.stats is slow to import: only when needed

    tested = dof > 0
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        stat = np.where(tested, ss / sigma**2, 0.0)
        p_value = np.where(tested, chi2.sf(stat, np.maximum(dof, 1)), 1.0)
        misfit = tested & (p_value < significance)
        own = np.sqrt(ss / np.maximum(dof, 1))
    if not np.any(misfit):
        return sigma, misfit
    worst = np.unravel_index(int(np.argmin(np.where(misfit, p_value, np.inf))), misfit.shape)
    at = ""
    if misfit.ndim:
        at = (
            f" in {int(np.count_nonzero(misfit))} of {misfit.size} sets (the worst at batch "
            f"index {tuple(int(i) for i in worst)})"
        )
    warnings.warn(
        f"The residuals of the inliers are not consistent with `noise_std`{at}: their scale "
        f"sqrt(sum r^2 / dof) is {float(own[worst] / sigma[worst]):.3g} times it (chi-square "
        f"{float(stat[worst]):.4g} "
        f"on {int(dof[worst])} degrees of freedom, p = {float(p_value[worst]):.2g} < "
        f"`significance` = {significance:g}). The contacts do not lie on one plane within that "
        f"noise: {cause}, a stepped or curved surface, or a `noise_std` set too small. "
        "`noise_std` and `up_cov` of the result are inflated to the residuals' own scale, but "
        "the fit is not to be trusted: check the contacts.",
        GravdirWarning,
        stacklevel=stacklevel,
    )
    return np.asarray(np.where(misfit, np.maximum(own, sigma), sigma), dtype=np.float64), misfit


def noise_floor(points: NDArray[np.float64]) -> NDArray[np.float64]:
    """Round-off of the coordinates of each set of points (..., N, 3): ``eps * max |c|``.

    A noise level (the caller's or estimated) is kept at least this large: coordinates carry no
    more precision than that, and exact data then give a large but finite information rather
    than an infinite one.
    """
    return np.asarray(
        np.finfo(np.float64).eps * np.max(np.abs(points), axis=(-2, -1), initial=0.0)
    )


def noise_in_units(
    noise_std: float, scale: NDArray[np.float64], floor: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The caller's `noise_std` in units of `scale`, at least `floor` (in those units)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.asarray(np.maximum(noise_std / scale, floor), dtype=np.float64)


def inverse_variance(sigma: NDArray[np.float64]) -> NDArray[np.float64]:
    """``1 / sigma^2``: zero where `sigma` is infinite or so large that it underflows."""
    with np.errstate(divide="ignore", under="ignore", over="ignore"):
        inv = np.where(np.isfinite(sigma) & (sigma > 0), 1.0 / sigma, 0.0)
        return np.asarray(inv * inv, dtype=np.float64)


def scatter(
    points: NDArray[np.float64], weights: NDArray[np.float64], name: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Centroid, ascending eigenvalues and eigenvectors of the weighted scatter matrix.

    `points` are in the units of :func:`set_scale` (coordinates of order one).
    """
    w = weights[..., None]
    with np.errstate(under="ignore"):
        centroid = np.sum(w * points, axis=-2) / np.sum(w, axis=-2)
        x = (points - centroid[..., None, :]) * w
        s = np.einsum("...ni,...nj->...ij", x, x)
    try:
        lam, vec = np.linalg.eigh(s)
    except np.linalg.LinAlgError as exc:  # not expected for finite data of order one
        raise DegenerateGeometryError(
            f"Expected `{name}` to give a scatter matrix with an eigendecomposition, got {exc}."
        ) from None
    return centroid, np.maximum(lam, 0.0), vec


def plane_information(
    lam: NDArray[np.float64], vec: NDArray[np.float64], sigma: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Information ``sigma^-2 sum_k (lambda_k - lambda_3) u_k u_k^T`` of a plane's normal.

    `lam` ascending and `vec` (columns) from :func:`scatter`, `sigma` in the same units; zero
    where `sigma` is infinite.
    """
    gap = lam[..., 1:] - lam[..., :1]
    tang = vec[..., :, 1:]
    with np.errstate(under="ignore"):
        info = np.einsum("...ik,...k,...jk->...ij", tang, gap, tang)
        info = info * inverse_variance(sigma)[..., None, None]
        return drop_negligible(0.5 * (info + np.swapaxes(info, -1, -2)))


def plane_normal_variance(
    lam: NDArray[np.float64],
    vec: NDArray[np.float64],
    sigma: NDArray[np.float64],
    direction: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Variance of ``n . h`` for a unit `direction` h: ``sigma^2 sum_k (u_k . h)^2 / gap_k``.

    Infinite where `sigma` is, or where a gap ``lambda_k - lambda_3`` is zero.
    """
    gap = lam[..., 1:] - lam[..., :1]
    along = np.einsum("...ik,...i->...k", vec[..., :, 1:], direction)
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        terms = np.where(gap > 0, along**2 / gap, np.where(along == 0, 0.0, np.inf))
        return np.asarray(np.sum(terms, axis=-1) * sigma**2, dtype=np.float64)


def check_conditioning(
    points: NDArray[np.float64],
    lam: NDArray[np.float64],
    min_conditioning: float,
    name: str,
) -> NDArray[np.float64]:
    """Return sqrt(lambda_2 / lambda_1); raise DegenerateGeometryError below the threshold.

    `points` are in the units of :func:`set_scale`; `name` is the argument (or arguments,
    each in backticks) that holds them.
    """
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        cond = np.where(lam[..., 2] > 0, np.sqrt(lam[..., 1] / lam[..., 2]), 0.0)
    bad = cond < min_conditioning
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        pts = points[where]
        with np.errstate(under="ignore"):
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
            f"Expected {name} to span a plane (not collinear, conditioning >= "
            f"{min_conditioning:g}), got {detail}{at}."
        )
    return np.asarray(cond, dtype=np.float64)


def orient(
    normal: NDArray[np.float64], hint: NDArray[np.float64], name: str
) -> NDArray[np.float64]:
    """Sign (+1/-1) that puts `normal` on the side of the unit vector `hint`."""
    dot = np.einsum("...i,...i->...", normal, hint)
    # A hint within 1e-9 rad of the plane itself cannot choose a side.
    if np.any(np.abs(dot) <= 1e-9):
        raise DegenerateGeometryError(
            f"Expected {name} to point off the fitted plane, got a vector lying in it."
        )
    return np.where(dot < 0, -1.0, 1.0)


def warn_sign_margin(
    normal: NDArray[np.float64],
    hint: NDArray[np.float64],
    variance: NDArray[np.float64],
    what: str,
    stacklevel: int,
) -> None:
    """Warn where the unit `hint` lies within `SIGN_MARGIN` standard deviations of the plane.

    `variance` is that of ``n . hint`` under the fit's uncertainty; where it is infinite (the
    noise is not known) nothing is said here: the missing `noise_std` has its own warning.
    """
    dot = np.abs(np.einsum("...i,...i->...", normal, hint))
    std = np.sqrt(np.where(np.isfinite(variance), variance, np.inf))
    with np.errstate(divide="ignore", invalid="ignore"):
        margin = np.where(np.isfinite(std), dot / std, np.inf)
    close = margin < SIGN_MARGIN
    if not np.any(close):
        return
    worst = np.unravel_index(int(np.argmin(np.where(close, margin, np.inf))), margin.shape)
    at = f" (batch index {tuple(int(i) for i in worst)})" if margin.ndim else ""
    angle = np.degrees(np.arcsin(min(float(dot[worst]), 1.0)))
    subject = what[:1].upper() + what[1:]
    warnings.warn(
        f"{subject} chose the sign of `up` by a margin of only {float(margin[worst]):.3g} "
        f"standard deviations: it is {angle:.3g}° from the fitted plane, whose normal has a "
        f"standard deviation of {np.degrees(float(std[worst])):.3g}° across it{at}. The sign "
        "may be wrong; pass an `up_hint` farther from the plane.",
        GravdirWarning,
        stacklevel=stacklevel,
    )
