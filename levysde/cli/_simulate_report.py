"""The report of ``levysde simulate``: its caveats, its JSON record and its printed text."""
from __future__ import annotations

import math

from levysde.cli._common import print_json
from levysde.core.jsonable import finite_or_none
from levysde.simulation.bias import tempering_boundary, threshold_dependence


def depth(u, zeq) -> float:
    """The depth u + zeq beyond the equilibrium (the --threshold convention) of a threshold u on
    X = -zeta; rounded to 1e-10 so that a bin edge prints as the value asked for."""
    return round(u + zeq, 10) + 0.0


def at(u, zeq) -> str:
    """A threshold on X = -zeta in words: u, and its depth when the two differ."""
    return f"u = {u:g}" if zeq == 0 else f"u = {u:g} (depth {depth(u, zeq):g})"


def notes(args, res, est, scan):
    """Caveats printed with the result (and listed under "notes" in --json)."""
    m = res.meta
    zeq = m.equilibrium
    out = list(m.notes)
    flag = None
    if not (est.beta_hat is not None and math.isfinite(est.beta_hat)):
        flag = "no_exceedances" if not est.n_exceed > 0 else "unresolved"
        ok = [e.u for e in scan if math.isfinite(e.beta_hat)]
        deepest = max(ok) + zeq if ok else 0.0        # a depth: --threshold must be > 0
        hint = f"e.g. --threshold {deepest:g}" if deepest > 0 else "e.g. --threshold 0.5"
        out.append(f"beta_hat is null: no samples of X = -zeta beyond {at(est.u, zeq)} "
                     f"({'no exceedances' if flag == 'no_exceedances' else 'too few to estimate'}); "
                     f"use a smaller --threshold ({hint}) or a longer run")
    elif not (est.se is not None and math.isfinite(est.se)):
        out.append(f"beta_hat_se is null: the jackknife over the {res.n_groups} groups needs "
                     f"exceedances beyond {at(est.u, zeq)} in at least two groups (too few groups or "
                     f"exceedances); use more --particles and --groups, a longer --t-end or a smaller "
                     f"--threshold")
    if args.drift == "ou":
        out.append("--drift ou has no restoration plateau: the left tail is structurally collapsed "
                      "(docs/specification.md §3), beta_theory is null and beta_hat is a plain exponential fit "
                      "with no theoretical counterpart")
    bb = m.bias_budget
    if bb and est.se is not None and math.isfinite(est.se) and abs(bb["total"]) > 2 * est.se:
        out.append(f"the predicted bias of beta_hat at {at(est.u, zeq)} is {bb['total']:+.4f} (eps "
                     f"{bb['eps']:+.4f}, drift saturation {bb['drift_saturation']:+.4f}), more than 2 "
                     f"standard errors ({est.se:.4f}); compare beta_hat with beta_expected = "
                     f"{bb['beta_expected']:.5f} or use a deeper --threshold")
    depth_needed = tempering_boundary(depth(est.u, zeq), m.beta_theory, m.lam)
    if depth_needed is not None:
        out.append(f"beta* = {m.beta_theory:.5g} is within {100 * (1 - m.beta_theory / m.lam):.2g} % of lam = "
                   f"{m.lam:g} (the tempering boundary): the tail also holds the single-jump term "
                   f"e^(-lam x) x^(-1-alpha), which falls only e-fold faster than e^(-beta* x) by depth "
                   f"{depth_needed:.3g}, so beta_hat at {at(est.u, zeq)} is biased towards lam + (1 + alpha)/u "
                   f"(upwards) beyond what bias_budget models; read it as an upper bound of beta*")
    dep = threshold_dependence(est, scan)
    if dep is not None:
        out.append(f"beta_hat depends on the threshold: {dep[1]:.5f} at the deeper {at(dep[0], zeq)}, "
                     f"{dep[2]:+.1f} standard errors of the difference from beta_hat({at(est.u, zeq)}); the "
                     f"tail is not yet exponential at u (a finite-threshold bias that bias_budget does "
                     f"not model): use a deeper --threshold")
    for flag_name, asked, got in (("--t-end", args.t_end, m.t_end), ("--burn-in", args.burn_in, m.burn_in)):
        if not math.isclose(asked, got, rel_tol=1e-9, abs_tol=1e-12):
            out.append(f"{flag_name} {asked:g} is not a multiple of --dt {m.dt:g}: simulated "
                         f"{flag_name[2:]} = {got:g} ({round(got / m.dt)} steps)")
    return flag, out


