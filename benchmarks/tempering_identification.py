"""Can the data tell a concentrated set from a collapsed one without lam? (docs/calibration.md)

A concentrated set has an admissible root beta* in (1, lam); a collapsed set has none, and its
stationary tail is tempering-limited, ``e^{lam zeta} |zeta|^{-1-alpha}`` (docs/specification.md
§4). Both the spectrum's tail rate and the far-left Lundberg root then read a number above 1 (on
a collapsed set a number above lam). This script measures, on the calibration study's own
datasets (the independent generator of ``benchmarks/_independent_sde.py``: the far concentrated
positives and the collapsed negatives), the statistics that could separate them without lam:

* ``trend_z``: the local exponential rate of the pooled late zeta beyond the 0.5 % quantile
  minus that between the 5 % and 2 % quantiles (truncated-exponential maximum likelihood in each
  band), in neuron-group jackknife errors; a tempering-limited tail has a local rate
  ``lam + (1 + alpha)/|zeta - c|`` that falls with depth, an exponential tail a constant one;
* ``ess_share``: effective sample size of the Lundberg root's weights ``exp(-beta dZ)`` over the
  far-left increments, as a share of the increments (the root of a collapsed set is carried by
  the large jumps when ``E exp(-beta dZ)`` is infinite);
* ``top_weight``: the largest single weight's share of the sum;
* ``subsample_drift``: the mean root on random quarters of the neurons minus the full root,
  relative to it (a root beyond lam drifts with the sample size like ``log n``);
* ``beta_dynamics``: the far-left Lundberg root itself (on a collapsed set it reads above lam).

For each it prints the range in each group and the area under the ROC curve (0.5: no
separation; 1 or 0: perfect). ``--per K`` takes every K-th dataset of each group (default 2).

    python benchmarks/tempering_identification.py [--per 2]

Takes about a minute on one core (about one second per dataset).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
from scipy import optimize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import _check_study as cs  # noqa: E402

from levysde.inference.dynamics import beta_dynamics, lundberg_root  # noqa: E402
from levysde.stats.jackknife import jackknife_se, neuron_groups  # noqa: E402

BANDS = ((0.05, 0.02), (0.02, 0.005), (0.005, 0.0))


def band_rates(values: np.ndarray) -> np.ndarray:
    """Exponential rates of the pooled values in the quantile bands of BANDS (left tail)."""
    v = np.sort(values)
    n = v.size
    out = []
    for lo, hi in BANDS:
        u = v[int(lo * n)]
        low = v[int(hi * n)] if hi > 0 else -np.inf
        x = u - v[(v <= u) & (v > low)]
        m = float(np.mean(x))
        if hi == 0:
            out.append(1.0 / m)
            continue
        width = u - low

        def f(b, width=width, m=m):
            return 1.0 / b - width / np.expm1(b * width) - m
        try:
            out.append(optimize.brentq(f, 1e-3, 100.0))
        except ValueError:
            out.append(np.nan)
    return np.array(out)


def statistics(spec, rng) -> dict:
    zeta, t = cs.make_dataset(spec)
    R, Q = zeta.shape
    late = zeta[R // 2:]
    lab = neuron_groups(Q, 16)
    full = band_rates(late.ravel())
    loo = np.array([band_rates(late[:, lab != g].ravel()) for g in range(16)])
    trend = full[2] - full[0]
    trend_z = trend / jackknife_se(loo[:, 2] - loo[:, 0])
    r = beta_dynamics(zeta, t)
    dz = np.diff(late, axis=0)
    far = late[:-1] < r.z_cut
    d = dz[far]
    neuron = np.broadcast_to(np.arange(Q), far.shape)[far]
    root = lundberg_root(d)
    a = -root * d
    w = np.exp(a - a.max())
    quarters = [lundberg_root(d[np.isin(neuron, rng.permutation(Q)[: Q // 4])]) for _ in range(40)]
    return {"trend_z": float(trend_z), "ess_share": float(r.ess / max(r.n_increments, 1)),
            "top_weight": float(w.max() / w.sum()),
            "subsample_drift": float((np.nanmean(quarters) - root) / root), "beta_dynamics": float(root)}


def auc(pos, neg) -> float:
    """P(a positive's statistic > a negative's) (ties count one half)."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    pos, neg = pos[np.isfinite(pos)], neg[np.isfinite(neg)]
    gt = (pos[:, None] > neg[None, :]).mean()
    eq = (pos[:, None] == neg[None, :]).mean()
    return float(gt + 0.5 * eq)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per", type=int, default=2, help="every K-th dataset of each group (default 2)")
    a = ap.parse_args(argv)
    if a.per < 1:
        ap.error("--per must be >= 1")
    specs = cs.specs()
    groups = {"concentrated": [s for s in specs if s["block"] == "far" and s["set"].startswith("conc")][:: a.per],
              "collapsed": [s for s in specs if s["kind"] == "collapsed"][:: a.per]}
    rng = np.random.default_rng(20261202)
    rows = {g: [statistics(s, rng) for s in ss] for g, ss in groups.items()}
    keys = list(rows["concentrated"][0])
    heads = [f"{g} (n={len(rows[g])})" for g in ("concentrated", "collapsed")]
    print(f"{'statistic':<16} {heads[0]:<24} {heads[1]:<24} AUC")
    for k in keys:
        c = [r[k] for r in rows["concentrated"]]
        x = [r[k] for r in rows["collapsed"]]
        print(f"{k:<16} {np.nanmin(c):+8.3f} .. {np.nanmax(c):+8.3f}    {np.nanmin(x):+8.3f} .. {np.nanmax(x):+8.3f}"
              f"    {auc(c, x):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
