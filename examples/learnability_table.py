"""The table of the learnability experiment from a campaign directory (numpy only; figures need
matplotlib). Works on a campaign in progress: it says which cells and runs are missing.

    python examples/learnability_table.py OUT [--markdown] [--figures DIR] [--json] [--quick]

OUT: a directory of ``examples/learnability_campaign.py`` (``OUT/runs/*.learnability.npz``). Every
measured run is measured again from its stored matched statistic with the default settings of
``levysde learnability`` (SNR threshold 0.1, the N grid 25 ... 12800, 400 bootstrap replicates
over sequences, 90 % intervals; ``--quick``: 100 replicates, a faster look with coarser
intervals). One row per (model, optimizer), over its measured seeds:

* loss ratio: the probe loss over the trivial predictor's at the last record, mean +- sd;
* alpha_hat: each seed's median over lags, then mean +- sd over seeds;
* H_N and H_N over significant lags only, at the largest N of the grid: per seed (in the order
  of the seeds column) and their mean;
* the decay class of the envelope f (how many seeds fall in each class), the time scale of its
  exponential fit f ~ exp(-l / tau) (steps), and the log-log slope of the noise scale sigma_hat(l)
  on f(l) (near 1: the noise falls with f, so |m| / sigma need not follow f), mean +- sd;
* the master-law slope b of log N(l) on -kappa_alpha log f(l), grid N(l) (the paper's fit) and
  continuous N*(l), per seed with its 90 % bootstrap interval ("-": withheld, too few lags), and
  how many of the seeds with a slope have 1 inside the interval.

``--figures DIR`` writes ``MODEL-OPT.png`` (plot_learnability of the cell's first seed) for every
cell and ``windows.png`` (H_N against N, mean over seeds, every cell), ``windows_significant.png``
(the same over significant lags).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys

import numpy as np

from levysde.inference.learnability_measure import measure_learnability
from levysde.io.learnfile import read_learnability
from levysde.io.runfile import load_run

MODELS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
OPTIMIZERS = ("adamw", "sgd")
COLORS = {"constgate": "C0", "sharedgate": "C1", "diaggate": "C2", "gru": "C3", "lstm": "C4"}
STYLES = {"adamw": "-", "sgd": "--"}


def _f(v, fmt=".3g"):
    return "-" if v is None or not math.isfinite(v) else format(v, fmt)


def _mean_sd(v, fmt=".3g"):
    v = np.asarray([x for x in v if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return "-"
    if v.size == 1:
        return _f(float(v[0]), fmt)
    return f"{_f(float(v.mean()), fmt)} ± {_f(float(v.std(ddof=1)), fmt)}"


def scan(out, n_boot=400):
    """(measured, unmeasured): measured runs as dicts (model, optimizer, seed, loss_ratio, res:
    the LearnabilityMeasurement), unmeasured: the names of run files without a matched statistic."""
    measured, unmeasured = [], []
    runs = pathlib.Path(out, "runs")
    if not runs.is_dir():
        raise ValueError(f"{out}: no runs/ directory (not a learnability campaign)")
    for f in sorted(runs.glob("*.npz")):
        if f.name.endswith(".learnability.npz"):
            continue
        lpath = runs / (f.name[:-4] + ".learnability.npz")
        if not lpath.exists():
            unmeasured.append(f.name)
            continue
        run = load_run(str(f))
        sums, _ = read_learnability(str(lpath))
        cfg = run["config"]
        measured.append({"run": f.name, "path": str(lpath), "model": str(cfg["model"]),
                         "optimizer": str(cfg["optimizer"]), "seed": int(cfg["seed"]),
                         "loss_ratio": float(np.asarray(run["loss_ratio"])[-1]),
                         "res": measure_learnability(sums, n_boot=n_boot)})
    return measured, unmeasured


def _slope(m):
    ci = m["slope_interval"]
    if m.get("withheld") or not math.isfinite(m["slope"]):
        return "-"
    return f"{_f(m['slope'])} [{_f(ci[0])}, {_f(ci[1])}]"


def _consistent(ms):
    with_slope = [m for m in ms if m.get("consistent_with_1") is not None]
    return f"{sum(bool(m['consistent_with_1']) for m in with_slope)}/{len(with_slope)}"


def _decay_number(decay: dict, which: str) -> float:
    """``tau``: the time scale of f's exponential fit (steps); ``sigma``: the log-log slope of the
    noise scale on f (near 1: sigma carries f's decay). NaN where not measured."""
    if decay.get("status") != "ok":
        return math.nan
    if which == "sigma":
        v = decay.get("sigma_on_f_loglog_slope")
    else:
        v = decay.get("fit", {}).get("candidates", {}).get("exponential", {}).get("param")
    return math.nan if v is None else float(v)


def cell_row(model, optimizer, runs) -> dict:
    """The table's entries of one cell from its measured runs (sorted by seed)."""
    runs = sorted(runs, key=lambda r: r["seed"])
    alpha = [float(np.nanmedian(r["res"].alpha)) if np.isfinite(r["res"].alpha).any() else math.nan for r in runs]
    H = [float(r["res"].H_N[-1]) for r in runs]
    Hs = [float(r["res"].H_N_significant[-1]) for r in runs]
    classes: dict[str, int] = {}
    for r in runs:
        d = r["res"].decay
        c = d.get("f_class", "unavailable") if d.get("status") == "ok" else "unavailable"
        classes[c] = classes.get(c, 0) + 1
    tau_f = [_decay_number(r["res"].decay, "tau") for r in runs]
    sig_f = [_decay_number(r["res"].decay, "sigma") for r in runs]
    grid = [r["res"].master["grid"] for r in runs]
    cont = [r["res"].master["continuous"] for r in runs]
    return {"model": model, "optimizer": optimizer, "seeds": [r["seed"] for r in runs],
            "N_max": float(runs[0]["res"].N_eval[-1]),
            "loss_ratio": _mean_sd([r["loss_ratio"] for r in runs]),
            "alpha_hat": _mean_sd(alpha),
            "H_N": ", ".join(_f(h, "g") for h in H), "H_N_mean": _mean_sd(H, ".4g"),
            "H_N_significant": ", ".join(_f(h, "g") for h in Hs), "H_N_significant_mean": _mean_sd(Hs, ".4g"),
            "f_class": ", ".join(f"{k} {v}" for k, v in sorted(classes.items())),
            "tau_f": _mean_sd(tau_f), "sigma_on_f": _mean_sd(sig_f, ".2f"),
            "slope_grid": "; ".join(_slope(m) for m in grid), "grid_consistent": _consistent(grid),
            "slope_continuous": "; ".join(_slope(m) for m in cont), "continuous_consistent": _consistent(cont)}


COLUMNS = (("model", "model"), ("optimizer", "opt."), ("seeds", "seeds"), ("loss_ratio", "loss ratio"),
           ("alpha_hat", "α̂ (median over lags)"), ("H_N", "H_N per seed"), ("H_N_mean", "H_N mean"),
           ("H_N_significant", "H_N sig. per seed"), ("H_N_significant_mean", "H_N sig. mean"),
           ("f_class", "decay of f"), ("tau_f", "τ of f (steps)"), ("sigma_on_f", "d log σ̂ / d log f"),
           ("slope_grid", "slope, grid N (90 %)"), ("grid_consistent", "≈ 1"),
           ("slope_continuous", "slope, N* (90 %)"), ("continuous_consistent", "≈ 1"))


def _cells(rows):
    return [[", ".join(map(str, r[k])) if isinstance(r[k], list) else str(r[k]) for k, _ in COLUMNS] for r in rows]


def render(rows, markdown: bool) -> str:
    head = [h for _, h in COLUMNS]
    cells = _cells(rows)
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    width = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, width, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, width, strict=True)) for row in cells]
    return "\n".join(lines)


