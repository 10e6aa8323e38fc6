"""Benchmark: the general estimator against the closed-form solvers on the same recorded sweeps.

For each arm (UR5-like, iiwa-like, random 6-joint chains) and many random base tilts (0-60°)
with realistic sensor errors (``realistic_sensors``: gains 0.85-1.15, offsets, Coulomb, viscous
and load-dependent friction, gear ripple, white noise), one set of sweeps is recorded -- J1 over
180°, then J2 over 120° at J1 = θ1, θ1 + 90°, θ1 + 180° (θ1 the J1 zero with the distal mass
highest, θ1 + 180° the other J1 zero) -- and fitted once (``load_friction="abs"``, the J2 gear
ripple as a nuisance harmonic). The same fits are given to

* ``estimate_up`` (the three J2 sweeps);
* ``solve_point_mass`` (J1 sweep, J2 sweep at θ1);
* ``solve_l2_offset`` (J1 sweep, J2 sweeps at θ1 and θ1 + 180°);
* ``solve_two_branch`` (J1 sweep, J2 sweeps at θ1 and θ1 + 180°);
* ``solve_l3_offset`` (as ``solve_l2_offset``, plus the ratio L3/R12 from the kinematics).

The closed forms are fed their best case: γ, γ0, the arm azimuth and L3/R12 come from the true
kinematics and the true masses (γ of the distal centre of mass for the point-mass solver, of
the line from the J2 axis to the flange for the L2 and L3 solvers). They model the arm as the
canonical two-joint arm: J1 along base +z, J2 perpendicular to J1 and meeting it, the distal
mass on the arm's side of J1 (0 < γ < 180°). The random chains are therefore drawn in that
class (J2 twist ±90°, no DH length between J1 and J2, a posture with γ in 30-150°); their other
joints, masses and centres of mass are random.

It prints, per arm, the median and 95th-percentile direction error per method, how often a
solver raised, the time per estimate (the solver call only; the shared sweep fits are not
counted) and the RMS error of ``estimate_up`` over the RMS of ``crlb_up`` for the same sweeps.

Run: ``python benchmarks/general_estimator.py`` (under a minute on two shared cores).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from gravdir import (
    GravdirWarning,
    angle_between,
    chain_from_dh,
    crlb_up,
    estimate_up,
    fit_sweep,
    joint_sweep_from_chain,
    planned_sweep_from_chain,
    solve_l2_offset,
    solve_l3_offset,
    solve_point_mass,
    solve_two_branch,
)
from gravdir.synthetic import (
    SyntheticArm,
    iiwa_arm,
    random_arm,
    realistic_sensors,
    up_from_base_tilt,
    ur5_arm,
)

# The closed forms warn on every clipped or marginal root; here they are counted, not read.
warnings.simplefilter("ignore", GravdirWarning)

ARC_J1 = np.pi
ARC_J2 = np.radians(120.0)
SPEED = 0.5
RATE = 100.0
MAX_TILT = np.radians(60.0)
# Postures of the random chains: the distal mass and the flange at least 30° from the J1 axis,
# so that the closed forms' sin(γ) is not small (US 11,446,825 B2, FIG. 7, recommends the links
# after J2 extended perpendicular to the J1 axis).
GAMMA_MARGIN = np.radians(30.0)
METHODS = ("estimate_up", "point mass", "L2 offset", "two-branch", "L3 (kin. ratio)")


def canonical_geometry(arm, q):
    """γ, γ0, arm azimuth and L3/R12 of the mass distal to J2 at posture `q` (J1 at q[0])."""
    poses = arm.link_poses(q)
    a2 = poses[1, :3, 2]  # poses[0] is the base frame; frame 1 turns about the J2 axis
    p2 = poses[1, :3, 3]
    z = np.array([0.0, 0.0, 1.0])
    h = np.cross(a2, z)
    h /= np.linalg.norm(h)
    s = np.sum(arm.masses[1:, None] * (arm.com_positions(q)[1:] - p2), axis=0)
    tip = poses[-1, :3, 3] - p2
    gamma_mass = float(np.arctan2(s @ h, s @ z))
    gamma_link = float(np.arctan2(tip @ h, tip @ z))
    return {
        "gamma_mass": gamma_mass,
        "gamma_link": gamma_link,
        "gamma0_mass": gamma_mass - float(q[1]),
        "gamma0_link": gamma_link - float(q[1]),
        # Azimuth of h at J1 = 0 (q[0] is the J1 position of `q`).
        "arm_azimuth": float(np.arctan2(h[1], h[0])) - float(q[0]),
        "l3_ratio": float(s @ a2) / float(np.hypot(s @ h, s @ z)),
    }


def closed_forms(fit1, theta1, fit_u, fit_s, geo):
    """Each closed-form solver on the same fits: {method: (up or None, seconds)}."""
    zs = theta1 + np.pi
    az = geo["arm_azimuth"]
    calls = {
        "point mass": lambda: solve_point_mass(
            fit1, fit_u, theta1, geo["gamma_mass"], geo["gamma0_mass"], arm_azimuth=az
        ),
        "L2 offset": lambda: solve_l2_offset(
            fit1,
            fit_u,
            theta1,
            geo["gamma_link"],
            geo["gamma0_link"],
            fit_j2_other=fit_s,
            q1_at_j2_other=zs,
            arm_azimuth=az,
        ),
        "two-branch": lambda: solve_two_branch(fit1, fit_u, theta1, fit_s, zs, arm_azimuth=az),
        "L3 (kin. ratio)": lambda: solve_l3_offset(
            fit1,
            fit_u,
            theta1,
            geo["gamma_link"],
            geo["gamma0_link"],
            l3_ratio=geo["l3_ratio"],
            fit_j2_other=fit_s,
            q1_at_j2_other=zs,
            arm_azimuth=az,
        ),
    }
    out = {}
    for name, call in calls.items():
        t0 = time.perf_counter()
        try:
            up = call().up
        except ValueError:  # includes DegenerateGeometryError
            up = None
        out[name] = (up, time.perf_counter() - t0)
    return out


def one_draw(arm, config, rng):
    chain = chain_from_dh(*arm.dh.T)
    geo = canonical_geometry(arm, config)
    sensors = realistic_sensors(rng, arm.peak_gravity_torque())
    rec1 = arm.sweep(0, config, -ARC_J1 / 2, ARC_J1 / 2, SPEED, RATE, sensor=sensors, rng=rng)
    fit1 = fit_sweep(rec1.q, velocity=rec1.velocity, torque=rec1.torque, load_friction="abs")
    theta1 = float(fit1.zeros().unstable)
    sweeps, fits, configs = [], [], []
    for k in range(3):
        c = np.array(config, dtype=float)
        c[0] = theta1 + k * np.pi / 2
        rec = arm.sweep(
            1, c, c[1] - ARC_J2 / 2, c[1] + ARC_J2 / 2, SPEED, RATE, sensor=sensors, rng=rng
        )
        # The gear ratio is known, so the ripple order is: fit it as a nuisance harmonic.
        fit = fit_sweep(
            rec.q,
            velocity=rec.velocity,
            torque=rec.torque,
            load_friction="abs",
            harmonics=(sensors[1].ripple_order,),
        )
        c_ref = c.copy()
        c_ref[1] = rec.q[0]
        sweeps.append(joint_sweep_from_chain(chain, c_ref, 1, fit))
        fits.append(fit)
        configs.append(c)
    t0 = time.perf_counter()
    est = estimate_up(sweeps, up_hint=(0.0, 0.0, 1.0))
    results = {"estimate_up": (est.up, time.perf_counter() - t0)}
    results.update(closed_forms(fit1, theta1, fits[0], fits[2], geo))
    plans = [
        planned_sweep_from_chain(
            chain,
            c,
            1,
            ARC_J2,
            masses=arm.masses,
            coms=arm.coms,
            noise_std=sensors[1].noise_std,
            speed=SPEED,
            sample_rate=RATE,
            gain=sensors[1].gain,
        )
        for c in configs
    ]
    bound = np.radians(crlb_up(plans, up_hint=arm.up, load_friction="abs").up_std_deg)
    errors = {
        m: (np.nan if up is None else float(angle_between(up, arm.up)), dt)
        for m, (up, dt) in results.items()
    }
    return errors, bound


def run(name, make_arm, posture, draws, rng):
    errors = {m: [] for m in METHODS}
    times = {m: [] for m in METHODS}
    bounds = []
    for _ in range(draws):
        up = up_from_base_tilt(
            np.arccos(rng.uniform(np.cos(MAX_TILT), 1.0)), rng.uniform(-np.pi, np.pi)
        )
        arm = make_arm(up, rng)
        draw, bound = one_draw(arm, posture(arm, rng), rng)
        for m, (err, dt) in draw.items():
            errors[m].append(err)
            times[m].append(dt)
        bounds.append(bound)
    print(f"\n{name}: {draws} draws, tilt 0-{np.degrees(MAX_TILT):.0f}°, realistic sensor errors")
    print(f"  {'method':<17}{'median °':>10}{'p95 °':>10}{'raised':>8}{'time/estimate':>15}")
    for m in METHODS:
        e = np.degrees(np.array(errors[m]))
        ok = e[np.isfinite(e)]
        med, p95 = (np.median(ok), np.percentile(ok, 95)) if ok.size else (np.nan, np.nan)
        t = np.median(times[m])
        t_text = f"{1e3 * t:.1f} ms" if t >= 1e-3 else f"{1e6 * t:.0f} µs"
        print(f"  {m:<17}{med:10.4f}{p95:10.4f}{e.size - ok.size:8d}{t_text:>15}")
    e_gen = np.array(errors["estimate_up"])
    rms_bound = np.sqrt(np.mean(np.square(bounds)))
    print(
        f"  estimate_up: RMS error {np.degrees(np.sqrt(np.mean(e_gen**2))):.4f}°, "
        f"RMS crlb_up {np.degrees(rms_bound):.4f}°, ratio "
        f"{np.sqrt(np.mean(e_gen**2)) / rms_bound:.3f}"
    )


def random_six(up, rng):
    """A random 6-joint chain in the closed forms' class: J2 perpendicular to J1, meeting it."""
    base = random_arm(rng, 6)
    dh = np.array(base.dh)
    dh[0, 2] = 0.0  # a1 = 0: the J2 axis meets the J1 axis
    dh[0, 3] = rng.choice([-np.pi / 2, np.pi / 2])  # alpha1: J2 perpendicular to J1
    return SyntheticArm(dh=dh, masses=base.masses, coms=base.coms, up=up, name="random")


def random_posture(arm, rng):
    """A random posture (J1 = 0) with the distal mass and the flange on the arm's side of J1."""
    lo, hi = GAMMA_MARGIN, np.pi - GAMMA_MARGIN
    while True:
        q = rng.uniform(-np.pi, np.pi, arm.n_joints)
        q[0] = 0.0
        geo = canonical_geometry(arm, q)
        if lo < geo["gamma_mass"] < hi and lo < geo["gamma_link"] < hi:
            return q


def main():
    rng = np.random.default_rng(2024)
    # The posture of US 11,446,825 B2, FIG. 7: the links after J2 extended, perpendicular to the
    # J1 axis.
    ur5_config = np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, 0.0])
    iiwa_config = np.array([0.0, np.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])
    run("UR5-like", lambda up, _: ur5_arm(up), lambda *_: ur5_config, 400, rng)
    run("iiwa-like", lambda up, _: iiwa_arm(up), lambda *_: iiwa_config, 400, rng)
    run("random 6-joint chains (J2 ⟂ J1, meeting it)", random_six, random_posture, 300, rng)


if __name__ == "__main__":
    main()
