"""Slow-mode update-space forcing (the anti-collapse paper's Path A; levysde.rnn.forcing) and the
records of full-size runs in blocks (levysde.rnn.trainer.record_rows).

Independent truths: the characteristic function exp(-|k|^alpha) of the standard symmetric
alpha-stable law, the tanh bound of the taper, numpy's quantile for the slow units, the trainer's
own unforced step (the forcing touches only the slow rows), and the invariance of every recorded
average under the block size. CPU, tiny sizes, seconds.
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.cli import main  # noqa: E402
from levysde.io.runfile import checkpoint_path  # noqa: E402
from levysde.rnn import trainer as trainer_mod  # noqa: E402
from levysde.rnn.checkpoint import load_checkpoint  # noqa: E402
from levysde.rnn.forcing import SlowModeForcing, initial_slow_mask, slow_mask_from_zeta  # noqa: E402
from levysde.rnn.trainer import TrainConfig, _Run, train  # noqa: E402

SMALL = dict(task="lagged", seq_len=40, lag_lo=2, lag_hi=20, lag_count=4, input_dim=3, n_train=30,
             batch=8, hidden=10, lr_scaling="none", lr=1e-3, weight_decay=1e-4, gate_tau0=20.0,
             window_lags=[4, 30, 8], record_epochs=1)


def test_initial_and_quantile_masks():
    assert initial_slow_mask(10, 0.1).tolist() == [True] + [False] * 9
    assert initial_slow_mask(512, 0.1).sum() == 52                    # ceil(51.2)
    rng = np.random.default_rng(0)
    z = rng.normal(size=200)
    z[[3, 50]] = np.nan                                                 # non-decaying units
    m = slow_mask_from_zeta(z, 0.1)
    ok = np.isfinite(z)
    assert np.array_equal(m, ok & (z <= np.quantile(z[ok], 0.1))) and m.sum() == 20
    assert np.array_equal(slow_mask_from_zeta(np.full(7, np.nan), 0.3), initial_slow_mask(7, 0.3))


def test_forcing_noise_is_tapered_alpha_stable_scaled_by_the_update_rms():
    """Known update Delta on a zero tensor: the added noise / (scale RMS(Delta)) has the
    characteristic function exp(-|k|^1.5) (standard errors from n samples), only the slow rows move."""
    H, n, alpha, scale = 200, 60, 1.5, 0.7
    p = torch.zeros(H, n, dtype=torch.float64)
    mask = np.arange(H) % 2 == 0
    f = SlowModeForcing([p], alpha, scale, 100.0, seed=3, mask=mask)
    before = f.snapshot()
    delta = torch.randn(H, n, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 1e-3
    p += delta
    sigma = f.apply(before, step=0)
    rms = float(delta[mask].pow(2).mean().sqrt())
    assert sigma == pytest.approx(scale * rms, rel=1e-12)
    noise = (p - delta).numpy()
    assert np.all(noise[~mask] == 0.0)
    x = noise[mask].ravel() / sigma
    assert np.abs(x).max() <= 100.0
    for k in (0.3, 1.0, 2.0):
        c = np.cos(k * x)
        se = c.std() / math.sqrt(x.size)
        assert abs(c.mean() - math.exp(-k ** alpha)) < 4 * se + 1e-3, k
    # the taper bounds every draw by c, and a repeated step gives the same draws
    q = torch.zeros(H, n, dtype=torch.float64)
    g = SlowModeForcing([q], alpha, 1.0, 0.5, seed=3, mask=mask)
    b = g.snapshot()
    q += delta
    s2 = g.apply(b, step=0)
    x2 = (q - delta).numpy()[mask].ravel() / s2
    assert np.abs(x2).max() <= 0.5 * (1 + 1e-12)
    raw = 100.0 * np.arctanh(x / 100.0)                                # the same untapered draws
    np.testing.assert_allclose(x2, 0.5 * np.tanh(raw / 0.5), rtol=1e-9, atol=1e-12)


def test_trainer_forces_only_the_slow_rows_after_the_step():
    """One step of ConstGate with and without forcing from the same init and batch: the rows of the
    non-slow units agree exactly; the slow rows of W, U, b moved by noise of the update's RMS scale."""
    cfg = dict(SMALL, model="constgate", hidden=20)
    plain = _Run(TrainConfig(**cfg).validate(), None)
    forced = _Run(TrainConfig(**cfg, slow_forcing_alpha=1.5, slow_forcing_q=0.25).validate(), None)
    w0 = plain.model.W.detach().clone()
    plain.train_step(), forced.train_step()
    slow = initial_slow_mask(20, 0.25)
    for name in ("W", "U", "b"):
        a, b = getattr(plain.model, name).detach(), getattr(forced.model, name).detach()
        assert torch.equal(a[~torch.from_numpy(slow)], b[~torch.from_numpy(slow)]), name
        assert not torch.equal(a[torch.from_numpy(slow)], b[torch.from_numpy(slow)]), name
    upd = (plain.model.W.detach() - w0)[torch.from_numpy(slow)]
    noise = (forced.model.W.detach() - plain.model.W.detach())[torch.from_numpy(slow)]
    ratio = float(noise.abs().median() / upd.pow(2).mean().sqrt())
    assert 0.2 < ratio < 3.0                                           # |SaS(1.5)| has median ~0.83


