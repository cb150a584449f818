"""Files built the way ML tools write them load with no mapping.

``pd.DataFrame(clf.predict_proba(X), columns=clf.classes_)`` beside a label column (scikit-learn's wine, breast
cancer and digits data, a fitted LogisticRegression or GaussianNB; with and without ``to_csv``'s unnamed index
column; every label alias), string labels, one binary probability column with text labels (the positive class
stated and switchable), several forecasters of one binary event read as several models (the same results as the
file reshaped by hand), the real Niamey file, and messages that name the control that fixes a file and never advise
deleting data.
"""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import calib_core as cc
from calib_core.cli import main as cli_main
from calib_core.data.bytes import read_table
from calib_core.data.columns import ALIASES, normalize_name
from calib_core.data.columns_option import cli_message, parse_columns
from calib_core.data.columns_patterns import find_sample_columns, parse_quantile_level, score_column
from calib_core.data.detect import detect_task, guess_columns
from calib_core.data.detect_exports import EXPORT_LABEL_NAMES, detect_export
from views import pages as views

LABEL_NAMES = ("y", "y_true", "true_label", "target", "label", "class", "actual", "obs")
NIAMEY = Path("/work/shared/data/real/weather_niamey_pop_binary/precip_Niamey_2016.csv")
WINE = ["barolo", "grignolino", "barbera"]


def _logistic():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


def _fitted(loader, model, names=None):
    X, y = loader(return_X_y=True)
    labels = np.array(names, dtype=object)[y] if names is not None else y
    clf = model.fit(X, labels)
    return clf, X, labels


@pytest.fixture(scope="module")
def exports():
    """(name, frame of predict_proba with classes_ as columns, labels) for the three data sets."""
    out = []
    for name, loader, model, names in (
        ("wine", load_wine, GaussianNB(), None),
        ("wine-names", load_wine, GaussianNB(), WINE),
        ("breast_cancer", load_breast_cancer, GaussianNB(), None),
        ("breast_cancer-names", load_breast_cancer, GaussianNB(), list(load_breast_cancer().target_names)),
        ("digits", load_digits, GaussianNB(), None),
    ):
        clf, X, labels = _fitted(loader, model, names)
        out.append((name, pd.DataFrame(clf.predict_proba(X), columns=clf.classes_), labels, list(clf.classes_)))
    return out


@pytest.mark.parametrize("label", LABEL_NAMES)
@pytest.mark.parametrize("index", [False, True])
def test_predict_proba_frames_load_with_no_mapping(exports, label, index):
    for name, proba, labels, classes in exports:
        frame = proba.copy()
        frame.insert(0 if label == "obs" else frame.shape[1], label, labels)
        data = frame.to_csv(index=index).encode()
        assert detect_task(read_table(data)) == "classification", name
        ps = cc.load_predictions(data, source=f"{name}.csv")
        assert ps.task == "classification" and ps.layout == "probs", name
        assert ps.classes == [str(c) for c in classes], name
        np.testing.assert_allclose(ps.probs, proba.to_numpy(), atol=1e-12)
        np.testing.assert_array_equal(np.array(ps.classes, dtype=object)[ps.labels], np.asarray(labels).astype(str))
        guess = guess_columns(read_table(data))
        assert guess["task"] == "classification" and guess["label"] == label
        assert guess["probs"] == [str(c) for c in classes]


def test_logistic_regression_wine_names_and_a_class_absent_from_the_rows():
    clf, X, labels = _fitted(load_wine, _logistic(), WINE)
    frame = pd.DataFrame(clf.predict_proba(X), columns=clf.classes_).assign(true_label=labels)
    ps = cc.load_predictions(frame.to_csv().encode(), source="wine.csv")
    assert ps.classes == sorted(WINE)
    part = frame[frame["true_label"] != "barbera"]  # a test subset without one class: its column still counts
    ps = cc.load_predictions(part.to_csv(index=False).encode(), source="wine_part.csv")
    assert ps.classes == sorted(WINE) and ps.n_rows == len(part)
    np.testing.assert_allclose(ps.probs, part[sorted(WINE)].to_numpy())


_RESERVED = {k for v in ALIASES.values() for k in v} | set(EXPORT_LABEL_NAMES) | {"unnamed:_0", "index", "nan", "na",
                                                                                  "n/a", "null", "none", "true",
                                                                                  "false", "inf"}


