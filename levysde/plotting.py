"""Figures (matplotlib, Agg backend). Numerics live elsewhere; these functions only draw.

matplotlib (the ``[plot]`` extra: ``pip install 'levysde[plot]'``) is imported lazily, so that
``import levysde`` stays light and works without it; drawing without it raises
:class:`levysde.core.extras.MissingExtraError` (an ImportError) naming the extra.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from levysde.core.extras import require
from levysde.inference.check import VARIANT_KEYS, load_run_arrays
from levysde.inference.drift_fit import increments
from levysde.io.files import atomic_write

__all__ = ["pyplot", "figure_formats", "check_figure_format", "save_figure", "plot_phase_diagram",
           "plot_envelope", "plot_check", "plot_simulation", "plot_beta_check", "plot_learnability",
           "plot_learnability_windows", "plot_verdict_spectra", "plot_verdict_drift", "plot_verdict_envelopes"]

_LABELS = {"eta_j": r"$\eta_J$", "kappa": r"$\kappa$", "eta_g": r"$\eta_G$",
           "alpha": r"$\alpha$", "lam": r"$\lambda$"}


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (unless one was chosen before).

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Raises
    ------
    levysde.core.extras.MissingExtraError
        An ImportError naming the ``[plot]`` extra when matplotlib is not installed.

    Examples
    --------
    >>> plt = pyplot()
    >>> fig, ax = plt.subplots()
    >>> print(type(fig).__name__, len(fig.axes))
    Figure 1
    >>> plt.close(fig)
    """
    matplotlib = require("matplotlib", "levysde.plotting")    # the [plot] extra
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _missing_software(fmt: str) -> str | None:
    """What writing format ``fmt`` needs that is not installed (None: nothing is missing)."""
    import shutil

    import matplotlib

    rc = matplotlib.rcParams
    tools = []
    if rc["text.usetex"]:
        tools += ["latex"] + (["dvipng"] if fmt in ("png", "jpg", "jpeg", "tif", "tiff", "webp") else [])
    if fmt == "pgf":
        tools.append(rc["pgf.texsystem"])
    if fmt in ("ps", "eps") and rc["ps.usedistiller"]:
        tools += {"ghostscript": ["gs"], "xpdf": ["ps2pdf", "pdftops"]}.get(rc["ps.usedistiller"], [])
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        return f"needs {', '.join(missing)}, not found on PATH"
    if fmt == "webp":
        from PIL import features

        if not features.check("webp"):
            return "needs Pillow built with WebP support"
    return None


def figure_formats() -> list[str]:
    """The figure formats (file suffixes without the dot) that can be written here: those of
    matplotlib's Agg canvas whose external software (a LaTeX engine for ``pgf``, Ghostscript for
    a PostScript distiller, WebP support in Pillow) is installed.

    Returns
    -------
    list of str
        Sorted suffixes, e.g. ``["eps", "jpeg", "jpg", "pdf", ...]``.

    Raises
    ------
    levysde.core.extras.MissingExtraError
        Without matplotlib (the ``[plot]`` extra).

    Examples
    --------
    >>> print("png" in figure_formats(), "svg" in figure_formats())
    True True
    """
    canvas = require("matplotlib.backend_bases", "levysde.plotting").FigureCanvasBase
    return sorted(f for f in canvas.get_supported_filetypes() if _missing_software(f) is None)


def check_figure_format(path) -> str:
    """The format of figure file ``path``, checked before any drawing.

    Parameters
    ----------
    path : str or os.PathLike
        The figure file; its suffix (case-insensitive) names the format.

    Returns
    -------
    str
        The format: the suffix without the dot, lower case; ``"png"`` when there is none.

    Raises
    ------
    ValueError
        One line, when matplotlib cannot write the format or it needs software that is not
        installed (e.g. ``.pgf`` without xelatex), naming the formats that work.
    levysde.core.extras.MissingExtraError
        Without matplotlib (the ``[plot]`` extra).

    Examples
    --------
    >>> print(check_figure_format("phase.SVG"), check_figure_format("phase"))
    svg png
    >>> check_figure_format("phase.xyz")
    Traceback (most recent call last):
    ...
    ValueError: unsupported image format '.xyz' (a format matplotlib does not write); use one of ...
    """
    fmt = os.path.splitext(os.fspath(path))[1][1:].lower() or "png"
    canvas = require("matplotlib.backend_bases", "levysde.plotting").FigureCanvasBase
    ok = figure_formats()
    if fmt not in ok:
        why = ("a format matplotlib does not write" if fmt not in canvas.get_supported_filetypes()
               else _missing_software(fmt))
        raise ValueError(f"unsupported image format {'.' + fmt!r} ({why}); use one of "
                         f"{', '.join('.' + f for f in ok)}")
    return fmt


