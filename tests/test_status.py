"""Outcomes as data (levysde.core.status): decisions follow the Status, never the wording of a message.

Each test rewords messages (or gives a status a misleading message) and checks that the decision
is the one the status prescribes (docs/specification.md §8: which estimates get an error, which
gates withhold the phase)."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from levysde.core.status import Estimate, Flag, Status, unavailable, with_se

#: words the old text-keyed control flow looked for: a message made of them must decide nothing
DECOY = "no significant plateau; no plateau; not run; at the edge; not identified; plateau not reached"


def test_estimate_status_defaults_from_the_value():
    assert Estimate(0.3, 0.1).status is Status.OK
    assert Estimate(float("nan")).status is Status.UNAVAILABLE
    assert Estimate(float("inf"), flag="overflow").status is Status.UNAVAILABLE
    assert unavailable("closing loop skipped", Status.NOT_RUN).status is Status.NOT_RUN
    with pytest.raises(TypeError, match="Status"):
        Estimate(0.3, status="ok")


@pytest.mark.parametrize("status, keeps_error", [(Status.OK, True), (Status.REJECTED, True),
                                                  (Status.OUT_OF_DOMAIN, True), (Status.AT_BOUND, False),
                                                  (Status.NOT_IDENTIFIED, False), (Status.NOT_SIGNIFICANT, False)])
@pytest.mark.parametrize("message", ["at the edge: alpha_hat sits at a bound", DECOY, "reworded entirely"])
def test_with_se_drops_the_error_by_status_not_by_message(status, keeps_error, message):
    e = with_se(Estimate(0.7), 0.2, Flag(status, message))
    assert e.value == 0.7 and e.flag == message and e.status is status
    assert (e.se == 0.2) is keeps_error and math.isnan(e.se) is not keeps_error
    # no flag: the estimate keeps its own status and message
    kept = with_se(Estimate(0.7, flag=message, status=status), 0.2)
    assert kept.status is status and kept.flag == message and (kept.se == 0.2) is keeps_error
    # an unavailable estimate stays as it is
    u = unavailable("too few increments")
    assert with_se(u, 0.2, Flag(status, message)) is u


def _patch_flags(monkeypatch, message):
    """Reword every flag of kappa_flag and edge_flags (where they are looked up) to ``message``."""
    from levysde.inference import drift_fit, noise_fit, sde_fit

    real_k, real_e = drift_fit.kappa_flag, noise_fit.edge_flags

    def kappa_flag(form, se):
        f = real_k(form, se)
        return None if f is None else Flag(f.status, message)

    def edge_flags(*a, **kw):
        return tuple(None if f is None else Flag(f.status, message) for f in real_e(*a, **kw))

    for mod in (drift_fit, sde_fit):
        monkeypatch.setattr(mod, "kappa_flag", kappa_flag)
    for mod in (noise_fit, sde_fit):
        monkeypatch.setattr(mod, "edge_flags", edge_flags)


def _decisions(rep):
    f = rep.fit
    ests = (f.kappa, f.noise.eta_g, f.noise.eta_j, f.noise.alpha, f.noise.lam,
            rep.prediction.beta, rep.beta_tail, rep.ks)
    return ([(repr(float(e.value)), repr(float(e.se)), e.status) for e in ests],      # repr: NaN == NaN
            rep.prediction.status, rep.prediction.phase,
            {k: g.passed for k, g in rep.gates.items()}, len(rep.withheld), rep.phase)


@pytest.mark.parametrize("message", ["reworded", DECOY])
def test_check_decisions_do_not_change_when_the_messages_are_reworded(monkeypatch, message):
    """A late part whose fit is flagged (plateau not reached, eta_G and alpha at a bound): the errors,
    statuses, prediction and gates are the same with every flag message reworded."""
    from levysde.inference.check import check_trajectories

    rng = np.random.default_rng(1)
    rng.exponential(size=(40, 64))
    z = -rng.exponential(1 / 0.8, size=(60, 64))            # i.i.d. records: no plateau in reach
    step = np.arange(60.0)
    before = check_trajectories(z, step, closing_loop=False, n_boot=30)
    statuses = {before.fit.kappa.status, before.fit.noise.eta_g.status, before.fit.noise.alpha.status}
    assert {Status.NOT_IDENTIFIED, Status.AT_BOUND} <= statuses, statuses        # the flags under test occur
    _patch_flags(monkeypatch, message)
    after = check_trajectories(z, step, closing_loop=False, n_boot=30)
    assert after.fit.kappa.flag == message                                      # the patch took effect
    assert _decisions(after) == _decisions(before)


def _report(ks, kappa=None, alpha=None, prediction=None):
    from levysde.inference.check import CheckReport, stationarity_test

    u = unavailable("not computed in this test")
    fit = None
    if kappa is not None:
        noise = SimpleNamespace(mode="jumps", eta_g=Estimate(0.1, 0.01), eta_j=Estimate(3.0, 0.5),
                                alpha=alpha or Estimate(0.8, 0.1), lam=Estimate(1.0, 0.2))
        fit = SimpleNamespace(kappa=kappa, noise=noise, n_neurons=64, replicates=np.zeros((0, 5)),
                              values=lambda: np.array([kappa.value, 0.1, 3.0, 0.8, 1.0]),
                              drift=SimpleNamespace(form={}))
    return CheckReport("gate", fit, prediction, u, u, None, None, ks, u,
                       stationarity=stationarity_test(np.zeros((3, 2)), np.arange(3.0)))


@pytest.mark.parametrize("message", ["closing loop not run", "skipped on request", DECOY])
def test_closing_loop_gate_follows_the_ks_status(message):
    """The closing loop is a check of the fitted SDE: it decides whether beta_theory is reported."""
    from levysde.inference.check import _gates

    rep = _report(unavailable(message, Status.NOT_RUN), kappa=Estimate(0.9, 0.1))
    _gates(rep, 100, 64)
    assert "closing_loop" not in rep.model_checks            # not run: the check is not applied
    rep = _report(unavailable(message), kappa=Estimate(0.9, 0.1))     # could not be computed: it fails
    _gates(rep, 100, 64)
    g = rep.model_checks["closing_loop"]
    assert g.passed is False and g.status is Status.FAILED and g.reason == f"closing loop: {message}"
    assert "closing_loop" not in rep.gates


@pytest.mark.parametrize("message", [None, "reworded", DECOY])
def test_plateau_and_jump_gates_follow_the_status(message):
    from levysde.inference.check import _gates

    ks = unavailable("x", Status.NOT_RUN)
    for status, passes in ((Status.OK, True), (Status.REJECTED, False), (Status.OUT_OF_DOMAIN, False),
                           (Status.NOT_IDENTIFIED, False)):
        rep = _report(ks, kappa=Estimate(0.9, 0.1, message, status=status))
        _gates(rep, 100, 64)
        assert rep.model_checks["plateau"].passed is passes, (status, message)
    # alpha at a bound (no error): the jump check fails with its message whatever it says
    alpha = with_se(Estimate(0.05), 0.1, Flag(Status.AT_BOUND, message or "x"))
    rep = _report(ks, kappa=Estimate(0.9, 0.1), alpha=alpha)
    _gates(rep, 100, 64)
    g = rep.model_checks["jump_fit"]
    assert g.passed is False and g.reason == f"jump parameters: {message or 'x'}"
    # an OK alpha with a remark passes
    rep = _report(ks, kappa=Estimate(0.9, 0.1), alpha=Estimate(0.8, 0.1, message))
    _gates(rep, 100, 64)
    assert rep.model_checks["jump_fit"].passed is True


@pytest.mark.parametrize("status, predicted", [(Status.OK, True), (Status.NOT_IDENTIFIED, True),
                                                (Status.AT_BOUND, True), (Status.REJECTED, True),
                                                (Status.NOT_SIGNIFICANT, False), (Status.OUT_OF_DOMAIN, False)])
@pytest.mark.parametrize("message", ["reworded", DECOY])
def test_prediction_needs_a_restoring_plateau_by_status(status, predicted, message):
    """beta* is predicted unless kappa_hat is not significant or not restoring (by status): without
    jumps beta* = kappa/eta_G (docs/specification.md §4), here 0.5/0.1 = 5."""
    from levysde.inference.check import _closing_loop
    from levysde.inference.sde_fit import predict

    k = Estimate(0.5, 0.05, message, status=status)
    noise = SimpleNamespace(mode="gauss", eta_g=Estimate(0.1, 0.01), eta_j=Estimate(0.0),
                            alpha=unavailable("no jumps"), lam=unavailable("no jumps"), model_se=np.full(4, np.nan))
    fit = SimpleNamespace(kappa=k, noise=noise, replicates=np.zeros((0, 5)), drift=None,
                          values=lambda: np.array([0.5, 0.1, 0.0, np.nan, np.nan]))
    p = predict(fit, n_boot=10)
    assert (p.status is Status.OK) is predicted and p.beta.ok is predicted
    if predicted:
        assert p.beta.value == pytest.approx(5.0, rel=1e-9)
    else:
        assert p.phase == "unavailable" and p.beta.flag == f"no prediction: {message}"
        ks, tail = _closing_loop(fit, None, 0)          # returns before simulating
        assert ks.status is Status.UNAVAILABLE and ks.flag == f"no closing loop: {message}"


def test_beta_theory_is_reported_by_the_prediction_status_and_the_model_checks():
    from levysde.inference.check import CheckReport
    from levysde.inference.sde_fit import Prediction

    u = unavailable("x", Status.NOT_RUN)
    for status, checks, reported in ((Status.OK, True, True), (Status.OK, False, False),
                                     (Status.UNAVAILABLE, True, False)):
        pred = Prediction(Estimate(0.7, 0.1), Estimate(1.0), "broad", {"broad": 1.0}, 0.7, {}, status)
        rep = CheckReport("gate", None, pred, u, u, None, None, u, u)
        rep.add_model_check("any", checks, "reworded " + DECOY)
        assert rep.beta_theory.ok is reported and rep.phase is None        # beta_theory never makes the call
        if not reported and status is Status.OK:
            assert rep.beta_theory.status is Status.NOT_IDENTIFIED and DECOY in rep.beta_theory.flag
