"""The Regression page prepares every σ-bin's selection diagnosis in the server's idle time once the Levi diagram is
drawn: a click then diagnoses nothing and shows exactly what a click computing its diagnosis itself shows."""

from __future__ import annotations

import collections

import pandas as pd

import calib_core
import dashboard.selection
from dashboard import cache
from tests.app.test_pages import LEVI, bins_points, load_example, new_app, plotly_select, specs


def _wait_for_prefetches():
    for run in list(cache.PREFETCH_LOG):
        assert run.done.wait(timeout=600)


def _page():
    cache.clear_caches()
    at = load_example(new_app(), LEVI)
    at.switch_page("pages/regression.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _shown(at):
    return specs(at), [t.value for t in at.dataframe], [m.value for m in at.markdown]


def _click(at, name, bins):
    return plotly_select(at, "reg_levi_chart", bins_points(specs(at)["reg_levi_chart"], name, bins))


def test_a_click_reads_the_prepared_diagnosis_and_shows_what_computing_it_shows(monkeypatch):
    calls: collections.Counter = collections.Counter()
    real = calib_core.diagnose

    def counted(*args, **kwargs):
        calls["diagnose"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(calib_core, "diagnose", counted)
    monkeypatch.setattr(dashboard.selection, "SIGMA_PREFETCH_MIN_ROWS", 0)  # the example's 20,000 rows
    at = _page()
    _wait_for_prefetches()  # the user's think time
    calls.clear()
    _click(at, "random sigma", [4])
    assert calls["diagnose"] == 0  # read, not computed
    prepared = _shown(at)
    _click(at, "true sigma", [0])  # another model's bin: prepared too
    assert calls["diagnose"] == 0

    monkeypatch.setattr(dashboard.selection, "prefetch_sigma_selections", lambda *a, **k: None)  # no prefetch
    _wait_for_prefetches()
    at = _page()
    calls.clear()
    _click(at, "random sigma", [4])
    assert calls["diagnose"] == 1  # computed by the click
    direct = _shown(at)
    assert prepared[0] == direct[0]
    assert len(prepared[1]) == len(direct[1]) and prepared[1]
    for a, b in zip(prepared[1], direct[1]):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert prepared[2] == direct[2]
