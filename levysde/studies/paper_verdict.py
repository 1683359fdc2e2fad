"""The anti-collapse paper's verdict on a training campaign, beside levysde's check (docs/paper_protocol.md).

A campaign of :func:`levysde.studies.campaign.run_campaign` writes one run file per model and
seed, ``OUT/runs/LABEL_sSEED.npz``, each recording the paper's windowed time scale
``zeta_window`` (NaN where a unit does not decay over the fit window). This module reads the
finished runs (the last record at the run's planned steps; unfinished ones are skipped) and
computes, per run and per model:

* the paper's estimators (:func:`levysde.inference.paper_protocol.paper_estimates`) on
  tau = exp(-zeta_window), the non-decaying units read as censored (tau = inf) and dropped (the
  paper's code): beta_hat_tail with its 90 % unit-bootstrap interval, kappa_tail with its 90 %
  block-bootstrap interval, the envelope's power-law and tempered fits and the phase label;
  per run (one seed) and pooled per model (all its seeds at once: the mean of the seeds' final
  estimates and interval ends, kappa_tail over every seed's transitions, the majority label),
  which is how the paper reports a model;
* levysde's check on the same time scale
  (:func:`levysde.inference.checkpoint_check.check_run_censored`, ``variant="window"``):
  stationarity, the independence of the neurons, the plateau kappa, the spectrum's tail rate
  (censored units dropped and right-censored), the dynamics' root or why it was refused, their
  combination, and the phase or the gates that withheld it; per run, and pooled per model
  (:func:`levysde.inference.checkpoint_check.check_runs_pooled`: the zeta_window of all the
  model's seeds side by side as one (R, S H) array, which the seeds' common record steps allow;
  the non-decaying units censored as for one run; the ``learned`` gate the worst seed's). One
  run of H = 64 units is too small for a phase call (too few far-left increments for the
  dynamics' root, too few neurons in the tail); pooling assumes the seeds are independent
  networks, so that neurons of different seeds are independent, while neurons of one network
  need not be (the check's independence test looks for a shock common to the neurons at one
  record), and the jackknife's neuron groups (q mod G) each mix the seeds;
* what the figures of ``examples/paper_verdict.py`` draw: the late spectrum, the far-left drift
  and the envelope with the paper's fits (:func:`verdict_figure_data`).

Time axes: the paper's kappa_tail is per epoch (records are at epoch 1 and every E epochs);
levysde's kappa, fitted per optimizer step, is converted to per epoch (times the batches per
epoch) so that the two sit side by side. The envelope lags are the paper's grid 4 ... 384
scaled by the profile's fit window (``window_lags`` HI / 384: 0.5 ... 48 for the ``cpu``
profile, the paper's own grid for ``paper``), as every length of a scaled profile is.

Numerics and file reading only: the table and figures are made by ``examples/paper_verdict.py``
with :mod:`levysde.plotting`.
"""
from __future__ import annotations

import math
import os
import pathlib
from collections import Counter

import numpy as np

from levysde.core.jsonable import finite_or_none
from levysde.core.validate import check_int, check_real
from levysde.inference.checkpoint_check import check_run_censored, check_runs_pooled
from levysde.inference.paper_protocol import (
    PAPER_KAPPA_Q,
    PAPER_LAGS,
    READINGS,
    PaperReport,
    envelope_models,
    paper_estimates,
    tau_envelope,
)
from levysde.io.runfile import load_run, save_run
from levysde.rnn.presets import PAPER_MODELS

__all__ = ["campaign_runs", "run_time_scales", "profile_lags", "model_paper_estimates", "verdict_rows",
           "verdict_table", "far_left_drift", "verdict_figure_data"]

#: the paper's envelope grid ends at its fit window's last lag (384 steps)
_PAPER_FIT_HI = 384.0
#: model labels in the order of the paper's experiments
_LABEL_ORDER = tuple(lab for lab, _, _ in PAPER_MODELS)


def _label_key(label: str) -> tuple:
    return (_LABEL_ORDER.index(label) if label in _LABEL_ORDER else len(_LABEL_ORDER), label)


