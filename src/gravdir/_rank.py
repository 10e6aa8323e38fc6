"""The one rank test: do data determine their unknowns?

Every estimator decides whether its data determine what it solves for with
:func:`reciprocal_condition` / :func:`check_determined`, on the geometry of the design and
before anything is factorised, so the outcome is the same on every BLAS kernel.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["DETERMINED_RCOND", "check_determined", "reciprocal_condition"]


# Eigenvalues of a Jacobi-scaled Gram matrix within this many n eps of the largest are rounding.
_GRAM_ROUNDING = 64 * float(np.finfo(np.float64).eps)

#: The reciprocal condition below which :func:`check_determined` calls a design undetermined. It is
#: far above double rounding (a column-scaled design computed in float64 carries errors near
#: 1e-16 relative), so the decision is the same on every BLAS kernel except for designs within a
#: rounding error of this line, and far below the conditioning of any design worth fitting.
DETERMINED_RCOND = 1e-10


def reciprocal_condition(matrix: ArrayLike, *, gram: bool = False) -> float:
    """Smallest over largest singular value of `matrix` with every column scaled to unit norm.

    The geometric test behind every "do these data determine the unknowns?" decision of gravdir:
    it is invariant to the units of each unknown (a column multiplied by any nonzero factor gives
    the same value) and to the scale of the data, it never overflows or underflows (columns are
    scaled by their largest entry before their norm is taken), and it is computed by a singular
    value or symmetric eigenvalue decomposition, which does not fail where a Cholesky
    factorisation of a nearly singular matrix may fail on one BLAS kernel and succeed on another.

    Parameters
    ----------
    matrix : array_like, shape (m, n)
        A design (Jacobian) whose columns are the unknowns, or with ``gram=True`` a symmetric
        positive semi-definite (n, n) Gram or information matrix :math:`J^\\top J`.
    gram : bool, optional
        Read `matrix` as :math:`G = J^\\top J`: the result is then that of :math:`J`, the square
        root of the smallest over the largest eigenvalue of
        :math:`D^{-1/2} G D^{-1/2}` with :math:`D = \\operatorname{diag} G`.

    Returns
    -------
    float
        In [0, 1]; 0 where a column is zero (an unknown the data do not touch), where the matrix
        has fewer rows than columns, or where it holds a non-finite value. With ``gram=True``,
        also 0 where the smallest scaled eigenvalue lies within rounding of zero (64 n eps of
        the largest): a Gram matrix cannot resolve a condition below about 1e-7 of its design,
        so such a value would be rounding, not geometry.

    Examples
    --------
    >>> reciprocal_condition([[1.0, 0.0], [0.0, 1e-300]])
    1.0
    >>> reciprocal_condition([[1.0, 2.0], [2.0, 4.0]])
    0.0
    """
    a = np.asarray(matrix, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] == 0 or not np.all(np.isfinite(a)):
        return 0.0
    if gram:
        d = np.diag(a).copy()
        if not np.all(d > 0):
            return 0.0
        # Divide row and column by sqrt(d) one after the other, so that no product overflows.
        s = 1.0 / np.sqrt(d)
        with np.errstate(under="ignore", over="ignore"):
            scaled = (a * s[:, None]) * s[None, :]
        if not np.all(np.isfinite(scaled)):
            return 0.0
        vals = np.linalg.eigvalsh(0.5 * (scaled + scaled.T))
        top = float(vals[-1])
        # The eigenvalues of a computed Gram matrix carry errors of order n eps of the largest
        # (forming it and decomposing it are both backward stable), and the square root lifts
        # them to sqrt(n eps), about 1e-7: an exactly singular Gram matrix would read as any
        # value up to that, differently on each BLAS kernel. Below that floor it reads as 0.
        if not top > 0 or vals[0] <= _GRAM_ROUNDING * a.shape[0] * top:
            return 0.0
        return float(np.sqrt(float(vals[0]) / top))
    if a.shape[0] < a.shape[1]:
        return 0.0
    big = np.max(np.abs(a), axis=0)
    if not np.all(big > 0):
        return 0.0
    with np.errstate(under="ignore"):
        unit = a / big
        unit = unit / np.linalg.norm(unit, axis=0)
    s = np.linalg.svd(unit, compute_uv=False)
    return float(s[-1] / s[0]) if s[0] > 0 else 0.0


def check_determined(
    matrix: ArrayLike,
    name: str,
    what: str,
    *,
    gram: bool = False,
    rcond: float = DETERMINED_RCOND,
) -> float:
    """Refuse data whose design does not determine its unknowns; return the reciprocal condition.

    The decision is :func:`reciprocal_condition` against `rcond`: made on the geometry of the
    design before anything is factorised, so the outcome does not depend on whether a
    factorisation happens to succeed on this machine's BLAS.

    Parameters
    ----------
    matrix : array_like
        The design (m, n), or its Gram matrix (n, n) with ``gram=True``.
    name : str
        The argument whose values made the design; it is named in the error.
    what : str
        What the design must determine, for the message ("`up` and the sensor parameters").
    gram : bool, optional
        See :func:`reciprocal_condition`.
    rcond : float, optional
        The threshold; :data:`DETERMINED_RCOND` by default.

    Raises
    ------
    DegenerateGeometryError
        Naming `name`, with the reciprocal condition found.

    Examples
    --------
    >>> check_determined([[1.0, 0.0], [0.0, 2.0]], "points", "the plane")
    1.0
    >>> check_determined([[1.0, 2.0], [2.0, 4.0]], "points", "the plane")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    gravdir.errors.DegenerateGeometryError: Expected `points` to determine the plane, ...
    """
    from gravdir.errors import DegenerateGeometryError

    rc = reciprocal_condition(matrix, gram=gram)
    if not rc > rcond:
        raise DegenerateGeometryError(
            f"Expected `{name}` to determine {what}, got a design whose column-scaled reciprocal "
            f"condition is {rc:.2g} (at most {rcond:g}): the data do not separate the unknowns."
        )
    return rc
