"""The Regression page's heavy-tail lenses: ZMS and mean log z² rows in the metric table, and
the ENCE-against-bins figure with its perfect-calibration band."""

from __future__ import annotations

import numpy as np
import pytest

from tests.app.test_pages import LEVI, decode, load_example, new_app, open_tab, specs, table


@pytest.fixture(scope="module")
def levi_page():
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_metric_table_has_zms_and_its_log_variant(levi_page):
    t = table(levi_page, "metric", "95% CI", "perfectly calibrated", "p-value", "verdict")
    for label in ("ZMS (mean z²)", "mean log z² (robust ZMS)"):
        rows = t[t["metric"] == label].set_index("model")
        assert set(rows.index) == {"true sigma", "random sigma"}, label
    zms = t[t["metric"] == "ZMS (mean z²)"].set_index("model")
    # the random-σ model's z² are far from 1 in mean (its σ are noise); the true-σ model's are not
    assert zms.loc["true sigma", "verdict"] == "not significant"


def test_ence_against_bins_figure(levi_page):
    assert "reg_ence_bins" not in specs(levi_page)  # a closed tab is neither computed nor drawn (lazy tabs)
    s = specs(open_tab(levi_page, "reg_more_tab", "ENCE vs bins"))
    assert "reg_ence_bins" in s
    data = s["reg_ence_bins"]["data"]
    ence = {d["meta"]["name"]: d for d in data if d.get("meta", {}).get("role") == "ence"}
    high = {d["meta"]["name"]: d for d in data if d.get("meta", {}).get("role") == "band_high"}
    assert set(ence) == {"true sigma", "random sigma"}
    bins = decode(ence["true sigma"]["x"]).astype(float)
    assert bins[0] == 2 and bins[-1] == 100 and np.all(np.diff(bins) > 0)
    # random σ: above the perfect-calibration band at every bin count; true σ: not above it at most counts
    r_y, r_hi = decode(ence["random sigma"]["y"]), decode(high["random sigma"]["y"])
    assert np.all(r_y > r_hi)
    t_y, t_hi = decode(ence["true sigma"]["y"]), decode(high["true sigma"]["y"])
    assert np.mean(t_y <= t_hi) >= 0.8
    # the band rises with the number of bins (Pernot): ENCE's noise floor
    mean = next(d for d in data if d.get("meta", {}).get("role") == "null_mean" and d["meta"]["name"] == "true sigma")
    assert np.all(np.diff(decode(mean["y"])) > 0)


def test_quantile_score_decomposition_table(levi_page):
    open_tab(levi_page, "reg_more_tab", "Intervals")
    assert not any("MCB share" in d.value.columns for d in levi_page.dataframe)  # computed only when asked
    open_tab(levi_page, "reg_more_tab", "Quantile-score decomposition")
    t = table(levi_page, "τ", "QS", "MCB", "DSC", "UNC", "MCB share")
    assert len(t) == 10 and set(t["model"]) == {"true sigma", "random sigma"}

    def mcb(model: str, tau: str) -> float:
        text = t[(t["model"] == model) & (t["τ"] == tau)]["MCB"].iloc[0]
        value, interval = text.split(" [")
        low, high = (float(v) for v in interval.rstrip("]").split(", "))
        assert low <= float(value) <= high
        return float(value)

    # random σ: its 5% quantiles are badly placed row by row, which recalibration can partly repair
    assert mcb("random sigma", "0.05") > 3 * mcb("true sigma", "0.05")
    open_tab(levi_page, "reg_more_tab", "Q-Q plot")
    assert not any("MCB share" in d.value.columns for d in levi_page.dataframe)


@pytest.mark.slow  # the exact isotonic quantile fit at five levels on the page (about 10 s)
def test_corp_quantile_reliability_diagram(levi_page):
    """Issue 16, point 1 (regression side): the CORP quantile reliability diagram (its own tab, drawn only when open) is
    the core's curve for the chosen level, with a consistency band; the level selector redraws it; a σ-bin
    selection restricts it (and the table) to the selected rows."""
    from calib_core.metrics.regression_decomposition import quantile_reliability_of
    from tests.app.test_pages import bins_points, plotly_select

    at = levi_page
    assert "reg_qs_corp" not in specs(at)  # computed only when its tab is open
    open_tab(at, "reg_more_tab", "CORP quantile reliability")
    assert at.session_state["reg_qs_level"] == 0.5
    spec = specs(at)["reg_qs_corp"]
    curves = {d["meta"]["name"]: d for d in spec["data"] if d.get("meta", {}).get("role") == "quantile_corp"}
    assert set(curves) == {"true sigma", "random sigma"}
    assert sum(1 for d in spec["data"] if d.get("fill") == "toself") == 2  # one band per model
    pset = at.session_state["pset"]
    core = quantile_reliability_of(pset, tau=0.5)
    np.testing.assert_allclose(decode(curves["true sigma"]["y"]), core["true sigma"].curve["recalibrated"])
    assert "τ = 0.5" in spec["layout"]["title"]["text"]
    at.segmented_control(key="reg_qs_level").set_value(0.95).run()
    assert not at.exception, [e.value for e in at.exception]
    spec = specs(at)["reg_qs_corp"]
    assert "τ = 0.95" in spec["layout"]["title"]["text"]
    core = quantile_reliability_of(pset, tau=0.95)
    curves = {d["meta"]["name"]: d for d in spec["data"] if d.get("meta", {}).get("role") == "quantile_corp"}
    np.testing.assert_allclose(decode(curves["random sigma"]["y"]), core["random sigma"].curve["recalibrated"])
    before = table(open_tab(at, "reg_more_tab", "Quantile-score decomposition"), "τ", "QS", "MCB")
    # select three σ-bins of the random-σ model: the diagram and the table are those of its rows only
    plotly_select(at, "reg_levi_chart", bins_points(specs(at)["reg_levi_chart"], "random sigma", [0, 1, 2]))
    assert not at.exception, [e.value for e in at.exception]
    after = table(at, "τ", "QS", "MCB")
    spec = specs(open_tab(at, "reg_more_tab", "CORP quantile reliability"))["reg_qs_corp"]
    curves = {d["meta"]["name"]: d for d in spec["data"] if d.get("meta", {}).get("role") == "quantile_corp"}
    assert set(curves) == {"random sigma"}
    bands = [d for d in spec["data"] if d.get("fill") == "toself"]
    assert len(bands) == 1
    assert set(after["model"]) == {"random sigma"} and len(after) == 5
    assert not before[before["model"] == "random sigma"]["QS"].reset_index(drop=True).equals(
        after["QS"].reset_index(drop=True))
    at.button(key="reg_clear").click().run()
    at.segmented_control(key="reg_qs_level").set_value(0.5).run()
