"""What real motion logs hold beyond white noise: correlated noise, model error, stamps, rests.

:class:`ModelError` is a robot's unmodelled joint torque -- a quadratic velocity friction
:math:`c_j \\dot q_j |\\dot q_j|` and smooth harmonics of each joint's angle -- drawn once per robot
by :func:`random_model_error` and added to every log of that robot, so its effect on an estimate
is fixed by each trajectory. :func:`correlated_noise` samples a stationary first-order
autoregressive (Ornstein-Uhlenbeck) noise at arbitrary, jittered or gapped, time stamps. The
private helpers draw the time stamps of a log (jitter, rate error, gaps), the smooth rest at its
start and end and its corrupted rows; :func:`gravdir.synthetic.motion.fourier_trajectory` and
:func:`gravdir.synthetic.motion.motion_log` call them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_count, check_per_joint, check_scalar
from gravdir._results import Result
from gravdir.synthetic._log import _blend
from gravdir.synthetic._noise import MAX_SAMPLES as _MAX_SAMPLES
from gravdir.synthetic._noise import correlated_noise
from gravdir.synthetic._record import check_jitter
from gravdir.synthetic._sweep import sample_times
from gravdir.synthetic._validate import check_rng

__all__ = ["ModelError", "correlated_noise", "random_model_error"]

_MAX_JOINTS = 64
_MAX_HARMONICS = 20
# Largest relative error of the sampling rate: the true mean interval stays within a factor
# 1.5 of the nominal one (real controllers are off by a few per cent).
MAX_RATE_ERROR = 0.5
# Longest gap, rows.
MAX_GAP_ROWS = 10_000
# Values a corrupted row holds: a filler byte read as a number, and the order of the largest
# doubles (both seen in real logs).
_FILLER = 253.0
_HUGE = 1e305


@dataclass(frozen=True, eq=False, repr=False)
class ModelError(Result):
    """A robot's unmodelled joint torque, a fixed function of its joint positions and velocities.

    :math:`\\Delta\\tau_j = c_j \\dot q_j |\\dot q_j| + \\sum_{h=1}^{H} a_{jh} \\sin(h q_j)
    + b_{jh} \\cos(h q_j)`.

    Attributes
    ----------
    quadratic : ndarray, shape (n,)
        :math:`c_j`, the quadratic velocity friction per joint, N·m/(rad/s)².
    sine, cosine : ndarray, shape (n, H)
        :math:`a_{jh}` and :math:`b_{jh}`, the harmonics of each joint's own angle, N·m.

    Examples
    --------
    >>> err = ModelError(np.array([2.0]), np.zeros((1, 1)), np.ones((1, 1)))
    >>> err.torque(np.zeros((1, 1)), np.full((1, 1), -0.5)).tolist()
    [[0.5]]
    """

    _units = {"quadratic": "N·m·s²/rad²", "sine": "N·m", "cosine": "N·m"}

    quadratic: NDArray[np.float64]
    sine: NDArray[np.float64]
    cosine: NDArray[np.float64]

    def __repr__(self) -> str:
        return (
            f"ModelError(n_joints={self.quadratic.size}, harmonics={self.sine.shape[1]}, "
            f"quadratic={np.round(self.quadratic, 4)} N·m·s²/rad²)"
        )

    def torque(self, q: ArrayLike, velocity: ArrayLike) -> NDArray[np.float64]:
        """The unmodelled torque at joint positions `q` and velocities `velocity`, N·m.

        Parameters
        ----------
        q, velocity : array_like, shape (..., n)
            Joint positions (rad) and velocities (rad/s), the same shape.

        Returns
        -------
        ndarray, shape (..., n)

        Raises
        ------
        ValueError
            If a shape does not end in the number of joints, the two differ, or a value is not
            finite.

        Examples
        --------
        >>> err = random_model_error(2, rng=np.random.default_rng(0), quadratic=1.0)
        >>> err.torque(np.zeros(2), np.zeros(2)).tolist()
        [0.0, 0.0]
        """
        n = self.quadratic.size
        angle = check_array(q, "q")
        speed = check_array(velocity, "velocity")
        for x, name in ((angle, "q"), (speed, "velocity")):
            if x.ndim == 0 or x.shape[-1] != n:
                raise ValueError(f"Expected `{name}` of shape (..., {n}), got {x.shape}.")
        if angle.shape != speed.shape:
            raise ValueError(
                f"Expected `q` and `velocity` of one shape, got {angle.shape} and {speed.shape}."
            )
        order = np.arange(1, self.sine.shape[1] + 1)
        phase = angle[..., None] * order
        with np.errstate(over="ignore", invalid="ignore"):
            out: NDArray[np.float64] = self.quadratic * speed * np.abs(speed) + np.sum(
                self.sine * np.sin(phase) + self.cosine * np.cos(phase), axis=-1
            )
        if not np.all(np.isfinite(out)):
            raise ValueError("Expected `velocity` to give a torque within the float range.")
        return out

    def __call__(self, q: ArrayLike, velocity: ArrayLike) -> NDArray[np.float64]:
        """:meth:`torque`."""
        return self.torque(q, velocity)


def random_model_error(
    n_joints: int,
    *,
    rng: np.random.Generator,
    quadratic: ArrayLike = 0.0,
    harmonic_std: ArrayLike = 0.0,
    n_harmonics: int = 2,
) -> ModelError:
    """Draw one robot's unmodelled torque: quadratic velocity friction and angle harmonics.

    Parameters
    ----------
    n_joints : int
        Number of joints, 1 to 64.
    rng : numpy.random.Generator
        Source of the draw (draw once per robot and keep the result for all its logs).
    quadratic : float or array_like, shape (n,), optional
        Scale of each joint's quadratic velocity friction, N·m/(rad/s)², non-negative: the
        coefficient is this times a uniform draw from [0.5, 1] with a random sign (default 0).
    harmonic_std : float or array_like, shape (n,), optional
        Standard deviation of each harmonic coefficient of a joint, N·m, non-negative
        (default 0).
    n_harmonics : int, optional
        Harmonics of each joint's own angle, 1 to 20 (default 2: gear eccentricity and cable
        drag vary once or twice per turn).

    Returns
    -------
    ModelError

    Raises
    ------
    ValueError
        If a count or scale is out of range, or `rng` is not a generator.

    Examples
    --------
    >>> err = random_model_error(3, rng=np.random.default_rng(0), quadratic=[6.0, 4.0, 0.0])
    >>> bool(np.all(np.abs(err.quadratic) <= [6.0, 4.0, 0.0]))
    True
    """
    n = check_count(n_joints, "n_joints", maximum=_MAX_JOINTS)
    check_rng(rng)
    c = check_per_joint(quadratic, "quadratic", n, sign="non-negative")
    s = check_per_joint(harmonic_std, "harmonic_std", n, sign="non-negative")
    h = check_count(n_harmonics, "n_harmonics", maximum=_MAX_HARMONICS)
    with np.errstate(over="ignore"):
        coefficient = c * rng.uniform(0.5, 1.0, n) * rng.choice([-1.0, 1.0], n)
        sine = s[:, None] * rng.normal(size=(n, h))
        cosine = s[:, None] * rng.normal(size=(n, h))
    if not (np.all(np.isfinite(coefficient)) and np.all(np.isfinite(sine + cosine))):
        raise ValueError("Expected `quadratic` and `harmonic_std` within the float range.")
    return ModelError(coefficient, sine, cosine)


def stamps(
    duration: float,
    sample_rate: float,
    rng: np.random.Generator,
    time_jitter: float,
    rate_error: float,
    gaps: int,
    max_gap_rows: int,
) -> NDArray[np.float64]:
    """The true sample instants of a log over ``[0, duration]``: nominal interval
    ``1 / sample_rate`` times ``1 + rate_error``, each instant moved by the clipped normal
    jitter of :func:`~gravdir.synthetic._sweep.sample_times`, and `gaps` runs of 1 to
    `max_gap_rows` rows removed (never the first or last row, each run between kept rows)."""
    jitter = check_jitter(time_jitter, sample_rate)
    error = check_scalar(rate_error, "rate_error")
    if abs(error) > MAX_RATE_ERROR:
        raise ValueError(f"Expected `rate_error` within ±{MAX_RATE_ERROR}, got {error:.6g}.")
    n_gaps = check_count(gaps, "gaps", minimum=0, maximum=_MAX_SAMPLES)
    longest = check_count(max_gap_rows, "max_gap_rows", maximum=MAX_GAP_ROWS)
    true_rate = sample_rate / (1.0 + error)
    if not np.floor(duration * true_rate) + 1 <= _MAX_SAMPLES:
        raise ValueError(
            f"Expected `duration`, `sample_rate` and `rate_error` to give at most {_MAX_SAMPLES} "
            f"samples, got {np.floor(duration * true_rate) + 1:.6g}."
        )
    if jitter == 0 and error == 0:
        t = np.arange(int(np.floor(duration * sample_rate)) + 1) / sample_rate
    else:
        t = sample_times(duration, true_rate, jitter, rng)
    if n_gaps == 0:
        return t
    if n_gaps * (longest + 1) > t.size // 2:
        raise ValueError(
            f"Expected `gaps` * (`max_gap_rows` + 1) at most half the {t.size} rows, got "
            f"{n_gaps} * ({longest} + 1)."
        )
    lengths = rng.integers(1, longest + 1, n_gaps)
    kept = t.size - int(lengths.sum())
    # Each gap follows a distinct kept row among the first kept - 1: gaps never touch.
    after = np.sort(rng.choice(kept - 1, n_gaps, replace=False))
    keep = np.ones(t.size, dtype=bool)
    for g in range(n_gaps):
        start = int(after[g]) + 1 + int(lengths[:g].sum())
        keep[start : start + int(lengths[g])] = False
    return t[keep]


def rest_envelope(
    time: NDArray[np.float64], rest_time: float, ramp_time: float, duration: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Envelope s(t) of the motion, with ds/dt and d²s/dt²: 0 over `rest_time` at each end of
    ``[0, duration]``, 1 between, joined by the quintic blend 10u³ - 15u⁴ + 6u⁵ over
    `ramp_time` (C²: velocity and acceleration vanish where the rest begins and ends)."""
    if ramp_time == 0:
        one = np.ones_like(time)
        return one, 0 * one, 0 * one
    rise = np.clip((time - rest_time) / ramp_time, 0.0, 1.0)
    fall = np.clip((duration - rest_time - time) / ramp_time, 0.0, 1.0)
    s1, d1, dd1 = _blend(rise, ramp_time)
    s2, d2, dd2 = _blend(fall, ramp_time)
    # d/dt of the falling blend carries the factor -1 of du/dt.
    return s1 * s2, d1 * s2 - s1 * d2, dd1 * s2 - 2.0 * d1 * d2 + s1 * dd2


