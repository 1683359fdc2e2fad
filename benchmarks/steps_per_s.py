"""Training speed (optimizer steps/s, no recording) of each model, eager and fast (CUDA-graph) steps
side by side: seq 200, batch 32, AdamW (muP lr, clip 1), powerlaw; the trainer's own step
(levysde.rnn.trainer._Run.train_step), so what is timed is what `levysde train` runs.

usage: python benchmarks/steps_per_s.py [--device cpu|cuda] [--hidden 64 256] [--steps 20] [--threads 1]
                                        [--models ...] [--seq-len 200] [--batch 32] [--rounds 2]

"fast" replays each step from a CUDA graph on CUDA; on the CPU it runs the same static-buffer
step eagerly (it should match eager: the ratio shows the overhead, ideally 1.00). Eager and
fast are timed alternately, ``--rounds`` times each, and the best round is kept, so the
ratio is robust to a loaded machine. GRU/LSTM have no fast path (fused cuDNN kernels).
"""
import argparse
import time

import torch

from levysde.rnn import MODELS
from levysde.rnn.trainer import TrainConfig, _Run

LEAKY = ("constgate", "sharedgate", "diaggate")


def steps_per_s(run: _Run, steps: int, device: str) -> float:
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        run.train_step()
    if device == "cuda":
        torch.cuda.synchronize()
    return steps / (time.perf_counter() - t)


def main():
    ap = argparse.ArgumentParser(allow_abbrev=False)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hidden", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seq-len", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    name = torch.cuda.get_device_name() if a.device == "cuda" else f"{a.threads} CPU thread(s)"
    print(f"device={a.device} ({name}) torch={torch.__version__} seq={a.seq_len} batch={a.batch}")
    print(f"{'H':>6} {'model':<11} {'eager':>9} {'fast':>9} {'fast/eager':>11}   (steps/s)")
    for H in a.hidden:
        for model in a.models:
            kinds = (False, True) if model in LEAKY else (False,)
            runs = {}
            for fast in kinds:
                cfg = TrainConfig(model=model, hidden=H, task="powerlaw", seq_len=a.seq_len, batch=a.batch,
                                  steps=10 ** 9, record_every=10 ** 9, device=a.device, fast=fast, threads=None)
                runs[fast] = _Run(cfg.validate(), None)
                for _ in range(2):              # warm-up (and the capture of the fast step)
                    runs[fast].train_step()
            best = {k: 0.0 for k in kinds}
            for _ in range(a.rounds):
                for fast in kinds:
                    best[fast] = max(best[fast], steps_per_s(runs[fast], a.steps, a.device))
            fast_s = f"{best[True]:9.1f} {best[True] / best[False]:11.2f}" if True in best else f"{'-':>9} {'-':>11}"
            print(f"{H:6d} {model:<11} {best[False]:9.1f} {fast_s}", flush=True)


if __name__ == "__main__":
    main()
