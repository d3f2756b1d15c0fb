"""The host's side of the environment record (the worker adds the framework's side)."""
import functools
import os
import platform
import shutil
import subprocess
from pathlib import Path

# variables that change speed in any framework: thread pools, BLAS, allocators, device masks;
# each framework adds its own prefixes (`speed_variables` in conf/framework/<fw>.yaml)
SPEED_VARIABLES = ("OMP_", "MKL_", "OPENBLAS_", "KMP_", "XLA_", "CUDA_", "CUDNN_", "CUPY_",
                   "DNNL_", "ONEDNN_", "NCCL_", "LD_PRELOAD", "MALLOC_", "NUMEXPR_", "VECLIB_")


def _run(args, cwd=None):
    try:
        out = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


@functools.cache
def gpus():
    """[(name, driver, memory)] of the NVIDIA GPUs nvidia-smi lists; [] when there are none."""
    if not shutil.which("nvidia-smi"):
        return []
    out = _run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                "--format=csv,noheader"])
    return [tuple(part.strip() for part in line.split(",")) for line in (out or "").splitlines()
            if line.strip()]


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def git_commit(directory):
    commit = _run(["git", "rev-parse", "HEAD"], cwd=directory)
    if commit is None:
        return None
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=directory)
    return commit + ("-dirty" if dirty else "")


def speed_variables(environ, prefixes=()):
    prefixes = SPEED_VARIABLES + tuple(prefixes)
    return {k: v for k, v in sorted(environ.items()) if k.startswith(prefixes)}


def host(project_dir, worker_environ, prefixes=()):
    return {
        "hostname": platform.node(),
        "os": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": memory_bytes(),
        "gpus": [dict(zip(("name", "driver", "memory"), g)) for g in gpus()],
        "git_commit": git_commit(project_dir),
        "environment_variables": speed_variables(worker_environ, prefixes),
    }
