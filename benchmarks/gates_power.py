"""Size and power of the gates of ``levysde check``, and its phase calls, on the independent generator.

Data: benchmarks/_independent_sde.py (Rosinski series jumps, drifts of its own; not levysde's
simulator). Every dataset has its own seed.

* ``--part gates``: the stationarity test (:func:`levysde.inference.check.stationarity_test`) and the
  independence test (:func:`levysde.inference.independence.independence_test`) on stationary runs
  (their false-rejection rate: goal <= 5 %), on runs whose spread grows by 10 % or 20 % over the late
  half (the late records' deviations from the median scaled by 1 + g s, s from 0 to 1 over the late
  half: power goal >= 80 % at 10 %), on a spreading start (slow drift, all neurons at z0), a moving
  equilibrium (z0 moving by 0.5 over the late half), and on jumps shared by all neurons (share 1,
  0.5 and 0.1 of the jump intensity; power goal >= 80 %).
* ``--part check``: :func:`levysde.inference.check.check_trajectories` (no closing loop) on
  positives (8 parameter sets with |beta* - 1| >= 0.3, five drift shapes, Delta in {0.1, 0.3, 1} with
  Delta kappa <= 1, Q in {256, 512, 1024}, R in {100, 200, 400}) and negatives (collapsed, OU,
  spreading, moving equilibrium, common and half-common jumps): the share of positives with a phase,
  the calls right, the false positives, the calls at stated odds >= 0.9, and the coverage of every
  reported beta.

* ``--part interval``: ``beta_dynamics`` (:func:`levysde.inference.dynamics.beta_dynamics`, refusal
  for a long record interval switched off) at Delta kappa = 1, 1.2 and 1.5 on the 8 sets, n runs each:
  its bias and coverage where one record carries zeta a long way off its far-left cut (the check
  refuses Delta kappa_hat > :data:`levysde.inference.dynamics.MAX_DELTA_KAPPA`).
* ``--part fine``: :func:`levysde.inference.check.check_trajectories` on runs recorded often
  (Delta = 0.01, Q = 1024, 4000 records: the late half is 20 time units, as for R = 400 at
  Delta = 0.1) of three concentrated sets and two collapsed ones, n runs each: whether the
  concentrated and collapsed calls come once lambda is identified (benchmarks/lambda_information.py
  --interval-scan gives the bound on its error).
* ``--part theory``: where ``beta_theory`` is reported at all (a record interval short against the
  drift's relaxation, gamma Delta = 0.04): 4 sets x n runs at Q = 512, R = 600, and its coverage.

    python benchmarks/gates_power.py --part gates [--n 20] [--workers 2] [--json] [--kinds stationary,grow10]
    python benchmarks/gates_power.py --part check [--n 3] [--workers 2] [--json] [--out rows.jsonl]
    python benchmarks/gates_power.py --part interval [--n 4] [--workers 2]
    python benchmarks/gates_power.py --part fine [--n 2] [--workers 1]
    python benchmarks/gates_power.py --part theory [--n 4] [--workers 1]
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

import _independent_sde as gen  # noqa: E402

#: (eta_j, eta_g, kappa, alpha, lam): the generated model's exact root in the comment
SETS = {
    "broad_a0.8": (4.0, 0.5, 1.0, 0.8, 1.0),       # 0.610
    "broad_a1.2": (5.0, 0.3, 1.0, 1.2, 1.5),       # 0.578
    "broad_a1.5": (4.0, 0.3, 1.0, 1.5, 2.0),       # 0.553
    "broad_a1.8": (2.0, 0.05, 1.0, 1.8, 1.5),      # 0.689
    "conc_a0.8": (1.0, 0.3, 1.0, 0.8, 2.5),        # 2.375
    "conc_a1.2_k2": (4.0, 0.2, 2.0, 1.2, 2.5),     # 1.962
    "conc_a1.5": (1.5, 0.1, 1.0, 1.5, 2.0),        # 1.460
    "conc_a1.8": (1.0, 0.1, 1.0, 1.8, 3.0),        # 1.407
}
#: collapsed sets (eta_J below eta_J*: no root in (0, lam))
COLLAPSED = {"coll_a1.5": (0.5, 0.1, 1.0, 1.5, 2.0),       # eta_J* 0.966
             "coll_a1.5_near": (0.78, 0.1, 1.0, 1.5, 2.0),  # 0.8 eta_J*
             "coll_a0.8": (0.5, 0.3, 1.0, 0.8, 2.5)}        # eta_J* 0.717
DRIFTS = (("saturating", 1.5), ("piecewise", 2.0), ("logistic", 1.0), ("saturating", 0.7), ("algebraic", 1.0))
DELTAS = (0.1, 0.3, 1.0)
QS = (256, 512, 1024)
RS = (100, 200, 400)
NEG_KINDS = ("collapsed", "ou", "spreading", "moving", "shared", "half_shared")
GATE_KINDS = ("stationary", "grow10", "grow20", "spreading", "moving", "shared", "half_shared", "shared_0.1")
SEED = 7_100_000


def _simulate(p, drift, delta, Q, R, seed, shared=0.0, burn=None, z_init=None):
    ej, eg, k, a, lam = p
    b = gen.model_root(ej, eg, k, a, lam)
    if burn is None:
        burn = 20.0 + 10.0 / (k * (b if math.isfinite(b) else lam)) + 5.0 / (drift.gamma)
    z, t, _ = gen.simulate(drift, eta_j=ej, eta_g=eg, alpha=a, lam=lam, n_neurons=Q, n_records=R,
                           record_dt=delta, dt=0.01 if delta < 1 else 0.02, burn_in=burn, seed=seed,
                           z_init=z_init, shared_jumps=shared)
    return z, t, b


def make(spec):
    """(zeta (R, Q), t (R,), true beta* or NaN) of one dataset spec."""
    kind, seed, Q, R, delta = spec["kind"], spec["seed"], spec["Q"], spec["R"], spec["delta"]
    name = spec["set"]
    p = SETS.get(name) or COLLAPSED[name]
    k = p[2]
    dkind, ratio = spec["drift"], spec["ratio"]
    drift = gen.Drift(dkind, kappa=k, gamma=ratio * k, z0=0.5, kappa_r=2 * k)
    if kind in ("positive", "stationary", "collapsed", "grow10", "grow20"):
        z, t, b = _simulate(p, drift, delta, Q, R, seed)
        if kind.startswith("grow"):
            g = 0.1 if kind == "grow10" else 0.2
            first = R // 2
            s = np.clip((np.arange(R) - first) / (R - 1 - first), 0.0, 1.0)[:, None]
            med = np.median(z[first])
            z = med + (z - med) * (1.0 + g * s)
        return z, t, (b if kind == "positive" else float("nan"))
    if kind == "ou":
        z, t, _ = _simulate(p, gen.Drift("ou", kappa=k, gamma=ratio * k, z0=0.5), delta, Q, R, seed)
        return z, t, float("nan")
    if kind == "spreading":        # slow drift, every neuron at z0 at the first record
        d = gen.Drift(dkind, kappa=0.2 * k, gamma=0.02 * k, z0=0.5, kappa_r=0.4 * k)
        z, t, _ = _simulate(p, d, delta, Q, R, seed, burn=0.0)
        return z, t, float("nan")
    if kind == "moving":           # the equilibrium moves by 0.5 over the late half (a common drift)
        z, t, _ = _simulate(p, drift, delta, Q, R, seed)
        first = R // 2
        s = np.clip((np.arange(R) - first) / (R - 1 - first), 0.0, 1.0)[:, None]
        return z + 0.5 * s, t, float("nan")
    if kind in ("shared", "half_shared", "shared_0.1"):
        share = {"shared": 1.0, "half_shared": 0.5, "shared_0.1": 0.1}[kind]
        z, t, _ = _simulate(p, drift, delta, Q, R, seed, shared=share)
        return z, t, float("nan")
    raise ValueError(f"unknown kind {kind!r}")


def check_specs(n: int) -> list:
    """n positives per set and n negatives per kind (cycling through sizes and drifts)."""
    out, seed = [], SEED
    rng = np.random.default_rng(SEED)
    for j, (name, p) in enumerate(SETS.items()):
        deltas = [d for d in DELTAS if d * p[2] <= 1 + 1e-12]
        for i in range(n):
            dk, ratio = DRIFTS[(i + j) % len(DRIFTS)]
            out.append(dict(kind="positive", set=name, drift=dk, ratio=ratio, delta=deltas[(i + j) % len(deltas)],
                            Q=int(rng.choice(QS)), R=int(rng.choice(RS)), seed=seed))
            seed += 1
    names = list(COLLAPSED)
    for kind in NEG_KINDS:
        for i in range(2 * n):
            dk, ratio = DRIFTS[i % 2]
            name = names[i % len(names)] if kind == "collapsed" else "broad_a1.5" if i % 2 else "conc_a1.5"
            out.append(dict(kind=kind, set=name, drift=dk, ratio=ratio, delta=(0.1, 0.3, 1.0)[i % 3],
                            Q=(256, 512, 1024)[i % 3], R=(100, 200, 400)[(i // 3) % 3], seed=seed))
            seed += 1
    return out


def gate_specs(n: int) -> list:
    out, seed = [], SEED + 500_000
    names = list(SETS)
    for kind in GATE_KINDS:
        for i in range(n):
            dk, ratio = DRIFTS[i % len(DRIFTS)]
            out.append(dict(kind=kind, set=names[i % len(names)], drift=dk, ratio=ratio,
                            delta=(0.1, 0.3)[i % 2], Q=(256, 512, 1024)[i % 3], R=(100, 200, 400)[(i // 3) % 3],
                            seed=seed))
            seed += 1
    return out


def run_gates(spec) -> dict:
    from levysde.inference.check import stationarity_test
    from levysde.inference.independence import independence_test

    z, t, _ = make(spec)
    first = z.shape[0] // 2
    st = stationarity_test(z[first:], t[first:])
    ind = independence_test(z[first:], t[first:])
    late = z[first:]
    sd = np.nanstd(late, axis=1)
    return dict(spec, stationary=st.stationary, st_reason=st.reason[:120],
                t={k: v.t for k, v in st.stats.items()}, independent=ind.independent, ratio=ind.ratio,
                p_value=ind.p_value, std_growth=float(sd[-5:].mean() / sd[:5].mean() - 1))


def run_check(spec) -> dict:
    from levysde.inference.check import check_trajectories

    t0 = time.perf_counter()
    z, t, b = make(spec)
    row = dict(spec, truth=b)
    try:
        d = check_trajectories(z, t, seed=spec["seed"] % 100_000, n_boot=200, closing_loop=False).as_json()
    except Exception as exc:        # reported, never dropped
        row.update(error=f"{type(exc).__name__}: {exc}", phase=None)
        return row
    keep = ("phase", "phase_probabilities", "beta_tail", "beta_tail_se", "beta_tail_status", "beta_dynamics",
            "beta_dynamics_se", "beta_dynamics_status", "beta_combined", "beta_combined_se", "beta_theory",
            "beta_theory_se", "beta_theory_status", "closure_z", "closure_correlation", "closure_weight_tail",
            "phase_probabilities_combined", "admissibility", "gates", "phase_evidence", "phase_withheld",
            "lam_hat", "lam_hat_se")
    row.update({k: d.get(k) for k in keep})
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


INTERVAL_DELTA_KAPPA = (1.0, 1.2, 1.5)


def interval_specs(n: int) -> list:
    """n runs per set and Delta kappa in :data:`INTERVAL_DELTA_KAPPA` (cycling drifts and sizes)."""
    out, seed = [], SEED + 1_200_000
    for name, p in SETS.items():
        for dk in INTERVAL_DELTA_KAPPA:
            for i in range(n):
                drift, ratio = DRIFTS[(i + len(out)) % len(DRIFTS)]
                out.append(dict(kind="positive", set=name, drift=drift, ratio=ratio, delta=dk / p[2], delta_kappa=dk,
                                Q=QS[i % 3], R=RS[(i + 1) % 3], seed=seed))
                seed += 1
    return out


def run_interval(spec) -> dict:
    from levysde.inference.dynamics import beta_dynamics

    z, t, b = make(spec)
    j = beta_dynamics(z, t, late_fraction=0.5, n_groups=16, max_delta_kappa=1e9).as_json()
    v, se = j.get("beta_dynamics"), j.get("beta_dynamics_se")
    return dict(spec, truth=b, beta_dynamics=v, beta_dynamics_se=se, delta_kappa_hat=j.get("delta_kappa"),
                status=str(j.get("status")), message=(j.get("message") or "")[:120])


def summarize_interval(rows) -> dict:
    out = {}
    for dk in INTERVAL_DELTA_KAPPA:
        sub = [r for r in rows if r["delta_kappa"] == dk]
        ok = [r for r in sub if r["beta_dynamics"] is not None and r["beta_dynamics_se"]]
        z = [(r["beta_dynamics"] - r["truth"]) / r["beta_dynamics_se"] for r in ok]
        rel = [(r["beta_dynamics"] - r["truth"]) / r["truth"] for r in ok]
        out[str(dk)] = {"n": len(sub), "reported": len(ok),
                        "coverage": [_rate([abs(v) <= 1 for v in z]), _rate([abs(v) <= 2 for v in z])],
                        "mean_z": float(np.mean(z)) if z else None,
                        "sd_z": float(np.std(z, ddof=1)) if len(z) > 1 else None,
                        "relative_bias": float(np.mean(rel)) if rel else None,
                        "refused": sorted({r["message"][:60] for r in sub if r not in ok})}
    return out


FINE_SETS = ("conc_a1.5", "conc_a1.2_k2", "conc_a1.8", "coll_a1.5", "coll_a0.8")


def fine_specs(n: int) -> list:
    return [dict(kind="positive" if name in SETS else "collapsed", set=name, drift=DRIFTS[(i + j) % 2][0],
                 ratio=DRIFTS[(i + j) % 2][1], delta=0.01, Q=1024, R=4000, seed=SEED + 1_300_000 + 10 * i + j)
            for i, name in enumerate(FINE_SETS) for j in range(n)]


def summarize_fine(rows) -> dict:
    out = {}
    for name in FINE_SETS:
        sub = [r for r in rows if r["set"] == name]
        out[name] = {"n": len(sub), "truth": "concentrated" if name in SETS else "collapsed",
                     "phases": [r.get("phase") for r in sub],
                     "admissibility": [(r.get("admissibility") or {}).get("status") for r in sub],
                     "lam_hat": [r.get("lam_hat") for r in sub], "lam_hat_se": [r.get("lam_hat_se") for r in sub],
                     "beta_dynamics": [r.get("beta_dynamics") for r in sub],
                     "withheld": [(r.get("phase_withheld") or [])[:3] for r in sub]}
    return out


THEORY_SETS = ("broad_a0.8", "conc_a1.5", "broad_a1.5", "conc_a1.2_k2")


def theory_specs(n: int) -> list:
    return [dict(kind="theory", set=name, seed=SEED + 900_000 + 10 * i + j) for i, name in enumerate(THEORY_SETS)
            for j in range(n)]


def run_theory(spec) -> dict:
    from levysde.inference.check import check_trajectories

    ej, eg, k, a, lam = SETS[spec["set"]]
    delta = 0.04 / k
    z, t, b = _simulate((ej, eg, k, a, lam), gen.Drift("saturating", kappa=k, gamma=k, z0=0.5), delta, 512, 600,
                        spec["seed"], burn=40.0)
    d = check_trajectories(z, t, seed=1, n_boot=100, closing_loop=False).as_json()
    return dict(spec, truth=b, **{k: d.get(k) for k in ("beta_theory", "beta_theory_se", "beta_theory_flag", "phase",
                                                         "model_checks", "beta_combined", "beta_combined_se")})


def summarize_theory(rows) -> dict:
    z = [(r["beta_theory"] - r["truth"]) / r["beta_theory_se"] for r in rows
         if r.get("beta_theory") is not None and r.get("beta_theory_se")]
    return {"n": len(rows), "reported": len(z), "standardized_errors": [round(v, 2) for v in z],
            "coverage": [_rate([abs(v) <= 1 for v in z]), _rate([abs(v) <= 2 for v in z])],
            "phases": {s: [r["phase"] for r in rows if r["set"] == s] for s in THEORY_SETS}}


def _rate(xs):
    return (sum(xs) / len(xs)) if xs else None


def summarize_gates(rows) -> dict:
    out = {}
    for kind in GATE_KINDS:
        sub = [r for r in rows if r["kind"] == kind]
        if not sub:
            continue
        out[kind] = {"n": len(sub), "rejected_stationarity": _rate([not r["stationary"] for r in sub]),
                     "rejected_independence": _rate([not r["independent"] for r in sub]),
                     "median_std_growth": float(np.median([r["std_growth"] for r in sub])) if sub else None,
                     "median_ratio": float(np.median([r["ratio"] for r in sub])) if sub else None}
    return out


def _cov(rows, key, k):
    z = [abs(r[key] - r["truth"]) / r[f"{key}_se"] for r in rows
         if r.get(key) is not None and r.get(f"{key}_se") and math.isfinite(r["truth"])]
    return (_rate([v <= k for v in z]), len(z))


def summarize_check(rows) -> dict:
    ok = [r for r in rows if "error" not in r]
    pos = [r for r in ok if r["kind"] == "positive"]
    neg = [r for r in ok if r["kind"] != "positive"]
    calls = [r for r in pos if r["phase"] is not None]
    truth = {id(r): ("concentrated" if r["truth"] > 1 else "broad") for r in pos}
    right = [r for r in calls if r["phase"] == truth[id(r)]]
    sure = [r for r in calls if (r.get("phase_probabilities") or {}).get(r["phase"], 0) >= 0.9]
    fp = [r for r in neg if r["phase"] is not None and not (r["kind"] == "collapsed" and r["phase"] == "collapsed")]
    out = {"n_positives": len(pos), "n_negatives": len(neg),
           "errors": [f"{r['kind']} {r['seed']}: {r['error']}" for r in rows if "error" in r],
           "with_phase": _rate([r["phase"] is not None for r in pos]), "calls": len(calls),
           "calls_right": _rate([r in right for r in calls]),
           "calls_odds_0.9": len(sure), "calls_odds_0.9_right": _rate([r["phase"] == truth[id(r)] for r in sure]),
           "false_positive_rate": _rate([r in fp for r in neg]),
           "false_positives": [f"{r['kind']} {r['set']} {r['drift']} d={r['delta']} Q={r['Q']} R={r['R']} "
                               f"seed={r['seed']}: {r['phase']}" for r in fp],
           "collapsed_called_collapsed": sum(r["kind"] == "collapsed" and r["phase"] == "collapsed" for r in neg),
           "wrong_calls": [f"{r['set']} {r['drift']} d={r['delta']} Q={r['Q']} R={r['R']} seed={r['seed']}: "
                           f"{r['phase']}" for r in calls if r not in right]}
    out["coverage"] = {k: [_cov(pos, k, 1)[0], _cov(pos, k, 2)[0], _cov(pos, k, 1)[1]]
                       for k in ("beta_tail", "beta_dynamics", "beta_combined", "beta_theory")}
    fails = {}
    for r in pos:
        for g, passed in (r.get("gates") or {}).items():
            if not passed:
                fails[g] = fails.get(g, 0) + 1
    out["positives_failed_gates"] = fails
    out["by_set"] = {s: f"{sum(r['phase'] is not None for r in pos if r['set'] == s)}/"
                        f"{sum(r['set'] == s for r in pos)}" for s in SETS}
    out["negatives_by_kind"] = {k: f"{sum(r['phase'] is not None for r in neg if r['kind'] == k)}/"
                                   f"{sum(r['kind'] == k for r in neg)}" for k in NEG_KINDS}
    return out


def _init():
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("gates", "check", "interval", "fine", "theory"), required=True)
    ap.add_argument("--n", type=int, default=None, help="datasets per kind (gates: 20; check: 3 per set)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", help="one JSON row per dataset")
    ap.add_argument("--kinds", help="--part gates: only these kinds (comma-separated; default all: "
                    + ",".join(GATE_KINDS) + ")")
    args = ap.parse_args(argv)
    if (args.n is not None and args.n < 1) or args.workers < 1:
        ap.error("--n and --workers must be >= 1")
    n = args.n or {"gates": 20, "check": 3, "interval": 4, "fine": 2, "theory": 4}[args.part]
    todo = {"gates": gate_specs, "check": check_specs, "interval": interval_specs, "fine": fine_specs,
            "theory": theory_specs}[args.part](n)
    if args.kinds:
        kinds = args.kinds.split(",")
        bad = sorted(set(kinds) - set(GATE_KINDS))
        if args.part != "gates" or bad:
            ap.error(f"--kinds applies to --part gates and takes kinds among {', '.join(GATE_KINDS)}"
                     + (f"; got {', '.join(bad)}" if bad else ""))
        todo = [sp for sp in todo if sp["kind"] in kinds]
    fn = {"gates": run_gates, "check": run_check, "interval": run_interval, "fine": run_check,
          "theory": run_theory}[args.part]
    t0 = time.perf_counter()
    if args.workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(args.workers, initializer=_init) as pool:
            rows = list(pool.map(fn, todo))
    else:
        rows = [fn(s) for s in todo]
    if args.out:
        with open(args.out, "w") as fh:
            for r in rows:
                fh.write(json.dumps(r, default=float) + "\n")
    s = {"gates": summarize_gates, "check": summarize_check, "interval": summarize_interval, "fine": summarize_fine,
         "theory": summarize_theory}[args.part](rows)
    s["wall_s"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(s, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
