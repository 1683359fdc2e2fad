"""How well can any estimator know the tempering cut-off lambda from the study's data? A Cramer-Rao bound.

A concentrated call needs the root beta* significantly below lambda (docs/calibration.md, "The
tempering cut-off lambda"). This script bounds from below the error of *every* unbiased
estimator of lambda on the datasets of the calibration study, and so the power that any
``tempering`` test could have there.

The bound is deliberately generous to the estimator. Every late one-record increment of every
neuron is taken as an independent draw from the far-left increment law

    dZ = kappa Delta + sqrt(2 eta_G Delta) N + L_Delta,   log E exp(i xi L_Delta) = Delta psi_J(xi)

(``levysde.theory.levy.char_exponent``; the drift known to be its plateau everywhere, the
increments independent, no record-interval effects), so N = Q (R/2 - 1) draws. Its density is
the inverse Fourier transform of the characteristic function on a fine grid; the Fisher
information matrix of theta = (kappa, eta_G, eta_J, alpha, lambda) is the integral of
grad p grad p^T / p (central differences in theta), and the efficient error of lambda with the
other four unknown is sqrt([I^-1]_{lambda lambda} / N) (Cramer 1946; Rao 1945; Lehmann & Casella,
Theory of Point Estimation, 1998, §2.5-2.6). With lambda alone unknown (the other four given) the
error is 1/sqrt(N I_{lambda lambda}).

For the concentrated far positives the best one-sided 1 % test of "beta* < lambda" then has power
at most ``P(N(0, 1) > 2.326 - (lambda - beta*)/sqrt(se_lambda^2 + se_beta^2))``, se_beta the
reported error of ``beta_dynamics`` on that dataset (from the study's records), which the script
prints per set beside the number of those datasets that such an oracle-efficient test would call.

    python benchmarks/lambda_information.py [--records benchmarks/results/check_study_tail.json.gz] [--json]
    python benchmarks/lambda_information.py --interval-scan

``--interval-scan`` keeps the observed time fixed (the late half of a Q = 1024, R = 400, Delta = 0.1
run: 1024 neurons x 19.9 time units) and records it at finer intervals Delta = 0.3 ... 0.003
(N = 1024 x 19.9 / Delta increments): the bound on lambda's error for three concentrated sets.

Self-checks run first: the density integrates to 1, and with eta_J = 0 the information on eta_G
is the Gaussian closed form 1/(2 eta_G^2).
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys

import numpy as np
from scipy import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from levysde.theory.levy import char_exponent  # noqa: E402

#: one-sided level of the admissibility test of ``check`` (z > 2.326)
Z_ONE_SIDED = stats.norm.ppf(0.99)
#: theta's names, in the order of the information matrix
NAMES = ("kappa", "eta_g", "eta_j", "alpha", "lam")


def increment_density(theta, delta, x):
    """Density of the far-left one-record increment on the uniform grid x (FFT inversion of its
    characteristic function; x symmetric about 0 with an even number of points)."""
    kappa, eta_g, eta_j, alpha, lam = theta
    n, dx = x.size, x[1] - x[0]
    xi = 2 * np.pi * np.fft.fftfreq(n, d=dx)
    logphi = delta * (1j * kappa * xi - eta_g * xi ** 2 + char_exponent(xi, alpha=alpha, lam=lam, eta_j=eta_j))
    phi = np.exp(logphi)
    # p(x_k) = (1/2pi) sum_j phi(xi_j) e^{-i xi_j x_k} dxi, x_k = x_0 + k dx
    p = np.fft.ifft(phi * np.exp(-1j * xi * x[0])).real * n * (xi[1] - xi[0]) / (2 * np.pi)
    return np.maximum(p, 0.0)


def fisher_matrix(theta, delta, *, half_width=None, n=2 ** 16, rel_step=1e-4, which=range(5)):
    """The Fisher information of one increment for theta = (kappa, eta_G, eta_J, alpha, lam), over the
    parameters ``which`` (indices into theta; default all five), and the density's mass."""
    theta = np.asarray(theta, dtype=float)
    kappa, eta_g, eta_j, alpha, lam = theta
    scale = math.sqrt(2 * eta_g * delta) + (delta * eta_j) ** (1 / alpha)
    if half_width is None:
        half_width = kappa * delta + 40 * scale + 60.0 / lam
    x = np.linspace(-half_width, half_width, n, endpoint=False)
    dx = x[1] - x[0]
    p0 = increment_density(theta, delta, x)
    grads = []
    for i in which:
        h = rel_step * max(abs(theta[i]), 1e-3)
        up, dn = theta.copy(), theta.copy()
        up[i] += h
        dn[i] -= h
        grads.append((increment_density(up, delta, x) - increment_density(dn, delta, x)) / (2 * h))
    g = np.array(grads)
    keep = p0 > 1e-12 * p0.max()
    info = (g[:, keep] / p0[keep]) @ g[:, keep].T * dx
    return info, float(p0.sum() * dx)


