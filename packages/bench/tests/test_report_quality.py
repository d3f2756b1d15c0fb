"""Speed at equal quality, through `python -m bench` and `report` on real runs of the numpy
stand-in: every ratio with its interval ("no difference shown" where it holds 1), a
configuration below its quality target or at chance never ranked faster, the warnings, a
second axis within one framework compared against its baseline value, the time-to-target
table, the learning curves (PNG and the page's SVG), refused runs out of the tables, and the
comparison=quality preset. Speed comparisons here hold on a busy machine: they rest on sleeps
of tens of milliseconds per batch, or on the recorded figures themselves."""

import csv
import json
import re
from pathlib import Path

from mdtable import parse_table

from bench.report import document

FAST = ["framework=fake", "task=cnn", "preset=smoke"]
SCHEMA = Path(document.__file__).with_name("report.schema.json")


def report(run_bench, *paths, out, args=()):
    """`report PATHS --out OUT ARGS`: (the run, report.md's text, report.json)."""
    run = run_bench("report", *map(str, paths), "--out", str(out), *args)
    assert run.returncode in (0, 1), run.output
    return run, (out / "report.md").read_text(), json.loads((out / "report.json").read_text())


def row_of(table, part):
    """The one entry of `table` whose key holds `part`."""
    (found,) = [row for row in table if part in row]
    return table[found]


def test_an_interval_that_holds_one_reads_no_difference_shown(run_bench, bench_env, tmp_path):
    """A: one run fast, one slow (200 ms more per batch); B: both in the middle (100 ms): A's
    runs straddle B's unless a busy machine slows one run's NumPy (about 15 ms a batch) by
    100 ms a batch more than another's, so the ratio's interval holds 1. A and B differ only
    in an option that training never reads (the evaluation's delay)."""
    sized = ["preset.train_examples=512", "preset.epochs=2"]  # 8 batches an epoch
    for eval_delay, extras in (("0", ("0", "200")), ("1", ("100", "100"))):
        for seed, extra in enumerate(extras):
            run = run_bench(
                *FAST,
                *sized,
                f"seed={seed}",
                f"framework.options.eval_delay_ms={eval_delay}",
                env=dict(bench_env, FAKE_EXTRA_DELAY_MS=extra),
            )
            assert run.returncode == 0, run.output
    _, text, data = report(
        run_bench, tmp_path / "results", out=tmp_path / "r", args=["--no-charts"]
    )
    assert re.search(
        r"No difference shown between Fake \(numpy\) \[eval_delay_ms=\d\.0\] and "
        r"Fake \(numpy\) \[eval_delay_ms=\d\.0\] \(\d+\.\d\d×, (\d+\.\d\d)–(\d+\.\d\d)\) "
        r"on CNN",
        text,
    ), text
    low, high = map(
        float,
        re.search(
            r"No difference shown .*?\((?:\d+\.\d\d)×, (\d+\.\d\d)–"
            r"(\d+\.\d\d)\)",
            text,
        ).groups(),
    )
    assert low <= 1 <= high
    assert "faster than" not in text.split("By steady-state throughput")[1].split("\n\n")[1]
    # the × cell of the slower median carries the same interval
    relative = [c for c in data["cells"] if c["relative_low"] is not None]
    assert len(relative) == 1 and relative[0]["relative_low"] <= 1 <= relative[0]["relative_high"]
    # A's runs lie far apart: a warning, one line, naming it
    (spread,) = [w for w in data["warnings"] if "apart" in w and not w.startswith("Not fit")]
    assert spread.startswith("Fake (numpy) [eval_delay_ms=0.0], CNN: its 2 runs lie")
    assert any(line.endswith(spread) for line in text.splitlines())
    # two runs give no 95 % interval of a median (bench check's interval rule asks six): no
    # cell is marked; a warning naming the undisturbed rule says why neither may be ranked
    a_row = next(  # the main table's row (the time-to-target table's is not held to it)
        line for line in text.splitlines() if line.startswith("| Fake (numpy) [eval_delay_ms=0.0]")
    )
    assert "‡" not in a_row, a_row
    (unfit,) = [w for w in data["warnings"] if "(undisturbed:" in w]
    assert unfit.startswith("Not fit to rank by `python -m bench check` (undisturbed: fewer than 6")
    assert "Fake (numpy) [eval_delay_ms=0.0], CNN" in unfit


