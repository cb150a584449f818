"""Classification loader: layouts, class names, validation messages, dropped rows, real files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calib_core as cc
from calib_core.data.classification import parse_classification_frame

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"


def _probs_frame(n: int = 50, k: int = 3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=n)
    df = pd.DataFrame({f"prob_{j}": p[:, j] for j in range(k)})
    df.insert(0, "label", rng.integers(0, k, n))
    return df


def _load(text: str, **kw) -> cc.PredictionSet:
    return cc.load_predictions(text.encode(), source="upload.csv", **kw)


# --------------------------------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------------------------------
def test_probability_columns_in_numeric_order():
    df = _probs_frame(k=12)
    shuffled = df[["label"] + [f"prob_{j}" for j in (3, 0, 11, 1, 2, 10, 4, 5, 6, 7, 8, 9)]]
    ps = parse_classification_frame(shuffled, "f.csv")
    assert ps.task == "classification" and ps.layout == "probs"
    assert ps.classes == [str(j) for j in range(12)]
    np.testing.assert_allclose(ps.probs, df[[f"prob_{j}" for j in range(12)]].to_numpy())
    np.testing.assert_array_equal(ps.labels, df["label"].to_numpy())
    assert ps.logits is None and not ps.top_label_only
    assert ps.n_read == ps.n_rows == 50 and ps.dropped.total == 0


def test_logits_are_kept_and_preferred_over_probabilities():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(30, 4)) * 3
    df = pd.DataFrame({f"logit_{j}": z[:, j] for j in range(4)})
    df["label"] = rng.integers(0, 4, 30)
    ps = parse_classification_frame(df, "z.csv")
    assert ps.layout == "logits"
    np.testing.assert_allclose(ps.logits, z)
    np.testing.assert_allclose(ps.probs, np.exp(z) / np.exp(z).sum(1, keepdims=True))
    for j in range(4):
        df[f"prob_{j}"] = 0.25
    ps = parse_classification_frame(df, "z.csv")
    assert ps.layout == "logits" and any("not used" in m for m in ps.messages)


def test_class_names_from_columns_and_from_labels():
    df = pd.DataFrame(
        {"label": ["cat", "dog", "bird", "Dog"], "prob_cat": [0.7, 0.2, 0.1, 0.3], "prob_dog": [0.2, 0.7, 0.1, 0.4]}
    )
    df["prob_bird"] = 1 - df["prob_cat"] - df["prob_dog"]
    ps = parse_classification_frame(df, "names.csv")
    assert ps.classes == ["cat", "dog", "bird"]
    assert ps.labels.tolist() == [0, 1, 2, 1]  # 'Dog' matched case-insensitively
    # names with numbered columns: alphabetical (scikit-learn's order), said in the messages
    df2 = pd.DataFrame({"y_true": ["cat", "dog", "bird"], "prob_0": [0.1, 0.2, 0.7], "prob_1": [0.8, 0.1, 0.2]})
    df2["prob_2"] = 1 - df2["prob_0"] - df2["prob_1"]
    ps = parse_classification_frame(df2, "n.csv")
    assert ps.classes == ["bird", "cat", "dog"] and ps.labels.tolist() == [1, 2, 0]
    assert any("alphabetically" in m for m in ps.messages)
    ps = parse_classification_frame(df2, "n.csv", {"classes": ["dog", "bird", "cat"]})
    assert ps.labels.tolist() == [2, 0, 1]


def test_binary_single_column_positive_class():
    ps = _load("label,prob\nyes,0.9\nno,0.2\nyes,0.6\nno,0.4\n")
    assert ps.layout == "binary_prob" and ps.classes == ["no", "yes"]
    assert ps.labels.tolist() == [1, 0, 1, 0]
    np.testing.assert_allclose(ps.probs[:, 1], [0.9, 0.2, 0.6, 0.4])
    assert any("positive class 'yes'" in m for m in ps.messages)
    # two label values none of which reads as positive: formerly refused; now the second of the sorted values (the
    # class of scikit-learn's predict_proba(X)[:, 1]), stated with how to switch it
    ps = _load("label,prob\na,0.9\nb,0.2\na,0.6\n")
    assert ps.classes == ["a", "b"] and ps.labels.tolist() == [0, 1, 0]
    assert any("positive class 'b' (the second of the sorted label values" in m and "columns={'positive': 'a'}" in m
               for m in ps.messages)
    with pytest.raises(cc.InputError, match="positive class") as e:  # one value that tells nothing: still asked
        _load("label,prob\na,0.9\na,0.2\na,0.6\n")
    assert "columns={'positive'" in e.value.hint
    ps = _load("label,prob\na,0.9\nb,0.2\na,0.6\n", columns={"positive": "a"})
    assert ps.classes == ["b", "a"] and ps.labels.tolist() == [1, 0, 1]
    ps = _load("label,logit\n1,2.0\n0,-1.0\n1,0.5\n")
    assert ps.layout == "binary_logit"
    np.testing.assert_allclose(ps.probs[:, 1], 1 / (1 + np.exp(-np.array([2.0, -1.0, 0.5]))))
    with pytest.raises(cc.InputError, match="3 values"):
        _load("label,prob\n0,0.9\n1,0.2\n2,0.6\n")


def test_top_label_only_files():
    for header in ("label,pred,confidence", "true_label,pred_label,confidence"):
        ps = _load(f"{header}\n3,3,0.9\n1,2,0.8\n2,2,0.7\n3,1,0.95\n")
        assert ps.layout == "top_label" and ps.top_label_only and ps.probs is None
        assert ps.classes == ["1", "2", "3"]
        np.testing.assert_array_equal(ps.labels, [2, 0, 1, 2])
        np.testing.assert_array_equal(ps.point, [2, 1, 1, 0])
        np.testing.assert_allclose(ps.confidence, [0.9, 0.8, 0.7, 0.95])
        assert any("only top-label diagnostics" in m for m in ps.messages)
    sub = ps.take(np.array([0, 3]))
    np.testing.assert_allclose(sub.confidence, [0.9, 0.95])
    with pytest.raises(cc.InputError, match="percentages"):
        _load("label,pred,confidence\n1,1,90\n1,2,80\n2,2,70\n")


# --------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------
def test_rows_not_summing_to_one_offer_renormalisation():
    df = _probs_frame()
    df.loc[[4, 9], "prob_0"] += 0.2
    with pytest.raises(cc.InputError, match="do not sum to 1") as e:
        parse_classification_frame(df, "sum.csv")
    err = e.value
    assert err.source == "sum.csv" and err.rows == [5, 10] and "renormalize=True" in err.hint
    assert set(err.columns) == {"prob_0", "prob_1", "prob_2"}
    ps = parse_classification_frame(df, "sum.csv", renormalize=True)
    np.testing.assert_allclose(ps.probs.sum(1), 1.0)
    assert any("renormalised" in m and "rows 5, 10" in m for m in ps.messages)
    # small rounding (4 decimals) is within tolerance and left alone
    rounded = _probs_frame(k=10).round(4)
    ps = parse_classification_frame(rounded, "r.csv")
    np.testing.assert_allclose(ps.probs, rounded.iloc[:, 1:].to_numpy())


def test_labels_out_of_range_and_k_mismatch():
    df = _probs_frame()
    df.loc[7, "label"] = 3
    with pytest.raises(cc.InputError, match="not among the 3 classes") as e:
        parse_classification_frame(df, "k.csv")
    assert e.value.rows == [8] and e.value.columns == ["label"] and "K mismatch" in e.value.hint
    df["label"] = np.resize([1, 2, 3], len(df))
    with pytest.raises(cc.InputError, match="not among") as e:
        parse_classification_frame(df, "k.csv")
    assert "1-based" in e.value.hint
    with pytest.raises(cc.InputError, match="lists 2 names but there are 3"):
        parse_classification_frame(_probs_frame(), "k.csv", {"classes": ["a", "b"]})


def test_missing_and_invalid_values_are_dropped_and_counted():
    df = _probs_frame(n=40)
    df.loc[3, "prob_1"] = np.nan
    df.loc[5, "label"] = np.nan
    df.loc[8, "prob_2"] = np.inf
    df.loc[11, ["prob_0", "prob_1", "prob_2"]] = [1.2, -0.1, -0.1]  # sums to 1 but outside [0, 1]
    df.loc[12, ["prob_0", "prob_1", "prob_2"]] = [1.0 + 1e-9, 0.0, 0.0]  # rounding: kept, clipped
    ps = parse_classification_frame(df, "drop.csv")
    assert ps.n_read == 40 and ps.n_rows == 36 and ps.dropped.total == 4
    assert ps.row_number.tolist() == [r for r in range(1, 41) if r not in (4, 6, 9, 12)]
    reasons = ps.dropped.summary().set_index("reason")["rows"].to_dict()
    assert any("label" in r and v == "6" for r, v in reasons.items())
    assert any("outside" in r and v == "12" for r, v in reasons.items())
    assert ps.probs.max() <= 1.0 and any("dropped" in m for m in ps.messages)


def test_non_numeric_logits_mostly_out_of_range_and_missing_columns():
    with pytest.raises(cc.InputError, match="non-numeric") as e:
        _load("label,prob_0,prob_1\n0,0.5,0.5\n1,abc,0.5\n")
    assert e.value.rows == [2] and e.value.columns == ["prob_0"]
    with pytest.raises(cc.InputError, match="name the columns logit_") as e:
        _load("label,prob_0,prob_1\n0,2.5,-1\n1,-3,0.2\n1,4,1\n")
    # a 'score' of numbers in [0, 1] beside two label values is a binary probability (a detection file's score,
    # matched) since the loader reads files as ML tools write them; scores outside [0, 1] are still no probability
    assert parse_classification_frame(pd.DataFrame({"label": [0, 1], "score": [0.1, 0.2]}), "s.csv").layout == \
        "binary_prob"
    with pytest.raises(cc.InputError, match="no probability or logit columns"):
        parse_classification_frame(pd.DataFrame({"label": [0, 1], "score": [1.5, 2.0]}), "s.csv")
    with pytest.raises(cc.InputError, match="no label column"):
        parse_classification_frame(pd.DataFrame({"prob_0": [0.1, 0.2], "prob_1": [0.9, 0.8]}), "s.csv")
    with pytest.raises(cc.InputError, match="unknown role"):
        parse_classification_frame(_probs_frame(), "s.csv", {"sigma": "x"})
    with pytest.raises(cc.InputError, match="no data rows"):
        parse_classification_frame(_probs_frame().iloc[:0], "s.csv")


def test_split_group_model_columns_and_explicit_mapping():
    df = _probs_frame(n=6)
    df["Split"] = ["cal", "test", "validation", "test", "cal", "test"]
    df["model"] = ["a", "a", "a", "b", "b", "b"]
    df["group"] = ["x", "y", "x", "y", "x", "y"]
    ps = parse_classification_frame(df, "m.csv")
    assert ps.split.tolist() == ["cal", "test", "cal", "test", "cal", "test"]
    assert ps.models() == ["a", "b"] and ps.group.tolist()[:2] == ["x", "y"]
    renamed = df.rename(columns={"label": "truth_col", "prob_0": "A", "prob_1": "B", "prob_2": "C"})
    ps = parse_classification_frame(renamed, "m.csv", {"labels": "truth_col", "prob": ["A", "B", "C"]})
    assert ps.layout == "probs" and ps.classes == ["A", "B", "C"]
    np.testing.assert_allclose(ps.probs, df[["prob_0", "prob_1", "prob_2"]].to_numpy())


# --------------------------------------------------------------------------------------------------
# real files through cc.load_predictions
# --------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not REAL.is_dir(), reason="real data folder missing")
def test_real_classification_files_load():
    ps = cc.load_predictions(REAL / "netcal_cifar_probs" / "densenet-bc-100-cifar-100.npz")
    assert ps.task == "classification" and ps.layout == "probs" and ps.probs.shape == (10000, 100)
    with np.load(REAL / "netcal_cifar_probs" / "densenet-bc-100-cifar-100.npz", allow_pickle=False) as d:
        np.testing.assert_array_equal(ps.labels, d["labels"])
    ps = cc.load_predictions(REAL / "hollance_toplabel_csv" / "markus93" / "probs_resnet110_c100_logits.csv")
    assert ps.layout == "top_label" and ps.n_rows == 10000 and len(ps.classes) == 100
    assert np.mean(ps.labels == ps.point) == pytest.approx(0.7148)
