"""Regression page: every calibration lens of the loaded regression predictions, linked through σ-bins.

Selecting σ-bins in the Levi diagram (click, shift-click, box or lasso) recomputes the Kuleshov curve, the
PIT histogram and the metric table on the rows of those bins — conditional calibration, the point of Levi et
al. (2019).  The selection is kept by ``dashboard.LinkedSelection`` in ``st.session_state["reg_sel"]`` (a
``views.selection.BinSelection`` tied to the data and the binning), so it survives reruns caused by other
controls and is dropped when the data or the bins change.
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

import calib_core as cc
import dashboard as ui
from calib_core import plots
from calib_core.metrics.regression_decomposition import (
    DEFAULT_DECOMPOSITION_LEVELS,
    EXACT_ROWS,
    GRID_VALUES,
    decomposition_display,
    quantile_decomposition_table,
    quantile_reliability_of,
)
from calib_core.metrics.regression_tails import ence_by_bins_tables
from dashboard import cache, summary_pages
from dashboard import clustering as clu
from dashboard import redraw_cache as rc
from dashboard import summary as summ
from dashboard.selection import overlay_figure, prefetch_sigma_selections, sigma_prefetch_name, sigma_selection
from views import pages as views
from views.selection import describe_selection, with_selected

_t0 = time.perf_counter()
#: The diagram tables of a σ-bin selection's diagnosis: those its overlays draw (its Levi table, Q-Q and interval
#: tables are not shown)
SELECTION_TABLES = ["calibration_curve", "pit_histogram", "z_histogram"]

st.title("Regression diagnostics")
loaded_summary = summ.current_summary("regression")
if loaded_summary is not None:  # a summary instead of rows: every diagram it can give, linked through its bins
    summary_pages.regression_page(*loaded_summary)
    ui.record_run_time(_t0, "regression")
    st.stop()
pset, token, name = ui.require_data("regression", ui.DEFAULT_REGRESSION_EXAMPLE)
whole = pset, token  # drawn faintly behind a slice chosen on the Slice explorer
pset, token = ui.apply_slice_focus(pset, token, "reg")  # a slice chosen on the Slice explorer
st.markdown(ui.data_caption(pset, name))

rows, models, group, (n_resamples, n_sims) = ui.filter_controls(pset, "reg")
ui.init_state({"reg_n_bins": 15, "reg_binning": "equal count", "reg_levi_log": False}, persist=True)


if pset.dist is not None:  # σ-bins mean nothing for point predictions
    c1, c2, _ = st.columns([3, 2, 4], vertical_alignment="bottom")  # the log axes: beside the Levi diagram
    c1.slider("σ-bins (Levi diagram, ENCE)", 5, 50, key="reg_n_bins", help="Levi et al. use 15 bins by default.")
    c2.segmented_control(
        "Binning", ["equal count", "equal width"], key="reg_binning",
        help="Equal-count bins of sorted σ (Levi et al.); equal-width between min and max σ (netcal's convention).",
    )
n_bins = int(st.session_state["reg_n_bins"])
binning = "width" if st.session_state["reg_binning"] == "equal width" else "count"
options = {"n_bins": n_bins, "binning": binning, "n_resamples": int(n_resamples), "n_simulations": int(n_sims),
           "seed": 0, **clu.resample_control(pset, "reg")}  # which rows the intervals and tests resample together

time_range = ui.over_time(pset, token, rows, models, group, "reg", whole)  # None: no time column or range
sub, base_key, report = ui.diagnose_rows(pset, token, rows, models, group, restrict=time_range, **options)
faint = ui.slice_background(*whole, rows, models, group, **options)  # all rows, while a slice is chosen
bg_key = faint and faint.base_key  # the data and filters of all rows: what its PIT, z, Q-Q, interval tables depend on
level = float(report.options.get("level", 0.95))
for note in report.options.get("notes", []):
    st.caption(ui.md_escape(note))
if report.metrics.empty:
    st.warning("Too few rows to diagnose with these filters.")
    st.stop()
colors = plots.model_colors(pset.models())  # colours follow the file's model order whatever is filtered

if sub.dist is None:  # point predictions only
    st.warning(
        "This file has point predictions only (no σ, quantiles or samples): only accuracy can be measured. "
        "Estimate an uncertainty first (e.g. ACCRUE or a constant σ on the Recalibrate page)."
    )
    ui.show_verdicts(report)
    ui.show_metric_table(views.metric_table(report.metrics, level))
    clu.show_statement(report)
    st.stop()

levi_tables = views.diagram_tables(report, "levi_bins")
shown = list(levi_tables)  # models with diagrams


def behind(table_name: str):
    """The all-rows tables drawn faintly behind a chosen slice's (None without a slice)."""
    return faint.tables(table_name, shown) if faint else None


