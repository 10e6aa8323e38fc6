"""Kinematic (transmission) error of a harmonic-drive joint, measured with an accelerometer.

Conventions. The circular spline is grounded and the flexspline is the output, so the output angle
is :math:`\\theta_o = \\theta_m/N + \\mathrm{TE}(\\theta_m)` with :math:`N = z_f/(z_c - z_f)`. A
correction :math:`u(\\theta_{cmd})` (radians of motor angle) is added to the motor command, the
output error becomes :math:`\\mathrm{TE} + u/N` and the cancelling correction is
:math:`u = -N\\,\\mathrm{TE}`. Orders are counted in cycles per motor revolution. A phasor
:math:`c_k` stands for the signal :math:`\\mathrm{Re}(c_k e^{i k \\theta_m})`.

The module offers the correction model (:class:`KinematicErrorModel`,
:func:`harmonic_drive_orders`), the expected acceleration along a trajectory, the spectrum against
motor angle (:func:`order_spectrum`, :func:`measure_run`) and three tuners that turn recorded runs
into the next correction (:class:`BoldDriverTuner`, :class:`RpropTuner`,
:class:`InfluenceTuner`), each built on a pure update function (:func:`bold_driver_update`,
:func:`rprop_update`, :func:`fit_phasor_response`).

The top level :mod:`gravdir` re-exports what a calibration pipeline calls and the results it
receives; the building blocks (:func:`expected_acceleration`, :func:`combine_axes`,
:func:`moving_average_expected`, :func:`split_at_reversals`, :func:`phasor_gradient`, the update
rules and their results) are importable from this module only.

References
----------
US 2025/0065499 A1 (reducing the kinematic error of robot joints with an accelerometer): the
correction series (paragraphs 18-19, claims 4-5), the measurement loop (paragraphs 2-10, 17 and
20-23, claims 1, 3 and 6-10) and the scalar step rule (paragraphs 24-26, claims 11-12).
Paragraphs and claims are numbered as in the text of its Chinese family member (paragraphs of
the summary of the invention).
Vogl et al. (1988) and Battiti (1989): the bold-driver rule. Riedmiller & Braun (1993) and
Igel & Hüsken (2003): iRprop−. Goodman (1964): influence coefficients. Kay (1993): least-squares
amplitudes of sinusoids.
"""

from gravdir.kinematic_error._measure import (
    RunSpectrum,
    combine_axes,
    expected_acceleration,
    measure_run,
    moving_average_expected,
)
from gravdir.kinematic_error._model import (
    KinematicErrorModel,
    harmonic_drive_orders,
    motor_speed_for_resonance,
)
from gravdir.kinematic_error._spectrum import OrderSpectrum, order_spectrum, split_at_reversals
from gravdir.kinematic_error._tuners import (
    BoldDriverTuner,
    InfluenceTuner,
    RpropTuner,
    TunerRun,
)
from gravdir.kinematic_error._update import (
    BoldDriverUpdate,
    PhasorResponseFit,
    RpropUpdate,
    bold_driver_update,
    fit_phasor_response,
    phasor_gradient,
    rprop_update,
)

__all__ = [
    "BoldDriverTuner",
    "BoldDriverUpdate",
    "InfluenceTuner",
    "KinematicErrorModel",
    "OrderSpectrum",
    "PhasorResponseFit",
    "RpropTuner",
    "RpropUpdate",
    "RunSpectrum",
    "TunerRun",
    "bold_driver_update",
    "combine_axes",
    "expected_acceleration",
    "fit_phasor_response",
    "harmonic_drive_orders",
    "measure_run",
    "motor_speed_for_resonance",
    "moving_average_expected",
    "order_spectrum",
    "phasor_gradient",
    "rprop_update",
    "split_at_reversals",
]
