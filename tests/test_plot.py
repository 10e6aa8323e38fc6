"""gravdir.plot draws what it says, from real results on synthetic data, headless."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Ellipse  # noqa: E402

from gravdir import (  # noqa: E402
    InfluenceTuner,
    chain_from_dh,
    estimate_up,
    excitation_trajectory,
    fit_friction,
    fit_sweep,
    harmonic_drive_orders,
    joint_sweep_from_chain,
    motor_speed_for_resonance,
    order_spectrum,
    tool_tip_and_up_from_touches,
    up_from_touch_points,
)
from gravdir.errors import GravdirWarning  # noqa: E402
from gravdir.friction._estimate import fit_jacobian  # noqa: E402
from gravdir.general import JointSweep  # noqa: E402
from gravdir.kinematics import link_frames  # noqa: E402
from gravdir.plot import (  # noqa: E402
    plot_friction,
    plot_order_spectrum,
    plot_sweep,
    plot_touches,
    plot_tuner,
    plot_up,
)
from gravdir.synthetic import (  # noqa: E402
    HarmonicDriveJoint,
    SyntheticFrictionJoint,
    constant_speed_run,
    holding_torque,
    realistic_sensors,
    touch_contacts,
    up_from_base_tilt,
    ur5_arm,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _legends_outside(fig) -> int:
    """Assert every legend of `fig` lies outside the data area of its axes; count them."""
    fig.canvas.draw()
    count = 0
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        count += 1
        assert not legend.get_window_extent().overlaps(ax.get_window_extent()), ax.get_title()
    return count


def _labelled(ax, label):
    return [a for a in ax.get_children() if getattr(a, "get_label", lambda: "")() == label]


def _lines(ax):
    return {line.get_label(): line for line in ax.get_lines()}


# --------------------------------------------------------------------------------------------
# plot_sweep


@pytest.fixture(scope="module")
def arm_sweep():
    """A J2 sweep of a UR5-like arm with realistic sensor errors (ripple, load friction)."""
    rng = np.random.default_rng(11)
    arm = ur5_arm(up_from_base_tilt(np.radians(10.0), np.radians(30.0)))
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    config = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, 0.0])
    rec = arm.sweep(1, config, -1.0, 1.0, 0.5, 200.0, sensor=sensors, rng=rng)
    return rec, sensors[1]


def test_plot_sweep_draws_data_model_terms_and_residuals(arm_sweep):
    rec, sensor = arm_sweep
    order = sensor.ripple_order
    fit = fit_sweep(
        rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs", harmonics=(order,)
    )
    fig, axes = plot_sweep(fit, rec.q, velocity=rec.velocity, torque=rec.torque)
    assert len(axes) == 3 and all(ax.figure is fig for ax in axes)
    top, terms, bottom = axes
    # units on every axis
    assert top.get_ylabel() == "torque [N·m]"
    assert terms.get_ylabel() == "fitted term [N·m]"
    assert bottom.get_ylabel() == "data − model [N·m]"
    assert bottom.get_xlabel() == "joint angle [deg]"
    lines = _lines(top)
    # the ramps of a trapezoid sweep fall below the default min_speed: drawn apart, not fitted
    n_fwd, n_bwd = lines["forward"].get_xdata().size, lines["backward"].get_xdata().size
    assert n_fwd + n_bwd == int(fit.n_used)
    assert lines["not used"].get_xdata().size == rec.q.size - int(fit.n_used)
    # the residual panel is data - model over the used samples: its RMS is the fit's own
    resid = np.asarray(_lines(bottom)["data − model"].get_ydata())
    assert resid.size == int(fit.n_used)
    assert np.sqrt(np.mean(resid**2)) == pytest.approx(float(fit.residual_rms), rel=1e-9)
    # every fitted term has an artist; the gravity term is A sin(q + phi) on its grid
    term_labels = {a.get_label() for a in terms.get_lines()}
    assert {
        "gravity A sin(q + φ)",
        "friction F_c sgn v + F_v v",
        f"harmonic k = {order:g}",
        "load friction μ |τ_g| sgn v",
    } <= term_labels
    assert any(label.startswith("offset c = ") for label in term_labels)
    gravity = _lines(terms)["gravity A sin(q + φ)"]
    x = np.radians(np.asarray(gravity.get_xdata()))
    np.testing.assert_allclose(
        gravity.get_ydata(), float(fit.amplitude) * np.sin(x + float(fit.phase)), atol=1e-9
    )
    # the model lines plus the residuals give back the data, sample for sample
    model_fwd = np.asarray(lines["model, forward"].get_ydata())
    assert np.sort(model_fwd).size == n_fwd
    # the legend of every panel is outside its axes, so it covers no data
    assert _legends_outside(fig) == 3


def test_plot_sweep_recomputes_each_term_of_an_inertia_fit():
    rng = np.random.default_rng(3)
    q = np.concatenate([np.linspace(-1, 1, 300), np.linspace(1, -1, 300)])
    v = np.concatenate([np.full(300, 0.2), np.full(300, -0.2)]) * (1 + 0.3 * np.sin(5 * q))
    acc = -0.5 * np.sin(3 * q) * np.sign(v)
    torque = 0.3 + 5.0 * np.sin(q + 0.4) + 0.8 * np.sign(v) + 0.9 * acc
    torque += 0.2 * np.sin(q) * np.sign(v) + rng.normal(0, 0.01, q.size)
    fit = fit_sweep(
        q, velocity=v, torque=torque, acceleration=acc, load_friction="signed", min_speed=0.0
    )
    fig, axes = plot_sweep(
        fit, q, velocity=v, torque=torque, acceleration=acc, min_speed=0.0, degrees=False
    )
    labels = {a.get_label() for a in axes[1].get_lines()}
    assert {"inertia I q̈", "load friction μ |τ_g| sgn v"} <= labels
    inertia = _lines(axes[1])["inertia I q̈"]
    np.testing.assert_allclose(inertia.get_ydata(), float(fit.inertia) * acc, rtol=1e-12)
    resid = np.asarray(_lines(axes[2])["data − model"].get_ydata())
    assert np.sqrt(np.mean(resid**2)) == pytest.approx(float(fit.residual_rms), rel=1e-9)
    assert axes[2].get_xlabel() == "joint angle [rad]"
    # the acceleration belongs to the model: leaving it out is refused
    with pytest.raises(ValueError, match="`acceleration`"):
        plot_sweep(fit, q, velocity=v, torque=torque, min_speed=0.0)


def test_plot_sweep_refuses_samples_or_options_other_than_the_fit(arm_sweep):
    rec, _ = arm_sweep
    fit = fit_sweep(rec.q, velocity=rec.velocity, torque=-rec.torque, torque_sign=-1)
    _, axes = plot_sweep(fit, rec.q, velocity=rec.velocity, torque=-rec.torque, torque_sign=-1)
    # drawn in gravdir's sign, as fitted
    forward = _lines(axes[0])["forward"]
    used = np.abs(rec.velocity) >= 0.1 * np.abs(rec.velocity).max()
    np.testing.assert_allclose(forward.get_ydata(), rec.torque[used & (rec.velocity > 0)])
    with pytest.raises(ValueError, match="residual RMS"):
        plot_sweep(fit, rec.q, velocity=rec.velocity, torque=-rec.torque)  # the sign forgotten
    with pytest.raises(ValueError, match="used samples"):
        plot_sweep(
            fit, rec.q, velocity=rec.velocity, torque=-rec.torque, torque_sign=-1, min_speed=0.0
        )


def test_plot_sweep_marks_unwrapped_zero_copies_and_draws_into_one_axes():
    q = np.concatenate([np.linspace(-1.0, 2.5, 300), np.linspace(2.5, -1.0, 300)]) + 2 * np.pi
    v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    torque = 0.2 + 4.0 * np.sin(q - 0.5) + 0.6 * np.sign(v)
    fit = fit_sweep(q, velocity=v, torque=torque)
    _, ax = plt.subplots()
    fig, axes = plot_sweep(fit, q, velocity=v, torque=torque, ax=ax)
    assert axes == (ax,) and fig is ax.figure  # one Axes: the fit panel only
    zero_x = [line.get_xdata()[0] for line in ax.get_lines() if line.get_label() == "stable zero"]
    assert zero_x == pytest.approx([np.degrees(0.5 + 2 * np.pi)])
    assert ax.get_xlabel() == "joint angle [deg]"
    assert _legends_outside(fig) == 1


def test_plot_sweep_checks_its_inputs_up_front():
    q = np.concatenate([np.linspace(-1.0, 2.5, 300), np.linspace(2.5, -1.0, 300)])
    v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    torque = 0.2 + 4.0 * np.sin(q - 0.5) + 0.6 * np.sign(v)
    fit = fit_sweep(q, velocity=v, torque=torque)
    batch = fit_sweep(np.stack([q, q]), velocity=v, torque=np.stack([torque, torque]))
    for args, kwargs, name in [
        ((batch, q, torque, v), {}, "fit"),
        ((fit, np.degrees(q), torque, v), {}, "q"),
        ((fit, q, torque[:, None], v), {}, "torque"),
        ((fit, q[:1], torque[:1], v[:1]), {}, "q"),
        ((fit, q, np.r_[torque[:-1], np.nan], v), {}, "torque"),
        ((fit, q.astype(str), torque, v), {}, "q"),
        ((fit.to_dict(), q, torque, v), {}, "fit"),
        ((fit, q, torque, v), {"ax": "axes"}, "ax"),
        ((fit, q, torque, v), {"degrees": "yes"}, "degrees"),
        ((fit, q, torque, v), {"torque_sign": 2}, "torque_sign"),
        ((fit, q, torque, v), {"min_speed": -1.0}, "min_speed"),
        ((fit, q, torque + 1.0, v), {}, "q"),  # not the fitted samples
    ]:
        with pytest.raises(ValueError, match=f"`{name}`"):
            plot_sweep(*args[:2], velocity=args[3], torque=args[2], **kwargs)
    assert not plt.get_fignums()  # refused before any figure was made


def test_plot_sweep_of_extreme_torques_stays_finite():
    q = np.concatenate([np.linspace(-1.0, 2.5, 300), np.linspace(2.5, -1.0, 300)])
    v = np.concatenate([np.full(300, 0.3), np.full(300, -0.3)])
    torque = 1e300 * (0.2 + 4.0 * np.sin(q - 0.5) + 0.6 * np.sign(v))
    with pytest.warns(GravdirWarning, match="float range"):
        fit = fit_sweep(q, velocity=v, torque=torque)
    with np.errstate(all="raise"):
        _, axes = plot_sweep(fit, q, velocity=v, torque=torque)
    assert np.isfinite(_lines(axes[0])["offset + gravity"].get_ydata()).all()


# --------------------------------------------------------------------------------------------
# plot_up


def _two_joint_sweeps(noise: float, seed: int = 0):
    """J2 of a two-joint arm swept at J1 = 0, 90°, 180°; torque from explicit cross products."""
    rng = np.random.default_rng(seed)
    chain = chain_from_dh([0.2, 0.0], [0.0, 0.0], [0.0, 0.5], [np.pi / 2, 0.0])
    up = np.array([np.sin(0.02) * np.cos(1.0), np.sin(0.02) * np.sin(1.0), np.cos(0.02)])
    mass, com = 2.0, np.array([0.4, 0.0, 0.05])  # in link 2's frame
    q = np.concatenate([np.linspace(-1, 1, 200), np.linspace(1, -1, 200)])
    v = np.concatenate([np.full(200, 0.3), np.full(200, -0.3)])
    sweeps = []
    for q1 in (0.0, np.pi / 2, np.pi):
        torque = np.empty(q.size)
        for i, qi in enumerate(q):
            frames = link_frames(chain, [q1, qi])
            lever = frames.rotations[1] @ com
            axis = frames.rotations[1] @ chain.axes_in_link[1]
            # holding torque = -(gravity torque about +axis); gravity = -9.81 up
            torque[i] = -np.cross(lever, -9.81 * mass * up) @ axis
        torque += 0.3 * np.sign(v) + noise * rng.standard_normal(q.size)
        rot = link_frames(chain, [q1, 0.0]).rotations[1]
        sweeps.append(
            JointSweep(1, rot, chain.axes_in_link[1], 0.0, fit_sweep(q, velocity=v, torque=torque))
        )
    return estimate_up(sweeps), sweeps, up


def _polyline_distance(xy: np.ndarray, point: np.ndarray) -> float:
    """Distance from `point` to the polyline through the finite rows of `xy`."""
    best = np.inf
    for a, b in zip(xy[:-1], xy[1:], strict=True):
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            continue
        d = b - a
        t = np.clip((point - a) @ d / max(d @ d, 1e-300), 0.0, 1.0)
        best = min(best, float(np.linalg.norm(a + t * d - point)))
    return best


def _ur5_estimate():
    """J2 of a UR5-like arm on a 25° tilted base, swept at three J1 positions with realistic
    sensor errors, fitted with load friction and the ripple order, and the estimate."""
    rng = np.random.default_rng(7)
    arm = ur5_arm(up_from_base_tilt(np.radians(25.0), np.radians(40.0)))
    chain = chain_from_dh(*arm.dh.T)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    config = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, 0.0])
    sweeps = []
    for position in (0.0, 1.5, 3.0):
        c = config.copy()
        c[0] = position
        rec = arm.sweep(1, c, -1.0, 1.0, 0.5, 100.0, sensor=sensors, rng=rng)
        fit = fit_sweep(
            rec.q,
            velocity=rec.velocity,
            torque=rec.torque,
            load_friction="abs",
            harmonics=(sensors[1].ripple_order,),
        )
        c[1] = rec.q[0]
        sweeps.append(joint_sweep_from_chain(chain, c, 1, fit))
    return estimate_up(sweeps), sweeps, arm.up


def test_plot_up_ellipses_match_the_reported_uncertainty():
    est, sweeps, truth = _ur5_estimate()
    fig, axes = plot_up(est, sweeps, truth=truth)
    (ax,) = axes
    assert "[deg]" in ax.get_xlabel() and "[deg]" in ax.get_ylabel()
    ellipses = [p for p in ax.patches if isinstance(p, Ellipse)]
    assert [e.get_label() for e in ellipses] == ["1σ", "2σ"]
    one, two = ellipses
    # root-sum-square of the 1-sigma semi-axes is the reported RMS angular error
    assert np.hypot(one.width / 2, one.height / 2) == pytest.approx(est.up_std_deg, rel=1e-9)
    assert (two.width, two.height) == pytest.approx((2 * one.width, 2 * one.height), rel=1e-12)
    # a point on the 1-sigma ellipse has Mahalanobis distance 1 under the tangent information
    basis_x = np.array([np.cos(np.radians(one.angle)), np.sin(np.radians(one.angle))]) * np.radians(
        one.width / 2
    )
    from gravdir._sphere import tangent_basis

    b = tangent_basis(est.up)
    info2 = b @ est.up_information @ b.T
    assert basis_x @ info2 @ basis_x == pytest.approx(1.0, rel=1e-6)
    # the truth sits at its angle from the estimate
    marker = [line for line in ax.get_lines() if line.get_label().startswith("truth")][0]
    angle = np.degrees(np.arccos(np.clip(truth @ est.up, -1, 1)))
    assert np.hypot(marker.get_xdata()[0], marker.get_ydata()[0]) == pytest.approx(angle, rel=1e-6)
    # each sweep: an amplitude and a phase curve, each with two band lines
    labels = [line.get_label() for line in ax.get_lines()]
    for i in range(3):
        assert f"sweep {i} (J2): amplitude" in labels and f"sweep {i} (J2): phase" in labels
    assert labels.count("_nolegend_") == 3 * 4
    assert _legends_outside(fig) == 1


def test_plot_up_sweep_constraints_pass_through_an_exact_estimate():
    est, sweeps, truth = _two_joint_sweeps(noise=0.0)
    assert np.degrees(np.arccos(min(1.0, truth @ est.up))) < 1e-6
    _, (ax,) = plot_up(est, sweeps)
    drawn = 0
    for line in ax.get_lines():
        label = line.get_label()
        if label.startswith("sweep"):
            drawn += 1
            xy = np.c_[line.get_xdata(), line.get_ydata()]
            # through the estimate, to its convergence tolerance (1e-10 rad)
            assert _polyline_distance(xy, np.zeros(2)) < 1e-7, label
    assert drawn == 6


def test_plot_up_of_any_up_result_near_tilt_zero_and_far_truth():
    rng = np.random.default_rng(4)
    pts = np.c_[rng.uniform(-0.2, 0.2, (10, 2)), rng.normal(0, 1e-5, 10)]
    fit = up_from_touch_points(pts)
    assert np.degrees(np.arccos(fit.up[2])) < 0.1  # an `up` near tilt 0 draws without trouble
    fig, (ax,) = plot_up(fit, truth=[np.sin(0.5), 0.0, np.cos(0.5)])
    assert len([p for p in ax.patches if isinstance(p, Ellipse)]) == 2
    # a truth 29° away, beyond the view of a 0.003° estimate: an arrow at the edge
    notes = [t for t in ax.texts if t.get_text().startswith("truth")]
    assert len(notes) == 1 and "away" in notes[0].get_text()
    assert not [line for line in ax.get_lines() if line.get_label().startswith("truth")]
    # three points without a noise level carry no information: no ellipse, a note instead
    with pytest.warns(GravdirWarning):
        three = up_from_touch_points(pts[:3])
    _, (ax3,) = plot_up(three)
    assert not ax3.patches
    assert any("unbounded" in t.get_text() for t in ax3.texts)
    with pytest.raises(ValueError, match="`sweeps`"):
        plot_up(fit, [])
    with pytest.raises(ValueError, match="`truth`"):
        plot_up(fit, truth=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="`result`"):
        plot_up(pts)


# --------------------------------------------------------------------------------------------
# plot_touches


def test_plot_touches_draws_contacts_in_the_plane_and_their_residuals():
    data = touch_contacts(np.random.default_rng(8), 12, noise_std=2e-5)
    pts = np.array(data.contacts)
    pts[4] += 5e-3 * data.up  # one contact 5 mm off the plane
    fit = up_from_touch_points(pts, robust=True, noise_std=2e-5)
    assert not fit.inliers[4]
    fig, axes = plot_touches(fit, pts)
    plane, res = axes
    assert "[m]" in plane.get_xlabel() and "[m]" in plane.get_ylabel()
    assert res.get_ylabel() == "signed distance to the plane [m]"
    # one bar per contact, of height its distance to the fitted plane; the rejected one red
    heights = np.array([p.get_height() for p in res.patches])
    np.testing.assert_allclose(heights, pts @ fit.up - float(fit.offset), atol=1e-12)
    red = matplotlib.colors.to_rgba("C3")
    reds = [i for i, p in enumerate(res.patches) if p.get_facecolor() == red]
    assert reds == [4]
    assert [line.get_label() for line in plane.get_lines()] == ["rejected"]
    # in-plane coordinates keep the in-plane distances of the contacts
    xy = _labelled(plane, "contacts")[0].get_offsets()
    d = pts[:, None] - pts[None]
    in_plane = np.sqrt(np.sum(d**2, -1) - (d @ fit.up) ** 2)
    np.testing.assert_allclose(np.linalg.norm(xy[:, None] - xy[None], axis=-1), in_plane, atol=1e-9)
    # ± noise_std lines, a colour bar with its unit, legends outside
    sigma = [line for line in res.get_lines() if line.get_label().startswith("± noise_std")]
    assert sigma and sigma[0].get_ydata()[0] == pytest.approx(2e-5)
    # The colour bar in the power of ten of metres of the largest residual, named in its label.
    (bar,) = [a for a in fig.axes if a not in axes]
    unit = re.fullmatch(
        r"signed distance to the plane \[(?:\$10\^\{(-?\d+)\}\$ )?m\]", bar.get_xlabel()
    )
    assert unit is not None, bar.get_xlabel()
    power = int(unit.group(1) or 0)
    assert power == np.floor(np.log10(np.max(np.abs(fit.residuals))))
    colours = np.asarray(_labelled(plane, "contacts")[0].get_array())
    np.testing.assert_allclose(colours * 10.0**power, fit.residuals, rtol=1e-12)
    assert _legends_outside(fig) == 2


def test_plot_touches_of_a_tool_plane_fit_from_its_flange_poses():
    from gravdir import plan_touches

    rng = np.random.default_rng(2024)
    plan = plan_touches(8, max_tilt=np.radians(30.0), radius=0.1)
    data = touch_contacts(
        rng,
        8,
        noise_std=2e-5,
        relative_rotations=plan.relative_rotations,
        spots=plan.spots[:, :2],
        spot_jitter=0.01,
    )
    fit = tool_tip_and_up_from_touches(data.flange_poses, noise_std=2e-5)
    fig, axes = plot_touches(fit, flange_poses=data.flange_poses)
    assert len(axes[1].patches) == 8
    assert "tool tip" in axes[0].get_title()
    with pytest.raises(ValueError, match="`flange_poses`"):
        plot_touches(fit, flange_poses=data.flange_poses[:, :, ::-1])
    plane = up_from_touch_points(data.contacts)
    with pytest.raises(ValueError, match="`tool_tip`"):
        plot_touches(plane, flange_poses=data.flange_poses)
    with pytest.raises(ValueError, match="`points`"):
        plot_touches(plane, data.contacts + 1e-3)
    with pytest.raises(ValueError, match="`points`"):
        plot_touches(plane)


# --------------------------------------------------------------------------------------------
# plot_order_spectrum and plot_tuner


@pytest.fixture(scope="module")
def tuner():
    """The kinematic-error example's InfluenceTuner after three runs."""
    orders = harmonic_drive_orders(200, 202)
    joint = HarmonicDriveJoint(noise_density=150e-6 * 9.80665, up=np.array([0.0, -1.0, 0.0]))
    rng = np.random.default_rng(0)
    t = InfluenceTuner(orders)
    for _ in range(3):
        speed = motor_speed_for_resonance(10.0)
        run = constant_speed_run(joint, speed, 110, correction=t.model, rng=rng)
        t.step(run.motor_angle, readings=run.acceleration)
    return t


