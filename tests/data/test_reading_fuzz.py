"""Fuzzing ``cc.load_predictions`` with generated bad files.

The strategies in ``fuzz_cases.py`` draw CSV / TSV / Parquet bytes (UTF-8, UTF-16/32, Latin-1, Windows-1252) with one
defect each: missing and duplicate columns, text in numeric columns, NaN/±inf, σ ≤ 0, crossing quantiles,
probabilities out of range or not summing to 1, labels out of range, K mismatch, empty files, one row, fewer rows
than bins, wrong delimiters, other encodings, binary garbage, huge column counts, malformed pandas metadata
in Parquet files and .npz archives that would need pickle.  Every case must either load
with its drops counted (kept + dropped == rows read, and exactly the expected rows kept) or raise ``cc.InputError``
whose message names the file, the problem (column names / row numbers / counts, per category) and what to do.
Any other exception fails the test.  ``derandomize=True`` and no example database: CI runs the same cases each time.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import calib_core as cc
from tests.fuzz_cases import COUNTS, VARIANTS, check_load, strategy

EXAMPLES = {  # max_examples per category, shared by its variants (≥ 500 in all); huge files are slow, so few
    "missing_column": 40,
    "duplicate_columns": 40,
    "text_in_numeric": 50,
    "nan_inf": 60,
    "sigma_nonpositive": 40,
    "quantiles_out_of_order": 40,
    "probabilities_out_of_range": 40,
    "probabilities_not_summing_to_one": 40,
    "labels_out_of_range": 40,
    "k_mismatch": 30,
    "empty_file": 30,
    "one_row": 20,
    "fewer_rows_than_bins": 20,
    "wrong_delimiter": 40,
    "encoding": 40,
    "binary_garbage": 120,
    "huge_column_count": 6,
    "parquet_pandas_metadata": 40,
    "npz_archives": 40,
}
MIN_TOTAL = 500
OUTCOMES: dict[str, dict[str, int]] = {c: {"loaded": 0, "error": 0} for c in EXAMPLES}
RUNS = [(c, v) for c in EXAMPLES for v in VARIANTS[c]]
VARIANT_COUNTS: dict[tuple[str, str], int] = {}
STARTED: list[float] = []  # time of the first fuzz case (collection and other test files excluded)


def _budget(category: str) -> int:
    return -(-EXAMPLES[category] // len(VARIANTS[category]))  # ceil: every variant gets its share


def _settings(category: str):
    return settings(max_examples=_budget(category), derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


def _fuzz(category: str, variant: str, extra=None):
    @_settings(category)
    @given(case=strategy(category, variant))
    def run(case):
        if not STARTED:
            STARTED.append(time.perf_counter())
        outcome = check_load(case)
        OUTCOMES[category][outcome] += 1
        VARIANT_COUNTS[category, variant] = VARIANT_COUNTS.get((category, variant), 0) + 1
        if extra is not None:
            extra(case)

    return run


def _diagnose_few_rows(case) -> None:
    """Fewer rows than the default number of bins: diagnosing must still work (metrics, no exception)."""
    ps = cc.load_predictions(case.data, source=case.name)
    report = cc.diagnose(ps, n_resamples=0, n_simulations=0)
    assert not report.metrics.empty


def _encoding_round_trip(case) -> None:
    """Non-ASCII group names survive the decoding (UTF-16/32 with or without BOM, Latin-1, cp1252)."""
    ps = cc.load_predictions(case.data, source=case.name)
    assert list(ps.group) == case.expected_group, (case.note, list(ps.group)[:5], case.expected_group[:5])


@pytest.mark.parametrize("category, variant", RUNS, ids=[f"{c}-{v}" for c, v in RUNS])
def test_fuzz_category(category, variant):
    extra = {"fewer_rows_than_bins": _diagnose_few_rows, "encoding": _encoding_round_trip}.get(category)
    _fuzz(category, variant, extra)()
    ran = VARIANT_COUNTS.get((category, variant), 0)
    assert ran >= min(_budget(category), 3), f"only {ran} {category}/{variant} cases ran"


def test_fuzz_totals():
    """≥ 500 generated bad inputs in all (counted, not assumed); prints the per-category table and the run time."""
    if set(VARIANT_COUNTS) != set(RUNS):
        pytest.skip("run the whole file to count the totals")
    total = sum(COUNTS[c] for c in EXAMPLES)  # loader cases only (fuzz_cases.COUNTS is shared with other tests)
    lines = [f"{c:34s} {COUNTS[c]:4d} cases  ({OUTCOMES[c]['loaded']} loaded, {OUTCOMES[c]['error']} InputError; "
             + ", ".join(f"{v} {VARIANT_COUNTS[c, v]}" for v in VARIANTS[c]) + ")" for c in EXAMPLES]
    print("\n" + "\n".join(lines) + f"\n{'total':34s} {total:4d} cases in {time.perf_counter() - STARTED[0]:.1f} s")
    assert total >= MIN_TOTAL
    # both outcomes occur where the rules say "dropped and counted, or refused when < 2 rows remain"
    for category in ("nan_inf", "sigma_nonpositive", "quantiles_out_of_order", "probabilities_out_of_range"):
        assert OUTCOMES[category]["loaded"] and OUTCOMES[category]["error"], (category, OUTCOMES[category])


def test_checker_rejects_wrong_outcomes():
    """The fuzz checker itself can fail: a wrong expectation or a message without the named column is caught."""
    from tests.fuzz_cases import Case

    good = b"y_true,mean,std\n1,2,3\n4,5,6\n"
    with pytest.raises(AssertionError):
        check_load(Case("selftest", "a.csv", good, "error", words=("anything",)))
    with pytest.raises(AssertionError):
        check_load(Case("selftest", "a.csv", good, "load", kept=np.array([1]), n_read=2))
    with pytest.raises(AssertionError):
        check_load(Case("selftest", "a.csv", b"y_true,mean,std\n1,x,3\n4,5,6\n", "error", words=("column 'std'",)))
    COUNTS.pop("selftest", None)


def test_loader_fixes_found_by_fuzzing():
    """The loader gaps the fuzzing found, as plain examples (each failed before the fix)."""
    import io

    import pandas as pd

    # 1. numbers stored as text in Parquet with NA spelled out: missing values (dropped, counted), not "non-numeric"
    buf = io.BytesIO()
    text = {"y": ["1", "2", "NA", "4"], "mean": ["1", "2", "3", "nan"], "std": ["1", "1", "1", "1"]}
    pd.DataFrame(text).to_parquet(buf)
    ps = cc.load_predictions(buf.getvalue(), source="s.parquet")
    assert ps.n_rows == 2 and ps.n_read == 4 and list(ps.row_number) == [1, 2]
    # 2. header split by commas, data rows by semicolons: the message says so instead of "non-numeric '1;2;3'"
    with pytest.raises(cc.InputError, match="separated by commas .* data rows by semicolons: mixed delimiters"):
        cc.load_predictions(b"y,mean,std\n1;2;3\n4;5;6\n", source="m.csv")
    with pytest.raises(cc.InputError, match="mixed delimiters"):
        cc.load_predictions(b"label,prob_0,prob_1\n0;0.4;0.6\n1;0.9;0.1\n", source="m.csv")
    # 3. a decimal comma in a comma-separated file is named as the likely cause of the extra fields
    with pytest.raises(cc.InputError, match="decimal comma") as ei:
        cc.load_predictions(b"y,mean,std\n1,5,2,0,0,3\n2,5,1,5,0,4\n", source="d.csv")
    assert "line 2 (data row 1) has 6 fields but the header has 3" in str(ei.value)
    # 4. Parquet whose pandas metadata is malformed ({} raised KeyError 'columns' out of pyarrow): columns still load
    import pyarrow as pa
    import pyarrow.parquet as pq

    for meta in (b"{}", b'{"index_columns": ["nope"], "columns": []}', b"not json"):
        table = pa.table({"y_true": [1.0, 2.0], "mean": [1.5, 2.5], "std": [1.0, 1.0]})
        buf = io.BytesIO()
        pq.write_table(table.replace_schema_metadata({b"pandas": meta}), buf)
        assert cc.load_predictions(buf.getvalue(), source="meta.parquet").n_rows == 2
    # 5. corrupt compressed data: zlib.error escaped from gzip and np.load (npz), NotImplementedError from zipfile
    with pytest.raises(cc.InputError, match="cannot be decompressed"):
        cc.load_predictions(b"\x1f\x8b\x08\x00" + b"\x00" * 11, source="g.csv")
    buf = io.BytesIO()
    np.savez_compressed(buf, probs=np.full((50, 2), 0.5), labels=np.arange(50) % 2)
    data = bytearray(buf.getvalue())
    data[59] ^= 0xFF  # inside the first deflate stream
    with pytest.raises(cc.InputError, match="npz archive could not be read without pickle"):
        cc.load_predictions(bytes(data), source="z.npz")
    # cells that contain another delimiter get a note in the non-numeric message
    with pytest.raises(cc.InputError, match="the cells contain ';'"):
        cc.load_predictions(b"y,mean,std\n1;2,2,3\n4,5,6\n", source="c.csv")


def test_binary_score_column_with_a_free_name():
    """Found by the real-data walk (COCO detections): a mapped binary column named e.g. 'score' was taken for the
    positive class's name, so labels 0/1 were refused ("'matched' has 2 values: 0, 1")."""
    data = b"matched,score\n1,0.9\n0,0.3\n1,0.6\n"
    ps = cc.load_predictions(data, task="classification", columns={"label": "matched", "probs": "score"},
                             source="coco.csv")
    assert ps.layout == "binary_prob" and ps.classes == ["0", "1"]
    np.testing.assert_allclose(ps.probs[:, 1], [0.9, 0.3, 0.6])
    # a prob_<suffix> column whose suffix is no label value: the positive class comes from the labels
    ps = cc.load_predictions(b"label,prob_cat\n1,0.9\n0,0.3\n", source="cat.csv")
    assert ps.classes == ["0", "1"]
    # an explicit positive class that is no label value is named as such
    with pytest.raises(cc.InputError, match="positive class 'yes' of 'score' is not a value of 'matched'"):
        cc.load_predictions(data, columns={"label": "matched", "probs": "score", "positive": "yes"}, source="c.csv")


def test_unexpected_parser_errors_become_input_errors(monkeypatch):
    """Last resort: an exception of another type out of a parser is wrapped (the fuzz checks above treat this
    "unexpected problem" message as a failure, so it never hides a gap from the tests)."""
    from calib_core.data import bytes as data_bytes

    def broken(data, src):
        raise KeyError("something no check foresaw")

    monkeypatch.setattr(data_bytes, "read_text", broken)
    with pytest.raises(cc.InputError, match=r"^x\.csv: unexpected problem while reading the file \(KeyError") as ei:
        cc.load_predictions(b"y_true,mean,std\n1,2,3\n4,5,6\n", source="x.csv")
    assert isinstance(ei.value.__cause__, KeyError) and "What to do" in str(ei.value)
