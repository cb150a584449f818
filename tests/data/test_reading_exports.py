"""The loader reads files exported the way practitioners export them.

Class-named probability columns (``p_<class>``, ``prob_<class>``, ``<class>_prob``, ``proba_<class>``) with labels
given as class names and a pandas index column; split columns taken only when their values are calibration/test
roles (a ``fold`` 0–4 column becomes a group); what detection guesses for the mapping form; messages that have a
Data-page wording besides the Python one.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.predictions import Message, app_text
from calib_core.data.bytes import read_table
from calib_core.data.columns_patterns import find_score_columns, score_column
from calib_core.data.detect import detect_task, guess_columns
from calib_core.data.rows_labels import split_roles
from views import pages as views

IRIS = ["setosa", "versicolor", "virginica"]


def _iris_export(style: str, seed: int = 0, n: int = 150, index: bool = True) -> tuple[bytes, pd.DataFrame]:
    """A pandas ``to_csv()`` of a 3-class classifier's probabilities, as a scikit-learn user writes it."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([2.0, 2.0, 2.0], n)
    y = np.array(IRIS)[(rng.random(n)[:, None] > p.cumsum(axis=1)).sum(axis=1)]
    frame = pd.DataFrame({"y": y, **{style.format(c): p[:, k] for k, c in enumerate(IRIS)}},
                         index=rng.permutation(n) + 1000)
    return frame.to_csv(index=index).encode(), frame


@pytest.mark.parametrize("style", ["p_{}", "prob_{}", "{}_prob", "proba_{}", "{}_proba", "probability_{}"])
def test_class_named_probability_columns_are_classification(style):
    data, frame = _iris_export(style)
    assert detect_task(read_table(data)) == "classification"
    ps = cc.load_predictions(data, source="iris_preds.csv")
    assert ps.task == "classification" and ps.layout == "probs"
    assert ps.classes == IRIS
    np.testing.assert_allclose(ps.probs, frame[[style.format(c) for c in IRIS]].to_numpy())
    expected = np.array([IRIS.index(v) for v in frame["y"]])
    np.testing.assert_array_equal(ps.labels, expected)
    unused = next(m for m in ps.messages if m.startswith("columns not used"))
    assert "Unnamed: 0" in unused and "row index" in unused  # the pandas index is named as such


def test_class_names_keep_their_case_and_match_labels():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(2), 40)
    frame = pd.DataFrame({"label": np.where(rng.random(40) < p[:, 1], "Spam", "Ham"),
                          "Ham_prob": p[:, 0], "Spam_prob": p[:, 1]})
    ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="mail.csv")
    assert ps.classes == ["Ham", "Spam"]
    np.testing.assert_array_equal(ps.labels, (frame["label"] == "Spam").to_numpy().astype(int))


def test_score_column_names():
    assert score_column("p_setosa") == ("probs", "setosa", "p")
    assert score_column("Iris-virginica_prob") == ("probs", "Iris-virginica", "suffix")
    assert score_column("PROBA_cat") == ("probs", "cat", "prefix")
    assert score_column("logit_3") == ("logits", "3", "prefix")
    assert score_column("prob0") == ("probs", "0", "prefix")
    for name in ("p", "p1", "P12", "p_value", "max_prob", "top_prob", "y", "mean", "probe", "pred"):
        assert score_column(name) is None, name


def test_weak_score_names_need_a_class_vector():
    # one p_<x> / <x>_prob column is no class vector (p_hat next to a regression target is regression)
    frame = pd.DataFrame({"y": [1.0, 2.0, 3.0], "mean": [1.1, 2.0, 2.9], "p_hat": [0.1, 0.2, 0.3]})
    assert find_score_columns(frame) == {"probs": [], "logits": []}
    assert detect_task(frame) == "regression"
    # ECMWF members P_1 … with a control run are an ensemble, not class probabilities
    ens = pd.DataFrame({"obs": [1.0, 2.0], "CTR": [1.0, 2.0], "P_1": [1.2, 2.2], "P_2": [0.9, 1.8]})
    assert find_score_columns(ens)["probs"] == []
    assert detect_task(ens) == "regression"


def _regression(extra: dict, n: int = 100, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"y": rng.normal(size=n), "mean": rng.normal(size=n) * 0.1, "std": rng.uniform(0.5, 2, n),
                          **{k: (v(n) if callable(v) else v) for k, v in extra.items()}})
    return frame.to_csv().encode()  # with the pandas index, as exported


