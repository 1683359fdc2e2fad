"""Whole-step CUDA-graph capture of a training step (the trainer's ``fast`` option).

The leaky models run one small kernel chain per time step (docs/specification.md §9 cell), so on a GPU a
training step of T = 200 steps is bound by kernel launches and Python, not by arithmetic.
:class:`GraphStep` records the forward pass, the backward pass, gradient clipping, the manual
weight decay and the optimizer step once into a ``torch.cuda.CUDAGraph`` and replays it on
static input buffers (PyTorch's "whole network capture" recipe, CUDA semantics notes).

Side effects are undone: the warm-up iterations that a capture needs (run on a side stream)
change the weights and the optimizer state, so both are snapshotted before and restored
after (a fresh optimizer state is restored as zero moments at step 0, which is what a fresh
Adam does), and the run continues exactly from where it was.

``capture=False`` runs the identical code, warm-up, restore and static buffers included,
eagerly on any device: that is how the CPU tests exercise this path (no speed-up there). On
CUDA, Adam/AdamW must be built with ``capturable=True`` (the trainer does this).
"""
from __future__ import annotations

from levysde.core.validate import check_int
from levysde.rnn._torch import torch

__all__ = ["GraphStep"]


class GraphStep:
    """One training step ``loss, state_out = forward_loss(x, y, state); update(loss)`` replayed
    from a CUDA graph.

    Calling it with ``(x, y, state)`` returns ``(loss, state_out)`` as static tensors (copy
    them before the next call). Shapes must stay the same from call to call; a ``state``
    given at the first call must be given at every call.

    Parameters
    ----------
    forward_loss : callable
        ``(x, y, state) -> (loss, state_out)``, ``loss`` a scalar tensor; ``state`` is None
        (fresh zeros each step) or a tensor (B, H) carried between calls.
    update : callable
        ``(loss) -> None``: backward, clip, decay, optimizer step.
    model : torch.nn.Module
        The model whose parameters and buffers are snapshotted around the warm-up.
    optimizer : torch.optim.Optimizer
        The optimizer whose state is snapshotted around the warm-up (on CUDA, Adam/AdamW
        built with ``capturable=True``).
    capture : bool
        Record a CUDA graph (needs tensors on CUDA); False: the same code eagerly, on any
        device (for tests).
    warmup : int, optional
        Warm-up iterations before the capture, >= 1 (default 3; PyTorch recommends a few).

    Raises
    ------
    ValueError
        If ``warmup`` < 1; at a call, if the shapes (or the presence of ``state``) differ from
        the first call's.

    References
    ----------
    PyTorch documentation, "CUDA semantics: CUDA Graphs" (whole-network capture).

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> lin = torch.nn.Linear(2, 1)
    >>> opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    >>> def forward_loss(x, y, state):
    ...     return ((lin(x) - y) ** 2).mean(), state
    >>> step = GraphStep(forward_loss, lambda loss: (loss.backward(), opt.step()), lin, opt, capture=False)
    >>> x, y = torch.ones(4, 2), torch.zeros(4, 1)
    >>> before = round(((lin(x) - y) ** 2).mean().item(), 6)
    >>> losses = [round(step(x, y)[0].item(), 6) for _ in range(3)]
    >>> losses[0] == before                   # the warm-up's steps were undone
    True
    >>> losses[0] > losses[1] > losses[2]     # then each call is one step
    True
    """

    def __init__(self, forward_loss, update, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 *, capture: bool, warmup: int = 3):
        warmup = check_int("warmup", warmup, 1)
        self.forward_loss, self.update = forward_loss, update
        self.model, self.opt = model, optimizer
        self.capture, self.warmup = capture, warmup
        self.graph = None
        self.static = None

    # --- snapshot / restore of weights and optimizer state ------------------------------------
    def _snapshot(self):
        tensors = {id(t): t.detach().clone() for t in list(self.model.parameters()) + list(self.model.buffers())}
        state = {id(p): {k: (v.detach().clone() if torch.is_tensor(v) else v) for k, v in st.items()}
                 for p, st in self.opt.state.items()}
        return tensors, state

    def _restore(self, snap) -> None:
        tensors, state = snap
        with torch.no_grad():
            for t in list(self.model.parameters()) + list(self.model.buffers()):
                t.copy_(tensors[id(t)])
            for p, st in self.opt.state.items():
                old = state.get(id(p))
                for k, v in st.items():
                    if torch.is_tensor(v):
                        v.copy_(old[k]) if old is not None else v.zero_()   # fresh: zero moments, step 0
                    elif old is not None:
                        st[k] = old[k]

    # --- the step ----------------------------------------------------------------------------
    def _body(self):
        x, y, state = self.static
        loss, state_out = self.forward_loss(x, y, state)
        self.update(loss)
        return loss, state_out

    def _prepare(self, x, y, state) -> None:
        self.static = (x.clone(), y.clone(), None if state is None else state.detach().clone())
        snap = self._snapshot()
        if self.capture:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(self.warmup):
                    self.opt.zero_grad(set_to_none=True)
                    self._body()
            torch.cuda.current_stream().wait_stream(side)
        else:
            for _ in range(self.warmup):
                self.opt.zero_grad(set_to_none=True)
                self._body()
        self._restore(snap)
        self.opt.zero_grad(set_to_none=True)
        if self.capture:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self._body()

    def __call__(self, x: torch.Tensor, y: torch.Tensor, state: torch.Tensor | None = None):
        if self.static is None:
            self._prepare(x, y, state)
        sx, sy, ss = self.static
        if x.shape != sx.shape or y.shape != sy.shape or (state is None) != (ss is None) or \
                (ss is not None and state.shape != ss.shape):
            raise ValueError("GraphStep: the batch shapes (and the presence of a carried state) must stay "
                             "the same from step to step")
        with torch.no_grad():
            sx.copy_(x), sy.copy_(y)
            if ss is not None:
                ss.copy_(state)
        if self.graph is not None:
            self.graph.replay()
            return self.out
        self.opt.zero_grad(set_to_none=True)   # backward assigns, as in a replay of the capture
        return self._body()
