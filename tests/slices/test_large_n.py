"""The slice explorer at large n: every evidence a finite number (p-values computed in log space from their exact
tails), the planted slice first, ties broken by effect size — in memory, from a merged slice summary and in the time
view.  Seeded simulations, targets drawn from the TRUE law (never from the tool's fitted law); the default run takes
a few data sets of 10⁵ rows, the ``slow`` study 60 data sets of 10⁵ rows and 12 of 10⁶ per scenario."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from calib_core.data.classification import parse_classification_frame
from calib_core.data.regression import parse_regression_frame
from calib_core.scale import slices as ss
from calib_core.scale import slices_ranking as sr
from calib_core.slices import classification as cls_slices
from calib_core.slices import regression as reg_slices
from calib_core.slices.candidates import rank_slices
from calib_core.slices.time import window_table

REGIONS = ["north", "south", "east", "west"]
STORES = ["mall", "street", "outlet"]
PLANTED = "region = north"


def regression_frame(n: int, seed: int, kind: str) -> pd.DataFrame:
    """Gaussian predictions; slice columns region (4 values, north 20%), store_type (3 values, mall the largest) and
    a numeric feature x (binned by the explorer).  Calibrated except in north: ``"scale"`` — the stated σ is 1.5
    times too small (true sd 1.5σ); ``"shift"`` — the target is shifted by 0.3σ."""
    rng = np.random.default_rng(seed)
    region = rng.choice(REGIONS, n, p=[0.2, 0.3, 0.25, 0.25])
    store = rng.choice(STORES, n, p=[0.5, 0.3, 0.2])
    x = rng.gamma(2.0, size=n)
    mean = rng.normal(size=n) + 0.3 * x
    std = np.exp(0.3 * rng.normal(size=n))
    north = region == "north"
    eps = rng.normal(size=n)
    y = mean + std * (eps * np.where(north, 1.5, 1.0) if kind == "scale" else eps + np.where(north, 0.3, 0.0))
    return pd.DataFrame({"y": y, "mean": mean, "std": std, "region": region, "store_type": store, "x": x})


def classification_frame(n: int, seed: int) -> pd.DataFrame:
    """Binary probabilities, calibrated except in north, where they are over-confident: the true probability is
    logistic(logit(p)/1.5)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(REGIONS, n, p=[0.2, 0.3, 0.25, 0.25])
    store = rng.choice(STORES, n, p=[0.5, 0.3, 0.2])
    p = rng.uniform(0.02, 0.98, n)
    logit = np.log(p / (1.0 - p))
    truth = np.where(region == "north", 1.0 / (1.0 + np.exp(-logit / 1.5)), p)
    return pd.DataFrame({"label": (rng.random(n) < truth).astype(int), "p_0": 1.0 - p, "p_1": p, "region": region,
                         "store_type": store, "x": rng.normal(size=n)})


def _ranking(n: int, seed: int, kind: str) -> pd.DataFrame:
    if kind == "classification":
        return cls_slices.slice_ranking(parse_classification_frame(classification_frame(n, seed), "c.csv"))[0]
    return reg_slices.slice_ranking(parse_regression_frame(regression_frame(n, seed, kind), "r.csv"))[0]


def _first_rate(n: int, seeds: range, kind: str) -> tuple[int, int]:
    hits = sum(_ranking(n, s, kind).iloc[0]["slice"] == PLANTED for s in seeds)
    return hits, len(seeds)


@pytest.mark.parametrize("kind", ["scale", "shift", "classification"])
def test_planted_slice_is_first_with_finite_distinct_evidence_at_1e5_rows(kind):
    """On main the χ² / binomial log tails underflowed at 10⁵ rows: every flagged slice had evidence "Infinity" and
    the list fell back to slice size (store_type = mall first, the planted slice third)."""
    for seed in (0, 1):
        ranking = _ranking(100_000, seed, kind)
        assert ranking.iloc[0]["slice"] == PLANTED and ranking.iloc[0]["flagged"]
        ev = ranking["evidence"].to_numpy(float)
        assert np.isfinite(ev).all() and (np.diff(ev) <= 0).all()
        strong = ev[ev > 5]
        assert strong.size >= 3 and np.unique(strong).size == strong.size  # no two strong slices tie
        assert ranking.iloc[0]["evidence"] > 1.3 * ranking.iloc[1]["evidence"]


