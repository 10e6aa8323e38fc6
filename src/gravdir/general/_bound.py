"""The Cramér-Rao bound of `up` for sweeps that have not been recorded yet."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    MAX_JOINT_ANGLE,
    check_angle_span,
    check_array,
    check_direction,
    check_option,
    check_positive,
    describe_shape,
)
from gravdir._options import Friction, LoadFriction
from gravdir._results import Result, UpResult
from gravdir._sphere import tangent_basis, up_information_from_tangent
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.general._bilinear import (
    _Groups,
    _make_problem,
    _model_matrix,
    _sweep_groups,
    _up_information,
)
from gravdir.general._model import (
    _PARALLEL_TOL,
    _RCOND,
    _axis,
    _check_bounded,
    _check_sweep_list,
    _group_key,
    _joint_angle,
    _joint_index,
    _norm,
    _rotation,
    _sweep_rotation_matrix,
)

__all__ = ["PlannedSweep", "UpBound", "crlb_up", "sweep_samples"]

# Largest and smallest accepted ratio of the largest moment to the smallest noise level of a
# set of planned sweeps: the Fisher information scales as its square, and 1e±100 keeps it, and
# its inverse, far inside the float range. Real torque sensors are at 1e1 to 1e5.
_MAX_SNR = 1e100
_MIN_SNR = 1e-100

# The largest number of samples of one planned sweep (both passes): about 160 MB for `q` and
# `velocity`, far beyond a recorded sweep (a 180° sweep at 0.05 rad/s and 1 kHz has about
# 126 000 samples).
MAX_SWEEP_SAMPLES = 10_000_000

# The options of `friction` and `load_friction` the bound implements: the fits it is for.
_FRICTION_OPTIONS: tuple[Friction, ...] = ("auto", "none")
_LOAD_FRICTION_OPTIONS: tuple[LoadFriction, ...] = ("none", "abs")


def sweep_samples(
    center: float,
    arc: float,
    speed: float,
    sample_rate: float,
    *,
    max_samples: int = 10_000_000,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Joint angles and velocities of a planned constant-speed sweep, forward then back.

    Parameters
    ----------
    center : float
        Middle of the swept arc, rad, within ±4π.
    arc : float
        Length of the arc, rad, positive and at most 4π (two turns; beyond, "degrees?").
    speed : float
        Joint speed, rad/s, positive.
    sample_rate : float
        Samples per second, Hz, positive.
    max_samples : int, optional
        Largest accepted length ``m`` of the result (both passes), default 10 000 000: about
        160 MB for `q` and `velocity` together, far beyond a recorded sweep (a 180° sweep at
        0.05 rad/s and 1 kHz has about 126 000 samples), so larger requests are taken as a
        mistake in units rather than allocated. It can be lowered, not raised (8 to
        10 000 000).

    Returns
    -------
    q : ndarray, shape (m,)
        From ``center - arc/2`` to ``center + arc/2`` and back.
    velocity : ndarray, shape (m,)
        ``+speed`` on the way out, ``-speed`` on the way back.

    Raises
    ------
    ValueError
        If an argument is not a finite real number or not positive where required, `center`
        is beyond ±4π or `arc` beyond 4π ("degrees?"), or the sweep has fewer than 4 samples
        per pass or more than `max_samples` in all.

    References
    ----------
    US 11,446,825 B2, FIGS. 3A-3B: a joint rotated forward and backward over a predetermined
    range (e.g. 90°, 120°, 150° or 180°) at a substantially constant speed.

    Examples
    --------
    >>> import numpy as np
    >>> q, v = sweep_samples(0.0, np.pi / 2, 0.5, 100.0)
    >>> q.shape, float(q.max() - q.min()).__round__(6), float(v.sum())
    ((630,), 1.570796, 0.0)
    """
    c = _joint_angle(center, "center")
    arc = check_positive(arc, "arc")
    speed = check_positive(speed, "speed")
    rate = check_positive(sample_rate, "sample_rate")
    if (
        isinstance(max_samples, bool)
        or not isinstance(max_samples, int | np.integer)
        or not 8 <= max_samples <= MAX_SWEEP_SAMPLES
    ):
        raise ValueError(
            f"Expected `max_samples` to be an int >= 8 and at most {MAX_SWEEP_SAMPLES}, got "
            f"{max_samples!r}."
        )
    check_angle_span(arc, "arc")
    m = _samples_per_pass(arc, speed, rate, int(max_samples), "arc")
    out = np.linspace(c - arc / 2, c + arc / 2, m)
    q = np.concatenate([out, out[::-1]])
    velocity = np.concatenate([np.full(m, speed), np.full(m, -speed)])
    return q, velocity


