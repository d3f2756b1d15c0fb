"""`python -m bench framework=cntk ...` from the orchestrator's interpreter, what is CNTK's own:
a Python 3.6 worker with the MPI shim on its library path, and the error that names the fix
without it. Learning, ResNet-50 and SPEC's counts are the shared end-to-end suite's (the
cntk_e2e session runs it for framework=cntk)."""


def test_the_worker_is_python36_with_the_mpi_shim(run_bench):
    code, output, result = run_bench(
        "framework=cntk",
        "task=rnn",
        "preset=smoke",
        "preset.epochs=1",
        "preset.train_examples=256",
        "preset.test_examples=128",
    )
    assert code == 0, output
    assert result["python"].startswith("3.6.")
    assert result["worker"]["found_by"] == "nox session cntk"
    assert result["worker"]["library_path"][0].endswith("/lib/bench-mpi-shim")
    assert result["framework"]["versions"]["cntk"] == "2.7"
    assert result["framework"]["versions"]["devices"] == ["cpu"]
    assert result["framework"]["settings"]["threads"] == 1  # conf/task_framework/rnn_cntk.yaml


def test_without_the_mpi_shim_the_error_names_the_fix(run_bench):
    code, output, result = run_bench(
        "framework=cntk", "task=cnn", "preset=smoke", "framework.library_path=[]"
    )
    assert code == 1, output
    assert "libmpi" in result["error"] and "apt-get install libopenmpi3" in result["error"]
    assert "python -m bench_cntk.mpi_shim" in result["error"]
