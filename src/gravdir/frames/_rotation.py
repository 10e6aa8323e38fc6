"""The minimal rotation that maps base +z onto `up`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._imports import IMPORT_LOCK
from gravdir.frames._common import _UNIT_ATOL, _VERTICAL_ATOL, _check_tolerance, _unit_up

if TYPE_CHECKING:
    from scipy.spatial.transform import Rotation

__all__ = ["rotation_from_up", "rotation_matrix_from_up"]


def rotation_matrix_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> NDArray[np.float64]:
    """The minimal rotation that maps base +z onto `up`.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False. The vector is
        normalised before use in either case.
    normalize : bool, optional
        If True, accept any vector but the exact zero vector and use its direction (default
        False).
    vertical_atol : float, optional
        Where `up` points down (``up_z < 0``) with horizontal norm ``sin(tilt)`` at most this
        (default 1e-12, in (0, 1)), the axis of the minimal rotation is undefined and the
        rotation by pi about base x, ``diag(1, -1, -1)``, is returned; ``R @ z`` then differs
        from `up` by at most `vertical_atol`.

    Returns
    -------
    ndarray, shape (..., 3, 3)
        Rotation matrices R with ``R @ [0, 0, 1] = up``, rotating by the tilt about the axis
        ``z x up``.

    Raises
    ------
    ValueError
        If `up` is invalid (see :func:`tilt_from_up`) or a tolerance is not in (0, 1).

    Notes
    -----
    Many rotations map +z onto `up` (any of them followed by a turn about `up`); gravdir's is
    the one of least angle, about :math:`k = z \\times u = (-u_y, u_x, 0)` by the tilt
    :math:`t`, with :math:`|k| = \\sin t`, :math:`\\cos t = u_z`. Rodrigues' formula without
    dividing by :math:`\\sin t`:

    .. math:: R = I + [k]_\\times + \\frac{[k]_\\times^2}{1 + u_z}
       = \\begin{pmatrix} 1 - h u_x^2 & -h u_x u_y & u_x \\\\
                          -h u_x u_y & 1 - h u_y^2 & u_y \\\\
                          -u_x & -u_y & u_z \\end{pmatrix},
       \\qquad h = \\frac{1}{1 + u_z} = \\frac{1 - u_z}{u_x^2 + u_y^2}.

    The first form of :math:`h` is used where :math:`u_z \\ge 0` and the second where
    :math:`u_z < 0`, so no digits are lost to the cancellation in :math:`1 + u_z` near
    :math:`u = -z`; and the products are formed from :math:`\\sin t` and the unit horizontal
    direction, never from :math:`u_x^2 + u_y^2`, which underflows for a nearly vertical `up`.
    The result is exact to rounding at tilt 0 and continuous there; at
    :math:`u = -z` every horizontal axis gives a rotation by pi, and the choice of base x is
    the limit of the formula as `up` approaches :math:`-z` within the base y-z plane.

    Examples
    --------
    >>> from gravdir.frames import up_from_tilt_azimuth
    >>> up = up_from_tilt_azimuth(0.2, 1.0)
    >>> R = rotation_matrix_from_up(up)
    >>> bool(np.allclose(R @ [0, 0, 1], up)), bool(np.isclose(np.linalg.det(R), 1.0))
    (True, True)
    >>> rotation_matrix_from_up([0, 0, -1]) + 0.0
    array([[ 1.,  0.,  0.],
           [ 0., -1.,  0.],
           [ 0.,  0., -1.]])
    """
    _check_tolerance(vertical_atol, "vertical_atol")
    u = _unit_up(up, "up", atol, normalize)
    ux, uy, uz = u[..., 0], u[..., 1], u[..., 2]
    with np.errstate(under="ignore"):  # products of tiny components round to zero
        s = np.hypot(ux, uy)  # sin(tilt), without squaring tiny components
        down = (uz < 0) & (s <= vertical_atol)
        # h u_i u_j (i, j in x, y) as u_i u_j / (1 + u_z) where u_z >= 0, and as
        # (1 - u_z) c_i c_j with the unit horizontal direction c = (u_x, u_y) / s where u_z < 0.
        rising = uz >= 0
        safe = np.where(rising | (s == 0), 1.0, s)
        cx, cy = ux / safe, uy / safe
        g = np.where(rising, 1.0 / (1.0 + np.maximum(uz, 0.0)), 1.0 - uz)
        g = np.where(down, 0.0, g)
        hxx, hxy, hyy = g * cx * cx, g * cx * cy, g * cy * cy
    r = np.empty(u.shape[:-1] + (3, 3))
    r[..., 0, 0] = 1.0 - hxx
    r[..., 0, 1] = -hxy
    r[..., 0, 2] = ux
    r[..., 1, 0] = -hxy
    r[..., 1, 1] = 1.0 - hyy
    r[..., 1, 2] = uy
    r[..., 2, 0] = -ux
    r[..., 2, 1] = -uy
    r[..., 2, 2] = uz
    r[down] = np.diag([1.0, -1.0, -1.0])
    return r


def rotation_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> Rotation:
    """The minimal rotation that maps base +z onto `up`, as a SciPy ``Rotation``.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol, normalize, vertical_atol
        As in :func:`rotation_matrix_from_up`.

    Returns
    -------
    scipy.spatial.transform.Rotation
        Rotation(s) of shape ``up.shape[:-1]`` (a single rotation for one vector).

    Raises
    ------
    ValueError
        As :func:`rotation_matrix_from_up`; also for an empty `up`, and for more than one
        leading axis where the installed SciPy's ``Rotation`` holds only flat stacks (older
        releases; :func:`rotation_matrix_from_up` takes any batch shape).

    Notes
    -----
    ``Rotation.from_matrix(rotation_matrix_from_up(up))``; see
    :func:`rotation_matrix_from_up` for the convention, including the case ``up = -z``.

    Examples
    --------
    >>> from gravdir.frames import up_from_tilt_azimuth
    >>> rot = rotation_from_up(up_from_tilt_azimuth(0.3, -2.0))
    >>> round(float(rot.magnitude()), 12)
    0.3
    """
    with IMPORT_LOCK:
        from scipy.spatial.transform import Rotation

    matrix = rotation_matrix_from_up(
        up, atol=atol, normalize=normalize, vertical_atol=vertical_atol
    )
    if matrix.size == 0:  # SciPy before 1.15 cannot hold an empty stack: refused everywhere
        raise ValueError(
            f"Expected `up` to hold at least one vector, got shape {matrix.shape[:-2] + (3,)}."
        )
    try:
        with np.errstate(under="ignore"):  # SciPy's determinant of a nearly trivial rotation
            return Rotation.from_matrix(matrix)
    except ValueError:
        if matrix.ndim <= 3:
            raise
        # Older SciPy holds only flat stacks of rotations.
        raise ValueError(
            f"Expected `up` of shape (3,) or (n, 3) with this SciPy (its Rotation holds no "
            f"deeper batch), got shape {matrix.shape[:-2] + (3,)}; use "
            "`rotation_matrix_from_up` for any batch shape."
        ) from None