def _samples_per_pass(arc: float, speed: float, rate: float, max_samples: int, name: str) -> int:
    """Samples of one pass of a sweep over `arc` (named `name`): at least 4, both passes at
    most `max_samples`."""
    with np.errstate(over="ignore", under="ignore"):
        per_pass = np.floor(arc / speed * rate) + 1.0
    if not 2.0 * per_pass <= max_samples:
        raise ValueError(
            f"Expected at most `max_samples` = {int(max_samples)} samples "
            f"(2 * (`{name}` / `speed` * `sample_rate` + 1)), got {2.0 * per_pass:.3g} from "
            f"`{name}` = {arc:g}, `speed` = {speed:g}, `sample_rate` = {rate:g}."
        )
    m = int(per_pass)
    if m < 4:
        raise ValueError(
            f"Expected at least 4 samples per pass (`{name}` / `speed` * `sample_rate` >= 3), "
            f"got {m} from `{name}` = {arc:g}, `speed` = {speed:g}, `sample_rate` = {rate:g}."
        )
    return m


@dataclass(frozen=True, eq=False, repr=False)
class PlannedSweep(Result):
    """A sweep that has not been recorded yet, for :func:`crlb_up` and :func:`plan_sweeps`.

    Parameters
    ----------
    joint : int
        Index of the joint to sweep (0-based), at most 999.
    rotation : array_like, shape (3, 3), or scipy.spatial.transform.Rotation
        Orientation of the joint's link frame in the base frame at `q_ref`.
    joint_axis : array_like, shape (3,)
        The joint's axis in its link frame, unit.
    q_ref : float
        Joint angle at which `rotation` is given, rad, within ±4π.
    q, velocity : array_like, shape (m,)
        The planned samples (e.g. from :func:`sweep_samples`), rad and rad/s, ``m >= 8``.
        `q` must move, within 4π of `q_ref` and over a span of at most 4π; `velocity` must
        not be all zero. Copied.
    moment : array_like, shape (3,)
        A rough :math:`w = \\kappa g (a \\times m)` of the joint in its link frame, in torque
        units (e.g. from :func:`moment_from_mass_model`); its component along `joint_axis` is
        removed. Sweeps of one group must give the same moment.
    noise_std : float
        Standard deviation of the white torque noise of the joint, positive.
    group : hashable, optional
        As in :class:`JointSweep` (default `joint`).

    Raises
    ------
    ValueError
        If a field has the wrong type, shape or value, or an angle is beyond the limits above
        ("degrees?"). The arrays are copied.

    References
    ----------
    US 11,446,825 B2, FIGS. 3A-3B (forward and backward passes at constant speed over a
    predetermined range).

    Examples
    --------
    >>> import numpy as np
    >>> q, v = sweep_samples(0.0, np.pi / 2, 0.5, 100.0)
    >>> PlannedSweep(1, np.eye(3), [0, 0, 1], 0.0, q, v, [2.0, 0, 0], 0.01)
    PlannedSweep(joint=1, group=1, q_ref=0.000°, arc=90.0°, samples=630, |w|=2 N·m)
    """

    _units = {
        "rotation": "", "joint_axis": "", "q_ref": "rad", "q": "rad", "velocity": "rad/s",
        "moment": "N·m", "noise_std": "N·m",
    }

    joint: int
    rotation: NDArray[np.float64]
    joint_axis: NDArray[np.float64]
    q_ref: float
    q: NDArray[np.float64]
    velocity: NDArray[np.float64]
    moment: NDArray[np.float64]
    noise_std: float
    group: Hashable | None = None

    def __post_init__(self) -> None:
        joint = _joint_index(self.joint)
        object.__setattr__(self, "joint", joint)
        object.__setattr__(self, "rotation", _rotation(self.rotation, "rotation"))
        axis = _axis(self.joint_axis, "joint_axis")
        object.__setattr__(self, "joint_axis", axis)
        q_ref = _joint_angle(self.q_ref, "q_ref")
        object.__setattr__(self, "q_ref", q_ref)
        q = np.array(check_array(self.q, "q"), dtype=np.float64)  # a copy: no alias
        v = np.array(check_array(self.velocity, "velocity"), dtype=np.float64)
        if q.ndim != 1 or q.size < 8:
            raise ValueError(
                f"Expected `q` to have shape (m,) with m >= 8, got {describe_shape(q.shape)}."
            )
        if v.shape != q.shape:
            raise ValueError(
                f"Expected `velocity` to have the shape of `q` {describe_shape(q.shape)}, "
                f"got {describe_shape(v.shape)}."
            )
        with np.errstate(over="ignore"):
            far = float(np.max(np.abs(q - q_ref)))
        if far > MAX_JOINT_ANGLE:
            raise ValueError(
                f"Expected `q` in radians within 4π of `q_ref`, got a sample {far:.6g} rad "
                f"({np.degrees(far):.6g}°) from it: degrees?"
            )
        check_angle_span(float(np.ptp(q)), "q")
        if float(np.ptp(q)) == 0.0:
            raise ValueError("Expected `q` to sweep an arc, got a constant.")
        if not np.any(v):
            raise ValueError("Expected `velocity` to have a non-zero sample, got all zeros.")
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "velocity", v)
        w = np.array(check_array(self.moment, "moment"), dtype=np.float64)
        if w.shape != (3,):
            raise ValueError(
                f"Expected `moment` to have shape (3,), got {describe_shape(w.shape)}."
            )
        with np.errstate(under="ignore"):  # a tiny moment's rounding is harmless
            object.__setattr__(self, "moment", w - (w @ axis) * axis)
        object.__setattr__(self, "noise_std", check_positive(self.noise_std, "noise_std"))
        object.__setattr__(self, "group", _group_key(self.group, joint))
        super().__post_init__()

    def __repr__(self) -> str:
        arc = np.degrees(float(np.ptp(self.q)))
        return (
            f"PlannedSweep(joint={self.joint}, group={self.group!r}, "
            f"q_ref={np.degrees(self.q_ref):.3f}°, arc={arc:.1f}°, samples={self.q.size}, "
            f"|w|={float(_norm(self.moment)):.3g} N·m)"
        )