def _free_name(name: str) -> bool:
    key = normalize_name(name)
    return (key not in _RESERVED and score_column(name) is None and parse_quantile_level(name) is None
            and not find_sample_columns(pd.DataFrame(columns=[name])) and not key.startswith(("x", "feature", "feat"))
            and name == name.strip() and "\n" not in name and "\r" not in name and '"' not in name)


CLASS_TEXT = st.text(alphabet=string.ascii_letters + " éüßøλ中文-", min_size=1, max_size=12).filter(_free_name)
CLASS_NUMBERS = st.integers(0, 50).map(str)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.one_of(st.lists(CLASS_TEXT, min_size=2, max_size=6, unique_by=str.casefold),
                       st.lists(CLASS_NUMBERS, min_size=2, max_size=6, unique=True)),
       label=st.sampled_from(LABEL_NAMES), index=st.booleans(), seed=st.integers(0, 2**16))
def test_class_names_of_every_kind_are_detected(names, label, index, seed):
    """Numbers, text, spaces and unicode as class names (names that are another role's — mean, q0.5, prob_a — are
    left out: those columns mean that role)."""
    rng = np.random.default_rng(seed)
    n = 40
    p = rng.dirichlet(np.ones(len(names)), n)
    y = np.array(names, dtype=object)[np.arange(n) % len(names)]
    frame = pd.DataFrame(p, columns=names)
    frame[label] = y
    data = frame.to_csv(index=index).encode()
    ps = cc.load_predictions(data, source="fuzz.csv")
    expected = sorted(names, key=int) if all(s.isdigit() for s in names) else list(names)
    assert ps.layout == "probs" and ps.classes == expected
    np.testing.assert_allclose(ps.probs, frame[expected].to_numpy(), atol=1e-12)
    np.testing.assert_array_equal(np.array(ps.classes, dtype=object)[ps.labels], y)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(CLASS_TEXT, min_size=2, max_size=12, unique_by=str.casefold), index=st.booleans(),
       seed=st.integers(0, 2**16))
def test_class_names_of_every_kind_are_detected_many(names, index, seed):
    test_class_names_of_every_kind_are_detected.hypothesis.inner_test(names, "y", index, seed)


def test_text_target_makes_the_mapping_form_a_classification_one():
    frame = pd.DataFrame({"y": ["barolo", "barbera", "grignolino"] * 5, "score_a": range(15), "score_b": range(15)})
    guess = guess_columns(read_table(frame.to_csv(index=False).encode()))
    assert guess["task"] == "classification" and guess["label"] == "y"
    assert views.mapping_form_values(guess)["task"] == "classification"


def test_text_labels_in_a_numeric_role_are_never_advised_away():
    """A regression reading of text labels (a mapping that makes y a label column) names the control, never
    'leave them empty'."""
    clf, X, labels = _fitted(load_breast_cancer, GaussianNB(), list(load_breast_cancer().target_names))
    frame = pd.DataFrame({"y": labels, "mean": clf.predict_proba(X)[:, 1], "std": 0.1})
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(frame.to_csv(index=False).encode(), source="bc.csv")
    assert "569 row" in str(err.value) and "leave them empty" not in str(err.value)
    assert "task='classification'" in str(err.value) and "columns={'label': 'y'}" in str(err.value)
    assert "Task: classification under Column mapping" in err.value.app_message()
    with pytest.raises(cc.InputError) as err:  # a few bad cells: correct them, never empty them
        cc.load_predictions(b"y,mean,std\n1,2,1\nabc,2,1\n3,2,1\n4,2,1\n", source="typo.csv")
    assert "leave them empty" not in str(err.value) and "correct those cells" in str(err.value)


@pytest.mark.parametrize("column,positive", [("malignant", "malignant"), ("benign", "benign"), ("prob", "malignant"),
                                             ("score", "malignant"), ("risk", "malignant")])
def test_one_binary_column_with_text_labels_states_its_positive_class(column, positive):
    clf, X, labels = _fitted(load_breast_cancer, _logistic(), list(load_breast_cancer().target_names))
    k = list(clf.classes_).index(positive)
    frame = pd.DataFrame({"target": labels, column: clf.predict_proba(X)[:, k]})
    ps = cc.load_predictions(frame.to_csv().encode(), source="bc.csv")
    other = "benign" if positive == "malignant" else "malignant"
    assert ps.layout == "binary_prob" and ps.classes == [other, positive]
    np.testing.assert_allclose(ps.probs[:, 1], frame[column])
    np.testing.assert_array_equal(ps.labels, (labels == positive).astype(int))
    said = next(m for m in ps.messages if "positive class" in m)
    assert f"positive class {positive!r}" in said and f"columns={{'positive': '{other}'}}" in said
    assert "'Positive class'" in views.app_text(said)
    # switched: the column is read as the other class's probability (a wrong guess corrected)
    switched = cc.load_predictions(frame.to_csv().encode(), source="bc.csv", columns={"positive": other})
    assert switched.classes == [positive, other]
    np.testing.assert_allclose(switched.probs[:, 1], frame[column])
    np.testing.assert_array_equal(switched.labels, 1 - ps.labels)


