"""AppTests of large data in the dashboard: the Data page opens a Parquet data set under the
directory the operator allows (and refuses anything else with what is allowed), or a summary file; the Regression
and Classification pages draw from the summary, a bin selection redraws the linked views from it, and the metric
tables say which numbers are exact and which carry a bound."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.scale import summary as S
from tests.app.test_pages import bins_points, new_app, plotly_select, specs, table
from tests.scale.test_summary import classification_set, gaussian_set
from views import pages as page_views


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
    assert any("3 file(s)" in c.value and "the embedded engine in this server process" in c.value
               for c in at.caption)  # no cluster configured: the embedded engine
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
    mask = page_views.sigma_bin_rows(pset, {model: (2, 3)}, 15, "count")
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


def test_summary_pages_show_a_chosen_group_as_the_diagnosis_of_its_rows():
    pset = gaussian_set(24_000, seed=7, scale=1.2, groups=True)
    summary = S.summarize(pset, spec=S.spec_for(pset))
    at = _with_summary(summary, "pages/regression.py")
    group_box = at.selectbox(key="regsum_group")
    assert list(group_box.options) == [page_views.group_label(cc.ALL), "a", "b"] and not group_box.disabled
    group_box.set_value("a").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    rows = pset.take(pset.group == "a")
    ref = cc.diagnose(rows, n_resamples=0, n_simulations=0)
    metrics = table(at, "metric", "value", "from the summary")
    rmse = float(metrics.loc[metrics["metric"] == "RMSE", "value"].iloc[0])
    assert rmse == pytest.approx(ref.value("rmse"), rel=1e-3)  # shown to 4 significant digits
    assert rmse != pytest.approx(cc.diagnose(pset, n_resamples=0, n_simulations=0).value("rmse"), rel=1e-3)
    # a σ-bin selection inside the group: the group's own σ-bins, its rows only
    model = summary.models[0]
    plotly_select(at, "regsum_levi_chart", bins_points(specs(at)["regsum_levi_chart"], model, [0, 1]))
    mask = page_views.sigma_bin_rows(rows, {model: (0, 1)}, 15, "count")
    assert any(f"{int(mask.sum()):,} rows selected" in m.value for m in at.markdown)
    sel = table(at, "metric", "selection", "all rows")
    got = float(sel.loc[sel["metric"] == "RMSE", "selection"].iloc[0])
    assert got == pytest.approx(cc.diagnose(rows.take(mask), n_resamples=0, n_simulations=0).value("rmse"),
                                rel=1e-12)


def test_classification_summary_page_has_the_positive_class_view_and_its_exact_ratio():
    pset = classification_set(20_000, 2, seed=8)
    summary = S.summarize(pset, spec=S.spec_for(pset))
    at = _with_summary(summary, "pages/classification.py")
    metrics = table(at, "metric", "value", "from the summary")
    ex = dict(zip(metrics["metric"], metrics["from the summary"]))
    ratio_label = next(m for m in ex if "positive" in m and "ratio" in m)
    assert ex[ratio_label] == "exact"
    ref = cc.diagnose(pset, n_resamples=0, n_simulations=0)
    shown = float(metrics.loc[metrics["metric"] == ratio_label, "value"].iloc[0])
    assert shown == pytest.approx(ref.value("calibration_ratio_positive"), rel=1e-3)
    target = at.segmented_control(key="clssum_target")
    assert not target.disabled
    target.set_value("positive class").run()
    assert not at.exception and not at.error
    model = summary.models[0]
    points = bins_points(specs(at)["clssum_rel_chart"], model, [4], role="column")
    plotly_select(at, "clssum_rel_chart", points)
    selected = table(at, "bin", "rows", "frequency of y = 1")
    pos = ref.diagrams[(model, cc.ALL)]["reliability_positive"]
    assert int(selected["rows"].iloc[0]) == int(pos["count"].iloc[4])
    assert float(selected["frequency of y = 1"].iloc[0]) == pytest.approx(float(pos["accuracy"].iloc[4]), rel=1e-12)
    # a K = 5 summary has no positive class: the control is off
    five = classification_set(3000, 5, seed=9)
    at = _with_summary(S.summarize(five, spec=S.spec_for(five)), "pages/classification.py")
    assert at.segmented_control(key="clssum_target").disabled


@pytest.fixture
def captured(monkeypatch) -> dict:
    """Deferred download callables by file id (as in test_recalibrate_page), to read the downloads."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    store: dict = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        store[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return store


@pytest.mark.parametrize("page, prefix", [("pages/regression.py", "regsum"), ("pages/classification.py", "clssum")])
def test_summary_pages_export_the_metric_table_a_figure_and_the_page_report(page, prefix, captured):
    import io

    from tests.app.test_recalibrate import download

    pset = gaussian_set(8000, seed=5) if prefix == "regsum" else classification_set(8000, 3, seed=5)
    at = _with_summary(S.summarize(pset, spec=S.spec_for(pset)), page)
    csv = pd.read_csv(io.BytesIO(download(at, captured, f"{prefix}_dl_metrics")))
    assert {"metric", "value", "from_summary"} <= set(csv.columns)
    kinds = dict(zip(csv["metric"], csv["from_summary"]))
    if prefix == "regsum":
        assert kinds["rmse"] == "exact" and kinds["max_calibration_deviation"].startswith("bound [")
        assert kinds["spearman_sigma_abs_error"] == "needs the rows"
        assert csv.loc[csv["metric"] == "rmse", "value"].iloc[0] == pytest.approx(
            cc.diagnose(pset, n_resamples=0, n_simulations=0).value("rmse"), rel=1e-12)
    else:
        assert kinds["ece"] == "exact" and kinds["smooth_ece"] == "needs the rows"
    fig_html = download(at, captured, f"{prefix}_dl_figure")
    assert b"plotly" in fig_html.lower() if isinstance(fig_html, bytes) else "plotly" in fig_html.lower()
    report = download(at, captured, f"{prefix}_dl_report")
    text = report.decode() if isinstance(report, bytes) else report
    assert "Drawn from a summary of 8,000 rows" in text and "test.summary" in text


def test_data_page_summarises_an_ensemble_data_set_in_the_server_process(data_dir):
    allowed, _ = data_dir
    rng = np.random.default_rng(12)
    n = 3000
    mu = rng.standard_normal(n)
    frame = pd.DataFrame({"y": mu + 1.3 * rng.standard_normal(n)})
    for j in range(8):
        frame[f"member_{j}"] = mu + rng.standard_normal(n)
    frame.to_parquet(allowed / "ensemble.parquet", row_group_size=1000)
    at = _open(new_app(), "ensemble.parquet")
    assert not at.error, [e.value for e in at.error]
    summary = at.session_state["summary"]
    assert summary.spec.layout == "sample" and summary.n_rows == n
    at.switch_page("pages/regression.py").run()
    assert not at.exception and not at.error
    assert {"regsum_levi_chart", "regsum_kuleshov", "regsum_pit"} <= set(specs(at))
