"""Simulator checks against independent truth: closed forms of docs/specification.md §2, mpmath
quadrature, scipy distributions, exact discrete-time OU moments (docs/specification.md §3, §7)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from levysde import simulation as S
from levysde.simulation import _checks, _rng
from levysde.simulation.scheme import _big_jump_symbol
from levysde.theory.levy import c_alpha, char_exponent
from tests.helpers import run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)


def _c(alpha):
    """c_alpha from THEORY's first form -1/(2 Gamma(-alpha) cos(pi alpha/2)) (mpmath)."""
    if alpha == 1:
        return 1 / mp.pi
    return -1 / (2 * mp.gamma(-alpha) * mp.cos(mp.pi * alpha / 2))


def _nu_integral(f, lo, hi, alpha, lam, eta_j):
    """2 eta_J c_alpha int_lo^hi f(z) e^{-lam z} z^(-1-alpha) dz (mpmath, 25 digits)."""
    with mp.workdps(40):
        if lo == 0:
            # z = t^m, m = 1/(2 - alpha): removes the z^(1-alpha) end-point singularity
            m = 1 / mp.mpf(2 - alpha)

            def g(t):
                return f(t ** m) * mp.exp(-lam * t ** m) * t ** (m * (-1 - alpha)) * m * t ** (m - 1)
            return float(2 * eta_j * _c(alpha) * mp.quad(g, [0, hi ** (1 / m)]))
        pts = [lo] + [p for p in (0.1, 1, 10) if lo < p < hi] + [hi]
        return float(2 * eta_j * _c(alpha) * mp.quad(lambda z: f(z) * mp.exp(-lam * z) * z ** (-1 - alpha), pts))


# --- random numbers ----------------------------------------------------------------------------

def test_ziggurat_normal_law():
    st = _rng.seed_states(11, 8)
    out = np.empty((8, 100_000))
    _rng.fill_normal(st, out)
    x = out.ravel()
    n = x.size
    assert abs(x.mean()) < 4 / math.sqrt(n)
    assert abs(x.var() - 1) < 4 * math.sqrt(2 / n)
    assert stats.kstest(x, "norm").pvalue > 1e-3
    # the ziggurat's tail branch (|x| > r = 3.654): frequency of the exact tail
    p = 2 * stats.norm.sf(_rng._R)
    k = np.sum(np.abs(x) > _rng._R)
    assert abs(k - n * p) < 5 * math.sqrt(n * p)
    assert stats.kstest(np.abs(x[np.abs(x) > 3]), lambda t: 1 - stats.norm.sf(t) / stats.norm.sf(3)).pvalue > 1e-3


def test_streams_differ_and_uniform():
    st = _rng.seed_states(0, 4)
    assert len({tuple(r) for r in st}) == 4
    u = np.empty((4, 50_000))
    _rng.fill_uniform(st, u)
    assert u.min() >= 0 and u.max() < 1
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[0], u[1])[0, 1]) < 4 / math.sqrt(50_000)


# --- jump-law constants vs quadrature ----------------------------------------------------------

@pytest.mark.parametrize("alpha,lam,eps", [(1.5, 2.0, 0.05), (0.5, 2.0, 0.3), (1.0, 1.0, 0.1),
                                           (1.9, 3.0, 0.02), (1.5, 0.0, 0.1), (0.7, 5.0, 1.0)])
def test_rates_vs_quadrature(alpha, lam, eps):
    ej = 1.7
    rate = _nu_integral(lambda z: 1, eps, mp.inf, alpha, lam, ej)
    assert S.big_jump_rate(eps, alpha=alpha, lam=lam, eta_j=ej) == pytest.approx(rate, rel=1e-10)
    # small-jump variance: int_0^eps z^2 nu = order 2 - alpha (a gamma(alpha, .) bug fails here)
    var = _nu_integral(lambda z: z * z, 0, eps, alpha, lam, ej)
    assert S.small_jump_variance(eps, alpha=alpha, lam=lam, eta_j=ej) == pytest.approx(var, rel=1e-10)


@pytest.mark.parametrize("imag", [False, True])
def test_small_jump_symbol_vs_quadrature(imag):
    a, lam, ej, eps = 1.5, 2.0, 3.0, 0.4
    for b in (0.3, 1.2, 2.0):
        f = (lambda z, b=b: -2 * mp.sin(b * z / 2) ** 2) if imag else (lambda z, b=b: 2 * mp.sinh(b * z / 2) ** 2)
        exact, gauss = S.small_jump_symbol(b, eps, alpha=a, lam=lam, eta_j=ej, imaginary=imag)
        assert exact == pytest.approx(_nu_integral(f, 0, eps, a, lam, ej), rel=1e-11)
        assert gauss == pytest.approx((-1 if imag else 1) * 0.5 * b * b *
                                      _nu_integral(lambda z: z * z, 0, eps, a, lam, ej), rel=1e-11)


