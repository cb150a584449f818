"""Uploaded text never renders as HTML in a figure.

Plotly renders a subset of HTML in trace names, hover labels, titles, subplot titles, tick labels and annotations
(``<b>``, ``<a href>``, ``<br>``, ``<span style>`` …) and fills ``%{…}`` fields of hover templates.  Model, group
and class names come from the uploaded file: every figure builder that takes them is fed a hostile name here and
every text field of the figure JSON is searched for a live tag or template field of it — while the escaped name
must be there (the check is not vacuous).
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import calib_core as cc
from calib_core import plots
from calib_core.calibrators import regression as rcal
from calib_core.diagrams.regression import regression_diagrams
from calib_core.evaluation.tables import comparison_summary
from calib_core.export import default_figures
from calib_core.metrics.regression import RegressionRows
from calib_core.plots import classification as pcls
from calib_core.plots import comparison as pcmp
from calib_core.plots import regression as preg
from calib_core.plots import regression_levi as plevi
from calib_core.plots._style import plain

HOSTILE = '<a href="http://127.0.0.1:9/x">m</a><b>B</b><span style="color:red">s</span>%{meta}'
#: What may never appear in a text field: the hostile name's tags and its template field.
LIVE = ("<a ", "</a>", "<b>B", "<span", "%{meta}")
#: Keys whose strings Plotly never renders (identifiers, data).
NOT_RENDERED = {"meta", "legendgroup", "uid", "customdata", "ids", "selectedpoints", "bdata", "dtype"}


def _strings(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in NOT_RENDERED:
                yield from _strings(v, k)
    elif isinstance(value, (list, tuple, np.ndarray)):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def check(fig: go.Figure) -> None:
    """No live tag or template field of :data:`HOSTILE` in any rendered string; its escaped form is shown."""
    texts = list(_strings(fig.to_plotly_json()))
    live = [(k, s) for k, s in texts if any(bad in s for bad in LIVE)]
    assert not live, live[:5]
    assert any(plain(HOSTILE) in s for _, s in texts), "the hostile name is not shown at all"


def test_plain_escapes_tags_entities_and_template_fields():
    assert plain(HOSTILE).count("&lt;") == 6 and "<" not in plain(HOSTILE) and ">" not in plain(HOSTILE)
    assert plain("a & b") == "a &amp; b" and plain("5%{x}") == "5&#37;{x}" and plain("m1") == "m1"
    assert plain(3) == "3"


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    n = 600
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, n)
    y = mean + std * rng.normal(size=n)
    y[:3] = mean[:3] + 80 * std[:3]  # z beyond the histogram's range: the clipped-rows note names the model
    frame = pd.DataFrame({"y": y, "mean": mean, "std": std, "model": np.where(np.arange(n) % 2, HOSTILE, "m2"),
                          "group": np.where(np.arange(n) % 3, HOSTILE, "g")})
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), source="hostile.csv")
    return pset, cc.diagnose(pset, n_resamples=0, n_simulations=0)


@pytest.fixture(scope="module")
def classification():
    rng = np.random.default_rng(1)
    n = 600
    P = rng.dirichlet(np.ones(3), n)
    labels = np.array([HOSTILE, "b", "c"])[rng.integers(0, 3, n)]
    frame = pd.DataFrame({"label": labels, f"prob_{HOSTILE}": P[:, 0], "prob_b": P[:, 1], "prob_c": P[:, 2],
                          "model": np.where(np.arange(n) % 2, HOSTILE, "m2")})
    pset = cc.load_predictions(frame.to_csv(index=False).encode(), source="hostile.csv")
    assert HOSTILE in pset.classes
    return pset, cc.diagnose(pset, n_resamples=0, n_simulations=0)


def _tables(report, name, group=cc.ALL):
    return {m: report.diagrams[(m, group)][name] for m in report.models if (m, group) in report.diagrams}


def test_regression_figures_show_hostile_names_as_text(regression):
    pset, report = regression
    figures = list(default_figures(report).values()) + list(default_figures(report, group=HOSTILE).values())
    assert len(figures) == 12
    one = {HOSTILE: report.diagrams[(HOSTILE, cc.ALL)]}
    figures += [
        preg.pit_histogram_figure({HOSTILE: one[HOSTILE]["pit_histogram"]}),  # bars (one model)
        preg.z_histogram_figure({HOSTILE: one[HOSTILE]["z_histogram"]}),  # one model: hatched clipped bar
        preg.calibration_curve_figure(_tables(report, "calibration_curve"), dashes={HOSTILE: "dash"},
                                      bands=["m2"]),
        plevi.levi_figure(_tables(report, "levi_bins"), selected={HOSTILE: [0, 1]}, log_axes=True),
        plevi.levi_panels_figure(_tables(report, "levi_bins"), reference="m2"),
        plevi.levi_panels_figure(_tables(report, "levi_bins"), reference=HOSTILE),
    ]
    assert (report.diagrams[(HOSTILE, cc.ALL)]["z_histogram"]["outside"] > 0).any()
    # ensembles: the rank histogram (bars for one model, lines for several) and the intervals' expected line
    x = np.random.default_rng(3).standard_normal((300, 9))
    ens = regression_diagrams(RegressionRows(x[:, 0], cc.SampleSet(x[:, 1:])))
    figures += [preg.rank_histogram_figure({HOSTILE: ens["rank_histogram"]}),
                preg.rank_histogram_figure({HOSTILE: ens["rank_histogram"], "m2": ens["rank_histogram"]}),
                preg.intervals_figure({HOSTILE: ens["intervals"]})]
    for fig in figures:
        check(fig)


def test_classification_figures_show_hostile_names_as_text(classification):
    pset, report = classification
    figures = list(default_figures(report).values())
    rel = report.diagrams[(HOSTILE, cc.ALL)]
    figures += [
        pcls.reliability_figure({HOSTILE: rel["reliability"]}, selected={HOSTILE: [2]}),  # one model: bars, columns
        pcls.confidence_histogram_figure({HOSTILE: rel["reliability"]}),
        pcls.confidence_histogram_figure(_tables(report, "reliability"), selected={HOSTILE: [1]}),
    ]
    for fig in figures:
        check(fig)
    # class names: the per-class panels and their hover labels
    per_class = pcls.per_class_reliability_figure(rel["per_class"], class_names=pset.classes)
    check(per_class)
    assert plain(HOSTILE) in [a.text.split(" · ")[0] for a in per_class.layout.annotations]


def test_comparison_figures_show_hostile_names_as_text(regression):
    pset, _ = regression
    # a calibrator named by the API user is drawn like a model
    result = cc.evaluate(pset, {"uncalibrated": None, HOSTILE: rcal.StdScaling(), "CRUDE": rcal.CRUDE()},
                         repeats=2, seed=0, diagrams=True)
    assert len(result.summary)
    for fig in plots.comparison_figures(result, HOSTILE).values():
        check(fig)
    summary = comparison_summary(result)
    check(pcmp.comparison_dot_figure(summary))


#: Figure builders that take uploaded names, and the test that feeds each a hostile name.
COVERED = {
    "calibration_curve_figure", "levi_figure", "levi_panels_figure", "pit_histogram_figure", "z_histogram_figure",
    "qq_figure", "intervals_figure", "rank_histogram_figure", "reliability_figure", "confidence_histogram_figure",
    "per_class_reliability_figure", "comparison_dot_figure", "comparison_figures",
}


def test_every_figure_builder_of_uploaded_data_is_covered():
    builders = {name for module in (preg, plevi, pcls, pcmp)
                for name, fn in inspect.getmembers(module, inspect.isfunction)
                if fn.__module__ == module.__name__ and not name.startswith("_") and name.endswith(("_figure",
                                                                                                 "_figures"))}
    missing = builders - COVERED
    assert not missing, (f"figure builder(s) {sorted(missing)} take names from uploaded files: pass every name "
                         "through calib_core.plots._style.plain and add a hostile-name case here")


def test_newer_lenses_draw_uploaded_names_literally(regression):
    """The newer lenses (PIT-ECDF difference, ENCE against bins) take model names too."""
    from calib_core.metrics.regression_tails import ence_by_bins_tables

    pset, report = regression
    curves = {m: report.diagrams[(m, cc.ALL)]["calibration_curve"] for m in report.models}
    check(plots.pit_ecdf_difference_figure(curves))
    check(plots.ence_bins_figure(ence_by_bins_tables(pset, binning="count")))
