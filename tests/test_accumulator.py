"""Tests of gravdir.SweepAccumulator: equal to fit_sweep on the concatenated samples over random
chunkings, merge orders, batch shapes and magnitudes; the not-ready state; bad input; merging,
and the refusal of merges that would count samples twice; memory."""

from __future__ import annotations

import dataclasses
import pickle
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gravdir import SweepAccumulator, fit_sweep
from gravdir.errors import InsufficientDataError

MIN_SPEED = 0.05


def sweep_data(
    rng,
    batch=(),
    n=300,
    *,
    harmonics=(),
    inertia=False,
    signed=False,
    noise=1e-3,
    friction="coulomb-viscous",
):
    """Forward/backward sweeps with a varying speed and slow ends (dropped by the speed mask),
    and the torque of known coefficients, built from explicit sums of the model's terms
    (Coulomb friction unless `friction` is "none", viscous friction where it is
    "coulomb-viscous" or "auto")."""
    shape = batch + (n,)
    half = (n + 1) // 2
    s = np.linspace(0.0, 1.0, half)
    arc = rng.uniform(1.2, 2.5, batch + (1,))
    centre = rng.uniform(-1.0, 1.0, batch + (1,))
    fwd = centre - arc / 2 + arc * (s - np.sin(2 * np.pi * s) / (2 * np.pi))
    q = np.concatenate([fwd, fwd[..., ::-1]], axis=-1)[..., :n]
    # Speed profile 1 - cos: slow at both ends of each pass, two different speeds in between.
    speed = 0.6 * (1 - np.cos(2 * np.pi * s)) * (1 + 0.3 * np.sin(3 * np.pi * s))
    v = np.broadcast_to(np.concatenate([speed, -speed[::-1]])[:n], shape).copy()
    acc = np.broadcast_to(np.gradient(v, axis=-1) * 50.0, shape).copy()

    def coef(lo=0.2, hi=2.0):
        return rng.uniform(lo, hi, batch + (1,)) * rng.choice([-1.0, 1.0], batch + (1,))

    a, b = coef(2.0, 6.0), coef(2.0, 6.0)
    coulomb = 0.0 if friction == "none" else coef()
    viscous = coef() if friction in ("coulomb-viscous", "auto") else 0.0
    torque = coef() + a * np.sin(q) + b * np.cos(q) + coulomb * np.sign(v) + viscous * v
    if inertia:
        torque = torque + coef() * acc
    if signed:
        torque = torque + np.sign(v) * (coef() * np.sin(q) + coef() * np.cos(q))
    for k in harmonics:
        torque = torque + coef(0.05, 0.5) * np.sin(k * q) + coef(0.05, 0.5) * np.cos(k * q)
    torque = torque + rng.normal(0.0, noise, shape)
    return q, torque, v, acc


def assert_matches(fit, ref, torque):
    """The acceptance tolerances: coefficients 1e-10 relative (to the largest coefficient of
    the sweep: a coefficient far smaller than the others, a Coulomb term absorbed by the signed
    load columns, carries the normal equations' rounding of the large ones, and fit_sweep's
    normal equations then lie further from the exact least-squares solution than the streamed
    QR does); residual_rms 1e-10 relative or 1e-7 times the RMS torque, whichever is larger."""
    assert fit.column_names == ref.column_names
    scale = np.max(np.abs(ref.coefficients), axis=-1, keepdims=True)
    assert np.all(np.abs(fit.coefficients - ref.coefficients) <= 1e-10 * scale)
    rms_torque = np.sqrt(np.mean(np.square(torque), axis=-1))
    bound = np.maximum(1e-10 * ref.residual_rms, 1e-7 * rms_torque)
    assert np.all(np.abs(fit.residual_rms - ref.residual_rms) <= bound)
    # Covariances relative to the product of the standard deviations (a correlation of 1e-8).
    scale = np.sqrt(np.abs(np.diagonal(ref.covariance, 0, -2, -1)))
    scale = scale[..., :, None] * scale[..., None, :]
    assert np.all(np.abs(fit.covariance - ref.covariance) <= 1e-8 * scale)
    np.testing.assert_array_equal(fit.n_used, ref.n_used)
    np.testing.assert_array_equal(fit.single_speed, ref.single_speed)
    np.testing.assert_allclose(fit.arc, ref.arc, rtol=0, atol=0)
    np.testing.assert_allclose(fit.load_coefficient, ref.load_coefficient, rtol=1e-9, atol=0)
    assert fit.fingerprint == ref.fingerprint
    assert fit.method == ref.method == "least-squares"


