"""NumPy reference training steps (dropout off), for the training-equivalence check.

Hand-written backward passes in float64 for the CNN (SGD with heavy-ball momentum), the GRU
classifier and DenseNet-121 (both Adam; DenseNet's batch norm in training mode, with the
batch's statistics), starting from neutral weights. A framework that differs in momentum
convention, loss reduction, bias handling, gate order or label format drifts away from these
loss trajectories within a few steps.
"""

import numpy as np

from . import reference as ref
from . import spec


def softmax_cross_entropy(logits, labels):
    """Mean loss over the batch and its gradient with respect to the logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    n = len(labels)
    loss = -np.log(p[np.arange(n), labels]).mean()
    p[np.arange(n), labels] -= 1.0
    return loss, p / n


# --- CNN ---------------------------------------------------------------------------------


def conv2d_backward(x, w, dout, pad, stride=1):
    """Gradients of a convolution: one shifted (strided) slice per kernel tap."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    _, _, kh, kw = w.shape
    oh, ow = dout.shape[2], dout.shape[3]
    for i in range(kh):
        for j in range(kw):
            rows = slice(i, i + stride * (oh - 1) + 1, stride)
            cols = slice(j, j + stride * (ow - 1) + 1, stride)
            dw[:, :, i, j] = np.tensordot(dout, xp[:, :, rows, cols], axes=([0, 2, 3], [0, 2, 3]))
            dxp[:, :, rows, cols] += np.tensordot(dout, w[:, :, i, j], axes=([1], [0])).transpose(
                0, 3, 1, 2
            )
    return dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]], dw, dout.sum(axis=(0, 2, 3))


