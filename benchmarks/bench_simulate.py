"""Throughput of the Numba simulator vs a vectorised NumPy twin and a bare Numba Gaussian Euler.

Same N particles, same steps, defaults with eta_J = 3 (docs/specification.md §4, §7), all measured
side by side in one run (ratios are meaningful on a shared machine; absolute rates are not):

* numba_steps_per_s  : levysde.simulate (histogram and excursions every record_every-th step,
                       the default stride), on all Numba threads
* numpy_steps_per_s  : the same scheme written in vectorised NumPy as fast as we know how
                       (in-place operations; big jumps by superposition, as the simulator:
                       a Poisson total per step, uniform particles, rejection-sampled
                       magnitudes; Gaussian small jumps; the same histogram at the same stride)
* limit_steps_per_s  : a bare Numba Gaussian Euler (:func:`gaussian_euler`): the same RNG
                       (xoshiro256++ streams and ziggurat normals of levysde/simulation/_rng.py), the same
                       compiled drift and the same threads and chunking of particle blocks as the
                       simulator, with no jumps, no recording and no divergence check. It is the
                       faster of two layouts (blocks of 256 particles advanced in lockstep by the
                       simulator's own vectorised normal and update passes; one particle at a time
                       with its state in registers, which is latency-bound by the drift),
                       measured as ``limit_layouts``
* ratio_vs_numpy (goal >= 5), ratio_vs_limit (goal >= 0.7), both on all threads (2 here)
* profile            : ns of CPU time per particle-step on one thread (CPU time, so that other
                       jobs on the machine do not count): the simulator with parts removed,
                       the NumPy twin, and the bare Euler
* scaling            : speed-up of the simulator for 1, 2, 4, ... threads up to the host's cores
* base_eps           : the simulator at the base cut default_eps = (eta_J dt)^(1/alpha) of
                       docs/specification.md §7 (simulate's default simulation_eps is twice that here): its
                       ratios, big jumps per step and beta_model - beta*, next to the default's
* load_average       : 1-minute load at the start and at the end of the run

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

import numba
import numpy as np
from numba import njit, prange

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from levysde import simulation as S  # noqa: E402
from levysde.simulation import _rng  # noqa: E402
from levysde.simulation._kernels import BLOCK, WINDOW, _drift_value, _gauss_pass, _lanes  # noqa: E402
from levysde.simulation._simulate import chunk_bounds  # noqa: E402
from levysde.theory.phases import beta_star  # noqa: E402

ETA_J, ETA_G, KAPPA, ALPHA, LAM, GAMMA, Z0, DT = 3.0, 0.1, 1.0, 1.5, 2.0, 1.0, 0.0, 0.01


def _scheme(eps=None):
    """(eps, Lambda_eps, Gaussian step) of the simulator's default cut (or of ``eps``)."""
    if eps is None:
        eps = S.simulation_eps(DT, eta_j=ETA_J, eta_g=ETA_G, kappa=KAPPA, alpha=ALPHA, lam=LAM)
    rate = S.big_jump_rate(eps, alpha=ALPHA, lam=LAM, eta_j=ETA_J)
    sig2 = S.small_jump_variance(eps, alpha=ALPHA, lam=LAM, eta_j=ETA_J)
    return eps, rate, math.sqrt((2 * ETA_G + sig2) * DT)


