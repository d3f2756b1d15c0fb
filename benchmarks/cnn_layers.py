"""What limits the CNN's training step: each of SPEC's CNN layers alone, forward and backward
(batch 64, fp32), in one framework's environment, as a fraction of the host's fp32 peak; with
torch or tensorflow also the whole step, and its operators' shares of the step's time and FLOPs.

    .nox/torch/bin/python benchmarks/cnn_layers.py --framework torch
    .nox/tensorflow/bin/python benchmarks/cnn_layers.py --framework tensorflow
    .nox/flax/bin/python benchmarks/cnn_layers.py --framework jax
    .nox/paddle/bin/python benchmarks/cnn_layers.py --framework paddle

Rounds alternate the framework's own matrix product (2048 x 2048, fp32, the largest size
`python -m bench peak` tries) with every layer and the step, and each figure is the median over
the rounds of its ratio to the product measured in the same round: on a machine that others
load, ratios from one window hold where speeds do not. `--peak GFLOP/s` divides by a fixed
figure instead (`python -m bench peak`'s, which keeps the best of its rounds). Every ratio is
given twice: per second of wall time, and per CPU-second (the process's CPU time, all threads),
which other processes' load barely moves; the CPU-time figure leaves out the time a thread waits
asleep (for the other thread, or for a core), so with more than one thread it reads high.

A timing script, not a test. Imports the framework and bench_shared (installed in every
framework's environment, where it runs).
"""

import argparse
import collections
import os
import re
import statistics
import time

from bench_shared.spec import CNN, flops_per_example

