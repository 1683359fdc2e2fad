"""Anti-collapse experiment driver: a grid of models x widths x seeds, trained and checked
(docs/specification.md §8, §9; docs/results.md).

    python examples/anticollapse.py [--quick] [--out runs/anticollapse] [--device auto] [--json]
                                    [--hidden 64 256] [--seeds 3] [--steps N] [--workers 2]

Models: ConstGate with injected symmetric alpha-stable forcing on its recurrent weights,
SharedGate, DiagGate, GRU, LSTM; all on the ``longmem`` task (teacher time scales
log-uniform up to ``--mem-lag-max``, persistent target noise, truncated BPTT with the
state carried across chunks), AdamW with the muP width-scaled learning rate and
clipping (the trainer's defaults), no weight decay on the gates. Each run is checked with
``levysde check`` (gate variant). One row per run: model, hidden, seed, learned,
loss_ratio, stationary, kappa_hat(_se), beta_tail(_se), beta_theory(_se), beta_envelope(_se),
phase, gates_failed, phase_withheld (the check's reasons), envelope_class, zeta_std, steps,
train_s, notes. ``--markdown`` prints the verdict table of
docs/results.md.

Runs are points of the Dask sweep of ``levysde diagram`` (levysde.studies.sweep.run_sweep):
``--scheduler local`` (default; ``--workers`` processes), ``sequential``, or ``tcp://HOST:PORT``
for a cluster whose workers see ``--out``.

Resumable: run files and their check results (``NAME.check.json``) stay in ``--out``; a
rerun skips finished runs with the same configuration, resumes interrupted ones from their
checkpoints and rechecks only runs newer than their check file. ``--quick``: H = 16,
100 steps of 20-step chunks, 3 seeds, no closing-loop simulation (about 1-2 minutes on two
cores; run in CI by tests/test_examples.py).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

#: (label, model, extra config)
MODELS = (("constgate+forcing", "constgate", dict(inject_alpha=1.5, inject_scale=1e-3,
                                                    inject_target="recurrent")),
          ("sharedgate", "sharedgate", {}), ("diaggate", "diaggate", {}), ("gru", "gru", {}),
          ("lstm", "lstm", {}))
COMMON = dict(task="longmem", optimizer="adamw", lr=3e-3, lr_scaling="mup", clip=1.0, gate_decay=False,
              target_noise=0.1, n_mem=16, mem_gamma=0.0, threads=1, n_lags=40, lag_max=100000)
BUDGETS = {
    "quick": dict(hidden=[16], seeds=3, steps=100, seq_len=20, record_every=10, batch=8, mem_lag_max=1000),
    "full": dict(hidden=[64], seeds=3, steps=4000, seq_len=50, record_every=25, batch=16, mem_lag_max=10000),
}
ROW_KEYS = ("model", "hidden", "seed", "learned", "loss_ratio", "stationary", "kappa_hat", "kappa_hat_se",
            "beta_tail", "beta_tail_se", "beta_theory", "beta_theory_se", "phase", "envelope_class",
            "zeta_std", "steps", "train_s")


def envelope_class(run: dict, lag_max: float | None) -> str:
    """Decay class of the last recorded ELR envelope (levysde.theory.envelope_decay.classify_decay) over the
    lags the recorded spectrum supports, l <= lag_max (the check's envelope_lag_max, tau_(10):
    levysde.inference.spectrum.resolved_lag_max); beyond it every finite spectrum reads "exponential"."""
    import numpy as np

    from levysde.theory.envelope_decay import classify_decay

    lags, f = np.asarray(run["lags"], float), np.asarray(run["envelope"][-1], float)
    keep = lags <= (np.inf if lag_max is None else lag_max)
    if np.count_nonzero(keep & (lags >= np.e)) < 6:      # classify_decay's lag_min, min_points
        return "n/a (< 6 recorded lags in [e, tau_(10)])"
    try:
        return classify_decay(lags[keep], f[keep], f_floor=1e-10).name
    except ValueError as exc:
        return f"n/a ({str(exc)[:30]})"


def run_config(label: str, hidden: int, seed: int, budget: dict, device: str, fast: bool = False,
               input_alpha: float | None = None, t_max: float | None = None) -> dict:
    model, extra = {lab: (m, e) for lab, m, e in MODELS}[label]
    keys = ("steps", "seq_len", "record_every", "batch", "mem_lag_max")
    return dict(COMMON, **{k: budget[k] for k in keys}, **extra, model=model, hidden=hidden, seed=seed,
                device=device, fast=fast and model in ("constgate", "sharedgate", "diaggate"),
                input_alpha=input_alpha, init="default" if t_max is None else "chrono", t_max=t_max)


def _same(path: pathlib.Path, cfg: dict) -> bool:
    from levysde.io.runfile import load_run

    try:
        old = load_run(str(path))["config"]
    except ValueError:
        return False
    free = ("threads", "device", "fast")
    return all(json.dumps(old.get(k)) == json.dumps(v) for k, v in cfg.items() if k not in free)


def train_one(job) -> str:
    """Train one run (skip if finished with the same config, resume if interrupted); returns its path."""
    path, cfg = pathlib.Path(job[0]), job[1]
    from levysde.rnn.trainer import TrainConfig, train

    ck = path.with_suffix(".ckpt")
    if path.exists() and not ck.exists() and _same(path, cfg):
        return str(path)
    train(TrainConfig(**cfg), str(path), resume=ck.exists(), force=not ck.exists())
    ck.unlink()
    return str(path)


#: every levysde module that ``levysde check`` runs (check_run and what it imports, directly or
#: lazily: the fit, the tail, the envelope, the prediction, the closing-loop simulator)
CHECKER_MODULES = ("__init__.py", "core/*.py", "io/*.py", "theory/*.py", "stats/*.py", "simulation/*.py",
                   "rnn/__init__.py", "rnn/learned.py", "rnn/teacher.py", "inference/*.py")


def _checker_version() -> str:
    """Hash of the checking code (CHECKER_MODULES under levysde/) and of this driver's row
    (:func:`check_one`): a cached row is reused only if it was made by the same code."""
    import hashlib
    import inspect

    import levysde

    root = pathlib.Path(levysde.__file__).parent
    h = hashlib.sha1()
    for pattern in CHECKER_MODULES:
        files = sorted(root.glob(pattern))
        for f in files:
            h.update(f.relative_to(root).as_posix().encode() + f.read_bytes())
        if not files:
            h.update(pattern.encode())
    h.update(inspect.getsource(check_one).encode() + inspect.getsource(envelope_class).encode())
    return h.hexdigest()[:12]


def check_one(path: str, quick: bool, version: str) -> dict:
    """Row of one run, cached in NAME.check.json (recomputed when the run file is newer or the
    checking code, ``version`` = :func:`_checker_version` taken where the source is at hand, changed)."""
    cache = pathlib.Path(path).with_suffix(".check.json")
    if cache.exists() and cache.stat().st_mtime >= pathlib.Path(path).stat().st_mtime:
        row = json.loads(cache.read_text())
        if row.pop("checker", None) == version:
            return row
    from levysde.inference.check import check_run, load_run_arrays

    run = load_run_arrays(path)
    d = check_run(path, n_boot=50 if quick else 200, closing_loop=not quick).as_json()
    cfg = run["config"]
    label = next(lab for lab, m, e in MODELS if m == cfg["model"])
    if cfg.get("input_alpha") is not None:
        label += f" (α-stable inputs {cfg['input_alpha']:g})"
    if cfg.get("init") == "chrono":
        label += f" (chrono init, T_max {cfg['t_max']:g})"
    row = {"model": label, "hidden": cfg["hidden"], "seed": cfg["seed"], "learned": d.get("learned"),
           "loss_ratio": d.get("loss_ratio"), "stationary": d.get("stationary"), "phase": d.get("phase"),
           "envelope_class": envelope_class(run, d.get("envelope_lag_max")), "zeta_std": d["zeta_spread"]["std"],
           "steps": int(run["step"][-1]), "train_s": float(run["wall"][-1]) if "wall" in run else None}
    for k in ("kappa_hat", "beta_tail", "beta_theory", "beta_envelope"):
        row[k], row[f"{k}_se"] = d.get(k), d.get(f"{k}_se")
    row["gates_failed"] = [k for k, v in d.get("gates", {}).items() if not v]
    row["phase_withheld"] = d.get("phase_withheld", [])
    row["notes"] = d.get("notes", [])
    tmp = cache.with_suffix(".tmp")
    tmp.write_text(json.dumps(dict(row, checker=version), indent=1, default=lambda o: None))
    os.replace(tmp, cache)
    return row


def work(point: dict, seed: int) -> dict:
    """The sweep's task (levysde.studies.sweep.run_sweep): train (or resume, or skip) one run and
    check it; ``seed`` (the sweep's per-point seed) is unused, the run's seed is in its config."""
    del seed
    job = (point["path"], point["config"], point["quick"])
    return check_one(train_one(job), job[2], point["checker"])


def fmt(v, se=None):
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    return f"{v:.3g}" + (f"±{se:.2g}" if se is not None else "")


def print_table(rows) -> None:
    head = f"{'model':<18}{'H':>5}{'seed':>5}{'learned':>8}{'ratio':>7}{'stat.':>6}{'kappa_hat':>20}" \
           f"{'beta_tail':>14}{'beta*':>14}{'envelope':>13}{'phase':>14}"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['model']:<18}{r['hidden']:>5}{r['seed']:>5}{fmt(r['learned']):>8}{fmt(r['loss_ratio']):>7}"
              f"{fmt(r['stationary']):>6}{fmt(r['kappa_hat'], r['kappa_hat_se']):>20}"
              f"{fmt(r['beta_tail'], r['beta_tail_se']):>14}{fmt(r['beta_theory'], r['beta_theory_se']):>14}"
              f"{fmt(r['envelope_class']):>13}{fmt(r['phase']):>14}")


def _phase_cell(row) -> str:
    """The phase, or 'withheld: GATE, ...' (the failed gates of levysde check), or 'unavailable'."""
    if row.get("phase"):
        return row["phase"]
    failed = row.get("gates_failed")
    return f"withheld: {', '.join(failed)}" if failed else "unavailable"


def markdown_table(rows) -> str:
    """The verdict table of docs/results.md (one line per run; a withheld phase names its failed gates)."""
    def pm(r, k):
        v, se = r.get(k), r.get(f"{k}_se")
        return "–" if v is None else (f"{v:.3g} ± {se:.2g}" if se is not None else f"{v:.3g}")

    out = ["| model | H | seed | learned (loss ratio) | stationary | κ̂ | β_tail | β* | envelope (β_env) | phase "
           "| ζ std |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        st = {True: "yes", False: "no"}.get(r.get("stationary"), "n/a")
        out.append(f"| {r['model']} | {r['hidden']} | {r['seed']} | {fmt(r['learned'])} ({r['loss_ratio']:.2f}) "
                   f"| {st} | {pm(r, 'kappa_hat')} | {pm(r, 'beta_tail')} | {pm(r, 'beta_theory')} "
                   f"| {r['envelope_class']} ({pm(r, 'beta_envelope')}) | {_phase_cell(r)} "
                   f"| {r['zeta_std'] if r['zeta_std'] > 1e-9 else 0:.3g} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--quick", action="store_true", help="tiny CPU grid (CI)")
    ap.add_argument("--out", default="runs/anticollapse", help="directory of run files (created)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                    help="auto: cuda when available (default)")
    ap.add_argument("--hidden", type=int, nargs="+", help="widths (default: the budget's)")
    ap.add_argument("--seeds", type=int, help="number of seeds, >= 1 (default 3)")
    ap.add_argument("--steps", type=int, help="optimizer steps per run (default: the budget's)")
    ap.add_argument("--models", nargs="+", choices=[m[0] for m in MODELS], help="subset of the models")
    ap.add_argument("--workers", type=int, default=2, help="local Dask workers (1 torch thread each; default 2)")
    ap.add_argument("--scheduler", default="local",
                    help="local (a Dask cluster on this machine, default), sequential (no Dask) or tcp://HOST:PORT "
                         "(a running Dask scheduler whose workers see --out)")
    ap.add_argument("--fast", action="store_true", help="leaky models: replay each step from a CUDA graph")
    ap.add_argument("--input-alpha", type=float, help="alpha-stable inputs of this index in (0, 2) (default Gaussian)")
    ap.add_argument("--chrono", type=float, metavar="T_MAX", help="chrono init with time scales up to T_MAX (> 2)")
    ap.add_argument("--json", action="store_true", help="print the rows as a JSON list (no table)")
    ap.add_argument("--markdown", action="store_true", help="print the verdict table as Markdown")
    a = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        sys.exit("anticollapse.py needs torch: pip install 'levysde[rnn]' torch==2.13.0")
    budget = dict(BUDGETS["quick" if a.quick else "full"])
    for k in ("hidden", "seeds", "steps"):
        if getattr(a, k) is not None:
            budget[k] = getattr(a, k)
    if budget["seeds"] < 1 or budget["steps"] < 1 or a.workers < 1 or min(budget["hidden"]) < 1:
        ap.error("--seeds, --steps, --workers and --hidden must be >= 1")
    device = ("cuda" if torch.cuda.is_available() else "cpu") if a.device == "auto" else a.device
    if device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: CUDA is not available")
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    labels = a.models or [m[0] for m in MODELS]
    tag = ("" if a.input_alpha is None else f"_a{a.input_alpha:g}") + ("" if a.chrono is None else f"_c{a.chrono:g}")
    checker = _checker_version()
    points = [{"path": str((out / f"{lab.replace('+', '_')}_H{H}{tag}_s{s}.npz").resolve()),
               "config": run_config(lab, H, s, budget, device, a.fast, a.input_alpha, a.chrono), "quick": a.quick,
               "checker": checker}
              for H in budget["hidden"] for lab in labels for s in range(budget["seeds"])]
    t0 = time.perf_counter()
    from levysde.studies.sweep import run_sweep

    # resumable through the run files and their check files (train_one, check_one), so no store
    workers = 1 if device == "cuda" else a.workers
    kw = {"n_workers": workers} if a.scheduler == "local" else {}
    try:
        rows = run_sweep(work, points, store=None, scheduler=a.scheduler, numba_threads=1, progress=False, **kw)
    except (ValueError, ConnectionError, ImportError) as exc:
        ap.error(f"--scheduler {a.scheduler}: {exc}")
    if a.json:
        print(json.dumps(rows, indent=1, default=lambda o: None))
        return 0
    if a.markdown:
        print(markdown_table(rows))
        return 0
    print(f"{len(rows)} runs ({'quick' if a.quick else 'full'} budget, device {device}) in "
          f"{time.perf_counter() - t0:.0f} s; run files in {out}")
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
