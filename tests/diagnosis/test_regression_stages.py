"""A diagnosis redone with other σ-bins from its bins-free stage: the same report as a fresh
diagnosis, to the last bit, for every layout and edge the staged path can meet; the bins-free work is not redone;
a stage never serves other rows or options; stored stages do not grow.  Also the memoised bootstrap design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core.base import significance as sig
from calib_core.base.predictions import PredictionSet
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet, norm_ppf
from calib_core.diagnosis import regression as diag
from calib_core.inference.regression import finish_inference, infer_regression, inference_stage
from calib_core.metrics.regression import RegressionRows

TAU = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])
BINS = [(16, "count"), (16, "width"), (7, "width"), (15, "count"), (40, "count")]


def _set(layout: str, n: int = 2_500, seed: int = 3) -> PredictionSet:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    mu, s = np.sin(3 * x), 0.2 + 0.5 * np.abs(x)
    y = mu + 1.3 * s * rng.standard_normal(n)
    group = np.where(x > 0, "right", "left")
    model = np.where(rng.random(n) < 0.5, "a", "b")
    kw = dict(task="regression", y=y, group=group)
    if layout == "gaussian":
        return PredictionSet(dist=Gaussian(mu, s), layout="gaussian", **kw)
    if layout == "sigma0":  # rows without a usable z: notes and undefined metrics on the staged path too
        s0 = s.copy()
        s0[:60] = 0.0
        return PredictionSet(dist=Gaussian(mu, s0), layout="gaussian", **kw)
    if layout == "models":
        return PredictionSet(dist=Gaussian(mu, s), layout="gaussian", model=model, **kw)
    if layout == "quantile":
        return PredictionSet(dist=QuantileSet(TAU, mu[:, None] + s[:, None] * norm_ppf(TAU)[None, :]),
                             layout="quantile", **kw)
    if layout == "ensemble":
        return PredictionSet(dist=SampleSet(mu[:, None] + s[:, None] * rng.standard_normal((n, 15))),
                             layout="sample", **kw)
    raise ValueError(layout)


def assert_same_report(a: cc.Report, b: cc.Report) -> None:
    pd.testing.assert_frame_equal(a.metrics, b.metrics, check_exact=True)
    pd.testing.assert_frame_equal(a.verdicts, b.verdicts, check_exact=True)
    assert a.options == b.options
    assert list(a.diagrams) == list(b.diagrams)
    for key in a.diagrams:
        assert list(a.diagrams[key]) == list(b.diagrams[key])
        for name, table in a.diagrams[key].items():
            pd.testing.assert_frame_equal(table, b.diagrams[key][name], check_exact=True)
            assert table.attrs == b.diagrams[key][name].attrs


LAYOUTS = ["gaussian", "sigma0", "models", "quantile", "ensemble"]
EXTRAS = [{}, {"n_simulations": 0}, {"n_resamples": 0}, {"n_resamples": 0, "n_simulations": 0}]
#: the default run keeps every option set on Gaussian forecasts and every layout without resampling; the rest of
#: the grid runs with ``pytest -m slow``
STAGE_CASES = [pytest.param(layout, extra, id=f"extra{i}-{layout}",
                            marks=() if layout == "gaussian" or i == len(EXTRAS) - 1 else pytest.mark.slow)
               for i, extra in enumerate(EXTRAS) for layout in LAYOUTS]


@pytest.mark.parametrize("layout, extra", STAGE_CASES)
def test_staged_rediagnosis_equals_a_fresh_one(layout, extra):
    pset = _set(layout)
    stages: dict = {}
    first = cc.diagnose(pset, stages=stages, **extra)  # by group too: one stage per (model, group)
    assert_same_report(first, cc.diagnose(pset, **extra))
    if layout == "ensemble" and extra != {"n_resamples": 0, "n_simulations": 0}:
        assert not stages  # the exchangeability null is binned: nothing bins-free to keep
    else:
        assert len(stages) == len(first.verdicts)
    for n_bins, binning in BINS:
        staged = cc.diagnose(pset, stages=stages, n_bins=n_bins, binning=binning, **extra)
        assert_same_report(staged, cc.diagnose(pset, n_bins=n_bins, binning=binning, **extra))


def test_the_staged_path_does_not_redo_the_bins_free_work(monkeypatch):
    pset = _set("gaussian", n=4_000)
    stages: dict = {}
    cc.diagnose(pset, by_group=False, stages=stages)
    fresh = cc.diagnose(pset, by_group=False, n_bins=22)
    calls = {"summary": 0, "stage": 0}
    summary, stage = diag.summary_statistics, diag.inference_stage

    def counted_summary(*a, **k):
        calls["summary"] += 1
        return summary(*a, **k)

    def counted_stage(*a, **k):
        calls["stage"] += 1
        return stage(*a, **k)

    monkeypatch.setattr(diag, "summary_statistics", counted_summary)
    monkeypatch.setattr(diag, "inference_stage", counted_stage)
    report = cc.diagnose(pset, by_group=False, stages=stages, n_bins=22)
    assert calls == {"summary": 0, "stage": 0}
    assert_same_report(report, fresh)
    # other options than the σ-bins: the stage does not serve, everything is recomputed
    cc.diagnose(pset, by_group=False, stages=stages, n_bins=22, level=0.9)
    assert calls == {"summary": 1, "stage": 1}


def test_a_stage_never_serves_other_rows():
    pset = _set("gaussian")
    stages: dict = {}
    cc.diagnose(pset, by_group=False, stages=stages)
    y = pset.y.copy()
    y[7] += 1.0  # same size, one target moved: the stage must not serve
    other = PredictionSet(task="regression", y=y, dist=pset.dist, layout="gaussian")
    assert_same_report(cc.diagnose(other, by_group=False, stages=stages, n_bins=17),
                       cc.diagnose(other, by_group=False, n_bins=17))
    wider = PredictionSet(task="regression", y=pset.y, dist=Gaussian(pset.dist.mean(), 1.5 * pset.dist.std()),
                          layout="gaussian")
    assert_same_report(cc.diagnose(wider, by_group=False, stages=stages, n_bins=18),
                       cc.diagnose(wider, by_group=False, n_bins=18))


def test_a_stored_stage_does_not_grow_with_the_bins_it_serves():
    from dashboard.store import approx_nbytes

    pset = _set("gaussian", n=20_000)
    stages: dict = {}
    cc.diagnose(pset, by_group=False, stages=stages)
    kept = dict(stages)
    size = approx_nbytes(kept)
    for n_bins in range(5, 51, 3):
        for binning in ("count", "width"):
            cc.diagnose(pset, by_group=False, stages=stages, n_bins=n_bins, binning=binning)
    assert all(stages[k] is v for k, v in kept.items())
    assert approx_nbytes(kept) == size
    assert size < 20_000 * 8 * 12  # a handful of per-row arrays, not every cached sort and PIT


def test_inference_stage_and_finish_equal_infer_regression():
    rng = np.random.default_rng(8)
    mu, s = rng.normal(size=3_000), rng.uniform(0.5, 2.0, 3_000)
    y = mu + 1.2 * s * rng.standard_normal(3_000)
    rows = RegressionRows(y, Gaussian(mu, s))
    stage = inference_stage(None, rows=rows, n_bins=15)
    for n_bins, binning in BINS:
        whole = infer_regression(y, Gaussian(mu, s), n_bins=n_bins, binning=binning)
        part = finish_inference(stage, n_bins=n_bins, binning=binning)
        pd.testing.assert_frame_equal(part.table, whole.table, check_exact=True)
        assert (part.verdict, part.sentence) == (whole.verdict, whole.sentence)


def test_an_ensemble_stage_refuses_other_bins():
    rng = np.random.default_rng(2)
    mu, s = rng.normal(size=500), rng.uniform(0.5, 2.0, 500)
    ens = SampleSet(mu[:, None] + s[:, None] * rng.standard_normal((500, 10)))
    stage = inference_stage(mu + s * rng.standard_normal(500), ens, n_bins=15)
    assert not stage.bins_free
    with pytest.raises(ValueError, match="only the σ-bins it was made with"):
        finish_inference(stage, n_bins=16)


@pytest.mark.parametrize("n", [40, 1_000, 50_000])
@pytest.mark.parametrize("seed", [0, 5, (0, 12), (3, 12)])
def test_block_design_draws_what_block_ids_and_weights_draw(n, seed):
    rng = np.random.default_rng(seed if isinstance(seed, int) else list(seed))
    ids, g = sig.block_ids(n, 256, rng)
    weights = sig.block_bootstrap_weights(g, 300, rng)
    after = rng.random(4)
    for _ in range(2):  # computed, then memoised: the same, and the stream continues where it left off
        d = sig.block_design(n, 256, 300, seed)
        assert d.n_blocks == g and np.array_equal(d.ids, ids) and np.array_equal(d.weights, weights)
        assert np.array_equal(d.rng.random(4), after)
        assert not d.ids.flags.writeable and not d.weights.flags.writeable


@settings(max_examples=6, deadline=None)
@given(n=st.integers(30, 800), seed=st.integers(0, 2**31), boot_seed=st.integers(0, 50),
       bins=st.lists(st.tuples(st.integers(1, 45), st.sampled_from(["count", "width"])), min_size=1, max_size=2),
       ties=st.booleans())
def test_staged_rebins_equal_fresh_diagnoses_at_any_bins_and_seed(n, seed, boot_seed, bins, ties):
    """The staged path (equal-width bins from the σ order, the Levi table from its memoised design) against fresh
    diagnoses: the same report to the last bit, ties of σ on the bin edges included."""
    rng = np.random.default_rng(seed)
    mu, s = rng.normal(size=n), rng.lognormal(0.0, 0.7, n)
    if ties:
        s = np.round(s, 1) + 0.1
    pset = PredictionSet(task="regression", y=mu + 1.2 * s * rng.standard_t(4, n), dist=Gaussian(mu, s),
                         layout="gaussian")
    options = {"by_group": False, "n_resamples": 60, "n_simulations": 40, "seed": boot_seed}
    stages: dict = {}
    cc.diagnose(pset, stages=stages, **options)
    for n_bins, binning in bins:
        assert_same_report(cc.diagnose(pset, stages=stages, n_bins=n_bins, binning=binning, **options),
                           cc.diagnose(pset, n_bins=n_bins, binning=binning, **options))
