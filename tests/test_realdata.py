"""The estimators on real logs of a UR10e (``../shared/realdata``, see tests/_realdata.py).

These tests skip, saying why, where the logs are absent; CI requires them
(``GRAVDIR_REQUIRE_REALDATA=1``). They assert properties that hold whatever the true mounting of
the robot is, which is known to no one to better than about a degree.
"""

from __future__ import annotations

import numpy as np
import pytest
from _realdata import CORRUPTED_LOG, LONG_LOGS, log, urdf_text

import gravdir


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


def test_the_corrupted_log_is_refused_naming_q_and_its_first_bad_row():
    """Rows 1-19 of the corrupted log hold garbage (253 rad, exact zeros, values up to 1e305):
    the estimator names `q` and row 1, not a unit mistake."""
    data = log(CORRUPTED_LOG)
    chain = gravdir.chain_from_urdf(urdf_text(), base_link="base_link", tip_link="tool0")
    with pytest.raises(ValueError, match=r"`q`.* at row 1, the first of \d+ rows"):
        gravdir.estimate_up_from_motion(
            chain, data.q, velocity=data.velocity, torque=data.torque, sample_rate=100.0
        )
