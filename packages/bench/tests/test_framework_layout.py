"""Every framework package has the same task modules with the same functions in the same
order (read with ast: the frameworks need not be importable here)."""
import ast
import re
from pathlib import Path

import pytest

from bench import capabilities
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
    if declared.get("r_models"):  # written in R: <task>.R, then what common.R shares
        folder = ROOT / "packages" / "r" / declared["r_models"]
        for task in declared["capabilities"]["tasks"]:
            names = r_defined_names(folder / f"{task}.R") + r_defined_names(folder / "common.R")
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
