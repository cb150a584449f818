"""Built-in examples (regression and classification) that need no network and no files.

* :func:`diabetes_example` — a real data set (scikit-learn's bundled *diabetes* data, 442 patients,
  10 standardised baseline features, target = disease progression one year later) with a
  probabilistic model trained on the fly, as a :class:`~calib_core.base.predictions.PredictionSet` in any
  of the three distribution layouts (Gaussian, quantiles, samples) and with a ``split`` column.
* :func:`digits_example` — a classification example: an over-confident, weakly regularised multinomial
  logistic regression trained now on part of scikit-learn's bundled *digits* data (8×8 images, 10
  classes), with its logits on the held-out images (Guo et al. 2017's setting in miniature).
* :func:`breast_cancer_example` — a binary classification example (scikit-learn's *breast cancer*
  data, positive class "malignant") with the positive-class logit of an over-confident logistic
  regression, for the positive-class versus top-label reliability semantics.
* :func:`levi_synthetic` — the synthetic experiment of Levi et al. (2019, §4.1): x ~ U[0.1, 1],
  y ~ N(x, x²), with two forecasters in one set (``model`` column): one that knows the true σ = x
  and one whose σ ~ U[1, 10] is random noise.  Under the Kuleshov quantile-calibration curve the
  random one can be recalibrated to look perfect; Levi's RMSE-vs-RMV diagram and ENCE expose it.

:func:`diabetes_frame` / :func:`levi_frame` / :func:`digits_frame` / :func:`breast_cancer_frame` return the
same predictions as a DataFrame in the prediction-file format (``y``, ``mean``/``std``, ``q0.05``…,
``sample_0``…, ``label``, ``logit_0``…, ``split``, ``model``, ``x*``), e.g. for a "download the
example" button or for loader round trips.

Everything is seeded: the same arguments give bit-identical output.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, Ridge

from ..base.classification import softmax
from ..base.predictions import PredictionSet
from ..base.regression import Gaussian, PredictiveDistribution, QuantileSet, SampleSet, norm_cdf

__all__ = [
    "DIABETES_LEVELS",
    "LEVI_MODELS",
    "breast_cancer_example",
    "breast_cancer_frame",
    "diabetes_example",
    "diabetes_frame",
    "digits_example",
    "digits_frame",
    "levi_synthetic",
    "levi_frame",
    "mixture_quantiles",
]

Layout = Literal["gaussian", "quantile", "sample"]
#: Plural spellings accepted as well (``"quantiles"``, ``"samples"``).
_LAYOUT_ALIASES = {"gaussian": "gaussian", "quantile": "quantile", "quantiles": "quantile", "sample": "sample",
                   "samples": "sample"}

#: Quantile levels of the ``layout="quantile"`` diabetes example.
DIABETES_LEVELS = np.array([0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975])

# E[log χ²₁] = ψ(½) + log 2 = −γ − log 2: log ε² underestimates log σ² by this much on average
# (Harvey 1976, "Estimating regression models with multiplicative heteroscedasticity").
_LOG_CHI2_1_MEAN = float(-np.euler_gamma - np.log(2.0))


def mixture_quantiles(
    means: np.ndarray, stds: np.ndarray, levels: np.ndarray, n_iter: int = 60
) -> np.ndarray:
    """Quantiles of equally weighted Gaussian mixtures, one mixture per row.

    Row i is the mixture (1/M) Σ_m N(μ_im, σ_im²); its CDF F_i(q) = (1/M) Σ_m Φ((q − μ_im)/σ_im)
    is inverted at each level τ by vectorised bisection on [min_m(μ − 8σ), max_m(μ + 8σ)]
    (all rows and levels at once; ``n_iter`` halvings give a bracket of width 2^−n_iter of the start).

    Parameters
    ----------
    means, stds : ndarray of shape (N, M)
        The components' means and standard deviations.
    levels : ndarray of shape (L,)
        Quantile levels in (0, 1).
    n_iter : int, default 60
        Bisection steps.

    Returns
    -------
    ndarray of shape (N, L)
        F_i⁻¹(τ_l), non-decreasing along each row.

    Examples
    --------
    >>> import numpy as np
    >>> from calib_core.data.examples import mixture_quantiles
    >>> q = mixture_quantiles(np.array([[-1.0, 1.0]]), np.array([[0.5, 0.5]]), np.array([0.25, 0.5, 0.75]))
    >>> (np.round(q, 3) + 0.0).tolist()  # the two components barely overlap: quartiles at their means
    [[-1.0, 0.0, 1.0]]
    """
    means = np.asarray(means, dtype=float)
    stds = np.asarray(stds, dtype=float)
    levels = np.asarray(levels, dtype=float)
    lo = np.broadcast_to((means - 8.0 * stds).min(axis=1)[:, None], (means.shape[0], levels.size)).copy()
    hi = np.broadcast_to((means + 8.0 * stds).max(axis=1)[:, None], (means.shape[0], levels.size)).copy()
    mu, sd = means[:, None, :], stds[:, None, :]
    for _ in range(n_iter):  # loop over bisection steps, not rows
        mid = 0.5 * (lo + hi)
        below = norm_cdf((mid[:, :, None] - mu) / sd).mean(axis=2) < levels
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return np.maximum.accumulate(0.5 * (lo + hi), axis=1)


def _diabetes_members(
    n_members: int, n_folds: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """Out-of-fold member predictions (μ_im, σ_im) for every diabetes row.

    Rows are split in ``n_folds`` folds; for each fold, ``n_members`` members are trained on
    bootstrap resamples of the other folds.  A member is a gradient-boosting mean model plus a
    ridge log-variance model fitted to its in-bag log squared residuals with the Harvey (1976) bias
    correction σ² = exp(ĝ(x) − E[log χ²₁]).  In-bag residuals of a boosted model are smaller than
    out-of-sample ones, so the predicted σ is somewhat over-confident — a realistic case to diagnose.
    """
    data = load_diabetes(as_frame=True)
    X = data.data.to_numpy(dtype=float)
    y = data.target.to_numpy(dtype=float)
    n = y.size
    rng = np.random.default_rng(seed)
    fold = rng.permutation(np.arange(n) % n_folds)
    mu = np.empty((n, n_members))
    sd = np.empty((n, n_members))
    for k in range(n_folds):  # loops over folds and members (model fits), never over rows
        train = np.flatnonzero(fold != k)
        test = np.flatnonzero(fold == k)
        for m in range(n_members):
            boot = rng.choice(train, size=train.size, replace=True)
            gbm = GradientBoostingRegressor(
                n_estimators=40, max_depth=3, learning_rate=0.1, subsample=0.8, random_state=int(rng.integers(2**31))
            ).fit(X[boot], y[boot])
            resid = y[boot] - gbm.predict(X[boot])
            logvar = Ridge(alpha=1.0).fit(X[boot], np.log(resid**2 + 1e-6))
            mu[test, m] = gbm.predict(X[test])
            sd[test, m] = np.exp(0.5 * (logvar.predict(X[test]) - _LOG_CHI2_1_MEAN))
    features = data.data.add_prefix("x_").reset_index(drop=True)
    return y, mu, sd, features


def _split_labels(n: int, cal_fraction: float, rng: np.random.Generator) -> np.ndarray:
    """'cal' for a random ``round(cal_fraction·n)`` rows, 'test' for the rest."""
    n_cal = int(round(cal_fraction * n))
    split = np.full(n, "test", dtype=object)
    split[rng.permutation(n)[:n_cal]] = "cal"
    return split


def _diabetes_parts(
    layout: Layout, n_members: int, n_folds: int, n_samples: int, cal_fraction: float, seed: int
) -> tuple[np.ndarray, PredictiveDistribution, np.ndarray, pd.DataFrame]:
    if layout not in _LAYOUT_ALIASES:
        raise ValueError(f"layout must be 'gaussian', 'quantile' or 'sample', got {layout!r}")
    layout = _LAYOUT_ALIASES[layout]
    if n_members < 2 or n_folds < 2 or n_samples < 2 or not 0 < cal_fraction < 1:
        raise ValueError("need n_members ≥ 2, n_folds ≥ 2, n_samples ≥ 2 and 0 < cal_fraction < 1")
    y, mu, sd, features = _diabetes_members(n_members, n_folds, seed)
    rng = np.random.default_rng([seed, 1])
    dist: PredictiveDistribution
    if layout == "gaussian":
        # Deep-ensemble moments (Lakshminarayanan et al. 2017): μ = mean_m μ_m,
        # σ² = mean_m σ_m² + var_m μ_m (aleatoric + epistemic).
        mean = mu.mean(axis=1)
        std = np.sqrt((sd**2).mean(axis=1) + mu.var(axis=1))
        dist = Gaussian(mean, std)
    elif layout == "quantile":
        dist = QuantileSet(DIABETES_LEVELS, mixture_quantiles(mu, sd, DIABETES_LEVELS))
    else:
        # n_samples draws from the mixture, as equal shares per member (stratified by member).
        member = np.arange(n_samples) % n_members
        z = rng.standard_normal((y.size, n_samples))
        dist = SampleSet(mu[:, member] + sd[:, member] * z)
    split = _split_labels(y.size, cal_fraction, np.random.default_rng([seed, 2]))  # same for every layout
    return y, dist, split, features


def diabetes_example(
    layout: Layout = "gaussian",
    *,
    n_members: int = 5,
    n_folds: int = 3,
    n_samples: int = 50,
    cal_fraction: float = 0.5,
    seed: int = 0,
) -> PredictionSet:
    """Real regression example: scikit-learn's diabetes data with a probabilistic model trained now.

    Model (trained in about a second, no network): a deep-ensemble-style bootstrap ensemble of
    ``n_members`` members, each a gradient-boosting regressor for the mean and a ridge model of the
    log variance (see ``_diabetes_members``), with out-of-fold predictions for all 442 rows
    (``n_folds``-fold cross-fitting, so no row is predicted by a model that saw it).  The member
    Gaussians N(μ_m, σ_m²) form an equally weighted mixture, exposed as

    * ``layout="gaussian"``: the moment-matched Gaussian, μ = mean_m μ_m and
      σ² = mean_m σ_m² + var_m μ_m (Lakshminarayanan et al. 2017, "deep ensembles");
    * ``layout="quantile"``: the mixture's exact quantiles at :data:`DIABETES_LEVELS`
      (:func:`mixture_quantiles`), as a :class:`~calib_core.base.regression.QuantileSet`;
    * ``layout="sample"``: ``n_samples`` draws from the mixture (stratified by member), as a
      :class:`~calib_core.base.regression.SampleSet`.

    ``features`` holds the ten standardised baseline variables as ``x_age``, ``x_sex``, ``x_bmi``…

    Parameters
    ----------
    layout : {"gaussian", "quantile", "sample"}, default "gaussian"
        The loader's layout names (``PredictionSet.layout``); plural spellings are accepted.
    n_members : int, default 5
        Ensemble members.
    n_folds : int, default 3
        Folds of the cross-fitting.
    n_samples : int, default 50
        Draws per row for ``layout="sample"``.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    PredictionSet
        442 rows with ``y``, the distribution, ``split`` and ``features``.

    References
    ----------
    .. [1] B. Efron, T. Hastie, I. Johnstone and R. Tibshirani, "Least angle regression", Annals of Statistics
       32(2), 2004 (the data, bundled with scikit-learn as ``sklearn.datasets.load_diabetes``).
    .. [2] B. Lakshminarayanan, A. Pritzel and C. Blundell, "Simple and scalable predictive uncertainty estimation
       using deep ensembles", NeurIPS 2017.
    """
    y, dist, split, features = _diabetes_parts(layout, n_members, n_folds, n_samples, cal_fraction, seed)
    layout = _LAYOUT_ALIASES[layout]
    n = y.size
    return PredictionSet(
        task="regression",
        source="diabetes example (scikit-learn)",
        layout=layout,
        y=y,
        dist=dist,
        point=dist.mean(),
        split=split,
        features=features,
        row_number=np.arange(1, n + 1),
        n_read=n,
        messages=[
            f"Built-in example: scikit-learn diabetes data (n = {n}); bootstrap ensemble of {n_members} "
            f"gradient-boosting + log-variance members, {n_folds}-fold out-of-fold predictions, layout {layout}."
        ],
    )


def diabetes_frame(
    layout: Layout = "gaussian",
    *,
    n_members: int = 5,
    n_folds: int = 3,
    n_samples: int = 50,
    cal_fraction: float = 0.5,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`diabetes_example` as a DataFrame in the prediction-file format (docs/conventions.md).

    Parameters
    ----------
    layout : {"gaussian", "quantile", "sample"}, default "gaussian"
        As in :func:`diabetes_example`.
    n_members, n_folds, n_samples : int
        As in :func:`diabetes_example`.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    DataFrame
        Columns ``y``; then ``mean, std`` (gaussian), ``q0.025 … q0.975`` (quantile) or
        ``sample_0 … sample_{M−1}`` (sample); then ``split`` and the feature columns ``x_*``.
    """
    y, dist, split, features = _diabetes_parts(layout, n_members, n_folds, n_samples, cal_fraction, seed)
    cols: dict[str, np.ndarray] = {"y": y}
    if isinstance(dist, Gaussian):
        cols.update(mean=dist.mean(), std=dist.std())
    elif isinstance(dist, QuantileSet):
        cols.update({f"q{level:g}": dist.values[:, j] for j, level in enumerate(dist.levels)})
    else:
        assert isinstance(dist, SampleSet)
        cols.update({f"sample_{j}": dist.samples[:, j] for j in range(dist.n_samples)})
    frame = pd.DataFrame(cols)
    frame["split"] = split
    return pd.concat([frame, features], axis=1)