def add_chunk(acc, q, torque, v, acceleration=None):
    """``acc.add`` of one chunk held as a tuple (q, torque, v[, acceleration])."""
    acc.add(q, velocity=v, acceleration=acceleration, torque=torque)


def feed(acc, arrays, cuts):
    """Feed `arrays` (q, torque, v[, acc]) to `acc` in the chunks between `cuts`."""
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        add_chunk(acc, *(a[..., lo:hi] for a in arrays))


@st.composite
def cases(draw):
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    n = draw(st.integers(60, 400))
    n_cuts = draw(st.integers(0, 12))
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), min_size=n_cuts, max_size=n_cuts))))
    n_parts = draw(st.integers(1, 4))
    # Which accumulator takes each chunk, and the order in which the accumulators merge.
    owners = draw(
        st.lists(st.integers(0, n_parts - 1), min_size=len(cuts) + 1, max_size=len(cuts) + 1)
    )
    order = draw(st.permutations(range(n_parts)))
    options = {
        "friction": draw(st.sampled_from(["auto", "coulomb-viscous", "coulomb", "none"])),
        "harmonics": draw(st.sampled_from([(), (2.5,), (3.0, 5.0)])),
        "torque_sign": draw(st.sampled_from([1, -1])),
        "load_friction": draw(st.sampled_from(["none", "signed"])),
    }
    if draw(st.booleans()):
        options["nan_policy"] = "omit"
    inertia = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    return batch, n, [0, *cuts, n], owners, order, options, inertia, seed


@given(cases())
def test_accumulator_equals_fit_sweep_over_chunkings_merge_orders_and_batches(case):
    batch, n, cuts, owners, order, options, inertia, seed = case
    rng = np.random.default_rng(seed)
    signed = options["load_friction"] == "signed"
    # The torque is the fitted model plus noise: where the model leaves a residual far above the
    # noise, the least-squares solution itself moves by about eps * cond^2 * (residual / signal)
    # under rounding (Golub & Van Loan 2013, section 5.3.8), and any two backward-stable solvers
    # differ by that much; that case has its own test below.
    q, torque, v, acc = sweep_data(
        rng,
        batch,
        n,
        harmonics=options["harmonics"],
        inertia=inertia,
        signed=signed,
        friction=options["friction"],
    )
    if options.get("nan_policy") == "omit":
        # A few dropped samples (NaN in one array), different in each sweep.
        for a in (q, torque, v):
            a[rng.random(a.shape) < 0.01] = np.nan
    arrays = (q, torque, v, acc) if inertia else (q, torque, v)
    parts = [
        SweepAccumulator(min_speed=MIN_SPEED, inertia=inertia, **options)
        for _ in range(max(order) + 1)
    ]
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        add_chunk(parts[owners[i]], *(a[..., lo:hi] for a in arrays))
    merged = parts[order[0]]
    for i in order[1:]:
        merged = merged + parts[i]
    ref = fit_sweep(
        q,
        velocity=v,
        torque=torque,
        min_speed=MIN_SPEED,
        acceleration=acc if inertia else None,
        **options,
    )
    assert merged.ready
    assert merged.n == n
    assert_matches(merged.fit(), ref, np.nan_to_num(torque))


@pytest.mark.parametrize("seed", range(6))
def test_a_model_that_misses_terms_agrees_to_its_rounding_sensitivity(seed):
    """Friction left out of the fitted model (a residual of the torque's own size), a short
    sweep and harmonics: the least-squares solution is sensitive to rounding by about
    eps * cond^2 * |r| / (|X| |beta|) (Golub & Van Loan 2013, section 5.3.8), and the merged
    accumulator agrees with fit_sweep within a small multiple of that, not within a fixed 1e-10."""
    rng = np.random.default_rng(1000 + seed)
    options = {"friction": "none", "harmonics": (3.0, 5.0), "min_speed": MIN_SPEED}
    q, torque, v, _ = sweep_data(rng, (), 60, harmonics=(3.0, 5.0))
    parts = [SweepAccumulator(**options) for _ in range(3)]
    for part, (lo, hi) in zip(parts, [(0, 1), (1, 10), (10, 60)], strict=True):
        part.add(q[lo:hi], velocity=v[lo:hi], torque=torque[lo:hi])
    fit = (parts[2] + parts[0] + parts[1]).fit()
    ref = fit_sweep(q, velocity=v, torque=torque, **options)
    used = np.abs(v) >= MIN_SPEED
    qu = q[used]
    x = np.stack(
        [np.ones_like(qu)] + [f(k * qu) for k in (1.0, 3.0, 5.0) for f in (np.sin, np.cos)], -1
    )
    x = x / np.linalg.norm(x, axis=0)
    cond = np.linalg.cond(x)
    residual = np.sqrt(ref.n_used) * ref.residual_rms
    signal = np.linalg.norm(torque[used])
    sensitivity = np.finfo(float).eps * cond**2 * residual / signal
    assert sensitivity > 1e-13  # the case is one where rounding matters
    scale = np.max(np.abs(ref.coefficients))
    assert np.all(np.abs(fit.coefficients - ref.coefficients) <= 20 * sensitivity * scale)


