"""The host's side of the environment record (the worker adds the framework's side), and the
key under which per-host files (tuning profiles, the host peak) are kept."""

import functools
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

# variables that change speed in any framework: thread pools, BLAS, allocators, device masks;
# each framework adds its own prefixes (`speed_variables` in conf/framework/<fw>.yaml)
SPEED_VARIABLES = (
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "KMP_",
    "XLA_",
    "CUDA_",
    "CUDNN_",
    "CUPY_",
    "DNNL_",
    "ONEDNN_",
    "NCCL_",
    "LD_PRELOAD",
    "MALLOC_",
    "NUMEXPR_",
    "VECLIB_",
)


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
    out = _run(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]
    )
    return [
        tuple(part.strip() for part in line.split(","))
        for line in (out or "").splitlines()
        if line.strip()
    ]


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# CPU features that decide which kernels the libraries take (AVX-512, bf16 dot products, AMX
# tiles): two hosts that differ in one of them may want different settings
KEY_FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")


def cpu_flags():
    """The KEY_FLAGS this CPU has, from /proc/cpuinfo (none where it cannot be read)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                present = set(line.split(":", 1)[1].split())
                return [flag for flag in KEY_FLAGS if flag in present]
    except OSError:
        pass
    return []


def cpu_affinity():
    return len(usable_cpus())


def usable_cpus():
    """The CPUs this process may run on, sorted (all of them where the OS cannot say)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def host_key(device="cpu", index=0):
    """What a tuning profile or a host peak is valid for: the GPU model on device=gpu, else the
    CPU model, its KEY_FLAGS and the CPUs this process may use."""
    if device == "gpu":
        found = gpus()
        return {"device": "gpu", "gpu": found[index][0] if index < len(found) else "GPU"}
    return {"device": "cpu", "cpu": cpu_model(), "flags": cpu_flags(), "cpus": cpu_affinity()}


def host_slug(key):
    """A host key as one readable directory name, e.g.
    cpu-amd-epyc-9r14-avx2-avx512f-avx512_bf16-2cpus-1a2b3c4d."""
    name = key.get("gpu") or key.get("cpu") or "host"
    parts = [
        key["device"],
        *re.sub(r"\((r|tm)\)|\bcpu\b|@.*$", "", name.lower()).split(),
        *key.get("flags", []),
        *([f"{key['cpus']}cpus"] if key.get("cpus") else []),
    ]
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:8]
    return re.sub(r"[^\w.-]+", "-", "-".join(parts + [digest]))


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


def has_commit(directory, commit):
    """Whether the git repository at `directory` holds `commit` (a result's, `-dirty` or not)."""
    name = commit.removesuffix("-dirty")
    return _run(["git", "cat-file", "-e", f"{name}^{{commit}}"], cwd=directory) is not None


def speed_variables(environ, prefixes=()):
    prefixes = SPEED_VARIABLES + tuple(prefixes)
    return {k: v for k, v in sorted(environ.items()) if k.startswith(prefixes)}


def host_record(project_dir, worker_environ, prefixes=()):
    return {
        "hostname": platform.node(),
        "os": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": cpu_affinity() if hasattr(os, "sched_getaffinity") else None,
        "cpu_flags": cpu_flags(),
        "memory_bytes": memory_bytes(),
        "gpus": [dict(zip(("name", "driver", "memory"), g)) for g in gpus()],
        "git_commit": git_commit(project_dir),
        "environment_variables": speed_variables(worker_environ, prefixes),
    }
