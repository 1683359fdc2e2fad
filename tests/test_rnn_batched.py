"""Several seeds trained as one batched model (levysde.rnn.batched, ``levysde train --seeds``).

Independent truths: autograd on the separate models (the hand-written backpropagation), and
separate runs of the trainer (``train`` with each seed): the same init, batches, clipped
updates and records up to float32 reassociation. CPU, tiny sizes, seconds each.
"""
import dataclasses
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from levysde.io.runfile import load_run  # noqa: E402
from levysde.rnn import batched  # noqa: E402
from levysde.rnn.batched import BatchedRuns, check_batchable, clip_per_seed, leaky_loss_grads, train_seeds  # noqa: E402
from levysde.rnn.models import build_model  # noqa: E402
from levysde.rnn.trainer import TrainConfig, TrainingDiverged, TrainingRun, train  # noqa: E402
from tests.helpers import call, one_line_error  # noqa: E402

torch.set_num_threads(1)
LEAKY = ("constgate", "sharedgate", "diaggate")
SMALL = dict(task="lagged", seq_len=40, lag_lo=2, lag_hi=20, lag_count=4, input_dim=3, n_train=30,
             batch=8, hidden=5, lr_scaling="none", lr=1e-2, gate_tau0=20.0, steps=8, record_every=4)
#: float32 reassociation over 8 steps (measured worst: 1.2e-6)
RTOL = 2e-5


def _close(sep: dict, bat: dict, rtol=RTOL) -> None:
    """Every run-file array of the batched seed equals the separate run's (wall time aside)."""
    assert set(sep) == set(bat)
    assert bat["config"] == sep["config"] | {k: bat["config"][k] for k in ("torch_version", "levysde_version")}
    for k in sep:
        if k in ("config", "wall"):
            continue
        np.testing.assert_allclose(np.asarray(bat[k], float), np.asarray(sep[k], float), rtol=rtol,
                                   atol=rtol * 1e-2, err_msg=k)


# --- the batched cell ----------------------------------------------------------------------
@pytest.mark.parametrize("name", LEAKY)
@pytest.mark.parametrize("loss_from", [0, 3])
def test_loss_and_gradients_are_autograds(name, loss_from):
    """float64: the hand-written backpropagation through time is autograd's gradient of each
    seed's loss, seed by seed (and a second call reusing the workspace gives the same)."""
    S, B, T, D, H = 3, 4, 7, 2, 5
    models = [build_model(name, D, H, 1, seed=s).double() for s in range(S)]
    P = {k: torch.stack([dict(m.named_parameters())[k].detach() for m in models])
         for k, _ in models[0].named_parameters()}
    a = torch.stack([m.a for m in models]).double() if name == "constgate" else None
    g = torch.Generator().manual_seed(1)
    x = torch.randn(S, B, T, D, generator=g, dtype=torch.float64)
    y = torch.randn(S, B, T, 1, generator=g, dtype=torch.float64)
    ws = {}
    for _ in range(2):
        losses, grads = leaky_loss_grads(P, x, y, loss_from, a, ws)
    for s, m in enumerate(models):
        loss = ((m(x[s])[:, loss_from:] - y[s][:, loss_from:]) ** 2).mean()
        loss.backward()
        assert abs(loss.item() - losses[s].item()) < 1e-13
        for k, p in m.named_parameters():
            np.testing.assert_allclose(grads[k][s].numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-13, err_msg=k)


def test_clip_is_per_seed_global_norm():
    """Each seed's gradient scaled as torch.nn.utils.clip_grad_norm_ scales that seed's own."""
    g = torch.Generator().manual_seed(0)
    shapes = [(4, 3), (4,), (2, 4)]
    P = [torch.zeros(3, *s) for s in shapes]
    for p, k in zip(P, (1.0, 10.0, 0.01), strict=True):
        p.grad = torch.randn(p.shape, generator=g) * k
    want = []
    for s in range(3):
        own = [torch.zeros(sh, requires_grad=True) for sh in shapes]
        for o, p in zip(own, P, strict=True):
            o.grad = p.grad[s].clone()
        torch.nn.utils.clip_grad_norm_(own, 2.0)
        want.append([o.grad for o in own])
    norms = clip_per_seed(P, 2.0)
    assert norms.shape == (3,)
    for s in range(3):
        for o, p in zip(want[s], P, strict=True):
            torch.testing.assert_close(p.grad[s], o, rtol=1e-6, atol=0)


