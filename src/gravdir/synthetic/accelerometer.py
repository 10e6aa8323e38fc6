"""A 3-axis accelerometer on a link of a synthetic arm, with realistic errors.

The sensor reads the specific force in its own axes: at rest, :math:`+g` along `up`. Its errors
are a scale factor per axis, non-orthogonal sensing axes, a mounting rotation on the link, a
bias, white noise of a given density and a sinusoidal vibration; the readings are averaged over
a time per pose. The link's orientation is computed here from the arm's Denavit-Hartenberg
table by explicit rotation products, independently of :mod:`gravdir.kinematics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_positive, check_rotation_matrix
from gravdir._constants import STANDARD_GRAVITY
from gravdir._results import Result
from gravdir.synthetic._arm import SyntheticArm

__all__ = [
    "MICRO_G",
    "AccelerometerReadings",
    "AccelerometerSensor",
    "accelerometer_readings",
    "realistic_accelerometer",
]

#: One micro-g in m/s² (standard gravity).
MICRO_G = 1e-6 * STANDARD_GRAVITY


def _rot_x(a: float) -> NDArray[np.float64]:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(a: NDArray[np.float64]) -> NDArray[np.float64]:
    c, s = np.cos(a), np.sin(a)
    out = np.zeros((*np.shape(a), 3, 3))
    out[..., 0, 0], out[..., 0, 1], out[..., 1, 0], out[..., 1, 1] = c, -s, s, c
    out[..., 2, 2] = 1.0
    return out


def _rotvec(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rodrigues' formula for one rotation vector."""
    angle = float(np.linalg.norm(w))
    if angle == 0.0:
        return np.eye(3)
    k = w / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    out: NDArray[np.float64] = np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * (kx @ kx)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class AccelerometerSensor(Result):
    """A 3-axis accelerometer's errors.

    Attributes
    ----------
    noise_density : float
        One-sided white-noise density of each axis, (m/s²)/√Hz (data sheets quote µg/√Hz:
        multiply by ``MICRO_G``). An average over ``T`` seconds has standard deviation
        ``noise_density / sqrt(2 T)``.
    bias : ndarray, shape (3,)
        Constant offset of each axis, m/s².
    scales : ndarray, shape (3,)
        Scale factor of each axis (1 = exact), positive.
    non_orthogonality : ndarray, shape (3,)
        Angles ``(a_yz, a_xy, a_xz)``, rad, each within ±0.5 rad: the sensing y axis is tilted
        towards z by ``a_yz``, the sensing x axis towards y by ``a_xy`` and towards z by
        ``a_xz`` (the z axis is the reference). The sensing axes are the rows of an upper
        triangular matrix ``S``; the sensor's ``T = diag(scales) S``.
    link_from_sensor : ndarray, shape (3, 3)
        Rotation from the sensor's orthonormal axes to the link frame (the mounting).
    vibration_amplitude : float
        Amplitude of a sinusoidal vibration, m/s², along a random direction with a random phase
        at each pose (default 0).
    vibration_frequency : float
        Its frequency, Hz (default 50).
    """

    _units = {
        "noise_density": "(m/s²)/√Hz", "bias": "m/s²", "scales": "", "non_orthogonality": "rad",
        "link_from_sensor": "", "vibration_amplitude": "m/s²", "vibration_frequency": "Hz",
    }

    noise_density: float
    bias: NDArray[np.float64]
    scales: NDArray[np.float64]
    non_orthogonality: NDArray[np.float64]
    link_from_sensor: NDArray[np.float64]
    vibration_amplitude: float = 0.0
    vibration_frequency: float = 50.0

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "noise_density",
            check_positive(self.noise_density, "noise_density", allow_zero=True),
        )
        for name in ("bias", "scales", "non_orthogonality"):
            arr = np.array(check_array(getattr(self, name), name), dtype=np.float64)
            if arr.shape != (3,):
                raise ValueError(f"Expected `{name}` to have shape (3,), got {arr.shape}.")
            object.__setattr__(self, name, arr)
        if not np.all(self.scales > 0):
            raise ValueError("Expected `scales` to be positive.")
        if np.max(np.abs(self.non_orthogonality)) > 0.5:
            raise ValueError("Expected `non_orthogonality` within ±0.5 rad: degrees?")
        r = check_rotation_matrix(self.link_from_sensor, "link_from_sensor")
        if r.shape != (3, 3):
            raise ValueError(f"Expected `link_from_sensor` to have shape (3, 3), got {r.shape}.")
        object.__setattr__(self, "link_from_sensor", np.array(r))
        object.__setattr__(
            self,
            "vibration_amplitude",
            check_positive(self.vibration_amplitude, "vibration_amplitude", allow_zero=True),
        )
        object.__setattr__(
            self,
            "vibration_frequency",
            check_positive(self.vibration_frequency, "vibration_frequency"),
        )
        super().__post_init__()

    @property
    def sensitivity(self) -> NDArray[np.float64]:
        """``T`` (3, 3): ``diag(scales)`` times the unit sensing axes as rows (upper triangular)."""
        a_yz, a_xy, a_xz = self.non_orthogonality
        s_x = np.array(
            [np.sqrt(1.0 - np.sin(a_xy) ** 2 - np.sin(a_xz) ** 2), np.sin(a_xy), np.sin(a_xz)]
        )
        s_y = np.array([0.0, np.cos(a_yz), np.sin(a_yz)])
        s_z = np.array([0.0, 0.0, 1.0])
        out: NDArray[np.float64] = self.scales[:, None] * np.stack([s_x, s_y, s_z])
        return out

    def __repr__(self) -> str:
        return (
            f"AccelerometerSensor(noise={self.noise_density / MICRO_G:.4g} µg/√Hz, "
            f"bias={np.array2string(self.bias, precision=4)} m/s², "
            f"scales={np.array2string(self.scales, precision=4)})"
        )


