"""The Rosetta page's model and its HTML: frameworks and their code found from conf/ and the
source tree, blocks aligned by name, switches marked, the results table's cells (every status
by its name), the environment, verify's deviations; the CLI writes one self-contained file."""

import html
import re
import sys
from pathlib import Path

import pytest
from sitepage import SHARED, Tables, body, write_results, write_verify

import bench
from bench.report import command
from bench.report.collection import Grid, collect
from bench.report.site import content, rosetta
from bench.run import capabilities

FAKE = Path(__file__).resolve().parent / "fake_framework"
# what the worker calls (bench_shared.worker); resnet50 is inference only
CONTRACT = {
    "cnn": {"build_model", "train_epoch", "predict"},
    "resnet50": {"build_model", "predict"},
    "rnn": {"build_model", "train_epoch", "predict"},
}


@pytest.fixture(scope="module")
def views():
    return {v.task: v for v in rosetta.views(bench.conf_dir())}


def test_frameworks_and_their_code_come_from_conf_and_the_source_tree(views):
    names = capabilities.framework_names()
    assert [fw.name for fw in rosetta.frameworks(bench.conf_dir())] == names
    declaring = {
        task: [n for n in names if task in capabilities.declared(n)["capabilities"]["tasks"]]
        for task in views
    }  # an inference runtime: resnet50 only
    for view in views.values():
        assert [fw.name for fw in view.frameworks] == declaring[view.task]
        for source in view.sources:
            assert not source.missing, source.missing
            label, path = source.files[0]
            if source.package.startswith("r/"):  # a row written in R: packages/r/<models>/
                assert label == f"{source.package}/{view.task}.R" and path.is_file()
                assert "r/worker.R" in dict(source.files)  # the R worker
                continue
            package = source.package.replace(".", "/")
            assert label == f"{package}/{view.task}.py" and path.is_file()
            assert f"{package}/__init__.py" in dict(source.files)  # the package's set-up
    # frameworks running one package share one column of code
    cnn = views["cnn"]
    assert cnn.source_of["chainer"] == cnn.source_of["chainer_ideep"]
    assert cnn.source_of["keras"] == cnn.source_of["keras_jax"] == cnn.source_of["keras_torch"]
    # an R row has its own column, though it drives the same package as a Python one
    assert cnn.source_of["r_mxnet"] != cnn.source_of["gluon"]
    packages = {
        fw.source_key for fw in rosetta.frameworks(bench.conf_dir()) if fw.name in declaring["cnn"]
    }
    columns = {cnn.source_of[n] for n in declaring["cnn"]}
    assert len(columns) == len(packages) < len(declaring["cnn"])


def test_the_task_modules_own_imports_are_shown(views):
    torch = next(s for s in views["cnn"].sources if s.package == "bench_torch")
    assert [label for label, _ in torch.files] == [
        "bench_torch/cnn.py",
        "bench_torch/loop.py",
        "bench_torch/weights.py",
        "bench_torch/__init__.py",
    ]
    gluon = next(s for s in views["cnn"].sources if s.package == "bench_mxnet.gluon")
    labels = [label for label, _ in gluon.files]
    assert labels[0] == "bench_mxnet/gluon/cnn.py"
    assert {"bench_mxnet/weights.py", "bench_mxnet/gluon/loop.py"} <= set(labels)


def _rows_of(view, source, name):
    return [i for i in sorted(source.cells) if view.rows[i] == name]


def _text(lines):
    return "\n".join(html.unescape(re.sub(r"<[^>]+>", "", line.html)) for line in lines)


def defined(source):
    """The top-level names of a source's task module (Python or R)."""
    path = source.files[0][1]
    return {name for name, _ in rosetta.anchors(path.read_text(), path.suffix == ".R")}


