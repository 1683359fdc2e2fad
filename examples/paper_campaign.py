"""The anti-collapse paper's experiment under its own protocol: a named profile x models x seeds,
trained on the Dask sweep of ``levysde diagram`` and resumable (docs/rnn.md, "Profiles").

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
``--status`` prints the progress of the run files without training. One line per run:
label, seed, step/steps, records, probe loss ratio, std of zeta_window, non-decaying units.
Bad input (a usage error, an ``--out`` that is a file, ``--status`` where there is no
campaign): one line on stderr, exit status 2.
"""
from __future__ import annotations

import json
import sys
import time

from levysde.rnn.presets import PAPER_MODELS, PRESETS
from levysde.studies.drivers import CampaignParser

EXIT_PAUSED = 3


def print_rows(rows) -> None:
    print(f"{'run':<26}{'step':>8}{'/steps':>8}{'rec':>5}{'loss ratio':>11}{'sd zeta_w':>10}{'non-dec.':>9}"
          f"{'train s':>9}")
    for r in rows:
        print(f"{r['run']:<26}{r['step']:>8}{r['steps']:>8}{r['records']:>5}{r['loss_ratio']:>11.3g}"
              f"{r['zeta_window_std']:>10.3g}{r['window_masked']:>9}{r['train_s']:>9.0f}")


def main(argv=None) -> int:
    ap = CampaignParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=tuple(PRESETS), default="cpu", help="profile (default %(default)s)")
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
    a = ap.parse_args(argv)
    preset = "cpu-quick" if a.quick else a.preset
    out = a.out or f"results/paper_{preset.replace('-', '_')}"
    if a.workers is not None and (a.workers < 1 or a.scheduler != "local"):
        ap.error("--workers must be >= 1 and applies to --scheduler local only")
    if a.epochs is not None and a.epochs < 1:
        ap.error(f"--epochs must be >= 1; got {a.epochs}")
    ap.campaign_dir(out, status=a.status)
    from levysde.studies.campaign import CampaignPaused, campaign_status, run_campaign

    status = 0
    if not a.status:
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
            print(f"paper_campaign.py: error: {exc}", file=sys.stderr)
            return 2
        if not a.json:
            print(f"{preset}: {time.time() - t0:.0f} s; runs in {out}/runs")
    try:
        rows = campaign_status(out)
    except ValueError as exc:
        print(f"paper_campaign.py: error: {exc}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        print_rows(rows)
    return status


if __name__ == "__main__":
    sys.exit(main())