def report(args, res, est, scan, fit, flag, caveats, plot_path) -> int:
    """Print the result of a run: one JSON object with ``--json``, else the text report."""
    m = res.meta
    out = {
        "beta_hat": finite_or_none(est.beta_hat), "beta_hat_se": finite_or_none(est.se),
        "beta_hat_flag": flag, "notes": caveats,
        "threshold_u": est.u, "threshold_depth": depth(est.u, m.equilibrium),
        "equilibrium": m.equilibrium, "n_exceed": finite_or_none(est.n_exceed),
        "n_excursions": finite_or_none(est.n_excursions),
        "beta_theory": finite_or_none(m.beta_theory), "beta_model": finite_or_none(m.beta_model),
        "tail_rate_theory": finite_or_none(m.tail_rate_theory), "phase": m.phase,
        "bias_budget": m.bias_budget,
        "eps": m.eps, "dt": m.dt, "particle_steps_per_s": m.particle_steps_per_s, "compile_time_s": m.compile_time_s,
        "backend": m.backend, "device": m.device,
        "wall_time_s": m.wall_time_s, "particles": m.particles, "t_end": m.t_end,
        "burn_in": m.burn_in, "seed": m.seed,
        "tempered_fit_b": finite_or_none(fit.b) if fit else None,
        "tempered_fit_b_se": finite_or_none(fit.se) if fit else None,
        "scan": [{"u": e.u, "depth": depth(e.u, m.equilibrium), "beta_hat": finite_or_none(e.beta_hat),
                  "se": finite_or_none(e.se), "n_excursions": finite_or_none(e.n_excursions)} for e in scan],
    }
    if args.out:
        out["out"] = args.out
    if plot_path:
        out["plot"] = plot_path
    if args.json:
        print_json(out)
        return 0

    def f(v, fmt=".5f"):
        return "-" if v is None or not math.isfinite(v) else format(v, fmt)

    print(f"levysde simulate   eta_J = {m.eta_j:g}   eta_G = {m.eta_g:g}   alpha = {m.alpha:g}   "
          f"lam = {m.lam:g}   drift = {m.drift} (gamma = {args.gamma:g}, z0 = {args.z0:g})")
    print(f"particles = {m.particles}   t_end = {m.t_end:g}   burn-in = {m.burn_in:g}   "
          f"dt = {m.dt:g}   eps = {m.eps:.4g}   seed = {m.seed}")
    compiled = "" if m.compile_time_s is None else f" (+ {m.compile_time_s:.1f} s compiling or loading the kernels)"
    print(f"wall time = {m.wall_time_s:.1f} s{compiled}   particle-steps/s = {m.particle_steps_per_s:.3g}   "
          f"backend = {m.backend} ({m.device})")
    print(f"phase = {m.phase}   beta* = {f(m.beta_theory)}   beta_model (root of Phi_eps) = "
          f"{f(m.beta_model)}   theory tail rate = {f(m.tail_rate_theory)}")
    print(f"tail X > u of X = -zeta: u = {est.u:g} = depth {depth(est.u, m.equilibrium):g} (--threshold) "
          f"beyond the equilibrium X = {-m.equilibrium:g}")
    print(f"beta_hat(u = {est.u:g}) = {f(est.beta_hat)} +- {f(est.se)} (jackknife over {res.n_groups} groups, "
          f"{f(est.n_excursions, '.0f')} excursions)")
    if fit:
        print(f"tempering-limited fit exp(-b x) x^(-1-alpha), {at(fit.u, m.equilibrium)}: "
              f"b = {fit.b:.4f} +- {fit.se:.4f} (lam = {m.lam:g})")
    for note in caveats:
        print(f"note: {note}")
    print()
    print(f"{'depth':>6} {'u':>6} {'beta_hat':>10} {'se':>8} {'excursions':>11}")
    for e in scan:
        print(f"{depth(e.u, m.equilibrium):>6g} {e.u:>6g} {f(e.beta_hat, '.4f'):>10} {f(e.se, '.4f'):>8} "
              f"{f(e.n_excursions, '.0f'):>11}")
    if args.out:
        print(f"\nsaved {args.out}")
    if plot_path:
        print(f"plot  {plot_path}")
    return 0
