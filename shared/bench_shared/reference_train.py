"""NumPy reference training steps (dropout off), for the training-equivalence check.

Hand-written backward passes in float64 for the CNN (SGD with heavy-ball momentum) and the
GRU classifier (Adam), starting from neutral weights. A framework that differs in momentum
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

def conv2d_backward(x, w, dout, pad):
    """Gradients of a stride-1 convolution: one shifted slice per kernel tap."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp = np.zeros_like(xp)
    dw = np.zeros_like(w)
    _, _, kh, kw = w.shape
    oh, ow = dout.shape[2], dout.shape[3]
    for i in range(kh):
        for j in range(kw):
            window = xp[:, :, i:i + oh, j:j + ow]
            dw[:, :, i, j] = np.tensordot(dout, window, axes=([0, 2, 3], [0, 2, 3]))
            dxp[:, :, i:i + oh, j:j + ow] += np.tensordot(
                dout, w[:, :, i, j], axes=([1], [0])).transpose(0, 3, 1, 2)
    return dxp[:, :, pad:pad + x.shape[2], pad:pad + x.shape[3]], dw, dout.sum(axis=(0, 2, 3))


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
        z = ref.sigmoid(x_proj[:, t, units:2 * units] + h_proj[:, units:2 * units])
        n = np.tanh(x_proj[:, t, 2 * units:] + r * h_proj[:, 2 * units:])
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
        da_r = da_n * h_proj[:, 2 * units:] * r * (1.0 - r)
        dh_proj = np.concatenate([da_r, da_z, da_n * r], axis=1)
        dx_proj[:, t] = np.concatenate([da_r, da_z, da_n], axis=1)
        g["gru.recurrent_weight"] += h_prev.T @ dh_proj
        g["gru.recurrent_bias"] += dh_proj.sum(0)
        dh = dh * z + dh_proj @ p["gru.recurrent_weight"].T
    g["gru.input_weight"] = np.einsum("nte,ntg->eg", x, dx_proj)
    g["gru.input_bias"] = dx_proj.sum(axis=(0, 1))
    g["embedding.weight"] = np.zeros_like(p["embedding.weight"])
    np.add.at(g["embedding.weight"], tokens.ravel(),
              (dx_proj @ p["gru.input_weight"].T).reshape(-1, x.shape[2]))
    return loss, g


# --- optimisers and the loop ------------------------------------------------------------------

def train_steps(task, params, batches, optimizer):
    """Loss before each step, for every (x, y) batch, starting from neutral `params`."""
    p = {name: np.asarray(v, np.float64) for name, v in params.items()
         if not name.endswith((".mean", ".var"))}
    grads_fn = {"cnn": cnn_loss_and_grads, "rnn": rnn_loss_and_grads}[task]
    state = {name: (np.zeros_like(v), np.zeros_like(v)) for name, v in p.items()}
    losses = []
    for step, (x, y) in enumerate(batches, 1):
        loss, g = grads_fn(p, np.asarray(x) if task == "rnn" else np.asarray(x, np.float64),
                           np.asarray(y))
        losses.append(float(loss))
        for name in p:
            m, v = state[name]
            if optimizer["name"] == "sgd":  # heavy-ball: v = mu v + g; w -= lr v
                m *= optimizer["momentum"]
                m += g[name]
                p[name] -= optimizer["lr"] * m
            else:  # Adam with bias correction, eps outside the square root (PyTorch, Keras 3)
                b1, b2 = optimizer["beta1"], optimizer["beta2"]
                m *= b1
                m += (1 - b1) * g[name]
                v *= b2
                v += (1 - b2) * g[name] ** 2
                m_hat, v_hat = m / (1 - b1 ** step), v / (1 - b2 ** step)
                p[name] -= optimizer["lr"] * m_hat / (np.sqrt(v_hat) + optimizer["eps"])
    return losses


def fixed_batches(task, steps, batch_size=16, seed=2):
    """The fixed batch order of the training-equivalence check."""
    rng = np.random.RandomState(seed)
    batches = []
    for _ in range(steps):
        if task == "cnn":
            x = rng.uniform(0, 1, (batch_size,) + spec.CNN.input_shape).astype(np.float32)
            y = rng.randint(0, spec.CNN.num_classes, batch_size)
        else:
            x = rng.randint(3, spec.RNN.vocab_size, (batch_size, spec.RNN.seq_len))
            x = x.astype(np.int32)
            y = rng.randint(0, spec.RNN.num_classes, batch_size)
        batches.append((x, y.astype(np.int64)))
    return batches
