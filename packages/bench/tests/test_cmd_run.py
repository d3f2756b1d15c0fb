"""End to end through `python -m bench` in a subprocess, with real worker processes."""

import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from bench_shared import weights

FAST = ["framework=fake", "preset=smoke"]


def test_training_run_writes_a_complete_result(run_bench):
    run = run_bench(*FAST, "task=cnn")
    assert run.returncode == 0, run.output
    r = run.result
    assert r["status"] == "ok"
    assert r["config"]["task"]["name"] == "cnn" and r["config"]["preset"]["name"] == "smoke"
    preset = r["config"]["preset"]
    epochs, examples = preset["epochs"], preset["train_examples"]
    assert r["effective_task"]["epochs"] == epochs != 10  # the preset's, not SPEC's 10
    assert r["train_examples"] == examples and r["test_examples"] == preset["test_examples"]
    assert r["batches_per_epoch"] == examples // 64
    assert len(r["timings"]["epoch"]) == epochs and len(r["losses"]) == epochs
    assert [len(b) for b in r["batch_seconds"]] == [examples // 64] * epochs
    for key in ("build", "first_step", "data_load", "evaluation"):
        assert key in r["timings"], key
    assert r["timings"]["first_step"] <= r["timings"]["epoch"][0]
    s = r["stats"]
    assert s["train_seconds"] == sum(r["timings"]["epoch"])
    assert s["first_epoch_seconds"] == r["timings"]["epoch"][0]
    assert s["examples_per_second"] == examples // 64 * 64 / s["steady_epoch_seconds"]
    assert r["param_count"] == 3 * 32 * 32 * 10 + 10
    assert r["worker"]["found_by"] == "current interpreter"
    host = r["host"]
    assert host["cpu_count"] >= 1 and host["cpu"] and "environment_variables" in host
    assert r["framework"]["versions"] == {"fake": "0.0"}
    assert r["peak_rss_bytes"] > 10 * 2**20
    assert "torch cnn" not in run.output and "fake cnn cpu fp32 preset=smoke: train" in run.output
    assert (run.result_paths[0].parent / "run.json").is_file()
    assert (run.result_paths[0].parent / "worker.log").is_file()


def test_learning_model_beats_chance_and_a_frozen_one_does_not(run_bench):
    learned = run_bench(*FAST, "task=cnn").result["accuracy"]
    frozen = run_bench(*FAST, "task=cnn", "framework.options.lr=0.0").result["accuracy"]
    assert learned > 0.5, learned  # 10 classes: chance is 0.1
    assert 0.05 < frozen < 0.16, frozen
    learned = run_bench(*FAST, "task=rnn").result["accuracy"]
    frozen = run_bench(*FAST, "task=rnn", "framework.options.lr=0.0").result["accuracy"]
    assert learned > 0.7, learned  # 2 classes: chance is 0.5
    assert 0.4 < frozen < 0.6, frozen


def test_inference_run(run_bench):
    run = run_bench(*FAST, "task=resnet50")
    assert run.returncode == 0, run.output
    r = run.result
    assert r["images"] == 32 and r["effective_task"]["num_batches"] == 1
    assert len(r["timings"]["warmup"]) == 1 and len(r["timings"]["inference"]) == 1
    s = r["stats"]
    assert s["seconds_per_1000_images"] == r["timings"]["inference"][0] / 32 * 1000
    assert "s per 1000 images" in run.output


def test_crashing_worker_gives_failed_result_with_its_stderr(run_bench):
    run = run_bench(*FAST, "framework.options.fault=crash")
    assert run.returncode == 1
    r = run.result
    assert r["status"] == "failed"
    assert "fake crash requested" in r["error"]
    assert any("about to crash on purpose" in line for line in r["output_tail"])
    assert "FAILED" in run.output


def test_worker_exiting_or_killed_without_result_is_failed(run_bench):
    run = run_bench(*FAST, "framework.options.fault=exit")
    assert run.returncode == 1
    assert run.result["error"] == "worker exited with status 7 without writing a result"
    assert "fake: exiting without a result" in run.result["output_tail"]
    run = run_bench(*FAST, "framework.options.fault=kill")
    assert run.returncode == 1
    assert run.result["error"] == "worker died with signal 9"


def test_hanging_worker_is_killed_at_the_timeout(run_bench):
    run = run_bench(*FAST, "framework.options.fault=hang", "preset.timeout_s=3", timeout=120)
    assert run.returncode == 1
    assert run.result["status"] == "failed"
    assert run.result["error"] == "worker timed out after 3 s and was killed"
    assert "fake: hanging" in run.result["output_tail"]


def test_framework_saying_unsupported(run_bench):
    run = run_bench(*FAST, "framework.options.fault=unsupported")
    assert run.returncode == 2
    assert run.result["status"] == "unsupported"
    assert "not supported by fake 0.0" in run.result["error"]


def test_multirun_writes_one_result_per_job_and_goes_on_after_failures(run_bench):
    run = run_bench("-m", *FAST, "task=cnn,rnn", "framework.options.fault=none,crash")
    assert run.returncode == 1
    assert len(run.result_paths) == 4
    statuses = sorted(json.loads(p.read_text())["status"] for p in run.result_paths)
    assert statuses == ["failed", "failed", "ok", "ok"]
    assert len({p.parent for p in run.result_paths}) == 4


def test_progress_is_plain_lines_when_not_a_terminal(run_bench):
    run = run_bench(*FAST, "task=cnn")
    assert "train epoch 1/3: " in run.output and "loss" in run.output
    assert "\r" not in run.output  # no carriage-return bar redraws in logs


def test_init_is_recorded_and_neutral_needs_the_weight_protocol(run_bench):
    native = run_bench(*FAST, "task=rnn")
    assert native.returncode == 0, native.output
    assert native.result["config"]["init"]["name"] == "native"
    assert native.result["init"] == "native" and "init" not in native.result["timings"]
    # the fake framework's models are not SPEC's: no slots, no tensors, so no neutral weights
    neutral = run_bench(*FAST, "task=rnn", "init=neutral")
    assert neutral.returncode == 1
    r = neutral.result
    assert (r["status"], r["config"]["init"]["name"]) == ("failed", "neutral")
    assert (
        "init=neutral loads weights through the weight protocol, which fake lacks "
        "(bench_fake.tensors, bench_fake.rnn.slots)"
    ) in r["error"]
    bad = run_bench(*FAST, "init=random")
    assert bad.returncode != 0 and "init" in bad.output


def test_init_file_needs_a_path_to_a_file(run_bench, tmp_path):
    no_path = run_bench(*FAST, "task=rnn", "init=file")
    assert no_path.returncode == 1 and "give init.path=" in no_path.result["error"]
    absent = run_bench(*FAST, "task=rnn", "init=file", f"init.path={tmp_path / 'none.npz'}")
    assert absent.returncode == 1 and "none.npz: no such file" in absent.result["error"]


def init_file_with_a_large_unknown_member(path, mib):
    """cnn's neutral weights and `junk`, mib MiB of zeros declared as one float32 array: the
    file is small (zeros compress), reading the member is not."""
    count = mib * (1 << 20) // 4
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, value in weights.initial_weights("cnn", 0).items():
            with archive.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, value)
        with archive.open("junk.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(
                member, {"descr": "<f4", "fortran_order": False, "shape": (count,)}
            )
            zeros = bytes(16 << 20)
            for _ in range(mib // 16):
                member.write(zeros)


def test_init_file_reads_the_names_before_any_array(bench_env, tmp_path):
    """A member the layout does not name is refused before a byte of it is decompressed:
    the orchestrator's peak memory stays far below the member's size."""
    path = tmp_path / "weights.npz"
    init_file_with_a_large_unknown_member(path, mib=256)
    assert path.stat().st_size < 32 << 20
    # an intermediary whose only child is the orchestrator: its children's peak is that one's
    measure = (
        "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
        "print('peak KiB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "sys.exit(code)"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            measure,
            sys.executable,
            "-m",
            "bench",
            *FAST,
            "task=cnn",
            "init=file",
            f"init.path={path}",
        ],
        cwd=tmp_path,
        env=bench_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in output, output
    result = json.loads(open(output.split("result: ")[1].split()[0]).read())
    assert result["error"] == (
        f"init=file: {path}: 1 weights are not in cnn's neutral layout, "
        f"e.g. ['junk'] (see bench_shared.weights.layout)"
    )
    assert "worker" not in result  # refused before a worker started
    peak_mib = int(output.split("peak KiB ")[1].split()[0]) / 1024
    assert peak_mib < 192, f"the orchestrator peaked at {peak_mib:.0f} MiB"


@pytest.mark.parametrize("damage", ["a text file", "NaN", "infinity", "int64"])
def test_init_file_is_refused_up_front_in_one_line(run_bench, tmp_path, damage):
    path = tmp_path / "weights.npz"
    given = weights.initial_weights("cnn", 0)
    if damage == "a text file":
        path = tmp_path / "weights.txt"
        path.write_text("conv1.weight 0.1 0.2\n")
        says = (
            f"init=file: {path} is not a weights .npz (File is not a zip file): init=file "
            f"takes an .npz of arrays in the neutral layout"
        )
    elif damage == "int64":
        given["dense2.bias"] = np.zeros(given["dense2.bias"].shape, np.int64)
        says = (
            f"init=file: {path}: dense2.bias holds int64 values; weights are floating "
            f"point (float32)"
        )
    else:
        given["conv2.weight"].flat[[3, 7]] = np.nan if damage == "NaN" else np.inf
        says = (
            f"init=file: {path}: conv2.weight has 2 non-finite values (NaN or infinity) "
            f"among {given['conv2.weight'].size}; initial weights must be finite"
        )
    if damage != "a text file":
        np.savez(path, **given)
    run = run_bench(*FAST, "task=cnn", "init=file", f"init.path={path}")
    assert run.returncode == 1 and "Traceback" not in run.output, run.output
    assert run.result["error"].startswith(says), run.result["error"]
    assert "worker" not in run.result and "data" not in run.result  # before data and workers


def test_a_row_that_is_not_installed_is_refused_not_failed(run_bench):
    run = run_bench("framework=torch", "preset=smoke", "task=cnn")
    assert run.returncode == 2, run.output
    result = run.result
    assert result["status"] == "not_installed" and "nox -s torch" in result["error"]
    assert "NOT_INSTALLED" in run.output and "exit_code" not in result