def test_fold_column_is_a_group_not_the_split():
    ps = cc.load_predictions(_regression({"fold": lambda n: np.arange(n) % 5}), source="cv.csv")
    assert ps.split is None
    np.testing.assert_array_equal(ps.group, (np.arange(100) % 5).astype(str))
    note = next(m for m in ps.messages if "'fold'" in m)
    assert "group" in note and "columns={'split': 'fold'}" in note  # the Python wording …
    assert "Column mapping" in app_text(note) and "columns=" not in app_text(note)  # … and the page's
    assert views.filter_choices(ps)[1][1:] == ["0", "1", "2", "3", "4"]


def test_fold_column_next_to_a_group_is_left_unused_with_a_note():
    ps = cc.load_predictions(_regression({"fold": lambda n: np.arange(n) % 5, "group": "a"}), source="cv.csv")
    assert ps.split is None and set(ps.group) == {"a"}
    assert any("'fold'" in m and "not used" in m for m in ps.messages)


@pytest.mark.parametrize(
    ("column", "values", "n_test"),
    [
        ("split", lambda n: np.where(np.arange(n) < 60, "cal", "test"), 40),
        ("split", lambda n: np.where(np.arange(n) < 60, "calibration", "test"), 40),
        ("subset", lambda n: np.where(np.arange(n) < 30, "Validation", "Test"), 70),
        ("split", lambda n: (np.arange(n) >= 75).astype(int), 25),  # 1 = test
        ("is_test", lambda n: (np.arange(n) >= 50).astype(int), 50),
        ("is_cal", lambda n: (np.arange(n) < 90).astype(int), 10),  # 1 = cal
        ("role", lambda n: np.where(np.arange(n) < 80, "cal", "test"), 20),
        ("fold", lambda n: np.where(np.arange(n) < 50, "cal", "test"), 50),  # roles, whatever the name
    ],
)
def test_split_columns_with_role_values(column, values, n_test):
    ps = cc.load_predictions(_regression({column: values}), source="s.csv")
    assert ps.group is None
    assert set(ps.split) == {"cal", "test"} and int((ps.split == "test").sum()) == n_test
    assert views.filter_choices(ps)[2] == ["all", "cal", "test"]


