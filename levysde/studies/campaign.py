"""The anti-collapse paper's experiment as a resumable campaign on the Dask sweep (docs/rnn.md).

A campaign is one profile of :data:`levysde.rnn.presets.PRESETS` times models times seeds. Each
run is one point of :func:`levysde.studies.sweep.run_sweep` (the sweep of ``levysde diagram``):
a local cluster by default, a ``tcp://`` Dask scheduler (its workers must see the campaign
directory), or ``"sequential"`` (a plain loop, no Dask). Layout of the campaign directory::

    OUT/runs/LABEL_sSEED.npz   run file, rewritten at every record (levysde.io.runfile)
    OUT/runs/LABEL_sSEED.ckpt  its checkpoint (kept after the run ends, so a run can be extended)
    OUT/sweep/                 the sweep's store: manifest and one point file per finished run
    OUT/sweep-batched/         the same with ``batch_seeds``: one point per batched model

With ``batch_seeds`` the seeds of each model that :func:`levysde.rnn.batched.train_seeds` can
batch (the leaky models; not ConstGate with slow-mode forcing) train in one process as one
batched model, one sweep point per model; the others stay one point per run. The run files
are the same either way, so a campaign can switch between the two (each store is its own).

Resuming is the store's and the trainer's: a finished run has its point file and is skipped;
an unfinished one resumes from its checkpoint (from its last record; on CPU exactly as an
uninterrupted run). A ``deadline`` stops every run at its first optimizer step past that time
(its checkpoint written there) and raises :class:`CampaignPaused`; rerunning continues.
"""
from __future__ import annotations

import functools
import json
import os
import pathlib
import sys
import time

import numpy as np

from levysde.io.runfile import checkpoint_path, load_run
from levysde.rnn.batched import check_batchable, train_seeds
from levysde.rnn.trainer import TrainConfig, TrainingDiverged, train
from levysde.studies.campaign_plan import campaign_points, campaign_status, run_summary
from levysde.studies.drivers import check_campaign_dir
from levysde.studies.sweep import point_file, run_sweep

__all__ = ["CampaignPaused", "campaign_points", "campaign_units", "train_run", "train_point", "train_unit",
           "run_campaign", "campaign_status"]



class CampaignPaused(RuntimeError):
    """A run reached the deadline before its last step; its checkpoint is saved, rerun to continue.

    Raised by :func:`train_point` (and so by :func:`run_campaign`) when a ``deadline`` stops
    a run; finished runs stay in the sweep's store. A :class:`RuntimeError`.

    Parameters
    ----------
    *args
        The message (the run, the step reached and the steps asked for).

    Examples
    --------
    A deadline already past stops the run at once; the rerun continues from its checkpoint:

    >>> import tempfile, time
    >>> point = campaign_points("cpu-quick", labels=["diaggate"], seeds=[47], epochs=1)[0]
    >>> with tempfile.TemporaryDirectory() as runs:
    ...     try:
    ...         train_point(point, 0, runs_dir=runs, deadline=time.time())
    ...     except CampaignPaused as exc:
    ...         print(exc)
    ...     print(train_point(point, 0, runs_dir=runs)["finished"])
    diaggate_s47.npz: step 0 of 3 at the deadline; rerun to continue
    True
    """


def _missing_checkpoint(path: str) -> ValueError:
    return ValueError(f"{path}: the checkpoint {checkpoint_path(path)} of this unfinished run is missing, so it "
                      f"cannot be continued; move the run file away to start the run again")