def numpy_twin(n, steps, seed=0, n_groups=64, bin_width=0.05, half=56.0,
               record_every=S.DEFAULT_RECORD_EVERY, clock=time.perf_counter):
    """The same Euler scheme in vectorised NumPy, written as fast as we know how (in-place
    operations on preallocated arrays; the big jumps of a step by superposition, as the
    simulator does: one Poisson total for all particles, each jump on a uniform particle,
    ``np.add.at``; magnitudes by the exact Pareto-proposal rejection); returns particle-steps
    per second of ``clock``."""
    eps, rate, s_gauss = _scheme()
    rng = np.random.default_rng(seed)
    z = np.full(n, Z0)
    nb = int(round(2 * half / bin_width))
    lo = Z0 - half
    grp = (np.arange(n) * n_groups) // n
    counts = np.zeros(n_groups * nb)
    sums = np.zeros(n_groups * nb)
    a = GAMMA / KAPPA
    tmp, nrm = np.empty(n), np.empty(n)
    t0 = clock()
    for k in range(steps):
        np.subtract(Z0, z, out=tmp)
        tmp *= a
        np.tanh(tmp, out=tmp)
        tmp *= KAPPA * DT
        rng.standard_normal(out=nrm)
        nrm *= s_gauss
        z += tmp
        z += nrm
        tot = rng.poisson(rate * DT * n)
        if tot:
            mags = np.empty(0)
            while mags.size < tot:                       # Pareto proposal, exact rejection
                m = tot - mags.size
                prop = eps * (1.0 - rng.random(m)) ** (-1.0 / ALPHA)
                mags = np.concatenate([mags, prop[rng.random(m) < np.exp(-LAM * (prop - eps))]])
            signed = np.where(rng.random(tot) < 0.5, -mags, mags)
            np.add.at(z, rng.integers(0, n, tot), signed)
        if (k + 1) % record_every == 0:
            ib = np.clip(((z - lo) / bin_width).astype(np.int64), 0, nb - 1) + grp * nb
            counts += np.bincount(ib, minlength=counts.size)
            sums += np.bincount(ib, weights=z, minlength=sums.size)
    return n * steps / (clock() - t0)


@njit(cache=True, parallel=True, error_model="numpy")   # no division checks: vectorises
def _euler_lockstep(z, states, gstart, n_steps, dt, kind, dpar, grid, vals, s_gauss):
    """Bare Gaussian Euler, the simulator's layout: groups in parallel, blocks of BLOCK
    particles advanced in lockstep by the simulator's own vectorised drift + Gaussian pass
    (no jump table), with the streams moved into the block's lanes once per window of
    WINDOW steps as in the simulator."""
    d0, d1, d2 = dpar[0], dpar[1], dpar[2]
    for g in prange(gstart.size - 1):
        ls = np.empty((4, BLOCK), np.uint64)
        nrm = np.empty(BLOCK)
        raw = np.empty(BLOCK, np.uint64)
        slow = np.zeros(BLOCK, np.uint8)
        no_jumps = np.zeros((1, 1))
        for b0 in range(gstart[g], gstart[g + 1], BLOCK):
            nb = min(b0 + BLOCK, gstart[g + 1]) - b0
            for w0 in range(0, n_steps, WINDOW):
                _lanes(states, b0, nb, ls, True)
                for _ in range(min(WINDOW, n_steps - w0)):
                    _gauss_pass(z, ls, b0, nb, dt, kind, d0, d1, d2, grid, vals, s_gauss, nrm, raw,
                                slow, no_jumps, 0, False)
                _lanes(states, b0, nb, ls, False)


@njit(cache=True, parallel=True)
def _euler_registers(z, states, n_steps, dt, kind, dpar, grid, vals, s_gauss):
    """Bare Gaussian Euler, one particle at a time with its state in registers."""
    d0, d1, d2 = dpar[0], dpar[1], dpar[2]
    for p in prange(z.size):
        s0, s1, s2, s3 = states[p, 0], states[p, 1], states[p, 2], states[p, 3]
        x = z[p]
        for _ in range(n_steps):
            f = _drift_value(kind, x, d0, d1, d2, grid, vals)
            nrm, s0, s1, s2, s3 = _rng.normal(s0, s1, s2, s3)
            x = x + f * dt + s_gauss * nrm
        z[p] = x
        states[p, 0], states[p, 1], states[p, 2], states[p, 3] = s0, s1, s2, s3


