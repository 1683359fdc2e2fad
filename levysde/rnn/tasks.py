"""Synthetic long-memory regression tasks, generated on the fly from a seed.

Every batch is a pure function of ``(seed, stream, index)``: the training batch of step
s is ``batch(B, seed, STREAM_TRAIN, s)``, the fixed probe batch is
``batch(B_probe, seed, STREAM_PROBE, 0)``. Resuming therefore needs no RNG state.

Tasks (``x``: (B, T, n_in), ``y``: (B, T, n_out), float32, values before t = 0 are zero):

* ``powerlaw``: x_t ~ N(0, 1), ``y_t = sum_{k=0}^{K-1} w_k x_{t-k}`` with
  ``w_k ∝ (k+1)^(-p)``, ``||w||_2 = 1`` (so Var y_t = 1 once t >= K-1). K = ``kernel``
  (default T), p = ``p`` > 0 (default 1).
* ``delay``: x_t ~ N(0, 1), ``y_t = x_{t-L}``, ``1 <= L < T`` (default 5).
* ``adding``: n_in = 2, x_t = (v_t ~ U[0, 1], marker m_t in {0, 1}); exactly two markers,
  at distinct random positions in ``[0, loss_from)``; ``y_t = sum of the two marked v`` for
  ``t >= loss_from`` (0 before).

Loss: MSE over time steps ``t >= loss_from`` (default ``T // 2``: the later half), all
batch entries and outputs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

TASKS = ("powerlaw", "delay", "adding")
STREAM_TRAIN, STREAM_PROBE, STREAM_NOISE = 0, 1, 2


def stream_generator(seed: int, stream: int, index: int, device="cpu") -> torch.Generator:
    """A torch.Generator seeded deterministically from ``(seed, stream, index)`` (numpy SeedSequence)."""
    s = int(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(stream), int(index)]).generate_state(2, np.uint64)[0])
    return torch.Generator(device=device).manual_seed(s & 0x7FFFFFFFFFFFFFFF)


@dataclass(frozen=True)
class Task:
    """A synthetic regression task (module docstring). Use :func:`build_task` to validate."""

    name: str
    seq_len: int
    loss_from: int
    delay: int = 5
    p: float = 1.0
    kernel: int = 0  # 0: seq_len

    @property
    def n_in(self) -> int:
        return 2 if self.name == "adding" else 1

    @property
    def n_out(self) -> int:
        return 1

    def batch(self, n: int, seed: int, stream: int, index: int, device="cpu"):
        """``(x, y)`` of ``n`` sequences, a pure function of ``(seed, stream, index)``; on ``device``."""
        g = stream_generator(seed, stream, index)
        T = self.seq_len
        if self.name == "adding":
            v = torch.rand(n, T, generator=g)
            # two distinct marker positions in [0, loss_from)
            keys = torch.rand(n, self.loss_from, generator=g)
            pos = keys.argsort(dim=1)[:, :2]
            m = torch.zeros(n, T)
            m.scatter_(1, pos, 1.0)
            x = torch.stack([v, m], -1)
            s = (v.gather(1, pos)).sum(1)
            y = torch.zeros(n, T, 1)
            y[:, self.loss_from:, 0] = s[:, None]
        else:
            x = torch.randn(n, T, 1, generator=g)
            if self.name == "delay":
                y = torch.zeros_like(x)
                y[:, self.delay:] = x[:, :-self.delay]
            else:
                K = self.kernel or T
                w = (torch.arange(K, dtype=torch.float64) + 1.0) ** (-self.p)
                w = (w / w.norm()).float()
                # causal convolution y_t = sum_k w_k x_{t-k} (x = 0 before t = 0)
                xp = torch.nn.functional.pad(x[:, :, 0][:, None, :], (K - 1, 0))
                y = torch.nn.functional.conv1d(xp, w.flip(0)[None, None, :])[:, 0, :, None]
        return x.to(device), y.to(device)

    def loss(self, y_hat: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """MSE over ``t >= loss_from`` (scalar tensor)."""
        return torch.mean((y_hat[:, self.loss_from:] - y[:, self.loss_from:]) ** 2)


def build_task(name: str, seq_len: int, *, loss_from: int | None = None, delay: int = 5,
               p: float = 1.0, kernel: int = 0) -> Task:
    """Validated :class:`Task`.

    Raises ValueError: unknown ``name`` (allowed :data:`TASKS`); ``seq_len`` < 2;
    ``loss_from`` not in [0, seq_len - 1] (adding: [2, seq_len - 1]); ``delay`` not in
    [1, seq_len - 1]; ``p`` not > 0; ``kernel`` not in [0, seq_len] (0 = seq_len).
    """
    if name not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {name!r}")
    if not isinstance(seq_len, int) or seq_len < 2:
        raise ValueError(f"seq_len must be an integer >= 2, got {seq_len!r}")
    if loss_from is None:
        loss_from = seq_len // 2
    lo = 2 if name == "adding" else 0
    if not isinstance(loss_from, int) or not lo <= loss_from <= seq_len - 1:
        raise ValueError(f"loss_from must be an integer in [{lo}, {seq_len - 1}], got {loss_from!r}")
    if name == "delay" and not (isinstance(delay, int) and 1 <= delay <= seq_len - 1):
        raise ValueError(f"delay must be an integer in [1, {seq_len - 1}], got {delay!r}")
    if name == "powerlaw":
        if not (isinstance(p, (int, float)) and np.isfinite(p) and p > 0):
            raise ValueError(f"p (power-law exponent) must be a finite number > 0, got {p!r}")
        if not (isinstance(kernel, int) and 0 <= kernel <= seq_len):
            raise ValueError(f"kernel must be an integer in [0, {seq_len}], got {kernel!r}")
    return Task(name=name, seq_len=seq_len, loss_from=loss_from, delay=int(delay), p=float(p),
                kernel=int(kernel))
