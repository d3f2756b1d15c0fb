"""Keras on PyTorch: torch's intra-/inter-op thread pools, the device Keras places tensors on
(Keras' torch backend takes CUDA whenever it sees one; device=cpu keeps the run on the CPU),
versions, sync, GPU memory."""

import os

import torch

_gpu = False


def configure(run, options):
    global _gpu
    _gpu = run["device"]["name"] == "gpu"
    if _gpu:
        if not torch.cuda.is_available():
            raise NotImplementedError(
                "device=gpu is not supported by torch %s here: it sees "
                "no GPU (a CPU-only build?)" % torch.__version__
            )
        device = "cuda:%d" % run["device"]["index"]
    else:
        device = "cpu"
    torch.set_num_threads(options["threads"] or len(os.sched_getaffinity(0)))
    try:  # settable once, before torch's inter-op pool starts
        torch.set_num_interop_threads(options["interop_threads"])
    except RuntimeError:
        pass
    return {
        "device": device,
        "keras_device": device,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
    }


def versions():
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.cuda.is_available() else None,
    }


def sync():
    if _gpu:
        torch.cuda.synchronize()


def memory_stats():
    if not _gpu:
        return None
    return {"peak_allocated_bytes": torch.cuda.max_memory_allocated()}
