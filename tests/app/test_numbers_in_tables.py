"""Tiny and huge numbers are shown as numbers: a naive-Bayes export's 2.9e-149 is drawn with an exponent (a ``%g``
number format, so the column still sorts) and a value of 1e300 as the text ``1e+300`` in the Data page's tables —
never as a row of zeros or an error cell."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from tests.app.test_pages import new_app, upload


def test_tiny_and_huge_values_get_formats_the_grid_can_draw():
    rng = np.random.default_rng(0)
    n = 80
    p1 = rng.uniform(0.05, 0.95, n)
    p1[:3] = [2.9e-149, 1e-300, 1 - 1e-12]
    frame = pd.DataFrame({"y": (rng.uniform(size=n) < p1).astype(int), "p_0": 1 - p1, "p_1": p1,
                          "weight_kg": np.r_[1e300, np.ones(n - 1)]})
    at = upload(new_app(), "naive_bayes.csv", frame.to_csv(index=False).encode())
    assert not at.exception
    preview = at.dataframe[0]  # the column-mapping form's first rows of the file
    config = json.loads(preview.proto.columns)
    assert config["p_1"]["type_config"] == {"type": "number", "format": "%.6g"}
    assert preview.value["p_1"].dtype == float  # a number column: it sorts as numbers
    assert preview.value["weight_kg"].tolist()[:2] == ["1e+300", "1"]
    assert config["weight_kg"]["type_config"]["type"] == "text" and config["weight_kg"]["alignment"] == "right"
