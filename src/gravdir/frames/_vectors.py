"""Free vectors in other frames, and angles between directions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import RotationLike, check_rotation_matrix, check_same_shape, check_vectors
from gravdir.frames._common import _scalar_or_array, _unit_vectors

__all__ = ["angle_between", "vector_in_target_frame"]


def vector_in_target_frame(
    v_base: ArrayLike, base_from_target: RotationLike
) -> NDArray[np.float64]:
    """Express base-frame vectors in a target frame.

    Parameters
    ----------
    v_base : array_like, shape (..., 3)
        Vectors (for example `up`) in the base frame.
    base_from_target : array_like, shape (..., 3, 3), or scipy.spatial.transform.Rotation
        Orientation of the target frame in the base frame: its columns are the target's x, y, z
        axes written in base coordinates. Broadcasts against `v_base`. A SciPy ``Rotation``
        stands for its matrix (a stack of ``n`` rotations for shape ``(n, 3, 3)``).

    Returns
    -------
    ndarray, shape (..., 3)
        The same vectors in target-frame coordinates, ``base_from_target.T @ v_base``.

    Raises
    ------
    ValueError
        If `v_base` is not ``(..., 3)`` and finite, `base_from_target` is not a stack of
        proper rotation matrices (within 1e-6), the two do not broadcast, or a coordinate of the
        result lies beyond the float range (only for vectors of norm near 1.8e308).

    Notes
    -----
    A free vector has no position, so only the orientation of the target frame matters:
    :math:`v_T = R_{BT}^{\\top} v_B` with :math:`R_{BT}` = `base_from_target`.

    References
    ----------
    CN 112476435 B, claim 1: the gravity direction found in the base frame is expressed in a
    target frame by the rotation between the two frames (claim 3 computes the contact points
    in the target frame directly, which gives the same vector).

    Examples
    --------
    A target frame turned 90 degrees about base x sees base +z as its +y:

    >>> R = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    >>> vector_in_target_frame([0, 0, 1], R).round(12) + 0.0
    array([0., 1., 0.])

    The same frame as a SciPy rotation:

    >>> from scipy.spatial.transform import Rotation
    >>> vector_in_target_frame([0, 0, 1], Rotation.from_rotvec([np.pi / 2, 0, 0])).round(12) + 0.0
    array([0., 1., 0.])
    """
    v = check_vectors(v_base, "v_base")
    r = check_rotation_matrix(base_from_target, "base_from_target")
    check_same_shape(v_base=v[..., None, :], base_from_target=r)
    # A rotation keeps the norm, so a coordinate overflows only where |v_base| is near the top
    # of the float range; tiny products underflow harmlessly to zero.
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        out = np.asarray(np.einsum("...ji,...j->...i", r, v), dtype=np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "Expected `v_base` to stay within the float range in the target frame, got a "
            "coordinate beyond 1.8e308."
        )
    return out


def angle_between(u: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """Angle between directions, accurate at every angle from 0 to pi.

    Parameters
    ----------
    u, v : array_like, shape (..., 3)
        Non-zero vectors; need not be unit. The two broadcast against each other.

    Returns
    -------
    ndarray or float, shape (...)
        Angle in radians, in [0, pi].

    Raises
    ------
    ValueError
        If `u` or `v` is not ``(..., 3)`` and finite, contains an exact zero vector, or the
        two do not broadcast. Any other finite vector is a direction, however short or long
        (``(1e-13, 0, 0)`` and ``(1e300, 0, 0)`` alike).

    Notes
    -----
    :math:`\\angle(u, v) = \\operatorname{atan2}(|\\hat u \\times \\hat v|,\\,
    \\hat u \\cdot \\hat v)`, which keeps full relative precision for small angles (where
    :math:`\\arccos` of the dot product is limited to about 1e-8 rad) and near pi (where
    :math:`\\arcsin` of the cross product fails). Each vector is divided by its largest
    component before it is normalised, so no norm over- or underflows.

    Examples
    --------
    >>> float(angle_between([1, 0, 0], [1, 1e-10, 0]))
    1e-10
    >>> angle_between([0, 0, 1], [[0, 0, -2], [0, 3, 0]]).round(6)
    array([3.141593, 1.570796])
    """
    a = _unit_vectors(u, "u", normalize=True)
    b = _unit_vectors(v, "v", normalize=True)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(
            f"Expected `u` and `v` to broadcast, got shapes {a.shape} and {b.shape}."
        ) from None
    with np.errstate(under="ignore"):  # products of tiny components of unit vectors
        cross = np.linalg.norm(np.cross(a, b), axis=-1)
        dot = np.einsum("...i,...i->...", a, b)
    return _scalar_or_array(np.asarray(np.arctan2(cross, dot)))  # type: ignore[no-any-return]
