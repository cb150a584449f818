"""Data page: upload a prediction file or load a built-in example; column mapping; forecast hubs (forecast files
plus their truth, uploaded or a hub folder on the server: ``dashboard.hub_loading``); validation summary; templates.

The loaded set lives in session state (``dashboard.state``: ``pset``, ``pset_token``, ``pset_name``), so every
other page sees it.  An upload is parsed once per content (sha1 of the bytes) and mapping; a broken upload
shows the loader's message and keeps the previously loaded data.
"""

from __future__ import annotations

import json
import time

import streamlit as st
from streamlit.errors import StreamlitAPIException

import calib_core as cc
import dashboard as ui
from calib_core.data import templates
from calib_core.scale.distributed import PartitionError
from dashboard import hub_loading
from dashboard import summary as summ
from views import data_dirs, loading
from views import pages as views
from views import summary as summary_views

_t0 = time.perf_counter()


def _load_example() -> None:
    """Button callback (runs before the script, so the sidebar and every page see the new data at once)."""
    name = st.session_state["data_example"]
    ui.set_example(name)
    st.session_state.pop("data_upload_error", None)
    st.session_state["data_notice"] = f"Loaded: {name}"


def _prefill_mapping(token: str, data: bytes, name: str) -> None:
    """Start the column-mapping form of a new file with what detection guessed (once per file)."""
    if st.session_state.get("data_map_file") == token:
        return
    st.session_state["data_map_file"] = token
    try:
        _, _, guess = ui.upload_columns(token, data, name)
    except cc.InputError:
        return
    for field, value in views.mapping_form_values(guess).items():
        st.session_state[f"data_map_{field}"] = value


def _parse_upload() -> None:
    """Uploader / option callback: parse a new upload once (sha1 of the bytes); keep the old data on errors."""
    uploaded = st.session_state.get("data_upload")
    st.session_state.pop("data_upload_error", None)
    if uploaded is None:  # the uploader was emptied: the loaded data stays
        st.session_state.pop("data_upload_ident", None)
        return
    data = uploaded.getvalue()
    token = ui.content_token(data)
    renormalize = bool(st.session_state.get("data_renormalize", False))
    options = loading.reading_options(st.session_state.get("data_crossing"), st.session_state.get("data_layout"))
    st.session_state["data_upload_ident"] = (token, renormalize, loading.options_token(options))
    st.session_state["data_mapping"] = None
    _prefill_mapping(token, data, uploaded.name)
    st.session_state["data_upload_hub"] = hub_loading.is_hub_upload(token, data, uploaded.name)
    if st.session_state["data_upload_hub"]:  # a forecast-hub file: read with its truth file, no column mapping
        hub_loading.parse_single_hub(uploaded.name, data)
        return
    try:
        pset = ui.parse_upload(token, data, uploaded.name, "", None, renormalize, **options)
    except cc.InputError as err:
        st.session_state["data_upload_error"] = err.app_message()
    else:
        ui.set_data(pset, f"upload:{token}:auto:{loading.options_token(options)}:{int(renormalize)}", uploaded.name,
                    "upload")
        st.session_state["data_notice"] = f"Loaded: {uploaded.name}"


def _switch_positive() -> None:
    """Positive class callback: load the same upload again with the chosen positive class (``columns={'positive':
    …}`` added to the mapping in use); keep the loaded data on errors."""
    uploaded = st.session_state.get("data_upload")
    if uploaded is None:
        return
    data = uploaded.getvalue()
    token = ui.content_token(data)
    mapping = views.positive_mapping(st.session_state.get("data_mapping"), st.session_state["data_positive"])
    mapping_json = json.dumps(mapping, sort_keys=True)
    renormalize = bool(st.session_state.get("data_renormalize", False))
    options = loading.reading_options(st.session_state.get("data_crossing"), st.session_state.get("data_layout"))
    try:
        pset = ui.parse_upload(token, data, uploaded.name, mapping_json, "classification", renormalize,
                               crossing=options["crossing"])
    except cc.InputError as err:
        st.session_state["data_upload_error"] = err.app_message()
        return
    st.session_state.pop("data_upload_error", None)
    st.session_state["data_mapping"] = mapping
    mhash = ui.content_token(mapping_json.encode())[:12]
    ui.set_data(pset, f"upload:{token}:classification:{mhash}:{options['crossing']}:{int(renormalize)}",
                uploaded.name, "upload")
    st.session_state["data_notice"] = f"Loaded: {uploaded.name} (positive class {mapping['positive']!r})"


