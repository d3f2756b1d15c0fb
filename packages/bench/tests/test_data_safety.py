"""Datasets that must not hurt: a hostile pickle runs no code, a damaged archive is refused, the
cache's lock names its holder, shared entries follow the umask."""

import os

import pytest
from cli_process import FAST


# untrusted archives whose checksum the user configured
class _Hostile:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def real_args(dataset, path, *extra):
    from archives import checksums

    sums = checksums(path)
    return [
        *FAST,
        "data=real",
        f"data.{dataset}.archive={path}",
        f"data.{dataset}.size=null",
        f"data.{dataset}.md5=null",
        f"data.{dataset}.sha256={sums['sha256']}",
        *extra,
    ]


def test_hostile_imdb_npz_runs_no_code(run_bench, tmp_path):
    from archives import imdb_archive

    raw = imdb_archive(tmp_path / "good.npz")
    raw["x_train"][3] = _Hostile()  # one review is an object whose unpickling runs a command
    np = pytest.importorskip("numpy")
    np.savez(tmp_path / "imdb.npz", **raw)
    run = run_bench(*real_args("imdb", tmp_path / "imdb.npz"), "task=rnn")
    assert not (run.cwd / "pwned").exists(), "unpickling imdb.npz ran a command"
    assert run.returncode == 1, run.output
    assert (
        "is not a valid IMDB archive (UnpicklingError: unexpected object posix.system)"
        in run.result["error"]
    ), run.result["error"]
    # the real layout (object arrays of lists of ints) still reads
    good = run_bench(*real_args("imdb", tmp_path / "good.npz"), "task=rnn")
    assert good.returncode == 0, good.output


@pytest.mark.parametrize("damage", ["flipped CRC byte", "cut trailer"])
def test_corrupt_gzip_is_refused_even_with_its_checksum_configured(run_bench, tmp_path, damage):
    from archives import cifar_archive

    path = tmp_path / "cifar-10-python.tar.gz"
    cifar_archive(path)
    data = bytearray(path.read_bytes())
    if damage == "flipped CRC byte":
        data[-6] ^= 0xFF  # the gzip trailer: CRC-32 then length
    else:
        del data[-8:]
    path.write_bytes(bytes(data))
    run = run_bench(*real_args("cifar10", path), "task=cnn", "task.batch_size=16")
    assert run.returncode == 1, run.output
    assert "is not a valid CIFAR-10 archive" in run.result["error"], run.result["error"]


def test_local_archive_messages_name_the_option_used(run_bench, tmp_path):
    missing = tmp_path / "nowhere.tar.gz"
    run = run_bench(*FAST, "task=cnn", "data=real", f"data.cifar10.archive={missing}")
    assert run.result["error"].startswith(f"data.cifar10.archive={missing}: no such file")


def test_held_cache_lock_names_its_holder_and_times_out(run_bench, tmp_path, cache_dir):
    import fcntl

    from bench.data import synthetic

    entry = f"synthetic/cifar10-{synthetic.VERSION}-seed7-128-64"  # this test's own entry
    lock = cache_dir / (entry + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write("pid 4242 on elsewhere since then\n")
        handle.flush()
        run = run_bench(
            *FAST,
            "task=cnn",
            "data.seed=7",
            "preset.train_examples=128",
            "preset.test_examples=64",
            "data.lock_timeout_s=1",
        )
    assert run.returncode == 1, run.output
    assert "held by pid 4242 on elsewhere since then" in run.output
    assert run.result["error"].startswith(f"{lock} is held by pid 4242 on elsewhere")
    lock.unlink()
    again = run_bench(
        *FAST, "task=cnn", "data.seed=7", "preset.train_examples=128", "preset.test_examples=64"
    )
    assert again.returncode == 0, again.output
    assert not lock.exists()  # the holder removes its lock file


def test_shared_cache_entries_follow_the_umask(run_bench, bench_env, tmp_path):
    cache = tmp_path / "shared-cache"
    run = run_bench(*FAST, "task=cnn", env=dict(bench_env, BENCH_CACHE_DIR=str(cache)))
    assert run.returncode == 0, run.output
    (entry,) = (cache / "synthetic").iterdir()
    umask = os.umask(0)
    os.umask(umask)
    assert entry.stat().st_mode & 0o777 == 0o777 & ~umask
    assert not list(cache.rglob("*.lock"))
