"""Stateful tuners: each turns recorded runs into the correction for the next run."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_option, check_positive
from gravdir._results import Result, _equal
from gravdir.errors import InsufficientDataError
from gravdir.kinematic_error._common import (
    MAX_COEFFICIENT,
    MAX_MOTOR_ANGLE,
    _check_orders,
    _order_index,
    _require_finite,
)
from gravdir.kinematic_error._measure import RunSpectrum, measure_run
from gravdir.kinematic_error._model import KinematicErrorModel
from gravdir.kinematic_error._update import (
    PhasorResponseFit,
    _check_grow_shrink,
    _check_step_bounds,
    bold_driver_update,
    fit_phasor_response,
    phasor_gradient,
    rprop_update,
)

#: Most motor revolutions a record within ±MAX_MOTOR_ANGLE can span: the moving-average window
#: plus both trims of a tuner must fit in it, or no run could ever be measured.
MAX_RECORD_REVOLUTIONS = 2 * MAX_MOTOR_ANGLE / (2 * math.pi)


def _check_amplitude(value: float, name: str) -> float:
    """A finite positive change of a coefficient, at most MAX_COEFFICIENT rad."""
    v = check_positive(value, name)
    if v > MAX_COEFFICIENT:
        raise ValueError(
            f"Expected `{name}` at most {MAX_COEFFICIENT:.4g} rad of motor angle (half a motor "
            f"revolution), got {value!r}."
        )
    return v


# what a run was for: a run at the current correction, a trial run or a gradient probe
_RunKind = Literal["base", "trial", "probe"]


@dataclass(frozen=True, eq=False, repr=False)
class TunerRun(Result):
    """One run seen by a tuner: the correction it used and what was measured.

    Attributes
    ----------
    model : KinematicErrorModel
        The correction applied during the run.
    spectrum : RunSpectrum
        The deviation spectrum measured (:func:`measure_run`).
    kind : {"base", "trial", "probe"}
        A run at the tuner's current correction, a trial run that changes every order to identify
        the phasor response, or a probe run of a forward-difference gradient.
    """

    model: KinematicErrorModel
    spectrum: RunSpectrum
    kind: Literal["base", "trial", "probe"]


@dataclass
class _TunerState:
    orders: NDArray[np.float64]
    threshold: float | None
    threshold_order: float | None
    gradient: Literal["phasor", "perturbation"]
    trial_amplitude: float
    combine: Literal["vector", "norm"]
    trim_revolutions: float
    window_revolutions: float
    model: KinematicErrorModel
    history: list[TunerRun] = field(default_factory=list)
    next_kind: _RunKind = "base"
    probes: list[KinematicErrorModel] = field(default_factory=list)
    probe_values: list[float] = field(default_factory=list)
    base: TunerRun | None = None
    converged: bool = False


class _Tuner:
    """Shared machinery of the stateful tuners: the measurement loop and the gradient sources."""

    def __init__(
        self,
        orders: ArrayLike,
        initial: KinematicErrorModel | None,
        threshold: float | None,
        threshold_order: float | None,
        gradient: Literal["phasor", "perturbation"],
        trial_amplitude: float,
        combine: Literal["vector", "norm"],
        trim_revolutions: float,
        window_revolutions: float,
    ) -> None:
        q = _check_orders(orders)
        if initial is None:
            initial = KinematicErrorModel.zero(q)
        elif not isinstance(initial, KinematicErrorModel):
            raise ValueError(
                f"Expected `initial` to be a KinematicErrorModel or None, got "
                f"{type(initial).__name__}."
            )
        elif initial.orders.shape != q.shape or not np.allclose(initial.orders, q):
            raise ValueError(
                f"Expected `initial` on orders {q.round(6).tolist()}, "
                f"got {initial.orders.round(6).tolist()}."
            )
        if threshold is not None:
            threshold = check_positive(threshold, "threshold")
        order_value: float | None = None
        if threshold_order is not None:
            order_value = float(q[_order_index(q, threshold_order, "threshold_order")])
        check_option(gradient, "gradient", ("phasor", "perturbation"))
        check_option(combine, "combine", ("vector", "norm"))
        trim = check_positive(trim_revolutions, "trim_revolutions", allow_zero=True)
        window = check_positive(window_revolutions, "window_revolutions")
        if window + 2 * trim > MAX_RECORD_REVOLUTIONS:
            raise ValueError(
                f"Expected `window_revolutions` + 2 `trim_revolutions` at most "
                f"{MAX_RECORD_REVOLUTIONS:.3g} revolutions (a record within ±{MAX_MOTOR_ANGLE:g} "
                f"rad), got {window + 2 * trim:.3g}."
            )
        self._s = _TunerState(
            orders=q,
            threshold=threshold,
            threshold_order=order_value,
            gradient=gradient,
            trial_amplitude=_check_amplitude(trial_amplitude, "trial_amplitude"),
            combine=combine,
            trim_revolutions=trim,
            window_revolutions=window,
            model=initial,
        )

    # equality and display ---------------------------------------------------------------------
    def _comparable(self) -> dict[str, Any]:
        return {k: (vars(v) if isinstance(v, _TunerState) else v) for k, v in vars(self).items()}

    def __eq__(self, other: object) -> bool:
        """Two tuners are equal when they are of one class and hold the same state."""
        if not isinstance(other, _Tuner) or type(other) is not type(self):
            return NotImplemented
        return _equal(self._comparable(), other._comparable())

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(orders={self.orders.round(6).tolist()}, runs={self.runs}, "
            f"converged={self.converged})"
        )

    # public state ---------------------------------------------------------------------------
    @property
    def orders(self) -> NDArray[np.float64]:
        """Orders of the correction model."""
        return self._s.orders

    @property
    def model(self) -> KinematicErrorModel:
        """The correction to apply in the next run."""
        return self._s.model

    @property
    def runs(self) -> int:
        """Number of runs measured so far (trial and probe runs included)."""
        return len(self._s.history)

    @property
    def history(self) -> tuple[TunerRun, ...]:
        """Every run measured so far."""
        return tuple(self._s.history)

    @property
    def amplitudes(self) -> NDArray[np.float64]:
        """Deviation amplitude at the threshold order of every run (m/s²)."""
        o = self._s.threshold_order
        return np.array([h.spectrum.amplitude(o) for h in self._s.history])

    @property
    def converged(self) -> bool:
        """True once a run's amplitude at the threshold order fell to the threshold."""
        return self._s.converged

    @property
    def best(self) -> KinematicErrorModel:
        """The correction of the run with the smallest amplitude at the threshold order."""
        if not self._s.history:
            return self._s.model
        return self._s.history[int(np.argmin(self.amplitudes))].model

    # the loop -------------------------------------------------------------------------------
    def step(
        self,
        motor_angle: ArrayLike,
        *,
        readings: ArrayLike,
        expected: ArrayLike | None = None,
    ) -> KinematicErrorModel:
        """Record a run made with :attr:`model` and return the correction for the next run.

        Parameters
        ----------
        motor_angle : array_like, shape (n,)
            Measured motor angle of the run (rad).
        readings : array_like, shape (n, 3)
            Recorded accelerometer vectors (m/s²).
        expected : array_like, shape (n, 3), optional
            Exact expected readings; the moving average is used if omitted.

        Returns
        -------
        KinematicErrorModel
            The correction for the next run (unchanged once converged).

        Raises
        ------
        ValueError
            If the record is refused by :func:`measure_run` (the tuner's settings are passed on),
            its directions differ from the first run's, or the runs lead to a correction beyond
            ±π rad (the deviation does not respond to the correction). The tuner's state is then
            unchanged.
        """
        saved = copy.deepcopy(self.__dict__)
        try:
            return self._step(motor_angle, readings, expected)
        except Exception:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _step(
        self,
        motor_angle: ArrayLike,
        readings: ArrayLike,
        expected: ArrayLike | None,
    ) -> KinematicErrorModel:
        s = self._s
        spec = measure_run(
            motor_angle,
            readings=readings,
            orders=s.orders,
            expected=expected,
            combine=s.combine,
            trim_revolutions=s.trim_revolutions,
            window_revolutions=s.window_revolutions,
        )
        if s.history and spec.directions != s.history[0].spectrum.directions:
            raise ValueError(
                f"Expected runs with directions {s.history[0].spectrum.directions}, "
                f"got {spec.directions}."
            )
        run = TunerRun(model=s.model, spectrum=spec, kind=s.next_kind)
        s.history.append(run)
        if s.converged:
            return s.model
        if s.threshold is not None and spec.amplitude(s.threshold_order) <= s.threshold:
            s.converged = True
            return s.model
        s.model = self._advance(run)
        return s.model

    def _next_model(self, coefficients: NDArray[np.float64]) -> KinematicErrorModel:
        """The model of the next run, refused with a clear message beyond ±π rad."""
        finite = bool(np.all(np.isfinite(coefficients)))
        worst = float(np.max(np.abs(coefficients))) if finite else math.inf
        if not worst <= MAX_COEFFICIENT:
            raise ValueError(
                f"Expected runs (`readings`) that lead to a correction within "
                f"±{MAX_COEFFICIENT:.4g} rad, got a step to {worst:.3g} rad: the deviation "
                "hardly responds to the correction, or the runs are not comparable."
            )
        return KinematicErrorModel(self._s.orders, coefficients)

    def _deviation(self, run: TunerRun) -> NDArray[np.complex128]:
        ph = run.spectrum.phasors
        return ph.reshape(-1, ph.shape[-1])

    def _phasor_fit(self) -> PhasorResponseFit:
        h = self._s.history
        c = np.stack([r.model.phasors for r in h])
        y = np.stack([self._deviation(r) for r in h])
        try:
            return fit_phasor_response(c, y)
        except InsufficientDataError as exc:
            raise InsufficientDataError(
                "Expected runs (`readings`) whose deviation responds to the correction, got "
                f"none: {exc}"
            ) from exc

    def _needs_trial(self) -> bool:
        h = self._s.history
        if len(h) < 2:
            return True
        c = np.stack([r.model.phasors for r in h])
        return bool(np.any(np.max(np.abs(c - c[0]), axis=0) == 0.0))

    def _trial(self, base: KinematicErrorModel) -> KinematicErrorModel:
        self._s.next_kind = "trial"
        coef = base.coefficients.copy()
        coef[:, 0] += self._s.trial_amplitude
        return self._next_model(coef)

    def _gradient(self, run: TunerRun) -> NDArray[np.float64] | KinematicErrorModel:
        """Gradient at the run's correction, or the next probe/trial run to make first."""
        s = self._s
        if s.gradient == "phasor":
            if self._needs_trial():
                return self._trial(run.model)
            fit = self._phasor_fit()
            try:
                return phasor_gradient(fit.response, self._deviation(run))
            except ValueError as exc:
                raise ValueError(
                    "Expected `readings` small enough for the gradient of its deviation "
                    f"measure to fit in float64, got overflow ({exc})"
                ) from exc
        # perturbation: forward differences of J, one probe run per coefficient
        if run.kind != "probe":
            s.base = run
            s.probe_values = []
            s.probes = []
            for j in range(s.orders.size * 2):
                coef = run.model.coefficients.copy()
                coef.flat[j] += s.trial_amplitude
                s.probes.append(self._next_model(coef))
        else:
            s.probe_values.append(run.spectrum.objective)
        if len(s.probe_values) < len(s.probes):
            s.next_kind = "probe"
            return s.probes[len(s.probe_values)]
        if s.base is None:  # the probes are always queued after a base run
            raise RuntimeError("probe results arrived without a base run")
        j0 = s.base.spectrum.objective
        with np.errstate(all="ignore"):
            grad = (np.asarray(s.probe_values) - j0) / s.trial_amplitude
        _require_finite(
            grad, "Expected `readings` whose deviation measure fits in float64, got overflow."
        )
        return grad.reshape(s.orders.size, 2)

    def _base_model(self) -> KinematicErrorModel:
        s = self._s
        if s.gradient == "perturbation" and s.base is not None:
            return s.base.model
        return s.history[-1].model

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        raise NotImplementedError


