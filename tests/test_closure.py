"""The closure test of `levysde check`: the spectrum's tail rate against the dynamics' root
(levysde.inference.check.closure_test; docs/calibration.md, "The closure test")."""
import json
import math
import os
import sys

import numpy as np
import pytest
from scipy import stats

from levysde.core.status import Estimate, Status, unavailable
from levysde.inference.check import CLOSURE_Z, check_trajectories, closure_test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import _independent_sde as gen  # noqa: E402

#: conc_a1.5 of the calibration: beta* = 1.460 (the generated model's exact root)
SET = dict(eta_j=1.5, eta_g=0.1, alpha=1.5, lam=2.0)


@pytest.fixture(scope="module")
def stationary():
    """384 independent neurons of the independent generator, 120 records 0.3 apart, a saturating
    drift with gamma = 1.5 kappa and z0 = 0.5."""
    z, t, _ = gen.simulate(gen.Drift("saturating", kappa=1.0, gamma=1.5, z0=0.5), **SET, n_neurons=384,
                           n_records=120, record_dt=0.3, burn_in=30.0, seed=3)
    return z, t


def test_closure_z_and_combination_by_hand():
    tail, dyn = Estimate(1.2, 0.1), Estimate(1.5, 0.2)
    c = closure_test(tail, dyn)
    z = (1.2 - 1.5) / math.hypot(0.1, 0.2)
    assert c.status is Status.OK and c.z == pytest.approx(z, rel=1e-12)
    w = np.array([0.1, 0.2]) ** -2.0
    assert c.combined.value == pytest.approx((w @ [1.2, 1.5]) / w.sum(), rel=1e-12)
    assert c.combined.se == pytest.approx(w.sum() ** -0.5 * max(1.0, abs(z)), rel=1e-12)   # Birge's ratio
    assert c.phase == "concentrated"
    assert c.probabilities["concentrated"] == pytest.approx(stats.norm.cdf((c.combined.value - 1) / c.combined.se))
    # just beyond the critical value: FAILED, no combination, no phase
    far = Estimate(1.5 - 1.0001 * CLOSURE_Z * math.hypot(0.1, 0.2), 0.1)
    f = closure_test(far, dyn)
    assert f.status is Status.FAILED and abs(f.z) > CLOSURE_Z and f.phase is None and not f.combined.ok
    # a refused or error-less estimate: UNAVAILABLE, never a pass
    rejected = Estimate(1.2, 0.1, status=Status.REJECTED)
    for a, b in ((unavailable("refused"), dyn), (tail, Estimate(1.5)), (rejected, dyn)):
        u = closure_test(a, b)
        assert u.status is Status.UNAVAILABLE and math.isnan(u.z) and u.phase is None


def test_closure_passes_on_stationary_independent_data(stationary):
    z, t = stationary
    rep = check_trajectories(z, t, seed=1, n_boot=50, closing_loop=False)
    c = rep.closure
    assert c.status is Status.OK and abs(c.z) <= CLOSURE_Z, c.reason
    assert rep.gates["closure"].passed and c.phase == "concentrated", rep.withheld
    # the combined beta covers the generated model's root within 3 of its errors
    b = gen.model_root(SET["eta_j"], SET["eta_g"], 1.0, SET["alpha"], SET["lam"])
    assert abs(c.combined.value - b) <= 3 * c.combined.se, (c.combined, b)
    # joint: the two share neurons, their errors correlate; the combination is no worse than the worse one
    worse = max(rep.beta_tail.se, rep.beta_dynamics.se) * max(1, abs(c.z))
    assert c.joint and c.correlation > 0 and c.combined.se <= worse


