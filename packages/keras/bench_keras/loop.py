"""Keras' own training and inference API, shared by the task modules and the same on every
backend: compile, fit (every epoch in one call), predict; the image layout."""

import keras
import numpy as np

from bench_keras_layers import native_layout  # noqa: F401  NCHW -> NHWC once

from . import options


def compile_model(model, optimizer, loss=None):
    """Softmax fused into the loss (from_logits), batch mean, integer labels (unless `loss`
    says otherwise); jit_compile as a switch: XLA on TensorFlow, jax.jit (donated state) on
    JAX, torch.compile on PyTorch. Under mixed_float16, compile wraps the optimizer in a
    LossScaleOptimizer by itself."""
    model.compile(
        optimizer=optimizer,
        loss=loss or keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=bool(options()["jit_compile"]),
    )
    model.spec_excluded = ()  # paths of weights SPEC's model lacks (count_parameters, tensors)
    return model


def _generator(batches, taken):
    """Keras' data adapters take a generator (not any iterable); `taken` counts what it
    gave."""
    for batch in batches:
        taken.append(1)
        yield batch


def train_epoch(model, batches):
    """One epoch of model.fit over the shared batch order; Keras' mean loss of the epoch (the
    runtime's steps of `verify`; a run trains through train)."""
    strategy = backend_strategy()
    taken = []
    history = model.fit(
        fit_input(model, batches, taken),
        epochs=1,
        steps_per_epoch=len(batches),
        verbose=0,
        shuffle=False,
    )
    if len(taken) != len(batches):
        raise RuntimeError(
            "model.fit read %d of the epoch's %d batches (Keras %s%s)"
            % (
                len(taken),
                len(batches),
                keras.__version__,
                " under %s" % type(strategy).__name__ if strategy else "",
            )
        )
    return history.history["loss"][-1]


def train(model, epochs):
    """Every epoch in one model.fit, Keras' own idiom (the 2018 scripts ran one fit): fit reads
    the epochs' batches one after another in the shared order (epochs_input), and a callback
    brackets (and, where tf.data gathers the batches, stamps) each epoch for the runtime,
    which times, records and evaluates it (EpochClock, bench_shared.worker.Epochs). The first
    epoch's window opens before fit, as one fit per epoch would open it: it holds fit's
    set-up, in which Keras' input adapter reads the first batches."""
    given = []
    epochs.begin(0)
    model.fit(
        epochs_input(model, epochs, given),
        epochs=len(epochs),
        steps_per_epoch=len(epochs.batches_of(0)),
        verbose=0,
        shuffle=False,
        callbacks=[EpochClock(epochs, given)],
    )


class EpochClock(keras.callbacks.Callback):
    """One fit's epochs bracketed for the runtime: begin(k) as Keras starts epoch k (the first
    is begun before fit), end(k, the epoch's mean loss) when its last step is done, and fit
    stopped where end() says so (the quality target); where tf.data gathers the batches
    (gathers), each batch stamped on the runtime's clock as the step that reads it begins.
    Each epoch must have run all its steps on all its batches, read once: otherwise the epochs
    would be shifted against the shared order, and the run fails."""

    def __init__(self, epochs, given):
        super().__init__()
        self.epochs, self.given, self.ran, self.batches = epochs, given, 0, None

    def on_epoch_begin(self, epoch, logs=None):
        self.ran = 0
        if epoch > 0:
            self.epochs.begin(epoch)
        self.batches = self.epochs.batches_of(epoch) if gathers(self.epochs) else None

    def on_train_batch_begin(self, batch, logs=None):  # not a batch end: no sync, no thread
        if self.batches is not None:
            self.batches.stamp(batch)
        self.ran += 1

    def on_epoch_end(self, epoch, logs=None):
        if self.batches is not None:
            self.batches.close()
        self.model.stop_training = self.epochs.end(epoch, logs["loss"])
        steps = len(self.epochs.batches_of(epoch))
        if self.ran != steps or self.given[epoch] != steps:
            raise RuntimeError(
                "model.fit ran %d steps of epoch %d, reading %d of its %d "
                "batches (Keras %s)"
                % (self.ran, epoch + 1, self.given[epoch], steps, keras.__version__)
            )


def _every_epoch(epochs, given):
    """The epochs' batches one after another (given[k]: how many of epoch k's were read)."""
    for batches in epochs:
        given.append(0)
        for batch in batches:
            given[-1] += 1
            yield batch


def gathers(epochs):
    """Whether fit's input gathers each batch inside tf.data from the training set held as
    tensors (bench_tensorflow.pipeline.gathered): on TensorFlow, one device, plain rows (no
    per-batch transform). Elsewhere the batches come from TrainBatches, which stamps them."""
    return (
        keras.backend.backend() == "tensorflow"
        and backend_strategy() is None
        and epochs.batches_of(0).transform is None
    )


