"""Tests of the inertia column of gravdir.sweep.fit_sweep: sweeps that reverse and change speed.

The synthetic truth is built here, independently of the fit: the joint's effective inertia from
the arm's link poses, centres of mass and point masses by cross products, motion profiles in
closed form (position, velocity and acceleration of cosine-blend accelerations and of
quasi-periodic motions), the holding torque from `gravdir.synthetic`, and the inertial torque
added explicitly before the realistic sensor model of `gravdir.synthetic.realistic_sensors`.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from gravdir.errors import ConvergenceWarning, InsufficientDataError
from gravdir.sweep import amplitude_phase_bound, fit_sweep, joint_acceleration, wrap_angle
from gravdir.synthetic import iiwa_arm, realistic_sensors, up_from_base_tilt, ur5_arm

# (arm factory, configuration of the locked joints, swept joint)
SWEPT = (
    (ur5_arm, np.array([0.0, -np.pi / 2, 0.3, -np.pi / 2, 0.0, 0.0]), 1),
    (ur5_arm, np.array([0.0, -np.pi / 2, 0.3, -np.pi / 2, 0.0, 0.0]), 2),
    (iiwa_arm, np.array([0.0, 0.5, 0.0, -0.8, 0.0, 0.0, 0.0]), 1),
    (iiwa_arm, np.array([0.0, 0.5, 0.0, -0.8, 0.0, 0.0, 0.0]), 3),
)
RATE = 100.0  # Hz, as the controller logs the issue is about
JITTER = 0.2  # timestamps off by up to ±20% of the sample period


def effective_inertia(arm, configuration: np.ndarray, joint: int) -> float:
    """Sum over the links distal to `joint` of m_k |z_j x (c_k - p_j)|^2 (point masses)."""
    poses = arm.link_poses(configuration)
    z, p = poses[joint, :3, 2], poses[joint, :3, 3]  # joint i turns about z of frame i - 1
    lever = np.cross(z, arm.com_positions(configuration)[joint:] - p)
    return float(np.sum(arm.masses[joint:] * np.sum(lever**2, axis=1)))


def blend_motion(segments, q_start: float, t: np.ndarray):
    """Position, velocity and acceleration of consecutive velocity changes (duration, v0, v1).

    Each change has the cosine-blend acceleration (v1 - v0)/D (1 - cos 2 pi u), u = tau / D: zero
    at both ends with zero slope, peak 2 (v1 - v0) / D. Integrated in closed form.
    """
    q, v, a = (np.full(t.shape, np.nan) for _ in range(3))
    t0, q0 = 0.0, q_start
    for d, v0, v1 in segments:
        s = (t >= t0) & (t <= t0 + d)
        tau = t[s] - t0
        u, dv = tau / d, v1 - v0
        a[s] = dv / d * (1 - np.cos(2 * np.pi * u))
        v[s] = v0 + dv * (u - np.sin(2 * np.pi * u) / (2 * np.pi))
        q[s] = q0 + v0 * tau + dv * d * (u**2 / 2 + (np.cos(2 * np.pi * u) - 1) / (4 * np.pi**2))
        q0 += v0 * d + dv * d / 2
        t0 += d
    assert not np.isnan(q).any()
    return q, v, a


def jittered_times(rng, duration: float) -> np.ndarray:
    n = int(duration * RATE)
    t = (np.arange(n) + rng.uniform(-JITTER, JITTER, n)) / RATE
    return np.clip(t, 0.0, duration)


def reversal_profile(rng, q_start: float, arc: float, cycles: int = 2):
    """Forward and back `cycles` times from rest to rest: cruise at a drawn speed V, every start,
    stop and reversal a cosine-blend acceleration with a drawn peak of 1-5 rad/s^2."""
    speed, peak = rng.uniform(0.2, 0.6), rng.uniform(1.0, 5.0)
    ramp, reverse = 2 * speed / peak, 4 * speed / peak  # peak = 2 dv / D
    cruise = (arc - speed * ramp) / speed
    segments, sign = [(ramp, 0.0, speed), (cruise, speed, speed)], 1.0
    for _ in range(2 * cycles - 1):
        segments += [(reverse, sign * speed, -sign * speed), (cruise, -sign * speed, -sign * speed)]
        sign = -sign
    segments.append((ramp, sign * speed, 0.0))
    t = jittered_times(rng, sum(s[0] for s in segments))
    return (t, *blend_motion(segments, q_start, t))


def varying_speed_profile(rng, q_centre: float, periods: int = 6):
    """A quasi-periodic motion, q = c + R (sin wt + b sin(k wt + g)) with k not an integer: the
    speed varies continuously and the acceleration (peak 1.5-4 rad/s^2) differs from pass to
    pass at the same angle."""
    r, b, g, k = (
        rng.uniform(0.6, 1.0),
        rng.uniform(0.2, 0.35),
        rng.uniform(-3, 3),
        rng.uniform(1.6, 2.6),
    )
    w = np.sqrt(rng.uniform(1.5, 4.0) / (r * (1 + b * k**2)))
    t = jittered_times(rng, periods * 2 * np.pi / w)
    ph = w * t
    q = q_centre + r * (np.sin(ph) + b * np.sin(k * ph + g))
    v = r * w * (np.cos(ph) + b * k * np.cos(k * ph + g))
    a = -r * w**2 * (np.sin(ph) + b * k**2 * np.sin(k * ph + g))
    return t, q, v, a


@functools.cache
def peak_gravity_torque(make) -> np.ndarray:
    """The scale of the sensor errors (upright base: a tilt of at most 10° changes it little)."""
    return make().peak_gravity_torque()


def draw(rng, profile: str) -> dict:
    """One arm on a tilted base, its realistic sensors, one sweep and the truth of its fit."""
    which = int(rng.integers(len(SWEPT)))
    make, configuration, j = SWEPT[which]
    arm = make(up=up_from_base_tilt(np.radians(rng.uniform(0, 10)), rng.uniform(-np.pi, np.pi)))
    sensor = realistic_sensors(rng, peak_gravity_torque(make))[j]
    if profile == "reversals":
        t, q, v, a = reversal_profile(rng, configuration[j] - 0.8, 1.6)
    else:
        t, q, v, a = varying_speed_profile(rng, configuration[j])
    positions = np.tile(configuration, (q.size, 1))
    positions[:, j] = q
    holding = arm.gravity_torque(positions)[:, j]
    inertia = effective_inertia(arm, configuration, j)
    # The rigid-body torque of a single joint moving with the others locked, M_jj q'' + g_j(q),
    # through the sensor: gain, offset, friction (load-dependent on the whole torque), gear
    # ripple and noise.
    torque = sensor.measure(q, v, holding + inertia * a, rng)
    # Truth: the holding torque is a sin q + b cos q exactly (a rigid body turning about the axis).
    at_0, at_90 = configuration.copy(), configuration.copy()
    at_0[j], at_90[j] = 0.0, np.pi / 2
    b, a_sin = arm.gravity_torque(np.stack([at_0, at_90]))[:, j]
    return dict(
        t=t, q=q, v=v, a=a, torque=torque, sensor=sensor,
        amplitude=sensor.gain * np.hypot(a_sin, b), phase=np.arctan2(b, a_sin),
        inertia=sensor.gain * inertia, which=which,
    )  # fmt: skip


def fit(d: dict, acceleration=None):
    with warnings.catch_warnings():
        # Without the inertia column the model is wrong, and the load column's Gauss-Newton
        # iteration may stall on it: that fit is only compared by its residual.
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit_sweep(
            d["q"],
            velocity=d["v"],
            torque=d["torque"],
            acceleration=acceleration,
            harmonics=[d["sensor"].ripple_order],
            load_friction="abs",
        )


def normalised_errors(f, d: dict) -> list[float]:
    return [
        float((f.amplitude - d["amplitude"]) / f.amplitude_std),
        float(wrap_angle(f.phase - d["phase"]) / f.phase_std),
        float((f.inertia - d["inertia"]) / f.inertia_std),
    ]


@functools.cache
def reversal_monte_carlo(n_draws: int = 1000, seed: int = 2024) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out: dict[str, list] = {
        k: [] for k in ("z", "z_derived", "ratio", "ratio_derived", "ratio_none")
    }
    out["inertia_error_derived"] = []
    for _ in range(n_draws):
        d = draw(rng, "reversals")
        derived = joint_acceleration(d["t"], velocity=d["v"])  # from the logged (jittered) velocity
        for key, acc in (("", d["a"]), ("_derived", derived)):
            f = fit(d, acc)
            out["z" + key].append(normalised_errors(f, d))
            out["ratio" + key].append(float(f.residual_rms / d["sensor"].noise_std))
        out["inertia_error_derived"].append(float(f.inertia / d["inertia"] - 1))
        out["ratio_none"].append(float(fit(d).residual_rms / d["sensor"].noise_std))
    return {k: np.array(v) for k, v in out.items()}


def test_effective_inertia_of_one_joint_does_not_depend_on_its_own_angle():
    # The derivation in docs/sweep.md: M_jj = sum m_k |z_j x (c_k - p_j)|^2 is the same at every
    # q_j (the distal body turns rigidly about the axis), and equals sum m_k |dc_k/dq_j|^2, the
    # kinetic energy 2T / qdot^2 of the single-joint motion (here by central differences).
    rng = np.random.default_rng(5)
    for make, configuration, j in SWEPT:
        arm = make()
        values, energies = [], []
        for qj in rng.uniform(-np.pi, np.pi, 5):
            c = configuration.copy()
            c[j] = qj
            values.append(effective_inertia(arm, c, j))
            h = 1e-6
            up, down = c.copy(), c.copy()
            up[j] += h
            down[j] -= h
            dc = (arm.com_positions(up) - arm.com_positions(down)) / (2 * h)
            energies.append(float(np.sum(arm.masses * np.sum(dc**2, axis=1))))
        assert np.ptp(values) <= 1e-12 * values[0]
        np.testing.assert_allclose(energies, values, rtol=1e-7)
        assert values[0] > 0.05  # a real lever: the test below sees the inertial torque


@pytest.mark.slow
def test_reversal_residual_is_the_sensor_noise_with_the_true_acceleration():
    mc = reversal_monte_carlo()
    # Within 10% of the noise, every draw (the residual of a right model is sigma sqrt(1 - p/n)).
    assert np.all(np.abs(mc["ratio"] - 1) <= 0.10), (mc["ratio"].min(), mc["ratio"].max())
    # Left out, the inertial torque of the reversals is several times the noise.
    assert np.median(mc["ratio_none"]) >= 3.0
    assert np.all(mc["ratio_none"] >= 1.5)


@pytest.mark.slow
def test_reversal_amplitude_phase_and_inertia_within_their_reported_uncertainty():
    z = reversal_monte_carlo()["z"]  # columns: amplitude, phase, inertia
    second_moment = np.mean(z**2, axis=0)
    assert np.all(np.abs(second_moment - 1) <= 0.15), second_moment
    assert np.abs(z).max() <= 4.5


@pytest.mark.slow
def test_reversals_fit_as_well_with_the_acceleration_derived_from_jittered_velocity():
    mc = reversal_monte_carlo()
    assert np.all(np.abs(mc["ratio_derived"] - 1) <= 0.10), mc["ratio_derived"].max()
    z = mc["z_derived"]
    second_moment = np.mean(z[:, :2] ** 2, axis=0)
    assert np.all(np.abs(second_moment - 1) <= 0.15), second_moment
    assert np.abs(z[:, :2]).max() <= 4.5
    # The inertia's reported uncertainty is that of the torque noise; the derived acceleration
    # adds the derivative's smoothing error (errors in a regressor), which the fit cannot see.
    # On these sweeps it biases the inertia by about half its standard deviation, 0.2% of the
    # inertia (docs/sweep.md): the normalised error's second moment stays below 2.
    assert np.mean(z[:, 2] ** 2) <= 2.0
    assert np.abs(z[:, 2]).max() <= 6.0
    assert abs(np.mean(mc["inertia_error_derived"])) <= 0.005


@pytest.mark.slow
def test_varying_speed_recovers_friction_and_the_inertia_column_cuts_the_residual():
    rng = np.random.default_rng(77)
    z = []
    for _ in range(100):
        d = draw(rng, "varying")
        s = d["sensor"]
        f = fit(d, joint_acceleration(d["t"], velocity=d["v"]))
        without = fit(d)
        assert abs(f.residual_rms / s.noise_std - 1) <= 0.10
        assert f.residual_rms <= 0.75 * without.residual_rms
        for speed in (0.1, 0.5):
            true = s.gain * (s.coulomb + s.viscous * speed)
            assert abs((f.coulomb + f.viscous * speed) / true - 1) <= 0.05
        z.append(normalised_errors(f, d)[:2])
    assert np.abs(z).max() <= 4.5


# --- the inertia column on model data ----------------------------------------------------------


def model_sweep(n: int = 600, seed: int = 3):
    """Two forward/backward passes whose speed changes along the way, and their acceleration."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 8.0, n)
    q = 0.2 + 1.1 * np.sin(0.8 * t) + 0.25 * np.sin(2.1 * t + 0.4)
    v = 1.1 * 0.8 * np.cos(0.8 * t) + 0.25 * 2.1 * np.cos(2.1 * t + 0.4)
    a = -1.1 * 0.64 * np.sin(0.8 * t) - 0.25 * 2.1**2 * np.sin(2.1 * t + 0.4)
    return q, v, a, rng