def test_beta_model_vs_mpmath_root():
    """Root of Phi_eps built from quadrature of the big jumps (docs/specification.md §7)."""
    a, lam, ej, eg, k, eps = 1.5, 2.0, 1.5, 0.1, 1.0, 0.5
    with mp.workdps(25):
        sig2 = _nu_integral(lambda z: z * z, 0, eps, a, lam, ej)

        def phi(b):
            big = 2 * ej * _c(a) * mp.quad(lambda z: (2 * mp.sinh(b * z / 2) ** 2) * mp.exp(-lam * z) * z ** (-1 - a),
                                           [eps, 1, 10, mp.inf])
            return eg * b * b + big + sig2 * b * b / 2 - k * b

        root = float(mp.findroot(phi, 1.46))
    assert S.beta_model(ej, eg, k, a, lam, eps=eps) == pytest.approx(root, rel=1e-12)
    from levysde.theory.phases import beta_star
    # docs/specification.md §7: +0.4% at eps = 0.5, eta_J = 1.5
    assert root / beta_star(ej) - 1 == pytest.approx(0.004, abs=0.0005)
    assert math.isnan(S.beta_model(0.5, eps=0.05))          # collapsed: no root


# --- increments ------------------------------------------------------------------------------

def _batch_se(x, fn, n_batches=50):
    vals = np.array([fn(b) for b in np.array_split(x, n_batches)])
    return vals.std(ddof=1) / math.sqrt(n_batches)


def test_increment_cumulants_vs_theory():
    a, lam, ej, dt = 1.5, 2.0, 3.0, 0.1
    x = S.sample_increments(1_000_000, dt, alpha=a, lam=lam, eta_j=ej, seed=3)
    cos = math.cos(math.pi * a / 2)
    var_th = -ej * a * (a - 1) * lam ** (a - 2) / cos * dt                      # docs/specification.md §2
    k4_th = -ej * a * (a - 1) * (a - 2) * (a - 3) * lam ** (a - 4) / cos * dt
    eps = S.default_eps(dt, eta_j=ej, alpha=a)
    # the Gaussian stand-in drops the small jumps' 4th cumulant int_{|z|<eps} z^4 nu (dt units)
    k4_small = 2 * ej * float(c_alpha(a)) * special.gammainc(4 - a, lam * eps) * special.gamma(4 - a) \
        * lam ** (a - 4) * dt
    m = x.mean()
    assert abs(m) < 4 * x.std() / math.sqrt(x.size)
    v = x.var()
    assert abs(v - var_th) < 4 * _batch_se(x, np.var)
    k4 = stats.kstat(x, 4)
    assert abs(k4 - (k4_th - k4_small)) < 4 * _batch_se(x, lambda b: stats.kstat(b, 4))
    assert abs(k4 / k4_th - 1) < 0.3          # k4 estimates are noisy (8th moment)


def test_increment_laplace_transform():
    """E exp(beta J_dt) = exp(dt Psi_eps(beta)), beta < lam/2 (finite estimator variance)."""
    a, lam, ej, dt = 1.5, 2.0, 3.0, 0.05
    x = S.sample_increments(800_000, dt, alpha=a, lam=lam, eta_j=ej, seed=5)
    eps = S.default_eps(dt, eta_j=ej, alpha=a)
    sig2 = _nu_integral(lambda z: z * z, 0, eps, a, lam, ej)
    for b in (0.5, 0.9):
        big = _nu_integral(lambda z, b=b: 2 * mp.sinh(b * z / 2) ** 2, eps, mp.inf, a, lam, ej)
        truth = math.exp(dt * (big + 0.5 * sig2 * b * b))
        e = np.exp(b * x)
        assert abs(e.mean() - truth) < 4 * e.std() / math.sqrt(x.size)
        assert abs(e.mean() / truth - 1) < 0.01


def test_increment_characteristic_function():
    a, lam, ej, dt = 1.2, 1.0, 2.0, 0.2
    x = S.sample_increments(500_000, dt, alpha=a, lam=lam, eta_j=ej, seed=7)
    eps = S.default_eps(dt, eta_j=ej, alpha=a)
    for xi in (0.5, 1.5, 4.0):
        # closed form, corrected by the (tiny) small-jump difference cos - 1 + xi^2 z^2/2 (mpmath)
        delta = _nu_integral(lambda z, xi=xi: -2 * mp.sin(xi * z / 2) ** 2 + xi * xi * z * z / 2, 0, eps, a, lam, ej)
        truth = math.exp(dt * (float(char_exponent(xi, alpha=a, lam=lam, eta_j=ej)) - delta))
        c = np.cos(xi * x)
        assert abs(c.mean() - truth) < 4 * c.std() / math.sqrt(x.size)
        assert abs(np.sin(xi * x).mean()) < 4 / math.sqrt(x.size)


@pytest.mark.parametrize("alpha", [0.7, 1.5])
def test_untempered_increments_vs_scipy_levy_stable(alpha):
    """lam = 0: J_dt is symmetric alpha-stable, S1 scale (eta_J dt)^(1/alpha) (docs/specification.md §2)."""
    ej, dt = 1.3, 0.5
    scale = (ej * dt) ** (1 / alpha)
    x = S.sample_increments(20_000, dt, alpha=alpha, lam=0.0, eta_j=ej, eps=0.02 * scale, seed=9)
    stats.levy_stable.parameterization = "S1"
    y = stats.levy_stable.rvs(alpha, 0.0, loc=0.0, scale=scale, size=20_000,
                              random_state=np.random.default_rng(1))
    assert stats.ks_2samp(x, y).pvalue > 1e-3
    assert stats.ks_2samp(x, 1.5 * y).pvalue < 1e-3          # the test has power


