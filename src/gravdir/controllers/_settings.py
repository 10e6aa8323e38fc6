"""Controller settings from a gravity direction, with their uncertainty, and back."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_option,
    check_positive,
    check_same_shape,
    check_unit_vector,
    describe_shape,
    norm,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import UpResult
from gravdir._sphere import tangent_basis
from gravdir.controllers._common import (
    fingerprint_of,
    fmt,
    information_from_tangent_cov,
    propagate,
    up_and_information,
)
from gravdir.controllers._conventions import (
    BETA_DEGENERATE,
    BETA_MAX,
    SETTINGS,
    SPECS,
    Setting,
    beta_forward,
    beta_inverse,
    vector_forward,
)
from gravdir.controllers._frames import GravityDirection
from gravdir.errors import DegenerateGeometryError, GravdirWarning

__all__ = ["ControllerSetting", "setting_from_up", "up_from_setting"]

# Largest `gravity` accepted, m/s²: ten standard gravities, far above any mounting (a base
# accelerated on a rail adds a fraction of g) and far below the same value in mm/s² (9806.65).
MAX_GRAVITY = 100.0
# The warning for an `up` that Gravity Beta cannot express: its angle to the base x-z plane
# beyond this many standard deviations of the estimate, or beyond the 1e-6 rad to which a unit
# vector is checked when the uncertainty is unknown.
SIGNIFICANT_SIGMAS = 3.0
UNKNOWN_TOLERANCE = 1e-6


@dataclass(frozen=True, eq=False, repr=False)
class ControllerSetting(UpResult):
    """A controller's gravity setting: the numbers to type, their uncertainty, and its `up`.

    Attributes
    ----------
    up : ndarray, shape (..., 3)
        The unit `up` the setting makes the controller assume, in the controller's base frame.
        Equal to the `up` converted, except for Gravity Beta, which keeps only its part in the
        base x-z plane (see `representation_error`).
    up_information : ndarray, shape (..., 3, 3)
        Fisher information of that `up`, 1/rad²: the converted estimate's, or for Gravity Beta
        ``(d up/d beta)(d up/d beta)ᵀ / var(beta)`` (none across the x-z plane, which Gravity
        Beta cannot express).
    setting : str
        Which setting (one of ``gravdir.controllers.SETTINGS``).
    vendor : str
        The controller's maker ("" for the plain gravity vector).
    command : str
        The command or parameter the values go into (``set_gravity``, ``gravity_earth``,
        ``F_GravityDirection``, ``Gravity Beta``, ``vector``).
    names, units : tuple of str
        Name and unit of each value.
    values : ndarray, shape (..., k)
        The setting, in its own units (k = 3, or 1 for Gravity Beta).
    values_cov : ndarray, shape (..., k, k)
        Covariance of `values` in their units squared, propagated to first order through the
        exact Jacobian of the conversion; infinite where the estimate carries no information
        (exact zeros stay where a value has no component along such a direction).
    representation_error : ndarray, shape (...)
        Angle between the `up` converted and the `up` the setting expresses, radians: zero for
        the vector settings; for Gravity Beta, the angle between `up` and the base x-z plane.
    values_std, line, up_cov, up_std_deg
        Standard deviations of `values`, the text to type (properties below), the covariance
        of `up` and its RMS angle in degrees (see :class:`~gravdir._results.UpResult`).
    """

    _units = {
        "values": "as in `units`", "values_cov": "(as in `units`)²", "values_std": "as in `units`",
        "representation_error": "rad",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    setting: str
    vendor: str
    command: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    values: NDArray[np.float64]
    values_cov: NDArray[np.float64]
    representation_error: NDArray[np.float64]

    @property
    def values_std(self) -> NDArray[np.float64]:
        """Standard deviation of each value, shape (..., k), in the value's unit."""
        with np.errstate(under="ignore"):
            return np.sqrt(np.diagonal(self.values_cov, axis1=-2, axis2=-1))

    @property
    def line(self) -> Any:
        """The exact text to type into the controller, six decimals per value.

        A ``str`` for one setting; for a batch, nested lists of ``str`` of the batch shape.
        """
        spec = SPECS[self.setting]
        values = np.asarray(self.values)
        if values.ndim == 1:
            return spec.line(values)
        out = np.empty(values.shape[:-1], dtype=object)
        for index in np.ndindex(values.shape[:-1]):
            out[index] = spec.line(values[index])
        return out.tolist()

    def __repr__(self) -> str:
        if np.ndim(self.values) == 1:
            unit = self.units[0]
            return (
                f"ControllerSetting({self.line!r}, values_std={fmt(self.values_std)} {unit}, "
                f"representation_error_deg={math.degrees(float(self.representation_error)):.4g})"
            )
        shape = np.shape(self.values)[:-1]
        return f"ControllerSetting(setting={self.setting!r}, batch_shape={shape})"


