r"""Training loop that records empirical time-scale trajectories (docs/specification.md §1, §9).

At steps 0, K, 2K, ... and at the last step (K = ``record_every``), on a fixed probe batch:

* :math:`\bar\mu_q = \operatorname{mean}_{b,\, t \ge t_0}[-\log r^{(q)}_t]` (:math:`t_0` =
  ``loss_from``), :math:`\zeta_q = \log \bar\mu_q`. :math:`-\log r` comes from the gate
  pre-activation (softplus), so saturated gates never give :math:`\log 0`. Floor:
  :math:`\bar\mu_q` is raised to :data:`MU_FLOOR` (= 1e-12, a time scale of 1e12 steps) if
  smaller; each raise is counted in ``zeta_clips``.
* :math:`\bar\mu^{(1)}_q = \operatorname{mean}[-\log |J^{(qq)}_t|]` from the analytic Jacobian
  diagonal (:mod:`levysde.rnn.models`); :math:`|J|` below :data:`JAC_FLOOR` (= 1e-30) is raised
  to it and counted (``jac_clips``); neurons with :math:`\bar\mu^{(1)}_q \le 0` (expanding) get
  NaN in ``zeta_jac`` and are counted (``jac_masked``): a negative number is never logged.
* :math:`\Lambda_q`: SGD: the learning rate; Adam/AdamW:

  .. math::

      \Lambda_q = \frac{g^\top \operatorname{diag}(\eta_p P)\, g}{g^\top g},
      \qquad P = \operatorname{diag}\Big(\frac{1}{\sqrt{\hat v} + \epsilon}\Big),

  over neuron q's parameter rows (:meth:`RNNModel.neuron_rows`; the readout is not included),
  :math:`\hat v` = Adam's bias-corrected second moment in float64 (before the first step:
  :math:`g^2`, the value Adam's first step uses), :math:`g` = gradient of the probe loss,
  :math:`\eta_p` the learning rate of the tensor holding the entry (without width scaling one
  for all, :math:`\eta` = ``lr``: then :math:`\eta\, g^\top P g / g^\top g`,
  docs/specification.md §9). If
  :math:`g^\top g = 0` the quotient is undefined and the mean of :math:`\eta_p P` over the rows
  is used instead. A non-finite second moment (a gradient beyond float32 range poisons Adam:
  its steps become 0, :math:`\Lambda` 0 and the envelope 0/0) or a :math:`\Lambda` that is not
  finite and > 0 stops the run with :class:`TrainingDiverged`; a non-finite envelope is never
  written.
* the probe loss, its ratio to the trivial predictor's loss (``loss_ratio``,
  :func:`levysde.rnn.learned.learned_diagnostic`; above :data:`DIVERGED_RATIO` = 1e6 the run has
  diverged and stops with :class:`TrainingDiverged`), and the ELR envelope

  .. math::

      f(\ell) = \frac{\sum_q \Lambda_q\, e^{-\ell \bar\mu_q}}{\sum_q \Lambda_q}

  on an integer log grid of exactly ``n_lags`` lags ``1..lag_max`` (:func:`integer_lag_grid`);
  optionally the measured transport. Numpy warnings from non-finite intermediate values
  (a diverging run) are silenced here; divergence is reported by :class:`TrainingDiverged`.

Injected forcing (negative control, anti-collapse paper): after every optimizer step,
:math:`p \leftarrow p + s X` (:math:`s` = ``inject_scale``) on the selected entries
(``inject_target``: ``recurrent`` = hidden-to-hidden weights; ``gate`` = retention-gate
parameters), :math:`X` i.i.d. standard symmetric alpha-stable (characteristic function
:math:`e^{-|k|^\alpha}`), Chambers-Mallows-Stuck (:func:`sas_noise`), drawn from a generator
seeded by ``(seed, step)``.

Slow-mode update-space forcing (``slow_forcing_alpha``; the anti-collapse paper's Path A):
after every optimizer step, alpha-stable noise scaled by the RMS of the realized update is
added to the rows of the slow units, chosen again from ``zeta_window`` at every record
(:mod:`levysde.rnn.forcing`); the mask in force after each record is stored as ``slow_mask``.

Records at full size: the probe batch is processed in blocks of :func:`record_rows` sequences
(at most :data:`RECORD_ENTRIES` = :math:`2^{25}` entries :math:`B T H` per block): the probe
loss's gradient is accumulated over the blocks (each block's mean loss weighted by its share of the batch) and
every recorded average is the share-weighted combination of the blocks' averages, so a
record of 6000 sequences of 1280 steps at H = 512 needs a few GB, and the result does not
depend on the block size beyond float round-off.

Width-scaled learning rate (``lr_scaling = "mup"``, the default): ``lr`` is the Adam/AdamW
learning rate :math:`\eta` at the base width :math:`H_0` = ``lr_base_width`` (default 64); the
matrices whose fan-in is :math:`H` (hidden-to-hidden, gate-on-h and readout weights,
:meth:`RNNModel.width_scaled`) get :math:`\eta H_0 / H`, input weights and biases :math:`\eta`:
the maximal-update parametrisation's rule for Adam (Yang et al. 2021, "Tensor Programs V", arXiv
2203.03466, Table 3), which keeps the per-step change of each pre-activation O(1) as H grows.
With a width-independent lr AdamW saturates the gates at H = 1024 (measured: lr 3e-3 never
learns, 3e-4 does; the rule gives 1.9e-4). SGD is not scaled (``lr`` as given).
``lr_scaling = "none"``: one lr for all. Gradient clipping (max norm ``clip``, default 1) is on
by default.

``longmem`` task: chunk s of the streams is the batch of step s; the network's hidden state
(and the teacher's) is carried from chunk to chunk, detached: truncated backpropagation
through time over one chunk. Both states are in the checkpoint.

Windowed first-order transport time scale (``window_lags = (lo, hi, n)``, leaky models, the
anti-collapse paper's time scale): per unit :math:`q`, over every window of :math:`\ell` steps
inside the probe window,

.. math::

    \mu = \mu_0 + \mu_1, \qquad \mu_0 = \prod_p r_p, \qquad
    \mu_1 = \mu_0 \sum_p \frac{r^\mathrm{diag}_p}{r_p}, \qquad
    m_q(\ell) = \operatorname{mean}_{b,t} \log\max(|\mu|, 10^{-30}),

with the leak :math:`r` (the retention) clamped to :math:`[10^{-12}, 1]` and
:math:`r^\mathrm{diag}` = :attr:`Trace.rdiag` (the one-step Jacobian diagonal minus the
retention), on the integer lags ``int(linspace(lo, hi, n))`` (:func:`window_lag_grid`).
:math:`m_q(\ell)` is fitted by least squares as :math:`a_q + b_q \ell`; then
:math:`\zeta^\mathrm{window}_q = \log(-b_q)` (``zeta_window``; :math:`\tau = -1/b_q`), NaN where
:math:`b_q \ge 0` (counted in ``window_masked``). :func:`window_zeta`.

Epoch-based task (``lagged``): the batch of step s is rows :meth:`Task.epoch_indices` of the
fixed training set; with ``record_epochs = E`` the records are at step 0, after epoch 1,
after every E-th epoch and at the last step (instead of every ``record_every`` steps).

Every random number is a function of ``seed`` (model init), ``(seed, step)`` (training batch,
forcing) or ``seed`` (probe batch), so a run is reproducible from its config, and a resumed
run continues exactly as the uninterrupted run would (on CPU).
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, fields

import numpy as np

from levysde import __version__
from levysde.core.memory import available_memory
from levysde.core.validate import check_bool, check_choice, check_int, check_real
from levysde.io.runfile import check_writable, checkpoint_path, read_run, save_run
from levysde.rnn._torch import torch
from levysde.rnn.checkpoint import load_checkpoint, save_checkpoint
from levysde.rnn.fast import GraphStep
from levysde.rnn.forcing import SlowModeForcing, initial_slow_mask, slow_mask_from_zeta
from levysde.rnn.models import INITS, MODELS, TAU0_MAX, TAU0_MIN, TAU0_WHY, RNNModel, build_model
from levysde.rnn.tasks import (
    ALPHA_MIN_FLOAT32,
    ALPHA_MIN_WHY,
    STREAM_NOISE,
    STREAM_PROBE,
    STREAM_TRAIN,
    TASKS,
    Task,
    build_task,
    sas_noise,
    stream_generator,
)
from levysde.rnn.teacher import trivial_loss

__all__ = ["TrainConfig", "TrainingDiverged", "train", "record_stats", "lambda_rayleigh", "integer_lag_grid",
           "elr_envelope"]

OPTIMIZERS = ("sgd", "adam", "adamw")
_LAGGED_FIELDS = ("lag_mode", "lag_count", "lag_lo", "lag_hi", "lag_alpha", "input_dim", "n_train")
_PAPER_FIELDS = ("record_epochs", "gate_tau0", "window_lags")
_FORCING_FIELDS = ("slow_forcing_alpha", "slow_forcing_scale", "slow_forcing_q", "slow_forcing_taper")
LR_SCALINGS = ("mup", "none")
INJECT_TARGETS = ("recurrent", "gate")
#: floor of mu_bar_q (per step): zeta >= log(1e-12) ~ -27.6
MU_FLOOR = 1e-12
#: floor of |J_t^(qq)| before the log
JAC_FLOOR = 1e-30
#: a retention within this of 0 or 1 counts as saturated (diagnostic only)
SAT_TOL = 1e-6
#: a probe loss above this multiple of the trivial predictor's loss is a diverged run
DIVERGED_RATIO = 1e6
#: largest envelope lag: lags are integers held exactly in float64
MAX_LAG = 2 ** 53


class TrainingDiverged(RuntimeError):
    """The training diverged: a loss, parameter, Lambda or envelope became NaN/inf.

    Raised by :func:`train` (and returned per seed by :func:`levysde.rnn.batched.train_seeds`);
    the records written so far are kept in the run file. A RuntimeError.

    Examples
    --------
    >>> try:
    ...     elr_envelope(np.zeros(2), np.array([np.nan, 1.0]), np.array([1.0]))
    ... except TrainingDiverged as e:
    ...     print(str(e)[:39])
    optimizer amplitudes Lambda_q unusable
    """


@dataclass
class TrainConfig:
    """Everything that defines a run (stored as JSON in the run file's ``config``).

    Every field has a default; :meth:`validate` checks them all and names the first bad one.

    Attributes
    ----------
    model : str
        One of :data:`~levysde.rnn.models.MODELS` (default ``diaggate``).
    hidden : int
        H, the units, >= 1 (default 64).
    optimizer : str
        ``sgd``, ``adam`` or ``adamw`` (default).
    lr : float
        The learning rate, > 0, at width ``lr_base_width`` (default 3e-3).
    lr_scaling : str
        ``mup`` (default: the Adam lr of H-fan-in matrices times ``lr_base_width / H``;
        module docstring) or ``none``.
    lr_base_width : int
        H0 >= 1 of the width scaling (default 64).
    weight_decay : float or None
        >= 0; None: the optimizer's default (AdamW 0.01, else 0).
    gate_decay : bool
        False: no weight decay on retention-gate parameters (default True).
    clip : float or None
        The largest gradient norm, > 0 (default 1), or None (off).
    task : str
        ``powerlaw`` (default), ``delay``, ``adding``, ``longmem`` or ``lagged``
        (:mod:`levysde.rnn.tasks`).
    seq_len : int
        T, steps per sequence, >= 2 (default 200).
    loss_from : int or None
        First step of the loss window (None: T // 2; lagged: 0).
    delay, p, kernel, input_alpha, n_mem, mem_lag_max, mem_gamma
        Task parameters (:func:`levysde.rnn.tasks.build_task`).
    target_noise : float or None
        The targets' noise, >= 0; None: 0.3 for ``lagged`` (the paper's), else 0.
    lag_mode, lag_count, lag_lo, lag_hi, lag_alpha, input_dim, n_train
        The ``lagged`` task (``lag_mode`` ``pareto`` or ``fixed``; :func:`levysde.rnn.tasks.build_task`).
    record_epochs : int or None
        E >= 1: records every E epochs (epoch-based task only); None: every ``record_every`` steps.
    gate_tau0 : float or None
        T0 in [0.1, 1e5] steps (float32 gates; :data:`levysde.rnn.models.TAU0_MAX`): every unit
        starts at time scale T0 (:func:`levysde.rnn.models.build_model`).
    window_lags : tuple or None
        ``(lo, hi, n)``: record ``zeta_window`` (leaky models; module docstring).
    batch : int
        Training sequences per step, >= 1 (default 32).
    probe_batch : int or None
        Probe sequences of a record, >= 1 (None: ``batch``).
    steps : int
        Optimizer steps, >= 0 (default 1000).
    record_every : int
        Steps between records, >= 1 (default 50).
    seed : int
        The run seed, >= 0: fixes the init, every batch and the forcing.
    init : str
        ``default`` or ``chrono``.
    t_max : float or None
        The chrono init's longest time scale, > 2 (None: ``seq_len``).
    gate_a : float
        ConstGate's constant, in (0, 1) (default 0.1).
    inject_alpha : float or None
        Injected forcing's stability index, in [0.5, 2] (float32: ALPHA_MIN_FLOAT32); None: off.
    inject_scale : float
        Its scale, >= 0.
    inject_target : str
        ``recurrent`` (hidden-to-hidden weights) or ``gate`` (retention-gate parameters).
    slow_forcing_alpha : float or None
        Slow-mode forcing's index, in (0, 2] (:mod:`levysde.rnn.forcing`; leaky models, needs
        ``window_lags``); None: off.
    slow_forcing_scale, slow_forcing_q, slow_forcing_taper : float
        sigma / RMS(update) > 0 (1), the slow units' quantile in (0, 1) (0.1), the taper c > 0
        (100).
    n_lags, lag_max : int
        The envelope's integer log grid: ``n_lags`` >= 2 points from 1 to ``lag_max`` (40, 10000).
    transport : bool
        Also record the measured transport (default False).
    device : str
        ``cpu`` (default) or ``cuda``.
    threads : int or None
        torch's thread count, >= 1; None: leave torch's setting.
    fast : bool
        Replay each training step from a CUDA graph (:mod:`levysde.rnn.fast`; leaky models;
        CPU: eager).
    layernorm : bool
        LayerNorm before tanh (leaky models; the learnability paper's; omitted from the config
        when off).

    Examples
    --------
    >>> cfg = TrainConfig(model="constgate", hidden=4, task="delay", seq_len=8).validate()
    >>> cfg.make_task().name, cfg.resolved_noise(), cfg.to_dict()["hidden"]
    ('delay', 0.0, 4)
    >>> try:
    ...     TrainConfig(hidden=0).validate()
    ... except ValueError as e:
    ...     print(str(e)[:6])
    hidden
    """

    model: str = "diaggate"
    hidden: int = 64
    optimizer: str = "adamw"
    lr: float = 3e-3
    lr_scaling: str = "mup"
    lr_base_width: int = 64
    weight_decay: float | None = None
    gate_decay: bool = True
    clip: float | None = 1.0
    task: str = "powerlaw"
    seq_len: int = 200
    loss_from: int | None = None
    delay: int = 5
    p: float = 1.0
    kernel: int = 0
    target_noise: float | None = None
    input_alpha: float | None = None
    n_mem: int = 16
    mem_lag_max: int = 10000
    mem_gamma: float = 0.0
    lag_mode: str = "pareto"
    lag_count: int = 16
    lag_lo: int = 8
    lag_hi: int = 640
    lag_alpha: float = 0.6
    input_dim: int = 16
    n_train: int = 8000
    record_epochs: int | None = None
    gate_tau0: float | None = None
    window_lags: tuple | list | None = None
    batch: int = 32
    probe_batch: int | None = None
    steps: int = 1000
    record_every: int = 50
    seed: int = 0
    init: str = "default"
    t_max: float | None = None
    gate_a: float = 0.1
    inject_alpha: float | None = None
    inject_scale: float = 0.0
    inject_target: str = "recurrent"
    slow_forcing_alpha: float | None = None
    slow_forcing_scale: float = 1.0
    slow_forcing_q: float = 0.1
    slow_forcing_taper: float = 100.0
    n_lags: int = 40
    lag_max: int = 10000
    transport: bool = False
    device: str = "cpu"
    threads: int | None = None
    fast: bool = False
    layernorm: bool = False

    def validate(self) -> TrainConfig:
        """Raise ValueError naming the first bad field and its allowed range
        (:mod:`levysde.core.validate`); integer fields become Python ints. Returns self."""
        def optional(check, name, *args, **kw):
            if getattr(self, name) is not None:
                check(name, getattr(self, name), *args, **kw)

        def integer(name, lo, hi=None, why=""):
            if getattr(self, name) is not None:
                setattr(self, name, check_int(name, getattr(self, name), lo, hi, why=why))

        check_choice("model", self.model, MODELS)
        integer("hidden", 1)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        check_real("lr", self.lr, 0.0, lo_open=True)
        check_choice("lr_scaling", self.lr_scaling, LR_SCALINGS)
        integer("lr_base_width", 1)
        optional(check_real, "weight_decay", 0.0)
        check_bool("gate_decay", self.gate_decay)
        optional(check_real, "clip", 0.0, lo_open=True)
        check_choice("task", self.task, TASKS)
        self.target_noise = self.resolved_noise()
        integer("batch", 1)
        integer("probe_batch", 1)
        integer("steps", 0)
        integer("record_every", 1)
        integer("seed", 0, 2 ** 32 - 1)
        check_choice("init", self.init, INITS)
        optional(check_real, "t_max", 2.0, lo_open=True)
        check_real("gate_a", self.gate_a, 0.0, 1.0, lo_open=True, hi_open=True)
        optional(check_real, "inject_alpha", ALPHA_MIN_FLOAT32, 2.0, why=ALPHA_MIN_WHY)
        check_real("inject_scale", self.inject_scale, 0.0)
        check_choice("inject_target", self.inject_target, INJECT_TARGETS)
        integer("lag_max", 2, MAX_LAG, why="lags are exact float64 integers")
        integer("n_lags", 2, self.lag_max, why="distinct integer lags up to lag_max")
        check_bool("transport", self.transport)
        check_choice("device", self.device, ("cpu", "cuda"))
        integer("threads", 1)
        if check_bool("fast", self.fast) and self.model not in ("constgate", "sharedgate", "diaggate"):
            raise ValueError(f"fast must be False for GRU/LSTM (they already run torch's fused cuDNN "
                             f"kernels); got model {self.model!r}")
        task = self.make_task()  # validates the task's fields
        self._validate_paper(task)
        if check_bool("layernorm", self.layernorm) and self.model not in ("constgate", "sharedgate", "diaggate"):
            raise ValueError(f"layernorm needs a leaky model (constgate, sharedgate, diaggate), got {self.model!r}")
        return self

    def _validate_paper(self, task: Task) -> None:
        """The options of the anti-collapse paper's protocol (epochs, tau0 init, windowed zeta)."""
        for k in ("lag_count", "lag_lo", "lag_hi", "input_dim", "n_train"):
            setattr(self, k, int(getattr(self, k)))
        if task.epoch_based:
            check_int("batch", self.batch, 1, self.n_train, why="at most n_train, the training set")
            if self.fast and self.n_train % self.batch:
                raise ValueError(f"fast needs batch to divide n_train (a CUDA graph has one batch shape); "
                                 f"got batch {self.batch}, n_train {self.n_train}")
        if self.record_epochs is not None:
            if not task.epoch_based:
                raise ValueError(f"record_epochs needs an epoch-based task (lagged), got task {self.task!r}")
            self.record_epochs = check_int("record_epochs", self.record_epochs, 1)
        if self.gate_tau0 is not None:
            check_real("gate_tau0", self.gate_tau0, TAU0_MIN, TAU0_MAX, why=TAU0_WHY)
            if self.init != "default":
                raise ValueError(f"gate_tau0 needs init 'default' (it sets the gates itself), got {self.init!r}")
        if self.window_lags is not None:
            self.window_lags = [int(v) for v in window_lag_params(self.window_lags, task.seq_len - task.loss_from)]
            if self.model not in ("constgate", "sharedgate", "diaggate"):
                raise ValueError(f"window_lags needs a leaky model (constgate, sharedgate, diaggate; "
                                 f"its rdiag is defined for the leaky cell), got model {self.model!r}")
        if self.slow_forcing_alpha is not None:
            check_real("slow_forcing_alpha", self.slow_forcing_alpha, 0.0, 2.0, lo_open=True)
            check_real("slow_forcing_scale", self.slow_forcing_scale, 0.0, lo_open=True, why="times RMS(update)")
            check_real("slow_forcing_q", self.slow_forcing_q, 0.0, 1.0, lo_open=True, hi_open=True)
            check_real("slow_forcing_taper", self.slow_forcing_taper, 0.0, lo_open=True)
            if self.model not in ("constgate", "sharedgate", "diaggate"):
                raise ValueError(f"slow_forcing_alpha needs a leaky model (constgate, sharedgate, diaggate), "
                                 f"got model {self.model!r}")
            if self.window_lags is None:
                raise ValueError("slow_forcing_alpha needs window_lags: the slow units are chosen from zeta_window")

    def resolved_noise(self) -> float:
        """``target_noise``, with None read as 0.3 for ``lagged`` (the paper's) and 0 otherwise."""
        if self.target_noise is None:
            return 0.3 if self.task == "lagged" else 0.0
        return self.target_noise

    def make_task(self) -> Task:
        return build_task(self.task, self.seq_len, loss_from=self.loss_from, delay=self.delay,
                          p=self.p, kernel=self.kernel, target_noise=self.resolved_noise(),
                          input_alpha=self.input_alpha, n_mem=self.n_mem, mem_lag_max=self.mem_lag_max,
                          mem_gamma=self.mem_gamma, lag_mode=self.lag_mode, lag_count=self.lag_count,
                          lag_lo=self.lag_lo, lag_hi=self.lag_hi, lag_alpha=self.lag_alpha,
                          input_dim=self.input_dim, n_train=self.n_train)

    def to_dict(self) -> dict:
        """The fields as a dict; the fields of the lagged task (other tasks) and the paper's
        options left at None are omitted, so other runs' configs are as before they existed."""
        d = asdict(self)
        for f in fields(self):
            if f.name == "layernorm" and not d[f.name] or f.name in _PAPER_FIELDS and d[f.name] is None or \
                    f.name in _FORCING_FIELDS and self.slow_forcing_alpha is None or \
                    f.name in _LAGGED_FIELDS and self.task != "lagged" and d[f.name] == f.default:
                del d[f.name]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        """Rebuild from a run file's config (extra keys such as ``kind``, versions are ignored).
        A config written before width scaling existed (no ``lr_scaling``) rebuilds with
        ``lr_scaling = "none"``, which is how it was trained."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw.setdefault("lr_scaling", "none")
        return cls(**kw).validate()


# --------------------------------------------------------------------------------------
# pieces with independent tests
# --------------------------------------------------------------------------------------
def lambda_rayleigh(g: torch.Tensor, v_hat: torch.Tensor, lr: float, eps: float) -> float:
    r"""The optimizer amplitude :math:`\Lambda_q` of one neuron under Adam: a Rayleigh quotient.

    Parameters
    ----------
    g : torch.Tensor
        The gradient of the probe loss on the neuron's parameter rows (any shape).
    v_hat : torch.Tensor
        Adam's bias-corrected second moment on the same entries, >= 0, shaped like ``g``.
    lr : float
        The learning rate, > 0.
    eps : float
        Adam's :math:`\epsilon`, > 0.

    Returns
    -------
    float
        :math:`\Lambda_q`, computed in float64.

    Notes
    -----
    With :math:`P = \operatorname{diag}\big(1 / (\sqrt{\hat v} + \epsilon)\big)`,

    .. math::

        \Lambda_q = \eta\, \frac{g^\top P g}{g^\top g},

    and :math:`\eta \operatorname{mean}(P)` when :math:`g = 0` (the quotient is undefined).

    References
    ----------
    The specification, §9 (:doc:`/specification`); D. P. Kingma, J. Ba, "Adam: a method for
    stochastic optimization", ICLR 2015.

    Examples
    --------
    >>> g = torch.tensor([1.0, 0.0])
    >>> v_hat = torch.tensor([0.25, 4.0])
    >>> round(lambda_rayleigh(g, v_hat, 1e-3, 0.0), 6)        # P = (2, 0.5): weight on the first
    0.002
    >>> round(lambda_rayleigh(torch.zeros(2), v_hat, 1e-3, 0.0), 6)
    0.00125
    """
    g2 = g.double() ** 2
    P = 1.0 / (torch.sqrt(v_hat.double()) + eps)
    den = g2.sum()
    if den == 0:
        return float(lr * P.mean())
    return float(lr * (g2 * P).sum() / den)


def neuron_lambda(model: RNNModel, optimizer: torch.optim.Optimizer, kind: str) -> np.ndarray:
    """Lambda_q for all H neurons, from the current ``.grad`` of the model and Adam's state
    (module docstring; each tensor with its own group's lr, eps and beta2).

    Returns float64 (H,). SGD: the lr of the first neuron tensor's group everywhere.
    Raises TrainingDiverged if Adam's second moment of a neuron tensor is not finite."""
    H = model.hidden
    group_of = {id(p): g for g in optimizer.param_groups for p in g["params"]}
    if kind == "sgd":
        return np.full(H, float(group_of[id(model.neuron_rows()[0][0])]["lr"]))
    num = torch.zeros(H, dtype=torch.float64)
    den = torch.zeros(H, dtype=torch.float64)
    psum = torch.zeros(H, dtype=torch.float64)
    cnt = torch.zeros(H, dtype=torch.float64)
    for p, k in model.neuron_rows():
        grp = group_of[id(p)]
        lr, eps, beta2 = float(grp["lr"]), float(grp["eps"]), float(grp["betas"][1])
        g = (p.grad if p.grad is not None else torch.zeros_like(p)).detach().double().cpu()
        st = optimizer.state.get(p, {})
        if "exp_avg_sq" in st and float(st["step"]) > 0:
            v_hat = st["exp_avg_sq"].detach().double().cpu() / (1.0 - beta2 ** float(st["step"]))
        else:
            v_hat = g * g
        if not bool(torch.isfinite(v_hat).all()):
            raise TrainingDiverged("Adam's second moment is not finite (a gradient beyond float32 range "
                                   "froze the optimizer: its steps are 0, Lambda 0); lower --lr or keep --clip on")
        g2 = (g ** 2).reshape(k, H, -1)
        P = (lr / (torch.sqrt(v_hat) + eps)).reshape(k, H, -1)
        num += (g2 * P).sum((0, 2))
        den += g2.sum((0, 2))
        psum += P.sum((0, 2))
        cnt += k * P.shape[2]
    lam = torch.where(den > 0, num / torch.where(den > 0, den, 1.0), psum / cnt)
    return lam.numpy()


def integer_lag_grid(n_lags: int, lag_max: int) -> np.ndarray:
    """Exactly ``n_lags`` distinct integer lags from 1 to ``lag_max``, close to a log grid, float64.

    ``round(geomspace(1, lag_max, n_lags))`` repeats small integers; each repeat is moved to
    the next free integer (and the top end is kept at ``lag_max``), so the grid is linear
    (1, 2, 3, ...) where the log spacing is below 1 and logarithmic above.

    Parameters
    ----------
    n_lags : int
        The number of lags, in [2, lag_max].
    lag_max : int
        The largest lag, in [2, 2^53] (exact in float64).

    Returns
    -------
    numpy.ndarray
        float64 (n_lags,): increasing integers, the first 1, the last ``lag_max``.

    Raises
    ------
    ValueError
        Unless 2 <= n_lags <= lag_max <= MAX_LAG = 2^53 (naming ``n_lags`` or ``lag_max``).

    Examples
    --------
    >>> integer_lag_grid(6, 100).tolist()
    [1.0, 3.0, 6.0, 16.0, 40.0, 100.0]
    >>> integer_lag_grid(5, 5).tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0]
    """
    lag_max = check_int("lag_max", lag_max, 2, MAX_LAG, why="exact in float64")
    n_lags = check_int("n_lags", n_lags, 2, lag_max, why="at most lag_max")
    lags = np.round(np.geomspace(1.0, lag_max, n_lags)).astype(np.int64)
    lags[0], lags[-1] = 1, lag_max
    for i in range(1, n_lags):               # strictly increasing
        lags[i] = max(lags[i], lags[i - 1] + 1)
    lags[-1] = lag_max
    for i in range(n_lags - 2, -1, -1):      # ... and at most lag_max (n_lags <= lag_max keeps lags[0] = 1)
        lags[i] = min(lags[i], lags[i + 1] - 1)
    return lags.astype(np.float64)


def elr_envelope(mu_bar: np.ndarray, lam: np.ndarray, lags: np.ndarray) -> np.ndarray:
    r"""The ELR envelope :math:`f(\ell)` of one record (docs/specification.md §9).

    Parameters
    ----------
    mu_bar : numpy.ndarray
        (H,): :math:`\bar\mu_q \ge 0`, each unit's mean :math:`-\log r`.
    lam : numpy.ndarray
        (H,): the optimizer amplitudes :math:`\Lambda_q \ge 0` (:func:`lambda_rayleigh`).
    lags : numpy.ndarray
        (n_lags,): the lags :math:`\ell`.

    Returns
    -------
    numpy.ndarray
        float64 (n_lags,): :math:`f(\ell)`, in [0, 1].

    Raises
    ------
    TrainingDiverged
        With the cause, unless every :math:`\Lambda_q` is finite and >= 0 with a positive
        sum and :math:`\bar\mu` is finite: a non-finite envelope is never returned.

    Notes
    -----
    .. math::

        f(\ell) = \frac{\sum_q \Lambda_q\, e^{-\ell \bar\mu_q}}{\sum_q \Lambda_q}.

    References
    ----------
    The specification, §9 (:doc:`/specification`).

    Examples
    --------
    >>> np.round(elr_envelope(np.array([0.1, 1.0]), np.array([1.0, 3.0]), np.array([1.0, 10.0])), 6).tolist()
    [0.502119, 0.092004]
    """
    lam = np.asarray(lam, dtype=np.float64)
    if not (np.all(np.isfinite(lam)) and np.all(lam >= 0) and lam.sum() > 0):
        bad = int(np.sum(~(np.isfinite(lam) & (lam > 0))))
        raise TrainingDiverged(f"optimizer amplitudes Lambda_q unusable for the envelope: {bad} of "
                               f"{lam.size} not finite and > 0 (sum {lam.sum():.3g}); lower --lr or keep --clip on")
    if not np.all(np.isfinite(mu_bar)):
        raise TrainingDiverged("non-finite retention statistics (mu_bar) for the envelope")
    w = lam / lam.sum()
    return np.exp(-np.outer(lags, mu_bar)) @ w


def record_stats(model: RNNModel, task: Task, x: torch.Tensor, y: torch.Tensor,
                 optimizer: torch.optim.Optimizer, kind: str, lags: np.ndarray,
                 transport: bool = False, window_lags: np.ndarray | None = None) -> dict:
    r"""One record on the probe batch ``(x, y)`` (module docstring).

    Leaves ``.grad`` zeroed and the model in training mode (cuDNN's GRU/LSTM backward, used
    for :math:`\Lambda_q`, needs it).

    Parameters
    ----------
    model : RNNModel
        The model being trained.
    task : Task
        Its task (the loss window).
    x, y : torch.Tensor
        The probe batch, (B, T, n_in) and (B, T, n_out), on the model's device.
    optimizer : torch.optim.Optimizer
        The run's optimizer (its learning rates and Adam state give :math:`\Lambda_q`).
    kind : str
        The optimizer's name: ``sgd``, ``adam`` or ``adamw``.
    lags : numpy.ndarray
        (n_lags,): the envelope's lags (:func:`integer_lag_grid`).
    transport : bool, optional
        Also the measured transport (default False).
    window_lags : numpy.ndarray or None, optional
        The windowed time scale's lags (:func:`window_lag_grid`; leaky models); None: not recorded.

    Returns
    -------
    dict
        numpy values: ``zeta``, ``zeta_jac``, ``Lambda`` (H,), ``loss``, ``envelope``
        (n_lags,), ``zeta_clips``, ``jac_masked``, ``jac_clips``, ``saturated``; with
        ``transport``: ``transport`` (n_lags,); with ``window_lags``: ``zeta_window`` (H,),
        ``window_masked`` (:func:`window_zeta`).

    Raises
    ------
    TrainingDiverged
        If the probe loss, :math:`\bar\mu`, the Jacobian or :math:`\Lambda` is not finite.

    Notes
    -----
    :math:`\zeta_q = \log \bar\mu_q` with :math:`\bar\mu_q = \operatorname{mean}_{b,\, t \ge t_0}(-\log r^{(q)}_t)`,
    and the envelope

    .. math::

        f(\ell) = \frac{\sum_q \Lambda_q\, e^{-\ell \bar\mu_q}}{\sum_q \Lambda_q}.

    References
    ----------
    The specification, §9 (:doc:`/specification`).

    Examples
    --------
    >>> from levysde.rnn.models import build_model
    >>> from levysde.rnn.tasks import build_task
    >>> m = build_model("diaggate", 1, 4, 1, seed=0)
    >>> task = build_task("delay", 8, delay=2)
    >>> x, y = task.batch(4, 0, 1, 0)
    >>> opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    >>> r = record_stats(m, task, x, y, opt, "adamw", integer_lag_grid(5, 100))
    >>> r["zeta"].shape, r["envelope"].shape, bool(r["envelope"][0] <= 1.0)
    ((4,), (5,), True)
    """
    model.train()
    with np.errstate(all="ignore"):  # divergence is detected and reported, not warned about
        return _record_stats(model, task, x, y, optimizer, kind, lags, transport, window_lags)


#: most entries (sequences x steps x units) of one block of a record (:func:`record_rows`)
RECORD_ENTRIES = 2 ** 25


def record_rows(batch: int, seq_len: int, hidden: int) -> int:
    """Sequences per block of a record: ``max(1, RECORD_ENTRIES // (seq_len * hidden))``, at most
    ``batch`` (a function of the config only, so a record is the same on every machine)."""
    return max(1, min(int(batch), RECORD_ENTRIES // max(1, int(seq_len) * int(hidden))))


def _record_stats(model, task, x, y, optimizer, kind, lags, transport, window_lags=None):
    optimizer.zero_grad(set_to_none=True)
    B = x.shape[0]
    rows = record_rows(B, x.shape[1], model.hidden)
    blocks = [(b0, min(B, b0 + rows)) for b0 in range(0, B, rows)]
    loss_total = 0.0
    for b0, b1 in blocks:                  # the probe loss's gradient, accumulated over the blocks
        loss = task.loss(model(x[b0:b1]), y[b0:b1])
        lv = float(loss.detach())
        if not math.isfinite(lv):
            raise TrainingDiverged(f"probe loss is {lv}; lower --lr or keep --clip on")
        share = (b1 - b0) / B
        (loss if len(blocks) == 1 else loss * share).backward()
        loss_total += lv * share
    lam = neuron_lambda(model, optimizer, kind)
    optimizer.zero_grad(set_to_none=True)
    t0 = task.loss_from
    H = model.hidden
    nlr_sum = torch.zeros(H, dtype=torch.float64, device=x.device)
    logj_sum = torch.zeros(H, dtype=torch.float64, device=x.device)
    jac_clips, n_sat, n_ent = 0, 0, 0
    trans = m_window = None
    for b0, b1 in blocks:                  # the traced statistics, block by block
        tr = model.trace(x[b0:b1], rdiag=True) if window_lags is not None else model.trace(x[b0:b1])
        nlr = tr.neg_log_r[:, t0:].double()
        nlr_sum += nlr.sum((0, 1))
        aj = tr.jac[:, t0:].double().abs()
        jac_clips += int((aj < JAC_FLOOR).sum())
        logj_sum += (-torch.log(torch.clamp(aj, min=JAC_FLOOR))).sum((0, 1))
        r = tr.r[:, t0:]
        n_sat += int(((r < SAT_TOL) | (r > 1 - SAT_TOL)).sum())
        n_ent += r.numel()
        share = (b1 - b0) / B
        if transport:
            tb = share * measured_transport(nlr, lam, lags)
            trans = tb if trans is None else trans + tb
        if window_lags is not None:
            mb = share * window_log_means(nlr, tr.rdiag[:, t0:], window_lags)
            m_window = mb if m_window is None else m_window + mb
        del tr, nlr, aj, r
    count = B * (x.shape[1] - t0)
    mu = (nlr_sum / count).cpu().numpy()
    if not np.all(np.isfinite(mu)):
        raise TrainingDiverged("non-finite retention statistics (mu_bar) on the probe batch")
    zeta_clips = int((mu < MU_FLOOR).sum())
    mu = np.maximum(mu, MU_FLOOR)
    mu1 = (logj_sum / count).cpu().numpy()
    if np.any(np.isnan(mu1)):
        raise TrainingDiverged("non-finite Jacobian diagonal on the probe batch")
    masked = ~(mu1 > 0)
    zeta_jac = np.full(mu1.shape, np.nan)
    zeta_jac[~masked] = np.log(mu1[~masked])
    out = dict(zeta=np.log(mu), zeta_jac=zeta_jac, Lambda=lam, loss=loss_total,
               envelope=elr_envelope(mu, lam, lags), zeta_clips=zeta_clips,
               jac_masked=int(masked.sum()), jac_clips=jac_clips, saturated=n_sat / max(n_ent, 1))
    if transport:
        out["transport"] = trans
    if window_lags is not None:
        zw = window_fit(window_lags, m_window)
        if not np.all(np.isfinite(zw) | np.isnan(zw)):
            raise TrainingDiverged("non-finite windowed transport on the probe batch")
        out["zeta_window"], out["window_masked"] = zw, int(np.isnan(zw).sum())
    return out


def measured_transport(neg_log_r: torch.Tensor, lam: np.ndarray, lags: np.ndarray) -> np.ndarray:
    r""":math:`\Lambda`-weighted :math:`\langle \prod_{k=0}^{l-1} r_{t-k} \rangle` over batch and window start, per lag.

    ``neg_log_r``: (B, Tw, H) float64 over the probe window. NaN for lags > Tw."""
    B, Tw, H = neg_log_r.shape
    S = torch.cat([neg_log_r.new_zeros(B, 1, H), neg_log_r.cumsum(1)], 1)  # (B, Tw+1, H)
    w = torch.as_tensor(lam / lam.sum(), dtype=torch.float64, device=neg_log_r.device)
    out = np.full(len(lags), np.nan)
    for i, l in enumerate(lags.astype(int)):
        if l > Tw:
            break
        prod = torch.exp(-(S[:, l:] - S[:, :-l]))  # (B, Tw-l+1, H)
        out[i] = float(prod.mean((0, 1)) @ w)
    return out


def window_lag_params(window_lags, window: int) -> tuple[int, int, int]:
    """Validated ``(lo, hi, n)`` of the windowed-zeta lag grid (:func:`window_lag_grid`):
    integers with ``1 <= lo < hi <= window`` (the probe window's length, so every lag has a
    window) and ``2 <= n <= hi - lo + 1`` (distinct integer lags). Raises ValueError."""
    vals = list(window_lags) if isinstance(window_lags, (list, tuple)) else None
    if vals is None or len(vals) != 3:
        raise ValueError(f"window_lags must be three integers (lo, hi, n), got {window_lags!r}")
    lo = check_int("window_lags lo", vals[0], 1)
    if lo >= window:
        raise ValueError(f"window_lags lo must be below the probe window's {window} steps (seq_len - loss_from); "
                         f"got {lo}")
    hi = check_int("window_lags hi", vals[1], lo + 1, window,
                   why=f"above lo and at most the probe window's {window} steps")
    n = check_int("window_lags n", vals[2], 2, hi - lo + 1, why="distinct integer lags in [lo, hi]")
    return lo, hi, n


def window_lag_grid(lo: int, hi: int, n: int) -> np.ndarray:
    """``int(linspace(lo, hi, n))`` (truncated, as the paper's code), int64 (n,); distinct for
    ``n <= hi - lo + 1``. The paper's grid is (64, 384, 32)."""
    return np.linspace(lo, hi, n).astype(np.int64)


#: clamps of the windowed transport: leak to [LEAK_FLOOR, 1], |mu0 + mu1| to >= MU_WINDOW_FLOOR
LEAK_FLOOR, MU_WINDOW_FLOOR = 1e-12, 1e-30


def window_log_means(neg_log_r: torch.Tensor, rdiag: torch.Tensor, lags: np.ndarray,
                     chunk: int = 2 ** 24) -> np.ndarray:
    """``m (n_lags, H)``: per lag and unit, the mean over (b, t) of ``log max(|mu0 + mu1|, 1e-30)``
    on every window of ``l`` steps (module docstring), in float64, accumulated over batch blocks of
    about ``chunk`` entries. ``neg_log_r``, ``rdiag``: (B, Tw, H); ``lags`` integers in [1, Tw]."""
    B, Tw, H = neg_log_r.shape
    leak = torch.clamp(torch.exp(-neg_log_r.double()), LEAK_FLOOR, 1.0)
    zero = leak.new_zeros(B, 1, H)
    cs_log = torch.cat([zero, torch.log(leak).cumsum(1)], 1)
    cs_ratio = torch.cat([zero, (rdiag.double() / leak).cumsum(1)], 1)
    del leak
    m = np.zeros((len(lags), H))
    rows = max(1, chunk // max(1, Tw * H))
    for i, lag in enumerate(np.asarray(lags, dtype=np.int64).tolist()):
        total = cs_log.new_zeros(H)
        for b0 in range(0, B, rows):
            lc, rc = cs_log[b0:b0 + rows], cs_ratio[b0:b0 + rows]
            mu = torch.exp(lc[:, lag:] - lc[:, :-lag]) * (1.0 + rc[:, lag:] - rc[:, :-lag])
            total += torch.log(torch.clamp(mu.abs(), min=MU_WINDOW_FLOOR)).sum((0, 1))
        m[i] = (total / (B * (Tw - lag + 1))).cpu().numpy()
    return m


def window_fit(lags: np.ndarray, m: np.ndarray) -> np.ndarray:
    r"""``zeta`` (H,) = :math:`\log(-\mathrm{slope})` of the least-squares line through :math:`(l, m_q(l))` for each
    unit (``m`` (n_lags, H) from :func:`window_log_means`); NaN where the slope is >= 0."""
    ell = np.asarray(lags, dtype=np.float64)
    dl = ell - ell.mean()
    slope = dl @ (m - m.mean(0)) / (dl @ dl)
    zeta = np.full(slope.shape, np.nan)
    ok = slope < 0
    zeta[ok] = np.log(-slope[ok])
    return zeta


def window_zeta(neg_log_r: torch.Tensor, rdiag: torch.Tensor, lags: np.ndarray,
                chunk: int = 2 ** 24) -> tuple[np.ndarray, np.ndarray]:
    """Windowed first-order transport time scale (module docstring).

    ``neg_log_r``, ``rdiag``: (B, Tw, H) over the probe window (``-log r`` and the first-order
    Jacobian correction); ``lags`` integers in [1, Tw]. Returns ``(zeta (H,), m (n_lags, H))``:
    ``m`` from :func:`window_log_means`, zeta from :func:`window_fit`."""
    m = window_log_means(neg_log_r, rdiag, lags, chunk)
    return window_fit(lags, m), m


def exact_window_zeta(jac: torch.Tensor, lags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The windowed time scale of the exact diagonal transport, the reference of :func:`window_zeta`.

    ``jac``: (B, Tw, H) one-step Jacobian diagonals J_t^(qq) over the probe window
    (:attr:`Trace.jac`). ``m_q(l)`` = mean over (b, t) of ``log |prod_{p in window} J_pp|`` (sums of
    ``log max(|J|, 1e-300)`` in float64), fitted as :func:`window_fit` does. Returns
    ``(zeta (H,), m (n_lags, H))``. Where the first-order expansion ``mu0 (1 + sum rdiag/leak)``
    of :func:`window_zeta` is poor (``|sum rdiag/leak|`` of order 1 within a window) the two
    differ: the first-order product grows linearly in the window length and reads as
    non-decaying (NaN) even for units whose exact product decays fast."""
    logj = torch.log(torch.clamp(jac.double().abs(), min=1e-300))
    cs = torch.cat([logj.new_zeros(logj.shape[0], 1, logj.shape[2]), logj.cumsum(1)], 1)
    m = np.stack([(cs[:, lag:] - cs[:, :-lag]).mean((0, 1)).cpu().numpy()
                  for lag in np.asarray(lags, dtype=np.int64).tolist()])
    return window_fit(lags, m), m


# --------------------------------------------------------------------------------------
# the loop, step by step
# --------------------------------------------------------------------------------------
def _make_optimizer(model: RNNModel, cfg: TrainConfig):
    """Optimizer, the list of ``(param, keep_mask, lr)`` whose decay is applied by hand (fused
    GRU/LSTM tensors whose gate rows are excluded from decay), and the weight decay.

    Parameter groups by (decayed?, width-scaled lr?): muP's ``lr * lr_base_width / H`` for
    :meth:`RNNModel.width_scaled` tensors with Adam/AdamW and ``lr_scaling = "mup"``."""
    wd = cfg.weight_decay if cfg.weight_decay is not None else (0.01 if cfg.optimizer == "adamw" else 0.0)
    scale = cfg.lr_scaling == "mup" and cfg.optimizer != "sgd"
    lr_hidden = cfg.lr * cfg.lr_base_width / cfg.hidden if scale else cfg.lr
    groups: dict[tuple[bool, bool], list] = {}
    manual = []
    for p in model.parameters():
        m = model.gate_mask(p)
        wide = model.width_scaled(p)
        decayed = cfg.gate_decay or m is False
        groups.setdefault((decayed, wide), []).append(p)
        if not decayed and m is not True:
            manual.append((p, ~m, lr_hidden if wide else cfg.lr))
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[cfg.optimizer]
    extra = {"capturable": True} if cfg.fast and cfg.device == "cuda" and cfg.optimizer != "sgd" else {}
    opt = cls([{"params": ps, "weight_decay": wd if decayed else 0.0, "lr": lr_hidden if wide else cfg.lr}
               for (decayed, wide), ps in sorted(groups.items(), key=lambda kv: (not kv[0][0], kv[0][1]))],
              lr=cfg.lr, **extra)
    return opt, manual, wd


def apply_manual_decay(manual, optimizer: str, lr: float | None, wd: float) -> None:
    """Weight decay on the non-gate rows of fused tensors, just before ``optimizer.step()``.

    ``manual``: ``(param, keep_mask, lr_param)`` from :func:`_make_optimizer`; ``lr`` (if not
    None) overrides every ``lr_param``. AdamW: decoupled, ``p <- p - lr * wd * p`` on those
    entries (what AdamW does before its update). SGD/Adam: coupled L2, ``grad <- grad + wd * p``."""
    if not manual or wd <= 0:
        return
    with torch.no_grad():
        for p, keep, lr_p in manual:
            if optimizer == "adamw":
                p.sub_((lr_p if lr is None else lr) * wd * p * keep)
            elif p.grad is not None:
                p.grad.add_(wd * p * keep)


_SCALAR_KEYS = ("loss", "train_loss", "loss_ratio", "zeta_clips", "jac_masked", "jac_clips", "saturated",
                "wall", "step")
_INT_KEYS = ("step", "zeta_clips", "jac_masked", "jac_clips", "window_masked")
_ROW_KEYS = {"zeta": "H", "zeta_jac": "H", "Lambda": "H", "envelope": "L", "transport": "L",
             "zeta_window": "H", "slow_mask": "H"}


def _records_to_arrays(rec: dict, lags: np.ndarray, H: int) -> dict:
    width = {"H": H, "L": len(lags)}
    arr = {"lags": lags}
    for k, v in rec.items():
        if k in _ROW_KEYS:
            arr[k] = np.array(v, dtype=np.float64).reshape(-1, width[_ROW_KEYS[k]])
        else:
            arr[k] = np.array(v, dtype=np.int64 if k in _INT_KEYS else np.float64)
    return arr


_RESUME_FREE = ("steps", "device", "threads", "fast")


def _config_diff(a: dict, b: dict) -> list[str]:
    """Config keys in which two run configs differ, beyond those a resume may change."""
    free = set(_RESUME_FREE) | {"torch_version", "levysde_version"}
    return sorted(k for k in set(a) | set(b)
                  if k not in free and json.dumps(a.get(k), sort_keys=True) != json.dumps(b.get(k), sort_keys=True))


def _check_run_file_matches(out: str, ckpt: str, ck_config: dict) -> None:
    """ValueError (one line) unless the run file ``out`` beside checkpoint ``ckpt``, when it exists,
    is the checkpoint's run: a checkpoint of another run (another ``hidden``, ``seed``, ...)
    copied or left beside it would otherwise replace the file's records on resume."""
    if not os.path.exists(out):
        return                       # killed before the first record: the checkpoint rebuilds it
    try:
        file_config = read_run(out, kinds=("rnn",))["config"]
    except ValueError as exc:
        raise ValueError(f"--resume: cannot check that {ckpt!r} belongs to the run file ({exc}); "
                         f"move the run file away to resume from the checkpoint alone") from None
    diff = _config_diff(file_config, ck_config)
    if diff:
        shown = ", ".join(f"{k}={file_config.get(k)!r} in the run file, {ck_config.get(k)!r} in the "
                          f"checkpoint" for k in diff[:3])
        raise ValueError(f"--resume: the checkpoint {ckpt!r} is not the checkpoint of run file {out!r}: "
                         f"their configs differ in {diff} ({shown}); nothing was changed")


def _records_to_tensors(rec: dict, lags: np.ndarray, H: int) -> dict:
    """Records as tensors (the checkpoint holds no numpy objects: ``weights_only`` loading)."""
    arr = _records_to_arrays(rec, lags, H)
    return {k: torch.from_numpy(np.ascontiguousarray(arr[k])) for k in rec}


def _records_from_tensors(t: dict, keys, H: int, n_lags: int) -> dict:
    """Inverse of :func:`_records_to_tensors`: lists of per-record numpy rows / scalars.
    Raises ValueError if a key is missing or the shapes disagree (R records: (R,) scalars,
    (R, H) neuron rows, (R, n_lags) envelope rows)."""
    missing = [k for k in keys if k not in t]
    if missing:
        raise ValueError(f"checkpoint records miss {missing}")
    R = int(t["step"].shape[0]) if t["step"].dim() == 1 else -1
    for k in keys:
        want = (R,) if k not in _ROW_KEYS else (R, H if _ROW_KEYS[k] == "H" else n_lags)
        if R < 0 or tuple(t[k].shape) != want:
            raise ValueError(f"checkpoint records are inconsistent: {k!r} has shape {tuple(t[k].shape)}, "
                             f"expected {want} ({R} records of step)")
    return {k: list(t[k].numpy()) for k in keys}


def full_config(cfg: TrainConfig, task: Task, lags: np.ndarray) -> dict:
    """The JSON config stored in the run file."""

    d = cfg.to_dict()
    d.update(kind="rnn", torch_version=str(torch.__version__), levysde_version=__version__,
             n_in=task.n_in, n_out=task.n_out, loss_from_resolved=task.loss_from,
             inject={"alpha": cfg.inject_alpha, "scale": cfg.inject_scale, "target": cfg.inject_target,
                     "on": cfg.inject_alpha is not None and cfg.inject_scale > 0},
             floors={"mu_bar": MU_FLOOR, "jac": JAC_FLOOR, "saturation": SAT_TOL})
    return d


def _available_memory(device: torch.device) -> int | None:
    """Free bytes on ``device``: CUDA ``mem_get_info``, else :func:`levysde.core.memory.available_memory`
    (None when unknown)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    return available_memory()


def memory_estimate(cfg: TrainConfig, task: Task) -> int:
    """Rough lower bound (bytes) of the memory a run needs: float32 weights with their
    gradient, two Adam moments and the init's temporaries (6 copies of ``k H^2`` recurrent
    weights, k = 1 ConstGate, 2 DiagGate, 3 GRU, 4 LSTM), plus the autograd tape of one
    forward pass (``B T H (k + 4)`` floats over the larger of a training batch and a block of the
    probe batch, :func:`record_rows`)."""
    H = cfg.hidden
    k = {"constgate": 1, "sharedgate": 1, "diaggate": 2, "gru": 3, "lstm": 4}[cfg.model]
    weights = 6 * 4 * (k * H * (H + task.n_in + 2) + H * task.n_out)
    pb = cfg.probe_batch or cfg.batch
    tape = 4 * max(cfg.batch * task.seq_len, record_rows(pb, task.probe_len, H) * task.probe_len) * H * (k + 4)
    if task.epoch_based:             # the stored training set (and the diagnostic set)
        tape += 4 * (task.n_train + pb) * task.seq_len * (task.n_in + 1)
    return int(weights + tape)


def _check_run_config(cfg: TrainConfig, task: Task, dev: torch.device) -> None:
    """Checks before anything is built (ValueError, one line)."""
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device 'cuda' requested but CUDA is not available (torch {torch.__version__})")
    if cfg.inject_alpha is not None and cfg.inject_scale > 0 and cfg.inject_target == "gate" \
            and cfg.model == "constgate":
        raise ValueError("inject_target 'gate' needs a trained gate; ConstGate's gate is fixed "
                         "(use inject_target 'recurrent')")
    need, avail = memory_estimate(cfg, task), _available_memory(dev)
    if avail is not None and need > avail:
        raise ValueError(f"hidden = {cfg.hidden} (model {cfg.model}, batch {cfg.batch}, seq_len "
                         f"{cfg.seq_len}) needs at least {need / 2**30:.3g} GiB of {cfg.device} memory but "
                         f"only {avail / 2**30:.3g} GiB are available; lower hidden, batch or seq_len")


class _Run:
    """The state of one training run: model, optimizer, records, step, carried stream states."""

    def __init__(self, cfg: TrainConfig, out: str | None):
        self.cfg, self.out = cfg, out
        self.task = task = cfg.make_task()
        self.dev = torch.device(cfg.device)
        _check_run_config(cfg, task, self.dev)
        if cfg.threads is not None:
            torch.set_num_threads(cfg.threads)
        self.lags = integer_lag_grid(cfg.n_lags, cfg.lag_max)
        t_max = cfg.t_max if cfg.t_max is not None else float(cfg.seq_len)
        self.model = build_model(cfg.model, task.n_in, cfg.hidden, task.n_out, init=cfg.init, t_max=t_max,
                                 gate_a=cfg.gate_a, seed=cfg.seed, gate_tau0=cfg.gate_tau0,
                                 layernorm=cfg.layernorm).to(self.dev)
        self.window_lags = None if cfg.window_lags is None else window_lag_grid(*cfg.window_lags)
        self.opt, self.manual, self.wd = _make_optimizer(self.model, cfg)
        self.config = full_config(cfg, task, self.lags)
        self.keys = ["zeta", "zeta_jac", "step", "Lambda", "loss", "loss_ratio", "train_loss", "envelope",
                     "zeta_clips", "jac_masked", "jac_clips", "saturated", "wall"] + \
            (["transport"] if cfg.transport else []) + \
            (["zeta_window", "window_masked"] if cfg.window_lags is not None else []) + \
            (["slow_mask"] if cfg.slow_forcing_alpha is not None else [])
        self.rec = {k: [] for k in self.keys}
        self.step, self.wall0, self.acc_loss, self.acc_n = 0, 0.0, 0.0, 0
        self.ckpt = checkpoint_path(out) if out else None
        self.x_probe, self.y_probe = task.batch(cfg.probe_batch or cfg.batch, cfg.seed, STREAM_PROBE, 0, self.dev)
        self.trivial = self._trivial_loss()
        self.teacher = task.teacher_init(cfg.batch, cfg.seed, STREAM_TRAIN) if task.streaming else None
        self.train_set = task.lagged_set(task.n_train, cfg.seed, STREAM_TRAIN, self.dev) \
            if task.epoch_based else None
        self.state = None  # the network's carried state (longmem)
        self.masks = self._inject_masks()
        self.forcing = None
        if cfg.slow_forcing_alpha is not None:
            self.forcing = SlowModeForcing([p for p, k in self.model.neuron_rows() if k == 1],
                                           cfg.slow_forcing_alpha, cfg.slow_forcing_scale,
                                           cfg.slow_forcing_taper, cfg.seed,
                                           initial_slow_mask(cfg.hidden, cfg.slow_forcing_q))
        self.fast = None
        if cfg.fast:

            self.fast = GraphStep(self._forward_loss, self._update, self.model, self.opt,
                                  capture=self.dev.type == "cuda")
        self.t_start = time.perf_counter()

    def _trivial_loss(self) -> float:
        """Population target variance (levysde.rnn.teacher.trivial_loss); for alpha-stable inputs the
        probe batch's mean squared deviation from the target's mean (0; adding has none)."""
        v = trivial_loss(self.config)
        if v is None:
            t0 = self.task.loss_from
            v = float((self.y_probe[:, t0:].double() ** 2).mean())
        return v

    def _inject_masks(self):
        cfg, masks = self.cfg, []
        if cfg.inject_alpha is not None and cfg.inject_scale > 0:
            for p in self.model.parameters():
                m = self.model.recurrent_mask(p) if cfg.inject_target == "recurrent" else self.model.gate_mask(p)
                if m is not False:
                    masks.append((p, None if m is True else m))
        return masks

    # --- checkpoint ---------------------------------------------------------------------
    def carry(self) -> dict:
        """The carried stream states as plain tensors (checkpoint entry ``carry``)."""
        c = {}
        if self.teacher is not None:
            c["teacher"] = self.teacher.clone()
        if self.state is not None:
            st = self.state if isinstance(self.state, tuple) else (self.state,)
            c["state"] = [s.detach().cpu().clone() for s in st]
        return c

    def save(self, wall: float) -> None:
        save_checkpoint(self.ckpt, {"model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
                                    "records": _records_to_tensors(self.rec, self.lags, self.cfg.hidden),
                                    "lags": torch.from_numpy(self.lags.copy()), "step": int(self.step),
                                    "wall": float(wall), "acc": [float(self.acc_loss), int(self.acc_n)],
                                    "carry": self.carry(),
                                    "config": json.loads(json.dumps(self.config))})  # plain types only
        save_run(self.out, self.arrays(), self.config)

    def check_new(self, force: bool) -> None:
        if self.out:
            check_writable(self.out, "output")
            if os.path.isdir(self.ckpt):
                raise ValueError(f"checkpoint {self.ckpt!r} is a directory")
            if os.path.exists(self.out) and not force:
                raise ValueError(f"output {self.out!r} exists; use --resume to continue it or --force to overwrite")

    def resume(self) -> None:
        """Load the checkpoint beside ``out`` (ValueError, one line, if it is missing, of another
        config, damaged or inconsistent)."""
        cfg, ckpt = self.cfg, self.ckpt
        if self.out:
            check_writable(self.out, "output")
        if not self.out or not os.path.exists(ckpt):
            raise ValueError(f"--resume: the checkpoint {ckpt!r} is missing; there is nothing to resume from")
        st = load_checkpoint(ckpt)
        old, config = st["config"], self.config
        _check_run_file_matches(self.out, ckpt, old)
        diff = [k for k in config if k not in _RESUME_FREE and k not in ("torch_version", "levysde_version")
                and json.dumps(old.get(k)) != json.dumps(config[k])]
        if diff:
            shown = ", ".join(f"{k}={old.get(k)!r} there, {config[k]!r} here" for k in diff[:3])
            raise ValueError(f"--resume: the checkpoint's config differs in {diff} ({shown}); "
                             f"only steps, device and threads may change")
        try:
            ck_lags = st["lags"].numpy()
            if not np.array_equal(ck_lags, self.lags):
                raise ValueError(f"its lag grid ({len(ck_lags)} lags) differs from this version's "
                                 f"({len(self.lags)} lags)")
            self.model.load_state_dict(st["model"])
            self.opt.load_state_dict(st["optimizer"])
            self.rec = _records_from_tensors(st["records"], self.keys, cfg.hidden, len(self.lags))
            self.step, self.wall0 = int(st["step"]), float(st["wall"])
            self.acc_loss, self.acc_n = float(st["acc"][0]), int(st["acc"][1])
            self._load_carry(st.get("carry") or {})
            if self.forcing is not None and self.rec["slow_mask"]:
                self.forcing.set_mask(np.asarray(self.rec["slow_mask"][-1]) > 0.5)
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign checkpoint: one line
            msg = (str(exc).strip().splitlines() or [""])[0][:160]
            raise ValueError(f"cannot resume from checkpoint {ckpt!r}: {type(exc).__name__}: {msg}") from None
        if cfg.steps < self.step:
            raise ValueError(f"--steps {cfg.steps}: the run in {ckpt!r} is already at step {self.step}; "
                             f"give --steps >= {self.step} to continue it")
        self.t_start = time.perf_counter() - self.wall0

    def _load_carry(self, c: dict) -> None:
        if self.task.streaming and self.step > 0:
            if "teacher" not in c or "state" not in c:
                raise ValueError("the stream states (carry) are missing")
            self.teacher = c["teacher"].double()
            st = tuple(s.to(self.dev) for s in c["state"])
            self.state = st if len(st) > 1 else st[0]

    # --- the two steps ------------------------------------------------------------------
    def record(self) -> dict:
        """One record on the probe batch, appended; run file and checkpoint rewritten."""
        cfg = self.cfg
        r = record_stats(self.model, self.task, self.x_probe, self.y_probe, self.opt, cfg.optimizer, self.lags,
                         cfg.transport, self.window_lags)
        r["step"] = self.step
        r["loss_ratio"] = r["loss"] / self.trivial
        if r["loss_ratio"] > DIVERGED_RATIO:
            raise TrainingDiverged(f"probe loss {r['loss']:.3g} is {r['loss_ratio']:.2g} times the trivial "
                                   f"predictor's at step {self.step}; lower --lr")
        r["train_loss"] = self.acc_loss / self.acc_n if self.acc_n else float("nan")
        if self.forcing is not None:     # the slow units from this record on (step 0: the initial ones)
            if self.step > 0:
                self.forcing.set_mask(slow_mask_from_zeta(r["zeta_window"], cfg.slow_forcing_q))
            r["slow_mask"] = self.forcing.mask.astype(np.float64)
        r["wall"] = time.perf_counter() - self.t_start
        self.acc_loss, self.acc_n = 0.0, 0
        for k in self.keys:
            self.rec[k].append(r[k])
        if self.out:
            self.save(r["wall"])
        return r

    def _batch(self):
        cfg, task = self.cfg, self.task
        if task.streaming:
            x, y, self.teacher = task.chunk(cfg.batch, cfg.seed, STREAM_TRAIN, self.step, self.teacher, self.dev)
            return x, y
        if task.epoch_based:
            idx = torch.from_numpy(task.epoch_indices(cfg.seed, self.step, cfg.batch)).to(self.dev)
            return self.train_set[0][idx], self.train_set[1][idx]
        return task.batch(cfg.batch, cfg.seed, STREAM_TRAIN, self.step, self.dev)

    def _forward_loss(self, x, y, state):
        """Training loss of one batch and the final state (the first half of a step)."""
        y_hat, state = self.model.forward_state(x, state)
        return self.task.loss(y_hat, y, self.task.train_loss_from), state

    def _update(self, loss) -> None:
        """Backward, clipping, manual decay, optimizer step (the second half of a step)."""
        loss.backward()
        if self.cfg.clip is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip)
        apply_manual_decay(self.manual, self.cfg.optimizer, None, self.wd)
        self.opt.step()

    def train_step(self) -> None:
        """One optimizer step (with clipping, manual decay, forcing); raises TrainingDiverged."""
        task = self.task
        x, y = self._batch()
        before = self.forcing.snapshot() if self.forcing is not None else None
        kept = self.rec["step"][-1] if self.rec["step"] else 0
        why = f"lower --lr or set --clip (records up to step {kept} kept)"
        if self.fast is not None:        # the step is taken before its loss can be looked at
            if task.streaming and self.state is None:
                self.state = x.new_zeros(x.shape[0], self.cfg.hidden)
            loss, state = self.fast(x, y, self.state if task.streaming else None)
            lv = float(loss.detach())
            if not math.isfinite(lv):
                raise TrainingDiverged(f"training loss is {lv} at step {self.step}; {why}")
        else:
            self.opt.zero_grad(set_to_none=True)
            loss, state = self._forward_loss(x, y, self.state)
            lv = float(loss.detach())
            if not math.isfinite(lv):
                raise TrainingDiverged(f"training loss is {lv} at step {self.step}; {why}")
            try:
                self._update(loss)
            except RuntimeError as exc:  # e.g. "value cannot be converted to type float without overflow"
                raise TrainingDiverged(f"optimizer step failed at step {self.step} "
                                       f"({str(exc).splitlines()[0][:80]}); {why}") from None
        self._inject()
        if before is not None:           # after the optimizer step, on its realized update
            self.forcing.apply(before, self.step)
        if task.streaming:
            self.state = tuple(s.detach().clone() for s in state) if isinstance(state, tuple) \
                else state.detach().clone()
        self.step += 1
        self.acc_loss += lv
        self.acc_n += 1

    def _inject(self) -> None:
        if not self.masks:
            return
        cfg = self.cfg
        g = stream_generator(cfg.seed, STREAM_NOISE, self.step)
        with torch.no_grad():
            for p, m in self.masks:
                noise = sas_noise(p.shape, cfg.inject_alpha, g).to(self.dev)
                p.add_(cfg.inject_scale * (noise if m is None else noise * m))

    def arrays(self) -> dict:
        """The run-file arrays (records, lags, trivial loss[, window_lags])."""
        res = _records_to_arrays(self.rec, self.lags, self.cfg.hidden)
        res["trivial_loss"] = np.float64(self.trivial)
        if self.window_lags is not None:
            res["window_lags"] = self.window_lags.astype(np.float64)
        return res

    def due(self) -> bool:
        """Is a record due after the step just taken (``record_every`` or ``record_epochs``)?"""
        cfg = self.cfg
        if self.step == cfg.steps:
            return True
        if cfg.record_epochs is None:
            return self.step % cfg.record_every == 0
        nb = self.task.batches_per_epoch(cfg.batch)
        return self.step % nb == 0 and (self.step // nb == 1 or (self.step // nb) % cfg.record_epochs == 0)

    def result(self) -> dict:
        res = self.arrays()
        res["config"] = self.config
        return res


#: one seed's run (model, optimizer, records, run file, checkpoint); :mod:`levysde.rnn.batched`
#: trains several of them as one batched model and records each with its own methods
TrainingRun = _Run


def train(cfg: TrainConfig, out: str | None = None, *, resume: bool = False, force: bool = False,
          progress: bool = False, stop_after: int | None = None, deadline: float | None = None) -> dict:
    """Train ``cfg.model`` on ``cfg.task`` and record zeta trajectories (module docstring).

    Parameters
    ----------
    cfg : TrainConfig
        The run's configuration (validated here).
    out : str or None, optional
        Run-file path (.npz), rewritten atomically after every record, with a checkpoint
        ``RUN.ckpt`` next to it; None: nothing written.
    resume : bool, optional
        Continue from the checkpoint (its config must match ``cfg`` except
        steps/device/threads).
    force : bool, optional
        Overwrite an existing ``out``.
    progress : bool, optional
        A tqdm bar (loss, std of zeta) on stderr when it is a terminal.
    stop_after : int or None, optional
        Stop after this many optimizer steps in this call (for tests of interruption).
    deadline : float or None, optional
        A ``time.monotonic()`` value: stop after the first optimizer step that ends at or
        after it, writing the checkpoint (and the run file, with the records so far) at that
        step, so that ``resume=True`` continues exactly there (the record schedule is
        unchanged).

    Returns
    -------
    dict
        The run-file arrays (``step``, ``loss``, ``zeta`` (records, H), ``zeta_jac``,
        ``Lambda``, ``envelope``, ``lags``, ...), plus ``config`` as a dict.

    Raises
    ------
    ValueError
        Bad config, CUDA unavailable, not enough memory, existing ``out`` without
        resume/force, resume without a checkpoint or with a different config.
    TrainingDiverged
        Non-finite loss, parameters, Lambda or envelope (the records so far are kept).

    Examples
    --------
    >>> cfg = TrainConfig(model="diaggate", hidden=4, task="delay", seq_len=8, delay=2, batch=4,
    ...                   steps=2, record_every=1, n_lags=4, lag_max=50)
    >>> run = train(cfg)
    >>> run["step"].tolist(), run["zeta"].shape, run["config"]["model"]
    ([0, 1, 2], (3, 4), 'diaggate')
    """
    cfg.validate()
    run = _Run(cfg, out)
    if resume:
        run.resume()
    else:
        run.check_new(force)
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm
        except ImportError:              # no [progress] extra: no bar
            tqdm = None
        bar = tqdm and tqdm(total=cfg.steps, initial=run.step, unit="step", dynamic_ncols=True,
                            disable=None)          # on a terminal only: no carriage returns in logs

    def show(r):
        if bar is not None:
            bar.set_postfix(loss=f"{r['loss']:.4g}", zeta_sd=f"{np.std(r['zeta']):.3g}", refresh=False)

    try:
        if not run.rec["step"]:
            show(run.record())
        done_here = 0
        while run.step < cfg.steps and (stop_after is None or done_here < stop_after):
            run.train_step()
            done_here += 1
            if bar is not None:
                bar.update(1)
            if run.due():
                show(run.record())
            if deadline is not None and run.step < cfg.steps and time.monotonic() >= deadline:
                if run.out:
                    run.save(time.perf_counter() - run.t_start)
                break
    finally:
        if bar is not None:
            bar.close()
    return run.result()
