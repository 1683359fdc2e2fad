"""``levysde check`` on the anti-collapse paper's output: a ``checkpoint_taus/`` directory.

The paper's code writes one tau per unit at each checkpoint (:func:`levysde.io.checkpoint_taus.read_checkpoint_taus`).
zeta = -log tau per checkpoint forms a trajectory set: records are checkpoints, the time axis is
the epoch (the record interval in epochs), and :func:`levysde.inference.check.check_trajectories`
runs on it as on a run file of ``levysde train``. Units that did not decay over the paper's fit
window (tau = NaN in the files) are right-censored: the SDE fit and the stationarity test see
them as undefined entries, and the spectrum's tail rate is reported in two readings, with the
censored units dropped (``beta_tail``) and counted as censored (``beta_tail_censored``,
:func:`tail_readings`), with their number.

Whether the network learned is not in these files: give the late loss over the trivial
predictor's loss (``loss_ratio``) from the run's own logs, or the phase stays withheld
(docs/specification.md §8 (i)).

Run files of ``levysde train`` with censored entries: :func:`check_run_censored` for one run;
several runs of one model (its seeds) checked as one set of neurons, :func:`check_runs_pooled`:
their zeta side by side, censored the same way, the ``learned`` gate the worst run's.
"""
from __future__ import annotations

import math
import os

import numpy as np

from levysde.core.jsonable import finite_or_none
from levysde.core.status import Estimate, Status, unavailable
from levysde.core.validate import check_array, check_int, check_real
from levysde.inference.check import (
    MIN_GROUPS,
    MIN_TAIL_NEURONS,
    TAIL_FRACTION,
    VARIANT_KEYS,
    CheckReport,
    add_run_checks,
    check_run,
    check_trajectories,
    load_run_arrays,
    variant_zeta,
    with_tail_threshold_error,
)
from levysde.inference.sde_fit import MIN_FIT_RECORDS
from levysde.io.checkpoint_taus import CheckpointTaus, read_checkpoint_taus
from levysde.rnn.learned import LEARNED_THRESHOLD
from levysde.stats.tails import power_law_note, tail_from_samples

__all__ = ["late_start", "tail_readings", "add_censored_tail", "check_run_censored", "check_runs_pooled",
           "check_checkpoint_taus"]

#: why a NaN entry of a variant's zeta is censored (the note of :func:`add_censored_tail`)
_CENSORED_WHY = {"window": "no decay over the paper's fit window, transport slope b_q >= 0",
                 "jac": "masked as expanding, mu_bar^(1) <= 0", "gate": "undefined zeta"}


def late_start(n_records: int, late_fraction: float) -> int:
    r"""Index of the first late record, the rule of :func:`levysde.inference.check.check_trajectories`.

    Parameters
    ----------
    n_records : int
        Number of records :math:`R` (>= 0).
    late_fraction : float
        The last fraction of records that forms the late part, in (0, 1]. Not validated here:
        the callers check it.

    Returns
    -------
    int
        :math:`\min(\lfloor R\,(1 - \texttt{late\_fraction}) \rfloor, \max(R - 3, 0))`: the late
        part is the last ``late_fraction`` of the records, and at least the last 3 when there are
        that many.

    Examples
    --------
    >>> late_start(100, 0.5)
    50
    >>> late_start(4, 0.25)             # at least 3 late records
    1
    >>> late_start(2, 0.5)
    0
    """
    return min(int(n_records * (1 - late_fraction)), max(n_records - 3, 0))


