"""Training loop that records empirical time-scale trajectories (THEORY.md §1, §9).

At steps 0, K, 2K, ... and at the last step (K = ``record_every``), on a fixed probe batch:

* ``mu_bar_q = mean_{b, t >= loss_from}[-log r_t^(q)]``, ``zeta_q = log mu_bar_q``.
  ``-log r`` comes from the gate pre-activation (softplus), so saturated gates never give
  log(0). Floor: ``mu_bar_q`` is raised to :data:`MU_FLOOR` (= 1e-12, a time scale of
  1e12 steps) if smaller; each raise is counted in ``zeta_clips``.
* ``mu_bar^(1)_q = mean[-log |J_t^(qq)|]`` from the analytic Jacobian diagonal
  (:mod:`levysde.rnn.models`); ``|J|`` below :data:`JAC_FLOOR` (= 1e-30) is raised to it and
  counted (``jac_clips``); neurons with ``mu_bar^(1)_q <= 0`` (expanding) get NaN in
  ``zeta_jac`` and are counted (``jac_masked``): a negative number is never logged.
* ``Lambda_q``: SGD -> lr; Adam/AdamW -> ``lr * g^T P g / g^T g`` over neuron q's parameter
  rows (:meth:`RNNModel.neuron_rows`; the readout is not included), ``P = diag(1/(sqrt(v_hat)
  + eps))``, ``v_hat`` = Adam's bias-corrected second moment (before the first step: ``g^2``,
  the value Adam's first step uses), g = gradient of the probe loss. If ``g^T g = 0`` the
  quotient is undefined and the mean of P over the rows is used instead.
* the probe loss, and the ELR envelope ``f(l) = sum_q Lambda_q exp(-l mu_bar_q) / sum_q Lambda_q``
  on an integer log grid of exactly ``n_lags`` lags ``1..lag_max`` (:func:`lag_grid`);
  optionally the measured transport. Numpy warnings from non-finite intermediate values
  (a diverging run) are silenced here; divergence is reported by :class:`TrainingDiverged`.

Injected forcing (negative control, anti-collapse paper): after every optimizer step,
``p <- p + inject_scale * X`` on the selected entries (``inject_target``: ``recurrent`` =
hidden-to-hidden weights; ``gate`` = retention-gate parameters), X i.i.d. standard symmetric
alpha-stable (characteristic function exp(-|k|^alpha)), Chambers-Mallows-Stuck
(:func:`sas_noise`), drawn from a generator seeded by ``(seed, step)``.

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
import torch

from .models import INITS, MODELS, RNNModel, build_model
from .runfile import check_writable, checkpoint_path, load_checkpoint, save_checkpoint, save_run
from .tasks import STREAM_NOISE, STREAM_PROBE, STREAM_TRAIN, TASKS, Task, build_task, stream_generator

OPTIMIZERS = ("sgd", "adam", "adamw")
INJECT_TARGETS = ("recurrent", "gate")
#: floor of mu_bar_q (per step): zeta >= log(1e-12) ~ -27.6
MU_FLOOR = 1e-12
#: floor of |J_t^(qq)| before the log
JAC_FLOOR = 1e-30
#: a retention within this of 0 or 1 counts as saturated (diagnostic only)
SAT_TOL = 1e-6


class TrainingDiverged(RuntimeError):
    """The training loss became NaN/inf; the records written so far are kept."""


@dataclass
class TrainConfig:
    """Everything that defines a run (stored as JSON in the run file's ``config``).

    model         one of ConstGate.. (``MODELS``)          hidden      H >= 1
    optimizer     sgd | adam | adamw                        lr          > 0
    weight_decay  >= 0; None = optimizer default (AdamW 0.01, else 0)
    gate_decay    False: no weight decay on retention-gate parameters
    clip          max gradient norm (> 0) or None
    task          powerlaw | delay | adding; ``seq_len`` >= 2; ``loss_from`` (None: seq_len//2)
    delay, p, kernel  task parameters (see :mod:`.tasks`)
    batch, probe_batch  >= 1 (probe_batch None: = batch)
    steps >= 0, record_every >= 1, seed (int >= 0)
    init          default | chrono; t_max (> 2) for chrono (None: seq_len)
    gate_a        ConstGate constant in (0, 1)
    inject_alpha  None (off) or in (0, 2]; inject_scale >= 0; inject_target recurrent | gate
    n_lags >= 2, lag_max >= n_lags (integer log grid 1..lag_max, n_lags points), transport (bool)
    device        cpu | cuda; threads >= 1 or None (leave torch's setting)
    """

    model: str = "diaggate"
    hidden: int = 64
    optimizer: str = "adamw"
    lr: float = 3e-3
    weight_decay: float | None = None
    gate_decay: bool = True
    clip: float | None = None
    task: str = "powerlaw"
    seq_len: int = 200
    loss_from: int | None = None
    delay: int = 5
    p: float = 1.0
    kernel: int = 0
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
    n_lags: int = 40
    lag_max: int = 10000
    transport: bool = False
    device: str = "cpu"
    threads: int | None = None

    def validate(self) -> "TrainConfig":
        """Raise ValueError naming the first bad field and its allowed range; return self."""
        def need(ok, name, allowed):
            if not ok:
                raise ValueError(f"{name} must be {allowed}, got {getattr(self, name)!r}")

        def is_int(v):
            return isinstance(v, (int, np.integer)) and not isinstance(v, bool)

        def is_num(v):
            return isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool) \
                and math.isfinite(v)

        need(self.model in MODELS, "model", f"one of {MODELS}")
        need(is_int(self.hidden) and self.hidden >= 1, "hidden", "an integer >= 1")
        need(self.optimizer in OPTIMIZERS, "optimizer", f"one of {OPTIMIZERS}")
        need(is_num(self.lr) and self.lr > 0, "lr", "a finite number > 0")
        need(self.weight_decay is None or (is_num(self.weight_decay) and self.weight_decay >= 0),
             "weight_decay", "None or a finite number >= 0")
        need(isinstance(self.gate_decay, bool), "gate_decay", "a bool")
        need(self.clip is None or (is_num(self.clip) and self.clip > 0), "clip", "None or a number > 0")
        need(self.task in TASKS, "task", f"one of {TASKS}")
        need(is_int(self.batch) and self.batch >= 1, "batch", "an integer >= 1")
        need(self.probe_batch is None or (is_int(self.probe_batch) and self.probe_batch >= 1),
             "probe_batch", "None or an integer >= 1")
        need(is_int(self.steps) and self.steps >= 0, "steps", "an integer >= 0")
        need(is_int(self.record_every) and self.record_every >= 1, "record_every", "an integer >= 1")
        need(is_int(self.seed) and 0 <= self.seed < 2 ** 32, "seed", "an integer in [0, 2^32)")
        need(self.init in INITS, "init", f"one of {INITS}")
        need(self.t_max is None or (is_num(self.t_max) and self.t_max > 2), "t_max", "None or a number > 2")
        need(is_num(self.gate_a) and 0 < self.gate_a < 1, "gate_a", "a number in (0, 1)")
        need(self.inject_alpha is None or (is_num(self.inject_alpha) and 0 < self.inject_alpha <= 2),
             "inject_alpha", "None or a number in (0, 2]")
        need(is_num(self.inject_scale) and self.inject_scale >= 0, "inject_scale", "a finite number >= 0")
        need(self.inject_target in INJECT_TARGETS, "inject_target", f"one of {INJECT_TARGETS}")
        need(is_int(self.n_lags) and self.n_lags >= 2, "n_lags", "an integer >= 2")
        need(is_int(self.lag_max) and self.lag_max >= 2, "lag_max", "an integer >= 2")
        need(self.lag_max >= self.n_lags, "n_lags", f"<= lag_max = {self.lag_max} (distinct integer lags)")
        need(isinstance(self.transport, bool), "transport", "a bool")
        need(self.device in ("cpu", "cuda"), "device", "'cpu' or 'cuda'")
        need(self.threads is None or (is_int(self.threads) and self.threads >= 1), "threads",
             "None or an integer >= 1")
        self.make_task()  # validates seq_len, loss_from, delay, p, kernel
        return self

    def make_task(self) -> Task:
        return build_task(self.task, self.seq_len, loss_from=self.loss_from, delay=self.delay,
                          p=self.p, kernel=self.kernel)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        """Rebuild from a run file's config (extra keys such as ``kind``, versions are ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names}).validate()


# --------------------------------------------------------------------------------------
# pieces with independent tests
# --------------------------------------------------------------------------------------
def sas_noise(shape, alpha: float, generator: torch.Generator | None = None,
              dtype=torch.float32) -> torch.Tensor:
    """Standard symmetric alpha-stable samples (E exp(ikX) = exp(-|k|^alpha)), Chambers-Mallows-Stuck.

    ``X = sin(alpha V) / cos(V)^(1/alpha) * (cos((1 - alpha) V) / W)^((1 - alpha)/alpha)``,
    V ~ U(-pi/2, pi/2), W ~ Exp(1); alpha = 1 gives Cauchy tan(V); alpha = 2 gives N(0, 2).
    Computed in float64, returned as ``dtype`` on CPU. Raises ValueError unless 0 < alpha <= 2.
    """
    if not (0 < alpha <= 2):
        raise ValueError(f"alpha must be in (0, 2], got {alpha!r}")
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
    return x.to(dtype)


def lambda_rayleigh(g: torch.Tensor, v_hat: torch.Tensor, lr: float, eps: float) -> float:
    """``lr * g^T P g / g^T g`` with ``P = diag(1/(sqrt(v_hat) + eps))`` for one neuron's rows
    (THEORY §9). ``g``, ``v_hat``: same shape (v_hat >= 0). Returns lr * mean(P) if g = 0."""
    g2 = g.double() ** 2
    P = 1.0 / (torch.sqrt(v_hat.double()) + eps)
    den = g2.sum()
    if den == 0:
        return float(lr * P.mean())
    return float(lr * (g2 * P).sum() / den)


def neuron_lambda(model: RNNModel, optimizer: torch.optim.Optimizer, kind: str) -> np.ndarray:
    """Lambda_q for all H neurons, from the current ``.grad`` of the model and Adam's state.

    Returns float64 (H,). SGD: lr everywhere."""
    H = model.hidden
    group = optimizer.param_groups[0]
    lr = float(group["lr"])
    if kind == "sgd":
        return np.full(H, lr)
    eps = float(group["eps"])
    beta2 = float(group["betas"][1])
    num = torch.zeros(H, dtype=torch.float64)
    den = torch.zeros(H, dtype=torch.float64)
    psum = torch.zeros(H, dtype=torch.float64)
    cnt = torch.zeros(H, dtype=torch.float64)
    for p, k in model.neuron_rows():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        st = optimizer.state.get(p, {})
        if "exp_avg_sq" in st:
            step = float(st["step"])
            v_hat = st["exp_avg_sq"] / (1.0 - beta2 ** step)
        else:
            v_hat = g * g
        g2 = (g.detach().double() ** 2).reshape(k, H, -1).cpu()
        P = (1.0 / (torch.sqrt(v_hat.detach().double()) + eps)).reshape(k, H, -1).cpu()
        num += (g2 * P).sum((0, 2))
        den += g2.sum((0, 2))
        psum += P.sum((0, 2))
        cnt += k * P.shape[2]
    lam = torch.where(den > 0, num / torch.where(den > 0, den, 1.0), psum / cnt)
    return (lr * lam).numpy()


def lag_grid(n_lags: int, lag_max: int) -> np.ndarray:
    """Exactly ``n_lags`` distinct integer lags from 1 to ``lag_max``, close to a log grid, float64.

    ``round(geomspace(1, lag_max, n_lags))`` repeats small integers; each repeat is moved to
    the next free integer (and the top end is kept at ``lag_max``), so the grid is linear
    (1, 2, 3, ...) where the log spacing is below 1 and logarithmic above.
    Raises ValueError unless 2 <= n_lags <= lag_max."""
    n_lags, lag_max = int(n_lags), int(lag_max)
    if not 2 <= n_lags <= lag_max:
        raise ValueError(f"n_lags must be in [2, lag_max = {lag_max}], got {n_lags}")
    lags = np.round(np.geomspace(1.0, lag_max, n_lags)).astype(np.int64)
    lags[0], lags[-1] = 1, lag_max
    for i in range(1, n_lags):               # strictly increasing
        lags[i] = max(lags[i], lags[i - 1] + 1)
    lags[-1] = lag_max
    for i in range(n_lags - 2, -1, -1):      # ... and at most lag_max (n_lags <= lag_max keeps lags[0] = 1)
        lags[i] = min(lags[i], lags[i + 1] - 1)
    return lags.astype(np.float64)


def envelope(mu_bar: np.ndarray, lam: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """ELR envelope ``f(l) = sum_q Lambda_q exp(-l mu_bar_q) / sum_q Lambda_q`` (THEORY §9), (n_lags,)."""
    with np.errstate(all="ignore"):  # inf/NaN Lambda of a diverging run: NaN envelope, no warning
        w = lam / lam.sum()
        return np.exp(-np.outer(lags, mu_bar)) @ w


def record_stats(model: RNNModel, task: Task, x: torch.Tensor, y: torch.Tensor,
                 optimizer: torch.optim.Optimizer, kind: str, lags: np.ndarray,
                 transport: bool = False) -> dict:
    """One record on the probe batch ``(x, y)`` (module docstring). Leaves ``.grad`` zeroed.

    Returns a dict of numpy values: zeta, zeta_jac, Lambda (H,), loss, envelope (n_lags,),
    zeta_clips, jac_masked, jac_clips, saturated[, transport (n_lags,)]."""
    with np.errstate(all="ignore"):  # divergence is detected and reported, not warned about
        return _record_stats(model, task, x, y, optimizer, kind, lags, transport)


def _record_stats(model, task, x, y, optimizer, kind, lags, transport):
    optimizer.zero_grad(set_to_none=True)
    loss = task.loss(model(x), y)
    loss.backward()
    lam = neuron_lambda(model, optimizer, kind)
    optimizer.zero_grad(set_to_none=True)
    tr = model.trace(x)
    t0 = task.loss_from
    nlr = tr.neg_log_r[:, t0:].double()
    mu = nlr.mean((0, 1)).cpu().numpy()
    if not np.all(np.isfinite(mu)):
        raise TrainingDiverged("non-finite retention statistics (mu_bar) on the probe batch")
    zeta_clips = int((mu < MU_FLOOR).sum())
    mu = np.maximum(mu, MU_FLOOR)
    aj = tr.jac[:, t0:].double().abs()
    jac_clips = int((aj < JAC_FLOOR).sum())
    mu1 = (-torch.log(torch.clamp(aj, min=JAC_FLOOR))).mean((0, 1)).cpu().numpy()
    if np.any(np.isnan(mu1)):
        raise TrainingDiverged("non-finite Jacobian diagonal on the probe batch")
    masked = ~(mu1 > 0)
    zeta_jac = np.full(mu1.shape, np.nan)
    zeta_jac[~masked] = np.log(mu1[~masked])
    r = tr.r[:, t0:]
    sat = float(((r < SAT_TOL) | (r > 1 - SAT_TOL)).double().mean())
    out = dict(zeta=np.log(mu), zeta_jac=zeta_jac, Lambda=lam, loss=float(loss.detach()),
               envelope=envelope(mu, lam, lags), zeta_clips=zeta_clips,
               jac_masked=int(masked.sum()), jac_clips=jac_clips, saturated=sat)
    if transport:
        out["transport"] = measured_transport(nlr, lam, lags)
    return out


def measured_transport(neg_log_r: torch.Tensor, lam: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Lambda-weighted ``<prod_{k=0}^{l-1} r_{t-k}>`` over batch and window start, per lag.

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


# --------------------------------------------------------------------------------------
# the loop
# --------------------------------------------------------------------------------------
def _make_optimizer(model: RNNModel, cfg: TrainConfig):
    """Optimizer plus the list of ``(param, keep_mask)`` whose decay is applied by hand
    (fused GRU/LSTM tensors whose gate rows are excluded from decay)."""
    wd = cfg.weight_decay if cfg.weight_decay is not None else (0.01 if cfg.optimizer == "adamw" else 0.0)
    decay, no_decay, manual = [], [], []
    for p in model.parameters():
        m = model.gate_mask(p)
        if cfg.gate_decay or m is False:
            decay.append(p)
        elif m is True:
            no_decay.append(p)
        else:
            no_decay.append(p)
            manual.append((p, ~m))
    groups = [{"params": decay, "weight_decay": wd}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[cfg.optimizer]
    opt = cls(groups, lr=cfg.lr)
    return opt, manual, wd


def apply_manual_decay(manual, optimizer: str, lr: float, wd: float) -> None:
    """Weight decay on the non-gate rows of fused tensors, just before ``optimizer.step()``.

    AdamW: decoupled, ``p <- p - lr * wd * p`` on those entries (what AdamW does before its
    update). SGD/Adam: coupled L2, ``grad <- grad + wd * p`` on those entries."""
    if not manual or wd <= 0:
        return
    with torch.no_grad():
        for p, keep in manual:
            if optimizer == "adamw":
                p.sub_(lr * wd * p * keep)
            elif p.grad is not None:
                p.grad.add_(wd * p * keep)


def _records_to_arrays(rec: dict, lags: np.ndarray, H: int) -> dict:
    n_l = len(lags)
    arr = {
        "zeta": np.array(rec["zeta"], dtype=np.float64).reshape(-1, H),
        "zeta_jac": np.array(rec["zeta_jac"], dtype=np.float64).reshape(-1, H),
        "step": np.array(rec["step"], dtype=np.int64),
        "Lambda": np.array(rec["Lambda"], dtype=np.float64).reshape(-1, H),
        "loss": np.array(rec["loss"], dtype=np.float64),
        "train_loss": np.array(rec["train_loss"], dtype=np.float64),
        "lags": lags,
        "envelope": np.array(rec["envelope"], dtype=np.float64).reshape(-1, n_l),
        "zeta_clips": np.array(rec["zeta_clips"], dtype=np.int64),
        "jac_masked": np.array(rec["jac_masked"], dtype=np.int64),
        "jac_clips": np.array(rec["jac_clips"], dtype=np.int64),
        "saturated": np.array(rec["saturated"], dtype=np.float64),
        "wall": np.array(rec["wall"], dtype=np.float64),
    }
    if "transport" in rec:
        arr["transport"] = np.array(rec["transport"], dtype=np.float64).reshape(-1, n_l)
    return arr


_RESUME_FREE = ("steps", "device", "threads")


def _records_to_tensors(rec: dict, lags: np.ndarray, H: int) -> dict:
    """Records as tensors (the checkpoint holds no numpy objects: ``weights_only`` loading)."""
    arr = _records_to_arrays(rec, lags, H)
    return {k: torch.from_numpy(np.ascontiguousarray(arr[k])) for k in rec}


def _records_from_tensors(t: dict, keys) -> dict:
    """Inverse of :func:`_records_to_tensors`: lists of per-record numpy rows / scalars."""
    missing = [k for k in keys if k not in t]
    if missing:
        raise ValueError(f"checkpoint records miss {missing}")
    return {k: list(t[k].numpy()) for k in keys}


def full_config(cfg: TrainConfig, task: Task, lags: np.ndarray) -> dict:
    """The JSON config stored in the run file."""
    from .. import __version__

    d = cfg.to_dict()
    d.update(kind="rnn", torch_version=str(torch.__version__), levysde_version=__version__,
             n_in=task.n_in, n_out=task.n_out, loss_from_resolved=task.loss_from,
             inject={"alpha": cfg.inject_alpha, "scale": cfg.inject_scale, "target": cfg.inject_target,
                     "on": cfg.inject_alpha is not None and cfg.inject_scale > 0},
             floors={"mu_bar": MU_FLOOR, "jac": JAC_FLOOR, "saturation": SAT_TOL})
    return d


def train(cfg: TrainConfig, out: str | None = None, *, resume: bool = False, force: bool = False,
          progress: bool = False, stop_after: int | None = None) -> dict:
    """Train ``cfg.model`` on ``cfg.task`` and record zeta trajectories.

    ``out``: run-file path (.npz), rewritten atomically after every record, with a checkpoint
    ``RUN.ckpt`` next to it; ``None``: nothing written. ``resume``: continue from the
    checkpoint (its config must match ``cfg`` except steps/device/threads). ``force``: overwrite
    an existing ``out``. ``progress``: tqdm bar (loss, std of zeta). ``stop_after``: stop after
    this many optimizer steps in this call (for tests of interruption).

    Returns the run-file arrays (dict, plus ``config`` as a dict).

    Raises ValueError (bad config, CUDA unavailable, existing ``out`` without resume/force,
    resume without a checkpoint or with a different config); TrainingDiverged (non-finite loss).
    """
    cfg.validate()
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device 'cuda' requested but CUDA is not available (torch {torch.__version__})")
    model_name = cfg.model
    if cfg.inject_alpha is not None and cfg.inject_scale > 0 and cfg.inject_target == "gate" \
            and model_name == "constgate":
        raise ValueError("inject_target 'gate' needs a trained gate; ConstGate's gate is fixed "
                         "(use inject_target 'recurrent')")
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    task = cfg.make_task()
    dev = torch.device(cfg.device)
    lags = lag_grid(cfg.n_lags, cfg.lag_max)
    t_max = cfg.t_max if cfg.t_max is not None else float(cfg.seq_len)
    model = build_model(model_name, task.n_in, cfg.hidden, task.n_out, init=cfg.init, t_max=t_max,
                        gate_a=cfg.gate_a, seed=cfg.seed).to(dev)
    opt, manual, wd = _make_optimizer(model, cfg)
    config = full_config(cfg, task, lags)
    H = cfg.hidden

    keys = ["zeta", "zeta_jac", "step", "Lambda", "loss", "train_loss", "envelope", "zeta_clips",
            "jac_masked", "jac_clips", "saturated", "wall"] + (["transport"] if cfg.transport else [])
    rec = {k: [] for k in keys}
    step = 0
    wall0 = 0.0
    acc_loss, acc_n = 0.0, 0
    ckpt = checkpoint_path(out) if out else None
    if out:
        check_writable(out, "output")
        if os.path.isdir(ckpt):
            raise ValueError(f"checkpoint {ckpt!r} is a directory")
    if resume:
        if not out or not os.path.exists(ckpt):
            raise ValueError(f"--resume: no checkpoint {ckpt!r} to resume from")
        st = load_checkpoint(ckpt)
        old = st["config"]
        diff = [k for k in config if k not in _RESUME_FREE and k not in ("torch_version", "levysde_version")
                and json.dumps(old.get(k)) != json.dumps(config[k])]
        if diff:
            shown = ", ".join(f"{k}={old.get(k)!r} there, {config[k]!r} here" for k in diff[:3])
            raise ValueError(f"--resume: the checkpoint's config differs in {diff} ({shown}); "
                             f"only steps, device and threads may change")
        try:
            ck_lags = st["lags"].numpy()
            if not np.array_equal(ck_lags, lags):
                raise ValueError(f"its lag grid ({len(ck_lags)} lags) differs from this version's "
                                 f"({len(lags)} lags)")
            model.load_state_dict(st["model"])
            opt.load_state_dict(st["optimizer"])
            rec = _records_from_tensors(st["records"], keys)
            step, wall0 = int(st["step"]), float(st["wall"])
            acc_loss, acc_n = float(st["acc"][0]), int(st["acc"][1])
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign checkpoint: one line
            msg = (str(exc).strip().splitlines() or [""])[0][:160]
            raise ValueError(f"cannot resume from checkpoint {ckpt!r}: {type(exc).__name__}: {msg}") from None
        if cfg.steps < step:
            raise ValueError(f"--steps {cfg.steps}: the run in {ckpt!r} is already at step {step}; "
                             f"give --steps >= {step} to continue it")
    elif out and os.path.exists(out) and not force:
        raise ValueError(f"output {out!r} exists; use --resume to continue it or --force to overwrite")

    x_probe, y_probe = task.batch(cfg.probe_batch or cfg.batch, cfg.seed, STREAM_PROBE, 0, dev)
    masks = []
    inject = cfg.inject_alpha is not None and cfg.inject_scale > 0
    if inject:
        for p in model.parameters():
            m = model.recurrent_mask(p) if cfg.inject_target == "recurrent" else model.gate_mask(p)
            if m is not False:
                masks.append((p, None if m is True else m))

    t_start = time.perf_counter() - wall0

    def do_record():
        nonlocal acc_loss, acc_n
        model.eval()
        r = record_stats(model, task, x_probe, y_probe, opt, cfg.optimizer, lags, cfg.transport)
        model.train()
        r["step"] = step
        r["train_loss"] = acc_loss / acc_n if acc_n else float("nan")
        r["wall"] = time.perf_counter() - t_start
        acc_loss, acc_n = 0.0, 0
        for k in keys:
            rec[k].append(r[k])
        if out:
            save_checkpoint(ckpt, {"model": model.state_dict(), "optimizer": opt.state_dict(),
                                   "records": _records_to_tensors(rec, lags, H),
                                   "lags": torch.from_numpy(lags.copy()), "step": int(step),
                                   "wall": float(r["wall"]), "acc": [float(acc_loss), int(acc_n)],
                                   "config": json.loads(json.dumps(config))})  # plain types only
            save_run(out, _records_to_arrays(rec, lags, H), config)
        return r

    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=cfg.steps, initial=step, unit="step", dynamic_ncols=True)

    def show(r):
        if bar is not None:
            bar.set_postfix(loss=f"{r['loss']:.4g}", zeta_sd=f"{np.std(r['zeta']):.3g}", refresh=False)

    try:
        if not rec["step"]:
            show(do_record())
        done_here = 0
        while step < cfg.steps:
            if stop_after is not None and done_here >= stop_after:
                break
            x, y = task.batch(cfg.batch, cfg.seed, STREAM_TRAIN, step, dev)
            opt.zero_grad(set_to_none=True)
            loss = task.loss(model(x), y)
            lv = float(loss.detach())
            if not math.isfinite(lv):
                raise TrainingDiverged(f"training loss is {lv} at step {step}; lower --lr or set --clip "
                                       f"(records up to step {rec['step'][-1] if rec['step'] else 0} kept)")
            loss.backward()
            if cfg.clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            apply_manual_decay(manual, cfg.optimizer, cfg.lr, wd)
            opt.step()
            if inject:
                g = stream_generator(cfg.seed, STREAM_NOISE, step)
                with torch.no_grad():
                    for p, m in masks:
                        noise = sas_noise(p.shape, cfg.inject_alpha, g).to(dev)
                        p.add_(cfg.inject_scale * (noise if m is None else noise * m))
            step += 1
            done_here += 1
            acc_loss += lv
            acc_n += 1
            if bar is not None:
                bar.update(1)
            if step % cfg.record_every == 0 or step == cfg.steps:
                show(do_record())
    finally:
        if bar is not None:
            bar.close()
    res = _records_to_arrays(rec, lags, H)
    res["config"] = config
    return res