@pytest.mark.parametrize("chunk", [1, 7, 600, 2000])
def test_chunks_longer_and_shorter_than_the_internal_block_give_the_same_fit(chunk):
    rng = np.random.default_rng(3)
    q, torque, v, _ = sweep_data(rng, (), 1500, noise=0.01)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    feed(acc, (q, torque, v), list(range(0, 1500, chunk)) + [1500])
    assert_matches(acc.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED), torque)


def test_residual_rms_keeps_its_accuracy_under_a_large_offset():
    # sum(tau^2) - beta.X'tau would lose every digit of a 1e-9 residual beside a 1e4 offset; the
    # triangular factor keeps the residual norm as R[p, p].
    rng = np.random.default_rng(5)
    q, torque, v, _ = sweep_data(rng, (), 800, noise=0.0)
    torque = torque + 1e4 + rng.normal(0.0, 1e-9, q.shape)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    feed(acc, (q, torque, v), list(range(0, 800, 13)) + [800])
    used = np.abs(v) >= MIN_SPEED
    x = np.stack(
        [np.ones(used.sum()), np.sin(q[used]), np.cos(q[used]), np.sign(v[used]), v[used]], axis=-1
    )
    resid = torque[used] - x @ np.linalg.lstsq(x, torque[used], rcond=None)[0]
    reference = np.sqrt(np.mean(resid**2))
    assert reference < 2e-9
    assert abs(float(acc.fit().residual_rms) - reference) <= 1e-3 * reference


def test_mixed_batch_holds_viscous_at_zero_where_the_speed_is_single():
    rng = np.random.default_rng(8)
    q, torque, v, _ = sweep_data(rng, (3,), 300)
    v = v.copy()
    v[1] = np.where(v[1] > 0, 0.5, -0.5)  # one speed per direction in sweep 1
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    feed(acc, (q, torque, v), [0, 100, 300])
    fit, ref = acc.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED)
    assert list(fit.single_speed) == [False, True, False]
    assert fit.viscous[1] == 0.0 and np.all(fit.covariance[1, 4] == 0.0)
    assert_matches(fit, ref, torque)
    # Every sweep at one speed: the viscous column is left out, as fit_sweep does.
    v_single = np.where(v > 0, 0.5, -0.5)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    acc.add(q, velocity=v_single, torque=torque)
    assert acc.fit().column_names == ("offset", "sin", "cos", "coulomb")
    assert_matches(
        acc.fit(), fit_sweep(q, velocity=v_single, torque=torque, min_speed=MIN_SPEED), torque
    )


def test_not_ready_is_a_state_and_add_never_raises_for_too_little_data():
    rng = np.random.default_rng(9)
    q, torque, v, _ = sweep_data(rng, (), 200)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    assert not acc.ready and acc.batch_shape is None
    with pytest.raises(InsufficientDataError, match="at least one sample"):
        acc.fit()
    states = []
    for i in range(200):
        acc.add(q[i], velocity=v[i], torque=torque[i])  # one sample at a time: never an exception
        states.append(acc.ready)
    # Not ready during the forward pass (one direction only), ready once both are seen.
    assert states[0] is False and states[-1] is True
    first = states.index(True)
    assert all(states[first:])
    assert np.all(v[:first] > -MIN_SPEED) and v[first] <= -MIN_SPEED
    acc_half = SweepAccumulator(min_speed=MIN_SPEED)
    acc_half.add(q[:50], velocity=v[:50], torque=torque[:50])
    assert "both directions" in acc_half.missing
    with pytest.raises(InsufficientDataError, match="both directions"):
        acc_half.fit()
    assert_matches(acc.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED), torque)