def tail_readings(tau: np.ndarray, censored: np.ndarray, *, late_fraction: float = 0.5,
                  tail_fraction: float = 0.1, tau_censor: float | None = None,
                  as_beta_tail: bool = False) -> dict[str, Estimate]:
    r"""levysde's tail rate of the late spectrum in two readings: censored units dropped, or censored.

    Parameters
    ----------
    tau : (R, H) array
        tau_q per record and unit (steps); entries under ``censored`` are ignored.
    censored : (R, H) bool array
        Units whose tau was not resolved (no decay over the fit window).
    late_fraction : float, default 0.5
        The late records, as in :func:`levysde.inference.check.check_trajectories` (in (0, 1]).
    tail_fraction : float, default 0.1
        In (0, 1). The threshold u on X = log tau = -zeta is the (1 - tail_fraction) quantile of
        the late X (censored entries at their censoring point in the censored reading).
    tau_censor : float, optional
        The censoring point: a censored unit's tau is known to exceed it. Default: the largest
        resolved tau of the same record (a censored unit is beyond every resolved one).
    as_beta_tail : bool, default False
        Follow ``beta_tail``'s rules (:func:`add_censored_tail`): fewer than
        :data:`levysde.inference.check.MIN_TAIL_NEURONS` (20) neurons beyond the threshold is
        not identified (no error), and the threshold's systematic error (the rate at the
        neighbouring threshold) is added in quadrature to the jackknife's. Give
        ``tail_fraction`` :data:`levysde.inference.check.TAIL_FRACTION` with it.

    Returns
    -------
    dict
        ``{"dropped": Estimate, "censored": Estimate}``: the Hill/MLE rate with its
        delete-one-neuron jackknife error (:func:`levysde.stats.tails.tail_from_samples`); the
        censored reading uses the censored MLE (``censored=``). The flag says how many censored
        entries lie beyond u.

    Raises
    ------
    ValueError
        For arrays of different shapes or options out of range (``late_fraction`` outside
        (0, 1], ``tail_fraction`` outside (0, 1), ``tau_censor`` not > 0).

    Notes
    -----
    With :math:`X = \log\tau` over the late records and :math:`u` its
    :math:`(1 - \texttt{tail\_fraction})` quantile, the rate is the maximum-likelihood exponent
    of the exponential excesses :math:`X - u`; with :math:`d` uncensored exceedances and
    censored excesses counted in the exposure, the censored MLE is

    .. math::

        \hat\beta = \frac{d}{\sum_{i:\,X_i > u} (X_i - u)},

    where censored entries sit at their censoring point (Einmahl, Fils-Villetard & Guillou 2008).
    A left tail :math:`\rho(\zeta) \sim A e^{\beta\zeta}` is a power law
    :math:`p(\tau) \sim \tau^{-1-\beta}` (the specification, §1).

    References
    ----------
    * J. H. J. Einmahl, A. Fils-Villetard, A. Guillou, "Statistics of extremes under random
      censoring", *Bernoulli* 14 (2008) 207-227.
    * B. M. Hill, "A simple general approach to inference about the tail of a distribution",
      *Ann. Statist.* 3 (1975) 1163-1174.
    * The specification, §1 and §8.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> tau = rng.pareto(0.8, size=(4, 3000)) + 1.0
    >>> cens = tau > np.quantile(tau, 0.98)
    >>> r = tail_readings(tau, cens)
    >>> bool(abs(r["censored"].value - 0.8) < 4 * r["censored"].se), bool(r["dropped"].value > 0.9)
    (True, True)
    """
    tau = np.asarray(tau, dtype=float)
    cens = np.asarray(censored, dtype=bool)
    if tau.ndim != 2 or cens.shape != tau.shape:
        raise ValueError(f"tau and censored must be (R, H) arrays of one shape; got {tau.shape}, {cens.shape}")
    late_fraction = check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    tail_fraction = check_real("tail_fraction", tail_fraction, 0.0, 1.0, lo_open=True, hi_open=True)
    first = late_start(tau.shape[0], late_fraction)
    t, c = tau[first:], cens[first:] | ~np.isfinite(tau[first:])
    ok = ~c & (t > 0)
    if ok.sum() < 2:
        why = "fewer than 2 resolved time scales in the late records"
        return {"dropped": unavailable(why), "censored": unavailable(why)}
    x = np.where(ok, np.log(np.where(ok, t, 1.0)), np.nan)
    if tau_censor is None:
        with np.errstate(invalid="ignore"):
            xc = np.nanmax(x, axis=1, keepdims=True)
        xc = np.where(np.isfinite(xc), xc, np.nanmax(x))
    else:
        xc = math.log(check_real("tau_censor", tau_censor, 0.0, lo_open=True))
    xcen = np.where(c, xc, x)
    lab = np.broadcast_to(np.arange(t.shape[1])[None, :], t.shape)
    out = {}
    for reading, m, cm in (("dropped", ok, None), ("censored", ok | c, c)):
        xs, ls = xcen[m], lab[m]
        u = float(np.quantile(xs, 1 - tail_fraction))
        e = tail_from_samples(xs, u, groups=ls, censored=None if cm is None else cm[m])
        if not (math.isfinite(e.beta_hat) and e.n_exceed >= 10):
            out[reading] = unavailable(f"tail not resolved: {e.n_exceed:.0f} uncensored samples beyond u = {u:.3g}")
            continue
        k = len(np.unique(ls[xs > u]))
        flag = f"{k} neurons reach the tail; {int(e.n_censored)} censored entries beyond u"
        note = power_law_note(e)
        if as_beta_tail and k < MIN_TAIL_NEURONS:
            out[reading] = Estimate(e.beta_hat, float("nan"), flag + f" (fewer than {MIN_TAIL_NEURONS}: not "
                                    f"identified)" + (f"; {note}" if note else ""), status=Status.NOT_IDENTIFIED)
            continue
        est = Estimate(e.beta_hat, e.se, flag + (f"; {note}" if note else ""),
                       status=Status.REJECTED if e.power_law is False else Status.OK)
        if as_beta_tail:       # beta_tail's threshold systematic error, the same functions
            est = with_tail_threshold_error(est, -xs, None if cm is None else cm[m])
        out[reading] = est
    return out


