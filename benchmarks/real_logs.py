"""The motion estimator on the real UR10e logs: the figures of consistency across logs.

Reads the logs from ``../shared/realdata`` (or ``GRAVDIR_REALDATA``; tests/_realdata.py finds
them) and prints, for the five development logs, what the estimates say about each other: the
chi-square of their fusion and its p-value, the RMS angle of each estimate to the fusion, the
median reported standard deviation, and each log against the fusion of the other four
(leave-one-log-out, in combined standard deviations), and the same with the fusion's model error per
trajectory estimated (``fuse_up(..., model_error_std="estimate")``); then whether the five short
clean logs of 2019 are determined and consistent with that fusion. It does so for the default
model, for the one with the quadratic friction term (``friction="coulomb-viscous-quadratic"``),
and for that one with the covariance that allows for correlated residuals
(``covariance="hac"``), and prints how far the term moves each estimate, how much of joint 1's
residual a position-dependent torque of joint 1 would explain, and how far encoder zero offsets
of joints 2 and 3 move the estimates, what the default model's load friction and torque
ripple each do to the figures and what each of the estimator's settings does to them, and how
much power the model error per trajectory that
the logs show leaves to detect an offset of 0.3° between two trajectories. Nothing is tuned
per log: q̈ is derived by the estimator from the logged time stamps (its derivative rule,
``derivative_window`` 0.2 s), every other setting is the estimator's default. The true
mounting of the robot is known to no one to better than about a degree, so the figures are of
agreement, not of error.

Run: ``python benchmarks/real_logs.py`` (about twelve minutes).
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _realdata import LONG_LOGS, SHORT_LOGS, log, urdf_text  # noqa: E402

import gravdir  # noqa: E402
from gravdir._options import CovarianceOption, Friction  # noqa: E402


def estimate(
    chain: gravdir.SerialChain,
    name: str,
    friction: Friction,
    covariance: CovarianceOption,
    zero_offset: tuple[int, float] | None = None,
    **options: Any,
) -> tuple[gravdir.MotionFit, float, int]:
    """The estimate of one log by the documented path, its wall time and its warnings; with
    `zero_offset` (joint index, rad) that offset added to the logged positions of the joint,
    and the estimator's other `options` where given."""
    data = log(name)
    q = data.q.copy()
    if zero_offset is not None:
        q[:, zero_offset[0]] += zero_offset[1]
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = gravdir.estimate_up_from_motion(
            chain, data.time, q=q, velocity=data.velocity, torque=data.torque,
            friction=friction, covariance=covariance, **options,
        )  # fmt: skip
    return fit, time.perf_counter() - start, len(caught)


def angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b)), a @ b)))


def report(
    chain: gravdir.SerialChain, friction: Friction, covariance: CovarianceOption = "white"
) -> dict[str, gravdir.MotionFit]:
    """Print the figures of one model and covariance; return the estimates by log."""
    print(f"\n== friction={friction!r}, covariance={covariance!r}\n")
    fits = {}
    for name in LONG_LOGS + SHORT_LOGS:
        fit, wall, n_warnings = estimate(chain, name, friction, covariance)
        fits[name] = fit
        print(
            f"{name:22s} {wall:5.1f} s, determined {fit.up_determined!s:5s} converged "
            f"{fit.converged!s:5s} up_std_deg {fit.up_std_deg:7.3f}, {n_warnings} warnings"
        )
    long = [fits[name] for name in LONG_LOGS]
    fused = gravdir.fuse_up(*long)
    rms = np.sqrt(np.mean([angle_deg(f.up, fused.up) ** 2 for f in long]))
    print(
        f"\ndevelopment logs: fuse_up chi2 {fused.chi2:.1f} on {fused.dof} dof "
        f"(chi2/dof {fused.chi2 / fused.dof:.1f}), p = {fused.p_value:.2g}"
    )
    median = float(np.median([f.up_std_deg for f in long]))
    print(f"RMS angle to the fusion {rms:.3f}°, median up_std_deg {median:.3f}°")
    print(
        "leave-one-log-out, each log from the fusion of the other four: "
        f"{np.round(fused.nsigma, 1)} σ"
    )
    with_error = gravdir.fuse_up(*long, model_error_std="estimate")
    tau = np.degrees(with_error.model_error_std)
    print(
        f"with a model error per trajectory (Paule-Mandel, {tau:.3f}° per direction): "
        f"p = {with_error.p_value:.2g}, each log against the other four with "
        f"the model error calibrated on them: {np.round(with_error.nsigma, 1)} σ, "
        f"F p-values {np.round(with_error.source_p_value, 3)}"
    )
    floor = [0.0, 0.0, 1.0]
    for label, result in (("own covariances", fused), ("model error estimated", with_error)):
        check = gravdir.compare_setting(result, floor)
        print(f"against the floor-mount default, {label}: {check!r}")
    determined = [name for name in SHORT_LOGS if fits[name].up_determined]
    print(f"\nshort 2019 logs determined: {len(determined)} of {len(SHORT_LOGS)}")
    for name in determined:
        judged = gravdir.fuse_up(*long, fits[name], model_error_std="estimate")
        alone = gravdir.fuse_up(*long, fits[name]).nsigma[-1]
        print(
            f"  {name}: {alone:.1f} σ from the fusion of the development logs; with their "
            f"model error, {judged.nsigma[-1]:.1f} σ, p-value {judged.source_p_value[-1]:.3f}"
        )
    return fits


