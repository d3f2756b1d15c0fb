"""PaddlePaddle for Rosetta Bench: capabilities, device and thread setup, and the device sync."""

import ctypes
import os

import paddle
from paddle.base import core

from bench_shared import distributed

from .weights import tensors  # noqa: F401  the model's native tensors (weight protocol)

# capabilities and options: conf/framework/paddle.yaml (checked before setup() by the runtime).
# CPU: fp32 only -- paddle.amp.auto_cast is a no-op on a CPUPlace in Paddle 3.3 (it warns
# "amp_guard can only be enabled on CUDAPlace, XPUPlace, and CustomPlace" and runs float32).
AUTOCAST_DTYPES = {"fp32": None, "fp16": "float16", "bf16": "bfloat16"}

_state = {"gpu": False, "data_format": "NCHW", "threads": 1}


def on_gpu():
    return _state["gpu"]


def data_format():
    """NCHW or NHWC: the image tasks' layout, chosen by framework.options.data_format."""
    return _state["data_format"]


def threads():
    return _state["threads"]


def setup(run):
    """Choose the device, set threads, layout and seed; return what was applied."""
    options = run["framework"]["options"]
    if run["device"]["name"] == "gpu":
        if not paddle.device.is_compiled_with_cuda() or paddle.device.cuda.device_count() == 0:
            raise NotImplementedError(
                "device=gpu is not supported by paddlepaddle %s: this build sees no CUDA device "
                "(install paddlepaddle-gpu: BENCH_PADDLE_REQUIREMENT=paddlepaddle-gpu==%s from "
                "Paddle's CUDA index)" % (paddle.__version__, paddle.__version__)
            )
        # a data-parallel rank takes the GPU LOCAL_RANK places after device.index
        index = run["device"]["index"] + distributed.process(run)["local_rank"]
        paddle.set_device("gpu:%d" % index)
    else:
        paddle.set_device("cpu")
    _state["gpu"] = run["device"]["name"] == "gpu"
    _state["data_format"] = options["data_format"]
    # Paddle has no public thread setter for dygraph (there is no paddle.set_num_threads): at
    # import it sets OMP_NUM_THREADS=1 where unset and applies FLAGS_paddle_num_threads
    # (default 1) to MKL and OpenMP. core.set_num_threads is what applies that flag.
    n = options["threads"] or len(os.sched_getaffinity(0))
    core.set_num_threads(n)
    _state["threads"] = n
    joined = join_parallel_env(run)
    paddle.seed(run["seed"])
    settings = {
        "device": str(paddle.get_device()),
        "threads": n,
        "openmp_max_threads": _read_back("libiomp5", "omp_get_max_threads"),
        "mkl_max_threads": _read_back("libmklml", "MKL_Get_Max_Threads"),
        "parallel_env": joined,
    }
    settings.update({k: v for k, v in options.items() if k not in settings})
    return settings


def versions():
    return {
        "paddle": paddle.__version__,
        "commit": paddle.version.commit,
        "cuda": paddle.version.cuda() if paddle.device.is_compiled_with_cuda() else None,
        "cudnn": paddle.version.cudnn() if paddle.device.is_compiled_with_cuda() else None,
        "onednn": core.is_compiled_with_onednn(),
        "mkl": paddle.version.with_mkl == "ON",
    }


def sync():
    if _state["gpu"]:
        paddle.device.synchronize()


def count_parameters(model):
    """Trainable parameters (batch norm's _mean/_variance are non-trainable parameters)."""
    return sum(int(p.size) for p in model.net.parameters() if p.trainable)


def memory_stats():
    if not _state["gpu"]:
        return None
    return {
        "peak_allocated_bytes": paddle.device.cuda.max_memory_allocated(),
        "peak_reserved_bytes": paddle.device.cuda.max_memory_reserved(),
    }


def peak_flops(precision, size=2048):
    """Measured dense matrix-multiply throughput on the device (FLOP/s): the denominator of
    the utilisation figure. Run after the benchmark, untimed. In fp32 the faster of dygraph's
    paddle.matmul (MKL on the CPU: ~2.5x slower than NumPy's OpenBLAS on this AMD EPYC) and a
    Paddle Inference predictor's (oneDNN), the path ResNet-50 runs by default."""
    from bench_shared.timing import matmul_flops, peak_rate

    dtype = AUTOCAST_DTYPES[precision] or "float32"
    a = paddle.randn([size, size]).astype(dtype)
    b = paddle.randn([size, size]).astype(dtype)

    def products(step):
        return peak_rate(lambda n: [step() for _ in range(n)], matmul_flops(size))

    flops = products(lambda: paddle.matmul(a, b).numpy())  # .numpy() waits
    if precision == "fp32":
        from .loop import paddle_inference

        net = paddle.nn.Linear(size, size, bias_attr=False)
        net.eval()
        x = a.numpy()
        predictor = paddle_inference(net, x)
        feed = predictor.get_input_handle(predictor.get_input_names()[0])
        feed.reshape([size, size])
        feed.copy_from_cpu(x)
        fetch = predictor.get_output_handle(predictor.get_output_names()[0])
        flops = max(flops, products(lambda: (predictor.run(), fetch.copy_to_cpu())))
    return flops


def _read_back(library, function):
    """A thread count as the library Paddle loaded reports it (None where not loaded): what
    its kernels will use, read back rather than assumed."""
    with open("/proc/self/maps") as maps:
        libs = sorted({line.split()[-1] for line in maps if library in line})
    return getattr(ctypes.CDLL(libs[0]), function)() if libs else None


def join_parallel_env(run):
    """devices=N: join the run's N processes with paddle.distributed.init_parallel_env (a
    gloo process group on a CPU, NCCL on GPUs), the group paddle.DataParallel reduces over.
    The orchestrator starts them as torchrun does; Paddle's launcher (paddle.distributed.launch)
    would set PADDLE_* variables instead, so they are written from the same facts: rank 0's
    TCP store on MASTER_ADDR:MASTER_PORT, one endpoint per rank from BENCH_WORKER_PORTS, all
    at MASTER_ADDR: the ranks share one host (across Slurm nodes the orchestrator refuses
    Paddle, conf/framework/paddle.yaml's multi_node_reason). What was joined, or None for one
    device."""
    proc = distributed.joining(
        run, "processes", "paddle.DataParallel joins processes", "conf/framework/paddle.yaml"
    )
    if proc is None:
        return None
    backend = "nccl" if _state["gpu"] else "gloo"
    endpoints = ["%s:%d" % (proc["master_addr"], port) for port in proc["worker_ports"]]
    os.environ.update(
        {
            "PADDLE_DISTRI_BACKEND": backend,  # the CPU wheel's "auto" is its older gloo context
            "PADDLE_TRAINER_ID": str(proc["rank"]),
            "PADDLE_TRAINERS_NUM": str(proc["world_size"]),
            "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
            "PADDLE_CURRENT_ENDPOINT": endpoints[proc["rank"]],
            "PADDLE_RANK_IN_NODE": str(proc["local_rank"]),
        }
    )
    if _state["gpu"]:
        os.environ["FLAGS_selected_gpus"] = paddle.get_device().split(":")[1]
    import paddle.distributed as dist

    dist.init_parallel_env()
    return {"backend": backend, "rank": dist.get_rank(), "world_size": dist.get_world_size()}
