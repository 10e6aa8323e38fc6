"""The fusion with its tests and its model-error component: what :func:`fuse_up` returns.

The core (:func:`~gravdir.fusion._fuse.solve`) fuses sources of known covariance. A
between-source model error (an error each source carries whole, such as the model error a
trajectory fixes in a motion estimate) adds an isotropic variance to every source; given, it is
added; estimated, it is the Paule--Mandel value (the variance at which the consistency statistic
equals its degrees of freedom), and each source is judged against the others with the variance
calibrated without it, on an F reference (and Hotelling's where its own covariance is an
estimate). Derivation: docs/fusion.md, "Model error".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._hac import satterthwaite_dof
from gravdir._model_error import ModelError, paule_mandel
from gravdir._results import check_covariance_dof, warn_not_converged
from gravdir._sphere import tangent_basis
from gravdir._tails import chi2_sf, f_sf, hotelling_sf
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


def _shares(
    sources: list[_Source], variance: float, at: NDArray[np.float64]
) -> tuple[float, list[float], float]:
    """The trace (rad²) of the covariance ``C`` of the fusion of `sources`, each with the model
    error `variance` added, split into each source's share from its own covariance,
    ``tr(C I' C_k I' C)``, and the model error's share summed over the sources,
    ``sum_k tr(C I' (variance P) I' C)`` (``I'`` the source's information with the model error,
    ``P`` the projector on the directions it determines); the shares add up to the trace.

    To first order, in one tangent plane: that of `at` (the fusion's `up`), onto which each
    source's directions are projected (summed in 3-D, informations at slightly different `up`
    would have a small eigenvalue along the normal, whose inverse is no variance of `up`)."""
    basis = tangent_basis(at)
    # Informations in units of the largest eigenvalue, variances in its inverse: the products
    # below neither overflow nor underflow at any scale. The shares scale back at the end.
    unit = max(float(np.max(s.values)) for s in sources)
    directions = [s.directions @ basis.T for s in sources]
    values = [s.values / unit for s in sources]
    scaled = variance * unit
    inflated = [v / (1.0 + v * scaled) for v in values]
    total = sum((d.T * w) @ d for d, w in zip(directions, inflated, strict=True))
    cov = np.linalg.pinv(total, rcond=1e-12, hermitian=True)
    own, model = [], 0.0
    for v, d, w in zip(values, directions, inflated, strict=True):
        for_own = cov @ ((d.T * (w * w / v)) @ d) @ cov
        for_model = cov @ ((d.T * (w * w * scaled)) @ d) @ cov
        own.append(float(np.trace(for_own)) / unit)
        model += float(np.trace(for_model)) / unit
    return float(np.trace(cov)) / unit, own, model


def _fused_dof(
    sources: list[_Source],
    dofs: list[float],
    variance: float,
    at: NDArray[np.float64],
    model_dof: float = math.inf,
) -> tuple[float, float]:
    """The trace (rad²) of the covariance of the fusion of `sources` with the model error
    `variance` and its degrees of freedom: the Welch--Satterthwaite combination of the shares
    of :func:`_shares` (in the tangent plane of `at`), each source's own with its `dofs`, the
    model error's with `model_dof` (infinite for a given variance: exact)."""
    trace, own, model = _shares(sources, variance, at)
    return trace, satterthwaite_dof(own + [model], list(dofs) + [model_dof])


def _reference_dofs(
    sources: list[_Source], dofs: list[float], variance: float, at: NDArray[np.float64]
) -> tuple[float, list[float]]:
    """The denominator degrees of freedom of the F references of the consistency test (the
    Welch--Satterthwaite combination of the traces of the sources' covariances, each with its
    own degrees of freedom, and of the model error `variance` they carry, exact) and of each
    source's leave-one-out test (of its own trace, its model error and the fusion of the
    others, its shares in the tangent plane of `at`); infinite where no covariance was
    estimated."""
    own = [float(np.sum(1.0 / s.values)) for s in sources]
    model = [s.rank * variance for s in sources]
    overall = satterthwaite_dof(own + model, dofs + [math.inf] * len(sources))
    per_source = []
    for k in range(len(sources)):
        others = sources[:k] + sources[k + 1 :]
        trace, nu = _fused_dof(others, dofs[:k] + dofs[k + 1 :], variance, at)
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
    checked: Checked, dofs: list[float], at: NDArray[np.float64], max_iter: int, xtol: float
) -> tuple[list[float], list[float]]:
    """Per source k: its leave-one-out statistic with the model-error variance calibrated on
    the others, and its p-value: the larger of two references, each of which allows for one
    estimated part of the statistic's covariance and takes the other as known. F(d_k, ν_k),
    ν_k the others' degrees of freedom, allows for the model error (exact where it dominates);
    Hotelling's T² on the Welch--Satterthwaite degrees of freedom of the sources' own
    covariances (the source's and the others' shares) allows for those (exact where the
    source's own estimated covariance dominates). Both are the F reference's p-value where no
    source's covariance is estimated."""
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
        if not (d and nu > 0):
            stats.append(t)
            p_values.append(1.0)
            continue
        # The statistic's covariance: the source's own, the others' own, and the model error
        # that it and the others carry (taken as known in the Hotelling reference).
        _, own, model = _shares(others, variance, at)
        parts = [float(np.sum(1.0 / sources[k].values)), *own, model + sources[k].rank * variance]
        nu_own = satterthwaite_dof(parts, [dofs[k], *dofs[:k], *dofs[k + 1 :], math.inf])
        stats.append(t)
        p_values.append(max(f_sf(t / d, d, nu), hotelling_sf(t, d, nu_own)))
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
    dofs = [check_covariance_dof(e, f"estimates[{i}]") for i, e in enumerate(estimates)]
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
            stats, source_p = _calibrated_leave_one_out(checked, dofs, run.up, max_iter, xtol)
        else:
            stats = run.loo
            overall, per_source = _reference_dofs(sources, dofs, variance, run.up)
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
        # The scatter of the sources estimates the model error with `dof` degrees of freedom;
        # fewer where the sources' own estimated covariances dominate the fused one.
        covariance_dof = min(float(dof), _fused_dof(sources, dofs, variance, run.up, float(dof))[1])
    else:
        covariance_dof = _fused_dof(sources, dofs, variance, run.up)[1]
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
