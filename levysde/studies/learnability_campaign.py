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
from levysde.studies.drivers import check_campaign_dir
from levysde.studies.sweep import run_sweep

__all__ = ["GATED_FIRST", "learnability_run_name", "learnability_points", "learnability_point",
           "run_learnability_campaign", "learnability_status", "measured_summary"]

#: point order of the models: the fully gated ones first, then the leaky ones
GATED_FIRST = ("gru", "lstm", "constgate", "sharedgate", "diaggate")


def learnability_run_name(model: str, optimizer: str, seed: int) -> str:
    """Run-file name of one run: ``MODEL-OPT_sSEED.npz``.

    Parameters
    ----------
    model : str
        The model, one of :data:`levysde.rnn.learnability_presets.LEARNABILITY_MODELS`
        (not checked here; :func:`learnability_points` checks it).
    optimizer : str
        The optimizer, one of :data:`levysde.rnn.learnability_presets.LEARNABILITY_OPTIMIZERS`
        (not checked here).
    seed : int
        The run seed (an integer >= 0).

    Returns
    -------
    str
        The file name, relative to the campaign's ``OUT/runs``.

    Examples
    --------
    >>> learnability_run_name("gru", "adamw", 212)
    'gru-adamw_s212.npz'
    """
    return f"{model}-{optimizer}_s{int(seed)}.npz"


