"""A strategy for what real motion logs hold beyond white noise, and the record it draws."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

from gravdir._checks import check_bool, check_count, check_positive
from gravdir._results import Result
from gravdir.synthetic import ModelError, random_model_error
from gravdir.testing._world import _strategy

__all__ = ["MotionPhenomena", "motion_phenomena"]

_SEEDS = st.integers(0, 2**32 - 1)
# Ranges of the draws, per unit `scale` where a torque: a quadratic friction scale up to
# 5 N·m/(rad/s)², harmonics and slow noise up to 1 N·m, zero offsets up to 0.005 rad (0.3°) of
# standard deviation, a rate off by up to 10 %, up to 3 gaps of up to 20 rows and up to 20
# corrupted rows -- the orders of magnitude of a collaborative arm's real logs.
_MAX_QUADRATIC, _MAX_HARMONIC, _MAX_SLOW = 5.0, 1.0, 1.0
_MAX_OFFSET, _MAX_RATE_ERROR = 0.005, 0.1
_MAX_GAPS, _MAX_GAP_ROWS, _MAX_CORRUPTED = 3, 20, 20
_MAX_ROWS = 5_000_000
# Largest `scale`: torques far beyond any arm's, still far from overflow.
_MAX_SCALE = 1e6


@dataclass(frozen=True, eq=False, repr=False)
class MotionPhenomena(Result):
    """The real-log phenomena of one robot and log, as keyword arguments of the generators.

    Attributes
    ----------
    model_error : ModelError
        The robot's unmodelled torque.
    time_jitter, rate_error : float
        Stamp jitter, s, and relative rate error.
    gaps, max_gap_rows : int
        Missing runs of rows and the longest, rows.
    rest_time, ramp_time : float
        Rest at each end and the smooth start and stop, s.
    noise_correlation_time : float
        Correlation time of the torque noise, s (0: white).
    slow_noise_std : ndarray, shape (n,)
        Slower correlated torque noise per joint, N·m.
    slow_correlation_time : float
        Its correlation time, s.
    encoder_offsets : ndarray, shape (n,)
        Kinematic zero offsets, rad.
    corrupted_rows : int
        Rows replaced by garbage.

    Notes
    -----
    :meth:`trajectory_options` and :meth:`log_options` give the keyword arguments of
    :func:`gravdir.synthetic.motion.fourier_trajectory` and
    :func:`gravdir.synthetic.motion.motion_log`.
    """

    model_error: ModelError
    time_jitter: float
    rate_error: float
    gaps: int
    max_gap_rows: int
    rest_time: float
    ramp_time: float
    noise_correlation_time: float
    slow_noise_std: NDArray[np.float64]
    slow_correlation_time: float
    encoder_offsets: NDArray[np.float64]
    corrupted_rows: int

    _units: ClassVar[Mapping[str, str]] = {
        "model_error": "", "time_jitter": "s", "rate_error": "", "gaps": "",
        "max_gap_rows": "", "rest_time": "s", "ramp_time": "s", "noise_correlation_time": "s",
        "slow_noise_std": "N·m", "slow_correlation_time": "s", "encoder_offsets": "rad",
        "corrupted_rows": "",
    }  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"MotionPhenomena(n_joints={self.slow_noise_std.size}, "
            f"noise_correlation_time={self.noise_correlation_time:.3g} s, gaps={self.gaps}, "
            f"rest_time={self.rest_time:.3g} s, corrupted_rows={self.corrupted_rows})"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """The short ``repr`` in IPython and in hypothesis's reports."""
        printer.text(repr(self))

    def trajectory_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~gravdir.synthetic.motion.fourier_trajectory`.

        Returns
        -------
        dict
            `time_jitter`, `rate_error`, `gaps`, `max_gap_rows`, `rest_time`, `ramp_time`.

        Examples
        --------
        >>> from hypothesis import find
        >>> drawn = find(motion_phenomena(2), lambda p: True)
        >>> sorted(drawn.trajectory_options())[:2]
        ['gaps', 'max_gap_rows']
        """
        return {
            "time_jitter": self.time_jitter,
            "rate_error": self.rate_error,
            "gaps": self.gaps,
            "max_gap_rows": self.max_gap_rows,
            "rest_time": self.rest_time,
            "ramp_time": self.ramp_time,
        }

    def log_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~gravdir.synthetic.motion.motion_log`.

        Returns
        -------
        dict
            `model_error`, `noise_correlation_time`, `slow_noise_std`,
            `slow_correlation_time`, `encoder_offsets`, `corrupted_rows`.

        Examples
        --------
        >>> from hypothesis import find
        >>> drawn = find(motion_phenomena(2), lambda p: True)
        >>> drawn.log_options()["corrupted_rows"]
        0
        """
        return {
            "model_error": self.model_error,
            "noise_correlation_time": self.noise_correlation_time,
            "slow_noise_std": np.array(self.slow_noise_std),
            "slow_correlation_time": self.slow_correlation_time,
            "encoder_offsets": np.array(self.encoder_offsets),
            "corrupted_rows": self.corrupted_rows,
        }


def motion_phenomena(
    n_joints: int,
    *,
    duration: float = 20.0,
    sample_rate: float = 100.0,
    scale: float = 1.0,
    corrupt: bool = False,
) -> st.SearchStrategy[MotionPhenomena]:
    """What real motion logs hold beyond white noise, for a log of `duration` at `sample_rate`.

    Parameters
    ----------
    n_joints : int
        Number of joints, 1 to 64.
    duration : float, optional
        Length of the logs the phenomena are for, s, positive (default 20).
    sample_rate : float, optional
        Their nominal rate, Hz, positive (default 100); 8 to 5e6 samples in all.
    scale : float, optional
        Factor on every torque magnitude, from 0 to 1e6 (default 1: the order of a
        collaborative arm's joints; 0 leaves out the model error and the slow noise).
    corrupt : bool, optional
        Whether logs get a block of 1 to 20 corrupted rows (default False).

    Returns
    -------
    hypothesis.strategies.SearchStrategy of MotionPhenomena
        Drawn per record: a model error (:func:`gravdir.synthetic.random_model_error` with a
        quadratic friction scale up to 5 N·m/(rad/s)² and harmonics up to 1 N·m, times
        `scale`); stamps with jitter up to a fifth of the period, a rate error within ±0.1 and
        up to 3 gaps of up to 20 rows (fewer on short logs); a rest of up to a tenth and a ramp
        of a twentieth to a fifth of `duration` at each end; a torque noise correlation time
        up to 0.5 s; a slow noise up to 1 N·m times `scale` with a correlation time of 0.2
        to 2 s; zero offsets of up to 0.005 rad standard deviation.

    Raises
    ------
    ValueError
        If a count, time, rate or scale is out of range, or `corrupt` is not a bool.

    Examples
    --------
    >>> from hypothesis import find
    >>> drawn = find(motion_phenomena(3, corrupt=True), lambda p: True)
    >>> drawn.slow_noise_std.shape, 1 <= drawn.corrupted_rows <= 20
    ((3,), True)
    """
    n = check_count(n_joints, "n_joints", maximum=64)
    span = check_positive(duration, "duration")
    rate = check_positive(sample_rate, "sample_rate")
    size = check_positive(scale, "scale", allow_zero=True)
    flag = check_bool(corrupt, "corrupt")
    if size > _MAX_SCALE:
        raise ValueError(f"Expected `scale` at most {_MAX_SCALE:g}, got {size:.6g}.")
    with np.errstate(over="ignore"):
        total = span * rate
    if not 8 <= total <= _MAX_ROWS:
        raise ValueError(
            f"Expected `duration` * `sample_rate` to give 8 to {_MAX_ROWS} samples, got "
            f"{total:.6g}."
        )
    rows = math.floor(total / (1.0 + _MAX_RATE_ERROR)) + 1
    return _strategy(_draw, n, span, rate, size, flag, rows)  # type: ignore[no-any-return]


@st.composite
def _draw(
    draw: st.DrawFn, n: int, span: float, rate: float, scale: float, corrupt: bool, rows: int
) -> MotionPhenomena:
    rng = np.random.default_rng(draw(_SEEDS))
    model_error = random_model_error(
        n,
        rng=rng,
        quadratic=scale * draw(st.floats(0.0, _MAX_QUADRATIC)),
        harmonic_std=scale * draw(st.floats(0.0, _MAX_HARMONIC)),
        n_harmonics=draw(st.integers(1, 3)),
    )
    max_gaps = min(_MAX_GAPS, rows // (2 * (_MAX_GAP_ROWS + 1)))
    return MotionPhenomena(
        model_error=model_error,
        time_jitter=draw(st.floats(0.0, 0.2 / rate)),
        rate_error=draw(st.floats(-_MAX_RATE_ERROR, _MAX_RATE_ERROR)),
        gaps=draw(st.integers(0, max_gaps)),
        max_gap_rows=draw(st.integers(1, _MAX_GAP_ROWS)),
        rest_time=draw(st.floats(0.0, 0.1 * span)),
        ramp_time=draw(st.floats(0.05 * span, 0.2 * span)),
        noise_correlation_time=draw(st.floats(0.0, 0.5)),
        slow_noise_std=scale * draw(st.floats(0.0, _MAX_SLOW)) * rng.uniform(0.0, 1.0, n),
        slow_correlation_time=draw(st.floats(0.2, 2.0)),
        encoder_offsets=draw(st.floats(0.0, _MAX_OFFSET)) * rng.normal(size=n),
        corrupted_rows=draw(st.integers(1, min(_MAX_CORRUPTED, rows // 4))) if corrupt else 0,
    )
