"""Crossing quantiles and the choice of layout in the loader (``calib_core.data.regression_layout``).

* rearrangement (Chernozhukov, Fernández-Val & Galichon 2010): sorting a row never increases its quantile loss
  (Koenker & Bassett 1978) for any target, nor its L^p distance to any increasing true quantile curve — hypothesis
  property tests against the metrics layer's quantile score, an implementation of its own;
* the loader sorts crossing rows by default, counts them and says so (Python and Data-page wording), and
  ``crossing="drop"`` drops them into the ``DropReport``; missing / infinite quantiles are dropped as before;
* a file with several layouts is read in the one that keeps the most rows (tie: sample > quantile > gaussian),
  ``layout=`` chooses, and the message says which, why and how to choose another;
* a scikit-learn quantile gradient-boosting export (one model per level) loses no row.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import calib_core as cc
from calib_core.base.predictions import app_text
from calib_core.data.regression_layout import CROSSING_REASON, LoaderNotice, rearrange_quantiles
from calib_core.metrics.regression_isotonic_quantile import quantile_score
from views import pages as views

PY_WORDS = ("columns=", "task=", "renormalize=", "crossing=", "layout=")


def load(frame: pd.DataFrame, **kw) -> cc.PredictionSet:
    ps = cc.load_predictions(frame.to_csv(index=False).encode(), source="q.csv", **kw)
    assert ps.n_read == ps.n_rows + ps.dropped.total
    return ps


def notice(ps: cc.PredictionSet, kind: str) -> LoaderNotice | None:
    return next((m for m in ps.messages if isinstance(m, LoaderNotice) and m.kind == kind), None)


def quantile_loss(y: np.ndarray, levels: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Σ_j QS_τj(q_j, y) per row, from the metrics layer (an implementation independent of the loader's)."""
    return sum(quantile_score(y, q[:, j], t) for j, t in enumerate(levels))


# ------------------------------------------------------------------------------------------------------------------
# the rearrangement as a statistic
# ------------------------------------------------------------------------------------------------------------------
finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def rows_and_levels(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 20))
    n_levels = draw(st.integers(2, 9))
    levels = np.array(sorted(draw(st.sets(st.floats(0.001, 0.999), min_size=n_levels, max_size=n_levels))))
    q = draw(arrays(np.float64, (n, n_levels), elements=finite))
    y = draw(arrays(np.float64, (n,), elements=finite))
    return levels, q, y


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(rows_and_levels())
def test_rearrangement_never_increases_the_quantile_loss(case):
    """Σ_j ρ_τj(y − sort(q)_j) ≤ Σ_j ρ_τj(y − q_j) for every row and every y (Chernozhukov et al. 2010)."""
    levels, q, y = case
    sorted_q, crossing = rearrange_quantiles(q)
    before, after = quantile_loss(y, levels, q), quantile_loss(y, levels, sorted_q)
    scale = 1e-9 * (1.0 + np.abs(q).sum(axis=1) + np.abs(y) * q.shape[1])
    assert np.all(after <= before + scale)
    np.testing.assert_array_equal(sorted_q, np.sort(q, axis=1))
    np.testing.assert_array_equal(crossing, (np.diff(q, axis=1) < 0).any(axis=1))
    np.testing.assert_array_equal(sorted_q[~crossing], q[~crossing])  # sorted rows are left exactly as they were


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(rows_and_levels(), st.sampled_from([1.0, 2.0, 3.5]))
def test_rearrangement_brings_rows_closer_to_any_increasing_true_curve(case, p):
    """‖sort(q̂) − q‖_p ≤ ‖q̂ − q‖_p for every non-decreasing q (Chernozhukov et al. 2010, Proposition 1)."""
    _, q_hat, _ = case
    truth = np.sort(np.random.default_rng(q_hat.size).normal(size=q_hat.shape) * 10, axis=1)
    sorted_q, _ = rearrange_quantiles(q_hat)
    before = (np.abs(q_hat - truth) ** p).sum(axis=1)
    after = (np.abs(sorted_q - truth) ** p).sum(axis=1)
    assert np.all(after <= before * (1 + 1e-12) + 1e-9)


