"""Tilt and azimuth of `up`: :func:`up_from_tilt_azimuth` and its inverses."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._results import Result
from gravdir.frames._common import (
    _UNIT_ATOL,
    _VERTICAL_ATOL,
    _check_angles,
    _check_tolerance,
    _deg_text,
    _own,
    _scalar_or_array,
    _unit_up,
)

__all__ = [
    "TiltAzimuth",
    "azimuth_from_up",
    "tilt_azimuth_from_up",
    "tilt_from_up",
    "up_from_tilt_azimuth",
]


def up_from_tilt_azimuth(tilt: ArrayLike, azimuth: ArrayLike) -> NDArray[np.float64]:
    """Unit `up` vectors from tilt and azimuth angles.

    Parameters
    ----------
    tilt : array_like, shape (...)
        Angle between `up` and base +z, radians, in [0, pi].
    azimuth : array_like, shape (...)
        Angle of the horizontal component of `up`, measured from base +x towards base +y,
        radians, within ±4π (any turn of it; the canonical range is (-pi, pi]). Broadcasts
        against `tilt`.

    Returns
    -------
    ndarray, shape (..., 3)
        ``up = (sin t cos a, sin t sin a, cos t)``, unit to rounding.

    Raises
    ------
    ValueError
        If `tilt` or `azimuth` is not numeric and finite (booleans and numeric strings are
        refused), a tilt lies outside [0, pi] or an azimuth beyond ±4π (beyond pi, or 4π, the
        numbers are taken for degrees: the message ends in "degrees?"), or the two do not
        broadcast.

    Notes
    -----
    Spherical coordinates with the polar axis along base +z:

    .. math:: u = (\\sin t \\cos a,\\; \\sin t \\sin a,\\; \\cos t).

    Examples
    --------
    >>> up_from_tilt_azimuth(np.pi / 2, np.pi / 2).round(12) + 0.0
    array([0., 1., 0.])
    >>> up_from_tilt_azimuth([0.0, np.pi], 0.3).round(12) + 0.0
    array([[ 0.,  0.,  1.],
           [ 0.,  0., -1.]])
    """
    t = _check_angles(tilt, "tilt", "tilts")
    a = _check_angles(azimuth, "azimuth", "azimuths")
    try:
        t, a = np.broadcast_arrays(t, a)
    except ValueError:
        raise ValueError(
            f"Expected `tilt` and `azimuth` to broadcast, got shapes {t.shape} and {a.shape}."
        ) from None
    return _up(t, a)


def _up(t: NDArray[np.float64], a: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(sin t cos a, sin t sin a, cos t)`` of validated angles of one shape."""
    with np.errstate(under="ignore"):  # a product of two tiny angles rounds to zero
        s = np.sin(t)
        return np.stack([s * np.cos(a), s * np.sin(a), np.cos(t)], axis=-1)


def tilt_from_up(
    up: ArrayLike, *, atol: float = _UNIT_ATOL, normalize: bool = False
) -> NDArray[np.float64]:
    """Tilt of `up`: the angle between `up` and base +z, in [0, pi].

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False, in (0, 1).
    normalize : bool, optional
        If True, accept any vector but the exact zero vector and use its direction, whatever
        its length within the float range. Default False: `up` must be unit within `atol`,
        which catches a raw measurement passed by mistake.

    Returns
    -------
    ndarray or float, shape (...)
        Tilt in radians, in [0, pi].

    Raises
    ------
    ValueError
        If `up` is not ``(..., 3)`` and finite, not unit within `atol` (or the exact zero
        vector with ``normalize=True``), or `atol` is not in (0, 1).

    Notes
    -----
    :math:`t = \\operatorname{atan2}(\\sqrt{u_x^2 + u_y^2},\\, u_z)`, exact to rounding at every
    tilt, unlike :math:`\\arccos u_z`, which loses half the digits near 0 and pi. `up` is
    divided by its largest component before it is normalised, so a vector such as
    ``(1e300, 0, 1e300)`` gives its tilt (pi/4) rather than an overflow.

    Examples
    --------
    >>> float(np.degrees(tilt_from_up([0.0, np.sin(0.5), np.cos(0.5)])).round(9))
    28.647889757
    >>> tilt_from_up([0, 0, 9.81], normalize=True)
    np.float64(0.0)
    """
    u = _unit_up(up, "up", atol, normalize)
    with np.errstate(under="ignore"):
        tilt = np.arctan2(np.hypot(u[..., 0], u[..., 1]), u[..., 2])
    return _scalar_or_array(np.asarray(tilt))  # type: ignore[no-any-return]


