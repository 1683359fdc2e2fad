"""``levysde envelope``: forgetting envelope f(l), its decay class, slope and learnability
window (THEORY.md §5-§6), from a saved run or, from the model flags, the asymptotic
prediction only."""
from __future__ import annotations

import json
import math
import sys
import warnings

import numpy as np

from ._common import (UsageError, add_model_args, image_output, integer, json_number, real,
                      reject_flags)

#: at most this many leave-one-out blocks in the jackknife over particle groups
_MAX_JACK_BLOCKS = 20


#: simulation runs: fit only lags that at least this many independent excursions reached
_MIN_EXCURSIONS = 100.0

#: RNN runs: the ELR envelope is an exact finite sum over neurons (no sampling noise), so
#: the fits only stop at a numerical floor
_RNN_F_FLOOR = 1e-12

#: defaults of the log lag grid
_LAG_MIN, _N_LAGS = 1.0, 200


def _f_floor(n_indep: float) -> float:
    """Lowest f trusted for classification and slopes: min(100, sqrt(n)) / n, i.e. the
    level where about min(100, sqrt(n)) independent samples still contribute."""
    return min(100.0, math.sqrt(n_indep)) / n_indep


def add_parser(sub):
    p = sub.add_parser(
        "envelope",
        help="forgetting envelope f(l), decay class, log-log slope and learnability window",
        description="Laplace-Tauberian map f(l) = E[exp(-l e^zeta)] (THEORY.md §5) of a saved "
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
                   help=f"log grid: smallest lag (default {_LAG_MIN:g})")
    g.add_argument("--lag-max", type=real(0.0, lo_open=True), default=None,
                   help="log grid: largest lag (default: the longest time scale in the data for "
                        "simulation runs, the run's largest recorded lag for RNN runs, 1e6 for "
                        "the model prediction)")
    g.add_argument("--n-lags", type=integer(2, 100000), default=None,
                   help=f"log grid: number of lags (default {_N_LAGS}). RNN runs without any lag "
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
                   help="RNN runs: plain mean over neurons instead of weighting by Lambda_q (THEORY §9)")
    m = p.add_argument_group("prediction and learnability (THEORY §5-§6)")
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


# ----------------------------------------------------------------------------- run files

def load_run(path: str) -> dict:
    """:func:`levysde.runfile.read_run`, with its one-line errors attributed to ``--from``."""
    from ..runfile import read_run

    try:
        return read_run(path)
    except ValueError as exc:
        raise UsageError(f"--from: {exc}") from None


def _subsample(z, w, n, seed):
    if n is None or n >= z.size:
        return z, w
    idx = np.random.default_rng(seed).choice(z.size, size=n, replace=False)
    return z[idx], (None if w is None else w[idx])


def _theory_from_meta(meta):
    """beta* (or None), tail rate and phase from the model parameters in a run's meta."""
    from ..theory import classify

    if meta.get("beta_theory") is not None:
        b = float(meta["beta_theory"])
        rate = meta.get("tail_rate_theory")
        return (b if math.isfinite(b) else None), (None if rate is None else float(rate)), meta.get("phase")
    try:
        keys = ("eta_j", "eta_g", "kappa", "alpha", "lam")
        if not all(k in meta for k in keys):
            return None, None, None
        r = classify(*(float(meta[k]) for k in keys)).records()[0]
        return r["beta"], r["tail_rate"], r["phase"]
    except (ValueError, TypeError):
        return None, None, None


# ----------------------------------------------------------------------------- main

def _grid_given(args) -> bool:
    """Whether any lag option was given on the command line."""
    return args.lags is not None or any(v is not None for v in (args.lag_min, args.lag_max, args.n_lags))


def _lag_grid(args, lag_max_default):
    if args.lags is not None:
        lags = np.unique(np.asarray(args.lags, dtype=float))
        return lags
    lag_min = args.lag_min if args.lag_min is not None else _LAG_MIN
    n_lags = args.n_lags if args.n_lags is not None else _N_LAGS
    lag_max = args.lag_max if args.lag_max is not None else lag_max_default
    if not lag_max > lag_min:
        raise UsageError(f"--lag-max ({lag_max:g}) must exceed --lag-min ({lag_min:g})")
    return np.geomspace(lag_min, lag_max, n_lags)