def test_below_its_target_or_at_chance_a_configuration_is_never_faster(run_bench, tmp_path):
    """The fastest runs learn nothing (at chance) or miss an unreachable target; the slow one
    (20 ms a batch) reaches its target: it alone is ranked, by speed and by time to target."""
    runs = [
        run_bench(*FAST, "framework.options.skip_training=true"),
        run_bench(*FAST, "task.quality_target.synthetic=0.99"),
        run_bench(*FAST, "framework.options.delay_ms=20"),
    ]
    assert [r.returncode for r in runs] == [0, 0, 0], [r.output for r in runs]
    chance, missed, good = (r.result for r in runs)
    assert missed["stats"]["target_reached"] is False and good["stats"]["target_reached"]
    assert chance["accuracy"] < 0.15
    for metric in ("steady", "time_to_target"):
        _, text, data = report(
            run_bench,
            tmp_path / "results",
            out=tmp_path / metric,
            args=["--no-charts", "--metric", metric],
        )
        table = parse_table(text)
        relative = {
            row: [v for k, v in cells.items() if k.endswith("×")][0] for row, cells in table.items()
        }
        assert row_of(relative, "skip_training=True") == "at chance"
        assert row_of(relative, "0.99") == "below target"
        assert row_of(relative, "delay_ms=20.0") == "1.00"
        sentences = text.split("By ")[1]
        assert "faster than" not in sentences, sentences
        assert re.search(r"Not compared: .*\(below target\), .*\(at chance\) on CNN", sentences), (
            sentences
        )
        warnings = [w for w in data["warnings"] if "not ranked" in w]
        assert len(warnings) == 2, data["warnings"]
        assert any("is at chance (a uniform guess: 10.0 %)" in w for w in warnings)
        assert any("did not reach the quality target 99.0 %" in w for w in warnings)
        statuses = {c["row"]: c["quality"]["status"] for c in data["cells"]}
        assert sorted(statuses.values()) == ["at_chance", "below_target", "reached"]
    # by time to target the run that missed it is "not reached": no figure, never a rank
    assert row_of(parse_table(text), "0.99")["CNN"].startswith("not reached")


def test_a_precision_sweep_is_compared_with_fp32(run_bench, tmp_path):
    """`-m precision=fp32,bf16`: each precision is its own column, and bf16 gets its ratio
    against fp32 in the same framework, with the interval and the time to target."""
    sweep = run_bench(
        "-m",
        *FAST,
        "precision=fp32,bf16",
        "seed=0,1",
        "framework.capabilities.precisions.cpu=[fp32,bf16]",
        "framework.options.delay_ms=20",
        "sweep=precisions",
    )
    assert sweep.returncode == 0, sweep.output
    assert "precision=bf16 | precision=fp32 |" in sweep.output  # the sweep's own summary
    _, text, data = report(
        run_bench,
        tmp_path / "results" / "sweeps" / "precisions",
        out=tmp_path / "r",
        args=["--no-charts"],
    )
    section = text[text.index("Within each framework") :]
    row = parse_table(section)["Fake (numpy)"]
    assert (row["task"], row["setting"], row["against"]) == (
        "CNN",
        "precision=bf16",
        "precision=fp32",
    )
    assert re.fullmatch(r"\d\.\d\d× \(\d\.\d\d–\d\.\d\d\)", row["speed this / baseline"])
    assert re.match(r"\d\.\d\d× \(\d\.\d\d–\d\.\d\d\)", row["time to target this / baseline"])
    (setting,) = data["settings"]
    assert setting["speed"]["low"] is not None and setting["speed"]["verdict"] in (
        "faster",
        "slower",
        "no difference shown",
    )
    assert setting["time_to_target"]["ratio"] > 0
    import jsonschema

    jsonschema.validate(data, json.loads(SCHEMA.read_text()))
    # the same table into a documentation block, as docs/precision.md's is made
    runs = tmp_path / "results" / "sweeps" / "precisions"
    page = tmp_path / "precision.md"
    page.write_text(
        f"# Precisions\n\n<!-- bench report: {runs} --table settings -->\nstale\n"
        "<!-- end bench report -->\n"
    )
    run = run_bench("report", str(runs), "--table", "settings", "--into", str(page))
    assert run.returncode == 0, run.output
    written = page.read_text()
    assert "stale" not in written and written.endswith("<!-- end bench report -->\n")
    assert parse_table(written[written.index("Within each framework") :])["Fake (numpy)"] == row
    # fp32 alone: nothing to set against its baseline, refused with what the table needs
    fp32 = sorted(str(p) for p in runs.glob("*precision=fp32*"))
    assert len(fp32) == 2
    alone = tmp_path / "fp32.md"
    block = f"<!-- bench report: {' '.join(fp32)} --table settings -->\n<!-- end bench report -->\n"
    alone.write_text(block)
    run = run_bench("report", *fp32, "--table", "settings", "--into", str(alone))
    assert run.returncode == 2, run.output
    assert "--table settings: no configuration in" in run.output
    assert alone.read_text() == block


