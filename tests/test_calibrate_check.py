"""The calibration study of `levysde check` runs in quick mode (CI) and reports every figure
(benchmarks/calibrate_check.py; the full study's table is in docs/calibration.md)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_calibrate_check_quick_json():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "calibrate_check.py"), "--quick",
                        "--json", "--workers", "1"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["n_datasets"] == 12 and d["n_negatives"] == 6
    for key in ("coverage_1sigma", "coverage_2sigma"):
        assert set(d[key]) == {"kappa_hat", "alpha_hat", "beta_tail"}
        for v in d[key].values():
            assert v is None or 0.0 <= v <= 1.0
    # one of each negative kind (transients, ballistic drift, frozen, too few neurons/records): none gets a phase
    assert d["false_positive_rate"] == 0.0, d["false_positives"]
    assert d["coverage_1sigma"]["kappa_hat"] is not None and d["coverage_1sigma"]["beta_tail"] is not None


def test_coverage_skips_datasets_without_a_finite_truth():
    """A positive whose true phase is collapsed has beta* = NaN: no truth to cover. It must not count as
    a miss nor turn the mean standardized error into NaN; n says how many were counted."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import calibrate_check as cc

    def row(est, se, truth):
        return {"kind": "positive", "set": "s", "beta_tail": est, "beta_tail_se": se, "phase": None,
                "phase_withheld": [], "truth": {"beta_tail": truth, "kappa_hat": 1.0, "alpha_hat": 1.0, "phase": "x"}}

    rows = [row(1.0, 0.1, 1.05), row(1.0, 0.1, 1.15), row(1.0, 0.1, 1.3), row(1.0, 0.1, float("nan"))]
    assert cc.coverage(rows, "beta_tail", 1) == (1 / 3, 3)          # |z| = 0.5, 1.5, 3 over the finite truths
    assert cc.coverage(rows, "beta_tail", 2) == (2 / 3, 3)
    s = cc.summarize(rows)
    assert s["coverage_n"]["beta_tail"] == 3
    assert s["mean_standardized_error"]["beta_tail"] == pytest.approx(-(0.5 + 1.5 + 3.0) / 3)