def _forecast_hub_link() -> None:
    """A link to the Forecast hub page (when the navigation has it)."""
    try:
        st.page_link("pages/hub.py", label="Scores by model, horizon, date and location on the Forecast hub page",
                     icon=":material/arrow_forward:")
    except StreamlitAPIException:  # the page is not registered in this build
        st.caption("The Forecast hub page (scores by model, horizon, date and location) is not part of this build.")


def _open_summary_upload() -> None:
    """Summary-file uploader callback: open it as the loaded data; keep what was loaded on errors."""
    uploaded = st.session_state.get("data_summary_upload")
    st.session_state.pop("data_summary_error", None)
    if uploaded is None:
        return
    try:
        summ.open_summary_bytes(uploaded.getvalue(), uploaded.name)
    except cc.InputError as err:
        st.session_state["data_summary_error"] = err.app_message()
    else:
        st.session_state["data_notice"] = f"Opened the summary {uploaded.name}"


def _open_server_path() -> None:
    """'Open' button callback: a summary file or a Parquet data set under the allowed directories."""
    text = str(st.session_state.get("data_server_path", "")).strip()
    st.session_state.pop("data_summary_error", None)
    try:
        if text.lower().endswith((".summary", ".zip")):
            summ.open_summary_path(text)
        else:
            summ.summarize_server_data(text, int(st.session_state.get("data_server_bins", 15)))
    except (cc.InputError, PartitionError) as err:
        st.session_state["data_summary_error"] = err.app_message() if isinstance(err, cc.InputError) else str(err)
    else:
        st.session_state["data_notice"] = f"Opened {text}"


st.title("Data")
st.markdown(
    "Load predictions to diagnose: **upload** a CSV, TSV or Parquet file (one row per example) or an .npz of "
    "arrays (e.g. probs and labels), or start from a "
    "**built-in example**. The loaded data stays available on every page until you load something else."
)

# ------------------------------------------------------------------------------------------ examples
ui.init_state({"data_example": ui.DEFAULT_REGRESSION_EXAMPLE}, persist=True)
ui.persist("data_renormalize")
ui.persist("data_hub_output_type", "data_upload_output_type", "data_hub_path", "data_hub_truth_path")
ui.init_state({"data_crossing": "rearrange", "data_layout": "auto"}, persist=True)
with st.container(border=True):
    st.subheader("Built-in examples")
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    example = c1.selectbox(
        "Example",
        list(ui.EXAMPLES),
        key="data_example",
        help="Trained or simulated on this machine on first use (scikit-learn's bundled data sets; no network).",
    )
    c2.button("Load example", type="primary", key="data_load_example", width="stretch", on_click=_load_example)

