"""Results that cannot be written: an orchestrator error in a sweep, an unwritable results
directory or cache (a file where a directory must be, a read-only mount), a full disk; each a
result or one line naming the path, never a traceback."""

from cli_process import FAST, strict_json


# an orchestrator error is a failed result, and the sweep still ends with its summary
def test_orchestrator_error_in_a_sweep_is_a_failed_result_and_the_summary_is_written(
    run_bench, tmp_path
):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    good = tmp_path / "cache"
    run = run_bench("-m", *FAST, "task=cnn", f"data.cache_dir={not_a_dir},{good}", "sweep=errors")
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    results = [strict_json(p) for p in run.result_paths]
    assert sorted(r["status"] for r in results) == ["failed", "ok"]
    (failed,) = [r for r in results if r["status"] == "failed"]
    assert failed["error"] == (
        f"the data cache {not_a_dir} cannot be written: {not_a_dir} is a "
        f"file, where a directory is needed; data.cache_dir=DIR (or "
        f"BENCH_CACHE_DIR) puts it elsewhere"
    ), failed["error"]
    assert "Traceback" in failed["traceback"]
    sweep_dir = tmp_path / "results" / "sweeps" / "errors"
    assert (sweep_dir / "summary.md").is_file() and (sweep_dir / "results.csv").is_file()


def test_unwritable_results_directory_is_one_line(run_bench, tmp_path):
    (tmp_path / "results").write_text("not a directory")
    run = run_bench(*FAST, "task=cnn")
    assert run.returncode == 1, run.output
    assert run.output.strip().splitlines() == [
        f"bench: the run's directory (in results/runs) cannot be written: {tmp_path / 'results'} "
        f"is a file, where a directory is needed; hydra.run.dir=DIR puts it elsewhere"
    ]


def test_a_read_only_results_directory_is_one_line_before_anything_runs(run_bench, tmp_path):
    """Hydra's resolver, or its sweeper, would meet it first: a traceback, a callback's
    warning, or 'An error occurred during Hydra's exception formatting'."""
    results = tmp_path / "results"
    results.mkdir()
    for args, what in [
        ((*FAST, "task=cnn"), "run's directory (in results/runs)"),
        (
            ("-m", *FAST, "task=cnn"),
            "sweep's directory results/sweeps/framework=fake_preset=smoke_task=cnn",
        ),
    ]:
        run = run_bench(*args, read_only=[results])
        assert run.returncode == 1, run.output
        key = "hydra.sweep.dir" if "-m" in args else "hydra.run.dir"
        assert run.output.strip().splitlines() == [
            f"bench: the {what} cannot be written: {results} is on a read-only file system; "
            f"{key}=DIR puts it elsewhere"
        ]
    assert not list(results.iterdir())
    # a sweep's own directory, there already (a shared results tree): its lock, Hydra's record
    shared = results / "sweeps" / "shared"
    shared.mkdir(parents=True)
    run = run_bench("-m", *FAST, "task=cnn", "sweep=shared", read_only=[shared])
    assert run.returncode == 1 and run.output.strip().splitlines() == [
        f"bench: the sweep's directory results/sweeps/shared cannot be written: {shared} is on "
        f"a read-only file system; hydra.sweep.dir=DIR puts it elsewhere"
    ], run.output
    # a directory given on the command line, under a file
    (tmp_path / "a-file").write_text("")
    run = run_bench(*FAST, "task=cnn", f"hydra.run.dir={tmp_path / 'a-file' / 'run'}")
    assert run.returncode == 1 and run.output.strip().splitlines() == [
        f"bench: the run's directory (in {tmp_path / 'a-file'}) cannot be written: "
        f"{tmp_path / 'a-file'} is a file, where a directory is needed; hydra.run.dir=DIR puts "
        f"it elsewhere"
    ], run.output


def test_a_read_only_cache_is_a_result_naming_it(run_bench, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    run = run_bench(*FAST, "task=cnn", f"data.cache_dir={cache}", read_only=[cache])
    assert run.returncode == 1, run.output
    error = run.result["error"]
    assert error.startswith(f"the data cache {cache} cannot be written: {cache}/"), error
    assert error.endswith(
        " is on a read-only file system; data.cache_dir=DIR (or BENCH_CACHE_DIR) puts it elsewhere"
    ), error
    assert "Traceback" not in run.output


def test_a_full_disk_under_the_results_is_one_line(run_bench, full_disk):
    """Hydra records the run (.hydra/config.yaml, ...) before bench's own code starts."""
    run = run_bench(*FAST, "task=cnn", f"hydra.run.dir={full_disk / 'run'}")
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    lines = [line for line in run.output.splitlines() if line.startswith("bench: ")]
    assert lines == [
        f"bench: no space left on {full_disk / 'run' / '.hydra'}, where Hydra "
        f"records the run before it starts; free space there, or put the "
        f"results elsewhere (hydra.run.dir=DIR; a sweep: hydra.sweep.dir=DIR)"
    ]


TUNE = [
    "tune",
    "framework=fake",
    "task=rnn",
    "preset.train_examples=1024",
    "preset.test_examples=256",
    "preset.epochs=1",
    "--rounds",
    "1",
]


def test_tune_with_read_only_results_stops_before_any_candidate_runs(
    run_bench, own_cache, tmp_path
):
    env, cache = own_cache
    results = tmp_path / "results"
    results.mkdir()
    run = run_bench(*TUNE, env=env, read_only=[results])
    assert run.returncode == 1, run.output
    assert run.output.strip().splitlines() == [
        f"tune: the candidates' runs' directory cannot be written: {results} is on a read-only "
        f"file system; --out DIR puts them elsewhere"
    ]
    assert not list(cache.rglob("*.rounds.json"))  # no candidate ran


def test_peak_with_read_only_results_or_cache_is_one_line(run_bench, own_cache, tmp_path):
    env, cache = own_cache
    results = tmp_path / "results"
    results.mkdir()
    run = run_bench("peak", "--frameworks", "fake", env=env, read_only=[results])
    assert run.returncode == 1, run.output
    assert run.output.strip().splitlines() == [
        f"peak: the workers' directory cannot be written: {results} is on a read-only file "
        f"system; --out DIR puts it elsewhere"
    ]
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    run = run_bench("peak", "--frameworks", "fake", "--cache-dir", str(not_a_dir), env=env)
    assert run.returncode == 1, run.output
    assert run.output.strip().splitlines() == [
        f"peak: the host peak's directory cannot be written: {not_a_dir} is a file, where a "
        f"directory is needed; --cache-dir DIR (or BENCH_CACHE_DIR) puts it elsewhere"
    ]
    assert not list(cache.rglob("peak.json")) and not list(results.iterdir())


def test_verify_and_prepare_that_cannot_write_are_one_line(run_bench, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    run = run_bench(
        "verify", "--frameworks", "fake", "--tasks", "cnn", "--steps", "0", read_only=[results]
    )
    assert run.returncode == 1, run.output
    assert run.output.strip().splitlines() == [
        f"verify: verify's directory cannot be written: {results} is on a read-only file "
        f"system; --out DIR puts it elsewhere"
    ]
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    run = run_bench("prepare", "task=cnn", "preset=smoke", f"data.cache_dir={not_a_dir}")
    assert run.returncode == 1, run.output
    assert run.output.strip().splitlines() == [
        f"prepare cnn data=synthetic: the data cache cannot be written: {not_a_dir} is a file, "
        f"where a directory is needed; data.cache_dir=DIR (or BENCH_CACHE_DIR) puts it "
        f"elsewhere"
    ]