class BoldDriverTuner(_Tuner):
    """Bold-driver tuner: the gradient times one scalar factor, adapted by sign changes.

    Parameters
    ----------
    orders : array_like, shape (k,)
        Orders of the correction (e.g. from :func:`harmonic_drive_orders`).
    initial : KinematicErrorModel, optional
        Correction of the first run (zero by default).
    threshold : float, optional
        Stop once the deviation amplitude at `threshold_order` is at most this (m/s²).
    threshold_order : float or None, optional
        Order judged by the stop rule (2 by default, the second harmonic of the motor frequency
        that US 2025/0065499 A1 judges, paragraph 22); None means every order.
    initial_step : float, optional
        Length (rad) of the largest component of the first gradient step; fixes the initial factor.
    grow, shrink : float, optional
        See :func:`gravdir.kinematic_error.bold_driver_update`.
    gradient : {"phasor", "perturbation"}, optional
        ``"phasor"``: from the linear phasor model fitted to all runs so far (one run per step
        after one trial run). ``"perturbation"``: forward differences of :math:`J`, costing
        :math:`2k` probe runs per step.
    trial_amplitude : float, optional
        Size (rad of motor angle) of the trial and probe changes. The default 2e-3 rad is about a
        fifth of :math:`N` times a typical harmonic-drive kinematic error.
    combine, trim_revolutions, window_revolutions : optional
        See :func:`measure_run`.

    Raises
    ------
    ValueError
        If `orders` are not distinct and in (0, 1e4]; `initial` is not a
        :class:`KinematicErrorModel` on `orders`; `threshold` is not a finite positive number;
        `threshold_order` is not one of `orders` (NaN, booleans and strings included);
        `trial_amplitude` or `initial_step` is not in (0, π] rad; `trim_revolutions` is negative or
        `window_revolutions` not positive (both finite, their record at most 3.2e8 revolutions
        long); `grow` ≤ 1 or `shrink` outside (0, 1); or `combine` or `gradient` is unknown. Every
        argument is checked here, before any run; :meth:`step` refuses a bad record without
        changing the tuner.

    See Also
    --------
    RpropTuner : per-coefficient steps; much faster when the orders differ in sensitivity.
    InfluenceTuner : jumps to the optimum of the fitted phasor model.

    Notes
    -----
    The loop of US 2025/0065499 A1 (paragraphs 23-26, claims 10-12): each call of :meth:`step`
    records the run made with :attr:`model` and returns the correction for the next one, which may
    be a trial or probe run. The coefficients move along the gradient of the deviation times one
    scalar factor for all of them, grown while no gradient component changes sign and shrunk when
    any does: a bold-driver rule (Vogl et al. 1988; Battiti 1989). The pure update is
    :func:`gravdir.kinematic_error.bold_driver_update`. With one factor every order moves at a
    rate set by the most sensitive one (the resonant order), so the others converge slowly.

    References
    ----------
    US 2025/0065499 A1, paragraphs 23-26 and claims 10-12.
    Vogl et al. (1988), Biol. Cybern. 59, 257-263; Battiti (1989), Complex Systems 3, 331-342.

    Examples
    --------
    Tune a simulated 200/202-tooth drive turning so that order 2 excites the 10 Hz link mode.
    The first run is uncorrected, the second a trial run, the third the first gradient step:

    >>> from gravdir.kinematic_error import harmonic_drive_orders, motor_speed_for_resonance
    >>> from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> tuner = BoldDriverTuner(orders)
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, speed, 110, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, readings=run.acceleration)
    >>> [r.kind for r in tuner.history]
    ['base', 'trial', 'base']
    >>> bool(tuner.amplitudes[-1] < 0.8 * tuner.amplitudes[0]), tuner.factor is not None
    (True, True)
    """

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None = None,
        threshold: float | None = None,
        threshold_order: float | None = 2.0,
        initial_step: float = 2e-3,
        grow: float = 1.2,
        shrink: float = 0.5,
        gradient: Literal["phasor", "perturbation"] = "phasor",
        trial_amplitude: float = 2e-3,
        combine: Literal["vector", "norm"] = "vector",
        trim_revolutions: float = 0.0,
        window_revolutions: float = 1.0,
    ) -> None:
        super().__init__(
            orders, initial, threshold, threshold_order,
            gradient, trial_amplitude, combine, trim_revolutions, window_revolutions,
        )  # fmt: skip
        self._initial_step = _check_amplitude(initial_step, "initial_step")
        self._grow, self._shrink = _check_grow_shrink(grow, shrink, "grow", "shrink")
        self._factor: float | None = None
        self._previous: NDArray[np.float64] | None = None

    @property
    def factor(self) -> float | None:
        """Current scalar factor (None before the first gradient step)."""
        return self._factor

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        g = self._gradient(run)
        if isinstance(g, KinematicErrorModel):
            return g
        base = self._base_model()
        if self._factor is None:
            self._factor = self._initial_step / max(float(np.max(np.abs(g))), 1e-300)
        step = bold_driver_update(
            base.coefficients, g, self._previous, self._factor, grow=self._grow, shrink=self._shrink
        )
        self._factor = step.factor
        self._previous = g
        self._s.next_kind = "base"
        return self._next_model(step.coefficients)