def train_run(config: dict, path: str, *, deadline: float | None = None) -> dict:
    """Train one run to its last step: skip it when finished, resume it from its checkpoint, or start it.

    The run is the run file ``path`` of the TrainConfig fields ``config``: a finished run file
    (its last record at ``config["steps"]``) is only read; an unfinished one continues from its
    checkpoint (:func:`levysde.io.runfile.checkpoint_path`; on CPU exactly as an uninterrupted
    run); without a run file the run starts. The task of both campaigns (:func:`train_point`,
    :func:`levysde.studies.learnability_campaign.learnability_point`).

    Parameters
    ----------
    config : dict
        The fields of :class:`levysde.rnn.trainer.TrainConfig` (e.g. a point's ``"config"``
        from :func:`campaign_points` or :func:`levysde.rnn.presets.preset_config`).
    path : str
        The run file (``.npz``); its checkpoint lies beside it.
    deadline : float, optional
        A ``time.time()`` value (keyword only): the run stops at its first optimizer step past
        it, its checkpoint written there. Default None: no deadline.

    Returns
    -------
    dict
        The run-file arrays (:func:`levysde.io.runfile.load_run`), finished or not: compare
        ``step[-1]`` with ``config["steps"]``.

    Raises
    ------
    ValueError
        For an unfinished run file whose checkpoint is missing (never overwritten) or a bad
        config.

    Examples
    --------
    A deadline already past stops the run at step 0; the next call resumes it to its last
    step, and a third only reads the finished file:

    >>> import os, tempfile, time
    >>> cfg = campaign_points("cpu-quick", labels=["diaggate"], seeds=[47], epochs=1)[0]["config"]
    >>> with tempfile.TemporaryDirectory() as runs:
    ...     path = os.path.join(runs, "diaggate_s47.npz")
    ...     paused = train_run(cfg, path, deadline=time.time())
    ...     done = train_run(cfg, path)
    ...     again = train_run(cfg, path)
    >>> print(paused["step"][-1], done["step"][-1], cfg["steps"], list(again["step"]) == list(done["step"]))
    0 3 3 True
    """
    ckpt = checkpoint_path(path)
    cfg = TrainConfig(**config)
    if os.path.exists(path):
        done = load_run(path)
        if int(done["step"][-1]) >= cfg.steps:
            return done
        if not os.path.exists(ckpt):
            raise _missing_checkpoint(path)
    mono = None if deadline is None else time.monotonic() + (float(deadline) - time.time())
    # a checkpoint without its run file (the run file deleted) is not resumed: the run starts again
    return train(cfg, path, resume=os.path.exists(path) and os.path.exists(ckpt), deadline=mono)


def train_point(point: dict, seed: int, *, runs_dir: str, deadline: float | None = None) -> dict:
    """Train (or resume, or skip when finished) the run of one campaign point; the sweep's task.

    Parameters
    ----------
    point : dict
        A point of :func:`campaign_points`.
    seed : int
        The sweep's per-point seed, unused: the run seed is the point's.
    runs_dir : str
        Directory of the run files (keyword only).
    deadline : float, optional
        A ``time.time()`` value: the run stops at its first optimizer step past it, its
        checkpoint written there (see :func:`run_campaign`).

    Returns
    -------
    dict
        The run's summary: step, steps, records, finished, loss, loss_ratio,
        zeta_window_std, window_masked, train_s.

    Raises
    ------
    CampaignPaused
        When the deadline stopped the run before its last step.
    ValueError
        For an unfinished run file whose checkpoint is missing (never overwritten) or a bad config.

    Examples
    --------
    See :class:`CampaignPaused` (a paused run, then resumed) and :func:`run_campaign`.

    >>> import tempfile
    >>> point = campaign_points("cpu-quick", labels=["diaggate"], seeds=[47], epochs=1)[0]
    >>> with tempfile.TemporaryDirectory() as runs:
    ...     summary = train_point(point, 0, runs_dir=runs)
    >>> print(summary["step"], summary["steps"], summary["finished"])
    3 3 True
    """
    del seed
    steps = int(point["config"]["steps"])
    out = run_summary(train_run(point["config"], os.path.join(runs_dir, point["run"]), deadline=deadline), steps)
    if not out["finished"]:
        raise CampaignPaused(f"{point['run']}: step {out['step']} of {steps} at the deadline; "
                             f"rerun to continue")
    return out


def _batchable(config: dict) -> bool:
    try:
        check_batchable(TrainConfig(**config))
    except ValueError:
        return False
    return True


def campaign_units(points: list[dict]) -> list[dict]:
    """Group a campaign's points into the units of a batched campaign, one per batchable model.

    The points of a model whose configuration :func:`levysde.rnn.batched.check_batchable`
    accepts become one unit (all its seeds, trained as one batched model); every other point
    stays a unit of its own. Units are ordered by their first point.

    Parameters
    ----------
    points : list of dict
        Points of :func:`campaign_points`.

    Returns
    -------
    list of dict
        Each unit ``{"label", "runs" (file names), "seeds", "configs" (one TrainConfig dict per
        seed)}``.

    Raises
    ------
    ValueError
        When two points of one label differ in anything but the seed.

    Examples
    --------
    ConstGate with slow-mode forcing (Path A) is not batchable, so its seeds stay apart:

    >>> points = campaign_points("cpu-quick", labels=["diaggate", "constgate-pathA"], seeds=[47, 83])
    >>> for u in campaign_units(points):
    ...     print(u["label"], u["seeds"])
    diaggate [47, 83]
    constgate-pathA [47]
    constgate-pathA [83]
    """
    units: list[dict] = []
    by_label: dict[str, dict] = {}
    for p in points:
        cfg = p["config"]
        if _batchable(cfg):
            u = by_label.get(p["label"])
            if u is None:
                u = by_label[p["label"]] = {"label": p["label"], "runs": [], "seeds": [], "configs": []}
                units.append(u)
            elif {**u["configs"][0], "seed": 0} != {**cfg, "seed": 0}:
                raise ValueError(f"points of label {p['label']!r} differ in more than the seed")
        else:
            u = {"label": p["label"], "runs": [], "seeds": [], "configs": []}
            units.append(u)
        u["runs"].append(p["run"])
        u["seeds"].append(int(p["seed"]))
        u["configs"].append(cfg)
    return units


