"""Mergeable summaries: exact sums, chunk-independence, the file format, and every
metric from a summary against the in-memory metrics on the same rows."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

import calib_core as cc
from calib_core.base.binning import equal_count_bins
from calib_core.base.mergeable import (
    EXACT_UNIT_BITS,
    FORMAT_VERSION,
    Summary,
    bin_by_edges,
    equal_count_edges,
    exact_bin_sums,
    exact_float,
    hash_block,
)
from calib_core.base.predictions import ALL, PredictionSet
from calib_core.calibrators.registry_clinical import CLINICAL_ENTRIES
from calib_core.metrics.classification import ClassificationRows
from calib_core.metrics.regression import RegressionRows, summary_statistics
from calib_core.scale import summary as S
from calib_core.scale import summary_report as SR
from calib_core.scale.classification import classification_values
from calib_core.scale.regression import (
    BOUNDED_METRICS,
    EXACT_METRICS,
    UNAVAILABLE_METRICS,
    ensemble_pit,
    regression_bounds,
    regression_values,
)

# -- data ---------------------------------------------------------------------------------------------------------


def gaussian_set(n: int, seed: int = 0, scale: float = 1.1, groups: bool = False) -> PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n)
    sd = np.exp(0.4 * rng.standard_normal(n))
    y = mu + scale * sd * rng.standard_normal(n)
    group = np.where(rng.random(n) < 0.3, "a", "b") if groups else None
    return PredictionSet(task="regression", y=y, dist=cc.Gaussian(mu, sd), layout="gaussian", group=group,
                         row_number=np.arange(1, n + 1, dtype=np.int64))


def quantile_set(n: int, seed: int = 1) -> PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n)
    sd = np.exp(0.3 * rng.standard_normal(n))
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    from scipy import stats

    values = mu[:, None] + sd[:, None] * stats.norm.ppf(levels)[None, :]
    y = mu + 1.2 * sd * rng.standard_normal(n)
    return PredictionSet(task="regression", y=y, dist=cc.QuantileSet(levels, values), layout="quantile",
                         row_number=np.arange(1, n + 1, dtype=np.int64))


def ensemble_set(n: int, seed: int = 2, m: int = 10) -> PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n)
    sd = np.exp(0.3 * rng.standard_normal(n))
    members = mu[:, None] + sd[:, None] * rng.standard_normal((n, m))
    y = mu + 1.3 * sd * rng.standard_normal(n)
    return PredictionSet(task="regression", y=y, dist=cc.SampleSet(members), layout="sample",
                         row_number=np.arange(1, n + 1, dtype=np.int64))


def classification_set(n: int, k: int, seed: int = 3, temperature: float = 1.3) -> PredictionSet:
    rng = np.random.default_rng(seed)
    logits = 2.0 * rng.standard_normal((n, k))
    probs = cc.softmax(logits)
    truth = np.cumsum(cc.softmax(logits / temperature), axis=1)
    labels = np.minimum((truth < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return PredictionSet(task="classification", labels=labels, probs=probs, layout="probs",
                         row_number=np.arange(1, n + 1, dtype=np.int64))


def in_memory_rows(pset: PredictionSet, spec) -> RegressionRows:
    """The in-memory rows of the whole set; an ensemble's PIT at the summary's hashed V (see the module docs)."""
    rows = RegressionRows(pset.y, pset.dist, pit_seed=0)
    if isinstance(pset.dist, cc.SampleSet):
        rows.__dict__["u"] = ensemble_pit(pset.y, pset.dist, pset.row_number, spec.seed)
    return rows


def chunked(pset: PredictionSet, cuts, spec) -> Summary:
    bounds = np.r_[0, np.sort(np.asarray(cuts, dtype=np.int64)), pset.n_rows]
    parts = [S.summarize(pset.take(np.arange(a, b)), spec=spec) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    return S.merge_all(parts)


def assert_same_summary(a: Summary, b: Summary, rel: float = 1e-12) -> None:
    """Counts and exact sums bit for bit; float sums to ``rel``; min/max exactly."""
    assert set(a.parts) == set(b.parts)
    assert a.n_rows == b.n_rows
    for key in a.parts:
        pa, pb = a.parts[key], b.parts[key]
        assert set(pa) == set(pb), key
        for name in pa:
            x, y = pa[name], pb[name]
            if x.dtype == object or x.dtype.kind in "iu" or name.endswith(("_min", "_max")):
                assert np.array_equal(x, y, equal_nan=x.dtype != object), (key, name)
            else:
                np.testing.assert_allclose(x, y, rtol=rel, atol=rel * np.max(np.abs(x), initial=0.0), err_msg=name)


def rel_err(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


# -- exact sums ---------------------------------------------------------------------------------------------------


def test_exact_bin_sums_are_the_exact_sums():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(50_000) * 10.0 ** rng.integers(-300, 300, 50_000),
                        [5e-324, -2.5e-310, 1e308, 1e308, 0.0, -0.0, 3e-320, 1.0, -1.0]])
    idx = rng.integers(0, 4, x.size)
    sums, nonfinite = exact_bin_sums(idx, 4, x)
    assert not nonfinite.any()
    for c in range(4):
        assert Fraction(int(sums[c]), 1 << EXACT_UNIT_BITS) == sum(Fraction(v) for v in x[idx == c])
        assert exact_float(sums)[c] == math.fsum(x[idx == c])  # rounded once, like fsum


def test_exact_bin_sums_count_nonfinite_values():
    x = np.array([1.0, np.inf, 2.0, -np.inf, np.nan, 3.0])
    sums, nf = exact_bin_sums(np.array([0, 0, 1, 1, 1, 2]), 3, x)
    assert nf.tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    out = exact_float(sums, nf)
    assert out[0] == np.inf and np.isnan(out[1]) and out[2] == 3.0


def test_hash_blocks_depend_on_the_row_id_only():
    ids = np.arange(10_000, dtype=np.int64) * 7 + 3
    whole = hash_block(ids, 0, 64)
    assert np.array_equal(np.concatenate([hash_block(ids[:1234], 0, 64), hash_block(ids[1234:], 0, 64)]), whole)
    counts = np.bincount(whole, minlength=64)
    assert abs(counts - 10_000 / 64).max() < 6 * np.sqrt(10_000 / 64)  # ≈ uniform (6 s.d.)
    assert not np.array_equal(hash_block(ids, 1, 64), whole)  # the seed matters


def test_equal_count_edges_reproduce_the_in_memory_bins_with_ties():
    rng = np.random.default_rng(7)
    sigma = rng.integers(1, 6, 997).astype(float)  # heavy ties
    ids = np.arange(997, dtype=np.int64) * 3 + 11  # increasing with the row order
    e, eid = equal_count_edges(sigma, ids, 15)
    assert np.array_equal(bin_by_edges(sigma, ids, e, eid), equal_count_bins(sigma, 15))


# -- chunk independence -------------------------------------------------------------------------------------------

_GAUSS = gaussian_set(3_000, seed=11, groups=True)
_GAUSS_SPEC = S.spec_for(_GAUSS)
_GAUSS_WHOLE = S.summarize(_GAUSS, spec=_GAUSS_SPEC)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=2_999), min_size=1, max_size=6, unique=True))
def test_random_chunk_boundaries_give_identical_summaries(cuts):
    assert_same_summary(chunked(_GAUSS, cuts, _GAUSS_SPEC), _GAUSS_WHOLE)


@settings(max_examples=6, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=1_999), min_size=1, max_size=5, unique=True),
       st.randoms(use_true_random=False))
def test_merge_is_associative_and_commutative_for_classification(cuts, rnd):
    pset = classification_set(2_000, 4, seed=12)
    spec = S.spec_for(pset)
    bounds = np.r_[0, np.sort(cuts), 2_000]
    parts = [S.summarize(pset.take(np.arange(a, b)), spec=spec) for a, b in zip(bounds[:-1], bounds[1:])]
    shuffled = list(parts)
    rnd.shuffle(shuffled)

    def tree(xs):
        return xs[0] if len(xs) == 1 else S.merge(tree(xs[: len(xs) // 2]), tree(xs[len(xs) // 2:]))

    whole = S.summarize(pset, spec=spec)
    assert_same_summary(reduce(S.merge, shuffled), whole)
    assert_same_summary(tree(parts), whole)


def test_summaries_with_different_specs_do_not_merge():
    other = S.spec_for(_GAUSS, n_bins=10)
    with pytest.raises(ValueError, match="different specs"):
        S.merge(_GAUSS_WHOLE, S.summarize(_GAUSS, spec=other))


# -- file format --------------------------------------------------------------------------------------------------


def test_summary_file_round_trip_and_version_check():
    data = _GAUSS_WHOLE.to_bytes()
    back = Summary.from_bytes(data)
    assert back.spec == _GAUSS_WHOLE.spec
    assert_same_summary(back, _GAUSS_WHOLE, rel=0.0)
    import io
    import json
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.namelist():
            raw = src.read(item)
            if item == "header.json":
                h = json.loads(raw)
                h["version"] = FORMAT_VERSION + 1
                raw = json.dumps(h).encode()
            dst.writestr(item, raw)
    with pytest.raises(ValueError, match="version"):
        Summary.from_bytes(buf.getvalue())
    with pytest.raises(ValueError, match="not a calibration summary"):
        Summary.from_bytes(b"not a zip")
    with pytest.raises(ValueError, match="more than the limit"):
        Summary.from_bytes(data, max_bytes=10_000)


# -- values against the in-memory metrics -------------------------------------------------------------------------


def check_regression(pset: PredictionSet, rel: float = 1e-12) -> None:
    spec = S.spec_for(pset)
    summ = chunked(pset, [pset.n_rows // 3, pset.n_rows // 2 + 17], spec)
    part = summ.parts[("model", ALL)]
    got = regression_values(part, spec)
    ref = summary_statistics(in_memory_rows(pset, spec))
    assert set(got) == set(ref)
    bounds = regression_bounds(part, spec)
    width = float(np.max(np.diff(np.asarray(spec.pit_edges))))
    for k, v in ref.items():
        if k in UNAVAILABLE_METRICS:
            assert np.isnan(got[k])
        elif k in BOUNDED_METRICS:
            lo, hi = bounds[k]
            tol = 1e-12 * abs(v)
            assert lo - tol <= v <= hi + tol, (k, lo, v, hi)
        else:
            assert k in EXACT_METRICS or k.startswith(("coverage_", "width_", "interval_score_"))
            assert rel_err(got[k], v) <= rel, (k, got[k], v)
    ks_lo, ks_hi = bounds["max_calibration_deviation"]
    mass = float(np.max(part["pit_le"])) / pset.n_rows
    assert ks_hi - ks_lo <= width + mass + 1e-15  # KS within one fine PIT-bin width (+ the bin's mass)


def test_gaussian_summary_equals_in_memory_metrics():
    check_regression(gaussian_set(20_000, seed=21))


def test_quantile_summary_equals_in_memory_metrics():
    check_regression(quantile_set(20_000, seed=22))


def test_ensemble_summary_equals_in_memory_metrics_at_the_same_pit():
    check_regression(ensemble_set(5_000, seed=23))


def top_label_set(n: int, seed: int = 4) -> PredictionSet:
    full = classification_set(n, 6, seed=seed)
    pred = full.probs.argmax(axis=1)
    return PredictionSet(task="classification", labels=full.labels, point=pred, confidence=full.probs.max(axis=1),
                         top_label_only=True, layout="top_label", row_number=full.row_number)


@pytest.mark.parametrize("k, strategy", [(5, "uniform"), (2, "uniform"), (5, "quantile"), (0, "uniform")])
def test_classification_summary_equals_in_memory_metrics(k, strategy):
    pset = classification_set(20_000, k, seed=31 + k) if k else top_label_set(20_000)
    spec = S.spec_for(pset, strategy=strategy)
    summ = chunked(pset, [4_000, 13_001], spec)
    got = classification_values(summ.parts[("model", ALL)], spec)
    if k:
        ref = ClassificationRows(pset.labels, pset.probs, strategy=strategy).statistics()
    else:
        ref = ClassificationRows.from_top_label(pset.confidence, pset.labels == pset.point).statistics()
    if strategy == "quantile":
        ref.pop("classwise_ece")  # class-wise ECE from a summary: equal-width bins only
    assert set(got) == set(ref)
    for name, v in ref.items():
        assert rel_err(got[name], v) <= 1e-12, (name, got[name], v)


def test_ece_from_a_summary_is_the_exactly_rounded_value():
    """The summary's ECE is Σ_m |Σhit − Σconf| / N with exact sums: equal to an exact rational reference (the
    in-memory bincount carries its own rounding, ≈ 1e-14 relative at this N)."""
    pset = classification_set(20_000, 3, seed=41)
    spec = S.spec_for(pset)
    got = classification_values(S.summarize(pset, spec=spec).parts[("model", ALL)], spec)
    r = ClassificationRows(pset.labels, pset.probs)
    exact = Fraction(0)
    for m in range(15):
        sel = r.bin_index == m
        exact += abs(sum(Fraction(v) for v in r.correct[sel]) - sum(Fraction(v) for v in r.confidence[sel]))
    assert got["ece"] == float(exact / r.n) or rel_err(got["ece"], float(exact / r.n)) <= 2.3e-16


# -- report -------------------------------------------------------------------------------------------------------


def test_report_from_a_summary_has_the_shape_of_diagnose():
    pset = gaussian_set(4_000, seed=51, scale=1.3, groups=True)
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=100)
    ref = cc.diagnose(pset, n_resamples=50, n_simulations=50)
    assert isinstance(rep, cc.Report)
    assert list(rep.metrics.columns) == list(ref.metrics.columns)
    assert set(map(tuple, rep.metrics[["model", "group", "metric"]].to_numpy())) == \
        set(map(tuple, ref.metrics[["model", "group", "metric"]].to_numpy()))
    assert set(rep.diagrams) == set(ref.diagrams)
    for key, tables in ref.diagrams.items():
        assert set(rep.diagrams[key]) == set(tables)
        for name, t in tables.items():
            assert list(rep.diagrams[key][name].columns) == list(t.columns), name
        pd.testing.assert_frame_equal(rep.diagrams[key]["calibration_curve"], tables["calibration_curve"])
        pd.testing.assert_frame_equal(rep.diagrams[key]["pit_histogram"], tables["pit_histogram"])
    v = rep.verdict(group=ALL)
    assert v["verdict"] == "miscalibrated" and v["direction"] == "over-confident"  # σ too small by 1.3
    ex = rep.options["exactness"]
    assert ex["nll"] == "exact" and ex["max_calibration_deviation"] == "bound" and ex["pit_entropy"] == "bound"
    assert ex["spearman_sigma_abs_error"] == "not available"
    note = rep.table().loc["max_calibration_deviation", "note"]
    assert "lies in" in note
    assert "rank of σ and of |ε|" in rep.table().loc["spearman_sigma_abs_error", "note"]
    assert "placed evenly" in rep.table().loc["pit_entropy", "note"]


def test_report_of_a_calibrated_model_is_calibrated_and_intervals_cover():
    pset = gaussian_set(20_000, seed=52, scale=1.0)
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=300)
    assert rep.verdict()["verdict"] == "calibrated"
    t = rep.table()
    for name, truth in (("z_std", 1.0), ("coverage_90", 0.9)):
        assert t.loc[name, "ci_low"] <= truth <= t.loc[name, "ci_high"], name


def test_summarize_a_frame_counts_dropped_rows_with_their_ids():
    frame = pd.DataFrame({"y": [1.0, 2.0, np.nan, 0.5, 1.5, 2.5], "mean": [1.1, 1.9, 0.0, 0.4, 1.4, 2.7],
                          "std": [0.5, 0.4, 0.3, -1.0, 0.6, 0.5]})
    spec = S.spec_for(gaussian_set(100))
    summ = S.summarize(frame, spec=spec, row_ids=np.arange(100, 106))
    assert summ.n_rows == 4
    firsts = sorted(i for d in summ.dropped.values() for i in d["first"])
    assert firsts == [102, 103]
    assert sum(d["count"] for d in summ.dropped.values()) == 2


def test_a_sigma_bin_selection_redraws_the_curve_and_pit_histogram_exactly():
    pset = gaussian_set(6_000, seed=61, scale=1.2)
    spec = S.spec_for(pset)
    part = S.summarize(pset, spec=spec).parts[("model", ALL)]
    from calib_core.scale.regression import regression_diagrams_from_part

    chosen = np.array([0, 1, 7])
    tables = regression_diagrams_from_part(part, spec, sigma_bins=chosen)
    rows = RegressionRows(pset.y, pset.dist)
    inside = np.isin(rows.sigma_bins(15, "count"), chosen)
    sub = RegressionRows(pset.y[inside], pset.dist.take(inside))
    from calib_core.diagrams.regression import calibration_curve_table, intervals_table

    pd.testing.assert_frame_equal(tables["calibration_curve"], calibration_curve_table(sub))
    pd.testing.assert_frame_equal(tables["intervals"], intervals_table(sub), rtol=1e-12)
    counts = np.histogram(sub.u, np.linspace(0, 1, 21))[0]
    assert np.array_equal(tables["pit_histogram"]["count"].to_numpy(), counts)


def test_two_passes_over_chunks_reproduce_the_in_memory_sigma_bins():
    """First pass: edge_values per chunk, exact order statistics per (model, group); second pass: summaries."""
    from calib_core.base.mergeable import equal_count_positions

    pset = gaussian_set(5_000, seed=71, groups=True)
    base = S.spec_for(gaussian_set(50, seed=1))  # grids only; its σ edges are replaced
    cuts = [0, 1_700, 3_100, 5_000]
    chunks = [pset.take(np.arange(a, b)) for a, b in zip(cuts[:-1], cuts[1:])]
    values = pd.concat([S.edge_values(c, task="regression") for c in chunks], ignore_index=True)
    edges = {}
    for (m, g), t in values.groupby(["model", "group"]):
        t = t.sort_values(["value", "row_id"], kind="stable")
        pos = equal_count_positions(len(t), base.n_bins)
        edges[(m, g)] = (t["value"].to_numpy()[pos], t["row_id"].to_numpy()[pos])
    spec = S.with_edges(base, edges)
    merged = S.merge_all(S.summarize(c, spec=spec) for c in chunks)
    assert_same_summary(merged, S.summarize(pset, spec=S.spec_for(pset)))


@pytest.mark.parametrize("top_only", [False, True])
def test_classification_report_has_the_shape_of_diagnose(top_only):
    pset = top_label_set(5_000) if top_only else classification_set(5_000, 3, seed=81, temperature=1.6)
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=100, n_simulations=500)
    ref = cc.diagnose(pset, n_resamples=50, n_simulations=200)
    # the clinical set (logistic recalibration fits, the loess behind ICI, Hosmer–Lemeshow's risk groups) needs the
    # rows and is not summarised (docs/large-data.md); every other metric of the diagnosis is in the summary report
    assert set(rep.metrics["metric"]) == set(ref.metrics["metric"]) - {entry[0] for entry in CLINICAL_ENTRIES}
    # the smooth reliability curve needs the rows: a summary lists smooth ECE and TCE without values
    assert set(rep.diagrams[("model", ALL)]) == set(ref.diagrams[("model", ALL)]) - {
        "smooth_reliability", "smoothed_calibration", "smoothed_calibration_positive", "clinical_per_class"}
    assert "not available from a summary" in rep.table().loc["smooth_ece", "note"]
    pd.testing.assert_frame_equal(rep.diagrams[("model", ALL)]["reliability"],
                                  ref.diagrams[("model", ALL)]["reliability"], rtol=1e-12, check_dtype=False)
    t, r = rep.table(), ref.table()
    for name in ("top_bin_gap", "confidence_gap", "ece"):
        assert rel_err(t.loc[name, "value"], r.loc[name, "value"]) <= 1e-12, name
    if not top_only:  # over-confident by construction (the truth is softer)
        assert rep.verdict()["verdict"] == "miscalibrated" and rep.verdict()["direction"] == "over-confident"


def test_curve_and_coverage_p_values_from_a_summary_equal_diagnose():
    pset = gaussian_set(3_000, seed=91, scale=1.05)
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=0, n_simulations=400)
    ref = cc.diagnose(pset, n_resamples=0, n_simulations=400)
    t, r = rep.table(), ref.table()
    for name in ("calibration_rmse", "quantile_calibration_error", "coverage_90", "coverage_50", "z_mean", "z_std"):
        assert rel_err(t.loc[name, "p_value"], r.loc[name, "p_value"]) <= 1e-9, name
    # KS: p-value at the lower end of the D bracket ≥ the in-memory p-value (conservative)
    assert t.loc["max_calibration_deviation", "p_value"] >= r.loc["max_calibration_deviation", "p_value"] - 1e-12


def test_a_spec_from_a_sample_says_its_ence_is_for_its_own_bins():
    pset = gaussian_set(4_000, seed=95, groups=True)
    spec = S.spec_from_sample(pset.take(np.arange(0, 4_000, 7)), by_group=False)
    rep = S.report(S.summarize(pset, spec=spec), n_resamples=0, n_simulations=0)
    assert rep.options["exactness"]["ence"] == "exact for the spec's bins"
    assert "not for the in-memory" in rep.table(group="a").loc["ence", "note"]
    assert rep.options["exactness"]["nll"] == "exact"


@pytest.mark.parametrize("make", [ensemble_set, quantile_set])
def test_chunking_does_not_change_ensemble_or_quantile_summaries(make):
    pset = make(2_500)
    spec = S.spec_for(pset)
    assert_same_summary(chunked(pset, [1, 800, 801, 2_000], spec), S.summarize(pset, spec=spec))


def test_point_predictions_summarise_to_rmse_and_mae():
    rng = np.random.default_rng(97)
    y = rng.standard_normal(3_000)
    pset = PredictionSet(task="regression", y=y, point=y + 0.3 * rng.standard_normal(3_000), layout="point",
                         row_number=np.arange(1, 3_001, dtype=np.int64))
    spec = S.spec_for(pset)
    summ = chunked(pset, [1_000, 2_222], spec)
    assert_same_summary(summ, S.summarize(pset, spec=spec))
    rep = S.report(summ, n_resamples=200)
    ref = cc.diagnose(pset, n_resamples=200)
    assert set(rep.metrics["metric"]) == set(ref.metrics["metric"]) == {"rmse", "mae"}
    for name in ("rmse", "mae"):
        assert rel_err(rep.value(name), ref.value(name)) <= 1e-12
        assert rep.table().loc[name, "ci_low"] < rep.value(name) < rep.table().loc[name, "ci_high"]
    assert rep.verdict()["verdict"] == ref.verdict()["verdict"] == "not tested"


@pytest.mark.parametrize("scale", [1.0, 1.04])
def test_gaussian_ence_test_and_verdict_agree_with_diagnose(scale):
    pset = gaussian_set(20_000, seed=99, scale=scale)
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=200, n_simulations=2_000)
    ref = cc.diagnose(pset, n_resamples=200, n_simulations=2_000)
    p1, p2 = rep.table().loc["ence", "p_value"], ref.table().loc["ence", "p_value"]
    se = np.sqrt(max(p2 * (1 - p2), 1e-3) / 2_000)
    assert abs(p1 - p2) <= 5 * np.sqrt(2) * se + 1e-3, (p1, p2)  # same null law, independent Monte-Carlo draws
    assert rep.verdict()["verdict"] == ref.verdict()["verdict"]
    assert rep.verdict()["n_tests"] == ref.verdict()["n_tests"] == 5


def test_parts_with_different_arrays_do_not_merge_but_missing_nonfinite_counters_do():
    from calib_core.base.mergeable import merge_parts

    a = {"n": np.array([1, 2]), "x:var": np.array([3, 4], dtype=object)}
    b = {"n": np.array([1, 0]), "x:var": np.array([1, 1], dtype=object), "nf:var": np.array([[1, 0, 0], [0, 0, 0]])}
    out = merge_parts(a, b)
    assert out["n"].tolist() == [2, 2] and out["x:var"].tolist() == [4, 5] and out["nf:var"][0, 0] == 1
    with pytest.raises(ValueError, match="one part only"):
        merge_parts(a, {**b, "x:var2": np.array([0, 0], dtype=object)})


# -- loose ends: quantile sets' primary family, PIT entropy --------------------------------------------


def nine_quantile_set(n: int, seed: int = 5, scale: float = 1.0) -> PredictionSet:
    """Gaussian forecasts stated as the 9 quantiles 0.1 … 0.9 (no 5% / 95% quantile: the 90% interval is
    extrapolated), y drawn with σ·scale."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    mu = rng.standard_normal(n)
    sd = np.exp(0.3 * rng.standard_normal(n))
    levels = np.arange(1, 10) / 10
    values = mu[:, None] + sd[:, None] * stats.norm.ppf(levels)[None, :]
    y = mu + scale * sd * rng.standard_normal(n)
    return PredictionSet(task="regression", y=y, dist=cc.QuantileSet(levels, values), layout="quantile",
                         row_number=np.arange(1, n + 1, dtype=np.int64))


