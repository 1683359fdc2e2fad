"""``levysde train``: train a gated RNN and record zeta_q trajectories (docs/specification.md §9).

torch is imported inside :func:`run` only, so ``levysde --help`` works without it.
"""
from __future__ import annotations

import os
import signal
import sys

from levysde.cli import _train_flags as flags
from levysde.cli._common import Given as _Given
from levysde.cli._common import GivenTrue as _GivenTrue
from levysde.cli._common import UsageError, check_output, fail, integer, real, reject_flags
from levysde.cli._train_seeds import print_summary, run_seeds

MODELS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
OPTIMIZERS = ("sgd", "adam", "adamw")
TASKS = ("powerlaw", "delay", "adding", "longmem", "lagged")
EXIT_SIGTERM = 143  # after SIGTERM (128 + 15; Ctrl-C gives 130)
#: flags that are not part of the run's config
_NOT_CONFIG = ("out", "resume", "force", "quiet", "json", "seeds")
#: CLI dest -> TrainConfig field, where they differ
_FIELD = flags.FIELDS
#: the range of the alpha-stable indices (levysde.rnn.tasks.ALPHA_MIN_FLOAT32)
_F32 = "[0.5%s (float32 training: below 0.5 the squares of many draws overflow float32)"


class _Terminated(BaseException):
    """Raised by the SIGTERM handler; not an Exception, so nothing on the way swallows it."""


