"""Tests of the built-in examples (calib_core.data.examples)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calib_core import Gaussian, PredictionSet, QuantileSet, SampleSet
from calib_core.base.regression import norm_cdf
from calib_core.data import examples


@pytest.fixture(scope="module")
def diabetes() -> dict[str, PredictionSet]:
    return {layout: examples.diabetes_example(layout) for layout in ("gaussian", "quantile", "sample")}


def test_diabetes_example_structure(diabetes):
    g = diabetes["gaussian"]
    assert g.task == "regression" and g.layout == "gaussian" and isinstance(g.dist, Gaussian)
    assert g.n_rows == g.n_read == 442 and g.dropped.total == 0
    assert np.all(g.dist.std() > 0) and np.all(np.isfinite(g.dist.mean()))
    np.testing.assert_array_equal(g.row_number, np.arange(1, 443))
    assert set(g.split) == {"cal", "test"} and (g.split == "cal").sum() == 221
    assert list(g.features.columns)[:3] == ["x_age", "x_sex", "x_bmi"] and g.features.shape == (442, 10)
    assert g.model is None and g.models() == ["model"]
    assert isinstance(diabetes["quantile"].dist, QuantileSet)
    np.testing.assert_allclose(diabetes["quantile"].dist.levels, examples.DIABETES_LEVELS)
    assert isinstance(diabetes["sample"].dist, SampleSet) and diabetes["sample"].dist.n_samples == 50
    # all three layouts describe the same targets, split and (roughly) the same predictive means
    for p in diabetes.values():
        np.testing.assert_array_equal(p.y, g.y)
        np.testing.assert_array_equal(p.split, g.split)
    assert np.corrcoef(diabetes["quantile"].dist.mean(), g.dist.mean())[0, 1] > 0.99


def test_diabetes_model_is_informative_and_out_of_fold(diabetes):
    g = diabetes["gaussian"]
    # a real model: clearly better than predicting the mean (the target's std is ~77)
    rmse = np.sqrt(np.mean((g.y - g.dist.mean()) ** 2))
    assert rmse < 0.85 * g.y.std()
    # out-of-fold predictions are honest: the error is not the in-sample error of a boosted model
    assert rmse > 45
    # predicted σ varies across patients and ranks the errors (weakly) in the right direction
    assert stats.spearmanr(g.dist.std(), np.abs(g.y - g.dist.mean())).statistic > 0
    assert g.dist.std().std() / g.dist.std().mean() > 0.05


def test_diabetes_is_seeded_and_fast():
    t0 = time.process_time()  # CPU time: robust to other processes competing for the cores
    a = examples.diabetes_example("gaussian", seed=3)
    elapsed = time.process_time() - t0
    b = examples.diabetes_example("gaussian", seed=3)
    c = examples.diabetes_example("gaussian", seed=4)
    np.testing.assert_array_equal(a.dist.mean(), b.dist.mean())
    np.testing.assert_array_equal(a.dist.std(), b.dist.std())
    np.testing.assert_array_equal(a.split, b.split)
    assert not np.array_equal(a.dist.mean(), c.dist.mean())
    assert elapsed < 2.0  # typically ~0.6 s of CPU


def test_mixture_quantiles_invert_the_mixture_cdf():
    rng = np.random.default_rng(0)
    means = rng.normal(size=(50, 4)) * 3
    stds = rng.uniform(0.1, 2.0, size=(50, 4))
    levels = np.array([0.001, 0.05, 0.5, 0.9, 0.999])
    q = examples.mixture_quantiles(means, stds, levels)
    cdf = norm_cdf((q[:, :, None] - means[:, None, :]) / stds[:, None, :]).mean(axis=2)
    np.testing.assert_allclose(cdf, np.broadcast_to(levels, cdf.shape), atol=1e-9)
    assert np.all(np.diff(q, axis=1) > 0)
    # a one-component "mixture" is a Gaussian: quantiles μ + σ Φ⁻¹(τ)
    q1 = examples.mixture_quantiles(means[:, :1], stds[:, :1], levels)
    np.testing.assert_allclose(q1, means[:, :1] + stds[:, :1] * stats.norm.ppf(levels), atol=1e-9)


@pytest.mark.parametrize("layout", ["gaussian", "quantile", "sample"])
def test_diabetes_frame_matches_prediction_set(diabetes, layout):
    frame = examples.diabetes_frame(layout)
    p = diabetes[layout]
    assert len(frame) == 442 and frame.columns[0] == "y"
    np.testing.assert_array_equal(frame["y"], p.y)
    np.testing.assert_array_equal(frame["split"], p.split)
    if layout == "gaussian":
        np.testing.assert_allclose(frame["std"], p.dist.std())
    elif layout == "quantile":
        cols = [c for c in frame.columns if c.startswith("q")]
        assert cols[0] == "q0.025" and cols[-1] == "q0.975" and len(cols) == 9
        np.testing.assert_allclose(frame[cols].to_numpy(), p.dist.values)
    else:
        cols = [c for c in frame.columns if c.startswith("sample_")]
        assert cols == [f"sample_{j}" for j in range(50)]
        np.testing.assert_allclose(frame[cols].to_numpy(), p.dist.samples)
    assert [c for c in frame.columns if c.startswith("x_")] == list(p.features.columns)


def test_bad_arguments():
    with pytest.raises(ValueError, match="layout"):
        examples.diabetes_example("median")
    with pytest.raises(ValueError):
        examples.diabetes_example(n_members=1)
    with pytest.raises(ValueError):
        examples.levi_synthetic(10, cal_fraction=1.0)


def test_levi_synthetic_matches_the_paper_setup():
    n = 20_000
    p = examples.levi_synthetic(n, seed=0)
    assert p.n_rows == 2 * n and p.models() == list(examples.LEVI_MODELS)
    true, rand = (p.model == "true sigma"), (p.model == "random sigma")
    x = p.features["x"].to_numpy()
    np.testing.assert_array_equal(p.y[true], p.y[rand])
    np.testing.assert_array_equal(p.split[true], p.split[rand])
    assert x.min() >= 0.1 and x.max() <= 1.0
    np.testing.assert_allclose(p.dist.mean(), x)
    np.testing.assert_allclose(p.dist.std()[true], x[true])
    s = p.dist.std()[rand]
    assert s.min() >= 1 and s.max() <= 10 and abs(s.mean() - 5.5) < 0.1
    # y ~ N(x, x²): the true-σ z-scores are standard normal
    z = (p.y[true] - x[true]) / x[true]
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # random σ is unrelated to the error
    assert abs(stats.spearmanr(s, np.abs(p.y[rand] - x[rand])).statistic) < 0.05
    frame = examples.levi_frame(n, seed=0)
    assert list(frame.columns) == ["y", "mean", "std", "split", "model", "x"]
    np.testing.assert_allclose(frame["std"], p.dist.std())
    assert isinstance(frame, pd.DataFrame)


def test_levi_random_sigma_ence_like_the_paper():
    """Levi Fig. 2a reports ENCE = 84.3% for random σ ~ U[1, 10]; true σ gives ≈ 0 (up to noise).

    Analytically: RMSE_j ≈ √E[x²] = √(0.999/2.7) ≈ 0.608 in every bin and RMV_j ≈ σ_j, so
    ENCE ≈ 1 − 0.608·E[1/σ] = 1 − 0.608·ln(10)/9 ≈ 0.844.
    """
    from calib_core.metrics import regression as rm

    p = examples.levi_synthetic(20_000, seed=0)
    rand = p.model == "random sigma"
    true = ~rand
    assert rm.ence(p.y[rand], p.dist.take(rand)) == pytest.approx(0.843, abs=0.02)
    assert rm.ence(p.y[true], p.dist.take(true)) < 0.05


def test_plural_layout_names_are_accepted():
    p = examples.diabetes_example("quantiles", n_members=2, n_folds=2)
    assert p.layout == "quantile" and isinstance(p.dist, QuantileSet)


@pytest.mark.parametrize("layout", ["gaussian", "quantile", "sample"])
def test_diabetes_frame_round_trips_through_the_loader(diabetes, layout, tmp_path):
    import calib_core as cc

    if not hasattr(cc, "load_predictions"):
        pytest.skip("cc.load_predictions not available yet")
    path = tmp_path / f"diabetes_{layout}.csv"
    examples.diabetes_frame(layout).to_csv(path, index=False)
    loaded = cc.load_predictions(path)
    p = diabetes[layout]
    assert loaded.task == "regression" and loaded.layout == p.layout
    assert loaded.n_rows == 442 and loaded.dropped.total == 0
    np.testing.assert_allclose(loaded.y, p.y)
    np.testing.assert_array_equal(loaded.split, p.split)
    np.testing.assert_allclose(loaded.dist.mean(), p.dist.mean(), rtol=1e-12)
    np.testing.assert_allclose(loaded.dist.std(), p.dist.std(), rtol=1e-9)
    y = p.y
    np.testing.assert_allclose(loaded.dist.cdf(y), p.dist.cdf(y), atol=1e-12)
