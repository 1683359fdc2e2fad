"""Time-scale spectra and forgetting envelopes of the gallery's trained networks.

    python docs/figures/results_spectra.py RUN_DIR OUT.png

RUN_DIR holds the run files that ``python examples/anticollapse.py --quick --out RUN_DIR``
trains (docs/build.py runs it first): one network per model, seed 0. Left: the density of the
last record's log decay rates zeta_q (long time scales tau = e^-zeta on the left). Right: the
network's envelope f(l) = sum_q Lambda_q exp(-l e^zeta_q) / sum_q Lambda_q of that record
(docs/specification.md §9) on log-log axes, where a power law is a straight line.
"""
import pathlib
import sys

import numpy as np

from levysde.io.runfile import read_run
from levysde.plotting import pyplot, save_figure
from levysde.theory.envelope_map import envelope

LAGS = np.logspace(0, 4, 60)


def main(run_dir: str, out: str) -> None:
    runs = sorted(p for p in pathlib.Path(run_dir).glob("*_s0.npz"))
    if not runs:
        raise SystemExit(f"results_spectra.py: no run files *_s0.npz in {run_dir}")
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    for path in runs:
        run = read_run(path)
        meta = run["meta"]
        label = f"{meta['model']} (H = {meta['hidden']})"
        z = np.asarray(run["zeta"])[-1]
        z = z[np.isfinite(z)]
        ax1.hist(z, bins=min(30, max(5, z.size // 2)), density=True, histtype="step", lw=1.4, label=label)
        lam = np.asarray(run["Lambda"])[-1]
        keep = np.isfinite(np.asarray(run["zeta"])[-1]) & np.isfinite(lam)
        f = envelope(LAGS, zeta=np.asarray(run["zeta"])[-1][keep], weights=lam[keep], bin_width=None)
        ok = f > 1e-6
        ax2.loglog(LAGS[ok], f[ok], lw=1.4, label=label)
    ax1.set_xlabel(r"$\zeta_q = \log\bar\mu_q$ (last record)")
    ax1.set_ylabel("density")
    ax2.set_xlabel(r"lag $\ell$ (steps)")
    ax2.set_ylabel(r"envelope $f(\ell)$")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