def test_slow_units_follow_zeta_window_and_resume_is_exact(tmp_path):
    cfg = dict(SMALL, model="constgate", steps=12, slow_forcing_alpha=1.5, slow_forcing_q=0.3)
    full = train(TrainConfig(**cfg))
    assert full["step"].tolist() == [0, 4, 8, 12]
    masks = full["slow_mask"] > 0.5
    assert np.array_equal(masks[0], initial_slow_mask(10, 0.3))
    for z, m in zip(full["zeta_window"][1:], masks[1:], strict=True):
        ok = np.isfinite(z)
        want = ok & (z <= np.quantile(z[ok], 0.3)) if ok.any() else initial_slow_mask(10, 0.3)
        assert np.array_equal(m, want)
    out = str(tmp_path / "r.npz")
    train(TrainConfig(**cfg), out, stop_after=6)
    res = train(TrainConfig(**cfg), out, resume=True)
    for k in ("zeta", "zeta_window", "slow_mask", "loss"):
        np.testing.assert_array_equal(res[k], full[k])
    assert res["config"]["slow_forcing_alpha"] == 1.5
    plain = train(TrainConfig(**dict(SMALL, steps=1)))
    assert "slow_forcing_alpha" not in plain["config"] and "slow_mask" not in plain


def test_deadline_stops_between_records_and_resumes_exactly(tmp_path):
    cfg = dict(SMALL, model="diaggate", steps=12, slow_forcing_alpha=1.5)
    full = train(TrainConfig(**cfg))
    out = str(tmp_path / "d.npz")
    part = train(TrainConfig(**cfg), out, deadline=0.0)         # long past: stop after the first step
    assert part["step"].tolist() == [0]
    assert load_checkpoint(checkpoint_path(out))["step"] == 1
    res = train(TrainConfig(**cfg), out, resume=True)
    for k in ("zeta", "zeta_window", "slow_mask", "loss", "train_loss", "step"):
        np.testing.assert_array_equal(res[k], full[k])


@pytest.mark.parametrize("kw, name", [
    (dict(slow_forcing_alpha=1.5, window_lags=None), "window_lags"),
    (dict(slow_forcing_alpha=2.5), "slow_forcing_alpha"), (dict(slow_forcing_alpha=1.5, slow_forcing_q=1.0),
                                                           "slow_forcing_q"),
    (dict(slow_forcing_alpha=1.5, slow_forcing_scale=0.0), "slow_forcing_scale"),
    (dict(slow_forcing_alpha=1.5, model="gru", window_lags=None, gate_tau0=None), "leaky model"),
])
def test_forcing_config_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        TrainConfig(**(SMALL | kw)).validate()


@pytest.mark.parametrize("argv, msg", [
    (["--slow-forcing-q", "0.2"], "--slow-forcing-q"), (["--slow-forcing", "3"], "--slow-forcing"),
    (["--slow-forcing", "1.5"], "argument --slow-forcing: needs --window-lags"),
])
def test_forcing_cli_bad_input_exits_2(tmp_path, capsys, argv, msg):
    with pytest.raises(SystemExit) as e:
        main(["train", "--out", str(tmp_path / "x.npz"), "--quiet", "--task", "lagged"] + argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0]


def test_cli_slow_forcing_run(tmp_path, capsys):
    out = str(tmp_path / "f.npz")
    assert main(["train", "--out", out, "--quiet", "--model", "constgate", "--task", "lagged", "--seq-len", "40",
                 "--lag-lo", "2", "--lag-hi", "20", "--lag-count", "4", "--input-dim", "3", "--n-train", "30",
                 "--batch", "8", "--hidden", "10", "--steps", "8", "--record-epochs", "1", "--gate-tau0", "20",
                 "--window-lags", "4", "30", "8", "--slow-forcing", "1.5", "--slow-forcing-q", "0.2"]) == 0
    with np.load(out) as z:
        assert z["slow_mask"].shape == (3, 10) and z["slow_mask"][0].sum() == 2


