"""Per-threshold reliability with clustered rows: each threshold tested by its binned ECE against the centred cluster
bootstrap.  Data: the date-shocked calibrated forecast of tests/inference (labels from the TRUE probabilities, the
forecast the marginal law), read as two ordered categories (one threshold, the event Y ≤ first)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calib_core.base.clustering import Clustering
from calib_core.diagrams.classification_ordinal import threshold_reliability
from tests.inference.test_classification_cluster import shocked


def _flags(reps: int, seed0: int, over: float = 1.0) -> tuple[float, float]:
    """Share of data sets with a flagged threshold: independent rows (MCB null), then clustered by date."""
    out = np.zeros(2)
    for r in range(reps):
        y, p, codes = shocked(np.random.default_rng(seed0 + r), over=over)
        cl = Clustering("date", codes, np.arange(40), None)
        for j, c in enumerate((None, cl)):
            t = threshold_reliability(p, y, classes=["a", "b"], n_resamples=300, clustering=c, seed=r)
            out[j] += bool(t.summary["flag"].any())
    return out[0] / reps, out[1] / reps


def test_clustered_threshold_test():
    y, p, codes = shocked(np.random.default_rng(5))
    cl = Clustering("date", codes, np.arange(40), None)
    t = threshold_reliability(p, y, classes=["a", "b"], n_resamples=300, clustering=cl)
    assert "centred bootstrap" in t.info["test"] and t.info["clustering"] == cl.describe()
    assert np.isfinite(t.summary["p_value"]).all() and not t.summary["flag"].any()
    y, p, codes = shocked(np.random.default_rng(6), over=2.0)
    t = threshold_reliability(p, y, classes=["a", "b"], n_resamples=300, clustering=cl)
    assert t.summary["flag"].all()


@pytest.mark.slow
def test_clustered_threshold_false_alarms():
    """100 calibrated date-shocked data sets: clustered flags ≤ 5 % + 2 MC s.e. (measured 0.075 of 40 vs 0.25 for
    the independent-rows MCB test)."""
    iid, clustered = _flags(100, 300)
    assert clustered <= 0.05 + 2.0 * math.sqrt(0.05 * 0.95 / 100)
    assert iid > clustered