def setting_from_up(
    result: Any,
    setting: Setting,
    *,
    gravity: float = STANDARD_GRAVITY,
    up_cov: ArrayLike | None = None,
) -> ControllerSetting:
    """The gravity setting a controller takes, from a gravity direction, with its uncertainty.

    Parameters
    ----------
    result : UpResult or array_like, shape (..., 3)
        A gravity-direction result of gravdir or plain `up` vectors (unit within 1e-6),
        **expressed in the frame in which the controller takes the setting** (use
        :func:`express_up` with :data:`BASE_FROM_ROOT` first when `up` came from a robot
        description whose root link differs from that frame).
    setting : {"ur_set_gravity", "franka_gravity_earth", "epson_gravity_direction", \
"abb_gravity_beta", "gravity_vector"}
        ``"ur_set_gravity"``: the vector ``d`` of URScript ``set_gravity(d)``, ``g up`` (m/s²).
        ``"franka_gravity_earth"``: libfranka's ``gravity_earth``, ``-g up`` (m/s²).
        ``"epson_gravity_direction"``: Epson's ``F_GravityDirection`` (Force Guide:
        ``Robot.GravityDirection``), the unit vector ``-up``. ``"abb_gravity_beta"``: ABB's
        system parameter Gravity Beta (rad), ``up = (-sin b, 0, cos b)``.
        ``"gravity_vector"``: the plain gravity vector ``-g up`` (m/s²).
    gravity : float, optional
        Magnitude ``g`` of the vector settings, m/s², in (0, 100] (default 9.80665, standard
        gravity; the vendors' own defaults are 9.82 for UR and 9.81 for Franka). Unused by the
        Epson and ABB settings, which carry a direction only.
    up_cov : array_like, shape (..., 3, 3), optional
        Covariance of a plain `up`, rad² (see :func:`express_up`). Without it the uncertainty is
        unknown and every `values_std` infinite. Refused with a result.

    Returns
    -------
    ControllerSetting
        `values`, `values_cov`, the text to type (`line`), and the `up` the setting expresses.

    Raises
    ------
    ValueError
        If `result` or `up_cov` is invalid (see :func:`express_up`), `setting` is not one of the
        options, or `gravity` is not a number in (0, 100] (a larger one is m/s² given in mm/s²).
    DegenerateGeometryError
        For Gravity Beta, if `up` lies within 1e-12 of base +y or -y: no Gravity Beta
        expresses it.

    Warns
    -----
    GravdirWarning
        For Gravity Beta, if `up` leaves the base x-z plane by more than three standard
        deviations of the estimate (by more than 1e-6 rad when its uncertainty is unknown):
        Gravity Beta cannot express that part, and ABB's Gravity Alpha, which could, is not
        supported (its definition was not established).

    Notes
    -----
    ``values_cov = J C Jᵀ`` with ``C`` the covariance of `up` and ``J`` the Jacobian of the
    conversion: ``s I`` for the vector settings (``s = g``, ``-g`` or ``-1``); for
    ``beta = atan2(-u_x, u_z)``, ``J = (-u_z, 0, u_x) / (u_x² + u_z²)``. The derivations, and
    each vendor's definition with its source, are in docs/controllers.md.

    References
    ----------
    Universal Robots, *The URScript Programming Language*, ``set_gravity(d)``; Franka Robotics,
    libfranka ``franka::Model::gravity`` and ``RobotState::O_ddP_O``; Epson, *Force Guide
    SPEL+ Language Reference*, ``F_GravityDirection`` / ``GravityDirection``; ABB, product
    manuals, "Setting the system parameters for a suspended or tilted robot" (Gravity Beta).

    Examples
    --------
    A floor-mounted arm whose base is tilted 2 degrees about base x:

    >>> t = np.radians(2.0)
    >>> up = [0.0, np.sin(t), np.cos(t)]
    >>> setting_from_up(up, "ur_set_gravity", gravity=9.82).line
    'set_gravity([0.000000, 0.342713, 9.814018])'
    >>> setting_from_up(up, "epson_gravity_direction").line
    'F_GravityDirection 0.000000, -0.034899, -0.999391'
    >>> s = setting_from_up([np.sin(t), 0.0, np.cos(t)], "abb_gravity_beta",
    ...                     up_cov=np.eye(3) * 1e-8)
    >>> s.line, s.values_std.round(6)
    ('Gravity Beta = -0.034907', array([0.0001]))
    """
    up, info = up_and_information(result, up_cov)
    key = check_option(setting, "setting", SETTINGS)
    spec = SPECS[key]
    g = check_positive(gravity, "gravity")
    if g > MAX_GRAVITY:
        raise ValueError(
            f"Expected `gravity` in m/s², at most {MAX_GRAVITY:g}, got {g:.6g}: mm/s²?"
        )
    batch = up.shape[:-1]
    if key != "abb_gravity_beta":
        values, jac = vector_forward(spec, up, g)
        cov = propagate(up, info, jac)
        return ControllerSetting(
            up=up,
            up_information=info,
            setting=key,
            vendor=spec.vendor,
            command=spec.command,
            names=spec.names,
            units=spec.units,
            values=values,
            values_cov=cov,
            representation_error=np.zeros(batch),
            fingerprint=fingerprint_of(result),
        )
    return _beta_setting(up, info, fingerprint_of(result))


