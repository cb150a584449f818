"""The report of a merged summary: the metric table, verdicts table and diagram tables of ``cc.diagnose``, with the
intervals and tests a summary supports (BCa on the bootstrap-block sums, exact binomial / t / χ² tests, the curve
statistics against their exact multinomial null, KS at the conservative end of its bracket; the KS-band intervals,
N-only tests, classification gap intervals and the headline in :mod:`calib_core.scale.summary_intervals`) and, per
metric, how exact the number is (:data:`EXACTNESS`).  Building and merging summaries:
:mod:`calib_core.scale.summary`, which re-exports :func:`report`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..base import significance as sig
from ..base.mergeable import Summary, SummarySpec, exact_float, exact_fraction
from ..base.predictions import ALL
from ..base.report import METRIC_COLUMNS, NOT_TESTED, Report, empty_verdicts, inference_metric_rows, verdict_row
from ..diagnosis.regression import degenerate_note, mark_undefined_metrics
from ..inference.classification import PRIMARY_FAMILY as CLASSIFICATION_PRIMARY
from ..inference.classification_nulls import bernstein_tail
from ..inference.regression import PRIMARY as REGRESSION_PRIMARY
from ..inference.regression import metric_kind, primary_family_of_levels
from .classification import (
    classification_block_statistics,
    classification_diagrams_from_part,
    classification_values,
)
from .regression_diagrams import regression_diagrams_from_part
from .regression_sharpness import SCALED_NOTE, uses_scaled_sums
from .regression_stated import stated_summary_tests
from .regression_values import (
    BOUNDED_METRICS,
    UNAVAILABLE_METRICS,
    block_statistics,
    point_block_statistics,
    regression_bounds,
    regression_values,
    undefined_z_of_part,
)
from .summary_intervals import (
    classification_gap_inference,
    classification_headline,
    n_only_tests,
    note_gaps,
    pit_band_inference,
    ratio_interval,
    regression_headline,
    z_shape_tests,
)
from .summary_nulls import curve_null, gaussian_ence_test, ks_p_value

__all__ = [
    "EXACTNESS",
    "SPEARMAN_NOTE",
    "PIT_ENTROPY_NOTE",
    "report",
    "levi_rmse_interval",
    "regression_primary",
]

#: How each reported number relates to ``cc.diagnose`` on the same rows.
EXACTNESS = {
    "exact": "the exact sums rounded once: equal to the in-memory value up to the in-memory value's own rounding",
    "bound": "the true value lies in the interval given in the note (fine-bin bracket, computed from the summary)",
    "not available": "needs what a summary does not keep (the rows' joint ranks for Spearman ρ of σ and |ε|, a sum "
                     "of log z² for the mean log z²): NaN from a summary",
}

#: Why Spearman's ρ(σ, |ε|) is not computed from a summary (the note of its row).
SPEARMAN_NOTE = ("not available from a summary: Spearman's ρ needs every row's rank of σ and of |ε| together; the "
                 "σ-bin table gives a row's σ rank only to within its bin and nothing of the rank of its |ε| (sums "
                 "of |ε| per σ-bin bound no rank correlation), so no bounded value can be given — see the Levi "
                 "bins (RMSE per σ-bin) for how the error grows with σ")

#: The note of the PIT entropy from a summary (its bracket follows).
PIT_ENTROPY_NOTE = ("from a summary: the spacing estimator with the PITs of each fine PIT bin placed evenly in it "
                    "(measured within 4e-4 of the rows' value at 10⁶ rows: more than its own sampling spread there, "
                    "so it is not tested from a summary: at the conservative end of its bracket the test has no "
                    "power); the exact value lies in")


# ---------------------------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------------------------
def _order(keys: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(keys, key=lambda k: (k[0], k[1] != ALL, k[1]))


def _bootstrap(theta: dict[str, float], blk: np.ndarray, bins: np.ndarray, stat, n_boot: int, level: float,
               seed: int) -> dict[str, tuple[float, float]]:
    """BCa intervals from the block sums: replicate sums = multinomial block weights @ block sums (the blocks are
    hashed from row ids, so they are the same whatever the chunking), jackknife = delete-one-block sums."""
    g = blk.shape[0]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 13]))
    w = sig.block_bootstrap_weights(g, n_boot, rng)
    reps = stat(w @ blk, np.einsum("rg,gbq->rbq", w, bins))
    jack_blk = sig.jackknife_sums(blk)
    jack_bins = bins.sum(axis=0, keepdims=True) - bins
    jack = stat(jack_blk, jack_bins)
    names = [k for k in reps if k in theta and np.isfinite(theta[k])]
    if not names:
        return {}
    th = np.array([theta[k] for k in names])
    with np.errstate(all="ignore"):
        lo, hi = sig.bca_interval(th, np.stack([reps[k] for k in names], 1), np.stack([jack[k] for k in names], 1),
                                  level)
    return {k: (float(a), float(b)) for k, a, b in zip(names, lo, hi)}


def levi_rmse_interval(part: dict, n_resamples: int, seed: int, level: float = 0.90) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of each σ-bin's RMSE, from the per-block, per-bin sums.

    Bin membership is fixed; a replicate re-weights the hashed blocks with multinomial counts.  The summary's version
    of ``regression.diagrams.levi_bins_table``'s interval.

    Parameters
    ----------
    part : dict of str to ndarray
        A (merged) summary part.
    n_resamples : int
        Bootstrap replicates (at least 1 is drawn).
    seed : int
        Seed of the replicates.
    level : float, default 0.90
        Confidence level.

    Returns
    -------
    low, high : ndarray of shape (B,)
        The interval of every σ-bin (NaN for an empty bin).

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    """
    bins = part["blk_bins"]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 15]))
    w = sig.block_bootstrap_weights(bins.shape[0], max(n_resamples, 1), rng)
    reps = np.einsum("rg,gb->rb", w, bins[..., 0]), np.einsum("rg,gb->rb", w, bins[..., 2])
    with np.errstate(invalid="ignore", divide="ignore"):
        rmse = np.sqrt(reps[1] / reps[0])
    lo, hi = sig.percentile_interval(rmse, level)
    keep = part["n"] > 0
    return np.where(keep, lo, np.nan), np.where(keep, hi, np.nan)


