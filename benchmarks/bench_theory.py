"""beta* over a 10^6-point parameter grid: one vectorised call vs a scalar brentq loop.

Prints the two times measured side by side in one run and their ratio (the
machine is shared and noisy: compare ratios, not absolute times). Target of the
core issue: the vectorised call in < 2 s on 2 cores.

    python benchmarks/bench_theory.py [--n 1000000] [--loop-n 20000] [--json]

The brentq loop is timed on ``--loop-n`` points and extrapolated linearly to n.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy.optimize import brentq

from levysde import levy, theory


def grid(n, seed=0):
    rng = np.random.default_rng(seed)
    return dict(eta_j=rng.uniform(0.0, 10.0, n), eta_g=rng.uniform(0.0, 0.5, n),
                kappa=rng.uniform(0.2, 2.0, n), alpha=rng.uniform(0.1, 1.9, n),
                lam=rng.uniform(0.2, 4.0, n))


def scalar_loop(p):
    out = np.full(p["eta_j"].size, np.nan)
    for i in range(out.size):
        ej, eg, k, a, lam = (float(p[n][i]) for n in ("eta_j", "eta_g", "kappa", "alpha", "lam"))

        def h(b):
            return eg * b - k + levy.psi(b, alpha=a, lam=lam, eta_j=ej) / b

        if h(lam) > 0:
            out[i] = brentq(h, 1e-12 * lam, lam, xtol=1e-15, rtol=8.9e-16)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--loop-n", type=int, default=20_000)
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
           "fraction_with_root": float(np.isfinite(b).mean())}
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        for k, v in res.items():
            print(f"{k:>28}: {v:.4g}" if isinstance(v, float) else f"{k:>28}: {v}")


if __name__ == "__main__":
    main()
