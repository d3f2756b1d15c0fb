"""The edges of `python -m bench report`, through the CLI on real runs of the numpy stand-in:
dates it orders a history by, a directory of interrupted runs only, thresholds that are not
numbers, `--into` a read-only file or file system, two reports into one directory at once,
`--baseline OLD NEW`, `--html` onto a directory of results, history.md, one spelling of each
status."""

import csv
import json
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

from cli_process import FAST, read_until, start
from mdtable import parse_table

from bench.report import document

CNN = [*FAST, "task=cnn"]


def lines_of(run):
    return [line for line in run.output.splitlines() if line.strip()]


def test_a_history_refuses_a_finished_date_in_another_format(run_bench, tmp_path):
    """`finished` orders a history; "12/02/2026 10:00" would sort before any ISO date. The
    result is skipped in one line naming the field, like any result off its schema."""
    for seed in (0, 1):
        assert run_bench(*CNN, f"seed={seed}").returncode == 0
    paths = sorted((tmp_path / "results").rglob("result.json"))
    result = json.loads(paths[1].read_text())
    paths[1].write_text(json.dumps(dict(result, finished="12/02/2026 10:00")))
    run = run_bench(
        "report",
        "--history",
        str(tmp_path / "results"),
        "--out",
        str(tmp_path / "r"),
        "--no-charts",
    )
    assert run.returncode == 0, run.output
    assert (
        f'report: skipping {paths[1]}: finished: "12/02/2026 10:00" is not valid (format: '
        f'"date-time", e.g. 2026-12-02T10:00:00+00:00)'
    ) in run.output
    with open(tmp_path / "r" / "results.csv") as f:
        assert len(f.read().splitlines()) == 2  # the header and the valid run


def test_a_directory_whose_only_run_was_interrupted_says_so(bench_env, run_bench, tmp_path):
    proc = start([*CNN, "framework.options.fault=hang"], bench_env, tmp_path)
    assert read_until(proc, "fake: hanging", []), "the worker did not start"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    runs = tmp_path / "results" / "runs"
    (path,) = runs.rglob("result.json")
    assert json.loads(path.read_text())["status"] == "interrupted"
    refused = run_bench("report", str(runs), "--no-charts", "--out", str(tmp_path / "r"))
    assert refused.returncode == 2, refused.output
    assert lines_of(refused) == [
        f"report: no result to report in {runs}: left out 1 interrupted run (--interrupted "
        f"includes it)"
    ]
    shown = run_bench(
        "report", str(runs), "--interrupted", "--no-charts", "--out", str(tmp_path / "r")
    )
    assert shown.returncode == 0, shown.output
    assert parse_table(shown.output)["Fake (numpy)"]["CNN"] == "interrupted"


def test_thresholds_that_are_not_finite_fractions_are_refused(run_bench, tmp_path):
    assert run_bench(*CNN).returncode == 0
    for option, value in [
        ("--min-change", "nan"),
        ("--min-change", "inf"),
        ("--min-change", "-5"),
        ("--accuracy-drop", "nan"),
        ("--min-runs", "0"),
    ]:
        run = run_bench(
            "report",
            str(tmp_path / "results"),
            "--baseline",
            str(tmp_path / "results"),
            f"{option}={value}",
            "--no-charts",
        )
        assert run.returncode == 2, (option, value, run.output)
        assert "Traceback" not in run.output and re.search(
            rf"argument {option}.*: {re.escape(value)}: (a finite fraction, 0 or more|1 or more)",
            run.output,
        ), run.output
    assert not (tmp_path / "results" / "reports").exists()


MARKED = "# Doc\n\n<!-- bench report: {results} -->\nold table\n<!-- end bench report -->\n"


