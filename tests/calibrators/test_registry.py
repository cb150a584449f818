"""The metric and calibrator registries (calib_core.calibrators.registry): complete, consistent with what the core
computes,
defaults read from the signatures, and shown by the Help page."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from streamlit.testing.v1 import AppTest

import calib_core as cc
from calib_core.calibrators import classification as ccal
from calib_core.calibrators import registry as reg
from calib_core.calibrators import regression as rcal
from calib_core.evaluation.classification import DEFAULT_CLASSIFICATION_METRICS
from calib_core.evaluation.regression import DEFAULT_METRICS
from calib_core.metrics import classification as cm

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def gaussian_set(n: int = 800, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n) * 2
    sigma = rng.uniform(0.3, 3.0, n)
    y = mu + 1.2 * sigma * rng.standard_normal(n)
    return cc.PredictionSet(task="regression", layout="gaussian", y=y, dist=cc.Gaussian(mu, sigma))


def quantile_set(n: int = 800, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    tau = np.arange(1, 10) / 10
    mu = rng.normal(size=n) * 2
    sigma = rng.uniform(0.3, 3.0, n)
    y = mu + 1.2 * sigma * rng.standard_normal(n)
    q = mu[:, None] + sigma[:, None] * np.array([-1.2816, -0.8416, -0.5244, -0.2533, 0, 0.2533, 0.5244, 0.8416,
                                                  1.2816])
    return cc.PredictionSet(task="regression", layout="quantile", y=y, dist=cc.QuantileSet(tau, q))


def classification_set(k: int, n: int = 800, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    probs = cm.softmax(rng.normal(size=(n, k)) * 2)
    labels = cm.simulate_labels(cm.softmax(0.6 * np.log(probs)), rng)
    return cc.PredictionSet(task="classification", labels=labels, probs=probs)


def ensemble_set(n: int = 600, m: int = 8, seed: int = 0) -> cc.PredictionSet:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=(n, 1)) * 2
    x = mu + rng.standard_normal((n, m + 1))
    return cc.PredictionSet(task="regression", layout="sample", y=x[:, 0], dist=cc.SampleSet(x[:, 1:]))


def report_keys(pset: cc.PredictionSet) -> set[str]:
    return set(cc.diagnose(pset, n_resamples=0, n_simulations=0, diagrams=False).metrics["metric"])


@pytest.fixture(scope="module")
def reports() -> dict[str, cc.Report]:
    return {
        "regression": cc.diagnose(gaussian_set(), n_resamples=0, n_simulations=0, diagrams=False),
        "quantile": cc.diagnose(quantile_set(), n_resamples=0, n_simulations=0, diagrams=False),
        "ensemble": cc.diagnose(ensemble_set(), n_resamples=0, n_simulations=0, diagrams=False),
        "binary": cc.diagnose(classification_set(2), n_resamples=0, n_simulations=0, diagrams=False),
        "multiclass": cc.diagnose(classification_set(5), n_resamples=0, n_simulations=0, diagrams=False),
    }


# ------------------------------------------------------------------------------------------------ metrics
#: Registered regression metrics that only some layouts report (quantile sets: the statistics of the stated levels)
LAYOUT_ONLY = {"pit_chi2", "max_level_deviation", "rank_chi2", "range_coverage"}


def test_every_report_metric_is_registered_and_vice_versa(reports):
    # layout-specific statistics (a quantile set's stated levels) are registered but absent from a Gaussian report
    keys = set(reg.metric_keys("regression"))
    gauss, quant = set(reports["regression"].metrics["metric"]), set(reports["quantile"].metrics["metric"])
    ens = set(reports["ensemble"].metrics["metric"])
    # a quantile set also reports the coverage of its other stated central intervals (levels 0.1 … 0.9: 20%, 40%,
    # 60%): members of the registered coverage family at those levels, outside the report's default levels
    stated = quant - keys
    assert stated == {"coverage_20", "coverage_40", "coverage_60"}
    assert all(reg.metric(k).family == "coverage" for k in stated)
    quant -= stated
    assert gauss <= keys and quant <= keys and ens <= keys
    assert keys == gauss | quant | ens
    assert keys - gauss <= LAYOUT_ONLY
    assert {"pit_chi2", "max_level_deviation"} <= quant - gauss
    assert {"rank_chi2", "range_coverage"} <= ens - gauss
    cls = set(reports["binary"].metrics["metric"]) | set(reports["multiclass"].metrics["metric"])
    assert cls == set(reg.metric_keys("classification"))
    point = cc.PredictionSet(task="regression", y=np.arange(5.0), point=np.arange(5.0) + 0.5)
    assert report_keys(point) <= set(reg.metric_keys("regression"))


def test_registered_functions_reproduce_the_report(reports):
    for name, pset in (("regression", gaussian_set()), ("quantile", quantile_set()), ("ensemble", ensemble_set())):
        table = reports[name].table()
        for m in reg.metrics("regression"):
            if m.key not in table.index:  # a statistic of another layout
                assert m.key in LAYOUT_ONLY
                continue
            assert m(pset.y, pset.dist) == pytest.approx(table.loc[m.key, "value"], rel=1e-9, abs=1e-12), m.key
    for name, k in (("binary", 2), ("multiclass", 5)):
        pset = classification_set(k)
        table = reports[name].table()
        for key in table.index:
            m = reg.metric(key, "classification")
            assert m(pset.labels, pset.probs) == pytest.approx(table.loc[key, "value"], rel=1e-9, abs=1e-12), key


def test_entries_are_complete_and_frozen():
    assert {m.task for m in reg.METRICS} == set(reg.TASKS)
    for m in reg.METRICS:
        assert m.label and m.formula and m.reading and m.kind in reg.KINDS
        assert m.direction in ("lower", "higher", None) or isinstance(m.direction, float)
        params = inspect.signature(m.fn).parameters
        assert all(k in params for k in m.options), m.key
    with pytest.raises(AttributeError):
        reg.METRICS[0].label = "x"  # type: ignore[misc]


def test_kinds_follow_what_each_metric_measures():
    calib = {"max_calibration_deviation", "calibration_rmse", "quantile_calibration_error", "miscalibration_area",
             "z_mean", "z_std", "ence", "coverage_90", "coverage_50"}
    assert calib <= set(reg.metric_keys("regression", reg.CALIBRATION))
    assert {"ece", "mce", "classwise_ece"} <= set(reg.metric_keys("classification", reg.CALIBRATION))
    assert {"nll", "crps", "interval_score_90"} <= set(reg.metric_keys("regression", reg.PROPER))
    assert {"nll", "brier"} == set(reg.metric_keys("classification", reg.PROPER))
    assert {"sharpness", "cv", "width_90", "rmse", "mae", "spearman_sigma_abs_error"} <= set(
        reg.metric_keys("regression", reg.DESCRIPTIVE))
    assert {"accuracy", "mean_confidence"} <= set(reg.metric_keys("classification", reg.DESCRIPTIVE))


def test_directions_and_families():
    assert reg.metric("coverage_90").direction == pytest.approx(0.9)
    assert reg.metric("z_mean").direction == 0.0 and reg.metric("z_std").direction == 1.0
    assert reg.metric("ece").direction == "lower" and reg.metric("accuracy").direction == "higher"
    m = reg.metric("coverage_97.5")  # any level, not only the report's
    assert (m.family, m.level, m.label, m.direction) == ("coverage", 0.975, "coverage 97.5%", 0.975)
    y, dist = gaussian_set().y, gaussian_set().dist
    assert m(y, dist) == pytest.approx(cc.regression.metrics.interval_coverage(y, dist, coverage=0.975))
    assert reg.metric("interval_score_95").label == "interval score 95%"
    assert reg.metric("nll", "classification").formula != reg.metric("nll", "regression").formula
    with pytest.raises(KeyError):
        reg.metric("no_such_metric")
    with pytest.raises(KeyError):
        reg.metric("ece", "regression")
    assert reg.metric_label("no_such_metric") == "no_such_metric"
    assert [reg.direction_text(d) for d in ("lower", 0.9, None)] == ["lower", "≈ 0.9", ""]


def test_evaluation_defaults_are_read_from_the_registry():
    assert DEFAULT_METRICS == reg.default_metric_keys("regression")
    assert DEFAULT_CLASSIFICATION_METRICS == reg.default_metric_keys("classification")
    assert set(DEFAULT_METRICS) <= set(reg.metric_keys("regression"))


# -------------------------------------------------------------------------------------------- calibrators
def _calibrator_classes(module) -> set[type]:
    """Public estimator classes ``module`` exports (defined in it or in its ``<task>_<topic>`` modules) that are used
    as calibrators (not their abstract bases)."""
    classes = {
        obj for name, obj in vars(module).items()
        if inspect.isclass(obj) and obj.__module__.startswith(module.__name__) and name in module.__all__
        and issubclass(obj, BaseEstimator) and hasattr(obj, "fit")
    }
    bases = {b for c in classes for b in c.__mro__[1:] if b in classes and not any(
        b is e.cls for e in reg.CALIBRATORS)}
    return classes - bases


@pytest.mark.parametrize("module, task", [(rcal, "regression"), (ccal, "classification")])
def test_every_calibrator_class_is_registered(module, task):
    registered = {e.cls for e in reg.calibrators(task)}
    assert _calibrator_classes(module) == registered
    assert not hasattr(rcal, "default_calibrators")  # one catalogue: the registry


def test_parameter_defaults_are_the_constructor_signature():
    for e in reg.CALIBRATORS:
        sig = inspect.signature(e.cls.__init__).parameters
        var = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        assert e.parameters == {k: p.default for k, p in sig.items() if k != "self" and p.kind not in var}
        assert e.make().get_params(deep=False) == e.parameters
        for t in e.tunable:
            assert t.name in e.parameters
            if t.kind == "choice":
                assert e.default_of(t.name) in t.options
            if t.kind in ("int", "float"):
                assert t.low <= e.default_of(t.name) <= t.high


def test_available_calibrators_respect_the_inputs():
    names = lambda **kw: {e.name for e in reg.available_calibrators(**kw)}  # noqa: E731
    assert names(task="regression", point_only=True) == {"constant σ"}
    assert {"k-means σ", "ACCRUE"} <= names(task="regression", has_features=True)
    assert "ACCRUE" not in names(task="regression")
    assert "Platt scaling" in names(task="classification", n_classes=2)
    assert "Platt scaling" not in names(task="classification", n_classes=3)
    assert reg.calibrator("BBQ").cls is ccal.BBQ and reg.calibrator("CRUDE", "regression").cls is rcal.CRUDE


# ------------------------------------------------------------------------------------------------- Help page
def test_help_page_shows_every_registry_entry():
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page("pages/help.py").run()
    assert not at.exception
    reg_t, cls_t, cal_t = (at.table[i].value for i in range(3))
    fams = {f.key: f.help_label for f in reg.FAMILIES}
    expected = {fams.get(m.family, m.label) for m in reg.metrics("regression")}
    assert set(reg_t["metric"]) == expected
    assert set(cls_t["metric"]) == {m.label for m in reg.metrics("classification")}
    assert set(reg_t["kind"]) <= set(reg.KINDS) and set(cls_t["kind"]) <= set(reg.KINDS)
    assert list(cal_t["calibrator"]) == [e.name for e in reg.CALIBRATORS]
    assert list(cal_t["paper"]) == [e.paper for e in reg.CALIBRATORS]
    dec_t = at.table[3].value  # the decomposition terms (Diagrams tab)
    assert list(dec_t["term"]) == [m.label for m in reg.DECOMPOSITION_TERMS]
    assert list(dec_t["paper"]) == [m.paper for m in reg.DECOMPOSITION_TERMS]


# ------------------------------------------------------------------------------------- decomposition terms
def test_decomposition_terms_are_described_and_reproduce_the_cores_tables():
    """MCB, DSC and UNC of the Brier, log and quantile scores are registry entries with the
    same fields as the metrics (not report metrics: kept out of METRICS) and their functions give the numbers of
    the CORP tables."""
    from calib_core.diagrams.classification_corp import binary_events, corp
    from calib_core.metrics.regression_decomposition import quantile_score_decomposition

    keys = {m.key for m in reg.DECOMPOSITION_TERMS}
    assert keys == {f"{t}_{s}" for t in ("mcb", "dsc", "unc") for s in ("brier", "log", "qs")}
    assert not keys & {m.key for m in reg.METRICS}
    for m in reg.DECOMPOSITION_TERMS:
        assert m.label and m.formula and m.paper and m.reading and m.kind in reg.KINDS
        params = inspect.signature(m.fn).parameters
        assert all(k in params for k in m.options), m.key
    assert {m.key for m in reg.DECOMPOSITION_TERMS if m.kind == reg.CALIBRATION} == {"mcb_brier", "mcb_log", "mcb_qs"}
    assert reg.decomposition_term("dsc_brier").direction == "higher"
    with pytest.raises(KeyError):
        reg.decomposition_term("mcb_crps")
    pset = classification_set(4)
    x, y = binary_events(pset.labels, pset.probs, target="top_label")
    table = corp(x, y, n_resamples=0, n_boot=0).decomposition.set_index("score")
    for score in ("brier", "log"):
        for term in ("mcb", "dsc", "unc"):
            m = reg.decomposition_term(f"{term}_{score}", "classification")
            assert m(pset.labels, pset.probs) == pytest.approx(table.loc[score, term], rel=1e-12, abs=1e-15)
    rset = gaussian_set()
    q = quantile_score_decomposition(rset.y, rset.dist, levels=[0.25], n_boot=0).iloc[0]
    for term in ("mcb", "dsc", "unc"):
        m = reg.decomposition_term(f"{term}_qs", "regression")
        assert m(rset.y, rset.dist, tau=0.25) == pytest.approx(q[term], rel=1e-12, abs=1e-15)
    help_table = reg.decomposition_help_table()
    assert list(help_table["term"]) == [m.label for m in reg.DECOMPOSITION_TERMS]
