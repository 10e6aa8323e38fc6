"""The sweep model: validated records of fitted sweeps, their kinematics and the mass model."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    check_array,
    check_count,
    check_per_joint,
    check_positive,
    check_radians,
    check_scalar,
    check_unit_vector,
    check_vectors,
    describe_shape,
    matrix_if_rotation,
    nearest_rotation,
    norm,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.errors import InsufficientDataError
from gravdir.kinematics import SerialChain, link_frames
from gravdir.sweep import SweepFit

__all__ = ["JointSweep", "joint_sweep_from_chain", "moment_from_mass_model"]

# Tolerance on unit axes and rotation matrices: values computed in float64 meet it to ~1e-12, and
# it still rejects an axis given in the wrong units or a matrix that is not a rotation.
_ATOL = 1e-6

# Two base-frame joint axes count as parallel when |a_i x a_j| is below this. Axes that come from
# kinematics in float64 are parallel to ~1e-15; 1e-6 rad is far below any sweep plan anyone
# would choose on purpose and far above rounding.
_PARALLEL_TOL = 1e-6

# Relative floor on the standard deviation of the (alpha, beta) pairs: a noise-free fit reports a
# covariance at rounding level (or exactly zero), which cannot be inverted. Adding
# (1e-12 * largest amplitude)^2 to every variance leaves any real measurement untouched (its
# relative noise is many orders above 1e-12) and makes noise-free data weighted uniformly.
_COVARIANCE_FLOOR = 1e-12

# The reduced Fisher information of `up` counts as singular when its smallest eigenvalue is below
# this fraction of the largest eigenvalue of the information `up` would have with every w known.
# A one-parameter family of exact solutions gives ~1e-16 (rounding); any usable plan gives
# more than 1e-6.
_RCOND = 1e-10

# Cosine between the chosen sign's deciding vectors below which the sign is flagged as marginal:
# cos(87 degrees) ~ 0.05.
_SIGN_TOL = 0.05

# The sign is also flagged when the sign rule's deciding quantity is within this many of its
# standard deviations of zero: a Gaussian error then flips it with probability above 0.13%.
_SIGN_NSIGMA = 3.0


# The largest joint index (0-based) accepted: no serial arm has a thousand joints (the synthetic
# ones have at most 100), so a larger integer is a mistake, refused rather than carried into a
# result.
MAX_JOINT_INDEX = 999


def _joint_index(joint: object, name: str = "joint") -> int:
    return check_count(joint, name, minimum=0, maximum=MAX_JOINT_INDEX)


def _joint_angle(x: ArrayLike, name: str) -> float:
    """A finite joint position within ±4π rad; beyond that, a "degrees?" error."""
    return float(check_radians(check_scalar(x, name), name))


def _check_bounded(
    x: float, name: str, high: float, *, allow_zero: bool = False, low: float = 0.0
) -> float:
    """A finite number in ``(low, high]`` (``[low, high]`` with `allow_zero`)."""
    value = check_positive(x, name, allow_zero=allow_zero or low > 0)
    if value < low or value > high:
        want = (
            f"a positive number of at most {high:g}"
            if low == 0.0 and not allow_zero
            else f"a number from {low:g} to {high:g}"
        )
        raise ValueError(f"Expected `{name}` to be {want}, got {x!r}.")
    return value


def _rotation(x: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = check_array(matrix_if_rotation(x), name, tail=(3, 3))
    if arr.shape != (3, 3):
        raise ValueError(
            f"Expected `{name}` to have shape (3, 3), got {describe_shape(arr.shape)}."
        )
    # The nearest exact rotation, so that rounding in R does not leak into `up`; a new array,
    # so the caller's matrix is not aliased.
    return nearest_rotation(arr, name, atol=_ATOL)


def _axis(x: ArrayLike, name: str) -> NDArray[np.float64]:
    v = check_vectors(x, name)
    if v.shape != (3,):
        raise ValueError(f"Expected `{name}` to have shape (3,), got {describe_shape(v.shape)}.")
    if float(np.max(np.abs(v))) > 1.0 + _ATOL:  # not a unit vector; squaring could overflow
        raise ValueError(
            f"Expected `{name}` to have unit norm (within {_ATOL:g}), got an entry of "
            f"{float(np.max(np.abs(v))):.6g}."
        )
    with np.errstate(under="ignore"):
        a = check_unit_vector(v, name, atol=_ATOL)
        out: NDArray[np.float64] = a / np.linalg.norm(a)
    return out


def _norm(x: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """Euclidean norm along `axis` without overflow; underflow of small ratios rounds to zero."""
    with np.errstate(under="ignore"):
        return norm(x, axis=axis)


def _group_key(group: Hashable | None, joint: int) -> Hashable:
    """The group key of a sweep: `group`, or `joint` when it is None; must be hashable."""
    key = joint if group is None else group
    try:
        hash(key)
    except TypeError:
        raise ValueError(f"Expected `group` to be hashable, got {type(key).__name__}.") from None
    # NaN is not equal to itself, so it cannot key a group; an infinite key is a number gone wrong.
    if isinstance(key, float | np.floating) and not np.isfinite(key):
        raise ValueError(f"Expected `group` to be a key other than NaN or infinity, got {key!r}.")
    return key


_T = TypeVar("_T")


def _check_sweep_list(sweeps: object, kind: type[_T]) -> list[_T]:
    """`sweeps` as a list of at least two `kind` records (JointSweep or PlannedSweep)."""
    name = kind.__name__
    if isinstance(sweeps, kind) or not isinstance(sweeps, Sequence):
        raise ValueError(
            f"Expected `sweeps` to be a sequence of {name}, got {type(sweeps).__name__}."
        )
    items = list(sweeps)
    for i, s in enumerate(items):
        if not isinstance(s, kind):
            raise ValueError(f"Expected `sweeps[{i}]` to be a {name}, got {type(s).__name__}.")
    if len(items) < 2:
        raise InsufficientDataError(
            f"Expected at least 2 sweeps in `sweeps`, got {len(items)}: a single sweep's "
            "moment absorbs all it says about `up`."
        )
    return items


def _sweep_rotation_matrix(q_ref: float) -> NDArray[np.float64]:
    """T with (alpha, beta) = T (a_fit, b_fit): a sin q + b cos q at q = q_ref + delta."""
    s, c = np.sin(q_ref), np.cos(q_ref)
    return np.array([[s, c], [c, -s]])


def _check_fit(fit: object) -> SweepFit:
    """`fit` if it is the fit of one sweep with finite sin/cos coefficients and covariance."""
    if not isinstance(fit, SweepFit):
        raise ValueError(f"Expected `fit` to be a SweepFit, got {type(fit).__name__}.")
    if np.ndim(fit.amplitude) != 0:
        raise ValueError(
            "Expected `fit` to be the fit of a single sweep (batch shape ()), got batch "
            f"shape {describe_shape(np.shape(fit.amplitude))}."
        )
    if fit.column_names[1:3] != ("sin", "cos"):
        raise ValueError(
            "Expected `fit.column_names[1:3]` to be ('sin', 'cos'), got "
            f"{fit.column_names[1:3]!r}."
        )
    cov = np.asarray(fit.covariance[1:3, 1:3], dtype=np.float64)
    if not np.isfinite(fit.coefficients[1:3]).all():
        raise ValueError("Expected `fit` to have finite sin/cos coefficients, got NaN or inf.")
    if not np.isfinite(cov).all():
        raise ValueError(
            "Expected `fit` to have a finite sin/cos covariance, got NaN or inf: the fit's "
            "uncertainty is unknown (torques beyond the float range? fit them in other units)."
        )
    eig = np.linalg.eigvalsh(0.5 * (cov + cov.T))
    # Rounding leaves eigenvalues of a few 1e-16 of the largest below zero; more is no covariance.
    if eig[0] < -1e-9 * max(float(eig[1]), 0.0) or eig[1] < 0.0:
        raise ValueError(
            "Expected `fit` to have a positive semi-definite sin/cos covariance, got "
            f"eigenvalues {eig[0]:.3g} and {eig[1]:.3g}."
        )
    residual = float(np.max(np.asarray(fit.residual_rms, dtype=np.float64)))
    if not np.any(cov) and residual > 0.0:
        raise ValueError(
            f"Expected `fit` to have a non-zero sin/cos covariance where its residual is not "
            f"(residual_rms {residual:.3g}), got zeros: the covariance underflowed (torques "
            "near the bottom of the float range? fit them in other units)."
        )
    return fit


@dataclass(frozen=True, eq=False, repr=False)
class JointSweep(Result):
    """One fitted sweep with the kinematics the general estimator needs.

    Parameters
    ----------
    joint : int
        Index of the swept joint (0-based: ``0`` is J1), at most 999.
    rotation : array_like, shape (3, 3), or scipy.spatial.transform.Rotation
        Orientation of the swept joint's link frame in the base frame at `q_ref` (columns: the
        link frame's axes in base coordinates). Validated as a proper rotation within 1e-6 and
        replaced by the nearest exact rotation.
    joint_axis : array_like, shape (3,)
        The joint's axis in its link frame, unit within 1e-6 (e.g.
        :attr:`gravdir.kinematics.SerialChain.axes_in_link`).
    q_ref : float
        Joint angle at which `rotation` was evaluated, rad, in the angle convention of the fit
        (the same ``q`` that was passed to :func:`~gravdir.sweep.fit_sweep`); within ±4π.
    fit : SweepFit
        The fit of this single sweep (batch shape ``()``, e.g. ``batched_fit[i]``), with ``sin``
        and ``cos`` columns, a finite positive semi-definite covariance of them, and that
        covariance non-zero where the residual is (a zero covariance beside a non-zero residual
        has underflowed).
    group : hashable, optional
        Key of the sweep's distal posture. Sweeps with equal keys share one moment :math:`w`:
        they must sweep the same joint with every joint distal to it at the same angles. Default
        ``joint``: all sweeps of a joint are taken to have the same distal posture. Give
        distinct keys (e.g. ``(joint, "elbow up")``) when a joint is swept in several distal
        postures. NaN and infinite numbers are refused as keys.

    Raises
    ------
    ValueError
        If `joint` is not an int from 0 to 999, `rotation` is not a 3x3 rotation, `joint_axis` is
        not a unit 3-vector, `q_ref` is not a finite real number within ±4π ("degrees?" beyond),
        `fit` is not a single :class:`~gravdir.sweep.SweepFit` with finite ``sin``/``cos``
        coefficients and a finite, positive semi-definite, not underflowed covariance, or
        `group` is not hashable or is NaN or infinite. The arrays are copied.

    Notes
    -----
    The fit's gravity part :math:`a \\sin q + b \\cos q` becomes, at :math:`q = q_{ref} +
    \\delta`, :math:`\\alpha \\cos\\delta + \\beta\\sin\\delta` with

    .. math:: \\begin{pmatrix}\\alpha\\\\ \\beta\\end{pmatrix}
        = \\begin{pmatrix}\\sin q_{ref} & \\cos q_{ref}\\\\ \\cos q_{ref} & -\\sin q_{ref}
        \\end{pmatrix} \\begin{pmatrix} a\\\\ b\\end{pmatrix},

    exactly; the covariance transforms with the same matrix.

    References
    ----------
    US 11,446,825 B2, FIG. 2 (blocks 202-208: a joint rotated with the others locked and its
    torque recorded) and FIGS. 4A-4B, eqs. (2) and (12) (the gravity sinusoid of a sweep). The
    record generalises the patent's J1 and J2 sweeps to any joint of any serial arm.

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.sweep import fit_sweep
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> fit = fit_sweep(q, velocity=v, torque=3.0 * np.cos(q) + 0.1 * np.sign(v))
    >>> sweep = JointSweep(1, np.eye(3), [0, 0, 1], 0.0, fit)
    >>> sweep.alpha_beta.round(6) + 0.0
    array([3., 0.])
    >>> sweep.group
    1
    """

    _units = {
        "rotation": "", "joint_axis": "", "q_ref": "rad",
    }

    joint: int
    rotation: NDArray[np.float64]
    joint_axis: NDArray[np.float64]
    q_ref: float
    fit: SweepFit
    group: Hashable | None = None

    def __post_init__(self) -> None:
        joint = _joint_index(self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "rotation", _rotation(self.rotation, "rotation"))
        object.__setattr__(self, "joint_axis", _axis(self.joint_axis, "joint_axis"))
        object.__setattr__(self, "q_ref", _joint_angle(self.q_ref, "q_ref"))
        _check_fit(self.fit)
        object.__setattr__(self, "group", _group_key(self.group, joint))
        super().__post_init__()

    @property
    def alpha_beta(self) -> NDArray[np.float64]:
        """:math:`(\\alpha, \\beta)`, shape (2,): the gravity torque is
        :math:`\\alpha\\cos\\delta + \\beta\\sin\\delta`."""
        out: NDArray[np.float64] = _sweep_rotation_matrix(self.q_ref) @ self.fit.coefficients[1:3]
        return out

    @property
    def alpha_beta_cov(self) -> NDArray[np.float64]:
        """Covariance of :attr:`alpha_beta`, shape (2, 2), in torque units squared."""
        t = _sweep_rotation_matrix(self.q_ref)
        out: NDArray[np.float64] = t @ self.fit.covariance[1:3, 1:3] @ t.T
        return out

    def __repr__(self) -> str:
        return (
            f"JointSweep(joint={self.joint}, group={self.group!r}, "
            f"q_ref={np.degrees(self.q_ref):.3f}°, amplitude={float(self.fit.amplitude):.6g}, "
            f"phase={np.degrees(float(self.fit.phase)):.4f}°)"
        )


def joint_sweep_from_chain(
    chain: SerialChain,
    q: ArrayLike,
    joint: int,
    fit: SweepFit,
    *,
    group: Hashable | None = None,
) -> JointSweep:
    """The :class:`JointSweep` of a fitted sweep of `joint`, kinematics from `chain`.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics (:mod:`gravdir.kinematics`).
    q : array_like, shape (n,)
        Joint angles at which the sweep was recorded, rad, each within ±4π; entry `joint` is
        the reference angle ``q_ref`` (any angle of the sweep will do, e.g. its start).
    joint : int
        The swept joint, 0-based.
    fit : SweepFit
        The fit of the sweep (batch shape ``()``).
    group : hashable, optional
        As in :class:`JointSweep` (default: `joint`).

    Returns
    -------
    JointSweep
        With ``rotation`` = link `joint`'s orientation at `q` and
        ``joint_axis = chain.axes_in_link[joint]``.

    Raises
    ------
    ValueError
        If `q` does not match the chain or holds an angle beyond ±4π ("degrees?"),
        `joint` is out of range, or as :class:`JointSweep`.

    References
    ----------
    US 11,446,825 B2, FIG. 2 (blocks 202-208). The link orientations follow
    :func:`gravdir.kinematics.link_frames`.

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.sweep import fit_sweep
    >>> chain = chain_from_dh([0.1, 0], [0, 0], [0, 0.5], [np.pi / 2, 0])
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> fit = fit_sweep(q, velocity=v, torque=3.0 * np.cos(q) + 0.1 * np.sign(v))
    >>> joint_sweep_from_chain(chain, [0.3, 0.0], 1, fit).joint_axis
    array([0., 0., 1.])
    """
    joint = _joint_index(joint)
    config, rot, axes = _chain_rotation(chain, q, joint)
    return JointSweep(joint, rot, axes, float(config[joint]), fit, group)


def _check_configuration(chain: object, q: ArrayLike) -> NDArray[np.float64]:
    """`q` (one configuration) as a float array of shape (n_joints,) of the SerialChain `chain`."""
    if not isinstance(chain, SerialChain):
        raise ValueError(f"Expected `chain` to be a SerialChain, got {type(chain).__name__}.")
    config = check_per_joint(q, "q", chain.n_joints, scalar=False, sign="any")
    check_radians(config, "q")
    return config


def _chain_rotation(
    chain: SerialChain, q: ArrayLike, joint: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The validated configuration `q` (a copy), link `joint`'s rotation and its axis in the
    link."""
    config = _check_configuration(chain, q)
    if joint >= chain.n_joints:
        raise ValueError(f"Expected `joint` in [0, {chain.n_joints - 1}], got {joint}.")
    with np.errstate(under="ignore"):  # a tiny angle's rounding is harmless
        frames = link_frames(chain, config)
    return config, frames.rotations[joint], chain.axes_in_link[joint]


def moment_from_mass_model(
    chain: SerialChain,
    q: ArrayLike,
    joint: int,
    masses: ArrayLike,
    coms: ArrayLike,
    *,
    gravity: float = STANDARD_GRAVITY,
) -> NDArray[np.float64]:
    """The moment :math:`w = g\\,(a \\times m)` of `joint` from a mass model, link frame.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics.
    q : array_like, shape (n,)
        Joint angles, rad, each within ±4π (only the joints distal to `joint` matter).
    joint : int
        The joint, 0-based.
    masses : array_like, shape (n,)
        Mass of each link, kg (nominal values are enough for planning).
    coms : array_like, shape (n, 3)
        Centre of mass of each link in that link's own frame, m.
    gravity : float, optional
        Gravitational acceleration :math:`g`, m/s² (default ``STANDARD_GRAVITY``, 9.80665).

    Returns
    -------
    ndarray, shape (3,)
        :math:`w = g\\,(a \\times m)` with :math:`m = \\sum_{k \\ge j} m_k R_j^\\top
        (c_k - p_j)`, in N·m; a sweep with torque gain :math:`\\kappa` measures
        :math:`\\kappa w`.

    Raises
    ------
    ValueError
        If a shape does not match the chain, an angle of `q` is beyond ±4π
        ("degrees?"), a mass is negative, `gravity` is not positive, or the moment overflows.

    References
    ----------
    The gravity torque of a joint is that of the first moment of every link distal to it (the
    lumped point mass of US 11,446,825 B2, FIG. 5, eqs. (3) and (13), summed link by link).

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> chain = chain_from_dh([0.0], [0.0], [1.0], [0.0])
    >>> moment_from_mass_model(chain, [0.0], 0, [2.0], [[0.0, 0.0, 0.0]]).round(6) + 0.0
    array([ 0.    , 19.6133,  0.    ])
    """
    joint = _joint_index(joint)
    config, rot, a = _chain_rotation(chain, q, joint)
    n = chain.n_joints
    m_arr = check_per_joint(masses, "masses", n, scalar=False, sign="non-negative")
    c_arr = check_array(coms, "coms")
    if c_arr.shape != (n, 3):
        raise ValueError(
            f"Expected `coms` to have shape ({n}, 3), got {describe_shape(c_arr.shape)}."
        )
    g = check_positive(gravity, "gravity")
    # Underflow (tiny masses or lever arms) rounds to zero harmlessly; overflow is refused below.
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        frames = link_frames(chain, config)
        centres = np.einsum("kij,kj->ki", frames.rotations, c_arr) + frames.origins
        lever = centres[joint:] - frames.joint_points[joint]
        first_moment = rot.T @ np.einsum("k,ki->i", m_arr[joint:], lever)
        out: NDArray[np.float64] = g * np.cross(a, first_moment)
    if not np.isfinite(out).all():
        raise ValueError(
            "Expected `masses`, `coms` and `gravity` to give a finite moment, got an overflow: "
            "check their units (kg, m, m/s²)."
        )
    return out
