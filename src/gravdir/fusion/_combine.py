"""The fusion with its tests and its model-error component: what :func:`fuse_up` returns.

The core (:func:`~gravdir.fusion._fuse.solve`) fuses sources of known covariance. A
between-source model error (an error each source carries whole, such as the model error a
trajectory fixes in a motion estimate) adds an isotropic variance to every source; given, it is
added; estimated, it is the Paule--Mandel value (the variance at which the consistency statistic
equals its degrees of freedom), and each source is judged against the others with the variance
calibrated without it, on an F reference. Derivation: docs/fusion.md, "Model error".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import satterthwaite_dof
from gravdir._model_error import ModelError, paule_mandel
from gravdir._results import warn_not_converged
from gravdir._tails import chi2_sf, f_sf
from gravdir.errors import DegenerateGeometryError, InsufficientDataError
from gravdir.fusion._fuse import (
    Checked,
    Solution,
    _Source,
    check_estimates,
    solve,
    with_model_error,
)
from gravdir.fusion._result import FusedEstimate

__all__ = ["fuse"]


def _dof(sources: list[_Source]) -> int:
    return sum(s.rank for s in sources) - 2


def model_error_variance(sources: list[_Source], max_iter: int, xtol: float) -> float:
    """The Paule--Mandel model-error variance of independent sources, rad²: 0 where their
    statistic is at most its degrees of freedom, else the variance at which it equals them.

    The statistic falls as the variance grows (every weight falls in the Loewner order), and
    with the variance ``S / dof`` it is at most ``dof``, S the sum of squared tangent
    distances to the fusion (each weight is at most 1 / variance): the root lies in that
    bracket (:func:`gravdir._model_error.paule_mandel`).
    """
    dof = _dof(sources)
    groups = [[i] for i in range(len(sources))]

    def excess(variance: float) -> float:
        run = solve(
            with_model_error(sources, variance), groups, {}, max_iter, xtol, leave_one_out=False
        )
        return run.chi2 - dof

    if dof <= 0:
        return 0.0
    first = solve(sources, groups, {}, max_iter, xtol, leave_one_out=False)
    if first.chi2 <= dof:
        return 0.0
    return paule_mandel(excess, float(first.lin.x @ first.lin.x) / dof)


def _fused_dof(
    sources: list[_Source], dofs: list[float], variance: float
) -> tuple[float, float]:
    """The trace (rad²) of the covariance ``C`` of the fusion of `sources`, each with the model
    error `variance` added, and its degrees of freedom: the Welch--Satterthwaite combination
    of each source's share of ``C`` from its own covariance, ``tr(C I' C_k I' C)`` with the
    source's `dofs`, and from the model error, ``tr(C I' (variance P) I' C)``, which is exact
    (``I'`` the source's information with the model error, ``P`` the projector on the directions
    it determines)."""
    inflated = [s.values / (1.0 + s.values * variance) for s in sources]
    total = sum((s.directions.T * w) @ s.directions for s, w in zip(sources, inflated, strict=True))
    cov = np.linalg.pinv(total, rcond=1e-12, hermitian=True)
    shares, share_dofs = [], []
    for s, w, nu in zip(sources, inflated, dofs, strict=True):
        for weights, dof in ((w * w / s.values, nu), (w * w * variance, math.inf)):
            part = cov @ ((s.directions.T * weights) @ s.directions) @ cov
            shares.append(float(np.trace(part)))
            share_dofs.append(dof)
    return float(np.trace(cov)), satterthwaite_dof(shares, share_dofs)


def _reference_dofs(
    sources: list[_Source], dofs: list[float], variance: float
) -> tuple[float, list[float]]:
    """The denominator degrees of freedom of the F references of the consistency test (the
    Welch--Satterthwaite combination of the traces of the sources' covariances, each with its
    own degrees of freedom, and of the model error `variance` they carry, exact) and of each
    source's leave-one-out test (of its own trace, its model error and the fusion of the
    others); infinite where no covariance was estimated."""
    own = [float(np.sum(1.0 / s.values)) for s in sources]
    model = [s.rank * variance for s in sources]
    overall = satterthwaite_dof(own + model, dofs + [math.inf] * len(sources))
    per_source = []
    for k in range(len(sources)):
        others = sources[:k] + sources[k + 1 :]
        trace, nu = _fused_dof(others, dofs[:k] + dofs[k + 1 :], variance)
        parts = [own[k], model[k], trace]
        per_source.append(satterthwaite_dof(parts, [dofs[k], math.inf, nu]))
    return overall, per_source


def _f_or_chi2(t: float, d: int, nu: float) -> float:
    """The survival of a statistic `t` with `d` degrees of freedom: chi-square, or ``t / d``
    on F(d, nu) for a finite `nu`."""
    if not d:
        return 1.0
    return f_sf(t / d, d, nu) if math.isfinite(nu) else chi2_sf(t, d)


def _calibrated_leave_one_out(
    checked: Checked, max_iter: int, xtol: float
) -> tuple[list[float], list[float]]:
    """Per source k: its leave-one-out statistic with the model-error variance calibrated on
    the others, and its p-value on F(d_k, ν_k), ν_k the others' degrees of freedom."""
    sources, groups = checked.sources, checked.groups
    stats, p_values = [], []
    for k in range(len(sources)):
        others = sources[:k] + sources[k + 1 :]
        nu = _dof(others)
        try:
            variance = model_error_variance(others, max_iter, xtol) if nu > 0 else 0.0
        except DegenerateGeometryError:  # the others leave a direction open: no calibration
            stats.append(0.0)
            p_values.append(1.0)
            continue
        run = solve(with_model_error(sources, variance), groups, {}, max_iter, xtol)
        t, d = run.loo[k], run.loo_dof[k]
        stats.append(t)
        p_values.append(f_sf(t / d, d, nu) if d and nu > 0 else 1.0)
    return stats, p_values


