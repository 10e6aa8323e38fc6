"""The reference tails of gravdir's tests (gravdir._tails) against SciPy's distributions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gravdir._tails import chi2_sf, f_sf


@pytest.mark.parametrize("dof", [1, 2, 3, 4, 8, 9, 40, 128])
def test_the_chi_square_tail_is_scipys_for_even_and_odd_dof(dof):
    """Even `dof` by the Poisson sum, odd by SciPy: both agree with ``scipy.stats.chi2.sf`` to
    rounding (relative 1e-12) from the bulk to a tail of 1e-300."""
    for x in (1e-6, 0.5, dof, 3.0 * dof + 20.0, 600.0, 1300.0):
        want = stats.chi2.sf(x, dof)
        assert chi2_sf(x, dof) == pytest.approx(want, rel=1e-12, abs=1e-305)


def test_the_chi_square_tail_at_its_edges():
    assert chi2_sf(5.0, 0) == 1.0
    assert chi2_sf(0.0, 2) == 1.0 and chi2_sf(-1.0, 4) == 1.0
    assert chi2_sf(1e6, 2) == 0.0  # beyond the float range: 0, never NaN


def test_the_f_tail_is_scipys_elementwise():
    x = np.array([0.1, 1.0, 4.0, 30.0])
    np.testing.assert_allclose(f_sf(x, 2, 8.0), stats.f.sf(x, 2, 8.0), rtol=1e-12)
    assert f_sf(3.0, 0, 8.0) == 1.0 and isinstance(f_sf(3.0, 2, 8.0), float)
