"""No import in simdist/ runs up the layer graph of docs/design.md (deferred imports too)."""

import ast
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Imports that run up the graph today and that parallel work removes (issue 14's items); the
# lead empties this list when that work is merged. No other exception belongs here.
KNOWN_VIOLATIONS = {
    # item 1: checkpoint knows a trackable protocol, not Keras
    ("simdist.checkpoint.checkpoint", "simdist.keras.engine.tracking"): "item 1",
    ("simdist.checkpoint.graph", "simdist.keras.engine.sequential"): "item 1",
    ("simdist.checkpoint.graph", "simdist.keras.engine.tracking"): "item 1",
    ("simdist.checkpoint.graph", "simdist.keras.optimizers.optimizer"): "item 1",
    ("simdist.checkpoint.restore", "simdist.keras.engine.base_layer"): "item 1",
    ("simdist.checkpoint.restore", "simdist.keras.engine.tracking"): "item 1",
    ("simdist.checkpoint.restore", "simdist.keras.optimizers.optimizer"): "item 1",
    # item 2: the name -> model map lives in the CLI, not in cost
    ("simdist.cost.step", "simdist.demo"): "item 2",
}


def read_layers() -> tuple[list[list[str]], list[str]]:
    """The floors (bottom first, each a list of names) and the names beside them."""
    text = (ROOT / "docs" / "design.md").read_text()
    blocks = re.findall(r"```layers\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/design.md must hold exactly one ```layers block"
    floors, beside = [], []
    for line in blocks[0].strip().splitlines():
        name, _, names = line.partition(":")
        (beside if name.strip() == "beside" else floors).append(names.split())
    floors.reverse()
    return floors, [n for names in beside for n in names]


def modules(root: pathlib.Path = ROOT) -> dict[str, tuple[pathlib.Path, bool]]:
    found = {}
    for path in sorted((root / "simdist").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _statements(tree: ast.AST):
    """Every statement, at any depth (imports are statements: no need to visit expressions)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, field, ()))


def imports(found) -> list[tuple[str, str, int]]:
    """Every (importer, imported module, line) inside simdist, at any depth of the file."""
    edges = []
    for name, (path, is_package) in found.items():
        package = name if is_package else name.rpartition(".")[0]
        for node in _statements(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                # `from pkg import mod` imports the module pkg.mod when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in found else base
                           for a in node.names]
            else:
                continue
            edges += [(name, t, node.lineno) for t in targets if t.split(".")[0] == "simdist"]
    return edges


def owner(module: str, names: list[str]) -> str | None:
    """The most specific name covering ``module`` (``simdist`` covers only itself)."""
    hits = [n for n in names if module == n or (n != "simdist" and module.startswith(n + "."))]
    return max(hits, key=len) if hits else None


def test_the_graph_covers_every_module_and_every_name_is_used():
    floors, beside = read_layers()
    names = [n for floor in floors for n in floor] + beside
    assert len(names) == len(set(names)), "a name is on two floors"
    found = modules()
    uncovered = [m for m in found if owner(m, names) is None]
    assert not uncovered, f"modules on no floor of docs/design.md: {uncovered}"
    unused = [n for n in names if not any(owner(m, names) == n for m in found)]
    assert not unused, f"names in docs/design.md that cover no module: {unused}"


def upward_imports(found) -> dict[tuple[str, str], int]:
    """Each (importer, imported) pair that runs up the graph, with its first line."""
    floors, beside = read_layers()
    rank = {n: i for i, floor in enumerate(floors) for n in floor}
    rank.update({n: None for n in beside})
    names = list(rank)
    upward = {}
    for importer, imported, line in imports(found):
        a, b = rank[owner(importer, names)], rank[owner(imported, names)]
        if a is None:  # beside: the base floor and each other only
            bad = b is not None and b > 0
        else:
            bad = b is not None and b > a
        if bad:
            upward.setdefault((importer, imported), line)
    return upward


def test_no_import_runs_up_the_layer_graph():
    upward = upward_imports(modules())
    new = {k: v for k, v in upward.items() if k not in KNOWN_VIOLATIONS}
    assert not new, "imports that run up the layer graph (docs/design.md): " + ", ".join(
        f"{a} -> {b} (line {line})" for (a, b), line in sorted(new.items())
    )
    gone = sorted(set(KNOWN_VIOLATIONS) - set(upward))
    assert not gone, f"fixed: delete these from KNOWN_VIOLATIONS in {__file__}: {gone}"


def test_the_checker_sees_deferred_relative_and_beside_imports(tmp_path):
    files = {
        "simdist/__init__.py": "",
        "simdist/core/__init__.py": "",
        "simdist/core/ops.py": "def f():\n    from simdist.keras import layers\n",
        "simdist/core/fine.py": "from . import ops\nfrom simdist import errors\n",
        "simdist/keras/__init__.py": "",
        "simdist/keras/layers.py": "from ..core import ops\n",
        "simdist/data/__init__.py": "from ..keras import layers\n",
        "simdist/collectives/__init__.py": "import simdist.core.ops\nfrom .. import topology\n",
        "simdist/topology/__init__.py": "",
        "simdist/errors.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert upward_imports(modules(tmp_path)) == {
        ("simdist.core.ops", "simdist.keras.layers"): 2,  # deferred, inside a function
        ("simdist.data", "simdist.keras.layers"): 1,  # relative
        ("simdist.collectives", "simdist.core.ops"): 1,  # beside imports only base and beside
    }
