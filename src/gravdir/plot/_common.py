"""Shared machinery of the plots: the lazy matplotlib import, panels, legends and checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from gravdir._checks import check_array, check_positive

__all__ = [
    "LEGEND_OUTSIDE",
    "check_label",
    "check_sigma",
    "legend_outside",
    "panels",
    "pyplot",
    "samples_1d",
]

# The legend of every panel sits to the right of its axes, outside the data area: it can never
# cover a sample, whatever the data look like.
LEGEND_OUTSIDE = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}

# The largest multiple of a standard deviation a band or ellipse is drawn at: beyond 10 sigma a
# band says nothing a reader could use, and the cap keeps the check of the argument simple.
MAX_SIGMA = 10.0


def pyplot() -> Any:
    """:mod:`matplotlib.pyplot`, or an ImportError that names the ``plot`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "gravdir.plot needs matplotlib, which is not installed: pip install -e '.[plot]'"
        ) from exc
    return plt



def check_label(value: Any, name: str) -> str:
    """A unit or label string: any str of at most 40 characters."""
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError(
            f"Expected `{name}` to be a string of at most 40 characters, got {value!r}."
        )
    return value


def check_sigma(value: Any, name: str) -> float:
    """A positive multiple of a standard deviation, at most `MAX_SIGMA`."""
    v = check_positive(value, name)
    if v > MAX_SIGMA:
        raise ValueError(f"Expected `{name}` at most {MAX_SIGMA:g}, got {value!r}.")
    return v


def samples_1d(x: Any, name: str) -> NDArray[np.float64]:
    """`x` as a finite float64 array of shape (n,)."""
    arr = check_array(x, name, min_ndim=1)
    if arr.ndim != 1:
        raise ValueError(f"Expected `{name}` to have shape (n,), got {arr.shape}.")
    return arr


def panels(
    ax: Any, n: int, figsize: tuple[float, float], *, rows: bool = True
) -> tuple[Any, tuple[Any, ...]]:
    """The figure and the axes to draw `n` panels into.

    `ax` None makes a figure with `n` panels (one above the other with `rows`, side by side
    otherwise, constrained layout so that the legends outside the axes fit); a single Axes
    receives the first panel only; a sequence of `n` Axes receives every panel. The figure is
    that of the first Axes.
    """
    plt = pyplot()
    from matplotlib.axes import Axes

    if ax is None:
        shape = (n, 1) if rows else (1, n)
        fig, axs = plt.subplots(
            *shape, figsize=figsize, layout="constrained", squeeze=False, sharex=rows and n > 1
        )
        return fig, tuple(axs.ravel())
    if isinstance(ax, Axes):
        return ax.figure, (ax,)
    if (
        isinstance(ax, Sequence | np.ndarray)
        and len(ax) == n
        and all(isinstance(a, Axes) for a in ax)
    ):
        axes = tuple(ax)
        return axes[0].figure, axes
    raise ValueError(
        f"Expected `ax` to be None, matplotlib Axes or a sequence of {n} Axes, "
        f"got {type(ax).__name__}."
    )


def legend_outside(ax: Any) -> Any:
    """The legend of `ax` outside its data area, to the right; None if nothing is labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(handles, labels, fontsize="small", **LEGEND_OUTSIDE)
