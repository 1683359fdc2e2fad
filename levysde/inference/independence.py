"""Are the neurons independent? A test of common shocks across neurons (docs/specification.md §8).

Every standard error of ``levysde check`` resamples whole neurons, which is valid only when the
neurons move independently. A shock common to many neurons at one record (a jump of the whole
network, a shared learning-rate change) makes their increments at that record correlated, and the
cross-sectional mean of the increments then varies from record to record far more than
independent neurons allow (:func:`independence_test`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from levysde.core.jsonable import finite_or_none
from levysde.core.status import Status
from levysde.core.validate import check_array, check_real

__all__ = ["Independence", "independence_test", "INDEPENDENCE_LEVEL"]

#: level of the test: the neurons are called dependent when the p-value is below it
INDEPENDENCE_LEVEL = 0.01


@dataclass(frozen=True)
class Independence:
    r"""The result of :func:`independence_test`.

    Attributes
    ----------
    independent : bool
        The test passed (no evidence of a common component).
    status : levysde.core.status.Status
        OK (passed), FAILED (dependent) or UNAVAILABLE (too few records or neurons).
    ratio : float
        :math:`S/\mathrm{df}`, the variance of the records' mean increments relative to what
        independent neurons give (about 1 for independent neurons; :math:`1 + (Q - 1)\rho` under a
        common shock of correlation :math:`\rho`); NaN when untested.
    df : int
        Degrees of freedom (records used minus 2).
    p_value : float
        :math:`P(\chi^2_{\mathrm{df}} \ge S)`; NaN when untested.
    rho_hat : float
        :math:`(\mathrm{ratio} - 1)/(\bar Q - 1)`, the correlation of two neurons' increments at
        one record; NaN when untested.
    n_records : int
        Records used.
    n_neurons : float
        Mean number of neurons per record used.
    level : float
        The test's level.
    reason : str
        Why it failed or could not be run, or what passed.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> res = independence_test(np.cumsum(rng.normal(size=(50, 200)), axis=0))
    >>> res.status, res.df, res.n_records
    (<Status.OK: 'ok'>, 47, 49)
    >>> sorted(res.as_json())[:4]
    ['df', 'independent', 'level', 'n_neurons']
    """

    independent: bool
    status: Status
    ratio: float
    df: int
    p_value: float
    rho_hat: float
    n_records: int
    n_neurons: float
    level: float
    reason: str

    def as_json(self) -> dict:
        """The JSON object ``independence`` of ``levysde check --json`` (None for NaN)."""
        return {"independent": self.independent, "status": str(self.status), "ratio": finite_or_none(self.ratio),
                "df": self.df, "p_value": finite_or_none(self.p_value), "rho_hat": finite_or_none(self.rho_hat),
                "n_records": self.n_records, "n_neurons": finite_or_none(self.n_neurons), "level": self.level,
                "reason": self.reason}


def independence_test(zeta, step=None, *, level: float = INDEPENDENCE_LEVEL) -> Independence:
    r"""Test the neurons for a common component in their increments at the same record.

    For each record :math:`r` with :math:`Q_r \ge 2` finite increments :math:`dZ_{r,q}` (to the
    next record), the cross-sectional mean :math:`m_r` and standard deviation :math:`s_r` are
    formed. Independent neurons give :math:`\operatorname{Var}(m_r) = \operatorname{Var}(dZ_r)/Q_r`,
    so

    .. math::

        t_r = \sqrt{Q_r}\, (m_r - \hat m_r) / s_r

    is a self-normalised mean, approximately standard normal for :math:`Q_r` in the hundreds
    whatever the increments' law (jumps included), where :math:`\hat m_r` is a straight line in
    the record time fitted to :math:`m_r` (ordinary least squares: a slow common relaxation of the
    mean is not a shock). The statistic is :math:`S = \sum_r t_r^2`, compared with chi-square on
    :math:`\mathrm{df} = R' - 2` degrees of freedom (:math:`R'` records used); the neurons are
    called dependent when :math:`P(\chi^2_{\mathrm{df}} \ge S) <` ``level``. Under a common shock
    with correlation :math:`\rho` between two neurons' increments, :math:`S/\mathrm{df}` is about
    :math:`1 + (Q - 1) \rho`: with :math:`Q = 256` neurons and 50 records a correlation of 0.01 is
    found with high power.

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        zeta per record and neuron (NaN, +-inf = undefined; an increment needs both ends finite).
    step : array_like, shape (R,), optional
        Record times (for the trend; default 0, 1, ..., R - 1).
    level : float in (0, 1), default :data:`INDEPENDENCE_LEVEL`

    Returns
    -------
    Independence
        UNAVAILABLE (``independent`` False) with fewer than 4 usable records or fewer than 16
        neurons per record on average (the normal approximation of the self-normalised mean needs
        them).

    Raises
    ------
    ValueError
        zeta not 2-d real, step not of shape (R,) or not increasing, level outside (0, 1).

    Notes
    -----
    The serial correlation of one neuron's increments (mean reversion) is shared by the records'
    means but leaves ``E S = df`` unchanged; it widens the statistic's law slightly (measured size
    in docs/calibration.md). The test is the one-way analysis of variance of the increments by
    record (Fisher's F with the neurons as replicates; Scheffé 1959, *The Analysis of Variance*,
    §3.1) in self-normalised form, which keeps its level for heavy-tailed increments
    (Giné, Götze & Mason 1997, *Ann. Probab.* 25, 1514: the Student statistic is asymptotically
    normal whenever the increments are in the domain of attraction of the normal law).

    .. math::

        t_r = \frac{\sqrt{Q_r}\,(m_r - \hat m_r)}{s_r}, \qquad
        S = \sum_r t_r^2 \sim \chi^2_{R' - 2}.

    References
    ----------
    * H. Scheffé, *The Analysis of Variance*, Wiley (1959), §3.1.
    * E. Giné, F. Götze, D. M. Mason, "When is the Student t-statistic asymptotically standard
      normal?", *Ann. Probab.* 25 (1997) 1514-1531.
    * The specification, §8: every standard error resamples whole neurons.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = np.cumsum(rng.normal(size=(100, 300)), axis=0)
    >>> independence_test(z).independent
    True
    >>> common = rng.normal(size=(100, 1))                       # a shock shared by every neuron
    >>> independence_test(np.cumsum(rng.normal(size=(100, 300)) + 0.3 * common, axis=0)).independent
    False
    """
    zeta = check_array("zeta", zeta, ndim=2, allow_inf=True, allow_nan=True)
    R = zeta.shape[0]
    step = np.arange(R, dtype=float) if step is None else check_array("step", step, shape=(R,), increasing=True)
    check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    z = np.where(np.isfinite(zeta), zeta, np.nan)
    d = np.diff(z, axis=0)
    ok = np.isfinite(d)
    n_r = ok.sum(axis=1)
    use = n_r >= 2
    x = np.where(ok, d, 0.0)[use]
    n = n_r[use].astype(float)
    t = step[:-1][use]
    m = x.sum(axis=1) / n
    var = (np.where(ok[use], (x - m[:, None]) ** 2, 0.0)).sum(axis=1) / np.maximum(n - 1, 1)
    live = var > 0
    m, var, n, t = m[live], var[live], n[live], t[live]
    nr = int(m.size)
    q_mean = float(n.mean()) if nr else 0.0
    if nr < 4 or q_mean < 16:
        why = (f"too few records with increments ({nr}; need >= 4)" if nr < 4 else
               f"too few neurons per record ({q_mean:.0f}; need >= 16)")
        return Independence(False, Status.UNAVAILABLE, math.nan, 0, math.nan, math.nan, nr, q_mean, level,
                            "independence untested: " + why)
    w = n / var                                   # 1/Var(m_r) under independence
    X = np.column_stack([np.ones(nr), t - t.mean()])
    coef = np.linalg.lstsq(X * np.sqrt(w)[:, None], m * np.sqrt(w), rcond=None)[0]
    s = float(np.sum(w * (m - X @ coef) ** 2))
    df = nr - 2
    ratio = s / df
    p = float(stats.chi2.sf(s, df))
    rho = (ratio - 1.0) / (q_mean - 1.0)
    if p < level:
        reason = (f"neurons not independent: the records' mean increments vary {ratio:.3g} times as much as "
                  f"independent neurons allow (chi2 = {s:.4g} on {df} df, p = {p:.2g} < {level:g}; correlation "
                  f"of two neurons' increments at one record rho_hat = {rho:.3g}): a common shock, and every "
                  f"neuron-resampling error is too small")
        return Independence(False, Status.FAILED, ratio, df, p, rho, nr, q_mean, level, reason)
    reason = f"variance ratio {ratio:.3g} on {df} df (p = {p:.2g} >= {level:g}), rho_hat = {rho:.2g}"
    return Independence(True, Status.OK, ratio, df, p, rho, nr, q_mean, level, reason)
