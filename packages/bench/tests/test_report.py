"""`python -m bench report` from fixture result files with known numbers: the markdown table's
cells, the CSV's rows, the PNG charts' bars, the baseline flags and the 2018 reference."""

import csv
import json
from pathlib import Path

import pytest
from matplotlib.container import BarContainer
from mdtable import parse_table
from result_files import P100, make_result, with_throughput

from bench.report import baseline, charts, command, reference_2018
from bench.report.collection import Grid, collect

SPEC_MD = Path(__file__).resolve().parents[3] / "shared" / "SPEC.md"


# (framework, task, seconds, accuracy, status, device) -> the cell the table must show
CURRENT = [
    ("torch", "cnn", 50.0, 0.780, "ok", "gpu"),
    ("torch", "cnn", 54.0, 0.770, "ok", "gpu"),  # repeats (seeds differ): median 51, range 4
    ("torch", "cnn", 51.0, 0.776, "ok", "gpu"),
    ("torch", "resnet50", 1.9, None, "ok", "gpu"),
    ("torch", "rnn", 16.0, 0.855, "ok", "gpu"),
    ("torch", "cnn", 1500.0, 0.780, "ok", "cpu"),
    ("tensorflow", "cnn", 57.0, 0.771, "ok", "gpu"),
    ("tensorflow", "rnn", None, None, "failed", "gpu"),
    ("tensorflow", "cnn", None, None, "unsupported", "cpu"),
    # tensorflow resnet50: not run
]
BASELINE = [
    ("torch", "cnn", 45.0, 0.800, "ok", "gpu"),  # now 50-54 (3 runs): slower, no overlap,
    ("torch", "cnn", 46.0, 0.802, "ok", "gpu"),  # 2.5 points less accurate, no overlap
    ("torch", "rnn", 15.8, 0.856, "ok", "gpu"),  # one run each: too few to judge
    ("tensorflow", "rnn", 22.0, 0.850, "ok", "gpu"),  # now failed
    ("tensorflow", "cnn", 60.0, 0.770, "ok", "gpu"),  # now 57: faster
]
# every run is fp32: the precision is named once, below the table, not in each column
CPU_COLUMN = "Intel Xeon Gold 6148, 8 CPUs"
GPU_COLUMN = P100


def write_results(directory: Path, specs):
    for i, (fw, task, seconds, acc, status, device) in enumerate(specs):
        run_dir = directory / f"job{i}"
        run_dir.mkdir(parents=True)
        (run_dir / "result.json").write_text(
            json.dumps(make_result(fw, task, seconds, acc, status, device, seed=i))
        )
    return directory


@pytest.fixture
def current(tmp_path):
    return write_results(tmp_path / "current", CURRENT)


def test_markdown_table_has_the_seeds_layout_with_known_cells(current, tmp_path):
    out = tmp_path / "report"
    assert command.main([str(current), "--out", str(out), "--no-charts"]) == 0
    text = (out / "report.md").read_text()
    table = parse_table(text)
    assert list(table) == ["PyTorch", "TensorFlow"]
    columns = [
        f"CNN {CPU_COLUMN}",
        f"CNN {GPU_COLUMN}",
        f"ResNet-50 {GPU_COLUMN}",
        f"RNN {GPU_COLUMN}",
    ]
    assert list(table["PyTorch"]) == [c + x for c in columns for x in ("", " ×")]
    # every run is preset=full: the cells are total time, the 2018 table's figure
    assert "Cells: total time (s (every epoch) for training, s per 1000 images" in text
    assert table["PyTorch"] == {
        f"CNN {CPU_COLUMN}": "1500 (n=1) · 78.0 %",
        f"CNN {CPU_COLUMN} ×": "1.00",
        f"CNN {GPU_COLUMN}": "51.0 (50.0–54.0, n=3) · 77.6 %",  # median, min-max, 3 runs
        f"CNN {GPU_COLUMN} ×": "1.00",
        f"ResNet-50 {GPU_COLUMN}": "1.90 (n=1)",
        f"ResNet-50 {GPU_COLUMN} ×": "1.00",
        f"RNN {GPU_COLUMN}": "16.0 (n=1) · 85.5 %",
        f"RNN {GPU_COLUMN} ×": "1.00",
    }
    assert table["TensorFlow"] == {
        f"CNN {CPU_COLUMN}": "",
        f"CNN {CPU_COLUMN} ×": "",  # unsupported: left out
        f"CNN {GPU_COLUMN}": "57.0 (n=1) · 77.1 %",
        f"CNN {GPU_COLUMN} ×": "1.12",  # 57 / 51
        f"ResNet-50 {GPU_COLUMN}": "",
        f"ResNet-50 {GPU_COLUMN} ×": "",  # not run
        f"RNN {GPU_COLUMN}": "failed",
        f"RNN {GPU_COLUMN} ×": "",
    }
    assert "All runs: fp32, data synthetic, preset full." in text
    # hyperfine's sentence; one run on a side: the ratio has no interval, and says so
    assert (
        f"PyTorch ran 1.12× faster than TensorFlow on CNN {GPU_COLUMN} (n=1: no interval)" in text
    )
    # the legend names what the table shows, and only that
    legend = text.split("\n\n")[0]
    assert "failed: the run failed" in legend
    assert (
        "blank: not run, or refused before running (unsupported; `--status all` shows "
        "them)" in legend
    )
    assert "DenseNet" not in legend and "invalid:" not in legend and "—:" not in legend