def add_censored_tail(rep: CheckReport, tau: np.ndarray, censored: np.ndarray, *, late_fraction: float = 0.5,
                      tau_censor: float | None = None, what: str = "no decay over the fit window") -> CheckReport:
    """Add the censored reading of the tail rate to a report.

    The report gains ``beta_tail_censored`` (the JSON keys of :func:`tail_readings`' censored
    reading under ``beta_tail``'s rules: its threshold, :data:`levysde.inference.check.TAIL_FRACTION`,
    at least 20 neurons beyond it, its threshold systematic error; without censored entries it
    equals ``beta_tail``), ``n_censored_final`` and ``n_censored_late`` in ``rep.extra``, and a note when units
    are censored.

    Parameters
    ----------
    rep : CheckReport
        The report made from these trajectories; modified in place.
    tau : array_like, shape (R, H)
        tau_q per record and unit (steps); entries under ``censored`` are ignored.
    censored : array_like of bool, shape (R, H)
        Units whose tau was not resolved.
    late_fraction : float, default 0.5
        The late records, in (0, 1], as for the report.
    tau_censor : float, optional
        The censoring point of :func:`tail_readings` (default: the largest resolved tau of the
        same record).
    what : str, default "no decay over the fit window"
        Why a unit is censored, in the note.

    Returns
    -------
    CheckReport
        ``rep`` itself.

    Raises
    ------
    ValueError
        From :func:`tail_readings` (shapes or options out of range).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> tau = rng.pareto(1.0, size=(6, 400)) + 1.0
    >>> cens = np.zeros(tau.shape, bool)
    >>> cens[-1, :5] = True
    >>> zeta = np.where(cens, np.nan, -np.log(tau))
    >>> rep = check_trajectories(zeta, np.arange(6.0), n_boot=20, closing_loop=False)
    >>> rep = add_censored_tail(rep, tau, cens)
    >>> rep.extra["n_censored_final"], rep.extra["n_censored_late"]
    (5, 5)
    >>> print(rep.notes[-1][:60])
    5 unit-record(s) of the late part are censored (no decay ove
    """
    tau = np.asarray(tau, dtype=float)
    cens = np.asarray(censored, dtype=bool)
    readings = tail_readings(tau, cens, late_fraction=late_fraction, tau_censor=tau_censor,
                             tail_fraction=TAIL_FRACTION, as_beta_tail=True)
    first = late_start(tau.shape[0], late_fraction)
    n_late, n_final, H = int(cens[first:].sum()), int(cens[-1].sum()), int(tau.shape[1])
    if n_late:
        rep.notes.append(f"{n_late} unit-record(s) of the late part are censored ({what}: tau beyond what it "
                         f"resolves; {n_final} of {H} units at the last record); the SDE fit sees them as "
                         f"undefined, beta_tail drops them, beta_tail_censored counts them as right-censored")
    rep.extra.update(n_censored_final=n_final, n_censored_late=n_late,
                     **readings["censored"].as_json("beta_tail_censored"))
    return rep