def epochs_input(model, epochs, given):
    """What one fit over every epoch reads: the epochs' batches one after another in the shared
    order (given[k]: how many of epoch k's it read), gathered inside tf.data where gathers()
    says so, else fit_input's over them. The R rows use it too."""
    first = epochs.batches_of(0)
    if gathers(epochs):
        import tensorflow as tf

        from bench_tensorflow import pipeline

        # every epoch's index rows made here, on this thread (Epochs is not shared with
        # tf.data's): a few bytes an example an epoch
        matrices = [epochs.batches_of(k).index_matrix() for k in range(len(epochs))]
        given.extend(len(rows) for rows in matrices)
        rows = tf.data.Dataset.from_tensor_slices(np.concatenate(matrices))
        return pipeline.gathered(first.x, first.y, rows, x_dtype=model.inputs[0].dtype)
    return fit_input(model, first, source=lambda: _every_epoch(epochs, given))


def fit_input(model, batches, taken=None, source=None):
    """What fit reads of the shared batch order: `source()`, a generator of batches shaped as
    `batches` (by default one epoch, `batches`, each counted in `taken`), on TensorFlow in our
    own tf.data pipeline (_dataset; under a strategy _distributed_dataset), on JAX and PyTorch
    as it is. The R rows use it too."""
    taken = [] if taken is None else taken
    source = source or (lambda: _generator(batches, taken))
    if backend_strategy() is not None:
        return _distributed_dataset(model, batches, source)
    if keras.backend.backend() == "tensorflow":
        return _dataset(source, _signature(model, batches))
    return source()


def predict_input(model, batches):
    """What predict reads: (x,) per batch of the list `batches`, as fit_input."""
    if keras.backend.backend() != "tensorflow":
        return ((x,) for x in batches)  # Keras wants (inputs,) tuples from a generator
    import tensorflow as tf

    shape = (None,) + tuple(model.inputs[0].shape[1:])
    return _dataset(lambda: ((x,) for x in batches), (tf.TensorSpec(shape, model.inputs[0].dtype),))


def _dataset(generator, signature):
    """On TensorFlow, the epoch as our own tf.data pipeline: Keras' adapter for a generator
    autotunes, and the teardown of an autotuned pipeline stalled every fit of one epoch until
    2.57 or 5.13 s after it began (bench_tensorflow.pipeline)."""
    from bench_tensorflow import pipeline

    return pipeline.from_generator(generator, signature)


def _signature(model, batches, size=None):
    """The (x, y) TensorSpecs of the epoch's batches (`size`: a static batch size): x as the
    model's input, y as the labels (TrainBatches' y, or a plain list's first batch's)."""
    import tensorflow as tf

    y = batches.y if hasattr(batches, "y") else np.asarray(batches[0][1])
    return (
        tf.TensorSpec((size,) + tuple(model.inputs[0].shape[1:]), model.inputs[0].dtype),
        tf.TensorSpec((size,) + tuple(y.shape[1:]), y.dtype),
    )


def _distributed_dataset(model, batches, source):
    """`source()` as a tf.data.Dataset for fit under a tf.distribute strategy (keras on
    TensorFlow, devices=N), which splits each global batch over the replicas: a Python
    generator there is split element by element, not batch by batch. The global batch size
    is static, as the split needs.

    Keras 3.15's fit under a strategy first builds the model from a batch of a pass of its own
    over the dataset (TensorFlowTrainer._maybe_symbolic_build), built or not: that pass gets
    zeros of the batch's shape, so that the shared order's batches are read once, in order (the
    training transform's random crops and the batch clock follow them)."""
    size = batches.batch_size * batches.world_size  # the global batch (TrainBatches)
    signature = _signature(model, batches, size)
    dummy = tuple(
        np.zeros([d or 32 for d in spec.shape], spec.dtype.as_numpy_dtype) for spec in signature
    )
    passes = []

    def read():
        passes.append(1)
        if len(passes) == 1:  # Keras' build
            yield dummy
            return
        yield from source()

    return _dataset(read, signature)


def backend_strategy():
    """The tf.distribute strategy the model was built under (TensorFlow, devices=N), or None."""
    from . import backend

    return getattr(backend(), "strategy", lambda: None)()


def predict(model, batches):
    multiple = _batch_multiple()
    batches = list(batches)
    sizes = [len(x) for x in batches]
    batches = [_padded(x, multiple) for x in batches]
    outputs = model.predict(predict_input(model, batches), steps=len(batches), verbose=0).astype(
        "float32"
    )
    if multiple == 1:
        return outputs
    starts = np.cumsum([0] + [len(x) for x in batches[:-1]])
    return np.concatenate([outputs[s : s + n] for s, n in zip(starts, sizes)])


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
