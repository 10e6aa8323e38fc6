"""Each controller's gravity setting: its definition, its Jacobian and its inverse.

Every convention here is taken from the vendor's own document (cited in docs/controllers.md):

==========================  =======================  ==================================
setting                     values                   as a function of `up`
==========================  =======================  ==================================
``ur_set_gravity``          ``d`` (m/s²)             ``d = g up``
``franka_gravity_earth``    ``gravity_earth`` (m/s²) ``-g up``
``epson_gravity_direction`` unit vector              ``-up``
``abb_gravity_beta``        Gravity Beta (rad)       ``up = Ry(beta)ᵀ z = (-sin b, 0, cos b)``
``gravity_vector``          gravity (m/s²)           ``-g up``
==========================  =======================  ==================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = ["SETTINGS", "Setting", "Spec", "SPECS"]

#: The settings :func:`setting_from_up` writes and :func:`up_from_setting` reads.
Setting = Literal[
    "ur_set_gravity",
    "franka_gravity_earth",
    "epson_gravity_direction",
    "abb_gravity_beta",
    "gravity_vector",
]

# Gravity Beta alone fixes only the part of `up` in the base x-z plane; where `up` lies within
# this of base +-y (sin of the angle to the plane's normal), beta is decided by rounding noise.
BETA_DEGENERATE = 1e-12
# Largest |Gravity Beta| accepted as radians: one full turn. ABB's examples range from 0 (floor)
# to pi (suspended); beyond two pi the number is degrees.
BETA_MAX = 2.0 * math.pi


@dataclass(frozen=True)
class Spec:
    """How one setting is written: vendor, command, value names and units, and its map."""

    vendor: str
    command: str
    frame: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    # For vector settings: values = scale * up, scale = sign * (g if scaled else 1).
    sign: float = 0.0
    scaled: bool = False

    @property
    def size(self) -> int:
        return len(self.names)

    def line(self, values: NDArray[np.float64]) -> str:
        """The text typed into the controller for one setting (values (k,))."""
        v = [f"{x + 0.0:.6f}" for x in np.asarray(values, dtype=np.float64)]
        if self.command == "set_gravity":
            return f"set_gravity([{', '.join(v)}])"
        if self.command == "gravity_earth":
            return f"std::array<double, 3> gravity_earth{{{{{', '.join(v)}}}}};"
        if self.command == "F_GravityDirection":
            return f"F_GravityDirection {', '.join(v)}"
        if self.command == "Gravity Beta":
            return f"Gravity Beta = {v[0]}"
        return f"[{', '.join(v)}]"


SPECS: dict[str, Spec] = {
    "ur_set_gravity": Spec(
        vendor="Universal Robots",
        command="set_gravity",
        frame="UR base",
        names=("x", "y", "z"),
        units=("m/s^2",) * 3,
        sign=1.0,
        scaled=True,
    ),
    "franka_gravity_earth": Spec(
        vendor="Franka Robotics",
        command="gravity_earth",
        frame="Franka base (O)",
        names=("x", "y", "z"),
        units=("m/s^2",) * 3,
        sign=-1.0,
        scaled=True,
    ),
    "epson_gravity_direction": Spec(
        vendor="Epson",
        command="F_GravityDirection",
        frame="Epson base",
        names=("x", "y", "z"),
        units=("1",) * 3,
        sign=-1.0,
        scaled=False,
    ),
    "abb_gravity_beta": Spec(
        vendor="ABB",
        command="Gravity Beta",
        frame="ABB base",
        names=("Gravity Beta",),
        units=("rad",),
    ),
    "gravity_vector": Spec(
        vendor="",
        command="vector",
        frame="base",
        names=("x", "y", "z"),
        units=("m/s^2",) * 3,
        sign=-1.0,
        scaled=True,
    ),
}
#: The names of the controller settings gravdir writes and reads, one per controller form.
SETTINGS: tuple[str, ...] = tuple(SPECS)


def vector_forward(
    spec: Spec, up: NDArray[np.float64], gravity: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """values = s up, Jacobian s I (s = sign, times `gravity` for scaled settings)."""
    s = spec.sign * (gravity if spec.scaled else 1.0)
    with np.errstate(under="ignore"):
        values = s * up
    jac = np.broadcast_to(s * np.eye(3), (*up.shape[:-1], 3, 3))
    return values, jac


def beta_forward(
    up: NDArray[np.float64],
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
]:
    """Gravity Beta of `up` (projected on the base x-z plane) and what goes with it.

    Returns beta (..., 1), its Jacobian (..., 1, 3), the represented `up` (..., 3), its unit
    tangent ``d up / d beta`` (..., 3), the angle between `up` and the x-z plane (...) and the
    Jacobian of that angle (..., 1, 3). `up` within `BETA_DEGENERATE` of base +-y is the
    caller's to refuse.

    ``beta = atan2(-u_x, u_z)``; with ``r = hypot(u_x, u_z)``,
    ``d beta / d u = (-u_z, 0, u_x) / r²``; the angle to the plane ``psi = atan2(|u_y|, r)`` has
    ``d psi / d u = sign(u_y) (-u_y u_x / r, r, -u_y u_z / r)`` (for a unit `up`).
    """
    ux, uy, uz = up[..., 0], up[..., 1], up[..., 2]
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        r = np.hypot(ux, uz)
        beta = np.arctan2(-ux, uz)
        beta = np.where(beta <= -np.pi, np.pi, beta)
        zero = np.zeros_like(ux)
        jac = np.stack([-uz, zero, ux], axis=-1) / (r * r)[..., None]
        represented = np.stack([-np.sin(beta), zero, np.cos(beta)], axis=-1)
        tangent = np.stack([-np.cos(beta), zero, -np.sin(beta)], axis=-1)
        psi = np.arctan2(np.abs(uy), r)
        sgn = np.where(uy < 0, -1.0, 1.0)
        jac_psi = sgn[..., None] * np.stack([-uy * ux / r, r, -uy * uz / r], axis=-1)
    return (
        beta[..., None],
        jac[..., None, :],
        represented,
        tangent,
        psi,
        jac_psi[..., None, :],
    )


def beta_inverse(beta: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """`up` of Gravity Beta values (...) and its unit tangent ``d up / d beta``.

    ABB: "The Gravity Beta is a positive rotation direction around the y-axis in the base
    coordinate system": the robot is turned by ``Ry(beta)`` from a floor mount, so gravity
    ``-z`` of the world is ``-Ry(beta)ᵀ z`` in the base frame and
    ``up = Ry(beta)ᵀ z = (-sin beta, 0, cos beta)``.
    """
    zero = np.zeros_like(beta)
    with np.errstate(under="ignore"):
        up = np.stack([-np.sin(beta), zero, np.cos(beta)], axis=-1)
        tangent = np.stack([-np.cos(beta), zero, -np.sin(beta)], axis=-1)
    return up, tangent
