"""The forgetting envelope of a saved run and its fits (docs/specification.md §5, §8, §9).

A run file (:func:`levysde.io.runfile.read_run`) of the simulator (kind ``"simulation"``)
or of the RNN trainer (kind ``"rnn"``) becomes the table f(l) = E[exp(-l e^zeta)] on a
lag grid, together with the lowest f that its sampling supports (``f_floor``). Then
:func:`fit_run_envelope` gives the decay class, the large-lag log-log slope and its
standard error (a jackknife over particle groups where the run has them).

* simulation runs: the occupation histogram (exact per bin, :func:`levysde.theory.envelope_map.envelope_hist`)
  plus the mass outside its range as point masses, or the final particle positions
  (:func:`levysde.theory.envelope_map.envelope_samples`); lags are limited to what the deepest
  occupied bin and the independent excursions support (docs/specification.md §8).
* RNN runs: the ELR envelope sum_q Lambda_q e^(-l e^zeta_q) / sum_q Lambda_q of the last
  record (docs/specification.md §9), an exact finite sum over the neurons without sampling noise.

Used by ``levysde envelope``; every function here is callable without the CLI.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_choice, check_real
from levysde.inference.envelope_grid import lag_grid
from levysde.inference.spectrum import resolved_lag_max
from levysde.stats.jackknife import jackknife_se
from levysde.stats.tails import power_law_note, tail_check
from levysde.theory.envelope_decay import classify_decay, fit_slope
from levysde.theory.envelope_map import envelope_hist, envelope_samples, valid_lag_max
from levysde.theory.phases import classify

__all__ = ["RunEnvelope", "EnvelopeFits", "MIN_EXCURSIONS", "RNN_F_FLOOR",
           "MAX_JACK_BLOCKS", "sampling_floor", "run_theory", "run_envelope",
           "simulation_envelope", "rnn_envelope", "jackknife_slope_se", "fit_run_envelope"]

#: simulation runs: trust f(l) only at lags that at least this many independent excursions reached
MIN_EXCURSIONS = 100.0

#: RNN runs: the ELR envelope is an exact finite sum over neurons, so fits stop only at this
#: numerical floor
RNN_F_FLOOR = 1e-12

#: at most this many leave-one-out blocks in the jackknife over particle groups
MAX_JACK_BLOCKS = 20


@dataclass(frozen=True)
class RunEnvelope:
    r"""f(l) of a run on a lag grid, with what the fits need (:func:`run_envelope`).

    Attributes
    ----------
    lags : ndarray, shape (n,)
        Lags in steps (or model time units), increasing, > 0.
    f : ndarray, shape (n,)
        Envelope values in [0, 1].
    f_floor : float
        Lowest f the fits may use.
    floor_reason : str
        Which rule gave ``f_floor``.
    source : str
        One line saying where f comes from.
    kind : {"simulation", "rnn"}
        The run's kind.
    groups : tuple or None
        ``(edges (m+1,), counts (G, m))`` of a histogram with G particle groups, for the
        jackknife of :func:`jackknife_slope_se`; None otherwise.
    stderr : ndarray, shape (n,), or None
        Monte-Carlo standard error of f (final-position samples), or None.
    outside_mass_fraction : float or None
        Mass outside the histogram range (simulation histograms), or None.
    beta_theory : float or None
        The model's :math:`\beta^*` from the run's parameters (:func:`run_theory`); None when
        there is no root and for RNN runs.
    tail_rate : float or None
        The model's tail rate of zeta; None for RNN runs.
    phase : str or None
        The model's phase; None for RNN runs.
    note : str or None
        "not a power law ..." when the left tail of zeta fails the stability check of
        :func:`levysde.stats.tails.tail_check` (beta and the Tauberian slope then do not
        apply), else None.
    lag_max : float or None
        RNN runs: the largest lag the spectrum supports
        (:func:`levysde.inference.spectrum.resolved_lag_max`, the 10th longest time scale); the
        table stops there. None for simulation runs.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> zeta = -rng.exponential(2.0, size=(1, 2000))   # one record of 2000 neurons
    >>> run = {"kind": "rnn", "zeta": zeta, "step": np.array([100])}
    >>> env = run_envelope(run, lag_min=1.0, n_lags=50)
    >>> env.kind, env.lags.size, env.f_floor, env.note is None
    ('rnn', 50, 1e-12, True)
    >>> print(env.source)
    rnn: ELR envelope from zeta (last record, step 100, unweighted mean over neurons)
    """

    lags: np.ndarray
    f: np.ndarray
    f_floor: float
    floor_reason: str
    source: str
    kind: str
    groups: tuple | None = None
    stderr: np.ndarray | None = None
    outside_mass_fraction: float | None = None
    beta_theory: float | None = None
    tail_rate: float | None = None
    phase: str | None = None
    note: str | None = None
    lag_max: float | None = None


def sampling_floor(n_indep: float) -> float:
    r"""Lowest f trusted from n independent samples.

    Parameters
    ----------
    n_indep : float
        Number of independent samples behind the envelope (particles, or an effective sample
        size), > 0.

    Returns
    -------
    float
        :math:`\min(100, \sqrt n)/n`: the level of f where about :math:`\min(100, \sqrt n)`
        samples still contribute to the mean of :math:`\exp(-\ell e^{\zeta})`.

    Raises
    ------
    ValueError
        When ``n_indep`` is not > 0.

    References
    ----------
    * The specification, §8: say how many independent samples back each value.

    Examples
    --------
    >>> sampling_floor(100)
    0.1
    >>> sampling_floor(1e6)
    0.0001
    """
    n = check_real("n_indep", n_indep, 0.0, lo_open=True)
    return min(100.0, math.sqrt(n)) / n


_SAMPLING_RULE = "min(100, sqrt(n)) / n for n independent samples"


def _chosen_floor(f_floor, default):
    """(f_floor, "given by the caller") after checking 0 <= f_floor < 1, or ``default`` when None."""
    if f_floor is None:
        return default
    return check_real("f_floor", f_floor, 0.0, 1.0, hi_open=True), "given by the caller"


def run_theory(meta: dict):
    r"""The model's beta*, tail rate and phase from the parameters in a run's meta.

    The values the simulator recorded (``beta_theory``, ``tail_rate_theory``, ``phase``) are
    used when present; otherwise :func:`levysde.theory.classify` of ``eta_j``, ``eta_g``,
    ``kappa``, ``alpha``, ``lam``.

    Parameters
    ----------
    meta : dict
        A run's ``meta`` (simulation) or ``config`` (RNN) object.

    Returns
    -------
    beta, tail_rate, phase : float or None, float or None, str or None
        :math:`\beta^*` (None when the characteristic equation has no root), the tail rate of
        zeta and the phase name; all None when the parameters are missing or out of range.

    References
    ----------
    * The specification, §4: characteristic equation, threshold, phases.

    Examples
    --------
    >>> beta, rate, phase = run_theory({"eta_j": 1.0, "eta_g": 0.1, "kappa": 0.3, "alpha": 1.5,
    ...                                 "lam": 0.5})
    >>> round(beta, 4), phase
    (0.3425, 'broad')
    >>> run_theory({"beta_theory": 1.2, "tail_rate_theory": 1.2, "phase": "broad"})
    (1.2, 1.2, 'broad')
    >>> run_theory({})
    (None, None, None)
    """

    if meta.get("beta_theory") is not None:
        b = float(meta["beta_theory"])
        rate = meta.get("tail_rate_theory")
        return finite_or_none(b), (None if rate is None else float(rate)), meta.get("phase")
    keys = ("eta_j", "eta_g", "kappa", "alpha", "lam")
    if not all(k in meta for k in keys):
        return None, None, None
    try:
        r = classify(*(float(meta[k]) for k in keys)).records()[0]
    except (ValueError, TypeError):
        return None, None, None
    return r["beta"], r["tail_rate"], r["phase"]


# ----------------------------------------------------------------------------- simulation runs

def _histogram(run):
    """(edges (m+1,), counts (G, m)) of a simulation run, checked."""
    edges = np.asarray(run["hist_edges"], dtype=float)
    counts = np.asarray(run["hist_counts"], dtype=float)
    if counts.ndim == 1:
        counts = counts[None, :]
    if counts.ndim != 2 or counts.shape[1] != edges.size - 1:
        raise ValueError(f"hist_counts has shape {counts.shape}, expected (n_groups, {edges.size - 1})")
    if not np.any(counts.sum(axis=0) > 0):
        raise ValueError("the histogram is empty")
    return edges, counts


def _excursion_lag(run, edges):
    """Largest lag that >= MIN_EXCURSIONS independent excursions reached: exp(-zeta) at the
    zeta where the cumulative excursion count from below reaches MIN_EXCURSIONS (docs/specification.md §8;
    +inf beyond the double range); None without excursion counts or with too few excursions."""

    if "excursion_counts" not in run:
        return None
    cum = np.cumsum(np.asarray(run["excursion_counts"], dtype=float).sum(axis=0))
    if cum[-1] < MIN_EXCURSIONS:
        return None
    i = int(np.searchsorted(cum, MIN_EXCURSIONS))
    return valid_lag_max(float(edges[i + 1]))


def _add_outside_mass(run, lags, f, counts):
    """f with the mass outside the histogram range added as point masses at its mean zeta
    (below and above; exp(-l e^zeta) without overflow); (f, outside mass fraction or None)."""

    if "hist_outside" not in run:
        return f, None
    o = np.asarray(run["hist_outside"], dtype=float).sum(axis=0)   # (n_below, sum_below, n_above, sum_above)
    if not (o[0] > 0 or o[2] > 0):
        return f, None
    m_in = counts.sum()
    tot_mass = m_in + o[0] + o[2]
    f = f * (m_in / tot_mass)
    for cnt, zsum in ((o[0], o[1]), (o[2], o[3])):
        if cnt > 0:
            f = f + cnt / tot_mass * envelope_samples(lags, [zsum / cnt], errors=False).f
    return f, float((o[0] + o[2]) / tot_mass)


def _histogram_envelope(run, grid, f_floor):

    edges, counts = _histogram(run)
    occ = np.flatnonzero(counts.sum(axis=0) > 0)
    n_indep = float(np.asarray(run["final_zeta"]).size) if "final_zeta" in run else float(counts.shape[0])
    lag_max = valid_lag_max(float(edges[occ[0]]))
    exc_lag = _excursion_lag(run, edges)
    if exc_lag is not None:
        lag_max = min(lag_max, 100.0 * exc_lag)
    lags = _grid_lags(grid, lag_max)
    f, outside = _add_outside_mass(run, lags, envelope_hist(lags, edges, counts), counts)
    if exc_lag is not None:
        floor, reason = _chosen_floor(f_floor, (
            float(np.exp(np.interp(math.log(exc_lag), np.log(lags), np.log(np.maximum(f, 1e-300))))),
            f">= {MIN_EXCURSIONS:g} independent excursions below -log l (l <= {exc_lag:.4g})"))
    else:
        floor, reason = _chosen_floor(f_floor, (sampling_floor(n_indep), _SAMPLING_RULE))
    note = power_law_note(tail_check(hist=(edges, counts, run.get("hist_sums"), run.get("hist_outside"))))
    return dict(lags=lags, f=f, f_floor=floor, floor_reason=reason, source="histogram",
                groups=(edges, counts), outside_mass_fraction=outside, note=note)


def _sample_envelope(run, grid, f_floor, n_samples, seed):

    if "final_zeta" not in run:
        raise ValueError("this simulation run has no final_zeta samples")
    z = np.asarray(run["final_zeta"], dtype=float).ravel()
    if n_samples is not None and n_samples < z.size:
        z = z[np.random.default_rng(seed).choice(z.size, size=int(n_samples), replace=False)]
    lags = _grid_lags(grid, valid_lag_max(float(z.min())))
    r = envelope_samples(lags, z)
    floor, reason = _chosen_floor(f_floor, (sampling_floor(r.n_eff), _SAMPLING_RULE))
    return dict(lags=lags, f=r.f, f_floor=floor, floor_reason=reason, source="final_zeta samples",
                stderr=r.stderr, note=power_law_note(tail_check(zeta=z)))


def simulation_envelope(run: dict, *, source: str = "hist", lags=None, lag_min=None, lag_max=None,
                        n_lags=None, n_samples: int | None = None, seed: int = 0,
                        f_floor: float | None = None) -> RunEnvelope:
    r"""Envelope of a simulation run (the specification, §5, §8).

    Parameters
    ----------
    run : dict
        From :func:`levysde.io.runfile.read_run` of kind ``"simulation"``: ``hist_edges``
        (m+1,), ``hist_counts`` (G, m) or (m,), optional ``hist_outside`` (G, 4),
        ``excursion_counts`` (G, m), ``final_zeta`` (any shape), ``meta``.
    source : {"hist", "samples"}, default "hist"
        ``"hist"``: the occupation histogram, exact per bin; ``"samples"``: the final positions
        ``final_zeta`` (a random subsample of ``n_samples`` drawn with ``seed`` when given).
    lags, lag_min, lag_max, n_lags : optional
        The lag grid (:func:`levysde.inference.envelope_grid.lag_grid`); lag_max defaults to the
        longest time scale the data resolve: exp(-zeta) of the deepest occupied bin (or sample)
        (:func:`levysde.theory.envelope_map.valid_lag_max`), and for histograms at most 100
        times the lag that :data:`MIN_EXCURSIONS` independent excursions reached.
    n_samples : int, optional
        With ``source="samples"``: use a random subsample of this many final positions.
    seed : int, default 0
        Seed of that subsample.
    f_floor : float, optional
        Lowest f for the fits, in [0, 1); default: the excursion rule when the run counts
        excursions, else :func:`sampling_floor` of the independent particles (samples: of the
        effective sample size).

    Returns
    -------
    RunEnvelope
        With ``groups`` (histogram source), ``stderr`` (samples source) and the model's
        ``beta_theory``, ``tail_rate``, ``phase`` from ``run["meta"]`` (:func:`run_theory`).

    Raises
    ------
    ValueError
        For a malformed or empty histogram, a run without final_zeta (source="samples"), an
        unknown source, f_floor outside [0, 1), or a bad lag grid.

    Notes
    -----
    The histogram envelope is exact per bin: for a bin :math:`[a, b)` of mass :math:`p`,
    :math:`p\,\frac{1}{b-a}\int_a^b e^{-\ell e^{z}}\,dz` (uniform density within the bin), see
    :func:`levysde.theory.envelope_map.envelope_hist`.

    References
    ----------
    * The specification, §5 and §8.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = -rng.exponential(2.0, size=(8, 5000))      # 8 particle groups, left tail e^(0.5 zeta)
    >>> edges = np.linspace(-25.0, 1.0, 105)
    >>> counts = np.stack([np.histogram(g, edges)[0] for g in z]).astype(float)
    >>> run = {"kind": "simulation", "hist_edges": edges, "hist_counts": counts,
    ...        "final_zeta": z.ravel(), "meta": {}}
    >>> env = simulation_envelope(run, n_lags=60)
    >>> env.kind, env.lags.size, env.f_floor
    ('simulation', 60, 0.0025)
    >>> print(env.floor_reason)
    min(100, sqrt(n)) / n for n independent samples
    >>> simulation_envelope(run, source="samples", n_samples=1000, n_lags=10).stderr.shape
    (10,)
    """
    grid = dict(lags=lags, lag_min=lag_min, lag_max=lag_max, n_lags=n_lags)
    if check_choice("source", source, ("hist", "samples")) == "hist":
        parts = _histogram_envelope(run, grid, f_floor)
    else:
        parts = _sample_envelope(run, grid, f_floor, n_samples, seed)
    beta, rate, phase = run_theory(run.get("meta", {}))
    return RunEnvelope(kind="simulation", beta_theory=beta, tail_rate=rate, phase=phase, **parts)


def _grid_lags(grid: dict, default_lag_max: float) -> np.ndarray:
    """:func:`lag_grid` of the options ``grid`` (lags, lag_min, lag_max, n_lags; None = default),
    with ``default_lag_max`` where lag_max is None."""
    lag_max = grid["lag_max"] if grid["lag_max"] is not None else default_lag_max
    return lag_grid(lag_max, lags=grid["lags"], lag_min=grid["lag_min"], n_lags=grid["n_lags"])


# ----------------------------------------------------------------------------- RNN runs

def _last_record(a) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim == 2 and a.shape[0] == 0:
        raise ValueError("the run holds no records (zeta has 0 rows): no spectrum to build an envelope from")
    return (a[-1] if a.ndim == 2 else a).ravel()


def _run_lags(run):
    """The run's own recorded lags when they form a valid increasing grid (>= 2 finite lags > 0)."""
    if "lags" not in run:
        return None
    lags = np.asarray(run["lags"], dtype=float).ravel()
    ok = (lags.size >= 2 and np.all(np.isfinite(lags)) and np.all(lags > 0) and np.all(np.diff(lags) > 0))
    return lags if ok else None


