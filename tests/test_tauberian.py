"""Laplace-Tauberian map (docs/specification.md §5, §8) against independent truth: closed forms
evaluated with mpmath, known distributions, Monte-Carlo standard errors."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from scipy import special, stats

from levysde.stats.tails import tail_fit
from levysde.theory.envelope_decay import DECAY_CLASSES, classify_decay, fit_slope, local_slope
from levysde.theory.envelope_map import (
    envelope,
    envelope_density,
    envelope_hist,
    envelope_samples,
    tauberian_prediction,
)
from levysde.theory.phases import classify
from tests.helpers import run_cli

mp.mp.dps = 30
LAGS = np.array([0.01, 0.3, 1.0, 3.0, 10.0, 100.0, 1e4])


def pareto_f(l, beta, L=None):
    """Pareto p(tau) = beta tau^(-1-beta) on tau >= 1 (optionally truncated to tau <= e^L):
    f(l) = beta l^-beta [gamma_lower(beta, l) - gamma_lower(beta, l e^-L)] / (1 - e^-beta L)."""
    l = mp.mpf(l)
    b = mp.mpf(beta)
    if L is None:
        return float(b * l ** (-b) * mp.gammainc(b, 0, l))
    return float(b * l ** (-b) * mp.gammainc(b, l * mp.exp(-L), l) / (1 - mp.exp(-b * L)))


def pareto_zeta(rng, beta, n):
    """zeta = -log tau with tau Pareto(beta) on [1, inf): rho(zeta) = beta e^(beta zeta), zeta <= 0."""
    return np.log(rng.uniform(size=n)) / beta


# ----------------------------------------------------------------------------- (c) densities

@pytest.mark.parametrize("beta", [0.4, 1.5])
def test_density_pareto_matches_mpmath(beta):
    truth = np.array([pareto_f(l, beta) for l in LAGS])
    f_tau = envelope(LAGS, tau_pdf=lambda t: np.where(t >= 1, beta * t ** (-1 - beta), 0.0))
    f_zeta = envelope(LAGS, zeta_pdf=lambda z: np.where(z <= 0, beta * np.exp(beta * np.minimum(z, 0)), 0.0))
    assert np.max(np.abs(f_tau - truth)) < 1e-10
    assert np.max(np.abs(f_zeta - truth)) < 1e-10
    assert np.max(np.abs(f_tau / truth - 1)) < 1e-9


def test_inverse_gamma_values():
    a, b = 0.56, 1.0
    pdf = stats.invgamma(a, scale=b).pdf
    f = envelope([0.0, 1.0, 10.0, 100.0, 1e4], tau_pdf=pdf)
    assert f[0] == 1.0
    np.testing.assert_allclose(f[1:4], [0.678302, 0.261108, 0.0754362], atol=6e-7)
    closed = (1 + np.array([1.0, 10.0, 100.0, 1e4]) / b) ** (-a)
    np.testing.assert_allclose(f[1:], closed, rtol=1e-10)


def test_narrow_lognormal_large_lag_no_silent_zero():
    # tau log-normal around tau0 = 100 with sigma 0.02 in log tau: at l = 1e4 the envelope
    # is ~1e-42, which a blind quadrature over tau in [0, inf) reports as 0.
    z0, s = -math.log(100.0), 0.02

    def pdf(z):
        return np.exp(-0.5 * ((z - z0) / s) ** 2) / (s * math.sqrt(2 * math.pi))

    lags = np.array([1e2, 1e3, 1e4, 2e4])
    f = envelope(lags, zeta_pdf=pdf)

    def truth(l):
        def g(z):
            return mp.exp(-((z - z0) / s) ** 2 / 2 - l * mp.exp(z)) / (s * mp.sqrt(2 * mp.pi))
        return float(mp.quad(g, list(mp.linspace(z0 - 0.5, z0 + 0.3, 81))))

    t = np.array([truth(l) for l in lags])
    assert np.all(f > 0)
    assert t[-1] < 1e-80          # the regime where silent zeros used to happen
    np.testing.assert_allclose(f, t, rtol=1e-8)


def test_density_errors():
    with pytest.raises(ValueError, match="integrates to"):
        envelope([1.0], tau_pdf=lambda t: 2 * stats.expon.pdf(t))
    with pytest.raises(ValueError, match="tau_pdf"):
        envelope([1.0], tau_pdf=lambda t: -np.ones_like(t))
    with pytest.raises(ValueError, match="exactly one"):
        envelope_density([1.0], tau_pdf=stats.expon.pdf, zeta_pdf=stats.norm.pdf)
    # a mass narrower than the locating grid is reported, not silently zero
    with pytest.raises(ValueError, match="zeta_pdf"):
        envelope([1.0], zeta_pdf=lambda z: stats.norm.pdf(z, 0.0012, 1e-5))


# ----------------------------------------------------------------------------- (b) histograms

def test_hist_fine_bins_pareto_truncated():
    beta, L, nb = 0.8, 25.0, 1_000_000
    edges = np.linspace(-L, 0.0, nb + 1)
    counts = np.exp(beta * edges[:-1]) * np.expm1(beta * np.diff(edges))   # exact bin masses
    lags = np.array([0.01, 1.0, 10.0, 1e3, 1e5])
    f = envelope(lags, hist=(edges, counts))
    truth = np.array([pareto_f(l, beta, L) for l in lags])
    assert np.max(np.abs(f - truth)) < 1e-10


def test_hist_each_bin_integrated_exactly():
    # coarse bins: the result must equal the envelope of the piecewise-constant density
    # (mpmath), which a midpoint sum misses by far
    edges = np.array([-12.0, -9.0, -5.0, -4.0, -1.5, 0.0, 2.5])
    counts = np.array([1.0, 3.0, 0.0, 5.0, 2.0, 4.0])
    dens = counts / (counts.sum() * np.diff(edges))
    lags = np.array([1e-3, 0.5, 2.0, 40.0, 3e3, 1e5])

    def truth(l):
        return float(sum(d * mp.quad(lambda z: mp.exp(-l * mp.exp(z)), [a, b])
                         for a, b, d in zip(edges[:-1], edges[1:], dens, strict=True) if d > 0))

    t = np.array([truth(l) for l in lags])
    f = envelope_hist(lags, edges, counts)
    np.testing.assert_allclose(f, t, rtol=1e-12, atol=1e-15)
    mid = 0.5 * (edges[:-1] + edges[1:])
    midpoint = np.array([(dens * np.diff(edges) * np.exp(-l * np.exp(mid))).sum() for l in lags])
    assert np.max(np.abs(midpoint - t)) > 1e-2          # the naive rule is not what we compute


def test_hist_groups_summed_and_point_mass():
    edges = np.array([-3.0, -1e-6, 1e-6, 3.0])
    counts2 = np.array([[0, 3, 0], [0, 5, 0]])
    lags = np.array([0.0, 0.5, 2.0, 20.0])
    f = envelope_hist(lags, edges, counts2)
    np.testing.assert_allclose(f, np.exp(-lags), rtol=1e-10)     # point mass at tau0 = 1


def test_hist_errors():
    with pytest.raises(ValueError, match="edges"):
        envelope_hist([1.0], [0.0, 0.0, 1.0], [1, 1])
    with pytest.raises(ValueError, match="counts"):
        envelope_hist([1.0], [0.0, 1.0, 2.0], [1, 1, 1])
    with pytest.raises(ValueError, match="counts"):
        envelope_hist([1.0], [0.0, 1.0, 2.0], [1, -1])
    with pytest.raises(ValueError, match="hist"):
        envelope([1.0], hist=np.zeros(3))


# ----------------------------------------------------------------------------- (a) samples

def test_samples_pareto_within_4_standard_errors():
    rng = np.random.default_rng(20261129)
    beta = 0.7
    z = pareto_zeta(rng, beta, 400_000)
    r = envelope_samples(LAGS, z)
    truth = np.array([pareto_f(l, beta) for l in LAGS])
    assert np.all(r.stderr > 0)
    assert np.all(np.abs(r.f - truth) <= 4 * r.stderr + r.bias_bound)
    # the standard error is the right size: a 1/sqrt(n) estimate of sqrt(Var g / n)
    var_exact = np.array([pareto_f(2 * l, beta) - pareto_f(l, beta) ** 2 for l in LAGS])
    np.testing.assert_allclose(r.stderr, np.sqrt(var_exact / z.size), rtol=0.05)


def test_samples_binning_bias_within_bound():
    rng = np.random.default_rng(7)
    z = np.concatenate([pareto_zeta(rng, 0.5, 20_000), rng.normal(1.0, 2.0, 20_000)])
    w = rng.uniform(0.1, 2.0, z.size)
    lags = np.geomspace(1e-2, 1e6, 60)
    exact = envelope_samples(lags, z, w, bin_width=0)
    for h in (0.01, 0.1):
        binned = envelope_samples(lags, z, w, bin_width=h, exact_limit=0)
        assert binned.bin_width == h and exact.bin_width == 0
        assert np.all(np.abs(binned.f - exact.f) <= binned.bias_bound)
        assert binned.bias_bound.max() <= 0.0716 * h ** 3
        np.testing.assert_allclose(binned.stderr, exact.stderr, rtol=1e-3, atol=1e-12)
    # weights matter: the weighted mean, not the plain one
    direct = np.array([(w * np.exp(-l * np.exp(z))).sum() / w.sum() for l in lags[:5]])
    np.testing.assert_allclose(exact.f[:5], direct, rtol=1e-13)


def test_samples_inverse_gamma():
    rng = np.random.default_rng(11)
    a, b = 0.56, 1.0
    tau = stats.invgamma(a, scale=b).rvs(size=300_000, random_state=rng)
    lags = np.array([1.0, 10.0, 100.0])
    r = envelope_samples(lags, -np.log(tau))
    assert np.all(np.abs(r.f - (1 + lags / b) ** (-a)) <= 4 * r.stderr)


def test_point_mass_samples():
    tau0 = 37.0
    lags = np.array([0.0, 1.0, 37.0, 500.0, 2e4])
    f = envelope(lags, zeta=np.full(10, -math.log(tau0)))
    np.testing.assert_allclose(f, np.exp(-lags / tau0), rtol=1e-13)
    assert f[-1] > 0                              # e^-540: tiny, not a silent zero


def test_samples_errors():
    with pytest.raises(ValueError, match="zeta"):
        envelope([1.0], zeta=[0.0, np.nan])
    with pytest.raises(ValueError, match="weights"):
        envelope([1.0], zeta=[0.0, 1.0], weights=[1.0])
    with pytest.raises(ValueError, match="weights"):
        envelope([1.0], zeta=[0.0, 1.0], weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="lags"):
        envelope([-1.0], zeta=[0.0])
    with pytest.raises(ValueError, match="exactly one"):
        envelope([1.0])
    with pytest.raises(ValueError, match="exactly one"):
        envelope([1.0], zeta=[0.0], tau_pdf=stats.expon.pdf)
    with pytest.raises(ValueError, match="weights"):
        envelope([1.0], weights=[1.0], tau_pdf=stats.expon.pdf)


def test_envelope_shape_and_f0():
    lags = np.array([[0.0, 1.0], [2.0, 3.0]])
    f = envelope(lags, zeta=[0.0, -1.0, 1.0])
    assert f.shape == (2, 2) and f[0, 0] == 1.0


@pytest.mark.slow
# ----------------------------------------------------------------------------- asymptotics

def test_asymptotic_ratio_tends_to_one():
    a, b = 0.56, 2.0
    A = b ** a / special.gamma(a)                   # p(tau) ~ A tau^(-1-a) for inverse gamma
    lags = np.array([1e2, 1e4, 1e6])
    f = envelope(lags, tau_pdf=stats.invgamma(a, scale=b).pdf)
    ratio = f / tauberian_prediction(lags, A=A, beta=a)
    err = np.abs(ratio - 1)
    assert np.all(np.diff(err) < 0) and err[-1] < 1e-5
    np.testing.assert_allclose(err, 1 - (1 + b / lags) ** (-a), rtol=1e-6)   # exact ratio
    # Pareto, several beta: ratio = P(beta, l) -> 1
    for beta in (0.3, 1.0, 2.5):
        f = envelope([1e3], tau_pdf=lambda t, beta=beta: np.where(t >= 1, beta * t ** (-1 - beta), 0.0))
        assert abs(f[0] / tauberian_prediction([1e3], A=beta, beta=beta)[0] - 1) < 1e-12


def test_prediction_from_phase():
    ph = classify(3.0)
    p = tauberian_prediction([10.0], A=2.0, phase=ph)
    b = 0.808357146473768
    assert p[0] == pytest.approx(2.0 * math.gamma(b) * 10.0 ** (-b), rel=1e-12)
    with pytest.raises(ValueError, match="phase"):
        tauberian_prediction([10.0], A=1.0, phase=classify(0.5))      # collapsed: no root
    with pytest.raises(ValueError, match="lags"):
        tauberian_prediction([0.0], A=1.0, beta=1.0)
    with pytest.raises(ValueError, match="A"):
        tauberian_prediction([1.0], A=-1.0, beta=1.0)


def test_tail_fit_pareto_and_exponential_tail():
    rng = np.random.default_rng(3)
    beta = 0.8
    z = pareto_zeta(rng, beta, 200_000)          # rho = beta e^(beta zeta): A = beta exactly
    t = tail_fit(z, u=1.0)
    assert abs(t.beta - beta) < 4 * t.se_beta
    assert abs(t.A - beta) < 4 * t.se_A
    assert t.se_beta == pytest.approx(t.beta / math.sqrt(t.k), rel=1e-12)
    # the iid SE is honest on iid data: jackknife over groups agrees within ~30%
    tj = tail_fit(z, u=1.0, groups=np.arange(z.size) % 20)
    assert tj.beta == t.beta and 0.6 < tj.se_beta / t.se_beta < 1.5
    # default threshold: the 5% tail of an asymmetric Laplace, A = 0.5 beta
    z2 = np.where(rng.uniform(size=200_000) < 0.5, -rng.exponential(1 / 1.3, 200_000),
                  rng.exponential(0.5, 200_000))
    t2 = tail_fit(z2)
    assert abs(t2.beta - 1.3) < 4 * t2.se_beta and abs(t2.A - 0.65) < 4 * t2.se_A
    # integer weights are repetitions
    zs = z[:5000]
    rep = np.arange(5000) % 3 + 1
    tw = tail_fit(zs, weights=rep.astype(float), u=0.5)
    tr = tail_fit(np.repeat(zs, rep), u=0.5)
    assert tw.beta == pytest.approx(tr.beta, rel=1e-12) and tw.A == pytest.approx(tr.A, rel=1e-12)
    with pytest.raises(ValueError, match="u"):
        tail_fit(z, u=40.0)
    with pytest.raises(ValueError, match="tail_fraction"):
        tail_fit(z, tail_fraction=1.5)


def test_slopes():
    lags = np.geomspace(1, 1e6, 61)
    f = 0.3 * lags ** -0.7
    np.testing.assert_allclose(local_slope(lags, f), -0.7, rtol=1e-12)
    s = fit_slope(lags, f)
    assert s.slope == pytest.approx(-0.7, rel=1e-12)
    assert s.lag_lo >= math.sqrt(lags[0] * lags[-1]) * 0.99     # upper half of the window
    # exponential: local slope is -l/tau
    np.testing.assert_allclose(local_slope(lags[:20], np.exp(-lags[:20] / 50)), -lags[:20] / 50, rtol=3e-2)
    with pytest.raises(ValueError, match="f"):
        local_slope(lags, np.zeros_like(lags))
    with pytest.raises(ValueError, match="lags"):
        fit_slope(lags[:3], f[:3])


# ----------------------------------------------------------------------------- decay classes

def _log_class_zeta(rng, gamma, n):
    """p(tau) = gamma / (tau (ln tau)^(1+gamma)) on tau >= e: ln tau = Y with Y Pareto(gamma)
    on [1, inf), so P(tau > l) = (ln l)^-gamma. Returned as zeta = -ln tau (no overflow)."""
    return -(rng.uniform(size=n) ** (-1.0 / gamma))


CLASS_CASES = ([("exponential", None, "uniform")]
               + [("polynomial", b, "pareto") for b in (0.3, 0.8, 1.5, 3.0)]
               + [("logarithmic", g, "log") for g in (0.5, 1.0, 2.0)])


@pytest.mark.parametrize("case", range(len(CLASS_CASES)))
def test_classifier_on_samples(case):
    expected, param, kind = CLASS_CASES[case]
    rng = np.random.default_rng(1000 + case)
    n = 1_000_000
    if kind == "uniform":
        z = -np.log(rng.uniform(0.5, 3.0, n))           # bounded time scales, tau_max = 3
    elif kind == "pareto":
        z = pareto_zeta(rng, param, n)
    else:
        z = _log_class_zeta(rng, param, n)
    lags = np.geomspace(0.1, 1e8, 300)
    r = envelope_samples(lags, z, errors=False)
    dc = classify_decay(lags, r.f, f_floor=100 / n)
    assert dc.name == expected, dc.candidates
    assert set(dc.candidates) == set(DECAY_CLASSES)
    c = dc.candidates[expected]
    assert c["rms"] == min(v["rms"] for v in dc.candidates.values())
    if kind == "uniform":
        assert 1.5 < c["param"] < 3.5                    # f ~ l^-1 e^(-l/3): tau_max up to the power
    elif kind == "pareto":
        assert abs(c["param"] - param) < 0.1 * param
    else:
        assert abs(c["param"] - param) < 0.1 * param


@pytest.mark.parametrize("beta", [0.3, 1.0, 3.0])
def test_classifier_on_closed_forms(beta):
    lags = np.geomspace(0.1, 1e8, 200)
    f = beta * lags ** (-beta) * special.gamma(beta) * special.gammainc(beta, lags)
    dc = classify_decay(lags, f, f_floor=1e-12)
    assert dc.name == "polynomial" and abs(dc.candidates["polynomial"]["param"] - beta) < 0.02 * beta
    dc = classify_decay(lags, np.exp(-lags / 7.0), f_floor=1e-300)
    assert dc.name == "exponential" and dc.candidates["exponential"]["param"] == pytest.approx(7.0, rel=1e-9)
    dc = classify_decay(lags, np.minimum(1.0, np.log(np.maximum(lags, 1.0001)) ** -beta))
    assert dc.name == "logarithmic" and dc.candidates["logarithmic"]["param"] == pytest.approx(beta, rel=1e-9)
    with pytest.raises(ValueError, match="lags"):
        classify_decay(lags[:5], f[:5])


# ----------------------------------------------------------------------------- CLI

def _cli(*args):
    return run_cli("envelope", *args)


def _fake_sim_run(path, beta=0.8, groups=8, n=20_000, seed=5):
    """A simulation-like run: asymmetric Laplace zeta with left tail 0.5 beta e^(beta zeta)."""
    rng = np.random.default_rng(seed)
    z = np.where(rng.uniform(size=(groups, n)) < 0.5, -rng.exponential(1 / beta, (groups, n)),
                 rng.exponential(0.3, (groups, n)))
    edges = np.linspace(-30, 5, 701)
    counts = np.stack([np.histogram(z[g], edges)[0] for g in range(groups)])
    meta = dict(kind="simulation", eta_j=3.0, eta_g=0.1, kappa=1.0, alpha=1.5, lam=2.0, dt=0.01,
                eps=0.05, beta_theory=beta)
    np.savez(path, hist_edges=edges, hist_counts=counts, final_zeta=z[:, -500:].ravel(),
             meta=np.array(json.dumps(meta)))


#: the RNN trainer's default lag grid: integer log grid 1 ... 1e4 (docs/rnn.md)
_RNN_LAGS = np.unique(np.round(np.geomspace(1, 1e4, 40)))


def _fake_rnn_run(path, seed=6, zeta=None):
    """An RNN run file as `levysde train` writes it (plain .npz): zeta, Lambda (records x H),
    the recorded ELR envelope sum_q Lambda_q e^(-l e^zeta_q) / sum_q Lambda_q on `lags`."""
    rng = np.random.default_rng(seed)
    if zeta is None:
        zeta = np.stack([pareto_zeta(rng, 0.5, 4096) - 1.0 for _ in range(3)])
    lam = rng.uniform(0.5, 1.5, zeta.shape)
    env = np.stack([(lam[r] * np.exp(-_RNN_LAGS[:, None] * np.exp(zeta[r]))).sum(1) / lam[r].sum()
                    for r in range(zeta.shape[0])])
    np.savez(path, zeta=zeta, zeta_jac=zeta, Lambda=lam, step=50 * np.arange(zeta.shape[0]),
             loss=np.ones(zeta.shape[0]), lags=_RNN_LAGS, envelope=env,
             config=np.array(json.dumps({"kind": "rnn", "model": "diaggate"})))
    return zeta[-1], lam[-1]


def test_cli_simulation_run(tmp_path):
    run = tmp_path / "sim.npz"
    _fake_sim_run(run)
    png = tmp_path / "env.png"
    p = _cli("--from", str(run), "--json", "--N", "1e3", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    for key in ("lags", "f", "decay_class", "slope", "beta_theory", "H_N"):
        assert key in out
    assert out["decay_class"] == "polynomial"
    assert out["beta_theory"] == 0.8
    assert abs(out["slope"] + 0.8) < 0.15 * 0.8
    assert out["slope_se_method"].startswith("jackknife") and out["slope_se"] > 0
    assert abs(out["slope"] + 0.8) < 5 * out["slope_se"] + 0.02
    assert png.stat().st_size > 1000
    # H_N agrees with the library on the same table
    from levysde.theory.learnability import learnability_window
    assert out["H_N"] == pytest.approx(learnability_window(1e3, lags=out["lags"], f=out["f"]), rel=1e-12)


def test_cli_rnn_run_weighted(tmp_path):
    run = tmp_path / "rnn.npz"
    zeta, lam = _fake_rnn_run(run)
    p = _cli("--from", str(run), "--json", "--lags", "1", "10", "100")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    direct = [(lam * np.exp(-l * np.exp(zeta))).sum() / lam.sum() for l in (1, 10, 100)]
    np.testing.assert_allclose(out["f"], direct, rtol=1e-12)
    assert out["kind"] == "rnn"
    p = _cli("--from", str(run), "--json", "--unweighted")
    out = json.loads(p.stdout)
    assert out["decay_class"] == "polynomial" and abs(out["slope"] + 0.5) < 0.1


def test_cli_model_prediction():
    p = _cli("--eta-j", "3", "--json", "--N", "100")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    b = 0.808357146473768
    assert out["beta_theory"] == pytest.approx(b, rel=1e-12)
    assert out["slope"] == pytest.approx(-b, rel=1e-12) and out["decay_class"] == "polynomial"
    l = np.asarray(out["lags"])
    # the asymptote A Gamma(b) l^-b is reported only where it is <= 1 (null below)
    l_star = math.gamma(b) ** (1 / b)
    assert out["asymptote_valid_from"] == pytest.approx(l_star, rel=1e-12)
    f = np.array([np.nan if v is None else v for v in out["f"]])
    assert np.all(np.isnan(f[l < l_star * (1 - 1e-12)])) and np.all(f[l > l_star * (1 + 1e-12)] <= 1)
    ok = ~np.isnan(f)
    assert ok.sum() >= len(l) - 5
    np.testing.assert_allclose(f[ok], math.gamma(b) * l[ok] ** (-b), rtol=1e-12)
    # H_N of f = Gamma(b) l^-b with f* = N^-1/2
    assert out["H_N"] == pytest.approx((math.gamma(b) * 10.0) ** (1 / b), rel=1e-9)
    out = json.loads(_cli("--eta-j", "3", "--lam", "0", "--json").stdout)
    assert out["decay_class"] == "logarithmic" and out["beta_theory"] is None


@pytest.mark.parametrize("args,needle", [
    ((), "--from"),
    (("--eta-j", "3", "--from", "x.npz"), "exclude"),
    (("--from", "/nonexistent/run.npz"), "no such file"),
    (("--eta-j", "3", "--alpha-g", "1"), "alpha-g"),
    (("--eta-j", "3", "--alpha-g", "2.5"), "alpha-g"),
    (("--eta-j", "3", "--lag-min", "10", "--lag-max", "5"), "lag-max"),
    (("--eta-j", "-1"), "eta-j"),
    (("--eta-j", "3", "--lags", "0"), "lags"),
    (("--eta-j", "3", "--n-samples", "10"), "n-samples"),
])
def test_cli_bad_input(args, needle):
    p = _cli(*args)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and needle in p.stderr and "Traceback" not in p.stderr


def test_cli_corrupt_files(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    nometa = tmp_path / "nometa.npz"
    np.savez(nometa, zeta=np.zeros((2, 3)))
    kind = tmp_path / "kind.npz"
    np.savez(kind, zeta=np.zeros((2, 3)), config=np.array(json.dumps({"kind": "other"})))
    for path, needle in ((bad, "not a valid .npz"), (nometa, "meta"), (kind, "kind")):
        p = _cli("--from", str(path))
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and needle in p.stderr, p.stderr


def test_cli_simulation_outside_mass_and_excursions(tmp_path):
    # half the mass in-range as a point-like bin at zeta = 0, half below the range at
    # zeta = -40 (hist_outside): f(l) = 0.5 e^-l + 0.5 exp(-l e^-40)
    edges = np.array([-30.0, -1e-7, 1e-7, 5.0])
    counts = np.array([[0.0, 2.0, 0.0], [0.0, 2.0, 0.0]])
    outside = np.array([[2.0, -80.0, 0.0, 0.0], [2.0, -80.0, 0.0, 0.0]])
    exc = np.zeros_like(counts)
    exc[:, 0] = 60.0                                     # 120 excursions below -1e-7
    run = tmp_path / "sim_out.npz"
    np.savez(run, hist_edges=edges, hist_counts=counts, hist_outside=outside, excursion_counts=exc,
             final_zeta=np.zeros(4), meta=np.array(json.dumps({"kind": "simulation", "beta_theory": None})))
    p = _cli("--from", str(run), "--json", "--lags", "0.5", "3", "1e3", "1e17")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    l = np.array([0.5, 3.0, 1e3, 1e17])
    np.testing.assert_allclose(out["f"], 0.5 * np.exp(-l) + 0.5 * np.exp(-l * math.exp(-40.0)), rtol=1e-9)
    assert out["outside_mass_fraction"] == pytest.approx(0.5)
    assert "excursions" in out["f_floor_reason"]


@pytest.mark.slow
def test_cli_real_simulation_slope_within_15pct(tmp_path):
    """Done-when check of issue 4 on a real anti-collapse simulation (runs once the
    simulator module is merged; skipped before)."""
    sim = pytest.importorskip("levysde.simulation")
    res = sim.simulate(3.0, particles=4096, t_end=250.0, burn_in=50.0, seed=1)
    path = tmp_path / "run.npz"
    res.save(path)
    out = json.loads(_cli("--from", str(path), "--json").stdout)
    b = 0.808357146473768
    assert out["beta_theory"] == pytest.approx(b, rel=1e-9)
    assert out["decay_class"] == "polynomial"
    assert abs(out["slope"] + b) < 0.15 * b


# ----------------------------------------------------------------------------- CLI: tester's defects

def _one_line_error(p, needle):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.count("\n") == 1 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("name", ["plain.npy", "plain.npz"])
def test_cli_plain_npy_array(tmp_path, name):
    # a valid np.save file, also when renamed .npz, is not a run: one line, exit 2
    path = tmp_path / "plain.npy"
    np.save(path, np.arange(5.0))
    if name.endswith(".npz"):
        path = path.rename(tmp_path / name)
    _one_line_error(_cli("--from", str(path)), "plain .npy")


def test_cli_rnn_run_defaults_exact_envelope(tmp_path):
    run = tmp_path / "rnn.npz"
    zeta, lam = _fake_rnn_run(run)
    p = _cli("--from", str(run), "--json", "--N", "1e3")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    # the run's own lags (up to 1e4) and its recorded (exact) ELR envelope of the last record
    np.testing.assert_array_equal(out["lags"], _RNN_LAGS)
    direct = (lam * np.exp(-_RNN_LAGS[:, None] * np.exp(zeta))).sum(1) / lam.sum()
    np.testing.assert_allclose(out["f"], direct, rtol=1e-12)
    assert "recorded" in out["source"] and "f_stderr" not in out
    # no Monte-Carlo floor: only the numerical one
    assert out["f_floor"] == 1e-12
    assert out["decay_class"] == "polynomial" and abs(out["slope"] + 0.5) < 0.1
    from levysde.theory.learnability import learnability_window
    assert out["H_N"] == pytest.approx(learnability_window(1e3, lags=_RNN_LAGS, f=direct), rel=1e-9)
    # an explicit grid is computed exactly from zeta and Lambda
    out = json.loads(_cli("--from", str(run), "--json", "--lag-max", "100", "--n-lags", "7").stdout)
    l = np.geomspace(1, 100, 7)
    np.testing.assert_allclose(out["f"], (lam * np.exp(-l[:, None] * np.exp(zeta))).sum(1) / lam.sum(),
                               rtol=1e-12)


def test_cli_rnn_run_bounded_time_scales_is_exponential(tmp_path):
    # a DiagGate-like 64-neuron spectrum after training: time scales 0.7 ... 24 steps
    rng = np.random.default_rng(3)
    zeta = rng.uniform(-3.2, 0.35, size=(4, 64))
    run = tmp_path / "diag.npz"
    _fake_rnn_run(run, zeta=zeta)
    out = json.loads(_cli("--from", str(run), "--json", "--N", "1e6").stdout)
    # issue 11: lags stop at the 10th longest time scale, where >= 10 neurons still carry f(l)
    # (beyond it any fit reads "exponential" by construction); the run's lags reach 1e4
    tau_10 = np.exp(-np.sort(zeta[-1])[9])
    assert out["lag_max"] == pytest.approx(tau_10, rel=1e-12) and tau_10 < 0.6 * np.exp(3.2)
    assert max(out["lags"]) <= tau_10 and len(out["lags"]) >= 4
    assert out["decay_class"] in ("exponential", "polynomial", "logarithmic")


@pytest.mark.parametrize("extra,needle", [(("--source", "hist"), "--source"),
                                          (("--source", "samples"), "--source"),
                                          (("--n-samples", "10"), "--n-samples")])
def test_cli_rnn_run_rejects_simulation_options(tmp_path, extra, needle):
    run = tmp_path / "rnn.npz"
    _fake_rnn_run(run)
    _one_line_error(_cli("--from", str(run), *extra), needle)


def test_cli_model_asymptote_never_above_one():
    # eta_J = 0: f ~ Gamma(10) l^-10 is 362880 at l = 1; reported only where <= 1
    out = json.loads(_cli("--eta-j", "0", "--lags", "1", "2", "4", "8", "--N", "10", "--json").stdout)
    l_star = math.gamma(10.0) ** 0.1
    assert out["asymptote_valid_from"] == pytest.approx(l_star, rel=1e-12)
    assert out["f"][:2] == [None, None]
    np.testing.assert_allclose(out["f"][2:], math.gamma(10.0) * np.array([4.0, 8.0]) ** -10.0, rtol=1e-12)
    # H_N from the asymptote where it is <= 1: f(H_N) = N^(-1/2)
    assert out["H_N"] == pytest.approx((math.gamma(10.0) * math.sqrt(10.0)) ** 0.1, rel=1e-9)
    assert out["H_N"] >= l_star
    # N < C: nothing learnable, not an H_N from values > 1
    out = json.loads(_cli("--eta-j", "0", "--N", "0.5", "--json").stdout)
    assert out["H_N"] == 0.0
    for args in (("--eta-j", "3"), ("--eta-j", "0.5"), ("--eta-j", "3", "--lam", "0"), ("--eta-j", "0")):
        out = json.loads(_cli(*args, "--lags", "0.5", "1", "2", "10", "1e3", "1e6", "--json").stdout)
        f = [v for v in out["f"] if v is not None]
        assert f and all(0 <= v <= 1 for v in f), (args, out["f"])


def test_cli_model_tempering_limited_includes_log_factor():
    # eta_J = 0.5 (collapsed, tempering-limited): f ~ A Gamma(lam) l^-lam (ln l)^-(1+alpha)
    out = json.loads(_cli("--eta-j", "0.5", "--lags", "10", "100", "1e4", "--json").stdout)
    assert out["phase"] == "collapsed" and out["tail_rate"] == 2.0
    l = np.array([10.0, 100.0, 1e4])
    np.testing.assert_allclose(out["f"], math.gamma(2.0) * l ** -2.0 * np.log(l) ** -2.5, rtol=1e-12)
    assert "(ln l)^-(1+alpha)" in out["form"] and "included" in out["note"]


def test_cli_plot_paths(tmp_path):
    run = tmp_path / "rnn.npz"
    _fake_rnn_run(run)
    # a directory: one line naming --plot, exit 2, nothing written next to it
    d = tmp_path / "plots"
    d.mkdir()
    _one_line_error(_cli("--from", str(run), "--plot", str(d)), "--plot")
    assert not (tmp_path / "plots.png").exists()
    _one_line_error(_cli("--from", str(run), "--plot", str(tmp_path / "nodir" / "x.png")), "--plot")
    # no suffix: .png appended and reported; on stderr with --json (stdout stays JSON)
    p = _cli("--from", str(run), "--plot", str(tmp_path / "env"), "--json")
    assert p.returncode == 0, p.stderr
    json.loads(p.stdout)
    assert str(tmp_path / "env.png") in p.stderr and (tmp_path / "env.png").stat().st_size > 1000
    p = _cli("--from", str(run), "--plot", str(tmp_path / "e2.png"))
    assert p.returncode == 0 and str(tmp_path / "e2.png") in p.stdout and p.stderr == ""


def test_plot_envelope_clips_underflowing_envelope(tmp_path):
    from levysde.plotting import plot_envelope

    lags = np.geomspace(1, 1e4, 40)
    f = np.exp(-lags / 20.0)                          # down to 1e-218
    path = plot_envelope(lags, f, tmp_path / "x.png", slope=-3.0, slope_window=(20.0, 400.0))
    assert path == str(tmp_path / "x.png") and (tmp_path / "x.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="directory"):
        plot_envelope(lags, f, tmp_path)


def test_cli_output_to_closed_pipe(tmp_path):
    # `levysde envelope ... | head -1`: no BrokenPipeError traceback
    p = subprocess.Popen([sys.executable, "-m", "levysde", "envelope", "--eta-j", "3", "--n-lags", "20000",
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0 and "Traceback" not in err and "BrokenPipe" not in err, err
