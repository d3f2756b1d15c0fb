"""The TensorFlow 2 custom training loop every task module shares: a Keras model trained by a
tf.function step with GradientTape and an explicit optimizer step (XLA as a switch)."""
import tensorflow as tf
from keras import losses

from bench_keras.common import native_layout  # noqa: F401  NCHW -> NHWC once, as Keras' layers

from . import device, options


class Model(object):
    def __init__(self, run, net, input_shape, input_dtype="float32", optimizer=None):
        self.net = net
        with tf.device(device()):
            net(tf.zeros((1,) + tuple(input_shape), input_dtype))  # create the variables
        self.optimizer = optimizer
        # softmax fused into the loss, mean over the batch, integer labels
        self.loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)
        xla = bool(options()["xla"])
        self.train_step = tf.function(self._train_step, jit_compile=xla, reduce_retracing=True)
        self.infer = tf.function(self._infer, jit_compile=xla, reduce_retracing=True)

    @property
    def trainable_variables(self):
        return self.net.trainable_variables

    def _train_step(self, x, y):
        with tf.GradientTape() as tape:
            logits = tf.cast(self.net(x, training=True), tf.float32)
            loss = self.loss_fn(y, logits)
            scaled = self.optimizer.scale_loss(loss)  # loss scaling under mixed_float16
        variables = self.net.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        return loss

    def _infer(self, x):
        return tf.cast(self.net(x, training=False), tf.float32)


def _pipeline(batches):
    """tf.data around the shared batch order: batching on a background thread, prefetched."""
    x0 = batches.x[:1]
    signature = (tf.TensorSpec((None,) + x0.shape[1:], tf.as_dtype(x0.dtype)),
                 tf.TensorSpec((None,), tf.as_dtype(batches.y.dtype)))
    return tf.data.Dataset.from_generator(lambda: iter(batches), output_signature=signature) \
        .prefetch(tf.data.AUTOTUNE)


def train_epoch(model, batches):
    native = options()["native_pipeline"] and hasattr(batches, "x")  # not for a plain list
    source = _pipeline(batches) if native else batches
    total, steps = tf.zeros(()), 0
    with tf.device(device()):
        for x, y in source:
            total += model.train_step(x, y)  # summed on the device, read once below
            steps += 1
    return float(total.numpy()) / steps


def predict(model, batches):
    with tf.device(device()):
        outputs = [model.infer(x) for x in batches]
        return tf.concat(outputs, axis=0).numpy()
