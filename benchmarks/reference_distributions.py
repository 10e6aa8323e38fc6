"""Benchmark: how often `compare_setting` and `fuse_up` reject a true null, and detect an offset,
with sweep and motion estimates whose covariances are estimated.

The synthetic world with a real phenomenon of ``tests/_sweep_world.py`` (torque noise correlated
over 0.15 s, each draw's sweeps fitted with ``covariance="white"`` and with ``covariance="hac"``
and `up` estimated from each set). Per covariance it prints

- the mean squared error of `up` per degree of freedom in units of the reported covariance,
- the median of the estimates' ``covariance_dof`` and ``up_std_deg``,
- the share of draws where ``compare_setting`` against the true `up` has p < 0.01, with the
  F reference of ``covariance_dof`` and with the chi-square reference it replaces,
- the share of pairs of independent draws that ``fuse_up`` finds inconsistent at 1 %, and the
  share it finds inconsistent when the second estimate of the pair is turned by 0.3° (about an
  axis normal to `up`, by ``express_up``).

Run: ``python benchmarks/reference_distributions.py [N] [SPEED]`` (default N = 600 draws, SPEED =
0.25 rad/s: sweeps of about 17 s; 0.5 rad/s gives sweeps of 8.8 s). About 0.15 s per draw.

``python benchmarks/reference_distributions.py motion [N]`` prints the same figures for
``estimate_up_from_motion`` in the synthetic world of ``tests/test_motion.py``
(``correlated_motion_estimates``: a 3-joint arm's 20 s logs at 200 Hz, torque noise correlated
over 0.05 s). About 0.35 s per log.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _sweep_world import correlated_sweep_estimates  # noqa: E402
from test_motion import correlated_motion_estimates  # noqa: E402

import gravdir  # noqa: E402
from gravdir.errors import GravdirWarning  # noqa: E402


def _turned(est: gravdir.UpEstimate, angle: float) -> gravdir.UpResult:
    """`est` with `up` turned by `angle` about an axis normal to it."""
    axis = np.cross(est.up, [1.0, 0.0, 0.0])
    axis /= np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rotation = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
    return gravdir.express_up(est, rotation)


def _report(draws: dict[str, list[Any]], truth: np.ndarray) -> None:
    """Print the figures of each covariance's estimates against the true `up`."""
    for name, ests in draws.items():
        checks = [gravdir.compare_setting(e, truth) for e in ests]
        d2 = np.array([float(c.mahalanobis) ** 2 for c in checks])
        p_f = np.array([float(c.p_value) for c in checks])
        p_chi2 = np.exp(-0.5 * d2)  # chi-square survival with 2 degrees of freedom
        pairs = list(zip(ests[0::2], ests[1::2], strict=True))
        null = [gravdir.fuse_up(a, b).p_value < 0.01 for a, b in pairs]
        offset = [gravdir.fuse_up(a, _turned(b, np.radians(0.3))).p_value < 0.01 for a, b in pairs]
        print(
            f"{name:5s}: NSE per dof {np.mean(d2) / 2:.2f}; median covariance_dof "
            f"{np.median([e.covariance_dof for e in ests]):.1f}, up_std_deg "
            f"{np.median([e.up_std_deg for e in ests]):.3f}\n"
            f"       compare_setting rejects the truth at 1 %: {np.mean(p_f < 0.01):.3f} "
            f"(F), {np.mean(p_chi2 < 0.01):.3f} (chi-square)\n"
            f"       fuse_up of {len(pairs)} pairs, inconsistent at 1 %: {np.mean(null):.3f}; "
            f"with a 0.3° offset: {np.mean(offset):.3f}"
        )


def main() -> None:
    args = sys.argv[1:]
    start = time.process_time()
    if args and args[0] == "motion":
        n = int(args[1]) if len(args) > 1 else 600
        motion, truth = correlated_motion_estimates(0.05, n)
        print(f"{n} motion logs ({time.process_time() - start:.0f} s CPU)")
        _report(motion, truth)
        return
    n = int(args[0]) if args else 600
    speed = float(args[1]) if len(args) > 1 else 0.25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GravdirWarning)  # the white form's correlation warning
        draws, truth = correlated_sweep_estimates(n, speed)
    print(f"{n} draws at {speed} rad/s ({time.process_time() - start:.0f} s CPU)")
    _report(draws, truth)


if __name__ == "__main__":
    main()
