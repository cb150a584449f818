"""The Regression and Classification pages when the loaded data is a summary (``dashboard.summary``): every diagram
a summary can give, linked through σ-bins / confidence bins, with the metric tables saying which numbers are exact
and which carry a stated bound.  Each computation is one call into ``calib_core`` (``calib_core.scale.summary`` for the
report, ``views.summary`` for selections and exactness); what needs the rows says so.

A selection redraw costs O(bins × levels) whatever the number of rows summarised (``bench/summary_dashboard.py``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import calib_core as cc
from calib_core import plots
from calib_core.calibrators.registry import metric_keys
from views import pages as views
from views import summary as sv
from views.selection import describe_selection, with_selected

from .cache import figure
from .display import chart, dataframe, export_row, md_escape, show_metric_table, show_verdicts, table_height
from .selection import LinkedSelection
from .state import init_state
from .summary import summary_caption, summary_report


def _controls(summary: Any, prefix: str) -> tuple[list[str], str, int, int]:
    """Models (several: overlaid), the group, and the bootstrap / null-draw choices; returns (models, group,
    resamples, sims).  The group is one of ``summary_views.summary_groups`` (all rows first)."""
    models = [str(m) for m in summary.models]
    groups = sv.summary_groups(summary)
    init_state({f"{prefix}_models": views.default_models(models), f"{prefix}_group": cc.ALL,
                f"{prefix}_resamples": views.DEFAULT_RESAMPLES, f"{prefix}_sims": views.DEFAULT_NULL_DRAWS},
               persist=True)
    if any(m not in models for m in st.session_state[f"{prefix}_models"]):
        st.session_state[f"{prefix}_models"] = views.default_models(models)
    if st.session_state[f"{prefix}_group"] not in groups:  # another summary was opened
        st.session_state[f"{prefix}_group"] = cc.ALL
    c1, c2, c3, c4 = st.columns([4, 2, 2, 2])
    chosen = c1.multiselect("Models", models, key=f"{prefix}_models", disabled=len(models) < 2)
    group = c2.selectbox("Group", groups, key=f"{prefix}_group", disabled=len(groups) < 2,
                         format_func=views.group_label,
                         help="The rows of one group of the summary (its own bins and sums), or all rows.")
    n_res = c3.selectbox("Bootstrap resamples", list(views.RESAMPLE_CHOICES), key=f"{prefix}_resamples",
                         help="Replicates of the hashed row blocks kept in the summary (0 switches intervals off).")
    n_sims = c4.selectbox("Null draws", list(views.NULL_DRAW_CHOICES), key=f"{prefix}_sims",
                          help="Draws under perfect calibration for the simulated p-values (0: no tests).")
    chosen = [m for m in models if m in (chosen or models[:1])] or models[:1]
    return chosen, str(group), int(n_res), int(n_sims)


def _of_group(summary: Any, token: str, group: str) -> tuple[Any, str]:
    """The summary of the chosen group's rows (``summary_views.summary_of_group``) and its cache token."""
    if group == cc.ALL:
        return summary, token
    return sv.summary_of_group(summary, group), f"{token}|group={group}"


def _groups(summary: Any, report: cc.Report | None, table: Any, metrics: Any) -> tuple[list, Any]:
    """(``views.metric_groups`` of the display table with the exact / bound column, ``views.metric_tests``);
    ``report`` None: the metrics of a selection, all exact sums."""
    exactness = sv.exactness_table(summary, report) if report is not None else None
    return views.metric_groups(sv.add_exactness(table, exactness), metrics), views.metric_tests(metrics)


@st.cache_data(max_entries=32, show_spinner=False)
def _all_rows_groups(key: str, _summary: Any, _report: cc.Report, models: tuple, level: float) -> tuple[list, Any]:
    """:func:`_groups` of the all-rows metric table, cached on the summary token and options (``key``): it does
    not change with a selection, so a selection redraw only renders it."""
    metrics = _report.metrics[_report.metrics["model"].isin(models)]
    keys = metric_keys("classification") if _summary.spec.task == "classification" else None
    return _groups(_summary, _report, views.metric_table(metrics, level, keys=keys, compact=True), _report.metrics)


def _show_groups(groups: list, tests: Any) -> None:
    """The metric tables by family (as ``dashboard.show_metric_groups``), then the caption on exactness."""
    for heading, part in groups:
        st.markdown(f"**{heading}**")
        show_metric_table(part, height=table_height(len(part)))
    if not tests.empty:
        with st.expander("How each p-value or reference value was computed", icon=":material/function:"):
            dataframe(tests, hide_index=True, width="stretch", height=table_height(len(tests)))
    st.caption(sv.EXACTNESS_CAPTION)


