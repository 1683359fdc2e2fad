r"""The learnability paper's matched statistic of a trained network, per lag (torch; docs/learnability.md).

For a trained model, its task and a diagnostic set of sequences :math:`(x, y)`, at every lag
:math:`\ell` and every step :math:`t \ge \ell` of the loss window:

.. math::

    \psi_t(\ell) = \sum_q \mu^{(q)}_{t,\ell}\,\delta^{(q)}_t\,v^{(q)}_{t-\ell}

* :math:`\delta_t = W_\mathrm{out}^\top(\hat y_t - y_t)`: the output error sent back to the units
  (the gradient of :math:`(\hat y - y)^2/2` with respect to :math:`h_t`);
* :math:`v_t = (\partial h_t/\partial\theta)[w]`: a Jacobian-vector product of the hidden states
  along one fixed random direction :math:`w` of the trainable parameters (standard normal
  entries from a generator seeded by ``w_seed``, normalised to :math:`\lVert w\rVert_2 = 1` over
  all of them jointly), by forward-mode automatic differentiation (:func:`torch.func.jvp`);
* :math:`\mu_{t,\ell} = \mu_0 + \mu_1`, the first-order diagonal transport over the window of the
  :math:`\ell` steps ending at :math:`t`:

  .. math::

      \mu_0 = \prod_{p=t-\ell+1}^{t} r_p, \qquad
      \mu_1 = \mu_0 \sum_{p=t-\ell+1}^{t} \frac{r^\mathrm{diag}_p}{r_p},

  with the retention :math:`r` clamped to :math:`[10^{-12}, 1]` and
  :math:`r^\mathrm{diag} = J^{(qq)} - r` (``rdiag``) the first-order diagonal correction of the
  one-step Jacobian (:class:`levysde.rnn.models.Trace`; ``first_order=False`` keeps
  :math:`\mu_0` only).

The envelope :math:`f(\ell)` is the mean of :math:`|\mu_0 + \mu_1|` over sequences, units and
every window of :math:`\ell` consecutive steps inside the loss window.

What is returned is not the samples but their **sufficient sums per sequence** (count, sum of
:math:`\psi`, and the empirical characteristic function's cos/sin sums on a grid,
:mod:`levysde.stats.stable_fit`), with the per-sequence envelope: the numpy layer
(:mod:`levysde.inference.learnability_measure`) fits the alpha-stable law, the SNR rule and
the master law from them, and resamples whole sequences for the errors. The characteristic
function's grid of each lag is set from the robust scale (IQR / 2) of that lag's samples in
the first block of sequences.

Source: the protocol of the learnability paper's code (``lorenzolivi/learnability``,
``run_learnability_DGX.py``, read at commit d5efbd2): the same statistic, window, orientation by
the sign of the mean (here: ``|mean|`` enters the SNR), and envelope. GRU and LSTM use the same
``r``/``rdiag`` decomposition of the diagonal Jacobian as the leaky cells (the paper's code has
separate gate-wise kernels for them); for the LSTM the transport is that of the cell state and
``delta``, ``v`` are taken on the hidden state h.
"""
from __future__ import annotations

import numpy as np

from levysde.core.validate import check_array, check_bool, check_int
from levysde.io.runfile import checkpoint_path, load_run
from levysde.rnn._torch import nn, torch
from levysde.rnn.checkpoint import load_checkpoint
from levysde.rnn.models import GRU, LSTM, RNNModel, build_model
from levysde.rnn.tasks import STREAM_PROBE
from levysde.rnn.trainer import TrainConfig
from levysde.stats.stable_fit import ECF_POINTS, ecf_grid, robust_half_iqr

__all__ = ["W_SEED", "LEAK_FLOOR", "PAPER_LAG_GRID", "matched_sums", "direction", "hidden_jvp", "transport_prefix",
           "default_lags", "load_trained", "run_matched_sums"]

#: seed of the random parameter direction w (the paper's default w_seed)
W_SEED = 12345
#: floor of the retention r before its log
LEAK_FLOOR = 1e-12