def _beta_setting(
    up: NDArray[np.float64], info: NDArray[np.float64], fingerprint: frozenset[str]
) -> ControllerSetting:
    spec = SPECS["abb_gravity_beta"]
    horizontal = np.hypot(up[..., 0], up[..., 2])
    if np.any(horizontal <= BETA_DEGENERATE):
        raise DegenerateGeometryError(
            "Expected `result` to have a component in the base x-z plane for Gravity Beta, got "
            "an `up` along base +y or -y (within 1e-12): no Gravity Beta expresses it."
        )
    beta, jac, represented, tangent, psi, jac_psi = beta_forward(up)
    cov = propagate(up, info, jac)
    var_psi = propagate(up, info, jac_psi)[..., 0, 0]
    with np.errstate(under="ignore"):
        std_psi = np.sqrt(var_psi)
    significant = np.where(
        np.isfinite(std_psi), psi > SIGNIFICANT_SIGMAS * std_psi, psi > UNKNOWN_TOLERANCE
    )
    if np.any(significant):
        worst = float(np.max(np.where(significant, psi, 0.0)))
        warnings.warn(
            f"Gravity Beta expresses only the part of `up` in the base x-z plane; `up` leaves it "
            f"by {math.degrees(worst):.4g} deg, more than the estimate's uncertainty. Gravity "
            "Alpha would be needed, and is not supported (its definition was not established).",
            GravdirWarning,
            stacklevel=3,
        )
    var_beta = cov[..., 0, 0]
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        weight = np.where(np.isfinite(var_beta) & (var_beta > 0), 1.0 / var_beta, 0.0)
    weight = np.where(np.isfinite(weight), weight, 0.0)
    with np.errstate(under="ignore", over="ignore"):
        new_info = weight[..., None, None] * tangent[..., :, None] * tangent[..., None, :]
    return ControllerSetting(
        up=represented,
        up_information=new_info,
        setting="abb_gravity_beta",
        vendor=spec.vendor,
        command=spec.command,
        names=spec.names,
        units=spec.units,
        values=beta,
        values_cov=cov,
        representation_error=psi,
        fingerprint=fingerprint,
    )