def _forecasters(seed: int = 0, n: int = 300, nan: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    frame = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=n).strftime("%Y-%m-%d"),
                          "Logistic": p, "EMOS": np.clip(p + rng.normal(0, 0.1, n), 0.01, 0.99),
                          "ENS": np.round(np.clip(p ** 0.5, 0, 1) * 50) / 50, "EPC": np.full(n, p.mean()),
                          "obs": (rng.random(n) < p).astype(int)})
    if nan:
        frame.loc[[4, 17], "ENS"] = np.nan
    return frame


def _long(frame: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """The same predictions reshaped by hand: one row per model and date."""
    return frame.melt(id_vars=["date", "obs"], value_vars=models, var_name="model", value_name="prob")


@pytest.mark.parametrize("nan", [False, True])
def test_several_forecasters_are_several_models_like_the_long_file(nan):
    frame = _forecasters(nan=nan)
    models = ["Logistic", "EMOS", "ENS", "EPC"]
    wide = cc.load_predictions(frame.to_csv(index=False).encode(), source="pop.csv")
    long = cc.load_predictions(_long(frame, models).to_csv(index=False).encode(), source="pop_long.csv")
    assert wide.models() == long.models() == models
    assert wide.layout == long.layout == "binary_prob" and wide.classes == long.classes == ["0", "1"]
    np.testing.assert_array_equal(wide.labels, long.labels)
    np.testing.assert_array_equal(wide.probs, long.probs)
    assert wide.n_read == long.n_read and wide.dropped.total == long.dropped.total == 2 * nan
    if nan:
        note = next(m for m in wide.messages if "read as 4 models" in m)
        assert "ENS file row 5" in note and "ENS file row 18" in note
    options = {"n_resamples": 50, "n_simulations": 50, "seed": 1}
    a, b = cc.diagnose(wide, **options).metrics, cc.diagnose(long, **options).metrics
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
    for model in models:  # per-model metrics are those of the model's column alone
        part = frame[["obs", model]].dropna()
        brier = a[(a["model"] == model) & (a["metric"] == "brier")]["value"].iloc[0]
        p = part[model].to_numpy()
        assert brier == pytest.approx(np.mean((p - part["obs"]) ** 2 + ((1 - p) - (1 - part["obs"])) ** 2), rel=1e-9)
    if not nan:
        ca, cb = cc.compare_models(wide, n_boot=50), cc.compare_models(long, n_boot=50)
        pd.testing.assert_frame_equal(ca.table, cb.table)


def test_model_columns_by_mapping_cli_and_guess():
    frame = _forecasters()
    frame = frame.rename(columns={"obs": "rain_today"})  # no label name: detection cannot guess
    data = frame.to_csv(index=False).encode()
    with pytest.raises(cc.InputError):
        cc.load_predictions(data, source="pop.csv")
    mapping = {"label": "rain_today", "model_columns": ["Logistic", "ENS"]}
    ps = cc.load_predictions(data, source="pop.csv", columns=mapping)
    assert ps.models() == ["Logistic", "ENS"] and ps.n_rows == 2 * len(frame)
    assert parse_columns(["label=rain_today,model_columns=Logistic|ENS"]) == mapping
    form = {"label": "rain_today", "models": ["Logistic", "ENS"], "scores": [], "positive": ""}
    assert views.column_mapping("classification", form) == mapping
    assert views.column_mapping("classification", {**form, "positive": "0"})["positive"] == "0"
    with pytest.raises(cc.InputError, match="cannot be read together") as err:
        cc.load_predictions(data, source="pop.csv", columns={**mapping, "probs": "EMOS"})
    assert "Column mapping" in err.value.app_message()
    guess = guess_columns(read_table(_forecasters().to_csv(index=False).encode()))
    assert guess["label"] == "obs" and guess["model_columns"] == ["Logistic", "EMOS", "ENS", "EPC"]
    values = views.mapping_form_values(guess)
    assert values["models"] == ["Logistic", "EMOS", "ENS", "EPC"] and values["task"] == "classification"


def test_cli_reads_model_columns_and_a_positive_class(tmp_path, capsys):
    path = tmp_path / "pop.csv"
    _forecasters(n=80).rename(columns={"obs": "rain_today"}).to_csv(path, index=False)
    out = tmp_path / "report.txt"
    code = cli_main(["report", str(path), "--columns", "label=rain_today,model_columns=Logistic|EMOS",
                     "--columns", "positive=1", "--resamples", "0", "--simulations", "0", "--out", str(out)])
    assert code == 0
    text = out.read_text()
    assert "Logistic" in text and "EMOS" in text
    assert "--columns positive=0" in cli_message("pass columns={'positive': '0'} to switch.")


def test_regression_files_stay_regression():
    rng = np.random.default_rng(5)
    y = rng.normal(size=50)
    p = rng.dirichlet(np.ones(3), 50)
    cases = [
        pd.DataFrame({"y": (y > 0).astype(int), "mean": rng.uniform(size=50), "std": 0.2}),  # binary y, Gaussian
        pd.DataFrame({"y": y, "0": p[:, 0], "1": p[:, 1], "2": p[:, 2]}),  # numbers as names, continuous y
        pd.DataFrame({"y": y, "a": rng.uniform(size=50), "b": rng.uniform(size=50)}),  # continuous y
    ]
    for frame in cases:
        table = read_table(frame.to_csv(index=False).encode())
        assert detect_export(table) is None
        assert detect_task(table) == "regression"


def test_cannot_guess_messages_name_the_control():
    for data in (b"rain_today,A,B\n1,0.2,0.3\n0,0.4,0.5\n",  # no label name
                 b"label,prob\nx,0.4\nx,0.6\n"):  # one label value: no positive class
        with pytest.raises(cc.InputError) as err:
            cc.load_predictions(data, source="f.csv")
        page = err.value.app_message()
        assert "Column mapping" in page or "Positive class" in page, page
        assert "delete" not in page and "leave them empty" not in page and "remove" not in page


@pytest.mark.skipif(not NIAMEY.is_file(), reason="the real Niamey file is not on this machine")
def test_real_niamey_file_reads_as_four_models():
    ps = cc.load_predictions(NIAMEY)
    assert ps.models() == ["Logistic", "EMOS", "ENS", "EPC"] and ps.n_rows == 4 * 92 and ps.dropped.total == 0
    report = cc.diagnose(ps, n_resamples=0, n_simulations=0)
    m = report.metrics[report.metrics["group"] == cc.ALL].pivot_table(index="model", columns="metric",
                                                                      values="value")
    # PROVENANCE: Brier 0.2057, 0.2320, 0.2662, 0.2343 (one-class Brier; ours sums both classes: twice it)
    expected = {"Logistic": 0.2057, "EMOS": 0.2320, "ENS": 0.2662, "EPC": 0.2343}
    for model, brier in expected.items():
        assert m.loc[model, "brier"] == pytest.approx(2 * brier, abs=2e-4)
    print("\n" + m[[c for c in ("brier", "nll", "ece") if c in m.columns]].round(4).to_string())


def test_positive_choice_only_for_one_column_binary_files():
    frame = pd.DataFrame({"y": [0, 1, 1, 0], "0": [0.8, 0.3, 0.1, 0.6], "1": [0.2, 0.7, 0.9, 0.4]})
    both = cc.load_predictions(frame.to_csv(index=False).encode(), source="two.csv")
    assert both.layout == "probs" and views.positive_choices(both) is None  # a column per class: nothing to choose
    same = cc.load_predictions(frame.to_csv(index=False).encode(), source="two.csv", columns={"positive": "0"})
    np.testing.assert_array_equal(same.probs, both.probs)  # 'positive' names no column to leave out
    one = cc.load_predictions(frame[["y", "1"]].to_csv(index=False).encode(), source="one.csv")
    assert one.layout == "binary_prob" and views.positive_choices(one) == ["0", "1"]
    niamey_like = _forecasters(n=30)
    models = cc.load_predictions(niamey_like.to_csv(index=False).encode(), source="pop.csv", columns={"positive": "0"})
    assert models.models() == ["Logistic", "EMOS", "ENS", "EPC"] and models.classes == ["1", "0"]
