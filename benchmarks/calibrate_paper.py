"""Calibration of the anti-collapse paper's estimators on SDE data with known beta* and kappa
(docs/paper_protocol.md; levysde.inference.paper_protocol).

Each dataset is S "seeds" of Q independent units of the SDE ``dzeta = F dt + sqrt(2 eta_G) dW + dJ``
(docs/specification.md §3), stationary, recorded R times, ``delta`` SDE time units apart (a record
plays the paper's checkpoint; tau = exp(-zeta)). Two generators: the independent one of
``benchmarks/_independent_sde.py`` (Rosinski-series jumps; drifts saturating, piecewise, algebraic)
and levysde's own simulator (saturating drift). The truth: the left-tail rate of what is generated
(the Cramer root of the generated process, ``model_root``) and the plateau kappa.

Measured per dataset:

* beta_hat_tail of every seed's last record in three quantile windows (the paper's 0.75-0.995, and
  0.90-0.995, 0.50-0.95), with its 90 % unit bootstrap, and the paper's summary: the mean over seeds
  of the estimate and of the interval ends;
* kappa_tail (q = 0.10, 10 % trimmed, last 35 % of the records, 90 % seed-block bootstrap), with the
  increments per unit of SDE time;
* the same with the slowest 3 % of unit-records censored (tau = NaN, as the paper's files mark
  non-decaying units), in both readings: censored (tau = inf) and dropped (the paper's code).

Summaries: the bias (mean of estimate / truth - 1) and the coverage of the 90 % intervals per window
and drift shape (beta) and per record interval and drift shape (kappa).

    python benchmarks/calibrate_paper.py [--quick] [--json] [--workers 2] [--out rows.jsonl]

``--quick`` (CI): 2 small datasets, a few seconds. The full study: block "main", 3 parameter sets x
4 drifts x 2 record intervals x 2 replicates = 48 datasets of 5 seeds x 512 units with every
estimate, and block "kappa", 96 more datasets (4 replicates per cell) with kappa_tail only, for its
coverage (about 1,100 and 2,500 s of one core). ``--block`` runs one block; ``--rows`` summarizes
the rows that ``--out`` wrote (several files may be given).
Every dataset has its own seed: results do not depend on --workers.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (ROOT, os.path.join(ROOT, "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

#: (eta_J, eta_G, kappa, alpha, lam): beta* 0.808 (broad), 1.000 (critical), 1.460 (concentrated)
PARAM_SETS = {
    "broad": (3.0, 0.1, 1.0, 1.5, 2.0),
    "critical": (2.36008996386890, 0.1, 1.0, 1.5, 2.0),
    "concentrated": (1.5, 0.1, 1.0, 1.5, 2.0),
}
#: (generator, drift kind): the independent generator's three plateau drifts and levysde's saturating drift
DRIFTS = (("independent", "saturating"), ("independent", "piecewise"), ("independent", "algebraic"),
          ("levysde", "saturating"))
#: the CCDF quantile windows: the paper's first
WINDOWS = ((0.75, 0.995), (0.90, 0.995), (0.50, 0.95))
DELTAS = (0.1, 0.5)          # SDE time between records (the relaxation time 1/gamma is 1)
GAMMA = 1.0                  # drift slope at the equilibrium
Z0 = 0.0
CENSOR_FRACTION = 0.03       # the slowest 3 % of unit-records censored in the censoring block
LEVEL = 0.90


#: replicates per (set, drift, record interval) of the kappa block (kappa_tail only)
KAPPA_REPLICATES = 4


def design(quick: bool, block: str = "all") -> list[dict]:
    """The datasets: one dict per dataset with its own seed. Blocks: "main" (every estimate, 48
    datasets) and "kappa" (kappa_tail only, 96 more datasets for its coverage)."""
    out, seed = [], 1000
    if quick:
        for gen, drift in (("independent", "saturating"), ("levysde", "saturating")):
            out.append(dict(set="broad", gen=gen, drift=drift, delta=0.5, S=2, Q=256, R=12, seed=seed,
                            n_boot=100))
            seed += 1
        return out
    if block in ("all", "main"):
        for name in PARAM_SETS:
            for gen, drift in DRIFTS:
                for delta in DELTAS:
                    for _ in range(2):
                        out.append(dict(set=name, gen=gen, drift=drift, delta=delta, S=5, Q=512, R=20, seed=seed,
                                        n_boot=500, block="main"))
                        seed += 1
    seed = 5000
    if block in ("all", "kappa"):
        for name in PARAM_SETS:
            for gen, drift in DRIFTS:
                for delta in DELTAS:
                    for _ in range(KAPPA_REPLICATES):
                        out.append(dict(set=name, gen=gen, drift=drift, delta=delta, S=5, Q=512, R=20, seed=seed,
                                        n_boot=500, block="kappa"))
                        seed += 1
    return out


def _truth(spec):
    import _independent_sde as gen

    ej, eg, k, a, lam = PARAM_SETS[spec["set"]]
    return gen.model_root(ej, eg, k, a, lam), k


def simulate(spec) -> tuple[np.ndarray, np.ndarray]:
    """zeta (R, S*Q) and the record times (R,) of one dataset."""
    ej, eg, k, a, lam = PARAM_SETS[spec["set"]]
    n = spec["S"] * spec["Q"]
    beta, _ = _truth(spec)
    burn = 20.0 + 10.0 / (k * beta) + 5.0 / GAMMA
    if spec["gen"] == "independent":
        import _independent_sde as gen

        drift = gen.Drift(spec["drift"], kappa=k, gamma=GAMMA, z0=Z0, kappa_r=2 * k)
        zeta, t, _ = gen.simulate(drift, eta_j=ej, eta_g=eg, alpha=a, lam=lam, n_neurons=n, n_records=spec["R"],
                                  record_dt=spec["delta"], dt=0.01, burn_in=burn, seed=spec["seed"])
        return zeta, t
    import levysde
    from levysde.simulation import SaturatingDrift

    dt = 0.01
    every = int(round(spec["delta"] / dt))
    burn = math.ceil(burn / spec["delta"]) * spec["delta"]
    t_end = burn + spec["R"] * spec["delta"] + dt
    res = levysde.simulate(ej, eta_g=eg, alpha=a, lam=lam, drift=SaturatingDrift(kappa=k, gamma=GAMMA, z0=Z0),
                           particles=n, t_end=t_end, burn_in=burn, dt=dt, seed=spec["seed"], n_groups=spec["S"],
                           traj_particles=n, traj_every=every)
    tt, zz = np.asarray(res.traj_t), np.asarray(res.traj_zeta)
    keep = np.flatnonzero(tt >= burn - 1e-9)[-spec["R"]:]
    if keep.size < spec["R"]:
        raise RuntimeError(f"levysde.simulate recorded {keep.size} records after burn-in, expected {spec['R']}")
    return zz[:, keep].T, tt[keep]


def _seed_blocks(zeta, S):
    R, n = zeta.shape
    Q = n // S
    return [np.exp(-zeta[:, s * Q:(s + 1) * Q]) for s in range(S)]


def _censor(taus, frac):
    """The slowest ``frac`` of all unit-records (pooled) set to NaN, as the paper's files mark them."""
    cut = np.quantile(np.concatenate([t.ravel() for t in taus]), 1 - frac)
    return [np.where(t > cut, np.nan, t) for t in taus]


