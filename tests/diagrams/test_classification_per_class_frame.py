"""The per-class reliability table made as one frame equals the K one-class tables concatenated (bit for bit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.diagrams.classification import RELIABILITY_COLUMNS, _table, per_class_reliability_of
from calib_core.metrics.classification import ClassificationRows


def _one_table_per_class(rows: ClassificationRows) -> pd.DataFrame:
    """The former construction: one reliability table per class, concatenated."""
    count, s_conf, s_hit = rows.classwise_sums(None)
    parts = []
    for c in range(rows.k):
        t = _table(count[c], s_conf[c], s_hit[c], np.asarray(rows.classwise_edges[c]), rows.n_bins)
        t["class"] = np.full(rows.n_bins, c)
        parts.append(pd.DataFrame(t))
    return pd.concat(parts, ignore_index=True)[["class", *RELIABILITY_COLUMNS]]


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_per_class_table_equals_one_table_per_class(k, strategy):
    rng = np.random.default_rng(k)
    for n_bins in (1, 5, 15, 30):
        p = rng.dirichlet(np.full(k, 0.3), 200)
        rows = ClassificationRows(rng.integers(0, k, 200), p, n_bins=n_bins, strategy=strategy)
        pd.testing.assert_frame_equal(per_class_reliability_of(rows), _one_table_per_class(rows), check_exact=True)
