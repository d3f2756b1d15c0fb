"""Comparisons a user can read and trust, through `python -m bench` and `report` in
subprocesses, on real runs of the numpy stand-in framework: the headline metric, relative
speed and its sentences, verdicts that know about noise (baseline, history), the 2018 figures
only like for like, report.json and the result schema, the page, and a sweep's progress."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mdtable import parse_table

from bench.report import document
from bench.run import record

FAST = ["framework=fake", "task=cnn", "preset=smoke"]
SCHEMA = Path(document.__file__).with_name("report.schema.json")


def report(run_bench, *args):
    out = args[args.index("--out") + 1] if "--out" in args else None
    run = run_bench("report", *args, "--no-charts")
    text = (Path(out) / "report.md").read_text() if out and run.returncode in (0, 1) else ""
    return run, text


def test_the_headline_is_steady_state_below_full_and_any_metric_can_be_chosen(run_bench, tmp_path):
    run = run_bench(*FAST, "preset.epochs=3")
    assert run.returncode == 0, run.output
    stats = run.result["stats"]
    _, text = report(run_bench, str(tmp_path / "results"), "--out", str(tmp_path / "r"))
    assert "Cells: steady-state throughput (examples/s; higher is better)" in text
    (cell,) = [v for k, v in parse_table(text)["Fake (numpy)"].items() if not k.endswith("×")]
    assert cell.startswith(f"{stats['examples_per_second']:.0f} (n=1)"), cell
    for metric, key in [("total", "train_seconds"), ("first", "first_epoch_seconds")]:
        _, text = report(
            run_bench,
            str(tmp_path / "results"),
            "--metric",
            metric,
            "--out",
            str(tmp_path / metric),
        )
        (cell,) = [v for k, v in parse_table(text)["Fake (numpy)"].items() if not k.endswith("×")]
        assert cell.split()[0] in (f"{stats[key]:.2f}", f"{stats[key]:.1f}"), (metric, cell)


def test_every_table_has_a_relative_column_and_hyperfine_sentences(run_bench, tmp_path):
    """The × and the sentence are the recorded figures' ratio (not a wall-clock bound, which a
    busy machine moves); one run a side: the ratio has no interval, and the sentence says so."""
    fast = run_bench(*FAST, "framework.options.delay_ms=0")
    slow = run_bench(*FAST, "framework.options.delay_ms=20")
    assert fast.returncode == slow.returncode == 0
    quick, slowed = (r.result["stats"]["examples_per_second"] for r in (fast, slow))
    _, text = report(run_bench, str(tmp_path / "results"), "--out", str(tmp_path / "r"))
    table = parse_table(text)
    relative = {
        row: [v for k, v in cells.items() if k.endswith("×")][0] for row, cells in table.items()
    }
    faster, slower = sorted(
        ["Fake (numpy) [delay_ms=0.0]", "Fake (numpy) [delay_ms=20.0]"],
        key=lambda row: -(quick if "=0.0" in row else slowed),
    )
    assert relative[faster] == "1.00"
    assert relative[slower] == f"{max(quick, slowed) / min(quick, slowed):.2f}"
    sentence = re.escape(
        f"{faster} ran {relative[slower]}× faster than {slower} on CNN (n=1: no interval)"
    )
    assert re.search(sentence, text), text


@pytest.fixture
def busy():
    """The other core kept busy: a shared machine."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield
    burner.kill()
    burner.wait()


def test_a_baseline_flags_a_slowed_configuration_and_not_noise(
    run_bench, bench_env, tmp_path, busy
):
    # each batch sleeps 100 ms beside its ~15 ms of NumPy, so that what a busy machine (the
    # burner, and CI's other lane) does to the NumPy stays small: with a 5 ms sleep, two
    # identical sweeps on CI once differed by 10 %, the runs apart. The two identical sweeps
    # take turns, run by run, so that a load that comes or goes between two runs lands on
    # both sides: their runs overlap, as noise does
    repeats = [
        "-m",
        *FAST,
        "framework.options.delay_ms=100",
        "preset.train_examples=512",
        "preset.epochs=2",
    ]
    for seed in (0, 1):
        for name in ("before", "again"):
            assert run_bench(*repeats, f"seed={seed}", f"sweep={name}").returncode == 0
    sweeps = tmp_path / "results" / "sweeps"
    same, text = report(
        run_bench,
        str(sweeps / "again"),
        "--baseline",
        str(sweeps / "before"),
        "--out",
        str(tmp_path / "same"),
    )
    assert same.returncode == 0, text
    assert "0 of 1 configurations found in both flagged" in text
    # the machine, not the config: 150 ms more per batch, beyond what load does to the NumPy
    slowed_env = dict(bench_env, FAKE_EXTRA_DELAY_MS="150")
    assert run_bench(*repeats, "seed=0,1", "sweep=slowed", env=slowed_env).returncode == 0
    slowed, text = report(
        run_bench,
        str(sweeps / "slowed"),
        "--baseline",
        str(sweeps / "before"),
        "--out",
        str(tmp_path / "slowed"),
    )
    assert slowed.returncode == 1, text
    assert "1 of 1 configurations found in both flagged" in text and "**slower**" in text
    # one run each cannot be judged: said, not flagged, not a failure
    (now,) = (sweeps / "slowed").glob("*seed=0*")
    (then,) = (sweeps / "before").glob("*seed=0*")
    one, text = report(run_bench, str(now), "--baseline", str(then), "--out", str(tmp_path / "one"))
    assert one.returncode == 0 and "needs ≥ 2 runs each (has 1 and 1)" in text


