"""fit_sweep_common_mode: forward/backward averaging on a common grid, then a linear fit."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import (
    NanPolicy,
    apply_torque_sign,
    check_count,
    check_sweep_angles,
    drop_nan_samples,
)
from gravdir.errors import InsufficientDataError
from gravdir.sweep._design import (
    DEFAULT_MIN_ARC,
    check_min_arc,
    check_min_speed,
    check_sweep_inputs,
    design,
    is_unit,
    pow2_scale,
    speed_threshold,
    unscale,
)
from gravdir.sweep._nan import check_nan_policy, sample_fingerprints
from gravdir.sweep._result import SweepFit, make_fit
from gravdir.sweep._solve import dot, predict, residual_lag1_of, solve_normal

# Largest common grid: a million points per sweep bounds the memory and time of a call (the
# default, the smaller pass's sample count, is never larger than the data).
MAX_GRID = 1_000_000


def _pass_average(
    qi: NDArray[np.float64],
    ti: NDArray[np.float64],
    vi: NDArray[np.float64],
    min_speed: float | None,
    n_grid: int | None,
    min_arc: float,
    where: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The common grid of one sweep, the mean of its two passes there, and their half-difference."""
    speed = np.abs(vi)
    thr = speed_threshold(speed.max(), min_speed)
    fwd = (vi > 0) & (speed >= thr)
    bwd = (vi < 0) & (speed >= thr)
    if np.count_nonzero(fwd) < 4 or np.count_nonzero(bwd) < 4:
        raise InsufficientDataError(
            "Expected `velocity` to have at least 4 samples in each direction above "
            f"`min_speed`, got {np.count_nonzero(fwd)} forward and {np.count_nonzero(bwd)} "
            f"backward{where}."
        )
    lo = max(qi[fwd].min(), qi[bwd].min())
    hi = min(qi[fwd].max(), qi[bwd].max())
    if hi - lo < max(min_arc, 1e-12):
        raise InsufficientDataError(
            f"Expected the forward and backward passes of `q` to overlap by at least "
            f"{np.degrees(min_arc):.1f}° (`min_arc`), got {np.degrees(max(hi - lo, 0)):.2f}°"
            f"{where}."
        )
    m = n_grid if n_grid is not None else min(np.count_nonzero(fwd), np.count_nonzero(bwd))
    grid = np.linspace(lo, hi, m)
    order_f = np.argsort(qi[fwd], kind="stable")
    order_b = np.argsort(qi[bwd], kind="stable")
    tf = np.interp(grid, qi[fwd][order_f], ti[fwd][order_f])
    tb = np.interp(grid, qi[bwd][order_b], ti[bwd][order_b])
    return grid, 0.5 * (tf + tb), 0.5 * (tf - tb)


