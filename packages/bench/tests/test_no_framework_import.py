"""The orchestrator never imports a framework: compose, validate and discover in a fresh
interpreter, then look at sys.modules."""

import subprocess
import sys

from bench.run import capabilities

# every framework module a conf/framework/*.yaml names (`module`), and GPU array libraries
FRAMEWORK_MODULES = sorted(
    {capabilities.declared(name)["module"].split(".")[0] for name in capabilities.framework_names()}
    | {"cupy", "jax"}
)

SCRIPT = """
import sys
FRAMEWORK_MODULES = set(sys.argv[1:])
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
import bench
from bench_shared import spec
from bench.run import benchmark, capabilities, config, environments
config.register()
for name in capabilities.framework_names():
    for task in spec.TASKS:
        with initialize_config_dir(config_dir=str(bench.conf_dir()), version_base="1.3"):
            cfg = OmegaConf.to_object(compose(config_name="config",
                                              overrides=[f"framework={name}", f"task={task}"]))
        try:
            capabilities.check(cfg)
        except bench.errors.UnsupportedError:  # a task it does not declare (an inference
            continue                            # runtime's cnn): refused, nothing imported
        benchmark.effective_task(cfg)
        try:
            environments.framework_python(cfg.framework)
        except bench.errors.EnvironmentNotFound:
            pass
print(sorted(m for m in sys.modules if m.split(".")[0] in FRAMEWORK_MODULES))
"""


def test_orchestrator_imports_no_framework():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *FRAMEWORK_MODULES],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
