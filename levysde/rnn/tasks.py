r"""Synthetic long-memory regression tasks, generated on the fly from a seed (docs/specification.md §9).

Every batch is a pure function of ``(seed, stream, index)``: the training batch of step
:math:`s` is ``batch(B, seed, STREAM_TRAIN, s)``, the fixed probe batch is
``batch(B_probe, seed, STREAM_PROBE, 0)``. Resuming therefore needs no RNG state
(``longmem`` also carries its teacher state, stored in the checkpoint).

Tasks (``x``: (B, T, n_in), ``y``: (B, T, n_out), float32, values before :math:`t = 0` are zero):

* ``powerlaw``: :math:`y_t = \sum_{k=0}^{K-1} w_k x_{t-k}` with :math:`w_k \propto (k+1)^{-p}`,
  :math:`\|w\|_2 = 1` (so :math:`\operatorname{Var} y_t = 1` once :math:`t \ge K-1`).
  :math:`K` = ``kernel`` (default :math:`T`), :math:`p` = ``p`` > 0.
* ``delay``: :math:`y_t = x_{t-L}`, :math:`1 \le L < T` (default 5).
* ``adding``: n_in = 2, :math:`x_t = (v_t \sim U[0, 1],\ m_t \in \{0, 1\})` (value, marker);
  exactly two markers, at distinct random positions in :math:`[0, t_0)`, :math:`t_0` =
  ``loss_from``; :math:`y_t` is the sum of the two marked :math:`v` for :math:`t \ge t_0`
  (0 before).
* ``longmem``: one endless input stream per batch row, cut into chunks of :math:`T` = ``seq_len``
  steps (chunk :math:`s` is the training batch of step :math:`s`; the trainer carries the
  network's hidden state from chunk to chunk: truncated backpropagation through time). The
  target is a teacher of ``n_mem`` = :math:`m` leaky integrators with time scales :math:`\tau_j`:

  .. math::

      m^j_t = \rho_j m^j_{t-1} + \sqrt{1 - \rho_j^2}\, x_t, \qquad
      \rho_j = e^{-1/\tau_j}, \qquad y_t = c \sum_j m^j_t,

  :math:`c` such that :math:`\operatorname{Var} y_t = 1` for Gaussian :math:`x`
  (:func:`levysde.rnn.teacher.teacher_time_scales`, :func:`levysde.rnn.teacher.trivial_loss`).
  The :math:`\tau_j` are the quantiles :math:`j/(m-1)` of the power-law density
  :math:`\propto \tau^{-1-\gamma}` on :math:`[1, \tau_{\max}]`, :math:`\tau_{\max}` = ``mem_lag_max``
  (:math:`\gamma` = ``mem_gamma`` :math:`\ge 0`; 0 = log-uniform, equal numbers per
  decade): component :math:`j` rewards a network time scale near :math:`\tau_j`, up to
  :math:`10^4` steps by default, far beyond one chunk, so the task is never solved exactly.
  The probe batch is 5 chunks of fresh streams (stationary teacher start); the probe loss and
  the recorded averages use the last chunk (``loss_from`` = 4T), after a burn-in of
  :math:`4T` steps.

* ``lagged`` (the anti-collapse paper's delayed regression): :math:`x_t \sim N(0, I_D)`,
  :math:`D` = ``input_dim`` (16),

  .. math::

      y_t = \sum_k c_k\, u^\top x_{t-l_k} + \sigma \varepsilon_t

  (terms with :math:`t < l_k` absent), :math:`u` a random unit vector drawn from the seed,
  lags and coefficients from :func:`levysde.rnn.teacher.lagged_terms` (``lag_mode`` pareto:
  ``lag_count`` lags of a truncated Pareto(``lag_alpha``) on [``lag_lo``, ``lag_hi``],
  :math:`c_k = 0.6 \cdot 0.85^k`; fixed: 32, 64, 128, 192, 256 with 0.6 ... 0.26). A **fixed
  training set** of ``n_train`` sequences (:meth:`Task.lagged_set` of stream STREAM_TRAIN,
  noise drawn once with it) is iterated in epochs of :math:`\lceil n_{\mathrm{train}} / B \rceil`
  batches (the last one shorter), reshuffled every epoch by :meth:`Task.epoch_indices`; the
  probe batch is a separate diagnostic set (stream STREAM_PROBE). Loss over every step
  (``loss_from`` default 0).

Options for every task but ``adding``: ``input_alpha`` :math:`\alpha \in [0.5, 2)`
(:data:`ALPHA_MIN_FLOAT32`: the inputs are float32): the inputs :math:`x_t` are
standard symmetric :math:`\alpha`-stable (:math:`E\, e^{ikX} = e^{-|k|^\alpha}`,
:func:`sas_noise`) instead of :math:`N(0, 1)` (infinite variance: the trivial loss is then
measured on the probe batch); ``target_noise`` :math:`\sigma \ge 0` (all tasks):
:math:`y_t \mathrel{+}= \sigma \varepsilon_t`, :math:`\varepsilon_t \sim N(0, 1)` fresh in
every batch, a floor :math:`\sigma^2` the loss never goes below.

Loss: MSE over time steps :math:`t \ge t_0`, :math:`t_0` = ``loss_from`` (default ``T // 2``;
``longmem`` training chunks: every step, the state being carried), all batch entries and
outputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from levysde.core.validate import check_choice, check_int, check_real
from levysde.rnn._torch import torch
from levysde.rnn.teacher import FIXED_LAGS, LAG_MODES, lagged_terms, teacher_scale, teacher_time_scales

__all__ = ["TASKS", "ALPHA_MIN_FLOAT32", "Task", "build_task", "sas_noise", "stream_generator"]

#: the task names of :func:`build_task` (module docstring)
TASKS = ("powerlaw", "delay", "adding", "longmem", "lagged")
STREAM_TRAIN, STREAM_PROBE, STREAM_NOISE, STREAM_INIT, STREAM_TASK, STREAM_SHUFFLE = 0, 1, 2, 3, 4, 5
#: chunks of the longmem probe sequence (the last one is measured, the others are burn-in)
PROBE_CHUNKS = 5


#: smallest stability index of the alpha-stable draws of training (``input_alpha``, ``inject_alpha``),
#: which are float32: :math:`P(|X| > x) \sim 2 C_\alpha x^{-\alpha}`,
#: :math:`C_\alpha = \Gamma(\alpha) \sin(\pi\alpha/2) / \pi`
#: (Samorodnitsky & Taqqu 1994, Property 1.2.15), so at x = sqrt(float32 max) = 1.8e19, beyond which
#: a draw's square (every MSE loss and gradient) overflows, the fraction of draws is 2e-10 at
#: alpha = 0.5 but 11 % at alpha = 0.05 (and 1 % even reach float32's largest value, 3.4e38)
ALPHA_MIN_FLOAT32 = 0.5
#: why the alpha-stable indices of training start at ALPHA_MIN_FLOAT32 (error messages)
ALPHA_MIN_WHY = ("float32 training: below 0.5, alpha-stable draws whose squares overflow float32 are "
                 "no longer rare (11 % of the draws at alpha = 0.05)")


def stream_generator(seed: int, stream: int, index: int, device="cpu") -> torch.Generator:
    """A torch.Generator seeded deterministically from ``(seed, stream, index)``.

    Every random draw of training comes from one of these, so a batch is a pure function of
    ``(seed, stream, index)`` and a resumed run needs no RNG state.

    Parameters
    ----------
    seed : int
        The run seed (its low 32 bits are used).
    stream : int
        The stream: ``STREAM_TRAIN``, ``STREAM_PROBE``, ``STREAM_NOISE``, ``STREAM_INIT``,
        ``STREAM_TASK`` or ``STREAM_SHUFFLE``.
    index : int
        The index within the stream (the step, the chunk), >= 0.
    device : str or torch.device, optional
        The generator's device (default ``cpu``).

    Returns
    -------
    torch.Generator
        Seeded with the first 63 bits of ``numpy.random.SeedSequence([seed, stream, index])``.

    Examples
    --------
    >>> a = torch.rand(2, generator=stream_generator(0, STREAM_TRAIN, 5))
    >>> b = torch.rand(2, generator=stream_generator(0, STREAM_TRAIN, 5))
    >>> c = torch.rand(2, generator=stream_generator(0, STREAM_TRAIN, 6))
    >>> bool(torch.equal(a, b)), bool(torch.equal(a, c))
    (True, False)
    """
    s = int(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(stream), int(index)]).generate_state(2, np.uint64)[0])
    return torch.Generator(device=device).manual_seed(s & 0x7FFFFFFFFFFFFFFF)


def sas_noise(shape, alpha: float, generator: torch.Generator | None = None,
              dtype=torch.float32) -> torch.Tensor:
    r"""Standard symmetric alpha-stable samples, :math:`\mathbb{E}\,e^{ikX} = e^{-|k|^\alpha}` (Chambers-Mallows-Stuck).

    Parameters
    ----------
    shape : tuple of int
        The shape of the sample.
    alpha : float
        The stability index, in (0, 2].
    generator : torch.Generator or None, optional
        The CPU generator the uniforms come from (e.g. :func:`stream_generator`); None:
        torch's global one.
    dtype : torch.dtype, optional
        The returned dtype (default float32).

    Returns
    -------
    torch.Tensor
        ``shape``, ``dtype``, on the CPU: i.i.d. draws, clamped to ``dtype``'s finite range
        (a draw beyond it would be :math:`\pm\infty`; for float32 and alpha >=
        :data:`ALPHA_MIN_FLOAT32` this never matters in practice).

    Raises
    ------
    ValueError
        Unless 0 < alpha <= 2 (naming ``alpha``).

    Notes
    -----
    With :math:`V \sim U(-\pi/2, \pi/2)` and :math:`W \sim \mathrm{Exp}(1)` independent,

    .. math::

        X = \frac{\sin(\alpha V)}{\cos(V)^{1/\alpha}}
            \left(\frac{\cos((1 - \alpha) V)}{W}\right)^{(1 - \alpha)/\alpha};

    :math:`\alpha = 1` gives the Cauchy :math:`\tan V`, :math:`\alpha = 2` gives
    :math:`N(0, 2)`. Computed in float64, then cast.

    References
    ----------
    J. M. Chambers, C. L. Mallows, B. W. Stuck, "A method for simulating stable random
    variables", JASA 71 (1976) 340-344; the specification, §1 (:doc:`/specification`).

    Examples
    --------
    >>> g = torch.Generator().manual_seed(0)
    >>> x = sas_noise((2, 3), 1.5, g)
    >>> tuple(x.shape), x.dtype
    ((2, 3), torch.float32)
    >>> x = sas_noise((200000,), 2.0, torch.Generator().manual_seed(1), dtype=torch.float64)
    >>> round(float(x.var()), 1)            # alpha = 2: N(0, 2)
    2.0
    """
    check_real("alpha", alpha, 0.0, 2.0, lo_open=True)
    u = torch.rand(shape, generator=generator, dtype=torch.float64)
    v = (u - 0.5) * math.pi
    e = torch.rand(shape, generator=generator, dtype=torch.float64)
    w = -torch.log1p(-e)  # Exp(1), never log(0) since e < 1
    w = torch.clamp(w, min=1e-300)
    if alpha == 1.0:
        x = torch.tan(v)
    else:
        x = torch.sin(alpha * v) / torch.cos(v) ** (1.0 / alpha) \
            * (torch.cos((1.0 - alpha) * v) / w) ** ((1.0 - alpha) / alpha)
    big = float(torch.finfo(dtype).max)
    return torch.clamp(x, -big, big).to(dtype)


@dataclass(frozen=True)
class Task:
    r"""A synthetic regression task (module docstring). Use :func:`build_task` to validate.

    Attributes
    ----------
    name : str
        The task, one of :data:`TASKS`.
    seq_len : int
        T, the length of a sequence (a training chunk for ``longmem``).
    loss_from : int
        First time step of the probe loss.
    delay : int
        L of ``delay``.
    p : float
        The power-law exponent of ``powerlaw``'s kernel.
    kernel : int
        K of ``powerlaw`` (0: T).
    target_noise : float
        :math:`\sigma` >= 0, the standard deviation of the noise added to every target.
    input_alpha : float or None
        The stability index of alpha-stable inputs; None: N(0, 1) inputs.
    n_mem, mem_lag_max, mem_gamma : int, int, float
        The ``longmem`` teacher (:func:`levysde.rnn.teacher.teacher_time_scales`).
    lag_mode, lag_count, lag_lo, lag_hi, lag_alpha : str, int, int, int, float
        The ``lagged`` task's lags (:func:`levysde.rnn.teacher.lagged_terms`).
    input_dim : int
        D, the inputs of ``lagged``.
    n_train : int
        The size of ``lagged``'s fixed training set.

    Examples
    --------
    >>> task = build_task("delay", 8, delay=2)
    >>> x, y = task.batch(3, seed=0, stream=STREAM_TRAIN, index=0)
    >>> tuple(x.shape), tuple(y.shape), bool(torch.equal(y[:, 2:], x[:, :-2]))
    ((3, 8, 1), (3, 8, 1), True)
    >>> round(float(task.loss(torch.zeros_like(y), y)), 4) >= 0
    True
    """

    name: str
    seq_len: int
    loss_from: int
    delay: int = 5
    p: float = 1.0
    kernel: int = 0  # 0: seq_len
    target_noise: float = 0.0
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

    @property
    def n_in(self) -> int:
        return 2 if self.name == "adding" else self.input_dim if self.name == "lagged" else 1

    @property
    def epoch_based(self) -> bool:
        """True for ``lagged``: a fixed training set iterated in epochs."""
        return self.name == "lagged"

    def batches_per_epoch(self, batch: int) -> int:
        """``ceil(n_train / batch)`` (the last batch of an epoch holds the remainder)."""
        return -(-self.n_train // int(batch))

    def epoch_indices(self, seed: int, step: int, batch: int) -> np.ndarray:
        """Training-set rows of the batch of optimizer step ``step`` (``lagged``): epoch
        ``e = step // nb``, batch ``j = step % nb`` of the permutation of ``range(n_train)``
        drawn from ``default_rng(SeedSequence([seed, STREAM_SHUFFLE, e]))`` (a pure function of
        ``(seed, step)``: resuming needs no RNG state)."""
        nb = self.batches_per_epoch(batch)
        e, j = divmod(int(step), nb)
        rng = np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, STREAM_SHUFFLE, e]))
        return rng.permutation(self.n_train)[j * batch:(j + 1) * batch]

    def lagged_set(self, n: int, seed: int, stream: int, device="cpu"):
        """``(x (n, T, D), y (n, T, 1))`` float32, the ``lagged`` sequences of ``stream`` (the
        training set: STREAM_TRAIN, n = n_train; the diagnostic set: STREAM_PROBE): x and then
        the noise from the generator of ``(seed, stream, 0)``, ``u`` from ``(seed, STREAM_TASK, 0)``
        (shared by both sets); the target is summed in float64."""
        g = stream_generator(seed, stream, 0)
        T, D = self.seq_len, self.input_dim
        x = self._inputs((n, T, D), g)
        u = torch.randn(D, generator=stream_generator(seed, STREAM_TASK, 0), dtype=torch.float64)
        s = x.double() @ (u / u.norm())
        y = torch.zeros(n, T, dtype=torch.float64)
        lags, coeffs = lagged_terms({"lag_mode": self.lag_mode, "lag_count": self.lag_count,
                                     "lag_lo": self.lag_lo, "lag_hi": self.lag_hi,
                                     "lag_alpha": self.lag_alpha})
        for lag, c in zip(lags.tolist(), coeffs.tolist(), strict=True):
            if lag < T:
                y[:, lag:] += c * s[:, :T - lag]
        return x.to(device), self._noise(y.float()[:, :, None], g).to(device)

    @property
    def n_out(self) -> int:
        return 1

    @property
    def streaming(self) -> bool:
        """True for ``longmem``: training chunks continue one stream, state carried across steps."""
        return self.name == "longmem"

    @property
    def train_loss_from(self) -> int:
        """First time step of the training loss (0 for ``longmem`` chunks, else ``loss_from``)."""
        return 0 if self.streaming else self.loss_from

    @property
    def probe_len(self) -> int:
        """Length of the probe sequences (``PROBE_CHUNKS * T`` for ``longmem``, else T)."""
        return PROBE_CHUNKS * self.seq_len if self.streaming else self.seq_len

    def _inputs(self, shape, g):
        if self.input_alpha is None:
            return torch.randn(shape, generator=g)
        return sas_noise(shape, self.input_alpha, g)

    def _noise(self, y, g):
        if self.target_noise > 0:
            y = y + self.target_noise * torch.randn(y.shape, generator=g)
        return y

    def batch(self, n: int, seed: int, stream: int, index: int, device="cpu"):
        """``(x, y)`` of ``n`` sequences, a pure function of ``(seed, stream, index)``; on ``device``.

        ``longmem``: the probe sequences (length :attr:`probe_len`) of stream ``stream``; use
        :meth:`chunk` for training chunks. ``lagged``: :meth:`lagged_set` (``index`` unused; the
        trainer draws its batches from the fixed training set, :meth:`epoch_indices`)."""
        if self.streaming:
            state = self.teacher_init(n, seed, stream)
            xs, ys = [], []
            for k in range(PROBE_CHUNKS):
                x, y, state = self.chunk(n, seed, stream, k, state)
                xs.append(x), ys.append(y)
            return torch.cat(xs, 1).to(device), torch.cat(ys, 1).to(device)
        if self.name == "lagged":
            return self.lagged_set(n, seed, stream, device)
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
            x = self._inputs((n, T, 1), g)
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
        return x.to(device), self._noise(y, g).to(device)

    # --- longmem -------------------------------------------------------------------------
    def teacher(self):
        """``(rho (m,), c)`` of the ``longmem`` teacher, float64 (module docstring)."""

        tau = teacher_time_scales(self.n_mem, self.mem_lag_max, self.mem_gamma)
        return torch.from_numpy(np.exp(-1.0 / tau)), teacher_scale(tau)

    def teacher_init(self, n: int, seed: int, stream: int) -> torch.Tensor:
        """Teacher state (n, m) float64 at the start of the streams: a draw from the stationary
        law N(0, C) for Gaussian inputs (so the streams are stationary from t = 0), zeros for
        alpha-stable inputs. A pure function of ``(seed, stream)``."""
        rho, _ = self.teacher()
        if self.input_alpha is not None:
            return torch.zeros(n, rho.numel(), dtype=torch.float64)
        s = torch.sqrt(1.0 - rho ** 2)
        C = s[:, None] * s[None, :] / (1.0 - rho[:, None] * rho[None, :])
        evals, evecs = torch.linalg.eigh(C)
        root = evecs * torch.sqrt(torch.clamp(evals, min=0.0))
        g = stream_generator(seed, STREAM_INIT, stream)
        return torch.randn(n, rho.numel(), generator=g, dtype=torch.float64) @ root.T

    def chunk(self, n: int, seed: int, stream: int, index: int, state: torch.Tensor, device="cpu"):
        """Chunk ``index`` of ``n`` ``longmem`` streams: ``(x, y, new_state)``; ``state`` is the
        teacher state (n, m) float64 after chunk ``index - 1`` (:meth:`teacher_init` for 0).
        x, y on ``device``; the state stays on the CPU."""
        g = stream_generator(seed, stream, index)
        T = self.seq_len
        x = self._inputs((n, T, 1), g)
        rho, c = self.teacher()
        s = torch.sqrt(1.0 - rho ** 2)
        xd = x[:, :, 0].double()
        m = state.clone()
        y = torch.empty(n, T, dtype=torch.float64)
        for t in range(T):
            m = rho * m + s * xd[:, t:t + 1]
            y[:, t] = c * m.sum(1)
        y = self._noise(y.float()[:, :, None], g)
        return x.to(device), y.to(device), m

    def loss(self, y_hat: torch.Tensor, y: torch.Tensor, t0: int | None = None) -> torch.Tensor:
        """MSE over ``t >= t0`` (default ``loss_from``; scalar tensor)."""
        t0 = self.loss_from if t0 is None else t0
        return torch.mean((y_hat[:, t0:] - y[:, t0:]) ** 2)


def build_task(name: str, seq_len: int, *, loss_from: int | None = None, delay: int = 5,
               p: float = 1.0, kernel: int = 0, target_noise: float = 0.0,
               input_alpha: float | None = None, n_mem: int = 16, mem_lag_max: int = 10000,
               mem_gamma: float = 0.0, lag_mode: str = "pareto", lag_count: int = 16, lag_lo: int = 8,
               lag_hi: int = 640, lag_alpha: float = 0.6, input_dim: int = 16, n_train: int = 8000) -> Task:
    r"""A validated :class:`Task`.

    Parameters
    ----------
    name : str
        The task, one of :data:`TASKS` (``powerlaw``, ``delay``, ``adding``, ``longmem``,
        ``lagged``; module docstring).
    seq_len : int
        T, steps per sequence (per training chunk for ``longmem``), >= 2 (adding: >= 3).
    loss_from : int or None, optional
        First time step of the loss, in [0, T - 1] (adding: [2, T - 1]); None: T // 2
        (adding: at least 2; lagged: 0; longmem: must be None, the probe measures its last
        chunk).
    delay : int, optional
        L of ``delay``, in [1, T - 1] (default 5).
    p : float, optional
        The exponent of ``powerlaw``'s kernel :math:`w_k \propto (k+1)^{-p}`, > 0.
    kernel : int, optional
        K of ``powerlaw``, in [0, T] (0: T).
    target_noise : float, optional
        :math:`\sigma` >= 0, noise added to every target (a loss floor :math:`\sigma^2`).
    input_alpha : float or None, optional
        Alpha-stable inputs of this index, in [:data:`ALPHA_MIN_FLOAT32`, 2); None (default):
        N(0, 1) inputs. Not for ``adding``.
    n_mem, mem_lag_max, mem_gamma : int, int, float, optional
        The ``longmem`` teacher: memories >= 1, longest time scale >= 2 steps, density exponent
        >= 0 (:func:`levysde.rnn.teacher.teacher_time_scales`).
    lag_mode, lag_count, lag_lo, lag_hi, lag_alpha : optional
        The ``lagged`` task's lags (:func:`levysde.rnn.teacher.lagged_terms`): ``pareto`` or
        ``fixed``; count in [1, lag_hi - lag_lo + 1]; 1 <= lag_lo < lag_hi; Pareto index > 0.
    input_dim : int, optional
        D of ``lagged``, >= 1 (default 16).
    n_train : int, optional
        ``lagged``'s training-set size, >= 1 (default 8000).

    Returns
    -------
    Task
        The task, its fields checked.

    Raises
    ------
    ValueError
        Naming the parameter: unknown ``name`` (allowed :data:`TASKS`); ``seq_len`` < 2 (adding: < 3,
        two marker positions before the loss window are needed); ``loss_from`` not in
        [0, seq_len - 1] (adding: [2, seq_len - 1]; longmem: must be None, the probe window is
        fixed); ``delay`` not in [1, seq_len - 1]; ``p`` not > 0; ``kernel`` not in [0, seq_len];
        ``target_noise`` not finite >= 0; ``input_alpha`` not None or in [0.5, 2) (or given for
        adding); ``n_mem`` < 1; ``mem_lag_max`` < 2; ``mem_gamma`` not finite >= 0; lagged:
        ``lag_mode`` not in :data:`~levysde.rnn.teacher.LAG_MODES`, ``lag_lo`` < 1, ``lag_hi`` <=
        ``lag_lo``, ``lag_count`` not in [1, lag_hi - lag_lo + 1], ``lag_alpha`` not > 0,
        ``input_dim`` < 1, ``n_train`` < 1, ``seq_len`` not above the longest fixed lag (256,
        :data:`~levysde.rnn.teacher.FIXED_LAGS`) with ``lag_mode`` fixed.

    Examples
    --------
    >>> task = build_task("lagged", 16, lag_lo=2, lag_hi=10, lag_count=3, input_dim=2, n_train=8)
    >>> task.n_in, task.loss_from, task.batches_per_epoch(3)
    (2, 0, 3)
    >>> build_task("adding", 10).loss_from
    5
    """
    check_choice("task", name, TASKS)
    adding = name == "adding"
    seq_len = check_int("seq_len", seq_len, 3 if adding else 2,
                        why="the adding task needs two marker positions before the loss window" if adding else "")
    if name == "longmem":
        if loss_from is not None:
            raise ValueError(f"loss_from must be None for the longmem task (the probe measures the last "
                             f"of {PROBE_CHUNKS} chunks; training chunks use every step), got {loss_from!r}")
        loss_from = (PROBE_CHUNKS - 1) * seq_len
    if loss_from is None and name == "lagged":
        loss_from = 0
    if loss_from is None:
        loss_from = max(seq_len // 2, 2) if name == "adding" else seq_len // 2
    lo = 2 if name == "adding" else 0
    hi = PROBE_CHUNKS * seq_len - 1 if name == "longmem" else seq_len - 1
    loss_from = check_int("loss_from", loss_from, lo, hi)
    if name == "delay":
        delay = check_int("delay", delay, 1, seq_len - 1)
    if name == "powerlaw":
        check_real("p", p, 0.0, lo_open=True, why="power-law exponent")
        kernel = check_int("kernel", kernel, 0, seq_len)
    check_real("target_noise", target_noise, 0.0)
    if input_alpha is not None:
        if name == "adding":
            raise ValueError("input_alpha must be None for the adding task (its inputs are uniform values "
                             "and markers)")
        check_real("input_alpha", input_alpha, ALPHA_MIN_FLOAT32, 2.0, hi_open=True,
                   why=f"or None; {ALPHA_MIN_WHY}")
    if name == "longmem":
        teacher_time_scales(n_mem, mem_lag_max, mem_gamma)  # validates the three
    if name == "lagged":
        check_choice("lag_mode", lag_mode, LAG_MODES)
        check_int("input_dim", input_dim, 1)
        check_int("n_train", n_train, 1)
        if lag_mode == "pareto":
            lagged_terms({"lag_count": lag_count, "lag_lo": lag_lo, "lag_hi": lag_hi, "lag_alpha": lag_alpha})
            if int(lag_lo) >= int(seq_len):     # no lag would ever enter the target: it is pure noise
                raise ValueError(f"lag_lo must be below seq_len ({seq_len}): a lag at or beyond the sequence "
                                 f"never enters its target; got {lag_lo}")
        else:   # a lag as long as the sequence would never enter its target
            check_int("seq_len", seq_len, FIXED_LAGS[-1] + 1,
                      why=f"lag_mode 'fixed' has the lags {', '.join(map(str, FIXED_LAGS))}, each shorter "
                          f"than the sequence")
    return Task(name=name, seq_len=seq_len, loss_from=loss_from, delay=int(delay), p=float(p),
                kernel=int(kernel), target_noise=float(target_noise),
                input_alpha=None if input_alpha is None else float(input_alpha), n_mem=int(n_mem),
                mem_lag_max=int(mem_lag_max), mem_gamma=float(mem_gamma), lag_mode=str(lag_mode),
                lag_count=int(lag_count), lag_lo=int(lag_lo), lag_hi=int(lag_hi), lag_alpha=float(lag_alpha),
                input_dim=int(input_dim), n_train=int(n_train))
