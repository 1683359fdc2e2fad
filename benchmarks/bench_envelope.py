"""Envelope of 10^7 samples at 10^3 lags: the binned fast path vs the exact direct sum.

    python benchmarks/bench_envelope.py [--n 10000000] [--lags 1000] [--json]

Both are timed in the same run (the machine is shared: compare the ratio). The
direct sum mean(exp(-l e^zeta)) is timed on 10^5 samples and extrapolated
linearly in n. Also reports the largest difference between the two results.
Target: the fast path in < 1 s on 2 cores.
"""
import argparse
import json
import os
import time

import numpy as np

from levysde.theory.envelope_map import envelope, envelope_samples


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--lags", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    z = -np.log(rng.pareto(0.8, args.n) + 1.0)          # Pareto(0.8) time scales
    lags = np.geomspace(0.1, 1e5, args.lags)
    envelope(lags[:3], zeta=z[:1000])                    # warm-up
    t0 = time.perf_counter()
    f = envelope(lags, zeta=z)
    t_fast = time.perf_counter() - t0
    m = 100_000
    t0 = time.perf_counter()
    exact = envelope_samples(lags, z[:m], bin_width=0, errors=False).f
    t_direct = (time.perf_counter() - t0) * args.n / m
    fast_m = envelope_samples(lags, z[:m], errors=False).f
    res = {"n_samples": args.n, "n_lags": args.lags, "fast_s": t_fast, "direct_s_extrapolated": t_direct,
           "speedup": t_direct / t_fast, "max_abs_diff_on_1e5": float(np.max(np.abs(fast_m - exact))),
           "load_average_1min": os.getloadavg()[0], "f_last": float(f[-1])}
    print(json.dumps(res, indent=2) if args.json else "\n".join(f"{k:>24}: {v}" for k, v in res.items()))


if __name__ == "__main__":
    main()
