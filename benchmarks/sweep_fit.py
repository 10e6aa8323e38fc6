# %% [markdown]
# # fit_sweep against scipy.optimize.curve_fit
#
# Same data for both: 2000 constant-speed forward/backward sweeps of 500 samples (a 120° arc, drawn
# amplitude, phase, offset, friction and 0.5% noise). curve_fit fits the model in its natural,
# nonlinear form `c + A sin(q + phi) + F sgn(v)` (the sinusoid A sin(q + phi) of US 11,446,825 B2,
# Equation 2) from its default start (all ones) and from an informed start;
# fit_sweep fits the linear form of the same model. Printed: time ratios per sweep and for the
# batch, the batch against numpy's bare `sin` and `cos` of the same angles and against the bare
# per-sample passes of a batched fit (`bare_passes`: no check, no solve), and how often
# curve_fit lands in a wrong minimum (residual RMS above fit_sweep's by more than 1e-6 relative,
# or no convergence). Then the cost of the optional inertia column (`acceleration=`), which the
# default path does not pay.
#
# Then the sinusoid-plus-Coulomb model in its linear form, `c + a sin q + b cos q + F sgn v`,
# fitted by curve_fit (default start) and by `fit_sweep(..., friction="coulomb")` (the same four
# columns) on the same 500-sample sweeps. Per-call times are medians over the sweeps, and the
# median of five repeats of that is printed (the machine is shared: the load average is printed
# with them).

# %%
from __future__ import annotations

import os
import time
import warnings

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

from gravdir import fit_sweep, fit_sweep_common_mode
from gravdir.sweep import wrap_angle
from gravdir.synthetic import iiwa_arm, realistic_sensors, up_from_base_tilt, ur5_arm

N_SWEEPS, N_SAMPLES, N_TIMED_SINGLE = 2000, 500, 300


