"""dashboard.redraw_cache: what a redraw reuses changes nothing a browser receives."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calib_core import plots
from dashboard.cache import content_key
from dashboard.redraw_cache import keyed_digest, marked_figure, prepared_figure


def _levi_figure() -> go.Figure:
    rng = np.random.default_rng(3)
    rmv = np.sort(rng.uniform(0.5, 2.0, 8))
    table = pd.DataFrame({"bin": np.arange(8), "count": np.full(8, 100), "sigma_low": rmv - 0.1,
                          "sigma_high": rmv + 0.1, "rmv": rmv, "rmse": rmv * 1.2, "rmse_low": rmv * 1.1,
                          "rmse_high": rmv * 1.3})
    return plots.mark_selected(plots.levi_figure({"model": table}), {"model": (2, 3)})


def _spec(fig) -> str:
    """What ``st.plotly_chart`` sends: ``plotly.io.to_json`` of the dict Plotly's tools make of the figure."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True), validate=False)


def test_a_prepared_figure_sends_the_same_json_every_time_and_its_dict_stays_unchanged():
    fig = _levi_figure()
    expected = _spec(fig)
    prepared = prepared_figure(fig)
    assert _spec(prepared) == expected
    wire = prepared.to_dict()
    frozen = json.dumps(wire, sort_keys=True, default=str)
    for _ in range(3):  # every rerun serialises the same shared dict: Plotly must not change it
        assert _spec(prepared_figure(fig)) == expected
    assert json.dumps(wire, sort_keys=True, default=str) == frozen
    assert prepared_figure(fig).to_dict() is wire  # made once per figure
    assert [t.meta for t in prepared.data] == [t.meta for t in fig.data]  # what a selection callback reads
    assert prepared_figure("not a figure") == "not a figure"


def test_a_keyed_digest_is_the_content_key_of_its_parts_and_is_not_recomputed():
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    calls = []

    def parts():
        calls.append(1)
        return (frame, {"m": "#123456"}, True)

    key = ("test_redraw_cache", object())
    assert keyed_digest(key, parts) == content_key(frame, {"m": "#123456"}, True)
    assert keyed_digest(key, parts) == content_key(frame, {"m": "#123456"}, True)
    assert len(calls) == 1


def _plain_levi_figure() -> go.Figure:
    rng = np.random.default_rng(5)
    tables = {}
    for name in ("a", "b"):
        rmv = np.sort(rng.uniform(0.5, 2.0, 6))
        tables[name] = pd.DataFrame({"bin": np.arange(6), "count": np.full(6, 50), "sigma_low": rmv - 0.1,
                                     "sigma_high": rmv + 0.1, "rmv": rmv, "rmse": rmv * 1.1, "rmse_low": rmv,
                                     "rmse_high": rmv * 1.2})
    return plots.levi_figure(tables)


@pytest.mark.parametrize("selected", [{}, None, {"a": (2,)}, {"a": (0, 5), "b": (3,)}, {"b": ()}, {"gone": (1,)}])
def test_a_marked_figure_sends_what_mark_selected_gives(selected):
    plain = _plain_levi_figure()
    expected = _spec(plots.mark_selected(_plain_levi_figure(), selected))
    before = _spec(plain)
    assert _spec(marked_figure(plain, selected)) == expected
    assert _spec(marked_figure(plain, selected)) == expected  # the memoised patch
    assert _spec(plain) == before  # the shared figure is not changed


def test_a_marked_figure_with_a_layout_meta_sends_what_update_layout_gives():
    plain = _plain_levi_figure()
    real = _plain_levi_figure()
    real.update_layout(meta={"selection_epoch": 2})
    expected = _spec(plots.mark_selected(real, {"a": (1,)}))
    assert _spec(marked_figure(plain, {"a": (1,)}, layout_meta={"selection_epoch": 2})) == expected
    assert _spec(marked_figure(plain, {"a": (1,)}, layout_meta={"selection_epoch": 3})) != expected


