"""views.loading for forecast hubs: a hub folder and its truth on the server only under the allowed directories (no
``..``, no link that leads out), the hub's target-data truth found, the Output type control's keyword, the page's
wording of the reader's hints, and what was read as a table."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from calib_core.base.predictions import DropReport, InputError, PredictionSet
from calib_core.base.regression import QuantileSet
from tests.hub_io_files import write_hub
from views import loading


@pytest.fixture
def allowed(tmp_path):
    root = tmp_path / "allowed"
    write_hub(root / "my-hub")
    write_hub(tmp_path / "outside")
    return [root.resolve()]


def test_a_hub_folder_resolves_inside_the_allowed_directories(allowed):
    folder = loading.resolve_hub_folder("my-hub", allowed)
    assert folder == allowed[0] / "my-hub"
    assert loading.resolve_hub_folder(str(allowed[0] / "my-hub" / "model-output"), allowed).name == "model-output"
    assert loading.hub_truth_file(folder) == folder / "target-data" / "time-series.csv"
    assert loading.hub_truth_file(folder / "model-output") == folder / "target-data" / "time-series.csv"
    truth = loading.resolve_truth_file("my-hub/target-data/time-series.csv", allowed)
    assert truth == folder / "target-data" / "time-series.csv"


@pytest.mark.parametrize("text, words", [
    ("../outside", "'..'"),
    ("{outside}", "outside the allowed"),
    ("", "no folder given"),
    ("no-such-hub", "no such folder"),
    ("my-hub/target-data/time-series.csv", "not a folder"),
])
def test_anything_else_is_refused_with_what_is_allowed(allowed, tmp_path, text, words):
    with pytest.raises(InputError, match=words):
        loading.resolve_hub_folder(text.format(outside=tmp_path / "outside"), allowed)


def test_a_link_that_leads_out_and_a_server_that_allows_nothing_are_refused(allowed, tmp_path):
    (allowed[0] / "linked").mkdir()
    os.symlink(tmp_path / "outside" / "model-output", allowed[0] / "linked" / "model-output")
    with pytest.raises(InputError, match="symbolic link"):
        loading.resolve_hub_folder("linked", allowed)
    with pytest.raises(InputError, match="switched off"):
        loading.resolve_hub_folder("my-hub", [])
    (allowed[0] / "empty").mkdir()
    with pytest.raises(InputError, match="no forecast file"):
        loading.resolve_hub_folder("empty", allowed)


def test_the_truth_of_target_data_prefers_the_time_series(tmp_path):
    hub = tmp_path / "hub"
    (hub / "target-data").mkdir(parents=True)
    assert loading.hub_truth_file(hub) is None
    for name in ("oracle-output.csv", "b.csv"):
        (hub / "target-data" / name).write_text("x\n")
    assert loading.hub_truth_file(hub).name == "oracle-output.csv"
    (hub / "target-data" / "oracle-output.csv").unlink()
    assert loading.hub_truth_file(hub).name == "b.csv"  # the only table
    (hub / "target-data" / "c.parquet").write_text("x\n")
    assert loading.hub_truth_file(hub) is None  # several, none of the hubverse names: the user names it


def test_output_type_option():
    assert loading.output_type_option(["quantile", "median", "mean"], "mean") == "mean"
    assert loading.output_type_option(["quantile"], "mean") is None  # not in the files: the reader's default
    assert loading.output_type_option([], "sample") == "sample"  # a server folder: types not known beforehand
    assert loading.output_type_option([], "nonsense") is None


def test_the_page_wording_of_the_readers_hints():
    text = ("this is a forecast-hub file: give its truth (target data) file too — `truth=` / CLI --truth / Data page "
            "truth file. What to do: pass truth=<target-data file>, or on the command line --truth <file>; "
            "not read: mean (choose with output_type=…) or output_type='mean'")
    page = loading.hub_page_message(text)
    assert "truth=" not in page and "--truth" not in page and "output_type=" not in page
    assert "Truth (target data)" in page and "Output type mean" in page


def test_hub_facts_say_what_was_read():
    n = 6
    units = pd.DataFrame({"reference_date": pd.to_datetime(["2024-01-06"] * 3 + ["2024-01-13"] * 3),
                          "horizon": np.array([0, 1, 2] * 2, dtype=np.int64), "location": ["01", "02", "US"] * 2,
                          "target": "wk inc flu hosp",
                          "target_end_date": pd.to_datetime(["2024-01-06", "2024-01-13", "2024-01-20"] * 2)})
    levels = np.array([0.25, 0.5, 0.75])
    dist = QuantileSet(levels, np.zeros((n, 1)) + np.array([-1.0, 0.0, 1.0]))
    dropped = DropReport()
    dropped.add("no truth value in truth.csv for these forecast units", np.array([7, 8]))
    pset = PredictionSet(task="regression", layout="quantile", y=np.zeros(n), dist=dist, units=units,
                         model=np.array(["a", "b"] * 3), n_read=n + 2, dropped=dropped, source="hub")
    assert loading.is_hub_set(pset)
    facts = loading.hub_facts(pset)
    got = dict(zip(facts["what"], facts["value"]))
    assert got["models"] == "a, b"
    assert got["rounds (reference dates)"] == "2: 2024-01-06, 2024-01-13"
    assert got["forecast units read"] == "8" and got["forecast units kept"].startswith("6 ")
    assert got["horizons"] == "3: 0, 1, 2" and got["locations"] == "3: 01, 02, US"
    assert got["target end dates"] == "2024-01-06 … 2024-01-20"
    assert got["quantile levels"] == "3: 0.25, 0.5, 0.75"
    assert got["units without truth"] == "2" and got["rows dropped (all reasons)"] == "2"
