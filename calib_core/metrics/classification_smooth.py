"""Smooth ECE and the kernel-smoothed reliability curve (Błasiok & Nakkiran 2023, "Smooth ECE: Principled
reliability diagrams via kernel smoothing", arXiv 2309.12236), with its test and interval.

Notation: rows (f_i, y_i), f_i ∈ [0, 1] a predicted probability (top-label: the confidence c_i = max_k p_ik, y_i =
1[ŷ_i = label]; positive class of a binary set: f_i = p_i1, y_i = 1[label = 1]), residual r_i = y_i − f_i.

Definitions (the paper's §3–4)
------------------------------
* The reflected Gaussian kernel on [0, 1]: K_σ(t, f) = Σ_{k∈ℤ} φ_σ(t − f − 2k) + φ_σ(t + f − 2k) (the Gaussian
  with its mass outside [0, 1] reflected back at the ends); ∫₀¹ K_σ(t, f) dt = 1.
* The kernel-smoothed reliability curve ŷ_σ(t) = Σ_i K_σ(t, f_i) y_i / Σ_i K_σ(t, f_i) and the density of the
  predictions δ̂_σ(t) = (1/N) Σ_i K_σ(t, f_i).
* smECE_σ = ∫₀¹ |r̂_σ(t)| δ̂_σ(t) dt = ∫₀¹ |h_σ(t)| dt with h_σ(t) = (1/N) Σ_i K_σ(t, f_i) r_i.
* smECE_σ does not increase with σ (the reflected heat kernel is a Markov semigroup, an L¹ contraction), so
  σ ↦ smECE_σ − σ has exactly one root σ*: the paper's automatic bandwidth, and **smECE = smECE_σ* = σ***.

Computation (vectorised, no loop over rows)
-------------------------------------------
The grid, the cosine transform and the relplot reproduction are in
:mod:`calib_core.metrics.classification_smooth_grid` (re-exported here).
The rows are rounded onto the nodes t_j = j/E (j = 0..E, spacing Δ = 1/E) by linear interpolation (a row at
f = (j + λ)Δ puts 1 − λ of its weight on node j and λ on node j + 1: two ``np.bincount``).  On [0, 1] the reflected
kernel is diagonal in the cosine basis, K_σ(t, f) = 1 + 2 Σ_{m≥1} exp(−π²m²σ²/2) cos(πmt) cos(πmf), so one DCT-I
of the node masses gives the coefficients once, and each bandwidth costs one multiplication and one inverse DCT-I,
O(E log E), independent of N; ∫|h| is integrated exactly for the piecewise-linear interpolant of h at the nodes.

**Error bound** (tested): both the rounding of the rows (in f) and the quadrature (in t) are linear
interpolations with error ≤ (Δ²/8) ∫|∂²K|, and ∫|∂²_t K_σ(t, f)| dt ≤ ∫_ℝ |φ_σ''| = 4φ(1)/σ² (the reflected
images tile ℝ), so |smECE_σ(grid) − smECE_σ| ≤ φ(1) (Δ/σ)² · mean_i |r_i| =: B(σ).  As smECE_σ − σ falls with
slope ≤ −1, the grid's fixed point σ̂* is within B(σ*) of σ* too.  E is a power of two chosen so that
B(σ*) ≤ ``tol`` (default 1e-6; at most 2^22 nodes — the bound reached is reported).

Conventions (``convention=``)
-----------------------------
* ``"paper"`` (default): the fixed point σ* itself (Brent's method to 1e-12 on the grid above), smECE = σ*.
* ``"relplot"``: the ``relplot`` package's ``smECE`` (1.0.3) reproduced step by step, for comparison with
  numbers computed by it: its bandwidth is a 10-step bisection of [0, 1] for the predicate
  σ < 0.001 or σ < smECE_σ that returns the upper end (so σ̂ ≥ σ*, within 2⁻¹⁰), and smECE is then evaluated
  at that σ̂ (not equal to it); each smECE_σ rounds the rows onto max(2000, round(20/σ))//2 + 1 points, convolves
  with the sampled (unnormalised) kernel on the mirrored grid, interpolates onto max(round(10/σ), 200) points
  and weighs |r̂| by the density plus 1e-4.  The two conventions differ by up to about 2⁻¹⁰ in the bandwidth
  and a few 1e-4 in the value.

Inference (:func:`smooth_inference`; the bandwidth σ̂ is conditioned on, as the bins of the binned ECE are)
----------------------------------------------------------------------------------------------------------
* **Test** of H0 "y_i ~ Bernoulli(f_i) independently" (perfect calibration).  Because smECE_σ − σ falls in σ, the
  automatic-bandwidth statistic of a null data set exceeds the observed s = σ̂* exactly when that data set's
  smECE at the fixed bandwidth s exceeds s: P(smECE* ≥ s) = P(smECE_s ≥ s).  So the p-value needs smECE at the one
  bandwidth s per null draw (no root finding): the Monte-Carlo p-value of the observed smECE_s against the null
  draws of smECE_s, on one grid of spacing ≤ s/32.  Null draws: exact Bernoulli draws row by row while N·R ≤
  ``exact_budget``; above, per grid cell (spacing Δ) the number of events is drawn as Binomial(n_c, f̄_c)
  (normal with the exact variance Σ f(1 − f) once n_c·min(f̄, 1 − f̄) ≥ 30) and split between the cell's two
  nodes at the mean position of the events (the mean is exact).
* **Perfect-calibration value** (null mean and range of smECE*): the fixed point of each of ``n_null_sigma``
  null data sets (vectorised bisection in log σ).
* **Interval** for the population smECE at bandwidth σ̂: block bootstrap of the node masses (multinomial
  re-weighting of random row blocks, in the cosine domain truncated where exp(−π²m²σ̂²/2) < 1e-17, one matrix
  product), basic (reverse-percentile) interval [2θ̂ − q_hi, 2θ̂ − q_lo] — like every L¹ distance the plug-in is
  biased upward by the noise and the basic interval subtracts the bootstrap's estimate of that bias — clipped at
  0 and extended down to 0 when the test does not reject at 1 − ``level`` (as for the binned ECE).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd

from .classification import ClassificationRows, event_rows
from .classification_smooth_draws import small_binomials
from .classification_smooth_grid import (
    SmoothECE,
    SmoothGrid,
    abs_integral,
    clean_events,
    cos_coeffs,
    error_bound,
    node_sums,
    relplot_smece_sigma,
    relplot_smooth_ece,
    smooth_fit,
    smooth_nodes,
    split_nodes,
    truncate_modes,
)

__all__ = [
    "Convention",
    "SMOOTH_CURVE_COLUMNS",
    "SmoothECE",
    "SmoothGrid",
    "error_bound",
    "smooth_ece",
    "smooth_ece_of",
    "smooth_fit",
    "smooth_ece_at",
    "smooth_reliability",
    "smooth_inference",
    "smooth_of_rows",
    "smooth_summaries",
    "rows_target",
    "relplot_smece_sigma",
]

Convention = Literal["paper", "relplot"]

#: Columns of :func:`smooth_reliability`.
SMOOTH_CURVE_COLUMNS = ["t", "curve", "density"]


# --------------------------------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------------------------------
def smooth_ece_of(
    values: np.ndarray,
    outcomes: np.ndarray,
    *,
    sigma: float | None = None,
    convention: Convention = "paper",
    tol: float = 1e-6,
) -> SmoothECE:
    """Smooth ECE of predicted probabilities f_i ∈ [0, 1] against outcomes y_i ∈ {0, 1}.

    smECE_σ = ∫₀¹ |(1/N) Σ_i K_σ(t, f_i)(y_i − f_i)| dt with the reflected Gaussian kernel K_σ, at the automatic
    bandwidth σ* (the root of smECE_σ = σ, so smECE = σ*) unless ``sigma`` is given.  ``convention="paper"``: the
    fixed point on a grid whose error bound φ(1)(Δ/σ)²·mean|y − f| is ≤ ``tol`` (``bound`` in the result);
    ``"relplot"``: relplot 1.0.3's ``smECE`` (10-step bisection, its grids).

    Parameters
    ----------
    values : ndarray of shape (n,)
        Probabilities f in [0, 1].
    outcomes : ndarray of shape (n,)
        Outcomes, 0 or 1.
    sigma : float or None, default None
        Fixed bandwidth; None: σ*.
    convention : {"paper", "relplot"}, default "paper"
        Whose computation.
    tol : float, default 1e-6
        Target of the error bound (paper convention).

    Returns
    -------
    SmoothECE
        The estimate.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).

    Błasiok, J. & Nakkiran, P. (2023). relplot: reliability diagrams and smooth ECE, Python package 1.0.3.
    https://github.com/apple/ml-calibration.
    """
    f, y = clean_events(values, outcomes)
    if sigma is not None and not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    if f.size == 0:
        return SmoothECE(float("nan"), float("nan"), float("nan"), 0, 0, convention)
    if convention == "paper":
        return smooth_fit(f, y, sigma=sigma, tol=tol)[0]
    if convention == "relplot":
        return relplot_smooth_ece(f, y, sigma)
    raise ValueError(f"convention must be 'paper' or 'relplot', not {convention!r}")


def smooth_ece_at(values: np.ndarray, outcomes: np.ndarray, sigma: float, *, tol: float = 1e-6) -> float:
    """smECE_σ at a fixed bandwidth ``sigma`` (paper convention, grid error ≤ ``tol``).

    Parameters
    ----------
    values : ndarray of shape (n,)
        Probabilities in [0, 1].
    outcomes : ndarray of shape (n,)
        Outcomes, 0 or 1.
    sigma : float
        Bandwidth.
    tol : float, default 1e-6
        Target of the error bound.

    Returns
    -------
    float
        smECE_σ.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    return smooth_ece_of(values, outcomes, sigma=sigma, tol=tol).value


