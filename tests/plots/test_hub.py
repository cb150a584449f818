"""Figures of the Forecast hub page (``calib_core.plots.hub``): drawn from the grouped tables, selectable points
named as the page's linked selection reads them, names from files drawn literally."""

from __future__ import annotations

import numpy as np
import pandas as pd

from calib_core.diagnosis.regression_hub import forecast_rows, forecast_scores
from calib_core.plots import hub as hp
from tests.hub_synthetic import synthetic_hub
from views import hub as hv


def _rows():
    return forecast_rows(synthetic_hub(n_locations=3, n_dates=4))


def test_wis_parts_stack_to_the_wis():
    scores = forecast_scores(_rows())
    fig = hp.wis_parts_figure(scores)
    assert fig.layout.barmode == "stack" and len(fig.data) == 3
    total = np.sum([np.asarray(t.y) for t in fig.data], axis=0)
    np.testing.assert_allclose(total, scores["wis"])


def test_coverage_by_horizon_has_the_nominal_lines_and_horizon_points():
    scores = forecast_scores(_rows(), ("model", "horizon"))
    fig = hp.coverage_by_horizon_figure(scores, ["coverage_50", "coverage_90"])
    assert len(fig.data) == 2 * 3  # intervals × models
    assert {s.y0 for s in fig.layout.shapes} == {0.5, 0.9}
    for trace in fig.data:
        assert trace.meta == {"name": "horizon", "role": "bins"}
        assert list(trace.customdata) == [0, 1, 2, 3]


def test_dates_are_selected_by_their_day_code():
    scores = forecast_scores(_rows(), ("model", "target_end_date"))
    fig = hp.score_over_dates_figure(scores, "wis")
    first = fig.data[0]
    assert first.meta == {"name": "date", "role": "bins"}
    assert int(first.customdata[0]) == int((pd.Timestamp("2024-01-06") - pd.Timestamp(0)).days)


def test_heatmap_grid_and_the_selectable_cells():
    rows = _rows()
    table = hv.heatmap_table(rows, "coverage_90", "location", "horizon")
    fig = hp.hub_heatmap_figure(table, "coverage_90", rows="location", columns="horizon", center=0.9,
                                selected=[int(table["cell"].iloc[0])])
    heat, cells = fig.data
    z = np.asarray(heat.z)
    assert z.shape == (3, 4) and heat.zmid == 0.9
    np.testing.assert_allclose(z.ravel(), table.sort_values(["row", "column"])["value"])
    assert cells.meta == {"name": "cell", "role": "bins"} and list(cells.customdata) == table["cell"].tolist()
    assert list(cells.marker.color).count("#111111") == 1  # the selected cell is outlined


def test_names_from_files_are_drawn_literally():
    scores = forecast_scores(_rows())
    scores["model"] = ["<b>x</b>", "a%{y}", "c&d"]
    fig = hp.wis_parts_figure(scores)
    assert list(fig.data[0].x) == ["&lt;b&gt;x&lt;/b&gt;", "a&#37;{y}", "c&amp;d"]


def test_every_figure_is_valid_plotly():
    """The builders skip Plotly's validation for speed: every figure passes it when built again from its JSON."""
    import plotly.graph_objects as go

    rows = _rows()
    figures = [hp.wis_parts_figure(forecast_scores(rows)),
               hp.coverage_by_horizon_figure(forecast_scores(rows, ("model", "horizon"))),
               hp.score_over_dates_figure(forecast_scores(rows, ("model", "target_end_date")), reference=0.5),
               hp.hub_heatmap_figure(hv.heatmap_table(rows, "pit_departure", "location", "target_end_date"),
                                     "pit_departure", selected=[0])]
    for fig in figures:
        go.Figure(fig.to_plotly_json())  # raises on any invalid property
        fig.to_json()
