"""What limits the CNN's training step: each of SPEC's CNN layers alone, forward and backward
(batch 64, fp32), in one framework's environment, as GFLOP/s and a fraction of the host's fp32
peak; with --framework torch also the whole step and its operators' shares (torch.profiler).

    .nox/torch/bin/python benchmarks/cnn_layers.py --framework torch --peak 339
    .nox/flax/bin/python benchmarks/cnn_layers.py --framework jax --peak 339
    .nox/paddle/bin/python benchmarks/cnn_layers.py --framework paddle --peak 339

--peak: the host's fp32 GFLOP/s (`python -m bench peak`). A timing script, not a test: run it on
a quiet machine. Imports the framework and bench_shared (installed in every framework's
environment, where it runs).
"""
import argparse
import time

from bench_shared.spec import CNN

B = CNN.batch_size
K, PAD = CNN.kernel_size, CNN.padding
_C0, (_C1, _C2, _C3, _C4), _SIDE = CNN.input_shape[0], CNN.conv_channels, CNN.input_shape[1]
# name, input channels, output channels, side (two blocks of two convolutions, a 2x2 pool after
# each block)
CONVS = [("conv1", _C0, _C1, _SIDE), ("conv2", _C1, _C2, _SIDE),
         ("conv3", _C2, _C3, _SIDE // 2), ("conv4", _C3, _C4, _SIDE // 2)]
DENSE = [("dense1", CNN.flat_features, CNN.dense_units),
         ("dense2", CNN.dense_units, CNN.num_classes)]


def flops(name, macs):
    """Forward 2 FLOPs per MAC, backward 4 (input and weight gradients); conv1's input needs no
    gradient."""
    return (4 if name == "conv1" else 6) * B * macs


def timed(step, sync=lambda r: r, repeats=20):
    for _ in range(3):
        sync(step())
    start = time.perf_counter()
    for _ in range(repeats):
        result = step()
    sync(result)
    return (time.perf_counter() - start) / repeats


def torch_layers():
    import torch
    from torch import nn

    for name, c, o, s in CONVS:
        conv = nn.Conv2d(c, o, K, padding=PAD).to(memory_format=torch.channels_last)
        x = torch.randn(B, c, s, s).to(memory_format=torch.channels_last)
        x.requires_grad_(name != "conv1")
        yield name, s * s * c * o * K * K, timed(lambda conv=conv, x=x: conv(x).sum().backward())
    for name, i, o in DENSE:
        dense, x = nn.Linear(i, o), torch.randn(B, i, requires_grad=True)
        yield name, i * o, timed(lambda dense=dense, x=x: dense(x).sum().backward())


def torch_step(peak):
    """The whole training step as bench_torch runs it (channels-last, SGD with momentum) and
    the operators' shares of its time."""
    import torch
    from torch import nn
    from torch.profiler import ProfilerActivity, profile

    d1, d2, d3 = CNN.dropout
    convs = [nn.Conv2d(c, o, K, padding=PAD) for _, c, o, _ in CONVS]
    (_, f, h), (_, _, n) = DENSE
    net = nn.Sequential(
        convs[0], nn.ReLU(), convs[1], nn.MaxPool2d(2), nn.ReLU(), nn.Dropout(d1),
        convs[2], nn.ReLU(), convs[3], nn.MaxPool2d(2), nn.ReLU(), nn.Dropout(d2),
        nn.Flatten(), nn.Linear(f, h), nn.ReLU(), nn.Dropout(d3), nn.Linear(h, n),
    ).to(memory_format=torch.channels_last)
    sgd = torch.optim.SGD(net.parameters(), lr=CNN.learning_rate, momentum=CNN.momentum)
    x = torch.randn(B, *CNN.input_shape).to(memory_format=torch.channels_last)
    y = torch.randint(0, CNN.num_classes, (B,))

    def step():
        sgd.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(net(x), y).backward()
        sgd.step()

    seconds = timed(step, repeats=30)
    total = sum(flops(n, s * s * c * o * K * K) for n, c, o, s in CONVS) + sum(
        flops(n, i * o) for n, i, o in DENSE)
    print(f"whole step: {seconds * 1e3:.1f} ms, {total / seconds / 1e9:.0f} GFLOP/s, "
          f"{total / seconds / 1e9 / peak:.2f} of the peak")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(20):
            step()
    ops = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    whole = sum(e.self_cpu_time_total for e in ops)
    print("| operator | ms per step | share |\n|---|---|---|")
    for e in ops[:10]:
        print(f"| {e.key} | {e.self_cpu_time_total / 20 / 1e3:.2f} | "
              f"{e.self_cpu_time_total / whole:.1%} |")


def jax_layers():
    import jax
    import jax.numpy as jnp

    for name, c, o, s in CONVS:
        x, w = jnp.ones((B, s, s, c)), jnp.full((K, K, c, o), 0.01)

        def loss(x, w):
            return jax.lax.conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")).sum()

        grad = jax.jit(jax.grad(loss, argnums=1 if name == "conv1" else (0, 1)))
        yield name, s * s * c * o * K * K, timed(lambda grad=grad, x=x, w=w: grad(x, w),
                                             jax.block_until_ready)
    for name, i, o in DENSE:
        x, w = jnp.ones((B, i)), jnp.full((i, o), 0.01)
        grad = jax.jit(jax.grad(lambda x, w: (x @ w).sum(), argnums=(0, 1)))
        yield name, i * o, timed(lambda grad=grad, x=x, w=w: grad(x, w), jax.block_until_ready)


def paddle_layers():
    import paddle

    paddle.set_device("cpu")
    for name, c, o, s in CONVS:
        conv, x = paddle.nn.Conv2D(c, o, K, padding=PAD), paddle.randn([B, c, s, s])
        x.stop_gradient = name == "conv1"
        yield name, s * s * c * o * K * K, timed(lambda conv=conv, x=x: conv(x).sum().backward())
    for name, i, o in DENSE:
        dense, x = paddle.nn.Linear(i, o), paddle.randn([B, i])
        x.stop_gradient = False
        yield name, i * o, timed(lambda dense=dense, x=x: dense(x).sum().backward())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=["torch", "jax", "paddle"], required=True)
    parser.add_argument("--peak", type=float, required=True, help="host fp32 GFLOP/s")
    args = parser.parse_args()
    layers = {"torch": torch_layers, "jax": jax_layers, "paddle": paddle_layers}[args.framework]
    print(f"{args.framework}: each layer alone, forward + backward, batch {B}, fp32")
    print("| layer | ms | GFLOP/s | of the peak |\n|---|---|---|---|")
    for name, macs, seconds in layers():
        rate = flops(name, macs) / seconds / 1e9
        print(f"| {name} | {seconds * 1e3:.2f} | {rate:.0f} | {rate / args.peak:.2f} |")
    if args.framework == "torch":
        torch_step(args.peak)


if __name__ == "__main__":
    main()
