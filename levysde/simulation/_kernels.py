"""Compiled (Numba) pieces of the simulator: big-jump sampler, increment sampler, time stepper.

Scheme: :mod:`levysde.simulation` (docs/specification.md §7); drift, big-jump proposal and rejection come
from :mod:`levysde.simulation._step` (shared with the CUDA backend), compiled here with the
vectorisable exponential of :mod:`levysde.simulation._vmath`. Random numbers: xoshiro256++ streams from
:mod:`levysde.simulation._rng`, one per particle; the streams of a block of particles are only ever used
by the one thread that advances that block, so results do not depend on the thread count.

Layout of the stepper (docs/simulate.md, "Kernel"): groups of particles run in parallel; inside
a group, blocks of ``BLOCK`` particles advance in lockstep through windows of ``WINDOW``
steps. Per window the block's big jumps are drawn at once (:func:`_window_jumps`: a Poisson
number per particle, each at a uniform step of the window, magnitudes by vectorised rejection)
into a (step, particle) table; per step one vectorised pass draws the normals
(:func:`_normals`) and one applies drift, Gaussian part and the step's jumps
(:func:`_drift_update`); every ``record_every``-th step the histogram pass writes the group's
own rows.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from levysde.simulation import _rng, _step, _vmath
from levysde.simulation._jitcache import CACHE
from levysde.simulation._step import DRIFT_OU, DRIFT_SATURATING, DRIFT_TABULATED  # noqa: F401 (drift kinds)

#: particles advanced together in the kernel (the state of a block stays in L1)
BLOCK = 256
#: steps whose big jumps are drawn together (per block)
WINDOW = 64


#: the backend-neutral drift (:mod:`levysde.simulation._step`, shared with the CUDA backend),
#: with the vectorisable exp
_drift_value = njit(cache=CACHE, inline="always")(_step.make_drift(_vmath.exp))


@njit(cache=CACHE, inline="always")
def _lanes(states, b0, nb, ls, load):
    """Copy the streams of particles b0 .. b0 + nb - 1 between ``states`` (particles, 4) and the
    block's lanes ``ls`` (4, BLOCK), one row per state word (so that loops over lanes
    vectorise): into the lanes if ``load``, back otherwise."""
    for i in range(nb):
        for w in range(4):
            if load:
                ls[w, i] = states[b0 + i, w]
            else:
                states[b0 + i, w] = ls[w, i]


@njit(cache=CACHE, inline="always")
def _normals(ls, nb, nrm, raw, slow):
    """nrm[i] = a standard normal from lane i: the ziggurat's fast path for all lanes in one
    vectorised pass (:func:`levysde.simulation._rng.normal_candidate`), then its slow branch
    (:func:`levysde.simulation._rng.normal_slow`, about 1% of lanes) lane by lane from the same stream:
    exactly the draws of :func:`levysde.simulation._rng.normal`. ``slow``: (BLOCK,) uint8 flags, scanned 8
    at a time through its uint64 view (lanes past nb are skipped)."""
    n_slow = 0
    for i in range(nb):
        r, s0, s1, s2, s3 = _rng.next_u64(ls[0, i], ls[1, i], ls[2, i], ls[3, i])
        ls[0, i], ls[1, i], ls[2, i], ls[3, i] = s0, s1, s2, s3
        x, idx, rabs, ok = _rng.normal_candidate(r)
        nrm[i] = x
        raw[i] = r
        slow[i] = 0 if ok else 1
        n_slow += not ok
    if n_slow:
        words = slow.view(np.uint64)
        for q in range((nb + 7) // 8):
            if words[q] != 0:
                for i in range(8 * q, min(8 * q + 8, nb)):
                    if slow[i]:
                        x, idx, rabs, ok = _rng.normal_candidate(raw[i])
                        nrm[i], ls[0, i], ls[1, i], ls[2, i], ls[3, i] = _rng.normal_slow(
                            idx, x, rabs, ls[0, i], ls[1, i], ls[2, i], ls[3, i])


@njit(cache=CACHE, inline="always")
def _drift_update(z, b0, nb, nrm, jumps, k, with_jumps, dt, s_gauss, kind, d0, d1, d2, grid, vals):
    """z <- z + F(z) dt + s_gauss nrm (+ the window's jumps of step k): one vectorised pass."""
    zb = z[b0:b0 + nb]                  # a view: unit-stride indices, so the loop vectorises
    jk = jumps[k]
    for i in range(nb):
        x = zb[i]
        y = x + _drift_value(kind, x, d0, d1, d2, grid, vals) * dt + s_gauss * nrm[i]
        if with_jumps:
            y += jk[i]
        zb[i] = y


@njit(cache=CACHE, inline="always")
def _gauss_pass(z, ls, b0, nb, dt, kind, d0, d1, d2, grid, vals, s_gauss, nrm, raw, slow,
                jumps, k, with_jumps):
    """One Euler step of particles b0 .. b0 + nb - 1 (lanes ``ls``): normals, then drift,
    Gaussian part and (``with_jumps``) row k of the window's jump table. The drift kind is
    fixed per call so that the update loop is branch-free (and vectorised) for the saturating
    and Ornstein-Uhlenbeck drifts."""
    _normals(ls, nb, nrm, raw, slow)
    if kind == DRIFT_SATURATING:
        _drift_update(z, b0, nb, nrm, jumps, k, with_jumps, dt, s_gauss, DRIFT_SATURATING,
                      d0, d1, d2, grid, vals)
    elif kind == DRIFT_OU:
        _drift_update(z, b0, nb, nrm, jumps, k, with_jumps, dt, s_gauss, DRIFT_OU,
                      d0, d1, d2, grid, vals)
    else:
        _drift_update(z, b0, nb, nrm, jumps, k, with_jumps, dt, s_gauss, DRIFT_TABULATED,
                      d0, d1, d2, grid, vals)


@njit(cache=CACHE, inline="always")
def _poisson_counts(ls, nb, cdf, counts):
    """counts[i] ~ Poisson (the law of ``cdf``, :func:`levysde.simulation.poisson_table`) from
    one uniform of lane i, by inversion (vectorised); returns the sum."""
    total = 0
    for i in range(nb):
        r, s0, s1, s2, s3 = _rng.next_u64(ls[0, i], ls[1, i], ls[2, i], ls[3, i])
        ls[0, i], ls[1, i], ls[2, i], ls[3, i] = s0, s1, s2, s3
        u = float(np.int64(r >> np.uint64(11))) * _rng._TWO53
        c = 0
        for j in range(cdf.size):
            c += u >= cdf[j]
        counts[i] = c
        total += c
    return total


@njit(cache=CACHE, inline="always")
def _top53(r):
    """U[0, 1) from the top 53 bits of a 64-bit draw."""
    return float(np.int64(r >> np.uint64(11))) * _rng._TWO53


@njit(cache=CACHE, inline="always")
def _jump_candidates(ls, nb, nw, tab, ck, ci, cz, flag, kk, uu, scr):
    """Lane j proposes one big jump from four 64-bit draws (:mod:`levysde.simulation._jumptable`):
    the envelope component kk[j] by the alias table (draw 0; its lowest bit the sign), the point
    ``z = x_k + u1 w_k`` (draw 1), the squeezes with u2 = uu[j] (draw 2): flag 1 accept, 0
    reject, 2 undecided (the band between the squeezes, or the tail component), and the jump's
    cell c = floor(u3 nw nb) of the window's (step, particle) table (draw 3): step
    ck[j] = c // nb, particle ci[j] = c mod nb. The draws go in one vectorised pass; the table
    look-ups in a second, scalar one (LLVM does not vectorise loads at data-dependent indices
    of an array that the loop may also write); ``scr`` (3, BLOCK) carries the draws between
    them. Returns the number of undecided lanes."""
    n_cells = float(nw * nb)
    inv_nb = 1.0 / nb
    n_comp = tab.shape[1]
    for j in range(nb):
        s0, s1, s2, s3 = ls[0, j], ls[1, j], ls[2, j], ls[3, j]
        r0, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
        r1, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
        r2, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
        r3, s0, s1, s2, s3 = _rng.next_u64(s0, s1, s2, s3)
        ls[0, j], ls[1, j], ls[2, j], ls[3, j] = s0, s1, s2, s3
        scr[0, j] = _top53(r0) * n_comp
        scr[1, j] = -1.0 if r0 & np.uint64(1) else 1.0
        scr[2, j] = _top53(r1)
        uu[j] = _top53(r2)
        c = int(_top53(r3) * n_cells)
        kc = int((c + 0.5) * inv_nb)                    # exact: c + 0.5 is never a multiple of nb
        ck[j] = kc
        ci[j] = c - kc * nb
    tail = n_comp - 1
    n_open = 0
    for j in range(nb):
        # branch-free (the data are random): both loads, then selects on values
        t = scr[0, j]
        k = int(t)
        p_keep = tab[0, k]
        k_alias = int(tab[1, k])
        k = k if t - k < p_keep else k_alias
        u1 = scr[2, j]
        u2 = uu[j]
        z = tab[2, k] + u1 * tab[3, k]
        ak = tab[4, k]
        accept = u2 < ak + tab[5, k] * (1.0 - u1)         # below the tangent
        reject = u2 >= 1.0 - (1.0 - ak) * u1              # above the chord (exclusive with accept)
        f = 2 - int(accept) - 2 * int(reject)
        f = 2 if k == tail else f
        cz[j] = z * scr[1, j]
        flag[j] = f
        kk[j] = k
        n_open += f == 2
    return n_open


@njit(cache=CACHE, inline="always")
def _finish_jumps(ls, nb, tab, alpha, lam, x_tail, tail_pareto, cz, flag, kk, uu, scr):
    """Decide the undecided lanes (flag 2) with exp and log: a cell's point is accepted when
    u2 < f(z)/f(x_k) (f(z) = z^(-1-alpha) e^(-lam z)); the tail component makes one proposal
    from the lane's stream, Pareto ``x_T (1 - u)^(-1/alpha)`` accepted when
    v < e^(-lam (z - x_T)), or exponential ``x_T - log(1 - u)/lam`` accepted when
    v < (z/x_T)^(-1-alpha) (one trial: a rejection rejects the whole proposal)."""
    tail = tab.shape[1] - 1
    for j in range(nb):
        if flag[j] != 2:
            continue
        neg = scr[1, j] < 0.0                           # the sign (cz is +-0 on the tail)
        if kk[j] == tail:
            s0, s1, s2, s3 = ls[0, j], ls[1, j], ls[2, j], ls[3, j]
            u, s0, s1, s2, s3 = _rng.uniform(s0, s1, s2, s3)
            v, s0, s1, s2, s3 = _rng.uniform(s0, s1, s2, s3)
            ls[0, j], ls[1, j], ls[2, j], ls[3, j] = s0, s1, s2, s3
            if tail_pareto:                             # lam = 0: always accepted (also an
                z = x_tail * math.exp(-math.log1p(-u) / alpha)   # overflow to inf: a divergence)
                ok = lam == 0.0 or v < math.exp(-lam * (z - x_tail))
            else:
                z = x_tail - math.log1p(-u) / lam
                ok = v < math.exp(-(1.0 + alpha) * math.log(z / x_tail))
            cz[j] = -z if neg else z
        else:
            z = abs(cz[j])
            xk = tab[2, kk[j]]
            ok = uu[j] < math.exp(-(1.0 + alpha) * math.log(z / xk) - lam * (z - xk))
        flag[j] = 1 if ok else 0


@njit(cache=CACHE, inline="always")
def _window_jumps(ls, nb, nw, cdf, jumps, counts, ck, ci, cz, flag, kk, uu, scr, tab, alpha,
                  lam, x_tail, tail_pareto):
    """The big jumps of a window of nw steps for the block's nb particles, summed per step and
    particle in ``jumps[k, i]`` (docs/specification.md §7: compound Poisson of rate Lambda_eps per
    particle). The block's number of jumps is Poisson(nb Lambda_eps nw dt) (a Poisson count
    from each lane, ``cdf``, summed); each jump falls on an independent uniform (step,
    particle) cell of the window (superposition: every particle then gets an independent
    Poisson(Lambda_eps nw dt) number at uniform times) with an independent magnitude from the
    exact rejection sampler. All lanes propose in rounds (:func:`_jump_candidates`,
    :func:`_finish_jumps`); the accepted proposals are used in lane order until the count is
    reached."""
    for k in range(nw):
        for i in range(nb):
            jumps[k, i] = 0.0
    total = _poisson_counts(ls, nb, cdf, counts)
    m = 0
    while m < total:
        if _jump_candidates(ls, nb, nw, tab, ck, ci, cz, flag, kk, uu, scr):
            _finish_jumps(ls, nb, tab, alpha, lam, x_tail, tail_pareto, cz, flag, kk, uu, scr)
        for j in range(nb):                             # branch-free: flag is random
            take = (flag[j] == 1) & (m < total)
            jumps[ck[j], ci[j]] += cz[j] if take else 0.0
            m += take


@njit(cache=CACHE, inline="always")
def _block_buffers(n_steps):
    """One thread's work arrays for a block: lanes (4, BLOCK) uint64; normals, raw draws, slow
    flags (uint8, zero); Poisson counts, proposal step, particle, magnitude, flag, component,
    u2, scratch (3, BLOCK); the jump table (n_steps, BLOCK), zero."""
    i64 = np.int64
    return (np.empty((4, BLOCK), np.uint64), np.empty(BLOCK), np.empty(BLOCK, np.uint64),
            np.zeros(BLOCK, np.uint8), np.empty(BLOCK, i64), np.empty(BLOCK, i64),
            np.empty(BLOCK, i64), np.empty(BLOCK), np.empty(BLOCK, i64), np.empty(BLOCK, i64),
            np.empty(BLOCK), np.empty((3, BLOCK)), np.zeros((n_steps, BLOCK)))


@njit(cache=CACHE, inline="always")
def _end_window(z, diverged, b0, b1, gstep, win_lo, win_hi):
    """At the end of a window (global step ``gstep``): a particle outside the divergence window
    (or non-finite: NaN and inf stay so) is marked with diverged[p] = gstep once. Checked once
    per window: a particle that left the window and came back within the same WINDOW steps
    (two opposite giant jumps, or a giant jump undone by a strongly contracting drift) is not
    caught; simulate refuses a start outside the window."""
    for p in range(b0, b1):
        x = z[p]
        if not (x > win_lo and x < win_hi) and diverged[p] == 0:
            diverged[p] = gstep


@njit(cache=CACHE, inline="always")
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
        below = x < exc_level                           # a coin flip near the level: no branch
        exc_min[p] = min(em, x) if below else np.inf
        if not below and em < exc_level:                # excursion ends: record its depth
            eb = (em - hist_lo) * inv_w
            ie = 0 if eb < 0.0 else min(int(eb), n_bins - 1)
            exc_counts[g, ie] += 1.0


@njit(cache=CACHE, parallel=True, error_model="numpy")   # no division checks: vectorises
def run_chunk(z, states, exc_min, diverged, gstart, step0, n_steps, rec_start, rec_every,
               dt, kind, dpar, grid, vals, s_gauss, rate, cdf_full, cdf_last, tab, alpha, lam,
               x_tail, tail_pareto, hist_lo, inv_w, n_bins, acc, outside, exc_counts, exc_level,
               win_lo, win_hi, traj, traj_every):
    """Advance every particle by n_steps (global steps step0 .. step0 + n_steps - 1).

    Groups run in parallel (one task per group, its own histogram rows). Inside a group,
    blocks of BLOCK particles advance in lockstep through windows of WINDOW steps: per
    window the block's big jumps (:func:`_window_jumps`), per step the vectorised Euler pass
    (:func:`_gauss_pass`), then, every ``rec_every``-th step after ``rec_start``, the
    recording pass; the divergence window is checked at the end of each window
    (:func:`_end_window`). The block's streams are used only by the thread that runs its
    group, in a fixed order: the result does not depend on the thread count."""
    n_groups = gstart.size - 1
    n_traj = traj.shape[0]
    d0, d1, d2 = dpar[0], dpar[1], dpar[2]
    with_jumps = rate > 0.0
    for g in prange(n_groups):
        ls, nrm, raw, slow, counts, ck, ci, cz, flag, kk, uu, scr, jumps = _block_buffers(WINDOW)
        for b0 in range(gstart[g], gstart[g + 1], BLOCK):
            b1 = min(b0 + BLOCK, gstart[g + 1])
            nb = b1 - b0
            for w0 in range(0, n_steps, WINDOW):
                nw = min(WINDOW, n_steps - w0)
                _lanes(states, b0, nb, ls, True)
                if with_jumps:
                    _window_jumps(ls, nb, nw, cdf_full if nw == WINDOW else cdf_last, jumps, counts,
                                  ck, ci, cz, flag, kk, uu, scr, tab, alpha, lam, x_tail, tail_pareto)
                for k in range(nw):
                    gstep = step0 + w0 + k
                    _gauss_pass(z, ls, b0, nb, dt, kind, d0, d1, d2, grid, vals, s_gauss, nrm,
                                raw, slow, jumps, k, with_jumps)
                    if gstep >= rec_start and (gstep + 1 - rec_start) % rec_every == 0:
                        _record_pass(z, exc_min, b0, b1, g, hist_lo, inv_w, n_bins, acc, outside,
                                     exc_counts, exc_level)
                    if n_traj > 0 and b0 < n_traj and (gstep + 1) % traj_every == 0:
                        for p in range(b0, min(b1, n_traj)):
                            traj[p, (gstep + 1) // traj_every - 1] = z[p]
                _lanes(states, b0, nb, ls, False)
                _end_window(z, diverged, b0, b1, step0 + w0 + nw, win_lo, win_hi)


@njit(cache=CACHE, parallel=True, error_model="numpy")   # no division checks: vectorises
def increments_kernel(states, n, tile, s_gauss, rate, cdf, tab, alpha, lam, x_tail, tail_pareto,
                       out):
    """out[i] = s_gauss N(0, 1) + the big jumps of one step of length dt: the simulator's own
    passes (:func:`_normals`, :func:`_window_jumps` with a window of one step) for blocks of
    BLOCK increments. Tile t (``tile`` consecutive increments) uses only the BLOCK streams
    ``states[t * BLOCK:(t + 1) * BLOCK]``: the result does not depend on the thread count."""
    n_tiles = (n + tile - 1) // tile
    for t in prange(n_tiles):
        ls, nrm, raw, slow, counts, ck, ci, cz, flag, kk, uu, scr, jumps = _block_buffers(1)
        _lanes(states, t * BLOCK, BLOCK, ls, True)
        for b0 in range(t * tile, min(n, (t + 1) * tile), BLOCK):
            nb = min(BLOCK, n - b0)
            _normals(ls, nb, nrm, raw, slow)
            if rate > 0.0:
                _window_jumps(ls, nb, 1, cdf, jumps, counts, ck, ci, cz, flag, kk, uu, scr, tab, alpha,
                              lam, x_tail, tail_pareto)
            for i in range(nb):
                out[b0 + i] = s_gauss * nrm[i] + jumps[0, i]
        _lanes(states, t * BLOCK, BLOCK, ls, False)
