"""One GPU run of the anti-collapse campaign: the simulator and trainer benchmarks, then the
``paper-smoke`` profile on CUDA for as long as the budget allows, resumable (docs/rnn.md, "Profiles").

    python examples/paper_gpu.py [--budget-s 420] [--out results/paper_gpu] [--preset paper-smoke]
                                 [--device cuda|cpu] [--quick] [--no-bench]

Runs from a plain checkout with ``PYTHONPATH=.`` (no install, no Dask: the runs go through the
sweep's sequential scheduler). In ``--budget-s`` seconds (default 420, so that the whole command stays under 8
minutes), writing into ``--out`` (default ``results/paper_gpu``, beside the CPU campaign's
``results/paper_cpu``):

1. ``bench_simulate.json``: ``benchmarks/bench_simulate.py --backend cuda --json`` (the
   simulator, CUDA against the CPU backend), in a subprocess with a time limit;
2. ``steps_per_s.txt``: ``benchmarks/steps_per_s.py --device cuda`` (training steps/s, eager and
   CUDA-graph, H = 256 and 512), likewise;
3. ``runs/``, ``sweep/``: the profile's four models (seed 47) trained until the budget is spent;
   every run stops at its first step past the budget with its checkpoint written, so committing
   ``--out`` and rerunning continues where it stopped;
4. ``summary.json``: versions, device, timings, the benchmarks' outcome and the runs' progress.

``--device cpu --quick`` runs the same sequence on the CPU at CI sizes (the ``cpu-quick`` profile
and the benchmarks' ``--quick`` forms): the test of this script. Exit status 0 when every run of
the profile is finished, 3 when the budget ran out first (rerun to continue), 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

if not hasattr(np, "row_stack"):         # numba-cuda still calls np.row_stack (removed from numpy 2.5)
    np.row_stack = np.vstack

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXIT_PAUSED = 3
#: run a benchmark script with the numpy shim above, as __main__, with the given argv
_SHIM = ("import sys, runpy, numpy as np\n"
         "np.row_stack = getattr(np, 'row_stack', np.vstack)\n"
         "sys.argv = sys.argv[1:]\n"
         "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def bench(script: str, args: list, limit: float) -> dict:
    """Run ``benchmarks/SCRIPT ARGS`` in a subprocess for at most ``limit`` seconds."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", _SHIM, str(ROOT / "benchmarks" / script), *args],
                           capture_output=True, text=True, timeout=max(1.0, limit), env=env, cwd=ROOT)
        return {"script": script, "args": args, "rc": p.returncode, "seconds": time.time() - t0,
                "stdout": p.stdout, "stderr": p.stderr[-3000:]}
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return {"script": script, "args": args, "rc": None, "seconds": time.time() - t0,
                "stdout": out, "stderr": f"stopped after the time limit of {limit:.0f} s"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("--budget-s", type=float, default=420.0, help="seconds for the whole run (default 420)")
    ap.add_argument("--out", default="results/paper_gpu", help="results directory (default %(default)s)")
    ap.add_argument("--preset", default="paper-smoke", choices=("paper-smoke", "paper"),
                    help="profile to train (default %(default)s)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--quick", action="store_true", help="CI sizes (the cpu-quick profile, quick benchmarks)")
    ap.add_argument("--no-bench", action="store_true", help="train only (the benchmarks' files are kept)")
    a = ap.parse_args(argv)
    if not a.budget_s > 0:
        ap.error("--budget-s must be > 0")
    t0 = time.time()
    import torch

    if a.device == "cuda" and not torch.cuda.is_available():
        print(f"paper_gpu.py: error: CUDA is not available (torch {torch.__version__})", file=sys.stderr)
        return 2
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cuda = a.device == "cuda"
    summary = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)), "device": a.device,
               "device_name": torch.cuda.get_device_name() if cuda else "cpu", "torch": torch.__version__,
               "numpy": np.__version__, "budget_s": a.budget_s, "quick": a.quick}
    # 1-2: the benchmarks, each with a share of the budget
    share = 0.15 * a.budget_s
    summary["benchmarks"] = {}
    if not a.no_bench:
        summary["benchmarks"] = benchmarks(out, a.device, a.quick, share)
    # 3: the profile's runs until the deadline
    from levysde.studies.campaign import CampaignPaused, campaign_status, run_campaign

    preset = "cpu-quick" if a.quick else a.preset
    deadline = t0 + a.budget_s
    status = 0
    try:
        run_campaign(preset, out, seeds=[47], device=a.device, scheduler="sequential", deadline=deadline,
                     progress=False)
    except CampaignPaused as exc:
        print(f"paused: {exc}", file=sys.stderr)
        status = EXIT_PAUSED
    summary["preset"] = preset
    summary["runs"] = campaign_status(out)
    summary["seconds"] = time.time() - t0
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"{preset} on {summary['device_name']}: {summary['seconds']:.0f} s; "
          f"{sum(r['finished'] for r in summary['runs'])} of {len(summary['runs'])} runs finished; "
          f"results in {out}")
    return status


def benchmarks(out: pathlib.Path, device: str, quick: bool, limit: float) -> dict:
    """The simulator and trainer benchmarks (module docstring), ``limit`` seconds each."""
    sim_args = ["--json", "--backend", device] + (["--quick"] if quick else [])
    sim = bench("bench_simulate.py", sim_args, limit)
    (out / "bench_simulate.json").write_text(sim["stdout"] if sim["rc"] == 0 else json.dumps(sim, indent=1))
    sps_args = ["--device", device] + (["--hidden", "16", "--steps", "2", "--rounds", "1", "--models", "diaggate"]
                                       if quick else ["--hidden", "256", "512", "--steps", "10",
                                                          "--models", "constgate", "sharedgate", "diaggate"])
    sps = bench("steps_per_s.py", sps_args, limit)
    (out / "steps_per_s.txt").write_text(sps["stdout"] + ("" if sps["rc"] == 0 else f"\n[{sps['stderr']}]\n"))
    return {b["script"]: {k: b[k] for k in ("args", "rc", "seconds")} for b in (sim, sps)}


if __name__ == "__main__":
    sys.exit(main())
