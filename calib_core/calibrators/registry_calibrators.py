"""The calibrator registry: one :class:`CalibratorEntry` per recalibration method of both tasks.

Name, class, paper, task, which inputs it needs (feature columns, whether it works on point predictions, binary
labels only, a slice column), its parameters with the defaults read from the class's constructor signature, and the
few parameters worth tuning (:class:`Tunable`: kind, bounds, choices).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import pandas as pd

from . import classification as ccal
from . import regression as rcal
from .registry_metrics import TASKS, check_task

__all__ = [
    "Tunable",
    "CalibratorEntry",
    "CALIBRATORS",
    "calibrator",
    "calibrators",
    "available_calibrators",
    "calibrator_help_table",
    "constructor_defaults",
]


_R, _C = TASKS


def constructor_defaults(cls: type) -> dict[str, Any]:
    """Constructor parameters of ``cls`` with their defaults (from ``inspect.signature``).

    Parameters
    ----------
    cls : type
        A calibrator class.

    Returns
    -------
    dict of str → object
        Parameter name → default, in signature order.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (post-hoc calibration methods compared on held-out rows).
    .. [2] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (the regression recalibrators compared).

    Examples
    --------
    >>> from calib_core.calibrators.regression import SigmaBinning
    >>> constructor_defaults(SigmaBinning)
    {'n_bins': 15, 'mode': 'rmse'}
    """
    return {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    }


@dataclass(frozen=True)
class Tunable:
    """A constructor parameter worth tuning: ``kind`` "bool", "int", "float", "choice", "feature" (the name of a
    feature column) or "slice" (a column slices come from: ``"group"`` or a feature column), bounds
    ``low``/``high`` for numbers, ``options`` for choices, a short ``label`` and ``help``.  The default is the
    constructor's (see :attr:`CalibratorEntry.parameters`).

    Attributes
    ----------
    name : str
        The constructor parameter.
    label : str
        Short label.
    kind : {"bool", "int", "float", "choice", "feature", "slice"}
        What values it takes.
    low, high : float or None
        Bounds of a number.
    options : tuple
        The choices.
    help : str or None
        A sentence of help.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (post-hoc calibration methods compared on held-out rows).
    .. [2] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (the regression recalibrators compared).
    """

    name: str
    label: str
    kind: str
    low: float | None = None
    high: float | None = None
    options: tuple[Any, ...] = ()
    help: str | None = None


@dataclass(frozen=True)
class CalibratorEntry:
    """One recalibration method.

    ``needs_features``: needs feature columns (``x*``); ``point_ok``: works on point predictions (estimates σ);
    ``binary_only``: two classes only; ``needs_slices``: a slice-wise method, fitted per slice of a group or feature
    column (``uses_groups``: it takes ``groups=`` in fit and transform).  ``tunable`` lists the parameters offered for
    tuning; ``default`` marks the methods compared by default.

    Attributes
    ----------
    name : str
        The method's name (``"std scaling"``).
    cls : type
        The calibrator class.
    task : {"regression", "classification"}
        Its task.
    paper : str
        The formula and the paper, in short.
    tunable : tuple of Tunable
        The parameters offered for tuning.
    needs_features, point_ok, binary_only, needs_slices : bool
        The inputs it needs (see above).
    default : bool
        Compared by default.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (the classification calibrators).
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019 (STD scaling, σ-binning).
    .. [3] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2796–2804, 2018 (isotonic recalibration).
    .. [4] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020.
    .. [5] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.

    Examples
    --------
    >>> from calib_core.calibrators import registry
    >>> e = registry.calibrator("σ-binning")
    >>> e.cls.__name__, e.parameters
    ('SigmaBinning', {'n_bins': 15, 'mode': 'rmse'})
    """

    name: str
    cls: type
    task: str
    paper: str
    tunable: tuple[Tunable, ...] = ()
    needs_features: bool = False
    point_ok: bool = False
    binary_only: bool = False
    default: bool = False
    needs_slices: bool = False

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        missing = [t.name for t in self.tunable if t.name not in constructor_defaults(self.cls)]
        if missing:
            raise ValueError(f"{self.cls.__name__} has no parameter(s) {missing}")

    @property
    def parameters(self) -> dict[str, Any]:
        """Every constructor parameter with its default."""
        return constructor_defaults(self.cls)

    def default_of(self, name: str) -> Any:
        return self.parameters[name]

    def make(self, **params: Any) -> Any:
        """An unfitted instance with ``params`` (the others at their defaults)."""
        return self.cls(**params)


_SLICE_BY = Tunable("by", "slice column", "slice",
                    help="The group column or a feature column (numeric features: 5 equal-count bins); one fit per "
                         "slice on its calibration rows.")
_MIN_ROWS = Tunable("min_rows", "min calibration rows per slice", "int", 1, 100000,
                    help="A slice with fewer calibration rows, or one absent from them, uses the global fit.")

CALIBRATORS: tuple[CalibratorEntry, ...] = (
    CalibratorEntry("std scaling", rcal.StdScaling, _R, "σ' = sσ, s² = mean z² (Levi et al. 2019, eq. 12)",
                    default=True),
    CalibratorEntry("MLE + shift", rcal.GaussianShiftScale, _R, "μ' = μ + mσ, σ' = sσ (CRUDE's Gaussian baseline)"),
    CalibratorEntry(
        "isotonic (Kuleshov)", rcal.IsotonicRecalibration, _R, "R∘F with R isotonic (Kuleshov et al. 2018)",
        (Tunable("add_endpoint", "add the (1, 1) end point", "bool",
                 help="Quantile regularization §3: avoids a truncated support"),),
        default=True,
    ),
    CalibratorEntry("CRUDE", rcal.CRUDE, _R, "μ + σ·Ẑ, empirical z-scores (Zelikman et al.)", default=True),
    CalibratorEntry(
        "split conformal", rcal.SplitConformal, _R, "μ ± σ·q on |z| (split conformal)",
        (Tunable("signed", "signed scores", "bool", help="asymmetric intervals from signed z"),),
    ),
    CalibratorEntry(
        "σ-binning", rcal.SigmaBinning, _R, "σ' = RMSE of the σ-bin (Levi et al. §3.1)",
        (Tunable("n_bins", "σ-bins", "int", 2, 500), Tunable("mode", "map", "choice", options=("rmse", "ratio"))),
        default=True,
    ),
    CalibratorEntry("σ-isotonic", rcal.SigmaIsotonic, _R, "σ'² = isotonic regression of ε² on σ (Levi et al. §3.1)"),
    CalibratorEntry("constant σ", rcal.ConstantSigma, _R, "σ' = calibration RMSE (ACCRUE Table 1)", point_ok=True),
    CalibratorEntry(
        "k-means σ", rcal.KMeansSigma, _R, "σ' = RMSE of the k-means cluster of x (ACCRUE Table 1)",
        (Tunable("n_clusters", "clusters", "int", 1, 200),),
        needs_features=True, point_ok=True,
    ),
    CalibratorEntry(
        "ACCRUE", rcal.ACCRUE, _R, "σ(x) minimising β·CRPS + (1 − β)·RS (Camporeale & Carè)",
        (Tunable("model", "σ(x) model", "choice", options=("polynomial", "mlp")),
         Tunable("feature", "feature (polynomial)", "feature"),
         Tunable("max_degree", "max degree", "int", 0, 10)),
        needs_features=True, point_ok=True,
    ),
    # -- slice-wise ------------------------------------------------------------------------
    CalibratorEntry(
        "std scaling per slice", rcal.GroupStdScaling, _R,
        "σ' = s_g σ, s_g² = mean z² over the calibration rows of slice g (Levi et al. 2019 eq. 12, per slice)",
        (_SLICE_BY, _MIN_ROWS), needs_slices=True, point_ok=True,
    ),
    CalibratorEntry(
        "Mondrian conformal", rcal.MondrianConformal, _R,
        "μ ± σ·q_g, q_g the ⌈(L_g + 1)(1 − α)⌉-th |z| of slice g (Vovk et al. 2003, Mondrian confidence machine)",
        (_SLICE_BY, _MIN_ROWS, Tunable("signed", "signed scores", "bool", help="asymmetric intervals from signed z")),
        needs_slices=True, point_ok=True,
    ),
    CalibratorEntry("temperature scaling", ccal.TemperatureScaling, _C, "softmax(z/T) (Guo et al. 2017 §4.2)",
                    default=True),
    CalibratorEntry(
        "temperature scaling per slice", ccal.GroupTemperatureScaling, _C,
        "softmax(z/T_g), T_g minimising the NLL of slice g (Guo et al. 2017 §4.2, per slice)",
        (_SLICE_BY, _MIN_ROWS), needs_slices=True,
    ),
    CalibratorEntry("vector scaling", ccal.VectorScaling, _C, "diag(W)·z + b (Guo §4.2)",
                    (Tunable("l2", "L2 penalty", "float", 0.0, 1000.0),)),
    CalibratorEntry("matrix scaling", ccal.MatrixScaling, _C, "W·z + b (Guo §4.2)",
                    (Tunable("l2", "L2 penalty", "float", 0.0, 1000.0),)),
    CalibratorEntry("Platt scaling", ccal.PlattScaling, _C, "σ(a·z + b) (Platt 1999)", binary_only=True),
    CalibratorEntry(
        "histogram binning", ccal.HistogramBinning, _C, "bin frequency (Zadrozny & Elkan 2001)",
        (Tunable("n_bins", "bins", "int", 2, 500),
         Tunable("strategy", "bins", "choice", options=("uniform", "quantile"))),
        default=True,
    ),
    CalibratorEntry(
        "isotonic", ccal.IsotonicCalibration, _C, "isotonic regression (Zadrozny & Elkan 2002)",
        (Tunable("interpolation", "interpolation", "choice", options=("linear", "step")),),
        default=True,
    ),
    CalibratorEntry(
        "BBQ", ccal.BBQ, _C, "Bayesian binning into quantiles (Naeini et al. 2015)",
        (Tunable("c", "binning-size constant C", "float", 0.5, 1000.0),
         Tunable("prior_strength", "Beta prior strength", "float", 0.01, 1000.0)),
        default=True,
    ),
)

_CAL_BY_NAME: dict[tuple[str, str], CalibratorEntry] = {(e.task, e.name): e for e in CALIBRATORS}
if len(_CAL_BY_NAME) != len(CALIBRATORS):  # pragma: no cover - a registry edit gone wrong
    raise RuntimeError("duplicate (task, name) in the calibrator registry")


def calibrator(name: str, task: str | None = None) -> CalibratorEntry:
    """The registry entry named ``name`` (optionally of one task).

    Parameters
    ----------
    name : str
        The method's name (``"CRUDE"``).
    task : {"regression", "classification"} or None, default None
        Look in one task only.

    Returns
    -------
    CalibratorEntry
        The entry.

    Raises
    ------
    KeyError
        An unknown name.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (post-hoc calibration methods compared on held-out rows).
    .. [2] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (the regression recalibrators compared).

    Examples
    --------
    >>> calibrator("CRUDE").cls.__name__
    'CRUDE'
    """
    check_task(task)
    for t in (task,) if task is not None else TASKS:
        if (t, name) in _CAL_BY_NAME:
            return _CAL_BY_NAME[(t, name)]
    raise KeyError(f"unknown calibrator {name!r}" + (f" for {task}" if task else ""))


def calibrators(task: str | None = None) -> list[CalibratorEntry]:
    """Registry entries in registry order, optionally of one task.

    Parameters
    ----------
    task : {"regression", "classification"} or None, default None
        The task (None: both).

    Returns
    -------
    list of CalibratorEntry
        The entries.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (post-hoc calibration methods compared on held-out rows).
    .. [2] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (the regression recalibrators compared).

    Examples
    --------
    >>> [e.name for e in calibrators("classification")][:3]
    ['temperature scaling', 'temperature scaling per slice', 'vector scaling']
    """
    check_task(task)
    return [e for e in CALIBRATORS if task is None or e.task == task]


def available_calibrators(
    task: str, *, point_only: bool = False, has_features: bool = False, n_classes: int | None = None,
    has_slices: bool = False,
) -> list[CalibratorEntry]:
    """The calibrators that can run on a set of ``task`` with these inputs: feature-based ones only with features,
    σ-estimating ones only for point predictions, binary-only ones only for two classes, slice-wise ones only when
    the set has a slice column (``has_slices``: a group or feature column).

    Parameters
    ----------
    task : {"regression", "classification"}
        The set's task.
    point_only : bool, default False
        The set has point predictions only.
    has_features : bool, default False
        The set has feature columns.
    n_classes : int or None, default None
        The number of classes.
    has_slices : bool, default False
        The set has a slice column.

    Returns
    -------
    list of CalibratorEntry
        The entries that can run, in registry order.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (post-hoc calibration methods compared on held-out rows).
    .. [2] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020 (the regression recalibrators compared).

    Examples
    --------
    >>> [e.name for e in available_calibrators("regression", point_only=True, has_features=True)]
    ['constant σ', 'k-means σ', 'ACCRUE']
    """
    out = []
    for e in calibrators(task):
        if e.needs_features and not has_features:
            continue
        if e.needs_slices and not has_slices:
            continue
        if point_only and not e.point_ok:
            continue
        if e.binary_only and n_classes != 2:
            continue
        out.append(e)
    return out


def _inputs_text(e: CalibratorEntry) -> str:
    needs = []
    if e.needs_features:
        needs.append("feature columns x*")
    if e.point_ok:
        needs.append("works on point predictions")
    if e.binary_only:
        needs.append("two classes only")
    if e.needs_slices:
        needs.append("a slice column (group or feature)")
    return "; ".join(needs)


def calibrator_help_table(task: str | None = None) -> pd.DataFrame:
    """One row per calibrator: calibrator, task, class, paper, inputs, parameters (name = default).

    Parameters
    ----------
    task : {"regression", "classification"} or None, default None
        The task (None: both).

    Returns
    -------
    DataFrame
        The Help page's table of the calibrators.

    References
    ----------
    .. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural networks", Proc. 34th
           ICML, PMLR 70, 1321–1330, 2017 (the classification calibrators).
    .. [2] D. Levi, L. Gispan, N. Giladi and E. Fetaya, "Evaluating and calibrating uncertainty prediction in
           regression tasks", arXiv:1905.11659, 2019 (STD scaling, σ-binning).
    .. [3] V. Kuleshov, N. Fenner and S. Ermon, "Accurate uncertainties for deep learning using calibrated
           regression", Proc. 35th ICML, PMLR 80, 2796–2804, 2018 (isotonic recalibration).
    .. [4] E. Zelikman, C. Healy, S. Zhou and A. Avati, "CRUDE: Calibrating regression uncertainty distributions
           empirically", arXiv:2005.12496, 2020.
    .. [5] E. Camporeale and A. Carè, "ACCRUE: Accurate and reliable uncertainty estimate in deterministic
           models", International Journal for Uncertainty Quantification 11(4), 81–94, 2021.
    """
    rows = [
        {
            "calibrator": e.name,
            "task": e.task,
            "class": e.cls.__name__,
            "paper": e.paper,
            "inputs": _inputs_text(e),
            "parameters": ", ".join(f"{k}={v!r}" for k, v in e.parameters.items()),
        }
        for e in calibrators(task)
    ]
    return pd.DataFrame(rows, columns=["calibrator", "task", "class", "paper", "inputs", "parameters"])