def figures(measured, rows, outdir) -> list[str]:
    from levysde.plotting import plot_learnability, plot_learnability_windows

    os.makedirs(outdir, exist_ok=True)
    written = []
    curves, curves_sig = [], []
    for row in rows:
        runs = sorted((r for r in measured if (r["model"], r["optimizer"]) == (row["model"], row["optimizer"])),
                      key=lambda r: r["seed"])
        first = runs[0]
        title = f"{row['model']} {row['optimizer']} seed {first['seed']}"
        written.append(plot_learnability(first["res"], os.path.join(outdir, f"{row['model']}-{row['optimizer']}.png"),
                                         title=title))
        style = {"color": COLORS.get(row["model"], "k"), "linestyle": STYLES.get(row["optimizer"], "-")}
        label = f"{row['model']} {row['optimizer']}"
        curves.append({"label": label, "N": first["res"].N_eval, "H": [r["res"].H_N for r in runs], **style})
        curves_sig.append({"label": label, "N": first["res"].N_eval,
                           "H": [r["res"].H_N_significant for r in runs], **style})
    if curves:
        written.append(plot_learnability_windows(curves, os.path.join(outdir, "windows.png"),
                                                 title="learnability window H_N (SNR rule, all lags)"))
        written.append(plot_learnability_windows(curves_sig, os.path.join(outdir, "windows_significant.png"),
                                                 title="learnability window over lags with a significant mean",
                                                 which="H_N (significant lags)"))
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("out", metavar="OUT", help="campaign directory (examples/learnability_campaign.py --out)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--figures", metavar="DIR", help="write the figures into DIR")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--quick", action="store_true", help="100 bootstrap replicates instead of 400 (coarser intervals)")
    a = ap.parse_args(argv)
    try:
        measured, unmeasured = scan(a.out, 100 if a.quick else 400)
    except ValueError as exc:
        print(f"learnability_table.py: error: {exc}", file=sys.stderr)
        return 2
    rows = []
    missing = []
    for model in MODELS:
        for opt in OPTIMIZERS:
            runs = [r for r in measured if (r["model"], r["optimizer"]) == (model, opt)]
            if runs:
                rows.append(cell_row(model, opt, runs))
            else:
                missing.append(f"{model} {opt}")
    others = sorted({(r["model"], r["optimizer"]) for r in measured} - {(m, o) for m in MODELS for o in OPTIMIZERS})
    for model, opt in others:
        rows.append(cell_row(model, opt, [r for r in measured if (r["model"], r["optimizer"]) == (model, opt)]))
    if a.json:
        print(json.dumps({"rows": rows, "missing_cells": missing, "unmeasured_runs": unmeasured}, indent=1))
    else:
        n_max = ", ".join(format(n, "g") for n in sorted({r["N_max"] for r in rows})) or "-"
        print(f"{len(measured)} measured runs in {a.out}; H_N at N = {n_max}; intervals: 90 % bootstrap over sequences")
        print(render(rows, a.markdown))
        if missing:
            print(f"cells without a measured run: {', '.join(missing)}")
        if unmeasured:
            print(f"runs not measured yet: {', '.join(unmeasured)}")
    if a.figures:
        try:
            written = figures(measured, rows, a.figures)
        except (ValueError, ImportError) as exc:
            print(f"learnability_table.py: error: {exc}", file=sys.stderr)
            return 2
        if not a.json:
            print(f"figures: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
