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
"""
from __future__ import annotations

import math
import os

import numpy as np

from levysde.core.jsonable import finite_or_none
from levysde.core.status import Estimate, Status, unavailable
from levysde.core.validate import check_int, check_real
from levysde.inference.check import MIN_GROUPS, CheckReport, check_run, check_trajectories, load_run_arrays
from levysde.io.checkpoint_taus import CheckpointTaus, read_checkpoint_taus
from levysde.rnn.learned import LEARNED_THRESHOLD
from levysde.stats.tails import power_law_note, tail_from_samples

__all__ = ["late_start", "tail_readings", "add_censored_tail", "check_run_censored", "check_checkpoint_taus"]


def late_start(n_records: int, late_fraction: float) -> int:
    """Index of the first late record, the rule of :func:`levysde.inference.check.check_trajectories`:
    ``min(int(R (1 - late_fraction)), max(R - 3, 0))``."""
    return min(int(n_records * (1 - late_fraction)), max(n_records - 3, 0))


def tail_readings(tau: np.ndarray, censored: np.ndarray, *, late_fraction: float = 0.5,
                  tail_fraction: float = 0.1, tau_censor: float | None = None) -> dict[str, Estimate]:
    """levysde's tail rate of the late spectrum in two readings: censored units dropped, or censored.

    Parameters
    ----------
    tau : (R, H) array
        tau_q per record and unit (steps); entries under ``censored`` are ignored.
    censored : (R, H) bool array
        Units whose tau was not resolved (no decay over the fit window).
    late_fraction : float
        The late records, as in :func:`levysde.inference.check.check_trajectories` (in (0, 1]).
    tail_fraction : float
        The threshold u on X = log tau = -zeta is the (1 - tail_fraction) quantile of the late X
        (censored entries at their censoring point in the censored reading).
    tau_censor : float, optional
        The censoring point: a censored unit's tau is known to exceed it. Default: the largest
        resolved tau of the same record (a censored unit is beyond every resolved one).

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
        For arrays of different shapes or options out of range.

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
        out[reading] = Estimate(e.beta_hat, e.se, flag + (f"; {note}" if note else ""),
                                status=Status.REJECTED if e.power_law is False else Status.OK)
    return out


def add_censored_tail(rep: CheckReport, tau: np.ndarray, censored: np.ndarray, *, late_fraction: float = 0.5,
                      tau_censor: float | None = None, what: str = "no decay over the fit window") -> CheckReport:
    """Add the censored reading of the tail rate to a report: ``beta_tail_censored`` (JSON keys of
    :func:`tail_readings`' censored reading), ``n_censored_final`` and ``n_censored_late`` in
    ``rep.extra``, and a note when units are censored. ``tau``, ``censored``: (R, H), the
    trajectories the report was made from; ``what`` says why a unit is censored. Returns ``rep``."""
    tau = np.asarray(tau, dtype=float)
    cens = np.asarray(censored, dtype=bool)
    readings = tail_readings(tau, cens, late_fraction=late_fraction, tau_censor=tau_censor)
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
    """:func:`levysde.inference.check.check_run` plus the censored reading of the tail rate
    (:func:`add_censored_tail`): in the first-order variant (``"jac"``) a neuron-record masked as
    expanding (mu_bar^(1) <= 0, NaN in ``zeta_jac``) has no finite decay time: it is censored. In the
    gate variant zeta is always defined and nothing is censored. ``kwargs`` as for check_run."""
    rep = check_run(path, variant=variant, **kwargs)
    z = np.asarray(load_run_arrays(path)["zeta" if variant == "gate" else "zeta_jac"], dtype=float)
    if z.ndim != 2:
        return rep
    cens = np.isnan(z)
    with np.errstate(over="ignore"):
        tau = np.where(cens, np.inf, np.exp(-np.where(cens, 0.0, z)))
    return add_censored_tail(rep, tau, cens, late_fraction=kwargs.get("late_fraction", 0.5),
                             what="masked as expanding, mu_bar^(1) <= 0")


def check_checkpoint_taus(source: str | os.PathLike[str] | CheckpointTaus, *, loss_ratio: float | None = None,
                          late_fraction: float = 0.5, n_groups: int = 16, n_boot: int = 400, seed: int = 0,
                          closing_loop: bool = True, tau_censor: float | None = None) -> CheckReport:
    """:func:`levysde.inference.check.check_trajectories` on a ``checkpoint_taus/`` directory.

    Parameters
    ----------
    source : path or CheckpointTaus
        The directory (or a model directory holding one), or what
        :func:`levysde.io.checkpoint_taus.read_checkpoint_taus` returned.
    loss_ratio : float, optional
        The run's late loss over the trivial predictor's loss, from its own logs (>= 0). The
        ``learned`` gate passes when it is below 0.5; without it the gate fails (the files hold no
        loss) and the phase is withheld.
    late_fraction, n_groups, n_boot, seed, closing_loop
        As for :func:`levysde.inference.check.check_trajectories`.
    tau_censor : float, optional
        The censoring point of :func:`tail_readings`.

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
        From the reader (fewer than 2 checkpoints, bad files) or for options out of range.
    """
    ct = source if isinstance(source, CheckpointTaus) else read_checkpoint_taus(source, min_checkpoints=2)
    if ct.tau.shape[0] < 2:
        raise ValueError(f"{ct.path}: {ct.tau.shape[0]} checkpoint(s); a trajectory needs at least 2")
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
    if loss_ratio is None:
        learned, reason = False, ("cannot tell whether the network learned: checkpoint_taus hold no loss "
                                  "(give the late loss / trivial loss)")
    else:
        learned = loss_ratio <= LEARNED_THRESHOLD
        reason = "" if learned else (f"the network did not learn (late loss / trivial predictor's loss = "
                                     f"{loss_ratio:.3g} > {LEARNED_THRESHOLD})")
    rep.add_gate("learned", learned, reason)
    gaps = np.diff(ct.epoch)
    rep.extra.update(source="checkpoint_taus", path=ct.path, epochs=[int(ct.epoch[0]), int(ct.epoch[-1])],
                     record_interval_epochs=float(np.median(gaps)), n_units=int(ct.tau.shape[1]), learned=learned,
                     loss_ratio=finite_or_none(loss_ratio))
    return rep
