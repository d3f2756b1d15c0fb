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

from bench.run import capabilities, system
from bench_shared import spec

SELECTED = [n for n in os.environ.get("BENCH_E2E_FRAMEWORKS", "").split(",") if n]
# test accuracy after the smoke preset (chance 0.1, 0.5); densenet: mean ROC-AUC (chance 0.5;
# a model that learns nothing lands within ~0.02 of it on 256 test images x 14 labels)
FLOORS = {"cnn": 0.5, "rnn": 0.65, "densenet": 0.55}
# Test-only sizes, the same code paths. DenseNet-121 at SPEC's 224 x 224 takes seconds per step
# on a CPU: every framework's end-to-end runs use 32 x 32 crops, 512 images, two epochs.
# ResNet-50: one batch of 16 images, not 64 (it checks the features, not the speed).
# CNN and GRU: 32 steps in two epochs, which learn the synthetic data (bench/data/synthetic.py)
TASK_SIZES = {
    "densenet": [
        "task.image_size=32",
        "task.batch_size=16",
        "preset.train_examples=512",
        "preset.test_examples=256",
        "preset.epochs=2",
    ],
    "resnet50": ["task.batch_size=16"],
    "cnn": ["preset.train_examples=1024", "preset.epochs=2"],
    "rnn": ["preset.train_examples=1024", "preset.epochs=2"],
}
DATA_PARALLEL = [
    name
    for name in SELECTED
    if "densenet" in capabilities.declared(name)["capabilities"]["tasks"]
    and "cpu" in (capabilities.declared(name)["capabilities"].get("data_parallel") or {})
]


def marks(name, task, test):
    """`slow` where conf/framework/<name>.yaml lists this test of this task among its slow ones
    (`slow_tests`, `all` for every one): the `<env>_extended` session runs those."""
    listed = (capabilities.declared(name).get("slow_tests") or {}).get(task) or []
    return [pytest.mark.slow] if "all" in listed or test in listed else []


# one DenseNet run per framework: on two devices where it trains data-parallel on a CPU (the
# one-device code is the same step; the conformance suite checks it against the reference)
CASES = [
    pytest.param(name, task, marks=marks(name, task, "smoke_run"))
    for name in SELECTED
    for task in spec.TASKS
    if task in capabilities.declared(name)["capabilities"]["tasks"]
    and not (task == "densenet" and name in DATA_PARALLEL)
]


@pytest.mark.skipif(
    not SELECTED,
    reason="set BENCH_E2E_FRAMEWORKS=<framework,...> (a nox "
    "framework session does) to run the shared end-to-end suite",
)
@pytest.mark.parametrize("name,task", CASES or [("none", "none")])
def test_smoke_run_learns_and_reports(run_bench, name, task):
    overrides = capabilities.declared(name).get("test_overrides", {}).get(task, [])
    code, output, result = run_bench(
        f"framework={name}", f"task={task}", "preset=smoke", *TASK_SIZES.get(task, []), *overrides
    )
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
    if result.get("peak_flops"):  # of the framework's own GEMM peak: more than 1 on a loaded
        # machine is noise, ten times the best matrix product a wrong FLOP count
        assert 0 < stats["utilisation"] < 10
    if spec.TASKS[task].kind == "inference":
        assert result["features"]["finite"] and result["features"]["std"] > 0
        assert stats["seconds_per_1000_images"] > 0
        return
    assert stats["examples_per_second"] > 0
    assert all(math.isfinite(loss) for loss in result["losses"])
    if not overrides:
        assert result["accuracy"] > FLOORS[task], result["accuracy"]
        assert result["losses"][-1] < result["losses"][0]


@pytest.mark.skipif(
    not DATA_PARALLEL, reason="no selected framework declares data-parallel training on a CPU"
)
@pytest.mark.parametrize(
    "name",
    [pytest.param(name, marks=marks(name, "densenet", "two_processes")) for name in DATA_PARALLEL]
    or ["none"],
)
def test_two_processes_train_densenet_as_one_run(run_bench, name):
    """devices=2 on a CPU, launched as the framework declares: two workers, each on its share
    of the cores, or one driving both devices (one_process), joined by the framework's own
    data-parallel idiom; one result that learns (at the framework's test_overrides sizes, where
    it declares them: the path runs, learning is not asserted)."""
    missing = [
        system.missing(dep)
        for dep, when in (capabilities.declared(name).get("system") or {}).items()
        if when == "devices"
    ]
    if any(missing):  # e.g. Open MPI for mpiexec's ranks: the line that installs it
        pytest.skip("; ".join(filter(None, missing)))
    overrides = capabilities.declared(name).get("test_overrides", {}).get("densenet", [])
    code, output, result = run_bench(
        f"framework={name}",
        "task=densenet",
        "devices=2",
        "preset=smoke",
        *TASK_SIZES["densenet"],
        *overrides,
    )
    assert code == 0, output
    assert result["status"] == "ok"
    assert result["param_count"] == spec.TASKS["densenet"].param_count
    assert all(math.isfinite(loss) for loss in result["losses"])
    assert result["distributed"]["world_size"] == 2
    launch = (capabilities.declared(name)["capabilities"].get("data_parallel_launch") or {}).get(
        "cpu", "processes"
    )
    assert result["distributed"]["launch"] == launch
    if launch == "one_process":  # one worker drives both devices, on global batches
        assert "ranks" not in result and result["distributed"]["processes"] == 1
    else:
        assert len(result["ranks"]) == 2
        assert all(r["status"] == "ok" and r["exit_code"] == 0 for r in result["ranks"])
        shares = [set(r["cpus"]) for r in result["ranks"]]  # each its own, equal share
        assert len(shares[0]) == len(shares[1]) > 0 and not shares[0] & shares[1]
    if not overrides:
        assert result["accuracy"] > FLOORS["densenet"], result["accuracy"]
