"""What per-joint torque gain errors cost the closed-form solvers, on UR5-like and iiwa-like arms.

For each arm and trial: a random `up` (tilt uniform in [0, 30] deg, any azimuth), a J1 sweep with
the arm stretched out, J2 sweeps at both J1 zeros, then the point-mass, L2 and two-branch solvers.
The arms: UR5-like and iiwa-like (distal mass 13 and 4 degrees out of the arm plane in these
postures), and a two-joint arm whose mass lies in the arm plane, the case the closed forms model.
Three sensor conditions: ideal (the solvers' model error on a real mass distribution only), gains
uniform in 0.85-1.15 per joint (nothing else), and the realistic errors of
``realistic_sensors``. Prints the median and 95th percentile of the tilt error (angle between the
estimated and the true `up`), degrees.

A last section measures how far the out-of-plane offset (L3) formulas of US 11,446,825 B2
(FIG. 11, Eqs. (20)-(24); delta neglected) are from the exact L3 solver on the canonical model with
a UR5-like shoulder offset.

Run: ``python benchmarks/closed_form_gain_error.py``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from gravdir import (
    angle_between,
    fit_sweep,
    solve_l2_offset,
    solve_l3_offset,
    solve_point_mass,
    solve_two_branch,
    up_from_canonical,
)
from gravdir.sweep import wrap_angle
from gravdir.synthetic import (
    SyntheticArm,
    TorqueSensor,
    canonical_arm,
    iiwa_arm,
    realistic_sensors,
    up_from_base_tilt,
    ur5_arm,
)

TRIALS = 100
MAX_TILT = np.radians(30.0)
# Stretched-out postures: the distal mass lies near the plane of J1's axis and the link.


def in_plane_arm(up: tuple[float, float, float] | np.ndarray = (0.0, 0.0, 1.0)) -> SyntheticArm:
    """A two-joint arm whose distal mass lies in the arm plane (L3 = 0), offset across the link."""
    return canonical_arm(L1=0.6, L2=0.04, L3=0.0, gamma0=0.0, mass=8.0, up=up)


POSTURES = {
    "UR5-like": (ur5_arm, np.array([0.0, 0.0, 0.0, -np.pi / 2, 0.0, 0.0])),
    "iiwa-like": (iiwa_arm, np.array([0.0, np.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])),
    "in-plane": (in_plane_arm, np.array([0.0, np.pi / 2])),
}


def canonical_geometry(arm: SyntheticArm, q: np.ndarray) -> dict[str, float]:
    """gamma, gamma0, arm azimuth, beta and L3/R12 of the J2-distal mass, from the kinematics."""
    poses = arm.link_poses(q)
    a2 = poses[1, :3, 2]  # poses[0] is the base frame
    p2 = poses[1, :3, 3]
    z = np.array([0.0, 0.0, 1.0])
    h = np.cross(a2, z)
    h /= np.linalg.norm(h)
    coms = arm.com_positions(q)
    s = np.sum(arm.masses[1:, None] * (coms[1:] - p2), axis=0)
    gamma_mass = float(np.arctan2(s @ h, s @ z))
    # The link line: from the J2 axis to the flange.
    tip = poses[-1, :3, 3] - p2
    gamma_link = float(np.arctan2(tip @ h, tip @ z))
    r12 = float(np.hypot(s @ h, s @ z))
    return {
        "gamma_mass": gamma_mass,
        "gamma_link": gamma_link,
        "gamma0_mass": gamma_mass - float(q[1]),
        "gamma0_link": gamma_link - float(q[1]),
        "arm_azimuth": float(np.arctan2(h[1], h[0])),
        "l3_ratio": float(s @ a2) / r12,
    }


def trial(
    arm: SyntheticArm,
    q: np.ndarray,
    geo: dict[str, float],
    sensors: tuple[TorqueSensor, ...] | None,
    rng: np.random.Generator,
) -> tuple[float, float, float, float]:
    def fit(joint: int, conf: np.ndarray, centre: float) -> object:
        rec = arm.sweep(joint, conf, centre - 1.4, centre + 1.4, 0.5, 50.0, sensor=sensors, rng=rng)
        return fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs")

    f1 = fit(0, q, 0.0)
    zu, zs = float(f1.zeros().unstable), float(f1.zeros().stable)  # type: ignore[attr-defined]
    conf_u, conf_s = q.copy(), q.copy()
    conf_u[0], conf_s[0] = zu, zs
    fu, fs = fit(1, conf_u, q[1]), fit(1, conf_s, q[1])
    az = geo["arm_azimuth"]
    pm = solve_point_mass(
        f1,
        fu,
        zu,
        geo["gamma_mass"],
        geo["gamma0_mass"],
        arm_azimuth=az,  # type: ignore[arg-type]
    )
    l2 = solve_l2_offset(
        f1,  # type: ignore[arg-type]
        fu,  # type: ignore[arg-type]
        zu,
        geo["gamma_link"],
        geo["gamma0_link"],
        fit_j2_other=fs,  # type: ignore[arg-type]
        q1_at_j2_other=zs,
        arm_azimuth=az,
    )
    tb = solve_two_branch(f1, fu, zu, fs, zs, arm_azimuth=az)  # type: ignore[arg-type]
    l3 = solve_l3_offset(
        f1,  # type: ignore[arg-type]
        fu,  # type: ignore[arg-type]
        zu,
        geo["gamma_link"],
        geo["gamma0_link"],
        l3_ratio=geo["l3_ratio"],
        fit_j2_other=fs,  # type: ignore[arg-type]
        q1_at_j2_other=zs,
        arm_azimuth=az,
    )
    return tuple(  # type: ignore[return-value]
        float(np.degrees(angle_between(r.up, arm.up))) for r in (pm, l2, tb, l3)
    )


def run() -> None:
    print(f"Tilt error, degrees, {TRIALS} trials per row, tilt uniform in [0, 30] deg")
    print(f"{'arm':10s} {'sensors':10s} {'solver':12s} {'median':>9s} {'95th pct':>9s}")
    for name, (make, q) in POSTURES.items():
        geo = canonical_geometry(make(), q)
        if name == "in-plane":
            # Its link frame 2 sits on the J2 axis, so the link line is known from the model
            # rather than from a flange position: gamma = q2 + gamma0 with gamma0 = 0.
            geo.update(gamma_link=float(q[1]), gamma0_link=0.0)
        rng = np.random.default_rng(2024)
        errors: dict[str, list[tuple[float, float, float, float]]] = {
            "ideal": [],
            "gain only": [],
            "realistic": [],
        }
        for _ in range(TRIALS):
            tilt = np.arccos(rng.uniform(np.cos(MAX_TILT), 1.0))
            arm = make(up_from_base_tilt(tilt, rng.uniform(-np.pi, np.pi)))
            gains = tuple(TorqueSensor(gain=float(k)) for k in rng.uniform(0.85, 1.15, 7))
            errors["ideal"].append(trial(arm, q, geo, None, rng))
            errors["gain only"].append(trial(arm, q, geo, gains[: arm.n_joints], rng))
            sensors = realistic_sensors(rng, arm.peak_gravity_torque())
            errors["realistic"].append(trial(arm, q, geo, sensors, rng))
        for cond, rows in errors.items():
            e = np.array(rows)
            for k, solver in enumerate(("point mass", "L2", "two-branch", "L3 (ratio)")):
                med, p95 = np.median(e[:, k]), np.percentile(e[:, k], 95)
                print(f"{name:10s} {cond:10s} {solver:12s} {med:9.4f} {p95:9.4f}")
        print(
            f"{name}: gamma(mass) = {np.degrees(geo['gamma_mass']):.1f} deg, "
            f"L3/R12 = {geo['l3_ratio']:.3f}"
        )


def patent_l3(
    r: float, kappa: float, gamma: float, lam: float, theta1_zero: float
) -> tuple[float, float]:
    """US 11,446,825 B2's L3 relations (delta neglected): r = sin(theta2) sqrt(s^2 + lam^2)."""

    def f(t: float) -> float:
        s = np.sin(gamma + t - kappa)
        return float(np.sin(t) * np.sqrt(s * s + lam * lam) - r)

    grid = np.linspace(1e-6, np.pi - 1e-6, 2001)
    vals = np.array([f(t) for t in grid])
    roots = [
        brentq(f, grid[i], grid[i + 1])
        for i in range(grid.size - 1)
        if vals[i] * vals[i + 1] < 0 and np.sin(gamma + grid[i] - kappa) > 0
    ]
    if not roots:
        return theta1_zero, float("nan")
    best = min(roots, key=lambda t: abs(float(wrap_angle(t - kappa))))
    return theta1_zero, best


