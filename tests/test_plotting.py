"""Figures in vector formats stay small: the phase-diagram heat map is rasterised (issue 14, item 20)."""
import re

import pytest

from levysde.plotting import plot_phase_diagram
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
