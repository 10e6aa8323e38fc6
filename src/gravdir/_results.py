"""The contract every gravdir result follows.

Results are frozen dataclasses that derive from :class:`Result` and are declared with
``@dataclass(frozen=True, eq=False, repr=False)`` (``eq=False`` keeps the value equality below,
``repr=False`` keeps a class's own ``__repr__`` or the one here). A result

- holds read-only arrays: each array field is made a read-only view when the result is built (and
  again when it is unpickled), so neither the caller nor the library can change a result in place;
- compares by value: ``==`` never raises; arrays compare element-wise with NaN equal to NaN, so a
  pickled copy compares equal to the original;
- turns into plain Python types with :meth:`Result.to_dict`, which :func:`json.dumps` accepts;
- says what it is in its ``repr``;
- shows itself in a notebook as a compact table (``_repr_html_``, ``_repr_markdown_``): each
  field's value with its unit (from the class's ``_units``) and its uncertainty (the field's
  ``_std`` or ``_cov`` companion), then its flags; arrays and batches summarised, not dumped;
- shows each quantity in one unit in both displays, text and table (:func:`display_unit`): a
  field in radians and its uncertainty in degrees, every other unit as declared.

A gravity-direction result derives from :class:`UpResult`: it carries `up` and its Fisher
information `up_information` (3×3, in the tangent plane of `up`), from which `up_cov` and
`up_std_deg` follow, so estimates from different sensors combine by adding information.

Gravity-direction results and sweep fits also carry a data ``fingerprint``: a frozen set of
digests of the sample arrays they were computed from (:func:`data_fingerprint`), or the union of
the fingerprints of the results they consumed. Two results share data exactly when their
fingerprints intersect, which is how a fusion of estimates tells dependent ones from
independent ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import math
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir._sphere import (
    cov_from_up_information,
    informative,
    tangent_basis,
)
from gravdir.errors import ConvergenceWarning

__all__ = [
    "Fingerprinted",
    "Result",
    "UpResult",
    "check_covariance_dof",
    "data_fingerprint",
    "warn_not_converged",
]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(obj: Any) -> tuple[str, ...]:
    """The dataclass field names of `obj`'s class, computed once per class (results are built in
    hot loops, and :func:`dataclasses.fields` costs more than the rest of the freeze)."""
    cls = type(obj)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(obj))
    return names


def _freeze(value: Any) -> Any:
    """A read-only view of an array (the array itself if already read-only); others unchanged."""
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def _equal(a: Any, b: Any) -> bool:
    """Value equality that never raises: arrays element-wise with NaN equal to NaN."""
    if a is b:
        return True
    if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            return False
        try:
            return bool(np.array_equal(x, y, equal_nan=True))
        except TypeError:  # dtypes without NaN (bool, int, str) or of different kinds
            return bool(np.array_equal(x, y))
    if isinstance(a, list | tuple):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, Mapping):
        return (
            isinstance(b, Mapping)
            and a.keys() == b.keys()
            and all(_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _plain(value: Any) -> Any:
    """`value` as nested dicts, lists, str, int, float, bool and None."""
    if isinstance(value, Result):
        return value.to_dict()
    if isinstance(value, np.ndarray | np.generic | complex):
        arr = np.asarray(value)
        if np.iscomplexobj(arr):  # JSON has no complex numbers
            return {"real": arr.real.tolist(), "imag": arr.imag.tolist()}
        return arr.tolist()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, str | bool | int | float):
        return value
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _plain(to_dict())
    return repr(value)


def display_unit(unit: str) -> tuple[str, float]:
    """The unit a field of unit `unit` is shown in, and the factor that converts it.

    One rule for every display of a result (its ``repr`` and its notebook table): an angle
    (``"rad"``) is shown in degrees, every other unit as declared.

    Examples
    --------
    >>> display_unit("rad"), display_unit("N·m")
    (('deg', 57.29577951308232), ('N·m', 1.0))
    """
    if unit == "rad":
        return "deg", 180.0 / math.pi
    return unit, 1.0


def _scaled(value: Any, factor: float) -> Any:
    """A float or float array times `factor`; any other value (an int, a string, a result)
    unchanged."""
    if factor == 1.0 or isinstance(value, bool | np.bool_):
        return value
    if isinstance(value, np.ndarray | np.floating | float):
        arr = np.asarray(value)
        if arr.dtype.kind == "f":
            out = arr * factor
            return out if isinstance(value, np.ndarray) else float(out)
    return value


def _format(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return f"{value.item():.6g}" if value.dtype.kind == "f" else repr(value.item())
        if value.size > 12:
            return f"<array shape {value.shape}>"
        return np.array2string(value, precision=6, separator=", ")
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value)


class Result:
    """Base of every gravdir result: read-only arrays, value equality, ``to_dict``, pickling.

    Subclasses are ``@dataclass(frozen=True, eq=False, repr=False)``. A subclass with its own
    ``__post_init__`` calls ``super().__post_init__()`` after it has set its fields.
    """

    __hash__ = None  # type: ignore[assignment]  # value equality over arrays: unhashable

    #: Unit of each field (and of any property shown in the notebook table), by name: ``"rad"``,
    #: ``"N·m"``, ``"rad/s"``, ``""`` for a dimensionless number. A class declares the entries
    #: of its own fields; those of its bases are inherited (merged along the MRO).
    _units: ClassVar[Mapping[str, str]] = {}

    def __post_init__(self) -> None:
        for name in _field_names(self):
            value = getattr(self, name)
            frozen = _freeze(value)
            if frozen is not value:
                object.__setattr__(self, name, frozen)

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, _freeze(value))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(_equal(getattr(self, n), getattr(other, n)) for n in _field_names(self))

    def to_dict(self) -> dict[str, Any]:
        """The result's fields as plain Python types (dict, list, str, int, float, bool, None).

        Arrays become nested lists (complex ones ``{"real": [...], "imag": [...]}``), nested
        results dicts; :func:`json.dumps` accepts the output
        (non-finite floats are written as ``NaN`` / ``Infinity``, as ``json`` does by default).
        """
        return {n: _plain(getattr(self, n)) for n in _field_names(self)}

    def _repr_html_(self) -> str:
        """The result as an HTML table for Jupyter: field, value, unit, uncertainty; flags."""
        return _render_html(self)

    def _repr_markdown_(self) -> str:
        """The result as a Markdown table: field, value, unit, uncertainty; flags.

        Examples
        --------
        >>> from gravdir.frames import tilt_azimuth_from_up
        >>> print(tilt_azimuth_from_up([0.0, 0.6, 0.8])._repr_markdown_())
        **TiltAzimuth**
        <BLANKLINE>
        | field | value | unit | uncertainty (1σ) |
        |---|---|---|---|
        | `tilt` | 36.8699 | deg |  |
        | `azimuth` | 90 | deg |  |
        <BLANKLINE>
        flags: `azimuth_defined` = True
        <BLANKLINE>
        """
        return _render_markdown(self)

    def __repr__(self) -> str:
        units = result_units(type(self))
        parts = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if not f.repr:
                continue
            value = getattr(self, f.name)
            unit, factor = display_unit(units.get(f.name, ""))
            shown = _scaled(value, factor)
            if shown is value:  # not converted (not a float): written in its declared unit
                unit = units.get(f.name, "")
            text = _format(shown)
            numeric = isinstance(value, np.ndarray | np.number | float | int) and not isinstance(
                value, bool | np.bool_
            )
            if unit and numeric:
                text += "°" if unit == "deg" else f" {unit}"
            parts.append(f"{f.name}={text}")
        return f"{type(self).__name__}({', '.join(parts)})"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Fingerprinted(Result):
    """A result that knows which data it came from: the keyword-only field `fingerprint`.

    `fingerprint` is a frozen set of digests (:func:`data_fingerprint`) of the sample arrays the
    result was computed from, or the union of the fingerprints of the results it consumed; empty
    when unknown (a result built by hand). It comes last in the constructor, as a keyword, so the
    positional fields of every subclass are unchanged, and it is left out of the ``repr``.
    """

    fingerprint: frozenset[str] = dataclasses.field(
        default=frozenset(), kw_only=True, repr=False
    )

    def __post_init__(self) -> None:
        fingerprint = self.fingerprint
        if not isinstance(fingerprint, frozenset) or not all(
            isinstance(item, str) for item in fingerprint
        ):
            object.__setattr__(self, "fingerprint", frozenset(str(x) for x in fingerprint))
        super().__post_init__()


def data_fingerprint(*arrays: ArrayLike) -> frozenset[str]:
    """A digest of the data a result is computed from, as a one-element frozen set.

    The SHA-256 of every array's dtype, shape and bytes (in C order), in the given order,
    truncated to 16 hexadecimal digits. Equal data give equal fingerprints; a change of any
    sample gives another. Fingerprints of results computed from several sources are unions.

    Examples
    --------
    >>> a = data_fingerprint([1.0, 2.0], [3.0])
    >>> a == data_fingerprint([1.0, 2.0], [3.0]), a == data_fingerprint([1.0, 2.5], [3.0])
    (True, False)
    >>> len(next(iter(a)))
    16
    """
    digest = hashlib.sha256()
    for x in arrays:
        arr = np.ascontiguousarray(x)
        digest.update(_header(arr.dtype, arr.shape))
        digest.update(arr.tobytes())
    return _digest(digest)


def _header(dtype: np.dtype[Any], shape: tuple[int, ...]) -> bytes:
    """What :func:`data_fingerprint` hashes before an array's bytes."""
    return f"{dtype.str}{tuple(int(x) for x in shape)}".encode()


