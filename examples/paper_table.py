"""Reproduce the anti-collapse paper's qualitative table on CPU (docs/specification.md §9; docs/results.md).

    python examples/paper_table.py [--quick] [--outdir runs/paper_table] [--workers 2]

Trains ConstGate (with injected symmetric alpha-stable forcing on its recurrent
weights), SharedGate, DiagGate, GRU and LSTM with AdamW on the long-memory power-law
kernel task, then runs ``levysde check`` on every run for both zeta variants (gate and
first-order Jacobian) and prints one row per model and variant: zeta spread, fitted
phase, beta_theory, beta_tail, beta_env and the envelope's decay class.

The paper reports DiagGate broad with beta ~ 0.42 and a power-law envelope, SharedGate
collapsed (narrow, exponential envelope) and ConstGate collapsed despite the forcing.
Runs are kept in --outdir: a rerun skips finished runs (delete them to retrain).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

MODELS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
BUDGETS = {
    "quick": dict(hidden=32, steps=300, seq_len=100, record_every=10, batch=32),
    "full": dict(hidden=128, steps=4000, seq_len=200, record_every=40, batch=32),
}
COMMON = dict(optimizer="adamw", lr=3e-3, task="powerlaw", p=0.5, gate_decay=False, threads=1,
              n_lags=40, lag_max=10000)
FORCING = dict(inject_alpha=1.5, inject_scale=1e-3, inject_target="recurrent")


def train_one(args):
    model, budget, outdir, seed = args
    from levysde.rnn.trainer import TrainConfig, train

    path = pathlib.Path(outdir) / f"{model}_s{seed}.npz"
    cfg = dict(COMMON, **BUDGETS[budget], model=model, seed=seed)
    if model == "constgate":
        cfg.update(FORCING)
    if path.exists() and not path.with_suffix(".ckpt").exists():
        # finished earlier (the checkpoint is removed at the end): reuse only the same configuration
        from levysde.io.runfile import load_run

        try:
            old = load_run(str(path))["config"]
            same = all(old.get(k) == v for k, v in cfg.items() if k != "threads")
        except ValueError:
            same = False
        if same:
            return str(path), 0.0
    t0 = time.perf_counter()
    resume = path.with_suffix(".ckpt").exists()
    train(TrainConfig(**cfg), str(path), resume=resume, force=not resume)
    ck = path.with_suffix(".ckpt")
    if ck.exists():
        ck.unlink()
    return str(path), time.perf_counter() - t0


def envelope_class(run_path, lag_max):
    """Decay class of the run's last envelope over lags <= lag_max (the check's
    envelope_lag_max; the driver's classifier, examples/anticollapse.py)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from anticollapse import envelope_class as classify

    from levysde.inference.check import load_run_arrays

    return classify(load_run_arrays(run_path), lag_max)


def fmt(v, se=None):
    if v is None:
        return "-"
    return f"{v:.3g}" + (f"±{se:.2g}" if se is not None else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="H=32, 300 steps, seq 100: a few minutes")
    ap.add_argument("--outdir", default="runs/paper_table", help="where the run files go")
    ap.add_argument("--workers", type=int, default=2, help="training processes (1 torch thread each)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("paper_table.py needs torch: pip install 'levysde[rnn]' torch==2.13.0")
    budget = "quick" if args.quick else "full"
    outdir = pathlib.Path(args.outdir) / budget
    outdir.mkdir(parents=True, exist_ok=True)
    jobs = [(m, budget, str(outdir), args.seed) for m in MODELS]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        done = list(pool.map(train_one, jobs))
    print(f"trained {len(done)} models ({budget} budget: {BUDGETS[budget]}) in "
          f"{time.perf_counter() - t0:.0f} s; runs in {outdir}", flush=True)
    from levysde.inference.check import check_run

    rows = []
    for (path, secs), model in zip(done, MODELS, strict=True):
        cls = None
        for variant in ("gate", "jac"):
            rep = check_run(path, variant=variant, n_boot=200, seed=args.seed)
            d = rep.as_json()
            if cls is None:
                cls = envelope_class(path, d.get("envelope_lag_max"))
            rows.append({"model": model, "variant": variant, "train_s": round(secs, 1),
                         "zeta_std": d["zeta_spread"]["std"], "zeta_std_early": d["zeta_spread_early"]["std"],
                         "phase": d["phase"], "beta_theory": d["beta_theory"], "beta_theory_se": d["beta_theory_se"],
                         "beta_tail": d["beta_tail"], "beta_tail_se": d["beta_tail_se"],
                         "beta_env": d["beta_envelope"], "envelope_class": cls if variant == "gate" else "-",
                         "eta_j_hat": d["eta_j_hat"], "kappa_hat": d["kappa_hat"],
                         "notes": [d.get("beta_theory_flag"), d.get("beta_tail_flag")]})
    head = f"{'model':<11}{'variant':<8}{'zeta std':>9}{'phase':>13}{'beta_theory':>14}{'beta_tail':>13}" \
           f"{'beta_env':>10}{'envelope':>13}"
    print(head)
    print("-" * len(head))
    for r in rows:
        std = r["zeta_std"]
        print(f"{r['model']:<11}{r['variant']:<8}{(f'{std:.3g}' if std == std else '-'):>9}{str(r['phase']):>13}"
              f"{fmt(r['beta_theory'], r['beta_theory_se']):>14}{fmt(r['beta_tail'], r['beta_tail_se']):>13}"
              f"{fmt(r['beta_env']):>10}{r['envelope_class']:>13}")
    print("notes:")
    for r in rows:
        for n in r["notes"]:
            if n:
                print(f"  {r['model']}/{r['variant']}: {n}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({"budget": BUDGETS[budget], "common": COMMON,
                                                       "forcing": FORCING, "rows": rows}, indent=1,
                                                      default=lambda o: None))


if __name__ == "__main__":
    main()
