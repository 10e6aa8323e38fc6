"""The contract every gravdir result follows.

Results are frozen dataclasses that derive from :class:`Result` and are declared with
``@dataclass(frozen=True, eq=False, repr=False)`` (``eq=False`` keeps the value equality below,
``repr=False`` keeps a class's own ``__repr__`` or the one here). A result

- holds read-only arrays: each array field is made a read-only view when the result is built (and
  again when it is unpickled), so neither the caller nor the library can change a result in place;
- compares by value: ``==`` never raises; arrays compare element-wise with NaN equal to NaN, so a
  pickled copy compares equal to the original;
- turns into plain Python types with :meth:`Result.to_dict`, which :func:`json.dumps` accepts;
- says what it is in its ``repr``.

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
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from gravdir.errors import ConvergenceWarning

__all__ = [
    "Fingerprinted",
    "Result",
    "UpResult",
    "cov_from_up_information",
    "data_fingerprint",
    "tangent_basis",
    "up_information_from_cov",
    "up_information_from_tangent",
    "warn_not_converged",
]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
# Information of `up` below this (a standard deviation beyond 1e100 rad) counts as none: its
# inverse would overflow.
_MIN_INFORMATION = 1e-200


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

    def __repr__(self) -> str:
        body = ", ".join(
            f"{f.name}={_format(getattr(self, f.name))}"
            for f in dataclasses.fields(self)  # type: ignore[arg-type]
            if f.repr
        )
        return f"{type(self).__name__}({body})"


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
        digest.update(f"{arr.dtype.str}{arr.shape}".encode())
        digest.update(arr.tobytes())
    return frozenset([digest.hexdigest()[:16]])


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


def tangent_basis(up: ArrayLike) -> NDArray[np.float64]:
    """Orthonormal rows (2, 3) spanning the plane perpendicular to the unit vector `up`.

    The first row is the direction of increasing tilt where `up` is not vertical (the
    Gram–Schmidt complement of the base axis least aligned with `up` otherwise); the second is
    ``up × first``. A stack of unit vectors (..., 3) gives a stack of bases (..., 2, 3).
    """
    u = np.asarray(up, dtype=np.float64)
    if u.ndim > 1:
        return _tangent_bases(u)
    axis = np.zeros(3)
    axis[int(np.argmin(np.abs(u)))] = 1.0
    if abs(u[2]) < 1.0 - 1e-12:
        axis = np.array([0.0, 0.0, -1.0])
    e1 = axis - (axis @ u) * u
    e1 /= np.linalg.norm(e1)
    return np.stack([e1, np.cross(u, e1)])


def _tangent_bases(u: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`tangent_basis` of every unit vector of a stack (..., 3) at once: (..., 2, 3)."""
    axis = np.zeros_like(u)
    np.put_along_axis(axis, np.argmin(np.abs(u), axis=-1)[..., None], 1.0, axis=-1)
    tilted = np.abs(u[..., 2]) < 1.0 - 1e-12
    axis = np.where(tilted[..., None], np.array([0.0, 0.0, -1.0]), axis)
    with np.errstate(under="ignore"):
        e1 = axis - np.sum(axis * u, axis=-1, keepdims=True) * u
        e1 = e1 / np.linalg.norm(e1, axis=-1, keepdims=True)
        e2 = np.cross(u, e1)
    return np.stack([e1, e2], axis=-2)


def up_information_from_tangent(
    up: ArrayLike, basis: ArrayLike, information: ArrayLike
) -> NDArray[np.float64]:
    """The (3, 3) information :math:`B^\\top I B` of a (2, 2) tangent-plane information `I`.

    `basis` (2, 3) has orthonormal rows perpendicular to `up`.
    """
    b = np.asarray(basis, dtype=np.float64)
    info = b.T @ np.asarray(information, dtype=np.float64) @ b
    return 0.5 * (info + info.T)


def up_information_from_cov(up: ArrayLike, cov: ArrayLike) -> NDArray[np.float64]:
    """The information of `up` from a (3, 3) or tangent-plane covariance of it.

    The covariance is projected on the tangent plane of `up` and pseudo-inverted there. A
    direction of infinite (or non-finite) variance carries zero information; a direction of zero
    variance would carry infinite information and is refused by the callers that build results.
    """
    u = np.asarray(up, dtype=np.float64)
    b = tangent_basis(u)
    c = np.asarray(cov, dtype=np.float64)
    c2 = b @ c @ b.T if c.shape == (3, 3) else c
    if not np.all(np.isfinite(c2)):
        # An infinite variance along one direction: keep the other direction only where the
        # finite part is diagonal in the tangent basis; otherwise nothing is known.
        info2 = np.zeros((2, 2))
        for k in range(2):
            if np.isfinite(c2[k, k]) and c2[k, k] > 0 and np.all(np.isfinite(c2[k])):
                other = 1 - k
                if not np.isfinite(c2[other, other]):
                    info2[k, k] = 1.0 / c2[k, k]
        return up_information_from_tangent(u, b, info2)
    c2 = 0.5 * (c2 + c2.T)
    vals, vecs = np.linalg.eigh(c2)
    inv = np.zeros_like(vals)
    pos = vals > 0
    inv[pos] = 1.0 / vals[pos]
    return up_information_from_tangent(u, b, (vecs * inv) @ vecs.T)


def cov_from_up_information(up: ArrayLike, information: ArrayLike) -> NDArray[np.float64]:
    """The (3, 3) covariance of `up` from its (3, 3) information (pseudo-inverse in the plane).

    A tangent direction whose information is zero (at most 1e-12 of the largest, below 1e-200
    1/rad² — a standard deviation beyond 1e100 rad — or exactly zero when all are) gets infinite
    variance: the covariance is infinite along it and finite elsewhere, with exact zeros kept
    where that direction has no component.
    """
    u = np.asarray(up, dtype=np.float64)
    b = tangent_basis(u)
    info2 = b @ np.asarray(information, dtype=np.float64) @ b.T
    vals, vecs = np.linalg.eigh(0.5 * (info2 + info2.T))
    top = float(vals.max())
    cov = np.zeros((3, 3))
    for k in range(2):
        d = vecs[:, k] @ b  # the eigen-direction in base coordinates
        outer = np.outer(d, d)
        if top > 0 and vals[k] > max(1e-12 * top, _MIN_INFORMATION):
            cov += outer / vals[k]
        else:
            cov = np.where(np.abs(outer) > 1e-15, np.inf, cov)
    return cov