def _digest(digest: Any) -> frozenset[str]:
    return frozenset([digest.hexdigest()[:16]])


class ChunkFingerprint:
    """:func:`data_fingerprint` of one float array of `shape`, fed as consecutive blocks of its
    rows (a log read in chunks)."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self._digest = hashlib.sha256()
        self._digest.update(_header(np.dtype(np.float64), shape))

    def add(self, rows: NDArray[np.float64]) -> None:
        self._digest.update(np.ascontiguousarray(rows, dtype=np.float64).tobytes())

    def result(self) -> frozenset[str]:
        return _digest(self._digest)


class UpResult(Fingerprinted):
    """A gravity-direction result: `up` with its Fisher information.

    Subclasses have the fields ``up`` (..., 3) and ``up_information`` (..., 3, 3); leading axes
    are batch axes.

    `up_information` is symmetric, positive semi-definite, has `up` in its null space (a unit
    vector moves only in its tangent plane) and is in 1/rad². Information from independent
    estimates of the same `up` adds. Where a tangent direction is not determined by the data
    (three touch points and no noise level, for example) its information is zero; `up_cov` is
    then infinite along that direction and `up_std_deg` is infinite, never zero or NaN.
    """

    up: NDArray[np.float64]
    up_information: NDArray[np.float64]

    _units: ClassVar[Mapping[str, str]] = {
        "up": "",
        "up_information": "1/rad²",
        "up_cov": "rad²",
        "up_std_deg": "deg",
    }

    @property
    def up_cov(self) -> NDArray[np.float64]:
        """Covariance of `up`, shape (..., 3, 3), rad²: the pseudo-inverse of `up_information`.

        Rank 2 with `up` in its null space where the direction is determined; infinite along a
        tangent direction that carries no information.
        """
        up = np.asarray(self.up)
        info = np.asarray(self.up_information)
        if up.ndim == 1:
            return cov_from_up_information(up, info)
        out = np.empty((*up.shape[:-1], 3, 3))
        for index in np.ndindex(up.shape[:-1]):
            out[index] = cov_from_up_information(up[index], info[index])
        return out

    @property
    def up_std_deg(self) -> Any:
        """Root-mean-square angular error of `up`, :math:`\\sqrt{\\mathrm{tr}\\,C}`, degrees.

        A float for a single `up`, an array of the batch shape otherwise; infinite where a tangent
        direction carries no information.
        """
        std = np.degrees(np.sqrt(np.trace(self.up_cov, axis1=-2, axis2=-1)))
        return float(std) if np.ndim(std) == 0 else std


def warn_not_converged(solver: str, max_iter: int, stacklevel: int = 3) -> None:
    """Warn with :class:`~gravdir.errors.ConvergenceWarning` that `solver` hit `max_iter`."""
    warnings.warn(
        f"{solver} stopped at `max_iter`={max_iter} iterations before converging; the result "
        "has converged=False. Raise `max_iter` or check that the data determine every parameter.",
        ConvergenceWarning,
        stacklevel=stacklevel,
    )


# --- Notebook display ------------------------------------------------------------------------
# A result renders as a table of rows (field, value, unit, uncertainty) and a line of flags. Only
# small arrays are written out; larger ones are summarised by shape and range, so the display of
# a batch of any size costs a few vectorised reductions.

_SHOWN_ELEMENTS = 9  # arrays with more elements are summarised, not written out
_NOT_DETERMINED = "not determined"
_UNITS_BY_CLASS: dict[type, dict[str, str]] = {}


def result_units(cls: type) -> dict[str, str]:
    """Units of the fields (and shown properties) of a result class, merged along its MRO.

    Examples
    --------
    >>> from gravdir.sweep import SweepFit
    >>> units = result_units(SweepFit)
    >>> units["amplitude"], units["phase"], result_units(UpResult)["up_std_deg"]
    ('N·m', 'rad', 'deg')
    """
    units = _UNITS_BY_CLASS.get(cls)
    if units is None:
        units = {}
        for klass in reversed(cls.__mro__):
            units.update(vars(klass).get("_units", {}))
        _UNITS_BY_CLASS[cls] = units
    return units


def _number(x: Any) -> str:
    """One number: 6 significant digits; NaN and infinities spelt out, never a silent value."""
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, complex | np.complexfloating):
        z = complex(x)
        sign = "-" if z.imag < 0 else "+"
        return f"{_number(z.real)}{sign}{_number(abs(z.imag))}j"
    v = float(x)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v + 0.0:.6g}"  # + 0.0: a negative zero is written 0, not -0


def _nested(arr: NDArray[Any]) -> str:
    if arr.ndim == 0:
        return _number(arr[()])
    return "[" + ", ".join(_nested(a) for a in arr) + "]"


def _array_text(arr: NDArray[Any]) -> str:
    """A small array written out; a large one by shape, range and count of non-finite values."""
    if arr.ndim == 0:
        return _value_text(arr[()])
    if arr.dtype.kind == "b":
        text = f"{int(np.count_nonzero(arr))} of {arr.size} True"
        return text if arr.ndim <= 1 else f"{text}, shape {arr.shape}"
    if arr.dtype.kind not in "fciu":
        return f"array of {arr.dtype}, shape {arr.shape}"
    if arr.size == 0:
        return f"empty, shape {arr.shape}"
    nan = int(np.count_nonzero(np.isnan(arr))) if arr.dtype.kind in "fc" else 0
    note = f" ({nan} NaN: {_NOT_DETERMINED})" if nan else ""
    if arr.size <= _SHOWN_ELEMENTS:
        return _nested(arr) + note
    mag = np.abs(arr) if arr.dtype.kind == "c" else arr
    finite = mag[np.isfinite(mag)]
    what = "|z| in" if arr.dtype.kind == "c" else "in"
    span = (
        f"{what} [{_number(finite.min())}, {_number(finite.max())}]"
        if finite.size
        else "no finite value"
    )
    n_inf = int(np.count_nonzero(np.isinf(mag)))
    inf = f", {n_inf} infinite" if n_inf else ""
    return f"shape {arr.shape}, {span}{inf}{note}"


def _value_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return _array_text(value)
    if isinstance(value, Result):
        shape = _batch_shape(value)
        return f"{type(value).__name__}" + (f", batch of shape {shape}" if shape else "")
    if value is None:
        return "None"
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float | complex | np.generic):
        text = _number(value)
        return f"NaN ({_NOT_DETERMINED})" if text == "NaN" else text
    if isinstance(value, tuple | list):
        if value and all(isinstance(v, Result) for v in value):
            kinds = sorted({type(v).__name__ for v in value})
            return f"{len(value)} × {', '.join(kinds)}"
        if all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in value):
            return _array_text(np.asarray(value, dtype=np.float64)) if value else "()"
        text = ", ".join(str(v) for v in value)
        return text if len(text) <= 80 else f"{len(value)} items: {text[:70]}…"
    if isinstance(value, Mapping):
        return f"{len(value)} entries: {', '.join(str(k) for k in list(value)[:6])}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _uncertainty_text(std: Any, unit: str) -> str:
    arr = np.asarray(std)
    if arr.dtype.kind not in "fiu":
        return ""
    text = _array_text(arr) if arr.ndim else _number(arr[()])
    text = f"± {text}" + (f" {unit}" if unit else "")
    if arr.size and not np.all(np.isfinite(arr)):
        text += f" ({_NOT_DETERMINED} where inf or NaN)" if arr.ndim else f" ({_NOT_DETERMINED})"
    return text


def _batch_shape(result: Result) -> tuple[int, ...]:
    if isinstance(result, UpResult):
        return tuple(np.shape(result.up)[:-1])
    shape = getattr(result, "batch_shape", ())
    return tuple(shape) if isinstance(shape, tuple) else ()


def _attribute(result: Result, name: str) -> Any:
    """An attribute for display, or None where it is absent or cannot be computed here."""
    try:
        return getattr(result, name, None)
    except (ArithmeticError, AttributeError, LookupError, TypeError, ValueError,
            np.linalg.LinAlgError):
        return None


def _companion(result: Result, name: str, units: Mapping[str, str]) -> tuple[Any, str, list[str]]:
    """The standard deviation of field `name`, its unit, and the companions it comes from.

    Looked up in order: a ``<name>_std`` or ``<name>_std_deg`` field or property of the value's
    shape; a ``<name>_cov`` of shape (..., k, k) for a value (..., k), or of the value's shape
    (a variance); the diagonal of ``covariance`` where `name` is one of ``column_names``, or the
    entry of ``parameters_std`` where it is one of ``parameter_names``. The standard deviation
    is None where none is found.
    """
    unit = units.get(name, "")
    shape = np.shape(_attribute(result, name))
    for suffix, default in (("_std", unit), ("_std_deg", "deg")):
        std = _attribute(result, name + suffix)
        if std is not None and np.shape(std) == shape:
            used = [name + suffix] + ([name + "_cov"] if hasattr(result, name + "_cov") else [])
            return std, units.get(name + suffix, default), used
    cov = _attribute(result, name + "_cov")
    if isinstance(cov, np.ndarray) and cov.dtype.kind == "f":
        if len(shape) >= 1 and cov.shape == shape + shape[-1:]:
            std = np.sqrt(np.abs(np.diagonal(cov, axis1=-2, axis2=-1)))
        elif cov.shape == shape:
            std = np.sqrt(np.abs(cov))
        else:
            return None, "", []
        return std, unit, [name + "_cov"]
    columns = _attribute(result, "column_names")
    cov = _attribute(result, "covariance")
    if (
        isinstance(columns, tuple)
        and name in columns
        and isinstance(cov, np.ndarray)
        and cov.shape[-2:] == (len(columns), len(columns))
        and cov.shape[:-2] == shape
    ):
        k = columns.index(name)
        return np.sqrt(np.abs(cov[..., k, k])), unit, []
    names = _attribute(result, "parameter_names")
    stds = _attribute(result, "parameters_std")
    if (
        isinstance(names, tuple)
        and name in names
        and isinstance(stds, np.ndarray)
        and stds.shape[-1:] == (len(names),)
        and stds.shape[:-1] == shape
    ):
        return stds[..., names.index(name)], unit, []
    return None, "", []


def _row(
    name: str, value: Any, units: Mapping[str, str], spread: tuple[Any, str]
) -> tuple[str, str, str, str]:
    """The table row of field `name`: value and uncertainty each in the unit the display rule
    (:func:`display_unit`) gives its declared unit, so an angle and its σ are in degrees."""
    unit, factor = display_unit(units.get(name, ""))
    if isinstance(value, tuple | list) and value and factor != 1.0 and all(
        isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in value
    ):
        value = np.asarray(value, dtype=np.float64)
    std, std_unit = spread
    if std is None:
        uncertainty = ""
    else:
        std_unit, std_factor = display_unit(std_unit)
        uncertainty = _uncertainty_text(_scaled(np.asarray(std), std_factor), std_unit)
    return name, _value_text(_scaled(value, factor)), unit, uncertainty


class UpSpread(NamedTuple):
    """Tilt and azimuth of `up` with their standard deviations, degrees, over the batch shape;
    `total` the RMS angle (``up_std_deg``), `vertical` where the azimuth is undefined (NaN
    there). Non-finite `up` or information: NaN spreads."""

    tilt: NDArray[np.float64]
    tilt_std: NDArray[np.float64]
    azimuth: NDArray[np.float64]
    azimuth_std: NDArray[np.float64]
    total: NDArray[np.float64]
    vertical: NDArray[np.bool_]


def up_spread(result: UpResult) -> UpSpread:
    """The tilt and azimuth of `result` and their spreads, the numbers every display shows.

    The tangent-plane covariance follows from `up_information` as in
    :func:`cov_from_up_information`, vectorised over the batch: the variance along the direction
    of increasing tilt gives the tilt's, the one across it divided by sin² tilt the azimuth's.
    """
    u = np.asarray(result.up, dtype=np.float64)
    m = np.asarray(result.up_information, dtype=np.float64)
    b = tangent_basis(u)
    info2 = b @ m @ np.swapaxes(b, -1, -2)
    info2 = np.where(np.isfinite(info2), info2, 0.0)  # non-finite entries: reported below
    vals, vecs = np.linalg.eigh(0.5 * (info2 + np.swapaxes(info2, -1, -2)))
    known = informative(vals)
    inv = np.where(known, 1.0 / np.where(known, vals, 1.0), np.inf)
    weight = vecs**2  # weight[..., k, j]: share of eigen-direction j along basis row k
    with np.errstate(invalid="ignore"):
        var = np.where(weight > 1e-15, weight * inv[..., None, :], 0.0).sum(axis=-1)
    total = np.degrees(np.sqrt(inv.sum(axis=-1)))
    horizontal = np.hypot(u[..., 0], u[..., 1])
    tilt = np.degrees(np.arctan2(horizontal, u[..., 2]))
    vertical = horizontal <= 1e-12
    azimuth = np.degrees(np.arctan2(u[..., 1], u[..., 0]))
    tilt_std = np.where(vertical, total, np.degrees(np.sqrt(var[..., 0])))
    with np.errstate(divide="ignore", invalid="ignore"):
        azimuth_std = np.degrees(np.sqrt(var[..., 1]) / horizontal)
    bad = ~(np.all(np.isfinite(u), axis=-1) & np.all(np.isfinite(m), axis=(-2, -1)))
    if np.any(bad):  # a non-finite `up` or information: its spread is not known either
        total = np.where(bad, np.nan, total)
        tilt_std = np.where(bad, np.nan, tilt_std)
        azimuth_std = np.where(bad, np.nan, azimuth_std)
    azimuth = np.where(vertical, np.nan, azimuth)
    azimuth_std = np.where(vertical, np.nan, azimuth_std)
    return UpSpread(tilt, tilt_std, azimuth, azimuth_std, total, vertical)


def tilt_azimuth_text(spread: UpSpread) -> str:
    """``tilt=... ° ± ... °, azimuth=... ° ± ... °`` of one result's :func:`up_spread` (the
    numbers of its notebook table): what its text repr and the figures' titles show."""
    if bool(spread.vertical):
        azimuth = "azimuth undefined (up is vertical)"
    else:
        azimuth = f"azimuth={float(spread.azimuth):.4f}° ± {float(spread.azimuth_std):.3g}°"
    return f"tilt={float(spread.tilt):.4f}° ± {float(spread.tilt_std):.3g}°, {azimuth}"


