"""bench_shared.environment: the distributions a result records are the environment's."""

import sys

from bench_shared import environment


def test_a_path_added_while_running_adds_no_distributions(tmp_path, monkeypatch):
    """setuptools puts its _vendor directory on sys.path when it is imported (PyTorch's compiler
    and Paddle import it during a run); the copies vendored there are not the environment's,
    and a run that imported it must not read as drifted from its lock."""
    info = tmp_path / "vendored_tool-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vendored-tool\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert environment.distributions(sys.path)["vendored-tool"] == "1.0"  # what sys.path holds
    found = environment.distributions()
    assert "vendored-tool" not in found
    assert found["numpy"]  # the environment's own are there
