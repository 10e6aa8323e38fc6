"""
From a robot's log to its controller setting
============================================

A UR arm on a base that is not quite level logs three sweeps of its shoulder joint through
RTDE. We read the log as a pandas table with the controller's own column names, build the
arm's kinematics from its URDF text, fit the sweeps, estimate the direction of gravity, turn
it into the frame the UR controller uses, and print the ``set_gravity`` line to type into the
installation, with a check of the setting installed now.

**The data are synthetic.** gravdir ships no third-party data: a robot's log belongs to
whoever recorded it, and a synthetic one comes with its truth, so every number below can be
checked. The log is made by ``gravdir.synthetic.controller_log`` from ``UR5E_LIKE_URDF``, a
UR5e-like description written for gravdir, with realistic sensor errors; the drive gains
(newton-metres per ampere) are synthetic too. Everything after the first cell uses only
what a user holds: the table, the URDF text, the drive gains and each gear's ripple order.
Needs pandas (``pip install -e '.[examples]'``).
"""

# %%
import numpy as np
import pandas as pd

import gravdir
from gravdir.controllers import BASE_FROM_ROOT
from gravdir.general import moment_from_mass_model
from gravdir.synthetic import (
    UR5E_LIKE_URDF,
    arm_from_urdf,
    controller_log,
    realistic_sensors,
    up_from_base_tilt,
)
from gravdir.urdf import inertials_from_urdf

# --- The recording (synthetic): the base is tilted by 2.5° towards azimuth 120° of base_link.
rng = np.random.default_rng(7)
up_true_root = up_from_base_tilt(np.radians(2.5), np.radians(120.0))
arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up_true_root)
sensors = realistic_sensors(rng, arm.peak_gravity_torque())
DRIVE_GAIN = np.array([13.0, 13.0, 9.5, 4.5, 4.5, 4.5])  # N·m/A, synthetic
hold = np.array([0.0, -1.5, 1.2, -1.0, 0.5, 0.0])
configurations = [hold + [j1, 0, 0, 0, 0, 0] for j1 in (0.0, np.pi / 2, np.pi)]
log = controller_log(
    arm,
    [1, 1, 1],  # joint 2 (index 1) three times, 90° apart round joint 1
    configurations,
    [[-2.4, -0.6]] * 3,  # 103° arcs
    [0.4, 0.5, 0.6],  # top speeds, rad/s
    sensors,
    rng,
    profile="varying",  # speed varying continuously, reversals at 3 rad/s²
    acceleration=3.0,
    time_jitter=2e-4,
    drive_gain=DRIVE_GAIN,
)
frame = pd.DataFrame(
    {"timestamp": 5231.872 + log.time}  # seconds since the controller started
    | {f"actual_q_{i}": log.q[:, i] for i in range(6)}
    | {f"actual_qd_{i}": log.velocity[:, i] for i in range(6)}
    | {f"actual_current_{i}": log.current[:, i] for i in range(6)}
)
RIPPLE_ORDER = [s.ripple_order for s in sensors]  # a user takes these from the gear's data
print(f"{len(frame)} rows at 100 Hz, {frame.shape[1]} columns:")
print(frame[["timestamp", "actual_q_0", "actual_q_1", "actual_qd_1", "actual_current_1"]].head(3))

# %%
# 1\. The chain, from the URDF text
# ---------------------------------
# The description is text (gravdir reads no files); its root link is ``base_link``.

# %%
chain = gravdir.chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
bodies = inertials_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
print(f"\n{chain.n_joints} joints: {', '.join(bodies.joint_names)}")

# %%
# 2\. Split the log into sweeps
# -----------------------------
# The table has no sweep labels, so find them: a sweep moves one joint out and back while the
# others hold still. Among the rows where something moves (faster than 0.02 rad/s), take the
# stretches in which one joint moves alone — pauses at the reversals do not break them, another
# joint moving does — and keep those that move both ways: a stretch that moves one way only is
# a move between sweeps.

# %%
time = frame["timestamp"].to_numpy()
q = frame[[f"actual_q_{i}" for i in range(6)]].to_numpy()
qd = frame[[f"actual_qd_{i}" for i in range(6)]].to_numpy()
current = frame[[f"actual_current_{i}" for i in range(6)]].to_numpy()
print(f"median sample interval {np.median(np.diff(time)):.4f} s: timestamps in seconds")