def up_from_setting(
    setting: Setting,
    values: ArrayLike,
    *,
    values_cov: ArrayLike | None = None,
) -> GravityDirection:
    """The `up` a controller's gravity setting expresses: the inverse of :func:`setting_from_up`.

    Parameters
    ----------
    setting : {"ur_set_gravity", "franka_gravity_earth", "epson_gravity_direction", \
"abb_gravity_beta", "gravity_vector"}
        Which setting `values` are (see :func:`setting_from_up`).
    values : array_like, shape (..., k)
        The setting as read from the controller, in its own units: k = 3 for the vector
        settings (any non-zero vector; only its direction matters); Gravity Beta in radians,
        shape (...) or (..., 1).
    values_cov : array_like, shape (..., k, k), optional
        Covariance of `values` in their units squared, if known (for Gravity Beta its variance,
        shape (...) or (..., 1, 1)). It must give `up` a positive
        variance in every tangent direction it determines. Without it the uncertainty is
        unknown: the information of `up` is zero.

    Returns
    -------
    GravityDirection
        `up` in the controller's base frame (`frame` names it), with its information.

    Raises
    ------
    ValueError
        If `setting` is not one of the options; `values` is not finite, of the wrong last
        dimension or a zero vector; a Gravity Beta exceeds one turn (2 pi: degrees?);
        `values_cov` has the wrong shape, is not finite, or gives `up` a zero variance (or an
        information beyond the float range).

    Notes
    -----
    Vector settings: ``up = s d / |d|`` (``s = +1`` for UR, ``-1`` otherwise); its tangent
    coordinates move by ``B δd / |d|`` (``B`` the tangent basis), so the tangent covariance is
    ``B C_d Bᵀ / |d|²``. Gravity Beta: ``up = (-sin b, 0, cos b)``, whose only tangent
    direction is ``(-cos b, 0, -sin b)`` with variance ``var(b)``: Gravity Beta says nothing
    about the base y direction, whose information is zero. Singular sets: none for the vector
    settings (a zero vector is refused); Gravity Beta wraps at ±pi (both give `up` = -z).

    References
    ----------
    See :func:`setting_from_up` and docs/controllers.md.

    Examples
    --------
    The setting UR's installation writes for a floor mount, and ABB's suspended robot:

    >>> up_from_setting("ur_set_gravity", [0.0, 0.0, 9.82]).up
    array([0., 0., 1.])
    >>> up_from_setting("abb_gravity_beta", np.pi).up.round(12) + 0.0
    array([ 0.,  0., -1.])
    """
    key = check_option(setting, "setting", SETTINGS)
    spec = SPECS[key]
    k = spec.size
    v = check_array(values, "values")
    if k == 1 and (v.ndim == 0 or v.shape[-1] != 1):
        v = v[..., None]
    if v.ndim == 0 or v.shape[-1] != k:
        raise ValueError(
            f"Expected `values` to have shape (..., {k}) for {key!r}, "
            f"got {describe_shape(v.shape)}."
        )
    cov = None
    if values_cov is not None:
        cov = check_array(values_cov, "values_cov")
        if k == 1 and (cov.ndim < 2 or cov.shape[-2:] != (1, 1)):
            cov = cov[..., None, None]  # variances of Gravity Beta, shape (...)
        cov = check_array(cov, "values_cov", tail=(k, k))
        batch = check_same_shape(values_cov=cov[..., 0, 0], values=v[..., 0])  # the leading axes
        v = np.broadcast_to(v, (*batch, k))
        cov = np.broadcast_to(cov, (*batch, k, k))
        scale = float(np.max(np.abs(cov))) if cov.size else 0.0
        asym = float(np.max(np.abs(cov - np.swapaxes(cov, -1, -2)))) if cov.size else 0.0
        if asym > 1e-9 * scale:
            raise ValueError("Expected `values_cov` to be symmetric, got an asymmetric matrix.")
    if k == 1:
        return _up_from_beta(v[..., 0], None if cov is None else cov[..., 0, 0])
    d = check_unit_vector(v, "values", normalize=True)
    up = spec.sign * d
    info = np.zeros((*up.shape[:-1], 3, 3))
    if cov is not None:
        length = norm(v)
        for index in np.ndindex(up.shape[:-1]):
            b = tangent_basis(up[index])
            with np.errstate(under="ignore", over="ignore"):
                t_cov = (b @ cov[index] @ b.T) / float(length[index]) / float(length[index])
            info[index] = information_from_tangent_cov(up[index], t_cov, "values_cov")
    return GravityDirection(up=up, up_information=info, frame=spec.frame)


def _up_from_beta(beta: NDArray[np.float64], var: NDArray[np.float64] | None) -> GravityDirection:
    worst = float(np.max(np.abs(beta))) if beta.size else 0.0
    if worst > BETA_MAX:
        raise ValueError(
            f"Expected `values` (Gravity Beta) in radians, at most 2 pi, got {worst:.6g} rad "
            f"({math.degrees(worst):.6g}°): degrees?"
        )
    up, tangent = beta_inverse(beta)
    info = np.zeros((*beta.shape, 3, 3))
    if var is not None:
        if np.any(var <= 0):
            raise ValueError(
                "Expected `values_cov` to be a positive variance of Gravity Beta, got zero or "
                "less (an exactly known setting); pass None for an unknown uncertainty."
            )
        with np.errstate(over="ignore", under="ignore"):
            weight = 1.0 / var
        if not np.all(np.isfinite(weight)):
            raise ValueError(
                "Expected `values_cov` to be representable: its inverse (the information of "
                "`up`) overflows the float range."
            )
        with np.errstate(under="ignore", over="ignore"):
            info = weight[..., None, None] * tangent[..., :, None] * tangent[..., None, :]
    return GravityDirection(up=up, up_information=info, frame=SPECS["abb_gravity_beta"].frame)
