"""The spread of covariance estimates over Monte Carlo draws, as degrees of freedom: what the
tests of ``covariance_dof`` (``tests/test_sweep_hac.py``, ``tests/test_motion.py``) compare the
reported figure with."""

from __future__ import annotations

import numpy as np


def wishart_dof(covs: np.ndarray) -> float:
    """The degrees of freedom of the spread of covariance estimates `covs` (m, k, k): those of
    the Wishart estimate whose deviations ``D`` from the mean, whitened by it, have the same
    ``2 E tr(D^2) + E tr(D)^2``, which is ``2 k (k + 2) / nu`` for ``nu`` degrees of freedom
    (docs/real_logs.md, "Degrees of freedom of a covariance")."""
    k = covs.shape[-1]
    root = np.linalg.inv(np.linalg.cholesky(covs.mean(axis=0)))
    dev = root @ covs @ root.T - np.eye(k)
    entries = np.mean(np.sum(dev**2, axis=(1, 2)))
    trace = np.mean(np.trace(dev, axis1=1, axis2=2) ** 2)
    return float(2 * k * (k + 2) / (2 * entries + trace))
