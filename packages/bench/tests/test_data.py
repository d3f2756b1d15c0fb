"""Synthetic data (shapes, determinism, class structure), IMDB preprocessing, the cache
(in-process, and through `python -m bench` for a preparation killed outright and a full
disk)."""

import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

from bench.data import cache, imdb, synthetic


def test_cifar_stand_in_has_cifar_shapes_and_is_deterministic():
    a = synthetic.cifar10(200, 50, seed=0)
    assert a["train_x"].shape == (200, 3, 32, 32) and a["train_x"].dtype == np.float32
    assert a["test_x"].shape == (50, 3, 32, 32) and a["train_y"].dtype == np.int64
    assert 0.0 <= a["train_x"].min() and a["train_x"].max() <= 1.0
    assert set(a["train_y"]) == set(range(10))
    b = synthetic.cifar10(200, 50, seed=0)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    c = synthetic.cifar10(200, 50, seed=1)
    assert not np.array_equal(a["train_x"], c["train_x"])


def nearest_class_mean_accuracy(train_x, train_y, test_x, test_y, classes):
    """A model that learns (class means) against one that cannot (shuffled labels)."""
    f = lambda x: x.reshape(len(x), -1).astype(np.float64)  # noqa: E731
    means = np.stack([f(train_x)[train_y == c].mean(0) for c in range(classes)])
    scores = f(test_x) @ means.T - 0.5 * (means**2).sum(1)
    return np.mean(scores.argmax(1) == test_y)


def test_cifar_stand_in_is_learnable_and_labels_matter():
    a = synthetic.cifar10(2000, 1000, seed=0)
    learned = nearest_class_mean_accuracy(a["train_x"], a["train_y"], a["test_x"], a["test_y"], 10)
    shuffled = np.random.default_rng(0).permutation(a["train_y"])
    chance = nearest_class_mean_accuracy(a["train_x"], shuffled, a["test_x"], a["test_y"], 10)
    # shuffled labels can still map a class or two onto the right label by luck
    assert learned > 0.6 and chance < 0.3, (learned, chance)
    assert learned < 0.95  # flipped labels keep it from being trivial


def test_imdb_stand_in_has_imdb_shapes():
    a = synthetic.imdb_like(300, 100, seed=0)
    x = a["train_x"]
    assert x.shape == (300, 150) and x.dtype == np.int32 and a["test_x"].shape == (100, 150)
    assert x.min() >= 0 and x.max() < 30000
    assert (x == 2).any()  # out-of-vocabulary words exist
    assert (x[:, -1] != 0).all()  # front padding: the last step is always a real token
    short = (x == 0).any(axis=1)
    assert 0 < short.mean() < 0.5  # some reviews are shorter than 150 tokens, most are not
    assert (x[short][np.arange(short.sum()), (x[short] == 0).sum(1)] == 1).all()  # start token
    assert set(a["train_y"]) == {0, 1}


def test_imdb_preprocessing_rules():
    reviews = [[5, 6, 7], list(range(1, 201)), [29996, 29997, 40000]]
    x = imdb.preprocess(reviews, seq_len=6, vocab_size=30000)
    # short: front-padded, start token 1, every rank shifted by 3
    assert x[0].tolist() == [0, 0, 1, 8, 9, 10]
    # long: keeps the *last* tokens (the start token is cut off)
    assert x[1].tolist() == [198, 199, 200, 201, 202, 203]
    # ranks that land at >= 30,000 after the shift become OOV (2)
    assert x[2].tolist() == [0, 0, 1, 29999, 2, 2]
    assert x.dtype == np.int32


def test_imdb_preprocessing_at_the_length_boundaries():
    x = imdb.preprocess([[], [4, 5, 6, 7, 8], [4, 5, 6, 7, 8, 9]], seq_len=6, vocab_size=30000)
    assert x[0].tolist() == [0, 0, 0, 0, 0, 1]  # an empty review is its start token
    assert x[1].tolist() == [1, 7, 8, 9, 10, 11]  # start + 5 words fill 6 steps: no padding
    assert x[2].tolist() == [7, 8, 9, 10, 11, 12]  # one more word pushes the start token out