def lambda_errors(theta, delta, n_draws):
    """(se of lambda with the other four unknown, se with them known) for n_draws increments."""
    info, _ = fisher_matrix(theta, delta)
    cov = np.linalg.inv(info)
    return math.sqrt(cov[4, 4] / n_draws), 1.0 / math.sqrt(info[4, 4] * n_draws)


def self_checks() -> list:
    out = []
    x = np.linspace(-30, 30, 2 ** 16, endpoint=False)
    for theta, delta in (((1.0, 0.1, 1.5, 1.5, 2.0), 0.1), ((1.0, 0.3, 1.0, 0.8, 2.5), 1.0)):
        mass = increment_density(theta, delta, x).sum() * (x[1] - x[0])
        out.append(("density integrates to 1", theta, delta, mass, abs(mass - 1) < 1e-6))
    info, _ = fisher_matrix((1.0, 0.3, 0.0, 1.5, 2.0), 0.3, which=(1,))
    want = 1 / (2 * 0.3 ** 2)
    out.append(("Gaussian I(eta_G) = 1/(2 eta_G^2)", 0.3, 0.3, info[0, 0] / want, abs(info[0, 0] / want - 1) < 1e-3))
    return out


#: three concentrated far sets (eta_J, eta_G, kappa, alpha, lam) and the scan's record intervals
SCAN_SETS = {"conc_a1.5": (1.5, 0.1, 1.0, 1.5, 2.0), "conc_a1.2_k2": (4.0, 0.2, 2.0, 1.2, 2.5),
             "conc_a1.8": (1.0, 0.1, 1.0, 1.8, 3.0)}
SCAN_DELTAS = (0.3, 0.1, 0.03, 0.01, 0.003)
#: neuron-time of the late half of a Q = 1024, R = 400, Delta = 0.1 run
SCAN_NEURON_TIME = 1024 * 19.9