def _percentile(part: dict, n_boot: int, level: float, seed: int) -> dict[str, tuple[float, float]]:
    """Percentile intervals of RMSE and MAE of a point-prediction part from its block sums."""
    blk = part["blk"]
    rng = np.random.default_rng(np.random.SeedSequence([seed, 13]))
    reps = point_block_statistics(sig.block_bootstrap_weights(blk.shape[0], n_boot, rng) @ blk, part["blk_bins"])
    names = list(reps)
    lo, hi = sig.percentile_interval(np.stack([reps[k] for k in names], 1), level)
    return {k: (float(a), float(b)) for k, a, b in zip(names, lo, hi)}


def _empty_row(value: float, kind: str) -> dict[str, Any]:
    return {"kind": kind, "value": value, "ci_low": np.nan, "ci_high": np.nan, "interval": "", "perfect": np.nan,
            "p_value": np.nan, "p_mc_se": np.nan, "test": "", "family": "", "adjusted_p": np.nan, "flag": False,
            "note": ""}


def _decide(rec: dict[str, dict[str, Any]], primary: tuple[str, ...], alpha: float) -> tuple[list[str], list[str]]:
    prim = [k for k in rec if k in primary and np.isfinite(rec[k]["p_value"])]
    for k in rec:
        if rec[k]["kind"] == "calibration statistic" or k in primary:
            rec[k]["family"] = "primary" if k in primary else "secondary"
    sec = [k for k in rec if rec[k]["family"] == "secondary" and np.isfinite(rec[k]["p_value"])]
    if prim:
        for k, a in zip(prim, sig.holm_adjust([rec[k]["p_value"] for k in prim])):
            rec[k].update(adjusted_p=float(a), flag=bool(a <= alpha))
    if sec:
        for k, a in zip(sec, sig.bh_adjust([rec[k]["p_value"] for k in sec])):
            rec[k].update(adjusted_p=float(a), flag=bool(a <= alpha))
    return prim, sec


