"""``levysde envelope``: forgetting envelope f(l), its decay class, slope and learnability
window (docs/specification.md §5-§6), from a saved run or, from the model flags, the asymptotic
prediction only."""
from __future__ import annotations

import json
import sys
import warnings

import numpy as np

from levysde.cli._common import UsageError, add_model_args, emit, image_output, integer, real, reject_flags
from levysde.core.jsonable import finite_or_none
from levysde.inference.envelope_grid import LAG_MIN, N_LAGS


def add_parser(sub):
    p = sub.add_parser(
        "envelope",
        help="forgetting envelope f(l), decay class, log-log slope and learnability window",
        description="Laplace-Tauberian map f(l) = E[exp(-l e^zeta)] (docs/specification.md §5) of a saved "
                    "simulation or RNN run (--from RUN.npz), or the asymptotic prediction "
                    "A Gamma(beta*) l^-beta* from the model flags; learnability window H_N (§6).",
    )
    p.add_argument("--from", dest="run_file", metavar="RUN.npz",
                   help="a run saved by the simulator (kind 'simulation') or the RNN trainer (kind 'rnn')")
    add_model_args(p, multi_eta_j=False, eta_j_required=False)
    g = p.add_argument_group("lags (steps)")
    g.add_argument("--lags", type=real(0.0, lo_open=True), nargs="+", metavar="L",
                   help="explicit lags > 0 (overrides the log grid)")
    g.add_argument("--lag-min", type=real(0.0, lo_open=True), default=None,
                   help=f"log grid: smallest lag (default {LAG_MIN:g})")
    g.add_argument("--lag-max", type=real(0.0, lo_open=True), default=None,
                   help="log grid: largest lag (default: simulation runs the longest time scale in the "
                        "data, for histograms at most 100 times the lag 100 excursions reached; RNN runs "
                        "the run's largest recorded lag; the model prediction 1e6). RNN lags beyond "
                        "tau_(10), the 10th longest time scale, are dropped (with a note)")
    g.add_argument("--n-lags", type=integer(2, 100000), default=None,
                   help=f"log grid: number of lags (default {N_LAGS}). RNN runs without any lag "
                        f"option use the run's own recorded lags")
    d = p.add_argument_group("data (with --from)")
    d.add_argument("--source", choices=("hist", "samples"), default=None,
                   help="simulation runs only: the occupation histogram (exact per bin, default) or "
                        "the final particle positions (an error with an RNN run)")
    d.add_argument("--n-samples", type=integer(1), default=None,
                   help="simulation runs with --source samples: use at most this many zeta samples "
                        "(random subsample)")
    d.add_argument("--f-floor", type=real(0.0, 1.0, hi_open=True), default=None,
                   help="lowest f used by the decay class and slope fits (default: simulation runs "
                        "min(100, sqrt(n))/n for n independent particles; RNN runs 1e-12, a "
                        "numerical floor, since their envelope is an exact finite sum)")
    d.add_argument("--seed", type=integer(0), default=0, help="seed of the subsample (default 0)")
    d.add_argument("--unweighted", action="store_true",
                   help="RNN runs: plain mean over neurons instead of weighting by Lambda_q (docs/specification.md §9)")
    m = p.add_argument_group("prediction and learnability (docs/specification.md §5-§6)")
    m.add_argument("--amplitude", type=real(0.0, lo_open=True), default=1.0,
                   help="model prediction: tail amplitude A of p(tau) ~ A tau^(-1-beta) "
                        "(the theory fixes beta*, not A; default %(default)s)")
    m.add_argument("--alpha-g", type=real(1.0, 2.0, lo_open=True), default=2.0,
                   help="stability index of the gradient noise, in (1, 2] (default %(default)s)")
    m.add_argument("--N", type=real(0.0, lo_open=True), default=None,
                   help="sample budget N: report the learnability window H_N")
    m.add_argument("--C", type=real(0.0, lo_open=True), default=1.0,
                   help="constant C of N(l) = C f(l)^-kappa_a (default %(default)s)")
    p.add_argument("--plot", metavar="FILE.png",
                   help="log-log plot of f with the fitted slope (and the predicted power law when "
                        "the theory gives beta*); format from the suffix, .png appended when none; "
                        "refuses an existing file unless --force")
    p.add_argument("--force", action="store_true", help="overwrite an existing --plot file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
    return p


# ----------------------------------------------------------------------------- run

def load_run(path: str) -> dict:
    """:func:`levysde.io.runfile.read_run`, with its one-line errors attributed to ``--from``."""
    from levysde.io.runfile import read_run

    try:
        return read_run(path)
    except ValueError as exc:
        raise UsageError(f"--from: {exc}") from None


def _grid(args) -> dict:
    """The lag-grid options (None: the data's or the model's default)."""
    if args.lag_min is not None and args.lag_max is not None and not args.lag_max > args.lag_min:
        raise UsageError(f"--lag-max ({args.lag_max:g}) must exceed --lag-min ({args.lag_min:g})")
    return dict(lags=args.lags, lag_min=args.lag_min, lag_max=args.lag_max, n_lags=args.n_lags)


def _model_output(args):
    """(lags, f or None, f_func or None, report fields) of the asymptotic prediction."""
    from levysde.inference.envelope_grid import lag_grid
    from levysde.theory.envelope_asymptotics import asymptotic_envelope

    g = _grid(args)
    lags = lag_grid(g.pop("lag_max") or 1e6, **g)
    a = asymptotic_envelope(args.eta_j, args.eta_g, args.kappa, args.alpha, args.lam,
                            amplitude=args.amplitude)
    out = dict(source="model (asymptotic prediction)", phase=a.phase, beta_theory=a.beta_theory,
               tail_rate=a.tail_rate, amplitude=a.amplitude, decay_class=a.decay_class, slope=a.slope,
               gamma=a.gamma, form=a.form, asymptote_valid_from=finite_or_none(a.valid_from), note=a.note)
    if a.form is None:
        return lags, None, None, out
    return lags, a.values(lags), a.capped, out


def _run_output(args):
    """(lags, f, None, report fields) of the envelope of the run ``--from`` and its fits."""
    from levysde.inference.envelope_fit import fit_run_envelope, rnn_envelope, simulation_envelope

    run = load_run(args.run_file)
    try:
        if run["kind"] == "rnn":
            if args.source is not None:          # (--n-samples needs --source samples)
                raise UsageError("--source applies to simulation runs only; an RNN run's envelope is "
                                 "the exact ELR sum over its neurons (docs/specification.md §9)")
            env = rnn_envelope(run, weighted=not args.unweighted, f_floor=args.f_floor, **_grid(args))
        else:
            reject_flags(args, ("unweighted",), "to a simulation run (its envelope has no "
                                                "Lambda weights; --unweighted is for RNN runs)")
            env = simulation_envelope(run, source=args.source or "hist", n_samples=args.n_samples,
                                      seed=args.seed, f_floor=args.f_floor, **_grid(args))
    except ValueError as exc:
        raise UsageError(f"--from: {exc}") from None
    out = dict(source=env.source, kind=env.kind, phase=env.phase, beta_theory=env.beta_theory,
               tail_rate=env.tail_rate, f_floor=env.f_floor,
               f_floor_reason="--f-floor" if args.f_floor is not None else env.floor_reason)
    if env.outside_mass_fraction is not None:
        out["outside_mass_fraction"] = env.outside_mass_fraction
    out["note"] = env.note
    if env.lag_max is not None:
        out["lag_max"] = env.lag_max
    fits = fit_run_envelope(env)
    out.update(decay_class=fits.decay_class, slope=fits.slope)
    if fits.decay_fit is not None:
        out["decay_fit"] = fits.decay_fit
    if fits.slope is not None:
        out.update(slope_lag_range=list(fits.slope_lag_range), slope_se=fits.slope_se,
                   slope_se_method=fits.slope_se_method)
    if env.stderr is not None:
        out["f_stderr"] = [finite_or_none(v) for v in env.stderr]
    return env.lags, env.f, None, out


def _window(args, lags, f, f_func) -> dict:
    """kappa_alpha and the learnability window H_N (docs/specification.md §6) of the table or the capped form."""
    from levysde.theory.learnability import kappa_alpha, learnability_window

    out = {"kappa_alpha": kappa_alpha(args.alpha_g), "H_N": None}
    try:
        if f_func is not None:
            out["H_N"] = learnability_window(args.N, f_func=f_func, alpha_g=args.alpha_g, C=args.C)
        elif f is not None:
            out["H_N"] = learnability_window(args.N, lags=lags, f=f, alpha_g=args.alpha_g, C=args.C)
    except ValueError as exc:
        warnings.warn(f"H_N not determined: {exc}", stacklevel=2)
    return out


def _plot(args, out, lags, f, plot_path) -> str:
    from levysde.plotting import plot_envelope

    fit_window = None
    if out.get("decay_fit"):
        fit_window = (out["decay_fit"]["lag_lo"], out["decay_fit"]["lag_hi"])
    model = args.run_file is None
    try:
        written = plot_envelope(
            np.asarray(lags), None if f is None else np.asarray(f, dtype=float), plot_path,
            beta=None if model else out.get("beta_theory"),
            slope=None if model else out.get("slope"),
            slope_window=out.get("slope_lag_range"), fit_window=fit_window,
            f_label=(f"asymptotic prediction {out['form']}" if model and out.get("form") else None),
            title=f"levysde envelope: {out['source']}")
    except ValueError as exc:
        raise ValueError("--plot: " + str(exc).removeprefix("path: ")) from None
    return f"levysde envelope: plot written to {written}\n"


def _reject_inapplicable(args) -> None:
    """One-line UsageError for a flag that would be silently ignored by this combination."""
    if args.lags is not None:
        reject_flags(args, ("lag_min", "lag_max", "n_lags"), "with --lags (explicit lags replace the log grid)")
    if args.N is None:
        reject_flags(args, ("alpha_g", "C"), "without --N (they only enter the learnability window H_N)")
    if args.run_file is not None:
        reject_flags(args, ("eta_g", "kappa", "alpha", "lam", "amplitude"),
                     "with --from (the model flags give the asymptotic prediction, not a run's envelope)")
    else:
        reject_flags(args, ("source", "n_samples", "f_floor", "seed", "unweighted"),
                     "without --from RUN.npz (the model flags give the asymptotic prediction only)")
    if args.source != "samples":
        reject_flags(args, ("n_samples",), "without --source samples (the histogram is used whole)")
    if args.n_samples is None:
        reject_flags(args, ("seed",), "without --n-samples (it seeds the random subsample only)")
    if args.force and not args.plot:
        raise UsageError("argument --force: does not apply without --plot")


def run(args) -> int:
    model_given = args.eta_j is not None
    if args.run_file is None and not model_given:
        raise UsageError("give --from RUN.npz or the model flags (at least --eta-j)")
    if args.run_file is not None and model_given:
        raise UsageError("--from and --eta-j exclude each other")
    _reject_inapplicable(args)
    plot_path = image_output(args.plot, "--plot", args.force) if args.plot is not None else None
    lags, f, f_func, fields = _model_output(args) if args.run_file is None else _run_output(args)
    out = {"lags": [float(x) for x in lags], "f": None if f is None else [finite_or_none(x) for x in f],
           **fields}
    if args.N is not None:
        out.update(_window(args, lags, f, f_func))
    where = _plot(args, out, lags, f, plot_path) if plot_path else ""
    if args.json:
        sys.stderr.write(where)
        emit(json.dumps(out, indent=2, allow_nan=False) + "\n")
    else:
        emit(_text_report(out) + where)
    return 0


def _text_report(out) -> str:
    def num(v):
        return "-" if v is None else f"{v:.6g}"

    lines = [f"levysde envelope   source: {out['source']}"]
    if out.get("phase"):
        lines.append(f"phase: {out['phase']}   beta* (theory): {num(out.get('beta_theory'))}   "
                     f"tail rate: {num(out.get('tail_rate'))}")
    lines.append(f"decay class: {out.get('decay_class') or '-'}   "
                 f"{'asymptotic' if out.get('form') else 'fitted large-lag'} slope: {num(out.get('slope'))}"
                 + (f" +- {num(out['slope_se'])}" if out.get("slope_se") is not None else ""))
    if out.get("form"):
        lines.append(f"asymptotic form: f ~ {out['form']}, shown where it is <= 1 "
                     f"(l >= {num(out.get('asymptote_valid_from'))}; '-' below)")
    if "H_N" in out:
        lines.append(f"learnability window H_N = {num(out['H_N'])}   (kappa_alpha = {num(out['kappa_alpha'])})")
    if out.get("note"):
        lines.append(f"note: {out['note']}")
    if out["f"] is not None:
        lines.append(f"{'lag':>14} {'f':>14}")
        lags, f = out["lags"], out["f"]
        step = max(1, len(lags) // 20)
        for i in range(0, len(lags), step):
            lines.append(f"{lags[i]:>14.6g} {num(f[i]):>14}")
    return "\n".join(lines) + "\n"
