"""A model with too few rows for a calibration/test split is named and skipped, not fatal: in
``cc.evaluate`` (both halves) and on the Recalibrate page, the other models are still recalibrated exactly as on
their own."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.base.protocol import MIN_SPLIT_ROWS
from calib_core.calibrators.registry import available_calibrators

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "recalibrate.py")


def _load(frame: pd.DataFrame, name: str) -> cc.PredictionSet:
    return cc.load_predictions(io.BytesIO(frame.to_csv(index=False).encode()), source=name)


def _regression(n_big: int = 150, n_tiny: int = 2, seed: int = 0, split: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_big + n_tiny
    mean = rng.normal(size=n)
    frame = pd.DataFrame({"y": mean + 1.5 * rng.normal(size=n), "mean": mean, "std": np.ones(n),
                          "model": ["big"] * n_big + ["tiny"] * n_tiny})
    if split:
        frame["split"] = ["cal", "test"] * (n_big // 2) + ["cal"] * n_tiny  # tiny: calibration rows only
    return frame


def _calibrators(task: str) -> dict:
    return {"uncalibrated": None, **{e.name: e.make() for e in available_calibrators(task) if e.default}}


def _same_as_alone(result: cc.EvaluationResult, pset: cc.PredictionSet, **kw) -> None:
    alone = cc.evaluate(pset.take(pset.model == "big"), _calibrators(pset.task), **kw)
    mine = result.long[result.long["model"] == "big"].reset_index(drop=True)
    theirs = alone.long.reset_index(drop=True)
    pd.testing.assert_frame_equal(mine.drop(columns="value"), theirs.drop(columns="value"))
    assert_allclose(mine["value"].to_numpy(float), theirs["value"].to_numpy(float), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("n_tiny", [1, 2, 3])
def test_a_tiny_model_is_named_and_skipped_in_a_random_split(n_tiny):
    pset = _load(_regression(n_tiny=n_tiny), "two_models.csv")
    # 1 row: 'a random split needs at least 2 rows'; 2 rows: ZeroDivisionError in the test rows' reliability score
    result = cc.evaluate(pset, _calibrators("regression"), split="random", repeats=3, seed=1, diagrams=True)
    n_test = int(np.clip(round(0.5 * n_tiny), 1, n_tiny - 1)) if n_tiny > 1 else 0
    assert (f"model 'tiny': {n_tiny} row(s) give {n_tiny - n_test} calibration and {n_test} test row(s) at test "
            f"fraction 0.5 — too few to recalibrate (at least {MIN_SPLIT_ROWS} of each are needed); skipped, the other "
            "models are recalibrated") in result.messages
    assert set(result.long["model"]) == {"big"}
    assert set(result.diagrams["big"]) == set(_calibrators("regression")) and not result.diagrams.get("tiny")
    assert (result.split_labels[pset.model == "big"] != "").all()
    _same_as_alone(result, pset, split="random", repeats=3, seed=1)


def test_a_model_without_test_rows_in_the_split_column_is_skipped():
    pset = _load(_regression(n_tiny=5, split=True), "split.csv")
    result = cc.evaluate(pset, _calibrators("regression"), split="column")
    assert ("model 'tiny': the split column gives 5 calibration and 0 test row(s) — too few to recalibrate (at least "
            f"{MIN_SPLIT_ROWS} of each are needed); skipped, the other models are recalibrated") in result.messages
    assert set(result.long["model"]) == {"big"}
    _same_as_alone(result, pset, split="column")


def test_a_two_row_file_gives_a_message_and_no_result():
    pset = _load(_regression(n_big=0, n_tiny=2).assign(model="only"), "two_rows.csv")
    result = cc.evaluate(pset, _calibrators("regression"), split="random")
    assert result.long.empty
    assert result.messages == ["model 'only': 2 row(s) give 1 calibration and 1 test row(s) at test fraction 0.5 — too "
                               f"few to recalibrate (at least {MIN_SPLIT_ROWS} of each are needed); skipped"]


def test_classification_tiny_model_is_skipped():
    rng = np.random.default_rng(3)
    n = 152
    probs = rng.dirichlet(np.ones(3), n)
    labels = np.array([rng.choice(3, p=p) for p in probs])
    frame = pd.DataFrame({"y": labels, **{f"p_{k}": probs[:, k] for k in range(3)},
                          "model": ["big"] * 150 + ["tiny"] * 2})
    pset = _load(frame, "cls.csv")
    result = cc.evaluate(pset, _calibrators("classification"), split="random", repeats=2, diagrams=True)
    assert any(m.startswith("model 'tiny': 2 row(s) give 1 calibration and 1 test row(s)") for m in result.messages)
    assert set(result.long["model"]) == {"big"}
    _same_as_alone(result, pset, split="random", repeats=2, diagrams=True)  # as result


def test_recalibrate_page_names_the_skipped_model_and_compares_the_others():
    at = AppTest.from_file(PAGE, default_timeout=240)
    pset = _load(_regression(n_tiny=2), "two models.csv")
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = "upload:two-models"
    at.session_state["pset_name"] = "two models.csv"
    at.run()
    assert not at.exception
    at.multiselect(key="recal_cals_regression").set_value(["std scaling"]).run()
    at.number_input(key="recal_repeats").set_value(2).run()
    next(b for b in at.button if b.label == "Run comparison").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("model 'tiny': 2 row(s) give 1 calibration and 1 test row(s)") for w in warnings)
    table = at.dataframe[0].value
    assert "model" not in table.columns  # one model was compared: no model column
    assert list(table["calibrator"]) == ["uncalibrated", "std scaling"]
    assert set(at.session_state["recal_result"]["result"].long["model"]) == {"big"}
    assert at.get("plotly_chart")  # the before/after diagrams of the model that was recalibrated


def test_recalibrate_page_with_a_two_row_file_says_why_nothing_was_compared():
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["pset"] = _load(_regression(n_big=0, n_tiny=2), "tiny.csv")
    at.session_state["pset_token"] = "upload:tiny"
    at.session_state["pset_name"] = "tiny.csv"
    at.run()
    assert not at.exception
    next(b for b in at.button if b.label == "Run comparison").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("model 'tiny': 2 row(s) give 1 calibration and 1 test row(s)" in w.value for w in at.warning)
    assert [e.value for e in at.error] == ["No calibrator could be evaluated (see the messages above)."]


def test_cli_evaluate_names_the_skipped_model(tmp_path, capsys):
    from calib_core import cli

    path = tmp_path / "two.csv"
    _regression(n_tiny=2).to_csv(path, index=False)
    out = tmp_path / "two.html"
    assert cli.main(["evaluate", str(path), "--out", str(out)]) == 0  # exit 1 (internal error) before
    captured = capsys.readouterr()
    note = ("model 'tiny': 2 row(s) give 1 calibration and 1 test row(s) at test fraction 0.5 — too few to "
            "recalibrate (at least 2 of each are needed); skipped, the other models are recalibrated")
    assert f"note: {note}" in captured.out and captured.err == ""
    assert note.replace("'", "&#x27;") in out.read_text(encoding="utf-8")