def add_parser(sub):
    p = sub.add_parser(
        "train",
        help="train a gated RNN (needs torch) and record per-neuron zeta_q, Lambda_q, envelope",
        description="Train ConstGate/SharedGate/DiagGate/GRU/LSTM on a synthetic long-memory task and "
                    "record zeta_q = log mean_t[-log r_t^(q)], the Jacobian variant, Lambda_q and the ELR "
                    "envelope every K steps into a .npz run file (docs/specification.md §9, docs/rnn.md). "
                    "Needs PyTorch: pip install 'levysde[rnn]'.",
    )
    g = p.add_argument_group("model and optimizer")
    g.add_argument("--model", action=_Given, choices=MODELS, default="diaggate",
                   help="architecture (default %(default)s)")
    g.add_argument("--hidden", action=_Given, type=integer(1, 100000), default=64,
                   help="hidden size H (default %(default)s)")
    g.add_argument("--init", action=_Given, choices=("default", "chrono"), default="default",
                   help="default: torch-style uniform; chrono: gate biases from log U[1, T_max-1]")
    g.add_argument("--t-max", action=_Given, type=real(2.0, lo_open=True), default=None,
                   help="T_max of chrono init, > 2 (default: --seq-len)")
    g.add_argument("--gate-a", action=_Given, type=real(0.0, 1.0, lo_open=True, hi_open=True), default=0.1,
                   help="ConstGate's constant gate a in (0, 1) with --init default (default %(default)s)")
    g.add_argument("--optimizer", action=_Given, choices=OPTIMIZERS, default="adamw",
                   help="(default %(default)s)")
    g.add_argument("--lr", action=_Given, type=real(0.0, lo_open=True), default=3e-3,
                   help="learning rate > 0 at width --lr-base-width (default %(default)s)")
    g.add_argument("--lr-scaling", action=_Given, choices=("mup", "none"), default="mup",
                   help="mup: Adam lr of the H-fan-in matrices times base-width/H (muP, Tensor Programs V); "
                        "none: one lr (default %(default)s)")
    g.add_argument("--lr-base-width", action=_Given, type=integer(1), default=64,
                   help="width at which --lr applies unscaled (default %(default)s)")
    g.add_argument("--weight-decay", action=_Given, type=real(0.0), default=None,
                   help="weight decay >= 0 (default: AdamW 0.01, Adam/SGD 0)")
    g.add_argument("--no-gate-decay", action=_GivenTrue,
                   help="exclude the retention-gate parameters from weight decay")
    g.add_argument("--clip", action=_Given, type=real(0.0, lo_open=True), default=1.0,
                   help="clip the gradient norm to this value (> 0; default %(default)s)")
    g.add_argument("--no-clip", action=_GivenTrue, help="no gradient clipping")
    t = p.add_argument_group("task")
    t.add_argument("--task", action=_Given, choices=TASKS, default="powerlaw", help="(default %(default)s)")
    t.add_argument("--seq-len", action=_Given, type=integer(2), default=200,
                   help="sequence length T >= 2 (default %(default)s)")
    t.add_argument("--loss-from", action=_Given, type=integer(0), default=None,
                   help="first time step of the loss and of the probe averages (default T // 2)")
    t.add_argument("--delay", action=_Given, type=integer(1), default=5,
                   help="delay L of the delay task (default %(default)s)")
    t.add_argument("--power", action=_Given, type=real(0.0, lo_open=True), default=1.0,
                   help="exponent p of the powerlaw task, > 0 (default %(default)s)")
    t.add_argument("--kernel", action=_Given, type=integer(0), default=0,
                   help="kernel length K of the powerlaw task (0 = T; default %(default)s)")
    t.add_argument("--target-noise", action=_Given, type=real(0.0), default=None,
                   help="std of N(0,1) noise added to every target (default 0.3 for lagged, else 0)")
    t.add_argument("--input-alpha", action=_Given, type=real(0.5, 2.0, hi_open=True, allowed=_F32 % ", 2)"),
                   default=None, help="alpha-stable inputs of index in [0.5, 2) instead of N(0, 1) (default off)")
    t.add_argument("--n-mem", action=_Given, type=integer(1), default=16,
                   help="longmem: number of teacher time scales (default %(default)s)")
    t.add_argument("--mem-lag-max", action=_Given, type=integer(2), default=10000,
                   help="longmem: longest teacher time scale in steps (default %(default)s)")
    t.add_argument("--mem-gamma", action=_Given, type=real(0.0), default=0.0,
                   help="longmem: time scales at quantiles of tau^(-1-gamma); 0 = log-uniform (default)")
    flags.add_task_flags(t)
    t.add_argument("--batch", action=_Given, type=integer(1), default=32,
                   help="batch size (default %(default)s)")
    t.add_argument("--probe-batch", action=_Given, type=integer(1), default=None,
                   help="probe batch size (default --batch)")
    r = p.add_argument_group("run and recording")
    r.add_argument("--steps", action=_Given, type=integer(1), default=1000,
                   help="optimizer steps >= 1 (default %(default)s; with --resume: the checkpoint's)")
    r.add_argument("--record-every", action=_Given, type=integer(1), default=50,
                   help="record every K steps (default %(default)s)")
    r.add_argument("--seed", action=_Given, type=integer(0, 2 ** 32 - 1), default=0,
                   help="(default %(default)s)")
    r.add_argument("--n-lags", action=_Given, type=integer(2), default=40,
                   help="number of envelope lags: exactly this many distinct integers "
                        "from 1 to --lag-max, "
                        "log-spaced (so at most --lag-max; default %(default)s)")
    r.add_argument("--lag-max", action=_Given, type=integer(2, 2 ** 53), default=10000,
                   help="largest lag >= --n-lags (default %(default)s)")
    r.add_argument("--transport", action=_GivenTrue, help="also record the measured transport")
    r.add_argument("--inject-alpha", action=_Given, type=real(0.5, 2.0, allowed=_F32 % ", 2]"), default=None,
                   help="alpha in [0.5, 2] of injected symmetric alpha-stable forcing (float32; default off)")
    r.add_argument("--inject-scale", action=_Given, type=real(0.0), default=None,
                   help="scale s >= 0 of the injected forcing s*X, added after every step; required with "
                        "--inject-alpha (no default: the useful scale depends on --lr and the weights, "
                        "and a silent 0 would train without forcing)")
    r.add_argument("--inject-target", action=_Given, choices=("recurrent", "gate"), default="recurrent",
                   help="parameters that receive the forcing (default %(default)s)")
    r.add_argument("--device", action=_Given, choices=("cpu", "cuda"), default="cpu",
                   help="(default %(default)s)")
    r.add_argument("--threads", action=_Given, type=integer(1, 1024), default=1,
                   help="torch CPU threads (default %(default)s; more is often slower for small H)")
    r.add_argument("--fast", action=_GivenTrue, help="replay each step from a CUDA graph (leaky models)")
    flags.add_run_flags(g, r)
    flags.add_seed_flags(r)
    r.add_argument("--out", required=True, metavar="RUN.npz", help="run file (.npz); checkpoint RUN.ckpt beside it")
    r.add_argument("--resume", action="store_true",
                   help="continue from RUN.ckpt with its config (flags not given are taken from it; "
                        "given flags must match it, except --steps, --device, --threads)")
    r.add_argument("--force", action="store_true", help="overwrite an existing run file")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)
    return p


