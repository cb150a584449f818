"""Every hostile file of ``tests/degenerate_cases.py`` through the loader, ``cc.diagnose``, ``cc.evaluate``, both HTML
reports and the command line: a diagnosis or a clear message, never a traceback; an inf / NaN metric always carries a
note (the rows that made it so, or why it is undefined); dropped rows and non-finite feature cells are counted in the
loader's messages.  The default run takes a representative subset; the whole matrix is ``slow``.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core import cli, export
from calib_core.base.predictions import InputError
from tests.degenerate_cases import CASES, DEFAULT, HOSTILE_ROW

FAST = {"n_resamples": 20, "n_simulations": 20}


def _calibrators(task: str) -> dict:
    if task == "regression":
        return {"uncalibrated": None, "std scaling": cc.StdScaling()}
    return {"uncalibrated": None, "temperature": cc.TemperatureScaling()}


def _load(name: str, frame: pd.DataFrame, task: str):
    try:
        return cc.load_predictions(frame.to_csv(index=False).encode(), task=task, source=f"{name}.csv")
    except InputError as exc:  # a clear message: names the file and what to do
        text = str(exc)
        assert f"{name}.csv" in text and "What to do" in text, text
        return None


def _core(name: str) -> None:
    frame, task = CASES[name]()
    pset = _load(name, frame, task)
    if pset is None:
        assert len(frame) < 2 or name.startswith("prob="), name  # only tiny files and invalid probabilities refused
        return
    messages = " ".join(pset.messages)
    if pset.dropped.total:  # every dropped row counted, with its file row number
        assert f"{pset.dropped.total} row(s) dropped" in messages, messages
        assert f"rows {HOSTILE_ROW + 1}" in messages, messages
    if name.startswith("feature=") and not np.isfinite(frame.loc[HOSTILE_ROW, "age"]):
        assert f"feature 'age': 1 of {len(frame)} cells are not finite numbers (row {HOSTILE_ROW + 1} (" in messages
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = cc.diagnose(pset, **FAST)
    m = report.metrics
    bad = ~np.isfinite(pd.to_numeric(m["value"], errors="coerce").to_numpy(dtype=float))
    silent = m.loc[bad & (m["note"].fillna("").astype(str) == ""), "metric"].tolist()
    assert not silent, f"{name}: inf/NaN without a note: {silent}"
    if bad.any() and "=" in name and len(pset.y if pset.y is not None else pset.labels) == 50:
        noted = " ".join(m.loc[bad, "note"].astype(str))
        if name.split("=")[1] in ("+1e300", "-1e300", "+1e308", "1e-300"):  # an extreme but kept row is named
            assert f"row {HOSTILE_ROW + 1} (" in noted, noted
    html = export.report_html(report, title=name, prediction_set=pset, figures=export.default_figures(report))
    assert "<html" in html
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cc.evaluate(pset, _calibrators(pset.task), seed=0)
    if result.summary.empty:
        assert result.messages, name  # no trial could run: the messages say why
    html = export.evaluation_report_html(pset, result, title=name, figures=export.evaluation_figures(result))
    assert "<html" in html


def _cli(name: str, tmp_path) -> None:
    frame, _ = CASES[name]()
    path = tmp_path / f"{name.replace('=', '_')}.csv"
    frame.to_csv(path, index=False)
    for argv in (["report", str(path), "--out", str(tmp_path / "r.html"), "--resamples", "20", "--simulations", "20"],
                 ["evaluate", str(path), "--out", str(tmp_path / "e.html")]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            code = cli.main([*argv, "--quiet", "--force"])
        text = err.getvalue()
        assert "internal error" not in text and "Traceback" not in text, text
        assert code in (0, 2), (code, text)
        if code == 2:  # an input error: names the file, never a library's internals
            assert path.name in text, text
            assert not re.search(r"pandas|numpy|merge on|index -?\d+ is out of bounds", text), text


@pytest.mark.parametrize("name", DEFAULT)
def test_representative_files(name, tmp_path):
    _core(name)
    _cli(name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CASES) - set(DEFAULT)))
def test_every_hostile_file(name, tmp_path):
    _core(name)
    _cli(name, tmp_path)


def test_one_row_file_is_said_as_its_size():
    frame, _ = CASES["gaussian-1row"]()
    with pytest.raises(InputError, match=r"one\.csv: the file has 1 data row\(s\); a diagnosis needs at least 2"):
        cc.load_predictions(frame.to_csv(index=False).encode(), source="one.csv")


def test_evaluate_command_on_a_file_too_small_for_any_trial(tmp_path):
    frame, _ = CASES["gaussian-3row"]()
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["evaluate", str(path), "--quiet"])
    assert code == 2
    assert err.getvalue().startswith("error: three.csv: no calibrator could be fitted and scored on held-out rows: "
                                     "model 'model': 3 row(s) give 1 calibration and 2 test row(s)")


def test_reports_of_tiny_and_one_class_files():
    # the evaluation report of a file too small for any trial: an empty comparison table, the note says why
    frame, _ = CASES["binary-2row"]()
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), source="two.csv")
    result = cc.evaluate(pset, _calibrators("classification"), seed=0)
    table, best = cc.plots.comparison_table(result)
    assert table.empty and list(table.columns) == ["metric", "better"] and best.empty
    html = export.evaluation_report_html(pset, result, title="two")
    assert "too few to recalibrate" in html
    # every probability 0 and one class: the smooth ECE has no null draws, so no null range (was an IndexError)
    frame, _ = CASES["oneclass-p0"]()
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), source="zero.csv")
    m = cc.diagnose(pset, **FAST).metrics.set_index("metric")
    assert m.loc["smooth_ece", "value"] == 0.0 and np.isnan(m.loc["smooth_ece", "perfect_low"])


def test_extreme_rows_named_in_diagnosis_and_evaluation():
    frame, _ = CASES["mean=+1e300"]()
    frame.loc[7, "y"] = -1e300
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), source="huge.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = cc.diagnose(pset, **FAST)
        result = cc.evaluate(pset, _calibrators("regression"), seed=0)
    rmse = report.metrics.set_index("metric").loc["rmse"]
    assert np.isinf(rmse["value"]) and "inf because of 2 rows: 4 (mean = 1e+300), 8 (y = -1e+300)" in rmse["note"]
    assert any("Which rows: " in n and "4 (mean = 1e+300), 8 (y = -1e+300)" in n for n in report.options["notes"])
    assert result.messages[0].startswith("2 rows: 4 (mean = 1e+300), 8 (y = -1e+300): beyond ±1.3e+154")