def test_the_2018_figures_sit_only_beside_like_for_like_runs(run_bench, tmp_path):
    assert run_bench(*FAST).returncode == 0
    _, text = report(
        run_bench, str(tmp_path / "results"), "--reference", "--out", str(tmp_path / "r")
    )
    table = parse_table(text)
    assert not any("(2018)" in k for k in table["Fake (numpy)"])  # no smoke seconds beside
    assert (
        "2018 figures for CNN: not beside the cells (its runs are preset=smoke, the 2018 "
        "figures full runs). Per training example instead"
    ) in text


def test_report_json_follows_its_schema_and_bad_results_are_one_line(run_bench, tmp_path):
    import jsonschema

    assert run_bench(*FAST).returncode == 0
    good = next((tmp_path / "results").rglob("result.json"))
    result = json.loads(good.read_text())
    assert result["schema_version"] == record.SCHEMA_VERSION and result["finished"]
    bad = tmp_path / "results" / "bad"
    bad.mkdir()
    (bad / "result.json").write_text(json.dumps(dict(result, accuracy="high")))
    garbage = tmp_path / "results" / "garbage"
    garbage.mkdir()
    (garbage / "result.json").write_bytes(b"{" + b"\xff" * 5000)
    run, _ = report(run_bench, str(tmp_path / "results"), "--out", str(tmp_path / "r"))
    assert run.returncode == 0, run.output
    skipped = [line for line in run.output.splitlines() if "skipping" in line]
    assert len(skipped) == 2 and all(len(line) < 400 for line in skipped), skipped
    assert any(
        line.endswith('accuracy: "high" is not valid (type: ["number", "null", "string"])') is False
        and "accuracy" in line
        for line in skipped
    )
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    jsonschema.validate(data, json.loads(SCHEMA.read_text()))
    (cell,) = data["cells"]
    assert cell["status"] == "ok" and cell["n"] == 1 and cell["relative"] == 1.0
    assert data["metric"]["name"] == "steady"


def git(directory, *args):
    subprocess.run(
        ["git", "-C", str(directory), *args],
        check=True,
        capture_output=True,
        env=dict(
            os.environ,
            GIT_AUTHOR_NAME="t",
            GIT_AUTHOR_EMAIL="t@t",
            GIT_COMMITTER_NAME="t",
            GIT_COMMITTER_EMAIL="t@t",
        ),
    )


