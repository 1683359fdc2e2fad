"""Tail estimators (THEORY.md §8) on samples with known laws, and the simulated
stationary tails against beta* (THEORY.md §4, §7)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from levysde import simulation as S
from levysde import tails as T
from levysde.theory import beta_star


# --- estimators on exact samples ---------------------------------------------------------------

def test_hill_on_exponential_samples_and_jackknife_error():
    rng = np.random.default_rng(0)
    beta, u, G = 0.8, 2.0, 40
    x = rng.exponential(1 / beta, size=(G, 5000))            # iid: jackknife ~ beta/sqrt(k)
    est = T.tail_from_samples(x, u)
    assert abs(est.beta_hat - beta) < 4 * est.se
    k = est.n_exceed
    assert est.se == pytest.approx(beta / math.sqrt(k), rel=0.3)
    assert T.hill_rate(x, u) == pytest.approx(est.beta_hat, rel=1e-14)
    labels = np.repeat(np.arange(G), 5000)
    est2 = T.tail_from_samples(x.ravel(), u, groups=labels)
    assert est2.beta_hat == pytest.approx(est.beta_hat, rel=1e-14)
    assert est2.se == pytest.approx(est.se, rel=1e-10)
    with pytest.raises(ValueError):
        T.hill_rate(x, 1e3)


def test_histogram_estimate_exact_at_edges():
    """With per-bin sums the histogram estimate equals the sample estimate at bin edges."""
    rng = np.random.default_rng(1)
    G = 10
    zeta = -rng.gamma(2.0, 1.0, size=(G, 20_000)) + 1.0   # X = -zeta
    edges = np.linspace(-8.0, 3.0, 221)
    counts = np.stack([np.histogram(z, edges)[0] for z in zeta]).astype(float)
    sums = np.stack([np.histogram(z, edges, weights=z)[0] for z in zeta])
    below = zeta < edges[0]
    outside = np.stack([below.sum(1), np.where(below, zeta, 0).sum(1), np.zeros(G), np.zeros(G)], axis=1)
    for u in (0.5, 2.0, 4.0):
        h = T.tail_from_histogram(edges, counts, sums, u, outside=outside)
        s = T.tail_from_samples(-zeta, u)
        assert h.u == pytest.approx(u, abs=1e-12)
        assert h.beta_hat == pytest.approx(s.beta_hat, rel=1e-10)
        assert h.se == pytest.approx(s.se, rel=1e-8)
        assert h.n_exceed == s.n_exceed
    # without sums: midpoint approximation, close but not exact
    h = T.tail_from_histogram(edges, counts, None, 2.0, outside=outside)
    s = T.tail_from_samples(-zeta, 2.0)
    assert h.beta_hat == pytest.approx(s.beta_hat, rel=1e-3)
    assert h.beta_hat != s.beta_hat


def _sample_tempered(rng, n, b, alpha, u):
    """Exact draws of X > u with density ~ exp(-b x) x^(-1-alpha): exponential proposal,
    accept with (x/u)^(-1-alpha)."""
    out = []
    while sum(len(o) for o in out) < n:
        x = u + rng.exponential(1 / b, size=2 * n)
        out.append(x[rng.random(2 * n) < (x / u) ** (-1 - alpha)])
    return np.concatenate(out)[:n]


def test_tempered_fit_recovers_rate():
    rng = np.random.default_rng(2)
    b, alpha, u, G = 2.0, 1.5, 1.0, 20
    x = _sample_tempered(rng, G * 3000, b, alpha, u).reshape(G, -1)
    edges = -np.linspace(12.0, 0.0, 1201)[::1]              # zeta edges, X = -zeta in [0, 12]
    counts = np.stack([np.histogram(-xi, edges)[0] for xi in x]).astype(float)
    fit = T.tempered_fit(edges, counts, u, alpha=alpha, x0=0.0)
    assert abs(fit.b - b) < 4 * fit.se
    assert fit.se < 0.1
    # the pure exponential rate of the same data is larger (the power-law factor)
    assert T.tail_from_samples(x, u).beta_hat > b + 0.5
    with pytest.raises(ValueError, match="x0"):
        T.tempered_fit(edges, counts, 0.0, alpha=alpha, x0=0.0)


# --- simulated stationary tails vs theory (defaults, THEORY.md §4, §7) ---------------------------

@pytest.mark.parametrize("eta_j,u", [(3.0, 3.0), (1.5, 2.0)])
def test_simulated_tail_matches_beta_star(eta_j, u):
    res = S.simulate(eta_j, particles=4096, t_end=250.0, burn_in=25.0, seed=11)
    bs = float(beta_star(eta_j))
    est = res.tail(u)
    assert est.u == pytest.approx(u)
    assert abs(est.beta_hat - bs) < 3 * est.se, (est, bs)
    assert abs(est.beta_hat / bs - 1) < 0.05
    assert est.n_excursions > 1000
    assert res.meta["beta_model"] == pytest.approx(bs, rel=1e-3)
    assert np.all(np.isfinite(res.hist_counts))


def test_collapsed_tempering_limited_tail():
    res = S.simulate(0.5, particles=4096, t_end=250.0, burn_in=25.0, seed=12)
    assert res.meta["phase"] == "collapsed" and res.meta["beta_theory"] is None
    lam = res.meta["lam"]
    fit = T.tempered_fit_result(res, 2.0)
    assert abs(fit.b / lam - 1) < 0.10, fit
    pure = res.tail(2.0)
    assert pure.beta_hat > lam + 2 * pure.se


def test_threshold_scan_drops_thin_thresholds():
    rng = np.random.default_rng(4)
    zeta = -rng.exponential(1.0, size=(8, 4000))
    edges = np.linspace(-30.0, 1.0, 311)
    counts = np.stack([np.histogram(z, edges)[0] for z in zeta]).astype(float)
    sums = np.stack([np.histogram(z, edges, weights=z)[0] for z in zeta])
    exc = counts.copy()                      # every sample its own excursion (iid)
    scan = T.threshold_scan(edges, counts, sums, np.arange(0.5, 20.0, 0.5), excursions=exc,
                            min_excursions=20)
    assert scan and all(e.n_excursions >= 20 for e in scan)
    assert max(e.u for e in scan) < 8.0      # P(X > 8) * 32000 ~ 11 < 20
    for e in scan:
        assert abs(e.beta_hat - 1.0) < 4 * e.se + 0.02
