"""Keras 2's own training and inference API, shared by the task modules and the same on both
backends: compile, fit (every epoch in one call), predict, each fed the runtime's batches in
its order on this thread."""

import time

import keras

from . import compile_seconds


def compile_model(model, optimizer, loss=None):
    """Softmax fused into the loss (from_logits), batch mean, integer labels (unless `loss`
    says otherwise). Keras 2 builds its training and inference functions on their first use
    (Theano compiles each graph to C then, a minute or more): built here, so that the compile
    is part of the `build` timing and never of the first timed epoch."""
    model.compile(
        optimizer=optimizer,
        loss=loss or keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    model.spec_excluded = ()  # names of weights SPEC's model lacks (count_parameters, tensors)
    build_functions(model, train=True)
    return model


def build_functions(model, train):
    """Keras 2's graph functions, built (Theano: compiled) now rather than on first use; their
    seconds recorded apart (framework.settings.compile_seconds)."""
    for kind in (["train"] if train else []) + ["predict"]:
        start = time.perf_counter()
        getattr(model, "_make_%s_function" % kind)()
        compile_seconds["%s.%s" % (model.name, kind)] = round(time.perf_counter() - start, 3)


def _generator(batches):
    """Keras 2's fit and predict take a generator (not any iterable)."""
    for batch in batches:
        yield batch


def train_epoch(model, batches):
    """One epoch of model.fit over the shared batch order (workers=0: the generator runs on
    this thread, no prefetching queue); Keras' mean loss of the epoch (the runtime's steps of
    `verify`; a run trains through train)."""
    history = model.fit(
        _generator(batches),
        epochs=1,
        steps_per_epoch=len(batches),
        verbose=0,
        shuffle=False,
        workers=0,
    )
    return history.history["loss"][-1]


def train(model, epochs):
    """Every epoch in one model.fit, Keras' own idiom (the 2018 scripts ran one fit): fit reads
    the epochs' batches one after another in the shared order on this thread, and a callback
    brackets each epoch for the runtime, which times, records and evaluates it (EpochClock,
    bench_shared.worker.Epochs). The first epoch's window opens before fit, as one fit per
    epoch would open it."""
    given = []
    epochs.begin(0)
    model.fit(
        _every_epoch(epochs, given),
        epochs=len(epochs),
        steps_per_epoch=len(epochs.batches_of(0)),
        verbose=0,
        shuffle=False,
        workers=0,
        callbacks=[EpochClock(epochs, given)],
    )


class EpochClock(keras.callbacks.Callback):
    """One fit's epochs bracketed for the runtime: begin(k) as Keras starts epoch k (the first
    is begun before fit), end(k, the epoch's mean loss) when its last step is done, and fit
    stopped where end() says so (the quality target). Each epoch must have run all its steps
    on all its batches, read once: otherwise the epochs would be shifted against the shared
    order, and the run fails."""

    def __init__(self, epochs, given):
        super(EpochClock, self).__init__()
        self.epochs, self.given, self.ran = epochs, given, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.ran = 0
        if epoch > 0:
            self.epochs.begin(epoch)

    def on_train_batch_begin(self, batch, logs=None):
        self.ran += 1

    def on_epoch_end(self, epoch, logs=None):
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


def predict(model, batches):
    batches = list(batches)
    return model.predict(_generator(batches), steps=len(batches), verbose=0, workers=0).astype(
        "float32"
    )