moving = np.abs(qd) > 0.02  # rad/s
active = np.flatnonzero(moving.any(axis=1))  # the rows where something moves
# The joint that moves alone in each of them (-1 where several move at once).
alone = np.where(moving[active].sum(axis=1) == 1, moving[active].argmax(axis=1), -1)
found = []  # (joint, rows)
for part in np.split(np.arange(active.size), np.flatnonzero(np.diff(alone)) + 1):
    j, rows = int(alone[part[0]]), slice(active[part[0]], active[part[-1]] + 1)
    if j >= 0 and qd[rows, j].max() > 0 > qd[rows, j].min():  # out and back: a sweep
        found.append((j, rows))
for k, (j, rows) in enumerate(found):
    print(
        f"sweep {k}: joint {j} over {np.degrees(np.ptp(q[rows, j])):.0f}°, "
        f"{rows.stop - rows.start} samples, joint 0 held at {np.degrees(q[rows.start, 0]):.1f}°"
    )
# The simulator's own labels (a real log has none) agree:
labels = np.full(len(frame), -1)
for k, (_, rows) in enumerate(found):
    labels[rows] = k
inside = log.sweep_index >= 0
differ = inside & (labels != log.sweep_index)
share = 1 - differ.sum() / inside.sum()
print(
    f"sweep samples labelled as the simulator labelled them: {100 * share:.1f}%; the others are "
    f"the slow ends (at most {np.max(np.abs(qd[differ])):.3f} rad/s), which the fit leaves out"
)

# %%
# 3\. Current to torque, and its sign
# -----------------------------------
# UR's ``actual_current`` is in amperes; torque is current × drive gain. UR's documents state no
# sign for it (docs/torque_signals.md), so check it on a held pose: the
# arm rests before every sweep, and the URDF's masses say which way gravity loads joint 2
# there. The holding torque in gravdir's sign is :math:`\mathrm{up}^\top R\,w` with :math:`w` the
# joint's moment from the mass model; a level base (up = +z) is close enough for a sign.

# %%
before = np.arange(len(frame)) < found[0][1].start
rest = np.flatnonzero(np.all(np.abs(qd) < 1e-3, axis=1) & before)
pose = q[rest].mean(axis=0)
w = moment_from_mass_model(chain, pose, 1, bodies.mass, bodies.com_in_link)
expected = float(np.array([0.0, 0.0, 1.0]) @ gravdir.link_frames(chain, pose).rotations[1] @ w)
held = float(np.mean(current[rest, 1]) * DRIVE_GAIN[1])
torque_sign = 1 if np.sign(held) == np.sign(expected) else -1
print(f"\njoint 2 at rest: current × gain = {held:.2f} N·m, mass model {expected:.2f} N·m")
print(f"  -> torque_sign = {torque_sign}")

# %%
# 4\. Fit each sweep
# ------------------
# The log has no acceleration: ``joint_acceleration`` takes it from the logged velocity (a
# Savitzky–Golay derivative that handles the jittered timestamps). With it, ``fit_sweep`` fits
# the inertial torque of the reversals beside gravity, friction (with its load-dependent part)
# and the gear ripple.

