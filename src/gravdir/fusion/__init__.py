"""One gravity direction from several sensors, with a test that they agree.

:func:`fuse_up` combines independent gravity-direction results -- joint-torque sweeps
(:func:`~gravdir.general.estimate_up`), touches on a level surface (:mod:`gravdir.touch`), the
closed-form solvers, a controller setting with its uncertainty -- by adding their Fisher
information in the tangent plane of the fused `up` (Gauss–Newton on the sphere). It returns
:class:`FusedEstimate`: the fused `up` with its information, a chi-square test of the sources'
consistency, each source's distance from the fusion of the others in standard deviations and,
with three or more sources that disagree, the source to blame and the fusion without it.

Results that share data (their data ``fingerprint`` sets intersect) are refused with
:class:`SharedDataError` unless their cross-covariance is given. All estimates must be in one
frame: :func:`~gravdir.controllers.express_up` brings them there. Derivation and figures in
docs/fusion.md.

References
----------
S. M. Kay (1993), *Fundamentals of Statistical Signal Processing: Estimation Theory*, ch. 3 and
6; P.-A. Absil, R. Mahony, R. Sepulchre (2008), *Optimization Algorithms on Matrix Manifolds*,
ch. 4 and 8.
"""

from gravdir.fusion._api import fuse_up
from gravdir.fusion._result import FusedEstimate, SharedDataError

__all__ = ["FusedEstimate", "SharedDataError", "fuse_up"]
