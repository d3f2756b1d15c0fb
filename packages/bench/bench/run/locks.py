"""Which lock built a framework's environment, and whether the environment still matches it.

Each environment that noxfile.py builds holds `bench-environment.json` (its marker: the lock
it was built from, the lock's SHA-256 then, the installer, any user's override and what that
override left out of the lock). A worker reports the distributions its interpreter sees
(bench_shared.environment); here they are compared with the lock's pins:

- `locked`: every locked package at its pin, nothing else installed but the project's own
  packages and the installer's tools;
- `drifted`: a package changed, missing or added by hand since the build (named in `drift`);
- `override`: built with a user's replacement (BENCH_TORCH_REQUIREMENT=..., a CUDA build),
  declared in the marker: the packages it replaced are expected to differ;
- `unlocked`: no marker (an environment nox did not build, framework.python=...).
"""

import hashlib
import json
import re
from pathlib import Path

from .. import project_dir

MARKER = "bench-environment.json"
# installed by the virtual environment's creation, not by the lock
INSTALLER_TOOLS = {"pip", "setuptools", "wheel", "uv", "distribute", "pkg-resources"}


def canonical(name):
    """A distribution's name as PyPI normalises it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def own_package(name):
    """The project's own packages (bench, bench-shared, bench-torch, ...), installed editable
    beside the lock."""
    return canonical(name) == "bench" or canonical(name).startswith("bench-")


def version_changes(before, after):
    """[(name, version before or None, version after or None)], sorted by name, for every
    distribution whose version differs between two {name: version} maps, the project's own
    packages left out."""
    return [
        (name, before.get(name), after.get(name))
        for name in sorted(set(before) | set(after))
        if not own_package(name) and before.get(name) != after.get(name)
    ]


def environment_dir(python) -> Path:
    """The environment an interpreter belongs to: <env>/bin/python -> <env>."""
    return Path(python).parent.parent


def marker(python):
    """The environment's marker (a dict), or None where it has none; a marker that cannot be
    read, or whose fields are not of the types noxfile.py writes, is {"damaged": why}."""
    path = environment_dir(python) / MARKER
    try:
        found = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return {"damaged": f"{path} cannot be read ({str(exc)[:80]})"}
    why = _marker_problem(found)
    return {"damaged": f"{path}: {why}"} if why else found


def _marker_problem(found):
    if not isinstance(found, dict) or not isinstance(found.get("lock"), str):
        return "names no lock"
    overrides = found.get("overrides", [])
    if not isinstance(overrides, list) or not all(
        isinstance(o, dict) and isinstance(o.get("left_out", []), list) for o in overrides
    ):
        return f"its overrides are {json.dumps(overrides)[:60]}, not a list of overrides"
    return None


def pins(lock_path: Path):
    """{distribution: version} of a lock file (`name==version` lines, uv's or pip-tools');
    OSError where it cannot be read, UnicodeDecodeError where it is not text."""
    found = {}
    for line in Path(lock_path).read_bytes().decode("utf-8").splitlines():
        entry = re.match(r"([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", line)
        if entry:
            found[canonical(entry.group(1))] = entry.group(2)
    return found


def sha256(path: Path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def compare(distributions, built, root=None):
    """How the distributions a worker saw ({name: version}) stand against `built`, the
    environment's marker (None: unlocked); the record a result keeps beside them."""
    if built is None:
        return {"status": "unlocked", "lock": None, "drift": []}
    if "damaged" in built:  # the marker says nothing to trust about the build
        return {"status": "drifted", "lock": None, "drift": [], "lock_problem": built["damaged"]}
    root = Path(root or project_dir())
    lock_path = root / built["lock"]
    record = {
        "lock": built["lock"],
        "lock_sha256": built.get("lock_sha256"),
        "installer": built.get("installer"),
        "built": built.get("built"),
        "overrides": built.get("overrides") or [],
    }
    try:
        locked = pins(lock_path)
    except (OSError, UnicodeDecodeError) as exc:
        problem = (
            f"no lock {built['lock']} (the file the environment was built from is gone)"
            if isinstance(exc, FileNotFoundError)
            else f"lock unreadable: {built['lock']} "
            + (
                f"is not UTF-8 text (byte {exc.start})"
                if isinstance(exc, UnicodeDecodeError)
                else f"cannot be read ({exc.strerror})"
            )
        )
        return dict(record, status="drifted", lock_changed=True, drift=[], lock_problem=problem)
    record["lock_changed"] = sha256(lock_path) != built.get("lock_sha256")
    replaced = {canonical(n) for o in record["overrides"] for n in o.get("left_out", ())}
    installed = {canonical(n): v for n, v in (distributions or {}).items()}
    drift = []
    for name, version in sorted(locked.items()):
        if name not in replaced and installed.get(name) != version:
            drift.append({"name": name, "locked": version, "installed": installed.get(name)})
    for name, version in sorted(installed.items()):
        if (
            name not in locked
            and not own_package(name)
            and name not in INSTALLER_TOOLS
            and not record["overrides"]
        ):
            drift.append({"name": name, "locked": None, "installed": version})
    record["drift"] = drift
    record["status"] = (
        "drifted"
        if drift or record["lock_changed"]
        else "override"
        if record["overrides"]
        else "locked"
    )
    return record


def describe(record):
    """One line: `locked (locks/torch.txt)`, `drifted: numpy 1.23.5 -> 1.26.4, +rich 13.0`."""
    status = record.get("status", "unlocked")
    if status == "unlocked":
        return "unlocked (no lock built this environment)"
    if record.get("lock_problem"):
        return record["lock_problem"]
    changes = [
        f"{d['name']} {d['locked']} -> {d['installed']}"
        if d["locked"] and d["installed"]
        else f"+{d['name']} {d['installed']}"
        if d["installed"]
        else f"-{d['name']} {d['locked']}"
        for d in record.get("drift", [])
    ]
    if record.get("lock_changed"):
        changes.insert(0, f"{record['lock']} changed since the build")
    if status == "drifted":
        shown = ", ".join(changes[:6]) + (
            f", and {len(changes) - 6} more" if len(changes) > 6 else ""
        )
        return f"drifted from {record['lock']}: {shown}"
    if status == "override":
        values = ", ".join(f"{o['variable']}={o['value']}" for o in record["overrides"])
        return f"override on {record['lock']}: {values}"
    return f"locked ({record['lock']})"
