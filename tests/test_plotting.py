"""Figures in vector formats stay small: the phase-diagram heat map is rasterised (issue 14, item 20)."""
import re

import pytest

from levysde.plotting import plot_check, plot_phase_diagram
from levysde.studies.diagram import phase_diagram

pytest.importorskip("matplotlib")


def test_phase_diagram_svg_is_small(tmp_path):
    # 300 x 300 = 90,000 cells: drawn as vector quadrilaterals the SVG is ~17 MB
    # (a few hundred bytes per cell), so the 2 MB bound fails without rasterisation.
    d = phase_diagram("alpha", "lam", nx=300, ny=300, eta_j=2.0)
    out = tmp_path / "a.svg"
    plot_phase_diagram(d, path=out)
    size = out.stat().st_size
    assert 10_000 < size < 2_000_000, size
    svg = out.read_text()
    assert len(re.findall(r"<image\b", svg)) >= 1           # the mesh: an embedded bitmap
    assert 'id="DejaVuSans' in svg or "<text" in svg          # axis labels stay vector glyphs
    assert len(re.findall(r"<path\b", svg)) > 20              # ticks, contours, frame: vector


# --- levysde check's figure: the drift panel marks an extrapolated plateau, the axes the unit ---
def _trajectories(drift, R=300, Q=64, seed=0, noise=0.5):
    import numpy as np

    rng = np.random.default_rng(seed)
    z = np.zeros((R, Q))
    z[0] = rng.normal(size=Q)
    for r in range(R - 1):
        z[r + 1] = z[r] + drift(z[r]) + noise * rng.normal(size=Q)
    return z


def _drift_panel(tmp_path, zeta, **kw):
    import numpy as np

    from levysde.inference.check import check_trajectories
    from levysde.plotting import pyplot

    rep = check_trajectories(zeta, np.arange(len(zeta)), closing_loop=False, n_boot=20)
    fig = plot_check(rep, {"zeta": zeta, "step": np.arange(len(zeta))}, tmp_path / "c.png", **kw)
    ax = fig.axes[1]
    lines = {ln.get_label(): ln.get_linestyle() for ln in ax.get_lines()}
    labels = (fig.axes[0].get_xlabel(), ax.get_ylabel())
    pyplot().close(fig)
    return rep, lines, labels


def test_check_plot_marks_an_extrapolated_plateau(tmp_path):
    """A linear (OU) drift has no plateau: the fitted saturating form's plateau lies beyond the
    data, so the line at kappa_hat and the form's continuation are dashed and say so."""
    rep, lines, labels = _drift_panel(tmp_path, _trajectories(lambda z: -0.1 * z, R=600, seed=1, noise=0.3))
    assert rep.fit.drift.plateau_extrapolated and rep.fit.kappa.ok
    kappa = [k for k in lines if k.startswith(r"$\hat\kappa$")]
    assert len(kappa) == 1 and "extrapolated" in kappa[0] and lines[kappa[0]] == "--", lines
    assert lines["fitted form, extrapolated beyond the data"] == "--"
    assert lines["fitted form (the bins it rests on)"] == "-"
    assert labels == ("training step", "drift per step")


def test_check_plot_draws_a_reached_plateau_solid(tmp_path):
    """dZ = 0.5 tanh(-Z/0.5) dt + noise reaches its plateau 0.5 within the data: no "extrapolated"."""
    import numpy as np

    rep, lines, _ = _drift_panel(tmp_path, _trajectories(lambda z: 0.5 * np.tanh(-z / 0.5)))
    assert not rep.fit.drift.plateau_extrapolated
    assert not any("extrapolated" in k for k in lines), lines
    kappa = [k for k in lines if k.startswith(r"$\hat\kappa$")]
    assert len(kappa) == 1 and lines[kappa[0]] == "-", lines


def test_check_plot_of_checkpoint_taus_is_in_epochs(tmp_path):
    import numpy as np

    from levysde.inference.checkpoint_check import check_checkpoint_taus
    from levysde.io.checkpoint_taus import CheckpointTaus
    from levysde.plotting import pyplot

    zeta = _trajectories(lambda z: -0.3 * z, R=40, Q=96) - 4
    epochs = np.arange(40) * 40 + 1
    ct = CheckpointTaus("ckpt", epochs, np.exp(-zeta), np.zeros(zeta.shape, bool), ("f",) * 40)
    rep = check_checkpoint_taus(ct, closing_loop=False, n_boot=20)
    fig = plot_check(rep, {"zeta": ct.zeta, "step": epochs.astype(float)}, tmp_path / "c.png")
    assert (fig.axes[0].get_xlabel(), fig.axes[1].get_ylabel()) == ("training epoch", "drift per epoch")
    pyplot().close(fig)
    fig = plot_check(rep, {"zeta": ct.zeta, "step": epochs.astype(float)}, tmp_path / "c.png", time_unit="step")
    assert fig.axes[0].get_xlabel() == "training step"
    pyplot().close(fig)
