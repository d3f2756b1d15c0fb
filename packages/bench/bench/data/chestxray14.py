"""NIH ChestX-ray14 (SPEC.md task `densenet`) from a directory the user already has, read by
the orchestrator only. It is never downloaded (45 GB; https://nihcc.app.box.com/v/ChestXray-NIHCC).

Read: Data_Entry_2017.csv with NIH's columns ("Image Index", "Finding Labels", "Follow-up #",
"Patient ID", ...; the others are ignored) and the PNG images it lists, found by file name
anywhere under the directory in one walk (NIH ships them as images_001/images ...
images_012/images; some copies have one images/).

Prepared as the 2018 benchmark did it (ilkarman/DeepLearningFrameworks,
notebooks/common/utils.py: get_imgloc_labels, get_train_valid_test_split, resize_im):
- labels: multi-hot float32 (N, 14) in LABELS' order, which is pandas' str.get_dummies order
  (sorted) with "No Finding" dropped; "No Finding" is a row of zeros.
- split by patient, no shuffle: the 2018 code splits the patient IDs 1..30,805 with sklearn's
  train_test_split(shuffle=False), 70 % then the rest 1:2, so the lowest IDs train and the
  highest test (21,563 / 3,080 / 6,162 patients; 87,306 / 7,616 / 17,198 images). Here the
  patients the CSV lists, in ascending numeric ID, are cut at the same sizes (split_sizes);
  each split keeps the CSV's row order, as the 2018 code's filter of the CSV did.
- images: resized once to size x size with Pillow's bilinear filter (Image.resize BILINEAR,
  as resize_im; Pillow widens the filter when it shrinks, so it averages rather than skips
  pixels), stored as 8-bit grayscale uint8 (N, size, size). The 2018 code stored RGB with
  three equal channels; the worker repeats the one. The few RGB(A) images NIH ships are
  converted to grayscale first (ITU-R 601 luma; their colour channels are equal).
Arrays: train_x/train_y, valid_x/valid_y, test_x/test_y. The images are written chunk by chunk
straight into their .npy files in the cache entry (all 112,120 at 264 x 264 are 7.8 GB, never
in memory at once).
"""

import concurrent.futures
import csv
import hashlib
import io
import math
import os
from pathlib import Path

import numpy as np
from PIL import Image

from bench_shared import spec

from ..errors import DataError
from . import cache

CSV_NAME = "Data_Entry_2017.csv"
COLUMNS = ("Image Index", "Finding Labels", "Follow-up #", "Patient ID")
NO_FINDING = "No Finding"
LABELS = spec.DenseNet121.labels  # the classifier's columns, in this order
SPLITS = ("train", "valid", "test")
SIZE = spec.DenseNet121.resize
URL = "https://nihcc.app.box.com/v/ChestXray-NIHCC"
MODES = ("L", "1", "P", "LA", "RGB", "RGBA")  # 8-bit modes that convert to grayscale as they are
CHUNK_IMAGES = 256  # images resized in memory before they go to the memory map
NAMES_SHOWN = 5
GET_IT = (
    f"get ChestX-ray14 from {URL} (Data_Entry_2017.csv and images_001.tar.gz ... "
    f"images_012.tar.gz, extracted)"
)


def csv_path(directory) -> Path:
    """The CSV of a ChestX-ray14 directory; DataError when either is missing."""
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise DataError(
            f"data.chestxray14.directory={directory}: no such directory; "
            f"{GET_IT} and pass its directory"
        )
    path = directory / CSV_NAME
    if not path.is_file():
        raise DataError(
            f"data.chestxray14.directory={directory} has no {CSV_NAME} (NIH's "
            f"labels file, expected at its top level); {GET_IT}"
        )
    return path


def fingerprint(directory, size, preparation) -> str:
    """SHA-256 of the CSV's bytes, the image size and the preparation's version: what names a
    cache entry (the 45 GB of images are not hashed; the CSV lists them)."""
    digest = hashlib.sha256(csv_path(directory).read_bytes())
    digest.update(f"|size={size}|{preparation}".encode())
    return digest.hexdigest()


def _rows(text, path: Path):
    """The CSV's rows; one the csv module cannot read (a field over its 131,072-character
    limit, as an unclosed quote makes of the rest of a file; a NUL byte) is a DataError."""
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataError(
                f"{path} is not NIH's {CSV_NAME}: line {reader.line_num}: {exc}"
            ) from None
        yield row


