"""The JAX training step and inference loop every task module shares, the way Flax's
performance guide writes it: the modules split once into a static graph definition and a
state pytree (nnx.split), a pure step function over that state compiled by jax.jit with the
state's buffers donated (updated in place, not copied), nnx.update at the end of the epoch."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from . import compute_dtype, dispatched, options, seed


def rngs():
    """One seeded stream for parameter draws and dropout masks: the run's seed."""
    return nnx.Rngs(seed())


def layer_options():
    """Flax's mixed precision: compute in `dtype`, keep float32 parameters (param_dtype)."""
    return {"dtype": compute_dtype(), "param_dtype": jnp.float32}


class Model(object):
    """A network with its optax optimiser (nnx.Optimizer) and the epoch mode."""

    def __init__(self, net, tx=None):
        self.net = net
        self.optimizer = nnx.Optimizer(net, tx, wrt=nnx.Param) if tx is not None else None
        self.whole_epoch = bool(options()["whole_epoch"])


def loss_fn(net, x, y):
    logits = net(x).astype(jnp.float32)  # softmax fused into the loss, mean over the batch
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def train_step(graphdef, state, x, y):
    net, optimizer = nnx.merge(graphdef, state)
    loss, grads = nnx.value_and_grad(loss_fn)(net, x, y)  # gradients of the nnx.Params
    optimizer.update(net, grads)
    return nnx.state((net, optimizer)), loss  # parameters, optimiser and dropout-RNG state


def train_scan(graphdef, state, xs, ys):
    """A whole epoch as one XLA program: jax.lax.scan of the step over the stacked batches."""
    def body(state, batch):
        return train_step(graphdef, state, *batch)
    state, losses = jax.lax.scan(body, state, (xs, ys))
    return state, losses.sum()


# graphdef is static (hashable: one compilation per model structure and mode); the state's
# buffers are donated to the step, whose outputs reuse them
jit_step = jax.jit(train_step, static_argnums=0, donate_argnums=1)
jit_epoch = jax.jit(train_scan, static_argnums=0, donate_argnums=1)


def native_layout(x):
    """NCHW -> NHWC, once, at load time: JAX's convolutions are NHWC (lax.conv's default in
    Flax), and XLA's CPU kernels want channels last."""
    return np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1)))


def _labels(y):
    return np.asarray(y, np.int32)  # JAX's default integers are 32-bit


def train_epoch(model, batches):
    """One epoch; returns the mean loss. Per step (default): one jitted step per batch, the
    loss summed on the device and read once at the end. whole_epoch: the epoch's batches
    stacked on the host and run as one jax.lax.scan program (batching and the host-to-device
    copy then precede the steps instead of interleaving with them)."""
    model.net.train()  # dropout on
    graphdef, state = nnx.split((model.net, model.optimizer))
    if model.whole_epoch:
        pairs = list(batches)
        xs = np.stack([x for x, _ in pairs])
        ys = np.stack([_labels(y) for _, y in pairs])
        state, total = jit_epoch(graphdef, state, xs, ys)
        steps = len(pairs)
    else:
        total, steps = jnp.zeros(()), 0
        for x, y in batches:
            state, loss = jit_step(graphdef, state, x, _labels(y))
            total = dispatched(total + loss)
            steps += 1
    nnx.update((model.net, model.optimizer), state)
    return float(total) / steps


def _forward(graphdef, state, x):
    return nnx.merge(graphdef, state)(x).astype(jnp.float32)


jit_forward = jax.jit(_forward, static_argnums=0)


def predict(model, batches):
    """Outputs for every batch in eval mode (dropout off, batch norm on its running
    statistics), copied to host memory as float32."""
    model.net.eval()
    graphdef, state = nnx.split(model.net)
    outputs = [dispatched(jit_forward(graphdef, state, x)) for x in batches]
    return np.concatenate([np.asarray(o) for o in outputs])
