"""Theory check: beta*, threshold and phases for the docs/specification.md §4 defaults, and a sweep of beta*.

    python examples/theory_check.py [--quick]

Prints the phase of eta_J in a log grid and checks that beta* solves Phi = 0.
"""
import argparse

import numpy as np

import levysde


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer grid points")
    args = ap.parse_args()
    eta_j = np.geomspace(0.2, 20, 8 if args.quick else 25)
    r = levysde.classify(eta_j)
    print(f"eta_J* = {levysde.eta_j_star():.14f}   eta_J^crit = {levysde.eta_j_critical():.14f}")
    for ej, b, ph, tr in zip(eta_j, r.beta_star, r.phase, r.tail_rate, strict=True):
        print(f"eta_J = {ej:8.4f}   beta* = {b:10.6f}   tail rate = {tr:8.5f}   {ph}")
    ok = np.isfinite(r.beta_star)
    resid = levysde.phi(r.beta_star[ok], eta_j[ok])
    print(f"max |Phi(beta*)| = {np.max(np.abs(resid)):.2e}")


if __name__ == "__main__":
    main()
