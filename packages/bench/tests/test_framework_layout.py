"""Every framework package has the same task modules with the same functions in the same
order (read with ast: the frameworks need not be importable here)."""

import ast
import re
from pathlib import Path

import pytest

from bench.run import capabilities
from bench_shared import contract, spec

ROOT = Path(__file__).resolve().parents[3]


def defined_names(path):
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return names


def r_defined_names(path):
    """`name <- function(...)` / `name <- other` at the top level of an R file."""
    return re.findall(r"^([A-Za-z_][\w.]*) <- ", path.read_text(), re.M) if path.is_file() else []


@pytest.mark.parametrize("framework", capabilities.framework_names())
def test_task_modules_follow_the_contract(framework):
    declared = capabilities.declared(framework)
    if declared.get("r_models"):  # written in R: <task>.R, then what loop.R shares
        folder = ROOT / "packages" / "r" / declared["r_models"]
        for task in declared["capabilities"]["tasks"]:
            names = r_defined_names(folder / f"{task}.R") + r_defined_names(folder / "loop.R")
            expected = list(contract.TASK_FUNCTIONS[spec.TASKS[task].kind])
            assert [n for n in names if n in expected] == expected, (framework, task, names)
        return
    package = declared["package"].replace(".", "/")  # e.g. bench_mxnet.gluon: a subpackage
    package_dirs = list(ROOT.glob(f"packages/*/{package}"))
    assert len(package_dirs) == 1, f"packages/*/{package} not found"
    for task in declared["capabilities"]["tasks"]:
        names = defined_names(package_dirs[0] / f"{task}.py")
        expected = list(contract.TASK_FUNCTIONS[spec.TASKS[task].kind])
        assert [n for n in names if n in expected] == expected, (framework, task, names)
        # the weight protocol is the runtime's: no package writes its own loading loop
        assert not {"load_weights", "export_weights"} & set(names), (framework, task, names)


def imported_names(path):
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [alias.asname or alias.name.split(".")[0] for alias in node.names]
    return names


PACKAGE_ORDER = [*contract.PACKAGE_FUNCTIONS, "peak_flops"]  # the contract's, then its hook


@pytest.mark.parametrize(
    "package",
    sorted(
        {
            capabilities.declared(f)["package"]
            for f in capabilities.framework_names()
            if not capabilities.declared(f).get("r_models")
        }
    ),
)
def test_package_init_has_the_contract_s_functions_in_order(package):
    """`bench_<fw>/__init__.py`: the contract's functions, defined there or imported from the
    module that holds them, and those defined there in one order in every package."""
    (init,) = ROOT.glob(f"packages/*/{package.replace('.', '/')}/__init__.py")
    defined = defined_names(init)
    present = set(defined) | set(imported_names(init))
    assert [n for n in contract.PACKAGE_FUNCTIONS if n not in present] == [], package
    order = [n for n in defined if n in PACKAGE_ORDER]
    assert order == sorted(order, key=PACKAGE_ORDER.index), (package, order)


# The modules a framework package may have: the contract's, then one naming scheme for what a
# package needs beyond it (docs/architecture.md, "The framework packages"); an API variant is
# a subpackage with the same layout (bench_mxnet.gluon, bench_mxnet.module)
CONTRACT_MODULES = {"__init__", "loop", "weights", *spec.TASKS}
SCHEME = {
    "runtime",
    "initialisers",
    "distribute",
    "pipeline",
    "optimizers",
    "layers",
    "compat",
    "mpi_shim",
}
SCHEME_PATTERNS = (re.compile(r"backend_[a-z]+"),)


def off_scheme(package_dir):
    """The modules of a framework package whose names follow neither the contract nor the
    scheme, as paths relative to the package."""
    return sorted(
        str(path.relative_to(package_dir))
        for path in package_dir.rglob("*.py")
        if path.stem not in CONTRACT_MODULES | SCHEME
        and not any(p.fullmatch(path.stem) for p in SCHEME_PATTERNS)
    )


@pytest.mark.parametrize(
    "package_dir", sorted(ROOT.glob("packages/*/bench_*")), ids=lambda p: p.name
)
def test_package_modules_follow_one_naming_scheme(package_dir):
    assert off_scheme(package_dir) == []


def test_the_naming_check_sees_a_module_off_the_scheme(tmp_path):
    for name in ("__init__", "cnn", "init", "backend_jax", "helpers"):
        (tmp_path / f"{name}.py").write_text("")
    assert off_scheme(tmp_path) == ["helpers.py", "init.py"]
