"""AppTest: the Slice explorer page — ranked list with the planted slice first, the funnel plot,
the controls, and the focus that restricts the Regression / Classification pages until "Show all rows"."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.base.regression import Gaussian
from calib_core.slices.candidates import slice_mask
from tests.app.test_pages import specs
from views import slices as slice_views

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300


def planted_regression(n: int = 6000, seed: int = 0) -> cc.PredictionSet:
    """Calibrated Gaussian predictions except the slice region = east (σ 40% too small)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east", "west"], n)
    age = rng.normal(45, 12, n)
    mu, sigma = rng.normal(size=n), np.exp(rng.normal(scale=0.3, size=n))
    y = mu + np.where(region == "east", 1.4, 1.0) * sigma * rng.normal(size=n)
    return cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=Gaussian(mu, sigma),
                            point=mu, slice_columns=pd.DataFrame({"region": region, "age": age}),
                            row_number=np.arange(1, n + 1), n_read=n)


def page_with(page: str, pset: cc.PredictionSet, token: str, **state) -> AppTest:
    """``page`` run through app.py's navigation (the explorer links to the diagnosis pages) on ``pset``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    for key, value in {"pset": pset, "pset_token": token, "pset_name": "t.csv", "pset_origin": "upload",
                       **state}.items():
        at.session_state[key] = value
    at.switch_page(f"pages/{page}").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def faint_traces_by_chart(at: AppTest) -> dict[str, int]:
    """{chart key: number of faint (all rows) traces}; they must come first and carry one legend entry."""
    out = {}
    for key, spec in specs(at).items():  # st.plotly_chart and dashboard.live_chart
        data = spec["data"]
        faint = [d for d in data if (d.get("meta") or {}).get("role") == "faint"]
        k = len(faint)
        under = [(d.get("meta") or {}).get("role") == "faint" and not d["meta"].get("outline") for d in data]
        assert under[:sum(under)] == [True] * sum(under), key  # curves drawn under the slice's traces
        outline = [bool((d.get("meta") or {}).get("outline")) for d in data]
        assert not any(outline) or outline[-sum(outline):] == [True] * sum(outline), key  # bar outlines over
        if k:
            assert [d.get("showlegend", True) for d in faint].count(True) == 1
            assert {d["name"] for d in faint} == {"all rows (faint)"}
        out[key] = k
    return out


def test_slice_explorer_ranks_the_planted_slice_first_and_draws_the_funnel():
    pset = planted_regression()
    at = page_with("slices.py", pset, f"test:{time.time_ns()}")
    table = at.dataframe[0].value
    assert table.loc[0, "slice"] == "region = east" and table.loc[0, "verdict"] == "miscalibrated (std z)"
    assert list(table.columns[:3]) == ["rank", "slice", "n"] and "adjusted p" in table.columns
    text = "\n".join(m.value for m in at.markdown)
    assert "slices searched (2 of 2 columns, 1 pair)" in text and "flagged at family-wise 5%" in text
    funnel = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == "slc_funnel")
    names = [t.get("name") for t in funnel["data"]]
    assert "flagged slices" in names and "limits adjusted for the search" in names
    # fewer columns, no pairs: only the region's and the age bins' slices
    at.toggle(key="slc_pairs").set_value(False).run()
    at.multiselect(key="slc_columns").set_value(["region"]).run()
    assert not at.exception
    assert sorted(at.dataframe[0].value["slice"]) == [f"region = {r}" for r in ("east", "north", "south", "west")]
    # a minimum size above every slice says so
    at.number_input(key="slc_min_size").set_value(5000).run()
    assert any("No slice has the minimum size" in w.value for w in at.warning)


def test_focus_restricts_the_regression_page_until_show_all_rows():
    pset = planted_regression()
    token = f"test:{time.time_ns()}"
    ranking, sset = slice_views.explore_slices(pset)
    east = int(ranking.loc[ranking["slice"] == "region = east", "index"].iloc[0])
    mask = slice_mask(sset, east)
    focus = {"token": token, "label": "region = east", "mask": mask, "n": int(mask.sum())}
    at = page_with("regression.py", pset, token, slice_focus=focus, reg_resamples=0, reg_sims=0)
    infos = "\n".join(i.value for i in at.info)
    assert "Restricted to the slice **region = east**" in infos and f"{int(mask.sum()):,} of 6,000 rows" in infos
    assert f"{int(mask.sum()):,}" in "\n".join(m.value for m in at.markdown)  # the data caption counts the slice
    assert "use all rows of the chosen slice" in "\n".join(m.value for m in at.markdown)  # not 'all rows'
    # the whole data drawn faintly behind every diagram, and beside every metric
    faint = faint_traces_by_chart(at)
    for tab in ("Intervals", "Q-Q plot", "ENCE vs bins", "CORP quantile reliability"):  # lazy tabs: drawn when open
        at.session_state["reg_more_tab"] = tab
        at.run()
        assert not at.exception
        faint.update(faint_traces_by_chart(at))
    assert set(faint) >= {"reg_levi_chart", "reg_kuleshov", "reg_pit", "reg_z", "reg_intervals", "reg_qq",
                          "reg_ence_bins", "reg_qs_corp"}
    assert all(faint.values()), faint
    at.session_state["reg_more_tab"] = "Intervals"
    at.run()
    metrics = at.dataframe[0].value
    assert list(metrics.columns[:3]) == ["metric", "slice", "all rows"]
    whole = page_with("regression.py", pset, token + "-whole", reg_resamples=0, reg_sims=0)
    assert not faint_traces_by_chart(whole) or not any(faint_traces_by_chart(whole).values())
    whole_metrics = whole.dataframe[0].value.set_index("metric")["value"]
    np.testing.assert_allclose(metrics.set_index("metric")["all rows"].loc[whole_metrics.index], whole_metrics)
    at.button(key="reg_slice_clear").click().run()
    assert not at.exception
    assert "slice_focus" not in at.session_state
    assert not any(faint_traces_by_chart(at).values())
    assert "value" in at.dataframe[0].value.columns and "all rows" not in at.dataframe[0].value.columns
    assert not any("Restricted to the slice" in i.value for i in at.info)
    assert "of the chosen slice" not in "\n".join(m.value for m in at.markdown)
    # a focus of other data is ignored
    at2 = page_with("regression.py", pset, token + "x", slice_focus=focus, reg_resamples=0, reg_sims=0)
    assert not any("Restricted to the slice" in i.value for i in at2.info)


def test_classification_explorer_and_focus():
    rng = np.random.default_rng(1)
    n = 6000
    f = rng.uniform(0.05, 0.95, n)
    site = rng.choice(["a", "b", "c"], n)
    y = (rng.random(n) < np.where(site == "c", 0.7 * f, f)).astype(int)
    pset = cc.PredictionSet(task="classification", layout="probs", labels=y, probs=np.column_stack([1 - f, f]),
                            classes=["0", "1"], slice_columns=pd.DataFrame({"site": site}),
                            row_number=np.arange(1, n + 1), n_read=n)
    token = f"test:{time.time_ns()}"
    at = page_with("slices.py", pset, token)
    table = at.dataframe[0].value
    assert table.loc[0, "slice"] == "site = c" and table.loc[0, "verdict"].startswith("miscalibrated (")
    assert {"ECE", "calibration ratio"} <= set(table.columns)
    mask = site == "c"
    focus = {"token": token, "label": "site = c", "mask": mask, "n": int(mask.sum())}
    at = page_with("classification.py", pset, token, slice_focus=focus, cls_resamples=0, cls_sims=0)
    assert any("Restricted to the slice **site = c**" in i.value for i in at.info)
    faint = faint_traces_by_chart(at)
    assert {"cls_rel_chart", "cls_hist_chart", "cls_smooth_chart"} <= set(faint) and all(faint.values()), faint
    tables = [d.value for d in at.dataframe if "metric" in d.value.columns]
    assert tables and all(list(t.columns[:3]) == ["metric", "slice", "all rows"] for t in tables)
    at.segmented_control(key="cls_rel_kind").set_value("CORP (PAV)").run()
    assert not at.exception
    faint = faint_traces_by_chart(at)
    assert faint["cls_corp_chart"] and faint["cls_murphy_chart"]


def test_explorer_without_slice_columns_says_what_to_do():
    rng = np.random.default_rng(2)
    n = 500
    pset = cc.PredictionSet(task="regression", layout="gaussian", y=rng.normal(size=n),
                            dist=Gaussian(np.zeros(n), np.ones(n)), point=np.zeros(n),
                            row_number=np.arange(1, n + 1), n_read=n)
    at = page_with("slices.py", pset, f"test:{time.time_ns()}")
    assert any("no column to slice by" in w.value for w in at.warning)


def before_after_shown(at: AppTest) -> pd.DataFrame:
    """The explorer's before/after table as shown, its "before → after" text cells split into numbers."""
    shown = next(d.value for d in at.dataframe if "verdict after" in d.value.columns)
    out = shown[["slice", "n", "test", "verdict after"]].copy()
    for col in ("rank", "statistic", "evidence", "adjusted p"):
        parts = shown[col].str.replace("−", "-").str.split(" → ", expand=True).astype(float)
        out[f"{col} before"], out[f"{col} after"] = parts[0], parts[1]
    return out