def test_exponential_proposal_branch():
    """lam eps > alpha switches to the exponential proposal; same law (E exp(beta J))."""
    a, lam, ej, dt, eps = 0.8, 4.0, 1.0, 0.5, 0.5
    x = S.sample_increments(400_000, dt, alpha=a, lam=lam, eta_j=ej, eps=eps, seed=2)
    assert lam * eps > a
    b = 1.5
    sig2 = _nu_integral(lambda z: z * z, 0, eps, a, lam, ej)
    big = _nu_integral(lambda z: 2 * mp.sinh(b * z / 2) ** 2, eps, mp.inf, a, lam, ej)
    e = np.exp(b * x)
    assert abs(e.mean() - math.exp(dt * (big + 0.5 * sig2 * b * b))) < 4 * e.std() / math.sqrt(x.size)


def test_time_stepper_jumps_law(monkeypatch):
    """The stepper's own jumps (tables of windows of 64 steps, a shorter last window per chunk,
    over several chunks): with zero drift and eta_G = 0, zeta(T) - zeta(0) is J_T of the scheme,
    so E exp(b J_T) = exp(T Psi_eps(b)) and Var J_T = T Var J_1 (docs/specification.md §2, §7)."""
    from levysde.simulation import _simulate

    a, lam, ej, dt, n_steps = 1.5, 2.0, 3.0, 0.01, 133          # 2 windows of 64 steps + 5
    n = 200_000
    monkeypatch.setattr(_simulate, "CHUNK_PARTICLE_STEPS", 4_000_000)
    assert len(_simulate.chunk_bounds(n_steps, n)) - 1 == 6     # 6 calls of the stepper
    zero = S.TabulatedDrift([0.0, 1.0], [0.0, 0.0])            # F = 0, equilibrium 0: J_T itself
    res = S.simulate(ej, eta_g=0.0, alpha=a, lam=lam, drift=zero, particles=n,
                     t_end=n_steps * dt, burn_in=0.0, dt=dt, seed=21)
    x, t = res.final_zeta, n_steps * dt
    eps = res.meta["eps"]
    var_th = -ej * a * (a - 1) * lam ** (a - 2) / math.cos(math.pi * a / 2) * t
    assert abs(x.var() - var_th) < 4 * _batch_se(x, np.var)
    sig2 = _nu_integral(lambda z: z * z, 0, eps, a, lam, ej)
    b = 0.9
    big = _nu_integral(lambda z: 2 * mp.sinh(b * z / 2) ** 2, eps, mp.inf, a, lam, ej)
    e = np.exp(b * x)
    truth = math.exp(t * (big + 0.5 * sig2 * b * b))
    assert abs(e.mean() - truth) < 4 * e.std() / math.sqrt(n)
    # the test has power: a 10 % error in the jump rate moves E exp(b J_T) by > 8 standard errors
    assert abs(math.exp(1.1 * t * big + 0.5 * t * sig2 * b * b) - truth) > 8 * e.std() / math.sqrt(n)


def test_record_every_samples_the_paths():
    """The histograms sample the stored paths at steps rec_start + k - 1, rec_start + 2k - 1, ...
    (recomputed here with numpy from every-step trajectories); recording draws no random numbers."""
    kw = dict(particles=64, n_groups=4, t_end=3.0, burn_in=1.0, dt=0.01, seed=8, traj_particles=64,
              traj_every=1)
    r7 = S.simulate(3.0, record_every=7, **kw)
    r1 = S.simulate(3.0, record_every=1, **kw)
    assert np.array_equal(r7.final_zeta, r1.final_zeta) and np.array_equal(r7.traj_zeta, r1.traj_zeta)
    steps = np.arange(100 + 6, 300, 7)                         # state after global step s
    assert r7.meta["record_every"] == 7 and r7.meta["record_steps"] == steps.size == 28
    z = r7.traj_zeta[:, steps]                                 # traj column s = state after step s
    edges = r7.hist_edges
    for g in range(4):
        zg = z[16 * g:16 * (g + 1)].ravel()
        counts, _ = np.histogram(zg, edges)
        sums, _ = np.histogram(zg, edges, weights=zg)
        np.testing.assert_array_equal(r7.hist_counts[g] * steps.size, counts)
        np.testing.assert_allclose(r7.hist_sums[g] * steps.size, sums, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="record_every"):
        S.simulate(3.0, record_every=201, **kw)


def test_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        S.sample_increments(10, 0.1, alpha=2.5, lam=1, eta_j=1)
    with pytest.raises(ValueError, match="eps"):
        S.sample_increments(10, 0.1, alpha=1.5, lam=1, eta_j=1, eps=-1)
    with pytest.raises(ValueError, match="dt"):
        S.simulate(1.0, dt=0.0)
    with pytest.raises(ValueError, match="burn_in"):
        S.simulate(1.0, t_end=1.0, burn_in=2.0)
    with pytest.raises(ValueError, match="kappa"):
        S.SaturatingDrift(-1.0)
    with pytest.raises(ValueError, match="grid"):
        S.TabulatedDrift([0, 0, 1], [1, 0, -1])


# --- drift, OU moments ------------------------------------------------------------------------

