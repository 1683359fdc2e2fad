"""The learnability paper's experiment as a resumable campaign on the Dask sweep (docs/learnability.md).

A campaign is one profile of :data:`levysde.rnn.learnability_presets.LEARNABILITY_PRESETS` times
models times optimizers times seeds. Each run is one point of
:func:`levysde.studies.sweep.run_sweep`, as in the anti-collapse campaign
(:mod:`levysde.studies.campaign`, whose :func:`~levysde.studies.campaign.train_run` trains, resumes or
skips it): a local cluster by default, a ``tcp://`` Dask scheduler (its workers must see the
campaign directory), or ``"sequential"``. A point is done in two stages: the training run, then
the matched statistic of the trained network on the run's diagnostic set
(:func:`levysde.rnn.matched.run_matched_sums`, with the profile's sequences and lags), stored
beside the run with the measurement of :func:`levysde.inference.learnability_measure.measure_learnability`
at its default settings (those of ``levysde learnability``). Layout::

    OUT/runs/MODEL-OPT_sSEED.npz               run file (levysde.io.runfile)
    OUT/runs/MODEL-OPT_sSEED.ckpt              its checkpoint (needed to continue and to measure)
    OUT/runs/MODEL-OPT_sSEED.learnability.npz  matched statistic + measurement (levysde.io.learnfile)
    OUT/sweep/KEY/                             the sweep's store for one selection of points

``KEY`` is ``all`` for the profile's full set of points and a digest of the run names for a
subset (``--models``, ``--optimizers``, ``--seeds``), so that subsets can be run one after
another into one directory; the run files decide what is left to do. Points are ordered GRU
and LSTM first, then the leaky models (ConstGate, SharedGate, DiagGate); within each group the
models and optimizers of a seed come together.

Resuming: a finished run is not trained again, an unfinished one resumes from its checkpoint,
and a stored matched statistic is not computed again. A ``deadline`` stops training at the first
optimizer step past it (checkpoint written) and the matched statistic is not started past it;
then :class:`~levysde.studies.campaign.CampaignPaused` is raised, and rerunning continues.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import time

import numpy as np

from levysde.core.validate import check_choice, check_int
from levysde.inference.learnability_measure import measure_learnability
from levysde.io.learnfile import learnability_path, read_learnability, save_learnability
from levysde.io.runfile import load_run
from levysde.rnn.learnability_presets import (
    LEARNABILITY_MODELS,
    LEARNABILITY_OPTIMIZERS,
    LEARNABILITY_PRESETS,
    learnability_config,
)
from levysde.rnn.matched import run_matched_sums
from levysde.studies.campaign import CampaignPaused, train_run
from levysde.studies.sweep import run_sweep

__all__ = ["GATED_FIRST", "learnability_run_name", "learnability_points", "learnability_point",
           "run_learnability_campaign", "learnability_status", "measured_summary"]

#: point order of the models: the fully gated ones first, then the leaky ones
GATED_FIRST = ("gru", "lstm", "constgate", "sharedgate", "diaggate")


def learnability_run_name(model: str, optimizer: str, seed: int) -> str:
    """Run-file name of one run: ``MODEL-OPT_sSEED.npz`` (e.g. ``gru-adamw_s212.npz``)."""
    return f"{model}-{optimizer}_s{int(seed)}.npz"


def learnability_points(preset: str, models=None, optimizers=None, seeds=None,
                        device: str | None = None) -> list[dict]:
    """The sweep points of a campaign (module docstring for the order).

    Each point: ``{"preset", "model", "optimizer", "seed", "run" (file name), "config"
    (TrainConfig fields), "matched" ({"sequences", "lags": [lo, hi, n]})}``. Defaults: all five
    models, both optimizers, the profile's seeds and device. Raises ValueError for an unknown
    profile, model or optimizer, a bad or repeated seed."""
    check_choice("preset", preset, tuple(LEARNABILITY_PRESETS))
    models = LEARNABILITY_MODELS if models is None else tuple(models)
    optimizers = LEARNABILITY_OPTIMIZERS if optimizers is None else tuple(optimizers)
    for m in models:
        check_choice("model", m, LEARNABILITY_MODELS)
    for o in optimizers:
        check_choice("optimizer", o, LEARNABILITY_OPTIMIZERS)
    seeds = LEARNABILITY_PRESETS[preset]["seeds"] if seeds is None else tuple(seeds)
    seeds = tuple(check_int("seed", s, 0) for s in seeds)
    if not (models and optimizers and seeds) or len(set(seeds)) != len(seeds) or \
            len(set(models)) != len(models) or len(set(optimizers)) != len(optimizers):
        raise ValueError("models, optimizers and seeds must be non-empty and without repeats")
    mt = LEARNABILITY_PRESETS[preset]["matched"]
    matched = {"sequences": int(mt["sequences"]), "lags": [int(v) for v in mt["lags"]]}
    groups = ([m for m in GATED_FIRST[:2] if m in models], [m for m in GATED_FIRST[2:] if m in models])
    return [{"preset": preset, "model": m, "optimizer": o, "seed": int(s), "run": learnability_run_name(m, o, s),
             "config": learnability_config(preset, m, o, int(s), device), "matched": dict(matched)}
            for group in groups for s in seeds for o in optimizers for m in group]


def _train_summary(res: dict, steps: int) -> dict:
    return {"step": int(res["step"][-1]), "steps": int(steps), "finished": bool(int(res["step"][-1]) >= steps),
            "loss": float(res["loss"][-1]), "loss_ratio": float(res["loss_ratio"][-1]),
            "train_s": float(res["wall"][-1]) if "wall" in res else float("nan")}


def measured_summary(result: dict) -> dict:
    """Scalars of a stored measurement (the ``result`` of a learnability file's meta, i.e.
    :meth:`~levysde.inference.learnability_measure.LearnabilityMeasurement.records`):
    ``alpha_median`` (median of alpha_hat over the lags), ``alpha_pooled``, ``N_max`` (the largest N
    of the grid), ``H_N`` and ``H_N_significant`` there, ``n_significant`` (lags with a
    significant mean). Missing numbers are NaN."""
    def num(v):
        return float("nan") if v is None else float(v)

    alpha = np.array([num(v) for v in result["alpha"]])
    return {"alpha_median": float(np.nanmedian(alpha)) if np.isfinite(alpha).any() else float("nan"),
            "alpha_pooled": num(result.get("alpha_pooled")), "N_max": num(result["N_eval"][-1]),
            "H_N": num(result["H_N"][-1]), "H_N_significant": num(result["H_N_significant"][-1]),
            "n_significant": int(sum(bool(b) for b in result["significant"]))}


def _measure(path: str, matched: dict) -> dict:
    """Compute, measure and store the matched statistic of a finished run; returns the result."""
    lo, hi, n = matched["lags"]
    lags = np.unique(np.linspace(lo, hi, n).astype(np.int64))
    sums, info = run_matched_sums(path, sequences=matched["sequences"], lags=lags, threads=1)
    rec = measure_learnability(sums).records()
    save_learnability(learnability_path(path), sums, {"source": info, "result": rec})
    return rec


def learnability_point(point: dict, seed: int, *, runs_dir: str, deadline: float | None = None) -> dict:
    """Train (or resume, or skip) the run of one point, then compute and store its matched
    statistic unless stored; the sweep's task.

    ``seed`` (the sweep's per-point seed) is unused: the run seed is the point's. ``deadline``: a
    ``time.time()`` value (module docstring). Returns step, steps, finished, loss, loss_ratio,
    train_s, measured (True) and the :func:`measured_summary` keys. Raises CampaignPaused at the
    deadline, ValueError for a run that cannot be continued or measured."""
    del seed
    path = os.path.join(runs_dir, point["run"])
    steps = int(point["config"]["steps"])
    out = _train_summary(train_run(point["config"], path, deadline=deadline), steps)
    if not out["finished"]:
        raise CampaignPaused(f"{point['run']}: step {out['step']} of {steps} at the deadline; rerun to continue")
    lpath = learnability_path(path)
    if os.path.exists(lpath):
        rec = read_learnability(lpath)[1]["result"]
    elif deadline is not None and time.time() >= float(deadline):
        raise CampaignPaused(f"{point['run']}: trained; its matched statistic is left for the next run")
    else:
        rec = _measure(path, point["matched"])
    return {**out, "measured": True, **measured_summary(rec)}


def _store_key(points: list[dict], preset: str) -> str:
    if [p["run"] for p in points] == [p["run"] for p in learnability_points(preset)]:
        return "all"
    return "sel-" + hashlib.sha1(" ".join(p["run"] for p in points).encode()).hexdigest()[:10]


def run_learnability_campaign(preset: str, out, *, models=None, optimizers=None, seeds=None,
                              device: str | None = None, scheduler: str = "local", n_workers: int | None = None,
                              deadline: float | None = None, progress: bool = True) -> list[dict]:
    """Run (or resume) a campaign into directory ``out`` (module docstring); returns the points'
    results in point order (:func:`learnability_point`).

    ``scheduler``, ``n_workers``: as :func:`levysde.studies.sweep.run_sweep` (a local cluster of 2
    workers by default, one torch thread each). ``deadline``: a ``time.time()`` value.
    Raises ValueError (bad arguments), CampaignPaused (finished points stay in the store)."""
    out = pathlib.Path(out)
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    points = learnability_points(preset, models, optimizers, seeds, device)
    task = functools.partial(learnability_point, runs_dir=str(runs.resolve()), deadline=deadline)
    kw = {} if scheduler != "local" else {"n_workers": n_workers}
    return run_sweep(task, points, master_seed=0, store=out / "sweep" / _store_key(points, preset),
                     scheduler=scheduler, numba_threads=None, progress=progress, **kw)


def learnability_status(out) -> list[dict]:
    """Progress of every run under ``OUT/runs`` (numpy only): one dict per run, sorted by model
    (:data:`GATED_FIRST` order), optimizer and seed, with model, optimizer, seed, run, step, steps,
    finished, loss, loss_ratio, train_s, measured and (NaN when not measured) the
    :func:`measured_summary` keys. Raises ValueError for an unreadable run or learnability file."""
    rows = []
    for f in pathlib.Path(out, "runs").glob("*.npz"):
        if f.name.endswith(".learnability.npz"):
            continue
        res = load_run(str(f))
        cfg = res["config"]
        row = {"run": f.name, "model": str(cfg["model"]), "optimizer": str(cfg["optimizer"]),
               "seed": int(cfg["seed"]), **_train_summary(res, int(cfg["steps"]))}
        lpath = learnability_path(str(f))
        if os.path.exists(lpath):
            row.update(measured=True, **measured_summary(read_learnability(lpath)[1]["result"]))
        else:
            row.update(measured=False, alpha_median=float("nan"), alpha_pooled=float("nan"), N_max=float("nan"),
                       H_N=float("nan"), H_N_significant=float("nan"), n_significant=0)
        rows.append(row)
    order = {m: i for i, m in enumerate(GATED_FIRST)}
    rows.sort(key=lambda r: (order.get(r["model"], 99), r["model"], r["optimizer"], r["seed"]))
    return rows
