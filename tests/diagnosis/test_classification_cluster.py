"""``cc.diagnose`` of classification rows with ``cluster=`` / ``block_length=``: a hub's pmf forecasts are clustered by
reference date automatically, other files keep independent rows (unchanged), and the Report says which."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.predictions import InputError, PredictionSet
from tests.inference.test_classification_cluster import shocked

CATS = ["low", "moderate", "high", "very high"]


def _hub_pmf(n_dates: int = 40, per_date: int = 30, seed: int = 0, units: bool = True) -> PredictionSet:
    """Ordinal pmf forecasts on ``n_dates`` reference dates, categories drawn from the forecasts."""
    rng = np.random.default_rng(seed)
    n = n_dates * per_date
    p = rng.dirichlet(np.full(4, 2.0), size=n)
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1), 3)
    dates = pd.date_range("2023-01-07", periods=n_dates, freq="7D").strftime("%Y-%m-%d")
    frame = pd.DataFrame({"reference_date": np.repeat(dates, per_date),
                          "location": np.tile([f"{i:02d}" for i in range(per_date)], n_dates)})
    return PredictionSet("classification", labels=y, probs=p, classes=CATS, ordinal=True,
                         units=frame if units else None, slice_columns=None if units else frame)


def test_hub_pmf_clustered_by_reference_date():
    ps = _hub_pmf()
    report = cc.diagnose(ps, n_resamples=200, n_simulations=300)
    desc = "whole reference_date clusters resampled (40 clusters)"
    assert report.options["cluster"] == "auto" and report.options["block_length"] is None
    assert report.options["n_clusters"] == 40 and report.options["clustering"] == desc
    assert all(s.endswith(f"; {desc}.") for s in report.verdicts["sentence"])
    table = report.table()
    assert table.loc["rps", "interval"] == "percentile cluster bootstrap"
    assert "cluster" in table.loc["ece", "test"] and np.isnan(table.loc["tce", "p_value"])


def test_other_files_keep_independent_rows():
    """Without a hub's date the default is independent rows, results unchanged (cluster=None is the same)."""
    ps = _hub_pmf(units=False)
    a = cc.diagnose(ps, n_resamples=100, n_simulations=200)
    b = cc.diagnose(ps, n_resamples=100, n_simulations=200, cluster=None)
    assert a.options["clustering"] == "independent rows" and a.options["n_clusters"] is None
    pd.testing.assert_frame_equal(a.metrics, b.metrics)
    assert "cluster" not in " ".join(a.verdicts["sentence"])
    hub = cc.diagnose(_hub_pmf(), n_resamples=100, n_simulations=200, cluster="none")
    assert hub.options["clustering"] == "independent rows"


def test_named_column_moving_blocks_and_few_clusters():
    ps = _hub_pmf(units=False, n_dates=6, per_date=40)
    report = cc.diagnose(ps, n_resamples=100, n_simulations=200, cluster="reference_date", block_length=2)
    assert report.options["clustering"] == "moving blocks of 2 consecutive reference_date values resampled (6 values)"
    assert any("6 reference_date clusters only" in n for n in report.options["notes"])
    with pytest.raises(InputError, match="no such column"):
        cc.diagnose(ps, cluster="site")


def test_clustered_calibrated_forecast_not_flagged_by_diagnose():
    """The date-shocked calibrated forecast of tests/inference (40 dates × 50 rows): diagnosed with its date
    column the headline says calibrated (this seed; the false-alarm rate is measured there)."""
    y, p, codes = shocked(np.random.default_rng(21))
    ps = PredictionSet("classification", labels=y, probs=p, classes=["0", "1"],
                       slice_columns=pd.DataFrame({"date": codes}))
    clustered = cc.diagnose(ps, n_resamples=200, n_simulations=300, cluster="date", smooth=False)
    assert clustered.verdicts["verdict"].tolist() == ["calibrated"]