def gaussian_euler(n, steps, layout="lockstep", seed=0, clock=time.perf_counter):
    """Bare Numba Gaussian Euler with the simulator's RNG, drift, threads, calls per run
    (:func:`levysde.simulation._simulate.chunk_bounds`) and (for "lockstep") its 64 groups of
    256-particle blocks; returns particle-steps per second of ``clock``."""
    _, _, s_gauss = _scheme()
    kind, dpar, grid, vals = S.SaturatingDrift(KAPPA, GAMMA, Z0).kernel_args()
    z = np.full(n, Z0)
    states = _rng.seed_states(seed, n)
    old = numba.set_parallel_chunksize(1)                # as in the simulator
    try:
        bounds = chunk_bounds(steps, n)                  # the simulator's calls of its stepper
        gstart = S.group_starts(n, 64)
        t0 = clock()
        for i in range(len(bounds) - 1):
            k = bounds[i + 1] - bounds[i]
            if layout == "lockstep":
                _euler_lockstep(z, states, gstart, k, DT, kind, dpar, grid, vals, s_gauss)
            else:
                _euler_registers(z, states, k, DT, kind, dpar, grid, vals, s_gauss)
        return n * steps / (clock() - t0)
    finally:
        numba.set_parallel_chunksize(old)


def numba_rate(n, steps, *, eta_j=ETA_J, record=True, backend="cpu", cpu=False, n_groups=64, **extra):
    """Simulator particle-steps/s (wall clock, or CPU time of the stepper with ``cpu=True``)."""
    t_end = steps * DT
    burn = 0.0 if record else t_end - DT
    kw = {} if backend == "cpu" else {"backend": backend}
    r = S.simulate(eta_j, eta_g=ETA_G, alpha=ALPHA, lam=LAM, drift=S.SaturatingDrift(KAPPA, GAMMA, Z0),
                   particles=n, t_end=t_end, burn_in=burn, dt=DT, seed=1, n_groups=n_groups, **kw, **extra)
    if cpu:
        return n * steps / r.meta.cpu_time_s, r.meta.threads
    return r.meta.particle_steps_per_s, r.meta.threads


def cuda_benchmark(quick=False):
    """GPU backend: particle-steps/s at 1e6 particles (goal 1e11 on one H200), a profile in
    ns per particle-step (full, no recording, no jumps and no recording), and the ratio to
    the CPU backend on all host cores measured in the same run."""
    r = S.simulate(ETA_J, particles=64, n_groups=8, t_end=2 * DT, burn_in=DT, dt=DT,
                   backend="cuda")                      # compile / load the kernel cache
    device = r.meta.device
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
    return _print(cpu_benchmark(args.quick), args.json)


def _best(fn, rounds):
    return max(fn() for _ in range(rounds))


def _profile(n, steps, rounds):
    """ns of CPU time per particle-step on one thread, by part (see the module docstring)."""
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        ns = {}
        for label, kw in (("full", {}), ("full_record_every_step", {"record_every": 1}),
                          ("no_recording", {"record": False}),
                          ("no_jumps_no_recording", {"eta_j": 0.0, "record": False})):
            ns[label] = 1e9 / _best(lambda kw=kw: numba_rate(n, steps, cpu=True, **kw)[0], rounds)
        for layout in ("lockstep", "registers"):
            ns[f"bare_euler_{layout}"] = 1e9 / _best(
                lambda layout=layout: gaussian_euler(n, steps, layout, clock=time.process_time), rounds)
        ns["numpy_twin"] = 1e9 / _best(lambda: numpy_twin(n, steps, clock=time.process_time), rounds)
    finally:
        numba.set_num_threads(old)
    bare = min(ns["bare_euler_lockstep"], ns["bare_euler_registers"])
    parts = {"bare_gaussian_euler": bare,
             "stepper_overhead": ns["no_jumps_no_recording"] - bare,
             "big_jumps": ns["no_recording"] - ns["no_jumps_no_recording"],
             "recording_default_stride": ns["full"] - ns["no_recording"],
             "recording_every_step": ns["full_record_every_step"] - ns["no_recording"]}
    return ns, parts


