"""A restricted unpickler for the datasets' pickles (CIFAR-10 batches, imdb.npz's object
arrays): numpy arrays, their dtypes and plain containers, nothing else. A pickle naming any
other callable (os.system, ...) is refused before that callable is even looked up, so an
archive whose checksum a user accepted (their own mirror, a checksum override) cannot run code.
"""

import pickle

import numpy as np


class ArrayUnpickler(pickle.Unpickler):
    ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),
    }  # bytes in a protocol-2 pickle written by Python 3

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"unexpected object {module}.{name}")
        if module == "numpy.core.multiarray" and hasattr(np, "_core"):
            module = "numpy._core.multiarray"  # numpy 2 renamed it; old pickles use the old name
        return super().find_class(module, name)
