"""The Forecast hub page in AppTest: its empty state, its tables and charts on a synthetic hub, and the linked
selection (a heatmap cell and a horizon restrict every other view)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.app.test_pages import bins_points, decode, new_app, plotly_select, specs
from tests.hub_synthetic import synthetic_hub


def _with_hub(at, pset, token="hub-test"):
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = token
    at.session_state["pset_name"] = "synthetic hub"
    at.session_state["pset_origin"] = "upload"
    at.switch_page("pages/hub.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def hub_app():
    return _with_hub(new_app(), synthetic_hub(n_locations=5, n_dates=6))


def _model_table(at):
    return next(d.value for d in at.dataframe if "WIS" in d.value.columns)


def test_empty_state_says_how_to_load_a_hub():
    at = new_app()
    at.switch_page("pages/hub.py").run()
    assert not at.exception
    text = " ".join(i.value for i in at.info)
    assert "truth file" in text and "Data" in text
    assert not at.get("plotly_chart")


def test_the_empty_state_loads_the_example_hub_whose_calibrated_model_scores_best():
    at = new_app()
    at.switch_page("pages/hub.py").run()
    at.button(key="hub_load_example").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = _model_table(at)
    assert table["model"].tolist() == ["team1-calibrated", "team2-narrow", "team3-biased", "team4-wide"]
    assert table["forecasts"].tolist() == [384] * 4
    assert table.set_index("model")["WIS"].idxmin() == "team1-calibrated"


def test_quantile_set_without_units_gets_the_empty_state():
    pset = synthetic_hub(n_locations=2, n_dates=2)
    pset.units = None
    at = _with_hub(new_app(), pset, "no-units")
    assert "no task IDs" in " ".join(i.value for i in at.info)


def test_page_shows_the_model_table_and_every_chart(hub_app):
    table = _model_table(hub_app)
    assert table["model"].tolist() == ["calibrated", "high", "narrow"]
    assert {"WIS", "coverage 50%", "coverage 90%", "bias", "PIT departure"} <= set(table.columns)
    assert table["forecasts"].tolist() == [120, 120, 120]
    assert {"hub_wis_parts", "hub_horizon_chart", "hub_date_chart", "hub_heatmap"} <= set(specs(hub_app))
    assert hub_app.session_state["page_run_ms"]["hub"] > 0


def test_filters_restrict_the_table(hub_app):
    hub_app.multiselect(key="hub_models").set_value(["narrow"]).run()
    assert _model_table(hub_app)["model"].tolist() == ["narrow"]
    hub_app.multiselect(key="hub_locations").set_value(["01", "02"]).run()
    assert _model_table(hub_app)["forecasts"].tolist() == [48]
    hub_app.multiselect(key="hub_models").set_value(["calibrated", "high", "narrow"]).run()
    hub_app.multiselect(key="hub_locations").set_value([]).run()
    assert _model_table(hub_app)["forecasts"].tolist() == [120, 120, 120]
    # the horizon and date ranges are tested in tests/views/test_hub.py (AppTest cannot set a select_slider's range)


def test_a_heatmap_cell_and_a_horizon_restrict_the_other_views():
    at = _with_hub(new_app(), synthetic_hub(n_locations=5, n_dates=6), "sel-test")
    spec = specs(at)["hub_heatmap"]
    cell = int(decode(next(d for d in spec["data"] if d.get("meta", {}).get("name") == "cell")["customdata"])[0])
    at = plotly_select(at, "hub_heatmap", bins_points(spec, "cell", [cell]))
    table = _model_table(at)
    assert table["forecasts"].sum() < 360
    assert "Selection: location 01" in " ".join(m.value for m in at.markdown)
    horizon_spec = specs(at)["hub_horizon_chart"]
    at = plotly_select(at, "hub_horizon_chart", bins_points(horizon_spec, "horizon", [0]))
    both = _model_table(at)["forecasts"].sum()
    assert 0 < both <= table["forecasts"].sum()
    assert at.session_state["hub_sel"].bins.keys() == {"cell", "horizon"}  # the heatmap's part is kept
    heat = specs(at)["hub_heatmap"]  # restricted by the horizon, not by its own cell
    assert len(decode(next(d for d in heat["data"] if d.get("meta", {}).get("name") == "cell")["customdata"])) > 1
    dates = specs(at)["hub_date_chart"]  # another chart's selection restricts its points but dims none of them
    assert all(d.get("selectedpoints") is None for d in dates["data"])
    at.button(key="hub_clear").click().run()
    assert _model_table(at)["forecasts"].sum() == 360
    assert np.all(at.session_state["hub_sel"].empty)


def test_the_real_example_hub(real_data_dir):
    import calib_core as cc

    hub = real_data_dir / "hubverse_simple_forecast_hub"
    if not hub.is_dir():
        pytest.skip("the example hub is not in the real data folder")
    pset = cc.load_predictions(str(hub), truth=str(hub / "target-data" / "covid-hospitalizations.csv"))
    at = _with_hub(new_app(), pset, "real-hub")
    table = _model_table(at)
    assert table["model"].tolist() == ["UMass-ar", "UMass-gbq", "simple_hub-baseline"]
    assert table["coverage 50%"].round(3).tolist() == [0.503, 0.439, 0.815]
    heat = specs(at)["hub_heatmap"]
    assert heat["data"][0]["y"] == ["20", "25", "US"]  # locations as text


def test_open_these_rows_on_the_regression_page():
    at = _with_hub(new_app(), synthetic_hub(n_locations=3, n_dates=3), "open-test")
    at.multiselect(key="hub_locations").set_value(["02"]).run()
    at.button(key="hub_open_regression").click().run()
    assert not at.exception, [e.value for e in at.exception]
    focus = at.session_state["slice_focus"]
    assert focus["token"] == "open-test" and focus["n"] == 3 * 3 * 4  # 3 models × 3 dates × 4 horizons
    assert focus["label"] == "Forecast hub: location 02"
    assert "Regression diagnostics" in [t.value for t in at.title]
    assert "Restricted to the slice" in " ".join(i.value for i in at.info)
