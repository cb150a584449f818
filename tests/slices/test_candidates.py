"""The slice explorer's engine (calib_core.slices.candidates, regression.slices, classification.slices): slice
columns kept by
the readers, candidate slices, per-slice sums and statistics against brute force on the slice's rows, ranking by
evidence, truthfulness under the null and power against a planted slice (seeded, binomial tolerance)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import calib_core as cc
from calib_core import plots
from calib_core.base.predictions import InputError, PredictionSet
from calib_core.base.regression import Gaussian, SampleSet
from calib_core.base.significance import holm_adjust
from calib_core.data.reading import column_kinds
from calib_core.slices import classification as cslices
from calib_core.slices import regression as rslices
from calib_core.slices.candidates import (
    candidate_slices,
    encode_column,
    slice_binned_sums,
    slice_mask,
    slice_sums,
)


def regression_set(n: int, rng: np.random.Generator, *, n_numeric: int = 3, n_cat: int = 2,
                   planted: float | None = None, n_sites: int = 50) -> PredictionSet:
    """Calibrated Gaussian predictions with numeric and categorical columns; ``planted``: the target's spread in
    the slice ``site = s07`` (1/n_sites of the rows) is ``planted`` × σ."""
    cols = {f"x{i}": rng.normal(size=n) for i in range(n_numeric)}
    for i in range(n_cat):
        cols[f"c{i}"] = rng.choice(list("abcd"), n)
    cols["site"] = np.array([f"s{i:02d}" for i in range(n_sites)])[rng.integers(0, n_sites, n)]
    mu = rng.normal(size=n)
    sigma = np.exp(rng.normal(scale=0.3, size=n))
    scale = np.ones(n)
    if planted is not None:
        scale[cols["site"] == "s07"] = planted
    y = mu + scale * sigma * rng.normal(size=n)
    return PredictionSet(task="regression", y=y, dist=Gaussian(mu, sigma), slice_columns=pd.DataFrame(cols),
                         group=rng.choice(["g1", "g2"], n).astype(object))


# ------------------------------------------------------------------------------------------------ readers


def test_readers_keep_every_other_column_for_slices():
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"y": rng.normal(size=n), "mean": 0.0, "std": 1.0, "group": rng.choice(["a", "b"], n),
                          "x1": rng.normal(size=n), "site": rng.choice(["s1", "s2", "s3"], n),
                          "code": rng.integers(0, 3, n), "age": rng.normal(40, 10, n).round(1),
                          "Unnamed: 0": np.arange(n)})
    pset = cc.load_predictions(frame.to_csv(index=False).encode())
    assert list(pset.slice_columns.columns) == ["x1", "site", "code", "age"]  # not y/mean/std/group, not the index
    assert list(pset.features.columns) == ["x1"]  # the calibrators' features are unchanged
    assert column_kinds(pset.slice_columns) == {"x1": "numeric", "site": "categorical", "code": "categorical",
                                                "age": "numeric"}
    note = next(m for m in pset.messages if m.startswith("columns kept for slices"))
    assert "2 numeric (x1, age)" in note and "2 categorical (site, code)" in note
    assert any(m.startswith("columns not used") for m in pset.messages)  # the loader's old sentence stays
    np.testing.assert_array_equal(pset.take(np.arange(5)).slice_columns["age"], frame["age"][:5])
    np.testing.assert_array_equal(pset.take(frame["site"].to_numpy() == "s1").slice_columns["site"],
                                  frame["site"][frame["site"] == "s1"])

    cls = pd.DataFrame({"label": rng.integers(0, 2, n), "prob_0": 0.5, "prob_1": 0.5,
                        "region": rng.choice(["north", "south"], n), "income": rng.normal(size=n)})
    cset = cc.load_predictions(cls.to_csv(index=False).encode())
    assert column_kinds(cset.slice_columns) == {"region": "categorical", "income": "numeric"}


def test_reader_with_dropped_rows_keeps_slice_columns_aligned():
    frame = pd.DataFrame({"y": [1.0, np.nan, 3.0, 4.0], "mean": 0.0, "std": 1.0, "site": ["a", "b", "c", "d"]})
    pset = cc.load_predictions(frame.to_csv(index=False).encode())
    assert pset.slice_columns["site"].tolist() == ["a", "c", "d"]


# ------------------------------------------------------------------------------------------------ slices


def test_encode_column_bins_and_levels():
    x = np.arange(1000, dtype=float)
    codes, labels = encode_column(x, "numeric", n_bins=4, min_size=1)
    assert np.bincount(codes).tolist() == [250, 250, 250, 250] and len(labels) == 4
    assert labels[-1].endswith("]") and labels[0].endswith(")")
    codes, labels = encode_column(pd.Series(["a"] * 150 + ["b"] * 20 + [None] * 130), "categorical", min_size=100)
    assert labels == ["(missing)", "a"]
    assert (codes[150:170] == -1).all() and (codes[:150] == 1).all() and (codes[170:] == 0).all()


def test_candidate_slices_sizes_masks_and_sums_match_brute_force():
    rng = np.random.default_rng(1)
    pset = regression_set(3000, rng, n_sites=5)
    sset = candidate_slices(pset, n_bins=3, min_size=60)
    assert sset.n_slices > 30
    assert {"group", "site", "x0", "c0"} <= set(sset.columns)
    values = rng.normal(size=(3000, 2))
    inner = rng.integers(0, 4, 3000)
    sums = slice_sums(sset, values)
    binned = slice_binned_sums(sset, values, inner, 4)
    for s in range(sset.n_slices):
        mask = slice_mask(sset, s)
        assert mask.sum() == sset.size[s] >= 60
        np.testing.assert_allclose(sums[s], values[mask].sum(axis=0), rtol=1e-12, atol=1e-9)
        for b in range(4):
            np.testing.assert_allclose(binned[s, b], values[mask & (inner == b)].sum(axis=0), rtol=1e-12, atol=1e-9)
        conds = sset.conditions(s)
        assert " & ".join(c for c, _ in conds) in sset.label[s] or len(conds) == 2
    # every single-column level and no intersection equal to one of its parents
    assert len(set(sset.label)) == sset.n_slices
    masks = {sset.label[s]: slice_mask(sset, s) for s in range(sset.n_slices)}
    for label, mask in masks.items():
        if " & " in label:
            a, b = label.split(" & ")
            assert mask.sum() < masks[a].sum() and mask.sum() < masks[b].sum()


def test_unknown_slice_column_is_named():
    pset = regression_set(500, np.random.default_rng(2))
    with pytest.raises(InputError, match="no slice column 'nope'.*choose among"):
        candidate_slices(pset, columns=["nope"])


def test_regression_statistics_equal_direct_computation_on_the_slice_rows():
    rng = np.random.default_rng(3)
    pset = regression_set(4000, rng, planted=1.3, n_sites=10)
    ranking, sset = rslices.slice_ranking(pset, n_bins=3, min_size=200)
    u = pset.dist.pit(pset.y)
    z = special.ndtri(u)
    sigma = pset.dist.std()
    edges = np.quantile(sigma, [0.2, 0.4, 0.6, 0.8])
    sbin = np.searchsorted(edges, sigma, side="right")
    for _, row in ranking.iterrows():
        m = slice_mask(sset, int(row["index"]))
        assert row["n"] == m.sum()
        np.testing.assert_allclose(row["mean z"], z[m].mean(), rtol=1e-9)
        np.testing.assert_allclose(row["std z"], z[m].std(ddof=1), rtol=1e-9)
        np.testing.assert_allclose(row["coverage 90%"], ((u[m] >= 0.05) & (u[m] <= 0.95)).mean())
        counts = np.bincount(np.minimum((u[m] * 10).astype(int), 9), minlength=10)
        np.testing.assert_allclose(row["PIT χ²"], stats.chisquare(counts).statistic, rtol=1e-9)
        ence = [abs(1 - np.sqrt(np.mean((sigma[m & (sbin == b)] * z[m & (sbin == b)]) ** 2)
                                / np.mean(sigma[m & (sbin == b)] ** 2))) for b in range(5) if (m & (sbin == b)).any()]
        np.testing.assert_allclose(row["ENCE"], np.mean(ence), rtol=1e-9)
        np.testing.assert_allclose(row["p std z"], min(1.0, 2 * min(
            stats.chi2.cdf((m.sum() - 1) * z[m].var(ddof=1), m.sum() - 1),
            stats.chi2.sf((m.sum() - 1) * z[m].var(ddof=1), m.sum() - 1))), rtol=1e-6)
        np.testing.assert_allclose(row["p mean z"], 2 * stats.norm.sf(abs(z[m].mean()) * np.sqrt(m.sum())),
                                   rtol=1e-6)
        # PIT: the most extreme decile count against Binomial(n, 1/10), exact, Bonferroni over the 10 deciles
        two = [min(1.0, 2 * min(stats.binom.cdf(c, m.sum(), 0.1), stats.binom.sf(c - 1, m.sum(), 0.1)))
               for c in counts]
        np.testing.assert_allclose(row["p PIT"], min(1.0, 10 * min(two)), rtol=1e-6)
    assert ranking["evidence"].is_monotonic_decreasing
    assert ranking.loc[0, "slice"] == "site = s07" and ranking.loc[0, "flagged"] and ranking.loc[0, "worst"] == "std z"
    # Holm over the slices searched, of the Bonferroni-combined p
    p = np.minimum(1.0, 5 * ranking[["p PIT", "p coverage", "p mean z", "p std z", "p ENCE"]].min(axis=1))
    np.testing.assert_allclose(ranking["p"], p, rtol=1e-6)
    np.testing.assert_allclose(ranking["adjusted p"], holm_adjust(p), rtol=1e-6)


def test_ranking_is_by_evidence_not_raw_deviation():
    """A large slice a little off outranks a tiny slice further off: the score accounts for n."""
    rng = np.random.default_rng(4)
    n = 20_000
    kind = np.array(["big"] * 5000 + ["tiny"] * 120 + ["rest"] * (n - 5120), dtype=object)
    mu, sigma = np.zeros(n), np.ones(n)
    scale = np.select([kind == "big", kind == "tiny"], [1.1, 1.2], 1.0)
    e = rng.normal(size=n)
    for k in ("big", "tiny"):  # exact spreads, so the raw deviations are the ones intended
        m = kind == k
        e[m] = (e[m] - e[m].mean()) / e[m].std(ddof=1)
    pset = PredictionSet(task="regression", y=mu + scale * e, dist=Gaussian(mu, sigma),
                         slice_columns=pd.DataFrame({"kind": kind}))
    ranking, _ = rslices.slice_ranking(pset, min_size=100, pairs=False)
    by = ranking.set_index("slice")
    assert abs(by.loc["kind = tiny", "std z"] - 1) > abs(by.loc["kind = big", "std z"] - 1)
    assert by.loc["kind = big", "rank"] < by.loc["kind = tiny", "rank"]


def test_ensemble_predictions_get_a_randomised_pit():
    rng = np.random.default_rng(5)
    n = 3000
    members = rng.normal(size=(n, 20))
    pset = PredictionSet(task="regression", y=rng.normal(size=n), dist=SampleSet(members),
                         slice_columns=pd.DataFrame({"c": rng.choice(list("ab"), n)}))
    ranking, _ = rslices.slice_ranking(pset, min_size=100)
    assert not ranking["flagged"].any()
    assert ranking["PIT χ²"].notna().all()


def test_classification_statistics_equal_direct_computation():
    rng = np.random.default_rng(6)
    n = 5000
    f = rng.uniform(0.05, 0.95, n)
    region = rng.choice(["north", "south", "east"], n)
    y = (rng.random(n) < np.where(region == "east", np.clip(f * 0.8, 0, 1), f)).astype(int)
    probs = np.column_stack([1 - f, f])
    pset = PredictionSet(task="classification", labels=y, probs=probs, classes=["0", "1"],
                         slice_columns=pd.DataFrame({"region": region, "x": rng.normal(size=n)}))
    ranking, sset = cslices.slice_ranking(pset, n_bins=3, min_size=100)
    for _, row in ranking.iterrows():
        m = slice_mask(sset, int(row["index"]))
        b = np.minimum((f[m] * 10).astype(int), 9)
        ece = sum(abs(y[m][b == k].sum() - f[m][b == k].sum()) for k in range(10)) / m.sum()
        np.testing.assert_allclose(row["ECE"], ece, rtol=1e-9)
        np.testing.assert_allclose(row["calibration ratio"], f[m].sum() / y[m].sum(), rtol=1e-9)
        k, nn, fbar = y[m].sum(), m.sum(), f[m].mean()
        np.testing.assert_allclose(row["p ratio"], min(1, 2 * min(stats.binom.cdf(k, nn, fbar),
                                                                  stats.binom.sf(k - 1, nn, fbar))), rtol=1e-6)
    assert ranking.loc[0, "slice"] == "region = east" and ranking.loc[0, "calibration ratio"] > 1.1


def test_funnel_limits_hold_their_level_and_figure_escapes_names():
    rng = np.random.default_rng(7)
    pset = regression_set(4000, rng, n_sites=4)
    ranking, _ = rslices.slice_ranking(pset, n_bins=3, min_size=200)
    for stat in rslices.FUNNEL_STATISTICS:
        points, limits = rslices.funnel_table(ranking, stat)
        assert (limits["lower adjusted"] <= limits["lower 95%"]).all()
        assert (limits["upper 95%"] <= limits["upper adjusted"]).all()
    # mean z of calibrated slices of size n leaves the 95% limits 5% of the time (exact N(0, 1/n))
    n = 400
    means = rng.normal(size=(4000, n)).mean(axis=1)
    _, lim = rslices.funnel_table(pd.DataFrame({"slice": ["a", "b"], "n": [n, n + 1], "mean z": [0.0, 0.0],
                                                "flagged": [False, False], "rank": [1, 2], "index": [0, 1]}),
                                  "mean z")
    row = lim.iloc[0]
    out = ((means < row["lower 95%"]) | (means > row["upper 95%"])).mean()
    assert abs(out - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 4000)
    hostile = '<a href="http://127.0.0.1:9/x">m</a><b>B</b>%{meta}'
    points = pd.DataFrame({"slice": [f"site = {hostile}"], "n": [300], "value": [1.2], "flagged": [True],
                           "rank": [1], "index": [0]})
    fig = plots.funnel_figure(points, lim, statistic="std z", highlight=0)
    text = json.dumps(fig.to_plotly_json(), default=str)
    assert "<a href" not in text and "%{meta}" not in text and "&lt;a href" in text


def _null_and_planted(n_sets: int, n: int, planted: float | None, seed: int) -> list[pd.DataFrame]:
    out = []
    for k in range(n_sets):
        rng = np.random.default_rng([seed, k])
        pset = regression_set(n, rng, n_numeric=6, n_cat=3, planted=planted)
        out.append(rslices.slice_ranking(pset, min_size=100, seed=k)[0])
    return out


def test_null_flag_rate_small():
    """No slice effect: a slice is flagged in at most 5% of data sets (Holm); 30 sets, binomial tolerance."""
    rankings = _null_and_planted(30, 10_000, None, 11)
    flagged = sum(bool(r["flagged"].any()) for r in rankings)
    assert flagged <= stats.binom.ppf(0.999, 30, 0.05), flagged  # ≤ 5 of 30 (P ≥ 0.999 when the rate is 5%)


def test_planted_slice_ranks_first_small():
    """One slice of 2% of the rows with σ 25% too small ranks first in ≥ 90% of data sets (20 sets)."""
    rankings = _null_and_planted(20, 10_000, 1.25, 12)
    first = sum(r.loc[0, "slice"] == "site = s07" for r in rankings)
    assert first >= stats.binom.ppf(0.001, 20, 0.9), first  # ≥ 15 of 20 (P ≥ 0.999 when the rate is 90%)
