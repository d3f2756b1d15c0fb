"""The shared end-to-end suite: `python -m bench framework=<fw> task=<task> preset=smoke` for
every task a framework declares, through real workers in that framework's own environment (as
a user runs it), learning the synthetic data. With shared/tests/test_conformance.py (the same
maths as the NumPy reference, in-process) this is what every framework must pass; a package's
own tests keep only what is specific to it.

It runs for the frameworks named in BENCH_E2E_FRAMEWORKS (each framework's nox session sets
it; see noxfile.py's table) and is skipped without it. A framework too slow for the smoke
preset on a CPU declares smaller sizes for a task in its YAML (`test_overrides`, e.g. Chainer's
NumPy CNN); its learning is then not asserted there (Chainer's: by chainer_ideep, the same
code)."""
import math
import os

import pytest

from bench import capabilities
from bench_shared import spec

SELECTED = [n for n in os.environ.get("BENCH_E2E_FRAMEWORKS", "").split(",") if n]
FLOORS = {"cnn": 0.5, "rnn": 0.65}  # test accuracy after the smoke preset; chance 0.1, 0.5
CASES = [(name, task) for name in SELECTED
         for task in spec.TASKS if task in capabilities.declared(name)["capabilities"]["tasks"]]


@pytest.mark.skipif(not SELECTED, reason="set BENCH_E2E_FRAMEWORKS=<framework,...> (a nox "
                    "framework session does) to run the shared end-to-end suite")
@pytest.mark.parametrize("name,task", CASES or [("none", "none")])
def test_smoke_run_learns_and_reports(run_bench, name, task):
    overrides = capabilities.declared(name).get("test_overrides", {}).get(task, [])
    code, output, result = run_bench(f"framework={name}", f"task={task}", "preset=smoke",
                                     *overrides)
    assert code == 0, output
    assert result["status"] == "ok"
    assert result["param_count"] == spec.TASKS[task].param_count
    assert result["framework"]["versions"] and result["framework"]["settings"]
    assert result["worker"]["found_by"]
    assert f"{name} {task} cpu fp32 preset=smoke: " in output
    # every on/off switch the config asked for (conf/task_framework tweaks included) was applied
    settings = result["framework"]["settings"]
    for option, value in result["config"]["framework"]["options"].items():
        if isinstance(value, bool) and option in settings:
            assert settings[option] is value, (option, settings[option], value)
    stats = result["stats"]
    if result.get("peak_flops"):
        assert 0 < stats["utilisation"] < 1.5
    if spec.TASKS[task].kind == "inference":
        assert result["features"]["finite"] and result["features"]["std"] > 0
        assert stats["seconds_per_1000_images"] > 0
        return
    assert stats["examples_per_second"] > 0
    assert all(math.isfinite(loss) for loss in result["losses"])
    if not overrides:
        assert result["accuracy"] > FLOORS[task], result["accuracy"]
        assert result["losses"][-1] < result["losses"][0]
