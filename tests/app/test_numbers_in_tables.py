"""Tiny and huge numbers are shown as numbers: a naive-Bayes export's 2.9e-149 is written in scientific notation in
the Data page's tables (the mapping preview and the validated rows), never as a row of zeros."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.app.test_pages import new_app, upload


def _texts_of(at) -> list[str]:
    """The text cells of every table on the page (a float cell is drawn by the grid's own number format)."""
    return [v for element in at.dataframe for v in element.value.to_numpy().ravel() if isinstance(v, str)]


def test_tiny_probabilities_are_written_in_scientific_notation():
    rng = np.random.default_rng(0)
    n = 80
    p1 = rng.uniform(0.05, 0.95, n)
    p1[:3] = [2.9e-149, 1e-300, 1 - 1e-12]
    frame = pd.DataFrame({"y": (rng.uniform(size=n) < p1).astype(int), "p_0": 1 - p1, "p_1": p1})
    at = upload(new_app(), "naive_bayes.csv", frame.to_csv(index=False).encode())
    assert not at.exception
    cells = _texts_of(at)
    assert "2.9e-149" in cells and "1e-300" in cells, cells[:20]
    assert not any("0000000000" in c for c in cells)
