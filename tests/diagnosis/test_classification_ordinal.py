"""Ordinal forecasts read from a forecast hub's pmf files (hubverse, categories from hub-config/tasks.json) and
diagnosed: the report's RPS row and the per-threshold reliability are the core's numbers on the hub's rows, a
calibrated hub (observed categories drawn from its pmfs) is not flagged and a shifted one is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.diagrams.classification_ordinal import threshold_reliability
from calib_core.metrics.classification_ordinal import rps
from tests.data.hub_fixtures import ROUNDS, tasks_json, write_hub

CATS = ["low", "moderate", "high", "very high"]
TARGET = "wk flu hosp rate category"


def _pmf_hub(root, *, shifted: bool, seed: int, n_locations: int = 60):
    """pmf forecasts of two models for 2 rounds × n locations × 2 horizons, and the oracle output of categories
    drawn from the TRUE law: the forecast itself (model "good") or one category above it ("shifted")."""
    rng = np.random.default_rng(seed)
    locations = [f"{i:02d}" for i in range(1, n_locations + 1)]
    units = pd.DataFrame([(r, h, loc) for r in ROUNDS for h in (1, 2) for loc in locations],
                         columns=["reference_date", "horizon", "location"])
    p = rng.dirichlet(np.full(4, 1.5), size=len(units))
    q = p
    if shifted:
        q = np.zeros_like(p)
        q[:, 1:] = p[:, :-1]
        q[:, -1] += p[:, -1]
    observed = np.minimum((rng.random(len(units))[:, None] > np.cumsum(q, axis=1)).sum(axis=1), 3)
    long = units.loc[units.index.repeat(4)].reset_index(drop=True)
    long.insert(1, "target", TARGET)
    long["output_type"] = "pmf"
    long["output_type_id"] = np.tile(CATS, len(units))
    long["value"] = p.ravel().round(12)
    oracle = long.drop(columns="value").assign(
        oracle_value=(np.tile(np.arange(4), len(units)) == np.repeat(observed, 4)).astype(float))
    files = {"m": {r: long[long["reference_date"] == r] for r in ROUNDS}}
    hub = write_hub(root, files, config=tasks_json(categories=CATS))
    truth = root / "oracle-output.csv"
    oracle.to_csv(truth, index=False)
    return hub, truth, p, observed


@pytest.mark.parametrize("shifted", [False, True])
def test_pmf_hub_gets_rps_and_per_threshold_reliability(tmp_path, shifted):
    hub, truth, p, observed = _pmf_hub(tmp_path, shifted=shifted, seed=4 + shifted)
    ps = cc.load_predictions(hub, truth=truth)
    assert ps.ordinal and ps.classes == CATS and ps.n_rows == len(observed)
    # the written hub has 2 reference dates: too few clusters to resample, so by default nothing is tested
    auto = cc.diagnose(ps, n_resamples=200, n_simulations=500)
    assert auto.verdicts["verdict"].eq("not tested").all()
    assert auto.verdicts["sentence"].str.contains("only 2 reference_date clusters").all()
    report = cc.diagnose(ps, n_resamples=200, n_simulations=500, cluster=None)  # the units taken as independent
    row = report.table().loc["rps"]
    assert row["value"] == pytest.approx(rps(ps.probs, ps.labels))
    # the hub's rows are the written units in some order: the same multiset of scores
    assert row["value"] == pytest.approx(rps(p, observed), rel=1e-9)
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    t = threshold_reliability(ps.probs, ps.labels, classes=ps.classes, n_resamples=500).summary
    assert t["event"].tolist() == ["≤ low", "≤ moderate", "≤ high"]
    assert t["brier"].sum() == pytest.approx(row["value"])
    assert bool(t["flag"].any()) is shifted
    if shifted:  # a forecast too low scores worse than a calibrated forecaster with the same pmfs would
        assert row["value"] > row["perfect_high"]
