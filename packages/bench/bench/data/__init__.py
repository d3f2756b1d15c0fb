"""Dataset preparation: the orchestrator prepares arrays once; workers memory-map them."""
from bench_shared import spec

from . import cache, synthetic

FULL_SIZES = {"cifar10": (spec.CNN.train_examples, spec.CNN.test_examples),
              "imdb": (spec.RNN.train_examples, spec.RNN.test_examples)}


def example_counts(task, preset):
    """(train, test) examples for a training task under a preset."""
    full_train, full_test = FULL_SIZES[task.dataset]
    return (min(preset.train_examples or full_train, full_train),
            min(preset.test_examples or full_test, full_test))


def prepare(task, data, preset):
    """Arrays for the worker: {"arrays": {key: path}, "limits": {...}, "description": ...}."""
    if data.name != "synthetic":
        raise ValueError(f"data={data.name}: unknown dataset source; known: synthetic")
    root = cache.cache_root(data.cache_dir) / "synthetic"
    if task.kind == "train":
        num_train, num_test = example_counts(task, preset)
        generator = {"cifar10": synthetic.cifar10, "imdb": synthetic.imdb_like}[task.dataset]
        name = f"{task.dataset}-v1-seed{data.seed}-{num_train}-{num_test}"
        build = lambda: generator(num_train, num_test, data.seed)  # noqa: E731
        limits = {"train": num_train, "test": num_test}
    else:
        num_images = task.batch_size * task.num_batches
        name = f"{task.dataset}-v1-seed{data.seed}-{num_images}"
        build = lambda: synthetic.images224(num_images, data.seed)  # noqa: E731
        limits = {"images": num_images}
    entry = root / name
    manifest = cache.prepared(entry, build, f"synthetic {task.dataset} (seed {data.seed})")
    return {"arrays": {key: str(entry / f"{key}.npy") for key in manifest["arrays"]},
            "limits": limits, "description": manifest["description"], "cache_entry": str(entry)}