def _demo_campaign(directory, *, labels=("sharedgate", "diaggate"), seeds=(1, 2), R: int = 24, H: int = 40,
                   steps_per_epoch: int = 3) -> str:
    """A tiny synthetic campaign for the examples: ``directory/runs/LABEL_sSEED.npz``, each an
    Ornstein-Uhlenbeck-like zeta_window (R records, H units, the last 3 units of the last two
    records non-decaying, NaN), records every 2 epochs. Returns ``directory``."""
    runs = pathlib.Path(directory, "runs")
    runs.mkdir(parents=True, exist_ok=True)
    for i, label in enumerate(labels):
        for seed in seeds:
            rng = np.random.default_rng([i, int(seed)])
            z = np.empty((R, H))
            z[0] = rng.normal(-2.0, 0.3 + 0.4 * i, H)
            for r in range(1, R):
                z[r] = z[r - 1] + 0.3 * (-2.0 - z[r - 1]) + (0.1 + 0.2 * i) * rng.standard_normal(H)
            z[-2:, -3:] = np.nan
            step = np.r_[0, np.arange(1, R) * 2 * steps_per_epoch]
            loss = np.full(R, 0.3)
            arrays = dict(zeta=np.nan_to_num(z, nan=-4.0), zeta_jac=z, zeta_window=z, step=step,
                          Lambda=np.ones((R, H)), loss=loss, loss_ratio=loss, trivial_loss=np.array(1.0),
                          lags=np.geomspace(1, 40, 5), envelope=np.ones((R, 5)),
                          window_masked=np.isnan(z).sum(axis=1))
            config = {"kind": "rnn", "model": label, "seed": int(seed), "steps": int(step[-1]), "hidden": H,
                      "n_train": 3 * steps_per_epoch, "batch": 3, "window_lags": [4, 16, 8]}
            save_run(os.fspath(runs / f"{label}_s{seed}.npz"), arrays, config)
    return os.fspath(directory)


def campaign_runs(campaign_dir) -> list[dict]:
    """The run files of a campaign, finished or not.

    Parameters
    ----------
    campaign_dir : str or os.PathLike
        The campaign directory (its run files are ``campaign_dir/runs/LABEL_sSEED.npz``).

    Returns
    -------
    list of dict
        One dict per run file, in the paper's model order, then by seed: ``label``, ``seed``,
        ``run`` (file name), ``path``, ``step`` (last record), ``steps`` (planned), ``records``,
        ``finished`` (the last record is at the planned steps).

    Raises
    ------
    ValueError
        When ``campaign_dir/runs`` is not a directory, or a run file cannot be read (naming it).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     runs = campaign_runs(_demo_campaign(d))
    >>> [(r["label"], r["seed"], r["finished"]) for r in runs][:2]
    [('sharedgate', 1, True), ('sharedgate', 2, True)]
    """
    runs_dir = pathlib.Path(campaign_dir, "runs")
    if not runs_dir.is_dir():
        raise ValueError(f"campaign_dir: no run directory {os.fspath(runs_dir)!r} (a campaign writes OUT/runs)")
    out = []
    for f in runs_dir.glob("*_s*.npz"):
        run = load_run(os.fspath(f))
        cfg = run["config"]
        step = np.asarray(run["step"])
        steps = int(cfg.get("steps", -1))
        out.append({"label": f.name.rsplit("_s", 1)[0], "seed": int(cfg.get("seed", f.stem.rsplit("_s", 1)[1])),
                    "run": f.name, "path": os.fspath(f), "step": int(step[-1]), "steps": steps,
                    "records": int(step.size), "finished": bool(steps > 0 and int(step[-1]) >= steps)})
    return sorted(out, key=lambda r: (_label_key(r["label"]), r["seed"]))