def azimuth_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> NDArray[np.float64]:
    """Azimuth of `up`: the direction of its horizontal component, in (-pi, pi].

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False.
    normalize : bool, optional
        If True, accept any non-zero vector and use its direction (default False).
    vertical_atol : float, optional
        Where the horizontal norm ``sin(tilt)`` of the unit `up` is at most this (default 1e-12,
        i.e. 2e-10 degrees of tilt; it must lie in (0, 1)), `up` counts as vertical: the
        azimuth is undefined there and returned as 0.

    Returns
    -------
    ndarray or float, shape (...)
        Azimuth in radians, in (-pi, pi], measured from base +x towards base +y; 0 where `up`
        is vertical (tilt 0 or pi).

    Raises
    ------
    ValueError
        If `up` is invalid (see :func:`tilt_from_up`) or a tolerance is not in (0, 1).

    Notes
    -----
    :math:`a = \\operatorname{atan2}(u_y, u_x)`. A horizontal component of norm below
    `vertical_atol` is rounding noise, whose direction says nothing; reporting 0 there keeps
    the result reproducible. Use :func:`tilt_azimuth_from_up` to learn which entries were
    vertical.

    Examples
    --------
    >>> float(np.degrees(azimuth_from_up([-1.0, 0.0, 0.0])))
    180.0
    >>> azimuth_from_up([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    array([0., 0.])
    """
    _check_tolerance(vertical_atol, "vertical_atol")
    u = _unit_up(up, "up", atol, normalize)
    with np.errstate(under="ignore"):  # tiny components and angles round to zero
        horizontal = np.hypot(u[..., 0], u[..., 1])
        az = np.arctan2(u[..., 1], u[..., 0])
    # atan2(-0.0, x < 0) is -pi: fold it onto pi so the range is (-pi, pi].
    az = np.where(az <= -np.pi, np.pi, az)
    az = np.where(horizontal <= vertical_atol, 0.0, az)
    return _scalar_or_array(np.asarray(az, dtype=np.float64))  # type: ignore[no-any-return]


@dataclass(frozen=True, eq=False, repr=False)
class TiltAzimuth(Result):
    """Tilt and azimuth of `up` vectors.

    Attributes
    ----------
    tilt : ndarray or float, shape (...)
        Angle between `up` and base +z, radians, in [0, pi].
    azimuth : ndarray or float, shape (...)
        Direction of the horizontal component of `up` from base +x towards +y, radians, in
        (-pi, pi]; 0 where `up` is vertical.
    azimuth_defined : ndarray or bool, shape (...)
        False where `up` is vertical (tilt 0 or pi within the `vertical_atol` of
        :func:`tilt_azimuth_from_up`), so that the azimuth was set to 0 by convention.
    """

    _units = {
        "tilt": "rad", "azimuth": "rad",
    }

    tilt: NDArray[np.float64]
    azimuth: NDArray[np.float64]
    azimuth_defined: NDArray[np.bool_]

    def __post_init__(self) -> None:
        object.__setattr__(self, "tilt", _own(self.tilt, np.float64))
        object.__setattr__(self, "azimuth", _own(self.azimuth, np.float64))
        object.__setattr__(self, "azimuth_defined", _own(self.azimuth_defined, np.bool_))
        super().__post_init__()

    @property
    def tilt_deg(self) -> NDArray[np.float64]:
        """Tilt in degrees."""
        return np.degrees(self.tilt)

    @property
    def azimuth_deg(self) -> NDArray[np.float64]:
        """Azimuth in degrees."""
        return np.degrees(self.azimuth)

    @property
    def up(self) -> NDArray[np.float64]:
        """The unit `up` vectors, shape (..., 3), rebuilt from tilt and azimuth."""
        return up_from_tilt_azimuth(self.tilt, self.azimuth)

    def __repr__(self) -> str:
        return (
            f"TiltAzimuth(tilt_deg={_deg_text(self.tilt)}, azimuth_deg={_deg_text(self.azimuth)})"
        )


def tilt_azimuth_from_up(
    up: ArrayLike,
    *,
    atol: float = _UNIT_ATOL,
    normalize: bool = False,
    vertical_atol: float = _VERTICAL_ATOL,
) -> TiltAzimuth:
    """Tilt and azimuth of `up`, with a flag for the vertical case.

    Parameters
    ----------
    up : array_like, shape (..., 3)
        Up vectors in the base frame.
    atol : float, optional
        Tolerance on ``|up| - 1`` (default 1e-6) when `normalize` is False.
    normalize : bool, optional
        If True, accept any non-zero vector and use its direction (default False).
    vertical_atol : float, optional
        Horizontal norm ``sin(tilt)`` at or below which `up` counts as vertical and the azimuth
        is set to 0 (default 1e-12, in (0, 1)); see :func:`azimuth_from_up`.

    Returns
    -------
    TiltAzimuth
        Tilt in [0, pi], azimuth in (-pi, pi], and `azimuth_defined`.

    Raises
    ------
    ValueError
        If `up` is invalid (see :func:`tilt_from_up`) or a tolerance is not in (0, 1).

    Notes
    -----
    The inverse of :func:`up_from_tilt_azimuth` on the canonical ranges:
    :math:`t = \\operatorname{atan2}(\\sqrt{u_x^2+u_y^2}, u_z)`,
    :math:`a = \\operatorname{atan2}(u_y, u_x)`.

    Examples
    --------
    >>> tilt_azimuth_from_up([0.5, 0.5, np.sqrt(0.5)])
    TiltAzimuth(tilt_deg=45.0000, azimuth_deg=45.0000)
    >>> tilt_azimuth_from_up([[0, 0, 1], [0, -1, 0]]).azimuth_defined
    array([False,  True])
    """
    _check_tolerance(vertical_atol, "vertical_atol")
    u = _unit_up(up, "up", atol, normalize)
    with np.errstate(under="ignore"):  # tiny components and angles round to zero
        horizontal = np.hypot(u[..., 0], u[..., 1])
        tilt = np.arctan2(horizontal, u[..., 2])
    az = np.asarray(azimuth_from_up(u, vertical_atol=vertical_atol), dtype=np.float64)
    defined = np.asarray(horizontal > vertical_atol)
    return TiltAzimuth(tilt=tilt, azimuth=az, azimuth_defined=defined)
