"""Grouped forecast-hub scores (``calib_core.diagnosis.regression_hub``) against a direct pandas computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import calib_core as cc
from calib_core.diagnosis.regression_hub import (
    forecast_heatmap,
    forecast_rows,
    forecast_scores,
    quantile_bias,
    score_columns,
)
from tests.hub_synthetic import LEVELS, synthetic_hub


def _direct(pset: cc.PredictionSet, by: list[str]) -> pd.DataFrame:
    """Every score from its definition, row by row in pandas (no code of the module under test)."""
    y, q, tau = pset.y, pset.dist.values, LEVELS
    frame = pset.units.copy()
    frame["model"] = pset.model
    pinball = (((y[:, None] <= q) - tau) * (q - y[:, None]))
    frame["wis"] = 2 * pinball.mean(axis=1)  # Bracher et al. (2021): WIS = 2/(2K+1) Σ_τ QS_τ with the median
    for c in (50, 80, 90, 95, 98):
        lo, hi = np.argmin(abs(tau - (0.5 - c / 200))), np.argmin(abs(tau - (0.5 + c / 200)))
        frame[f"coverage_{c}"] = (q[:, lo] <= y) & (y <= q[:, hi])
    for j, t in enumerate(tau):
        frame[f"share_lt_{t:g}"] = y < q[:, j]
        frame[f"share_le_{t:g}"] = y <= q[:, j]
    med = q[:, np.argmin(abs(tau - 0.5))]
    frame["below_median"] = ((y < med).astype(float) + (y <= med)) / 2
    out = frame.groupby(by, sort=True).agg("mean", numeric_only=True).drop(columns=["horizon"], errors="ignore")
    out["n"] = frame.groupby(by, sort=True).size()
    return out.reset_index()


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("by", [["model"], ["model", "horizon"], ["location", "target_end_date"],
                                ["model", "reference_date", "location"]])
def test_grouped_scores_equal_a_direct_pandas_computation(by, integer):
    pset = synthetic_hub(integer=integer)
    got = forecast_scores(pset, by)
    want = _direct(pset, by)
    assert len(got) == len(want)
    for b in by:
        assert got[b].tolist() == want[b].tolist()
    for col in want.columns.drop(by):
        if col in got:
            assert_allclose(got[col].to_numpy(float), want[col].to_numpy(float), rtol=1e-12, atol=1e-12, err_msg=col)
    assert {"wis", "coverage_50", "coverage_98", "share_le_0.01", "below_median", "bias", "pit_departure"} <= set(got)


def test_ties_are_bracketed_and_the_departure_is_the_largest_bracket_distance():
    pset = synthetic_hub(integer=True)
    got = forecast_scores(pset, ["model"])
    assert (got["share_lt_0.5"] < got["share_le_0.5"]).all()  # integer targets hit rounded medians
    lt = got[[f"share_lt_{t:g}" for t in LEVELS]].to_numpy()
    le = got[[f"share_le_{t:g}" for t in LEVELS]].to_numpy()
    want = np.maximum(0, np.maximum(lt - LEVELS, LEVELS - le)).max(axis=1)
    assert_allclose(got["pit_departure"], want)


def test_masks_regroup_the_same_rows_as_a_subset():
    pset = synthetic_hub()
    mask = (pset.units["horizon"] >= 2).to_numpy() & (pset.model != "high")
    rows = forecast_rows(pset)
    got = forecast_scores(rows, ["model", "location"], mask)
    want = forecast_scores(pset.take(mask), ["model", "location"])
    assert_allclose(got[score_columns(rows)].to_numpy(float), want[score_columns(rows)].to_numpy(float))
    assert set(got["model"]) == {"calibrated", "narrow"}


def test_calibrated_model_has_nominal_coverage_and_the_others_do_not():
    pset = synthetic_hub(n_locations=20, n_dates=20, seed=3)  # 1,600 units per model
    got = forecast_scores(pset).set_index("model")
    n = got.loc["calibrated", "n"]
    for c in (50, 90):
        tol = 4 * np.sqrt(c / 100 * (1 - c / 100) / n)  # binomial, 4 standard errors
        assert abs(got.loc["calibrated", f"coverage_{c}"] - c / 100) < tol
        assert got.loc["narrow", f"coverage_{c}"] < c / 100 - tol
    assert abs(got.loc["calibrated", "below_median"] - 0.5) < 4 * np.sqrt(0.25 / n)
    assert got.loc["high", "below_median"] > 0.5 + 4 * np.sqrt(0.25 / n)
    assert got.loc["high", "bias"] > 0.2 > abs(got.loc["calibrated", "bias"])
    assert got.loc["narrow", "wis_dispersion"] < got.loc["calibrated", "wis_dispersion"]


def test_quantile_bias_follows_scoringutils():
    q = np.array([[1.0, 2.0, 3.0]] * 7)
    tau = np.array([0.25, 0.5, 0.75])
    y = np.array([0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0])
    assert_allclose(quantile_bias(y, q, tau), [1.0, 0.5, 0.5, 0.0, -0.5, -0.5, -1.0])
    no_median = np.array([0.25, 0.75])  # median interpolated between the innermost levels: 2
    assert_allclose(quantile_bias(y, q[:, [0, 2]], no_median), [1.0, 0.5, 0.5, 0.0, -0.5, -0.5, -1.0])


def test_heatmap_table_shape_and_values():
    pset = synthetic_hub(n_locations=4, n_dates=5)
    for columns in ("target_end_date", "reference_date", "horizon"):
        table = forecast_heatmap(pset, "coverage_90", "location", columns)
        assert list(table.columns[:4]) == ["row", "column", "value", "n"]
        direct = _direct(pset, ["location", columns])
        assert len(table) == len(direct)
        assert_allclose(table["value"], direct["coverage_90"])
        assert table["n"].tolist() == direct["n"].tolist()
    rel = forecast_heatmap(pset, "wis_relative")
    direct = _direct(pset, ["location", "target_end_date"])
    row_mean = (direct["wis"] * direct["n"]).groupby(direct["location"]).transform("sum") / \
        direct["n"].groupby(direct["location"]).transform("sum")
    assert_allclose(rel["value"], direct["wis"] / row_mean)
    codes = forecast_heatmap(pset, "wis", mask=(pset.units["location"] == "03").to_numpy())
    assert set(codes["row_code"]) == {2} and codes["column_code"].min() >= 0


def test_unknown_columns_and_values_say_what_to_choose():
    pset = synthetic_hub(n_locations=2, n_dates=2)
    with pytest.raises(cc.InputError, match="group by one of"):
        forecast_scores(pset, ["county"])
    with pytest.raises(cc.InputError, match="wis_relative"):
        forecast_heatmap(pset, "nonsense")
    with pytest.raises(cc.InputError, match="quantile forecasts"):
        forecast_rows(cc.PredictionSet(task="regression", y=np.zeros(2), point=np.zeros(2)))


def test_the_real_example_hub_gives_its_provenance_numbers(real_data_dir):
    """hubverse example-simple-forecast-hub: the per-model and per-location coverages and shares at or below the
    median that its PROVENANCE.md computed independently (pandas, inclusive interval ends, integer data)."""
    hub = real_data_dir / "hubverse_simple_forecast_hub"
    if not hub.is_dir():
        pytest.skip("the example hub is not in the real data folder")
    pset = cc.load_predictions(str(hub), truth=str(hub / "target-data" / "covid-hospitalizations.csv"))
    got = forecast_scores(pset).set_index("model").round(3)
    want = {"UMass-ar": (189, 0.503, 0.942, 0.995, 0.354), "UMass-gbq": (189, 0.439, 0.852, 0.952, 0.397),
            "simple_hub-baseline": (189, 0.815, 1.0, 1.0, 0.180)}
    for model, values in want.items():
        assert tuple(got.loc[model, ["n", "coverage_50", "coverage_90", "coverage_98", "share_le_0.5"]]) == values
    by_location = forecast_scores(pset, ["model", "location"]).set_index(["model", "location"]).round(3)
    assert tuple(by_location.loc[("UMass-gbq", "25"), ["coverage_50", "coverage_90", "share_le_0.5"]]) == \
        (0.508, 0.825, 0.175)
    assert tuple(by_location.loc[("simple_hub-baseline", "20"), ["coverage_50", "share_le_0.5"]]) == (0.968, 0.365)
    by_h = forecast_scores(pset, ["model", "horizon"])
    assert sorted(by_h["horizon"].unique()) == list(range(-6, 15))
    assert (got["bias"] < 0).all()  # every model's median too low (PROVENANCE: 18–40% at or below it)