def model_torque(q, v, a, amp=6.0, phase=0.7, inertia=1.3, mu=0.04, ripple=(200.0, 0.05, 0.3)):
    gravity = amp * np.sin(q + phase)
    order, r_amp, r_phase = ripple
    return (
        0.2
        + gravity
        + 0.5 * np.sign(v)
        + 0.3 * v
        + inertia * a
        + mu * np.abs(gravity + inertia * a) * np.sign(v)
        + r_amp * np.sin(order * q + r_phase)
    )


def test_inertia_column_is_exact_on_noise_free_sweeps():
    q, v, a, _ = model_sweep()
    torque = model_torque(q, v, a)
    f = fit_sweep(
        q, velocity=v, torque=torque, acceleration=a, load_friction="abs", harmonics=[200.0]
    )
    assert f.converged
    np.testing.assert_allclose(
        [f.amplitude, f.phase, f.offset, f.coulomb, f.viscous, f.inertia, f.load_coefficient],
        [6.0, 0.7, 0.2, 0.5, 0.3, 1.3, 0.04],
        rtol=1e-9,
    )
    assert f.residual_rms < 1e-9
    assert "inertia" in f.column_names and f.inertia_std < 1e-9
    assert "inertia=1.3 ±" in repr(f)
    # The other load options and no load friction at all.
    plain = model_torque(q, v, a, mu=0.0)
    for load in ("none", "signed"):
        g = fit_sweep(
            q, velocity=v, torque=plain, acceleration=a, load_friction=load, harmonics=[200.0]
        )
        np.testing.assert_allclose([g.amplitude, g.inertia], [6.0, 1.3], rtol=1e-9)
    # The controller's opposite sign: the torque is negated first, the inertia comes out the same.
    g = fit_sweep(q, velocity=v, acceleration=a, torque=-torque, load_friction="abs",
                  harmonics=[200.0], torque_sign=-1)  # fmt: skip
    np.testing.assert_allclose([g.amplitude, g.inertia], [6.0, 1.3], rtol=1e-9)


