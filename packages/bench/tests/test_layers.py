"""The orchestrator reads as layers, each importing only those below it, with no import cycle
(read with ast: every import, also those inside functions, counts)."""
import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"

# lowest first: bench's paths, errors, signals and console output; data; the run pipeline;
# reports (result files in); the tools (sub-commands driving runs); the command line and the
# test helpers on top
LAYERS = [
    ("base", ("bench", "bench.errors", "bench.signals", "bench.console", "bench.files")),
    ("data", ("bench.data",)),
    ("run", ("bench.run",)),
    ("report", ("bench.report",)),
    ("tools", ("bench.tools",)),
    ("top", ("bench.cli", "bench.__main__", "bench.testing", "bench.pytest_plugin")),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(BENCH.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in BENCH.rglob("*.py")}


def layer(module):
    """(index, name) of the layer a module belongs to: its longest listed prefix."""
    best = None
    for index, (name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "bench" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[2]:
                    best = (index, name, len(prefix))
    return best and best[:2]


def imports(module, path=None):
    """The bench modules `module` imports, anywhere in its code."""
    path = path or MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import name`: the submodule pkg.name where there is one, else pkg
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t == "bench" or t.startswith("bench."))
    found.discard(module)
    return found


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer(m) is None] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_only(module):
    here = layer(module)
    upward = sorted(f"{target} ({layer(target)[1]})" for target in imports(module)
                    if target in MODULES and layer(target)[0] > here[0])
    assert upward == [], f"{module} ({here[1]}) imports a layer above it: {upward}"


def test_no_import_cycle():
    graph = {m: {t for t in imports(m) if t in MODULES} for m in MODULES}
    # a package imports its own submodules (bench.report.site -> .model); a module importing
    # its package back is the cycle that matters, so the package -> submodule edges stay
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_checker_sees_an_upward_import_and_a_cycle(tmp_path):
    """The rules above can fail: a data module that imports the run layer, and a module that
    imports one that imports it back inside a function (as app.py and peak.py once did)."""
    bad = tmp_path / "bench" / "data" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ..run import benchmark\n\n\ndef f():\n    from . import cache\n")
    assert "bench.run.benchmark" in imports("bench.data.bad", bad)
    assert layer("bench.run.benchmark")[0] > layer("bench.data.bad")[0]
    assert "bench.data.cache" in imports("bench.data.bad", bad)
