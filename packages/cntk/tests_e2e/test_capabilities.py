"""bench_cntk declares what conf/framework/cntk.yaml declares (read without cntk), asked in
the Python 3.6 environment the orchestrator discovers, with its library path."""
import json
import os
import subprocess

from conftest import make_run

from bench import app, capabilities, config, environments
from bench.config import FrameworkConfig


def cntk_framework():
    declared = capabilities.declared("cntk")
    fields = {k: declared[k] for k in ("name", "display_name", "package", "module",
                                       "nox_session", "library_path")}
    return FrameworkConfig(**fields)


def test_capabilities_agree_with_the_config_file():
    declared = capabilities.declared("cntk")
    assert declared["package"] == "bench_cntk" and declared["module"] == "cntk"
    fw = cntk_framework()
    python, _ = environments.find_python(fw)
    env = app.worker_environment(config.Config(framework=fw), python)
    out = subprocess.run(
        [python, "-W", "ignore", "-c", "import bench_cntk, json; "
         "print(json.dumps([bench_cntk.CAPABILITIES, list(bench_cntk.OPTIONS)]))"],
        env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    caps, options = json.loads(out.stdout.strip().splitlines()[-1])
    assert caps == declared["capabilities"]
    assert set(options) == set(declared["options"])
    assert env["LD_LIBRARY_PATH"].split(os.pathsep)[0] == os.path.join(
        os.path.dirname(os.path.dirname(python)), "lib", "bench-mpi-shim")


def test_the_run_dict_has_the_options():
    run = make_run("task=cnn")
    assert run["framework"]["options"] == {"threads": 0}