def up_text(result: UpResult) -> str:
    """``up=..., tilt=..., azimuth=..., up_std=...`` of one result, for its text repr."""
    spread = up_spread(result)
    return (
        f"up={np.array2string(np.asarray(result.up), precision=6)}, "
        f"{tilt_azimuth_text(spread)}, up_std={float(spread.total):.3g}°"
    )


def _up_rows(result: UpResult) -> list[tuple[str, str, str, str]]:
    """`up`, tilt and azimuth with their standard deviations in degrees, for any batch shape."""
    u = np.asarray(result.up, dtype=np.float64)
    s = up_spread(result)
    azimuth_text = _array_text(np.asarray(s.azimuth))
    azimuth_spread = _uncertainty_text(s.azimuth_std, "deg")
    if np.any(s.vertical):
        azimuth_text = (
            "undefined (up is vertical)"
            if np.all(s.vertical)
            else _array_text(np.asarray(s.azimuth)) + " (undefined where up is vertical)"
        )
        azimuth_spread = "" if np.all(s.vertical) else _uncertainty_text(s.azimuth_std, "deg")
    return [
        ("up", _array_text(u), "", _uncertainty_text(s.total, "deg (rms angle)")),
        ("tilt", _array_text(np.asarray(s.tilt)), "deg", _uncertainty_text(s.tilt_std, "deg")),
        ("azimuth", azimuth_text, "deg", azimuth_spread),
    ]


