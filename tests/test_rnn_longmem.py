"""levysde.rnn: long-memory task, truncated BPTT, new defaults, and the failure cases of issues 10/14
(docs/specification.md §8, §9). Independent truths: unchunked forward passes, numpy recursions, closed-form
variances with their standard errors, known distributions."""
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.io.runfile import load_run  # noqa: E402
from levysde.rnn import MODELS, TrainConfig, build_model, build_task, record_stats, train  # noqa: E402
from levysde.rnn.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from levysde.rnn.learned import learned_diagnostic  # noqa: E402
from levysde.rnn.tasks import STREAM_PROBE, STREAM_TRAIN  # noqa: E402
from levysde.rnn.teacher import teacher_scale, teacher_time_scales  # noqa: E402
from levysde.rnn.trainer import (  # noqa: E402
    TrainingDiverged,
    _make_optimizer,
    elr_envelope,
    integer_lag_grid,
    memory_estimate,
    neuron_lambda,
)
from tests.helpers import run_cli  # noqa: E402

torch.set_num_threads(1)
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(),
                                                                 reason="no CUDA device"))]
LONG = dict(task="longmem", seq_len=10, n_mem=6, mem_lag_max=500, hidden=8, batch=4, record_every=5)


@pytest.mark.parametrize("name", MODELS)
def test_carried_state_equals_one_long_pass(name):
    """forward_state over two chunks with the state carried = one pass over the whole sequence."""
    m = build_model(name, 1, 6, 1, seed=1)
    x = torch.randn(3, 17, 1, generator=torch.Generator().manual_seed(0))
    full = m(x)
    y1, st = m.forward_state(x[:, :9], None)
    y2, _ = m.forward_state(x[:, 9:], st)
    torch.testing.assert_close(torch.cat([y1, y2], 1), full, rtol=1e-5, atol=1e-6)


def test_longmem_teacher_is_the_leaky_integrators():
    """Chunks with the carried teacher state equal a numpy recursion over the concatenated inputs."""
    task = build_task("longmem", 7, n_mem=4, mem_lag_max=300, mem_gamma=0.5)
    s0 = task.teacher_init(3, 5, STREAM_TRAIN)
    xs, ys, s = [], [], s0
    for k in range(3):
        x, y, s = task.chunk(3, 5, STREAM_TRAIN, k, s)
        xs.append(x), ys.append(y)
    x = torch.cat(xs, 1)[:, :, 0].double().numpy()
    tau = teacher_time_scales(4, 300, 0.5)
    rho = np.exp(-1 / tau)
    c = teacher_scale(tau)
    m = s0.numpy().copy()
    ref = np.empty(x.shape)
    for t in range(x.shape[1]):
        m = rho * m + np.sqrt(1 - rho ** 2) * x[:, t:t + 1]
        ref[:, t] = c * m.sum(1)
    np.testing.assert_allclose(torch.cat(ys, 1)[:, :, 0].numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s.numpy(), m, rtol=1e-12)


def test_longmem_target_variance_is_one_plus_noise():
    """Stationary from t = 0: Var y_t = 1 + sigma^2 at every t (independent streams; 4 standard errors)."""
    sigma = 0.5
    task = build_task("longmem", 2, n_mem=8, mem_lag_max=10000, target_noise=sigma)
    n = 20000
    _, y, _ = task.chunk(n, 0, STREAM_TRAIN, 0, task.teacher_init(n, 0, STREAM_TRAIN))
    v = y[:, :, 0].double().var(0).numpy()
    se = (1 + sigma ** 2) * math.sqrt(2 / n)
    assert np.all(np.abs(v - (1 + sigma ** 2)) < 4 * se), v


