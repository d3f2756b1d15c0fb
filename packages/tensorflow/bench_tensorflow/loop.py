"""The TensorFlow 2 custom training loop every task module shares: a Keras model trained by a
tf.function step with GradientTape and an explicit optimizer step (XLA as a switch), each
replica's step run by the tf.distribute strategy (bench_tensorflow.distribute; one device: the
default strategy, which just calls it)."""

import tensorflow as tf
from keras import losses

from bench_keras_layers import native_layout  # noqa: F401  NCHW -> NHWC once, as Keras' layers

from . import device, options, pipeline, strategy


class Model(object):
    """net and optimizer: made in strategy().scope() (mirrored variables when data-parallel)."""

    def __init__(self, run, net, input_shape, input_dtype="float32", optimizer=None, loss_fn=None):
        self.net = net
        self.strategy = strategy()
        with self.strategy.scope(), tf.device(device()):
            net(tf.zeros((1,) + tuple(input_shape), input_dtype))  # create the variables
            if optimizer is not None:
                optimizer.build(net.trainable_variables)  # its slots too, in the scope
        self.optimizer = optimizer
        # softmax fused into the loss, mean over the batch (over the global batch, under a
        # strategy: Keras' losses divide by the replica count), integer labels
        self.loss_fn = loss_fn or losses.SparseCategoricalCrossentropy(from_logits=True)
        xla = bool(options()["xla"])
        self.train_step = tf.function(
            self._distributed_step, jit_compile=xla, reduce_retracing=True
        )
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
        # under a strategy, apply_gradients all-reduces (sums) the replicas' gradients first
        self.optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))
        return loss

    def _distributed_step(self, x, y):
        """This process's replica steps on its batch; the global batch's loss (a sum of the
        replicas' shares, each already divided by the replica count)."""
        per_replica = self.strategy.run(self._train_step, args=(x, y))
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    def _infer(self, x):
        return tf.cast(self.net(x, training=False), tf.float32)


def _pipeline(batches):
    """tf.data around the shared batch order, prefetched on a background thread and stamped as
    the loop asks for each batch (bench_tensorflow.pipeline: without autotuning, whose teardown
    would stall each epoch): the batches gathered inside tf.data from the training set held as
    tensors; through a Python generator where densenet's transform makes each batch."""
    if getattr(batches, "transform", None) is None:
        rows = tf.data.Dataset.from_tensor_slices(batches.index_matrix())
        return pipeline.clocked(pipeline.gathered(batches.x, batches.y, rows), batches)
    x_spec = tf.TensorSpec(None, tf.float32)  # densenet's images: float32 input
    signature = (x_spec, tf.TensorSpec((None,) + batches.y.shape[1:], tf.as_dtype(batches.y.dtype)))
    return pipeline.from_generator(lambda: iter(batches), signature)


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
