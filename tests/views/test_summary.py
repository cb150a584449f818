"""What the dashboard draws from a summary: the allowed-directory rules for server files
(views.data_dirs), opening summary files (views.summary.read_summary) and the σ-bin / confidence-bin
selection views, which must equal the in-memory diagnosis of the rows in the selected bins."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.mergeable import FORMAT, FORMAT_VERSION
from calib_core.scale import summary as S
from tests.scale.test_summary import classification_set, gaussian_set
from views import data_dirs
from views import pages as views
from views import summary as sv


# ------------------------------------------------------------------------------------------- allowed directories
@pytest.fixture
def tree(tmp_path):
    allowed = tmp_path / "allowed"
    (allowed / "runs").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    frame = pd.DataFrame({"y": [0.1, 0.2], "mean": [0.0, 0.1], "std": [1.0, 1.0]})
    for name in ("a.parquet", "b.parquet"):
        frame.to_parquet(allowed / "runs" / name)
    frame.to_parquet(outside / "secret.parquet")
    (allowed / "notes.txt").write_text("x")
    os.symlink(outside / "secret.parquet", allowed / "runs" / "link.parquet")
    os.symlink(outside, allowed / "elsewhere")
    return allowed, outside


def test_nothing_is_allowed_by_default(tree):
    allowed, _ = tree
    assert data_dirs.allowed_dirs(None, None) == []
    with pytest.raises(cc.InputError, match="switched off") as err:
        data_dirs.resolve_data_files(str(allowed / "runs" / "a.parquet"), [])
    assert data_dirs.ENV_VAR in str(err.value) and "secrets.toml" in str(err.value)


def test_paths_and_globs_under_the_allowed_dir(tree):
    allowed, _ = tree
    dirs = data_dirs.allowed_dirs(f"{allowed}{os.pathsep}/no/such/dir", None)
    assert dirs == [allowed.resolve()]
    a, b = str((allowed / "runs" / "a.parquet").resolve()), str((allowed / "runs" / "b.parquet").resolve())
    assert data_dirs.resolve_data_files("runs/a.parquet", dirs) == [a]  # relative to the allowed dir
    assert data_dirs.resolve_data_files(str(allowed / "runs" / "[ab].parquet"), dirs) == [a, b]
    assert data_dirs.resolve_data_files("runs/[ab].parquet", dirs) == [a, b]


@pytest.mark.parametrize("case", ["absolute elsewhere", "dot-dot", "dot-dot back inside", "link to a file outside",
                                  "link to a dir outside", "glob through a link", "glob at the root", "not parquet"])
def test_anything_outside_is_refused_with_what_is_allowed(tree, case):
    allowed, outside = tree
    dirs = data_dirs.allowed_dirs(str(allowed))
    text = {"absolute elsewhere": str(outside / "secret.parquet"), "dot-dot": "../outside/secret.parquet",
            "dot-dot back inside": "runs/../runs/a.parquet", "link to a file outside": "runs/*.parquet",
            "link to a dir outside": "elsewhere/secret.parquet", "glob through a link": "elsewhere/*.parquet",
            "glob at the root": "/*/*.parquet", "not parquet": "notes.txt"}[case]
    with pytest.raises(cc.InputError) as err:
        data_dirs.resolve_data_files(text, dirs)
    message = str(err.value)
    assert str(allowed.resolve()) in message and data_dirs.ENV_VAR in message, message
    # nothing outside is named unless the user typed it (the link's target stays unsaid)
    assert "secret.parquet" not in message or case in ("absolute elsewhere", "dot-dot", "link to a dir outside"), \
        message


def test_no_match_says_so(tree):
    allowed, _ = tree
    with pytest.raises(cc.InputError, match="matches no"):
        data_dirs.resolve_data_files("runs/*.pq", data_dirs.allowed_dirs(str(allowed)))
    with pytest.raises(cc.InputError, match="no such file"):
        data_dirs.resolve_data_files("runs/c.parquet", data_dirs.allowed_dirs(str(allowed)))


# ------------------------------------------------------------------------------------------- summary files
def test_read_summary_round_trip_and_refusals():
    pset = gaussian_set(3000, seed=5)
    s = S.summarize(pset, spec=S.spec_for(pset))
    back = sv.read_summary(s.to_bytes(), source="run.summary")
    assert back.n_rows == 3000 and back.spec == s.spec
    with pytest.raises(cc.InputError, match="run.parquet: a Parquet file"):
        sv.read_summary(b"PAR1" + b"\0" * 20, source="run.parquet")
    with pytest.raises(cc.InputError, match="not a summary file"):
        sv.read_summary(b"y,mean,std\n1,2,3\n", source="x.summary")
    # a newer version: the header says FORMAT_VERSION + 1
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(s.to_bytes())) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "header.json":
                header = json.loads(data)
                header["version"] = FORMAT_VERSION + 1
                data = json.dumps(header).encode()
            dst.writestr(info.filename, data)
    with pytest.raises(cc.InputError) as err:
        sv.read_summary(buf.getvalue(), source="new.summary")
    message = str(err.value)
    assert "new.summary" in message and f"version {FORMAT_VERSION + 1}" in message, message
    assert f"{FORMAT!r} version {FORMAT_VERSION}" in message, message
    with pytest.raises(cc.InputError, match="not a .*calibration summary"):
        sv.read_summary(b"PK\x03\x04" + b"\0" * 40, source="broken.summary")


# ------------------------------------------------------------------------------------------- selections
@pytest.fixture(scope="module")
def regression_summary():
    pset = gaussian_set(40_000, seed=7, scale=1.2)
    return pset, S.summarize(pset, spec=S.spec_for(pset))


@pytest.mark.parametrize("bins", [(0,), (3, 4), (2, 9, 14)])
def test_sigma_bin_selection_equals_the_in_memory_diagnosis_of_its_rows(regression_summary, bins):
    pset, summ = regression_summary
    model = summ.models[0]
    mask = views.sigma_bin_rows(pset, {model: bins}, 15, "count")
    assert sv.selected_rows(summ, {model: bins}) == int(mask.sum())
    ref = cc.diagnose(pset.take(mask), n_resamples=0, n_simulations=0)
    got = sv.selection_metrics(summ, {model: bins}, n_resamples=0)
    assert len(got) >= 20
    for key, value in zip(got["metric"], got["value"]):
        assert value == pytest.approx(ref.value(key), rel=1e-12, abs=1e-15), key
    tables = sv.selection_tables(summ, {model: bins})
    want = ref.diagrams[(model, cc.ALL)]
    curve = tables["calibration_curve"][model]
    np.testing.assert_allclose(curve["observed"], want["calibration_curve"]["observed"], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(curve["band_low"], want["calibration_curve"]["band_low"])
    np.testing.assert_array_equal(tables["pit_histogram"][model]["count"], want["pit_histogram"]["count"])
    pd.testing.assert_frame_equal(tables["intervals"][model], want["intervals"], rtol=1e-12)


def test_selection_intervals_cover_like_the_row_bootstrap(regression_summary):
    pset, summ = regression_summary
    got = sv.selection_metrics(summ, {summ.models[0]: (5, 6)}, n_resamples=400).set_index("metric")
    for key in ("rmse", "sharpness", "coverage_90"):
        lo, hi, v = got.loc[key, ["ci_low", "ci_high", "value"]]
        assert lo < v < hi and (hi - lo) < 0.1 * abs(v), key
    assert got.loc["coverage_90", "interval"].startswith("Clopper")


def test_confidence_bin_selection_table_is_exact():
    pset = classification_set(20_000, 4, seed=2)
    summ = S.summarize(pset, spec=S.spec_for(pset))
    model = summ.models[0]
    table = sv.selection_tables(summ, {model: (10, 12)})["selected_bins"][model]
    rel = cc.diagnose(pset, n_resamples=0, n_simulations=0).diagrams[(model, cc.ALL)]["reliability"]
    assert list(table["bin"][:2]) == [11, 13] and table["confidence range"].iloc[2] == "all selected bins"
    for i, b in enumerate((10, 12)):
        assert table["rows"].iloc[i] == rel["count"].iloc[b]
        assert table["accuracy"].iloc[i] == pytest.approx(rel["accuracy"].iloc[b], rel=1e-12)
        assert table["mean confidence"].iloc[i] == pytest.approx(rel["confidence"].iloc[b], rel=1e-12)
    conf = pset.probs.max(axis=1)
    inside = ((conf > 10 / 15) & (conf <= 11 / 15)) | ((conf > 12 / 15) & (conf <= 13 / 15))
    hits = (pset.probs.argmax(axis=1) == pset.labels)[inside]
    assert table["rows"].iloc[2] == inside.sum()
    assert table["accuracy"].iloc[2] == pytest.approx(hits.mean(), rel=1e-12)
    assert table["mean confidence"].iloc[2] == pytest.approx(conf[inside].mean(), rel=1e-12)


def test_exactness_column_says_exact_bound_or_needs_the_rows(regression_summary):
    pset, summ = regression_summary
    rep = S.report(summ, n_resamples=0, n_simulations=0)
    ex = sv.exactness_table(summ, rep).set_index("metric")["exactness"]
    assert ex["rmse"] == "exact" and ex["ence"] == "exact" and ex["spearman_sigma_abs_error"] == "needs the rows"
    assert ex["pit_entropy"].startswith("bound [")
    assert ex["max_calibration_deviation"].startswith("bound [")
    lo, hi = (float(v) for v in ex["max_calibration_deviation"][7:-1].split(","))
    true_ks = cc.diagnose(pset, n_resamples=0, n_simulations=0).value("max_calibration_deviation")
    assert lo * (1 - 1e-3) <= true_ks <= hi * (1 + 1e-3)  # the printed bracket (4 digits) holds the in-memory KS
    table = sv.add_exactness(views.metric_table(rep.metrics, compact=True), sv.exactness_table(summ, rep))
    assert list(table.columns[:3]) == ["metric", "value", "from the summary"]
    sample = S.summarize(pset, spec=S.spec_from_sample(pset.take(np.arange(5000))))
    rep2 = S.report(sample, n_resamples=0, n_simulations=0)
    assert sv.exactness_table(sample, rep2).set_index("metric")["exactness"]["ence"] == "exact for the summary's bins"


# ------------------------------------------------------------------------------------------- groups
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_a_group_of_a_summary_is_the_in_memory_diagnosis_of_its_rows(task):
    """summary_of_group: the report, the σ-bin selection and its metrics of one group equal cc.diagnose of that
    group's rows (exact sums within 1e-12; the σ-bins are the group's own equal-count bins)."""
    from calib_core.base.predictions import ALL

    if task == "regression":
        pset = gaussian_set(6_000, seed=21, groups=True)
    else:
        pset = classification_set(6_000, 4, seed=22)
        pset.group = np.where(np.random.default_rng(23).random(pset.n_rows) < 0.4, "a", "b")
    summ = S.summarize(pset, spec=S.spec_for(pset))
    assert sv.summary_groups(summ) == [ALL, "a", "b"]
    assert sv.summary_of_group(summ, ALL) is summ
    with pytest.raises(KeyError):
        sv.summary_of_group(summ, "c")
    for group in ("a", "b"):
        sub = sv.summary_of_group(summ, group)
        rows = pset.take(pset.group == group)
        assert sub.n_rows == rows.n_rows and list(sub.parts) == [("model", ALL)]
        got = S.report(sub, n_resamples=0, n_simulations=0, diagrams=True)
        ref = cc.diagnose(rows, n_resamples=0, n_simulations=0, diagrams=True)
        have = set(ref.table().index)  # (without null draws cc.diagnose leaves out e.g. the top-bin gap)
        exact = [k for k, v in got.options["exactness"].items() if v == "exact" and k in have]
        assert len(exact) >= 8
        for k in exact:
            assert abs(got.value(k) - ref.value(k)) <= 1e-12 * max(1.0, abs(ref.value(k))), (group, k)
        if task == "regression":
            ref_levi = ref.diagrams[("model", ALL)]["levi_bins"]
            got_levi = got.diagrams[("model", ALL)]["levi_bins"]
            assert got_levi["count"].tolist() == ref_levi["count"].tolist()  # the group's own σ-bins
            selected = sv.selection_metrics(sub, {"model": [0, 1, 2]}, n_resamples=0).set_index("metric")
            in_bins = rows.take(np.isin(views_bin_index(rows, ref_levi), [0, 1, 2]))
            ref_sel = cc.diagnose(in_bins, n_resamples=0, n_simulations=0, diagrams=False)
            for k in ("nll", "crps", "rmse", "coverage_90"):
                assert abs(selected.loc[k, "value"] - ref_sel.value(k)) <= 1e-12 * max(1.0, abs(ref_sel.value(k)))
        else:
            pd.testing.assert_frame_equal(got.diagrams[("model", ALL)]["reliability"],
                                          ref.diagrams[("model", ALL)]["reliability"], rtol=1e-12,
                                          check_dtype=False)


def views_bin_index(rows, levi: pd.DataFrame) -> np.ndarray:
    """The equal-count σ-bin of every row (the in-memory bins: stable sort of σ, ⌈kN/B⌉ cuts)."""
    from calib_core.base.binning import equal_count_bins

    return equal_count_bins(np.asarray(rows.dist.std()), len(levi))
