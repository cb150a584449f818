"""AppTest of the Data page with common exports: class-named probability columns load as
classification, a ``fold`` column becomes a group, messages speak of the page's controls and the column-mapping
form opens pre-filled with what detection guessed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.app.test_pages import new_app, upload

PY_WORDS = ("columns=", "columns[", "task=", "renormalize=", "max_bytes", "pass ")


def _texts(at) -> list[str]:
    return [e.value for e in (*at.markdown, *at.caption, *at.error, *at.info, *at.warning)]


def test_pandas_export_with_class_named_columns_loads_as_classification():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), 90)
    names = np.array(["setosa", "versicolor", "virginica"])
    frame = pd.DataFrame({"y": names[rng.integers(0, 3, 90)], "p_setosa": p[:, 0], "p_versicolor": p[:, 1],
                          "p_virginica": p[:, 2]}, index=rng.permutation(90))
    at = upload(new_app(), "iris_preds.csv", frame.to_csv().encode())
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    assert pset.task == "classification" and pset.classes == list(names)
    assert [m.value for m in at.metric][3] == "3"  # classes
    # the (collapsed) mapping form holds what detection found
    assert at.segmented_control(key="data_map_task").value == "classification"
    assert at.selectbox(key="data_map_label").value == "y"
    assert at.multiselect(key="data_map_scores").value == ["p_setosa", "p_versicolor", "p_virginica"]


def test_fold_column_is_offered_as_a_group_in_the_pages_words():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"y": rng.normal(size=100), "mean": 0.0, "std": 1.0, "fold": np.arange(100) % 5})
    at = upload(new_app(), "cv.csv", frame.to_csv(index=False).encode())
    pset = at.session_state["pset"]
    assert pset.split is None and pset.group is not None
    note = next(t for t in _texts(at) if "'fold'" in t)
    assert "group" in note and "Column mapping" in note and not any(w in note for w in PY_WORDS), note
    assert at.selectbox(key="data_map_group").value == "fold" and at.selectbox(key="data_map_split").value == "—"
    at.switch_page("pages/regression.py").run()
    assert not at.exception
    assert at.selectbox(key="reg_rows").disabled  # no cal/test roles: nothing to pick …
    group = at.selectbox(key="reg_group")
    assert not group.disabled and "4" in group.options  # … but the folds are groups


def test_failed_detection_speaks_of_the_form_and_prefills_it():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"target_value": rng.normal(size=60), "guess": rng.normal(size=60),
                          "sd": rng.uniform(0.5, 2, 60), "split": np.repeat(["calibration", "test"], 30)})
    at = upload(new_app(), "odd.csv", frame.to_csv(index=False).encode())
    assert at.error
    message = at.error[0].value
    assert "odd.csv" in message and "Column mapping" in message
    assert not any(w in message for w in PY_WORDS), message
    # pre-filled: the spread and the split were recognised; the target was not
    assert at.selectbox(key="data_map_kind").value == "std"
    assert at.selectbox(key="data_map_spread").value == "sd"
    assert at.selectbox(key="data_map_split").value == "split"
    assert at.selectbox(key="data_map_y").value == "—"
    at.selectbox(key="data_map_y").select("target_value")
    at.selectbox(key="data_map_mean").select("guess")
    at.button(key="data_map_apply").click().run()
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    assert pset.layout == "gaussian" and set(pset.split) == {"cal", "test"}
    np.testing.assert_allclose(pset.dist.std(), frame["sd"])


def test_rows_not_summing_to_one_name_the_check_box():
    at = upload(new_app(), "bad.csv", b"label,prob_0,prob_1,prob_2\n0,0.5,0.6,0.1\n1,0.2,0.2,0.2\n")
    message = at.error[0].value
    assert "Renormalise probability rows that do not sum to 1" in message
    assert not any(w in message for w in PY_WORDS), message
