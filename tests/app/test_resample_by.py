"""The "Resample by" control in AppTest: on the example hub the Forecast hub and Regression pages resample whole
reference dates by default and say so under the table (and in each hub model's verdict); independent rows or moving
blocks change the statement; the Classification page and a file without forecast dates start at independent rows, and
a file's column can be chosen; the downloads (metric CSV, page report) state the clustering."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from tests.app.test_data_fuzz import unescape
from tests.app.test_pages import DIGITS, LEVI, csv_bytes, load_example, new_app, upload
from tests.app.test_recalibrate import download

HUB_EXAMPLE = "Forecast hub — 4 synthetic models of 23 quantiles: calibrated, too narrow, biased, too wide"
BY_DATE = "Intervals and tests: whole reference_date clusters resampled (12 clusters)."
BY_ROW = "Intervals and tests: rows treated as independent."


@pytest.fixture
def captured(monkeypatch) -> dict:
    """Deferred download callables by file id, to read the downloads (as in tests/app/test_recalibrate.py)."""
    store: dict = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        store[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return store


def _captions(at) -> list[str]:
    return [unescape(c.value) for c in at.caption]


def _verdict_lines(at) -> list[str]:
    return [unescape(e.value) for e in (*at.success, *at.warning, *at.info)]


def _model_table(at):
    return next(d.value for d in at.dataframe if "WIS" in d.value.columns)


@pytest.fixture(scope="module")
def hub_app():
    at = new_app()
    at.switch_page("pages/hub.py").run()
    at.button(key="hub_load_example").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_hub_page_resamples_reference_dates_by_default_and_names_them_in_every_verdict(hub_app):
    control = hub_app.selectbox(key="hub_cluster")
    assert control.value == "auto" and control.options[:3] == [
        "auto (reference_date (forecast date))", "independent rows", "reference_date"]
    assert BY_DATE in _captions(hub_app)
    table = _model_table(hub_app)
    assert table.columns[:2].tolist() == ["model", "verdict"]
    verdicts = table.set_index("model")["verdict"]
    assert verdicts["team1-calibrated"] == "calibrated"
    assert verdicts.tolist() == ["calibrated", "miscalibrated", "miscalibrated", "miscalibrated"]
    lines = [line for line in _verdict_lines(hub_app) if line.startswith("**team")]
    assert len(lines) == 4 and all("reference_date clusters resampled (12 clusters)" in line for line in lines)
    assert "Over-confident" in next(line for line in lines if line.startswith("**team2-narrow**"))


def test_independent_rows_and_moving_blocks_change_the_statement(hub_app):
    hub_app.selectbox(key="hub_cluster").select("independent rows").run()
    assert not hub_app.exception, [e.value for e in hub_app.exception]
    assert BY_ROW in _captions(hub_app) and BY_DATE not in _captions(hub_app)
    assert not hub_app.get("toggle")  # no time column chosen: no moving blocks
    assert all("clusters" not in line for line in _verdict_lines(hub_app) if line.startswith("**team"))
    hub_app.selectbox(key="hub_cluster").select("reference_date").run()
    assert BY_DATE in _captions(hub_app)
    assert hub_app.number_input(key="hub_block_length").value == 2  # auto_block_length(12)
    assert hub_app.number_input(key="hub_block_length").disabled
    hub_app.toggle(key="hub_moving").set_value(True).run()
    assert not hub_app.exception, [e.value for e in hub_app.exception]
    assert ("Intervals and tests: moving blocks of 2 consecutive reference_date values resampled (12 values)."
            in _captions(hub_app))
    hub_app.number_input(key="hub_block_length").set_value(3).run()
    assert ("Intervals and tests: moving blocks of 3 consecutive reference_date values resampled (12 values)."
            in _captions(hub_app))
    hub_app.toggle(key="hub_moving").set_value(False).run()
    hub_app.selectbox(key="hub_cluster").select("auto (reference_date (forecast date))").run()
    assert BY_DATE in _captions(hub_app)


def test_the_regression_page_of_the_hub_resamples_reference_dates(hub_app):
    hub_app.switch_page("pages/regression.py").run()
    assert not hub_app.exception, [e.value for e in hub_app.exception]
    assert hub_app.selectbox(key="reg_cluster").value == "auto"
    assert BY_DATE in _captions(hub_app)
    hub_app.selectbox(key="reg_cluster").select("independent rows").run()
    assert not hub_app.exception, [e.value for e in hub_app.exception]
    assert BY_ROW in _captions(hub_app) and BY_DATE not in _captions(hub_app)
    hub_app.selectbox(key="reg_cluster").select("location").run()
    assert "Intervals and tests: whole location clusters resampled (8 clusters)." in _captions(hub_app)


def test_data_without_forecast_dates_start_at_independent_rows():
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="reg_cluster").options[:2] == ["auto (independent rows)", "independent rows"]
    assert BY_ROW in _captions(at)
    load_example(at, DIGITS)
    at.switch_page("pages/classification.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="cls_cluster").options[:2] == ["auto (independent rows)", "independent rows"]
    assert BY_ROW in _captions(at)


def test_the_classification_page_resamples_a_files_column_on_request(captured):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=240)
    frame = pd.DataFrame({"label": (rng.uniform(size=240) < p).astype(int), "prob_0": 1 - p, "prob_1": p,
                          "site": np.repeat(list("abcdefghijkl"), 20)})
    at = upload(new_app(), "sites.csv", csv_bytes(frame))
    at.switch_page("pages/classification.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="cls_cluster").options == ["auto (independent rows)", "independent rows", "site"]
    assert BY_ROW in _captions(at)
    at.selectbox(key="cls_cluster").select("site").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Intervals and tests: whole site clusters resampled (12 clusters)." in _captions(at)
    assert not at.get("toggle") or all(t.key != "cls_moving" for t in at.get("toggle"))  # not a time column
    # the downloads carry it: the metric CSV's resampling column and the page report's line under the metrics
    csv = pd.read_csv(io.BytesIO(download(at, captured, "classification_dl_metrics")))
    assert set(csv["resampling"]) == {"whole site clusters resampled (12 clusters)"}
    report = download(at, captured, "classification_dl_report")
    assert "Intervals and tests: whole site clusters resampled (12 clusters)." in report
