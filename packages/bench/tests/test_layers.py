"""The orchestrator reads as layers, each importing only those below it, with no import cycle
(read with ast: every import, also those inside functions, counts)."""

import ast
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"

# lowest first: bench's paths, errors, signals and console output; data; the run pipeline;
# reports (result files in); the tools (sub-commands driving runs); the command line and the
# test helpers on top
LAYERS = [
    (
        "base",
        ("bench", "bench.errors", "bench.signals", "bench.console", "bench.files", "bench.paired"),
    ),
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
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import name`: the submodule pkg.name where there is one, else pkg
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
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
    upward = sorted(
        f"{target} ({layer(target)[1]})"
        for target in imports(module)
        if target in MODULES and layer(target)[0] > here[0]
    )
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
                cycles.append(stack[stack.index(nxt) :] + [nxt])
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
    imports one that imports it back inside a function."""
    bad = tmp_path / "bench" / "data" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("from ..run import benchmark\n\n\ndef f():\n    from . import cache\n")
    assert "bench.run.benchmark" in imports("bench.data.bad", bad)
    assert layer("bench.run.benchmark")[0] > layer("bench.data.bad")[0]
    assert "bench.data.cache" in imports("bench.data.bad", bad)


def test_importing_bench_changes_nothing_in_hydra():
    """Hydra's resolvers and its _save_config are set by bench.run.hydra_hooks.install(),
    called where an application starts, never by importing a module."""
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, bench\n"
        "for m in pkgutil.walk_packages(bench.__path__, 'bench.'):\n"
        "    if m.name != 'bench.__main__': importlib.import_module(m.name)\n"
        "import hydra.core.utils\nfrom omegaconf import OmegaConf\n"
        "assert not hasattr(hydra.core.utils._save_config, '__wrapped__')\n"
        "found = [n for n in ('bench_new_dir', 'bench_sweep_name', 'bench_options',\n"
        "                     'bench_job_name') if OmegaConf.has_resolver(n)]\n"
        "assert not found, found\n"
        "from bench.run import hydra_hooks\nhydra_hooks.install()\n"
        "from bench.run import rundirs\n"
        "assert hydra.core.utils._save_config is rundirs.save_config\n"
        "assert OmegaConf.has_resolver('bench_new_dir')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_no_module_global_carries_a_run_s_outcome():
    """A run's outcome reaches the command line as bench.run.main.main()'s return value: no
    module of bench rebinds a global (`global x`), and those that keep a list at module level
    are the few kinds of process state listed here."""
    rebinding = [
        name
        for name, path in MODULES.items()
        if any(isinstance(node, ast.Global) for node in ast.walk(ast.parse(path.read_text())))
    ]
    assert rebinding == []
    process_state = {
        "bench.signals": "_pending",
        "bench.run.config": "_registered",
        "bench.run.sweep": "_said",
        "bench.report.sections": "_registered",  # sections added in this process
    }
    module_lists = {}
    for name, path in MODULES.items():
        for node in ast.parse(path.read_text()).body:
            empty = (
                isinstance(node, ast.Assign)
                and isinstance(node.value, (ast.List, ast.Dict))
                and not (node.value.elts if isinstance(node.value, ast.List) else node.value.keys)
            )
            if empty:
                module_lists[name] = node.targets[0].id
    assert module_lists == process_state


ARCHITECTURE = BENCH.parents[2] / "docs" / "architecture.md"


def mapped_layers(text):
    """{module: layer} from the layer table of docs/architecture.md (`| layer | modules | ...`,
    each module a path relative to packages/bench/bench/ in backticks)."""
    names = {name for name, _ in LAYERS}
    found = {}
    text = text.split("## The layers of the runtime (bench_shared)")[0]  # bench_shared's own
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] in names:
            for path in re.findall(r"`([^`]+\.py)`", cells[1]):
                found[module_name(BENCH / path)] = cells[0]
    return found


def map_problems(mapped):
    problems = [f"{m}: not in the table" for m in sorted(set(MODULES) - set(mapped))]
    problems += [f"{m}: in the table, not in bench" for m in sorted(set(mapped) - set(MODULES))]
    problems += [
        f"{m}: listed under {where}, its layer is {layer(m)[1]}"
        for m, where in sorted(mapped.items())
        if m in MODULES and layer(m)[1] != where
    ]
    return problems


def test_the_architecture_map_lists_every_module_in_its_layer():
    assert map_problems(mapped_layers(ARCHITECTURE.read_text())) == []


def test_the_map_check_sees_a_missing_a_gone_and_a_misplaced_module():
    text = ARCHITECTURE.read_text()
    text = (
        text.replace("`run/slurm.py`, ", "")
        .replace("`report/into.py`, ", "`report/into.py`, `report/gone.py`, ")
        .replace("`data/imdb.py`, ", "")
        .replace("| base | ", "| base | `data/imdb.py`, ")
    )
    assert map_problems(mapped_layers(text)) == [
        "bench.run.slurm: not in the table",
        "bench.report.gone: in the table, not in bench",
        "bench.data.imdb: listed under base, its layer is data",
    ]


# bench_shared, the runtime inside every framework's interpreter: its own layers, its own map
SHARED = BENCH.parents[2] / "shared" / "bench_shared"
SHARED_LAYERS = ["base", "contract", "reference", "top"]


def shared_map(text):
    """{module: layer} from the bench_shared table of docs/architecture.md."""
    section = text[text.index("## The layers of the runtime (bench_shared)") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    found = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] in SHARED_LAYERS:
            for path in re.findall(r"`([^`]+\.py)`", cells[1]):
                found["bench_shared" + ("" if path == "__init__.py" else "." + path[:-3])] = cells[
                    0
                ]
    return found


def shared_imports(path):
    """The bench_shared modules a bench_shared file imports, anywhere in its code."""
    names = {p.stem for p in SHARED.glob("*.py")}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = "bench_shared" if node.level == 1 else (node.module or "")
            if node.level == 1 and node.module:
                base += "." + node.module
            if base == "bench_shared":
                found.update(f"bench_shared.{a.name}" for a in node.names if a.name in names)
            elif base.startswith("bench_shared."):
                found.add(".".join(base.split(".")[:2]))
        elif isinstance(node, ast.Import):
            found.update(
                ".".join(a.name.split(".")[:2])
                for a in node.names
                if a.name.startswith("bench_shared.")
            )
    return found


def shared_problems(mapped):
    modules = {
        "bench_shared" + ("" if p.stem == "__init__" else "." + p.stem): p
        for p in SHARED.glob("*.py")
    }
    problems = [f"{m}: not in the table" for m in sorted(set(modules) - set(mapped))]
    problems += [
        f"{m}: in the table, not in bench_shared" for m in sorted(set(mapped) - set(modules))
    ]
    for module, path in sorted(modules.items()):
        if module not in mapped:
            continue
        here = SHARED_LAYERS.index(mapped[module])
        problems += [
            f"{module} ({mapped[module]}) imports {target} ({mapped[target]})"
            for target in sorted(shared_imports(path) - {module})
            if target in mapped and SHARED_LAYERS.index(mapped[target]) > here
        ]
    return problems


def test_the_runtime_map_lists_every_module_and_its_imports_go_down():
    assert shared_problems(shared_map(ARCHITECTURE.read_text())) == []


def test_the_runtime_map_check_sees_a_missing_module_and_an_upward_import():
    text = ARCHITECTURE.read_text()
    missing = shared_problems(shared_map(text.replace("`timing.py`, ", "")))
    assert "bench_shared.timing: not in the table" in missing
    moved = text.replace("| top | `worker.py`, ", "| top | ").replace(
        "| base | `__init__.py`, ", "| base | `__init__.py`, `worker.py`, "
    )
    upward = shared_problems(shared_map(moved))
    assert any(p.startswith("bench_shared.worker (base) imports") for p in upward), upward


LONGEST_FUNCTION = 80  # lines; past it a function holds more than one step: name the steps


def long_functions(paths):
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST_FUNCTION:
                    found.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_of_the_orchestrator_or_the_runtime_is_over_80_lines():
    assert long_functions([*BENCH.rglob("*.py"), *SHARED.glob("*.py")]) == []


def test_the_length_check_sees_a_long_function(tmp_path):
    long = tmp_path / "long.py"
    long.write_text("def f():\n" + "    x = 1\n" * LONGEST_FUNCTION)
    assert long_functions([long]) == [f"long.py:1 f ({LONGEST_FUNCTION + 1} lines)"]
