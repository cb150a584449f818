"""A mergeable summary gives the WIS rows and a quantile set's other stated central intervals as cc.diagnose does."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import calib_core as cc
from calib_core.calibrators import registry as reg
from calib_core.metrics.regression_wis import HUB_LEVELS, WIS_PARTS


def gaussian(n: int, seed: int):
    rng = np.random.default_rng(seed)
    mu, sd = rng.normal(size=n) * 2, rng.uniform(0.5, 2.0, n)
    return mu + sd * rng.standard_normal(n), mu, sd


def test_summary_report_gives_the_same_wis_and_stated_coverages():
    from calib_core.scale import summary as S

    y, mu, sd = gaussian(3_000, 2)
    q = mu[:, None] + sd[:, None] * special.ndtri(HUB_LEVELS)[None, :]
    pset = cc.PredictionSet(task="regression", layout="quantile", y=y, dist=cc.QuantileSet(HUB_LEVELS, q))
    ref = cc.diagnose(pset, n_resamples=0, n_simulations=0, diagrams=False).table()
    got = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=0, n_simulations=100, diagrams=False).table()
    for key in (*WIS_PARTS, "coverage_10", "coverage_70", "coverage_98"):
        assert got.loc[key, "value"] == pytest.approx(ref.loc[key, "value"], rel=1e-12), key
    assert got.loc["coverage_98", "kind"] == reg.DESCRIPTIVE and "exact binomial p" in got.loc["coverage_98", "note"]
    assert got.loc["coverage_98", "family"] == "" and got.loc["coverage_95", "family"] == "primary"