LEVI_MODELS = ("true sigma", "random sigma")


def _levi_arrays(n: int, cal_fraction: float, seed: int) -> tuple[np.ndarray, ...]:
    if n < 2 or not 0 < cal_fraction < 1:
        raise ValueError("need n ≥ 2 and 0 < cal_fraction < 1")
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.1, 1.0, n)
    y = x + x * rng.standard_normal(n)
    sigma_random = rng.uniform(1.0, 10.0, n)
    split = _split_labels(n, cal_fraction, rng)
    return x, y, sigma_random, split


def levi_synthetic(n: int = 10_000, *, cal_fraction: float = 0.5, seed: int = 0) -> PredictionSet:
    """Levi et al. (2019) §4.1 synthetic set: x ~ U[0.1, 1], y ~ N(x, x²), two forecasters.

    Both forecasters predict the true mean μ = x (the paper's network is trained to it); they differ
    in σ:

    * ``model == "true sigma"``: σ = x, the true conditional standard deviation — perfectly
      calibrated in every sense;
    * ``model == "random sigma"``: σ ~ U[1, 10] independent of everything — uninformative and far
      too wide, yet after a monotone recalibration it looks perfect under the Kuleshov
      quantile-calibration curve (Levi Fig. 2c); the RMSE-vs-RMV diagram shows a flat RMSE
      (ENCE ≈ 84% in the paper before calibration).

    The set has 2n rows: the same n targets once per model (``model`` column), the same random
    ``split`` (``cal_fraction`` of the n examples are ``"cal"``) for both, and the feature ``x``.
    The paper used 50,000 training and 6,000 recalibration examples; ``n`` defaults to 10,000.

    Parameters
    ----------
    n : int, default 10000
        Examples per forecaster.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    PredictionSet
        2n rows, Gaussian layout, with ``model``, ``split`` and the feature ``x``.

    References
    ----------
    .. [1] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
       regression tasks", arXiv:1905.11659, 2019, §4.1.
    .. [2] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
       regression", ICML 2018.

    Examples
    --------
    >>> from calib_core.data.examples import levi_synthetic
    >>> ps = levi_synthetic(n=1000)
    >>> ps.n_rows, sorted(set(ps.model))
    (2000, ['random sigma', 'true sigma'])
    """
    x, y, sigma_random, split = _levi_arrays(n, cal_fraction, seed)
    model = np.repeat(np.array(LEVI_MODELS, dtype=object), n)
    dist = Gaussian(np.concatenate([x, x]), np.concatenate([x, sigma_random]))
    return PredictionSet(
        task="regression",
        source="Levi et al. 2019 §4.1 synthetic example",
        layout="gaussian",
        y=np.concatenate([y, y]),
        dist=dist,
        point=dist.mean(),
        split=np.concatenate([split, split]),
        model=model,
        features=pd.DataFrame({"x": np.concatenate([x, x])}),
        row_number=np.arange(1, 2 * n + 1),
        n_read=2 * n,
        messages=[
            f"Built-in example: Levi et al. (2019) §4.1, x ~ U[0.1, 1], y ~ N(x, x²), n = {n} per model; "
            "models 'true sigma' (σ = x) and 'random sigma' (σ ~ U[1, 10])."
        ],
    )


