"""Backend-neutral pieces of one Euler step (THEORY.md §3, §7), written once in plain Python and
compiled by each backend: ``numba.njit`` in :mod:`levysde.simulation._kernels` (CPU) and
``numba.cuda.jit(device=True)`` in :mod:`levysde.simulation._cuda` (GPU). Scalars only, no
random numbers: each backend draws its uniforms from its own generator and passes them in.
"""
from __future__ import annotations

import math

#: drift kinds (``drift._kernel_args()[0]``); the tabulated drift is the rest
DRIFT_SATURATING, DRIFT_OU, DRIFT_TABULATED = 0, 1, 2


def drift(kind, x, d0, d1, d2, grid, vals):
    """F(x) of THEORY.md §3. kind DRIFT_SATURATING (d0 = kappa, d1 = gamma/kappa, d2 = z0),
    DRIFT_OU (d1 = gamma, d2 = z0), DRIFT_TABULATED (grid, vals: linear interpolation, constant
    extrapolation; binary search)."""
    if kind == DRIFT_SATURATING:
        # kappa tanh(y) as kappa sign(y) (1 - e)/(1 + e), e = exp(-2|y|): faster than libm tanh,
        # absolute error ~1e-16 kappa
        y = d1 * (d2 - x)
        e = math.exp(-2.0 * abs(y))
        t = (1.0 - e) / (1.0 + e)
        return d0 * (t if y >= 0.0 else -t)
    if kind == DRIFT_OU:
        return -d1 * (x - d2)
    m = grid.size
    if x <= grid[0]:
        return vals[0]
    if x >= grid[m - 1]:
        return vals[m - 1]
    lo, hi = 0, m - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if grid[mid] <= x:
            lo = mid
        else:
            hi = mid
    t = (x - grid[lo]) / (grid[hi] - grid[lo])
    return vals[lo] + t * (vals[hi] - vals[lo])


def jump_proposal(u1, eps, alpha, lam, exp_proposal):
    """Proposed magnitude of a big jump from u1 in (0, 1] (THEORY.md §7): the Pareto
    ``eps u1^(-1/alpha)``, or ``eps - log(u1)/lam`` (exponential proposal, used when
    lam eps > alpha)."""
    if exp_proposal:
        return eps - math.log(u1) / lam
    return eps * math.exp(math.log(u1) * (-1.0 / alpha))


def jump_accepted(zz, u2, eps, alpha, lam, exp_proposal):
    """Exact rejection step for the density ~ exp(-lam z) z^(-1-alpha) on (eps, inf): accept the
    Pareto proposal with probability exp(-lam (z - eps)) (squeeze exp(-d) >= 1 - d first), the
    exponential one with (z/eps)^(-1-alpha); u2 uniform on [0, 1)."""
    if exp_proposal:
        return u2 < (zz / eps) ** (-1.0 - alpha)
    d = lam * (zz - eps)
    return u2 < 1.0 - d or u2 < math.exp(-d)
