"""Keras' own training and inference API, shared by the task modules and the same on every
backend: compile, fit, predict; the image layout."""
import keras
import numpy as np

from . import options


def native_layout(x):
    """NCHW -> NHWC, once, at load time: Keras' image layers default to channels last on
    every backend (its torch backend transposes to NCHW inside each convolution)."""
    return np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1)))


def compile_model(model, optimizer, loss=None):
    """Softmax fused into the loss (from_logits), batch mean, integer labels (unless `loss`
    says otherwise); jit_compile as a switch: XLA on TensorFlow, jax.jit (donated state) on
    JAX, torch.compile on PyTorch. Under mixed_float16, compile wraps the optimizer in a
    LossScaleOptimizer by itself."""
    model.compile(optimizer=optimizer,
                  loss=loss or keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=bool(options()["jit_compile"]))
    model.spec_excluded = ()  # paths of weights SPEC's model lacks (count_parameters, tensors)
    return model


def _generator(batches):
    """Keras' data adapters take a generator (not any iterable)."""
    yield from batches


def train_epoch(model, batches):
    """One epoch of model.fit over the shared batch order; Keras' mean loss of the epoch."""
    history = model.fit(_generator(batches), epochs=1, steps_per_epoch=len(batches), verbose=0,
                        shuffle=False)
    return history.history["loss"][-1]


def predict(model, batches):
    multiple = _batch_multiple()
    batches = list(batches)
    sizes = [len(x) for x in batches]
    batches = [_padded(x, multiple) for x in batches]
    inputs = ((x,) for x in batches)  # Keras wants (inputs,) tuples from a generator
    outputs = model.predict(inputs, steps=len(batches), verbose=0).astype("float32")
    if multiple == 1:
        return outputs
    starts = np.cumsum([0] + [len(x) for x in batches[:-1]])
    return np.concatenate([outputs[s:s + n] for s, n in zip(starts, sizes)])


def _batch_multiple():
    """Under a Keras distribution (keras_jax's DataParallel, devices=N) every batch is sharded
    over the N devices, so its size must be a multiple of N; 1 otherwise."""
    distribution = keras.distribution.distribution()
    return int(distribution.device_mesh.devices.size) if distribution else 1


def _padded(x, multiple):
    """A short last evaluation batch repeated up to a multiple of the devices (those outputs
    are dropped)."""
    short = -len(x) % multiple
    return np.concatenate([x, x[-1:].repeat(short, axis=0)]) if short else x
