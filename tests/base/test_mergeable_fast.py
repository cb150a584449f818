"""The fast exact sums equal the general ones bit for bit (the integers of every cell), whatever the values.

``exact_bin_sums_columns`` groups rows by (cell, sign, exponent) and converts the group totals with ``frexp``; the
general path (``_general_bin_sums``) groups by (cell, exponent) and converts with ``as_integer_ratio``.  Both must
give Σx exactly, so their integers must be equal — on ordinary data, on every exponent range, on subnormals and
signed zeros, and (through the fallback) with non-finite values and magnitudes near the largest double.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.base.mergeable_exact import (
    EXACT_UNIT_BITS,
    _general_bin_sums,
    exact_bin_sums,
    exact_bin_sums_columns,
)


def _same(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    return [int(v) for v in a[0]] == [int(v) for v in b[0]] and np.array_equal(a[1], b[1])


def _check(index: np.ndarray, n_cells: int, columns: list[np.ndarray]) -> None:
    fast = exact_bin_sums_columns(index, n_cells, columns)
    for x, got in zip(columns, fast, strict=True):
        assert _same(got, _general_bin_sums(index, n_cells, x))
        assert _same(exact_bin_sums(index, n_cells, x), got)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=80),
       st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_fast_sums_equal_the_general_path_on_any_floats(values: list[float], n_cells: int, seed: int) -> None:
    x = np.array(values, dtype=np.float64)
    index = np.random.default_rng(seed).integers(0, n_cells, x.size)
    _check(index, n_cells, [x, -x, x * 0.5])


def test_fast_sums_equal_the_general_path_on_wide_data() -> None:
    rng = np.random.default_rng(11)
    n = 200_000
    index = rng.integers(0, 15, n)
    cols = [rng.lognormal(0.0, 0.5, n), rng.standard_normal(n), rng.standard_normal(n) ** 4,
            rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n),
            np.concatenate([[5e-324, -5e-324, 0.0, -0.0, 2.2e-308, -1e-310], rng.standard_normal(n - 6)]),
            np.full(n, 1.7e308 / n)]  # one group near the top of its exponent, n rows
    _check(index, 15, cols)
    for x, (s, _) in zip(cols[:2], exact_bin_sums_columns(index, 15, cols[:2]), strict=False):
        for c in (0, 7):
            assert Fraction(int(s[c]), 1 << EXACT_UNIT_BITS) == sum(Fraction(v) for v in x[index == c])


def test_fast_sums_fall_back_on_non_finite_and_huge_values() -> None:
    index = np.array([0, 0, 1, 1, 2, 2, 2])
    for x in (np.array([1.0, np.inf, 2.0, -np.inf, np.nan, 3.0, 4.0]),
              np.array([1e308, 1e308, -1e308, 2.0, 3.0, 2.0**600, 1.0]),
              np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, np.float64(2.0**513)])):
        _check(index, 3, [x])
    sums, nf = exact_bin_sums(index, 3, np.array([1e308, 1e308, 0.0, 0.0, 0.0, 0.0, 0.0]))
    assert Fraction(int(sums[0]), 1 << EXACT_UNIT_BITS) == 2 * Fraction(1e308) and not nf.any()


def test_many_cells_and_empty_columns_take_the_general_path() -> None:
    rng = np.random.default_rng(3)
    index = rng.integers(0, 400, 5_000)  # 400 · 4099 > 2²⁰ cells: the general path
    _check(index, 400, [rng.standard_normal(5_000)])
    _check(np.zeros(0, dtype=np.int64), 3, [np.zeros(0)])
