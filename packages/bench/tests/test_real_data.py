"""data=real: reading the real archive formats, downloading (mirrors, resume, checksums,
concurrency), the prepared cache (reuse, alteration), local archives, offline use, and the
CLI end to end. Archives are small ones in the real formats (tests/archives.py), served by a
real HTTP server on 127.0.0.1."""

import io
import json
import os
import pickle
import re
import socket
import subprocess
import sys
import tarfile

import numpy as np
import pytest
from archives import checksums, cifar_archive, imdb_archive
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

import bench
from bench import data
from bench.data import cache, cifar10, download, imdb, real
from bench.errors import DataError
from bench.run import config

CIFAR = "cifar-10-python.tar.gz"


@pytest.fixture(autouse=True)
def no_back_off(monkeypatch):
    monkeypatch.setattr(download, "RETRY_WAIT_S", 0.0)


@pytest.fixture
def cifar(tmp_path):
    path = tmp_path / "archives" / CIFAR
    path.parent.mkdir()
    raw = cifar_archive(path)
    return path, raw, checksums(path)


def source(sums, urls, filename=CIFAR, **extra):
    return config.ArchiveConfig(
        filename=filename, urls=list(urls), size=sums["size"], md5=sums["md5"], **extra
    )


def real_config(tmp_path, cifar10_source=None, imdb_source=None, **extra):
    cfg = config.RealDataConfig(cache_dir=str(tmp_path / "cache"), timeout_s=10.0, **extra)
    cfg.cifar10 = cifar10_source or config.ArchiveConfig(filename=CIFAR, urls=[])
    cfg.imdb = imdb_source or config.ArchiveConfig(filename="imdb.npz", urls=[])
    return cfg


def closed_port_url(name):
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/{name}"


def published(directory):
    return sorted(
        p.name for p in directory.rglob("*") if p.is_file() and not p.name.endswith(".lock")
    )


# ---- the archive formats ------------------------------------------------------------------


def test_cifar_archive_becomes_float32_nchw_in_batch_order(cifar):
    path, raw, _ = cifar
    a = cifar10.read(path)
    train = np.concatenate([d for d, _ in raw["train"]])
    assert a["train_x"].shape == (80, 3, 32, 32) and a["train_x"].dtype == np.float32
    assert a["test_x"].shape == (20, 3, 32, 32)
    assert a["train_y"].dtype == np.int64
    assert a["train_y"].tolist() == [v for _, labels in raw["train"] for v in labels]
    assert a["test_y"].tolist() == raw["test"][0][1]
    # a row is 1,024 red, then green, then blue bytes, each a 32x32 image in row-major order
    assert a["train_x"][37, 2, 5, 30] == np.float32(train[37, 2 * 1024 + 5 * 32 + 30]) / 255
    assert np.array_equal(a["train_x"], train.reshape(-1, 3, 32, 32).astype(np.float32) / 255)
    assert a["train_x"].min() >= 0.0 and a["train_x"].max() <= 1.0


class Exploit:
    def __reduce__(self):
        return (os.system, ("echo unpickled",))


def test_cifar_reader_rejects_incomplete_truncated_and_foreign_archives(tmp_path, cifar):
    path = cifar[0]
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(DataError, match="truncated.tar.gz is not a valid CIFAR-10 archive"):
        cifar10.read(truncated)
    incomplete, foreign = tmp_path / "incomplete.tar.gz", tmp_path / "foreign.tar.gz"
    with tarfile.open(path) as src, tarfile.open(incomplete, "w:gz") as dst:
        for member in src:
            if not member.name.endswith("test_batch"):
                dst.addfile(member, src.extractfile(member))
    with pytest.raises(DataError, match="missing cifar-10-batches-py/test_batch"):
        cifar10.read(incomplete)
    with tarfile.open(foreign, "w:gz") as tar:
        payload = pickle.dumps({b"data": Exploit(), b"labels": []}, protocol=2)
        info = tarfile.TarInfo("cifar-10-batches-py/data_batch_1")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    with pytest.raises(DataError, match=r"unexpected object (posix|os)\.system"):
        cifar10.read(foreign)