def test_rearrangement_lowers_the_expected_quantile_loss_of_noisy_quantiles():
    """Seeded simulation, targets from the true law N(0, 1): quantile estimates = true quantiles + noise cross in
    most rows; sorted, their mean quantile loss is lower (strictly, in a paired comparison far beyond its noise)."""
    rng = np.random.default_rng(7)
    levels = np.linspace(0.05, 0.95, 10)
    from scipy.stats import norm

    n = 4000
    truth = norm.ppf(levels)
    q_hat = truth + rng.normal(scale=0.3, size=(n, levels.size))
    y = rng.standard_normal(n)  # the true law, not the forecasts'
    sorted_q, crossing = rearrange_quantiles(q_hat)
    diff = quantile_loss(y, levels, q_hat) - quantile_loss(y, levels, sorted_q)
    assert crossing.mean() > 0.5
    assert np.all(diff >= -1e-12)
    assert diff.mean() > 5 * diff.std(ddof=1) / np.sqrt(n)


def test_rearrangement_leaves_nonfinite_rows_and_the_input_alone():
    q = np.array([[2.0, 1.0], [np.nan, 0.0], [np.inf, 0.0], [0.0, 1.0]])
    kept = q.copy()
    out, crossing = rearrange_quantiles(q)
    np.testing.assert_array_equal(q, kept)  # a new array
    assert crossing.tolist() == [True, False, False, False]
    np.testing.assert_array_equal(out[1:], q[1:])


# ------------------------------------------------------------------------------------------------------------------
# the loader: rearranged by default, dropped on request
# ------------------------------------------------------------------------------------------------------------------
def crossing_frame() -> pd.DataFrame:
    """Rows 2 and 4 cross."""
    return pd.DataFrame({"y": [0.0, 1, 2, 3, 4, 5], "q0.1": [-1.0, 0.5, 1.0, 2.0, 3.0, 4.0],
                         "q0.5": [0.0, 0.4, 2.0, 3.0, 4.0, 5.0], "q0.9": [1.0, 2, 3, 2.5, 5.0, 6.0]})


def test_crossing_rows_are_sorted_counted_and_said_by_default():
    frame = crossing_frame()
    ps = load(frame)
    assert ps.n_rows == 6 and ps.dropped.total == 0 and ps.layout == "quantile"
    np.testing.assert_array_equal(ps.dist.values, np.sort(frame[["q0.1", "q0.5", "q0.9"]].to_numpy(), axis=1))
    note = notice(ps, "crossing")
    assert note.startswith("2 rows had crossing quantiles; sorted per row (rearrangement)")
    assert note.rows.tolist() == [2, 4] and "rows 2, 4" in note
    assert "Chernozhukov" in note and "crossing='drop'" in note
    page = app_text(note)
    assert page.startswith("2 rows had crossing quantiles; sorted per row (rearrangement)")
    assert "Crossing quantiles: drop those rows" in page and not any(w in page for w in PY_WORDS)
    assert all(not any(w in m for w in PY_WORDS) for m in views.loader_messages(ps))


def test_one_crossing_row_is_singular_and_sorted_rows_never_gain_quantile_loss():
    frame = crossing_frame().iloc[[0, 1, 2]]
    ps = load(frame)
    assert notice(ps, "crossing").startswith("1 row had crossing quantiles; sorted per row (rearrangement)")
    raw = frame[["q0.1", "q0.5", "q0.9"]].to_numpy()
    levels = np.array([0.1, 0.5, 0.9])
    assert np.all(quantile_loss(ps.y, levels, ps.dist.values) <= quantile_loss(ps.y, levels, raw))


