"""No row is lost without being counted: an unbalanced quote that merges lines, True/False in
numeric columns, the probability row-sum tolerance at large K, a group named like the all-rows key, and a UTF-8 file
with one byte that is not UTF-8.  Each is a counted drop with its reason or a clear message — in the core, in the
CLI's output and on the Data page."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.base.predictions import ALL, PredictionSet, ReadingNote, iter_subsets
from calib_core.data.bytes import read_table
from calib_core.data.classification import row_sum_tolerance
from calib_core.data.rows import MERGED_ROWS_REASON
from views import pages as views

ROOT = Path(__file__).resolve().parents[2]


def _eleven_rows(open_at: int = 3, close_at: int = 7, column: str = "group") -> bytes:
    """11 data rows y, mean, std, group; a stray quote opens in ``column`` on data row ``open_at + 1`` and a second
    stray quote closes it on data row ``close_at + 1``."""
    lines = ["y,mean,std,group"]
    for i in range(11):
        cells = {"y": f"{0.1 * i:.1f}", "mean": f"{0.1 * i + 0.05:.2f}", "std": "1.0", "group": "a"}
        if i == open_at:
            cells[column] = '"' + cells[column]
        if i == close_at:
            cells[column] = cells[column] + '"x'
        lines.append(",".join(cells[c] for c in ("y", "mean", "std", "group")))
    return ("\n".join(lines) + "\n").encode()


# ------------------------------------------------------------------------------------------ (a) unbalanced quotes


@pytest.mark.parametrize("column", ["group", "mean", "y"])
def test_an_unbalanced_quote_that_merges_lines_is_a_counted_drop_naming_the_lines(column):
    pset = cc.load_predictions(_eleven_rows(column=column), source="q.csv")
    # lines 5–9 (data rows 4–8) were read as one row: 7 rows read, that one dropped for its reason
    assert pset.n_read == 7 and pset.n_rows == 6 and pset.dropped.total == 1
    assert pset.dropped.reasons[MERGED_ROWS_REASON].tolist() == [4]
    note = next(m for m in pset.messages if isinstance(m, ReadingNote) and "quote" in m)
    assert "lines 5–9" in note and "opens on line 5" in note and "line 9" in note and repr(column) in note
    assert "5 lines back" in note
    # the rows kept are the eleven minus the five merged ones, with their own values
    np.testing.assert_allclose(pset.y, [0.0, 0.1, 0.2, 0.8, 0.9, 1.0])
    if pset.group is not None:
        assert not any("\n" in g for g in pset.group)


def test_merged_lines_are_counted_after_comments_and_blank_lines_and_with_crlf():
    body = _eleven_rows().decode().replace("\n", "\r\n")
    pset = cc.load_predictions(("# produced by x\r\n\r\n" + body).encode(), source="q.csv")
    assert pset.dropped.reasons[MERGED_ROWS_REASON].tolist() == [4]
    note = next(m for m in pset.messages if isinstance(m, ReadingNote) and "quote" in m)
    assert "lines 7–11" in note, note  # comment line 1, blank line 2, header line 3


def test_an_unbalanced_quote_in_a_classification_file_is_counted():
    rows = ["label,prob_0,prob_1"] + [f"{i % 2},{0.3},{0.7}" for i in range(10)]
    rows[3] = '1,"0.3,0.7'
    rows[6] = '0,0.3",0.7'
    pset = cc.load_predictions(("\n".join(rows) + "\n").encode(), source="c.csv")
    assert pset.dropped.reasons[MERGED_ROWS_REASON].tolist() == [3]
    assert pset.n_read + 3 == 10  # rows 3..6 are one row
    assert any(isinstance(m, ReadingNote) and "lines 4–7" in m for m in pset.messages)


def test_a_quote_that_is_never_closed_names_its_line():
    rows = ["y,mean,std"] + [f"{i},{i},1" for i in range(11)]
    rows[4] = '3,"3,1'
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(("# comment\n" + "\n".join(rows) + "\n").encode(), source="open.csv")
    text = str(err.value)
    assert "line 6 (data row 4)" in text and "quote" in text and "never closed" in text, text
    # the same for a file that is not UTF-8 (read through the text path, not the bytes path)
    with pytest.raises(cc.InputError, match=r"line 6 \(data row 4\)"):
        cc.load_predictions(("# comm\xe9nt\n" + "\n".join(rows) + "\n").encode("cp1252"), source="open.csv")


def test_quoted_cells_and_blank_lines_are_not_mistaken_for_merged_rows():
    frame = pd.DataFrame({"y": np.arange(6.0), "mean": np.arange(6.0), "std": 1.0, "group": ["a, b", "c"] * 3})
    text = frame.to_csv(index=False, quoting=1)  # every cell quoted
    text = text.replace("\n", "\n\n", 3)  # blank lines: more line breaks than rows, and quotes
    pset = cc.load_predictions(text.encode(), source="quoted.csv")
    assert pset.n_rows == 6 and pset.dropped.total == 0
    assert read_table(text.encode()).attrs["merged_rows"] == []
    assert not any(isinstance(m, ReadingNote) for m in pset.messages)


# ------------------------------------------------------------------------------------------ (b) booleans


@pytest.mark.parametrize("column, values", [("std", ["True", "True", "False"]), ("y", ["True", "False", "True"]),
                                             ("mean", ["TRUE", "FALSE", "true"])])
def test_booleans_in_a_numeric_column_are_refused_naming_the_column(column, values):
    frame = {"y": ["1.0", "2.0", "0.5"], "mean": ["0.5", "1.0", "0.2"], "std": ["1.0", "0.5", "2.0"]}
    frame[column] = values
    text = "y,mean,std\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(frame["y"], frame["mean"], frame["std"]))
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(text.encode(), source="b.csv")
    assert f"column {column!r}" in str(err.value) and "True/False" in str(err.value)
    assert err.value.columns == [column]


def test_a_true_among_numbers_is_named_as_a_boolean():
    with pytest.raises(cc.InputError) as err:
        cc.load_predictions(b"y,mean,std\n1,0.5,1\n2,0.2,True\n3,0.3,0.5\n", source="b.csv")
    assert "column 'std'" in str(err.value) and "True/False" in str(err.value) and err.value.rows == [2]


def test_boolean_columns_of_parquet_files_and_probability_columns_are_refused():
    frame = pd.DataFrame({"y": [1.0, 2.0, 3.0], "mean": [1.0, 2.0, 3.0], "std": [True, True, False]})
    buf = io.BytesIO()
    frame.to_parquet(buf)
    with pytest.raises(cc.InputError, match="'std'.*True/False"):
        cc.load_predictions(buf.getvalue(), source="b.parquet")
    cls = pd.DataFrame({"label": [0, 1, 1], "prob_0": [True, False, False], "prob_1": [False, True, True]})
    with pytest.raises(cc.InputError, match="'prob_0'.*True/False"):
        cc.load_predictions(cls.to_csv(index=False).encode(), source="onehot.csv")
    with pytest.raises(cc.InputError, match="'confidence'.*True/False"):
        cc.load_predictions(b"label,pred_label,confidence\n0,0,True\n1,0,False\n", source="top.csv")


def test_boolean_labels_and_splits_are_still_read():
    text = b"label,prob\nTrue,0.8\nFalse,0.3\nTrue,0.6\nFalse,0.1\n"
    pset = cc.load_predictions(text, source="bin.csv")
    assert pset.task == "classification" and sorted(pset.classes) == ["False", "True"]


# ------------------------------------------------------------------------------------------ (c) row-sum tolerance


def _probs_file(P: np.ndarray) -> bytes:
    frame = pd.DataFrame(P, columns=[f"prob_{k}" for k in range(P.shape[1])])
    frame.insert(0, "label", np.arange(P.shape[0]) % P.shape[1])
    return frame.to_csv(index=False, float_format="%.10g").encode()


@pytest.mark.parametrize("k", [2, 10, pytest.param(5_000, marks=pytest.mark.slow)])
def test_the_row_sum_tolerance_does_not_grow_with_k(k):
    rng = np.random.default_rng(k)
    P = rng.dirichlet(np.ones(k), 6)
    assert cc.load_predictions(_probs_file(P), source="ok.csv").n_rows == 6
    within = P * (1 - 5e-4)  # sums 0.9995: rounding, accepted at every K
    assert cc.load_predictions(_probs_file(within), source="ok.csv").n_rows == 6
    off = P.copy()
    off[2] *= 1 - 2e-3  # one row sums to 0.998: refused at every K
    with pytest.raises(cc.InputError, match=r"1 row\(s\) .* do not sum to 1") as err:
        cc.load_predictions(_probs_file(off), source="off.csv")
    assert err.value.rows == [3]
    assert row_sum_tolerance(k) <= max(1e-3, k * 2.0**-24)


def test_rows_summing_to_0_6_are_refused_at_k_5000_and_float32_softmax_rows_pass():
    k = 5_000
    rng = np.random.default_rng(3)
    P = np.full((4, k), 0.6 / k)
    with pytest.raises(cc.InputError, match="do not sum to 1"):
        cc.load_predictions(_probs_file(P), source="sixty.csv")
    z = rng.normal(scale=3.0, size=(4, k)).astype(np.float32)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    P32 = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    frame = pd.DataFrame(P32, columns=[f"prob_{j}" for j in range(k)])
    frame.insert(0, "label", [0, 1, 2, 3])
    buf = io.BytesIO()
    frame.to_parquet(buf)
    assert cc.load_predictions(buf.getvalue(), source="f32.parquet").n_rows == 4


# ------------------------------------------------------------------------------------------ (d) the all-rows key


def _with_group_named_all(n: int = 200) -> bytes:
    rng = np.random.default_rng(7)
    group = np.where(np.arange(n) < 50, "(all)", "rest")
    frame = pd.DataFrame({"y": rng.normal(size=n), "mean": 0.0, "std": 1.0, "group": group})
    return frame.to_csv(index=False).encode()


def test_a_group_named_like_the_all_rows_key_is_just_a_group():
    pset = cc.load_predictions(_with_group_named_all(), source="g.csv")
    report = cc.diagnose(pset, n_resamples=0, n_simulations=0)
    keys = [k for k in report.diagrams if k[0] == "model"]
    assert sorted(keys) == sorted([("model", ALL), ("model", "(all)"), ("model", "rest")])
    # the all-rows diagrams cover all 200 rows, the group "(all)" its 50
    covered = {g: int(report.diagrams[("model", g)]["pit_histogram"]["count"].sum()) for _, g in keys}
    assert covered == {ALL: 200, "(all)": 50, "rest": 150}
    assert report.verdicts.set_index("group")["n"].to_dict() == covered
    assert not report.metrics.duplicated(["model", "group", "metric"]).any()
    subsets = [(g, int(m.sum())) for _, g, m in iter_subsets(pset)]
    assert subsets == [(ALL, 200), ("(all)", 50), ("rest", 150)]


def test_the_group_selector_tells_the_all_rows_entry_from_a_group_named_so():
    assert views.group_label(ALL) == views.ALL_ROWS_LABEL
    labels = {views.group_label(g) for g in (ALL, "(all)", "(all rows)", "all", "north")}
    assert len(labels) == 5 and "north" in labels
    assert views.group_label("(all)") != views.group_label(ALL)


def test_a_hand_made_set_whose_group_holds_the_key_itself_is_refused():
    pset = PredictionSet(task="regression", y=np.zeros(3), group=np.array([ALL, "a", "a"], dtype=object))
    with pytest.raises(cc.InputError, match="reserved"):
        list(iter_subsets(pset))


# ------------------------------------------------------------------------------------------ (e) encodings


def test_one_windows_1252_byte_in_a_utf8_file_spoils_only_its_line():
    text = "y,mean,std,group\n1,1,1,Zürich\n2,2,1,Genève\n".encode() + b"3,3,1,Z\xfcrich\n" + "4,4,1,Zürich\n".encode()
    pset = cc.load_predictions(text, source="e.csv")
    assert list(pset.group) == ["Zürich", "Genève", "Zürich", "Zürich"]
    note = next(m for m in pset.messages if isinstance(m, ReadingNote))
    assert "lines 4" in note and "Windows-1252" in note and "UTF-8" in note
    assert read_table(text).attrs["encoding"] == "utf-8+cp1252"


def test_a_utf8_file_with_a_bom_and_a_1252_byte_and_a_pure_1252_file():
    text = b"\xef\xbb\xbf" + "y,mean,std,group\n1,1,1,Zürich\n".encode() + b"2,2,1,Z\xfcrich\n"
    pset = cc.load_predictions(text, source="bom.csv")
    assert list(pset.group) == ["Zürich", "Zürich"]
    assert any(isinstance(m, ReadingNote) and "lines 3" in m for m in pset.messages)
    legacy = "y,mean,std,group\n1,1,1,Zürich\n2,2,1,Genève €\n".encode("cp1252")
    pset = cc.load_predictions(legacy, source="old.csv")
    assert list(pset.group) == ["Zürich", "Genève €"]
    assert "text encoding: cp1252." in pset.messages


# ------------------------------------------------------------------------------------------ the CLI says it


def test_the_cli_prints_every_drop_reason_and_the_reading_notes(tmp_path):
    src = tmp_path / "q.csv"
    src.write_bytes(_eleven_rows())
    out = tmp_path / "r.html"
    run = subprocess.run([sys.executable, "-m", "calib_core", "report", str(src), "--out", str(out),
                          "--resamples", "0", "--simulations", "0"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"dropped 1 row(s): {MERGED_ROWS_REASON} (rows 4)" in run.stdout
    assert "lines 5–9 were read as one row" in run.stdout


def test_a_quote_merging_lines_in_the_split_column_keeps_the_split():
    rows = ["y,mean,std,split"] + [f"{i},{i},1,{'cal' if i < 6 else 'test'}" for i in range(12)]
    rows[3] = '2,2,1,"cal'
    rows[5] = '4,4,1,cal"'
    pset = cc.load_predictions(("\n".join(rows) + "\n").encode(), source="s.csv")
    assert pset.dropped.reasons[MERGED_ROWS_REASON].tolist() == [3]
    assert set(pset.split) == {"cal", "test"} and pset.group is None
