"""tf.data around a Python generator of batches, with tf.data's autotuning off.

Every epoch (and every predict) makes a new pipeline. An autotuned one (prefetch(AUTOTUNE), as
Keras' own adapter for a generator builds) runs tf.data's tuning thread, and destroying the
pipeline's iterator waits for that thread's next wake-up: measured with TensorFlow 2.21 on CPU,
every Keras fit of one epoch then ended at 2.57 or 5.13 s after it began, whatever the epoch's
own length (the GRU's 2.6 s of steps took 5.13 s: half the speed). With autotuning off the
pipeline ends with its last batch. One batch prefetched on tf.data's background thread is
all a training loop needs from it.
"""

import tensorflow as tf


def from_generator(generator, signature, prefetch=1):
    """tf.data.Dataset.from_generator(generator) with `prefetch` batches on a background
    thread and no autotuning."""
    options = tf.data.Options()
    options.autotune.enabled = False
    return (
        tf.data.Dataset.from_generator(generator, output_signature=signature)
        .prefetch(prefetch)
        .with_options(options)
    )
