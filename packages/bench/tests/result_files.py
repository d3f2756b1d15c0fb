"""result.json files as benchmark.run_benchmark writes them, reduced to what reports read,
with known figures: the one factory the report's, the page's and the agreement's tests share.
Every figure follows from the measurements beside it (bench.run.evidence re-derives them
where results are read): a training run is two epochs of 25,000 examples, an inference run
1,000 images; `with_throughput` changes a training run's speed, measurements and figure
together."""

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
    stats, measured = {}, {}
    if status == "ok":
        stats = (
            {"train_seconds": seconds, "examples_per_second": 50000 / seconds}
            if kind == "train"
            else {"seconds_per_1000_images": seconds, "images_per_second": 1000 / seconds}
        )
        measured = measurements(task, kind, seconds)
    return {
        **measured,
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


def measurements(task, kind, seconds):
    """The raw measurements of a run whose figures make_result gives: training, two epochs of
    seconds / 2 over 500 batches of 50 (50,000 examples in `seconds`); inference, 1,000
    images in `seconds`."""
    if kind == "train":
        return {
            "timings": {"epoch": [seconds / 2, seconds / 2]},
            "batches_per_epoch": 500,
            "effective_task": {"name": task, "kind": "train", "batch_size": 50, "epochs": 2},
        }
    return {
        "timings": {"inference": [seconds]},
        "images": 1000,
        "effective_task": {
            "name": task,
            "kind": "inference",
            "batch_size": 50,
            "num_batches": 20,
        },
    }


def with_throughput(result, examples_per_second):
    """A training result (make_result's) run at `examples_per_second`: its epoch times and its
    figures together."""
    seconds = 50000 / examples_per_second
    result.update(measurements(result["config"]["task"]["name"], "train", seconds))
    result["stats"].update(train_seconds=seconds, examples_per_second=examples_per_second)
    return result
