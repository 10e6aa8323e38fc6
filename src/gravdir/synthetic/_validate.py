"""Validators and limits shared by the synthetic arms (DH and URDF)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_per_joint, check_positive, check_scalar, norm

# Most joints a synthetic arm may have: its torques cost O(n^2) per configuration.
MAX_JOINTS = 100

# Largest DH length, joint offset or centre-of-mass coordinate, m. 1e100 is beyond any arm in
# any unit and keeps every composition of link transforms within the float range.
MAX_LENGTH = 1e100

# Largest holding-torque scale g * sum(m) * reach, N·m: every torque the arm computes stays
# within a small multiple of it, far below the float range.
MAX_TORQUE_SCALE = 1e300

# Largest inertia scale sum(m) (2 reach)^2 + sum(trace I), kg·m²: every entry of the mass matrix
# (parallel-axis terms about any point of the arm included) stays below it.
MAX_INERTIA_SCALE = 1e300

# Largest entry of an inertia tensor, kg·m², checked before its eigenvalues are computed.
MAX_INERTIA_ENTRY = 1e250

# Largest magnitude of a fixed angle (DH `theta_offset`, `alpha`): a full turn; a table typed
# in degrees lies beyond it.
MAX_FIXED_ANGLE = 2 * np.pi

# Relative tolerance of the physical checks of an inertia tensor (symmetry, positive
# semi-definite, triangle inequality): a URDF prints six significant digits.
INERTIA_RTOL = 1e-6


def real_scalar(x: object, name: str) -> float:
    """One finite real number; booleans (``True`` for 1) and numeric strings are refused."""
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"Expected `{name}` to be a number, got {x!r}.")
    return check_scalar(x, name)  # type: ignore[arg-type]


def check_up(up: ArrayLike) -> NDArray[np.float64]:
    """A unit 3-vector within 1e-6, its norm taken without over- or underflow."""
    v = check_array(up, "up")
    if v.shape != (3,):
        raise ValueError(f"Expected `up` to have shape (3,), got {v.shape}.")
    with np.errstate(under="ignore"):
        off = abs(float(norm(v)) - 1.0)
    if off > 1e-6:
        raise ValueError(
            f"Expected `up` to have unit norm (within 1e-06), got norm off by {off:.3g}."
        )
    return v


def check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
        )
    return rng


def _moments(unit: NDArray[np.float64], scale: float) -> str:
    """Principal moments for an error message, unscaled without under- or overflow."""
    return "(" + ", ".join(f"{v:.6g}" for v in (float(u) * scale for u in unit)) + ")"


def check_inertias(inertias: ArrayLike | None, n: int) -> NDArray[np.float64]:
    """Inertia tensors (n, 3, 3) about each centre of mass: symmetric, PSD, triangle inequality.

    ``None`` gives zeros (point masses). Tolerances are relative to each tensor's largest entry.
    """
    if inertias is None:
        return np.zeros((n, 3, 3))
    arr = check_array(inertias, "inertias")
    if arr.shape != (n, 3, 3):
        raise ValueError(f"Expected `inertias` to have shape ({n}, 3, 3), got {arr.shape}.")
    largest = float(np.max(np.abs(arr)))
    if largest > MAX_INERTIA_ENTRY:
        raise ValueError(
            f"Expected the entries of `inertias` within ±{MAX_INERTIA_ENTRY:g} kg·m², got "
            f"{largest:.3g}."
        )
    scale = np.max(np.abs(arr), axis=(1, 2))
    safe = np.where(scale > 0, scale, 1.0)
    with np.errstate(under="ignore"):
        unit = arr / safe[:, None, None]
        asym = float(np.max(np.abs(unit - np.swapaxes(unit, 1, 2))))
        if asym > INERTIA_RTOL:
            raise ValueError(
                f"Expected `inertias` to be symmetric (within {INERTIA_RTOL:g} of the largest "
                f"entry), got an asymmetry of {asym:.3g}."
            )
        moments = np.linalg.eigvalsh(0.5 * (unit + np.swapaxes(unit, 1, 2)))  # ascending
    if np.any(moments[:, 0] < -INERTIA_RTOL):
        k = int(np.argmin(moments[:, 0]))
        raise ValueError(
            f"Expected `inertias` to be positive semi-definite, got principal moments "
            f"{_moments(moments[k], safe[k])} for link {k}."
        )
    gap = moments[:, 2] - moments[:, 0] - moments[:, 1]
    if np.any(gap > INERTIA_RTOL):
        k = int(np.argmax(gap))
        raise ValueError(
            f"Expected `inertias` to satisfy the triangle inequality (each principal moment at "
            f"most the sum of the other two), got {_moments(moments[k], safe[k])} "
            f"for link {k}."
        )
    out: NDArray[np.float64] = 0.5 * (arr + np.swapaxes(arr, 1, 2))
    return out


def check_arm_fields(
    masses: ArrayLike,
    coms: ArrayLike,
    up: ArrayLike,
    gravity: object,
    name: object,
    inertias: ArrayLike | None,
    n: int,
    lengths: tuple[str, NDArray[np.float64]],
) -> tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float, NDArray[np.float64]
]:
    """The fields every synthetic arm of `n` links has besides its kinematics, checked.

    `masses` (n,) non-negative, `coms` (n, 3), `up` a unit 3-vector, `gravity` positive, `name`
    a str and `inertias` (n, 3, 3) or None (see :func:`check_inertias`). `lengths` is the name
    and the values of the arm's own kinematic lengths (the DH `d`, `a`; the URDF joint origins):
    those and the COMs must lie within ±:data:`MAX_LENGTH`.

    Returns
    -------
    masses, coms, up, gravity, inertias
        As float64 arrays and a float, `inertias` zeros where None.
    """
    mass_arr = check_per_joint(masses, "masses", n, scalar=False, sign="non-negative")
    com_arr = check_array(coms, "coms")
    if com_arr.shape != (n, 3):
        raise ValueError(f"Expected `coms` to have shape ({n}, 3), got {com_arr.shape}.")
    for label, values in (lengths, ("coms", com_arr)):
        if float(np.max(np.abs(values))) > MAX_LENGTH:
            raise ValueError(
                f"Expected the lengths of `{label}` within ±{MAX_LENGTH:g} m, got "
                f"{float(np.max(np.abs(values))):.3g}."
            )
    up_arr = check_up(up)
    if not isinstance(name, str):
        raise ValueError(f"Expected `name` to be a str, got {type(name).__name__}.")
    g = check_positive(gravity, "gravity")
    return mass_arr, com_arr, up_arr, g, check_inertias(inertias, n)


def check_scales(
    gravity: float,
    masses: NDArray[np.float64],
    reach: float,
    inertias: NDArray[np.float64],
    offsets: str,
) -> None:
    """Refuse an arm whose holding torques or mass matrix could leave the float range.

    `offsets` is the name, in backticks, of the argument that places the joints (dh, origins).
    """
    with np.errstate(over="ignore", under="ignore"):
        total = float(np.sum(masses))
        torque_scale = max(gravity, 1.0) * max(total, 1.0) * max(reach, 1.0)
        inertia_scale = max(total, 1.0) * max(2 * reach, 1.0) ** 2 + float(
            np.sum(np.trace(inertias, axis1=1, axis2=2))
        )
    # Every product the arm forms (m g, m |c|, m g |c|) is bounded by the torque scale, with
    # each factor taken as at least 1 so that a tiny one cannot hide a huge other.
    if not torque_scale <= MAX_TORQUE_SCALE:
        raise ValueError(
            f"Expected `masses`, `coms`, {offsets} and `gravity` to give holding "
            f"torques within {MAX_TORQUE_SCALE:g} N·m, got a scale max(g, 1) max(sum(masses), "
            f"1) max(reach, 1) of {torque_scale:.3g}."
        )
    if not inertia_scale <= MAX_INERTIA_SCALE:
        raise ValueError(
            f"Expected `masses`, `coms`, `inertias` and {offsets} to give a mass matrix "
            f"within {MAX_INERTIA_SCALE:g} kg·m², got a scale max(sum(masses), 1) "
            f"max(2 reach, 1)^2 + sum(trace(inertias)) of {inertia_scale:.3g}."
        )
