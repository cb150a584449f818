"""AppTest of the Data page's Crossing quantiles and Layout controls: a file with mean/std and quantile columns whose
quantiles cross in some rows keeps every row by default (sorted per row, said in a notice), and each choice reloads
the upload with what it gives — rows dropped and counted, another layout, the notice saying which and how to change
it, in the page's words."""

from __future__ import annotations

import numpy as np
import pandas as pd

from calib_core.data.regression_layout import CROSSING_REASON
from dashboard import md_escape
from tests.app.test_pages import csv_bytes, new_app, table, upload

PY_WORDS = ("crossing=", "layout=", "columns=")


def _frame(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    mean = rng.normal(size=n)
    q = mean[:, None] + np.array([-1.28, 0.0, 1.28])
    q[::5, :] = q[::5, ::-1]  # rows 1, 6, 11, … (8 rows) cross
    return pd.DataFrame({"y": mean + rng.normal(size=n), "mean": mean, "std": 1.0,
                         "q0.1": q[:, 0], "q0.5": q[:, 1], "q0.9": q[:, 2]})


def _infos(at) -> list[str]:
    return [e.value for e in at.info]


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_crossing_and_layout_controls_reload_the_upload_and_say_what_they_did():
    at = upload(new_app(), "both.csv", csv_bytes(_frame()))
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    # default: every row kept, the 8 crossing rows sorted, both said on the page in its own words
    assert pset.layout == "quantile" and pset.n_rows == 40
    assert _metrics(at)["rows dropped"] == "0"
    infos = _infos(at)
    crossing = next(t for t in infos if "had crossing quantiles" in t)
    assert crossing.startswith("8 rows had crossing quantiles; sorted per row (rearrangement)")
    assert "Crossing quantiles: drop those rows" in crossing
    layout = next(t for t in infos if "using the quantile layout" in t)
    assert "under Layout (Upload a prediction file)" in layout
    assert not any(w in t for t in infos for w in PY_WORDS)
    notices = [str(m.app) for m in pset.messages if getattr(m, "kind", "") in ("crossing", "layout")]
    assert {md_escape(n) for n in notices} <= set(infos)  # escaped like any text from a file
    assert at.session_state["pset_token"].endswith(":rearrange-auto:0")

    # drop those rows: the Gaussian columns now keep more rows, so they are read (and the notice says why)
    at.selectbox(key="data_crossing").set_value("drop").run()
    pset = at.session_state["pset"]
    assert pset.layout == "gaussian" and pset.n_rows == 40
    assert any("because it keeps the most rows" in t and "would keep 32" in t for t in _infos(at))
    assert at.session_state["pset_token"].endswith(":drop-auto:0")

    # … and the quantile layout chosen: 8 rows dropped, counted and listed by reason
    at.selectbox(key="data_layout").set_value("quantile").run()
    pset = at.session_state["pset"]
    assert pset.layout == "quantile" and pset.n_rows == 32
    assert _metrics(at)["rows dropped"] == "8"
    reasons = table(at, "reason", "count")
    assert reasons["reason"].tolist() == [CROSSING_REASON] and reasons["count"].tolist() == [8]
    assert any("8 row(s) had crossing quantiles" in t and "sort per row (rearrangement)" in t for t in _infos(at))

    # back to sorting: every row again
    at.selectbox(key="data_crossing").set_value("rearrange").run()
    assert at.session_state["pset"].n_rows == 40 and at.session_state["pset"].layout == "quantile"
    at.selectbox(key="data_layout").set_value("gaussian").run()
    assert at.session_state["pset"].layout == "gaussian"
    assert not at.exception and not at.error


def test_a_layout_the_upload_lacks_shows_the_message_and_keeps_the_data():
    at = upload(new_app(), "both.csv", csv_bytes(_frame()))
    at.selectbox(key="data_layout").set_value("sample").run()
    assert at.error and "the sample layout was asked for" in at.error[0].value
    assert "choose another layout under Upload a prediction file" in at.error[0].value
    assert at.session_state["pset_name"] == "both.csv" and at.session_state["pset"].layout == "quantile"
