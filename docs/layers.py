"""The package's layers and the imports between them, read from the source with ``ast``.

    python docs/layers.py            # print the layer table (Markdown) that docs/api.md includes

Used by docs/build.py (which writes docs/_generated/layers.md) and by
tests/test_architecture.py (which fails on an import against the layer order). Nothing of the
package is imported or run.
"""
from __future__ import annotations

import ast
import pathlib
import sys
from dataclasses import dataclass

PKG = pathlib.Path(__file__).resolve().parent.parent / "levysde"

#: the layers, lowest first: a module may import from its own layer and the ones before it
LAYERS = ("core", "io", "theory", "stats", "simulation", "rnn", "inference", "studies", "plotting", "cli")

#: what each layer is for (the table in docs/api.md)
PURPOSE = {
    "core": "outcomes as data (Status, Estimate), the argument checks, the machine's memory, the optional extras",
    "io": "atomic writes, the overwrite policy, locks; run files (.npz)",
    "theory": "parameters, the Lévy symbol, β* and the phases, the envelope map and its asymptotics, "
              "decay classes, the learnability window",
    "stats": "tail estimators (Hill, threshold scans, tempered fit) and the jackknife",
    "simulation": "the Euler–Maruyama solver: drifts, jump scheme, Numba CPU and CUDA kernels, results",
    "rnn": "the gated-RNN trainer (PyTorch) and its torch-free task maths",
    "inference": "the SDE fit, the prediction, `check`, the run-envelope fit",
    "studies": "the phase diagram and resumable parameter sweeps",
    "plotting": "figures (matplotlib)",
    "cli": "the `levysde` command: parse, call the library, print",
}

#: function-level imports of levysde modules outside the cli layer, each with its reason
LAZY_ALLOWED = {
    ("levysde.simulation._backend", "levysde.simulation._cuda"):
        "the CUDA backend (numba-cuda, optional) is loaded only when asked for",
}


@dataclass(frozen=True)
class Import:
    """One import of a levysde module: who imports what, where, and which names."""

    source: str        # importing module, e.g. "levysde.inference.check"
    target: str        # imported module, e.g. "levysde.stats.tails"
    names: tuple       # imported names (empty for ``import x``)
    lineno: int
    function_level: bool
    type_checking: bool


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, pathlib.Path]:
    """Every module of the package: dotted name -> path."""
    return {module_name(p): p for p in sorted(PKG.rglob("*.py")) if "__pycache__" not in p.parts}


def layer(module: str) -> str | None:
    """The layer of ``levysde.<layer>...``; None for the package root and ``__main__``."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    name = parts[1]
    return name if name in LAYERS else None


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: pathlib.Path) -> list[Import]:
    """The levysde imports of one module, with whether each sits inside a function or under
    ``if TYPE_CHECKING:``."""
    mod = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[Import] = []

    def visit(node, in_function: bool, in_tc: bool):
        for child in ast.iter_child_nodes(node):
            fn = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            tc = in_tc or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test))
            if isinstance(child, ast.ImportFrom):
                target = _absolute(mod, path.name == "__init__.py", child)
                if target == "levysde" or target.startswith("levysde."):
                    names = tuple(a.name for a in child.names)
                    modules_named = [f"{target}.{n}" for n in names if f"{target}.{n}" in _MODULES]
                    if modules_named and len(modules_named) == len(names):     # from pkg import module
                        out.extend(Import(mod, m, (), child.lineno, in_function, in_tc) for m in modules_named)
                    else:
                        out.append(Import(mod, target, names, child.lineno, in_function, in_tc))
            elif isinstance(child, ast.Import):
                out.extend(Import(mod, a.name, (), child.lineno, in_function, in_tc)
                           for a in child.names if a.name.split(".")[0] == "levysde")
            visit(child, fn, tc)

    visit(tree, False, False)
    return out


_MODULES = modules()


def graph() -> dict[str, dict[str, int]]:
    """Layer -> {imported layer: number of imports}, self-imports excluded."""
    g: dict[str, dict[str, int]] = {name: {} for name in LAYERS}
    for mod, path in _MODULES.items():
        src = layer(mod)
        if src is None:
            continue
        for imp in imports(path):
            dst = layer(imp.target)
            if dst is not None and dst != src:
                g[src][dst] = g[src].get(dst, 0) + 1
    return g


def violations() -> list[str]:
    """Every import against the rules (see tests/test_architecture.py), one line each."""
    bad = []
    rank = {name: i for i, name in enumerate(LAYERS)}
    for mod, path in _MODULES.items():
        src = layer(mod)
        where = f"{path.relative_to(PKG.parent)}"
        for imp in imports(path):
            dst = layer(imp.target)
            at = f"{where}:{imp.lineno}"
            if imp.target == "levysde" and src is not None and set(imp.names) != {"__version__"}:
                bad.append(f"{at}: imports {imp.names} from the package root (only __version__ may be)")
            if src is not None and dst is not None and rank[dst] > rank[src]:
                bad.append(f"{at}: layer {src} imports {imp.target} (layer {dst}, after it)")
            private = [n for n in imp.names if n.startswith("_") and n != "__version__"]
            if private and imp.target != mod:
                bad.append(f"{at}: imports private names {private} from {imp.target}")
            tparts = imp.target.split(".")
            for i, part in enumerate(tparts):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(tparts[:i])
                    if not (mod == owner or mod.startswith(owner + ".")):
                        bad.append(f"{at}: imports the private module {imp.target} from outside {owner}")
                    break
            if (imp.function_level and src not in (None, "cli")
                    and (mod, imp.target) not in LAZY_ALLOWED):
                bad.append(f"{at}: function-level import of {imp.target} (move it to the top of the module)")
    return bad


def line_count(path: pathlib.Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def table() -> str:
    """The Markdown table of the layers: modules with line counts, purpose, imports."""
    g = graph()
    rows = ["| layer | modules (lines) | what it holds | imports from |", "|---|---|---|---|"]
    for name in LAYERS:
        mods = sorted(m for m in _MODULES if layer(m) == name)
        listed = ", ".join(f"`{m.split('.', 1)[1]}` ({line_count(_MODULES[m])})" for m in mods)
        uses = ", ".join(f"{d} ({n})" for d, n in sorted(g[name].items(), key=lambda kv: LAYERS.index(kv[0])))
        rows.append(f"| **{name}** | {listed} | {PURPOSE[name]} | {uses or '—'} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())
