"""The anti-collapse paper's verdict on a training campaign, beside levysde's check (numpy only;
figures need matplotlib). Works on a campaign in progress: unfinished runs are skipped and counted.

    python examples/paper_verdict.py --campaign results/paper_cpu [--markdown OUT.md] [--figures DIR] [--json]

The campaign is a directory of ``examples/paper_campaign.py`` (``CAMPAIGN/runs/LABEL_sSEED.npz``).
Every finished run is read on the paper's time scale, ``zeta_window`` (tau = exp(-zeta_window);
units that do not decay over the fit window are NaN there, read as censored, tau = inf, or
dropped as the paper's code does), by ``levysde.studies.paper_verdict``. One row per model:

* seeds: the finished runs used;
* loss ratio (probe loss / trivial predictor's loss, last record) and the number of
  non-decaying units at the last record (of H), mean ± sd over seeds;
* the paper's estimators on the model's seeds at once (its way of reporting a model):
  beta_hat_tail (CCDF least squares, 0.75-0.995 window) with its 90 % unit-bootstrap interval,
  the mean over seeds of the last records' estimates and interval ends; kappa_tail (per epoch)
  with its 90 % block-bootstrap interval over every seed's late transitions; beta_env of the
  envelope's tempered fit (mean ± sd over seeds); the phase label (majority over seeds, with
  each seed's label counted); each as censored / dropped;
* levysde's check on zeta_window (``levysde check --variant window``), per seed: stationary and
  independent (how many seeds; the mean rho_hat, the correlation of two neurons' increments at
  one record), kappa (per epoch), beta_tail (non-decaying units dropped / right-censored),
  beta_dynamics (or why it was refused, counted), beta_combined, and the phase or the first gate
  that withheld it (counted over seeds).

Below each model's row, a row "MODEL pooled": levysde's check on all the model's seeds at once
(``levysde.inference.checkpoint_check.check_runs_pooled``: their zeta_window side by side, S H
neurons; the ``learned`` gate the worst seed's), with every gate that withheld the phase. One
seed of H = 64 units is too small for a phase call; pooling takes the seeds as independent
networks (neurons of one network need not be independent: the independence test looks for a
shock common to them at one record). The paper's columns of that row are empty: the model's row
already pools its seeds.

``±`` is the standard deviation over seeds; with one seed, the estimate's own standard error.
``--markdown OUT.md`` writes the table with a per-run table and notes; ``--figures DIR`` writes
``paper_verdict_spectra.png`` (the late windowed spectrum per model), ``paper_verdict_drift.png``
(the far-left drift) and ``paper_verdict_envelopes.png`` (the envelope with the paper's fits).
``--quick``: 200 / 100 bootstrap replicates instead of the paper's 2000 / 3000.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import time

from levysde.core.extras import MissingExtraError, require
from levysde.core.jsonable import to_jsonable
from levysde.inference.paper_protocol import READINGS
from levysde.io.files import check_output
from levysde.studies.drivers import CampaignParser, check_campaign_dir
from levysde.studies.paper_verdict import campaign_runs, verdict_figure_data, verdict_rows, verdict_table

COLUMNS = ("model", "seeds", "loss ratio", "non-decaying units", "paper β̂_tail [90 %] cens. / dropped",
           "paper κ_tail [90 %] per epoch, cens. / dropped", "paper β_env cens. / dropped",
           "paper phase label cens. / dropped", "levysde: stationary", "levysde: independent (ρ̂)",
           "levysde κ̂ per epoch", "levysde β_tail dropped / cens.", "levysde β_dynamics", "levysde β_combined",
           "levysde phase or withheld gates")
#: the paper's columns, empty in a pooled row (the model's row pools them already)
N_PAPER_COLUMNS = 4


def _f(v, fmt=".3g"):
    return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, fmt)


def _spread(num: dict, key: str, se_key: str | None = None, rows=None, fmt=".3g") -> str:
    """mean ± sd over seeds; one seed: its value ± its own se."""
    s = num.get(key) or {"n": 0}
    if s["n"] == 0:
        return "n/a"
    if s["n"] == 1:
        se = (num.get(se_key) or {}).get("mean") if se_key else None
        return _f(s["mean"], fmt) + (f" ± {_f(se, '.2g')}" if se is not None else "")
    return f"{_f(s['mean'], fmt)} ± {_f(s['sd'], '.2g')}"


def _interval(v, lo, hi) -> str:
    return "n/a" if v is None else f"{_f(v)} [{_f(lo)}, {_f(hi)}]"


def _counts(c: dict) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in c.items())


def _check_count(lab: dict, key: str, n: int) -> str:
    c = lab.get(key, {})
    return f"{c.get('true', 0)} of {n}"


def _check_cell(num: dict, lab: dict, key: str, n: int) -> str:
    """levysde's estimate over seeds: mean ± sd of the measured ones, how many there are, and the
    statuses other than "ok" (those without a number counted by their status alone)."""
    statuses = {k: v for k, v in lab.get(f"{key}_status", {}).items() if k != "ok"}
    m = num.get(key, {}).get("n", 0)
    if m == 0:
        return _counts(statuses) or "n/a"
    text = _spread(num, key, f"{key}_se") + (f" ({m} of {n} measured)" if m < n else "")
    return text + (f" [status: {_counts(statuses)}]" if statuses else "")


def _model_row(t: dict) -> list[str]:
    num, lab, pool, n = t["numbers"], t["labels"], t["pooled"], t["n_seeds"]
    beta = " / ".join(_interval(pool.get(f"paper_{r}_beta_hat"), pool.get(f"paper_{r}_beta_lo"),
                                pool.get(f"paper_{r}_beta_hi")) for r in READINGS)
    kappa = " / ".join(_interval(pool.get(f"paper_{r}_kappa"), pool.get(f"paper_{r}_kappa_lo"),
                                 pool.get(f"paper_{r}_kappa_hi")) for r in READINGS)
    env = " / ".join(_spread(num, f"paper_{r}_beta_env") for r in READINGS)
    phase = " / ".join(f"{pool.get(f'paper_{r}_phase', 'n/a')} ({_counts(lab.get(f'paper_{r}_phase', {}))})"
                       for r in READINGS)
    tails = [_check_cell(num, lab, key, n) for key in ("check_beta_tail", "check_beta_tail_censored")]
    dyn = _check_cell(num, lab, "check_beta_dynamics", n)
    called = {k: v for k, v in lab.get("check_phase", {}).items() if k != "none"}
    main = {k: v for k, v in lab.get("check_main_reason", {}).items() if k != "none"}
    verdict = ", ".join(filter(None, [_counts(called), ("withheld: " + _counts(main)) if main else ""]))
    units = f"{_spread(num, 'n_nondecaying', fmt='.1f')} of {t['units']}"
    rho = _spread(num, "check_independence_rho_hat", fmt=".2g")
    return [t["label"], f"{n} ({', '.join(map(str, t['seeds']))})", _spread(num, "loss_ratio"), units, beta, kappa,
            env, phase, _check_count(lab, "check_stationary", n),
            _check_count(lab, "check_independent", n) + (f" (ρ̂ {rho})" if rho != "n/a" else ""),
            _check_cell(num, lab, "check_kappa", n), " / ".join(tails), dyn,
            _check_cell(num, lab, "check_beta_combined", n), verdict]


def _yes(v) -> str:
    return "yes" if v else "no"


def _pooled_row(t: dict) -> list[str]:
    """levysde's check on the model's seeds pooled (their neurons side by side)."""
    p, n = t["pooled"], t["pooled"]["check_n_neurons_pooled"]
    verdict = p["check_phase"] or "withheld: " + ", ".join(p["check_failed_gates"])
    if p["check_phase"] is None and p.get("check_phase_candidates"):
        verdict += "; open: " + " or ".join(p["check_phase_candidates"])
    rho = p.get("check_independence_rho_hat")
    independent = _yes(p["check_independent"]) + (f" (ρ̂ {_f(rho, '.2g')})" if rho is not None else "")
    tails = " / ".join(_estimate(p, k) for k in ("check_beta_tail", "check_beta_tail_censored"))
    return [f"{t['label']} pooled", f"{p['check_n_runs_pooled']} seeds, {n} neurons",
            f"worst {_f(p['loss_ratio_worst'])}", f"{p['n_nondecaying']} of {n}", *[""] * N_PAPER_COLUMNS,
            _yes(p["check_stationary"]), independent, _estimate(p, "check_kappa"), tails,
            _estimate(p, "check_beta_dynamics"), _estimate(p, "check_beta_combined"), verdict]


def markdown_table(table: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for t in table:
        lines.append("| " + " | ".join(_model_row(t)) + " |")
        if "check_n_neurons_pooled" in t["pooled"]:
            lines.append("| " + " | ".join(_pooled_row(t)) + " |")
    return "\n".join(lines)


def _estimate(r: dict, key: str) -> str:
    """A run's estimate with its standard error, or its status without a number."""
    v, se, status = r.get(key), r.get(f"{key}_se"), r.get(f"{key}_status")
    if v is None:
        return status or "n/a"
    text = _f(v) + (f" ± {_f(se, '.2g')}" if se is not None else " (no error)")
    return text + (f" ({status})" if status not in (None, "ok") else "")


