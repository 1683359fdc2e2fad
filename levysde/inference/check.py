"""Check the theory on a trained network's trajectories (docs/specification.md §4, §5, §8, §9).

:func:`check_run` reads a run file of ``levysde train`` (numpy only; torch is not
needed) and hands its arrays to :func:`check_trajectories`, which

* fits the SDE to the zeta_q trajectories of the late records (:func:`levysde.inference.sde_fit.fit_sde`:
  plateau kappa from the fitted saturating drift, noise from the increments' characteristic
  function) and predicts beta* and the phase (:func:`levysde.inference.sde_fit.predict`);
* tests the late part for stationarity (:func:`stationarity_test`);
* compares the prediction with the left tail of the pooled late spectrum (``beta_tail``,
  Hill/MLE) and with the exponent of the last record's ELR envelope (``beta_envelope``,
  over the lags the spectrum supports, :func:`levysde.inference.spectrum.resolved_lag_max`);
* closes the loop: simulates the fitted SDE (the binned drift as a tabulated drift) and
  measures the Kolmogorov-Smirnov distance to the network's late zeta.

Every standard error resamples whole neurons (docs/specification.md §8; coverage checked by
``benchmarks/calibrate_check.py``, docs/calibration.md): kappa_hat by a linear (one-step)
delete-a-group jackknife on the log scale, the noise parameters, beta_envelope and the
stationarity statistics by a delete-a-group jackknife that refits, beta_tail by a
delete-one-neuron jackknife. Exact-duplicate neurons are merged and infinite entries treated
as NaN first (:func:`clean_columns`).

The phase is called from estimates the data identify (:func:`_gates`), never from the fitted
noise parameters: the data gates (enough records and distinct neurons, a stationary late part,
independent neurons: :func:`levysde.inference.independence.independence_test`, the dynamics' root
``beta_dynamics``: :func:`levysde.inference.dynamics.beta_dynamics`), then either "collapsed" (the
root lies significantly beyond the identified tempering cut-off lam_hat) or the closure (the
spectrum's tail rate ``beta_tail`` and ``beta_dynamics`` agree within :data:`CLOSURE_Z` jackknife
errors of their difference, :func:`levysde.inference.phase_call.closure_test`), the side of 1 of
their combination ``beta_combined`` with odds of at least :data:`PHASE_MIN_ODDS`, and for
"concentrated" the root significantly below lam_hat (:func:`levysde.inference.phase_call.admissibility_test`).
The parametric ``beta_theory`` (:func:`levysde.inference.sde_fit.predict`) is reported only where
the fitted SDE's checks pass (a plateau that the data reach and that the saturating form fits, an
identified jump law, a record interval short against the drift's relaxation, the closing loop, its
own phase odds): elsewhere it is biased and reported as not identified.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from levysde.core.jsonable import finite_or_none, to_jsonable
from levysde.core.status import Estimate, Status, unavailable
from levysde.core.validate import check_array, check_bool, check_choice, check_int, check_real
from levysde.inference.drift_fit import restoring_plateau
from levysde.inference.dynamics import DynamicsRoot, beta_dynamics
from levysde.inference.envelope_fit import sampling_floor
from levysde.inference.independence import Independence, independence_test
from levysde.inference.phase_call import (
    CLOSURE_Z,
    PHASE_MIN_ODDS,
    Admissibility,
    Closure,
    admissibility_test,
    closure_test,
)
from levysde.inference.sde_fit import FIT_KEYS, Prediction, SDEFit, fit_sde, floored_replicates, predict
from levysde.inference.spectrum import Spread, resolved_lag_max, spread
from levysde.io.runfile import load_run
from levysde.rnn.learned import LEARNED_THRESHOLD, learned_diagnostic, saturation_note
from levysde.simulation import DivergenceError, TabulatedDrift, simulate
from levysde.stats.jackknife import JACKKNIFE_BIAS_LIMIT, jackknife_bias, jackknife_se, neuron_groups
from levysde.stats.tails import power_law_note, tail_from_result, tail_from_samples
from levysde.theory.envelope_decay import fit_slope
from levysde.theory.envelope_map import envelope_samples

__all__ = ["load_run_arrays", "check_run", "check_trajectories", "add_run_checks", "CheckReport", "Gate", "Closure",
           "closure_test", "CLOSURE_Z", "Stationarity",
           "StationarityStat", "ks_to_histogram",
           "stationarity_test", "ks_critical", "clean_columns", "MIN_RECORDS", "MIN_NEURONS", "MIN_GROUPS",
           "PHASE_MIN_PROBABILITY", "STATIONARITY_GROUPS", "THEORY_MAX_GAMMA_DELTA", "PHASE_MIN_ODDS",
           "TAIL_FRACTION", "MIN_TAIL_NEURONS", "VARIANT_KEYS", "variant_zeta",
           "with_tail_threshold_error"]

#: the zeta a variant checks: the run-file key of each ``variant`` of :func:`check_run`
VARIANT_KEYS = {"gate": "zeta", "jac": "zeta_jac", "window": "zeta_window"}

#: most histogram bins of the closing-loop simulation (memory: 16 groups x bins x 2 doubles)
CLOSING_LOOP_MAX_BINS = 200_000
#: the note of a failed SDE fit, before its reason (the fitted parameters' reason in the report)
_FIT_FAILED = "SDE fit unavailable: "
#: fewest records (whole run) and independent neurons for a phase call
MIN_RECORDS = 20
MIN_NEURONS = 32
#: a phase is called only when its own probability (normal draws with the jackknife covariance) is
#: the largest and at least this (docs/calibration.md)
PHASE_MIN_PROBABILITY = 0.5
#: fewest neuron groups of the jackknife: G - 1 degrees of freedom set the stationarity test's
#: critical t (Student t_{G-1} at 5 %/6): with G = 2 or 3 it is 76 or 12 and nothing fails
MIN_GROUPS = 8
#: share of the late zeta beyond the threshold of beta_tail (the 2 % quantile on the left)
TAIL_FRACTION = 0.02
#: fewest neurons beyond beta_tail's threshold for an error (fewer: not identified)
MIN_TAIL_NEURONS = 20
#: the neighbouring (shallower) threshold whose rate sets beta_tail's threshold systematic error
TAIL_NEIGHBOUR_FRACTION = 0.03
#: neuron groups of the stationarity test's jackknife (at most one neuron each): 64 groups give the
#: Student-t critical value 63 degrees of freedom (2.78 at 5 %/14 two-sided, against 3.73 at
#: 1 %/10 with 16 groups), the power it needs (docs/calibration.md)
STATIONARITY_GROUPS = 64


def load_run_arrays(path) -> dict:
    """Read a ``levysde train`` run file with numpy alone (:func:`levysde.io.runfile.load_run`).

    Parameters
    ----------
    path : str or os.PathLike
        The run file (.npz).

    Returns
    -------
    dict
        Its arrays (``zeta``, ``zeta_jac``, ``step``, ``Lambda``, ``loss``, ``lags``,
        ``envelope`` and any further keys; see :mod:`levysde.io.runfile`) and ``config``, the
        parsed run configuration.

    Raises
    ------
    ValueError
        One line, naming the file, when the file is missing, not an .npz, not an RNN run, lacks
        the run-file keys or holds no records.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     load_run_arrays(os.path.join(d, "missing.npz"))
    Traceback (most recent call last):
    ...
    ValueError: no such file: .../missing.npz
    """

    return load_run(path)


def variant_zeta(run: dict, variant: str, path=None) -> np.ndarray:
    """The zeta array a variant checks, from a run file's arrays (:data:`VARIANT_KEYS`).

    Parameters
    ----------
    run : dict
        A run file's arrays (:func:`load_run_arrays`).
    variant : {"gate", "jac", "window"}
        ``zeta`` (gate), ``zeta_jac`` (first-order Jacobian diagonal) or ``zeta_window`` (the
        anti-collapse paper's windowed first-order transport; NaN where a unit does not decay).
    path : str or os.PathLike, optional
        The run file, named in the error.

    Returns
    -------
    ndarray
        The (records, units) array as float (NaN entries kept).

    Raises
    ------
    ValueError
        For an unknown variant, or when the run file has no such array (``zeta_window`` is
        recorded only with ``levysde train --window-lags``), naming ``variant``.

    Examples
    --------
    >>> run = {"zeta": np.zeros((3, 2)), "zeta_jac": np.ones((3, 2))}
    >>> variant_zeta(run, "jac")[0].tolist()
    [1.0, 1.0]
    >>> variant_zeta(run, "window", "run.npz")
    Traceback (most recent call last):
    ...
    ValueError: variant='window' needs the run file's 'zeta_window' (recorded with ...); run.npz has none
    """
    key = VARIANT_KEYS[check_choice("variant", variant, tuple(VARIANT_KEYS))]
    if key not in run:
        where = "the run file" if path is None else str(path)
        how = " (recorded with levysde train --window-lags)" if variant == "window" else ""
        raise ValueError(f"variant={variant!r} needs the run file's {key!r}{how}; {where} has none")
    return np.asarray(run[key], dtype=float)


def ks_to_histogram(samples, edges, counts) -> float:
    r"""Kolmogorov-Smirnov distance between samples and a histogram law (piecewise-uniform CDF).

    Parameters
    ----------
    samples : array_like, shape (n,)
        The samples (n >= 1).
    edges : array_like, shape (m + 1,)
        Increasing bin edges of the histogram.
    counts : array_like, shape (m,)
        Counts (or masses) per bin, >= 0 with a positive sum.

    Returns
    -------
    float
        :math:`D = \sup_x |F_n(x) - F(x)|`, with F linear within each bin and 0 / 1 outside the
        edges, evaluated on both sides of every sample's jump of :math:`F_n`.

    References
    ----------
    * A. N. Kolmogorov, "Sulla determinazione empirica di una legge di distribuzione",
      *G. Ist. Ital. Attuari* 4 (1933) 83-91.

    Examples
    --------
    >>> ks_to_histogram([0.25, 0.75], [0.0, 1.0], [1.0])        # uniform on [0, 1]
    0.25
    >>> ks_to_histogram([2.0], [0.0, 1.0], [1.0])
    1.0
    """
    x = np.sort(np.asarray(samples, dtype=float))
    c = np.asarray(counts, dtype=float)
    cdf_edges = np.concatenate([[0.0], np.cumsum(c)]) / c.sum()
    model = np.interp(x, edges, cdf_edges)
    n = x.size
    emp_hi = np.arange(1, n + 1) / n
    emp_lo = np.arange(0, n) / n
    return float(max(np.max(np.abs(emp_hi - model)), np.max(np.abs(emp_lo - model))))


def ks_critical(n_neurons: int) -> float:
    r"""Largest closing-loop KS distance accepted: ``1.63/sqrt(Q) + 0.05``.

    1.63/sqrt(Q) is the 1 % critical value of the one-sample KS statistic (Kolmogorov's
    limit law) for Q independent neurons (the late samples of one neuron are correlated,
    so Q is the conservative effective size); 0.05 allows for the closing loop's own
    approximations (binned drift, constant extrapolation, Euler step).

    Parameters
    ----------
    n_neurons : int
        Independent neurons Q (values below 1 count as 1).

    Returns
    -------
    float
        :math:`1.63/\sqrt{Q} + 0.05`.

    References
    ----------
    * A. N. Kolmogorov, "Sulla determinazione empirica di una legge di distribuzione",
      *G. Ist. Ital. Attuari* 4 (1933) 83-91 (the limit law; its 99 % point is 1.628).

    Examples
    --------
    >>> round(ks_critical(100), 3)
    0.213
    >>> round(ks_critical(0), 2)
    1.68
    """
    return 1.63 / math.sqrt(max(int(n_neurons), 1)) + 0.05


def _modal_interval(dt) -> float:
    """The most frequent record interval (ties: the smallest; NaN for none), equal intervals
    being those within 1e-9 relative."""
    dt = np.sort(np.asarray(dt, dtype=float)[np.isfinite(dt)])
    if dt.size == 0:
        return math.nan
    new = np.concatenate([[True], np.diff(dt) > 1e-9 * np.abs(dt[1:])])
    starts = np.flatnonzero(new)
    counts = np.diff(np.concatenate([starts, [dt.size]]))
    return float(dt[starts[int(np.argmax(counts))]])


def _window_stats(zeta, step, bounds, z_left):
    """Per window: std, interquartile range, 10/50/90 % quantiles of the pooled zeta, mean dZ/dt of
    increments that start below z_left (far-left drift), and the log interquartile range of the
    pooled one-record increments over the modal record interval (the noise's scale). (7, W)
    array, NaN where undefined."""
    out = np.full((len(STATIONARITY_STATS), len(bounds)), np.nan)
    dt_all = np.diff(step)
    dt_med = _modal_interval(dt_all)
    for w, (a, b) in enumerate(bounds):
        z = zeta[a:b]
        zf = z[np.isfinite(z)]
        if zf.size >= 2:
            out[0, w] = zf.std(ddof=1)
            q = np.quantile(zf, [0.1, 0.25, 0.5, 0.75, 0.9])
            out[1, w] = q[3] - q[1]
            out[2, w], out[3, w], out[4, w] = q[0], q[2], q[4]
        dt = np.diff(step[a:b])
        raw = np.diff(z, axis=0)
        dz = raw / dt[:, None]
        sel = (z[:-1] < z_left) & np.isfinite(dz)
        if sel.any():
            out[5, w] = dz[sel].mean()
        same = np.abs(dt - dt_med) <= 1e-9 * abs(dt_med)      # increments over the modal interval only
        inc = raw[same].ravel()
        inc = inc[np.isfinite(inc)]
        if inc.size >= 8:
            lo, hi = np.quantile(inc, [0.25, 0.75])
            if hi > lo:
                out[6, w] = math.log(hi - lo)
    return out


STATIONARITY_STATS = ("std", "iqr", "q10", "q50", "q90", "left_drift", "dz_log_iqr")


@dataclass(frozen=True)
class StationarityStat:
    """One statistic of :func:`stationarity_test`: its change across the late part.

    Attributes
    ----------
    change : float
        OLS slope over the windows times (W - 1) (zeta units; drift: per step; ``dz_log_iqr``:
        log units); NaN undefined.
    se : float
        Its delete-a-group jackknife error (NaN undefined).
    t : float
        ``|change|/se`` (inf: a change without error, NaN: untestable).
    per_window : tuple of float
        The statistic in each of the W windows (NaN undefined).

    Examples
    --------
    >>> s = StationarityStat(change=0.1, se=0.05, t=2.0, per_window=(1.0, 1.1))
    >>> s.as_json()
    {'change': 0.1, 'se': 0.05, 't': 2.0, 'per_window': [1.0, 1.1]}
    """

    change: float
    se: float
    t: float
    per_window: tuple[float, ...]

    def as_json(self) -> dict:
        """``{change, se, t, per_window}``, None for NaN or infinite values."""
        return {"change": finite_or_none(self.change), "se": finite_or_none(self.se), "t": finite_or_none(self.t),
                "per_window": to_jsonable(self.per_window)}


@dataclass(frozen=True)
class Stationarity:
    """The result of :func:`stationarity_test` (docs/specification.md §8 (ii)).

    Attributes
    ----------
    stationary : bool
        The test passed (False also when untested: see ``tested``; None in JSON then).
    reason : str
        Why not, or what agreed.
    n_windows : int
        Windows, as asked.
    level : float
        Level of the whole test, as asked.
    stats : dict
        Name (``std``, ``iqr``, ``q10``, ``q50``, ``q90``, ``left_drift``, ``dz_log_iqr``) ->
        :class:`StationarityStat`; empty when untested.
    critical_t : float or None
        The Student-t critical value (None when untested).
    n_groups : int or None
        Neuron groups G of the jackknife (None when untested).
    untestable : tuple of str or None
        Statistics whose error is undefined (not counted against stationarity; None when
        untested).
    status : levysde.core.status.Status
        OK (stationary), FAILED (a statistic changes) or UNAVAILABLE (too few data to test);
        a property.
    tested : bool
        Whether the test was run; a property.

    Examples
    --------
    >>> st = stationarity_test(np.zeros((4, 64)), np.arange(4.0))
    >>> st.stationary, st.status, st.critical_t, st.tested, st.as_json()["stationary"]
    (False, <Status.UNAVAILABLE: 'unavailable'>, None, False, None)
    >>> print(st.reason)
    too few late records (4) for 4 windows of >= 2 records
    """

    stationary: bool
    reason: str
    n_windows: int
    level: float
    stats: dict[str, StationarityStat] = field(default_factory=dict)
    critical_t: float | None = None
    n_groups: int | None = None
    untestable: tuple[str, ...] | None = None

    @property
    def status(self) -> Status:
        """OK (stationary), FAILED (a statistic changes) or UNAVAILABLE (too few data to test)."""
        if self.stationary:
            return Status.OK
        return Status.FAILED if self.critical_t is not None else Status.UNAVAILABLE

    @property
    def tested(self) -> bool:
        """Whether the test was run (False: too few data, ``reason`` says why)."""
        return self.critical_t is not None

    def as_json(self) -> dict:
        """The JSON object ``stationarity`` of ``levysde check --json`` (None for non-finite numbers;
        ``stationary`` None when untested, ``tested`` False)."""
        out = {"stationary": self.stationary if self.tested else None, "tested": self.tested,
               "n_windows": self.n_windows, "level": self.level,
               "stats": {k: v.as_json() for k, v in self.stats.items()}}
        if self.critical_t is not None:
            out.update(critical_t=self.critical_t, n_groups=self.n_groups, untestable=list(self.untestable or ()))
        out["reason"] = self.reason
        return out


def stationarity_test(zeta, step, *, n_windows: int = 4, n_groups: int = STATIONARITY_GROUPS, level: float = 0.05,
                      left_quantile: float = 0.2) -> Stationarity:
    r"""Do spread, quantiles, far-left drift and noise scale stay put over the late part (specification §8 (ii))?

    The records are cut into ``n_windows`` consecutive windows. Per window: the std, the
    interquartile range and the 10/50/90 % quantiles of the pooled zeta, the far-left drift
    (mean dZ/dt of the increments starting below the late part's ``left_quantile`` quantile), and
    the log interquartile range of the pooled one-record increments (over the most frequent record
    interval only; ``dz_log_iqr``). For each of these seven statistics the change across the late
    part is the OLS slope over the windows times (W - 1); its standard error is the
    delete-a-group jackknife over groups of whole neurons (so the correlation of a neuron's
    windows is accounted for). Stationary iff every ``|change/se|`` is below the Student-t
    critical value with G - 1 degrees of freedom at two-sided level ``level / 7`` (Bonferroni
    over the seven). A statistic whose change and error are both 0 (frozen) counts as t = 0.

    The increments' scale carries the power against a growing spread: a stationary process has
    increments of one and the same law at every record, and a neuron's increments are nearly
    independent from record to record, so their scale is measured on Q (R/W - 1) numbers per
    window, while a neuron's position moves slowly and the window spreads of a broad spectrum
    fluctuate with its few deep excursions. Size and power (docs/calibration.md, measured by
    ``benchmarks/gates_power.py --part gates``, runs of the independent generator at
    Q = 256-1024, R = 100-400): stationary runs rejected 6 of 100 (the six position statistics
    alone: 5 of 100); a spread grown by 10 % over the late half 18 of 20 (without the increments'
    scale: 11 of 20), by 20 % 20 of 20 (13), a spreading start 15 of 20, a moving equilibrium
    19 of 20.

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        Late records x neurons (NaN allowed).
    step : array_like, shape (R,)
        Increasing record times.
    n_windows : int, default 4
        Consecutive windows W of the records (each needs >= 2 records).
    n_groups : int, default :data:`STATIONARITY_GROUPS`
        Neuron groups of the jackknife, >= :data:`MIN_GROUPS` (G = min(n_groups, Q)).
    level : float, default 0.05
        Level of the whole test (Bonferroni over the seven statistics).
    left_quantile : float, default 0.2
        Quantile of the late zeta below which an increment counts for the far-left drift.

    Returns
    -------
    Stationarity
        ``stationary``, ``reason``, ``critical_t``, ``level``, ``n_windows``, ``n_groups``,
        ``stats`` {name: StationarityStat(change, se, t, per_window)} (t inf: a change with
        zero error; null in JSON), ``untestable`` (statistics whose error is undefined, e.g. no
        far-left increments in some window or replicate: reported, not counted against
        stationarity). Fewer than 2 records per window, or fewer than 2 neurons: stationary
        False with the reason (status UNAVAILABLE).

    Raises
    ------
    ValueError
        For n_groups < 8 (:data:`MIN_GROUPS`: fewer groups give a critical t so large that
        nothing fails, e.g. 318 for G = 2).

    Notes
    -----
    With :math:`x_w = w - (W - 1)/2` and :math:`s_w` a statistic in window w,

    .. math::

        \Delta = (W - 1)\,\frac{\sum_w x_w s_w}{\sum_w x_w^2}, \qquad
        t = \frac{|\Delta|}{\widehat{\mathrm{se}}_{\mathrm{jack}}(\Delta)}, \qquad
        \text{stationary} \iff \max t \le t_{G-1}\big(1 - \tfrac{\mathrm{level}}{14}\big).

    References
    ----------
    * The specification, §8 (ii).
    * B. Efron, C. Stein, "The jackknife estimate of variance", *Ann. Statist.* 9 (1981)
      586-596.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 80, 128
    >>> z = np.zeros((R + 50, Q))
    >>> for r in range(R + 49):       # dZ = 0.5 tanh(-Z/0.5) dt + 0.5 dW, 50 steps of burn-in
    ...     z[r + 1] = z[r] + 0.5 * np.tanh(-z[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> zeta = z[50:]
    >>> st = stationarity_test(zeta[40:], np.arange(40.0, 80.0))
    >>> st.stationary, st.n_groups, round(st.critical_t, 3)
    (True, 64, 2.781)
    >>> sorted(st.stats)
    ['dz_log_iqr', 'iqr', 'left_drift', 'q10', 'q50', 'q90', 'std']
    """
    check_int("n_groups", n_groups, MIN_GROUPS, why="neuron groups of the jackknife")
    zeta = np.asarray(zeta, dtype=float)
    step = np.asarray(step, dtype=float)
    R, Q = zeta.shape
    untested = None
    if R < 2 * n_windows:
        untested = f"too few late records ({R}) for {n_windows} windows of >= 2 records"
    elif Q < 2:
        untested = "fewer than 2 independent neurons: no resampling of neurons possible"
    elif np.count_nonzero(np.isfinite(zeta)) < 2 * n_windows:
        untested = "too few finite zeta values (masked neurons)"
    if untested is not None:
        return Stationarity(False, untested, int(n_windows), level)
    edges = np.linspace(0, R, n_windows + 1).round().astype(int)
    bounds = list(zip(edges[:-1], edges[1:], strict=True))
    z_left = float(np.nanquantile(zeta, left_quantile))
    x = np.arange(n_windows) - (n_windows - 1) / 2

    def change(cols):
        s = _window_stats(zeta[:, cols], step, bounds, z_left)
        return (s @ x) / (x @ x) * (n_windows - 1), s

    full, per = change(np.arange(Q))
    lab = neuron_groups(Q, n_groups)
    G = int(lab.max()) + 1
    loo = np.array([change(np.flatnonzero(lab != g))[0] for g in range(G)])
    crit = float(stats.t.ppf(1 - level / (2 * len(STATIONARITY_STATS)), G - 1))
    bad, untestable, per_stat = [], [], {}
    for i, name in enumerate(STATIONARITY_STATS):
        se = jackknife_se(loo[:, i])
        c = float(full[i])
        if c == 0 and se == 0:
            t = 0.0                            # frozen: nothing changes
        elif se > 0:
            t = abs(c) / se
        else:                                  # a change without spread over the groups, or undefined
            t = math.inf if (math.isfinite(c) and se == 0) else math.nan
        per_stat[name] = StationarityStat(c, float(se), t, tuple(per[i].tolist()))
        if math.isnan(t):
            untestable.append(name)            # e.g. no far-left increments in some window or replicate
            continue
        if t > crit:
            bad.append(f"{name} changes by {c:.3g} +- {se:.2g} across the late part (|t| {t:.3g} > {crit:.3g})")
    tested = len(STATIONARITY_STATS) - len(untestable)
    reason = "; ".join(bad) if bad else (f"{tested} of {len(STATIONARITY_STATS)} statistics agree across "
                                          f"{n_windows} windows (|t| <= {crit:.3g})"
                                          + (f"; untestable: {', '.join(untestable)}" if untestable else ""))
    return Stationarity(not bad, reason, int(n_windows), level, per_stat, crit, G, tuple(untestable))


@dataclass(frozen=True)
class Gate:
    """One condition of a phase call (docs/specification.md §8 (i)-(iii)).

    Attributes
    ----------
    name : str
        E.g. "records", "stationary", "closure", "tempering" (or a model check: "plateau",
        "jump_fit").
    status : levysde.core.status.Status
        OK (passed), or FAILED / UNAVAILABLE / another status saying why not.
    reason : str
        Why it failed, the text of ``phase_withheld`` ("" when it passed).
    passed : bool
        Status OK (a property).

    Examples
    --------
    >>> from levysde.core.status import Status
    >>> Gate("records", Status.OK).passed
    True
    >>> Gate("neurons", Status.FAILED, "too few independent neurons (8 < 32)").passed
    False
    """

    name: str
    status: Status
    reason: str = ""

    @property
    def passed(self) -> bool:
        return self.status is Status.OK


@dataclass
class CheckReport:
    """Everything :func:`check_trajectories` measured (see :meth:`as_json` for the keys).

    ``gates``: name -> :class:`Gate` for every condition of a phase call (``gates`` in JSON:
    name -> passed); ``withheld``: the reasons when any gate fails (the phase is then not
    reported). More gates may be added by callers (``report.add_gate``). ``model_checks``: name ->
    :class:`Gate` for the checks of the fitted parametric SDE (plateau form, jump fit, closing loop,
    its own phase odds, the record interval): they decide whether ``beta_theory`` is reported, not
    the phase. ``zeta_spread``, ``early_spread``: :class:`levysde.inference.spectrum.Spread` of the
    last and of an early record (None: not measured); ``stationarity``: :class:`Stationarity` (None:
    not tested); ``independence``: :class:`levysde.inference.independence.Independence` (None: not
    tested); ``ks``, ``beta_sim_tail``: the closing loop (status NOT_RUN when skipped on request);
    ``dynamics``: the model-free root of the far-left increments
    (:func:`levysde.inference.dynamics.beta_dynamics`, None when it could not be run); ``tail_loo``:
    beta_tail's leave-one-group-out replicates over the jackknife's neuron groups (for the joint
    closure); ``closure``, ``admissibility``: :func:`levysde.inference.phase_call.closure_test` and
    :func:`levysde.inference.phase_call.admissibility_test`; ``call``: the phase decided by
    the phase call (None: withheld) and ``evidence`` what it rests on; ``extra``: further JSON keys
    (``check_run`` adds learned and loss_ratio).

    Attributes
    ----------
    variant : {"gate", "jac", "window"}
        Which zeta was checked (:data:`VARIANT_KEYS`).
    fit : SDEFit or None
        The fitted SDE (:func:`levysde.inference.sde_fit.fit_sde`; None when it failed).
    prediction : Prediction or None
        Its prediction (:func:`levysde.inference.sde_fit.predict`).
    beta_tail : levysde.core.status.Estimate
        Hill/MLE rate of the pooled late spectrum's left tail.
    beta_envelope : levysde.core.status.Estimate
        Exponent of the last record's ELR envelope.
    zeta_spread, early_spread : Spread or None
        Spread of the last and of an early record.
    ks, beta_sim_tail : levysde.core.status.Estimate
        The closing loop: KS distance, and the tail rate of the simulated SDE.
    notes : list of str
        What the check noticed.
    config : dict
        The run configuration.
    stationarity : Stationarity or None
        :func:`stationarity_test` of the late part.
    gates : dict
        Name -> :class:`Gate`, every condition of a phase call.
    withheld : list of str
        The reasons of the failed gates.
    lag_max : float
        Largest envelope lag the spectrum supports.
    extra : dict
        Further JSON keys.
    dynamics : DynamicsRoot or None
        :func:`levysde.inference.dynamics.beta_dynamics`.
    closure : Closure or None
        :func:`levysde.inference.phase_call.closure_test`.
    independence : Independence or None
        :func:`levysde.inference.independence.independence_test`.
    tail_loo : ndarray or None
        beta_tail's leave-one-group-out replicates.
    admissibility : Admissibility or None
        :func:`levysde.inference.phase_call.admissibility_test`.
    model_checks : dict
        Name -> :class:`Gate`, the checks of the fitted parametric SDE.
    call : str or None
        The phase decided ("collapsed", "concentrated", "broad"; None: withheld).
    evidence : str or None
        What the call rests on.
    phase : str or None
        ``call``, or None when any gate failed (a property).
    beta_dynamics, beta_theory : levysde.core.status.Estimate
        The dynamics' root, and the parametric beta* where every model check passes (properties).
    phase_probabilities : dict
        The odds of the combined beta (a property).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 80, 128
    >>> z = np.zeros((R + 50, Q))
    >>> for r in range(R + 49):       # dZ = 0.5 tanh(-Z/0.5) dt + 0.5 dW, 50 steps of burn-in
    ...     z[r + 1] = z[r] + 0.5 * np.tanh(-z[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> zeta = z[50:]
    >>> rep = check_trajectories(zeta, np.arange(R), n_boot=50, closing_loop=False)
    >>> rep.phase is None, rep.gates["stationary"].passed, rep.gates["dynamics"].passed
    (True, True, False)
    >>> print(rep.withheld[0])
    beta_dynamics: the root rests on 9 effective increments (< 100): ...
    >>> rep.add_gate("learned", True)
    >>> j = rep.as_json()
    >>> j["phase"], j["gates"]["learned"], round(j["beta_tail"], 2)
    (None, True, 4.3)
    """

    variant: str
    fit: SDEFit | None
    prediction: Prediction | None
    beta_tail: Estimate
    beta_envelope: Estimate
    zeta_spread: Spread | None
    early_spread: Spread | None
    ks: Estimate
    beta_sim_tail: Estimate
    notes: list[str] = field(default_factory=list)
    config: dict = field(default_factory=dict)
    stationarity: Stationarity | None = None
    gates: dict[str, Gate] = field(default_factory=dict)
    withheld: list[str] = field(default_factory=list)
    lag_max: float = float("nan")
    extra: dict = field(default_factory=dict)
    dynamics: DynamicsRoot | None = None
    closure: Closure | None = None
    independence: Independence | None = None
    tail_loo: np.ndarray | None = None
    admissibility: Admissibility | None = None
    model_checks: dict[str, Gate] = field(default_factory=dict)
    call: str | None = None
    evidence: str | None = None

    def add_gate(self, name: str, passed: bool, reason: str = "", *, status: Status = Status.FAILED) -> None:
        """Record a gate (again under the same name: it replaces the earlier one); a failed one
        withholds the phase with ``reason``. ``status``: of a failed gate (FAILED, or UNAVAILABLE
        when it could not be evaluated)."""
        passed = bool(passed)
        gate = Gate(name, Status.OK if passed else status, "" if passed else reason or name)
        self.gates[name] = gate
        if not passed:
            self.withheld.append(reason or name)

    def add_model_check(self, name: str, passed: bool, reason: str = "", *, status: Status = Status.FAILED) -> None:
        """Record a check of the fitted parametric SDE (it decides whether beta_theory is reported)."""
        passed = bool(passed)
        self.model_checks[name] = Gate(name, Status.OK if passed else status, "" if passed else reason or name)

    @property
    def beta_dynamics(self) -> Estimate:
        """beta* from the dynamics (:attr:`dynamics`), or unavailable with the reason."""
        d = self.dynamics
        if d is None:
            return unavailable("dynamics root not computed")
        if d.ok:
            return d.beta
        return Estimate(float("nan"), float("nan"), d.message or str(d.status), status=d.status)

    @property
    def beta_theory(self) -> Estimate:
        """The parametric beta* of the fitted SDE where every model check passes, else unavailable
        (status NOT_IDENTIFIED) with the reasons: where a check fails it is biased (docs/calibration.md)."""
        p = self.prediction
        if p is None or p.status is not Status.OK:
            return unavailable(p.beta.flag if p is not None else "no SDE fit")
        failed = [g.reason for g in self.model_checks.values() if not g.passed]
        if failed or not self.model_checks:
            return Estimate(float("nan"), float("nan"), "not reported: " + "; ".join(failed or ["no model checks"]),
                            status=Status.NOT_IDENTIFIED)
        return p.beta

    @property
    def phase(self):
        """The phase, or None when withheld (every gate must pass)."""
        return None if self.withheld else self.call

    @property
    def phase_candidates(self):
        """The phases the data leave open: ``[phase]`` when one is called; ``["concentrated",
        "collapsed"]`` when the only gate that failed is ``tempering`` on a combined beta > 1 (the
        observed tail and dynamics say beta > 1, and lam is not identified well enough to tell
        a root below it from none); None otherwise."""
        if self.phase is not None:
            return [self.phase]
        failed = [k for k, g in self.gates.items() if not g.passed]
        if self.call == "concentrated" and failed == ["tempering"]:
            return ["concentrated", "collapsed"]
        return None

    @property
    def phase_probabilities(self) -> dict:
        """The odds of the call: those of the combined beta (concentrated, broad), ``{}`` without it."""
        c = self.closure
        return dict(c.probabilities) if c is not None else {}

    def as_json(self) -> dict:
        out = {"variant": self.variant}
        f, p = self.fit, self.prediction
        failed = [n for n in self.notes if n.startswith(_FIT_FAILED)]      # the first failure, not the first note
        none = Estimate(float("nan"), float("nan"),
                        "unavailable: " + (failed[0][len(_FIT_FAILED):] if failed else
                                           self.notes[0] if self.notes else "fit failed"))
        out.update((f.kappa if f else none).as_json("kappa_hat"))
        out.update((f.noise.eta_g if f else none).as_json("eta_g_hat"))
        out.update((f.noise.eta_j if f else none).as_json("eta_j_hat"))
        out.update((f.noise.alpha if f else none).as_json("alpha_hat"))
        out.update((f.noise.lam if f else none).as_json("lam_hat"))
        if f is not None and f.drift.form:
            out["drift_fit"] = {k: f.drift.form[k] for k in ("kappa", "gamma", "z0", "chi2", "dof", "p_value",
                                                             "plateau_fraction", "n_bins")}
        theory = self.beta_theory
        out.update(theory.as_json("beta_theory"))
        out["phase"] = self.phase
        out["phase_evidence"] = self.evidence if self.phase is not None else None
        out["phase_withheld"] = list(self.withheld)
        out["phase_candidates"] = self.phase_candidates
        c = self.closure
        out["phase_probabilities"] = self.phase_probabilities
        out["phase_probabilities_combined"] = self.phase_probabilities
        out["phase_theory"] = p.phase if (p is not None and theory.ok) else None
        out["phase_probabilities_theory"] = dict(p.phase_probabilities) if (p is not None and theory.ok) else {}
        out["gates"] = {k: g.passed for k, g in self.gates.items()}
        out["gate_status"] = {k: g.status.value for k, g in self.gates.items()}
        out["model_checks"] = {k: g.passed for k, g in self.model_checks.items()}
        out["model_check_status"] = {k: g.status.value for k, g in self.model_checks.items()}
        out["model_check_reasons"] = {k: g.reason for k, g in self.model_checks.items() if not g.passed}
        out.update(c.as_json() if c is not None else Closure(Status.UNAVAILABLE, float("nan"), CLOSURE_Z,
                                                             unavailable("closure untested")).as_json())
        out["admissibility"] = self.admissibility.as_json() if self.admissibility is not None else {}
        out.update(self._theory_z(theory))
        st = self.stationarity
        # untested (too few records or neurons, not run): None, not False; the objects say why
        out["stationarity"] = st.as_json() if st is not None else {}
        out["stationary"] = out["stationarity"].get("stationary")
        ind = self.independence
        ind_tested = ind is not None and ind.status is not Status.UNAVAILABLE
        out["independence"] = ({**ind.as_json(), "tested": ind_tested} if ind is not None else {})
        if ind is not None and not ind_tested:
            out["independence"]["independent"] = None
        out["independent"] = bool(ind.independent) if ind_tested and ind is not None else None
        out.update(self.beta_tail.as_json("beta_tail"))
        out.update(self.beta_dynamics.as_json("beta_dynamics"))
        out["dynamics"] = dynamics_json(self.dynamics)
        out.update(self.beta_envelope.as_json("beta_envelope"))
        out["envelope_lag_max"] = finite_or_none(self.lag_max)
        out["zeta_spread"] = self.zeta_spread.as_json() if self.zeta_spread is not None else {}
        out["zeta_spread_early"] = self.early_spread.as_json() if self.early_spread is not None else {}
        out.update(self.ks.as_json("ks_distance"))
        out.update(self.beta_sim_tail.as_json("beta_sim_tail"))
        out["n_jumps"] = f.noise.n_jumps if f else None
        out["n_neurons"] = f.n_neurons if f else None
        out.update(self.extra)
        out["notes"] = self.notes
        return out

    def _theory_z(self, beta: Estimate) -> dict:
        """z of beta_theory against beta_tail and against beta_dynamics (None where either lacks an error)."""
        out = {}
        for key, other in (("tail", self.beta_tail), ("dynamics", self.beta_dynamics)):
            z = float("nan")
            if beta.ok and other.ok and math.isfinite(beta.se) and math.isfinite(other.se) and beta.se + other.se > 0:
                z = (beta.value - other.value) / math.hypot(beta.se, other.se)
            out[f"closure_z_theory_{key}"] = finite_or_none(z)
        return out


def dynamics_json(d: DynamicsRoot | None) -> dict:
    """The JSON object ``dynamics`` of ``levysde check --json``: the cut used, the counts,
    Delta kappa_hat, the root's error parts ``se_jackknife`` (neurons) and ``se_cut`` (the cut's
    systematic error; None when not computed) and a compact cut scan (``[level, beta, se, n]``
    rows, None for NaN); ``{}`` when the root was not computed."""
    if d is None:
        return {}
    return {"status": str(d.status), "message": d.message, "cut": finite_or_none(d.cut),
            "z_cut": finite_or_none(d.z_cut), "chosen_by": d.chosen_by, "n_increments": int(d.n_increments),
            "n_neurons": int(d.n_neurons), "delta": finite_or_none(d.delta),
            "delta_kappa": finite_or_none(d.delta_kappa), **d.kappa.as_json("kappa_hat"),
            "ess": finite_or_none(d.ess), "shock_rho": finite_or_none(d.shock_rho),
            "se_jackknife": finite_or_none(d.se_jackknife), "se_cut": finite_or_none(d.se_cut),
            "scan": [[c.level, finite_or_none(c.beta.value), finite_or_none(c.beta.se), int(c.n)] for c in d.scan]}


def _dynamics(zeta, step, late_fraction, n_groups, notes):
    """:func:`levysde.inference.dynamics.beta_dynamics` on the late records (None, with a note,
    when the data are outside its domain, e.g. fewer than 3 records or 2 neurons)."""
    try:
        return beta_dynamics(zeta, step, late_fraction=late_fraction, n_groups=n_groups)
    except ValueError as exc:
        notes.append(f"dynamics root not computed: {exc}")
        return None


def _learned(run):
    """``(learned, loss_ratio, reason)`` of a run (levysde.rnn.learned.learned_diagnostic, docs/specification.md
    §8 (i)); ``learned`` None when it cannot be told; ``reason`` says why the phase is withheld when
    it did not learn or cannot be told (else "")."""

    try:
        ratio, learned = learned_diagnostic(run)
    except ValueError as exc:
        return None, float("nan"), f"cannot tell whether the network learned ({exc})"
    if not learned:
        return False, ratio, (f"the network did not learn (late loss / trivial predictor's loss = "
                              f"{ratio:.3g} > {LEARNED_THRESHOLD})")
    return True, ratio, ""


def _beta_tail(late, n_groups, tail_fraction=None):
    """Hill/MLE rate of the pooled late zeta's left tail above the (1 - tail_fraction) quantile
    of X = -zeta (docs/specification.md §8), jackknifed over single neurons (delete-one-neuron jackknife,
    levysde.stats.tails.tail_from_samples), with the power-law stability check
    (levysde.stats.tails.power_law_note) in the flag. Returns ``(Estimate, loo)``: ``loo`` (G,) are the
    leave-one-group-out rates over the jackknife's ``n_groups`` neuron groups (neuron q in group q mod G,
    threshold held), for the joint closure with beta_dynamics (None when unavailable).

    Single neurons rather than ``n_groups`` groups for the reported error: the tail is carried by the
    few neurons that reach it, so with 16 groups only a few replicates differ and the error has few
    degrees of freedom; deleting one neuron at a time uses every neuron that reaches the tail (the
    Hill rate is a ratio of per-neuron sums, so the Q replicates cost nothing; docs/calibration.md).
    Fewer than 20 neurons beyond the threshold: status NOT_IDENTIFIED, no error.

    The threshold is the :data:`TAIL_FRACTION` (2 %) quantile of the late zeta: on the independent
    generator the 10 % quantile still lies in the drift's transition for concentrated sets (bias up to
    -4 standard errors, coverage 0.50 / 0.79 over 48 positives), the 2 % quantile gave 0.60 / 0.96
    (bias +3.6 %, sd of the standardized error 1.04; docs/calibration.md)."""
    tail_fraction = TAIL_FRACTION if tail_fraction is None else tail_fraction

    fin = np.isfinite(late)
    Q = late.shape[1]
    if Q < 2:
        return unavailable("too few neurons for a jackknife over neuron groups"), None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        across = np.nanstd(late, axis=1)            # spread across neurons, per record
    if not fin.any():
        return unavailable("no finite zeta in the late part"), None
    if not np.nanmax(across) > 1e-9 * (1.0 + float(np.nanmax(np.abs(late)))):
        return unavailable("no spread: all neurons have the same zeta (to rounding) in every record"), None
    x = -late[fin]
    lab = np.broadcast_to(np.arange(Q)[None, :], late.shape)[fin]
    u = float(np.quantile(x, 1 - tail_fraction))
    t = tail_from_samples(x, u, groups=lab)
    if not (math.isfinite(t.beta_hat) and t.n_exceed >= 10):
        return unavailable(f"tail not resolved: {t.n_exceed:.0f} samples beyond u = {u:.3g}"), None
    beyond = x > u
    k_neurons = len(np.unique(lab[beyond]))
    grp = neuron_groups(Q, n_groups)[lab[beyond]]
    G = min(int(n_groups), Q)
    n_g = np.bincount(grp, minlength=G).astype(float)
    s_g = np.bincount(grp, weights=x[beyond] - u, minlength=G)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = (n_g.sum() - n_g) / (s_g.sum() - s_g)
    loo = loo if np.all(np.isfinite(loo)) and np.all(loo > 0) else None
    flag = f"{k_neurons} neurons reach the tail"
    note = power_law_note(t)
    if k_neurons < MIN_TAIL_NEURONS:
        flag += f" (fewer than {MIN_TAIL_NEURONS}: not identified)" + (f"; {note}" if note else "")
        return Estimate(t.beta_hat, float("nan"), flag, status=Status.NOT_IDENTIFIED), None
    flag += f"; {note}" if note else ""
    # not a power law (the stability check over thresholds fails): the exponential-tail model is rejected
    return Estimate(t.beta_hat, t.se, flag, status=Status.REJECTED if t.power_law is False else Status.OK), loo


def _tail_threshold_error(late, beta_tail: Estimate, censored=None) -> float:
    """|rate at the :data:`TAIL_NEIGHBOUR_FRACTION` quantile - beta_tail|: the threshold's
    systematic error (NaN when either rate is unavailable). A threshold that still reaches into
    the drift's transition biases the rate by an amount that differs from dataset to dataset and
    does not shrink with more data; the neighbouring threshold's rate moves by about that bias
    (docs/calibration.md, "beta_tail"). ``censored`` (bool, the shape of ``late``): right-censored
    entries (at their censoring point in ``late``), counted in the exposure but not as exceedances
    (the censored MLE; None: none censored)."""
    if not (beta_tail.ok and math.isfinite(beta_tail.se)):
        return float("nan")
    fin = np.isfinite(late)
    x = -late[fin]
    cens = np.zeros(x.shape, bool) if censored is None else np.asarray(censored, dtype=bool)[fin]
    u = float(np.quantile(x, 1 - TAIL_NEIGHBOUR_FRACTION))
    beyond = x > u
    excess = x[beyond] - u
    events = int(np.count_nonzero(beyond & ~cens))
    if events < 10 or not excess.sum() > 0:
        return float("nan")
    return abs(events / float(excess.sum()) - beta_tail.value)        # the exponential MLE above u


def _with_threshold_error(beta_tail: Estimate, se_threshold: float) -> Estimate:
    """beta_tail with its error sqrt(jackknife^2 + threshold systematic^2) (unchanged without one)."""
    if not math.isfinite(se_threshold):
        return beta_tail
    flag = (beta_tail.flag + "; " if beta_tail.flag else "") + (
        f"error {beta_tail.se:.2g} (jackknife) and {se_threshold:.2g} (threshold: rate at the "
        f"{TAIL_NEIGHBOUR_FRACTION:.0%} quantile) in quadrature")
    return Estimate(beta_tail.value, math.hypot(beta_tail.se, se_threshold), flag, status=beta_tail.status)


def with_tail_threshold_error(beta_tail: Estimate, late, censored=None) -> Estimate:
    """A tail rate with ``beta_tail``'s threshold systematic error added (docs/calibration.md, "beta_tail").

    Parameters
    ----------
    beta_tail : levysde.core.status.Estimate
        The rate beyond the :data:`TAIL_FRACTION` quantile of ``-late``, with its jackknife error.
    late : array_like
        The late zeta (NaN ignored); censored entries at their censoring point.
    censored : array_like of bool, optional
        Right-censored entries of ``late`` (None: none).

    Returns
    -------
    levysde.core.status.Estimate
        ``beta_tail`` with the error sqrt(jackknife^2 + threshold^2), the threshold error the
        distance to the rate beyond the :data:`TAIL_NEIGHBOUR_FRACTION` quantile (the censored
        MLE with ``censored``); unchanged where either rate lacks an error.

    Examples
    --------
    >>> late = -np.random.default_rng(0).exponential(1 / 0.8, size=(40, 400))
    >>> b = with_tail_threshold_error(Estimate(0.8, 0.03), late)
    >>> bool(b.se > 0.03), b.value
    (True, 0.8)
    """
    return _with_threshold_error(beta_tail, _tail_threshold_error(np.asarray(late, dtype=float), beta_tail,
                                                                  censored))


def _beta_envelope(lags, zeta_last, weights, n_groups):
    """minus the large-lag log-log slope of the ELR envelope of the last record (docs/specification.md §5, §9),
    over lags <= resolved_lag_max and f above the sampling floor of the Q neurons
    (:func:`levysde.inference.envelope_fit.sampling_floor`, ``min(100, sqrt(Q))/Q``: below it fewer than
    sqrt(Q) neurons carry f); jackknife over neuron groups. Returns (Estimate, lag_max)."""

    z = np.asarray(zeta_last, dtype=float)
    w = np.ones_like(z) if weights is None else np.asarray(weights, dtype=float)
    ok = np.isfinite(z) & np.isfinite(w) & (w >= 0)
    if ok.sum() < 2 or not w[ok].sum() > 0:
        return unavailable("fewer than 2 neurons with a finite zeta and weight"), float("nan")
    try:
        lag_max = resolved_lag_max(z[ok])
    except ValueError as exc:
        return unavailable(f"envelope unavailable: {exc}"), float("nan")
    lags = np.asarray(lags, dtype=float)
    lo = float(lags[lags > 0].min()) if (lags > 0).any() else 1.0
    grid = np.geomspace(min(lo, lag_max / 100), lag_max, 40)
    lab = neuron_groups(z.size, n_groups)
    floor = sampling_floor(int(ok.sum()))

    def slope(sel, **kw):
        f = envelope_samples(grid, z[sel], w[sel], bin_width=0, errors=False).f
        return fit_slope(grid, f, f_floor=floor, **kw)

    try:
        s = slope(ok)          # withheld over less than MIN_SLOPE_DECADES (as levysde envelope does)
        loo = [slope(ok & (lab != g), min_decades=0).slope for g in range(int(lab.max()) + 1)]
    except ValueError as exc:
        return unavailable(f"envelope slope not resolved: {exc}"), lag_max
    return Estimate(-s.slope, jackknife_se(loo), f"l in [{s.lag_lo:.3g}, {s.lag_hi:.3g}] <= l_max = tau_(10) "
                                                 f"= {lag_max:.3g}, f > {floor:.2g} (the sampling floor of "
                                                 f"{int(ok.sum())} neurons)"), lag_max


def _closing_loop(fit: SDEFit, late, seed):
    """Simulate the fitted SDE and compare with the network's late zeta (KS, tail rate)."""

    d, j = fit.drift, fit.noise
    if not (restoring_plateau(fit.kappa) and fit.noise.eta_g.ok):
        why = "no closing loop: " + (fit.kappa.flag or "kappa or eta_G unavailable")
        return unavailable(why), unavailable(why)
    F = d.F
    slope = np.polyfit(d.centers, F, 1)[0] if d.centers.size >= 2 else -1.0
    gamma = max(-slope, 1e-12)
    # the simulator requires max |dF/dz| dt <= 0.5 on the tabulated drift: stay below it
    local = np.max(np.abs(np.diff(F) / np.diff(d.centers))) if d.centers.size >= 2 else gamma
    dt = min(0.05 / gamma, 0.4 / max(local, 1e-300),
             float(np.median(np.diff(d.edges))) / max(np.max(np.abs(F)), 1e-300))
    # about 60 relaxation times, capped at 20,000 steps (a few seconds)
    n_steps = int(min(math.ceil(60.0 / (gamma * dt)), 20_000))
    t_end = n_steps * dt
    has_jumps = j.mode == "jumps" and j.alpha.ok and j.eta_j.value > 0
    kw = dict(eta_j=j.eta_j.value if has_jumps else 0.0, eta_g=j.eta_g.value,
              alpha=j.alpha.value if has_jumps else 1.5, lam=max(j.lam.value, 0.0) if has_jumps else 1.0)
    try:
        # histogram bins a quarter of the drift bins, but at most CLOSING_LOOP_MAX_BINS over the
        # simulator's histogram (half-width <= 400): a very narrow spectrum would ask for gigabytes
        res = simulate(kw.pop("eta_j"), drift=TabulatedDrift(d.centers, F), particles=1024,
                       dt=dt, t_end=t_end, burn_in=t_end / 6, seed=seed, n_groups=16,
                       bin_width=max(float(np.median(np.diff(d.edges))) / 4, 800.0 / CLOSING_LOOP_MAX_BINS), **kw)
    except (DivergenceError, ValueError) as exc:
        return unavailable(f"closing-loop simulation failed: {exc}"), unavailable("closing-loop simulation failed")
    counts = res.hist_counts.sum(axis=0)
    ks = ks_to_histogram(late[np.isfinite(late)], res.hist_edges, counts)
    try:
        u = float(np.quantile(-late[np.isfinite(late)], 0.9))
        t = tail_from_result(res, u)
        tail = Estimate(t.beta_hat, t.se) if math.isfinite(t.beta_hat) else unavailable("no simulated tail beyond u")
    except (ValueError, KeyError) as exc:
        tail = unavailable(f"simulated tail not resolved: {exc}")
    crit = ks_critical(fit.n_neurons)
    return Estimate(ks, float("nan"), f"KS distance between the network's late zeta and the fitted SDE "
                                      f"(accepted <= {crit:.3g})"), tail


def clean_columns(zeta, weights=None):
    r"""Non-finite entries as undefined, and one column per distinct neuron.

    * ``+-inf`` entries become NaN (undefined, like a masked neuron-record), so one bad cell
      costs that cell's increments, not the fit.
    * Columns that are exact copies (bit for bit, NaN in the same places) of an earlier column
      are not independent neurons: resampling them as if they were makes every jackknife error
      too small (a copy in each group) or zero (all copies in one group). The first of each set
      is kept; its envelope weight is the copies' sum (the envelope, Σ Λ_q e^{-l μ_q}, is then
      unchanged). All-NaN columns are kept as they are; when every column with a finite value
      is a copy of one (a shared zeta), nothing is merged (:func:`levysde.inference.sde_fit.fit_sde`
      fits it as a single trajectory).

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        zeta per record and neuron.
    weights : array_like, shape (Q,), optional
        Envelope weights :math:`\Lambda_q` of the neurons.

    Returns
    -------
    zeta : ndarray, shape (R, Q')
        The cleaned array (a new array), Q' <= Q.
    weights : ndarray, shape (Q',), or None
        The merged weights (None if None).
    notes : list of str
        A note per change.

    Examples
    --------
    >>> z, w, notes = clean_columns([[1.0, 1.0, np.inf], [2.0, 2.0, 3.0]], [1.0, 2.0, 3.0])
    >>> z, w
    (array([[ 1., nan],
           [ 2.,  3.]]), array([3., 3.]))
    >>> len(notes)
    2
    """
    zeta = np.array(zeta, dtype=float)
    notes = []
    inf = np.isinf(zeta)
    if inf.any():
        zeta[inf] = np.nan
        notes.append(f"{int(inf.sum())} infinite zeta value(s) treated as undefined (NaN), like masked entries")
    zeta = zeta + 0.0                                   # -0.0 -> 0.0: equal values, equal bits
    live = np.flatnonzero(np.isfinite(zeta).any(axis=0))
    if live.size < 2:
        return zeta, weights, notes
    cols = np.ascontiguousarray(np.where(np.isnan(zeta[:, live]), np.nan, zeta[:, live]).T)
    key = cols.view(np.dtype((np.void, cols.dtype.itemsize * cols.shape[1]))).ravel()
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    if first.size in (1, live.size):
        return zeta, weights, notes
    order = np.argsort(first)
    drop = np.setdiff1d(live, live[first])
    keep = np.setdiff1d(np.arange(zeta.shape[1]), drop)
    if weights is not None:
        w = np.array(weights, dtype=float)
        w[live[first[order]]] = np.bincount(inv.ravel(), weights=w[live], minlength=first.size)[order]
        weights = w[keep]
    notes.append(f"{drop.size} neuron(s) are exact copies of others (identical zeta in every record): one of "
                 f"each kept, {keep.size} distinct neurons analysed")
    return zeta[:, keep], weights, notes


def jump_fit_bias(fit: SDEFit) -> list:
    """Jump-fit estimates whose delete-a-group jackknife bias exceeds JACKKNIFE_BIAS_LIMIT of their
    reported error, as texts ``"eta_j_hat: bias +0.36 se"`` (empty when none does, or without
    replicates). A bias of a quarter of the standard error or more moves the coverage of
    +-1 se intervals and the phase odds, which assume an unbiased normal estimator (Efron &
    Tibshirani 1993, §10.6). Measured on jump-dominated runs of the SDE (docs/calibration.md):
    eta_J_hat's jackknife bias is 0.36 se (median) at H = 64 neurons and 0.17 at H = 512,
    where its sampling law is skewed and low values come with small errors."""
    n, reps, v = fit.noise, fit.replicates, fit.values()
    out = []
    if reps.shape[0] < 2:
        return out
    for i, e in ((1, n.eta_g), (2, n.eta_j), (3, n.alpha), (4, n.lam)):
        b = jackknife_bias(reps[:, i], v[i])
        if math.isfinite(b) and math.isfinite(e.se) and e.se > 0 and abs(b) > JACKKNIFE_BIAS_LIMIT * e.se:
            out.append(f"{FIT_KEYS[i]}_hat: bias {b / e.se:+.2f} se")
    return out


#: beta_theory is reported only where the drift's contraction over one record interval is small,
#: gamma_hat * Delta <= this (gamma_hat: the fitted drift's slope at its equilibrium). Over a record
#: interval the drift pulls a displaced zeta back by a share of about gamma Delta of its displacement,
#: so the increments' law is not the generator's: the noise fitted to the residuals is biased low and
#: beta_theory high (+8 % at Delta = 0.1, +27-36 % at Delta = 0.3 measured on gamma Delta = 0.07-0.6,
#: docs/calibration.md)
THEORY_MAX_GAMMA_DELTA = 0.05


def _dyn_loo(d: DynamicsRoot | None):
    """The leave-one-group-out roots at the cut beta_dynamics used (None when it refused)."""
    if d is None or not d.ok:
        return None
    for c in d.scan:
        if c.level == d.cut:
            return c.loo
    return None


def _model_checks(rep: CheckReport) -> None:
    """The checks of the fitted parametric SDE (docs/specification.md §8 (iii); docs/calibration.md):
    the plateau of the saturating drift, the jump fit, the record interval, the closing loop and the
    fitted parameters' own phase odds. They decide whether beta_theory is reported (it is biased
    where one fails) and whether the fitted lam_hat may bound the root (the tempering gate)."""
    f, p = rep.fit, rep.prediction
    if f is None:
        rep.add_model_check("fit", False, "no SDE fit")
        return
    k = f.kappa
    rep.add_model_check("plateau", k.ok and k.status is Status.OK and math.isfinite(k.se),
                        "plateau: " + (k.flag or ("kappa_hat has no jackknife error" if k.ok else "unavailable")))
    n = f.noise
    if n.mode == "jumps":
        edge = [e.flag or str(e.status) for e in (n.alpha, n.lam) if not e.status.identified]
        ok = not edge and all(math.isfinite(e.se) for e in (n.eta_j, n.alpha, n.lam))
        biased = jump_fit_bias(f) if ok else []
        rep.add_model_check("jump_fit", ok and not biased,
                            ("jump-fit bias: " + "; ".join(biased) + f" (the jackknife bias exceeds "
                             f"{JACKKNIFE_BIAS_LIMIT:g} standard errors, Efron & Tibshirani 1993, §10.6)")
                            if ok else "jump parameters: " + ("; ".join(edge) if edge else "no jackknife error"))
    else:
        rep.add_model_check("jump_fit", False, "no jump fit (" + (n.eta_j.flag or "no jumps detected") + "): eta_G_hat "
                            "is the robust (MAD) diffusion of the increments, which holds any jumps too small or too "
                            "rare to detect, and the Gaussian root kappa/eta_G is biased where jumps exist")
    gamma = f.drift.form.get("gamma", float("nan")) if f.drift.form else float("nan")
    delta = rep.dynamics.delta if rep.dynamics is not None else float("nan")
    gd = gamma * delta
    rep.add_model_check("record_interval", math.isfinite(gd) and gd <= THEORY_MAX_GAMMA_DELTA,
                        f"record interval: gamma_hat Delta = {gd:.3g} > {THEORY_MAX_GAMMA_DELTA:g}: over one record "
                        f"the drift contracts the increments, whose law is then not the generator's (the fitted "
                        f"noise is biased low, beta_theory high)" if math.isfinite(gd) else
                        "record interval: no fitted drift slope or record interval")
    if rep.ks.ok:
        crit = ks_critical(f.n_neurons)
        rep.add_model_check("closing_loop", rep.ks.value <= crit,
                            f"closing loop: KS(sim, data) = {rep.ks.value:.3g} > {crit:.3g}: the fitted SDE does "
                            f"not describe the data")
    elif rep.ks.status is not Status.NOT_RUN:
        rep.add_model_check("closing_loop", False, "closing loop: " + (rep.ks.flag or str(rep.ks.status)))
    if p is not None and p.status is Status.OK:
        own = p.phase_probabilities.get(p.phase, 0.0)
        odds = ", ".join(f"{k} {v:.0%}" for k, v in p.phase_probabilities.items()) or "no draws"
        rep.add_model_check("theory_odds", own >= PHASE_MIN_PROBABILITY and own >= max(p.phase_probabilities.values(),
                                                                                     default=1.0),
                            f"theory odds: the fitted parameters give '{p.phase}' with probability {own:.0%} under "
                            f"the jackknife covariance (needs the largest and >= {PHASE_MIN_PROBABILITY:.0%}): {odds}")
    else:
        rep.add_model_check("theory_odds", False, "theory odds: no prediction ("
                            + ((p.beta.flag or "unavailable") if p is not None else "no fit") + ")",
                            status=Status.UNAVAILABLE)


def _lam_for_bound(rep: CheckReport):
    """(lam_hat, replicates, source) for the tempering gate: the characteristic-function fit's lam_hat
    where lam itself is identified (jumps fitted, status OK, a finite error, its jackknife bias at most
    JACKKNIFE_BIAS_LIMIT of its error), else (unavailable with the reason, None, "").

    The gate needs lam, not the whole jump law: alpha, eta_J or eta_G need not pass their checks
    (the model check ``jump_fit``). Where lam is OK its error covered the truth 0.88 / 0.98 of the time
    on the independent generator (docs/calibration.md): conservative."""
    f = rep.fit
    if f is None:
        return unavailable("no SDE fit", Status.NOT_IDENTIFIED), None, ""
    n = f.noise
    lam = n.lam
    if n.mode != "jumps":
        why = "no jump fit (" + (n.eta_j.flag or "no jumps detected") + ")"
        return unavailable(why, Status.NOT_IDENTIFIED), None, ""
    if not (lam.status is Status.OK and lam.ok and math.isfinite(lam.se) and lam.se > 0):
        return unavailable("lam_hat " + (lam.flag or str(lam.status)), Status.NOT_IDENTIFIED), None, ""
    reps = floored_replicates(f.replicates, getattr(n, "model_se", np.full(4, np.nan)))
    loo = reps[:, 4] if reps.shape[0] >= 3 else None
    if loo is not None:
        b = jackknife_bias(f.replicates[:, 4], lam.value)
        if math.isfinite(b) and abs(b) > JACKKNIFE_BIAS_LIMIT * lam.se:
            return unavailable(f"lam_hat: jackknife bias {b / lam.se:+.2f} se (> {JACKKNIFE_BIAS_LIMIT:g})",
                               Status.NOT_IDENTIFIED), None, ""
    return lam, loo, "characteristic-function fit of the increments (lam_hat identified)"


def _gates(rep: CheckReport, R: int, Q: int) -> None:
    """The conditions of a phase call (docs/specification.md §4, §8; docs/calibration.md) and the call.

    Data gates (every call): records, neurons, stationarity, independence of the neurons and the
    dynamics' root. Then either the root lies significantly beyond the identified tempering cut-off
    lam_hat (:func:`levysde.inference.phase_call.admissibility_test`): "collapsed"; or beta_tail and
    beta_dynamics agree (closure, joint jackknife), the side of 1 of their combination has odds >=
    PHASE_MIN_ODDS, and for "concentrated" the root is significantly below lam_hat (tempering)."""
    _model_checks(rep)
    rep.add_gate("records", R >= MIN_RECORDS, f"too few records ({R} < {MIN_RECORDS})")
    rep.add_gate("neurons", Q >= MIN_NEURONS, f"too few independent neurons ({Q} < {MIN_NEURONS})")
    st = rep.stationarity
    rep.add_gate("stationary", st is not None and st.stationary, "not stationary: " + (st.reason if st else "untested"),
                 status=st.status if st is not None and not st.stationary else Status.FAILED)
    ind = rep.independence
    rep.add_gate("independent", ind is not None and ind.independent, ind.reason if ind else "independence untested",
                 status=ind.status if ind is not None and not ind.independent else Status.UNAVAILABLE)
    bd, bt = rep.beta_dynamics, rep.beta_tail
    rep.add_gate("dynamics", bd.status is Status.OK and bd.ok, "beta_dynamics: " + (bd.flag or str(bd.status)),
                 status=Status.UNAVAILABLE)
    dyn_loo = _dyn_loo(rep.dynamics)
    lam, lam_loo, source = _lam_for_bound(rep)
    adm = rep.admissibility = admissibility_test(bd, lam, beta_loo=dyn_loo, lam_loo=lam_loo, source=source)
    c = rep.closure = closure_test(bt, bd, tail_loo=rep.tail_loo, dyn_loo=dyn_loo)
    if adm.status is Status.FAILED:               # the root lies beyond lam: no admissible root
        rep.add_gate("tempering", True)
        rep.call, rep.evidence = "collapsed", "root_beyond_lambda: " + adm.reason
        return
    rep.add_gate("tail", bt.status is Status.OK and bt.ok, "beta_tail: " + (bt.flag or str(bt.status)),
                 status=Status.UNAVAILABLE)
    rep.add_gate("closure", c.status is Status.OK, c.reason, status=c.status)
    side = c.phase
    if side is None:
        rep.add_gate("phase_odds", False, "phase odds: no combined beta (the closure did not pass)",
                     status=Status.UNAVAILABLE)
        rep.add_gate("tempering", False, "tempering: no combined beta", status=Status.UNAVAILABLE)
        return
    own = c.probabilities.get(side, 0.0)
    odds = ", ".join(f"{k} {v:.3g}" for k, v in c.probabilities.items())
    rep.add_gate("phase_odds", own >= PHASE_MIN_ODDS,
                 f"phase odds: beta_combined = {c.combined.value:.3g} +- {c.combined.se:.2g} gives '{side}' with "
                 f"probability {own:.3g} < {PHASE_MIN_ODDS:g} ({odds})")
    if side == "concentrated":
        rep.add_gate("tempering", adm.status is Status.OK, "tempering: " + adm.reason,
                     status=Status.FAILED if adm.status is Status.OK else Status.UNAVAILABLE)
    elif math.isfinite(adm.z) and adm.z <= 0:    # lam_hat identified, the root at or beyond it
        rep.add_gate("tempering", False, "tempering: the root is at or beyond the tempering cut-off (" + adm.reason
                     + "): the data's best estimate has no admissible root, and a collapsed set with lam < 1 reads "
                     "as broad", status=Status.UNAVAILABLE)
    else:
        rep.add_gate("tempering", True)
    rep.call = side
    rep.evidence = (f"closure: beta_tail and beta_dynamics agree (z = {c.z:+.2f}), beta_combined = "
                    f"{c.combined.value:.3g} +- {c.combined.se:.2g}; "
                    + (adm.reason if side == "concentrated" or math.isfinite(adm.z) else
                       "broad is called without a bound on lam (lam_hat not identified; a collapsed set with a cut-off "
                       "lam < 1 would read as broad: its time scales have an infinite mean as well)"))


def check_trajectories(zeta, step, *, lags=None, weights=None, variant: str = "gate",
                       late_fraction: float = 0.5, n_groups: int = 16, n_boot: int = 400, seed: int = 0,
                       closing_loop: bool = True, config: dict | None = None) -> CheckReport:
    r"""Fit, test and compare for trajectories zeta (R records, Q neurons) at times step (R,).

    Infinite entries are treated as NaN and exact-duplicate neurons are merged
    (:func:`clean_columns`, with notes); the neuron gate counts distinct neurons.

    Parameters
    ----------
    zeta : array_like, shape (R, Q)
        zeta_q per record and neuron (NaN = undefined; +-inf is treated as NaN).
    step : array_like, shape (R,)
        Strictly increasing record times.
    lags : array_like, shape (n,), optional
        Finite lags > 0 (steps) whose smallest sets the envelope grid's start (default 1).
    weights : array_like, shape (Q,), optional
        ELR amplitudes :math:`\Lambda_q` of the last record (default equal).
    variant : {"gate", "jac", "window"}, default "gate"
        Which zeta this is (:data:`VARIANT_KEYS`); the envelope is built for "gate" only.
    late_fraction : float, default 0.5
        In (0, 1]: the last fraction of records is the late part (at least the last 3).
    n_groups : int, default 16
        Neuron groups of the jackknife, >= 8 (:data:`MIN_GROUPS`).
    n_boot : int, default 400
        Normal draws for the phase probabilities of the fitted SDE, >= 1.
    seed : int, default 0
        Seed of the draws and of the closing-loop simulation, >= 0 (None is refused).
    closing_loop : bool, default True
        Simulate the fitted SDE (a few seconds) for the KS gate.
    config : dict, optional
        The run configuration, stored in the report.

    Returns
    -------
    CheckReport
        Every estimate, gate and note; ``phase`` None with reasons unless every gate passes.

    Raises
    ------
    ValueError
        For bad shapes or options (n_groups < 8, late_fraction outside (0, 1], and the rules
        above), naming the parameter.

    References
    ----------
    * The specification, §4, §5, §8 and §9.
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 80, 128
    >>> z = np.zeros((R + 50, Q))
    >>> for r in range(R + 49):       # dZ = 0.5 tanh(-Z/0.5) dt + 0.5 dW, 50 steps of burn-in
    ...     z[r + 1] = z[r] + 0.5 * np.tanh(-z[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> zeta = z[50:]
    >>> rep = check_trajectories(zeta, np.arange(R), n_boot=50, closing_loop=False)
    >>> round(rep.fit.kappa.value, 2), rep.fit.n_neurons            # truth: kappa = 0.5
    (0.53, 128)
    >>> rep.phase, rep.ks.status
    (None, <Status.NOT_RUN: 'not run'>)
    """
    zeta = check_array("zeta", zeta, ndim=2, min_size=1, allow_inf=True, allow_nan=True)
    step = check_array("step", step, shape=(zeta.shape[0],), increasing=True,
                       why="one training step per record: the time axis of every increment, window and drift")
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    check_int("n_groups", n_groups, MIN_GROUPS, why="neuron groups of the jackknife")
    check_choice("variant", variant, tuple(VARIANT_KEYS))
    if lags is not None:
        check_array("lags", lags, ndim=1, min_size=1, lo=0.0, lo_open=True)
    check_int("n_boot", n_boot, 1)
    check_int("seed", seed, 0, why="a fixed seed keeps the check reproducible")
    check_bool("closing_loop", closing_loop)
    if config is not None and not isinstance(config, dict):
        raise ValueError(f"config must be None or a dict; got {type(config).__name__}")
    if weights is not None:
        check_array("weights", weights, shape=(zeta.shape[1],), allow_inf=True, allow_nan=True)
    zeta, weights, notes = clean_columns(zeta, weights)
    if n_groups > zeta.shape[1] >= 2:
        notes.append(f"n_groups = {n_groups} exceeds the {zeta.shape[1]} neurons: {zeta.shape[1]} groups of one "
                     f"neuron each are used")
    R = zeta.shape[0]
    first = min(int(R * (1 - late_fraction)), max(R - 3, 0))
    late = zeta[first:]
    try:
        fit = fit_sde(zeta, step, late_fraction=late_fraction, n_groups=n_groups, seed=seed)
    except ValueError as exc:
        fit = None
        notes.append(f"{_FIT_FAILED}{exc}")
    prediction = predict(fit, n_boot=n_boot, seed=seed) if fit is not None else None
    if fit is not None:
        notes.extend(fit.notes)
    Q = fit.n_neurons if fit is not None else zeta.shape[1]
    stat = stationarity_test(late if Q > 1 else late[:, :1], step[first:],
                             n_groups=max(n_groups, STATIONARITY_GROUPS))
    indep = independence_test(late if Q > 1 else late[:, :1], step[first:])
    beta_tail, tail_loo = _beta_tail(late, n_groups)
    se_threshold = _tail_threshold_error(late, beta_tail)
    beta_tail = _with_threshold_error(beta_tail, se_threshold)
    dyn = _dynamics(zeta, step, late_fraction, n_groups, notes)
    if variant == "gate":
        beta_env, lag_max = _beta_envelope(np.ones(1) if lags is None else lags, zeta[-1], weights, n_groups)
    else:
        beta_env, lag_max = unavailable("the recorded envelope is built from the gate variant"), float("nan")
    if fit is not None and closing_loop:
        ks, sim_tail = _closing_loop(fit, late, seed)
    else:
        ks = sim_tail = unavailable("closing loop not run", Status.NOT_RUN)
        notes.append("closing loop not run: the KS gate was not applied")
    early = zeta[: max(1, R // 10)]
    rep = CheckReport(variant=variant, fit=fit, prediction=prediction, beta_tail=beta_tail,
                      beta_envelope=beta_env, zeta_spread=spread(late[-1:]), early_spread=spread(early[-1:]),
                      ks=ks, beta_sim_tail=sim_tail, notes=notes, config=dict(config or {}),
                      stationarity=stat, lag_max=lag_max, dynamics=dyn, independence=indep, tail_loo=tail_loo)
    rep.extra["beta_tail_se_threshold"] = finite_or_none(se_threshold)
    _gates(rep, R, Q)
    return rep


def check_run(path, *, variant: str = "gate", late_fraction: float = 0.5, n_boot: int = 400,
              seed: int = 0, closing_loop: bool = True, n_groups: int = 16) -> CheckReport:
    """:func:`check_trajectories` on a ``levysde train`` run file.

    The last record's Lambda weights the envelope; the ``learned`` gate compares the late loss
    with the trivial predictor's (:func:`levysde.rnn.learned.learned_diagnostic`), and a note
    reports float32-saturated gates where they matter.

    Parameters
    ----------
    path : str or os.PathLike
        The run file (.npz).
    variant : {"gate", "jac", "window"}, default "gate"
        Check ``zeta`` (gate), ``zeta_jac`` (first order) or ``zeta_window`` (the anti-collapse
        paper's windowed first-order transport, recorded with ``--window-lags``; NaN entries,
        non-decaying units, are undefined here: :func:`levysde.inference.checkpoint_check.check_run_censored`
        adds their censored reading).
    late_fraction : float, default 0.5
        The late part, in (0, 1].
    n_boot : int, default 400
        Normal draws for the phase probabilities, >= 1.
    seed : int, default 0
        Seed, >= 0.
    closing_loop : bool, default True
        Simulate the fitted SDE for the KS gate.
    n_groups : int, default 16
        Neuron groups of the jackknife, >= 8.

    Returns
    -------
    CheckReport
        As :func:`check_trajectories`, with the ``learned`` gate and ``learned``, ``loss_ratio``
        in ``extra``.

    Raises
    ------
    ValueError
        For a bad file, variant (also "window" on a run file without ``zeta_window``),
        late_fraction or n_groups (< 8).

    References
    ----------
    * The specification, §8 (i): the phase is withheld unless the network learned.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.io.runfile import save_run
    >>> rng = np.random.default_rng(0)
    >>> R, Q = 80, 128
    >>> z = np.zeros((R + 50, Q))
    >>> for r in range(R + 49):       # dZ = 0.5 tanh(-Z/0.5) dt + 0.5 dW, 50 steps of burn-in
    ...     z[r + 1] = z[r] + 0.5 * np.tanh(-z[r] / 0.5) + 0.5 * rng.normal(size=Q)
    >>> zeta = z[50:]
    >>> arrays = dict(zeta=zeta, zeta_jac=zeta, step=np.arange(R) * 10, Lambda=np.ones((R, Q)),
    ...               loss=np.full(R, 0.1), lags=np.geomspace(1, 100, 5), envelope=np.ones((R, 5)),
    ...               trivial_loss=np.array(1.0))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_run(os.path.join(d, "run.npz"), arrays, {"kind": "rnn"})
    ...     rep = check_run(os.path.join(d, "run.npz"), n_boot=50, closing_loop=False)
    >>> rep.extra["learned"], rep.extra["loss_ratio"], rep.gates["learned"].passed
    (True, 0.1, True)
    """
    check_choice("variant", variant, tuple(VARIANT_KEYS))
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    check_int("n_groups", n_groups, MIN_GROUPS, why="neuron groups of the jackknife")
    run = load_run_arrays(path)
    zeta = check_array(f"the run file's {VARIANT_KEYS[variant]!r}", variant_zeta(run, variant, path),
                       allow_inf=True, allow_nan=True)
    lam = np.asarray(run["Lambda"], dtype=float) if "Lambda" in run else None
    weights = lam[-1] if lam is not None and lam.shape == zeta.shape else None
    step = check_array("the run file's 'step'", run["step"], allow_inf=True, allow_nan=True)
    rep = check_trajectories(zeta, step, lags=run["lags"], weights=weights,
                             variant=variant, late_fraction=late_fraction, n_groups=n_groups, n_boot=n_boot,
                             seed=seed, closing_loop=closing_loop, config=run["config"])
    return add_run_checks(rep, [run])


def add_run_checks(rep: CheckReport, runs, *, names=None) -> CheckReport:
    """What :func:`check_run` adds to a report from the run files: the ``learned`` gate and the saturation notes.

    For one run, the gate compares its late loss with the trivial predictor's
    (:func:`levysde.rnn.learned.learned_diagnostic`); for several runs checked as one (their
    neurons side by side, :func:`levysde.inference.checkpoint_check.check_runs_pooled`) it is
    the worst run's: the gate passes only when every run learned, and a run whose loss cannot
    be read counts as the worst.

    Parameters
    ----------
    rep : CheckReport
        The report of these runs' trajectories (:func:`check_trajectories`); modified in place.
    runs : sequence of dict
        The run files' arrays (:func:`load_run_arrays`), at least one.
    names : sequence of str, optional
        A name per run (its file), said in the reason and the notes when there are several
        (default ``run 0``, ``run 1``, ...).

    Returns
    -------
    CheckReport
        ``rep`` itself, with the gate ``learned`` (and the note "phase withheld: ..." when it
        fails), ``learned`` (None when it cannot be told) and ``loss_ratio`` (the worst run's; None
        when it cannot be told)
        in ``extra``, for several runs also ``loss_ratios`` (one per run), and each run's
        float32-saturation note where it matters (:func:`levysde.rnn.learned.saturation_note`).

    Raises
    ------
    ValueError
        For no run, or as many names as runs not given.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rep = check_trajectories(rng.normal(size=(30, 40)), np.arange(30.0), n_boot=20, closing_loop=False)
    >>> runs = [{"config": {"kind": "rnn"}, "loss": np.full(8, v), "trivial_loss": np.array(1.0)}
    ...         for v in (0.1, 0.7)]
    >>> rep = add_run_checks(rep, runs, names=["a.npz", "b.npz"])
    >>> rep.gates["learned"].passed, rep.extra["loss_ratio"], rep.extra["loss_ratios"]
    (False, 0.7, [0.1, 0.7])
    >>> print(rep.gates["learned"].reason[:46])
    b.npz, the worst of 2 runs: the network did no
    """
    runs = list(runs)
    names = [f"run {i}" for i in range(len(runs))] if names is None else [str(n) for n in names]
    if not runs or len(names) != len(runs):
        raise ValueError(f"runs: at least one run, and one name per run; got {len(runs)} run(s), {len(names)} name(s)")
    res = [_learned(run) for run in runs]
    worst = max(range(len(res)), key=lambda i: (math.isnan(res[i][1]), 0.0 if math.isnan(res[i][1]) else res[i][1]))
    # every run learned: True; one did not: False; else (a loss that cannot be read) None, unknown
    said = [r[0] for r in res]
    learned = True if all(v is True for v in said) else False if any(v is False for v in said) else None
    ratio, reason = res[worst][1], res[worst][2]
    several = len(runs) > 1
    if several and reason:
        reason = f"{names[worst]}, the worst of {len(runs)} runs: {reason}"
    rep.add_gate("learned", learned is True, reason, status=Status.UNAVAILABLE if learned is None else Status.FAILED)
    if not learned:
        rep.notes.append(f"phase withheld: {reason}")
    rep.extra.update(learned=learned, loss_ratio=finite_or_none(ratio))
    if several:
        rep.extra["loss_ratios"] = [finite_or_none(r[1]) for r in res]
    for run, name in zip(runs, names, strict=True):
        note = saturation_note(run)              # float32-saturated gates: shown when they matter
        if note:
            rep.notes.append(f"{name}: {note}" if several else note)
    return rep