def test_shared_metric_frames_equal_those_of_dashboard_show_metric_groups():
    import calib_core as cc
    import dashboard.display as display
    from calib_core.data import examples
    from dashboard import redraw_cache
    from views import pages as views
    from views.numbers import display_numbers

    report = cc.diagnose(examples.levi_synthetic(n=400), by_group=False, n_resamples=50, n_simulations=50)
    table = views.metric_table(report.metrics, 0.95, compact=True)
    parts, tests = display._metric_group_frames(table, report.metrics)
    shown, (shown_tests, tests_config) = redraw_cache._shown_groups(lambda: table, report.metrics)
    assert [h for h, _ in parts] == [h for h, _, _ in shown] and parts
    for (_, part), (_, frame, config) in zip(parts, shown):
        expected, expected_config = display_numbers(part, display._metric_column_config({}))
        pd.testing.assert_frame_equal(frame, expected, check_exact=True)
        assert config == expected_config
    expected_tests, expected_tests_config = display_numbers(tests, None)
    pd.testing.assert_frame_equal(shown_tests, expected_tests, check_exact=True)
    assert tests_config == expected_tests_config


def _old_frames(table, metrics):
    """The frames as ``dashboard.show_metric_groups`` makes them (pandas grouping, copies, ``csv_safe``)."""
    import dashboard.display as display
    from views.numbers import display_numbers

    parts, tests = display._metric_group_frames(table, metrics)
    return ([(h, *display_numbers(p, display._metric_column_config({}))) for h, p in parts],
            display_numbers(tests, None) if not tests.empty else (tests, {}))


def _assert_same_frames(got, expected):
    shown, (tests, tests_config) = got
    parts, (expected_tests, expected_tests_config) = expected
    assert [h for h, *_ in shown] == [h for h, *_ in parts] and parts
    for (_, frame, config), (_, part, part_config) in zip(shown, parts):
        pd.testing.assert_frame_equal(frame, part, check_exact=True)
        assert list(frame.dtypes) == list(part.dtypes)
        assert config == part_config
    pd.testing.assert_frame_equal(tests, expected_tests, check_exact=True)
    assert tests_config == expected_tests_config


