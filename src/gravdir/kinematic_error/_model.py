"""Orders of a harmonic drive, the correction model and the resonant motor speed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._checks import check_array, check_count, check_positive
from gravdir._results import Result
from gravdir._scalars import float_if_scalar
from gravdir.kinematic_error._common import (
    MAX_MOTOR_ANGLE,
    MAX_ORDER,
    _check_coefficients,
    _check_complex,
    _check_motor_angle,
    _check_orders,
    _require_finite,
)

#: Largest number of teeth of a spline accepted by :func:`harmonic_drive_orders`.
MAX_TEETH = 100_000

#: Highest derivative of a correction that :meth:`KinematicErrorModel.derivative` computes.
MAX_DERIVATIVE = 64

#: Types of a single motor angle that :meth:`KinematicErrorModel.correction` computes in plain
#: Python (``bool`` is not among them: it is refused as on the array path).
_SCALAR_TYPES = frozenset({float, int, np.float64})


def _check_multiples(value: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = check_array(value, name)
    if arr.ndim != 1:
        raise ValueError(f"Expected `{name}` to be a 1-D sequence of integers, got {arr.ndim}-D.")
    if np.any(arr < 1) or np.any(arr > MAX_ORDER) or np.any(arr != np.round(arr)):
        raise ValueError(
            f"Expected `{name}` to hold integers from 1 to {MAX_ORDER:g}, got {arr.tolist()}."
        )
    return arr


def harmonic_drive_orders(
    flexspline_teeth: int,
    circular_spline_teeth: int,
    *,
    motor_multiples: ArrayLike = (1, 2, 4),
    flexspline_multiples: ArrayLike = (1, 2),
) -> NDArray[np.float64]:
    """List the orders (cycles per motor revolution) of a harmonic drive's correction basis.

    Parameters
    ----------
    flexspline_teeth : int
        Number of teeth :math:`z_f` of the flexspline.
    circular_spline_teeth : int
        Number of teeth :math:`z_c` of the circular spline; :math:`z_c > z_f`.
    motor_multiples : array_like of int, optional
        Integer orders :math:`k` (motor and wave-generator terms). Default ``(1, 2, 4)``.
    flexspline_multiples : array_like of int, optional
        Multiples :math:`l` of :math:`z_f/z_c` (flexspline terms). Default ``(1, 2)``.

    Returns
    -------
    ndarray, shape (k,)
        Sorted distinct orders: the integers :math:`k` and :math:`l\\,z_f/z_c`.

    Raises
    ------
    ValueError
        If a teeth count is not an integer from 2 to 100,000 (`MAX_TEETH`), if
        :math:`z_c \\le z_f` (not a harmonic drive with a grounded circular spline), if the
        multiples are not integers from 1 to 10,000 (the order cap), if there are none, or if two
        orders coincide.

    See Also
    --------
    KinematicErrorModel : the correction on these orders.

    Notes
    -----
    The correction is a weighted sum of :math:`\\sin, \\cos(k\\theta_m)` and
    :math:`\\sin, \\cos(l\\,\\theta_m z_f/z_c)` (US 2025/0065499 A1, claims 4-5). With 200/202
    teeth the order :math:`2 z_f/z_c` is 1.980, next to 2: a record separates them only over about
    :math:`1/0.0198 \\approx 51` motor revolutions (see :func:`order_spectrum`).

    References
    ----------
    US 2025/0065499 A1, paragraphs 18-19 and claims 4-5.

    Examples
    --------
    >>> harmonic_drive_orders(200, 202).round(4)
    array([0.9901, 1.    , 1.9802, 2.    , 4.    ])
    """
    zf = check_count(flexspline_teeth, "flexspline_teeth", minimum=2, maximum=MAX_TEETH)
    zc = check_count(circular_spline_teeth, "circular_spline_teeth", minimum=2, maximum=MAX_TEETH)
    if zc <= zf:
        raise ValueError(
            "Expected `circular_spline_teeth` to exceed `flexspline_teeth` (a harmonic drive's "
            f"flexspline has fewer teeth), got {zc} and {zf}."
        )
    k = _check_multiples(motor_multiples, "motor_multiples")
    m = _check_multiples(flexspline_multiples, "flexspline_multiples")
    orders = np.concatenate([k, m * zf / zc])
    if orders.size == 0:
        raise ValueError(
            "Expected `motor_multiples` and `flexspline_multiples` to give at least one order, "
            "got none."
        )
    out = np.sort(orders)
    if np.any(np.diff(out) <= 1e-12):
        raise ValueError(
            "Expected distinct orders from `motor_multiples` and `flexspline_multiples`, got a "
            f"repeated order among {out.round(6).tolist()}."
        )
    return out


@dataclass(frozen=True, eq=False, repr=False)
class KinematicErrorModel(Result):
    """A kinematic-error correction: a sum of sinusoids of the motor angle.

    .. math:: u(\\theta) = \\sum_k a_k \\cos(q_k\\theta) + b_k \\sin(q_k\\theta)
              = \\sum_k \\mathrm{Re}(c_k e^{i q_k \\theta}),\\quad c_k = a_k - i b_k

    Parameters
    ----------
    orders : array_like, shape (k,)
        Positive distinct orders :math:`q_k` in cycles per motor revolution.
    coefficients : array_like, shape (k, 2)
        Columns :math:`(a_k, b_k)`: cosine and sine weights in radians of motor angle, each
        within ±π (half a motor revolution). Both arrays are copied.

    Attributes
    ----------
    orders : ndarray, shape (k,)
        Orders :math:`q_k` in cycles per motor revolution.
    coefficients : ndarray, shape (k, 2)
        Columns :math:`(a_k, b_k)`: cosine and sine weights in radians of motor angle.

    Raises
    ------
    ValueError
        If the orders are not distinct and in (0, 1e4] cycles per motor revolution, or
        `coefficients` is not a finite (k, 2) array within ±π rad.

    See Also
    --------
    harmonic_drive_orders : the orders of a harmonic drive.
    BoldDriverTuner, RpropTuner, InfluenceTuner : tune the coefficients from recorded runs.

    Notes
    -----
    The model is the weighted sum of circular functions of integer multiples of the motor angle
    and of its multiples times :math:`z_f/z_c` (US 2025/0065499 A1, claims 4-5). It is added to
    the motor command: a position command is corrected by :math:`u(\\theta)`, a velocity command by
    :math:`\\dot u = u'(\\theta)\\,\\dot\\theta` (claim 2).

    References
    ----------
    US 2025/0065499 A1, paragraphs 15 and 18-19 and claims 2 and 4-5.

    Examples
    --------
    >>> m = KinematicErrorModel([2.0], [[0.01, 0.0]])
    >>> float(m.correction(0.0)), float(m.derivative(0.0))
    (0.01, 0.0)
    """

    _units = {
        "orders": "cycles/motor rev",
        "coefficients": "rad",
    }

    orders: NDArray[np.float64]
    coefficients: NDArray[np.float64]

    def __init__(self, orders: ArrayLike, coefficients: ArrayLike) -> None:
        q = _check_orders(orders)
        c = _check_coefficients(coefficients, q.size, "coefficients")
        object.__setattr__(self, "orders", np.array(q, dtype=np.float64))
        object.__setattr__(self, "coefficients", np.array(c, dtype=np.float64))
        self.__post_init__()
        object.__setattr__(self, "_terms", self._scalar_terms())

    def _scalar_correction(self, theta: float) -> float:
        """:math:`u(\\theta)` of one checked angle, term by term in plain Python."""
        try:
            terms = self._terms  # type: ignore[attr-defined]
        except AttributeError:  # unpickled from a version without the cache
            terms = self._scalar_terms()
            object.__setattr__(self, "_terms", terms)
        total = 0.0
        for q, a, b in terms:
            x = q * theta
            total += a * math.cos(x) + b * math.sin(x)
        return total

    def _scalar_terms(self) -> tuple[tuple[float, float, float], ...]:
        """``(q_k, a_k, b_k)`` as Python floats, for the single-angle path of `correction`."""
        return tuple(
            zip(
                self.orders.tolist(),
                self.coefficients[:, 0].tolist(),
                self.coefficients[:, 1].tolist(),
                strict=True,
            )
        )

    @classmethod
    def zero(cls, orders: ArrayLike) -> KinematicErrorModel:
        """The null correction on `orders`."""
        q = _check_orders(orders)
        return cls(q, np.zeros((q.size, 2)))

    @classmethod
    def from_phasors(cls, orders: ArrayLike, phasors: ArrayLike) -> KinematicErrorModel:
        """Build from complex phasors :math:`c_k = a_k - i b_k`, shape (k,)."""
        q = _check_orders(orders)
        p = _check_complex(phasors, "phasors")
        if p.shape != q.shape:
            raise ValueError(f"Expected `phasors` to have shape {q.shape}, got {p.shape}.")
        coef = np.stack([p.real, -p.imag], axis=-1)
        return cls(q, _check_coefficients(coef, q.size, "phasors"))

    @property
    def phasors(self) -> NDArray[np.complex128]:
        """Complex phasors :math:`c_k = a_k - i b_k`, shape (k,)."""
        return self.coefficients[:, 0] - 1j * self.coefficients[:, 1]

    def correction(self, motor_angle: ArrayLike) -> Any:
        """Correction :math:`u(\\theta)` in radians of motor angle, same shape as `motor_angle`.

        Parameters
        ----------
        motor_angle : array_like
            Motor angle(s) :math:`\\theta` in radians, finite and within ±1e9 rad.

        Returns
        -------
        float or ndarray of float64
            :math:`u(\\theta)`: a Python ``float`` for one angle given as a number (``float``,
            ``int`` or a NumPy scalar), an array of the shape of `motor_angle` otherwise (a 0-d
            array for a 0-d array).

        Raises
        ------
        ValueError
            If `motor_angle` is not numeric, not finite, or beyond ±1e9 rad.

        Notes
        -----
        One angle given as a Python ``float`` or ``int`` or a NumPy ``float64`` -- the call a
        control loop makes each cycle -- is checked with two comparisons and summed in plain
        Python, :math:`\\sum_k a_k \\cos(q_k\\theta) + b_k \\sin(q_k\\theta)`, term by term in
        the order of `orders`, a fraction of the array path's time (``docs/performance.md``), with
        the same value to within a few units in the last place. Anything else
        (arrays, lists, non-finite or out-of-range angles) takes the array path, which raises
        the documented errors.

        Examples
        --------
        >>> m = KinematicErrorModel([1.0, 2.0], [[0.01, 0.0], [0.0, 0.002]])
        >>> u = m.correction(0.5)
        >>> type(u).__name__, bool(abs(u - m.correction([0.5])[0]) < 1e-15)
        ('float', True)
        >>> m.correction([0.0, 0.5]).shape, m.correction(np.array(0.5)).shape
        ((2,), ())
        """
        if type(motor_angle) in _SCALAR_TYPES:
            theta = motor_angle
            # False for NaN and beyond ±1e9 rad (a huge int is compared exactly, not converted):
            # those take the array path, which raises.
            if -MAX_MOTOR_ANGLE <= theta <= MAX_MOTOR_ANGLE:  # type: ignore[operator]
                return self._scalar_correction(float(theta))  # type: ignore[arg-type]
        return self.derivative(motor_angle, 0)

    def derivative(self, motor_angle: ArrayLike, n: int = 1) -> Any:
        """The `n`-th derivative :math:`d^n u / d\\theta^n` (``n = 0`` is the correction itself).

        A velocity command is corrected by :math:`\\dot u = u'(\\theta)\\,\\dot\\theta`, an
        acceleration command by :math:`u''\\dot\\theta^2 + u'\\ddot\\theta`. `motor_angle` must
        lie within ±1e9 rad and `n` from 0 to 64; a derivative too large for float64 raises
        ``ValueError``. As for :meth:`correction`, one angle given as a number gives a Python
        ``float``, an array gives an array of its shape.
        """
        k = check_count(n, "n", minimum=0, maximum=MAX_DERIVATIVE)
        theta = _check_motor_angle(motor_angle)
        with np.errstate(all="ignore"):
            arg = theta[..., None] * self.orders
            # d^n/dθ^n Re(c e^{iqθ}) = Re(c (iq)^n e^{iqθ})
            factor = self.phasors * (1j * self.orders) ** k
            # A sum over the few orders, without BLAS: a matrix-vector product of 1000 angles
            # would be split over BLAS threads, twice as slow on a busy machine.
            terms = np.einsum("...k,k->...", np.exp(1j * arg), factor)
            out = np.asarray(np.real(terms), dtype=np.float64)
        for part in (factor, out):
            _require_finite(
                part, f"Expected `n` = {k} to give a derivative float64 can hold, got overflow."
            )
        return float_if_scalar(motor_angle, out)

    def __repr__(self) -> str:
        amp = np.degrees(np.hypot(self.coefficients[:, 0], self.coefficients[:, 1]))
        terms = ", ".join(f"{q:.4g}: {a:.4g}°" for q, a in zip(self.orders, amp, strict=True))
        return f"KinematicErrorModel(order: amplitude of motor angle = {{{terms}}})"


def motor_speed_for_resonance(resonance_frequency: float, *, order: float = 2.0) -> float:
    """Motor speed (rad/s) that puts the component of `order` on a resonance.

    Parameters
    ----------
    resonance_frequency : float
        Resonance frequency of the arm in Hz (the lowest one is preferred).
    order : float, optional
        Order (cycles per motor revolution) to place on the resonance. Default 2, the second
        harmonic of the motor frequency, which US 2025/0065499 A1 (paragraph 20) prefers.

    Returns
    -------
    float
        :math:`\\omega_m = 2\\pi f_r / q` in rad/s.

    Raises
    ------
    ValueError
        If either argument is not a finite positive number, `order` exceeds 1e4, or the speed
        overflows.

    Notes
    -----
    A vibration excited at a resonance makes the deviation between expected and recorded
    acceleration clearly detectable; the amplification is about the quality factor of the mode.

    References
    ----------
    US 2025/0065499 A1, paragraph 20 and claim 6.

    Examples
    --------
    >>> round(motor_speed_for_resonance(10.0), 4)  # 5 rev/s
    31.4159
    """
    f = check_positive(resonance_frequency, "resonance_frequency")
    q = check_positive(order, "order")
    if q > MAX_ORDER:
        raise ValueError(f"Expected `order` at most {MAX_ORDER:g}, got {q!r}.")
    speed = 2.0 * math.pi * f / q
    _require_finite(
        speed,
        f"Expected `resonance_frequency` / `order` to give a finite speed, got {f!r} / {q!r}.",
    )
    return speed