def test_an_option_is_compared_with_its_default_and_the_slower_setting_reads_slower(
    run_bench, tmp_path
):
    """delay_ms=60 against its default (0.0, from the framework's config): 60 ms of sleep in
    each of 8 batches an epoch makes it several times slower on any machine."""
    sweep = run_bench(
        "-m",
        *FAST,
        "preset.train_examples=512",
        "preset.epochs=2",
        "seed=0,1",
        "framework.options.delay_ms=0,60",
        "sweep=option",
    )
    assert sweep.returncode == 0, sweep.output
    _, text, data = report(
        run_bench,
        tmp_path / "results" / "sweeps" / "option",
        out=tmp_path / "r",
        args=["--no-charts"],
    )
    (setting,) = data["settings"]
    assert (setting["setting"], setting["against"]) == ("delay_ms=60.0", "delay_ms=0.0")
    assert setting["speed"]["verdict"] == "slower" and setting["speed"]["high"] < 1
    assert re.search(
        r"delay_ms=60\.0 ran \d+\.\d\d× \(\d+\.\d\d–\d+\.\d\d\) slower than "
        r"delay_ms=0\.0",
        text,
    ), text


def test_time_to_target_table_curves_and_the_page(run_bench, tmp_path):
    sweep = run_bench(
        "-m", "framework=fake", "task=cnn,rnn", "preset=smoke", "seed=0,1", "sweep=curves"
    )
    assert sweep.returncode == 0, sweep.output
    out, page = tmp_path / "r", tmp_path / "page"
    run, text, data = report(
        run_bench,
        tmp_path / "results" / "sweeps" / "curves",
        out=out,
        args=["--html", str(page), "--no-code"],
    )
    assert (
        "Time to the quality target (targets: CNN 85.0 % test accuracy (synthetic data); "
        "RNN 85.0 % test accuracy (synthetic data))" in text
    )
    ttt = parse_table(text[text.index("Time to the quality target") :])
    cell = ttt["Fake (numpy)"]["CNN"]
    assert re.match(r"\d+\.\d+ \(\d+\.\d+–\d+\.\d+, n=2\) · \d+\.\d %", cell), cell
    assert {c["task"] for c in data["time_to_target"]["cells"]} == {"cnn", "rnn"}
    for task in ("cnn", "rnn"):
        assert (out / f"curves_{task}.png").read_bytes()[:4] == b"\x89PNG"
    html = (page / "index.html").read_text()
    assert 'id="curves"' in html and 'id="time-to-target"' in html
    charts = re.findall(r'<svg class="curve-chart".*?</svg>', html, re.S)
    assert len(charts) == 4  # accuracy and loss, per task
    # every point's values on hover (a <title>), a legend button per line, no network
    points = re.findall(
        r'<(?:circle|rect|polygon) class="point"[^>]*><title>([^<]*)</title>', charts[0]
    )
    assert points and all(
        re.match(
            r"Fake \(numpy\): epoch \d, [\d.]+ s \(runs [\d.]+ to "
            r"[\d.]+ s\), test accuracy [\d.]+ % \(runs [\d.]+ % to "
            r"[\d.]+ %\), 2 runs$",
            p,
        )
        for p in points
    ), points[:3]
    assert re.search(r'<button type="button" data-series="0" aria-pressed="true"', html)
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_refused_runs_stay_out_of_the_tables_unless_asked(run_bench, tmp_path):
    assert run_bench(*FAST).returncode == 0
    gpu = run_bench(*FAST, "device=gpu")
    assert gpu.returncode == 2 and gpu.result["status"] in ("unsupported", "not_installed")
    run, text, data = report(
        run_bench, tmp_path / "results", out=tmp_path / "r", args=["--no-charts"]
    )
    assert "GPU" not in text.split("\n\n")[1]  # the table: no GPU column
    assert data["left_out"] == {gpu.result["status"]: 1}
    assert (
        f"report: left out 1 refused before running (1 {gpu.result['status']}; "
        f"--status all includes them)" in run.output
    )
    with open(tmp_path / "r" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["status"] for r in rows) == sorted(["ok", gpu.result["status"]])
    assert {"seed", "peak_rss_bytes", "time_to_target_s"} <= set(rows[0])
    ok = next(r for r in rows if r["status"] == "ok")
    assert ok["seed"] == "0" and int(ok["peak_rss_bytes"]) > 0
    _, every, _ = report(
        run_bench,
        tmp_path / "results",
        out=tmp_path / "all",
        args=["--no-charts", "--status", "all"],
    )
    table = parse_table(every)
    assert len([k for k in table["Fake (numpy)"] if not k.endswith("×")]) == 2


