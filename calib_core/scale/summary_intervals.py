"""The intervals, tests and headline of a summary's report that ``cc.diagnose`` builds from N alone or from the exact
sums: the KS-band intervals of the PIT statistics, the N-only Monte Carlo nulls (miscalibration area, reliability
score), the Gaussian z-shape tests, the classification gaps' intervals and MCE's test — each with the
in-memory function, so a summary loses no interval or p-value the rows' report gives where the summary keeps what it
needs — and the headline sentence, made by the in-memory verdict functions (:func:`regression_headline`,
:func:`classification_headline`).  Used by :mod:`calib_core.scale.summary_report`.

Where a summary keeps a statistic only within a bracket (KS, the miscalibration area, the reliability score:
:func:`calib_core.scale.regression_values.regression_bounds`), the interval is the in-memory interval widened to
hold every value of the bracket, and the p-value is taken at the bracket's conservative end (the end least extreme
under the test's alternative), so both keep their level whatever the rows inside the fine bins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import significance as sig
from ..base.mergeable import SummarySpec, exact_float
from ..base.report import verdict_row
from ..inference.classification_cells import mce_cells
from ..inference.classification_nulls import bernstein_tail, mce_bound
from ..inference.classification_verdict import headline
from ..inference.regression_nulls import ks_sf_ppf, kstwo_mean, kurtosis_test, n_only_null, skew_test
from ..inference.regression_verdict import decide

__all__ = ["KS_BAND", "SUMMARY_GAPS", "ENSEMBLE_GAP", "note_gaps", "pit_band_inference", "n_only_tests",
           "z_shape_tests", "regression_headline", "classification_gap_inference", "binned_tests", "ratio_interval",
           "classification_headline"]

#: The interval of the PIT statistics, as ``regression.inference`` names it
KS_BAND = "KS band (distribution-free, coverage ≥ level)"


_NO_BLOCKS = "no interval from a summary: its {how} needs {what} per bootstrap block, which a summary does not keep"

#: What the rows' report gives and a summary cannot, and why: metric → (column, reason); the reason goes into the
#: row's note (:func:`note_gaps`).  Gaps whose rows already say why (Spearman's ρ,
#: an ensemble's ranks, ENCE and coverage tests of ensembles, the PIT entropy's test, smooth ECE, TCE) are not
#: repeated (a row whose note already names a summary keeps its note).
SUMMARY_GAPS: dict[str, tuple[str, str]] = {
    "z_skewness": ("interval", _NO_BLOCKS.format(how="bootstrap-t interval", what="Σz³ … Σz⁸")),
    "z_excess_kurtosis": ("interval", _NO_BLOCKS.format(how="bootstrap-t interval", what="Σz³ … Σz⁸")),
    **{k: ("interval", _NO_BLOCKS.format(how="BCa interval", what="the sum of the WIS and of its parts"))
       for k in ("wis", "wis_dispersion", "wis_overprediction", "wis_underprediction")},
    **{k: ("interval", _NO_BLOCKS.format(how="interval", what="the positive class's bins"))
       for k in ("ece_positive", "mce_positive", "calibration_ratio_positive")},
    "mean_log_z2": ("both", "not available from a summary: it needs Σ log z² (and its block sums), which a summary "
                            "does not keep"),
    "below_median": ("both", "not available from a summary: it needs each row's target against its median"),
    "classwise_ece": ("both", "not tested from a summary: its null and interval need every class's per-bin sums per "
                              "bootstrap block"),
}

#: Ensembles: what their exchangeability null needs (each row's members)
ENSEMBLE_GAP = ("no test from a summary for ensembles: the exchangeability null of z needs each row's members (the "
                "pooled values the target is exchangeable with)")


def note_gaps(rec: dict[str, dict[str, Any]], layout: str) -> None:
    """Say in the note of every row the summary leaves without the interval or test the rows' report gives why
    (:data:`SUMMARY_GAPS`; an ensemble's z tests: :data:`ENSEMBLE_GAP`).

    Parameters
    ----------
    rec : dict of str to dict
        The records (updated in place).
    layout : str
        The layout ("gaussian", "quantile", "sample", "probs", …).

    References
    ----------
    .. [1] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    for k, (column, reason) in SUMMARY_GAPS.items():
        row = rec.get(k)
        if row is None:
            continue
        missing = not np.isfinite(row["ci_low"]) if column == "interval" else not np.isfinite(row["p_value"])
        if column == "both":
            missing = not (np.isfinite(row["ci_low"]) and np.isfinite(row["p_value"]))
        if missing and "summary" not in row.get("note", ""):
            _append(row, reason)
    if layout == "sample":
        for k in ("z_mean", "z_std", "zms"):
            if k in rec and not np.isfinite(rec[k]["p_value"]):
                _append(rec[k], ENSEMBLE_GAP)


def _append(row: dict[str, Any], text: str) -> None:
    row["note"] = f"{row['note']}; {text}" if row.get("note") else text


def _grid_shares(part: dict, spec: SummarySpec, at: np.ndarray) -> np.ndarray:
    """#{u ≤ p}/N at grid levels p that are fine PIT edges (exact counts; ``pit_le`` bin k counts e_{k−1} < u ≤ e_k)."""
    pe = np.asarray(spec.pit_edges, dtype=float)
    cum = np.cumsum(part["pit_le"])
    return cum[np.searchsorted(pe, at)] / cum[-1]


def pit_band_inference(rec: dict[str, dict[str, Any]], values: dict[str, float], bounds: dict[str, tuple],
                       part: dict, spec: SummarySpec, level: float) -> None:
    """KS-band intervals of KS, calibration RMSE, l2 QCE and the miscalibration area, and the curve statistics'
    debiased values, as ``regression.inference`` gives them for the rows.

    With d_α the level-quantile of the Kolmogorov distance D_N (exact law up to N = 20,000, Stephens-corrected limit
    beyond), sup_p |F̂(p) − F(p)| ≤ d_α with probability ≥ level, so every functional that moves by at most the sup
    distance lies within d_α of its population value: calibration RMSE in [v − d_α, v + d_α], the l2 QCE in
    [(√v − d_α)², (√v + d_α)²], KS and the area in [lo − d_α, hi + d_α] with [lo, hi] the bracket the summary gives
    (exact values have lo = hi = v: the in-memory interval itself), clipped to [0, 1].  Debiased curve statistics:
    mean over the grid of (p̂ − p)² − p̂(1 − p̂)/(N − 1), the in-memory formula on the exact counts at the levels.

    Parameters
    ----------
    rec : dict of str to dict
        The records of the summary's statistics (updated in place).
    values : dict of str to float
        The point values.
    bounds : dict of str to (float, float)
        The brackets of the bounded statistics (``regression_bounds``).
    part : dict of str to ndarray
        The summary part (its fine PIT histogram gives the exact shares p̂ = #{u ≤ p}/N at the grid levels).
    spec : SummarySpec
        The spec (fine PIT edges, the curve's and the QCE's levels).
    level : float
        Confidence level.

    References
    ----------
    .. [1] Kolmogorov, A. N. (1933). Sulla determinazione empirica di una legge di distribuzione. Giornale
       dell'Istituto Italiano degli Attuari, 4, 83–91.
    .. [2] Stephens, M. A. (1970). Use of the Kolmogorov–Smirnov, Cramér–von Mises and related statistics without
       extensive tables. Journal of the Royal Statistical Society B, 32(1), 115–122.
    .. [3] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    """
    n = int(np.sum(part["pit_le"]))
    _, d_alpha, _ = ks_sf_ppf(0.0, n, level)
    curve = {}
    for name, grid in (("calibration_rmse", spec.levels), ("quantile_calibration_error", spec.qce_levels)):
        grid = np.asarray(grid, dtype=float)
        curve[name] = (grid, _grid_shares(part, spec, grid))
    for name in ("max_calibration_deviation", "miscalibration_area"):
        if name in rec and name in bounds and np.isfinite(bounds[name][0]):
            lo, hi = bounds[name]
            rec[name].update(ci_low=max(0.0, lo - d_alpha), ci_high=min(1.0, hi + d_alpha),
                             interval=KS_BAND + ", widened to the summary's bracket")
    if "max_calibration_deviation" in rec:
        rec["max_calibration_deviation"]["perfect"] = kstwo_mean(n)
    for name, (grid, share) in curve.items():
        if name not in rec or not np.isfinite(values.get(name, np.nan)):
            continue
        v = values[name]
        sq = float(np.mean((share - grid) ** 2 - share * (1 - share) / (n - 1)))
        if name == "calibration_rmse":
            ci, deb = (max(0.0, v - d_alpha), min(1.0, v + d_alpha)), float(np.sqrt(max(sq, 0.0)))
        else:
            ci, deb = (max(0.0, np.sqrt(v) - d_alpha) ** 2, min(1.0, np.sqrt(v) + d_alpha) ** 2), max(sq, 0.0)
        rec[name].update(ci_low=ci[0], ci_high=ci[1], interval=KS_BAND, debiased=deb)


def n_only_tests(rec: dict[str, dict[str, Any]], bounds: dict[str, tuple], n: int, nz: int, gaussian: bool) -> None:
    """Monte Carlo tests of the miscalibration area (uniform PITs) and, for Gaussians, of the reliability score
    (N(0, 1) z), against the in-memory nulls that depend on N only (``n_only_null``: the same draws), each at the
    conservative end of the summary's bracket.

    p = #{T* ≥ t}/R at the bracket's lower end (large values are evidence): the p-value of every value the rows can
    have is at most this one, so the test keeps its size.  Not the PIT entropy: the upper end of its bracket (where
    its test would be conservative) lies far above its null (a p-value of 1 at 2·10⁴ rows even where the rows'
    test gives 5e-4), and its estimate's error exceeds its null spread at 10⁶ rows.

    Parameters
    ----------
    rec : dict of str to dict
        The records (updated in place).
    bounds : dict of str to (float, float)
        The brackets (``regression_bounds``).
    n : int
        Rows (PITs).
    nz : int
        Rows with a finite z.
    gaussian : bool
        Gaussian layout (the reliability score's null is N(0, 1) z).

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [2] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [3] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [4] Davison, A. C., & Hinkley, D. V. (1997). Bootstrap Methods and their Application. Cambridge University
       Press (Monte Carlo tests, §4.2.5).
    """
    plan = [("miscalibration_area", n, 0, "greater", "lower")]
    if gaussian and nz >= 2:
        plan.append(("reliability_score", nz, 0, "greater", "lower"))
    for name, size, end, alt, which in plan:
        if name not in rec or name not in bounds or not np.isfinite(bounds[name][end]):
            continue
        draws, how = n_only_null(name, size)
        if name == "reliability_score":
            how = how.replace("uniform PITs", "N(0, 1) z")
        mc = sig.monte_carlo_p(bounds[name][end], draws, alt)
        rec[name].update(p_value=mc.p, p_mc_se=mc.se, perfect=float(draws.mean()),
                         test=f"Monte Carlo ({how}), at the {which} end of the summary's bracket (conservative)")


def z_shape_tests(rec: dict[str, dict[str, Any]], values: dict[str, float], nz: int) -> None:
    """Gaussian layout: D'Agostino's skewness test and the Anscombe–Glynn kurtosis test of z, from the exact
    skewness and excess kurtosis of the summary and N (the in-memory Gaussian-null tests).

    In memory the skewness's p-value is the larger of D'Agostino's and that of the bootstrap-t test its interval
    inverts; that test needs Σz⁵ … Σz⁸ per bootstrap block, which a summary does not keep, so the summary's is
    D'Agostino's alone (the note says so).

    Parameters
    ----------
    rec : dict of str to dict
        The records (updated in place).
    values : dict of str to float
        The point values (``z_skewness``, ``z_excess_kurtosis``).
    nz : int
        Rows with a finite z.

    References
    ----------
    .. [1] D'Agostino, R. B. (1970). Transformation to normality of the null distribution of g1. Biometrika, 57(3),
       679–681.
    .. [2] Anscombe, F. J., & Glynn, W. J. (1983). Distribution of the kurtosis statistic b2 for normal samples.
       Biometrika, 70(1), 227–234.
    """
    for key, fn, ref, name in (("z_skewness", skew_test, 0.0, "D'Agostino"),
                               ("z_excess_kurtosis", kurtosis_test, -6.0 / (nz + 1), "Anscombe–Glynn")):
        v = values.get(key, np.nan)
        if key not in rec or not np.isfinite(v):
            continue
        p = fn(v, nz)
        if not np.isfinite(p):
            continue
        rec[key].update(p_value=float(p), p_mc_se=0.0, perfect=ref, test=name)
        if key == "z_skewness":
            _append(rec[key], "from a summary: D'Agostino alone (in memory also the bootstrap-t test, which needs "
                              "Σz⁵…Σz⁸ per block)")


def regression_headline(rec: dict[str, dict[str, Any]], model: str, group: str, n: int, layout: str,
                        alpha: float) -> dict[str, Any]:
    """The verdict row of a regression summary part, made by the in-memory decision (``regression_verdict.decide``:
    Holm over the primary family, Benjamini–Hochberg over the secondary, direction words under their Bonferroni
    bound, the same sentence).

    Parameters
    ----------
    rec : dict of str to dict
        The records with ``family`` set (adjusted p-values and flags are written into them).
    model, group : str
        The part's (model, group).
    n : int
        Rows.
    layout : str
        "gaussian", "quantile" or "sample".
    alpha : float
        Family-wise level.

    Returns
    -------
    dict
        The row of ``Report.verdicts``.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [2] Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. Journal of the Royal Statistical Society B, 57(1), 289–300.
    """
    for k, row in rec.items():
        row.setdefault("metric", k)
    res = decide(rec, n, layout, alpha, {"alpha": alpha, "from_summary": True})
    return res.headline_row(model, group)


def classification_gap_inference(rec: dict[str, dict[str, Any]], values: dict[str, float], part: dict, *,
                                 first_top: int, level: float, n_boot: int, n_null: int, seed: int) -> None:
    """The top-bin gap's interval (top-bin confidence − the Clopper–Pearson interval of its accuracy), the overall
    gap's percentile bootstrap interval (block sums of Σconf and Σcorrect) and MCE's test (normal per-bin null from
    Σc(1 − c), or the union Bernstein bound where smaller) and, binary, the positive class's ECE and MCE tests
    (:func:`binned_tests`), as ``classification.inference`` gives them.

    Parameters
    ----------
    rec : dict of str to dict
        The records (updated in place).
    values : dict of str to float
        The point values (``mce``, ``top_bin_gap``, ``confidence_gap``).
    part : dict of str to ndarray
        The summary part (``n``, ``hit``, ``x:conf``, ``x:conf_var``, ``blk``).
    first_top : int
        First confidence bin of the top region.
    level : float
        Confidence level.
    n_boot : int
        Bootstrap replicates (0: no bootstrap interval).
    n_null : int
        Null draws of MCE's test.
    seed : int
        Seed.

    References
    ----------
    .. [1] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the
       case of the binomial. Biometrika, 26(4), 404–413.
    .. [2] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. Proceedings of the 29th AAAI Conference on Artificial Intelligence, 2901–2907.
    .. [3] Bernstein, S. N. (1924). On a modification of Chebyshev's inequality and of the error formula of
       Laplace. Ann. Sci. Inst. Sav. Ukraine, Sect. Math., 1, 38–49.
    """
    count = part["n"].astype(np.int64)
    hits = part["hit"].astype(np.int64)
    s_conf = exact_float(part["x:conf"])
    n_top = int(count[first_top:].sum())
    if "top_bin_gap" in rec and n_top > 0:
        top_conf = float(s_conf[first_top:].sum() / n_top)
        lo, hi = sig.clopper_pearson(int(hits[first_top:].sum()), n_top, level)
        rec["top_bin_gap"].update(ci_low=top_conf - hi, ci_high=top_conf - lo,
                                  interval="top-bin confidence − Clopper–Pearson interval of its accuracy")
    if "confidence_gap" in rec and n_boot > 0:
        blk = part["blk"]
        rng = np.random.default_rng(np.random.SeedSequence([seed, 17]))
        reps = sig.block_bootstrap_weights(blk.shape[0], n_boot, rng) @ blk[:, :3]
        with np.errstate(invalid="ignore", divide="ignore"):
            gap = (reps[:, 2] - reps[:, 1]) / reps[:, 0]
        lo, hi = sig.percentile_interval(gap[:, None], level)
        rec["confidence_gap"].update(ci_low=float(lo[0]), ci_high=float(hi[0]),
                                     interval="percentile bootstrap (blocks hashed from row ids)")
    if "x:conf_var" in part and n_null > 0:
        binned_tests(rec, {"mce": values.get("mce", np.nan)}, count.astype(float), exact_float(part["x:conf_var"]),
                     int(count.sum()), ("", "mce"), n_null, seed, 18)
    if "x:pos_var" in part and n_null > 0:  # binary: the positive class's bins
        binned_tests(rec, values, part["pos_n"].astype(float), exact_float(part["x:pos_var"]), int(count.sum()),
                     ("ece_positive", "mce_positive"), n_null, seed, 19)


def ratio_interval(row: dict[str, Any], blk: np.ndarray, level: float, n_boot: int, seed: int) -> None:
    """BCa interval of the calibration ratio R = Σ confidence / Σ correct from the block sums (columns n, correct,
    Σconf of ``blk``): replicate R* = (w·Σconf)/(w·Σcorrect) with multinomial block weights w, acceleration from the
    leave-one-block-out jackknife.  (In memory: the delta method on the log scale with the rows' variances, which a
    summary does not keep; both are first-order equivalent.)

    Parameters
    ----------
    row : dict
        The ratio's record (updated in place; ``value`` read).
    blk : ndarray of shape (G, q)
        The part's block sums.
    level : float
        Confidence level.
    n_boot : int
        Bootstrap replicates (0: nothing).
    seed : int
        Seed.

    References
    ----------
    .. [1] Efron, B. (1987). Better bootstrap confidence intervals. Journal of the American Statistical
       Association, 82(397), 171–185.
    .. [2] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    theta = float(row["value"])
    if n_boot <= 0 or not np.isfinite(theta):
        return
    rng = np.random.default_rng(np.random.SeedSequence([seed, 20]))
    sums = blk[:, 1:3]
    reps = sig.block_bootstrap_weights(blk.shape[0], n_boot, rng) @ sums
    jack = sig.jackknife_sums(sums)
    with np.errstate(all="ignore"):
        lo, hi = sig.bca_interval(np.array([theta]), (reps[:, 1] / reps[:, 0])[:, None],
                                  (jack[:, 1] / jack[:, 0])[:, None], level)
    if np.isfinite(lo[0]) and np.isfinite(hi[0]):
        row.update(ci_low=float(lo[0]), ci_high=float(hi[0]), interval="BCa, block bootstrap (blocks hashed from row "
                                                                        "ids)")
        row["note"] = "Σ confidence / Σ correct (exact)"


def _binned_p(rec: dict[str, Any], observed: float, draws: np.ndarray, bound: float, n_null: int) -> None:
    """The in-memory rule: the Monte-Carlo p-value, or the Bernstein bound where that is smaller."""
    mc = sig.monte_carlo_p(observed, draws, "greater")
    if bound < mc.p:
        rec.update(p_value=bound, p_mc_se=0.0, test=f"Bernstein bound (no null draw reached it in {n_null})")
    else:
        rec.update(p_value=mc.p, p_mc_se=mc.se, test="Monte Carlo, normal per bin from the summary's Σc and Σc(1 − c)")


def binned_tests(rec: dict[str, dict[str, Any]], values: dict[str, float], count: np.ndarray, var: np.ndarray,
                 n: int, keys: tuple[str, str], n_null: int, seed: int, stream: int) -> None:
    """ECE- and MCE-type tests of one set of confidence bins (the top label's, or the positive class's) against
    the per-bin normal null of the summary (hits per bin ~ Poisson-binomial(Σc, Σc(1 − c)), normal draws, bins
    independent), each p-value the Monte-Carlo one or the in-memory Bernstein bound where smaller (the bound of
    ECE: a union over the sign patterns of the non-empty bins; of MCE: a union over the bins).

    Parameters
    ----------
    rec : dict of str to dict
        The records (updated in place).
    values : dict of str to float
        The point values.
    count : ndarray of shape (M,)
        Rows per bin.
    var : ndarray of shape (M,)
        Σc(1 − c) per bin.
    n : int
        Rows.
    keys : (str, str)
        The ECE and MCE keys (``("ece_positive", "mce_positive")``).
    n_null : int
        Null draws.
    seed : int
        Seed.
    stream : int
        The seed's stream.

    References
    ----------
    .. [1] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
       Bayesian binning. Proceedings of the 29th AAAI Conference on Artificial Intelligence, 2901–2907.
    .. [2] Bernstein, S. N. (1924). On a modification of Chebyshev's inequality and of the error formula of
       Laplace. Ann. Sci. Inst. Sav. Ukraine, Sect. Math., 1, 38–49.
    """
    ece_key, mce_key = keys
    rng = np.random.default_rng(np.random.SeedSequence([seed, stream]))
    dev = np.sqrt(np.maximum(var, 0.0)) * rng.standard_normal((n_null, count.size))
    if ece_key in rec and np.isfinite(values.get(ece_key, np.nan)):
        bound = bernstein_tail(values[ece_key] * n, float(var.sum()), int((count > 0).sum()))
        _binned_p(rec[ece_key], values[ece_key], np.abs(dev).sum(axis=1) / n, bound, n_null)
    if mce_key in rec and np.isfinite(values.get(mce_key, np.nan)):
        _binned_p(rec[mce_key], values[mce_key], mce_cells(count, dev), mce_bound(values[mce_key], count, var), n_null)


def classification_headline(rec: dict[str, dict[str, Any]], prim: list[str], sec: list[str], model: str,
                            group: str, n: int, n_top: float, top_confidence: float,
                            alpha: float) -> dict[str, Any]:
    """The verdict row of a classification summary part, its verdict, direction and sentence made by the in-memory
    headline (``classification_verdict.headline``: Holm's decision over ECE and the top-bin gap, the direction of the
    overall gap when it is significant, the same sentence).

    Parameters
    ----------
    rec : dict of str to dict
        The records, adjusted p-values and flags set.
    prim, sec : list of str
        The tested primary and secondary statistics.
    model, group : str
        The part's (model, group).
    n : int
        Rows.
    n_top : float
        Rows of the top region.
    top_confidence : float
        Its mean confidence.
    alpha : float
        Family-wise level.

    Returns
    -------
    dict
        The row of ``Report.verdicts``.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [2] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    """
    obs = {k: float(rec[k]["value"]) for k in ("accuracy", "mean_confidence", "ece", "top_bin_gap") if k in rec}
    pvals = {k: (float(r["p_value"]), float(r["p_mc_se"]), str(r["test"])) for k, r in rec.items()
             if np.isfinite(r["p_value"])}
    pvals.setdefault("confidence_gap", (float("nan"), float("nan"), ""))
    adjusted = {k: (float(rec[k]["adjusted_p"]), bool(rec[k]["flag"])) for k in prim}
    verdict, direction, sentence = headline(obs, pvals, prim, adjusted, alpha, n_top, top_confidence)
    return verdict_row(model, group, n, verdict=verdict, direction=direction,
                       p_value=float(min(rec[k]["adjusted_p"] for k in prim)),
                       lead=min(prim, key=lambda k: rec[k]["p_value"]), sentence=sentence, n_tests=len(prim),
                       alpha=alpha, n_secondary=len(sec), n_flags=sum(1 for k in sec if rec[k]["flag"]),
                       expected_chance_flags=sig.expected_chance_flags(len(sec), alpha))