def _config_fields(args, base: dict | None) -> dict:
    """TrainConfig fields from the parsed flags. ``base`` (a checkpoint's config, for
    ``--resume``): start from it and override only the flags given on the command line."""
    given = getattr(args, "_given", set())
    fields = {}
    for dest, value in vars(args).items():
        if dest.startswith("_") or dest in _NOT_CONFIG or dest in ("func", "command"):
            continue
        if base is not None and dest not in given:
            continue
        if dest == "no_gate_decay":
            fields["gate_decay"] = not value
        elif dest == "no_clip":
            if value:
                fields["clip"] = None
        else:
            fields[_FIELD.get(dest, dest)] = value
    if base is None:
        return fields
    from levysde.rnn.trainer import TrainConfig

    names = set(TrainConfig.__dataclass_fields__)
    merged = {k: v for k, v in base.items() if k in names}
    merged.update(fields)
    return merged


def _reject_inapplicable(args, fields) -> None:
    """One-line UsageError for a flag given on the command line that the config would ignore."""
    for ignored, dests, why in flags.INAPPLICABLE:
        if ignored(fields):
            reject_flags(args, dests, why)


def _config(args, out: str):
    """The run's TrainConfig from the flags (with --resume: and the checkpoint beside ``out``)."""
    from levysde.io.runfile import check_writable, checkpoint_path
    from levysde.rnn.checkpoint import load_checkpoint
    from levysde.rnn.trainer import TrainConfig

    if args.resume and args.force:
        raise UsageError("--resume and --force exclude each other")
    try:
        check_writable(out, "--out")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ckpt = checkpoint_path(out)
    # a directory, FIFO or device is refused; an existing one needs --force (or --resume)
    check_output(ckpt, "--out: its checkpoint", args.force or args.resume, example="run.ckpt")
    base = None
    if args.resume:
        if not os.path.exists(ckpt):
            raise UsageError(f"--resume: the checkpoint {ckpt!r} is missing; there is nothing to resume from")
        base = load_checkpoint(ckpt)["config"]  # ValueError (one line, names the file) if unreadable
    fields = _config_fields(args, base)
    if fields.get("inject_alpha") is None and (fields.get("inject_scale") or 0) > 0:
        raise UsageError("--inject-scale needs --inject-alpha")
    if fields.get("inject_alpha") is not None and fields.get("inject_scale") is None:
        raise UsageError("--inject-alpha needs --inject-scale (the scale s of the forcing s*X; "
                         "there is no default)")
    if fields.get("inject_scale") is None:
        fields["inject_scale"] = 0.0
    if fields["lag_max"] < fields["n_lags"]:
        raise UsageError(f"--n-lags {fields['n_lags']} exceeds --lag-max {fields['lag_max']} "
                         f"(the lags are distinct integers from 1 to --lag-max)")
    _reject_inapplicable(args, fields)
    flags.check_lags(fields)
    return flags.validated(TrainConfig(**fields), args)   # here, so that its errors name the flags


def run(args) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("levysde train needs PyTorch: pip install 'levysde[rnn]' "
                         "(on the project machines: pip install torch==2.13.0)") from None
    from levysde.rnn.trainer import TrainingDiverged, train

    if args.seeds is not None:       # several seeds as one batched model, one run file each
        return run_seeds(args, lambda out: _config(args, out))
    if args.out and "{seed}" in args.out:   # the template of --seeds, for one seed: the same file name
        args.out = args.out.replace("{seed}", str(args.seed))
    cfg = _config(args, args.out)

    def _term(signum, frame):  # SIGTERM: stop; the records so far are on disk
        raise _Terminated

    try:
        old = signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        old = None
    try:
        res = train(cfg, args.out, resume=args.resume, force=args.force,
                    progress=not args.quiet and sys.stderr.isatty())
    except TrainingDiverged as exc:
        fail(f"levysde train: diverged: {exc}", status=1)
    except _Terminated:
        fail(f"levysde train: terminated (SIGTERM); the records written so far are kept in "
             f"{args.out} (continue with --resume)", status=EXIT_SIGTERM)
    except OSError as exc:
        name = exc.filename or args.out
        fail(f"levysde train: error: cannot write {name}: {exc.strerror or exc}")
    except ValueError as exc:           # e.g. no CUDA, too little memory: in the flags' words
        raise UsageError(flags.flag_message(str(exc), cfg.__dataclass_fields__)) from None
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    print_summary(args.out, res, args.json)
    return 0
