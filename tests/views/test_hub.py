"""The Forecast hub page's view-model (``views.hub``): filter and selection masks, cell codes, tables and texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from calib_core.diagnosis.regression_hub import forecast_rows, forecast_scores
from calib_core.plots.hub import day_codes
from tests.hub_synthetic import synthetic_hub
from views import hub as hv


@pytest.fixture(scope="module")
def hub():
    pset = synthetic_hub(n_locations=4, n_dates=5)
    return pset, forecast_rows(pset)


def test_filters_keep_exactly_the_rows_they_name(hub):
    pset, rows = hub
    u = pset.units
    lo, hi = pd.Timestamp("2024-01-13"), pd.Timestamp("2024-02-03")
    filters = hv.HubFilters(models=("narrow", "high"), horizons=(1, 2), dates=(lo, hi), locations=("02", "04"))
    want = (np.isin(pset.model, ["narrow", "high"]) & u["horizon"].between(1, 2).to_numpy()
            & u["target_end_date"].between(lo, hi).to_numpy() & u["location"].isin(["02", "04"]).to_numpy())
    got = hv.row_mask(rows, filters)
    assert want.sum() > 0 and np.array_equal(got, want)
    assert hv.row_mask(rows, hv.HubFilters()).all()


def test_selection_masks_and_the_skipped_chart(hub):
    pset, rows = hub
    u = pset.units
    cells = hv.cell_codes(rows, "location", "target_end_date")
    heat = hv.heatmap_table(rows, "coverage_50", "location", "target_end_date")
    chosen_cell = int(heat["cell"].iloc[3])
    in_cell = ((u["location"] == heat["row"].iloc[3]) & (u["target_end_date"] == heat["column"].iloc[3])).to_numpy()
    assert np.array_equal(cells == chosen_cell, in_cell)
    day = int(day_codes([pd.Timestamp("2024-01-20")])[0])
    selection = {"cell": [chosen_cell], "horizon": [1, 2], "date": [day]}
    horizon = u["horizon"].isin([1, 2]).to_numpy()
    date = (u["target_end_date"] == "2024-01-20").to_numpy()
    f = hv.HubFilters()
    assert np.array_equal(hv.row_mask(rows, f, selection, cells=cells), in_cell & horizon & date)
    assert np.array_equal(hv.row_mask(rows, f, selection, cells=cells, skip="cell"), horizon & date)
    assert np.array_equal(hv.row_mask(rows, f, selection, cells=cells, skip="horizon"), in_cell & date)
    assert np.array_equal(hv.row_mask(rows, f, selection, cells=cells, skip="date"), in_cell & horizon)


def test_model_table_and_texts(hub):
    pset, rows = hub
    scores = forecast_scores(rows)
    table, helps = hv.model_table(scores, ["coverage_50", "coverage_90"])
    assert list(table.columns[:6]) == ["model", "forecasts", "WIS", "dispersion", "overprediction", "underprediction"]
    assert "coverage 90%" in table and "calibrated: 0.9" in helps["coverage 90%"]
    np.testing.assert_allclose(table["WIS"], table[["dispersion", "overprediction", "underprediction"]].sum(axis=1))
    heat = hv.heatmap_table(rows, "coverage_50", "location", "target_end_date")
    day = int(day_codes([pd.Timestamp("2024-01-20")])[0])
    text = hv.describe_hub_selection({"cell": heat["cell"].iloc[:3].tolist(), "horizon": [2], "date": [day, day + 7]},
                                     heat, 1234)
    assert text == ("Selection: location 01 × target end date 2024-01-06 (+2 cells); horizon 2; target end dates "
                    "2024-01-20 – 2024-01-27 · 1,234 forecasts")
    assert hv.describe_hub_selection({}, heat, 5) == ""
    assert hv.selection_label(text) == ("Forecast hub: location 01 × target end date 2024-01-06 (+2 cells); "
                                        "horizon 2; target end dates 2024-01-20 – 2024-01-27")
    choices = hv.filter_choices(rows)
    assert hv.describe_filters(hv.HubFilters(models=tuple(choices["models"])), choices) == ""
    filters = hv.HubFilters(models=("narrow",), horizons=(1, 2), dates=(choices["dates"][0], choices["dates"][2]),
                            locations=("02",))
    words = hv.describe_filters(filters, choices)
    assert words == "model narrow; horizons 1–2; target end dates 2024-01-06 – 2024-01-20; location 02"
    assert hv.selection_label("", words) == f"Forecast hub: {words}"
    assert hv.selection_label("", "") == "Forecast hub: all forecasts"
    assert hv.heatmap_table(rows, "coverage_33", "location", "horizon") is None
    assert hv.heatmap_center("coverage_90") == 0.9 and hv.heatmap_center("pit_departure") is None
    assert hv.interval_choices(rows)[0] == "coverage_10" and hv.interval_choices(rows)[-1] == "coverage_98"
    assert list(hv.heatmap_columns(rows).values()) == ["location", "target_end_date", "reference_date", "horizon",
                                                        "model"]


def test_what_the_page_shows_and_the_empty_states(hub):
    pset, _ = hub
    assert hv.is_hub(pset)
    assert "truth file" in hv.empty_state(None)
    point = pset.take(np.arange(3))
    point.units = None
    assert not hv.is_hub(point) and "no task IDs" in hv.empty_state(point)
