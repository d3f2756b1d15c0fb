"""Every nox session builds its environment from its lock, locks/<name>.txt (noxfile.py:
`lock`, `install`). Here: every lock exists and holds each requirement its session asks for,
at that version, so that a pin changed in noxfile.py without `nox -s lock -- <name>` fails;
the lock's `# via` annotations, which decide what an override leaves out, read as expected.
noxfile.py is loaded by path, as .ci/sessions.py loads it."""

import dataclasses
import importlib.util
import json
import types
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]


def load_noxfile():
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NOXFILE = load_noxfile()
LOCK_NAMES = [*NOXFILE.ENVIRONMENTS, *NOXFILE.TOOLS]


def disagreements(name):
    """What lock `name` lacks of what its session asks for, one line each ([]: it agrees)."""
    path = NOXFILE.LOCKS / f"{name}.txt"
    if not path.is_file():
        return [f"no {path.relative_to(ROOT)}"]
    pins = NOXFILE.read_lock(path)
    found = []
    for text in NOXFILE.lock_input(name)[1]:
        requirement = Requirement(text)
        pin = pins.get(NOXFILE.canonical(requirement.name))
        if pin is None:
            found.append(f"{text}: not in locks/{name}.txt")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            found.append(f"{text}: locks/{name}.txt has {pin.version}")
    return found


@pytest.mark.parametrize("name", LOCK_NAMES)
def test_the_lock_holds_every_pin_its_session_asks_for(name):
    assert disagreements(name) == [], f"noxfile.py and its lock disagree: nox -s lock -- {name}"


def test_a_pin_changed_without_its_lock_fails(monkeypatch):
    torch = NOXFILE.ENVIRONMENTS["torch"]
    moved = dataclasses.replace(torch, requires=("torch==2.12.0", "no-such-package"))
    monkeypatch.setitem(NOXFILE.ENVIRONMENTS, "torch", moved)
    assert disagreements("torch") == [
        "torch==2.12.0: locks/torch.txt has 2.13.0",
        "no-such-package: not in locks/torch.txt",
    ]
    monkeypatch.setitem(NOXFILE.ENVIRONMENTS, "no_lock", torch)
    assert disagreements("no_lock") == ["no locks/no_lock.txt"]


def test_every_lock_belongs_to_a_session():
    stale = {path.stem for path in NOXFILE.LOCKS.glob("*.txt")} - set(LOCK_NAMES)
    assert not stale, f"locks no session installs: {sorted(stale)}"


@pytest.mark.parametrize("name", LOCK_NAMES)
def test_each_entry_is_hashed_and_needed(name):
    """Every pin carries hashes, and its `# via` names the session (`-r noxfile`), another
    locked package or a project package installed beside the lock."""
    pins = NOXFILE.read_lock(NOXFILE.LOCKS / f"{name}.txt")
    projects = {NOXFILE.canonical(NOXFILE.distribution(f)) for f in NOXFILE.lock_input(name)[2]}
    for package, pin in pins.items():
        assert any("--hash=sha256:" in line for line in pin.text), package
        assert pin.needed_by, package
        assert set(pin.needed_by) <= {"-r noxfile", *pins, *projects}, (package, pin.needed_by)


def test_an_override_leaves_out_what_only_the_replaced_package_needs():
    torch = NOXFILE.read_lock(NOXFILE.LOCKS / "torch.txt")
    out = NOXFILE.left_out(torch, "torch")
    assert {"torch", "triton", "sympy", "mpmath", "nvidia-cublas"} <= out  # via torch, sympy
    assert not {"numpy", "typing-extensions", "pytest"} & out  # needed by others too
    # flax's session asks for jaxlib by name: a replacement jax leaves it in
    flax = NOXFILE.read_lock(NOXFILE.LOCKS / "flax.txt")
    assert "-r noxfile" in flax["jaxlib"].needed_by
    assert not {"jaxlib", "flax", "optax"} & NOXFILE.left_out(flax, "jax")


def test_the_marker_says_which_lock_built_the_environment(tmp_path):
    session = types.SimpleNamespace(
        name="torch", venv_backend="uv", virtualenv=types.SimpleNamespace(location=str(tmp_path))
    )
    override = {
        "variable": "BENCH_TORCH_REQUIREMENT",
        "value": "torch==2.13.0+cpu",
        "left_out": ["torch"],
    }
    NOXFILE.mark(session, NOXFILE.LOCKS / "torch.txt", "3.11.7", "uv", [override])
    record = json.loads((tmp_path / "bench-environment.json").read_text())
    assert record.pop("built").endswith("Z")
    assert len(record.pop("lock_sha256")) == 64
    assert record == {
        "environment": "torch",
        "lock": "locks/torch.txt",
        "python": "3.11.7",
        "installer": "uv",
        "overrides": [override],
    }