# ------------------------------------------------------------------------------------------ upload
with st.container(border=True):
    st.subheader("Upload a prediction file")
    st.caption(
        "Regression: `y` plus `mean`/`std` (or `var`, `log_var`), quantile columns `q0.05 …`, or samples "
        "`sample_0 …`. Classification: `label` (or `y`) plus one probability column per class — `prob_0 …`, "
        "`prob_<class>`, `p_<class>`, `<class>_prob` — or `logit_0 …` (binary: one `prob` or `logit`); columns named "
        "by the classes themselves, as `pd.DataFrame(clf.predict_proba(X), columns=clf.classes_)` writes them; "
        "several forecasters' probability columns of one binary event beside its outcome (`obs`, `y`, `target` …) "
        "are read as several models. "
        "Optional: `split` (cal/test or calibration/test), `group`, `model`, features `x*`. See the templates below. "
        f"Up to **{ui.upload_limit_mb():,} MB** per file (Parquet holds 10⁷ rows of mean, std and y in about "
        "240 MB; as CSV they take up to 2.5 times more)."
    )
    uploaded = st.file_uploader(
        "Prediction file", type=ui.UPLOAD_TYPES, key="data_upload", on_change=_parse_upload,
        max_upload_size=ui.upload_limit_mb(),
    )
    renormalize = st.checkbox(
        "Renormalise probability rows that do not sum to 1",
        key="data_renormalize",
        on_change=_parse_upload,
        help="Off by default: rows that do not sum to 1 are refused with a message naming them.",
    )
    r1, r2 = st.columns(2)
    r1.selectbox("Crossing quantiles", list(loading.CROSSING_LABELS), format_func=loading.CROSSING_LABELS.get,
                 key="data_crossing", on_change=_parse_upload,
                 help="Regression: rows whose quantiles decrease with the level are sorted per row (rearrangement, "
                 "which never increases the quantile loss) and counted, or dropped and counted.")
    r2.selectbox("Layout", list(loading.LAYOUT_LABELS), format_func=loading.LAYOUT_LABELS.get, key="data_layout",
                 on_change=_parse_upload,
                 help="Regression files with several uncertainty layouts (e.g. mean/std and quantile columns): "
                 "which one to read. Auto reads the one that keeps the most rows and says so below.")
    options = loading.reading_options(st.session_state.get("data_crossing"), st.session_state.get("data_layout"))
    if uploaded is not None:
        data = uploaded.getvalue()
        token = ui.content_token(data)
        ident = (token, bool(renormalize), loading.options_token(options))
        if st.session_state.get("data_upload_ident") != ident:  # e.g. restored widget
            _parse_upload()

        if st.session_state.get("data_upload_error"):
            st.error(ui.md_escape(st.session_state["data_upload_error"]), icon=":material/error:")
            previous = ui.current_data()
            if previous is not None:
                st.caption(f"Still using the previously loaded data: {ui.md_escape(previous[2])}.")

        # ---- a forecast-hub file: its truth file (and output type), never the column mapping --------------
        is_hub = bool(st.session_state.get("data_upload_hub"))
        if is_hub:
            st.caption("This is a forecast-hub file (model output): its scores need the observed values. Give the "
                       "hub's truth file (target data) here; several forecast files or a hub folder: see "
                       "**Forecast hub** below.")
            st.file_uploader("Truth (target data)", type=loading.HUB_UPLOAD_TYPES, key="data_upload_truth",
                             on_change=_parse_upload, max_upload_size=ui.upload_limit_mb())
            single_types = [t for t in loading.OUTPUT_TYPE_LABELS if t in hub_loading.single_types(uploaded.name,
                                                                                                   data)]
            if len(single_types) > 1:
                if st.session_state.get("data_upload_output_type") not in single_types:
                    st.session_state["data_upload_output_type"] = single_types[0]
                st.selectbox("Output type", single_types, format_func=loading.OUTPUT_TYPE_LABELS.get,
                             key="data_upload_output_type", on_change=_parse_upload,
                             help="The file holds several output types: the one read (quantile by default).")

        # ---- column mapping (always available for uploads; opened when guessing failed) ----------------
        try:
            names, head, _ = ui.upload_columns(token, data, uploaded.name)
        except cc.InputError:
            names, head = [], None
        if names and not is_hub:
            if st.session_state.get("data_upload_error"):
                st.caption("The columns could not be read as predictions: map them below and load the file again.")
            with st.expander("Column mapping", expanded=bool(st.session_state.get("data_upload_error")),
                             icon=":material/table_edit:"):
                st.caption("Pre-filled with what was detected in the file; change what is wrong and press "
                           "**Load with this mapping**. First rows of the file:")
                ui.dataframe(head, hide_index=True, width="stretch", height=180)
                none = "—"
                ui.init_state({"data_map_task": "classification" if views.looks_like_classification(names)
                               else "regression"})  # only if the guess could not be made
                task = st.segmented_control("Task", ["regression", "classification"], key="data_map_task")
                task = task or "regression"
                choices: dict[str, object] = {}
                if task == "regression":
                    m1, m2, m3 = st.columns(3)
                    choices["y"] = m1.selectbox("Target y", [none, *names], key="data_map_y")
                    choices["mean"] = m2.selectbox("Mean / point prediction", [none, *names], key="data_map_mean")
                    kind = choices["kind"] = m3.selectbox(
                        "Uncertainty layout",
                        [*views.SPREAD_KINDS, "quantiles", "samples", "none (point only)"],
                        key="data_map_kind",
                    )
                    if kind in views.SPREAD_KINDS:
                        choices["spread"] = st.selectbox(f"{kind} column", [none, *names], key="data_map_spread")
                    elif kind in ("quantiles", "samples"):
                        choices["multi"] = st.multiselect(f"{kind} columns", names, key="data_map_multi")
                        if kind == "quantiles":
                            choices["levels"] = st.text_input(
                                "Quantile levels of these columns, comma-separated (blank: read from the names)",
                                key="data_map_levels",
                            )
                else:
                    m1, m2 = st.columns([1, 2])
                    choices["label"] = m1.selectbox("Label column", [none, *names], key="data_map_label")
                    choices["score_kind"] = m1.selectbox("Scores are", ["probs", "logits"], key="data_map_score_kind")
                    choices["scores"] = m2.multiselect(
                        "Score columns (one per class, in class order; one column = binary positive class)",
                        names, key="data_map_scores",
                    )
                    m3, m4 = st.columns([2, 1])
                    choices["models"] = m3.multiselect(
                        "Model columns (several forecasters of one binary event: one probability column each, read "
                        "as one model each)", names, key="data_map_models",
                        help="E.g. Logistic, EMOS, ENS, EPC beside an outcome column: each column becomes a model "
                        "that the Classification and Compare models pages compare. Leave the score columns empty.")
                    choices["positive"] = m4.text_input(
                        "Positive class (binary; blank: detected)", key="data_map_positive",
                        help="The label value whose probability the binary column holds.")
                o1, o2, o3, o4 = st.columns(4)
                for role, col in (("split", o1), ("group", o2), ("model", o3), ("time", o4)):
                    choices[role] = col.selectbox(
                        f"{role} column (optional)", [none, *names], key=f"data_map_{role}",
                        help="Dates/times (ISO 8601, any format pandas reads) or numbers; cells that are no "
                             "date/time are dropped and counted below." if role == "time" else None)
                mapping = views.column_mapping(task, choices, none)
                if st.button("Load with this mapping", key="data_map_apply", type="primary"):
                    mapping_json = json.dumps(mapping, sort_keys=True)
                    try:
                        pset = ui.parse_upload(token, data, uploaded.name, mapping_json, task, bool(renormalize),
                                               crossing=options["crossing"])
                    except cc.InputError as err:
                        st.session_state["data_upload_error"] = err.app_message()
                        st.rerun()
                    else:
                        st.session_state.pop("data_upload_error", None)
                        st.session_state["data_mapping"] = mapping
                        mhash = ui.content_token(mapping_json.encode())[:12]
                        new_token = f"upload:{token}:{task}:{mhash}:{options['crossing']}:{int(bool(renormalize))}"
                        ui.set_data(pset, new_token, uploaded.name, "upload")
                        st.session_state["data_notice"] = f"Loaded: {uploaded.name} (with the column mapping)"
                        st.rerun()