@pytest.mark.parametrize("drift", [S.SaturatingDrift(0.7, 2.0, 0.3), S.OUDrift(1.5, -0.2),
                                   S.TabulatedDrift([-2, -0.5, 0.0, 1.0, 4.0], [1.0, 0.8, 0.1, -0.6, -1.0])])
def test_compiled_drift_one_noiseless_step(drift):
    z = np.linspace(-6, 6, 97)
    dt = 0.01
    res = S.simulate(0.0, eta_g=0.0, drift=drift, particles=z.size, n_groups=1, t_end=dt, burn_in=0.0,
                     dt=dt, z_init=z)
    if isinstance(drift, S.TabulatedDrift):
        f = np.interp(z, drift.grid, drift.values)
    elif isinstance(drift, S.OUDrift):
        f = -drift.gamma * (z - drift.z0)
    else:
        f = drift.kappa * np.tanh(drift.gamma * (drift.z0 - z) / drift.kappa)
    np.testing.assert_allclose(res.final_zeta, z + f * dt, rtol=0, atol=1e-15)


@pytest.mark.parametrize("eta_j", [0.0, 1.0])
def test_ou_stationary_variance(eta_j):
    """Euler OU: AR(1) with variance (2 eta_G + Var J_1) dt / (1 - (1 - gamma dt)^2)
    -> (eta_G + Var J_1/2)/gamma as dt -> 0 (docs/specification.md §3)."""
    eg, gamma, dt, a, lam = 0.3, 1.0, 0.01, 1.5, 2.0
    var_j = -eta_j * a * (a - 1) * lam ** (a - 2) / math.cos(math.pi * a / 2)
    truth = (2 * eg + var_j) * dt / (1 - (1 - gamma * dt) ** 2)
    assert truth == pytest.approx((eg + var_j / 2) / gamma, rel=0.006)
    res = S.simulate(eta_j, eta_g=eg, alpha=a, lam=lam, drift=S.OUDrift(gamma, 0.0), particles=20_000,
                     t_end=12.0, burn_in=1.0, dt=dt, seed=4)
    z = res.final_zeta          # independent particles; started at 0: e^{-24} transient left
    v = z.var()
    se = math.sqrt(np.var((z - z.mean()) ** 2) / z.size)
    assert abs(v - truth) < 4 * se
    assert abs(v / truth - 1) < 0.05


# --- guard, reproducibility, I/O --------------------------------------------------------------

def test_divergence_guard_no_restoring_drift():
    """A repulsive OU drift (no stable equilibrium) is refused before any step, naming gamma with
    the CLI's wording; a repulsive tabulated drift F(z) = z still reaches the divergence guard."""
    with pytest.raises(S.SimulationInputError, match=r"gamma must be in \(0, inf\).*no restoring drift"):
        S.simulate(1.0, drift=S.OUDrift(-1.0, 0.0), particles=64, n_groups=4, t_end=100.0, burn_in=0.0)
    with pytest.raises(S.SimulationInputError, match="gamma"):
        S.simulate(3.0, drift=S.OUDrift(0.0, 0.0), particles=64, n_groups=4, t_end=5.0, burn_in=1.0)
    with pytest.raises(S.DivergenceError, match="does not restore at both ends"):
        S.simulate(1.0, drift=S.TabulatedDrift([-1.0, 1.0], [-1.0, 1.0]), particles=64, n_groups=4,
                   t_end=100.0, burn_in=0.0, window=(-20.0, 20.0))


def test_divergence_guard_dt_too_large():
    with pytest.raises(S.DivergenceError, match="dt too large"):
        S.simulate(0.0, drift=S.OUDrift(300.0, 0.0), particles=64, n_groups=4, t_end=5.0, burn_in=0.0)


_REPRO = textwrap.dedent("""
    import sys, numpy as np, numba
    from levysde import simulation as S
    r = S.simulate(3.0, particles=300, n_groups=7, t_end=3.0, burn_in=1.0, seed=123,
                   traj_particles=3, traj_every=10)
    x = S.sample_increments(10_000, 0.01, alpha=1.5, lam=2.0, eta_j=3.0, seed=5)
    np.savez(sys.argv[1], counts=r.hist_counts, sums=r.hist_sums, z=r.final_zeta, exc=r.excursion_counts,
             traj=r.traj_zeta, x=x, threads=numba.get_num_threads())
""")


def test_thread_count_reproducibility(tmp_path):
    outs = []
    for n in (1, 2):
        f = tmp_path / f"t{n}.npz"
        subprocess.run([sys.executable, "-c", _REPRO, str(f)], check=True,
                       env=dict(ENV, NUMBA_NUM_THREADS=str(n)), timeout=300)
        outs.append(np.load(f))
    assert int(outs[0]["threads"]) == 1 and int(outs[1]["threads"]) == 2
    for k in ("counts", "sums", "z", "exc", "traj", "x"):
        assert np.array_equal(outs[0][k], outs[1][k]), k