def test_into_a_read_only_file_is_refused_and_the_file_left_as_it_was(run_bench, tmp_path):
    assert run_bench(*CNN).returncode == 0
    results = tmp_path / "results"
    doc = tmp_path / "doc.md"
    doc.write_text(MARKED.format(results=results))
    doc.chmod(0o444)
    run = run_bench("report", str(results), "--into", str(doc))
    assert run.returncode == 2, run.output
    assert lines_of(run) == [
        f"report: --into {doc}: the file is read-only (mode 0444); it is left as it is: make "
        f"it writable (chmod u+w {doc}) to regenerate its table"
    ]
    assert doc.read_text() == MARKED.format(results=results)
    assert stat.S_IMODE(doc.stat().st_mode) == 0o444
    # a writable file keeps its own mode when its table is written
    doc.chmod(0o640)
    assert run_bench("report", str(results), "--into", str(doc)).returncode == 0
    assert "old table" not in doc.read_text() and stat.S_IMODE(doc.stat().st_mode) == 0o640


def test_into_a_file_on_a_read_only_file_system_is_one_line(run_bench, tmp_path):
    assert run_bench(*CNN).returncode == 0
    results, docs = tmp_path / "results", tmp_path / "docs"
    docs.mkdir()
    doc = docs / "doc.md"
    doc.write_text(MARKED.format(results=results))
    run = run_bench("report", str(results), "--into", str(doc), read_only=[docs])
    assert run.returncode == 2, run.output
    assert lines_of(run) == [
        f"report: --into {doc}: cannot write it: it is on a read-only file system"
    ]
    assert doc.read_text() == MARKED.format(results=results)


