"""A diagnosis asked for some diagram tables only (a σ-bin selection's overlays: the Kuleshov curve, the PIT and z
histograms) gives the same metrics, verdicts, options and those same tables as the full diagnosis, to the last bit:
every layout, several models and groups, rows without a usable z, a clustering, tests and intervals on or off, and
through a bins-free stage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from tests.diagnosis.test_regression_stages import _set

OVERLAYS = ("calibration_curve", "pit_histogram", "z_histogram")


def _assert_same_but_tables(some: cc.Report, full: cc.Report, names) -> None:
    pd.testing.assert_frame_equal(some.metrics, full.metrics, check_exact=True)
    pd.testing.assert_frame_equal(some.verdicts, full.verdicts, check_exact=True)
    assert some.options == full.options
    if not names:  # no table asked for: none, as with diagrams=False
        assert not some.diagrams
        return
    assert list(some.diagrams) == list(full.diagrams)
    for key, tables in some.diagrams.items():
        assert list(tables) == [k for k in full.diagrams[key] if k in names]
        for name, table in tables.items():
            pd.testing.assert_frame_equal(table, full.diagrams[key][name], check_exact=True)
            assert table.attrs == full.diagrams[key][name].attrs


@pytest.mark.parametrize("layout", ["gaussian", "sigma0", "models", "quantile", "ensemble"])
@pytest.mark.parametrize("resampling", [(0, 0), (60, 80)])
@pytest.mark.parametrize("names", [list(OVERLAYS), ["z_histogram"], ["levi_bins", "qq"], []])
def test_some_tables_same_report(layout: str, resampling, names) -> None:
    pset = _set(layout, n=1_200)
    options = {"n_bins": 12, "binning": "count", "n_resamples": resampling[0], "n_simulations": resampling[1],
               "seed": 4, "by_group": True}
    full = cc.diagnose(pset, **options)
    _assert_same_but_tables(cc.diagnose(pset, diagrams=names, **options), full, names)


def test_clustered_rows_same_report_and_notes() -> None:
    pset = _set("gaussian", n=1_500)
    rng = np.random.default_rng(0)
    pset = cc.PredictionSet(task="regression", y=pset.y, dist=pset.dist, layout="gaussian",
                            group=rng.integers(0, 40, pset.n_rows).astype(str))
    options = {"n_resamples": 40, "n_simulations": 40, "seed": 1, "by_group": False, "cluster": "group"}
    full = cc.diagnose(pset, **options)
    assert full.options.get("notes")  # the clustering's notes (one on the diagrams)
    _assert_same_but_tables(cc.diagnose(pset, diagrams=OVERLAYS, **options), full, OVERLAYS)


def test_through_a_stage() -> None:
    pset = _set("models", n=1_200)
    options = {"n_resamples": 30, "n_simulations": 30, "seed": 2, "by_group": False}
    stages: dict = {}
    cc.diagnose(pset, n_bins=10, stages=stages, diagrams=OVERLAYS, **options)
    staged = cc.diagnose(pset, n_bins=14, stages=stages, diagrams=OVERLAYS, **options)
    _assert_same_but_tables(staged, cc.diagnose(pset, n_bins=14, **options), OVERLAYS)
    assert stages  # the stage served the second call
