"""The verdict simulation study (``bench/verdict_study.py``): its data sets state the true law, and a tiny
configuration runs, resumes and writes its report.

The study's point is that targets come from the TRUE law; these tests check that the generators keep that
promise (exact-quantile brackets for integer targets, uniform ranks of exchangeable ensembles, calibrated class
probabilities), each with a binomial or χ² tolerance, so that a false alarm the study reports is the tool's.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

BENCH = Path(__file__).resolve().parents[1] / "bench" / "verdict_study.py"
_spec = importlib.util.spec_from_file_location("bench_verdict_study", BENCH)
study = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = study  # its dataclass looks itself up there
_spec.loader.exec_module(study)

N = 20_000
Z = 4.5  # binomial tolerance in standard errors (many levels × types are checked; a false failure is ~1e-5 each)


@pytest.mark.parametrize("name", ["quantile9", "quantile23", "quantile9_rounded", "quantile23_counts"])
def test_quantile_sets_state_the_true_quantiles(name):
    # P(y < q_τ) ≤ τ ≤ P(y ≤ q_τ) at every stated level (equalities for a continuous law)
    pset = study.draw(study.TYPES[name], "null", N, np.random.default_rng(1))
    y, q, tau = pset.y, pset.dist.values, pset.dist.levels
    below, at_or_below = (y[:, None] < q).mean(axis=0), (y[:, None] <= q).mean(axis=0)
    se = np.sqrt(tau * (1 - tau) / N)
    assert np.all(below <= tau + Z * se) and np.all(at_or_below >= tau - Z * se)
    if name.endswith(("rounded", "counts")):  # integer targets: ties with the stated quantiles are common
        assert np.all(y == np.round(y)) and (at_or_below - below).max() > 0.05
    else:
        assert np.allclose(below, at_or_below)


@pytest.mark.parametrize("name", ["ensemble8", "ensemble20_t3", "ensemble51_rain"])
def test_ensemble_members_are_exchangeable_with_the_target(name):
    # the target's rank among the M + 1 values (ties broken at random) is uniform on 0 … M (Hamill 2001)
    rng = np.random.default_rng(2)
    pset = study.draw(study.TYPES[name], "null", N, rng)
    s, y = pset.dist.samples, pset.y[:, None]
    rank = (s < y).sum(axis=1) + rng.integers(0, (s == y).sum(axis=1) + 1)
    m = s.shape[1]
    counts = np.bincount(rank, minlength=m + 1)
    assert stats.chisquare(counts).pvalue > 1e-4
    if name.endswith("rain"):
        assert 0.2 < (pset.y == 0).mean() < 0.8


def test_wrong_scale_is_seen_in_the_data_and_the_region_is_half_the_rows():
    rng = np.random.default_rng(3)
    t = study.TYPES["quantile9"]
    for scenario, inside in (("sigma0.8", slice(None)), ("region", slice(0, N // 2))):
        pset = study.draw(t, scenario, N, rng)
        cover = ((pset.y >= pset.dist.values[:, 0]) & (pset.y <= pset.dist.values[:, -1]))
        assert cover[inside].mean() < 0.8 - 0.05  # the 80% interval [q_0.1, q_0.9] is too narrow there
        if scenario == "region":
            assert abs(cover[N // 2:].mean() - 0.8) < Z * np.sqrt(0.16 / (N // 2))


@pytest.mark.parametrize("name", ["binary", "classes10"])
def test_labels_are_drawn_from_the_stated_probabilities(name):
    pset = study.draw(study.TYPES[name], "null", N, np.random.default_rng(4))
    p = pset.probs
    hit = p[np.arange(N), pset.labels]
    # E[p_{i, y_i}] = E[Σ_k p_ik²] when y_i ~ p_i
    expected, var = (p**2).sum(axis=1), (p**2).sum(axis=1) * (1 - (p**2).sum(axis=1))
    assert abs(hit.mean() - expected.mean()) < Z * np.sqrt(var.mean() / N) + 1e-3


def test_a_tiny_configuration_runs_resumes_and_reports(tmp_path):
    out = tmp_path / "study.csv"
    args = ["--types", "gaussian", "quantile9_rounded", "ensemble8_rain", "binary", "--sizes", "200", "--reps", "2",
            "--power-reps", "1", "--n-simulations", "200", "--out", str(out)]
    assert study.main(args) == 0
    df = study.read_results(out)
    # per type: 2 null + 1 per alternative (3 for regression, 1 for classification)
    assert len(df) == 3 * (2 + 3) + (2 + 1)
    assert set(df["verdict"]) <= {"calibrated", "miscalibrated"} and (df["cpu_s"] > 0).all()
    assert df["primary"].str.contains("=").all()
    study.main(args)  # resumes: nothing left to do
    assert len(study.read_results(out)) == len(df)
    first = study.run_one(("ensemble8_rain", "sigma0.8", 200, 0), 2025, 200)
    row = df[(df["type"] == "ensemble8_rain") & (df["scenario"] == "sigma0.8")].iloc[0]
    assert (first["verdict"], first["lead"], first["primary"]) == (row["verdict"], row["lead"], row["primary"])
    page = tmp_path / "page.md"
    page.write_text(f"# Study\n\nbefore\n\n{study.BEGIN}\nold\n{study.END}\n\nafter\n", encoding="utf-8")
    assert study.main(["--report", "--out", str(out), "--page", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Study\n\nbefore") and text.endswith("after\n") and "old" not in text
    assert "### False alarms under perfect calibration" in text and "| binary |" in text
    assert "σ × 0.8 everywhere" in text and "share of the detected miscalibrations" in text
    assert "**Commands:** `python bench/verdict_study.py --types gaussian" in text
    assert "CPU seconds per data set" in text and "Primary statistics whose own test rejects" in text