def make_data(seed: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    half = N_SAMPLES // 2
    centre = rng.uniform(-np.pi, np.pi, (N_SWEEPS, 1))
    arc = np.radians(120.0)
    fwd = np.linspace(-arc / 2, arc / 2, half)
    q = centre + np.concatenate([fwd, fwd[::-1]])
    v = np.concatenate([np.full(half, 0.3), np.full(half, -0.3)]) * np.ones((N_SWEEPS, 1))
    amp = rng.uniform(5, 50, (N_SWEEPS, 1))
    phase = rng.uniform(-np.pi, np.pi, (N_SWEEPS, 1))
    torque = (
        rng.uniform(-0.03, 0.03, (N_SWEEPS, 1)) * amp
        + amp * np.sin(q + phase)
        + rng.uniform(0.02, 0.1, (N_SWEEPS, 1)) * amp * np.sign(v)
        + rng.normal(0, 0.005, q.shape) * amp
    )
    return q, torque, v, np.hstack([amp, phase])


def sinusoid_model(x: np.ndarray, c: float, a: float, phi: float, f: float) -> np.ndarray:
    q, s = x
    return c + a * np.sin(q + phi) + f * s


def linear_model(x: np.ndarray, c: float, a: float, b: float, f: float) -> np.ndarray:
    q, v = x
    return c + a * np.sin(q) + b * np.cos(q) + f * np.sign(v)


def median_per_call(fn, idx, repeat: int = 5) -> float:
    """Median over `repeat` runs of the median per-call time of ``fn(i)`` over `idx`."""
    runs = []
    for _ in range(repeat):
        times = []
        for i in idx:
            t0 = time.perf_counter()
            fn(i)
            times.append(time.perf_counter() - t0)
        runs.append(float(np.median(times)))
    return float(np.median(runs))


def bare_passes(q: np.ndarray, torque: np.ndarray, v: np.ndarray, step: int = 64) -> None:
    """The per-sample work of a batched fit of the four columns [1, sin q, cos q, sgn v], with no
    input check, option, solve or result: blocks of `step` sweeps through buffers reused while
    in cache, each giving |v|'s largest and smallest value, q's extremes, the columns, their Gram
    products and X'y (numpy's stacked matmul and matvec), and the torque's checksum sums."""
    n_sweeps, n = q.shape
    x = np.empty((step, 4, n))
    x[:, 0] = 1.0
    speed = np.empty((step, n))
    gram, xty = np.empty((n_sweeps, 4, 4)), np.empty((n_sweeps, 4))
    ext = np.empty((4, n_sweeps))
    sums = np.empty((2, n_sweeps), dtype=np.uint64)
    for i in range(0, n_sweeps, step):
        b = slice(i, i + step)
        qb, vb, tb = q[b], v[b], torque[b]
        m = qb.shape[0]
        xb, sb = x[:m], speed[:m]
        np.abs(vb, out=sb)
        ext[0, b], ext[1, b] = sb.max(axis=-1), sb.min(axis=-1)
        ext[2, b], ext[3, b] = qb.max(axis=-1), qb.min(axis=-1)
        np.sin(qb, out=xb[:, 1])
        np.cos(qb, out=xb[:, 2])
        np.sign(vb, out=xb[:, 3])
        np.matmul(xb, np.swapaxes(xb, -1, -2), out=gram[b])
        np.matvec(xb, tb, out=xty[b])
        bits = tb.view(np.uint64)
        sums[0, b], sums[1, b] = bits.sum(axis=-1), np.vecdot(bits, bits)


def best_of(fn, repeat: int = 5) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# %%
def main() -> None:
    q, torque, v, truth = make_data()
    s = np.sign(v)

    # Batch: one call for all sweeps.
    t_batch = best_of(lambda: fit_sweep(q, velocity=v, torque=torque))
    t_sincos = best_of(lambda: (np.sin(q), np.cos(q)))
    t_bare = best_of(lambda: bare_passes(q, torque, v))
    batch = fit_sweep(q, velocity=v, torque=torque)

    # Per sweep: fit_sweep called once per sweep, as a controller would (median per call).
    idx = range(N_TIMED_SINGLE)
    t_single = median_per_call(lambda i: fit_sweep(q[i], velocity=v[i], torque=torque[i]), idx)

    # curve_fit from its default start (p0 = ones) and from an informed start.
    def run_curve_fit(i: int, p0: list[float] | None) -> np.ndarray | None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            try:
                popt, _ = curve_fit(sinusoid_model, (q[i], s[i]), torque[i], p0=p0, maxfev=2000)
            except RuntimeError:
                return None
        return popt

    t_cf = median_per_call(lambda i: run_curve_fit(i, None), idx)
    wrong_naive = 0
    wrong_informed = 0
    for i in range(N_SWEEPS):
        rms_lin = float(batch.residual_rms[i])
        informed = [0.0, float(np.ptp(torque[i])) / 2, 0.0, 0.0]
        for p0, counter in ((None, "naive"), (informed, "inf")):
            popt = run_curve_fit(i, p0)
            if popt is None:
                bad = True
            else:
                rms = np.sqrt(np.mean((torque[i] - sinusoid_model((q[i], s[i]), *popt)) ** 2))
                bad = rms > rms_lin * (1 + 1e-6)
            if bad and counter == "naive":
                wrong_naive += 1
            elif bad:
                wrong_informed += 1

    amp_err = np.abs(batch.amplitude - truth[:, 0]) / truth[:, 0]
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    print(f"sweeps: {N_SWEEPS} x {N_SAMPLES} samples; per-call times are medians")
    print(f"fit_sweep, one call per sweep : {t_single * 1e6:9.1f} us/sweep")
    print(f"curve_fit (default p0)        : {t_cf * 1e6:9.1f} us/sweep")
    print(f"fit_sweep, one batched call   : {t_batch / N_SWEEPS * 1e6:9.1f} us/sweep")
    print(f"numpy sin+cos of the angles   : {t_sincos / N_SWEEPS * 1e6:9.1f} us/sweep")
    print(f"bare per-sample passes        : {t_bare / N_SWEEPS * 1e6:9.1f} us/sweep")
    print(f"ratio per sweep   (curve_fit / fit_sweep)        : {t_cf / t_single:6.1f}x")
    print(f"ratio for batch   (curve_fit x N / batched call) : {t_cf * N_SWEEPS / t_batch:6.1f}x")
    print(f"batch against sin+cos alone (fit / sin+cos)      : {t_batch / t_sincos:6.2f}x")
    print(f"bare passes against sin+cos (bare / sin+cos)     : {t_bare / t_sincos:6.2f}x")
    print(
        f"curve_fit wrong minimum or no convergence: default start {wrong_naive}/{N_SWEEPS} "
        f"({100 * wrong_naive / N_SWEEPS:.1f}%), informed start {wrong_informed}/{N_SWEEPS}"
    )
    print(f"fit_sweep amplitude error, median relative: {np.median(amp_err):.2e}")

    # The inertia column: the same sweeps with an acceleration column (its values matter for the
    # fit, not for the time: an acceleration that changes along each pass).
    acc = 0.5 * np.sin(3.0 * q) * s
    torque_a = torque + 0.8 * acc
    t_batch_a = best_of(lambda: fit_sweep(q, velocity=v, torque=torque_a, acceleration=acc))
    t_single_a = (
        best_of(
            lambda: [
                fit_sweep(q[i], velocity=v[i], torque=torque_a[i], acceleration=acc[i]) for i in idx
            ],
            3,
        )
        / N_TIMED_SINGLE
    )
    print(f"with acceleration, one call   : {t_single_a * 1e6:9.1f} us/sweep")
    print(f"with acceleration, batched    : {t_batch_a / N_SWEEPS * 1e6:9.1f} us/sweep")
    linear_model_benchmark(q, torque, v)


def linear_model_benchmark(q: np.ndarray, torque: np.ndarray, v: np.ndarray) -> None:
    """curve_fit of c + a sin q + b cos q + F sgn v against fit_sweep with the same columns."""
    idx = range(N_TIMED_SINGLE)

    def run_curve_fit(i: int) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            popt, _ = curve_fit(linear_model, (q[i], v[i]), torque[i])
        return popt

    # Same model, same answer: the check that the two fit the same thing.
    gap = max(
        float(
            np.max(
                np.abs(
                    run_curve_fit(i)
                    - fit_sweep(
                        q[i], velocity=v[i], torque=torque[i], friction="coulomb"
                    ).coefficients
                )
            )
        )
        for i in range(20)
    )
    t_cf = median_per_call(run_curve_fit, idx)
    t_fs = median_per_call(
        lambda i: fit_sweep(q[i], velocity=v[i], torque=torque[i], friction="coulomb"), idx
    )
    print("\nsinusoid-plus-Coulomb model, linear form, 500 samples (median per call)")
    print(f"curve_fit (default p0)        : {t_cf * 1e6:9.1f} us/sweep")
    print(f"fit_sweep(friction='coulomb') : {t_fs * 1e6:9.1f} us/sweep")
    print(f"ratio (curve_fit / fit_sweep) : {t_cf / t_fs:6.1f}x")
    print(f"largest coefficient difference between the two: {gap:.1e}")
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")


# %% [markdown]
# ## J1 zero crossings on arm models with realistic sensor errors
#
# UR5-like and iiwa-like arms, base tilt 1-10° in a random direction, realistic sensor errors
# (gain, offset, Coulomb/viscous/load-dependent friction, gear ripple, 0.5% noise). Each draw
# sweeps J1 over 180° with the arm stretched out. The error of the unstable J1 zero is compared
# between fit_sweep, an ordinary nonlinear least-squares fit of the same model with curve_fit
# (started at the truth, so it finds the global minimum; it keeps the slow ramp samples that
# fit_sweep drops), forward/backward averaging (the common mode of US 11,446,825 B2), and
# fit_sweep with the gear-ripple order among its nuisance harmonics (`harmonics=[order]`, the
# order known from the gearbox).


# %%
def sinusoid_model_vel(x: np.ndarray, c: float, a: float, phi: float, fc: float, fv: float):
    q, v = x
    return c + a * np.sin(q + phi) + fc * np.sign(v) + fv * v


def zero_crossings(n_draws: int = 300, seed: int = 11) -> None:
    rng = np.random.default_rng(seed)
    print("\nJ1 unstable-zero error, degrees (95th percentile / median), realistic sensors")
    print(
        f"{'arm':6s} {'fit_sweep':>17s} {'curve_fit (OLS)':>17s} {'common-mode':>17s} "
        f"{'fit_sweep+ripple':>17s} ratio95 (fit_sweep / OLS)"
    )
    for name, make, pose in (
        ("ur5", ur5_arm, np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])),
        ("iiwa", iiwa_arm, np.array([0.0, np.pi / 2, 0.0, 0.0, 0.0, 0.0, 0.0])),
    ):
        errs: dict[str, list[float]] = {
            "fit_sweep": [],
            "curve_fit": [],
            "common": [],
            "ripple": [],
        }
        for _ in range(n_draws):
            up = up_from_base_tilt(np.radians(rng.uniform(1, 10)), rng.uniform(-np.pi, np.pi))
            arm = make(up=up)
            sensors = realistic_sensors(rng, arm.peak_gravity_torque())
            start = rng.uniform(-np.pi, np.pi)
            rec = arm.sweep(
                0, pose, start, start + np.pi, speed=0.4, sample_rate=200.0, sensor=sensors, rng=rng
            )
            q0, q1 = pose.copy(), pose.copy()
            q0[0], q1[0] = 0.0, np.pi / 2
            b, a = arm.gravity_torque(q0)[0], arm.gravity_torque(q1)[0]
            true_zero = wrap_angle(np.pi - np.arctan2(b, a))
            fit = fit_sweep(rec.q, velocity=rec.velocity, torque=rec.torque)
            errs["fit_sweep"].append(abs(float(wrap_angle(fit.zeros().unstable - true_zero))))
            p0 = [0.0, np.hypot(a, b), np.arctan2(b, a), 0.0, 0.0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", OptimizeWarning)
                popt, _ = curve_fit(sinusoid_model_vel, (rec.q, rec.velocity), rec.torque, p0=p0)
            amp, ph = popt[1], popt[2]
            ph = ph + np.pi if amp < 0 else ph
            errs["curve_fit"].append(abs(float(wrap_angle(np.pi - ph - true_zero))))
            fit_h = fit_sweep(
                rec.q, velocity=rec.velocity, torque=rec.torque, harmonics=[sensors[0].ripple_order]
            )
            errs["ripple"].append(abs(float(wrap_angle(fit_h.zeros().unstable - true_zero))))
            cm = fit_sweep_common_mode(rec.q, velocity=rec.velocity, torque=rec.torque)
            errs["common"].append(abs(float(wrap_angle(cm.zeros().unstable - true_zero))))
        row = {k: np.degrees(np.array(v)) for k, v in errs.items()}
        cells = [f"{np.percentile(row[k], 95):8.4f} / {np.median(row[k]):7.4f}" for k in row]
        ratio = np.percentile(row["fit_sweep"], 95) / np.percentile(row["curve_fit"], 95)
        print(f"{name:6s} " + " ".join(f"{c:>17s}" for c in cells) + f" {ratio:6.3f}")


if __name__ == "__main__":
    import sys

    main()
    if "--speed-only" not in sys.argv:
        zero_crossings()
