"""The documentation: README.md, docs/*.md and the package READMEs. Its measured tables are what
`python -m bench report <args> --into FILE` makes now from the committed result files; every
relative link resolves (files, and headings for #anchors); the README stays a few screens with a
table of contents; no prose carries history (session numbers, issue numbers, dated diaries)."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import CURRENT, write_results

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
MARKER = re.compile(r"^<!-- bench report: (.*) -->$")
END_MARKER = "<!-- end bench report -->"
README_LINES = 250


def documents():
    """The top README and the docs pages: where generated tables may live."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def markdown_files():
    return [*documents(), *sorted((ROOT / "packages").glob("*/README.md"))]


def relative(path):
    return path.relative_to(ROOT).as_posix()


def report_blocks(path):
    """[(line number, the marker's arguments)] of the generated blocks in one file (a marker
    shown inside a fenced code block is an example, not a block)."""
    found, fenced = [], False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := MARKER.match(line)):
            found.append((number, shlex.split(m.group(1))))
    return found


def bench(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "bench", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def bench_report(*args, cwd=ROOT):
    return bench("report", *args, cwd=cwd)


# 1: the generated tables ------------------------------------------------------------------

BLOCKS = [(path, number, args) for path in documents() for number, args in report_blocks(path)]


def test_the_readme_has_its_generated_results_table():
    assert any(path == README for path, _, _ in BLOCKS), (
        "README.md has no `<!-- bench report: ... -->` block"
    )


def test_the_readme_says_what_bench_check_finds_in_its_results():
    """The README's results section says how many of its configurations `python -m bench
    check` finds fit to rank and, where it names a second bundle made independently, how many
    orders both declare and how many flip: the check, run on the committed results, must say
    the same."""
    text = " ".join(README.read_text().split())
    said = re.search(
        r"`python -m bench check (\S+)(?: --agree-with (\S+))?` finds (\d+) of (\d+) "
        r"configurations",
        text,
    )
    assert said, "README.md does not say what `python -m bench check` finds in its results"
    bundle, other, valid, total = said.groups()
    done = bench("check", bundle, *(["--agree-with", other] if other else []), "--json")
    assert done.returncode in (0, 1), done.stderr
    found = json.loads(done.stdout)
    valid_now = sum(c["valid"] for c in found["configurations"])
    assert (valid_now, len(found["configurations"])) == (int(valid), int(total)), said.group(0)
    if other:
        agreed = re.search(r"of the (\d+) pairs both bundles order, (\d+) flip", text)
        assert agreed, "README.md names a second bundle but not how the two agree"
        agreement = found["agreement"]
        assert (agreement["both"], agreement["flips"]) == tuple(map(int, agreed.groups()))


@pytest.mark.parametrize(
    "path, number, args", BLOCKS, ids=[f"{relative(p)}:{n}" for p, n, _ in BLOCKS]
)
def test_a_generated_table_is_what_the_committed_results_give(path, number, args, tmp_path):
    sources = [ROOT / a for a in args if not a.startswith("-") and "/" in a]
    if not any(next(s.rglob("result.json"), None) for s in sources if s.is_dir()):
        pytest.skip(
            f"{relative(path)}:{number}: no result.json committed in "
            f"{' '.join(args)} yet; add the results, then run "
            f"`python -m bench report {shlex.join(args)} --into {relative(path)}`"
        )
    copy = tmp_path / path.name
    copy.write_text(path.read_text())
    done = bench_report(*args, "--into", copy)
    assert done.returncode == 0, done.stderr
    assert copy.read_text() == path.read_text(), (
        f"{relative(path)}:{number} differs from what the committed results give; run "
        f"`python -m bench report {shlex.join(args)} --into {relative(path)}`"
    )


def test_into_replaces_only_the_block_of_its_arguments(tmp_path):
    results = write_results(tmp_path / "results", CURRENT)
    page = tmp_path / "page.md"
    example = f"```\n<!-- bench report: {results} --metric total -->\nexample\n{END_MARKER}\n```\n"
    page.write_text(
        f"# A page\n\n{example}<!-- bench report: {results} --metric total -->\n"
        f"stale\n{END_MARKER}\n\n<!-- bench report: {results} --metric steady -->\n"
        f"kept\n{END_MARKER}\n\nThe end.\n"
    )
    done = bench_report(results, "--metric", "total", "--into", page, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "stale" not in text and "kept" in text and text.endswith("\nThe end.\n")
    assert example in text  # a marker shown in a fenced code block is an example, not a block
    assert "| framework |" in text and "Cells: total time" in text
    assert "51.0 (50.0–54.0, n=3) · 77.6 %" in text  # torch's three CNN runs on the P100
    assert not (tmp_path / "results" / "reports").exists()  # nothing else is written
    again = bench_report(results, "--metric", "total", "--into", page, cwd=tmp_path)
    assert again.returncode == 0 and page.read_text() == text


def test_into_refuses_a_file_without_the_marker_or_its_end(tmp_path):
    results = write_results(tmp_path / "results", CURRENT)
    page = tmp_path / "page.md"
    page.write_text("# A page without a marked block\n")
    done = bench_report(results, "--into", page, cwd=tmp_path)
    assert done.returncode == 2
    assert f"no line `<!-- bench report: {results} -->`" in done.stderr
    assert END_MARKER in done.stderr
    page.write_text(f"<!-- bench report: {results} -->\nno end\n")
    done = bench_report(results, "--into", page, cwd=tmp_path)
    assert done.returncode == 2 and "no `<!-- end bench report -->` line closes" in done.stderr
    assert page.read_text() == f"<!-- bench report: {results} -->\nno end\n"


# 2: links ---------------------------------------------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)[^`].*?\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def prose(text):
    """The text less fenced code blocks and code spans (a link inside code is no link); line
    breaks kept, so that line numbers hold."""

    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    return CODE_SPAN.sub(blank, FENCE.sub(blank, text))


def slug(heading):
    """GitHub's anchor of a heading: the rendered text, lower case, punctuation but - and _
    dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text.replace("`", "")).replace(" ", "-")


def anchors(path):
    """Every heading's anchor in a markdown file (repeats numbered as GitHub does)."""
    found, seen = set(), {}
    for line in FENCE.sub("", path.read_text()).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_links(path):
    """'file:line: link (why)' for each relative link of `path` that does not resolve."""
    problems = []
    text = prose(path.read_text())
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, ...
            continue
        where = f"{relative(path)}:{text.count(chr(10), 0, m.start()) + 1}: {target}"
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{where} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{where} (no heading #{anchor} in {relative(linked)})")
    return problems


@pytest.mark.parametrize("path", markdown_files(), ids=relative)
def test_every_relative_link_resolves(path):
    assert broken_links(path) == []


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# Other page\n\n## Its part\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#its-part) [here](#page) `[code](gone.md)`\n"
        "[gone](gone.md) [bad](other.md#no-part) ![img](img.png)\n"
        "[web](https://example.org/x.md)\n"
    )
    assert broken_links(page) == [
        "page.md:4: gone.md (no such file)",
        "page.md:4: other.md#no-part (no heading #no-part in other.md)",
        "page.md:4: img.png (no such file)",
    ]


def test_headings_slug_as_github_does():
    assert (
        slug("The Rosetta check: `python -m bench verify`")
        == "the-rosetta-check-python--m-bench-verify"
    )
    assert slug("Switches (`framework.options.*`)") == "switches-frameworkoptions"
    assert slug("Compare with an earlier run") == "compare-with-an-earlier-run"


# 3: the README's size and table of contents -----------------------------------------------


def test_the_readme_is_a_few_screens_with_a_table_of_contents():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_LINES, (
        f"README.md has {len(lines)} lines; at most {README_LINES} (depth goes to docs/)"
    )
    text = prose(README.read_text())
    headings = [m.group(1) for m in re.finditer(r"^## (.*)$", text, re.M)]
    contents = next((h for h in headings if slug(h) in ("contents", "table-of-contents")), None)
    assert contents, "README.md has no `## Contents` heading"
    start = text.index(f"## {contents}") + len(contents) + 3
    toc = text[start : text.find("\n## ", start)]
    listed = re.findall(r"^\s*[-*\d.]+\s*\[[^\]]*\]\(#([^)]+)\)", toc, re.M)
    expected = [slug(h) for h in headings if h != contents]
    assert listed == expected, "the table of contents lists every ## heading, in order"


# 4: no history in prose ---------------------------------------------------------------------

MONTH = "January|February|March|April|May|June|July|August|September|October|November|December"
HISTORY = [
    re.compile(r"\bstop \d+\b", re.I),  # a development session's number
    re.compile(r"\bissue \d+\b", re.I),  # the tracker's, not the reader's
    re.compile(r"\bearlier session\b", re.I),
    re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d\b"),  # an ISO date
    re.compile(rf"\b\d{{1,2}} ({MONTH}) \d{{4}}\b"),  # 4 December 2026
    re.compile(rf"\b({MONTH}) (\d{{1,2}}, )?\d{{4}}\b"),  # December 2026, December 4, 2026
]


def without_generated_blocks(text):
    """The text with each generated table blanked (its legend and cells may hold dates)."""
    out, inside = [], False
    for line in text.splitlines():
        if MARKER.match(line):
            inside = True
        elif line == END_MARKER:
            inside = False
        out.append("" if inside else line)
    return out


def yaml_comments(path):
    """Each line's comment (after a '#' that starts the line or follows a space)."""
    return [
        (m.group(1) if (m := re.search(r"(?:^|\s)#(.*)$", line)) else "")
        for line in path.read_text().splitlines()
    ]


def history_lines(lines, name):
    return [
        f"{name}:{number}: {line.strip()}"
        for number, line in enumerate(lines, 1)
        if any(pattern.search(line) for pattern in HISTORY)
    ]


PROSE = [*markdown_files(), *sorted((ROOT / "conf").rglob("*.yaml"))]


@pytest.mark.parametrize("path", PROSE, ids=relative)
def test_prose_and_comments_say_what_is_not_what_was(path):
    lines = (
        yaml_comments(path)
        if path.suffix == ".yaml"
        else without_generated_blocks(path.read_text())
    )
    assert history_lines(lines, relative(path)) == []


def test_the_history_check_finds_each_marker():
    lines = [
        "measured at stop 28",
        "see issue 19",
        "an earlier session found",
        "on 2026-12-04",
        "quiet, 4 December 2026",
        "AMD EPYC, December 2026",
        "what a user may do in 2026",
        "Theano 1.0.5 (2020)",
    ]
    found = history_lines(lines, "x")
    assert len(found) == 6 and not any("may do" in f or "1.0.5" in f for f in found)


def readme_environments(text):
    """{environment: {framework rows}} from the README's environment table."""
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"`\w+`", cells[0]) and cells[0] != "`environment`":
            found[cells[0].strip("`")] = set(re.findall(r"`(\w+)`", cells[1]))
    return found


def declared_environments():
    """{environment: {framework rows}} from conf/framework/*.yaml's nox_session, and the
    environments noxfile.py's ENVIRONMENTS names (read with ast: no nox needed)."""
    import ast

    import yaml

    rows = {}
    for path in sorted((ROOT / "conf" / "framework").glob("*.yaml")):
        declared = yaml.safe_load(path.read_text())
        rows.setdefault(declared["nox_session"], set()).add(declared["name"])
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    nox_envs = next(
        {k.value for k in node.value.keys}
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", "") == "ENVIRONMENTS" for t in node.targets)
    )
    return rows, nox_envs


def test_the_readme_environment_table_is_the_noxfile_s_and_the_configs():
    """Every environment a framework config names is in noxfile.py and in the README's table,
    with the rows it serves; the R rows (same environments, `nox -s r`) in the sentence below."""
    text = README.read_text()
    table = readme_environments(text)
    rows, nox_envs = declared_environments()
    assert set(rows) <= nox_envs, sorted(set(rows) - nox_envs)
    assert set(table) == set(rows), (sorted(table), sorted(rows))
    for env, names in rows.items():
        python_rows = {n for n in names if not n.startswith("r_")}
        assert table[env] == python_rows, (env, table[env], python_rows)
        for r_row in names - python_rows:
            assert f"`{r_row}`" in text and f"`{env}`" in text, r_row


def test_the_environment_table_check_sees_a_missing_row():
    text = README.read_text().replace(", [`keras`](packages/keras/README.md)", "")
    assert readme_environments(text)["tensorflow"] == {"tensorflow"}
