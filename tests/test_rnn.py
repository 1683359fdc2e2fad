"""levysde.rnn: models, retention, Jacobian diagonal, Lambda_q, tasks, run files, training (docs/specification.md §9).

Every check uses an independent truth: torch autograd, torch's own nn.GRU / nn.LSTM, closed forms.
CPU, one thread, seconds each.
"""
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.cli import main  # noqa: E402
from levysde.io.runfile import REQUIRED_KEYS, checkpoint_path, load_run, save_run  # noqa: E402
from levysde.rnn import (  # noqa: E402
    MODELS,
    TrainConfig,
    build_model,
    build_task,
    lambda_rayleigh,
    record_stats,
    sas_noise,
    train,
)
from levysde.rnn.trainer import (  # noqa: E402
    MU_FLOOR,
    _make_optimizer,
    apply_manual_decay,
    elr_envelope,
    integer_lag_grid,
    neuron_lambda,
)

torch.set_num_threads(1)

SMALL = dict(hidden=8, task="delay", delay=5, seq_len=24, batch=8, record_every=10, lr=1e-2)


def _scaled(model, factor, seed=0):
    """Perturb all weights so every term of the Jacobian matters (float64)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(factor * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return model


# ------------------------------------------------------------------------------------------
# retention and Jacobian
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["constgate", "sharedgate", "diaggate", "gru"])
def test_jacobian_diagonal_matches_autograd(name):
    H, B, t = 5, 3, 6
    m = _scaled(build_model(name, 2, H, 1, seed=1).double(), 0.6)
    x = torch.randn(B, 10, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    tr = m.trace(x)
    h_prev = tr.h[:, t - 1]

    if name == "gru":
        def step(h):
            return m.rnn(x[:, t:t + 1], h[None])[0][:, 0]
    else:
        def step(h):
            return m.hidden_states(x[:, t:t + 1], h0=h)[:, 0]

    J = torch.autograd.functional.jacobian(step, h_prev)  # (B, H, B, H)
    diag = torch.stack([torch.diagonal(J[b, :, b, :]) for b in range(B)])
    np.testing.assert_allclose(tr.jac[:, t].numpy(), diag.numpy(), rtol=1e-10, atol=1e-12)
    # trace's states are the model's own forward states
    full = m.rnn(x)[0] if name == "gru" else m.hidden_states(x)
    np.testing.assert_allclose(tr.h.numpy(), full.detach().numpy(), rtol=1e-12, atol=1e-12)
    # the Jacobian is not just the retention (the check has power)
    assert (tr.jac[:, t] - tr.r[:, t]).abs().max().item() > 1e-3


def test_lstm_jacobian_is_dc_dc_through_h():
    """LSTM: J = d c_t / d c_{t-1} with h_{t-1} = o_{t-1} tanh(c_{t-1}), via nn.LSTM and autograd."""
    H, B, t = 5, 3, 6
    m = _scaled(build_model("lstm", 2, H, 1, seed=1).double(), 0.6)
    x = torch.randn(B, 10, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    tr = m.trace(x)
    _, (h1, c1) = m.rnn(x[:, :t])
    o_prev = (h1 / torch.tanh(c1))[0]

    def step(c):
        return m.rnn(x[:, t:t + 1], ((o_prev * torch.tanh(c))[None], c[None]))[1][1][0]

    J = torch.autograd.functional.jacobian(step, c1[0].detach())
    diag = torch.stack([torch.diagonal(J[b, :, b, :]) for b in range(B)])
    np.testing.assert_allclose(tr.jac[:, t].numpy(), diag.numpy(), rtol=1e-9, atol=1e-12)
    assert (tr.jac[:, t] - tr.r[:, t]).abs().max().item() > 1e-3


def test_gru_retention_is_torch_update_gate():
    H, B, T = 6, 4, 12
    m = _scaled(build_model("gru", 1, H, 1, seed=3), 0.3)
    x = torch.randn(B, T, 1, generator=torch.Generator().manual_seed(4))
    tr = m.trace(x)
    hs = m.rnn(x)[0].detach().double().numpy()          # torch's own states
    Wi, Wh, bi, bh = (p.detach().double().numpy() for p in m.weights())
    xs = x.double().numpy()
    h_prev = np.concatenate([np.zeros((B, 1, H)), hs[:, :-1]], 1)
    pre_z = xs @ Wi[H:2 * H].T + bi[H:2 * H] + h_prev @ Wh[H:2 * H].T + bh[H:2 * H]
    z = 1 / (1 + np.exp(-pre_z))
    np.testing.assert_allclose(tr.r.numpy(), z, atol=2e-6)
    np.testing.assert_allclose(tr.neg_log_r.numpy(), -np.log(z), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(tr.h.numpy(), hs, atol=2e-6)


def test_lstm_retention_is_torch_forget_gate_with_both_biases():
    H, B, T = 6, 4, 12
    m = _scaled(build_model("lstm", 1, H, 1, seed=3), 0.3)
    with torch.no_grad():                   # distinct, large bias_hh: forgetting it would show
        m.rnn.bias_hh_l0[H:2 * H] = torch.linspace(-2, 2, H)
    x = torch.randn(B, T, 1, generator=torch.Generator().manual_seed(4))
    tr = m.trace(x)
    hs = m.rnn(x)[0].detach().double().numpy()
    Wi, Wh, bi, bh = (p.detach().double().numpy() for p in m.weights())
    h_prev = np.concatenate([np.zeros((B, 1, H)), hs[:, :-1]], 1)
    s = slice(H, 2 * H)
    f = 1 / (1 + np.exp(-(x.double().numpy() @ Wi[s].T + bi[s] + bh[s] + h_prev @ Wh[s].T)))
    np.testing.assert_allclose(tr.r.numpy(), f, atol=2e-6)
    np.testing.assert_allclose(tr.h.numpy(), hs, atol=2e-6)


def test_diaggate_hand_set_mu_bar_is_softplus_of_bias():
    H = 7
    m = build_model("diaggate", 1, H, 1, seed=0).double()
    b = torch.linspace(-4.0, 3.0, H, dtype=torch.float64)
    with torch.no_grad():
        m.W_a.zero_(), m.U_a.zero_(), m.b_a.copy_(b)
    task = build_task("delay", 20)
    x, y = task.batch(5, 0, 1, 0)
    tr = m.trace(x.double())
    mu = tr.neg_log_r[:, task.loss_from:].mean((0, 1)).numpy()
    sig = 1 / (1 + np.exp(-b.numpy()))
    np.testing.assert_allclose(mu, -np.log(1 - sig), rtol=1e-13)
    # and through the recorder (float32 model): zeta = log(-log(1 - sigmoid(b)))
    m32 = build_model("diaggate", 1, H, 1, seed=0)
    with torch.no_grad():
        m32.W_a.zero_(), m32.U_a.zero_(), m32.b_a.copy_(b.float())
    opt = torch.optim.SGD(m32.parameters(), lr=0.1)
    r = record_stats(m32, task, x, y, opt, "sgd", integer_lag_grid(10, 100))
    np.testing.assert_allclose(r["zeta"], np.log(-np.log(1 - sig)), rtol=1e-6)


# ------------------------------------------------------------------------------------------
# ConstGate: zeta frozen, zeta^(1) moves
# ------------------------------------------------------------------------------------------
def test_constgate_zeta_constant_and_exact_while_jacobian_zeta_moves():
    a = 0.1
    res = train(TrainConfig(model="constgate", gate_a=a, steps=40, seed=3, **SMALL))
    z = res["zeta"]
    assert z.shape == (5, 8)
    assert np.all(z == z[0, 0])                                  # exactly constant
    np.testing.assert_allclose(z, math.log(-math.log1p(-a)), rtol=1e-12)
    assert np.all(res["zeta_clips"] == 0)
    zj = res["zeta_jac"]
    assert np.isfinite(zj).all()
    assert np.abs(zj[-1] - zj[0]).max() > 1e-3                   # moves as W trains
    # per-neuron constants via chrono: zeta_q = log(-log(1 - a_q)), spread > 0
    m = build_model("constgate", 1, 8, 1, init="chrono", t_max=100.0, seed=0)
    tr = m.trace(torch.zeros(2, 6, 1))
    np.testing.assert_allclose(tr.neg_log_r[0, 0].numpy(), -np.log1p(-m.a.double().numpy()), rtol=1e-7)
    assert m.a.min() >= 1 / 100 - 1e-7 and m.a.max() <= 0.5 + 1e-7 and m.a.std() > 0


def test_constgate_transport_equals_envelope():
    """Constant gates: <prod_k r> = (1 - a_q)^l exactly, so transport = envelope for l <= window."""
    res = train(TrainConfig(model="constgate", init="chrono", t_max=50.0, steps=10, transport=True,
                            n_lags=12, lag_max=100, seed=1, optimizer="adam", **SMALL))
    lags = res["lags"]
    ok = lags <= 24 - 12
    assert ok.sum() >= 4 and np.isnan(res["transport"][:, ~ok]).all()
    np.testing.assert_allclose(res["transport"][:, ok], res["envelope"][:, ok], rtol=1e-6)


# ------------------------------------------------------------------------------------------
# guards: masking and clipping
# ------------------------------------------------------------------------------------------
def test_expanding_neurons_masked_and_counted():
    H = 4
    m = build_model("constgate", 1, H, 1, gate_a=0.9, seed=0)
    with torch.no_grad():
        m.W.copy_(torch.diag(torch.tensor([3.0, 3.0, 0.1, 0.1]))), m.U.zero_(), m.b.zero_()
    task = build_task("delay", 10)
    x, y = task.batch(2, 0, 1, 0)
    r = record_stats(m, task, x, y, torch.optim.SGD(m.parameters(), lr=0.1), "sgd", integer_lag_grid(5, 50))
    # h = 0 throughout: J = 0.1 + 0.9 * W_qq -> 2.8 (expanding, masked) and 0.19
    assert r["jac_masked"] == 2
    assert np.isnan(r["zeta_jac"][:2]).all()
    np.testing.assert_allclose(r["zeta_jac"][2:], np.log(-np.log(0.1 + 0.9 * 0.1)), rtol=1e-6)


def test_saturated_gates_clip_to_floor_and_count():
    H = 3
    m = build_model("diaggate", 1, H, 1, seed=0)
    with torch.no_grad():
        m.W_a.zero_(), m.U_a.zero_(), m.b_a.copy_(torch.tensor([-200.0, -200.0, 0.0]))
    task = build_task("delay", 10)
    x, y = task.batch(2, 0, 1, 0)
    r = record_stats(m, task, x, y, torch.optim.SGD(m.parameters(), lr=0.1), "sgd", integer_lag_grid(5, 50))
    assert r["zeta_clips"] == 2
    np.testing.assert_allclose(r["zeta"], [math.log(MU_FLOOR)] * 2 + [math.log(math.log(2))], rtol=1e-6)
    assert np.isfinite(r["envelope"]).all()
    assert r["saturated"] == pytest.approx(2 / 3)


# ------------------------------------------------------------------------------------------
# Lambda_q
# ------------------------------------------------------------------------------------------
def test_lambda_rayleigh_closed_forms():
    g = torch.randn(50, generator=torch.Generator().manual_seed(0))
    eps = 1e-8
    lam = lambda_rayleigh(g, torch.full((50,), (1 - eps) ** 2, dtype=torch.float64), 0.003, eps)
    assert lam == pytest.approx(0.003, rel=1e-12)
    v = 0.25
    assert lambda_rayleigh(g, torch.full((50,), v), 0.01, eps) == pytest.approx(0.01 / (0.5 + eps), rel=1e-12)
    # 2-parameter toy: g = (3, 4), v = (1, 4), eps = 0: (9/1 + 16/2) / 25 = 0.68
    assert lambda_rayleigh(torch.tensor([3.0, 4.0]), torch.tensor([1.0, 4.0]), 0.1, 0.0) == pytest.approx(0.068)
    # zero gradient: mean of P
    assert lambda_rayleigh(torch.zeros(2), torch.tensor([1.0, 4.0]), 1.0, 0.0) == pytest.approx(0.75)


@pytest.mark.parametrize("name", ["diaggate", "gru", "lstm"])
def test_neuron_lambda_uses_the_neurons_rows(name):
    """neuron_lambda from Adam's state equals lambda_rayleigh on hand-collected rows."""
    H = 5
    m = build_model(name, 1, H, 1, seed=0)
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    task = build_task("delay", 12)
    for s in range(3):
        x, y = task.batch(4, 0, 0, s)
        opt.zero_grad()
        task.loss(m(x), y).backward()
        opt.step()
    x, y = task.batch(4, 0, 1, 0)
    opt.zero_grad()
    task.loss(m(x), y).backward()
    lam = neuron_lambda(m, opt, "adam")
    k = {"diaggate": 1, "gru": 3, "lstm": 4}[name]
    for q in range(H):
        gs, vs = [], []
        for p, kk in m.neuron_rows():
            assert kk == k
            st = opt.state[p]
            vhat = st["exp_avg_sq"].double() / (1 - 0.999 ** float(st["step"]))  # v_hat in float64
            rows = [q + j * H for j in range(k)]
            gs.append(p.grad[rows].flatten()), vs.append(vhat[rows].flatten())
        ref = lambda_rayleigh(torch.cat(gs), torch.cat(vs), 0.01, 1e-8)
        assert lam[q] == pytest.approx(ref, rel=1e-10)
    assert np.std(lam) > 0
    assert np.all(neuron_lambda(m, torch.optim.SGD(m.parameters(), lr=0.02), "sgd") == 0.02)


