"""The 2018 benchmark's Tensorflow_CNN loop for SPEC's CNN, in TensorFlow 2's compat.v1 API: a
graph built once from placeholders (tf.layers is gone with Keras 3, so tf.nn ops on
glorot-uniform variables, NHWC: TensorFlow's CPU max-pool has no NCHW kernel), a
MomentumOptimizer's training op, and per shuffled minibatch one Session.run with a feed_dict.
The yardstick framework=tensorflow task=cnn is measured against by benchmarks/own_loops.py.
Prints one JSON line: the seconds of each epoch."""

import time

import numpy as np
import tensorflow as tf
from common import arguments, minibatches, print_result

v1 = tf.compat.v1


def conv(x, filters, name, relu=True):
    w = v1.get_variable(
        name + "_w", (3, 3, int(x.shape[-1]), filters), initializer=v1.glorot_uniform_initializer()
    )
    b = v1.get_variable(name + "_b", (filters,), initializer=v1.zeros_initializer())
    x = tf.nn.bias_add(tf.nn.conv2d(x, w, 1, "SAME"), b)
    return tf.nn.relu(x) if relu else x


def dense(x, units, name):
    w = v1.get_variable(
        name + "_w", (int(x.shape[-1]), units), initializer=v1.glorot_uniform_initializer()
    )
    return tf.matmul(x, w) + v1.get_variable(
        name + "_b", (units,), initializer=v1.zeros_initializer()
    )


def create_symbol(x, training):
    def drop(h, rate):
        return tf.cond(training, lambda: tf.nn.dropout(h, rate=rate), lambda: h)

    h = conv(conv(x, 50, "conv1"), 50, "conv2", relu=False)
    h = drop(tf.nn.relu(tf.nn.max_pool2d(h, 2, 2, "VALID")), 0.25)
    h = conv(conv(h, 100, "conv3"), 100, "conv4", relu=False)
    h = drop(tf.nn.relu(tf.nn.max_pool2d(h, 2, 2, "VALID")), 0.25)
    h = tf.reshape(h, (-1, 8 * 8 * 100))
    h = drop(tf.nn.relu(dense(h, 512, "fc1")), 0.5)
    return dense(h, 10, "output")


def main():
    args = arguments(["cnn"])
    rng = np.random.RandomState(args.seed)
    x_train = rng.uniform(0, 1, (args.examples, 32, 32, 3)).astype(np.float32)
    y_train = rng.randint(0, 10, args.examples).astype(np.int32)
    v1.disable_eager_execution()
    v1.set_random_seed(args.seed)
    x = v1.placeholder(tf.float32, shape=[None, 32, 32, 3])
    y = v1.placeholder(tf.int32, shape=[None])
    training = v1.placeholder(tf.bool)
    sym = create_symbol(x, training)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(logits=sym, labels=y))
    model = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
    sess = v1.Session()
    sess.run(v1.global_variables_initializer())
    seconds = []
    for _ in range(args.epochs):
        start = time.perf_counter()
        for data, label in minibatches(x_train, y_train, args.batch_size, rng):
            sess.run(model, feed_dict={x: data, y: label, training: True})
        seconds.append(time.perf_counter() - start)
    print_result(
        "tensorflow (the 2018 Tensorflow_CNN loop)",
        args.task,
        epoch_seconds=seconds,
        examples_per_epoch=args.examples // args.batch_size * args.batch_size,
    )


if __name__ == "__main__":
    main()
