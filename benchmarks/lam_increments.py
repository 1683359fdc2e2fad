"""Is lam identified by the large one-record increments? A measurement on the independent generator
(docs/calibration.md, "The tempering cut-off lam").

The noise is additive, so every one-record increment holds the same jump law; an increment far above
the Gaussian scale is carried by one jump, whose size law above a threshold u is the tempered Pareto
law ``x^(-1-alpha) exp(-lam x)`` (levysde.stats.tempered_pareto). This script takes the late
increments of study datasets (benchmarks/_check_study.py), removes the local drift displacement (the
median increment per quantile bin of the starting zeta), and at thresholds u = c s (s = 1.4826 MAD of
the centred increments, c = 3, 4, 5, 6, 8) fits

* the joint peaks-over-threshold MLE of (alpha, lam) (Smith 1987; Davison & Smith 1990);
* the MLE of lam at alpha = 2 and at alpha = 0 (the profile bounds over the admissible alpha:
  lam_hat(alpha) decreases in alpha), with the Gaussian convolution's first-order shift lam s^2
  taken out;

each with the delete-a-group jackknife over 16 neuron groups, next to the dynamics' root.

    python benchmarks/lam_increments.py [--per 1] [--kinds far,collapsed]
"""
from __future__ import annotations

import argparse
import collections
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (ROOT, os.path.join(ROOT, "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _check_study as cs  # noqa: E402

from levysde.inference.dynamics import beta_dynamics  # noqa: E402
from levysde.stats import tempered_pareto as tp  # noqa: E402
from levysde.stats.jackknife import jackknife_se, neuron_groups  # noqa: E402

SCALES = (3.0, 4.0, 5.0, 6.0, 8.0)
MIN_EXCEED = 200
G = 16


def centred(zeta, bins=20):
    """|dZ - median dZ of its starting-zeta bin| of the late one-record increments, and their neurons."""
    late = zeta[int(zeta.shape[0] * 0.5):]
    z0, dz = late[:-1], np.diff(late, axis=0)
    neuron = np.broadcast_to(np.arange(zeta.shape[1])[None, :], z0.shape).ravel()
    z0, dz = z0.ravel(), dz.ravel()
    edges = np.quantile(z0, np.linspace(0, 1, bins + 1))
    b = np.clip(np.searchsorted(edges, z0, side="right") - 1, 0, bins - 1)
    med = np.array([np.median(dz[b == k]) for k in range(bins)])
    return np.abs(dz - med[b]), neuron


def lam_fixed(x, lab, u, s2, alpha, drop=None):
    lam = 0.0
    for _ in range(8):
        d = lam * s2
        if not d < u:
            return math.nan
        sm = tp.sums(x - d, u - d, lab, G)
        if drop is not None:
            sm = np.delete(sm, drop, axis=0)
        new = tp.fit_lam_given_alpha(sm, u - d, alpha)[0]
        if not math.isfinite(new) or abs(new - lam) <= 1e-7 * max(new, 1e-3):
            return new
        lam = new
    return lam


def with_se(f, x, lab, *args):
    full = f(x, lab, *args)
    return full, jackknife_se([f(x, lab, *args, drop=g) for g in range(G)])


def free_fit(x, lab, u, drop=None):
    sm = tp.sums(x, u, lab, G)
    if drop is not None:
        sm = np.delete(sm, drop, axis=0)
    return tp.fit_from_sums(sm, u)


def one(spec):
    zeta, t = cs.make_dataset(spec)
    x, neuron = centred(zeta)
    lab = neuron_groups(zeta.shape[1], G)[neuron]
    s = 1.4826 * float(np.median(x))
    d = beta_dynamics(zeta, t)
    cells = []
    for c in SCALES:
        u = c * s
        n = int(np.count_nonzero(x > u))
        if n < MIN_EXCEED:
            break
        f = free_fit(x, lab, u)
        fl = jackknife_se([free_fit(x, lab, u, drop=g).lam for g in range(G)])
        lo = with_se(lam_fixed, x, lab, u, s * s, 2.0)
        hi = with_se(lam_fixed, x, lab, u, s * s, 0.0)
        edge = " at bound" if f.at_bound else ""
        cells.append(f"{c:g}s n={n}: joint {f.lam:.2f}±{fl:.2f} (alpha {f.alpha:.1f}{edge}); "
                     f"[{lo[0]:.2f}±{lo[1]:.2f}, {hi[0]:.2f}±{hi[1]:.2f}]")
    ej, eg, k, a, lam = spec["params"]
    head = (f"{spec['set']:22s} Delta {spec['delta']:<4g} Q {spec['Q']:<5d} R {spec['R']:<4d} lam {lam:<4g} "
            f"alpha {a:<4g} s {s:.2f} beta_dynamics {d.beta.value:.2f}±{d.beta.se:.2f}")
    return head + "\n    " + ("\n    ".join(cells) if cells else f"fewer than {MIN_EXCEED} exceedances of 3 s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per", type=int, default=1, help="datasets per (set, Delta)")
    ap.add_argument("--kinds", default="far,collapsed", help="far, collapsed, near_threshold (comma-separated)")
    a = ap.parse_args(argv)
    kinds = set(a.kinds.split(","))
    unknown = sorted(kinds - {"far", "collapsed", "near_threshold"})
    if unknown or a.per < 1:
        ap.error(f"--kinds must name far, collapsed or near_threshold (got {', '.join(unknown)})" if unknown
                 else "--per must be >= 1")
    seen = collections.Counter()
    for sp in cs.specs():
        kind = sp["block"] if sp["block"] != "negative" else sp["kind"]
        if kind not in kinds:
            continue
        key = (kind, sp["set"].split("_x")[0], sp["delta"])
        if seen[key] >= a.per:
            continue
        seen[key] += 1
        print(one(sp), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
