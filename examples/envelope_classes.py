"""The three decay classes of the forgetting envelope and their learnability windows.

    python examples/envelope_classes.py [--quick] [--out envelope_classes.png]

Three time-scale spectra (docs/specification.md §5-§6), each sampled and mapped to its envelope
f(l) = E exp(-l/tau) with levysde.envelope:

* bounded time scales tau ~ U[1, 20]            -> exponential decay, H_N ~ (tau/kappa_a) ln N
* Pareto p(tau) = beta tau^(-1-beta), beta=0.5    -> power law l^(-beta), H_N ~ N^(1/(beta kappa_a))
* p(tau) ~ 1/(tau (ln tau)^(1+gamma)), gamma=1    -> logarithmic (ln l)^(-gamma), H_N ~ exp(N^(...))

The decay class is recovered by levysde.classify_decay, and H_N is computed from the
tabulated envelope for Gaussian gradient noise (alpha_g = 2, kappa_a = 2) at several N.
"""
import argparse

import numpy as np

import levysde
from levysde.plotting import pyplot, save_figure
from levysde.theory.learnability import learnability_window


def spectra(n, rng):
    u = rng.random(n)
    return {
        "bounded (tau <= 20)": -np.log(1 + 19 * u),                     # zeta = -log tau
        "Pareto beta = 0.5": -np.log(u ** (-1 / 0.5)),                  # tau = U^(-1/beta)
        "log class gamma = 1": -(u ** (-1 / 1.0)),                      # ln tau = U^(-1/gamma)
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1e5 samples instead of 1e6")
    ap.add_argument("--out", default="envelope_classes.png", help="figure file")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = 10 ** 5 if args.quick else 10 ** 6
    lags = np.geomspace(1, 1e8, 200)
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    Ns = np.geomspace(10, 1e4, 7)
    for (name, zeta), c in zip(spectra(n, rng).items(), ("C0", "C1", "C2"), strict=True):
        f = levysde.envelope(lags, zeta=zeta)
        cls = levysde.classify_decay(lags, f, f_floor=100.0 / n)
        cand = cls.candidates[cls.name]
        print(f"{name:>22}: class {cls.name:<11} {cand['param_name']} = {cand['param']:.3g} "
              f"(rms {cand['rms']:.2g}; lags {cls.lag_lo:.3g}..{cls.lag_hi:.3g})")
        ok = f > 10.0 / n
        ax1.loglog(lags[ok], f[ok], c, label=f"{name}: {cls.name}")
        H = []
        for N in Ns:
            try:
                H.append(learnability_window(N, lags=lags[ok], f=f[ok], alpha_g=2.0))
            except ValueError:
                H.append(np.nan)
        ax2.loglog(Ns, H, c + "o-", label=name)
        print(" " * 24 + "H_N for N = " + ", ".join(
            f"{N:.0f}: {h:.3g}" if np.isfinite(h) else f"{N:.0f}: > {lags[ok][-1]:.0e} (beyond the lags)"
            for N, h in zip(Ns, H, strict=True)))
    ax1.set_xlabel(r"lag $\ell$")
    ax1.set_ylabel(r"$f(\ell)$")
    ax1.legend(fontsize=8)
    ax1.set_title("envelopes")
    ax2.set_xlabel("samples N")
    ax2.set_ylabel(r"learnability window $H_N$")
    ax2.legend(fontsize=8)
    ax2.set_title(r"Gaussian gradient noise ($\kappa_\alpha = 2$)")
    fig.tight_layout()
    save_figure(fig, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