def position_dependent_j1(fits: dict[str, gravdir.MotionFit]) -> None:
    """How much of joint 1's residual the candidate terms of a position-dependent torque of
    joint 1 explain on each development log: orders 1 and 2 of q1 (gear eccentricity, cable
    drag), alone and times sgn q̇1 (friction that changes with the angle), fitted to the
    residuals of the estimate (with an offset) where joint 1 moves (|q̇1| > 0.02 rad/s)."""
    explained, signs = [], []
    for name in LONG_LOGS:
        data = log(name)
        acc = gravdir.joint_acceleration(data.time, velocity=data.velocity, window=0.2, axis=0)
        model = fits[name].predict_torque(data.q, velocity=data.velocity, acceleration=acc)
        resid = data.torque[:, 0] - model[:, 0]
        moving = np.isfinite(resid) & (np.abs(data.velocity[:, 0]) > 0.02)
        q1, sign = data.q[moving, 0], np.sign(data.velocity[moving, 0])
        harmonics = [f(k * q1) for k in (1, 2) for f in (np.sin, np.cos)]
        x = np.column_stack([np.ones_like(q1), *harmonics, *(sign * h for h in harmonics)])
        y = resid[moving] - resid[moving].mean()
        beta = np.linalg.lstsq(x, y, rcond=None)[0]
        explained.append(1.0 - np.sum((y - x @ beta) ** 2) / np.sum(y**2))
        signs.append(np.sign(beta[1:3]))
    agree = all(np.array_equal(s, signs[0]) for s in signs)
    print(
        "\nposition-dependent torque of joint 1 (orders 1-2 of q1, alone and times sgn q̇1): "
        f"share of joint 1's residual variance explained, per log {np.round(explained, 3)}; "
        f"the first-order coefficients keep their signs across the logs: {agree}"
    )


def zero_offsets(chain: gravdir.SerialChain, fits: dict[str, gravdir.MotionFit]) -> None:
    """How far encoder zero offsets of joints 2 and 3 (±0.15°, ±0.3° added to the logged
    positions) move each development estimate, against its reported standard deviation, and
    how the fit's log-likelihood (``-sum_j n_j log rms_j``) changes with them."""
    print("\nzero offsets of q2 and q3 (-0.3, -0.15, +0.15, +0.3°):")
    worst = 0.0
    for name in LONG_LOGS:
        base = fits[name]
        for joint in (1, 2):
            moved, gained = [], []
            for step in np.radians([-0.3, -0.15, 0.15, 0.3]):
                fit = estimate(chain, name, "coulomb-viscous-quadratic", "hac", (joint, step))[0]
                moved.append(angle_deg(fit.up, base.up))
                gained.append(_log_likelihood(fit) - _log_likelihood(base))
            worst = max(worst, max(moved) / base.up_std_deg)
            print(
                f"  {name:24s} q{joint + 1}: `up` moves {np.round(moved, 3)}° "
                f"(up_std_deg {base.up_std_deg:.3f}); log-likelihood {np.round(gained, 1)}"
            )
    print(f"largest move in units of the log's up_std_deg: {worst:.3f}")


def variants(
    chain: gravdir.SerialChain,
    fits: dict[str, gravdir.MotionFit],
    title: str,
    cases: tuple[tuple[str, dict[str, Any]], ...],
) -> None:
    """Each of `cases` (a label and the estimator's options that differ from the defaults) on
    the development logs (quadratic friction, HAC): how far it moves each estimate of `fits`
    (in degrees and in the log's reported standard deviations) and what becomes of acceptance
    1's figures (RMS angle to the fusion, the fusion's p-value with the model error estimated,
    each log against the other four)."""
    print(f"\n{title} (quadratic friction, HAC):")
    for label, options in cases:
        other = [
            estimate(chain, name, "coulomb-viscous-quadratic", "hac", **options)[0]
            for name in LONG_LOGS
        ]
        moved = [angle_deg(f.up, fits[n].up) for f, n in zip(other, LONG_LOGS, strict=True)]
        sigmas = [m / fits[n].up_std_deg for m, n in zip(moved, LONG_LOGS, strict=True)]
        fused = gravdir.fuse_up(*other, model_error_std="estimate")
        rms = np.sqrt(np.mean([angle_deg(f.up, fused.up) ** 2 for f in other]))
        dof = np.round([f.covariance_dof for f in other], 1)
        print(
            f"  {label}: `up` moves {np.round(moved, 3)}° ({np.round(sigmas, 2)} σ); RMS angle "
            f"to the fusion {rms:.3f}°, fusion p = {fused.p_value:.2g}, each log against the "
            f"other four {np.round(fused.nsigma, 2)} σ; covariance_dof {dof}"
        )


