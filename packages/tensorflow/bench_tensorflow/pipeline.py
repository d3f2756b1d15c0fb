"""tf.data for the shared batch order, with tf.data's autotuning off: batches gathered from the
training set held as tensors (gathered), or read from a Python generator (from_generator).

Every epoch (and every predict) makes a new pipeline. An autotuned one (prefetch(AUTOTUNE), as
Keras' own adapter for a generator builds) runs tf.data's tuning thread, and destroying the
pipeline's iterator waits for that thread's next wake-up: measured with TensorFlow 2.21 on CPU,
every Keras fit of one epoch then ended at 2.57 or 5.13 s after it began, whatever the epoch's
own length (the GRU's 2.6 s of steps took 5.13 s: half the speed). With autotuning off the
pipeline ends with its last batch. One batch prefetched on tf.data's background thread is
all a training loop needs from it.

A generator costs a crossing into Python per batch, on tf.data's thread, against the training
loop's own Python: measured in the 2018 Keras_TF_CNN script on a 2-core AMD EPYC (Zen 3), the
same model fed arrays ran 203-207 examples/s, fed through from_generator 159-160, and fed batches
gathered by index inside tf.data 197-223. So where the batches are plain rows of the training set
they are gathered inside tf.data (the training set then held a second time, as a tensor); a
per-batch transform in NumPy (densenet's crops) still needs the generator.
"""

import numpy as np
import tensorflow as tf

_resident = {}  # (id(array), dtype) -> (array, its tensor): made once per training set


def _no_autotuning():
    options = tf.data.Options()
    options.autotune.enabled = False
    return options


def from_generator(generator, signature, prefetch=1):
    """tf.data.Dataset.from_generator(generator) with `prefetch` batches on a background
    thread and no autotuning."""
    return (
        tf.data.Dataset.from_generator(generator, output_signature=signature)
        .prefetch(prefetch)
        .with_options(_no_autotuning())
    )


def resident(array, dtype=None):
    """`array` (cast to `dtype`) as a tensor in host memory, made once per array."""
    key = (id(array), str(dtype))
    held = _resident.get(key)
    if held is None or held[0] is not array:
        with tf.device("/CPU:0"):
            tensor = tf.constant(np.asarray(array, dtype))
        held = _resident[key] = (array, tensor)
    return held[1]


def gathered(x, y, indices, x_dtype=None, prefetch=1):
    """The batches x[i], y[i] for each row i of example indices that the dataset `indices`
    gives, gathered inside tf.data from x and y held as tensors (resident), `prefetch` ahead."""
    x, y = resident(x, x_dtype), resident(y)
    return (
        indices.map(lambda i: (tf.gather(x, i), tf.gather(y, i)))
        .prefetch(prefetch)
        .with_options(_no_autotuning())
    )


def clocked(dataset, batches):
    """The dataset's batches of one epoch, each stamped on the runtime's clock as the loop asks
    for it (TrainBatches.stamp), the last stamp after the last step (close)."""
    iterator = iter(dataset)
    for i in range(len(batches)):
        batches.stamp(i)
        yield next(iterator)
    batches.close()