def test_npz_round_trip_exact(tmp_path):
    r = S.simulate(1.5, particles=128, n_groups=8, t_end=2.0, burn_in=0.5, seed=8,
                   traj_particles=4, traj_every=7)
    path = tmp_path / "run.npz"
    r.save(path)
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"][()]))
        assert f["hist_counts"].shape == (8, r.hist_edges.size - 1)
        assert f["final_zeta"].shape == (128,)
    for key in ("kind", "eta_j", "eta_g", "kappa", "alpha", "lam", "drift", "gamma", "z0", "dt", "eps",
                "seed", "t_end", "burn_in", "particles", "wall_time_s", "particle_steps_per_s",
                "beta_theory", "beta_model"):
        assert key in meta
    assert meta["kind"] == "simulation"
    back = S.SimulationResult.load(path)
    for k in ("hist_edges", "hist_counts", "hist_sums", "hist_outside", "excursion_counts", "final_zeta",
              "traj_t", "traj_zeta"):
        a, b = getattr(r, k), getattr(back, k)
        assert a.dtype == b.dtype and np.array_equal(a, b), k
    assert back.meta == r.meta
    # a tabulated drift round-trips too
    d = S.TabulatedDrift([-3, 0, 3], [1.0, 0.0, -1.0])
    r2 = S.simulate(1.5, drift=d, particles=16, n_groups=2, t_end=0.5, burn_in=0.1)
    r2.save(tmp_path / "tab.npz")
    assert S.SimulationResult.load(tmp_path / "tab.npz").meta == r2.meta


def _cli(*args):
    return run_cli("simulate", *args, env_base=ENV, timeout=300)


@pytest.mark.parametrize("args,needle", [
    (["--eta-j", "-1"], "eta-j"),
    (["--eta-j", "3", "--dt", "0"], "dt"),
    (["--eta-j", "3", "--t-end", "5", "--burn-in", "10"], "burn-in"),
    (["--eta-j", "3", "--alpha", "2"], "alpha"),
    (["--eta-j", "3", "--particles", "1"], "particles"),
    (["--eta-j", "1", "--drift", "ou", "--gamma", "-1", "--particles", "64", "--groups", "8",
      "--t-end", "100", "--burn-in", "1"], "no restoring drift"),
])
def test_cli_bad_input(args, needle):
    p = _cli(*args)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in p.stderr


def test_cli_json_small(tmp_path):
    out = tmp_path / "r.npz"
    p = _cli("--eta-j", "3", "--particles", "256", "--groups", "8", "--t-end", "20", "--burn-in", "5",
             "--json", "--out", str(out), "--plot", str(tmp_path / "p.png"))
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""                               # no progress bar with --json
    d = json.loads(p.stdout)
    for k in ("beta_hat", "beta_hat_se", "threshold_u", "beta_theory", "beta_model", "tail_rate_theory",
              "phase", "eps", "dt", "particle_steps_per_s"):
        assert k in d
    assert d["phase"] == "broad" and d["beta_theory"] == pytest.approx(0.808357146473768, rel=1e-12)
    assert S.SimulationResult.load(out).meta["particles"] == 256
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_tabulated_drift_tracks_saturating_drift():
    """Same seed, same noise: a finely tabulated tanh drift reproduces the saturating run
    to interpolation accuracy (the dynamics contract, so the difference stays small)."""
    grid = np.linspace(-40, 40, 16001)
    sat = S.SaturatingDrift(1.0, 1.0, 0.0)
    tab = S.TabulatedDrift(grid, sat(grid))
    kw = dict(particles=512, n_groups=8, t_end=20.0, burn_in=5.0, seed=17)
    a = S.simulate(3.0, drift=sat, **kw)
    b = S.simulate(3.0, drift=tab, **kw)
    assert b.meta["kappa"] == pytest.approx(1.0, abs=1e-12) and abs(b.meta["z0"]) < 1e-12
    assert np.max(np.abs(a.final_zeta - b.final_zeta)) < 1e-4
    assert not np.array_equal(a.final_zeta, b.final_zeta)


# --- fresh-user defects (input checks before any step, robust symbols, notes) -----------------

_SMALL = ("--particles", "256", "--groups", "8", "--t-end", "20", "--burn-in", "5")


