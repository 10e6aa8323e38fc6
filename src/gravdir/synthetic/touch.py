"""Synthetic touch-plane data: contacts on a tilted plane with drawn flange orientations.

The data are built from explicit geometry (spherical angles, cross products and Rodrigues'
formula), independently of :mod:`gravdir.touch`, so that tests of the estimators can fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_count,
    check_positive,
    check_rotation_matrix,
    check_vectors,
)
from gravdir._results import Result

__all__ = ["SyntheticTouches", "touch_contacts"]

# Most contacts per set, and in all sets together: bounds the memory and work of a call.
MAX_CONTACTS = 100_000
MAX_TOTAL_CONTACTS = 1_000_000


@dataclass(frozen=True, eq=False, repr=False)
class SyntheticTouches(Result):
    """Contacts of a tool tip with a plane, and the truth behind them.

    Attributes
    ----------
    flange_poses : ndarray, shape (..., N, 4, 4)
        ``base_from_flange`` poses as reported: the flange position carries the contact noise.
    contacts : ndarray, shape (..., N, 3)
        True contact points (on the plane).
    up : ndarray, shape (..., 3)
        True plane normal (opposite to gravity).
    offset : ndarray, shape (...)
        True ``d`` with ``up . c = d``.
    tool_tip : ndarray, shape (..., 3)
        True tool-tip offset in the flange frame.
    noise_std : float
        Standard deviation of each coordinate of the contact noise.
    """

    _units = {
        "flange_poses": "m (translation)", "contacts": "m", "up": "", "offset": "m",
        "tool_tip": "m", "noise_std": "m",
    }

    flange_poses: NDArray[np.float64]
    contacts: NDArray[np.float64]
    up: NDArray[np.float64]
    offset: NDArray[np.float64]
    tool_tip: NDArray[np.float64]
    noise_std: float


def _rodrigues(axis: NDArray[np.float64], angle: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotation matrices ``I + sin a [k]x + (1 - cos a) [k]x^2`` for unit axes k."""
    k = axis
    zero = np.zeros(k.shape[:-1])
    kx = np.stack(
        [
            np.stack([zero, -k[..., 2], k[..., 1]], axis=-1),
            np.stack([k[..., 2], zero, -k[..., 0]], axis=-1),
            np.stack([-k[..., 1], k[..., 0], zero], axis=-1),
        ],
        axis=-2,
    )
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    out: NDArray[np.float64] = np.eye(3) + s * kx + (1.0 - c) * (kx @ kx)
    return out