def test_missing_names_each_requirement_like_fit_sweep():
    rng = np.random.default_rng(10)
    q, torque, v, acc_col = sweep_data(rng, (), 200)
    slow = SweepAccumulator(min_speed=5.0)
    slow.add(q, velocity=v, torque=torque)
    assert "min_speed" in slow.missing
    with pytest.raises(InsufficientDataError) as batch_error:
        fit_sweep(q, velocity=v, torque=torque, min_speed=5.0)
    with pytest.raises(InsufficientDataError) as stream_error:
        slow.fit()
    assert str(stream_error.value) == str(batch_error.value)
    short = SweepAccumulator(min_speed=MIN_SPEED, min_arc=3.0)
    short.add(q, velocity=v, torque=torque)
    assert "span at least" in short.missing
    still = SweepAccumulator(min_speed=MIN_SPEED, inertia=True)
    still.add(q, velocity=v, acceleration=np.zeros_like(q), torque=torque)
    assert "non-zero" in still.missing
    few = SweepAccumulator(min_speed=MIN_SPEED, friction="none")
    few.add(q[20:23], velocity=v[20:23], torque=torque[20:23])
    assert "more than" in few.missing


def test_bad_options_are_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="`min_speed`"):
        SweepAccumulator(min_speed=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`min_speed`"):
        SweepAccumulator(min_speed=-1.0)
    for load_friction in ("abs", "auto"):  # values of the shared type a single pass cannot fit
        with pytest.raises(ValueError, match=f"`load_friction`.*'{load_friction}'.*single pass"):
            SweepAccumulator(min_speed=0.1, load_friction=load_friction)
    with pytest.raises(ValueError, match="`friction`"):
        SweepAccumulator(min_speed=0.1, friction="viscous")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`friction`.*'coulomb-viscous-quadratic'"):
        SweepAccumulator(min_speed=0.1, friction="coulomb-viscous-quadratic")
    with pytest.raises(ValueError, match="`torque_sign`"):
        SweepAccumulator(min_speed=0.1, torque_sign=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`harmonics`"):
        SweepAccumulator(min_speed=0.1, harmonics=[1.0])
    with pytest.raises(ValueError, match="`nan_policy`"):
        SweepAccumulator(min_speed=0.1, nan_policy="skip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`inertia`"):
        SweepAccumulator(min_speed=0.1, inertia="yes")  # type: ignore[arg-type]


def test_bad_chunks_are_refused_whole_and_the_accumulator_stays_as_it_was():
    rng = np.random.default_rng(11)
    q, torque, v, _ = sweep_data(rng, (), 300)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    acc.add(q[:150], velocity=v[:150], torque=torque[:150])
    bad = torque[150:].copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"`torque`.*nan_policy=\"omit\""):
        acc.add(q[150:], velocity=v[150:], torque=bad)
    bad[3] = np.inf
    with pytest.raises(ValueError, match="`torque`"):
        acc.add(q[150:], velocity=v[150:], torque=bad)
    with pytest.raises(ValueError, match="`q`.*degrees"):
        acc.add(np.degrees(q[150:]), velocity=v[150:], torque=torque[150:])
    with pytest.raises(ValueError, match="sample"):
        acc.add(q[150:], velocity=v[150:], torque=torque[151:])
    with pytest.raises(ValueError, match="batch shape"):
        acc.add(np.tile(q[150:], (2, 1)), velocity=v[150:], torque=torque[150:])
    with pytest.raises(ValueError, match="`acceleration`"):
        acc.add(q[150:], velocity=v[150:], acceleration=np.ones(150), torque=torque[150:])
    with pytest.raises(ValueError, match="`velocity`"):
        acc.add(q[150:], velocity=["a"] * 150, torque=torque[150:])
    assert acc.n == 150
    acc.add(q[150:], velocity=v[150:], torque=torque[150:])
    assert_matches(acc.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED), torque)


def test_nan_policy_omit_leaves_out_nan_samples_sweep_by_sweep():
    rng = np.random.default_rng(12)
    q, torque, v, _ = sweep_data(rng, (2,), 300)
    torque = torque.copy()
    torque[0, [5, 77, 200]] = np.nan
    q = q.copy()
    q[1, 120] = np.nan
    acc = SweepAccumulator(min_speed=MIN_SPEED, nan_policy="omit")
    feed(acc, (q, torque, v), [0, 6, 100, 121, 300])
    ref = fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED, nan_policy="omit")
    assert_matches(acc.fit(), ref, np.nan_to_num(torque))
    inf = torque.copy()
    inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="`torque`"):
        SweepAccumulator(min_speed=MIN_SPEED, nan_policy="omit").add(q, velocity=v, torque=inf)


