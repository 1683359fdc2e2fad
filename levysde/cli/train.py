"""``levysde train``: train a gated RNN and record zeta_q trajectories (THEORY.md §9).

torch is imported inside :func:`run` only, so ``levysde --help`` works without it.
"""
from __future__ import annotations

import os
import signal
import sys

from ._common import UsageError, fail, integer, real

MODELS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
OPTIMIZERS = ("sgd", "adam", "adamw")
TASKS = ("powerlaw", "delay", "adding")


def add_parser(sub):
    p = sub.add_parser(
        "train",
        help="train a gated RNN (needs torch) and record per-neuron zeta_q, Lambda_q, envelope",
        description="Train ConstGate/SharedGate/DiagGate/GRU/LSTM on a synthetic long-memory task and "
                    "record zeta_q = log mean_t[-log r_t^(q)], the Jacobian variant, Lambda_q and the ELR "
                    "envelope every K steps into a .npz run file (THEORY.md §9, docs/rnn.md). "
                    "Needs PyTorch: pip install 'levysde[rnn]'.",
    )
    g = p.add_argument_group("model and optimizer")
    g.add_argument("--model", choices=MODELS, default="diaggate", help="architecture (default %(default)s)")
    g.add_argument("--hidden", type=integer(1, 100000), default=64, help="hidden size H (default %(default)s)")
    g.add_argument("--init", choices=("default", "chrono"), default="default",
                   help="default: torch-style uniform; chrono: gate biases from log U[1, T_max-1]")
    g.add_argument("--t-max", type=real(2.0, lo_open=True), default=None,
                   help="T_max of chrono init, > 2 (default: --seq-len)")
    g.add_argument("--gate-a", type=real(0.0, 1.0, lo_open=True, hi_open=True), default=0.1,
                   help="ConstGate's constant gate a in (0, 1) with --init default (default %(default)s)")
    g.add_argument("--optimizer", choices=OPTIMIZERS, default="adamw", help="(default %(default)s)")
    g.add_argument("--lr", type=real(0.0, lo_open=True), default=3e-3, help="learning rate > 0 (default %(default)s)")
    g.add_argument("--weight-decay", type=real(0.0), default=None,
                   help="weight decay >= 0 (default: AdamW 0.01, Adam/SGD 0)")
    g.add_argument("--no-gate-decay", action="store_true",
                   help="exclude the retention-gate parameters from weight decay")
    g.add_argument("--clip", type=real(0.0, lo_open=True), default=None,
                   help="clip the gradient norm to this value (> 0); default off")
    t = p.add_argument_group("task")
    t.add_argument("--task", choices=TASKS, default="powerlaw", help="(default %(default)s)")
    t.add_argument("--seq-len", type=integer(2), default=200, help="sequence length T >= 2 (default %(default)s)")
    t.add_argument("--loss-from", type=integer(0), default=None,
                   help="first time step of the loss and of the probe averages (default T // 2)")
    t.add_argument("--delay", type=integer(1), default=5, help="delay L of the delay task (default %(default)s)")
    t.add_argument("--power", type=real(0.0, lo_open=True), default=1.0,
                   help="exponent p of the powerlaw task, > 0 (default %(default)s)")
    t.add_argument("--kernel", type=integer(0), default=0,
                   help="kernel length K of the powerlaw task (0 = T; default %(default)s)")
    t.add_argument("--batch", type=integer(1), default=32, help="batch size (default %(default)s)")
    t.add_argument("--probe-batch", type=integer(1), default=None, help="probe batch size (default --batch)")
    r = p.add_argument_group("run and recording")
    r.add_argument("--steps", type=integer(0), default=1000, help="optimizer steps (default %(default)s)")
    r.add_argument("--record-every", type=integer(1), default=50, help="record every K steps (default %(default)s)")
    r.add_argument("--seed", type=integer(0, 2 ** 32 - 1), default=0, help="(default %(default)s)")
    r.add_argument("--n-lags", type=integer(2), default=40, help="lags of the envelope grid (default %(default)s)")
    r.add_argument("--lag-max", type=integer(2), default=10000, help="largest lag (default %(default)s)")
    r.add_argument("--transport", action="store_true", help="also record the measured transport")
    r.add_argument("--inject-alpha", type=real(0.0, 2.0, lo_open=True), default=None,
                   help="alpha in (0, 2] of injected symmetric alpha-stable forcing (default off)")
    r.add_argument("--inject-scale", type=real(0.0), default=0.0,
                   help="scale >= 0 of the injected forcing, added after every step (default %(default)s)")
    r.add_argument("--inject-target", choices=("recurrent", "gate"), default="recurrent",
                   help="parameters that receive the forcing (default %(default)s)")
    r.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="(default %(default)s)")
    r.add_argument("--threads", type=integer(1, 1024), default=1,
                   help="torch CPU threads (default %(default)s; more is often slower for small H)")
    r.add_argument("--out", required=True, metavar="RUN.npz", help="run file (.npz); checkpoint RUN.ckpt beside it")
    r.add_argument("--resume", action="store_true", help="continue from RUN.ckpt (same config; --steps may grow)")
    r.add_argument("--force", action="store_true", help="overwrite an existing run file")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("levysde train needs PyTorch: pip install 'levysde[rnn]' "
                         "(on the project machines: pip install torch==2.13.0)") from None
    from ..rnn.train import TrainConfig, TrainingDiverged, train

    if args.inject_alpha is None and args.inject_scale > 0:
        raise UsageError("--inject-scale needs --inject-alpha")
    if args.resume and args.force:
        raise UsageError("--resume and --force exclude each other")
    out_dir = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(out_dir):
        raise UsageError(f"--out: directory {out_dir!r} does not exist")
    cfg = TrainConfig(
        model=args.model, hidden=args.hidden, optimizer=args.optimizer, lr=args.lr,
        weight_decay=args.weight_decay, gate_decay=not args.no_gate_decay, clip=args.clip,
        task=args.task, seq_len=args.seq_len, loss_from=args.loss_from, delay=args.delay,
        p=args.power, kernel=args.kernel, batch=args.batch, probe_batch=args.probe_batch,
        steps=args.steps, record_every=args.record_every, seed=args.seed, init=args.init,
        t_max=args.t_max, gate_a=args.gate_a, inject_alpha=args.inject_alpha,
        inject_scale=args.inject_scale, inject_target=args.inject_target, n_lags=args.n_lags,
        lag_max=args.lag_max, transport=args.transport, device=args.device, threads=args.threads,
    )
    def _term(signum, frame):  # SIGTERM: stop like Ctrl-C (records so far are on disk)
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        old = None
    try:
        res = train(cfg, args.out, resume=args.resume, force=args.force,
                    progress=not args.quiet and sys.stderr.isatty())
    except TrainingDiverged as exc:
        fail(f"levysde train: diverged: {exc}", status=1)
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    z = res["zeta"][-1]
    print(f"{args.out}: {len(res['step'])} records, step {int(res['step'][-1])}, "
          f"probe loss {res['loss'][-1]:.6g}, zeta mean {z.mean():.4g} sd {z.std():.4g}, "
          f"Jacobian-masked neurons {int(res['jac_masked'][-1])}")
    return 0
