"""The code view's model: every framework's task module (and the package modules it uses),
cut into blocks at its top-level definitions, the blocks of all frameworks aligned by name,
each line highlighted by Pygments, and the lines that apply a framework switch marked.

Frameworks come from conf/framework/*.yaml (`package`); their source from the checkout's
packages/*/ (a row written in R, `r_models`: packages/r/<r_models>/<task>.R, its loop.R and
the R worker, cut at their top-level `name <- ...` assignments) or, failing that, wherever
Python would find the package (found, never imported: the orchestrator imports no framework).
Whatever top-level functions, classes and names two modules share (build_model, slots,
train_epoch, predict, Model, ...) sit on the same row, so the same step is on the same line
whatever the contract's current names are.
"""

import ast
import csv
import html
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, SLexer

from bench_shared import spec

from ... import project_dir

# the checkout this orchestrator runs from (packages/bench/bench/report/site/ -> the checkout)
CHECKOUT = Path(__file__).resolve().parents[5]

SWITCHES_CSV = Path(__file__).with_name("switches.csv")
TASK_ORDER = tuple(spec.TASKS)  # SPEC.md's order


@dataclass
class Framework:
    """A conf/framework/<name>.yaml, as the code view needs it."""

    name: str
    display_name: str
    package: str
    tasks: list
    options: dict
    task_options: dict = field(default_factory=dict)  # task -> conf/task_framework overrides
    r_models: str = None  # a row written in R: packages/r/<r_models>/

    @property
    def source_key(self):
        """What the code view groups by: the Python package, or the R row's model folder."""
        return f"r/{self.r_models}" if self.r_models else self.package


def frameworks(conf: Path):
    """Every framework config, with its per-task option overrides, in name order."""
    found = []
    for path in sorted((conf / "framework").glob("*.yaml")):
        data = OmegaConf.to_container(OmegaConf.load(path))
        name = data.get("name", path.stem)
        fw = Framework(
            name=name,
            display_name=data.get("display_name") or name,
            package=data["package"],
            options=data.get("options") or {},
            tasks=list((data.get("capabilities") or {}).get("tasks") or []),
            r_models=data.get("r_models"),
        )
        for task in fw.tasks:
            override = conf / "task_framework" / f"{task}_{name}.yaml"
            if override.is_file():
                tree = OmegaConf.to_container(OmegaConf.load(override))
                fw.task_options[task] = (tree.get("framework") or {}).get("options") or {}
        found.append(fw)
    return found


def package_dir(package: str, checkout: Path = None):
    """The directory of a (dotted) package: packages/*/<top>/ of the checkout (default: this
    orchestrator's, then the project directory's) first, else where Python's import system
    would find the top-level package (find_spec of a top-level name does not import it). None
    when none has it."""
    top, *rest = package.split(".")
    roots = [checkout] if checkout is not None else [CHECKOUT, project_dir()]
    candidates = [
        p for root in roots for p in sorted((root / "packages").glob(f"*/{top}/__init__.py"))
    ]
    base = candidates[0].parent if candidates else None
    if base is None:
        spec = importlib.util.find_spec(top)
        if spec is not None and spec.submodule_search_locations:
            base = Path(list(spec.submodule_search_locations)[0])
    if base is None:
        return None
    directory = base.joinpath(*rest)
    return directory if (directory / "__init__.py").is_file() else None