def interval_scan(as_json: bool) -> int:
    out = {}
    for name, (eta_j, eta_g, kappa, alpha, lam) in SCAN_SETS.items():
        out[name] = {}
        for delta in SCAN_DELTAS:
            info, _ = fisher_matrix((kappa, eta_g, eta_j, alpha, lam), delta)
            n_draws = SCAN_NEURON_TIME / delta
            out[name][delta] = (math.sqrt(np.linalg.inv(info)[4, 4] / n_draws), 1 / math.sqrt(info[4, 4] * n_draws))
    if as_json:
        print(json.dumps({k: {str(d): v for d, v in row.items()} for k, row in out.items()}, indent=1))
        return 0
    print("| set | " + " | ".join(f"Delta = {d:g}" for d in SCAN_DELTAS) + " |")
    print("|---|" + "---|" * len(SCAN_DELTAS))
    for name, row in out.items():
        print(f"| {name} | " + " | ".join(f"{a:.3f} ({b:.3f})" for a, b in row.values()) + " |")
    print("\nse(lambda) with kappa, eta_G, eta_J, alpha unknown (in brackets: known)")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", default=os.path.join(ROOT, "benchmarks", "results", "check_study_tail.json.gz"),
                    help="the calibration study's records (their specs and beta_dynamics errors)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--interval-scan", action="store_true",
                    help="the bound at fixed observed time and finer record intervals")
    args = ap.parse_args(argv)
    checks = self_checks()
    for name, *_, ok in checks:
        if not ok:
            print(f"self-check failed: {name}: {checks}", file=sys.stderr)
            return 1
    if args.interval_scan:
        return interval_scan(args.json)
    with gzip.open(args.records, "rt") as fh:
        recs = json.load(fh)["records"]
    rows, cache = [], {}
    for r in recs:
        s = r["spec"]
        if r["truth"]["phase"] != "concentrated" or s["block"] != "far":
            continue
        eta_j, eta_g, kappa, alpha, lam = s["params"]
        theta = (kappa, eta_g, eta_j, alpha, lam)
        key = (theta, s["delta"])
        if key not in cache:
            cache[key] = fisher_matrix(theta, s["delta"])[0]
        n_draws = s["Q"] * (int(s["R"] * 0.5) - 1)
        cov = np.linalg.inv(cache[key])
        se_lam = math.sqrt(cov[4, 4] / n_draws)
        se_lam_known = 1.0 / math.sqrt(cache[key][4, 4] * n_draws)
        b = r["est"]["beta_dynamics"]
        se_b = b["se"] if b["se"] else float("nan")
        gap = lam - r["truth"]["beta_star"]
        power = float(stats.norm.sf(Z_ONE_SIDED - gap / math.hypot(se_lam, se_b))) if math.isfinite(se_b) else None
        power_known = (float(stats.norm.sf(Z_ONE_SIDED - gap / math.hypot(se_lam_known, se_b)))
                       if math.isfinite(se_b) else None)
        rows.append(dict(set=s["set"], delta=s["delta"], Q=s["Q"], R=s["R"], n=n_draws, gap=gap, se_lam=se_lam,
                         se_lam_known=se_lam_known, se_beta=se_b, power=power, power_known=power_known))
    by_set = {}
    for row in rows:
        by_set.setdefault(row["set"], []).append(row)
    summary = {}
    for name, sub in by_set.items():
        pw = [x["power"] for x in sub if x["power"] is not None]
        pk = [x["power_known"] for x in sub if x["power_known"] is not None]
        summary[name] = dict(n=len(sub), gap=sub[0]["gap"], se_lam_median=float(np.median([x["se_lam"] for x in sub])),
                             se_lam_known_median=float(np.median([x["se_lam_known"] for x in sub])),
                             se_beta_median=float(np.nanmedian([x["se_beta"] for x in sub])),
                             expected_calls=float(sum(pw)), expected_calls_known=float(sum(pk)), with_beta=len(pw))
    allp = [x["power"] for x in rows if x["power"] is not None]
    allk = [x["power_known"] for x in rows if x["power_known"] is not None]
    out = dict(self_checks=[(c[0], float(c[3]), bool(c[4])) for c in checks], sets=summary, rows=rows,
               expected_calls=float(sum(allp)), expected_calls_known=float(sum(allk)), n=len(rows))
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print("| set | datasets | lambda - beta* | se(lambda), others unknown | se(lambda), others known "
          "| se(beta_dynamics) | expected calls (others unknown / known) |")
    print("|---|---|---|---|---|---|---|")
    for name, v in summary.items():
        print(f"| {name} | {v['n']} | {v['gap']:.3f} | {v['se_lam_median']:.3f} | {v['se_lam_known_median']:.3f} "
              f"| {v['se_beta_median']:.3f} | {v['expected_calls']:.1f} / {v['expected_calls_known']:.1f} "
              f"of {v['with_beta']} |")
    print(f"\nall concentrated far positives: at most {out['expected_calls']:.1f} of {len(allp)} calls expected "
          f"(others unknown), {out['expected_calls_known']:.1f} with kappa, eta_G, eta_J, alpha given")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
