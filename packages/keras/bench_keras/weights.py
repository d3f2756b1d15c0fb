"""Neutral weights (bench_shared.weights) <-> this package's models: Keras layer variables,
whose layouts are the same on every backend and converted by bench_keras_layers.weights (for
bench_tensorflow's Keras layers too). What is this package's own: the tensors are the Keras
model's weights (bench_keras.tensors)."""

from bench_keras_layers.weights import batch_norm_places, slots, variable_tensors  # noqa: F401
