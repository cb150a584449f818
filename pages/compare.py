"""Compare models page: every model's score relative to a baseline on the forecast units they all forecast, with
bootstrap intervals that resample whole forecast rounds, Diebold–Mariano tests (Holm over the models), the model
confidence set and the matrix of pairwise ratios (``cc.compare_models``).  A model opens on its diagnosis page."""

from __future__ import annotations

import time

import streamlit as st

import dashboard as ui
from calib_core.data.writing import to_csv_bytes
from calib_core.plots import compare as compare_plots
from dashboard import compare as cmp_ui
from views import compare as cv
from views.pages import download_name

_t0 = time.perf_counter()
st.title("Compare models")
data = ui.current_data()
reason = cv.empty_state(None if data is None else data[0])
if reason is not None:
    cmp_ui.empty_state(reason)  # why, a link to the Data page, a button loading the example hub; stops the page
pset, token, name = data
cmp_ui.opened_by_click(pset)  # a click on a model's point in the skill plot (previous run) opens its diagnosis
st.markdown(ui.data_caption(pset, name))
baseline, score, cluster, block = cmp_ui.controls(pset)
result = cmp_ui.comparison(pset, token, baseline, score, cluster, block)
label = cv.score_label(result.score)
st.caption(f"Mean scores on the {result.n_common:,} forecast units every model forecasts. Level α = {cv.ALPHA:g}, "
           f"fixed: {1 - cv.ALPHA:.0%} intervals, tests Holm-adjusted over the models at family-wise "
           f"{cv.ALPHA:.0%}, a {1 - cv.ALPHA:.0%} model confidence set. Resampled: "
           + ui.md_escape(result.clustering or "independent rows") + ".")

for sentence in cv.sentences(result):
    st.markdown("- " + ui.md_escape(sentence))
for note in cv.notes(result):
    st.caption(ui.md_escape(note))

order = cv.model_order(result)
table = result.table.reset_index(drop=True)
if cv.has_relative_scores(result):
    left, right = st.columns(2)
    with left:
        skill = ui.figure(f"cmp_skill|{ui.content_key(table, result.baseline, label)}",
                          lambda: compare_plots.skill_figure(table, result.baseline, alpha=cv.ALPHA, score=label))
        cmp_ui.skill_chart(skill, [str(m) for m in table["model"]])
        st.caption(f"Each model's {label} relative to the baseline's (log scale) with its {1 - cv.ALPHA:.0%} "
                   "interval; green: better than the baseline, red: worse (Holm-adjusted tests), grey: not "
                   "distinguishable. Click a model's point to open its diagnosis.")
    with right:
        ui.chart(ui.figure(f"cmp_pairs|{ui.content_key(result.pairwise, order, label)}",
                           lambda: compare_plots.pairwise_figure(result.pairwise, order, score=label)), "cmp_pairwise")
        st.caption(f"Mean {label} of the row model over the column model's on their common units: blue, the row "
                   "model scores lower (better); red, higher. Hover a cell for the p-value of the Diebold–Mariano "
                   "test of equal scores on the units both forecast (not adjusted for the number of pairs).")
else:
    st.info(f"No relative scores to draw: a ratio of mean {label}s means something only when they are positive, "
            "and here they are not. The models are compared by the difference of their mean scores (the sentences "
            "and the table); a score that is always positive (CRPS, WIS, Brier) gives the plots.",
            icon=":material/info:")

st.subheader("Table")
cmp_ui.show_table(cv.display_table(result), result.score)
st.download_button("Comparison table (CSV)", data=lambda: to_csv_bytes(cv.download_table(result)),
                   file_name=download_name(name, "compare", label, ext="csv"), mime="text/csv", on_click="ignore",
                   icon=":material/download:", key="cmp_download")
cmp_ui.open_diagnosis(pset, order)
ui.record_run_time(_t0, "compare")