@pytest.mark.parametrize("task", ["cnn", "resnet50", "rnn"])
def test_the_contracts_functions_sit_on_one_row_in_every_framework(views, task):
    """Every name that all frameworks' task modules define (the worker's build_model,
    train_epoch, predict at least; weight loading, whatever it is called now) is on one row."""
    view = views[task]
    shared = set.intersection(*(defined(s) for s in view.sources))
    assert CONTRACT[task] <= shared
    for name in shared:
        rows = {s.id: _rows_of(view, s, name)[0] for s in view.sources}
        assert len(set(rows.values())) == 1, (name, rows)
        for source in view.sources:  # and that row starts with the definition
            code = [
                ln
                for ln in _text(source.cells[rows[source.id]][1]).splitlines()
                if not ln.startswith(("#", "@"))
            ]
            assert re.match(rf"(def |class )?{name}\b", code[0]), (source.id, code[0])


def test_blocks_cut_at_top_level_definitions_with_their_decorators_and_comments():
    source = (
        '"""Doc."""\nimport os\n\n\n# why f\n@decorate\ndef f():\n    # inner\n'
        "    return 1\nX = 2\n\n\nclass C:\n    pass\ng = f\n"
    )
    assert [(b.key, b.start, b.end) for b in rosetta.blocks(source, "file:m.py")] == [
        ("file:m.py", 0, 4),
        ("f", 4, 9),
        ("X", 9, 12),
        ("C", 12, 14),
        ("g", 14, 15),
    ]


def test_r_files_are_cut_at_their_top_level_assignments_with_their_comments():
    source = (
        "# the model\nCNN <- spec$CNN\n\n# why f\nf <- function(x) {\n"
        "  inner <- 1\n  x\n}\nslots <- function(m) m\n"
    )
    assert [(b.key, b.start, b.end) for b in rosetta.blocks(source, "file:m.R", r=True)] == [
        ("file:m.R", 0, 3),
        ("f", 3, 8),
        ("slots", 8, 9),
    ]


def test_alignment_keeps_each_order_and_shares_rows_by_name():
    sequences = {
        "a": ["head", "build", "slots", "train", "predict"],
        "b": ["head", "Net", "build", "train", "helper", "predict"],
        "c": ["head", "predict", "build"],
    }  # out of order: one of the two aligns
    rows, placed = rosetta.align(sequences)
    for column, keys in sequences.items():
        assert placed[column] == sorted(placed[column])  # each file keeps its order
        assert [rows[i] for i in placed[column]] == keys
    assert placed["a"][1] == placed["b"][2]  # build
    assert placed["a"][3] == placed["b"][3]  # train
    assert placed["a"][4] == placed["b"][5]  # predict
    assert placed["c"][2] == placed["a"][1] or placed["c"][1] == placed["a"][4]


