"""views.selection_vs_all: the selection's table beside the all-rows values, built from the columns when every
selection row has one all-rows row, equals pandas' left join it replaces (values, dtypes, column order, index)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.data import templates
from views import pages as views


def _reference(selected, overall, level=0.95, several_models=False, compact=False, *, label="selection",
               keys=None) -> pd.DataFrame:
    """The left join as pandas makes it (rename, merge, columns reordered)."""
    sel_table = views.metric_table(selected, level, keys=keys, keep_model=several_models, compact=compact)
    all_table = views.metric_table(overall, level, keys=keys, keep_model=several_models)
    join = ["model", "metric"] if several_models else ["metric"]
    sel_table = sel_table.rename(columns={"value": label}).merge(
        all_table[join + ["value"]].rename(columns={"value": "all rows"}), on=join, how="left"
    )
    front = join + [label, "all rows"]
    return sel_table[front + [c for c in sel_table.columns if c not in front]]


def _load(name: str, n_rows: int = 300) -> cc.PredictionSet:
    return cc.load_predictions(templates.template_csv(name, n_rows=n_rows), source=f"{name}.csv")


@pytest.fixture(scope="module")
def reports():
    multi = _load("multi_model")
    whole = cc.diagnose(multi, n_resamples=50, n_simulations=100, seed=0)
    part = cc.diagnose(multi.take(np.arange(multi.n_rows) % 3 == 0), n_resamples=50, n_simulations=100, seed=0)
    off = cc.diagnose(multi, n_resamples=0, n_simulations=0, seed=0)
    one = multi.take(multi.model == "calibrated")
    single = cc.diagnose(one, n_resamples=50, n_simulations=100, seed=0)
    single_part = cc.diagnose(one.take(np.arange(one.n_rows) < 40), n_resamples=50, n_simulations=100, seed=0)
    probs = _load("probs")
    cls = cc.diagnose(probs, n_resamples=50, n_simulations=100, seed=0)
    cls_part = cc.diagnose(probs.take(np.arange(probs.n_rows) < 100), n_resamples=50, n_simulations=100, seed=0)
    return {"whole": whole, "part": part, "off": off, "single": single, "single_part": single_part, "cls": cls,
            "cls_part": cls_part}


def _same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert list(got.columns) == list(want.columns)
    assert [str(d) for d in got.dtypes] == [str(d) for d in want.dtypes]
    assert got.index.equals(want.index) and type(got.index) is type(want.index)


@pytest.mark.parametrize("selected, overall", [("part", "whole"), ("whole", "part"), ("off", "whole"),
                                               ("whole", "off"), ("single_part", "single"), ("cls_part", "cls"),
                                               ("cls", "cls")])
@pytest.mark.parametrize("several", [True, False])
@pytest.mark.parametrize("options", [{}, {"compact": True}, {"label": "slice"}, {"level": 0.9, "compact": True}])
def test_equals_the_left_join(reports, selected, overall, several, options):
    a, b = reports[selected].metrics, reports[overall].metrics
    _same(views.selection_vs_all(a, b, several_models=several, **options),
          _reference(a, b, several_models=several, **options))


def test_missing_or_repeated_rows_fall_back_to_the_join(reports):
    whole, part = reports["whole"].metrics, reports["part"].metrics
    fewer = whole[whole["metric"] != whole["metric"].iloc[0]]  # a selection metric without an all-rows row
    for selected, overall in [(part, fewer), (fewer, part)]:
        _same(views.selection_vs_all(selected, overall, several_models=True),
              _reference(selected, overall, several_models=True))
    # one model: the all-rows table has each metric twice (two models) → the join repeats rows
    _same(views.selection_vs_all(reports["single_part"].metrics, whole),
          _reference(reports["single_part"].metrics, whole))
    nan_model = part.assign(model=part["model"].where(part["model"] != "calibrated", None))
    _same(views.selection_vs_all(nan_model, whole, several_models=True),
          _reference(nan_model, whole, several_models=True))


def test_keys_and_scaled_values(reports):
    whole, part = reports["whole"].metrics, reports["part"].metrics
    keys = list(dict.fromkeys(part["metric"].tolist()))[::-1][:5]
    _same(views.selection_vs_all(part, whole, several_models=True, keys=keys),
          _reference(part, whole, several_models=True, keys=keys))
    scaled = whole.assign(value=whole["value"] * 2)
    t = views.selection_vs_all(scaled, whole, several_models=True)
    np.testing.assert_allclose(t["selection"], 2 * t["all rows"], equal_nan=True)
