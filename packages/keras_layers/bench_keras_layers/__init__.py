"""Keras 3's layer conventions, shared by every row built of Keras layers whatever trains them
(framework=keras's fit on any backend, bench_keras; framework=tensorflow's GradientTape step,
bench_tensorflow): the neutral weights' Keras layouts (weights), SPEC's per-gate GRU
initialisers (init), SPEC's Adam (optimizers), the mixed-precision policies and the image
layout. Not a framework row itself, and no backend: importing it imports keras only, so that
the JAX and PyTorch rows need no TensorFlow and the two TensorFlow rows depend one way (Keras
on TensorFlow reuses bench_tensorflow's runtime set-up; bench_tensorflow uses this)."""

import numpy as np

# Keras' mixed-precision policies: bf16/fp16 compute, float32 variables (every backend)
POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def native_layout(x):
    """NCHW -> NHWC, once, at load time: Keras' image layers default to channels last on
    every backend (its torch backend transposes to NCHW inside each convolution)."""
    return np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1)))