def _is_flag(value: Any, batch: tuple[int, ...]) -> bool:
    if isinstance(value, bool | np.bool_):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "b" and value.shape == batch


def _table(result: Result) -> tuple[str, list[tuple[str, str, str, str]], list[tuple[str, str]]]:
    """Title, rows (field, value, unit, uncertainty) and flags (name, value) of a result."""
    cls = type(result)
    units = result_units(cls)
    batch = _batch_shape(result)
    names = [f.name for f in dataclasses.fields(result) if f.repr]  # type: ignore[arg-type]
    rows: list[tuple[str, str, str, str]] = []
    flags: list[tuple[str, str]] = []
    used: set[str] = set()
    if isinstance(result, UpResult):
        rows.extend(_up_rows(result))
        used |= {"up", "up_information", "up_cov", "up_std_deg"}
    shown = names + [n for n in units if n not in names]
    companions: dict[str, tuple[Any, str, list[str]]] = {}
    for name in shown:
        if name not in used and name not in companions:
            companions[name] = _companion(result, name, units)
            used.update(companions[name][2])
    for name in shown:
        if name in used:
            continue
        value = _attribute(result, name)
        if _is_flag(value, batch):
            flags.append((name, _value_text(value)))
            continue
        std, std_unit, _ = companions[name]
        rows.append(_row(name, value, units, (std, std_unit)))
    title = cls.__name__ + (f" — batch of shape {batch}" if batch else "")
    return title, rows, flags


