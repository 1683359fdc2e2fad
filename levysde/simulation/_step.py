"""Backend-neutral pieces of one Euler step (docs/specification.md §3, §7), written once in plain Python and
compiled by each backend: ``numba.njit`` in :mod:`levysde.simulation._kernels` (CPU) and
``numba.cuda.jit(device=True)`` in :mod:`levysde.simulation._cuda` (GPU). Scalars only, no
random numbers: each backend draws its uniforms from its own generator and passes them in.
"""
from __future__ import annotations

import math

#: drift kinds (``drift.kernel_args().kind``); the tabulated drift is the rest
DRIFT_SATURATING, DRIFT_OU, DRIFT_TABULATED = 0, 1, 2


def make_drift(exp):
    """The drift function of a backend, with that backend's exponential ``exp`` (``math.exp``
    on the GPU, the vectorisable :func:`levysde.simulation._vmath.exp` on the CPU): one formula, compiled
    by each backend."""

    def drift(kind, x, d0, d1, d2, grid, vals):
        """F(x) of docs/specification.md §3. kind DRIFT_SATURATING (d0 = kappa, d1 = gamma/kappa, d2 = z0),
        DRIFT_OU (d1 = gamma, d2 = z0), DRIFT_TABULATED (grid, vals: linear interpolation,
        constant extrapolation; binary search)."""
        if kind == DRIFT_SATURATING:
            # kappa tanh(y), y = (gamma/kappa)(z0 - x), branch-free: for |y| >= 0.1 as
            # sign(y) (1 - e)/(1 + e), e = exp(-2|y|) (1 - e loses under one digit there; for
            # 2|y| >= 40, e < 4.3e-18 and t is 1.0 exactly, so the argument is cut there: no
            # subnormal arithmetic, which is slow); for |y| < 0.1 by tanh's Taylor series to
            # y^15 (next term < 6e-20 |y|), so that kappa tanh(y) -> gamma (z0 - x) stays exact
            # relative to itself however large kappa is (1 - e would cancel to 0)
            y = d1 * (d2 - x)
            a = abs(y)
            e = exp(max(-2.0 * a, -40.0))
            z = a * a
            small = a * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (
                62.0 / 2835.0 + z * (-1382.0 / 155925.0 + z * (21844.0 / 6081075.0 + z * (
                    -929569.0 / 638512875.0))))))))
            t = small if a < 0.1 else (1.0 - e) / (1.0 + e)
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

    return drift


#: the drift with math.exp (compiled by the CUDA backend)
drift = make_drift(math.exp)


def jump_proposal(e, eps, alpha, lam, exp_proposal):
    """Proposed magnitude of a big jump from a standard exponential e = -log U (docs/specification.md §7):
    the Pareto ``eps U^(-1/alpha) = eps exp(e/alpha)``, or ``eps + e/lam`` (exponential
    proposal, used when lam eps > alpha). (GPU backend; the CPU one samples from the tables of
    :mod:`levysde.simulation._jumptable`.)"""
    if exp_proposal:
        return eps + e / lam
    return eps * math.exp(e * (1.0 / alpha))


def jump_accepted(zz, u2, eps, alpha, lam, exp_proposal):
    """Exact rejection step for the density ~ exp(-lam z) z^(-1-alpha) on (eps, inf): accept the
    Pareto proposal with probability exp(-lam (z - eps)), the exponential one with
    (z/eps)^(-1-alpha); u2 uniform on [0, 1). Each first tries a squeeze (a lower bound of the
    acceptance probability that needs no exp or pow): exp(-d) >= 1 - d and, by convexity,
    r^(-1-alpha) >= 1 - (1 + alpha)(r - 1) for r = z/eps >= 1."""
    if exp_proposal:
        r = zz / eps
        return u2 < 1.0 - (1.0 + alpha) * (r - 1.0) or u2 < math.exp((-1.0 - alpha) * math.log(r))
    d = lam * (zz - eps)
    return u2 < 1.0 - d or u2 < math.exp(-d)