def save_figure(fig, path, *, dpi: int = 150, bbox_inches="tight") -> str:
    """Save ``fig`` to ``path`` atomically.

    :func:`levysde.io.files.atomic_write`: a temporary file next to it replaces it, so an
    interrupted save leaves any earlier file intact. The format follows the suffix (png, pdf,
    svg, ...); ``.png`` is appended to a name without one.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or os.PathLike
        The file to write.
    dpi : int, optional
        Resolution of raster formats (default 150).
    bbox_inches : str or None, optional
        Passed to ``Figure.savefig`` (default ``"tight"``).

    Returns
    -------
    str
        The path written (with ``.png`` appended when ``path`` had no suffix).

    Raises
    ------
    ValueError
        For a format that cannot be written, before anything is drawn into the file
        (:func:`check_figure_format`), or a non-regular target such as a FIFO or device.

    Examples
    --------
    >>> import os, tempfile
    >>> plt = pyplot()
    >>> fig, ax = plt.subplots()
    >>> _ = ax.plot([0, 1], [0, 1])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     written = save_figure(fig, os.path.join(d, "line"))
    ...     print(os.path.basename(written), os.path.getsize(written) > 0)
    line.png True
    >>> plt.close(fig)
    """
    path = os.fspath(path)
    fmt = check_figure_format(path)
    if not os.path.splitext(path)[1]:
        path += ".png"
    atomic_write(path, lambda fh: fig.savefig(fh, dpi=dpi, format=fmt, bbox_inches=bbox_inches))
    return path


def plot_phase_diagram(diagram, *, overlay=None, path=None):
    """Draw a :class:`levysde.studies.diagram.PhaseDiagram`.

    beta* as a heat map (grey where no admissible root), the threshold curve
    eta_J = eta_J* (white dashed), the critical manifold beta* = 1 (red) and a
    label at the centre of each phase region (the specification, §4).

    Parameters
    ----------
    diagram : PhaseDiagram
        The grid (:func:`levysde.studies.diagram.phase_diagram`).
    overlay : dict, optional
        Arrays ``x``, ``y``, ``beta_hat`` drawn as markers coloured on the same scale
        (:func:`levysde.studies.overlay.simulated_overlay`).
    path : str or os.PathLike, optional
        Save the figure there (:func:`save_figure`).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (axes and colour bar); close it when done.

    Raises
    ------
    ValueError
        When ``path`` has a format that cannot be written.

    Notes
    -----
    The heat map is rasterised (``rasterized=True``) so that vector formats (svg,
    pdf, eps) stay small: a 500 x 500 grid would otherwise be 250,000 vector
    quadrilaterals (a ~48 MB SVG). Axes, labels, contours and markers stay vector.

    Examples
    --------
    >>> from levysde.studies.diagram import phase_diagram
    >>> fig = plot_phase_diagram(phase_diagram(nx=40, ny=30))
    >>> print(len(fig.axes), fig.axes[0].get_xlabel(), fig.axes[0].get_ylabel())
    2 $\\eta_J$ $\\kappa$
    >>> pyplot().close(fig)
    """
    plt = pyplot()
    d = diagram
    fig, ax = plt.subplots(figsize=(7.0, 5.2))
    b = np.ma.masked_invalid(d.beta_star)
    finite = d.beta_star[np.isfinite(d.beta_star)]
    vmax = float(np.percentile(finite, 99)) if finite.size else 1.0
    cmap = plt.get_cmap("viridis").with_extremes(bad="0.82")
    mesh = ax.pcolormesh(d.x, d.y, b, shading="auto", cmap=cmap, vmin=0.0, vmax=max(vmax, 1.05),
                         rasterized=True)
    fig.colorbar(mesh, ax=ax, label=r"$\beta^*$")
    handles = []
    gap = np.ma.masked_invalid(d.threshold_gap)
    gap_fin = d.threshold_gap[np.isfinite(d.threshold_gap)]   # empty when lam = 0 (no eta_J*)
    if gap_fin.size and gap_fin.min() < 0 < gap_fin.max():
        ax.contour(d.x, d.y, gap, levels=[0.0], colors="white", linestyles="--", linewidths=1.8)
        handles.append(plt.Line2D([], [], color="white", ls="--", label=r"threshold $\eta_J=\eta_J^*$"))
    crit = np.ma.masked_invalid(d.critical_gap)
    if finite.size and finite.min() < 1 < finite.max():
        ax.contour(d.x, d.y, crit, levels=[0.0], colors="red", linewidths=1.8)
        handles.append(plt.Line2D([], [], color="red", label=r"critical $\beta^*=1$"))
    X, Y = np.meshgrid(d.x, d.y)
    for i, name in enumerate(d.phases):
        m = d.phase_code == i
        if m.sum() > 0.01 * m.size:
            ax.text(np.median(X[m]), np.median(Y[m]), name, ha="center", va="center", fontsize=10,
                    color="black", bbox=dict(boxstyle="round", fc="white", alpha=0.7, lw=0))
    if overlay is not None:
        ax.scatter(overlay["x"], overlay["y"], c=overlay["beta_hat"], cmap=cmap, vmin=0.0,
                   vmax=max(vmax, 1.05), edgecolors="black", s=60, zorder=5)
        handles.append(plt.Line2D([], [], marker="o", ls="", mec="black", mfc="none",
                                  label=r"simulated $\hat\beta$"))
    ax.set_xlabel(_LABELS[d.x_name])
    ax.set_ylabel(_LABELS[d.y_name])
    fixed = ", ".join(f"{_LABELS[k]}={v:g}" for k, v in d.fixed.items())
    ax.set_title(f"phase diagram ({fixed})", fontsize=10)
    if handles:
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3,
                  fontsize=8, facecolor="0.6", framealpha=0.9)
    if path is not None:
        save_figure(fig, path)
    return fig