def test_envelope_closed_form():
    mu = np.array([0.1, 1.0])
    lam = np.array([1.0, 3.0])
    lags = np.array([1.0, 10.0])
    np.testing.assert_allclose(elr_envelope(mu, lam, lags),
                               (np.exp(-lags * 0.1) + 3 * np.exp(-lags * 1.0)) / 4, rtol=1e-14)


# ------------------------------------------------------------------------------------------
# forcing, weight decay
# ------------------------------------------------------------------------------------------
def test_sas_noise_cms():
    g = torch.Generator().manual_seed(0)
    n = 200_000
    c = sas_noise(n, 1.0, g).double()                      # Cauchy: quartiles -1, 1
    assert np.quantile(c.numpy(), [0.25, 0.75]) == pytest.approx([-1, 1], abs=0.02)
    gauss = sas_noise(n, 2.0, g).double()                   # N(0, 2)
    assert gauss.var().item() == pytest.approx(2.0, rel=0.02)
    x = sas_noise(n, 1.5, g).double()                       # E cos(kX) = exp(-|k|^1.5)
    for k in (0.5, 1.0, 2.0):
        assert torch.cos(k * x).mean().item() == pytest.approx(math.exp(-k ** 1.5), abs=0.01)
    with pytest.raises(ValueError, match="alpha"):
        sas_noise(3, 2.5)