def train_unit(unit: dict, seed: int, *, runs_dir: str, deadline: float | None = None) -> dict:
    """Train (or resume, or skip when finished) the runs of one unit of :func:`campaign_units`.

    A unit of one run is :func:`train_point`; a unit of several seeds trains its unfinished
    runs as one batched model (:func:`levysde.rnn.batched.train_seeds`; runs with a checkpoint
    resume, the others start; runs at different steps are stepped in groups until they meet).

    Parameters
    ----------
    unit : dict
        A unit of :func:`campaign_units`.
    seed : int
        The sweep's per-point seed, unused: the run seeds are the unit's.
    runs_dir : str
        Directory of the run files (keyword only).
    deadline : float, optional
        A ``time.time()`` value: the runs stop at their first batched step past it, their
        checkpoints written there.

    Returns
    -------
    dict
        The summary keys of :func:`train_point`, each an array over the unit's runs (in the
        unit's order): the form a sweep's store keeps.

    Raises
    ------
    CampaignPaused
        When the deadline stopped a run before its last step.
    ValueError
        For an unfinished run file whose checkpoint is missing, or a seed whose training diverged.

    Examples
    --------
    >>> import tempfile
    >>> unit = campaign_units(campaign_points("cpu-quick", labels=["diaggate"], seeds=[47, 83], epochs=1))[0]
    >>> with tempfile.TemporaryDirectory() as runs:
    ...     rows = train_unit(unit, 0, runs_dir=runs)
    >>> print(rows["step"].tolist(), rows["finished"].tolist())
    [3, 3] [True, True]
    """
    del seed
    paths = [os.path.join(runs_dir, r) for r in unit["runs"]]
    steps = int(unit["configs"][0]["steps"])
    todo = []
    for i, path in enumerate(paths):
        if os.path.exists(path) and int(load_run(path)["step"][-1]) >= steps:
            continue
        if os.path.exists(path) and not os.path.exists(checkpoint_path(path)):
            raise _missing_checkpoint(path)
        todo.append(i)
    if len(unit["runs"]) == 1 and todo:
        train_run(unit["configs"][0], paths[0], deadline=deadline)
    elif todo:
        mono = None if deadline is None else time.monotonic() + (float(deadline) - time.time())
        resume = [os.path.exists(paths[i]) and os.path.exists(checkpoint_path(paths[i])) for i in todo]
        res = train_seeds(TrainConfig(**unit["configs"][todo[0]]), [unit["seeds"][i] for i in todo],
                          [paths[i] for i in todo], resume=resume, deadline=mono)
        bad = [r for r in res if isinstance(r, TrainingDiverged)]
        if bad:
            raise ValueError(f"{unit['label']}: {bad[0]}")
    rows = [run_summary(load_run(p), steps) for p in paths]
    paused = [(r, row) for r, row in zip(unit["runs"], rows, strict=True) if not row["finished"]]
    if paused:
        r, row = paused[0]
        raise CampaignPaused(f"{r}: step {row['step']} of {steps} at the deadline; rerun to continue")
    return {k: np.array([row[k] for row in rows]) for k in rows[0]}


