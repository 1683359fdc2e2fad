"""Sphinx configuration of the levysde documentation.

Build (warnings are errors):  python -m sphinx -W --keep-going -b html docs docs/_build/html
"""
import pathlib
import sys

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
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True
suppress_warnings = ["myst.xref_missing", "ref.python"]


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings are plain text for help(): |x| means abs(x), not an RST substitution."""
    lines[:] = [ln.replace("|", "\\|") for ln in lines]


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
    app.connect("autodoc-process-docstring", _escape_bars)
