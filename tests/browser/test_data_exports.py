"""Browser test of the Data page with exports as practitioners write them: a pandas export
with class-named probability columns loads as classification; a file whose target is not recognised shows the
loader's message in the page's words and the column-mapping form open and pre-filled with what was detected."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect

from tests.browser.test_pages import LONG, nav, screenshot  # noqa: E402
from tests.conftest import upload_file, wait_for_app  # noqa: E402


def test_data_page_reads_a_pandas_export_and_explains_in_its_own_words(app_page, artifacts_dir, tmp_path):
    page = app_page
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), 150)
    names = np.array(["setosa", "versicolor", "virginica"])
    iris = pd.DataFrame({"y": names[rng.integers(0, 3, 150)], "p_setosa": p[:, 0], "p_versicolor": p[:, 1],
                         "p_virginica": p[:, 2]}, index=rng.permutation(150))
    iris.to_csv(tmp_path / "iris_preds.csv")  # with the index column, as pandas writes it
    nav(page, "Data")
    upload_file(page, str(tmp_path / "iris_preds.csv"))
    expect(page.get_by_test_id("stSidebar").get_by_text("iris_preds.csv")).to_be_visible(timeout=LONG)
    expect(page.get_by_text("Diagnose it on the Classification page")).to_be_visible()
    expect(page.get_by_test_id("stMetricValue").nth(3)).to_have_text("3")  # classes
    wait_for_app(page)

    odd = pd.DataFrame({"target_value": rng.normal(size=60), "guess": rng.normal(size=60),
                        "sd": rng.uniform(0.5, 2, 60), "fold": np.arange(60) % 5})
    odd.to_csv(tmp_path / "odd.csv", index=False)
    upload_file(page, str(tmp_path / "odd.csv"))
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_contain_text("odd.csv", timeout=LONG)
    expect(error).to_contain_text("Column mapping")
    for python_words in ("columns=", "task=", "pass "):
        expect(error).not_to_contain_text(python_words)
    # the form is open and pre-filled: the σ column and the fold (a group, not the split) were recognised
    expect(page.get_by_text("Pre-filled with what was detected")).to_be_visible()
    expect(page.get_by_role("combobox", name="std column")).to_have_value("sd")
    expect(page.get_by_role("combobox", name="group column (optional)")).to_have_value("fold")
    expect(page.get_by_role("combobox", name="split column (optional)")).to_have_value("—")
    wait_for_app(page)
    screenshot(page, artifacts_dir / "data_mapping_prefilled.png")
    expect(page.get_by_test_id("stException")).to_have_count(0)
