"""Results you can trust, through `python -m bench` in subprocesses: the README's commands as
written (relative paths), no two runs sharing a directory, SIGTERM and SIGKILL of the
orchestrator, runs whose loss became NaN or diverged, orchestrator errors, sizes checked
before a worker starts, sweep job directory names."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

FAST = ["framework=fake", "preset=smoke"]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="/proc and the parent-death signal are Linux's")


def strict_json(path):
    """A result file as strict JSON: a bare NaN or Infinity is an error."""
    def refuse(name):
        raise ValueError(f"{path}: {name} is not JSON")

    return json.loads(Path(path).read_text(), parse_constant=refuse)


def start(args, env, cwd):
    """`python -m bench` in a subprocess that a test can Ctrl-C: a shell's background job (CI)
    starts with SIGINT ignored, and Python keeps that unless it is restored."""
    return subprocess.Popen([sys.executable, "-m", "bench", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def read_until(proc, marker, lines, limit_s=120):
    """Read proc's output into lines until a line holds marker (or the output ends)."""
    timer = threading.Timer(limit_s, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line)
            if marker in line:
                return True
        return False
    finally:
        timer.cancel()


def children(pid):
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def gone(pid, within_s=10.0):
    """True once pid has exited (a zombie counts: it runs no more) within within_s."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


# 3: the README's verify command, without --out: a relative default directory
def test_verify_as_the_readme_writes_it_hands_the_worker_absolute_paths(bench_env, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bench", "verify", "--frameworks", "fake",
                           "--tasks", "cnn", "--steps", "0"], cwd=tmp_path, env=bench_env,
                          capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    (report,) = (tmp_path / "results" / "verify").glob("*/verify.json")
    (check,) = json.loads(report.read_text())
    # the worker found its run.json and the neutral weights, and got as far as the fake
    # framework, which has no weight slots (the real frameworks' sessions run verify fully)
    assert "No such file" not in output and "FileNotFoundError" not in output, output
    assert "slots" in check["detail"], check


@pytest.mark.parametrize("how", ["BENCH_CACHE_DIR", "data.cache_dir"])
def test_a_relative_cache_directory_is_the_one_the_command_started_in(run_bench, bench_env,
                                                                     how):
    if how == "BENCH_CACHE_DIR":
        run = run_bench(*FAST, "task=cnn", env=dict(bench_env, BENCH_CACHE_DIR="relcache"))
    else:
        run = run_bench(*FAST, "task=cnn", "data.cache_dir=relcache")
    assert run.returncode == 0, run.output  # the worker, in its run directory, found the arrays
    entry = Path(run.result["data"]["cache_entry"])
    assert entry.is_absolute() and entry.parent == run.cwd / "relcache" / "synthetic"
    assert all(Path(path).is_file() for path in run.result["data"]["arrays"].values())


# 4: no two runs share a directory
def test_runs_started_in_the_same_second_get_their_own_directories(bench_env, tmp_path):
    runs = tmp_path / "results" / "runs"
    runs.mkdir(parents=True)
    now = datetime.now()
    for second in range(90):  # another run in every second of the next minute and a half
        stamp = (now + timedelta(seconds=second)).strftime("%Y-%m-%d_%H-%M-%S")
        taken = runs / f"{stamp}_cnn_fake_cpu_fp32_smoke"
        taken.mkdir()
        (taken / "run.json").write_text("{}")
    procs = [start([*FAST, "task=cnn", f"seed={seed}"], bench_env, tmp_path) for seed in (1, 2)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    paths = [Path(re.search(r"^result: (.+)$", out, re.M).group(1)) for out in outputs]
    assert paths[0].parent != paths[1].parent
    for seed, path in zip((1, 2), paths):
        assert re.search(r"_smoke-[23]$", path.parent.name), path  # next to a taken name
        assert strict_json(path)["config"]["seed"] == seed
        assert json.loads((path.parent / "run.json").read_text())["seed"] == seed


def test_an_explicit_run_directory_is_not_reused(run_bench, tmp_path):
    first = run_bench(*FAST, "task=cnn", "hydra.run.dir=mine")
    assert first.returncode == 0, first.output
    stamp = (tmp_path / "mine" / "result.json").stat().st_mtime_ns
    second = run_bench(*FAST, "task=cnn", "hydra.run.dir=mine", "seed=5")
    assert second.returncode == 1, second.output
    assert f"bench: {tmp_path / 'mine'} already holds another run" in second.output
    assert (tmp_path / "mine" / "result.json").stat().st_mtime_ns == stamp
    assert strict_json(tmp_path / "mine" / "result.json")["config"]["seed"] == 0


def test_a_second_sweep_into_the_same_directory_waits_for_the_first(bench_env, tmp_path):
    first = start(["-m", *FAST, "task=cnn", "framework.options.fault=hang", "sweep=shared",
                   "preset.timeout_s=120"], bench_env, tmp_path)
    lines = []
    assert read_until(first, "fake: hanging", lines), "".join(lines)
    second = start(["-m", *FAST, "task=rnn", "sweep=shared"], bench_env, tmp_path)
    waiting = []
    assert read_until(second, "held by pid", waiting), "".join(waiting)
    assert f"pid {first.pid}" in "".join(waiting)
    assert not (tmp_path / "results" / "sweeps" / "shared" /
                "framework=fake,preset=smoke,task=rnn").exists()  # it waited
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    rest = second.communicate(timeout=300)[0]
    assert "fake rnn cpu fp32 preset=smoke: train" in rest, "".join(waiting) + rest
    # the sweep directory's status: the first sweep's job, cut by SIGTERM, is interrupted
    assert second.returncode == 1, "".join(waiting) + rest
    cut = strict_json(tmp_path / "results" / "sweeps" / "shared" /
                      "framework.options.fault=hang,framework=fake,preset.timeout_s=120,"
                      "preset=smoke,task=cnn" / "result.json")
    assert cut["error"] == "interrupted (SIGTERM); the worker was killed"


# 6: SIGTERM like Ctrl-C; a worker dies with its orchestrator
def start_hanging_worker(bench_env, tmp_path):
    """A run whose fake worker hangs: (orchestrator process, worker pid, output so far)."""
    proc = start([*FAST, "task=cnn", "framework.options.fault=hang"], bench_env, tmp_path)
    lines = []
    assert read_until(proc, "fake: hanging", lines), "".join(lines)
    (worker,) = children(proc.pid)
    return proc, worker, lines


@linux_only
def test_sigterm_records_the_run_and_kills_the_worker(bench_env, tmp_path):
    proc, worker, lines = start_hanging_worker(bench_env, tmp_path)
    proc.send_signal(signal.SIGTERM)
    output = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 143, output
    assert gone(worker)
    path = re.search(r"^result: (.+)$", output, re.M).group(1)
    result = strict_json(path)
    assert result["status"] == "interrupted" and result["interrupted"] == "SIGTERM"
    assert result["error"] == "interrupted (SIGTERM); the worker was killed"
    assert "interrupted (SIGTERM): finished results are kept" in output


@linux_only
def test_two_sigterms_15_ms_apart_still_record_the_interrupted_ranks(bench_env, tmp_path):
    """Slurm's time limit: SIGTERM twice, ~10 ms apart; the second lands in the cleanup the
    first began, which must still kill every rank and write a result naming them."""
    proc = start(["framework=fake", "devices=2", "task=densenet", "preset=smoke",
                  "task.image_size=32", "task.batch_size=16", "preset.train_examples=512",
                  "preset.test_examples=256", "framework.options.fault=hang",
                  "preset.timeout_s=300"], bench_env, tmp_path)
    lines = []
    assert read_until(proc, "fake: hanging", lines), "".join(lines)
    ranks = children(proc.pid)
    assert len(ranks) == 2, ranks
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.015)
    proc.send_signal(signal.SIGTERM)
    output = "".join(lines) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 143, output
    assert all(gone(pid) for pid in ranks)
    result = strict_json(re.search(r"^result: (.+)$", output, re.M).group(1))
    assert result["error"].startswith("interrupted (SIGTERM); the workers were killed"), output
    assert result["status"] == "interrupted" and result["interrupted"] == "SIGTERM"
    assert [r["rank"] for r in result["ranks"]] == [0, 1]
    assert all(r["exit_code"] == -signal.SIGKILL for r in result["ranks"]), result["ranks"]


@linux_only
def test_sigkill_of_the_orchestrator_takes_the_worker_with_it(bench_env, tmp_path):
    proc, worker, lines = start_hanging_worker(bench_env, tmp_path)
    proc.kill()
    proc.wait(timeout=30)
    try:
        assert gone(worker), f"worker {worker} still runs after its orchestrator was killed"
    finally:
        if not gone(worker, 0):
            os.kill(worker, signal.SIGKILL)


# 7: a loss that became NaN or diverged is no result
@pytest.mark.parametrize("task,lr,reason", [
    ("cnn", "nan", "the training loss became nan in epoch 1"),
    ("rnn", "-1e3", "the training loss diverged"),  # gradient ascent
])
def test_nan_or_diverged_loss_is_invalid(run_bench, task, lr, reason):
    run = run_bench(*FAST, f"task={task}", f"framework.options.lr={lr}")
    assert run.returncode == 1, run.output
    result = strict_json(run.result_paths[0])
    strict_json(run.result_paths[0].parent / "worker_result.json")
    assert result["status"] == "invalid"
    assert result["error"].startswith(reason), result["error"]
    assert result["stats"] == {}
    assert ": INVALID - " in run.output


def test_invalid_runs_are_flagged_in_the_summary_and_retried(run_bench):
    args = ["-m", *FAST, "task=cnn", "framework.options.lr=0.5,nan", "sweep=nan"]
    first = run_bench(*args)
    assert first.returncode == 1, first.output
    sweep_dir = first.cwd / "results" / "sweeps" / "nan"
    summary = (sweep_dir / "summary.md").read_text()
    assert "| invalid |" in summary.replace(" invalid |", "| invalid |").replace("|| ", "| ")
    rows = list((sweep_dir / "results.csv").read_text().splitlines())
    assert sum(",invalid," in row for row in rows) == 1
    again = run_bench(*args)
    assert "retrying: the stored result" in again.output and "is invalid" in again.output
    assert again.output.count("skipped, already ok") == 1


# 5: an orchestrator error is a failed result, and the sweep still ends with its summary
def test_orchestrator_error_in_a_sweep_is_a_failed_result_and_the_summary_is_written(
        run_bench, tmp_path):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    good = tmp_path / "cache"
    run = run_bench("-m", *FAST, "task=cnn", f"data.cache_dir={not_a_dir},{good}",
                    "sweep=errors")
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    results = [strict_json(p) for p in run.result_paths]
    assert sorted(r["status"] for r in results) == ["failed", "ok"]
    (failed,) = [r for r in results if r["status"] == "failed"]
    assert failed["error"].startswith("orchestrator error: "), failed["error"]
    assert str(not_a_dir) in failed["error"] and "Traceback" in failed["traceback"]
    sweep_dir = tmp_path / "results" / "sweeps" / "errors"
    assert (sweep_dir / "summary.md").is_file() and (sweep_dir / "results.csv").is_file()


def test_unwritable_results_directory_is_one_line(run_bench, tmp_path):
    (tmp_path / "results").write_text("not a directory")
    run = run_bench(*FAST, "task=cnn")
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output
    assert re.search(r"^bench: \w+Error: .*results", run.output, re.M), run.output


# 8: sizes checked before a worker starts
@pytest.mark.parametrize("override,message", [
    ("preset.epochs=0", "preset.epochs=0: must be 1 or more (null keeps the task's value)"),
    ("preset.train_examples=0", "preset.train_examples=0: must be 1 or more"),
    ("preset.test_examples=-5", "preset.test_examples=-5: must be 1 or more"),
    ("task.batch_size=0", "task.batch_size=0: must be 1 or more"),
    ("task.epochs=-1", "task.epochs=-1: must be 1 or more"),
    ("preset.timeout_s=0", "preset.timeout_s=0.0: must be more than 0 seconds"),
    ("preset.train_examples=10", "10 training examples make no complete batch of "
     "task.batch_size=64: raise preset.train_examples (now 10) or lower task.batch_size"),
])
def test_bad_sizes_are_refused_before_a_worker_starts(run_bench, override, message):
    run = run_bench(*FAST, "task=cnn", override)
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    result = strict_json(run.result_paths[0])
    assert result["status"] == "failed" and result["error"].startswith(message)
    assert not (run.result_paths[0].parent / "run.json").exists()  # no worker started


def test_bad_inference_sizes_are_refused(run_bench):
    run = run_bench(*FAST, "task=resnet50", "preset.inference_batches=0")
    assert run.returncode == 1, run.output
    assert run.result["error"].startswith("preset.inference_batches=0: must be 1 or more")


# 9: sweep job directories are safe and bounded
def test_sweep_job_directories_stay_inside_the_sweep_and_are_bounded(run_bench, tmp_path):
    hostile = "/../../../../escaped"
    long = [f"+framework.env.BENCH_X{i}={'v' * 30}" for i in range(12)]  # 500 characters
    run = run_bench("-m", *FAST, "task=cnn", f"task.description={hostile},plain", *long,
                    "sweep=names")
    assert run.returncode == 0, run.output
    sweep_dir = (tmp_path / "results" / "sweeps" / "names").resolve()
    assert not list(tmp_path.rglob("escaped*"))
    assert len(run.result_paths) == 2
    for path in run.result_paths:
        assert path.resolve().parent.parent == sweep_dir
        assert len(path.parent.name) <= 120 and "/" not in path.parent.name
    overrides = [strict_json(p)["overrides"] for p in run.result_paths]
    assert any(f"task.description={hostile}" in o for o in overrides)
    assert all(set(long) <= set(o) for o in overrides)  # every override, in full
    again = run_bench("-m", *FAST, "task=cnn", f"task.description={hostile},plain", *long,
                      "sweep=names")
    assert again.output.count("skipped, already ok") == 2, again.output


# 10, 11: untrusted archives whose checksum the user configured
class _Hostile:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def real_args(dataset, path, *extra):
    from archives import checksums

    sums = checksums(path)
    return [*FAST, "data=real", f"data.{dataset}.archive={path}", f"data.{dataset}.size=null",
            f"data.{dataset}.md5=null", f"data.{dataset}.sha256={sums['sha256']}", *extra]


def test_hostile_imdb_npz_runs_no_code(run_bench, tmp_path):
    from archives import imdb_archive

    raw = imdb_archive(tmp_path / "good.npz")
    raw["x_train"][3] = _Hostile()  # one review is an object whose unpickling runs a command
    np = pytest.importorskip("numpy")
    np.savez(tmp_path / "imdb.npz", **raw)
    run = run_bench(*real_args("imdb", tmp_path / "imdb.npz"), "task=rnn")
    assert not (run.cwd / "pwned").exists(), "unpickling imdb.npz ran a command"
    assert run.returncode == 1, run.output
    assert "is not a valid IMDB archive (UnpicklingError: unexpected object posix.system)" \
        in run.result["error"], run.result["error"]
    # the real layout (object arrays of lists of ints) still reads
    good = run_bench(*real_args("imdb", tmp_path / "good.npz"), "task=rnn")
    assert good.returncode == 0, good.output


@pytest.mark.parametrize("damage", ["flipped CRC byte", "cut trailer"])
def test_corrupt_gzip_is_refused_even_with_its_checksum_configured(run_bench, tmp_path, damage):
    from archives import cifar_archive

    path = tmp_path / "cifar-10-python.tar.gz"
    cifar_archive(path)
    data = bytearray(path.read_bytes())
    if damage == "flipped CRC byte":
        data[-6] ^= 0xFF  # the gzip trailer: CRC-32 then length
    else:
        del data[-8:]
    path.write_bytes(bytes(data))
    run = run_bench(*real_args("cifar10", path), "task=cnn", "task.batch_size=16")
    assert run.returncode == 1, run.output
    assert "is not a valid CIFAR-10 archive" in run.result["error"], run.result["error"]


# 12: smaller things
def test_local_archive_messages_name_the_option_used(run_bench, tmp_path):
    missing = tmp_path / "nowhere.tar.gz"
    run = run_bench(*FAST, "task=cnn", "data=real", f"data.cifar10.archive={missing}")
    assert run.result["error"].startswith(f"data.cifar10.archive={missing}: no such file")


def test_held_cache_lock_names_its_holder_and_times_out(run_bench, tmp_path, cache_dir):
    import fcntl

    from bench.data import synthetic

    entry = f"synthetic/cifar10-{synthetic.VERSION}-seed7-128-64"  # this test's own entry
    lock = cache_dir / (entry + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write("pid 4242 on elsewhere since then\n")
        handle.flush()
        run = run_bench(*FAST, "task=cnn", "data.seed=7", "preset.train_examples=128",
                        "preset.test_examples=64", "data.lock_timeout_s=1")
    assert run.returncode == 1, run.output
    assert "held by pid 4242 on elsewhere since then" in run.output
    assert run.result["error"].startswith(f"{lock} is held by pid 4242 on elsewhere")
    lock.unlink()
    again = run_bench(*FAST, "task=cnn", "data.seed=7", "preset.train_examples=128",
                      "preset.test_examples=64")
    assert again.returncode == 0, again.output
    assert not lock.exists()  # the holder removes its lock file


def test_shared_cache_entries_follow_the_umask(run_bench, bench_env, tmp_path):
    cache = tmp_path / "shared-cache"
    run = run_bench(*FAST, "task=cnn", env=dict(bench_env, BENCH_CACHE_DIR=str(cache)))
    assert run.returncode == 0, run.output
    (entry,) = (cache / "synthetic").iterdir()
    umask = os.umask(0)
    os.umask(umask)
    assert entry.stat().st_mode & 0o777 == 0o777 & ~umask
    assert not list(cache.rglob("*.lock"))


def test_a_full_disk_under_the_results_is_one_line(run_bench, full_disk):
    """Hydra records the run (.hydra/config.yaml, ...) before bench's own code starts."""
    run = run_bench(*FAST, "task=cnn", f"hydra.run.dir={full_disk / 'run'}")
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    lines = [line for line in run.output.splitlines() if line.startswith("bench: ")]
    assert lines == [f"bench: no space left on {full_disk / 'run' / '.hydra'}, where Hydra "
                     f"records the run before it starts; free space there, or put the "
                     f"results elsewhere (hydra.run.dir=DIR; a sweep: hydra.sweep.dir=DIR)"]