def _not_tested(model: str, group: str, n: int) -> dict[str, Any]:
    return verdict_row(model, group, n, verdict=NOT_TESTED,
                       sentence="Not tested: no test of the primary family is available from this summary.")


def _headline(spec: SummarySpec, info: dict, model: str, group: str, n: int, alpha: float) -> dict[str, Any]:
    """The verdict row, made by the in-memory headline of the task (the same sentence as ``cc.diagnose``)."""
    if not info["prim"]:
        return _not_tested(model, group, n)
    if spec.task == "regression":
        return regression_headline(info["rec"], model, group, n, spec.layout, alpha)
    return classification_headline(info["rec"], info["prim"], info["sec"], model, group, n, info["n_top"],
                                   info["top_confidence"], alpha)


def _regression_inference(part: dict, spec: SummarySpec, values: dict[str, float], *, level: float, alpha: float,
                          n_boot: int, n_null: int, seed: int) -> tuple[pd.DataFrame, dict, dict[str, str]]:
    n = int(part["n"].sum())
    nz = int(part["nz"].sum())
    rec = {k: _empty_row(v, metric_kind(k)) for k, v in values.items()}
    exactness: dict[str, str] = {}
    for k in values:
        exactness[k] = "not available" if k in UNAVAILABLE_METRICS else "bound" if k in BOUNDED_METRICS else "exact"
    bounds = regression_bounds(part, spec)
    for k, (lo, hi) in bounds.items():
        lead = PIT_ENTROPY_NOTE if k == "pit_entropy" else "from a summary: the exact value lies in"
        rec[k]["note"] = f"{lead} [{lo:.6g}, {hi:.6g}]"
        if k == "pit_entropy" and not np.isfinite(lo):
            rec[k]["note"] += " (−inf: k = √N sorted PITs fit in one fine bin, so a spacing may be 0)"
    for k in UNAVAILABLE_METRICS:
        if k in rec:
            rec[k]["note"] = SPEARMAN_NOTE if k == "spearman_sigma_abs_error" else \
                "not available from a summary (it needs a per-row quantity the summary does not keep)"
    if n_boot > 0:
        ci = _bootstrap(values, part["blk"], part["blk_bins"], lambda s, b: block_statistics(s, b, spec), n_boot,
                        level, seed)
        scaled = uses_scaled_sums(part)  # σ beyond the range of σ²: no interval from the float block sums of σ²
        for k, (lo, hi) in ci.items():
            if scaled and k in ("sharpness", "cv"):
                rec[k]["note"] = SCALED_NOTE
                continue
            rec[k].update(ci_low=lo, ci_high=hi, interval="BCa, block bootstrap (blocks hashed from row ids)")
    gaussian = spec.layout == "gaussian"
    ks_lo, ks_hi = bounds["max_calibration_deviation"]
    p_lo_d, p_hi_d = ks_p_value(ks_lo, n), ks_p_value(ks_hi, n)
    rec["max_calibration_deviation"].update(
        p_value=p_lo_d, p_mc_se=0.0, test="Kolmogorov–Smirnov at the lower end of the D bracket (conservative)",
        note=rec["max_calibration_deviation"]["note"] + f"; p-value at the upper end {p_hi_d:.3g}")
    pit_band_inference(rec, values, bounds, part, spec, level)
    if n_null > 0:
        n_only_tests(rec, bounds, n, nz, gaussian)
        if gaussian and nz > 2:
            z_shape_tests(rec, values, nz)
        null = curve_null(n, spec.levels, spec.qce_levels, n_null)
        for name in ("calibration_rmse", "quantile_calibration_error"):
            mc = sig.monte_carlo_p(values[name], null[name], "greater")
            rec[name].update(p_value=mc.p, p_mc_se=mc.se, perfect=float(null[name].mean()),
                             test="Monte Carlo (exact multinomial null of uniform PITs on the grid)")
    for c in spec.coverages:
        key = f"coverage_{100 * c:g}"
        k = int(part[f"in:{100 * c:g}"].sum())
        lo_c, hi_c = sig.clopper_pearson(k, n, level)
        rec[key].update(ci_low=lo_c, ci_high=hi_c, interval="Clopper–Pearson (exact)")
        if spec.layout in ("gaussian", "quantile"):
            rec[key].update(p_value=sig.binomial_test(k, n, c), p_mc_se=0.0, test="exact binomial", perfect=c)
        else:
            rec[key]["note"] = "no test from a summary: an ensemble's finite-M coverage needs the per-row null"
    if gaussian and nz > 2:
        v = values["z_mean"]
        s = values["z_std"] * np.sqrt(nz / (nz - 1.0))
        se = s / np.sqrt(nz)
        if se > 0:
            rec["z_mean"].update(p_value=float(2 * special.stdtr(nz - 1, -abs(v) / se)), p_mc_se=0.0,
                                 test="t-test, exact (N − 1 d.f.)", perfect=0.0)
        s_obs = nz * values["z_std"] ** 2
        cdf = float(special.chdtr(nz - 1, s_obs))
        rec["z_std"].update(p_value=min(1.0, 2 * min(cdf, float(special.chdtrc(nz - 1, s_obs)))), p_mc_se=0.0,
                            test="χ² test, exact (N − 1 d.f.)", perfect=float(np.exp(
                                0.5 * np.log(2.0 / nz) + special.gammaln(nz / 2) - special.gammaln((nz - 1) / 2))))
        if "zms" in rec and np.isfinite(values.get("zms", np.nan)):  # N·ZMS ~ χ²_N (Pernot 2023)
            z_obs = nz * values["zms"]
            rec["zms"].update(p_value=min(1.0, 2 * min(float(special.chdtr(nz, z_obs)),
                                                       float(special.chdtrc(nz, z_obs)))),
                              p_mc_se=0.0, test="χ² test, exact (N d.f.)", perfect=1.0)
    if gaussian and "x:var2" in part and n_null > 0:
        gaussian_ence_test(rec["ence"], values["ence"], part, n_null, n_boot, level, seed)
    else:
        rec["ence"]["note"] = (rec["ence"]["note"] + "; " if rec["ence"]["note"] else "") + \
            "no test from a summary for this layout (its null needs the rows' shapes)"
    if spec.layout == "quantile":  # judged at its stated levels; the interpolated law's statistics descriptive
        stated_summary_tests(rec, values, part, spec, n_null=n_null, level=level, seed=seed)
    note_gaps(rec, spec.layout)
    prim, sec = _decide(rec, regression_primary(spec), alpha)
    table = pd.DataFrame.from_dict(rec, orient="index")
    return table, {"prim": prim, "sec": sec, "rec": rec}, exactness


