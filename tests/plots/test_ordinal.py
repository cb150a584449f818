"""The per-threshold reliability figure of ordinal forecasts (calib_core.plots.ordinal)."""

from __future__ import annotations

import numpy as np
import pytest

from calib_core.diagrams.classification_ordinal import threshold_reliability
from calib_core.plots.ordinal import threshold_reliability_figure, worst_thresholds
from tests.plots.test_uploaded_text import HOSTILE, check


def _result(k: int = 4, n: int = 400, seed: int = 0, classes=None, shift: bool = False):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 1.5), size=n)
    q = p
    if shift:  # the truth one category above the forecast
        q = np.zeros_like(p)
        q[:, 1:] = p[:, :-1]
        q[:, -1] += p[:, -1]
    y = np.minimum((rng.random(n)[:, None] > np.cumsum(q, axis=1)).sum(axis=1), k - 1)
    return threshold_reliability(p, y, classes=classes, n_resamples=100, seed=seed)


def test_one_panel_per_threshold_with_curves_bins_and_band():
    res = _result(5)
    fig = threshold_reliability_figure({"m": res})
    titles = [a.text for a in fig.layout.annotations]
    assert len(titles) == 4 and titles[0].startswith("≤ 0 · MCB")
    roles = [t.meta["role"] for t in fig.data]
    assert roles.count("corp") == 4 and roles.count("bins") == 4 and roles.count("band") == 4
    two = threshold_reliability_figure({"a": res, "b": _result(5, seed=1)}, thresholds=[2, 0])
    assert [a.text for a in two.layout.annotations] == ["≤ 2", "≤ 0"]
    assert [t.meta["threshold"] for t in two.data if t.meta.get("role") == "corp"] == [2, 2, 0, 0]
    assert "band" not in [t.meta["role"] for t in two.data]  # one band per model would hide the curves
    with pytest.raises(ValueError):
        threshold_reliability_figure({})


def test_many_thresholds_show_the_worst_first():
    res = _result(8, n=600, shift=True)
    picked = worst_thresholds(res.summary, 3)
    assert len(picked) == 3 and picked == sorted(picked)
    worst = res.summary.sort_values("adjusted_p")["threshold"].iloc[0]
    assert worst in picked
    fig = threshold_reliability_figure({"m": res}, max_panels=3)
    assert len(fig.layout.annotations) == 3
    assert worst_thresholds(res.summary, 20) == list(range(7))


def test_uploaded_names_are_drawn_as_text():
    res = _result(3, classes=[HOSTILE, "mid", "high"])
    check(threshold_reliability_figure({HOSTILE: res}))
    check(threshold_reliability_figure({HOSTILE: res, "other": res}))
