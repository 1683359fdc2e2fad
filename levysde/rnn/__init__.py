"""Gated-RNN trainer that records empirical time-scale trajectories zeta_q (docs/specification.md §1, §9).

Modules
-------
teacher     the tasks' torch-free maths: the ``longmem`` teacher, the trivial predictor's loss
learned     whether a run learned its task, and the summary of its last record (torch-free)
models      ConstGate, SharedGate, DiagGate, GRU, LSTM with per-neuron retention and Jacobian diagonal
tasks       synthetic long-memory regression: powerlaw, delay, adding, longmem (streams, truncated BPTT)
trainer     TrainConfig, train(): muP-scaled optimizers, clipping, injected alpha-stable forcing, recording
checkpoint  the (torch) checkpoints that make a run resumable
fast        GraphStep: a training step replayed from a CUDA graph
batched     train_seeds(): several seeds of one configuration as one batched model
matched     the learnability paper's matched statistic per lag, as per-sequence sums (docs/learnability.md)
learnability_presets  the learnability paper's experiment as profiles (torch-free)
forcing     slow-mode update-space forcing (the anti-collapse paper's Path A)
presets     the paper's profiles (paper, paper-smoke, cpu, cpu-quick) as data (torch-free)

``teacher`` and ``learned`` need numpy only. The trainer's names (``train``, ``TrainConfig``,
the models, the tasks) need PyTorch (the optional extra ``pip install 'levysde[rnn]'``): they
load on first use (:mod:`lazy_loader`) and raise ImportError with the install command when torch is
missing.
See docs/rnn.md.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import lazy_loader as lazy

INSTALL_HINT = ("levysde.rnn's trainer needs PyTorch: pip install 'levysde[rnn]' "
                "(on the project machines: pip install torch==2.13.0)")

__getattr__, _lazy_dir, _names = lazy.attach(
    __name__,
    submod_attrs={
        "teacher": ["teacher_time_scales", "teacher_scale", "trivial_loss"],
        "learned": ["LEARNED_THRESHOLD", "SATURATION_SHOWN", "learned_diagnostic", "run_summary", "saturation_note"],
        "models": ["MODELS", "RNNModel", "Trace", "ConstGate", "SharedGate", "DiagGate", "GRU", "LSTM", "build_model"],
        "tasks": ["ALPHA_MIN_FLOAT32", "TASKS", "Task", "build_task", "sas_noise"],
        "trainer": ["TrainConfig", "train", "record_stats", "lambda_rayleigh"],
        "batched": ["BATCHED_MODELS", "train_seeds"],
        "matched": ["matched_sums", "run_matched_sums", "load_trained", "default_lags"],
        "learnability_presets": ["LEARNABILITY_PRESETS", "LEARNABILITY_MODELS", "LEARNABILITY_OPTIMIZERS",
                                 "learnability_config", "learnability_steps"],
        "forcing": ["SlowModeForcing", "initial_slow_mask", "slow_mask_from_zeta"],
        "presets": ["PAPER_MODELS", "PRESETS", "preset_config", "preset_steps", "run_name"],
    },
)
__all__ = ["INSTALL_HINT", *_names]


def __dir__() -> list[str]:
    """The public names (those of :data:`__all__`)."""
    return list(__all__)

if TYPE_CHECKING:
    from levysde.rnn.batched import BATCHED_MODELS, train_seeds
    from levysde.rnn.forcing import SlowModeForcing, initial_slow_mask, slow_mask_from_zeta
    from levysde.rnn.learnability_presets import (
        LEARNABILITY_MODELS,
        LEARNABILITY_OPTIMIZERS,
        LEARNABILITY_PRESETS,
        learnability_config,
        learnability_steps,
    )
    from levysde.rnn.learned import LEARNED_THRESHOLD, learned_diagnostic, run_summary
    from levysde.rnn.matched import default_lags, load_trained, matched_sums, run_matched_sums
    from levysde.rnn.models import GRU, LSTM, MODELS, ConstGate, DiagGate, RNNModel, SharedGate, Trace, build_model
    from levysde.rnn.presets import PAPER_MODELS, PRESETS, preset_config, preset_steps, run_name
    from levysde.rnn.tasks import TASKS, Task, build_task, sas_noise
    from levysde.rnn.teacher import teacher_scale, teacher_time_scales, trivial_loss
    from levysde.rnn.trainer import TrainConfig, lambda_rayleigh, record_stats, train