def run_table(rows: list[dict]) -> str:
    cols = ("run", "loss ratio", "non-decaying", "paper β̂ dropped [90 %]", "paper phase dropped",
            "levysde stationary", "levysde κ̂ per epoch", "levysde β_tail dropped", "levysde β_tail cens.",
            "levysde β_dynamics", "levysde failed gates")
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join([
            r["run"], _f(r["loss_ratio"]), f"{r['n_nondecaying']} of {r['units']}",
            _interval(r["paper_dropped_beta_hat"], r["paper_dropped_beta_lo"], r["paper_dropped_beta_hi"]),
            r["paper_dropped_phase"], str(r["check_stationary"]).lower(),
            *(_estimate(r, k) for k in ("check_kappa", "check_beta_tail", "check_beta_tail_censored",
                                        "check_beta_dynamics")),
            ", ".join(r["check_failed_gates"]) or "none"]) + " |")
    return "\n".join(out)


def _template(reason: str) -> str:
    """A reason with its numbers and intervals replaced by '#', to group runs that failed alike."""
    return re.sub(r"\[[^]]*\]|-?\d+(\.\d+)?(e-?\d+)?", "#", reason)


def pooled_notes(table: list[dict]) -> list[str]:
    """Per model, what levysde's pooled check says: the phase, or every gate that withheld it and why."""
    out = []
    for t in table:
        p = t["pooled"]
        if "check_n_neurons_pooled" not in p:
            continue
        head = (f"levysde pooled, {t['label']} ({p['check_n_runs_pooled']} seeds, {p['check_n_neurons_pooled']} "
                f"neurons): ")
        out.append(head + (f"phase {p['check_phase']}" if p["check_phase"] else
                           "withheld by " + ", ".join(p["check_failed_gates"]) + ": " + "; ".join(p["check_withheld"])))
    return out


