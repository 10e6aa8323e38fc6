"""The estimators on real logs of a UR10e (``../shared/realdata``, see tests/_realdata.py).

These tests skip, saying why, where the logs are absent; CI requires them
(``GRAVDIR_REQUIRE_REALDATA=1``). They assert properties that hold whatever the true mounting of
the robot is, which is known to no one to better than about a degree.
"""

from __future__ import annotations

import numpy as np
from _realdata import LONG_LOGS, log


def test_the_logs_are_what_their_readme_says():
    """Six joints, time stamps increasing at about 100 Hz, torques of N·m magnitude: the loader
    reads the columns the folder's README documents."""
    for name in LONG_LOGS:
        data = log(name)
        assert data.q.shape[1] == data.velocity.shape[1] == data.torque.shape[1] == 6
        interval = np.diff(data.time)
        assert np.all(interval > 0)
        assert 0.009 < float(np.mean(interval)) < 0.012
        # J2 holds the arm against gravity: tens of N·m, never kN·m.
        assert 5.0 < float(np.max(np.abs(data.torque[:, 1]))) < 500.0
