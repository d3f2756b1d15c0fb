"""`python -m bench envs`: every framework row with its environment — built or not, its Python
and framework version, the command that builds it — and the system packages rows need beyond
their environment (Open MPI, R, an old CPython; Chromium for the page's browser test), found or
missing with the line that installs them.

Each built environment is compared with the lock that built it (bench.run.locks): locked,
drifted (naming the packages that differ), built with an override, or unlocked.

Nothing is imported here: each environment's interpreter is asked once (a subprocess that reads
installed packages' metadata, no framework import) and the answer cached per environment in the
cache directory until that environment changes.
"""

import argparse
import glob
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from .. import files, project_dir
from ..console import subcommand, text_table
from ..data.cache import cache_root
from ..errors import EnvironmentNotFound
from ..run import capabilities, environments, locks, system

# runs in the environment's interpreter, Python 3.6 included: its version, for each module
# whether it is there and the version of the distribution that provides it, and every
# installed distribution (name normalised as a lock writes it)
PROBE = r"""
import importlib.util, json, platform, sys
found, versions = {}, {}
for module in sys.argv[1:]:
    try:
        found[module] = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found[module] = False
try:
    from importlib.metadata import distributions
    dists = [(d.metadata["Name"], d.version, (d.read_text("top_level.txt") or "").split(),
              [str(f).split("/")[0] for f in (d.files or [])]) for d in distributions()]
except ImportError:  # Python < 3.8
    import pkg_resources
    dists = []
    for d in pkg_resources.working_set:
        top = d.get_metadata("top_level.txt").split() if d.has_metadata("top_level.txt") else []
        dists.append((d.project_name, d.version, top, []))
for module in sys.argv[1:]:
    for name, version, top, first in dists:
        if module in top or module in first:
            versions[module] = "%s %s" % (name, version)
            break
try:  # the runtime's reading (a distribution's METADATA, as a result records it)
    from bench_shared.environment import distributions as every
    every = every()
except ImportError:
    every = dict(("-".join(name.replace("_", "-").replace(".", "-").lower().split("-")),
                  version) for name, version, top, first in dists if name)
print(json.dumps({"python": platform.python_version(), "found": found, "versions": versions,
                  "distributions": every}))
"""


def _stamp(python):
    """What changes when the environment does: its interpreter and site-packages' mtimes."""
    prefix = Path(python).parent.parent
    paths = [Path(python), *map(Path, glob.glob(str(prefix / "lib" / "python*" / "site-packages")))]
    return [str(p.stat().st_mtime_ns) for p in paths if p.exists()]


def probe(python, modules, cache_dir=None, refresh=False):
    """The environment's answer to PROBE, cached in <cache>/envs/ until it changes; None when
    the interpreter does not run."""
    key = hashlib.sha1(f"{python} {' '.join(modules)}".encode()).hexdigest()[:16]
    cached = cache_root(cache_dir) / "envs" / f"{key}.json"
    stamp = _stamp(python)
    if not refresh:
        try:
            old = files.read_json(cached)
        except ValueError:
            old = None
        if old and old.get("stamp") == stamp:
            return old["answer"]
    try:
        out = subprocess.run(
            [str(python), "-c", PROBE, *modules],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        answer = json.loads(out.stdout) if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        answer = None
    if answer is not None:
        files.write_json(cached, {"python": str(python), "stamp": stamp, "answer": answer})
    return answer


def row(name, cache_dir=None, refresh=False):
    """One framework's line: {framework, environment, built, python, version, how, needs}."""
    fw = environments.declared_framework(name)
    declared = capabilities.declared(name)
    line = {
        "framework": name,
        "environment": fw.nox_session,
        "built": False,
        "python": "",
        "version": "",
        "found_by": "",
        "needs": declared.get("system") or {},
        "build": f"nox -s {fw.nox_session} --install-only",
    }
    try:
        python, found_by = environments.framework_python(fw)
    except EnvironmentNotFound as exc:
        line["why"] = str(exc)
        return line
    answer = probe(python, [fw.module, fw.package], cache_dir, refresh) or {}
    line.update(
        built=True,
        found_by=found_by,
        python=answer.get("python", "?"),
        version=(answer.get("versions") or {}).get(fw.module.split(".")[0], ""),
    )
    if not line["version"]:
        line["version"] = (answer.get("versions") or {}).get(fw.module, "")
    line["lock"] = locks.compare(answer.get("distributions"), locks.marker(python))
    return line


@subcommand
def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bench envs",
        description="Every framework's environment (built or not, its Python and framework "
        "version, the command that builds it) and the system packages rows need.",
    )
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="ask every environment again (its answer is cached until it changes)",
    )
    parser.add_argument("--json", action="store_true", help="the same as JSON")
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="the cache directory (default: $BENCH_CACHE_DIR, else ~/.cache/rosetta-bench)",
    )
    args = parser.parse_args(argv)
    rows = [row(name, args.cache_dir, args.refresh) for name in capabilities.framework_names()]
    dependencies = system_dependencies(rows)
    if args.json:
        print(
            json.dumps(
                {"project": str(project_dir()), "frameworks": rows, "system": dependencies},
                indent=1,
            )
        )
        return 0
    print_text(rows, dependencies)
    return 0


def system_dependencies(rows):
    """[{dependency, title, found, detail, needed_by, install}] of the system packages the
    rows need (and the page's browser test)."""
    deps = {}
    for line in rows:
        for dep, when in line["needs"].items():
            deps.setdefault(dep, []).append(
                line["framework"] + (" (devices=N)" if when == "devices" else "")
            )
    deps.setdefault("chromium", []).append("the page's browser test (nox -s core)")
    dependencies = []
    for dep, users in deps.items():
        found, detail = system.DEPENDENCIES[dep].find()
        dependencies.append(
            {
                "dependency": dep,
                "title": system.DEPENDENCIES[dep].title,
                "found": found,
                "detail": detail,
                "needed_by": users,
                "install": system.DEPENDENCIES[dep].install,
            }
        )
    return dependencies


def print_text(rows, dependencies):
    """The three tables: the environments, their locks, the system packages."""
    built = sum(line["built"] for line in rows)
    print(
        f"framework environments ({built} of {len(rows)} built; environments live in "
        f"{project_dir() / '.nox'}):\n"
    )
    print(
        text_table(
            [
                "framework",
                "environment",
                "built",
                "python",
                "framework version",
                "found by / build it with",
            ],
            [
                [
                    line["framework"],
                    line["environment"],
                    "yes" if line["built"] else "no",
                    line["python"],
                    line["version"],
                    line["found_by"] if line["built"] else line["build"],
                ]
                for line in rows
            ],
        )
    )
    print("\nenvironments against the locks they were built from:\n")
    seen = {}
    for line in rows:
        if line["built"]:
            seen.setdefault(line["environment"], locks.describe(line["lock"]))
    print(text_table(["environment", "lock"], sorted(seen.items())) if seen else "(none built)")
    print("\nsystem packages beyond the environments:\n")
    print(
        text_table(
            ["dependency", "here", "needed by", "install"],
            [
                [
                    d["title"],
                    f"found: {d['found']}" if d["found"] else "missing",
                    ", ".join(d["needed_by"]),
                    "" if d["found"] else d["install"],
                ]
                for d in dependencies
            ],
        )
    )
    missing = [line for line in rows if not line["built"]]
    if missing:
        print(
            f"\n{len(missing)} not built: `python -m nox -s <environment> --install-only` in "
            f"{project_dir()} builds one (`pip install nox` first); a run of one of them is "
            f"refused as not_installed, and comparison presets leave them out."
        )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
