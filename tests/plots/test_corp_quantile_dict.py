"""The CORP quantile reliability diagram built as a plain dict is the validated figure's JSON: one or several models,
short (markers) and long curves, bands with infinite or missing ends, every default τ, a title or none."""

from __future__ import annotations

import copy

import numpy as np
import plotly.io as pio
import pytest
from _plotly_utils.utils import convert_to_base64

from calib_core import plots
from calib_core.base.regression import Gaussian
from calib_core.metrics.regression_decomposition import quantile_reliability
from calib_core.plots.corp import quantile_reliability_figure_dict


def _result(n: int, tau: float, seed: int, shift: float = 0.0):
    rng = np.random.default_rng(seed)
    mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = rng.normal(mu + shift, sigma)
    return quantile_reliability(y, Gaussian(mu, sigma), tau=tau, n_resamples=20, seed=seed)


def _wire(spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    convert_to_base64(spec)
    return spec


def _cases(tau: float) -> dict[str, dict]:
    long, short = _result(3_000, tau, 1), _result(30, tau, 2, shift=0.5)
    holed = copy.deepcopy(short)
    holed.bands.loc[1, "consistency_low"] = -np.inf
    holed.bands.loc[2, "consistency_high"] = np.nan
    return {"one": {"model": long}, "short": {"m <b>": short}, "two": {"a <b>": long, "b 50%": short},
            "holed": {"a": holed, "b": long}}


@pytest.mark.parametrize("tau", [0.05, 0.25, 0.5, 0.75, 0.95])
@pytest.mark.parametrize("options", [{}, {"colors": {"a <b>": "#000000", "model": "#111111"}}, {"title": None},
                                     {"title": ""}, {"title": "two<br>lines"}])
def test_the_dict_is_the_validated_figures_json(tau: float, options: dict) -> None:
    for results in _cases(tau).values():
        fig = plots.quantile_reliability_figure(results, **options)
        expected = pio.to_json(fig.to_plotly_json(), validate=False)
        assert pio.to_json(_wire(quantile_reliability_figure_dict(results, **options)), validate=False) == expected


def test_the_dict_refuses_what_the_figure_refuses() -> None:
    with pytest.raises(ValueError, match="no quantile"):
        quantile_reliability_figure_dict({})
    with pytest.raises(ValueError, match="one level"):
        quantile_reliability_figure_dict({"a": _result(50, 0.25, 1), "b": _result(50, 0.75, 1)})


def test_the_downloaded_figure_is_the_same_page() -> None:
    """The page wraps the dict without validation (``dashboard.redraw_cache.dict_figure``): its HTML download is the
    validated figure's, up to the random id of the plot's <div>."""
    import re

    from calib_core.export import figure_html
    from dashboard.redraw_cache import dict_figure

    results = _cases(0.25)["two"]
    uid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    validated = figure_html(plots.quantile_reliability_figure(results), title="CORP")
    plain = figure_html(dict_figure(quantile_reliability_figure_dict(results)), title="CORP")
    assert uid.search(plain) is not None
    assert uid.sub("id", plain) == uid.sub("id", validated)