@dataclass(frozen=True, eq=False, repr=False)
class UpBound(UpResult):
    """Cramér-Rao bound of `up` for a set of planned sweeps (:func:`crlb_up`).

    Attributes
    ----------
    up : ndarray, shape (3,)
        The `up` the bound was evaluated at (the `up_hint` of :func:`crlb_up`).
    up_information : ndarray, shape (3, 3)
        Fisher information of `up` with the moments eliminated, 1/rad²: symmetric, rank 2,
        `up` in its null space. :attr:`up_cov` (rad²) is the smallest covariance an unbiased
        estimator can reach, :attr:`up_std_deg` its root-mean-square angle in degrees.
    condition : float
        Ratio of the largest to the smallest eigenvalue of `up_information` in the tangent
        plane.

    References
    ----------
    S. M. Kay (1993), ch. 3: the Cramér-Rao bound.
    """

    _units = {
        "condition": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    condition: float

    def __repr__(self) -> str:
        return (
            f"UpBound(up={np.array2string(self.up, precision=4)}, up_std={self.up_std_deg:.3g}°, "
            f"condition={self.condition:.3g})"
        )


def _sin_cos_bound(
    sweep: PlannedSweep,
    index: int,
    torque_shape: NDArray[np.float64],
    min_speed: float | None,
    friction: Friction,
    load_friction: LoadFriction,
) -> NDArray[np.float64]:
    """CRB (2, 2) of (alpha, beta) per unit noise variance for the fit_sweep model of a sweep.

    `torque_shape` (2,) is the sweep's (alpha, beta) up to scale, for the load-friction column.
    """
    q, v = sweep.q, sweep.velocity
    speed = np.abs(v)
    threshold = 0.1 * float(speed.max()) if min_speed is None else min_speed
    used = speed >= threshold
    if friction != "none":
        used &= speed > 0
    qu, vu = q[used], v[used]
    n_cols = 3 + (friction != "none") + (load_friction == "abs")
    if qu.size <= n_cols:
        given = f"`min_speed` = {min_speed:g}" if min_speed is not None else "10% of its top"
        raise InsufficientDataError(
            f"Expected more than {n_cols} samples of `sweeps[{index}]` at or above the speed "
            f"threshold ({threshold:.3g} rad/s, {given}), got {qu.size}."
        )
    cols = [np.ones_like(qu), np.sin(qu), np.cos(qu)]
    if friction != "none":
        sgn = np.sign(vu)
        cols.append(sgn)
        # Viscous column only when some direction moves at more than one speed (fit_sweep's
        # "auto" rule; 1e-6 is its default relative spread). Scaling a column leaves the
        # (sin, cos) block of the inverse unchanged, so it is used in units of the top speed.
        top = float(np.abs(vu).max())
        spread = max(
            (float(np.ptp(np.abs(vu[sgn == s]))) for s in (-1.0, 1.0) if np.any(sgn == s)),
            default=0.0,
        )
        if spread > 1e-6 * top:
            cols.append(vu / top)
    if load_friction == "abs":
        d = qu - sweep.q_ref
        load = np.sign(vu) * np.abs(torque_shape[0] * np.cos(d) + torque_shape[1] * np.sin(d))
        # A sweep with no gravity torque at `up_hint` has no load column to fit.
        if np.any(load):
            cols.append(load)
    x = np.stack(cols, axis=-1)
    col_norms = _norm(x, axis=0)
    if not np.all(col_norms > 0.0):
        raise InsufficientDataError(
            f"Expected the samples of `sweeps[{index}]` to separate the gravity sinusoid from the "
            "offset and friction terms of the fit, got a column of zeros."
        )
    x = x / col_norms  # unit columns: the (sin, cos) block is rescaled below
    gram = x.T @ x
    eig = np.linalg.eigvalsh(gram)
    # A design this ill-conditioned (condition number of the unit-column design above 1e6)
    # cannot separate the sinusoid from the offset and friction: its inverse is rounding.
    if not eig[0] > 1e-12 * eig[-1]:
        raise InsufficientDataError(
            f"Expected the samples of `sweeps[{index}]` to separate the gravity sinusoid from the "
            "offset and friction terms of the fit, got a singular design: a sweep in one "
            "direction only, or too short an arc."
        )
    inv = np.linalg.inv(gram)[1:3, 1:3]
    t = _sweep_rotation_matrix(sweep.q_ref)
    out: NDArray[np.float64] = t @ (inv / np.outer(col_norms[1:3], col_norms[1:3])) @ t.T
    return out


def _group_moments(items: list[PlannedSweep], groups: _Groups) -> NDArray[np.float64]:
    """The moment (G, 3) of every group; the sweeps of a group must agree on it."""
    moments = np.empty((len(groups.keys), 3))
    for g, key in enumerate(groups.keys):
        members = np.flatnonzero(groups.group_of == g)
        moments[g] = items[int(members[0])].moment
        for i in members[1:]:
            if not np.allclose(items[int(i)].moment, moments[g], rtol=1e-6, atol=1e-12):
                raise ValueError(
                    f"Expected the sweeps of group {key!r} in `sweeps` to share one `moment`, "
                    f"got {np.round(moments[g], 6).tolist()} and "
                    f"{np.round(items[int(i)].moment, 6).tolist()}."
                )
    return moments


def crlb_up(
    sweeps: Sequence[PlannedSweep],
    *,
    up_hint: ArrayLike = (0.0, 0.0, 1.0),
    min_speed: float | None = None,
    friction: Friction = "auto",
    load_friction: LoadFriction = "none",
    parallel_tol: float = _PARALLEL_TOL,
    rcond: float = _RCOND,
) -> UpBound:
    """Cramér-Rao bound of `up` for a proposed set of sweeps.

    Parameters
    ----------
    sweeps : sequence of PlannedSweep
        The planned sweeps, each with its samples, kinematics, rough moment and noise level.
    up_hint : array_like, shape (3,), optional
        The `up` at which the bound is evaluated (a rough `up` known beforehand; default
        upright). Any non-zero vector; it is normalised.
    min_speed : float, optional
        As in :func:`~gravdir.sweep.fit_sweep` (default 10% of each sweep's largest speed);
        non-negative.
    friction : {"auto", "none"}, optional
        Friction columns of the fit the bound is for: ``"auto"`` (Coulomb, plus viscous where
        the speed varies within a direction) or ``"none"``. The other options of the shared
        friction type (``"coulomb-viscous"``, ``"coulomb"``) are refused.
    load_friction : {"none", "abs"}, optional
        ``"abs"`` adds the load-dependent friction column ``sign(v) |tau_g|`` of
        :func:`~gravdir.sweep.fit_sweep`, evaluated at `up_hint` (its coefficient taken as
        zero). ``"signed"`` and ``"auto"`` are refused.
    parallel_tol, rcond : float, optional
        As in :func:`estimate_up` (each at most 1).

    Returns
    -------
    UpBound
        `up_hint` (normalised) and the information of `up` there
        (:attr:`~UpBound.up_cov`, :attr:`~UpBound.up_std_deg`).

    Raises
    ------
    ValueError
        If `sweeps` is not a sequence of :class:`PlannedSweep`, sweeps of one group disagree in
        joint, `joint_axis` or moment, an option is not one of those above or out of range, or
        the largest moment is more than 1e100 times, or less than 1e-100 times, the smallest
        `noise_std` (the information, its square, would leave the float range; real sensors are
        at 1e1-1e5).
    InsufficientDataError
        If fewer than two sweeps are given, a sweep keeps too few samples at or above the
        speed threshold (`min_speed`), or a sweep's samples cannot separate the sinusoid from
        the offset and friction columns (a sweep in one direction with friction fitted, an
        arc too short: a design whose unit-column condition number exceeds 1e6).
    DegenerateGeometryError
        If the sweeps cannot determine `up` (see :func:`estimate_up`), every moment is zero,
        or the information is singular at `up_hint` with these moments.

    See Also
    --------
    estimate_up : the estimator whose bound this is.
    plan_sweeps : searches plans with this bound.

    Notes
    -----
    Each sweep's fit is linear, so the bound on its :math:`(a, b)` is the ``(sin, cos)`` block
    of :math:`\\sigma^2 (X^\\top X)^{-1}` with the fit's design matrix :math:`X` (offset,
    sinusoid, friction); :math:`(\\alpha, \\beta)` follows by the rotation of
    :class:`JointSweep`. These pairs are independent across sweeps, so the Fisher information
    of :math:`(t, x_1, \\dots, x_G)` (tangent parameters of `up` and the moment coordinates) is
    :math:`J^\\top J` with the whitened Jacobian of :math:`M_i(\\mathrm{up})\\,x_k`, and the
    information of `up` is the Schur complement of the moment block. Ripple harmonics of high
    order, if fitted, barely change the bound and are not included. Moments and noise levels
    are used in units of the largest moment, which leaves the information unchanged; a sweep
    whose variance then overflows gets no weight.

    References
    ----------
    S. M. Kay (1993), ch. 3: the Cramér-Rao bound, the Fisher information of a linear model
    and of parameters with nuisance parameters eliminated. The sweeps are those of
    US 11,446,825 B2, FIG. 2 and FIGS. 3A-3B.

    Examples
    --------
    Three J2 sweeps of 120° at J1 = 0°, 90°, 180° of a two-joint arm:

    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh
    >>> from gravdir.general import planned_sweep_from_chain
    >>> chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    >>> plans = [
    ...     planned_sweep_from_chain(chain, [q1, 0.0], 1, np.radians(120), masses=[1.0, 2.0],
    ...                              coms=[[0, 0, 0], [0, 0, 0]], noise_std=0.05)
    ...     for q1 in (0.0, np.pi / 2, np.pi)]
    >>> bound = crlb_up(plans)
    >>> 0.0 < bound.up_std_deg < 0.5
    True
    """
    items = _check_sweep_list(sweeps, PlannedSweep)
    u = check_direction(up_hint, "up_hint")
    check_option(friction, "friction", _FRICTION_OPTIONS)
    check_option(load_friction, "load_friction", _LOAD_FRICTION_OPTIONS)
    if min_speed is not None:
        min_speed = check_positive(min_speed, "min_speed", allow_zero=True)
    parallel_tol = _check_bounded(parallel_tol, "parallel_tol", 1.0)
    rcond = _check_bounded(rcond, "rcond", 1.0)

    # Underflow rounds to zero harmlessly; moments and noise are used in units of the largest
    # moment, which leaves the information unchanged and keeps it inside the float range.
    with np.errstate(under="ignore"):
        groups = _sweep_groups(items, parallel_tol)
        moments = _group_moments(items, groups)
        noise = np.array([s.noise_std for s in items])
        top = float(np.max(_norm(moments)))
        if top == 0.0:
            raise DegenerateGeometryError(
                "Expected the planned sweeps in `sweeps` to have a non-zero `moment`, got all "
                "zero: without a gravity torque they say nothing about `up`."
            )
        _check_signal_to_noise(top, noise, "the moments and `noise_std` of `sweeps`")
        n_sweeps, n_groups = len(items), len(groups.keys)
        # Geometry first with unit weights, to get the model's (alpha, beta) at `up_hint`.
        unit = np.broadcast_to(np.eye(2), (n_sweeps, 2, 2))
        prob0 = _make_problem(
            groups.rotations, groups.axes, groups.group_of, n_groups, np.zeros((n_sweeps, 2)), unit
        )
        x = np.einsum("gji,gj->gi", prob0.bases, moments / top)
        y = np.einsum("sij,sj->si", _model_matrix(prob0, u), x[groups.group_of])
        shapes = [
            _sin_cos_bound(s, i, y[i], min_speed, friction, load_friction)
            for i, s in enumerate(items)
        ]
        # A sweep far noisier than the largest moment may overflow here: infinite variance,
        # no weight.
        with np.errstate(over="ignore", invalid="ignore"):
            cov = np.stack([(n / top) ** 2 * c for n, c in zip(noise, shapes, strict=True)])
        prob = _make_problem(groups.rotations, groups.axes, groups.group_of, n_groups, y, cov)
        information, condition = _up_information(prob, u, x, rcond, "planned sweeps")
    return UpBound(
        up=u,
        up_information=up_information_from_tangent(u, tangent_basis(u), information),
        condition=condition,
    )


def _check_signal_to_noise(top: float, noise: NDArray[np.float64], what: str) -> None:
    """Refuse a largest moment more than 1e100 times the smallest noise, or less than 1e-100
    times it: beyond, the information (its square) leaves the float range."""
    with np.errstate(over="ignore", under="ignore"):
        ratio = top / float(np.min(noise))
    if not _MIN_SNR <= ratio <= _MAX_SNR:
        raise ValueError(
            f"Expected {what} to give a ratio of largest moment to noise from {_MIN_SNR:g} to "
            f"{_MAX_SNR:g}, got {ratio:.3g}: check their units (N·m)."
        )
