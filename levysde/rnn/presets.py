"""Named profiles of the anti-collapse paper's experiment, as data (docs/rnn.md, "Profiles").

Torch-free: a profile is a table of :class:`levysde.rnn.trainer.TrainConfig` fields plus the
number of epochs and the seeds; :func:`preset_config` turns (profile, model, seed) into the
fields of one run. The four models of the paper's two experiments (:data:`PAPER_MODELS`):
ConstGate without forcing (Path B) and with slow-mode forcing (Path A), SharedGate, DiagGate.

Profiles (:data:`PRESETS`; the paper's numbers from its public code, ``lorenzolivi/anticollapse``,
``anticollapse.sh``, restated in docs/rnn.md):

* ``paper``: H = 512, T = 1280, 8000 training / 6000 diagnostic sequences, batch 380, 1400
  epochs (30,800 AdamW steps), records every 40 epochs, tau0 = 199.5 (s0 = 0.005), 16 lags of a
  Pareto(0.6) on [8, 640], windowed time scale on lags 64..384 (32), ten seeds. A GPU job.
* ``paper-smoke``: the author's pipeline check: H = 256, T = 512, 2000 / 1000 sequences, 200
  epochs, records every 10, 10 lags of a Pareto(0.8) on [8, 256], one seed (47).
* ``cpu``: every length divided by 8 (T = 160, lags on [1, 80], tau0 = 25, fit lags 8..48,
  H = 64, 1000 training sequences, batch 48), keeping the ratio of tau0 to the lags and to the
  fit window, lr, weight decay, clipping, the epochs (1400, records every 40: 29,400 steps),
  the batch/dataset ratio (0.048 vs 0.0475: 21 batches per epoch vs 22) and the noise; 200
  diagnostic sequences (not 0.75 of the training set: the windowed time scale of a record
  costs about 0.1 s per diagnostic sequence on one core); five seeds (the paper's first five).
* ``cpu-quick``: the ``cpu`` profile cut to a CI check (H = 16, T = 48, 4 epochs of 3 batches):
  the pipeline, not the science.
"""
from __future__ import annotations

import copy
import math

from levysde.core.validate import check_choice, check_int

__all__ = ["PAPER_MODELS", "PRESETS", "COMMON", "preset_config", "preset_steps", "run_name"]

#: (label, model, extra TrainConfig fields) of the paper's four runs per seed
PAPER_MODELS = (
    ("constgate-pathB", "constgate", {}),
    ("constgate-pathA", "constgate", {"slow_forcing_alpha": 1.5, "slow_forcing_scale": 1.0,
                                      "slow_forcing_q": 0.1, "slow_forcing_taper": 100.0}),
    ("sharedgate", "sharedgate", {}),
    ("diaggate", "diaggate", {}),
)

#: fields shared by every profile (the paper's optimizer, task and estimator settings)
COMMON = {"task": "lagged", "lag_mode": "pareto", "input_dim": 16, "target_noise": 0.3, "optimizer": "adamw",
          "lr": 1e-3, "lr_scaling": "none", "weight_decay": 1e-4, "clip": 1.0, "init": "default", "threads": 1}

PAPER_SEEDS = (47, 83, 12, 69, 31, 104, 218, 337, 451, 592)

#: profile -> {"epochs", "seeds", "device", and TrainConfig fields}
PRESETS = {
    "paper": {"epochs": 1400, "seeds": PAPER_SEEDS, "device": "cuda",
              "hidden": 512, "seq_len": 1280, "n_train": 8000, "probe_batch": 6000, "batch": 380,
              "record_epochs": 40, "gate_tau0": 199.5, "lag_count": 16, "lag_lo": 8, "lag_hi": 640,
              "lag_alpha": 0.6, "window_lags": [64, 384, 32]},
    "paper-smoke": {"epochs": 200, "seeds": (47,), "device": "cuda",
                    "hidden": 256, "seq_len": 512, "n_train": 2000, "probe_batch": 1000, "batch": 380,
                    "record_epochs": 10, "gate_tau0": 199.5, "lag_count": 10, "lag_lo": 8, "lag_hi": 256,
                    "lag_alpha": 0.8, "window_lags": [64, 384, 32]},
    "cpu": {"epochs": 1400, "seeds": PAPER_SEEDS[:5], "device": "cpu",
            "hidden": 64, "seq_len": 160, "n_train": 1000, "probe_batch": 200, "batch": 48,
            "record_epochs": 40, "gate_tau0": 25.0, "lag_count": 16, "lag_lo": 1, "lag_hi": 80,
            "lag_alpha": 0.6, "window_lags": [8, 48, 32]},
    "cpu-quick": {"epochs": 4, "seeds": (47, 83), "device": "cpu",
                  "hidden": 16, "seq_len": 48, "n_train": 36, "probe_batch": 24, "batch": 12,
                  "record_epochs": 2, "gate_tau0": 8.0, "lag_count": 6, "lag_lo": 1, "lag_hi": 24,
                  "lag_alpha": 0.6, "window_lags": [3, 16, 8]},
}


