"""Headless tests of the dashboard with streamlit.testing.v1.AppTest (no browser, no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 120  # s per script run: the first run trains the example model and runs the bootstrap


def chart_specs(at: AppTest) -> list[dict]:
    """Figure JSON of every st.plotly_chart on the page, as sent to the browser."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def trace_roles(spec: dict) -> list[str]:
    return [d.get("meta", {}).get("role", "") for d in spec["data"]]


@pytest.fixture(scope="module")
def home() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    return at


def test_home_runs_without_exception_or_error(home):
    assert not home.exception, [e.value for e in home.exception]
    assert not home.error, [e.value for e in home.error]
    assert home.title[0].value == "Calibration Lab"


def test_home_shows_metric_table_with_ci_and_perfect_values(home):
    # one whole table per metric family (calibration statistics, proper scores, descriptive), then the tests
    families = [d.value for d in home.dataframe if "value" in d.value.columns]
    assert len(families) == 3
    assert {"metric", "value", "95% CI", "perfectly calibrated", "p-value", "verdict"} <= set(families[0].columns)
    for family in families:  # every cell shown is a number or empty, never "None"/"nan" (checked per table)
        for column in set(family.columns) & {"debiased", "perfectly calibrated"}:
            assert not family[column].astype(str).isin(["None", "nan", "NaN", "<NA>"]).any(), column
    # columns a family does not show (e.g. no "debiased" among descriptive metrics) are empty cells here
    table = pd.concat(families, ignore_index=True).fillna("")
    tests = next(d.value for d in home.dataframe if "test" in d.value.columns)
    assert "ENCE (Levi)" in set(tests["metric"])
    metrics = set(table["metric"])
    assert {"ENCE (Levi)", "NLL", "CRPS", "calibration RMSE", "coverage 90%"} <= metrics
    ence = table.set_index("metric").loc["ENCE (Levi)"]
    assert 0 <= ence["value"] < 5 and ence["95% CI"].startswith("[")
    # the example is over-confident: its z spread is far beyond what a calibrated model shows at N = 442 — the
    # std z test of the primary family rejects, and the sentence above the table says so
    assert table.set_index("metric").loc["std z", "verdict"] == "rejected (Holm)"
    # metrics without a debiased estimate or a perfect-calibration value show an empty cell, never "None"/"nan"
    by_metric = table.set_index("metric")
    for column in ("debiased", "perfectly calibrated"):
        cells = table[column].astype(str)
        assert not cells.isin(["None", "nan", "NaN", "<NA>"]).any(), (column, list(cells))
    assert by_metric.loc["RMSE", "debiased"] == "" and by_metric.loc["RMSE", "perfectly calibrated"] == ""
    assert float(by_metric.loc["ENCE (Levi)", "debiased"]) < ence["value"]
    assert by_metric.loc["ENCE (Levi)", "p-value"] == "5.0e-4"  # the Monte-Carlo floor, no ± s.e. in the cell
    assert any(w.value.startswith("Over-confident") for w in home.warning), [w.value for w in home.warning]


def test_home_draws_kuleshov_and_levi_side_by_side(home):
    specs = chart_specs(home)
    assert len(specs) == 6  # Kuleshov + Levi + four tabs
    kuleshov, levi = specs[0], specs[1]
    assert kuleshov["layout"]["title"]["text"] == "Quantile calibration"
    assert trace_roles(kuleshov) == ["reference", "band_low", "band_high", "curve"]
    assert levi["layout"]["title"]["text"].startswith("RMSE vs RMV")
    bins = next(d for d in levi["data"] if d["meta"]["role"] == "bins")
    assert "error_y" in bins and "customdata" in bins
    assert all(s["layout"]["template"]["layout"]["paper_bgcolor"] == "white" for s in specs)
    for c in home.get("plotly_chart"):
        assert len(c.proto.spec) < 60_000  # diagram tables, never raw rows
    keys = [c.proto.id for c in home.get("plotly_chart")]
    assert len(set(keys)) == 6


def test_switching_layout_and_rows_reruns_cleanly(home):
    home.selectbox(key="home_layout").select("Samples (50 draws)").run()
    assert not home.exception
    assert any("layout sample" in c.value for c in home.caption)
    home.segmented_control(key="home_rows").set_value("test").run()
    assert not home.exception
    assert any(c.value.startswith("221 rows") for c in home.caption)


def test_levi_example_overlays_two_models():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.selectbox(key="home_example").select("Levi et al. §4.1 synthetic — true σ vs random σ").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="home_layout").disabled
    table = at.dataframe[0].value
    assert set(table["model"]) == {"true sigma", "random sigma"}
    ence = table[table["metric"] == "ENCE (Levi)"].set_index("model")["value"]
    assert ence["random sigma"] == pytest.approx(0.84, abs=0.03) and ence["true sigma"] < 0.05
    levi = chart_specs(at)[1]
    bins = [d for d in levi["data"] if d["meta"]["role"] == "bins"]
    assert [b["name"] for b in bins] == ["true sigma", "random sigma"]
    assert bins[0]["line"]["color"] != bins[1]["line"]["color"]
