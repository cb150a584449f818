"""views.pages: the tables, option decisions and texts of the dashboard pages, without Streamlit."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import calib_core as cc
from calib_core import plots
from calib_core.calibrators import registry
from calib_core.data import templates
from calib_core.diagrams.bin_rows import confidence_row_bins, rows_in_bins, sigma_bins
from views import pages as views
from views.selection import class_breakdown, trace_meta, with_selected


def _load(name: str, n_rows: int = 300) -> cc.PredictionSet:
    return cc.load_predictions(templates.template_csv(name, n_rows=n_rows), source=f"{name}.csv")


@pytest.fixture(scope="module")
def multi() -> cc.PredictionSet:
    return _load("multi_model")


@pytest.fixture(scope="module")
def probs() -> cc.PredictionSet:
    return _load("probs")


@pytest.fixture(scope="module")
def report(multi) -> cc.Report:
    return cc.diagnose(multi, n_resamples=0, n_simulations=200, seed=0)


def test_no_streamlit_import():
    source = open(views.__file__, encoding="utf-8").read()
    assert "streamlit" not in source.replace("Streamlit", "")


def test_is_binary_is_decided_on_full_two_column_probabilities(probs):
    assert not views.is_binary(probs)
    assert views.is_binary(_load("binary_prob"))
    assert views.is_binary(_load("binary_logit"))
    assert not views.is_binary(_load("top_label"))  # predicted class + confidence only


def test_filter_choices_and_subset(multi):
    models, groups, splits = views.filter_choices(multi)
    assert models == ["calibrated", "over-confident"]
    assert groups[0] == cc.ALL and set(groups[1:]) == {str(g) for g in pd.unique(multi.group)}
    assert splits == ["all", "cal", "test"]
    assert views.subset(multi, "all", models, cc.ALL) is multi
    one = views.subset(multi, "test", ["calibrated"], groups[1])
    expected = (multi.split == "test") & (multi.model == "calibrated") & (multi.group.astype(str) == groups[1])
    assert one.n_rows == int(expected.sum()) > 0
    assert set(one.model) == {"calibrated"}


def test_default_resamples_do_not_depend_on_n():
    # no lowering of the resample counts for large files (the inference works on block/bin sums)
    assert not hasattr(views, "default_resamples")
    assert views.DEFAULT_RESAMPLES in views.RESAMPLE_CHOICES and views.DEFAULT_RESAMPLES >= 1000
    assert views.DEFAULT_NULL_DRAWS in views.NULL_DRAW_CHOICES and views.DEFAULT_NULL_DRAWS >= 1000


def test_verdict_lines(report):
    lines = views.verdict_lines(report)
    assert [m for m, _ in lines] == ["calibrated", "over-confident"]
    assert lines[0][1].startswith("No evidence of miscalibration")
    assert lines[1][1].startswith("Over-confident")
    assert views.verdict_lines(report, ["over-confident"]) == lines[1:]


def test_looks_like_classification():
    assert views.looks_like_classification(["Label", "x"])
    assert views.looks_like_classification(["y", "PROB_0"])
    assert views.looks_like_classification(["logit"])
    assert not views.looks_like_classification(["y", "mean", "std"])


def test_column_mapping_regression_and_classification():
    none = "—"
    assert views.column_mapping("regression", {"y": "t", "mean": "m", "kind": "std", "spread": "s",
                                               "split": none, "group": "g", "model": none}) == {
        "std": "s", "y": "t", "mean": "m", "group": "g"}
    assert views.column_mapping("regression", {"y": none, "mean": none, "kind": "var", "spread": none}) == {}
    assert views.column_mapping("regression", {"kind": "quantiles", "multi": ["a", "b"], "levels": " 0.1, 0.9 "}) == {
        "quantiles": {"0.1": "a", "0.9": "b"}}
    assert views.column_mapping("regression", {"kind": "quantiles", "multi": ["a", "b"], "levels": ""}) == {
        "quantiles": ["a", "b"]}
    assert views.column_mapping("regression", {"kind": "samples", "multi": ["a", "b"]}) == {"samples": ["a", "b"]}
    assert views.column_mapping("regression", {"kind": "none (point only)", "mean": "m"}) == {
        "samples": None, "quantiles": None, "mean": "m"}
    assert views.column_mapping("classification", {"label": "y", "score_kind": "logits", "scores": ["a", "b"],
                                                   "split": "s"}) == {"label": "y", "logits": ["a", "b"], "split": "s"}
    assert views.column_mapping("classification", {"label": none, "score_kind": "probs", "scores": ["p"]}) == {
        "probs": "p"}


def test_column_mapping_loads_an_upload():
    frame = pd.DataFrame({"target": [0.1, 0.5, 1.2, 2.0], "mu": [0.0, 0.4, 1.0, 2.2], "sd": [1.0, 0.5, 0.7, 0.2]})
    mapping = views.column_mapping("regression", {"y": "target", "mean": "mu", "kind": "std", "spread": "sd"})
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), task="regression", columns=mapping)
    np.testing.assert_allclose(pset.dist.std(), frame["sd"])


def test_data_facts_and_preview(multi, probs):
    facts = views.data_facts(multi).set_index("property")["value"]
    assert facts["task"] == "regression" and facts["models"] == "calibrated, over-confident"
    n_cal = int((multi.split == "cal").sum())
    assert f"cal: {n_cal:,}" in facts["split"]
    preview = views.preview_rows(multi, 5)
    assert list(preview.columns) == ["row", "y", "mean", "std"] and len(preview) == 5
    np.testing.assert_allclose(preview["std"], multi.dist.std()[:5])
    p = views.preview_rows(probs)
    assert list(p.columns) == ["row", "label", "predicted", "confidence"]
    np.testing.assert_allclose(p["confidence"], probs.probs[:10].max(axis=1))
    assert list(p["predicted"]) == [probs.classes[i] for i in probs.probs[:10].argmax(axis=1)]
    assert views.preview_rows(_load("point")) is None


def test_data_caption(multi):
    assert views.data_caption(multi, "f.csv") == "**f.csv** · regression, layout `gaussian` · 300 rows · 2 models"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # the example's title (was Levi_et_al___4_1_synthetic___true_σ_vs_r_regression_metrics.csv)
        (("Levi et al. §4.1 synthetic — true σ vs random σ", "regression", "metrics"),
         "levi-et-al-4.1-synthetic-true-sigma_regression_metrics.csv"),
        (("Diabetes — Gaussian (mean, std) of a boosting ensemble", "regression", "report"),
         "diabetes-gaussian-mean-std-of-a-boosting_regression_report.csv"),
        (("my predictions (v2).csv", "classification", "Reliability diagram (all)"),
         "my-predictions-v2_classification_reliability-diagram-all.csv"),
        (("Straße Ærø naïve μ.parquet", "x"), "strasse-aero-naive-mu_x.csv"),  # transliterated, extension dropped
        (("预测.npz", "regression", "metrics"), "data_regression_metrics.csv"),  # nothing ASCII: "data"
        (("a" * 100, "b"), "a" * 40 + "_b.csv"),  # one over-long word is cut
        (("q", "", "—", "z"), "q_z.csv"),  # empty parts are left out
    ],
)
def test_download_name(args, expected):
    assert views.download_name(*args, ext="csv") == expected


def test_download_names_of_every_example_are_short_readable_ascii():
    from dashboard.state import EXAMPLES

    for title in [*EXAMPLES, "Levi et al. §4.1 synthetic — true σ vs random σ"]:
        for parts in (("regression", "metrics"), ("classification", "Reliability diagram")):
            name = views.download_name(title, *parts, ext="html")
            assert name.isascii() and name.endswith(".html"), name
            assert re.fullmatch(r"[a-z0-9.]+(?:-[a-z0-9.]+)*(?:_[a-z0-9.]+(?:-[a-z0-9.]+)*)*\.html", name), name
            assert len(name.split("_")[0]) <= 40 and len(name) <= 80, name
            assert not name.split("_")[0].endswith(("-of", "-vs", "-a", "-the", "-and")), name


def test_metric_table(report, multi):
    t = views.metric_table(report.metrics)
    assert list(t.columns) == ["model", "metric", "value", "debiased", "95% CI", "perfectly calibrated", "p-value",
                               "verdict", "test", "note"]
    assert set(t["model"]) == {"calibrated", "over-confident"}
    one = views.metric_table(report.metrics[report.metrics["model"] == "calibrated"], keys=["rmse", "ence"])
    assert "model" not in one.columns and len(one) == 2
    assert one["value"].iloc[0] == pytest.approx(report.value("rmse", "calibrated"))
    assert one["95% CI"].iloc[0] == "[–, –]"  # no resamples: no CI
    compact = views.metric_table(report.metrics, compact=True)
    assert "note" not in compact.columns and "test" not in compact.columns and "verdict" in compact.columns
    no_reference = cc.diagnose(multi, n_resamples=0, n_simulations=0, seed=0).metrics
    assert list(views.metric_table(no_reference).columns) == ["model", "metric", "value", "95% CI"]
    assert views.format_number(float("nan")) == "–" and views.format_number(1234567.0) == "1.235e+06"


def test_metric_table_cells(multi):
    """Interval text only where there is no interval, short p-values, verdict words as in the display table."""
    metrics = cc.diagnose(multi, n_resamples=30, n_simulations=200, seed=0).metrics
    t = views.metric_table(metrics)
    d = plots.metric_display_table(metrics)
    has_ci = (np.isfinite(d["ci_low"].to_numpy(dtype=float)) & np.isfinite(d["ci_high"].to_numpy(dtype=float)))
    assert has_ci.any() and not (t["95% CI"][has_ci] == "[–, –]").any()
    assert (t["95% CI"][~has_ci] == "[–, –]").all()
    simulated = np.isfinite(d["p_mc_se"].to_numpy(dtype=float)) & (d["p_mc_se"].to_numpy(dtype=float) > 0)
    assert simulated.any()
    for cell, p, se in zip(t["p-value"], d["p_value"], d["p_mc_se"]):
        assert cell == plots.p_value_cell(p, se) and len(cell) <= 14
        assert ("±" in cell) == (np.isfinite(se) and se > 0 and abs(p - 0.05) <= 2 * se)
    assert set(t["verdict"]) <= {"rejected (Holm)", "flagged (BH)", "not significant", ""}


def test_selection_vs_all(report):
    selected = report.metrics.assign(value=report.metrics["value"] * 2)
    t = views.selection_vs_all(selected, report.metrics, several_models=True)
    assert list(t.columns[:4]) == ["model", "metric", "selection", "all rows"]
    np.testing.assert_allclose(t["selection"], 2 * t["all rows"], equal_nan=True)


def test_diagram_tables_and_sigma_ranges(report):
    levi = views.diagram_tables(report, "levi_bins")
    assert list(levi) == ["calibrated", "over-confident"]
    assert list(views.diagram_tables(report, "levi_bins", ["calibrated"], " · x")) == ["calibrated · x"]
    t = levi["calibrated"]
    text = views.sigma_ranges({"calibrated": (0, 1)}, levi)
    lo, hi = t.loc[t["bin"].isin([0, 1]), "sigma_low"].min(), t.loc[t["bin"].isin([0, 1]), "sigma_high"].max()
    assert text == f"σ ∈ [{lo:.4g}, {hi:.4g}]"
    both = views.sigma_ranges({"calibrated": (0,), "over-confident": (1,)}, levi)
    assert both.count("σ ∈") == 2 and "(over-confident)" in both
    # bins 10 and 12 (0-based 9, 11) are two disjoint σ ranges, not one spanning bin 11
    gap = views.sigma_ranges({"calibrated": (9, 11)}, levi)
    r9, r11 = (t.loc[t["bin"] == b, ["sigma_low", "sigma_high"]].iloc[0] for b in (9, 11))
    assert gap == (f"σ ∈ [{r9['sigma_low']:.4g}, {r9['sigma_high']:.4g}] ∪ "
                   f"[{r11['sigma_low']:.4g}, {r11['sigma_high']:.4g}]")
    r10 = t.loc[t["bin"] == 10, "sigma_low"].iloc[0]
    assert f"{r10:.4g}" not in gap


def test_regression_rows(multi):
    mask = multi.split == "test"
    frame = views.regression_rows(multi, mask, 7)
    assert list(frame.columns) == ["row", "model", "y", "mean", "σ", "z"] and len(frame) == 7
    np.testing.assert_allclose(frame["z"], (frame["y"] - frame["mean"]) / frame["σ"])
    np.testing.assert_array_equal(frame["row"], multi.row_number[np.flatnonzero(mask)[:7]])


def test_classification_views(probs):
    values, pred, conf = views.row_bin_values(probs, "top_label")
    np.testing.assert_allclose(values, probs.probs.max(axis=1))
    np.testing.assert_array_equal(pred, probs.probs.argmax(axis=1))
    binary = _load("binary_prob")
    values, _, conf = views.row_bin_values(binary, "positive")
    np.testing.assert_allclose(values, binary.probs[:, 1])
    top = _load("top_label")
    values, pred, conf = views.row_bin_values(top, "top_label")
    np.testing.assert_allclose(values, top.confidence)
    mask = np.zeros(probs.n_rows, dtype=bool)
    mask[::3] = True
    rows = views.classification_rows(probs, mask, "top_label", 10)
    assert list(rows.columns) == ["row", "label", "predicted", "confidence", "correct"] and len(rows) == 10
    brows = views.classification_rows(binary, np.ones(binary.n_rows, bool), "positive", 5)
    assert f"P({binary.classes[1] if binary.classes else '1'})" in brows.columns
    breakdown = views.class_breakdowns(probs, mask, "top_label", [])
    expected = class_breakdown(probs.labels[mask], probs.probs[mask].argmax(1), probs.probs[mask].max(1), 3,
                               probs.classes)
    pd.testing.assert_frame_equal(breakdown, expected)


def test_reliability_semantics(probs):
    assert "(3 classes)" in views.reliability_semantics(probs, "top_label")
    binary = _load("binary_prob")
    assert views.reliability_semantics(binary, "top_label").startswith("**Top-label reliability** (binary)")
    assert views.reliability_semantics(binary, "positive").startswith("**Positive-class reliability**")
    assert views.reliability_semantics(_load("top_label"), "top_label").startswith("**Top-label file**")


def test_per_class_table(probs):
    report = cc.diagnose(probs, n_resamples=0, n_simulations=0, seed=0)
    per_class = report.diagrams[(report.models[0], cc.ALL)]["per_class"]
    wide = views.per_class_table(per_class, probs.classes)
    assert wide.columns[0] == "class →" and list(wide.columns[1:]) == list(probs.classes)
    long = views.per_class_table(per_class, probs.classes, wide_up_to=2)
    assert "class" in long.columns and len(long) == 3


def test_quantity_table():
    t = views.quantity_table({"a": 1.0, "b": 2.0}, {"b": "B", "a": "A"})
    assert t.to_dict("list") == {"quantity": ["B", "A"], "value": [2.0, 1.0]}


def test_diagnose_example_rejects_unknown_names():
    with pytest.raises(ValueError, match="diabetes"):
        views.diagnose_example("nope")


def test_trace_meta_and_with_selected():
    fig = go.Figure([go.Scatter(y=[1], meta={"name": "m", "role": "bins"}), go.Scatter(y=[2])])
    assert trace_meta(fig) == [{"name": "m", "role": "bins"}, None]
    tables, dashes, colors = with_selected({"a": 1, "b": 2}, {"a": 3}, {"a": "red", "b": "blue"}, "sel")
    assert tables == {"a": 1, "b": 2, "a · sel": 3}
    assert dashes == {"a · sel": "dash"}
    assert colors == {"a": "red", "b": "blue", "a · sel": "red", "b · sel": "blue"}
    assert with_selected({"a": 1}, None, {"a": "red"})[:2] == ({"a": 1}, {})


def test_bin_row_masks(multi, probs):
    sel = {"calibrated": (0, 2), "over-confident": (14,)}
    expected = rows_in_bins(sigma_bins(multi.dist.std(), 15, "width", group=multi.model), sel, group=multi.model)
    np.testing.assert_array_equal(views.sigma_bin_rows(multi, sel, 15, "width"), expected)
    assert expected.any()
    values = probs.probs.max(axis=1)
    expected = rows_in_bins(confidence_row_bins(values, 10, "quantile"), {"model": (9,)})
    np.testing.assert_array_equal(views.confidence_bin_rows(probs, {"model": (9,)}, 10, "quantile"), expected)
    assert expected.sum() > 0
    binary = _load("binary_prob")
    positive = views.confidence_bin_rows(binary, {"model": (0,)}, 10, "uniform", "positive")
    np.testing.assert_array_equal(positive, binary.probs[:, 1] <= 0.1)


def test_metric_groups_split_by_family_whole_and_metric_major():
    """Issue 14, point 1: the metric table is shown as one table per family (registry kind), the models' values of
    a metric side by side, columns that are empty for a family dropped; every row appears exactly once."""
    import calib_core as cc
    from calib_core.calibrators import registry
    from calib_core.data import examples

    report = cc.diagnose(examples.levi_synthetic(n=1000), n_resamples=50, n_simulations=200, seed=0)
    table = views.metric_table(report.metrics, compact=True)
    groups = views.metric_groups(table, report.metrics)
    assert [h for h, _ in groups] == list(views.KIND_HEADINGS.values())
    assert sum(len(p) for _, p in groups) == len(table)
    kind = {registry.metric_label(k, "regression"): registry.metric(k, "regression").kind
            for k in report.metrics["metric"]}
    for (heading, part), k in zip(groups, registry.KINDS):
        assert {kind[m] for m in part["metric"]} == {k}, heading
        assert list(part["model"][:2]) == ["true sigma", "random sigma"]  # one metric, both models
        assert (part["metric"].iloc[0::2].to_numpy() == part["metric"].iloc[1::2].to_numpy()).all()
    calib, proper, descriptive = (p for _, p in groups)
    assert "std z" in set(calib["metric"]) and {"p-value", "verdict"} <= set(calib.columns)
    assert "p-value" not in proper.columns and "perfectly calibrated" in proper.columns  # a reference, no test
    assert "perfectly calibrated" not in descriptive.columns and "debiased" not in descriptive.columns
    tests = views.metric_tests(report.metrics)
    assert tests["metric"].is_unique and "ENCE (Levi)" in set(tests["metric"])
    assert tests.set_index("metric").loc["std z", "test"].startswith("χ²")


def _reference_metric_groups(table: pd.DataFrame, metrics: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """metric_groups as a plain pandas computation (what the dashboard showed before it was rewritten on lists)."""
    shown = plots.metric_display_table(metrics, group=None)
    kind_of = dict(zip(shown["label"], [k if isinstance(k, str) and k else views._registry_kind(key)
                                        for k, key in zip(shown["kind"], shown["metric"], strict=True)]))
    order = {label: i for i, label in enumerate(pd.unique(table["metric"]))}
    kinds = table["metric"].map(kind_of).fillna(registry.CALIBRATION)
    out = []
    for kind, heading in views.KIND_HEADINGS.items():
        part = table[(kinds == kind).to_numpy()].copy()
        if part.empty:
            continue
        part["_o"] = part["metric"].map(order)
        if "model" in part.columns:
            part["_m"] = part["model"].map({m: i for i, m in enumerate(pd.unique(table["model"]))})
            part = part.sort_values(["_o", "_m"], kind="stable").drop(columns=["_o", "_m"])
        else:
            part = part.sort_values("_o", kind="stable").drop(columns="_o")
        empty = part.isna() | part.astype(str).isin(("", "–", "None", "nan"))
        keep = [c for c in part.columns if c in ("model", "metric") or not empty[c].all()]
        out.append((heading, part[keep].reset_index(drop=True)))
    return out


def _reference_metric_tests(metrics: pd.DataFrame) -> pd.DataFrame:
    t = plots.metric_display_table(metrics, group=None)
    t = t[(t["test"].astype(str).str.len() > 0) | (t["note"].astype(str).str.len() > 0)]
    t = t.drop_duplicates(["metric", "test", "note"])
    return pd.DataFrame({"metric": t["label"].to_numpy(), "test": t["test"].to_numpy(),
                         "note": t["note"].to_numpy()}).drop_duplicates("metric").reset_index(drop=True)


def test_metric_groups_and_tests_equal_the_plain_pandas_computation():
    """metric_groups and metric_tests (rewritten on lists for a redraw's CPU) give the frames of the
    pandas computation, exactly, for regression and classification tables, several models, a selection against all
    rows, tests off, point predictions, and missing tests or notes."""
    from calib_core.calibrators.registry import metric_keys
    from calib_core.data import examples

    lv = examples.levi_synthetic(n=1500)
    rng = np.random.default_rng(4)
    report = cc.diagnose(lv, by_group=False, n_resamples=50, n_simulations=200)
    selected = cc.diagnose(lv.take(rng.random(lv.n_rows) < 0.3), by_group=False, n_resamples=50, n_simulations=200)
    off = cc.diagnose(lv, by_group=False, n_resamples=0, n_simulations=0)
    f = rng.uniform(0.05, 0.95, 1500)
    cls = cc.diagnose(cc.PredictionSet(task="classification", labels=(rng.random(1500) < f).astype(int),
                                       probs=np.column_stack([1 - f, f]), classes=["0", "1"]),
                      by_group=False, n_resamples=50, n_simulations=200)
    point = cc.diagnose(cc.PredictionSet(task="regression", y=lv.y, point=lv.dist.mean(), layout="point"),
                        by_group=False, n_resamples=50)
    holes = report.metrics.copy()
    holes.loc[3, "test"] = np.nan
    holes.loc[5, "note"] = None
    holes.loc[7, "kind"] = ""
    cases = [
        (views.metric_table(report.metrics, compact=True), report.metrics),
        (views.metric_table(report.metrics, 0.9), report.metrics),
        (views.selection_vs_all(selected.metrics, report.metrics, 0.95, True, compact=True), selected.metrics),
        (views.selection_vs_all(selected.metrics, report.metrics, 0.95, True, label="slice"), selected.metrics),
        (views.metric_table(off.metrics, compact=True), off.metrics),
        (views.metric_table(cls.metrics, keys=metric_keys("classification"), compact=True), cls.metrics),
        (views.metric_table(point.metrics), point.metrics),
        (views.metric_table(holes), holes),
    ]
    for table, metrics in cases:
        got, want = views.metric_groups(table, metrics), _reference_metric_groups(table, metrics)
        assert [h for h, _ in got] == [h for h, _ in want]
        for (_, a), (_, b) in zip(got, want):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        pd.testing.assert_frame_equal(views.metric_tests(metrics), _reference_metric_tests(metrics), check_exact=True)


def test_metric_groups_without_null_draws_use_the_registry_kind():
    """With the null draws switched off the report's metrics carry no kind: the groups come from the registry
    (the diagnosis pages showed no metric table at all then)."""
    v = views
    rng = np.random.default_rng(1)
    f = rng.uniform(0.05, 0.95, 1500)
    ps = cc.PredictionSet(task="classification", labels=(rng.random(1500) < f).astype(int),
                          probs=np.column_stack([1 - f, f]), classes=["0", "1"])
    report = cc.diagnose(ps, by_group=False, n_resamples=0, n_simulations=0)
    assert (report.metrics["kind"].fillna("") == "").all()  # the case fixed
    groups = dict(v.metric_groups(v.metric_table(report.metrics, compact=True), report.metrics))
    assert list(groups) == list(v.KIND_HEADINGS.values())
    assert "ECE" in set(groups[v.KIND_HEADINGS["calibration statistic"]]["metric"])
    assert "NLL" in set(groups[v.KIND_HEADINGS["proper score"]]["metric"])
    assert sum(len(g) for g in groups.values()) == len(v.metric_table(report.metrics, compact=True))


def test_a_rerun_on_the_same_rows_gets_the_kept_subset_and_another_choice_is_cut_again(multi):
    import gc
    import weakref

    models, groups, _ = views.filter_choices(multi)
    cal = views.subset(multi, "cal", models, cc.ALL)
    assert views.subset(multi, "cal", list(models), cc.ALL) is cal  # the same rows: the same object
    expected = multi.take(multi.split == "cal")
    np.testing.assert_array_equal(cal.y, expected.y)
    other = views.subset(multi, "test", models, cc.ALL)  # another choice: cut out, then kept instead
    assert other is not cal and other.n_rows == int((multi.split == "test").sum())
    assert views.subset(multi, "cal", models, cc.ALL) is not cal
    np.testing.assert_array_equal(views.subset(multi, "cal", models, cc.ALL).y, expected.y)
    assert views.subset(multi, "all", models, cc.ALL) is multi
    assert views.subset(multi, "test", models[:1], cc.ALL).n_rows == int(
        ((multi.split == "test") & (multi.model == models[0])).sum())
    # a set that is dropped is not kept alive by its kept rows (nor by itself, when all its rows are chosen)
    for rows in ("all", "cal"):
        copy = multi.take(np.ones(multi.n_rows, dtype=bool))
        views.subset(copy, rows, models, cc.ALL)
        ref = weakref.ref(copy)
        del copy
        gc.collect()
        assert ref() is None