@st.fragment(key="reg_linked")
def linked_views() -> None:
    """Everything a σ-bin selection or a view toggle changes: a click in the Levi diagram, Clear, the curve view,
    the Levi diagram's log axes, a tab or the τ of the lenses below rerun this part only (the server runs this
    function, the browser redraws only its elements); the controls above (rows, bins, binning) rerun the page."""
    fragment_t0 = time.perf_counter()
    charts_drawn: dict[str, object] = {}  # figures shown on the page (also offered as downloads)

    def chart(figure, key: str, export=None) -> None:
        charts_drawn[key] = export or figure  # export: the validated figure's builder (a download builds it)
        ui.chart(rc.prepared_figure(figure), key,  # its wire dict made once per (shared) figure; the selection's
                 live=key in ("reg_kuleshov", "reg_pit", "reg_z"))  # overlays: updated in place, not redrawn

    def overlay(name: str, digest: str, build, tables, table_name: str, **opts):
        """(the overlay shown — a plain-dict figure when no slice is drawn behind it —, the validated figure's
        builder for downloads), both cached on what they are drawn from."""
        background = behind(table_name)
        kind = "dict" if background is None else "validated"
        shown = ui.figure(f"{name}|{digest}|{kind}", lambda: overlay_figure(build, tables, background, **opts))
        return shown, lambda: ui.figure(f"{name}|{digest}", lambda: ui.steady_ranges(plots.with_background(
            build, tables, background, **opts)))

    # ------------------------------------------------------------------------------------- selection state
    selection = ui.LinkedSelection("reg", (token, rows, group, n_bins, binning, time_range and time_range[0]), shown)
    fig_key = f"{base_key}|{sorted(options.items())}"  # determines the Levi diagram (with what is drawn)
    levi_log = bool(st.session_state["reg_levi_log"])
    levi_base = f"{fig_key}|levi|log={levi_log}|epoch={selection.epoch}"
    levi_drawn = selection.drawn("reg_levi_chart", levi_base)

    def _levi_figure():
        fig = plots.with_background(plots.levi_figure, levi_tables, behind("levi_bins"), colors=colors,
                                    log_axes=levi_log)
        fig.update_layout(meta={"selection_epoch": selection.epoch})  # "Clear" gives every chart a new identity
        return plots.mark_selected(fig, levi_drawn)

    # the figure without marks and epoch is built once per bins and axes; the selection drawn and the epoch are
    # patched into its wire dict (a click or Clear rebuilds nothing)
    levi_plain = ui.figure(f"{fig_key}|levi|log={levi_log}|plain", lambda: rc.levi_plain_figure(
        levi_tables, behind("levi_bins"), colors=colors, log_axes=levi_log))
    levi_shown = rc.marked_figure(levi_plain, levi_drawn, layout_meta={"selection_epoch": selection.epoch})

    def levi():
        """The Levi figure with the selection drawn, as a figure (downloads)."""
        return ui.figure(f"{levi_base}|drawn={sorted(levi_drawn.items())}", _levi_figure)

    selected_report = None
    sel_mask = None
    selection_options = {**options, "diagrams": SELECTION_TABLES}  # the tables its overlays draw
    if selection.empty:
        # every single σ-bin's diagnosis, prepared in the server's idle time (the bins farthest from the diagonal
        # first): a click then reads it (the same function, arguments and seed: the same numbers)
        sigma_prefetch = sigma_prefetch_name(base_key, n_bins, binning)
        if st.session_state.get("reg_sigma_prefetch", sigma_prefetch) != sigma_prefetch:  # rows or bins left
            cache.cancel_prefetch(st.session_state["reg_sigma_prefetch"])
        st.session_state["reg_sigma_prefetch"] = sigma_prefetch
        prefetch_sigma_selections(sub, base_key, levi_tables, n_bins, binning, selection_options)
    else:  # the bins mean something with n_bins, binning; shared (never changed)
        chosen = sigma_selection(sub, base_key, selection.bins, n_bins, binning, selection_options)
        sel_key, sel_mask, selected_report = chosen.key, chosen.mask, chosen.report

    # ------------------------------------------------------------------------------------- linked views
    st.subheader("σ-bins and conditional calibration")
    st.caption(
        "Click a σ-bin in the Levi diagram (shift-click adds more; or drag a box / lasso) to recompute the quantile "
        "calibration curve, the PIT histogram and the metric table on the rows of those bins only."
    )
    n_sel = chosen.n_rows if sel_mask is not None else 0
    whose_rows = "all rows of the chosen slice" if faint is not None else "all rows"
    selection.row(f"**No σ-bins selected** — the views below use {whose_rows}." if selection.empty else
                  f"**{ui.md_escape(describe_selection(selection.bins, n_sel, 'σ-bins', n_bins=n_bins))}** "
                  + ui.md_escape(views.sigma_ranges(selection.bins, levi_tables)), icon=":material/deselect:")

    left, right = st.columns(2)
    with left:
        selection.chart(levi_shown, "reg_levi_chart")
        cap_l, view_l = st.columns([3, 2], vertical_alignment="center")
        cap_l.caption(
            "RMSE vs RMV per σ-bin (Levi et al. 2019), 90% bootstrap intervals; hover for the bin's σ range and count. "
            "Calibrated σ lies on the diagonal; a flat curve means σ does not track the error."
        )
        view_l.toggle("Log axes", key="reg_levi_log",  # in the fragment: a toggle redraws the linked views only
                      help="Log-log axes of the Levi diagram spread σ-bins that differ by orders of magnitude (one "
                      "far bin, models on different scales); RMSE = RMV stays the diagonal.")
    overlays = {}
    for table_name in ("calibration_curve", "pit_histogram", "z_histogram"):
        selected = views.diagram_tables(selected_report, table_name, shown) if selected_report is not None else None
        overlays[table_name] = with_selected(views.diagram_tables(report, table_name, shown), selected, colors)
    curve_tables, dashes, curve_colors = overlays["calibration_curve"]
    bands = {k for k in dashes} if selected_report is not None else None  # the selection's band (smaller N, wider)
    # what the overlay tables are drawn from: the diagnosis (fig_key), the selection, the background (bg_key)
    overlay_key = (fig_key, tuple(sorted(selection.bins.items())) if selected_report is not None else None, bg_key)

    def overlay_digest(name: str, parts):
        """The digest an overlay figure is keyed on: of its tables without a selection (a control that leaves them
        alone reuses the figure), of ``overlay_key`` with one (it determines the selection's tables: a new click
        hashes no table)."""
        key = (name, overlay_key, ecdf_diff if name == "reg_kuleshov" else None)
        return rc.keyed_digest(key, (lambda: key) if selected_report is not None else parts)
    with right:
        ui.init_state({"reg_curve_view": "curve"}, persist=True)
        ecdf_diff = st.session_state["reg_curve_view"] == "ECDF difference"
        # keyed on what it is drawn from: controls that leave the curves alone reuse it; fixed axes: a click
        # changes the traces only
        curve_shown, curve_export = overlay(
            "kuleshov", overlay_digest("reg_kuleshov", lambda: (
                curve_tables, curve_colors, dashes, bands, ecdf_diff, bg_key)),
            plots.pit_ecdf_difference_figure if ecdf_diff else plots.calibration_curve_figure, curve_tables,
            "calibration_curve", colors=curve_colors, dashes=dashes, bands=bands)
        chart(curve_shown, "reg_kuleshov", export=curve_export)
        cap_k, view_k = st.columns([1, 1], vertical_alignment="center")  # room for the two-option control
        cap_k.caption(
            ("PIT-ECDF difference (Säilynoja et al. 2022): observed minus expected share of targets below each "
             "predicted quantile; 0 is perfect calibration. " if ecdf_diff else
             "Quantile calibration (Kuleshov et al. 2018): share of targets below each predicted quantile. ")
            + "The ribbon is a simultaneous 95% band: a perfectly calibrated forecaster's whole curve stays inside it "
            "95% of the time" + (" (for the selected rows)." if selected_report is not None else ".")
        )
        view_k.segmented_control("Curve view", ["curve", "ECDF difference"], key="reg_curve_view",
                                 label_visibility="collapsed",
                                 help="ECDF difference: F̂(p) − p, which magnifies small departures at every level.")

    left2, right2 = st.columns(2)
    with left2:
        pit_tables, pit_dashes, _ = overlays["pit_histogram"]
        pit_digest = overlay_digest("reg_pit", lambda: (pit_tables, curve_colors, pit_dashes, bg_key))
        pit_shown, pit_export = overlay("pit", pit_digest, plots.pit_histogram_figure, pit_tables, "pit_histogram",
                                        colors=curve_colors, dashes=pit_dashes)
        chart(pit_shown, "reg_pit", export=pit_export)
        st.caption("PIT histogram: flat when calibrated; ∪ = over-confident, ∩ = under-confident, slope = bias.")
    with right2:
        z_tables, z_dashes, _ = overlays["z_histogram"]
        z_digest = overlay_digest("reg_z", lambda: (z_tables, curve_colors, z_dashes, bg_key))
        z_shown, z_export = overlay("z", z_digest, plots.z_histogram_figure, z_tables, "z_histogram",
                                    colors=curve_colors, dashes=z_dashes)
        chart(z_shown, "reg_z", export=z_export)
        st.caption("Standardised residuals z = (y − μ)/σ against N(0, 1): wider than N(0, 1) = σ too small.")

    # ------------------------------------------------------------------------------------- metrics
    if selected_report is not None:
        st.subheader("Metrics of the selected rows")
        st.caption(
            f"Each metric on the selected rows, next to its value on all rows; the {level:.0%} interval, the "
            "perfect-calibration value, the p-value and the verdict are those of the selection (its N). Tests, "
            "formulas and papers: see the Help page."
        )
        ui.show_verdicts(selected_report)
        rc.show_metric_groups(lambda: views.selection_vs_all(selected_report.metrics, report.metrics, level,
                                                             len(shown) > 1, compact=True),
                              selected_report.metrics, key=f"{sel_key}|{sorted(options.items())}|{level}|vs_all",
                              tests_key="reg_sel_tests_open")  # its tests table sent only while open
        clu.show_statement(selected_report)
    else:
        if not selection.empty:
            st.warning("Fewer than 2 rows in the selected bins: nothing to recompute.")
        st.subheader("Metrics")
        ui.show_verdicts(report)
        st.caption(
            f"Value with its {level:.0%} interval, the value a perfectly calibrated forecaster with the same "
            "predictions gets at this N, and the p-value of the test of perfect calibration. The headline above comes "
            "from a small primary family (Holm at family-wise 5%) that tests what the forecasts state: Gaussians — PIT "
            "uniformity, mean z, std z, 90% coverage, ENCE; quantile sets — the PIT histogram between the stated "
            "levels, the coverage of each stated level and of the widest stated interval, the share below the median; "
            "ensembles — the rank histogram, the member-range coverage, the share below the median (std z and ENCE "
            "unless the spread is degenerate). The other calibration statistics are flagged by Benjamini–Hochberg at "
            "5% FDR. Tests, formulas and papers: see Help."
        )
        if faint is not None:
            st.caption("'slice': the metric on the slice's rows; 'all rows': on the whole data with the same filters. "
                       "The interval, reference, p-value and verdict are the slice's.")
        # keyed on the diagnosis (its rows and options) and the level: a rerun with the same diagnosis builds nothing
        rc.show_metric_groups((lambda: views.metric_table(report.metrics, level, compact=True)) if faint is None else
                              (lambda: views.selection_vs_all(report.metrics, faint.metrics, level, len(shown) > 1,
                                                              compact=True, label="slice")),
                              report.metrics,
                              key=f"{fig_key}|{level}|table" + (f"|vs_all|{faint.key}" if faint else ""))
        clu.show_statement(report)

    st.subheader("More diagrams")
    # lazy tabs: only the open tab is computed and drawn (a closed tab costs the server nothing on a redraw)
    rank_tables = views.diagram_tables(report, "rank_histogram", shown)  # ensembles only
    more = ui.lazy_tabs(["Rank histogram"] * bool(rank_tables) + ["Intervals", "Q-Q plot", "ENCE vs bins",
                                                                  "Quantile-score decomposition",
                                                                  "CORP quantile reliability"], "reg_more_tab")

    def _intervals_figure():
        interval_tables = views.diagram_tables(report, "intervals", shown)
        digest = rc.keyed_digest(("reg_intervals", fig_key, bg_key), lambda: (interval_tables, colors, bg_key))
        return ui.figure(f"intervals|{digest}",
                         lambda: plots.with_background(plots.intervals_figure, interval_tables, behind("intervals"),
                                                       colors=colors))

    def _qq_figure():
        qq_tables = views.diagram_tables(report, "qq", shown)
        digest = rc.keyed_digest(("reg_qq", fig_key, bg_key), lambda: (qq_tables, colors, bg_key))
        return ui.figure(f"qq|{digest}",
                         lambda: plots.with_background(plots.qq_figure, qq_tables, behind("qq"), colors=colors))

    def _ence_bins_figure():
        # depends on the rows and the binning only (not on the σ-bins count, the resamples or the selection)
        ence_tables = ui.result_cached(f"{base_key}|ence_bins|{binning}",
                                       lambda: ence_by_bins_tables(sub, binning=binning))
        return ui.figure(f"ence_bins|{ui.content_key(ence_tables, colors, n_bins, bg_key)}",
                         lambda: plots.with_background(plots.ence_bins_figure, ence_tables, faint and ui.result_cached(
                             f"{faint.base_key}|ence_bins|{binning}", lambda: ence_by_bins_tables(faint.pset,
                                                                                                    binning=binning)),
                                                       colors=colors, current=n_bins))

    # the quantile-score lenses follow the σ-bin selection (its rows; the bins mean something only with their binning)

    def qs_rows() -> cc.PredictionSet:
        """The rows of the quantile-score lenses (cut out only when a lens is computed)."""
        return sub.take(sel_mask) if selected_report is not None else sub

    qs_part = (f"sel={n_bins},{binning},{sorted(selection.bins.items())}" if selected_report is not None
               else "sel=none")
    rows_note = " Computed on the selected σ-bins' rows." if selected_report is not None else ""
    ui.init_state({"reg_qs_level": 0.5}, persist=True)

    def _qs_corp_jobs(levels) -> list:
        """(key, compute) of the CORP diagrams of ``levels`` on the lenses' rows: what the page reads and what the
        background prefetch fills (the same function on the same key: the same numbers whichever computes them)."""
        return [(f"{base_key}|qs_reliability|{t}|{qs_part}", lambda t=t: quantile_reliability_of(qs_rows(), tau=t))
                for t in levels]

    def _qs_corp_figure(tau: float):
        # the isotonic fit and its consistency band depend on the rows and τ only (not on the page's other options);
        # without a slice behind it the figure is built as a plain dict (the validated figure's JSON, tested)
        def build():
            results = cache.prefetched_result(*_qs_corp_jobs([tau])[0])
            if faint is None:
                return rc.dict_figure(plots.quantile_reliability_figure_dict(results, colors=colors))
            return plots.with_background(plots.quantile_reliability_figure, results, ui.result_cached(
                f"{faint.base_key}|qs_reliability|{tau}", lambda: quantile_reliability_of(faint.pset, tau=tau)),
                colors=colors)

        return ui.figure(f"{base_key}|qs_corp|{tau}|{qs_part}", build)

    # the CORP band (~75 ms of CPU per level, R·G·C null draws) is a summary of the rows and τ that can be prepared
    # while the user reads the page: its current level from the first drawing of the rows (no σ-bins selected),
    # every level of the control once its tab is open (below); in a background thread, at the lowest priority
    qs_current = float(st.session_state["reg_qs_level"] or 0.5)
    if selected_report is None and faint is None:
        cache.prefetch(("qs_corp", base_key, qs_part), _qs_corp_jobs([qs_current]), when_idle=True)

    if rank_tables:
        with more["Rank histogram"]:
            if more["Rank histogram"].open:
                chart(ui.figure(f"rank|{ui.content_key(rank_tables, colors)}",
                                lambda: plots.rank_histogram_figure(rank_tables, colors=colors)), "reg_rank")
                st.caption("Rank of each target among its ensemble's members (ties broken at random; Hamill 2001): "
                           "flat when the target and the members are exchangeable. U = too little spread, ∩ = too "
                           "much, a slope = a bias (many low ranks: the forecasts are too high). Shaded: where a "
                           "calibrated ensemble's histogram falls (95%, all ranks at once).")
    with more["Intervals"]:
        if more["Intervals"].open:
            chart(_intervals_figure(), "reg_intervals")
            st.caption("Observed coverage of the central 50–99% intervals: below the diagonal = intervals too narrow.")
    with more["Q-Q plot"]:
        if more["Q-Q plot"].open:
            chart(_qq_figure(), "reg_qq")
            st.caption("Quantiles of z against N(0, 1) quantiles: an S-shape means heavier tails than Gaussian.")
    with more["ENCE vs bins"]:
        if more["ENCE vs bins"].open:
            chart(_ence_bins_figure(), "reg_ence_bins")
            st.caption(
                "ENCE at 2–100 σ-bins, against the band where a perfectly calibrated forecaster with the same σ falls "
                "(95%, 1,000 simulated draws per bin count, Gaussian errors). ENCE grows with the number of bins even "
                "under perfect calibration (Pernot 2024): a value means something only against the band at its own "
                "bin count. Above the band at every count = σ does not track the error; inside = no evidence at any "
                "binning."
            )
    with more["Quantile-score decomposition"]:
        if more["Quantile-score decomposition"].open:
            decomposition = ui.figure(f"{base_key}|qs_decomposition|{n_resamples}|{qs_part}",
                                      lambda: quantile_decomposition_table(qs_rows(), n_boot=int(n_resamples)))
            ui.show_decomposition_table(decomposition_display(decomposition, level))
            st.caption(
                "Quantile score QS_τ = MCB − DSC + UNC at τ = 0.05, 0.25, 0.5, 0.75, 0.95 (CORP, Dimitriadis et al. "
                "2021; Gneiting et al. 2023). MCB: what recalibrating the predicted τ-quantile by an increasing map "
                "(isotonic τ-quantile regression) would save — near 0 when calibrated; DSC: what the forecast's "
                "ordering of the targets is worth against the constant marginal quantile; UNC: the score of that "
                "constant. 95% block-bootstrap intervals with the recalibration held fixed. See Help." + rows_note
                + (f" Above {EXACT_ROWS:,} rows the isotonic fit is computed on a grid of about {GRID_VALUES:,} "
                   "values: the exact MCB and DSC exceed those shown by at most "
                   f"{decomposition['fit_bound'].max():.2g}." if decomposition["fit_bound"].max() > 0 else "")
            )
    with more["CORP quantile reliability"]:
        if more["CORP quantile reliability"].open:
            st.segmented_control("Quantile level τ (CORP reliability diagram)", list(DEFAULT_DECOMPOSITION_LEVELS),
                                 key="reg_qs_level", format_func=lambda t: f"{t:g}",
                                 help="The level whose predicted quantile the CORP diagram below recalibrates.")
            qs_tau = float(st.session_state["reg_qs_level"] or 0.5)
            if faint is None:  # the other levels first: the page computes this one now unless it is ready
                cache.prefetch(("qs_corp", base_key, qs_part), _qs_corp_jobs(
                    [t for t in DEFAULT_DECOMPOSITION_LEVELS if t != qs_tau] + [qs_tau]))
            chart(_qs_corp_figure(qs_tau), "reg_qs_corp")
            st.caption(
                f"CORP quantile reliability (Gneiting et al. 2023): the isotonic {qs_tau:g}-quantile recalibration of "
                f"the targets on the predicted {qs_tau:g}-quantile. On the diagonal = calibrated at that level; above "
                "= the predicted quantile is too low there (more targets fall below it than it claims), below = too "
                "high. The grey ribbon is a pointwise 90% consistency band: where a calibrated forecaster's curve "
                "falls at this N (targets redrawn from the forecasts)." + rows_note
            )

    # every figure of the page can be downloaded; those of closed tabs are built only when a download asks for them
    export_figures = ui.LazyFigures({
        "RMSE vs RMV (Levi)": levi, "Quantile calibration": charts_drawn["reg_kuleshov"],
        "PIT histogram": charts_drawn["reg_pit"], "Standardised residuals": charts_drawn["reg_z"],
        "Central intervals": _intervals_figure, "Q-Q plot": _qq_figure, "ENCE vs bins": _ence_bins_figure,
        "CORP quantile reliability": lambda tau=float(st.session_state["reg_qs_level"] or 0.5): _qs_corp_figure(tau),
    })

    def export_metrics() -> pd.DataFrame:
        """The metric CSV's rows (built when it is downloaded)."""
        every = report.metrics.assign(rows="all")
        if selected_report is None:
            return every
        return pd.concat([every, selected_report.metrics.assign(rows="selected σ-bins")], ignore_index=True)

    export_verdicts = report.verdicts.assign(rows="all")
    export_tables = None
    if selected_report is not None:
        export_verdicts = pd.concat([export_verdicts, selected_report.verdicts.assign(rows="selected σ-bins")],
                                    ignore_index=True)
        export_tables = ui.LazyFigures({  # built when the page report is downloaded
            "Metrics of the selected σ-bins": lambda: views.metric_table(selected_report.metrics, level)})
    ui.export_row(
        "regression", title=f"Regression diagnostics — {name}", report=report, figures=export_figures,
        metrics=export_metrics, pset=sub, tables=export_tables, verdicts=export_verdicts,
        notes=[f"Filters: rows = {rows}, models = {', '.join(models)}, group = {views.group_label(group)}."]
        + ([describe_selection(selection.bins, n_sel, "σ-bins", n_bins=n_bins)] if sel_mask is not None else []),
    )

    if sel_mask is not None and sel_mask.any():
        # lazy: the rows are cut out and sent only while the expander is open (opening it reruns this part)
        rows_box = st.expander(f"Selected rows (first {ui.MAX_TABLE_ROWS})", icon=":material/table_rows:",
                               key="reg_sel_rows_open", on_change="rerun")
        if rows_box.open:
            with rows_box:
                shown_rows = rc.keyed_result(("reg_sel_rows", sel_key, n_bins, binning, ui.MAX_TABLE_ROWS),  # csv-safe
                                             lambda: ui.csv_safe(views.regression_rows(sub, sel_mask,
                                                                                       ui.MAX_TABLE_ROWS)))
                ui.dataframe(shown_rows, neutralised=True, hide_index=True, width="stretch")

    ui.record_run_time(fragment_t0, "regression")  # a rerun of this part alone (a full run: below)


linked_views()

ui.record_run_time(_t0, "regression")
