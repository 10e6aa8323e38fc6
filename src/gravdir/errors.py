"""The errors and warnings gravdir raises.

Every bad argument raises :class:`ValueError` or one of the subclasses below; the message names the
argument in backticks and says what was expected and what was got. Warnings are
:class:`GravdirWarning` or one of its subclasses, so one filter catches every warning of the
library::

    import warnings
    from gravdir.errors import GravdirWarning

    warnings.simplefilter("error", GravdirWarning)  # turn every gravdir warning into an error
"""

from __future__ import annotations

__all__ = [
    "ConvergenceWarning",
    "DegenerateGeometryError",
    "GravdirWarning",
    "InsufficientDataError",
    "SignConflictError",
]


class InsufficientDataError(ValueError):
    """The data cannot support the requested fit.

    Raised when too few samples remain after masking, a sweep has no samples in one direction while
    direction-dependent terms are requested, or an arc is too short to separate the terms of the
    model. It is a :class:`ValueError`, so ``except ValueError`` catches it.
    """


class DegenerateGeometryError(ValueError):
    """The geometry of the data does not determine the requested quantity.

    Raised, for example, for collinear contact points or sweeps whose joint axes leave the gravity
    direction undetermined. It is a :class:`ValueError`.
    """


class SignConflictError(ValueError):
    """The caller's statements about the sign of `up` contradict each other.

    Raised by :func:`gravdir.general.estimate_up` when an `up_hint` and the moment hints, or two
    moment hints, select opposite signs of `up` decisively: the two candidate answers fit the
    torques equally well and lie 180° apart, so none is returned. The usual cause is a torque
    signal of the opposite sign (``fit_sweep(..., torque_sign=-1)``); see the torque-signal
    table of the documentation. It is a :class:`ValueError`.
    """


class GravdirWarning(UserWarning):
    """A result was computed but one of its assumptions is close to failing."""


class ConvergenceWarning(GravdirWarning):
    """An iterative solver stopped at its iteration limit before its convergence test held.

    The result is still returned, with ``converged=False`` and ``n_iter`` equal to the limit;
    raise ``max_iter`` or check the data (a poorly determined parameter slows convergence).
    """
