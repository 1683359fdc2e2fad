"""Sphinx configuration of the levysde documentation.

Build (warnings are errors):  python docs/build.py
(it runs the examples and writes docs/_generated/ first, then
python -m sphinx -W --keep-going -b html docs docs/_build/html)
"""
import importlib
import pathlib
import re
import sys

from sphinx.util import logging

logger = logging.getLogger(__name__)

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

project = "levysde"
author = "the levysde authors"
copyright = "2026, the levysde authors"
#: the version shown on the site: the one pyproject.toml gives the package
release = re.search(r'^version\s*=\s*"([^"]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"),
                    re.M).group(1)
version = release
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon",
              "sphinx.ext.mathjax",
              # MathJax 3 shipped in a Python package and copied into _static/mathjax: the site's
              # formulas render offline, nothing is loaded from a CDN
              "sphinx-mathjax-offline"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# $...$ / $$...$$ and amsmath environments, rendered by MathJax
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True
myst_heading_anchors = 3
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "build.py", "figures/*.py",
                    # included by api.md, not pages of their own
                    "_generated/api_modules.md", "_generated/layers.md"]
html_static_path = ["_static"]
html_theme = "furo"
html_title = f"levysde {release}"
html_css_files = ["custom.css"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_mock_imports = ["torch"]
# signatures without the annotations (they are for mypy and editors): the numpydoc text gives the
# types in words, and autodoc would spell numpy.typing.ArrayLike out as its whole protocol union
autodoc_typehints = "none"
# the per-object pages are written by _write_api_pages below (one page per public name)
autosummary_generate = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True
# the types of Parameters/Returns are words ("array_like, >= 0"), rendered as text, not as
# cross-references that Sphinx would resolve to any attribute of the same name
napoleon_use_param = False
napoleon_use_rtype = False
napoleon_use_keyword = False
suppress_warnings = ["myst.xref_missing", "ref.python"]


#: Key formulas rendered (MathJax) under a function's docstring on its API page, for the
#: functions whose docstrings give them only in plain text (docs/specification.md). A docstring
#: whose Notes already show TeX maths gets no rubric (see _append_formula): the formula is there.
API_FORMULAS = {
    "levysde.simulation.scheme.default_eps": r"\varepsilon = (\eta_J\,dt)^{1/\alpha}",
    "levysde.simulation.scheme.big_jump_rate":
        r"\Lambda_\varepsilon = 2\eta_J c_\alpha \lambda^\alpha\,\Gamma(-\alpha, \lambda\varepsilon)"
        r"\quad (\lambda > 0), \qquad \frac{2\eta_J c_\alpha\varepsilon^{-\alpha}}{\alpha} \quad (\lambda = 0)",
    "levysde.simulation.scheme.small_jump_variance":
        r"\sigma_\varepsilon^2 = 2\eta_J c_\alpha \lambda^{\alpha-2}\,\gamma(2-\alpha, \lambda\varepsilon)"
        r"\quad (\lambda > 0), \qquad \frac{2\eta_J c_\alpha\varepsilon^{2-\alpha}}{2-\alpha} \quad (\lambda = 0)",
}
_formulas_used: set = set()


#: "docs/specification.md §4", "THEORY.md §4", "specification §4": the section of the
#: specification page (labels spec-1 ... spec-9 in docs/specification.md)
_SPEC_REF = re.compile(r"(?:docs/)?(?:specification(?:\.md)?|THEORY\.md)(,? )§(\d+)((?:(?:-|–|, | and )§\d+)*)")
_SPEC_MORE = re.compile(r"(-|–|, | and )§(\d+)")
#: inline spans in which a "|" is literal text already: ``code``, :role:`text`, `text`
_INLINE = re.compile(r"(``.+?``|:[\w:]+:`[^`]*`|`[^`]*`_?)")


def _spec_links(text: str) -> str:
    def one(m):
        more = _SPEC_MORE.sub(lambda k: f"{k.group(1)}:ref:`§{k.group(2)} <spec-{k.group(2)}>`", m.group(3))
        return f":ref:`specification §{m.group(2)} <spec-{m.group(2)}>`{more}"
    return _SPEC_REF.sub(one, text)


def _escape_pipes(line: str) -> str:
    """``|x|`` is abs(x) in the plain-text docstrings, not an RST substitution: escape "|"
    outside inline literals and roles (where a backslash would be shown as it is)."""
    parts = _INLINE.split(line)
    return "".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def _prepare_docstring(app, what, name, obj, options, lines):
    """Before napoleon: plain-text pipes escaped, specification sections linked. Doctest and
    ``.. math::`` blocks are left as they are."""
    out, raw, math_indent = [], False, None
    for ln in lines:
        stripped = ln.strip()
        if math_indent is not None:
            if stripped and len(ln) - len(ln.lstrip()) <= math_indent:
                math_indent = None
            else:
                out.append(ln)
                continue
        if stripped.startswith(".. math::"):
            math_indent = len(ln) - len(ln.lstrip())
            out.append(ln)
            continue
        if stripped.startswith(">>>"):
            raw = True
        elif not stripped:
            raw = False
        out.append(ln if raw else _spec_links(_escape_pipes(ln)))
    lines[:] = out


def _notes_have_math(lines) -> bool:
    """Whether the Notes of a docstring (after napoleon: ``.. rubric:: Notes`` up to the next
    rubric) hold TeX maths, a ``.. math::`` block or a ``:math:`` role."""
    notes = False
    for ln in lines:
        s = ln.strip()
        if s.startswith(".. rubric::"):
            notes = s == ".. rubric:: Notes"
        elif notes and (s.startswith(".. math::") or ":math:`" in s):
            return True
    return False


def _append_formula(app, what, name, obj, options, lines):
    """After napoleon: the rendered formula of API_FORMULAS, unless the Notes show maths
    already (the formula would be shown twice)."""
    tex = API_FORMULAS.get(name)
    if tex is not None:
        _formulas_used.add(name)
        if not _notes_have_math(lines):
            lines += ["", ".. rubric:: Formula", "", ".. math::", "", "   " + tex, ""]


def _check_formulas(app, exception):
    """A formula whose function was renamed or removed must not vanish silently."""
    if exception is None and _api_pages:
        for name in sorted(set(API_FORMULAS) - _formulas_used):
            logger.warning("API_FORMULAS: %s is not a documented function; update docs/conf.py", name)


# --------------------------------------------------------------------------- API pages
#: modules documented on the API pages: every public module (no "_" in its dotted name) but the
#: CLI's (the CLI reference documents the command); packages only for names defined in their
#: private modules (re-exports are documented once, under the module that defines them)
API_SKIP = ("levysde.cli",)
_api_pages: list = []


def _public_modules():
    sys.path.insert(0, str(ROOT / "docs"))
    import layers  # docs/layers.py: the layer order

    mods = []
    for path in sorted((ROOT / "levysde").rglob("*.py")):
        name = layers.module_name(path)
        if any(part.startswith("_") for part in name.split(".")) or name.startswith(API_SKIP):
            continue
        if name == "levysde":
            continue
        layer = name.split(".")[1]
        mods.append((layers.LAYERS.index(layer), path.name != "__init__.py", name, layer))
    mods.sort()
    return [(name, layer) for _, _, name, layer in mods], layers.PURPOSE


def _own_names(modname):
    """(name, kind) of the public objects a module defines (its __all__, re-exports left out)."""
    mod = importlib.import_module(modname)
    out = []
    for n in getattr(mod, "__all__", []):
        if n.startswith("__"):
            continue
        obj = getattr(mod, n)
        home = getattr(obj, "__module__", None) if isinstance(obj, type) or callable(obj) else None
        if home is not None and home != modname and not (
                home.startswith(modname + ".") and any(p.startswith("_") for p in home[len(modname) + 1:].split("."))):
            continue  # documented under the module that defines it
        if home is None and modname.count(".") == 1 and mod.__file__.endswith("__init__.py"):
            continue  # a constant re-exported by a package
        if isinstance(obj, type):
            kind = "exception" if issubclass(obj, BaseException) else "class"
        elif callable(obj):
            kind = "function"
        else:
            kind = "data"
        out.append((n, kind))
    return out


def _first_line(obj) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return doc[0].strip() if doc else ""


def _write_api_pages(app):
    """docs/_generated/api/: a page per public module (its docstring and a summary table) and a
    page per public function, class and constant; docs/_generated/api_modules.md lists them by
    layer (included by docs/api.md)."""
    import pprint

    gen = pathlib.Path(app.srcdir) / "_generated"
    api = gen / "api"
    api.mkdir(parents=True, exist_ok=True)
    for old in api.glob("*.md"):
        old.unlink()
    mods, purpose = _public_modules()
    index = []
    current = None
    for modname, layer in mods:
        names = _own_names(modname)
        mod = importlib.import_module(modname)
        if not names and mod.__file__.endswith("__init__.py"):
            continue
        if layer != current:
            index += [f"## {layer}", "", purpose[layer][:1].upper() + purpose[layer][1:] + ".", ""]
            current = layer
        index += [f"### [`{modname}`](_generated/api/{modname}.md)", "", _first_line(mod), ""]
        page = [f"# `{modname}`", "", "```{eval-rst}", f".. automodule:: {modname}", "   :no-members:", ""]
        if names:
            page += [".. rubric:: Contents", "", ".. autosummary::", "   :toctree: .", "   :nosignatures:", ""]
            page += [f"   {n}" for n, _ in names]
            index += ["```{eval-rst}", f".. currentmodule:: {modname}", "", ".. autosummary::",
                      "   :nosignatures:", ""] + [f"   {n}" for n, _ in names] + ["```", ""]
        page += ["```", ""]
        (api / f"{modname}.md").write_text("\n".join(page), encoding="utf-8")
        _api_pages.append(modname)
        for n, kind in names:
            full = f"{modname}.{n}"
            body = [f"# `{n}`", "", f"`{full}`", "", "```{eval-rst}", f".. currentmodule:: {modname}", ""]
            if kind == "function":
                body += [f".. autofunction:: {n}"]
            elif kind in ("class", "exception"):
                body += [f".. auto{kind}:: {n}", "   :members:", "   :show-inheritance:"]
            else:
                value = pprint.pformat(getattr(mod, n), width=90, sort_dicts=False)
                body += [f".. autodata:: {n}", "   :no-value:", "", "   Value:", "",
                         "   .. code-block:: python", ""] + ["      " + v for v in value.splitlines()]
            body += ["```", ""]
            (api / f"{full}.md").write_text("\n".join(body), encoding="utf-8")
    index += ["```{toctree}", ":hidden:", ""] + [f"_generated/api/{m}" for m in _api_pages] + ["```", ""]
    (gen / "api_modules.md").write_text("\n".join(index), encoding="utf-8")


def _exact_type_links(app, doctree):
    """Type words in field lists (``:vartype:`` of an Attributes section) link only to an
    object of that exact name in the current module or class, never, by a fuzzy search, to
    an attribute of the same name of an unrelated class."""
    from sphinx.addnodes import pending_xref

    for node in doctree.findall(pending_xref):
        if (node.get("refdomain") == "py" and node.get("reftype") in ("class", "obj", "data", "attr")
                and node.get("refspecific") and "." not in node.get("reftarget", "")):
            node["refspecific"] = False


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
    app.connect("builder-inited", _write_api_pages)
    # before napoleon (priority 500) and after it
    app.connect("autodoc-process-docstring", _prepare_docstring, priority=400)
    app.connect("autodoc-process-docstring", _append_formula, priority=600)
    app.connect("doctree-read", _exact_type_links)
    app.connect("build-finished", _check_formulas)