def test_merge_requires_the_same_options_and_batch_shape_and_leaves_operands_intact():
    rng = np.random.default_rng(13)
    q, torque, v, _ = sweep_data(rng, (2,), 300)
    a = SweepAccumulator(min_speed=MIN_SPEED)
    b = SweepAccumulator(min_speed=MIN_SPEED)
    for lo, part in ((0, a), (75, b), (150, a), (225, b)):
        part.add(q[:, lo : lo + 75], velocity=v[:, lo : lo + 75], torque=torque[:, lo : lo + 75])
    before_a, before_b = a.fit(), b.copy()
    b.fit()
    merged = a + b
    assert merged.n == 300 and a.n == 150 and b.n == 150
    assert a.fit() == before_a and before_b.fit() == b.fit()
    assert_matches(
        merged.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED), torque
    )
    assert_matches(
        (b + a).fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED), torque
    )
    empty = SweepAccumulator(min_speed=MIN_SPEED)
    assert (empty + a).fit() == a.fit()
    with pytest.raises(ValueError, match="same options"):
        a + SweepAccumulator(min_speed=0.2)
    with pytest.raises(ValueError, match="same options"):
        a + SweepAccumulator(min_speed=MIN_SPEED, torque_sign=-1)
    other = SweepAccumulator(min_speed=MIN_SPEED)
    other.add(q[0], velocity=v[0], torque=torque[0])
    with pytest.raises(ValueError, match="batch shape"):
        a + other
    with pytest.raises(TypeError):
        a + 1  # type: ignore[operator]


def test_batched_fit_indexes_into_its_sweeps_with_their_own_fingerprints():
    rng = np.random.default_rng(14)
    q, torque, v, _ = sweep_data(rng, (3,), 300)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    feed(acc, (q, torque, v), [0, 10, 300])
    fit = acc.fit()
    for i in range(3):
        single = SweepAccumulator(min_speed=MIN_SPEED)
        single.add(q[i], velocity=v[i], torque=torque[i])
        assert (
            fit[i].fingerprint
            == single.fit().fingerprint
            == fit_sweep(q[i], velocity=v[i], torque=torque[i], min_speed=MIN_SPEED).fingerprint
        )
    assert len(fit.fingerprint) == 3
    # A leading axis of one broadcasts over the batch, as in fit_sweep.
    acc_b = SweepAccumulator(min_speed=MIN_SPEED)
    acc_b.add(q, velocity=v[0], torque=torque)
    assert_matches(
        acc_b.fit(), fit_sweep(q, velocity=v[0], torque=torque, min_speed=MIN_SPEED), torque
    )


def test_state_size_does_not_grow_with_the_number_of_samples():
    rng = np.random.default_rng(15)
    q, torque, v, _ = sweep_data(rng, (), 1000)

    def state_bytes(acc):
        return sum(x.nbytes for x in vars(acc).values() if isinstance(x, np.ndarray))

    acc = SweepAccumulator(min_speed=MIN_SPEED)
    sizes = []
    for repeat in range(30):
        acc.add(q, velocity=v, torque=torque + 1e-6 * repeat)
        sizes.append(state_bytes(acc))
    assert len(set(sizes)) == 1
    assert acc.n == 30_000


def test_a_call_holds_no_memory_after_it_returns():
    """What `add`'s docstring states: the state is allocated by the first call; a later call's
    temporaries (of the size of its chunk) are freed when it returns, however large the chunk."""
    import tracemalloc

    rng = np.random.default_rng(17)
    q, torque, v, _ = sweep_data(rng, (), 100_000)
    acc = SweepAccumulator(min_speed=MIN_SPEED)
    acc.add(q[:10], velocity=v[:10], torque=torque[:10])
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        acc.add(q[10:], velocity=v[10:], torque=torque[10:])
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    chunk_bytes = q[10:].nbytes
    assert peak - before >= chunk_bytes // 2  # the call did allocate temporaries of its chunk
    assert held - before < 4096  # and none of them is held afterwards


def test_separate_accumulators_in_threads_merge_to_the_concatenated_fit():
    rng = np.random.default_rng(16)
    q, torque, v, _ = sweep_data(rng, (2,), 1200)
    parts = [SweepAccumulator(min_speed=MIN_SPEED) for _ in range(4)]

    def work(i):
        sl = slice(300 * i, 300 * (i + 1))
        for lo in range(sl.start, sl.stop, 10):
            parts[i].add(
                q[:, lo : lo + 10], velocity=v[:, lo : lo + 10], torque=torque[:, lo : lo + 10]
            )

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    merged = parts[0] + parts[1] + parts[2] + parts[3]
    assert_matches(
        merged.fit(), fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED), torque
    )