def _kappa3(k):
    return k.kappa, k.lo, k.hi


def run_one(spec) -> dict:
    """One dataset: every estimate with its interval, and the truth."""
    from levysde.inference import paper_protocol as P

    t0 = time.perf_counter()
    row = dict(spec)
    try:
        beta_true, kappa_true = _truth(spec)
        zeta, t = simulate(spec)
        taus = _seed_blocks(zeta, spec["S"])
        ep = [t] * len(taus)
        row["truth"] = {"beta": beta_true, "kappa": kappa_true}
        nb = spec["n_boot"]
        k = P.kappa_tail(taus, ep, n_boot=nb, seed=spec["seed"])
        row["kappa"] = [k.kappa, k.lo, k.hi]
        cens = _censor(taus, CENSOR_FRACTION)
        if spec.get("block") == "kappa":
            row["censored_kappa"] = {r: list(_kappa3(P.kappa_tail(cens, ep, reading=r, n_boot=nb, seed=spec["seed"])))
                                     for r in P.READINGS}
            row["seconds"] = round(time.perf_counter() - t0, 2)
            return row
        wins = {}
        for q_lo, q_hi in WINDOWS:
            seeds = []
            for s, tau in enumerate(taus):
                b = P.ccdf_tail_bootstrap(tau[-1], q_lo=q_lo, q_hi=q_hi, n_boot=nb, seed=spec["seed"] + s)
                seeds.append([b.fit.beta_hat, b.lo, b.hi])
            wins[f"{q_lo:g}-{q_hi:g}"] = seeds
        row["beta"] = wins
        row["censored"] = {}
        for reading in P.READINGS:
            seeds = []
            for s, tau in enumerate(cens):
                b = P.ccdf_tail_bootstrap(tau[-1], reading=reading, n_boot=nb, seed=spec["seed"] + s)
                seeds.append([b.fit.beta_hat, b.lo, b.hi])
            kk = P.kappa_tail(cens, ep, reading=reading, n_boot=nb, seed=spec["seed"])
            row["censored"][reading] = {"beta": seeds, "kappa": list(_kappa3(kk)),
                                        "n_censored_final": int(sum(np.isnan(c[-1]).sum() for c in cens))}
    except Exception as exc:            # reported in the summary ("errors"), never dropped silently
        row["error"] = f"{type(exc).__name__}: {exc}"
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _stats(est, truth):
    """(bias of the mean, coverage of the intervals, n) of [[value, lo, hi], ...] against truth."""
    a = np.asarray(est, dtype=float)
    if a.size == 0:
        return None
    ok = np.isfinite(a[:, 0])
    v = a[ok]
    if v.size == 0:
        return {"bias": None, "coverage": None, "n": 0, "n_failed": int((~ok).sum())}
    rel = v[:, 0] / truth - 1.0
    cov = (v[:, 1] <= truth) & (truth <= v[:, 2])
    return {"bias": float(np.mean(rel)), "bias_se": float(np.std(rel, ddof=1) / math.sqrt(rel.size))
            if rel.size > 1 else None, "coverage": float(np.mean(cov)), "n": int(v.shape[0]),
            "n_failed": int((~ok).sum())}