def test_plot_order_spectrum_draws_before_and_after_at_each_order(tuner):
    before, after = tuner.history[0].spectrum, tuner.history[-1].spectrum
    fig, (ax,) = plot_order_spectrum(before, after)
    k = tuner.orders.size
    assert len(ax.patches) == 2 * k
    heights = np.array([p.get_height() for p in ax.patches])
    np.testing.assert_allclose(heights[:k], [before.amplitude(q) for q in tuner.orders])
    np.testing.assert_allclose(heights[k:], [after.amplitude(q) for q in tuner.orders])
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"{q:.4g}" for q in tuner.orders]
    assert ax.get_ylabel() == "amplitude [m/s²]" and ax.get_yscale() == "log"
    assert "cycles per motor revolution" in ax.get_xlabel()
    db = [t.get_text() for t in ax.texts]
    at2 = list(tuner.orders).index(2.0)
    expected = 20 * np.log10(after.amplitude(2.0) / before.amplitude(2.0))
    assert db[at2] == f"{expected:+.1f} dB" and expected < -20
    assert _legends_outside(fig) == 1


def test_plot_order_spectrum_of_several_channels_is_their_root_sum_square():
    th = np.linspace(0, 2 * np.pi * 20, 8001)
    signal = np.stack([0.3 * np.cos(2 * th), 0.4 * np.sin(2 * th + 1), 0.1 * np.cos(th)])
    spec = order_spectrum(th, signal=signal, orders=[1.0, 2.0])
    _, (ax,) = plot_order_spectrum(spec)
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([0.1, 0.5], rel=1e-9)
    other = order_spectrum(th, signal=signal, orders=[1.0, 3.0])
    with pytest.raises(ValueError, match="`after`"):
        plot_order_spectrum(spec, other)
    with pytest.raises(ValueError, match="`before`"):
        plot_order_spectrum(signal)