def regression_primary(spec: SummarySpec) -> tuple[str, ...]:
    """The primary family of a regression summary, as ``regression.inference.primary_family`` chooses it in memory.

    :data:`~calib_core.inference.regression.PRIMARY`; a quantile set's family is that of its stated levels
    (``pit_chi2``, ``max_level_deviation``, ``below_median``, the widest stated central interval's coverage).

    Parameters
    ----------
    spec : SummarySpec
        A regression spec.

    Returns
    -------
    tuple of str
        The metric keys of the primary family (tested with Holm's step-down).

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    """
    if spec.layout == "quantile" and spec.quantile_levels:
        return primary_family_of_levels(np.asarray(spec.quantile_levels, dtype=float), spec.coverages)
    return REGRESSION_PRIMARY


def _classification_inference(part: dict, spec: SummarySpec, values: dict[str, float], *, level: float,
                              alpha: float, n_boot: int, n_null: int, seed: int) -> tuple[pd.DataFrame, dict, dict]:
    n = int(part["n"].sum())
    kinds = {"ece": "calibration statistic", "mce": "calibration statistic", "classwise_ece": "calibration statistic",
             "ece_positive": "calibration statistic", "mce_positive": "calibration statistic",
             "top_bin_gap": "calibration statistic", "confidence_gap": "calibration statistic",
             "nll": "proper score", "brier": "proper score",
             "accuracy": "descriptive", "mean_confidence": "descriptive"}
    count = part["n"].astype(float)
    s_conf = exact_float(part["x:conf"])
    s_hit = part["hit"].astype(float)
    s_var = exact_float(part["x:conf_var"]) if "x:conf_var" in part else None
    nb = count.size
    cum_from_top = np.cumsum(count[::-1])
    j = int(np.searchsorted(cum_from_top, n / nb - 1e-9))
    first_top = nb - 1 - min(j, nb - 1)
    n_top = float(count[first_top:].sum())
    values = dict(values)
    values["top_bin_gap"] = float((s_conf[first_top:].sum() - s_hit[first_top:].sum()) / n_top)
    values["confidence_gap"] = float(values["mean_confidence"] - values["accuracy"])
    rec = {k: _empty_row(v, kinds.get(k, "")) for k, v in values.items()}
    exactness = {k: "exact" for k in values}
    if n_boot > 0:
        ci = _bootstrap(values, part["blk"], part["blk_bins"], lambda s, b: classification_block_statistics(s, b),
                        n_boot, level, seed)
        for k, (lo, hi) in ci.items():
            rec[k].update(ci_low=lo, ci_high=hi, interval="BCa, block bootstrap (blocks hashed from row ids)")
    k_acc = int(part["hit"].sum())
    lo_a, hi_a = sig.clopper_pearson(k_acc, n, level)
    rec["accuracy"].update(ci_low=lo_a, ci_high=hi_a, interval="Clopper–Pearson (exact)")
    classification_gap_inference(rec, values, part, first_top=first_top, level=level, n_boot=n_boot,
                                 n_null=n_null, seed=seed)
    if s_var is not None:
        # H0: hits per bin ~ Poisson-binomial(Σc, Σc(1 − c)); normal draws per bin (CLT; bins independent)
        rng = np.random.default_rng(np.random.SeedSequence([seed, 14]))
        sd = np.sqrt(np.maximum(s_var, 0.0))
        draws = s_conf + sd * rng.standard_normal((n_null, nb))
        d = np.abs(draws - s_conf)
        null_ece = d.sum(axis=1) / n
        mc = sig.monte_carlo_p(values["ece"], null_ece, "greater")
        rec["ece"].update(p_value=mc.p, p_mc_se=mc.se, perfect=float(null_ece.mean()),
                          test="Monte Carlo, normal per bin from the summary's Σc and Σc(1 − c)")
        bound = bernstein_tail(values["ece"] * n, float(s_var.sum()), int((count > 0).sum()))
        if bound < mc.p:  # the in-memory rule: the Bernstein bound where no null draw reached the statistic
            rec["ece"].update(p_value=bound, p_mc_se=0.0, test=f"Bernstein bound (no null draw reached it in {n_null})")
        v_top = float(s_var[first_top:].sum())
        if v_top > 0:
            zt = values["top_bin_gap"] * n_top / np.sqrt(v_top)
            rec["top_bin_gap"].update(p_value=float(sig.normal_p(zt)), p_mc_se=0.0, perfect=0.0,
                                      test="normal (Poisson-binomial mean and variance of the top bin)")
        v_all = float(s_var.sum())
        if v_all > 0:
            rec["confidence_gap"].update(p_value=float(sig.normal_p(values["confidence_gap"] * n / np.sqrt(v_all))),
                                         p_mc_se=0.0, perfect=0.0,
                                         test="normal (Poisson-binomial mean and variance of all rows)")
    # the calibration ratio Σc/Σhit is exact from the sums and tested as the overall gap; smooth ECE and TCE
    # need the rows (a kernel over every confidence; per-row binomial tests): listed, not computed
    ratio = float(s_conf.sum() / s_hit.sum()) if s_hit.sum() > 0 else float("nan")
    rec["calibration_ratio"] = _empty_row(ratio, "calibration statistic")
    rec["calibration_ratio"]["note"] = "Σ confidence / Σ correct (exact); no interval from a summary"
    exactness["calibration_ratio"] = "exact"
    ratio_interval(rec["calibration_ratio"], part["blk"], level, n_boot, seed)
    if "p_value" in rec["confidence_gap"] and np.isfinite(rec["confidence_gap"].get("p_value", np.nan)):
        rec["calibration_ratio"].update(p_value=rec["confidence_gap"]["p_value"], p_mc_se=0.0, perfect=1.0,
                                        test="the overall gap's test (R is monotone in Σ(c − hit))")
    if "pos_n" in part:  # binary: Σ P(y = 1) / number of positives, exact from the positive-class bins
        rec["calibration_ratio_positive"], exactness["calibration_ratio_positive"] = _positive_ratio(part), "exact"
    positive = ("smooth_ece_positive", "tce_positive") if "ece_positive" in values else ()
    for key in ("smooth_ece", "tce", *positive):
        rec[key] = _empty_row(float("nan"), "calibration statistic")
        rec[key]["note"] = "needs the rows (not available from a summary): run cc.diagnose on the data"
        exactness[key] = "not available from a summary"
    note_gaps(rec, spec.layout)
    prim, sec = _decide(rec, CLASSIFICATION_PRIMARY, alpha)
    table = pd.DataFrame.from_dict(rec, orient="index")
    top = {"n_top": n_top, "top_confidence": float(s_conf[first_top:].sum() / n_top)}
    return table, {"prim": prim, "sec": sec, "rec": rec, "values": values, **top}, exactness