# %%
sweeps = []
for k, (j, rows) in enumerate(found):
    torque = current[rows, j] * DRIVE_GAIN[j]
    acceleration = gravdir.joint_acceleration(time[rows], velocity=qd[rows, j])
    common = {"load_friction": "abs", "harmonics": [RIPPLE_ORDER[j]], "torque_sign": torque_sign}
    fit = gravdir.fit_sweep(
        q[rows, j], velocity=qd[rows, j], acceleration=acceleration, torque=torque, **common
    )
    without = gravdir.fit_sweep(q[rows, j], velocity=qd[rows, j], torque=torque, **common)
    # The simulator's truth: the sensor's gain times the arm's gravity torque and inertia.
    at = np.repeat(q[rows.start][None], 2, axis=0)
    at[:, j] = 0.0, np.pi / 2
    b_true, a_true = sensors[j].gain * arm.gravity_torque(at)[:, j]
    inertia_true = sensors[j].gain * arm.joint_inertia(q[rows.start])[j]
    print(
        f"sweep {k}: amplitude {fit.amplitude:.3f} ± {fit.amplitude_std:.3f} N·m "
        f"(truth {np.hypot(a_true, b_true):.3f}), phase {np.degrees(fit.phase):.3f} "
        f"± {np.degrees(fit.phase_std):.3f}° (truth {np.degrees(np.arctan2(b_true, a_true)):.3f})\n"
        f"  residual {fit.residual_rms:.3f} N·m (without acceleration {without.residual_rms:.3f}), "
        f"noise {sensors[j].noise_std:.3f}; inertia {fit.inertia:.3f} ± {fit.inertia_std:.3f}, "
        f"truth {inertia_true:.3f} kg·m²"
    )
    sweeps.append(gravdir.joint_sweep_from_chain(chain, q[rows.start], j, fit))

# %%
# 5\. The direction of gravity
# ----------------------------
# ``estimate_up`` works in the chain's frame, the URDF root ``base_link``. The robot stands on
# the floor, so ``up_hint`` is +z.

# %%
estimate = gravdir.estimate_up(sweeps, up_hint=[0.0, 0.0, 1.0])
print(f"\nestimate (base_link): {gravdir.tilt_azimuth_from_up(estimate.up)}")
print(f"truth    (base_link): {gravdir.tilt_azimuth_from_up(up_true_root)}")
error = np.degrees(float(gravdir.angle_between(estimate.up, up_true_root)))
print(f"error {error:.4f}°, reported up_std_deg {estimate.up_std_deg:.4f}°")

# %%
# 6\. Into the controller's base frame
# ------------------------------------
# The UR controller's base is ``base_link`` turned by π about z (``BASE_FROM_ROOT["ur"]``, see
# docs/controllers.md): x and y change sign.

# %%
in_base = gravdir.express_up(estimate, BASE_FROM_ROOT["ur"], frame="UR base")
up_true_base = BASE_FROM_ROOT["ur"] @ up_true_root  # the truth, for the printout
print(f"\nestimate (UR base): {gravdir.tilt_azimuth_from_up(in_base.up)}")
print(f"truth    (UR base): {gravdir.tilt_azimuth_from_up(up_true_base)}")

# %%
# 7\. The line to type
# --------------------
# UR's installation writes ``set_gravity`` with 9.82 m/s² for a floor mount; we use the same
# magnitude (only the direction matters).

# %%
setting = gravdir.setting_from_up(in_base, "ur_set_gravity", gravity=9.82)
print("\nThe URScript line to run on the controller:")
print(f"  {setting.line}")
print(f"  ± {np.array2string(setting.values_std, precision=4)} m/s² (one standard deviation)")
truth_setting = gravdir.setting_from_up(up_true_base, "ur_set_gravity", gravity=9.82)
print(f"  the truth's line: {truth_setting.line}")

# %%
# 8\. Check the setting installed now
# -----------------------------------
# A fresh installation has the floor default, ``set_gravity(0, 0, 9.82)`` (read it back with
# URScript ``get_gravity()``). How far is it from the calibration, in its standard deviations?
# And the mistake this page guards against: the estimate typed in without the turn by π.

# %%
installed = gravdir.up_from_setting("ur_set_gravity", [0.0, 0.0, 9.82])
check = gravdir.compare_setting(in_base, installed)
print(
    f"\ninstalled floor default: {check.angle_deg:.3f}° from the calibration, "
    f"{float(check.mahalanobis):.0f} standard deviations (p = {check.p_value:.1g})"
)
unturned = gravdir.setting_from_up(estimate, "ur_set_gravity", gravity=9.82)
wrong = gravdir.compare_setting(unturned, up_true_base)
print(f"without the turn, {unturned.line} would be {wrong.angle_deg:.2f}° off the truth")
after = gravdir.compare_setting(in_base, up_true_base)
print(
    f"the calibration against the truth: {after.angle_deg:.4f}°, "
    f"{float(after.mahalanobis):.2f} standard deviations"
)
