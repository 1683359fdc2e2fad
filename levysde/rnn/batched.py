r"""Several seeds of one configuration trained in one process as one batched model (docs/rnn.md).

A training campaign runs the same configuration for many seeds. On a CPU a training step of
a narrow leaky cell is mostly per-operation overhead (a few microseconds per torch call, about
twenty calls per time step through autograd, on tensors of :math:`B \times H` floats); as H
grows towards 128 the matrix products take over. :func:`train_seeds` trains S seeds at once, so the
overhead is paid once for all S and the products are larger:

* **Stacked weights.** Seed s's model is built exactly as a separate run builds it
  (:func:`levysde.rnn.models.build_model` with its own seed, same init); the S copies of each
  weight are stacked along a leading seed axis, and every matrix product of a step is one
  batched product (``torch.baddbmm``) over the S seeds.
* **Hand-written backpropagation through time** (:func:`leaky_loss_grads`). The forward pass
  keeps :math:`h_t`, the candidate :math:`\tilde h_t = \tanh(\cdot)` and the gate :math:`a_t`;
  the backward pass runs the adjoint recursion of the leaky cell
  :math:`h_t = h_{t-1} + a_t (\tilde h_t - h_{t-1})`:

  .. math::

      g_t &= \frac{\partial L}{\partial h_t}\Big|_{\text{readout}}
             + \frac{\partial L}{\partial h_t}\Big|_{\text{from } t+1}, \\
      dz^c_t &= g_t\, a_t (1 - \tilde h_t^2)
             \quad \text{(candidate pre-activation)}, \\
      dz^a_t &= g_t (\tilde h_t - h_{t-1})\, a_t (1 - a_t)
             \quad \text{(gate; SharedGate: summed over } q\text{)}, \\
      \frac{\partial L}{\partial h_{t-1}} &= g_t (1 - a_t) + [dz^c_t, dz^a_t]\, W_\mathrm{rec},

  and the weight gradients are one product over all :math:`T` steps at the end,
  :math:`dW_\mathrm{rec} = \sum_t dz_t^\top h_{t-1}`, :math:`dU = \sum_t dz_t^\top x_t`,
  :math:`db = \sum_t dz_t`
  (Werbos 1990, "Backpropagation through time: what it does and how to do it",
  Proc. IEEE 78(10)). It is the gradient autograd computes for the separate run, summed in
  another order (float32 reassociation only).
* **Per seed, as separate runs.** Each seed's loss is the mean over its own batch; each seed's
  gradient is clipped by its own global norm (the formula of ``torch.nn.utils.clip_grad_norm_``:
  factor :math:`\min(1, c / (\lVert g\rVert_2 + 10^{-6}))` with :math:`c` = ``clip``, the norm
  over all of that seed's parameters); the optimizer (SGD, Adam, AdamW: element-wise updates)
  has the separate run's parameter groups (learning rates, weight decay) on the stacked tensors,
  so each seed's slice is updated as its own optimizer would. Every seed draws its batches (the
  ``lagged`` epoch shuffle, or the batch of ``(seed, step)``) and its injected forcing from its
  own seed.
* **Records and files per seed.** Before each record the stacked weights and optimizer
  moments are copied back into each seed's own run (:class:`levysde.rnn.trainer.TrainingRun`),
  which records on its probe batch and writes its run file and checkpoint exactly as a separate
  ``levysde train --seed s`` does; a batched run can be resumed batched or separately, and
  vice versa. A seed that diverges stops (its records so far are kept); the others go on.

Scope: the leaky models (ConstGate, SharedGate, DiagGate; GRU/LSTM train separately on
torch's fused kernels), the tasks whose batch is a function of ``(seed, step)`` (``lagged``,
``powerlaw``, ``delay``, ``adding``; not the ``longmem`` streams), eager steps (no ``fast``).
The speed-up, measured side by side with separate runs: ``python benchmarks/bench_batched.py``.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from levysde.core.memory import available_memory
from levysde.core.validate import check_int
from levysde.rnn._torch import torch
from levysde.rnn.tasks import STREAM_NOISE, STREAM_TRAIN, sas_noise, stream_generator
from levysde.rnn.trainer import TrainConfig, TrainingDiverged, TrainingRun

__all__ = ["BATCHED_MODELS", "BatchedRuns", "leaky_loss_grads", "check_batchable", "clip_per_seed",
           "workspace_bytes", "train_seeds"]

#: the models that :func:`train_seeds` batches
BATCHED_MODELS = ("constgate", "sharedgate", "diaggate")
#: the TrainConfig fields whose every value the batched step reproduces; any other field
#: (an option added later) must keep its default
_COVERED = frozenset((
    "model", "hidden", "optimizer", "lr", "lr_scaling", "lr_base_width", "weight_decay", "gate_decay",
    "clip", "task", "seq_len", "loss_from", "delay", "p", "kernel", "target_noise", "input_alpha",
    "n_mem", "mem_lag_max", "mem_gamma", "lag_mode", "lag_count", "lag_lo", "lag_hi", "lag_alpha",
    "input_dim", "n_train", "record_epochs", "gate_tau0", "window_lags", "batch", "probe_batch", "steps",
    "record_every", "seed", "init", "t_max", "gate_a", "inject_alpha", "inject_scale", "inject_target",
    "n_lags", "lag_max", "transport", "device", "threads", "fast"))
#: the norm offset of torch.nn.utils.clip_grad_norm_
_CLIP_EPS = 1e-6


def check_batchable(cfg: TrainConfig) -> None:
    """Check that seeds of ``cfg`` can be trained as one batched model.

    A configuration is batchable when it has a leaky model (:data:`BATCHED_MODELS`), a task
    other than ``longmem`` (whose streams carry state from step to step), ``fast`` off, and
    every option the batched step does not cover at its default.

    Parameters
    ----------
    cfg : TrainConfig
        The configuration to check (its ``seed`` does not matter).

    Returns
    -------
    None
        Returns only when ``cfg`` is batchable.

    Raises
    ------
    ValueError
        Naming the field (``model``, ``task``, ``fast`` or the uncovered option) that keeps
        the seeds from being trained batched.

    See Also
    --------
    train_seeds : trains batchable configurations.

    Examples
    --------
    >>> from levysde.rnn.trainer import TrainConfig
    >>> check_batchable(TrainConfig(model="diaggate", task="lagged"))
    >>> try:
    ...     check_batchable(TrainConfig(model="gru", task="lagged"))
    ... except ValueError as e:
    ...     print(str(e)[:40])
    model must be one of ('constgate', 'shar
    """
    if cfg.model not in BATCHED_MODELS:
        raise ValueError(f"model must be one of {BATCHED_MODELS} to train seeds batched, got {cfg.model!r} "
                         f"(train GRU/LSTM seeds separately)")
    if cfg.task == "longmem":
        raise ValueError("task must not be 'longmem' to train seeds batched (its streams carry state from "
                         "step to step); train its seeds separately")
    if cfg.fast:
        raise ValueError("fast must be False to train seeds batched (the batched step is eager)")
    for f in dataclasses.fields(cfg):
        if f.name not in _COVERED and getattr(cfg, f.name) != f.default:
            raise ValueError(f"{f.name} must keep its default {f.default!r} to train seeds batched "
                             f"(got {getattr(cfg, f.name)!r}); train these seeds separately")


def workspace_bytes(cfg: TrainConfig, seeds: int) -> int:
    r"""Bytes of the batched step's buffers for ``seeds`` seeds of ``cfg`` (float32, time-first).

    :class:`BatchedRuns` refuses a batch whose buffers would not fit in the free memory of
    its device; this is the estimate it compares.

    Parameters
    ----------
    cfg : TrainConfig
        The configuration (its model, ``hidden``, ``batch`` and task set the sizes).
    seeds : int
        Number of seeds S stepped together, >= 1.

    Returns
    -------
    int
        The bytes of the buffers (4 bytes per float32 entry).

    Notes
    -----
    With :math:`T` the sequence length, :math:`B` the batch, :math:`H` the width,
    :math:`D` the inputs, :math:`O` the outputs and :math:`K = H + G` (:math:`G` the gate
    outputs: 0 for ConstGate, 1 for SharedGate, :math:`H` for DiagGate), the count of floats is

    .. math::

        T S B\,(2K + 5H + 2D + 2O) + 4 S\,\big(K (H + D + 1) + O (H + 1)\big):

    the pre-activations and their gradient (twice), :math:`h`, :math:`\tilde h`, the
    differences :math:`\tilde h - h`, the gate and the readout gradient, inputs and
    targets; then the stacked weights, their gradient and two Adam moments (4 copies).

    Examples
    --------
    >>> from levysde.rnn.trainer import TrainConfig
    >>> cfg = TrainConfig(model="diaggate", hidden=4, task="lagged", seq_len=8, lag_lo=2, lag_hi=6, lag_count=2,
    ...                   input_dim=2, batch=2)
    >>> workspace_bytes(cfg, 3)
    10992
    """
    task = cfg.make_task()
    H, D, T, B, S = cfg.hidden, task.n_in, task.seq_len, cfg.batch, int(seeds)
    K = H + {"constgate": 0, "sharedgate": 1}.get(cfg.model, H)
    weights = K * (H + D + 1) + task.n_out * (H + 1)
    return 4 * (T * S * B * (2 * K + 5 * H + 2 * D + 2 * task.n_out) + 4 * S * weights)


# --------------------------------------------------------------------------------------
# the batched leaky cell: loss and exact gradient
# --------------------------------------------------------------------------------------
def leaky_loss_grads(params: dict, x: torch.Tensor, y: torch.Tensor, loss_from: int,
                     a_const: torch.Tensor | None = None, workspace: dict | None = None
                     ) -> tuple[torch.Tensor, dict]:
    """Training losses and gradients of S leaky cells at once (module docstring).

    Parameters
    ----------
    params : dict
        Stacked weights, seed axis first: ``W`` (S, H, H), ``U`` (S, H, D), ``b`` (S, H),
        ``readout.weight`` (S, O, H), ``readout.bias`` (S, O) and, for a trained gate of
        G = 1 (SharedGate) or G = H (DiagGate) outputs, ``W_a`` (S, G, H), ``U_a`` (S, G, D),
        ``b_a`` (S, G).
    x : torch.Tensor
        Inputs (S, B, T, D); seed s's batch is ``x[s]``.
    y : torch.Tensor
        Targets (S, B, T, O).
    loss_from : int
        First time step of the loss, in [0, T - 1].
    a_const : torch.Tensor or None
        ConstGate's fixed gates (S, H) (then no ``W_a``, ``U_a``, ``b_a``); None for a trained gate.
    workspace : dict or None
        Where the big intermediate buffers are kept from call to call (pass the same dict at
        every step: no allocation per step); None: allocated afresh.

    Returns
    -------
    losses : torch.Tensor
        (S,): seed s's ``mean_{b, t >= loss_from, o} (y_hat - y)^2`` from the zero state, the
        loss of :meth:`levysde.rnn.tasks.Task.loss`.
    grads : dict
        The gradient of ``losses[s]`` with respect to seed s's weights, stacked like ``params``.

    Notes
    -----
    The adjoint recursion of the module docstring (backpropagation through time, Werbos 1990):
    two matrix products per time step (forward and backward) and one for the weight
    gradients of all steps together. Tested against autograd on the separate models.

    Examples
    --------
    >>> import torch
    >>> from levysde.rnn.models import build_model
    >>> m = build_model("diaggate", 2, 3, 1, seed=0)
    >>> P = {k: v.detach()[None] for k, v in m.named_parameters()}
    >>> x, y = torch.randn(1, 4, 5, 2), torch.randn(1, 4, 5, 1)
    >>> losses, g = leaky_loss_grads(P, x, y, 0)
    >>> ref = ((m(x[0]) - y[0]) ** 2).mean()
    >>> ref.backward()
    >>> bool(torch.allclose(g["W_a"][0], m.W_a.grad, atol=1e-6))
    True
    """
    with torch.no_grad():
        return _loss_grads(params, x, y, int(loss_from), a_const, workspace)


def _buf(ws: dict | None, name: str, shape, like: torch.Tensor) -> torch.Tensor:
    """An uninitialised tensor of ``shape`` like ``like``, reused from the workspace ``ws``
    (big buffers are allocated once per batch shape, not at every step)."""
    t = None if ws is None else ws.get(name)
    if t is None or tuple(t.shape) != tuple(shape) or t.dtype != like.dtype or t.device != like.device:
        t = like.new_empty(shape)
        if ws is not None:
            ws[name] = t
    return t


def _loss_grads(P, x, y, t0, a_const, ws=None):
    S, B, T, D = x.shape
    H = P["W"].shape[1]
    gated = a_const is None
    if gated:
        W_rec = torch.cat([P["W"], P["W_a"]], 1)
        U_in = torch.cat([P["U"], P["U_a"]], 1)
        b_in = torch.cat([P["b"], P["b_a"]], 1)
    else:
        W_rec, U_in, b_in = P["W"], P["U"], P["b"]
    K = W_rec.shape[1]
    G = K - H
    # time-first buffers (T, S, B, .): the slice of step t is contiguous
    xt = _buf(ws, "x", (T, S, B, D), x).copy_(x.permute(2, 0, 1, 3))
    # inputs' share of the pre-activations; the same buffer holds dL/dz in the backward pass
    inp = torch.matmul(xt, U_in.transpose(1, 2), out=_buf(ws, "inp_dz", (T, S, B, K), x)).add_(b_in[:, None, :])
    hs = _buf(ws, "h", (T + 1, S, B, H), x)                               # h_0 = 0, h_1 .. h_T
    hs[0].zero_()
    cand = _buf(ws, "cand", (T, S, B, H), x)
    diff = _buf(ws, "diff", (T, S, B, H), x)                              # htilde_t - h_{t-1}
    gate = _buf(ws, "gate", (T, S, B, G), x) if gated else None
    a = a_const[:, None, :] if not gated else None                        # (S, 1, H)
    W_rec_t = W_rec.transpose(1, 2)
    for t in range(T):
        h = hs[t]
        z = torch.baddbmm(inp[t], h, W_rec_t)
        torch.tanh(z[..., :H], out=cand[t])
        if gated:
            a = torch.sigmoid(z[..., H:], out=gate[t])
        torch.sub(cand[t], h, out=diff[t])
        torch.add(h, a * diff[t], out=hs[t + 1])
    # readout and loss over t >= t0
    V, c = P["readout.weight"], P["readout.bias"]
    err = torch.matmul(hs[1:], V.transpose(1, 2)).add_(c[:, None, :]).sub_(y.permute(2, 0, 1, 3))
    err[:t0] = 0.0
    n = B * (T - t0) * V.shape[1]
    losses = (err[t0:] ** 2).mean((0, 2, 3))
    gy = err.mul_(2.0 / n)
    gh = torch.matmul(gy, V, out=_buf(ws, "gh", (T, S, B, H), x))
    # adjoint recursion: coefficients of all steps at once (in place, in buffers whose
    # values are not needed after), then one loop back in time
    c_cand = cand.mul_(cand).neg_().add_(1.0).mul_(gate if gated else a)  # a (1 - htilde^2)
    if gated:
        c_gate = diff.mul_(gate) if G == H else None                      # (htilde - h) a ...
        dsig = gate * (1.0 - gate) if G != H else None                    # SharedGate: a (1 - a)
        keep = gate.neg_().add_(1.0)                                      # 1 - a
        if c_gate is not None:
            c_gate.mul_(keep)                                             # ... (1 - a)
    else:
        keep = (1.0 - a).expand(S, B, H)
    dz = inp
    g_next = x.new_zeros(S, B, H)
    for t in range(T - 1, -1, -1):
        g = gh[t].add_(g_next)
        torch.mul(g, c_cand[t], out=dz[t, ..., :H])
        if gated and G == H:
            torch.mul(g, c_gate[t], out=dz[t, ..., H:])
        elif gated:
            torch.mul((g * diff[t]).sum(-1, keepdim=True), dsig[t], out=dz[t, ..., H:])
        g_next = torch.baddbmm(g * keep[t] if gated else g * keep, dz[t], W_rec)
    # weight gradients: one product over all steps per seed (seed-first copies)
    dzs = _buf(ws, "dzs", (S, T, B, K), x).copy_(dz.permute(1, 0, 2, 3)).view(S, T * B, K).transpose(1, 2)
    h_prev = cand.view(S, T, B, H).copy_(hs[:T].permute(1, 0, 2, 3)).view(S, T * B, H)   # cand: dead
    h_next = diff.view(S, T, B, H).copy_(hs[1:].permute(1, 0, 2, 3)).view(S, T * B, H)   # diff: dead
    xs = _buf(ws, "xs", (S, T, B, D), x).copy_(x.transpose(1, 2)).view(S, T * B, D)
    dW_rec = torch.bmm(dzs, h_prev)
    dU_in = torch.bmm(dzs, xs)
    db_in = dz.sum((0, 2))
    gys = gy.permute(1, 3, 0, 2).reshape(S, -1, T * B)
    grads = {"readout.weight": torch.bmm(gys, h_next), "readout.bias": gy.sum((0, 2))}
    grads.update(W=dW_rec[:, :H].contiguous(), U=dU_in[:, :H].contiguous(), b=db_in[:, :H].contiguous())
    if gated:
        grads.update(W_a=dW_rec[:, H:].contiguous(), U_a=dU_in[:, H:].contiguous(), b_a=db_in[:, H:].contiguous())
    return losses, grads


# --------------------------------------------------------------------------------------
# S runs stepped together
# --------------------------------------------------------------------------------------
def _per_entry(v, p: torch.Tensor) -> bool:
    """Is optimizer-state entry ``v`` a per-entry tensor of parameter ``p`` (a moment), not a
    shared scalar (Adam's step count)?"""
    return torch.is_tensor(v) and v.dim() > 0 and tuple(v.shape) == tuple(p.shape)


def _train_batch(run: TrainingRun):
    """The training batch ``(x, y)`` of ``run``'s next step: a function of (seed, step), as in
    a separate run (the ``lagged`` epoch shuffle, or the batch of stream STREAM_TRAIN)."""
    cfg, task = run.cfg, run.task
    if task.epoch_based:
        idx = torch.from_numpy(task.epoch_indices(cfg.seed, run.step, cfg.batch)).to(run.dev)
        return run.train_set[0][idx], run.train_set[1][idx]
    return task.batch(cfg.batch, cfg.seed, STREAM_TRAIN, run.step, run.dev)


def clip_per_seed(params: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    r"""Clip the gradients of stacked parameters (seed axis first) seed by seed, in place.

    ``torch.nn.utils.clip_grad_norm_`` applied to each seed's own parameters.

    Parameters
    ----------
    params : list of torch.Tensor
        Stacked parameters, each of shape (S, ...) with a ``.grad`` of the same shape; seed
        s's gradients are the slices ``p.grad[s]``. Modified in place.
    max_norm : float
        The largest global gradient norm a seed keeps, > 0.

    Returns
    -------
    torch.Tensor
        (S,): each seed's global gradient norm before clipping.

    Notes
    -----
    Seed :math:`s`'s gradient :math:`g_s` (all its parameters together) is scaled by

    .. math::

        \min\!\Big(1, \frac{c}{\lVert g_s \rVert_2 + 10^{-6}}\Big),

    :math:`c` = ``max_norm``, the factor of ``torch.nn.utils.clip_grad_norm_`` (Pascanu,
    Mikolov & Bengio 2013).

    References
    ----------
    R. Pascanu, T. Mikolov, Y. Bengio, "On the difficulty of training recurrent neural
    networks", ICML 2013.

    Examples
    --------
    >>> import torch
    >>> p = torch.zeros(2, 3)
    >>> p.grad = torch.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0]])
    >>> clip_per_seed([p], 1.0).tolist()
    [5.0, 0.5]
    >>> [round(v, 4) for v in p.grad.norm(dim=1).tolist()]
    [1.0, 0.5]
    """
    with torch.no_grad():
        norms = torch.stack([torch.linalg.vector_norm(p.grad.reshape(p.shape[0], -1), 2, dim=1) for p in params])
        total = torch.linalg.vector_norm(norms, 2, dim=0)
        coef = torch.clamp(max_norm / (total + _CLIP_EPS), max=1.0)
        for p in params:
            p.grad.mul_(coef.view(-1, *([1] * (p.dim() - 1))))
    return total


class BatchedRuns:
    """Runs of one configuration, differing only in the seed and at the same step, stepped as
    one batched model (module docstring).

    The runs' weights and optimizer state are stacked at construction; :meth:`step` takes one
    optimizer step of every seed; :meth:`sync` copies the stacked state back into the runs
    (before they record, and before the batch is rebuilt or dropped).

    Parameters
    ----------
    runs : list of levysde.rnn.trainer.TrainingRun
        At least one run, built (or resumed) as separate runs, differing only in the seed and
        at the same step.

    Attributes
    ----------
    runs : list of levysde.rnn.trainer.TrainingRun
        The runs, in the order given.
    names : list of str
        The parameter names, in the models' order.
    P : list of torch.Tensor
        The stacked parameters, one (S, ...) tensor per name.
    opt : torch.optim.Optimizer
        The optimizer on the stacked parameters (the runs' parameter groups and state).

    Raises
    ------
    ValueError
        If the runs differ in anything but the seed, are at different steps, use manual
        weight decay or a fast step, their configuration is not batchable
        (:func:`check_batchable`), or the buffers (:func:`workspace_bytes`) exceed the free
        memory.

    Examples
    --------
    >>> import dataclasses
    >>> from levysde.rnn.trainer import TrainConfig, TrainingRun
    >>> cfg = TrainConfig(model="diaggate", hidden=4, task="lagged", seq_len=8, lag_lo=2, lag_hi=6,
    ...                   lag_count=2, input_dim=2, n_train=8, batch=4, steps=2)
    >>> runs = [TrainingRun(dataclasses.replace(cfg, seed=s).validate(), None) for s in (0, 1)]
    >>> batch = BatchedRuns(runs)
    >>> [tuple(p.shape) for p in batch.P][:2]
    [(2, 4, 4), (2, 4, 2)]
    >>> len(batch.step()), batch.step_index
    (2, 1)
    """

    def __init__(self, runs: list[TrainingRun]):
        self.runs = list(runs)
        r0 = self.runs[0]
        check_batchable(r0.cfg)
        base = {k: v for k, v in r0.config.items() if k not in ("seed",)}
        for r in self.runs:
            if {k: v for k, v in r.config.items() if k != "seed"} != base or r.step != r0.step:
                raise ValueError("BatchedRuns: the runs must differ only in the seed and be at the same step")
            if r.manual or r.fast is not None:
                raise ValueError("BatchedRuns: runs with manual weight decay or a fast step are not batchable")
        need = workspace_bytes(r0.cfg, len(self.runs))
        avail = int(torch.cuda.mem_get_info(r0.dev)[0]) if r0.dev.type == "cuda" else available_memory()
        if avail is not None and need > avail:
            raise ValueError(f"{len(self.runs)} seeds batched (hidden {r0.cfg.hidden}, batch {r0.cfg.batch}, seq_len "
                             f"{r0.cfg.seq_len}) need at least {need / 2**30:.3g} GiB of {r0.cfg.device} memory "
                             f"but only {avail / 2**30:.3g} GiB are available; train fewer seeds at once")
        self.names = [n for n, _ in r0.model.named_parameters()]
        self.own = [list(r.model.parameters()) for r in self.runs]
        with torch.no_grad():
            self.P = [torch.stack([ps[i].detach() for ps in self.own]).clone() for i in range(len(self.names))]
        self.a_const = torch.stack([r.model.a for r in self.runs]) if r0.model.name == "constgate" else None
        index = {id(p): i for i, p in enumerate(self.own[0])}
        groups = [{**{k: v for k, v in g.items() if k != "params"},
                   "params": [self.P[index[id(p)]] for p in g["params"]]} for g in r0.opt.param_groups]
        self.opt = type(r0.opt)(groups)
        for i, P in enumerate(self.P):
            states = [r.opt.state.get(ps[i]) for r, ps in zip(self.runs, self.own, strict=True)]
            if states[0]:
                self.opt.state[P] = {k: torch.stack([st[k] for st in states]) if _per_entry(v, self.own[0][i])
                                     else (v.clone() if torch.is_tensor(v) else v) for k, v in states[0].items()}
        self.inject = [(index[id(p)], m) for p, m in r0.masks]
        self.workspace: dict = {}

    @property
    def step_index(self) -> int:
        """The optimizer steps taken so far (the same for every seed)."""
        return self.runs[0].step

    def step(self) -> list[float]:
        """One optimizer step of every seed; returns the seeds' training losses (a non-finite
        one marks a diverged seed: drop it, :func:`train_seeds`)."""
        r0 = self.runs[0]
        cfg = r0.cfg
        xs, ys = zip(*(_train_batch(r) for r in self.runs), strict=True)
        losses, grads = leaky_loss_grads(dict(zip(self.names, self.P, strict=True)), torch.stack(xs), torch.stack(ys),
                                         r0.task.train_loss_from, self.a_const, self.workspace)
        for P, n in zip(self.P, self.names, strict=True):
            P.grad = grads[n]
        if cfg.clip is not None:
            clip_per_seed(self.P, cfg.clip)
        self.opt.step()
        self._inject()
        lv = losses.tolist()
        for r, v in zip(self.runs, lv, strict=True):
            r.step += 1
            r.acc_loss += v
            r.acc_n += 1
        return lv

    def _inject(self) -> None:
        """Injected forcing, each seed from its own generator of (seed, step) (the trainer's)."""
        if not self.inject:
            return
        cfg = self.runs[0].cfg
        with torch.no_grad():
            for s, r in enumerate(self.runs):
                g = stream_generator(r.cfg.seed, STREAM_NOISE, r.step)
                for i, m in self.inject:
                    noise = sas_noise(self.P[i].shape[1:], cfg.inject_alpha, g).to(self.P[i].device)
                    self.P[i][s].add_(cfg.inject_scale * (noise if m is None else noise * m))

    def sync(self) -> None:
        """Copy the stacked weights and optimizer state back into each seed's run."""
        with torch.no_grad():
            for s, (r, own) in enumerate(zip(self.runs, self.own, strict=True)):
                for p, P in zip(own, self.P, strict=True):
                    p.copy_(P[s])
                    st = self.opt.state.get(P)
                    if st:
                        r.opt.state[p] = {k: v[s].clone() if _per_entry(v, P)
                                          else (v.clone() if torch.is_tensor(v) else v) for k, v in st.items()}


def _diverged(run: TrainingRun, loss: float) -> TrainingDiverged:
    kept = run.rec["step"][-1] if run.rec["step"] else 0
    return TrainingDiverged(f"seed {run.cfg.seed}: training loss is {loss} at step {run.step - 1}; lower --lr "
                            f"or set --clip (records up to step {kept} kept)")


def train_seeds(cfg: TrainConfig, seeds, outs=None, *, resume=False, force: bool = False,
                progress: bool = False, stop_after: int | None = None, deadline: float | None = None) -> list:
    """Train ``cfg`` for each seed in ``seeds`` in one process, as one batched model.

    Each seed's run is the run ``train(replace(cfg, seed=s), outs[i])`` would make
    (:func:`levysde.rnn.trainer.train`): the same init, batches, clipped updates up to float32
    reassociation, the same records on its probe batch, its own run file and checkpoint.

    Parameters
    ----------
    cfg : TrainConfig
        The configuration; its ``seed`` is replaced by each of ``seeds``. Must be batchable
        (:func:`check_batchable`).
    seeds : sequence of int
        Distinct seeds in [0, 2^32 - 1], at least one.
    outs : sequence of str or None
        One run-file path per seed (``RUN.npz``, checkpoint ``RUN.ckpt`` beside it), distinct;
        None: nothing written.
    resume : bool or sequence of bool, optional
        As :func:`levysde.rnn.trainer.train`, for every seed, or one flag per seed (a campaign
        resumes some seeds and starts others in one batched model). Default False.
    force, progress, stop_after, deadline
        As :func:`levysde.rnn.trainer.train`, for every seed (``stop_after``: batched steps in
        this call; ``deadline``: a ``time.monotonic()`` value, past which every unfinished run
        stops at its next batched step, its checkpoint written there). Resumed runs at
        different steps are stepped in groups until they meet.

    Returns
    -------
    list
        Per seed, in the order of ``seeds``: the run-file arrays (dict with ``config``, as
        :func:`levysde.rnn.trainer.train` returns) or, for a seed whose training diverged, the
        :class:`levysde.rnn.trainer.TrainingDiverged` that stopped it (its records so far are kept).

    Raises
    ------
    ValueError
        Bad or repeated seeds, ``outs`` of the wrong length or repeated, a configuration that is
        not batchable or not valid, an existing run file without ``resume``/``force``, a
        checkpoint that cannot be resumed.

    Examples
    --------
    >>> from levysde.rnn.trainer import TrainConfig
    >>> cfg = TrainConfig(model="diaggate", hidden=4, task="lagged", seq_len=20, lag_lo=2, lag_hi=10,
    ...                   lag_count=3, input_dim=2, n_train=16, batch=8, steps=4, record_every=2)
    >>> res = train_seeds(cfg, [0, 1])
    >>> [r["config"]["seed"] for r in res], res[0]["step"].tolist()
    ([0, 1], [0, 2, 4])
    """
    cfg.validate()
    check_batchable(cfg)
    seeds = [check_int("seeds", s, 0, 2 ** 32 - 1) for s in (list(seeds) if not np.isscalar(seeds) else [seeds])]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct integers, at least one; got {seeds}")
    outs = [None] * len(seeds) if outs is None else list(outs)
    if len(outs) != len(seeds) or (None not in outs and len(set(outs)) != len(outs)):
        raise ValueError(f"outs must give one distinct run file per seed ({len(seeds)}), got {outs}")
    flags = [bool(resume)] * len(seeds) if np.isscalar(resume) else [bool(f) for f in resume]
    if len(flags) != len(seeds):
        raise ValueError(f"resume must be one flag or one flag per seed ({len(seeds)}), got {len(flags)}")
    runs = [TrainingRun(dataclasses.replace(cfg, seed=s).validate(), o) for s, o in zip(seeds, outs, strict=True)]
    for r, f in zip(runs, flags, strict=True):
        r.resume() if f else r.check_new(force)
    failed: dict[int, TrainingDiverged] = {}
    bar = _bar(progress, cfg.steps * len(runs), sum(r.step for r in runs))
    try:
        for i, r in enumerate(runs):
            if not r.rec["step"]:
                _record(r, i, failed)
        _loop(runs, failed, cfg.steps, stop_after, bar, deadline)
    finally:
        if bar is not None:
            bar.close()
    return [failed[i] if i in failed else r.result() for i, r in enumerate(runs)]


def _record(run: TrainingRun, i: int, failed: dict) -> None:
    try:
        run.record()
    except TrainingDiverged as exc:
        failed[i] = TrainingDiverged(f"seed {run.cfg.seed}: {exc}")


def _loop(runs, failed, steps, stop_after, bar, deadline=None) -> None:
    """Step the runs that are not done, the ones at the lowest step together, until every run is
    at ``steps`` (or diverged), ``stop_after`` batched steps were taken, or the ``deadline``
    (``time.monotonic()``) passed: then every unfinished run writes its checkpoint."""
    done = 0
    while stop_after is None or done < stop_after:
        active = [i for i, r in enumerate(runs) if i not in failed and r.step < steps]
        if not active:
            return
        lo = min(runs[i].step for i in active)
        group = [i for i in active if runs[i].step == lo]
        upto = min([runs[i].step for i in active if runs[i].step > lo] + [steps])
        batch = BatchedRuns([runs[i] for i in group])
        while batch.step_index < upto and (stop_after is None or done < stop_after):
            losses = batch.step()
            done += 1
            if bar is not None:
                bar.update(len(group))
            for i, v in zip(group, losses, strict=True):
                if not math.isfinite(v):
                    failed[i] = _diverged(runs[i], v)
            due = runs[group[0]].due()
            if due:
                batch.sync()
                for i in group:
                    if i not in failed:
                        _record(runs[i], i, failed)
            if any(i in failed for i in group):
                if not due:
                    batch.sync()
                group = [i for i in group if i not in failed]
                if not group:
                    break
                batch = BatchedRuns([runs[i] for i in group])
            if deadline is not None and batch.step_index < steps and time.monotonic() >= deadline:
                batch.sync()
                for i in group:
                    if runs[i].out:
                        runs[i].save(time.perf_counter() - runs[i].t_start)
                return
        batch.sync()


def _bar(progress: bool, total: int, initial: int):
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:              # no [progress] extra: no bar
        return None
    return tqdm(total=total, initial=initial, unit="seed-step", dynamic_ncols=True)