def test_closure_fails_when_the_tail_comes_from_a_frozen_initial_condition(stationary):
    """16 frozen neurons far left (constant zeta: a tail rate 0.5 set by their initial values, not by the
    dynamics) next to the 384 stationary ones: the spectrum's tail is the frozen one, the dynamics' root
    is still beta* (frozen increments are 0 and leave the Lundberg equation unchanged). At the check's
    2 % threshold only the frozen neurons reach the tail (too few: the tail gate withholds the phase); at
    the 10 % threshold the tail rate is measured and the closure fails."""
    from levysde.inference.check import _beta_tail, _dyn_loo

    z, t = stationary
    frozen = -2.5 - np.random.default_rng(4).exponential(1 / 0.5, 16)
    zz = np.hstack([z, np.tile(frozen, (z.shape[0], 1))])
    rep = check_trajectories(zz, t, seed=1, n_boot=50, closing_loop=False)
    assert rep.phase is None and rep.beta_dynamics.ok
    assert rep.beta_tail.status is Status.NOT_IDENTIFIED and rep.gates["tail"].passed is False
    d = rep.as_json()
    assert d["phase"] is None and d["beta_combined"] is None
    tail, loo = _beta_tail(zz[zz.shape[0] // 2:], 16, tail_fraction=0.1)
    assert tail.ok and rep.beta_dynamics.value - tail.value > 3 * math.hypot(tail.se, rep.beta_dynamics.se)
    c = closure_test(tail, rep.beta_dynamics, tail_loo=loo, dyn_loo=_dyn_loo(rep.dynamics))
    assert c.status is Status.FAILED and c.z < -CLOSURE_Z and c.phase is None and not c.combined.ok
    assert c.joint and "differ" in c.reason


def _no_nan(x):
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(_no_nan(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return all(_no_nan(v) for v in x)
    return True


def test_json_has_the_dynamics_and_closure_keys_never_nan(stationary):
    z, t = stationary
    for data in (z, z[:, :40]):                  # enough neurons, and too few far-left increments
        d = check_trajectories(data, t, seed=1, n_boot=30, closing_loop=False).as_json()
        for key in ("beta_dynamics", "beta_dynamics_se", "closure_z", "closure_critical", "beta_combined",
                    "beta_combined_se", "closure_z_theory_tail", "closure_z_theory_dynamics"):
            assert key in d and (d[key] is None or math.isfinite(d[key])), key
        dyn = d["dynamics"]
        for key in ("cut", "n_increments", "delta_kappa", "scan", "status"):
            assert key in dyn, key
        assert all(len(row) == 4 for row in dyn["scan"])
        assert _no_nan(d) and json.loads(json.dumps(d, allow_nan=False)) == d
    assert d["beta_dynamics"] is None and d["beta_dynamics_flag"] and d["closure_z"] is None
    assert d["gates"]["closure"] is False and d["phase"] is None


def test_beta_tail_error_adds_the_threshold_systematic(stationary):
    """beta_tail's error is the jackknife error and |rate at the 3 % quantile - rate at the 2 %| in
    quadrature (both rates recomputed here as the exponential MLE n / sum(x - u))."""
    from levysde.inference.check import TAIL_FRACTION, TAIL_NEIGHBOUR_FRACTION, _beta_tail

    z, t = stationary
    rep = check_trajectories(z, t, seed=1, n_boot=50, closing_loop=False)
    late = z[z.shape[0] // 2:]
    x = -late.ravel()

    def rate(p):
        u = np.quantile(x, 1 - p)
        e = x[x > u] - u
        return e.size / e.sum()

    jk, _ = _beta_tail(late, 16)
    systematic = abs(rate(TAIL_NEIGHBOUR_FRACTION) - rate(TAIL_FRACTION))
    assert rep.beta_tail.value == pytest.approx(rate(TAIL_FRACTION), rel=1e-12)
    assert rep.beta_tail.se == pytest.approx(math.hypot(jk.se, systematic), rel=1e-9)
    d = rep.as_json()
    assert d["beta_tail_se_threshold"] == pytest.approx(systematic, rel=1e-9)
    assert "threshold" in d["beta_tail_flag"]
