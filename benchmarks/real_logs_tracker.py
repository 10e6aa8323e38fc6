"""The tracker on the real UR10e logs: a 1° tilt injected into the second half of each log.

Reads the logs from ``../shared/realdata`` (or ``GRAVDIR_REALDATA``; tests/_realdata.py finds
them). The arm is identified on ``20_02_10_20sec_7harm`` by the stated rule (quadratic friction,
every other setting the estimator's default); ``track_up`` then runs over each of the other
moving development logs as logged (the base never moved: every alarm is false) and with a 1°
tilt of `up` added to its second half, about four directions normal to the identified `up`:
the torque the fitted model predicts on the tilted base less the one on the identified base
(``MotionFit.predict_torque``, q̈ by ``joint_acceleration`` with the estimator's 0.2 s window).
It prints, for the default windows and for two shorter ones, the false alarms, the injected
tilts alarmed before the log ends, the windows determined and tested, and the smallest
``change_p`` of each injected log; then how far apart the two halves of each log are when each
half is one window (the model error each stretch of trajectory fixes, against which a 1° change
has to stand out), with their standard deviations.

Run: ``python benchmarks/real_logs_tracker.py`` (about five minutes).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _realdata import LONG_LOGS, log, urdf_text  # noqa: E402

import gravdir  # noqa: E402

IDENTIFICATION = "20_02_10_20sec_7harm"
TILT = np.radians(1.0)
# Window length and hop, s: the default (6 s, windows that do not overlap) and two shorter ones.
WINDOWS = ((None, None), (3.0, 1.5), (2.0, 1.0))


def angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b)))


def main() -> None:
    chain = gravdir.chain_from_urdf(urdf_text(), base_link="base_link", tip_link="tool0")
    ident = log(IDENTIFICATION)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = gravdir.estimate_up_from_motion(
            chain, ident.time, q=ident.q, velocity=ident.velocity, torque=ident.torque,
            friction="coulomb-viscous-quadratic",
        )  # fmt: skip
    basis = np.linalg.svd(fit.up[None, :])[2][1:]  # two unit vectors normal to `up`
    tilted = [
        np.cos(TILT) * fit.up + np.sin(TILT) * (np.cos(a) * basis[0] + np.sin(a) * basis[1])
        for a in np.radians([0.0, 90.0, 180.0, 270.0])
    ]
    others = [name for name in LONG_LOGS if name != IDENTIFICATION]
    for window, hop in WINDOWS:
        options = {} if window is None else {"window": window, "hop": hop}
        label = "default windows" if window is None else f"{window:g} s windows, hop {hop:g} s"
        false_alarms, alarmed, tries = 0, 0, 0
        print(f"\n== {label}")
        for name in others:
            data = log(name)
            series = {"q": data.q, "velocity": data.velocity}
            acc = gravdir.joint_acceleration(data.time, velocity=data.velocity, window=0.2, axis=0)
            base = fit.predict_torque(data.q, velocity=data.velocity, acceleration=acc)
            second = data.time >= 0.5 * (data.time[0] + data.time[-1])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                null = gravdir.track_up(fit, data.time, **series, torque=data.torque, **options)
                smallest = []
                for up in tilted:
                    shifted = fit.predict_torque(
                        data.q, velocity=data.velocity, acceleration=acc, up=up
                    )
                    torque = data.torque + np.where(second[:, None], shifted - base, 0.0)
                    track = gravdir.track_up(fit, data.time, **series, torque=torque, **options)
                    alarmed += int(track.alarm.any())
                    tries += 1
                    tested = track.change_p[track.tested]
                    smallest.append(float(tested.min()) if tested.size else 1.0)
            false_alarms += int(null.alarm.sum())
            print(
                f"  {name:22s} windows {null.n_windows:2d}, determined "
                f"{int(null.determined.sum()):2d}, tested {int(null.tested.sum()):2d}, false "
                f"alarms {int(null.alarm.sum())}; injected: smallest change_p "
                f"[{', '.join(f'{p:.2g}' for p in smallest)}]"
            )
        print(f"  false alarms {false_alarms}; injected tilts alarmed {alarmed} of {tries}")
    print("\n== each log's two halves as one window each (parameters of the identification)")
    for name in others:
        data = log(name)
        half = 0.5 * (data.time[-1] - data.time[0]) * (1.0 - 1e-9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            track = gravdir.track_up(
                fit, data.time, q=data.q, velocity=data.velocity, torque=data.torque,
                window=half, max_std=np.pi,
            )  # fmt: skip
        print(
            f"  {name:22s} halves {angle_deg(track.up[0], track.up[1]):.2f}° apart, standard "
            f"deviations {np.array2string(track.up_std_deg[:2], precision=2)}°"
        )


if __name__ == "__main__":
    main()
