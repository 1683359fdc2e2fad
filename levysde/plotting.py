"""Figures (matplotlib, Agg backend, imported lazily). No numerics beyond display."""
from __future__ import annotations

import math

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_simulation(res, path, *, scan=None):
    """Two panels for a :class:`levysde.simulate.SimulationResult`, saved to ``path``.

    Left: the stationary density of zeta (log scale) with the predicted left tail
    ``A exp(beta* zeta)`` anchored at the default threshold. Right: the threshold
    scan beta_hat(u) with jackknife error bars, beta* and the simulated model's
    beta_model (THEORY.md §7, §8).
    """
    plt = _pyplot()
    m = res.meta
    edges = res.hist_edges
    w = np.diff(edges)
    counts = res.hist_counts.sum(axis=0)
    total = counts.sum() + res.hist_outside[:, [0, 2]].sum()
    dens = counts / (total * w)
    mid = 0.5 * (edges[:-1] + edges[1:])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ok = dens > 0
    ax1.semilogy(mid[ok], dens[ok], lw=1, label="simulation")
    beta = m.get("beta_theory")
    u = m["threshold_u"]
    if beta is not None:
        k = int(np.argmin(np.abs(mid + u)))
        zz = np.linspace(mid[ok][0], -u + 2, 100)
        ax1.semilogy(zz, dens[k] * np.exp(beta * (zz - mid[k])), "k--",
                     label=fr"$e^{{\beta^* \zeta}}$, $\beta^*$ = {beta:.4f}")
    ax1.set_xlabel(r"$\zeta$")
    ax1.set_ylabel(r"density $\rho(\zeta)$")
    ax1.legend(fontsize=8)
    ax1.set_title(fr"$\eta_J$ = {m['eta_j']:g}, {m['phase']}", fontsize=10)
    if scan is None:
        scan = res.tail_scan()
    us = np.array([e.u for e in scan])
    bh = np.array([e.beta_hat for e in scan])
    se = np.array([e.se for e in scan])
    good = np.isfinite(bh)
    ax2.errorbar(us[good], bh[good], yerr=np.where(np.isfinite(se[good]), se[good], 0), fmt="o", ms=3,
                 label=r"$\hat\beta(u)$ (jackknife)")
    if beta is not None:
        ax2.axhline(beta, color="k", ls="--", label=r"$\beta^*$")
    bm = m.get("beta_model")
    if bm is not None and beta is not None and not math.isclose(bm, beta, rel_tol=1e-3):
        ax2.axhline(bm, color="gray", ls=":", label=r"$\beta_\epsilon$ (model)")
    if m.get("phase") == "collapsed" and m.get("lam"):
        ax2.axhline(m["lam"], color="r", ls=":", label=r"$\lambda$")
    ax2.set_xlabel(r"threshold $u$ on $X = -\zeta$")
    ax2.set_ylabel(r"$\hat\beta(u)$")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