def test_plot_tuner_draws_each_run_deviation_and_correction(tuner):
    fig, axes = plot_tuner(tuner, threshold=1e-3)
    dev, corr = axes
    runs = tuner.history
    for j, q in enumerate(tuner.orders):
        line = _lines(dev)[f"order {q:.4g}"]
        np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3])
        np.testing.assert_allclose(line.get_ydata(), [r.spectrum.amplitude(q) for r in runs])
        cline = _lines(corr)[f"order {q:.4g}"]
        np.testing.assert_allclose(cline.get_ydata(), [abs(r.model.phasors[j]) for r in runs])
    assert _lines(dev)["threshold"].get_ydata()[0] == 1e-3
    kinds = {r.kind for r in runs}
    assert {f"{k} run" for k in kinds} <= set(_lines(dev))
    assert dev.get_ylabel() == "deviation amplitude [m/s²]"
    assert corr.get_ylabel() == "correction amplitude |c_k| [rad]" and corr.get_xlabel() == "run"
    assert _legends_outside(fig) == 2
    # the runs alone draw the same
    _, axes2 = plot_tuner(list(runs))
    np.testing.assert_allclose(
        _lines(axes2[0])["order 2"].get_ydata(), _lines(dev)["order 2"].get_ydata()
    )
    with pytest.raises(ValueError, match="`tuner`"):
        plot_tuner([])
    with pytest.raises(ValueError, match="`threshold`"):
        plot_tuner(tuner, threshold=-1.0)


