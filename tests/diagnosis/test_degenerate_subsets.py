"""Degenerate subsets do not sink the report.

A (model, group) whose rows have no usable z = (y − mean)/σ — an ensemble whose members are all equal (a dry-weather
group of a rain forecast), all-equal quantiles, y − mean overflowing, σ = 1e-300 — gets a note naming the subset and
the reason, its undefined metrics are NaN with the reason in their ``note``, and every other model, group and the
all-rows diagrams are produced exactly as without it.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import calib_core as cc
from calib_core.diagnosis.regression import diagnose_regression
from calib_core.metrics import regression as rm

ALL = cc.ALL
FAST = {"n_resamples": 40, "n_simulations": 40, "seed": 0}
N_DRY, N = 37, 120
Z_STATS = ["reliability_score", "z_mean", "z_std", "z_skewness", "z_excess_kurtosis"]


def _load(frame: pd.DataFrame, name: str) -> cc.PredictionSet:
    return cc.load_predictions(io.BytesIO(frame.to_csv(index=False).encode()), source=name)


def _rain(seed: int = 0, *, y_dry: float = 0.0) -> pd.DataFrame:
    """A 5-member rain ensemble: the first 37 rows (group 'dry') forecast 0 with every member."""
    rng = np.random.default_rng(seed)
    centre = rng.gamma(2.0, 2.0, N)
    members = centre[:, None] + rng.normal(size=(N, 5))
    y = centre + rng.normal(size=N)
    members[:N_DRY] = 0.0
    y[:N_DRY] = y_dry
    group = np.where(np.arange(N) < N_DRY, "dry", "wet")
    return pd.DataFrame({"y": y, "group": group, **{f"member_{i}": members[:, i] for i in range(5)}})


def _gaussian(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=N)
    std = rng.uniform(0.5, 2.0, N)
    return pd.DataFrame({"y": mean + std * rng.normal(size=N), "mean": mean, "std": std,
                         "group": np.where(np.arange(N) < N_DRY, "dry", "wet")})


def _notes(report: cc.Report, group: str) -> list[str]:
    where = "all rows" if group == ALL else f"group {group!r}"
    return [n for n in report.options["notes"] if n.startswith(f"model 'model', {where}:")]


def _same_as_alone(report: cc.Report, pset: cc.PredictionSet, group: str) -> None:
    """The metrics and diagrams of ``group`` equal those of diagnosing its rows alone: the degenerate group beside it
    changed nothing."""
    alone = cc.diagnose(pset.take(pset.group == group), by_group=False, **FAST)
    mine = report.table(group=group)
    theirs = alone.table(group=ALL)
    assert list(mine.index) == list(theirs.index)
    assert_allclose(mine["value"].to_numpy(float), theirs["value"].to_numpy(float), rtol=1e-12, equal_nan=True)
    assert report.verdict(group=group)["sentence"] == alone.verdict(group=ALL)["sentence"]
    for name, table in alone.diagrams[("model", ALL)].items():
        pd.testing.assert_frame_equal(report.diagrams[("model", group)][name], table)


@pytest.mark.parametrize("y_dry", [0.0, 0.3], ids=["y-equals-members", "y-off-members"])
def test_zero_spread_ensemble_group_is_noted_and_the_rest_is_produced(y_dry):
    pset = _load(_rain(y_dry=y_dry), "rain.csv")
    report = cc.diagnose(pset, **FAST)  # ZeroDivisionError in the reliability score before
    assert set(report.groups) == {ALL, "dry", "wet"}
    assert {("model", g) for g in (ALL, "dry", "wet")} <= set(report.diagrams)
    (dry,) = _notes(report, "dry")
    assert dry.startswith("model 'model', group 'dry': all 37 ensembles have zero spread (every member equal), so "
                          "z = (y − mean)/σ is undefined on every row")
    table = report.table(group="dry")
    undefined = table[~np.isfinite(table["value"].to_numpy(float))]
    assert set(Z_STATS + ["ence", "cv"]) <= set(undefined.index)
    assert undefined["note"].str.contains("all 37 ensembles have zero spread").all()
    assert f"{len(undefined)} undefined (NaN) of its {len(table)} metrics" in dry
    # what needs no z is still there: the PIT of an ensemble (randomised rank), coverage, CRPS
    assert np.isfinite(table.loc[["crps", "max_calibration_deviation", "coverage_90"], "value"]).all()
    assert report.verdict(group="dry")["verdict"] in ("calibrated", "miscalibrated")
    # all rows: the 37 rows are left out of the statistics of z, and the note says how many remain
    (whole,) = _notes(report, ALL)
    assert "37 of 120 ensembles have zero spread (every member equal): z = (y − mean)/σ is undefined there, and the " \
           "statistics of z use the other 83 rows" in whole
    assert np.isfinite(report.table(group=ALL).loc[Z_STATS, "value"]).all()
    _same_as_alone(report, pset, "wet")


def test_all_equal_quantiles_group_and_the_whole_set():
    frame = _gaussian(1)
    q = {f"q{p}": frame["mean"] + frame["std"] * z for p, z in (("0.1", -1.2816), ("0.5", 0.0), ("0.9", 1.2816))}
    quant = pd.DataFrame({"y": frame["y"], "group": frame["group"], **q})
    quant.loc[: N_DRY - 1, list(q)] = 2.0
    pset = _load(quant, "quantiles.csv")
    # the whole set failed with a broadcast error in the quantile null's moments of z before
    report = cc.diagnose(pset, **FAST)
    assert "all 37 quantile sets have all quantiles equal (zero spread)" in _notes(report, "dry")[0]
    assert "37 of 120 quantile sets have all quantiles equal" in _notes(report, ALL)[0]
    # z of all rows = z of the 83 rows with a spread
    wet = pset.dist.take(pset.group == "wet")
    z = (pset.y[pset.group == "wet"] - wet.mean()) / wet.std()
    whole = report.table(group=ALL)
    assert_allclose(whole.loc["z_mean", "value"], z.mean(), rtol=1e-12)
    assert_allclose(whole.loc["z_std", "value"], z.std(), rtol=1e-12)
    # z needs the law interpolated between the stated quantiles: descriptive for quantile sets, which are tested at
    # their stated levels (every row counts there, the zero-spread ones too)
    assert np.isnan(whole.loc["z_mean", "p_value"])
    assert np.isfinite(whole.loc[["pit_chi2", "max_level_deviation"], "p_value"].to_numpy(float)).all()
    _same_as_alone(report, pset, "wet")


def test_overflowing_errors():
    frame = _gaussian(2)
    frame.loc[: N_DRY - 1, "y"] = 1e308
    frame.loc[: N_DRY - 1, "mean"] = -1e308  # y − mean = 2e308 > the largest double
    pset = _load(frame, "huge.csv")
    report = cc.diagnose(pset, **FAST)
    (dry,) = _notes(report, "dry")
    assert "all 37 rows have y − mean (or the predicted mean or σ) beyond the floating-point range (±1.8e308)" in dry
    table = report.table(group="dry")
    assert np.isinf(table.loc[["rmse", "mae", "crps"], "value"]).all()
    assert np.isnan(table.loc[Z_STATS, "value"].to_numpy(float)).all()
    assert " infinite of its " in dry and table.loc["rmse", "note"].startswith("all 37 rows have y − mean")
    _same_as_alone(report, pset, "wet")


@pytest.mark.parametrize(("error", "cause", "words"), [
    (1.0, "z_square_overflow", "all 37 rows have |z| = |y − mean|/σ above 1.3e154 (a tiny σ), so z² overflows"),
    (1e10, "z_overflow", "all 37 rows have a σ so small that z = (y − mean)/σ overflows"),
])
def test_tiny_sigma(error, cause, words):
    frame = _gaussian(3)
    frame.loc[: N_DRY - 1, "std"] = 1e-300
    frame.loc[: N_DRY - 1, "y"] = frame.loc[: N_DRY - 1, "mean"] + error
    pset = _load(frame, "tiny.csv")
    with np.errstate(divide="raise", over="raise", invalid="raise"):  # no NumPy error: the notes say it
        report = cc.diagnose(pset, **FAST)
    assert words in _notes(report, "dry")[0]
    rows = rm.RegressionRows(pset.y, pset.dist)
    assert rm.undefined_z_counts(rows) == {cause: N_DRY}
    _same_as_alone(report, pset, "wet")


def test_undefined_z_counts_by_cause():
    y = np.array([0.0, 1.0, 1e308, 1.0, 5.0, 2.0])
    mean = np.array([0.0, 0.0, -1e308, 0.0, 0.0, 0.0])
    sigma = np.array([0.0, 0.0, 1.0, 1e-300, 1e-160, 1.0])  # 0/0, 1/0, overflow, z = 1e300, |z| = 5e160, fine
    rows = rm.RegressionRows(y, cc.Gaussian(mean, sigma))
    assert rm.undefined_z_counts(rows) == {"zero_spread": 2, "overflow": 1, "z_square_overflow": 2}
    assert rm.undefined_z_counts(rm.RegressionRows(y[5:], cc.Gaussian(mean[5:], sigma[5:]))) == {}
    note = rm.undefined_z_note(rm.undefined_z_counts(rows), 6, layout="gaussian")
    assert note.startswith("2 of 6 predictive distributions have σ = 0; 1 of 6 rows have y − mean")
    assert note.endswith("z = (y − mean)/σ is undefined there, and the statistics of z use the other 3 rows")


def test_z_statistics_of_no_finite_z_are_nan_not_an_exception():
    members = np.zeros((10, 4))
    y = np.linspace(-1, 1, 10)
    dist = cc.SampleSet(members)
    assert np.isnan(rm.reliability_score(y, dist))  # ZeroDivisionError before
    assert np.isnan(rm.ence(y, dist))
    assert all(np.isnan(v) for v in rm.standardized_residual_stats(y, dist).values())
    rows = rm.RegressionRows(y, dist)
    weights = np.random.default_rng(0).multinomial(10, np.full(10, 0.1)).astype(float)
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        stats = rm.summary_statistics(rows, weights)
    assert np.isnan([stats[k] for k in Z_STATS + ["ence"]]).all()
    assert np.isfinite(stats["crps"])


def test_a_subset_that_fails_is_a_note_and_the_others_are_produced(monkeypatch):
    from calib_core.diagnosis import regression as rdiag

    pset = _load(_gaussian(4), "g.csv")
    real = rdiag.regression_diagrams

    def fails_on_small(rows, **kw):
        if rows.n == N_DRY:
            raise FloatingPointError("something nobody foresaw")
        return real(rows, **kw)

    monkeypatch.setattr(rdiag, "regression_diagrams", fails_on_small)
    report = diagnose_regression(pset, **FAST)
    assert "model 'model', group 'dry': could not be diagnosed (FloatingPointError: something nobody foresaw); " \
           "the other models and groups are not affected" in report.options["notes"]
    assert set(report.groups) == {ALL, "wet"} and ("model", "dry") not in report.diagrams
    assert set(report.verdicts["group"]) == {ALL, "wet"}


def test_classification_analogues_are_diagnosed():
    """One row, one class only, all probabilities identical: noted or diagnosed, never fatal."""
    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(3), N)
    labels = np.array([rng.choice(3, p=p) for p in probs])
    group = np.where(np.arange(N) < 30, "one-class", np.where(np.arange(N) < 60, "flat", "rest"))
    labels[:30] = 2
    probs[30:60] = 1 / 3
    group[60] = "single"
    frame = pd.DataFrame({"y": labels, "group": group, **{f"p_{k}": probs[:, k] for k in range(3)}})
    pset = _load(frame, "cls.csv")
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        report = cc.diagnose(pset, **FAST)
    assert set(report.groups) == {ALL, "one-class", "flat", "rest"}
    assert "model 'model', group 'single': 1 row(s), too few to diagnose" in report.options["notes"]
    for g in ("one-class", "flat", "rest"):
        assert np.isfinite(report.table(group=g).loc[["ece", "accuracy", "brier"], "value"]).all()
        assert report.verdict(group=g)["verdict"] in ("calibrated", "miscalibrated")
    # identical probabilities: confidence 1/3 on every row, and accuracy is the share of the tie-broken class
    flat = report.table(group="flat")
    assert_allclose(flat.loc["mean_confidence", "value"], 1 / 3)


def test_cli_report_of_a_file_with_a_degenerate_group(tmp_path, capsys):
    from html import escape

    from calib_core import cli

    path = tmp_path / "rain.csv"
    _rain().to_csv(path, index=False)
    out, metrics = tmp_path / "rain.html", tmp_path / "metrics.csv"
    code = cli.main(["report", str(path), "--out", str(out), "--metrics-csv", str(metrics), "--resamples", "20",
                     "--simulations", "5"])
    captured = capsys.readouterr()
    assert code == 0, captured.err  # the whole report was lost (internal error) before
    assert captured.err == ""
    note = "model 'model', group 'dry': all 37 ensembles have zero spread (every member equal)"
    assert f"note: {note}" in captured.out and "note: model 'model', all rows: 37 of 120 ensembles" in captured.out
    assert "model, group wet: " in captured.out and "model, group dry: " in captured.out  # every verdict printed
    html = out.read_text(encoding="utf-8")
    assert escape(note) in html and "NumPy reported" not in html
    table = pd.read_csv(metrics)
    assert set(table["group"]) == {ALL, "dry", "wet"}
    dry = table[(table["group"] == "dry") & (table["metric"] == "reliability_score")]
    assert dry["value"].isna().all() and dry["note"].str.contains("zero spread").all()
    wet = table[table["group"] == "wet"]
    assert np.isfinite(wet["value"]).all()


def test_summary_report_notes_the_degenerate_group_the_same_way():
    from calib_core.scale import summary as summaries

    pset = _load(_rain(), "rain.csv")
    summary = summaries.summarize(pset, spec=summaries.spec_for(pset))
    report = summaries.report(summary, n_resamples=30, n_simulations=30)
    assert set(report.groups) == {ALL, "dry", "wet"}
    (dry,) = _notes(report, "dry")
    assert dry.startswith("model 'model', group 'dry': all 37 ensembles have zero spread (every member equal), so "
                          "z = (y − mean)/σ is undefined on every row — ")
    # a summary keeps how many rows have a finite z, not why
    (whole,) = _notes(report, ALL)
    assert whole == ("model 'model', all rows: 37 of 120 rows have no finite z = (y − mean)/σ (σ = 0, or y − mean or "
                     "z beyond the floating-point range): the statistics of z use the other 83 rows.")
    table = report.table(group="dry")
    undefined = table[~np.isfinite(table["value"].to_numpy(float))]
    mine = undefined[undefined["note"].str.contains("all 37 ensembles have zero spread")]
    assert set(Z_STATS) - {"reliability_score"} <= set(mine.index)
    assert f"{len(mine)} undefined (NaN) of its " in dry
    # what a summary cannot give whatever the rows keeps its own note only
    assert not undefined.loc[undefined["note"].str.startswith("not available"), "note"].str.contains("spread").any()
    # the other group is what a summary of its rows alone gives
    wet = pset.take(pset.group == "wet")
    alone = summaries.report(summaries.summarize(wet, spec=summaries.spec_for(wet)), n_resamples=30,
                             n_simulations=30)
    assert_allclose(report.table(group="wet")["value"].to_numpy(float), alone.table(group="wet")["value"]
                    .to_numpy(float), rtol=1e-12, equal_nan=True)