def check_run_censored(path, *, variant: str = "gate", **kwargs) -> CheckReport:
    r""":func:`levysde.inference.check.check_run` plus the censored reading of the tail rate.

    In the first-order variant (``"jac"``) a neuron-record masked as expanding
    (:math:`\bar\mu^{(1)} \le 0`, NaN in ``zeta_jac``) has no finite decay time; in the windowed
    variant (``"window"``, the anti-collapse paper's time scale) a unit whose fitted transport
    slope is :math:`b_q \ge 0` (NaN in ``zeta_window``) does not decay over the fit window. Both
    are censored (:func:`add_censored_tail`): a time scale beyond what the record resolves. In the
    gate variant zeta is always defined and nothing is censored.

    Parameters
    ----------
    path : str or os.PathLike
        A ``levysde train`` run file (.npz).
    variant : {"gate", "jac", "window"}, default "gate"
        The zeta read: ``zeta`` (gate), ``zeta_jac`` (first order) or ``zeta_window`` (windowed
        first-order transport; the run file must have it: ``levysde train --window-lags``).
    **kwargs
        The options of :func:`levysde.inference.check.check_run` (``late_fraction``, ``n_boot``,
        ``seed``, ``closing_loop``, ``n_groups``).

    Returns
    -------
    CheckReport
        The report of :func:`levysde.inference.check.check_run`, with ``beta_tail_censored``,
        ``n_censored_final`` and ``n_censored_late`` in ``extra``.

    Raises
    ------
    ValueError
        For a bad file, variant or option (from :func:`levysde.inference.check.check_run`),
        and for ``variant="window"`` on a run file without ``zeta_window``.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.io.runfile import save_run
    >>> rng = np.random.default_rng(0)
    >>> R, H = 10, 64
    >>> z = np.cumsum(0.1 * rng.normal(size=(R, H)), axis=0)
    >>> zj = z.copy(); zj[-1, :4] = np.nan                  # 4 units masked as expanding
    >>> arrays = dict(zeta=z, zeta_jac=zj, step=np.arange(R) * 10, Lambda=np.ones((R, H)),
    ...               loss=np.full(R, 0.1), lags=np.geomspace(1, 100, 5), envelope=np.ones((R, 5)),
    ...               trivial_loss=np.array(1.0))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_run(os.path.join(d, "run.npz"), arrays, {"kind": "rnn"})
    ...     rep = check_run_censored(os.path.join(d, "run.npz"), variant="jac", n_boot=20,
    ...                              closing_loop=False)
    ...     try:                                              # no zeta_window in this file
    ...         check_run_censored(os.path.join(d, "run.npz"), variant="window")
    ...     except ValueError as exc:
    ...         print(str(exc)[:60])
    variant='window' needs the run file's 'zeta_window' (recorde
    >>> rep.extra["n_censored_final"], rep.extra["learned"]
    (4, True)
    """
    rep = check_run(path, variant=variant, **kwargs)
    z = variant_zeta(load_run_arrays(path), variant, path)
    if z.ndim != 2:
        return rep
    return _censor_nan(rep, z, variant, kwargs.get("late_fraction", 0.5))


def _censor_nan(rep: CheckReport, z: np.ndarray, variant: str, late_fraction: float) -> CheckReport:
    """:func:`add_censored_tail` for the NaN entries of a variant's zeta (R, Q): tau = exp(-zeta), inf there."""
    cens = np.isnan(z)
    with np.errstate(over="ignore"):
        tau = np.where(cens, np.inf, np.exp(-np.where(cens, 0.0, z)))
    return add_censored_tail(rep, tau, cens, late_fraction=late_fraction, what=_CENSORED_WHY[variant])