def test_fit_at_any_time_equals_fit_sweep_on_the_samples_so_far():
    rng = np.random.default_rng(17)
    q, torque, v, _ = sweep_data(rng, (), 600)
    acc = SweepAccumulator(min_speed=MIN_SPEED, friction="coulomb")
    for stop in range(100, 601, 100):
        acc.add(
            q[stop - 100 : stop], velocity=v[stop - 100 : stop], torque=torque[stop - 100 : stop]
        )
        if acc.ready:
            ref = fit_sweep(
                q[:stop],
                velocity=v[:stop],
                torque=torque[:stop],
                min_speed=MIN_SPEED,
                friction="coulomb",
            )
            assert_matches(acc.fit(), ref, torque[:stop])
    assert acc.ready


# --------------------------------------------------------------------------------------------
# Magnitudes: torque, speed and acceleration anywhere in the float range


def fit_and_warnings(call):
    """The fit `call` returns and the warnings it issues, as (category, text after the name of
    the solver, file the warning points at)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = call()
    return fit, [(w.category, str(w.message).split(": ", 1)[1], w.filename) for w in caught]


def assert_same_values(a, b, name):
    """Float arrays: infinities at the same places with the same signs, no NaN, finite entries
    within 1e-9 relative or 1e-10 of the field's largest finite entry."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, name
    assert not np.isnan(a).any() and not np.isnan(b).any(), name
    np.testing.assert_array_equal(np.isposinf(a), np.isposinf(b), err_msg=name)
    np.testing.assert_array_equal(np.isneginf(a), np.isneginf(b), err_msg=name)
    finite = np.isfinite(b)
    top = np.max(np.abs(b[finite]), initial=0.0)
    gap = np.abs(a[finite] - b[finite])
    assert np.all(gap <= 1e-9 * np.abs(b[finite]) + 1e-10 * top), name


# The diagnostic of the residuals as a series: the accumulators merged in these tests took
# their chunks out of order, so their residuals' neighbours differ from fit_sweep's at the joins
# (tests/test_sweep_diagnostic.py checks it on samples fed in order and across a merge).
SERIES_FIELDS = ("residual_lag1", "effective_samples")


def assert_same_fit(fit, ref):
    """Every field of the two fits (and the standard deviations derived from the covariance)
    but the series diagnostic."""
    for field in dataclasses.fields(ref):
        if field.name in SERIES_FIELDS:
            continue
        a, b = getattr(fit, field.name), getattr(ref, field.name)
        if np.asarray(b).dtype.kind == "f":
            assert_same_values(a, b, field.name)
        elif isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=field.name)
        else:
            assert a == b, field.name
    for name in ("amplitude_std", "phase_std", "inertia_std"):
        assert_same_values(getattr(fit, name), getattr(ref, name), name)
    assert_same_values(fit.zeros().std, ref.zeros().std, "zeros().std")


EXTREME_OPTIONS = {
    "friction": "auto",
    "load_friction": "signed",
    "harmonics": (3.0,),
    "min_speed": MIN_SPEED,
}


def streamed_and_batch(q, torque, v, acc, options, cuts=(0, 37, 300, 301, 555, 700)):
    """The accumulator's fit (chunks between `cuts`, fed to two accumulators that are merged)
    and fit_sweep's on the same samples, each with its warnings."""
    parts = [SweepAccumulator(inertia=True, **options) for _ in range(2)]
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
        parts[i % 2].add(
            q[..., lo:hi],
            velocity=v[..., lo:hi],
            acceleration=acc[..., lo:hi],
            torque=torque[..., lo:hi],
        )
    merged = parts[1] + parts[0]
    fit = fit_and_warnings(merged.fit)
    ref = fit_and_warnings(
        lambda: fit_sweep(q, velocity=v, torque=torque, acceleration=acc, **options)
    )
    return fit, ref


@pytest.mark.parametrize("batch", [(), (2,)])
@pytest.mark.parametrize(
    "scale",
    [1.0, 1e-300, 1e-200, 1e200, 1e300]
    + [pytest.param(2.0**k, id=f"2^{k}") for k in (-1000, -700, 700, 1000)],
)
def test_the_fit_at_any_torque_scale_is_fit_sweeps_in_every_field_and_warning(batch, scale):
    """A sum of squares of torques of 1e±200 leaves the float range: the accumulator keeps its
    torque column in units of a power of two, as fit_sweep does, and undoes them the same way:
    the same coefficients and residual RMS, the same variances (infinite where they leave the
    float range, never zero) and the same GravdirWarning pointing at the caller."""
    rng = np.random.default_rng(40)
    q, torque, v, acc = sweep_data(rng, batch, 700, inertia=True, signed=True, harmonics=(3.0,))
    (fit, caught), (ref, ref_caught) = streamed_and_batch(
        q, torque * scale, v, acc, EXTREME_OPTIONS
    )
    assert_same_fit(fit, ref)
    assert caught == ref_caught
    assert all(filename == __file__ for *_, filename in caught)
    if scale == 1.0:
        assert caught == []
    else:
        # The variances (noise 1e-3 times the scale, squared) lie outside the float range:
        # infinite, with one warning; the coefficients and the residual RMS are the unscaled
        # fit's, scaled.
        assert np.all(np.isinf(fit.amplitude_std)) and len(caught) == 1
        (plain, _), _ = streamed_and_batch(q, torque, v, acc, EXTREME_OPTIONS)
        np.testing.assert_allclose(fit.coefficients, plain.coefficients * scale, rtol=1e-9)
        np.testing.assert_allclose(fit.residual_rms, plain.residual_rms * scale, rtol=1e-9)


