"""AppTest of the Data page's forecast-hub mode: several forecast files and a truth file uploaded, a hub folder on the
server (allowed directories only), a single hub file given to the ordinary uploader (it asks for the truth instead of
showing the column mapping), the Output type control, and what was read — in tables, never as Markdown — with the
links to the Forecast hub and Regression pages.  A bad file leaves the session working and the loaded data in place."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.app.test_pages import load_example, new_app, table
from tests.hub_io_files import (
    ROUNDS,
    UNITS_PER_MODEL,
    csv_bytes,
    model_frame,
    truth_frame,
    write_hub,
)

LEVI = "Levi et al. §4.1 synthetic — true σ vs random σ"


def _hub_upload(at, files: list[tuple[str, bytes]], truth: tuple[str, bytes] | None):
    at.switch_page("pages/data.py").run()
    if truth is not None:
        at.file_uploader(key="data_hub_truth").set_value((truth[0], truth[1], "text/csv")).run()
    at.file_uploader(key="data_hub_forecasts").set_value([(n, d, "text/csv") for n, d in files]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _files(models=("team-a", "team-b"), **kwargs) -> list[tuple[str, bytes]]:
    return [(f"{r}-{m}.csv", csv_bytes(model_frame(m, r, **kwargs))) for m in models for r in ROUNDS]


def _facts(at) -> dict[str, str]:
    facts = table(at, "what", "value")
    return dict(zip(facts["what"], facts["value"]))


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_forecast_files_and_truth_load_and_the_page_says_what_was_read():
    at = _hub_upload(new_app(), _files(), ("time-series.csv", csv_bytes(truth_frame())))
    assert not _errors(at)
    pset = at.session_state["pset"]
    assert pset.units is not None and pset.layout == "quantile"
    assert pset.n_rows == 2 * UNITS_PER_MODEL and sorted(pset.models()) == ["team-a", "team-b"]
    assert at.session_state["pset_token"].startswith("hub:")
    facts = _facts(at)
    assert facts["models"] == "team-a, team-b"
    assert facts["rounds (reference dates)"].startswith("2: 2024-01-06, 2024-01-13")
    assert facts["forecast units kept"].startswith(f"{2 * UNITS_PER_MODEL:,}")
    assert facts["locations"] == "3: 01, 02, US"  # task IDs are text: "01" keeps its zero
    assert facts["quantile levels"].startswith("7: 0.05, 0.1, 0.25, 0.5")
    assert facts["units without truth"] == "0"
    messages = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert any("output types present" in m for m in messages)
    assert not any("truth=" in m or "output_type=" in m for m in messages)  # the page's words
    links = {link.proto.page for link in at.get("page_link")}
    assert "regression" in links
    assert "hub" in links or any("Forecast hub page" in c.value for c in at.caption)  # linked once registered


def test_units_without_truth_are_counted_and_shown():
    truth = truth_frame()
    truth = truth[truth["location"] != "02"]  # no truth for location 02
    at = _hub_upload(new_app(), _files(), ("truth.csv", csv_bytes(truth)))
    assert not _errors(at)
    pset = at.session_state["pset"]
    missing = 2 * len(ROUNDS) * 3  # models × rounds × horizons at location 02
    assert pset.n_rows == 2 * UNITS_PER_MODEL - missing and pset.dropped.total == missing
    assert _facts(at)["units without truth"] == f"{missing:,}"
    assert any("truth" in str(r) for r in table(at, "reason", "rows")["reason"])


def test_forecast_files_without_truth_ask_for_it_and_keep_the_loaded_data():
    at = load_example(new_app(), LEVI)
    at = _hub_upload(at, _files(), None)
    errors = _errors(at)
    assert errors and "truth" in errors[0]
    assert "truth=" not in errors[0]  # the page's words, not the Python keyword
    assert at.session_state["pset_name"] == LEVI  # still the example
    assert any("Still using the previously loaded data" in c.value for c in at.caption)
    # the truth file given: the hub is read
    at.file_uploader(key="data_hub_truth").set_value(("ts.csv", csv_bytes(truth_frame()), "text/csv")).run()
    assert not _errors(at) and at.session_state["pset"].units is not None


def test_a_single_hub_file_in_the_prediction_uploader_asks_for_its_truth_not_a_column_mapping():
    at = new_app()
    at.switch_page("pages/data.py").run()
    name, data = _files(models=("team-a",))[0]
    at.file_uploader(key="data_upload").upload(name, data, "text/csv").run()
    assert not at.exception
    errors = _errors(at)
    assert errors and "truth" in errors[0]
    assert not [e for e in at.expander if e.label == "Column mapping"]
    truth_uploader = at.file_uploader(key="data_upload_truth")
    assert truth_uploader.label == "Truth (target data)"
    truth_uploader.set_value(("ts.csv", csv_bytes(truth_frame()), "text/csv")).run()
    assert not _errors(at)
    pset = at.session_state["pset"]
    assert pset.units is not None and pset.n_rows == UNITS_PER_MODEL // len(ROUNDS)


def test_output_type_control_reads_the_chosen_type():
    at = _hub_upload(new_app(), _files(mean_rows=True), ("ts.csv", csv_bytes(truth_frame())))
    box = at.selectbox(key="data_hub_output_type")
    assert box.options == ["quantile (the default)", "median (a point forecast)", "mean (a point forecast)"]
    assert at.session_state["pset"].layout == "quantile"
    box.set_value("mean").run()
    assert not _errors(at)
    assert at.session_state["pset"].layout == "point"
    assert at.session_state["pset_token"].endswith(":mean")


def test_a_bad_forecast_file_keeps_the_session_working():
    at = load_example(new_app(), LEVI)
    at = _hub_upload(at, [("2024-01-06-team-a.csv", b"not,a\nhub,file\n\x00\x01")],
                     ("ts.csv", csv_bytes(truth_frame())))
    assert _errors(at) and at.session_state["pset_name"] == LEVI
    good = _files()
    at.file_uploader(key="data_hub_forecasts").set_value([(n, d, "text/csv") for n, d in good]).run()
    assert not at.exception and not _errors(at)
    assert at.session_state["pset"].n_rows == 2 * UNITS_PER_MODEL


def test_hostile_model_names_are_shown_as_text():
    hostile = "![x](http://127.0.0.1/a) *b* :red[c]"
    files = [(f"{r}-x.csv", csv_bytes(model_frame(hostile, r, model_id_column=True))) for r in ROUNDS]
    at = _hub_upload(new_app(), files, ("ts.csv", csv_bytes(truth_frame())))
    assert not _errors(at)
    assert hostile in _facts(at)["models"]  # in a table cell, as written
    assert not any(hostile in m.value for m in at.markdown)


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    write_hub(allowed / "my-hub")
    (tmp_path / "outside").mkdir()
    write_hub(tmp_path / "outside" / "hub")
    monkeypatch.setenv("CALIB_LAB_DATA_DIR", str(allowed))
    return allowed


def _open_folder(at, folder: str, truth: str = ""):
    at.switch_page("pages/data.py").run()
    at.text_input(key="data_hub_path").input(folder)
    at.text_input(key="data_hub_truth_path").input(truth)
    at.button(key="data_hub_open").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_hub_folder_on_the_server_opens_with_its_target_data(hub_dir):
    at = _open_folder(new_app(), "my-hub")
    assert not _errors(at)
    pset = at.session_state["pset"]
    assert pset.n_rows == 2 * UNITS_PER_MODEL and pset.units is not None
    assert at.session_state["pset_name"] == "my-hub + time-series.csv"
    # the truth path typed, relative to the allowed directory
    at = _open_folder(new_app(), "my-hub/model-output", "my-hub/target-data/time-series.csv")
    assert not _errors(at) and at.session_state["pset"].n_rows == 2 * UNITS_PER_MODEL


def test_a_hub_folder_outside_the_allowed_directories_is_refused(hub_dir, tmp_path):
    at = load_example(new_app(), LEVI)
    for text in (str(tmp_path / "outside" / "hub"), "../outside/hub"):
        at = _open_folder(at, text)
        errors = _errors(at)
        assert errors and "allowed" in errors[0], errors
        assert at.session_state["pset_name"] == LEVI
    # a link inside the allowed folder that leads out is refused too
    (hub_dir / "link-hub").mkdir()
    (hub_dir / "link-hub" / "model-output").symlink_to(tmp_path / "outside" / "hub" / "model-output")
    at = _open_folder(at, "link-hub")
    assert _errors(at) and "symbolic link" in _errors(at)[0]
    assert at.session_state["pset_name"] == LEVI


def test_hub_folder_controls_are_absent_when_the_server_allows_nothing(monkeypatch):
    monkeypatch.delenv("CALIB_LAB_DATA_DIR", raising=False)
    at = new_app()
    at.switch_page("pages/data.py").run()
    assert not [t for t in at.text_input if t.key == "data_hub_path"]
    assert at.file_uploader(key="data_hub_forecasts").accept_multiple_files


def test_the_real_example_hub_opens_from_the_server(real_data_dir, monkeypatch):
    monkeypatch.setenv("CALIB_LAB_DATA_DIR", str(real_data_dir))
    at = _open_folder(new_app(), "hubverse_simple_forecast_hub")
    assert not _errors(at)
    pset = at.session_state["pset"]
    assert pset.n_rows == 567 and sorted(pset.models()) == ["UMass-ar", "UMass-gbq", "simple_hub-baseline"]
    assert at.session_state["pset_name"] == "hubverse_simple_forecast_hub + covid-hospitalizations.csv"
    facts = _facts(at)
    assert facts["rounds (reference dates)"] == "3: 2022-12-05, 2022-12-12, 2022-12-19"
    assert facts["locations"] == "3: 20, 25, US" and facts["quantile levels"].startswith("23: 0.01, 0.025")
    assert facts["horizons"] == "21: " + ", ".join(str(h) for h in range(-6, 15))
    assert facts["units without truth"] == "0"


def test_a_loaded_hub_is_diagnosed_on_the_regression_page_and_stays_after_page_switches():
    at = _hub_upload(new_app(), _files(), ("ts.csv", csv_bytes(truth_frame())))
    token = at.session_state["pset_token"]
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("pages/data.py").run()
    assert not at.exception and at.session_state["pset_token"] == token  # not read again, not replaced


def test_a_legacy_covid_hub_file_with_its_truth():
    rows = []
    for loc in ("01", "02"):
        for h, end in ((1, "2020-05-09"), (2, "2020-05-16")):
            for tau, v in ((0.025, 5.0), (0.5, 10.0), (0.975, 20.0)):
                rows.append(("2020-05-04", f"{h} wk ahead inc death", end, loc, "quantile", tau, v))
            rows.append(("2020-05-04", f"{h} wk ahead inc death", end, loc, "point", "NA", 10.0))
    forecast = csv_bytes(pd.DataFrame(rows, columns=["forecast_date", "target", "target_end_date", "location", "type",
                                                     "quantile", "value"]))
    truth = csv_bytes(pd.DataFrame({"date": ["2020-05-09", "2020-05-16"] * 2, "location": ["01", "01", "02", "02"],
                                    "location_name": ["Alabama", "Alabama", "Alaska", "Alaska"],
                                    "value": [8.0, 12.0, 30.0, 9.0]}))
    at = new_app()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="data_upload").upload("2020-05-04-team-legacy.csv", forecast, "text/csv").run()
    assert _errors(at) and "truth" in _errors(at)[0]
    at.file_uploader(key="data_upload_truth").set_value(("truth-Incident Deaths.csv", truth, "text/csv")).run()
    assert not at.exception and not _errors(at)
    pset = at.session_state["pset"]
    assert pset.n_rows == 4 and pset.models() == ["team-legacy"]
    facts = _facts(at)
    assert facts["horizons"] == "2: 1, 2" and facts["quantile levels"].startswith("3: 0.025, 0.5, 0.975")


def test_pmf_forecasts_load_as_ordered_categories():
    cats = ("low", "moderate", "high")
    rows = [("2024-01-06", h, loc, "wk flu category", "pmf", c, p) for h in (0, 1) for loc in ("01", "02")
            for c, p in zip(cats, (0.5, 0.3, 0.2))]
    forecast = csv_bytes(pd.DataFrame(rows, columns=["reference_date", "horizon", "location", "target", "output_type",
                                                     "output_type_id", "value"]))
    truth = csv_bytes(pd.DataFrame({"date": ["2024-01-06", "2024-01-13"] * 2, "location": ["01", "01", "02", "02"],
                                    "target": "wk flu category", "observation": ["low", "high", "moderate", "low"]}))
    at = _hub_upload(new_app(), [("2024-01-06-team-c.csv", forecast)], ("ts.csv", truth))
    assert not _errors(at)
    pset = at.session_state["pset"]
    assert pset.task == "classification" and pset.ordinal and list(pset.classes) == list(cats)
    assert _facts(at)["categories"] == "low, moderate, high"
    assert "classification" in {link.proto.page for link in at.get("page_link")}