def corrupt_rows(
    rows: int, rng: np.random.Generator, *columns: NDArray[np.float64]
) -> tuple[list[NDArray[np.float64]], NDArray[np.int64]]:
    """Copies of the (N, n) `columns` with a block of `rows` consecutive rows (at a random place)
    replaced by garbage, and the indices of those rows. Each row gets one kind: a filler value
    (253) or a huge one (up to ±1e305) in a random part of its fields, exact zeros in every
    field, or its fields moved one place along the concatenated row (values shifted between
    columns). A row that would come out unchanged gets a huge value in its first field."""
    size = columns[0].shape[0]
    count = check_count(rows, "corrupted_rows", minimum=0, maximum=size)
    out = [c.copy() for c in columns]
    if count == 0:
        return out, np.empty(0, dtype=np.int64)
    start = int(rng.integers(0, size - count + 1))
    index = np.arange(start, start + count, dtype=np.int64)
    widths = [c.shape[1] for c in columns]
    for r in index:
        row = np.concatenate([c[r] for c in columns])
        kind = int(rng.integers(4))
        bad = row.copy()
        if kind < 2:
            hit = rng.random(row.size) < 0.5
            bad[hit] = _FILLER if kind == 0 else _HUGE * rng.uniform(-1.0, 1.0, int(hit.sum()))
        elif kind == 2:
            bad[:] = 0.0
        else:
            bad = np.roll(row, 1)
        if np.array_equal(bad, row):
            bad[0] = _HUGE
        for c, part in zip(out, np.split(bad, np.cumsum(widths)[:-1]), strict=True):
            c[r] = part
    return out, index