def test_without_acceleration_the_inertial_torque_biases_the_fit_and_inertia_reads_zero():
    q, v, a, _ = model_sweep()
    f = fit_sweep(q, velocity=v, torque=model_torque(q, v, a, mu=0.0))
    assert f.residual_rms > 0.1  # the inertial torque left over
    assert f.inertia == 0.0 and f.inertia_std == 0.0 and "inertia" not in f.column_names
    batch = fit_sweep(
        np.stack([q, q]), velocity=v, torque=np.stack([q, q]) * 0 + model_torque(q, v, a)
    )
    assert batch.inertia.shape == (2,) and np.all(batch.inertia_std == 0.0)


def test_batched_fit_with_acceleration_equals_a_loop_and_broadcasts():
    q, v, a, rng = model_sweep()
    amps = np.array([2.0, 5.0, 9.0])
    inertias = np.array([0.4, 1.3, 2.2])
    torque = np.stack(
        [model_torque(q, v, a, amp=m, inertia=i) for m, i in zip(amps, inertias, strict=True)]
    )
    torque = torque + rng.normal(0.0, 0.01, torque.shape)
    kw = dict(load_friction="abs", harmonics=[200.0])
    batch = fit_sweep(
        q, velocity=v, torque=torque, acceleration=a, **kw
    )  # q, v, a broadcast over the batch
    for i in range(3):
        single = fit_sweep(q, velocity=v, torque=torque[i], acceleration=a, **kw)
        np.testing.assert_allclose(batch[i].coefficients, single.coefficients, rtol=1e-9)
        np.testing.assert_allclose(batch[i].covariance, single.covariance, rtol=1e-7, atol=1e-15)
        np.testing.assert_allclose(batch[i].residual_rms, single.residual_rms, rtol=1e-9)
    assert np.all(np.abs(batch.inertia - inertias) <= 5 * batch.inertia_std)