def preset_steps(preset: str) -> int:
    """Optimizer steps of a profile: ``epochs * ceil(n_train / batch)``.

    Parameters
    ----------
    preset : str
        A profile of :data:`PRESETS` (``paper``, ``paper-smoke``, ``cpu``, ``cpu-quick``).

    Returns
    -------
    int
        The number of optimizer steps of one run of the profile.

    Raises
    ------
    ValueError
        For an unknown profile (naming ``preset``).

    Examples
    --------
    >>> preset_steps("paper"), preset_steps("cpu-quick")
    (30800, 12)
    """
    p = PRESETS[check_choice("preset", preset, tuple(PRESETS))]
    return int(p["epochs"]) * math.ceil(p["n_train"] / p["batch"])


def run_name(label: str, seed: int) -> str:
    """File name of one run of a campaign: ``LABEL_sSEED.npz``.

    Parameters
    ----------
    label : str
        The model label (:data:`PAPER_MODELS`' first entries, e.g. ``constgate-pathA``).
    seed : int
        The run seed.

    Returns
    -------
    str
        The run file's name.

    Examples
    --------
    >>> run_name("diaggate", 47)
    'diaggate_s47.npz'
    """
    return f"{label}_s{int(seed)}.npz"


def preset_config(preset: str, label: str, seed: int, device: str | None = None, **override) -> dict:
    """The TrainConfig fields of one run of a profile.

    Parameters
    ----------
    preset : str
        The profile (:data:`PRESETS`).
    label : str
        The model (:data:`PAPER_MODELS`: ``constgate-pathB``, ``constgate-pathA``,
        ``sharedgate``, ``diaggate``).
    seed : int
        The run seed, any integer >= 0 (not only the profile's).
    device : str or None, optional
        The torch device (``cpu``, ``cuda``); None: the profile's.
    **override
        Applied last: ``epochs=`` (sets ``steps``) or any TrainConfig field.

    Returns
    -------
    dict
        The fields of :class:`levysde.rnn.trainer.TrainConfig` (``TrainConfig(**cfg)``
        builds the run's configuration), ``steps`` included.

    Raises
    ------
    ValueError
        For an unknown profile or label, or a bad seed (naming ``preset``, ``label`` or
        ``seed``).

    Examples
    --------
    >>> cfg = preset_config("cpu", "diaggate", 47)
    >>> cfg["hidden"], cfg["steps"], cfg["gate_tau0"], cfg["window_lags"]
    (64, 29400, 25.0, [8, 48, 32])
    >>> preset_config("cpu-quick", "constgate-pathA", 0, epochs=1)["steps"]
    3
    """
    p = copy.deepcopy(PRESETS[check_choice("preset", preset, tuple(PRESETS))])
    models = {lab: (m, e) for lab, m, e in PAPER_MODELS}
    model, extra = models[check_choice("label", label, tuple(models))]
    p.pop("seeds")
    epochs = int(override.pop("epochs", p.pop("epochs")))
    dev = p.pop("device")
    dev = dev if device is None else device
    cfg = dict(COMMON, **p, **copy.deepcopy(extra), model=model, seed=check_int("seed", seed, 0), device=dev)
    cfg["steps"] = epochs * math.ceil(cfg["n_train"] / cfg["batch"])
    cfg.update(override)
    return cfg
