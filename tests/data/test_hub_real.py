"""The real hubverse example hub (../shared/data/real/hubverse_simple_forecast_hub, PROVENANCE.md): read with no
mapping, its sanity numbers, and a cross-check against hubverse's own reader (hubdata)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.data.hub import read_hub

HUB = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real" / "hubverse_simple_forecast_hub"
TRUTH = HUB / "target-data" / "covid-hospitalizations.csv"
pytestmark = pytest.mark.skipif(not HUB.is_dir(), reason=f"real hub not present at {HUB}")

LEVELS = [0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85,
          0.9, 0.95, 0.975, 0.99]


@pytest.fixture(scope="module")
def hub_set() -> cc.PredictionSet:
    return cc.load_predictions(HUB, truth=TRUTH)


def test_the_real_hub_loads_with_no_mapping(hub_set):
    ps = hub_set
    assert (ps.task, ps.layout) == ("regression", "quantile")
    assert ps.dist.levels.tolist() == pytest.approx(LEVELS)
    assert ps.n_read == ps.n_rows == 567 and ps.dropped.total == 0  # 0 unmatched (PROVENANCE: join)
    assert pd.Series(ps.model).value_counts().to_dict() == {"UMass-ar": 189, "UMass-gbq": 189,
                                                            "simple_hub-baseline": 189}
    assert set(ps.units["location"]) == {"20", "25", "US"} and set(ps.units["horizon"]) == set(range(-6, 15))
    assert ps.units["horizon"].dtype == np.int64
    # the round is the origin_date column (a week after the file-name date), target_end_date = origin + horizon days
    assert sorted(ps.units["origin_date"].dt.strftime("%Y-%m-%d").unique()) == ["2022-12-05", "2022-12-12",
                                                                                "2022-12-19"]
    step = (ps.units["target_end_date"] - ps.units["origin_date"]).dt.days.to_numpy()
    assert np.array_equal(step, ps.units["horizon"].to_numpy())
    assert np.array_equal(ps.units["reference_date"], ps.units["origin_date"])
    assert np.array_equal(ps.time, ps.units["target_end_date"].to_numpy())
    assert ps.time.min() == np.datetime64("2022-11-29") and ps.time.max() == np.datetime64("2023-01-02")
    assert {"location", "horizon", "target"} <= set(ps.slice_columns.columns)
    text = " ".join(map(str, ps.messages))
    assert "567 of 567 forecast units matched" in text and "every model in every round" in text


def test_the_real_hub_gives_the_provenance_sanity_numbers(hub_set):
    ps = hub_set
    lv = np.asarray(ps.dist.levels)
    q = ps.dist.values
    col = {round(v, 3): i for i, v in enumerate(lv)}
    expected = {  # model: below q0.05, above q0.95, cov50, cov90, cov98, share y ≤ median, MAE of the median
        "UMass-ar": (0.032, 0.026, 0.503, 0.942, 0.995, 0.354, 269.6),
        "UMass-gbq": (0.026, 0.122, 0.439, 0.852, 0.952, 0.397, 311.5),
        "simple_hub-baseline": (0.000, 0.000, 0.815, 1.000, 1.000, 0.180, 324.7),
    }
    for model, numbers in expected.items():
        s = ps.model == model
        y, qs = ps.y[s], q[s]

        def cov(lo, hi, y=y, qs=qs):
            return np.mean((qs[:, col[lo]] <= y) & (y <= qs[:, col[hi]]))

        got = (np.mean(y < qs[:, col[0.05]]), np.mean(y > qs[:, col[0.95]]), cov(0.25, 0.75), cov(0.05, 0.95),
               cov(0.01, 0.99), np.mean(y <= qs[:, col[0.5]]), np.mean(np.abs(y - qs[:, col[0.5]])))
        assert got[:6] == pytest.approx(numbers[:6], abs=6e-4), model
        assert got[6] == pytest.approx(numbers[6], abs=0.06), model


def test_one_model_folder_and_the_model_output_folder_read_the_same_units():
    one = read_hub(HUB / "model-output" / "UMass-gbq", TRUTH)
    assert one.n_rows == 189 and set(one.model) == {"UMass-gbq"}
    every = read_hub(HUB / "model-output", TRUTH)
    assert every.n_rows == 567


def test_hubdata_reads_the_same_model_output_rows(hub_set):
    hubdata = pytest.importorskip("hubdata")
    try:
        conn = hubdata.connect_hub(str(HUB))
        theirs = conn.get_dataset().to_table().to_pandas()
    except Exception as exc:  # noqa: BLE001 - any failure to open the hub offline is a reason to skip
        pytest.skip(f"hubdata cannot open the hub offline: {type(exc).__name__}: {str(exc)[:160]}")
    theirs = theirs.loc[theirs["output_type"] == "quantile"]
    assert len(theirs) == 13_041
    ps = hub_set
    ours = pd.DataFrame({"model_id": np.repeat(ps.model, len(ps.dist.levels)),
                         "location": np.repeat(ps.units["location"].to_numpy(), len(ps.dist.levels)),
                         "horizon": np.repeat(ps.units["horizon"].to_numpy(), len(ps.dist.levels)),
                         "origin_date": np.repeat(ps.units["origin_date"].dt.strftime("%Y-%m-%d").to_numpy(),
                                                  len(ps.dist.levels)),
                         "level": np.tile(np.round(ps.dist.levels, 4), ps.n_rows),
                         "value": ps.dist.values.ravel()})
    theirs = pd.DataFrame({"model_id": theirs["model_id"].astype(str), "location": theirs["location"].astype(str),
                           "horizon": theirs["horizon"].astype(np.int64),
                           "origin_date": pd.to_datetime(theirs["origin_date"]).dt.strftime("%Y-%m-%d"),
                           "level": np.round(theirs["output_type_id"].astype(float), 4),
                           "value": theirs["value"].astype(float)})
    keys = ["model_id", "origin_date", "horizon", "location", "level"]
    merged = ours.merge(theirs, on=keys, how="outer", indicator=True, suffixes=("_ours", "_theirs"))
    assert (merged["_merge"] == "both").all()
    assert np.array_equal(merged["value_ours"].to_numpy(), merged["value_theirs"].to_numpy())
