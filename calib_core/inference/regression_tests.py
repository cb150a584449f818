"""Regression tests, one family of statistics at a time: each function fills the records of its statistics with a
p-value, a reference (``perfect``) and, where it has one, an interval.

* :func:`pit_tests` — PIT uniformity: the exact Kolmogorov–Smirnov test and band, the calibration-curve statistics
  (exact multinomial nulls), miscalibration area and PIT entropy (N-only nulls).
* :func:`z_tests` — the standardised errors z = (y − μ)/σ: mean z (t-test or CLT), std z (χ² or gamma), skewness and
  kurtosis (Gaussian only), the reliability score.
* :func:`zms_tests` — ZMS and mean log z² (Pernot 2023–24).
* :func:`coverage_tests` — central-interval coverage: exact binomial (Poisson-binomial for finite ensembles).
* :func:`score_references` — the expectation of the proper scores under perfect calibration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from ..base import significance as sig
from ..base.regression import LOG_2PI, norm_cdf, norm_pdf
from ..base.report import PROPER_SCORE
from ..metrics.regression import RegressionRows
from ..metrics.regression_tails import (
    LOG_CHI2_1_MEAN,
    LOG_CHI2_1_VAR,
    mean_log_z2_test,
    simulated_log_z2_null,
    zms_test,
)
from ..metrics.regression_wis import gaussian_expected_wis, wis_parts
from .regression_bootstrap import smooth_stats
from .regression_nulls import NullModel, curve_null, ks_sf_ppf, kstwo_mean, kurtosis_test, n_only_null, skew_test
from .regression_verdict import metric_kind

__all__ = ["pit_tests", "z_tests", "zms_tests", "coverage_tests", "score_references"]


_SCORE_SAMPLE = 4_000


def pit_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, levels: np.ndarray,
              n_null: int, level: float) -> None:
    """PIT uniformity: tests, references and intervals of the statistics of the PIT u = F(y), uniform under H0.

    Kolmogorov–Smirnov: exact law up to N = 20,000 (Stephens-corrected limit above), reference E D_N, interval the
    KS band D ± d_α (distribution-free, coverage ≥ level).  calibration_rmse and the l2 QCE: exact multinomial
    nulls of uniform PITs on the grid, debiased values from p̂(1 − p̂)/(N − 1) per level (clipped at 0), KS-band
    intervals.
    Miscalibration area and PIT entropy: nulls that depend on N only (simulated once per N, extrapolated above
    2,000); the area gets the KS band, the spacing entropy no interval.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    levels : ndarray
        The level grid of calibration_rmse.
    n_null : int
        Null draws of the multinomial curve null.
    level : float
        Two-sided level of the intervals.

    References
    ----------
    .. [1] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    .. [2] Utpala, S. & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression models.
       *arXiv:2002.12860*.
    .. [3] Stephens, M. A. (1970). Use of the Kolmogorov–Smirnov, Cramér–von Mises and related statistics without
       extensive tables. *Journal of the Royal Statistical Society B* 32(1), 115–122.
    """
    n = r.n
    v_ks = values.get("max_calibration_deviation", 0.0)
    p_ks, d_alpha, ks_name = ks_sf_ppf(v_ks, n, level)
    band = "KS band (distribution-free, coverage ≥ level)"
    if "max_calibration_deviation" in values:
        v = v_ks
        rec_ks = rec["max_calibration_deviation"]
        rec_ks.update(
            p_value=p_ks, p_mc_se=0.0, test=ks_name,
            perfect=kstwo_mean(n), ci_low=max(0.0, v - d_alpha), ci_high=min(1.0, v + d_alpha), interval=band,
        )
    _curve_tests(rec, values, r, levels, n, n_null, d_alpha, band)
    for name in ("miscalibration_area", "pit_entropy"):
        if name in values:
            draws, how = n_only_null(name, n)
            alt = "less" if name == "pit_entropy" else "greater"
            mc = sig.monte_carlo_p(values[name], draws, alt)
            rec[name].update(p_value=mc.p, p_mc_se=mc.se, perfect=float(draws.mean()),
                             test=f"Monte Carlo ({how})")
    if "miscalibration_area" in values:
        v = values["miscalibration_area"]
        rec["miscalibration_area"].update(ci_low=max(0.0, v - d_alpha), ci_high=min(1.0, v + d_alpha), interval=band)
    if "pit_entropy" in values:
        rec["pit_entropy"]["note"] = "no interval: the spacing estimator has no cheap resampling form"


def _curve_tests(rec, values, r, levels, n, n_null, d_alpha, band) -> None:
    """calibration_rmse (the level grid) and the l2 QCE (levels j/100): exact multinomial nulls."""
    want = [k for k in ("calibration_rmse", "quantile_calibration_error") if k in values]
    if not want:
        return
    lev = np.asarray(levels, dtype=float)
    qce_lev = np.arange(1, 101) / 100.0
    null = curve_null(n, tuple(lev.tolist()), n_null)
    # observed curve → debiased (unbiased for the population curve: E p̂(1 − p̂) = G(1 − G)(N − 1)/N)
    us = r.u_sorted
    obs = {"calibration_rmse": (lev, np.searchsorted(us, lev, side="right") / n),
           "quantile_calibration_error": (qce_lev, np.searchsorted(us, qce_lev, side="right") / n)}
    for k in want:
        mc = sig.monte_carlo_p(values[k], null[k], "greater")
        grid, ph = obs[k]
        sq = np.mean((ph - grid) ** 2 - ph * (1 - ph) / (n - 1))
        v = values[k]
        deb = float(np.sqrt(max(sq, 0.0))) if k == "calibration_rmse" else float(max(sq, 0.0))
        if k == "calibration_rmse":
            ci = (max(0.0, v - d_alpha), min(1.0, v + d_alpha))
        else:
            ci = (max(0.0, np.sqrt(v) - d_alpha) ** 2, min(1.0, np.sqrt(v) + d_alpha) ** 2)
        rec[k].update(p_value=mc.p, p_mc_se=mc.se, perfect=float(null[k].mean()), debiased=deb,
                      test="Monte Carlo (exact multinomial null of uniform PITs on the grid)",
                      ci_low=ci[0], ci_high=ci[1], interval=band)
        if sq < 0:
            rec[k]["note"] = ("debiased value clipped at 0: the squared deviations are no larger than the binomial "
                              "noise p̂(1 − p̂)/(N − 1) a perfectly calibrated forecaster shows at this N")


def z_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, null: NullModel,
            level: float) -> None:
    """Tests of the standardised errors z = (y − μ)/σ, written into their records.

    mean z: studentised (a wrong σ does not pass for a bias): exact t-test for Gaussians, else a normal test
    centred and scaled by the exact per-row null moments (spread at least the observed one); t interval.  std z:
    exact χ²_{N−1} for Gaussians, else the gamma law moment-matched to the per-row null moments.  Skewness and
    excess kurtosis (Gaussians only; descriptive otherwise): skewness, the larger p-value of D'Agostino and of the
    bootstrap-t test that its interval inverts (Hall 1992), so that heavy tails alone are not read as skewness and
    the test never rejects a 0 its interval contains; kurtosis, Anscombe–Glynn.  Reliability score: Monte Carlo against
    N(0, 1) z (Gaussians only).

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    null : NullModel
        The layout's null model.
    level : float
        Two-sided level of the mean-z interval.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N. & Fetaya, E. (2019). Evaluating and calibrating uncertainty prediction
       in regression tasks. *arXiv:1905.11659*.
    .. [2] D'Agostino, R. B. (1970). Transformation to normality of the null distribution of g1. *Biometrika*
       57(3), 679–681.
    .. [3] Anscombe, F. J. & Glynn, W. J. (1983). Distribution of the kurtosis statistic b2 for normal samples.
       *Biometrika* 70(1), 227–234.
    .. [4] Camporeale, E. & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. *International Journal for Uncertainty Quantification* 11(4), 81–94.
    .. [5] Hall, P. (1992). *The Bootstrap and Edgeworth Expansion*. Springer.
    """
    nz = int(r.z_finite.shape[0])
    if nz < 3:
        return
    m1, m2, m3, m4 = (np.broadcast_to(np.asarray(x, dtype=float), (nz,)) for x in null.z_moments())
    ok = np.isfinite(m1) & np.isfinite(m2) & np.isfinite(m4)
    if "z_mean" in values:
        # studentised (the observed spread, not the nominal 1): a wrong σ does not masquerade as a bias
        v = values["z_mean"]
        s = values.get("z_std", np.nan) * np.sqrt(nz / (nz - 1.0))
        se = s / np.sqrt(nz)
        if null.exact_gaussian:
            ref = 0.0
            p = float(2 * special.stdtr(nz - 1, -abs(v) / se)) if se > 0 else float("nan")
            test = "t-test, exact (N − 1 d.f.)"
        else:
            # the larger of the null spread (with ties, e.g. rain, the null law of z is heavy-tailed and the
            # observed s understates it) and the observed one (a too small σ does not pass for a bias)
            ref = float(m1[ok].mean())
            null_se = float(np.sqrt(np.sum(m2[ok] - m1[ok] ** 2))) / nz
            use = max(null_se, se) if np.isfinite(se) else null_se
            p = sig.normal_p((v - ref) / use) if use > 0 else float("nan")
            test = "normal (CLT; centre and spread from the exact per-row null moments, spread at least the observed)"
        t = float(special.stdtrit(nz - 1, 0.5 + level / 2)) * se
        rec["z_mean"].update(p_value=float(p), p_mc_se=0.0, test=test, perfect=ref, ci_low=v - t, ci_high=v + t,
                             interval="t interval")
    if "z_std" in values:
        v = values["z_std"]
        s_obs = nz * v * v  # Σ(z − z̄)²
        if null.exact_gaussian:
            cdf = float(special.chdtr(nz - 1, s_obs))
            p = min(1.0, 2 * min(cdf, float(special.chdtrc(nz - 1, s_obs))))
            ref = float(np.exp(0.5 * np.log(2.0 / nz) + special.gammaln(nz / 2) - special.gammaln((nz - 1) / 2)))
            test = "χ² test, exact (N − 1 d.f.)"
        else:
            mm1, mm2, mm4 = m1[ok], m2[ok], m4[ok]
            var_sum = float(np.sum(mm2 - mm1**2))
            mean_s = float(np.sum(mm2)) - (var_sum + float(np.sum(mm1)) ** 2) / nz
            var_s = float(np.sum(mm4 - mm2**2))
            p = sig.gamma_p(s_obs, mean_s, var_s)
            ref = float(np.sqrt(max(mean_s, 0) / nz))
            test = "gamma (moment-matched to the exact per-row null moments)"
        rec["z_std"].update(p_value=float(p), p_mc_se=0.0, test=test, perfect=ref)
    for key, fn, ref in (("z_skewness", skew_test, 0.0), ("z_excess_kurtosis", kurtosis_test, -6.0 / (nz + 1))):
        if key not in values:
            continue
        boot_p = rec[key]["p_value"]  # skewness: the bootstrap-t test its interval inverts (regression_bootstrap)
        if null.exact_gaussian:
            # skewness: D'Agostino (its law when z ~ N(0, 1)) and the studentised test of the same statistic, the
            # larger p: heavy tails alone (which inflate the skewness's spread far beyond its Gaussian-null
            # spread) do not pass for skewness, and test and interval agree.  Kurtosis: Anscombe–Glynn alone —
            # heavy tails are what it is there to see (where its interval cannot follow, the note says so)
            p, se = fn(values[key], nz), 0.0
            name = "D'Agostino" if key == "z_skewness" else "Anscombe–Glynn"
            if np.isfinite(boot_p):
                name = f"the larger p of {name} (Gaussian null) and the bootstrap-t test its interval inverts"
                if boot_p > p:
                    p, se = boot_p, rec[key]["p_mc_se"]
            rec[key].update(p_value=p, p_mc_se=se, perfect=ref, test=name)
        else:
            rec[key].update(p_value=np.nan, p_mc_se=np.nan)
            rec[key]["note"] = "no test: its null depends on the predictive shape (descriptive for this layout)"
    if "reliability_score" in values:
        if null.exact_gaussian:
            draws, how = n_only_null("reliability_score", nz)
            mc = sig.monte_carlo_p(values["reliability_score"], draws, "greater")
            rec["reliability_score"].update(p_value=mc.p, p_mc_se=mc.se, perfect=float(draws.mean()),
                                            test=f"Monte Carlo ({how.replace('uniform PITs', 'N(0, 1) z')})",
                                            note="no interval (energy-distance form has no cheap resampling form)")
        else:
            rec["reliability_score"]["note"] = "no test: RS compares z with a Gaussian (descriptive for this layout)"


def zms_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, null: NullModel, sums,
              names, boot, g, level, rng) -> None:
    """ZMS (mean z²) and mean log z² (:mod:`calib_core.metrics.regression_tails`, Pernot 2023–24).

    ZMS: Σz² against the gamma law with the null's exact per-row moments (χ²_N for Gaussians), reference
    mean E z² (1); interval bootstrap-t on log ZMS with the delta-method s.e. √((m₄ − m₂²)/N)/m₂.
    mean log z²: Gaussian null exact moments (−1.2704, π²/2), normal test on the mean; other layouts a reference
    simulated from the calibrated forecaster (20,000 random rows, one draw each; its Monte-Carlo variance is added
    to the test's); interval bootstrap-t from the block sums of log z² and its square (BCa covered 0.933 at N = 300,
    300 Gaussian data sets).

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    null : NullModel
        The layout's null model.
    sums : ndarray of shape (g, q)
        Per-block sums (:func:`~calib_core.inference.regression_bootstrap.block_table`).
    names : list of str
        Their names.
    boot : dict of str to ndarray
        Bootstrap replicates (:func:`~calib_core.inference.regression_bootstrap.smooth_stats`).
    g : int
        Number of blocks.
    level : float
        Two-sided level of the intervals.
    rng : numpy.random.Generator
        Random stream (the simulated reference of mean log z²).

    References
    ----------
    .. [1] Pernot, P. (2023). Calibration in machine learning uncertainty quantification: beyond consistency to
       target adaptivity. *APL Machine Learning* 1, 046121.
    .. [2] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. *arXiv:2402.10043*.
    """
    nz = int(r.z_finite.shape[0])
    if "zms" in values and nz >= 2 and np.isfinite(values["zms"]):
        m1, m2, m3, m4 = (np.broadcast_to(np.asarray(x, dtype=float), (nz,)) for x in null.z_moments())
        ok = np.isfinite(m2) & np.isfinite(m4)
        mean_s, var_s = float(np.sum(m2[ok])), float(np.sum(m4[ok] - m2[ok] ** 2))
        p = zms_test(values["zms"] * nz, mean_s, var_s)
        exact = null.exact_gaussian
        row = rec["zms"]
        row.update(p_value=p, p_mc_se=0.0, perfect=mean_s / max(int(ok.sum()), 1),
                   test="χ² test, exact (N d.f.): N·ZMS ~ χ²_N" if exact else
                   "gamma (moment-matched to the exact per-row null moments of z², z⁴)")
        if "se_log_zms" in boot:
            full = smooth_stats(sums.sum(axis=0, keepdims=True), names, r._gaussian, ())
            lo, hi = sig.studentized_interval(full["log_zms"], full["se_log_zms"], boot["log_zms"],
                                              boot["se_log_zms"], level)
            with np.errstate(over="ignore", invalid="ignore"):
                lo, hi = float(np.exp(lo[0])), float(np.exp(hi[0]))
            if np.isfinite(lo) and np.isfinite(hi):
                where = "block bootstrap" if g < r.n else "bootstrap"
                row.update(ci_low=lo, ci_high=hi, interval=f"bootstrap-t ({where}, delta-method s.e.) on log ZMS")
    if "mean_log_z2" in values and np.isfinite(values["mean_log_z2"]):
        lz, lz_ok = r.__dict__.get("_log_z2") or (np.empty(0), None)
        n_l = int(lz.size)
        row = rec["mean_log_z2"]
        if n_l < 2:
            return
        if null.exact_gaussian:
            ref, var_row, ref_var = LOG_CHI2_1_MEAN, LOG_CHI2_1_VAR, 0.0
            test = "normal, exact null moments of log χ²₁ (mean ψ(½) + log 2, variance π²/2)"
        else:
            ref, var_row, ref_var = simulated_log_z2_null(r, rng)
            test = ("normal; reference simulated from the calibrated forecaster (20,000 random rows, one draw each), "
                    "its Monte-Carlo error added")
        row.update(p_value=mean_log_z2_test(values["mean_log_z2"], n_l, ref, var_row, ref_var), p_mc_se=0.0,
                   perfect=ref, perfect_se=float(np.sqrt(ref_var)), test=test)
        if "se_mean_log_z2" in boot:
            full = smooth_stats(sums.sum(axis=0, keepdims=True), names, r._gaussian, ())
            lo, hi = sig.studentized_interval(full["mean_log_z2"], full["se_mean_log_z2"], boot["mean_log_z2"],
                                              boot["se_mean_log_z2"], level)
            if np.isfinite(lo[0]) and np.isfinite(hi[0]):
                where = "block bootstrap" if g < r.n else "bootstrap"
                row.update(ci_low=float(lo[0]), ci_high=float(hi[0]), interval=f"bootstrap-t ({where})")
        if lz_ok is not None:
            row["note"] = f"{nz - n_l:,} row(s) with z = 0 exactly left out (log 0 = −∞)"


def coverage_tests(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, null: NullModel,
                   coverages, n_null: int, level: float, rng: np.random.Generator) -> None:
    """Coverage of the central c-intervals: exact binomial test against c (Poisson-binomial, Monte Carlo, for
    ensembles, whose per-row coverage probability is finite-M), Clopper–Pearson interval.

    Quantile sets: :func:`~calib_core.inference.regression_stated.stated_tests` then replaces these tests by the
    bracketed exact binomial of the stated pairs and leaves the other coverages without a p-value.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    null : NullModel
        The layout's null model (its coverage probabilities).
    coverages : sequence of float
        Central-interval levels c.
    n_null : int
        Null draws of the Poisson-binomial test.
    level : float
        Two-sided level of the intervals.
    rng : numpy.random.Generator
        Random stream.

    References
    ----------
    .. [1] Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
       of the binomial. *Biometrika* 26(4), 404–413.
    .. [2] Kuleshov, V., Fenner, N. & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. *ICML*.
    """
    n = r.n
    for c in coverages:
        key = f"coverage_{100 * c:g}"
        if key not in values:
            continue
        k = int(round(values[key] * n))
        probs = null.coverage_prob(c)
        lo_c, hi_c = sig.clopper_pearson(k, n, level)
        if np.ndim(probs) == 0:
            p, se, test, ref = sig.binomial_test(k, n, float(probs)), 0.0, "exact binomial", float(probs)
        else:
            mc = sig.poisson_binomial_test(k, probs, n_draws=n_null, rng=rng)
            p, se, ref = mc.p, mc.se, float(np.mean(probs))
            test = "exact binomial" if mc.n_draws == 0 else "Poisson-binomial, Monte Carlo"
            test += f" (finite-M ensemble coverage, mean {ref:.4f})"
        rec[key].update(p_value=p, p_mc_se=se, test=test, perfect=ref, ci_low=lo_c, ci_high=hi_c,
                        interval="Clopper–Pearson (exact)")


def score_references(rec: dict[str, dict[str, Any]], values: Mapping[str, float], r: RegressionRows, coverages,
                     rng: np.random.Generator) -> None:
    """The proper scores' expectation under perfect calibration (``perfect``): a reference, not a test.

    Gaussian: exact, E NLL = ½ log 2π + mean log σ + ½, E CRPS = mean σ / √π, the interval score
    σ̄ (2k + (4/α) E(Z − k)₊) with k = Φ⁻¹(½ + c/2), α = 1 − c, and the WIS σ̄ Σ_τ φ(Φ⁻¹(τ))/(K + ½) over its
    levels (E ρ_τ(σZ − σΦ⁻¹(τ)) = σ φ(Φ⁻¹(τ))).  Other layouts: the calibrated forecaster's draws
    scored on 4,000 random rows (with replacement, one draw each), with their Monte-Carlo standard error in
    ``perfect_se``.

    Parameters
    ----------
    rec : dict of str to dict
        One record per statistic (updated).
    values : mapping of str to float
        The point values.
    r : RegressionRows
        The rows.
    coverages : sequence of float
        Central-interval levels (interval scores).
    rng : numpy.random.Generator
        Random stream.

    References
    ----------
    .. [1] Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation.
       *Journal of the American Statistical Association* 102(477), 359–378.
    """
    if r._gaussian:
        sig_ = r.sigma
        ref = {"nll": float(0.5 * LOG_2PI + np.mean(np.log(sig_)) + 0.5), "crps": float(sig_.mean() / np.sqrt(np.pi))}
        for c in coverages:
            k = float(special.ndtri(0.5 + c / 2.0))
            a = 1.0 - c
            tail = float(norm_pdf(k)) - k * (1.0 - float(norm_cdf(k)))  # E(Z − k)₊
            ref[f"interval_score_{100 * c:g}"] = float(sig_.mean()) * (2 * k + (4.0 / a) * tail)
        if "wis" in values:  # E ρ_τ(y − q_τ) = σ φ(Φ⁻¹(τ)) at every level of the WIS
            ref["wis"] = float(gaussian_expected_wis(float(sig_.mean())))
        for k, v in ref.items():
            if k in rec:
                rec[k].update(perfect=v, perfect_se=0.0, test="reference: exact expectation under H0")
        return
    # other layouts: score a calibrated forecaster's draws on random rows (with replacement), one draw each
    n = r.n
    take = np.sort(rng.integers(0, n, size=_SCORE_SAMPLE))
    sub = r.dist.take(take)
    keys = [k for k in values if metric_kind(k) == PROPER_SCORE]
    y_star, d_star = sub.calibrated_draw(r.y[take], rng)
    rs = RegressionRows(y_star, d_star, pit_seed=int(rng.integers(2**31)))
    scores = {"nll": rs.neg_logpdf, "crps": rs.crps}
    for c in coverages:
        lo, hi = d_star.interval(c)
        scores[f"interval_score_{100 * c:g}"] = (hi - lo) + (2.0 / (1.0 - c)) * (
            np.maximum(lo - y_star, 0) + np.maximum(y_star - hi, 0))
    if "wis" in keys:
        scores["wis"] = wis_parts(y_star, d_star).wis
    for k in keys:
        if k in scores:
            x = np.asarray(scores[k], dtype=float)
            rec[k].update(perfect=float(x.mean()), perfect_se=float(x.std(ddof=1) / np.sqrt(x.size)),
                          test=f"reference: simulated under H0 ({x.size:,} random rows, one draw each)")