def _data_envelope(args, run):
    from ..tauberian import envelope_hist, envelope_samples, valid_lag_max

    meta = run["meta"]
    if run["kind"] == "rnn":
        return _rnn_envelope(args, run)
    out = {"source": None, "groups": None}
    if args.source in (None, "hist"):
        edges = np.asarray(run["hist_edges"], dtype=float)
        counts = np.asarray(run["hist_counts"], dtype=float)
        if counts.ndim == 1:
            counts = counts[None, :]
        if counts.ndim != 2 or counts.shape[1] != edges.size - 1:
            raise UsageError(f"--from: hist_counts has shape {counts.shape}, expected (n_groups, "
                             f"{edges.size - 1})")
        tot = counts.sum(axis=0)
        occ = np.flatnonzero(tot > 0)
        if occ.size == 0:
            raise UsageError("--from: the histogram is empty")
        n_indep = float(run["final_zeta"].size) if "final_zeta" in run else float(counts.shape[0])
        lag_max = valid_lag_max(float(edges[occ[0]]))
        exc_floor_lag = None
        if "excursion_counts" in run:
            # independent excursions whose minimum lies below zeta: trust f(l) while at least
            # _MIN_EXCURSIONS excursions reached below -log l (THEORY §8)
            cum = np.cumsum(np.asarray(run["excursion_counts"], dtype=float).sum(axis=0))
            if cum[-1] >= _MIN_EXCURSIONS:
                i = int(np.searchsorted(cum, _MIN_EXCURSIONS))
                exc_floor_lag = math.exp(-float(edges[i + 1]))
                lag_max = min(lag_max, 100.0 * exc_floor_lag)
        lags = _lag_grid(args, lag_max)
        f = envelope_hist(lags, edges, counts)
        if "hist_outside" in run:
            # mass outside the histogram range, as point masses at its mean zeta
            o = np.asarray(run["hist_outside"], dtype=float).sum(axis=0)
            m_in = counts.sum()
            tot_mass = m_in + o[0] + o[2]
            if o[0] > 0 or o[2] > 0:
                f = f * (m_in / tot_mass)
                for cnt, zsum in ((o[0], o[1]), (o[2], o[3])):
                    if cnt > 0:
                        f = f + cnt / tot_mass * np.exp(-lags * math.exp(zsum / cnt))
                out["outside_mass_fraction"] = float((o[0] + o[2]) / tot_mass)
        if exc_floor_lag is not None and args.f_floor is None:
            out["floor_override"] = float(np.exp(np.interp(math.log(exc_floor_lag), np.log(lags),
                                                           np.log(np.maximum(f, 1e-300)))))
            out["floor_reason"] = (f">= {_MIN_EXCURSIONS:g} independent excursions below -log l "
                                   f"(l <= {exc_floor_lag:.4g})")
        out.update(source="histogram", groups=(edges, counts))
    else:
        if "final_zeta" not in run:
            raise UsageError("--from: this simulation run has no final_zeta samples")
        z, w = np.asarray(run["final_zeta"], dtype=float).ravel(), None
        out["source"] = "final_zeta samples"
        z, w = _subsample(z, w, args.n_samples, args.seed)
        lags = _lag_grid(args, valid_lag_max(float(z.min())))
        r = envelope_samples(lags, z, w)
        f = r.f
        n_indep = r.n_eff
        out["stderr"] = r.stderr
    if args.f_floor is not None:
        floor, reason = args.f_floor, "--f-floor"
    elif "floor_override" in out:
        floor, reason = out.pop("floor_override"), out.pop("floor_reason")
    else:
        floor, reason = _f_floor(n_indep), "min(100, sqrt(n)) / n for n independent samples"
    out.update(lags=lags, f=f, floor=floor, floor_reason=reason)
    beta, rate, phase = _theory_from_meta(meta)
    out.update(beta_theory=beta, tail_rate=rate, phase=phase)
    return out


def _last_row(a):
    a = np.asarray(a, dtype=float)
    return (a[-1] if a.ndim == 2 else a).ravel()


