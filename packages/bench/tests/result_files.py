"""result.json files as benchmark.run_benchmark writes them, reduced to what reports read,
with known figures: the one factory the report's, the page's and the agreement's tests share."""

P100, XEON = "Tesla P100-PCIE-16GB", "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"
DISPLAY = {
    "torch": "PyTorch",
    "tensorflow": "TensorFlow",
    "gluon": "MXNet (Gluon)",
    "keras": "Keras",
}


def make_result(
    framework,
    task,
    seconds=None,
    accuracy=None,
    status="ok",
    device="gpu",
    gpu=P100,
    precision="fp32",
    options=None,
    hostname="node1",
    seed=0,
):
    """One run's result: `seconds` a training run's (50,000 examples) or 1,000 images'; on a
    host with `gpu` (None: none)."""
    kind = "inference" if task == "resnet50" else "train"
    stats = {}
    if status == "ok":
        stats = (
            {"train_seconds": seconds, "examples_per_second": 50000 / seconds}
            if kind == "train"
            else {"seconds_per_1000_images": seconds, "images_per_second": 1000 / seconds}
        )
    return {
        "status": status,
        "config": {
            "task": {"name": task, "kind": kind, "batch_size": 64},
            "framework": {
                "name": framework,
                "display_name": DISPLAY[framework],
                "options": options or {"threads": 0},
                "python": None,
            },
            "device": {"name": device, "index": 0},
            "precision": {"name": precision},
            "preset": {"name": "full"},
            "data": {"name": "synthetic", "cache_dir": None},
            "seed": seed,
            "sweep": None,
            "redo": False,
        },
        "stats": stats,
        "accuracy": accuracy if status == "ok" else None,
        "error": "" if status == "ok" else f"{framework} {task}: {status} on purpose",
        "host": {
            "hostname": hostname,
            "os": "Linux-test",
            "cpu": XEON,
            "cpu_affinity": 8,
            "cpu_count": 40,
            "memory_bytes": 64 * 2**30,
            "gpus": [{"name": gpu, "driver": "550.54", "memory": "16384 MiB"}] if gpu else [],
            "git_commit": "abc123",
            "environment_variables": {"OMP_NUM_THREADS": "8"},
        },
        "framework": {"versions": {framework: "9.9"}, "settings": {"threads": 8}},
        "python": "3.11.7",
    }