def test_target_noise_and_stable_inputs():
    n, sigma = 4000, 0.3
    a = build_task("powerlaw", 20, p=0.5)
    b = build_task("powerlaw", 20, p=0.5, target_noise=sigma)
    (xa, ya), (xb, yb) = a.batch(n, 1, STREAM_TRAIN, 0), b.batch(n, 1, STREAM_TRAIN, 0)
    torch.testing.assert_close(xa, xb)                       # the noise is drawn after the inputs
    d = (yb - ya).double().flatten()
    assert abs(d.std().item() - sigma) < 4 * sigma / math.sqrt(2 * d.numel())
    x, _ = build_task("delay", 20, input_alpha=1.0).batch(n, 2, STREAM_TRAIN, 0)
    q = np.quantile(x.numpy().ravel(), [0.25, 0.75])          # Cauchy: quartiles -1, +1
    assert q == pytest.approx([-1, 1], abs=0.05)
    with pytest.raises(ValueError, match="input_alpha"):
        build_task("adding", 20, input_alpha=1.5)
    with pytest.raises(ValueError, match="loss_from"):
        build_task("longmem", 20, loss_from=3)


def test_longmem_resume_is_exact_and_state_is_checkpointed(tmp_path):
    cfg = TrainConfig(model="gru", steps=12, seed=3, **LONG)
    full = train(cfg)
    out = str(tmp_path / "r.npz")
    train(cfg, out, stop_after=7)
    assert "teacher" in load_checkpoint(str(tmp_path / "r.ckpt"))["carry"]
    res = train(cfg, out, resume=True)
    for k in ("zeta", "Lambda", "loss", "loss_ratio", "envelope"):
        np.testing.assert_array_equal(res[k], full[k])
    assert float(full["trivial_loss"]) == 1.0


def test_new_defaults_width_scaled_lr_and_clip():
    cfg = TrainConfig(hidden=512)
    assert cfg.lr_scaling == "mup" and cfg.clip == 1.0 and cfg.lr_base_width == 64
    m = build_model("diaggate", 1, 512, 1, seed=0)
    opt, _, _ = _make_optimizer(m, cfg)
    lr_of = {id(p): g["lr"] for g in opt.param_groups for p in g["params"]}
    assert lr_of[id(m.W)] == lr_of[id(m.W_a)] == lr_of[id(m.readout.weight)] == pytest.approx(3e-3 * 64 / 512)
    assert lr_of[id(m.U)] == lr_of[id(m.b_a)] == lr_of[id(m.readout.bias)] == 3e-3
    # a config written before width scaling rebuilds as it was trained
    assert TrainConfig.from_dict({"model": "diaggate", "lr": 3e-3}).lr_scaling == "none"