def test_injected_forcing_is_seeded_and_targeted():
    base = dict(model="diaggate", steps=10, seed=2, optimizer="sgd", lr=1e-9,
                **{k: v for k, v in SMALL.items() if k != "lr"})
    r0 = train(TrainConfig(**base))
    r1 = train(TrainConfig(inject_alpha=1.5, inject_scale=0.05, inject_target="gate", **base))
    r2 = train(TrainConfig(inject_alpha=1.5, inject_scale=0.05, inject_target="gate", **base))
    np.testing.assert_array_equal(r1["zeta"], r2["zeta"])
    assert np.abs(r1["zeta"][-1] - r0["zeta"][-1]).max() > 1e-3
    rr = train(TrainConfig(model="constgate", inject_alpha=1.2, inject_scale=0.05,
                           **{k: v for k, v in base.items() if k != "model"}))
    assert np.all(rr["zeta"] == rr["zeta"][0, 0])   # forcing on W never moves ConstGate's zeta
    assert np.abs(rr["zeta_jac"][-1] - rr["zeta_jac"][0]).max() > 1e-3
    with pytest.raises(ValueError, match="ConstGate"):
        train(TrainConfig(model="constgate", inject_alpha=1.5, inject_scale=0.1, inject_target="gate",
                          **{k: v for k, v in base.items() if k != "model"}))


