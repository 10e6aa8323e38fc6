"""`up` and the sensor parameters from static readings of an accelerometer on a link."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

import gravdir.accelerometer._model as mdl
from gravdir._checks import (
    check_array,
    check_count,
    check_direction,
    check_positive,
    describe_shape,
)
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import UpResult, data_fingerprint, warn_not_converged
from gravdir._sphere import (
    Linearisation,
    fibonacci_directions,
    refine_direction,
    up_information_from_tangent,
)
from gravdir.kinematics import SerialChain

__all__ = ["AccelerometerFit", "up_from_accelerometer"]

# Start of the search: this many points of a Fibonacci lattice on the upper hemisphere (about
# 7° apart). The projected cost is even in `up`, so a hemisphere covers every direction.
_GRID_POINTS = 400
# Grid points refined by Gauss-Newton; the lowest refined cost wins.
_REFINED = 3
# Passes that re-evaluate the encoder part of each pose's covariance at the current estimate.
_REWEIGHT_PASSES = 3


@dataclass(frozen=True, eq=False, repr=False)
class AccelerometerFit(UpResult):
    """`up` and the accelerometer's parameters fitted by :func:`up_from_accelerometer`.

    Attributes
    ----------
    up : ndarray, shape (3,)
        Unit vector opposite to gravity, base frame.
    up_information : ndarray, shape (3, 3)
        Fisher information of `up`, 1/rad² (the sensor parameters eliminated).
    sensitivity : ndarray, shape (3, 3)
        ``T``: upper triangular with positive diagonal. Its diagonal holds the axes' scale
        factors relative to `gravity` (a common factor also absorbs a local g that differs from
        `gravity`), its off-diagonal entries the non-orthogonality of the sensing axes.
    link_from_sensor : ndarray, shape (3, 3)
        ``R_m``: the rotation taking the sensor's (orthonormalised) axes to the link frame.
    bias : ndarray, shape (3,)
        ``b``, m/s², in the sensor's axes.
    sensitivity_std : ndarray, shape (3, 3)
        Standard deviations of the entries of `sensitivity` (zero below the diagonal).
    link_from_sensor_std : ndarray, shape (3,)
        Standard deviations of the small rotation ``w`` in ``R_m exp([w]×)``, rad.
    bias_std : ndarray, shape (3,)
        Standard deviations of `bias`, m/s².
    residuals : ndarray, shape (m, 3)
        Readings minus the fitted model, m/s².
    chi2 : float
        Sum of squared whitened residuals; about ``dof`` when the stated noise is right.
    dof : int
        ``3 m - 14``.
    converged : bool
        Whether the Gauss-Newton iterations met their tolerance.
    n_iter : int
        Gauss-Newton iterations of the final start, over all reweighting passes.
    fingerprint : frozenset of str
        :func:`~gravdir._results.data_fingerprint` of `q` and the readings.
    """

    _units = {
        "sensitivity": "", "link_from_sensor": "", "bias": "m/s²", "sensitivity_std": "",
        "link_from_sensor_std": "rad", "bias_std": "m/s²", "residuals": "m/s²", "chi2": "",
        "dof": "",
    }

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]
    sensitivity: NDArray[np.float64]
    link_from_sensor: NDArray[np.float64]
    bias: NDArray[np.float64]
    sensitivity_std: NDArray[np.float64]
    link_from_sensor_std: NDArray[np.float64]
    bias_std: NDArray[np.float64]
    residuals: NDArray[np.float64]
    chi2: float
    dof: int
    converged: bool
    n_iter: int

    def __repr__(self) -> str:
        return (
            f"AccelerometerFit(up={np.array2string(self.up, precision=6)}, "
            f"up_std={self.up_std_deg:.3g}°, scales={np.array2string(np.diag(self.sensitivity), precision=4)}, "  # noqa: E501
            f"bias={np.array2string(self.bias, precision=4)} m/s², chi2={self.chi2:.3g}/"
            f"{self.dof}, converged={self.converged})"
        )


def _linear_solve(
    rot: NDArray[np.float64],
    ups: NDArray[np.float64],
    f: NDArray[np.float64],
    white: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For each `up` in `ups` (c, 3): (M.ravel(), b) (c, 12) by weighted least squares, and the
    cost (c,)."""
    v = np.einsum("mji,cj->cmi", rot, ups)
    a = np.einsum("mab,cmbk->cmak", white, mdl.design(v))  # (c, m, 3, 12)
    y = np.einsum("mab,mb->ma", white, f)
    c = a.shape[0]
    a2 = a.reshape(c, -1, 12)
    y2 = y.reshape(-1)
    gram = np.einsum("cik,cil->ckl", a2, a2)
    rhs = np.einsum("cik,i->ck", a2, y2)
    scale = np.sqrt(np.einsum("ckk->ck", gram))
    scale = np.where(scale > 0, scale, 1.0)
    gs = gram / scale[:, :, None] / scale[:, None, :]
    theta = np.linalg.solve(gs + 1e-14 * np.eye(12), (rhs / scale)[..., None])[..., 0] / scale
    res = y2 - np.einsum("cik,ck->ci", a2, theta)
    return theta, np.einsum("ci,ci->c", res, res)