def _module_file(directory: Path):
    for path in (directory.with_suffix(".py"), directory / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_files(path: Path, package: str, pkg_dir: Path):
    """The files of the framework's own modules that `path` imports, in import order: what the
    task module builds on (its shared training loop, weight conversion, ...)."""
    top = package.split(".")[0]
    top_dir = pkg_dir.parents[len(package.split(".")) - 2] if "." in package else pkg_dir
    here = path.parent
    found = []

    def module(dotted, level=0):
        if level:  # relative: from the file's own package, up level - 1 packages
            base = here.parents[level - 2] if level > 1 else here
            return base.joinpath(*dotted.split(".")) if dotted else base
        parts = dotted.split(".")
        return top_dir.joinpath(*parts[1:]) if parts[0] == top else None

    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            base = module(node.module or "", node.level)
            if base is None:
                continue
            for alias in node.names:  # a submodule by that name, else a name of the module
                found.append(_module_file(base / alias.name) or _module_file(base))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                base = module(alias.name)
                if base is not None:
                    found.append(_module_file(base))
    unique = []
    for f in found:
        if f is not None and f != path and f not in unique:
            unique.append(f)
    return unique


@dataclass
class Block:
    """Lines [start, end) (0-based) of a file: its head (docstring, imports) or one top-level
    definition with the decorators and comment lines just above it."""

    key: str
    start: int
    end: int


R_ASSIGNMENT = re.compile(r"^([A-Za-z.][\w.]*)\s*<-")  # a top-level R assignment


def r_anchors(source: str):
    """(name, first line index) of every top-level `name <- ...` of an R file, in order."""
    lines = source.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = R_ASSIGNMENT.match(line)
        if match:
            start = index
            while start > 0 and lines[start - 1].startswith("#"):
                start -= 1  # a comment that introduces the definition belongs to it
            found.append((match.group(1), start))
    return found


def anchors(source: str, r=False):
    """(name, first line index) of every top-level def, class and assigned name, in order."""
    if r:
        return r_anchors(source)
    lines = source.splitlines()
    found = []
    for node in ast.parse(source).body:
        names = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        if not names:
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while start > 0 and lines[start - 1].startswith("#"):
            start -= 1  # a comment that introduces the definition belongs to it
        found.append((names[0], start))
    return found


def blocks(source: str, file_key: str, r=False):
    """The file cut at its anchors: a head block keyed by the file, then one per definition."""
    count = len(source.splitlines())
    marks = [(file_key, 0)] + [(k, s) for k, s in anchors(source, r) if s > 0]
    result = []
    for (key, start), nxt in zip(marks, marks[1:] + [(None, count)]):
        if nxt[1] > start or key == file_key:
            result.append(Block(key, start, nxt[1]))
    return result


def lcs_pairs(a, b):
    """Index pairs of a longest common subsequence of two key lists."""
    n, m = len(a), len(b)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
            )
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def align(sequences):
    """One row order for several key sequences: {column: [keys]} -> (row keys, {column: [row
    index of each key]}). Each sequence is merged in turn into the rows so far along their
    longest common subsequence; the rest is inserted where it stands. A key that two
    sequences share in the same relative order ends up on one row."""
    rows = []  # [key, id]
    placed = {}
    for column, keys in sequences.items():
        pairs = lcs_pairs([r[0] for r in rows], keys)
        merged, slots, i, j = [], [], 0, 0
        for gi, kj in pairs + [(len(rows), len(keys))]:
            merged.extend(rows[i:gi])
            for key in keys[j:kj]:
                row = [key, object()]
                merged.append(row)
                slots.append(row)
            if gi < len(rows):
                merged.append(rows[gi])
                slots.append(rows[gi])
            i, j = gi + 1, kj + 1
        rows = merged
        placed[column] = slots
    index = {id(r): n for n, r in enumerate(rows)}
    return [r[0] for r in rows], {c: [index[id(r)] for r in s] for c, s in placed.items()}


@dataclass
class Switch:
    frameworks: list
    option: str
    pattern: re.Pattern
    reason: str


def switches(path: Path = SWITCHES_CSV):
    """The switch table: which framework option a code line applies, and why (README)."""
    with open(path, newline="") as f:
        return [
            Switch(
                row["frameworks"].split(), row["option"], re.compile(row["pattern"]), row["reason"]
            )
            for row in csv.DictReader(f)
        ]


@dataclass
class Line:
    number: int  # 1-based, in its file
    html: str  # Pygments' spans, closed on the line
    switches: list  # [(option, reason)] applied on this line


@dataclass
class Source:
    """One framework package's code for one task: files, blocks and highlighted lines."""

    id: str  # HTML-safe column id
    package: str
    frameworks: list  # framework names that run this code
    files: list  # [(label, path)]
    cells: dict = field(default_factory=dict)  # row index -> (file label or None, [Line])
    missing: str = ""  # why there is no code (no source found)


_LEXER = PythonLexer(stripnl=False, ensurenl=True)
_R_LEXER = SLexer(stripnl=False, ensurenl=True)
_FORMATTER = HtmlFormatter(nowrap=True)


# Pygments wraps every token; those of token types its style leaves plain (names, spaces,
# most punctuation; whitespace, whose colour shows nothing) are unwrapped: a third of the
# page's size, nothing of its look
_STYLED = set(re.findall(r"^\.code \.([\w-]+) ", _FORMATTER.get_style_defs(".code"), re.M)) - {"w"}
_PLAIN = re.compile(r'<span class="(?!(?:%s)")[\w-]+">([^<]*)</span>' % "|".join(_STYLED))