@pytest.mark.parametrize("scale", [1.0, 1.2])
def test_a_nine_quantile_summary_tests_its_80_percent_interval_as_diagnose_does(scale):
    pset = nine_quantile_set(20_000, scale=scale)
    rep = S.report(S.summarize(pset, spec=S.spec_for(pset)), n_resamples=0, n_simulations=500)
    ref = cc.diagnose(pset, n_resamples=0, n_simulations=500)
    got, want = rep.table(), ref.table()
    assert got.loc["coverage_80", "family"] == want.loc["coverage_80", "family"] == "primary"
    assert got.loc["coverage_90", "family"] == want.loc["coverage_90", "family"] == "secondary"
    # the 90% interval's ends are not stated: no test (it would test the tails the tool extrapolates)
    assert np.isnan(got.loc["coverage_90", "p_value"]) and "not a stated level" in got.loc["coverage_90", "note"]
    # the stated-level statistics: the same counts, values and p-values as in memory (same Monte Carlo stream)
    for name in ("pit_chi2", "max_level_deviation", "coverage_80"):
        assert got.loc[name, "family"] == want.loc[name, "family"] == "primary"
        assert rel_err(got.loc[name, "value"], want.loc[name, "value"]) <= 1e-12, name
        assert rel_err(got.loc[name, "p_value"], want.loc[name, "p_value"]) <= 1e-9, name
    for name in ("max_calibration_deviation", "calibration_rmse", "z_std"):  # the interpolated law: descriptive
        assert np.isnan(got.loc[name, "p_value"]) and np.isnan(want.loc[name, "p_value"]), name
    for name in ("stated_levels", "pit_histogram"):  # the cells between the stated levels, as in memory
        pd.testing.assert_frame_equal(rep.diagrams[("model", ALL)][name], ref.diagrams[("model", ALL)][name])
    assert rep.verdict()["verdict"] == ref.verdict()["verdict"]
    assert rep.verdict()["verdict"] == ("calibrated" if scale == 1.0 else "miscalibrated")
    # a saved summary keeps the stated levels
    again = Summary.from_bytes(S.summarize(pset, spec=S.spec_for(pset)).to_bytes())
    assert again.spec.quantile_levels == tuple(np.arange(1, 10) / 10)
    assert S.regression_primary(again.spec) == S.regression_primary(S.spec_for(pset))


