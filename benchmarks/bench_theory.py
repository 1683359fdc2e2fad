"""beta* over a 10^6-point parameter grid: one vectorised call vs a scalar brentq loop,
and the root-finder behind it (scipy.optimize.elementwise.find_root, through
levysde.theory.roots.chandrupatla) vs the package's former hand-written Chandrupatla loop.

Prints the times measured side by side in one run and their ratios (the machine is
shared and noisy: compare ratios, not absolute times). Targets: the vectorised call in
< 2 s on 2 cores; SciPy's root-finder not more than 2x slower than the
hand-written one, on the 10^6-point grid and on single-bracket calls (the
simulator's tail rate and the learnability window solve one equation per call).

    python benchmarks/bench_theory.py [--n 1000000] [--loop-n 20000] [--repeat 3] [--json]

The brentq loop is timed on ``--loop-n`` points and extrapolated linearly to n. The two
root-finders are timed alternately ``--repeat`` times each; the best time of each is kept.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _chandrupatla_handwritten import chandrupatla_handwritten
from scipy.optimize import brentq

from levysde.simulation import scheme
from levysde.theory import levy
from levysde.theory import phases as theory


def grid(n, seed=0):
    rng = np.random.default_rng(seed)
    return dict(eta_j=rng.uniform(0.0, 10.0, n), eta_g=rng.uniform(0.0, 0.5, n),
                kappa=rng.uniform(0.2, 2.0, n), alpha=rng.uniform(0.1, 1.9, n),
                lam=rng.uniform(0.2, 4.0, n))


def scalar_loop(p):
    out = np.full(p["eta_j"].size, np.nan)
    for i in range(out.size):
        ej, eg, k, a, lam = (float(p[n][i]) for n in ("eta_j", "eta_g", "kappa", "alpha", "lam"))

        def h(b, eg=eg, k=k, a=a, lam=lam, ej=ej):
            return eg * b - k + levy.psi(b, alpha=a, lam=lam, eta_j=ej) / b

        if h(lam) > 0:
            out[i] = brentq(h, 1e-12 * lam, lam, xtol=1e-15, rtol=8.9e-16)
    return out


def _with_root_finder(finder, call):
    """Run ``call()`` with theory and the simulation scheme using ``finder``; seconds, result."""
    saved = theory.chandrupatla, scheme.chandrupatla
    theory.chandrupatla = scheme.chandrupatla = finder
    try:
        t0 = time.perf_counter()
        out = call()
        return time.perf_counter() - t0, out
    finally:
        theory.chandrupatla, scheme.chandrupatla = saved


def compare_root_finders(p, repeat):
    """Best-of-``repeat`` times of SciPy's and the hand-written Chandrupatla, alternated, on the
    vectorised beta* grid ``p`` and on 200 scalar tail-rate solves (one bracket per call)."""
    rng = np.random.default_rng(1)
    scalar = [dict(alpha=float(a), lam=float(lm), eta_j=float(ej), eta_g=0.1, kappa=1.0, eps=1e-3)
              for a, lm, ej in zip(rng.uniform(0.3, 1.9, 200), rng.uniform(0.5, 3.0, 200),
                                   rng.uniform(2.0, 8.0, 200), strict=True)]

    def scalar_loop_call():
        return np.array([scheme.beta_model(**kw) for kw in scalar])

    def grid_call():
        return theory.beta_star(**p)
    best = {}
    for _ in range(repeat):
        for name, finder in (("scipy", theory.chandrupatla), ("handwritten", chandrupatla_handwritten)):
            for case, call in (("grid", grid_call), ("scalar", scalar_loop_call)):
                t, out = _with_root_finder(finder, call)
                key = (name, case)
                if key not in best or t < best[key][0]:
                    best[key] = (t, out)
    diff = {}
    for case in ("grid", "scalar"):
        a, b = best[("scipy", case)][1], best[("handwritten", case)][1]
        m = np.isfinite(a) & np.isfinite(b)
        if not np.array_equal(np.isfinite(a), np.isfinite(b)):
            raise AssertionError(f"{case}: the two root-finders disagree on which roots exist")
        diff[case] = float(np.max(np.abs(a[m] - b[m]) / b[m])) if m.any() else 0.0
    return {"scipy_grid_s": best[("scipy", "grid")][0],
            "handwritten_grid_s": best[("handwritten", "grid")][0],
            "scipy_over_handwritten_grid": best[("scipy", "grid")][0] / best[("handwritten", "grid")][0],
            "scipy_scalar200_s": best[("scipy", "scalar")][0],
            "handwritten_scalar200_s": best[("handwritten", "scalar")][0],
            "scipy_over_handwritten_scalar": (best[("scipy", "scalar")][0]
                                              / best[("handwritten", "scalar")][0]),
            "max_rel_diff_scipy_vs_handwritten_grid": diff["grid"],
            "max_rel_diff_scipy_vs_handwritten_scalar": diff["scalar"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--loop-n", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    p = grid(args.n)
    theory.beta_star(**grid(1000))           # warm-up
    t0 = time.perf_counter()
    b = theory.beta_star(**p)
    t_vec = time.perf_counter() - t0
    sub = {k: v[: args.loop_n] for k, v in p.items()}
    t0 = time.perf_counter()
    ref = scalar_loop(sub)
    t_loop = (time.perf_counter() - t0) * args.n / args.loop_n
    m = np.isfinite(ref)
    agree = float(np.max(np.abs(b[: args.loop_n][m] - ref[m]) / ref[m])) if m.any() else 0.0
    res = {"n": args.n, "vectorised_s": t_vec, "brentq_loop_s_extrapolated": t_loop,
           "speedup": t_loop / t_vec, "max_rel_diff_vs_brentq": agree,
           "fraction_with_root": float(np.isfinite(b).mean()),
           **compare_root_finders(p, args.repeat)}
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:>28}: {v:.4g}" if isinstance(v, float) else f"{k:>28}: {v}")


if __name__ == "__main__":
    main()