def test_csv_has_one_flat_row_per_run(current, tmp_path):
    out = tmp_path / "report"
    command.main([str(current), "--out", str(out), "--no-charts"])
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(CURRENT)  # repeats are rows of their own here
    torch_gpu_cnn = [
        r for r in rows if (r["framework"], r["task"], r["device"]) == ("torch", "cnn", "gpu")
    ]
    assert sorted(float(r["train_seconds"]) for r in torch_gpu_cnn) == [50.0, 51.0, 54.0]
    assert {r["hardware"] for r in torch_gpu_cnn} == {P100}
    failed = next(r for r in rows if r["status"] == "failed")
    assert (failed["framework"], failed["task"], failed["train_seconds"]) == (
        "tensorflow",
        "rnn",
        "",
    )
    assert failed["error"] == "tensorflow rnn: failed on purpose"
    resnet = next(r for r in rows if r["task"] == "resnet50")
    assert float(resnet["seconds_per_1000_images"]) == 1.9
    assert json.loads(resnet["framework_versions"]) == {"torch": "9.9"}


def test_png_charts_show_the_medians(current, tmp_path):
    out = tmp_path / "report"
    assert command.main([str(current), "--out", str(out)]) == 0
    for task in ("cnn", "resnet50", "rnn"):
        assert (out / f"{task}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", task
    grid = Grid(collect([current], every=True))  # refused runs too (`--status all`)
    axes = charts.task_figure(grid, "cnn").axes[0]
    heights = {
        (bars.get_label(), round(bar.get_x() + bar.get_width() / 2, 3)): bar.get_height()
        for bars in axes.containers
        if isinstance(bars, BarContainer)
        for bar in bars
    }
    # rows PyTorch (x=0), TensorFlow (x=1); columns CPU (left), GPU (right)
    assert heights == {(CPU_COLUMN, -0.2): 1500.0, (GPU_COLUMN, 0.2): 51.0, (GPU_COLUMN, 1.2): 57.0}
    texts = [t.get_text() for t in axes.texts]
    assert "unsupported" in texts  # TensorFlow's unsupported CPU run is marked, not drawn


def test_baseline_flags_slower_less_accurate_and_failed(current, tmp_path):
    old = write_results(tmp_path / "baseline", BASELINE)
    out = tmp_path / "report"
    status = command.main([str(current), "--baseline", str(old), "--out", str(out), "--no-charts"])
    assert status == 1  # something is flagged
    text = (out / "report.md").read_text()
    assert "2 of 4 configurations found in both flagged" in text
    assert "2 need ≥ 2 runs each to be judged" in text
    # one line per configuration: (framework, task, hardware) -> the other cells
    lines = [
        line
        for line in text.split("Against the baseline")[1].splitlines()
        if line.startswith(("| PyTorch", "| TensorFlow"))
    ]
    cells = {
        tuple(c.strip() for c in line.split("|")[1:4]): [c.strip() for c in line.split("|")[4:-1]]
        for line in lines
    }
    # 4 in both, 2 in the current results only (the unsupported one is left out)
    assert len(cells) == len(lines) == 6
    assert cells[("PyTorch", "CNN", f"{GPU_COLUMN} fp32")] == [
        "45.5 (45.0–46.0, n=2) · 80.1 %",
        "51.0 (50.0–54.0, n=3) · 77.6 %",
        "0.89× (0.83–0.92)",
        "-2.5",
        "**slower, less accurate**",
    ]
    # one run each: said, not flagged (a busy machine moves one run by more than 10 %)
    assert cells[("PyTorch", "RNN", f"{GPU_COLUMN} fp32")][2:] == [
        "0.99× (0.99–0.99)",
        "-0.1",
        "needs ≥ 2 runs each (has 1 and 1)",
    ]
    assert cells[("TensorFlow", "RNN", f"{GPU_COLUMN} fp32")][1:] == [
        "failed",
        "",
        "",
        "**failed**",
    ]
    assert cells[("TensorFlow", "CNN", f"{GPU_COLUMN} fp32")][4].startswith("needs ≥ 2 runs each")
    assert cells[("PyTorch", "CNN", f"{CPU_COLUMN} fp32")][4] == "no baseline"


def test_baseline_threshold_is_respected(current, tmp_path):
    old = write_results(tmp_path / "baseline", BASELINE[:2])
    grid, base = Grid(collect([current])), Grid(collect([old]))
    # 51 against 45.5 is 1.12x slower: flagged at 10 %, not at 15 %; accuracy -2.5: not at 3
    findings = baseline.compare(grid, base, slower=0.15, accuracy_drop=0.03)
    matched = [f for f in findings if f.baseline is not None]
    assert [(f.verdict, f.flagged) for f in matched] == [("ok", False)]
    findings = baseline.compare(grid, base, slower=0.10, accuracy_drop=0.03)
    assert [f.verdict for f in findings if f.flagged] == ["slower"]
    with pytest.raises(ValueError):
        baseline.compare(grid, base, slower=-0.1)


def test_baseline_from_other_hardware_matches_nothing(current, tmp_path):
    other = tmp_path / "other" / "job"
    other.mkdir(parents=True)
    (other / "result.json").write_text(
        json.dumps(make_result("torch", "cnn", 40.0, 0.78, gpu="Tesla V100-SXM2-16GB"))
    )
    out = tmp_path / "report"
    assert (
        command.main(
            [str(current), "--baseline", str(other.parent), "--out", str(out), "--no-charts"]
        )
        == 0
    )
    assert "No configuration matches" in (out / "report.md").read_text()


def test_reference_2018_is_shown_beside_and_in_full(current, tmp_path):
    out = tmp_path / "report"
    assert command.main([str(current), "--reference", "--out", str(out), "--no-charts"]) == 0
    text = (out / "report.md").read_text()
    ours = parse_table(text)
    assert ours["PyTorch"]["CNN K80 (2018)"] == "169"  # full runs, total time: like for like
    assert ours["PyTorch"]["ResNet-50 P100 (2018)"] == "1.9"
    assert ours["TensorFlow"]["RNN P100 (2018)"] == "22"
    assert "Tesla K80 or Tesla P100 GPU, FP32, CUDA 8, cuDNN 6" in text
    full = parse_table(text.split("2018 reference")[1])
    assert len(full) == 13 and full["MXNet (Gluon)"]["ResNet-50 K80"] == ""


def test_reference_data_file_is_specs_table():
    """reference_2018.csv holds exactly SPEC.md's 2018 table."""
    spec = SPEC_MD.read_text().split("## The 2018 reference results")[1]
    lines = [line for line in spec.splitlines() if line.startswith("|")][2:]
    columns = [
        ("cnn", "K80"),
        ("cnn", "P100"),
        ("resnet50", "K80"),
        ("resnet50", "P100"),
        ("rnn", "K80"),
        ("rnn", "P100"),
    ]
    expected = {}
    for line in lines:
        name, *values = [c.strip() for c in line.strip().strip("|").split("|")]
        expected.update({(name, t, g): v for (t, g), v in zip(columns, values) if v})
    assert reference_2018.load().texts == expected


def test_unreadable_result_files_are_skipped(current, tmp_path, capsys):
    (current / "broken").mkdir()
    (current / "broken" / "result.json").write_text("{not json")
    assert len(collect([current], every=True)) == len(CURRENT)
    assert "skipping" in capsys.readouterr().err


def test_bad_command_lines(tmp_path, capsys):
    assert command.main([str(tmp_path)]) == 2  # no results
    assert command.main([str(tmp_path / "missing")]) == 2
    assert command.main(["--bogus"]) == 2
    assert command.main([]) == 2
    assert "no result.json" in capsys.readouterr().err


def test_configurations_differing_in_an_option_get_rows_of_their_own(tmp_path):
    for i, compile_ in enumerate([False, True, True]):
        d = tmp_path / f"job{i}"
        d.mkdir()
        r = make_result("torch", "resnet50", 2.0 + i, options={"compile": compile_})
        (d / "result.json").write_text(json.dumps(r))
    grid = Grid(collect([tmp_path]))
    assert grid.rows == ["PyTorch [compile=False]", "PyTorch [compile=True]"]
    # one hardware and precision: the columns need no label
    summary = grid.cells[("PyTorch [compile=True]", "resnet50", "")].summary(grid.metric)
    assert summary.median == 3.5


def test_frameworks_sharing_a_display_name_keep_rows_of_their_own(tmp_path):
    for i, framework in enumerate(["torch", "tensorflow"]):
        r = make_result(framework, "rnn", 10.0 + i, 0.85)
        r["config"]["framework"]["display_name"] = "Same"
        (tmp_path / f"job{i}").mkdir()
        (tmp_path / f"job{i}" / "result.json").write_text(json.dumps(r))
    grid = Grid(collect([tmp_path]))
    assert grid.rows == ["Same (tensorflow)", "Same (torch)"]


def test_scaling_section_pairs_each_n_device_configuration_with_its_one_device_twin(tmp_path):
    """devices=N against devices=1 of the same configuration: speed-up and efficiency from
    the runs' throughputs (medians over repeats); a twin differing in anything else (here
    the batch size) is no pair."""
    specs = [(1, 64, 100.0), (1, 64, 110.0), (2, 64, 150.0), (4, 64, 200.0), (2, 32, 90.0)]
    for i, (devices, batch, examples_per_second) in enumerate(specs):
        r = make_result(
            "torch", "densenet", 1000.0 / examples_per_second, 0.7, device="cpu", seed=i
        )
        r["config"]["devices"] = devices
        r["config"]["task"]["batch_size"] = batch
        with_throughput(r, examples_per_second)
        (tmp_path / f"job{i}").mkdir()
        (tmp_path / f"job{i}" / "result.json").write_text(json.dumps(r))
    out = tmp_path / "report"
    assert command.main([str(tmp_path), "--out", str(out), "--no-charts"]) == 0
    text = (out / "report.md").read_text()
    section = text[text.index("Data-parallel scaling") :]
    rows = {(r["devices"], r["speed-up"]): r for r in parse_table(section).values()}
    single = 105.0  # the median of the one-device repeats
    assert (
        rows[("2", f"{150 / single:.2f}x")]["scaling efficiency"]
        == f"{100 * 150 / single / 2:.1f} %"
    )
    assert (
        rows[("4", f"{200 / single:.2f}x")]["scaling efficiency"]
        == f"{100 * 200 / single / 4:.1f} %"
    )
    assert len(rows) == 2  # the batch-32 run has no one-device twin
    with open(out / "results.csv") as f:
        efficiency = {
            (row["devices"], row["examples_per_second"]): row["scaling_efficiency"]
            for row in csv.DictReader(f)
        }
    assert float(efficiency[("2", "150.0")]) == pytest.approx(150 / single / 2)
    assert efficiency[("1", "100.0")] == "" and efficiency[("2", "90.0")] == ""


FAST = ["framework=fake", "preset=smoke"]


def test_report_html_into_an_existing_file_is_one_line(run_bench, tmp_path):
    run = run_bench(*FAST, "task=cnn")
    assert run.returncode == 0, run.output
    page = tmp_path / "page.html"
    page.write_text("mine")
    report = run_bench("report", str(run.result_paths[0]), "--no-charts", "--html", str(page))
    assert report.returncode == 2 and "Traceback" not in report.output, report.output
    assert (
        f"report: --html {page} is a file; --html names the directory that gets index.html"
    ) in report.output
    assert page.read_text() == "mine"


def test_report_on_a_directory_named_result_json(run_bench, tmp_path):
    (tmp_path / "odd" / "result.json").mkdir(parents=True)
    run = run_bench("report", str(tmp_path / "odd"), "--no-charts")
    assert run.returncode == 2 and "Traceback" not in run.output, run.output
    assert "no result.json found" in run.output


def test_several_wide_configurations_share_one_warning_widest_first(tmp_path):
    """Three configurations whose two runs lie past 1.5× apart (a noisy machine): one warning
    line for all, the widest named first, with how far apart; one within it is not named."""
    specs = [
        ("torch", "cnn", 50.0, 0.78, "ok", "gpu"),
        ("torch", "cnn", 90.0, 0.78, "ok", "gpu"),  # 1.80×
        ("torch", "rnn", 10.0, 0.85, "ok", "gpu"),
        ("torch", "rnn", 30.0, 0.85, "ok", "gpu"),  # 3.00×
        ("tensorflow", "cnn", 40.0, 0.78, "ok", "gpu"),
        ("tensorflow", "cnn", 64.0, 0.78, "ok", "gpu"),  # 1.60×
        ("tensorflow", "rnn", 20.0, 0.85, "ok", "gpu"),
        ("tensorflow", "rnn", 21.0, 0.85, "ok", "gpu"),  # 1.05×: not wide
    ]
    out = tmp_path / "report"
    assert command.main([str(write_results(tmp_path / "r", specs)), "--out", str(out)]) == 0
    warnings = json.loads((out / "report.json").read_text())["warnings"]
    (wide,) = [w for w in warnings if "1.5× apart" in w]
    assert wide.startswith("3 of 4 configurations' runs lie more than 1.5× apart"), wide
    assert wide.endswith(": PyTorch, RNN 3.00×; PyTorch, CNN 1.80×; TensorFlow, CNN 1.60×."), wide
    assert not [w for w in warnings if "× apart" in w and w != wide]