def _gauss_newton(
    rot: NDArray[np.float64],
    f: NDArray[np.float64],
    white: NDArray[np.float64],
    up: NDArray[np.float64],
    max_iter: int,
    xtol: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], float, int, bool]:
    """Variable projection (Kaufman's Gauss-Newton step) on the tangent plane of `up`:
    :func:`~gravdir._sphere.refine_direction` with (M, b) projected out at every trial."""

    def evaluate(
        trial: NDArray[np.float64], _step: NDArray[np.float64], _theta: NDArray[np.float64]
    ) -> tuple[float, NDArray[np.float64]]:
        theta, cost = _linear_solve(rot, trial[None], f, white)
        return float(cost[0]), theta[0]

    def linearise(
        u: NDArray[np.float64], _basis: NDArray[np.float64], theta: NDArray[np.float64]
    ) -> Linearisation:
        m = theta[:9].reshape(3, 3)
        jac = mdl.jacobian(rot, u, m, white)[0]
        v = np.einsum("mji,j->mi", rot, u)
        res = np.einsum("mab,mb->ma", white, f - v @ m.T - theta[9:]).reshape(-1)
        return Linearisation(grad=jac.T @ res, jacobian=jac)

    theta, cost = _linear_solve(rot, up[None], f, white)
    run = refine_direction(
        up, float(cost[0]), theta[0], evaluate, linearise, max_iter=max_iter, xtol=xtol
    )
    return run.up, run.state, run.cost, run.n_iter, run.converged