@pytest.mark.parametrize("args,needle", [
    (["--out", "/nonexistent-dir-xyz/sub/run.npz"], "--out"),
    (["--out", "DIR"], "is a directory"),
    (["--plot", "/nonexistent-dir-xyz/sub/p.png"], "--plot"),
    (["--plot", "p.xyz"], "unsupported image format"),
    (["--dt", "5"], "--dt too large for --gamma: gamma*dt = 5"),
    (["--dt", "20"], "--dt too large"),
    (["--drift", "ou", "--dt", "2.5"], "--dt too large"),
    (["--gamma", "-1"], "--gamma must be in (0, inf)"),
    (["--eps", "1e-12"], "--eps"),
    (["--eps", "1e-300"], "--eps"),
    (["--dt", "1e-300"], "--dt"),
    (["--t-end", "1e300"], "--t-end"),
    (["--z0", "1e300"], "--z0"),
    (["--t-end", "1", "--dt", "0.3", "--burn-in", "0.95"], "--burn-in"),
])
def test_cli_rejects_before_simulating(tmp_path, args, needle):
    """All of these fail in the checks before the run: the default 800 time units (about a
    minute) would otherwise be simulated first."""
    args = [str(tmp_path) if a == "DIR" else a for a in args]
    p = run_cli("simulate", "--eta-j", "3", "--json", *args, env_base=ENV, timeout=300, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in p.stderr, p.stderr
    assert p.stdout == ""


def test_cli_out_refuses_existing_file_unless_force(tmp_path):
    out = tmp_path / "r.npz"
    out.write_text("precious\n")
    p = _cli("--eta-j", "3", *_SMALL, "--json", "--out", str(out))
    assert p.returncode == 2 and "--force" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert out.read_text() == "precious\n"
    p = _cli("--eta-j", "3", *_SMALL, "--json", "--out", str(out), "--force", "--plot", str(tmp_path / "p"))
    assert p.returncode == 0, p.stderr
    assert S.SimulationResult.load(out).meta["particles"] == 256
    assert (tmp_path / "p.png").stat().st_size > 1000          # .png added to a bare name
    assert [f.name for f in tmp_path.iterdir() if f.name.startswith(".tmp")] == []


def test_cli_notes(tmp_path):
    # Gaussian only: no exceedance beyond u = 3 -> flagged, with a hint
    d = json.loads(_cli("--eta-j", "0", *_SMALL, "--json").stdout)
    assert d["beta_hat"] is None and d["beta_hat_flag"] == "no_exceedances"
    assert any("--threshold" in n for n in d["notes"])
    # OU: no plateau caveat; --kappa does not apply to it (an error, not silently ignored)
    d = json.loads(_cli("--eta-j", "3", "--drift", "ou", *_SMALL, "--json").stdout)
    assert any("no restoration plateau" in n for n in d["notes"])
    p = _cli("--eta-j", "3", "--drift", "ou", "--kappa", "2", *_SMALL, "--json")
    assert p.returncode == 2 and "--kappa" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    # t_end / burn_in rounded to whole steps: said so
    p = _cli("--eta-j", "3", "--particles", "256", "--groups", "8", "--t-end", "1", "--dt", "0.3",
             "--burn-in", "0.5")
    assert p.returncode == 0, p.stderr
    assert "note: --t-end 1 is not a multiple of --dt 0.3: simulated t-end = 0.9" in p.stdout
    assert "simulated burn-in = 0.6" in p.stdout
    # huge eps: runs (the Gaussian carries all jumps); beta_model is finite
    d = json.loads(_cli("--eta-j", "3", *_SMALL, "--json", "--eps", "1e6").stdout)
    assert d["beta_model"] == pytest.approx(S.beta_model(3.0, eps=1e6), rel=1e-12)
    assert 0.8 < d["beta_model"] < 0.82


def test_small_jump_symbol_no_overflow_for_huge_eps():
    """Log-space terms: eps = 100 (|beta| eps = 200) was an OverflowError from math.factorial."""
    ex, g = S.small_jump_symbol(np.array([0.5, 2.0]), 100.0, alpha=1.5, lam=2.0, eta_j=3.0)
    assert np.all(np.isfinite(ex)) and np.all(np.isfinite(g))
    # beta <= lam: exact small part = Psi - (big-jump part), both closed forms
    from levysde.theory.levy import psi
    big = _big_jump_symbol(0.5, 100.0, 1.5, 2.0, 3.0)
    assert ex[0] == pytest.approx(float(psi(0.5, alpha=1.5, lam=2.0, eta_j=3.0)) - big, rel=1e-10)
    with pytest.raises(ValueError, match="eps"):
        S.small_jump_symbol(1.0, 1e6, alpha=1.5, lam=2.0, eta_j=3.0)


@pytest.mark.parametrize("kw,truth", [
    (dict(eps=1e6), 0.8163265306122449),          # all jumps Gaussian: root of eta_G b + var b/2 = kappa
    (dict(eps=100.0), 0.8163265306122449),
    (dict(eps=0.1, lam=1e300), 10.0),              # jumps vanish: kappa/eta_G
    (dict(eps=0.0965, eta_g=1e300), 1e-300),       # kappa/eta_G
    (dict(eps=0.0965, kappa=1e-300), None),
])
def test_beta_model_extreme_parameters(kw, truth):
    import warnings

    from levysde.theory.phases import classify
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = S.beta_model(3.0, **kw)
    p = dict(eta_g=0.1, kappa=1.0, alpha=1.5, lam=2.0)
    p.update({k: v for k, v in kw.items() if k != "eps"})
    bs = float(classify(3.0, p["eta_g"], p["kappa"], p["alpha"], p["lam"]).beta_star)
    assert math.isfinite(b) and b > 0
    assert b == pytest.approx(truth if truth is not None else bs, rel=1e-6)


def test_simulate_input_checks_before_running(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match="gamma"):
        S.SaturatingDrift(1.0, -1.0)
    with pytest.raises(ValueError, match="gamma"):
        S.SaturatingDrift(1.0, 0.0)
    with pytest.raises(S.StepSizeError, match=r"dt too large for gamma: gamma\*dt = 5"):
        S.simulate(3.0, dt=5.0)
    with pytest.raises(ValueError, match="max \\|dF/dz\\|"):
        S.simulate(3.0, drift=S.TabulatedDrift([-1, 0, 1], [10.0, 0.0, -10.0]), dt=0.1)
    with pytest.raises(ValueError, match="eps"):
        S.simulate(3.0, eps=1e-12)
    with pytest.raises(ValueError, match="eps"):
        S.sample_increments(10, 0.01, alpha=1.5, lam=2.0, eta_j=3.0, eps=1e-300)
    with pytest.raises(ValueError, match="t_end / dt"):
        S.simulate(3.0, dt=1e-300)
    with pytest.raises(ValueError, match="z0"):
        S.simulate(3.0, drift=S.SaturatingDrift(z0=1e300))
    with pytest.raises(ValueError, match="t_end - burn_in"):
        S.simulate(3.0, t_end=1.0, dt=0.3, burn_in=0.95)
    monkeypatch.setattr(_checks, "available_memory", lambda: 10**6)
    with pytest.raises(ValueError, match="particles"):
        S.simulate(3.0, particles=100_000)


def test_save_is_atomic(tmp_path, monkeypatch):
    r = S.simulate(1.5, particles=32, n_groups=2, t_end=0.5, burn_in=0.1)
    path = tmp_path / "run.npz"
    r.save(path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(KeyboardInterrupt):
        r.save(path)
    assert path.read_bytes() == before
    assert sorted(f.name for f in tmp_path.iterdir()) == ["run.npz"]


def test_top_level_names_are_the_layer_objects_and_load_lazily():
    """levysde.simulate is levysde.simulation.simulate (no wrapper); ``import levysde`` alone loads
    neither Numba nor the simulator, and every name in levysde.__all__ resolves."""
    import subprocess
    import sys

    import levysde

    assert levysde.simulate is S.simulate and levysde.SimulationResult is S.SimulationResult
    for name in levysde.__all__:
        assert getattr(levysde, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = levysde.no_such_name
    with pytest.raises(ModuleNotFoundError):
        import levysde.simulate  # noqa: F401  (the former module alias is gone)
    code = "import sys, levysde; print(sorted(m for m in ('numba', 'scipy', 'levysde.simulation') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out


# --- bias budget (levysde.simulation.bias) -----------------------------------------------------

def test_saturation_shift_exact_for_a_diffusion():
    """eta_J = 0: the stationary density of dzeta = F dt + sqrt(2 eta_G) dW is exactly
    exp(int F / eta_G), here cosh(gamma x/kappa)^(-kappa^2/(gamma eta_G)) (docs/specification.md §3), and the
    local-rate model is exact; its MLE shift is checked against mpmath quadrature."""
    from levysde.simulation import bias

    kappa, gamma, eg, lam = 2.0, 1.0, 0.8, 50.0
    drift = S.SaturatingDrift(kappa, gamma, 0.0)
    beta = kappa / eg
    c = kappa ** 2 / (gamma * eg)
    for u in (1.0, 2.0, 3.0):
        with mp.workdps(30):
            def p(x):
                return mp.cosh(gamma * x / kappa) ** (-c)
            num = mp.quad(p, [u, u + 5, mp.inf])
            den = mp.quad(lambda x, u=u, p=p: (x - u) * p(x), [u, u + 5, mp.inf])
        truth = float(num / den) - beta
        assert truth < -0.01
        assert bias.saturation_shift(u, drift, 0.0, eg, 1.5, lam, beta) == pytest.approx(truth, rel=1e-3)


def test_default_threshold_and_budget():
    """u = 3 where the drift is saturated (the defaults); deeper for kappa = 2, gamma = 1
    (issue 12's case), with the predicted shift within DRIFT_BIAS_TOL there."""
    from levysde.simulation import bias
    from levysde.theory.phases import beta_star

    d1 = S.SaturatingDrift(1.0, 1.0, 0.0)
    assert bias.default_threshold(d1, 3.0, 0.1, 1.5, 2.0, float(beta_star(3.0))) == 3.0
    d2 = S.SaturatingDrift(2.0, 1.0, 0.0)
    b = float(beta_star(40.0, 0.3, 2.0, 0.7, 3.0))
    u = bias.default_threshold(d2, 40.0, 0.3, 0.7, 3.0, b)
    assert u > 3.0
    assert abs(bias.saturation_shift(u, d2, 40.0, 0.3, 0.7, 3.0, b)) <= bias.DRIFT_BIAS_TOL * b
    assert abs(bias.saturation_shift(u - 0.5, d2, 40.0, 0.3, 0.7, 3.0, b)) > bias.DRIFT_BIAS_TOL * b
    bb = bias.bias_budget(3.0, d2, 40.0, 0.3, 0.7, 3.0, b, S.beta_model(40.0, 0.3, 2.0, 0.7, 3.0, eps=0.27))
    assert bb["total"] == pytest.approx(bb["eps"] + bb["drift_saturation"])
    assert bb["drift_saturation"] < -0.01 and 0 < bb["eps"] < 1e-3
    assert bias.bias_budget(3.0, S.OUDrift(1.0, 0.0), 3.0, 0.1, 1.5, 2.0, None, None) is None


def test_simulation_eps_bounds_the_eps_bias():
    """simulate's default cut: the largest of 2, 1.5, 1 times default_eps whose shift
    beta_model - beta* is <= EPS_BIAS_TOL beta* (docs/specification.md §7); default_eps without a beta*."""
    from levysde.simulation.scheme import EPS_BIAS_TOL
    from levysde.theory.phases import beta_star

    base = S.default_eps(0.01, eta_j=3.0, alpha=1.5)
    eps = S.simulation_eps(0.01, eta_j=3.0, eta_g=0.1, kappa=1.0, alpha=1.5, lam=2.0)
    assert eps == pytest.approx(2 * base)
    b = float(beta_star(3.0))
    assert abs(S.beta_model(3.0, eps=eps) - b) <= EPS_BIAS_TOL * b
    # issue 12's case: already the base cut shifts beta_model by more than the tolerance
    kw = dict(eta_j=40.0, eta_g=0.3, kappa=2.0, alpha=0.7, lam=3.0)
    base40 = S.default_eps(0.01, eta_j=40.0, alpha=0.7)
    assert S.simulation_eps(0.01, **kw) == base40
    b40 = float(beta_star(40.0, 0.3, 2.0, 0.7, 3.0))
    for c in (1.5, 2.0):
        assert abs(S.beta_model(40.0, 0.3, 2.0, 0.7, 3.0, eps=c * base40) - b40) > EPS_BIAS_TOL * b40
    assert S.simulation_eps(0.01, eta_j=3.0, eta_g=0.1, kappa=None, alpha=1.5, lam=2.0) == base
    assert S.simulation_eps(0.01, eta_j=0.5, eta_g=0.1, kappa=1.0, alpha=1.5, lam=2.0) == \
        S.default_eps(0.01, eta_j=0.5, alpha=1.5)                        # collapsed: no beta*
    r = S.simulate(3.0, particles=64, n_groups=4, t_end=0.5, burn_in=0.1)
    assert r.meta["eps"] == pytest.approx(eps)


def _tempered_run(b, alpha, phase, *, depth=2.0, groups=8, n=3000, seed=21, eq=0.5):
    """A SimulationResult whose X = -zeta beyond the equilibrium + depth has the exact density
    prop. to exp(-b y) y^(-1-alpha), y = X - x0 (rejection from d + Exp(b), acceptance (y/d)^(-1-alpha))."""
    rng = np.random.default_rng(seed)
    # eq: zeta of the equilibrium (default x0 = -0.5)
    ys = []
    for _ in range(groups):
        y = depth + rng.exponential(1 / b, size=8 * n)
        y = y[rng.uniform(size=y.size) < (y / depth) ** (-1.0 - alpha)][:n]
        assert y.size == n
        ys.append(y)
    zeta = -(-eq + np.stack(ys))
    edges = np.linspace(-40.0, 5.0, 4501)                # 0.01 wide: u = x0 + depth is an edge
    counts = np.stack([np.histogram(z, edges)[0] for z in zeta]).astype(float)
    zeros = np.zeros_like(counts)
    meta = S.SimulationMeta(version="test", eta_j=0.5, eta_g=0.0, alpha=alpha, lam=b, drift="saturating",
                            kappa=1.0, gamma=1.0, z0=eq, dt=0.01, eps=0.1, seed=seed, t_end=1.0, burn_in=0.0,
                            particles=groups * n, n_groups=groups, steps=100, record_steps=100,
                            big_jump_rate=0.0, sigma_eps2=0.0, exp_proposal=False, window=(-1e3, 1e3),
                            threads=1, wall_time_s=1.0, particle_steps_per_s=1.0, beta_theory=None,
                            beta_model=None, tail_rate_theory=None, phase=phase, threshold_u=depth - eq,
                            equilibrium=eq)
    return S.SimulationResult(hist_edges=edges, hist_counts=counts, hist_sums=zeros,
                              hist_outside=np.zeros((groups, 4)), excursion_counts=zeros,
                              final_zeta=zeta.ravel(), meta=meta)


def test_tempering_limited_fit_recovers_the_tempering_rate():
    b, alpha = 2.0, 1.5
    fit = _tempered_run(b, alpha, "collapsed").tempering_limited_fit()
    assert fit.u == pytest.approx(-0.5 + 2.0) and fit.n_exceed == 8 * 3000
    assert 0 < fit.se < 0.1 and abs(fit.b - b) < 4 * fit.se, fit
    assert _tempered_run(b, alpha, "broad").tempering_limited_fit() is None
    for bad in (-1.0, 0.0, float("nan")):
        with pytest.raises(ValueError, match="depth"):
            _tempered_run(b, alpha, "collapsed").tempering_limited_fit(depth=bad)


def test_tempering_limited_fit_reports_x0_plus_zero_at_equilibrium_zero():
    fit = _tempered_run(2.0, 1.5, "collapsed", eq=0.0, groups=2, n=500).tempering_limited_fit()
    assert fit.x0 == 0.0 and np.copysign(1.0, fit.x0) == 1.0


@pytest.mark.parametrize("kw, name", [
    (dict(seed=None), "seed"), (dict(seed=True), "seed"), (dict(seed=[1, 2]), "seed"), (dict(seed=-1), "seed"),
    (dict(particles=10**400), "particles"), (dict(progress=1), "progress"), (dict(progress="yes"), "progress"),
    (dict(traj_particles=65), "traj_particles"),
])
def test_simulate_refuses_bad_seed_particles_progress(kw, name):
    args = dict(particles=64, n_groups=4, t_end=0.2, burn_in=0.0, dt=0.01) | kw
    with pytest.raises(ValueError, match=f"^{name} must"):
        S.simulate(1.0, **args)
