"""Train the anti-collapse paper's experiment (a profile x models x seeds) as a resumable campaign.

The experiment under its own protocol: a named profile x models x seeds, trained on the Dask
sweep of ``levysde diagram`` and resumable (docs/rnn.md, "Profiles").

    python examples/paper_campaign.py --preset cpu [--out results/paper_cpu] [--models ...]
        [--seeds 47 83 ...] [--epochs E] [--device cpu|cuda] [--scheduler local|sequential|tcp://HOST:PORT]
        [--workers 2] [--batch-seeds] [--budget-s S] [--status] [--json] [--quick]

Profiles (levysde.rnn.presets.PRESETS): ``paper`` (the paper's numbers, a GPU job), ``paper-smoke``
(the author's pipeline check), ``cpu`` (every length / 8, for 2-core machines), ``cpu-quick``
(``--quick``: a CI check of the pipeline, seconds). Models: ``constgate-pathB`` (ConstGate),
``constgate-pathA`` (ConstGate + slow-mode forcing), ``sharedgate``, ``diaggate``.

Resumable: rerun the same command. Finished runs are skipped (the sweep's store ``OUT/sweep``),
interrupted ones continue from their checkpoints (``OUT/runs/*.ckpt``). ``--budget-s S`` stops
every run at its first step after S seconds, its checkpoint written (exit 3, "paused"; rerun
to continue).
A finished run whose run file was deleted is trained again (its result in the store is removed
first, and said on stderr).
``--status`` prints the progress of the runs without training (and without torch). One line per
run of the selected profile, models and seeds: label, seed, step/steps, records, probe loss ratio,
std of zeta_window, non-decaying units, training seconds; "not started" for a run without a file.
Bad input (a usage error, an ``--out`` that is a file, ``--status`` where there is no
campaign, training without torch): one line on stderr, exit status 2, before any work.
"""
from __future__ import annotations

import json
import math
import sys
import time

from levysde.core.extras import MissingExtraError, require
from levysde.core.jsonable import to_jsonable
from levysde.rnn.presets import PAPER_MODELS, PRESETS
from levysde.studies.campaign_plan import campaign_points, campaign_status
from levysde.studies.drivers import CampaignParser

EXIT_PAUSED = 3


def _num(v, fmt: str) -> str:
    return format(v, fmt) if math.isfinite(v) else "n/a"


def print_rows(rows) -> None:
    print(f"{'run':<26}{'step':>8}{'/steps':>8}{'rec':>5}{'loss ratio':>11}{'sd zeta_w':>10}{'non-dec.':>9}"
          f"{'train s':>9}")
    for r in rows:
        if not r.get("started", True):
            print(f"{r['run']:<26}{'':>8}{r['steps']:>8}  not started")
            continue
        print(f"{r['run']:<26}{r['step']:>8}{r['steps']:>8}{r['records']:>5}{_num(r['loss_ratio'], '.3g'):>11}"
              f"{_num(r['zeta_window_std'], '.3g'):>10}{r['window_masked']:>9}{_num(r['train_s'], '.3g'):>9}")


def parser() -> CampaignParser:
    ap = CampaignParser(description="Train the anti-collapse paper's experiment (a profile x models x seeds) "
                                    "as a resumable campaign, or report its progress.")
    ap.add_argument("--preset", choices=tuple(PRESETS), help="profile (default cpu)")
    ap.add_argument("--quick", action="store_true", help="the cpu-quick profile (CI)")
    ap.add_argument("--out", help="campaign directory (default results/paper_PRESET)")
    ap.add_argument("--models", nargs="+", choices=[m[0] for m in PAPER_MODELS], help="subset of the models")
    ap.add_argument("--seeds", nargs="+", type=int, help="run seeds (default: the profile's)")
    ap.add_argument("--epochs", type=int, help="epochs per run (default: the profile's)")
    ap.add_argument("--device", choices=("cpu", "cuda"), help="default: the profile's")
    ap.add_argument("--scheduler", default="local",
                    help="local (a Dask LocalCluster, default), sequential (no Dask) or tcp://HOST:PORT")
    ap.add_argument("--workers", type=int, help="local cluster workers (default 2), 1 torch thread each")
    ap.add_argument("--batch-seeds", action="store_true",
                    help="train each leaky model's seeds as one batched model (one sweep point per model)")
    ap.add_argument("--budget-s", type=float, help="stop every run at its first step after this many seconds")
    ap.add_argument("--status", action="store_true", help="print the runs' progress, train nothing")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    return ap


def check_args(ap: CampaignParser, a) -> tuple[str, list[dict]]:
    """The profile and the campaign's points, or a one-line usage error; nothing is created."""
    if a.quick and a.preset not in (None, "cpu-quick"):
        ap.error(f"--quick is the cpu-quick profile; it cannot be combined with --preset {a.preset}")
    preset = "cpu-quick" if a.quick else a.preset or "cpu"
    if a.workers is not None and (a.workers < 1 or a.scheduler != "local"):
        ap.error("--workers must be >= 1 and applies to --scheduler local only")
    if a.epochs is not None and a.epochs < 1:
        ap.error(f"--epochs must be >= 1; got {a.epochs}")
    if a.budget_s is not None and not (math.isfinite(a.budget_s) and a.budget_s >= 0):
        ap.error(f"--budget-s must be a finite number of seconds >= 0; got {a.budget_s}")
    if a.seeds is not None and len(set(a.seeds)) < len(a.seeds):
        ap.error(f"--seeds must be distinct; got {' '.join(map(str, a.seeds))}")
    try:
        points = campaign_points(preset, a.models, a.seeds, a.device, a.epochs)
    except ValueError as exc:
        ap.error(f"--seeds: {exc}" if a.seeds else str(exc))
    a.out = a.out or f"results/paper_{preset.replace('-', '_')}"
    ap.campaign_dir(a.out, status=a.status)
    if not a.status:
        try:
            torch = require("torch", "training a campaign")
        except MissingExtraError as exc:
            ap.error(str(exc))
        if any(p["config"]["device"] == "cuda" for p in points) and not torch.cuda.is_available():
            ap.error(f"--device cuda: CUDA is not available (torch {torch.__version__}); use --device cpu")
    return preset, points


def main(argv=None) -> int:
    ap = parser()
    a = ap.parse_args(argv)
    preset, points = check_args(ap, a)
    out = a.out
    status = 0
    if not a.status:
        from levysde.studies.campaign import CampaignPaused, run_campaign

        t0 = time.time()
        deadline = None if a.budget_s is None else t0 + a.budget_s
        try:
            run_campaign(preset, out, labels=a.models, seeds=a.seeds, device=a.device, epochs=a.epochs,
                         scheduler=a.scheduler, n_workers=a.workers, deadline=deadline,
                         progress=not a.json and sys.stderr.isatty(), batch_seeds=a.batch_seeds)
        except CampaignPaused as exc:
            print(f"paused: {exc}", file=sys.stderr)
            status = EXIT_PAUSED
        except (ValueError, ConnectionError, ImportError) as exc:   # ImportError: no Dask (use sequential)
            print(f"paper_campaign.py: error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        if not a.json:
            print(f"{preset}: {time.time() - t0:.0f} s; runs in {out}/runs")
    try:
        rows = campaign_status(out, points)
    except ValueError as exc:
        print(f"paper_campaign.py: error: {exc}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(to_jsonable(rows), indent=1))
    else:
        print_rows(rows)
    return status


if __name__ == "__main__":
    sys.exit(main())