def test_full_study_design():
    """416 datasets: the 200 of issue 11, 120 extra positives, 72 + 24 jump-dominated positives (sizes of
    real runs: H 64-1024, R 50-200 for positives), every dataset with its own seed."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import calibrate_check as cc

    sp = cc.specs(False)
    blocks = [s["block"] for s in sp]
    assert [blocks.count(b) for b in ("original", "extra", "alpha", "alpha_small")] == [200, 120, 72, 24]
    assert len({s["seed"] for s in sp}) == len(sp)
    pos = [s for s in sp if s["kind"] == "positive"]
    assert all(64 <= s["H"] <= 1024 and 50 <= s["R"] <= 200 for s in pos)
    assert {s["set"] for s in sp if s["block"] == "original"} == set(cc.PARAM_SETS) - set(cc.ALPHA_SETS)


# ------------------------------------------------------------------ the study on the independent generator

def _study():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import _check_study as cs

    return cs


@pytest.mark.slow
def test_independent_study_quick_runs_and_resumes(tmp_path):
    """The quick study (8 datasets: far, near the boundaries, four negative kinds) runs, writes its records
    with truth, estimates, call and gates, and a second run with the same --out reuses every record."""
    out = tmp_path / "study.json.gz"
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "calibrate_check.py"), "--block", "independent",
           "--quick", "--json", "--workers", "1", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["n_datasets"] == 8 and s["errors"] == []
    assert set(s["blocks"]) == {"far", "near_critical", "near_threshold"}
    assert set(s["negatives"]["by_kind"]) == {"spreading", "moving", "collapsed", "common_jumps"}
    for b in s["blocks"].values():
        assert b["calls"] <= b["n"] and set(b["coverage"]) >= {"kappa_hat", "beta_tail", "beta_dynamics",
                                                               "beta_theory", "beta_combined"}
        for c in b["coverage"].values():
            assert c["cov1"] is None or 0.0 <= c["cov1"] <= c["cov2"] <= 1.0
    cs = _study()
    recs = list(cs.load_records([str(out)]).values())
    assert len(recs) == 8 and not os.path.exists(str(out).removesuffix(".gz") + ".partial.jsonl")
    r = next(r for r in recs if r["spec"]["block"] == "far")
    assert r["truth"]["beta_star"] == pytest.approx(r["truth"]["beta_model"], rel=1e-3)
    assert {"v", "se", "z"} <= set(r["est"]["beta_tail"]) and "closure" in r["gates"]
    spread = next(r for r in recs if r["spec"]["kind"] == "spreading")
    assert spread["measured"]["std_growth"] >= 0.10             # the spreading control spreads
    p2 = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert p2.returncode == 0 and "8 of 8 datasets already done, 0 to run" in p2.stderr
    assert json.loads(p2.stdout)["blocks"] == s["blocks"]


def _rec(block, kind, z, phase, truth_phase, odds=None, right=None, gates=None):
    return {"spec": {"block": block, "kind": kind, "set": "s", "drift": "d", "ratio": 1.0, "delta": 0.1, "Q": 256,
                     "R": 100, "seed": 0},
            "truth": {"phase": truth_phase, "right_calls": right if right is not None else [truth_phase]},
            "est": {"beta_tail": {"z": z}, "kappa_hat": {"z": None}}, "phase": phase, "odds": odds,
            "gates": gates or {}, "withheld": [], "dynamics": {"message": "refused: too few increments"},
            "measured": {"std_growth": 0.2, "median_shift": 0.0}}


def test_study_accounting_on_known_records():
    """Coverage, z moments, power, right calls, calls at odds >= 0.9, false positives per kind and the
    refusal counts on hand-made records whose answers are known."""
    cs = _study()
    z = [0.5, -1.5, 3.0, -0.2, 1.0]                 # |z| <= 1: 3 of 5; <= 2: 4 of 5
    far = [_rec("far", "positive", z[0], "broad", "broad", 0.95),
           _rec("far", "positive", z[1], "concentrated", "broad", 0.97),        # wrong, stated 0.97
           _rec("far", "positive", z[2], "broad", "broad", 0.6),
           _rec("far", "positive", z[3], None, "broad", gates={"closure": False, "jump_fit": False}),
           _rec("far", "positive", z[4], None, "concentrated", gates={"closure": False})]
    neg = [_rec("negative", "collapsed", None, "collapsed", None, 0.99, right=["collapsed"]),
           _rec("negative", "collapsed", None, "concentrated", None, 0.99, right=["collapsed"]),
           _rec("negative", "spreading", None, None, None, right=[]),
           _rec("negative", "spreading", None, "broad", None, 0.5, right=[])]
    s = cs.summarize(far + neg)
    c = s["blocks"]["far"]["coverage"]["beta_tail"]
    assert (c["n"], c["cov1"], c["cov2"]) == (5, 0.6, 0.8)
    assert c["z_mean"] == pytest.approx(np.mean(z), abs=1e-3) and c["z_sd"] == pytest.approx(np.std(z, ddof=1),
                                                                                            abs=1e-3)
    assert s["blocks"]["far"]["coverage"]["kappa_hat"]["n"] == 0
    b = s["blocks"]["far"]
    assert (b["n"], b["calls"], b["power"], b["right"]) == (5, 3, 0.6, 2)
    assert b["right_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert (b["calls_odds_0.9"], b["right_odds_0.9"], b["right_rate_odds_0.9"]) == (2, 1, 0.5)
    assert b["failed_gates"] == {"closure": 2, "jump_fit": 1}
    assert b["beta_dynamics_refused"] == {"refused": 5}          # no beta_dynamics value in any record
    n = s["negatives"]
    assert (n["n"], n["false_positives"]) == (4, 2) and n["false_positive_rate"] == 0.5
    assert n["by_kind"]["collapsed"]["false_positives"] == 1 and n["by_kind"]["spreading"]["false_positives"] == 1
    assert n["by_kind"]["collapsed"]["calls_by_phase"] == {"collapsed": 1, "concentrated": 1}
    lo, hi = cs.wilson(2, 4)
    assert lo < 0.5 < hi and n["false_positive_ci95"] == [lo, hi]


def test_study_zscore_scales():
    """z on the linear scale, and on the log scale where a log-scale error is reported (kappa_hat)."""
    cs = _study()
    assert cs.zscore({"v": 1.2, "se": 0.1}, 1.0) == pytest.approx(2.0)
    assert cs.zscore({"v": 1.2, "se": 0.1, "lse": 0.2}, 1.0) == pytest.approx(np.log(1.2) / 0.2)
    assert cs.zscore({"v": 1.2, "se": None}, 1.0) is None and cs.zscore({"v": 1.2, "se": 0.1}, float("nan")) is None
    assert cs.zscore({"v": None, "se": 0.1}, 1.0) is None


def test_study_design():
    """380 datasets, each with its own seed: far positives inside the goals' target set (|beta* - 1| >= 0.3,
    eta_J >= 1.3 eta_J*, Q >= 256, R >= 100, Delta kappa <= 1) over both phases and Delta 0.1, 0.3, 1; near
    the boundaries |beta* - 1| < 0.15 or eta_J within 20 % of eta_J*; negatives of six kinds (truth from
    levysde.theory.classify)."""
    import levysde

    cs = _study()
    sp = cs.specs(False)
    n_fine = len(cs.FAR_SETS) * cs.FINE_PER_SET + sum(cs.FINE_NEGATIVES.values())
    n = 380 + n_fine
    assert len(sp) == n and len({s["seed"] for s in sp}) == n and len({cs.spec_key(s) for s in sp}) == n

    done = {}

    def cl(p):
        if tuple(p) not in done:
            done[tuple(p)] = levysde.classify(p[0], eta_g=p[1], kappa=p[2], alpha=p[3], lam=p[4])
        return done[tuple(p)]

    phases = set()
    for s in sp:
        r = cl(s["params"])
        if s["block"] == "fine":        # the far sets and two negative kinds recorded often
            assert (s["delta"], s["Q"], s["R"]) == (0.01, 1024, 4000)
            assert s["kind"] == "positive" and s["set"] in cs.FAR_SETS or s["kind"] in cs.FINE_NEGATIVES
            if s["kind"] == "collapsed":
                assert str(r.phase) == "collapsed"
            continue
        assert 256 <= s["Q"] <= 1024 and 100 <= s["R"] <= 400 and s["delta"] * s["params"][2] <= 1 + 1e-12
        if s["block"] == "far":
            assert abs(float(r.beta_star) - 1) >= 0.3 and s["params"][0] >= 1.3 * float(r.eta_j_star)
            assert s["drift"] != "ou" and s["z0"] != 0
            phases.add(str(r.phase))
        elif s["block"] == "near_critical":
            assert abs(float(r.beta_star) - 1) < 0.15
        elif s["block"] == "near_threshold":
            assert 0.8 <= s["params"][0] / float(r.eta_j_star) <= 1.2
        elif s["kind"] == "collapsed":
            assert str(r.phase) == "collapsed"
    assert phases == {"broad", "concentrated"}
    far = [s for s in sp if s["block"] == "far"]
    assert {s["delta"] for s in far} == {0.1, 0.3, 1.0} and len({s["params"][3] for s in far}) >= 4
    kinds = [s["kind"] for s in sp if s["block"] == "negative"]
    assert {k: kinds.count(k) for k in set(kinds)} == cs.NEGATIVES


def test_generator_noise_scale_and_moving_equilibrium():
    """The generator's non-stationary controls against the Euler OU chain's closed forms (eta_J = 0):
    a noise amplitude a multiplies the stationary variance by a^2 (Euler: 2 eta_G / (2 gamma - gamma^2 dt));
    an equilibrium moving at speed v is followed with the lag v/gamma (mean z0 + v s - v/gamma)."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import _independent_sde as gen

    gamma, eta_g, dt, Q = 2.0, 0.1, 0.01, 4000
    ou = gen.Drift("ou", kappa=1.0, gamma=gamma, z0=0.5)
    z, _, _ = gen.simulate(ou, eta_j=0.0, eta_g=eta_g, alpha=1.5, lam=1.0, n_neurons=Q, n_records=2, record_dt=1.0,
                           dt=dt, burn_in=5.0, seed=3, noise_scale=lambda s: 2.0)
    var = 4.0 * 2 * eta_g / (2 * gamma - gamma ** 2 * dt)
    v_hat = z[-1].var(ddof=1)
    assert abs(v_hat - var) < 4 * var * np.sqrt(2 / Q), (v_hat, var)
    v = 0.5
    z, t, _ = gen.simulate(ou, eta_j=0.0, eta_g=eta_g, alpha=1.5, lam=1.0, n_neurons=Q, n_records=11,
                           record_dt=1.0, dt=dt, burn_in=5.0, seed=4, z0_shift=lambda s: v * s)
    s = np.arange(11) * 1.0
    se = np.sqrt(eta_g / gamma / Q)
    assert np.max(np.abs(z.mean(axis=1) - (0.5 + v * s - v / gamma))) < 5 * se


@pytest.mark.parametrize("args, words", [
    (["--summarize", "x.json"], "--block independent only"),
    (["--block", "independent", "--markdown"], "--markdown needs --summarize"),
    (["--block", "independent", "--summarize", "no_such_study.json.gz"], "no such file"),
])
def test_calibrate_check_options_that_do_not_apply_are_refused(args, words):
    """Options that would be ignored (and start a long study instead) or a missing file: one line,
    exit 2, before any work."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "calibrate_check.py"), *args],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and words in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
