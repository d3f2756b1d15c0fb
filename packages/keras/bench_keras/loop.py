"""Keras' own training and inference API, shared by the task modules and the same on every
backend: compile, fit, predict; the image layout."""
import keras
import numpy as np

from bench_keras_layers import native_layout  # noqa: F401  NCHW -> NHWC once

from . import options


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


def _generator(batches, taken):
    """Keras' data adapters take a generator (not any iterable); `taken` counts what it
    gave."""
    for batch in batches:
        taken.append(1)
        yield batch


def train_epoch(model, batches):
    """One epoch of model.fit over the shared batch order; Keras' mean loss of the epoch."""
    strategy = backend_strategy()
    taken = []
    data = (_generator(batches, taken) if strategy is None
            else _distributed_dataset(model, batches, taken))
    history = model.fit(data, epochs=1, steps_per_epoch=len(batches), verbose=0,
                        shuffle=False)
    if len(taken) != len(batches):
        raise RuntimeError("model.fit read %d of the epoch's %d batches (Keras %s%s)"
                           % (len(taken), len(batches), keras.__version__,
                              " under %s" % type(strategy).__name__ if strategy else ""))
    return history.history["loss"][-1]


def _distributed_dataset(model, batches, taken):
    """The epoch as a tf.data.Dataset for fit under a tf.distribute strategy (keras on
    TensorFlow, devices=N), which splits each global batch over the replicas: a Python
    generator there is split element by element, not batch by batch. The global batch size
    is static, as the split needs.

    Keras 3.15's fit under a strategy first builds the model from a batch of a pass of its own
    over the dataset (TensorFlowTrainer._maybe_symbolic_build), built or not: that pass gets
    zeros of the batch's shape, so that the epoch's batches are read once, in order (the
    training transform's random crops and the batch clock follow them)."""
    import tensorflow as tf

    size = batches.batch_size * batches.world_size  # the global batch (TrainBatches)
    x_shape = (size,) + tuple(model.inputs[0].shape[1:])
    y_shape = (size,) + tuple(batches.y.shape[1:])
    dummy = (np.zeros([d or 32 for d in x_shape], model.inputs[0].dtype),
             np.zeros([d or 1 for d in y_shape], batches.y.dtype))
    passes = []

    def epoch():
        passes.append(1)
        if len(passes) == 1:  # Keras' build
            yield dummy
            return
        yield from _generator(batches, taken)

    return tf.data.Dataset.from_generator(epoch, output_signature=(
        tf.TensorSpec(x_shape, model.inputs[0].dtype),
        tf.TensorSpec(y_shape, batches.y.dtype)))


def backend_strategy():
    """The tf.distribute strategy the model was built under (TensorFlow, devices=N), or None."""
    from . import backend

    return getattr(backend(), "strategy", lambda: None)()


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
    """Under a Keras distribution (keras_jax's DataParallel) or a tf.distribute strategy
    (keras on TensorFlow), devices=N, every batch is split over the N devices, so its size must
    be a multiple of N; 1 otherwise."""
    distribution = keras.distribution.distribution()
    if distribution:
        return int(distribution.device_mesh.devices.size)
    strategy = backend_strategy()
    return int(strategy.num_replicas_in_sync) if strategy is not None else 1


def _padded(x, multiple):
    """A short last evaluation batch repeated up to a multiple of the devices (those outputs
    are dropped)."""
    short = -len(x) % multiple
    return np.concatenate([x, x[-1:].repeat(short, axis=0)]) if short else x
