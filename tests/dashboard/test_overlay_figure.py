"""The Regression page's selection overlays drawn from plain dicts send the JSON of the validated figures on fixed
axes (``steady_ranges(with_background(...))``) byte for byte: real diagnosis tables of all rows and of a σ-bin
selection, one or two models, heavy tails (rows beyond the z histogram's range), and a slice's background (the
validated path)."""

from __future__ import annotations

import numpy as np
import pytest

import calib_core as cc
from calib_core import plots
from dashboard.display import _figure_json, steady_ranges, steady_spec_ranges
from dashboard.redraw_cache import prepared_figure
from dashboard.selection import overlay_figure
from views import pages as views
from views.selection import with_selected

_OPTS = {"n_bins": 15, "binning": "count", "n_resamples": 0, "n_simulations": 0, "seed": 0}


def _pset(n: int, two: bool, tails: bool, seed: int) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 2.0, n)
    noise = rng.standard_t(2, n) if tails else rng.normal(size=n)
    y = mu + sigma * noise * 1.1
    model = np.where(np.arange(n) % 3 == 0, "b", "a") if two else None
    return cc.PredictionSet(task="regression", source="test.csv", layout="gaussian", y=y,
                            dist=cc.Gaussian(mu, sigma), model=model, n_read=n, row_number=np.arange(1, n + 1))


BUILDS = {"calibration_curve": plots.calibration_curve_figure, "pit_histogram": plots.pit_histogram_figure,
          "z_histogram": plots.z_histogram_figure}


@pytest.mark.parametrize("two", [False, True])
@pytest.mark.parametrize("tails", [False, True])
@pytest.mark.parametrize("selected", [None, {"a": (3,)}, {"a": (0, 14)}])
@pytest.mark.parametrize("table_name", list(BUILDS))
def test_overlay_json_is_the_validated_figures(two: bool, tails: bool, selected, table_name: str) -> None:
    pset = _pset(3_000, two, tails, seed=7)
    report = cc.diagnose(pset, by_group=False, **_OPTS)
    shown = list(views.diagram_tables(report, "levi_bins"))
    colors = plots.model_colors(pset.models())
    sel_tables = None
    if selected:
        mask = views.sigma_bin_rows(pset, selected, 15, "count")
        sel_tables = views.diagram_tables(cc.diagnose(pset.take(mask), by_group=False, **_OPTS), table_name, shown)
    tables, dashes, cmap = with_selected(views.diagram_tables(report, table_name, shown), sel_tables, colors)
    options = {"colors": cmap, "dashes": dashes}
    if table_name == "calibration_curve":
        options["bands"] = set(dashes) if selected else None
    build = BUILDS[table_name]
    expected = _figure_json(prepared_figure(steady_ranges(plots.with_background(build, tables, None, **options))))
    assert _figure_json(prepared_figure(overlay_figure(build, tables, None, **options))) == expected
    assert _figure_json(prepared_figure(overlay_figure(build, tables, {}, **options))) == expected


def test_with_a_background_the_validated_figure_is_drawn() -> None:
    pset, whole = _pset(500, False, True, seed=1), _pset(2_000, False, True, seed=2)
    tables = views.diagram_tables(cc.diagnose(pset, by_group=False, **_OPTS), "z_histogram")
    behind = views.diagram_tables(cc.diagnose(whole, by_group=False, **_OPTS), "z_histogram")
    fig = overlay_figure(plots.z_histogram_figure, tables, behind)
    expected = steady_ranges(plots.with_background(plots.z_histogram_figure, tables, behind))
    assert _figure_json(prepared_figure(fig)) == _figure_json(prepared_figure(expected))
    assert any(t.meta.get("role", "").startswith("background") or "faint" in str(t.meta) for t in fig.data) \
        or len(fig.data) > len(plots.z_histogram_figure(tables).data)


@pytest.mark.parametrize("ys", [[[0.2, 0.9]], [[-0.3, 0.1], [2.0]], [[0.0, 0.0]], [[np.nan, np.inf]], [[-5.0, -1.0]],
                                [[1e-300, 3e300]], [[]]])
def test_steady_spec_ranges_equal_steady_ranges(ys) -> None:
    import plotly.graph_objects as go

    data = [{"type": "scatter", "x": np.arange(len(y), dtype=float) - 1.0, "y": np.asarray(y, dtype=float)}
            for y in ys]
    fig = steady_ranges(go.Figure([go.Scatter(x=d["x"], y=d["y"]) for d in data]))
    layout = steady_spec_ranges({"data": data, "layout": {"xaxis": {}, "yaxis": {}}})["layout"]
    for name in ("xaxis", "yaxis"):
        theirs = fig.layout[name].range
        assert layout[name].get("range") == (list(theirs) if theirs is not None else None)