def test_default_min_speed_is_the_same_with_and_without_acceleration():
    q, v, a, _ = model_sweep()
    torque = model_torque(q, v, a, mu=0.0, ripple=(200.0, 0.0, 0.0))
    with_a = fit_sweep(q, velocity=v, torque=torque, acceleration=a)
    without = fit_sweep(q, velocity=v, torque=torque)
    assert with_a.n_used == without.n_used == np.count_nonzero(np.abs(v) >= 0.1 * np.abs(v).max())
    # Lowering it keeps the samples near the reversals, whose inertial torque is now modelled.
    low = fit_sweep(q, velocity=v, torque=torque, acceleration=a, min_speed=1e-3)
    assert low.n_used > with_a.n_used and low.residual_rms < 1e-9


def test_extreme_accelerations_scale_only_the_inertia():
    q, v, a, _ = model_sweep()
    torque = model_torque(q, v, a, mu=0.0)
    ref = fit_sweep(q, velocity=v, torque=torque, acceleration=a)
    for factor in (1e-100, 1e100):
        f = fit_sweep(q, velocity=v, torque=torque, acceleration=a * factor)
        np.testing.assert_allclose(f.inertia * factor, ref.inertia, rtol=1e-9)
        np.testing.assert_allclose(f.amplitude, ref.amplitude, rtol=1e-9)
        assert np.isfinite(f.covariance).all() and f.inertia_std > 0


