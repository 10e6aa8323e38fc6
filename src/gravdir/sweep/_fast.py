"""The validated fast paths of :func:`~gravdir.sweep.fit_sweep`: one ordinary sweep, and a
batch of them.

A controller fits one sweep of a few hundred samples at a time, where the fixed cost of the
general path (its option checks, the batch machinery) is most of the call (:func:`fast_fit`).
A batch of many sweeps is bound by passes over its samples, which the general path makes one
check at a time and through a stored design matrix; :func:`fast_batch` makes every pass over a
block of sweeps while it is in cache and keeps no design matrix. Both share the general path's
columns (:class:`~gravdir.sweep._design.Columns`), single-speed test
(:func:`~gravdir.sweep._design.single_speed_test`), solve
(:func:`~gravdir.sweep._solve.solve_small`, :func:`~gravdir.sweep._solve.solve_gram`,
:func:`~gravdir.sweep._solve.covariance_rms`) and result assembly
(:func:`~gravdir.sweep._result.make_fit`).

These paths take exactly the calls whose every argument they can check with a few
comparisons (float64 sweeps, default NaN policy, no acceleration, harmonics or load
friction) and whose data need none of the general path's special handling (no extreme
magnitudes, well-conditioned normal equations: see :func:`fast_fit` and :func:`fast_batch`).
Anything else, including every input the general path refuses, returns None and takes the
general path, which raises its documented errors; so the fast paths change no behaviour, only
the cost (docs/sweep.md, "Speed").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import MAX_JOINT_ANGLE
from gravdir._hac import residual_lag1
from gravdir.sweep._design import (
    SCALE_HI,
    SCALE_LO,
    Columns,
    block_rows,
    fill_columns,
    single_speed_test,
    speed_threshold,
    used_arc,
)
from gravdir.sweep._nan import fingerprint_from_sums, multiset_digest
from gravdir.sweep._result import SweepFit, make_fit
from gravdir.sweep._solve import covariance_rms, solve_gram, solve_small

# Friction columns of each option before the single-speed test (which may drop the viscous one),
# and the design columns (with their names) of 0, 1 and 2 friction columns.
_FRICTION_TERMS = {"none": 0, "coulomb": 1, "auto": 2, "coulomb-viscous": 2}
_COLUMNS = {terms: Columns(terms) for terms in (0, 1, 2)}
_NAMES = {terms: columns.names() for terms, columns in _COLUMNS.items()}


def fast_options(
    friction: Any,
    min_speed: Any,
    min_arc: Any,
    single_speed_rtol: Any,
    torque_sign: Any,
) -> bool:
    """Whether the options are ones the fast path takes, each checked in full by comparisons."""
    return (
        type(friction) is str
        and friction in ("auto", "coulomb", "coulomb-viscous", "none")
        and (min_speed is None or (type(min_speed) is float and 0.0 < min_speed < math.inf))
        and type(min_arc) is float
        and 0.0 <= min_arc <= MAX_JOINT_ANGLE
        and type(single_speed_rtol) is float
        and 0.0 <= single_speed_rtol <= 1.0
        and type(torque_sign) is int
        and (torque_sign == 1 or torque_sign == -1)
    )


def fast_path(
    q: NDArray[np.float64],
    t: NDArray[np.float64],
    v: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    min_arc: float,
    single_speed_rtol: float,
    torque_sign: int,
    omit: bool,
) -> SweepFit | None:
    """:func:`fast_fit` of one sweep, :func:`fast_batch` for a batch, or None where the general
    path must decide: NaN samples under ``nan_policy="omit"`` (left out in place there), or a
    floating-point error of a strict ``np.errstate``."""
    if q.ndim != 1:
        try:
            return fast_batch(q, t, v, min_speed, friction, min_arc, single_speed_rtol, torque_sign)
        except FloatingPointError:
            return None
    if omit and (np.isnan(q).any() or np.isnan(t).any() or np.isnan(v).any()):
        return None  # the general path omits them in place (the residuals' lag-1 pairs)
    try:
        return fast_fit(q, t, v, min_speed, friction, min_arc, single_speed_rtol, torque_sign)
    except FloatingPointError:
        return None


def fast_fit(
    q: NDArray[np.float64],
    t: NDArray[np.float64],
    v: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    min_arc: float,
    single_speed_rtol: float,
    torque_sign: int,
) -> SweepFit | None:
    """The fit of one ordinary sweep, or None where the general path must decide.

    `q`, `t`, `v` are 1-D float64 arrays of one length; the options passed
    :func:`fast_options`. The result equals the general path's to rounding: the same columns,
    the same equilibrated normal equations, the same residual rule, the same fingerprint.
    """
    n = q.shape[0]
    if n < 2 or t.shape != q.shape or v.shape != q.shape:
        return None
    # Reductions that also check finiteness (NaN and infinity fail every comparison below).
    q_hi, q_lo = float(np.maximum.reduce(q)), float(np.minimum.reduce(q))
    if not (
        q_lo >= -MAX_JOINT_ANGLE and q_hi <= MAX_JOINT_ANGLE and q_hi - q_lo <= MAX_JOINT_ANGLE
    ):
        return None
    speed = np.abs(v)
    fastest = float(np.maximum.reduce(speed))
    if not SCALE_LO <= fastest <= SCALE_HI:
        return None
    # The largest |torque| carries any NaN or infinity; inside [2^-100, 2^100] nothing is scaled.
    if not SCALE_LO <= float(np.maximum.reduce(np.abs(t))) <= SCALE_HI:
        return None
    threshold = speed_threshold(fastest, min_speed)
    qq, tt, vv = q, t, v
    arc = q_hi - q_lo
    used = None
    if float(np.minimum.reduce(speed)) < threshold:
        used = speed >= threshold
        qq, tt, vv = q[used], t[used], v[used]
        if qq.shape[0] < 2:
            return None
        arc = float(np.maximum.reduce(qq)) - float(np.minimum.reduce(qq))
    n_used = qq.shape[0]
    if arc < min_arc:
        return None
    terms = _FRICTION_TERMS[friction]
    p = 3 + terms
    # The design columns of fit_sweep (gravdir.sweep._design.fill_columns) and the torque below
    # them: one product gives the Gram matrix and X'y.
    x = np.empty((p + 1, n_used))
    fill_columns(x, _COLUMNS[terms], qq, vv, None, None, None)
    x[p] = tt if torque_sign == 1 else -tt
    full = np.dot(x, x.T)
    single = friction == "coulomb"
    y_col = p
    if p >= 4:
        f = full.tolist()
        # Both directions: sum(sgn v) = n_fwd - n_bwd, sum(sgn v ** 2) = n_used.
        if n_used - abs(f[0][3]) < 0.5:
            return None
        if p == 5:
            # The single-speed test of fit_sweep (gravdir.sweep._design._friction_columns).
            g = (f[0][0], f[0][3], f[3][3], f[0][4], f[3][4], f[4][4])
            single = single_speed_test(*g, single_speed_rtol)
            if single:
                if friction == "coulomb-viscous":
                    return None
                p, terms = 4, 1
    if n_used <= p:
        return None
    # The general path's solve where the sweep is clearly well conditioned; None otherwise.
    solved = solve_small(full[:p, :p], full[:p, y_col])
    if solved is None:
        return None
    beta, inv_gram = solved
    resid = x[y_col] - np.dot(beta, x[:p])
    rss = float(resid @ resid)
    cov, rms = covariance_rms(inv_gram, rss, n_used, p)
    # Lag-1 products of the residuals along the sample axis: no pair spans a sample left out.
    later = resid[1:] if used is None else resid[1:] * (np.diff(np.flatnonzero(used)) == 1)
    lag1 = residual_lag1(float(resid[:-1] @ later), rss, float(full[y_col, y_col]))
    # The fingerprint of the torque as given (gravdir.sweep._nan.sample_fingerprints); integer
    # arithmetic wraps modulo 2^64.
    bits = t.view(np.uint64) if t.flags.c_contiguous else np.ascontiguousarray(t).view(np.uint64)
    s1, s2 = int(np.add.reduce(bits)), int(np.dot(bits, bits))
    return make_fit(
        beta,
        cov,
        _NAMES[terms],
        (),
        None,
        rms,
        lag1,
        float(n_used - p),
        np.int64(n_used),
        np.bool_(single),
        np.float64(arc),
        "least-squares",
        True,
        0,
        (frozenset((multiset_digest(s1, s2, n),)), None),
    )


def fast_batch(
    q: NDArray[np.float64],
    t: NDArray[np.float64],
    v: NDArray[np.float64],
    min_speed: float | None,
    friction: str,
    min_arc: float,
    single_speed_rtol: float,
    torque_sign: int,
) -> SweepFit | None:
    """The fit of a batch of ordinary sweeps, or None where the general path must decide.

    `q`, `t`, `v` are float64 arrays of one shape (m, n); the options passed
    :func:`fast_options`. Each block of sweeps is read once while it is in cache: the extremes
    of |v| and q (the finiteness and unit checks and the speed mask), the design columns of
    :func:`~gravdir.sweep._design.fill_columns` with the torque below them, the products of
    those rows (the Gram matrix, ``X' y``, and the sums of the single-speed test), ``y . y`` and
    the torque's checksum sums. The result equals the general path's to rounding: the same
    columns, mask, equilibrated normal equations and residual rule, the same fingerprint.
    None, for the general path to decide, wherever a sweep holds a NaN or infinity, a speed or
    torque of extreme magnitude, angles out of range, one direction only, too few samples or
    too short an arc, a mix of single-speed and varied-speed sweeps under ``friction="auto"``,
    or normal equations that :func:`~gravdir.sweep._solve.solve_gram` leaves to the general
    solve.
    """
    if q.ndim != 2 or t.shape != q.shape or v.shape != q.shape or q.size == 0:
        return None
    m, n = q.shape
    terms = _FRICTION_TERMS[friction]
    p = 3 + terms
    columns = _COLUMNS[terms]
    step = block_rows((p + 2) * n)
    rows = np.empty((min(step, m), p + 1, n))
    speed = np.empty((min(step, m), n))
    # Per sweep: rows 0..p-1 of the Gram matrix of [X | y] (a general product, not the
    # symmetric one, which numpy hands to BLAS syrk: slower at these sizes, docs/sweep.md),
    # y . y with the unmasked torque's for the scaling rule, the extremes of |v| and q, the count
    # and arc of the used samples, and the checksum sums.
    gram = np.empty((m, p, p + 1))
    # Per sweep: the lag-1 products sum_t z_t z_(t+1)' of the rows of [X | y], of which the
    # residuals' lag-1 products are a quadratic form (docs/sweep.md, "The residual diagnostic").
    lagged = np.empty((m, p + 1, p + 1))
    yy, yy_all = np.empty(m), np.empty(m)
    fastest, slowest, q_hi, q_lo = np.empty((4, m))
    n_used, arc = np.full(m, n, dtype=np.int64), np.empty(m)
    s1, s2 = np.empty(m, dtype=np.uint64), np.empty(m, dtype=np.uint64)
    # Non-finite and extreme inputs are found below and left to the general path, which warns
    # or raises as it documents; here they pass silently.
    with np.errstate(all="ignore"):
        for i in range(0, m, step):
            b = slice(i, i + step)
            qb, vb, tb = q[b], v[b], t[b]
            xb, sb = rows[: qb.shape[0]], speed[: qb.shape[0]]
            np.abs(vb, out=sb)
            np.maximum.reduce(sb, axis=-1, out=fastest[b])
            np.minimum.reduce(sb, axis=-1, out=slowest[b])
            np.maximum.reduce(qb, axis=-1, out=q_hi[b])
            np.minimum.reduce(qb, axis=-1, out=q_lo[b])
            np.vecdot(tb, tb, out=yy_all[b])
            threshold = speed_threshold(fastest[b, None], min_speed)
            if bool((slowest[b, None] < threshold).any()):
                # The general path's speed mask: unused samples become zero rows.
                used = sb >= threshold
                w = used.astype(np.float64)
                used.sum(axis=-1, out=n_used[b])
                arc[b] = used_arc(qb, used)
                fill_columns(xb, columns, qb, vb * w, None, w, None)
                np.multiply(tb, w if torque_sign == 1 else -w, out=xb[:, p])
                np.vecdot(xb[:, p], xb[:, p], out=yy[b])
            else:
                np.subtract(q_hi[b], q_lo[b], out=arc[b])
                fill_columns(xb, columns, qb, vb, None, None, None)
                if torque_sign == 1:
                    xb[:, p] = tb
                else:
                    np.negative(tb, out=xb[:, p])
                yy[b] = yy_all[b]
            np.matmul(xb[:, :p], np.swapaxes(xb, -1, -2), out=gram[b])
            np.matmul(xb[..., :-1], np.swapaxes(xb[..., 1:], -1, -2), out=lagged[b])
            bits = tb.view(np.uint64)
            np.add.reduce(bits, axis=-1, out=s1[b])
            np.vecdot(bits, bits, out=s2[b])
        ordinary = (
            (fastest >= SCALE_LO)
            & (fastest <= SCALE_HI)
            & (q_lo >= -MAX_JOINT_ANGLE)
            & (q_hi <= MAX_JOINT_ANGLE)
            & (q_hi - q_lo <= MAX_JOINT_ANGLE)
            # The general path's torque scaling rule (gravdir.sweep._fit._scaled_torque); it
            # fails on any NaN or infinity of the torque too.
            & (yy_all >= n * SCALE_LO**2)
            & (yy_all <= SCALE_HI**2)
            & (arc >= min_arc)
        )
    if not bool(ordinary.all()):
        return None
    y_col = p
    single: Any = np.full(m, friction == "coulomb")
    if terms:
        # Both directions: sum(sgn v) = n_fwd - n_bwd, sum(sgn v ** 2) = n_used.
        if bool((n_used - np.abs(gram[:, 0, 3]) < 0.5).any()):
            return None
        if terms == 2:
            g = gram[:, 0, 0], gram[:, 0, 3], gram[:, 3, 3], gram[:, 0, 4], gram[:, 3, 4]
            single = single_speed_test(*g, gram[:, 4, 4], single_speed_rtol)
            if bool(single.all()):
                if friction == "coulomb-viscous":
                    return None
                p, terms = 4, 1
            elif bool(single.any()):
                return None
    if bool((n_used <= p).any()):
        return None
    # The Gram matrix from its upper triangle: a general product need not be exactly symmetric.
    a = np.array(gram[:, :p, :p])
    row, col = np.triu_indices(p, 1)
    a[:, col, row] = a[:, row, col]
    solved = solve_gram(a, np.array(gram[:, :p, -1]), yy)
    if solved is None:
        return None
    beta, inv_gram, rss = solved
    cov, rms = covariance_rms(inv_gram, rss, n_used, p)
    weights = np.zeros((m, y_col + 1))  # the residual is [X | y] [-beta; 1]
    weights[:, :p] = -beta
    weights[:, y_col] = 1.0
    lag = np.einsum("mi,mij,mj->m", weights, lagged, weights)
    return make_fit(
        beta,
        cov,
        _NAMES[terms],
        (),
        None,
        rms,
        residual_lag1(lag, rss, yy),
        n_used - p,
        n_used,
        single,
        arc,
        "least-squares",
        np.ones(m, dtype=bool),
        np.zeros(m, dtype=np.int64),
        fingerprint_from_sums(s1, s2, n),
    )
