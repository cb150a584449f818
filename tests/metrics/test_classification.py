"""Classification metrics: plain-NumPy references, netcal / scikit-learn cross-checks,
bootstrap-weight exactness, perfect-calibration behaviour and the real CIFAR sets."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

from calib_core.diagrams import classification as cd
from calib_core.metrics import classification as cm
from tests.peers import require_peer

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "real"


def _random_set(seed: int, n: int = 2000, k: int = 5, scale: float = 2.0, dtype=float):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * scale
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    # labels from a *sharper* distribution: the predictions are under-confident but informative
    y = cm.simulate_labels(cm.softmax(1.5 * z), rng)
    return y, p.astype(dtype), z


# --------------------------------------------------------------------------------------------------
# plain NumPy references (loops over bins, never shared code with the implementation)
# --------------------------------------------------------------------------------------------------
def ref_binned(values, hits, n_bins, strategy="uniform", closed="right"):
    values = np.asarray(values, float)
    if strategy == "uniform":
        edges = np.linspace(0, 1, n_bins + 1)
    else:
        edges = np.quantile(values, np.linspace(0, 1, n_bins + 1))
    side = "left" if closed == "right" else "right"
    b = np.clip(np.searchsorted(edges[1:-1], values, side=side), 0, n_bins - 1)
    ece_v, mce_v = 0.0, 0.0
    for m in range(n_bins):
        sel = b == m
        if sel.any():
            gap = abs(hits[sel].mean() - values[sel].mean())
            ece_v += sel.sum() / len(values) * gap
            mce_v = max(mce_v, gap)
    return ece_v, mce_v


def ref_ece(y, p, n_bins=15, strategy="uniform", closed="right"):
    conf = p.max(1)
    hits = (p.argmax(1) == y).astype(float)
    return ref_binned(conf, hits, n_bins, strategy, closed)


# --------------------------------------------------------------------------------------------------
# ECE / MCE
# --------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 400),
    k=st.integers(2, 6),
    n_bins=st.integers(1, 20),
    strategy=st.sampled_from(["uniform", "quantile"]),
    closed=st.sampled_from(["right", "left"]),
)
def test_ece_mce_equal_numpy_reference(seed, n, k, n_bins, strategy, closed):
    y, p, _ = _random_set(seed, n, k)
    e_ref, m_ref = ref_ece(y, p, n_bins, strategy, closed)
    assert cm.ece(y, p, n_bins=n_bins, strategy=strategy, closed=closed) == pytest.approx(e_ref, abs=1e-12)
    assert cm.mce(y, p, n_bins=n_bins, strategy=strategy, closed=closed) == pytest.approx(m_ref, abs=1e-12)


def test_bin_edge_convention_guo_vs_netcal():
    # confidences exactly on the edges m/M: Guo's (a, b] puts 2/3 in the bin ending at 2/3, netcal's [a, b) after it
    p = np.array([[2 / 3, 1 / 3], [2 / 3, 1 / 3], [0.9, 0.1]])
    y = np.array([0, 1, 0])
    right = cd.reliability_table(y, p, n_bins=3)
    left = cd.reliability_table(y, p, n_bins=3, closed="left")
    assert right["count"].tolist() == [0, 2, 1]
    assert left["count"].tolist() == [0, 0, 3]
    assert cm.ece(y, p, n_bins=3) == pytest.approx((2 / 3) * abs(0.5 - 2 / 3) + (1 / 3) * 0.1)


def test_ece_equals_netcal_both_layouts():
    netcal_metrics = require_peer("netcal.metrics")
    y, p, _ = _random_set(3, 4000, 7)
    rng = np.random.default_rng(5)
    pb = rng.beta(2, 2, size=4000)
    yb = (rng.random(4000) < pb**1.3).astype(int)
    grid = np.round(rng.random(4000) * 10) / 10  # on netcal's edges: the closed side matters
    yg = (rng.random(4000) < grid).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bins in (10, 15):
            assert cm.ece(y, p, n_bins=bins, closed="left") == pytest.approx(
                netcal_metrics.ECE(bins=bins).measure(p, y), abs=1e-12
            )
            assert cm.mce(y, p, n_bins=bins, closed="left") == pytest.approx(
                netcal_metrics.MCE(bins=bins).measure(p, y), abs=1e-12
            )
            # netcal switches 1-D binary input to positive-class reliability
            ours = cm.ece(yb, pb, n_bins=bins, closed="left", target="positive")
            assert ours == pytest.approx(netcal_metrics.ECE(bins=bins).measure(pb, yb), abs=1e-12)
            # netcal's edges are np.linspace(0, 1, bins + 1): for 10 bins the edges 0.3, 0.6, 0.7 are one ulp above
            # k/10, so netcal puts a probability of exactly 0.3 in [0.2, 0.3) where [0.3, 0.4) holds it; our edges
            # are k/B exactly (binning.uniform_edges).  Off those three values the two agree to rounding.
            off = ~np.isin(grid, [0.3, 0.6, 0.7]) if bins == 10 else np.ones(grid.size, dtype=bool)
            ours = cm.ece(yg[off], grid[off], n_bins=bins, closed="left", target="positive")
            assert ours == pytest.approx(netcal_metrics.ECE(bins=bins).measure(grid[off], yg[off]), abs=1e-12)
            if bins == 10:
                assert cm.ece(yg, grid, n_bins=bins, closed="left", target="positive") != pytest.approx(
                    netcal_metrics.ECE(bins=bins).measure(grid, yg), abs=1e-6)
        # and Guo's convention differs from netcal's on a grid of k/20 (the switch is real: (0.2, 0.3] holds 0.25 and
        # 0.3, [0.2, 0.3) holds 0.2 and 0.25).  On the k/10 grid every bin holds one grid value under either
        # convention once the edges are k/10 exactly, so the two agree there.
        half = np.round(rng.random(4000) * 20) / 20
        yh = (rng.random(4000) < half).astype(int)
        assert cm.ece(yh, half, n_bins=10, target="positive") != pytest.approx(
            cm.ece(yh, half, n_bins=10, closed="left", target="positive")
        )
        assert cm.ece(yg, grid, n_bins=10, target="positive") == pytest.approx(
            cm.ece(yg, grid, n_bins=10, closed="left", target="positive"), abs=1e-12
        )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_positive_reliability_equals_sklearn_calibration_curve(strategy):
    rng = np.random.default_rng(11)
    pb = rng.beta(0.7, 0.7, size=3000)
    yb = (rng.random(3000) < pb).astype(int)
    prob_true, prob_pred = calibration_curve(yb, pb, n_bins=8, strategy=strategy)
    t = cd.reliability_table(yb, pb, n_bins=8, strategy=strategy, target="positive")
    t = t[t["count"] > 0]
    np.testing.assert_allclose(t["accuracy"], prob_true, atol=1e-12)
    np.testing.assert_allclose(t["confidence"], prob_pred, atol=1e-12)
    assert "positive class" in t.attrs["semantics"]


def test_reliability_table_is_consistent_with_ece_and_mce():
    y, p, _ = _random_set(7, 3000, 10)
    for strategy in ("uniform", "quantile"):
        t = cd.reliability_table(y, p, n_bins=15, strategy=strategy)
        assert list(t.columns) == cd.RELIABILITY_COLUMNS
        assert len(t) == 15 and t["count"].sum() == 3000
        assert t["fraction"].sum() == pytest.approx(1.0)
        filled = t[t["count"] > 0]
        assert (filled["fraction"] * filled["gap"].abs()).sum() == pytest.approx(
            cm.ece(y, p, n_bins=15, strategy=strategy)
        )
        assert filled["gap"].abs().max() == pytest.approx(cm.mce(y, p, n_bins=15, strategy=strategy))
        assert np.all(filled["confidence"] >= filled["lower"] - 1e-12)
        assert np.all(filled["confidence"] <= filled["upper"] + 1e-12)
    assert "top-label" in t.attrs["semantics"]
    empty = cd.reliability_table(np.array([0, 1]), np.array([[0.99, 0.01], [0.98, 0.02]]), n_bins=15)
    assert empty["count"].tolist()[:-1] == [0] * 14 and np.isnan(empty["accuracy"].iloc[0])


def test_classwise_ece_and_per_class_reliability():
    y, p, _ = _random_set(8, 2500, 4)
    for strategy in ("uniform", "quantile"):
        ref = np.mean([ref_binned(p[:, k], (y == k).astype(float), 10, strategy)[0] for k in range(4)])
        assert cm.classwise_ece(y, p, n_bins=10, strategy=strategy) == pytest.approx(ref, abs=1e-12)
        t = cd.per_class_reliability(y, p, n_bins=10, strategy=strategy)
        assert list(t.columns) == ["class", *cd.RELIABILITY_COLUMNS] and len(t) == 40
        per = t.dropna().groupby("class").apply(lambda g: (g["fraction"] * g["gap"].abs()).sum(), include_groups=False)
        assert per.mean() == pytest.approx(ref, abs=1e-12)


# --------------------------------------------------------------------------------------------------
# NLL / Brier / accuracy against scikit-learn
# --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [2, 3, 10])
def test_brier_and_log_loss_equal_sklearn(k):
    y, p, z = _random_set(k, 1500, k)
    labels = np.arange(k)
    assert cm.brier(y, p) == pytest.approx(brier_score_loss(y, p, labels=labels, scale_by_half=False), rel=1e-12)
    assert cm.nll(y, p) == pytest.approx(log_loss(y, p, labels=labels), rel=1e-12)
    assert cm.nll(y, logits=z) == pytest.approx(log_loss(y, cm.softmax(z), labels=labels), rel=1e-10)
    assert cm.accuracy(y, p) == pytest.approx(np.mean(p.argmax(1) == y))


def test_binary_brier_conventions_and_float32_nll():
    rng = np.random.default_rng(2)
    pb = rng.random(1000)
    yb = (rng.random(1000) < pb).astype(int)
    # the project's Brier score sums over both classes; scikit-learn halves binary scores by default
    assert cm.brier(yb, pb) == pytest.approx(brier_score_loss(yb, pb, scale_by_half=False), rel=1e-12)
    assert cm.brier(yb, pb, scale_by_half=True) == pytest.approx(brier_score_loss(yb, pb), rel=1e-12)
    assert cm.brier(yb, pb) == pytest.approx(2 * np.mean((pb - yb) ** 2), rel=1e-12)
    # float32 probabilities with tiny entries: scikit-learn clips at float32 eps, we (by default) at float64 eps
    y, p, _ = _random_set(4, 2000, 5, scale=6.0, dtype=np.float32)
    y[:50] = p[:50].argmin(1)  # a few confidently wrong rows
    assert (p[np.arange(2000), y] < np.finfo(np.float32).eps).any()
    sk = log_loss(y, p, labels=np.arange(5))
    assert cm.nll(y, p, eps=float(np.finfo(np.float32).eps)) == pytest.approx(sk, rel=1e-6)
    exact = -np.mean(np.log(p[np.arange(2000), y].astype(float)))
    assert cm.nll(y, p) == pytest.approx(exact, rel=1e-12)
    assert cm.nll(y, p) > sk


def test_nll_from_huge_logits_uses_log_sum_exp():
    z = np.array([[1000.0, 0.0, -1000.0], [0.0, 1000.0, 999.0], [5.0, 5.0, 5.0]])
    y = np.array([1, 2, 0])
    expected = np.mean([1000.0, 1000.0 - (999.0 - np.log1p(np.exp(-1.0)) - 0.0) + 0.0, np.log(3.0)])
    # row 2: logsumexp(0, 1000, 999) − 999 = 1000 + log(1 + e^-1) − 999
    expected = np.mean([1000.0, 1.0 + np.log1p(np.exp(-1.0)), np.log(3.0)])
    assert cm.nll(y, logits=z) == pytest.approx(expected, rel=1e-12)
    assert np.isfinite(cm.nll(y, logits=z))


def test_input_validation():
    p = np.array([[0.2, 0.8], [0.6, 0.4]])
    with pytest.raises(ValueError, match="0..1"):
        cm.ece(np.array([0, 2]), p)
    with pytest.raises(ValueError, match="length"):
        cm.ece(np.array([0]), p)
    with pytest.raises(ValueError, match="strategy"):
        cm.ece(np.array([0, 1]), p, strategy="kmeans")
    with pytest.raises(ValueError, match="binary"):
        cm.ece(np.array([0, 1]), np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]), target="positive")


# --------------------------------------------------------------------------------------------------
# prepared rows: bootstrap weights, simulation, top-label-only
# --------------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), strategy=st.sampled_from(["uniform", "quantile"]), k=st.integers(2, 5))
def test_weighted_statistics_equal_materialised_resample(seed, strategy, k):
    y, p, z = _random_set(seed, 300, k)
    rows = cm.ClassificationRows(y, p, n_bins=7, strategy=strategy)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, 300, 300)
    w = np.bincount(idx, minlength=300).astype(float)
    got = rows.statistics(w)
    want = cm.ClassificationRows(y[idx], p[idx], n_bins=7, strategy=strategy).statistics()
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == pytest.approx(want[key], abs=1e-12), key


def test_quantile_edges_of_resample_match_numpy():
    rng = np.random.default_rng(0)
    v = np.round(rng.random(500), 2)  # ties
    w = rng.multinomial(500, np.full(500, 1 / 500)).astype(float)
    order = np.argsort(v, kind="stable")
    _, edges = cm.confidence_bins(v, 9, "quantile", weights=w, order=order)
    np.testing.assert_array_equal(edges, np.quantile(np.repeat(v, w.astype(int)), np.linspace(0, 1, 10)))


def test_simulated_labels_follow_the_predictions():
    y, p, _ = _random_set(1, 20000, 4)
    sim = cm.simulate_labels(p, np.random.default_rng(0))
    freq = np.bincount(sim, minlength=4) / 20000
    np.testing.assert_allclose(freq, p.mean(0), atol=0.01)
    # perfectly calibrated labels: the ECE is at the noise level; the real labels are clearly miscalibrated
    rows = cm.ClassificationRows(y, p)
    sims = [rows.simulate(np.random.default_rng(s))["ece"] for s in range(5)]
    assert max(sims) < 0.02 < rows.statistics()["ece"]


def test_top_label_only_rows_match_full_rows():
    y, p, _ = _random_set(9, 3000, 6)
    full = cm.ClassificationRows(y, p, n_bins=12, strategy="quantile")
    top = cm.ClassificationRows.from_top_label(p.max(1), p.argmax(1) == y, n_bins=12, strategy="quantile")
    s_full, s_top = full.statistics(), top.statistics()
    assert set(s_top) == {"ece", "mce", "accuracy", "mean_confidence"}
    for key in s_top:
        assert s_top[key] == pytest.approx(s_full[key], abs=1e-12)
    pd.testing.assert_frame_equal(cd.reliability_of(top), cd.reliability_of(full))
    with pytest.raises(ValueError, match="top-label only"):
        top.classwise_ece()


# --------------------------------------------------------------------------------------------------
# real data: the published sanity numbers (PROVENANCE.md) are reproduced
# --------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not (REAL / "netcal_cifar_probs").is_dir(), reason="real data folder missing")
def test_real_cifar_sanity_numbers():
    expected = {  # from PROVENANCE.md: ece15, mce15, accuracy, brier (float64 NLL)
        "netcal_cifar_probs/densenet-bc-100-cifar-100.npz": (0.14215, 0.31316, 0.7541, 0.3845, 1.22563),
        "plambda_vgg16_cifar10_probs/vgg16_cifar10_test.npz": (0.03978, 0.28569, 0.9359, 0.10545, 0.25706),
        "torchuq_resnet18_cifar10_probs/resnet18_cifar10_test.npz": (0.02648, 0.76998, 0.9524, 0.07656, 0.17819),
    }
    for name, (e, m, acc, br, nl) in expected.items():
        with np.load(REAL / name, allow_pickle=False) as d:
            p, y = d["probs"], d["labels"]
        s = cm.ClassificationRows(y, p).statistics()
        assert s["ece"] == pytest.approx(e, abs=5e-6)
        assert s["mce"] == pytest.approx(m, abs=5e-6)
        assert s["accuracy"] == pytest.approx(acc, abs=1e-9)
        assert s["brier"] == pytest.approx(br, abs=5e-5)
        assert s["nll"] == pytest.approx(nl, abs=5e-5)


@settings(max_examples=30, deadline=None)
@given(n_bins=st.integers(1, 60), closed=st.sampled_from(["right", "left"]), seed=st.integers(0, 1000))
def test_uniform_bin_index_equals_binary_search(n_bins, closed, seed):
    from calib_core.base.binning import bins_from_edges, uniform_bin_index, uniform_edges

    edges = uniform_edges(0.0, 1.0, n_bins)  # k/B exactly (np.linspace is an ulp off k/B for some B)
    rng = np.random.default_rng(seed)
    v = np.concatenate([rng.random(200), edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0), [-0.1, 1.1]])
    np.testing.assert_array_equal(uniform_bin_index(v, n_bins, closed=closed), bins_from_edges(v, edges, closed))
