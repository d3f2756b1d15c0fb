"""Reading result files, the one way every command reads them (report, check, reproduce, a
sweep resuming): strict JSON, the schema (bench.run.record), the figures re-derived from the
measurements (bench.run.evidence), and every string escaped so that a hostile one cannot act
on a terminal (bench.console.escape). A file given twice, a directory and a file inside it,
or two byte-identical copies are one result, and the reading says which were left out.
"""

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..console import escape, escaped
from . import evidence, record


class Unreadable(ValueError):
    """A result file no command may use; `rule` names what it breaks (`json`, `schema`,
    `figures`), the message says where, in one bounded line."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule = rule


def load(path: Path):
    """A result as a dict, its strings escaped; Unreadable naming the rule and the field when
    it is not strict JSON, does not follow the schema, or publishes a figure that does not
    follow from its own measurements."""
    try:
        result = record.load(path)
    except ValueError as exc:
        rule = "json" if str(exc).startswith(("not JSON", "not strict JSON")) else "schema"
        raise Unreadable(rule, escape(str(exc))[:300]) from None
    wrong = evidence.problems(result)
    if wrong:
        more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
        raise Unreadable("figures", escape(wrong[0])[:300] + more)
    return escaped(result)


def files(paths):
    """Every result.json under the given directories, plus the files given, in order;
    FileNotFoundError naming a path that does not exist."""
    for path in map(Path, paths):
        if path.is_dir():  # a directory itself named result.json is searched, not read
            yield from sorted(p for p in path.rglob("result.json") if p.is_file())
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")


@dataclass
class Reading:
    """What reading some paths found: the results (each once), the files that could not be
    used and why, and the files left out as another's duplicate."""

    results: list = field(default_factory=list)  # [(path, result dict)]
    unreadable: list = field(default_factory=list)  # [(path, Unreadable)]
    duplicates: list = field(default_factory=list)  # [(path, the path it repeats, how)]

    def duplicates_text(self) -> str:
        """`2 duplicate files left out (a/result.json: the same file as b/result.json, ...)`,
        or ""."""
        if not self.duplicates:
            return ""
        shown = "; ".join(f"{p}: {how} as {first}" for p, first, how in self.duplicates[:3])
        more = f"; and {len(self.duplicates) - 3} more" if len(self.duplicates) > 3 else ""
        n = len(self.duplicates)
        return f"{n} duplicate file{'s' if n > 1 else ''} not counted ({shown}{more})"


def read(paths) -> Reading:
    """Every result file found under `paths` (bench.run.results.files), each read once."""
    reading = Reading()
    seen_paths, seen_bytes = {}, {}
    for path in files(paths):
        real = path.resolve()
        if real in seen_paths:
            reading.duplicates.append((path, seen_paths[real], "the same file"))
            continue
        seen_paths[real] = path
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            reading.unreadable.append((path, Unreadable("json", f"unreadable ({exc.strerror})")))
            continue
        if digest in seen_bytes:
            reading.duplicates.append((path, seen_bytes[digest], "the same content"))
            continue
        seen_bytes[digest] = path
        try:
            reading.results.append((path, load(path)))
        except Unreadable as exc:
            reading.unreadable.append((path, exc))
    return reading
