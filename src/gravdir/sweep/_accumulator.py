"""SweepAccumulator: the linear sweep fit of :func:`fit_sweep`, fed sample by sample."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import NanPolicy, apply_torque_sign
from gravdir._hac import DEFAULT_BANDWIDTH, bartlett_lags, covariance_dof, residual_lag1
from gravdir._options import CovarianceOption, Friction, LoadFriction
from gravdir.errors import InsufficientDataError
from gravdir.sweep._design import (
    DEFAULT_MIN_ARC,
    DEFAULT_SINGLE_SPEED_RTOL,
    Columns,
    check_harmonics,
    check_min_arc,
    check_rtol,
    fill_columns,
    to_caller_units,
)
from gravdir.sweep._fit import _signed_load_coefficient, hac_rate
from gravdir.sweep._nan import check_nan_policy, fingerprint_from_sums, torque_sums
from gravdir.sweep._result import SweepFit, make_fit, warn_correlated
from gravdir.sweep._solve import covariance_rms, solve_factor
from gravdir.sweep._stream import (
    ACCELERATION,
    OPTION_NAMES,
    SPEED,
    TORQUE,
    chan_merge,
    check_chunk,
    check_options,
    coerce,
    drop_column,
    insert_unit,
    missing,
    moments,
    qr_r,
    unit_factor,
    units_are_one,
    units_for,
)
from gravdir.sweep._stream_hac import (
    fitted_sandwich,
    hac_fold,
    hac_merge,
    hac_rescale,
    hac_state,
)

__all__ = ["SweepAccumulator"]


# Samples buffered per sweep before they are folded into the triangular factor: one QR of
# (block + p + 1) rows costs ~15 us at 512 rows and p = 5, ~0.03 us a sample, while the buffer
# stays a fixed 16 kB a sweep (measured in benchmarks/accumulator.py).
_BLOCK = 512
# The state: named blocks of per-sweep statistics, each with the rule that merges two
# accumulators' blocks in `a + b` ("sum": counts and checksums; "max", "min": extremes;
# "moments": Chan's merge of (count, mean, M2) per direction; "factor": the triangular factor of
# the two factors stacked (TSQR); "last": the right operand's, whose samples come last, so no
# lag-1 product joins the two; "series": the Bartlett sandwich's, `_stream_hac.hac_merge`;
# "units": set by `_to_units` before the others merge). `==` compares every block. A new
# statistic is one entry here, its update in `_flush`, its allocation in `_allocate` and,
# where measured in a unit, its `_to_units`.
_BLOCKS = {
    "_r": "factor",
    "_kept": "sum",
    "_used": "sum",
    "_q_lo": "min",
    "_q_hi": "max",
    "_u_lo": "min",
    "_u_hi": "max",
    "_top": "max",
    "_unit": "units",
    "_dir": "moments",
    "_sums": "sum",
    "_lag": "sum",
    "_last": "last",
    "_hac_center": "series",
    "_hac_tails": "series",
    "_hac_windows": "series",
    "_hac_fourth": "series",
}
_MERGE: dict[str, Callable[[Any, Any], Any]] = {
    "sum": np.add,
    "max": np.maximum,
    "min": np.minimum,
    "moments": chan_merge,
    "factor": lambda a, b: qr_r(np.concatenate([a, b], axis=-2)),
    "last": lambda a, b: b.copy(),
}


class SweepAccumulator:
    """The least-squares sweep fit of :func:`~gravdir.sweep.fit_sweep`, fed as samples arrive.

    Samples (one at a time, or chunks of any length, over any leading batch axes) are folded
    into the triangular factor of the design matrix augmented with the torque, so memory does
    not grow with the number of samples; :meth:`fit` returns at any time what
    :func:`~gravdir.sweep.fit_sweep` returns on every sample added so far, with the same
    options; ``a + b`` combines two accumulators that hold different samples (partial sums of
    several processes).

    Parameters
    ----------
    min_speed : float
        Samples with ``|velocity| < min_speed`` are left out, as in
        :func:`~gravdir.sweep.fit_sweep`; a finite number >= 0, required: the batch default
        (10% of the fastest speed of the whole sweep) is not known before the sweep ends.
    friction : {"auto", "coulomb-viscous", "coulomb", "none"}, optional
        As in :func:`~gravdir.sweep.fit_sweep` (``"auto"`` decides at each :meth:`fit`).
    load_friction : {"none", "signed"}, optional
        As in :func:`~gravdir.sweep.fit_sweep`. ``"abs"`` and ``"auto"`` are refused: the
        Gauss-Newton iteration of the ``"abs"`` column revisits every sample, which a single
        pass cannot.
    harmonics : sequence of float, optional
        Nuisance harmonic orders, as in :func:`~gravdir.sweep.fit_sweep`.
    inertia : bool, optional
        Fit the inertia column: every :meth:`add` then takes `acceleration` (the
        ``acceleration=`` of :func:`~gravdir.sweep.fit_sweep`). Default False.
    min_arc, single_speed_rtol, torque_sign, nan_policy
        As in :func:`~gravdir.sweep.fit_sweep`.
    covariance : {"white", "hac"}, optional
        ``"white"`` (default): the white-noise covariance, as :func:`~gravdir.sweep.fit_sweep`.
        ``"hac"``: the Bartlett sandwich, honest where the residuals are correlated in time;
        its meat is rescaled for the white-noise loss to the fitted columns (fit_sweep's
        ``"hac"`` also allows for the residuals' own correlation there, which needs every
        sample: see Notes). It needs `sample_rate`.
    bandwidth, sample_rate : float, optional
        The kernel's bandwidth, s (default 1), and the samples per second, Hz, as in
        :func:`~gravdir.sweep.fit_sweep`; the bandwidth must be shorter than the samples at
        :meth:`fit`. The state (Notes) may hold 2**25 numbers (256 MiB) over the sweeps.

    Attributes
    ----------
    n : int
        Samples added so far (per sweep of a batch: every chunk has the same sample axis).
    n_used : ndarray of int, shape (...)
        Samples that pass the speed mask (and are free of NaN) so far.
    batch_shape : tuple of int or None
        Leading axes fixed by the first :meth:`add` (None before it).
    ready : bool
        Whether :meth:`fit` has what it needs (see :attr:`missing`).
    missing : str or None
        What :meth:`fit` still lacks, in words (None when ready).

    Raises
    ------
    ValueError
        If an option is unknown or out of range (as in :func:`~gravdir.sweep.fit_sweep`),
        `min_speed` is None, or `load_friction` is ``"abs"`` or ``"auto"``. ``a + b`` raises
        it for accumulators of different options or batch shapes, and for accumulators that
        share samples (see Notes), naming both.

    See Also
    --------
    fit_sweep : the same fit on all samples at once.

    Notes
    -----
    The state is the upper-triangular factor :math:`R` of :math:`[X \\mid \\tau] = QR`
    (:math:`p + 1` columns: the candidate design columns and the torque), updated by a
    Householder QR of :math:`R` stacked on each block of new rows, plus per-sweep counts,
    extremes, per-direction velocity moments (Chan et al., 1979, for the single-speed test),
    and a torque checksum. :math:`R` gives the coefficients by back substitution, the inverse
    Gram matrix :math:`R^{-1}R^{-\\top}`, and the residual sum of squares as
    :math:`R_{pp}^2` without the cancellation of :math:`\\sum\\tau^2 - \\beta^\\top X^\\top\\tau`.
    Dropping the viscous column (``friction="auto"`` at a single speed) re-factors the columns of
    :math:`R` that stay. Samples wait in a buffer of fixed size before they are folded in;
    :meth:`fit` folds them first. Full derivation in docs/sweep.md.

    The torque, velocity and acceleration enter in units of a power of two set by their largest
    magnitudes so far, by :func:`~gravdir.sweep.fit_sweep`'s rule (1 while those lie in
    :math:`[2^{-100}, 2^{100}]`): when a unit grows, the columns of :math:`R` and the velocity
    moments measured in it are multiplied by the ratio of the units, a power of two, so the
    rescaling is exact and no sum of squares leaves the float range at any finite magnitude.
    :meth:`fit` undoes the units as :func:`~gravdir.sweep.fit_sweep` does: the same
    coefficients, and a variance beyond the float range reported as infinite with a
    :class:`~gravdir.errors.GravdirWarning`, never as zero.

    With ``covariance="hac"`` the state also holds, per sweep, the sums of
    :math:`x_t z_t^\\top` (:math:`z_t` the row of :math:`[X \\mid \\tau]`) over the last
    :math:`L + 1` samples, the sum over the windows of :math:`L + 1` consecutive samples of
    each window's sum of them times itself, and the fourth moments of the rows:
    :math:`(L + 1) p (p + 1) + p^2 (p + 1)^2 + p^4 + p` numbers, whatever the number of
    samples (the torque measured from the coefficients so far, :math:`p` of them).
    The Bartlett meat is a quadratic form in :math:`(-\\hat\\beta, 1)` of these sums, rescaled
    for the white-noise loss to the fitted columns. :func:`~gravdir.sweep.fit_sweep`'s
    ``"hac"`` also rescales for the residuals' own lag-1 correlation, which needs every sample
    again: the two agree where that correlation is not positive. ``a + b`` ends `a`'s series
    (its last windows close) and goes on with `b`'s, as if `L` samples were left out between
    them: no window spans the two. Feed the chunks of one series in order to one accumulator
    where windows should span them. Derivation and measurements: docs/sweep.md,
    "Correlated residuals in a stream".

    ``a + b`` brings both into the larger units and factors :math:`R_a` stacked on :math:`R_b`
    (TSQR). It refuses accumulators that share samples, which it would count twice: the same
    accumulator, one copied from the other or merged into it (each accumulator draws a random
    source token when it first takes samples; copies keep the tokens and merges unite them).

    :meth:`add` raises only for bad input (a ``ValueError`` naming the argument, the chunk
    then left out whole); a sweep that does not yet determine the fit is reported by
    :attr:`ready`, :attr:`missing` and the :class:`~gravdir.errors.InsufficientDataError` of
    :meth:`fit`, never by :meth:`add`. The ``fingerprint`` of a fit is the same as
    :func:`~gravdir.sweep.fit_sweep`'s on the concatenated samples: a checksum of the multiset
    of torque samples, so independent of chunking, order and merge order. An accumulator holds
    no global state; one accumulator must not be fed from two threads at once (separate
    accumulators may, and merge afterwards). Two accumulators compare equal when they have the
    same options and the same state (the same samples, folded in the same way).

    References
    ----------
    Golub & Van Loan (2013), *Matrix Computations*, 4th ed., §5.3 (least squares by QR) and
    §6.5.1 (updating); Demmel, Grigori, Hoemmen & Langou (2012), "Communication-optimal
    parallel and sequential QR", SIAM J. Sci. Comput. 34(1) (TSQR); Chan, Golub & LeVeque
    (1979), "Updating formulae and a pairwise algorithm for computing sample variances".

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir import SweepAccumulator, fit_sweep
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.where(np.arange(400) < 200, 0.5, -0.5)
    >>> noise = 0.01 * np.random.default_rng(0).normal(size=400)
    >>> tau = 0.1 + 4 * np.sin(q + 0.3) + 0.2 * np.sign(v) + noise
    >>> acc = SweepAccumulator(min_speed=0.05)
    >>> acc.ready
    False
    >>> for i in range(0, 400, 10):
    ...     acc.add(q[i:i + 10], velocity=v[i:i + 10], torque=tau[i:i + 10])
    >>> fit, batch = acc.fit(), fit_sweep(q, velocity=v, torque=tau, min_speed=0.05)
    >>> bool(np.allclose(fit.coefficients, batch.coefficients, rtol=1e-10, atol=0))
    True
    >>> fit.fingerprint == batch.fingerprint
    True

    The Bartlett sandwich for residuals correlated in time (a kernel of 1 s at 100 Hz):

    >>> acc = SweepAccumulator(min_speed=0.05, covariance="hac", sample_rate=100.0)
    >>> acc.add(q, velocity=v, torque=tau)
    >>> bool(acc.fit().covariance_dof < batch.covariance_dof)
    True
    """

    def __init__(
        self,
        *,
        min_speed: float,
        friction: Friction = "auto",
        load_friction: LoadFriction = "none",
        harmonics: Sequence[float] = (),
        inertia: bool = False,
        min_arc: float = DEFAULT_MIN_ARC,
        single_speed_rtol: float = DEFAULT_SINGLE_SPEED_RTOL,
        torque_sign: Literal[1, -1] = 1,
        nan_policy: NanPolicy = "raise",
        covariance: CovarianceOption = "white",
        bandwidth: float = DEFAULT_BANDWIDTH,
        sample_rate: float | None = None,
    ) -> None:
        speed = check_options(min_speed, friction, load_friction, inertia)
        apply_torque_sign(np.zeros(0), torque_sign)
        self._omit = check_nan_policy(nan_policy)
        self._min_speed = float(speed)
        self._friction = str(friction)
        self._load_signed = load_friction == "signed"
        self._orders = check_harmonics(harmonics)
        self._inertia = bool(inertia)
        self._min_arc = check_min_arc(min_arc)
        self._rtol = check_rtol(single_speed_rtol, "single_speed_rtol")
        self._sign = float(torque_sign)
        rate = hac_rate(covariance, sample_rate)
        self._lags = None if rate is None else bartlett_lags(bandwidth, rate)
        self._options = (
            self._min_speed,
            self._friction,
            self._load_signed,
            self._orders,
            self._inertia,
            self._min_arc,
            self._rtol,
            self._sign,
            self._omit,
            self._lags,
        )
        self._needs_both = self._friction != "none" or self._load_signed
        self._drop_standing = self._needs_both and self._min_speed <= 0
        # The candidate columns: "auto" keeps the viscous one until a fit finds a single speed.
        terms = {"none": 0, "coulomb": 1}.get(self._friction, 2)
        self._columns = Columns(terms, self._inertia, self._load_signed, self._orders)
        names = self._names = self._columns.names()
        # The columns of the factor in a unit of their own (the torque is the last column).
        self._unit_columns = tuple(
            (names.index(name), which)
            for name, which in (("viscous", SPEED), ("inertia", ACCELERATION))
            if name in names
        ) + ((len(names), TORQUE),)
        self._raw = 4 if self._inertia else 3
        self._batch: tuple[int, ...] | None = None
        self.n = 0
        self._k = 0
        # Where the samples came from: a random token for each accumulator that took samples
        # first-hand, the union of them for a merge. A copy keeps them, so two accumulators whose
        # tokens meet hold some of the same samples (see `__add__`). Not part of `==`.
        self._sources: frozenset[str] = frozenset()

    # -- state -------------------------------------------------------------------------------

    def _allocate(self, batch: tuple[int, ...]) -> None:
        p1 = len(self._names) + 1
        self._set_hac(hac_state(batch, p1 - 1, self._lags))  # refused first if too large
        self._r = np.zeros(batch + (p1, p1))
        self._buf = np.empty(batch + (self._raw, _BLOCK))
        self._k = 0
        # Per sweep: samples free of NaN, used samples, extremes of q (all kept, used), the
        # largest kept |torque|, fastest kept speed and largest used |acceleration| and the
        # units they set, per-direction count, mean and sum of squared deviations of the
        # velocity (in its unit), and the torque checksum sums.
        self._kept = np.zeros(batch, dtype=np.int64)
        self._used = np.zeros(batch, dtype=np.int64)
        # (Python floats for one sweep: compared on every add.)
        self._q_lo: Any = np.full(batch, np.inf) if batch else math.inf
        self._q_hi: Any = np.full(batch, -np.inf) if batch else -math.inf
        self._u_lo = np.full(batch, np.inf)
        self._u_hi = np.full(batch, -np.inf)
        self._top = np.zeros(batch + (3,))
        self._unit = np.ones(batch + (3,))
        self._unit_one = True  # every entry of `_unit` is 1: the common case, without scaling
        self._dir = np.zeros(batch + (2, 3))  # (forward, backward) x (count, mean, M2)
        self._sums = np.zeros(batch + (2,), dtype=np.uint64)
        # The lag-1 products sum_t z_t z_(t+1)' of the rows z_t of [X | torque] (unused samples
        # are zero rows), and the last row folded, which pairs with the next block's first.
        self._lag = np.zeros(batch + (p1, p1))
        self._last = np.zeros(batch + (p1,))
        self._batch = batch  # allocated: set last, so that a refusal leaves none

    def _set_hac(self, state: tuple[NDArray[np.float64], ...]) -> None:
        self._hac_center, self._hac_tails, self._hac_windows, self._hac_fourth = state

    def _hac(self) -> tuple[NDArray[np.float64], ...]:
        return self._hac_center, self._hac_tails, self._hac_windows, self._hac_fourth

    @property
    def batch_shape(self) -> tuple[int, ...] | None:
        """The leading axes of the sweeps, fixed by the first :meth:`add` (None before)."""
        return self._batch

    @property
    def n_used(self) -> NDArray[np.int64]:
        """Samples used so far (speed mask passed, free of NaN), shape (...)."""
        if self._batch is None:
            return np.asarray(0, dtype=np.int64)
        self._flush()
        out: NDArray[np.int64] = self._used.copy()
        return out

    def copy(self) -> SweepAccumulator:
        """An independent accumulator with the same options and the same samples.

        Holding the same samples, it does not merge with this accumulator (``a + a.copy()`` is
        refused); a copy taken before any sample is added shares none.
        """
        new = object.__new__(SweepAccumulator)
        new.__dict__.update(self.__dict__)
        for name, value in self.__dict__.items():
            if isinstance(value, np.ndarray):
                setattr(new, name, value.copy())
        return new

    def __copy__(self) -> SweepAccumulator:
        # copy.copy must not share the arrays that `add` updates in place.
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> SweepAccumulator:
        return self.copy()

    # -- feeding -----------------------------------------------------------------------------

    def add(
        self,
        q: ArrayLike,
        *,
        velocity: ArrayLike,
        acceleration: ArrayLike | None = None,
        torque: ArrayLike,
    ) -> None:
        """Add samples: arrays of shape (..., m) (or scalars: one sample).

        Parameters
        ----------
        q, velocity : array_like, shape (..., m)
            As in :func:`~gravdir.sweep.fit_sweep`: the leading axes broadcast to the batch
            shape (fixed by the first call), the sample axes agree; ``m`` may be 0.
        acceleration : array_like, shape (..., m), optional
            Required exactly when the accumulator was made with ``inertia=True``.
        torque : array_like, shape (..., m)
            As in :func:`~gravdir.sweep.fit_sweep`, with the same shape rules.

        Raises
        ------
        ValueError
            For bad input only (not real and numeric, an infinity, a NaN under
            ``nan_policy="raise"``, degrees for radians over all samples so far, shapes that
            disagree with each other or with the batch shape, `acceleration` given or missing
            against `inertia`). The chunk is then left out whole. Too little data is never an
            error here: see :attr:`ready`.

        Notes
        -----
        Memory: the accumulator's state has a fixed size, allocated by the first call and never
        again: a buffer of 512 samples per sweep for each input (3 arrays, 4 with
        `acceleration`), the :math:`(p+1)\\times(p+1)` triangular factor of the design matrix
        augmented with the torque (:math:`p` coefficients) and a few numbers per sweep. It
        does not grow with the number of samples, and no sample is kept beyond the buffer.

        A call copies its samples into the buffer. While it runs it allocates temporaries of
        the size of its chunk: a float64 copy of each input that is not already a float64 array
        of at least one dimension (a Python float becomes a 1-element array) and the magnitudes
        of `torque` and `velocity` (and `acceleration`) for the finiteness check. Each time the
        buffer fills (every 512 samples per sweep) the call folds it into the factor, which
        allocates a :math:`(p+1+512)\\times(p+1)` block per sweep and temporaries of the
        buffer's size for its QR factorisation. Every temporary is freed when the call returns:
        :math:`O(m + 512\\,p)` memory per sweep during a call of :math:`m` samples, none held
        after it. With ``covariance="hac"`` the state is larger by the numbers in the class
        Notes, and a fold also forms each sample's :math:`x_t z_t^\\top` and
        :math:`x_t x_t^\\top`.
        """
        if (acceleration is None) == self._inertia:
            need = "requires" if self._inertia else "takes no"
            raise ValueError(
                f"Expected `acceleration` {'with' if self._inertia else 'without'} "
                f"inertia={self._inertia}: this accumulator {need} `acceleration`, got "
                f"{'none' if acceleration is None else 'one'}."
            )
        arrays = [coerce(q, "q"), coerce(torque, "torque"), coerce(velocity, "velocity")]
        if acceleration is not None:
            arrays.append(coerce(acceleration, "acceleration"))
        q_hi, q_lo = (None, None) if self._batch is None else (self._q_hi, self._q_lo)
        batch, m, new_hi, new_lo = check_chunk(arrays, self._batch, q_hi, q_lo, self._omit)
        if m == 0:
            if self._batch is None:
                self._allocate(batch)
            return
        # Valid: from here on the chunk is taken.
        if self._batch is None:
            self._allocate(batch)
        if not self._sources:
            self._sources = frozenset((os.urandom(8).hex(),))
        self._q_hi, self._q_lo = new_hi, new_lo
        self.n += m
        start = 0
        while start < m:
            take = min(m - start, _BLOCK - self._k)
            dest = self._buf[..., self._k : self._k + take]
            for i, a in enumerate(arrays):
                dest[..., i, :] = a[..., start : start + take]
            self._k += take
            start += take
            if self._k == _BLOCK:
                self._flush()

    # -- folding samples into the factor -----------------------------------------------------

    def _flush(self) -> None:
        """Fold the buffered samples into the triangular factor and the per-sweep statistics."""
        k = self._k
        if self._batch is None or k == 0:
            return
        buf = self._buf[..., :k]
        qb, tb, vb = buf[..., 0, :], buf[..., 1, :], buf[..., 2, :]
        ab = buf[..., 3, :] if self._inertia else None
        keep: NDArray[np.bool_] | None = None
        if self._omit:
            nan = np.asarray(np.isnan(buf).any(axis=-2))
            if nan.any():
                kept = ~nan
                qb = np.where(kept, qb, 0.0)
                tb = np.where(kept, tb, 0.0)
                vb = np.where(kept, vb, 0.0)
                ab = None if ab is None else np.where(kept, ab, 0.0)
                keep = kept
        s1, s2 = torque_sums(tb, keep)
        self._sums[..., 0] += s1
        self._sums[..., 1] += s2
        speed = np.abs(vb)
        self._kept += k if keep is None else keep.sum(axis=-1)
        used_b = speed >= self._min_speed
        if self._drop_standing:
            used_b &= speed > 0
        if keep is not None:
            used_b &= keep
        w = used_b.astype(np.float64)
        self._used += used_b.sum(axis=-1)
        self._u_hi = np.maximum(self._u_hi, np.where(used_b, qb, -np.inf).max(axis=-1))
        self._u_lo = np.minimum(self._u_lo, np.where(used_b, qb, np.inf).min(axis=-1))
        am = None if ab is None else ab * w
        # The largest magnitudes (torque, speed, acceleration: the order of TORQUE, ...).
        maxima = [np.abs(tb).max(axis=-1), speed.max(axis=-1)]
        if am is not None:
            maxima.append(np.abs(am).max(axis=-1))
        top = self._top
        for i, largest in enumerate(maxima):
            if self._batch:
                np.maximum(top[..., i], largest, out=top[..., i])
            elif largest > top[i]:  # one sweep: scalars, without the ufunc's call cost
                top[i] = largest
        unit = self._units_for_top()
        p1 = len(self._names) + 1
        m = np.empty(self._batch + (p1 + k, p1))
        m[..., :p1, :] = self._r
        rows = m[..., p1:, :]
        sgn = np.sign(vb) * w
        # Velocity, acceleration and torque in their units (None: all 1, nothing to divide).
        vs = vb if unit is None else vb / unit[..., SPEED, None]
        if am is not None and unit is not None:
            am = am / unit[..., ACCELERATION, None]
        # fit_sweep's design columns (the rows of this block), written through a transposed view.
        vm = vs * w if self._columns.friction_terms == 2 else vs
        fill_columns(np.swapaxes(rows, -1, -2), self._columns, qb, vm, sgn, w, am)
        col = p1 - 1
        if unit is None:
            rows[..., col] = tb * w if self._sign > 0 else -(tb * w)
        else:
            rows[..., col] = tb * w / unit[..., TORQUE, None] * self._sign
        self._lag += np.swapaxes(rows[..., :-1, :], -1, -2) @ rows[..., 1:, :]
        self._lag += self._last[..., :, None] * rows[..., 0, None, :]
        self._last = rows[..., -1, :].copy()
        self._r = qr_r(m)
        if self._lags is not None:
            self._set_hac(hac_fold(self._hac(), self._r, rows))
        if self._needs_both:
            for d, side in enumerate((sgn > 0, sgn < 0)):
                self._dir[..., d, :] = chan_merge(self._dir[..., d, :], moments(vs, side))
        self._k = 0

    # -- units -------------------------------------------------------------------------------

    def _units_for_top(self) -> NDArray[np.float64] | None:
        """Bring the units up to date with the largest magnitudes so far; None while all are 1.

        The unit of each quantity is ``pow2_scale`` of its largest magnitude, as in fit_sweep:
        1 while that lies in [2^-100, 2^100] (or is zero), else the power of two at or just
        below it, so that no sum of squares of the state overflows or underflows.
        """
        if not (self._unit_one and units_are_one(self._top)):
            self._to_units(units_for(self._top))
        return None if self._unit_one else self._unit

    def _to_units(self, unit: NDArray[np.float64]) -> None:
        """Express the state in `unit` (..., 3), powers of two: every part of the state that is
        measured in the units of torque, speed or acceleration is rescaled here, by the factor
        of :func:`~gravdir.sweep._stream.unit_factor` (exact but for entries that fall below the
        float range, far below the rounding of the largest)."""
        if np.array_equal(unit, self._unit):
            return
        factor = unit_factor(self._unit, unit)
        with np.errstate(under="ignore"):
            # The factor of [X | tau]: its columns in a unit of their own (X D = Q (R D)).
            for col, which in self._unit_columns:
                self._r[..., :, col] *= factor[..., which, None]
                # The lag-1 products (bilinear in the rows) and the last row.
                self._lag[..., :, col] *= factor[..., which, None]
                self._lag[..., col, :] *= factor[..., which, None]
                self._last[..., col] *= factor[..., which]
            # The velocity moments: the mean in the unit, the squared deviations in its square.
            fv = factor[..., SPEED, None]
            self._dir[..., 1] *= fv
            self._dir[..., 2] *= fv * fv
            if self._lags is not None:
                columns = np.ones(self._r.shape[:-1])
                for col, which in self._unit_columns:
                    columns[..., col] = factor[..., which]
                self._set_hac(hac_rescale(self._hac(), columns))
        self._unit = np.array(unit, dtype=np.float64)
        self._unit_one = bool((self._unit == 1.0).all())

    # -- merging -----------------------------------------------------------------------------

    def __add__(self, other: object) -> SweepAccumulator:
        if not isinstance(other, SweepAccumulator):
            return NotImplemented
        if other._options != self._options:
            raise ValueError(
                "Expected accumulators with the same options to merge, got "
                f"{self._describe()} and {other._describe()}."
            )
        if self._batch is None:
            return other.copy()
        if other._batch is None:
            return self.copy()
        if other._batch != self._batch:
            raise ValueError(
                f"Expected accumulators of the same batch shape to merge, got {self._batch} "
                f"and {other._batch}."
            )
        if not other.n or not self.n:  # nothing to merge (chunks of no samples only)
            return self.copy() if other.n == 0 else other.copy()
        self._flush()
        other._flush()
        why = self._shared_with(other)
        if why is not None:
            raise ValueError(
                "Expected accumulators that share no samples to merge in `a + b`, got "
                f"`a` = {self!r} and `b` = {other!r}, which {why}: the merge would count those "
                "samples twice. Merge accumulators fed with disjoint samples."
            )
        # Both operands in the units of the merged largest magnitudes (exact: powers of two).
        top = np.maximum(self._top, other._top)
        unit = units_for(top)
        new = self.copy()
        new._to_units(unit)
        rhs = other
        if not np.array_equal(unit, other._unit):
            rhs = other.copy()
            rhs._to_units(unit)
        new.n = self.n + other.n
        new._sources = self._sources | other._sources
        for name, rule in _BLOCKS.items():
            if rule not in ("units", "series"):
                setattr(new, name, _MERGE[rule](getattr(new, name), getattr(rhs, name)))
        if self._lags is not None:
            new._set_hac(hac_merge(new._hac(), rhs._hac(), new._r))
        if not self._batch:
            new._q_hi, new._q_lo = float(new._q_hi), float(new._q_lo)
        return new

    def _shared_with(self, other: SweepAccumulator) -> str | None:
        """Why `self` and `other` (flushed, of one batch shape) hold some of the same samples,
        in words; None when nothing says they do.

        Their source tokens meet when one is a copy of the other, was merged into it, or both
        descend from one accumulator that had taken samples. Equal torque checksums are no
        evidence: two chunks of a dead or quantised channel hold equal torque multisets of
        different samples.
        """
        if self._sources & other._sources:
            if self is other:
                return "are the same accumulator"
            return (
                "hold samples of a common source (one is a copy of the other or was merged into "
                "it, or both descend from one accumulator that had taken samples)"
            )
        return None

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __eq__(self, other: object) -> bool:
        """Equal options and equal state (the same samples folded in the same way)."""
        if not isinstance(other, SweepAccumulator):
            return NotImplemented
        if (self._options, self._batch, self.n) != (other._options, other._batch, other.n):
            return False
        if self._batch is None:
            return True
        self._flush()
        other._flush()
        return all(
            np.array_equal(getattr(self, name), getattr(other, name), equal_nan=True)
            for name in _BLOCKS
        )

    def _describe(self) -> str:
        pairs = zip(OPTION_NAMES, self._options, strict=True)
        return "(" + ", ".join(f"{k}={v!r}" for k, v in pairs) + ")"

    # -- fitting -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Whether :meth:`fit` has the samples it needs (:attr:`missing` is None)."""
        return self.missing is None

    @property
    def missing(self) -> str | None:
        """What the samples so far lack for a fit, in words; None when there is nothing.

        The checks of :func:`~gravdir.sweep.fit_sweep` on counts, directions, speeds,
        acceleration and arc. :meth:`fit` may still refuse samples whose angles do not
        determine every coefficient (its condition-number test).
        """
        if self._batch is None or self.n == 0:
            return "Expected at least one sample, got none."
        self._flush()
        return missing(self)[0]

    def fit(self) -> SweepFit:
        """The fit of every sample added so far, as :func:`~gravdir.sweep.fit_sweep` gives it.

        Returns
        -------
        SweepFit
            Equal to ``fit_sweep`` of the concatenated samples with the same options, to
            rounding (coefficients and covariance to ~1e-12 relative on well-conditioned
            sweeps; the property test demands 1e-10), including ``fingerprint``. Under
            ``covariance="hac"`` the covariance is the streamed sandwich of the Notes above,
            ``fit_sweep``'s where the residuals show no positive lag-1 correlation, to
            rounding that grows with the design's condition number (1e-12 to about 1e-7 of
            the product of the standard deviations without harmonics, more with them:
            docs/sweep.md).

        Raises
        ------
        InsufficientDataError
            If the samples so far do not determine the fit (:attr:`missing` says why), or
            their angles do not determine every coefficient (condition number above 1e13).
        ValueError
            If a coefficient lies beyond the float range.

        Warns
        -----
        GravdirWarning
            If a variance of the coefficients lies outside the float range (torques, speeds or
            accelerations beyond about 1e±150): it is reported as infinite, with zero
            covariances, as :func:`~gravdir.sweep.fit_sweep` reports it.
        """
        batch = self._batch
        if batch is None or self.n == 0:
            raise InsufficientDataError("Expected at least one sample, got none.")
        self._flush()
        why, single = missing(self)
        if why is not None:
            raise InsufficientDataError(why)
        names = list(self._names)
        r = self._r
        p = len(names)
        pinned = None
        if "viscous" in names and single.any():
            i = names.index("viscous")
            reduced = drop_column(r, i)
            if single.all():
                names.pop(i)
                r, p = reduced, p - 1
            else:
                pinned = np.zeros(batch + (p,), dtype=bool)
                pinned[..., i] = single
                r = np.where(single[..., None, None], insert_unit(reduced, i), r)
        beta, inv_gram, rss = solve_factor(r, pinned)
        # The residuals are [X | torque] [-beta; 1] in the candidate columns (a dropped one at 0).
        weights = np.zeros(batch + (len(self._names) + 1,))
        weights[..., [self._names.index(name) for name in names]] = -beta
        weights[..., -1] = 1.0
        lag = np.einsum("...i,...ij,...j->...", weights, self._lag, weights)
        yy = np.einsum("...ij,...ij->...", self._r[..., :, -1:], self._r[..., :, -1:])
        lag1 = residual_lag1(lag, rss, yy)
        n_used = self._used
        n_free = p - (0 if pinned is None else pinned.sum(axis=-1))
        cov, rms = covariance_rms(inv_gram, rss, n_used, n_free)
        dof: Any = covariance_dof(n_used, n_free)
        if self._lags is not None:
            cov, dof = fitted_sandwich(
                self._hac(), self._r, [self._names.index(name) for name in names], inv_gram,
                weights, lag1, self._lags, dof,
            )  # fmt: skip
        load: Any = None
        if self._load_signed:
            # A ratio of torque coefficients: the same in the torque's unit, where its products
            # stay inside the float range.
            rx = r[..., :p, :p]
            gram = np.swapaxes(rx, -1, -2) @ rx
            load = _signed_load_coefficient(beta, gram, names)
        # Back from the units of torque, speed and acceleration (the same undoing as fit_sweep's,
        # with its warning for a variance outside the float range).
        unit = self._unit
        units: list[Any] = list(np.moveaxis(unit, -1, 0)) if batch else unit.tolist()
        scales = (units[TORQUE], units[SPEED], units[ACCELERATION])
        beta, cov, rms = to_caller_units(beta, cov, rms, names, scales, "SweepAccumulator.fit", 3)
        arc: Any = self._u_hi - self._u_lo
        fingerprint = fingerprint_from_sums(self._sums[..., 0], self._sums[..., 1], self._kept)
        used: Any
        one_speed: Any
        converged: Any
        n_iter: Any
        if batch:
            used, one_speed = n_used.copy(), np.asarray(single, dtype=bool).copy()
            converged, n_iter = np.ones(batch, dtype=bool), np.zeros(batch, dtype=np.int64)
        else:  # one sweep: the scalar types of fit_sweep's single-sweep result
            load, rms, arc = (None if load is None else load[()]), rms[()], arc[()]
            used, one_speed, converged, n_iter = np.int64(n_used), np.bool_(single), True, 0
        fit = make_fit(
            beta, cov, names, self._orders, load, rms, lag1, dof, used, one_speed, arc,
            "least-squares", converged, n_iter, fingerprint,
        )  # fmt: skip
        if self._lags is None:
            remedy = "Make the accumulator with covariance='hac' and `sample_rate`."
            warn_correlated(fit, remedy, stacklevel=2)
        return fit

    def __repr__(self) -> str:
        state = "ready" if self._batch is not None and self.ready else "not ready"
        return (
            f"SweepAccumulator(n={self.n}, batch_shape={self._batch}, columns={tuple(self._names)}"
            f", {state})"
        )