_HEADER = ("field", "value", "unit", "uncertainty (1σ)")


def _render_html(result: Result) -> str:
    title, rows, flags = _table(result)
    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in _HEADER)
    body = "".join(
        f"<tr><td><code>{esc(n)}</code></td><td>{esc(v)}</td><td>{esc(u)}</td>"
        f"<td>{esc(s)}</td></tr>"
        for n, v, u, s in rows
    )
    text = (
        '<div class="gravdir-result"><table><caption style="text-align: left">'
        f"<b>{esc(title)}</b></caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
    if flags:
        items = ", ".join(f"<code>{esc(n)}</code> = {esc(v)}" for n, v in flags)
        text += f"<p>flags: {items}</p>"
    return text + "</div>"


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _render_markdown(result: Result) -> str:
    title, rows, flags = _table(result)
    lines = [
        f"**{_md(title)}**",
        "",
        "| " + " | ".join(_HEADER) + " |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{n}` | {_md(v)} | {_md(u)} | {_md(s)} |" for n, v, u, s in rows]
    if flags:
        lines += ["", "flags: " + ", ".join(f"`{n}` = {_md(v)}" for n, v in flags)]
    return "\n".join(lines) + "\n"


def check_covariance_dof(result: Any, name: str) -> float:
    """The degrees of freedom of the covariance of the result `result` (its `covariance_dof`;
    infinite, an exact covariance, where it has none), checked: positive or infinite. A
    `ValueError` names ``{name}.covariance_dof``."""
    value = getattr(result, "covariance_dof", math.inf)
    try:
        dof = float(value)
    except (TypeError, ValueError):
        dof = math.nan
    if not dof > 0.0:
        raise ValueError(
            f"Expected `{name}.covariance_dof` to be positive (infinite for an exact "
            f"covariance), got {value!r}."
        )
    return dof
