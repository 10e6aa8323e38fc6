"""A calibration compared with what is installed: the angle, and that angle in standard
deviations of the calibration."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_same_shape
from gravdir._results import Result, UpResult, check_covariance_dof
from gravdir._sphere import tangent_basis
from gravdir._tails import f_sf
from gravdir.controllers._common import ABS_FLOOR, REL_FLOOR, unit_up, up_and_information

__all__ = ["SettingCheck", "compare_setting"]


@dataclass(frozen=True, eq=False, repr=False)
class SettingCheck(Result):
    """An estimate of `up` against the `up` a controller has installed.

    Attributes
    ----------
    angle : ndarray or float, shape (...)
        Angle between the estimate and the installed `up`, radians, in [0, pi].
    mahalanobis : ndarray or float, shape (...)
        That difference in standard deviations of the estimate: ``sqrt(δᵀ I δ)`` with ``δ`` the
        installed `up` as a tangent vector at the estimate (its direction, scaled by `angle`)
        and ``I`` the estimate's information. 0 where the estimate carries no information.
    dof : ndarray or int, shape (...)
        Number of tangent directions the estimate determines (rank of its information: 2, or
        fewer for a degenerate estimate); the degrees of freedom of `p_value`.
    up : ndarray, shape (..., 3)
        The estimate.
    installed_up : ndarray, shape (..., 3)
        The installed `up`.
    covariance_dof : float
        Degrees of freedom of the estimate's covariance: ``inf`` where it is known, finite
        where it is itself an estimate (the result's `covariance_dof`: an
        :class:`~gravdir.general.UpEstimate` from fitted sweeps, a
        :class:`~gravdir.fusion.FusedEstimate`).
    angle_deg, p_value
        `angle` in degrees; the probability that an estimate as uncertain as this one lies at
        least `mahalanobis` standard deviations from the truth if the installed `up` is the
        truth: chi-square with `dof` degrees of freedom for a known covariance, and
        ``mahalanobis² / dof`` on F(`dof`, `covariance_dof`) for an estimated one (1 where
        `dof` is 0).
    """

    _units = {
        "angle": "rad",
        "mahalanobis": "",
        "dof": "",
        "up": "",
        "installed_up": "",
        "covariance_dof": "",
    }

    angle: NDArray[np.float64]
    mahalanobis: NDArray[np.float64]
    dof: NDArray[np.int64]
    up: NDArray[np.float64]
    installed_up: NDArray[np.float64]
    covariance_dof: float

    @property
    def angle_deg(self) -> Any:
        """`angle` in degrees."""
        out = np.degrees(self.angle)
        return float(out) if np.ndim(out) == 0 else out

    @property
    def p_value(self) -> Any:
        """Chi-square survival of ``mahalanobis²`` with `dof` degrees of freedom (F survival
        of ``mahalanobis² / dof`` on (`dof`, `covariance_dof`) for an estimated covariance)."""
        d = np.asarray(self.mahalanobis, dtype=np.float64)
        k = np.asarray(self.dof)
        if math.isfinite(self.covariance_dof):
            return f_sf(d * d / np.maximum(k, 1), k, self.covariance_dof)
        with np.errstate(under="ignore"):
            two = np.exp(-0.5 * d * d)
        one = np.vectorize(lambda x: math.erfc(x / math.sqrt(2.0)), otypes=[float])(d)
        out = np.where(k >= 2, two, np.where(k == 1, one, 1.0))
        return float(out) if out.ndim == 0 else out

    def __repr__(self) -> str:
        if np.ndim(self.angle) == 0:
            return (
                f"SettingCheck(angle_deg={self.angle_deg:.4g}, "
                f"mahalanobis={float(self.mahalanobis):.4g}, p_value={self.p_value:.3g})"
            )
        return f"SettingCheck(batch_shape={np.shape(self.angle)})"


def compare_setting(
    result: Any, installed: Any, *, up_cov: ArrayLike | None = None
) -> SettingCheck:
    """Compare an estimate of `up` with the `up` a controller has installed.

    Parameters
    ----------
    result : UpResult or array_like, shape (..., 3)
        The calibration: a gravity-direction result or plain `up` vectors (unit within 1e-6),
        in the controller's base frame. The fusion of several calibrations with their model
        error estimated (``fuse_up(..., model_error_std="estimate")``, the honest covariance of
        estimates that each carry a model error of their own) is judged on an F reference.
    installed : UpResult or array_like, shape (..., 3)
        What is installed: the :class:`GravityDirection` of :func:`up_from_setting` (the
        controller's current setting read back), a :class:`ControllerSetting`, or unit
        vectors. Its own uncertainty is not used: the angle is measured in standard deviations
        of the estimate.
    up_cov : array_like, shape (..., 3, 3), optional
        Covariance of a plain `result`, rad² (see :func:`express_up`). Refused with a result.

    Returns
    -------
    SettingCheck
        The angle, the Mahalanobis distance in the estimate's tangent plane, its degrees of
        freedom and p-value.

    Raises
    ------
    ValueError
        If `result`, `installed` or `up_cov` is invalid (a result's `up` not unit within 1e-6,
        its `up_information` not finite, symmetric and positive semidefinite in the tangent
        plane within 1e-9, its `covariance_dof` not positive), or the leading axes do not
        broadcast.

    Notes
    -----
    The installed `up` ``w`` becomes a tangent vector at the estimate ``u`` by the logarithm
    map of the sphere, ``δ = θ (w - (u·w) u) / |w - (u·w) u|`` with ``θ`` the angle between
    them (exact at every angle, not only small ones), and
    ``mahalanobis = sqrt(Σ_j λ_j (v_jᵀ δ)²)`` over the eigenpairs of the tangent information.
    If the installed `up` is the truth and the estimate's uncertainty honest, ``mahalanobis²``
    follows a chi-square distribution with 2 degrees of freedom (mean 2); where the covariance
    is itself an estimate with ν degrees of freedom (the result's `covariance_dof`: of the
    sweeps' fits behind an ``UpEstimate``, of a fusion), ``mahalanobis² / 2`` follows F(2, ν)
    instead
    (docs/fusion.md, "Model error"). Where ``w = -u`` the
    direction of ``δ`` is undefined; the least informative direction is used (the smallest
    distance). See docs/controllers.md, "Comparing with the installed setting".

    References
    ----------
    Kay (1993), ch. 3 (the Fisher information as inverse covariance).

    Examples
    --------
    A calibration 0.05 degrees from the installed floor mount, known to 0.02 degrees per axis:

    >>> s = np.radians(0.02)
    >>> est = [np.sin(np.radians(0.05)), 0.0, np.cos(np.radians(0.05))]
    >>> check = compare_setting(est, [0.0, 0.0, 1.0], up_cov=np.eye(3) * s**2)
    >>> round(check.angle_deg, 6), round(float(check.mahalanobis), 3)
    (0.05, 2.5)
    """
    up, info = up_and_information(result, up_cov)
    if isinstance(installed, UpResult):
        w = unit_up(installed.up, "installed.up")
    elif isinstance(installed, Result):
        raise ValueError(
            "Expected `installed` to be a gravity-direction result or an array of `up` vectors, "
            f"got a {type(installed).__name__}."
        )
    else:
        w = unit_up(installed, "installed")
    batch = check_same_shape(installed=w[..., 0], result=up[..., 0])  # the leading axes
    u = np.broadcast_to(up, (*batch, 3))
    i3 = np.broadcast_to(info, (*batch, 3, 3))
    w = np.broadcast_to(w, (*batch, 3))
    angle, dist, dof = _compare(u, i3, w)
    return SettingCheck(
        angle=angle[()] if angle.ndim == 0 else angle,
        mahalanobis=dist[()] if dist.ndim == 0 else dist,
        dof=dof[()] if dof.ndim == 0 else dof,
        up=u.copy(),
        installed_up=w.copy(),
        covariance_dof=check_covariance_dof(result, "result"),
    )


def _compare(
    u: NDArray[np.float64], info: NDArray[np.float64], w: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    b = tangent_basis(u)
    with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
        cross = np.linalg.norm(np.cross(u, w), axis=-1)
        dot = np.sum(u * w, axis=-1)
        angle = np.arctan2(cross, dot)
        info2 = b @ info @ np.swapaxes(b, -1, -2)
        vals, vecs = np.linalg.eigh(0.5 * (info2 + np.swapaxes(info2, -1, -2)))
        top = vals.max(axis=-1, keepdims=True)
        keep = (top > 0) & (vals > np.maximum(REL_FLOOR * top, ABS_FLOOR))
        lam = np.where(keep, vals, 0.0)
        rank = keep.sum(axis=-1).astype(np.int64)
        v = w - dot[..., None] * u
        length = np.linalg.norm(v, axis=-1)
        ok = (length > 0) & (cross > 0)
        # The installed `up` as a unit tangent direction at the estimate, in the tangent basis.
        delta = (b @ v[..., None])[..., 0] / np.where(ok, length, 1.0)[..., None]
        comps = np.abs(np.swapaxes(vecs, -1, -2) @ delta[..., None])[..., 0] * angle[..., None]
        terms = np.sqrt(lam) * comps
        dist = np.hypot(terms[..., 0], terms[..., 1])
        # w = -u: every tangent direction is a geodesic; take the least informative one.
        opposite = np.sqrt(lam.min(axis=-1)) * angle
    dist = np.where(ok, dist, opposite)
    dist = np.where((angle == 0) | (rank == 0), 0.0, dist)
    return angle, dist, rank
