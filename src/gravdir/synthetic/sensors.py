"""Joint-torque sensor model with the errors real torque estimates carry.

A :class:`TorqueSensor` turns the true holding torque of one joint into what a controller would
report while the joint moves: a gain error, an offset, friction (Coulomb, viscous and a part that
grows with the gravity load), gear ripple at a high joint-angle order and noise, white or
correlated in time.
:func:`realistic_sensors` draws one sensor per joint with the error magnitudes gravdir takes as
"realistic" (listed in its docstring and in ``docs/synthetic.md``), scaled by each joint's peak
gravity torque (for a synthetic arm, ``arm.peak_gravity_torque()``).

Sign convention: a torque is the torque the actuator applies to the distal link about the joint's
+axis. Holding a load still, it is minus the gravity torque about +axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_same_shape, check_scalar
from gravdir._results import Result

__all__ = ["TorqueSensor", "realistic_sensors"]


def _finite(out: NDArray[np.float64], names: str) -> NDArray[np.float64]:
    """`out` if finite; otherwise an error naming the inputs whose size overflowed it."""
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"Expected {names} small enough for the sensor's reading to stay within the float "
            "range (about 1.8e308), got an overflow."
        )
    return out


@dataclass(frozen=True, eq=False, repr=False)
class TorqueSensor(Result):
    """Error model of one joint's torque measurement.

    Parameters
    ----------
    gain : float, optional
        Multiplicative gain on the actuator torque (holding torque plus friction); positive.
        ``1`` is a perfect scale.
    offset : float, optional
        Constant added to every reading, N·m.
    coulomb : float, optional
        Coulomb friction level :math:`F_c \\ge 0`, N·m.
    viscous : float, optional
        Viscous friction coefficient :math:`F_v \\ge 0`, N·m·s/rad.
    load_coefficient : float, optional
        Load-dependent friction coefficient :math:`\\mu \\ge 0`: the friction level grows by
        :math:`\\mu |\\tau_g|`.
    ripple_amplitude : float, optional
        Amplitude of the gear ripple, N·m, :math:`\\ge 0`.
    ripple_order : float, optional
        Number of ripple cycles per joint revolution (a joint-angle order), positive. A harmonic
        drive of ratio 100 ripples at twice the motor frequency, i.e. order 200 in joint angle.
    ripple_phase : float, optional
        Phase of the ripple, rad.
    noise_std : float, optional
        Standard deviation of the noise added to each reading, N·m, :math:`\\ge 0`.
    noise_correlation_time : float, optional
        Correlation time of that noise, s, :math:`\\ge 0` (default 0: white). Above 0 the noise
        is the stationary first-order process of
        :func:`~gravdir.synthetic.correlated_noise`, two readings :math:`\\Delta t` apart
        correlating as :math:`e^{-|\\Delta t|/\\tau}`, as a real drive's torque residuals do
        (*Real logs*, "The residual diagnostic and its warning"). It needs the sample times:
        the arm's ``sweep`` and ``log`` draw it along their time stamps, and :meth:`measure`
        refuses it.

    Raises
    ------
    ValueError
        If a parameter is not a finite real number (booleans and numeric strings are refused),
        `gain` or `ripple_order` is not positive, or one of the non-negative parameters is
        negative.

    Notes
    -----
    For joint angle :math:`q`, velocity :math:`v` and true holding torque :math:`\\tau_h`
    (the gravity torque is :math:`\\tau_g = -\\tau_h`, so :math:`|\\tau_g| = |\\tau_h|`):

    .. math::

        \\tau_f &= (F_c + \\mu |\\tau_h|)\\,\\operatorname{sgn}(v) + F_v v, \\\\
        \\tau_m &= k\\,(\\tau_h + \\tau_f) + o + a_r \\sin(n_r q + \\varphi_r) + \\varepsilon,
        \\qquad \\varepsilon \\sim \\mathcal N(0, \\sigma^2)

    (:math:`\\varepsilon` white, or correlated over `noise_correlation_time`).

    The gain :math:`k` scales what the actuator really delivers -- holding torque and the
    friction it overcomes -- because a current-based torque estimate mis-scales the whole motor
    torque. Offset, ripple and noise are added after the gain: they belong to the measurement
    chain. With :math:`\\operatorname{sgn}(0) = 0`, samples at rest carry no friction; stiction
    is not modelled. For a joint that accelerates, pass the rigid-body torque (holding torque
    plus inertial torque) as the holding torque: the gain scales it, and the load-dependent
    friction grows with it, as a loaded gear's friction grows with the torque it transmits.

    A frozen model with the result contract: ``==`` compares values, ``to_dict()`` gives plain
    Python types, and it pickles.

    References
    ----------
    Armstrong-Hélouvry, Dupont & Canudas de Wit (1994), Coulomb and viscous friction.
    CN 107423515 B, claims 1 and 4: friction that changes with the gravity load.

    Examples
    --------
    >>> sensor = TorqueSensor(gain=1.1, offset=0.2, coulomb=0.5)
    >>> float(sensor.measure(q=0.3, velocity=0.1, holding_torque=2.0).round(6))
    2.95
    """

    _units = {
        "gain": "", "offset": "N·m", "coulomb": "N·m", "viscous": "N·m·s/rad",
        "load_coefficient": "", "ripple_amplitude": "N·m", "ripple_order": "cycles/rev",
        "ripple_phase": "rad", "noise_std": "N·m", "noise_correlation_time": "s",
    }

    gain: float = 1.0
    offset: float = 0.0
    coulomb: float = 0.0
    viscous: float = 0.0
    load_coefficient: float = 0.0
    ripple_amplitude: float = 0.0
    ripple_order: float = 100.0
    ripple_phase: float = 0.0
    noise_std: float = 0.0
    noise_correlation_time: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "gain", check_positive(self.gain, "gain"))
        for name in ("offset", "ripple_phase"):
            if isinstance(getattr(self, name), bool | np.bool_):
                raise ValueError(f"Expected `{name}` to be a number, got {getattr(self, name)!r}.")
        object.__setattr__(self, "offset", check_scalar(self.offset, "offset"))
        for name in (
            "coulomb", "viscous", "load_coefficient", "ripple_amplitude", "noise_std",
            "noise_correlation_time",
        ):  # fmt: skip
            value = check_positive(getattr(self, name), name, allow_zero=True)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "ripple_order", check_positive(self.ripple_order, "ripple_order"))
        phase = check_scalar(self.ripple_phase, "ripple_phase")
        object.__setattr__(self, "ripple_phase", phase)
        super().__post_init__()

    def friction(self, velocity: ArrayLike, holding_torque: ArrayLike) -> NDArray[np.float64]:
        """Friction torque the actuator overcomes, before the gain.

        Parameters
        ----------
        velocity : array_like, shape (...)
            Joint velocity, rad/s.
        holding_torque : array_like, shape (...)
            True holding torque, N·m; broadcasts against `velocity`.

        Returns
        -------
        ndarray, shape (...)
            :math:`(F_c + \\mu |\\tau_h|)\\operatorname{sgn}(v) + F_v v`, N·m.

        Raises
        ------
        ValueError
            If an argument is not numeric and finite, the shapes do not broadcast, or the
            friction torque overflows the float range.

        Examples
        --------
        >>> TorqueSensor(coulomb=1.0, viscous=2.0).friction([-0.5, 0.0, 0.5], 0.0)
        array([-2.,  0.,  2.])
        """
        v = check_array(velocity, "velocity")
        tau = check_array(holding_torque, "holding_torque")
        check_same_shape(velocity=v, holding_torque=tau)
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            level = self.coulomb + self.load_coefficient * np.abs(tau)
            out: NDArray[np.float64] = level * np.sign(v) + self.viscous * v
        return _finite(out, "`velocity` and `holding_torque`")

    def ripple(self, q: ArrayLike) -> NDArray[np.float64]:
        """Gear ripple :math:`a_r \\sin(n_r q + \\varphi_r)` at joint angle `q`, N·m.

        Parameters
        ----------
        q : array_like, shape (...)
            Joint angle, rad.

        Returns
        -------
        ndarray, shape (...)
            The ripple torque.

        Raises
        ------
        ValueError
            If `q` is not numeric and finite, or ``ripple_order * q`` overflows the float
            range.

        Examples
        --------
        >>> r = TorqueSensor(ripple_amplitude=0.1, ripple_order=4).ripple(np.pi / 8)
        >>> float(r.round(12))
        0.1
        """
        qq = check_array(q, "q")
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            angle = _finite(self.ripple_order * qq + self.ripple_phase, "`q`")
            out: NDArray[np.float64] = self.ripple_amplitude * np.sin(angle)
        return out

    def measure(
        self,
        q: ArrayLike,
        velocity: ArrayLike,
        holding_torque: ArrayLike,
        rng: np.random.Generator | None = None,
    ) -> NDArray[np.float64]:
        """Reading of the sensor while the joint moves.

        Parameters
        ----------
        q : array_like, shape (...)
            Joint angle, rad.
        velocity : array_like, shape (...)
            Joint velocity, rad/s.
        holding_torque : array_like, shape (...)
            True (noise-free, friction-free) holding torque, N·m -- or, for a joint that
            accelerates, the whole rigid-body torque (holding plus inertial).
        rng : numpy.random.Generator, optional
            Source of the noise. Required when ``noise_std > 0``.

        Returns
        -------
        ndarray, shape (...)
            Measured torque, the broadcast shape of the three arrays.

        Raises
        ------
        ValueError
            If an array is not numeric and finite, the shapes do not broadcast, `rng` is
            missing while ``noise_std > 0``, the noise is correlated in time (it needs the
            sample times: record through the arm's ``sweep`` or ``log``), or the reading
            overflows the float range.

        Notes
        -----
        :math:`\\tau_m = k(\\tau_h + \\tau_f) + o + a_r \\sin(n_r q + \\varphi_r) + \\varepsilon`;
        see the class notes.

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> sensor = TorqueSensor(noise_std=0.01)
        >>> sensor.measure(np.zeros(4), np.ones(4), np.ones(4), rng).shape
        (4,)
        """
        qq = check_array(q, "q")
        v = check_array(velocity, "velocity")
        tau = check_array(holding_torque, "holding_torque")
        shape = check_same_shape(q=qq, velocity=v, holding_torque=tau)
        if self.noise_std > 0 and self.noise_correlation_time > 0:
            raise ValueError(
                "Expected a sensor with white noise for `measure`, got `noise_correlation_time` "
                f"= {self.noise_correlation_time:g} s: correlated noise needs the sample times. "
                "Record through the arm's `sweep` or `log`, or add "
                "gravdir.synthetic.correlated_noise to the readings of a noise-free sensor."
            )
        if self.noise_std > 0 and rng is None:
            raise ValueError(
                "Expected `rng` (a numpy.random.Generator) because `noise_std` > 0, got None."
            )
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise ValueError(
                f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
            )
        friction, ripple = self.friction(v, tau), self.ripple(qq)
        with np.errstate(under="ignore", over="ignore", invalid="ignore"):
            out = self.gain * (tau + friction) + self.offset + ripple
            out = np.broadcast_to(out, shape).astype(np.float64, copy=True)
            if self.noise_std > 0 and rng is not None:
                out += self.noise_std * rng.standard_normal(shape)
        return _finite(out, "`holding_torque` and `velocity`")


def realistic_sensors(
    rng: np.random.Generator,
    peak: ArrayLike,
    *,
    min_peak_fraction: float = 0.01,
) -> tuple[TorqueSensor, ...]:
    """One torque sensor per joint with realistic errors.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the random draws.
    peak : array_like, shape (n,)
        Peak gravity torque :math:`P_j` of each joint, N·m, non-negative and positive for at
        least one joint: the scale of that joint's errors. For a synthetic arm pass
        ``arm.peak_gravity_torque()``.
    min_peak_fraction : float, optional
        Each joint's peak is raised to at least this fraction of the largest peak, in [0, 1]
        (default 1%), so a joint without gravity load (a wrist whose distal mass lies on its
        axis) still gets friction and noise.

    Returns
    -------
    tuple of TorqueSensor, length n
        Sensor ``j`` belongs to joint ``j`` (0-based); reuse the tuple for every sweep of an arm
        so that each joint keeps its gain, offset and friction.

    Raises
    ------
    ValueError
        If `rng` is not a Generator, `peak` is not 1-D, numeric, finite and non-negative with
        a positive entry, or `min_peak_fraction` is not in [0, 1].

    Notes
    -----
    With :math:`P_j` the (raised) peak gravity torque of joint :math:`j`, the draws are
    independent and uniform:

    - gain :math:`k \\in [0.85, 1.15]`;
    - offset :math:`o \\in [-0.03, 0.03]\\,P_j`;
    - Coulomb friction :math:`F_c \\in [0.02, 0.10]\\,P_j`;
    - viscous friction :math:`F_v \\in [0.01, 0.05]\\,P_j` per rad/s;
    - load coefficient :math:`\\mu \\in [0, 0.05]`;
    - gear ripple of amplitude :math:`0.005\\,P_j`, order :math:`2N` with gear ratio
      :math:`N \\in \\{50, \\dots, 160\\}`, phase in :math:`[-\\pi, \\pi)`;
    - white noise :math:`\\sigma = 0.005\\,P_j`.

    These are the magnitudes gravdir calls "realistic sensor errors" throughout
    (``docs/synthetic.md``); the viscous range is gravdir's own choice, which makes viscous
    friction at 1 rad/s comparable to the Coulomb level.

    References
    ----------
    US 11,446,825 B2: the gain, offset and friction errors of a torque measurement that the
    gravity method must tolerate. CN 107423515 B, claims 1 and 4: friction that changes with
    the gravity load.

    Examples
    --------
    >>> sensors = realistic_sensors(np.random.default_rng(1), [40.0, 60.0, 0.0])
    >>> len(sensors), all(0.85 <= s.gain <= 1.15 for s in sensors)
    (3, True)
    >>> float(sensors[2].noise_std)  # raised to 1% of the largest peak
    0.003
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"Expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}."
        )
    p = check_array(peak, "peak")
    if p.ndim != 1 or p.size < 1:
        raise ValueError(f"Expected `peak` to have shape (n,) with n >= 1, got {p.shape}.")
    if np.any(p < 0) or not np.any(p > 0):
        raise ValueError(
            "Expected `peak` to be non-negative and positive for some joint, "
            f"got {np.round(p, 6).tolist()}."
        )
    fraction = check_positive(min_peak_fraction, "min_peak_fraction", allow_zero=True)
    if fraction > 1:
        raise ValueError(f"Expected `min_peak_fraction` in [0, 1], got {min_peak_fraction!r}.")
    # A joint whose distal mass lies on its axis has no gravity load but still has friction
    # and noise: give it a fraction of the largest joint's peak.
    with np.errstate(under="ignore"):  # tiny peaks or fractions round to zero
        p = np.maximum(p, fraction * np.max(p))
    sensors = []
    for pj in p:
        with np.errstate(under="ignore"):
            sensors.append(
                TorqueSensor(
                    gain=float(rng.uniform(0.85, 1.15)),
                    offset=float(rng.uniform(-0.03, 0.03) * pj),
                    coulomb=float(rng.uniform(0.02, 0.10) * pj),
                    viscous=float(rng.uniform(0.01, 0.05) * pj),
                    load_coefficient=float(rng.uniform(0.0, 0.05)),
                    ripple_amplitude=float(0.005 * pj),
                    ripple_order=float(2 * rng.integers(50, 161)),
                    ripple_phase=float(rng.uniform(-np.pi, np.pi)),
                    noise_std=float(0.005 * pj),
                )
            )
    return tuple(sensors)