def test_scale_evidence_is_of_the_order_the_chi2_law_gives():
    """North of 10⁵ rows with errors 1.5σ: (n − 1)s² ≈ 2.25(n − 1) against χ²_{n−1}, −log₁₀ p ≈ a(λ − 1 − ln λ)/ln 10
    with a = (n − 1)/2, λ = s²: about 1,900 for the ~20,000 rows of north."""
    ranking = _ranking(100_000, 0, "scale")
    top = ranking.iloc[0]
    n, s2 = float(top["n"]), float(top["std z"]) ** 2
    approx = (n - 1) / 2 * (s2 - 1 - np.log(s2)) / np.log(10)
    assert top["worst"] == "std z" and top["evidence"] == pytest.approx(approx, rel=0.01)


def test_ties_in_evidence_are_broken_by_effect_not_size():
    table = pd.DataFrame({"slice": ["big, small effect", "small, large effect", "weak"], "n": [50_000, 500, 900]})
    logp = np.array([[-2000.0, -1.0], [-2000.0, -3.0], [-1.0, -0.5]])
    effect = np.array([[0.05, 0.0], [0.9, 0.1], [0.3, 0.2]])
    out = rank_slices(table, np.exp(logp), logp, effect=effect)
    assert out["slice"].tolist() == ["small, large effect", "big, small effect", "weak"]
    assert out["effect"].tolist() == [0.9, 0.05, 0.3]
    without = rank_slices(table, np.exp(logp), logp)  # no effect sizes: size decides, as before
    assert without["slice"].tolist()[:2] == ["big, small effect", "small, large effect"]


def test_calibrated_slices_tie_at_zero_evidence_and_are_ordered_by_effect():
    ranking = _ranking(20_000, 3, "shift")
    zero = ranking[ranking["evidence"] == 0.0]
    assert len(zero) >= 2
    assert (np.diff(zero["effect"].to_numpy(float)) <= 0).all()


def test_the_merged_summary_ranks_as_memory_at_1e5_rows():
    """The large-data path reads the same sums and calls the same ``ranking_from_sums``: identical finite
    evidence, same order, the planted slice first."""
    for kind in ("scale", "classification"):
        pset = (parse_classification_frame(classification_frame(100_000, 5), "c.csv") if kind == "classification"
                else parse_regression_frame(regression_frame(100_000, 5, "scale"), "r.csv"))
        mem = (cls_slices.slice_ranking(pset)[0] if kind == "classification" else reg_slices.slice_ranking(pset)[0])
        spec = ss.slice_spec(pset)
        parts = [ss.summarize_slices(pset.take(np.arange(a, min(a + 40_000, pset.n_rows))), spec)
                 for a in range(0, pset.n_rows, 40_000)]
        summ = sr.summary_ranking(ss.merge_all(parts))
        assert summ["slice"].tolist() == mem["slice"].tolist() and summ.iloc[0]["slice"] == PLANTED
        assert np.isfinite(summ["evidence"]).all()
        np.testing.assert_allclose(summ["evidence"], mem["evidence"], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(summ["effect"], mem["effect"], rtol=1e-9, atol=1e-12)


def test_time_windows_carry_finite_evidence_from_the_same_tails():
    """One long window with σ 1.5 times too small has evidence in the thousands (finite); calibrated windows' p-values
    are valid: at most ~5% of them below 0.05 (binomial tolerance)."""
    rng = np.random.default_rng(11)
    n = 200_000
    t = np.sort(rng.uniform(0.0, 100.0, n))
    bad = t >= 90.0  # the last tenth: 20,000 rows
    mean, std = rng.normal(size=n), np.exp(0.2 * rng.normal(size=n))
    y = mean + std * rng.normal(size=n) * np.where(bad, 1.5, 1.0)
    pset = parse_regression_frame(pd.DataFrame({"y": y, "mean": mean, "std": std, "time": t}), "t.csv")
    table, _ = window_table(pset, window=10)
    std_rows = table[table["metric"] == "z_std"]
    assert np.isfinite(table["evidence"]).all()
    assert std_rows["evidence"].iloc[-1] > 1000 and std_rows["evidence"].iloc[:-1].max() < 6
    small = window_table(pset.take(np.flatnonzero(~bad)), window=60)[0]
    p = 10.0 ** -small["evidence"].to_numpy(float)
    assert (p < 0.05).sum() <= stats.binom.ppf(0.999, p.size, 0.05)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["scale", "shift", "classification"])