@pytest.mark.parametrize("name", ["diaggate", "gru", "lstm"])
@pytest.mark.parametrize("scaling", ["none", "mup"])
def test_no_gate_decay_leaves_gate_rows_alone(name, scaling):
    """AdamW with zero gradient moves p only by its decoupled decay lr_p * wd; lr_p = lr, or
    lr * 64 / H for the H-fan-in matrices under muP (Tensor Programs V, Table 3)."""
    H, lr, wd = 4, 0.01, 0.5
    m = build_model(name, 1, H, 1, seed=0)
    cfg = TrainConfig(model=name, hidden=H, optimizer="adamw", lr=lr, weight_decay=wd, gate_decay=False,
                      lr_scaling=scaling)
    opt, manual, wd_ = _make_optimizer(m, cfg)
    before = {n: p.detach().clone() for n, p in m.named_parameters()}
    for p in m.parameters():
        p.grad = torch.zeros_like(p)     # zero gradient: AdamW moves p only by decay
    apply_manual_decay(manual, "adamw", None, wd_)
    opt.step()
    wide = {"W", "W_a", "rnn.weight_hh_l0", "readout.weight"}
    for n, p in m.named_parameters():
        mask = m.gate_mask(p)
        mask = torch.full(p.shape, bool(mask)) if isinstance(mask, bool) else mask
        lr_p = lr * 64 / H if scaling == "mup" and n in wide else lr
        expect = torch.where(mask, before[n], before[n] * (1 - lr_p * wd))
        torch.testing.assert_close(p.detach(), expect, rtol=1e-6, atol=1e-7)
    assert any(m.gate_mask(p) is not False for p in m.parameters())