def check_runs_pooled(paths, *, variant: str = "window", late_fraction: float = 0.5, n_boot: int = 400,
                      seed: int = 0, closing_loop: bool = True, n_groups: int = 16) -> CheckReport:
    r""":func:`check_run_censored` on several runs at once: their neurons side by side as one set.

    The runs' zeta (R records, H_s units each) become one (R, sum H_s) array, the first run's
    units first, and :func:`levysde.inference.check.check_trajectories` runs on it; NaN entries
    are censored as in :func:`check_run_censored`, and the ``learned`` gate is the worst run's
    (:func:`levysde.inference.check.add_run_checks`). Meant for the seeds of one model, which
    one run alone may leave too small for a phase call (at H = 64 too few far-left increments
    for ``beta_dynamics`` and too few neurons in the tail for ``beta_tail``).

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        ``levysde train`` run files (.npz), at least one, all recorded at the same steps.
    variant : {"gate", "jac", "window"}, default "window"
        The zeta read (:func:`check_run_censored`).
    late_fraction, n_boot, seed, closing_loop, n_groups
        As for :func:`levysde.inference.check.check_run`.

    Returns
    -------
    CheckReport
        As :func:`check_run_censored`, for the pooled neurons; ``extra`` adds ``pooled_runs``
        (the paths), ``n_runs``, ``n_units`` (all pooled units, sum H_s) and ``units_per_run``,
        and the learned gate's ``loss_ratios``. The envelope (gate variant) is weighted by
        every run's last Lambda, on the first run's lags.

    Raises
    ------
    ValueError
        For no path, runs whose record steps differ (naming both files), and what
        :func:`check_run_censored` refuses.

    Notes
    -----
    Pooling assumes that the runs are independent networks (separate seeds: their own
    initialisation, batches and forcing), so that neurons of different runs are independent.
    Neurons of one network are not guaranteed to be: they share its weights and inputs. Every
    error of the check resamples whole neurons as if they were independent; the independence
    test (a common shock at one record, ``independent`` with ``rho_hat``) is there to detect
    when they are not. The jackknife puts neuron :math:`q` of the pooled array in group
    :math:`q mod G` (:func:`levysde.stats.jackknife.neuron_groups`), so with equal H_s each
    group mixes the runs (at H = 64 and G = 16: 4 neurons of every run); it does not resample
    whole runs, so a dependence within a network that the independence test misses makes the
    errors too small.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.io.runfile import save_run
    >>> rng = np.random.default_rng(0)
    >>> R, H = 10, 24
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = []
    ...     for s, loss in ((1, 0.1), (2, 0.2)):
    ...         z = np.cumsum(0.1 * rng.normal(size=(R, H)), axis=0)
    ...         z[-1, :2] = np.nan                             # 2 non-decaying units per run
    ...         arrays = dict(zeta=np.nan_to_num(z), zeta_jac=z, zeta_window=z, step=np.arange(R) * 10,
    ...                       Lambda=np.ones((R, H)), loss=np.full(R, loss), lags=np.geomspace(1, 100, 5),
    ...                       envelope=np.ones((R, 5)), trivial_loss=np.array(1.0))
    ...         paths.append(os.path.join(d, f"m_s{s}.npz"))
    ...         save_run(paths[-1], arrays, {"kind": "rnn", "seed": s})
    ...     rep = check_runs_pooled(paths, n_boot=20, closing_loop=False)
    >>> rep.extra["n_units"], rep.extra["n_censored_final"], rep.extra["loss_ratio"], rep.extra["learned"]
    (48, 4, 0.2, True)
    """
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("paths: no run file given")
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    check_int("n_groups", n_groups, MIN_GROUPS, why="neuron groups of the jackknife")
    runs = [load_run_arrays(p) for p in paths]
    zs = [check_array(f"{p}: the run file's {VARIANT_KEYS.get(variant, variant)!r}", variant_zeta(run, variant, p),
                      ndim=2, allow_inf=True, allow_nan=True) for p, run in zip(paths, runs, strict=True)]
    step = np.asarray(runs[0]["step"], dtype=float)
    for p, run, z in zip(paths, runs, zs, strict=True):
        other = np.asarray(run["step"], dtype=float)
        if z.shape[0] != other.size:
            raise ValueError(f"paths: {p} has {z.shape[0]} records of zeta and {other.size} steps")
        if not np.array_equal(other, step):
            raise ValueError(f"paths: {p} records at other steps than {paths[0]} ({other.size} records up to step "
                             f"{other[-1]:.0f}, against {step.size} up to {step[-1]:.0f}); pooled runs need the "
                             f"same record steps")
    zeta = np.concatenate(zs, axis=1)
    lam = [np.asarray(run["Lambda"], dtype=float) if "Lambda" in run else None for run in runs]
    weights = (np.concatenate([x[-1] for x in lam])
               if all(x is not None and x.shape == z.shape for x, z in zip(lam, zs, strict=True)) else None)
    cfg = {k: v for k, v in runs[0]["config"].items() if k != "seed"}
    cfg.update(seeds=[run["config"].get("seed") for run in runs], pooled_runs=paths)
    rep = check_trajectories(zeta, step, lags=runs[0]["lags"], weights=weights, variant=variant,
                             late_fraction=late_fraction, n_groups=n_groups, n_boot=n_boot, seed=seed,
                             closing_loop=closing_loop, config=cfg)
    add_run_checks(rep, runs, names=[os.path.basename(p) for p in paths])
    _censor_nan(rep, zeta, variant, late_fraction)
    units = [int(z.shape[1]) for z in zs]
    rep.notes.append(f"{len(paths)} runs pooled: {zeta.shape[1]} neurons side by side ({' + '.join(map(str, units))}), "
                     f"taken as independent networks; jackknife group g holds the pooled neurons q = g mod G")
    rep.extra.update(pooled_runs=paths, n_runs=len(paths), n_units=int(zeta.shape[1]), units_per_run=units)
    return rep