class RpropTuner(_Tuner):
    """iRprop− tuner: per-coefficient step sizes from gradient signs.

    Parameters
    ----------
    orders : array_like, shape (k,)
        Orders of the correction.
    initial, threshold, threshold_order : optional
        As for :class:`BoldDriverTuner`.
    initial_step : float, optional
        Initial step size of every coefficient (rad of motor angle).
    eta_plus, eta_minus, step_min, step_max : float, optional
        See :func:`gravdir.kinematic_error.rprop_update`.
    gradient, trial_amplitude, combine, trim_revolutions, window_revolutions : optional
        As for :class:`BoldDriverTuner`.

    Raises
    ------
    ValueError
        If `orders` are not distinct and in (0, 1e4]; `initial` is not a
        :class:`KinematicErrorModel` on `orders`; `threshold` is not a finite positive number;
        `threshold_order` is not one of `orders` (NaN, booleans and strings included);
        `trial_amplitude` is not in (0, π] rad; `trim_revolutions` is negative or
        `window_revolutions` not positive (both finite, their record at most 3.2e8 revolutions
        long); `eta_plus` ≤ 1 or `eta_minus` outside (0, 1); the step bounds are not finite
        positive with `step_min` ≤ `initial_step` ≤ `step_max` ≤ π; or `combine` or `gradient` is
        unknown. Every argument is checked here, before any run; :meth:`step` refuses a bad record
        without changing the tuner.

    See Also
    --------
    BoldDriverTuner : one scalar factor for all coefficients.
    InfluenceTuner : jumps to the optimum of the fitted phasor model.

    Notes
    -----
    The measurement loop of US 2025/0065499 A1 (paragraph 23, claim 10) with the iRprop− step
    rule (Riedmiller and Braun 1993; Igel and Hüsken 2003) in place of the patent's scalar factor.
    The pure update is :func:`gravdir.kinematic_error.rprop_update`. Only gradient signs are used,
    so the very different sensitivities of the orders (a resonant order responds far more
    strongly) do not slow the others down.

    References
    ----------
    US 2025/0065499 A1, paragraph 23 and claim 10.
    Riedmiller & Braun (1993), Proc. IEEE ICNN, 586-591.
    Igel & Hüsken (2003), Neurocomputing 50, 105-123.

    Examples
    --------
    An uncorrected run, a trial run and a first sign-driven step on a simulated joint whose
    order 2 sits on the link mode:

    >>> from gravdir.kinematic_error import harmonic_drive_orders, motor_speed_for_resonance
    >>> from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> tuner = RpropTuner(orders)
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, speed, 110, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, readings=run.acceleration)
    >>> tuner.runs, tuner.step_sizes.shape
    (3, (5, 2))
    >>> bool(tuner.amplitudes[-1] < 0.8 * tuner.amplitudes[0])
    True
    """

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None = None,
        threshold: float | None = None,
        threshold_order: float | None = 2.0,
        initial_step: float = 2e-3,
        eta_plus: float = 1.2,
        eta_minus: float = 0.5,
        step_min: float = 1e-7,
        step_max: float = 0.05,
        gradient: Literal["phasor", "perturbation"] = "phasor",
        trial_amplitude: float = 2e-3,
        combine: Literal["vector", "norm"] = "vector",
        trim_revolutions: float = 0.0,
        window_revolutions: float = 1.0,
    ) -> None:
        super().__init__(
            orders, initial, threshold, threshold_order,
            gradient, trial_amplitude, combine, trim_revolutions, window_revolutions,
        )  # fmt: skip
        ep, em = _check_grow_shrink(eta_plus, eta_minus, "eta_plus", "eta_minus")
        lo, hi = _check_step_bounds(step_min, step_max)
        if hi > MAX_COEFFICIENT:
            raise ValueError(
                f"Expected `step_max` at most {MAX_COEFFICIENT:.4g} rad of motor angle, "
                f"got {step_max!r}."
            )
        first = check_positive(initial_step, "initial_step")
        if not lo <= first <= hi:
            raise ValueError(
                f"Expected `initial_step` within [`step_min`, `step_max`] = [{lo:g}, {hi:g}], "
                f"got {initial_step!r}."
            )
        self._steps = np.full((self.orders.size, 2), first)
        self._opts = {"eta_plus": ep, "eta_minus": em, "step_min": lo, "step_max": hi}
        self._previous: NDArray[np.float64] | None = None

    @property
    def step_sizes(self) -> NDArray[np.float64]:
        """Current per-coefficient step sizes (rad), shape (k, 2)."""
        return self._steps.copy()

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        g = self._gradient(run)
        if isinstance(g, KinematicErrorModel):
            return g
        base = self._base_model()
        step = rprop_update(base.coefficients, g, self._previous, self._steps, **self._opts)
        self._steps = np.array(step.step_sizes)
        self._previous = step.gradient
        self._s.next_kind = "base"
        return self._next_model(step.coefficients)


