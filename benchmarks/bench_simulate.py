"""Throughput of the Numba simulator vs a vectorised NumPy twin and the random-number limit.

Same N particles, same steps, defaults with eta_J = 3 (THEORY.md §4, §7), all measured
side by side in one run (ratios are meaningful on a shared machine; absolute rates are not):

* numba_steps_per_s  : levysde.simulate (recording the histogram every step)
* numpy_steps_per_s  : the same scheme written in vectorised NumPy (exact Poisson counts,
                       rejection-sampled big jumps, Gaussian small jumps, same histogram)
* limit_steps_per_s  : 2 x single-thread vectorised NumPy Gaussian-only Euler, same drift
* ratio_vs_numpy (goal >= 3), ratio_vs_limit (goal >= 0.7)
* profile            : ns per particle-step on one thread: the Numba kernel with parts
                       removed, the NumPy twin and the Gaussian-only NumPy Euler
* numba_steps_per_s_1thread, parallel_speedup, load_average: to read the ratios on a
  shared machine (a busy second core caps the 2-thread speed-up)

With ``--backend cuda`` it measures the GPU backend instead (:func:`cuda_benchmark`):
particle-steps/s of levysde.simulate(backend="cuda") at 1e6 particles (goal >= 1e11 on one H200,
fp64), a profile (no recording, no jumps) and the ratio to the CPU backend on all host cores,
side by side. Under NUMBA_ENABLE_CUDASIM=1 it runs (tiny, with --quick) but measures nothing
meaningful.

Usage: python benchmarks/bench_simulate.py [--json] [--quick] [--backend {cpu,cuda}]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from levysde import simulation as S  # noqa: E402

ETA_J, ETA_G, KAPPA, ALPHA, LAM, GAMMA, Z0, DT = 3.0, 0.1, 1.0, 1.5, 2.0, 1.0, 0.0, 0.01


def _scheme():
    eps = S.default_eps(DT, eta_j=ETA_J, alpha=ALPHA)
    rate = S.big_jump_rate(eps, alpha=ALPHA, lam=LAM, eta_j=ETA_J)
    sig2 = S.small_jump_variance(eps, alpha=ALPHA, lam=LAM, eta_j=ETA_J)
    return eps, rate, math.sqrt((2 * ETA_G + sig2) * DT)


def numpy_twin(n, steps, seed=0, n_groups=64, bin_width=0.02, half=56.0):
    """The same Euler scheme in vectorised NumPy; returns particle-steps/s."""
    eps, rate, s_gauss = _scheme()
    rng = np.random.default_rng(seed)
    z = np.full(n, Z0)
    nb = int(round(2 * half / bin_width))
    lo = Z0 - half
    grp = (np.arange(n) * n_groups) // n
    counts = np.zeros(n_groups * nb)
    sums = np.zeros(n_groups * nb)
    a = GAMMA / KAPPA
    t0 = time.perf_counter()
    for _ in range(steps):
        x = z + KAPPA * np.tanh(a * (Z0 - z)) * DT + s_gauss * rng.standard_normal(n)
        k = rng.poisson(rate * DT, n)
        tot = int(k.sum())
        if tot:
            mags = np.empty(0)
            while mags.size < tot:                       # Pareto proposal, exact rejection
                m = tot - mags.size
                prop = eps * (1.0 - rng.random(m)) ** (-1.0 / ALPHA)
                mags = np.concatenate([mags, prop[rng.random(m) < np.exp(-LAM * (prop - eps))]])
            signed = np.where(rng.random(tot) < 0.5, -mags, mags)
            x += np.bincount(np.repeat(np.arange(n), k), weights=signed, minlength=n)
        z = x
        ib = np.clip(((z - lo) / bin_width).astype(np.int64), 0, nb - 1) + grp * nb
        counts += np.bincount(ib, minlength=counts.size)
        sums += np.bincount(ib, weights=z, minlength=sums.size)
    return n * steps / (time.perf_counter() - t0)


def gaussian_limit(n, steps, seed=0):
    """2 x single-thread vectorised NumPy Gaussian-only Euler with the same drift."""
    _, _, s_gauss = _scheme()
    rng = np.random.default_rng(seed)
    z = np.full(n, Z0)
    a = GAMMA / KAPPA
    t0 = time.perf_counter()
    for _ in range(steps):
        z = z + KAPPA * np.tanh(a * (Z0 - z)) * DT + s_gauss * rng.standard_normal(n)
    return 2.0 * n * steps / (time.perf_counter() - t0)


def numba_rate(n, steps, *, eta_j=ETA_J, record=True, backend="cpu", n_groups=64):
    t_end = steps * DT
    burn = 0.0 if record else t_end - DT
    kw = {} if backend == "cpu" else {"backend": backend}
    r = S.simulate(eta_j, eta_g=ETA_G, kappa=KAPPA, alpha=ALPHA, lam=LAM, gamma=GAMMA, z0=Z0,
                   particles=n, t_end=t_end, burn_in=burn, dt=DT, seed=1, n_groups=n_groups, **kw)
    return r.meta["particle_steps_per_s"], r.meta["threads"]


def cuda_benchmark(quick=False):
    """GPU backend: particle-steps/s at 1e6 particles (goal 1e11 on one H200), a profile in
    ns per particle-step (full, no recording, no jumps and no recording), and the ratio to
    the CPU backend on all host cores measured in the same run."""
    import numba

    r = S.simulate(ETA_J, particles=64, n_groups=8, t_end=2 * DT, burn_in=DT, dt=DT,
                   backend="cuda")                      # compile / load the kernel cache
    device = r.meta["device"]
    n, steps = (64, 10) if quick else (1_000_000, 20_000)
    rounds = 1 if quick else 3
    prof = {}
    for label, kw in (("full", {}), ("no_recording", {"record": False}),
                      ("no_jumps_no_recording", {"eta_j": 0.0, "record": False})):
        best = max(numba_rate(n, steps, backend="cuda", n_groups=4 if quick else 64, **kw)[0]
                   for _ in range(rounds))
        prof[label] = 1e9 / best
    gpu = 1e9 / prof["full"]
    n_cpu, steps_cpu = (256, 20) if quick else (200_000, 200)
    cpu = max(numba_rate(n_cpu, steps_cpu)[0] for _ in range(rounds))
    return {"backend": "cuda", "device": device, "particles": n, "steps": steps, "quick": quick,
            "cuda_steps_per_s": gpu, "goal_cuda_steps_per_s": 1e11,
            "cpu_steps_per_s": cpu, "cpu_threads": numba.get_num_threads(),
            "cpu_particles": n_cpu, "cpu_steps": steps_cpu,
            "ratio_cuda_vs_cpu": gpu / cpu, "profile_ns_per_step_cuda": prof,
            "simulator": device == "CUDA simulator", "load_average": os.getloadavg()[0],
            "rounds": rounds}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--quick", action="store_true", help="small sizes (CI smoke run)")
    p.add_argument("--backend", choices=("cpu", "cuda"), default="cpu",
                   help="cuda: measure the GPU backend against the CPU one (default %(default)s)")
    args = p.parse_args(argv)
    if args.backend == "cuda":
        return _print(cuda_benchmark(args.quick), args.json)
    n, steps = (20_000, 40) if args.quick else (100_000, 200)
    rounds = 2 if args.quick else 3
    numba_rate(256, 2)                                   # compile / load the cache
    best = {"numba": 0.0, "numpy": 0.0, "limit": 0.0}
    threads = 1
    for _ in range(rounds):                              # interleaved rounds, best of each:
        r, threads = numba_rate(n, steps)                # the machine is shared, so only
        best["numba"] = max(best["numba"], r)            # side-by-side bests are comparable
        best["numpy"] = max(best["numpy"], numpy_twin(n, steps))
        best["limit"] = max(best["limit"], gaussian_limit(n, steps))
    numba_steps, numpy_steps, limit_steps = best["numba"], best["numpy"], best["limit"]
    # single-thread figures: meaningful even when other jobs occupy the second core
    import numba

    old_threads = numba.get_num_threads()
    numba.set_num_threads(1)
    numba_1t = max(numba_rate(n, steps)[0] for _ in range(rounds))
    prof = {}
    for label, kw in (("full", {}), ("no_recording", {"record": False}),
                      ("no_jumps_no_recording", {"eta_j": 0.0, "record": False})):
        prof[label] = 1e9 / max(numba_rate(n, steps, **kw)[0] for _ in range(rounds))
    numba.set_num_threads(old_threads)
    prof["numpy_twin"] = 1e9 / numpy_steps
    prof["numpy_gaussian_euler"] = 2e9 / limit_steps
    out = {"particles": n, "steps": steps, "threads": threads, "quick": args.quick,
           "numba_steps_per_s": numba_steps, "numpy_steps_per_s": numpy_steps,
           "limit_steps_per_s": limit_steps,
           "ratio_vs_numpy": numba_steps / numpy_steps, "ratio_vs_limit": numba_steps / limit_steps,
           "goals": {"ratio_vs_numpy": 3.0, "ratio_vs_limit": 0.7},
           "numba_steps_per_s_1thread": numba_1t, "ratio_1thread_vs_numpy": numba_1t / numpy_steps,
           "parallel_speedup": numba_steps / numba_1t,
           "load_average": os.getloadavg()[0],
           "rounds": rounds, "profile_ns_per_step_1thread": prof}
    return _print(out, args.json)


def _print(out, as_json):
    if as_json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:>32}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
