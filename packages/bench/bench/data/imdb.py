"""IMDB exactly as Keras' loader gives it (SPEC.md task `rnn`): reading imdb.npz, preprocessing.

imdb.npz holds pickled object arrays, so it is read here, by the orchestrator, and only after
its checksum matched, by a restricted unpickler that admits numpy arrays and plain lists of
ints (what the real file holds) and nothing else; the workers get plain int arrays.
"""

import pickle
import zipfile

import numpy as np

from bench_shared.spec import RNN

from ..errors import DataError
from . import safe_pickle

KEYS = ("x_train", "y_train", "x_test", "y_test")
KERAS_SEED = 113  # keras.datasets.imdb.load_data's default seed: the order it hands out


def preprocess(reviews, seq_len=RNN.seq_len, vocab_size=RNN.vocab_size):
    """Word-rank lists -> (n, seq_len) int32: start token, shift by 3, OOV for >= vocab_size,
    keep the *last* seq_len tokens, zero-pad at the *front* (the last step is a real token)."""
    out = np.full((len(reviews), seq_len), RNN.pad_index, dtype=np.int32)
    for i, review in enumerate(reviews):
        tokens = np.concatenate(
            [[RNN.start_index], np.asarray(review, dtype=np.int64) + RNN.index_from]
        )
        tokens[tokens >= vocab_size] = RNN.oov_index
        tokens = tokens[-seq_len:]
        out[i, seq_len - len(tokens) :] = tokens
    return out


def _read_npy(handle, key):
    """One .npy: a plain array as numpy reads it, an object array through the restricted
    unpickler, which must give a 1-d array of lists of ints (the reviews)."""
    version = np.lib.format.read_magic(handle)
    header = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )(handle)
    shape, fortran_order, dtype = header
    if not dtype.hasobject:
        count = int(np.prod(shape))
        data = np.frombuffer(handle.read(count * dtype.itemsize), dtype=dtype, count=count)
        return data.reshape(shape[::-1]).T if fortran_order else data.reshape(shape)
    array = safe_pickle.ArrayUnpickler(handle, encoding="latin1").load()
    if not (isinstance(array, np.ndarray) and array.shape == shape and array.ndim == 1):
        raise ValueError(f"{key} is not a list of reviews")
    for review in array:
        if not (isinstance(review, list) and all(type(t) is int for t in review)):
            raise ValueError(f"{key} holds something other than lists of ints")
    return array


def _load(path):
    """The four arrays of an .npz, read as a zip of .npy files (never as a bare pickle)."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for key in KEYS:
            with archive.open(key + ".npy") as handle:
                arrays[key] = _read_npy(handle, key)
    return arrays


def read(path):
    """{"train_x", "train_y", "test_x", "test_y"} from Keras' imdb.npz: the Keras loader's
    order (a seeded shuffle of train, then of test, which also mixes both labels into the
    first N examples a preset keeps), then preprocess(). DataError if it is not imdb.npz."""
    try:
        raw = _load(path)
        rng = np.random.RandomState(KERAS_SEED)
        arrays = {}
        for split in ("train", "test"):
            x, y = raw["x_" + split], np.asarray(raw["y_" + split])
            if x.ndim != 1 or y.shape != x.shape:
                raise ValueError(f"x_{split} and y_{split} are not two lists of equal length")
            if len(y) and not np.isin(y, (0, 1)).all():
                raise ValueError(f"y_{split} holds labels other than 0 and 1")
            order = np.arange(len(x))
            rng.shuffle(order)
            arrays[split + "_x"] = preprocess(x[order])
            arrays[split + "_y"] = y[order].astype(np.int64)
    except (
        zipfile.BadZipFile,
        KeyError,
        OSError,
        EOFError,
        ValueError,
        TypeError,
        pickle.UnpicklingError,
    ) as exc:
        raise DataError(
            f"{path} is not a valid IMDB archive ({type(exc).__name__}: {exc})"
        ) from None
    return arrays
