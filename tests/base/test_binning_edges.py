"""Equal-width bin edges are k/B exactly (Guo et al. 2017's bins ((k−1)/B, k/B]), not ``np.linspace``'s k·(1/B).

``np.linspace(0, 1, B + 1)`` is one ulp below k/B for some k when B is 6, 7, 9, 12, 14 …; a confidence of exactly
k/B then landed one bin up.  Every binned classification number (ECE, MCE, class-wise ECE, the reliability tables,
the summaries of large files) now takes its edges from ``binning.uniform_edges``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from calib_core.base.binning import bins_from_edges, equal_width_bins, uniform_bin_index, uniform_edges
from calib_core.metrics import classification as cm
from calib_core.metrics.classification_bins import confidence_bins


@pytest.mark.parametrize("n_bins", range(2, 51))
def test_confidence_of_exactly_k_over_b_lands_in_bin_k(n_bins):
    k = np.arange(0, n_bins + 1)
    v = k / n_bins  # the double nearest k/B, as a file holding "5/6" as 0.8333333333333334 has it
    edges = uniform_edges(0.0, 1.0, n_bins)
    assert [Fraction(e) for e in edges] == [Fraction(float(x)) for x in v]  # each edge is that double
    # Guo et al.: bin m (1-based) is ((m−1)/B, m/B], the first bin closed at 0; so k/B is in bin k (0-based k − 1)
    right, _ = confidence_bins(v, n_bins)
    assert right.tolist() == np.maximum(k - 1, 0).tolist()
    # netcal's [a, b) convention, the last bin closed: k/B is in bin k + 1 (0-based k)
    left, _ = confidence_bins(v, n_bins, closed="left")
    assert left.tolist() == np.minimum(k, n_bins - 1).tolist()
    # the O(1) index and the binary search agree on the edges and one ulp either side
    near = np.concatenate([v, np.nextafter(v, 2.0), np.nextafter(v, -1.0)])
    for closed in ("right", "left"):
        assert uniform_bin_index(near, n_bins, closed=closed).tolist() == bins_from_edges(near, edges, closed).tolist()


def test_linspace_was_one_ulp_below_k_over_b():
    moved = {b: [k for k in range(b + 1) if np.linspace(0.0, 1.0, b + 1)[k] < k / b] for b in (6, 7, 9, 12, 14)}
    assert moved == {6: [5], 7: [5], 9: [7], 12: [5, 7, 10], 14: [5, 9, 10, 13]}
    assert all(float(uniform_edges(0.0, 1.0, b)[k]) == k / b for b, ks in moved.items() for k in ks)


def test_ece_at_the_edges_equals_guo_definition_in_fractions():
    # confidences exactly 5/6 with 6 bins: all in bin ((4/6, 5/6]; ECE = |acc − 5/6| of that one bin
    p1 = np.full(12, 5 / 6)
    y = np.array([1] * 9 + [0] * 3)
    probs = np.column_stack([1 - p1, p1])
    table = cm.ClassificationRows(y, probs, n_bins=6).statistics()
    assert table["ece"] == pytest.approx(abs(9 / 12 - 5 / 6), abs=1e-15)
    from calib_core.diagrams.classification import reliability_table

    rel = reliability_table(y, probs, n_bins=6)
    assert rel["count"].tolist() == [0, 0, 0, 0, 12, 0]


def test_equal_width_bins_end_edges_are_the_range():
    v = np.array([-3.0, 0.1, 7.0])
    idx, edges = equal_width_bins(v, 7)
    assert edges[0] == -3.0 and edges[-1] == 7.0 and idx.tolist() == [0, 2, 6]
    # a general range: every edge within one rounding of lo + (hi − lo)·k/B
    e = uniform_edges(-2.5, 11.0, 9)
    exact = [Fraction(-2.5) + Fraction(13.5) * Fraction(k, 9) for k in range(10)]
    assert all(abs(Fraction(float(a)) - b) <= Fraction(abs(float(b))) * Fraction(2, 2**53) + Fraction(1, 2**1074)
               for a, b in zip(e, exact))
