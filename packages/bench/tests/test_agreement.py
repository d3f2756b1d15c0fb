"""The report's agreement section (`python -m bench report` on what comparison=agreement leaves):
synthetic result files with known accuracies and losses per framework x task x seed."""

import csv
import json

from mdtable import parse_table
from result_files import make_result

from bench.report import command

DISPLAY = {"torch": "PyTorch", "tensorflow": "TensorFlow", "keras": "Keras"}
# framework -> task -> [(test accuracy, final loss) per seed 0, 1, 2]; None: the seed failed
AGREEMENT = {
    "torch": {
        "cnn": [(0.90, 0.30), (0.91, 0.32), (0.92, 0.34)],
        "rnn": [(0.85, 0.40), (0.86, 0.41), (0.87, 0.42)],
    },
    "tensorflow": {
        "cnn": [(0.89, 0.31), (0.90, 0.33), (0.91, 0.35)],
        "rnn": [(0.855, 0.405), (0.865, 0.415), None],
    },
    # the CNN outlier: its mean (82 %, loss 0.62) lies outside every other framework's seeds
    "keras": {
        "cnn": [(0.80, 0.60), (0.82, 0.62), (0.84, 0.64)],
        "rnn": [(0.84, 0.39), (0.86, 0.41), (0.88, 0.43)],
    },
}


def agreement_result(framework, task, seed, figures, init="neutral"):
    status = "ok" if figures else "failed"
    accuracy, loss = figures or (None, None)
    r = make_result(
        "torch",
        task,
        seconds=10.0 + seed,
        accuracy=accuracy,
        status=status,
        device="cpu",
        seed=seed,
    )
    r["config"]["framework"].update(name=framework, display_name=DISPLAY[framework])
    r["config"]["preset"]["name"] = "smoke"
    r["config"]["init"] = {"name": init, "description": "..."}
    r["losses"] = [1.5, loss] if figures else []  # one a timed epoch (make_result: two)
    return r


def write(directory, results):
    for i, r in enumerate(results):
        (directory / f"job{i}").mkdir(parents=True)
        (directory / f"job{i}" / "result.json").write_text(json.dumps(r))
    return directory


def agreement_runs():
    return [
        agreement_result(fw, task, seed, figures)
        for fw, tasks in AGREEMENT.items()
        for task, seeds in tasks.items()
        for seed, figures in enumerate(seeds)
    ]


def run_report(directory, out):
    assert command.main([str(directory), "--out", str(out), "--no-charts"]) == 0
    return (out / "report.md").read_text()


def section(text, heading):
    return text[text.index(heading) :]


def test_agreement_section_per_framework_mean_and_range_over_seeds(tmp_path):
    text = run_report(write(tmp_path / "runs", agreement_runs()), tmp_path / "report")
    assert "## Agreement across frameworks" in text
    # the hardware, precision, preset and data every run shares: named once, in the legend
    assert "All runs: Intel Xeon Gold 6148, 8 CPUs, fp32, data synthetic, preset smoke." in text
    cnn = parse_table(section(text, "### CNN, init=neutral"))
    assert cnn["PyTorch"] == {
        "seeds": "3",
        "accuracy mean": "91.0 %",
        "accuracy min – max": "90.0 % – 92.0 %",
        "final loss mean": "0.320",
        "final loss min – max": "0.300 – 0.340",
        "outside": "",
    }
    assert cnn["TensorFlow"]["accuracy mean"] == "90.0 %" and cnn["TensorFlow"]["outside"] == ""
    assert cnn["Keras"]["outside"] == "accuracy, loss"
    rnn = parse_table(section(text, "### RNN,"))
    assert rnn["TensorFlow"]["seeds"] == "2 (1 not ok)"  # the failed seed is no value
    assert rnn["TensorFlow"]["accuracy min – max"] == "85.5 % – 86.5 %"
    assert all(row["outside"] == "" for row in rnn.values())


def test_spread_across_frameworks_against_the_seed_noise(tmp_path):
    text = run_report(write(tmp_path / "runs", agreement_runs()), tmp_path / "report")
    summary = parse_table(
        section(text, "### Across frameworks against the seed noise"), first_header="task"
    )
    cnn = summary["CNN, init=neutral"]
    # means 91, 90, 82 %: 9 points apart; seed ranges 2, 2, 4 points: median 2
    assert cnn["accuracy across frameworks"] == "9.0 pt"
    assert cnn["accuracy seed noise"] == "2.0 pt"
    assert cnn["outside"] == "Keras (accuracy), Keras (loss)"
    assert cnn["accuracy ratio"] == "4.5×"
    # final loss means 0.32, 0.33, 0.62; seed ranges 0.04 each
    assert (cnn["loss across frameworks"], cnn["loss seed noise"], cnn["loss ratio"]) == (
        "0.300",
        "0.040",
        "7.5×",
    )
    rnn = summary["RNN, init=neutral"]
    assert rnn["frameworks"] == "3" and rnn["outside"] == "none"
    # means 86, 86, 86 %: within a point of each other, seed ranges 2, 1, 4 points
    assert rnn["accuracy seed noise"] == "2.0 pt"
    assert float(rnn["accuracy across frameworks"].split()[0]) < 0.1


