r"""Named profiles of the learnability paper's experiment, as data (docs/learnability.md, "Profiles").

Torch-free: a profile is a table of :class:`levysde.rnn.trainer.TrainConfig` fields plus the
epochs, seeds and the matched-statistic settings; :func:`learnability_config` turns (profile,
model, optimizer, seed) into the fields of one run. The paper's settings (arXiv 2512.05790, code
``lorenzolivi/learnability`` at d5efbd2, README command):

* ``learnability`` (the paper's): ConstGate, SharedGate, DiagGate, GRU, LSTM; H = 128, D = 16,
  T = 1024, LayerNorm before tanh (leaky models), orthogonal init with the retention gate's
  weights at 0 and its bias at s0 = 0.05 (time scale :math:`-1/\log(1 - s_0)` = 19.5 steps; ConstGate's
  fixed gate s = 0.05); the ``lagged`` task with the fixed lags 32, 64, 128, 192, 256
  (coefficients 0.6 ... 0.26, noise 0.3); 8000 training and 8000 diagnostic sequences; batch
  512, 750 epochs (about 12,000 steps), learning rate 1e-3, weight decay 1e-4, clipping 1.0; seeds
  212, 1001, 2002, 3003, 4004. Matched statistic on the lags int(linspace(4, 256, 128)). A GPU
  job (about 0.1 TFLOP per step).
* ``learnability-cpu``: a reduction that fits one CPU core per run: H = 32, T = 320 (the lags
  32 ... 256 kept, so the longest lag still fits with 64 steps to spare), 512 training sequences,
  batch 64 (8 batches per epoch), 150 epochs (1200 steps), 128 diagnostic sequences, matched
  statistic on 64 lags from 4 to 256; the first three seeds.
* ``learnability-quick``: the ``cpu`` profile cut to a pipeline check (H = 8, T = 260, 2 epochs).

Differences from the paper's code, by necessity: torch's fused GRU and LSTM have no LayerNorm, so
these two train without it (the paper's own GRU/LSTM cells have one); the GRU/LSTM retention gate
(update gate z, forget gate f) starts at the same time scale 19.5 through its bias. The paper's
SGD learning rate is not in its public code; the profiles give SGD 0.1 (:data:`OPTIMIZER_LR`): with
the gradient clipped to norm 1, an SGD step is at most ``lr`` long, while an AdamW step of 1e-3
per weight is about 1e-3 sqrt(n_weights) ~ 0.07 for H = 32; at 1e-3 SGD leaves the loss where it
starts (GRU, 1200 steps: loss ratio 1.0005; at 0.1 a DiagGate reaches 0.976 in 400 steps). A
``lr=`` override of :func:`learnability_config` sets another. SGD + momentum (the paper's third optimizer)
is not offered by the trainer.
"""
from __future__ import annotations

import copy
import math

from levysde.core.validate import check_choice, check_int

__all__ = ["LEARNABILITY_MODELS", "LEARNABILITY_OPTIMIZERS", "LEARNABILITY_PRESETS", "learnability_config",
           "learnability_steps"]

#: the five models of the paper, as trainer model names
LEARNABILITY_MODELS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
#: the optimizers of the experiment (the paper's main text: AdamW; appendix: SGD)
LEARNABILITY_OPTIMIZERS = ("adamw", "sgd")
_LEAKY = ("constgate", "sharedgate", "diaggate")

#: learning rate per optimizer (module docstring)
OPTIMIZER_LR = {"adamw": 1e-3, "sgd": 0.1}

#: fields shared by every profile
_COMMON = {"task": "lagged", "lag_mode": "fixed", "input_dim": 16, "target_noise": 0.3,
           "lr_scaling": "none", "weight_decay": 1e-4, "clip": 1.0, "init": "default", "gate_tau0": 19.5,
           "threads": 1}

