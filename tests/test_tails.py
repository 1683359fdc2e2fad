"""Tail estimators (docs/specification.md §8) on samples with known laws, and the simulated
stationary tails against beta* (docs/specification.md §4, §7)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from levysde import simulation as S
from levysde.stats import tails as T
from levysde.theory.phases import beta_star
from tests.helpers import run_cli

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


# --- simulated stationary tails vs theory (defaults, docs/specification.md §4, §7) ---------------------------

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


# --- issue 14.3: a tail that is not a power law is flagged ---------------------------------------

def test_exponential_tau_is_flagged_not_a_power_law():
    # tau ~ Exp(1): X = log tau has P(X > x) = exp(-e^x), rates climb with the threshold
    rng = np.random.default_rng(5)
    x = np.log(rng.exponential(1.0, size=(10, 20_000)))
    for u in (-1.0, 0.0, 0.5, 1.0):
        est = T.tail_from_samples(x, u)
        # the true local rate at u is e^u: the deeper estimate is larger by many errors
        assert est.power_law is False and est.z_check > 10, (u, est)
        assert est.beta_check > est.beta_hat
        assert "not a power law" in T.power_law_note(est)
    fit = T.tail_fit(-x.ravel(), u=0.0)                    # iid path: single-sample jackknife
    assert fit.power_law is False and "not a power law" in T.power_law_note(fit)


def test_true_power_law_passes_and_the_check_is_calibrated():
    # exponential X (Pareto tau): z_check ~ t with 9 dof (sd sqrt(9/7) = 1.134); 400 fixed-seed
    # replicates: no flag expected at the 0.27% level (P(>= 3 flags) < 1e-3 for a Binomial(400, 0.0027))
    rng = np.random.default_rng(11)
    z, flags = [], 0
    for _ in range(400):
        est = T.tail_from_samples(rng.exponential(1 / 0.8, size=(10, 2000)), 1.0)
        assert est.power_law is not None
        z.append(est.z_check)
        flags += est.power_law is False
    z = np.asarray(z)
    assert flags <= 2
    assert abs(z.mean()) < 4 * 1.134 / math.sqrt(z.size)
    # sd of the sample sd of 400 draws of a t_9: about 1.134 * 0.05
    assert abs(z.std() - 1.134) < 4 * 0.06
    # the iid path of tail_fit: z ~ N(0, 1)
    zi = [T.tail_fit(-rng.exponential(1 / 0.8, size=20_000), u=1.0).z_check for _ in range(100)]
    assert abs(np.std(zi) - 1.0) < 4 * 0.071 and abs(np.mean(zi)) < 4 / math.sqrt(100)


def test_check_on_histograms_and_untestable_cases():
    rng = np.random.default_rng(2)
    G = 10
    edges = np.linspace(-12.0, 4.0, 321)
    for zeta, flagged in ((-rng.exponential(1 / 0.8, size=(G, 20_000)), False),
                          (-np.log(rng.exponential(1.0, size=(G, 20_000))), True)):
        counts = np.stack([np.histogram(z, edges)[0] for z in zeta]).astype(float)
        sums = np.stack([np.histogram(z, edges, weights=z)[0] for z in zeta])
        est = T.tail_from_histogram(edges, counts, sums, 0.5)
        assert est.power_law is (not flagged), est
        scan = T.threshold_scan(edges, counts, sums, [0.0, 0.5, 1.0])
        assert all(e.power_law is (not flagged) for e in scan)
    # two groups: no t-quantile worth testing with; too few exceedances beyond u2: untestable
    x = rng.exponential(1.0, size=(2, 1000))
    assert T.tail_from_samples(x, 1.0).power_law is None
    x = rng.exponential(1.0, size=(10, 30))
    assert T.tail_from_samples(x, 3.0).power_law is None and T.power_law_note(T.tail_from_samples(x, 3.0)) is None


def test_hill_index_of_pareto_sizes_is_the_one_hill_estimator():
    rng = np.random.default_rng(4)
    sizes = 0.1 * rng.uniform(size=50_000) ** (-1 / 1.5)         # Pareto index 1.5 above 0.1
    scan = T.hill_index(sizes, 0.1)
    for u, a, se, k in scan:
        assert abs(a - 1.5) < 4 * se and k == np.count_nonzero(sizes > u)
        assert a == pytest.approx(T.hill_rate(np.log(sizes), math.log(u)), rel=1e-15)
    # weighted Hill: integer weights are repetitions
    x = rng.exponential(1.0, 1000)
    rep = np.arange(1000) % 3 + 1
    assert T.hill_rate(x, 0.5, rep.astype(float)) == pytest.approx(T.hill_rate(np.repeat(x, rep), 0.5), rel=1e-12)


def _envelope_cli(*args):
    return run_cli("envelope", *args)


def test_envelope_cli_says_not_a_power_law(tmp_path):
    # a simulation-like run whose zeta = -log tau with tau ~ Exp(1) (no power law), and one with
    # an exponential left tail of zeta (a power law of tau): only the first gets the note
    import json
    rng = np.random.default_rng(3)
    edges = np.linspace(-30.0, 6.0, 1441)          # the whole sample range: no mass outside
    for name, zeta, flagged in (("exp", -np.log(rng.exponential(1.0, size=(8, 20_000))), True),
                                ("pareto", -rng.exponential(1 / 0.8, size=(8, 20_000)) + 1.0, False)):
        counts = np.stack([np.histogram(z, edges)[0] for z in zeta]).astype(float)
        sums = np.stack([np.histogram(z, edges, weights=z)[0] for z in zeta])
        run = tmp_path / f"{name}.npz"
        np.savez(run, hist_edges=edges, hist_counts=counts, hist_sums=sums, final_zeta=zeta.ravel(),
                 meta=np.array(json.dumps({"kind": "simulation", "beta_theory": None})))
        for src in ("hist", "samples"):
            p = _envelope_cli("--from", str(run), "--source", src, "--lags", "1", "10", "100")
            assert p.returncode == 0, p.stderr
            assert ("not a power law" in p.stdout) is flagged, (name, src, p.stdout)


def test_check_tail_line_says_not_a_power_law():
    # levysde check: the tail line's flag carries the note (late zeta, records x neurons)
    from levysde.inference.check import _beta_tail

    rng = np.random.default_rng(8)
    bad, _ = _beta_tail(-np.log(rng.exponential(1.0, size=(200, 400))), 8)
    assert "not a power law" in bad.flag, bad
    good, _ = _beta_tail(-rng.exponential(1 / 0.8, size=(200, 400)), 8)
    assert "not a power law" not in good.flag and abs(good.value - 0.8) < 4 * good.se, good


@pytest.mark.parametrize("kw, name", [
    (dict(u=np.nan), "u"), (dict(u=np.inf), "u"), (dict(u=True), "u"), (dict(u="1"), "u"),
    (dict(u=1.0, groups=np.r_[np.zeros(50), np.full(50, 0.5)]), "groups"),
    (dict(u=1.0, groups=["a"] * 100), "groups"), (dict(u=1.0, groups=[True, False] * 50), "groups"),
])
def test_tail_from_samples_refuses_bad_u_and_groups(kw, name):
    x = np.random.default_rng(0).exponential(size=100)
    with pytest.raises(ValueError, match=f"^{name} must"):
        T.tail_from_samples(x if "groups" in kw else x.reshape(4, 25), **kw)