def _rnn_envelope(args, run):
    """ELR envelope of a trained RNN (THEORY §9): f(l) = sum_q Lambda_q e^(-l mu_q) / sum_q Lambda_q
    at the last record. An exact finite sum over the H neurons: no Monte-Carlo error, so the
    fits stop only at a numerical floor. Default: the run's recorded envelope on its own lags."""
    from ..tauberian import envelope_samples

    if args.source is not None:
        raise UsageError("--source applies to simulation runs only; an RNN run's envelope is "
                         "the exact ELR sum over its neurons (THEORY §9)")
    if args.n_samples is not None:
        raise UsageError("--n-samples applies to simulation runs only; an RNN run's envelope is "
                         "the exact ELR sum over its neurons (THEORY §9)")
    z = _last_row(run["zeta"])
    w = None
    if not args.unweighted and "Lambda" in run:
        w = _last_row(run["Lambda"])
        if w.size != z.size:
            raise UsageError(f"--from: Lambda has {w.size} neurons in its last record, zeta {z.size}")
    step = None
    if "step" in run and np.size(run["step"]):
        step = int(np.asarray(run["step"]).ravel()[-1])
    at = "last record" + (f", step {step}" if step is not None else "")
    run_lags = np.asarray(run["lags"], dtype=float).ravel() if "lags" in run else None
    if run_lags is not None and not (run_lags.size >= 2 and np.all(np.isfinite(run_lags))
                                     and np.all(run_lags > 0) and np.all(np.diff(run_lags) > 0)):
        run_lags = None
    rec = None
    if (run_lags is not None and not _grid_given(args) and not args.unweighted and w is not None
            and "envelope" in run):
        env = np.asarray(run["envelope"], dtype=float)
        env = env[-1] if env.ndim == 2 else env
        if env.shape == run_lags.shape and np.all(np.isfinite(env)) and np.all((env >= 0) & (env <= 1)):
            rec = env
    out = {"groups": None}
    if rec is not None:
        lags, f = run_lags, rec
        out["source"] = f"rnn: recorded ELR envelope on the run's lags ({at}, Lambda-weighted)"
    else:
        if _grid_given(args) or run_lags is None:
            lags = _lag_grid(args, float(run_lags[-1]) if run_lags is not None else 1e4)
        else:
            lags = run_lags
        f = envelope_samples(lags, z, w, bin_width=0, errors=False).f
        out["source"] = (f"rnn: ELR envelope from zeta ({at}, "
                         + ("Lambda-weighted)" if w is not None else "unweighted mean over neurons)"))
    if args.f_floor is not None:
        floor, reason = args.f_floor, "--f-floor"
    else:
        floor, reason = _RNN_F_FLOOR, (f"numerical floor {_RNN_F_FLOOR:g} (exact finite sum over "
                                       f"{z.size} neurons, no sampling noise)")
    out.update(lags=lags, f=f, floor=floor, floor_reason=reason, beta_theory=None, tail_rate=None,
               phase=None)
    return out


def _jackknife_slope(lags, groups, lo, hi):
    """Leave-one-block-out jackknife SE of the fitted slope over particle groups."""
    from ..tauberian import envelope_hist, fit_slope

    edges, counts = groups
    G = counts.shape[0]
    if G < 2:
        return None
    blocks = np.array_split(np.arange(G), min(G, _MAX_JACK_BLOCKS))
    sel = (lags >= lo) & (lags <= hi)
    tot = counts.sum(axis=0)
    est = []
    for b in blocks:
        f = envelope_hist(lags[sel], edges, tot - counts[b].sum(axis=0))
        est.append(fit_slope(lags[sel], f, lag_range=(lo, hi), min_points=2).slope)
    est = np.asarray(est)
    B = est.size
    return float(math.sqrt((B - 1) / B * ((est - est.mean()) ** 2).sum()))


def _unit_crossing(asym, domain_lo: float) -> float:
    """Smallest lag above which the decreasing asymptote ``asym`` is <= 1 (inf: never;
    ``domain_lo``: everywhere on its domain l > domain_lo). Bisection in log l."""
    def g(u):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            v = float(asym(np.array([math.exp(u)]))[0])
        return v if not math.isnan(v) else math.inf
    lo = math.log(domain_lo) + 1e-12 if domain_lo > 0 else -700.0
    hi = 700.0
    if g(hi) > 1.0:
        return math.inf
    if g(lo) <= 1.0:
        return float(domain_lo)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > 1.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15 * max(1.0, abs(hi)):
            break
    return math.exp(hi)


