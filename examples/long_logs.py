"""
Long logs read in chunks
========================

A log too long to hold in memory is given to ``estimate_up_from_motion_chunks`` and
``track_up_from_chunks`` as a re-iterable source of chunks: here a reader of a file on disk,
whose ``__iter__`` opens the file and hands out a few thousand rows at a time. Both functions
read it twice (the stamps first) and return what ``estimate_up_from_motion`` and ``track_up``
return on the whole log. The arm is the UR5e-like arm of *Gravity from ordinary motion*, with
the realistic sensor errors, on a base tilted by 8°, logged for one minute at 250 Hz.
"""

# %%
import tempfile
from pathlib import Path

import numpy as np

from gravdir import angle_between, chain_from_urdf
from gravdir.motion import estimate_up_from_motion_chunks, track_up_from_chunks
from gravdir.synthetic import UR5E_LIKE_URDF, arm_from_urdf, realistic_sensors
from gravdir.synthetic.motion import fourier_trajectory

rng = np.random.default_rng(3)
tilt, azimuth = np.radians(8.0), np.radians(-30.0)
up = np.array([np.sin(tilt) * np.cos(azimuth), np.sin(tilt) * np.sin(azimuth), np.cos(tilt)])
arm = arm_from_urdf(UR5E_LIKE_URDF, tip_link="tool0", up=up)
home = np.array([0.0, -1.3, 1.3, -1.5, -1.5, 0.0])
traj = fourier_trajectory(6, 60.0, 250.0, rng=rng, q0=home)
holding = arm.inverse_dynamics(traj.q, traj.velocity, traj.acceleration)
sensors = realistic_sensors(rng, arm.peak_gravity_torque())
columns = [
    s.measure(traj.q[:, j], traj.velocity[:, j], holding[:, j], rng) for j, s in enumerate(sensors)
]
torque = np.stack(columns, axis=-1)

# %%
# The log on disk
# ---------------
#
# One row per sample: the time, then the angles, velocities and torques of the six joints.
# The reader maps the file and copies one chunk of rows at a time; it counts how often it is
# read.


# %%
class LogReader:
    """The chunks of a log file of rows (time, q, velocity, torque), `rows` at a time."""

    def __init__(self, path: Path, rows: int = 4096) -> None:
        self.path, self.rows, self.passes = path, rows, 0

    def __iter__(self):
        self.passes += 1
        data = np.load(self.path, mmap_mode="r")
        for start in range(0, data.shape[0], self.rows):
            block = np.array(data[start : start + self.rows])
            yield {
                "time": block[:, 0],
                "q": block[:, 1:7],
                "velocity": block[:, 7:13],
                "torque": block[:, 13:19],
            }


folder = tempfile.TemporaryDirectory()
path = Path(folder.name) / "log.npy"
np.save(path, np.column_stack([traj.time, traj.q, traj.velocity, torque]))
reader = LogReader(path)
size = path.stat().st_size / 1e6
print(f"{traj.time.size} samples in {size:.1f} MB, read {reader.rows} rows at a time")

# %%
# The estimate and the track
# --------------------------

# %%
chain = chain_from_urdf(UR5E_LIKE_URDF, tip_link="tool0")
est = estimate_up_from_motion_chunks(chain, reader)
error = float(np.degrees(angle_between(est.up, up)))
print(f"estimate: error {error:.4f}°, reported standard deviation {est.up_std_deg:.4f}°")
print(f"the file was read {reader.passes} times")

track = track_up_from_chunks(est, reader)
errors = np.degrees(angle_between(track.up, up))
print(
    f"track: {track.n_windows} windows of {track.window:g} s, errors {errors.min():.3f}° to "
    f"{errors.max():.3f}°, {int(track.alarm.sum())} alarms"
)
print(f"the file was read {reader.passes} times in all")
folder.cleanup()