def run_campaign(preset: str, out, *, labels=None, seeds=None, device: str | None = None,
                 epochs: int | None = None, scheduler: str = "local", n_workers: int | None = None,
                 deadline: float | None = None, progress: bool = True,
                 batch_seeds: bool = False) -> list[dict]:
    """Run (or resume) a campaign into directory ``out`` (module docstring).

    Parameters
    ----------
    preset : str
        The profile (:data:`levysde.rnn.presets.PRESETS`).
    out : str or os.PathLike
        The campaign directory (created): ``runs/`` and the sweep's store ``sweep/``.
    labels, seeds, device, epochs : optional
        As for :func:`campaign_points`.
    scheduler : str, optional
        ``"local"`` (default), ``"sequential"`` or ``"tcp://HOST:PORT"``, as for
        :func:`levysde.studies.sweep.run_sweep` (a tcp cluster's workers must see ``out``).
    n_workers : int, optional
        Workers of the local cluster (default 2); ignored for other schedulers.
    deadline : float, optional
        A ``time.time()`` value after which every run stops at its next optimizer step,
        checkpoint written (then CampaignPaused is raised; finished runs stay in the store).
    progress : bool, optional
        Progress bar on a terminal (default True).
    batch_seeds : bool, optional
        Train each batchable model's seeds as one batched model, one sweep point per model
        (:func:`campaign_units`, store ``OUT/sweep-batched``). Default False: one point per run.

    Returns
    -------
    list of dict
        The runs' summaries in point order (:func:`train_point`).

    Raises
    ------
    ValueError
        For bad arguments, an ``out`` that cannot be a campaign directory
        (:func:`levysde.studies.drivers.check_campaign_dir`) or a store of another campaign
        (another profile, models, seeds, epochs or device: use another ``out``).
    CampaignPaused
        When the deadline stopped a run.
    RuntimeError
        With ``scheduler="local"`` at a script's top level outside the main guard
        (:func:`levysde.studies.sweep.run_sweep`).

    Examples
    --------
    A finished run whose run file is gone is trained again: its point's result is removed from
    the store first (one line on stderr per such run). A start that fails (no scheduler at a
    ``tcp://`` address, say) leaves no directory of its own behind while nothing ran in it.

    One model, one seed, one epoch (3 optimizer steps), in this process; a second call finds
    the run finished and only reads it:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     rows = run_campaign("cpu-quick", out, labels=["diaggate"], seeds=[47], epochs=1,
    ...                         scheduler="sequential", progress=False)
    ...     again = run_campaign("cpu-quick", out, labels=["diaggate"], seeds=[47], epochs=1,
    ...                          scheduler="sequential", progress=False)
    ...     status = campaign_status(out)
    >>> print(rows[0]["finished"], again == rows, status[0]["run"], status[0]["step"])
    True True diaggate_s47.npz 3
    """
    points = campaign_points(preset, labels, seeds, device, epochs)
    units = campaign_units(points) if batch_seeds else None
    store = pathlib.Path(out, "sweep-batched" if batch_seeds else "sweep")
    groups = [[p["run"]] for p in points] if units is None else [u["runs"] for u in units]
    _check_store(store, points if units is None else units)
    made = _missing_dirs(pathlib.Path(out), store)
    out = check_campaign_dir(out, create=True)
    runs = out / "runs"
    _forget_missing_runs(store, runs, groups)
    kw = {} if scheduler != "local" else {"n_workers": n_workers}
    task = functools.partial(train_point if units is None else train_unit, runs_dir=str(runs.resolve()),
                             deadline=deadline)
    try:
        done = run_sweep(task, points if units is None else units, master_seed=0, store=store,
                         scheduler=scheduler, numba_threads=None, progress=progress, **kw)
    except BaseException:
        _remove_if_empty(made, runs, store)
        raise
    if units is None:
        return done
    by_run = {r: {k: np.asarray(v)[j].item() for k, v in res.items()}
              for u, res in zip(units, done, strict=True) for j, r in enumerate(u["runs"])}
    return [by_run[p["run"]] for p in points]


def _check_store(store: pathlib.Path, points: list) -> None:
    """Refuse, before anything is touched, a store that holds another campaign's sweep."""
    manifest = store / "sweep.json"
    if not manifest.is_file():
        return              # none yet (or not a regular file: the sweep says so)
    try:
        same = json.loads(manifest.read_text()) == json.loads(json.dumps({"master_seed": 0, "points": points}))
    except (OSError, ValueError):
        return              # the sweep reports an unreadable manifest
    if not same:
        raise ValueError(f"store {str(store)!r} holds a different campaign (profile, models, seeds, epochs or "
                         f"device differ); use another --out for a different campaign")


def _forget_missing_runs(store: pathlib.Path, runs: pathlib.Path, groups: list[list[str]]) -> None:
    """Remove the store's result of every point (a list of run files) with a run file missing, so
    that the sweep trains it again; one line on stderr per missing run."""
    for i, names in enumerate(groups):
        done = point_file(store, i)
        missing = [n for n in names if not (runs / n).exists()]
        if missing and done.exists():
            for n in missing:
                print(f"{n}: run file missing, training it again", file=sys.stderr)
            done.unlink()


def _missing_dirs(out: pathlib.Path, store: pathlib.Path) -> list[pathlib.Path]:
    """The directories a campaign in ``out`` would create, innermost first."""
    return [p for p in (store, out / "runs", out, *out.parents) if not os.path.lexists(p)]


def _remove_if_empty(made: list[pathlib.Path], runs: pathlib.Path, store: pathlib.Path) -> None:
    """After a failed start, remove the directories this call created while nothing was run in them."""
    if runs not in made or any(runs.iterdir()):
        return
    if store in made and store.is_dir() and {f.name for f in store.iterdir()} <= {"sweep.json"}:
        (store / "sweep.json").unlink(missing_ok=True)
    for d in made:
        try:
            d.rmdir()
        except OSError:
            return