def test_diaggate_learns_at_H512_with_the_defaults():
    """Done criterion of issue 10: loss ratio < 0.5 within 500 steps at a short sequence length."""
    res = train(TrainConfig(model="diaggate", hidden=512, task="powerlaw", p=0.5, seq_len=20, batch=8,
                            probe_batch=64, steps=150, record_every=50, seed=0))
    assert res["loss_ratio"][0] > 0.5                        # untrained: near the target variance
    ratio, learned = learned_diagnostic(res)
    assert learned and ratio < 0.5 and res["loss_ratio"][-1] < 0.5, res["loss_ratio"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", MODELS)
def test_step_record_lambda_on_each_device(name, device):
    """Training step, recording and Lambda_q on every device present (cuDNN's GRU/LSTM backward needs
    train mode: the record switches it on even if the caller left the model in eval mode)."""
    res = train(TrainConfig(model=name, steps=3, device=device, **dict(LONG, record_every=3)))
    assert np.isfinite(res["envelope"]).all() and (res["Lambda"] > 0).all()
    task = build_task("delay", 12)
    m = build_model(name, 1, 5, 1, seed=0).to(device)
    opt, _, _ = _make_optimizer(m, TrainConfig(model=name, hidden=5, optimizer="adam"))
    x, y = task.batch(4, 0, STREAM_PROBE, 0, device)
    m.eval()
    r = record_stats(m, task, x, y, opt, "adam", integer_lag_grid(5, 100))
    assert m.training and np.isfinite(r["zeta"]).all() and np.isfinite(r["Lambda"]).all()


def test_nonfinite_lambda_or_adam_state_stops_loudly():
    """Issue 14.5: Adam's second moment overflowed (inf) -> its steps are 0 and Lambda 0 -> an all-NaN
    envelope used to be written. Now: TrainingDiverged naming the cause."""
    m = build_model("sharedgate", 1, 4, 1, seed=0)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    task = build_task("delay", 12)
    x, y = task.batch(4, 0, 0, 0)
    task.loss(m(x), y).backward()
    opt.step()
    opt.state[m.W]["exp_avg_sq"].fill_(float("inf"))
    with pytest.raises(TrainingDiverged, match="second moment"):
        neuron_lambda(m, opt, "adam")
    with pytest.raises(TrainingDiverged, match="Lambda"):
        elr_envelope(np.ones(3), np.zeros(3), np.array([1.0, 2.0]))
    with pytest.raises(TrainingDiverged, match="Lambda"):
        elr_envelope(np.ones(2), np.array([1.0, np.inf]), np.array([1.0]))


def test_inconsistent_checkpoint_records_refused(tmp_path):
    """Issue 14.12: a checkpoint whose records disagree in length is refused on --resume."""
    cfg = TrainConfig(model="diaggate", steps=20, seed=0, hidden=4, task="delay", seq_len=12, batch=4,
                      record_every=5)
    out = str(tmp_path / "r.npz")
    train(cfg, out, stop_after=10)
    st = load_checkpoint(str(tmp_path / "r.ckpt"))
    st["records"]["zeta"] = st["records"]["zeta"][:1]
    save_checkpoint(str(tmp_path / "r.ckpt"), st)
    with pytest.raises(ValueError, match="inconsistent.*'zeta'"):
        train(cfg, out, resume=True)


def test_memory_checked_before_allocating():
    cfg = TrainConfig(hidden=100000, steps=1)
    need = memory_estimate(cfg, cfg.make_task())
    assert need > 6 * 4 * 2 * 100000 ** 2                   # at least the DiagGate weights, 6 copies
    with pytest.raises(ValueError, match="hidden = 100000.*GiB"):
        train(cfg)


def _cli(tmp_path, *argv):
    return run_cli("train", "--quiet", "--out", "x.npz", *argv, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("argv, status, words", [
    (["--optimizer", "sgd", "--lr", "1e10", "--steps", "2", "--hidden", "2", "--seq-len", "10"], 1, ["diverged"]),
    (["--hidden", "100000", "--steps", "1"], 2, ["hidden = 100000", "GiB"]),
    (["--task", "adding", "--seq-len", "2"], 2, ["argument --seq-len:", ">= 3", "adding"]),
])
def test_cli_failures_are_one_line(tmp_path, argv, status, words):
    r = _cli(tmp_path, *argv)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == status and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert all(w in lines[0] for w in words), lines[0]


def test_cli_json_summary(tmp_path):
    r = _cli(tmp_path, "--task", "longmem", "--seq-len", "8", "--hidden", "4", "--batch", "4", "--steps", "4",
             "--record-every", "2", "--mem-lag-max", "50", "--target-noise", "0.2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    run = load_run(str(tmp_path / "x.npz"))
    assert d["records"] == 3 and d["trivial_loss"] == pytest.approx(1.04)
    assert (d["loss_ratio"], d["learned"]) == pytest.approx(learned_diagnostic(run))
    assert run["config"]["clip"] == 1.0 and run["config"]["lr_scaling"] == "mup"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, task", [("diaggate", "longmem"), ("sharedgate", "delay"), ("constgate", "powerlaw")])
def test_fast_step_equals_eager(name, task, device):
    """The CUDA-graph step (levysde.rnn.fast): warm-up side effects undone, static buffers, carried state.
    On the CPU the same code runs without capture and must reproduce the eager run bit for bit; on
    CUDA the captured replay agrees to float32 round-off."""
    kw = dict(LONG, task=task, seq_len=10, steps=9, seed=2, device=device, optimizer="adamw",
              inject_alpha=1.5 if name == "constgate" else None, inject_scale=1e-3 if name == "constgate" else 0.0)
    if task != "longmem":
        kw.update(delay=3)
    eager, fast = train(TrainConfig(model=name, **kw)), train(TrainConfig(model=name, fast=True, **kw))
    for k in ("zeta", "Lambda", "loss", "envelope"):
        if device == "cpu":
            np.testing.assert_array_equal(fast[k], eager[k])
        else:
            np.testing.assert_allclose(fast[k], eager[k], rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="fast"):
        TrainConfig(model="gru", fast=True).validate()
