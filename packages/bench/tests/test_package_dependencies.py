"""Every project package imports only the project packages its metadata declares (a dependency
or an extra), and they depend one way: no cycle (read with ast and the metadata files: no
package need be installed here)."""

import ast
import configparser
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[3]


def metadata(directory: Path):
    """(distribution name, import packages, {declared distribution: where}) of one package,
    from pyproject.toml's [project] or, for the Python 3.6 packages, setup.cfg; None when the
    directory is no Python package (packages/r)."""
    pyproject = directory / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text()).get("project") if pyproject.is_file() else None
    if project:
        tool = tomllib.loads(pyproject.read_text())["tool"]["setuptools"]
        requirements = {name: "dependencies" for name in map(_name, project["dependencies"])}
        for extra, names in project.get("optional-dependencies", {}).items():
            requirements.update({_name(n): f"extra [{extra}]" for n in names})
        return project["name"], tool["packages"], requirements
    setup_cfg = directory / "setup.cfg"
    if not setup_cfg.is_file():
        return None
    cfg = configparser.ConfigParser()
    cfg.read(setup_cfg)
    requirements = {
        _name(n): "install_requires"
        for n in cfg["options"]["install_requires"].split("\n")
        if n.strip()
    }
    if cfg.has_section("options.extras_require"):
        for extra, names in cfg["options.extras_require"].items():
            requirements.update(
                {_name(n): f"extra [{extra}]" for n in names.split("\n") if n.strip()}
            )
    return cfg["metadata"]["name"], cfg["options"]["packages"].split(), requirements


def _name(requirement: str) -> str:
    """'keras>=3' -> 'keras'; 'bench-keras[tensorflow]' -> 'bench-keras'."""
    for stop in "<>=!~[; ":
        requirement = requirement.split(stop)[0]
    return requirement.strip().lower().replace("_", "-")


def project_imports(package_dir: Path):
    """{distribution: first file importing it} for the project packages (bench, bench_*) the
    package's code imports (its tests aside: they run with the session's packages)."""
    found = {}
    for path in sorted(package_dir.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if top == "bench" or top.startswith("bench_"):
                    found.setdefault(top.replace("_", "-"), path.name)
    return found


PACKAGES = {
    d.name: m
    for d in [ROOT / "shared", *sorted((ROOT / "packages").iterdir())]
    if d.is_dir() and (m := metadata(d))
}


@pytest.mark.parametrize("directory", sorted(PACKAGES))
def test_a_package_imports_only_what_it_declares(directory):
    name, packages, declared = PACKAGES[directory]
    folder = ROOT / ("shared" if directory == "shared" else f"packages/{directory}")
    used = {}
    for package in packages:
        used.update(project_imports(folder / package.replace(".", "/")))
    undeclared = {
        dist: str(where) for dist, where in used.items() if dist != name and dist not in declared
    }
    assert undeclared == {}, f"{name} imports packages its metadata does not declare"


def test_project_packages_depend_one_way():
    names = {name for name, _, _ in PACKAGES.values()}
    graph = {name: {d for d in declared if d in names} for name, _, declared in PACKAGES.values()}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [node, nxt])
            elif nxt not in state:
                visit(nxt, stack + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == [], cycles


def test_the_checker_reads_imports_and_extras(tmp_path):
    """It can fail: an import of an undeclared package is found, an extra counts as declared."""
    package = tmp_path / "demo"
    (package / "bench_demo").mkdir(parents=True)
    (package / "bench_demo" / "a.py").write_text("def f():\n    from bench_cntk import x\n")
    (package / "pyproject.toml").write_text(
        '[project]\nname = "bench-demo"\ndependencies = ["bench-shared"]\n'
        '[project.optional-dependencies]\nlasagne = ["bench-lasagne>=0.1"]\n'
        '[tool.setuptools]\npackages = ["bench_demo"]\n'
    )
    name, packages, declared = metadata(package)
    assert (name, packages) == ("bench-demo", ["bench_demo"])
    assert declared == {"bench-shared": "dependencies", "bench-lasagne": "extra [lasagne]"}
    assert set(project_imports(package / "bench_demo")) == {"bench-cntk"}
