"""The three layers Lasagne 0.1 lacks or has in another form, written as Lasagne layers.

- Conv2DLayer: Lasagne 0.1 predates Theano's padded convolutions (its pad='same' computes a
  full convolution and crops it; an integer pad copies the input into a padded tensor first).
  Theano >= 0.9's conv2d pads itself (border_mode=(p, p)): the layer of Lasagne's later
  releases, as a subclass. filter_flip=False: the kernel is a cross-correlation kernel, as in
  PyTorch and the neutral weights (Theano's default flips it: a true convolution).
- BatchNormLayer: Lasagne 0.1 has none (0.2 added it). Inference with the running statistics,
  what ResNet-50 (the only task with batch norm here) needs; mean and var are not trainable.
- GRULayer: SPEC's cuDNN-form GRU (reset applied after the recurrent matmul, an input and a
  recurrent bias per gate: 3,818,302 parameters for the task). Lasagne 0.1's GRULayer applies
  the reset gate after the matmul too but has no recurrent bias (3,818,002) and keeps one
  matrix per gate. Its weights are the neutral layout's (gates r, z, n side by side), the
  input projection of every step is one matmul before the loop (as cuDNN does), the
  recurrence is theano.scan.
"""

import numpy as np
import theano
import theano.tensor as T
from lasagne import init, layers, nonlinearities


class Conv2DLayer(layers.Conv2DLayer):
    """lasagne.layers.Conv2DLayer with an integer pad done by Theano's conv2d itself."""

    def __init__(self, incoming, num_filters, filter_size, stride=1, pad=0, **kwargs):
        super(Conv2DLayer, self).__init__(
            incoming, num_filters, filter_size, stride=stride, pad=pad, **kwargs
        )

    def get_output_for(self, input, **kwargs):
        conved = T.nnet.conv2d(
            input,
            self.W,
            input_shape=self.input_shape,
            filter_shape=self.get_W_shape(),
            border_mode=tuple(self.pad),
            subsample=self.stride,
            filter_flip=False,
        )
        if self.b is not None:
            conved = conved + self.b.dimshuffle("x", 0, "x", "x")
        return self.nonlinearity(conved)


class BatchNormLayer(layers.Layer):
    """Batch normalisation over the channels of NCHW input, with the running statistics
    (inference: deterministic=True; training with batch statistics is not implemented)."""

    def __init__(self, incoming, epsilon, **kwargs):
        super(BatchNormLayer, self).__init__(incoming, **kwargs)
        self.epsilon = epsilon
        channels = (self.input_shape[1],)
        self.gamma = self.add_param(init.Constant(1.0), channels, "gamma")
        self.beta = self.add_param(init.Constant(0.0), channels, "beta")
        self.mean = self.add_param(
            init.Constant(0.0), channels, "mean", trainable=False, regularizable=False
        )
        self.var = self.add_param(
            init.Constant(1.0), channels, "var", trainable=False, regularizable=False
        )

    def get_output_for(self, input, deterministic=False, **kwargs):
        if not deterministic:
            raise NotImplementedError(
                "bench_lasagne's BatchNormLayer normalises with the running statistics only "
                "(inference, deterministic=True): no task here trains through batch norm"
            )
        scale = self.gamma * T.inv(T.sqrt(self.var + self.epsilon))  # per channel, folded
        shift = self.beta - self.mean * scale
        return input * scale.dimshuffle("x", 0, "x", "x") + shift.dimshuffle("x", 0, "x", "x")


def per_gate(initializer, rows, units):
    """A (rows, 3 * units) matrix drawn gate by gate (r, z, n), as SPEC's initialisers are."""
    return lambda shape: np.concatenate(
        [initializer.sample((rows, units)) for _ in range(3)], axis=1
    )


class GRULayer(layers.Layer):
    """(batch, time, features) -> the last time step's state (batch, num_units), from a zero
    state: h' = (1 - z) * n + z * h with n = tanh(x W_n + b_in_n + r * (h U_n + b_hn))."""

    def __init__(self, incoming, num_units, **kwargs):
        super(GRULayer, self).__init__(incoming, **kwargs)
        self.num_units = num_units
        inputs = self.input_shape[2]
        self.input_weight = self.add_param(
            per_gate(init.GlorotUniform(), inputs, num_units),
            (inputs, 3 * num_units),
            "input_weight",
        )
        self.recurrent_weight = self.add_param(
            per_gate(init.Orthogonal(), num_units, num_units),
            (num_units, 3 * num_units),
            "recurrent_weight",
        )
        self.input_bias = self.add_param(
            init.Constant(0.0), (3 * num_units,), "input_bias", regularizable=False
        )
        self.recurrent_bias = self.add_param(
            init.Constant(0.0), (3 * num_units,), "recurrent_bias", regularizable=False
        )

    def get_output_shape_for(self, input_shape):
        return input_shape[0], self.num_units

    def get_output_for(self, input, **kwargs):
        units = self.num_units
        # every step's input projection at once, time-major for scan
        x_proj = (T.dot(input, self.input_weight) + self.input_bias).dimshuffle(1, 0, 2)

        def step(x_t, h, recurrent_weight, recurrent_bias):
            h_proj = T.dot(h, recurrent_weight) + recurrent_bias
            r = T.nnet.sigmoid(x_t[:, :units] + h_proj[:, :units])
            z = T.nnet.sigmoid(x_t[:, units : 2 * units] + h_proj[:, units : 2 * units])
            n = T.tanh(x_t[:, 2 * units :] + r * h_proj[:, 2 * units :])  # reset after the matmul
            return (1.0 - z) * n + z * h

        h0 = T.zeros((input.shape[0], units), dtype=theano.config.floatX)
        states, _ = theano.scan(
            step,
            sequences=x_proj,
            outputs_info=h0,
            non_sequences=[self.recurrent_weight, self.recurrent_bias],
            strict=True,
        )
        return states[-1]


def relu(incoming, name=None):
    return layers.NonlinearityLayer(incoming, nonlinearities.rectify, name=name)