# --------------------------------------------------------------------------------------------
# plot_friction


@pytest.fixture(scope="module")
def friction_run():
    rng = np.random.default_rng(2019)
    joint = SyntheticFrictionJoint(offset=0.25, noise_std=0.1)
    plan = excitation_trajectory(
        -1.2,
        1.2,
        np.geomspace(0.005, 1.0, 8),
        max_acceleration=2.0,
        sample_rate=100.0,
        cruise_time=2.0,
    )
    tau = joint.measure(plan.q, plan.velocity, plan.acceleration, rng=rng)
    gravity = holding_torque(
        plan.q, joint_axis=[0, 1, 0], up=[0, 0, 1], first_moment=[2.0, 0.0, 0.5]
    )
    loaded = joint.measure(
        plan.q, plan.velocity, plan.acceleration, gravity_torque=gravity, rng=rng
    )
    return plan, tau, gravity, loaded


def test_plot_friction_band_is_the_delta_method_of_the_fit(friction_run):
    plan, tau, _, _ = friction_run
    fit = fit_friction(plan.velocity, acceleration=plan.acceleration, torque=tau, model="stribeck")
    fig, axes = plot_friction(fit, plan.velocity, torque=tau, acceleration=plan.acceleration)
    assert len(axes) == 2 and axes[1].get_xscale() == "symlog" and axes[0].get_xscale() == "linear"
    for ax in axes:
        assert ax.get_xlabel() == "velocity [rad/s]"
        assert ax.get_ylabel() == "friction torque [N·m]"
    ax = axes[0]
    lines = _lines(ax)
    assert lines["data"].get_xdata().size == int(fit.mask.sum())
    assert lines["not used"].get_xdata().size == int((~fit.mask).sum())
    # the dots are the torque less the fitted inertia: their residual to the curve is the fit's
    data_v = np.asarray(lines["data"].get_xdata())
    data_y = np.asarray(lines["data"].get_ydata())
    np.testing.assert_allclose(data_y - fit.model.evaluate(data_v), fit.residuals, atol=1e-9)
    curve = lines["fitted friction"]
    x, y = np.asarray(curve.get_xdata()), np.asarray(curve.get_ydata())
    ok = np.isfinite(x)
    assert (~ok).sum() == 1  # the two directions, apart
    np.testing.assert_allclose(y[ok], fit.model.evaluate(x[ok]), rtol=1e-12)
    # band half-width: 2 sigma of the curve, sigma from the fit's analytic Jacobian
    bands = [c for c in ax.collections if c.get_label() == "± 2σ of the curve"]
    assert len(bands) == 1
    verts = np.concatenate([p.vertices for c in ax.collections for p in c.get_paths()])
    grid = x[ok][::37]
    jac = fit_jacobian(fit, grid, np.zeros_like(grid))
    sigma = np.sqrt(np.einsum("np,pq,nq->n", jac, fit.parameters_cov, jac))
    for g, s in zip(grid, sigma, strict=True):
        ys = verts[np.isclose(verts[:, 0], g, rtol=1e-12, atol=0), 1]
        assert np.ptp(ys) / 2 == pytest.approx(2 * s, rel=1e-4)
    assert _legends_outside(fig) == 2