def _prepare(entry, counter):
    def build():
        with counter.get_lock():
            counter.value += 1
        time.sleep(0.5)
        return {"a": np.arange(10)}

    cache.prepared(entry, build, "test")


def test_concurrent_preparation_builds_once(tmp_path):
    entry = tmp_path / "entry"
    counter = multiprocessing.Value("i", 0)
    procs = [multiprocessing.Process(target=_prepare, args=(entry, counter)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert counter.value == 1
    assert np.array_equal(np.load(entry / "a.npy"), np.arange(10))
    assert cache.read_manifest(entry)["arrays"]["a"] == {"shape": [10], "dtype": "int64"}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("entry.")] == []


def test_failed_preparation_publishes_nothing(tmp_path):
    entry = tmp_path / "entry"

    def build():
        raise RuntimeError("boom")

    try:
        cache.prepared(entry, build, "test")
    except RuntimeError:
        pass
    assert not entry.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no lock file left behind


def test_a_killed_preparation_s_temporary_is_removed_by_the_next(own_cache, run_bench, tmp_path):
    """SIGKILL (the OOM killer, Slurm after its grace period) leaves a preparation no time to
    remove its temporary directory; the next preparation of the entry removes it, and leaves
    the temporaries of a process that still runs or of another host alone."""
    env, cache_dir = own_cache
    args = [
        "prepare",
        "task=cnn",
        "preset=smoke",
        "preset.train_examples=8000",
        "preset.test_examples=64",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    entries = cache_dir / "synthetic"
    deadline = time.monotonic() + 120
    temporary = None
    while temporary is None and proc.poll() is None and time.monotonic() < deadline:
        found = [p for p in entries.glob("cifar10-*.*") if p.is_dir()] if entries.is_dir() else []
        temporary = found[0] if found else None
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert temporary is not None and temporary.is_dir(), "the preparation ended unseen"
    # what another process that still runs, and a preparation on another host, would have
    live = temporary.with_name(temporary.name.replace(f"-{proc.pid}-", f"-{os.getpid()}-"))
    elsewhere = temporary.with_name(
        re.sub(r"\.tmp-.+(-\d+-[^-]+)$", r".tmp-elsewhere\1", temporary.name)
    )
    for other in (live, elsewhere):
        assert other != temporary, temporary
        other.mkdir()

    again = run_bench(*args, env=env)
    assert again.returncode == 0, again.output
    assert not temporary.exists(), again.output
    assert (
        f"removing {temporary}: left by a preparation (pid {proc.pid}) that no longer runs"
    ) in again.output
    assert live.is_dir() and elsewhere.is_dir()
    (entry,) = [p for p in entries.iterdir() if p.is_dir() and p not in (live, elsewhere)]
    assert cache.read_manifest(entry) is not None and "." not in entry.name


def test_a_full_cache_disk_is_one_line_naming_it(run_bench, bench_env, full_disk):
    room = 256 * 1024  # the lock and the temporary directory fit; the arrays do not
    filler = full_disk / "filler"
    os.truncate(filler, filler.stat().st_size - room)
    cache_dir = full_disk / "cache"
    run = run_bench(
        "framework=fake",
        "task=cnn",
        "preset=smoke",
        env=dict(bench_env, BENCH_CACHE_DIR=str(cache_dir)),
    )
    assert run.returncode == 1, run.output
    assert "Traceback" not in run.output and "bytes" not in run.output, run.output
    error = run.result["error"]
    assert error.startswith(f"no space left on {cache_dir / 'synthetic'} to prepare cifar10-"), (
        error
    )
    assert "set data.cache_dir (or BENCH_CACHE_DIR) to a file system with room" in error
    assert [p.name for p in (cache_dir / "synthetic").iterdir()] == []  # nothing half-made