@pytest.mark.parametrize("which", ["velocity", "acceleration"])
@pytest.mark.parametrize(
    "scale", [1e-200, 1e200] + [pytest.param(2.0**k, id=f"2^{k}") for k in (-1000, 1000)]
)
def test_speeds_and_accelerations_of_any_magnitude_fit_as_fit_sweep_does(which, scale):
    """The viscous and inertia columns and the velocity moments of the single-speed test live in
    units of a power of two too (at 1e-200 the moments underflowed and every sweep looked like a
    single speed)."""
    rng = np.random.default_rng(41)
    q, torque, v, acc = sweep_data(rng, (2,), 700, inertia=True, signed=True, harmonics=(3.0,))
    options = dict(EXTREME_OPTIONS)
    if which == "velocity":
        v = v * scale
        options["min_speed"] = MIN_SPEED * scale
    else:
        acc = acc * scale
    (fit, caught), (ref, ref_caught) = streamed_and_batch(q, torque, v, acc, options)
    assert_same_fit(fit, ref)
    assert caught == ref_caught
    assert not np.any(fit.single_speed)
    assert "viscous" in fit.column_names and "inertia" in fit.column_names


def test_units_that_grow_between_blocks_and_differ_between_merged_parts_are_exact():
    """Samples in ascending order of |torque| at 2^900: each block of 512 raises the torque's
    unit, and the two merged parts have different units; the factor and the moments are
    rescaled by powers of two, so the fit stays fit_sweep's."""
    rng = np.random.default_rng(42)
    q, torque, v, acc = sweep_data(rng, (), 1500, inertia=True, signed=True, harmonics=(3.0,))
    order = np.argsort(np.abs(torque))
    q, v, acc = q[order], v[order], acc[order]
    torque = torque[order] * 2.0**900
    low = SweepAccumulator(inertia=True, **EXTREME_OPTIONS)
    high = SweepAccumulator(inertia=True, **EXTREME_OPTIONS)
    for lo in range(0, 1500, 100):
        part = low if lo < 700 else high
        part.add(
            q[lo : lo + 100],
            velocity=v[lo : lo + 100],
            acceleration=acc[lo : lo + 100],
            torque=torque[lo : lo + 100],
        )
    ref = fit_and_warnings(
        lambda: fit_sweep(q, velocity=v, torque=torque, acceleration=acc, **EXTREME_OPTIONS)
    )
    for merged in (low + high, high + low):
        fit = fit_and_warnings(merged.fit)
        assert_same_fit(fit[0], ref[0])
        assert fit[1] == ref[1]


# --------------------------------------------------------------------------------------------
# Merges that would count samples twice


def test_merging_an_accumulator_with_itself_or_its_copy_is_refused():
    """``a + a`` would count every sample twice (standard deviations x 0.705): refused with an
    error naming both operands, as are a copy and a pickled copy."""
    rng = np.random.default_rng(43)
    q, torque, v, _ = sweep_data(rng, (), 400)
    a = SweepAccumulator(min_speed=MIN_SPEED)
    a.add(q, velocity=v, torque=torque)
    before = a.fit()
    named = r"share no samples.*`a` = SweepAccumulator\(n=400.*`b` = SweepAccumulator\(n=400"
    with pytest.raises(ValueError, match=named):
        a + a
    with pytest.raises(ValueError, match="same accumulator"):
        a + a
    for twin in (a.copy(), pickle.loads(pickle.dumps(a))):
        with pytest.raises(ValueError, match="common source"):
            a + twin
        with pytest.raises(ValueError, match="common source"):
            twin + a
    assert a.fit() == before and a.n == 400


