"""Base frames made explicit: a gravity direction re-expressed in another frame, and the table of
rotations from a robot description's root link to the frame its controller expresses gravity in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_same_shape
from gravdir._results import UpResult
from gravdir.controllers._common import (
    check_text,
    fingerprint_of,
    fmt,
    rotation_matrices,
    up_and_information,
)

__all__ = ["BASE_FROM_ROOT", "GravityDirection", "express_up"]


def _read_only(a: ArrayLike) -> NDArray[np.float64]:
    out = np.array(a, dtype=np.float64)
    out.flags.writeable = False
    return out


#: Rotation ``base_from_root`` from a robot description's root link to the frame in which the
#: robot's controller expresses gravity, by description, for the rows established from the
#: description's own source (see docs/controllers.md). ``up_base = BASE_FROM_ROOT[key] @ up_root``;
#: pass it to :func:`express_up`.
#:
#: ``"ur"``: Universal Robots' ``ur_description`` (``urdf/ur_macro.xacro``): the fixed joint
#: ``base_link-base_fixed_joint`` places the link ``base`` -- aligned with the *Base* coordinate
#: system of the UR controller -- at ``rpy = 0 0 pi`` from the root link ``base_link``, so
#: ``base_from_base_link = Rz(pi)ᵀ = diag(-1, -1, 1)``.
BASE_FROM_ROOT: Mapping[str, NDArray[np.float64]] = MappingProxyType(
    {"ur": _read_only(np.diag([-1.0, -1.0, 1.0]))}
)


@dataclass(frozen=True, eq=False, repr=False)
class GravityDirection(UpResult):
    """A gravity direction, with its information, in a named frame.

    Attributes
    ----------
    up : ndarray, shape (..., 3)
        Unit vector opposite to gravity, in the frame `frame`.
    up_information : ndarray, shape (..., 3, 3)
        Fisher information of `up`, 1/rad² (in the tangent plane of `up`). Zero where the
        uncertainty is not known (a plain vector given without covariance, a controller setting
        read without one): `up_std_deg` is then infinite.
    frame : str
        Label of the frame `up` is written in (free text, for the reader; "" if not given).
    up_cov, up_std_deg
        Covariance of `up` (..., 3, 3), rad², and its RMS angle in degrees (properties, see
        :class:`~gravdir._results.UpResult`).
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    frame: str

    def __repr__(self) -> str:
        std = self.up_std_deg
        label = f", frame={self.frame!r}" if self.frame else ""
        if np.ndim(self.up) == 1:
            return f"GravityDirection(up={fmt(self.up)}, up_std_deg={float(std):.4g} deg{label})"
        return f"GravityDirection(batch_shape={np.shape(self.up)[:-1]}{label})"


def express_up(
    result: Any,
    new_from_old: Any,
    *,
    up_cov: ArrayLike | None = None,
    frame: str = "",
) -> GravityDirection:
    """Re-express a gravity direction and its uncertainty in another frame.

    Parameters
    ----------
    result : UpResult or array_like, shape (..., 3)
        Any gravity-direction result of gravdir (an estimate, a fit, a bound, a
        :class:`GravityDirection`, a controller setting), or plain `up` vectors (unit within
        1e-6) in the old frame.
    new_from_old : array_like, shape (..., 3, 3), or scipy.spatial.transform.Rotation
        Rotation mapping old-frame coordinates to new-frame coordinates (its columns are the old
        frame's axes written in the new frame), for example ``BASE_FROM_ROOT["ur"]``. Matrices
        are accepted within 1e-6 of a proper rotation and replaced by the nearest rotation.
        Broadcasts against the leading axes of `up`.
    up_cov : array_like, shape (..., 3, 3), optional
        Covariance of a plain `up`, rad² (only its part in the tangent plane of `up` is used; it
        must be positive definite there). Without it the uncertainty is unknown: the information
        is zero and `up_std_deg` infinite. Refused with a result, which carries its own.
    frame : str, optional
        Label of the new frame, stored in the result.

    Returns
    -------
    GravityDirection
        ``up' = R up`` and ``up_information' = R I Rᵀ``.

    Raises
    ------
    ValueError
        If `result` is neither a gravity-direction result nor (..., 3) unit vectors,
        `new_from_old` is not proper rotations, `up_cov` is given with a result or is not a
        symmetric covariance positive definite in the tangent plane, `frame` is not a string, or
        the leading axes do not broadcast.

    Notes
    -----
    A rotation maps the tangent plane of `up` onto that of ``R up``, so a covariance
    transforms as ``C' = R C Rᵀ`` and its pseudo-inverse, the information, the same way:
    ``I' = R I Rᵀ`` (``R⁻¹ = Rᵀ``). Angles between directions, and so every standard deviation
    in radians, are unchanged. See docs/controllers.md, "Base frames".

    References
    ----------
    CN 112476435 B, claim 1 (a gravity direction expressed in a target frame through the rotation
    between the frames).

    Examples
    --------
    The URDF of a UR arm has its root ``base_link`` turned by pi about z from the controller's
    base frame; an `up` tilted towards ``base_link`` +x tilts towards base -x:

    >>> est = express_up([np.sin(0.1), 0.0, np.cos(0.1)], BASE_FROM_ROOT["ur"],
    ...                  up_cov=np.eye(3) * 1e-6, frame="UR base")
    >>> est.up.round(6)
    array([-0.099833,  0.      ,  0.995004])
    >>> round(est.up_std_deg, 6)  # sqrt(2e-6) rad, unchanged by a rotation
    0.081028
    """
    up, info = up_and_information(result, up_cov)
    r = rotation_matrices(new_from_old, "new_from_old")
    label = check_text(frame, "frame")
    batch = check_same_shape(new_from_old=r[..., 0, 0], up=up[..., 0])  # the leading axes
    u = np.broadcast_to(up, (*batch, 3))
    i3 = np.broadcast_to(info, (*batch, 3, 3))
    rr = np.broadcast_to(r, (*batch, 3, 3))
    with np.errstate(under="ignore", over="ignore"):
        new_up = np.einsum("...ij,...j->...i", rr, u)
        new_up = new_up / np.linalg.norm(new_up, axis=-1, keepdims=True)
        new_info = rr @ i3 @ np.swapaxes(rr, -1, -2)
        # Keep `up` in the null space to rounding: project on the new tangent plane.
        proj = np.eye(3) - new_up[..., :, None] * new_up[..., None, :]
        new_info = proj @ new_info @ proj
        new_info = 0.5 * (new_info + np.swapaxes(new_info, -1, -2))
    if not np.all(np.isfinite(new_info)):
        raise ValueError(
            "Expected the information of `result` to stay within the float range once rotated, "
            "got an overflow."
        )
    return GravityDirection(
        up=new_up, up_information=new_info, frame=label, fingerprint=fingerprint_of(result)
    )