def notes(rows: list[dict], table: list[dict], skipped: list[dict], seconds: float,
          seconds_table: float = math.nan) -> list[str]:
    per_model = ", ".join(f"{t['label']} {t['n_seeds']}" for t in table)
    unfinished = ", ".join(s["run"] for s in skipped)
    out = [f"{len(rows)} finished runs (seeds per model: {per_model}); {len(skipped)} unfinished skipped"
           + (f" ({unfinished})" if skipped else ""),
           f"time: {seconds:.1f} s for the per-run rows ({seconds / max(1, len(rows)):.1f} s per run: the paper's "
           f"estimators and levysde's check), {seconds_table:.1f} s for the per-model table (both pooled over seeds)"]
    out += pooled_notes(table)
    groups: dict = {}

    def add(what, reason, who):
        g = groups.setdefault((what, _template(reason)), {"example": reason, "who": []})
        g["who"].append(who)

    for r in rows:
        for reading in READINGS:
            for est in ("beta", "kappa", "window"):
                if r.get(f"paper_{reading}_{est}_reason"):
                    add(f"paper {est} per run, {reading}", r[f"paper_{reading}_{est}_reason"], r["run"])
        for key in ("check_beta_tail", "check_beta_tail_censored", "check_beta_dynamics"):
            if r[key] is None and r.get(f"{key}_flag"):
                add(f"levysde {key[6:]} {r[f'{key}_status']}", r[f"{key}_flag"], r["run"])
    for t in table:
        for reading in READINGS:
            for est in ("beta", "kappa"):             # the window's reasons: per run above
                if t["pooled"].get(f"paper_{reading}_{est}_reason"):
                    add(f"paper {est} pooled, {reading}", t["pooled"][f"paper_{reading}_{est}_reason"], t["label"])
    for (what, _), g in sorted(groups.items()):
        n = len(g["who"])
        out.append(f"{what} ({n}{', e.g.' if n > 1 else ''}): {g['example']} [{', '.join(g['who'])}]")
    return [_no_nan(n) for n in out]


def _no_nan(note: str) -> str:
    """A note without a bare 'nan': an undefined p-value or number said in words."""
    note = re.sub(r"\bp = nan\b", "p undefined (too few values for the test)", note)
    return re.sub(r"(?<![\w.])[-+]?nan\b", "undefined", note)