def test_equal_torque_multisets_of_different_samples_merge():
    """Two chunks of a dead channel (all-zero torque) or a quantised one hold equal torque
    multisets of different samples: equal fingerprints, yet nothing shared, so they merge and
    the merge equals one fit of all the samples."""
    rng = np.random.default_rng(46)
    q, torque, v, _ = sweep_data(rng, (), 400)
    for values in (np.zeros(200), np.round(torque[0::2])):
        a = SweepAccumulator(min_speed=MIN_SPEED)
        a.add(q[0::2], velocity=v[0::2], torque=values)
        b = SweepAccumulator(min_speed=MIN_SPEED)
        b.add(q[1::2], velocity=v[1::2], torque=values)
        assert a.fit().fingerprint == b.fit().fingerprint
        merged = (a + b).fit()
        whole = SweepAccumulator(min_speed=MIN_SPEED)
        whole.add(
            np.concatenate([q[0::2], q[1::2]]),
            velocity=np.concatenate([v[0::2], v[1::2]]),
            torque=np.tile(values, 2),
        )
        assert (a + b).n == 400 and merged.n_used == whole.fit().n_used > 0
        np.testing.assert_allclose(merged.amplitude, whole.fit().amplitude, rtol=1e-9, atol=1e-12)


def test_merging_accumulators_that_share_a_sample_block_is_refused():
    rng = np.random.default_rng(44)
    q, torque, v, _ = sweep_data(rng, (2,), 600)
    blocks = [tuple(x[:, lo : lo + 200] for x in (q, torque, v)) for lo in (0, 200, 400)]
    # A copy taken after the first block, then each fed a block of its own.
    a = SweepAccumulator(min_speed=MIN_SPEED)
    add_chunk(a, *blocks[0])
    b = a.copy()
    add_chunk(a, *blocks[1])
    add_chunk(b, *blocks[2])
    with pytest.raises(ValueError, match="common source"):
        a + b
    # A part merged into a total, merged again.
    c = SweepAccumulator(min_speed=MIN_SPEED)
    add_chunk(c, *blocks[2])
    d = SweepAccumulator(min_speed=MIN_SPEED)
    add_chunk(d, *blocks[0])
    add_chunk(d, *blocks[1])
    total = d + c
    with pytest.raises(ValueError, match="common source"):
        total + c
    c.add(
        q[:, :5], velocity=v[:, :5], torque=torque[:, :5] + 1.0
    )  # fed more after the merge: still shared
    with pytest.raises(ValueError, match="common source"):
        c + total


def test_disjoint_merges_equal_fit_sweep_on_the_concatenation():
    rng = np.random.default_rng(45)
    q, torque, v, _ = sweep_data(rng, (2,), 600)
    template = SweepAccumulator(min_speed=MIN_SPEED)
    # Copies of an accumulator that holds no samples yet share none: each takes its own.
    parts = [template.copy() for _ in range(3)]
    for part, lo in zip(parts, (0, 200, 400), strict=True):
        for start in range(lo, lo + 200, 50):
            chunk = slice(start, start + 50)
            part.add(q[:, chunk], velocity=v[:, chunk], torque=torque[:, chunk])
    ref = fit_sweep(q, velocity=v, torque=torque, min_speed=MIN_SPEED)
    for merged in (parts[0] + parts[1] + parts[2], parts[2] + (parts[0] + parts[1])):
        assert_matches(merged.fit(), ref, torque)
    assert_matches((template + parts[0] + parts[1] + parts[2]).fit(), ref, torque)
    # Sweeps that hold no sample yet (all NaN under nan_policy="omit") share nothing either.
    nan_q = q.copy()
    nan_q[0, :100] = np.nan
    thirds = [SweepAccumulator(min_speed=MIN_SPEED, nan_policy="omit") for _ in range(3)]
    for part, (lo, hi) in zip(thirds, [(0, 50), (50, 100), (100, 600)], strict=True):
        part.add(nan_q[:, lo:hi], velocity=v[:, lo:hi], torque=torque[:, lo:hi])
    merged = thirds[2] + (thirds[0] + thirds[1])
    ref = fit_sweep(nan_q, velocity=v, torque=torque, min_speed=MIN_SPEED, nan_policy="omit")
    assert_matches(merged.fit(), ref, torque)


def test_copy_module_copies_do_not_share_state():
    """copy.copy and copy.deepcopy give independent accumulators, as .copy() does."""
    import copy

    rng = np.random.default_rng(47)
    q, torque, v, _ = sweep_data(rng, (), 400)
    for copier in (copy.copy, copy.deepcopy):
        a = SweepAccumulator(min_speed=MIN_SPEED)
        a.add(q[0::2], velocity=v[0::2], torque=torque[0::2])
        twin = copier(a)
        before = twin.fit()
        a.add(q[1::2], velocity=v[1::2], torque=torque[1::2])
        assert twin.n == 200 and a.n == 400
        assert twin.fit() == before