def _recorded_envelope(run, run_lags):
    """The trainer's recorded (Lambda-weighted) ELR envelope of the last record on ``run_lags``,
    when present and valid (finite, in [0, 1], one value per lag); else None."""
    if run_lags is None or "envelope" not in run:
        return None
    env = np.asarray(run["envelope"], dtype=float)
    env = env[-1] if env.ndim == 2 else env
    if env.shape == run_lags.shape and np.all(np.isfinite(env)) and np.all((env >= 0) & (env <= 1)):
        return env
    return None


def rnn_envelope(run: dict, *, weighted: bool = True, lags=None, lag_min=None, lag_max=None,
                 n_lags=None, f_floor: float | None = None) -> RunEnvelope:
    r"""ELR envelope of a trained RNN at its last record (the specification, §9).

    Parameters
    ----------
    run : dict
        From :func:`levysde.io.runfile.read_run` of kind ``"rnn"``: ``zeta`` (R, H) or (H,),
        optional ``Lambda`` (same shape), ``step`` (R,), ``lags`` (L,) and ``envelope`` (R, L).
    weighted : bool, default True
        Weight neurons by :math:`\Lambda_q` (when the run has it); False: plain mean over
        neurons.
    lags, lag_min, lag_max, n_lags : optional
        The lag grid (:func:`levysde.inference.envelope_grid.lag_grid`). Without any of them the
        run's own recorded lags are used (and, weighted, its recorded envelope); lag_max defaults
        to the largest recorded lag (1e4 when the run has none). The table stops at the largest
        lag the spectrum supports, :math:`\tau_{(10)}`
        (:func:`levysde.inference.spectrum.resolved_lag_max`): beyond it f is a sum of fewer
        than 10 exponentials and every fit would read "exponential".
    f_floor : float, optional
        Lowest f for the fits, in [0, 1); default :data:`RNN_F_FLOOR` (an exact finite sum has
        no sampling noise).

    Returns
    -------
    RunEnvelope
        No theory values (an RNN run has no SDE parameters); ``lag_max`` is
        :math:`\tau_{(10)}`.

    Raises
    ------
    ValueError
        When Lambda and zeta differ in size, the run holds no records, f_floor is outside
        [0, 1), the lag grid is bad or fewer than 2 lags lie below :math:`\tau_{(10)}`.

    Notes
    -----
    .. math::

        f(\ell) = \frac{\sum_q \Lambda_q\, e^{-\ell \bar\mu_q}}{\sum_q \Lambda_q},
        \qquad \bar\mu_q = e^{\zeta_q},

    over the neurons of the last record (the effective learning rate envelope).

    References
    ----------
    * The specification, §5 and §9.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> zeta = -rng.exponential(2.0, size=(1, 2000))   # one record of 2000 neurons
    >>> run = {"kind": "rnn", "zeta": zeta, "step": np.array([100])}
    >>> env = rnn_envelope(run, lag_min=1.0, n_lags=50)
    >>> env.lags.size, round(env.lag_max)                  # tau_(10) of the spectrum
    (50, 128268)
    >>> bool(np.all(np.diff(env.f) < 0))
    True
    """

    z = _last_record(run["zeta"])
    w = None
    if weighted and "Lambda" in run:
        w = _last_record(run["Lambda"])
        if w.size != z.size:
            raise ValueError(f"Lambda has {w.size} neurons in its last record, zeta {z.size}")
    step = int(np.asarray(run["step"]).ravel()[-1]) if "step" in run and np.size(run["step"]) else None
    at = "last record" + (f", step {step}" if step is not None else "")
    grid_given = lags is not None or any(v is not None for v in (lag_min, lag_max, n_lags))
    run_lags = _run_lags(run)
    rec = _recorded_envelope(run, run_lags) if (w is not None and not grid_given) else None
    if rec is not None:
        lags, f = run_lags, rec
        source = f"rnn: recorded ELR envelope on the run's lags ({at}, Lambda-weighted)"
    else:
        if grid_given or run_lags is None:
            grid = dict(lags=lags, lag_min=lag_min, lag_max=lag_max, n_lags=n_lags)
            lags = _grid_lags(grid, float(run_lags[-1]) if run_lags is not None else 1e4)
        else:
            lags = run_lags
        f = envelope_samples(lags, z, w, bin_width=0, errors=False).f
        source = (f"rnn: ELR envelope from zeta ({at}, "
                  + ("Lambda-weighted)" if w is not None else "unweighted mean over neurons)"))
    lag_max = resolved_lag_max(z)           # lags the spectrum supports: l <= tau_(10)
    keep = lags <= lag_max
    if np.count_nonzero(keep) < 2:
        raise ValueError(f"the spectrum supports lags up to tau_(10) = {lag_max:.4g} only (the 10th longest "
                         f"time scale): fewer than 2 lags below it; give lags in (0, {lag_max:.4g}], e.g. "
                         f"--lag-min {lag_max / 100:.3g} --lag-max {lag_max:.4g}")
    dropped = int(lags.size - np.count_nonzero(keep))
    lags, f = lags[keep], f[keep]
    notes = [power_law_note(tail_check(zeta=z, weights=w))]
    if dropped:
        notes.append(f"{dropped} of the {dropped + lags.size} lags exceed tau_(10) = {lag_max:.4g}, the largest "
                     f"lag the spectrum supports (the 10th longest time scale), and were dropped")
    floor, reason = _chosen_floor(f_floor, (RNN_F_FLOOR, f"numerical floor {RNN_F_FLOOR:g} (exact "
                                                         f"finite sum over {z.size} neurons, no sampling noise)"))
    return RunEnvelope(lags=lags, f=f, f_floor=floor, floor_reason=reason, source=source, kind="rnn",
                       note="; ".join(n for n in notes if n) or None, lag_max=lag_max)


