"""The Levi figure made from a plain dict sends the JSON of the validated figure, with and without a selection
patched in (what ``st.plotly_chart`` receives)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from calib_core import plots
from dashboard import redraw_cache as rc


def _tables(n_bins: int = 12) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(5)
    out = {}
    for name, scale in (("m1", 1.0), ("m2", 3.0)):
        rmv = np.sort(rng.uniform(0.1, 1.0, n_bins)) * scale
        rmse = rmv * rng.uniform(0.7, 1.3, n_bins)
        out[name] = pd.DataFrame({"bin": np.arange(n_bins), "count": rng.integers(1, 500, n_bins),
                                  "sigma_low": rmv * 0.9, "sigma_high": rmv * 1.1, "rmv": rmv, "rmse": rmse,
                                  "rmse_low": rmse * 0.9, "rmse_high": rmse * 1.1})
    out["m1"].loc[3, "rmse"] = np.nan
    return out


@pytest.mark.parametrize("log_axes", [False, True])
@pytest.mark.parametrize("selected", [{}, {"m1": (2, 4)}, {"m2": (0,)}])
def test_the_dict_figure_sends_the_validated_figures_json(log_axes: bool, selected: dict) -> None:
    tables = _tables()
    old = rc.marked_figure(plots.levi_figure(tables, log_axes=log_axes), selected, layout_meta={"selection_epoch": 2})
    new_fig = rc.levi_plain_figure(tables, None, colors=None, log_axes=log_axes)
    new = rc.marked_figure(new_fig, selected, layout_meta={"selection_epoch": 2})
    assert pio.to_json(new.to_dict(), validate=False) == pio.to_json(old.to_dict(), validate=False)  # byte for byte
    assert [t.meta for t in new_fig.data] == [t.meta for t in plots.levi_figure(tables).data]


def test_with_a_background_the_validated_builder_is_used() -> None:
    tables = _tables()
    background = _tables(14)
    fig = rc.levi_plain_figure(tables, background, colors=None, log_axes=False)
    expected = plots.with_background(plots.levi_figure, tables, background, log_axes=False)
    assert pio.to_json(fig, validate=False) == pio.to_json(expected, validate=False)
