"""Argument checks shared by the motion estimator and its bound."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_option,
    check_per_joint,
    check_positive,
    check_radians,
    describe_shape,
)
from gravdir._options import Friction
from gravdir._time import first_row
from gravdir.kinematics import SerialChain

# Cap on the samples of one log: 5e6 samples are 83 minutes at 1 kHz; the Gram blocks are formed
# in chunks, so the work grows linearly up to it.
MAX_SAMPLES = 5_000_000
# Default speed below which a joint's samples are left out of its own torque equation: the sign
# of the velocity (Coulomb friction) is unreliable there and a real drive sticks. 0.02 rad/s is
# about 1 deg/s, ten times the speed noise of a velocity derived from a 1 kHz encoder log.
DEFAULT_MIN_SPEED = 0.02
# Speed (rad/s) below which a joint's samples are down-weighted smoothly (a smoothstep from 0):
# a hard speed cut-off turns what the model leaves out near a reversal into a bias (the gear
# ripple is removed by its own search, so the taper can be short).
DEFAULT_SPEED_TAPER = 0.2
# Cap on the joints of a chain. An arm has 6 or 7 joints, 9 or 10 with a rail, a lift or a torso
# in the same chain; 12 leaves room for those. The base parameters solved out grow by about 7
# per joint and the work of one evaluation of the search with their square to cube, so a call
# stays within seconds up to the cap: benchmarks/motion_joints.py measured one search over a
# 400-sample log at about 1.3 s of CPU for 12 joints, three times that of a 6-joint arm.
MAX_JOINTS = 12
# The joint parameters each `friction` option fits (armature, Coulomb, viscous, offset,
# quadratic): the motion functions implement these options (not "auto": the estimator fits what
# it is told).
FRICTION_COLUMNS: dict[str, tuple[bool, bool, bool, bool, bool]] = {
    "coulomb-viscous-quadratic": (True, True, True, True, True),
    "coulomb-viscous": (True, True, True, True, False),
    "coulomb": (True, True, False, True, False),
    "none": (True, False, False, True, False),
}


def friction_mask(friction: Friction) -> NDArray[np.bool_]:
    """The joint parameters fitted under `friction`, (5,) (armature, Coulomb, viscous, offset,
    quadratic).

    Raises
    ------
    ValueError
        If `friction` is not one of the options the motion functions implement.
    """
    option = check_option(friction, "friction", tuple(FRICTION_COLUMNS))
    return np.array(FRICTION_COLUMNS[option])


def check_chain(chain: object) -> SerialChain:
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    if chain.n_joints > MAX_JOINTS:
        raise ValueError(
            f"Expected `chain` to have at most {MAX_JOINTS} joints, got {chain.n_joints}: the "
            "inertial parameters solved out grow with the joints and the work with their cube."
        )
    return chain


def check_log(
    x: ArrayLike, name: str, n: int, n_samples: int | None, *, finite: bool = True
) -> NDArray[np.float64]:
    """A log of joint samples, shape (N, n)."""
    arr = check_array(x, name, finite=False)
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(
            f"Expected `{name}` to have shape (N, {n}) (samples by joints) for a chain of {n} "
            f"joints, got {describe_shape(arr.shape)}."
        )
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(
            f"Expected `{name}` to have {n_samples} samples like `q`, got {arr.shape[0]}."
        )
    if arr.shape[0] > MAX_SAMPLES:
        raise ValueError(
            f"Expected `{name}` to hold at most {MAX_SAMPLES} samples, got {arr.shape[0]}."
        )
    refusals = [(np.isinf(arr), "an infinity")] + ([(np.isnan(arr), "NaN")] if finite else [])
    for refused, what in refusals:  # the error names the first row that holds one
        if refused.any():
            raise ValueError(
                f"Expected `{name}` to be finite, got {what} {first_row(np.any(refused, axis=1))}"
            )
    if name == "q":
        check_radians(arr, "q", allow_nan=True, rows=True)  # a NaN left here is omitted later
    return arr


def check_base_acceleration(x: ArrayLike | None, n_samples: int) -> NDArray[np.float64] | None:
    """The base's own linear acceleration, (N, 3), or None."""
    if x is None:
        return None
    arr = check_array(x, "base_acceleration", tail=(3,))
    if arr.ndim == 1:
        return np.broadcast_to(arr, (n_samples, 3)).copy()
    if arr.shape != (n_samples, 3):
        raise ValueError(
            f"Expected `base_acceleration` to have shape (3,) or ({n_samples}, 3), got "
            f"{describe_shape(arr.shape)}."
        )
    return arr


def check_joint_parameters(
    x: ArrayLike, n: int, name: str = "joint_parameters"
) -> NDArray[np.float64]:
    """Joint parameters (n, 5): armature, Coulomb, viscous, offset and quadratic friction per
    joint; (n, 4), without the quadratic term, is read with it zero."""
    arr = check_array(x, name)
    if arr.shape == (n, 4):
        return np.concatenate([arr, np.zeros((n, 1))], axis=1)
    if arr.shape != (n, 5):
        raise ValueError(
            f"Expected `{name}` to have shape ({n}, 5) (armature, Coulomb, viscous, offset, "
            f"quadratic friction per joint) or ({n}, 4) (without the quadratic term), got "
            f"{describe_shape(arr.shape)}."
        )
    return arr


def sample_weights(
    velocity: NDArray[np.float64],
    torque: NDArray[np.float64] | None,
    min_speed: float,
    torque_limits: ArrayLike | None,
    weights: ArrayLike | None,
    speed_taper: float = 0.0,
) -> NDArray[np.float64]:
    """Weight (N, n) of every joint's torque equation at every sample (0 leaves it out).

    Below `speed_taper` a sample's weight is the smoothstep ``3 x^2 - 2 x^3`` of
    ``x = |velocity| / speed_taper``; below `min_speed` it is 0.
    """
    n_samples, n = velocity.shape
    speed = check_positive(min_speed, "min_speed", allow_zero=True)
    taper = check_positive(speed_taper, "speed_taper", allow_zero=True)
    w = np.ones((n_samples, n))
    if taper > 0:
        with np.errstate(under="ignore"):  # a tiny speed's weight rounds to zero
            x = np.clip(np.abs(velocity) / taper, 0.0, 1.0)
            w = x * x * (3.0 - 2.0 * x)
    if speed > 0:
        w[np.abs(velocity) < speed] = 0.0
    if torque_limits is not None:
        limit = check_per_joint(torque_limits, "torque_limits", n)
        if torque is not None:
            w[np.abs(torque) >= limit] = 0.0
    if weights is not None:
        user = check_array(weights, "weights")
        if user.shape not in ((n_samples,), (n_samples, n)):
            raise ValueError(
                f"Expected `weights` to have shape ({n_samples},) or ({n_samples}, {n}), got "
                f"{describe_shape(user.shape)}."
            )
        if (user < 0).any() or (user > 1).any():
            raise ValueError("Expected `weights` in [0, 1], got values outside.")
        w *= user[:, None] if user.ndim == 1 else user
    return w