def test_history_marks_the_commit_that_slowed_a_configuration(run_bench, bench_env, tmp_path):
    project = Path(bench_env["BENCH_PROJECT_DIR"])  # the checkout a result records
    project.mkdir(parents=True)
    git(project, "init", "-q")
    git(project, "commit", "-q", "--allow-empty", "-m", "one")
    # 200 ms more per batch in the second commit's runs: beyond what a busy machine does to
    # the NumPy (about 15 ms a batch) between the two sweeps
    repeats = [
        "-m",
        *FAST,
        "seed=0,1",
        "framework.options.delay_ms=5",
        "preset.train_examples=256",
        "preset.epochs=2",
    ]
    assert run_bench(*repeats, "sweep=first").returncode == 0
    git(project, "commit", "-q", "--allow-empty", "-m", "two")
    slowed = dict(bench_env, FAKE_EXTRA_DELAY_MS="200")
    assert run_bench(*repeats, "sweep=second", env=slowed).returncode == 0
    out = tmp_path / "history"
    run = run_bench("report", "--history", str(tmp_path / "results"), "--out", str(out))
    assert run.returncode == 0, run.output
    text = (out / "report.md").read_text()
    rows = [line for line in text.split("History, by")[1].splitlines() if "Fake" in line]
    assert len(rows) == 2 and "first" in rows[0] and "slower:" in rows[1], rows
    assert (out / "history_cnn.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "history.csv").read_text().count("\n") == 3
    page = tmp_path / "page"
    assert (
        run_bench(
            "report",
            "--history",
            str(tmp_path / "results"),
            "--html",
            str(page),
            "--no-code",
            "--out",
            str(tmp_path / "p"),
        ).returncode
        == 0
    )
    html = (page / "index.html").read_text()
    assert 'id="history-charts"' in html and 'id="history"' in html


def test_the_page_shows_the_comparisons_and_can_leave_the_code_out(run_bench, tmp_path):
    assert run_bench("-m", *FAST, "seed=0,1", "sweep=a").returncode == 0
    assert run_bench("-m", *FAST, "seed=0,1", "sweep=b").returncode == 0
    sweeps = tmp_path / "results" / "sweeps"
    args = [
        str(sweeps / "b"),
        "--baseline",
        str(sweeps / "a"),
        "--reference",
        "--out",
        str(tmp_path / "md"),
    ]
    # 0, or 1 where the baseline flags a change (these runs take milliseconds: noisy)
    assert run_bench("report", *args, "--html", str(tmp_path / "full")).returncode in (0, 1)
    assert run_bench("report", *args, "--html", str(tmp_path / "lean"), "--no-code").returncode in (
        0,
        1,
    )
    full = (tmp_path / "full" / "index.html").read_text()
    lean = (tmp_path / "lean" / "index.html").read_text()
    for anchor in ("results", "baseline", "reference", "charts"):
        assert f'id="{anchor}"' in lean, anchor
    assert 'id="code"' in full and 'id="code"' not in lean
    assert len(lean.encode()) < 1_000_000 < len(full.encode())


def test_a_sweep_says_job_k_of_n_with_an_eta_and_ends_with_counts(run_bench):
    run = run_bench("-m", *FAST, "seed=0,1,2", "framework.options.fault=none")
    assert run.returncode == 0, run.output
    lines = [line for line in run.output.splitlines() if line.startswith("sweep: ")]
    # three seeds: three rounds of one configuration (bench.run.rounds)
    assert lines[0] == (
        "sweep: 3 runs in 3 rounds, each in its own random order (rounds.order_seed=0)"
    ), lines
    assert lines[1].startswith("sweep: job 1 of 3, round 1 of 3 ("), lines
    assert re.match(
        r"sweep: job 3 of 3, round 3 of 3 \(.*\); 2 finished in \d+:\d\d, about \d+:\d\d "
        r"left$",
        lines[3],
    ), lines
    assert re.match(r"sweep: 3 results in \d+:\d\d: 3 ok$", lines[-1]), lines


def test_progress_is_plain_lines_on_a_terminal_of_no_width():
    """A pseudo-terminal that reports 0 columns gets the plain lines, not a bar (tqdm would
    draw nothing there); one of 80 columns gets the bar."""
    import fcntl
    import pty
    import struct
    import termios

    from bench.console import bars_fit

    leader, follower = pty.openpty()
    try:
        with open(follower, "w", closefd=False) as stream:
            for columns, fits in [(0, False), (80, True)]:
                fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
                assert bars_fit(stream) is fits, columns
    finally:
        os.close(leader)
        os.close(follower)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to run on one")
def test_the_same_configuration_on_two_hosts_is_compared(run_bench, bench_env, tmp_path):
    """Two "hosts": all CPUs, and one CPU (its CPU set is part of a run's hardware)."""
    repeats = ["-m", *FAST, "seed=0,1", "framework.options.delay_ms=5"]
    assert run_bench(*repeats, "sweep=all-cpus").returncode == 0
    one_cpu = subprocess.run(
        [sys.executable, "-m", "bench", *repeats, "sweep=one-cpu"],
        cwd=tmp_path,
        env=bench_env,
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {0}),
        timeout=600,
    )
    assert one_cpu.returncode == 0, one_cpu.stdout + one_cpu.stderr
    _, text = report(run_bench, str(tmp_path / "results"), "--out", str(tmp_path / "r"))
    section = text[text.index("Host against host") :].split("\n\n")[1]  # its table
    (row,) = [line for line in section.splitlines() if line.startswith("| Fake")]
    assert "1 CPUs" in row and f"{len(os.sched_getaffinity(0))} CPUs" in row, row
    assert re.search(r"\d\.\d\d× \(\d\.\d\d–\d\.\d\d\)", row), row