def learnability_points(preset: str, models=None, optimizers=None, seeds=None,
                        device: str | None = None) -> list[dict]:
    """The sweep points of a campaign, in the campaign's order.

    GRU and LSTM come first, then the leaky models (ConstGate, SharedGate, DiagGate); within
    each group the points run over seeds, then optimizers, then models (fastest), so that the
    models and optimizers of a seed progress together.

    Parameters
    ----------
    preset : str
        A profile of :data:`levysde.rnn.learnability_presets.LEARNABILITY_PRESETS`
        (``"learnability"``, ``"learnability-cpu"``, ``"learnability-quick"``).
    models : sequence of str, optional
        Models of :data:`levysde.rnn.learnability_presets.LEARNABILITY_MODELS`, without repeats
        (default: all five).
    optimizers : sequence of str, optional
        Optimizers of :data:`levysde.rnn.learnability_presets.LEARNABILITY_OPTIMIZERS`, without
        repeats (default: both).
    seeds : sequence of int, optional
        Run seeds >= 0, without repeats (default: the profile's).
    device : str, optional
        Torch device of every run (default: the profile's).

    Returns
    -------
    list of dict
        Each point ``{"preset", "model", "optimizer", "seed", "run"`` (file name, of
        :func:`learnability_run_name`), ``"config"`` (TrainConfig fields, of
        :func:`levysde.rnn.learnability_presets.learnability_config`), ``"matched"``
        (``{"sequences": S, "lags": [lo, hi, n]}``: the matched statistic on ``S`` diagnostic
        sequences and the lags ``int(linspace(lo, hi, n))``)``}``.

    Raises
    ------
    ValueError
        For an unknown profile, model or optimizer (naming ``preset``, ``model`` or
        ``optimizer``), a seed that is not an integer >= 0 (naming ``seed``), or empty or
        repeated models, optimizers or seeds.

    Examples
    --------
    >>> points = learnability_points("learnability-quick", seeds=[212, 1001])
    >>> len(points)
    20
    >>> print([p["run"] for p in points[:5]])
    ['gru-adamw_s212.npz', 'lstm-adamw_s212.npz', 'gru-sgd_s212.npz', 'lstm-sgd_s212.npz', 'gru-adamw_s1001.npz']
    >>> print(points[0]["matched"], points[0]["config"]["steps"], points[0]["config"]["hidden"])
    {'sequences': 16, 'lags': [4, 256, 16]} 4 8
    >>> learnability_points("learnability-quick", models=["rnn"])
    Traceback (most recent call last):
    ...
    ValueError: model must be one of 'constgate', 'sharedgate', 'diaggate', 'gru', 'lstm'; got 'rnn'
    """
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
    """Scalars of a stored learnability measurement.

    Parameters
    ----------
    result : dict
        The ``result`` of a learnability file's meta
        (:func:`levysde.io.learnfile.read_learnability`), i.e.
        :meth:`~levysde.inference.learnability_measure.LearnabilityMeasurement.records`: at
        least ``alpha`` (per lag), ``alpha_pooled``, ``N_eval``, ``H_N``, ``H_N_significant``
        (per N of ``N_eval``) and ``significant`` (per lag); None stands for a missing number.

    Returns
    -------
    dict
        ``alpha_median`` (median of alpha_hat over the lags with one), ``alpha_pooled``,
        ``N_max`` (the largest N of ``N_eval``), ``H_N`` and ``H_N_significant`` at ``N_max``
        (steps), all float, NaN where missing; ``n_significant`` (int: the lags whose mean is
        significant).

    Raises
    ------
    KeyError
        When ``result`` lacks one of the keys above.

    Examples
    --------
    >>> result = {"alpha": [1.4, None, 1.6, 1.8], "alpha_pooled": 1.6, "N_eval": [25.0, 12800.0],
    ...           "H_N": [4.0, 128.0], "H_N_significant": [4.0, None],
    ...           "significant": [True, False, True, True]}
    >>> print(measured_summary(result))
    {'alpha_median': 1.6, 'alpha_pooled': 1.6, 'N_max': 12800.0, 'H_N': 128.0,
     'H_N_significant': nan, 'n_significant': 3}
    """
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
    """Train (or resume, or skip) the run of one point, then measure it; the sweep's task.

    The run is trained by :func:`levysde.studies.campaign.train_run`; once finished, its
    matched statistic on the point's diagnostic sequences and lags
    (:func:`levysde.rnn.matched.run_matched_sums`) and its measurement
    (:func:`levysde.inference.learnability_measure.measure_learnability` at its default
    settings) are stored beside the run (``MODEL-OPT_sSEED.learnability.npz``,
    :mod:`levysde.io.learnfile`), unless stored already.

    Parameters
    ----------
    point : dict
        A point of :func:`learnability_points`.
    seed : int
        The sweep's per-point seed, unused: the run seed is the point's.
    runs_dir : str
        Directory of the run files (keyword only; it must exist).
    deadline : float, optional
        A ``time.time()`` value (keyword only): training stops at its first optimizer step past
        it (checkpoint written), and the matched statistic is not started past it. Default
        None: no deadline.

    Returns
    -------
    dict
        The run's ``step``, ``steps``, ``finished`` (True), ``loss``, ``loss_ratio`` (last over
        first loss), ``train_s`` (training seconds), ``measured`` (True) and the
        :func:`measured_summary` keys.

    Raises
    ------
    CampaignPaused
        When the deadline stopped training before its last step, or came before the matched
        statistic (rerun to continue).
    ValueError
        For a run that cannot be continued (an unfinished run file whose checkpoint is missing) or
        measured, or a bad config.

    Examples
    --------
    A point of the quick profile with a smaller matched statistic (8 sequences, 4 lags); a
    deadline already past stops it before training, the rerun trains and measures it:

    >>> import os, tempfile, time
    >>> from levysde.studies.campaign import CampaignPaused
    >>> point = learnability_points("learnability-quick", ["diaggate"], ["adamw"])[0]
    >>> point["matched"] = {"sequences": 8, "lags": [4, 64, 4]}
    >>> with tempfile.TemporaryDirectory() as runs:
    ...     try:
    ...         learnability_point(point, 0, runs_dir=runs, deadline=time.time())
    ...     except CampaignPaused as exc:
    ...         print(exc)
    ...     row = learnability_point(point, 0, runs_dir=runs)
    ...     files = sorted(os.listdir(runs))
    diaggate-adamw_s212.npz: step 0 of 4 at the deadline; rerun to continue
    >>> print(row["step"], row["finished"], row["measured"], row["N_max"])
    4 True True 12800.0
    >>> print(files)
    ['diaggate-adamw_s212.ckpt', 'diaggate-adamw_s212.learnability.npz', 'diaggate-adamw_s212.npz']
    """
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
    """Run (or resume) a learnability campaign into directory ``out``.

    Every point of :func:`learnability_points` is trained and measured by
    :func:`learnability_point` on the sweep (:func:`levysde.studies.sweep.run_sweep`); the
    layout of ``out``, the store key and the resuming rules are in the module docstring.

    Parameters
    ----------
    preset : str
        The profile (:data:`levysde.rnn.learnability_presets.LEARNABILITY_PRESETS`).
    out : str or os.PathLike
        The campaign directory (created): ``runs/`` and the sweep's stores ``sweep/KEY/``.
    models, optimizers, seeds, device : optional
        As for :func:`learnability_points`.
    scheduler : str, optional
        ``"local"`` (default: a local Dask cluster), ``"sequential"`` (a plain loop in this
        process) or ``"tcp://HOST:PORT"`` (its workers must see ``out``), as for
        :func:`levysde.studies.sweep.run_sweep`.
    n_workers : int, optional
        Workers of the local cluster (default 2, one torch thread each); ignored for other
        schedulers.
    deadline : float, optional
        A ``time.time()`` value: training stops at its first optimizer step past it
        (checkpoint written), no matched statistic is started past it, and CampaignPaused is
        raised. Default None: no deadline.
    progress : bool, optional
        Progress bar on a terminal (default True).

    Returns
    -------
    list of dict
        The points' results in point order (:func:`learnability_point`).

    Raises
    ------
    ValueError
        For bad arguments (:func:`learnability_points`, :func:`levysde.studies.sweep.run_sweep`),
        an ``out`` that cannot be a campaign directory
        (:func:`levysde.studies.drivers.check_campaign_dir`) or a run that cannot be continued
        or measured.
    CampaignPaused
        When the deadline stopped a point (finished points stay in the store).
    RuntimeError
        With ``scheduler="local"`` at a script's top level outside the main guard
        (:func:`levysde.studies.sweep.run_sweep`).

    Examples
    --------
    One model, one optimizer, the quick profile's seed, in this process; a second call finds
    the point done and only reads it (same training time: not trained again):

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     rows = run_learnability_campaign("learnability-quick", out, models=["diaggate"],
    ...                                      optimizers=["adamw"], scheduler="sequential",
    ...                                      progress=False)
    ...     again = run_learnability_campaign("learnability-quick", out, models=["diaggate"],
    ...                                       optimizers=["adamw"], scheduler="sequential",
    ...                                       progress=False)
    ...     files = sorted(os.listdir(os.path.join(out, "runs")))
    >>> print(len(rows), rows[0]["finished"], rows[0]["measured"], again[0]["train_s"] == rows[0]["train_s"])
    1 True True True
    >>> print(files)
    ['diaggate-adamw_s212.ckpt', 'diaggate-adamw_s212.learnability.npz', 'diaggate-adamw_s212.npz']
    """
    points = learnability_points(preset, models, optimizers, seeds, device)
    out = check_campaign_dir(out, create=True)
    runs = out / "runs"
    task = functools.partial(learnability_point, runs_dir=str(runs.resolve()), deadline=deadline)
    kw = {} if scheduler != "local" else {"n_workers": n_workers}
    return run_sweep(task, points, master_seed=0, store=out / "sweep" / _store_key(points, preset),
                     scheduler=scheduler, numba_threads=None, progress=progress, **kw)


