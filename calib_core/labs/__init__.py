"""Teaching labs: the seed papers' central demonstrations as reproducible computations.

Each lab is a small module here (``calib_core.labs.<key>``) with a ``run_*`` function that takes the
lab's slider values (N, seed, noise, bins, …) and returns a frozen result object: the numbers the lab
claims (so tests can check the claim) and the diagram data / Plotly figures built by
``calib_core.plots``.  The Streamlit pages ``pages/lab_<key>.py`` only lay out sliders and call these.

:data:`LABS` is the index: one :class:`Lab` per page with its one-sentence lesson and the paper
section it reproduces.  The lab index page (``pages/labs.py``) and ``app.py``'s navigation read it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LABS", "Lab", "lab"]


@dataclass(frozen=True)
class Lab:
    """One teaching lab: its module, page, title, lesson and the paper section it reproduces.

    Attributes
    ----------
    key : str
        Module ``calib_core.labs.<key>``, page ``pages/lab_<key>.py``.
    title : str
        The lab's title.
    lesson : str
        The one-sentence lesson.
    reference : str
        The paper section it reproduces.
    icon : str, default ":material/school:"
        The page's icon.

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [4] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [5] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [6] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [7] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    .. [8] Van Calster, B., Nieboer, D., Vergouwe, Y., De Cock, B., Pencina, M. J. & Steyerberg, E. W. (2016). A
       calibration hierarchy for risk models was defined: from utopia to empirical data. Journal of Clinical
       Epidemiology 74, 167–176.
    """

    key: str
    title: str
    lesson: str
    reference: str
    icon: str = ":material/school:"

    @property
    def page_file(self) -> str:
        """File name of the lab's Streamlit page under ``pages/``.

        Returns
        -------
        str
            ``lab_<key>.py``.
        """
        return f"lab_{self.key}.py"


#: The labs, in teaching order.
LABS: tuple[Lab, ...] = (
    Lab(
        "random_sigma",
        "Random uncertainty looks calibrated",
        "After Kuleshov's isotonic recalibration a forecaster whose σ is pure noise has a quantile-calibration "
        "curve as straight as one with a learned σ; only the Levi RMSE-vs-RMV diagram and ENCE tell them apart "
        "(Cv, the spread of σ, is ≈ 0.47 for both).",
        "Levi et al. 2019, §4.1, Fig. 1–2",
    ),
    Lab(
        "cauchy",
        "The Cauchy example",
        "Cauchy(0, |z|) forecasts of N(0, 1) targets are exactly quantile calibrated yet carry no information "
        "about each error: average calibration is necessary, not sufficient.",
        "Levi et al. 2019, §2",
    ),
    Lab(
        "marginal",
        "The degenerate marginal forecaster",
        "Predicting the same marginal distribution for every x is perfectly quantile calibrated; only sharpness "
        "and the Levi diagram reveal that it ignores x.",
        "Utpala & Rai, quantile regularisation, §4.3",
    ),
    Lab(
        "isotonic",
        "Isotonic side effects",
        "Kuleshov's isotonic recalibration fitted on a few calibration points truncates the predictive support, "
        "makes the density spiky and shifts the mean.",
        "Utpala & Rai, quantile regularisation, §3",
    ),
    Lab(
        "nlpd",
        "Same NLPD, different reliability",
        "NLPD mixes accuracy and reliability: models with equal NLPD can be differently reliable, and NLPD can "
        "fall while reliability gets worse.",
        "Camporeale & Carè (ACCRUE), §3, Fig. 2",
    ),
    Lab(
        "three_names",
        "Three names, one algorithm",
        "CRUDE, normalised split conformal prediction and Kuleshov recalibration of Gaussian forecasts all take "
        "quantiles of the standardised calibration errors: the same intervals under three names.",
        "Zelikman et al. (CRUDE) §3; Kuleshov et al. 2018",
    ),
    Lab(
        "accrue",
        "ACCRUE on toy data",
        "Minimising CRPS plus a reliability score recovers the true σ(x) on the G, Y, W and 5D toy sets far "
        "better than a k-means σ; CRPS alone, a proper score, comes close on most sets, and the reliability term "
        "pays where the fit is limited (Y).",
        "Camporeale & Carè (ACCRUE), §5.1, Figs. 4–7, Table 1",
    ),
    Lab(
        "quantile_reg",
        "Quantile regularisation",
        "Subtracting λ·(entropy of the training PIT) from the NLL loss stops an over-fitting network from "
        "collapsing its σ: on held-out rows the NLL falls by orders of magnitude and the calibration curve "
        "straightens on most splits.",
        "Utpala & Rai, quantile regularisation, §4",
    ),
    Lab(
        "temperature",
        "Why temperature scaling works",
        "A deep classifier's confidence outruns its accuracy; one temperature fixes it without changing a "
        "single prediction, and the ECE you see depends on the bins and, for a binary classifier, on whether "
        "you score the top label or the positive class.",
        "Guo et al. 2017, §3–5",
    ),
    Lab(
        "error_law",
        "The reference value depends on the error law",
        "The same forecasts, calibrated in variance, get different perfect-calibration references for ENCE and mean "
        "log z² under Gaussian, Student-t and empirical-z errors, so a verdict against the wrong law calls a "
        "calibrated forecaster miscalibrated; ZMS keeps its reference 1 and only its band widens.",
        "Pernot 2024, arXiv 2403.00423, §3–4; arXiv 2402.10043",
    ),
    Lab(
        "clinical",
        "Clinical calibration: intercept, slope and groups",
        "A model over-fitted on few patients is right on average but too extreme (slope < 1); the same model moved "
        "to a hospital with another baseline risk keeps its slope but misses the average (calibration-in-the-large "
        "off); Hosmer–Lemeshow's verdict moves with its number of groups; an intercept update fixes only the "
        "average, logistic recalibration both, isotonic regression the curve at the price of steps.",
        "Van Calster et al. 2016 (levels of calibration); Austin & Steyerberg 2019, §2 (ICI); Steyerberg 2019, "
        "ch. 15, 20; Hosmer & Lemeshow 1980",
        icon=":material/local_hospital:",
    ),
)


def lab(key: str) -> Lab:
    """The :class:`Lab` called ``key``.

    Parameters
    ----------
    key : str
        A lab key.

    Returns
    -------
    Lab
        The lab.

    Raises
    ------
    KeyError
        Listing the keys, if there is no such lab.

    Examples
    --------
    >>> lab("cauchy").reference
    'Levi et al. 2019, §2'

    References
    ----------
    .. [1] Levi, D., Gispan, L., Giladi, N., & Fetaya, E. (2019). Evaluating and calibrating uncertainty
       prediction in regression tasks. arXiv:1905.11659.
    .. [2] Kuleshov, V., Fenner, N., & Ermon, S. (2018). Accurate uncertainties for deep learning using calibrated
       regression. Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80,
       2796–2804.
    .. [3] Guo, C., Pleiss, G., Sun, Y., & Weinberger, K. Q. (2017). On calibration of modern neural networks.
       Proceedings of the 34th International Conference on Machine Learning (ICML), PMLR 70, 1321–1330.
    .. [4] Utpala, S., & Rai, P. (2020). Quantile regularization: towards implicit calibration of regression
       models. arXiv:2002.12860.
    .. [5] Camporeale, E., & Carè, A. (2021). ACCRUE: accurate and reliable uncertainty estimate in deterministic
       models. International Journal for Uncertainty Quantification, 11(4), 81–94.
    .. [6] Zelikman, E., Healy, C., Zhou, S., & Avati, A. (2020). CRUDE: calibrating regression uncertainty
       distributions empirically. arXiv:2005.12496.
    .. [7] Pernot, P. (2024). Negative impact of heavy-tailed uncertainty and error distributions on the
       reliability of calibration statistics for machine learning regression tasks. arXiv:2402.10043.
    """
    for item in LABS:
        if item.key == key:
            return item
    raise KeyError(f"no lab {key!r}; labs: {', '.join(item.key for item in LABS)}")
