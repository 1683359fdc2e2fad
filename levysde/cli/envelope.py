"""``levysde envelope``: forgetting envelope f(l), its decay class, slope and learnability
window (THEORY.md §5-§6), from a saved run or, from the model flags, the asymptotic
prediction only."""
from __future__ import annotations

import json
import math
import sys
import warnings
import zipfile

import numpy as np

from ._common import UsageError, add_model_args, integer, json_number, print_json, real

#: at most this many leave-one-out blocks in the jackknife over particle groups
_MAX_JACK_BLOCKS = 20


#: simulation runs: fit only lags that at least this many independent excursions reached
_MIN_EXCURSIONS = 100.0


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
    g.add_argument("--lag-min", type=real(0.0, lo_open=True), default=1.0,
                   help="log grid: smallest lag (default %(default)s)")
    g.add_argument("--lag-max", type=real(0.0, lo_open=True), default=None,
                   help="log grid: largest lag (default: the longest time scale in the data, "
                        "1e6 for the model prediction)")
    g.add_argument("--n-lags", type=integer(2, 100000), default=200,
                   help="log grid: number of lags (default %(default)s)")
    d = p.add_argument_group("data (with --from)")
    d.add_argument("--source", choices=("hist", "samples"), default="hist",
                   help="simulation runs: the occupation histogram (exact per bin, default) or the "
                        "final particle positions")
    d.add_argument("--n-samples", type=integer(1), default=None,
                   help="use at most this many zeta samples (random subsample; samples sources only)")
    d.add_argument("--f-floor", type=real(0.0, 1.0, hi_open=True), default=None,
                   help="lowest f used by the decay class and slope fits (default min(100, sqrt(n))/n "
                        "for n independent samples or particles)")
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
    p.add_argument("--plot", metavar="FILE.png", help="log-log plot of f with the predicted power law")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
    return p


# ----------------------------------------------------------------------------- run files

