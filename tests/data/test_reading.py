"""Tests of the prediction-file loader ``cc.load_predictions`` and its reusable pieces (``calib_core.data``: bytes,
text, columns, rows, detect)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calib_core as cc
from calib_core import api
from calib_core.base.predictions import InputError
from calib_core.base.regression import Gaussian, QuantileSet, SampleSet
from calib_core.data.bytes import read_table
from calib_core.data.columns import ALIASES, MAX_COLUMNS, find_column
from calib_core.data.columns_patterns import find_feature_columns, find_sample_columns, parse_quantile_level
from calib_core.data.detect import detect_task


def csv_bytes(text: str) -> bytes:
    return text.encode("utf-8")


def load(text: str | bytes, **kw) -> cc.PredictionSet:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return cc.load_predictions(data, source=kw.pop("source", "test.csv"), **kw)


def gaussian_frame(n: int = 50, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.2, 2.0, size=n)
    return pd.DataFrame({"y_true": mean + std * rng.normal(size=n), "mean": mean, "std": std})


def check_invariants(ps: cc.PredictionSet) -> None:
    assert ps.n_read == ps.n_rows + ps.dropped.total
    assert ps.row_number is not None and len(ps.row_number) == ps.n_rows
    assert np.all(np.diff(ps.row_number) > 0) and ps.row_number.min() >= 1
    if ps.dist is not None:
        assert len(ps.dist) == ps.n_rows


# ---------------------------------------------------------------------------------------------
# layouts
# ---------------------------------------------------------------------------------------------


def test_gaussian_mean_std_values_and_row_numbers():
    df = gaussian_frame()
    ps = load(df.to_csv(index=False))
    assert ps.task == "regression" and ps.layout == "gaussian"
    assert isinstance(ps.dist, Gaussian)
    np.testing.assert_array_equal(ps.y, df["y_true"].to_numpy())
    np.testing.assert_array_equal(ps.dist.mean(), df["mean"].to_numpy())
    np.testing.assert_array_equal(ps.dist.std(), df["std"].to_numpy())
    np.testing.assert_array_equal(ps.point, df["mean"].to_numpy())
    np.testing.assert_array_equal(ps.row_number, np.arange(1, 51))
    assert ps.n_read == 50 and ps.dropped.total == 0
    assert ps.source == "test.csv"
    assert ps.messages[0].startswith("gaussian layout")


@pytest.mark.parametrize(
    "col, transform",
    [
        ("var", lambda s: s**2),
        ("variance", lambda s: s**2),
        ("log_var", lambda s: np.log(s**2)),
        ("logvar", lambda s: np.log(s**2)),
        ("log_std", np.log),
    ],
)
def test_variance_layouts_give_sigma(col, transform):
    df = gaussian_frame()
    out = pd.DataFrame({"y": df.y_true, "mu": df["mean"], col: transform(df["std"])})
    ps = load(out.to_csv(index=False))
    assert ps.layout == "gaussian"
    np.testing.assert_allclose(ps.dist.std(), df["std"], rtol=1e-12)


def test_u95_mapping_divides_by_gaussian_coverage_factor():
    df = gaussian_frame()
    out = pd.DataFrame({"R": df.y_true, "V": df["mean"], "U": 1.959963984540054 * df["std"]})
    ps = load(out.to_csv(index=False), columns={"y": "R", "mean": "V", "u95": "U"})
    np.testing.assert_allclose(ps.dist.std(), df["std"], rtol=1e-12)
    assert any("95 %" in m for m in ps.messages)


@pytest.mark.parametrize(
    "names, levels",
    [
        (["q0.05", "q0.5", "q0.95"], [0.05, 0.5, 0.95]),
        (["q_0.1", "q_0.9"], [0.1, 0.9]),
        (["quantile_0.25", "quantile_0.75"], [0.25, 0.75]),
        (["q5", "q50", "q95"], [0.05, 0.5, 0.95]),
        (["Q2.5", "Q97.5"], [0.025, 0.975]),
        (["q95", "q5", "q50"], [0.05, 0.5, 0.95]),  # file order need not be sorted
    ],
)
def test_quantile_layout_levels_from_names(names, levels):
    rng = np.random.default_rng(1)
    n = 30
    base = np.sort(rng.normal(size=(n, len(names))), axis=1)
    order = np.argsort(np.argsort([parse_quantile_level(c) for c in names]))
    df = pd.DataFrame(base[:, order], columns=names)
    df.insert(0, "target", rng.normal(size=n))
    ps = load(df.to_csv(index=False))
    assert ps.layout == "quantile" and isinstance(ps.dist, QuantileSet)
    np.testing.assert_allclose(ps.dist.levels, levels)
    np.testing.assert_array_equal(ps.dist.values, base)
    assert ps.point is None


def test_quantile_mapping_dict_with_string_and_percent_levels():
    df = pd.DataFrame({"obs": [0.0, 1.0, 2.0], "lo": [-1.0, 0.0, 1.0], "mid": [0.0, 1.0, 2.0], "hi": [1.0, 2, 3]})
    ps = load(df.to_csv(index=False), columns={"quantiles": {"0.05": "lo", "50%": "mid", 0.95: "hi"}})
    np.testing.assert_allclose(ps.dist.levels, [0.05, 0.5, 0.95])
    np.testing.assert_array_equal(ps.dist.values[:, 0], df["lo"])


def test_crossing_quantiles_dropped_with_crossing_drop_and_counted():
    # crossing="drop" keeps the old behaviour (by default the rows are sorted: tests/data/test_quantile_crossing.py)
    df = pd.DataFrame(
        {"y": [0.0, 1, 2, 3], "q0.1": [-1.0, 0.5, 1.0, 2.0], "q0.5": [0.0, 0.4, 2.0, 3.0], "q0.9": [1.0, 2, 3, 2.5]}
    )
    ps = load(df.to_csv(index=False), crossing="drop")
    check_invariants(ps)
    np.testing.assert_array_equal(ps.row_number, [1, 3])
    rows = ps.dropped.reasons["quantiles decrease with the level (crossing)"]
    np.testing.assert_array_equal(rows, [2, 4])


def test_all_rows_crossing_raises_with_crossing_drop():
    df = pd.DataFrame({"y": [0.0, 1], "q0.1": [1.0, 2.0], "q0.9": [0.0, 1.0]})
    with pytest.raises(InputError, match="every row has quantiles that decrease") as ei:
        load(df.to_csv(index=False), crossing="drop")
    assert ei.value.rows == [1, 2]
    assert "crossing='rearrange'" in str(ei.value) and "sort per row" in ei.value.app_message()


def test_duplicate_quantile_levels_raise():
    df = pd.DataFrame({"y": [0.0, 1], "q5": [0.0, 1.0], "q0.05": [0.0, 1.0], "q0.9": [1.0, 2.0]})
    with pytest.raises(InputError, match="both give level 0.05"):
        load(df.to_csv(index=False))


@pytest.mark.parametrize(
    "names",
    [
        ["sample_0", "sample_1", "sample_2"],
        ["member_CMCG", "member_ETA", "member_GFS"],
        ["m0", "m1", "m2"],
        ["ens_1", "ens_2", "ens_3"],
        ["CTR", "P1", "P2"],
    ],
)
def test_sample_layout_member_names(names):
    rng = np.random.default_rng(2)
    s = rng.normal(size=(20, len(names)))
    df = pd.DataFrame(s, columns=names)
    df.insert(0, "observed", rng.normal(size=20))
    ps = load(df.to_csv(index=False))
    assert ps.layout == "sample" and isinstance(ps.dist, SampleSet)
    np.testing.assert_array_equal(ps.dist.samples, s)


def test_samples_preferred_over_ens_mean_std_and_override():
    rng = np.random.default_rng(3)
    s = rng.normal(size=(10, 4))
    df = pd.DataFrame(s, columns=[f"member_{i}" for i in range(4)])
    df["ens_mean"] = s.mean(axis=1)
    df["ens_std"] = s.std(axis=1, ddof=1)
    df["y_true"] = rng.normal(size=10)
    ps = load(df.to_csv(index=False))
    assert ps.layout == "sample" and ps.dist.samples.shape == (10, 4)
    # every layout keeps all rows: the tie goes to the members (the layout notice says so and how to choose another)
    assert any("on a tie, in the order sample > quantile > gaussian" in m and "layout='gaussian'" in m
               for m in ps.messages)
    # member_mean-like names are never members
    assert "ens_mean" not in find_sample_columns(df) and "ens_std" not in find_sample_columns(df)
    ps2 = load(df.to_csv(index=False), columns={"samples": None})
    assert ps2.layout == "gaussian"
    np.testing.assert_allclose(ps2.dist.std(), df["ens_std"])
    ps3 = load(df.to_csv(index=False), columns={"std": "ens_std"})  # mapping a layout role switches others off
    assert ps3.layout == "gaussian"


def test_sample_mapping_list_and_too_few():
    df = pd.DataFrame({"y": [0.0, 1, 2], "a": [0.0, 1, 2], "b": [1.0, 2, 3], "c": [2.0, 3, 4]})
    ps = load(df.to_csv(index=False), columns={"samples": ["a", "C"]})  # case-insensitive
    np.testing.assert_array_equal(ps.dist.samples, df[["a", "c"]].to_numpy())
    with pytest.raises(InputError, match="fewer than 2 samples"):
        load(df.to_csv(index=False), columns={"samples": ["a"]})


def test_point_only_layout():
    ps = load("y_true,pred\n1,1.5\n2,2.5\n3,2\n")
    assert ps.layout == "point" and ps.dist is None
    np.testing.assert_array_equal(ps.point, [1.5, 2.5, 2.0])
    assert any("point predictions only" in m for m in ps.messages)


def test_point_pred_is_a_fallback_for_mean():
    ps = load("y_true,point_pred,sigma\n1,1.5,1\n2,2.5,1\n")
    np.testing.assert_array_equal(ps.point, [1.5, 2.5])
    ps = load("y_true,mean,point_pred,sigma\n1,1.5,9,1\n2,2.5,9,1\n")
    np.testing.assert_array_equal(ps.point, [1.5, 2.5])


def test_error_only_files():
    ps = load("E,uE,X\n0.5,1.0,3\n-0.2,0.5,4\n0.1,0.2,5\n")
    assert ps.layout == "gaussian"
    np.testing.assert_array_equal(ps.y, [0.5, -0.2, 0.1])
    np.testing.assert_array_equal(ps.dist.mean(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ps.dist.std(), [1.0, 0.5, 0.2])
    assert list(ps.features.columns) == ["X"]
    assert any("prediction error" in m and "mean := 0" in m for m in ps.messages)
    # the brief's explicit mapping: y = E column with a prediction column
    ps2 = load("E,pred,uE\n1,0.5,1\n2,2.5,1\n", columns={"y": "E", "mean": "pred", "std": "uE"})
    np.testing.assert_array_equal(ps2.y, [1.0, 2.0])
    np.testing.assert_array_equal(ps2.dist.mean(), [0.5, 2.5])
    with pytest.raises(InputError, match="both mapped"):
        load("E,pred,uE\n1,0.5,1\n2,2.5,1\n", columns={"error": "E", "mean": "pred"})


@pytest.mark.parametrize("y", ["y", "Y_TRUE", "target", "True", "obs", "Observed", "y true"])
@pytest.mark.parametrize("mean", ["mean", "MU", "pred", "prediction", "y_pred", "ens_mean"])
@pytest.mark.parametrize("std", ["std", "Sigma", "sd", "stddev", "y_std", "uncertainty", "ens_std"])
def test_aliases_case_insensitive(y, mean, std):
    ps = load(f"{y},{mean},{std}\n1,2,3\n4,5,6\n")
    np.testing.assert_array_equal(ps.y, [1, 4])
    np.testing.assert_array_equal(ps.dist.mean(), [2, 5])
    np.testing.assert_array_equal(ps.dist.std(), [3, 6])


def test_split_group_model_features():
    text = (
        "y,mean,std,Split,group,model,x1,x_b,feature_c,notes\n"
        "1,1,1,calibration,a,m1,0.1,1,a,hi\n"
        "2,2,1,test,b,m1,0.2,2,b,\n"
        "3,3,1,val,a,m2,0.3,3,c,\n"
        "4,4,1,TEST,b,m2,0.4,4,d,\n"
    )
    ps = load(text)
    assert list(ps.split) == ["cal", "test", "cal", "test"]
    assert list(ps.group) == ["a", "b", "a", "b"]
    assert list(ps.model) == ["m1", "m1", "m2", "m2"]
    assert ps.models() == ["m1", "m2"]
    assert list(ps.features.columns) == ["x1", "x_b", "feature_c"]
    assert ps.features["x1"].dtype.kind == "f"
    assert any("notes" in m for m in ps.messages if m.startswith("columns not used"))


def test_long_multi_model_file_keeps_all_rows():
    df = pd.concat([gaussian_frame(30, 0).assign(model="A"), gaussian_frame(30, 1).assign(model="B")])
    ps = load(df.to_csv(index=False))
    assert ps.n_rows == 60 and ps.models() == ["A", "B"]


def test_numeric_model_labels_are_written_without_decimals():
    ps = load("y,mean,std,model\n1,1,1,1\n2,2,1,2\n3,3,1,\n")
    assert list(ps.model) == ["1", "2", "(missing)"]


# ---------------------------------------------------------------------------------------------
# validation and drops
# ---------------------------------------------------------------------------------------------


def test_drops_counted_per_reason_with_row_numbers():
    text = (
        "y_true,mean,std\n"
        "1,1,1\n"  # 1 ok
        ",1,1\n"  # 2 y missing
        "1,inf,1\n"  # 3 mean infinite
        "1,1,0\n"  # 4 sigma = 0
        "1,1,-2\n"  # 5 sigma < 0
        "1,1,NaN\n"  # 6 sigma missing
        "2,2,2\n"  # 7 ok
        "NA,1,0\n"  # 8 y missing and sigma = 0 (counted once in the total)
    )
    ps = load(text)
    check_invariants(ps)
    np.testing.assert_array_equal(ps.row_number, [1, 7])
    r = ps.dropped.reasons
    np.testing.assert_array_equal(r["y_true: missing value"], [2, 8])
    np.testing.assert_array_equal(r["mean: infinite value"], [3])
    np.testing.assert_array_equal(r["std: σ = 0"], [4, 8])
    np.testing.assert_array_equal(r["std: σ < 0"], [5])
    np.testing.assert_array_equal(r["std: missing value"], [6])
    assert ps.dropped.total == 6 and ps.n_read == 8
    assert any("zero predicted uncertainty" in m for m in ps.messages)
    summary = ps.dropped.summary()
    assert set(summary["reason"]) == set(r)


def test_negative_variance_dropped():
    ps = load("y,mean,var\n1,1,1\n2,2,-1\n3,3,0\n4,4,4\n")
    np.testing.assert_array_equal(ps.row_number, [1, 4])
    np.testing.assert_array_equal(ps.dist.std(), [1.0, 2.0])
    assert set(ps.dropped.reasons) == {"var: variance < 0", "var: variance = 0"}


def test_sample_rows_with_missing_member_dropped():
    ps = load("y,sample_0,sample_1\n1,0,1\n2,,1\n3,2,4\n")
    np.testing.assert_array_equal(ps.row_number, [1, 3])
    assert list(ps.dropped.reasons) == ["sample columns: missing value"]


def test_non_numeric_cells_name_column_and_rows():
    text = "y_true,mean,std\n1,1,1\n2,abc,1\n3,3,1\n4,n.a.,1\n"
    with pytest.raises(InputError) as ei:
        load(text)
    err = ei.value
    assert err.columns == ["mean"] and err.rows == [2, 4] and err.source == "test.csv"
    msg = str(err)
    assert "test.csv" in msg and "'mean'" in msg and "row 2: 'abc'" in msg and "What to do" in msg


def test_missing_target_column():
    with pytest.raises(InputError, match="no target column found") as ei:
        load("a,b,c\n1,2,3\n4,5,6\n")
    assert "a, b, c" in str(ei.value)


def test_missing_prediction_column():
    with pytest.raises(InputError, match="no prediction column found"):
        load("y_true,std\n1,2\n3,4\n")


def test_fewer_than_two_valid_rows():
    with pytest.raises(InputError, match="only 1 of 3 row"):
        load("y,mean,std\n1,1,1\n2,2,0\n,3,1\n")


def test_header_without_rows():
    with pytest.raises(InputError, match="no data rows"):
        load("y,mean,std\n")


def test_mapping_errors():
    text = "y,mean,std,q0.1,q0.9\n1,1,1,0,2\n2,2,1,1,3\n"
    with pytest.raises(InputError, match="not in the file"):
        load(text, columns={"std": "sigma_typo"})
    with pytest.raises(InputError, match="unknown role"):
        load(text, columns={"stdev": "std"})
    with pytest.raises(InputError, match="several uncertainty layouts"):
        load(text, columns={"std": "std", "quantiles": ["q0.1", "q0.9"]})
    assert load(text, columns={"quantiles": None}).layout == "gaussian"
    assert load(text).layout == "quantile"


def test_ambiguous_alias_raises():
    # read_table refuses such files as duplicates; frames built elsewhere get a clear error from the finder
    frame = pd.DataFrame(columns=["y", "mean", "sd", "SD"])
    with pytest.raises(InputError, match="several columns could be the 'std' column"):
        find_column(frame, "std")
    with pytest.raises(InputError, match="duplicate column names"):
        load("y,mean,y true,Y_TRUE\n1,2,3,4\n")


# ---------------------------------------------------------------------------------------------
# reading: formats, encodings, delimiters, bad files
# ---------------------------------------------------------------------------------------------

ROWS = [[1.5, 1.25, 0.5], [2.5, 2.75, 1.0], [-3.0, -2.5, 2.0]]


def table(sep: str = ",", header=("y_true", "mean", "std"), newline: str = "\n") -> str:
    lines = [sep.join(header)] + [sep.join(repr(v) for v in r) for r in ROWS]
    return newline.join(lines) + newline


def assert_rows(ps: cc.PredictionSet) -> None:
    a = np.array(ROWS)
    np.testing.assert_array_equal(ps.y, a[:, 0])
    np.testing.assert_array_equal(ps.dist.mean(), a[:, 1])
    np.testing.assert_array_equal(ps.dist.std(), a[:, 2])


@pytest.mark.parametrize("sep", [",", "\t", ";", "|", " ", "   "])
def test_delimiters(sep):
    text = table(sep)
    if sep.strip() == "":
        text = text.replace("\n", "  \n")  # trailing whitespace too
    frame = read_table(text.encode(), source="t.txt")
    assert list(frame.columns) == ["y_true", "mean", "std"]
    assert_rows(load(text))


def test_trailing_delimiters_are_harmless():
    assert_rows(load(table().replace("\n", ",\n")))


def test_tsv_name_and_crlf():
    ps = load(table("\t", newline="\r\n"), source="preds.tsv")
    assert_rows(ps)


def test_semicolon_with_decimal_comma():
    text = "y_true;mean;std\n1,5;1,25;0,5\n2,5;2,75;1,0\n-3,0;-2,5;2,0\n"
    ps = load(text)
    assert_rows(ps)
    assert any("decimal comma" in m for m in ps.messages)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "cp1252", "latin-1"])
def test_encodings(encoding):
    text = table(header=("y_true", "mean", "std", "group")).splitlines()
    text = "\n".join([text[0]] + [ln + ",Zürich–é" if encoding != "latin-1" else ln + ",Zürich é" for ln in text[1:]])
    data = text.encode(encoding)
    ps = cc.load_predictions(data, source="enc.csv")
    assert_rows(ps)
    assert set(ps.group) == {"Zürich–é" if encoding != "latin-1" else "Zürich é"}


def test_leading_comment_lines_are_kept():
    text = "# produced by model X\n#   units: eV\n\n" + table()
    frame = read_table(text.encode())
    assert frame.attrs["comments"] == ["produced by model X", "units: eV"]
    ps = load(text)
    assert_rows(ps)
    assert any("produced by model X" in m for m in ps.messages)


def test_comment_shown_when_columns_unknown():
    with pytest.raises(InputError, match="Data from Fig. 5"):
        load('# Data from Fig. 5 in a paper\n"R","V","UV95"\n1,2,3\n4,5,6\n')


def test_quoted_header_and_values():
    ps = load(
        '"y_true","mean","std","note"\n"1.5","1.25","0.5","a, b"\n"2.5","2.75","1.0","c"\n"-3.0","-2.5","2.0",""\n'
    )
    assert_rows(ps)


def test_gzip_text():
    ps = cc.load_predictions(gzip.compress(table().encode()), source="p.csv.gz")
    assert_rows(ps)


def test_parquet_and_npz_and_roundtrips(tmp_path):
    df = gaussian_frame(40, 5)
    df["model"] = np.where(np.arange(40) < 20, "a", "b")
    ref = load(df.to_csv(index=False))
    paths = {}
    paths["csv"] = tmp_path / "p.csv"
    df.to_csv(paths["csv"], index=False)
    paths["tsv"] = tmp_path / "p.tsv"
    df.to_csv(paths["tsv"], sep="\t", index=False)
    paths["parquet"] = tmp_path / "p.parquet"
    df.to_parquet(paths["parquet"])
    for fmt, p in paths.items():
        for arg in (p, str(p), p.read_bytes(), io.BytesIO(p.read_bytes())):
            ps = cc.load_predictions(arg)
            np.testing.assert_array_equal(ps.y, ref.y, err_msg=fmt)
            np.testing.assert_array_equal(ps.dist.std(), ref.dist.std(), err_msg=fmt)
            np.testing.assert_array_equal(ps.model, ref.model, err_msg=fmt)
        assert read_table(p).attrs["format"] == fmt
    assert cc.load_predictions(paths["parquet"]).source == "p.parquet"
    # npz of named arrays (no pickle)
    buf = io.BytesIO()
    np.savez(buf, y=df.y_true.to_numpy(), mean=df["mean"].to_numpy(), std=df["std"].to_numpy())
    ps = cc.load_predictions(buf.getvalue(), source="p.npz")
    np.testing.assert_array_equal(ps.y, ref.y)


def test_npz_2d_arrays_become_numbered_columns():
    buf = io.BytesIO()
    np.savez(buf, probs=np.full((5, 3), 1 / 3), labels=np.arange(5) % 3)
    frame = read_table(buf.getvalue())
    assert list(frame.columns) == ["prob_0", "prob_1", "prob_2", "label"]
    assert detect_task(frame) == "classification"


def test_object_npz_is_refused():
    buf = io.BytesIO()
    np.savez(buf, a=np.array([{"x": 1}, None], dtype=object))
    with pytest.raises(InputError, match="without pickle"):
        read_table(buf.getvalue())


def test_parquet_footer_checked_before_reading(tmp_path):
    p = tmp_path / "big.parquet"
    pd.concat([gaussian_frame(10)] * 5000, ignore_index=True).to_parquet(p)  # compressible
    size = p.stat().st_size
    with pytest.raises(InputError, match="decode to about .* more than the size limit"):
        cc.load_predictions(p, max_bytes=size + 10)  # file fits, its data does not
    with pytest.raises(InputError, match="larger than the size limit"):
        cc.load_predictions(p, max_bytes=size - 1)


def test_uploaded_file_like_object():
    class Upload:  # the parts of streamlit's UploadedFile the loader uses
        name = "uploaded.csv"

        def __init__(self, data: bytes) -> None:
            self._data = data

        def getvalue(self) -> bytes:
            return self._data

    ps = cc.load_predictions(Upload(table().encode()))
    assert ps.source == "uploaded.csv"
    assert_rows(ps)
    assert cc.load_predictions(io.StringIO(table()), source="s.csv").n_rows == 3


@pytest.mark.parametrize(
    "data, pattern",
    [
        (b"", "is empty"),
        (b"   \n\n  ", "is empty"),
        (b"# only a comment\n# and another\n", "only comment lines"),
        (b"y_true:mean:std\n1:2:3\n4:5:6\n", "everything is in one column"),
        (b"value\n1\n2\n", "everything is in one column"),
        (b"\x00\x01\x02\x03garbage\xff\xfe\x00" * 50, "binary data"),
        (bytes(range(256)) * 4, "binary data"),
        (b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94.", "pickle"),
        (b"\x93NUMPY\x01\x00v\x00{'descr': '<f8'}", "pickle or a raw .npy"),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "zip archive"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "legacy Excel"),
        (b"PAR1\x00\x00garbagePAR1", "not a readable Parquet"),
        (b"\x1f\x8b\x08\x00garbage", "gzip"),
        (b"y,mean,std,MEAN\n1,2,3,4\n", "duplicate column names"),
        (b"y,mean,std,mean\n1,2,3,4\n", "duplicate column names"),
        (b"y_true,mean,std\n1,2,3\n4,5,6,7\n", r"line 3 \(data row 2\) has 4 fields but the header has 3"),
        (b"# c\ny_true,mean,std\n1,2,3\n4,5,6,7\n", r"line 4 \(data row 2\) has 4 fields"),
        (b"y_true,mean,std\n1,2,3,4\n5,6,7,8\n", r"line 2 \(data row 1\) has 4 fields but the header has 3"),
        (b"y_true,mean,std\n" + b"1,2,3\n" * 60 + b"4,5,6,7\n", r"line 62 \(data row 61\) has 4 fields"),
    ],
)
def test_bad_files_raise_input_error(data, pattern):
    with pytest.raises(InputError, match=pattern) as ei:
        cc.load_predictions(data, source="bad.csv")
    assert str(ei.value).startswith("bad.csv:")
    assert "What to do" in str(ei.value)


def test_duplicate_columns_named():
    with pytest.raises(InputError) as ei:
        load("y,mean,std,Mean\n1,2,3,4\n")
    assert ei.value.columns == ["Mean", "mean"]


def test_excel_without_openpyxl_gives_clear_message():
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("openpyxl installed")
    buf = io.BytesIO()
    import zipfile

    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(InputError, match="openpyxl, which is not installed"):
        cc.load_predictions(buf.getvalue(), source="book.xlsx")


def test_huge_column_count():
    header = ",".join(["y", "mean", "std"] + [f"c{i}" for i in range(MAX_COLUMNS)])
    with pytest.raises(InputError, match="columns, more than the limit"):
        load(header + "\n" + ",".join(["1"] * (MAX_COLUMNS + 3)) + "\n")


def test_size_limits(tmp_path):
    data = table().encode()
    with pytest.raises(InputError, match="larger than the size limit"):
        cc.load_predictions(data, max_bytes=10)
    with pytest.raises(InputError, match="larger than the size limit"):
        cc.load_predictions(io.BytesIO(data), max_bytes=10)
    p = tmp_path / "t.csv"
    p.write_bytes(data)
    with pytest.raises(InputError, match="larger than the size limit"):
        cc.load_predictions(p, max_bytes=10)
    with pytest.raises(InputError, match="decompresses to more"):
        cc.load_predictions(gzip.compress(b"y,mean,std\n" + b"1,2,3\n" * 1000), max_bytes=1000)
    with pytest.raises(InputError, match="file not found"):
        cc.load_predictions(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="not a regular file"):
        cc.load_predictions(tmp_path)


# ---------------------------------------------------------------------------------------------
# helpers and task detection
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, level",
    [("q0.05", 0.05), ("q_0.5", 0.5), ("quantile_0.95", 0.95), ("q5", 0.05), ("q05", 0.05), ("Q50", 0.5),
     ("q97.5", 0.975), ("q5%", 0.05), ("q0", 0.0), ("q1.0", 1.0), ("q150", None), ("qx", None), ("mean", None)],
)
def test_parse_quantile_level(name, level):
    got = parse_quantile_level(name)
    assert (got is None and level is None) or got == pytest.approx(level)


def test_find_column_helpers():
    frame = pd.DataFrame(columns=["Y_True", "Pred", "Sigma", "x1", "member_A", "member_mean"])
    assert find_column(frame, "y") == "Y_True"
    assert find_column(frame, "mean") == "Pred"
    assert find_column(frame, "std") == "Sigma"
    assert find_column(frame, "std", {"std": None}) is None
    assert find_column(frame, "std", {"std": "sigma"}) == "Sigma"
    assert find_sample_columns(frame) == ["member_A"]  # one member: not a sample layout
    assert find_feature_columns(frame) == ["x1"]
    assert "y_true" in ALIASES["y"] and "sigma" in ALIASES["std"]


def test_detect_task():
    def f(cols):
        return pd.DataFrame(columns=cols)

    assert detect_task(f(["label", "prob_0", "prob_1"])) == "classification"
    assert detect_task(f(["y_true", "logit_0", "logit_1", "logit_2"])) == "classification"
    assert detect_task(f(["true_label", "pred_label", "confidence"])) == "classification"
    assert detect_task(f(["label", "prob"])) == "classification"
    assert detect_task(f(["y_true", "mean", "std"])) == "regression"
    assert detect_task(f(["y_true", "CTR", "P1", "P2"])) == "regression"
    assert detect_task(f(["y_true", "mean", "std"]), {"labels": "y_true"}) == "classification"
    assert detect_task(f(["label", "prob_0"]), {"y": "label", "mean": "prob_0"}) == "regression"


def test_classification_is_dispatched(monkeypatch):
    calls = {}

    def parse_classification_frame(frame, source, columns, renormalize):
        calls.update(frame=frame, source=source, columns=columns, renormalize=renormalize)
        return cc.PredictionSet(task="classification", source=source)

    monkeypatch.setattr(api, "parse_classification_frame", parse_classification_frame)
    ps = load("label,prob_0,prob_1\n0,0.9,0.1\n1,0.2,0.8\n", renormalize=True)
    assert ps.task == "classification"
    assert calls["source"] == "test.csv" and calls["renormalize"] is True and calls["columns"] is None
    assert list(calls["frame"].columns) == ["label", "prob_0", "prob_1"]
    # an explicit task wins over detection
    ps = load("y_true,mean,std\n1,1,1\n2,2,2\n", task="classification")
    assert ps.task == "classification"


def test_unknown_task_and_bad_columns_type():
    with pytest.raises(InputError, match="unknown task"):
        load(table(), task="ranking")
    with pytest.raises(InputError, match="columns must be a mapping"):
        load(table(), columns=["y"])


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------

_TEXTISH = st.text(alphabet=st.sampled_from(list(",;\t| \n\r\"'#0123456789.-+eEnaNinfyYmeanstdq_%x")), max_size=400)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.one_of(st.binary(max_size=600), _TEXTISH.map(lambda s: s.encode("utf-8"))))
def test_garbage_never_raises_anything_but_input_error(data):
    try:
        ps = cc.load_predictions(data, source="fuzz.csv")
    except InputError as exc:
        assert "unexpected problem" not in str(exc), str(exc)
    else:
        check_invariants(ps)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 40),
    seed=st.integers(0, 2**31 - 1),
    fmt=st.sampled_from(["csv", "tsv", "parquet"]),
    bad_frac=st.floats(0.0, 0.5),
)
def test_roundtrip_and_drop_accounting(n, seed, fmt, bad_frac):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"y_true": rng.normal(size=n) * 1e3, "mean": rng.normal(size=n) / 7, "std": rng.uniform(1e-9, 5, n)}
    )
    bad = rng.random((n, 3)) < bad_frac
    kinds = rng.integers(0, 3, size=(n, 3))
    vals = df.to_numpy().copy()
    vals[bad & (kinds == 0)] = np.nan
    vals[bad & (kinds == 1)] = np.inf
    vals[bad & (kinds == 2)] = 0.0
    df = pd.DataFrame(vals, columns=df.columns)
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf)
        data = buf.getvalue()
    else:
        data = df.to_csv(index=False, sep="\t" if fmt == "tsv" else ",").encode()
    ok = np.isfinite(vals).all(axis=1) & (vals[:, 2] > 0)
    if ok.sum() < 2:
        with pytest.raises(InputError, match="at least 2 are needed"):
            cc.load_predictions(data)
        return
    ps = cc.load_predictions(data)
    check_invariants(ps)
    np.testing.assert_array_equal(ps.row_number, np.flatnonzero(ok) + 1)
    np.testing.assert_array_equal(ps.y, vals[ok, 0])
    np.testing.assert_array_equal(ps.dist.mean(), vals[ok, 1])
    np.testing.assert_array_equal(ps.dist.std(), vals[ok, 2])