def max_pool2_backward(x, out, dout):
    """2x2/2 max-pool: the gradient goes to the (first) maximum of each window."""
    n, c, h, w = x.shape
    windows = x.reshape(n, c, h // 2, 2, w // 2, 2)
    mask = windows == out[:, :, :, None, :, None]
    first = mask & (np.cumsum(np.cumsum(mask, axis=3), axis=5) == 1)  # break exact ties
    return (first * dout[:, :, :, None, :, None]).reshape(x.shape)


def cnn_loss_and_grads(p, x, y):
    pad = spec.CNN.padding
    a1 = ref.conv2d(x, p["conv1.weight"], p["conv1.bias"], pad=pad)
    h1 = ref.relu(a1)
    a2 = ref.conv2d(h1, p["conv2.weight"], p["conv2.bias"], pad=pad)
    m2 = ref.max_pool(a2, 2, 2)
    h2 = ref.relu(m2)
    a3 = ref.conv2d(h2, p["conv3.weight"], p["conv3.bias"], pad=pad)
    h3 = ref.relu(a3)
    a4 = ref.conv2d(h3, p["conv4.weight"], p["conv4.bias"], pad=pad)
    m4 = ref.max_pool(a4, 2, 2)
    h4 = ref.relu(m4)
    f = h4.reshape(len(x), -1)
    a5 = f @ p["dense1.weight"] + p["dense1.bias"]
    h5 = ref.relu(a5)
    logits = h5 @ p["dense2.weight"] + p["dense2.bias"]
    loss, d = softmax_cross_entropy(logits, y)
    g = {"dense2.weight": h5.T @ d, "dense2.bias": d.sum(0)}
    d = (d @ p["dense2.weight"].T) * (a5 > 0)
    g["dense1.weight"], g["dense1.bias"] = f.T @ d, d.sum(0)
    d = (d @ p["dense1.weight"].T).reshape(h4.shape) * (m4 > 0)
    d = max_pool2_backward(a4, m4, d)
    d, g["conv4.weight"], g["conv4.bias"] = conv2d_backward(h3, p["conv4.weight"], d, pad)
    d = d * (a3 > 0)
    d, g["conv3.weight"], g["conv3.bias"] = conv2d_backward(h2, p["conv3.weight"], d, pad)
    d = max_pool2_backward(a2, m2, d * (m2 > 0))
    d, g["conv2.weight"], g["conv2.bias"] = conv2d_backward(h1, p["conv2.weight"], d, pad)
    d = d * (a1 > 0)
    _, g["conv1.weight"], g["conv1.bias"] = conv2d_backward(x, p["conv1.weight"], d, pad)
    return loss, g


# --- GRU classifier ------------------------------------------------------------------------


def rnn_loss_and_grads(p, tokens, y):
    units = spec.RNN.hidden_units
    x = p["embedding.weight"][tokens]  # (N, T, E)
    x_proj = x @ p["gru.input_weight"] + p["gru.input_bias"]
    n_ex, steps = tokens.shape
    h = np.zeros((n_ex, units))
    cache = []
    for t in range(steps):
        h_proj = h @ p["gru.recurrent_weight"] + p["gru.recurrent_bias"]
        r = ref.sigmoid(x_proj[:, t, :units] + h_proj[:, :units])
        z = ref.sigmoid(x_proj[:, t, units : 2 * units] + h_proj[:, units : 2 * units])
        n = np.tanh(x_proj[:, t, 2 * units :] + r * h_proj[:, 2 * units :])
        cache.append((h, h_proj, r, z, n))
        h = (1.0 - z) * n + z * h
    logits = h @ p["dense.weight"] + p["dense.bias"]
    loss, d = softmax_cross_entropy(logits, y)
    g = {"dense.weight": h.T @ d, "dense.bias": d.sum(0)}
    dh = d @ p["dense.weight"].T
    dx_proj = np.zeros_like(x_proj)
    g["gru.recurrent_weight"] = np.zeros_like(p["gru.recurrent_weight"])
    g["gru.recurrent_bias"] = np.zeros_like(p["gru.recurrent_bias"])
    for t in reversed(range(steps)):
        h_prev, h_proj, r, z, n = cache[t]
        da_n = dh * (1.0 - z) * (1.0 - n * n)
        da_z = dh * (h_prev - n) * z * (1.0 - z)
        da_r = da_n * h_proj[:, 2 * units :] * r * (1.0 - r)
        dh_proj = np.concatenate([da_r, da_z, da_n * r], axis=1)
        dx_proj[:, t] = np.concatenate([da_r, da_z, da_n], axis=1)
        g["gru.recurrent_weight"] += h_prev.T @ dh_proj
        g["gru.recurrent_bias"] += dh_proj.sum(0)
        dh = dh * z + dh_proj @ p["gru.recurrent_weight"].T
    g["gru.input_weight"] = np.einsum("nte,ntg->eg", x, dx_proj)
    g["gru.input_bias"] = dx_proj.sum(axis=(0, 1))
    g["embedding.weight"] = np.zeros_like(p["embedding.weight"])
    np.add.at(
        g["embedding.weight"],
        tokens.ravel(),
        (dx_proj @ p["gru.input_weight"].T).reshape(-1, x.shape[2]),
    )
    return loss, g


# --- DenseNet-121 (batch norm in training mode) ----------------------------------------------


def batch_norm_train(x, gamma, beta, eps=spec.DenseNet121.batch_norm_eps):
    """Batch norm with the batch's statistics (biased variance): output and backward cache."""
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    inv_std = 1.0 / np.sqrt(x.var(axis=(0, 2, 3), keepdims=True) + eps)
    x_hat = (x - mean) * inv_std
    return x_hat * gamma[:, None, None] + beta[:, None, None], (x_hat, inv_std, gamma)


def batch_norm_train_backward(dy, cache):
    x_hat, inv_std, gamma = cache
    count = dy.shape[0] * dy.shape[2] * dy.shape[3]
    dx_hat = dy * gamma[:, None, None]
    dx = (
        inv_std
        / count
        * (
            count * dx_hat
            - dx_hat.sum(axis=(0, 2, 3), keepdims=True)
            - x_hat * (dx_hat * x_hat).sum(axis=(0, 2, 3), keepdims=True)
        )
    )
    return dx, (dy * x_hat).sum(axis=(0, 2, 3)), dy.sum(axis=(0, 2, 3))


def max_pool_backward(x, out, dout, size, stride, pad):
    """The gradient of each window goes to its first maximum (row-major), as in PyTorch."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    dxp = np.zeros_like(xp)
    taken = np.zeros(out.shape, bool)
    oh, ow = out.shape[2], out.shape[3]
    for i in range(size):
        for j in range(size):
            rows = slice(i, i + stride * (oh - 1) + 1, stride)
            cols = slice(j, j + stride * (ow - 1) + 1, stride)
            first = (xp[:, :, rows, cols] == out) & ~taken
            dxp[:, :, rows, cols] += first * dout
            taken |= first
    return dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]


def avg_pool2_backward(x_shape, dout):
    dx = np.zeros(x_shape)
    oh, ow = dout.shape[2], dout.shape[3]
    dx[:, :, : 2 * oh, : 2 * ow] = np.repeat(np.repeat(dout, 2, axis=2), 2, axis=3) / 4.0
    return dx


def densenet_loss_and_grads(p, x, y):
    """Mean binary cross-entropy over the batch and the 14 labels, and its gradients."""
    d = spec.DenseNet121
    g = {}

    def bn_relu(h, prefix):
        out, cache = batch_norm_train(h, p[prefix + ".gamma"], p[prefix + ".beta"])
        return ref.relu(out), (prefix, cache, out > 0)

    def bn_relu_backward(dout, saved):
        prefix, cache, positive = saved
        dx, g[prefix + ".gamma"], g[prefix + ".beta"] = batch_norm_train_backward(
            dout * positive, cache
        )
        return dx

    def conv_backward(inputs, name, dout, stride=1, pad=0):
        dx, g[name], _ = conv2d_backward(inputs, p[name], dout, pad, stride)
        return dx

    # forward, keeping what the backward needs
    stem = ref.conv2d(x, p["stem.conv.weight"], stride=d.stem_stride, pad=d.stem_padding)
    stem_act, stem_bn = bn_relu(stem, "stem.bn")
    h = ref.max_pool(stem_act, d.pool_kernel, d.pool_stride, pad=d.pool_padding)
    pooled = h
    stages = []  # per block: its layers' records, then its transition's (or None)
    for b, layers in enumerate(d.block_layers, 1):
        records = []
        for layer in range(layers):
            q = "block%d.layer%d." % (b, layer)
            a1, bn1 = bn_relu(h, q + "bn1")
            c1 = ref.conv2d(a1, p[q + "conv1.weight"])
            a2, bn2 = bn_relu(c1, q + "bn2")
            new = ref.conv2d(a2, p[q + "conv2.weight"], pad=1)
            records.append((q, h.shape[1], a1, bn1, a2, bn2))
            h = np.concatenate([h, new], axis=1)  # the block's input first, then each layer's
        transition = None
        if b < len(d.block_layers):
            t = "transition%d." % b
            a, bn = bn_relu(h, t + "bn")
            conv_out = ref.conv2d(a, p[t + "conv.weight"])
            transition = (t, a, bn, conv_out.shape)
            h = ref.avg_pool(conv_out, 2, 2)
        stages.append((records, transition))
    final, final_bn = bn_relu(h, "final.bn")
    features = final.mean(axis=(2, 3))
    logits = features @ p["classifier.weight"] + p["classifier.bias"]
    loss = np.mean(np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits))))
    # backward
    dz = (ref.sigmoid(logits) - y) / logits.size
    g["classifier.weight"], g["classifier.bias"] = features.T @ dz, dz.sum(0)
    area = final.shape[2] * final.shape[3]
    dh = np.broadcast_to((dz @ p["classifier.weight"].T)[:, :, None, None] / area, final.shape)
    dh = bn_relu_backward(dh, final_bn)
    for records, transition in reversed(stages):
        if transition is not None:
            t, a, bn, conv_shape = transition
            dh = avg_pool2_backward(conv_shape, dh)
            dh = bn_relu_backward(conv_backward(a, t + "conv.weight", dh), bn)
        for q, channels, a1, bn1, a2, bn2 in reversed(records):
            dnew, dh = dh[:, channels:], np.array(dh[:, :channels])
            dc1 = bn_relu_backward(conv_backward(a2, q + "conv2.weight", dnew, pad=1), bn2)
            dh += bn_relu_backward(conv_backward(a1, q + "conv1.weight", dc1), bn1)
    dh = max_pool_backward(stem_act, pooled, dh, d.pool_kernel, d.pool_stride, d.pool_padding)
    dh = bn_relu_backward(dh, stem_bn)
    conv_backward(x, "stem.conv.weight", dh, d.stem_stride, d.stem_padding)
    return loss, g


# --- optimisers and the loop ------------------------------------------------------------------

ADAM_FORMS = ("corrected", "folded")


def adam_step(optimizer, m, v, step):
    """Adam's update from its moments, in one of its two published forms (optimizer's
    "epsilon_form", default "corrected"): eps outside the bias-corrected sqrt(v) (PyTorch,
    optax, Paddle; the paper's algorithm 1), or the corrections folded into the step size with
    eps outside the uncorrected sqrt(v) (the paper's section 2 remark: Keras, TensorFlow,
    Chainer, MXNet, Lasagne). They differ where sqrt(v) is near eps: an embedding's rare
    words, whose steps the folded form makes several times smaller in the first steps."""
    b1, b2, lr, eps = optimizer["beta1"], optimizer["beta2"], optimizer["lr"], optimizer["eps"]
    form = optimizer.get("epsilon_form", "corrected")
    if form == "folded":
        return lr * np.sqrt(1 - b2**step) / (1 - b1**step) * m / (np.sqrt(v) + eps)
    if form != "corrected":
        raise ValueError("epsilon_form %r: one of %s" % (form, ", ".join(ADAM_FORMS)))
    return lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + eps)


def train_steps(task, params, batches, optimizer, trained=None):
    """Loss before each step, for every (x, y) batch, starting from neutral `params`; with
    `trained` (a dict), the parameters after the last step go into it (float64, the neutral
    names; batch norm's running statistics are not modelled and left out)."""
    p = {
        name: np.asarray(v, np.float64)
        for name, v in params.items()
        if not name.endswith((".mean", ".var"))
    }
    grads_fn = {
        "cnn": cnn_loss_and_grads,
        "rnn": rnn_loss_and_grads,
        "densenet": densenet_loss_and_grads,
    }[task]
    state = {name: (np.zeros_like(v), np.zeros_like(v)) for name, v in p.items()}
    losses = []
    for step, (x, y) in enumerate(batches, 1):
        loss, g = grads_fn(
            p,
            np.asarray(x) if task == "rnn" else np.asarray(x, np.float64),
            np.asarray(y, np.float64 if task == "densenet" else None),
        )
        losses.append(float(loss))
        for name in p:
            m, v = state[name]
            if optimizer["name"] == "sgd":  # heavy-ball: v = mu v + g; w -= lr v
                m *= optimizer["momentum"]
                m += g[name]
                p[name] -= optimizer["lr"] * m
            else:  # Adam with bias correction, in the framework's form (adam_step)
                b1, b2 = optimizer["beta1"], optimizer["beta2"]
                m *= b1
                m += (1 - b1) * g[name]
                v *= b2
                v += (1 - b2) * g[name] ** 2
                p[name] -= adam_step(optimizer, m, v, step)
    if trained is not None:
        trained.update(p)
    return losses


# the training checks' images: at 64 x 64 the deepest block is 2 x 2, so batch norm averages
# enough values to stay smooth (at 32, 1 x 1 over a small batch, ReLU kinks make it chaotic)
DENSENET_SIDE = 64


def fixed_batches(task, steps, batch_size=16, seed=2):
    """The fixed batch order of the training-equivalence check."""
    rng = np.random.RandomState(seed)
    batches = []
    for _ in range(steps):
        if task == "densenet":  # normalised images at the tests' small side, 14 labels
            side = DENSENET_SIDE
            x = rng.normal(0, 1, (batch_size, 3, side, side)).astype(np.float32)
            batches.append(
                (x, (rng.rand(batch_size, spec.DenseNet121.num_labels) < 0.3).astype(np.float32))
            )
            continue
        if task == "cnn":
            x = rng.uniform(0, 1, (batch_size,) + spec.CNN.input_shape).astype(np.float32)
            y = rng.randint(0, spec.CNN.num_classes, batch_size)
        else:
            x = rng.randint(3, spec.RNN.vocab_size, (batch_size, spec.RNN.seq_len))
            x = x.astype(np.int32)
            y = rng.randint(0, spec.RNN.num_classes, batch_size)
        batches.append((x, y.astype(np.int64)))
    return batches
