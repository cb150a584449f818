"""AppTests of the CORP lens on the Classification page: the reliability-diagram option, the
score decomposition table, the Murphy diagram, and that their numbers are the core's."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.diagrams import classification_corp as C
from tests.app.test_pages import CANCER, DIGITS, load_example, new_app, specs, table


def _corp_page(example: str):
    at = load_example(new_app(), example)
    at.switch_page("pages/classification.py").run()
    at.selectbox(key="cls_resamples").select(200).run()
    at.selectbox(key="cls_sims").select(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def digits_corp():
    return _corp_page(DIGITS)


def test_binned_is_the_default_and_corp_is_an_option(digits_corp):
    at = digits_corp
    assert at.segmented_control(key="cls_rel_kind").value == "binned (Guo et al.)"
    s = specs(at)
    assert "cls_rel_chart" in s and "cls_corp_chart" not in s and "cls_murphy_chart" not in s
    at.segmented_control(key="cls_rel_kind").set_value("CORP (PAV)").run()
    assert not at.exception, [e.value for e in at.exception]
    s = specs(at)
    assert {"cls_corp_chart", "cls_hist_chart", "cls_murphy_chart"} <= set(s)
    assert "cls_rel_chart" not in s
    names = [d.get("name", "") for d in s["cls_corp_chart"]["data"]]
    assert any(n.startswith("90% consistency band") for n in names)
    curve = next(d for d in s["cls_corp_chart"]["data"] if d.get("meta", {}).get("role") == "corp")
    assert curve["meta"]["name"] == "model"
    # the band choice redraws with the confidence band
    at.segmented_control(key="cls_corp_band").set_value("both").run()
    names = [d.get("name", "") for d in specs(at)["cls_corp_chart"]["data"]]
    assert any("confidence band" in n for n in names) and any("consistency band" in n for n in names)


def test_decomposition_table_is_the_cores_and_adds_up(digits_corp):
    at = digits_corp
    at.segmented_control(key="cls_rel_kind").set_value("CORP (PAV)").run()
    t = table(at, "MCB (95% CI)", "DSC (95% CI)").set_index("score")
    assert list(t.index) == ["Brier", "log"]
    pset = at.session_state["pset"]
    x, y = C.binary_events(pset.labels, pset.probs, target="top_label")
    for label, key in (("Brier", "brier"), ("log", "log")):
        d = C.decompose(x, y, score=key)
        shown = {c: float(str(t.loc[label, c]).split(" ")[0]) for c in
                 ("S (95% CI)", "MCB (95% CI)", "DSC (95% CI)", "UNC (95% CI)")}
        assert shown["S (95% CI)"] == pytest.approx(d["score"], abs=1e-4)
        assert shown["MCB (95% CI)"] == pytest.approx(d["mcb"], abs=1e-4)
        assert shown["DSC (95% CI)"] == pytest.approx(d["dsc"], abs=1e-4)
        assert shown["UNC (95% CI)"] == pytest.approx(d["unc"], abs=1e-4)
        # S = MCB − DSC + UNC as shown (4 decimals each)
        assert shown["S (95% CI)"] == pytest.approx(shown["MCB (95% CI)"] - shown["DSC (95% CI)"]
                                                    + shown["UNC (95% CI)"], abs=3e-4)
        # the digits classifier is over-confident: the MCB test rejects
        assert float(t.loc[label, "p (MCB test)"].split(" ")[0]) <= 0.01
    murphy = specs(at)["cls_murphy_chart"]["data"][0]
    assert len(murphy["x"] if isinstance(murphy["x"], list) else np.atleast_1d(murphy["x"])) >= 1


def test_binary_positive_class_corp():
    at = _corp_page(CANCER)
    at.segmented_control(key="cls_target").set_value("positive class").run()
    at.segmented_control(key="cls_rel_kind").set_value("CORP (PAV)").run()
    assert not at.exception, [e.value for e in at.exception]
    layout = specs(at)["cls_corp_chart"]["layout"]
    assert "positive class" in layout["xaxis"]["title"]["text"]
    t = table(at, "MCB (95% CI)").set_index("score")
    pset = at.session_state["pset"]
    x, y = C.binary_events(pset.labels, pset.probs, target="positive")
    assert float(t.loc["Brier", "UNC (95% CI)"].split(" ")[0]) == pytest.approx(y.mean() * (1 - y.mean()),
                                                                                     abs=1e-4)
