"""`python -m bench framework=paddle ...` end to end, what is Paddle's own: the to_static
switch through a real worker, whose log stays free of Paddle's import and executor chatter
(conf/framework/paddle.yaml's env). Learning, ResNet-50 and SPEC's counts are the shared
end-to-end suite's (packages/bench/tests_frameworks)."""

import re
from pathlib import Path

CHATTER = [
    "No ccache found",
    "Tensor do not have 'place'",
    "New Executor is Running",
    "OMP_NUM_THREADS set to",
    "not support input out tensor",
]


def worker_log(output):
    (run_dir,) = re.findall(r"^result: (.+)/result\.json$", output, re.M)
    return (Path(run_dir) / "worker.log").read_text()


def test_to_static_rnn_runs_in_a_quiet_worker(run_bench):
    code, output, result = run_bench(
        "framework=paddle",
        "task=rnn",
        "preset=smoke",
        "preset.epochs=1",
        "framework.options.to_static=true",
    )
    assert code == 0, output
    settings = result["framework"]["settings"]
    assert settings["to_static"] is True and settings["device"] == "cpu"
    assert settings["threads"] >= 1 and settings["openmp_max_threads"] == settings["threads"]
    assert result["framework"]["versions"]["paddle"].startswith("3.")
    noisy = [line for line in worker_log(output).splitlines() if any(c in line for c in CHATTER)]
    assert not noisy, noisy
