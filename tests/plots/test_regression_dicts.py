"""The selection overlays built as plain dicts (Kuleshov curve, PIT histogram, z histogram) are the validated
figures' JSON byte for byte: one or several models, a selection's dashed twin, bands of some names only, NaN values,
overflow bins with rows beyond the range on one side, both or none, one bin, no title."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest
from _plotly_utils.utils import convert_to_base64

from calib_core import plots
from calib_core.plots.regression_dicts import (
    calibration_curve_figure_dict,
    pit_histogram_figure_dict,
    z_histogram_figure_dict,
)


def _wire(spec: dict) -> dict:
    spec = copy.deepcopy(spec)
    convert_to_base64(spec)
    return spec


def _same(fig, spec: dict) -> None:
    expected = pio.to_json(fig.to_plotly_json(), validate=False)
    assert pio.to_json(_wire(spec), validate=False) == expected  # byte for byte


def _curve(rng: np.random.Generator, nan: bool = False) -> pd.DataFrame:
    level = np.linspace(0.0, 1.0, 101)
    observed = np.sort(np.clip(level + rng.normal(0, 0.03, level.size), 0, 1))
    t = pd.DataFrame({"level": level, "observed": observed, "band_low": np.clip(level - 0.05, 0, 1),
                      "band_high": np.clip(level + 0.05, 0, 1)})
    if nan:
        t.loc[3, "observed"] = np.nan
    return t


def _hist(rng: np.random.Generator, edges: np.ndarray, outside: tuple[int, int] | None = None,
          normal: bool = False, n_rows: int = 10_000) -> pd.DataFrame:
    count = rng.multinomial(n_rows, np.full(edges.size - 1, 1.0 / (edges.size - 1)))
    width = np.diff(edges)
    width = np.where(np.isfinite(width), width, 1.0)
    t = pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": count, "density": count / (n_rows * width)})
    if normal:
        t["normal_density"] = rng.uniform(0, 0.4, len(t))
    if outside is not None:
        t["outside"] = 0
        t.loc[0, "outside"] = outside[0]
        t.loc[len(t) - 1, "outside"] = outside[1]
    return t


def _curve_cases() -> dict[str, object]:
    rng = np.random.default_rng(1)
    a, b = _curve(rng), _curve(rng)
    return {"one": a, "two": {"m <b>": a, "m <b> · selected": b}, "nan": {"m": _curve(rng, nan=True)},
            "three": {"a": a, "b": b, "a · selected": _curve(rng)}}


@pytest.mark.parametrize("case", list(_curve_cases()))
@pytest.mark.parametrize("options", [{}, {"dashes": {"m <b> · selected": "dash"}},
                                     {"bands": {"m <b> · selected"}, "dashes": {"m <b> · selected": "dash"}},
                                     {"bands": set()}, {"title": None}, {"colors": {"a": "#000000"}},
                                     {"title": "two<br>lines"}])
def test_calibration_curve_dict_is_the_validated_figures_json(case: str, options: dict) -> None:
    tables = _curve_cases()[case]
    _same(plots.calibration_curve_figure(tables, **options), calibration_curve_figure_dict(tables, **options))


def _pit_cases() -> dict[str, object]:
    rng = np.random.default_rng(2)
    edges = np.linspace(0.0, 1.0, 21)
    a, b = _hist(rng, edges), _hist(rng, edges, n_rows=37)
    nan = a.copy()
    nan.loc[4, "density"] = np.nan
    return {"one": a, "two": {"m": a, "m · selected": b}, "nan": {"m": nan, "m · selected": b},
            "one bin": _hist(rng, np.array([0.0, 1.0])), "ties": _hist(rng, edges, n_rows=1)}


@pytest.mark.parametrize("case", list(_pit_cases()))
@pytest.mark.parametrize("options", [{}, {"dashes": {"m · selected": "dash"}}, {"title": None},
                                     {"colors": {"m": "#123456"}}])
def test_pit_histogram_dict_is_the_validated_figures_json(case: str, options: dict) -> None:
    tables = _pit_cases()[case]
    _same(plots.pit_histogram_figure(tables, **options), pit_histogram_figure_dict(tables, **options))


def _z_cases() -> dict[str, object]:
    rng = np.random.default_rng(3)
    edges = np.linspace(-4.0, 4.0, 41)
    inf_edges = np.concatenate([[-np.inf], edges[1:-1], [np.inf]])
    out = {
        "one, no outside": _hist(rng, edges, normal=True),
        "one, both sides": _hist(rng, edges, (27, 3), normal=True),
        "one, left only": _hist(rng, edges, (1, 0), normal=True),
        "one, right only": _hist(rng, edges, (0, 12_345), normal=True),
        "one, infinite edges": _hist(rng, inf_edges, (2, 2), normal=True),
        "two, both sides": {"m": _hist(rng, edges, (27, 27), normal=True),
                            "m · selected": _hist(rng, edges, (1, 2), normal=True, n_rows=1333)},
        "two, selection none": {"m": _hist(rng, edges, (5, 0), normal=True),
                                "m · selected": _hist(rng, edges, (0, 0), normal=True, n_rows=50)},
        "two, no column": {"m": _hist(rng, edges, normal=True), "m · selected": _hist(rng, edges, normal=True)},
        "three": {"a": _hist(rng, edges, (4, 4), normal=True), "b <i>": _hist(rng, edges, (0, 9), normal=True),
                  "a · selected": _hist(rng, edges, (1, 0), normal=True)},
        "one bin": _hist(rng, np.array([-1.0, 1.0]), (3, 0), normal=True),
    }
    nan = out["one, both sides"].copy()
    nan.loc[7, ["density", "normal_density"]] = np.nan
    out["nan"] = nan
    return out


@pytest.mark.parametrize("case", list(_z_cases()))
@pytest.mark.parametrize("options", [{}, {"dashes": {"m · selected": "dash"}}, {"title": None},
                                     {"title": "two<br>lines"}])
def test_z_histogram_dict_is_the_validated_figures_json(case: str, options: dict) -> None:
    tables = _z_cases()[case]
    _same(plots.z_histogram_figure(tables, **options), z_histogram_figure_dict(tables, **options))