def test_imdb_npz_is_read_in_keras_order_and_preprocessed(tmp_path):
    path = tmp_path / "imdb.npz"
    raw = imdb_archive(path, num_train=80, num_test=20)
    a = imdb.read(path)
    for split, n in (("train", 80), ("test", 20)):
        x, y = a[split + "_x"], a[split + "_y"]
        assert x.shape == (n, 150) and x.dtype == np.int32 and y.dtype == np.int64
        in_file_order = imdb.preprocess(raw["x_" + split])
        # every row is one review of the file, preprocessed, with that review's label
        order = [next(j for j in range(n) if np.array_equal(in_file_order[j], row)) for row in x]
        assert sorted(order) == list(range(n)) and order != list(range(n))
        assert y.tolist() == raw["y_" + split][order].tolist()
    # the file is sorted by label; the first examples a preset keeps hold both
    assert raw["y_train"][:20].tolist() == [0] * 20 and set(a["train_y"][:20]) == {0, 1}
    again = imdb.read(path)
    assert all(np.array_equal(a[key], again[key]) for key in a)
    broken = tmp_path / "broken.npz"
    broken.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(DataError, match="broken.npz is not a valid IMDB archive"):
        imdb.read(broken)


# ---- downloading ---------------------------------------------------------------------------


def test_download_is_verified_published_once_and_reported_in_plain_lines(
    tmp_path, cifar, archive_server, capsys
):
    path, _, sums = cifar
    archive_server.serve(CIFAR, path.read_bytes())
    url = archive_server.url(CIFAR)
    target = tmp_path / "downloads"
    got, info = download.fetch(source(sums, [url]), target)
    assert got == target / CIFAR and got.read_bytes() == path.read_bytes()
    assert info["url"] == url and info["md5"] == sums["md5"] and info["size"] == sums["size"]
    assert published(target) == [CIFAR]  # no .part left behind
    err = capsys.readouterr().err
    assert f"downloading {CIFAR} from {url}" in err and f"download {CIFAR}: " in err
    assert "\r" not in err  # not a terminal: plain lines, no bar redraws
    download.fetch(source(sums, [url]), target)
    assert len(archive_server.gets(CIFAR)) == 1  # the verified copy is reused


@pytest.mark.parametrize("ranges", [True, False], ids=["resumed", "restarted"])
def test_dropped_connection_is_resumed_or_restarted(
    tmp_path, cifar, archive_server, capsys, ranges
):
    path, _, sums = cifar
    cut = sums["size"] // 3
    archive_server.serve(CIFAR, path.read_bytes(), drops=1, drop_after=cut, ranges=ranges)
    got, _ = download.fetch(source(sums, [archive_server.url(CIFAR)]), tmp_path / "dl")
    assert got.read_bytes() == path.read_bytes()
    # the second request asks for the rest; a server without Range support sends it all
    assert [r for _, r in archive_server.gets(CIFAR)] == [None, f"bytes={cut}-"]
    err = capsys.readouterr().err
    assert ("resuming" in err) is ranges


def test_mirrors_are_tried_in_order_and_a_bad_copy_is_never_kept(
    tmp_path, cifar, archive_server, capsys
):
    path, _, sums = cifar
    good = path.read_bytes()
    archive_server.serve("bad/" + CIFAR, good[:-1] + bytes([good[-1] ^ 1]))  # same size
    archive_server.serve("good/" + CIFAR, good)
    missing, bad, fine = (archive_server.url(p + CIFAR) for p in ("missing/", "bad/", "good/"))
    got, info = download.fetch(source(sums, [missing, bad, fine]), tmp_path / "a")
    assert info["url"] == fine and got.read_bytes() == good
    err = capsys.readouterr().err
    assert f"could not use {missing}: HTTP 404" in err and f"could not use {bad}: md5" in err
    with pytest.raises(DataError) as failure:
        download.fetch(source(sums, [missing, bad]), tmp_path / "b")
    message = str(failure.value)
    assert f"could not download {CIFAR} from any of: {missing} (HTTP 404" in message
    assert f"{bad} (md5 " in message and f"expected {sums['md5']}" in message
    assert published(tmp_path / "b") == []