class _Hidden(nn.Module):
    """``forward(x)`` = the model's hidden states (B, T, H), differentiable, written with
    elementary operations so that forward-mode AD works on every backend (torch's fused
    LSTM kernels on CPU do not support it)."""

    def __init__(self, model: RNNModel):
        super().__init__()
        self.m = model

    def forward(self, x):
        m = self.m
        if not isinstance(m, (GRU, LSTM)):
            return m.hidden_states(x)
        W_ih, W_hh, b_ih, b_hh = m.weights()
        H = m.hidden
        gi_all = x @ W_ih.t() + b_ih
        h = x.new_zeros(x.shape[0], H)
        c = x.new_zeros(x.shape[0], H)
        hs = []
        for gi in gi_all.unbind(1):
            gh = h @ W_hh.t() + b_hh
            if isinstance(m, GRU):
                r = torch.sigmoid(gi[:, :H] + gh[:, :H])
                z = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
                n = torch.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
                h = (1 - z) * n + z * h
            else:
                pre = gi + gh
                i, f = torch.sigmoid(pre[:, :H]), torch.sigmoid(pre[:, H:2 * H])
                g, o = torch.tanh(pre[:, 2 * H:3 * H]), torch.sigmoid(pre[:, 3 * H:])
                c = f * c + i * g
                h = o * torch.tanh(c)
            hs.append(h)
        return torch.stack(hs, 1)


def direction(model: RNNModel, w_seed: int = W_SEED) -> dict:
    r"""The random unit direction :math:`w` of the trainable parameters.

    Standard normal entries from ``torch.Generator().manual_seed(w_seed)`` (drawn on the CPU in
    float64, in the order of ``named_parameters``), divided by their joint Euclidean norm, so
    that :math:`\lVert w \rVert_2 = 1` over all parameters together.

    Parameters
    ----------
    model : RNNModel
        The model (:func:`levysde.rnn.models.build_model`).
    w_seed : int, optional
        The generator's seed (default :data:`W_SEED`, the paper's).

    Returns
    -------
    dict
        ``{name: tensor}`` for every trainable parameter, shaped like it, on its device and in
        its dtype.

    Examples
    --------
    >>> from levysde.rnn.models import build_model
    >>> w = direction(build_model("diaggate", 2, 4, 1, seed=0))
    >>> sorted(w)[:3], round(float(sum((t.double() ** 2).sum() for t in w.values())), 6)
    (['U', 'U_a', 'W'], 1.0)
    """
    g = torch.Generator().manual_seed(int(w_seed))
    w = {k: torch.randn(p.shape, generator=g, dtype=torch.float64)
         for k, p in model.named_parameters() if p.requires_grad}
    norm = torch.sqrt(sum((t * t).sum() for t in w.values()))
    return {k: (t / norm).to(device=p.device, dtype=p.dtype)
            for (k, t), p in zip(w.items(), (p for p in model.parameters() if p.requires_grad), strict=True)}


def hidden_jvp(model: RNNModel, x: torch.Tensor, w: dict) -> torch.Tensor:
    r"""The hidden states' Jacobian-vector product :math:`v_t = (\partial h_t / \partial \theta)\, w`.

    By forward-mode automatic differentiation (:func:`torch.func.jvp`); GRU and LSTM are
    rewritten with elementary operations, which forward mode supports on every backend.

    Parameters
    ----------
    model : RNNModel
        The model.
    x : torch.Tensor
        Inputs (B, T, n_in), on the model's device.
    w : dict
        The direction ``{name: tensor}`` (:func:`direction`).

    Returns
    -------
    torch.Tensor
        (B, T, H): :math:`v_t` for every sequence and step (detached).

    Examples
    --------
    >>> from levysde.rnn.models import build_model
    >>> m = build_model("constgate", 1, 4, 1, seed=0)
    >>> x = torch.randn(2, 8, 1, generator=torch.Generator().manual_seed(0))
    >>> tuple(hidden_jvp(m, x, direction(m)).shape)
    (2, 8, 4)
    """
    mod = _Hidden(model)
    params = {k: p.detach() for k, p in model.named_parameters() if p.requires_grad}
    buffers = {f"m.{k}": b for k, b in model.named_buffers()}

    def h_of(p):
        return torch.func.functional_call(mod, {**{f"m.{k}": v for k, v in p.items()}, **buffers}, (x,))

    _, v = torch.func.jvp(h_of, (params,), ({k: w[k] for k in params},))
    return v.detach()