def test_plot_friction_of_a_loaded_fit_draws_the_load_free_friction(friction_run):
    plan, _, gravity, loaded = friction_run
    fit = fit_friction(
        plan.velocity,
        acceleration=plan.acceleration,
        torque=loaded,
        gravity_torque=gravity,
        model="coulomb-viscous",
    )
    _, axes = plot_friction(
        fit,
        plan.velocity,
        torque=loaded,
        acceleration=plan.acceleration,
        gravity_torque=gravity,
        nsigma=1.0,
    )
    lines = _lines(axes[0])
    v, y = np.asarray(lines["data"].get_xdata()), np.asarray(lines["data"].get_ydata())
    np.testing.assert_allclose(y - fit.model.base.evaluate(v), fit.residuals, atol=1e-9)
    assert [c.get_label() for c in axes[0].collections][0] == "± 1σ of the curve"
    with pytest.raises(ValueError, match="`gravity_torque`"):
        plot_friction(fit, plan.velocity, torque=loaded, acceleration=plan.acceleration)
    with pytest.raises(ValueError, match="`velocity`"):
        plot_friction(
            fit,
            plan.velocity,
            torque=loaded + 1.0,
            acceleration=plan.acceleration,
            gravity_torque=gravity,
        )
    with pytest.raises(ValueError, match="`nsigma`"):
        plot_friction(
            fit,
            plan.velocity,
            torque=loaded,
            acceleration=plan.acceleration,
            gravity_torque=gravity,
            nsigma=0.0,
        )