def test_quality_preset_is_a_sweep_of_the_training_tasks_to_their_targets(run_bench, tmp_path):
    """comparison=quality: the training tasks, seeds 0, 1, 2 in rounds with an A/A control,
    init=neutral and stop_at_target (the fake framework has no neutral weights: its runs take
    init=native here)."""
    run = run_bench("-m", "comparison=quality", "init=native", "task=cnn", timeout=900)
    assert run.returncode == 0, run.output
    results = [json.loads(p.read_text()) for p in run.result_paths]
    # three rounds, each with the A/A control's second run of the one configuration
    assert sorted(r["config"]["seed"] for r in results if not r["config"]["twin"]) == [0, 1, 2]
    assert sorted(r["config"]["seed"] for r in results if r["config"]["twin"]) == [0, 1, 2]
    assert {r["config"]["round"]["of"] for r in results} == {3}
    assert {
        (r["config"]["task"]["stop_at_target"], r["config"]["preset"]["name"]) for r in results
    } == {(True, "standard")}
    assert all(r["stats"]["target_reached"] for r in results)
    assert all(r.get("stopped_at_target") == len(r["curve"]) for r in results)
    sweep = run.result_paths[0].parent.parent
    assert sweep.name.startswith("comparison=quality")
    _, text, _ = report(run_bench, sweep, out=tmp_path / "r", args=["--no-charts"])
    assert "Time to the quality target" in text


def test_the_quality_preset_declares_neutral_weights():
    """The preset's own settings: every framework from the same neutral weights."""
    from omegaconf import OmegaConf

    import bench

    data = OmegaConf.to_container(OmegaConf.load(bench.conf_dir() / "comparison" / "quality.yaml"))
    assert {"override /init": "neutral"} in data["defaults"]
    assert {"override /preset": "standard"} in data["defaults"]
    params = data["hydra"]["sweeper"]["params"]
    assert (params["task"], params["seed"]) == ("cnn,rnn", "0,1,2")
    assert data["task"]["stop_at_target"] is True