def highlighted_lines(source: str, r=False):
    text = _PLAIN.sub(r"\1", highlight(source, _R_LEXER if r else _LEXER, _FORMATTER))
    return text.split("\n")[: len(source.splitlines())]


def pygments_css(scope=".code"):
    return _FORMATTER.get_style_defs(scope)


@dataclass
class TaskView:
    task: str
    rows: list  # row keys
    sources: list  # [Source]
    frameworks: list  # [Framework] with this task, in menu order
    source_of: dict  # framework name -> Source.id
    description: str = ""  # conf/task/<task>.yaml's


def task_files(fw: Framework, task: str, checkout: Path = None):
    """[(label, path)]: the task module, the package modules it imports, the package itself and
    the modules that imports. A row written in R: its task file, loop.R and the R worker."""
    if fw.r_models:
        return r_task_files(fw, task, checkout)
    directory = package_dir(fw.package, checkout)
    if directory is None:
        raise FileNotFoundError(
            f"package {fw.package} of framework={fw.name} not found in the "
            f"checkout's packages/ nor on this Python's path"
        )
    main = directory / f"{task}.py"
    if not main.is_file():
        raise FileNotFoundError(f"{fw.package}.{task}: no {main}")
    init = directory / "__init__.py"
    files = [main] + imported_files(main, fw.package, directory)
    # the package itself, and what it builds on (e.g. bench_mxnet.runtime: threads, engine)
    for path in [init] + imported_files(init, fw.package, directory):
        if path not in files:
            files.append(path)
    root = directory.parents[len(fw.package.split(".")) - 1]
    return [(str(p.relative_to(root)), p) for p in files]


def r_task_files(fw: Framework, task: str, checkout: Path = None):
    r_dir = (checkout or CHECKOUT) / "packages" / "r"
    main = r_dir / fw.r_models / f"{task}.R"
    if not main.is_file():
        raise FileNotFoundError(f"framework={fw.name} ({task}): no {main}")
    files = [main] + [
        p for p in (r_dir / fw.r_models / "loop.R", r_dir / "worker.R") if p.is_file()
    ]
    return [(str(p.relative_to(r_dir.parent)), p) for p in files]


def task_view(task, fws, table, checkout: Path = None):
    """The aligned code of every framework that has `task`."""
    fws = [fw for fw in fws if task in fw.tasks]
    by_package, source_of = {}, {}
    for fw in fws:
        source = by_package.get(fw.source_key)
        if source is None:
            sid = re.sub(r"[^A-Za-z0-9_-]", "-", fw.source_key)
            source = by_package[fw.source_key] = Source(sid, fw.source_key, [], [])
            try:
                source.files = task_files(fw, task, checkout)
            except FileNotFoundError as exc:
                source.missing = str(exc)
        source.frameworks.append(fw.name)
        source_of[fw.name] = source.id
    sequences, pieces = {}, {}
    for source in by_package.values():
        keys, cut = [], []
        for label, path in source.files:
            text = path.read_text()
            r = path.suffix == ".R"
            lines = highlighted_lines(text, r)
            raw = text.splitlines()
            marks = [s for s in table if set(s.frameworks) & set(source.frameworks)]
            file_key = "file:" + Path(label).name
            for block in blocks(text, file_key, r):
                keys.append(block.key)
                cut.append(
                    (
                        label if block.key == file_key else None,
                        [
                            Line(
                                n + 1,
                                lines[n],
                                [(s.option, s.reason) for s in marks if s.pattern.search(raw[n])],
                            )
                            for n in range(block.start, block.end)
                        ],
                    )
                )
        sequences[source.id], pieces[source.id] = keys, cut
    rows, placed = align(sequences)
    for source in by_package.values():
        source.cells = dict(zip(placed[source.id], pieces[source.id]))
    return TaskView(task, rows, list(by_package.values()), fws, source_of)


def views(conf: Path, checkout: Path = None):
    """One TaskView per task any framework declares, SPEC's tasks first."""
    fws, table = frameworks(conf), switches()
    tasks = sorted(
        {t for fw in fws for t in fw.tasks},
        key=lambda t: (TASK_ORDER.index(t) if t in TASK_ORDER else len(TASK_ORDER), t),
    )
    found = [task_view(task, fws, table, checkout) for task in tasks]
    for view in found:
        path = conf / "task" / f"{view.task}.yaml"
        if path.is_file():
            view.description = str(OmegaConf.load(path).get("description") or "")
    return found


def escape(text):
    return html.escape(str(text), quote=True)