def fuse(
    estimates: tuple[Any, ...],
    cross_cov: Any,
    model_error_std: ModelError,
    significance: float,
    max_iter: int,
    xtol: float,
) -> FusedEstimate:
    """:func:`~gravdir.fusion.fuse_up` on checked options."""
    checked = check_estimates(estimates, cross_cov)
    sources, n = checked.sources, len(checked.sources)
    if model_error_std != 0.0 and checked.pairs:
        raise ValueError(
            "Expected `model_error_std=0` with `cross_cov`, got both: a model error shared by "
            "correlated sources is not defined."
        )
    estimated = model_error_std == "estimate"
    # The degrees of freedom of each source's covariance (infinite where it is exact).
    dofs = [float(getattr(e, "covariance_dof", math.inf)) for e in estimates]
    if estimated and n < 3:
        raise InsufficientDataError(
            f"Expected at least 3 estimates with model_error_std='estimate' (each is judged "
            f"against a model error calibrated on the others), got {n}."
        )
    if estimated:
        variance = model_error_variance(sources, max_iter, xtol)
    else:
        variance = float(model_error_std) ** 2
    with np.errstate(under="ignore"):
        # Under "estimate" the leave-one-out statistics come from the calibrated runs below.
        run = solve(
            with_model_error(sources, variance), checked.groups, checked.pairs, max_iter, xtol,
            leave_one_out=not estimated,
        )  # fmt: skip
        if estimated:
            stats, source_p = _calibrated_leave_one_out(checked, max_iter, xtol)
        else:
            stats = run.loo
            overall, per_source = _reference_dofs(sources, dofs, variance)
            source_p = [
                _f_or_chi2(t, d, nu)
                for t, d, nu in zip(stats, run.loo_dof, per_source, strict=True)
            ]
    if not run.converged:
        warn_not_converged("fuse_up", max_iter, stacklevel=4)
    dof = _dof(sources)
    # With the variance estimated the statistic equals its dof whenever the variance is
    # positive: the verdict is the leave-one-out tests', Bonferroni-combined.
    p_value = min(1.0, n * min(source_p)) if estimated else _f_or_chi2(run.chi2, dof, overall)
    consistent = p_value >= significance
    outlier: int | None = None
    without: FusedEstimate | None = None
    if n >= 3 and not consistent:
        k = min(range(n), key=lambda i: (source_p[i], -stats[i]))
        if source_p[k] < significance:
            outlier = k
            without = _without(
                estimates, k, checked.pairs, model_error_std, significance, max_iter, xtol
            )
    if estimated and variance > 0.0:
        covariance_dof = float(dof)  # the scatter of the sources estimates the model error
    else:
        covariance_dof = _fused_dof(sources, dofs, variance)[1]
    return _result(
        run, checked, variance, covariance_dof, dof, p_value, significance, stats, source_p,
        outlier, without,
    )  # fmt: skip


def _result(
    run: Solution,
    checked: Checked,
    variance: float,
    covariance_dof: float,
    dof: int,
    p_value: float,
    significance: float,
    stats: list[float],
    source_p: list[float],
    outlier: int | None,
    without: FusedEstimate | None,
) -> FusedEstimate:
    return FusedEstimate(
        up=run.up,
        up_information=run.information(),
        chi2=run.chi2,
        dof=dof,
        p_value=p_value,
        significance=significance,
        consistent=p_value >= significance,
        nsigma=np.sqrt(np.asarray(stats)),
        source_p_value=np.asarray(source_p),
        outlier=outlier,
        outlier_nsigma=None if outlier is None else math.sqrt(stats[outlier]),
        without_outlier=without,
        model_error_std=math.sqrt(variance),
        covariance_dof=covariance_dof,
        n_sources=len(checked.sources),
        converged=run.converged,
        n_iter=run.n_iter,
        fingerprint=checked.fingerprint,
    )


def _without(
    estimates: tuple[Any, ...],
    k: int,
    pairs: Mapping[tuple[int, int], NDArray[np.float64]],
    model_error_std: ModelError,
    significance: float,
    max_iter: int,
    xtol: float,
) -> FusedEstimate | None:
    """The fusion of all estimates but `k` (indices renumbered), None if they leave `up` open
    or are too few for the model error asked for."""
    rest = estimates[:k] + estimates[k + 1 :]

    def renumber(i: int) -> int:
        return i if i < k else i - 1

    sub = {(renumber(i), renumber(j)): x for (i, j), x in pairs.items() if k not in (i, j)}
    try:
        return fuse(rest, sub or None, model_error_std, significance, max_iter, xtol)
    except (DegenerateGeometryError, InsufficientDataError):
        return None
