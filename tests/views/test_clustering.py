"""The "Resample by" control's view-model (``views.clustering``): choices and labels, which columns get moving blocks,
the options passed to the diagnosis, the sentences; and the hub verdicts' plumbing (``dashboard.clustering``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.clustering import auto_block_length
from tests.hub_synthetic import synthetic_hub
from views import clustering as vc


@pytest.fixture(scope="module")
def hub():
    return synthetic_hub(n_locations=3, n_dates=12)


@pytest.fixture(scope="module")
def plain():
    rng = np.random.default_rng(0)
    return cc.PredictionSet("regression", y=rng.normal(size=20), time=np.arange(20),
                            slice_columns=pd.DataFrame({"site": list("abcd") * 5}))


def test_choices_start_with_auto_and_independent_rows_then_the_columns(hub, plain):
    choices = vc.resample_choices(hub)
    assert choices[:3] == [vc.AUTO, vc.INDEPENDENT, "reference_date"]
    assert {"location", "horizon", "target_end_date", "time"} <= set(choices)
    assert vc.resample_label(vc.AUTO, hub) == "auto (reference_date (forecast date))"
    assert vc.resample_label(vc.INDEPENDENT, hub) == "independent rows"
    assert vc.resample_label("location", hub) == "location"
    assert vc.resample_choices(plain) == [vc.AUTO, vc.INDEPENDENT, "site", "time"]
    assert vc.resample_label(vc.AUTO, plain) == "auto (independent rows)"


def test_auto_resolves_to_the_hubs_forecast_date(hub, plain):
    assert vc.chosen_column(hub, vc.AUTO) == "reference_date" and vc.chosen_column(plain, vc.AUTO) is None
    assert vc.chosen_column(hub, vc.INDEPENDENT) is None and vc.chosen_column(hub, "location") == "location"


def test_moving_blocks_are_offered_for_time_like_columns_only(hub, plain):
    assert all(vc.is_time_like(hub, c) for c in ("reference_date", "target_end_date", "time"))
    assert not any(vc.is_time_like(hub, c) for c in ("location", "horizon", "target", None))
    assert vc.is_time_like(plain, "time") and not vc.is_time_like(plain, "site")
    dated = cc.PredictionSet("regression", y=np.zeros(4), slice_columns=pd.DataFrame(
        {"issued": pd.to_datetime(["2024-01-01", "2024-01-08"] * 2)}))
    assert vc.is_time_like(dated, "issued")


def test_the_block_length_defaults_to_the_auto_rule_of_the_columns_values(hub):
    assert vc.n_values(hub, "reference_date") == 12 and vc.n_values(hub, "nowhere") == 0
    assert vc.default_block_length(hub, "reference_date") == auto_block_length(12) == 2
    assert vc.n_values(hub, "target_end_date") == 15


def test_the_options_given_to_the_diagnosis():
    assert vc.cluster_options(vc.AUTO) == {"cluster": "auto", "block_length": None}
    assert vc.cluster_options(vc.INDEPENDENT, True, 4) == {"cluster": None, "block_length": None}
    assert vc.cluster_options("location") == {"cluster": "location", "block_length": None}
    assert vc.cluster_options("reference_date", False, 4) == {"cluster": "reference_date", "block_length": None}
    assert vc.cluster_options("reference_date", True, 4) == {"cluster": "reference_date", "block_length": 4}
    assert vc.cluster_options(vc.AUTO, True, 3) == {"cluster": "auto", "block_length": 3}


def test_the_statement_under_the_metric_table():
    assert vc.metric_table_statement({}) == ""
    assert vc.metric_table_statement({"clustering": "independent rows"}) == (
        "Intervals and tests: rows treated as independent")
    text = "whole reference_date clusters resampled (12 clusters)"
    assert vc.metric_table_statement({"clustering": text}) == f"Intervals and tests: {text}"


def test_verdict_sentences_name_the_clustering_once():
    text = "whole reference_date clusters resampled (12 clusters)"
    assert vc.names_clustering("No evidence.", {}) == "No evidence."
    assert vc.names_clustering("No evidence.", {"clustering": text}) == f"No evidence; {text}."
    already = f"No evidence; {text}."
    assert vc.names_clustering(already, {"clustering": text}) == already
    assert vc.names_clustering("No evidence.", {"clustering": "independent rows"}) == (
        "No evidence. (rows treated as independent)")


def test_the_hub_verdict_table_and_the_model_tables_verdict_column():
    verdicts = pd.DataFrame({"model": ["a", "b", "c"], "verdict": ["calibrated", "miscalibrated", "not tested"],
                             "direction": ["", "over-confident", ""], "sentence": ["Fine.", "Too narrow.", "n/a"]})
    table = vc.hub_verdict_table(verdicts, {"clustering": "whole reference_date clusters resampled (4 clusters)"})
    assert table["verdict"].tolist() == ["calibrated", "miscalibrated", "not tested"]
    assert table["direction"].tolist() == ["", "over-confident", ""]
    assert table["outcome"].tolist() == ["calibrated", "miscalibrated", "not tested"]
    assert all("reference_date clusters" in s for s in table["sentence"])
    model_table = pd.DataFrame({"model": ["b", "a", "z"], "forecasts": [1, 2, 3], "WIS": [0.1, 0.2, 0.3]})
    out = vc.with_verdict_column(model_table, table)
    assert out.columns.tolist() == ["model", "verdict", "forecasts", "WIS"]
    assert out["verdict"].tolist() == ["miscalibrated", "calibrated", ""]
    assert vc.hub_verdict_table(pd.DataFrame(), {}).empty


def test_hub_verdicts_diagnose_the_kept_rows_with_the_pages_options(hub, monkeypatch):
    """The plumbing: the kept rows, the clustering options and a cache key that changes with the rows."""
    from dashboard import clustering as clu

    calls = []

    def fake(key, pset, **options):
        calls.append((key, pset.n_rows, options))
        verdicts = pd.DataFrame({"model": ["calibrated"], "group": [cc.ALL], "verdict": ["calibrated"],
                                 "direction": [""], "sentence": ["No evidence."]})
        return cc.Report(task="regression", source="x", n_rows=pset.n_rows, metrics=pd.DataFrame(),
                         verdicts=verdicts, options={"clustering": "whole location clusters resampled (3 clusters)"})

    monkeypatch.setattr(clu, "diagnose_cached", fake)
    kept = np.asarray(hub.model) == "calibrated"
    table, report, error = clu.hub_verdicts(hub, "tok", kept, {"cluster": "location", "block_length": None})
    assert error == "" and report is not None
    key, n, options = calls[0]
    assert n == kept.sum() and key.startswith("tok|hub_verdicts|rows=")
    assert options["cluster"] == "location" and options["block_length"] is None and options["diagrams"] is False
    assert table["sentence"].tolist() == ["No evidence; whole location clusters resampled (3 clusters)."]
    clu.hub_verdicts(hub, "tok", ~kept, {"cluster": None, "block_length": None})
    assert calls[1][0] != key and calls[1][2]["cluster"] is None


def test_hub_verdicts_report_an_input_error_in_the_pages_words(hub, monkeypatch):
    from dashboard import clustering as clu

    def failing(key, pset, **options):
        raise cc.InputError("cannot resample by 'x'", hint="pass cluster=...", app_hint="pick another column")

    monkeypatch.setattr(clu, "diagnose_cached", failing)
    table, report, error = clu.hub_verdicts(hub, "tok", np.ones(hub.n_rows, bool), {"cluster": "x"})
    assert table.empty and report is None and "pick another column" in error and "cluster=" not in error
