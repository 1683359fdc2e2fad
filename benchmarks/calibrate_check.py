"""Calibration study of ``levysde check`` (docs/calibration.md).

Synthetic zeta trajectories with known truth go through :func:`levysde.inference.check.check_trajectories`
exactly as a run file's arrays would:

* positives: stationary runs of the SDE (docs/specification.md §3, saturating drift) simulated by
  levysde's simulator at five (eta_J, eta_G, alpha, lam, kappa) sets, broad and concentrated,
  at the sizes of real runs (H = 64 ... 1024 neurons, R = 50 ... 200 records; the check uses
  the late half). Their reported kappa_hat, alpha_hat and beta_tail are compared with kappa,
  alpha and beta* (the Cramer rate, docs/specification.md §4): the fraction inside +-1 and +-2 reported
  standard errors is the coverage;
* negatives, which must get no phase: deterministic contracting and expanding transients,
  SDE transients (slow drift started narrow or broad), ballistic per-neuron drift, a frozen
  spectrum, too few neurons, too few records. The fraction that gets a phase is the
  false-positive rate.

Targets: 1-sigma coverage 0.6-0.75, 2-sigma 0.9-0.98, false positives <= 5 %.
With G = 16 neuron groups the jackknife's t_15 law gives 0.667 and 0.936 for an unbiased
estimator.

    python benchmarks/calibrate_check.py [--quick] [--json] [--workers 2] [--out rows.jsonl]

``--quick`` (CI): 12 small datasets, about 5 s once Numba's cache is warm (the first run in a fresh
checkout adds about 40 s of compilation). The full study: the 200 original datasets (block "original")
plus 120 more positives with fresh seeds (block "extra") and 72 jump-dominated positives where alpha is
identified (block "alpha"), and 24 of those at H = 64-128 (block "alpha_small"): 416 in all;
``coverage_original`` gives the 200 alone.
Every dataset has its own seed: results do not depend on --workers.

``--block independent``: the study of ``check`` on the independent generator (benchmarks/_check_study.py:
412 datasets; positives far from and near the boundaries, six negative kinds, and 32 recorded often; resumable records):

    python benchmarks/calibrate_check.py --block independent [--quick] [--out study.json.gz] [--shard K/N]
    python benchmarks/calibrate_check.py --block independent --summarize study.json.gz [--json | --markdown]
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

#: stationary SDE parameter sets (drift: saturating, kappa tanh(gamma (z0 - z)/kappa), z0 = 0)
PARAM_SETS = {
    "broad_a0.8": dict(eta_j=3.0, eta_g=0.5, alpha=0.8, lam=1.0, kappa=1.0, gamma=1.0),
    "broad_a1.5": dict(eta_j=3.0, eta_g=0.1, alpha=1.5, lam=2.0, kappa=1.0, gamma=1.0),
    "conc_a1.5": dict(eta_j=1.5, eta_g=0.1, alpha=1.5, lam=2.0, kappa=1.0, gamma=1.0),
    "conc_a1.2_k2": dict(eta_j=4.0, eta_g=0.2, alpha=1.2, lam=2.5, kappa=2.0, gamma=2.0),
    "conc_a1.0_k0.5": dict(eta_j=1.0, eta_g=0.2, alpha=1.0, lam=3.0, kappa=0.5, gamma=0.5),
}
#: jump-dominated sets (small eta_G): alpha is identified at the larger sizes of real runs (block "alpha")
ALPHA_SETS = {
    "jumps_a0.8": dict(eta_j=3.0, eta_g=0.1, alpha=0.8, lam=1.0, kappa=1.0, gamma=1.0),
    "jumps_a1.2": dict(eta_j=3.0, eta_g=0.05, alpha=1.2, lam=1.0, kappa=1.0, gamma=1.0),
    "jumps_a1.0_conc": dict(eta_j=3.0, eta_g=0.05, alpha=1.0, lam=2.0, kappa=1.0, gamma=1.0),
}
PARAM_SETS.update(ALPHA_SETS)
SIZES_H = (64, 128, 256, 512, 1024)
SIZES_R = (50, 100, 200)
DT_REC = 0.1            # SDE time between records
SIM_DT = 0.01           # Euler step of the simulator
BURN_IN = 10.0          # SDE time before the first record (stationary runs)
NEGATIVES = {           # kind -> number of datasets in the full study (80 in all)
    "contracting": 12, "expanding": 12, "sde_contracting": 8, "sde_expanding": 8,
    "ballistic": 12, "frozen": 8, "few_neurons": 12, "few_records": 8,
}
COVERAGE_KEYS = ("kappa_hat", "alpha_hat", "beta_tail")
#: the other reported errors, also checked against the truth (``coverage_other``: [1 sigma, 2 sigma, n]
#: over estimates without an unresolved flag, e.g. not eta_G_hat without a jump fit, whose estimand is
#: the increments' robust diffusion; beta_theory only where a phase is called, it is withheld otherwise)
COVERAGE_OTHER_KEYS = ("eta_g_hat", "eta_j_hat", "lam_hat", "beta_theory")
#: positives per parameter set added to the 200 original datasets (fresh seeds, after the negatives)
EXTRA_POSITIVES = 24
#: positives per ALPHA_SETS set (block "alpha", seeds after the extra block), at H x R in ALPHA_SIZES
ALPHA_POSITIVES = 24
ALPHA_SIZES = ((256, 512, 1024), (100, 200))
#: the same sets at the smallest sizes of real runs (block "alpha_small", seeds after the alpha block):
#: the phase calls and gates where the jump fit is weakest (a reviewer found wrong calls there)
ALPHA_SMALL_POSITIVES = 8
ALPHA_SMALL_SIZES = ((64, 128), (100, 200))

def _sde(p, H, R, seed, *, z_init=None, burn_in=BURN_IN):
    """(zeta (R, H), t (R,)) of a simulated run (the simulator's thinned trajectories)."""
    from levysde.simulation import SaturatingDrift, simulate

    every = int(round(DT_REC / SIM_DT))
    res = simulate(p["eta_j"], eta_g=p["eta_g"], alpha=p["alpha"], lam=p["lam"],
                   drift=SaturatingDrift(kappa=p["kappa"], gamma=p["gamma"]), particles=H,
                   t_end=burn_in + R * DT_REC, burn_in=burn_in, dt=SIM_DT,
                   seed=seed, traj_particles=H, traj_every=every, n_groups=min(64, H), z_init=z_init)
    return res.traj_zeta.T[-R:], res.traj_t[-R:]


def _broad_spectrum(rng, H):
    """A broad spread of zeta with a long left tail, as trained networks show."""
    return -2.0 - rng.exponential(2.0, H) + rng.normal(0.0, 0.5, H)


def make_dataset(spec):
    """(zeta (R, H), step (R,)) for one dataset spec (see :func:`specs`)."""
    kind, seed, H, R = spec["kind"], spec["seed"], spec["H"], spec["R"]
    rng = np.random.default_rng(seed)
    step = np.arange(R) * 10.0
    s = (step / step[-1])[:, None]
    if kind == "positive" or kind in ("few_neurons", "few_records"):
        p = PARAM_SETS[spec["set"]]
        zeta, t = _sde(p, H, R, seed)
        return zeta, t
    if kind in ("contracting", "expanding"):
        z0 = _broad_spectrum(rng, H)
        med = np.median(z0)
        factor = 1 - spec["rate"] * s if kind == "contracting" else 1 + spec["rate"] * s
        noise = spec["noise"] * rng.standard_normal((R, H))
        return med + (z0 - med)[None, :] * factor + noise, step
    if kind in ("sde_contracting", "sde_expanding"):
        p = dict(PARAM_SETS[spec["set"]], kappa=0.2, gamma=0.02)        # slow relaxation (1/gamma = 50)
        z_init = rng.normal(0.0, 6.0, H) if kind == "sde_contracting" else np.zeros(H)
        return _sde(p, H, R, seed, z_init=z_init, burn_in=0.0)
    if kind == "ballistic":
        z0 = rng.normal(-3.0, 1.0, H)
        v = rng.normal(0.0, spec["speed"], H) / step[-1]
        walk = np.cumsum(spec["noise"] * rng.standard_normal((R, H)), axis=0)
        return z0[None, :] + v[None, :] * step[:, None] + walk, step
    if kind == "frozen":
        return np.tile(_broad_spectrum(rng, H), (R, 1)), step
    raise ValueError(f"unknown dataset kind {kind!r}")


def _positives(names, n_pos, seed, quick, block, sizes=(SIZES_H, SIZES_R)):
    """n_pos stationary SDE datasets per parameter set, seeds from ``seed`` on, cycling through
    the sizes (H first, then R)."""
    hs, rs = sizes
    out = []
    for name in names:
        for i in range(n_pos):
            H, R = ((64, 128)[i % 2], (50, 100)[i % 2]) if quick else (hs[i % len(hs)], rs[(i // len(hs)) % len(rs)])
            out.append({"kind": "positive", "set": name, "seed": seed, "H": H, "R": R, "block": block})
            seed += 1
    return out


def specs(quick: bool) -> list:
    """The datasets of the study: dicts with kind, seed, H, R, block and the kind's settings.

    Full study: the 200 original datasets (block "original": 120 positives, 80 negatives)
    and EXTRA_POSITIVES more positives per parameter set with fresh seeds (block "extra"),
    so that a coverage is measured to about +-0.03 rather than +-0.045, and ALPHA_POSITIVES per
    ALPHA_SETS set (block "alpha"), where alpha is identified, so that its coverage can be
    measured at all, and ALPHA_SMALL_POSITIVES per set at H = 64-128 (block "alpha_small")
    (docs/calibration.md).
    """
    issue_sets = [n for n in PARAM_SETS if n not in ALPHA_SETS]
    out = _positives(issue_sets if not quick else ("broad_a0.8", "conc_a1.5", "broad_a1.5"),
                     2 if quick else 24, 1000, quick, "original")
    seed = 1000 + len(out)
    counts = {k: 1 for k in ("contracting", "expanding", "ballistic", "frozen", "few_neurons", "few_records")} \
        if quick else NEGATIVES
    names = issue_sets
    for kind, n in counts.items():
        for i in range(n):
            H = (64, 128, 256, 512, 1024)[i % 5] if not quick else 64
            R = (50, 100, 200)[i % 3] if not quick else 50
            sp = {"kind": kind, "seed": seed, "H": H, "R": R, "set": names[i % len(names)]}
            if kind in ("contracting", "expanding"):
                sp.update(rate=(0.6, 0.3, 1.0)[i % 3] if kind == "expanding" else (0.6, 0.4, 0.5)[i % 3],
                          noise=(1e-3, 1e-2)[i % 2])
            elif kind == "ballistic":
                sp.update(speed=(1.0, 3.0, 0.5)[i % 3], noise=(1e-3, 3e-2)[i % 2])
            elif kind == "few_neurons":
                sp.update(H=(8, 16, 24)[i % 3], R=(100, 200)[i % 2])
            elif kind == "few_records":
                sp.update(H=256, R=(3, 6, 12, 16)[i % 4])
            out.append(dict(sp, block="original"))
            seed += 1
    if not quick:
        out += _positives(issue_sets, EXTRA_POSITIVES, seed, quick, "extra")
        seed += len(issue_sets) * EXTRA_POSITIVES
        out += _positives(ALPHA_SETS, ALPHA_POSITIVES, seed, quick, "alpha", ALPHA_SIZES)
        seed += len(ALPHA_SETS) * ALPHA_POSITIVES
        out += _positives(ALPHA_SETS, ALPHA_SMALL_POSITIVES, seed, quick, "alpha_small", ALPHA_SMALL_SIZES)
    return out


def run_one(spec) -> dict:
    """Check one dataset; a row with the spec, the truth and the check's numbers."""
    import levysde
    from levysde.inference.check import check_trajectories

    t0 = time.perf_counter()
    row = dict(spec)
    try:
        zeta, step = make_dataset(spec)
        d = check_trajectories(zeta, step, seed=spec["seed"], n_boot=200).as_json()
    except Exception as exc:            # reported in the summary ("errors"), never dropped silently
        row.update(error=f"{type(exc).__name__}: {exc}", phase=None, stationary=None, phase_withheld=[])
        return row
    row.update({k: d.get(k) for k in ("kappa_hat", "kappa_hat_se", "kappa_hat_log_se", "kappa_hat_flag", "alpha_hat",
                                      "alpha_hat_se", "alpha_hat_flag", "beta_tail", "beta_tail_se", "beta_tail_flag",
                                      "eta_j_hat", "eta_j_hat_se", "eta_j_hat_flag", "eta_g_hat", "eta_g_hat_se",
                                      "eta_g_hat_flag", "lam_hat", "lam_hat_se", "lam_hat_flag", "beta_theory",
                                      "beta_theory_se", "beta_theory_flag", "phase",
                                      "stationary", "ks_distance", "phase_withheld", "phase_probabilities",
                                      "beta_dynamics", "beta_dynamics_se", "beta_dynamics_flag", "beta_combined",
                                      "beta_combined_se", "closure_z", "gates")})
    row["delta_kappa"] = (d.get("dynamics") or {}).get("delta_kappa")
    if spec["kind"] == "positive":
        p = PARAM_SETS[spec["set"]]
        r = levysde.classify(p["eta_j"], eta_g=p["eta_g"], kappa=p["kappa"], alpha=p["alpha"], lam=p["lam"])
        row["truth"] = {"kappa_hat": p["kappa"], "alpha_hat": p["alpha"], "beta_tail": float(r.beta_star),
                        "eta_g_hat": p["eta_g"], "eta_j_hat": p["eta_j"], "lam_hat": p["lam"],
                        "beta_theory": float(r.beta_star), "phase": str(r.phase)}
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


#: flags that mark an estimate as unresolved (reported, but not to be taken at face value)
UNRESOLVED = ("at the edge", "not identified", "no ", "plateau not reached", "drift form rejected")


def resolved(r, key) -> bool:
    flag = r.get(f"{key}_flag") or ""
    return not flag.startswith(UNRESOLVED) and "unreliable" not in flag


def wilson(hits: int, n: int, z: float = 1.96):
    """Wilson score interval (95 %) of a proportion hits/n; None for n = 0."""
    if n == 0:
        return None
    p = hits / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(c - h, 3), round(c + h, 3)]


def has_truth(r, key) -> bool:
    """A positive with a finite true value of key (beta* is NaN when the true phase is collapsed:
    no admissible root, nothing to cover)."""
    t = (r.get("truth") or {}).get(key)
    return r["kind"] == "positive" and t is not None and math.isfinite(t)


def coverage(rows, key, k, only_resolved=False):
    """Fraction of positives whose reported key lies within k reported standard errors of the truth
    (:func:`standardized_error`; over those with a finite truth, a value and a finite, positive error;
    ``only_resolved``: also without an unresolved flag). Returns (fraction or None, n)."""
    hits = [abs(standardized_error(r, key)) <= k for r in rows
            if has_truth(r, key) and r.get(key) is not None and r.get(f"{key}_se") is not None
            and r[f"{key}_se"] > 0 and (resolved(r, key) or not only_resolved)]
    return (float(np.mean(hits)) if hits else None), len(hits)


def standardized_error(r, key) -> float:
    """(estimate - truth)/se, or on the log scale (log(estimate/truth)/log_se) when the check
    reports the error of that estimate on the log scale (``KEY_log_se``, e.g. kappa_hat)."""
    if r.get(f"{key}_log_se") is not None:
        return math.log(r[key] / r["truth"][key]) / r[f"{key}_log_se"]
    return (r[key] - r["truth"][key]) / r[f"{key}_se"]


def summarize(rows) -> dict:
    pos = [r for r in rows if r["kind"] == "positive"]
    neg = [r for r in rows if r["kind"] != "positive"]
    out = {"n_datasets": len(rows), "n_positives": len(pos), "n_negatives": len(neg),
           "errors": [f"{r['kind']} seed={r['seed']}: {r['error']}" for r in rows if "error" in r]}
    pos = [r for r in pos if "error" not in r]
    out["coverage_1sigma"] = {k: coverage(rows, k, 1)[0] for k in COVERAGE_KEYS}
    out["coverage_2sigma"] = {k: coverage(rows, k, 2)[0] for k in COVERAGE_KEYS}
    out["coverage_n"] = {k: coverage(rows, k, 1)[1] for k in COVERAGE_KEYS}
    out["coverage_ci95"] = {}                   # Wilson 95 % intervals: how well the study measures a coverage
    for k in COVERAGE_KEYS:
        out["coverage_ci95"][k] = {}
        for m in (1, 2):
            c, n = coverage(rows, k, m)
            out["coverage_ci95"][k][f"{m}sigma"] = wilson(round(c * n), n) if n else None
    for block in ("original", "extra", "alpha", "alpha_small"):
        sub = [r for r in rows if r.get("block") == block]
        if any(r["kind"] == "positive" for r in sub):
            out[f"coverage_{block}"] = {k: [coverage(sub, k, 1)[0], coverage(sub, k, 2)[0], coverage(sub, k, 1)[1]]
                                        for k in COVERAGE_KEYS}
    out["coverage_other"] = {k: [coverage(rows, k, 1, True)[0], coverage(rows, k, 2, True)[0],
                                 coverage(rows, k, 1, True)[1]] for k in COVERAGE_OTHER_KEYS}
    out["coverage_resolved_1sigma"] = {k: coverage(rows, k, 1, True)[0] for k in COVERAGE_KEYS}
    out["coverage_resolved_2sigma"] = {k: coverage(rows, k, 2, True)[0] for k in COVERAGE_KEYS}
    out["coverage_resolved_n"] = {k: coverage(rows, k, 1, True)[1] for k in COVERAGE_KEYS}
    ph = [r for r in rows if r["kind"] == "positive" and r.get("phase") is not None]
    out["coverage_with_phase_1sigma"] = {k: coverage(ph, k, 1)[0] for k in COVERAGE_KEYS}
    out["coverage_with_phase_2sigma"] = {k: coverage(ph, k, 2)[0] for k in COVERAGE_KEYS}
    out["coverage_with_phase_n"] = {k: coverage(ph, k, 1)[1] for k in COVERAGE_KEYS}
    out["false_positive_rate"] = float(np.mean([r["phase"] is not None for r in neg])) if neg else None
    out["false_positives"] = [f"{r['kind']} H={r['H']} R={r['R']} seed={r['seed']}: {r['phase']}"
                              for r in neg if r["phase"] is not None]
    out["positives_with_phase"] = float(np.mean([r["phase"] is not None for r in pos])) if pos else None
    out["positives_phase_correct"] = float(np.mean([r["phase"] == r["truth"]["phase"] for r in pos])) if pos else None
    out["power"] = {"positives": len(pos), "with_phase": int(sum(r["phase"] is not None for r in pos)),
                    "phase_correct": int(sum(r["phase"] is not None and r["phase"] == r["truth"]["phase"]
                                             for r in pos))}
    z = {k: [standardized_error(r, k) for r in pos
             if has_truth(r, k) and r.get(k) is not None and r.get(f"{k}_se") not in (None, 0)]
         for k in COVERAGE_KEYS}
    out["mean_standardized_error"] = {k: (float(np.mean(v)) if v else None) for k, v in z.items()}
    by_set = {}
    for name in sorted({r["set"] for r in pos}):
        sub = [r for r in pos if r["set"] == name]
        by_set[name] = {f"{k}_cov1": coverage(sub, k, 1)[0] for k in COVERAGE_KEYS}
        by_set[name].update({f"{k}_cov2": coverage(sub, k, 2)[0] for k in COVERAGE_KEYS})
        by_set[name]["with_phase"] = float(np.mean([r["phase"] is not None for r in sub]))
        by_set[name]["n"] = len(sub)
    out["by_set"] = by_set
    by_kind = {}
    for kind in sorted({r["kind"] for r in neg}):
        sub = [r for r in neg if r["kind"] == kind]
        by_kind[kind] = {"n": len(sub), "with_phase": int(sum(r["phase"] is not None for r in sub)),
                         "stationary": int(sum(bool(r["stationary"]) for r in sub))}
    out["negatives_by_kind"] = by_kind
    reasons = {}
    for r in pos:
        for w in r["phase_withheld"] or []:
            key = w.split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    out["positives_withheld_reasons"] = reasons
    return out


def _init_worker():
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="12 small datasets (CI)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--out", help="levysde: write one JSON row per dataset to this file; independent: the study's "
                                  "JSON (summary and per-dataset records), cached as it runs (an interrupted run "
                                  "continues from OUT.partial.jsonl)")
    ap.add_argument("--block", choices=("levysde", "independent"), default="levysde",
                    help="levysde: the study on levysde's simulator (default); independent: the study on the "
                         "independent generator (benchmarks/_check_study.py: 412 datasets; 8 with --quick)")
    ap.add_argument("--fresh", action="store_true", help="independent: ignore records cached in --out")
    ap.add_argument("--shard", help="independent: run only datasets K, K+N, K+2N, ... (K/N)")
    ap.add_argument("--summarize", nargs="+", metavar="FILE",
                    help="independent: summarize study files (JSON or .partial.jsonl) instead of running")
    ap.add_argument("--markdown", action="store_true",
                    help="independent, with --summarize: the tables in Markdown, one column per file")
    args = ap.parse_args(argv)
    if args.workers < 1:
        print("calibrate_check: --workers must be >= 1", file=sys.stderr)
        return 2
    if args.block != "independent" and (args.summarize or args.markdown or args.fresh or args.shard):
        print("calibrate_check: --summarize, --markdown, --fresh and --shard apply to --block independent only",
              file=sys.stderr)
        return 2
    if args.markdown and not args.summarize:
        print("calibrate_check: --markdown needs --summarize FILE ...", file=sys.stderr)
        return 2
    missing = [f for f in args.summarize or () if not os.path.exists(f)]
    if missing:
        print(f"calibrate_check: --summarize: no such file: {missing[0]}", file=sys.stderr)
        return 2
    if args.block == "independent":
        import _check_study

        return _check_study.main(args)
    todo = specs(args.quick)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    fh = open(args.out, "w") if args.out else None
    rows = []

    def keep(r):
        rows.append(r)
        if fh:
            fh.write(json.dumps(r) + "\n")
            fh.flush()

    if args.workers == 1:
        for sp in todo:
            keep(run_one(sp))
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=args.workers, initializer=_init_worker) as pool:
            for r in pool.map(run_one, todo):
                keep(r)
    if fh:
        fh.close()
    summ = summarize(rows)
    summ["wall_s"] = round(time.perf_counter() - t0, 1)
    summ["load_avg_1min"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
    summ["workers"] = args.workers
    if args.json:
        print(json.dumps(summ, indent=1))
        return 0
    print(f"calibrate_check: {summ['n_datasets']} datasets in {summ['wall_s']} s "
          f"(load {summ['load_avg_1min']}, {args.workers} workers)")
    print(f"{'':<12}{'1 sigma':>10}{'2 sigma':>10}{'n':>6}   (goals 0.6-0.75, 0.9-0.98)")
    for k in COVERAGE_KEYS:
        c1, c2, n = summ["coverage_1sigma"][k], summ["coverage_2sigma"][k], summ["coverage_n"][k]

        def fmt(v):
            return f"{v:10.3f}" if v is not None else f"{'-':>10}"
        print(f"{k:<12}{fmt(c1)}{fmt(c2)}{n:6d}")
    print(f"false-positive rate {summ['false_positive_rate']:.3f} over {summ['n_negatives']} negatives "
          f"(goal <= 0.05); positives with a phase {summ['positives_with_phase']:.2f}, "
          f"phase correct {summ['positives_phase_correct']:.2f}")
    for s in summ["false_positives"]:
        print("  false positive:", s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
