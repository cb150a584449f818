"""AppTest of counted row losses on the pages: what the reader counts or notes (rows merged by an unbalanced quote,
a line that was not UTF-8) is on the Data page, and a group named like the all-rows entry is a group of its own on
the Regression page."""

from __future__ import annotations

from calib_core.base.predictions import ALL
from calib_core.data.rows import MERGED_ROWS_REASON
from tests.app.test_pages import decode, new_app, open_tab, specs, upload
from tests.data.test_reading_row_losses import _eleven_rows, _with_group_named_all


def _texts(at) -> list[str]:
    return [e.value for e in (*at.markdown, *at.caption, *at.error, *at.info, *at.warning)]


def test_data_page_counts_the_row_an_unbalanced_quote_merged_and_names_its_lines():
    at = upload(new_app(), "quote.csv", _eleven_rows())
    assert not at.error, [e.value for e in at.error]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["rows read"] == "7" and metrics["rows kept"] == "6" and metrics["rows dropped"] == "1"
    reasons = next(df.value for df in at.dataframe if "reason" in df.value.columns)
    assert reasons["reason"].tolist() == [MERGED_ROWS_REASON] and reasons["rows"].tolist() == ["4"]
    note = next(t for t in _texts(at) if "were read as one row" in t)
    assert "lines 5–9" in note and "opens on line 5" in note


def test_data_page_names_the_line_that_was_not_utf8():
    data = "y,mean,std,group\n1,1,1,Zürich\n2,2,1,Bern\n".encode() + b"3,3,1,Z\xfcrich\n"
    at = upload(new_app(), "mixed.csv", data)
    assert not at.error
    assert list(at.session_state["pset"].group) == ["Zürich", "Bern", "Zürich"]
    assert any("not valid UTF-8 (lines 4)" in t and "Windows-1252" in t for t in _texts(at))


def test_data_page_refuses_booleans_in_sigma_naming_the_column():
    at = upload(new_app(), "bool.csv", b"y,mean,std\n1,0.5,True\n2,0.2,True\n1.5,0.3,False\n")
    assert at.error and "'std'" in at.error[0].value and "True/False" in at.error[0].value


def test_regression_page_offers_a_group_named_all_apart_from_all_rows():
    at = upload(new_app(), "groups.csv", _with_group_named_all())
    at.switch_page("pages/regression.py").run()
    at.selectbox(key="reg_resamples").select(0).run()
    open_tab(at, "reg_more_tab", "Q-Q plot")  # lazy tabs: the Q-Q plot is drawn when its tab is open
    group = at.selectbox(key="reg_group")
    assert group.options == ["(all rows)", "(all) — a group of the file", "rest"]
    assert group.value == ALL
    assert at.session_state["pset"].n_rows == 200
    assert _qq_points(at) == 200  # all rows
    at.selectbox(key="reg_group").select("(all)").run()
    assert not at.exception and not at.error
    assert at.selectbox(key="reg_group").value == "(all)"
    assert _qq_points(at) == 50  # the group's rows, not the whole file
    at.selectbox(key="reg_group").select(ALL).run()
    assert _qq_points(at) == 200


def _qq_points(at) -> int:
    """Rows drawn in the Q-Q plot of the Regression page (one marker per row)."""
    trace = next(t for t in specs(at)["reg_qq"]["data"] if t.get("mode") == "markers")
    return int(decode(trace["x"]).size)