def _export(prefix: str, task: str, summary: Any, report: cc.Report, name: str, group: str,
            figures: dict[str, Any], notes: list[str]) -> None:
    """The export row of a page drawn from a summary (as the row pages'): the metric table as CSV with a
    ``from_summary`` column (exact / bound / needs the rows), any one figure as HTML, and the page report."""
    export_row(
        prefix, title=f"{task} diagnostics — {name}", report=report, figures=figures,
        metrics=lambda: sv.metrics_with_exactness(summary, report), pset=None,
        notes=[f"Drawn from a summary of {summary.n_rows:,} rows (no rows held); group = {views.group_label(group)}.",
               *notes, sv.EXACTNESS_CAPTION.replace("**", "")],
    )


def regression_page(summary: Any, token: str, name: str) -> None:
    """The Regression page drawn from a regression summary."""
    st.markdown(summary_caption(summary, name))
    models, group, n_res, n_sims = _controls(summary, "regsum")
    summary, token = _of_group(summary, token, group)
    init_state({"regsum_levi_log": False}, persist=True)
    st.toggle("Log axes (Levi diagram)", key="regsum_levi_log")
    report = summary_report(token, summary, n_res, n_sims)
    level = float(report.options.get("level", 0.95))
    for note in report.options.get("notes", []):
        st.caption(md_escape(note))
    levi_tables = views.diagram_tables(report, "levi_bins", models)
    shown = list(levi_tables)
    if not shown:
        st.warning("This summary holds point predictions only (no σ-bins): see the metric table.")
        show_verdicts(report)
        _show_groups(*_all_rows_groups(f"{token}|{n_res}|{n_sims}", summary, report, tuple(models), level))
        return
    colors = plots.model_colors([str(m) for m in summary.models])
    n_bins = summary.spec.n_bins
    selection = LinkedSelection("regsum", (token, tuple(models)), shown)
    fig_key = f"{token}|models={models}|{n_res}|{n_sims}"
    levi_log = bool(st.session_state["regsum_levi_log"])
    levi_base = f"{fig_key}|levi|log={levi_log}|epoch={selection.epoch}"
    levi_drawn = selection.drawn("regsum_levi_chart", levi_base)

    def _levi():
        fig = plots.levi_figure(levi_tables, colors=colors, log_axes=levi_log)
        fig.update_layout(meta={"selection_epoch": selection.epoch})
        return plots.mark_selected(fig, levi_drawn)

    levi = figure(f"{levi_base}|drawn={sorted(levi_drawn.items())}", _levi)
    selected = sv.selection_tables(summary, selection.bins, level=level) if not selection.empty else {}
    n_sel = sv.selected_rows(summary, selection.bins) if not selection.empty else 0

    st.subheader("σ-bins and conditional calibration")
    st.caption(
        f"The summary's {n_bins} equal-count σ-bins. Click a σ-bin in the Levi diagram (shift-click adds more; or "
        "drag a box / lasso): the quantile calibration curve, the PIT histogram and the metrics are "
        "redrawn for the rows of those bins from the summary's per-σ-bin PIT histograms and sums."
    )
    selection.row("**No σ-bins selected** — the views below use all rows." if selection.empty else
                  f"**{md_escape(describe_selection(selection.bins, n_sel, 'σ-bins', n_bins=n_bins))}** "
                  + md_escape(views.sigma_ranges(selection.bins, levi_tables)), icon=":material/deselect:")
    sel_part = f"sel={sorted(selection.bins.items())}" if selected else "sel=none"
    left, right = st.columns(2)
    with left:
        selection.chart(levi, "regsum_levi_chart")
        st.caption("RMSE vs RMV per σ-bin (Levi et al. 2019), 90% bootstrap intervals over the summary's hashed row "
                   "blocks. Calibrated σ lies on the diagonal.")
    overlays = {name_: with_selected(views.diagram_tables(report, name_, shown), selected.get(name_), colors)
                for name_ in ("calibration_curve", "pit_histogram", "z_histogram")}
    curve, dashes, curve_colors = overlays["calibration_curve"]
    bands = set(dashes) if selected else None
    with right:
        kuleshov = figure(f"{fig_key}|kuleshov|{sel_part}", lambda: plots.calibration_curve_figure(
            curve, colors=curve_colors, dashes=dashes, bands=bands))
        chart(kuleshov, "regsum_kuleshov")
        st.caption("Quantile calibration (Kuleshov et al. 2018), exact at its 101 levels from the summary; the "
                   "ribbon is where a calibrated forecaster's curve falls 95% of the time.")
    left2, right2 = st.columns(2)
    with left2:
        pit, pit_dashes, _ = overlays["pit_histogram"]
        pit_fig = figure(f"{fig_key}|pit|{sel_part}", lambda: plots.pit_histogram_figure(
            pit, colors=curve_colors, dashes=pit_dashes))
        chart(pit_fig, "regsum_pit")
        st.caption("PIT histogram: flat when calibrated; ∪ = over-confident, ∩ = under-confident, slope = bias.")
    with right2:
        z_tables, z_dashes, _ = overlays["z_histogram"]
        z_fig = figure(f"{fig_key}|z", lambda: plots.z_histogram_figure(z_tables, colors=colors, dashes=z_dashes))
        chart(z_fig, "regsum_z")
        st.caption("Standardised residuals z against N(0, 1), read off the summary's fine z histogram (all rows)."
                   + (" " + sv.NOT_FROM_SUMMARY["z_selection"] if selected else ""))

    sel_metrics = sv.selection_metrics(summary, selection.bins, level=level, n_resamples=n_res) if selected else None
    if sel_metrics is not None and not sel_metrics.empty:  # as on the row page: the selection's table replaces it
        st.subheader("Metrics of the selected rows")
        st.caption(f"Each metric of the selected rows, exact from the per-σ-bin sums, next to its value on all "
                   f"rows; {level:.0%} intervals: Clopper–Pearson for coverages, bootstrap over the hashed row "
                   "blocks for RMSE and sharpness. " + sv.NOT_FROM_SUMMARY["regression_selection_metrics"]
                   + " Clear the selection for the table of all rows with its tests.")
        overall = report.metrics[report.metrics["metric"].isin(sel_metrics["metric"].unique())]
        _show_groups(*_groups(summary, None, views.selection_vs_all(
            sel_metrics, overall, level, len(shown) > 1, compact=True), sel_metrics))
    else:
        if selected:
            st.warning("Fewer than 2 rows in the selected bins: nothing to recompute.")
        st.subheader("Metrics")
        show_verdicts(report, shown)
        _show_groups(*_all_rows_groups(f"{token}|{n_res}|{n_sims}", summary, report, tuple(shown), level))

    st.subheader("More diagrams")
    tab_int, tab_qq = st.tabs(["Intervals", "Q-Q plot"])
    with tab_int:
        intervals_fig = figure(f"{fig_key}|intervals", lambda: plots.intervals_figure(
            views.diagram_tables(report, "intervals", shown), colors=colors))
        chart(intervals_fig, "regsum_intervals")
        st.caption("Observed coverage of the central 50–99% intervals of all rows (exact from the summary's "
                   "counters; the selected rows' coverages are in their metric table).")
    with tab_qq:
        qq_fig = figure(f"{fig_key}|qq", lambda: plots.qq_figure(views.diagram_tables(report, "qq", shown),
                                                                colors=colors))
        chart(qq_fig, "regsum_qq")
        st.caption("Quantiles of z against N(0, 1), read off the fine z histogram (within one z-bin width, 0.005).")
    if selected:
        st.info(sv.NOT_FROM_SUMMARY["rows"], icon=":material/table_rows:")
    _export("regsum", "Regression", summary, report, name, group, {
        "Levi diagram (RMSE vs RMV)": levi, "Quantile calibration curve": kuleshov, "PIT histogram": pit_fig,
        "z histogram": z_fig, "Interval coverage": intervals_fig, "Q-Q plot": qq_fig},
        [f"Selection: {describe_selection(selection.bins, n_sel, 'σ-bins', n_bins=n_bins)}."] if selected else [])