# ------------------------------------------------------------------------------------------
# tasks
# ------------------------------------------------------------------------------------------
def test_tasks_definitions():
    t = build_task("delay", 20, delay=5)
    x, y = t.batch(3, 7, 0, 4)
    torch.testing.assert_close(y[:, 5:], x[:, :-5])
    assert (y[:, :5] == 0).all()
    x2, _ = t.batch(3, 7, 0, 4)
    assert torch.equal(x, x2) and not torch.equal(x, t.batch(3, 7, 0, 5)[0])
    p = build_task("powerlaw", 30, p=0.8, kernel=10)
    x, y = p.batch(2, 0, 0, 0)
    w = (np.arange(10) + 1.0) ** -0.8
    w /= np.linalg.norm(w)
    xs = x[:, :, 0].double().numpy()
    ref = np.array([[sum(w[k] * xs[b, t - k] for k in range(10) if t - k >= 0) for t in range(30)] for b in range(2)])
    np.testing.assert_allclose(y[:, :, 0].numpy(), ref, atol=1e-5)
    a = build_task("adding", 16)
    x, y = a.batch(5, 0, 0, 0)
    assert (x[:, :, 1].sum(1) == 2).all() and (x[:, 8:, 1] == 0).all()
    torch.testing.assert_close(y[:, -1, 0], (x[:, :, 0] * x[:, :, 1]).sum(1))
    with pytest.raises(ValueError, match="delay"):
        build_task("delay", 10, delay=10)
    with pytest.raises(ValueError, match="task"):
        build_task("copy", 10)


# ------------------------------------------------------------------------------------------
# training, run file, reproducibility, resume
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODELS)
def test_every_model_learns_delay5(name):
    cfg = TrainConfig(model=name, hidden=16, task="delay", delay=5, seq_len=30, batch=16, steps=300,
                      record_every=100, lr=1e-2, seed=0, gate_a=0.5)
    res = train(cfg)
    assert res["loss"][-1] < 0.5 * res["loss"][0], res["loss"]
    assert np.isfinite(res["zeta"]).all() and np.isfinite(res["Lambda"]).all()


