"""Slice statistics from mergeable summaries: on the same bins, the ranking read off merged
chunk summaries is the in-memory explorer's ranking — same slices, same order, same counts and flags, statistics
to ~1e-12 — whatever the chunk boundaries (hypothesis); the first pass's sketch gives the in-memory edges when it
takes every row and edges within the stated rank error when it samples."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calib_core.base.predictions import InputError
from calib_core.data.classification import parse_classification_frame
from calib_core.data.regression import parse_regression_frame
from calib_core.scale import slices as ss
from calib_core.scale import slices_ranking as sr
from calib_core.scale import slices_sketch as sk
from calib_core.scale import slices_spec as sp
from calib_core.slices import classification as cls_slices
from calib_core.slices import regression as reg_slices

STATS = {"regression": ["PIT χ²", "coverage 90%", "mean z", "std z", "ENCE", "p PIT", "p coverage", "p mean z",
                        "p std z", "p ENCE", "evidence", "p", "adjusted p"],
         "classification": ["ECE", "calibration ratio", "p ECE", "p ratio", "evidence", "p", "adjusted p"]}


def regression_frame(n: int, seed: int) -> pd.DataFrame:
    """Gaussian predictions, miscalibrated in site s3 (errors 1.5 σ); features: numeric (one with missing values),
    a few-valued integer code (categorical by the 12-value rule), text with missing values, and a group column."""
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = np.exp(0.3 * rng.normal(size=n))
    site = rng.choice([f"s{i}" for i in range(6)], n)
    err = rng.normal(size=n) * np.where(site == "s3", 1.5, 1.0)
    x2 = rng.normal(size=n)
    x2[rng.random(n) < 0.05] = np.nan
    region = rng.choice(["north", "south", " east ", None], n, p=[0.4, 0.3, 0.2, 0.1])
    return pd.DataFrame({"y": mean + std * err, "mean": mean, "std": std, "group": rng.choice(["a", "b"], n),
                         "x1": rng.gamma(2.0, size=n), "x2": x2, "code": rng.integers(0, 4, n), "site": site,
                         "region": region})


def classification_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    site = rng.choice([f"s{i}" for i in range(5)], n)
    truth = np.where(site == "s1", p ** 2, p)  # over-confident in s1
    return pd.DataFrame({"label": (rng.random(n) < truth).astype(int), "p_0": 1 - p, "p_1": p,
                         "x1": rng.normal(size=n), "site": site, "code": rng.integers(0, 3, n)})


@pytest.fixture(scope="module")
def regression_set():
    return parse_regression_frame(regression_frame(6_000, 1), "reg.csv")


@pytest.fixture(scope="module")
def classification_set():
    return parse_classification_frame(classification_frame(6_000, 2), "cls.csv", None, False)


def assert_same_ranking(mem: pd.DataFrame, summ: pd.DataFrame, task: str) -> None:
    assert len(mem) == len(summ) > 10
    assert mem["slice"].tolist() == summ["slice"].tolist()  # same slices in the same (ranked) order
    assert mem["n"].tolist() == summ["n"].tolist()
    assert mem["flagged"].tolist() == summ["flagged"].tolist()
    assert mem["worst"].tolist() == summ["worst"].tolist()
    for c in STATS[task]:
        np.testing.assert_allclose(summ[c].to_numpy(float), mem[c].to_numpy(float), rtol=1e-9, atol=1e-12,
                                   err_msg=c)


def summary_of_chunks(pset, spec, cuts):
    bounds = [0, *sorted(set(cuts)), pset.n_rows]
    parts = [ss.summarize_slices(pset.take(np.arange(a, b)), spec) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    rng = np.random.default_rng(len(parts))
    rng.shuffle(parts)  # merge order does not matter either
    return ss.merge_all(parts)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(1, 5_999), max_size=6))
def test_regression_ranking_from_merged_chunks_equals_in_memory(regression_set, cuts):
    pset = regression_set
    mem, _ = reg_slices.slice_ranking(pset)
    spec = ss.slice_spec(pset)
    summ = summary_of_chunks(pset, spec, cuts)
    assert summ.n_rows == pset.n_rows
    assert_same_ranking(mem, sr.summary_ranking(summ), "regression")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(1, 5_999), max_size=5))
def test_classification_ranking_from_merged_chunks_equals_in_memory(classification_set, cuts):
    pset = classification_set
    mem, _ = cls_slices.slice_ranking(pset)
    summ = summary_of_chunks(pset, ss.slice_spec(pset), cuts)
    assert_same_ranking(mem, sr.summary_ranking(summ), "classification")


def test_options_columns_min_size_and_no_pairs(regression_set):
    pset = regression_set
    summ = summary_of_chunks(pset, ss.slice_spec(pset), [2_000, 4_100])
    for kw in ({"min_size": 400}, {"pairs": False}, {"columns": ["site", "x1", "group"]}, {"min_size": 1}):
        mem, _ = reg_slices.slice_ranking(pset, **kw)
        assert_same_ranking(mem, sr.summary_ranking(summ, **kw), "regression")
    first = sr.summary_ranking(summ).iloc[0]
    assert first["slice"].startswith("site = s3") or "site = s3" in first["slice"]
    with pytest.raises(InputError, match="no slice column 'nope'"):
        sr.summary_ranking(summ, columns=["nope"])


def test_a_chunk_with_a_level_the_spec_does_not_know_is_refused(regression_set):
    spec = ss.slice_spec(regression_set.take(np.arange(100)))  # too few rows to see every level
    frame = regression_frame(6_000, 1)
    frame.loc[5, "site"] = "s99"
    with pytest.raises(InputError, match="'site' has the value 's99'"):
        ss.summarize_slices(parse_regression_frame(frame, "reg.csv"), spec)


def test_sketch_of_every_row_gives_the_in_memory_spec(regression_set):
    pset = regression_set
    ids = np.arange(1, pset.n_rows + 1)
    parts = [sk.sketch_slices(pset.take(np.arange(a, b)), rate=1.0, row_ids=ids[a:b])
             for a, b in ((0, 1_000), (1_000, 4_321), (4_321, pset.n_rows))]
    sketch = parts[2].merge(parts[0]).merge(parts[1])
    spec = sk.spec_from_sketch(sketch)
    mem = ss.slice_spec(pset)
    assert spec.rank_error == 0.0
    assert (spec.columns, spec.kinds, spec.levels, spec.none) == (mem.columns, mem.kinds, mem.levels, mem.none)
    assert spec.edges == mem.edges and spec.sigma_edges == mem.sigma_edges


def test_sampled_edges_are_within_the_stated_rank_error():
    """A hashed sample of m ≈ 2,000 of 60,000 rows: each numeric edge's rank fraction among all rows is within
    ε = √(ln(2/δ)/(2m)) of its target k/5 (DKW, δ = 0.01) — checked on 20 seeded data sets, all edges."""
    worst = 0.0
    for seed in range(20):
        frame = regression_frame(60_000, 100 + seed)
        pset = parse_regression_frame(frame, "big.csv")
        ids = np.arange(1, pset.n_rows + 1)
        sketch = sk.sketch_slices(pset, rate=2_000 / pset.n_rows, row_ids=ids, seed=seed)
        spec = sk.spec_from_sketch(sketch)
        m = int(np.isfinite(sketch.sample["x2"]).sum())  # x2 has missing values: the smallest sample of an edge
        assert m < sketch.sample["x1"].size
        assert spec.rank_error == pytest.approx(math.sqrt(math.log(200) / (2 * m)))
        for name in ("x1", "x2"):
            x = frame[name].to_numpy(float)
            x = np.sort(x[np.isfinite(x)])
            e = np.asarray(spec.edges[spec.columns.index(name)])
            for k, edge in enumerate(e[1:-1], start=1):
                rank = np.searchsorted(x, edge, side="right") / x.size
                worst = max(worst, abs(rank - k / 5) / spec.rank_error)
    assert worst <= 1.0, worst  # every edge within ε (each data set's chance of any miss is ≤ 1%)
    assert worst > 0.05  # sampled, not exact


def test_merge_is_commutative_and_chunking_free_to_rounding(regression_set):
    pset = regression_set
    spec = ss.slice_spec(pset)
    a = summary_of_chunks(pset, spec, [3_000])
    b = summary_of_chunks(pset, spec, [17, 999, 5_500])
    for i in range(len(spec.columns)):
        np.testing.assert_array_equal(a.single(i)[..., ::6][..., :1], b.single(i)[..., ::6][..., :1])  # counts
        np.testing.assert_allclose(a.single(i), b.single(i), rtol=1e-12, atol=1e-9)
    for k in a.pairs:
        np.testing.assert_allclose(a.pair(*k), b.pair(*k), rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(a.pair(k[1], k[0]), np.swapaxes(b.pair(*k), 0, 1), rtol=1e-12, atol=1e-9)


def test_text_columns_read_as_categoricals_give_the_same_summary():
    """The Parquet passes read text slice columns as dictionaries (pandas categoricals): codes, levels and every
    sum equal those of the same column as text — with missing values, padded text, and categories no kept row
    has (a row dropped by the reader, or a category the dictionary lists unused)."""
    frame = regression_frame(3_000, 21)
    frame.loc[7, "std"] = -1.0  # dropped by the reader: its region becomes a category no kept row has
    frame.loc[7, "region"] = "only-in-a-dropped-row"
    cat = frame.copy()
    for c in ("site", "region", "group"):
        cat[c] = pd.Categorical(cat[c], categories=sorted(set(cat[c].dropna())) + ["never-used"])
    text_set, cat_set = parse_regression_frame(frame, "t.csv"), parse_regression_frame(cat, "c.csv")
    assert isinstance(cat_set.slice_columns["region"].dtype, pd.CategoricalDtype)
    spec = ss.slice_spec(text_set)
    ids = np.arange(1, text_set.n_rows + 1)
    for rate in (1.0, 0.3):
        a = sk.spec_from_sketch(sk.sketch_slices(text_set, rate=rate, row_ids=ids))
        b = sk.spec_from_sketch(sk.sketch_slices(cat_set, rate=rate, row_ids=ids))
        assert a.levels == b.levels and a.edges == b.edges
        assert "only-in-a-dropped-row" not in b.levels[b.columns.index("region")]
    for i, name in enumerate(spec.columns):
        np.testing.assert_array_equal(ss.column_codes(sp.column_values(cat_set, name), spec, i),
                                      ss.column_codes(sp.column_values(text_set, name), spec, i), err_msg=name)
    x, y = ss.summarize_slices(text_set, spec), ss.summarize_slices(cat_set, spec)
    for i in range(len(spec.columns)):
        np.testing.assert_array_equal(x.single(i), y.single(i))
    for k in x.pairs:
        np.testing.assert_array_equal(x.pair(*k), y.pair(*k))


@pytest.mark.parametrize("columns", [["site"], ["x1"], ["site", "region"]])
def test_one_or_two_slice_columns_equal_in_memory(columns):
    """A spec of a single column (one block, no pair of blocks) or of two small ones (one block holding both)."""
    frame = regression_frame(4_000, 31)[["y", "mean", "std", *columns]]
    pset = parse_regression_frame(frame, "few.csv")
    mem, _ = reg_slices.slice_ranking(pset)
    summ = summary_of_chunks(pset, ss.slice_spec(pset), [1_234, 2_999])
    got = sr.summary_ranking(summ)
    assert len(got) >= 5
    assert got["slice"].tolist() == mem["slice"].tolist() and got["n"].tolist() == mem["n"].tolist()
    for c in STATS["regression"]:
        np.testing.assert_allclose(got[c].to_numpy(float), mem[c].to_numpy(float), rtol=1e-9, atol=1e-12, err_msg=c)


def _write_parts(frame: pd.DataFrame, folder, cuts, row_group_size=500):
    folder.mkdir(parents=True, exist_ok=True)
    bounds = [0, *cuts, len(frame)]
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        frame.iloc[a:b].to_parquet(folder / f"part-{k:02d}.parquet", index=False, row_group_size=row_group_size)


def test_parquet_path_in_process_equals_in_memory(tmp_path):
    pytest.importorskip("pyarrow")
    import calib_core.scale.distributed as cd

    frame = regression_frame(6_000, 5)
    frame.loc[[10, 4_000], "std"] = -1.0  # two invalid rows: dropped by the reader, as in memory
    _write_parts(frame, tmp_path, [1_500, 1_501, 4_200])
    out = cd.slice_summary_parquet(str(tmp_path / "*.parquet"), scheduler=cd.IN_PROCESS, rows_per_partition=700)
    whole = parse_regression_frame(frame, "all")
    assert out.n_read == 6_000 and out.summary.n_rows == whole.n_rows == 5_998
    assert out.summary.spec.rank_error == 0.0  # 6,000 rows ≤ the sample size: every row, exact edges
    mem, _ = reg_slices.slice_ranking(whole)
    assert_same_ranking(mem, sr.summary_ranking(out.summary), "regression")
    sampled = cd.slice_summary_parquet(str(tmp_path / "*.parquet"), scheduler=cd.IN_PROCESS, sample_rows=1_000)
    assert 0.03 < sampled.summary.spec.rank_error < 0.06  # √(ln 200 / (2·~1,000))
    assert sr.summary_ranking(sampled.summary).iloc[0]["slice"] == mem.iloc[0]["slice"]


def test_a_p_value_below_float_range_is_the_strongest_evidence():
    """At 10⁷ rows a planted slice's χ² log-sf underflows to −inf: that is p = 0, not a missing p-value (it used
    to be skipped, and the slice was ranked by its weakest test, below its own intersections)."""
    from calib_core.slices.candidates import rank_slices

    table = pd.DataFrame({"slice": ["a", "b", "c"], "n": [100, 200_000, 50]})
    logp = np.array([[-50.0, np.nan], [-np.inf, -3.0], [-1.0, np.nan]])
    out = rank_slices(table, np.exp(logp), logp)
    assert out["slice"].tolist() == ["b", "a", "c"]
    assert np.isinf(out.loc[0, "evidence"]) and out.loc[0, "flagged"] and out.loc[0, "adjusted p"] == 0.0


def test_slice_passes_read_partitions_as_the_reader_does(tmp_path):
    """A partition read for the slice passes (text columns as dictionaries, the frame on the Arrow buffers) is
    the partition the ordinary read gives: same kept rows, targets, distributions and slice columns (text equal
    value by value), with an invalid row dropped in both."""
    pytest.importorskip("pyarrow")
    import calib_core.scale.distributed as cd
    import calib_core.scale.distributed_partitions as cp
    import calib_core.scale.distributed_reading as crd

    frame = regression_frame(3_000, 41)
    frame.loc[17, "std"] = -1.0
    _write_parts(frame, tmp_path, [], row_group_size=1_000)
    parts, files = cp.plan_partitions(str(tmp_path / "*.parquet"), rows_per_partition=2_000)
    options, head = crd.read_head(files, task=None, columns=None, renormalize=False)
    text = cd._text_slice_columns(files, head)
    assert sorted(text) == ["region", "site"]  # text columns no role takes (group is the group role)
    for part in parts:
        plain = crd.read_partition(part, options)
        fast = crd.read_partition(part, options, dictionary=text, zero_copy=True)
        assert fast.n_rows == plain.n_rows and fast.dropped.total == plain.dropped.total
        np.testing.assert_array_equal(fast.row_number, plain.row_number)
        np.testing.assert_array_equal(fast.y, plain.y)
        np.testing.assert_array_equal(fast.dist.std(), plain.dist.std())
        assert list(fast.slice_columns.columns) == list(plain.slice_columns.columns)
        for c in text:
            assert isinstance(fast.slice_columns[c].dtype, pd.CategoricalDtype)
        for c in plain.slice_columns.columns:
            np.testing.assert_array_equal(sp._text(fast.slice_columns[c]).to_numpy(),
                                          sp._text(plain.slice_columns[c]).to_numpy(), err_msg=c)


def test_kept_rows_copies_only_when_rows_are_dropped():
    from calib_core.data.columns import kept_rows

    frame = pd.DataFrame({"a": np.arange(5.0), "b": list("vwxyz"), "c": np.ones(5)})
    every = kept_rows(frame, ["a", "b"], np.ones(5, bool))
    some = kept_rows(frame, ["a", "b"], np.array([True, False, True, True, False]))
    assert every.index.equals(pd.RangeIndex(5)) and some.index.equals(pd.RangeIndex(3))
    assert some["a"].tolist() == [0.0, 2.0, 3.0] and some["b"].tolist() == ["v", "x", "y"]
    every.loc[0, "a"] = 99.0  # a write to the result leaves the reader's frame as it was
    assert frame.loc[0, "a"] == 0.0 and list(every.columns) == ["a", "b"]
