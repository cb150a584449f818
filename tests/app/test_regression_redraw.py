"""A control change on the Regression page rebuilds only what it changes (a redraw's server CPU).

The σ-bins count and the binning change the Levi diagram and the diagnosis, not the quantile-calibration curve, the
PIT and z histograms, the intervals or the Q-Q plot: those figures are keyed on the tables they are drawn from
(``dashboard.content_key``) and reused; the ENCE-against-bins tables (1,000 simulated draws per bin count) depend on
the rows and the binning only, so a σ-bins change only moves the figure's current-count marker.
"""

from __future__ import annotations

import collections

import pandas as pd
import pytest

import calib_core.metrics.regression_tails
import calib_core.plots
import dashboard.redraw_cache
from tests.app.test_pages import LEVI, load_example, new_app, open_tab, specs

REUSED = ("calibration_curve_figure", "pit_histogram_figure", "z_histogram_figure", "intervals_figure", "qq_figure")


@pytest.fixture
def calls(monkeypatch):
    """{function name: calls} of the figure builders of the page and of ence_by_bins_tables."""
    counts: collections.Counter = collections.Counter()

    def spy(module, name, counted_as=None):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            counts[counted_as or name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in (*REUSED, "levi_figure", "ence_bins_figure"):
        spy(calib_core.plots, name)
    # the page's Levi diagram is built as a plain dict (the validated figure's JSON without Plotly validation)
    spy(dashboard.redraw_cache, "levi_figure_dict", "levi_figure")
    spy(calib_core.metrics.regression_tails, "ence_by_bins_tables")
    return counts


def test_sigma_bins_and_binning_changes_reuse_the_figures_they_do_not_change(calls):
    from dashboard.cache import clear_caches

    clear_caches()  # the result and figure stores are shared by the process: start from none
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    before = specs(at)
    for tab, key in (("Q-Q plot", "reg_qq"), ("ENCE vs bins", "reg_ence_bins")):  # lazy tabs: drawn when open
        before[key] = specs(open_tab(at, "reg_more_tab", tab))[key]

    calls.clear()
    at.slider(key="reg_n_bins").set_value(17).run()  # with the "ENCE vs bins" tab open
    assert not at.exception, [e.value for e in at.exception]
    after = specs(at)
    assert calls["levi_figure"] == 1 and calls["ence_bins_figure"] == 1  # 17 bins: new Levi, marker moved
    assert calls["ence_by_bins_tables"] == 0  # the same rows and binning: the simulated band is reused
    for tab, key in (("Q-Q plot", "reg_qq"), ("Intervals", "reg_intervals")):  # the other tabs: reused figures
        after[key] = specs(open_tab(at, "reg_more_tab", tab))[key]
    assert not any(calls[name] for name in REUSED), dict(calls)
    open_tab(at, "reg_more_tab", "ENCE vs bins")
    for key in ("reg_kuleshov", "reg_pit", "reg_z", "reg_intervals", "reg_qq"):
        assert after[key] == before[key], key
    assert after["reg_levi_chart"] != before["reg_levi_chart"]
    marker = [d for d in after["reg_ence_bins"]["data"] if d.get("meta", {}).get("role") == "current"]
    assert marker and before["reg_ence_bins"] != after["reg_ence_bins"]

    calls.clear()
    at.session_state["reg_binning"] = "equal width"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert calls["ence_by_bins_tables"] == 1 and calls["levi_figure"] == 1
    assert not any(calls[name] for name in REUSED), dict(calls)


def test_a_sigma_bins_change_redoes_only_the_binned_part_and_shows_the_same_numbers(monkeypatch):
    """σ-bins 15 → 19: the diagnosis is finished from its bins-free stage (no new summary statistics, bootstrap or
    tests but ENCE's), and every table and figure of the page equals a session whose stage was dropped."""
    import calib_core.diagnosis.regression as diag
    from dashboard.cache import STAGES, clear_caches

    summaries = collections.Counter()
    real = diag.summary_statistics

    def counted(*args, **kwargs):
        summaries["calls"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(diag, "summary_statistics", counted)

    def page_at_19_bins(drop_stage: bool):
        clear_caches()
        at = load_example(new_app(), LEVI)
        at.switch_page("pages/regression.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert len(STAGES) == 1  # one mapping: a stage per model of the page's rows
        if drop_stage:
            STAGES.clear()
        summaries.clear()
        at.slider(key="reg_n_bins").set_value(19).run()
        assert not at.exception, [e.value for e in at.exception]
        return at, summaries["calls"]

    staged, staged_calls = page_at_19_bins(drop_stage=False)
    fresh, fresh_calls = page_at_19_bins(drop_stage=True)
    assert staged_calls == 0 and fresh_calls == 2  # two models: each summarised again without its stage
    assert specs(staged) == specs(fresh)
    tables = [t.value for t in staged.dataframe]
    assert tables and len(tables) == len(fresh.dataframe)
    for a, b in zip(tables, (t.value for t in fresh.dataframe)):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert [m.value for m in staged.markdown] == [m.value for m in fresh.markdown]


def test_a_rerun_with_a_diagnosis_seen_before_builds_no_metric_table(monkeypatch):
    """The metric tables' display frames are cached on the diagnosis key and the level: σ-bins 15 → 16 → 15 builds
    the metric table for 16 only; going back to 15 (and a rerun changing nothing) builds none, with the same tables."""
    import views.pages
    from dashboard.cache import clear_caches

    built = collections.Counter()
    real = views.pages.metric_table

    def counted(*args, **kwargs):
        built["metric_table"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(views.pages, "metric_table", counted)
    clear_caches()
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    first = [t.value for t in at.dataframe]
    built.clear()
    at.slider(key="reg_n_bins").set_value(16).run()
    assert built["metric_table"] == 1
    at.slider(key="reg_n_bins").set_value(15).run()
    at.run()
    assert built["metric_table"] == 1
    again = [t.value for t in at.dataframe]
    assert len(again) == len(first)
    for a, b in zip(first, again):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
