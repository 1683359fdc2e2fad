"""``levysde train --seeds``: several seeds of one configuration trained in one process as one
batched model (:func:`levysde.rnn.batched.train_seeds`), one run file per seed."""
from __future__ import annotations

import signal
import sys

from levysde.cli._common import UsageError, fail, print_json

EXIT_SIGTERM = 143  # after SIGTERM (128 + 15)


class _Terminated(BaseException):
    """Raised by the SIGTERM handler; not an Exception, so nothing on the way swallows it."""


def summary_line(out: str, res: dict) -> dict:
    """The run summary of ``levysde train`` (:func:`levysde.rnn.learned.run_summary`) with ``out``."""
    from levysde.rnn.learned import run_summary

    return dict(out=out, **run_summary(res))


def print_summary(out: str, res: dict, as_json: bool) -> None:
    """Print a finished run's summary: one line, or JSON."""
    d = summary_line(out, res)
    if as_json:
        print_json(d)
        return
    ratio = "n/a" if d["loss_ratio"] is None else f"{d['loss_ratio']:.3g}"
    print(f"{out}: {d['records']} records, step {d['step']}, probe loss {d['probe_loss']:.6g} "
          f"(loss ratio {ratio}: {'learned' if d['learned'] else 'NOT learned'}), zeta mean "
          f"{d['zeta_mean']:.4g} sd {d['zeta_std']:.4g}, Jacobian-masked neurons {d['jac_masked']}"
          + (f"\nnote: {d['saturation_note']}" if d.get("saturation_note") else ""))


def seed_outs(template: str, seeds) -> list[str]:
    """One run-file path per seed: ``{seed}`` in ``template`` replaced by the seed.
    Raises UsageError without ``{seed}`` or with repeated seeds."""
    if "{seed}" not in template:
        raise UsageError(f"--out must contain {{seed}} with --seeds (one run file per seed), e.g. "
                         f"runs/dg_{{seed}}.npz; got {template!r}")
    if len(set(seeds)) != len(seeds):
        raise UsageError(f"--seeds must be distinct, got {' '.join(map(str, seeds))}")
    return [template.replace("{seed}", str(s)) for s in seeds]


def run_seeds(args, config_of) -> int:
    """``levysde train --seeds S1 S2 ...``; ``config_of(out)`` is the TrainConfig of the flags
    (with --resume: of the checkpoint beside ``out``). Exit 0, or 1 if a seed diverged (the
    others are trained to the end)."""
    from levysde.rnn.batched import check_batchable, train_seeds
    from levysde.rnn.trainer import TrainingDiverged

    if "seed" in getattr(args, "_given", ()):
        raise UsageError("--seed and --seeds exclude each other")
    outs = seed_outs(args.out, args.seeds)
    cfg = [config_of(out) for out in outs][0]
    try:
        check_batchable(cfg)
    except ValueError as exc:
        from levysde.cli._train_flags import flag_message

        raise UsageError(f"--seeds: {flag_message(str(exc), type(cfg).__dataclass_fields__, args)}") from None

    def _term(signum, frame):  # SIGTERM: stop; the records so far are on disk
        raise _Terminated

    try:
        old = signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        old = None
    try:
        res = train_seeds(cfg, args.seeds, outs, resume=args.resume, force=args.force,
                          progress=not args.quiet and sys.stderr.isatty())
    except _Terminated:
        fail(f"levysde train: terminated (SIGTERM); the records written so far are kept in "
             f"{', '.join(outs)} (continue with --resume)", status=EXIT_SIGTERM)
    except OSError as exc:
        fail(f"levysde train: error: cannot write {exc.filename or args.out}: {exc.strerror or exc}")
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    bad = [r for r in res if isinstance(r, TrainingDiverged)]
    if args.json:
        print_json([{"out": out, "diverged": str(r)} if isinstance(r, TrainingDiverged) else summary_line(out, r)
                    for out, r in zip(outs, res, strict=True)])
    else:
        for out, r in zip(outs, res, strict=True):
            if not isinstance(r, TrainingDiverged):
                print_summary(out, r, False)
    for r in bad:
        sys.stderr.write(" ".join(f"levysde train: diverged: {r}".split()) + "\n")
    return 1 if bad else 0
