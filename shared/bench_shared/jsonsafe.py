"""Strict JSON for result files: Python's json writes NaN and Infinity, which are not JSON
(other tools refuse the file). Non-finite floats become the strings "nan", "inf", "-inf"."""

import math

import numpy as np


def finite(obj):
    """obj with every non-finite float (numpy's included) replaced by its name as a string."""
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else repr(float(obj))
    if isinstance(obj, dict):
        return dict((key, finite(value)) for key, value in obj.items())
    if isinstance(obj, (list, tuple)):
        return [finite(value) for value in obj]
    return obj