def _positive_ratio(part: dict) -> dict[str, Any]:
    """The positive-class calibration ratio R₊ = Σᵢ P(yᵢ = 1) / #{yᵢ = 1} of a binary part (as
    ``classification.ratio.calibration_ratio(target="positive")``), exact: the exact sum of the per-bin Σp over the
    integer count of positives, rounded once (inf when there is no positive and Σp > 0).  Its test is that of the
    overall positive-class gap Σ(p − y), which R₊ is monotone in: under perfect calibration y ~ Bernoulli(p)
    independently, so Σy has mean Σp and variance Σp(1 − p) (the part's ``x:pos_var``; normal approximation,
    two-sided; parts written before it was kept get no test)."""
    s_p = exact_fraction(sum(int(v) for v in part["x:pos_p"]))
    k = int(part["pos_hit"].sum())
    value = float(s_p / k) if k > 0 else (float("inf") if s_p > 0 else float("nan"))
    row = _empty_row(value, "calibration statistic")
    row["note"] = "Σ P(y = 1) / positives (exact); no interval from a summary"
    if "x:pos_var" in part:
        var = float(exact_fraction(sum(int(v) for v in part["x:pos_var"])))
        if var > 0:
            z = float(s_p - k) / np.sqrt(var)
            row.update(p_value=float(sig.normal_p(z)), p_mc_se=0.0, perfect=1.0,
                       test="normal (Poisson-binomial mean Σp and variance Σp(1 − p) of the positives; "
                            "R₊ is monotone in Σ(p − y))")
    return row


