"""Compiled (Numba) pieces of the simulator: big-jump sampler, increment sampler, time stepper.

Scheme: :mod:`levysde.simulation` (THEORY.md §7); drift and big-jump rejection come from
:mod:`levysde.simulation._step` (shared with the CUDA backend). Random numbers: one
xoshiro256++ stream per particle (or per block of increments) from :mod:`levysde._rng`; a
stream is never shared between threads, so results do not depend on the thread count.
Layout of the stepper (docs/simulate.md, "Kernel"): per step a branch-free drift + Gaussian
pass over a block of particles, then the big jumps of only the particles whose epoch falls
into the step (per-step lists: cost per jump), then every ``record_every``-th step the
histogram pass into the group's own rows.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import _rng
from . import _step

from ._step import DRIFT_OU, DRIFT_SATURATING, DRIFT_TABULATED  # noqa: F401 (drift kinds)
#: particles advanced together in the kernel (the state of a block stays in L1)
_BLOCK = 256
#: steps whose big-jump epochs are put on per-step lists together (per block)
_WINDOW = 64


#: the backend-neutral step pieces (:mod:`levysde.simulation._step`, shared with the CUDA backend)
_drift_value = njit(cache=True, inline="always")(_step.drift)
_jump_proposal = njit(cache=True, inline="always")(_step.jump_proposal)
_jump_accepted_log = njit(cache=True, inline="always")(_step.jump_accepted_log)


@njit(cache=True, inline="always")
def _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3):
    """One jump with |z| > eps: density ~ exp(-lam|z|)|z|^(-1-alpha), exact rejection
    (:func:`levysde.simulation._step.jump_proposal` and
    :func:`levysde.simulation._step.jump_accepted_log`, each from a ziggurat exponential);
    the sign is the lowest bit of one 64-bit draw."""
    r, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
    neg = (r & np.uint64(1)) != 0
    while True:
        e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
        zz = _jump_proposal(e, eps, alpha, lam, exp_proposal)
        if lam == 0.0:
            return (-zz if neg else zz), s0, s1, s2, s3
        e2, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
        if _jump_accepted_log(zz, e2, eps, alpha, lam, exp_proposal):
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
def _gauss_pass(z, states, b0, b1, dt, kind, d0, d1, d2, grid, vals, s_gauss):
    """Drift and Gaussian part of one step for particles b0..b1-1 (lockstep: independent chains
    overlap in the pipeline; no data-dependent branch but the ziggurat's rare one)."""
    for p in range(b0, b1):
        s0, s1, s2, s3 = states[p, 0], states[p, 1], states[p, 2], states[p, 3]
        x = z[p]
        f = _drift_value(kind, x, d0, d1, d2, grid, vals)
        nrm, s0, s1, s2, s3 = _rng.normal(s0, s1, s2, s3)
        x = x + f * dt + s_gauss * nrm
        z[p] = x
        states[p, 0], states[p, 1], states[p, 2], states[p, 3] = s0, s1, s2, s3


@njit(cache=True, inline="always")
def _schedule(wait, b0, b1, nw, inv_dt, head, nxt):
    """Put each particle of the block whose next big jump falls in the window's steps 0..nw-1
    (``wait`` = time from the window's start) on the list of that step: head[k] is the first
    particle (index in the block) of step k, nxt[i] the next one; -1 ends a list."""
    for k in range(nw + 1):
        head[k] = -1
    for i in range(b1 - b0):
        t = wait[b0 + i] * inv_dt
        if t < nw:
            kn = int(t)
            nxt[i] = head[kn]
            head[kn] = i


@njit(cache=True, inline="always")
def _jump_pass(k, nw, head, nxt, b0, z, wait, states, inv_dt, inv_rate, eps, alpha, lam,
               exp_proposal):
    """Add the big jumps of the window's step k to the particles on list k (exact epochs: each
    particle jumps, draws its next exponential waiting time, and jumps again while the epoch is
    still in step k), then file each particle under the step of its next epoch. Cost per jump."""
    i = head[k]
    while i >= 0:
        p = b0 + i
        i_next = nxt[i]
        s0, s1, s2, s3 = states[p, 0], states[p, 1], states[p, 2], states[p, 3]
        w = wait[p]
        jsum = 0.0
        t = 0.0
        while True:
            j, s0, s1, s2, s3 = _big_jump(eps, alpha, lam, exp_proposal, s0, s1, s2, s3)
            jsum += j
            e, s0, s1, s2, s3 = _rng.exponential(s0, s1, s2, s3)
            w += e * inv_rate
            t = w * inv_dt
            if t >= k + 1:
                break
        states[p, 0], states[p, 1], states[p, 2], states[p, 3] = s0, s1, s2, s3
        wait[p] = w
        z[p] += jsum
        kn = int(min(t, nw))                            # branch-free: list nw = "after the window"
        nxt[i] = head[kn]
        head[kn] = i
        i = i_next


@njit(cache=True, inline="always")
def _end_window(z, wait, diverged, b0, b1, shift, gstep, win_lo, win_hi):
    """At the end of a window (global step ``gstep``): waiting times now count from here, and a
    particle outside the divergence window (or non-finite: NaN and inf stay so) is marked with
    diverged[p] = gstep once. Checked once per window: a particle that left the window
    cannot return within _WINDOW steps unless by two opposite giant jumps."""
    for p in range(b0, b1):
        wait[p] -= shift
        x = z[p]
        if not (x > win_lo and x < win_hi) and diverged[p] == 0:
            diverged[p] = gstep


@njit(cache=True, inline="always")
def _record_pass(z, exc_min, b0, b1, g, hist_lo, inv_w, n_bins, acc, outside, exc_counts, exc_level):
    """Occupation histogram (count and zeta-sum of each bin share a cache line) and excursion
    depths of particles b0..b1-1 into group g's own rows (no row is shared between threads)."""
    for p in range(b0, b1):
        x = z[p]
        bf = (x - hist_lo) * inv_w
        if bf < 0.0 or not bf < n_bins:
            side = 0 if bf < 0.0 else 2
            outside[g, side] += 1.0
            outside[g, side + 1] += x
        else:
            ib = int(bf)
            acc[g, ib, 0] += 1.0
            acc[g, ib, 1] += x
        em = exc_min[p]                                 # +inf: not in an excursion
        if x < exc_level:
            if x < em:
                exc_min[p] = x
        elif em < exc_level:                            # excursion ends: record its depth
            exc_min[p] = np.inf
            eb = (em - hist_lo) * inv_w
            ie = 0 if eb < 0.0 else min(int(eb), n_bins - 1)
            exc_counts[g, ie] += 1.0


@njit(cache=True, parallel=True)
def _run_chunk(z, wait, states, exc_min, diverged, gstart, step0, n_steps, rec_start, rec_every,
               dt, kind, dpar, grid, vals, s_gauss, rate, eps, alpha, lam, exp_proposal,
               hist_lo, inv_w, n_bins, acc, outside, exc_counts, exc_level,
               win_lo, win_hi, traj, traj_every):
    """Advance every particle by n_steps (global steps step0 .. step0 + n_steps - 1).

    Groups run in parallel (one task per group, its own histogram rows). Inside a group,
    blocks of _BLOCK particles advance in lockstep through windows of _WINDOW steps: per
    step a branch-free drift + Gaussian pass, then only the particles whose big-jump epoch
    falls in that step (per-step lists, :func:`_schedule`), then, every ``rec_every``-th
    step after ``rec_start``, the recording pass; the divergence window is checked at the
    end of each window (:func:`_end_window`). ``wait[p]`` is the time from the current
    time to particle p's next big jump (carried across chunks). Particle p only ever uses
    stream p, in the order normal, jumps of the step, normal, ...: the result does not
    depend on the thread count."""
    n_groups = gstart.size - 1
    n_traj = traj.shape[0]
    d0, d1, d2 = dpar[0], dpar[1], dpar[2]
    inv_rate = 1.0 / rate if rate > 0.0 else 0.0
    inv_dt = 1.0 / dt
    for g in prange(n_groups):
        head = np.empty(_WINDOW + 1, np.int64)
        nxt = np.empty(_BLOCK, np.int64)
        for b0 in range(gstart[g], gstart[g + 1], _BLOCK):
            b1 = min(b0 + _BLOCK, gstart[g + 1])
            for w0 in range(0, n_steps, _WINDOW):
                nw = min(_WINDOW, n_steps - w0)
                _schedule(wait, b0, b1, nw, inv_dt, head, nxt)
                for k in range(nw):
                    gstep = step0 + w0 + k
                    _gauss_pass(z, states, b0, b1, dt, kind, d0, d1, d2, grid, vals, s_gauss)
                    if head[k] >= 0:
                        _jump_pass(k, nw, head, nxt, b0, z, wait, states, inv_dt, inv_rate, eps,
                                   alpha, lam, exp_proposal)
                    if gstep >= rec_start and (gstep + 1 - rec_start) % rec_every == 0:
                        _record_pass(z, exc_min, b0, b1, g, hist_lo, inv_w, n_bins, acc, outside,
                                     exc_counts, exc_level)
                    if n_traj > 0 and b0 < n_traj and (gstep + 1) % traj_every == 0:
                        for p in range(b0, min(b1, n_traj)):
                            traj[p, (gstep + 1) // traj_every - 1] = z[p]
                _end_window(z, wait, diverged, b0, b1, nw * dt, step0 + w0 + nw, win_lo, win_hi)