def test_truncated_download_is_not_published_and_is_resumed_later(tmp_path, cifar, archive_server):
    path, _, sums = cifar
    archive_server.serve(CIFAR, path.read_bytes(), drops=2, drop_after=1000)
    src = source(sums, [archive_server.url(CIFAR)])
    with pytest.raises(DataError, match=r"connection closed after 2,000 of .* 2 attempts"):
        download.fetch(src, tmp_path, attempts=2)
    assert not (tmp_path / CIFAR).exists()
    got, _ = download.fetch(src, tmp_path)  # the server works again: the rest is fetched
    assert got.read_bytes() == path.read_bytes()
    assert archive_server.gets(CIFAR)[-1][1] == "bytes=2000-"


def test_corrupt_archive_is_deleted_and_nothing_is_prepared(tmp_path, archive_server):
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a tar.gz " * 1000)
    sums = checksums(junk)  # the checksum matches: the file itself is unusable
    archive_server.serve(CIFAR, junk.read_bytes())
    cfg = real_config(tmp_path, source(sums, [archive_server.url(CIFAR)]))
    with pytest.raises(DataError, match="not a valid CIFAR-10 archive.*download was deleted"):
        real.prepare("cnn", "cifar10", cfg)
    assert published(tmp_path / "cache") == []
    cfg.archive = str(junk)  # a user's own file is reported, never deleted
    with pytest.raises(DataError, match="junk is not a valid CIFAR-10 archive"):
        real.prepare("cnn", "cifar10", cfg)
    assert junk.exists() and published(tmp_path / "cache") == []


# ---- the prepared cache --------------------------------------------------------------------


@pytest.fixture
def prepared_cifar(tmp_path, cifar, archive_server):
    path, _, sums = cifar
    archive_server.serve(CIFAR, path.read_bytes())
    cfg = real_config(tmp_path, source(sums, [archive_server.url(CIFAR)]))
    entry, manifest = real.prepare("cnn", "cifar10", cfg)
    return cfg, entry, manifest, cifar10.read(path)


