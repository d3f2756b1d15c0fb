"""No stale reference: every repository path named in the prose of the repository (docs, the
READMEs, YAML and R comments, Python comments and docstrings) exists, and every module of
the project named there (bench.run.slurm, bench_shared.quality.accuracy, ...) is one; Python
comments, like the docs (test_docs.py), say what is, not what was. Read with ast, tokenize
and regular expressions: the frameworks need not be importable here."""

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# repository files whose text is not the project's prose: recorded results, generated locks
NOT_PROSE = ("docs/results/", "locks/")
# a path as prose writes it: a top folder of the repository or of a package, then parts
PATH = re.compile(
    r"(?<![\w./<>{}$@:-])((?:\.\./)*(?:\.ci|packages|shared|conf|docs|benchmarks|"
    r"locks|bench|run|report|data|tools|tests|bench_\w+)/[\w.<>{}*-]*[\w*>}]"
    r"(?:/[\w.<>{}*-]+)*/?)"
)
MODULE = re.compile(r"(?<![\w./-])((?:bench|bench_\w+)(?:\.[A-Za-z_]\w*)+)")
SUFFIXES = ("py", "json", "yaml", "md", "txt", "npz", "npy", "R", "log", "csv", "toml")
# a file named bare, without its folder: it must be some file of the repository, one the
# project writes when it runs, or another project's (named as theirs)
BARE = re.compile(
    r"(?<![\w./<>{}$@:-])([A-Za-z_][\w-]*\.(?:py|md|yaml|json|toml|R|csv|txt|sh))\b(?![\w/-])"
)
WRITTEN = {  # what runs, reports, caches and benchmark scripts write
    "run.json",
    "worker_result.json",
    "report.json",
    "report.md",
    "results.csv",
    "rounds.json",
    "verify.json",
    "summary.md",
    "history.md",
    "history.csv",
    "agreement.csv",
    "manifest.json",
    "peak.json",
    "bench-environment.json",
    "beside_torch.json",
    "beside_torch.md",
    "own_loops.json",
    "own_loops.md",
    "tune_defaults.json",
    "tune_defaults.md",
    "canary.json",
}
THEIRS = {  # other projects' files: a dataset's label file, Theano's, Keras's, Keras 3's
    "Data_Entry_2017.csv",
    "configdefaults.py",
    "keras.json",
    "layer.py",
}
HISTORY = re.compile(r"\b(?:issue \d+|stop \d+|earlier session)\b", re.I)


def listed():
    """Every file git lists in the working tree, tracked or new (not ignored)."""
    return subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def repository_files():
    return [ROOT / f for f in listed() if (ROOT / f).is_file() and not f.startswith(NOT_PROSE)]


def python_prose(text):
    """(line, text) of every comment and docstring."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0], token.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc and isinstance(node.body[0], ast.Expr):
                found += [
                    (node.body[0].lineno + i, line) for i, line in enumerate(doc.splitlines())
                ]
    return sorted(found)


def prose(path, text=None):
    """(line, text) of what a reader reads in a file: all of a markdown file, the comments of
    YAML, TOML, R and shell, the comments and docstrings of Python."""
    text = path.read_text(errors="replace") if text is None else text
    if path.suffix == ".py":
        return python_prose(text)
    if path.suffix == ".md":
        return list(enumerate(text.splitlines(), 1))
    if path.suffix in (".yaml", ".yml", ".toml", ".cfg", ".R", ".sh") or path.name == "run":
        return [
            (n, line[line.index("#") :])
            for n, line in enumerate(text.splitlines(), 1)
            if "#" in line
        ]
    return []


def path_exists(named, where):
    """Whether a path named in `where` is one: from the repository's root, a package's root,
    the orchestrator's package or the file's own folder. A placeholder (<fw>, {x}, *) is a
    pattern, not a path."""
    if any(c in named for c in "<>{}*"):
        return True
    parts = where.relative_to(ROOT).parts
    bases = [
        ROOT,
        ROOT / "packages",
        ROOT / "packages/bench/bench",
        where.parent,
        *sorted(ROOT.glob("packages/*")),
    ]
    if parts[0] == "packages":
        bases.append(ROOT / "packages" / parts[1])
    return any((base / named).exists() for base in bases)


def project_modules():
    """{dotted name: file} of every module of the project's packages."""
    modules = {}
    for package in [*ROOT.glob("packages/*/bench*"), ROOT / "shared" / "bench_shared"]:
        if package.is_dir() and (package / "__init__.py").is_file():
            for file in package.rglob("*.py"):
                parts = file.relative_to(package.parent).with_suffix("").parts
                modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = file
    return modules


MODULES = project_modules()


def top_level_names(file):
    names = set()
    for node in ast.parse(file.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
    return names


def module_exists(name):
    """bench.run.slurm, bench.run.slurm.place, bench.run.sweep.SweepLock.on_multirun_end:
    the longest module prefix, then a name defined at its top level."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        module = ".".join(parts[:k])
        if module in MODULES:
            rest = parts[k:]
            return not rest or rest[0] in top_level_names(MODULES[module])
    return False


NAMES = {f.rsplit("/", 1)[-1] for f in listed()} | WRITTEN | THEIRS


def stale(path, text=None):
    """'file:line: what' for each path or module named in path's prose (or in `text`, as if
    it were path's) that does not exist, and each line that speaks of the project's history."""
    found = []
    for number, line in prose(path, text):
        line = re.sub(r"\S+://\S+", "", line)  # a URL's path is not the repository's
        where = f"{path.relative_to(ROOT)}:{number}"
        for match in PATH.finditer(line):
            named = match.group(1).rstrip(".,:;")
            if not path_exists(named, path):
                found.append(f"{where}: no such path {named}")
        for match in MODULE.finditer(line):
            name = match.group(1).rstrip(".")
            if name.rsplit(".", 1)[-1] not in SUFFIXES and not module_exists(name):
                found.append(f"{where}: no such module or name {name}")
        for match in BARE.finditer(line):
            if match.group(1) not in NAMES and not path_exists(match.group(1), path):
                found.append(f"{where}: no such file {match.group(1)}")
        if path.suffix == ".py" and HISTORY.search(line):
            found.append(f"{where}: history in a comment: {line.strip()}")
    return found


FILES = [p for p in repository_files() if prose(p)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_and_module_named_exists(path):
    assert stale(path) == []


def test_the_check_finds_a_gone_path_a_gone_module_and_history():
    text = (
        '"""See run/benchmark.py and bench/tune.py, bench.run.slurm.place and\n'
        'bench.run.slurm.gone, bench_shared.metrics, conf/framework/<fw>.yaml."""\n'
        "# the fix from issue 12\nx = 'data/not/prose.py'\n"
        "# written into run.json beside DESIGN.md and noxfile.py\n"
    )
    assert stale(ROOT / "packages" / "bench" / "bench" / "example.py", text) == [
        "packages/bench/bench/example.py:1: no such path bench/tune.py",
        "packages/bench/bench/example.py:2: no such module or name bench.run.slurm.gone",
        "packages/bench/bench/example.py:2: no such module or name bench_shared.metrics",
        "packages/bench/bench/example.py:3: history in a comment: # the fix from issue 12",
        "packages/bench/bench/example.py:5: no such file DESIGN.md",
    ]