B = CNN.batch_size
K, PAD = CNN.kernel_size, CNN.padding
_C0, (_C1, _C2, _C3, _C4), _SIDE = CNN.input_shape[0], CNN.conv_channels, CNN.input_shape[1]
# name, input channels, output channels, side (two blocks of two convolutions, a 2x2 pool after
# each block)
CONVS = [
    ("conv1", _C0, _C1, _SIDE),
    ("conv2", _C1, _C2, _SIDE),
    ("conv3", _C2, _C3, _SIDE // 2),
    ("conv4", _C3, _C4, _SIDE // 2),
]
DENSE = [
    ("dense1", CNN.flat_features, CNN.dense_units),
    ("dense2", CNN.dense_units, CNN.num_classes),
]
MACS = {**{n: s * s * c * o * K * K for n, c, o, s in CONVS}, **{n: i * o for n, i, o in DENSE}}
# the step's FLOPs as results count them (3 forward passes): conv1's input gradient, which no
# framework computes, is in them
STEP_FLOPS = flops_per_example("cnn", training=True) * B
PEAK_SIZE = 2048


def flops(name, backward=True):
    """A layer's FLOPs at batch B: forward 2 per MAC, backward 4 (input and weight gradients);
    conv1's input needs no gradient."""
    if not backward:
        return 2 * B * MACS[name]
    return (4 if name == "conv1" else 6) * B * MACS[name]


class Work(object):
    """Something to time: a call, the FLOPs one call does, how to wait for its result."""

    def __init__(self, name, call, flop, sync=lambda r: r, repeats=5):
        self.name, self.call, self.flop, self.sync, self.repeats = (name, call, flop, sync, repeats)

    def warm(self):
        for _ in range(2):
            self.sync(self.call())

    def seconds(self):
        """Wall and CPU seconds per call."""
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(self.repeats):
            result = self.call()
        self.sync(result)
        return (
            (time.perf_counter() - wall) / self.repeats,
            (time.process_time() - cpu) / self.repeats,
        )


def measure(works, peak, rounds):
    """{name: (wall s, CPU s, of the peak by wall, of the peak by CPU time)}, medians over
    rounds; each round times the matrix product first (unless the peak is fixed)."""
    product = works[0]
    for work in works:
        work.warm()
    runs = collections.defaultdict(list)
    for _ in range(rounds):
        for work in works:
            wall, cpu = work.seconds()
            if work is product and not peak:
                peak_wall, peak_cpu = product.flop / wall, product.flop / cpu
            runs[work.name].append(
                (
                    wall,
                    cpu,
                    work.flop / wall / (peak or peak_wall),
                    work.flop / cpu / (peak or peak_cpu),
                )
            )
    return {
        name: tuple(statistics.median(r[i] for r in rs) for i in range(4))
        for name, rs in runs.items()
    }


def report(works, figures, title):
    print(f"\n{title}\n")
    print("| | ms | GFLOP/s | of the peak | per CPU-second: GFLOP/s | of the peak |")
    print("|---|---|---|---|---|---|")
    for work in works:
        if work.name in figures:
            wall, cpu, of_wall, of_cpu = figures[work.name]
            print(
                f"| {work.name} | {wall * 1e3:.1f} | {work.flop / wall / 1e9:.0f} | "
                f"{of_wall:.2f} | {work.flop / cpu / 1e9:.0f} | {of_cpu:.2f} |"
            )


def layers_bound(figures):
    """The step's share of the peak (CPU time, its FLOPs as results count them) if it were its
    weighted layers alone, each at its own rate: what the convolutions and matrix products
    allow before anything else the step does."""
    return STEP_FLOPS / sum(flops(n) / figures[n + " f+b"][3] for n in MACS)


def breakdown(shares, step_ms, step_of_peak):
    """The step's time by operator group beside its share of the FLOPs (as results count
    them); a group's rate, of the peak, follows from the whole step's (CPU time)."""
    whole = sum(shares.values())
    print(
        f"\nThe step by operator group ({step_ms:.0f} ms per profiled step; the whole step "
        f"at {step_of_peak:.2f} of the peak):\n"
    )
    print("| operator group | share of time | share of FLOPs | its rate, of the peak |")
    print("|---|---|---|---|")
    for group, t in sorted(shares.items(), key=lambda kv: -kv[1]):
        layer, _, part = group.partition(" ")
        flop = (
            flops(layer, backward=False)
            if part == "forward"
            else flops(layer) - flops(layer, backward=False)
            if part == "backward"
            else flops(layer)
            if layer in MACS
            else 0
        )
        rate = f"{step_of_peak * flop / STEP_FLOPS / (t / whole):.2f}" if flop else ""
        print(f"| {group} | {t / whole:.1%} | {flop / STEP_FLOPS:.1%} | {rate} |")


def torch_threads(threads):
    import torch

    torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
    return torch.get_num_threads()


def torch_works(step_only=False):
    import torch
    from torch import nn

    a, b = torch.randn(PEAK_SIZE, PEAK_SIZE), torch.randn(PEAK_SIZE, PEAK_SIZE)
    yield Work("matrix product", lambda: a @ b, 2 * PEAK_SIZE**3, repeats=2)
    if step_only:
        return
    for name, c, o, s in CONVS:
        conv = nn.Conv2d(c, o, K, padding=PAD).to(memory_format=torch.channels_last)
        x = torch.randn(B, c, s, s).to(memory_format=torch.channels_last)
        x.requires_grad_(name != "conv1")

        def forward(conv=conv, x=x):
            with torch.no_grad():
                return conv(x)

        yield Work(name + " forward", forward, flops(name, backward=False))
        yield Work(name + " f+b", lambda conv=conv, x=x: conv(x).sum().backward(), flops(name))
    for name, i, o in DENSE:
        dense, x = nn.Linear(i, o), torch.randn(B, i, requires_grad=True)
        yield Work(name + " f+b", lambda dense=dense, x=x: dense(x).sum().backward(), flops(name))


def torch_step():
    """The whole training step as bench_torch runs it (channels-last, SGD with momentum)."""
    import torch
    from torch import nn

    d1, d2, d3 = CNN.dropout
    convs = [nn.Conv2d(c, o, K, padding=PAD) for _, c, o, _ in CONVS]
    (_, f, h), (_, _, n) = DENSE
    net = nn.Sequential(
        convs[0],
        nn.ReLU(),
        convs[1],
        nn.MaxPool2d(2),
        nn.ReLU(),
        nn.Dropout(d1),
        convs[2],
        nn.ReLU(),
        convs[3],
        nn.MaxPool2d(2),
        nn.ReLU(),
        nn.Dropout(d2),
        nn.Flatten(),
        nn.Linear(f, h),
        nn.ReLU(),
        nn.Dropout(d3),
        nn.Linear(h, n),
    ).to(memory_format=torch.channels_last)
    sgd = torch.optim.SGD(net.parameters(), lr=CNN.learning_rate, momentum=CNN.momentum)
    x = torch.randn(B, *CNN.input_shape).to(memory_format=torch.channels_last)
    y = torch.randint(0, CNN.num_classes, (B,))

    def step():
        sgd.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(net(x), y).backward()
        sgd.step()

    return Work("whole step", step, STEP_FLOPS, repeats=3)


# torch's operators by group: the convolutions and matrix products by their weights' shapes
_TORCH_GROUPS = {
    "aten::bernoulli_": "dropout",
    "aten::div_": "dropout",
    "aten::mul": "dropout",
    "aten::clamp_min": "ReLU",
    "aten::threshold_backward": "ReLU",
    "aten::max_pool2d_with_indices": "pooling",
    "aten::max_pool2d_with_indices_backward": "pooling",
    "aten::fill_": "pooling",
    "aten::zero_": "pooling",
}


def torch_group(name, shapes):
    weights = {(c, o): n for n, c, o, _ in CONVS}
    if name in ("aten::mkldnn_convolution", "aten::convolution_backward"):
        for shape in shapes:
            if len(shape) == 4 and shape[2:] == [K, K]:
                part = "forward" if name == "aten::mkldnn_convolution" else "backward"
                return f"{weights[(shape[1], shape[0])]} {part}"
    if name in ("aten::mm", "aten::addmm"):
        dims = {d for shape in shapes for d in shape}
        return DENSE[0][0] if DENSE[0][1] in dims else DENSE[1][0]
    if name.startswith("Optimizer.") or name in (
        "aten::add_",
        "aten::mul_",
        "aten::_foreach_add_",
        "aten::_foreach_mul_",
    ):
        return "optimizer"
    return _TORCH_GROUPS.get(name, "other (loss, copies, dispatch)")


def torch_profile(step):
    from torch.profiler import ProfilerActivity, profile

    repeats = 10
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        start = time.perf_counter()
        for _ in range(repeats):
            step.call()
        seconds = (time.perf_counter() - start) / repeats
    shares = collections.Counter()
    for event in prof.key_averages(group_by_input_shape=True):
        shares[torch_group(event.key, event.input_shapes)] += event.self_cpu_time_total
    return shares, seconds * 1e3


def tensorflow_threads(threads):
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads or len(os.sched_getaffinity(0)))
    tf.config.threading.set_inter_op_parallelism_threads(1)  # bench_tensorflow's default
    return tf.config.threading.get_intra_op_parallelism_threads()


def tensorflow_works(step_only=False):
    import tensorflow as tf

    a = tf.random.normal((PEAK_SIZE, PEAK_SIZE))
    product = tf.function(lambda: tf.matmul(a, a))
    yield Work("matrix product", product, 2 * PEAK_SIZE**3, lambda r: r.numpy(), repeats=2)
    if step_only:
        return
    for name, c, o, s in CONVS:
        x = tf.random.normal((B, s, s, c))
        w = tf.Variable(tf.random.normal((K, K, c, o), stddev=0.05))

        def conv(x, w):
            return tf.nn.conv2d(x, w, 1, "SAME")

        def grads(x, w, conv=conv, name=name):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(conv(x, w))
            return tape.gradient(loss, w if name == "conv1" else [x, w])

        forward, backward = tf.function(conv), tf.function(grads)
        yield Work(
            name + " forward",
            lambda f=forward, x=x, w=w: f(x, w),
            flops(name, backward=False),
            lambda r: r.numpy(),
        )
        yield Work(
            name + " f+b",
            lambda f=backward, x=x, w=w: f(x, w),
            flops(name),
            lambda r: tf.nest.map_structure(lambda t: t.numpy(), r),
        )
    for name, i, o in DENSE:
        x, w = tf.random.normal((B, i)), tf.Variable(tf.random.normal((i, o), stddev=0.01))

        def grads(x, w):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(tf.matmul(x, w))
            return tape.gradient(loss, [x, w])

        f = tf.function(grads)
        yield Work(
            name + " f+b",
            lambda f=f, x=x, w=w: f(x, w),
            flops(name),
            lambda r: [t.numpy() for t in r],
        )


def tensorflow_step():
    """The whole training step as bench_tensorflow runs it: Keras layers (NHWC), a tf.function
    step with GradientTape and Keras' SGD with momentum; layers named after SPEC's, so that the
    profile can tell them apart."""
    import keras
    import tensorflow as tf
    from keras import layers

    init = {"kernel_initializer": "glorot_uniform", "padding": "same"}
    (c1, c2, c3, c4), (d1, d2, d3) = CNN.conv_channels, CNN.dropout
    net = keras.Sequential(
        [
            keras.Input((_SIDE, _SIDE, _C0)),
            layers.Conv2D(c1, K, activation="relu", name="conv1", **init),
            layers.Conv2D(c2, K, name="conv2", **init),
            layers.MaxPool2D(2, name="pool1"),
            layers.ReLU(name="relu2"),
            layers.Dropout(d1, name="drop1"),
            layers.Conv2D(c3, K, activation="relu", name="conv3", **init),
            layers.Conv2D(c4, K, name="conv4", **init),
            layers.MaxPool2D(2, name="pool2"),
            layers.ReLU(name="relu4"),
            layers.Dropout(d2, name="drop2"),
            layers.Flatten(),
            layers.Dense(CNN.dense_units, activation="relu", name="dense1"),
            layers.Dropout(d3, name="drop3"),
            layers.Dense(CNN.num_classes, name="dense2"),
        ]
    )
    sgd = keras.optimizers.SGD(CNN.learning_rate, momentum=CNN.momentum)
    sgd.build(net.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x = tf.random.uniform((B, _SIDE, _SIDE, _C0))
    y = tf.random.uniform((B,), 0, CNN.num_classes, tf.int32)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, net(x, training=True))
        variables = net.trainable_variables
        sgd.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    return Work("whole step", lambda: step(x, y), STEP_FLOPS, lambda r: r.numpy(), repeats=3)


def tensorflow_group(name):
    """An op's group from its name (`scope/.../op:Type`): its layer's scope (a retraced
    function's scopes carry a `_N` suffix), forward or backward by the gradient tape's scope."""
    path, _, kind = name.rpartition(":")
    scopes = [re.sub(r"_\d+$", "", scope) for scope in path.split("/")]
    layer = next((s for s in scopes if s in MACS or s[:4] in ("drop", "pool", "relu")), None)
    if kind in ("Relu", "ReluGrad"):
        return "ReLU"
    if kind == "ReadVariableOp":
        return "other (loss, copies, dispatch)"
    if layer in MACS:
        if layer.startswith("dense"):
            return layer
        return f"{layer} {'backward' if scopes[0] == 'gradient_tape' else 'forward'}"
    if layer:
        return {"drop": "dropout", "pool": "pooling", "relu": "ReLU"}[layer[:4]]
    if scopes[0] == "sgd":
        return "optimizer"
    return "other (loss, copies, dispatch)"


def tensorflow_profile(step):
    """The step's ops' durations from TensorFlow's own profiler (its XSpace, read directly):
    the executor's events, which run one op at a time with one inter-op thread."""
    import glob
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    repeats = 10
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        start = time.perf_counter()
        for _ in range(repeats):
            step.sync(step.call())
        seconds = (time.perf_counter() - start) / repeats
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        with open(glob.glob(logdir + "/**/*.xplane.pb", recursive=True)[0], "rb") as f:
            space.ParseFromString(f.read())
    shares = collections.Counter()
    for plane in space.planes:
        if plane.name.startswith("/host:CPU"):
            for line in plane.lines:
                if line.name.startswith("tf_Compute"):
                    for event in line.events:
                        name = plane.event_metadata[event.metadata_id].name
                        # an op (`name:Type`), not the executor's or a thread pool's events
                        if ":" in name and "::" not in name:
                            shares[tensorflow_group(name)] += event.duration_ps
    return shares, seconds * 1e3


def jax_threads(threads):
    if threads:
        raise SystemExit(
            "--threads: JAX sizes XLA's thread pool from the process's cores "
            "(taskset the script instead)"
        )
    return len(os.sched_getaffinity(0))


def jax_works(step_only=False):
    import jax
    import jax.numpy as jnp

    a = jnp.ones((PEAK_SIZE, PEAK_SIZE))
    product = jax.jit(lambda a: a @ a)
    yield Work(
        "matrix product", lambda: product(a), 2 * PEAK_SIZE**3, jax.block_until_ready, repeats=2
    )
    for name, c, o, s in CONVS:
        x, w = jnp.ones((B, s, s, c)), jnp.full((K, K, c, o), 0.01)

        def loss(x, w):
            return jax.lax.conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            ).sum()

        grad = jax.jit(jax.grad(loss, argnums=1 if name == "conv1" else (0, 1)))
        yield Work(
            name + " f+b",
            lambda grad=grad, x=x, w=w: grad(x, w),
            flops(name),
            jax.block_until_ready,
        )
    for name, i, o in DENSE:
        x, w = jnp.ones((B, i)), jnp.full((i, o), 0.01)
        grad = jax.jit(jax.grad(lambda x, w: (x @ w).sum(), argnums=(0, 1)))
        yield Work(
            name + " f+b",
            lambda grad=grad, x=x, w=w: grad(x, w),
            flops(name),
            jax.block_until_ready,
        )


