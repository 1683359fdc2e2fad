"""Recording stride: standard error of beta_hat against the recording stride k at fixed cost.

The histograms of :func:`levysde.simulate` sample zeta every ``record_every`` = k-th step.
Recording draws no random numbers, so runs with the same seed and different k simulate the
same paths and differ only in which states are histogrammed: the ratio of their jackknife
standard errors (docs/specification.md §8) is measured with little noise. For each k this prints the
standard error of beta_hat at threshold u, the CPU time of the stepper per particle-step, and
``se^2 * cpu`` relative to k = 1 (the variance at fixed CPU time: lower is better, because
the simulated time that fits into a fixed budget scales as 1/cpu and the variance as 1/time).

Usage: python benchmarks/bench_record_stride.py [--json] [--eta-j 3] [--particles 8192]
       [--t-end 150] [--strides 1 2 5 10 20 50 100] [model flags as in levysde simulate]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from levysde import simulation as S  # noqa: E402


def stride_study(strides, *, u=3.0, seed=0, **kw):
    """One run per stride (same seed, same paths); returns a list of dicts. ``kw`` are the
    keywords of :func:`levysde.simulate` (the drift as ``drift=SaturatingDrift(kappa, gamma)``)."""
    rows = []
    for k in strides:
        r = S.simulate(record_every=k, seed=seed, **kw)
        est = r.tail(u)
        rows.append({"record_every": k, "beta_hat": est.beta_hat, "se": est.se,
                     "n_excursions": est.n_excursions,
                     "cpu_ns_per_step": 1e9 * r.meta.cpu_time_s / (r.meta.particles * r.meta.steps),
                     "beta_model": r.meta.beta_model})
    ref = rows[0]["se"] ** 2 * rows[0]["cpu_ns_per_step"]
    for row in rows:
        row["se_ratio"] = row["se"] / rows[0]["se"]
        row["variance_x_cpu_rel"] = row["se"] ** 2 * row["cpu_ns_per_step"] / ref
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--eta-j", type=float, default=3.0)
    p.add_argument("--eta-g", type=float, default=0.1)
    p.add_argument("--kappa", type=float, default=1.0)
    p.add_argument("--alpha", type=float, default=1.5)
    p.add_argument("--lam", type=float, default=2.0)
    p.add_argument("--gamma", type=float, default=1.0)
    p.add_argument("--u", type=float, default=3.0)
    p.add_argument("--particles", type=int, default=8192)
    p.add_argument("--t-end", type=float, default=150.0)
    p.add_argument("--burn-in", type=float, default=25.0)
    p.add_argument("--strides", type=int, nargs="+", default=[1, 2, 5, 10, 20, 50, 100])
    a = p.parse_args(argv)
    rows = stride_study(a.strides, u=a.u, eta_j=a.eta_j, eta_g=a.eta_g, alpha=a.alpha, lam=a.lam,
                        drift=S.SaturatingDrift(kappa=a.kappa, gamma=a.gamma), particles=a.particles,
                        t_end=a.t_end, burn_in=a.burn_in)
    out = {"args": vars(a), "rows": rows, "load_average": os.getloadavg()[0]}
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{'k':>5} {'beta_hat':>9} {'se':>8} {'se/se1':>7} {'excursions':>10} {'cpu ns/step':>11} "
              f"{'se^2*cpu rel':>12}")
        for r in rows:
            print(f"{r['record_every']:>5} {r['beta_hat']:>9.5f} {r['se']:>8.5f} {r['se_ratio']:>7.3f} "
                  f"{r['n_excursions']:>10.0f} {r['cpu_ns_per_step']:>11.2f} {r['variance_x_cpu_rel']:>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
