"""The anti-collapse paper's protocol in the trainer: the ``lagged`` task, the tau0 init, epochs
and the windowed first-order transport time scale ``zeta_window`` (docs/rnn.md).

Independent truths: the lags quoted by the protocol, least squares on the generated data, an
explicit forward pass with explicit window products. CPU, tiny sizes, seconds each.
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.cli import main  # noqa: E402
from levysde.rnn.models import MODELS, build_model, tau0_gate  # noqa: E402
from levysde.rnn.tasks import build_task  # noqa: E402
from levysde.rnn.teacher import lagged_terms, pareto_lags, trivial_loss  # noqa: E402
from levysde.rnn.trainer import TrainConfig, train, window_lag_grid, window_zeta  # noqa: E402

PAPER_LAGS = [8, 9, 10, 11, 12, 15, 23, 24, 26, 32, 45, 60, 115, 183, 224, 626]
SMALL = dict(task="lagged", seq_len=40, lag_lo=2, lag_hi=20, lag_count=4, input_dim=3, n_train=30,
             batch=8, hidden=5, lr_scaling="none")


# --- the task ---------------------------------------------------------------------------
def test_pareto_lags_are_the_protocols():
    lags, c = lagged_terms({})
    assert lags.tolist() == PAPER_LAGS
    np.testing.assert_allclose(c, 0.6 * 0.85 ** np.arange(16))
    lags, c = lagged_terms({"lag_mode": "fixed"})
    assert lags.tolist() == [32, 64, 128, 192, 256] and c.tolist() == [0.6, 0.5, 0.4, 0.32, 0.26]


@pytest.mark.parametrize("kw, name", [(dict(count=30, lo=8, hi=20), "lag_count"), (dict(lo=0), "lag_lo"),
                                      (dict(lo=9, hi=9), "lag_hi"), (dict(alpha=0.0), "lag_alpha")])
def test_pareto_lags_bad_input(kw, name):
    args = dict(count=4, lo=8, hi=640, alpha=0.6) | kw
    with pytest.raises(ValueError, match=name):
        pareto_lags(**args)


def test_lagged_target_is_the_sum_of_lagged_projections():
    """Least squares of y_t on the lagged inputs recovers c_k u with one unit vector u."""
    task = build_task("lagged", 60, lag_lo=2, lag_hi=30, lag_count=3, input_dim=4, n_train=10)
    assert task.loss_from == 0 and task.n_in == 4
    x, y = task.lagged_set(50, 3, 0)
    lags, c = lagged_terms({"lag_count": 3, "lag_lo": 2, "lag_hi": 30})
    t0 = int(lags.max())
    X = np.concatenate([x[:, t0 - lag:60 - lag].reshape(-1, 4).numpy() for lag in lags], 1)
    coef, res, *_ = np.linalg.lstsq(X.astype(np.float64), y[:, t0:, 0].reshape(-1).double().numpy(), rcond=None)
    assert res.sum() < 1e-6 * len(X)                      # noiseless: exact
    B = coef.reshape(3, 4)
    np.testing.assert_allclose(np.linalg.norm(B, axis=1), c, rtol=1e-5)
    u = B / c[:, None]
    np.testing.assert_allclose(u, np.broadcast_to(u[0], u.shape), atol=1e-5)
    assert np.array_equal(task.lagged_set(50, 3, 0)[0].numpy(), x.numpy())    # a function of the seed


def test_lagged_trivial_loss_matches_the_data():
    cfg = TrainConfig(**SMALL, target_noise=0.3).validate()
    task = cfg.make_task()
    _, y = task.lagged_set(4000, 1, 1)
    want = trivial_loss(cfg.to_dict() | {"loss_from_resolved": 0})
    assert abs(float((y.double() ** 2).mean()) - want) < 0.03 * want
    assert cfg.target_noise == 0.3 and TrainConfig().validate().target_noise == 0.0


def test_epochs_visit_every_row_once_and_reshuffle():
    task = build_task("lagged", 40, lag_lo=2, lag_hi=20, lag_count=4, n_train=30)
    nb = task.batches_per_epoch(8)
    assert nb == 4
    ep = [np.concatenate([task.epoch_indices(5, e * nb + j, 8) for j in range(nb)]) for e in range(2)]
    assert [len(task.epoch_indices(5, j, 8)) for j in range(nb)] == [8, 8, 8, 6]
    assert all(sorted(e.tolist()) == list(range(30)) for e in ep) and not np.array_equal(ep[0], ep[1])
    assert np.array_equal(task.epoch_indices(5, 3, 8), task.epoch_indices(5, 3, 8))


def test_records_every_epochs_and_resume_is_exact(tmp_path):
    cfg = dict(SMALL, steps=10, record_epochs=2, gate_tau0=20.0, window_lags=[4, 30, 5])
    full = train(TrainConfig(**cfg))
    assert full["step"].tolist() == [0, 4, 8, 10]        # 4 batches per epoch: epochs 1, 2, the last step
    out = str(tmp_path / "r.npz")
    train(TrainConfig(**cfg), out, stop_after=5)
    res = train(TrainConfig(**cfg), out, resume=True)
    for k in ("zeta", "zeta_window", "loss", "zeta_jac"):
        np.testing.assert_array_equal(res[k], full[k])
    assert res["window_lags"].tolist() == [4, 10, 17, 23, 30]


def test_default_config_keeps_its_keys():
    d = TrainConfig().validate().to_dict()
    assert not {"lag_mode", "n_train", "gate_tau0", "window_lags", "record_epochs"} & set(d)
    assert d["target_noise"] == 0.0


@pytest.mark.parametrize("kw, name", [
    (dict(task="powerlaw", record_epochs=2), "record_epochs"), (dict(gate_tau0=0.0), "gate_tau0"),
    (dict(gate_tau0=5.0, init="chrono"), "gate_tau0"), (dict(window_lags=[4, 41, 3]), "window_lags hi"),
    (dict(window_lags=[4, 6, 4]), "window_lags n"), (dict(model="gru", window_lags=[4, 8, 2]), "window_lags"),
    (dict(batch=31), "batch"), (dict(lag_mode="x"), "lag_mode"), (dict(n_train=0), "n_train"),
    (dict(lag_mode="fixed"), r"seq_len must be an integer >= 257 \(lag_mode 'fixed' has the lags 32, 64, 128, 192, "
                             r"256, each shorter than the sequence\); got 40"),
])
def test_config_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        TrainConfig(**(SMALL | kw)).validate()


@pytest.mark.parametrize("argv, msg", [
    (["--task", "lagged", "--lags", "fixed", "--lag-count", "3"], "--lag-count"), (["--n-train", "5"], "--n-train"),
    (["--task", "lagged", "--window-lags", "5", "3", "4"], "argument --window-lags: hi must be"),
    (["--task", "lagged", "--gate-tau0", "-1"], "--gate-tau0"),
    (["--gate-tau0", "5", "--gate-a", "0.2", "--model", "constgate"], "--gate-a"),
    (["--task", "lagged", "--lags", "fixed", "--seq-len", "100"],
     "argument --seq-len: 100 is too short for --lags fixed (lags 32, 64, 128, 192, 256); give --seq-len >= 257"),
])
def test_cli_bad_input_exits_2_one_line(tmp_path, capsys, argv, msg):
    with pytest.raises(SystemExit) as e:
        main(["train", "--out", str(tmp_path / "x.npz"), "--quiet"] + argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


@pytest.mark.parametrize("argv, msg", [
    (["--seq-len", "1000", "--lag-lo", "700"],
     "argument --lag-hi: must be an integer >= 701 (above --lag-lo); got 640 (--lag-hi was not given: its default)"),
    (["--seq-len", "1000", "--lag-lo", "8", "--lag-hi", "8"],
     "argument --lag-hi: must be an integer >= 9 (above --lag-lo); got 8"),
    (["--seq-len", "100", "--loss-from", "200"], "argument --loss-from: must be an integer in [0, 99]; got 200"),
    (["--seq-len", "100", "--lag-hi", "50", "--lag-count", "100"],
     "argument --lag-count: must be an integer in [1, 43] (distinct integers in [--lag-lo, --lag-hi]); got 100"),
    (["--n-train", "8", "--batch", "9"], "argument --batch: must be an integer in [1, 8] (at most --n-train"),
])
def test_cli_config_errors_name_the_flags(tmp_path, capsys, argv, msg):
    """The trainer's config errors on the command line name the flags as typed, not the fields."""
    with pytest.raises(SystemExit) as e:
        main(["train", "--out", str(tmp_path / "x.npz"), "--quiet", "--task", "lagged"] + argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err
    assert not {"lag_hi", "lag_lo", "seq_len", "loss_from", "lag_count", "n_train"} & set(err[0].split()), err
    assert not (tmp_path / "x.npz").exists()


def test_flag_message_maps_fields_to_flags():
    from types import SimpleNamespace

    from levysde.cli._train_flags import flag_message, flag_of

    fields = ("p", "lag_mode", "slow_forcing_alpha", "gate_decay", "seq_len", "batch", "model")
    assert [flag_of(f) for f in fields] == ["--power", "--lags", "--slow-forcing", "--no-gate-decay", "--seq-len",
                                           "--batch", "--model"]
    resumed = SimpleNamespace(_given={"seq_len"}, resume=True)
    assert flag_message("p must be > 0; got 0", fields, resumed) == \
        "argument --power: must be > 0; got 0 (--power was not given: the checkpoint's value)"
    assert flag_message("batch needs a model with seq_len >= 2", fields, resumed) == \
        "argument --batch: needs a model with --seq-len >= 2 (--batch was not given: the checkpoint's value)"
    # file names and words that merely contain a field name stay as they are
    assert flag_message("cannot read 'runs/seq_len.npz' (my_seq_len)", fields) == \
        "cannot read 'runs/seq_len.npz' (my_seq_len)"


# --- the tau0 init ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", MODELS)
def test_tau0_init_starts_every_unit_at_tau0(name):
    tau0 = 200.0
    m = build_model(name, 3, 6, 1, seed=2, gate_tau0=tau0)
    tr = m.trace(torch.randn(4, 25, 3, generator=torch.Generator().manual_seed(0)))
    zeta = torch.log(tr.neg_log_r.double().mean((0, 1)))
    np.testing.assert_allclose(zeta.numpy(), -math.log(tau0), atol=1e-6)
    W = m.W.detach() if hasattr(m, "W") else m.rnn.weight_hh_l0.detach()[:6]
    np.testing.assert_allclose((W @ W.T).numpy(), np.eye(6), atol=1e-5)
    assert abs(tau0_gate(199.5) - 0.005) < 1e-5


@pytest.mark.parametrize("value", ["1e30", "inf", "nan", "1e-300", "0.05", "100001"])
def test_cli_gate_tau0_out_of_its_range_is_refused(tmp_path, capsys, value):
    """An absurd initial time scale (1e30: its gate's float32 retention 1 - s0 is exactly 1) is
    refused at once, naming the flag and its range; nothing is written."""
    out = tmp_path / "x.npz"
    with pytest.raises(SystemExit) as e:
        main(["train", "--out", str(out), "--quiet", "--task", "lagged", "--gate-tau0", value])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "argument --gate-tau0" in err[0] and "[0.1, 100000]" in err[0], err
    assert not out.exists()


@pytest.mark.parametrize("tau0", [1e30, math.inf, math.nan, 1e-300, 0.05, 1e5 * (1 + 1e-9)])
def test_gate_tau0_out_of_its_range_is_refused_by_the_library(tau0):
    with pytest.raises(ValueError, match=r"gate_tau0 must be finite and in \[0.1, 100000\]"):
        tau0_gate(tau0)
    with pytest.raises(ValueError, match=r"gate_tau0 must be finite and in \[0.1, 100000\]"):
        TrainConfig(**SMALL, gate_tau0=tau0).validate()


def test_gate_tau0_range_is_where_float32_resolves_the_time_scale():
    """Independent truth: the time scale -1/log(r) of the float32 retention r = 1 - s0. At the
    ends of the range it is within 1 % of tau0; at 1e30 (and from about 3.4e7) r rounds to 1."""
    from levysde.cli._train_flags import TAU0_RANGE
    from levysde.rnn.models import TAU0_MAX, TAU0_MIN

    assert TAU0_RANGE == (TAU0_MIN, TAU0_MAX)

    def float32_time_scale(tau0):
        r = np.float32(1.0) - np.float32(-math.expm1(-1.0 / tau0))
        return -1.0 / math.log(float(r)) if r < 1 else math.inf

    for tau0 in (TAU0_MIN, TAU0_MAX):
        assert float32_time_scale(tau0) == pytest.approx(tau0, rel=1e-2)
        assert tau0_gate(tau0) == pytest.approx(-math.expm1(-1.0 / tau0), rel=1e-15)
    assert float32_time_scale(1e30) == math.inf and float32_time_scale(4e7) == math.inf


def test_tau0_init_at_the_range_ends_starts_there():
    for tau0 in (0.1, 1e5):
        m = build_model("diaggate", 3, 4, 1, seed=2, gate_tau0=tau0)
        zeta = torch.log(m.trace(torch.zeros(1, 5, 3)).neg_log_r.double().mean())
        assert float(zeta) == pytest.approx(-math.log(tau0), abs=1e-4)


def test_tau0_init_trained_run_starts_there():
    res = train(TrainConfig(**SMALL, model="diaggate", steps=1, gate_tau0=50.0))
    np.testing.assert_allclose(res["zeta"][0], -math.log(50.0), atol=1e-6)


# --- the windowed zeta ---------------------------------------------------------------------------
def _explicit_diaggate(m, x):
    """Forward pass of a DiagGate written out here: leak_t, rdiag_t, J_t (B, T, H) float64."""
    W, Wa = m.W.detach().double(), m.W_a.detach().double()
    U, Ua, b, ba = (p.detach().double() for p in (m.U, m.U_a, m.b, m.b_a))
    h = torch.zeros(x.shape[0], m.hidden, dtype=torch.float64)
    leak, rdiag = [], []
    for t in range(x.shape[1]):
        xt = x[:, t].double()
        a = torch.sigmoid(h @ Wa.T + xt @ Ua.T + ba)
        ht = torch.tanh(h @ W.T + xt @ U.T + b)
        leak.append(1 - a)
        rdiag.append(a * (1 - ht ** 2) * torch.diagonal(W) + (ht - h) * a * (1 - a) * torch.diagonal(Wa))
        h = (1 - a) * h + a * ht
    leak, rdiag = torch.stack(leak, 1), torch.stack(rdiag, 1)
    return leak, rdiag, leak + rdiag


def _slope_fit(lags, m):
    return np.polyfit(np.asarray(lags, float), m, 1)[0]


def test_window_zeta_is_the_first_order_window_product():
    """Every window's mu0 + mu1 by explicit products and sums, against window_zeta."""
    m = build_model("diaggate", 2, 3, 1, seed=4, gate_tau0=8.0).double()
    with torch.no_grad():
        m.W.mul_(0.3), m.W_a.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(1))
    x = torch.randn(3, 30, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    leak, rdiag, _ = _explicit_diaggate(m, x)
    tr = m.trace(x, rdiag=True)
    np.testing.assert_allclose(tr.rdiag.numpy(), rdiag.numpy(), atol=1e-12)
    lags = window_lag_grid(3, 20, 4)
    zeta, mlog = window_zeta(tr.neg_log_r, tr.rdiag, lags)
    want = np.zeros((len(lags), 3))
    for i, lag in enumerate(lags):
        vals = []
        for t in range(30 - lag + 1):
            w = slice(t, t + lag)
            mu0 = leak[:, w].prod(1)
            vals.append(torch.log(torch.clamp((mu0 + mu0 * (rdiag[:, w] / leak[:, w]).sum(1)).abs(), min=1e-30)))
        want[i] = torch.stack(vals).mean((0, 1)).numpy()
    np.testing.assert_allclose(mlog, want, atol=1e-10)
    np.testing.assert_allclose(zeta, np.log(-_slope_fit(lags, want)), rtol=1e-9)


def test_window_zeta_tracks_the_exact_jacobian_product():
    """Small corrections: the slope of E log|prod_p J_pp| (exact product of the one-step Jacobian
    diagonals) and the first-order zeta_window agree; with W_qq = 0 and a constant gate, exactly."""
    m = build_model("diaggate", 2, 4, 1, seed=5, gate_tau0=10.0).double()
    with torch.no_grad():
        m.W.mul_(0.05), m.W_a.normal_(0.0, 0.05, generator=torch.Generator().manual_seed(3))
    x = torch.randn(4, 80, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    _, _, J = _explicit_diaggate(m, x)
    lags = window_lag_grid(8, 40, 5)
    exact = np.stack([torch.log(torch.stack([J[:, t:t + lag].prod(1).abs() for t in range(80 - lag + 1)]))
                      .mean((0, 1)).numpy() for lag in lags])
    tr = m.trace(x, rdiag=True)
    zeta, _ = window_zeta(tr.neg_log_r, tr.rdiag, lags)
    np.testing.assert_allclose(zeta, np.log(-_slope_fit(lags, exact)), atol=0.02)
    c = build_model("constgate", 2, 3, 1, seed=1, gate_tau0=25.0).double()
    with torch.no_grad():
        c.W.fill_diagonal_(0.0)
    tr = c.trace(x, rdiag=True)
    zc, _ = window_zeta(tr.neg_log_r, tr.rdiag, lags)
    np.testing.assert_allclose(zc, -math.log(25.0), atol=1e-9)