class InfluenceTuner(_Tuner):
    """Influence-coefficient tuner: identifies the phasor response and jumps to its optimum.

    The deviation phasor at each order is linear in the correction phasor,
    :math:`Y_k = g_k (c_k - c_k^*)`. The first run and one trial run (all orders changed by
    `trial_amplitude` at once) identify :math:`g_k`; every later run is the least-squares optimum
    of the model fitted to all runs so far (:func:`fit_phasor_response`). On a linear joint the
    third run is already corrected.

    Parameters
    ----------
    orders : array_like, shape (k,)
        Orders of the correction.
    initial, threshold, threshold_order, trial_amplitude, combine, trim_revolutions, \
window_revolutions : optional
        As for :class:`BoldDriverTuner`.

    Raises
    ------
    ValueError
        If `orders` are not distinct and in (0, 1e4]; `initial` is not a
        :class:`KinematicErrorModel` on `orders`; `threshold` is not a finite positive number;
        `threshold_order` is not one of `orders` (NaN, booleans and strings included);
        `trial_amplitude` is not in (0, π] rad; `trim_revolutions` is negative or
        `window_revolutions` not positive (both finite, their record at most 3.2e8 revolutions
        long); or `combine` is unknown. Every argument is checked here, before any run;
        :meth:`step` refuses a bad record without changing the tuner.

    See Also
    --------
    BoldDriverTuner, RpropTuner : gradient steps, one run per step.

    Notes
    -----
    The measurement loop of US 2025/0065499 A1 (paragraph 23, claim 10) with the least-squares
    influence-coefficient method of rotor balancing (Goodman 1964) in place of the gradient step:
    the complex response :math:`g_k` plays the part of the influence coefficient, the correction
    phasor that of the balance weight.

    References
    ----------
    US 2025/0065499 A1, paragraph 23 and claim 10.
    Goodman (1964), "A least-squares method for computing balance corrections", J. Eng. Ind.
    86(3), 273-279.

    Examples
    --------
    On a simulated joint (order 2 on the link mode, no noise) the run after the trial run is
    already corrected:

    >>> from gravdir.kinematic_error import harmonic_drive_orders, motor_speed_for_resonance
    >>> from gravdir.synthetic.harmonic_drive import HarmonicDriveJoint, constant_speed_run
    >>> joint = HarmonicDriveJoint()
    >>> orders = harmonic_drive_orders(joint.flexspline_teeth, joint.circular_spline_teeth)
    >>> speed = motor_speed_for_resonance(joint.natural_frequency)
    >>> tuner = InfluenceTuner(orders)
    >>> for _ in range(3):
    ...     run = constant_speed_run(joint, speed, 110, correction=tuner.model)
    ...     _ = tuner.step(run.motor_angle, readings=run.acceleration)
    >>> tuner.response is not None, [r.kind for r in tuner.history]
    (True, ['base', 'trial', 'base'])
    >>> bool(tuner.amplitudes[-1] < 0.05 * tuner.amplitudes[0])
    True
    """

    def __init__(
        self,
        orders: ArrayLike,
        *,
        initial: KinematicErrorModel | None = None,
        threshold: float | None = None,
        threshold_order: float | None = 2.0,
        trial_amplitude: float = 2e-3,
        combine: Literal["vector", "norm"] = "vector",
        trim_revolutions: float = 0.0,
        window_revolutions: float = 1.0,
    ) -> None:
        super().__init__(
            orders,
            initial,
            threshold,
            threshold_order,
            "phasor",
            trial_amplitude,
            combine,
            trim_revolutions,
            window_revolutions,
        )

    @property
    def response(self) -> PhasorResponseFit | None:
        """The phasor model fitted to the runs so far (None before two distinct runs)."""
        if self._needs_trial():
            return None
        return self._phasor_fit()

    def _advance(self, run: TunerRun) -> KinematicErrorModel:
        if self._needs_trial():
            return self._trial(run.model)
        self._s.next_kind = "base"
        optimum = self._phasor_fit().optimum
        return self._next_model(np.stack([optimum.real, -optimum.imag], axis=-1))