def _scaling(n, steps, rounds):
    """Speed-up of the simulator (wall clock) for 1, 2, 4, ... threads up to the available ones."""
    old = numba.get_num_threads()
    top = numba.config.NUMBA_NUM_THREADS
    counts = sorted({t for t in (1, 2, 4, 8, 16, 32, 64, 128) if t <= top} | {top})
    rate = {}
    try:
        for t in counts:
            numba.set_num_threads(t)
            rate[t] = _best(lambda: numba_rate(n, steps)[0], rounds)
    finally:
        numba.set_num_threads(old)
    return {str(t): rate[t] / rate[1] for t in counts}


def cpu_benchmark(quick=False):
    """The CPU figures of the module docstring, measured side by side (interleaved rounds, best
    of each: the machine is shared, so only side-by-side bests are comparable)."""
    n, steps = (20_000, 40) if quick else (100_000, 400)
    rounds = 2 if quick else 5
    load0 = os.getloadavg()[0]
    numba_rate(256, 2)                                   # compile / load the caches
    gaussian_euler(256, 2)
    gaussian_euler(256, 2, "registers")
    best = dict.fromkeys(("numba", "numpy", "lockstep", "registers", "eps2"), 0.0)
    eps2 = S.default_eps(DT, eta_j=ETA_J, alpha=ALPHA)
    threads = 1
    for _ in range(rounds):
        r, threads = numba_rate(n, steps)
        best["numba"] = max(best["numba"], r)
        best["eps2"] = max(best["eps2"], numba_rate(n, steps, eps=eps2)[0])
        best["numpy"] = max(best["numpy"], numpy_twin(n, steps))
        for layout in ("lockstep", "registers"):
            best[layout] = max(best[layout], gaussian_euler(n, steps, layout))
    limit = max(best["lockstep"], best["registers"])
    ns, parts = _profile(n, steps, rounds)
    scaling = _scaling(n, steps, rounds)
    goals = {"ratio_vs_numpy": 5.0, "ratio_vs_limit": 0.7}
    out = {"particles": n, "steps": steps, "threads": threads, "quick": quick,
           "record_every": S.DEFAULT_RECORD_EVERY,
           "numba_steps_per_s": best["numba"], "numpy_steps_per_s": best["numpy"],
           "limit_steps_per_s": limit,
           "limit_layouts": {"lockstep": best["lockstep"], "registers": best["registers"]},
           "ratio_vs_numpy": best["numba"] / best["numpy"], "ratio_vs_limit": best["numba"] / limit,
           "goals": goals}
    out["goals_met"] = {k: out[k] >= v for k, v in goals.items()}
    b_star = float(beta_star(ETA_J, ETA_G, KAPPA, ALPHA, LAM))
    eps, rate, _ = _scheme()
    out["base_eps"] = {
        "eps": eps2, "numba_steps_per_s": best["eps2"],
        "ratio_vs_numpy": best["eps2"] / best["numpy"], "ratio_vs_limit": best["eps2"] / limit,
        "big_jumps_per_step": S.big_jump_rate(eps2, alpha=ALPHA, lam=LAM, eta_j=ETA_J) * DT,
        "beta_model_minus_beta_star": S.beta_model(ETA_J, ETA_G, KAPPA, ALPHA, LAM, eps=eps2) - b_star,
        "default_eps": eps, "default_big_jumps_per_step": rate * DT,
        "default_beta_model_minus_beta_star":
            S.beta_model(ETA_J, ETA_G, KAPPA, ALPHA, LAM, eps=eps) - b_star}
    out["per_core_cpu_ratios"] = {                      # from the CPU-time profile, one thread
        "ratio_vs_numpy": ns["numpy_twin"] / ns["full"],
        "ratio_vs_limit": parts["bare_gaussian_euler"] / ns["full"]}
    out.update({"profile_ns_per_step_1thread": ns, "profile_parts_ns": parts,
                "scaling": scaling, "host_cores": os.cpu_count(),
                "scaling_note": (f"measured on {os.cpu_count()} cores; the target of >= 85 % of linear "
                                 f"at 16 threads needs a host with 16 cores"),
                "load_average": {"start": load0, "end": os.getloadavg()[0]}, "rounds": rounds})
    return out


def _print(out, as_json):
    if as_json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k:>32}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
