"""``Report._repr_html_``: in Jupyter a Report shows its metric table and its main diagram as a small inline SVG."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.report import REPR_MAX_MODELS
from calib_core.data import examples

FAST = {"n_resamples": 20, "n_simulations": 5, "seed": 0}
HOSTILE = ['<script>alert("x")</script>', '"><img src=x onerror=alert(1)>', "a & b <i>"]


@pytest.fixture(scope="module")
def regression_report() -> cc.Report:
    return cc.diagnose(examples.diabetes_example(), **FAST)


@pytest.fixture(scope="module")
def classification_report() -> cc.Report:
    return cc.diagnose(examples.digits_example(), **FAST)


def _svgs(html: str) -> list[ET.Element]:
    """Every inline SVG of the HTML, parsed as XML (so it is well formed)."""
    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", html, re.S)]


def _shown_values(report: cc.Report) -> list[str]:
    m = report.metrics[report.metrics["group"] == cc.ALL]
    return [f"{v:.4g}" for v in m["value"] if np.isfinite(v)]


def test_regression_report_shows_its_metric_table_and_the_kuleshov_curve(regression_report):
    html = regression_report._repr_html_()
    for value in _shown_values(regression_report):
        assert value in html
    for metric in pd.unique(regression_report.metrics["metric"]):
        assert f"<th>{metric}</th>" in html
    (svg,) = _svgs(html)
    assert svg.find("{http://www.w3.org/2000/svg}title").text == "Kuleshov calibration curve"
    assert svg.findall(".//{http://www.w3.org/2000/svg}polyline")  # the curve
    assert svg.findall(".//{http://www.w3.org/2000/svg}polygon")  # its band
    assert "<script" not in html.lower() and "http" not in html.replace("http://www.w3.org/2000/svg", "")
    assert len(html) < 50_000


def test_regression_without_a_calibration_curve_shows_the_levi_diagram(regression_report):
    diagrams = {key: {k: v for k, v in tables.items() if k != "calibration_curve"}
                for key, tables in regression_report.diagrams.items()}
    html = dataclasses.replace(regression_report, diagrams=diagrams)._repr_html_()
    (svg,) = _svgs(html)
    assert svg.find("{http://www.w3.org/2000/svg}title").text == "Levi reliability diagram"
    levi = regression_report.diagrams[("model", cc.ALL)]["levi_bins"]
    assert len(svg.findall(".//{http://www.w3.org/2000/svg}circle")) == int(np.isfinite(levi["rmse"]).sum())


def test_classification_report_shows_its_metric_table_and_the_reliability_diagram(classification_report):
    html = classification_report._repr_html_()
    for value in _shown_values(classification_report):
        assert value in html
    assert "<th>ece</th>" in html and "<th>brier</th>" in html
    (svg,) = _svgs(html)
    assert svg.find("{http://www.w3.org/2000/svg}title").text == "Reliability diagram"
    reliability = classification_report.diagrams[("model", cc.ALL)]["reliability"]
    assert len(svg.findall(".//{http://www.w3.org/2000/svg}circle")) == int((reliability["count"] > 0).sum())
    assert "<script" not in html.lower() and len(html) < 50_000


def test_hostile_model_names_and_source_are_escaped(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    frame = pd.DataFrame({"y": mu + sigma * rng.normal(size=n), "mean": mu, "std": sigma,
                          "model": np.array(HOSTILE)[np.arange(n) % 3]})
    frame.to_csv(tmp_path / "p.csv", index=False)
    report = cc.diagnose(cc.load_predictions(tmp_path / "p.csv"), **FAST)
    assert set(report.models) == set(HOSTILE)
    html = dataclasses.replace(report, source="<img src=y onerror=alert(2)>")._repr_html_()
    lowered = html.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<i>" not in lowered
    assert "&lt;script&gt;" in html and "&lt;img src=y onerror=alert(2)&gt;" in html
    (svg,) = _svgs(html)  # still well-formed XML with the names inside
    legend = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert set(HOSTILE) <= set(legend)


def test_many_models_stay_small(tmp_path):
    rng = np.random.default_rng(2)
    n_models, n = 30, 200
    parts = []
    for k in range(n_models):
        mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
        parts.append(pd.DataFrame({"y": mu + sigma * rng.normal(size=n), "mean": mu, "std": sigma,
                                   "model": f"m{k:02d}"}))
    pd.concat(parts).to_csv(tmp_path / "many.csv", index=False)
    report = cc.diagnose(cc.load_predictions(tmp_path / "many.csv"), n_resamples=0, n_simulations=0)
    html = report._repr_html_()
    assert f"first {REPR_MAX_MODELS} of {n_models} models shown" in html
    assert "m07" in html and "m08" not in html
    assert len(html) < 60_000


def test_both_diagnoses_assemble_their_report_the_same_way():
    """regression and classification diagnose build their Report with report.diagnosis_report: the same
    metric and verdict columns, empty tables (not missing columns) when no subset has enough rows, and the
    data's source, row count and dropped-row summary."""
    from calib_core.base.report import METRIC_COLUMNS, VERDICT_COLUMNS

    one_class_row = cc.PredictionSet(task="classification", labels=np.array([0]), probs=np.array([[0.3, 0.7]]),
                                     layout="probs", source="one.csv")
    levi = examples.levi_synthetic(n=5)
    one_reg_row = dataclasses.replace(levi, y=levi.y[:1], dist=levi.dist.take(np.arange(10) < 1),
                                      model=levi.model[:1], group=None if levi.group is None else levi.group[:1])
    for pset, task in ((one_class_row, "classification"), (one_reg_row, "regression")):
        report = cc.diagnose(pset, **FAST)
        assert report.task == task
        assert list(report.metrics.columns) == METRIC_COLUMNS and report.metrics.empty
        assert list(report.verdicts.columns) == VERDICT_COLUMNS and report.verdicts.empty
        assert report.source == pset.source and report.n_rows == pset.n_rows
        assert any("too few to diagnose" in note for note in report.options["notes"])
    full = cc.diagnose(levi, **FAST)
    assert set(full.verdicts["model"]) == set(levi.models()) and not full.metrics.empty