def classification_page(summary: Any, token: str, name: str) -> None:
    """The Classification page drawn from a classification summary."""
    st.markdown(summary_caption(summary, name))
    models, group, n_res, n_sims = _controls(summary, "clssum")
    summary, token = _of_group(summary, token, group)
    binary = sv.has_positive_class(summary)
    init_state({"clssum_target": "top label"}, persist=True)
    target_label = st.segmented_control(
        "Binary semantics", ["top label", "positive class"], key="clssum_target", disabled=not binary,
        help="Top label: confidence max(p, 1 − p) against accuracy (Guo). Positive class: P(y = 1) against the "
        "frequency of y = 1 (scikit-learn / netcal), from the summary's positive-class bins.")
    target = "positive" if (binary and target_label == "positive class") else "top_label"
    report = summary_report(token, summary, n_res, n_sims)
    level = float(report.options.get("level", 0.95))
    shown = [m for m in models if (m, cc.ALL) in report.diagrams]
    if not shown:
        st.warning("Too few rows to diagnose in this summary.")
        return
    colors = plots.model_colors([str(m) for m in summary.models])
    n_bins = summary.spec.n_bins
    table_name = "reliability_positive" if target == "positive" else "reliability"
    rel_tables = {m: report.diagrams[(m, cc.ALL)][table_name] for m in shown
                  if table_name in report.diagrams[(m, cc.ALL)]}
    bins_word = "equal-width" if summary.spec.strategy == "uniform" or target == "positive" else "equal-mass"
    if target == "positive":
        st.markdown("Positive-class semantics: the predicted probability of class 1 against the frequency of "
                    f"y = 1 (scikit-learn / netcal); {n_bins} equal-width bins of the summary.")
    else:
        st.markdown("Top-label semantics: the confidence of the predicted class against accuracy (Guo et al. 2017); "
                    f"{n_bins} {bins_word} bins of the summary.")
    selection = LinkedSelection("clssum", (token, tuple(models), target), shown)
    fig_key = f"{token}|models={models}|{n_res}|{n_sims}|{target}|epoch={selection.epoch}"

    def _linked(chart_key: str, drawn: dict):
        fig = (plots.reliability_figure(rel_tables, colors=colors, target=target) if chart_key == "clssum_rel_chart"
               else plots.confidence_histogram_figure(rel_tables, colors=colors, target=target))
        fig.update_layout(meta={"selection_epoch": selection.epoch})
        return plots.mark_selected(fig, drawn)

    linked = {}
    for chart_key in ("clssum_rel_chart", "clssum_hist_chart"):
        base = f"{fig_key}|{chart_key}"
        drawn = selection.drawn(chart_key, base)
        linked[chart_key] = figure(f"{base}|drawn={sorted(drawn.items())}", lambda k=chart_key, d=drawn: _linked(k, d))
    st.subheader("Reliability diagram ↔ " + ("probability histogram" if target == "positive"
                                             else "confidence histogram"))
    st.caption("Click a bin in either chart (shift-click adds, or drag a box) to highlight it in both and show its "
               "numbers below, from the summary's per-bin counts and exact sums.")
    n_sel = sv.selected_rows(summary, selection.bins, target=target) if not selection.empty else 0
    what = "P(y = 1) bins" if target == "positive" else "confidence bins"
    selection.row("**No bins selected** — click bars to inspect them." if selection.empty else
                  "**" + md_escape(describe_selection(selection.bins, n_sel, what, n_bins=n_bins)) + "**",
                  icon=":material/deselect:")
    left, right = st.columns(2)
    with left:
        selection.chart(linked["clssum_rel_chart"], "clssum_rel_chart")
        st.caption(("Bars: frequency of y = 1 per bin" if target == "positive" else "Bars: accuracy per bin")
                   + " with 90% Wilson intervals; hatched: the gap to the bin's mean "
                   + ("P(y = 1)." if target == "positive" else "confidence."))
    with right:
        selection.chart(linked["clssum_hist_chart"], "clssum_hist_chart")
        st.caption("Share of samples per bin; dashed = average " + ("P(y = 1)" if target == "positive" else
                                                                   "confidence") + ", dotted = "
                   + ("frequency of y = 1." if target == "positive" else "accuracy."))
    if not selection.empty:
        tables = sv.selection_tables(summary, selection.bins, level=level, target=target).get("selected_bins", {})
        for model, table in tables.items():
            st.markdown(f"**Selected bins** — {md_escape(model)}" if len(shown) > 1 else "**Selected bins**")
            dataframe(table, hide_index=True, width="stretch")
        st.info(sv.NOT_FROM_SUMMARY["per_class_selection"], icon=":material/table_rows:")

    st.subheader("Metrics")
    show_verdicts(report, shown)
    _show_groups(*_all_rows_groups(f"{token}|{n_res}|{n_sims}", summary, report, tuple(shown), level))
    per_model = shown[0]
    per_class = report.diagrams[(per_model, cc.ALL)].get("per_class")
    figures = {"Reliability diagram": linked["clssum_rel_chart"],
               "Probability histogram" if target == "positive" else "Confidence histogram":
                   linked["clssum_hist_chart"]}
    if per_class is not None:
        st.subheader("Per-class reliability" + (f" — {md_escape(per_model)}" if len(shown) > 1 else ""))
        class_options, worst = views.per_class_choice(per_class, None)
        codes = [class_options[c] for c in worst]
        per_class_fig = figure(f"{fig_key}|per_class={per_model}", lambda: plots.per_class_reliability_figure(
            per_class, color=colors[per_model], classes=codes))
        chart(per_class_fig, "clssum_per_class")
        st.caption("One-vs-rest reliability of each class from the summary's per-class bins (exact).")
        figures["Per-class reliability"] = per_class_fig
    semantics = "positive class (P(y = 1) against y = 1)" if target == "positive" else "top label"
    _export("clssum", "Classification", summary, report, name, group, figures,
            [f"Reliability semantics: {semantics}."]
            + ([f"Selection: {describe_selection(selection.bins, n_sel, what, n_bins=n_bins)}."]
               if not selection.empty else []))
