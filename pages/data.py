"""Data page: upload a prediction file or load a built-in example; column mapping; validation summary; templates.

The loaded set lives in session state (``pages.common``: ``pset``, ``pset_token``, ``pset_name``), so every
other page sees it.  An upload is parsed once per content (sha1 of the bytes) and mapping; a broken upload
shows the loader's message and keeps the previously loaded data.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import streamlit as st

import calib_core as cc
from calib_core import templates
from pages import common

_t0 = time.perf_counter()


def _looks_classification(names: list[str]) -> bool:
    low = [n.lower() for n in names]
    return any(n.startswith(("prob", "logit")) for n in low) or "label" in low


def _load_example() -> None:
    """Button callback (runs before the script, so the sidebar and every page see the new data at once)."""
    name = st.session_state["data_example"]
    common.set_data(common.load_example(name), f"example:{name}", name, "example")
    st.session_state.pop("data_upload_error", None)
    st.session_state["data_notice"] = f"Loaded: {name}"


def _parse_upload() -> None:
    """Uploader / option callback: parse a new upload once (sha1 of the bytes); keep the old data on errors."""
    uploaded = st.session_state.get("data_upload")
    st.session_state.pop("data_upload_error", None)
    if uploaded is None:  # the uploader was emptied: the loaded data stays
        st.session_state.pop("data_upload_ident", None)
        return
    data = uploaded.getvalue()
    token = common.content_token(data)
    renormalize = bool(st.session_state.get("data_renormalize", False))
    st.session_state["data_upload_ident"] = (token, renormalize)
    st.session_state["data_mapping"] = None
    try:
        pset = common.parse_upload(token, data, uploaded.name, "", None, renormalize)
    except cc.InputError as err:
        st.session_state["data_upload_error"] = str(err)
    else:
        common.set_data(pset, f"upload:{token}:auto:{int(renormalize)}", uploaded.name, "upload")
        st.session_state["data_notice"] = f"Loaded: {uploaded.name}"


st.title("Data")
st.markdown(
    "Load predictions to diagnose: **upload** a CSV, TSV or Parquet file (one row per example) or an .npz of "
    "arrays (e.g. probs and labels), or start from a "
    "**built-in example**. The loaded data stays available on every page until you load something else."
)

# ------------------------------------------------------------------------------------------ examples
common.init_state({"data_example": common.DEFAULT_REGRESSION_EXAMPLE})
with st.container(border=True):
    st.subheader("Built-in examples")
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    example = c1.selectbox(
        "Example",
        list(common.EXAMPLES),
        key="data_example",
        help="Trained or simulated on this machine on first use (scikit-learn's bundled data sets; no network).",
    )
    c2.button("Load example", type="primary", key="data_load_example", width="stretch", on_click=_load_example)

# ------------------------------------------------------------------------------------------ upload
with st.container(border=True):
    st.subheader("Upload a prediction file")
    st.caption(
        "Regression: `y` plus `mean`/`std` (or `var`, `log_var`), quantile columns `q0.05 …`, or samples "
        "`sample_0 …`. Classification: `label` plus `prob_0 …` or `logit_0 …` (binary: one `prob` or `logit`). "
        "Optional: `split` (cal/test), `group`, `model`, features `x*`. See the templates below. "
        f"Up to **{common.upload_limit_mb():,} MB** per file (Parquet holds 10⁷ rows of mean, std and y in about "
        "240 MB; as CSV they take up to 2.5 times more)."
    )
    uploaded = st.file_uploader(
        "Prediction file", type=common.UPLOAD_TYPES, key="data_upload", on_change=_parse_upload,
        max_upload_size=common.upload_limit_mb(),
    )
    renormalize = st.checkbox(
        "Renormalise probability rows that do not sum to 1",
        key="data_renormalize",
        on_change=_parse_upload,
        help="Off by default: rows that do not sum to 1 are refused with a message naming them.",
    )
    if uploaded is not None:
        data = uploaded.getvalue()
        token = common.content_token(data)
        if st.session_state.get("data_upload_ident") != (token, bool(renormalize)):  # e.g. restored widget
            _parse_upload()

        if st.session_state.get("data_upload_error"):
            st.error(common.md_escape(st.session_state["data_upload_error"]), icon=":material/error:")
            previous = common.current_data()
            if previous is not None:
                st.caption(f"Still using the previously loaded data: {common.md_escape(previous[2])}.")

        # ---- column mapping (always available for uploads; opened when guessing failed) ----------------
        try:
            names, head = common.upload_columns(token, data, uploaded.name)
        except cc.InputError:
            names, head = [], None
        if names:
            if st.session_state.get("data_upload_error"):
                st.caption("The columns could not be read as predictions: map them below and load the file again.")
            with st.expander("Column mapping", expanded=bool(st.session_state.get("data_upload_error")),
                             icon=":material/table_edit:"):
                st.caption("First rows of the file:")
                st.dataframe(head, hide_index=True, width="stretch", height=180)
                none = "—"
                common.init_state({"data_map_task": "classification" if _looks_classification(names) else "regression"})
                task = st.segmented_control("Task", ["regression", "classification"], key="data_map_task")
                task = task or "regression"
                mapping: dict[str, object] = {}
                if task == "regression":
                    m1, m2, m3 = st.columns(3)
                    y = m1.selectbox("Target y", [none, *names], key="data_map_y")
                    mean = m2.selectbox("Mean / point prediction", [none, *names], key="data_map_mean")
                    kind = m3.selectbox(
                        "Uncertainty layout",
                        ["std", "var", "log_var", "log_std", "quantiles", "samples", "none (point only)"],
                        key="data_map_kind",
                    )
                    if kind in ("std", "var", "log_var", "log_std"):
                        spread = st.selectbox(f"{kind} column", [none, *names], key="data_map_spread")
                        if spread != none:
                            mapping[kind] = spread
                    elif kind in ("quantiles", "samples"):
                        cols = st.multiselect(f"{kind} columns", names, key="data_map_multi")
                        if kind == "quantiles":
                            levels = st.text_input(
                                "Quantile levels of these columns, comma-separated (blank: read from the names)",
                                key="data_map_levels",
                            )
                            parts = [x.strip() for x in levels.split(",") if x.strip()]
                            mapping["quantiles"] = dict(zip(parts, cols)) if parts else list(cols)
                        else:
                            mapping["samples"] = list(cols)
                    else:
                        mapping["samples"] = None
                        mapping["quantiles"] = None
                    if y != none:
                        mapping["y"] = y
                    if mean != none:
                        mapping["mean"] = mean
                else:
                    m1, m2 = st.columns([1, 2])
                    label = m1.selectbox("Label column", [none, *names], key="data_map_label")
                    kind = m1.selectbox("Scores are", ["probs", "logits"], key="data_map_score_kind")
                    scores = m2.multiselect(
                        "Score columns (one per class, in class order; one column = binary positive class)",
                        names, key="data_map_scores",
                    )
                    if label != none:
                        mapping["label"] = label
                    if scores:
                        mapping[kind] = scores if len(scores) > 1 else scores[0]
                o1, o2, o3 = st.columns(3)
                for role, col in (("split", o1), ("group", o2), ("model", o3)):
                    choice = col.selectbox(f"{role} column (optional)", [none, *names], key=f"data_map_{role}")
                    if choice != none:
                        mapping[role] = choice
                if st.button("Load with this mapping", key="data_map_apply", type="primary"):
                    mapping_json = json.dumps(mapping, sort_keys=True)
                    try:
                        pset = common.parse_upload(token, data, uploaded.name, mapping_json, task, bool(renormalize))
                    except cc.InputError as err:
                        st.session_state["data_upload_error"] = str(err)
                        st.rerun()
                    else:
                        st.session_state.pop("data_upload_error", None)
                        st.session_state["data_mapping"] = mapping
                        mhash = common.content_token(mapping_json.encode())[:12]
                        new_token = f"upload:{token}:{task}:{mhash}:{int(bool(renormalize))}"
                        common.set_data(pset, new_token, uploaded.name, "upload")
                        st.session_state["data_notice"] = f"Loaded: {uploaded.name} (with the column mapping)"
                        st.rerun()

# ------------------------------------------------------------------------------------------ summary
notice = st.session_state.pop("data_notice", None)
if notice:
    st.toast(common.md_escape(notice), icon=":material/check_circle:")
current = common.current_data()
st.subheader("Loaded data")
if current is None:
    st.info("Nothing loaded yet: pick an example or upload a file above.")
else:
    pset, token, name = current
    st.markdown(common.data_caption(pset, name))
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
        st.dataframe(pset.dropped.summary(), hide_index=True, width="stretch")
    with st.expander("Loader messages", expanded=bool(dropped), icon=":material/info:"):
        for message in pset.messages:
            st.markdown(f"- {common.md_escape(message)}")
    facts = {"task": pset.task, "layout": pset.layout, "source": pset.source}
    if pset.split is not None:
        counts = pd.Series(pset.split).value_counts()
        facts["split"] = ", ".join(f"{k}: {v:,}" for k, v in counts.items())
    if pset.group is not None:
        facts["groups"] = ", ".join(map(str, pd.unique(pset.group)[:12]))
    if pset.model is not None:
        facts["models"] = ", ".join(map(str, pset.models()))
    if pset.classes is not None:
        facts["classes"] = ", ".join(map(str, pset.classes[:20])) + (" …" if len(pset.classes) > 20 else "")
    if pset.features is not None and pset.features.shape[1]:
        facts["features"] = ", ".join(map(str, pset.features.columns[:12]))
    st.dataframe(
        pd.DataFrame({"property": list(facts), "value": list(facts.values())}), hide_index=True, width="stretch"
    )
    target = "pages/regression.py" if pset.task == "regression" else "pages/classification.py"
    st.page_link(target, label=f"Diagnose it on the {pset.task.title()} page", icon=":material/arrow_forward:")
    if pset.task == "regression" and pset.dist is not None:
        preview = pd.DataFrame(
            {"row": pset.row_number[:10], "y": pset.y[:10], "mean": pset.dist.mean()[:10], "std": pset.dist.std()[:10]}
        )
    elif pset.task == "classification" and pset.probs is not None:
        pred = pset.probs[:10].argmax(axis=1)
        names = np.asarray(pset.classes or np.arange(pset.probs.shape[1]).astype(str), dtype=object)
        preview = pd.DataFrame(
            {"row": pset.row_number[:10], "label": names[pset.labels[:10]], "predicted": names[pred],
             "confidence": pset.probs[:10].max(axis=1)}
        )
    else:
        preview = None
    if preview is not None:
        with st.expander("First validated rows", icon=":material/table:"):
            st.dataframe(preview, hide_index=True, width="stretch")

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

common.record_run_time(_t0, "data")
