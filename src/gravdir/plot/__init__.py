"""Optional matplotlib views of gravdir results.

Install the ``plot`` extra (``pip install -e '.[plot]'``). matplotlib is imported only when a
function here is called, so neither ``import gravdir`` nor ``import gravdir.plot`` needs it; a
call without it raises an ImportError that names the extra.

Every function draws from a result object and, where the result does not hold them, the data it
was fitted on; it returns ``(figure, axes)`` with `axes` the tuple of panels drawn, labels every
axis with its unit and puts every legend outside the data area. Pass ``ax`` (one Axes, or one per
panel) to draw into an existing figure.

* :func:`plot_sweep` -- a sweep, its fitted model term by term and the residuals.
* :func:`plot_up` -- an `up` estimate in the tangent plane around it, with its uncertainty
  ellipses, the truth and the constraint of each sweep.
* :func:`plot_touches` -- touch contacts on the fitted plane and their residuals.
* :func:`plot_order_spectrum` -- an order spectrum before and after tuning.
* :func:`plot_tuner` -- a kinematic-error tuner's runs: deviation and correction per run.
* :func:`plot_friction` -- a fitted friction curve with its confidence band and the data.
"""

from gravdir.plot._friction import plot_friction
from gravdir.plot._spectrum import plot_order_spectrum, plot_tuner
from gravdir.plot._sweep import plot_sweep
from gravdir.plot._touch import plot_touches
from gravdir.plot._up import plot_up

__all__ = [
    "plot_friction",
    "plot_order_spectrum",
    "plot_sweep",
    "plot_touches",
    "plot_tuner",
    "plot_up",
]
