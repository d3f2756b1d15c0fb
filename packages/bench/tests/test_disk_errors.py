"""Results that cannot be written: an orchestrator error in a sweep, an unwritable results
directory, a full disk; each a result or one line, never a traceback."""
import re

from cli_process import FAST, strict_json


# an orchestrator error is a failed result, and the sweep still ends with its summary
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


def test_a_full_disk_under_the_results_is_one_line(run_bench, full_disk):
    """Hydra records the run (.hydra/config.yaml, ...) before bench's own code starts."""
    run = run_bench(*FAST, "task=cnn", f"hydra.run.dir={full_disk / 'run'}")
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output, run.output
    lines = [line for line in run.output.splitlines() if line.startswith("bench: ")]
    assert lines == [f"bench: no space left on {full_disk / 'run' / '.hydra'}, where Hydra "
                     f"records the run before it starts; free space there, or put the "
                     f"results elsewhere (hydra.run.dir=DIR; a sweep: hydra.sweep.dir=DIR)"]
