"""The class-wise layout's per-block per-cell sums (one compiled pass, bit for bit NumPy's ``bincount`` sums) and
the inference table built column by column (pandas' table of the records)."""

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core.inference.classification_nulls import ClasswiseLayout
from calib_core.metrics.classification import ClassificationRows


def _reference(lay: ClasswiseLayout, block: np.ndarray, n_b: int) -> list[np.ndarray]:
    """The plain formula: per (block, cell) key bincounts of 1, p and p² (first bins by complement when sparse)."""
    ri = np.repeat(np.arange(lay.n), lay.k) if not lay.sparse else lay.ri
    key = block[ri] * lay.size + lay.cell
    out = [np.bincount(key, minlength=n_b * lay.size).astype(float),
           np.bincount(key, weights=lay.val, minlength=n_b * lay.size),
           np.bincount(key, weights=lay.val * lay.val, minlength=n_b * lay.size)]
    out = [a.astype(float).reshape(n_b, lay.size) for a in out]  # bincount of no entry: an int array
    if lay.sparse:
        first = np.arange(lay.k) * lay.nb
        p = np.asarray(lay.p, dtype=float)
        totals = [np.repeat(np.bincount(block, minlength=n_b).astype(float)[:, None], lay.k, axis=1),
                  np.stack([np.bincount(block, weights=p[:, c], minlength=n_b) for c in range(lay.k)], axis=1),
                  np.stack([np.bincount(block, weights=p[:, c] ** 2, minlength=n_b) for c in range(lay.k)], axis=1)]
        for a, t in zip(out, totals):
            a[:, first] = t - a.reshape(n_b, lay.k, lay.nb)[:, :, 1:].sum(axis=2)
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), k=st.integers(2, 6), n_bins=st.integers(1, 12),
       n_b=st.integers(1, 30), strategy=st.sampled_from(["quantile", "uniform"]))
def test_block_sums_equal_bincount(seed: int, n: int, k: int, n_bins: int, n_b: int, strategy: str) -> None:
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(k, 0.5), n)
    labels = rng.integers(0, k, n)
    lay = ClasswiseLayout(ClassificationRows(labels, probs, n_bins=n_bins, strategy=strategy))
    block = rng.integers(0, n_b, n)
    got = lay.block_sums(block, n_b)
    want = _reference(lay, block, n_b)
    if lay.sparse:  # the complement's totals come from a sparse product: equal to rounding, the rest bit for bit
        first = np.arange(lay.k) * lay.nb
        rest = np.ones(lay.size, dtype=bool)
        rest[first] = False
        for a, b in zip(got, want):
            np.testing.assert_allclose(a[:, first], b[:, first], rtol=1e-9, atol=1e-9)
            assert np.array_equal(a[:, rest], b[:, rest])
    else:
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional={
    "value": st.floats(allow_nan=True), "ci_low": st.floats(), "kind": st.sampled_from(["a", ""]),
    "flag": st.booleans(), "note": st.text(max_size=3), "p_value": st.one_of(st.floats(), st.integers(0, 1))}),
    max_size=6))
def test_result_table_built_by_columns_is_pandas_table_of_the_records(records: list) -> None:
    from calib_core.inference.result import RESULT_COLUMNS, InferenceResult

    records = [{"metric": f"m{i}", **r} for i, r in enumerate(records)]
    got = InferenceResult.table_from(records)
    want = pd.DataFrame(records, columns=["metric", *RESULT_COLUMNS]).set_index("metric")
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.index.dtype == want.index.dtype and got.columns.dtype == want.columns.dtype
    for column in want.columns:
        assert [type(v) for v in got[column].tolist()] == [type(v) for v in want[column].tolist()]
