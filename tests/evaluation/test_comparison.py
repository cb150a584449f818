"""``cc.compare_models`` (``calib_core/evaluation/comparison.py`` and ``comparison_units.py``, the per-row scores of
``regression_compare.py`` / ``classification_compare.py``): forecast units matched across models, the table, the
sentences and notes, the errors in the house style, and the test's false-alarm rate end to end with and without
clusters (targets drawn from the true law)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.predictions import InputError, PredictionSet
from calib_core.base.regression import Gaussian, QuantileSet
from calib_core.data.hub_example import example_hub_frames
from calib_core.evaluation.comparison import PAIRWISE_COLUMNS, TABLE_COLUMNS
from calib_core.metrics.regression_wis import wis_parts


def dated_set(rng, *, g=30, per=20, shifts=(0.0, 0.0), miss=0.7, names=("A", "B")) -> PredictionSet:
    """Two Gaussian forecasters of y = δ_g + ε (date effect δ_g ~ N(0, 1), ε ~ N(0, 1)); on each date model k misses
    the date effect by its own N(shift_k, miss²) error, shared by every location of that date.  Equal shifts: equal
    skill, and score differences that share a date effect."""
    dates = pd.Timestamp("2024-01-06") + pd.to_timedelta(7 * np.arange(g), unit="D")
    delta = rng.normal(0.0, 1.0, g)
    y = np.repeat(delta, per) + rng.normal(0.0, 1.0, g * per)
    means = [np.repeat(delta + rng.normal(s, miss, g), per) for s in shifts]
    units = pd.DataFrame({"reference_date": np.tile(np.repeat(dates, per), len(shifts)),
                          "location": np.tile([f"L{i}" for i in range(per)], g * len(shifts))})
    return PredictionSet("regression", y=np.tile(y, len(shifts)),
                         dist=Gaussian(np.concatenate(means), np.full(g * per * len(shifts), np.sqrt(1.0 + miss**2))),
                         model=np.repeat(np.array(names), g * per), units=units)


@pytest.fixture(scope="module")
def example_hub():
    hub = example_hub_frames(n_rounds=16, seed=1)
    return cc.load_predictions(hub.forecasts, truth=hub.truth)


# ------------------------------------------------------------------------------------------------------------------
# the result
# ------------------------------------------------------------------------------------------------------------------


def test_table_on_the_example_hub(example_hub):
    res = cc.compare_models(example_hub, baseline="team1-calibrated", n_boot=300)
    assert isinstance(res, cc.ModelComparison)
    assert list(res.table.columns) == TABLE_COLUMNS and list(res.pairwise.columns) == PAIRWISE_COLUMNS
    t = res.table.set_index("model")
    assert res.score == "wis" and res.score_label == "WIS" and res.baseline == "team1-calibrated"
    assert res.clustering == "whole reference_date clusters resampled (16 clusters)"
    assert res.lag == 2   # weekly rounds, horizons 0 … 3 weeks
    # mean WIS equals the per-row WIS of each model's rows
    for model in t.index:
        rows = example_hub.model == model
        assert t.loc[model, "mean_score"] == pytest.approx(wis_parts(example_hub.y[rows],
                                                                     example_hub.dist.take(rows)).wis.mean())
    assert t.loc["team1-calibrated", "relative_score"] == 1.0 and np.isnan(t.loc["team1-calibrated", "p_value"])
    assert t.loc["team3-biased", "relative_score"] > 1.1 and t.loc["team3-biased", "p_holm"] < 0.01
    assert not t["better_than_baseline"].any()
    assert t.loc["team1-calibrated", "in_mcs"] and not t.loc["team3-biased", "in_mcs"]
    assert len(res.sentences) == 3 and res.sentences[2].startswith("model team3-biased's WIS is ")
    assert "after Holm" in res.sentences[2] and "outside the model confidence set" in res.sentences[2]
    assert res.sentences[0].startswith("model team1-calibrated is the baseline")
    assert len(res.pairwise) == 6
    pair = res.pairwise.set_index(["model_a", "model_b"])
    assert pair.loc[("team3-biased", "team1-calibrated"), "ratio"] == pytest.approx(t.loc["team3-biased",
                                                                                        "relative_score"])
    assert pair.loc[("team1-calibrated", "team3-biased"), "p_value"] == pytest.approx(t.loc["team3-biased", "p_value"])
    assert "team1-calibrated" in repr(res)


def test_default_baseline_is_the_model_named_baseline_else_the_first(example_hub):
    res = cc.compare_models(example_hub, n_boot=50)
    assert res.baseline == "team1-calibrated" and "first model" in res.notes[0]
    renamed = example_hub.take(np.arange(example_hub.n_rows))
    renamed.model = np.where(renamed.model == "team2-narrow", "hub-baseline", renamed.model)
    res = cc.compare_models(renamed, n_boot=50)
    assert res.baseline == "hub-baseline" and "named baseline" in res.notes[0]


def test_units_some_model_lacks_are_counted_in_the_notes(example_hub):
    rows = np.flatnonzero(example_hub.model == "team2-narrow")[:20]
    ps = example_hub.take(np.setdiff1d(np.arange(example_hub.n_rows), rows))
    res = cc.compare_models(ps, baseline="team1-calibrated", n_boot=50)
    n = example_hub.n_rows // 3
    assert f"model team2-narrow lacks 20 of {n} units; compared on the {n - 20} all share" in " ".join(res.notes)
    assert res.n_common == n - 20
    assert res.table.set_index("model").loc["team2-narrow", "n_units"] == n - 20


def test_scaling_every_score_leaves_relative_scores_and_tests_unchanged(example_hub):
    ps = example_hub
    scaled = ps.take(np.arange(ps.n_rows))
    scaled.y = 10.0 * ps.y
    scaled.dist = QuantileSet(ps.dist.levels, 10.0 * ps.dist.values)
    a = cc.compare_models(ps, n_boot=200).table
    b = cc.compare_models(scaled, n_boot=200).table
    np.testing.assert_allclose(b["mean_score"], 10.0 * a["mean_score"], rtol=1e-10)
    for col in ("relative_score", "relative_lo", "relative_hi", "dm_statistic", "p_value", "mcs_p"):
        np.testing.assert_allclose(b[col], a[col], rtol=1e-8, equal_nan=True)


def test_gaussian_scores_crps_and_log():
    ps = dated_set(np.random.default_rng(0), g=12, per=5)
    crps = cc.compare_models(ps, n_boot=50)
    assert crps.score == "crps"
    assert crps.table["mean_score"].iloc[0] == pytest.approx(ps.dist.take(ps.model == "A").crps(ps.y[:60]).mean())
    log = cc.compare_models(ps, score="log", n_boot=50)
    assert log.score_label == "log score"
    assert log.table["mean_score"].iloc[1] == pytest.approx(-ps.dist.take(ps.model == "B").logpdf(ps.y[60:]).mean())


def test_classification_by_position_brier_and_log_loss():
    rng = np.random.default_rng(1)
    n = 300
    p_true = rng.dirichlet([2, 2, 2], n)
    labels = (rng.random(n)[:, None] > np.cumsum(p_true, axis=1)).sum(axis=1)
    flat = np.full((n, 3), 1 / 3)
    ps = PredictionSet("classification", labels=np.tile(labels, 2), probs=np.vstack([p_true, flat]),
                       model=np.repeat(["sharp", "flat"], n), classes=["a", "b", "c"])
    res = cc.compare_models(ps, baseline="flat", n_boot=200)
    assert res.units.startswith("by position") and res.clustering == "independent forecast units"
    brier = ((p_true - np.eye(3)[labels]) ** 2).sum(axis=1).mean()
    assert res.table["mean_score"].iloc[0] == pytest.approx(brier)
    assert res.table["better_than_baseline"].tolist() == [True, False]
    log = cc.compare_models(ps, baseline="flat", score="log", n_boot=50)
    assert log.table["mean_score"].iloc[1] == pytest.approx(np.log(3))


def test_units_columns_match_rows_in_any_order():
    rng = np.random.default_rng(2)
    n = 50
    y = rng.normal(size=n)
    order = rng.permutation(n)
    ps = PredictionSet("regression", y=np.concatenate([y, y[order]]),
                       dist=Gaussian(np.zeros(2 * n), np.concatenate([np.ones(n), np.full(n, 2.0)])),
                       model=np.repeat(["a", "b"], n),
                       slice_columns=pd.DataFrame({"id": np.concatenate([np.arange(n), order])}))
    res = cc.compare_models(ps, units="id", n_boot=50)
    assert res.units == "by id" and res.n_common == n
    with pytest.raises(InputError, match="by position"):   # the same rows in another order: not matched by position
        cc.compare_models(ps, n_boot=50)


# ------------------------------------------------------------------------------------------------------------------
# errors in the house style
# ------------------------------------------------------------------------------------------------------------------


def test_errors_name_what_to_do(example_hub):
    one = example_hub.take(example_hub.model == "team1-calibrated")
    with pytest.raises(InputError, match="a comparison needs two models"):
        cc.compare_models(one)
    with pytest.raises(InputError, match="'nobody' is not a model.*'team1-calibrated', 'team2-narrow'") as e:
        cc.compare_models(example_hub, baseline="nobody")
    assert e.value.hint
    with pytest.raises(InputError, match="no such column.*'location'"):
        cc.compare_models(example_hub, units=["site"])
    with pytest.raises(InputError, match="different values for one forecast unit"):
        cc.compare_models(example_hub, cluster="model")
    with pytest.raises(InputError, match="rows for one forecast unit"):
        cc.compare_models(example_hub, units=["location"])
    with pytest.raises(InputError, match="unknown score 'brier'"):
        cc.compare_models(example_hub, score="brier")
    with pytest.raises(InputError, match="quantile forecasts state none"):
        cc.compare_models(example_hub, score="log")
    rng = np.random.default_rng(3)
    uneven = PredictionSet("regression", y=rng.normal(size=5), dist=Gaussian(np.zeros(5), np.ones(5)),
                           model=np.array(["a", "a", "a", "b", "b"]))
    with pytest.raises(InputError, match="different numbers of rows.*a 3, b 2") as e:
        cc.compare_models(uneven)
    assert "units=" in e.value.hint and "to the file" in e.value.app_message()


# ------------------------------------------------------------------------------------------------------------------
# the test end to end: size with a shared date effect, with and without clusters; power
# ------------------------------------------------------------------------------------------------------------------


def _rejections(n_sims, seed, shifts=(0.0, 0.0)):
    rng = np.random.default_rng(seed)
    clustered, rows = [], []
    for _ in range(n_sims):
        ps = dated_set(rng, g=20, per=10, shifts=shifts)
        clustered.append(cc.compare_models(ps, n_boot=20).table["p_value"].iloc[1])
        rows.append(cc.compare_models(ps, cluster=None, n_boot=20).table["p_value"].iloc[1])
    return np.mean(np.asarray(clustered) < 0.05), np.mean(np.asarray(rows) < 0.05)


def test_false_alarms_end_to_end_with_a_shared_date_effect():
    n_sims = 100
    clustered, rows = _rejections(n_sims, 10)
    assert clustered <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_sims), clustered
    assert rows >= 0.12, rows   # the same data as independent rows: about 25% false alarms (slow test)


@pytest.mark.slow
def test_false_alarms_end_to_end_large():
    n_sims = 1000
    clustered, rows = _rejections(n_sims, 11)
    print(f"end to end, {n_sims} data sets: false alarms {clustered:.3f} with clusters, {rows:.3f} as rows")
    sd = np.sqrt(0.05 * 0.95 / n_sims)
    assert 0.05 - 3 * sd <= clustered <= 0.05 + 3 * sd, clustered
    assert rows >= 0.2, rows


def test_power_end_to_end():
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(40):
        ps = dated_set(rng, g=20, per=10, shifts=(0.0, 0.0), miss=0.3, names=("good", "baseline"))
        worse = ps.dist.mean() + np.where(ps.model == "baseline", 1.0, 0.0)   # the baseline 1 sd off everywhere
        ps.dist = Gaussian(worse, np.sqrt(ps.dist.var()))
        res = cc.compare_models(ps, n_boot=100)
        hits += bool(res.table["better_than_baseline"].iloc[0])
        assert res.table["in_mcs"].tolist() == [True, False] or hits < 40
    assert hits >= 36, hits


def test_moving_blocks_and_the_overlap_note(example_hub):
    whole = cc.compare_models(example_hub, n_boot=200)
    assert any("moving blocks in time" in n for n in whole.notes)
    blocks = cc.compare_models(example_hub, block_length="auto", n_boot=200)
    assert blocks.clustering == "moving blocks of 3 consecutive reference_date values resampled (16 values)"
    assert not any("moving blocks in time" in n for n in blocks.notes)
    # the test and the means do not depend on the bootstrap; the intervals do
    for col in ("mean_score", "relative_score", "dm_statistic", "p_value"):
        np.testing.assert_allclose(blocks.table[col], whole.table[col], equal_nan=True)
    assert not np.allclose(blocks.table["relative_lo"].iloc[1:], whole.table["relative_lo"].iloc[1:])


def test_few_clusters_and_differing_targets_are_noted(example_hub):
    few = example_hub.take(example_hub.units["reference_date"].isin(example_hub.units["reference_date"].unique()[:4]))
    res = cc.compare_models(few, n_boot=50)
    assert any("only 4 reference_date clusters" in n for n in res.notes)
    other = example_hub.take(np.arange(example_hub.n_rows))
    other.y = np.where(other.model == "team2-narrow", other.y + 1.0, other.y)
    res = cc.compare_models(other, n_boot=50)
    assert any(n.startswith("the models' targets differ on 320 of 320 forecast units") for n in res.notes)


def test_top_label_only_and_point_predictions_are_refused():
    top = PredictionSet("classification", labels=np.array([0, 1, 0, 1]), confidence=np.array([0.9, 0.8, 0.7, 0.6]),
                        top_label_only=True, model=np.array(["a", "a", "b", "b"]))
    with pytest.raises(InputError, match="top-label confidences only"):
        cc.compare_models(top)
    point = PredictionSet("regression", y=np.zeros(4), point=np.zeros(4), model=np.array(["a", "a", "b", "b"]))
    with pytest.raises(InputError, match="point predictions only"):
        cc.compare_models(point)


def test_log_scores_below_zero_are_compared_by_their_difference():
    rng = np.random.default_rng(4)
    n = 100
    y = rng.normal(size=n)
    sd = np.concatenate([np.full(n, 0.05), np.full(n, 0.1)])
    ps = PredictionSet("regression", y=np.tile(y, 2), dist=Gaussian(np.tile(y, 2) + rng.normal(0.0, sd), sd),
                       model=np.repeat(["sharp", "wide"], n))
    res = cc.compare_models(ps, score="log", n_boot=100)
    t = res.table
    assert t["mean_score"].lt(0).all() and t["relative_score"].isna().all()
    assert any("need positive mean log scores" in n for n in res.notes)
    assert res.sentences[1].startswith("model wide's mean log score is ") and "the baseline's -" in res.sentences[1]
    assert t["dm_statistic"].iloc[1] > 0 and t["p_holm"].iloc[1] < 0.01 and not t["in_mcs"].iloc[1]