# --- seeds batched = separate runs ------------------------------------------------------------
@pytest.mark.parametrize("name", LEAKY)
@pytest.mark.parametrize("optimizer, clip", [("adamw", 0.3), ("adam", 1e-3), ("sgd", None)])
def test_batched_seeds_are_the_separate_runs(name, optimizer, clip):
    """Records of each seed (zeta, zeta_jac, zeta_window, Lambda, losses, envelope) as its
    separate run's; clip 1e-3 is active at every step, with a different factor per seed."""
    cfg = TrainConfig(**SMALL, model=name, optimizer=optimizer, clip=clip, window_lags=[4, 30, 5])
    seeds = [0, 3]
    res = train_seeds(cfg, seeds)
    for s, r in zip(seeds, res, strict=True):
        _close(train(dataclasses.replace(cfg, seed=s)), r)
    # the seeds differ (so agreement above is not that of one seed with itself)
    assert not np.allclose(res[0]["loss"], res[1]["loss"], rtol=1e-3)


def test_batched_forcing_and_other_tasks_are_the_separate_runs():
    """Injected alpha-stable forcing drawn per (seed, step), and a task whose batches are drawn
    per step (powerlaw, loss from T/2)."""
    cfg = TrainConfig(model="diaggate", hidden=4, task="powerlaw", seq_len=24, batch=6, steps=6, record_every=3,
                      inject_alpha=1.5, inject_scale=1e-3, lr_scaling="none")
    res = train_seeds(cfg, [1, 2])
    for s, r in zip([1, 2], res, strict=True):
        _close(train(dataclasses.replace(cfg, seed=s)), r)


def test_files_resume_and_groups_of_steps(tmp_path):
    """One run file per seed; runs stopped at different steps (separately or batched) are
    resumed batched, stepped in groups until they meet, and end as the uninterrupted runs."""
    cfg = TrainConfig(**SMALL, model="sharedgate")
    outs = [str(tmp_path / f"r{s}.npz") for s in (0, 1, 2)]
    train(dataclasses.replace(cfg, seed=0), outs[0], stop_after=2)          # step 2, separately
    train_seeds(cfg, [1, 2], outs[1:], stop_after=5)                          # steps 5, batched
    res = train_seeds(cfg, [0, 1, 2], outs, resume=True)
    for s, out, r in zip((0, 1, 2), outs, res, strict=True):
        full = train(dataclasses.replace(cfg, seed=s))
        _close(full, r)
        _close(full, load_run(out))
    # a batched checkpoint resumes separately as well
    train_seeds(cfg, [5], [str(tmp_path / "r5.npz")], stop_after=3)
    again = train(dataclasses.replace(cfg, seed=5), str(tmp_path / "r5.npz"), resume=True)
    _close(train(dataclasses.replace(cfg, seed=5)), again)
    with pytest.raises(ValueError, match="exists"):
        train_seeds(cfg, [0], outs[:1])


