"""Keras' own training and inference API, shared by the task modules: compile, fit, predict."""
import keras

from . import options


def compile_model(model, optimizer):
    """Softmax fused into the loss (from_logits), batch mean, integer labels; XLA as a switch.
    Under mixed_float16, compile wraps the optimizer in a LossScaleOptimizer by itself."""
    model.compile(optimizer=optimizer,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
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
    batches = list(batches)
    inputs = ((x,) for x in batches)  # Keras wants (inputs,) tuples from a generator
    return model.predict(inputs, steps=len(batches), verbose=0).astype("float32")