# --------------------------------------------------------------------------------------------
# matplotlib stays optional


def test_plot_imports_without_matplotlib_and_names_the_extra_when_called():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["matplotlib"] = None  # as if not installed
        import numpy as np
        import gravdir.plot
        from gravdir import fit_sweep
        assert not any(m.startswith("matplotlib") and sys.modules[m] for m in sys.modules)
        q = np.concatenate([np.linspace(-1, 2, 200), np.linspace(2, -1, 200)])
        v = np.concatenate([np.full(200, 0.3), np.full(200, -0.3)])
        t = 4 * np.sin(q - 0.5) + 0.5 * np.sign(v)
        try:
            gravdir.plot.plot_sweep(fit_sweep(q, velocity=v, torque=t), q, velocity=v, torque=t)
        except ImportError as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "pip install -e '.[plot]'" in out.stdout


# --------------------------------------------------------------------------------------------
# panels given by the caller


def test_every_plot_draws_into_the_axes_it_is_given(friction_run, tuner):
    plan, tau, _, _ = friction_run
    fit = fit_friction(
        plan.velocity, acceleration=plan.acceleration, torque=tau, model="coulomb-viscous"
    )
    fig, grid = plt.subplots(2, 2)
    out_fig, axes = plot_friction(
        fit, plan.velocity, torque=tau, acceleration=plan.acceleration, ax=grid[0]
    )
    assert out_fig is fig and axes == tuple(grid[0])
    assert not grid[1, 0].has_data()
    _, axes = plot_tuner(tuner, ax=grid[1, 0])
    assert axes == (grid[1, 0],) and grid[1, 0].get_xlabel() == "run"
    with pytest.raises(ValueError, match="`ax`"):
        plot_tuner(tuner, ax=list(grid.ravel()))  # four Axes for two panels
    with pytest.raises(ValueError, match="`ax`"):
        plot_order_spectrum(tuner.history[0].spectrum, ax=fig)


def test_plot_up_of_an_exactly_vertical_up_has_no_singularity():
    rng = np.random.default_rng(9)
    pts = np.c_[rng.uniform(-0.2, 0.2, (12, 2)), np.full(12, 0.1)]
    fit = up_from_touch_points(pts, noise_std=1e-5)
    assert np.hypot(fit.up[0], fit.up[1]) < 1e-15  # tilt 0 to rounding: no defined azimuth
    fig, (ax,) = plot_up(fit, truth=[1e-5, 0.0, 1.0])
    one = [p for p in ax.patches if p.get_label() == "1σ"][0]
    assert np.isfinite([one.width, one.height]).all()
    assert np.hypot(one.width / 2, one.height / 2) == pytest.approx(fit.up_std_deg, rel=1e-9)
    marker = [line for line in ax.get_lines() if line.get_label().startswith("truth")][0]
    assert np.hypot(marker.get_xdata()[0], marker.get_ydata()[0]) == pytest.approx(
        np.degrees(1e-5), rel=1e-6
    )
    assert _legends_outside(fig) == 1
