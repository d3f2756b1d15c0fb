"""GRU sentiment classifier the Flax NNX way: nnx.Embed + a cuDNN-form nnx.GRUCell scanned with
jax.lax.scan + nnx.Linear, trained by a jax.jit step with donated buffers and optax.adam."""

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from bench_shared.spec import RNN

from . import loop, weights


def per_gate(init, gates=3):
    """SPEC's GRU initialisers gate by gate: `init` on each (rows, units) block of columns."""

    def draw(key, shape, dtype=jnp.float32):
        rows, columns = shape
        return jnp.concatenate(
            [init(k, (rows, columns // gates), dtype) for k in jax.random.split(key, gates)], axis=1
        )

    return draw


def symmetric_uniform(limit):
    def draw(key, shape, dtype=jnp.float32):
        return jax.random.uniform(key, shape, dtype, -limit, limit)

    return draw


class CuDNNGRUCell(nnx.GRUCell):
    """nnx.GRUCell in SPEC's cuDNN form. Flax's recurrent projection `dense_h` has no bias (3
    bias vectors, 3,818,002 parameters); here it has one (b_hr, b_hz, b_hn: 3,818,302), and the
    reset gate applies after the recurrent matmul: n = tanh(W_in x + b_in + r * (W_hn h + b_hn))."""

    def __init__(self, in_features, hidden_features, *, rngs, **options):
        super().__init__(in_features, hidden_features, rngs=rngs, **options)
        self.dense_h = nnx.Linear(
            hidden_features,
            3 * hidden_features,
            use_bias=True,
            kernel_init=options.get("recurrent_kernel_init", nnx.initializers.orthogonal()),
            bias_init=options.get("bias_init", nnx.initializers.zeros_init()),
            dtype=self.dtype,
            param_dtype=self.param_dtype,
            rngs=rngs,
        )

    def __call__(self, carry, inputs):
        h = self.recurrent(carry, self.dense_i(inputs))
        return h, h

    def recurrent(self, h, projected):
        """One step from the input projection W_i x + b_i (gates r, z, n)."""
        xr, xz, xn = jnp.split(projected, 3, axis=-1)
        hr, hz, hn = jnp.split(self.dense_h(h), 3, axis=-1)
        r, z = self.gate_fn(xr + hr), self.gate_fn(xz + hz)
        n = self.activation_fn(xn + r * hn)
        return (1.0 - z) * n + z * h


class GRUClassifier(nnx.Module):
    def __init__(self, rngs):
        layer = dict(loop.layer_options(), rngs=rngs)
        self.embedding = nnx.Embed(
            RNN.vocab_size,
            RNN.embedding_dim,
            **layer,
            embedding_init=symmetric_uniform(RNN.embedding_init_range),
        )
        self.gru = CuDNNGRUCell(
            RNN.embedding_dim,
            RNN.hidden_units,
            **layer,
            kernel_init=per_gate(nnx.initializers.glorot_uniform()),
            recurrent_kernel_init=per_gate(nnx.initializers.orthogonal()),
        )
        self.dense = nnx.Linear(
            RNN.hidden_units,
            RNN.num_classes,
            **layer,
            kernel_init=nnx.initializers.glorot_uniform(),
        )

    def __call__(self, tokens):
        # the cuDNN schedule: every step's input projection in one matmul, then a scan over
        # time of the recurrent half; zero initial state, batch-first in, time-major scanned
        projected = jnp.swapaxes(self.gru.dense_i(self.embedding(tokens)), 0, 1)
        h0 = jnp.zeros((tokens.shape[0], RNN.hidden_units), projected.dtype)
        last, _ = jax.lax.scan(lambda h, x: (self.gru.recurrent(h, x), None), h0, projected)
        return self.dense(last)  # the output at t = 150


def build_model(run):
    adam = run["task"]["optimizer"]
    # eps outside the square root, bias-corrected: SPEC's (and PyTorch's, Keras') Adam
    tx = optax.adam(adam["lr"], b1=adam["beta1"], b2=adam["beta2"], eps=adam["eps"])
    return loop.Model(GRUClassifier(loop.rngs()), tx)


def slots(model):
    return weights.slots("rnn")


train_epoch = loop.train_epoch
predict = loop.predict
