"""The CPU simulator's vectorised pieces against independent truth: the branch-free exp of
levysde.simulation._vmath (mpmath), the alias-table big-jump sampler of levysde.simulation._jumptable
(exact law by mpmath's incomplete gamma), and the placement of the window's jumps (uniform
over the steps of a window: the per-step increments of a drift-free run)."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from numba import njit
from scipy import stats

from levysde import simulation as S
from levysde.simulation import _kernels as K
from levysde.simulation import _rng, _vmath
from levysde.simulation._jumptable import jump_table

ULP = 2.0 ** -52


@njit(cache=True, error_model="numpy")
def _vexp(a, out):
    for i in range(a.size):
        out[i] = _vmath.exp(a[i])


def _relerr(got, x, fn):
    ref = np.array([float(fn(mp.mpf(float(v)))) for v in x])
    return np.abs(got - ref) / np.abs(ref), ref


def test_vmath_exp_against_mpmath():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-708, 709.7, 20_000), rng.normal(0, 1, 5_000), [0.0, 1e-300, -1e-300]])
    out = np.empty_like(x)
    _vexp(x, out)
    mp.mp.prec = 80
    rel, _ = _relerr(out, x, mp.exp)
    assert rel.max() <= 2 * ULP
    sub = rng.uniform(-745.1, -708.4, 2_000)                      # subnormal results
    o2 = np.empty_like(sub)
    _vexp(sub, o2)
    ref = np.array([float(mp.exp(mp.mpf(float(v)))) for v in sub])
    assert np.max(np.abs(o2 - ref)) <= 2 * 5e-324
    sp = np.array([-np.inf, np.inf, np.nan, -746.0, 710.0, 709.782712893384])
    o3 = np.empty_like(sp)
    _vexp(sp, o3)
    assert o3[0] == 0.0 and o3[1] == np.inf and np.isnan(o3[2]) and o3[3] == 0.0 and o3[4] == np.inf
    assert o3[5] == np.exp(709.782712893384)


@njit(cache=True, error_model="numpy")
def _draw_jumps(states, n, tab, alpha, lam, x_tail, tail_pareto):
    """n accepted big jumps from the kernel's own candidate and finishing passes (one lane
    block, rounds as in the stepper)."""
    nb = K.BLOCK
    ls = np.empty((4, nb), np.uint64)
    K._lanes(states, 0, nb, ls, True)
    ck, ci, kk = np.empty(nb, np.int64), np.empty(nb, np.int64), np.empty(nb, np.int64)
    cz, flag, uu, scr = np.empty(nb), np.empty(nb, np.int64), np.empty(nb), np.empty((3, nb))
    out = np.empty(n)
    m = 0
    rounds = 0
    while m < n:
        rounds += 1
        if K._jump_candidates(ls, nb, 4, tab, ck, ci, cz, flag, kk, uu, scr):
            K._finish_jumps(ls, nb, tab, alpha, lam, x_tail, tail_pareto, cz, flag, kk, uu, scr)
        for j in range(nb):
            if flag[j] == 1 and m < n:
                out[m] = cz[j]
                m += 1
    return out, rounds


def _tail_integral(x, alpha, lam):
    """int_x^inf z^(-1-alpha) e^(-lam z) dz (mpmath)."""
    x = mp.mpf(x)
    if lam == 0:
        return x ** (-alpha) / alpha
    return mp.mpf(lam) ** alpha * mp.gammainc(-alpha, lam * x)


@pytest.mark.parametrize("alpha,lam,eps", [
    (1.5, 2.0, 0.193),          # the benchmark's defaults: Pareto tail
    (0.8, 4.0, 0.5),            # lam eps > alpha: exponential tail
    (0.3, 0.0, 0.1),            # heavy, untempered: the tail often drawn
    (1.95, 0.5, 0.02),          # alpha near 2
])
def test_big_jump_sampler_law(alpha, lam, eps):
    """Magnitudes against the exact law (chi-square over 40 bins with mpmath probabilities),
    signs fair, and the tail component drawn as often as its share of the law."""
    jt = jump_table(eps, alpha, lam)
    n = 200_000
    z, rounds = _draw_jumps(_rng.seed_states(5, K.BLOCK), n, jt.packed(), alpha, lam, jt.x_tail,
                            jt.tail_pareto)
    a = np.abs(z)
    assert a.min() > eps and np.all(np.isfinite(a))
    total = _tail_integral(eps, alpha, lam)
    hi = float(np.quantile(a, 0.999))
    edges = np.concatenate([[eps], np.geomspace(eps * 1.0001, hi, 40)[1:], [np.inf]])
    surv = np.array([float(_tail_integral(e, alpha, lam) / total) if np.isfinite(e) else 0.0
                     for e in edges])
    expected = n * (surv[:-1] - surv[1:])
    counts = np.histogram(a, edges)[0]
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert stats.chi2.sf(chi2, counts.size - 1) > 1e-3, chi2
    # power: the same bins reject a law 6 % off in alpha and 5 % off in lam
    aw, lw = alpha * 1.06, lam * 1.05
    surv_w = np.array([float(_tail_integral(e, aw, lw) / _tail_integral(eps, aw, lw))
                       if np.isfinite(e) else 0.0 for e in edges])
    exp_w = n * (surv_w[:-1] - surv_w[1:])
    assert stats.chi2.sf(float(np.sum((counts - exp_w) ** 2 / exp_w)), counts.size - 1) < 1e-6
    assert abs((z > 0).mean() - 0.5) < 4 * 0.5 / math.sqrt(n)
    beyond = a > jt.x_tail
    assert beyond.sum() > 50 and abs((z[beyond] > 0).mean() - 0.5) < 4 * 0.5 / math.sqrt(beyond.sum())
    p_tail = float(_tail_integral(jt.x_tail, alpha, lam) / total)
    assert abs(beyond.mean() - p_tail) < 4 * math.sqrt(p_tail * (1 - p_tail) / n)


def test_poisson_table_against_mpmath():
    """The inversion table: F(j) of Poisson(mu) to 1e-15, up to where it is 1 to double
    precision."""
    for mu in (0.0, 0.07, 4.3, 350.0, 2000.0):
        cdf = S.poisson_table(mu)
        mp.mp.prec = 100
        for j in np.unique(np.linspace(0, cdf.size - 1, 60).astype(int)):
            truth = mp.gammainc(j + 1, mu, mp.inf, regularized=True) if mu > 0 else mp.mpf(1)
            assert abs(cdf[j] - float(truth)) < 1e-15, (mu, j)
        assert 1.0 - cdf[-1] < 2.0 ** -60


def test_window_jumps_uniform_over_the_steps():
    """Drift-free, eta_G = 0: each step's increment is the sum of the jumps the window put on
    that step. Their variance at each of the 64 step positions of a window (two windows
    pooled, 4096 particles) is dt Var J_1 (docs/specification.md §2) within 4.5 standard errors, and the
    steps are uncorrelated (lag-1 correlation within 4.5 SE of 0)."""
    a, lam, ej, dt = 1.5, 2.0, 3.0, 0.01
    n, n_steps = 4096, 128
    zero = S.TabulatedDrift([0.0, 1.0], [0.0, 0.0])
    res = S.simulate(ej, eta_g=0.0, alpha=a, lam=lam, drift=zero, particles=n, t_end=n_steps * dt,
                     burn_in=0.0, dt=dt, seed=4, traj_particles=n, traj_every=1)
    path = np.concatenate([np.zeros((n, 1)), res.traj_zeta], axis=1)
    inc = np.diff(path, axis=1)                                    # (n, 128)
    var1 = -ej * a * (a - 1) * lam ** (a - 2) / math.cos(math.pi * a / 2)
    pos = inc.reshape(n, 2, 64).transpose(2, 0, 1).reshape(64, -1)  # by step position in a window
    v = pos.var(axis=1)
    se = np.sqrt((np.mean(pos ** 4, axis=1) - v ** 2) / pos.shape[1])
    assert np.max(np.abs(v - var1 * dt) / se) < 4.5
    x, y = inc[:, :-1].ravel(), inc[:, 1:].ravel()
    r = np.corrcoef(x, y)[0, 1]
    assert abs(r) < 4.5 / math.sqrt(x.size)


@pytest.mark.parametrize("kappa,gamma", [(1.0, 1.0), (2.0, 7.0), (1e-3, 1.0), (1e20, 1.0)])
def test_saturating_drift_relative_accuracy(kappa, gamma):
    """The compiled saturating drift kappa tanh(gamma (z0 - x)/kappa) against mpmath, relative
    error <= 4 ulp, also for tiny arguments (kappa = 1e20: the drift is gamma (z0 - x); the
    exp form alone would give 0 there) and across the switch at |y| = 0.1."""
    from levysde.simulation._kernels import _drift_value

    @njit(error_model="numpy")
    def drift(x, out):
        for i in range(x.size):
            out[i] = _drift_value(K.DRIFT_SATURATING, x[i], kappa, gamma / kappa, 0.25, x, x)

    rng = np.random.default_rng(3)
    x = 0.25 + np.concatenate([rng.normal(0, 3, 3000), rng.normal(0, 1e-9, 300),
                               np.linspace(-0.3, 0.3, 1201) * kappa / gamma])
    out = np.empty_like(x)
    drift(x, out)
    mp.mp.prec = 100
    ref = np.array([float(kappa * mp.tanh(mp.mpf(gamma) / kappa * (mp.mpf(0.25) - mp.mpf(float(v)))))
                    for v in x])
    keep = ref != 0
    assert np.max(np.abs(out[keep] - ref[keep]) / np.abs(ref[keep])) <= 4 * ULP