def read_entries(csv_bytes, path: Path):
    """[(image name, patient ID, multi-hot row)] in the CSV's order (csv_bytes: path's)."""
    try:
        text = csv_bytes.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path} is not NIH's {CSV_NAME}: not text ({exc})") from None
    rows = _rows(text, path)
    header = [name.strip() for name in next(rows, [])]
    missing = [name for name in COLUMNS if name not in header]
    if missing:
        raise DataError(
            f"{path} is not NIH's {CSV_NAME}: it has no column "
            f"{', '.join(repr(m) for m in missing)} (its columns: "
            f"{', '.join(repr(h) for h in header) or 'none'}; expected "
            f"{', '.join(repr(c) for c in COLUMNS)}, ...)"
        )
    image_at, labels_at, patient_at = (
        header.index(c) for c in ("Image Index", "Finding Labels", "Patient ID")
    )
    index = {label: i for i, label in enumerate(LABELS)}
    entries, seen = [], set()
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(image_at, labels_at, patient_at):
            raise DataError(f"{path}, line {line}: {len(row)} fields, fewer than its header's")
        image = row[image_at].strip()
        if image in seen:
            raise DataError(f"{path}, line {line}: {image} is listed twice")
        seen.add(image)
        try:
            patient = int(row[patient_at])
        except ValueError:
            raise DataError(
                f"{path}, line {line}: Patient ID {row[patient_at]!r} is not a number"
            ) from None
        hot = np.zeros(len(LABELS), np.float32)
        for label in (part.strip() for part in row[labels_at].split("|")):
            if label == NO_FINDING:
                continue
            if label not in index:
                raise DataError(
                    f"{path}, line {line} ({image}): unknown finding {label!r}; "
                    f"known: {', '.join(LABELS)} and {NO_FINDING!r}"
                )
            hot[index[label]] = 1
        entries.append((image, patient, hot))
    if not entries:
        raise DataError(f"{path} lists no images")
    return entries


def split_sizes(patients, fractions=spec.DenseNet121.split):
    """(train, valid, test) patient counts as get_train_valid_test_split computed them with
    sklearn's train_test_split(shuffle=False): train floor(0.7 n), valid floor(1/3 of the
    rest) in the same floating point ((0.1 + 0.2) is 0.30000000000000004 there), test the
    remainder. That is sklearn's result (its ceil for the second part) for NIH's 30,805
    patients and for every count up to 40,000 that sklearn accepts; for those it refuses
    (ceil and floor overshoot, e.g. n = 10) the remainder keeps every patient."""
    train, valid, test = fractions
    other = valid + test
    num_train = math.floor(train * patients)
    num_valid = math.floor(valid / other * (patients - num_train))
    return num_train, num_valid, patients - num_train - num_valid


def split(entries, path):
    """{split: [row numbers]}: patients in ascending ID, cut by split_sizes; rows in CSV order."""
    patients = sorted({patient for _, patient, _ in entries})
    sizes = split_sizes(len(patients))
    if min(sizes) < 1:
        raise DataError(
            f"{path} lists {len(patients)} patients, too few for a 70/10/20 split "
            f"by patient (sizes {sizes})"
        )
    where, start = {}, 0
    for name, count in zip(SPLITS, sizes):
        where.update((patient, name) for patient in patients[start : start + count])
        start += count
    rows = {name: [] for name in SPLITS}
    for row, (_, patient, _) in enumerate(entries):
        rows[where[patient]].append(row)
    return rows, dict(zip(SPLITS, sizes))


def find_images(directory: Path, names, path):
    """{name: file} for every listed image, found by name in one walk under directory."""
    wanted, found, walked = set(names), {}, set()
    for root, folders, files in os.walk(directory, followlinks=True):
        real = os.path.realpath(root)
        if real in walked:  # a link back to a folder already walked
            folders[:] = []
            continue
        walked.add(real)
        folders.sort()
        for name in wanted.intersection(files):
            file = Path(root) / name
            if name in found and os.path.realpath(found[name]) != os.path.realpath(file):
                raise DataError(
                    f"{name} is under {directory} twice: {found[name]} and {file}; "
                    f"keep one copy of the images"
                )
            found[name] = file
    missing = [name for name in names if name not in found]
    if missing:
        shown = ", ".join(missing[:NAMES_SHOWN]) + (", ..." if len(missing) > NAMES_SHOWN else "")
        raise DataError(
            f"{len(missing):,} of the {len(names):,} images {path.name} lists are "
            f"not under {directory} (searched by name in every folder): {shown}; "
            f"extract every images_*.tar.gz of {URL} there"
        )
    return found


