"""Plots (matplotlib, Agg backend, imported lazily)."""
from __future__ import annotations


def plot_envelope(lags, f, path, *, beta=None, slope_window=None, title=None):
    """Log-log plot of an envelope f(l) with the predicted power law l^-beta (THEORY §5).

    Parameters
    ----------
    lags : (n,) array of lags > 0 (steps); f : (n,) envelope values (None: nothing to draw
        but the frame); path : output image file (format from its suffix, e.g. .png)
    beta : predicted tail rate; the line A l^-beta is anchored to f at the geometric
        middle of ``slope_window`` (or of the lags), since the theory fixes beta, not A
    slope_window : (lo, hi) lag window of the fitted slope, shaded

    Raises ValueError when the file cannot be written (one line, no traceback in the CLI).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    lags = np.asarray(lags, dtype=float)
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    try:
        if f is not None:
            fv = np.asarray(f, dtype=float)
            ok = np.isfinite(fv) & (fv > 0)
            ax.loglog(lags[ok], fv[ok], "-", color="C0", lw=1.8, label="f(l)")
            if beta is not None and np.any(ok):
                lo, hi = slope_window if slope_window else (lags[ok][0], lags[ok][-1])
                l0 = float(np.sqrt(lo * hi))
                f0 = float(np.exp(np.interp(np.log(l0), np.log(lags[ok]), np.log(fv[ok]))))
                ax.loglog(lags, f0 * (lags / l0) ** (-beta), "--", color="C3", lw=1.2,
                          label=f"predicted l^-{beta:.4g} (anchored at l = {l0:.3g})")
            if slope_window:
                ax.axvspan(slope_window[0], slope_window[1], color="0.9", zorder=0, label="slope window")
        ax.set_xlabel("lag l (steps)")
        ax.set_ylabel("envelope f(l)")
        if title:
            ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        try:
            fig.savefig(path, dpi=120)
        except (OSError, ValueError) as exc:
            raise ValueError(f"--plot: cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