def test_run_file_roundtrip_and_keys(tmp_path):
    out = str(tmp_path / "run.npz")
    res = train(TrainConfig(model="gru", steps=20, seed=5, **SMALL), out)
    with np.load(out, allow_pickle=False) as z:
        files = set(z.files)
        assert set(REQUIRED_KEYS) <= files
        assert z["config"].shape == () and z["config"].dtype.kind == "U"
        cfg = json.loads(str(z["config"][()]))
    assert cfg["kind"] == "rnn" and cfg["model"] == "gru" and cfg["torch_version"] == torch.__version__
    d = load_run(out)
    R, H = 3, 8
    assert d["zeta"].shape == d["zeta_jac"].shape == d["Lambda"].shape == (R, H)
    assert d["envelope"].shape == (R, len(d["lags"])) and d["step"].tolist() == [0, 10, 20]
    for k in res:
        if k != "config":
            np.testing.assert_array_equal(d[k], res[k])
    save_run(str(tmp_path / "copy.npz"), {k: v for k, v in d.items() if k != "config"}, d["config"])
    d2 = load_run(str(tmp_path / "copy.npz"))
    assert d2["config"] == d["config"]
    np.testing.assert_array_equal(d2["envelope"], d["envelope"])
    with pytest.raises(ValueError, match="missing"):
        save_run(str(tmp_path / "bad.npz"), {"zeta": np.zeros(2)}, {})
    # rebuilding the config from the file reproduces the run
    again = train(TrainConfig.from_dict(d["config"]))
    np.testing.assert_array_equal(again["zeta"], d["zeta"])


def test_seed_reproducibility():
    cfg = dict(model="diaggate", steps=20, **SMALL)
    a, b, c = train(TrainConfig(seed=1, **cfg)), train(TrainConfig(seed=1, **cfg)), train(TrainConfig(seed=2, **cfg))
    for k in ("zeta", "zeta_jac", "Lambda", "loss", "envelope"):
        np.testing.assert_array_equal(a[k], b[k])
    assert not np.array_equal(a["zeta"], c["zeta"])


def test_interrupt_keeps_records_and_resume_matches(tmp_path):
    cfg = TrainConfig(model="lstm", steps=40, seed=4, optimizer="adam", **SMALL)
    full = train(cfg)
    out = str(tmp_path / "r.npz")
    train(cfg, out, stop_after=25)                      # "interrupted" after 25 steps
    part = load_run(out)
    assert part["step"].tolist() == [0, 10, 20]         # every record written so far is kept
    with pytest.raises(ValueError, match="exists"):
        train(cfg, out)
    with pytest.raises(ValueError, match="differs"):
        train(TrainConfig(model="lstm", steps=40, seed=5, optimizer="adam", **SMALL), out, resume=True)
    res = train(cfg, out, resume=True)
    for k in ("zeta", "zeta_jac", "Lambda", "loss", "envelope", "step"):
        np.testing.assert_array_equal(res[k], full[k])
    np.testing.assert_array_equal(load_run(out)["zeta"], full["zeta"])
    with pytest.raises(ValueError, match="checkpoint"):
        train(cfg, str(tmp_path / "none.npz"), resume=True)
    assert checkpoint_path(out).endswith("r.ckpt")


def test_config_validation_names_parameter():
    for kw, name in [({"lr": 0}, "lr"), ({"hidden": 0}, "hidden"), ({"model": "rnn"}, "model"),
                     ({"inject_alpha": 2.5}, "inject_alpha"), ({"gate_a": 1.0}, "gate_a"),
                     ({"seq_len": 1}, "seq_len"), ({"optimizer": "lbfgs"}, "optimizer")]:
        with pytest.raises(ValueError, match=name):
            TrainConfig(**kw).validate()


# ------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------
def test_cli_train_writes_run(tmp_path, capsys):
    out = str(tmp_path / "c.npz")
    assert main(["train", "--model", "sharedgate", "--task", "adding", "--seq-len", "20", "--hidden", "6",
                 "--steps", "10", "--record-every", "5", "--out", out, "--quiet", "--no-gate-decay"]) == 0
    assert "3 records" in capsys.readouterr().out
    d = load_run(out)
    assert d["config"]["gate_decay"] is False and d["config"]["task"] == "adding"
    # SharedGate: one gate for all neurons, zero spread (to reduction round-off)
    assert np.ptp(d["zeta"], axis=1).max() < 1e-12