def load_image(file, size):
    """One image as 8-bit grayscale, resized to size x size (bilinear): uint8 (size, size)."""
    try:
        with Image.open(file) as image:  # Pillow refuses images over its pixel limit
            if image.mode not in MODES:
                raise DataError(
                    f"{file}: a {image.mode} image; ChestX-ray14's are 8-bit ({', '.join(MODES)})"
                )
            gray = image if image.mode == "L" else image.convert("L")
            small = gray.resize((size, size), Image.Resampling.BILINEAR)
    except Image.DecompressionBombError as exc:
        raise DataError(
            f"{file} is not one of ChestX-ray14's images (1024 x 1024): {exc}"
        ) from None
    except (OSError, SyntaxError, ValueError) as exc:  # unreadable, cut or not an image
        raise DataError(f"{file} is not a readable image ({type(exc).__name__}: {exc})") from None
    return np.asarray(small, dtype=np.uint8)


class _Progress:
    """A line on stderr every tenth of the images (a full preparation takes a while)."""

    def __init__(self, total):
        self.total, self.done, self.next = total, 0, total / 10

    def add(self, count):
        self.done += count
        if self.done >= self.next and self.done < self.total:
            cache.say(f"ChestX-ray14: {self.done:,} of {self.total:,} images resized")
            self.next += self.total / 10


def _write_images(target: Path, files, size, pool, progress):
    """files resized into a new .npy file at target, CHUNK_IMAGES at a time, written in
    order through a plain file (a writable memory map would keep every page it wrote
    resident: 7.8 GB); returned memory-mapped, read-only."""
    shape = (len(files), size, size)
    with open(target, "wb") as out:
        np.lib.format.write_array_header_1_0(
            out, {"descr": "|u1", "fortran_order": False, "shape": shape}
        )
        for start in range(0, len(files), CHUNK_IMAGES):
            chunk = files[start : start + CHUNK_IMAGES]
            out.write(np.stack(list(pool.map(load_image, chunk, [size] * len(chunk)))).tobytes())
            progress.add(len(chunk))
    return np.load(target, mmap_mode="r")


def _threads():
    return max(1, min(8, len(os.sched_getaffinity(0))))  # decoding and resizing free the GIL


def prepare(directory, entry: Path, size=SIZE, verify=False, lock_timeout_s=cache.LOCK_TIMEOUT_S):
    """The manifest of entry, a cache entry of the arrays (module docstring), prepared from
    directory first if it is missing or altered."""
    directory = Path(directory).expanduser()
    path = csv_path(directory)
    meta = {}

    def build(tmp):
        csv_bytes = path.read_bytes()
        entries = read_entries(csv_bytes, path)
        rows, patients = split(entries, path)
        files = find_images(directory, [image for image, _, _ in entries], path)
        cache.say(
            f"ChestX-ray14: resizing {len(entries):,} images of {directory} to "
            f"{size}x{size} once, into {entry}"
        )
        progress = _Progress(len(entries))
        arrays = {}
        with concurrent.futures.ThreadPoolExecutor(_threads()) as pool:
            for name in SPLITS:
                arrays[name + "_x"] = _write_images(
                    tmp / f"{name}_x.npy",
                    [files[entries[r][0]] for r in rows[name]],
                    size,
                    pool,
                    progress,
                )
                arrays[name + "_y"] = np.stack([entries[r][2] for r in rows[name]])
        meta.update(
            source={
                "directory": str(directory),
                "csv": CSV_NAME,
                "url": URL,
                "csv_sha256": hashlib.sha256(csv_bytes).hexdigest(),
            },
            labels=list(LABELS),
            split={
                name: {"patients": patients[name], "images": len(rows[name])} for name in SPLITS
            },
            preprocessing=f"grayscale uint8, resized to {size}x{size} (Pillow bilinear)",
        )
        return arrays

    description = f"ChestX-ray14 ({directory / CSV_NAME}, {size}x{size} grayscale)"
    return cache.prepared(
        entry, build, description, meta, verify=verify, lock_timeout_s=lock_timeout_s, in_place=True
    )
