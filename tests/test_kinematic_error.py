"""Tests of gravdir.kinematic_error: model, spectrum, expected acceleration, tuners."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gravdir
from gravdir.errors import InsufficientDataError
from gravdir.kinematic_error import (
    BoldDriverTuner,
    InfluenceTuner,
    KinematicErrorModel,
    RpropTuner,
    bold_driver_update,
    combine_axes,
    expected_acceleration,
    fit_phasor_response,
    harmonic_drive_orders,
    measure_run,
    motor_speed_for_resonance,
    moving_average_expected,
    order_spectrum,
    phasor_gradient,
    rprop_update,
    split_at_reversals,
)
from gravdir.synthetic.harmonic_drive import (
    HarmonicDriveJoint,
    constant_speed_run,
    oscillating_run,
)

ORDERS = harmonic_drive_orders(200, 202)
SPEED = motor_speed_for_resonance(10.0)  # 2x order on the 10 Hz link mode
G0 = 9.80665


# ---- orders and model ---------------------------------------------------------------------


def test_orders_of_a_200_202_drive() -> None:
    np.testing.assert_allclose(ORDERS, [200 / 202, 1, 400 / 202, 2, 4])


@pytest.mark.parametrize(
    ("zf", "zc", "match"),
    [
        (202, 200, "circular_spline_teeth"),
        (200, 200, "circular_spline_teeth"),
        (200.5, 202, "flexspline_teeth"),
        (1, 3, "flexspline_teeth"),
    ],
)
def test_orders_reject_non_harmonic_drives(zf: float, zc: int, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        harmonic_drive_orders(zf, zc)  # type: ignore[arg-type]


def test_orders_reject_bad_multiples() -> None:
    with pytest.raises(ValueError, match="motor_multiples"):
        harmonic_drive_orders(200, 202, motor_multiples=(1, 1.5))
    with pytest.raises(ValueError, match="distinct"):
        harmonic_drive_orders(100, 200, motor_multiples=(1,), flexspline_multiples=(2,))


def test_model_matches_explicit_sum_and_derivatives() -> None:
    rng = np.random.default_rng(1)
    coef = rng.normal(size=(ORDERS.size, 2)) * 1e-3
    model = KinematicErrorModel(ORDERS, coef)
    th = rng.uniform(-50, 50, size=(4, 7))
    explicit = sum(
        a * np.cos(q * th) + b * np.sin(q * th) for q, (a, b) in zip(ORDERS, coef, strict=True)
    )
    np.testing.assert_allclose(model.correction(th), explicit, atol=1e-15)
    h = 1e-5
    fd1 = (model.correction(th + h) - model.correction(th - h)) / (2 * h)
    fd2 = (model.correction(th + h) - 2 * model.correction(th) + model.correction(th - h)) / h**2
    np.testing.assert_allclose(model.derivative(th), fd1, atol=1e-9)
    np.testing.assert_allclose(model.derivative(th, 2), fd2, atol=1e-5)
    back = KinematicErrorModel.from_phasors(ORDERS, model.phasors)
    np.testing.assert_allclose(back.coefficients, coef)
    assert "°" in repr(model)


def test_model_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="coefficients"):
        KinematicErrorModel([1.0, 2.0], [[0.0, 0.0]])
    with pytest.raises(ValueError, match="orders"):
        KinematicErrorModel([1.0, 1.0], np.zeros((2, 2)))
    model = KinematicErrorModel.zero([1.0])
    with pytest.raises(ValueError, match="motor_angle"):
        model.correction([0.0, np.nan])
    with pytest.raises(ValueError, match="`n`"):
        model.derivative(0.0, -1)


def test_motor_speed_for_resonance() -> None:
    assert motor_speed_for_resonance(10.0) == pytest.approx(2 * math.pi * 5)
    assert motor_speed_for_resonance(12.0, order=1.0) == pytest.approx(2 * math.pi * 12)
    with pytest.raises(ValueError, match="resonance_frequency"):
        motor_speed_for_resonance(-1.0)


# ---- spectrum -----------------------------------------------------------------------------


@given(
    amps=st.lists(st.floats(0.0, 5.0), min_size=3, max_size=3),
    phases=st.lists(st.floats(-3.1, 3.1), min_size=3, max_size=3),
    offset=st.floats(-10, 10),
)
def test_spectrum_exact_on_whole_periods(
    amps: list[float], phases: list[float], offset: float
) -> None:
    # 100 revolutions: orders 0.99, 1.98 and 3 all complete whole periods
    orders = np.array([0.99, 1.98, 3.0])
    th = np.linspace(0, 2 * np.pi * 100, 100 * 40, endpoint=False) + 0.3
    c = np.asarray(amps) * np.exp(1j * np.asarray(phases))
    s = offset + np.real(np.exp(1j * th[:, None] * orders) @ c)
    sp = order_spectrum(th, signal=s, orders=orders)
    np.testing.assert_allclose(sp.phasors, c, atol=1e-9)
    assert abs(float(sp.mean) - offset) < 1e-9


def test_spectrum_exact_for_fitted_orders_on_any_record_and_batched() -> None:
    rng = np.random.default_rng(2)
    orders = np.array([0.7, 2.0, 2.45])
    th = np.sort(rng.uniform(0, 2 * np.pi * 13.37, 3000))  # uneven samples, partial periods
    c = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    s = np.real(c @ np.exp(1j * orders[:, None] * th))
    sp = order_spectrum(th, signal=s, orders=orders)
    np.testing.assert_allclose(sp.phasors, c, atol=1e-9)
    for i in range(3):
        np.testing.assert_allclose(
            order_spectrum(th, signal=s[i], orders=orders).phasors, c[i], atol=1e-12
        )


def test_spectrum_leakage_is_bounded() -> None:
    # an unfitted component at order p leaks at most A / (pi R |p - q|)
    revs = 20.3
    th = np.linspace(0, 2 * np.pi * revs, 20000)
    p, q = 2.37, 2.0
    sp = order_spectrum(th, signal=np.cos(p * th + 0.4), orders=[q])
    leak = float(np.abs(sp.phasors[0]))
    assert 0 < leak <= 1 / (np.pi * revs * abs(p - q))


def test_spectrum_reports_unresolved_orders() -> None:
    th = np.linspace(0, 2 * np.pi * 30, 9000)
    s = np.cos(2 * th) + np.cos(1.98 * th)
    with pytest.raises(InsufficientDataError, match="1.98.*2"):
        order_spectrum(th, signal=s, orders=[1.98, 2.0])
    th = np.linspace(0, 2 * np.pi * 60, 18000)
    sp = order_spectrum(th, signal=np.cos(2 * th) + np.cos(1.98 * th), orders=[1.98, 2.0])
    np.testing.assert_allclose(np.abs(sp.phasors), [1.0, 1.0], atol=1e-9)


def test_spectrum_rejects_bad_input() -> None:
    th = np.linspace(0, 2 * np.pi * 5, 1000)
    with pytest.raises(InsufficientDataError, match="lowest order"):
        order_spectrum(th, signal=np.sin(th), orders=[0.1, 1.0])
    with pytest.raises(ValueError, match="signal"):
        order_spectrum(th, signal=np.zeros(999), orders=[1.0])
    bad = th.copy()
    bad[3] = np.inf
    with pytest.raises(ValueError, match="motor_angle"):
        order_spectrum(bad, signal=np.zeros(1000), orders=[1.0])
    with pytest.raises(ValueError, match="orders"):
        order_spectrum(th, signal=np.zeros(1000), orders=[-1.0])
    with pytest.raises(InsufficientDataError, match="samples per period"):
        order_spectrum(th, signal=np.zeros(1000), orders=[1.0, 150.0])


def test_split_at_reversals_and_moving_average() -> None:
    t = np.linspace(0, 4, 401)
    th = np.concatenate([t, 4 - t[1:], t[1:]])
    pieces = split_at_reversals(th)
    assert len(pieces) == 3
    for sl in pieces:
        assert np.all(np.diff(th[sl]) >= 0) or np.all(np.diff(th[sl]) <= 0)
    th = np.linspace(0, 2 * np.pi * 8, 3201)
    sig = np.stack([3 + np.cos(2 * th), -1 + np.sin(th) + 0.01 * th], axis=1)
    exp, ok = moving_average_expected(th, sig)
    np.testing.assert_allclose(exp[ok, 0], 3.0, atol=1e-4)
    np.testing.assert_allclose(exp[ok, 1], -1 + 0.01 * th[ok], atol=1e-4)
    with pytest.raises(ValueError, match="monotonic"):
        moving_average_expected(np.r_[th, th[::-1]], np.r_[sig, sig])
    with pytest.raises(ValueError, match="signal"):
        moving_average_expected(th, sig[:-1])


# ---- expected acceleration and the scalar --------------------------------------------------


def test_expected_acceleration_matches_simulator_without_error() -> None:
    up = np.array([0.6, 0.0, 0.8])
    joint = HarmonicDriveJoint(te_amplitudes=np.zeros(5), output_amplitude=0.0, up=up)
    run = constant_speed_run(joint, 20.0, 10, settle_time=0.5)
    n = joint.gear_ratio
    exp = expected_acceleration(run.command / n, 20.0 / n, 0.0, joint.radius, up)
    np.testing.assert_allclose(run.acceleration, exp, atol=1e-9)


def test_scalar_hides_vibration_perpendicular_to_gravity() -> None:
    # joint axis vertical: the link vibrates horizontally, perpendicular to gravity
    joint = HarmonicDriveJoint(up=np.array([0.0, 0.0, 1.0]))
    run = constant_speed_run(joint, SPEED, 110, settle_time=3.0)
    vec = measure_run(run.motor_angle, readings=run.acceleration, orders=ORDERS, combine="vector")
    nrm = measure_run(run.motor_angle, readings=run.acceleration, orders=ORDERS, combine="norm")
    assert vec.amplitude(2.0) > 0.5  # m/s², a strong resonant vibration
    assert nrm.amplitude(2.0) < 0.01 * vec.amplitude(2.0)
    assert combine_axes([[0.0, 3.0, 4.0]], method="sum_of_squares")[0] == pytest.approx(25.0)


def test_measure_run_splits_oscillation_into_directions() -> None:
    joint = HarmonicDriveJoint()
    run = oscillating_run(joint, SPEED, 120, 2)
    spec = measure_run(
        run.motor_angle, readings=run.acceleration, orders=ORDERS, trim_revolutions=4.0
    )
    assert spec.directions == (1, -1)
    assert spec.phasors.shape == (2, 3, ORDERS.size)
    fwd, bwd = np.abs(spec.phasors[:, 1, 3])  # tangential axis, order 2: same magnitude
    assert fwd == pytest.approx(bwd, rel=0.05)
    with pytest.raises(ValueError, match="readings"):
        measure_run(run.motor_angle, readings=run.acceleration[:-1], orders=ORDERS)


def test_series_after_the_motor_angle_are_keyword_only() -> None:
    # a positional call of the former order raises instead of taking one array for another
    run = constant_speed_run(HarmonicDriveJoint(), SPEED, 20)
    th, acc = run.motor_angle, run.acceleration
    with pytest.raises(TypeError):
        measure_run(th, acc, ORDERS)  # type: ignore[misc]
    with pytest.raises(TypeError):
        order_spectrum(th, acc[:, 0], ORDERS)  # type: ignore[misc]
    for cls in (BoldDriverTuner, RpropTuner, InfluenceTuner):
        tuner = cls(ORDERS)
        with pytest.raises(TypeError):
            tuner.step(th, acc)  # type: ignore[misc]
        with pytest.raises(TypeError):
            tuner.step(th, readings=acc, acceleration=acc)  # type: ignore[call-arg]
        assert tuner.runs == 0


# ---- update rules -------------------------------------------------------------------------


def test_bold_driver_update_grows_and_shrinks() -> None:
    c = np.zeros((1, 2))
    same = bold_driver_update(c, [[1.0, 2.0]], [[0.5, 0.1]], 0.1)
    flip = bold_driver_update(c, [[1.0, 2.0]], [[0.5, -0.1]], 0.1)
    first = bold_driver_update(c, [[1.0, 2.0]], None, 0.1)
    assert same.factor == pytest.approx(0.12)
    assert flip.factor == pytest.approx(0.05)
    np.testing.assert_allclose(first.coefficients, [[-0.1, -0.2]])
    with pytest.raises(ValueError, match="grow"):
        bold_driver_update(c, c, None, 0.1, grow=0.9)


def test_rprop_update_bounds_steps() -> None:
    c = np.zeros((1, 2))
    up = rprop_update(c, [[1.0, 1.0]], [[1.0, -1.0]], [[0.04, 1e-7]], step_max=0.045)
    np.testing.assert_allclose(up.step_sizes, [[0.045, 1e-7]])
    np.testing.assert_allclose(up.coefficients, [[-0.045, 0.0]])
    np.testing.assert_allclose(up.gradient, [[1.0, 0.0]])
    with pytest.raises(ValueError, match="step_sizes"):
        rprop_update(c, c, None, [[1.0]])


def test_phasor_fit_and_gradient_agree_with_finite_differences() -> None:
    rng = np.random.default_rng(3)
    m, k = 3, 2
    g = rng.normal(size=(m, k)) + 1j * rng.normal(size=(m, k))
    cstar = rng.normal(size=k) + 1j * rng.normal(size=k)
    cs = rng.normal(size=(4, k)) + 1j * rng.normal(size=(4, k))
    ys = g[None] * (cs[:, None, :] - cstar)
    fit = fit_phasor_response(cs, ys)
    np.testing.assert_allclose(fit.response, g, atol=1e-12)
    np.testing.assert_allclose(fit.optimum, cstar, atol=1e-12)

    def objective(coef: np.ndarray) -> float:
        c = coef[:, 0] - 1j * coef[:, 1]
        return float(np.sum(np.abs(g * (c - cstar)) ** 2))

    coef = rng.normal(size=(k, 2))
    c = coef[:, 0] - 1j * coef[:, 1]
    grad = phasor_gradient(g, g * (c - cstar))
    fd = np.zeros_like(coef)
    for i in np.ndindex(coef.shape):
        e = np.zeros_like(coef)
        e[i] = 1e-6
        fd[i] = (objective(coef + e) - objective(coef - e)) / 2e-6
    np.testing.assert_allclose(grad, fd, rtol=1e-6)
    with pytest.raises(InsufficientDataError, match="different corrections"):
        fit_phasor_response(cs[:1], ys[:1])


# ---- tuners on the simulated joint ------------------------------------------------------


def _tune(
    tuner: BoldDriverTuner | RpropTuner | InfluenceTuner,
    joint: HarmonicDriveJoint,
    max_runs: int,
    seed: int,
    stop: float | None = None,
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    for _ in range(max_runs):
        run = constant_speed_run(joint, SPEED, 110, correction=tuner.model, rng=rng)
        tuner.step(run.motor_angle, readings=run.acceleration)
        amps = tuner.amplitudes
        if stop is not None and amps[-1] <= stop * amps[0]:
            break
    return tuner.amplitudes


def test_influence_tuner_converges_to_cancelling_correction_noise_free() -> None:
    joint = HarmonicDriveJoint()
    tuner = InfluenceTuner(ORDERS)
    amps = _tune(tuner, joint, 5, seed=0)
    truth = joint.cancelling_coefficients(ORDERS)
    err = np.abs(tuner.history[-1].model.coefficients - truth)
    assert err.max() < 0.01 * np.abs(truth).max()
    assert amps[-1] < 0.01 * amps[0]
    assert [h.kind for h in tuner.history[:3]] == ["base", "trial", "base"]


@pytest.mark.parametrize(
    ("cls", "budget"), [(BoldDriverTuner, 20), (RpropTuner, 20), (InfluenceTuner, 3)]
)
def test_tuners_cut_the_2x_component_under_noise(cls: type, budget: int) -> None:
    joint = HarmonicDriveJoint(
        noise_density=150e-6 * G0, up=np.array([0.0, -1.0, 0.0]), bias=np.array([0.05, -0.02, 0.1])
    )
    amps = _tune(cls(ORDERS), joint, budget, seed=7, stop=0.05)
    assert amps.size <= budget
    assert amps.min() <= 0.05 * amps[0]  # -26 dB


def test_tuner_stop_rule_and_bad_options() -> None:
    joint = HarmonicDriveJoint()
    tuner = InfluenceTuner(ORDERS, threshold=0.2)
    amps = _tune(tuner, joint, 3, seed=0)
    assert tuner.converged
    assert amps[-1] <= 0.2 < amps[0]
    frozen = tuner.model
    assert frozen is tuner.history[-1].model
    run = constant_speed_run(joint, SPEED, 110, correction=frozen)
    assert tuner.step(run.motor_angle, readings=run.acceleration) is frozen
    with pytest.raises(ValueError, match="threshold_order"):
        BoldDriverTuner(ORDERS, threshold_order=3.0)
    with pytest.raises(ValueError, match="gradient"):
        RpropTuner(ORDERS, gradient="finite")  # type: ignore[arg-type]


# ---- the result contract ------------------------------------------------------------------


def _results_from_real_calls() -> list[object]:
    joint = HarmonicDriveJoint()
    tuner = InfluenceTuner(ORDERS)
    for _ in range(2):
        run = constant_speed_run(joint, SPEED, 110, correction=tuner.model)
        tuner.step(run.motor_angle, readings=run.acceleration)
    th = np.linspace(0, 2 * np.pi * 12, 4801)
    spectrum = order_spectrum(th, signal=np.stack([np.cos(2 * th), np.sin(th)]), orders=[1.0, 2.0])
    c = np.zeros((1, 2))
    return [
        tuner.model,
        spectrum,
        tuner.history[-1].spectrum,
        tuner.response,
        tuner.history[-1],
        bold_driver_update(c, [[1.0, 2.0]], [[0.5, -0.1]], 0.1),
        rprop_update(c, [[1.0, 1.0]], [[1.0, -1.0]], [[0.04, 1e-7]]),
        joint,
        run,
    ]


def test_results_follow_the_contract() -> None:
    for result in _results_from_real_calls():
        assert isinstance(result, gravdir._results.Result), type(result)
        for value in vars(result).values():
            if isinstance(value, np.ndarray):
                assert not value.flags.writeable, type(result)
        copy = pickle.loads(pickle.dumps(result))
        assert copy == result
        assert result != 0  # never raises
        json.dumps(result.to_dict())
        assert type(result).__name__ in repr(result)


def test_results_copy_the_callers_arrays() -> None:
    orders = np.array([1.0, 2.0])
    coef = np.array([[1e-3, 0.0], [0.0, 2e-3]])
    model = KinematicErrorModel(orders, coef)
    coef[0, 0] = 5.0
    orders[0] = 3.0
    assert model.coefficients[0, 0] == 1e-3 and model.orders[0] == 1.0
    steps = np.array([[0.04, 1e-7]])
    update = rprop_update(np.zeros((1, 2)), [[1.0, 1.0]], None, steps)
    steps[0, 0] = 9.0
    assert update.step_sizes[0, 0] == 0.04


def test_phasor_results_write_complex_as_real_and_imaginary_parts() -> None:
    th = np.linspace(0, 2 * np.pi * 12, 4801)
    spectrum = order_spectrum(th, signal=0.3 * np.cos(2 * th + 0.5), orders=[1.0, 2.0])
    d = json.loads(json.dumps(spectrum.to_dict()))
    back = np.asarray(d["phasors"]["real"]) + 1j * np.asarray(d["phasors"]["imag"])
    np.testing.assert_allclose(back, spectrum.phasors)


def test_top_level_exports_the_pipeline_only() -> None:
    for name in ("BoldDriverTuner", "InfluenceTuner", "measure_run", "PhasorResponseFit"):
        assert name in gravdir.__all__
    for name in ("bold_driver_update", "rprop_update", "phasor_gradient", "split_at_reversals"):
        assert name not in gravdir.__all__


# ---- input checks: every argument refused up front, with its name ------------------------


@pytest.mark.parametrize("cls", [BoldDriverTuner, RpropTuner, InfluenceTuner])
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"threshold_order": float("nan")}, "threshold_order"),
        ({"threshold_order": True}, "threshold_order"),
        ({"threshold_order": "2.0"}, "threshold_order"),
        ({"threshold": "0.1"}, "threshold"),
        ({"trial_amplitude": -2e-3}, "trial_amplitude"),
        ({"trial_amplitude": 10.0}, "trial_amplitude"),
        ({"window_revolutions": None}, "window_revolutions"),
        ({"trim_revolutions": "1"}, "trim_revolutions"),
        ({"window_revolutions": 1e300}, "window_revolutions"),
        ({"initial": np.zeros((5, 2))}, "initial"),
        ({"initial": KinematicErrorModel.zero([1.0, 2.0])}, "initial"),
    ],
)
def test_tuners_check_every_argument_when_built(cls: type, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=f"`{name}`"):
        cls(ORDERS, **kwargs)


@pytest.mark.parametrize(
    ("cls", "kwargs", "name"),
    [
        (BoldDriverTuner, {"grow": float("nan")}, "grow"),
        (BoldDriverTuner, {"grow": 0.9}, "grow"),
        (BoldDriverTuner, {"shrink": -3.0}, "shrink"),
        (BoldDriverTuner, {"shrink": 1.5}, "shrink"),
        (BoldDriverTuner, {"initial_step": float("inf")}, "initial_step"),
        (RpropTuner, {"eta_plus": float("nan")}, "eta_plus"),
        (RpropTuner, {"eta_minus": -3.0}, "eta_minus"),
        (RpropTuner, {"step_min": 0.1}, "step_min"),
        (RpropTuner, {"step_max": 10.0}, "step_max"),
        (RpropTuner, {"initial_step": 1.0}, "initial_step"),
        (RpropTuner, {"gradient": "finite"}, "gradient"),
    ],
)
def test_step_rule_options_are_checked_when_built(cls: type, kwargs: dict, name: str) -> None:
    # these used to construct, record runs and fail (or track the wrong order) steps later
    with pytest.raises(ValueError, match=f"`{name}`"):
        cls(ORDERS, **kwargs)


def test_tuner_tracks_the_order_it_was_given() -> None:
    tuner = BoldDriverTuner(ORDERS, threshold_order=np.float32(2.0))
    run = constant_speed_run(HarmonicDriveJoint(), SPEED, 110)
    tuner.step(run.motor_angle, readings=run.acceleration)
    spectrum = tuner.history[0].spectrum
    assert tuner.amplitudes[0] == spectrum.amplitude(2.0) != spectrum.amplitude(1.0)


def test_tuner_step_refuses_bad_records_and_keeps_its_state() -> None:
    joint = HarmonicDriveJoint()
    run = constant_speed_run(joint, SPEED, 110)
    for cls in (BoldDriverTuner, RpropTuner, InfluenceTuner):
        tuner = cls(ORDERS)
        tuner.step(run.motor_angle, readings=run.acceleration)
        before = pickle.loads(pickle.dumps(tuner))
        bad_angle = run.motor_angle.copy()
        bad_angle[10] = np.nan
        with pytest.raises(ValueError, match="`motor_angle`"):
            tuner.step(bad_angle, readings=run.acceleration)
        with pytest.raises(ValueError, match="`readings`"):
            tuner.step(run.motor_angle, readings=run.acceleration[:, :2])
        with pytest.raises(ValueError, match="`readings`"):
            tuner.step(run.motor_angle, readings=run.acceleration.astype(str))
        with pytest.raises(ValueError, match="`expected`"):
            tuner.step(run.motor_angle, readings=run.acceleration, expected=np.zeros((3, 3)))
        with pytest.raises(InsufficientDataError, match="`motor_angle`"):
            tuner.step(run.motor_angle[:50], readings=run.acceleration[:50])
        assert tuner == before
        assert tuner.runs == 1 and tuner.model == before.model


def test_tuner_refuses_runs_that_do_not_respond_and_keeps_its_state() -> None:
    # the same record for the first run and the trial run: the deviation does not respond to
    # the correction, and the fitted optimum is far beyond any correction
    run = constant_speed_run(HarmonicDriveJoint(), SPEED, 110)
    tuner = InfluenceTuner(ORDERS)
    tuner.step(run.motor_angle, readings=run.acceleration)
    trial = tuner.model
    with pytest.raises(ValueError, match="`readings`.*respond"):
        tuner.step(run.motor_angle, readings=run.acceleration)
    assert tuner.runs == 1 and tuner.model == trial


def test_tuners_compare_by_state_pickle_and_print() -> None:
    a, b = RpropTuner(ORDERS, threshold=0.1), RpropTuner(ORDERS, threshold=0.1)
    assert a == b and a != RpropTuner(ORDERS) and a != BoldDriverTuner(ORDERS, threshold=0.1)
    run = constant_speed_run(HarmonicDriveJoint(), SPEED, 110)
    a.step(run.motor_angle, readings=run.acceleration)
    assert a != b
    assert pickle.loads(pickle.dumps(a)) == a
    assert "RpropTuner" in repr(a) and "runs=1" in repr(a)


def test_rprop_update_refuses_steps_that_would_climb() -> None:
    c = np.zeros((1, 2))
    g = np.array([[1.0, -1.0]])
    with pytest.raises(ValueError, match="`step_sizes`"):
        rprop_update(c, g, None, [[-0.01, 0.01]])  # used to move uphill
    with pytest.raises(ValueError, match="`step_sizes`"):
        rprop_update(c, g, None, [[0.0, 0.01]])
    with pytest.raises(ValueError, match="`step_sizes`"):
        rprop_update(c, g, None, [[0.01, 1.0]])  # beyond step_max
    with pytest.raises(ValueError, match="`eta_minus`"):
        rprop_update(c, g, None, [[0.01, 0.01]], eta_minus=-0.5)
    with pytest.raises(ValueError, match="`coefficients`"):
        rprop_update(np.zeros((2, 1, 2)), g, None, [[0.01, 0.01]])
    step = rprop_update(c, g, None, [[0.01, 0.01]])
    assert float(np.sum(step.coefficients * g)) < 0  # downhill


def test_bold_driver_update_refuses_factors_that_would_climb() -> None:
    c = np.zeros((1, 2))
    g = np.array([[1.0, -1.0]])
    for bad in (-0.1, 0.0, np.nan, "0.1", True):
        with pytest.raises(ValueError, match="`factor`"):
            bold_driver_update(c, g, None, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`shrink`"):
        bold_driver_update(c, g, g, 0.1, shrink=-3.0)
    with pytest.raises(ValueError, match="`grow`"):
        bold_driver_update(c, g, g, 0.1, grow=np.nan)
    with pytest.raises(ValueError, match="`factor`"):
        bold_driver_update(c, g * 1e300, None, 1e300)  # the step overflows
    step = bold_driver_update(c, g, None, 0.1)
    assert float(np.sum(step.coefficients * g)) < 0  # downhill


def test_measure_run_names_a_missing_window() -> None:
    th = np.linspace(0, 2 * np.pi * 12, 4801)
    acc = np.zeros((th.size, 3))
    acc[:, 1] = 0.2 * np.cos(2 * th)
    # used to raise TypeError: unsupported operand
    with pytest.raises(ValueError, match="`window_revolutions`"):
        measure_run(th, readings=acc, orders=[1.0, 2.0], window_revolutions=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`trim_revolutions`"):
        measure_run(th, readings=acc, orders=[1.0, 2.0], trim_revolutions="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`resolution`"):
        measure_run(th, readings=acc, orders=[1.0, 2.0], resolution=None)  # type: ignore[arg-type]
    with pytest.raises(InsufficientDataError, match="`window_revolutions`"):
        measure_run(th, readings=acc, orders=[1.0, 2.0], window_revolutions=1e300)


def test_numeric_strings_are_refused() -> None:
    th = np.linspace(0, 2 * np.pi * 12, 4801)
    with pytest.raises(ValueError, match="`resonance_frequency`"):
        motor_speed_for_resonance("10")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`flexspline_teeth`"):
        harmonic_drive_orders("200", 202)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`orders`"):
        KinematicErrorModel(["1", "2"], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="`phasors`"):
        KinematicErrorModel.from_phasors([1.0], ["1"])
    with pytest.raises(ValueError, match="`response`"):
        phasor_gradient(np.array([["1.0"]]), [[1.0]])
    with pytest.raises(ValueError, match="`corrections`"):
        fit_phasor_response([["0"], ["1"]], np.zeros((2, 1, 1)))
    with pytest.raises(ValueError, match="`signal`"):
        order_spectrum(th, signal=th.astype(str), orders=[1.0])
    with pytest.raises(ValueError, match="`min_samples_per_period`"):
        order_spectrum(th, signal=np.cos(th), orders=[1.0], min_samples_per_period="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`order`"):
        measure_run(th, readings=np.ones((th.size, 3)), orders=[1.0, 2.0]).amplitude("2")  # type: ignore[arg-type]


def test_motor_angles_span_thousands_of_radians() -> None:
    # motor angles are exempt from the degree checks: 2,000 revolutions from 5,000 rad
    th = np.linspace(5000.0, 5000.0 + 2 * np.pi * 2000, 200001)
    sp = order_spectrum(th, signal=0.3 * np.cos(2 * th + 0.5), orders=[1.0, 2.0])
    np.testing.assert_allclose(sp.phasors, [0.0, 0.3 * np.exp(0.5j)], atol=1e-9)
    exp, ok = moving_average_expected(th, 1.0 + np.sin(th))
    np.testing.assert_allclose(exp[ok], 1.0, atol=1e-6)
    model = KinematicErrorModel([2.0], [[1e-3, 0.0]])
    np.testing.assert_allclose(model.correction(th), 1e-3 * np.cos(2 * th), atol=1e-15)
    # beyond float64's resolution of a motor angle: refused with the remedy
    with pytest.raises(ValueError, match="`motor_angle`.*subtract the start angle"):
        order_spectrum(th + 1e10, signal=np.cos(th), orders=[1.0])


def test_column_vectors_are_not_spread_into_matrices() -> None:
    psi = np.linspace(0.0, 1.0, 50)
    with pytest.raises(ValueError, match="`output_velocity`"):
        expected_acceleration(psi, np.full((50, 1), 0.3), 0.0, 0.8, [0.0, 0.0, 1.0])
    assert expected_acceleration(psi, 0.3, 0.0, 0.8, [0.0, 0.0, 1.0]).shape == (50, 3)
    batch = expected_acceleration(np.stack([psi, -psi]), np.full(50, 0.3), 0.0, 0.8, [0, 0, 1])
    np.testing.assert_array_equal(batch[1], expected_acceleration(-psi, 0.3, 0.0, 0.8, [0, 0, 1]))


def test_any_finite_scale_gives_finite_results_or_a_named_error() -> None:
    th = np.linspace(0, 2 * np.pi * 12, 2401)
    s = 1.5 + 0.3 * np.cos(2 * th + 0.5)
    base = order_spectrum(th, signal=s, orders=[1.0, 2.0])
    for scale in (1e300, 1e-300):
        with np.errstate(all="raise"):
            sp = order_spectrum(th, signal=s * scale, orders=[1.0, 2.0])
            exp, ok = moving_average_expected(th, s * scale)
            norm = combine_axes(np.array([[3.0, 4.0, 0.0]]) * scale)
        np.testing.assert_allclose(sp.phasors / scale, base.phasors, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sp.residual_rms / scale, base.residual_rms, atol=1e-12)
        np.testing.assert_allclose(exp[ok] / scale, 1.5, atol=1e-3)
        np.testing.assert_allclose(norm / scale, [5.0])
    with pytest.raises(ValueError, match="`acceleration`"):
        combine_axes([[1e200, 0.0, 0.0]], method="sum_of_squares")
    with pytest.raises(ValueError, match="`output_velocity`"):
        expected_acceleration(0.0, 1e200, 0.0, 0.8, [0.0, 0.0, 1.0])
    # the phasor model is invariant to the units of corrections and deviations
    rng = np.random.default_rng(5)
    g = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    cs = rng.normal(size=(4, 2)) + 1j * rng.normal(size=(4, 2))
    cstar = rng.normal(size=2) + 1j * rng.normal(size=2)
    ys = g[None] * (cs[:, None, :] - cstar)
    fit = fit_phasor_response(cs, ys)
    for c_scale, y_scale in ((1e300, 1.0), (1e-300, 1e-300), (1.0, 1e300)):
        with np.errstate(all="raise"):
            scaled = fit_phasor_response(cs * c_scale, ys * y_scale)
        np.testing.assert_allclose(scaled.optimum / c_scale, fit.optimum, rtol=1e-9)
        np.testing.assert_allclose(
            scaled.response * c_scale / y_scale, fit.response, rtol=1e-9, atol=1e-12
        )
    with pytest.raises(InsufficientDataError, match="`deviations`.*respond"):
        fit_phasor_response(cs, np.ones_like(ys))


def test_model_coefficients_and_orders_are_bounded() -> None:
    with pytest.raises(ValueError, match="`coefficients`.*half a motor revolution"):
        KinematicErrorModel([2.0], [[4.0, 0.0]])
    with pytest.raises(ValueError, match="`orders`"):
        KinematicErrorModel([2e4], [[1e-3, 0.0]])
    with pytest.raises(ValueError, match="`n`"):
        KinematicErrorModel([2.0], [[1e-3, 0.0]]).derivative(0.0, True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`order`"):
        motor_speed_for_resonance(10.0, order=1e5)
    with pytest.raises(ValueError, match="`min_samples_per_period`"):
        order_spectrum(
            np.linspace(0, 20, 200), signal=np.zeros(200), orders=[1.0], min_samples_per_period=1.5
        )


def test_records_with_nan_raise_and_offer_no_omit():
    # Order spectra and the moving-average expected value need gap-free, uniformly sampled
    # records: a NaN raises (naming the array) and there is no `nan_policy` to drop it.
    th = np.linspace(0, 2 * np.pi * 12, 4801)
    acc = np.zeros((th.size, 3))
    acc[:, 1] = 0.2 * np.cos(2 * th)
    acc[100, 0] = np.nan
    with pytest.raises(ValueError, match="`signal` to be finite"):
        order_spectrum(th, signal=acc.T, orders=[1.0, 2.0])
    with pytest.raises(ValueError, match="`readings`"):
        measure_run(th, readings=acc, orders=[1.0, 2.0])
    with pytest.raises(TypeError, match="nan_policy"):
        order_spectrum(th, signal=acc.T, orders=[1.0, 2.0], nan_policy="omit")  # type: ignore[call-arg]


def test_phasor_inputs_refuse_ragged_rows_and_integers_beyond_float():
    # A ragged list used to fail inside numpy: "setting an array element with a sequence".
    with pytest.raises(ValueError, match="`corrections` to be numeric .*got a ragged list"):
        fit_phasor_response([[1 + 1j, 2], [3]], [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="`deviations` to be numeric .*got a ragged list"):
        fit_phasor_response([[0.0], [1.0]], [[[1j]], [[1j, 2.0]]])
    with pytest.raises(ValueError, match="`response` to be numeric .*got a ragged list"):
        phasor_gradient([[1j, 2.0], [1.0]], [[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="`deviation` within the float64 range"):
        phasor_gradient([[2.0 + 0j]], [[10**400]])
    with pytest.raises(ValueError, match="`phasors` to be finite"):
        KinematicErrorModel.from_phasors([1.0], [complex(np.inf, 0.0)])
    # Complex phasors stay legitimate, real ones are taken as complex.
    assert phasor_gradient([[2.0 + 0j]], [[1.0]]).tolist() == [[4.0, 0.0]]