def test_own_package_imports_are_resolved_without_importing(tmp_path):
    pkg = tmp_path / "packages" / "thing" / "bench_thing"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("import this_framework_does_not_exist\nHELPER = 1\n")
    (pkg / "loop.py").write_text("x = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "tools.py").write_text("y = 1\n")
    (pkg / "cnn.py").write_text(
        "import numpy\nfrom . import loop, HELPER\n"
        "from bench_thing.sub import tools\nfrom .loop import x\n"
        "import bench_thing.sub\n"
    )
    assert rosetta.package_dir("bench_thing", tmp_path) == pkg
    assert rosetta.package_dir("bench_thing.sub", tmp_path) == pkg / "sub"
    assert rosetta.package_dir("bench_no_such_thing", tmp_path) is None
    assert rosetta.imported_files(pkg / "cnn.py", "bench_thing", pkg) == [
        pkg / "loop.py",
        pkg / "__init__.py",
        pkg / "sub" / "tools.py",
        pkg / "sub" / "__init__.py",
    ]
    assert "this_framework_does_not_exist" not in sys.modules


def test_a_framework_found_only_on_the_python_path(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(FAKE))
    assert rosetta.package_dir("bench_fake", tmp_path) == FAKE / "bench_fake"


def test_every_switch_names_a_declared_option_and_marks_a_line(views):
    table = rosetta.switches()
    declared = {fw.name: fw.options for fw in rosetta.frameworks(bench.conf_dir())}
    marked = {
        (fw, option)
        for view in views.values()
        for source in view.sources
        for fw in source.frameworks
        for lines in source.cells.values()
        for line in lines[1]
        for option, _ in line.switches
    }
    for switch in table:
        assert switch.reason
        for fw in switch.frameworks:
            assert switch.option in declared[fw], (fw, switch.option)
            assert (fw, switch.option) in marked, f"{fw} {switch.option}: no line matches"
    assert ("torch", "channels_last") in marked and ("gluon", "hybridize") in marked


def test_highlighted_lines_are_the_source_lines():
    path = Path(rosetta.__file__)
    text = path.read_text()
    lines = rosetta.highlighted_lines(text)
    assert len(lines) == len(text.splitlines())
    for raw, marked in zip(text.splitlines(), lines):
        assert html.unescape(re.sub(r"<[^>]+>", "", marked)) == raw
        assert marked.count("<span") == marked.count("</span>")  # closed on its line
    assert '<span class="k">def</span>' in "".join(lines)


def test_results_table_names_every_status(tmp_path):
    grid = Grid(collect([write_results(tmp_path / "r")], every=True))  # `--status all`
    table = content.results_table(grid)
    assert [(c.task, c.label, c.kind) for c in table.columns] == [
        ("cnn", "", "train"),
        ("resnet50", "", "inference"),
        ("rnn", "", "train"),
    ]
    cells = {row: [(c.status, c.time_text, c.accuracy_text) for c in cs] for row, cs in table.rows}
    assert cells == {
        "MXNet (Gluon)": [
            ("ok", "43.0 (n=1)", "70.0"),
            ("not run", "not run", ""),
            ("unsupported", "unsupported", ""),
        ],
        "PyTorch": [
            ("ok", "51.0 (50.0–54.0, n=3)", "77.6"),
            ("ok", "1.90 (n=1)", ""),
            ("ok", "16.0 (n=1)", "85.5"),
        ],
        "TensorFlow": [
            ("ok", "57.0 (n=1)", "77.1"),
            ("invalid", "invalid", ""),
            ("failed", "failed", ""),
        ],
    }
    assert [c.relative for c in dict(table.rows)["PyTorch"]] == ["1.19", "1.00", "1.00"]
    failed = dict(table.rows)["TensorFlow"][2]
    assert failed.note == "tensorflow rnn: failed on purpose"


def test_hosts_and_verify_records(tmp_path):
    grid = Grid(collect([write_results(tmp_path / "r")]))
    (host,) = content.hosts(grid.runs)
    facts = dict(host.facts)
    assert host.hostname == "node1" and facts["CPU"].startswith("Intel(R) Xeon(R) Gold 6148")
    assert facts["memory"] == "64.0 GiB"
    assert facts["speed-relevant variables"] == "OMP_NUM_THREADS=8"
    assert [f[:3] for f in host.frameworks] == [
        ("MXNet (Gluon)", "gluon 9.9", "3.11.7"),
        ("PyTorch", "torch 9.9", "3.11.7"),
        ("TensorFlow", "tensorflow 9.9", "3.11.7"),
    ]
    table = content.verify_table(write_verify(tmp_path / "v"))  # a directory: its verify.json
    assert table.frameworks == ["torch", "tensorflow"] and table.tasks == ["cnn", "rnn"]
    assert table.checks["torch", "cnn"]["output_error"] == 3.5e-07
    with pytest.raises(FileNotFoundError, match="verify.json"):
        content.verify_table(tmp_path / "nothing")
    (tmp_path / "bad.json").write_text('{"status": "ok"}')
    with pytest.raises(ValueError, match="not a `bench verify` result"):
        content.verify_table(tmp_path / "bad.json")


def _page(tmp_path, *args):
    out = tmp_path / "site"
    assert command.main([*args, "--html", str(out), "--out", str(tmp_path / "md")]) == 0
    return (out / "index.html").read_text()


def test_page_is_self_contained_and_readable_without_script(tmp_path):
    text = _page(
        tmp_path, str(write_results(tmp_path / "r")), "--verify", str(write_verify(tmp_path / "v"))
    )
    # nothing is fetched: every src/href is an in-page anchor or inline data
    assert re.findall(r'(?<![\w-])(?:src|href)="(?!#|data:)[^"]*"', text) == []
    assert "<link" not in text and "@import" not in text and "url(" not in text
    assert text.count('<img src="data:image/svg+xml;base64,') == 3  # one chart per task
    tables = Tables(text)
    results = tables.find("relative speed and test accuracy")
    assert f"All runs: {SHARED}, data synthetic, preset full." in text
    rows = {r[0][1]: [c[1] for c in r[1:]] for r in body(results)}
    # total time (every run is preset=full), × the fastest row's (Gluon's 43 s), accuracy
    assert rows["PyTorch"] == [
        "51.0 (50.0–54.0, n=3)",
        "1.19",
        "77.6",
        "1.90 (n=1)",
        "1.00",
        "16.0 (n=1)",
        "1.00",
        "85.5",
    ]
    assert rows["TensorFlow"] == ["57.0 (n=1)", "1.33", "77.1", "invalid", "", "failed", "", ""]
    # Gluon's unsupported RNN is refused, not run: left out of the table by default
    assert rows["MXNet (Gluon)"] == ["43.0 (n=1)", "1.00", "70.0", "not run", "", "not run", "", ""]
    status = {
        c[1]: c[2]["class"]
        for r in body(results)
        for c in r[1:]
        if "status" in c[2].get("class", "") and c[1]
    }
    assert status == {
        "invalid": "status status-invalid",
        "failed": "status status-failed",
        "not run": "status status-not-run",
    }
    checks = {r[0][1]: [c[1] for c in r[1:]] for r in tables.find("verify.json")["rows"][1:]}
    assert checks == {
        "torch": [
            "pass output 3.5e-07 · training 2.9e-05",
            "FAIL output 2.0e-03 · training 4.1e-02loss trajectory differs",
        ],
        "tensorflow": ["not_installed no environment", "not run"],
    }
    env = tables.find("Frameworks as the workers on node1")
    assert [r[0][1] for r in env["rows"][1:]] == ["MXNet (Gluon)", "PyTorch", "TensorFlow"]
    assert "@media print" in text


def test_page_without_results_is_the_code_view(run_bench, tmp_path):
    run = run_bench("report", "--html", str(tmp_path / "site"))
    assert run.returncode == 0, run.output
    text = (tmp_path / "site" / "index.html").read_text()
    assert 'id="results"' not in text and 'id="verify"' not in text
    for name in capabilities.framework_names() + ["fake"]:  # the test's conf/ adds `fake`
        assert f'<option value="{name}"' in text
    assert "bench_fake/cnn.py" in text and "bench_torch/cnn.py" in text
    assert f"report: {tmp_path / 'site' / 'index.html'}" in run.output


def test_report_html_command_lines(tmp_path, capsys):
    assert command.main(["--html"]) == 2
    assert command.main([str(tmp_path), "--verify", str(tmp_path)]) == 2
    assert "--verify goes with --html" in capsys.readouterr().err
    assert command.main(["--html", str(tmp_path / "s"), "--verify", str(tmp_path / "no")]) == 2
    assert "no such verify.json" in capsys.readouterr().err


def test_page_from_a_real_sweep_of_the_fake_framework(run_bench, tmp_path):
    sweep = run_bench(
        "-m",
        "framework=fake",
        "task=cnn,resnet50",
        "preset=smoke",
        "sweep=s",
        "framework.options.fault=none,crash",
    )
    assert sweep.returncode == 1, sweep.output  # the crashing ones fail
    run = run_bench(
        "report",
        str(tmp_path / "results" / "sweeps" / "s"),
        "--html",
        str(tmp_path / "site"),
        "--no-charts",
    )
    assert run.returncode == 0, run.output
    tables = Tables((tmp_path / "site" / "index.html").read_text())
    results = tables.find("relative speed and test accuracy")
    assert results["caption"].startswith("Steady-state throughput")  # a smoke sweep
    texts = {r[0][1]: [c[1] for c in r[1:]] for r in body(results)}
    assert set(texts) == {"Fake (numpy) [fault=crash]", "Fake (numpy) [fault=none]"}
    assert texts["Fake (numpy) [fault=crash]"] == ["failed", "", "", "failed", ""]
    cnn, cnn_x, accuracy, resnet, resnet_x = texts["Fake (numpy) [fault=none]"]
    assert float(cnn.split()[0]) > 0 and float(resnet.split()[0]) > 0  # examples/s, images/s
    assert cnn_x == resnet_x == "1.00" and float(accuracy) > 50