def test_explorer_shows_the_worst_slices_before_and_after_a_slice_wise_recalibration():
    """Issue 17 pt 5: Recalibrate with std scaling per slice by region on the planted data, then the explorer ranks
    the held-out rows' slices before and after: region = east is the worst and flagged before, not flagged after
    (while plain std scaling, which fixes the average only, leaves it flagged)."""
    pset = planted_regression()
    token = f"test:{time.time_ns()}"
    at = page_with("slices.py", pset, token)
    assert any("Run a comparison on the Recalibrate page" in c.value for c in at.caption)
    at.switch_page("pages/recalibrate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.multiselect(key="recal_cals_regression").set_value(["std scaling", "std scaling per slice"]).run()
    at.selectbox(key="recal_p_regression_std scaling per slice_by").set_value("region").run()
    at.radio(key="recal_split").set_value("random").run()
    at.number_input(key="recal_repeats").set_value(1).run()
    next(b for b in at.button if b.label == "Run comparison").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("pages/slices.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="slc_after").value == "std scaling per slice"  # the slice-wise calibrator first
    text = "\n".join(m.value for m in at.markdown)
    assert "held-out (test) rows" in text and "3,000 held-out" in text and "other 3,000 rows only" in text
    ba = before_after_shown(at)
    east = ba.loc[ba["slice"] == "region = east"].iloc[0]
    assert ba.loc[0, "slice"] == "region = east" and east["rank before"] == 1
    assert east["adjusted p before"] <= 0.05 and east["adjusted p after"] > 0.05
    assert east["verdict after"] == "no longer flagged" and east["test"] == "std z"
    assert east["statistic before"] > 1.2 and abs(east["statistic after"] - 1.0) < abs(east["statistic before"] - 1.0)
    funnel = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == "slc_ba_funnel")
    names = {t.get("name") for t in funnel["data"]}
    assert {"flagged before", "slices after std scaling per slice", "before → after std scaling per slice"} <= names
    assert "flagged after std scaling per slice" not in names  # nothing flagged after on the held-out rows
    # plain std scaling fixes the average only: the planted slice stays flagged
    at.selectbox(key="slc_after").set_value("std scaling").run()
    ba = before_after_shown(at)
    east = ba.loc[ba["slice"] == "region = east"].iloc[0]
    assert east["adjusted p after"] <= 0.05 and east["verdict after"].startswith("miscalibrated (")
    # worst first by the ranking after
    at.segmented_control(key="slc_ba_order").set_value("after").run()
    ba = before_after_shown(at)
    assert list(ba["rank after"]) == sorted(ba["rank after"])


def test_over_time_chart_draws_the_whole_data_faintly_behind_a_slice():
    pset = planted_regression(4000, seed=2)
    pset.time = (np.datetime64("2026-01-01T00:00") + (np.arange(pset.n_rows) * 30).astype("timedelta64[m]")
                 ).astype("datetime64[ns]")
    token = f"test:{time.time_ns()}"
    mask = np.asarray(pset.slice_columns["region"] == "east")
    focus = {"token": token, "label": "region = east", "mask": mask, "n": int(mask.sum())}
    at = page_with("regression.py", pset, token, slice_focus=focus, reg_resamples=0, reg_sims=0)
    faint = faint_traces_by_chart(at)
    assert faint["reg_time_chart"] >= 1 and all(faint.values()), faint
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.key == "reg_time_chart")
    n_windows = [len(d["x"]) for d in spec["data"] if (d.get("meta") or {}).get("role") == "faint"]
    assert n_windows == [len(d["x"]) for d in spec["data"] if (d.get("meta") or {}).get("role") == "window"]
    at.button(key="reg_slice_clear").click().run()
    assert not at.exception and not any(faint_traces_by_chart(at).values())
