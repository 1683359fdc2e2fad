"""The anti-collapse paper's campaign without training: its points and the progress of its runs.

Torch-free (the run files are read with :mod:`levysde.io.runfile`), so that a report on a
campaign (``examples/paper_campaign.py --status``) needs neither PyTorch nor Dask;
:mod:`levysde.studies.campaign` trains the points and re-exports these names.
"""
from __future__ import annotations

import pathlib

import numpy as np

from levysde.core.validate import check_choice
from levysde.io.runfile import load_run
from levysde.rnn.presets import PAPER_MODELS, PRESETS, preset_config, run_name

__all__ = ["LABELS", "campaign_points", "run_summary", "campaign_status"]

#: the model labels of :data:`levysde.rnn.presets.PAPER_MODELS`, in their order
LABELS = tuple(lab for lab, _, _ in PAPER_MODELS)


def campaign_points(preset: str, labels=None, seeds=None, device: str | None = None,
                    epochs: int | None = None) -> list[dict]:
    """The sweep points of a campaign, one per (seed, label), labels varying fastest.

    Labels vary fastest so that the models of a seed progress together.

    Parameters
    ----------
    preset : str
        A profile of :data:`levysde.rnn.presets.PRESETS` (``"paper"``, ``"paper-smoke"``,
        ``"cpu"``, ``"cpu-quick"``).
    labels : sequence of str, optional
        Model labels of :data:`levysde.rnn.presets.PAPER_MODELS` (default: all of them).
    seeds : sequence of int, optional
        Distinct run seeds >= 0 (default: the profile's).
    device : str, optional
        Torch device of every run (default: the profile's).
    epochs : int, optional
        Epochs of every run (default: the profile's).

    Returns
    -------
    list of dict
        Each point ``{"preset", "label", "seed", "run" (file name), "config" (TrainConfig
        fields)}``.

    Raises
    ------
    ValueError
        For an unknown profile or label, a bad seed or a seed given twice.

    Examples
    --------
    >>> points = campaign_points("cpu-quick", labels=["diaggate", "sharedgate"], seeds=[47, 83])
    >>> print([p["run"] for p in points])
    ['diaggate_s47.npz', 'sharedgate_s47.npz', 'diaggate_s83.npz', 'sharedgate_s83.npz']
    >>> print(points[0]["config"]["model"], points[0]["config"]["steps"])
    diaggate 12
    """
    check_choice("preset", preset, tuple(PRESETS))
    labels = LABELS if labels is None else tuple(labels)
    for lab in labels:
        check_choice("label", lab, LABELS)
    seeds = PRESETS[preset]["seeds"] if seeds is None else tuple(seeds)
    if len(set(seeds)) < len(seeds):
        raise ValueError(f"seeds must be distinct; got {' '.join(map(str, seeds))}")
    over = {} if epochs is None else {"epochs": int(epochs)}
    return [{"preset": preset, "label": lab, "seed": int(s), "run": run_name(lab, s),
             "config": preset_config(preset, lab, int(s), device, **over)} for s in seeds for lab in labels]


def run_summary(res: dict, steps: int) -> dict:
    """The progress of one run: its last record against the steps it was asked for.

    Parameters
    ----------
    res : dict
        The run-file arrays (:func:`levysde.io.runfile.load_run`).
    steps : int
        The run's optimizer steps.

    Returns
    -------
    dict
        ``step``, ``steps``, ``records``, ``finished``, ``loss``, ``loss_ratio``,
        ``zeta_window_std`` (NaN without a finite zeta_window), ``window_masked``
        (non-decaying units) and ``train_s`` (NaN when the run file has no wall clock).

    Examples
    --------
    >>> res = {"step": [0, 6], "loss": [1.0, 0.5], "loss_ratio": [1.0, 0.4], "wall": [0.0, 0.09]}
    >>> s = run_summary(res, 12)
    >>> print(s["step"], s["records"], s["finished"], s["train_s"])
    6 2 False 0.09
    """
    zw = np.asarray(res["zeta_window"][-1], float) if "zeta_window" in res else np.full(1, np.nan)
    return {"step": int(res["step"][-1]), "steps": int(steps), "records": int(len(res["step"])),
            "finished": bool(int(res["step"][-1]) >= steps), "loss": float(res["loss"][-1]),
            "loss_ratio": float(res["loss_ratio"][-1]),
            "zeta_window_std": float(np.nanstd(zw)) if np.isfinite(zw).any() else float("nan"),
            "window_masked": int(np.asarray(res.get("window_masked", [0]))[-1]),
            "train_s": float(res["wall"][-1]) if "wall" in res else float("nan")}


def _row(path: pathlib.Path) -> dict:
    res = load_run(str(path))
    cfg = res["config"]
    row = {"run": path.name, "label": path.name.rsplit("_s", 1)[0], "seed": int(cfg["seed"]), "started": True}
    row.update(run_summary(res, int(cfg["steps"])))
    return row


def campaign_status(out, points: list[dict] | None = None) -> list[dict]:
    """Progress of a campaign's runs (torch not needed to read them).

    Parameters
    ----------
    out : str or os.PathLike
        The campaign directory of :func:`levysde.studies.campaign.run_campaign`.
    points : list of dict, optional
        Points of :func:`campaign_points`: one row per point in their order, a run without a
        run file as a row ``started`` False (step 0, no records, NaN numbers). Default None:
        one row per run file under ``OUT/runs``, sorted by name.

    Returns
    -------
    list of dict
        ``run``, ``label``, ``seed``, ``started`` and the :func:`run_summary` keys. Empty when
        there is no run file and no point.

    Raises
    ------
    ValueError
        When a run file under ``OUT/runs`` cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     print(campaign_status(out))             # nothing run yet
    ...     row = campaign_status(out, campaign_points("cpu-quick", ["diaggate"], [47]))[0]
    []
    >>> print(row["run"], row["started"], row["step"], row["steps"])
    diaggate_s47.npz False 0 12

    A campaign with runs: see :func:`levysde.studies.campaign.run_campaign`.
    """
    runs = pathlib.Path(out, "runs")
    if points is None:
        return [_row(f) for f in sorted(runs.glob("*.npz"))]
    rows = []
    for p in points:
        path = runs / p["run"]
        if path.exists():
            rows.append(_row(path))
            continue
        nan = float("nan")
        rows.append({"run": p["run"], "label": p["label"], "seed": int(p["seed"]), "started": False, "step": 0,
                     "steps": int(p["config"]["steps"]), "records": 0, "finished": False, "loss": nan,
                     "loss_ratio": nan, "zeta_window_std": nan, "window_masked": 0, "train_s": nan})
    return rows