@mdl.quiet_underflow
def up_from_accelerometer(
    chain: SerialChain,
    q: ArrayLike,
    *,
    readings: ArrayLike,
    link: int,
    noise_std: float | None = None,
    reading_cov: ArrayLike | None = None,
    encoder_std: ArrayLike = 0.0,
    gravity: float = STANDARD_GRAVITY,
    up_hint: ArrayLike | None = None,
    max_iter: int = 50,
    xtol: float = 1e-12,
) -> AccelerometerFit:
    """`up` from static readings of a 3-axis accelerometer on a link of a serial chain.

    The sensor's scale factors, non-orthogonality, mounting rotation and bias are unknown and
    estimated jointly with `up`.

    Parameters
    ----------
    chain : SerialChain
        The arm's kinematics (:func:`~gravdir.kinematics.chain_from_dh`,
        :func:`~gravdir.urdf.chain_from_urdf`, ...).
    q : array_like, shape (m, n)
        Measured joint positions of the ``m`` static poses, rad, within ±4π.
    readings : array_like, shape (m, 3)
        Time-averaged accelerometer readings at those poses, m/s², in the sensor's axes (the
        specific force: a sensor at rest reads ``+g`` along `up`).
    link : int
        The link carrying the sensor, 0-based: link ``i`` is moved by joint ``i`` (the last
        link, ``n - 1``, carries the flange).
    noise_std : float, optional
        Standard deviation of each axis of a time-averaged reading, m/s² (white noise of
        density ``n_d`` averaged over ``T`` seconds gives ``n_d / sqrt(2 T)``). Exactly one of
        `noise_std` and `reading_cov` is given.
    reading_cov : array_like, shape (3, 3) or (m, 3, 3), optional
        Covariance of the readings, m²/s⁴, symmetric positive definite.
    encoder_std : float or array_like, shape (n,), optional
        Standard deviation of each joint's measured position, rad (default 0: exact encoders).
        It is carried into each pose's covariance through the link's orientation.
    gravity : float, optional
        Gravitational acceleration assumed, m/s² (default ``STANDARD_GRAVITY``). The readings'
        common scale and local g cannot be told apart: a different local g shows as a common
        factor of the diagonal of `sensitivity`, and `up` does not depend on it.
    up_hint : array_like, shape (3,), optional
        A rough `up` to start the local search from instead of the grid over the sphere. Its
        sign does not matter (the sign of `up` is fixed by ``det T > 0``).
    max_iter : int, optional
        Gauss-Newton iterations per start and reweighting pass (default 50, 1 to 10 000).
    xtol : float, optional
        The Gauss-Newton iterations stop when the step of `up` (in the tangent plane) is below
        it, rad (default 1e-12, positive, below 1).

    Returns
    -------
    AccelerometerFit
        `up` with its information, the sensor parameters with their standard deviations,
        residuals, chi², `converged`, `n_iter` and the data fingerprint.

    Raises
    ------
    ValueError
        If an argument has the wrong type, shape or value, joint positions or `encoder_std`
        exceed 4π (degrees?), both or neither of `noise_std` and `reading_cov` are given, a
        noise level lies outside 1e-12 to 1e3 times `gravity` (a unit error), the eigenvalues
        of `reading_cov` lie more than a factor 1e12 apart, or the largest reading lies outside
        1e-6 to 1e6 times `gravity` (a unit error, or readings without gravity). Naming
        `encoder_std` if the encoder noise moves the readings so much more than their own
        noise (beyond about 1e7 times) that the weighted design cannot be inverted in float64.
    InsufficientDataError
        If fewer than five poses are given (14 unknowns, three equations per pose).
    DegenerateGeometryError
        If the link's orientations differ by turns about one axis only (always for ``link=0``):
        with the scales, bias and mounting unknown, the readings then trace an ellipse that any
        `up` explains, so not only its azimuth but all of it is undetermined. Also if the poses
        otherwise leave a parameter undetermined (a rank-deficient design), among them poses
        that barely differ (turns of about a milliradian or less between them: an arm that was
        not moved). The rank test is made on the design weighted by the readings' own noise,
        before encoder noise enters the weights, so the outcome does not depend on the BLAS.

    See Also
    --------
    crlb_up_from_accelerometer : the Cramér-Rao bound of this estimator.
    plan_accelerometer_poses : poses that make it accurate.
    gravdir.general.estimate_up : `up` from joint torques.

    Notes
    -----
    With :math:`R_i = R_k(q_i)` the link's orientation and :math:`u = g\\,\\mathrm{up}`, the
    readings are :math:`f_i = M R_i^\\top u + b + e_i`, :math:`M = T R_m^\\top`. For a fixed
    `up` the model is linear in :math:`(M, b)`; the estimator minimises the whitened residual
    over `up` on the sphere by variable projection: a grid on the hemisphere (the projected
    cost is even in `up`), then Gauss-Newton steps on the tangent plane. The covariance of
    pose ``i`` is the readings' plus :math:`\\sum_j \\sigma_{q_j}^2 d_{ij} d_{ij}^\\top` with
    :math:`d_{ij} = M R_i^\\top (\\omega_j \\times u)` (joint axes :math:`\\omega_j` in the
    base frame), re-evaluated at the estimate; each pose is whitened through the
    eigendecomposition of the readings' covariance and the singular values of the encoder
    part, never by a Cholesky factor of their sum. ``T`` and ``R_m`` are the RQ factors of
    :math:`M`; ``det M > 0`` fixes the sign of `up`. The information of `up` is the Schur
    complement of the sensor block of the Fisher matrix. Derivation: the *Accelerometer* page
    of the documentation.

    References
    ----------
    G. H. Golub & V. Pereyra (1973), SIAM J. Numer. Anal. 10(2), 413-432 (variable
    projection); L. Kaufman (1975), BIT 15, 49-57 (its Gauss-Newton step). S. M. Kay (1993),
    Fundamentals of Statistical Signal Processing: Estimation Theory, ch. 3. US 2025/0065499
    A1, paragraphs 3 and 32 (an accelerometer on the distal part of an arm).

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.kinematics import chain_from_dh, link_frames
    >>> chain = chain_from_dh([0.3, 0, 0], [0, 0, 0], [0, 0.4, 0.3], [np.pi / 2, 0, np.pi / 2])
    >>> q = np.random.default_rng(0).uniform(-1.5, 1.5, (8, 3))
    >>> up = np.array([0.1, 0.0, 1.0]) / np.hypot(0.1, 1.0)
    >>> rot = link_frames(chain, q).rotations[:, 2]
    >>> f = 9.80665 * np.einsum("mji,j->mi", rot, up) + [0.1, -0.2, 0.05]
    >>> fit = up_from_accelerometer(chain, q, readings=f, link=2, noise_std=1e-3)
    >>> bool(np.allclose(fit.up, up, atol=1e-9)), fit.bias.round(6).tolist()
    (True, [0.1, -0.2, 0.05])
    """
    chain = mdl.check_chain(chain)
    q = mdl.check_configurations(q, chain, "q")
    k = mdl.check_link(link, chain)
    f_raw = check_array(readings, "readings")
    if f_raw.shape != (q.shape[0], 3):
        raise ValueError(
            f"Expected `readings` to have shape ({q.shape[0]}, 3) like `q`, got "
            f"{describe_shape(f_raw.shape)}."
        )
    g = check_positive(gravity, "gravity")
    enc = mdl.check_encoder_std(encoder_std, chain.n_joints)
    start = None if up_hint is None else check_direction(up_hint, "up_hint")
    max_iter = check_count(max_iter, "max_iter", minimum=1, maximum=10_000)
    xtol = check_positive(xtol, "xtol")
    if xtol >= 1.0:
        raise ValueError(f"Expected `xtol` to be below 1, got {xtol!r}.")
    n = q.shape[0]
    mdl.check_count_poses(n, "q")
    cov_r = mdl.reading_covariance(noise_std, reading_cov, n, g)
    mdl.check_reading_scale(f_raw, g)
    rot, axes = mdl.link_geometry(chain, q, k)
    mdl.check_two_axes(rot)
    f = f_raw / g

    # First pass without the encoder part (it needs M and up), then reweight at the estimate.
    white_r = white = mdl.whiteners(cov_r)
    if start is None:
        grid = fibonacci_directions(_GRID_POINTS, hemisphere=True)
        _, costs = _linear_solve(rot, grid, f, white)
        starts = grid[np.argsort(costs)[:_REFINED]]
    else:
        starts = start[None]
    runs = [_gauss_newton(rot, f, white, s, max_iter, xtol) for s in starts]
    best = min(runs, key=lambda run: run[2])
    up, theta, cost, n_iter, converged = best
    # Whether the poses determine the parameters is decided on the design of the readings' own
    # noise, before the encoder part (which depends on this estimate) enters the weights.
    mdl.check_design(mdl.jacobian(rot, up, theta[:9].reshape(3, 3), white_r)[0])
    if np.any(enc > 0):
        for _ in range(_REWEIGHT_PASSES):
            m = theta[:9].reshape(3, 3)
            white = mdl.whiteners(cov_r, mdl.encoder_spread(rot, axes, enc, up, m))
            up, theta, cost, it, converged = _gauss_newton(rot, f, white, up, max_iter, xtol)
            n_iter += it
    if not converged:
        warn_not_converged("up_from_accelerometer", max_iter)
    m = theta[:9].reshape(3, 3)
    b = theta[9:]
    if np.linalg.det(m) < 0:  # (up, M) and (-up, -M) fit alike; a real sensor has det T > 0
        up, m = -up, -m
        theta = np.concatenate([m.ravel(), b])
    jac, basis = mdl.jacobian(rot, up, m, white)
    jac_r = mdl.jacobian(rot, up, m, white_r)[0] if white is not white_r else None
    info2, cov, _ = mdl.split_information(jac, jac_r)
    t, r_m, to_params = mdl.factor_sensor(m)
    cov_p = to_params @ cov[2:11, 2:11] @ to_params.T
    std_p = np.sqrt(np.clip(np.diag(cov_p), 0.0, None))
    t_std = np.zeros((3, 3))
    for idx, (i, j) in enumerate([(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]):
        t_std[i, j] = std_p[idx]
    v = np.einsum("mji,j->mi", rot, up)
    residuals = (f - v @ m.T - b) * g
    return AccelerometerFit(
        up=up,
        up_information=up_information_from_tangent(up, basis, info2),
        sensitivity=t,
        link_from_sensor=r_m,
        bias=b * g,
        sensitivity_std=t_std,
        link_from_sensor_std=std_p[6:],
        bias_std=np.sqrt(np.clip(np.diag(cov)[11:], 0.0, None)) * g,
        residuals=residuals,
        chi2=float(cost),
        dof=3 * n - 14,
        converged=bool(converged),
        n_iter=int(n_iter),
        fingerprint=data_fingerprint(q, f_raw),
    )