def summarize(rows: list[dict]) -> dict:
    every = [r for r in rows if "error" not in r]
    good = [r for r in every if r.get("block", "main") == "main"]
    out = {"n_datasets": len(rows), "errors": [r["error"] for r in rows if "error" in r],
           "beta": {}, "beta_paper_summary": {}, "beta_pooled": {}, "kappa": {}, "kappa_by_set": {},
           "censored": {}}
    sets = sorted({r["set"] for r in good})
    drifts = sorted({f"{r['gen']}:{r['drift']}" for r in good})
    for w in (f"{a:g}-{b:g}" for a, b in WINDOWS):
        for name in sets:
            for d in drifts:
                sel = [r for r in good if r["set"] == name and f"{r['gen']}:{r['drift']}" == d]
                if not sel:
                    continue
                tr = sel[0]["truth"]["beta"]
                key = f"{w}|{name}|{d}"
                out["beta"][key] = dict(_stats([s for r in sel for s in r["beta"][w]], tr), beta_true=tr)
                # the paper's reported number: mean over seeds of the estimate and of the interval ends
                summ = [np.mean(np.asarray(r["beta"][w], dtype=float), axis=0).tolist() for r in sel]
                out["beta_paper_summary"][key] = _stats(summ, tr)
    for w in (f"{a:g}-{b:g}" for a, b in WINDOWS):
        for d in drifts:
            sel = [r for r in good if f"{r['gen']}:{r['drift']}" == d]
            if sel:         # pooled over the sets: estimates / truth against 1
                est = [[v / r["truth"]["beta"] for v in s] for r in sel for s in r["beta"][w]]
                out["beta_pooled"][f"{w}|{d}"] = _stats(est, 1.0)
    drifts_all = sorted({f"{r['gen']}:{r['drift']}" for r in every})
    for delta in sorted({r["delta"] for r in every}):
        for d in drifts_all:
            sel = [r for r in every if r["delta"] == delta and f"{r['gen']}:{r['drift']}" == d]
            if sel:        # kappa = 1 in every set: pooled over the sets
                out["kappa"][f"{delta:g}|{d}"] = _stats([r["kappa"] for r in sel], sel[0]["truth"]["kappa"])
        for name in sorted({r["set"] for r in every}):
            sel = [r for r in every if r["delta"] == delta and r["set"] == name]
            if sel:
                out["kappa_by_set"][f"{delta:g}|{name}"] = _stats([r["kappa"] for r in sel], sel[0]["truth"]["kappa"])
    for reading in ("censored", "dropped"):
        for name in sets:
            sel = [r for r in good if r["set"] == name]
            if not sel:
                continue
            tr = sel[0]["truth"]
            ks = [r["censored"][reading]["kappa"] for r in sel] + [
                r["censored_kappa"][reading] for r in every if r["set"] == name and "censored_kappa" in r]
            out["censored"][f"{reading}|{name}"] = {
                "beta": _stats([s for r in sel for s in r["censored"][reading]["beta"]], tr["beta"]),
                "kappa": _stats(ks, tr["kappa"])}
    out["seconds"] = round(sum(r["seconds"] for r in rows), 1)
    return out