def test_train_rows_of_a_role_column_are_neither_cal_nor_test():
    ps = cc.load_predictions(
        _regression({"split": lambda n: np.array(["train", "cal", "test", "test"] * (n // 4))}), source="s.csv")
    assert pd.Series(ps.split).value_counts().to_dict() == {"test": 50, "train": 25, "cal": 25}


def test_binary_split_values_in_a_fold_column_are_a_group():
    ps = cc.load_predictions(_regression({"fold": lambda n: np.arange(n) % 2}), source="s.csv")
    assert ps.split is None and set(ps.group) == {"0", "1"}


def test_explicit_split_mapping_is_taken_as_given():
    ps = cc.load_predictions(_regression({"fold": lambda n: np.arange(n) % 5}), columns={"split": "fold"},
                             source="s.csv")
    assert ps.group is None and set(ps.split) == {"0", "1", "2", "3", "4"}


def test_split_roles_function():
    v = np.array(["0", "1", "1", "(missing)"], dtype=object)
    mapped, note = split_roles(v, "is_test")
    assert mapped.tolist() == ["cal", "test", "test", "(missing)"] and "1 read as test" in note
    assert split_roles(v, "fold") is None
    assert split_roles(np.array(["A", "B"], dtype=object), "split") is None
    assert split_roles(np.array(["train", "train"], dtype=object), "split") is None  # no cal or test rows


def test_guess_columns_and_the_form_values():
    data, _ = _iris_export("p_{}")
    guess = guess_columns(read_table(data))
    assert guess == {"task": "classification", "label": "y", "probs": [f"p_{c}" for c in IRIS]}
    form = views.mapping_form_values(guess)
    assert form["task"] == "classification" and form["label"] == "y" and form["scores"] == guess["probs"]
    assert views.column_mapping("classification", form) == {"label": "y", "probs": guess["probs"]}

    frame = read_table(_regression({"fold": lambda n: np.arange(n) % 5}))
    guess = guess_columns(frame)
    assert guess == {"task": "regression", "y": "y", "mean": "mean", "std": "std", "group": "fold"}
    form = views.mapping_form_values(guess)
    assert (form["kind"], form["spread"], form["split"], form["group"]) == ("std", "std", "—", "fold")
    assert views.column_mapping("regression", form) == {"y": "y", "mean": "mean", "std": "std", "group": "fold"}

    q = pd.DataFrame({"target": [1.0, 2.0], "q0.1": [0.5, 1.5], "q0.9": [1.5, 2.5], "split": ["cal", "test"]})
    guess = guess_columns(q)
    assert guess == {"task": "regression", "y": "target", "quantiles": ["q0.1", "q0.9"], "split": "split"}
    form = views.mapping_form_values(guess)
    assert form["kind"] == "quantiles" and form["multi"] == ["q0.1", "q0.9"]


def test_guess_never_raises_on_ambiguous_names():
    frame = pd.DataFrame({"Mean": [1.0], "mean": [2.0], "y": [1.0], "std": [1.0]})
    assert "mean" not in guess_columns(frame) and guess_columns(frame)["y"] == "y"


# ---------------------------------------------------------------------------------------- page wording
PY_WORDS = ("columns=", "columns[", "task=", "renormalize=", "max_bytes", "crossing=", "layout=")


def _error(data: bytes, **kwargs) -> cc.InputError:
    with pytest.raises(cc.InputError) as info:
        cc.load_predictions(data, source="f.csv", **kwargs)
    return info.value


@pytest.mark.parametrize(
    "csv",
    [
        b"a,b,c\n1,2,3\n4,5,6\n",  # no target
        b"y,b,c\n1,2,3\n4,5,6\n",  # no prediction
        b"label,prob_0,prob_1,prob_2\n0,0.5,0.6,0.1\n1,0.2,0.2,0.2\n",  # rows not summing to 1
        b"label,prob_a,prob_b\nc,0.5,0.5\nd,0.2,0.8\n",  # labels that are no class
        b"label,prob\nx,0.4\nx,0.6\n",  # one label value: no positive class (two values: the second, stated)
        b"y,mean,Mean,std\n1,2,3,1\n2,3,4,1\n",  # ambiguous mean
    ],
)
def test_errors_have_a_page_wording_without_python_arguments(csv):
    err = _error(csv)
    assert any(w in str(err) for w in PY_WORDS) or "columns" in str(err)  # the Python wording stays
    page = err.app_message()
    assert not any(w in page for w in PY_WORDS), page
    assert page.startswith("f.csv:") and err.message in page


def test_renormalise_hint_names_the_check_box():
    err = _error(b"label,prob_0,prob_1,prob_2\n0,0.5,0.6,0.1\n1,0.2,0.2,0.2\n")
    assert "renormalize=True" in str(err)
    assert "Renormalise probability rows that do not sum to 1" in err.app_message()


def test_input_error_and_messages_survive_pickling():
    err = _error(b"a,b,c\n1,2,3\n4,5,6\n")
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.app_message() == err.app_message() and back.columns == err.columns
    m = Message("pass columns={}", "use the form")
    back = pickle.loads(pickle.dumps([m]))[0]
    assert back == m and app_text(back) == "use the form"


def test_layout_alternative_message_has_a_page_wording():
    frame = pd.DataFrame({"y": [1.0, 2.0, 3.0], "mean": [1.0, 2.0, 3.0], "std": [1.0, 1.0, 1.0],
                          "q0.1": [0.0, 1.0, 2.0], "q0.9": [2.0, 3.0, 4.0]})
    ps = cc.load_predictions(io.BytesIO(frame.to_csv(index=False).encode()), source="q.csv")
    msg = next(m for m in ps.messages if m.startswith("using the quantile layout"))
    assert "layout='gaussian'" in msg  # the keyword that chooses the other layout (was columns={'quantiles': None})
    assert "under Layout (Upload a prediction file)" in app_text(msg) and "layout=" not in app_text(msg)
    assert all(not any(w in m for w in PY_WORDS) for m in views.loader_messages(ps))


def test_every_hint_in_python_words_has_a_page_wording():
    """An ast scan of the loader: every InputError whose hint names a Python argument (columns=, task=, …) also gives
    an app_hint, so no path can show Python arguments on the Data page."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "calib_core"
    missing = []
    for rel in ("data/bytes.py", "data/text.py", "data/columns.py", "data/rows.py", "data/detect.py", "data/timecol.py",
                "data/regression.py", "data/regression_layout.py", "data/classification.py", "api.py"):
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "InputError":
                kw = {k.arg: k.value for k in node.keywords}
                if "hint" in kw and any(w in ast.unparse(kw["hint"]) for w in PY_WORDS) and "app_hint" not in kw:
                    missing.append(f"{rel}:{node.lineno}")
    assert not missing, missing
