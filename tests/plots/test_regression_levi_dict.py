"""The Levi diagram built as a plain dict is the validated figure's JSON: linear and log axes, selections, one or
several models, NaN and empty bins, no title."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest
from _plotly_utils.utils import convert_to_base64

from calib_core import plots
from calib_core.plots.regression_levi import levi_figure_dict


def _table(rng: np.random.Generator, n_bins: int, scale: float) -> pd.DataFrame:
    rmv = np.sort(rng.uniform(0.1, 1.0, n_bins)) * scale
    rmse = rmv * rng.uniform(0.7, 1.3, n_bins)
    return pd.DataFrame({"bin": np.arange(n_bins), "count": rng.integers(1, 10_000, n_bins),
                         "sigma_low": rmv * 0.9, "sigma_high": rmv * 1.1, "rmv": rmv, "rmse": rmse,
                         "rmse_low": rmse * 0.9, "rmse_high": rmse * 1.2})


def _tables() -> dict[str, object]:
    rng = np.random.default_rng(3)
    a, b = _table(rng, 15, 1.0), _table(rng, 16, 40.0)
    nan = a.copy()
    nan.loc[2, ["rmse", "rmse_low"]] = np.nan
    nan.loc[5, "rmv"] = np.nan
    return {"two": {"a <b>": a, "b 50%": b}, "one": a, "nan": {"a <b>": nan, "b 50%": b},
            "empty": {"a <b>": a.iloc[:0], "b 50%": b.iloc[:0]}, "one bin": {"a <b>": a.iloc[:1]}}


def _wire(spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    convert_to_base64(spec)
    return spec


@pytest.mark.parametrize("case", list(_tables()))
@pytest.mark.parametrize("options", [{}, {"log_axes": True}, {"selected": {"a <b>": [1, 2]}},
                                     {"selected": {"b 50%": [0]}, "log_axes": True}, {"selected": {"a <b>": []}},
                                     {"title": None}, {"colors": {"a <b>": "#000000"}},
                                     {"title": "two<br>lines"}])
def test_the_dict_is_the_validated_figures_json(case: str, options: dict) -> None:
    tables = _tables()[case]
    fig = plots.levi_figure(tables, **options)
    expected = pio.to_json(fig.to_plotly_json(), validate=False)
    assert pio.to_json(_wire(levi_figure_dict(tables, **options)), validate=False) == expected  # byte for byte
