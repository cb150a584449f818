"""Recalibrate page: compare calibrators on held-out rows, before/after diagrams, downloads.

Thin by design: the comparison is ``cc.evaluate(..., diagrams=True)`` (every calibrator cloned, fitted on
calibration rows only and scored on test rows only, ``repeats`` random splits → mean ± std, plus the before/after
diagram tables of the first split from the estimators fitted in it), the calibrators and their parameters come from
``calib_core.calibrators.registry``, the summary table from ``calib_core.diagnosis.tables.comparison_summary`` (drawn
as a dot plot
by ``calib_core.plots.comparison.comparison_dot_figure``, the chosen metrics as a narrow table by
``comparison_columns``), the before/after figures from ``calib_core.plots.comparison`` and the downloads and
report from ``calib_core.export``.  This file lays them out and turns its radio labels into the core's arguments.

Data: the PredictionSet the Data page stored in ``st.session_state`` (``dashboard.state``'s contract: ``pset``,
``pset_token``, ``pset_name``), else a built-in example chosen here (``dashboard.EXAMPLES``), so the page also works
on its own.  A stored comparison belongs to the data token it was computed on and is dropped when the data change.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

import calib_core as cc
import dashboard as ui
from calib_core import export
from calib_core.base.groupwise import slice_columns
from calib_core.base.protocol import has_split_column
from calib_core.calibrators.registry import CalibratorEntry, Tunable, available_calibrators, metric_label
from calib_core.diagrams.classification_corp import mcb_dsc_points
from calib_core.evaluation.tables import comparison_columns, comparison_summary, slice_comparison_columns
from calib_core.plots import model_colors
from calib_core.plots.comparison import comparison_dot_figure, comparison_figures
from calib_core.plots.corp import emphasise, mcb_dsc_figure, picked_point
from views import pages as views
from views.summary import NOT_FROM_SUMMARY

RESULT = "recal_result"
BASELINE = "uncalibrated"  # the name of the "no calibrator" column
SPLIT_COLUMN = "split column"  # radio label → split="column"; "random" → split="random"


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------
def available(pset: cc.PredictionSet) -> dict[str, CalibratorEntry]:
    """Calibrators of the registry that can run on this set."""
    return {
        e.name: e
        for e in available_calibrators(
            pset.task,
            point_only=pset.task == "regression" and pset.dist is None,
            has_features=pset.features is not None and pset.features.shape[1] > 0,
            n_classes=views.n_classes(pset),
            has_slices=bool(slice_columns(pset)),
        )
    }


def param_widget(task: str, cal: str, p: Tunable, default: Any, pset: cc.PredictionSet, container) -> Any:
    """The widget of one tunable parameter (``default``: the constructor's default)."""
    key = f"recal_p_{task}_{cal}_{p.name}"
    if p.kind == "bool":
        return container.checkbox(p.label, key=ui.persistent(key, default), help=p.help)
    if p.kind == "int":
        return int(container.number_input(p.label, min_value=int(p.low), max_value=int(p.high), step=1,
                                          key=ui.persistent(key, int(default)), help=p.help))
    if p.kind == "float":
        return float(container.number_input(p.label, min_value=float(p.low), max_value=float(p.high),
                                            key=ui.persistent(key, float(default)), help=p.help, format="%.4g"))
    if p.kind == "choice":
        return container.selectbox(p.label, p.options, key=ui.persistent(key, default), help=p.help)
    if p.kind == "slice":
        cols = slice_columns(pset)
        if st.session_state.get(key) not in cols:
            st.session_state.pop(key, None)
        return container.selectbox(p.label, cols, key=ui.persistent(key, default if default in cols else cols[0]),
                                   help=p.help)
    if p.kind == "feature":
        cols = [str(c) for c in pset.features.columns]
        if st.session_state.get(key) not in cols:
            st.session_state.pop(key, None)
        return container.selectbox(p.label, cols, key=ui.persistent(key, cols[0]), help=p.help)
    raise ValueError(f"unknown parameter kind {p.kind!r}")






# ---------------------------------------------------------------------------------------------------------------
# the comparison (runs on "Run comparison"; results kept in session state)
# ---------------------------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------------------------
# figures and tables of a stored result
# ---------------------------------------------------------------------------------------------------------------












# ---------------------------------------------------------------------------------------------------------------
# page
# ---------------------------------------------------------------------------------------------------------------
st.title("Recalibrate")
st.markdown(
    "Fit calibrators on **calibration rows** and judge them on **held-out test rows** — never on the rows they "
    "were fitted on. Random splits can be repeated to see how much each number moves (mean ± std over trials)."
)

data = ui.current_data()
if data is not None:
    pset, token, data_name = data
    st.caption(
        f"Data: **{ui.md_escape(data_name)}** (from the Data page) · {pset.task} · {pset.n_rows:,} rows"
        + (f" · layout {pset.layout}" if pset.layout else "")
    )
else:
    if st.session_state.get("summary") is not None:  # a summary holds no rows to fit on
        st.info(NOT_FROM_SUMMARY["recalibrate"] + " Using a built-in example here.", icon=":material/info:")
    else:
        st.info("No data loaded on the Data page — using a built-in example.", icon=":material/info:")
    names = list(ui.EXAMPLES)
    example = st.selectbox("Built-in example", names, key=ui.persistent("recal_example", names[0]))
    try:
        pset = ui.load_example(example)
    except Exception as exc:  # noqa: BLE001 - the page stays usable
        st.error(f"Could not prepare the example: {ui.md_escape(exc)}")
        st.stop()
    token, data_name = f"example:{example}", example
    st.caption(f"{pset.n_rows:,} rows · {pset.task}" + (f" · layout {pset.layout}" if pset.layout else ""))

task = pset.task
if task == "classification" and (pset.top_label_only or pset.probs is None):
    st.error(
        "This file has the top-label confidence only. Classification calibrators need the full probability (or "
        "logit) vector of every row: upload prob_0 … prob_{K−1} or logit_0 … logit_{K−1} columns."
    )
    st.stop()

offered = available(pset)
default = [n for n, e in offered.items() if e.default]
if not default:
    default = list(offered)[:1]
if task == "regression" and pset.dist is None:
    st.info(
        "Point predictions only: the calibrators below estimate σ from the errors (and features).",
        icon=":material/info:",
    )

st.subheader("Calibrators")
cal_key = f"recal_cals_{task}"
if cal_key in st.session_state:
    st.session_state[cal_key] = [c for c in st.session_state[cal_key] if c in offered]
chosen_names = st.multiselect(
    "Calibrators to compare (the uncalibrated predictions are always included as the baseline)",
    list(offered),
    key=ui.persistent(cal_key, default),
    help="Each calibrator is cloned per trial, fitted on the calibration rows only and scored on the test rows.",
)
if task == "regression" and not (pset.features is not None and pset.features.shape[1]):
    st.caption("k-means σ and ACCRUE need feature columns x* in the file; this data has none.")

chosen: dict[str, Any] = {}
with st.expander("Calibrator parameters", expanded=False):
    for name in chosen_names:
        entry = offered[name]
        st.markdown(f"**{name}** — {entry.paper}")
        if not entry.tunable:
            st.caption("no parameters")
        values: dict[str, Any] = {}
        cols = st.columns(max(len(entry.tunable), 1))
        for p, col in zip(entry.tunable, cols):
            values[p.name] = param_widget(task, name, p, entry.default_of(p.name), pset, col)
        chosen[name] = entry.make(**values)
for name in chosen_names:  # calibrators whose expander was never opened still get their (default) parameters
    if name not in chosen:
        chosen[name] = offered[name].make()

st.subheader("Split")
col_ok = has_split_column(pset)
split_options = [SPLIT_COLUMN, "random"] if col_ok else ["random"]
if st.session_state.get("recal_split") not in split_options:
    st.session_state.pop("recal_split", None)
c_split, c_frac, c_seed, c_rep = st.columns([2, 2, 1, 1])
split_mode = c_split.radio(
    "Calibration / test rows",
    split_options,
    key=ui.persistent("recal_split", split_options[0]),
    horizontal=True,
    help="The file's split column (cal/test) or a random split re-drawn for every trial.",
)
is_random = split_mode == "random"
test_fraction = c_frac.slider("Test fraction", 0.1, 0.9, step=0.05, key=ui.persistent("recal_test_fraction", 0.5),
                              disabled=not is_random)
seed = int(c_seed.number_input("Seed", min_value=0, max_value=2**31 - 1, step=1, key=ui.persistent("recal_seed", 0)))
repeats = int(c_rep.number_input("Repeats", min_value=1, max_value=200, step=1, key=ui.persistent("recal_repeats", 20),
                                 disabled=not is_random,
                                 help="Random splits: CRUDE's protocol uses 20 trials (mean ± std)."))
if not col_ok:
    st.caption("No split column with both cal and test rows: the rows are split at random.")

n_bins, strategy = 15, "uniform"
if task == "classification":
    c_bins, c_strat = st.columns(2)
    n_bins = int(c_bins.number_input("Confidence bins (ECE, reliability)", min_value=2, max_value=100, step=1,
                                     key=ui.persistent("recal_n_bins", 15)))
    strategy = c_strat.radio("Bins", ("uniform", "quantile"), horizontal=True,
                             key=ui.persistent("recal_strategy", "uniform"),
                             format_func=lambda s: "equal width (Guo)" if s == "uniform" else "equal mass")
else:
    st.caption("ENCE and the Levi diagrams use 15 equal-count σ-bins (Levi et al.); the PIT histogram 20 bins.")

settings = {
    "task": task,
    "calibrators": {n: repr(chosen[n]) for n in chosen_names},
    "split": split_mode,
    "test_fraction": float(test_fraction),
    "seed": seed,
    "repeats": repeats if is_random else 1,
    "n_bins": n_bins,
    "strategy": strategy,
}

stored = st.session_state.get(RESULT)
if stored is not None and stored.get("token") != token:
    stored = None  # new data: an old comparison does not apply
    st.session_state.pop(RESULT, None)

run = st.button("Run comparison", type="primary", icon=":material/play_arrow:", disabled=not chosen_names)
if not chosen_names:
    st.caption("Choose at least one calibrator.")
if run and chosen_names:
    bar = st.progress(0.0, text="Fitting calibrators…")
    cals: dict[str, Any] = {BASELINE: None, **chosen}
    if task == "regression" and pset.dist is None:
        cals.pop(BASELINE)  # point predictions have no uncertainty to show "before"
    try:
        out = cc.evaluate(
            pset, cals, split="column" if split_mode == SPLIT_COLUMN else "random", repeats=settings["repeats"],
            seed=seed, test_fraction=float(test_fraction), diagrams=True,
            progress=lambda done, total, text: bar.progress(min(max(done / total, 0.0), 1.0), text=text),
            **({"n_bins": n_bins, "strategy": strategy} if task == "classification" else {}),
        )
    except (cc.InputError, ValueError) as exc:
        bar.empty()
        st.error(f"The comparison could not run: {ui.md_escape(exc)}")
        st.stop()
    bar.empty()
    stored = {"result": out, "token": token, "settings": settings}
    st.session_state[RESULT] = stored

if stored is None:
    st.info("Choose calibrators and press **Run comparison**.", icon=":material/arrow_upward:")
    st.stop()

if stored["settings"] != settings:
    st.warning("The controls changed since this comparison was run: press **Run comparison** to update it.",
               icon=":material/refresh:")

result: cc.EvaluationResult = stored["result"]
s_settings = stored["settings"]
n_trials = result.n_trials
n_cal = int(result.long["n_cal"].iloc[0]) if len(result.long) else 0
n_test = int(result.long["n_test"].iloc[0]) if len(result.long) else 0

st.subheader("Comparison on held-out rows")
how = result.split_description()
st.caption(
    f"{n_cal:,} calibration / {n_test:,} test rows per trial · {how} · "
    + ("mean ± std over trials" if n_trials > 1 else "one trial (no spread)")
)
for m in result.messages:
    st.warning(ui.md_escape(m))
if result.long.empty:
    st.error("No calibrator could be evaluated (see the messages above).")
    st.stop()
# Views of a stored comparison are built once and kept with it: a rerun that changes nothing in the comparison
# (a download choice, another model, a page switch) only re-sends them (Plotly figure construction is the
# expensive part of a redraw).
view = stored.setdefault("view", {})
if "summary" not in view:
    view["summary"] = comparison_summary(result)
summary = view["summary"]
metric_keys, default_metrics = views.comparison_metrics(summary, task)
labels = dict(zip(summary["metric"], summary["label"]))
metrics_key = f"recal_metrics_{task}"
if metrics_key in st.session_state:
    st.session_state[metrics_key] = [k for k in st.session_state[metrics_key] if k in metric_keys]
picked = st.multiselect(
    "Metrics shown", metric_keys, key=ui.persistent(metrics_key, default_metrics), format_func=labels.get,
    help="Rows of the chart and columns of the table below; every metric is in the CSV download.",
)
picked = [k for k in metric_keys if k in picked] or default_metrics
if ("dots", tuple(picked)) not in view:
    view[("dots", tuple(picked))] = comparison_dot_figure(summary[summary["metric"].isin(picked)],
                                                          colors=model_colors(result.calibrators),
                                                          reference=BASELINE)
ui.chart(view[("dots", tuple(picked))], "recal_dots")
st.caption(
    "Each dot is a calibrator's mean over trials on the test rows, the whisker ± one std; ★ marks the best of each "
    "row (↓ lower is better, ↑ higher, → closest to the target), the dashed line the uncalibrated predictions. "
    "Every row has its own scale."
)
table, best = comparison_columns(summary, picked)
# why a mean is inf or NaN (the rows behind it) goes under the table: a column of sentences would make the table
# scroll sideways; the CSV download keeps the note column
notes = table.pop("note") if "note" in table.columns else None
best = best.drop(columns=["note"], errors="ignore")
table = ui.csv_safe(table)  # model and calibrator names become cells of the toolbar's CSV download
best = best.set_axis(table.columns, axis=1).set_axis(table.index, axis=0)
styled = table.style.apply(
    lambda col: ["background-color: #dff0d8; font-weight: 600" if b else "" for b in best[col.name]], axis=0
)
ui.dataframe(styled, hide_index=True, width="stretch", height=38 + 35 * len(table),
             column_config={"model": st.column_config.TextColumn(pinned=True),
                            "calibrator": st.column_config.TextColumn(pinned=True)})
st.caption("mean ± std over trials on the test rows; the best value of each metric is highlighted.")
if notes is not None:
    for row, note in notes.items():
        if isinstance(note, str) and note:
            who = " · ".join(str(table.loc[row, c]) for c in ("model", "calibrator") if c in table.columns)
            st.caption(ui.md_escape(f"{who}: {note}"))

slice_cols = slice_columns(pset)
if slice_cols and result.calibrated:
    st.subheader("Per slice (test rows of trial 1)")
    slice_by = [chosen[n].get_params().get("by") for n in chosen_names if getattr(chosen[n], "uses_groups", False)]
    if st.session_state.get("recal_slice_by") not in slice_cols:
        st.session_state.pop("recal_slice_by", None)
    c_by, c_metric = st.columns(2)
    by = c_by.selectbox("Slice column", slice_cols,
                        key=ui.persistent("recal_slice_by", slice_by[0] if slice_by and slice_by[0] in slice_cols
                                          else slice_cols[0]),
                        help="The group column or a feature column (numeric features: 5 equal-count bins).")
    if ("slices", by) not in view:
        try:
            view[("slices", by)] = cc.slice_comparison(
                pset, result, by=by,
                **({"n_bins": s_settings["n_bins"], "strategy": s_settings["strategy"]}
                   if task == "classification" else {}))
        except ValueError as exc:
            view[("slices", by)] = exc
    per_slice = view[("slices", by)]
    if isinstance(per_slice, Exception):
        st.warning(f"No per-slice table: {ui.md_escape(per_slice)}")
    elif per_slice.empty:
        st.caption("No test rows to split into slices.")
    else:
        slice_metrics = [c for c in per_slice.columns if c not in ("model", "slice", "calibrator", "n_test")]
        default_metric = "coverage_90" if task == "regression" else "ece"
        if st.session_state.get("recal_slice_metric") not in slice_metrics:
            st.session_state.pop("recal_slice_metric", None)
        slice_metric = c_metric.selectbox(
            "Metric", slice_metrics, key=ui.persistent("recal_slice_metric", default_metric),
            format_func=lambda k: metric_label(k, task))
        slice_models = list(dict.fromkeys(per_slice["model"]))
        slice_model = slice_models[0]
        if len(slice_models) > 1:
            slice_model = st.selectbox("Model", slice_models, key="recal_slice_model")
        s_table, s_best = slice_comparison_columns(per_slice, slice_metric, task=task, model=slice_model)
        s_table = ui.csv_safe(s_table)
        s_best = s_best.set_axis(s_table.columns, axis=1).set_axis(s_table.index, axis=0)
        with st.container(key="recal_slice_table"):
            ui.dataframe(
                s_table.style.apply(lambda col: ["background-color: #dff0d8; font-weight: 600" if b else ""
                                                 for b in s_best[col.name]], axis=0),
                hide_index=True, width="stretch", height=38 + 35 * min(len(s_table), 12),
                column_config={"slice": st.column_config.TextColumn(pinned=True)})
        st.caption(
            "The chosen metric on the held-out rows of every slice, before (uncalibrated) and after each calibrator; "
            "the best cell of each slice is highlighted. A calibrator fitted on the whole data can fix the average "
            "while leaving slices off; the slice-wise calibrators (std scaling per slice, Mondrian conformal, "
            "temperature scaling per slice) fit each slice on its own calibration rows.")
        st.download_button("Per-slice table (CSV)", data=lambda: export.to_csv_bytes(per_slice),
                           file_name=views.download_name(data_name, "comparison", "slices", by, ext="csv"),
                           mime="text/csv", on_click="ignore", icon=":material/download:", key="recal_dl_slices")

models = [m for m in pset.models() if result.diagrams.get(m)]
picked_cal = None
if task == "classification" and models:
    st.subheader("MCB–DSC plane (test rows, mean over trials)")
    if "plane" not in view:
        view["plane"] = mcb_dsc_points(pset, result)
    points = view["plane"]
    if points.empty:
        st.caption("No calibrated test rows to place in the plane.")
    else:
        pick = picked_point(st.session_state.get("recal_plane"))
        if pick is not None and pick != st.session_state.get("recal_plane_applied"):
            # a new click: select that model and calibrator in the views below (before their widgets exist)
            st.session_state["recal_plane_applied"] = pick
            if pick[0] in models and len(models) > 1:
                st.session_state["recal_model"] = pick[0]
            if pick[1] in result.calibrators:
                st.session_state["recal_dl_which"] = pick[1]
        elif pick is None:
            st.session_state.pop("recal_plane_applied", None)
        picked_cal = pick[1] if pick is not None else None
        plane_fig = mcb_dsc_figure(points, colors=model_colors(result.calibrators), reference=BASELINE, selected=pick)
        ui.chart(plane_fig, "recal_plane", on_select="rerun", selection_mode="points")
        event_name = "positive class" if (points["target"] == "positive").all() else "top label"
        st.caption(
            f"Brier score of the {event_name} event split as S = MCB − DSC + UNC by the CORP (PAV) recalibration "
            "(Dimitriadis et al. 2021; the plane of their 2024 triptych): right = more miscalibrated, up = more "
            "discriminating; dotted lines have equal score, better towards the top left. Arrows go from each "
            "model's uncalibrated predictions to its calibrators — a calibrator should move left without losing "
            "height. Marker shape = model. "
            + (f"Each point is the mean over {int(points['n_trials'].max())} trials' test rows, bars ± one std. "
               if int(points["n_trials"].max()) > 1 else "")
            + "Click a point to select its model and calibrator below."
        )

st.subheader("Before / after (test rows of trial 1)")
if not models:
    st.warning("No diagrams: no calibrator could be fitted.")
    st.stop()
model = models[0]
if len(models) > 1:
    model = st.selectbox("Model", models, key="recal_model")
levi_log = bool(task == "regression" and st.session_state.get("recal_levi_log", False))


def cached_figures(m: str) -> dict[str, Any]:
    if ("figures", m, levi_log) not in view:
        view[("figures", m, levi_log)] = comparison_figures(result, m, reference=BASELINE, log_axes=levi_log)
    return view[("figures", m, levi_log)]


figs = cached_figures(model)
names = list(figs)
if picked_cal is not None and picked_cal in result.calibrators:  # the plane's pick stands out in every figure
    figs = {k: emphasise(f, picked_cal, result.calibrators) for k, f in figs.items()}
if task == "regression":
    left, right = st.columns(2)
    with left:
        ui.chart(figs[names[0]], "recal_kuleshov")
        st.caption("Share of test targets below each predicted quantile; the grey ribbon is where a perfectly "
                   "calibrated forecaster falls 95% of the time.")
    with right:
        ui.chart(figs[names[2]], "recal_pit")
        st.caption("PIT histogram: flat when calibrated; ∪ = over-confident, ∩ = under-confident, slope = bias.")
    ui.chart(figs[names[1]], "recal_levi")
    c_caption, c_log = st.columns([4, 1], vertical_alignment="center")
    c_caption.caption("RMSE vs RMV per σ-bin, one panel per calibrator with the uncalibrated bins in grey: a "
                      "calibrator that only fixes the average (Kuleshov curve) can still leave σ unrelated to the "
                      "error — Levi et al.'s point. The panels share their axes, fitted to the calibrated bins.")
    c_log.toggle("Log axes", key=ui.persistent("recal_levi_log", False),
                 help="Log-log axes spread σ-bins that differ by orders of magnitude; RMSE = RMV stays the diagonal.")
    tabs = st.tabs(names[3:])
    for tab, name in zip(tabs, names[3:]):
        with tab:
            ui.chart(figs[name], f"recal_fig_{name}")
else:
    left, right = st.columns(2)
    with left:
        ui.chart(figs[names[0]], "recal_reliability")
    with right:
        ui.chart(figs[names[1]], "recal_confidence")
    st.caption("One line per calibrator at (mean confidence, accuracy) of each bin, with 90% Wilson intervals; "
               "on the diagonal = calibrated (Guo et al. 2017). Sparse low-confidence bins have wide intervals; "
               "equal-mass bins give every point the same number of rows. The histogram's hover shows each "
               "calibrator's average confidence and accuracy.")

st.subheader("Downloads")
d1, d2, d3 = st.columns(3)
with d1:
    st.markdown("**Comparison table**")
    st.download_button("Summary (CSV)", data=lambda: export.to_csv_bytes(result.summary),
                       file_name=views.download_name(data_name, "comparison", "summary", ext="csv"),
                       mime="text/csv", on_click="ignore",
                       icon=":material/download:", key="recal_dl_summary")
    st.download_button("Every trial (CSV)", data=lambda: export.to_csv_bytes(result.long),
                       file_name=views.download_name(data_name, "comparison", "trials", ext="csv"),
                       mime="text/csv", on_click="ignore",
                       icon=":material/download:", key="recal_dl_long")
with d2:
    st.markdown("**Calibrated predictions**")
    cal_names = [n for n in result.calibrators if any(n in v for v in result.calibrated.values())]
    if cal_names and st.session_state.get("recal_dl_which") not in cal_names:  # default: the first calibrator
        st.session_state["recal_dl_which"] = cal_names[min(1, len(cal_names) - 1)]
    which = st.selectbox("Calibrator", cal_names, key="recal_dl_which",
                         help="Fitted on the calibration rows of trial 1, applied to every row; the split column "
                              "says which rows were used for fitting.")
    if which:
        st.download_button("Predictions (CSV)",
                           data=lambda: export.to_csv_bytes(export.calibrated_frame(pset, result, which)),
                           file_name=views.download_name(data_name, "calibrated", which, ext="csv"),
                           mime="text/csv", on_click="ignore",
                           icon=":material/download:", key="recal_dl_csv")
        st.download_button("Predictions (Parquet)",
                           data=lambda: export.to_parquet_bytes(export.calibrated_frame(pset, result, which)),
                           file_name=views.download_name(data_name, "calibrated", which, ext="parquet"),
                           mime="application/octet-stream",
                           on_click="ignore", icon=":material/download:", key="recal_dl_parquet")
with d3:
    st.markdown("**Figures and report**")
    fig_name = st.selectbox("Figure", names, key="recal_dl_fig")
    st.download_button("Figure (HTML)", data=lambda: export.figure_html(figs[fig_name]),
                       file_name=views.download_name(data_name, fig_name.split(" (")[0], ext="html"),
                       mime="text/html",
                       on_click="ignore", icon=":material/download:", key="recal_dl_figure")

    def page_report() -> str:
        all_figs = {}
        if task == "classification" and "plane" in view and not view["plane"].empty:  # the plane, without a pick
            all_figs["MCB–DSC plane"] = mcb_dsc_figure(view["plane"], colors=model_colors(result.calibrators),
                                                       reference=BASELINE)
        for m in models:
            for name, fig in cached_figures(m).items():
                all_figs[f"{name} — {m}" if len(models) > 1 else name] = fig
        return export.evaluation_report_html(
            pset,
            result,
            title=f"Recalibration comparison: {data_name}",
            figures=all_figs,
            options={
                "calibrators": "; ".join(f"{n} = {r}" for n, r in s_settings["calibrators"].items()),
                **({"confidence bins": s_settings["n_bins"], "bin strategy": s_settings["strategy"]}
                   if task == "classification" else {}),
            },
        )

    st.download_button("Page report (HTML)", data=page_report,
                       file_name=views.download_name(data_name, "recalibration", "report", ext="html"),
                       mime="text/html", on_click="ignore", icon=":material/download:", key="recal_dl_report")