def smooth_ece(
    labels: np.ndarray,
    probs: np.ndarray,
    *,
    target: Literal["top_label", "positive"] = "top_label",
    sigma: float | None = None,
    convention: Convention = "paper",
    tol: float = 1e-6,
) -> float:
    """Smooth ECE of (labels, probs): smECE = σ* with smECE_σ* = σ* (reflected Gaussian kernel).

    Top-label (confidence max_k p_k against 1[argmax = label]) or, for a binary set with ``target="positive"``,
    P(y = 1) against 1[y = 1]; see :func:`smooth_ece_of`.

    Parameters
    ----------
    labels : ndarray of shape (n,)
        Labels 0..K−1.
    probs : ndarray of shape (n,) or (n, k)
        Probabilities.
    target : {"top_label", "positive"}, default "top_label"
        The event.
    sigma : float or None, default None
        Fixed bandwidth; None: σ*.
    convention : {"paper", "relplot"}, default "paper"
        Whose computation.
    tol : float, default 1e-6
        Target of the error bound.

    Returns
    -------
    float
        The smooth ECE.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    f, y = event_rows(labels, probs, target)
    return smooth_ece_of(f, y, sigma=sigma, convention=convention, tol=tol).value


def smooth_reliability(
    values: np.ndarray,
    outcomes: np.ndarray,
    *,
    sigma: float | None = None,
    n_points: int = 201,
    tol: float = 1e-6,
) -> pd.DataFrame:
    """The kernel-smoothed reliability curve (Błasiok & Nakkiran 2023, Fig. 1) and the density of the predictions.

    At t = 0, 1/(n_points − 1), …, 1: ``curve`` ŷ_σ(t) = Σ K_σ(t, f_i) y_i / Σ K_σ(t, f_i) and ``density``
    δ̂_σ(t) = (1/N) Σ K_σ(t, f_i), at the automatic bandwidth σ* unless ``sigma`` is given.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Probabilities in [0, 1].
    outcomes : ndarray of shape (n,)
        Outcomes, 0 or 1.
    sigma : float or None, default None
        Fixed bandwidth; None: σ*.
    n_points : int, default 201
        Points t.
    tol : float, default 1e-6
        Target of the error bound.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SMOOTH_CURVE_COLUMNS`; ``attrs["sigma"]`` and ``attrs["smooth_ece"]``.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    f, y = clean_events(values, outcomes)
    t = np.linspace(0.0, 1.0, n_points)
    if f.size == 0:
        df = pd.DataFrame({"t": t, "curve": np.nan, "density": np.nan})
        df.attrs.update(sigma=float("nan"), smooth_ece=float("nan"))
        return df
    res, grid = smooth_fit(f, y, sigma=sigma, tol=tol)
    return _curve(res, grid, t)


def rows_target(rows: ClassificationRows, target: str = "top_label") -> tuple[np.ndarray, np.ndarray]:
    """(f, y) of prepared rows: top-label (confidence, 1[ŷ = y]) or positive class (p_i1, 1[y = 1]; binary).

    Parameters
    ----------
    rows : ClassificationRows
        The rows.
    target : {"top_label", "positive"}, default "top_label"
        The event.

    Returns
    -------
    f : ndarray of shape (n,)
        Probabilities of the event.
    y : ndarray of shape (n,)
        The event, 0 or 1.

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. & Weinberger, K. Q. (2017). On calibration of modern neural networks. ICML,
    PMLR 70, 1321–1330.

    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    if target == "top_label":
        return rows.confidence, rows.correct
    if target == "positive":
        if not rows.is_binary or rows.top_label_only:
            raise ValueError("the positive-class smooth ECE needs binary predictions (K = 2)")
        return rows.probs[:, 1].astype(float), (rows.labels == 1).astype(float)
    raise ValueError(f"target must be 'top_label' or 'positive', not {target!r}")


def smooth_of_rows(rows: ClassificationRows, target: str = "top_label", *, n_points: int = 201,
                   tol: float = 1e-6) -> tuple[SmoothECE, pd.DataFrame]:
    """The smooth ECE (paper convention) of prepared rows and its reliability curve, from one grid.

    Parameters
    ----------
    rows : ClassificationRows
        The rows.
    target : {"top_label", "positive"}, default "top_label"
        The event.
    n_points : int, default 201
        Points of the curve.
    tol : float, default 1e-6
        Target of the error bound.

    Returns
    -------
    estimate : SmoothECE
        The smooth ECE.
    curve : pandas.DataFrame
        :func:`smooth_reliability`'s table.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    f, y = rows_target(rows, target)
    f = np.clip(np.asarray(f, dtype=float), 0.0, 1.0)
    res, grid = smooth_fit(f, y, tol=tol)
    t = np.linspace(0.0, 1.0, n_points)
    if f.size == 0:
        return res, pd.DataFrame({"t": t, "curve": np.nan, "density": np.nan})
    return res, _curve(res, grid, t)


def smooth_summaries(rows: ClassificationRows) -> tuple[dict[str, SmoothECE], dict[str, pd.DataFrame]]:
    """Smooth ECE estimates and reliability tables of prepared rows.

    Parameters
    ----------
    rows : ClassificationRows
        The rows.

    Returns
    -------
    estimates : dict of str to SmoothECE
        ``"smooth_ece"``, and ``"smooth_ece_positive"`` for binary full-probability rows.
    tables : dict of str to pandas.DataFrame
        ``"smooth_reliability"`` (and ``"smooth_reliability_positive"``).

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).
    """
    est: dict[str, SmoothECE] = {}
    curves: dict[str, pd.DataFrame] = {}
    if rows.n == 0:
        return est, curves
    targets = [("top_label", "smooth_ece", "smooth_reliability")]
    if rows.is_binary and not rows.top_label_only:
        targets.append(("positive", "smooth_ece_positive", "smooth_reliability_positive"))
    for target, key, table in targets:
        est[key], curves[table] = smooth_of_rows(rows, target)
    return est, curves


def _curve(res: SmoothECE, grid: SmoothGrid, t: np.ndarray) -> pd.DataFrame:
    s = res.sigma if res.sigma > 0 else grid.delta
    nodes = np.linspace(0.0, 1.0, grid.size + 1)
    d = np.interp(t, nodes, grid.smoothed("mass", s))
    with np.errstate(invalid="ignore", divide="ignore"):
        curve = np.interp(t, nodes, grid.smoothed("hits", s)) / d
    curve = np.where(d > 1e-12, curve, np.nan)
    df = pd.DataFrame({"t": t, "curve": curve, "density": d})
    df.attrs.update(sigma=res.sigma, smooth_ece=res.value, bound=res.bound,
                    semantics="kernel-smoothed reliability: x = predicted probability, y = smoothed outcome "
                              "frequency; density = kernel density of the predictions (Błasiok & Nakkiran 2023)")
    return df


# --------------------------------------------------------------------------------------------------
# inference
# --------------------------------------------------------------------------------------------------
def _null_nodes(f: np.ndarray, size: int, n_draws: int, rng: np.random.Generator, exact_budget: int
                ) -> tuple[np.ndarray, str]:
    """(n_draws, size + 1) node masses of r* = y* − f with y*_i ~ Bernoulli(f_i) (see the module docstring)."""
    n = f.shape[0]
    j, lam = split_nodes(f, size)
    nodes = size + 1
    out = np.empty((n_draws, nodes))
    if n * n_draws <= exact_budget:
        chunk = max(1, 1_000_000 // max(n, 1))
        for a in range(0, n_draws, chunk):  # chunks of draws (memory), each vectorised over rows and draws
            b = min(n_draws, a + chunk)
            r = (rng.random((b - a, n)) < f).astype(float) - f
            key = np.broadcast_to(np.arange(b - a)[:, None], r.shape).ravel()
            out[a:b] = node_sums(np.tile(j, b - a), np.tile(lam, b - a), r.ravel(), size, key, b - a)
        return out, f"exact: {n_draws} draws of y*_i ~ Bernoulli(f_i) row by row"
    cnt = np.bincount(j, minlength=size).astype(float)
    s_f = np.bincount(j, weights=f, minlength=size)
    s_fl = np.bincount(j, weights=f * lam, minlength=size)
    sd = np.sqrt(np.bincount(j, weights=f * (1.0 - f), minlength=size))
    with np.errstate(invalid="ignore", divide="ignore"):
        fbar = np.where(cnt > 0, s_f / np.where(cnt > 0, cnt, 1.0), 0.0)
        pos = np.where(s_f > 0, s_fl / np.where(s_f > 0, s_f, 1.0), 0.5)
    det = node_sums(j, lam, f, size)  # Σ f per node (subtracted: r* = y* − f)
    small = np.nonzero((cnt > 0) & (cnt * np.minimum(fbar, 1.0 - fbar) < 30))[0]
    mean = cnt * fbar
    for a in range(0, n_draws, 250):  # chunks of draws (memory); every cell at once
        b = min(n_draws, a + 250)
        ev = rng.standard_normal((b - a, size), dtype=np.float32) * sd + mean  # empty cells: sd = mean = 0
        if small.size:
            ev[:, small] = small_binomials(rng, cnt[small].astype(np.int64), np.clip(fbar[small], 0.0, 1.0),
                                           b - a)  # rng.binomial(…, size=(b − a, |small|)), compiled
        blk = out[a:b]
        blk[:, :-1] = ev * (1.0 - pos)
        blk[:, -1] = 0.0
        blk[:, 1:] += ev * pos
        blk -= det
    live = int((cnt > 0).sum())
    return out, (f"{n_draws} draws of the events per grid cell (Binomial(n_c, mean f), normal with the exact "
                 f"variance where n_c·min(f̄, 1 − f̄) ≥ 30) in {live} cells of width 1/{size}")


#: Inference grid: spacing at most (the smaller of σ̂ and the null's bandwidth) / SPACING, 2^8 … 2^14 nodes.
SPACING = 8


def _inference_grid(sigma: float) -> int:
    k = math.ceil(math.log2(SPACING / max(sigma, 1e-9)))
    return int(2 ** min(max(k, 8), 14))


def smooth_inference(
    values: np.ndarray,
    outcomes: np.ndarray,
    *,
    estimate: SmoothECE | None = None,
    block: np.ndarray | None = None,
    n_blocks: int = 200,
    boot_weights: np.ndarray | None = None,
    n_boot: int = 1000,
    n_null: int = 1000,
    n_null_sigma: int = 200,
    level: float = 0.95,
    exact_budget: int = 2_000_000,
    rng: np.random.Generator | None = None,
    centred_test: bool = False,
) -> dict:
    """Test, perfect-calibration value and interval of the smooth ECE (module docstring).

    The bandwidth σ̂ is conditioned on.  ``block`` / ``boot_weights``: the caller's random row blocks and multinomial
    block weights (shared with the other statistics); blocks are merged modulo ``n_blocks`` for this statistic.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Probabilities in [0, 1].
    outcomes : ndarray of shape (n,)
        Outcomes, 0 or 1.
    estimate : SmoothECE or None, default None
        The point estimate, when already computed.
    block : ndarray of int, shape (n,), or None, default None
        Row blocks of the bootstrap.
    n_blocks : int, default 200
        Blocks.
    boot_weights : ndarray of shape (n_boot, n_blocks) or None, default None
        Multinomial block weights.
    n_boot : int, default 1000
        Bootstrap replicates.
    n_null : int, default 1000
        Null draws of the test.
    n_null_sigma : int, default 200
        Null data sets whose fixed points give the perfect-calibration value.
    level : float, default 0.95
        Two-sided level of the interval.
    exact_budget : int, default 2000000
        Largest N·draws drawn row by row.
    rng : numpy.random.Generator or None, default None
        Random numbers.
    centred_test : bool, default False
        Test by the centred bootstrap instead of the null draws (for dependent rows, with cluster ``block`` and
        ``boot_weights``): D = ∫|r̂_σ̂| against D* = ∫|r*_σ̂ − r̂_σ̂| of every replicate, r the kernel-smoothed
        residual curve at the bandwidth σ̂ (Hall & Wilson 1991), p = (1 + #{D* ≥ D}) / (1 + B).

    Returns
    -------
    dict
        ``value``, ``sigma``, ``p_value``, ``p_mc_se``, ``p_method``, ``null`` (the null draws of smECE*),
        ``null_mean``, ``null_low``, ``null_high``, ``ci_low``, ``ci_high``, ``interval`` (how), ``note``.

    References
    ----------
    Błasiok, J. & Nakkiran, P. (2023). Smooth ECE: principled reliability diagrams via kernel smoothing.
    arXiv:2309.12236 (ICLR 2024).

    Phipson, B. & Smyth, G. K. (2010). Permutation p-values should never be zero: calculating exact p-values
    when permutations are randomly drawn. Statistical Applications in Genetics and Molecular Biology 9(1), 39.

    Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary observations. Annals of
    Statistics 17(3), 1217–1241.
    """
    f, y = clean_events(values, outcomes)
    rng = np.random.default_rng(0) if rng is None else rng
    n = f.shape[0]
    est = estimate if estimate is not None else smooth_ece_of(f, y)
    s = float(est.sigma)
    out = {"value": est.value, "sigma": s}
    if n == 0 or not np.isfinite(s) or s <= 0:
        out.update(p_value=1.0 if n else np.nan, p_mc_se=0.0, p_method="all residuals are 0", null=np.array([]),
                   null_mean=np.nan, null_low=np.nan, null_high=np.nan, ci_low=0.0, ci_high=0.0, interval="",
                   note="")
        return out
    # one grid for the observed value, the null and the bootstrap: spacing ≤ min(σ̂, null scale)/SPACING
    probe, _ = _null_nodes(f, 2 ** 12, 1, rng, exact_budget)
    s0 = SmoothGrid(f, y, 2 ** 12, resid=probe[0], mean_abs_residual=float(2.0 * np.mean(f * (1.0 - f)))).fixed_point()
    size = _inference_grid(min(s, s0) if s0 > 0 else s)
    nodes = size + 1
    delta = 1.0 / size
    grid = SmoothGrid(f, y, size)
    t_obs = grid.smece(s)
    # ---- null --------------------------------------------------------------------------------------------
    u_null, how = _null_nodes(f, size, n_null, rng, exact_budget)
    a_null = cos_coeffs(u_null)
    m_s = truncate_modes(s, nodes)
    t_null = np.empty(n_null)
    for a in range(0, n_null, 500):
        b = min(n_null, a + 500)
        t_null[a:b] = abs_integral(smooth_nodes(a_null[a:b, :m_s], s, n, nodes), delta)
    tol = 1e-12 * max(abs(t_obs), 1e-300)
    count = int(np.count_nonzero(t_null >= t_obs - tol))
    p = (1.0 + count) / (1.0 + n_null)
    # null law of smECE* itself: vectorised bisection in log σ on a subset of the draws
    k = int(min(n_null_sigma, n_null))
    lo = np.full((k, 1), math.log(max(s0, delta) / 8.0))
    hi = np.full((k, 1), math.log(max(s0, delta) * 8.0))
    for _ in range(16):  # log-bracket [s0/8, 8·s0] halved 16 times: relative precision ≈ 6e-5
        mid = 0.5 * (lo + hi)
        val = abs_integral(smooth_nodes(a_null[:k], np.exp(mid), n, nodes), delta)[:, None]
        above = val >= np.exp(mid)
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    sig_null = np.exp(0.5 * (lo + hi)).ravel()
    a_tail = (1.0 - level) / 2.0
    out.update(p_value=float(p), p_mc_se=float(math.sqrt(p * (1 - p) / (n_null + 1))),
               p_method=f"Monte Carlo ({n_null} null draws of smECE at σ̂ = {s:.3g}; ≡ smECE* ≥ σ̂)",
               null=sig_null, null_mean=float(sig_null.mean()),
               null_low=float(np.quantile(sig_null, a_tail)), null_high=float(np.quantile(sig_null, 1 - a_tail)))
    # ---- bootstrap (fixed σ̂) -----------------------------------------------------------------------------
    if block is None:
        block = rng.integers(0, n_blocks, size=n) if n > n_blocks else np.arange(n)
    n_b = int(min(n_blocks, int(block.max()) + 1)) if n else 0
    blk = block % n_b
    j, lam = split_nodes(f, size)
    u_blocks = node_sums(j, lam, y - f, size, blk, n_b)
    n_per = np.bincount(blk, minlength=n_b).astype(float)
    a_blocks = cos_coeffs(u_blocks)[:, :m_s]
    if boot_weights is None or boot_weights.shape[1] != n_b:
        picks = rng.integers(0, n_b, size=(n_boot, n_b)) + np.arange(n_boot)[:, None] * n_b
        w = np.bincount(picks.ravel(), minlength=n_boot * n_b).reshape(n_boot, n_b).astype(float)
    else:
        w = boot_weights[:n_boot]
    boot = np.empty(w.shape[0])
    centred = np.empty(w.shape[0])
    curve = smooth_nodes(a_blocks.sum(axis=0)[None, :], s, float(n_per.sum()), nodes) if centred_test else None
    for a in range(0, w.shape[0], 250):
        b = min(w.shape[0], a + 250)
        coeffs = w[a:b] @ a_blocks
        rep = smooth_nodes(coeffs, s, (w[a:b] @ n_per)[:, None], nodes)
        boot[a:b] = abs_integral(rep, delta)
        if curve is not None:
            centred[a:b] = abs_integral(rep - curve, delta)
    if curve is not None:  # dependent rows: the centred bootstrap of the smoothed residual curve replaces the null's
        d_obs = float(abs_integral(curve, delta)[0])
        p = float((1.0 + np.count_nonzero(centred >= d_obs)) / (1.0 + centred.size))
        out.update(p_value=p, p_mc_se=float(math.sqrt(p * (1 - p) / (centred.size + 1))),
                   p_method=f"centred cluster bootstrap of the smoothed residual curve at σ̂ = {s:.3g} "
                            f"({centred.size} replicates over {n_b} clusters)")
    q_lo, q_hi = np.quantile(boot, [a_tail, 1 - a_tail])
    # hull of the basic interval (bias-corrected; near 0 all replicates lie above the plug-in and it ends below it)
    # and the percentile interval (an upper bound of E smECE, at least the population value): holds the plug-in
    lo_ci = max(0.0, min(2 * t_obs - q_hi, q_lo))
    hi_ci = max(0.0, 2 * t_obs - q_lo, q_hi)
    how_ci = (f"hull of the basic and percentile bootstrap at the chosen bandwidth σ̂ ({w.shape[0]} replicates over "
              f"{n_b} {'clusters' if centred_test else 'random row blocks'})")
    if p > 1.0 - level:
        lo_ci, how_ci = 0.0, how_ci + ", extended to 0 (test not significant)"
    out.update(ci_low=lo_ci, ci_high=hi_ci, interval=how_ci,
               note=(f"bandwidth σ̂ = {s:.3g} (the fixed point smECE_σ = σ); null: {how}; test, null and interval on "
                     f"a grid of {nodes} nodes"))
    return out