def test_per_seed_resume_and_a_deadline_end_as_the_uninterrupted_runs(tmp_path):
    """One batched call resumes some seeds and starts others (``resume`` per seed); a deadline
    stops every run at its next batched step with its checkpoint written, and resuming ends
    as the uninterrupted runs."""
    cfg = TrainConfig(**SMALL, model="diaggate")
    outs = [str(tmp_path / f"r{s}.npz") for s in (3, 4)]
    train_seeds(cfg, [3], outs[:1], stop_after=3)
    past = time.monotonic() - 1.0
    train_seeds(cfg, [3, 4], outs, resume=[True, False], deadline=past)
    assert [load_run(o)["step"][-1] for o in outs] == [0, 0]       # records at 0, checkpoints beyond
    res = train_seeds(cfg, [3, 4], outs, resume=True)
    for s, out, r in zip((3, 4), outs, res, strict=True):
        full = train(dataclasses.replace(cfg, seed=s))
        _close(full, r)
        _close(full, load_run(out))
    with pytest.raises(ValueError, match="resume must be one flag"):
        train_seeds(cfg, [5, 6], resume=[True])


def test_a_thread_count_does_not_change_a_result():
    """Bitwise the same records at 1 and 2 torch threads (H = 32: blocked products)."""
    cfg = TrainConfig(**(SMALL | dict(hidden=32, batch=16, n_train=32, steps=4, record_every=2)), model="diaggate")
    res = [train_seeds(dataclasses.replace(cfg, threads=t), [0, 1]) for t in (1, 2)]
    torch.set_num_threads(1)
    for a, b in zip(*res, strict=True):
        for k in a:
            if k not in ("config", "wall"):
                assert np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True), k


def test_the_orthogonal_init_does_not_depend_on_the_thread_count():
    """LAPACK's blocked QR (H = 64, 128) rounds differently on 2 threads unless run on one."""
    for H in (64, 128):
        models = []
        for t in (1, 2):
            torch.set_num_threads(t)
            models.append(build_model("diaggate", 3, H, 1, seed=4, gate_tau0=50.0))
        torch.set_num_threads(1)
        assert torch.get_num_threads() == 1
        for (k, a), b in zip(models[0].named_parameters(), models[1].parameters(), strict=True):
            assert torch.equal(a, b), (H, k)


def test_a_diverged_seed_stops_and_the_others_go_on(tmp_path, monkeypatch):
    """Seed 1's targets turn NaN at step 5: it ends with TrainingDiverged, its records up to
    step 4 kept in its file; seed 0 trains to the end as its separate run."""
    real = batched._train_batch

    def poisoned(run):
        x, y = real(run)
        return (x, y * float("nan")) if run.cfg.seed == 1 and run.step >= 5 else (x, y)

    monkeypatch.setattr(batched, "_train_batch", poisoned)
    cfg = TrainConfig(**SMALL, model="diaggate")
    outs = [str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]
    res = train_seeds(cfg, [0, 1], outs)
    assert isinstance(res[1], TrainingDiverged) and "seed 1" in str(res[1]) and "step 5" in str(res[1])
    assert load_run(outs[1])["step"].tolist() == [0, 4]
    _close(train(dataclasses.replace(cfg, seed=0)), res[0])


def test_what_cannot_be_batched_is_refused(monkeypatch):
    for kw, name in [(dict(model="gru"), "model"), (dict(task="longmem", seq_len=20), "task"),
                     (dict(fast=True), "fast")]:
        with pytest.raises(ValueError, match=name):
            check_batchable(TrainConfig(**kw).validate())
    # an option this module does not know must keep its default
    monkeypatch.setattr(batched, "_COVERED", batched._COVERED - {"transport"})
    with pytest.raises(ValueError, match="transport"):
        check_batchable(TrainConfig(transport=True).validate())
    with pytest.raises(ValueError, match="seeds"):
        train_seeds(TrainConfig(**SMALL), [1, 1])
    runs = [TrainingRun(TrainConfig(**SMALL, seed=s).validate(), None) for s in (0, 1)]
    runs[1].step = 3
    with pytest.raises(ValueError, match="same step"):
        BatchedRuns(runs)


