"""``levysde phase``: beta*, eta_J*, eta_J^crit, phase and tail rate (docs/theory.md)."""
from __future__ import annotations

from levysde.cli._common import add_model_args, print_json


def add_parser(sub):
    p = sub.add_parser(
        "phase",
        help="spectral exponent beta*, threshold and phase for one or more eta_J",
        description="Solve Phi(beta) = eta_G beta^2 + Psi*(beta) - kappa beta = 0 for beta* "
                    "and classify the phase (docs/theory.md). "
                    "JSON: null beta = no admissible root; null tail_rate = no noise (point mass).",
    )
    add_model_args(p)
    p.add_argument("--mp", action="store_true",
                   help="solve in mpmath high precision (slow; for parameters near a boundary)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: one object, or a list when several --eta-j values are given")
    p.set_defaults(func=run)
    return p


def _fmt(v, width=18):
    if v is None:
        return f"{'-':>{width}}"
    return f"{v:>{width}.15g}"


def _threshold(value, defined: bool, sign: float, undefined: str, below_zero: str) -> str:
    """eta_J* or eta_J^crit as printed: the number, with what a value <= 0 means (docs/specification.md §4)."""
    if not defined:
        return f"undefined ({undefined})"
    if value is None:                       # not finite in float64: the sign of its numerator
        return f"-inf ({below_zero})" if sign < 0 else "inf (no finite eta_J reaches it)"
    return f"{value:.15g}" + (f" (<= 0: {below_zero})" if value <= 0 else "")


def run(args) -> int:
    from levysde.theory.phases import classify

    result = classify(args.eta_j, args.eta_g, args.kappa, args.alpha, args.lam,
                      precision="mp" if args.mp else "double")
    recs = result.records()
    if args.json:
        print_json(recs[0] if len(recs) == 1 else recs)
        return 0
    r0 = recs[0]
    print(f"levysde phase   kappa = {args.kappa:g}   eta_G = {args.eta_g:g}   "
          f"alpha = {args.alpha:g}   lam = {args.lam:g}")
    star, crit = r0["eta_j_star"], r0["eta_j_critical"]
    print("eta_J* (threshold)    = " + _threshold(star, args.lam > 0, args.kappa - args.eta_g * args.lam,
                                                    "lam = 0: untempered", "every eta_J >= 0 is above it: "
                                                    "Gaussian noise alone sustains the extended regime"))
    crit_s = _threshold(crit, args.lam > 1, args.kappa - args.eta_g, "needs lam > 1",
                        "beta* <= 1 for every eta_J >= 0")
    print("eta_J^crit (beta* = 1) = " + crit_s)
    print()
    print(f"{'eta_J':>22} {'beta*':>18}  {'phase':<13} {'tail rate':>18}")
    for r in recs:
        rate = r["tail_rate"]
        rate_s = _fmt(rate) if rate is not None else f"{'inf (point mass)':>18}"
        beta_s = _fmt(r["beta"]) if r["beta"] is not None else f"{'none':>18}"
        print(f"{r['eta_j']!r:>22} {beta_s}  {r['phase']:<13} {rate_s}")
    return 0