def _omit(
    qi: NDArray[np.float64],
    ti: NDArray[np.float64],
    vi: NDArray[np.float64],
    batch: tuple[int, ...],
    i: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """One sweep without its NaN samples (``nan_policy="omit"``)."""
    kept, keep = drop_nan_samples({"q": qi, "torque": ti, "velocity": vi}, "omit")
    if not keep.any():
        where = f" (at batch index {np.unravel_index(i, batch)})" if batch else ""
        raise InsufficientDataError(
            f"Expected samples without NaN in `q`, `torque` and `velocity`, got none{where}: "
            "every sample holds a NaN."
        )
    return kept["q"], kept["torque"], kept["velocity"]


def fit_sweep_common_mode(
    q: ArrayLike,
    *,
    velocity: ArrayLike,
    torque: ArrayLike,
    min_speed: float | None = None,
    n_grid: int | None = None,
    min_arc: float = DEFAULT_MIN_ARC,
    torque_sign: Literal[1, -1] = 1,
    nan_policy: NanPolicy = "raise",
) -> SweepFit:
    """Forward/backward averaging: the mean of the two passes on a common grid, then a fit.

    Parameters
    ----------
    q, velocity, torque : array_like, shape (..., n)
        As in :func:`~gravdir.sweep.fit_sweep` (radians within ±4π, one sample axis, any finite
        torque). Samples with ``velocity > 0`` form the forward pass, those with
        ``velocity < 0`` the backward pass.
    min_speed : float, optional
        As in :func:`~gravdir.sweep.fit_sweep` (default 10% of the largest speed).
    n_grid : int, optional
        Number of points of the common grid, an integer from 8 to 1 000 000 (default: the
        smaller pass's sample count).
    min_arc : float, optional
        Smallest accepted span of the overlap of the two passes, radians, from 0 to 4π.
    torque_sign : {1, -1}, optional
        As in :func:`~gravdir.sweep.fit_sweep`.
    nan_policy : {"raise", "omit"}, optional
        ``"raise"`` (default) refuses a NaN in `q`, `torque` or `velocity` with an error naming
        the array; ``"omit"`` leaves out every sample that holds one, sweep by sweep (a sweep of
        a batch loses only its own NaN samples) before the passes are averaged. Infinities are
        refused under both.

    Returns
    -------
    SweepFit
        ``method="common-mode"``; ``coulomb`` is the mean half-difference of the passes (all the
        friction at the sweep speed), ``viscous`` and ``load_coefficient`` are zero and
        ``single_speed`` is true. ``covariance`` covers ``(offset, sin, cos, coulomb)``; it treats
        the grid values as independent, which interpolation makes only approximately true. The
        solve is direct: ``converged`` is true and ``n_iter`` 0.

    Raises
    ------
    ValueError, InsufficientDataError
        As :func:`~gravdir.sweep.fit_sweep` (a NaN under ``nan_policy="raise"`` included), and
        when the passes do not overlap by `min_arc` or hold fewer than 4 samples each.

    Warns
    -----
    GravdirWarning
        As :func:`~gravdir.sweep.fit_sweep`, where a variance lies outside the float range.

    See Also
    --------
    fit_sweep : one least-squares fit of both passes, with no grid and no interpolation.

    Notes
    -----
    On a common grid :math:`q_k`, the mean of the passes
    :math:`\\tfrac12(\\tau_+ + \\tau_-) = c + A\\sin(q + \\varphi)` removes every friction term
    that is odd in the velocity, and the half-difference :math:`\\tfrac12(\\tau_+ - \\tau_-)` is
    the friction. The interpolation onto the grid is linear, so curvature of the torque between
    samples biases the result slightly; :func:`~gravdir.sweep.fit_sweep` needs no grid and is
    exact.

    References
    ----------
    US 11,446,825 B2, FIGS. 3A-3B and the description of method 200 (FIG. 2): the joint is
    rotated forward and backward at a substantially constant speed, the common mode of the
    torque recordings of the two passes is calculated, and its sinusoidal portion (Equation 2)
    is fitted. Kay (1993), ch. 4 and 8 (the least-squares fit of the mean and its covariance).

    Examples
    --------
    >>> q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    >>> v = np.concatenate([np.full(200, 0.2), np.full(200, -0.2)])
    >>> torque = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v)
    >>> fit = fit_sweep_common_mode(q, velocity=v, torque=torque)
    >>> print(f"{fit.amplitude:.4f} {fit.phase:.4f} {fit.coulomb:.4f}")
    5.0000 0.4000 0.8000
    """
    omit = check_nan_policy(nan_policy)
    qq, tt, vv, _ = check_sweep_inputs(q, torque, velocity, finite=not omit)
    fingerprint = sample_fingerprints((qq, tt, vv, None), omit)
    tt = apply_torque_sign(tt, torque_sign)
    batch = qq.shape[:-1]
    flat = [a.reshape(-1, a.shape[-1]) for a in (qq, tt, vv)]
    rows = [(flat[0][i], flat[1][i], flat[2][i]) for i in range(flat[0].shape[0])]
    if omit:
        rows = [_omit(qi, ti, vi, batch, i) for i, (qi, ti, vi) in enumerate(rows)]
    for qi, _, _ in rows:
        check_sweep_angles(float(qi.max()), float(qi.min()))
    min_speed = check_min_speed(min_speed)
    min_arc = check_min_arc(min_arc)
    if n_grid is not None:
        n_grid = check_count(n_grid, "n_grid", minimum=8, maximum=MAX_GRID)
    # Underflow (a sample of 1e-300 beside one of 1) only rounds towards zero: never an error.
    with np.errstate(under="ignore"):
        # Torques of extreme magnitude are averaged and fitted in units of a power of two near their
        # largest magnitude (exact), undone on the results.
        peak = [float(np.max(np.abs(ti))) for _, ti, _ in rows]
        torque_scale = pow2_scale(np.reshape(peak, batch) if batch else peak[0])
        scale_rows = np.broadcast_to(torque_scale, batch).reshape(-1)
        grids, means, halves = [], [], []
        for i, (qi, ti, vi) in enumerate(rows):
            where = f" (at batch index {np.unravel_index(i, batch)})" if batch else ""
            grid, mean, half = _pass_average(
                qi, ti / scale_rows[i], vi, min_speed, n_grid, min_arc, where
            )
            grids.append(grid)
            means.append(mean)
            halves.append(half)
        sizes = {g.size for g in grids}
        if len(sizes) != 1:
            raise ValueError(
                "Expected the sweeps of a batch to give grids of one size, got sizes "
                f"{sorted(sizes)}; pass `n_grid`."
            )
        grid_a = np.stack(grids).reshape(batch + (grids[0].size,))
        mean_a = np.stack(means).reshape(grid_a.shape)
        half_a = np.stack(halves).reshape(grid_a.shape)
        x, names, gram, _ = design(grid_a, grid_a, None, None, 0, False, ())
        beta, inv_gram, rss = solve_normal(x, mean_a, gram)
        m_pts = grids[0].size
        coulomb = half_a.mean(axis=-1)
        var_c = np.var(half_a, axis=-1, ddof=1) / m_pts
        cov = np.zeros(batch + (4, 4))
        cov[..., :3, :3] = np.asarray(rss / (m_pts - 3))[..., None, None] * inv_gram
        cov[..., 3, 3] = var_c
        beta4 = np.concatenate([beta, coulomb[..., None]], axis=-1)
        rms: Any = np.sqrt(rss / m_pts)
        resid = mean_a - predict(beta, x)  # along the grid
        lag1 = residual_lag1_of(resid, dot(mean_a, mean_a))
        names4 = [*names, "coulomb"]
        if not is_unit(torque_scale):
            beta4, cov, rms = unscale(
                beta4, cov, rms, names4, torque_scale, 1.0, "fit_sweep_common_mode"
            )
        arc = grid_a[..., -1] - grid_a[..., 0]
        # Per-sweep values: arrays over the batch, scalars for one sweep.
        n_used: Any
        single: Any
        converged: Any
        n_iter: Any
        if batch:
            n_used, single, arc, converged, n_iter = (
                np.full(batch, m_pts, dtype=np.int64),
                np.ones(batch, dtype=bool),
                arc,
                np.ones(batch, dtype=bool),
                np.zeros(batch, dtype=np.int64),
            )
        else:
            n_used, single, arc, converged, n_iter = np.int64(m_pts), np.True_, arc[()], True, 0
        return make_fit(
            beta4,
            cov,
            names4,
            (),
            None,
            rms,
            lag1,
            m_pts - 3,
            n_used,
            single,
            arc,
            "common-mode",
            converged,
            n_iter,
            fingerprint,
        )