# ------------------------------------------------------------------------------------------ forecast hub
with st.container(border=True):
    st.subheader("Forecast hub: forecast files and their truth")
    st.caption(
        "A hubverse hub (model output with `output_type`, `output_type_id`, `value` and task-ID columns such as "
        "`reference_date`, `horizon`, `location`, `target`) or a legacy COVID-19 / FluSight hub (`forecast_date`, "
        "`target`, `target_end_date`, `location`, `type`, `quantile`, `value`): upload one or more forecast files "
        "(the model is the `model_id` column, else the file name `<round>-<model>.csv`) and the truth file. "
        "Forecasts are joined to the truth on the columns both share; forecasts without truth are counted below."
    )
    st.file_uploader("Forecast files (one or more: .csv, .parquet, .gz)", type=loading.HUB_UPLOAD_TYPES,
                     accept_multiple_files=True, key="data_hub_forecasts", on_change=hub_loading.parse_hub_uploads,
                     max_upload_size=ui.upload_limit_mb())
    st.file_uploader("Truth (target data)", type=loading.HUB_UPLOAD_TYPES, key="data_hub_truth",
                     on_change=hub_loading.parse_hub_uploads, max_upload_size=ui.upload_limit_mb())
    hub_allowed = summ.allowed_data_dirs()
    hub_uploaded = bool(st.session_state.get("data_hub_forecasts"))
    hub_types = ([t for t in loading.OUTPUT_TYPE_LABELS if t in hub_loading.hub_types()] if hub_uploaded
                 else list(loading.OUTPUT_TYPE_LABELS) if hub_allowed else [])
    if len(hub_types) > 1:
        if st.session_state.get("data_hub_output_type") not in hub_types:
            st.session_state["data_hub_output_type"] = hub_types[0]
        st.selectbox("Output type", hub_types, format_func=loading.OUTPUT_TYPE_LABELS.get, key="data_hub_output_type",
                     on_change=hub_loading.parse_hub_uploads,
                     help="Which output type to read when the files hold several (quantile by default).")
    if hub_uploaded and st.session_state.get("data_hub_ident") != hub_loading.hub_ident():
        hub_loading.parse_hub_uploads()  # e.g. restored widgets
    if hub_allowed:
        h1, h2, h3 = st.columns([4, 4, 1.6], vertical_alignment="bottom")
        h1.text_input("Hub folder on the server", key="data_hub_path", placeholder="my-hub",
                      help="The hub's folder (holding model-output/), its model-output folder or one model's folder, "
                      "under the allowed paths (see Large data below).")
        h2.text_input("Truth file on the server (blank: the hub's target-data file)", key="data_hub_truth_path",
                      placeholder="my-hub/target-data/time-series.csv")
        h3.button("Open hub folder", key="data_hub_open", type="primary", width="stretch",
                  on_click=hub_loading.open_hub_folder)
    if st.session_state.get("data_hub_error"):
        st.error(ui.md_escape(st.session_state["data_hub_error"]), icon=":material/error:")
        previous = ui.current_data()
        if previous is not None:
            st.caption(f"Still using the previously loaded data: {ui.md_escape(previous[2])}.")