def _model_prediction(args):
    """Asymptotic prediction only, from the model flags (THEORY §4-§5).

    The asymptotic forms hold for large l only; at small l they exceed 1, outside the range
    [0, 1] of an envelope. There ``f`` is NaN (null in JSON) and ``valid_from`` is the lag
    where the form drops to 1; H_N uses the form capped at 1."""
    from scipy import special

    from ..theory import classify

    rec = classify(args.eta_j, args.eta_g, args.kappa, args.alpha, args.lam).records()[0]
    lags = _lag_grid(args, 1e6)
    res = {"source": "model (asymptotic prediction)", "lags": lags, "beta_theory": rec["beta"],
           "tail_rate": rec["tail_rate"], "phase": rec["phase"], "amplitude": args.amplitude,
           "gamma": None, "note": None, "f": None, "f_func": None, "slope": None, "valid_from": None,
           "form": None}
    A = args.amplitude
    asym, domain_lo = None, 0.0
    if rec["phase"] == "logarithmic":
        gam = args.alpha - 1.0
        res["decay_class"] = "logarithmic"
        res["gamma"] = gam
        if gam <= 0:
            res["note"] = "alpha <= 1 with lam = 0: no stationary law (THEORY §4)"
        else:
            # p(tau) ~ A / (tau (ln tau)^alpha)  =>  f(l) ~ A/(alpha-1) (ln l)^-(alpha-1)
            def asym(l):
                return A / gam * np.log(l) ** (-gam)
            domain_lo = 1.0
            res["form"] = "A/(alpha-1) (ln l)^-(alpha-1)"
            res["note"] = ("p(tau) ~ A/(tau (ln tau)^alpha) => f ~ A/(alpha-1) (ln l)^-(alpha-1): "
                           "no constant log-log slope")
    elif rec["tail_rate"] is None:
        res.update(decay_class="exponential",
                   note="no noise: point mass at the equilibrium, f = exp(-l/tau0)")
    else:
        rate = float(rec["tail_rate"])
        g_rate = float(special.gamma(rate))
        res["decay_class"] = "polynomial"
        res["slope"] = -rate
        if rec["beta"] is None and args.eta_j > 0:
            # tempering-limited (THEORY §4): rho ~ e^{lam zeta} |zeta|^-(1+alpha), i.e.
            # p(tau) ~ A tau^-(1+lam) (ln tau)^-(1+alpha); Karamata with the slowly varying
            # factor: f(l) ~ A Gamma(lam) l^-lam (ln l)^-(1+alpha)
            k = 1.0 + args.alpha

            def asym(l):
                return A * g_rate * l ** (-rate) * np.log(l) ** (-k)
            domain_lo = 1.0
            res["form"] = "A Gamma(lam) l^-lam (ln l)^-(1+alpha)"
            res["note"] = ("collapsed, tempering-limited: no Cramer root; p(tau) ~ A tau^-(1+lam) "
                           "(ln tau)^-(1+alpha), so f ~ A Gamma(lam) l^-lam (ln l)^-(1+alpha) (the log "
                           "factor is included in f; the local log-log slope -lam - (1+alpha)/ln l "
                           "tends to the reported slope -lam only slowly)")
        else:
            def asym(l):
                return A * g_rate * l ** (-rate)
            res["form"] = "A Gamma(beta) l^-beta"
            if rec["beta"] is None:
                res["note"] = ("collapsed: no Cramer root; tail rate kappa/eta_G (Gaussian noise only), "
                               "f ~ A Gamma(kappa/eta_G) l^-(kappa/eta_G)")
    if asym is not None:
        def asym_safe(l):
            l = np.asarray(l, dtype=float)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                v = asym(np.where(l > domain_lo, l, np.nan))
            return v

        valid_from = _unit_crossing(asym_safe, domain_lo)
        fa = asym_safe(lags)
        ok = (lags >= valid_from) & np.isfinite(fa) & (fa <= 1.0)
        res["f"] = np.where(ok, fa, np.nan)
        res["valid_from"] = valid_from

        def f_func(l):
            v = asym_safe(l)
            return np.where(np.isfinite(v) & (v <= 1.0), v, 1.0)
        res["f_func"] = f_func
    return res