def test_two_reports_into_one_directory_leave_one_whole_report(run_bench, bench_env, tmp_path):
    """One report of CNN runs, one of RNN runs, into the same --out at the same moment, five
    times: the directory ends holding one report's files, every one of them, and none of the
    other's (report.md, report.json, results.csv and the charts agree)."""
    assert run_bench(*CNN).returncode == 0
    assert run_bench(*FAST, "task=rnn").returncode == 0
    runs = sorted((tmp_path / "results" / "runs").iterdir())
    by_task = {
        json.loads((r / "result.json").read_text())["config"]["task"]["name"]: r for r in runs
    }
    same = tmp_path / "same"
    for attempt in range(5):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "bench", "report", str(path), "--out", str(same)],
                cwd=tmp_path,
                env=bench_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for path in (by_task["cnn"], by_task["rnn"])
        ]
        outputs = [p.communicate(timeout=600)[0] for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outputs
        data = json.loads((same / "report.json").read_text())
        (source,) = data["sources"]
        task = next(t for t, path in by_task.items() if str(path) == source)
        other = "rnn" if task == "cnn" else "cnn"
        assert {c["task"] for c in data["cells"]} == {task}, attempt
        csv_text = (same / "results.csv").read_text()
        assert source in csv_text and str(by_task[other]) not in csv_text, attempt
        header = next(
            line
            for line in (same / "report.md").read_text().splitlines()
            if line.startswith("| framework |")
        )
        assert task.upper() in header and other.upper() not in header, (attempt, header)
        charts = {p.name for p in same.glob("*.png")}
        assert charts == {f"{task}.png", f"curves_{task}.png"}, (attempt, charts)
        assert not [p for p in same.iterdir() if p.name.startswith(".report-") and p.is_dir()], (
            attempt
        )


def test_baseline_then_the_new_results_reads_both(run_bench, tmp_path):
    assert run_bench("-m", *CNN, "sweep=old").returncode == 0
    assert run_bench("-m", *CNN, "sweep=new").returncode == 0
    sweeps = tmp_path / "results" / "sweeps"
    run = run_bench(
        "report",
        "--baseline",
        str(sweeps / "old"),
        str(sweeps / "new"),
        "--no-charts",
        "--out",
        str(tmp_path / "r"),
    )
    assert run.returncode in (0, 1), run.output
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["sources"] == [str(sweeps / "new")]
    assert len(data["baseline"]) == 1 and data["baseline"][0]["verdict"].startswith("needs")


def test_a_flagged_configuration_names_the_packages_that_differ(run_bench, bench_env, tmp_path):
    """The baseline's two runs as they are, today's two slowed by 200 ms a batch (the fake's
    numpy step takes milliseconds): flagged slower, and the report names what differs between
    the two sides' recorded environments: the baseline's results are edited to record another
    numpy and a package since removed, as results from before an upgrade would."""
    sized = ["preset.train_examples=512", "preset.epochs=2"]  # 8 batches an epoch
    for sweep, extra in (("old", "0"), ("new", "200")):
        run = run_bench(
            "-m",
            *CNN,
            *sized,
            "seed=0,1",
            f"sweep={sweep}",
            env=dict(bench_env, FAKE_EXTRA_DELAY_MS=extra),
        )
        assert run.returncode == 0, run.output
    sweeps = tmp_path / "results" / "sweeps"
    (now,) = {
        json.loads(p.read_text())["environment"]["distributions"]["numpy"]
        for p in (sweeps / "new").rglob("result.json")
    }
    for path in (sweeps / "old").rglob("result.json"):
        result = json.loads(path.read_text())
        result["environment"]["distributions"].update(numpy="1.0.0", six="1.16.0")
        path.write_text(json.dumps(result))
    out = tmp_path / "r"
    run = run_bench(
        "report",
        str(sweeps / "new"),
        "--baseline",
        str(sweeps / "old"),
        "--no-charts",
        "--out",
        str(out),
    )
    assert run.returncode == 1, run.output  # flagged
    text = (out / "report.md").read_text()
    (line,) = [line for line in text.splitlines() if line.startswith("- Fake (numpy), CNN (")]
    assert line.endswith(f"): numpy 1.0.0 → {now}; -six 1.16.0"), text
    (finding,) = json.loads((out / "report.json").read_text())["baseline"]
    assert finding["verdict"] == "slower"
    assert finding["packages_changed"] == [f"numpy 1.0.0 → {now}", "-six 1.16.0"]
    import jsonschema

    schema = Path(document.__file__).with_name("report.schema.json")
    jsonschema.validate(
        json.loads((out / "report.json").read_text()), json.loads(schema.read_text())
    )


def test_html_onto_a_directory_of_results_without_paths_is_refused(run_bench, tmp_path):
    assert run_bench("-m", *CNN, "sweep=s").returncode == 0
    sweep = tmp_path / "results" / "sweeps" / "s"
    run = run_bench("report", "--html", str(sweep))
    assert run.returncode == 2, run.output
    (line,) = lines_of(run)
    assert line.startswith(f"report: --html {sweep}: that directory holds result files (")
    assert line.endswith(f"to report them: python -m bench report {sweep} --html {sweep}")
    assert not (sweep / "index.html").exists()
    empty = run_bench("report", "--html", str(tmp_path / "page"), "--no-code")
    assert empty.returncode == 2 and "would be an empty page" in empty.output
    assert not (tmp_path / "page").exists()
    asked = run_bench(
        "report",
        str(sweep),
        "--html",
        str(sweep),
        "--no-code",
        "--no-charts",
        "--out",
        str(tmp_path / "r"),
    )
    assert asked.returncode == 0 and (sweep / "index.html").is_file()


def test_history_writes_history_md(run_bench, tmp_path):
    for seed in (0, 1):
        assert run_bench(*CNN, f"seed={seed}").returncode == 0
    out = tmp_path / "r"
    run = run_bench(
        "report", "--history", str(tmp_path / "results"), "--out", str(out), "--no-charts"
    )
    assert run.returncode == 0, run.output
    history = (out / "history.md").read_text()
    assert history.startswith(("History, by", "No history"))
    assert history in (out / "report.md").read_text()


def test_a_status_is_spelled_one_way(run_bench, tmp_path):
    """not_installed in the sweep's counts, its summary and the report's --status all table."""
    run = run_bench("-m", *CNN, "framework=fake,torch", "sweep=s")
    assert re.search(r"^sweep: 2 results in \d+:\d\d: 1 ok, 1 not_installed$", run.output, re.M), (
        run.output
    )
    table = run_bench(
        "report",
        str(tmp_path / "results"),
        "--status",
        "all",
        "--no-charts",
        "--out",
        str(tmp_path / "r"),
    )
    assert parse_table(table.output)["PyTorch"]["CNN"] == "not_installed"
    assert "not_installed: its environment is not built on that host" in table.output


def test_results_csv_has_seed_and_peak_memory(run_bench, tmp_path):
    assert run_bench(*CNN, "seed=7").returncode == 0
    out = tmp_path / "r"
    assert (
        run_bench("report", str(tmp_path / "results"), "--out", str(out), "--no-charts").returncode
        == 0
    )
    with open(out / "results.csv") as f:
        (row,) = list(csv.DictReader(f))
    assert row["seed"] == "7" and int(row["peak_rss_bytes"]) > 0
    assert row["steady_state_measured"] == "True" and row["target_reached"] == "True"


def test_the_report_directory_lists_only_its_own_files(run_bench, tmp_path):
    """A report written again without charts removes the charts the last one wrote, and only
    those: another file in the directory stays."""
    assert run_bench(*CNN).returncode == 0
    out = tmp_path / "r"
    assert run_bench("report", str(tmp_path / "results"), "--out", str(out)).returncode == 0
    assert (out / "cnn.png").exists()
    (out / "notes.txt").write_text("mine")
    assert (
        run_bench("report", str(tmp_path / "results"), "--out", str(out), "--no-charts").returncode
        == 0
    )
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "notes.txt",
        "report.json",
        "report.md",
        "results.csv",
    ]
    assert Path(out / "notes.txt").read_text() == "mine"