# ------------------------------------------------------------------------------------------ large data
with st.container(border=True):
    st.subheader("Large data: a Parquet data set on the server, or a summary file")
    st.caption(
        "Too many rows to upload? Open a Parquet data set that lives on this server by path or glob: it is read "
        "one partition at a time into a mergeable summary (per-bin counts and exact sums; no rows are kept), and "
        "the Regression and Classification pages draw from it. Or open a summary file written by "
        "`python -m calib_core report … --save-summary run.summary`."
    )
    allowed = summ.allowed_data_dirs()
    if allowed:
        st.caption("Paths allowed on this server: " + ui.md_escape(", ".join(str(p) for p in allowed))
                   + f" (relative paths start at the first). Engine: {ui.md_escape(summ.engine()[1])}.")
    else:
        st.caption("Opening files on this server is off: " + ui.md_escape(data_dirs.how_to_allow()) + ".")
    p1, p2, p3 = st.columns([5, 1.3, 1.2], vertical_alignment="bottom")
    p1.text_input("Path or glob on the server (Parquet data set, or a .summary file)", key="data_server_path",
                  placeholder="runs/2026-11/*.parquet", disabled=not allowed)
    p2.number_input("Bins", 5, 50, 15, key="data_server_bins", disabled=not allowed,
                    help="σ-bins (regression) or confidence bins (classification) of the summary: fixed once made.")
    p3.button("Open", key="data_server_open", type="primary", width="stretch", on_click=_open_server_path,
              disabled=not allowed)
    st.file_uploader("Summary file (from --save-summary)", type=["summary", "zip"], key="data_summary_upload",
                     on_change=_open_summary_upload)
    if st.session_state.get("data_summary_error"):
        st.error(ui.md_escape(st.session_state["data_summary_error"]), icon=":material/error:")

# ------------------------------------------------------------------------------------------ summary
notice = st.session_state.pop("data_notice", None)
if notice:
    st.toast(ui.md_escape(notice), icon=":material/check_circle:")