def report(
    summary: Summary,
    *,
    level: float = 0.95,
    alpha: float = 0.05,
    n_resamples: int = 1000,
    n_simulations: int = 2000,
    diagrams: bool = True,
    classes: list | None = None,
    seed: int = 0,
) -> Report:
    """The :class:`~calib_core.base.report.Report` of a summary, as ``cc.diagnose`` gives it for the rows.

    The same metric table, verdicts table and diagram tables as ``cc.diagnose``; ``Report.options["exactness"]``
    says, per metric, whether a number is exact, carries a bound — given in the row's note — or is not available
    from a summary.

    Intervals: BCa on the bootstrap-block sums (blocks hashed from row ids; a replicate re-weights the blocks with
    multinomial counts, like the in-memory block bootstrap), Clopper–Pearson for coverages and accuracy, the
    in-memory KS band for calibration RMSE, QCE, KS and the miscalibration area (the last two widened to their
    bracket), the top-bin gap's and the overall gap's in-memory intervals
    (:mod:`calib_core.scale.summary_intervals`).  Tests from a summary — regression: KS and the miscalibration
    area (at the conservative end of their brackets), the curve statistics against their exact multinomial null
    (``n_simulations`` draws, the in-memory seeds: the same p-values), exact binomial coverage (Gaussian and
    quantile layouts), the exact t- and χ²-tests of z, its skewness and kurtosis tests and the reliability score
    (Gaussian); classification: ECE and MCE (and a binary set's positive-class ECE and MCE) against a per-bin
    normal null or the in-memory Bernstein bound, the top-bin gap (Poisson-binomial mean and variance).  Holm over
    the tested members of the in-memory primary family, Benjamini–Hochberg over the rest; the verdict, its
    direction and its sentence are made by the in-memory functions, so they read as ``cc.diagnose``'s.

    Parameters
    ----------
    summary : Summary
        A (merged) summary.
    level : float, default 0.95
        Confidence level of the intervals.
    alpha : float, default 0.05
        Family-wise level of the verdicts.
    n_resamples : int, default 1000
        Bootstrap replicates; 0 switches the intervals off.
    n_simulations : int, default 2000
        Null draws of the Monte Carlo tests; 0 switches the tests and verdicts off.
    diagrams : bool, default True
        Compute the diagram tables.
    classes : list, optional
        Class names for the per-class table.
    seed : int, default 0
        Seed of the resampling and the null draws.

    Returns
    -------
    Report
        Metrics, verdicts and diagram tables; ``options["from_summary"]`` is True.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [4] Efron, B., & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    .. [5] Clopper, C. J., & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the
       case of the binomial. Biometrika, 26(4), 404–413.
    .. [6] Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
       Statistics, 6(2), 65–70.
    .. [7] Benjamini, Y., & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
       approach to multiple testing. Journal of the Royal Statistical Society B, 57(1), 289–300.
    .. [8] Stephens, M. A. (1970). Use of the Kolmogorov–Smirnov, Cramér–von Mises and related statistics without
       extensive tables. Journal of the Royal Statistical Society B, 32(1), 115–122.
    .. [9] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. APL Machine Learning, 1(4), 046121 (arXiv:2309.06240).
    """
    spec = summary.spec
    tables: list[pd.DataFrame] = []
    verdicts: list[dict] = []
    figs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    exactness: dict[str, str] = {}
    notes: list[str] = []
    for key in _order(summary.parts):
        model, group = key
        part = summary.parts[key]
        n = int(part["n"].sum())
        if n < 2:
            notes.append(f"model {model!r}, group {group!r}: {n} row(s), too few to diagnose")
            continue
        if spec.task == "regression" and "nz" not in part:  # point predictions: accuracy, nothing to test
            values = regression_values(part, spec)
            inf = None
            if n_resamples > 0:
                ci = _percentile(part, n_resamples, level, seed)
                inf = pd.DataFrame({"ci_low": [ci[k][0] for k in values], "ci_high": [ci[k][1] for k in values],
                                    "interval": "percentile bootstrap (blocks hashed from row ids)"},
                                   index=list(values))
            tables.append(inference_metric_rows(model, group, values, inf,
                                                kinds={"rmse": "descriptive", "mae": "descriptive"}))
            verdicts.append(verdict_row(model, group, n, verdict=NOT_TESTED,
                                        sentence="Point predictions only: no predicted uncertainty to test."))
            continue
        if spec.task == "regression":
            values = regression_values(part, spec)
            table, info, ex = _regression_inference(part, spec, values, level=level, alpha=alpha,
                                                    n_boot=n_resamples, n_null=n_simulations, seed=seed)
            extra: tuple[str, ...] = ()
        else:
            values = classification_values(part, spec)
            table, info, ex = _classification_inference(part, spec, values, level=level, alpha=alpha,
                                                        n_boot=n_resamples, n_null=max(n_simulations, 1), seed=seed)
            extra = ("top_bin_gap", "confidence_gap", "calibration_ratio", "smooth_ece", "tce",
                     "smooth_ece_positive", "calibration_ratio_positive", "tce_positive")
        binned = "ence" if spec.task == "regression" else "ece"
        if binned in values and not (spec.edges_exact and spec.own_edges(model, group)):
            ex[binned] = "exact for the spec's bins"
            msg = ("bins from a sample or another subset's edges: the exact value for these fixed bins, not for the "
                   "in-memory equal-count bins")
            prev = str(table.loc[binned, "note"])
            table.loc[binned, "note"] = (prev + "; " if prev else "") + msg
        for k, v in ex.items():  # a downgrade in any (model, group) stays
            if exactness.get(k, "exact") == "exact":
                exactness[k] = v
        if n_simulations <= 0:
            table[["p_value", "p_mc_se", "adjusted_p", "perfect"]] = np.nan
            table[["test", "family"]] = ""
            table["flag"] = False
            verdicts.append(verdict_row(model, group, n, verdict=NOT_TESTED,
                                        sentence="Not tested (null draws switched off)."))
        else:
            verdicts.append(_headline(spec, info, model, group, n, alpha))
        if n_resamples <= 0:
            table[["ci_low", "ci_high"]] = np.nan
            table["interval"] = ""
        metric_rows = inference_metric_rows(model, group, values, table, extra=extra)
        causes = undefined_z_of_part(part) if spec.task == "regression" else {}
        if causes:  # rows without a finite z (e.g. an ensemble group whose members are all equal): say so
            own = {k: v for k, v in values.items() if k not in UNAVAILABLE_METRICS}  # not those no summary gives
            notes.append(degenerate_note(model, group, n, own, causes, layout=spec.layout))
            mark_undefined_metrics(metric_rows, causes, n, layout=spec.layout, skip=UNAVAILABLE_METRICS)
        tables.append(metric_rows)
        if diagrams:
            if spec.task == "regression":
                figs[key] = regression_diagrams_from_part(
                    part, spec, rmse_interval=levi_rmse_interval(part, n_resamples, seed) if n_resamples else None)
            else:
                figs[key] = classification_diagrams_from_part(part, spec, model=model, group=group, classes=classes)
    metrics = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=METRIC_COLUMNS)
    dropped = pd.DataFrame([{"reason": r, "count": int(d["count"]), "rows": ", ".join(map(str, d["first"]))}
                            for r, d in summary.dropped.items()], columns=["reason", "count", "rows"])
    return Report(
        task=spec.task, metrics=metrics, diagrams=figs, source=summary.source, n_rows=summary.n_rows,
        dropped=dropped, verdicts=pd.DataFrame(verdicts) if verdicts else empty_verdicts(),
        options={"from_summary": True, "exactness": exactness, "n_bins": spec.n_bins, "level": level, "alpha": alpha,
                 "n_resamples": n_resamples, "n_simulations": n_simulations, "layout": spec.layout, "seed": seed,
                 "n_blocks": spec.n_blocks, "notes": notes, "binning": "count", "strategy": spec.strategy,
                 "pit_bins": spec.pit_bins},
    )