def run_envelope(run: dict, **kwargs) -> RunEnvelope:
    """:func:`rnn_envelope` or :func:`simulation_envelope` by ``run["kind"]``.

    Parameters
    ----------
    run : dict
        A run from :func:`levysde.io.runfile.read_run`; ``run["kind"] == "rnn"`` selects
        :func:`rnn_envelope`, anything else :func:`simulation_envelope`.
    **kwargs
        The options of the function chosen.

    Returns
    -------
    RunEnvelope
        The envelope table.

    Raises
    ------
    ValueError
        As the function chosen.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = -rng.exponential(2.0, size=(8, 5000))      # 8 particle groups, left tail e^(0.5 zeta)
    >>> edges = np.linspace(-25.0, 1.0, 105)
    >>> counts = np.stack([np.histogram(g, edges)[0] for g in z]).astype(float)
    >>> run = {"kind": "simulation", "hist_edges": edges, "hist_counts": counts,
    ...        "final_zeta": z.ravel(), "meta": {}}
    >>> run_envelope(run, n_lags=20).kind
    'simulation'
    """
    if run.get("kind") == "rnn":
        return rnn_envelope(run, **kwargs)
    return simulation_envelope(run, **kwargs)


# ----------------------------------------------------------------------------- fits

def jackknife_slope_se(lags, edges, counts, lag_lo: float, lag_hi: float, *,
                       max_blocks: int = MAX_JACK_BLOCKS) -> float | None:
    r"""Jackknife standard error of the log-log slope of the histogram envelope on [lag_lo, lag_hi].

    The G particle groups (rows of ``counts``) are independent replicas; they are split into
    min(G, max_blocks) contiguous blocks, the slope (:func:`levysde.theory.envelope_decay.fit_slope`) is
    refitted with each block left out and :func:`levysde.stats.jackknife.jackknife_se` combines the
    leave-one-out slopes (the specification, §8: error bars from resampling independent groups).

    Parameters
    ----------
    lags : array_like, shape (n,)
        Lags > 0.
    edges : array_like, shape (m + 1,)
        zeta bin edges.
    counts : array_like, shape (G, m)
        Counts per particle group and bin.
    lag_lo, lag_hi : float
        The fit window (e.g. ``SlopeFit.lag_lo``, ``lag_hi``), with >= 2 lags inside.
    max_blocks : int, default :data:`MAX_JACK_BLOCKS`
        Most leave-one-out blocks.

    Returns
    -------
    float or None
        The standard error of the (dimensionless) slope, or None for G < 2.

    Raises
    ------
    ValueError
        From :func:`levysde.theory.envelope_decay.fit_slope`, when fewer than 2 lags lie in
        the window.

    Notes
    -----
    With :math:`\hat s_{(-b)}` the slope with block :math:`b` of :math:`B` left out and
    :math:`\bar s` their mean, :math:`\mathrm{se} = \sqrt{\tfrac{B-1}{B}\sum_b (\hat
    s_{(-b)} - \bar s)^2}` (the delete-a-group jackknife; Efron & Stein 1981).

    References
    ----------
    * B. Efron, C. Stein, "The jackknife estimate of variance", *Ann. Statist.* 9 (1981)
      586-596.
    * The specification, §8.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = -rng.exponential(2.0, size=(8, 5000))      # 8 particle groups, left tail e^(0.5 zeta)
    >>> edges = np.linspace(-25.0, 1.0, 105)
    >>> counts = np.stack([np.histogram(g, edges)[0] for g in z]).astype(float)
    >>> run = {"kind": "simulation", "hist_edges": edges, "hist_counts": counts,
    ...        "final_zeta": z.ravel(), "meta": {}}
    >>> lags = np.geomspace(1e2, 1e5, 20)
    >>> se = jackknife_slope_se(lags, edges, counts, 1e2, 1e5)
    >>> bool(0 < se < 0.05)
    True
    >>> jackknife_slope_se(lags, edges, counts[:1], 1e2, 1e5) is None
    True
    """

    lags = np.asarray(lags, dtype=float)
    counts = np.asarray(counts, dtype=float)
    G = counts.shape[0]
    if G < 2:
        return None
    blocks = np.array_split(np.arange(G), min(G, max_blocks))
    sel = (lags >= lag_lo) & (lags <= lag_hi)
    tot = counts.sum(axis=0)
    loo = [fit_slope(lags[sel], envelope_hist(lags[sel], edges, tot - counts[b].sum(axis=0)),
                     lag_range=(lag_lo, lag_hi), min_points=2, min_decades=0).slope for b in blocks]
    return jackknife_se(loo)