def test_report_html_into_an_existing_file_is_one_line(run_bench, tmp_path):
    run = run_bench(*FAST, "task=cnn")
    assert run.returncode == 0, run.output
    page = tmp_path / "page.html"
    page.write_text("mine")
    report = run_bench("report", str(run.result_paths[0]), "--no-charts", "--html", str(page))
    assert report.returncode == 2 and "Traceback" not in report.output, report.output
    assert (f"report: --html {page} is a file; --html names the directory that gets "
            f"index.html") in report.output
    assert page.read_text() == "mine"


def test_verify_with_negative_steps_is_refused(run_bench):
    run = run_bench("verify", "--frameworks", "fake", "--tasks", "cnn", "--steps", "-3")
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "--steps -3: the number of training steps, 0 (none) or more" in run.output
    assert not (run.cwd / "results").exists()  # refused before anything ran


def test_report_on_a_directory_named_result_json(run_bench, tmp_path):
    (tmp_path / "odd" / "result.json").mkdir(parents=True)
    run = run_bench("report", str(tmp_path / "odd"), "--no-charts")
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "no result.json found" in run.output


def test_verify_with_an_unknown_framework_is_one_line(run_bench):
    run = run_bench("verify", "--frameworks", "nope")
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "unknown framework(s) ['nope']; known: " in run.output


def test_schemas_are_not_offered_as_options(run_bench):
    run = run_bench("framework=nope", "task=cnn")
    assert run.returncode != 0
    assert "Available options in 'framework':" in run.output and "\tfake\n" in run.output
    assert "_schema" not in run.output, run.output
    run = run_bench("framework=framework_schema")
    assert run.returncode != 0 and "Could not find 'framework/framework_schema'" in run.output
