"""Validation of the learnability measurement (:func:`levysde.inference.learnability_measure.measure_learnability`)
on synthetic matched statistics with known truth.

The samples are not from levysde: ``psi = m(l) + sigma * MA(Z)`` with Z i.i.d. standard symmetric
alpha-stable from ``scipy.stats.levy_stable`` and a moving average inside each sequence
(weights ``w_j``, so the marginal stays alpha-stable with scale ``sigma (sum |w_j|^alpha)^(1/alpha)``,
normalised to sigma), i.e. correlated samples within a sequence as in a trained network.
The signal is ``m(l) = c f(l)`` with a known envelope f (exponential or power law), so
``N*(l) = (eps sigma / m)^kappa`` and the master-law slope (1) are exact.

Reported (``--json``):

* coverage of the 2-SE intervals of alpha, sigma and the mean (bootstrap over sequences) per lag,
  pooled over datasets (nominal ~0.95);
* coverage of the 90 % percentile interval of the master-law slope on N*(l) (truth 1; nominal ~0.9),
  the mean slope and its spread;
* the SNR rule's false-detection rate on lags without signal (m = 0) against the closed form
  :func:`false_detection_probability` (i.i.d. samples, MA = 1), with its binomial error.

    python benchmarks/calibrate_learnability.py [--quick] [--json] [--seed 2026]

``--quick``: 12 datasets and 200 null lags (about 20 s on one core); the full study: 60 datasets,
1000 null lags (``LEVYSDE_CALIB_SETS`` overrides the number of datasets).

Measured (2026-12-01, seed 2026, 60 datasets): 2-SE coverage alpha 0.95, sigma 0.94, mean 0.96
(840 lag estimates); master-law slope on N*(l) mean 0.99, sd 0.13, 90 % interval coverage 0.91
(45 datasets; 15 had fewer than 4 resolved lags before the second unresolved one); false
detections 0.718 +- 0.014 against the closed form 0.721.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import numpy as np
from scipy.stats import levy_stable

from levysde.inference.learnability_measure import false_detection_probability, measure_learnability
from levysde.stats.stable_fit import ECF_POINTS, ecf_grid, ecf_sums, robust_half_iqr


def synthetic_sums(lags, m, sigma, alpha, S, n, rng, ma=(1.0,), f=None):
    """Per-sequence sums (the layout of levysde.rnn.matched.matched_sums) of psi = m + noise."""
    L, K = len(lags), ECF_POINTS
    w = np.asarray(ma, dtype=float)
    w = w / (np.abs(w) ** alpha).sum() ** (1.0 / alpha)
    out = dict(lags=np.asarray(lags, dtype=float), count=np.zeros((L, S)), total=np.zeros((L, S)),
               t=np.zeros((L, K)), cos=np.zeros((L, S, K)), sin=np.zeros((L, S, K)), envelope=np.zeros((L, S)))
    for i in range(L):
        z = levy_stable.rvs(alpha, 0.0, size=(S, n + w.size - 1), random_state=rng)
        noise = np.stack([np.convolve(r, w, mode="valid") for r in z]) if w.size > 1 else z
        x = m[i] + sigma * noise
        out["t"][i] = ecf_grid(robust_half_iqr(x[:8]))
        out["count"][i], out["cos"][i], out["sin"][i] = ecf_sums(x, out["t"][i])
        out["total"][i] = x.sum(1)
        out["envelope"][i] = 1.0 if f is None else f[i]
    return out


def dataset(rng, alpha, kind):
    lags = np.arange(4.0, 130.0, 9.0)
    f = np.exp(-lags / 60.0) if kind == "exponential" else (lags / 4.0) ** -0.8
    c, sigma, eps = 0.6, 1.0, 1.0
    return lags, f, c * f, sigma, eps


def run(quick: bool, seed: int) -> dict:
    t0 = time.time()
    rng = np.random.default_rng(seed)
    n_sets = 12 if quick else int(os.environ.get("LEVYSDE_CALIB_SETS", 60))
    grid = 2.0 ** np.arange(0, 16)
    cover = {"alpha": [], "sigma": [], "mean": []}
    slopes, slope_cover = [], []
    for k in range(n_sets):
        alpha = (1.3, 1.6, 1.9)[k % 3]
        kind = ("exponential", "power")[(k // 3) % 2]
        lags, f, m, sigma, eps = dataset(rng, alpha, kind)
        ma = (1.0, 0.6, 0.3) if k % 2 else (1.0,)
        sums = synthetic_sums(lags, m, sigma, alpha, 48, 600 if quick else 1200, rng, ma=ma, f=f)
        r = measure_learnability(sums, N_grid=grid, eps=eps, n_boot=200, seed=k)
        for name, truth in (("alpha", alpha), ("sigma", sigma), ("mean", m)):
            est, se = getattr(r, name), getattr(r, f"{name}_se")
            cover[name].extend((np.abs(est - truth) <= 2 * se).tolist())
        mc = r.master["continuous"]
        if mc["slope"] is not None and math.isfinite(mc["slope"]) and all(map(math.isfinite, mc["slope_interval"])):
            slopes.append(mc["slope"])
            lo, hi = mc["slope_interval"]
            slope_cover.append(lo <= 1.0 <= hi)
    # false detections: lags without signal, i.i.d. samples
    n_null = 200 if quick else 1000
    a0, S0, n0, N_max = 1.5, 16, 500, 64.0
    hits = 0
    per = 20
    for j in range(n_null // per):
        lags = np.arange(1.0, per + 1.0)
        sums = synthetic_sums(lags, np.zeros(per), 1.0, a0, S0, n0, rng)
        r = measure_learnability(sums, N_grid=[N_max], eps=0.1, n_boot=50, seed=j)
        hits += int(np.isfinite(r.n_required).sum())
    p_hat = hits / n_null
    p_th = float(false_detection_probability(S0 * n0, a0, N_max=N_max, eps=0.1))
    out = {
        "datasets": n_sets,
        "coverage_2se": {k: float(np.mean(v)) for k, v in cover.items()},
        "n_lag_estimates": len(cover["alpha"]),
        "slope_mean": float(np.mean(slopes)) if slopes else None,
        "slope_sd": float(np.std(slopes, ddof=1)) if len(slopes) > 1 else None,
        "slope_interval_coverage": float(np.mean(slope_cover)) if slope_cover else None,
        "n_slopes": len(slopes),
        "false_detection_rate": p_hat,
        "false_detection_se": math.sqrt(max(p_th * (1 - p_th), 1e-12) / n_null),
        "false_detection_theory": p_th,
        "null_setting": {"alpha": a0, "samples_per_lag": S0 * n0, "N_max": N_max, "eps": 0.1},
        "seconds": time.time() - t0,
    }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args(argv)
    out = run(a.quick, a.seed)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