def _emit(text: str) -> None:
    """Write the whole report at once; a reader that stopped early (``| head``) ends the
    output quietly instead of raising BrokenPipeError at the write or at exit."""
    import os

    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def _reject_inapplicable(args) -> None:
    """One-line UsageError for a flag that would be silently ignored by this combination."""
    reject_flags(args, ("lag_min", "lag_max", "n_lags"), "with --lags (explicit lags replace the log grid)")
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
    from ..learnability import kappa_alpha, learnability_window
    from ..tauberian import classify_decay, fit_slope

    model_given = args.eta_j is not None
    if args.run_file is None and not model_given:
        raise UsageError("give --from RUN.npz or the model flags (at least --eta-j)")
    if args.run_file is not None and model_given:
        raise UsageError("--from and --eta-j exclude each other")
    _reject_inapplicable(args)
    plot_path = image_output(args.plot, "--plot", args.force) if args.plot else None
    out = {}
    if args.run_file is None:
        res = _model_prediction(args)
        lags, f = res["lags"], res["f"]
        out.update(source=res["source"], phase=res["phase"], beta_theory=res["beta_theory"],
                   tail_rate=res["tail_rate"], amplitude=res["amplitude"], decay_class=res["decay_class"],
                   slope=res["slope"], gamma=res["gamma"], form=res["form"],
                   asymptote_valid_from=json_number(res["valid_from"]), note=res["note"])
        f_func = res["f_func"]
    else:
        run_data = load_run(args.run_file)
        if run_data["kind"] != "rnn":
            reject_flags(args, ("unweighted",), "to a simulation run (its envelope has no "
                                                "Lambda weights; --unweighted is for RNN runs)")
        res = _data_envelope(args, run_data)
        lags, f = res["lags"], res["f"]
        out.update(source=res["source"], kind=run_data["kind"], phase=res["phase"],
                   beta_theory=res["beta_theory"], tail_rate=res["tail_rate"], f_floor=res["floor"],
                   f_floor_reason=res["floor_reason"])
        if "outside_mass_fraction" in res:
            out["outside_mass_fraction"] = res["outside_mass_fraction"]
        f_func = None
        try:
            dc = classify_decay(lags, f, f_floor=res["floor"])
            out["decay_class"] = dc.name
            out["decay_fit"] = dc.records()
        except ValueError as exc:
            warnings.warn(f"decay class not determined: {exc}")
            out["decay_class"] = None
        try:
            sf = fit_slope(lags, f, f_floor=res["floor"])
            out["slope"] = sf.slope
            out["slope_lag_range"] = [sf.lag_lo, sf.lag_hi]
            se = _jackknife_slope(lags, res["groups"], sf.lag_lo, sf.lag_hi) if res["groups"] else None
            out["slope_se"] = se if se is not None else sf.se
            out["slope_se_method"] = ("jackknife over particle groups" if se is not None
                                      else "OLS (fit quality; the RNN envelope has no sampling error)"
                                      if run_data["kind"] == "rnn" else "OLS (iid)")
        except ValueError as exc:
            warnings.warn(f"slope not determined: {exc}")
            out["slope"] = None
        if "stderr" in res:
            out["f_stderr"] = [json_number(v) for v in res["stderr"]]
    if args.N is not None:
        k = kappa_alpha(args.alpha_g)
        out["kappa_alpha"] = k
        try:
            if f_func is not None:
                out["H_N"] = learnability_window(args.N, f_func=f_func, alpha_g=args.alpha_g, C=args.C)
            elif f is not None:
                out["H_N"] = learnability_window(args.N, lags=lags, f=f, alpha_g=args.alpha_g, C=args.C)
            else:
                out["H_N"] = None
        except ValueError as exc:
            warnings.warn(f"H_N not determined: {exc}")
            out["H_N"] = None
    out = {"lags": [float(x) for x in lags],
           "f": None if f is None else [json_number(x) for x in f], **out}
    if plot_path:
        from ..plotting import plot_envelope

        fit_window = None
        if out.get("decay_fit"):
            fit_window = (out["decay_fit"]["lag_lo"], out["decay_fit"]["lag_hi"])
        model = args.run_file is None
        written = plot_envelope(
            np.asarray(lags), None if f is None else np.asarray(f, dtype=float), plot_path,
            beta=None if model else out.get("beta_theory"),
            slope=None if model else out.get("slope"),
            slope_window=out.get("slope_lag_range"), fit_window=fit_window,
            f_label=(f"asymptotic prediction {out['form']}" if model and out.get("form") else None),
            title=f"levysde envelope: {out['source']}")
        where = f"levysde envelope: plot written to {written}\n"
    if args.json:
        if plot_path:
            sys.stderr.write(where)
        _emit(json.dumps(out, indent=2, allow_nan=False) + "\n")
        return 0
    _emit(_text_report(out) + (where if plot_path else ""))
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
