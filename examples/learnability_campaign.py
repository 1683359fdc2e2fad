"""The learnability paper's experiment: a named profile x models x optimizers x seeds, each run
trained and then measured (the matched statistic of ``levysde learnability``), on the Dask sweep
of ``levysde diagram`` and resumable (docs/learnability.md, "The experiment").

    python examples/learnability_campaign.py [--preset learnability-cpu] [--out results/learnability_cpu]
        [--models gru lstm ...] [--optimizers adamw sgd] [--seeds 212 1001 ...] [--device cpu|cuda]
        [--scheduler local|sequential|tcp://HOST:PORT] [--workers 2] [--budget-s S] [--status] [--json]
        [--quick]

Profiles (levysde.rnn.learnability_presets): ``learnability`` (the paper's sizes, a GPU job),
``learnability-cpu`` (H = 32, T = 320, 1200 steps; one core per run), ``learnability-quick``
(``--quick``: a pipeline check, seconds). Models: constgate, sharedgate, diaggate, gru, lstm;
optimizers: adamw, sgd. Points run GRU and LSTM first, then the leaky models.

Resumable: rerun the same command. Finished runs are not trained again, interrupted ones continue
from their checkpoints (``OUT/runs/*.ckpt``), and a stored matched statistic
(``OUT/runs/*.learnability.npz``) is not computed again. ``--budget-s S`` stops every run at its
first step after S seconds, its checkpoint written, and starts no measurement after that (exit 3,
"paused"; rerun to continue). ``--status`` prints the runs without training: model, optimizer,
seed, step/steps, probe loss ratio, measured or not, alpha_hat (median over lags), H_N at the
largest N of the grid (all lags, and significant lags only). The table of the experiment:
``python examples/learnability_table.py OUT``. Bad input (a usage error, an ``--out`` that is a
file, ``--status`` where there is no campaign): one line on stderr, exit status 2.
"""
from __future__ import annotations

import json
import math
import sys
import time

from levysde.rnn.learnability_presets import LEARNABILITY_MODELS, LEARNABILITY_OPTIMIZERS, LEARNABILITY_PRESETS
from levysde.studies.drivers import CampaignParser

EXIT_PAUSED = 3


def _g(v, fmt):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, fmt)


def print_rows(rows) -> None:
    print(f"{'model':<11}{'opt':<6}{'seed':>6}{'step':>7}{'/steps':>7}{'loss ratio':>11}{'measured':>9}"
          f"{'alpha med':>10}{'H_N(Nmax)':>10}{'H_N sig.':>9}{'train s':>8}")
    for r in rows:
        print(f"{r['model']:<11}{r['optimizer']:<6}{r['seed']:>6}{r['step']:>7}{r['steps']:>7}"
              f"{_g(r['loss_ratio'], '.3g'):>11}{'yes' if r['measured'] else 'no':>9}"
              f"{_g(r['alpha_median'], '.3f'):>10}{_g(r['H_N'], 'g'):>10}{_g(r['H_N_significant'], 'g'):>9}"
              f"{_g(r['train_s'], '.0f'):>8}")
    if rows:
        n_max = {r["N_max"] for r in rows if r["measured"]}
        if n_max:
            print(f"H_N at N = {', '.join(format(n, 'g') for n in sorted(n_max))}; "
                  f"{sum(r['measured'] for r in rows)} of {len(rows)} runs measured")


def main(argv=None) -> int:
    ap = CampaignParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=tuple(LEARNABILITY_PRESETS), default="learnability-cpu",
                    help="profile (default %(default)s)")
    ap.add_argument("--quick", action="store_true", help="the learnability-quick profile (a pipeline check)")
    ap.add_argument("--out", help="campaign directory (default results/PRESET with _ for -)")
    ap.add_argument("--models", nargs="+", choices=LEARNABILITY_MODELS, help="subset of the models")
    ap.add_argument("--optimizers", nargs="+", choices=LEARNABILITY_OPTIMIZERS, help="subset of the optimizers")
    ap.add_argument("--seeds", nargs="+", type=int, help="run seeds (default: the profile's)")
    ap.add_argument("--device", choices=("cpu", "cuda"), help="default: the profile's")
    ap.add_argument("--scheduler", default="local",
                    help="local (a Dask LocalCluster, default), sequential (no Dask) or tcp://HOST:PORT")
    ap.add_argument("--workers", type=int, help="local cluster workers (default 2), 1 torch thread each")
    ap.add_argument("--budget-s", type=float, help="stop every run at its first step after this many seconds")
    ap.add_argument("--status", action="store_true", help="print the runs' progress, train nothing")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    a = ap.parse_args(argv)
    preset = "learnability-quick" if a.quick else a.preset
    out = a.out or f"results/{preset.replace('-', '_')}"
    if a.workers is not None and (a.workers < 1 or a.scheduler != "local"):
        ap.error("--workers must be >= 1 and applies to --scheduler local only")
    if a.seeds is not None and any(s < 0 for s in a.seeds):
        ap.error("--seeds must be >= 0")
    if a.budget_s is not None and not a.budget_s >= 0:
        ap.error("--budget-s must be >= 0")
    ap.campaign_dir(out, status=a.status)
    from levysde.studies.campaign import CampaignPaused
    from levysde.studies.learnability_campaign import learnability_status, run_learnability_campaign

    status = 0
    if not a.status:
        t0 = time.time()
        deadline = None if a.budget_s is None else t0 + a.budget_s
        try:
            run_learnability_campaign(preset, out, models=a.models, optimizers=a.optimizers, seeds=a.seeds,
                                      device=a.device, scheduler=a.scheduler, n_workers=a.workers,
                                      deadline=deadline, progress=not a.json and sys.stderr.isatty())
        except CampaignPaused as exc:
            print(f"paused: {exc}", file=sys.stderr)
            status = EXIT_PAUSED
        except (ValueError, ConnectionError, ImportError) as exc:   # ImportError: no Dask (use sequential)
            print(f"learnability_campaign.py: error: {exc}", file=sys.stderr)
            return 2
        if not a.json:
            print(f"{preset}: {time.time() - t0:.0f} s; runs in {out}/runs")
    try:
        rows = learnability_status(out)
    except ValueError as exc:
        print(f"learnability_campaign.py: error: {exc}", file=sys.stderr)
        return 2
    if a.json:
        clean = [{k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in r.items()} for r in rows]
        print(json.dumps(clean, indent=1))
    else:
        print_rows(rows)
    return status


if __name__ == "__main__":
    sys.exit(main())
