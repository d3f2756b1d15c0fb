"""A report section is one object (bench.report.sections): one added from outside bench, as a
plugin through the entry-point group `rosetta_bench.report_sections`, reaches report.md, report.json
and the page with no edit to their renderers; a plugin that cannot be loaded costs its own
section only, said on stderr."""

import json
import os
from pathlib import Path

from result_files import make_result

TESTS = Path(__file__).resolve().parent


def install_plugin(site, target):
    """A distribution's metadata in `site` (a directory on PYTHONPATH) whose entry point
    `rosetta_bench.report_sections` names `target` (module:object)."""
    info = site / "runs_per_framework_section-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: runs-per-framework-section\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[rosetta_bench.report_sections]\nruns = {target}\n")


def results(directory):
    specs = [("torch", 50.0, 0), ("torch", 52.0, 1), ("tensorflow", 57.0, 0)]
    for i, (framework, seconds, seed) in enumerate(specs):
        run = directory / f"job{i}"
        run.mkdir(parents=True)
        result = make_result(framework, "cnn", seconds, 0.78, seed=seed)
        (run / "result.json").write_text(json.dumps(result))
    return directory


def with_site(bench_env, site):
    path = os.pathsep.join([str(site), str(TESTS), bench_env["PYTHONPATH"]])
    return dict(bench_env, PYTHONPATH=path)


def test_a_plugin_section_reaches_the_markdown_the_json_and_the_page(
    run_bench, bench_env, tmp_path
):
    install_plugin(tmp_path / "site", "report_section_plugin:RunsPerFramework")
    env = with_site(bench_env, tmp_path / "site")
    out, page = tmp_path / "report", tmp_path / "page"
    run = run_bench(
        "report",
        str(results(tmp_path / "runs")),
        "--out",
        str(out),
        "--html",
        str(page),
        "--no-charts",
        "--no-code",
        env=env,
    )
    assert run.returncode == 0, run.output
    assert "Runs per framework: PyTorch 2, TensorFlow 1" in (out / "report.md").read_text()
    document = json.loads((out / "report.json").read_text())
    assert document["runs_per_framework"] == {"PyTorch": 2, "TensorFlow": 1}
    assert "comparisons" in document  # the built-in sections are still there
    html = (page / "index.html").read_text()
    assert '<section id="runs-per-framework"' in html
    assert 'href="#runs-per-framework"' in html  # and in the page's navigation
    assert "<td>2</td>" in html


def test_a_plugin_that_cannot_load_is_said_and_the_report_goes_on(run_bench, bench_env, tmp_path):
    install_plugin(tmp_path / "site", "no_such_module_here:Section")
    env = with_site(bench_env, tmp_path / "site")
    out = tmp_path / "report"
    run = run_bench(
        "report", str(results(tmp_path / "runs")), "--out", str(out), "--no-charts", env=env
    )
    assert run.returncode == 0, run.output
    assert "section runs (no_such_module_here:Section) left out: ModuleNotFoundError" in run.output
    assert "Traceback" not in run.output
    assert "runs_per_framework" not in json.loads((out / "report.json").read_text())
