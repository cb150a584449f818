"""AppTests of large data in the dashboard (issue 13, point 5): the Data page opens a Parquet data set under the
directory the operator allows (and refuses anything else with what is allowed), or a summary file; the Regression
and Classification pages draw from the summary, a bin selection redraws the linked views from it, and the metric
tables say which numbers are exact and which carry a bound."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core import summary as S
from tests.test_app_pages import bins_points, new_app, plotly_select, specs, table
from tests.test_summary import classification_set, gaussian_set


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    (allowed / "runs").mkdir(parents=True)
    rng = np.random.default_rng(11)
    frames = []
    for i in range(3):
        n = 4000
        mu = rng.standard_normal(n)
        sd = np.exp(0.5 * rng.standard_normal(n))
        frames.append(pd.DataFrame({"y": mu + sd ** 1.3 * rng.standard_normal(n), "mean": mu, "std": sd}))
        frames[-1].to_parquet(allowed / "runs" / f"part-{i}.parquet", row_group_size=1500)
    (tmp_path / "outside").mkdir()
    frames[0].to_parquet(tmp_path / "outside" / "other.parquet")
    monkeypatch.setenv("CALIB_LAB_DATA_DIR", str(allowed))
    monkeypatch.delenv("CALIB_LAB_DASK_SCHEDULER", raising=False)
    return allowed, pd.concat(frames, ignore_index=True)


def _open(at, text: str):
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_server_path").input(text).run()
    at.button(key="data_server_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_data_page_summarises_a_parquet_glob_under_the_allowed_dir(data_dir):
    allowed, frame = data_dir
    at = _open(new_app(), "runs/*.parquet")
    assert not at.error, [e.value for e in at.error]
    summary = at.session_state["summary"]
    assert summary.n_rows == len(frame) and "pset" not in at.session_state
    facts = table(at, "property", "value")
    assert dict(zip(facts["property"], facts["value"]))["rows summarised"] == f"{len(frame):,}"
    assert any("3 file(s)" in c.value and "in this server process" in c.value for c in at.caption)
    assert any(f"{len(frame):,}" in m.value and "summary" in m.value for m in at.markdown)
    # the summary is the in-memory one of the same rows: its report equals cc.diagnose of the concatenated rows
    ref = cc.diagnose(cc.load_predictions(frame.to_parquet(), source="all.parquet"), n_resamples=0, n_simulations=0)
    got = S.report(summary, n_resamples=0, n_simulations=0)
    for key in ("rmse", "nll", "crps", "ence", "coverage_90", "z_std", "calibration_rmse"):
        assert got.value(key) == pytest.approx(ref.value(key), rel=1e-12), key
    at.switch_page("pages/regression.py").run()
    assert not at.exception and not at.error
    assert {"regsum_levi_chart", "regsum_kuleshov", "regsum_pit", "regsum_z"} <= set(specs(at))


@pytest.mark.parametrize("text", ["../outside/other.parquet", "{outside}/other.parquet", "/*/*.parquet"])
def test_data_page_refuses_paths_outside_and_keeps_the_loaded_data(data_dir, text):
    allowed, _ = data_dir
    at = _open(new_app(), "runs/part-0.parquet")
    before = at.session_state["summary"]
    at = _open(at, text.format(outside=allowed.parent / "outside"))
    message = at.error[0].value.replace("\\", "")  # the page shows it Markdown-escaped
    assert str(allowed) in message and "CALIB_LAB_DATA_DIR" in message, message
    assert at.session_state["summary"] is before  # what was loaded stays


def test_without_an_allowed_dir_the_path_box_is_off_and_says_how_to_allow(monkeypatch):
    monkeypatch.delenv("CALIB_LAB_DATA_DIR", raising=False)
    at = new_app()
    at.switch_page("pages/data.py").run()
    assert at.text_input(key="data_server_path").disabled and at.button(key="data_server_open").disabled
    assert any("off" in c.value and "CALIB_LAB_DATA_DIR" in c.value.replace("\\", "") for c in at.caption)


def test_data_page_opens_a_summary_file_by_upload_and_by_path(data_dir):
    allowed, _ = data_dir
    pset = gaussian_set(5000, seed=3)
    data = S.summarize(pset, spec=S.spec_for(pset)).to_bytes()
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_summary_upload").upload("run.summary", data, "application/zip").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["summary"].n_rows == 5000 and at.session_state["summary_name"] == "run.summary"
    (allowed / "saved.summary").write_bytes(data)
    at = _open(new_app(), "saved.summary")
    assert not at.error and at.session_state["summary_name"] == "saved.summary"


def test_a_bad_summary_file_gives_a_message_and_keeps_the_data(data_dir):
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_summary_upload").upload("bad.summary", b"PK\x03\x04garbage" * 10,
                                                       "application/zip").run()
    assert not at.exception
    assert "bad.summary" in at.error[0].value and "summary" in at.error[0].value
    at.file_uploader(key="data_summary_upload").upload("data.summary", b"PAR1" + b"\0" * 64,
                                                       "application/zip").run()
    assert "Parquet file" in at.error[0].value and "--save-summary" in at.error[0].value
    assert "summary" not in at.session_state


def _with_summary(summary, page: str):
    at = new_app()
    at.session_state["summary"] = summary
    at.session_state["summary_token"] = f"summary:test:{uuid.uuid4().hex}"  # caches are keyed on it
    at.session_state["summary_name"] = "test.summary"
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_regression_page_from_a_summary_redraws_a_sigma_bin_selection():
    pset = gaussian_set(30_000, seed=4, scale=1.2)
    summary = S.summarize(pset, spec=S.spec_for(pset))
    at = _with_summary(summary, "pages/regression.py")
    assert not at.error
    metrics = table(at, "metric", "value", "from the summary")
    ex = dict(zip(metrics["metric"], metrics["from the summary"]))
    assert ex["RMSE"] == "exact" and ex["Spearman ρ(σ, |ε|)"] == "needs the rows"
    assert ex["max deviation (KS)"].startswith("bound [")
    model = summary.models[0]
    plotly_select(at, "regsum_levi_chart", bins_points(specs(at)["regsum_levi_chart"], model, [2, 3]))
    names = [d.get("name") for d in specs(at)["regsum_kuleshov"]["data"]]
    assert f"{model} · selected" in names
    mask = cc.views.sigma_bin_rows(pset, {model: (2, 3)}, 15, "count")
    assert any(f"{int(mask.sum()):,} rows selected" in m.value for m in at.markdown)
    sel = table(at, "metric", "selection", "all rows")
    ref = cc.diagnose(pset.take(mask), n_resamples=0, n_simulations=0)
    rmse = float(sel.loc[sel["metric"] == "RMSE", "selection"].iloc[0])
    assert rmse == pytest.approx(ref.value("rmse"), rel=1e-12)
    assert any("not in a summary" in i.value for i in at.info)  # rows of the selection: said, not failed
    assert at.session_state["page_run_ms"]["regression"] > 0


def test_classification_page_from_a_summary_redraws_a_confidence_bin_selection():
    pset = classification_set(20_000, 5, seed=6)
    summary = S.summarize(pset, spec=S.spec_for(pset))
    at = _with_summary(summary, "pages/classification.py")
    assert not at.error
    assert {"clssum_rel_chart", "clssum_hist_chart", "clssum_per_class"} <= set(specs(at))
    metrics = table(at, "metric", "value", "from the summary")
    assert "exact" in set(metrics["from the summary"]) <= {"exact", "needs the rows"}
    model = summary.models[0]
    points = bins_points(specs(at)["clssum_rel_chart"], model, [12], role="column")
    plotly_select(at, "clssum_rel_chart", points)
    selected = table(at, "bin", "rows", "accuracy")
    rel = cc.diagnose(pset, n_resamples=0, n_simulations=0).diagrams[(model, cc.ALL)]["reliability"]
    assert int(selected["rows"].iloc[0]) == int(rel["count"].iloc[12])
    assert any("per-class breakdown" in i.value for i in at.info)


def test_pages_that_need_rows_say_so_with_a_summary_loaded():
    pset = gaussian_set(3000, seed=1)
    at = _with_summary(S.summarize(pset, spec=S.spec_for(pset)), "pages/classification.py")
    assert any("summary" in w.value and "regression" in w.value for w in at.warning)
    at.switch_page("pages/recalibrate.py").run()
    assert not at.exception
    assert any("a summary holds none" in i.value for i in at.info)
