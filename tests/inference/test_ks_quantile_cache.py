"""The KS band's quantile, kept once per (level, N), is scipy's exact ``kstwo.ppf`` and the p-value scipy's exact
``kstwo.sf``, on a first call and on a repeated one, at small, bin-sized and boundary N (the exact law's limit)."""

from __future__ import annotations

import pytest
from scipy import stats

from calib_core.inference.regression_nulls import ks_sf_ppf

EXACT_MAX_N = 20_000  # the exact law up to this N (ks_sf_ppf's docstring)


@pytest.mark.parametrize("n", [1, 2, 7, 500, 6_666, 6_667, EXACT_MAX_N])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("d", [0.0, 1e-4, 0.013, 0.5, 1.0])
def test_exact_law_values(n: int, level: float, d: float) -> None:
    expected = (float(stats.kstwo.sf(d, n)), float(stats.kstwo.ppf(level, n)), "Kolmogorov–Smirnov, exact")
    assert ks_sf_ppf(d, n, level) == expected
    assert ks_sf_ppf(d, n, level) == expected  # the kept quantile


def test_limit_law_untouched() -> None:
    p, q, name = ks_sf_ppf(0.01, EXACT_MAX_N + 1, 0.95)
    assert "limit" in name and 0 < p < 1 and q > 0