def transport_prefix(neg_log_r: torch.Tensor, rdiag: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Prefix sums of :math:`\log r` and :math:`r_{\mathrm{diag}} / r`, from which every window's transport follows.

    Parameters
    ----------
    neg_log_r : torch.Tensor
        (B, T, H): :math:`-\log r_t`, the retention's negative log (:class:`levysde.rnn.models.Trace`).
    rdiag : torch.Tensor
        (B, T, H): the first-order diagonal correction :math:`J^{(qq)}_t - r_t`.

    Returns
    -------
    cs_log : torch.Tensor
        (B, T + 1, H) float64, leading zero: prefix sums of :math:`\log r`, :math:`r` clamped
        to [:data:`LEAK_FLOOR`, 1].
    cs_ratio : torch.Tensor
        (B, T + 1, H) float64, leading zero: prefix sums of :math:`r_{\mathrm{diag}} / r`.

    Notes
    -----
    The window of steps :math:`a, \dots, b - 1` has

    .. math::

        \mu_0 = \prod_{p=a}^{b-1} r_p = e^{\mathrm{cs\_log}[b] - \mathrm{cs\_log}[a]}, \qquad
        \mu_1 = \mu_0 \sum_{p=a}^{b-1} \frac{r_{\mathrm{diag},p}}{r_p}
              = \mu_0\,(\mathrm{cs\_ratio}[b] - \mathrm{cs\_ratio}[a]).

    Examples
    --------
    >>> nlr = torch.full((1, 3, 1), 0.5)
    >>> cs_log, cs_ratio = transport_prefix(nlr, torch.zeros(1, 3, 1))
    >>> cs_log[0, :, 0].tolist()
    [0.0, -0.5, -1.0, -1.5]
    """
    log_r = torch.clamp(-neg_log_r.double(), min=float(np.log(LEAK_FLOOR)), max=0.0)
    zero = log_r.new_zeros(log_r.shape[0], 1, log_r.shape[2])
    cs_log = torch.cat([zero, log_r.cumsum(1)], 1)
    cs_ratio = torch.cat([zero, (rdiag.double() / torch.exp(log_r)).cumsum(1)], 1)
    return cs_log, cs_ratio


def _trace(model: RNNModel, x: torch.Tensor):
    """(y_hat, neg_log_r, rdiag) of one no-grad pass."""
    if isinstance(model, (GRU, LSTM)):
        tr = model.trace(x)
        return tr.y, tr.neg_log_r, tr.jac - tr.r
    tr = model.trace(x, rdiag=True)
    return tr.y, tr.neg_log_r, tr.rdiag


def matched_sums(model: RNNModel, x: torch.Tensor, y: torch.Tensor, lags, *, loss_from: int = 0,
                 w_seed: int = W_SEED, first_order: bool = True, block: int = 64,
                 n_points: int = ECF_POINTS) -> dict:
    r"""Per-sequence sufficient sums of the matched statistic :math:`\psi_t(\ell)` and the envelope (module docstring).

    Parameters
    ----------
    model : RNNModel
        A trained :class:`~levysde.rnn.models.RNNModel` (one output or more).
    x, y : torch.Tensor
        The diagnostic inputs (S, T, n_in), on the model's device, and their targets (S, T, n_out).
    lags : array_like of int
        (L,): increasing integers in [1, T - loss_from - 1].
    loss_from : int, optional
        First step of the loss window (the task's ``loss_from``), in [0, T - 2]; default 0.
    w_seed : int, optional
        Seed of the parameter direction (:func:`direction`; default :data:`W_SEED`).
    first_order : bool, optional
        Include :math:`\mu_1` (True, the paper's choice) or use :math:`\mu_0` only.
    block : int, optional
        Sequences per forward pass, >= 1 (memory: about ``block * T * H * 8`` bytes times a few).
    n_points : int, optional
        Grid points K of the characteristic function, >= 4.

    Returns
    -------
    dict
        numpy float64 arrays: ``lags`` (L,), ``count`` (L, S) samples of each sequence,
        ``total`` (L, S) sums of :math:`\psi`, ``t`` (L, K) the ECF grid, ``cos``, ``sin``
        (L, S, K) the ECF sums :math:`\sum \cos(t_k \psi)`, :math:`\sum \sin(t_k \psi)`,
        ``envelope`` (L, S) each sequence's mean :math:`|\mu_0 + \mu_1|` over units and
        windows, and ``w_norm_check`` (the direction's norm, 1 up to rounding).

    Raises
    ------
    ValueError
        For lags outside [1, T - loss_from - 1] or not integers, mismatched shapes, a
        statistic that is not finite (a diverged model), or a degenerate lag (all samples of
        :math:`\psi` equal in the first block).

    Notes
    -----
    At every lag :math:`\ell` and step :math:`t \ge \ell` of the loss window,

    .. math::

        \psi_t(\ell) = \sum_q \mu^{(q)}_{t,\ell}\, \delta^{(q)}_t\, v^{(q)}_{t-\ell},

    :math:`\delta_t = W_{\mathrm{out}}^\top (\hat y_t - y_t)`, :math:`v_t` the hidden
    states' Jacobian-vector product along :math:`w` (:func:`hidden_jvp`), and
    :math:`\mu = \mu_0 + \mu_1` the first-order diagonal transport over the window of the
    :math:`\ell` steps ending at :math:`t` (:func:`transport_prefix`).

    References
    ----------
    The learnability paper's protocol (:doc:`/learnability`); code ``lorenzolivi/learnability``.

    Examples
    --------
    >>> from levysde.rnn.models import build_model
    >>> g = torch.Generator().manual_seed(0)
    >>> m = build_model("diaggate", 1, 4, 1, seed=0)
    >>> x, y = torch.randn(3, 8, 1, generator=g), torch.randn(3, 8, 1, generator=g)
    >>> s = matched_sums(m, x, y, [1, 2, 4], n_points=8)
    >>> s["count"][:, 0].tolist(), s["cos"].shape, round(float(s["w_norm_check"]), 6)
    ([7.0, 6.0, 4.0], (3, 3, 8), 1.0)
    """
    check_bool("first_order", first_order)
    block = check_int("block", block, 1)
    if x.dim() != 3 or y.dim() != 3 or x.shape[:2] != y.shape[:2]:
        raise ValueError(f"x (S, T, n_in) and y (S, T, n_out) must agree in S and T; got {tuple(x.shape)} "
                         f"and {tuple(y.shape)}")
    S, T = int(x.shape[0]), int(x.shape[1])
    loss_from = check_int("loss_from", loss_from, 0, T - 2)
    lag = check_array("lags", lags, ndim=1, min_size=1, lo=1, hi=T - loss_from - 1, increasing=True,
                      why="integers inside the loss window").astype(np.int64)
    if not np.array_equal(lag, np.asarray(lags, dtype=float)):
        raise ValueError("lags must be integers")
    L, K = lag.size, check_int("n_points", n_points, 4)
    w = direction(model, w_seed)
    w_out = model.readout.weight.detach()                     # (n_out, H)
    out = {k: np.zeros((L, S)) for k in ("count", "total", "envelope")}
    out["cos"], out["sin"] = np.zeros((L, S, K)), np.zeros((L, S, K))
    out["t"] = np.zeros((L, K))
    model.eval()
    for b0 in range(0, S, block):
        xb, yb = x[b0:b0 + block], y[b0:b0 + block]
        with torch.no_grad():
            y_hat, nlr, rdiag = _trace(model, xb)
        v = hidden_jvp(model, xb, w).double()
        delta = ((y_hat - yb).double() @ w_out.double())          # (B, T, H)
        if not first_order:
            rdiag = torch.zeros_like(rdiag)
        cs_log, cs_ratio = transport_prefix(nlr[:, loss_from:], rdiag[:, loss_from:])
        d, vv = delta[:, loss_from:], v[:, loss_from:]
        Tw = T - loss_from
        sl = slice(b0, b0 + xb.shape[0])
        for i, ell in enumerate(lag.tolist()):
            # matched window: steps t-l+1..t for t = l..Tw-1 (prefix indices t+1 and t-l+1)
            mu0 = torch.exp(cs_log[:, ell + 1:] - cs_log[:, 1:Tw - ell + 1])
            mu = mu0 * (1.0 + cs_ratio[:, ell + 1:] - cs_ratio[:, 1:Tw - ell + 1])
            psi = (mu * d[:, ell:] * vv[:, :Tw - ell]).sum(2)           # (B, Tw - l)
            if not bool(torch.isfinite(psi).all()):
                raise ValueError(f"the matched statistic at lag {ell} is not finite (a diverged model?)")
            if b0 == 0:
                out["t"][i] = ecf_grid(robust_half_iqr(psi.cpu().numpy()), K)
            tk = torch.as_tensor(out["t"][i], dtype=torch.float64, device=psi.device)
            arg = psi[:, :, None] * tk
            out["cos"][i, sl] = torch.cos(arg).sum(1).cpu().numpy()
            out["sin"][i, sl] = torch.sin(arg).sum(1).cpu().numpy()
            out["count"][i, sl] = psi.shape[1]
            out["total"][i, sl] = psi.sum(1).cpu().numpy()
            # envelope windows: steps a..a+l-1 for a = 0..Tw-l
            e0 = torch.exp(cs_log[:, ell:] - cs_log[:, :Tw - ell + 1])
            env = (e0 * (1.0 + cs_ratio[:, ell:] - cs_ratio[:, :Tw - ell + 1])).abs().mean((1, 2))
            out["envelope"][i, sl] = env.cpu().numpy()
    out["lags"] = lag.astype(np.float64)
    out["w_norm_check"] = np.float64(float(torch.sqrt(sum((t.double() ** 2).sum() for t in w.values()))))
    return out


#: the paper's lag grid of the matched statistic: int(linspace(4, 256, 128))
PAPER_LAG_GRID = (4, 256, 128)


def default_lags(window: int, lo: int = PAPER_LAG_GRID[0], hi: int = PAPER_LAG_GRID[1],
                 n: int = PAPER_LAG_GRID[2]) -> np.ndarray:
    """Distinct integer lags ``int(linspace(lo, min(hi, window - 1), n))``.

    The paper's grid (4 ... 256, 128 lags, :data:`PAPER_LAG_GRID`), cut to the loss window of
    ``window`` steps.

    Parameters
    ----------
    window : int
        The steps of the loss window.
    lo, hi : int, optional
        The grid's ends (default 4 and 256); ``hi`` is cut to ``window - 1``.
    n : int, optional
        Grid points before duplicates are dropped, >= 2 (default 128).

    Returns
    -------
    numpy.ndarray
        int64, increasing, distinct (at most ``n``).

    Raises
    ------
    ValueError
        Unless ``1 <= lo < min(hi, window - 1)`` and ``n >= 2``.

    Examples
    --------
    >>> default_lags(10).tolist()
    [4, 5, 6, 7, 8, 9]
    >>> default_lags(1000, n=5).tolist()
    [4, 67, 130, 193, 256]
    """
    top = min(int(hi), int(window) - 1)
    lo = check_int("lag lo", lo, 1)
    if not lo < top:
        raise ValueError(f"lags: lo = {lo} must be below min(hi, window - 1) = {top} (the loss window has "
                         f"{window} steps)")
    return np.unique(np.linspace(lo, top, check_int("lag n", n, 2)).astype(np.int64))


def load_trained(run_path: str, device: str = "cpu"):
    """The trained model of a ``levysde train`` run, rebuilt from its run file and checkpoint.

    Parameters
    ----------
    run_path : str
        The run file ``RUN.npz``; its checkpoint ``RUN.ckpt`` lies beside it.
    device : str, optional
        The torch device of the model (default ``cpu``).

    Returns
    -------
    model : RNNModel
        Rebuilt from the run's config with the weights of its checkpoint (the state after the
        last step saved), in eval mode on ``device``.
    task : Task
        The run's task (:meth:`levysde.rnn.trainer.TrainConfig.make_task`).
    config : dict
        The run file's config.

    Raises
    ------
    ValueError
        One line, when the run file or its checkpoint cannot be read, does not fit the config,
        or the checkpoint's step is not the run file's last record.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.rnn.trainer import TrainConfig, train
    >>> out = os.path.join(tempfile.mkdtemp(), "run.npz")
    >>> cfg = TrainConfig(model="diaggate", hidden=4, task="lagged", seq_len=16, lag_lo=2, lag_hi=6,
    ...                   lag_count=2, input_dim=2, n_train=8, batch=4, probe_batch=8, steps=2, record_every=2)
    >>> _ = train(cfg, out)
    >>> model, task, config = load_trained(out)
    >>> type(model).__name__, task.name, config["hidden"], model.training
    ('DiagGate', 'lagged', 4, False)
    """
    run = load_run(run_path)
    st = load_checkpoint(checkpoint_path(run_path))
    cfg = TrainConfig.from_dict(st["config"])
    task = cfg.make_task()
    t_max = cfg.t_max if cfg.t_max is not None else float(cfg.seq_len)
    model = build_model(cfg.model, task.n_in, cfg.hidden, task.n_out, init=cfg.init, t_max=t_max,
                        gate_a=cfg.gate_a, seed=cfg.seed, gate_tau0=cfg.gate_tau0, layernorm=cfg.layernorm)
    try:
        model.load_state_dict(st["model"])
    except (RuntimeError, KeyError) as exc:
        raise ValueError(f"checkpoint {checkpoint_path(run_path)!r} does not fit the run's model: "
                         f"{str(exc).splitlines()[0][:160]}") from None
    if int(st["step"]) != int(np.asarray(run["step"])[-1]):
        raise ValueError(f"checkpoint step {int(st['step'])} differs from the run file's last record "
                         f"{int(np.asarray(run['step'])[-1])}")
    return model.to(device).eval(), task, run["config"]


def run_matched_sums(run_path: str, *, sequences: int | None = None, lags=None, w_seed: int = W_SEED,
                     first_order: bool = True, block: int = 64, device: str = "cpu",
                     threads: int | None = None) -> tuple[dict, dict]:
    """:func:`matched_sums` of a saved run on its diagnostic set.

    The diagnostic set is the task's probe stream (``task.batch(S, seed, STREAM_PROBE, 0)``,
    for ``lagged`` the diagnostic set of the paper).

    Parameters
    ----------
    run_path : str
        The run file ``RUN.npz`` (with its checkpoint beside it, :func:`load_trained`).
    sequences : int or None, optional
        S, the diagnostic sequences, >= 8; None: the run's probe batch.
    lags : array_like of int or None, optional
        The lags; None: :func:`default_lags` of the loss window.
    w_seed, first_order, block
        As :func:`matched_sums`.
    device : str, optional
        The torch device (default ``cpu``).
    threads : int or None, optional
        torch's CPU threads for the computation, >= 1 (restored after); None: unchanged.

    Returns
    -------
    sums : dict
        As :func:`matched_sums` returns.
    info : dict
        The settings and the run's model, hidden, task, optimizer, seed, seq_len, loss_from,
        sequences, w_seed, first_order, lag_mode.

    Raises
    ------
    ValueError
        As :func:`load_trained` and :func:`matched_sums`; ``sequences`` < 8.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.rnn.trainer import TrainConfig, train
    >>> out = os.path.join(tempfile.mkdtemp(), "run.npz")
    >>> cfg = TrainConfig(model="diaggate", hidden=4, task="lagged", seq_len=16, lag_lo=2, lag_hi=6,
    ...                   lag_count=2, input_dim=2, n_train=8, batch=4, probe_batch=8, steps=2, record_every=2)
    >>> _ = train(cfg, out)
    >>> sums, info = run_matched_sums(out, lags=[1, 2, 4])
    >>> sums["total"].shape, info["sequences"], info["model"]
    ((3, 8), 8, 'diaggate')
    """
    if threads is not None:
        before = torch.get_num_threads()
        torch.set_num_threads(check_int("threads", threads, 1))
        try:
            return run_matched_sums(run_path, sequences=sequences, lags=lags, w_seed=w_seed,
                                    first_order=first_order, block=block, device=device)
        finally:
            torch.set_num_threads(before)
    model, task, config = load_trained(run_path, device)
    S = check_int("sequences", sequences if sequences is not None else
                  (config.get("probe_batch") or config["batch"]), 8)
    x, y = task.batch(S, int(config["seed"]), STREAM_PROBE, 0, device)
    x, y = x[:S], y[:S]
    window = task.seq_len - task.loss_from
    lag = default_lags(window) if lags is None else np.asarray(lags)
    torch.manual_seed(0)
    sums = matched_sums(model, x, y, lag, loss_from=task.loss_from, w_seed=w_seed, first_order=first_order,
                        block=block)
    info = {"run": str(run_path), "model": config["model"], "hidden": config["hidden"], "task": config["task"],
            "optimizer": config["optimizer"], "seed": config["seed"], "seq_len": task.seq_len,
            "loss_from": task.loss_from, "sequences": S, "w_seed": int(w_seed), "first_order": bool(first_order),
            "lag_mode": config.get("lag_mode")}
    return sums, info