#: profile -> {"epochs", "seeds", "device", "matched" (sequences, lags lo/hi/n), TrainConfig fields}
LEARNABILITY_PRESETS = {
    "learnability": {"epochs": 750, "seeds": (212, 1001, 2002, 3003, 4004), "device": "cuda",
                     "matched": {"sequences": 8000, "lags": (4, 256, 128)},
                     "hidden": 128, "seq_len": 1024, "n_train": 8000, "probe_batch": 8000, "batch": 512},
    "learnability-cpu": {"epochs": 150, "seeds": (212, 1001, 2002), "device": "cpu",
                         "matched": {"sequences": 128, "lags": (4, 256, 64)},
                         "hidden": 32, "seq_len": 320, "n_train": 512, "probe_batch": 128, "batch": 64},
    "learnability-quick": {"epochs": 2, "seeds": (212,), "device": "cpu",
                           "matched": {"sequences": 16, "lags": (4, 256, 16)},
                           "hidden": 8, "seq_len": 260, "n_train": 32, "probe_batch": 16, "batch": 16},
}


def learnability_steps(preset: str) -> int:
    """Optimizer steps of a profile: ``epochs * ceil(n_train / batch)``.

    Parameters
    ----------
    preset : str
        A profile of :data:`LEARNABILITY_PRESETS` (``learnability``, ``learnability-cpu``,
        ``learnability-quick``).

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
    >>> learnability_steps("learnability-cpu"), learnability_steps("learnability-quick")
    (1200, 4)
    """
    p = LEARNABILITY_PRESETS[check_choice("preset", preset, tuple(LEARNABILITY_PRESETS))]
    return int(p["epochs"]) * math.ceil(p["n_train"] / p["batch"])


def learnability_config(preset: str, model: str, optimizer: str, seed: int, device: str | None = None,
                        **override) -> dict:
    """The TrainConfig fields of one run of a profile (module docstring).

    LayerNorm is on for the leaky models; the records are after epoch 1 and at the end.

    Parameters
    ----------
    preset : str
        The profile (:data:`LEARNABILITY_PRESETS`).
    model : str
        One of :data:`LEARNABILITY_MODELS` (``constgate``, ``sharedgate``, ``diaggate``,
        ``gru``, ``lstm``).
    optimizer : str
        One of :data:`LEARNABILITY_OPTIMIZERS` (``adamw``, ``sgd``).
    seed : int
        The run seed, any integer >= 0 (not only the profile's).
    device : str or None, optional
        The torch device (``cpu``, ``cuda``); None: the profile's.
    **override
        Applied last: ``epochs=`` (sets ``steps`` and the record schedule) or any TrainConfig
        field.

    Returns
    -------
    dict
        The fields of :class:`levysde.rnn.trainer.TrainConfig` (``TrainConfig(**cfg)``
        builds the run's configuration), ``steps`` and ``record_epochs`` included.

    Raises
    ------
    ValueError
        For an unknown profile, model or optimizer, or a bad seed (naming ``preset``,
        ``model``, ``optimizer`` or ``seed``).

    Examples
    --------
    >>> cfg = learnability_config("learnability-cpu", "diaggate", "adamw", 212)
    >>> cfg["hidden"], cfg["steps"], cfg["layernorm"], cfg["gate_tau0"], cfg["lag_mode"]
    (32, 1200, True, 19.5, 'fixed')
    >>> learnability_config("learnability-quick", "gru", "sgd", 0)["layernorm"]
    False
    """
    p = copy.deepcopy(LEARNABILITY_PRESETS[check_choice("preset", preset, tuple(LEARNABILITY_PRESETS))])
    check_choice("model", model, LEARNABILITY_MODELS)
    check_choice("optimizer", optimizer, LEARNABILITY_OPTIMIZERS)
    for k in ("seeds", "matched"):
        p.pop(k)
    epochs = int(override.pop("epochs", p.pop("epochs")))
    dev = p.pop("device")
    cfg = dict(_COMMON, **p, model=model, optimizer=optimizer, seed=check_int("seed", seed, 0),
               device=dev if device is None else device, layernorm=model in _LEAKY, lr=OPTIMIZER_LR[optimizer])
    cfg["steps"] = epochs * math.ceil(cfg["n_train"] / cfg["batch"])
    cfg["record_epochs"] = max(1, epochs)
    cfg.update(override)
    return cfg