# The default model's terms beyond rigid-body dynamics and friction in the speed, each taken
# out: the friction that grows with the load and the torque ripple.
TERMS = (
    ("without load friction", {"load_friction": "none"}),
    ("without torque ripple", {"ripple_components": 0}),
)
# The estimator's fixed settings, each varied: none is tuned to these logs.
DEFAULTS = inspect.signature(gravdir.estimate_up_from_motion).parameters
DEFAULT_MIN_SPEED = DEFAULTS["min_speed"].default
DEFAULT_SPEED_TAPER = DEFAULTS["speed_taper"].default
SETTINGS = (
    ("bandwidth 0.5 s", {"bandwidth": 0.5}),
    ("bandwidth 2 s", {"bandwidth": 2.0}),
    ("derivative_window 0.1 s", {"derivative_window": 0.1}),
    ("derivative_window 0.3 s", {"derivative_window": 0.3}),
    ("min_speed halved", {"min_speed": 0.5 * DEFAULT_MIN_SPEED}),
    ("min_speed doubled", {"min_speed": 2.0 * DEFAULT_MIN_SPEED}),
    ("speed_taper halved", {"speed_taper": 0.5 * DEFAULT_SPEED_TAPER}),
    ("speed_taper doubled", {"speed_taper": 2.0 * DEFAULT_SPEED_TAPER}),
)


def offset_power(fits: dict[str, gravdir.MotionFit], offset_deg: float = 0.3) -> None:
    """How well any estimate of one trajectory can tell an offset of `offset_deg` between two
    trajectories, given the model error per trajectory that the development logs show: the
    power of the chi-square test at 1 % of the difference of two estimates (2 degrees of
    freedom, noncentrality ``offset² / (2 (tau² + s²))``) with ``tau`` the Paule--Mandel model
    error of the five per direction and ``s`` the estimates' own standard deviation per
    direction, down to ``s = 0`` (trajectories of any length); and the largest ``tau² + s²``
    at which the power reaches 80 %. The known-covariance test is the most powerful of the
    references: an estimated covariance only lowers the power."""
    from scipy.optimize import brentq
    from scipy.stats import chi2, ncx2

    tau = np.degrees(gravdir.fuse_up(*(fits[n] for n in LONG_LOGS), model_error_std="estimate")
                     .model_error_std)  # fmt: skip
    critical = chi2.isf(0.01, 2)
    powers = [
        ncx2.sf(critical, 2, offset_deg**2 / (2.0 * (tau**2 + s**2))) for s in (0.0, 0.05, 0.1)
    ]
    needed = brentq(lambda lam: ncx2.sf(critical, 2, lam) - 0.8, 0.1, 100.0)
    print(
        f"\nan offset of {offset_deg}° between two trajectories, the development logs' model "
        f"error {tau:.3f}° per direction: power at 1 % {np.round(powers, 3)} for own standard "
        f"deviations 0, 0.05, 0.1° per direction; 80 % needs the model error and own standard "
        f"deviation together at most {offset_deg / np.sqrt(2.0 * needed):.3f}° per direction"
    )


def _log_likelihood(fit: gravdir.MotionFit) -> float:
    return -float(np.sum(fit.n_used * np.log(fit.residual_rms)))


def main() -> None:
    chain = gravdir.chain_from_urdf(urdf_text(), base_link="base_link", tip_link="tool0")
    plain = report(chain, "coulomb-viscous")
    quadratic = report(chain, "coulomb-viscous-quadratic")
    shift = [angle_deg(plain[name].up, quadratic[name].up) for name in LONG_LOGS]
    print(f"\nthe quadratic term moves each development estimate by {np.round(shift, 2)}°")
    position_dependent_j1(quadratic)
    honest = report(chain, "coulomb-viscous-quadratic", "hac")
    zero_offsets(chain, honest)
    variants(chain, honest, "the default model's terms, each taken out", TERMS)
    variants(chain, honest, "the estimator's settings, each varied", SETTINGS)
    offset_power(honest)


if __name__ == "__main__":
    main()