def test_planted_slice_is_first_in_at_least_90_percent_of_data_sets(kind):
    """The study: 60 data sets of 10⁵ rows and 12 of 10⁶ rows per scenario (measured 60/60 and 12/12 in each)."""
    hits, total = _first_rate(100_000, range(100, 160), kind)
    assert hits / total >= 0.9, (kind, hits, total)
    hits, total = _first_rate(1_000_000, range(200, 212), kind)
    assert hits / total >= 0.9, (kind, hits, total)


def _classification_null_flags(n_sets: int, seed: int) -> int:
    """Data sets (3,000 rows, probabilities from Beta(0.3, 0.3): many rows near 0 and 1, few per extreme bin) with a
    flagged slice, outcomes drawn from the stated probabilities (perfect calibration)."""
    flags = 0
    for k in range(n_sets):
        rng = np.random.default_rng([seed, k])
        n = 3_000
        p = np.clip(rng.beta(0.3, 0.3, n), 1e-4, 1 - 1e-4)
        frame = pd.DataFrame({"label": (rng.random(n) < p).astype(int), "p_0": 1 - p, "p_1": p,
                              "region": rng.choice(list("abcd"), n), "store": rng.choice(list("xyz"), n),
                              "x": rng.normal(size=n)})
        flags += bool(cls_slices.slice_ranking(parse_classification_frame(frame, "c.csv"))[0]["flagged"].any())
    return flags


def test_classification_null_flag_rate_small():
    """ECE's bins tested by exact binomial tails (conservative, Hoeffding 1956) keep the family-wise level."""
    assert _classification_null_flags(60, 21) <= stats.binom.ppf(0.999, 60, 0.05)


@pytest.mark.slow
def test_classification_null_flag_rate_study():
    """200 calibrated data sets: at most 5% with a flagged slice (measured 0/200 with these seeds; 2/200 and 3/200
    in two other seeded runs of 200, probabilities from Beta(0.3, 0.3) and uniform: conservative, as Holm over
    slices, Bonferroni over bins and the binomial bound of a Poisson-binomial count each are)."""
    assert _classification_null_flags(200, 22) <= stats.binom.ppf(0.999, 200, 0.05)


def test_a_slice_whose_pits_are_all_clipped_alike_has_finite_evidence():
    """Targets far outside every predictive distribution of a slice: each PIT is 0, every z is clipped to the same
    value and s² = 0; the χ² lower tail at 0 is exactly 0, so the statistic is floored at 10⁻³⁰⁰ — still the
    strongest evidence, but a number."""
    from calib_core.slices.candidates import candidate_slices

    rng = np.random.default_rng(3)
    n = 4_000
    frame = regression_frame(n, 3, "shift")
    far = frame["region"].to_numpy() == "west"
    frame.loc[far, "y"] = frame.loc[far, "mean"] - 1e6
    pset = parse_regression_frame(frame, "r.csv")
    u, sigma = reg_slices.slice_row_statistics(pset)
    assert (u[far] < 1e-12).all()
    ranking = reg_slices.rank_row_statistics(u, sigma, candidate_slices(pset), seed=int(rng.integers(9)))
    assert np.isfinite(ranking["evidence"]).all() and ranking.iloc[0]["slice"] == "region = west"
