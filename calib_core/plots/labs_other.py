"""Plotly figures of teaching labs 6–9 (``calib_core.labs``), built from the labs' small tables.

* :func:`standardised_quantiles_figure` — lab 6: the standardised quantile functions of CRUDE (a step
  function through the sorted calibration z-scores) and of Kuleshov's isotonic recalibration of the Gaussian
  PIT, with every method's interval bounds at the chosen coverage.
* :func:`interval_sample_figure` — lab 6: the intervals of a few test rows, one colour per method.
* :func:`coverage_bars_figure` — lab 6: held-out coverage per method against the nominal one, with the
  binomial 95% range of a method whose true coverage is nominal.
* :func:`sigma_recovery_figure` — lab 7: true σ(x) against the estimated ones (1-D toy sets), or
  estimated against true σ at test points (5D).
* :func:`error_histogram_figure` — lab 7: histogram of the relative σ errors (σ̂ − σ)/σ per method.
* :func:`ece_vs_bins_figure` — lab 9: ECE as a function of the number of bins, one line per calibrator.

Every figure uses the explicit ``plotly_white`` template and traces carry ``meta = {"name", "role"}``
(the conventions of :mod:`calib_core.plots.regression`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from scipy import stats

from ._style import PALETTE, REFERENCE_COLOR, apply_layout, rgba

__all__ = [
    "standardised_quantiles_figure",
    "interval_sample_figure",
    "coverage_bars_figure",
    "sigma_recovery_figure",
    "error_histogram_figure",
    "ece_vs_bins_figure",
]


def _method_colors(names: Sequence[str]) -> dict[str, str]:
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def standardised_quantiles_figure(quantiles: pd.DataFrame, bounds: pd.DataFrame, coverage: float) -> go.Figure:
    """Lab 6: standardised quantile functions p ↦ (q_p − μ)/σ.

    Parameters
    ----------
    quantiles : DataFrame
        Column ``p`` and one column per curve (CRUDE's step function Ẑ[int(p·L)], Kuleshov's Φ⁻¹(R⁻¹(p)), the
        uncalibrated Gaussian Φ⁻¹(p)).
    bounds : DataFrame
        ``method, lower_z, upper_z``: every method's interval bounds at ``coverage``, drawn as markers at
        p = (1 ∓ c)/2.
    coverage : float
        c.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Vovk, V., Gammerman, A., & Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
    """
    curves = [c for c in quantiles.columns if c != "p"]
    names = list(dict.fromkeys(list(bounds["method"]) + curves))
    cmap = _method_colors(names)
    p = quantiles["p"].to_numpy(dtype=float)
    fig = go.Figure()
    for name in curves:
        gauss = name == "Gaussian"
        fig.add_trace(
            go.Scatter(
                x=p, y=quantiles[name].to_numpy(dtype=float), mode="lines", name=f"{name} quantile function",
                line={"color": REFERENCE_COLOR if gauss else cmap[name], "width": 1 if gauss else 2,
                      "dash": "dot" if gauss else "solid", "shape": "hv" if name == "CRUDE" else "linear"},
                meta={"name": name, "role": "quantile_function"},
            )
        )
    a = (1.0 - coverage) / 2.0
    symbols = ("circle-open", "x-thin-open", "diamond-open", "square-open")
    for i, row in enumerate(bounds.itertuples(index=False)):
        fig.add_trace(
            go.Scatter(
                x=[a, 1.0 - a], y=[row.lower_z, row.upper_z], mode="markers", name=f"{row.method}: bounds",
                marker={"color": cmap[row.method], "size": 12, "symbol": symbols[i % len(symbols)],
                        "line": {"width": 2, "color": cmap[row.method]}},
                hovertemplate="p = %{x:.3f}<br>z = %{y:.4f}<extra>" + row.method + "</extra>",
                meta={"name": row.method, "role": "bounds"},
            )
        )
    apply_layout(fig, "Standardised quantiles (q − μ)/σ", "quantile level p", "standardised quantile z", True)
    # seven legend entries wrap to several lines: a taller figure and the legend further down, clear of the x title
    fig.update_layout(height=560, margin={"b": 190}, legend={"y": -0.2})
    return fig


def interval_sample_figure(sample: pd.DataFrame, methods: Sequence[str]) -> go.Figure:
    """Lab 6: each method's interval on the first test rows (sorted by μ), side by side, and the targets.

    Parameters
    ----------
    sample : DataFrame
        ``row, mean, y`` and ``"<method>|lower"``, ``"<method>|upper"`` per method.
    methods : sequence of str
        The methods, in order.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J., & Wasserman, L. (2018). Distribution-free
       predictive inference for regression. Journal of the American Statistical Association, 113(523), 1094–1111.
    """
    cmap = _method_colors(list(methods))
    x = np.arange(len(sample), dtype=float)
    fig = go.Figure()
    k = len(methods)
    for i, name in enumerate(methods):
        lo = sample[f"{name}|lower"].to_numpy(dtype=float)
        hi = sample[f"{name}|upper"].to_numpy(dtype=float)
        mid = (lo + hi) / 2.0
        fig.add_trace(
            go.Scatter(
                x=x + (i - (k - 1) / 2.0) * 0.15, y=mid, mode="markers", name=name,
                marker={"color": cmap[name], "size": 3},
                error_y={"type": "data", "symmetric": False, "array": hi - mid, "arrayminus": mid - lo,
                         "color": cmap[name], "thickness": 2, "width": 0},
                customdata=np.column_stack([lo, hi]),
                hovertemplate="[%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra>" + name + "</extra>",
                meta={"name": name, "role": "interval"},
            )
        )
    fig.add_trace(
        go.Scatter(
            x=x, y=sample["y"].to_numpy(dtype=float), mode="markers", name="target y",
            marker={"color": "black", "size": 6, "symbol": "line-ew-open", "line": {"width": 2}},
            meta={"name": "y", "role": "target"},
        )
    )
    apply_layout(fig, "Intervals of the first test rows (sorted by μ)", "test row", "y", True)
    return fig


def coverage_bars_figure(bounds: pd.DataFrame, coverage: float, n_test: int) -> go.Figure:
    """Lab 6: held-out coverage per method against the nominal coverage and its sampling range.

    Horizontal bars, the nominal coverage as a dashed line and the central 95% range of the coverage a method with
    true coverage ``coverage`` shows on ``n_test`` rows (Binomial(n, c)/n, grey band).

    Parameters
    ----------
    bounds : DataFrame
        Per method its held-out coverage (``method``, ``coverage_test``).
    coverage : float
        c, the nominal coverage.
    n_test : int
        Held-out rows.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [2] Vovk, V., Gammerman, A., & Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
    """
    names = list(bounds["method"])
    cmap = _method_colors(names)
    lo = stats.binom.ppf(0.025, n_test, coverage) / n_test
    hi = stats.binom.ppf(0.975, n_test, coverage) / n_test
    values = bounds["coverage_test"].to_numpy(dtype=float)
    fig = go.Figure()
    fig.add_vrect(x0=lo, x1=hi, fillcolor=rgba(REFERENCE_COLOR, 0.2), line_width=0)
    fig.add_trace(
        go.Bar(
            y=names, x=values, orientation="h", marker={"color": [cmap[n] for n in names]},
            text=[f"{v:.3f}" for v in values], textposition="outside", name="held-out coverage",
            hovertemplate="%{y}: %{x:.4f}<extra></extra>", meta={"name": "coverage", "role": "bars"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[coverage, coverage], y=[names[0], names[-1]], mode="lines",
            name=f"nominal {coverage:g}; grey: 95% binomial range at n = {n_test:,}",
            line={"color": REFERENCE_COLOR, "dash": "dash"}, meta={"name": "nominal", "role": "reference"},
        )
    )
    apply_layout(fig, "Coverage on held-out rows", "fraction of test targets inside the interval", "", True)
    low = min(float(values.min()), lo)
    fig.update_xaxes(range=[max(0.0, low - 0.08), min(1.0, max(hi, float(values.max())) + 0.06)])
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=560, margin={"b": 190}, legend={"y": -0.2})
    return fig


def sigma_recovery_figure(curves: pd.DataFrame, methods: Sequence[str], *, one_dimensional: bool = True) -> go.Figure:
    """Lab 7: recovered σ(x) against the truth (ACCRUE §5.1, Figs. 4–7).

    1-D toy sets: lines against x.  5D: each method is a scatter of estimated against true σ with the identity line
    (ACCRUE Fig. 7's view).

    Parameters
    ----------
    curves : DataFrame
        1-D: ``x``, ``true`` and one column per method on a grid of x; 5D: ``true`` and the methods at random test
        points.
    methods : sequence of str
        The methods, in order.
    one_dimensional : bool, default True
        Which of the two views.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """
    cmap = _method_colors(list(methods))
    fig = go.Figure()
    if one_dimensional:
        x = curves["x"].to_numpy(dtype=float)
        fig.add_trace(
            go.Scatter(x=x, y=curves["true"], mode="lines", name="true σ(x)",
                       line={"color": "black", "width": 3}, meta={"name": "true", "role": "truth"})
        )
        for name in methods:
            fig.add_trace(
                go.Scatter(x=x, y=curves[name], mode="lines", name=name, line={"color": cmap[name], "width": 2},
                           meta={"name": name, "role": "estimate"})
            )
        apply_layout(fig, "σ(x): truth and estimates", "x", "σ(x)", True)
        return fig
    truth = curves["true"].to_numpy(dtype=float)
    top = float(max(truth.max(), *(curves[m].max() for m in methods)))
    fig.add_trace(
        go.Scatter(x=[0, top], y=[0, top], mode="lines", name="perfect", hoverinfo="skip",
                   line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1}, meta={"role": "reference"})
    )
    for name in methods:
        fig.add_trace(
            go.Scattergl(x=truth, y=curves[name], mode="markers", name=name,
                         marker={"color": cmap[name], "size": 4, "opacity": 0.5},
                         meta={"name": name, "role": "estimate"})
        )
    apply_layout(fig, "Estimated vs true σ at test points (5D)", "true σ(x)", "estimated σ(x)", True)
    fig.update_xaxes(range=[0, 1.05 * top], constrain="domain")
    fig.update_yaxes(range=[0, 1.05 * top], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def error_histogram_figure(errors: pd.DataFrame, methods: Sequence[str], n_bins: int = 40) -> go.Figure:
    """Lab 7: density histogram of the relative σ errors (σ̂(x) − σ(x))/σ(x) at test points.

    One step line per method on common bins (errors clipped to [−1, 2] so the outer bins hold the tails).  The figure
    carries the bin table only (O(bins)), never the rows.

    Parameters
    ----------
    errors : DataFrame
        One column of relative errors per method.
    methods : sequence of str
        The methods, in order.
    n_bins : int, default 40
        Bins on [−1, 2].

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    """
    cmap = _method_colors(list(methods))
    edges = np.linspace(-1.0, 2.0, n_bins + 1)
    fig = go.Figure()
    for name in methods:
        e = np.clip(errors[name].to_numpy(dtype=float), -1.0, 2.0)
        counts, _ = np.histogram(e, bins=edges)
        density = counts / max(e.size, 1) / np.diff(edges)
        fig.add_trace(
            go.Scatter(
                x=np.repeat(edges, 2)[1:-1], y=np.repeat(density, 2), mode="lines", name=name,
                line={"color": cmap[name], "width": 2}, meta={"name": name, "role": "histogram"},
            )
        )
    fig.add_vline(x=0.0, line={"color": REFERENCE_COLOR, "dash": "dash", "width": 1})
    apply_layout(fig, "Relative σ error at test points", "(σ̂ − σ)/σ", "density", True)
    return fig


def ece_vs_bins_figure(table: pd.DataFrame, *, title: str | None = "ECE against the number of bins") -> go.Figure:
    """Lab 9: ECE (Guo et al. eq. 3) as a function of the number M of equal-width bins.

    The ECE of a fixed set of predictions changes with M: more bins, fewer rows per bin, more noise in |acc − conf|
    (an upward bias).

    Parameters
    ----------
    table : DataFrame
        ``n_bins`` and one column per calibrator (ECE on the test rows).
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    """
    names = [c for c in table.columns if c != "n_bins"]
    cmap = _method_colors(names)
    m = table["n_bins"].to_numpy()
    fig = go.Figure()
    for name in names:
        fig.add_trace(
            go.Scatter(x=m, y=table[name], mode="lines+markers", name=name, line={"color": cmap[name], "width": 2},
                       marker={"size": 5}, hovertemplate="M = %{x}<br>ECE = %{y:.4f}<extra>" + name + "</extra>",
                       meta={"name": name, "role": "ece"})
        )
    apply_layout(fig, title, "number of bins M", "ECE", True)
    fig.update_yaxes(rangemode="tozero")
    return fig


def colors_for(names: Sequence[str]) -> Mapping[str, str]:
    """The colours the builders above give to ``names`` (for pages that draw other figures of the same methods).

    Parameters
    ----------
    names : sequence of str
        The methods.

    Returns
    -------
    mapping of str to str
        Name → colour.
    """
    return _method_colors(names)