@dataclass(frozen=True)
class EnvelopeFits:
    r"""Decay class and large-lag slope of a :class:`RunEnvelope` (None where not determined).

    The result of :func:`fit_run_envelope`.

    Attributes
    ----------
    decay_class : {"exponential", "polynomial", "logarithmic"} or None
        :func:`levysde.theory.envelope_decay.classify_decay` of the envelope above its floor.
    decay_fit : dict or None
        Its ``records()`` (winning fit, window, candidates).
    slope : float or None
        Fitted log-log slope of f on ``slope_lag_range``
        (:func:`levysde.theory.envelope_decay.fit_slope`); :math:`-\beta` for a polynomial
        envelope.
    slope_lag_range : tuple of 2 floats or None
        The fit window (lags).
    slope_se : float or None
        Its standard error.
    slope_se_method : str or None
        How ``slope_se`` was obtained.

    Examples
    --------
    >>> EnvelopeFits().slope is None
    True
    >>> EnvelopeFits(decay_class="polynomial", slope=-0.5).decay_class
    'polynomial'
    """

    decay_class: str | None = None
    decay_fit: dict | None = None
    slope: float | None = None
    slope_lag_range: tuple | None = None
    slope_se: float | None = None
    slope_se_method: str | None = None


def fit_run_envelope(env: RunEnvelope) -> EnvelopeFits:
    r"""Decay class and slope of an envelope above its f_floor (the specification, §5).

    The slope's standard error comes from :func:`jackknife_slope_se` when the envelope has
    particle groups, else it is the OLS error (for RNN runs a measure of fit quality only:
    their envelope has no sampling error). A fit that cannot be made (too few lags above the
    floor, ...) is reported as None with a ``UserWarning`` saying why; nothing is raised.

    Parameters
    ----------
    env : RunEnvelope
        From :func:`run_envelope`.

    Returns
    -------
    EnvelopeFits
        Decay class and slope (None where not determined).

    Notes
    -----
    A left tail :math:`\rho(\zeta) \sim A e^{\beta\zeta}` gives, by the Laplace-Tauberian
    map, :math:`f(\ell) \sim A\,\Gamma(\beta)\,\ell^{-\beta}`: a polynomial envelope of
    slope :math:`-\beta` (the specification, §5).

    References
    ----------
    * The specification, §5.
    * W. Feller, *An Introduction to Probability Theory and Its Applications*, Vol. II, 2nd ed.,
      Wiley (1971), §XIII.5.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = -rng.exponential(2.0, size=(8, 5000))      # 8 particle groups, left tail e^(0.5 zeta)
    >>> edges = np.linspace(-25.0, 1.0, 105)
    >>> counts = np.stack([np.histogram(g, edges)[0] for g in z]).astype(float)
    >>> run = {"kind": "simulation", "hist_edges": edges, "hist_counts": counts,
    ...        "final_zeta": z.ravel(), "meta": {}}
    >>> fits = fit_run_envelope(simulation_envelope(run, n_lags=60))
    >>> fits.decay_class, round(fits.slope, 2), fits.slope_se_method     # slope -beta = -0.5
    ('polynomial', -0.5, 'jackknife over particle groups')
    """


    out = {}
    try:
        dc = classify_decay(env.lags, env.f, f_floor=env.f_floor)
        out.update(decay_class=dc.name, decay_fit=dc.records())
    except ValueError as exc:
        warnings.warn(f"decay class not determined: {exc}", stacklevel=2)
    try:
        sf = fit_slope(env.lags, env.f, f_floor=env.f_floor)
    except ValueError as exc:
        warnings.warn(f"slope not determined: {exc}", stacklevel=2)
        return EnvelopeFits(**out)
    se = jackknife_slope_se(env.lags, *env.groups, sf.lag_lo, sf.lag_hi) if env.groups else None
    method = ("jackknife over particle groups" if se is not None
              else "OLS (fit quality; the RNN envelope has no sampling error)" if env.kind == "rnn"
              else "OLS (iid)")
    return EnvelopeFits(slope=sf.slope, slope_lag_range=(sf.lag_lo, sf.lag_hi),
                        slope_se=se if se is not None else sf.se, slope_se_method=method, **out)
