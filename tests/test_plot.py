"""gravdir.plot draws what it says, headless."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from gravdir import fit_sweep
from gravdir.errors import GravdirWarning
from gravdir.plot import plot_sweep


@pytest.fixture
def sweep():
    q = np.concatenate([np.linspace(-1.0, 2.5, 300), np.linspace(2.5, -1.0, 300)])
    v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    torque = 0.2 + 4.0 * np.sin(q - 0.5) + 0.6 * np.sign(v)
    return q, torque, v


def test_plot_sweep_draws_data_model_band_and_zeros(sweep):
    q, torque, v = sweep
    fit = fit_sweep(q, torque, v)
    ax = plot_sweep(fit, q, torque, v, degrees=False)
    lines = {line.get_label(): line for line in ax.get_lines()}
    # only the stable zero (q = 0.5) lies in the swept range; the unstable one (0.5 + pi) does not
    assert set(lines) == {"forward", "backward", "offset + gravity", "stable zero"}
    # the data lines hold the samples of each direction
    assert lines["forward"].get_xdata().size == 300
    np.testing.assert_allclose(lines["backward"].get_ydata(), torque[v < 0])
    # the model line is offset + A sin(q + phi)
    x = np.asarray(lines["offset + gravity"].get_xdata())
    y = np.asarray(lines["offset + gravity"].get_ydata())
    np.testing.assert_allclose(y, 0.2 + 4.0 * np.sin(x - 0.5), atol=1e-9)
    zero_x = [line.get_xdata()[0] for line in ax.get_lines() if "zero" in line.get_label()]
    assert zero_x == pytest.approx([0.5])
    # the friction band spans 2 x 0.6 around the model
    band = [c for c in ax.collections if c.get_label() == "friction"]
    assert len(band) == 1
    verts = band[0].get_paths()[0].vertices
    assert np.ptp(verts[:, 1]) > 8.0
    plt.close("all")


def test_plot_sweep_marks_unwrapped_zero_copies_in_degrees(sweep):
    q, torque, v = sweep
    q2 = q + 2 * np.pi  # the same sweep, unwrapped one turn on
    fit = fit_sweep(q2, torque, v)
    ax = plot_sweep(fit, q2, torque, v)
    zero_x = [line.get_xdata()[0] for line in ax.get_lines() if line.get_label() == "stable zero"]
    assert zero_x == pytest.approx([np.degrees(0.5 + 2 * np.pi)])
    assert ax.get_xlabel() == "joint angle [deg]"
    plt.close("all")


def test_plot_sweep_rejects_batches_and_mismatched_arrays(sweep):
    q, torque, v = sweep
    batch = fit_sweep(np.stack([q, q]), np.stack([torque, torque]), np.stack([v, v]))
    with pytest.raises(ValueError, match="`fit`"):
        plot_sweep(batch, q, torque, v)
    fit = fit_sweep(q, torque, v)
    with pytest.raises(ValueError, match="`q`"):
        plot_sweep(fit, q[:-1], torque, v)


def test_plot_sweep_draws_an_entry_of_a_batched_fit(sweep):
    q, torque, v = sweep
    batch = fit_sweep(np.stack([q, q]), np.stack([torque, 2 * torque]), v)
    ax = plot_sweep(batch[1], q, torque=2 * torque, velocity=v, degrees=False)
    model = [line for line in ax.get_lines() if line.get_label() == "offset + gravity"][0]
    x = np.asarray(model.get_xdata())
    np.testing.assert_allclose(model.get_ydata(), 2 * (0.2 + 4.0 * np.sin(x - 0.5)), atol=1e-9)
    plt.close("all")


def test_plot_sweep_checks_its_inputs_up_front(sweep):
    q, torque, v = sweep
    fit = fit_sweep(q, torque, v)
    for args, kwargs, name in [
        ((fit, np.degrees(q), torque, v), {}, "q"),  # degrees for radians
        ((fit, q, torque[:, None], v), {}, "torque"),  # a column vector does not broadcast
        ((fit, q[:1], torque[:1], v[:1]), {}, "q"),  # too few samples to draw a sweep
        ((fit, q, np.r_[torque[:-1], np.nan], v), {}, "torque"),
        ((fit, q.astype(str), torque, v), {}, "q"),  # numeric strings
        ((fit.to_dict(), q, torque, v), {}, "fit"),
        ((fit, q, torque, v), {"ax": "axes"}, "ax"),
        ((fit, q, torque, v), {"degrees": "yes"}, "degrees"),
    ]:
        with pytest.raises(ValueError, match=f"`{name}`"):
            plot_sweep(*args, **kwargs)
    assert not plt.get_fignums()  # refused before any figure was made


def test_plot_sweep_draws_into_given_axes_and_leaves_the_inputs_alone(sweep):
    q, torque, v = sweep
    fit = fit_sweep(q, torque, v)
    before = [a.copy() for a in (q, torque, v)]
    _, ax = plt.subplots()
    assert plot_sweep(fit, q, torque, v, ax=ax) is ax
    for a, b in zip(before, (q, torque, v), strict=True):
        np.testing.assert_array_equal(a, b)
    # A sweep whose torque is 1e300: the fit and the plot stay finite.
    with pytest.warns(GravdirWarning, match="float range"):
        big_fit = fit_sweep(q, 1e300 * torque, v)
    with np.errstate(all="raise"):
        big = plot_sweep(big_fit, q, 1e300 * torque, v)
    model = [line for line in big.get_lines() if line.get_label() == "offset + gravity"][0]
    assert np.isfinite(model.get_ydata()).all()
    plt.close("all")