def check_checkpoint_taus(source: str | os.PathLike[str] | CheckpointTaus, *, loss_ratio: float | None = None,
                          late_fraction: float = 0.5, n_groups: int = 16, n_boot: int = 400, seed: int = 0,
                          closing_loop: bool = True, tau_censor: float | None = None) -> CheckReport:
    """:func:`levysde.inference.check.check_trajectories` on a ``checkpoint_taus/`` directory.

    Records are the checkpoints, the time axis is the epoch; censored units (tau NaN or inf in the
    files) are undefined entries for the SDE fit and counted as right-censored in
    ``beta_tail_censored`` (:func:`add_censored_tail`).

    Parameters
    ----------
    source : path or CheckpointTaus
        The directory (or a model directory holding one), or what
        :func:`levysde.io.checkpoint_taus.read_checkpoint_taus` returned.
    loss_ratio : float, optional
        The run's late loss over the trivial predictor's loss, from its own logs (>= 0). The
        ``learned`` gate passes when it is at most
        :data:`levysde.rnn.learned.LEARNED_THRESHOLD` (0.5); without it ``learned`` is None
        (unknown: the files hold no loss), the gate is unavailable and the phase is withheld.
    late_fraction : float, default 0.5
        The last fraction of the checkpoints that forms the late part, in (0, 1].
    n_groups : int, default 16
        Neuron groups of the jackknife, >= 8.
    n_boot : int, default 400
        Normal draws for the phase probabilities, >= 1.
    seed : int, default 0
        Seed of the draws and of the closing-loop simulation, >= 0.
    closing_loop : bool, default True
        Simulate the fitted SDE for the KS gate (a few seconds).
    tau_censor : float, optional
        The censoring point of :func:`tail_readings` (> 0; default the largest resolved tau of
        the same checkpoint).

    Returns
    -------
    CheckReport
        ``extra`` adds ``source`` ("checkpoint_taus"), ``path``, ``epochs`` (first, last),
        ``record_interval_epochs`` (median), ``n_units``, ``n_censored_final``,
        ``n_censored_late`` (censored unit-records in the late part), ``beta_tail_censored``
        (JSON of the censored reading), ``learned`` and ``loss_ratio``.

    Raises
    ------
    ValueError
        From the reader (fewer than 3 checkpoints, the fewest the SDE fit takes; bad files) or
        for options out of range.

    Notes
    -----
    A ``ckpt_<tag>_taus.npy`` whose tag is no epoch (``ckpt_final_taus.npy``) is not used (it has
    no place on the epoch axis; :func:`levysde.io.checkpoint_taus.read_checkpoint_taus`); a note
    in the report names it.

    References
    ----------
    * L. Livi, "Anti-Collapse Dynamics and the Emergence of Multi-Time-Scale Learning in
      Recurrent Neural Networks", arXiv:2606.29519 (the ``checkpoint_taus`` output).
    * The specification, §8 (i): the phase is withheld unless the network learned.

    Examples
    --------
    >>> from levysde.io.checkpoint_taus import CheckpointTaus
    >>> rng = np.random.default_rng(0)
    >>> R, H = 12, 64
    >>> tau = np.exp(np.cumsum(0.1 * rng.normal(size=(R, H)), axis=0))
    >>> cens = np.zeros((R, H), bool)
    >>> cens[-1, :3] = True
    >>> tau[cens] = np.inf
    >>> ct = CheckpointTaus("ckpt", np.arange(R) * 5, tau, cens, tuple(f"e{i}.npy" for i in range(R)))
    >>> rep = check_checkpoint_taus(ct, loss_ratio=0.1, n_boot=20, closing_loop=False)
    >>> rep.extra["epochs"], rep.extra["n_censored_final"], rep.extra["learned"]
    ([0, 55], 3, True)
    >>> print(check_checkpoint_taus(ct, n_boot=20, closing_loop=False).extra["learned"])  # no loss given
    None
    """
    ct = source if isinstance(source, CheckpointTaus) else read_checkpoint_taus(source,
                                                                                min_checkpoints=MIN_FIT_RECORDS)
    if ct.tau.shape[0] < MIN_FIT_RECORDS:
        raise ValueError(f"{ct.path}: {ct.tau.shape[0]} checkpoint(s); the SDE fit needs at least "
                         f"{MIN_FIT_RECORDS}")
    check_int("n_groups", n_groups, MIN_GROUPS, why="neuron groups of the jackknife")
    if loss_ratio is not None:
        loss_ratio = check_real("loss_ratio", loss_ratio, 0.0, why="late loss / trivial predictor's loss")
    step = ct.epoch.astype(float)
    rep = check_trajectories(ct.zeta, step, variant="gate", late_fraction=late_fraction, n_groups=n_groups,
                             n_boot=n_boot, seed=seed, closing_loop=closing_loop,
                             config={"source": "checkpoint_taus", "path": ct.path})
    add_censored_tail(rep, ct.tau, ct.censored, late_fraction=late_fraction, tau_censor=tau_censor)
    rep.notes.append("zeta = -log tau of the paper's windowed first-order transport (checkpoint_taus); "
                     "records are checkpoints, time in epochs")
    if ct.ignored:
        rep.notes.append(f"not used: {', '.join(ct.ignored)} in {ct.path} (no epoch in the name, so no place on the "
                         f"epoch axis; rename it ckpt_<epoch>_taus.npy with the epoch it was written at to use it)")
    learned: bool | None
    if loss_ratio is None:                      # unknown (None in JSON): the gate still withholds the phase
        learned, reason = None, ("cannot tell whether the network learned: checkpoint_taus hold no loss "
                                 "(give the late loss / trivial loss)")
    else:
        learned = loss_ratio <= LEARNED_THRESHOLD
        reason = "" if learned else (f"the network did not learn (late loss / trivial predictor's loss = "
                                     f"{loss_ratio:.3g} > {LEARNED_THRESHOLD})")
    rep.add_gate("learned", learned is True, reason, status=Status.UNAVAILABLE if learned is None else Status.FAILED)
    gaps = np.diff(ct.epoch)
    rep.extra.update(source="checkpoint_taus", path=ct.path, epochs=[int(ct.epoch[0]), int(ct.epoch[-1])],
                     record_interval_epochs=float(np.median(gaps)), n_units=int(ct.tau.shape[1]), learned=learned,
                     loss_ratio=finite_or_none(loss_ratio))
    return rep