def load_run(path: str) -> dict:
    """Read a run file (.npz, allow_pickle=False) and return a dict with 'kind', 'meta'
    and the arrays. Raises UsageError with one line for a missing or corrupt file."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise UsageError(f"--from: no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"--from: {path} is a directory, not a .npz run file") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError):
        raise UsageError(f"--from: cannot read {path}: not a valid .npz archive (missing, truncated "
                         f"or corrupt, or it holds pickled objects)") from None
    key = "meta" if "meta" in data else "config" if "config" in data else None
    if key is None:
        raise UsageError(f"--from: {path} has no 'meta' or 'config' entry (not a levysde run)")
    try:
        meta = json.loads(str(data[key][()]))
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--from: the '{key}' entry of {path} is not a JSON object ({exc})") from None
    kind = meta.get("kind")
    if kind not in ("simulation", "rnn"):
        raise UsageError(f"--from: {path}: unknown run kind {kind!r} (expected 'simulation' or 'rnn')")
    need = {"simulation": ("hist_edges", "hist_counts"), "rnn": ("zeta",)}[kind]
    missing = [k for k in need if k not in data]
    if missing:
        raise UsageError(f"--from: {path} ({kind} run) lacks {', '.join(missing)}")
    data["meta"] = meta
    data["kind"] = kind
    return data


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

def _lag_grid(args, lag_max_default):
    if args.lags is not None:
        lags = np.unique(np.asarray(args.lags, dtype=float))
        return lags
    lag_max = args.lag_max if args.lag_max is not None else lag_max_default
    if not lag_max > args.lag_min:
        raise UsageError(f"--lag-max ({lag_max:g}) must exceed --lag-min ({args.lag_min:g})")
    return np.geomspace(args.lag_min, lag_max, args.n_lags)


def _data_envelope(args, run):
    from ..tauberian import envelope_hist, envelope_samples, valid_lag_max

    meta = run["meta"]
    out = {"source": None, "groups": None}
    if run["kind"] == "simulation" and args.source == "hist":
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
        if run["kind"] == "simulation":
            if "final_zeta" not in run:
                raise UsageError("--from: this simulation run has no final_zeta samples")
            z, w = np.asarray(run["final_zeta"], dtype=float).ravel(), None
            out["source"] = "final_zeta samples"
        else:
            zeta = np.asarray(run["zeta"], dtype=float)
            z = zeta[-1].ravel() if zeta.ndim == 2 else zeta.ravel()
            w = None
            if not args.unweighted and "Lambda" in run:
                lam = np.asarray(run["Lambda"], dtype=float)
                w = (lam[-1] if lam.ndim == 2 else lam).ravel()
            out["source"] = "rnn zeta (last record" + (", Lambda-weighted)" if w is not None else ")")
        z, w = _subsample(z, w, args.n_samples, args.seed)
        lags = _lag_grid(args, valid_lag_max(float(z.min())))
        r = envelope_samples(lags, z, w)
        f = r.f
        n_indep = r.n_eff
        out["stderr"] = r.stderr
    floor = args.f_floor if args.f_floor is not None else out.pop("floor_override", _f_floor(n_indep))
    out.update(lags=lags, f=f, floor=floor)
    beta, rate, phase = _theory_from_meta(meta)
    out.update(beta_theory=beta, tail_rate=rate, phase=phase)
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


def _model_prediction(args):
    """Asymptotic prediction only, from the model flags (THEORY §4-§5)."""
    from scipy import special

    from ..tauberian import tauberian_prediction
    from ..theory import classify

    rec = classify(args.eta_j, args.eta_g, args.kappa, args.alpha, args.lam).records()[0]
    lags = _lag_grid(args, 1e6)
    res = {"source": "model (asymptotic prediction)", "lags": lags, "beta_theory": rec["beta"],
           "tail_rate": rec["tail_rate"], "phase": rec["phase"], "amplitude": args.amplitude,
           "gamma": None, "note": None}
    A = args.amplitude
    if rec["phase"] == "logarithmic":
        gam = args.alpha - 1.0
        res["decay_class"] = "logarithmic"
        res["gamma"] = gam
        if gam <= 0:
            res["f"], res["f_func"], res["slope"] = None, None, None
            res["note"] = "alpha <= 1 with lam = 0: no stationary law (THEORY §4)"
        else:
            # p(tau) ~ A / (tau (ln tau)^alpha)  =>  f(l) ~ A/(alpha-1) (ln l)^-(alpha-1)
            def f_func(l):
                with np.errstate(divide="ignore", invalid="ignore"):
                    return A / gam * np.log(np.asarray(l, dtype=float)) ** (-gam)
            res["f_func"] = f_func
            res["f"] = np.where(lags > math.e, f_func(np.maximum(lags, math.e)), np.nan)
            res["slope"] = None
            res["note"] = "f ~ A/(alpha-1) (ln l)^-(alpha-1): no constant log-log slope"
    elif rec["tail_rate"] is None:
        res.update(decay_class="exponential", f=None, f_func=None, slope=None,
                   note="no noise: point mass at the equilibrium, f = exp(-l/tau0)")
    else:
        rate = rec["tail_rate"]
        res["decay_class"] = "polynomial"
        res["slope"] = -rate
        res["f_func"] = lambda l: A * special.gamma(rate) * np.asarray(l, dtype=float) ** (-rate)
        res["f"] = tauberian_prediction(lags, A=A, beta=rate)
        if rec["beta"] is None:
            res["note"] = ("collapsed: no Cramer root; tail rate "
                           + ("lam (tempering-limited, extra (ln tau)^-(1+alpha) factor)"
                              if args.eta_j > 0 else "kappa/eta_G (Gaussian noise only)"))
    return res


def run(args) -> int:
    from ..learnability import kappa_alpha, learnability_window
    from ..tauberian import classify_decay, fit_slope

    model_given = args.eta_j is not None
    if args.run_file is None and not model_given:
        raise UsageError("give --from RUN.npz or the model flags (at least --eta-j)")
    if args.run_file is not None and model_given:
        raise UsageError("--from and --eta-j exclude each other")
    out = {}
    if args.run_file is None:
        if args.n_samples is not None:
            raise UsageError("--n-samples needs --from (the model gives the asymptotic prediction only)")
        res = _model_prediction(args)
        lags, f = res["lags"], res["f"]
        out.update(source=res["source"], phase=res["phase"], beta_theory=res["beta_theory"],
                   tail_rate=res["tail_rate"], amplitude=res["amplitude"], decay_class=res["decay_class"],
                   slope=res["slope"], gamma=res["gamma"], note=res["note"])
        f_func = res["f_func"]
    else:
        run_data = load_run(args.run_file)
        res = _data_envelope(args, run_data)
        lags, f = res["lags"], res["f"]
        out.update(source=res["source"], kind=run_data["kind"], phase=res["phase"],
                   beta_theory=res["beta_theory"], tail_rate=res["tail_rate"], f_floor=res["floor"],
                   f_floor_reason=res.get("floor_reason", "min(100, sqrt(n)) / n for n independent samples"
                                          if args.f_floor is None else "--f-floor"))
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
            out["slope_se_method"] = "jackknife over particle groups" if se is not None else "OLS (iid)"
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
    if args.plot:
        from ..plotting import plot_envelope

        plot_envelope(np.asarray(lags), None if f is None else np.asarray(f, dtype=float), args.plot,
                      beta=out.get("beta_theory") or (-out["slope"] if out.get("slope") else None),
                      slope_window=out.get("slope_lag_range"),
                      title=f"levysde envelope: {out['source']}")
    if args.json:
        print_json(out)
        return 0
    _print_text(out)
    return 0


def _print_text(out):
    def num(v):
        return "-" if v is None else f"{v:.6g}"

    print(f"levysde envelope   source: {out['source']}")
    if out.get("phase"):
        print(f"phase: {out['phase']}   beta* (theory): {num(out.get('beta_theory'))}   "
              f"tail rate: {num(out.get('tail_rate'))}")
    print(f"decay class: {out.get('decay_class') or '-'}   fitted large-lag slope: {num(out.get('slope'))}"
          + (f" +- {num(out['slope_se'])}" if out.get("slope_se") is not None else ""))
    if "H_N" in out:
        print(f"learnability window H_N = {num(out['H_N'])}   (kappa_alpha = {num(out['kappa_alpha'])})")
    if out.get("note"):
        print(f"note: {out['note']}")
    if out["f"] is not None:
        print(f"{'lag':>14} {'f':>14}")
        lags, f = out["lags"], out["f"]
        step = max(1, len(lags) // 20)
        for i in range(0, len(lags), step):
            print(f"{lags[i]:>14.6g} {num(f[i]):>14}")
    sys.stdout.flush()
