"""The "learned" diagnostic (docs/specification.md §8 (i)): torch-free trivial loss and loss ratio, and
`levysde check` withholding the phase of a network that did not learn."""
import json

import numpy as np
import pytest

from levysde.rnn.learned import learned_diagnostic
from levysde.rnn.teacher import teacher_scale, teacher_time_scales, trivial_loss
from tests.helpers import run_cli


def test_trivial_loss_closed_forms():
    # delay L = 5, T = 20, window t >= 10: every target is a unit-variance input
    assert trivial_loss({"task": "delay", "seq_len": 20, "loss_from_resolved": 10, "delay": 5}) == 1.0
    # window t >= 2 with L = 5: targets t = 2..4 are 0, t = 5..9 unit variance -> 5/8
    assert trivial_loss({"task": "delay", "seq_len": 10, "loss_from_resolved": 2, "delay": 5}) == 5 / 8
    # adding: Var(U1 + U2) = 2/12, plus noise^2
    assert trivial_loss({"task": "adding", "seq_len": 10, "target_noise": 0.5}) == pytest.approx(1 / 6 + 0.25)
    # powerlaw p = 1/2, K = T = 3, window t >= 1: w^2 ∝ (1, 1/2, 1/3) -> mean of (1.5, 11/6) / (11/6)
    v = trivial_loss({"task": "powerlaw", "seq_len": 3, "loss_from_resolved": 1, "p": 0.5, "kernel": 0})
    assert v == pytest.approx((1.5 + 11 / 6) / 2 / (11 / 6), rel=1e-14)
    assert trivial_loss({"task": "longmem", "seq_len": 10, "target_noise": 0.1}) == pytest.approx(1.01)
    assert trivial_loss({"task": "powerlaw", "seq_len": 10, "input_alpha": 1.5}) is None
    with pytest.raises(ValueError, match="task"):
        trivial_loss({"task": "nope", "seq_len": 10})


def test_teacher_time_scales_and_scale():
    tau = teacher_time_scales(5, 10000)
    np.testing.assert_allclose(tau, [1, 10, 100, 1000, 10000], rtol=1e-12)       # log-uniform
    # gamma = 1: quantiles of 1/tau^2 on [1, L]: tau = 1 / (1 - u (1 - 1/L))
    np.testing.assert_allclose(teacher_time_scales(3, 100, 1.0), [1, 1 / (1 - 0.5 * 0.99), 100], rtol=1e-12)
    for bad in [dict(n_mem=0), dict(lag_max=1), dict(gamma=-1)]:
        kw = dict(n_mem=3, lag_max=100, gamma=0.0) | bad
        with pytest.raises(ValueError, match={"n_mem": "n_mem", "lag_max": "mem_lag_max", "gamma": "mem_gamma"}[
                next(iter(bad))]):
            teacher_time_scales(**kw)
    # one integrator: c = 1 (unit stationary variance by construction)
    assert teacher_scale([7.0]) == pytest.approx(1.0, rel=1e-12)
    # two equal time scales: the sum has variance 4, c = 1/2
    assert teacher_scale([3.0, 3.0]) == pytest.approx(0.5, rel=1e-12)


def test_learned_diagnostic_rules():
    cfg = {"task": "delay", "seq_len": 20, "loss_from_resolved": 10, "delay": 5}
    run = {"loss": np.array([1.0, 0.9, 0.8, 0.3, 0.2, 0.25, 0.3, 0.2]), "config": cfg}
    ratio, learned = learned_diagnostic(run)          # median of the last 2 of 8 records / 1.0
    assert ratio == pytest.approx(0.25) and learned is True
    ratio, learned = learned_diagnostic(dict(run, trivial_loss=np.float64(0.4)))   # stored value wins
    assert ratio == pytest.approx(0.625) and learned is False
    assert learned_diagnostic(dict(run, loss=np.array([0.1, np.inf]))) == (float("inf"), False)
    with pytest.raises(ValueError, match="trivial"):
        learned_diagnostic({"loss": np.ones(3), "config": dict(cfg, input_alpha=1.2)})
    # longmem: the prequential training loss, not the (burn-in limited) probe loss
    lm = {"loss": np.full(4, 1.5), "train_loss": np.array([np.nan, 0.8, 0.2, 0.1]),
          "config": {"task": "longmem", "seq_len": 10, "target_noise": 0.0}}
    assert learned_diagnostic(lm) == (pytest.approx(0.1), True)
    with pytest.raises(ValueError, match="threshold"):
        learned_diagnostic(run, threshold=0)


def _write(path, loss, trivial=None):
    rng = np.random.default_rng(0)
    R, H = 40, 16
    zeta = -1.0 + 0.3 * rng.standard_normal((R, H))
    lags = np.geomspace(1, 1e4, 30)
    env = np.exp(-lags[None, :, None] * np.exp(zeta)[:, None, :]).mean(axis=2)
    extra = {} if trivial is None else {"trivial_loss": np.float64(trivial)}
    np.savez(path, zeta=zeta, zeta_jac=zeta, step=np.arange(R) * 10, Lambda=np.ones((R, H)), loss=loss,
             lags=lags, envelope=env, **extra,
             config=np.array(json.dumps({"kind": "rnn", "model": "diaggate", "task": "delay", "seq_len": 20,
                                         "delay": 5, "loss_from_resolved": 10, "hidden": H})))


def test_check_withholds_phase_when_not_learned(tmp_path):
    """A run whose probe loss stays at the target variance: learned false, phase null, reason in notes.
    An old-style file without trivial_loss gets it from its config (delay task: 1.0)."""
    _write(tmp_path / "no.npz", np.full(40, 0.98))
    _write(tmp_path / "yes.npz", np.full(40, 0.98), trivial=10.0)
    out = {}
    for name in ("no", "yes"):
        p = run_cli("check", tmp_path / f"{name}.npz", "--json", "--no-simulate", "--n-boot", "20")
        assert p.returncode == 0, p.stderr
        out[name] = json.loads(p.stdout)
    assert out["no"]["learned"] is False and out["no"]["loss_ratio"] == pytest.approx(0.98)
    assert out["no"]["phase"] is None and any("did not learn" in n for n in out["no"]["notes"])
    assert out["yes"]["learned"] is True and out["yes"]["loss_ratio"] == pytest.approx(0.098)
    # learned: the learned gate passes (the phase may still be withheld by the other gates of
    # levysde check: this toy file has 16 neurons and no closing loop)
    assert not any("did not learn" in r for r in out["yes"]["phase_withheld"])
    assert any("did not learn" in r for r in out["no"]["phase_withheld"])
