"""The Regression page's heavy-tail lenses (issue 16, point 6): ZMS and mean log z² rows in the metric table, and
the ENCE-against-bins figure with its perfect-calibration band."""

from __future__ import annotations

import numpy as np
import pytest
from test_app_pages import LEVI, decode, load_example, new_app, specs, table


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
    s = specs(levi_page)
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
    levi_page.toggle(key="reg_qs_decomposition").set_value(False).run()
    assert not any("MCB share" in d.value.columns for d in levi_page.dataframe)
    levi_page.toggle(key="reg_qs_decomposition").set_value(True).run()