def realistic_accelerometer(
    rng: np.random.Generator, *, link_from_sensor: ArrayLike | None = None
) -> AccelerometerSensor:
    """A sensor with the realistic errors of gravdir's benchmarks, drawn from `rng`.

    Noise density 150 µg/√Hz; bias uniform within ±50 mg per axis; scales uniform within
    1 ± 2%; non-orthogonality angles uniform within ±2°; a mounting of `link_from_sensor`
    (default identity) times a misalignment whose rotation-vector components are uniform within
    ±2°; no vibration.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the draws.
    link_from_sensor : array_like, shape (3, 3), optional
        The nominal mounting (default identity).

    Returns
    -------
    AccelerometerSensor

    Examples
    --------
    >>> import numpy as np
    >>> s = realistic_accelerometer(np.random.default_rng(0))
    >>> bool(np.all(np.abs(s.scales - 1) <= 0.02)), round(s.noise_density / MICRO_G, 6)
    (True, 150.0)
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {type(rng)}.")
    nominal = (
        np.eye(3)
        if link_from_sensor is None
        else check_rotation_matrix(link_from_sensor, "link_from_sensor")
    )
    two = np.radians(2.0)
    return AccelerometerSensor(
        noise_density=150.0 * MICRO_G,
        bias=rng.uniform(-1, 1, 3) * 0.05 * STANDARD_GRAVITY,
        scales=1.0 + rng.uniform(-0.02, 0.02, 3),
        non_orthogonality=rng.uniform(-two, two, 3),
        link_from_sensor=nominal @ _rotvec(rng.uniform(-two, two, 3)),
    )


@dataclass(frozen=True, eq=False, repr=False)
class AccelerometerReadings(Result):
    """Time-averaged readings of a synthetic accelerometer (:func:`accelerometer_readings`).

    Attributes
    ----------
    readings : ndarray, shape (m, 3)
        Averaged readings, m/s², sensor axes.
    measured_q : ndarray, shape (m, n)
        The joint positions as the encoders report them (true plus encoder noise), rad.
    q : ndarray, shape (m, n)
        The true joint positions, rad.
    noise_std : float
        Standard deviation of the averaged white noise per axis, m/s².
    up : ndarray, shape (3,)
        The arm's true `up`.
    """

    _units = {
        "readings": "m/s²", "measured_q": "rad", "q": "rad",
        "noise_std": "m/s²", "up": "",
    }

    readings: NDArray[np.float64]
    measured_q: NDArray[np.float64]
    q: NDArray[np.float64]
    noise_std: float
    up: NDArray[np.float64]

    def __repr__(self) -> str:
        return (
            f"AccelerometerReadings(poses={self.readings.shape[0]}, "
            f"noise_std={self.noise_std:.3g} m/s²)"
        )


def link_rotation(
    dh: NDArray[np.float64], q: NDArray[np.float64], link: int
) -> NDArray[np.float64]:
    """Orientation (m, 3, 3) of frame ``link + 1`` of a standard DH table: the product of
    ``R_z(q_i + theta_i) R_x(alpha_i)`` for ``i <= link``."""
    out = np.broadcast_to(np.eye(3), (q.shape[0], 3, 3))
    for i in range(link + 1):
        out = out @ _rot_z(q[:, i] + dh[i, 1]) @ _rot_x(float(dh[i, 3]))
    return out


def accelerometer_readings(
    arm: SyntheticArm,
    q: ArrayLike,
    sensor: AccelerometerSensor,
    rng: np.random.Generator,
    *,
    link: int,
    averaging_time: float = 2.0,
    encoder_std: float = 0.0,
) -> AccelerometerReadings:
    """Static readings of `sensor` on `link` of `arm`, averaged over `averaging_time` per pose.

    Parameters
    ----------
    arm : SyntheticArm
        The arm (its DH table, `up` and `gravity` are used).
    q : array_like, shape (m, n)
        True joint positions of the poses, rad.
    sensor : AccelerometerSensor
        The sensor's errors.
    rng : numpy.random.Generator
        Source of the noise.
    link : int
        The link carrying the sensor, 0-based (link ``i`` is moved by joint ``i``).
    averaging_time : float, optional
        Seconds of static readings averaged per pose (default 2).
    encoder_std : float, optional
        Standard deviation of each joint's encoder, rad (default 0), applied to the
        joint positions returned as measured.

    Returns
    -------
    AccelerometerReadings

    Raises
    ------
    ValueError
        If an argument has the wrong type, shape or value.

    Notes
    -----
    With :math:`R` the link's orientation, the reading is
    :math:`f = T R_m^\\top R^\\top (g\\,\\mathrm{up}) + b + \\bar n + \\bar v`: white noise
    averaged over :math:`T_a` has standard deviation :math:`n_d / \\sqrt{2 T_a}`, and a vibration
    :math:`a \\sin(2\\pi f t + \\phi)` averages to
    :math:`a (\\cos\\phi - \\cos(2\\pi f T_a + \\phi)) / (2\\pi f T_a)`.

    Examples
    --------
    >>> import numpy as np
    >>> from gravdir.synthetic import ur5_arm
    >>> rng = np.random.default_rng(0)
    >>> sensor = realistic_accelerometer(rng)
    >>> data = accelerometer_readings(ur5_arm(), np.zeros((3, 6)), sensor, rng, link=5)
    >>> data.readings.shape, round(data.noise_std / MICRO_G, 3)
    ((3, 3), 75.0)
    """
    if not isinstance(arm, SyntheticArm):
        raise ValueError(f"Expected `arm` to be a SyntheticArm, got {type(arm).__name__}.")
    if not isinstance(sensor, AccelerometerSensor):
        raise ValueError(
            f"Expected `sensor` to be an AccelerometerSensor, got {type(sensor).__name__}."
        )
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"Expected `rng` to be a numpy.random.Generator, got {type(rng)}.")
    dh = np.asarray(arm.dh, dtype=np.float64)
    n = dh.shape[0]
    q = np.array(check_array(q, "q"), dtype=np.float64)
    if q.ndim != 2 or q.shape[1] != n:
        raise ValueError(f"Expected `q` to have shape (m, {n}), got {q.shape}.")
    if isinstance(link, bool) or not isinstance(link, int | np.integer) or not 0 <= link < n:
        raise ValueError(f"Expected `link` to be an integer from 0 to {n - 1}, got {link!r}.")
    t_avg = check_positive(averaging_time, "averaging_time")
    enc = check_positive(encoder_std, "encoder_std", allow_zero=True)
    with np.errstate(under="ignore"):
        return _readings(arm, dh, q, sensor, rng, int(link), t_avg, enc)


def _readings(
    arm: SyntheticArm,
    dh: NDArray[np.float64],
    q: NDArray[np.float64],
    sensor: AccelerometerSensor,
    rng: np.random.Generator,
    link: int,
    t_avg: float,
    enc: float,
) -> AccelerometerReadings:
    m = q.shape[0]
    rot = link_rotation(dh, q, link)
    g_up = float(arm.gravity) * np.asarray(arm.up, dtype=np.float64)
    in_link = np.einsum("mji,j->mi", rot, g_up)  # R^T (g up)
    in_sensor = in_link @ sensor.link_from_sensor  # R_m^T R^T (g up), row form
    clean = in_sensor @ sensor.sensitivity.T + sensor.bias
    noise_std = sensor.noise_density / np.sqrt(2.0 * t_avg)
    noisy = clean + noise_std * rng.standard_normal((m, 3))
    if sensor.vibration_amplitude > 0:
        direction = rng.standard_normal((m, 3))
        direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
        phase = rng.uniform(0.0, 2 * np.pi, m)
        w = 2 * np.pi * sensor.vibration_frequency * t_avg
        if w > 1e-8:
            mean = sensor.vibration_amplitude * (np.cos(phase) - np.cos(w + phase)) / w
        else:  # an average over a vanishing time is the instantaneous value
            mean = sensor.vibration_amplitude * np.sin(phase)
        noisy = noisy + mean[:, None] * direction
    measured = q + enc * rng.standard_normal(q.shape)
    return AccelerometerReadings(
        readings=noisy,
        measured_q=measured,
        q=q,
        noise_std=float(noise_std),
        up=np.asarray(arm.up, dtype=np.float64),
    )