current = ui.current_data()
loaded_summary = summ.current_summary()
st.subheader("Loaded data")
if loaded_summary is not None:
    summary, _, summary_name = loaded_summary
    st.markdown(summ.summary_caption(summary, summary_name))
    if st.session_state.get("summary_note"):
        st.caption(ui.md_escape(st.session_state["summary_note"]))
    ui.dataframe(summary_views.summary_facts(summary), hide_index=True, width="stretch")
    dropped_rows = summary_views.dropped_rows(summary)
    if not dropped_rows.empty:
        st.markdown("**Dropped rows by reason** (row numbers of the data set, files in name order, from 1):")
        ui.dataframe(dropped_rows, hide_index=True, width="stretch")
    target = "pages/regression.py" if summary.spec.task == "regression" else "pages/classification.py"
    st.page_link(target, label=f"Diagnose it on the {summary.spec.task.title()} page",
                 icon=":material/arrow_forward:")
    st.caption(summary_views.NOT_FROM_SUMMARY["rows"])
elif current is None:
    st.info("Nothing loaded yet: pick an example or upload a file above.")
else:
    pset, token, name = current
    st.markdown(ui.data_caption(pset, name))
    dropped = pset.dropped.total
    k1, k2, k3, k4 = st.columns(4)
    k1.metric("rows read", f"{pset.n_read:,}")
    k2.metric("rows kept", f"{pset.n_rows:,}")
    k3.metric("rows dropped", f"{dropped:,}")
    if pset.task == "classification":
        k4.metric("classes", f"{len(pset.classes or [])}")
    else:
        k4.metric("models", f"{len(pset.models())}")
    if dropped:
        st.markdown("**Dropped rows by reason** (row numbers count data rows from 1):")
        ui.dataframe(pset.dropped.summary(), hide_index=True, width="stretch")
    positives = views.positive_choices(pset)
    if positives is not None and st.session_state.get("pset_origin") == "upload" \
            and st.session_state.get("data_upload") is not None:
        if st.session_state.get("data_positive_token") != token:  # a new set: start from the class it was read with
            st.session_state["data_positive_token"] = token
            st.session_state["data_positive"] = positives[-1]
        st.selectbox("Positive class", positives, key="data_positive", on_change=_switch_positive,
                     help="The class whose probability the binary column holds (the loader's choice is stated in "
                     "its messages); choose the other to read the file again with it as the positive class.")
    elif positives is not None:
        st.caption(f"Positive class: {ui.md_escape(positives[-1])} (negative: {ui.md_escape(positives[0])}).")
    for notice in loading.loader_notices(pset):  # crossing quantiles sorted or dropped, the layout chosen
        st.info(ui.md_escape(notice), icon=":material/info:")
    with st.expander("Loader messages", expanded=bool(dropped), icon=":material/info:"):
        for message in views.loader_messages(pset):  # a hub's hints name the page's controls, not truth= / output_type=
            st.markdown(f"- {ui.md_escape(loading.hub_page_message(message))}")
    ui.dataframe(views.data_facts(pset), hide_index=True, width="stretch")
    if loading.is_hub_set(pset):
        st.markdown("**What was read from the forecast hub**")
        ui.dataframe(loading.hub_facts(pset), hide_index=True, width="stretch")
        _forecast_hub_link()
    target = "pages/regression.py" if pset.task == "regression" else "pages/classification.py"
    st.page_link(target, label=f"Diagnose it on the {pset.task.title()} page", icon=":material/arrow_forward:")
    preview = views.preview_rows(pset)
    if preview is not None:
        with st.expander("First validated rows", icon=":material/table:"):
            ui.dataframe(preview, hide_index=True, width="stretch")

# ------------------------------------------------------------------------------------------ templates
st.subheader("Templates")
st.caption(
    "A small valid file for every accepted layout (calibrated synthetic numbers): download one, replace the numbers "
    "with yours and upload it."
)
for task in ("regression", "classification"):
    st.markdown(f"**{task.title()}**")
    names_ = templates.template_names(task)
    cols = st.columns(4)
    for i, tname in enumerate(names_):
        t = templates.TEMPLATES[tname]
        cols[i % 4].download_button(
            tname.replace("_", " "), templates.template_csv(tname), file_name=t.file_name, mime="text/csv",
            key=f"data_template_{tname}", help=f"{t.file_name}: {t.description}", icon=":material/download:",
            width="stretch", on_click="ignore",
        )

ui.record_run_time(_t0, "data")
