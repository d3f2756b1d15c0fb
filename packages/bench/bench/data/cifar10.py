"""CIFAR-10 from its Python-pickle release (SPEC.md task `cnn`), read by the orchestrator only.

The batches are read straight out of cifar-10-python.tar.gz in one pass (nothing is extracted
to disk), by an unpickler that builds numpy arrays and plain containers and nothing else, and
become what the workers memory-map: x float32 NCHW (pixels / 255, no mean subtraction),
y int64. A CIFAR row is 1,024 red, then green, then blue values in row-major order, so it
reshapes to (3, 32, 32) as it is.
"""

import pickle
import tarfile
import zlib

import numpy as np

from bench_shared.spec import CNN

from ..errors import DataError
from . import safe_pickle

FOLDER = "cifar-10-batches-py/"
SPLITS = {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]}
PIXELS = int(np.prod(CNN.input_shape))
CHUNK = 1 << 20


# Only what a CIFAR batch holds (a dict of bytes, lists and one uint8 array)
_BatchUnpickler = safe_pickle.ArrayUnpickler


def _batch(handle, name):
    batch = _BatchUnpickler(handle, encoding="bytes").load()  # Python 2 pickles
    if not isinstance(batch, dict) or b"data" not in batch or b"labels" not in batch:
        raise ValueError(f"{name} is not a CIFAR-10 batch (no data and labels)")
    data = batch[b"data"]
    labels = np.asarray(batch[b"labels"], dtype=np.int64)
    if not (
        isinstance(data, np.ndarray)
        and data.dtype == np.uint8
        and data.ndim == 2
        and data.shape[1] == PIXELS
    ):
        raise ValueError(f"{name}: data is not uint8 (N, {PIXELS})")
    if labels.shape != (len(data),) or (
        len(labels) and not (0 <= labels.min() and labels.max() < CNN.num_classes)
    ):
        raise ValueError(f"{name}: labels are not {len(data)} classes in 0..{CNN.num_classes - 1}")
    return data, labels


def _arrays(batches):
    n = sum(len(data) for data, _ in batches)
    x = np.empty((n,) + CNN.input_shape, np.float32)
    start = 0
    for data, _ in batches:
        view = x[start : start + len(data)]
        np.divide(data.reshape(view.shape), np.float32(255), out=view, dtype=np.float32)
        start += len(data)
    return x, np.concatenate([labels for _, labels in batches])


def read(path):
    """{"train_x", "train_y", "test_x", "test_y"} from cifar-10-python.tar.gz; DataError
    when the archive is not a complete, readable CIFAR-10 release."""
    wanted = {FOLDER + name for names in SPLITS.values() for name in names}
    found = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:  # one sequential pass over the compressed stream
                if member.name in wanted and member.isfile():
                    found[member.name] = _batch(tar.extractfile(member), member.name)
            # on to the gzip trailer, past the tar's end marker: its CRC and length check
            # every byte (a corrupt or cut archive whose checksum was overridden fails here)
            while tar.fileobj.read(CHUNK):
                pass
        missing = sorted(wanted - set(found))
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
    except (
        tarfile.TarError,
        pickle.UnpicklingError,
        EOFError,
        OSError,
        zlib.error,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
    ) as exc:
        raise DataError(
            f"{path} is not a valid CIFAR-10 archive ({type(exc).__name__}: {exc})"
        ) from None
    arrays = {}
    for split, names in SPLITS.items():
        arrays[split + "_x"], arrays[split + "_y"] = _arrays([found[FOLDER + n] for n in names])
    return arrays
