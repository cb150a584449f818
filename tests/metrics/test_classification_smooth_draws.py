"""The compiled binomial draws of the smooth ECE's null are NumPy's, value for value and state for state."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.metrics import classification_smooth
from calib_core.metrics.classification_smooth_draws import small_binomials


def _same(n, p, rows, seed):
    mine, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    got = small_binomials(mine, n, p, rows)
    want = theirs.binomial(n, p, size=(rows, len(n)))
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    assert mine.bit_generator.state == theirs.bit_generator.state  # the same random numbers consumed


def test_small_binomials_equal_numpys_draws():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    special = st.sampled_from([0.0, 1.0, 0.5, 5e-324, 1e-300, 1.0 - 2.0 ** -53, 0.999, 1e-3])
    p_value = st.one_of(special, st.floats(0.0, 1.0, allow_nan=False))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.tuples(st.integers(0, 400), p_value), min_size=1, max_size=25), st.integers(0, 6),
           st.integers(0, 2 ** 32))
    def check(cells, rows, seed):
        n = np.array([c[0] for c in cells], dtype=np.int64)
        p = np.array([c[1] for c in cells])
        _same(n, p, rows, seed)

    check()


def test_small_binomials_edge_cases_and_fallbacks():
    _same(np.array([0, 1, 30, 31, 60, 61, 10 ** 6]), np.array([0.5, 1.0, 1.0, 0.97, 0.5, 0.5, 0.5]), 50, 3)  # BTPE
    _same(np.array([7]), np.array([0.25]), 1, 0)  # one cell, one draw
    _same(np.array([7], dtype=np.int32), np.array([0.25], dtype=np.float32), 4, 1)  # other dtypes
    with pytest.raises(ValueError):  # NumPy's own error for p outside [0, 1] or NaN
        small_binomials(np.random.default_rng(0), np.array([3]), np.array([np.nan]), 2)
    with pytest.raises(ValueError):
        small_binomials(np.random.default_rng(0), np.array([-1]), np.array([0.5]), 2)
    legacy = np.random.Generator(np.random.MT19937(5))  # another bit generator: NumPy itself
    np.testing.assert_array_equal(small_binomials(legacy, np.array([4, 9]), np.array([0.2, 0.7]), 3),
                                  np.random.Generator(np.random.MT19937(5)).binomial([4, 9], [0.2, 0.7], (3, 2)))


@pytest.mark.parametrize("n", [1, 2, 500, 20_000])
def test_smooth_null_with_compiled_draws_equals_numpys(monkeypatch, n):
    """The smooth ECE's inference (cell-wise null draws forced: exact budget 0) is the same, bit for bit, with the
    compiled draws and with ``rng.binomial``."""
    rng = np.random.default_rng(n)
    f = np.clip(rng.beta(0.5, 0.5, n), 0.0, 1.0)
    f[: n // 10] = np.round(f[: n // 10], 2)  # ties
    y = (rng.random(n) < f ** 1.3).astype(float)

    def run():
        return classification_smooth.smooth_inference(f, y, n_boot=50, n_null=300, n_null_sigma=20,
                                                      exact_budget=0, rng=np.random.default_rng(7))

    got = run()
    monkeypatch.setattr(classification_smooth, "small_binomials",
                        lambda g, cnt, p, rows: g.binomial(cnt, p, size=(rows, cnt.shape[0])))
    want = run()
    assert got.keys() == want.keys()
    for key in got:
        a, b = np.asarray(got[key]), np.asarray(want[key])
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(a.view(np.uint64) if a.dtype == np.float64 else a,
                                          b.view(np.uint64) if b.dtype == np.float64 else b)
        else:
            assert str(got[key]) == str(want[key]), key
