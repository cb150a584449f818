"""AppTest of the Data page with files as ML tools write them: each loads with no mapping (class-name columns, one
binary column with text labels and its Positive class control, several forecasters of one binary event as several
models), and the column-mapping form picks several model columns when detection cannot guess."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.app.test_pages import new_app, upload

PY_WORDS = ("columns=", "columns[", "task=", "renormalize=", "pass ")


def _wine_names(index: bool) -> bytes:
    rng = np.random.default_rng(0)
    names = ["barolo", "grignolino", "barbera"]
    p = rng.dirichlet(np.ones(3), 120)
    frame = pd.DataFrame(p, columns=names)
    frame["true_label"] = np.array(names)[np.arange(120) % 3]
    return frame.to_csv(index=index).encode()


def _binary_text() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    p = rng.uniform(0.02, 0.98, 150)
    return pd.DataFrame({"target": np.where(rng.random(150) < p, "malignant", "benign"), "prob": p})


def _forecasters(label: str = "obs") -> pd.DataFrame:
    rng = np.random.default_rng(2)
    p = rng.uniform(0.05, 0.95, 120)
    return pd.DataFrame({"date": pd.date_range("2016-07-01", periods=120).strftime("%Y-%m-%d"), "Logistic": p,
                         "EMOS": np.clip(p + rng.normal(0, 0.1, 120), 0.01, 0.99), "EPC": np.full(120, 0.55),
                         label: (rng.random(120) < p).astype(int)})


def test_class_name_columns_load_with_no_mapping():
    for index in (False, True):
        at = upload(new_app(), "wine.csv", _wine_names(index))
        assert not at.error, [e.value for e in at.error]
        pset = at.session_state["pset"]
        assert pset.task == "classification" and pset.classes == ["barolo", "grignolino", "barbera"]  # file order
        assert at.selectbox(key="data_map_label").value == "true_label"
        assert at.multiselect(key="data_map_scores").value == ["barolo", "grignolino", "barbera"]


def test_binary_text_labels_show_a_positive_class_that_switches():
    at = upload(new_app(), "bc.csv", _binary_text().to_csv().encode())
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    assert pset.layout == "binary_prob" and pset.classes == ["benign", "malignant"]
    control = at.selectbox(key="data_positive")
    assert control.value == "malignant" and control.options == ["benign", "malignant"]
    said = [e.value for e in at.markdown if "positive class" in e.value]
    assert said and "Positive class" in said[0] and not any(w in said[0] for w in PY_WORDS), said
    control.select("benign").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    switched = at.session_state["pset"]
    assert switched.classes == ["malignant", "benign"]
    np.testing.assert_array_equal(switched.labels, 1 - pset.labels)
    assert at.selectbox(key="data_positive").value == "benign"


def test_several_forecasters_load_as_models_and_reach_the_pages():
    at = upload(new_app(), "pop.csv", _forecasters().to_csv(index=False).encode())
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]
    assert pset.models() == ["Logistic", "EMOS", "EPC"] and pset.n_rows == 360
    assert at.multiselect(key="data_map_models").value == ["Logistic", "EMOS", "EPC"]
    at.switch_page("pages/classification.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]


def test_mapping_form_picks_several_model_columns():
    at = upload(new_app(), "rain.csv", _forecasters("rain_today").to_csv(index=False).encode())
    assert at.error  # no label name: detection cannot guess …
    message = at.error[0].value
    assert "Column mapping" in message and not any(w in message for w in PY_WORDS), message
    at.segmented_control(key="data_map_task").set_value("classification").run()
    at.selectbox(key="data_map_label").select("rain_today")
    at.multiselect(key="data_map_scores").set_value([])
    at.multiselect(key="data_map_models").set_value(["Logistic", "EPC"]).run()
    at.button(key="data_map_apply").click().run()
    assert not at.error, [e.value for e in at.error]
    pset = at.session_state["pset"]  # … the form reads the two columns as two models
    assert pset.models() == ["Logistic", "EPC"] and pset.n_rows == 240
