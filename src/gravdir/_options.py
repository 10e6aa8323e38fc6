"""The option types that several estimators share, so one option has one set of values everywhere.

A function that implements only some of a type's values refuses the others with
``check_option(value, name, <the values it implements>)``: a `ValueError` naming the argument
and listing what that function accepts.
"""

from __future__ import annotations

from typing import Literal

# The friction terms of a torque model: ``"coulomb-viscous"`` fits ``sign(v)`` and ``v``;
# ``"coulomb-viscous-quadratic"`` ``v |v|`` as well (friction not linear in the speed beyond
# its Coulomb step); ``"coulomb"`` ``sign(v)`` only; ``"none"`` neither; ``"auto"`` ``sign(v)`` and
# ``v``, except on a direction that moves at one speed, where the two columns are one and only
# the Coulomb term is fitted. A function refuses the values it does not implement.
Friction = Literal["auto", "coulomb-viscous", "coulomb-viscous-quadratic", "coulomb", "none"]


# Friction that grows with the gravity load: ``"none"``; ``"signed"`` (the ``sign(v) sin q`` and
# ``sign(v) cos q`` columns of a sweep); ``"abs"`` (``sign(v) |tau_g|``); ``"auto"`` (``"abs"``
# fitted and kept where a likelihood-ratio test finds it).
LoadFriction = Literal["none", "signed", "abs", "auto"]
LOAD_FRICTION_OPTIONS: tuple[LoadFriction, ...] = ("none", "signed", "abs", "auto")

# The covariance of an estimate from a time series: ``"white"`` from the curvature of the
# likelihood (residuals independent in time), ``"hac"`` the Bartlett sandwich (residuals
# correlated in time, gravdir._hac).
CovarianceOption = Literal["white", "hac"]
COVARIANCE_OPTIONS: tuple[CovarianceOption, ...] = ("white", "hac")