def _pct(v):
    return "n/a" if v is None else f"{100 * v:+.0f} %"


def _cov(v):
    return "n/a" if v is None else f"{100 * v:.0f} %"


def markdown(s: dict) -> str:
    """The tables of docs/paper_protocol.md."""
    paper = f"{WINDOWS[0][0]:g}-{WINDOWS[0][1]:g}"
    lines = [f"beta_hat_tail in the paper's window {paper} (one seed's last record, 512 units; 90 % unit "
             "bootstrap):", "", "| beta* | drift | bias | coverage | n | paper summary: bias, coverage |",
             "|---|---|---|---|---|---|"]
    for key, v in s["beta"].items():
        w, name, d = key.split("|")
        if w != paper:
            continue
        p = s["beta_paper_summary"][key]
        lines.append(f"| {v['beta_true']:.3f} ({name}) | {d} | {_pct(v['bias'])} | {_cov(v['coverage'])} | "
                     f"{v['n']} | {_pct(p['bias'])}, {_cov(p['coverage'])} |")
    lines += ["", "beta_hat_tail in every window (pooled over the three beta*):", "",
              "| window | drift | bias | coverage | n |", "|---|---|---|---|---|"]
    for key, v in s["beta_pooled"].items():
        w, d = key.split("|")
        lines.append(f"| {w} | {d} | {_pct(v['bias'])} | {_cov(v['coverage'])} | {v['n']} |")
    lines += ["", "kappa_tail (q = 0.10, 5 seeds x 512 units; 90 % seed-block bootstrap; kappa = 1; pooled over "
              "the three sets):", "", "| record interval | drift | bias | coverage | n |", "|---|---|---|---|---|"]
    for key, v in s["kappa"].items():
        delta, d = key.split("|")
        lines.append(f"| {delta} | {d} | {_pct(v['bias'])} +- {100 * (v['bias_se'] or 0):.0f} % | "
                     f"{_cov(v['coverage'])} | {v['n']} |")
    lines += ["", "kappa_tail by parameter set (pooled over the drifts):", "",
              "| record interval | set | bias | coverage | n |", "|---|---|---|---|---|"]
    for key, v in s["kappa_by_set"].items():
        delta, name = key.split("|")
        lines.append(f"| {delta} | {name} | {_pct(v['bias'])} +- {100 * (v['bias_se'] or 0):.0f} % | "
                     f"{_cov(v['coverage'])} | {v['n']} |")
    lines += ["", f"slowest {100 * CENSOR_FRACTION:g} % of unit-records censored (paper window):", "",
              "| reading | set | beta bias | beta coverage | kappa bias | kappa coverage |",
              "|---|---|---|---|---|---|"]
    for key, v in s["censored"].items():
        reading, name = key.split("|")
        b, k = v["beta"], v["kappa"]
        lines.append(f"| {reading} | {name} | {_pct(b['bias'])} | {_cov(b['coverage'])} | {_pct(k['bias'])} | "
                     f"{_cov(k['coverage'])} |")
    return "\n".join(lines)


def _init_worker():
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 small datasets (CI)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--out", help="write one JSON row per dataset to this file")
    ap.add_argument("--block", choices=("all", "main", "kappa"), default="all",
                    help="the full study's blocks to run (default all)")
    ap.add_argument("--rows", nargs="+", metavar="ROWS.jsonl",
                    help="summarize rows written by --out instead of running")
    args = ap.parse_args(argv)
    if args.workers < 1:
        print("calibrate_paper: --workers must be >= 1", file=sys.stderr)
        return 2
    specs = [] if args.rows else design(args.quick, args.block)
    if args.rows:
        rows = [json.loads(line) for f in args.rows for line in open(f) if line.strip()]
    elif args.workers == 1:
        rows = [run_one(s) for s in specs]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=args.workers, initializer=_init_worker) as pool:
            rows = list(pool.map(run_one, specs))
    if args.out:
        with open(args.out, "w") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    s = summarize(rows)
    if args.json:
        print(json.dumps(s, indent=1))
    else:
        print(markdown(s))
        print(f"\n{s['n_datasets']} datasets, {len(s['errors'])} errors, {s['seconds']} s of work")
    return 0


if __name__ == "__main__":
    sys.exit(main())
