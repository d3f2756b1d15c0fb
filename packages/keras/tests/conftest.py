"""The Keras framework this session tests: the one whose backend this process's Keras runs
(KERAS_BACKEND, set by the noxfile's test_env: keras, keras_jax or keras_torch)."""

import functools

import keras

import bench_keras
from bench import testing

FRAMEWORK = {backend: name for name, backend in bench_keras.BACKENDS.items()}[
    keras.backend.backend()
]

make_run = functools.partial(testing.make_run, FRAMEWORK)