def _unit(v: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = v / np.linalg.norm(v, axis=-1, keepdims=True)
    return out


def touch_contacts(
    rng: np.random.Generator,
    n_contacts: int,
    *,
    size: tuple[int, ...] = (),
    max_tilt: float = math.radians(10.0),
    orientation_spread: float = math.radians(30.0),
    min_orientation: float = 0.0,
    tool_tip: ArrayLike | None = None,
    noise_std: float = 0.0,
    extent: float = 0.3,
    center: ArrayLike = (0.5, 0.0, 0.0),
    relative_rotations: ArrayLike | None = None,
    spots: ArrayLike | None = None,
    spot_jitter: float = 0.0,
) -> SyntheticTouches:
    """Draw contacts of a tool tip with a tilted plane.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n_contacts : int
        Contacts per set, 1 <= N <= 100000.
    size : tuple of int, optional
        Leading batch shape (independent sets of contacts). Default a single set. At most
        1000000 contacts in all sets together.
    max_tilt : float, optional
        The plane's normal is drawn uniformly in tilt ``[0, max_tilt]`` (radians, at most pi)
        from base +z and in azimuth. Default 10° (0.1745).
    orientation_spread : float, optional
        Each flange is tilted from "approach axis along -up" by an angle up to this (radians,
        at most pi, uniform over the disc of directions), about a random horizontal axis, after
        a random spin about the approach axis. Default 30° (0.5236).
    min_orientation : float, optional
        Smallest such tilt, in radians: the tilts are uniform over the ring between this and
        `orientation_spread` (a planned set of orientations near the rim). Default 0.
    tool_tip : array_like, shape (..., 3), optional
        Tool-tip offset in the flange frame. By default drawn per set: lateral components
        uniform in ±20 mm, the component along flange +z uniform in 100-200 mm (in metres).
    noise_std : float, optional
        Standard deviation (metres) of isotropic Gaussian noise added to each reported flange
        position, i.e. to each computed contact. Default 0.
    extent : float, optional
        Side of the square (in the plane, metres) the contacts are drawn from. Default 0.3.
    center : array_like, shape (3,), optional
        A point of the plane, the square's centre. Default ``(0.5, 0, 0)``.
    relative_rotations : array_like, shape (N, 3, 3), optional
        Planned flange orientations relative to the nominal one (approach axis along -up),
        in the nominal flange frame: contact ``i`` gets ``R_0 @ relative_rotations[i]``. Replaces
        the drawn tilts and spins (`orientation_spread`, `min_orientation`).
    spots : array_like, shape (N, 2), optional
        Planned contact positions: coordinates along the nominal flange x and y axes (which lie
        in the plane) from `center`. Replaces the square of side `extent`.
    spot_jitter : float, optional
        With `spots`, each coordinate of each contact is moved by a uniform draw in
        ``±spot_jitter`` (aiming error). Default 0.

    Returns
    -------
    SyntheticTouches

    Raises
    ------
    ValueError
        If `rng` is not a Generator, a count is not an integer in its range (`n_contacts` up to
        100000, `size` up to 1000000 contacts in all), a tilt is negative or beyond pi (the
        message asks "degrees?"), another argument is out of range or of the wrong shape, or
        the contacts overflow the float range.

    Examples
    --------
    >>> data = touch_contacts(np.random.default_rng(0), 5, size=(2,))
    >>> data.flange_poses.shape, data.contacts.shape
    ((2, 5, 4, 4), (2, 5, 3))
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
        )
    n = check_count(n_contacts, "n_contacts", maximum=MAX_CONTACTS)
    shape = _check_size(size, n)
    tilt_max = _check_tilt(max_tilt, "max_tilt")
    spread = _check_tilt(orientation_spread, "orientation_spread")
    low = _check_tilt(min_orientation, "min_orientation")
    if low > spread:
        raise ValueError(
            f"Expected `min_orientation` <= `orientation_spread`, got {min_orientation}"
            f" > {orientation_spread}."
        )
    noise_std = check_positive(noise_std, "noise_std", allow_zero=True)
    extent = check_positive(extent, "extent")
    spot_jitter = check_positive(spot_jitter, "spot_jitter", allow_zero=True)
    planned = None
    if relative_rotations is not None:
        planned = check_rotation_matrix(relative_rotations, "relative_rotations")
        if planned.shape != (n, 3, 3):
            raise ValueError(
                f"Expected `relative_rotations` of shape ({n}, 3, 3), got {planned.shape}."
            )
    planned_spots = None
    if spots is not None:
        planned_spots = check_array(spots, "spots", tail=(2,))
        if planned_spots.shape != (n, 2):
            raise ValueError(f"Expected `spots` of shape ({n}, 2), got {planned_spots.shape}.")
    c0 = check_vectors(center, "center")
    if c0.shape != (3,):
        raise ValueError(f"Expected `center` of shape (3,), got {c0.shape}.")
    tip = None
    if tool_tip is not None:
        tip = check_vectors(tool_tip, "tool_tip")
        try:
            tip = np.broadcast_to(tip, (*shape, 3)).copy()
        except ValueError:
            raise ValueError(
                f"Expected `tool_tip` of shape (3,) or broadcasting to `size` + (3,) = "
                f"{(*shape, 3)}, got {tip.shape}."
            ) from None
    too_large = ValueError(
        "Expected `extent`, `center`, `tool_tip`, `noise_std`, `spots` and `spot_jitter` "
        "small enough for finite contacts, got contacts beyond the float range."
    )
    try:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            data = _draw(
                rng, n, shape, tilt_max, spread, low, tip, noise_std, extent, c0, planned,
                planned_spots, spot_jitter,
            )
    except OverflowError:  # a uniform draw over a range beyond the float range
        raise too_large from None
    if not all(np.all(np.isfinite(a)) for a in (data.flange_poses, data.contacts, data.offset)):
        raise too_large
    return data


def _check_size(size: object, n: int) -> tuple[int, ...]:
    """The batch shape: a tuple of non-negative integers; all contacts together capped."""
    items = (size,) if isinstance(size, int | np.integer) else size
    if isinstance(items, np.ndarray):
        if items.ndim != 1:
            raise ValueError(f"Expected `size` to be a tuple of integers, got shape {items.shape}.")
        items = tuple(items.tolist())
    if not isinstance(items, tuple | list):
        raise ValueError(f"Expected `size` to be a tuple of integers, got {size!r}.")
    shape = tuple(
        check_count(k, "size", minimum=0, maximum=MAX_TOTAL_CONTACTS) for k in items
    )
    total = math.prod(shape) * n
    if total > MAX_TOTAL_CONTACTS:
        raise ValueError(
            f"Expected `size` and `n_contacts` to ask for at most {MAX_TOTAL_CONTACTS} contacts "
            f"in all, got {total}."
        )
    return shape


def _check_tilt(value: float, name: str) -> float:
    """A tilt in radians, in [0, pi]; beyond a half turn it is probably in degrees."""
    tilt = check_positive(value, name, allow_zero=True)
    if tilt > math.pi:
        raise ValueError(
            f"Expected `{name}` in radians, in [0, pi], got {tilt:.6g} "
            f"({math.degrees(tilt):.6g}°, more than a half turn): degrees?"
        )
    return tilt


def _draw(
    rng: np.random.Generator,
    n: int,
    shape: tuple[int, ...],
    tilt_max: float,
    spread: float,
    low: float,
    tip: NDArray[np.float64] | None,
    noise_std: float,
    extent: float,
    c0: NDArray[np.float64],
    planned: NDArray[np.float64] | None,
    planned_spots: NDArray[np.float64] | None,
    spot_jitter: float,
) -> SyntheticTouches:
    """The drawing of :func:`touch_contacts` for checked arguments."""
    tilt = tilt_max * rng.random(shape)
    azimuth = rng.uniform(-np.pi, np.pi, shape)
    up = np.stack(
        [np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)], axis=-1
    )
    e1 = _unit(np.cross(up, np.broadcast_to([0.0, 1.0, 0.0], up.shape)))
    e2 = np.cross(up, e1)
    if planned_spots is None:
        uv = rng.uniform(-extent / 2, extent / 2, (*shape, n, 2))
    else:
        # Nominal flange x = e1, y = -e2 (see below).
        uv = planned_spots * np.array([1.0, -1.0])
        uv = uv + rng.uniform(-spot_jitter, spot_jitter, (*shape, n, 2))
    contacts = c0 + uv[..., :1] * e1[..., None, :] + uv[..., 1:] * e2[..., None, :]
    offset = np.einsum("...i,...i->...", up, c0 + np.zeros_like(up))

    if tip is None:
        tip = np.concatenate(
            [rng.uniform(-0.02, 0.02, (*shape, 2)), rng.uniform(0.1, 0.2, (*shape, 1))], axis=-1
        )

    # Nominal orientation: flange x = e1, y = -e2, z = -up (right-handed: e1 x -e2 = -up).
    r0 = np.stack([e1, -e2, -up], axis=-1)[..., None, :, :]
    spin = _rodrigues(
        np.broadcast_to(up[..., None, :], (*shape, n, 3)), rng.uniform(-np.pi, np.pi, (*shape, n))
    )
    phi = rng.uniform(-np.pi, np.pi, (*shape, n))
    axis = np.cos(phi)[..., None] * e1[..., None, :] + np.sin(phi)[..., None] * e2[..., None, :]
    angle = np.sqrt(low**2 + (spread**2 - low**2) * rng.random((*shape, n)))
    rot = _rodrigues(axis, angle) @ spin @ r0
    if planned is not None:
        rot = r0 @ planned

    flange = contacts - np.einsum("...nij,...j->...ni", rot, tip)
    flange = flange + noise_std * rng.standard_normal(flange.shape)
    poses = np.zeros((*shape, n, 4, 4))
    poses[..., :3, :3] = rot
    poses[..., :3, 3] = flange
    poses[..., 3, 3] = 1.0
    return SyntheticTouches(
        flange_poses=poses,
        contacts=contacts,
        up=up,
        offset=offset,
        tool_tip=tip,
        noise_std=noise_std,
    )