def test_cli_resume_extends_run(tmp_path, capsys):
    out = str(tmp_path / "r.npz")
    base = ["train", "--model", "diaggate", "--task", "delay", "--seq-len", "16", "--hidden", "4",
            "--record-every", "5", "--out", out, "--quiet"]
    assert main(base + ["--steps", "10"]) == 0
    assert main(base + ["--steps", "20", "--resume"]) == 0
    assert load_run(out)["step"].tolist() == [0, 5, 10, 15, 20]
    with pytest.raises(SystemExit) as e:
        main(base + ["--steps", "20", "--resume", "--lr", "0.5"])
    assert e.value.code == 2 and "differs in ['lr']" in capsys.readouterr().err


@pytest.mark.parametrize("argv, msg", [
    (["--lr", "-1"], "--lr"), (["--model", "rnn"], "--model"), (["--device", "tpu"], "--device"),
    (["--inject-alpha", "3"], "--inject-alpha"), (["--task", "delay", "--delay", "500"], "delay"),
    (["--inject-scale", "1"], "--inject-alpha"),
])
def test_cli_bad_input_exits_2_one_line(tmp_path, capsys, argv, msg):
    with pytest.raises(SystemExit) as e:
        main(["train", "--out", str(tmp_path / "x.npz"), "--quiet"] + argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cli_cuda_unavailable(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "--device", "cuda", "--out", str(tmp_path / "x.npz"), "--quiet"])
    assert e.value.code == 2 and "CUDA is not available" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["constgate", "diaggate", "gru", "lstm"])
def test_chrono_init_spreads_time_scales(name):
    """At h = 0, x = 0 the retention is T_q / (1 + T_q) with T_q ~ U[1, t_max - 1]."""
    H, t_max = 400, 50.0
    m = build_model(name, 1, H, 1, init="chrono", t_max=t_max, seed=0)
    with torch.no_grad():
        if name in ("gru", "lstm"):
            m.rnn.weight_ih_l0.zero_()
        else:
            m.U.zero_()
            if name == "diaggate":
                m.U_a.zero_()
    r = m.trace(torch.zeros(1, 1, 1)).r[0, 0].double().numpy()
    T = r / (1 - r)
    assert T.min() >= 1 - 1e-3 and T.max() <= t_max - 1 + 1e-2
    assert np.mean(T) == pytest.approx((t_max) / 2, rel=0.1)       # uniform on [1, t_max - 1]
    d = build_model(name, 1, H, 1, seed=0).trace(torch.zeros(1, 1, 1)).r[0, 0].double().numpy()
    assert np.std(d / (1 - d)) < 0.2 * np.std(T)                    # default init: no spread
    with pytest.raises(ValueError, match="t_max"):
        build_model(name, 1, 4, 1, init="chrono", t_max=2.0)


# ------------------------------------------------------------------------------------------
# CLI as a user runs it (subprocess): bad paths, checkpoints, signals, file modes
# ------------------------------------------------------------------------------------------
import os  # noqa: E402
import pickle  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from tests.helpers import run_cli  # noqa: E402

TINY = ["--model", "diaggate", "--task", "delay", "--seq-len", "12", "--hidden", "4", "--batch", "4",
        "--record-every", "5", "--quiet"]


def _train(cwd, *argv, umask=None):
    def pre():
        if umask is not None:
            os.umask(umask)
    return run_cli("train", *TINY, *argv, cwd=cwd, timeout=180, preexec_fn=pre)


def _one_line(r, status, *words):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == status, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.mark.parametrize("out, words", [
    ("runs", ["--out", "'runs' is a directory"]),           # an existing directory (with --force)
    ("runs/sub/", ["--out", "runs/sub/", "not a directory"]),  # trailing slash
    ("runs/", ["--out", "runs/"]),
    ("/proc/nope.npz", ["--out", "/proc"]),                 # directory that refuses new files
    ("nodir/x.npz", ["--out", "does not exist", "mkdir -p"]),
])
def test_cli_bad_out_path_one_line_no_files(tmp_path, out, words):
    (tmp_path / "runs").mkdir()
    r = _train(tmp_path, "--steps", "2", "--out", out, "--force")
    _one_line(r, 2, *words)
    assert sorted(os.listdir(tmp_path)) == ["runs"] and os.listdir(tmp_path / "runs") == []  # no stray .ckpt


