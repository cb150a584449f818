"""Inference of the clinical set: false alarms on calibrated binary data (targets drawn from the true law) per test
and for the family, power against an over-fitted (slope 0.7) and a shifted (intercept + 0.5) model, interval
coverage of the slope, the cluster-aware tests, the table's families and kinds.  The default run uses a few dozen
seeded data sets with binomial tolerances; the 400-data-set study is ``@pytest.mark.slow``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from calib_core.base.clustering import Clustering
from calib_core.base.significance import block_bootstrap_weights, block_ids
from calib_core.inference.classification import infer_classification
from calib_core.inference.classification_clinical import CLINICAL_TESTED, clinical_inference
from calib_core.inference.classification_verdict import SECONDARY
from calib_core.metrics.classification_clinical import hosmer_lemeshow_of


def _draw(n, seed, kind="cal"):
    rng = np.random.default_rng([n, seed, {"cal": 0, "slope": 1, "shift": 2}[kind]])
    x = rng.normal(-1.0, 1.0, n)
    true = {"cal": x, "slope": 0.7 * x, "shift": x + 0.5}[kind]
    return special.expit(x), (rng.random(n) < special.expit(true)).astype(float), rng


def _run(p, y, rng, n_boot=50, clustering=None):
    if clustering is None:
        block, nb = block_ids(p.size, 500, rng)
        w = block_bootstrap_weights(nb, n_boot, rng)
    else:
        block, nb = clustering.codes, clustering.n_clusters
        w = block_bootstrap_weights(nb, n_boot, rng)
    return clinical_inference(p, y, block=block, n_blocks=nb, weights=w, level=0.95, n_null=200, rng=rng,
                              clustering=clustering)


def _bh_any(p, alpha=0.05):
    p = np.sort(np.asarray(p)[np.isfinite(p)])
    return bool(np.any(p <= alpha * np.arange(1, p.size + 1) / p.size))


def _rates(n, reps, kind):
    rej = np.zeros(len(CLINICAL_TESTED))
    fam = 0
    for r in range(reps):
        p, y, rng = _draw(n, r, kind)
        pv = [_run(p, y, rng)["pvals"][k][0] for k in CLINICAL_TESTED]
        rej += np.array(pv) < 0.05
        fam += _bh_any(pv)
    return rej / reps, fam / reps


def _upper(rate, reps, alpha=0.05):
    """Largest rejection count consistent with ``rate`` at one-sided 0.001 (binomial)."""
    return stats.binom.ppf(0.999, reps, rate) / reps


def test_false_alarms_per_test_and_family_on_calibrated_data():
    reps = 30
    per_test, family = _rates(300, reps, "cal")
    assert np.all(per_test <= _upper(0.05, reps)), dict(zip(CLINICAL_TESTED, per_test, strict=True))
    assert family <= _upper(0.05, reps)


def test_power_against_overfitting_and_a_shift():
    reps = 8
    slope, _ = _rates(1500, reps, "slope")
    shift, _ = _rates(1500, reps, "shift")
    k = dict(zip(CLINICAL_TESTED, range(5), strict=True))
    assert slope[k["calibration_slope"]] >= 7 / 8 and shift[k["calibration_in_the_large"]] >= 7 / 8
    assert shift[k["ici"]] >= 6 / 8


@pytest.mark.slow
@pytest.mark.parametrize("n", [500, 5000])
def test_false_alarm_study(n):
    reps = 400
    per_test, family = _rates(n, reps, "cal")
    assert np.all(per_test <= _upper(0.05, reps)) and family <= _upper(0.05, reps)


def test_slope_interval_covers_the_true_slope():
    reps, hits = 30, 0
    for r in range(reps):
        p, y, rng = _draw(800, 100 + r, "slope")
        lo, hi, _ = _run(p, y, rng, n_boot=200)["ci"]["calibration_slope"]
        hits += lo <= 0.7 <= hi
    assert hits / reps >= stats.binom.ppf(0.001, reps, 0.95) / reps


def test_hosmer_lemeshow_reference_is_g_degrees_of_freedom():
    # with g − 2 df the χ² test raises false alarms on calibrated validation data (about 10 % at 5 %, measured);
    # the mean of H under perfect calibration is about g, not g − 2
    values, p_g, p_g2 = [], 0, 0
    for r in range(200):
        p, y, _ = _draw(1000, 300 + r)
        h, g = hosmer_lemeshow_of(p, y)
        values.append(h)
        p_g += stats.chi2.sf(h, g) < 0.05
        p_g2 += stats.chi2.sf(h, g - 2) < 0.05
    assert 8.5 < np.mean(values) < 11.0
    assert p_g / 200 <= _upper(0.05, 200) < p_g2 / 200 + 0.03


def test_clustered_rows_get_cluster_tests_and_hl_ici_untested():
    p, y, rng = _draw(1200, 7)
    codes = np.repeat(np.arange(40), 30)
    clustering = Clustering("site", codes, np.arange(40), None)
    out = _run(p, y, rng, n_boot=200, clustering=clustering)
    assert "cluster bootstrap" in out["pvals"]["calibration_slope"][2]
    for key in ("hosmer_lemeshow", "ici"):
        assert np.isnan(out["pvals"][key][0]) and out["pvals"][key][2].startswith("not tested")


def test_table_rows_families_and_kinds():
    p, y, _ = _draw(800, 3)
    res = infer_classification(labels=y.astype(int), probs=np.column_stack([1 - p, p]), n_null=1000, n_boot=200,
                               smooth=False, tce=False)
    t = res.table
    for key in CLINICAL_TESTED:
        assert key in SECONDARY and t.loc[key, "family"] == "secondary" and np.isfinite(t.loc[key, "p_value"])
    for key in ("cox_intercept", "e50", "e90"):
        assert t.loc[key, "kind"] == "descriptive" and not np.isfinite(t.loc[key, "p_value"])
        assert np.isfinite(t.loc[key, "ci_low"])
    assert t.loc["calibration_slope", "perfect"] == 1.0 and t.loc["calibration_in_the_large", "perfect"] == 0.0
    assert "clinical" in res.timings


def test_one_class_is_not_tested_with_a_reason():
    p = np.linspace(0.1, 0.6, 300)
    res = infer_classification(labels=np.zeros(300, int), probs=np.column_stack([1 - p, p]), n_null=1000,
                               n_boot=100, smooth=False, tce=False)
    t = res.table
    assert np.isnan(t.loc["calibration_slope", "p_value"])
    assert any("one class only" in n for n in res.notes)


def test_z_and_hosmer_lemeshow_have_a_p_value_and_no_interval():
    """Test statistics with no N-free population value (they grow with N when miscalibrated): a bootstrap interval
    would describe the statistic at this N, so there is none (as TCE); the p-value and the perfect value stay."""
    p, y, rng = _draw(1500, 11, "slope")
    out = _run(p, y, rng)
    for key in ("spiegelhalter_z", "hosmer_lemeshow"):
        low, high, how = out["ci"][key]
        assert np.isnan(low) and np.isnan(high) and how.startswith("no interval"), key
        assert np.isfinite(out["pvals"][key][0]) and np.isfinite(out["ref"][key][0]), key
    for key in ("calibration_slope", "calibration_in_the_large", "ici"):
        assert np.all(np.isfinite(out["ci"][key][:2])), key


def test_the_table_and_its_inference_fit_each_subset_once(monkeypatch):
    """cc.diagnose computes the clinical values for the metric table and again inside the inference: the second
    call is served from the memo (the same rows fitted once)."""
    import calib_core as cc
    from calib_core.inference import classification_clinical as icl

    calls = []
    real = icl.recalibration_columns
    monkeypatch.setattr(icl, "recalibration_columns", lambda *a, **k: calls.append(1) or real(*a, **k))
    icl._MEMO.clear()
    p, y, _ = _draw(600, 5)
    pset = cc.PredictionSet(task="classification", labels=y.astype(int), probs=np.column_stack([1 - p, p]))
    cc.diagnose(pset, n_resamples=50, n_simulations=200)
    assert len(calls) == 1
    values, notes = icl.clinical_values(p, y)
    values["ici"] = -1.0  # callers get copies: the memo is not changed through them
    notes.append("x")
    again, notes2 = icl.clinical_values(p, y)
    assert again["ici"] >= 0 and "x" not in notes2 and len(calls) == 1
