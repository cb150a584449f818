"""AppTests of ordered classes on the Classification page: the "Per threshold" section (one reliability panel per
event Y ≤ k, the threshold table) and the RPS row appear for an ordinal set only, with the core's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core.diagrams.classification_ordinal import threshold_reliability
from calib_core.metrics.classification_ordinal import rps
from tests.app.test_pages import new_app, specs, table

CLASSES = ["none", "low", "moderate", "high", "very high"]


def _ordinal_set(ordinal: bool = True, n: int = 600) -> cc.PredictionSet:
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(5, 1.5), size=n)
    q = np.zeros_like(p)  # the truth one category above the forecast: miscalibrated at every threshold
    q[:, 1:] = p[:, :-1]
    q[:, -1] += p[:, -1]
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(q, axis=1)).sum(axis=1), 4)
    return cc.PredictionSet(task="classification", source="pmf.csv", layout="probabilities", labels=y, probs=p,
                            classes=CLASSES, ordinal=ordinal)


def _page(pset: cc.PredictionSet):
    at = new_app()
    at.session_state["pset"] = pset
    at.session_state["pset_token"] = f"test:ordinal={pset.ordinal}"
    at.session_state["pset_name"] = "pmf.csv"
    at.session_state["pset_origin"] = "upload"
    at.session_state["cls_resamples"] = 200
    at.session_state["cls_sims"] = 1000
    at.switch_page("pages/classification.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture(scope="module")
def ordinal_page():
    return _page(_ordinal_set())


def test_per_threshold_section_and_rps_for_ordinal_sets(ordinal_page):
    at = ordinal_page
    pset = at.session_state["pset"]
    assert any(h.value.startswith("Per threshold") for h in at.subheader)
    fig = specs(at)["cls_threshold_chart"]
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert [t.split(" · ")[0] for t in titles] == ["≤ none", "≤ low", "≤ moderate", "≤ high"]
    t = table(at, "threshold", "MCB", "p (Holm)")
    core = threshold_reliability(pset.probs, pset.labels, classes=CLASSES, n_resamples=1000).summary
    assert t["threshold"].tolist() == core["event"].tolist()
    np.testing.assert_allclose(t["MCB"].astype(float), core["mcb"], rtol=1e-9)
    np.testing.assert_allclose(t["Brier"].astype(float).sum(), rps(pset.probs, pset.labels), rtol=1e-9)
    assert (t["verdict"] == "miscalibrated").any()  # shifted by one category: detected
    metrics = table(at, "metric")
    assert metrics["metric"].astype(str).str.contains("RPS").any()


def test_no_per_threshold_section_without_ordered_classes():
    at = _page(_ordinal_set(ordinal=False, n=300))
    assert not any(h.value.startswith("Per threshold") for h in at.subheader)
    assert "cls_threshold_chart" not in specs(at)
    assert not table(at, "metric")["metric"].astype(str).str.contains("RPS").any()
