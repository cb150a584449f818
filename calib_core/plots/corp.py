"""Figures and display tables of the CORP lens: CORP reliability diagram with consistency
and confidence bands, the score decomposition table, the Murphy diagram and the MCB–DSC plane.

Built from the tables of :mod:`calib_core.diagrams.classification_corp` (never raw rows):

================ ===========================================================================================
table            columns
================ ===========================================================================================
curve            forecast, recalibrated, count (both ends of every PAV block)
bands            forecast, count, consistency_low, consistency_high, confidence_low, confidence_high
decomposition    score, value, value_low, value_high, mcb, mcb_low, mcb_high, mcb_null_mean, mcb_p_value, dsc, …
murphy           theta, score
plane            model, calibrator, mcb, dsc, unc, score (one row per point of the MCB–DSC plane)
quantile curve   forecast, recalibrated, count (regression: :class:`~calib_core.metrics.regression_decomposition.
                 QuantileReliability`, both ends of every block of the isotonic τ-quantile fit)
quantile bands   forecast, count, consistency_low, consistency_high (one row per group of forecasts)
================ ===========================================================================================

Names from uploaded files (models, calibrators) reach trace names and hover text HTML-escaped: Plotly renders a
subset of HTML there.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..diagrams.classification_corp import Corp
from ..metrics.regression_decomposition import QuantileReliability
from ._style import HEIGHT, REFERENCE_COLOR, apply_layout, merged_colors, plain, rgba, set_template, title_layout

__all__ = [
    "BAND_CHOICES",
    "emphasise",
    "picked_point",
    "corp_reliability_figure",
    "decomposition_display_table",
    "mcb_dsc_figure",
    "murphy_figure",
    "quantile_reliability_figure",
    "quantile_reliability_figure_dict",
]

#: What the CORP diagram shades: the consistency band (under calibration), the confidence band, both or none.
BAND_CHOICES = ("consistency", "confidence", "both", "none")

_AXES = {
    "top_label": ("confidence (max predicted probability)", "recalibrated accuracy (PAV)"),
    "positive": ("predicted probability of the positive class", "recalibrated frequency (PAV)"),
}


def _esc(name: object) -> str:
    return plain(name)


def _band_trace(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, color: str, name: str, legend: bool,
                group: str) -> go.Scatter:
    ok = np.isfinite(lo) & np.isfinite(hi)
    xs, lo, hi = x[ok], lo[ok], hi[ok]
    return go.Scatter(
        x=np.r_[xs, xs[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", fillcolor=color, line={"width": 0},
        mode="lines", name=name, showlegend=legend, legendgroup=group, hoverinfo="skip",
    )


def corp_reliability_figure(
    corps: Mapping[str, Corp],
    *,
    colors: Mapping[str, str] | None = None,
    band: str = "consistency",
    title: str | None = "CORP reliability diagram",
) -> go.Figure:
    """CORP reliability diagram (Dimitriadis, Gneiting & Jordan 2021, Fig. 1).

    The PAV-recalibrated frequency against the forecast, one line per model, the diagonal, and the pointwise
    ``band_level`` band(s) shaded: the consistency band (where a calibrated forecaster's curve falls; grey) and/or the
    bootstrap confidence band of the curve (the model's colour).  Hover: forecast, recalibrated value, rows in the PAV
    block.

    Parameters
    ----------
    corps : mapping of str to Corp
        CORP results per model.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    band : {"consistency", "confidence", "both", "none"}, default "consistency"
        Which band(s) to shade.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If ``band`` is not one of the choices.

    References
    ----------
    .. [1] Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
       classifiers. Proceedings of the National Academy of Sciences, 118(8), e2016191118.
    """
    if band not in BAND_CHOICES:
        raise ValueError(f"band must be one of {BAND_CHOICES}, got {band!r}")
    if not corps:
        raise ValueError("no CORP result given")
    names = list(corps)
    cols = merged_colors(names, colors)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": REFERENCE_COLOR, "dash": "dot",
                                                                      "width": 1},
                             name="calibrated (diagonal)", hoverinfo="skip"))
    targets = {c.target for c in corps.values()}
    for i, (name, c) in enumerate(corps.items()):
        b = c.bands
        x = b["forecast"].to_numpy(float)
        level = float(c.info.get("band_level", 0.9))
        group = f"m{i}"
        if band in ("consistency", "both"):
            fig.add_trace(_band_trace(x, b["consistency_low"].to_numpy(float), b["consistency_high"].to_numpy(float),
                                      rgba(REFERENCE_COLOR, 0.16 if len(corps) == 1 else 0.08),
                                      f"{level:.0%} consistency band" + ("" if len(corps) == 1 else f" — {_esc(name)}"),
                                      i == 0 or len(corps) > 1, group))
        if band in ("confidence", "both"):
            fig.add_trace(_band_trace(x, b["confidence_low"].to_numpy(float), b["confidence_high"].to_numpy(float),
                                      rgba(cols[name], 0.22), f"{level:.0%} confidence band — {_esc(name)}", True,
                                      group))
    for i, (name, c) in enumerate(corps.items()):
        cv = c.curve
        mcb = c.decomposition.set_index("score").loc["brier"]
        hover = [f"{_esc(name)}<br>forecast {f:.4g}<br>recalibrated {r:.4f}<br>{int(k):,} rows in this PAV block"
                 for f, r, k in zip(cv["forecast"], cv["recalibrated"], cv["count"])]
        fig.add_trace(go.Scatter(
            x=cv["forecast"], y=cv["recalibrated"], mode="lines+markers" if len(cv) <= 60 else "lines",
            line={"color": cols[name], "width": 2.5}, marker={"size": 4}, name=f"{_esc(name)} (MCB {mcb.mcb:.4f})",
            legendgroup=f"m{i}", hovertext=hover, hoverinfo="text", meta={"name": str(name), "role": "corp"},
        ))
    target = next(iter(targets)) if len(targets) == 1 else "positive"
    xt, yt = _AXES.get(target, _AXES["positive"])
    apply_layout(fig, title, xt, yt, True)
    fig.update_layout(xaxis={"range": [0, 1]}, yaxis={"range": [0, 1.02]})
    return fig


def _level_and_span(results: Mapping[str, QuantileReliability]) -> tuple[float, float, float]:
    """The one level τ of ``results`` and the span [lo, hi] of their forecasts (the diagonal's ends); ValueError when
    there is no result or several levels."""
    if not results:
        raise ValueError("no quantile reliability result given")
    taus = {r.tau for r in results.values()}
    if len(taus) != 1:
        raise ValueError(f"one level τ per figure, got {sorted(taus)}")
    lo = min(float(r.curve["forecast"].min()) for r in results.values())
    hi = max(float(r.curve["forecast"].max()) for r in results.values())
    return taus.pop(), lo, hi


def quantile_reliability_figure(
    results: Mapping[str, QuantileReliability],
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """CORP quantile reliability diagram (Gneiting et al. 2023, Annu. Rev. Stat. Appl. 10, Fig. 3).

    For one level τ, the isotonic τ-quantile recalibration x̂ against the predicted τ-quantile x, one line per model,
    the diagonal (calibrated: x̂ = x) and each model's pointwise consistency band under calibration (grey).  Above the
    diagonal = the predicted quantile is too low there (more than τ of the targets fall below it).  Hover: the
    forecast, the recalibrated quantile and the rows of the isotonic block; the legend gives each model's MCB (what
    the recalibration saves of the mean quantile score).

    Parameters
    ----------
    results : mapping of str to QuantileReliability
        Results per model (one level τ).
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str, optional
        Figure title (default names τ).

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan,
       A. I., Lerch, S., Phipps, K., & Schienle, M. (2023). Model diagnostics and forecast evaluation for
       quantiles. Annual Review of Statistics and Its Application, 10, 597–621.
    .. [2] Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
       classifiers. Proceedings of the National Academy of Sciences, 118(8), e2016191118.
    """
    tau, lo, hi = _level_and_span(results)
    cols = merged_colors(list(results), colors)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", hoverinfo="skip",
                             line={"color": REFERENCE_COLOR, "dash": "dot", "width": 1},
                             name="calibrated (diagonal)"))
    for i, (name, r) in enumerate(results.items()):
        b = r.bands
        level = float(r.info.get("band_level", 0.9))
        fig.add_trace(_band_trace(b["forecast"].to_numpy(float), b["consistency_low"].to_numpy(float),
                                  b["consistency_high"].to_numpy(float),
                                  rgba(REFERENCE_COLOR, 0.16 if len(results) == 1 else 0.08),
                                  f"{level:.0%} consistency band" + ("" if len(results) == 1 else f" — {_esc(name)}"),
                                  i == 0 or len(results) > 1, f"m{i}"))
    for i, (name, r) in enumerate(results.items()):
        cv = r.curve
        hover = [f"{_esc(name)}<br>predicted {tau:g}-quantile {f:.4g}<br>recalibrated {v:.4g}<br>{int(k):,} rows in "
                 "this isotonic block" for f, v, k in zip(cv["forecast"], cv["recalibrated"], cv["count"])]
        fig.add_trace(go.Scatter(
            x=cv["forecast"], y=cv["recalibrated"], mode="lines+markers" if len(cv) <= 60 else "lines",
            line={"color": cols[name], "width": 2.5}, marker={"size": 4}, legendgroup=f"m{i}",
            name=f"{_esc(name)} (MCB {r.decomposition['mcb']:.4g})", hovertext=hover, hoverinfo="text",
            meta={"name": str(name), "role": "quantile_corp"},
        ))
    apply_layout(fig, f"CORP quantile reliability, τ = {tau:g}" if title is None else title,
                 f"predicted {tau:g}-quantile", f"recalibrated {tau:g}-quantile (isotonic)", True)
    return fig


@functools.cache
def _template() -> dict:
    """The figures' template as :func:`set_template` gives it, as a plain dict (made once per process, shared by
    every figure dict: never changed)."""
    return set_template(go.Figure()).layout.template.to_plotly_json()


def quantile_reliability_figure_dict(
    results: Mapping[str, QuantileReliability],
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """``quantile_reliability_figure(results, ...).to_plotly_json()`` built without Plotly's validation (which cost
    most of the figure's ~10 ms): the isotonic τ-quantile recalibration x̂ against the predicted τ-quantile x, the
    diagonal x̂ = x and each model's pointwise consistency band (Gneiting et al. 2023, Fig. 3).

    The same JSON byte for byte (tested); arrays are NumPy arrays as Plotly stores them; the template is a shared
    dict (copy it before changing it).

    Parameters
    ----------
    results : mapping of str to QuantileReliability
        Results per model (one level τ).
    colors : mapping of str to str, optional
        Colour per name.
    title : str, optional
        Figure title (default names τ).

    Returns
    -------
    dict
        ``{"data": [trace dicts with "type"], "layout": {...}}``.

    References
    ----------
    .. [1] Gneiting, T., Wolffram, D., Resin, J., Kraus, K., Bracher, J., Dimitriadis, T., Hagenmeyer, V., Jordan,
       A. I., Lerch, S., Phipps, K., & Schienle, M. (2023). Model diagnostics and forecast evaluation for
       quantiles. Annual Review of Statistics and Its Application, 10, 597–621.
    .. [2] Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
       classifiers. Proceedings of the National Academy of Sciences, 118(8), e2016191118.
    """
    tau, lo, hi = _level_and_span(results)
    cols = merged_colors(list(results), colors)
    data: list[dict[str, Any]] = [{"hoverinfo": "skip", "line": {"color": REFERENCE_COLOR, "dash": "dot", "width": 1},
                                   "mode": "lines", "name": "calibrated (diagonal)", "x": [lo, hi], "y": [lo, hi],
                                   "type": "scatter"}]
    for i, (name, r) in enumerate(results.items()):
        b = r.bands
        level = float(r.info.get("band_level", 0.9))
        x, b_lo, b_hi = (b[c].to_numpy(float) for c in ("forecast", "consistency_low", "consistency_high"))
        ok = np.isfinite(b_lo) & np.isfinite(b_hi)
        x, b_lo, b_hi = x[ok], b_lo[ok], b_hi[ok]
        data.append({"fill": "toself", "fillcolor": rgba(REFERENCE_COLOR, 0.16 if len(results) == 1 else 0.08),
                     "hoverinfo": "skip", "legendgroup": f"m{i}", "line": {"width": 0}, "mode": "lines",
                     "name": f"{level:.0%} consistency band" + ("" if len(results) == 1 else f" — {_esc(name)}"),
                     "showlegend": i == 0 or len(results) > 1, "x": np.r_[x, x[::-1]], "y": np.r_[b_hi, b_lo[::-1]],
                     "type": "scatter"})
    for i, (name, r) in enumerate(results.items()):
        cv = r.curve
        hover = [f"{_esc(name)}<br>predicted {tau:g}-quantile {f:.4g}<br>recalibrated {v:.4g}<br>{int(k):,} rows in "
                 "this isotonic block" for f, v, k in zip(cv["forecast"], cv["recalibrated"], cv["count"])]
        data.append({"hoverinfo": "text", "hovertext": hover, "legendgroup": f"m{i}",
                     "line": {"color": cols[name], "width": 2.5}, "marker": {"size": 4},
                     "meta": {"name": str(name), "role": "quantile_corp"},
                     "mode": "lines+markers" if len(cv) <= 60 else "lines",
                     "name": f"{_esc(name)} (MCB {r.decomposition['mcb']:.4g})",
                     "x": cv["forecast"].to_numpy(float), "y": cv["recalibrated"].to_numpy(float), "type": "scatter"})
    text = f"CORP quantile reliability, τ = {tau:g}" if title is None else title
    title_spec, top = title_layout(text, lines=str(text or "").count("<br>") + 1)
    # Plotly's key order (the same JSON, byte for byte): a title's pad first; no title is {} after the legend
    title_dict = {"pad": dict(title_spec["pad"]), **{k: v for k, v in title_spec.items() if k != "pad"}} \
        if title_spec is not None else None
    layout: dict[str, Any] = {"template": _template(), **({"title": title_dict} if title_dict else {})}
    layout.update({
        "margin": {"l": 60, "r": 20, "t": top, "b": 95},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.17, "xanchor": "center", "x": 0.5},
        **({} if title_dict else {"title": {}}),
        "xaxis": {"title": {"text": f"predicted {tau:g}-quantile"}},
        "yaxis": {"title": {"text": f"recalibrated {tau:g}-quantile (isotonic)"}},
        "height": HEIGHT, "showlegend": True, "hovermode": "closest",
    })
    return {"data": data, "layout": layout}


def decomposition_display_table(corps: Mapping[str, Corp], *, digits: int = 4) -> pd.DataFrame:
    """One row per (model, score): S̄ = MCB − DSC + UNC with each term's interval as text.

    Also MCB's null mean (what a calibrated forecaster gets at this N: "MCB if calibrated") and the MCB test's p-value
    ("(floor)": MCB beat every null draw, p = 1/(R + 1)).  The ``model`` column only with several models, ``note``
    only when a row has one.

    Parameters
    ----------
    corps : mapping of str to Corp
        CORP results per model.
    digits : int, default 4
        Decimals shown.

    Returns
    -------
    DataFrame
        The display table.

    References
    ----------
    .. [1] Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
       classifiers. Proceedings of the National Academy of Sciences, 118(8), e2016191118.
    """
    rows = []
    level = 0.95
    for name, c in corps.items():
        level = float(c.info.get("level", 0.95))
        for r in c.decomposition.itertuples():
            def iv(v: float, lo: float, hi: float) -> str:
                if not np.isfinite(v):
                    return "∞"
                if np.isfinite(lo) and np.isfinite(hi):
                    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"
                return f"{v:.{digits}f}"
            rows.append({
                "model": str(name),
                "score": "Brier" if r.score == "brier" else "log",
                "S": iv(r.value, r.value_low, r.value_high),
                "MCB": iv(r.mcb, r.mcb_low, r.mcb_high),
                "MCB if calibrated": "" if not np.isfinite(r.mcb_null_mean) else f"{r.mcb_null_mean:.{digits}f}",
                "p (MCB test)": _p_text(r.mcb_p_value, int(c.info.get("n_resamples", 0))),
                "DSC": iv(r.dsc, r.dsc_low, r.dsc_high),
                "UNC": iv(r.unc, r.unc_low, r.unc_high),
                "note": r.note,
            })
    out = pd.DataFrame(rows)
    out = out.rename(columns={c: f"{c} ({level:.0%} CI)" for c in ("S", "MCB", "DSC", "UNC")})
    if len(corps) == 1:
        out = out.drop(columns="model")
    if not out["note"].astype(bool).any():
        out = out.drop(columns="note")
    return out


def _p_text(p: float, n_draws: int) -> str:
    """A Monte-Carlo p-value as text; at its floor 1/(R + 1) (MCB above every null draw) it says "(floor)"."""
    if not np.isfinite(p):
        return ""
    text = f"{p:.2g}" if p < 0.1 else f"{p:.2f}"
    if n_draws > 0 and p <= 1.0 / (n_draws + 1) * (1 + 1e-9):
        text += " (floor)"
    return text


def murphy_figure(
    tables: Mapping[str, pd.DataFrame],
    *,
    colors: Mapping[str, str] | None = None,
    title: str | None = "Murphy diagram",
) -> go.Figure:
    """Murphy diagram (Ehm et al. 2016, Fig. 1): the mean elementary score S̄_θ against the threshold θ.

    One line per model; lower is better, and a model below another for every θ is better for every user (every
    proper score).  The area under each curve is half its Brier score.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        Per model the columns ``theta, score``.
    colors : mapping of str to str, optional
        Colour per name (default :func:`model_colors` of the names, in order).
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    Raises
    ------
    ValueError
        If no table is given.

    References
    ----------
    .. [1] Ehm, W., Gneiting, T., Jordan, A., & Krüger, F. (2016). Of quantiles and expectiles: consistent scoring
       functions, Choquet representations and forecast rankings. Journal of the Royal Statistical Society B,
       78(3), 505–562.
    .. [2] Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
       classifiers. Proceedings of the National Academy of Sciences, 118(8), e2016191118.
    """
    if not tables:
        raise ValueError("no Murphy table given")
    cols = merged_colors(list(tables), colors)
    fig = go.Figure()
    for name, t in tables.items():
        fig.add_trace(go.Scatter(
            x=t["theta"], y=t["score"], mode="lines", line={"color": cols[name], "width": 2}, name=_esc(name),
            hovertemplate=f"{_esc(name)}<br>θ = %{{x:.3f}}<br>mean elementary score %{{y:.4f}}<extra></extra>",
            meta={"name": str(name), "role": "murphy"},
        ))
    apply_layout(fig, title, "threshold θ (cost–loss ratio)", "mean elementary score", len(tables) > 1)
    fig.update_layout(xaxis={"range": [0, 1]}, yaxis={"rangemode": "tozero"})
    return fig


def mcb_dsc_figure(
    points: pd.DataFrame,
    *,
    colors: Mapping[str, str] | None = None,
    reference: str | None = None,
    selected: tuple[str, str] | None = None,
    n_isolines: int = 6,
    title: str | None = "MCB–DSC plane",
) -> go.Figure:
    """The MCB–DSC plane (Dimitriadis, Gneiting, Jordan & Vogel 2024, Fig. 1c).

    One point per (model, calibrator) at (MCB, DSC), coloured by calibrator, with arrows from each model's
    ``reference`` (the uncalibrated predictions) to its recalibrated points.  Isolines of equal score
    S = MCB − DSC + UNC are the lines DSC = MCB + UNC − S (slope 1); when UNC differs between points (top-label
    events depend on the predictions) they are labelled with MCB − DSC = S − UNC instead.  Better is up and to the
    left.  Every point carries ``customdata`` = [model, calibrator] for the page's selection.  Points that are means
    over trials (``n_trials`` > 1, from :func:`~calib_core.diagrams.classification_corp.mcb_dsc_points`) get ± one
    standard deviation over trials as bars.

    Parameters
    ----------
    points : DataFrame
        :func:`~calib_core.diagrams.classification_corp.mcb_dsc_points`'s table.
    colors : mapping of str to str, optional
        Colour per calibrator.
    reference : str, optional
        The calibrator the arrows start from.
    selected : (str, str), optional
        (model, calibrator) of the point drawn with a ring.
    n_isolines : int, default 6
        Isolines of equal score.
    title : str or None
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The figure.

    References
    ----------
    .. [1] Dimitriadis, T., Gneiting, T., Jordan, A. I., & Vogel, P. (2024). Evaluating probabilistic classifiers:
       the triptych. International Journal of Forecasting, 40(3), 1101–1122.
    .. [2] Dimitriadis, T., Gneiting, T., & Jordan, A. I. (2021). Stable reliability diagrams for probabilistic
       classifiers. Proceedings of the National Academy of Sciences, 118(8), e2016191118.
    """
    need = {"model", "calibrator", "mcb", "dsc", "unc", "score"}
    if missing := need - set(points.columns):
        raise ValueError(f"MCB–DSC points lack column(s) {sorted(missing)}")
    pts = points[np.isfinite(points["mcb"].to_numpy(float)) & np.isfinite(points["dsc"].to_numpy(float))]
    cals = list(dict.fromkeys(pts["calibrator"].astype(str)))
    cols = merged_colors(cals, colors)
    models = list(dict.fromkeys(pts["model"].astype(str)))
    symbols = ["circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon"]
    fig = go.Figure()
    mcb, dsc = pts["mcb"].to_numpy(float), pts["dsc"].to_numpy(float)
    x_hi = max(float(mcb.max()) * 1.15, 1e-6) if len(pts) else 1.0
    y_hi = max(float(dsc.max()) * 1.15, 1e-6) if len(pts) else 1.0
    unc = pts["unc"].to_numpy(float)
    common = len(pts) > 0 and np.ptp(unc) <= 1e-12 * max(1.0, abs(unc[0]))
    # isolines: S − UNC = MCB − DSC takes values from −y_hi to x_hi
    levels = np.linspace(-y_hi, x_hi, n_isolines + 2)[1:-1]
    for v in levels:
        xs = np.array([max(0.0, v), x_hi])
        ys = xs - v
        label = f"S = {v + unc[0]:.4g}" if common else f"MCB − DSC = {v:.3g}"
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"color": "#bbbbbb", "width": 1, "dash": "dot"},
                                 hoverinfo="skip", showlegend=False))
        fig.add_annotation(x=xs[1], y=ys[1], text=label, showarrow=False, xanchor="right", yanchor="bottom",
                           font={"size": 10, "color": "#888888"})
    if reference is not None:
        for m in models:
            own = pts[pts["model"].astype(str) == m]
            start = own[own["calibrator"].astype(str) == reference]
            if start.empty:
                continue
            x0, y0 = float(start["mcb"].iloc[0]), float(start["dsc"].iloc[0])
            for r in own[own["calibrator"].astype(str) != reference].itertuples():
                fig.add_annotation(x=r.mcb, y=r.dsc, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y",
                                   showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=1.2, standoff=7,
                                   arrowcolor=rgba(cols.get(str(r.calibrator), REFERENCE_COLOR), 0.6), text="")
    for cal in cals:
        own = pts[pts["calibrator"].astype(str) == cal]
        sym = [symbols[models.index(str(m)) % len(symbols)] for m in own["model"]]
        trials = own["n_trials"].to_numpy(float) if "n_trials" in own else np.ones(len(own))
        hover = [f"<b>{_esc(m)}</b> — {_esc(cal)}<br>MCB {a:.5f}<br>DSC {b:.5f}<br>UNC {u:.5f}<br>score {s:.5f}"
                 + (f"<br>mean over {int(k)} trials" if k > 1 else "")
                 for m, a, b, u, s, k in zip(own["model"], own["mcb"], own["dsc"], own["unc"], own["score"], trials)]
        spread = {}
        if {"mcb_std", "dsc_std"} <= set(own.columns) and np.isfinite(own["mcb_std"].to_numpy(float)).any():
            bar = {"type": "data", "visible": True, "thickness": 1, "width": 0, "color": rgba(cols[cal], 0.5)}
            spread = {"error_x": {**bar, "array": np.nan_to_num(own["mcb_std"].to_numpy(float))},
                      "error_y": {**bar, "array": np.nan_to_num(own["dsc_std"].to_numpy(float))}}
        fig.add_trace(go.Scatter(
            x=own["mcb"], y=own["dsc"], mode="markers", name=_esc(cal), **spread,
            marker={"color": cols[cal], "size": 12 if cal != reference else 10, "symbol": sym,
                    "line": {"color": "white", "width": 1}},
            customdata=np.column_stack([own["model"].astype(str), own["calibrator"].astype(str)]),
            hovertext=hover, hoverinfo="text", meta={"role": "plane"},
        ))
    if selected is not None:
        hit = pts[(pts["model"].astype(str) == selected[0]) & (pts["calibrator"].astype(str) == selected[1])]
        if not hit.empty:
            fig.add_trace(go.Scatter(x=hit["mcb"], y=hit["dsc"], mode="markers", hoverinfo="skip", showlegend=False,
                                     marker={"size": 22, "color": "rgba(0,0,0,0)",
                                             "line": {"color": "#222222", "width": 2}}))
    apply_layout(fig, title, "MCB (miscalibration) →  worse", "DSC (discrimination) →  better", True)
    fig.update_layout(xaxis={"range": [0, x_hi]}, yaxis={"range": [0, y_hi]})
    return fig


def picked_point(event: object) -> tuple[str, str] | None:
    """(model, calibrator) of the first point of a Streamlit Plotly selection event on :func:`mcb_dsc_figure`.

    Parameters
    ----------
    event : object
        The selection event (a mapping or an object with ``selection.points``).

    Returns
    -------
    (str, str) or None
        The point's ``customdata``, or None when nothing is selected.
    """
    try:
        points = event["selection"]["points"]  # type: ignore[index]
    except (KeyError, TypeError):
        points = getattr(getattr(event, "selection", None), "points", None)
    for point in points or ():
        cd = point.get("customdata") if isinstance(point, Mapping) else None
        if isinstance(cd, (list, tuple)) and len(cd) >= 2:
            return str(cd[0]), str(cd[1])
    return None


def emphasise(fig: go.Figure, keep: str, names: Sequence[str], *, faded: float = 0.2) -> go.Figure:
    """A copy of ``fig`` whose traces of the other ``names`` are faded.

    By trace name or ``meta["name"]``: the calibrator picked in the MCB–DSC plane stands out in the before/after
    figures.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure (not changed).
    keep : str
        The name kept opaque.
    names : sequence of str
        All names.
    faded : float, default 0.2
        Opacity of the others.

    Returns
    -------
    plotly.graph_objects.Figure
        The copy.
    """
    out = go.Figure(fig)
    others = {str(n) for n in names} - {str(keep)}
    for trace in out.data:
        meta = trace.meta if isinstance(trace.meta, Mapping) else {}
        name = str(meta.get("name", trace.name))
        if name in others or _esc(name) in {_esc(o) for o in others}:
            trace.opacity = faded
    return out
