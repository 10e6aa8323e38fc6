"""The validated fast path of :func:`~gravdir.sweep.fit_sweep` for one ordinary sweep.

A controller fits one sweep of a few hundred samples at a time, where the fixed cost of the
general path (its option checks, the batch machinery) is most of the call. The path shares the
general path's columns (:class:`~gravdir.sweep._design.Columns`), solve
(:func:`~gravdir.sweep._solve.solve_small`, :func:`~gravdir.sweep._solve.covariance_rms`) and
result assembly (:func:`~gravdir.sweep._result.make_fit`).

This path takes exactly the calls whose every argument it can check with a few
comparisons (one 1-D float64 sweep, default NaN policy, no acceleration, harmonics or load
friction) and whose data need none of the general path's special handling (no extreme
magnitudes, no standing samples, well-conditioned normal equations: see :func:`fast_fit`).
Anything else, including every input the general path refuses, returns None and takes the
general path, which raises its documented errors; so the fast path changes no behaviour, only
the cost (docs/sweep.md, "Speed").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import MAX_JOINT_ANGLE
from gravdir.sweep._design import SCALE_HI, SCALE_LO, Columns, fill_columns
from gravdir.sweep._nan import multiset_digest
from gravdir.sweep._result import SweepFit, make_fit
from gravdir.sweep._solve import covariance_rms, solve_small

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
    """:func:`fast_fit` after leaving out the NaN samples under ``nan_policy="omit"`` (as the
    general path does for one sweep), or None where the general path must decide; a
    floating-point error of a strict ``np.errstate`` sends the call to the general path too."""
    if omit:
        nan = np.isnan(q) | np.isnan(t) | np.isnan(v)
        if nan.any():
            keep = ~nan
            q, t, v = q[keep], t[keep], v[keep]
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
    threshold = 0.1 * fastest if min_speed is None else min_speed
    qq, tt, vv = q, t, v
    arc = q_hi - q_lo
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
            g00, g03, g33 = f[0][0], f[0][3], f[3][3]
            g04, g34, g44 = f[0][4], f[3][4], f[4][4]
            det = g00 * g33 - g03 * g03
            explained = (g33 * g04 * g04 - 2 * g03 * g04 * g34 + g00 * g34 * g34) / det
            single = g44 - explained <= single_speed_rtol**2 * g44
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
        np.int64(n_used),
        np.bool_(single),
        np.float64(arc),
        "least-squares",
        True,
        0,
        (frozenset((multiset_digest(s1, s2, n),)), None),
    )