def test_a_baseline_by_a_figure_one_configuration_lacks_is_still_written(run_bench, tmp_path):
    """--metric time_to_target against a baseline where one configuration never reached its
    target: that configuration reads "target not reached, not compared", the others are
    judged, and the report is written."""
    for side in ("old", "new"):
        for seed in (0, 1):
            for task, extra in (("cnn", ["task.quality_target.synthetic=0.99"]), ("rnn", [])):
                run = run_bench(
                    *FAST,
                    f"task={task}",
                    f"seed={seed}",
                    *extra,
                    f"hydra.run.dir={tmp_path / side / f'{task}{seed}'}",
                )
                assert run.returncode == 0, run.output
    run = run_bench(
        "report",
        str(tmp_path / "new"),
        "--baseline",
        str(tmp_path / "old"),
        "--metric",
        "time_to_target",
        "--out",
        str(tmp_path / "r"),
        "--no-charts",
    )
    # 0, or 1 where the noise of runs of a fraction of a second flags the RNN's change
    assert run.returncode in (0, 1), run.output
    text = (tmp_path / "r" / "report.md").read_text()
    assert "target not reached (now and baseline), not compared" in text, text
    found = json.loads((tmp_path / "r" / "report.json").read_text())["baseline"]
    verdicts = {f["task"]: f["verdict"] for f in found}
    assert verdicts["cnn"].endswith("not compared") and "not compared" not in verdicts["rnn"]


def test_a_training_metric_says_which_inference_runs_it_left_out(run_bench, tmp_path):
    for task in ("cnn", "resnet50"):
        assert run_bench(*FAST, f"task={task}").returncode == 0
    run = run_bench(
        "report",
        str(tmp_path / "results"),
        "--metric",
        "time_to_target",
        "--out",
        str(tmp_path / "r"),
        "--no-charts",
    )
    assert run.returncode == 0, run.output
    assert "left out 1 inference run (--metric time_to_target ranks training runs)" in run.output
    assert json.loads((tmp_path / "r" / "report.json").read_text())["left_out"] == {"inference": 1}
