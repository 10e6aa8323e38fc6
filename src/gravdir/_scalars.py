"""The output type of a model evaluated at a point: a Python ``float`` for a scalar input."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["float_if_scalar"]


def float_if_scalar(given: Any, out: NDArray[np.float64]) -> Any:
    """`out` as a Python ``float`` where `given` is a Python or NumPy scalar; else an array.

    A model evaluated at one point given as a number (``float``, ``int`` or a NumPy scalar such
    as ``np.float64``) returns a ``float``; given an array of any shape (a 0-d array included)
    or a sequence, it returns an array (a 0-d array for a 0-d array, never a NumPy scalar), as
    it does where another argument broadcast `out` to more than one value. The evaluations of
    ``KinematicErrorModel`` and of the friction models share this rule.

    Examples
    --------
    >>> float_if_scalar(0.5, np.array(2.0)), float_if_scalar(np.float32(0.5), np.array(2.0))
    (2.0, 2.0)
    >>> float_if_scalar(np.array(0.5), np.array(2.0)), float_if_scalar([0.5], np.array([2.0]))
    (array(2.0), array([2.]))
    """
    scalar = isinstance(given, int | float | np.number) and not isinstance(given, bool | np.bool_)
    if scalar and np.ndim(out) == 0:
        return float(out)
    return np.asarray(out)