def patent_l3_difference() -> None:
    print()
    print("US 11,446,825 B2 L3 formulas (delta neglected) against the exact L3 solver, canonical")
    print("model, UR5-like shoulder: L1 = 0.6, L2 = 0.02, L3 = 0.11 m, gamma = 90 deg")
    L1, L2, L3 = 0.6, 0.02, 0.11
    lam = L3 / np.hypot(L1, L2)
    rng = np.random.default_rng(5)
    for max_tilt in (10.0, 30.0, 90.0):
        diffs, exact_err, no_root = [], [], 0
        for _ in range(60):
            tilt = np.arccos(rng.uniform(np.cos(np.radians(max_tilt)), 1.0))
            up = up_from_canonical(rng.uniform(-np.pi, np.pi), tilt)
            arm = canonical_arm(L1=L1, L2=L2, L3=L3, up=up)
            r1 = arm.sweep(0, [0.0, np.pi / 2], -2.0, 2.0, 1.0, 50.0)
            f1 = fit_sweep(r1.q, velocity=r1.velocity, torque=r1.torque)
            zu = float(f1.zeros().unstable)
            r2 = arm.sweep(1, [zu, 0.0], -1.5, 1.5, 1.0, 50.0)
            f2 = fit_sweep(r2.q, velocity=r2.velocity, torque=r2.torque)
            ex = solve_l3_offset(f1, f2, zu, np.pi / 2, 0.0, l3_ratio=lam)
            kappa = float(wrap_angle(np.pi - f2.phase))
            t1, t2 = patent_l3(float(f1.amplitude / f2.amplitude), kappa, np.pi / 2, lam, zu)
            if not np.isfinite(t2):
                no_root += 1
                continue
            diffs.append(np.degrees(angle_between(up_from_canonical(t1, t2), up)))
            exact_err.append(np.degrees(angle_between(ex.up, up)))
        print(
            f"tilt <= {max_tilt:4.0f} deg: patent formulas off by median {np.median(diffs):.3f} "
            f"deg, max {np.max(diffs):.3f} deg ({no_root} of 60 without a root); "
            f"exact solver max {np.max(exact_err):.1e} deg"
        )


if __name__ == "__main__":
    run()
    patent_l3_difference()