def test_cli_corrupt_or_crafted_checkpoint_one_line(tmp_path):
    (tmp_path / "r.ckpt").write_bytes(b"this is not a checkpoint\n")
    _one_line(_train(tmp_path, "--out", "r.npz", "--resume"), 2, "r.ckpt", "cannot read checkpoint")
    # a crafted pickle that would create a file when unpickled: refused, nothing executed
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "e.ckpt").write_bytes(pickle.dumps({"format": "x", "model": Evil()}))
    torch.save({"model": Evil()}, str(tmp_path / "f.ckpt"))
    for name in ("e", "f"):
        _one_line(_train(tmp_path, "--out", f"{name}.npz", "--resume"), 2, f"{name}.ckpt")
    assert not marker.exists()


def test_checkpoint_is_weights_only_and_resume_needs_no_flags(tmp_path):
    r = _train(tmp_path, "--steps", "10", "--lr", "0.02", "--n-lags", "40", "--out", "r.npz", umask=0o027)
    assert r.returncode == 0, r.stderr
    for f in ("r.npz", "r.ckpt"):                             # not mkstemp's 0600
        assert os.stat(tmp_path / f).st_mode & 0o777 == 0o640
    st = torch.load(str(tmp_path / "r.ckpt"), weights_only=True)   # tensors and plain containers only
    assert st["step"] == 10 and st["config"]["lr"] == 0.02
    assert len(load_run(str(tmp_path / "r.npz"))["lags"]) == 40  # --n-lags is the exact count
    # --resume alone: every setting comes from the checkpoint; --steps extends
    r = run_cli("train", "--out", "r.npz", "--resume", "--steps", "15", "--quiet", cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    d = load_run(str(tmp_path / "r.npz"))
    assert d["step"].tolist() == [0, 5, 10, 15] and d["config"]["lr"] == 0.02 and d["config"]["hidden"] == 4
    # a flag that differs from the checkpoint is still an error
    _one_line(_train(tmp_path, "--out", "r.npz", "--resume", "--steps", "20", "--lr", "0.5"), 2,
              "differs in ['lr']")
    # asking for fewer steps than the run already has
    _one_line(_train(tmp_path, "--out", "r.npz", "--resume", "--steps", "12"), 2,
              "--steps 12", "already at step 15")


@pytest.mark.parametrize("argv, status, words", [
    (["--lr", "1e308", "--steps", "3"], 1, ["diverged"]),   # no numpy warning line before it
    (["--steps", "0"], 2, ["--steps"]),
    (["--inject-alpha", "1.5"], 2, ["--inject-scale"]),
    (["--n-lags", "50", "--lag-max", "20"], 2, ["--n-lags", "--lag-max"]),
])
def test_cli_bad_values_exactly_one_line(tmp_path, argv, status, words):
    _one_line(_train(tmp_path, *argv, "--out", "x.npz"), status, *words)


def test_cli_sigterm_exits_143_and_keeps_records(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "levysde", "train", *TINY, "--steps", "100000000",
                          "--out", "s.npz"], cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            if (tmp_path / "s.npz").exists() and len(load_run(str(tmp_path / "s.npz"))["step"]) >= 2:
                break
            time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=60)[1]
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "SIGTERM" in lines[0] and "Traceback" not in err
    d = load_run(str(tmp_path / "s.npz"))
    assert len(d["step"]) >= 2 and d["step"][0] == 0
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]


def test_lag_grid_has_exactly_n_lags():
    for n, m in [(40, 10000), (2, 2), (5, 5), (10, 12), (100, 10000), (3, 1000)]:
        g = integer_lag_grid(n, m)
        assert len(g) == n and g[0] == 1 and g[-1] == m and np.all(np.diff(g) >= 1)
        assert np.array_equal(g, np.round(g))
    with pytest.raises(ValueError, match="n_lags"):
        integer_lag_grid(50, 20)
    with pytest.raises(ValueError, match="n_lags"):
        TrainConfig(n_lags=50, lag_max=20).validate()
