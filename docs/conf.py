"""Sphinx configuration of the levysde documentation.

Build (warnings are errors):  python docs/build.py
(it runs the examples and writes docs/_generated/ first, then
python -m sphinx -W --keep-going -b html docs docs/_build/html)
"""
import pathlib
import sys

from sphinx.util import logging

logger = logging.getLogger(__name__)

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

project = "levysde"
author = "the levysde authors"
copyright = "2026, the levysde authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# $...$ / $$...$$ and amsmath environments, rendered by MathJax
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True
myst_heading_anchors = 3
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "build.py"]
html_static_path = ["_static"]
html_theme = "furo"
html_title = "levysde"
html_css_files = ["custom.css"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_mock_imports = ["torch"]
# signatures without the annotations (they are for mypy and editors): the numpydoc text gives the
# types in words, and autodoc would spell numpy.typing.ArrayLike out as its whole protocol union
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True
suppress_warnings = ["myst.xref_missing", "ref.python"]


#: Key formulas rendered (MathJax) under the docstrings on the API page. The docstrings keep
#: plain-text maths for help(); these are the same formulas, from docs/specification.md.
API_FORMULAS = {
    "levysde.theory.levy.c_alpha":
        r"c_\alpha = \frac{-1}{2\,\Gamma(-\alpha)\cos(\pi\alpha/2)} = \frac{\Gamma(1+\alpha)\sin(\pi\alpha/2)}{\pi},"
        r"\qquad c_1 = \frac{1}{\pi}",
    "levysde.theory.levy.psi":
        r"\Psi(\beta) = \log\mathbb{E}\,e^{\beta J_1} = -\eta_J\,"
        r"\frac{(\lambda-\beta)^\alpha + (\lambda+\beta)^\alpha - 2\lambda^\alpha}{2\cos(\pi\alpha/2)},"
        r"\qquad \lvert\beta\rvert \le \lambda \quad (+\infty \text{ outside})",
    "levysde.theory.levy.psi_adjoint": r"\Psi^*(\beta) = \Psi(-\beta)",
    "levysde.theory.levy.char_exponent":
        r"\log\mathbb{E}\,e^{i\xi J_1} = -\eta_J\,"
        r"\frac{(\lambda-i\xi)^\alpha + (\lambda+i\xi)^\alpha - 2\lambda^\alpha}{2\cos(\pi\alpha/2)}",
    "levysde.theory.levy.variance":
        r"\operatorname{Var} J_1 = \Psi''(0) = -\eta_J\,\frac{\alpha(\alpha-1)\lambda^{\alpha-2}}{\cos(\pi\alpha/2)}",
    "levysde.theory.levy.cumulant4":
        r"k_4 = -\eta_J\,\frac{\alpha(\alpha-1)(\alpha-2)(\alpha-3)\lambda^{\alpha-4}}{\cos(\pi\alpha/2)}",
    "levysde.theory.phases.phi": r"\Phi(\beta) = \eta_G\beta^2 + \Psi^*(\beta) - \kappa\beta",
    "levysde.theory.phases.beta_star":
        r"\beta^* \in (0, \lambda]: \quad \Phi(\beta^*)/\beta^* = 0",
    "levysde.theory.phases.eta_j_star":
        r"\eta_J^* = \frac{\lambda(\kappa - \eta_G\lambda)}{\Psi_1(\lambda)}, \qquad"
        r"\Psi_1(\lambda) = \frac{(2\lambda)^\alpha - 2\lambda^\alpha}{-2\cos(\pi\alpha/2)}",
    "levysde.theory.phases.eta_j_critical": r"\eta_J^{\mathrm{crit}} = \frac{\kappa - \eta_G}{\Psi_1(1)}",
    "levysde.simulation.scheme.default_eps": r"\varepsilon = (\eta_J\,dt)^{1/\alpha}",
    "levysde.simulation.scheme.big_jump_rate":
        r"\Lambda_\varepsilon = 2\eta_J c_\alpha \lambda^\alpha\,\Gamma(-\alpha, \lambda\varepsilon)"
        r"\quad (\lambda > 0), \qquad \frac{2\eta_J c_\alpha\varepsilon^{-\alpha}}{\alpha} \quad (\lambda = 0)",
    "levysde.simulation.scheme.small_jump_variance":
        r"\sigma_\varepsilon^2 = 2\eta_J c_\alpha \lambda^{\alpha-2}\,\gamma(2-\alpha, \lambda\varepsilon)"
        r"\quad (\lambda > 0), \qquad \frac{2\eta_J c_\alpha\varepsilon^{2-\alpha}}{2-\alpha} \quad (\lambda = 0)",
    "levysde.simulation.simulate": r"d\zeta = F(\zeta)\,dt + \sqrt{2\eta_G}\,dW + dJ",
    "levysde.theory.envelope_map.envelope":
        r"f(\ell) = \int_0^\infty e^{-\ell/\tau} p(\tau)\,d\tau = \mathbb{E}_\rho\big[\exp(-\ell e^{\zeta})\big]",
    "levysde.theory.envelope_map.envelope_hist":
        r"\int_a^b \exp(-\ell e^{z})\,dz = E_1(\ell e^{a}) - E_1(\ell e^{b})",
    "levysde.theory.envelope_map.tauberian_prediction": r"f(\ell) \sim A\,\Gamma(\beta)\,\ell^{-\beta}",
    "levysde.stats.tails.tail_fit":
        r"\hat\beta = \frac{1}{\operatorname{mean}(X - u \mid X > u)}, \quad X = -\zeta, \qquad"
        r"\hat A = \hat\beta\,\hat p\,e^{\hat\beta u}",
    "levysde.stats.tails.hill_rate": r"\hat\beta = \frac{1}{\operatorname{mean}(X - u \mid X > u)}, \quad X = -\zeta",
    "levysde.theory.learnability.kappa_alpha": r"\kappa_\alpha = \frac{\alpha_g}{\alpha_g - 1}",
    "levysde.theory.learnability.sample_complexity": r"N(\ell) = C f(\ell)^{-\kappa_\alpha}",
    "levysde.theory.learnability.learnability_window": r"H_N = \sup\{\ell : C f(\ell)^{-\kappa_\alpha} \le N\}",
    "levysde.theory.learnability.window_scaling_law":
        r"H_N = \frac{\tau}{\kappa_\alpha}\ln\frac{N}{C}, \qquad"
        r"H_N = \Big(\frac{N}{C}\Big)^{1/(\beta\kappa_\alpha)}, \qquad"
        r"H_N = \exp\Big(\Big(\frac{N}{C}\Big)^{1/(\gamma\kappa_\alpha)}\Big)",
}
_formulas_used: set = set()
_api_read: list = []


def _process_docstring(app, what, name, obj, options, lines):
    """Docstrings are plain text for help(): |x| means abs(x), not an RST substitution.
    Then append the rendered formula of API_FORMULAS, if any."""
    lines[:] = [ln.replace("|", "\\|") for ln in lines]
    tex = API_FORMULAS.get(name)
    if tex is not None:
        _formulas_used.add(name)
        lines += ["", ".. rubric:: Formula", "", ".. math::", "", "   " + tex, ""]


def _note_api_read(app, docname, source):
    if docname == "api":
        _api_read.append(docname)


def _check_formulas(app, exception):
    """A formula whose function was renamed or removed must not vanish silently."""
    if exception is None and _api_read:
        for name in sorted(set(API_FORMULAS) - _formulas_used):
            logger.warning("API_FORMULAS: %s is not a documented function; update docs/conf.py", name)


def _write_cli_reference(app):
    """Generate docs/_generated/cli.md from the argparse parsers (always current)."""
    from levysde.cli import build_parser

    parser = build_parser()
    out = ["# CLI reference", "", "Generated from the argument parsers at build time.", ""]
    out += ["```text", parser.format_help().rstrip(), "```", ""]
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        out += [f"## levysde {name}", "", "```text", p.format_help().rstrip(), "```", ""]
    gen = pathlib.Path(app.srcdir) / "_generated"
    gen.mkdir(exist_ok=True)
    (gen / "cli.md").write_text("\n".join(out))


def setup(app):
    app.connect("builder-inited", _write_cli_reference)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("source-read", _note_api_read)
    app.connect("build-finished", _check_formulas)