# --- full-size records: blocks of the probe batch ------------------------------------------------------
@pytest.mark.parametrize("model", ["diaggate", "constgate"])
def test_record_in_blocks_equals_one_block(monkeypatch, model):
    """Every recorded statistic is the same whether the probe batch is one block or blocks of 3, 5
    and 7 sequences (7 does not divide the batch of 16): the gradient and the averages are combined
    with each block's share."""
    cfg = TrainConfig(**dict(SMALL, model=model, probe_batch=16, transport=True, n_lags=6, lag_max=30)).validate()
    run = _Run(cfg, None)
    for _ in range(3):
        run.train_step()
    args = (run.model, run.task, run.x_probe, run.y_probe, run.opt, cfg.optimizer, run.lags, True, run.window_lags)
    one = trainer_mod.record_stats(*args)
    assert trainer_mod.record_rows(16, 40, cfg.hidden) == 16
    for rows in (3, 5, 7):
        monkeypatch.setattr(trainer_mod, "RECORD_ENTRIES", rows * 40 * cfg.hidden)
        assert trainer_mod.record_rows(16, 40, cfg.hidden) == rows
        blk = trainer_mod.record_stats(*args)
        for k in ("zeta", "zeta_jac", "Lambda", "envelope", "transport", "zeta_window"):
            np.testing.assert_allclose(blk[k], one[k], rtol=2e-5, atol=1e-9, err_msg=k)
        assert blk["loss"] == pytest.approx(one["loss"], rel=1e-6)
        for k in ("jac_masked", "jac_clips", "zeta_clips", "window_masked"):
            assert blk[k] == one[k]
        assert blk["saturated"] == pytest.approx(one["saturated"], abs=1e-12)


def test_memory_estimate_counts_one_record_block():
    """The paper's record (6000 x 1280 at H = 512) is bounded by a block, not the whole batch."""
    cfg = TrainConfig(model="diaggate", task="lagged", seq_len=1280, n_train=8000, probe_batch=6000, hidden=512,
                      batch=380, window_lags=[64, 384, 32]).validate()
    task = cfg.make_task()
    need = trainer_mod.memory_estimate(cfg, task)
    rows = trainer_mod.record_rows(6000, 1280, 512)
    assert rows == 51
    tape = 4 * 380 * 1280 * 512 * 6
    assert tape < need < tape + 4 * (8000 + 6000) * 1280 * 17 + 2 ** 30


def test_exact_window_zeta_against_explicit_products():
    """The exact windowed transport: explicit products of J over every window; for ConstGate with
    W_qq = 0 the exact log(-log(1 - a)); with large |W_qq| the first-order zeta_window reads units as
    non-decaying (NaN) that the exact product shows decaying faster than the gate alone."""
    from levysde.rnn.models import build_model
    from levysde.rnn.trainer import exact_window_zeta, window_lag_grid, window_zeta
    x = torch.randn(3, 60, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    m = build_model("diaggate", 2, 4, 1, seed=2, gate_tau0=10.0).double()
    tr = m.trace(x)
    lags = window_lag_grid(4, 30, 5)
    z, mm = exact_window_zeta(tr.jac, lags)
    want = np.stack([np.mean([np.log(np.abs(tr.jac[:, t:t + lag].prod(1).numpy())) for t in range(60 - lag + 1)],
                             axis=0).mean(0) for lag in lags])
    np.testing.assert_allclose(mm, want, rtol=1e-10, atol=1e-12)
    c = build_model("constgate", 2, 3, 1, seed=1, gate_tau0=25.0).double()
    with torch.no_grad():
        c.W.fill_diagonal_(0.0)
    np.testing.assert_allclose(exact_window_zeta(c.trace(x).jac, lags)[0], -math.log(25.0), atol=1e-9)
    with torch.no_grad():
        c.W.fill_diagonal_(-3.0)                      # contracting: J < 1 - a, faster than the gate
    tr = c.trace(x, rdiag=True)
    ze = exact_window_zeta(tr.jac, lags)[0]
    assert np.all(ze > -math.log(25.0))
    assert np.isnan(window_zeta(tr.neg_log_r, tr.rdiag, lags)[0]).any()
