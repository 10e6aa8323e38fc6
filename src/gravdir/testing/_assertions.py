"""Assertions that judge an estimate against the truth in units of its own reported uncertainty."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_scalar
from gravdir._imports import IMPORT_LOCK
from gravdir._sphere import tangent_basis, up_information_from_cov

__all__ = [
    "InconsistentEstimateError",
    "assert_covariance_honest",
    "assert_tilt_azimuth_consistent",
    "assert_up_consistent",
    "assert_up_covariance_honest",
    "assert_within_uncertainty",
    "up_error_tangent",
]

_UNIT_TOL = 1e-6  # how far from unit norm an `up` may be (the library's own tolerance)
_F = TypeVar("_F", bound=Callable[..., Any])


def _quiet(func: _F) -> _F:
    """Run `func` with floating-point warnings off: an overflow or a NaN in a check makes the
    comparison fail (``not d <= limit``), never a stray FloatingPointError."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # a failed check points at the caller's line, as `assert` does
        with np.errstate(all="ignore"):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class InconsistentEstimateError(AssertionError, ValueError):
    """An estimate disagrees with the truth beyond the uncertainty it reports.

    Raised by every ``assert_*`` of :mod:`gravdir.testing`. It is an :class:`AssertionError`,
    so a test runner reports it as a failed check (``pytest.raises(AssertionError)`` catches
    it), and a :class:`ValueError`, as every refusal of its inputs by gravdir is: the message
    names the argument that disagrees in backticks.

    Examples
    --------
    >>> try:
    ...     assert_within_uncertainty(2.0, 0.1, 1.0)
    ... except AssertionError as err:
    ...     print(type(err).__name__, isinstance(err, ValueError))
    InconsistentEstimateError True
    """


def _unit(x: ArrayLike, name: str) -> NDArray[np.float64]:
    u = check_array(x, name)
    if u.shape != (3,):
        raise ValueError(f"Expected `{name}` to have shape (3,), got {u.shape}.")
    length = float(np.linalg.norm(u))
    if abs(length - 1.0) > _UNIT_TOL:
        raise ValueError(f"Expected `{name}` to have unit norm, got a norm of {length:.6g}.")
    return u / length


