"""
gravdir quickstart
==================

The direction of gravity in a six-joint arm's base frame, from its own joint torques: sweep
joint 1 forward and back and fit its gravity sinusoid, move joint 1 to the zero of that
sinusoid, sweep joint 2 there and at two more joint-1 positions, and estimate ``up`` (the unit
vector opposite to gravity) with its uncertainty. The last cell checks the result against the
truth, which only a simulation knows.

.. docs/getting_started.md shows this example's page from here on.
"""

# %%
# A simulated robot in place of a real one
# ----------------------------------------
# On a real robot the sweeps come from the controller's log. Here a synthetic UR5-like arm stands
# in: its base is tilted by 3° (azimuth 40°), and its torque sensors carry realistic errors
# (per-joint gain, offset, Coulomb, viscous and load-dependent friction, gear ripple, white
# noise). The calibration below touches it only through ``record_sweep`` and the DH table.

# %%
import numpy as np
from scipy.signal import lombscargle

from gravdir import chain_from_dh, estimate_up, fit_sweep, joint_sweep_from_chain
from gravdir.synthetic import realistic_sensors, up_from_base_tilt, ur5_arm

rng = np.random.default_rng(2026)
robot = ur5_arm(up=up_from_base_tilt(np.radians(3.0), np.radians(40.0)))
sensors = realistic_sensors(rng, robot.peak_gravity_torque())
DH = robot.dh  # the vendor's DH table; columns: d, theta offset, a, alpha


def record_sweep(joint: int, pose: np.ndarray, start: float, stop: float):
    """Sweep `joint` from `start` to `stop` and back at 0.3 rad/s, the others held at `pose`."""
    return robot.sweep(
        joint, pose, start, stop, speed=0.3, sample_rate=250.0, sensor=sensors, rng=rng
    )


# %%
# Joint 1
# -------
# With the arm stretched out (joint 2 at -90°), sweep joint 1 over 200°. Each fit has friction
# that grows with the gravity load (``load_friction="abs"``) and the gear ripple as a nuisance
# harmonic. The ripple's order (cycles per joint revolution, twice the gear ratio for a harmonic
# drive) is a setting to choose: with the gear's datasheet at hand take it from there; without
# it, as here, take the highest peak of the spectrum of the residuals of a fit without it.


# %%
def ripple_order(sweep) -> int:
    """The whole order from 50 to 1000 at which the residuals of a ripple-free fit peak."""
    fit = fit_sweep(sweep.q, velocity=sweep.velocity, torque=sweep.torque, load_friction="abs")
    v = sweep.velocity
    used = np.abs(v) >= 0.1 * np.abs(v).max()  # the samples fit_sweep uses by default
    q, v, torque = sweep.q[used], v[used], sweep.torque[used]
    gravity = fit.gravity_torque(q)
    load = fit.load_coefficient * np.sign(v) * np.abs(gravity)
    residual = torque - fit.offset - gravity - fit.friction_torque(v) - load
    orders = np.arange(50, 1001)
    return int(orders[np.argmax(lombscargle(q, residual, orders.astype(float)))])


pose = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
sweep1 = record_sweep(0, pose, -1.7, 1.8)
order1 = ripple_order(sweep1)
fit1 = fit_sweep(
    sweep1.q,
    velocity=sweep1.velocity,
    torque=sweep1.torque,
    load_friction="abs",
    harmonics=[order1],
)
print(f"joint 1 ripple order {order1}")
print(fit1)

# %%
# Joint 2, at the joint-1 zero
# ----------------------------
# At a gravity zero of joint 1 the joint-2 axis is horizontal, so a joint-2 sweep sees the whole
# tilt in its phase. Sweep joint 2 over 150° there (its gear has its own ripple order), then at
# joint 1 = zero + 90° and zero + 180°: with the kinematics from the DH table (the masses are not
# needed), these four sweeps give the general estimator ``up`` for any mass distribution and any
# per-joint torque gain.

# %%
chain = chain_from_dh(*DH.T)
pose2 = pose.copy()
pose2[0] = float(fit1.zeros().unstable)
sweep2 = record_sweep(1, pose2, -2.9, -0.3)
order2 = ripple_order(sweep2)
print(f"joint 2 ripple order {order2}")
sweeps = [joint_sweep_from_chain(chain, pose, 0, fit1)]
for turn in (0.0, np.pi / 2, np.pi):
    pose_k = pose2.copy()
    pose_k[0] += turn
    rec = sweep2 if turn == 0.0 else record_sweep(1, pose_k, -2.9, -0.3)
    fit = fit_sweep(
        rec.q, velocity=rec.velocity, torque=rec.torque, load_friction="abs", harmonics=[order2]
    )
    print(fit)
    sweeps.append(joint_sweep_from_chain(chain, pose_k, 1, fit))

# %%
# The direction of gravity
# ------------------------
# ``up``, its tilt and azimuth, and ``up_std`` (the field ``up_std_deg``): the root-mean-square
# angular error the data support. ``chi2``, the sum of the squared whitened residuals with ``dof``
# degrees of freedom, says how well the four sweeps agree.

# %%
estimate = estimate_up(sweeps)
print(estimate)

# %%
# In a notebook, a result shows itself as a table: each value with its unit and uncertainty
# (a script prints it as the text above).

# %%
estimate  # noqa: B018 (a notebook shows a cell's last expression)

# %%
# Check against the simulator's truth
# -----------------------------------
# Only a simulation knows the true ``up``. An honest σ is right on average, not an upper bound on
# every draw: for a 2-D direction the squared error in units of the covariance,
# :math:`e^\top C^{+} e` with :math:`C` = ``up_cov``, is chi-square with two degrees of freedom
# (mean 2), and since ``up_std_deg`` is the root-mean-square error, the squared ratio of the error
# to it has mean 1. On 30 other seeds (0–29) of this script the two means were 1.97 and 0.99, and
# one draw in 30 erred by more than twice ``up_std_deg``: a single draw of 2σ or more is rare, not a
# fault.

# %%
from scipy.stats import chi2

from gravdir import angle_between, tilt_azimuth_from_up

up_true = robot.up
error = np.degrees(float(angle_between(estimate.up, up_true)))
e = up_true - estimate.up  # its component along `up` carries no information
nees = float(e @ estimate.up_information @ e)
print("truth:", tilt_azimuth_from_up(up_true))
print(f"direction error {error:.4f}° = {error / estimate.up_std_deg:.2f} × up_std_deg")
print(
    f"normalised squared error {nees:.2f}: chi-square (2 dof) exceeds it with probability "
    f"{chi2.sf(nees, 2):.3f}"
)
