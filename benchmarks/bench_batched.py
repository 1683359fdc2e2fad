"""Seeds trained as one batched model vs separate runs: seeds*steps/s, side by side in one process.

usage: python benchmarks/bench_batched.py [--hidden 32 64 128] [--threads 1 2] [--seeds 4]
                                          [--models diaggate] [--seq-len 160] [--batch 32]
                                          [--steps 4] [--rounds 3] [--quick] [--json]

The configuration is the ``lagged`` task at the scale of a CPU campaign (T = 160, lags on
[1, 80], D = 16, a fixed set of 512 sequences, gate_tau0 = 25), AdamW, muP lr, clip 1.
``separate``: S runs (levysde.rnn.trainer.TrainingRun.train_step, what ``levysde train --seed``
runs), each stepped once per round step; ``batched``: the same S seeds as one
levysde.rnn.batched.BatchedRuns (``levysde train --seeds``); ``batched S=1``: one seed alone
through the batched step (its hand-written backpropagation without the stacking), to show
where the speed-up comes from. Recording is not timed (it is the same code in both).

The kinds are timed alternately, ``--rounds`` times each, and the best round is kept, so the
ratio is robust to a loaded machine; ``torch.set_num_threads`` is set explicitly for each
row. The last column is the ratio by this process's CPU time (per thread count: with 2
threads it also counts a waiting thread's spinning), the figure least disturbed by other
processes at 1 thread. ``--quick``: H = 8, 2 seeds, 1 round (a smoke run for CI).
"""
import argparse
import dataclasses
import json
import os
import time

import torch

from levysde.rnn.batched import BATCHED_MODELS, BatchedRuns
from levysde.rnn.trainer import TrainConfig, TrainingRun


def _config(model: str, hidden: int, seq_len: int, batch: int) -> TrainConfig:
    return TrainConfig(model=model, hidden=hidden, task="lagged", seq_len=seq_len, batch=batch, n_train=512,
                       lag_lo=1, lag_hi=seq_len // 2, lag_count=min(16, seq_len // 2), input_dim=16,
                       gate_tau0=25.0, optimizer="adamw",
                       clip=1.0, steps=10 ** 9, record_every=10 ** 9, threads=None).validate()


def _rate(step, steps: int, seeds: int) -> tuple[float, float]:
    """seeds*steps/s by the wall clock and by this process's CPU time."""
    t, c = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    return seeds * steps / (time.perf_counter() - t), seeds * steps / (time.process_time() - c)


def measure(model: str, hidden: int, threads: int, seeds: int, seq_len: int, batch: int, steps: int,
            rounds: int) -> dict:
    """Best-of-rounds seeds*steps/s of the three kinds (module docstring) for one row."""
    torch.set_num_threads(threads)
    cfg = _config(model, hidden, seq_len, batch)
    sep = [TrainingRun(dataclasses.replace(cfg, seed=s), None) for s in range(seeds)]
    bat = BatchedRuns([TrainingRun(dataclasses.replace(cfg, seed=s), None) for s in range(seeds)])
    one = BatchedRuns([TrainingRun(dataclasses.replace(cfg, seed=seeds), None)])

    def sep_step():
        for r in sep:
            r.train_step()

    kinds = {"separate": (sep_step, seeds), "batched": (bat.step, seeds), "batched_s1": (one.step, 1)}
    for f, _ in kinds.values():      # warm-up (allocations, the workspace)
        f()
    best = dict.fromkeys(kinds, 0.0)
    cpu = dict.fromkeys(kinds, 0.0)
    for _ in range(rounds):
        for k, (f, n) in kinds.items():
            w, c = _rate(f, steps, n)
            best[k], cpu[k] = max(best[k], w), max(cpu[k], c)
    return dict(model=model, hidden=hidden, threads=threads, seeds=seeds,
                separate=best["separate"], batched=best["batched"], batched_s1=best["batched_s1"],
                ratio=best["batched"] / best["separate"], cpu_ratio=cpu["batched"] / cpu["separate"])


def main():
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--hidden", type=int, nargs="+", default=[32, 64, 128])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--models", nargs="+", default=["diaggate"], choices=BATCHED_MODELS)
    ap.add_argument("--seq-len", type=int, default=160)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.hidden, a.threads, a.seeds, a.steps, a.rounds, a.seq_len, a.batch = [8], [1], 2, 2, 1, 20, 8
    rows = []
    if not a.json:
        print(f"torch={torch.__version__} lagged T={a.seq_len} batch={a.batch} S={a.seeds} seeds "
              f"(seeds*steps/s, best of {a.rounds} rounds of {a.steps} steps); load average "
              f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        print(f"{'H':>5} {'thr':>3} {'model':<11} {'separate':>9} {'batched':>9} {'S=1':>9} {'batched/sep':>11} "
              f"{'(CPU time)':>10}")
    for H in a.hidden:
        for t in a.threads:
            for model in a.models:
                r = measure(model, H, t, a.seeds, a.seq_len, a.batch, a.steps, a.rounds)
                rows.append(r)
                if not a.json:
                    print(f"{H:5d} {t:3d} {model:<11} {r['separate']:9.2f} {r['batched']:9.2f} "
                          f"{r['batched_s1']:9.2f} {r['ratio']:11.2f} {r['cpu_ratio']:10.2f}", flush=True)
    if a.json:
        print(json.dumps(rows))
    else:
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
