"""Anytime-valid monitoring: e-processes built from betting factors, averaged within a time, with a lag correction.

A forecaster claims that each target is a draw from its forecast.  A *betting factor* is a nonnegative function
of a row's outcome, chosen before the outcome is known, whose expectation under that claim is 1.  The product of
the factors over time, E_t = ∏_{s ≤ t} F_s, is a test martingale (Ville 1939; Shafer, Shen, Vereshchagin & Vovk
2011): E_0 = 1, E_t ≥ 0 and E[E_t | past] = E_{t−1} under the claim.  Ville's inequality,

    P( sup_t E_t ≥ 1/α ) ≤ α,

makes "alarm as soon as E_t ≥ 1/α" a test of level α however often and however long one looks (Ramdas, Grünwald,
Vovk & Shafer 2023).  The house builds e-processes as follows:

* **one step per time**: the rows of one time (50 locations forecast for one week) form one step, and their factors
  are *averaged*, F_t = (1/n_t) Σ_i f_i.  A mean of factors each of conditional mean 1 has conditional mean 1,
  whatever the dependence between the rows of that time (a date effect shared by every location): the average is
  valid where the product over rows would not be;
* **a mixture of bets**: M betting strategies (components) run side by side and the e-process is their average,
  E_t = (1/M) Σ_m ∏_{s ≤ t} F^m_s — itself a test martingale, which follows the best strategy at the price of at
  most a factor M;
* **lag h** (forecasts h steps ahead: the outcome of time t is known only at t, while the forecast was made at
  t − h): the steps are split into h interleaved sequences t ≡ j (mod h), each a test martingale in its own
  filtration when the bet of time t uses outcomes of times ≤ t − h only, and e_t = (1/h) Σ_j E^j_t (Henzi & Ziegel
  2022, with its correction; Arnold, Henzi & Ziegel 2023).  The average is no supermartingale for h > 1, but
  E[e_{τ+h−1}] ≤ 1 at every stopping time τ, so the alarm is raised on the value the evidence is *guaranteed* to
  keep once the h − 1 forecasts already issued are resolved: e_t^guar = (1/h) Σ_j (1/M) Σ_m E^{j,m}_t · φ^{j,m}_t,
  φ the smallest factor the next pending step of sequence j can pay (1 when none is pending).  For h = 1 it is e_t.

The estimated start of a change is the time after which the evidence grew most, ŝ = argmax_{s ≤ t*} E_{t*}/E_s (t*
the alarm time, or the last time without an alarm), where E is the e-process of the best bet in hindsight on the
steps s … t* — the likelihood ratio of the law seen there against the null, maximised over that law: the maximum
likelihood estimate of a single change (Hinkley 1970), given by each task as a ``change_score``.  Without one, the
step after the (latest near-) minimum of e before t* (:func:`change_point_index`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp

__all__ = [
    "MonitorResult",
    "time_steps",
    "combine_eprocess",
    "change_point_index",
    "time_unit",
    "monitor_sentence",
    "monitor_result",
    "PATH_COLUMNS",
]

#: The columns of :attr:`MonitorResult.path`, in order
PATH_COLUMNS = ("model", "time", "n", "factor", "e_value", "log10_e", "e_guaranteed", "alarm")



@dataclass(frozen=True)
class MonitorResult:
    """The e-value path of an anytime-valid calibration monitor, per model, with its alarm and change point.

    Attributes
    ----------
    path : pandas.DataFrame
        One row per model and time (columns :data:`PATH_COLUMNS`): ``n`` rows at that time, ``factor`` = e_t/e_{t−1}
        (the step's betting factor), ``e_value`` = e_t, the e-process after that time, ``log10_e``,
        ``e_guaranteed`` (the value the alarm reads; e_t when lag = 1) and ``alarm`` (e_guaranteed ≥ 1/α).
    summary : pandas.DataFrame
        One row per model: ``model, n_times, n_rows, alarm_time, change_point, e_value, max_e, sentence``.
    alarm_time : object or None
        The first time the alarm line was reached (the earliest over models when there are several), or None.
        Each model's alarm holds the level α on its own; "any of K models" would need α/K.
    change_point : object or None
        Estimated start of the change (of that model; with several models, of the model that alarmed first): the
        time after which the evidence grew most, argmax_{s ≤ t*} E_{t*}/E_s for the best bet in hindsight on the
        steps s … t* (t* the alarm time, or the last time; the module docstring).
    threshold : float
        The alarm line 1/α.
    alpha : float
        The level: under calibration the alarm is raised with probability at most α, however often one looks.
    lag : int
        Steps between a forecast and its outcome (h interleaved e-processes when > 1).
    sentence : str
        What the monitor says, one sentence per model.
    method : str
        The bets, in words.
    unit : str
        The time unit used in the sentence ("week", "day", "month", "time step").

    References
    ----------
    .. [1] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [2] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [3] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.
    """

    path: pd.DataFrame
    summary: pd.DataFrame
    alarm_time: Any
    change_point: Any
    threshold: float
    alpha: float
    lag: int
    sentence: str
    method: str = ""
    unit: str = "time step"
    notes: list[str] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        """The models monitored, in order."""
        return [str(m) for m in self.summary["model"]]

    def model(self, name: str) -> MonitorResult:
        """The result of one model.

        Parameters
        ----------
        name : str
            A model of :attr:`models`.

        Returns
        -------
        MonitorResult
            The same monitor restricted to that model.
        """
        if name not in self.models:
            raise KeyError(f"no model {name!r}; the models are {', '.join(map(repr, self.models))}")
        row = self.summary.loc[self.summary["model"] == name].iloc[0]
        return MonitorResult(
            path=self.path.loc[self.path["model"] == name].reset_index(drop=True),
            summary=self.summary.loc[self.summary["model"] == name].reset_index(drop=True),
            alarm_time=_plain(row["alarm_time"]), change_point=_plain(row["change_point"]), threshold=self.threshold,
            alpha=self.alpha, lag=self.lag, sentence=str(row["sentence"]), method=self.method, unit=self.unit,
            notes=list(self.notes))


def time_steps(time: Any) -> tuple[np.ndarray, np.ndarray]:
    """The steps of a monitor: the distinct times in order, and each row's step.

    Step k is the k-th distinct time value (t_0 < t_1 < …); rows with the same time are one step.

    Parameters
    ----------
    time : array-like of shape (N,)
        Times (dates or numbers); no missing values.

    Returns
    -------
    codes : ndarray of int64 of shape (N,)
        Each row's step 0..T−1.
    labels : ndarray of shape (T,)
        The distinct times, sorted.

    References
    ----------
    .. [1] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663.

    Examples
    --------
    >>> codes, labels = time_steps(np.array([3, 1, 3, 2]))
    >>> codes.tolist(), labels.tolist()
    ([2, 0, 2, 1], [1, 2, 3])
    """
    values = np.asarray(time)
    if values.dtype.kind == "O":
        values = _ordered(values)
    labels, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64).ravel(), labels


def _ordered(values: np.ndarray) -> np.ndarray:
    """Object times as numbers, else dates, else text (sorted as text)."""
    try:
        return values.astype(float)
    except (TypeError, ValueError):
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            dates = pd.to_datetime(values)
        if dates.tz is not None:
            dates = dates.tz_convert("UTC").tz_localize(None)
        try:  # nanoseconds when they fit, else the unit pandas read them in (a cast would move 1500 to 2084)
            return dates.as_unit("ns").to_numpy()
        except pd.errors.OutOfBoundsDatetime:
            return dates.to_numpy()
    except (TypeError, ValueError):
        return values.astype(str)


def combine_eprocess(log_factors: np.ndarray, floors: np.ndarray | None = None,
                     lag: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The mixture e-process of M betting strategies over T steps, with h = ``lag`` interleaved sequences.

    log e_t = logsumexp_{j, m} S^{j,m}_t − log(hM),  S^{j,m}_t = Σ_{s ≤ t, s ≡ j (mod h)} log F^m_s;
    the guaranteed value e^guar_t multiplies each S^{j,m}_t's term by φ^m_{t'} for the pending step t' of sequence j
    (t < t' ≤ t + h − 1), the smallest factor that step can pay.

    Parameters
    ----------
    log_factors : ndarray of shape (M, T)
        log F^m_t, the log betting factor of strategy m at step t (−inf allowed: that strategy went bust).
    floors : ndarray of shape (M, T + h − 1), optional
        φ^m_t ∈ [0, 1], the smallest factor strategy m can pay at step t (steps beyond T: steps not yet observed).
        Needed when h > 1.
    lag : int, default 1
        h ≥ 1.

    Returns
    -------
    log_e : ndarray of shape (T,)
        log e_t (natural log).
    log_guaranteed : ndarray of shape (T,)
        log e^guar_t (= log_e when h = 1).

    References
    ----------
    .. [1] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [2] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [3] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    .. [4] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> log_e, _ = combine_eprocess(np.log([[2.0, 2.0], [0.5, 0.5]]))
    >>> np.round(np.exp(log_e), 3).tolist()
    [1.25, 2.125]
    """
    lf = np.atleast_2d(np.asarray(log_factors, dtype=float))
    m, t_n = lf.shape
    h = int(lag)
    if h < 1:
        raise ValueError(f"lag must be an integer >= 1, got {lag!r}")
    steps = np.arange(t_n)
    residue = steps % h
    per = np.zeros((h, m, t_n))
    per[residue, :, steps] = lf.T
    with np.errstate(invalid="ignore"):
        cum = np.cumsum(per, axis=2)  # S^{j,m}_t
    cum = np.where(np.isnan(cum), -np.inf, cum)
    norm = math.log(h * m)
    log_e = logsumexp(cum.reshape(h * m, t_n), axis=0) - norm
    if h == 1 or t_n == 0:
        return log_e, log_e.copy()
    fl = np.asarray(floors, dtype=float)
    js = np.arange(h)[:, None]
    pending = steps[None, :] + (js - steps[None, :]) % h  # next step of sequence j after t (t itself for j ≡ t)
    with np.errstate(divide="ignore"):
        log_fl = np.log(np.clip(fl[:, pending], 0.0, 1.0))  # (M, h, T)
    log_fl = np.where((pending == steps[None, :])[None], 0.0, log_fl)
    guar = logsumexp((cum + np.transpose(log_fl, (1, 0, 2))).reshape(h * m, t_n), axis=0) - norm
    return log_e, np.minimum(guar, log_e)


def change_point_index(log_e: np.ndarray, end: int | None = None, slack: float = 2.0) -> int:
    """The step after which the e-process rose most: ŝ = 1 + argmin_{−1 ≤ s < t*} log e_s (e_{−1} = 1), taking the
    latest s whose e_s is within a factor ``slack`` of the minimum.

    e_{t*}/e_s is largest at the minimum of e before t*; before a change e wanders around its level by small
    factors, so the latest s within a factor 2 of the minimum (whose rise e_{t*}/e_s is at least half the largest)
    marks the start of the rise rather than a chance low long before it.

    Parameters
    ----------
    log_e : ndarray of shape (T,)
        log e_t.
    end : int, optional
        t*, the alarm step (default: the last step).
    slack : float, default 2.0
        Values within this factor of the minimum count as the minimum (1: the plain argmin).

    Returns
    -------
    int
        The first step of the rise (0 when the evidence rose from the start).

    References
    ----------
    .. [1] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [2] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> change_point_index(np.log([0.9, 0.5, 0.6, 0.7, 30.0]))
    4
    >>> change_point_index(np.log([0.9, 0.5, 0.6, 0.7, 30.0]), slack=1.0)
    2
    """
    le = np.asarray(log_e, dtype=float)
    stop = len(le) - 1 if end is None else int(end)
    before = np.concatenate([[0.0], le[:stop]])  # log e before step k, k = 0..t*
    near = before <= before.min() + math.log(max(float(slack), 1.0)) + 1e-12
    return int(np.flatnonzero(near)[-1])


def time_unit(labels: np.ndarray) -> str:
    """The time unit of a monitor's steps, for its sentence: "week", "day", "month" or "time step".

    Parameters
    ----------
    labels : ndarray
        The distinct times, sorted.

    Returns
    -------
    str
        "week" when dates are about 7 days apart, "day" for 1 day, "month" for 28–31 days, else "time step".

    References
    ----------
    .. [1] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [2] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [3] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    .. [4] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> time_unit(np.array(["2026-01-03", "2026-01-10"], dtype="datetime64[ns]"))
    'week'
    """
    lab = np.asarray(labels)
    if lab.dtype.kind != "M" or lab.size < 2:
        return "time step"
    days = float(np.median(np.diff(lab).astype("timedelta64[s]").astype(float))) / 86_400.0
    if abs(days - 7) < 0.5:
        return "week"
    if abs(days - 1) < 0.05:
        return "day"
    if 27.5 <= days <= 31.5:
        return "month"
    return "time step"


def _label(value: Any, unit: str) -> str:
    if isinstance(value, np.datetime64 | pd.Timestamp):
        ts = pd.Timestamp(value)  # the year with four digits (strftime writes the year 1 as "1")
        return f"{ts.year:04d}" + (ts.strftime("-%m") if unit == "month" else (
            ts.strftime("-%m-%d") if ts == ts.normalize() else ts.strftime("-%m-%d %H:%M")))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _fmt_e(e: float) -> str:
    if not np.isfinite(e):
        return "more than 10^300"
    if e >= 1e4 or (0 < e < 1e-3):
        return f"{e:.1e}"
    return f"{e:.3g}" if e < 10 else f"{e:.0f}"


def monitor_sentence(*, n_steps: int, e_last: float, threshold: float, unit: str, alarm_label: str | None = None,
                     e_alarm: float | None = None, change_label: str | None = None, model: str | None = None) -> str:
    """The monitor's sentence: no alarm (the evidence after all steps) or the alarm and the likely start.

    Parameters
    ----------
    n_steps : int
        Steps seen.
    e_last : float
        e after the last step.
    threshold : float
        The alarm line 1/α.
    unit : str
        Time unit ("week", …).
    alarm_label, change_label : str, optional
        The alarm time and the estimated start of the change, formatted.
    e_alarm : float, optional
        e at the alarm.
    model : str, optional
        Model name, prefixed when given.

    Returns
    -------
    str
        The sentence.

    References
    ----------
    .. [1] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [2] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [3] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    .. [4] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.

    Examples
    --------
    >>> monitor_sentence(n_steps=52, e_last=2.1, threshold=20, unit="week")
    'No alarm: after 52 weeks the evidence against calibration is e = 2.1, below the alarm line 20.'
    """
    head = f"{model}: " if model else ""
    line = _fmt_e(threshold)
    if alarm_label is None:
        steps = f"{n_steps} {unit}{'' if n_steps == 1 else 's'}"
        return (f"{head}No alarm: after {steps} the evidence against calibration is e = {_fmt_e(e_last)}, "
                f"below the alarm line {line}.")
    where = {"week": "in week", "day": "on day", "month": "in month"}.get(unit, "at time")
    start = f"; the change most likely began around {change_label}" if change_label is not None else ""
    return f"{head}Alarm {where} {alarm_label} (e = {_fmt_e(float(e_alarm or 0.0))} ≥ {line}){start}."


def monitor_result(parts: list[dict[str, Any]], *, alpha: float, lag: int, method: str,
                   notes: list[str] | None = None) -> MonitorResult:
    """Assemble a :class:`MonitorResult` from the e-process of each model.

    Parameters
    ----------
    parts : list of dict
        Per model: ``model`` (str), ``labels`` (the T times), ``n`` (rows per step), ``log_e`` and
        ``log_guaranteed`` (from :func:`combine_eprocess`), optionally ``change_score``: a function of t* giving,
        for every s ≤ t*, the log evidence of the best bet in hindsight on the steps s … t* (a generalised
        likelihood ratio); the change point is then its argmax, else :func:`change_point_index` of e.
    alpha : float
        Level; the alarm line is 1/α.
    lag : int
        The lag h used.
    method : str
        The bets, in words.
    notes : list of str, optional
        Notes to keep.

    Returns
    -------
    MonitorResult
        Path, per-model summary, alarm, change point and sentence.

    References
    ----------
    .. [1] Ville, J. (1939). *Étude critique de la notion de collectif*. Gauthier-Villars, Paris.
    .. [2] Shafer, G., Shen, A., Vereshchagin, N. & Vovk, V. (2011). Test martingales, Bayes factors and p-values.
       *Statistical Science* 26(1), 84–101.
    .. [3] Henzi, A. & Ziegel, J. F. (2022). Valid sequential inference on probability forecast performance.
       *Biometrika* 109(3), 647–663 (correction: *Biometrika* 109(4), 1181).
    .. [4] Arnold, S., Henzi, A. & Ziegel, J. F. (2023). Sequentially valid tests for forecast calibration.
       *Annals of Applied Statistics* 17(3), 1909–1935.
    .. [5] Ramdas, A., Grünwald, P., Vovk, V. & Shafer, G. (2023). Game-theoretic statistics and safe anytime-valid
       inference. *Statistical Science* 38(4), 576–601.
    .. [6] Hinkley, D. V. (1970). Inference about the change-point in a sequence of random variables.
       *Biometrika* 57(1), 1–17.

    Examples
    --------
    >>> le = np.log([1.5, 4.0, 25.0])
    >>> r = monitor_result([dict(model="m", labels=np.array([1, 2, 3]), n=np.array([5, 5, 5]), log_e=le,
    ...                          log_guaranteed=le)], alpha=0.05, lag=1, method="")
    >>> r.alarm_time, r.change_point
    (3, 2)
    >>> r.sentence
    'Alarm at time 3 (e = 25 ≥ 20); the change most likely began around 2.'
    """
    threshold = 1.0 / float(alpha)
    log_thr = math.log(threshold)
    frames, rows = [], []
    units = [time_unit(p["labels"]) for p in parts]
    unit = units[0] if units and len(set(units)) == 1 else "time step"
    for p in parts:
        le = np.asarray(p["log_e"], dtype=float)
        lg = np.asarray(p["log_guaranteed"], dtype=float)
        labels = np.asarray(p["labels"])
        alarm = lg >= log_thr - 1e-12
        t_n = le.size
        hit = int(np.argmax(alarm)) if alarm.any() else None
        cp = None
        if t_n:
            end = t_n - 1 if hit is None else hit
            score = p.get("change_score")
            cp = change_point_index(le, hit) if score is None else int(np.argmax(np.asarray(score(end))[: end + 1]))
        prev = np.concatenate([[0.0], le[:-1]])
        with np.errstate(invalid="ignore"):
            factor = np.exp(le - prev)
        frames.append({"model": np.full(t_n, p["model"], dtype=object), "time": labels,
                       "n": np.asarray(p["n"], dtype=np.int64), "factor": factor, "e_value": np.exp(le),
                       "log10_e": le / math.log(10), "e_guaranteed": np.exp(lg), "alarm": alarm})
        alarm_time = labels[hit] if hit is not None else None
        rows.append({
            "model": p["model"], "n_times": t_n, "n_rows": int(np.sum(p["n"])),
            "alarm_time": _plain(alarm_time), "change_point": None if cp is None else _plain(labels[cp]),
            "e_value": float(np.exp(le[-1])) if t_n else 1.0, "max_e": float(np.exp(le.max())) if t_n else 1.0,
            "sentence": monitor_sentence(
                n_steps=t_n, e_last=float(np.exp(le[-1])) if t_n else 1.0, threshold=threshold, unit=unit,
                alarm_label=None if hit is None else _label(alarm_time, unit),
                e_alarm=None if hit is None else float(np.exp(lg[hit])),
                change_label=None if hit is None or cp is None else _label(labels[cp], unit)),
        })
    path = pd.DataFrame({c: np.concatenate([f[c] for f in frames]) if frames else [] for c in PATH_COLUMNS})
    summary = pd.DataFrame(rows, columns=["model", "n_times", "n_rows", "alarm_time", "change_point", "e_value",
                                          "max_e", "sentence"])
    alarmed = summary.dropna(subset=["alarm_time"]) if len(summary) else summary
    if len(summary) == 1:
        alarm_time, change_point = _plain(summary["alarm_time"].iloc[0]), _plain(summary["change_point"].iloc[0])
    elif len(alarmed):
        first = alarmed.sort_values("alarm_time", kind="stable").iloc[0]
        alarm_time, change_point = _plain(first["alarm_time"]), _plain(first["change_point"])
    else:
        alarm_time, change_point = None, None
    return MonitorResult(path=path, summary=summary, alarm_time=alarm_time, change_point=change_point,
                         threshold=threshold, alpha=float(alpha), lag=int(lag),
                         sentence=" ".join(f"{m}: {t}" if len(summary) > 1 else str(t)
                                           for m, t in zip(summary["model"], summary["sentence"], strict=True)),
                         method=method, unit=unit,
                         notes=list(notes or []))


def _plain(value: Any) -> Any:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, np.datetime64):
        return pd.Timestamp(value)
    if isinstance(value, np.generic):
        return value.item()
    return value
