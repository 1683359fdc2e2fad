"""Training speed (optimizer steps/s, no recording) of each model: seq 200, batch 32, AdamW, powerlaw.

usage: python benchmarks/steps_per_s.py [--threads N] [--hidden 64 256] [--steps 20] [--device cpu]
"""
import argparse
import time

import torch

from levysde.rnn import MODELS, build_model, build_task
from levysde.rnn.tasks import STREAM_TRAIN

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--hidden", type=int, nargs="+", default=[64, 256])
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--device", default="cpu")
ap.add_argument("--models", nargs="+", default=list(MODELS))
a = ap.parse_args()
torch.set_num_threads(a.threads)
task = build_task("powerlaw", 200)
print(f"threads={a.threads} device={a.device} torch={torch.__version__}")
for H in a.hidden:
    for name in a.models:
        m = build_model(name, 1, H, 1, seed=0).to(a.device)
        opt = torch.optim.AdamW(m.parameters(), lr=3e-3)
        batches = [task.batch(32, 0, STREAM_TRAIN, s, a.device) for s in range(a.steps + 2)]

        def step(x, y):
            opt.zero_grad(set_to_none=True)
            task.loss(m(x), y).backward()
            opt.step()
        for x, y in batches[:2]:
            step(x, y)
        if a.device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        for x, y in batches[2:]:
            step(x, y)
        if a.device == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t
        print(f"H={H:5d} {name:11s} {a.steps / dt:8.1f} steps/s", flush=True)
