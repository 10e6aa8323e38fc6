"""Frames and directions: `up` in the base frame and in target frames.

Conventions: `up` is the unit vector opposite to gravity, in the robot's base frame. A rotation
named ``base_from_target`` maps coordinates in the target frame to coordinates in the base frame
(its columns are the target frame's axes written in the base frame), so
``v_base = base_from_target @ v_target`` and ``v_target = base_from_target.T @ v_base``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_rotation_matrix, check_vectors

__all__ = ["vector_in_target_frame"]


def vector_in_target_frame(v_base: ArrayLike, base_from_target: ArrayLike) -> NDArray[np.float64]:
    """Express base-frame vectors in a target frame.

    Parameters
    ----------
    v_base : array_like, shape (..., 3)
        Vectors (for example `up`) in the base frame.
    base_from_target : array_like, shape (..., 3, 3)
        Orientation of the target frame in the base frame: its columns are the target's x, y, z
        axes written in base coordinates. Broadcasts against `v_base`.

    Returns
    -------
    ndarray, shape (..., 3)
        The same vectors in target-frame coordinates, ``base_from_target.T @ v_base``.

    Raises
    ------
    ValueError
        If `v_base` is not ``(..., 3)`` and finite, or `base_from_target` is not a stack of
        proper rotation matrices.

    Notes
    -----
    A free vector has no position, so only the orientation of the target frame matters:
    :math:`v_T = R_{BT}^{\\top} v_B` with :math:`R_{BT}` = `base_from_target`.

    Examples
    --------
    A target frame turned 90 degrees about base x sees base +z as its +y:

    >>> R = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    >>> vector_in_target_frame([0, 0, 1], R).round(12) + 0.0
    array([0., 1., 0.])
    """
    v = check_vectors(v_base, "v_base")
    r = check_rotation_matrix(base_from_target, "base_from_target")
    out: NDArray[np.float64] = np.einsum("...ji,...j->...i", r, v)
    return out