@pytest.mark.parametrize("make, n", [(gaussian_set, 20_000), (quantile_set, 20_000), (ensemble_set, 5_000)])
def test_pit_entropy_from_a_summary_is_in_its_bracket_and_near_the_rows_value(make, n):
    pset = make(n)
    spec = S.spec_for(pset)
    part = chunked(pset, [n // 4, n // 2 + 3], spec).parts[("model", ALL)]
    got = regression_values(part, spec)["pit_entropy"]
    want = summary_statistics(in_memory_rows(pset, spec))["pit_entropy"]  # ensembles: at the hashed V
    lo, hi = regression_bounds(part, spec)["pit_entropy"]
    assert lo <= want <= hi and lo < got < hi
    assert np.isfinite(hi)
    if make is gaussian_set:  # smooth PITs at 20,000 rows: √N = 141 rows span several fine bins, a finite bracket
        assert np.isfinite(lo) and hi - lo < 0.2
    assert abs(got - want) <= 1e-3, (got, want)


def test_pit_entropy_of_tied_pits_is_minus_infinity_as_in_memory():
    pset = gaussian_set(2_000, seed=8)
    spec = S.spec_for(pset)
    part = dict(S.summarize(pset, spec=spec).parts[("model", ALL)])
    # every PIT exactly on one fine edge: a zero spacing in memory (log 0)
    pe = np.asarray(spec.pit_edges)
    j = int(np.searchsorted(pe, 0.5))
    part["pit_le"] = np.zeros_like(part["pit_le"])
    part["pit_le"][j] = 2_000
    part["pit_eq"] = np.zeros_like(part["pit_eq"])
    part["pit_eq"][j] = 2_000
    assert regression_values(part, spec)["pit_entropy"] == -np.inf


def test_the_positive_class_ratio_is_exact_from_a_summary_and_its_test_holds_its_size():
    """Σ P(y = 1) / positives from the summary's positive-class bins equals cc.diagnose's ratio (1e-12, chunked at
    random boundaries); its normal test of Σ(p − y) rejects a calibrated binary model at about its level (seeded
    simulation: 400 data sets, the count of p < 0.05 inside the binomial 99.9% range) and a biased one always."""
    pset = classification_set(20_000, 2, seed=11)
    spec = S.spec_for(pset)
    summ = chunked(pset, [3_001, 9_999, 15_000], spec)
    got = S.report(summ, n_resamples=0, n_simulations=50, diagrams=False)
    ref = cc.diagnose(pset, n_resamples=0, n_simulations=0, diagrams=False)
    assert rel_err(got.value("calibration_ratio_positive"), ref.value("calibration_ratio_positive")) <= 1e-12
    assert got.options["exactness"]["calibration_ratio_positive"] == "exact"
    row = got.metrics.set_index("metric").loc["calibration_ratio_positive"]
    assert np.isfinite(row["p_value"]) and "Poisson-binomial" in row["test"]

    rng = np.random.default_rng(12)
    n, reps = 2_000, 400
    p_values = {1.0: [], 0.85: []}
    for _ in range(reps):
        p1 = rng.uniform(0.05, 0.95, n)
        for shrink in p_values:  # labels drawn from p1 (calibrated) or from 0.85·p1 (over-predicts the positives)
            labels = (rng.random(n) < shrink * p1).astype(np.int64)
            one = PredictionSet(task="classification", labels=labels, probs=np.column_stack([1 - p1, p1]),
                                layout="probs", row_number=np.arange(1, n + 1, dtype=np.int64))
            part = S.summarize(one, spec=S.spec_for(one)).parts[("model", ALL)]
            p_values[shrink].append(SR._positive_ratio(part)["p_value"])
    rejected = int(np.sum(np.array(p_values[1.0]) < 0.05))
    lo, hi = binom.ppf([0.0005, 0.9995], reps, 0.05)
    assert lo <= rejected <= hi, rejected
    assert np.all(np.array(p_values[0.85]) < 0.05)