def _floats(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """`x` as floats, infinities allowed: NaN is refused, and what :func:`check_array` refuses
    (text, complex values, ragged sequences, integers beyond the float range)."""
    out = check_array(x, name, finite=False)
    if np.isnan(out).any():
        raise ValueError(f"Expected `{name}` without NaN, got {out}.")
    return out


def _threshold(nsigma: float | None, p: float | None, default_p: float, dof: int) -> float:
    """The largest squared Mahalanobis distance accepted, from `nsigma` or `p`."""
    if nsigma is not None and p is not None:
        raise ValueError("Expected one of `nsigma` and `p`, got both.")
    if nsigma is not None:
        return float(np.square(np.float64(check_positive(nsigma, "nsigma"))))
    prob = default_p if p is None else check_positive(p, "p")
    if not prob < 1:
        raise ValueError(f"Expected `p` in (0, 1), got {p!r}.")
    if dof == 2:  # the chi-square survival function of 2 dof is exp(-x / 2)
        return -2.0 * math.log(prob)
    with IMPORT_LOCK:
        from scipy.stats import chi2  # only where needed: scipy.stats is slow to import

    return float(chi2.isf(prob, dof))


def _information_2d(
    result: Any, up: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues (2,) and eigenvectors (2, 2) of the tangent-plane information of `result`.

    From `up_information` where the result has it, else from `up_cov`: a zero variance is an
    infinite information, an infinite variance a zero one.
    """
    basis = tangent_basis(up)
    info = getattr(result, "up_information", None)
    if info is not None:
        i3 = check_array(info, "result.up_information")
        if i3.shape != (3, 3):
            raise ValueError(f"Expected `result.up_information` of shape (3, 3), got {i3.shape}.")
        vals, vecs = np.linalg.eigh(0.5 * (basis @ i3 @ basis.T + (basis @ i3 @ basis.T).T))
        return np.maximum(vals, 0.0), vecs
    cov = getattr(result, "up_cov", None)
    if cov is None:
        raise ValueError(
            "Expected `result` to have `up_information` or `up_cov`, got "
            f"a {type(result).__name__} with neither."
        )
    c3 = _floats(cov, "result.up_cov")
    if c3.shape != (3, 3):
        raise ValueError(f"Expected `result.up_cov` of shape (3, 3) without NaN, got {c3.shape}.")
    if np.isinf(c3).any():  # an infinite variance carries no information
        with np.errstate(invalid="ignore"):  # inf * 0 in the projection, handled there
            i3 = up_information_from_cov(up, c3)
        vals, vecs = np.linalg.eigh(basis @ i3 @ basis.T)
        return np.maximum(vals, 0.0), vecs
    c2 = basis @ c3 @ basis.T
    vals, vecs = np.linalg.eigh(0.5 * (c2 + c2.T))
    top = max(float(vals.max()), 0.0)
    if np.any(vals < -1e-9 * top):
        raise ValueError(
            f"Expected `result.up_cov` positive semi-definite, got eigenvalues {vals}."
        )
    positive = vals > 1e-15 * top if top > 0 else np.zeros(2, dtype=bool)
    return np.where(positive, 1.0 / np.where(positive, vals, 1.0), np.inf), vecs


def _mahalanobis2(
    e: NDArray[np.float64], vals: NDArray[np.float64], vecs: NDArray[np.float64]
) -> float:
    """:math:`e^\\top I e` from the eigen-decomposition of `I`; an infinite information counts
    only where `e` has a component along it."""
    proj2 = (vecs.T @ e) ** 2
    with np.errstate(invalid="ignore"):  # inf * 0 where the error has no component
        terms = np.where(proj2 == 0.0, 0.0, proj2 * vals)
    return float(np.sum(terms))


@_quiet
def up_error_tangent(up: ArrayLike, true_up: ArrayLike) -> NDArray[np.float64]:
    """The error of an estimated `up` in its tangent plane, rad: the logarithm map of the truth.

    Parameters
    ----------
    up : array_like, shape (3,)
        The estimate, a unit vector.
    true_up : array_like, shape (3,)
        The truth, a unit vector.

    Returns
    -------
    ndarray, shape (2,)
        :math:`\\theta\\,B\\,d`, with :math:`\\theta` the angle between the two vectors,
        :math:`d` the unit direction from `up` toward `true_up` in the tangent plane and
        :math:`B` the tangent basis of `up` (:func:`gravdir._sphere.tangent_basis`, the basis of
        ``up_information``): its norm is the angular error.

    Raises
    ------
    ValueError
        If either vector is not a finite unit 3-vector (within 1e-6).

    Examples
    --------
    >>> e = up_error_tangent([0.0, 0.0, 1.0], [np.sin(0.01), 0.0, np.cos(0.01)])
    >>> round(float(np.linalg.norm(e)), 12)
    0.01
    """
    u, t = _unit(up, "up"), _unit(true_up, "true_up")
    perp = t - (t @ u) * u
    s = float(np.linalg.norm(perp))
    angle = math.atan2(s, float(t @ u))
    if s == 0.0:
        if angle == 0.0:
            return np.zeros(2)
        perp, s = tangent_basis(u)[0], 1.0  # antipodal: any tangent direction is shortest
    out: NDArray[np.float64] = tangent_basis(u) @ (angle * perp / s)
    return out


@_quiet
def assert_within_uncertainty(
    value: ArrayLike,
    std: ArrayLike,
    truth: ArrayLike,
    nsigma: float = 5.0,
    *,
    period: float | None = None,
    atol: float = 0.0,
    name: str = "value",
) -> None:
    """Assert that every entry of `value` lies within `nsigma` of its own standard deviations.

    Parameters
    ----------
    value, std, truth : array_like
        The estimate, its reported standard deviation (non-negative; ``inf`` accepts anything)
        and the truth; they broadcast.
    nsigma : float, optional
        Accepted distance in standard deviations (default 5: a Gaussian error passes with
        probability 1 - 6e-7).
    period : float, optional
        Period of an angle (e.g. ``2 pi`` for an azimuth): differences are wrapped into
        ``[-period/2, period/2)``. Default None: no wrapping.
    atol : float, optional
        Absolute slack added to ``nsigma * std`` (default 0), for rounding of noise-free data.
    name : str, optional
        What is checked, for the message.

    Raises
    ------
    InconsistentEstimateError
        An :class:`AssertionError` (and :class:`ValueError`), if some
        ``|value - truth| > nsigma * std + atol``; the message gives the worst entry in
        standard deviations.
    ValueError
        If an input is not numeric, a standard deviation is negative or NaN, the shapes do not
        broadcast, or `nsigma`, `period` or `atol` is out of range.

    Examples
    --------
    >>> assert_within_uncertainty(1.02, 0.01, 1.0, nsigma=3)
    >>> assert_within_uncertainty(3.1, 0.1, -3.1, period=2 * np.pi)  # 0.08 apart on a circle
    >>> try:
    ...     assert_within_uncertainty(1.05, 0.01, 1.0, nsigma=3)
    ... except AssertionError as err:
    ...     print(str(err).split(";")[0])
    `value` = 1.05 lies 5 standard deviations from the truth 1
    """
    __tracebackhide__ = True  # pytest shows the caller's frame, not gravdir's
    v, s, t = _floats(value, "value"), _floats(std, "std"), _floats(truth, "truth")
    if (s < 0).any():
        raise ValueError(f"Expected `std` non-negative and not NaN, got {s}.")
    if not (np.isfinite(v).all() and np.isfinite(t).all()):
        raise ValueError("Expected `value` and `truth` to be finite.")
    k = check_positive(nsigma, "nsigma")
    slack = check_positive(atol, "atol", allow_zero=True)
    try:
        v, s, t = np.broadcast_arrays(v, s, t)
    except ValueError:
        raise ValueError(
            "Expected `value`, `std` and `truth` to broadcast, got "
            f"{v.shape}, {s.shape}, {t.shape}."
        ) from None
    diff = v - t
    if period is not None:
        span = check_positive(period, "period")
        diff = (diff + span / 2) % span - span / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(np.abs(diff) <= slack, 0.0, np.abs(diff) / s)
    bad = np.abs(diff) > k * s + slack
    if bad.any():
        worst = np.unravel_index(int(np.argmax(np.where(bad, z, -1.0))), z.shape)
        where = "" if v.ndim == 0 else f"[{', '.join(str(int(i)) for i in worst)}]"
        raise InconsistentEstimateError(
            f"`{name}`{where} = {v[worst]:.6g} lies {z[worst]:.3g} standard deviations from the "
            f"truth {t[worst]:.6g}; accepted: {k:g} (std {s[worst]:.3g}, atol {slack:g})."
        )


@_quiet
def assert_up_consistent(
    result: Any, true_up: ArrayLike, *, nsigma: float | None = None, p: float | None = None
) -> None:
    """Assert that `true_up` lies within the uncertainty an estimate of `up` reports.

    Parameters
    ----------
    result : UpResult or object
        Anything with ``up`` (3,) and ``up_information`` (3, 3, 1/rad²), as every
        :class:`gravdir.UpResult` has, or ``up`` and ``up_cov`` (3, 3, rad²), as a user's own
        result may have.
    true_up : array_like, shape (3,)
        The true `up`, a unit vector.
    nsigma : float, optional
        Accept a Mahalanobis distance up to `nsigma`.
    p : float, optional
        Accept the distances a correct estimate exceeds with probability `p` (default 1e-6, a
        distance of 5.26: the chi-square quantile of 2 degrees of freedom). Give one of
        `nsigma` and `p`.

    Raises
    ------
    InconsistentEstimateError
        An :class:`AssertionError`, if the squared Mahalanobis distance :math:`e^\\top I e`
        exceeds the threshold.
    ValueError
        If `result` has no `up` or neither `up_information` nor `up_cov`, a shape is wrong, a
        vector is not unit, or both or an out-of-range `nsigma` / `p` are given.

    Notes
    -----
    :math:`e` is :func:`up_error_tangent` (the truth seen from the estimate, in the tangent
    plane where `up_information` lives) and :math:`I` the tangent-plane information. A
    direction without information (a zero eigenvalue) accepts any error along it; an estimate
    that reports zero covariance must be exact. The test is one-sided by nature: it catches
    an estimate that is wrong or over-confident in one draw, not a covariance that is a factor
    of two too small, which :func:`assert_up_covariance_honest` catches over many draws.

    Examples
    --------
    >>> from gravdir.frames import up_from_tilt_azimuth
    >>> from gravdir._sphere import up_information_from_cov
    >>> from types import SimpleNamespace
    >>> up = up_from_tilt_azimuth(0.3, 1.0)
    >>> est = SimpleNamespace(up=up, up_cov=1e-6 * (np.eye(3) - np.outer(up, up)))
    >>> assert_up_consistent(est, up_from_tilt_azimuth(0.302, 1.0))  # 2 sigma away
    >>> try:
    ...     assert_up_consistent(est, up_from_tilt_azimuth(0.31, 1.0))
    ... except AssertionError as err:
    ...     print(str(err).split(";")[0])
    `up` lies 10 standard deviations (Mahalanobis) from the truth
    """
    __tracebackhide__ = True  # pytest shows the caller's frame, not gravdir's
    if not hasattr(result, "up"):
        raise ValueError(f"Expected `result` to have `up`, got a {type(result).__name__}.")
    up = _unit(result.up, "result.up")
    truth = _unit(true_up, "true_up")
    limit = _threshold(nsigma, p, 1e-6, 2)
    vals, vecs = _information_2d(result, up)
    e = up_error_tangent(up, truth)
    d2 = _mahalanobis2(e, vals, vecs)
    if not d2 <= limit:
        angle = math.degrees(float(np.linalg.norm(e)))
        raise InconsistentEstimateError(
            f"`up` lies {math.sqrt(d2):.3g} standard deviations (Mahalanobis) from the truth; "
            f"accepted {math.sqrt(limit):.3g}. Angle {angle:.4g}°, estimate {up.round(6)}, "
            f"truth {truth.round(6)}."
        )


@_quiet
def assert_covariance_honest(errors: ArrayLike, covariances: ArrayLike, *, p: float = 1e-3) -> None:
    """Assert that reported covariances match the scatter of the errors over many draws.

    Parameters
    ----------
    errors : array_like, shape (k, d)
        Estimate minus truth of `k` independent draws.
    covariances : array_like, shape (k, d, d)
        The covariance each estimate reported (symmetric, positive semi-definite; a singular
        one is pseudo-inverted: its null directions are not judged).
    p : float, optional
        Probability with which honest covariances fail (default 1e-3), split between the two
        tails.

    Raises
    ------
    InconsistentEstimateError
        An :class:`AssertionError`, if the normalised squared error
        :math:`S = \\sum_i e_i^\\top C_i^{+} e_i` lies outside the central interval of
        probability :math:`1 - p` of :math:`\\chi^2_\\nu`,
        :math:`\\nu = \\sum_i \\operatorname{rank} C_i`: too large means over-confident
        covariances (too small), too small means over-cautious ones.
    ValueError
        If the shapes do not match, a covariance is not symmetric positive semi-definite, an
        input is not finite, or `p` is not in (0, 1).

    Notes
    -----
    For Gaussian errors with the reported covariances, each term is :math:`\\chi^2` with the
    covariance's rank as degrees of freedom and the sum of independent draws is
    :math:`\\chi^2_\\nu` (Bar-Shalom et al., normalised estimation error squared). A covariance
    halved doubles :math:`S`: with :math:`\\nu = 100` and ``p = 1e-3`` it is caught with
    probability above 0.99.

    References
    ----------
    Y. Bar-Shalom, X. R. Li, T. Kirubarajan (2001), Estimation with Applications to Tracking
    and Navigation, section 5.4 (consistency tests, NEES).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> cov = np.array([[4.0, 1.0], [1.0, 2.0]])
    >>> errors = rng.multivariate_normal([0.0, 0.0], cov, size=200)
    >>> assert_covariance_honest(errors, np.broadcast_to(cov, (200, 2, 2)))
    >>> try:
    ...     assert_covariance_honest(errors, np.broadcast_to(cov / 2, (200, 2, 2)))
    ... except AssertionError as err:
    ...     print(str(err).split(":")[0])
    The `covariances` are too small (over-confident)
    """
    __tracebackhide__ = True  # pytest shows the caller's frame, not gravdir's
    e = check_array(errors, "errors")
    c = check_array(covariances, "covariances")
    if e.ndim != 2 or c.shape != (*e.shape, e.shape[1]) or e.shape[0] < 1:
        raise ValueError(
            f"Expected `errors` (k, d) and `covariances` (k, d, d), got {e.shape} and {c.shape}."
        )
    prob = check_positive(p, "p")
    if not prob < 1:
        raise ValueError(f"Expected `p` in (0, 1), got {p!r}.")
    scale = np.max(np.abs(c), axis=(-2, -1), keepdims=True)
    if np.any(np.abs(c - np.swapaxes(c, -1, -2)) > 1e-9 * scale):
        raise ValueError("Expected `covariances` to be symmetric.")
    c = 0.5 * (c + np.swapaxes(c, -1, -2))
    total, dof = 0.0, 0
    for ei, ci in zip(e, c, strict=True):
        vals, vecs = np.linalg.eigh(ci)
        top = float(vals.max())
        if vals.min() < -1e-9 * max(top, 0.0):
            raise ValueError(f"Expected `covariances` positive semi-definite, got {vals}.")
        keep = vals > 1e-12 * top if top > 0 else np.zeros(vals.shape, dtype=bool)
        proj = vecs[:, keep].T @ ei
        total += float(np.sum(proj**2 / vals[keep]))
        dof += int(keep.sum())
    if dof == 0:
        raise ValueError("Expected some covariance with a non-zero variance, got all zero.")
    with IMPORT_LOCK:
        from scipy.stats import chi2  # only where needed: scipy.stats is slow to import

    low, high = float(chi2.ppf(prob / 2, dof)), float(chi2.isf(prob / 2, dof))
    if not low <= total <= high:
        verdict = "too small (over-confident)" if total > high else "too large (over-cautious)"
        raise InconsistentEstimateError(
            f"The `covariances` are {verdict}: the normalised squared error is {total:.4g} over "
            f"{dof} degrees of freedom ({total / dof:.3g} per degree, 1 expected); accepted "
            f"[{low:.4g}, {high:.4g}] at p = {prob:g}."
        )


@_quiet
def assert_up_covariance_honest(
    results: Sequence[Any], true_ups: ArrayLike, *, p: float = 1e-3
) -> None:
    """Assert that estimates of `up` report covariances that match their scatter.

    Parameters
    ----------
    results : sequence of UpResult or object
        Independent estimates, each with ``up`` and ``up_information`` or ``up_cov`` (as for
        :func:`assert_up_consistent`).
    true_ups : array_like, shape (3,) or (k, 3)
        The truth of each estimate (one for all, or one each).
    p : float, optional
        Probability with which honest covariances fail (default 1e-3).

    Raises
    ------
    InconsistentEstimateError
        As :func:`assert_covariance_honest`, on the tangent-plane errors
        (:func:`up_error_tangent`) and covariances (pseudo-inverses of the information).
    ValueError
        If `results` is empty, a result lacks `up` or its uncertainty, or a shape is wrong.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from gravdir.frames import up_from_tilt_azimuth
    >>> rng = np.random.default_rng(1)
    >>> truth = up_from_tilt_azimuth(0.4, -2.0)
    >>> sigma = 1e-3
    >>> def estimate(scale):
    ...     v = truth + rng.normal(0.0, sigma, 3)
    ...     u = v / np.linalg.norm(v)
    ...     return SimpleNamespace(up=u, up_cov=scale * sigma**2 * (np.eye(3) - np.outer(u, u)))
    >>> assert_up_covariance_honest([estimate(1.0) for _ in range(100)], truth)
    >>> try:
    ...     assert_up_covariance_honest([estimate(0.5) for _ in range(100)], truth)
    ... except AssertionError as err:
    ...     print(str(err)[:38])
    The `covariances` are too small (over-
    """
    __tracebackhide__ = True  # pytest shows the caller's frame, not gravdir's
    items = list(results)
    if not items:
        raise ValueError("Expected `results` to hold at least one estimate, got none.")
    truths = check_array(true_ups, "true_ups")
    if truths.shape == (3,):
        truths = np.broadcast_to(truths, (len(items), 3))
    if truths.shape != (len(items), 3):
        raise ValueError(
            f"Expected `true_ups` of shape (3,) or ({len(items)}, 3), got {truths.shape}."
        )
    errors, covs = [], []
    for result, truth in zip(items, truths, strict=True):
        if not hasattr(result, "up"):
            raise ValueError(f"Expected each result to have `up`, got a {type(result).__name__}.")
        up = _unit(result.up, "result.up")
        vals, vecs = _information_2d(result, up)
        if np.isinf(vals).any():
            raise ValueError("Expected each result to report a non-zero covariance of `up`.")
        with np.errstate(divide="ignore"):
            var = np.where(vals > 0, 1.0 / np.where(vals > 0, vals, 1.0), 0.0)
        errors.append(up_error_tangent(up, truth))
        covs.append((vecs * var) @ vecs.T)
    assert_covariance_honest(np.array(errors), np.array(covs), p=p)


@_quiet
def assert_tilt_azimuth_consistent(
    tilt: float,
    azimuth: float,
    true_up: ArrayLike,
    up_cov: ArrayLike,
    *,
    nsigma: float = 5.0,
) -> None:
    """Assert that a reported tilt and azimuth agree with the truth within `up`'s uncertainty.

    Parameters
    ----------
    tilt, azimuth : float
        The reported angle between `up` and base +z, and the angle of `up`'s horizontal part
        from base +x toward +y, rad.
    true_up : array_like, shape (3,)
        The true `up`, a unit vector.
    up_cov : array_like, shape (3, 3)
        The reported covariance of `up`, rad².
    nsigma : float, optional
        Accepted distance of each angle in its standard deviations (default 5).

    Raises
    ------
    InconsistentEstimateError
        An :class:`AssertionError`, if the tilt or the azimuth (wrapped to a turn) lies
        beyond `nsigma` standard deviations from the truth.
    ValueError
        If `tilt` or `azimuth` is not one finite real number, a shape is wrong, `true_up` is not
        unit, or `up_cov` has NaN entries.

    Notes
    -----
    The truth is :math:`t = \\arccos u_z`, :math:`a = \\operatorname{atan2}(u_y, u_x)`. A
    tangent error :math:`\\delta` changes them by :math:`e_t^\\top\\delta` and
    :math:`e_a^\\top\\delta / \\sin t`, with :math:`e_t = (\\cos t\\cos a, \\cos t\\sin a,
    -\\sin t)` and :math:`e_a = (-\\sin a, \\cos a, 0)`, so their variances are
    :math:`e_t^\\top C e_t` and :math:`e_a^\\top C e_a / \\sin^2 t`: the azimuth is free at
    tilt 0 and pi, where its variance is infinite. Rounding is allowed for (1e-12 rad).

    Examples
    --------
    >>> from gravdir.frames import up_from_tilt_azimuth
    >>> up = up_from_tilt_azimuth(0.5, 1.0)
    >>> cov = 1e-8 * (np.eye(3) - np.outer(up, up))
    >>> assert_tilt_azimuth_consistent(0.50002, 1.0, up, cov)
    >>> try:  # the azimuth measured from +y instead of +x
    ...     assert_tilt_azimuth_consistent(0.5, np.pi / 2 - 1.0, up, cov)
    ... except AssertionError as err:
    ...     print(str(err)[:9])
    `azimuth`
    """
    __tracebackhide__ = True  # pytest shows the caller's frame, not gravdir's
    tilt, azimuth = check_scalar(tilt, "tilt"), check_scalar(azimuth, "azimuth")
    u = _unit(true_up, "true_up")
    c = _floats(up_cov, "up_cov")
    if c.shape != (3, 3):
        raise ValueError(f"Expected `up_cov` of shape (3, 3) without NaN, got {c.shape}.")
    t = math.acos(min(max(float(u[2]), -1.0), 1.0))
    a = math.atan2(float(u[1]), float(u[0]))
    e_t = np.array([math.cos(t) * math.cos(a), math.cos(t) * math.sin(a), -math.sin(t)])
    e_a = np.array([-math.sin(a), math.cos(a), 0.0])
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        var_t = float(np.nan_to_num(e_t @ c @ e_t, nan=np.inf))
        s2 = math.sin(t) ** 2
        var_a = float(np.nan_to_num(e_a @ c @ e_a, nan=np.inf)) / s2 if s2 > 0 else math.inf
    assert_within_uncertainty(tilt, math.sqrt(max(var_t, 0.0)), t, nsigma, atol=1e-12, name="tilt")
    assert_within_uncertainty(
        azimuth,
        math.sqrt(max(var_a, 0.0)),
        a,
        nsigma,
        period=2 * math.pi,
        atol=1e-12,
        name="azimuth",
    )