def figures(rows: list[dict], directory: str) -> list[str]:
    from levysde.plotting import plot_verdict_drift, plot_verdict_envelopes, plot_verdict_spectra

    os.makedirs(directory, exist_ok=True)
    data = verdict_figure_data(rows)
    return [fn(data, os.path.join(directory, f"paper_verdict_{name}.png")) for name, fn in
            (("spectra", plot_verdict_spectra), ("drift", plot_verdict_drift), ("envelopes", plot_verdict_envelopes))]


def check_figures(directory: str) -> None:
    """``--figures DIR``: matplotlib importable and DIR a directory or creatable as one, else ValueError."""
    try:
        require("matplotlib", "--figures")
    except MissingExtraError as exc:
        raise ValueError(str(exc)) from None
    path = os.path.abspath(directory)
    while not os.path.exists(path):
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        where = "is" if path == os.path.abspath(directory) else f"cannot be created: {path!r} is"
        raise ValueError(f"--figures {directory!r} {where} a file, not a directory; give a directory "
                         f"(it is created if missing)")


def main(argv=None) -> int:
    ap = CampaignParser(description="Print the anti-collapse paper's verdict on a training campaign's finished "
                                    "runs beside levysde's check.")
    ap.add_argument("--campaign", default="results/paper_cpu", metavar="DIR",
                    help="campaign directory of examples/paper_campaign.py (default results/paper_cpu)")
    ap.add_argument("--markdown", metavar="OUT.md", help="write the tables and notes as Markdown to OUT.md")
    ap.add_argument("--figures", metavar="DIR", help="write the three figures into DIR")
    ap.add_argument("--json", action="store_true", help="print the rows and the per-model table as JSON")
    ap.add_argument("--quick", action="store_true", help="200 / 100 bootstrap replicates (beta / kappa)")
    a = ap.parse_args(argv)
    n_beta, n_kappa = (200, 100) if a.quick else (2000, 3000)
    try:
        check_campaign_dir(a.campaign, "--campaign", existing=True)
        if a.markdown:
            check_output(a.markdown, "--markdown", force=True, example="verdict.md")
        if a.figures:
            check_figures(a.figures)
        skipped = [r for r in campaign_runs(a.campaign) if not r["finished"]]
        t0 = time.perf_counter()
        rows = verdict_rows(a.campaign, n_boot_beta=n_beta, n_boot_kappa=n_kappa)
        seconds = time.perf_counter() - t0
        if not rows:
            raise ValueError(f"campaign: no finished run in {a.campaign} ({len(skipped)} unfinished)")
        t0 = time.perf_counter()
        table = verdict_table(rows, n_boot_beta=n_beta, n_boot_kappa=n_kappa)
        seconds_table = time.perf_counter() - t0
    except ValueError as exc:
        print(f"paper_verdict.py: error: {exc}", file=sys.stderr)
        return 2
    for t in table:
        t["units"] = max(r["units"] for r in rows if r["label"] == t["label"])
    text = markdown_table(table)
    if a.json:
        print(json.dumps(to_jsonable({"rows": rows, "table": table, "skipped": [s["run"] for s in skipped]}),
                         indent=1))
    else:
        print(text)
        print("\n".join("note: " + n for n in notes(rows, table, skipped, seconds, seconds_table)))
    if a.markdown:
        doc = ["# The anti-collapse paper's estimators and levysde's check on the campaign's finished runs", "",
               f"Campaign `{a.campaign}`; time scale `zeta_window`. ± is the standard deviation over seeds "
               "(one seed: the estimate's standard error); paper intervals are 90 %. The paper's columns pool "
               "each model's seeds (its phase label: the majority, with each seed's label counted); levysde's "
               "are per seed, an estimate that is not identified counted by its status; \"withheld: G ×n\" "
               "counts the first gate of the phase call that failed (docs/calibration.md, \"How the phase is "
               "called\"). The row \"MODEL pooled\" is levysde's check on the model's seeds at once, their "
               "neurons side by side (S seeds × H units; the seeds taken as independent networks, the learned "
               "gate the worst seed's), an estimate ± its own error, with every gate that withheld the phase; "
               "its paper columns are empty (the model's row pools them already).", "", text, "",
               "## Per run", "", run_table(rows), "", "## Notes", ""]
        doc += ["* " + n for n in notes(rows, table, skipped, seconds, seconds_table)]
        with open(a.markdown, "w", encoding="utf-8") as fh:
            fh.write("\n".join(doc) + "\n")
    if a.figures:
        try:
            written = figures(rows, a.figures)
        except (ValueError, ImportError) as exc:
            print(f"paper_verdict.py: error: {exc}", file=sys.stderr)
            return 2
        if not a.json:
            print(f"figures: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
