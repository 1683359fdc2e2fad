"""The matched statistic of a trained network (levysde.rnn.matched) against an explicit computation,
and ``levysde learnability`` on a small training run."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.rnn.matched import direction, hidden_jvp, matched_sums  # noqa: E402
from levysde.rnn.models import build_model  # noqa: E402
from tests.helpers import call, one_line_error  # noqa: E402


def _explicit(m, x):
    """DiagGate forward written out here: leak, rdiag, hidden states (B, T, H) float64."""
    W, Wa = m.W.detach().double(), m.W_a.detach().double()
    U, Ua, b, ba = (p.detach().double() for p in (m.U, m.U_a, m.b, m.b_a))
    h = torch.zeros(x.shape[0], m.hidden, dtype=torch.float64)
    leak, rdiag, hs = [], [], []
    for t in range(x.shape[1]):
        xt = x[:, t].double()
        a = torch.sigmoid(h @ Wa.T + xt @ Ua.T + ba)
        ht = torch.tanh(h @ W.T + xt @ U.T + b)
        leak.append(1 - a)
        rdiag.append(a * (1 - ht ** 2) * torch.diagonal(W) + (ht - h) * a * (1 - a) * torch.diagonal(Wa))
        h = (1 - a) * h + a * ht
        hs.append(h)
    return torch.stack(leak, 1), torch.stack(rdiag, 1), torch.stack(hs, 1)


def _model():
    m = build_model("diaggate", 2, 3, 1, seed=4, gate_tau0=8.0).double()
    with torch.no_grad():
        m.W.mul_(0.5), m.W_a.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(1))
        m.U_a.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(2))
    return m


def test_jvp_matches_finite_differences():
    m = _model()
    x = torch.randn(2, 15, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    w = direction(m, 7)
    assert sum(float((t ** 2).sum()) for t in w.values()) == pytest.approx(1.0, abs=1e-12)
    v = hidden_jvp(m, x, w)
    eps = 1e-6
    with torch.no_grad():
        for sign in (1, -1):
            for k, p in m.named_parameters():
                p.add_(sign * eps * w[k])
            h = _explicit(m, x)[2]
            if sign == 1:
                hp = h
            for k, p in m.named_parameters():
                p.sub_(sign * eps * w[k])
    np.testing.assert_allclose(v.numpy(), ((hp - h) / (2 * eps)).numpy(), atol=1e-7)


@pytest.mark.parametrize("name", ["gru", "lstm"])
def test_jvp_torch_cells_match_finite_differences(name):
    """GRU/LSTM: the hand-written differentiable loop against torch's own fused module."""
    m = build_model(name, 2, 3, 1, seed=5).double()
    x = torch.randn(2, 10, 2, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    w = direction(m, 9)
    v = hidden_jvp(m, x, w)
    eps = 1e-6
    outs = []
    with torch.no_grad():
        for sign in (1, -1):
            for k, p in m.named_parameters():
                p.add_(sign * eps * w[k])
            outs.append(m.rnn(x)[0])
            for k, p in m.named_parameters():
                p.sub_(sign * eps * w[k])
    np.testing.assert_allclose(v.numpy(), ((outs[0] - outs[1]) / (2 * eps)).numpy(), atol=1e-7)


def test_matched_sums_match_explicit_products():
    """psi_t(l) = sum_q mu delta v, with mu from explicit window products, summed per sequence."""
    m = _model()
    g = torch.Generator().manual_seed(6)
    x = torch.randn(3, 20, 2, generator=g, dtype=torch.float64)
    y = torch.randn(3, 20, 1, generator=g, dtype=torch.float64)
    lags = [1, 3, 7]
    loss_from = 2
    s = matched_sums(m, x, y, lags, loss_from=loss_from, w_seed=7, block=2)
    leak, rdiag, hs = _explicit(m, x)
    v = hidden_jvp(m, x, direction(m, 7))
    with torch.no_grad():
        y_hat = m.readout(hs)
    delta = (y_hat - y) * m.readout.weight.detach()          # (B, T, H)
    T = 20
    for i, ell in enumerate(lags):
        tot, cnt, env = np.zeros(3), np.zeros(3), np.zeros(3)
        for b in range(3):
            for t in range(loss_from + ell, T):
                win = range(t - ell + 1, t + 1)
                mu0 = torch.prod(torch.stack([leak[b, p] for p in win]), 0)
                mu = mu0 * (1 + sum(rdiag[b, p] / leak[b, p] for p in win))
                tot[b] += float((mu * delta[b, t] * v[b, t - ell]).sum())
                cnt[b] += 1
            vals = []
            for a0 in range(loss_from, T - ell + 1):
                win = range(a0, a0 + ell)
                mu0 = torch.prod(torch.stack([leak[b, p] for p in win]), 0)
                vals.append((mu0 * (1 + sum(rdiag[b, p] / leak[b, p] for p in win))).abs())
            env[b] = float(torch.stack(vals).mean())
        np.testing.assert_allclose(s["total"][i], tot, rtol=1e-9, atol=1e-14)
        np.testing.assert_array_equal(s["count"][i], cnt)
        np.testing.assert_allclose(s["envelope"][i], env, rtol=1e-10)
    with pytest.raises(ValueError, match="lags"):
        matched_sums(m, x, y, [0, 3])
    with pytest.raises(ValueError, match="lags"):
        matched_sums(m, x, y, [5, 18], loss_from=loss_from)


def test_cli_learnability_on_a_training_run(tmp_path, capsys):
    run = tmp_path / "r.npz"
    rc, out, err = call(capsys, "train", "--model", "diaggate", "--hidden", "6", "--task", "lagged", "--lags",
                        "pareto", "--lag-count", "3", "--lag-lo", "2", "--lag-hi", "12", "--seq-len", "40",
                        "--n-train", "32", "--batch", "16", "--probe-batch", "16", "--steps", "4", "--gate-tau0",
                        "10", "--out", run, "--quiet")
    assert rc == 0, err
    rc, out, err = call(capsys, "learnability", "--from", run, "--lags", "2", "30", "10", "--n-boot", "60",
                        "--json")
    assert rc == 0, err
    d = json.loads(out)
    assert d["n_sequences"] == 16 and len(d["lags"]) == 10
    assert d["written"] == str(tmp_path / "r.learnability.npz")
    assert set(d["master_law"]) == {"grid", "continuous"}
    assert all(a is None or 0 < a < 3 for a in d["alpha"])
    # again from the stored sums: the same numbers, no torch needed
    rc, out, err = call(capsys, "learnability", "--from", d["written"], "--n-boot", "60", "--json")
    assert rc == 0, err
    e = json.loads(out)
    assert e["mean"] == d["mean"] and e["alpha"] == d["alpha"] and e["H_N"] == d["H_N"]
    # existing output refused; a torch flag with a learnability file refused: one line, exit 2
    one_line_error(*call(capsys, "learnability", "--from", run, "--lags", "2", "30", "10")[::2], "already exists")
    one_line_error(*call(capsys, "learnability", "--from", d["written"], "--sequences", "8")[::2], "does not apply")


@pytest.mark.parametrize("name", ["constgate", "sharedgate", "diaggate"])
def test_layernorm_jacobian_diagonal_matches_autograd(name):
    """With --layernorm, trace()'s J_qq (and r + rdiag) is d h_t / d h_{t-1} from autograd."""
    m = build_model(name, 2, 4, 1, seed=1, layernorm=True, gate_tau0=5.0).double()
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        m.ln.weight.copy_(1 + 0.3 * torch.randn(4, generator=g, dtype=torch.float64))
        m.ln.bias.copy_(0.3 * torch.randn(4, generator=g, dtype=torch.float64))
        if name != "constgate":
            m.W_a.normal_(0, 0.3, generator=g), m.U_a.normal_(0, 0.3, generator=g)
    x = torch.randn(3, 6, 2, generator=g, dtype=torch.float64)
    tr = m.trace(x, rdiag=True)
    h = m.hidden_states(x)
    for t in (1, 4):
        hp = h[:, t - 1].detach().clone().requires_grad_(True)
        out = m.hidden_states(x[:, t:t + 1], h0=hp)[:, 0]
        J = torch.stack([torch.autograd.grad(out[:, q].sum(), hp, retain_graph=True)[0][:, q] for q in range(4)], 1)
        np.testing.assert_allclose(tr.jac[:, t].numpy(), J.numpy(), atol=1e-13)
        np.testing.assert_allclose((tr.r[:, t] + tr.rdiag[:, t]).numpy(), J.numpy(), atol=1e-13)
    with pytest.raises(ValueError, match="leaky"):
        build_model("gru", 2, 4, 1, layernorm=True)


def test_learnability_profiles_are_valid_configs():
    from levysde.rnn.learnability_presets import (
        LEARNABILITY_MODELS,
        LEARNABILITY_OPTIMIZERS,
        LEARNABILITY_PRESETS,
        learnability_config,
    )
    from levysde.rnn.models import tau0_gate
    from levysde.rnn.teacher import FIXED_LAGS
    from levysde.rnn.trainer import TrainConfig

    assert tau0_gate(19.5) == pytest.approx(0.05, abs=2e-4)          # the paper's s0 = 0.05
    for pr in LEARNABILITY_PRESETS:
        for mdl in LEARNABILITY_MODELS:
            for opt in LEARNABILITY_OPTIMIZERS:
                cfg = TrainConfig(**learnability_config(pr, mdl, opt, 212)).validate()
                assert cfg.layernorm == (mdl in ("constgate", "sharedgate", "diaggate"))
                assert cfg.seq_len > max(FIXED_LAGS) and cfg.lag_mode == "fixed"
    paper = learnability_config("learnability", "diaggate", "adamw", 212)
    assert (paper["hidden"], paper["seq_len"], paper["batch"], paper["steps"]) == (128, 1024, 512, 12000)
