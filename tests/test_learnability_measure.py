"""The learnability measurement against known truth: the SaS fit on scipy samples, the SNR rule and
H_N against their closed forms, the master law on a synthetic matched statistic with an exactly
known mean and alpha-stable noise, and the false-detection rate against its closed form."""
import math

import numpy as np
import pytest
from scipy.stats import levy_stable, norm

from levysde.inference.learnability_measure import (
    N_GRID,
    empirical_window,
    false_detection_probability,
    master_slope,
    measure_learnability,
    required_n,
    required_n_continuous,
    snr,
)
from levysde.stats.stable_fit import ECF_POINTS, ecf_grid, ecf_points, ecf_sums, fit_from_sums, robust_half_iqr  # noqa: F401


def synthetic(lags, m, alpha, S, n, seed, f=None, sigma=1.0):
    """Per-sequence sums of psi = m(l) + sigma Z, Z i.i.d. standard SaS from scipy."""
    rng = np.random.default_rng(seed)
    L, K = len(lags), ECF_POINTS
    out = dict(lags=np.asarray(lags, float), count=np.zeros((L, S)), total=np.zeros((L, S)), t=np.zeros((L, K)),
               cos=np.zeros((L, S, K)), sin=np.zeros((L, S, K)), envelope=np.ones((L, S)))
    for i in range(L):
        x = m[i] + sigma * levy_stable.rvs(alpha, 0.0, size=(S, n), random_state=rng)
        out["t"][i] = ecf_grid(robust_half_iqr(x[:8]))
        out["count"][i], out["cos"][i], out["sin"][i] = ecf_sums(x, out["t"][i])
        out["total"][i] = x.sum(1)
        if f is not None:
            out["envelope"][i] = f[i]
    return out


@pytest.mark.parametrize("alpha", [1.2, 1.5, 1.8, 2.0])
def test_sas_fit_recovers_scipy_parameters(alpha):
    x = levy_stable.rvs(alpha, 0.0, loc=0.7, scale=2.0, size=(40, 1000), random_state=int(alpha * 10))
    t = ecf_grid(robust_half_iqr(x))
    n, c, s = ecf_sums(x, t)
    w = ecf_points(n.sum(), c.sum(0), s.sum(0), t)
    a, sig = fit_from_sums(n.sum(), c.sum(0), s.sum(0), t, w)
    # sd over replicates measured at n = 40000: 0.013 (alpha), 0.02 (sigma); 4 sd
    assert abs(a - alpha) < 0.06
    assert abs(sig - 2.0) < 0.08


def test_sas_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="scale"):
        ecf_grid(0.0)
    with pytest.raises(ValueError, match="2-d"):
        ecf_sums(np.zeros(10), ecf_grid(1.0))
    with pytest.raises(ValueError, match="degenerate"):
        robust_half_iqr(np.zeros(50))


def test_snr_rule_closed_form():
    """N(l) is the first grid point above N* = (eps sigma / m)^kappa (exact inputs)."""
    m = np.array([0.5, 0.05, 0.01, 0.002, 1e-6])
    sigma, alpha, eps = 2.0, 1.5, 0.1
    n_star = required_n_continuous(m, sigma, alpha, eps)
    assert np.allclose(n_star, (eps * sigma / m) ** 3.0, rtol=1e-12)
    grid = np.asarray(N_GRID, float)
    idx = np.searchsorted(grid, n_star, side="right")
    want = np.where(idx < grid.size, grid[np.minimum(idx, grid.size - 1)], np.nan)
    got = required_n(m, sigma, alpha, N_GRID, eps)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.allclose(got[~np.isnan(got)], want[~np.isnan(want)])
    # SNR grows like N^(1 - 1/alpha)
    s = snr(0.01, sigma, alpha, np.array([100.0, 800.0]))
    assert s[1] / s[0] == pytest.approx(8.0 ** (1 / 3), rel=1e-12)
    assert snr(0.01, sigma, 2.5, 100.0) == pytest.approx(0.01 * 10 / sigma)   # alpha clipped to 2


def test_window_closed_form_exponential_envelope():
    """f = exp(-l/tau), N(l) = C f^-kappa exactly: H_N = the largest lag <= (tau/kappa) ln(N/C)."""
    lags = np.arange(1.0, 400.0)
    tau, k, C = 40.0, 2.0, 10.0
    n_req = C * np.exp(lags / tau) ** k
    N = np.array([5.0, 100.0, 1e4, 1e6])
    H = empirical_window(lags, n_req, N)
    bound = tau / k * np.log(N / C)
    want = np.where(bound >= 1, np.floor(bound), 0.0)
    assert np.array_equal(H, want)
    b, a, r2 = master_slope(-k * np.log(np.exp(-lags / tau)), np.log(n_req))
    assert b == pytest.approx(1.0, abs=1e-12) and a == pytest.approx(math.log(C), abs=1e-10) and r2 == 1.0


