"""The JAX training step and inference loop every task module shares, the way Flax's
performance guide writes it: the modules split once into a static graph definition and a
state pytree (nnx.split), a pure step function over that state compiled by jax.jit with the
state's buffers donated (updated in place, not copied), nnx.update at the end of the epoch.

Data parallelism the JAX way (a Model with a `mesh`, task densenet at devices=N): no wrapper
and no hand-written all-reduce. The state is replicated over a jax.sharding.Mesh of the N
devices and every batch is sharded along its batch axis (NamedSharding); jax.jit compiles the
same step for those shardings (GSPMD): each device computes its slice of the batch, and XLA
inserts the all-reduces the mean loss needs, batch norm's batch statistics included."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from . import compute_dtype, dispatched, options, seed


def rngs():
    """One seeded stream for parameter draws and dropout masks: the run's seed."""
    return nnx.Rngs(seed())


def layer_options():
    """Flax's mixed precision: compute in `dtype`, keep float32 parameters (param_dtype)."""
    return {"dtype": compute_dtype(), "param_dtype": jnp.float32}


def cross_entropy(logits, y):
    """Softmax fused into the loss, mean over the batch (integer class labels)."""
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


class Model(object):
    """A network with its optax optimiser (nnx.Optimizer), loss, label type and epoch mode;
    mesh: a jax.sharding.Mesh with a "batch" axis over the run's devices (data-parallel)."""

    def __init__(self, net, tx=None, loss=cross_entropy, label_dtype=np.int32, mesh=None):
        self.net = net
        self.optimizer = nnx.Optimizer(net, tx, wrt=nnx.Param) if tx is not None else None
        self.whole_epoch = bool(options()["whole_epoch"])
        self.loss, self.label_dtype, self.mesh = loss, label_dtype, mesh


def train_step(graphdef, loss, state, x, y):
    net, optimizer = nnx.merge(graphdef, state)

    def objective(net):
        return loss(net(x).astype(jnp.float32), y)

    value, grads = nnx.value_and_grad(objective)(net)  # gradients of the nnx.Params
    optimizer.update(net, grads)
    return nnx.state((net, optimizer)), value  # parameters, optimiser and dropout-RNG state


def train_scan(graphdef, loss, state, xs, ys):
    """A whole epoch as one XLA program: jax.lax.scan of the step over the stacked batches."""

    def body(state, batch):
        return train_step(graphdef, loss, state, *batch)

    state, losses = jax.lax.scan(body, state, (xs, ys))
    return state, losses.sum()


# graphdef and the loss function are static (hashable: one compilation per model structure,
# loss and mode); the state's buffers are donated to the step, whose outputs reuse them
jit_step = jax.jit(train_step, static_argnums=(0, 1), donate_argnums=2)
jit_epoch = jax.jit(train_scan, static_argnums=(0, 1), donate_argnums=2)


def _on_mesh(model, state, stacked=False):
    """(state, where batches go): data-parallel, the state replicated on every device (a
    no-op once it is) and batches split along their batch axis (axis 1 of stacked epochs);
    else unchanged, and batches left to jit (the default device)."""
    if model.mesh is None:
        return state, None
    state = jax.device_put(state, NamedSharding(model.mesh, P()))
    return state, NamedSharding(model.mesh, P(None, "batch") if stacked else P("batch"))


def _placed(pair, sharding):
    return pair if sharding is None else jax.device_put(pair, sharding)


def native_layout(x):
    """NCHW -> NHWC, once, at load time: JAX's convolutions are NHWC (lax.conv's default in
    Flax), and XLA's CPU kernels want channels last."""
    return np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1)))


def train_epoch(model, batches):
    """One epoch; returns the mean loss. Per step (default): one jitted step per batch, the
    loss summed on the device and read once at the end. whole_epoch: the epoch's batches
    stacked on the host and run as one jax.lax.scan program (batching and the host-to-device
    copy then precede the steps instead of interleaving with them)."""
    model.net.train()  # dropout on
    graphdef, state = nnx.split((model.net, model.optimizer))
    # labels: int32 classes (JAX's default integers are 32-bit) or float32 multi-label targets
    labels = model.label_dtype
    if model.whole_epoch:
        state, sharding = _on_mesh(model, state, stacked=True)
        pairs = list(batches)
        xs = np.stack([x for x, _ in pairs])
        ys = np.stack([np.asarray(y, labels) for _, y in pairs])
        state, total = jit_epoch(graphdef, model.loss, state, *_placed((xs, ys), sharding))
        steps = len(pairs)
    else:
        state, sharding = _on_mesh(model, state)
        total, steps = jnp.zeros(()), 0
        for x, y in batches:
            x, y = _placed((x, np.asarray(y, labels)), sharding)
            state, loss = jit_step(graphdef, model.loss, state, x, y)
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
    if model.mesh is not None:  # rank 0 alone evaluates (the contract): on the first device
        state = jax.device_put(state, model.mesh.devices.flat[0])
    outputs = [dispatched(jit_forward(graphdef, state, x)) for x in batches]
    return np.concatenate([np.asarray(o) for o in outputs])
