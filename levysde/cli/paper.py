"""``levysde paper DIR [DIR ...]``: the anti-collapse paper's estimators on its own output
(``checkpoint_taus/`` directories, one per seed), beside levysde's tail estimate
(docs/paper_protocol.md)."""
from __future__ import annotations

import os

from levysde.cli._common import UsageError, integer, print_json, real


def add_parser(sub):
    p = sub.add_parser(
        "paper",
        help="the anti-collapse paper's estimators (CCDF beta, kappa_tail, envelope, phase label) on "
             "checkpoint_taus directories",
        description="Read one checkpoint_taus/ directory per seed (ckpt_EEEE_taus.npy files of the "
                    "anti-collapse paper's code) and report the paper's estimates: beta_hat_tail by CCDF "
                    "least squares with its unit bootstrap, kappa_tail with its seed-block bootstrap and "
                    "q-sweep, the envelope fits and the phase label, each with the non-decaying units "
                    "(tau = NaN) counted as censored and dropped, beside levysde's Hill/MLE tail rate in "
                    "the same two readings.",
    )
    p.add_argument("dirs", metavar="DIR", nargs="+",
                   help="checkpoint_taus directories (or model directories holding one), one per seed")
    p.add_argument("--q-lo", type=real(0.0, 1.0, hi_open=True), default=0.75,
                   help="lower quantile of the CCDF window (default 0.75)")
    p.add_argument("--q-hi", type=real(0.0, 1.0, lo_open=True, hi_open=True), default=0.995,
                   help="upper quantile of the CCDF window (default 0.995)")
    p.add_argument("--n-boot-beta", type=integer(10, 100000), default=2000,
                   help="unit-bootstrap replicates of beta_hat_tail (default 2000)")
    p.add_argument("--n-boot-kappa", type=integer(10, 100000), default=3000,
                   help="seed-block-bootstrap replicates of kappa_tail (default 3000)")
    p.add_argument("--late-fraction", type=real(0.0, 1.0, lo_open=True), default=0.35,
                   help="last fraction of the checkpoints used by kappa_tail (default 0.35)")
    p.add_argument("--seed", type=integer(0), default=42, help="seed of the bootstraps (default 42)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)
    return p


def _f(v, fmt=".3g"):
    return "n/a" if v is None or v != v else format(v, fmt)


def run(args) -> int:
    import numpy as np

    from levysde.inference.checkpoint_check import tail_readings
    from levysde.inference.paper_protocol import READINGS, paper_estimates
    from levysde.io.checkpoint_taus import read_checkpoint_taus

    if not args.q_lo < args.q_hi:
        raise UsageError(f"argument --q-lo: must be below --q-hi ({args.q_lo:g} >= {args.q_hi:g})")
    real = [os.path.realpath(d) for d in args.dirs]
    if len(set(real)) < len(real):
        raise UsageError("argument DIR: a directory is given more than once (each is one seed)")
    runs = [read_checkpoint_taus(d, min_checkpoints=2) for d in args.dirs]
    rep = paper_estimates(runs, q_lo=args.q_lo,
                          q_hi=args.q_hi, n_boot_beta=args.n_boot_beta, n_boot_kappa=args.n_boot_kappa,
                          late_fraction=args.late_fraction, seed=args.seed)
    ours = [tail_readings(r.tau, r.censored) for r in runs]
    if args.json:
        d = rep.as_json()
        d["dirs"] = [r.path for r in runs]
        d["levysde_beta_tail"] = [{k: {**e.as_json("beta_tail")} for k, e in o.items()} for o in ours]
        print_json(d)
        return 0
    print(f"levysde paper: {len(runs)} seed(s); CCDF window {args.q_lo:g}-{args.q_hi:g}; last checkpoint per seed")
    for i, r in enumerate(runs):
        H = r.tau.shape[1]
        print(f"seed {i + 1}: {r.path}  {H} units, epochs {int(r.epoch[0])}..{int(r.epoch[-1])}, "
              f"censored at the last checkpoint {int(r.n_censored[-1])} of {H}")
        for reading in READINGS:
            s = rep.seeds[reading][i]
            b, lv = s.beta, ours[i][reading]
            lv_txt = "n/a" if not lv.ok else f"{lv.value:.3g} +- {lv.se:.2g}"
            print(f"  {reading:<9} beta_hat {_f(b.fit.beta_hat)} [{_f(b.lo)}, {_f(b.hi)}] R2 {_f(b.fit.r2)}   "
                  f"beta_env {_f(s.envelope.beta_env)} ({s.envelope.winner})   {s.phase}   "
                  f"levysde beta_tail (late) {lv_txt}")
    print("over seeds (the paper's summary: mean of the last checkpoints' estimates and interval ends):")
    for reading in READINGS:
        k = rep.kappa[reading]
        sweep = ", ".join(f"q {kk.q:g}: {_f(kk.kappa)}" for kk in rep.kappa_sweep[reading])
        print(f"  {reading:<9} beta_hat {_f(rep.beta_hat[reading])} [{_f(rep.beta_lo[reading])}, "
              f"{_f(rep.beta_hi[reading])}]   phase {rep.phase[reading]}")
        restoring = {True: "restoring", False: "not restoring", None: "untested"}[k.restoring]
        print(f"            kappa_tail {_f(k.kappa)} [{_f(k.lo)}, {_f(k.hi)}] per epoch ({restoring}; "
              f"{k.n_tail} increments, {k.n_censored} censored)" + (f" [{k.reason}]" if k.reason else ""))
        print(f"            sweep: {sweep}")
    n_c = int(np.sum(rep.n_censored_final))
    if n_c:
        print(f"note: {n_c} unit(s) did not decay over the fit window at the last checkpoints (tau = NaN): "
              f"'censored' counts them as tau beyond every resolved one, 'dropped' leaves them out "
              f"as the paper's code does")
    return 0
