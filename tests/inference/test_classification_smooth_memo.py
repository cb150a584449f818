"""The smooth ECE's test, null and interval do not depend on the confidence bins (a bins change on
the Classification page must not redo them): they run on their own random stream and are memoised on the rows."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core.inference.classification as ci
import calib_core.inference.classification_smooth as cs
from calib_core.metrics.classification import ClassificationRows
from calib_core.metrics.classification_smooth import smooth_summaries

SMOOTH_COLUMNS = ["value", "ci_low", "ci_high", "p_value", "perfect", "perfect_low", "perfect_high"]


def _rows(n_bins: int, seed: int = 3) -> ClassificationRows:
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(4, 0.5), size=3_000)
    labels = (probs.cumsum(axis=1) < rng.random((3_000, 1))).sum(axis=1).clip(0, 3)
    return ClassificationRows(labels, probs, n_bins=n_bins)


def _smooth_row(n_bins: int, seed: int | None = 0):
    rows = _rows(n_bins)
    est, _ = smooth_summaries(rows)
    res = ci.infer_classification(rows, n_null=300, n_boot=200, classwise=False, seed=seed, smooth=True,
                                  smooth_estimates=est)
    return res.table.loc["smooth_ece", SMOOTH_COLUMNS].astype(float)


@pytest.fixture
def counted(monkeypatch):
    """Calls of the smooth-ECE inference itself (not its memo)."""
    calls = {"n": 0}
    real = cs.smooth_inference

    def spy(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(cs, "smooth_inference", spy)
    cs._SMOOTH_MEMO.clear()
    return calls


def test_smooth_ece_inference_is_the_same_at_any_bin_count_and_computed_once(counted):
    first = _smooth_row(15)
    assert counted["n"] == 1
    for n_bins in (5, 16, 30):  # the bins change everything else, not the smooth ECE's test and interval
        np.testing.assert_array_equal(_smooth_row(n_bins).to_numpy(), first.to_numpy())
    assert counted["n"] == 1  # memoised: the rows and options are the same
    cs._SMOOTH_MEMO.clear()
    np.testing.assert_array_equal(_smooth_row(20).to_numpy(), first.to_numpy())  # recomputed: the same numbers
    assert counted["n"] == 2


def test_other_rows_or_seeds_are_other_entries_and_no_seed_is_not_memoised(counted):
    a = _smooth_row(15, seed=0)
    b = _smooth_row(15, seed=1)
    assert counted["n"] == 2 and not np.array_equal(a.to_numpy(), b.to_numpy())
    _smooth_row(15, seed=None)
    _smooth_row(15, seed=None)
    assert counted["n"] == 4  # fresh draws every time, nothing kept
    assert len(cs._SMOOTH_MEMO) == 2


def test_memo_is_bounded_and_hits_are_private_copies(counted):
    f = np.random.default_rng(0).random(500)
    y = (np.random.default_rng(1).random(500) < f).astype(float)
    options = dict(estimate=None, n_blocks=50, n_boot=50, n_null=50, level=0.95, exact_budget=10**6, stream="t")
    out = cs.smooth_inference_of(f, y, seed=0, **options)
    out["null"][:] = -1.0  # a caller changing its copy does not change the memo
    again = cs.smooth_inference_of(f, y, seed=0, **options)
    assert counted["n"] == 1 and np.all(again["null"] >= 0)
    for seed in range(1, cs.SMOOTH_MEMO_ENTRIES + 5):
        cs.smooth_inference_of(f[:100], y[:100], seed=seed, **options)
    assert len(cs._SMOOTH_MEMO) == cs.SMOOTH_MEMO_ENTRIES
