"""Simulate three phases and compare the stationary zeta histograms with the predicted tails.

    python examples/tail_check.py [--quick] [--out tail_check.png]

Defaults of docs/specification.md §4 (kappa = 1, eta_G = 0.1, alpha = 1.5, lam = 2) with
eta_J = 0.5 (collapsed: tempering-limited tail, rate lam), 1.5 (concentrated,
beta* = 1.4596) and 3 (broad, beta* = 0.8084). Prints beta_hat (jackknife error)
at a moderate threshold next to beta*, and the tempering-limited fit in the
collapsed case.
"""
import argparse

import numpy as np

import levysde
from levysde.plotting import pyplot, save_figure
from levysde.simulation import simulate
from levysde.stats.tails import tempered_fit_result

CASES = (0.5, 1.5, 3.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="4096 particles, 250 time units")
    ap.add_argument("--out", default="tail_check.png", help="figure file")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    size = dict(particles=4096, t_end=250.0) if args.quick else dict(particles=16384, t_end=800.0)
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(9.5, 3.6), sharey=True)
    for ax, ej in zip(axes, CASES, strict=True):
        res = simulate(ej, burn_in=50.0, seed=args.seed, **size)
        r = levysde.classify(ej)
        edges = res.hist_edges
        counts = res.hist_counts.sum(axis=0)
        dens = counts / (counts.sum() * np.diff(edges))
        mid = 0.5 * (edges[1:] + edges[:-1])
        ok = dens > 0
        ax.semilogy(mid[ok], dens[ok], lw=1.2, label="simulation")
        u = 2.0 if ej < 2 else 3.0
        k = int(np.argmin(np.abs(mid + u)))
        zz = np.linspace(-u - 8, -u + 1, 50)
        if np.isfinite(r.beta_star):
            t = res.tail(u)
            ax.semilogy(zz, dens[k] * np.exp(r.beta_star * (zz - mid[k])), "k--",
                        label=rf"$e^{{\beta^*\zeta}}$, $\beta^*$={float(r.beta_star):.4f}")
            print(f"eta_J = {ej}: {r.phase}: beta_hat(u={u}) = {t.beta_hat:.4f} +- {t.se:.4f}   "
                  f"beta* = {float(r.beta_star):.4f}   ({(t.beta_hat - r.beta_star) / t.se:+.1f} se)")
        else:
            fit = tempered_fit_result(res, u)
            t = res.tail(u)
            ax.semilogy(zz, dens[k] * np.exp(float(r.tail_rate) * (zz - mid[k])) * (np.abs(zz) / abs(mid[k])) ** -2.5,
                        "k--", label=r"$e^{\lambda\zeta}|\zeta|^{-1-\alpha}$")
            print(f"eta_J = {ej}: {r.phase}: tempered fit b = {fit.b:.3f} +- {fit.se:.3f} (lam = 2); "
                  f"pure-exponential rate {t.beta_hat:.3f} > lam")
        ax.set_title(rf"$\eta_J$ = {ej}: {r.phase}", fontsize=10)
        ax.set_xlabel(r"$\zeta$")
        ax.set_xlim(-14, 3)
        ax.set_ylim(1e-7, 3)
        ax.legend(fontsize=8, loc="lower center")
    axes[0].set_ylabel(r"$\rho_\infty(\zeta)$")
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
