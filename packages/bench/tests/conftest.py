"""Fixtures for the orchestrator's tests: the real CLI in a subprocess, with the numpy fake
framework (tests/fake_framework) added to a copy of conf/ and a private data cache; an HTTP
server on 127.0.0.1 for the real-data archives (tests/archives.py)."""

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import cli_process
import pytest
from archives import ArchiveServer
from fit_bundle import fit_bundle  # noqa: E402,F401 (a module-scoped fixture)

import bench

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_framework"


@pytest.fixture(scope="session")
def conf_copy(tmp_path_factory):
    conf = tmp_path_factory.mktemp("conf") / "conf"
    shutil.copytree(bench.conf_dir(), conf)
    shutil.copy(FAKE / "fake.yaml", conf / "framework" / "fake.yaml")
    # the host is watched in every test's run, its canary short (the same code path), and no
    # run flagged disturbed by a busy test machine: the tests of the watch itself set their
    # thresholds on the command line (test_host_watch.py)
    with open(conf / "config.yaml", "a") as f:
        f.write(WATCH_FOR_TESTS)
    return conf


WATCH_FOR_TESTS = """
watch:
  canary_s: 0.02
  max_steal: 1.0
  max_others: 1.0
  max_canary_slowdown: 1000.0
"""


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def bench_env(conf_copy, cache_dir, tmp_path):
    env = dict(os.environ)
    env.update(
        BENCH_CONF_DIR=str(conf_copy),
        BENCH_CACHE_DIR=str(cache_dir),
        BENCH_PROJECT_DIR=str(tmp_path / "project"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(FAKE), env.get("PYTHONPATH")])),
    )
    return env


@pytest.fixture
def own_cache(bench_env, tmp_path):
    """(environment, cache directory): a cache of the test's own, for what is kept per host
    (tuning profiles, the host peak) and must not leak into other tests."""
    cache = tmp_path / "cache"
    return dict(bench_env, BENCH_CACHE_DIR=str(cache)), cache


class Run:
    def __init__(self, proc, cwd):
        self.proc, self.cwd = proc, cwd
        self.returncode = proc.returncode
        self.output = proc.stdout + proc.stderr
        self.result_paths = [Path(p) for p in re.findall(r"^result: (.+)$", proc.stdout, re.M)]
        for path in self.result_paths:  # every result it wrote follows the schema
            for written in [path, *path.parent.glob("result.node*.json")]:
                if written.is_file():
                    assert_follows_schema(written)

    @property
    def result(self):
        import json

        assert len(self.result_paths) == 1, self.output
        return json.loads(self.result_paths[0].read_text())


def assert_follows_schema(path):
    """A result file as bench wrote it: strict JSON that validates against
    result.schema.json (bench.run.record.problem says which field does not)."""
    import json

    from bench.run import record

    result = json.loads(Path(path).read_text())
    if isinstance(result, dict) and "config" in result and "status" in result:
        assert record.problem(result) is None, (path, record.problem(result))


@pytest.fixture
def run_bench(bench_env, tmp_path):
    """run(*args): `python -m bench *args` in tmp_path; read_only=[directories]: with those
    read-only for it (cli_process.read_only; skips where that is not permitted)."""

    def run(*args, env=None, timeout=600, read_only=()):
        prefix = cli_process.read_only(read_only) if read_only else []
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "bench", *args],
            cwd=tmp_path,
            env=env or bench_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Run(proc, tmp_path)

    return run


@pytest.fixture
def archive_server():
    server = ArchiveServer()
    yield server
    server.close()


@pytest.fixture
def full_disk(tmp_path):
    """A directory on a file system with no space left: a 1 MiB tmpfs mounted for the test
    (root only; skipped where mount is not permitted) and filled by its file `filler`, so that
    writes there fail with ENOSPC as on a full disk (truncate `filler` to leave some room)."""
    mount = tmp_path / "full"
    mount.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as exc:
        pytest.skip(f"a full disk needs a tmpfs mount: {exc}")
    if mounted.returncode != 0:
        pytest.skip(f"a full disk needs a tmpfs mount: {mounted.stderr.strip()}")
    try:
        with open(mount / "filler", "wb", buffering=0) as filler:
            with contextlib.suppress(OSError):  # ENOSPC: full
                while filler.write(bytes(1 << 16)):
                    pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