def test_master_law_on_synthetic_matched_statistic():
    """m(l) = c exp(-l/60), SaS noise alpha = 1.5: alpha, sigma, m and N*(l) agree with the truth
    within their errors, the master-law slope's interval holds 1, f is classified exponential
    and the predicted H_N follows (tau/kappa) ln(N/C)."""
    lags = np.arange(4.0, 130.0, 6.0)
    tau, alpha, c, eps = 60.0, 1.5, 0.6, 1.0
    f = np.exp(-lags / tau)
    m = c * f
    grid = 2.0 ** np.arange(0, 16)
    r = measure_learnability(synthetic(lags, m, alpha, 48, 1500, 3, f=f), N_grid=grid, eps=eps, n_boot=300)
    assert np.mean(np.abs(r.alpha - alpha) <= 3 * r.alpha_se) >= 0.9
    assert np.mean(np.abs(r.sigma - 1.0) <= 3 * r.sigma_se) >= 0.9
    assert np.mean(np.abs(r.mean - m) <= 3 * r.mean_se) >= 0.9
    n_star = (eps / m) ** 3.0
    lo, hi = r.n_star_interval[:, 0], r.n_star_interval[:, 1]
    assert np.mean((lo <= n_star) & (n_star <= hi)) >= 0.7            # 90 % intervals
    mc = r.master["continuous"]
    assert mc["n_lags"] >= 8 and mc["consistent_with_1"] is True
    assert abs(mc["slope"] - 1.0) < 3 * mc["slope_se"]
    d = r.decay
    assert d["f_class"] == "exponential" and d["H_N_growth"] == "logarithmic"
    assert d["fit"]["candidates"]["exponential"]["param"] == pytest.approx(tau, rel=1e-9)
    pred = np.array(d["prediction"]["H_N_predicted"])
    truth = tau / 3.0 * np.log(grid / (eps / c) ** 3.0)
    big = truth > 20
    assert np.allclose(pred[big], truth[big], rtol=0.1)


def test_no_signal_lags_are_not_significant_and_false_detection_matches_closed_form():
    """Lags with m = 0: the rule's detection rate within the grid matches
    2 (1 - F_alpha(eps (n/N_max)^(1-1/alpha))); the mean is rarely significant."""
    lags = np.arange(1.0, 81.0)
    alpha, S, n, N_max = 1.5, 16, 400, 64.0
    r = measure_learnability(synthetic(lags, np.zeros(lags.size), alpha, S, n, 11), N_grid=[N_max], eps=0.1,
                             n_boot=100)
    p = float(false_detection_probability(S * n, alpha, N_max=N_max, eps=0.1))
    rate = np.mean(np.isfinite(r.n_required))
    assert abs(rate - p) < 3 * math.sqrt(p * (1 - p) / lags.size)
    assert np.mean(r.significant) < 0.15                              # ~5 % expected at 2 SE
    assert np.all(r.H_N_star == 0) or np.mean(r.significant) > 0


def test_false_detection_gaussian_closed_form():
    # alpha = 2: Z ~ N(0, 2); P(|Z| > z) = 2 (1 - Phi(z / sqrt 2))
    z = 0.1 * (7.2e6 / 12800) ** 0.5
    assert float(false_detection_probability(7.2e6, 2.0)) == pytest.approx(2 * norm.sf(z / math.sqrt(2)), rel=1e-6)


def test_measure_rejects_too_few_sequences():
    d = synthetic(np.arange(1.0, 6.0), np.zeros(5), 1.5, 4, 100, 0)
    with pytest.raises(ValueError, match="8 are needed"):
        measure_learnability(d)


def test_calibration_benchmark_quick():
    """benchmarks/calibrate_learnability.py --quick runs and its coverage figures are sane."""
    import json
    import subprocess
    import sys

    from tests.helpers import ROOT, env

    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "calibrate_learnability.py"), "--quick", "--json"],
                       capture_output=True, text=True, timeout=600, env=env())
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    for k in ("alpha", "sigma", "mean"):
        assert 0.85 <= d["coverage_2se"][k] <= 1.0, (k, d["coverage_2se"])   # 168 lag estimates, goal 0.95
    assert d["n_slopes"] >= 8 and abs(d["slope_mean"] - 1) < 0.25
    assert abs(d["false_detection_rate"] - d["false_detection_theory"]) < 3 * d["false_detection_se"]


def test_learnability_file_round_trip_and_refusals(tmp_path):
    from levysde.io.learnfile import learnability_path, read_learnability, save_learnability

    d = synthetic(np.arange(1.0, 6.0), np.zeros(5), 1.5, 8, 50, 0)
    path = learnability_path(str(tmp_path / "run.npz"))
    assert path.endswith("run.learnability.npz")
    save_learnability(path, d, {"source": {"run": "run.npz"}})
    sums, meta = read_learnability(path)
    assert meta["kind"] == "learnability" and meta["source"]["run"] == "run.npz"
    for k, v in d.items():
        np.testing.assert_array_equal(sums[k], v)
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="other.npz"):
        read_learnability(str(tmp_path / "other.npz"))
    with pytest.raises(ValueError, match="lack"):
        save_learnability(str(tmp_path / "x.npz"), {"lags": d["lags"]}, {})
