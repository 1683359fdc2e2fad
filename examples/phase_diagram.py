"""The (eta_J, kappa) phase diagram at the docs/specification.md §4 defaults (eta_G = 0.1, alpha = 1.5, lam = 2).

    python examples/phase_diagram.py [--quick] [--out phase_diagram.png]

Draws beta* as a heat map with the threshold eta_J = eta_J*(kappa) and the critical
line beta* = 1, and checks that at kappa = 1 they sit at the closed-form values
eta_J* = 0.96568542494924 and eta_J^crit = 2.36008996386890.
"""
import argparse

import numpy as np

import levysde
from levysde.plotting import plot_phase_diagram
from levysde.studies.diagram import phase_diagram


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a 120 x 120 grid instead of 500 x 500")
    ap.add_argument("--out", default="phase_diagram.png", help="figure file (.png/.pdf/.svg)")
    args = ap.parse_args()
    n = 120 if args.quick else 500
    d = phase_diagram("eta_j", "kappa", x_range=(0.0, 8.0), y_range=(0.1, 2.5), nx=n, ny=n)
    plot_phase_diagram(d, path=args.out)
    # where, on the kappa = 1 row, do the threshold and the critical line fall?
    r = levysde.classify(np.linspace(0.9, 2.5, 1601))
    first_root = r.eta_j[np.isfinite(r.beta_star)][0]
    first_broad = r.eta_j[r.phase == "broad"][0]
    print(f"wrote {args.out}")
    print(f"kappa = 1: first eta_J with a root {first_root:.4f} (eta_J* = {levysde.eta_j_star():.6f}); "
          f"first broad eta_J {first_broad:.4f} (eta_J^crit = {levysde.eta_j_critical():.6f})")


if __name__ == "__main__":
    main()
