"""The calibration study of ``levysde check`` on the independent generator (docs/calibration.md,
"Calibration on the independent generator"); run it with
``python benchmarks/calibrate_check.py --block independent``.

Every dataset is drawn by benchmarks/_independent_sde.py (Rosinski series jumps, drifts of its own; no
code shared with :mod:`levysde.simulation`) and goes through
:func:`levysde.inference.check.check_trajectories` as a run file's arrays would. The truth of every
parameter set comes from :mod:`levysde.theory` (``classify``: phase, beta*, eta_J*; the theory is
checked against mpmath in its own tests); the generated model's exact root (``model_root``, the
series cut's Gaussian stand-in included) is recorded beside it.

Blocks:

* ``far``: positives far from the boundaries, the sets the goals speak of: |beta* - 1| >= 0.3,
  eta_J >= 1.3 eta_J*, Q in {256, 512, 1024} neurons, R in {100, 200, 400} records, record interval
  Delta in {0.1, 0.3, 1} with Delta kappa <= 1; broad and concentrated, alpha 0.8-1.8, lam 1-3,
  drifts whose plateau is reached late (saturating with gamma = 1.5 kappa and 0.5 kappa, piecewise
  linear, asymmetric logistic, algebraic; equilibrium z0 in {-1, 0.5, 2});
* ``near_critical``: |beta* - 1| < 0.15 (beta* 0.88-1.12);
* ``near_threshold``: eta_J within 20 % of eta_J* on either side (0.85, 0.95: collapsed;
  1.05, 1.15: a root close to lam);
* ``negative``: datasets where the theory's phase must not be called: ``spreading`` (the noise
  intensity ramps up over the late half, the spectrum's std grows by >= 10 %), ``moving`` (the
  equilibrium moves at constant speed), ``ou`` (an Ornstein-Uhlenbeck drift: no plateau),
  ``collapsed`` (eta_J = 0.4-0.7 eta_J*: no root in (0, lam)), ``common_jumps`` (every jump shared by
  all neurons), ``half_common`` (half the jump intensity shared). A call of "collapsed" is right on
  ``collapsed`` and ``ou`` (no restoring plateau); any other call on a negative is a false positive.

Records are cached by dataset (``--out``): an interrupted run continues where it stopped, and
``--shard K/N`` splits the study over processes or machines (``--summarize`` merges their files).
"""
from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time
from functools import cache

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _p in (ROOT, os.path.join(ROOT, "benchmarks")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import _independent_sde as gen  # noqa: E402

#: (eta_j, eta_g, kappa, alpha, lam) of the positives far from the boundaries; beta* (theory) and
#: eta_J / eta_J* in the comment
FAR_SETS = {
    "broad_a0.8": (4.0, 0.5, 1.0, 0.8, 1.0),        # 0.610, 3.4
    "broad_a1.0_k0.5": (3.36, 0.1, 0.5, 1.0, 1.5),  # 0.600, 4.2
    "broad_a1.2": (5.0, 0.3, 1.0, 1.2, 1.5),        # 0.578, 4.7
    "broad_a1.5": (4.0, 0.3, 1.0, 1.5, 2.0),        # 0.553, 8.3
    "broad_a1.8": (2.0, 0.05, 1.0, 1.8, 1.5),       # 0.689, 2.3
    "conc_a0.8": (1.0, 0.3, 1.0, 0.8, 2.5),         # 2.375, 1.4
    "conc_a1.2_k2": (4.0, 0.2, 2.0, 1.2, 2.5),      # 1.962, 1.5
    "conc_a1.3": (1.594, 0.2, 1.0, 1.3, 1.6),       # 1.350, 1.4
    "conc_a1.5": (1.5, 0.1, 1.0, 1.5, 2.0),         # 1.460, 1.6
    "conc_a1.8": (1.0, 0.1, 1.0, 1.8, 3.0),         # 1.407, 2.7
}
#: |beta* - 1| < 0.15: eta_J solves Phi(beta) = 0 at the beta* in the name
#: (eta_J = (kappa beta - eta_G beta^2) / Psi_1(beta), docs/specification.md §4)
NEAR_CRITICAL_SETS = {
    "crit_0.88_a1.5": (2.7286, 0.1, 1.0, 1.5, 2.0),
    "crit_1.12_a1.5": (2.0694, 0.1, 1.0, 1.5, 2.0),
    "crit_0.93_a1.2": (3.4648, 0.05, 1.0, 1.2, 1.5),
    "crit_1.07_a1.2": (2.9278, 0.05, 1.0, 1.2, 1.5),
    "crit_0.90_a1.8": (1.4417, 0.2, 1.0, 1.8, 2.5),
    "crit_1.10_a1.8": (1.1205, 0.2, 1.0, 1.8, 2.5),
}
#: eta_J = f eta_J* (f in the name): lam = 2 (a root close to lam > 1: concentrated) and lam = 0.7
#: (root < lam < 1: broad); f < 1 is collapsed
THRESHOLD_BASES = {"conc": (0.1, 1.0, 1.5, 2.0), "broad": (0.2, 1.0, 1.2, 0.7)}
THRESHOLD_FACTORS = (0.85, 0.95, 1.05, 1.15)
#: drift shapes (kind, gamma/kappa); the logistic's right plateau is 2 kappa
DRIFTS = (("saturating", 1.5), ("saturating", 0.5), ("piecewise", 2.0), ("logistic", 1.0), ("algebraic", 1.0))
Z0S = (0.5, -1.0, 2.0)
DELTAS = (0.1, 0.3, 1.0)
SIZES_Q = (256, 512, 1024)
SIZES_R = (100, 200, 400)
FAR_PER_SET = 20
NEAR_PER_SET = 6
#: negative kinds and datasets per kind; the base sets they perturb (positives as they stand)
NEGATIVES = {"spreading": 16, "moving": 16, "ou": 16, "collapsed": 16, "common_jumps": 16, "half_common": 16}
NEGATIVE_BASES = ("broad_a1.5", "conc_a1.5", "broad_a0.8", "conc_a1.8", "broad_a1.2", "conc_a1.3")
#: spreading: the noise amplitude grows by this factor - 1 across the late half (linear ramp)
SPREAD_RAMPS = (0.25, 0.4, 0.6)
#: moving: the equilibrium moves by this much (zeta units) over the late half
MOVE_SHIFTS = (0.3, 0.6, 1.0)
#: collapsed: eta_J = f eta_J*
COLLAPSED_FACTORS = (0.4, 0.55, 0.7)
BASE_SEED = 7_000_000
LATE_FRACTION = 0.5
#: the estimates whose errors are checked, with the truth they estimate
BETA_KEYS = ("beta_tail", "beta_dynamics", "beta_theory", "beta_combined")
COVERAGE_KEYS = ("kappa_hat",) + BETA_KEYS + ("alpha_hat", "eta_g_hat", "eta_j_hat", "lam_hat")
POSITIVE_BLOCKS = ("far", "near_critical", "near_threshold", "fine")
#: block ``fine``: the far sets and two negative kinds recorded often (Delta 0.01, Q 1024, 4000
#: records: the late half spans 20 time units, as R = 400 at Delta = 0.1), where lambda is identified
FINE_PER_SET = 2
FINE_NEGATIVES = {"collapsed": 6, "ou": 6}
FINE_SIZE = {"delta": 0.01, "Q": 1024, "R": 4000}
#: the calls that are right on a negative (any other call is a false positive)
NEGATIVE_RIGHT = {"collapsed": ("collapsed",), "ou": ("collapsed",)}


@cache
def classify(p) -> dict:
    """Phase, beta* (NaN when collapsed) and eta_J* of a parameter tuple (levysde.theory.classify)."""
    import levysde

    ej, eg, k, a, lam = p
    r = levysde.classify(ej, eta_g=eg, kappa=k, alpha=a, lam=lam)
    b = float(r.beta_star) if str(r.phase) != "collapsed" else float("nan")
    return {"phase": str(r.phase), "beta_star": b, "eta_j_star": float(r.eta_j_star),
            "eta_j_ratio": ej / float(r.eta_j_star)}


@cache
def theory(p) -> dict:
    """:func:`classify` and the generated model's exact root ``beta_model`` (_independent_sde.model_root)."""
    return dict(classify(p), beta_model=gen.model_root(*p))


def _eta_j_star(base) -> float:
    eg, k, a, lam = base
    return classify((1.0, eg, k, a, lam))["eta_j_star"]


def specs(quick: bool = False, base_seed: int = BASE_SEED) -> list[dict]:
    """Every dataset of the study: block, kind, set, params (eta_j, eta_g, kappa, alpha, lam), drift,
    ratio (gamma/kappa), z0, delta, Q, R, seed and the kind's settings (ramp, shift, shared)."""
    rng = np.random.default_rng(base_seed)
    out = []

    def add(block, kind, name, p, i, j, **kw):
        k = p[2]
        deltas = [d for d in DELTAS if d * k <= 1.0 + 1e-12]
        drift, ratio = DRIFTS[(i + j) % len(DRIFTS)]
        sp = {"block": block, "kind": kind, "set": name, "params": [float(x) for x in p], "drift": drift,
              "ratio": ratio, "z0": Z0S[(i // len(DRIFTS) + j) % len(Z0S)],
              "delta": 0.3 if quick else deltas[(i + i // len(DRIFTS) + j) % len(deltas)],
              "Q": 256 if quick else int(rng.choice(SIZES_Q)), "R": 100 if quick else int(rng.choice(SIZES_R))}
        sp.update(kw)
        sp["seed"] = base_seed + len(out)
        out.append(sp)

    far = list(FAR_SETS.items())
    for j, (name, p) in enumerate(far[::5] if quick else far):
        for i in range(1 if quick else FAR_PER_SET):
            add("far", "positive", name, p, i, j)
    near = [("near_critical", n, p) for n, p in NEAR_CRITICAL_SETS.items()]
    for b, base in THRESHOLD_BASES.items():
        s = _eta_j_star(base)
        near += [("near_threshold", f"thr_{b}_{f:.2f}", (round(f * s, 4),) + base) for f in THRESHOLD_FACTORS]
    for j, (block, name, p) in enumerate(near[::7] if quick else near):
        for i in range(1 if quick else NEAR_PER_SET):
            add(block, "positive", name, p, i, j)
    for kind, n in NEGATIVES.items():
        if quick and kind in ("ou", "half_common"):
            continue
        for i in range(1 if quick else n):
            name = NEGATIVE_BASES[i % len(NEGATIVE_BASES)]
            p = FAR_SETS[name]
            kw = {}
            if kind == "spreading":
                kw["ramp"] = SPREAD_RAMPS[i % len(SPREAD_RAMPS)]
            elif kind == "moving":
                kw["shift"] = MOVE_SHIFTS[i % len(MOVE_SHIFTS)] * (-1) ** (i // len(MOVE_SHIFTS))
            elif kind == "collapsed":
                f = COLLAPSED_FACTORS[i % len(COLLAPSED_FACTORS)]
                p = (round(f * _eta_j_star(p[1:]), 4),) + tuple(p[1:])
                name = f"{name}_x{f:.2f}"
            elif kind == "common_jumps":
                kw["shared"] = 1.0
            elif kind == "half_common":
                kw["shared"] = 0.5
            add("negative", kind, name, p, i, 0, **kw)
            if kind == "ou":
                out[-1].update(drift="ou", ratio=(0.5, 1.0, 2.0)[i % 3])
    if not quick:
        for j, (name, p) in enumerate(far):
            for i in range(FINE_PER_SET):
                add("fine", "positive", name, p, i, j, **FINE_SIZE)
        for kind, n in FINE_NEGATIVES.items():
            for i in range(n):
                name = NEGATIVE_BASES[i % len(NEGATIVE_BASES)]
                p = FAR_SETS[name]
                if kind == "collapsed":
                    f = COLLAPSED_FACTORS[i % len(COLLAPSED_FACTORS)]
                    p = (round(f * _eta_j_star(p[1:]), 4),) + tuple(p[1:])
                    name = f"{name}_x{f:.2f}"
                add("fine", kind, name, p, i, 0, **FINE_SIZE)
                if kind == "ou":
                    out[-1].update(drift="ou", ratio=(0.5, 1.0, 2.0)[i % 3])
    return out


def spec_key(spec) -> str:
    """A dataset's cache key: a hash of its specification (seed included)."""
    return hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def truth(spec) -> dict:
    """The truth of a dataset: phase, beta*, kappa and the noise parameters from :mod:`levysde.theory`;
    ``right_calls``: the calls counted right (a positive: its phase; a negative: NEGATIVE_RIGHT)."""
    ej, eg, k, a, lam = spec["params"]
    th = dict(theory(tuple(spec["params"])))
    th.update(kappa=k, eta_g=eg, eta_j=ej, alpha=a, lam=lam)
    if spec["kind"] != "positive":
        th["base_phase"] = th.pop("phase")
        th["phase"] = None
        th["right_calls"] = list(NEGATIVE_RIGHT.get(spec["kind"], ()))
    else:
        th["right_calls"] = [th["phase"]]
    if spec["drift"] == "ou":
        th["kappa"] = None                      # no plateau
    return th


def _truth_value(th, key):
    if key.startswith("beta_"):
        return th["beta_star"]
    return th.get(key[: -len("_hat")])


def make_dataset(spec):
    """(zeta (R, Q), t (R,)) of one dataset from the independent generator."""
    ej, eg, k, a, lam = spec["params"]
    b = classify(tuple(spec["params"]))["beta_star"]
    ratio = spec["ratio"]
    burn = 20.0 + 10.0 / (k * (b if math.isfinite(b) else lam)) + 5.0 / (ratio * k)
    drift = gen.Drift(spec["drift"], kappa=k, gamma=ratio * k, z0=spec["z0"], kappa_r=2 * k)
    delta, R = spec["delta"], spec["R"]
    late0 = int(R * (1 - LATE_FRACTION)) * delta            # time of the late part's first record
    span = (R - 1) * delta - late0
    kw = {}
    if spec["kind"] == "spreading":
        g = spec["ramp"]
        kw["noise_scale"] = lambda s: 1.0 + g * min(max((s - late0) / span, 0.0), 1.0)
    elif spec["kind"] == "moving":
        v = spec["shift"] / span
        kw["z0_shift"] = lambda s: v * max(s, 0.0)
    zeta, t, _ = gen.simulate(drift, eta_j=ej, eta_g=eg, alpha=a, lam=lam, n_neurons=spec["Q"], n_records=R,
                              record_dt=delta, dt=0.01 if delta < 1 else 0.02, burn_in=burn, seed=spec["seed"],
                              shared_jumps=spec.get("shared", 0.0), **kw)
    return zeta, t


def late_changes(zeta, n_windows: int = 4) -> dict:
    """What a dataset does over its late part, measured on the data (4 consecutive windows, as the
    stationarity test): std_growth = std(last window) / std(first window) - 1 and median_shift =
    median(last) - median(first), pooled over neurons."""
    R = zeta.shape[0]
    late = zeta[int(R * (1 - LATE_FRACTION)):]
    edges = np.linspace(0, late.shape[0], n_windows + 1).round().astype(int)
    first, last = late[edges[0]:edges[1]], late[edges[-2]:edges[-1]]
    return {"std_growth": float(np.nanstd(last) / np.nanstd(first) - 1),
            "median_shift": float(np.nanmedian(last) - np.nanmedian(first)),
            "late_std": float(np.nanstd(late))}


def _num(x, nd=5):
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.{nd}g}")


def _short(text, n=90):
    text = text or ""
    return text if len(text) <= n else text[: n - 3] + "..."


def stated_odds(d) -> float | None:
    """The stated probability of the called phase: from ``phase_probabilities`` (the call's own odds),
    else ``phase_probabilities_combined``; None without a call."""
    ph = d.get("phase")
    if ph is None:
        return None
    for key in ("phase_probabilities", "phase_probabilities_combined"):
        v = (d.get(key) or {}).get(ph)
        if v is not None:
            return float(v)
    return None


def record(spec, d, changes, seconds) -> dict:
    """One dataset's record: spec, truth, measured late changes, every checked estimate with its
    error (value v, standard error se, log-scale error lse where reported, status, flag), the z
    against the truth, the call and its stated odds, the gates and the reasons."""
    th = truth(spec)
    est = {}
    for key in COVERAGE_KEYS:
        v, se = d.get(key), d.get(f"{key}_se")
        e = {"v": _num(v), "se": _num(se), "st": d.get(f"{key}_status")}
        if d.get(f"{key}_log_se") is not None:
            e["lse"] = _num(d[f"{key}_log_se"])
        e["z"] = _num(zscore(e, _truth_value(th, key)), 4)
        est[key] = e
    dyn = d.get("dynamics") or {}
    keep = ("phase", "base_phase", "beta_star", "beta_model", "eta_j_star", "eta_j_ratio", "kappa", "right_calls")
    return {"key": spec_key(spec), "spec": spec, "truth": {k: (_num(th[k]) if isinstance(th[k], float) else th[k])
                                                            for k in keep if k in th},
            "measured": {k: _num(v, 4) for k, v in changes.items()},
            "est": est, "phase": d.get("phase"), "odds": _num(stated_odds(d), 4),
            "phase_probabilities": {k: _num(v, 4) for k, v in (d.get("phase_probabilities") or {}).items()},
            "phase_probabilities_combined": {k: _num(v, 4)
                                             for k, v in (d.get("phase_probabilities_combined") or {}).items()},
            "closure_z": _num(d.get("closure_z"), 4), "stationary": d.get("stationary"),
            "gates": d.get("gates") or {}, "withheld": [_reason(w) for w in d.get("phase_withheld") or []],
            "candidates": d.get("phase_candidates"),
            "dynamics": {"status": dyn.get("status"), "message": _short(dyn.get("message"), 60),
                         "delta_kappa": _num(dyn.get("delta_kappa"), 4)},
            "seconds": round(seconds, 2)}


def zscore(e, t) -> float | None:
    """(estimate - truth) / se, on the log scale (log(estimate / truth) / lse) where the check reports a
    log-scale error; None without a finite truth, value or positive error."""
    if t is None or not math.isfinite(t) or e.get("v") is None:
        return None
    if e.get("lse") is not None:
        if e["lse"] > 0 and e["v"] > 0 and t > 0:
            return math.log(e["v"] / t) / e["lse"]
        return None
    if e.get("se") is None or not e["se"] > 0:
        return None
    return (e["v"] - t) / e["se"]


def run_one(spec) -> dict:
    """Generate and check one dataset (an exception becomes the record's ``error``, never dropped)."""
    from levysde.inference.check import check_trajectories

    t0 = time.perf_counter()
    try:
        zeta, t = make_dataset(spec)
        changes = late_changes(zeta)
        d = check_trajectories(zeta, t, seed=spec["seed"], n_boot=200).as_json()
    except Exception as exc:            # counted in the summary ("errors")
        return {"key": spec_key(spec), "spec": spec, "truth": truth(spec), "error": f"{type(exc).__name__}: {exc}",
                "phase": None, "est": {}, "gates": {}, "withheld": [], "seconds": round(time.perf_counter() - t0, 2)}
    return record(spec, d, changes, time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------ summary

def wilson(hits: int, n: int, z: float = 1.96):
    """Wilson score interval (95 %) of hits/n; None for n = 0."""
    if n == 0:
        return None
    p = hits / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(max(c - h, 0.0), 3), round(min(c + h, 1.0), 3)]


def coverage(recs, key) -> dict:
    """Over the records with a z for key: n, the fractions with |z| <= 1 and <= 2, mean and sd of z."""
    z = np.array([r["est"][key]["z"] for r in recs if (r.get("est", {}).get(key) or {}).get("z") is not None])
    if z.size == 0:
        return {"n": 0, "cov1": None, "cov2": None, "z_mean": None, "z_sd": None}
    return {"n": int(z.size), "cov1": round(float(np.mean(np.abs(z) <= 1)), 3),
            "cov2": round(float(np.mean(np.abs(z) <= 2)), 3), "z_mean": round(float(z.mean()), 3),
            "z_sd": round(float(z.std(ddof=1)), 3) if z.size > 1 else None}


def _count(items) -> dict:
    out = {}
    for it in items:
        out[it] = out.get(it, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _reason(text) -> str:
    """A reason's head (before its first colon), numbers replaced by '#' so that like reasons count together."""
    return re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", (text or "").split(":")[0].strip())[:50]


def _phases(d) -> str:
    return ", ".join(f"{k} {v}" for k, v in (d or {}).items())


def candidates(r) -> list | None:
    """The phases ``check`` leaves open (``phase_candidates``); for records written before that key
    existed, derived the same way: the call alone, or "concentrated or collapsed" when the only
    failed gate is ``tempering`` and the combined odds favour beta > 1."""
    if "candidates" in r:
        return r["candidates"]
    if r["phase"] is not None:
        return [r["phase"]]
    failed = [g for g, ok in (r.get("gates") or {}).items() if not ok]
    conc = (r.get("phase_probabilities_combined") or {}).get("concentrated")
    if failed == ["tempering"] and conc is not None and conc >= 0.5:
        return ["concentrated", "collapsed"]
    return None


def calls_summary(recs) -> dict:
    """Power (calls / datasets), right calls, calls at stated odds >= 0.9, and the refusals."""
    n = len(recs)
    calls = [r for r in recs if r["phase"] is not None]
    right = [r for r in calls if r["phase"] in r["truth"]["right_calls"]]
    sure = [r for r in calls if r.get("odds") is not None and r["odds"] >= 0.9]
    sure_right = [r for r in sure if r["phase"] in r["truth"]["right_calls"]]
    refused = [r for r in recs if r["phase"] is None]
    return {"n": n, "calls": len(calls), "power": round(len(calls) / n, 3) if n else None,
            "power_ci95": wilson(len(calls), n), "right": len(right),
            "right_rate": round(len(right) / len(calls), 3) if calls else None,
            "right_ci95": wilson(len(right), len(calls)),
            "calls_odds_0.9": len(sure), "right_odds_0.9": len(sure_right),
            "right_rate_odds_0.9": round(len(sure_right) / len(sure), 3) if sure else None,
            "calls_by_phase": _count(r["phase"] for r in calls),
            "open": sum(1 for r in refused if candidates(r)),
            "open_right": sum(1 for r in refused if candidates(r)
                              and set(candidates(r)) & set(r["truth"]["right_calls"])),
            "failed_gates": _count(g for r in refused for g, ok in (r.get("gates") or {}).items() if not ok),
            "withheld_reasons": _count(_reason(w) for r in refused for w in r.get("withheld") or []),
            "beta_dynamics_refused": _count(_reason((r.get("dynamics") or {}).get("message"))
                                            for r in recs if (r.get("est", {}).get("beta_dynamics") or {}).get("v")
                                            is None),
            "wrong": [f"{r['spec']['set']} {r['spec']['drift']} delta={r['spec']['delta']} Q={r['spec']['Q']} "
                      f"R={r['spec']['R']} seed={r['spec']['seed']}: {r['phase']} (odds {r.get('odds')})"
                      for r in calls if r["phase"] not in r["truth"]["right_calls"]]}


def summarize(recs) -> dict:
    """The study's summary: per positive block calls and coverage (with breakdowns of the far block by
    record interval, drift and true phase), per negative kind the false positives."""
    errors = [f"{r['spec']['kind']} seed={r['spec']['seed']}: {r['error']}" for r in recs if "error" in r]
    ok = [r for r in recs if "error" not in r]
    out = {"n_datasets": len(recs), "errors": errors, "blocks": {}}
    for block in POSITIVE_BLOCKS:
        sub = [r for r in ok if r["spec"]["block"] == block and r["spec"]["kind"] == "positive"]
        if not sub:
            continue
        s = calls_summary(sub)
        s["coverage"] = {k: coverage(sub, k) for k in COVERAGE_KEYS}
        if block == "far":
            for by, f in (("delta", lambda r: str(r["spec"]["delta"])), ("drift", lambda r: r["spec"]["drift"]
                                                                          + f"_{r['spec']['ratio']}"),
                          ("phase", lambda r: r["truth"]["phase"]), ("Q", lambda r: str(r["spec"]["Q"])),
                          ("R", lambda r: str(r["spec"]["R"])), ("set", lambda r: r["spec"]["set"])):
                s[f"by_{by}"] = {}
                for v in sorted({f(r) for r in sub}):
                    g = calls_summary([r for r in sub if f(r) == v])
                    s[f"by_{by}"][v] = {k: g[k] for k in ("n", "calls", "power", "right", "open")}
        if block != "far":
            s["by_set"] = {}
            for v in sorted({r["spec"]["set"] for r in sub}):
                g = calls_summary([r for r in sub if r["spec"]["set"] == v])
                s["by_set"][v] = {k: g[k] for k in ("n", "calls", "right", "calls_by_phase")}
        out["blocks"][block] = s
    neg = [r for r in ok if r["spec"]["block"] == "negative"]
    if neg:
        kinds = {}
        for kind in NEGATIVES:
            sub = [r for r in neg if r["spec"]["kind"] == kind]
            if not sub:
                continue
            s = calls_summary(sub)
            fp = s["calls"] - s["right"]
            kinds[kind] = {"n": s["n"], "calls": s["calls"], "false_positives": fp,
                           "false_positive_rate": round(fp / s["n"], 3), "calls_by_phase": s["calls_by_phase"],
                           "judged_stationary": sum(bool(r.get("stationary")) for r in sub),
                           "open": s["open"],
                           "failed_gates": s["failed_gates"], "wrong": s["wrong"]}
            m = [r["measured"] for r in sub if r.get("measured")]
            if m:
                kinds[kind]["std_growth_range"] = [min(x["std_growth"] for x in m), max(x["std_growth"] for x in m)]
                kinds[kind]["median_shift_range"] = [min(x["median_shift"] for x in m),
                                                     max(x["median_shift"] for x in m)]
        fp = sum(k["false_positives"] for k in kinds.values())
        out["negatives"] = {"n": len(neg), "false_positives": fp, "false_positive_rate": round(fp / len(neg), 3),
                            "false_positive_ci95": wilson(fp, len(neg)), "by_kind": kinds}
    fine_neg = [r for r in ok if r["spec"]["block"] == "fine" and r["spec"]["kind"] != "positive"]
    if fine_neg:
        kinds = {}
        for kind in FINE_NEGATIVES:
            s = calls_summary([r for r in fine_neg if r["spec"]["kind"] == kind])
            kinds[kind] = {"n": s["n"], "calls": s["calls"], "false_positives": s["calls"] - s["right"],
                           "calls_by_phase": s["calls_by_phase"], "open": s["open"], "failed_gates": s["failed_gates"],
                           "wrong": s["wrong"]}
        fp = sum(k["false_positives"] for k in kinds.values())
        out["fine_negatives"] = {"n": len(fine_neg), "false_positives": fp, "by_kind": kinds}
    out["seconds_total"] = round(sum(r.get("seconds", 0.0) for r in recs), 1)
    return out


def _f(v, nd=3):
    return "-" if v is None else (f"{v:.{nd}f}" if isinstance(v, float) else str(v))


def print_summary(s, file=None):
    """The study's table."""
    def p(*a):
        print(*a, file=file)

    p(f"{s['n_datasets']} datasets, {len(s['errors'])} errors, {s['seconds_total']} s of work")
    for e in s["errors"]:
        p("  error:", e)
    for block, b in s["blocks"].items():
        p(f"\n[{block}] n {b['n']}: calls {b['calls']} (power {_f(b['power'])} {b['power_ci95']}), right "
          f"{b['right']} ({_f(b['right_rate'])}), odds >= 0.9: {b['right_odds_0.9']}/{b['calls_odds_0.9']}; "
          f"calls {b['calls_by_phase']}")
        p(f"  {'estimate':<14}{'n':>5}{'1 sigma':>9}{'2 sigma':>9}{'mean z':>8}{'sd z':>7}")
        for k, c in b["coverage"].items():
            p(f"  {k:<14}{c['n']:>5}{_f(c['cov1']):>9}{_f(c['cov2']):>9}{_f(c['z_mean'], 2):>8}{_f(c['z_sd'], 2):>7}")
        p("  failed gates (sets without a call):", b["failed_gates"])
        p("  beta_dynamics refused:", b["beta_dynamics_refused"])
        for by in ("delta", "drift", "phase"):
            if f"by_{by}" in b:
                p(f"  by {by}: " + "; ".join(f"{v} {g['calls']}/{g['n']} right {g['right']}"
                                             for v, g in b[f"by_{by}"].items()))
        if "by_set" in b and block != "far":
            p("  by set: " + "; ".join(f"{v} {g['calls']}/{g['n']} right {g['right']}" for v, g in b["by_set"].items()))
        for w in b["wrong"]:
            p("  wrong:", w)
    n = s.get("negatives")
    if n:
        p(f"\n[negatives] n {n['n']}: false positives {n['false_positives']} (rate {_f(n['false_positive_rate'])} "
          f"{n['false_positive_ci95']})")
        for kind, k in n["by_kind"].items():
            p(f"  {kind:<13} n {k['n']:3d}  calls {k['calls']:3d}  false positives {k['false_positives']:3d}  "
              f"judged stationary {k['judged_stationary']:3d}  calls {k['calls_by_phase']}  "
              f"std growth {[round(x, 2) for x in k.get('std_growth_range', [])]}")
            for w in k["wrong"]:
                p("    false positive:", w)


def _frac(k, n):
    return f"{k}/{n} = {k / n:.2f}" if n else "–"


def _cov_cell(c):
    if not c or not c["n"]:
        return "– (none)"
    sd = "–" if c["z_sd"] is None else f"{c['z_sd']:.2f}"
    return f"{c['cov1']:.2f} / {c['cov2']:.2f}, n {c['n']}, z {c['z_mean']:+.2f} ± {sd}"


def markdown(runs: dict) -> str:
    """Markdown tables of one or more summaries side by side (``runs``: column title -> summary)."""
    names = list(runs)
    head = "| | " + " | ".join(names) + " | target |\n|---|" + "---|" * (len(names) + 1)
    lines = ["**Positives far from the boundaries** (block `far`):", "", head]

    def row(label, f, goal=""):
        cells = []
        for n in names:
            try:
                cells.append(f(runs[n]))
            except (KeyError, TypeError, ZeroDivisionError):
                cells.append("–")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {goal} |")

    def far(s):
        return s["blocks"]["far"]

    row("phase called (power)", lambda s: _frac(far(s)["calls"], far(s)["n"]), "≥ 0.70")
    row("calls right", lambda s: _frac(far(s)["right"], far(s)["calls"]), "≥ 0.97")
    row("calls at stated odds ≥ 0.9 right", lambda s: _frac(far(s)["right_odds_0.9"], far(s)["calls_odds_0.9"]),
        "≥ 0.90")
    row("false positives over the negatives", lambda s: _frac(s["negatives"]["false_positives"], s["negatives"]["n"]),
        "≤ 0.02")
    row("no call, \"concentrated or collapsed\" left open (`phase_candidates`)",
        lambda s: _frac(far(s)["open"], far(s)["n"]))
    row("negatives left open as \"concentrated or collapsed\"",
        lambda s: _frac(sum(k.get("open", 0) for k in s["negatives"]["by_kind"].values()), s["negatives"]["n"]))
    for k in ("beta_tail", "beta_dynamics", "beta_theory", "beta_combined", "kappa_hat"):
        row(f"`{k}` 1σ / 2σ coverage, n, mean ± sd of z", lambda s, k=k: _cov_cell(far(s)["coverage"][k]),
            "0.6–0.75 / 0.9–0.98" if k != "kappa_hat" else "")
    lines += ["", "**Power by record interval Δ and by drift** (far block; calls / datasets, right):", "",
              "| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    keys = sorted({(by, v) for s in runs.values() for by in ("delta", "drift", "phase")
                   for v in s["blocks"]["far"].get(f"by_{by}", {})})
    for by, v in keys:
        cells = []
        for n in names:
            g = runs[n]["blocks"]["far"].get(f"by_{by}", {}).get(v)
            cells.append(f"{g['calls']}/{g['n']}, {g['right']} right" if g else "–")
        lines.append(f"| {'Δ = ' + v if by == 'delta' else by + ' ' + v} | " + " | ".join(cells) + " |")
    lines += ["", "**Near the boundaries** (calls / datasets; right among the calls; right among calls at "
              "stated odds ≥ 0.9):", "", "| block | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for block, label in (("near_critical", "\\|β* − 1\\| < 0.15"), ("near_threshold", "η_J within 20 % of η_J*")):
        cells = []
        for n in names:
            b = runs[n]["blocks"].get(block)
            cells.append(f"{b['calls']}/{b['n']}; {b['right']}/{b['calls']}; {b['right_odds_0.9']}/"
                         f"{b['calls_odds_0.9']}" if b else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    sets = sorted({v for s in runs.values() for b in ("near_critical", "near_threshold")
                   for v in s["blocks"].get(b, {}).get("by_set", {})})
    for v in sets:
        cells = []
        for n in names:
            g = next((s["by_set"][v] for b, s in runs[n]["blocks"].items() if v in s.get("by_set", {})), None)
            cells.append(f"{g['calls']}/{g['n']}; {g['right']} right; {_phases(g['calls_by_phase'])}" if g else "–")
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    lines += ["", "**Negatives** (calls / datasets; false positives; the calls made):", "",
              "| kind | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    kinds = [k for k in NEGATIVES if any(k in s.get("negatives", {}).get("by_kind", {}) for s in runs.values())]
    for kind in kinds:
        cells = []
        for n in names:
            k = runs[n].get("negatives", {}).get("by_kind", {}).get(kind)
            cells.append(f"{k['calls']}/{k['n']}; {k['false_positives']} false; {_phases(k['calls_by_phase'])}"
                         if k else "–")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += ["", "**Why far positives got no phase** (failed gates, a dataset can fail several; "
              "`beta_dynamics` refusals):", "", "| | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    gates = sorted({g for s in runs.values() for g in s["blocks"]["far"]["failed_gates"]})
    for g in gates:
        lines.append(f"| gate `{g}` | " + " | ".join(str(runs[n]["blocks"]["far"]["failed_gates"].get(g, 0))
                                                  for n in names) + " |")
    lines.append("| datasets without a call | " + " | ".join(str(far(runs[n])["n"] - far(runs[n])["calls"])
                                                             for n in names) + " |")
    refs = sorted({g for s in runs.values() for g in s["blocks"]["far"]["beta_dynamics_refused"]})
    for g in refs:
        lines.append(f"| `beta_dynamics`: {g or 'unavailable'} | "
                     + " | ".join(str(runs[n]["blocks"]["far"]["beta_dynamics_refused"].get(g, 0)) for n in names)
                     + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ running

def load_records(paths) -> dict:
    """key -> record from study JSON files (``{"records": [...]}``) and partial JSON-lines files."""
    out = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as fh:
            if path.endswith(".jsonl"):
                for line in fh:
                    line = line.strip()
                    if line:
                        try:
                            r = json.loads(line)
                        except json.JSONDecodeError:       # a line cut by an interrupted run
                            continue
                        out[r["key"]] = r
            else:
                for r in json.load(fh)["records"]:
                    out[r["key"]] = r
    return out


def _code_version() -> dict:
    def git(*a):
        try:
            return subprocess.run(["git", "-C", ROOT, *a], capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    return {"commit": git("rev-parse", "HEAD"), "levysde_modified": bool(git("status", "--porcelain", "levysde"))}


def _init_worker():
    for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(k, "1")


def run(todo, workers, partial=None, progress=True) -> list:
    """Run the specs (in ``workers`` processes), appending each record to ``partial`` as it finishes."""
    fh = open(partial, "a") if partial else None
    recs = []
    t0 = time.perf_counter()

    def keep(r):
        recs.append(r)
        if fh:
            fh.write(json.dumps(r) + "\n")
            fh.flush()
        if progress and len(recs) % 20 == 0:
            print(f"  {len(recs)}/{len(todo)} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    try:
        if workers == 1:
            for sp in todo:
                keep(run_one(sp))
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed

            with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker) as pool:
                for fut in as_completed([pool.submit(run_one, sp) for sp in todo]):
                    keep(fut.result())
    finally:
        if fh:
            fh.close()
    return recs


def main(args) -> int:
    """``calibrate_check.py --block independent``: args from calibrate_check's parser."""
    if args.summarize:
        if args.markdown:                        # one column per file
            runs = {os.path.basename(f).split(".")[0]: summarize(list(load_records([f]).values()))
                    for f in args.summarize}
            print(markdown(runs))
            return 0
        recs = sorted(load_records(args.summarize).values(), key=lambda r: r["spec"]["seed"])
        s = summarize(recs)
        if args.json:
            print(json.dumps(s, indent=1))
        else:
            print_summary(s)
        return 0
    todo = specs(args.quick)
    k, n = (int(x) for x in args.shard.split("/")) if args.shard else (0, 1)
    if not (n >= 1 and 0 <= k < n):
        print("calibrate_check: --shard must be K/N with 0 <= K < N", file=sys.stderr)
        return 2
    todo = todo[k::n]
    partial = args.out.removesuffix(".gz") + ".partial.jsonl" if args.out else None
    done = load_records([args.out, partial]) if args.out and not args.fresh else {}
    if args.out and args.fresh and os.path.exists(partial):
        os.remove(partial)
    keys = {spec_key(sp) for sp in todo}
    have = {key: r for key, r in done.items() if key in keys}
    rest = [sp for sp in todo if spec_key(sp) not in have]
    # parameter sets and negative kinds interleaved (each dataset at its fractional place in its group):
    # a run cut short still holds every group in proportion (--summarize OUT.partial.jsonl)
    def group(sp):
        return sp["block"], sp["kind"], sp["set"] if sp["block"] != "negative" else ""

    size, seen, place = {}, {}, []
    for sp in rest:
        size[group(sp)] = size.get(group(sp), 0) + 1
    for sp in rest:
        g = group(sp)
        place.append((seen.get(g, 0) + 0.5) / size[g])
        seen[g] = seen.get(g, 0) + 1
    rest = [rest[i] for i in sorted(range(len(rest)), key=lambda i: (place[i], rest[i]["seed"]))]
    if have:
        print(f"calibrate_check: {len(have)} of {len(todo)} datasets already done, {len(rest)} to run",
              file=sys.stderr)
    t0 = time.perf_counter()
    load0 = os.getloadavg()[0]
    new = run(rest, args.workers, partial)
    recs = sorted(list(have.values()) + new, key=lambda r: r["spec"]["seed"])
    s = summarize(recs)
    meta = {"command": "python benchmarks/calibrate_check.py --block independent" + (" --quick" if args.quick else "")
            + (f" --shard {args.shard}" if args.shard else ""),
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), **_code_version(),
            "wall_s": round(time.perf_counter() - t0, 1), "workers": args.workers,
            "load_avg_1min": [round(load0, 2), round(os.getloadavg()[0], 2)], "n_run_now": len(new)}
    if args.out:
        tmp = args.out + ".tmp"
        with (gzip.open(tmp, "wt") if args.out.endswith(".gz") else open(tmp, "w")) as fh:
            json.dump({"meta": meta, "summary": s, "records": recs}, fh, separators=(",", ":"))
            fh.write("\n")
        os.replace(tmp, args.out)
        if os.path.exists(partial):
            os.remove(partial)
    if args.json:
        print(json.dumps(dict(s, meta=meta), indent=1))
    else:
        print(f"calibrate_check --block independent: {len(recs)} datasets ({len(new)} run now) in "
              f"{meta['wall_s']} s, {args.workers} workers")
        print_summary(s)
    return 0
