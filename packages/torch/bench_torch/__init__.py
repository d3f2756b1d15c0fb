"""PyTorch for Rosetta Bench: capabilities, device and thread setup, and the device sync."""

import os

import torch
import torch.distributed as dist

from bench_shared import distributed

from .weights import tensors  # noqa: F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/torch.yaml (checked before setup() by the runtime)
# int8 runs no autocast: its model is PT2E-quantized after calibration (loop.calibrate)
AUTOCAST_DTYPES = {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16, "int8": None}

_device = torch.device("cpu")


def device():
    return _device


def setup(run):
    """Choose the device, set threads and kernel switches; return what was applied."""
    global _device
    options = run["framework"]["options"]
    if run["device"]["name"] == "gpu":
        if not torch.cuda.is_available():
            raise NotImplementedError(
                "device=gpu is not supported by torch %s: this build sees no CUDA device"
                % torch.__version__
            )
        # a data-parallel rank takes the GPU LOCAL_RANK places after device.index
        local_rank = distributed.process(run)["local_rank"]
        _device = torch.device("cuda", run["device"]["index"] + local_rank)
        torch.cuda.set_device(_device)
    else:
        _device = torch.device("cpu")
    threads = options["threads"] or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    if torch.get_num_interop_threads() != options["interop_threads"]:
        torch.set_num_interop_threads(options["interop_threads"])  # once, before parallel work
    # cuDNN autotuning (off by default in PyTorch) and TF32 (on for cuDNN convolutions by
    # default, which is not FP32): both explicit, both recorded.
    torch.backends.cudnn.benchmark = bool(options["cudnn_benchmark"])
    torch.backends.cudnn.allow_tf32 = bool(options["tf32"])
    torch.backends.cuda.matmul.allow_tf32 = bool(options["tf32"])
    joined = join_process_group(run)
    # denormals cost ~100x on x86 CPUs; a random-weight ResNet produces them
    flush_denormal = torch.set_flush_denormal(True)
    torch.manual_seed(run["seed"])
    settings = {
        "device": str(_device),
        "device_name": torch.cuda.get_device_name(_device) if _device.type == "cuda" else None,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "flush_denormal": flush_denormal,
        "process_group": joined,
    }
    settings.update({k: v for k, v in options.items() if k not in settings})
    return settings


def versions():
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "mkldnn": torch.backends.mkldnn.is_available(),
    }


def sync():
    if _device.type == "cuda":
        torch.cuda.synchronize(_device)


def count_parameters(model):
    return sum(p.numel() for p in model.net.parameters())


def memory_stats():
    if _device.type != "cuda":
        return None
    return {
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(_device),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(_device),
    }


def peak_flops(precision):
    """Measured dense matrix-multiply throughput on the device (FLOP/s): the denominator of
    the utilisation figure. Run after the benchmark, untimed. The faster of torch's two GEMM
    paths: `a @ b` (BLAS: MKL, which takes its AVX2 path on AMD CPUs) and the same product as
    a channels-last 1x1 convolution (oneDNN, the library the CNNs' convolutions run in; ~1.3x
    faster in fp32 on an AMD EPYC, where ResNet-50 measured above the matmul figure). int8:
    oneDNN's quantized linear, the kernel an int8 model compiled by Inductor runs (uint8
    activations times int8 weights, VNNI or AMX where the CPU has them)."""
    from bench_shared.timing import peak_matmul_rate

    if precision == "int8":
        return peak_matmul_rate(int8_products) if _device.type == "cpu" else None
    dtype = AUTOCAST_DTYPES[precision] or torch.float32

    def products(convolution):
        def make_work(size):
            a = torch.randn(size, size, device=_device, dtype=dtype)
            b = torch.randn(size, size, device=_device, dtype=dtype)
            pixels = (
                a.t().reshape(1, size, 32, size // 32).contiguous(memory_format=torch.channels_last)
            )
            kernel = b.t().reshape(size, size, 1, 1)
            op = (
                (lambda: torch.nn.functional.conv2d(pixels, kernel))
                if convolution
                else (lambda: a @ b)
            )

            def work(n):
                with torch.no_grad():
                    for _ in range(n):
                        op()
                sync()

            return work

        return peak_matmul_rate(make_work)

    return max(products(False), products(True))


def int8_products(size):
    """peak_matmul_rate's work: size x size uint8 activations times prepacked int8 weights
    through oneDNN's qlinear, float32 out."""
    x = torch.randint(0, 256, (size, size), dtype=torch.uint8)
    packed = torch.ops.onednn.qlinear_prepack(
        torch.randint(-127, 128, (size, size), dtype=torch.int8), [size, size]
    )
    scales, zero_points = torch.full((size,), 0.01), torch.zeros(size, dtype=torch.int64)

    def work(n):
        for _ in range(n):
            torch.ops.onednn.qlinear_pointwise(
                x, 0.01, 0, packed, scales, zero_points, None, 1.0, 0, torch.float32, "none", [], ""
            )

    return work


def join_process_group(run):
    """devices=N: join the run's N processes into one process group, from the variables the
    orchestrator set as torchrun does (init_method env://); gloo on a CPU, NCCL on GPUs.
    What was joined, or None for one device."""
    proc = distributed.process(run)
    if proc["world_size"] == 1:
        return None
    backend = "nccl" if _device.type == "cuda" else "gloo"
    if not dist.is_initialized():
        dist.init_process_group(
            backend, init_method="env://", rank=proc["rank"], world_size=proc["world_size"]
        )
    return {"backend": backend, "rank": dist.get_rank(), "world_size": dist.get_world_size()}