def no_hashing(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("opening a prepared entry must not hash it")

    monkeypatch.setattr(cache, "digests", refuse)


def test_prepared_entry_opens_by_stat_alone_with_no_network(
    prepared_cifar, archive_server, monkeypatch
):
    cfg, entry, manifest, expected = prepared_cifar
    assert manifest["source"]["url"] == archive_server.url(CIFAR)
    assert manifest["source"]["md5"] == cfg.cifar10.md5
    for key, array in expected.items():
        assert np.array_equal(np.load(entry / f"{key}.npy", mmap_mode="r"), array)
    no_hashing(monkeypatch)
    cfg.cifar10.urls = [closed_port_url(CIFAR)]
    assert real.prepare("cnn", "cifar10", cfg) == (entry, manifest)
    assert len(archive_server.gets(CIFAR)) == 1


def test_altered_cache_file_is_detected_and_prepared_again_offline(
    prepared_cifar, archive_server, capsys
):
    cfg, entry, manifest, expected = prepared_cifar
    cfg.cifar10.urls = [closed_port_url(CIFAR)]  # the kept archive is enough
    target = entry / "test_x.npy"
    content = bytearray(target.read_bytes())
    content[-1] ^= 0xFF
    target.write_bytes(bytes(content))  # same size; an edit made later moves the mtime
    stamp = manifest["files"]["test_x.npy"]["mtime_ns"]
    os.utime(target, ns=(stamp + 10**9, stamp + 10**9))
    (entry / "train_y.npy").write_bytes(b"short")
    capsys.readouterr()
    _, again = real.prepare("cnn", "cifar10", cfg)
    err = capsys.readouterr().err
    assert "was altered after it was prepared" in err
    assert "test_x.npy has changed (SHA-256 differs)" in err and "train_y.npy has 5 bytes" in err
    for key, array in expected.items():
        assert np.array_equal(np.load(entry / f"{key}.npy"), array)
    (entry / "manifest.json").write_text("{}")  # a damaged manifest: prepared again too
    (entry / "test_y.npy").write_bytes(b"stale")
    _, again = real.prepare("cnn", "cifar10", cfg)
    assert np.array_equal(np.load(entry / "test_y.npy"), expected["test_y"])
    assert len(archive_server.gets(CIFAR)) == 1


def test_mtime_alone_is_rehashed_once_and_verify_rehashes_everything(
    prepared_cifar, monkeypatch, capsys
):
    cfg, entry, manifest, _ = prepared_cifar
    target = entry / "train_x.npy"
    recorded = manifest["files"]["train_x.npy"]["mtime_ns"]
    os.utime(target, ns=(recorded + 5 * 10**9, recorded + 5 * 10**9))  # a copy without -p
    _, restamped = real.prepare("cnn", "cifar10", cfg)
    assert restamped["files"]["train_x.npy"]["mtime_ns"] == recorded + 5 * 10**9
    assert "altered" not in capsys.readouterr().err
    # an edit that keeps size and mtime escapes the quick check; verify=True catches it
    content = bytearray(target.read_bytes())
    content[-1] ^= 0xFF
    target.write_bytes(bytes(content))
    os.utime(target, ns=(recorded + 5 * 10**9, recorded + 5 * 10**9))
    with monkeypatch.context() as m:
        no_hashing(m)
        real.prepare("cnn", "cifar10", cfg)
    cfg.verify = True
    real.prepare("cnn", "cifar10", cfg)
    assert "train_x.npy has changed (SHA-256 differs)" in capsys.readouterr().err


def test_altered_cache_without_archive_or_network_says_what_to_do(prepared_cifar):
    cfg, entry, _, _ = prepared_cifar
    for archive in (cache.cache_root(cfg.cache_dir) / "downloads").rglob(CIFAR):
        archive.unlink()
    cfg.cifar10.urls = [closed_port_url(CIFAR)]
    (entry / "test_y.npy").write_bytes(b"altered")
    with pytest.raises(DataError) as failure:
        real.prepare("cnn", "cifar10", cfg)
    message = str(failure.value)
    assert "Connection refused" in message and f"data.archive=/path/to/{CIFAR}" in message
    assert not entry.exists()  # the altered entry is not kept


def test_local_archive_is_verified_and_used_without_network(tmp_path, cifar):
    path, _, sums = cifar
    cfg = real_config(tmp_path, source(sums, [closed_port_url(CIFAR)]), archive=str(path))
    entry, manifest = real.prepare("cnn", "cifar10", cfg)
    assert manifest["source"]["archive"] == str(path) and path.exists()
    assert not (tmp_path / "cache" / "downloads").exists()
    assert np.array_equal(np.load(entry / "test_y.npy"), cifar10.read(path)["test_y"])
    wrong = tmp_path / "wrong.tar.gz"
    cifar_archive(wrong, seed=1)
    cfg = real_config(tmp_path / "other", source(sums, []), archive=str(wrong))
    with pytest.raises(DataError, match=f"data.archive={wrong} is not {CIFAR} as configured"):
        real.prepare("cnn", "cifar10", cfg)
    cfg.archive = str(tmp_path / "nowhere.tar.gz")
    with pytest.raises(DataError, match="nowhere.tar.gz: no such file"):
        real.prepare("cnn", "cifar10", cfg)


def test_resnet50_keeps_random_images_under_data_real(tmp_path):
    task = config.Resnet50Task(num_batches=1)
    prepared = data.prepare(task, real_config(tmp_path), config.PresetConfig(name="t"))
    assert prepared["inputs"] == "random" and "no real dataset" in prepared["note"]
    assert np.load(prepared["arrays"]["images_x"], mmap_mode="r").shape == (32, 3, 224, 224)


# ---- configuration -------------------------------------------------------------------------


def compose_typed(*overrides):
    config.register()
    with initialize_config_dir(config_dir=str(bench.conf_dir()), version_base="1.3"):
        return OmegaConf.to_object(compose(config_name="config", overrides=list(overrides)))


def test_shipped_sources_are_spec_values():
    spec_md = (bench.conf_dir().parent / "shared" / "SPEC.md").read_text()
    cfg = compose_typed("data=real")
    assert type(cfg.data) is config.RealDataConfig
    c = cfg.data.cifar10
    size, md5, url = re.search(
        r"`(cifar-10-python\.tar\.gz)`, ([\d,]+) bytes, MD5 `(\w+)`,\s+"
        r"canonical URL `(\S+)`",
        spec_md,
    ).groups()[1:]
    assert (c.filename, c.size, c.md5, c.urls) == (CIFAR, int(size.replace(",", "")), md5, [url])
    i = cfg.data.imdb
    url, sha256 = re.search(
        r"canonical\s+URL `(\S+imdb\.npz)`,\s+SHA-256\s+`(\w+)`", spec_md
    ).groups()
    assert (i.filename, i.urls, i.sha256) == ("imdb.npz", [url], sha256)
    assert type(compose_typed().data) is config.DataConfig  # synthetic stays the default
    with pytest.raises(ConfigCompositionException):
        compose_typed("data=real", "data.cifar10.md6=x")


# ---- the command line ----------------------------------------------------------------------


def source_overrides(dataset, filename, sums, urls):
    return [
        f"data.{dataset}.urls=[{','.join(urls)}]",
        f"data.{dataset}.size={sums['size']}",
        f"data.{dataset}.md5={sums['md5']}",
        f"data.{dataset}.sha256={sums['sha256']}",
        f"data.{dataset}.filename={filename}",
    ]


def test_concurrent_prepares_download_once_then_runs_need_no_network(
    tmp_path, bench_env, cifar, archive_server, run_bench
):
    path, raw, cifar_sums = cifar
    imdb_path = tmp_path / "archives" / "imdb.npz"
    imdb_archive(imdb_path, num_train=80, num_test=30)
    imdb_sums = checksums(imdb_path)
    archive_server.serve(CIFAR, path.read_bytes(), seconds=1.0)  # slow: the two overlap
    archive_server.serve("imdb.npz", imdb_path.read_bytes(), seconds=0.5)
    env = dict(bench_env, BENCH_CACHE_DIR=str(tmp_path / "cache"))

    def overrides(cifar_urls, imdb_urls):
        return source_overrides("cifar10", CIFAR, cifar_sums, cifar_urls) + source_overrides(
            "imdb", "imdb.npz", imdb_sums, imdb_urls
        )

    prepare = [
        sys.executable,
        "-m",
        "bench",
        "prepare",
        "task=cnn,rnn",
        "data=real",
        *overrides([archive_server.url(CIFAR)], [archive_server.url("imdb.npz")]),
    ]
    procs = [
        subprocess.Popen(
            prepare,
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    assert len(archive_server.gets(CIFAR)) == 1 and len(archive_server.gets("imdb.npz")) == 1
    for out, _ in outputs:
        assert re.search(r"^prepare cnn data=real: CIFAR-10 .* in .*cifar10-v1-", out, re.M)
        assert re.search(r"^prepare rnn data=real: IMDB .* in .*imdb-v1-", out, re.M)
    assert not list((tmp_path / "cache").rglob("*.part"))
    offline = overrides([closed_port_url(CIFAR)], [closed_port_url("imdb.npz")])
    run = run_bench(
        "-m", "framework=fake", "preset=smoke", "task=cnn,rnn", "data=real", *offline, env=env
    )
    assert run.returncode == 0, run.output
    results = [json.loads(p.read_text()) for p in run.result_paths]
    results = {r["config"]["task"]["name"]: r for r in results}
    assert results["cnn"]["status"] == results["rnn"]["status"] == "ok"
    assert results["cnn"]["test_examples"] == 20 and results["rnn"]["test_examples"] == 30
    assert results["cnn"]["train_examples"] == 80  # smoke asks for more: all there are
    assert results["cnn"]["data"]["source"]["url"] == archive_server.url(CIFAR)
    verify = subprocess.run(
        [sys.executable, "-m", "bench", "prepare", "--verify", "task=rnn", "data=real", *offline],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verify.returncode == 0 and "altered" not in verify.stderr, verify.stderr


def test_without_network_or_archive_the_run_stops_before_any_worker(tmp_path, bench_env, run_bench):
    env = dict(bench_env, BENCH_CACHE_DIR=str(tmp_path / "cache"))
    url = closed_port_url("imdb.npz")
    run = run_bench(
        "framework=fake",
        "task=rnn",
        "data=real",
        "preset=smoke",
        f"data.imdb.urls=[{url}]",
        env=env,
    )
    assert run.returncode == 1, run.output
    r = run.result
    assert r["status"] == "failed"
    assert r["error"].startswith(f"could not download imdb.npz from any of: {url} (")
    assert "data.archive=/path/to/imdb.npz" in r["error"]
    assert "`python -m bench prepare task=rnn data=real`" in r["error"]
    run_dir = run.result_paths[0].parent
    assert not (run_dir / "run.json").exists() and not (run_dir / "worker.log").exists()
    assert "FAILED - could not download imdb.npz" in run.output