def plot_envelope(lags, f, path, *, beta=None, slope=None, slope_window=None, fit_window=None,
                  f_label=None, title=None, f_min=1e-12):
    r"""Log-log plot of an envelope f(l) with its fitted slope and the predicted power law.

    The predicted line is :math:`l^{-\beta^*}` when the theory gives beta* (the specification,
    §5). Both lines are anchored to f at the geometric middle of ``slope_window`` (or of the
    lags), since the theory fixes beta, not the amplitude.

    Parameters
    ----------
    lags : array_like, shape (n,)
        Lags > 0 (steps).
    f : array_like, shape (n,), or None
        Envelope values (None: nothing to draw but the frame; NaN or <= 0 values are left
        out).
    path : str or os.PathLike
        Output image file (format from its suffix; ``.png`` is appended to a name without one).
    beta : float, optional
        The theory's tail rate beta* (None: no "predicted" line).
    slope : float, optional
        The fitted log-log slope, drawn dashed as "fitted".
    slope_window : tuple of float, optional
        ``(lo, hi)`` lag window of the fitted slope, shaded.
    fit_window : tuple of float, optional
        ``(lo, hi)`` lag window of the decay-class fit.
    f_label : str, optional
        Legend label of f (default "f(l)").
    title : str, optional
        Title, wrapped at 90 characters.
    f_min : float, optional
        Lowest f ever displayed (default 1e-12). The y axis runs down to max(f_min, min f in
        the fit windows / 100) (min f over the lags when no window is given), so an envelope
        that underflows to 1e-300 at large lags does not squash the part that was fitted.

    Returns
    -------
    str
        The path written.

    Raises
    ------
    ValueError
        One line, when the file cannot be written or ``path`` is a directory.

    Examples
    --------
    >>> import os, tempfile
    >>> lags = np.geomspace(1, 1000, 40)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_envelope(lags, 0.5 * lags ** -0.8, os.path.join(d, "envelope"), beta=0.8,
    ...                         slope=-0.8, slope_window=(10, 300))
    ...     print(os.path.basename(out), os.path.exists(out))
    envelope.png True
    """

    written = str(path) if os.path.splitext(str(path))[1] else str(path) + ".png"
    if os.path.isdir(str(path)) or os.path.isdir(written):
        raise ValueError(f"path: {path} is a directory, not an image file name")
    plt = pyplot()

    lags = np.asarray(lags, dtype=float)
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    try:
        if f is not None:
            fv = np.asarray(f, dtype=float)
            ok = np.isfinite(fv) & (fv > 0)
            if np.any(ok):
                win = [w for w in (slope_window, fit_window) if w]
                if win:
                    sel = ok & np.any([(lags >= w[0]) & (lags <= w[1]) for w in win], axis=0)
                else:
                    sel = ok
                ref = fv[sel] if np.any(sel) else fv[ok]
                y_lo = max(f_min, float(ref.min()) / 100.0)
                y_hi = min(2.0, 2.0 * float(fv[ok].max()))
                if not y_lo < y_hi:
                    y_lo = y_hi / 1e3
                shown = ok & (fv >= y_lo)
                ax.loglog(lags[shown], fv[shown], "-", color="C0", lw=1.8, label=f_label or "f(l)")
                # x range: up to one grid step past the last lag still inside the y range
                last = int(np.flatnonzero(shown)[-1]) if np.any(shown) else lags.size - 1
                x_hi = float(lags[min(last + 1, lags.size - 1)])
                x_lo = float(lags[ok][0])
                if x_hi <= x_lo:
                    x_hi = float(lags[-1])
                lo, hi = slope_window if slope_window else (lags[ok][0], lags[ok][-1])
                l0 = float(np.sqrt(lo * hi))
                f0 = float(np.exp(np.interp(np.log(l0), np.log(lags[ok]), np.log(fv[ok]))))
                xs = np.geomspace(x_lo, x_hi, 200)
                if slope is not None and np.isfinite(slope):
                    ax.loglog(xs, f0 * (xs / l0) ** slope, "--", color="C2", lw=1.2,
                              label=f"fitted slope: l^{slope:.4g}")
                if beta is not None and np.isfinite(beta):
                    ax.loglog(xs, f0 * (xs / l0) ** (-beta), ":", color="C3", lw=1.5,
                              label=f"predicted (theory beta*): l^-{beta:.4g}")
                ax.set_ylim(y_lo, y_hi)
                ax.set_xlim(x_lo, x_hi)
            if slope_window:
                ax.axvspan(slope_window[0], slope_window[1], color="0.9", zorder=0, label="slope window")
        ax.set_xlabel("lag l (steps)")
        ax.set_ylabel("envelope f(l)")
        if title:
            import textwrap

            ax.set_title(textwrap.fill(str(title), 90), fontsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        try:
            save_figure(fig, path, dpi=120, bbox_inches=None)
        except (OSError, ValueError) as exc:
            raise ValueError(f"path: cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return written


def plot_check(report, run_path, path, *, time_unit=None):
    r"""Four panels for ``levysde check``, saved to ``path``.

    The zeta trajectories, the fitted drift with its plateau, the tail of the increment
    residuals, and the zeta histogram with the predicted exponential tail
    :math:`e^{\beta\zeta}` (the specification, §8).

    In the drift panel the fitted saturating form is drawn solid over the bins it was fitted
    to; where the plateau :math:`\hat\kappa` lies beyond the data
    (:attr:`levysde.inference.drift_fit.DriftEstimate.plateau_extrapolated`, the flag
    "plateau not reached"), the form's continuation to the left and the line at
    :math:`\hat\kappa` are dashed and labelled "extrapolated".

    Parameters
    ----------
    report : CheckReport
        The check (:func:`levysde.inference.check.check_trajectories` or ``check_run``).
    run_path : str or dict
        The run file, or a dict of its arrays (``zeta``, ``zeta_jac`` or ``zeta_window``, by the
        report's variant, and ``step``; e.g. the trajectories of a ``checkpoint_taus`` directory).
    path : str or os.PathLike
        Output image file (:func:`save_figure`).
    time_unit : str, optional
        The unit of the records' time ``step`` on the axes ("training step", "drift per
        step"); default ``"epoch"`` for a report of a ``checkpoint_taus`` directory
        (``report.extra["source"]``), else ``"step"``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (four axes); close it when done.

    Raises
    ------
    ValueError
        When ``path`` cannot be written or the run file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.inference.check import check_trajectories
    >>> rng = np.random.default_rng(0)
    >>> zeta = np.zeros((200, 64))
    >>> for r in range(1, 200):
    ...     zeta[r] = zeta[r - 1] - 0.05 * (zeta[r - 1] + 1) + 0.1 * rng.standard_normal(64)
    >>> report = check_trajectories(zeta, np.arange(200), closing_loop=False, n_boot=20)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     fig = plot_check(report, {"zeta": zeta, "step": np.arange(200)}, os.path.join(d, "check.svg"))
    >>> print(len(fig.axes), fig.axes[3].get_title(), "|", fig.axes[0].get_xlabel())
    4 spectrum | training step
    >>> pyplot().close(fig)
    """

    plt = pyplot()
    run = run_path if isinstance(run_path, dict) else load_run_arrays(run_path)
    zeta = np.asarray(run[VARIANT_KEYS.get(report.variant, "zeta")], dtype=float)
    step = np.asarray(run["step"], dtype=float)
    if time_unit is None:
        time_unit = "epoch" if (report.extra or {}).get("source") == "checkpoint_taus" else "step"
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    ax = axes[0, 0]
    cols = np.linspace(0, zeta.shape[1] - 1, min(40, zeta.shape[1])).astype(int)
    ax.plot(step, zeta[:, cols], lw=0.6, alpha=0.7)
    ax.set_xlabel(f"training {time_unit}")
    ax.set_ylabel(r"$\zeta_q$")
    ax.set_title("trajectories")
    ax = axes[0, 1]
    fit = report.fit
    if fit is not None:
        d = fit.drift
        ax.errorbar(d.centers, d.F, yerr=d.se, fmt="o", ms=3, label=r"$\hat F(\zeta)$")
        if d.form:
            lo, hi = d.form["z_range"]
            zz = np.linspace(lo, hi, 100)
            ax.plot(zz, d.form_curve(zz), "C3-", lw=1.2, label="fitted form (the bins it rests on)")
        if fit.kappa.ok:
            k = fit.kappa.value
            if d.plateau_extrapolated:
                # to where the form reaches 95 % of its plateau, at most two fitted ranges further left
                zl = max(d.plateau_onset(0.95), lo - 2 * (hi - lo))
                zz = np.linspace(zl, lo, 100)
                ax.plot(zz, d.form_curve(zz), "C3--", lw=1.2, label="fitted form, extrapolated beyond the data")
                ax.axhline(k, color="C3", ls="--", lw=0.8,
                           label=rf"$\hat\kappa$ = {k:.3g}, extrapolated (plateau not reached in the data)")
            else:
                ax.axhline(k, color="C3", ls="-", lw=0.8, label=rf"$\hat\kappa$ = {k:.3g}")
        ax.axhline(0, color="0.5", lw=0.8)
        ax.legend(fontsize=8)
    ax.set_xlabel(r"$\zeta$")
    ax.set_ylabel(f"drift per {time_unit}")
    ax.set_title("drift")
    ax = axes[1, 0]

    if fit is not None:
        z, dz, dt, _ = increments(zeta, step, first_record=fit.first_record)
        r = np.sort(np.abs(dz - fit.drift(z) * dt))[::-1]
        if r.size and r[0] > 0:
            surv = np.arange(1, r.size + 1) / r.size
            ax.loglog(r, surv, lw=1.2, label="|residual| survival")
            if np.isfinite(fit.noise.u):
                ax.axvline(fit.noise.u, color="C3", ls="--", label="jump threshold")
            ax.legend(fontsize=8)
    ax.set_xlabel("|increment - drift|")
    ax.set_title("increment tail")
    ax = axes[1, 1]
    first = fit.first_record if fit is not None else 0
    late = zeta[first:][np.isfinite(zeta[first:])]
    if late.size and np.ptp(late) > 0:
        dens, edges = np.histogram(late, bins=60, density=True)
        mid = 0.5 * (edges[1:] + edges[:-1])
        ok = dens > 0
        ax.semilogy(mid[ok], dens[ok], "o", ms=3, label="late training")
        c = report.closure
        # the reported beta: the closure's combination, else the parametric one where it is reported
        b, name = ((c.combined, "combined") if c is not None and c.combined.ok else (report.beta_theory, "theory"))
        if b.ok:
            zl = np.quantile(late, 0.1)
            anchor = np.interp(zl, mid, dens)
            zz = np.linspace(mid[0], zl, 20)
            ax.semilogy(zz, anchor * np.exp(b.value * (zz - zl)), "C3-",
                        label=rf"$e^{{\beta\zeta}}$, $\beta$ ({name}) = {b.value:.3g}")
        ax.legend(fontsize=8)
    ax.set_xlabel(r"$\zeta$")
    ax.set_title("spectrum")
    fig.tight_layout()
    save_figure(fig, path)
    return fig


def plot_simulation(res, path, *, scan=None):
    r"""Two panels for a :class:`levysde.simulation.SimulationResult`, saved to ``path``.

    Left: the stationary density of zeta (log scale) with the predicted left tail
    :math:`A e^{\beta^*\zeta}` anchored at the default threshold. Right: the threshold
    scan beta_hat(u) with jackknife error bars, beta* and the simulated model's
    beta_model (the specification, §7, §8).

    Parameters
    ----------
    res : SimulationResult
        The run.
    path : str or os.PathLike
        Output image file (:func:`save_figure`).
    scan : list of TailEstimate, optional
        The threshold scan to draw (default :meth:`SimulationResult.tail_scan`).

    Returns
    -------
    str
        The path written (the figure is closed).

    Raises
    ------
    ValueError
        When ``path`` cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> res = levysde.simulate(3.0, particles=256, t_end=30.0, burn_in=5.0, dt=0.02, seed=1)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_simulation(res, os.path.join(d, "tail.svg"))
    ...     print(os.path.basename(out), os.path.getsize(out) > 0)
    tail.svg True
    """
    plt = pyplot()
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
    beta = m.beta_theory
    u = m.threshold_u
    if beta is not None and ok.any():
        k = int(np.argmin(np.abs(mid + u)))
        zz = np.linspace(mid[ok][0], -u + 2, 100)
        ax1.semilogy(zz, dens[k] * np.exp(beta * (zz - mid[k])), "k--",
                     label=fr"$e^{{\beta^* \zeta}}$, $\beta^*$ = {beta:.4f}")
    ax1.set_xlabel(r"$\zeta$")
    ax1.set_ylabel(r"density $\rho(\zeta)$")
    ax1.legend(fontsize=8)
    ax1.set_title(fr"$\eta_J$ = {m.eta_j:g}, {m.phase}", fontsize=10)
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
    bm = m.beta_model
    if bm is not None and beta is not None and not math.isclose(bm, beta, rel_tol=1e-3):
        ax2.axhline(bm, color="gray", ls=":", label=r"$\beta_\epsilon$ (model)")
    if m.phase == "collapsed" and m.lam:
        ax2.axhline(m.lam, color="r", ls=":", label=r"$\lambda$")
    ax2.set_xlabel(r"threshold $u$ on $X = -\zeta$")
    ax2.set_ylabel(r"$\hat\beta(u)$")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi=120, bbox_inches=None)
    finally:
        plt.close(fig)


def plot_beta_check(overlay, path=None):
    """Companion of a simulated phase diagram: beta_hat (with jackknife error bars) against beta*.

    With the diagonal beta_hat = beta*.

    Parameters
    ----------
    overlay : dict
        Arrays ``beta_theory``, ``beta_hat`` and ``se`` of equal length
        (:func:`levysde.studies.overlay.simulated_overlay`).
    path : str or os.PathLike, optional
        Save the figure there (:func:`save_figure`).

    Returns
    -------
    matplotlib.figure.Figure
        The figure; close it when done.

    Raises
    ------
    ValueError
        When ``path`` has a format that cannot be written.

    Examples
    --------
    >>> ov = {"beta_theory": np.array([0.5, 0.8]), "beta_hat": np.array([0.51, 0.79]),
    ...       "se": np.array([0.01, 0.02])}
    >>> fig = plot_beta_check(ov)
    >>> print(len(fig.axes), fig.axes[0].get_xlabel())
    1 $\\beta^*$ (theory)
    >>> pyplot().close(fig)
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    b, bh, se = overlay["beta_theory"], overlay["beta_hat"], overlay["se"]
    ax.errorbar(b, bh, yerr=se, fmt="o", ms=5, capsize=3, label=r"simulated $\hat\beta$")
    both = np.concatenate([b, bh])
    both = both[np.isfinite(both)]
    lo, hi = 0.0, (float(both.max()) * 1.1 if both.size else 1.0)
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label=r"$\hat\beta=\beta^*$")
    ax.set_xlabel(r"$\beta^*$ (theory)")
    ax.set_ylabel(r"$\hat\beta$ (simulation)")
    ax.legend(fontsize=8)
    if path is not None:
        save_figure(fig, path)
    return fig


def plot_learnability(res, path, *, title=None) -> str:
    r"""Two panels of a learnability measurement, saved to ``path``.

    Left: the grid N(l), the continuous N*(l) (with its bootstrap interval) and the envelope
    f(l) against the lag on log axes (f on the right axis). Right: the master law, log N(l)
    against :math:`-\kappa_\alpha \log f(l)` for the fitted lags, with the least-squares line
    and the theory's slope 1 through the points' centre. Lags whose mean is not significant
    are drawn hollow.

    Parameters
    ----------
    res : LearnabilityMeasurement
        The measurement
        (:func:`levysde.inference.learnability_measure.measure_learnability`).
    path : str or os.PathLike
        Output image file (:func:`save_figure`).
    title : str, optional
        Figure title.

    Returns
    -------
    str
        The path written (the figure is closed).

    Raises
    ------
    ValueError
        When the file cannot be written.

    References
    ----------
    The learnability window and its master law: :doc:`/learnability`.

    Examples
    --------
    Matched sums of a mean :math:`0.5\,l^{-0.7}` in Gaussian noise, 8 sequences:

    >>> import os, tempfile
    >>> from levysde.inference.learnability_measure import measure_learnability
    >>> from levysde.stats.stable_fit import ecf_grid, ecf_sums, robust_half_iqr
    >>> rng = np.random.default_rng(0)
    >>> lags = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    >>> sums = {k: [] for k in ("t", "count", "cos", "sin", "total", "envelope")}
    >>> for m in 0.5 * lags ** -0.7:
    ...     x = m + rng.standard_normal((8, 400))
    ...     t = ecf_grid(robust_half_iqr(x))
    ...     n, c, s = ecf_sums(x, t)
    ...     for k, v in zip(sums, (t, n, c, s, x.sum(1), np.full(8, m))):
    ...         sums[k].append(v)
    >>> res = measure_learnability({"lags": lags, **{k: np.array(v) for k, v in sums.items()}}, n_boot=50)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_learnability(res, os.path.join(d, "window.svg"))
    ...     print(os.path.basename(out), os.path.getsize(out) > 0)
    window.svg True
    """
    plt = pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 4.2))
    try:
        lags = np.asarray(res.lags, dtype=float)
        sig = np.asarray(res.significant, dtype=bool)
        ok = np.isfinite(res.n_required)
        ax.loglog(lags[ok & sig], res.n_required[ok & sig], "o", ms=4, color="C0", label="N(l), grid rule")
        ax.loglog(lags[ok & ~sig], res.n_required[ok & ~sig], "o", ms=4, mfc="none", color="C0",
                  label="N(l), mean not significant")
        st = np.isfinite(res.n_star) & (res.n_star > 0) & sig
        if np.any(st):
            ax.loglog(lags[st], res.n_star[st], "-", color="C1", lw=1.2, label="N*(l) (continuous)")
            ci = np.asarray(res.n_star_interval)
            good = st & np.all(np.isfinite(ci) & (ci > 0), axis=1)
            ax.fill_between(lags[good], ci[good, 0], ci[good, 1], color="C1", alpha=0.2, lw=0)
        for n in (res.N_grid[0], res.N_grid[-1]):
            ax.axhline(n, color="0.6", lw=0.8, ls=":")
        ax.set_ylim(float(res.N_grid[0]) / 10.0, float(res.N_grid[-1]) * 1e3)
        ax.set_xlabel("lag l (steps)")
        ax.set_ylabel("samples to detect, N(l)")
        fx = ax.twinx()
        fp = res.f > 0
        fx.loglog(lags[fp], res.f[fp], "-", color="C2", lw=1.5, label="envelope f(l)")
        fx.set_ylabel("envelope f(l) = mean |mu0 + mu1|", color="C2")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = fx.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left")
        ax.grid(True, which="both", alpha=0.3)
        for name, style in (("grid", "C0"), ("continuous", "C1")):
            m = res.master.get(name, {})
            x, y = np.asarray(m.get("x", []), dtype=float), np.asarray(m.get("log_N", []), dtype=float)
            if x.size == 0:
                continue
            bx.plot(x, y, "o", ms=4, color=style, alpha=0.7)
            if m.get("slope") is not None and np.isfinite(m["slope"]):
                xs = np.linspace(x.min(), x.max(), 50)
                ci = m.get("slope_interval") or [np.nan, np.nan]
                bx.plot(xs, m["intercept"] + m["slope"] * xs, "-", color=style, lw=1.5,
                        label=f"{name}: slope {m['slope']:.3g} [{ci[0]:.3g}, {ci[1]:.3g}]")
                bx.plot(xs, y.mean() + (xs - x.mean()), ":", color=style, lw=1.0)
        bx.set_xlabel("-kappa_alpha(l) log f(l)")
        bx.set_ylabel("log N(l)")
        bx.set_title("master law (dotted: slope 1)", fontsize=9)
        if bx.get_legend_handles_labels()[0]:
            bx.legend(fontsize=7)
        bx.grid(True, alpha=0.3)
        if title:
            fig.suptitle(str(title), fontsize=9)
        fig.tight_layout()
        try:
            written = save_figure(fig, path, dpi=120)
        except (OSError, ValueError) as exc:
            raise ValueError(f"path: cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return written


def plot_learnability_windows(curves, path, *, title=None, which="H_N") -> str:
    """The learnability window against the sample size for several trained configurations.

    One line per configuration, the mean over its seeds, with a band of +- one standard
    deviation over seeds (when there are two or more), N on a log axis (the learnability
    paper's window figure; docs/learnability.md).

    Parameters
    ----------
    curves : list of dict
        One dict per configuration, with ``label`` (str, shown in the legend with its number
        of seeds), ``N`` (array of shape (n,): sample sizes > 0) and ``H`` (array of shape
        (seeds, n) or (n,): the window of each seed at those N, in steps; NaN where not
        available); optional ``color`` and ``linestyle`` (matplotlib values).
    path : str or os.PathLike
        Output file; its suffix names the format (no suffix: PNG), as for :func:`save_figure`.
    title : str, optional
        Figure title (default: none).
    which : str, optional
        The name of the window on the y-axis label (default ``"H_N"``; e.g.
        ``"H_N (significant lags)"``).

    Returns
    -------
    str
        The path written.

    Raises
    ------
    ValueError
        When there are no curves, a curve's ``H`` does not have one column per ``N``, or the
        file cannot be written (or has a format matplotlib does not write).

    Examples
    --------
    Two configurations, two seeds each, on four sample sizes (one window not available):

    >>> import os, tempfile
    >>> N = [100, 1000, 10000, 100000]
    >>> curves = [{"label": "diaggate-adamw", "N": N, "H": [[8, 32, 64, 128], [16, 32, 96, 192]]},
    ...           {"label": "gru-adamw", "N": N, "H": [[4, 8, np.nan, 64], [4, 16, 32, 64]],
    ...            "linestyle": "--"}]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     written = plot_learnability_windows(curves, os.path.join(d, "windows.svg"), title="H_N")
    ...     print(os.path.basename(written), os.path.getsize(written) > 0)
    windows.svg True
    >>> plot_learnability_windows([{"label": "x", "N": N, "H": [1, 2]}], "windows.png")
    Traceback (most recent call last):
    ...
    ValueError: curves[0] (x): H has 2 columns for 4 N
    """
    if not curves:
        raise ValueError("curves: at least one is needed")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    try:
        for i, c in enumerate(curves):
            N = np.asarray(c["N"], dtype=float)
            H = np.atleast_2d(np.asarray(c["H"], dtype=float))
            if H.shape[1] != N.size:
                raise ValueError(f"curves[{i}] ({c.get('label')}): H has {H.shape[1]} columns for {N.size} N")
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)           # an N without any seed
                m = np.nanmean(H, axis=0)
                sd = np.nanstd(H, axis=0, ddof=1) if H.shape[0] > 1 else None
            kw = {k: c[k] for k in ("color", "linestyle") if k in c}
            line, = ax.semilogx(N, m, marker="o", ms=3, lw=1.4, label=f"{c['label']} ({H.shape[0]})", **kw)
            if sd is not None:
                ok = np.isfinite(m) & np.isfinite(sd)
                ax.fill_between(N[ok], (m - sd)[ok], (m + sd)[ok], color=line.get_color(), alpha=0.12, lw=0)
        ax.set_xlabel("sample size N")
        ax.set_ylabel(f"{which} (steps), mean over seeds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2, title="(seeds)", title_fontsize=7)
        if title:
            ax.set_title(str(title), fontsize=9)
        fig.tight_layout()
        try:
            written = save_figure(fig, path, dpi=120)
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return written


def _model_title(label, d):
    n = d.get("n_seeds")
    return f"{label} ({n} seed{'s' if n != 1 else ''})" if n is not None else str(label)


def plot_verdict_spectra(data, path) -> str:
    r"""The late windowed spectrum per model: the density of :math:`\zeta` of the last record, pooled over seeds.

    One panel per model; its title counts the non-decaying units (not in the density).

    Parameters
    ----------
    data : dict
        Label -> ``{"n_seeds", "spectrum": {"zeta", "n_censored", "n_units"}}``
        (:func:`levysde.studies.paper_verdict.verdict_figure_data`); ``zeta`` holds the resolved
        values, the non-decaying units are counted in the legend.
    path : str or os.PathLike
        Output image file (:func:`save_figure`).

    Returns
    -------
    str
        The path written (the figure is closed).

    Raises
    ------
    ValueError
        When the file cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> rng = np.random.default_rng(0)
    >>> data = {"diaggate": {"n_seeds": 2, "spectrum": {"zeta": rng.normal(-3, 1, 120), "n_censored": 8,
    ...                                                  "n_units": 128}}}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_verdict_spectra(data, os.path.join(d, "spectra.png"))
    ...     print(os.path.basename(out), os.path.getsize(out) > 0)
    spectra.png True
    """
    plt = pyplot()
    n = max(1, len(data))
    cols = min(2, n)
    fig, axes = plt.subplots(math.ceil(n / cols), cols, figsize=(5.2 * cols, 3.4 * math.ceil(n / cols)),
                             squeeze=False)
    try:
        for i, (ax, (label, d)) in enumerate(zip(axes.ravel(), data.items(), strict=False)):
            s = d["spectrum"]
            z = np.asarray(s["zeta"], dtype=float)
            z = z[np.isfinite(z)]
            if z.size >= 2:
                ax.hist(z, bins=max(8, min(40, z.size // 6)), density=True, color=f"C{i}", alpha=0.7)
            else:
                ax.text(0.5, 0.5, "too few resolved units to draw", transform=ax.transAxes, ha="center")
            ax.set_title(f"{_model_title(label, d)}: {s['n_censored']} of {s['n_units']} units non-decaying",
                         fontsize=9)
            ax.set_xlabel(r"$\zeta$ = log of the windowed transport rate, last record ($\tau = e^{-\zeta}$ steps)",
                          fontsize=8)
            ax.set_ylabel("density over the resolved units", fontsize=8)
            ax.grid(True, alpha=0.3)
        for ax in axes.ravel()[len(data):]:
            ax.set_visible(False)
        fig.tight_layout()
        try:
            written = save_figure(fig, path, dpi=90)
        except (OSError, ValueError) as exc:
            raise ValueError(f"path: cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return written


def plot_verdict_drift(data, path) -> str:
    r"""The far-left drift per model: the mean increment of :math:`\zeta` per epoch against :math:`\zeta`.

    Parameters
    ----------
    data : dict
        Label -> ``{"n_seeds", "drift"}``, ``drift`` from
        :func:`levysde.studies.paper_verdict.far_left_drift` (bins of the starting zeta over
        the late records; its ``zeta_cut``, the paper's far-left quantile, is drawn dotted).
    path : str or os.PathLike
        Output image file (:func:`save_figure`).

    Returns
    -------
    str
        The path written (the figure is closed).

    Raises
    ------
    ValueError
        When the file cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.studies.paper_verdict import far_left_drift
    >>> rng = np.random.default_rng(0)
    >>> z = np.zeros((20, 200))
    >>> for r in range(1, 20):
    ...     z[r] = z[r - 1] - 0.2 * z[r - 1] + 0.3 * rng.standard_normal(200)
    >>> data = {"diaggate": {"n_seeds": 1, "drift": far_left_drift([np.exp(-z)], [np.arange(20.0)])}}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_verdict_drift(data, os.path.join(d, "drift.png"))
    ...     print(os.path.basename(out), os.path.getsize(out) > 0)
    drift.png True
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    try:
        for i, (label, d) in enumerate(data.items()):
            dr = d["drift"]
            x, m = np.asarray(dr["centers"], dtype=float), np.asarray(dr["mean"], dtype=float)
            se = np.array([np.nan if v is None else v for v in dr["se"]], dtype=float)
            ax.errorbar(x, m, yerr=np.where(np.isfinite(se), se, 0.0), fmt="o-", ms=3, lw=1.0, capsize=2,
                        color=f"C{i}", label=f"{_model_title(label, d)}: {dr['n_transitions']} increments, "
                                             f"{dr['n_censored']} with a non-decaying end left out")
            if dr.get("zeta_cut") is not None:
                ax.axvline(dr["zeta_cut"], color=f"C{i}", ls=":", lw=1.0)
        ax.axhline(0.0, color="0.4", lw=0.8)
        ax.set_xlabel(r"$\zeta$ at the start of the increment")
        ax.set_ylabel(r"mean $\Delta\zeta$ per epoch ($\pm$ se, clustered by unit)")
        ax.set_title("far-left drift over the late records (dotted: the 10 % quantile, kappa_tail's cut)",
                     fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        try:
            written = save_figure(fig, path, dpi=90)
        except (OSError, ValueError) as exc:
            raise ValueError(f"path: cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return written


def plot_verdict_envelopes(data, path) -> str:
    r"""The envelope :math:`f(\ell)` per model with the paper's power-law and tempered fits, one panel each.

    Parameters
    ----------
    data : dict
        Label -> ``{"n_seeds", "envelope": {"lags", "f", "models"}}``: ``f`` and ``models``
        map a reading ("censored", "dropped") to the envelope and its
        :class:`levysde.inference.paper_protocol.EnvelopeModels`
        (:func:`levysde.studies.paper_verdict.verdict_figure_data`).
    path : str or os.PathLike
        Output image file (:func:`save_figure`).

    Returns
    -------
    str
        The path written (the figure is closed).

    Raises
    ------
    ValueError
        When the file cannot be written.

    Examples
    --------
    >>> import os, tempfile
    >>> from levysde.inference.paper_protocol import envelope_models, tau_envelope
    >>> tau = np.random.default_rng(0).pareto(0.6, 256) + 1.0
    >>> lags, f = tau_envelope(tau)
    >>> env = {"lags": lags, "f": {"dropped": f}, "models": {"dropped": envelope_models(lags, f)}}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = plot_verdict_envelopes({"diaggate": {"n_seeds": 1, "envelope": env}}, os.path.join(d, "e.png"))
    ...     print(os.path.basename(out), os.path.getsize(out) > 0)
    e.png True
    """
    plt = pyplot()
    n = max(1, len(data))
    cols = min(2, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    try:
        for ax, (label, d) in zip(axes.ravel(), data.items(), strict=False):
            env = d["envelope"]
            lag = np.asarray(env["lags"], dtype=float)
            ll = np.log(lag)
            for j, (reading, f) in enumerate(env["f"].items()):
                f = np.asarray(f, dtype=float)
                m = env["models"][reading]
                ok = f > 0
                ax.loglog(lag[ok], f[ok], "o", ms=2.5, color=f"C{j}", alpha=0.6, label=f"f(l), {reading}")
                c, dd = m.coef["power"]
                ax.loglog(lag, np.exp(c + dd * ll), "--", color=f"C{j}", lw=1.0,
                          label=f"power law: beta {m.beta_power:.3g}")
                a, dt, bt = m.coef["tempered"]
                tm = "inf" if not math.isfinite(m.tau_max) else f"{m.tau_max:.3g}"
                ax.loglog(lag, np.exp(a + dt * ll + bt * lag), "-", color=f"C{j}", lw=1.0,
                          label=f"tempered: beta_env {m.beta_env:.3g}, tau_max {tm} (AIC: {m.winner})")
            ax.set_title(_model_title(label, d), fontsize=9)
            ax.set_xlabel("lag l (steps)")
            ax.set_ylabel("f(l)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
        for ax in axes.ravel()[len(data):]:
            ax.set_visible(False)
        fig.tight_layout()
        try:
            written = save_figure(fig, path, dpi=90)
        except (OSError, ValueError) as exc:
            raise ValueError(f"path: cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
    return written
