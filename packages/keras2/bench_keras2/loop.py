"""Keras 2's own training and inference API, shared by the task modules and the same on both
backends: compile, fit, predict, each fed the runtime's batches in its order on this thread."""
import time

import keras

from . import compile_seconds


def compile_model(model, optimizer, loss=None):
    """Softmax fused into the loss (from_logits), batch mean, integer labels (unless `loss`
    says otherwise). Keras 2 builds its training and inference functions on their first use
    (Theano compiles each graph to C then, a minute or more): built here, so that the compile
    is part of the `build` timing and never of the first timed epoch."""
    model.compile(optimizer=optimizer,
                  loss=loss or keras.losses.SparseCategoricalCrossentropy(from_logits=True))
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
    this thread, no prefetching queue); Keras' mean loss of the epoch."""
    history = model.fit(_generator(batches), epochs=1, steps_per_epoch=len(batches), verbose=0,
                        shuffle=False, workers=0)
    return history.history["loss"][-1]


def predict(model, batches):
    batches = list(batches)
    return model.predict(_generator(batches), steps=len(batches), verbose=0,
                         workers=0).astype("float32")