def test_crossing_drop_drops_counts_and_says_how_to_keep_them():
    ps = load(crossing_frame(), crossing="drop")
    assert ps.row_number.tolist() == [1, 3, 5, 6] and ps.dropped.reasons[CROSSING_REASON].tolist() == [2, 4]
    note = notice(ps, "crossing")
    assert "2 row(s) had crossing quantiles" in note and "crossing='rearrange'" in note
    assert "sort per row (rearrangement)" in app_text(note) and "crossing=" not in app_text(note)


def test_no_crossing_no_notice():
    frame = crossing_frame().iloc[[0, 2, 4]]
    assert notice(load(frame), "crossing") is None and notice(load(frame, crossing="drop"), "crossing") is None


def test_every_row_crossing_is_kept_sorted_with_a_word_on_the_levels():
    frame = pd.DataFrame({"y": [0.0, 1, 2], "q0.1": [1.0, 2.0, 3.0], "q0.9": [0.0, 1.0, 2.0]})
    ps = load(frame)
    assert ps.n_rows == 3 and "Every row crossed: check that each column's level is right" in notice(ps, "crossing")


@pytest.mark.parametrize("crossing", ["rearrange", "drop"])
def test_nonfinite_quantiles_are_dropped_as_before_and_not_called_crossing(crossing):
    frame = crossing_frame()
    frame.loc[0, "q0.5"] = np.nan
    frame.loc[2, "q0.9"] = -np.inf
    ps = load(frame, crossing=crossing)
    assert ps.dropped.reasons["quantile columns: missing value"].tolist() == [1]
    assert ps.dropped.reasons["quantile columns: infinite value"].tolist() == [3]
    expected_crossing = [2, 4]
    if crossing == "drop":
        assert ps.dropped.reasons[CROSSING_REASON].tolist() == expected_crossing
    else:
        assert CROSSING_REASON not in ps.dropped.reasons and notice(ps, "crossing").rows.tolist() == expected_crossing


def test_unknown_options_are_refused_in_both_wordings():
    with pytest.raises(cc.InputError, match="unknown crossing option 'sort'") as err:
        load(crossing_frame(), crossing="sort")
    assert "crossing='rearrange'" in str(err.value) and "crossing=" not in err.value.app_message()
    with pytest.raises(cc.InputError, match="unknown layout 'normal'") as err:
        load(crossing_frame(), layout="normal")
    assert "layout=" not in err.value.app_message()


def test_notice_survives_pickling():
    note = notice(load(crossing_frame()), "crossing")
    back = pickle.loads(pickle.dumps(note))
    assert back == note and app_text(back) == app_text(note) and back.kind == "crossing"
    np.testing.assert_array_equal(back.rows, note.rows)


