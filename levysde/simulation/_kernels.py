"""Compiled (Numba) pieces of the simulator: big-jump sampler, increment sampler, drift, time stepper.

Scheme: :mod:`levysde.simulation` (THEORY.md §7). Random numbers: one xoshiro256++ stream
per particle (or per block of increments) from :mod:`levysde._rng`; a stream is never
shared between threads, so results do not depend on the thread count.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _rng
from . import _step

from ._step import DRIFT_OU, DRIFT_SATURATING, DRIFT_TABULATED  # noqa: F401 (drift kinds)
_BLOCK = 256      # particles advanced together in the kernel (state of a block stays in L1)


#: the backend-neutral step pieces (:mod:`levysde.simulation._step`, shared with the CUDA backend)
_drift_value = njit(cache=True, inline="always")(_step.drift)
_jump_proposal = njit(cache=True, inline="always")(_step.jump_proposal)
_jump_accepted = njit(cache=True, inline="always")(_step.jump_accepted)


@njit(cache=True, inline="always")
def _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3):
    """One jump with |z| > eps: density ~ exp(-lam|z|)|z|^(-1-alpha), exact rejection
    (:func:`levysde.simulation._step.jump_accepted`); sign from the lowest bit of the draw."""
    while True:
        r, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
        u1 = 1.0 - float(np.int64(r >> np.uint64(11))) * 1.1102230246251565e-16   # (0, 1]
        neg = (r & np.uint64(1)) != 0
        zz = _jump_proposal(u1, eps, alpha, lam, exp_proposal)
        if lam == 0.0:
            return (-zz if neg else zz), s0, s1, s2, s3
        u2, s0, s1, s2, s3 = _rng.uniform(s0, s1, s2, s3)
        if _jump_accepted(zz, u2, eps, alpha, lam, exp_proposal):
            return (-zz if neg else zz), s0, s1, s2, s3


@njit(cache=True, parallel=True)
def _increments_kernel(states, n, block, dt, s_gauss, rate, eps, alpha, lam, exp_proposal, out):
    """out[i] = s_gauss N(0, 1) + the big jumps of a Poisson(rate dt) count; block b of ``block``
    consecutive increments uses only stream ``states[b]``."""
    nb = states.shape[0]
    for b in prange(nb):
        s0, s1, s2, s3 = states[b, 0], states[b, 1], states[b, 2], states[b, 3]
        for i in range(b * block, min(n, (b + 1) * block)):
            x, s0, s1, s2, s3 = _rng.normal(s0, s1, s2, s3)
            x *= s_gauss
            if rate > 0.0:
                e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
                w = e / rate
                while w < dt:
                    j, s0, s1, s2, s3 = _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3)
                    x += j
                    e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
                    w += e / rate
            out[i] = x
        states[b, 0], states[b, 1], states[b, 2], states[b, 3] = s0, s1, s2, s3


@njit(cache=True, inline="always")
def _drift(kind, x, dpar, grid, vals):
    """F(x) for the drift ``kind`` with the arguments of ``drift._kernel_args()``
    (:func:`levysde.simulation._step.drift`)."""
    return _drift_value(kind, x, dpar[0], dpar[1], dpar[2], grid, vals)


@njit(cache=True, parallel=True)
def _run_chunk(z, wait, states, exc_min, diverged, gstart, step0, n_steps, rec_start,
               dt, kind, dpar, grid, vals, s_gauss, rate, eps, alpha, lam, exp_proposal,
               hist_lo, inv_w, n_bins, acc, outside, exc_counts, exc_level,
               win_lo, win_hi, traj, traj_every):
    """Advance every particle by n_steps. Groups run in parallel; inside a group the
    particles advance in lockstep (time outer, particle inner) so that independent
    chains overlap in the CPU pipeline. Particle p always uses only stream p, so the
    result does not depend on the thread count."""
    n_groups = gstart.size - 1
    n_traj = traj.shape[0]
    inv_rate = 1.0 / rate if rate > 0.0 else 0.0
    for g in prange(n_groups):
        for b0 in range(gstart[g], gstart[g + 1], _BLOCK):      # L1-sized sub-blocks
            b1 = min(b0 + _BLOCK, gstart[g + 1])
            for k in range(n_steps):
                gstep = step0 + k
                record = gstep >= rec_start
                keep = n_traj > 0 and (gstep + 1) % traj_every == 0
                for p in range(b0, b1):
                    if diverged[p] != 0:
                        continue
                    s0, s1, s2, s3 = states[p, 0], states[p, 1], states[p, 2], states[p, 3]
                    x = z[p]
                    w = wait[p]
                    f = _drift(kind, x, dpar, grid, vals)
                    nrm, s0, s1, s2, s3 = _rng.normal(s0, s1, s2, s3)
                    jsum = 0.0
                    while w < dt:                       # exact epochs: Poisson count per step
                        j, s0, s1, s2, s3 = _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3)
                        jsum += j
                        e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
                        w += e * inv_rate
                    wait[p] = w - dt
                    states[p, 0], states[p, 1], states[p, 2], states[p, 3] = s0, s1, s2, s3
                    x = x + f * dt + s_gauss * nrm + jsum
                    z[p] = x
                    if not (x > win_lo and x < win_hi):     # also catches NaN / inf
                        diverged[p] = gstep + 1
                if record:                                  # second pass: histogram scatter
                    for p in range(b0, b1):
                        x = z[p]
                        bf = (x - hist_lo) * inv_w
                        if bf < 0.0 or not bf < n_bins:
                            side = 0 if bf < 0.0 else 2
                            outside[g, side] += 1.0
                            outside[g, side + 1] += x
                        else:
                            ib = int(bf)                    # count and zeta-sum share a cache line
                            acc[g, ib, 0] += 1.0
                            acc[g, ib, 1] += x
                        em = exc_min[p]                 # +inf: not in an excursion
                        if x < exc_level:
                            if x < em:
                                exc_min[p] = x
                        elif em < exc_level:            # excursion ends: record its depth
                            exc_min[p] = np.inf
                            eb = (em - hist_lo) * inv_w
                            ie = 0 if eb < 0.0 else min(int(eb), n_bins - 1)
                            exc_counts[g, ie] += 1.0
                if keep:
                    for p in range(b0, min(b1, n_traj)):
                        traj[p, (gstep + 1) // traj_every - 1] = z[p]