def test_metric_frames_built_in_one_go_equal_the_pandas_ones_for_every_table_the_pages_show():
    import calib_core as cc
    from calib_core.base.predictions import PredictionSet
    from calib_core.base.regression import QuantileSet, norm_ppf
    from dashboard import redraw_cache
    from views import pages as views

    rng = np.random.default_rng(5)
    n = 600
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + 1.3 * s * rng.standard_normal(n)
    tau = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    sets = [PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, s), layout="gaussian",
                          model=np.where(rng.random(n) < 0.5, "a", "=b")),  # a model name a spreadsheet would run
            PredictionSet(task="regression", y=y, dist=QuantileSet(tau, mu[:, None] + s[:, None] * norm_ppf(tau)),
                          layout="quantile"),
            PredictionSet(task="regression", y=y, point=mu, layout="point")]
    for pset in sets:
        report = cc.diagnose(pset, by_group=False, n_resamples=50, n_simulations=50)
        part = cc.diagnose(pset.take(np.arange(n) < 300), by_group=False, n_resamples=50, n_simulations=50)
        several = len(report.models) > 1
        tables = [views.metric_table(report.metrics, 0.95, compact=True),
                  views.metric_table(report.metrics, 0.9, compact=False),
                  views.selection_vs_all(part.metrics, report.metrics, 0.95, several, compact=True)]
        for table in tables:
            _assert_same_frames(redraw_cache._shown_groups(table, report.metrics), _old_frames(table, report.metrics))
        risky = report.metrics.assign(note=["-1 rows dropped", "=HYPERLINK()"] * (len(report.metrics) // 2)
                                      + ["@x"] * (len(report.metrics) % 2))
        table = views.metric_table(risky, 0.95, compact=False)
        _assert_same_frames(redraw_cache._shown_groups(table, risky), _old_frames(table, risky))


def _old_metric_table(metrics, level, keys=None, compact=False, keep_model=False):
    """``views.metric_table`` as it was built before (one frame, then a frame per dropped column)."""
    from calib_core import plots
    from views import pages as views

    t = plots.metric_display_table(metrics)
    if keys is not None:
        order = {k: i for i, k in enumerate(keys)}
        t = t[t["metric"].isin(order) | ~t["metric"].isin(set(order) | views._registry_keys())].copy()
        t["_o"] = t["metric"].map(order).fillna(len(order))
        t = t.sort_values(["_o"], kind="stable").drop(columns="_o")
    pct, fmt = f"{level:.0%}", (lambda x: "–" if pd.isna(x) else f"{x:.4g}")
    out = pd.DataFrame({"model": t["model"].to_numpy(), "metric": t["label"].to_numpy(), "value": t["value"].to_numpy(),
                        "debiased": t["debiased"].to_numpy(dtype=float),
                        f"{pct} CI": [f"[{fmt(a)}, {fmt(b)}]" for a, b in zip(t["ci_low"], t["ci_high"])],
                        "perfectly calibrated": t["perfect"].to_numpy(dtype=float),
                        "p-value": [plots.p_value_cell(a, b) for a, b in zip(t["p_value"], t["p_mc_se"])],
                        "verdict": t["verdict"].to_numpy(), "test": t["test"].to_numpy(), "note": t["note"].to_numpy()})
    if out["model"].nunique() <= 1 and not keep_model:
        out = out.drop(columns="model")
    empty = [c for c in ("test", "note") if not out[c].astype(str).str.len().any()]
    if compact or empty:
        out = out.drop(columns=["test", "note"] if compact else empty)
    if not np.isfinite(out["debiased"].to_numpy(dtype=float)).any():
        out = out.drop(columns="debiased")
    if not np.isfinite(t["p_value"].to_numpy(dtype=float)).any():
        out = out.drop(columns=["perfectly calibrated", "p-value", "verdict"])
    return out.reset_index(drop=True)


def test_metric_table_equals_the_frame_per_drop_construction():
    import calib_core as cc
    from calib_core.base.predictions import PredictionSet
    from views import pages as views

    rng = np.random.default_rng(9)
    n = 400
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + s * rng.standard_normal(n)
    two = PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, s), layout="gaussian",
                        model=np.where(rng.random(n) < 0.5, "a", "b"))
    for pset, extra in ((two, {}), (two, {"n_simulations": 0}), (two.take(two.model == "a"), {}),
                        (PredictionSet(task="regression", y=y, point=mu, layout="point"), {})):
        metrics = cc.diagnose(pset, by_group=False, **{"n_resamples": 30, "n_simulations": 30, **extra}).metrics
        blank = metrics.assign(note="", test=[None] * len(metrics))  # empty and missing text columns
        for m in (metrics, blank):
            for kw in ({}, {"compact": True}, {"keep_model": True}, {"keys": ["ence", "crps"]}):
                pd.testing.assert_frame_equal(views.metric_table(m, 0.9, **kw), _old_metric_table(m, 0.9, **kw),
                                              check_exact=True)


def test_content_key_tells_every_change_of_a_frame_and_equal_frames_apart():
    frame = pd.DataFrame({"x": [0.1, 0.2, np.nan], "n": [1, 2, 3], "label": ["a", "b", None]})
    key = content_key(frame, {"m": "#123"})
    assert content_key(frame.copy(), {"m": "#123"}) == key  # equal content, another object
    changed = [frame.assign(x=[0.1, 0.2, 0.3]), frame.assign(n=[1.0, 2.0, 3.0]), frame.assign(label=["a", "b", "c"]),
               frame.rename(columns={"x": "y"}), frame.set_index(pd.Index([5, 6, 7])), frame.iloc[:2],
               frame.assign(label=["a", "b", "None"]), frame.astype({"label": object})]
    keys = {content_key(c, {"m": "#123"}) for c in changed}
    assert len(keys) == len(changed) and key not in keys
    multi = frame.set_index(pd.MultiIndex.from_tuples([(1, "a"), (1, "b"), (2, "a")]))
    assert content_key(multi) != content_key(multi.set_index(pd.MultiIndex.from_tuples([(1, "a"), (1, "b"), (2, "b")])))


def test_a_figures_size_is_that_of_its_dicts():
    from dashboard.cache import _figure_nbytes
    from dashboard.store import approx_nbytes

    fig = _plain_levi_figure()
    size = _figure_nbytes(fig)
    assert 0.5 * approx_nbytes([fig._data, fig._layout]) <= size <= 2 * approx_nbytes([fig._data, fig._layout])