# ------------------------------------------------------------------------------------------------------------------
# the layout choice
# ------------------------------------------------------------------------------------------------------------------
def both_layouts(n: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    mean = rng.normal(size=n)
    return pd.DataFrame({"y": mean + rng.normal(size=n), "mean": mean, "std": np.full(n, 1.0),
                         "q0.1": mean - 1.28, "q0.5": mean, "q0.9": mean + 1.28})


def test_layout_tie_reads_the_quantiles_and_says_how_to_choose_the_gaussian():
    ps = load(both_layouts())
    assert ps.layout == "quantile" and ps.n_rows == 8
    note = notice(ps, "layout")
    assert note.startswith("using the quantile layout (3 quantile columns q0.1 … q0.9): it keeps 8 of 8 rows, and so "
                           "would the Gaussian columns 'mean'/'std'; on a tie, in the order sample > quantile > "
                           "gaussian.")
    assert note.endswith("To use another, pass layout='gaussian'.")
    assert app_text(note).endswith("To use another, choose it under Layout (Upload a prediction file).")


def test_layout_that_keeps_more_rows_wins():
    frame = both_layouts()
    frame.loc[[1, 5], "q0.5"] = np.nan  # the quantiles lose two rows, the Gaussian columns none
    ps = load(frame)
    assert ps.layout == "gaussian" and ps.n_rows == 8
    note = notice(ps, "layout")
    assert "because it keeps the most rows: 8 of 8 rows; the 3 quantile columns q0.1 … q0.9 would keep 6" in note
    frame = both_layouts()
    frame.loc[[0, 3, 4], "std"] = 0.0  # now the Gaussian columns lose three rows
    assert load(frame).layout == "quantile"
    # crossing="drop" makes crossing rows count against the quantile layout
    frame = both_layouts()
    frame.loc[2, ["q0.1", "q0.9"]] = frame.loc[2, ["q0.9", "q0.1"]].to_numpy()
    assert load(frame).layout == "quantile" and load(frame, crossing="drop").layout == "gaussian"


@pytest.mark.parametrize("layout, expected", [("gaussian", "gaussian"), ("quantiles", "quantile"),
                                              ("quantile", "quantile"), ("point", "point"), ("auto", "quantile")])
def test_layout_keyword_chooses(layout, expected):
    ps = load(both_layouts(), layout=layout)
    assert ps.layout == expected and ps.n_rows == 8
    if layout not in ("auto", "quantile", "quantiles"):
        assert "as asked" in notice(ps, "layout")


def test_a_requested_layout_the_file_lacks_is_refused_naming_what_it_has():
    with pytest.raises(cc.InputError, match="the sample layout was asked for, but the file has no sample") as err:
        load(both_layouts(), layout="sample")
    assert "quantile (3 quantile columns" in str(err.value) and "Gaussian columns 'mean'/'std'" in str(err.value)
    assert "layout=" not in err.value.app_message()


def test_one_layout_files_get_no_layout_notice():
    frame = both_layouts()
    assert notice(load(frame[["y", "mean", "std"]]), "layout") is None
    assert notice(load(frame[["y", "q0.1", "q0.5", "q0.9"]]), "layout") is None
    assert load(frame[["y", "q0.1", "q0.5", "q0.9"]], layout="quantile").layout == "quantile"


def test_an_explicit_mapping_still_decides_the_layout():
    ps = load(both_layouts(), columns={"std": "std"})
    assert ps.layout == "gaussian" and notice(ps, "layout") is None
    with pytest.raises(cc.InputError, match="no quantile layout"):
        load(both_layouts(), columns={"std": "std"}, layout="quantile")


# ------------------------------------------------------------------------------------------------------------------
# a scikit-learn export
# ------------------------------------------------------------------------------------------------------------------
def test_sklearn_quantile_gbm_export_loses_no_row():
    """One GradientBoostingRegressor(loss="quantile") per level (scikit-learn's recipe) crosses in some test rows:
    they were dropped; now every row is kept, sorted, and drop still drops exactly the crossing ones."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = load_diabetes(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:300], order[300:]
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    q = np.column_stack([GradientBoostingRegressor(loss="quantile", alpha=a, n_estimators=40, random_state=0)
                         .fit(X[train], y[train]).predict(X[test]) for a in levels])
    frame = pd.DataFrame({"y": y[test], **{f"q{a:g}": q[:, j] for j, a in enumerate(levels)}})
    crossing = np.flatnonzero((np.diff(q, axis=1) < 0).any(axis=1)) + 1
    assert crossing.size > 0
    ps = load(frame)
    assert ps.n_rows == len(test) and notice(ps, "crossing").rows.tolist() == crossing.tolist()
    dropped = load(frame, crossing="drop")
    assert dropped.dropped.reasons[CROSSING_REASON].tolist() == crossing.tolist()


def test_the_mapping_form_starts_from_the_layout_the_loader_reads():
    """``guess_columns`` (the Data page's mapping form) follows the same choice as the loader."""
    from calib_core.data.bytes import read_table
    from calib_core.data.detect import guess_columns

    frame = both_layouts()
    assert "quantiles" in guess_columns(frame) and load(frame).layout == "quantile"
    frame.loc[[1, 5], "q0.5"] = np.nan
    guess = guess_columns(read_table(frame.to_csv(index=False).encode(), source="q.csv"))
    assert guess.get("std") == "std" and "quantiles" not in guess and load(frame).layout == "gaussian"