def test_agreement_csv_one_row_per_framework_and_task(tmp_path):
    out = tmp_path / "report"
    run_report(write(tmp_path / "runs", agreement_runs()), out)
    with open(out / "agreement.csv") as f:
        rows = {(r["framework"], r["task"]): r for r in csv.DictReader(f)}
    assert len(rows) == 6
    keras = rows["Keras", "cnn"]
    assert float(keras["accuracy_mean"]) == 0.82 and float(keras["loss_mean"]) == 0.62
    assert (keras["accuracy_outside"], keras["loss_outside"]) == ("True", "True")
    assert abs(float(keras["accuracy_across_frameworks"]) - 0.09) < 1e-9  # 91 % - 82 %
    assert rows["PyTorch", "cnn"]["accuracy_outside"] == "False"
    assert rows["TensorFlow", "rnn"]["seeds"] == "2" and rows["TensorFlow", "rnn"]["not_ok"] == "1"
    assert {r["init"] for r in rows.values()} == {"neutral"}


def test_init_modes_are_never_pooled(tmp_path):
    """Native-init runs of the same frameworks are a group of their own: the flag compares a
    framework only with frameworks that started the way it did; a group of one framework
    agrees with nothing and is left out."""
    native = [
        agreement_result(fw, "cnn", seed, (0.70 + seed / 100, 0.9), init="native")
        for fw in ("keras", "torch")
        for seed in range(3)
    ]
    alone = [
        agreement_result("keras", "rnn", seed, (0.70 + seed / 100, 0.9), init="native")
        for seed in range(3)
    ]
    text = run_report(write(tmp_path / "runs", agreement_runs() + native + alone), tmp_path / "out")
    summary = parse_table(
        section(text, "### Across frameworks against the seed noise"), first_header="task"
    )
    assert [
        (task.rsplit("=", 1)[1], row["frameworks"])
        for task, row in summary.items()
        if task.startswith("CNN")
    ] == [("native", "2"), ("neutral", "3")]
    assert "RNN, init=native" not in summary
    cnn = summary["CNN, init=neutral"]
    assert cnn["accuracy across frameworks"] == "9.0 pt"  # the native runs (70 %) left out


def test_no_section_without_repeated_seeds(tmp_path):
    single = [agreement_result(fw, "cnn", 0, tasks["cnn"][0]) for fw, tasks in AGREEMENT.items()]
    out = tmp_path / "report"
    text = run_report(write(tmp_path / "runs", single), out)
    assert "Agreement" not in text and not (out / "agreement.csv").exists()


def test_rows_that_lack_the_task_are_left_out(tmp_path):
    """A comparison sweep records the rows without the task as unsupported: no agreement row."""
    lacking = []
    for seed in range(3):
        r = agreement_result("keras", "rnn", seed, None)
        r["status"] = "unsupported"
        lacking.append(r)
    runs = [
        r
        for r in agreement_runs()
        if r["config"]["framework"]["name"] != "keras" or r["config"]["task"]["name"] != "rnn"
    ]
    text = run_report(write(tmp_path / "runs", runs + lacking), tmp_path / "out")
    assert set(parse_table(section(text, "### RNN,"))) == {"PyTorch", "TensorFlow"}


def test_the_agreement_tables_go_into_a_documentation_block(tmp_path):
    """`report --into FILE --table agreement`: the section's tables without its `##` line,
    between the marker of the same arguments and its end line; --table main is untouched."""
    runs = write(tmp_path / "runs", agreement_runs())
    page = tmp_path / "page.md"
    page.write_text(
        f"## Agreement\n\n<!-- bench report: {runs} --table agreement -->\nstale\n"
        f"<!-- end bench report -->\n"
    )
    assert command.main([str(runs), "--table", "agreement", "--into", str(page)]) == 0
    text = page.read_text()
    assert "stale" not in text and "## Agreement across frameworks" not in text
    assert parse_table(section(text, "### CNN,"))["Keras"]["outside"] == "accuracy, loss"
    assert text.endswith("<!-- end bench report -->\n")