def paddle_threads(threads):
    if threads:
        raise SystemExit("--threads: set OMP_NUM_THREADS for Paddle instead")
    return len(os.sched_getaffinity(0))


def paddle_works(step_only=False):
    import paddle

    paddle.set_device("cpu")
    a = paddle.randn([PEAK_SIZE, PEAK_SIZE])
    yield Work(
        "matrix product",
        lambda: paddle.matmul(a, a),
        2 * PEAK_SIZE**3,
        lambda r: r.numpy(),
        repeats=2,
    )
    for name, c, o, s in CONVS:
        conv, x = paddle.nn.Conv2D(c, o, K, padding=PAD), paddle.randn([B, c, s, s])
        x.stop_gradient = name == "conv1"
        yield Work(name + " f+b", lambda conv=conv, x=x: conv(x).sum().backward(), flops(name))
    for name, i, o in DENSE:
        dense, x = paddle.nn.Linear(i, o), paddle.randn([B, i])
        x.stop_gradient = False
        yield Work(name + " f+b", lambda dense=dense, x=x: dense(x).sum().backward(), flops(name))


FRAMEWORKS = {
    "torch": (torch_threads, torch_works, torch_step, torch_profile),
    "tensorflow": (tensorflow_threads, tensorflow_works, tensorflow_step, tensorflow_profile),
    "jax": (jax_threads, jax_works, None, None),
    "paddle": (paddle_threads, paddle_works, None, None),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), required=True)
    parser.add_argument(
        "--peak",
        type=float,
        help="a fixed fp32 peak in GFLOP/s (`python -m bench peak`) instead of "
        "the matrix product measured in every round",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="intra-op threads (torch, tensorflow); 0: every usable core",
    )
    parser.add_argument(
        "--step-only",
        action="store_true",
        help="the whole step and its profile, not each layer alone",
    )
    args = parser.parse_args()
    set_threads, make_works, make_step, profile = FRAMEWORKS[args.framework]
    if args.step_only and not make_step:
        parser.error(f"--step-only: no whole step for {args.framework}")
    threads = set_threads(args.threads)
    works = list(make_works(args.step_only))
    if make_step:
        works.append(make_step())
    load = os.getloadavg()[0]
    figures = measure(works, args.peak * 1e9 if args.peak else None, args.rounds)
    peak = f"{args.peak:.0f} GFLOP/s" if args.peak else "the matrix product of each round"
    report(
        works,
        figures,
        f"{args.framework}, {threads} threads, batch {B}, fp32, against {peak}; "
        f"{args.rounds} rounds, load average {load:.1f} to {os.getloadavg()[0]:.1f}",
    )
    if not args.step_only:
        print(
            f"\nThe weighted layers alone, each at its own rate: {layers_bound(figures):.2f} "
            "of the peak (CPU time), the step's ceiling before anything else it does."
        )
    if profile:
        shares, ms = profile(works[-1])
        breakdown(shares, ms, figures[works[-1].name][3])


if __name__ == "__main__":
    main()
