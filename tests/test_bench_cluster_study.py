"""The cluster study (``bench/cluster_study.py``): its data sets are calibrated with the dependence they promise,
and a tiny configuration runs, resumes and writes its report.

The study's false alarms are the tool's only if the generator keeps its promise: every row's target comes from the
stated law (the marginal law N(c, s²)), while rows of one date share a surprise (correlation ½) and the date
effects of ``ar1`` follow an AR(1) with ρ = 0.7.  Each property is checked with a binomial or normal tolerance.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special

BENCH = Path(__file__).resolve().parents[1] / "bench" / "cluster_study.py"
_spec = importlib.util.spec_from_file_location("bench_cluster_study", BENCH)
study = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = study
_spec.loader.exec_module(study)

Z = 4.5  # tolerance in standard errors (a false failure is ~1e-5 per check)


@pytest.mark.parametrize("dependence", ["date", "ar1loc", "ar1", "none"])
def test_every_row_is_calibrated_and_rows_of_a_date_share_half_their_error(dependence):
    # pool 40 independent data sets: the PIT of N(c, s²) is uniform (s.e. from the data sets' own shares, which
    # carry the dates' dependence); per date the standardised errors correlate ½ (0 without a date effect)
    rng = np.random.default_rng(5)
    shares, pairs = [], []
    taus = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    for _ in range(40):
        ps = study.draw("gaussian", dependence, "calibrated", 50, rng)
        e = (ps.y - ps.dist.mean()) / np.sqrt(ps.dist.var())
        shares.append((special.ndtr(e)[:, None] <= taus).mean(axis=0))
        grid = e.reshape(50, study.LOCATIONS)  # date-major rows
        assert (ps.slice_columns["date"].to_numpy().reshape(50, -1) == np.arange(50)[:, None]).all()
        pairs.append((grid[:, 0] * grid[:, 1]).mean())
    shares, pairs = np.array(shares), np.array(pairs)
    se = shares.std(axis=0, ddof=1) / np.sqrt(len(shares))
    assert np.all(np.abs(shares.mean(axis=0) - taus) < Z * se)
    expected = 0.0 if dependence == "none" else 0.5
    assert abs(pairs.mean() - expected) < Z * pairs.std(ddof=1) / np.sqrt(pairs.size)


def test_each_location_errors_are_an_ar1_in_time():
    """``ar1loc``: one location's errors on consecutive dates correlate ½·0.7 (its AR(1) carries half the variance),
    two dates apart ½·0.49; locations of one date still share ½."""
    rng = np.random.default_rng(8)
    lag1, lag2 = [], []
    for _ in range(40):
        ps = study.draw("gaussian", "ar1loc", "calibrated", 50, rng)
        grid = ((ps.y - ps.dist.mean()) / np.sqrt(ps.dist.var())).reshape(50, study.LOCATIONS)
        lag1.append((grid[1:] * grid[:-1]).mean())
        lag2.append((grid[2:] * grid[:-2]).mean())
    for got, want in ((np.array(lag1), 0.35), (np.array(lag2), 0.245)):
        assert abs(got.mean() - want) < Z * got.std(ddof=1) / np.sqrt(got.size)


def test_ar1_date_effects_have_unit_variance_and_lag_correlations_rho_to_the_k():
    a = np.array([study.date_effect("ar1", 60, np.random.default_rng(i)) for i in range(4000)])
    se_var = np.sqrt(2 / 4000)
    assert np.all(np.abs(a.var(axis=0)[[0, 1, 30, 59]] - 1) < Z * se_var)
    for k in (1, 3):
        r = np.corrcoef(a[:, 30], a[:, 30 + k])[0, 1]
        assert abs(r - study.RHO**k) < Z * (1 - study.RHO ** (2 * k)) / np.sqrt(4000)


def test_the_quantile_sets_state_the_true_quantiles_and_sigma08_is_too_narrow():
    rng = np.random.default_rng(6)
    for forecast, covered in (("calibrated", 0.98), ("sigma0.8", None)):
        below = np.array([(ps.y[:, None] < ps.dist.values).mean(axis=0)
                          for ps in (study.draw("quantile23", "ar1", forecast, 50, rng) for _ in range(30))])
        b = below.mean(axis=0)
        if covered is not None:  # s.e. from the 30 independent data sets' own shares (they carry the dependence)
            se = below.std(axis=0, ddof=1) / np.sqrt(len(below))
            assert np.all(np.abs(b - study.TAU23) < Z * se)
        else:
            inside = b[-1] - b[0]  # the stated 98% interval holds far fewer targets
            assert inside < 0.98 - 0.03


def test_a_tiny_configuration_runs_resumes_and_reports(tmp_path):
    out = tmp_path / "study.csv"
    args = ["--dates", "20", "--reps", "2", "--power-reps", "1", "--n-resamples", "50", "--n-simulations", "100",
            "--out", str(out), "--dependence", "ar1"]
    assert study.main(args) == 0
    df = study.read_results(out)
    methods = list(study.METHODS) if study.has_cluster_option() else ["iid"]
    assert len(df) == 2 * (2 + 1) * len(methods)  # types × (2 calibrated + 1 σ × 0.8) × methods
    assert set(df["verdict"]) <= {"calibrated", "miscalibrated"} and (df["cpu_s"] > 0).all()
    if study.has_cluster_option():  # each method's report states its resampling
        assert set(df["clustering"]) == {"independent rows", "whole date clusters resampled (20 clusters)",
                                         "moving blocks of 3 consecutive date values resampled (20 values)"}
    study.main(args)  # resumes: nothing left to do
    assert len(study.read_results(out)) == len(df)
    again = study.run_one(("gaussian", "ar1", "sigma0.8", 20, 0), ["iid"], 2029, 50, 100)[0]
    row = df[(df["type"] == "gaussian") & (df["forecast"] == "sigma0.8") & (df["method"] == "iid")].iloc[0]
    assert (again["verdict"], again["lead"]) == (row["verdict"], row["lead"])
    page = tmp_path / "page.md"
    page.write_text(f"# Study\n\nbefore\n\n{study.BEGIN}\nold\n{study.END}\n\nafter\n", encoding="utf-8")
    assert study.main(["--report", "--out", str(out), "--page", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Study\n\nbefore") and text.endswith("after\n") and "old" not in text
    assert "| gaussian | date effect that is itself an AR(1), ρ = 0.7 | 20 | i.i.d. rows |" in text
    assert "**Commands:** `python bench/cluster_study.py --dates 20" in text and "CPU in total" in text
