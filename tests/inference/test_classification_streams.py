"""The classification inference's random streams (one per part) and its memo of the bin-free parts.

* With a memo kept across bins counts and binnings, every table is equal, bit for bit, to a fresh inference.
* The bin-free parts (TCE, the clinical set, NLL / Brier, the calibration ratio's interval) are the same whatever the
  bins, memo or not: their draws no longer follow the binned null draws on one stream.
* Seeded simulation: on perfectly calibrated data (labels drawn from the TRUE probabilities) the headline's false
  alarms and the ECE test's rejections stay within a binomial tolerance of alpha, on the summary-level null path
  (sub-bin binomials, the 10⁵-row path) that the "binned" stream feeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calib_core.inference.classification import infer_classification
from calib_core.inference.classification_nulls import merged_blocks
from calib_core.inference.classification_streams import InferenceMemo, stream
from calib_core.metrics.classification import ClassificationRows

FAST = {"n_null": 300, "n_boot": 150, "smooth": False}


def _data(n: int, k: int, seed: int, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities softmax(z / T) and labels drawn from softmax(z): calibrated at T = 1."""
    rng = np.random.default_rng(seed)
    z = 1.5 * rng.normal(size=(n, k))
    q = np.exp(z / temperature - (z / temperature).max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    p_true = np.exp(z - z.max(axis=1, keepdims=True))
    p_true /= p_true.sum(axis=1, keepdims=True)
    y = (p_true.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1).clip(0, k - 1)
    return y, q


@pytest.mark.parametrize("k, n", [(5, 1500), (2, 1000)], ids=["K=5", "binary"])
def test_memo_gives_the_fresh_results_for_every_bins_choice(k, n):
    y, q = _data(n, k, seed=3, temperature=0.8)
    memo: dict = {}
    options = {**FAST, "smooth": k == 2}  # the smooth ECE's results kept too (binary case)
    for n_bins, strategy in ((10, "uniform"), (12, "quantile"), (10, "uniform"), (20, "uniform")):
        kept = infer_classification(ClassificationRows(y, q, n_bins=n_bins, strategy=strategy), exact_budget=0,
                                    seed=4, memo=memo, tce=True, **options)
        fresh = infer_classification(ClassificationRows(y, q, n_bins=n_bins, strategy=strategy), exact_budget=0,
                                     seed=4, tce=True, **options)
        pd.testing.assert_frame_equal(kept.table, fresh.table, check_exact=True)
        assert (kept.sentence, kept.notes, kept.verdict) == (fresh.sentence, fresh.notes, fresh.verdict)
    assert any(key[0] == "blocks" for key in memo) and any(key[0] == "tce" for key in memo)


def test_bin_free_parts_are_the_same_whatever_the_bins():
    """TCE, the clinical set, NLL, Brier and the calibration ratio's interval: equal for 10 and 20 bins (no memo;
    their BH-adjusted p-values still depend on the binned tests of the same family)."""
    y, q = _data(2000, 2, seed=5, temperature=0.7)
    a, b = (infer_classification(ClassificationRows(y, q, n_bins=m), exact_budget=0, seed=1, tce=True, **FAST).table
            for m in (10, 20))
    free = ["tce", "tce_positive", "calibration_in_the_large", "calibration_slope", "ici", "nll", "brier"]
    own = [c for c in a.columns if c not in ("adjusted_p", "flag")]  # BH adjusts with the binned p-values too
    pd.testing.assert_frame_equal(a.loc[free, own], b.loc[free, own], check_exact=True)
    ratio_ci = ["ci_low", "ci_high"]
    pd.testing.assert_frame_equal(a.loc[["calibration_ratio"], ratio_ci], b.loc[["calibration_ratio"], ratio_ci],
                                  check_exact=True)
    assert not a.loc["ece"].equals(b.loc["ece"])  # the binned statistic itself does change


def test_streams_are_separate_and_reproducible():
    draws = {name: stream(7, name).random(4) for name in ("binned", "blocks", "tce", "clinical")}
    assert len({tuple(v) for v in draws.values()}) == 4
    np.testing.assert_array_equal(stream(7, "tce").random(4), draws["tce"])
    built = []
    memo = InferenceMemo({}, ("options",))
    assert memo("part", lambda: built.append(1) or 5) == 5 and memo("part", lambda: built.append(1) or 6) == 5
    assert built == [1]
    assert InferenceMemo(None, ()).get("part", lambda: 3) == 3


def test_merged_blocks_grid():
    """B' on the 50 · 2^(j/4) grid: the smallest grid value ≥ the budget's bound, never below 50."""
    grid = [int(50 * 2 ** (j / 4)) for j in range(60)]
    for most in np.concatenate([[1.0, 50.0], np.geomspace(50.5, 1e5, 200)]):
        b = merged_blocks(float(most))
        assert b in grid and b >= min(most, 50) and (b == 50 or b >= most)
        j = grid.index(b)
        assert j == 0 or grid[j - 1] < most


@pytest.mark.slow  # a seeded simulation study (200 data sets, ~20 s); runs with pytest -m slow
def test_headline_false_alarms_on_calibrated_data():
    """Seeded simulation (labels from the true probabilities): over 200 calibrated data sets on the summary-level
    null path, the headline says "miscalibrated" and ECE's test rejects at 0.05 within a binomial tolerance
    (one-sided, P(X ≥ observed) > 0.001 under Binomial(200, 0.05))."""
    alarms = ece_rejects = 0
    sets = 200
    for i in range(sets):
        y, q = _data(400, 3, seed=1000 + i)
        r = infer_classification(labels=y, probs=q, n_null=400, n_boot=100, exact_budget=0, seed=i, smooth=False,
                                 tce=False, classwise=False)
        alarms += r.verdict == "miscalibrated"
        ece_rejects += float(r.table.loc["ece", "p_value"]) <= 0.05
    print(f"calibrated sets: {alarms}/{sets} headline false alarms, {ece_rejects}/{sets} ECE rejections at 0.05")
    for count in (alarms, ece_rejects):
        assert stats.binom.sf(count - 1, sets, 0.05) > 1e-3, (alarms, ece_rejects)
