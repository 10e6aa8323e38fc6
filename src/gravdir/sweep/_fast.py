"""The validated fast path of :func:`~gravdir.sweep.fit_sweep` for one ordinary sweep.

A controller fits one sweep of a few hundred samples at a time, where the fixed cost of the
general path (its option checks, the batch machinery, the result's freezing) is most of the
call. This path takes exactly the calls whose every argument it can check with a few
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
from gravdir._imports import IMPORT_LOCK
from gravdir._results import _field_names
from gravdir.sweep._design import SCALE_HI, SCALE_LO
from gravdir.sweep._nan import multiset_digest
from gravdir.sweep._result import _NO_HARMONICS, _ZERO_SCALAR, SweepFit

# The general path's threshold (gravdir.sweep._solve): above _REFINE_ABOVE_COND it solves by QR,
# so such sweeps are left to it.
from gravdir.sweep._solve import _REFINE_ABOVE_COND

_COLUMNS = {"none": 3, "coulomb": 4, "auto": 5, "coulomb-viscous": 5}
_IDENTITY_RHS = {p: np.hstack([np.eye(p), np.zeros((p, 1))]) for p in (3, 4, 5)}
_NAMES = {
    4: ("offset", "sin", "cos", "coulomb"),
    5: ("offset", "sin", "cos", "coulomb", "viscous"),
    3: ("offset", "sin", "cos"),
}
_PLAIN: bool | None = None
_DPOSV: Any = None
# The fields every fast fit shares; the others are filled per fit.
_TEMPLATE: dict[str, Any] = {
    "coulomb": _ZERO_SCALAR,
    "viscous": _ZERO_SCALAR,
    "load_coefficient": _ZERO_SCALAR,
    "inertia": _ZERO_SCALAR,
    "harmonic_orders": (),
    "harmonic_coefficients": _NO_HARMONICS,
    "method": "least-squares",
    "converged": True,
    "n_iter": 0,
}
_EXPECTED_FIELDS = (
    "amplitude",
    "phase",
    "offset",
    "coulomb",
    "viscous",
    "load_coefficient",
    "inertia",
    "harmonic_orders",
    "harmonic_coefficients",
    "coefficients",
    "column_names",
    "covariance",
    "residual_rms",
    "n_used",
    "single_speed",
    "arc",
    "method",
    "converged",
    "n_iter",
    "fingerprint",
)


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


def _load_dposv() -> Any:
    """LAPACK's dposv from SciPy, imported on the first fast fit (``import gravdir`` stays
    light)."""
    global _DPOSV
    with IMPORT_LOCK:
        from scipy.linalg.lapack import dposv

    _DPOSV = dposv
    return dposv


def _plain_fields() -> bool:
    """Whether SweepFit still has exactly the fields this path fills (checked once)."""
    global _PLAIN
    if _PLAIN is None:
        _PLAIN = set(_field_names(object.__new__(SweepFit))) == set(_EXPECTED_FIELDS)
    return _PLAIN


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
    if n < 2 or t.shape != q.shape or v.shape != q.shape or not (_PLAIN or _plain_fields()):
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
    p = _COLUMNS[friction]
    x = np.empty((p + 1, n_used))
    x[0] = 1.0
    np.sin(qq, out=x[1])
    np.cos(qq, out=x[2])
    if p >= 4:
        np.sign(vv, out=x[3])
    if p == 5:
        x[4] = vv
    x[p] = tt if torque_sign == 1 else -tt
    # One product gives the Gram matrix and X'y.
    full = np.dot(x, x.T)
    f = full.tolist()
    single = friction == "coulomb"
    y_col = p
    if p >= 4:
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
                p = 4
    if n_used <= p:
        return None
    # Cholesky solve of G [inv | beta] = [I | X'y] (LAPACK dposv): a diagonal scaling changes
    # neither its accuracy (van der Sluis) nor the condition bound below, which is fit_sweep's
    # p * trace(inv(D^-1 G D^-1)) = p * sum_i inv(G)_ii G_ii.
    rhs = _IDENTITY_RHS[p].copy()
    rhs[:, p] = full[:p, y_col]
    _, sol, info = (_DPOSV or _load_dposv())(full[:p, :p], rhs)
    if info != 0:
        return None
    s = sol.tolist()
    cond = p * sum(s[i][i] * f[i][i] for i in range(p))
    if not 0.0 < cond <= _REFINE_ABOVE_COND:
        return None
    beta = sol[:, p].copy()
    resid = x[y_col] - np.dot(beta, x[:p])
    rss = float(resid @ resid)
    cov = sol[:, :p] * (rss / (n_used - p))
    beta.flags.writeable = False
    cov.flags.writeable = False
    # The fingerprint of the torque as given (gravdir.sweep._nan.sample_fingerprints); integer
    # arithmetic wraps modulo 2^64.
    bits = t.view(np.uint64) if t.flags.c_contiguous else np.ascontiguousarray(t).view(np.uint64)
    s1, s2 = int(np.add.reduce(bits)), int(np.dot(bits, bits))
    b = [row[p] for row in s]
    angle = math.atan2(b[2], b[1])
    fit = object.__new__(SweepFit)
    values = _TEMPLATE.copy()
    values["amplitude"] = np.float64(math.hypot(b[1], b[2]))
    values["phase"] = np.float64(math.pi if angle <= -math.pi else angle)
    values["offset"] = beta[0]
    if p >= 4:
        values["coulomb"] = beta[3]
        if p == 5:
            values["viscous"] = beta[4]
    values["coefficients"] = beta
    values["column_names"] = _NAMES[p]
    values["covariance"] = cov
    values["residual_rms"] = np.float64(math.sqrt(rss / n_used))
    values["n_used"] = np.int64(n_used)
    values["single_speed"] = np.bool_(single)
    values["arc"] = np.float64(arc)
    values["fingerprint"] = frozenset((multiset_digest(s1, s2, n),))
    fit.__dict__.update(values)
    return fit