def learnability_status(out) -> list[dict]:
    """Progress of every run under ``OUT/runs`` (numpy only: torch is not needed).

    Parameters
    ----------
    out : str or os.PathLike
        The campaign directory of :func:`run_learnability_campaign`.

    Returns
    -------
    list of dict
        One dict per run file, sorted by model (:data:`GATED_FIRST` order), optimizer and
        seed: ``run``, ``model``, ``optimizer``, ``seed``, ``step``, ``steps``, ``finished``,
        ``loss``, ``loss_ratio``, ``train_s``, ``measured`` (whether its learnability file
        exists) and the :func:`measured_summary` keys (NaN, and ``n_significant`` 0, when not
        measured). Empty when there is no run yet.

    Raises
    ------
    ValueError
        For a run file or learnability file under ``OUT/runs`` that cannot be read.

    Examples
    --------
    A run trained but not yet measured:

    >>> import os, tempfile
    >>> from levysde.studies.campaign import train_run
    >>> point = learnability_points("learnability-quick", ["gru"], ["sgd"])[0]
    >>> with tempfile.TemporaryDirectory() as out:
    ...     print(learnability_status(out))                 # nothing run yet
    ...     os.makedirs(os.path.join(out, "runs"))
    ...     _ = train_run(point["config"], os.path.join(out, "runs", point["run"]))
    ...     row = learnability_status(out)[0]
    []
    >>> print(row["run"], row["step"], row["steps"], row["finished"], row["measured"], row["H_N"])
    gru-sgd_s212.npz 4 4 True False nan

    A measured campaign: see :func:`run_learnability_campaign`.
    """
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