def levi_frame(n: int = 10_000, *, cal_fraction: float = 0.5, seed: int = 0) -> pd.DataFrame:
    """:func:`levi_synthetic` as a DataFrame (columns ``y, mean, std, split, model, x``; 2n rows).

    Parameters
    ----------
    n : int, default 10000
        Examples per forecaster.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    DataFrame
        The same predictions in the prediction-file format.
    """
    x, y, sigma_random, split = _levi_arrays(n, cal_fraction, seed)
    return pd.DataFrame(
        {
            "y": np.concatenate([y, y]),
            "mean": np.concatenate([x, x]),
            "std": np.concatenate([x, sigma_random]),
            "split": np.concatenate([split, split]),
            "model": np.repeat(np.array(LEVI_MODELS, dtype=object), n),
            "x": np.concatenate([x, x]),
        }
    )



# --------------------------------------------------------------------------------------------------
# classification examples
# --------------------------------------------------------------------------------------------------
def _digits_logits(n_train: int, c: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Held-out logits of a weakly regularised multinomial logistic regression on the digits data."""
    data = load_digits()
    X = data.data / 16.0  # pixel intensities 0..16 → [0, 1]
    y = data.target.astype(np.int64)
    perm = np.random.default_rng(seed).permutation(y.size)
    train, held_out = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    clf = LogisticRegression(C=c, max_iter=5000).fit(X[train], y[train])
    return clf.decision_function(X[held_out]), y[held_out], held_out


def digits_example(n_train: int = 500, *, c: float = 1e4, cal_fraction: float = 0.5, seed: int = 0) -> PredictionSet:
    """Real multi-class example: an over-confident classifier on scikit-learn's digits data, trained now.

    Model (trained in a fraction of a second, no network): multinomial logistic regression with a very
    weak L2 penalty (``C`` = 10⁴) on ``n_train`` random images of the 1,797 8×8 digit images (pixels
    scaled to [0, 1]); it separates its training set perfectly, so its logits grow without bound in
    the direction of the data and its confidence on new images (≈ 0.98) exceeds its accuracy (≈ 0.93):
    ECE ≈ 0.05 with 15 bins and a temperature T ≈ 4 fixes most of it — the over-confidence that Guo
    et al. (2017) report for modern networks, in miniature.

    Parameters
    ----------
    n_train : int, default 500
        Training images (at least 20).
    c : float, default 1e4
        Inverse L2 penalty of the logistic regression.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    PredictionSet
        The **held-out** images' logits (``decision_function``, whose softmax is ``predict_proba``), labels 0–9,
        class names "0"…"9" and a random ``split``.

    Raises
    ------
    ValueError
        ``n_train < 20`` or ``cal_fraction`` outside (0, 1).

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", ICML 2017.
    .. [2] E. Alpaydin and C. Kaynak, "Optical recognition of handwritten digits", UCI Machine Learning Repository,
       1998 (the data, bundled with scikit-learn as ``sklearn.datasets.load_digits``).
    """
    if not 0 < cal_fraction < 1 or n_train < 20:
        raise ValueError("need n_train ≥ 20 and 0 < cal_fraction < 1")
    logits, labels, held_out = _digits_logits(n_train, c, seed)
    n = labels.size
    return PredictionSet(
        task="classification",
        source="digits example (scikit-learn)",
        layout="logits",
        labels=labels,
        probs=softmax(logits),
        logits=logits,
        classes=[str(k) for k in range(10)],
        split=_split_labels(n, cal_fraction, np.random.default_rng([seed, 2])),
        row_number=np.arange(1, n + 1),
        n_read=n,
        messages=[
            f"Built-in example: scikit-learn digits (8×8 images, 10 classes); logistic regression with C = {c:g} "
            f"trained on {n_train} images, logits of the other {n} (over-confident)."
        ],
    )


def digits_frame(n_train: int = 500, *, c: float = 1e4, cal_fraction: float = 0.5, seed: int = 0) -> pd.DataFrame:
    """:func:`digits_example` as a DataFrame: ``label, logit_0 … logit_9, split``.

    Parameters
    ----------
    n_train : int, default 500
        Training images.
    c : float, default 1e4
        Inverse L2 penalty of the logistic regression.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    DataFrame
        The held-out images in the prediction-file format.
    """
    p = digits_example(n_train, c=c, cal_fraction=cal_fraction, seed=seed)
    frame = pd.DataFrame(p.logits, columns=[f"logit_{k}" for k in range(p.logits.shape[1])])
    frame.insert(0, "label", p.labels)
    frame["split"] = p.split
    return frame


BREAST_CANCER_CLASSES = ("benign", "malignant")


def _breast_cancer_logits(n_train: int, c: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    data = load_breast_cancer()
    X = data.data
    y = (data.target == 0).astype(np.int64)  # scikit-learn codes malignant as 0: positive class = malignant
    perm = np.random.default_rng(seed).permutation(y.size)
    train, held_out = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    mu, sd = X[train].mean(axis=0), X[train].std(axis=0)
    Z = (X - mu) / np.where(sd > 0, sd, 1.0)  # standardised with the training rows' moments
    clf = LogisticRegression(C=c, max_iter=10_000).fit(Z[train], y[train])
    return clf.decision_function(Z[held_out]), y[held_out]


def breast_cancer_example(
    n_train: int = 150, *, c: float = 1e4, cal_fraction: float = 0.5, seed: int = 0
) -> PredictionSet:
    """Real binary example: scikit-learn's breast cancer data (569 tumours, 30 features), positive class "malignant".

    The held-out logits of a weakly regularised logistic regression (``C`` = 10⁴) trained now on ``n_train`` rows
    (features standardised on them).  Accuracy ≈ 0.96 on the held-out rows but mean confidence ≈ 0.99 (top-label
    ECE ≈ 0.03): a few confident mistakes (over-confidence).

    Parameters
    ----------
    n_train : int, default 150
        Training rows (at least 20).
    c : float, default 1e4
        Inverse L2 penalty of the logistic regression.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    PredictionSet
        Stored like the loader's ``binary_logit`` layout: ``logits`` = [0, z] (z = log-odds of malignant),
        ``classes = ["benign", "malignant"]``, and a random ``split``.

    Raises
    ------
    ValueError
        ``n_train < 20`` or ``cal_fraction`` outside (0, 1).

    References
    ----------
    .. [1] W. N. Street, W. H. Wolberg and O. L. Mangasarian, "Nuclear feature extraction for breast tumor
       diagnosis", IS&T/SPIE Electronic Imaging, 1993 (Wisconsin diagnostic breast cancer data, bundled with
       scikit-learn as ``sklearn.datasets.load_breast_cancer``).
    """
    if not 0 < cal_fraction < 1 or n_train < 20:
        raise ValueError("need n_train ≥ 20 and 0 < cal_fraction < 1")
    z, labels = _breast_cancer_logits(n_train, c, seed)
    n = labels.size
    logits = np.column_stack([np.zeros(n), z])
    return PredictionSet(
        task="classification",
        source="breast cancer example (scikit-learn)",
        layout="binary_logit",
        labels=labels,
        probs=softmax(logits),
        logits=logits,
        classes=list(BREAST_CANCER_CLASSES),
        split=_split_labels(n, cal_fraction, np.random.default_rng([seed, 2])),
        row_number=np.arange(1, n + 1),
        n_read=n,
        messages=[
            f"Built-in example: scikit-learn breast cancer data; logistic regression with C = {c:g} trained on "
            f"{n_train} tumours, log-odds of 'malignant' for the other {n}."
        ],
    )


def breast_cancer_frame(
    n_train: int = 150, *, c: float = 1e4, cal_fraction: float = 0.5, seed: int = 0
) -> pd.DataFrame:
    """:func:`breast_cancer_example` as a DataFrame.

    Parameters
    ----------
    n_train : int, default 150
        Training rows.
    c : float, default 1e4
        Inverse L2 penalty of the logistic regression.
    cal_fraction : float, default 0.5
        Share of the rows marked ``"cal"`` in the random ``split`` column (the rest ``"test"``).
    seed : int, default 0
        Seed of everything random (the same arguments give bit-identical output).

    Returns
    -------
    DataFrame
        ``label`` (benign/malignant), ``logit_malignant`` (the log-odds of the positive class, named by its column
        suffix), ``split``.
    """
    p = breast_cancer_example(n_train, c=c, cal_fraction=cal_fraction, seed=seed)
    return pd.DataFrame(
        {"label": np.asarray(BREAST_CANCER_CLASSES)[p.labels], "logit_malignant": p.logits[:, 1], "split": p.split}
    )
