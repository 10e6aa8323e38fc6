"""A model evaluated at one point given as a number returns a Python float; arrays stay arrays."""

from __future__ import annotations

import numpy as np
import pytest

from gravdir.friction import (
    AsymmetricStribeckFriction,
    CoulombViscousFriction,
    LoadDependentFriction,
    StribeckFriction,
    fit_friction,
)
from gravdir.kinematic_error import KinematicErrorModel

NUMBERS = [0.3, 1, np.float64(0.3), np.float32(0.3), np.int64(1)]

KEM = KinematicErrorModel([1.0, 2.0], [[0.01, -0.002], [0.003, 0.004]])
STRIBECK = StribeckFriction(coulomb=2.0, static=3.0, stribeck_velocity=0.05, viscous=1.0)
MODELS = [
    CoulombViscousFriction(coulomb=2.0, viscous=1.5, offset=0.1),
    STRIBECK,
    AsymmetricStribeckFriction(2.0, 3.0, 0.05, 1.0, 1.5, 2.5, 0.04, 0.8),
]


def _fit():
    rng = np.random.default_rng(3)
    v = np.concatenate([np.geomspace(0.01, 1.0, 40), -np.geomspace(0.01, 1.0, 40)])
    tau = STRIBECK.evaluate(v) + rng.normal(0.0, 0.01, v.size)
    return fit_friction(v, torque=tau, model="coulomb-viscous")


@pytest.mark.parametrize("x", NUMBERS, ids=repr)
def test_kinematic_error_model_gives_a_float_for_a_number(x):
    for n in (0, 1, 2):
        out = KEM.derivative(x, n)
        assert type(out) is float
        assert out == pytest.approx(float(KEM.derivative(np.array([float(x)]), n)[0]), abs=1e-15)
    out = KEM.correction(x)
    assert type(out) is float
    assert out == pytest.approx(float(KEM.correction(np.array([float(x)]))[0]), abs=1e-15)


@pytest.mark.parametrize("x", NUMBERS, ids=repr)
def test_friction_models_give_a_float_for_a_number(x):
    for model in MODELS:
        out = model.evaluate(x)
        assert type(out) is float
        assert out == float(model.evaluate(np.array([float(x)]))[0])
    loaded = LoadDependentFriction(MODELS[0], load_coefficient=0.05)
    out = loaded.evaluate(x, load=-20.0)
    assert type(out) is float
    assert out == float(loaded.evaluate([float(x)], load=[-20.0])[0])
    fit = _fit()
    out = fit.predict(x)
    assert type(out) is float
    assert out == float(fit.predict(np.array([float(x)]))[0])


def test_arrays_stay_arrays():
    """A 0-d array, a list and an n-d array keep their shapes, as does a number broadcast
    against an array argument."""
    fit = _fit()
    loaded = LoadDependentFriction(MODELS[0], load_coefficient=0.05)
    calls = [KEM.correction, lambda x: KEM.derivative(x, 1), fit.predict]
    calls += [m.evaluate for m in MODELS]
    for call in calls:
        for x, shape in ((np.array(0.3), ()), ([0.3], (1,)), (np.full((2, 3), 0.3), (2, 3))):
            out = call(x)
            assert isinstance(out, np.ndarray) and out.shape == shape
    out = loaded.evaluate(0.3, load=[1.0, 2.0])
    assert isinstance(out, np.ndarray) and out.shape == (2,)