def run_time_scales(run: dict, path=None) -> tuple[np.ndarray, np.ndarray, int]:
    """The paper's time scales of a run file: tau = exp(-zeta_window) per record, and the epochs.

    Parameters
    ----------
    run : dict
        A run file's arrays (:func:`levysde.io.runfile.load_run`) with ``zeta_window`` and a
        config holding ``n_train`` and ``batch`` (the ``lagged`` task's epochs).
    path : str, optional
        The file, named in errors.

    Returns
    -------
    tau : ndarray, shape (R, H)
        Time scales in steps; NaN where the unit did not decay over the fit window (censored).
    epoch : ndarray, shape (R,)
        The records' epochs, step / batches per epoch.
    steps_per_epoch : int
        Batches (optimizer steps) per epoch, ``ceil(n_train / batch)``.

    Raises
    ------
    ValueError
        When the run has no ``zeta_window`` (trained without ``--window-lags``) or its config no
        ``n_train`` / ``batch``.

    Examples
    --------
    >>> run = {"zeta_window": np.array([[0.0, np.nan]]), "step": np.array([42]),
    ...        "config": {"n_train": 100, "batch": 48}}
    >>> tau, epoch, spe = run_time_scales(run)
    >>> tau.tolist(), epoch.tolist(), spe
    ([[1.0, nan]], [14.0], 3)
    """
    where = "the run file" if path is None else os.fspath(path)
    if "zeta_window" not in run:
        raise ValueError(f"{where}: no 'zeta_window' (the paper's time scale is recorded with --window-lags)")
    cfg = run.get("config", {})
    if not all(isinstance(cfg.get(k), int) and cfg[k] > 0 for k in ("n_train", "batch")):
        raise ValueError(f"{where}: the config needs integers n_train and batch > 0 (an epoch-based task)")
    spe = -(-int(cfg["n_train"]) // int(cfg["batch"]))
    z = np.asarray(run["zeta_window"], dtype=float)
    with np.errstate(over="ignore"):
        tau = np.where(np.isfinite(z), np.exp(-np.where(np.isfinite(z), z, 0.0)), np.nan)
    return tau, np.asarray(run["step"], dtype=float) / spe, spe


def profile_lags(config: dict) -> np.ndarray:
    """The envelope lags of a profile: the paper's 4 ... 384 scaled by its fit window's end.

    Parameters
    ----------
    config : dict
        A run's config; ``window_lags`` = [LO, HI, N] of its windowed time scale.

    Returns
    -------
    ndarray
        :data:`levysde.inference.paper_protocol.PAPER_LAGS` times HI / 384 (the paper's grid for
        HI = 384).

    Raises
    ------
    ValueError
        When ``window_lags`` is missing or its HI is not > 0.

    Examples
    --------
    >>> lags = profile_lags({"window_lags": [8, 48, 32]})          # the cpu profile
    >>> float(lags[0]), float(lags[-1]), lags.size
    (0.5, 48.0, 128)
    """
    wl = config.get("window_lags")
    if not (isinstance(wl, (list, tuple)) and len(wl) == 3 and float(wl[1]) > 0):
        raise ValueError(f"config: window_lags must be [LO, HI, N] with HI > 0; got {wl!r}")
    return PAPER_LAGS * (float(wl[1]) / _PAPER_FIT_HI)


def model_paper_estimates(paths, *, n_boot_beta: int = 2000, n_boot_kappa: int = 3000,
                          seed: int = 42) -> PaperReport:
    """The paper's estimators on one model's seeds at once (how the paper reports a model).

    Parameters
    ----------
    paths : sequence of str
        The model's run files (one per seed), all of one profile.
    n_boot_beta, n_boot_kappa : int
        Bootstrap replicates of beta_hat_tail and kappa_tail (the paper: 2000, 3000; >= 10).
    seed : int
        Seed of the bootstraps, >= 0.

    Returns
    -------
    PaperReport
        :func:`levysde.inference.paper_protocol.paper_estimates` on tau = exp(-zeta_window) of
        every seed, epochs as the time axis, on :func:`profile_lags`.

    Raises
    ------
    ValueError
        For no paths, runs of different fit windows, or what :func:`run_time_scales` and the
        estimators refuse.

    Examples
    --------
    >>> import glob, os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = sorted(glob.glob(os.path.join(_demo_campaign(d), "runs", "diaggate_*.npz")))
    ...     rep = model_paper_estimates(paths, n_boot_beta=50, n_boot_kappa=20)
    >>> rep.n_censored_final, len(rep.seeds["censored"])
    ([3, 3], 2)
    """
    paths = list(paths)
    if not paths:
        raise ValueError("paths: no run file given")
    check_int("n_boot_beta", n_boot_beta, 10)
    check_int("n_boot_kappa", n_boot_kappa, 10)
    check_int("seed", seed, 0)
    taus, epochs, lags = [], [], None
    for p in paths:
        run = load_run(os.fspath(p))
        tau, epoch, _ = run_time_scales(run, p)
        lg = profile_lags(run["config"])
        if lags is not None and not np.array_equal(lg, lags):
            raise ValueError(f"paths: {os.fspath(p)} has another fit window than {os.fspath(paths[0])}")
        taus.append(tau)
        epochs.append(epoch)
        lags = lg
    return paper_estimates(taus, epochs, lags=lags, n_boot_beta=n_boot_beta, n_boot_kappa=n_boot_kappa, seed=seed)


def _paper_fields(rep: PaperReport) -> dict:
    """The paper's numbers of a report (one seed, or a model's seeds pooled), per reading."""
    out = {}
    for r in READINGS:
        per = rep.seeds[r]
        k = rep.kappa[r]
        fin = [s for s in per if math.isfinite(s.envelope.beta_env)]
        reasons = sorted({s.beta.fit.reason for s in per if s.beta.fit.reason})
        out.update({f"paper_{r}_beta_hat": finite_or_none(rep.beta_hat[r]),
                    f"paper_{r}_beta_lo": finite_or_none(rep.beta_lo[r]),
                    f"paper_{r}_beta_hi": finite_or_none(rep.beta_hi[r]),
                    f"paper_{r}_beta_r2": finite_or_none(float(np.mean([s.beta.fit.r2 for s in per]))),
                    f"paper_{r}_beta_reason": "; ".join(reasons),
                    f"paper_{r}_kappa": finite_or_none(k.kappa), f"paper_{r}_kappa_lo": finite_or_none(k.lo),
                    f"paper_{r}_kappa_hi": finite_or_none(k.hi), f"paper_{r}_kappa_restoring": k.restoring,
                    f"paper_{r}_kappa_n_tail": int(k.n_tail), f"paper_{r}_kappa_reason": k.reason,
                    f"paper_{r}_beta_env": finite_or_none(float(np.mean([s.envelope.beta_env for s in fin]))
                                                          if fin else math.nan),
                    f"paper_{r}_beta_power": finite_or_none(float(np.mean([s.envelope.beta_power for s in per]))),
                    f"paper_{r}_tau_max": finite_or_none(float(np.median([s.envelope.tau_max for s in per]))),
                    f"paper_{r}_envelope_winner": _majority([s.envelope.winner for s in per]),
                    f"paper_{r}_window_passed": sum(bool(s.window.passed) for s in per),
                    f"paper_{r}_window_reason": "; ".join(sorted({s.window.reason for s in per if s.window.reason})),
                    f"paper_{r}_phase": rep.phase[r]})
    return out


def _majority(values) -> str:
    c = Counter(values).most_common()
    return c[0][0] if c and c[0][1] > len(values) / 2 else "mixed"


#: statuses of a check estimate whose number is not a measurement (``levysde check`` prints the word)
_NOT_A_VALUE = ("not identified", "at bound", "not significant")


def _estimate(d: dict, key: str, name: str, scale: float = 1.0) -> dict:
    """An estimate of the check's JSON as row fields: the value and its error (None where the status says
    it is not a measurement; the number is kept as ``_raw``), status and flag."""
    v, se, status = d.get(key), d.get(f"{key}_se"), d.get(f"{key}_status")
    raw = None if v is None else v * scale
    value = None if status in _NOT_A_VALUE else raw
    return {f"check_{name}": value, f"check_{name}_se": None if se is None or value is None else se * scale,
            f"check_{name}_raw": raw, f"check_{name}_status": status, f"check_{name}_flag": d.get(f"{key}_flag") or ""}


def _kappa_fields(d: dict, spe: int) -> dict:
    """The plateau kappa per epoch from the better-identified source: the drift fit's plateau or
    the mean far-left drift at the dynamics' cut (the smaller relative error)."""
    dyn = d.get("dynamics") or {}

    def rel(v, se):
        return se / abs(v) if v not in (None, 0) and se is not None else math.inf

    if rel(dyn.get("kappa_hat"), dyn.get("kappa_hat_se")) < rel(d.get("kappa_hat"), d.get("kappa_hat_se")):
        out = _estimate(dyn, "kappa_hat", "kappa", spe)
        out["check_kappa_source"] = "mean far-left drift at the dynamics' cut"
    else:
        out = _estimate(d, "kappa_hat", "kappa", spe)
        out["check_kappa_source"] = "plateau of the fitted drift"
    return out


def _check_fields(d: dict, spe: int) -> dict:
    """levysde's check of one run (the JSON of its report) as flat row fields."""
    failed = [k for k, ok in (d.get("gates") or {}).items() if not ok]
    out = {"learned": d.get("learned"), "check_stationary": bool(d.get("stationary")),
           "check_stationarity_reason": (d.get("stationarity") or {}).get("reason", ""),
           "check_independent": bool(d.get("independent")),
           "check_independence_rho_hat": (d.get("independence") or {}).get("rho_hat"),
           "check_independence_reason": (d.get("independence") or {}).get("reason", "")}
    out.update(_kappa_fields(d, spe))
    out.update(_estimate(d, "beta_tail", "beta_tail"))
    out.update(_estimate(d, "beta_tail_censored", "beta_tail_censored"))
    out.update(_estimate(d, "beta_dynamics", "beta_dynamics"))
    out.update(_estimate(d, "beta_combined", "beta_combined"))
    out.update({"check_phase": d.get("phase"), "check_withheld": list(d.get("phase_withheld") or []),
                "check_failed_gates": failed, "check_main_reason": failed[0] if failed else None,
                "check_phase_candidates": d.get("phase_candidates"),
                "n_nondecaying_late": d.get("n_censored_late")})
    return out


def _run_row(entry: dict, *, n_boot_beta, n_boot_kappa, seed, check_options) -> dict:
    run = load_run(entry["path"])
    tau, epoch, spe = run_time_scales(run, entry["path"])
    loss = np.asarray(run["loss"], dtype=float)
    ratio = (np.asarray(run["loss_ratio"], dtype=float)[-1] if "loss_ratio" in run
             else loss[-1] / float(np.asarray(run.get("trivial_loss", np.nan))))
    row = {k: entry[k] for k in ("label", "seed", "run", "path", "step", "records")}
    row.update(units=int(tau.shape[1]), steps_per_epoch=spe, loss=finite_or_none(float(loss[-1])),
               loss_ratio=finite_or_none(float(ratio)), n_nondecaying=int(np.isnan(tau[-1]).sum()))
    rep = paper_estimates(tau, epoch, lags=profile_lags(run["config"]), n_boot_beta=n_boot_beta,
                          n_boot_kappa=n_boot_kappa, seed=seed)
    row.update(_paper_fields(rep))
    d = check_run_censored(entry["path"], variant="window", **check_options).as_json()
    row.update(_check_fields(d, spe))
    return row


def verdict_rows(campaign_dir, *, n_boot_beta: int = 2000, n_boot_kappa: int = 3000, seed: int = 42,
                 late_fraction: float = 0.5, n_groups: int = 16, n_boot: int = 400,
                 closing_loop: bool = False) -> list[dict]:
    """One row per finished run: the paper's estimators and levysde's check on ``zeta_window``.

    Parameters
    ----------
    campaign_dir : str or os.PathLike
        The campaign directory (:func:`campaign_runs`); unfinished runs are skipped.
    n_boot_beta, n_boot_kappa : int
        The paper's bootstrap replicates of beta_hat_tail and kappa_tail (2000, 3000; >= 10).
    seed : int
        Seed of the paper's bootstraps, >= 0 (levysde's check uses its own default seed 0).
    late_fraction : float
        levysde's late part, in (0, 1] (the check's default 0.5; the paper's kappa_tail uses
        its own 35 %).
    n_groups : int
        Neuron groups of the check's jackknife, >= 8.
    n_boot : int
        Normal draws of the check's phase probabilities of the fitted SDE, >= 1.
    closing_loop : bool
        Simulate the fitted SDE (the KS model check of ``beta_theory``, which the verdict does
        not report; a few seconds per run). The phase's gates do not depend on it.

    Returns
    -------
    list of dict
        Per finished run, in the paper's model order then by seed (None for a number that could
        not be computed, with the reason beside it):

        * ``label``, ``seed``, ``run``, ``path``, ``step``, ``records``, ``units``,
          ``steps_per_epoch``, ``loss`` and ``loss_ratio`` (last record), ``learned``;
        * ``n_nondecaying``: units non-decaying at the last record; ``n_nondecaying_late``:
          non-decaying unit-records in the check's late part;
        * the paper's, for reading R in ("censored", "dropped"): ``paper_R_beta_hat``,
          ``_beta_lo``, ``_beta_hi`` (90 % interval), ``_beta_r2``, ``_beta_reason``,
          ``_kappa``, ``_kappa_lo``, ``_kappa_hi`` (per epoch), ``_kappa_restoring``,
          ``_kappa_n_tail``, ``_kappa_reason``, ``_beta_env`` and ``_tau_max`` (the tempered
          fit), ``_beta_power`` (the power-law fit), ``_envelope_winner``, ``_window_passed``
          (0 or 1) and ``_window_reason`` (the power-law window's gate), ``_phase``;
        * levysde's: ``check_stationary`` (and ``_reason``), ``check_independent`` with
          ``check_independence_rho_hat`` (the correlation of two neurons' increments at one
          record it reads) and ``_reason``, ``check_kappa`` (per epoch) with ``_se``, ``_raw``,
          ``_status``, ``_flag`` and ``_source``, the same five keys for ``check_beta_tail``,
          ``check_beta_tail_censored`` (the censored reading beyond the late spectrum's 90 %
          quantile, :func:`levysde.inference.checkpoint_check.tail_readings`), ``check_beta_dynamics``
          (its flag is the refusal's reason) and ``check_beta_combined``; the value and its
          error are None where the status says the number is not a measurement ("not
          identified", "at bound", "not significant"), ``_raw`` keeps it;
          ``check_phase``, ``check_withheld`` (reasons),
          ``check_failed_gates``, ``check_main_reason`` (the first failed gate),
          ``check_phase_candidates``.

    Raises
    ------
    ValueError
        For options out of range, a missing run directory, or a run file without
        ``zeta_window``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     rows = verdict_rows(_demo_campaign(d), n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    >>> len(rows), rows[0]["label"], rows[0]["n_nondecaying"], rows[0]["check_beta_tail_censored_status"]
    (4, 'sharedgate', 3, 'unavailable')
    >>> rows[0]["paper_dropped_phase"] in ("collapsed", "broad anti-collapse", "boundary (soft classification)",
    ...                                    "concentrated anti-collapse", "anti-collapsed (unresolved beta)")
    True
    >>> rows[0]["check_phase"], rows[0]["check_main_reason"]     # 40 units: too few far-left increments
    (None, 'dynamics')
    """
    opts = _options(n_boot_beta, n_boot_kappa, seed, late_fraction, n_groups, n_boot, closing_loop)
    return [_run_row(e, n_boot_beta=n_boot_beta, n_boot_kappa=n_boot_kappa, seed=seed, check_options=opts)
            for e in campaign_runs(campaign_dir) if e["finished"]]


def _options(n_boot_beta, n_boot_kappa, seed, late_fraction, n_groups, n_boot, closing_loop) -> dict:
    """The options checked; returns those of levysde's check."""
    for name, v in (("n_boot_beta", n_boot_beta), ("n_boot_kappa", n_boot_kappa)):
        check_int(name, v, 10)
    check_int("seed", seed, 0)
    check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    check_int("n_groups", n_groups, 8)
    check_int("n_boot", n_boot, 1)
    return dict(late_fraction=late_fraction, n_groups=n_groups, n_boot=n_boot, closing_loop=bool(closing_loop))


def _pooled_check_fields(rows: list[dict], check_options: dict) -> dict:
    """levysde's check on one model's seeds at once (:func:`check_runs_pooled`) as flat fields."""
    spe = sorted({r["steps_per_epoch"] for r in rows})
    if len(spe) > 1:
        raise ValueError(f"rows: the seeds of {rows[0]['label']} have different batches per epoch {spe}")
    d = check_runs_pooled([r["path"] for r in rows], variant="window", **check_options).as_json()
    out = {"check_n_runs_pooled": d["n_runs"], "check_n_neurons_pooled": d["n_units"],
           "check_n_neurons": d.get("n_neurons"), "loss_ratio_worst": d.get("loss_ratio"),
           "n_nondecaying": d["n_censored_final"]}
    out.update(_check_fields(d, spe[0]))
    return out


#: row fields that are not aggregated (identity, sizes, paths, reasons in words)
_NOT_AGGREGATED = ("label", "seed", "run", "path", "step", "records", "units", "steps_per_epoch", "check_withheld")
#: suffixes of row fields that are not aggregated: reasons in words, numbers that are not measurements
_NOT_AGGREGATED_SUFFIXES = ("_flag", "_reason", "_raw")
#: row fields counted as labels (the rest are numbers): yes/no, phases, statuses, sources, gates
_LABEL_SUFFIXES = ("_phase", "_status", "_source", "_restoring", "_winner", "learned", "_stationary",
                   "_independent", "_main_reason", "_candidates", "_failed_gates")


def _aggregate(rows: list[dict]) -> tuple[dict, dict]:
    """Mean, sd and count of every numeric field over the rows; counts of every label field."""
    numbers, labels = {}, {}
    for key in rows[0]:
        if key in _NOT_AGGREGATED or key.endswith(_NOT_AGGREGATED_SUFFIXES) and not key.endswith("_main_reason"):
            continue
        vals = [r.get(key) for r in rows]
        if key.endswith(_LABEL_SUFFIXES):
            labels[key] = dict(Counter(_label_text(v) for v in vals).most_common())
            continue
        x = np.array([v for v in vals if v is not None and math.isfinite(v)], dtype=float)
        numbers[key] = {"mean": float(x.mean()) if x.size else None,
                        "sd": float(x.std(ddof=1)) if x.size > 1 else None, "n": int(x.size)}
    return numbers, labels


def _label_text(v) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return str(v).lower()
    return " or ".join(map(str, v)) if isinstance(v, list) else str(v)


def verdict_table(rows: list[dict], *, pooled: bool = True, n_boot_beta: int = 2000, n_boot_kappa: int = 3000,
                  seed: int = 42, late_fraction: float = 0.5, n_groups: int = 16, n_boot: int = 400,
                  closing_loop: bool = False) -> list[dict]:
    """Per model: the rows of :func:`verdict_rows` aggregated over seeds, and the model's seeds pooled.

    Parameters
    ----------
    rows : list of dict
        :func:`verdict_rows` (any subset; rows are grouped by ``label``).
    pooled : bool
        Also run the paper's estimators (:func:`model_paper_estimates`) and levysde's check
        (:func:`levysde.inference.checkpoint_check.check_runs_pooled`, ``variant="window"``)
        on each model's seeds at once, reading the rows' run files.
    n_boot_beta, n_boot_kappa, seed
        The paper's pooled estimators' bootstrap settings (as for :func:`verdict_rows`).
    late_fraction, n_groups, n_boot, closing_loop
        The pooled check's options (as for :func:`verdict_rows`).

    Returns
    -------
    list of dict
        One dict per model, in the paper's model order: ``label``, ``n_seeds``, ``seeds``;
        ``numbers``: field -> ``{"mean", "sd", "n"}`` over the seeds with a value (sd None for
        fewer than 2, mean None for none); ``labels``: field -> ``{value: count}`` for the
        yes/no and label fields (phases, the first failed gate, stationarity); ``pooled`` (``{}``
        without ``pooled``):

        * the paper's fields of :func:`model_paper_estimates` (the same ``paper_R_...`` keys as
          a row);
        * levysde's check on the seeds' neurons side by side, with the same ``check_...`` keys
          as a row (stationarity, independence with ``check_independence_rho_hat``, kappa,
          beta_tail dropped and censored, beta_dynamics, beta_combined, the phase or the gates
          that withheld it, ``check_phase_candidates``) and ``learned`` (every seed learned);
          ``check_n_runs_pooled``, ``check_n_neurons_pooled`` (S H: every seed's units),
          ``check_n_neurons`` (the distinct neurons the ``neurons`` gate counts),
          ``loss_ratio_worst`` (the worst seed's, which the ``learned`` gate reads),
          ``n_nondecaying`` (non-decaying units of all seeds at the last record) and
          ``n_nondecaying_late``.

    Raises
    ------
    ValueError
        For no rows, options out of range, seeds of a model recorded at different steps, or
        what :func:`model_paper_estimates` refuses.

    Notes
    -----
    The pooled check assumes what pooling neurons needs: the seeds are independent networks
    (a seed fixes the initialisation, every batch and the forcing), so neurons of different
    seeds are independent; neurons of one network are not guaranteed to be, which the check's
    independence test (a common shock at one record) is there to detect. Its jackknife puts
    pooled neuron q in group q mod G, so each group mixes the seeds; whole seeds are not
    resampled. The seeds must share their record steps (one profile), or the model is refused.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     rows = verdict_rows(_demo_campaign(d), n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    ...     table = verdict_table(rows, n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    >>> [(t["label"], t["n_seeds"]) for t in table]
    [('sharedgate', 2), ('diaggate', 2)]
    >>> table[0]["numbers"]["n_nondecaying"], table[0]["labels"]["check_stationary"]
    ({'mean': 3.0, 'sd': 0.0, 'n': 2}, {'true': 2})
    >>> sorted(table[0]["pooled"])[:2]
    ['check_beta_combined', 'check_beta_combined_flag']
    >>> p = table[0]["pooled"]                     # 2 seeds x 40 units side by side
    >>> p["check_n_neurons_pooled"], p["n_nondecaying"], p["learned"]
    (80, 6, True)
    """
    if not rows:
        raise ValueError("rows: no finished run to aggregate")
    opts = _options(n_boot_beta, n_boot_kappa, seed, late_fraction, n_groups, n_boot, closing_loop)
    out = []
    for label in sorted({r["label"] for r in rows}, key=_label_key):
        mine = sorted((r for r in rows if r["label"] == label), key=lambda r: r["seed"])
        numbers, labels = _aggregate(mine)
        pool = {}
        if pooled:
            pool = _paper_fields(model_paper_estimates([r["path"] for r in mine], n_boot_beta=n_boot_beta,
                                                       n_boot_kappa=n_boot_kappa, seed=seed))
            pool.update(_pooled_check_fields(mine, opts))
        out.append({"label": label, "n_seeds": len(mine), "seeds": [r["seed"] for r in mine], "numbers": numbers,
                    "labels": labels, "pooled": pool})
    return out


def far_left_drift(tau, epoch, *, late_fraction: float = 0.35, n_bins: int = 10, q: float = PAPER_KAPPA_Q) -> dict:
    """Mean increment of zeta = -log tau per epoch, in bins of its starting value, over the late records.

    Parameters
    ----------
    tau : list of (R_s, H_s) arrays
        Time scales per record and unit, one array per seed; NaN or inf = censored.
    epoch : list of (R_s,) arrays
        The records' epochs (strictly increasing).
    late_fraction : float
        The late part, in (0, 1]: the last max(4, ceil(late_fraction R)) records of each seed
        (kappa_tail's rule; the paper: 35 %).
    n_bins : int
        Equal-count bins of the starting zeta, >= 1.
    q : float
        The paper's far-left quantile of the pooled late zeta (marked as ``zeta_cut``), in (0, 1).

    Returns
    -------
    dict
        ``centers`` (mean starting zeta per bin), ``mean`` (mean increment per epoch), ``se``
        (its standard error, clustered by unit: a unit's increments are correlated; None with
        fewer than 2 units), ``n`` (increments per bin) as lists; ``zeta_cut`` (the q-quantile of
        the late resolved zeta), ``n_transitions`` and ``n_censored`` (transitions with a
        censored end, left out).

    Raises
    ------
    ValueError
        For lists of different lengths, shapes that disagree, or options out of range.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> zeta = np.cumsum(0.5 + 0.1 * rng.standard_normal((20, 300)), axis=0)   # drift 0.5 per epoch
    >>> d = far_left_drift([np.exp(-zeta)], [np.arange(20.0)], n_bins=4)
    >>> [round(m, 1) for m in d["mean"]], d["n_transitions"], d["n_censored"]
    ([0.5, 0.5, 0.5, 0.5], 1800, 0)
    """
    late_fraction = check_real("late_fraction", late_fraction, 0.0, 1.0, lo_open=True)
    check_int("n_bins", n_bins, 1)
    q = check_real("q", q, 0.0, 1.0, lo_open=True, hi_open=True)
    if len(tau) != len(epoch) or not tau:
        raise ValueError(f"tau and epoch must be lists of one length >= 1; got {len(tau)} and {len(epoch)}")
    z0, dz, unit, n_cens = [], [], [], 0
    for s, (t, e) in enumerate(zip(tau, epoch, strict=True)):
        t, e = np.asarray(t, dtype=float), np.asarray(e, dtype=float)
        if t.ndim != 2 or e.shape != (t.shape[0],):
            raise ValueError(f"tau[{s}] must be (R, H) with epoch[{s}] of shape (R,); got {t.shape}, {e.shape}")
        first = max(0, t.shape[0] - max(4, math.ceil(late_fraction * t.shape[0])))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(np.isfinite(t) & (t > 0), -np.log(t), np.nan)[first:]
        a, b = z[:-1], z[1:]
        ok = np.isfinite(a) & np.isfinite(b)
        n_cens += int((~ok).sum())
        dt = np.diff(e[first:])[:, None] * np.ones_like(a)
        z0.append(a[ok])
        dz.append(((b - a) / dt)[ok])
        unit.append((s * 10**7 + np.broadcast_to(np.arange(a.shape[1]), a.shape))[ok])
    z0c, dzc, uc = np.concatenate(z0), np.concatenate(dz), np.concatenate(unit)
    out: dict = {"centers": [], "mean": [], "se": [], "n": [], "n_transitions": int(z0c.size), "n_censored": n_cens,
                 "zeta_cut": finite_or_none(float(np.quantile(z0c, q))) if z0c.size else None}
    order = np.argsort(z0c, kind="stable")
    for idx in np.array_split(order, min(n_bins, max(z0c.size, 1))):
        if idx.size == 0:
            continue
        m = float(dzc[idx].mean())
        _, inv = np.unique(uc[idx], return_inverse=True)
        s_u = np.bincount(inv.ravel(), weights=dzc[idx] - m)
        out["centers"].append(float(z0c[idx].mean()))
        out["mean"].append(m)
        out["se"].append(float(math.sqrt((s_u ** 2).sum()) / idx.size) if s_u.size > 1 else None)
        out["n"].append(int(idx.size))
    return out


def verdict_figure_data(rows: list[dict], *, late_fraction: float = 0.35, n_bins: int = 10) -> dict:
    """What the verdict's figures show, per model: the late spectrum, the far-left drift, the envelope.

    Parameters
    ----------
    rows : list of dict
        :func:`verdict_rows` (their run files are read again).
    late_fraction : float
        The drift's late part, in (0, 1] (:func:`far_left_drift`; the paper's 35 %).
    n_bins : int
        Bins of the drift, >= 1.

    Returns
    -------
    dict
        Label -> ``{"n_seeds", "spectrum", "drift", "envelope"}``: ``spectrum`` = ``zeta``
        (the resolved zeta_window of every seed's last record, pooled), ``n_censored``,
        ``n_units``; ``drift`` = :func:`far_left_drift` over the seeds; ``envelope`` = ``lags``
        (:func:`profile_lags`) and, per reading, ``f`` (the envelope of the pooled last
        records, :func:`levysde.inference.paper_protocol.tau_envelope`) and ``models`` (its
        :func:`levysde.inference.paper_protocol.envelope_models`).

    Raises
    ------
    ValueError
        For no rows, or unreadable run files.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     rows = verdict_rows(_demo_campaign(d), n_boot_beta=50, n_boot_kappa=20, n_boot=20)
    ...     data = verdict_figure_data(rows, n_bins=4)
    >>> sorted(data), data["diaggate"]["spectrum"]["n_censored"], data["diaggate"]["spectrum"]["n_units"]
    (['diaggate', 'sharedgate'], 6, 80)
    >>> data["diaggate"]["envelope"]["models"]["dropped"].winner in ("exponential", "power", "tempered")
    True
    """
    if not rows:
        raise ValueError("rows: no finished run to draw")
    out = {}
    for label in sorted({r["label"] for r in rows}, key=_label_key):
        taus, epochs, lags = [], [], None
        for r in sorted((r for r in rows if r["label"] == label), key=lambda r: r["seed"]):
            run = load_run(r["path"])
            tau, epoch, _ = run_time_scales(run, r["path"])
            taus.append(tau)
            epochs.append(epoch)
            lags = profile_lags(run["config"])
        last = np.concatenate([t[-1] for t in taus])
        res = np.isfinite(last)
        env: dict = {"lags": lags, "f": {}, "models": {}}
        for reading in READINGS:
            lag, f = tau_envelope(last, lags, reading=reading)
            env["f"][reading], env["models"][reading] = f, envelope_models(lag, f)
        out[label] = {"n_seeds": len(taus),
                      "spectrum": {"zeta": -np.log(last[res]), "n_censored": int((~res).sum()), "n_units": last.size},
                      "drift": far_left_drift(taus, epochs, late_fraction=late_fraction, n_bins=n_bins),
                      "envelope": env}
    return out
