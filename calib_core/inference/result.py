"""The one result of the inference layer, for both tasks: :class:`InferenceResult`.

:func:`~calib_core.inference.regression.infer_regression` and
:func:`~calib_core.inference.classification.infer_classification` return the same object: a per-metric ``table``
in the Report's words (:data:`RESULT_COLUMNS`: the columns :data:`calib_core.base.report.INFERENCE_COLUMNS` that
the diagnosis copies into ``Report.metrics`` unchanged, the point ``value`` and the Monte-Carlo standard error
``perfect_se`` of a simulated reference), the headline ``verdict`` in the Report's words (:data:`CALIBRATED` or
:data:`MISCALIBRATED`), its ``direction`` and ``sentence``, and the bookkeeping of the multiplicity correction
(:func:`adjust_families`: Holm over the primary family, Benjamini–Hochberg over the secondary statistics).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..base import significance as sig
from ..base.frames import typed_column
from ..base.report import (
    CALIBRATED,
    CALIBRATION_STATISTIC,
    DESCRIPTIVE,
    MISCALIBRATED,
    NOT_TESTED,
    PROPER_SCORE,
    blank_inference,
    headline_of,
    verdict_row,
)

__all__ = [
    "InferenceResult",
    "RESULT_COLUMNS",
    "adjust_families",
    "interval_test_note",
    "CALIBRATED",
    "MISCALIBRATED",
    "CALIBRATION_STATISTIC",
    "PROPER_SCORE",
    "DESCRIPTIVE",
]

#: Columns of :attr:`InferenceResult.table` (indexed by ``metric``): the point value, the Report's inference columns
#: (:data:`calib_core.base.report.INFERENCE_COLUMNS`, same names and meaning) and ``perfect_se``.
RESULT_COLUMNS = [
    "value",
    "ci_low",
    "ci_high",
    "perfect",
    "perfect_low",
    "perfect_high",
    "perfect_se",
    "kind",
    "family",
    "debiased",
    "interval",
    "p_value",
    "p_mc_se",
    "test",
    "adjusted_p",
    "flag",
    "note",
]


def adjust_families(
    primary: Mapping[str, float], secondary: Mapping[str, float], alpha: float
) -> dict[str, tuple[float, bool]]:
    """Multiplicity control of one result: Holm over the primary family, Benjamini–Hochberg over the secondary.

    The primary family's adjusted p-values p̃ (Holm's step-down: p̃₍ᵢ₎ = maxⱼ≤ᵢ min(1, (m − j + 1) p₍ⱼ₎)) control the
    family-wise error, so "some primary p̃ ≤ α" is a level-α test of perfect calibration (the headline verdict).
    The secondary statistics get Benjamini–Hochberg q-values (q₍ᵢ₎ = minⱼ≥ᵢ min(1, m p₍ⱼ₎ / j)), whose flags q ≤ α
    control the false-discovery rate.  NaN p-values stay NaN and are never flagged.

    Parameters
    ----------
    primary : mapping of str to float
        Raw p-values of the primary family, by metric.
    secondary : mapping of str to float
        Raw p-values of the secondary statistics, by metric.
    alpha : float
        Family-wise level of the primary family and false-discovery rate of the secondary flags.

    Returns
    -------
    dict of str to (float, bool)
        Per metric of either family: (adjusted p-value, flag = adjusted p-value ≤ ``alpha``).

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [2] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    """
    out: dict[str, tuple[float, bool]] = {}
    for names, adjusted in ((list(primary), sig.holm_adjust(list(primary.values()))),
                            (list(secondary), sig.bh_adjust(list(secondary.values())))):
        out.update({k: (float(a), bool(a <= alpha)) for k, a in zip(names, adjusted)})
    return out


def interval_test_note(row: Mapping[str, Any], level: float, reference: float) -> str:
    """Why a statistic's interval and its test disagree, or "" when they agree.

    They agree when the test rejects at 1 − ``level`` (p < 1 − level) exactly when the ``reference`` (the
    population value under perfect calibration: 0 for a distance, ½, 1, the reference mean z …) lies outside the
    level interval — as for an exact binomial test and its Clopper–Pearson interval, or a test and the interval
    that inverts it.  Where test and interval are built differently (a test on the law under perfect calibration,
    an interval from the data alone; a one-sided test of a distance whose interval is clipped at 0), they can
    differ, and the row says so.  Also says when the point value lies outside its own interval.

    Parameters
    ----------
    row : mapping
        A record with ``value``, ``ci_low``, ``ci_high``, ``p_value``, ``test`` and ``interval``.
    level : float
        Two-sided level of the interval.
    reference : float
        The population value under perfect calibration.

    Returns
    -------
    str
        The note ("" when interval and test agree, or either is missing).

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Efron, B. & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman & Hall, §15.4
       (intervals and tests).

    Examples
    --------
    >>> row = dict(value=0.39, ci_low=-0.1, ci_high=0.87, p_value=1e-9, test="D'Agostino", interval="bootstrap-t")
    >>> interval_test_note(row, 0.95, 0.0)[:40]
    'the test rejects at 5% while the interva'
    """
    lo, hi, v, p = (float(row.get(k, float("nan"))) for k in ("ci_low", "ci_high", "value", "p_value"))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    notes = []
    if math.isfinite(v) and not lo <= v <= hi:
        notes.append("value outside its interval: the interval is for the population value, which the plug-in "
                     "estimates with a bias")
    if math.isfinite(p) and math.isfinite(reference):
        rejects, outside = p < 1.0 - level, not lo <= reference <= hi
        a = f"{100 * (1 - level):.3g}%"
        if rejects and not outside:
            notes.append(f"the test rejects at {a} while the interval contains the reference {reference:.4g}: the "
                         f"test ({row.get('test', '')}) uses the statistic's law under perfect calibration, the "
                         f"interval ({row.get('interval', '')}) must hold whatever the law, so it is wider (e.g. "
                         "with heavy tails, or a band for every level at once)")
        elif outside and not rejects:
            notes.append(f"the interval excludes the reference {reference:.4g} while the test does not reject at "
                         f"{a}: the test ({row.get('test', '')}) and the interval ({row.get('interval', '')}) are "
                         "built differently")
    return "; ".join(notes)


@dataclass(frozen=True)
class InferenceResult:
    """Tests, intervals, references and the headline verdict of one set of rows, for either task.

    ``table`` has one row per statistic, indexed by ``metric``, with :data:`RESULT_COLUMNS`: ``value`` (the point
    estimate), ``[ci_low, ci_high]`` the interval for its population value (how: ``interval``), ``perfect`` the
    value a perfectly calibrated forecaster with the same predictions gets on average at this N (``perfect_low``,
    ``perfect_high`` its central range where known, ``perfect_se`` the Monte-Carlo error of a simulated one),
    ``kind`` ("calibration statistic", "proper score", "descriptive"), ``family`` ("primary", "secondary" or ""),
    ``debiased`` a bias-corrected estimate, ``p_value`` / ``p_mc_se`` / ``test`` the test of perfect calibration,
    ``adjusted_p`` / ``flag`` its Holm (primary) or Benjamini–Hochberg (secondary) decision at ``alpha`` and
    ``note`` what a reader should know about the row.

    Attributes
    ----------
    table : DataFrame
        The per-statistic table (above).
    verdict : str
        :data:`CALIBRATED` (no evidence of miscalibration: no primary statistic rejected by Holm at family-wise
        ``alpha``) or :data:`MISCALIBRATED`.
    direction : str
        How the forecaster is miscalibrated ("over-confident", "under-confident", "biased high", "biased low", or
        several joined by " and ", "mis-shaped"); "" when calibrated or when no direction can be named.
    sentence : str
        The verdict in words, with the evidence (statistic, its expectation, its p-value).
    n : int
        Number of rows.
    alpha : float
        Family-wise level of the headline and false-discovery rate of the secondary flags.
    n_primary, n_secondary : int
        Tests in the primary family and secondary tests.
    n_flags : int
        Secondary statistics flagged by Benjamini–Hochberg.
    expected_chance_flags : float
        Secondary statistics a perfectly calibrated forecaster flags on average without adjustment (α × their
        number).
    options : dict
        The options the inference ran with.
    notes : list of str
        How the nulls were drawn where that depends on the data (e.g. exact or summary-level draws).
    timings : dict of str to float
        Seconds spent per step, where the task measures them.
    layout : str
        Regression: the predictive layout ("gaussian", "quantile", "sample"); "" for classification.
    top_bins : tuple of (int, int) or None
        Classification: the first and last confidence bin of the top region (the top-bin gap's rows).

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
       Statistics* 6(2), 65–70.
    .. [2] Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289–300.
    .. [3] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """

    table: pd.DataFrame
    verdict: str
    direction: str
    sentence: str
    n: int
    alpha: float
    n_primary: int
    n_secondary: int
    n_flags: int
    expected_chance_flags: float
    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    layout: str = ""
    top_bins: tuple[int, int] | None = None

    @staticmethod
    def table_from(records: list[dict[str, Any]]) -> pd.DataFrame:
        """The ``table`` of a result from one record per statistic.

        Parameters
        ----------
        records : list of dict
            One dict per statistic, in table order: ``metric`` (its key) and any of :data:`RESULT_COLUMNS`; a
            column a record lacks is missing (NaN) in its row.

        Returns
        -------
        DataFrame
            Indexed by ``metric``, columns :data:`RESULT_COLUMNS` in that order.
        """
        # column by column, each with the dtype pandas would infer from the records (a missing cell is NaN); a
        # column of mixed or other types sends the table through pandas' constructor from the records
        columns = ["metric", *RESULT_COLUMNS]
        built: dict[str, Any] = {}
        for col in columns:
            cells = [r.get(col, math.nan) for r in records]
            first = cells[0] if cells else None
            kind = ("str" if type(first) is str else "bool" if isinstance(first, (bool, np.bool_))
                    else "float" if isinstance(first, float) else None)
            column = typed_column(cells, kind) if kind is not None else None
            if column is None:
                return pd.DataFrame(records, columns=columns).set_index("metric")
            built[col] = column
        index = pd.Index(built.pop("metric"), name="metric")
        return pd.DataFrame(built, index=index)

    @property
    def miscalibrated(self) -> bool:
        """Whether the headline rejects perfect calibration."""
        return self.verdict == MISCALIBRATED

    @property
    def primary(self) -> pd.DataFrame:
        """The primary family's rows of :attr:`table`."""
        return self.table[self.table["family"] == "primary"]

    def p_value(self, metric: str) -> float:
        """The raw p-value of one statistic.

        Parameters
        ----------
        metric : str
            A key of :attr:`table`'s index.

        Returns
        -------
        float
            Its ``p_value`` (NaN without a test).
        """
        return float(self.table.loc[metric, "p_value"])

    def headline(self) -> tuple[float, str]:
        """The family-wise p-value and the statistic that leads the headline.

        Returns
        -------
        (float, str)
            The smallest Holm-adjusted p-value of the primary family (the p-value of "perfectly calibrated") and
            the primary statistic with the smallest raw p-value (:func:`calib_core.base.report.headline_of`).
        """
        t = self.table
        if not (t["p_value"].dtype == np.float64 and t["adjusted_p"].dtype == np.float64):
            return headline_of(t)
        # headline_of read off the columns as arrays (its boolean row pick of a string-typed frame costs ~0.3 ms):
        # the same minimum (NaN skipped) and the same first arg-min of the finite p-values
        p = t["p_value"].to_numpy()
        keep = np.flatnonzero((t["family"].to_numpy(dtype=object) == "primary") & np.isfinite(p))
        if keep.size == 0:
            return float("nan"), ""
        adjusted = t["adjusted_p"].to_numpy()[keep]
        adjusted = adjusted[~np.isnan(adjusted)]
        return (float(adjusted.min()) if adjusted.size else float("nan"),
                str(t.index[keep[int(np.argmin(p[keep]))]]))

    def headline_row(self, model: str, group: str) -> dict[str, Any]:
        """This result as one row of ``Report.verdicts``.

        Parameters
        ----------
        model, group : str
            The (model, group) the rows belong to.

        Returns
        -------
        dict
            :func:`calib_core.base.report.verdict_row` of the verdict, direction, sentence, :meth:`headline` and
            the multiplicity bookkeeping.
        """
        p, lead = self.headline()
        return verdict_row(model, group, self.n, verdict=self.verdict, direction=self.direction, p_value=p,
                           lead=lead, sentence=self.sentence, n_tests=self.n_primary, alpha=self.alpha,
                           n_secondary=self.n_secondary, n_flags=self.n_flags,
                           expected_chance_flags=self.expected_chance_flags)

    def report_rows(self, model: str, group: str, *, intervals: bool = True,
                    tests: bool = True) -> tuple[pd.DataFrame, dict[str, Any]]:
        """What a diagnosis puts into its Report for these rows: the inference table and the verdict row.

        The diagnosis runs the inference with at least one bootstrap replicate and one null draw; its options
        ``n_resamples = 0`` / ``n_simulations = 0`` switch the intervals / the tests off afterwards
        (:func:`calib_core.base.report.blank_inference`), and without tests the verdict is "not tested".

        Parameters
        ----------
        model, group : str
            The (model, group) the rows belong to.
        intervals : bool, default True
            Keep the intervals.
        tests : bool, default True
            Keep the tests, the perfect-calibration values and the verdict.

        Returns
        -------
        table : DataFrame
            :attr:`table` with the switched-off columns empty.
        verdict : dict
            The row of ``Report.verdicts`` (:meth:`headline_row`, or "not tested").
        """
        table = blank_inference(self.table, intervals, tests)
        if not tests:
            return table, verdict_row(model, group, self.n, verdict=NOT_TESTED,
                                      sentence="Not tested (null draws switched off).")
        return table, self.headline_row(model, group)
