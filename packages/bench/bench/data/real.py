"""data=real: SPEC.md's CIFAR-10 and IMDB, downloaded (or taken from data.archive), verified
and prepared once into the arrays the workers memory-map; ChestX-ray14 from the directory the
user has (data.chestxray14.directory; 45 GB, never downloaded).

Cache layout under the cache root (data.cache_dir, $BENCH_CACHE_DIR, ~/.cache/rosetta-bench):
    downloads/<checksum>/<filename>        the verified archive, kept so that an altered
                                           prepared entry can be prepared again offline
    real/<dataset>-<version>-<checksum>/   the prepared .npy arrays and manifest.json
Both are named by the archive's configured checksum: a prepared entry is found without the
network, and another archive (another release, a test's) never shares a cached file.
ChestX-ray14 has no archive: real/chestxray14-<version>-<size>-<hash>/ is named by the SHA-256
of the user's Data_Entry_2017.csv, the stored image size and the version: SPEC's 264 for the
224 crop, in proportion for a smaller task.image_size (bench.data.synthetic.stored_size), so
entries of different sizes never share a directory.
"""

from pathlib import Path

from ..errors import DataError
from . import cache, chestxray14, cifar10, download, imdb

READERS = {"cifar10": cifar10.read, "imdb": imdb.read}
NAMES = {"cifar10": "CIFAR-10", "imdb": "IMDB"}
DIRECTORIES = ("chestxray14",)  # datasets the user already has as a directory
PREPARATION = "v1"  # bump when the preprocessing changes, so old entries are not reused


def _checksum(source):
    wanted = download.expected_checksums(source)
    return wanted.get("sha256") or wanted["md5"]


def _local(path, source, dataset, option):
    """option: the setting that named path (data.archive or data.<dataset>.archive)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(f"{option}={path}: no such file (expected {source.filename} for {dataset})")
    try:
        return path, dict(download.verify(path, source), archive=str(path))
    except download.Mismatch as exc:
        raise DataError(
            f"{option}={path} is not {source.filename} as configured for "
            f"{dataset} ({exc}); pass the original {source.filename}"
        ) from None


def _advice(task_name, dataset, source):
    return (
        f" Download it on a machine with internet and pass "
        f"data.archive=/path/to/{source.filename}, or run `python -m bench prepare "
        f"task={task_name} data=real` there with BENCH_CACHE_DIR on a shared file system "
        f"(or copy that cache directory here); mirrors go in data.{dataset}.urls."
    )


def _chestxray14(data, size):
    """ChestX-ray14 from data.chestxray14.directory, its images stored at size x size: no
    archive, no checksum, no download."""
    directory = data.chestxray14.directory
    if not directory:
        raise DataError(
            f"ChestX-ray14 is never downloaded automatically (45 GB): "
            f"{chestxray14.GET_IT} and pass data.chestxray14.directory=/path/to/it "
            f"(the folder of {chestxray14.CSV_NAME})"
        )
    if data.archive:
        raise DataError(
            f"data.archive={data.archive}: ChestX-ray14 is a directory, not an "
            f"archive; pass data.chestxray14.directory=/path/to/it"
        )
    digest = chestxray14.fingerprint(directory, size, PREPARATION)
    entry = (
        cache.cache_root(data.cache_dir)
        / "real"
        / f"chestxray14-{PREPARATION}-{size}-{digest[:16]}"
    )
    return entry, chestxray14.prepare(
        directory, entry, size, verify=data.verify, lock_timeout_s=data.lock_timeout_s
    )


def prepare(task_name, dataset, data, side=None):
    """(entry directory, manifest) of the prepared arrays of dataset ("cifar10", "imdb" or
    "chestxray14"); side: the side ChestX-ray14's images are stored at (SPEC's 264 by
    default)."""
    if dataset in DIRECTORIES:
        return _chestxray14(data, side or chestxray14.SIZE)
    if dataset not in READERS:
        raise DataError(
            f"data=real has no dataset {dataset!r}; known: {', '.join((*READERS, *DIRECTORIES))}"
        )
    if data.attempts < 1 or data.timeout_s <= 0:
        raise DataError(
            f"data.attempts ({data.attempts}) must be at least 1 and "
            f"data.timeout_s ({data.timeout_s}) positive"
        )
    source = getattr(data, dataset)
    checksum = _checksum(source)
    root = cache.cache_root(data.cache_dir)
    entry = root / "real" / f"{dataset}-{PREPARATION}-{checksum[:16]}"
    archive = source.archive or data.archive
    option = f"data.{dataset}.archive" if source.archive else "data.archive"
    meta = {}

    def build():
        if archive:
            path, info = _local(archive, source, dataset, option)
        else:
            try:
                path, info = download.fetch(
                    source,
                    root / "downloads" / checksum[:16],
                    data.timeout_s,
                    data.attempts,
                    data.lock_timeout_s,
                )
            except DataError as exc:
                raise DataError(str(exc) + _advice(task_name, dataset, source)) from None
        try:
            arrays = READERS[dataset](path)
        except DataError as exc:
            if archive:
                raise
            path.unlink(missing_ok=True)  # its checksum matched the config, yet it is unusable
            raise DataError(
                f"{exc}; the download was deleted. Check the configured checksum "
                f"of {source.filename} (data.{dataset}.sha256/md5)"
            ) from None
        meta["source"] = dict(info, filename=source.filename)
        return arrays

    description = f"{NAMES[dataset]} ({source.filename}, {checksum})"
    return entry, cache.prepared(
        entry, build, description, meta, verify=data.verify, lock_timeout_s=data.lock_timeout_s
    )