@pytest.mark.parametrize(
    ("acceleration", "error", "match"),
    [
        (np.zeros(600), InsufficientDataError, "`acceleration` to be non-zero"),
        ("1.0", ValueError, "`acceleration`"),
        (np.ones(599), ValueError, "`acceleration` to share"),
        (np.ones((600, 1)), ValueError, "last \\(sample\\) axis"),
        (np.full(600, np.inf), ValueError, "`acceleration` to be finite"),
        (np.r_[np.nan, np.ones(599)], ValueError, 'nan_policy="omit"'),
    ],
)
def test_bad_acceleration_is_refused_naming_it(acceleration, error, match):
    q, v, a, _ = model_sweep()
    with pytest.raises(error, match=match):
        fit_sweep(q, velocity=v, torque=model_torque(q, v, a), acceleration=acceleration)


def test_constant_acceleration_is_the_offset_and_is_refused():
    q, v, a, _ = model_sweep()
    with pytest.raises(InsufficientDataError, match="condition number"):
        fit_sweep(q, velocity=v, torque=model_torque(q, v, a), acceleration=np.full(600, 2.0))


def test_bound_with_acceleration_is_the_fits_covariance_and_never_below_the_bound_without():
    q, v, a, rng = model_sweep()
    torque = model_torque(q, v, a, mu=0.0, ripple=(200.0, 0.0, 0.0)) + rng.normal(0, 0.05, q.size)
    f = fit_sweep(q, velocity=v, torque=torque, acceleration=a)
    sigma2 = f.residual_rms**2 * f.n_used / (f.n_used - len(f.column_names))
    bound = amplitude_phase_bound(
        q, velocity=v, amplitude=f.amplitude, phase=f.phase, noise_std=1.0, acceleration=a
    )
    np.testing.assert_allclose(bound * sigma2, f.amplitude_phase_covariance, rtol=1e-9)
    without = amplitude_phase_bound(
        q, velocity=v, amplitude=f.amplitude, phase=f.phase, noise_std=1.0
    )
    assert np.all(np.diag(bound) >= np.diag(without) * (1 - 1e-12))
    with pytest.raises(ValueError, match="`acceleration`"):
        amplitude_phase_bound(
            q, velocity=v, amplitude=6.0, phase=0.7, noise_std=1.0, acceleration=a[:-1]
        )