def test_memory_is_checked_before_the_buffers(monkeypatch):
    """The estimate bounds the buffers a step keeps (within a factor 2), and a batch that would
    not fit is refused before it is built."""
    cfg = TrainConfig(**SMALL, model="diaggate").validate()
    runs = [TrainingRun(dataclasses.replace(cfg, seed=s).validate(), None) for s in (0, 1, 2)]
    b = BatchedRuns(runs)
    b.step()
    kept = sum(t.numel() * t.element_size() for t in b.workspace.values())
    assert kept <= batched.workspace_bytes(cfg, 3) <= 2 * kept + 4 * 4 * 3 * 200
    monkeypatch.setattr(batched, "available_memory", lambda: 1000)
    with pytest.raises(ValueError, match="fewer seeds"):
        BatchedRuns(runs)


# --- the CLI --------------------------------------------------------------------------------
ARGS = ["train", "--task", "lagged", "--seq-len", "40", "--lag-lo", "2", "--lag-hi", "20", "--lag-count", "4",
        "--input-dim", "3", "--n-train", "30", "--batch", "8", "--hidden", "5", "--steps", "8",
        "--record-every", "4", "--gate-tau0", "20", "--quiet"]


def _with(**flags):
    """ARGS with the values of some of its flags replaced (a flag may be given once only)."""
    out = list(ARGS)
    for k, v in flags.items():
        out[out.index("--" + k.replace("_", "-")) + 1] = v
    return out


def test_cli_seeds_write_the_separate_runs_files(tmp_path, capsys):
    rc, out, err = call(capsys, *ARGS, "--seeds", "0", "2", "--out", tmp_path / "r_{seed}.npz")
    assert rc == 0, err
    assert len(out.strip().splitlines()) == 2 and "r_2.npz" in out
    rc, _, err = call(capsys, *ARGS, "--seed", "2", "--out", tmp_path / "s.npz")
    assert rc == 0, err
    _close(load_run(tmp_path / "s.npz"), load_run(tmp_path / "r_2.npz"))
    rc, out, err = call(capsys, *_with(steps="12"), "--seeds", "0", "2", "--resume",
                        "--out", tmp_path / "r_{seed}.npz")
    assert rc == 0, err
    assert load_run(tmp_path / "r_0.npz")["step"].tolist() == [0, 4, 8, 12]


@pytest.mark.parametrize("argv, words", [
    (["--seeds", "0", "1", "--out", "r.npz"], ["{seed}"]),
    (["--seeds", "0", "0", "--out", "r_{seed}.npz"], ["distinct"]),
    (["--seeds", "0", "--seed", "1", "--out", "r_{seed}.npz"], ["--seed and --seeds"]),
    (["--seeds", "0", "--model", "gru", "--out", "r_{seed}.npz"], ["--seeds", "model"]),
])
def test_cli_seeds_bad_input_exits_2_one_line(tmp_path, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    rc, _, err = call(capsys, *ARGS, *argv)
    one_line_error(rc, err, *words)


def test_benchmark_quick_runs():
    """benchmarks/bench_batched.py --quick reports every figure (speed itself is not asserted)."""
    import json

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "bench_batched.py"), "--quick", "--json"],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=root))
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert all(row[k] > 0 for k in ("separate", "batched", "batched_s1"))
    assert row["ratio"] == row["batched"] / row["separate"]


def test_cli_seeds_sigterm_exits_143_and_keeps_every_seeds_records(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.Popen([sys.executable, "-m", "levysde", *_with(steps="100000000", record_every="2"),
                          "--seeds", "4", "5", "--out", "s_{seed}.npz"], cwd=tmp_path, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ, PYTHONPATH=root))
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            if (tmp_path / "s_5.npz").exists() and len(load_run(str(tmp_path / "s_5.npz"))["step"]) >= 2:
                break
            time.sleep(0.1)
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=60)[1]
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "SIGTERM" in lines[0] and "s_4.npz" in lines[0] and "Traceback" not in err
    for s in (4, 5):
        d = load_run(str(tmp_path / f"s_{s}.npz"))
        assert len(d["step"]) >= 2 and d["step"][0] == 0 and d["config"]["seed"] == s
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]