def test_a_figures_size_with_its_shared_template_sized_once_is_the_same_size():
    from dashboard.cache import _figure_nbytes, _plain_nbytes

    for _ in range(2):  # the second: the template's size is the one kept
        fig = _plain_levi_figure()
        assert type(fig._layout["template"]) is dict
        assert _figure_nbytes(fig) == _plain_nbytes([fig._data, fig._layout])
    validated = go.Figure(fig)  # a figure whose layout holds no plain template dict
    assert _figure_nbytes(validated) == _plain_nbytes([validated._data, validated._layout])


def test_metric_frames_of_other_bins_reuse_the_families_whose_cells_did_not_change():
    import calib_core as cc
    from calib_core.calibrators import registry
    from calib_core.data import examples
    from dashboard import redraw_cache
    from views import pages as views

    pset = examples.levi_synthetic(n=500)
    options = dict(by_group=False, n_resamples=40, n_simulations=40)
    before = cc.diagnose(pset, n_bins=15, **options)
    after = cc.diagnose(pset, n_bins=7, binning="width", **options)
    first = redraw_cache._shown_groups(views.metric_table(before.metrics, 0.95, compact=True), before.metrics)
    table = views.metric_table(after.metrics, 0.95, compact=True)
    got = redraw_cache._shown_groups(table, after.metrics)
    _assert_same_frames(got, _old_frames(table, after.metrics))
    shown_before = {h: f for h, f, _ in first[0]}
    reused = {h for h, f, _ in got[0] if f is shown_before.get(h)}
    assert reused == {views.KIND_HEADINGS[registry.PROPER], views.KIND_HEADINGS[registry.DESCRIPTIVE]}
    assert not any(h.startswith("Calibration") for h in reused)  # ENCE's family changed: built anew
    # cells equal as numbers but shown differently (−0 and 0, NaN) are different cells
    for value in (0.0, -0.0, float("nan"), 0.0):
        edited = table.copy()
        edited.loc[0, "value"] = value
        _assert_same_frames(redraw_cache._shown_groups(edited, after.metrics), _old_frames(edited, after.metrics))
    assert redraw_cache._cell_key(0.0) != redraw_cache._cell_key(-0.0)
    assert redraw_cache._cell_key(float("nan")) == redraw_cache._cell_key(-float("nan"))
    assert redraw_cache._cell_key(1) != redraw_cache._cell_key(1.0) != redraw_cache._cell_key("1.0")


@pytest.fixture(scope="module")
def grouped_metrics():
    import calib_core as cc
    from calib_core.base.predictions import PredictionSet

    rng = np.random.default_rng(3)
    n = 300
    mu, s = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    pset = PredictionSet(task="regression", y=mu + s * rng.standard_normal(n), dist=cc.Gaussian(mu, s),
                         layout="gaussian", group=np.where(rng.random(n) < 0.5, "g1", "g2"))
    return cc.diagnose(pset, by_group=True, n_resamples=20, n_simulations=20).metrics


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_metric_table_read_from_the_metric_columns_equals_the_display_table_construction(grouped_metrics, data):
    from views import pages as views

    m = grouped_metrics.copy()
    k = len(m)
    edits = st.lists(st.integers(0, k - 1), max_size=6)
    for i in data.draw(edits):
        m.loc[m.index[i], "family"] = data.draw(st.sampled_from(["primary", "secondary", "", "other", None]))
    for i in data.draw(edits):
        m.loc[m.index[i], "p_value"] = data.draw(st.sampled_from([np.nan, np.inf, -0.0, 0.0, 1e-300, 0.5, 1.0]))
    for i in data.draw(edits):
        m.loc[m.index[i], "flag"] = data.draw(st.booleans())
    for i in data.draw(edits):
        m.loc[m.index[i], "value"] = data.draw(st.sampled_from([np.nan, -np.inf, -0.0, 1e308, 5e-324]))
    for kw in ({}, {"compact": True}, {"keep_model": True}):
        pd.testing.assert_frame_equal(views.metric_table(m, 0.9, **kw), _old_metric_table(m, 0.9, **kw),
                                      check_exact=True)
