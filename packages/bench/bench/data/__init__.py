"""Dataset preparation: the orchestrator prepares arrays once; workers memory-map them.

data=synthetic generates stand-ins of the preset's size; data=real prepares the full real
dataset once and lets the worker's limits take the first N examples a preset asks for.
"""

from bench_shared import spec

from ..errors import DataError
from . import cache, real, synthetic

FULL_SIZES = {
    "cifar10": (spec.CNN.train_examples, spec.CNN.test_examples),
    "imdb": (spec.RNN.train_examples, spec.RNN.test_examples),
    # ChestX-ray14's 112,120 images split 70/10/20 (validation unused here)
    "chestxray14": (
        int(112120 * spec.DenseNet121.split[0]),
        int(112120 * spec.DenseNet121.split[2]),
    ),
}
SOURCES = ("synthetic", "real")


def example_counts(task, preset, available=None):
    """(train, test) examples for a training task under a preset; available: the prepared
    (train, test) counts, SPEC's full sizes by default."""
    full_train, full_test = available or FULL_SIZES[task.dataset]
    return (
        min(preset.train_examples or full_train, full_train),
        min(preset.test_examples or full_test, full_test),
    )


def _result(entry, manifest, limits, **extra):
    return {
        "arrays": {key: str(entry / f"{key}.npy") for key in manifest["arrays"]},
        "limits": limits,
        "description": manifest["description"],
        "cache_entry": str(entry),
        **extra,
    }


def _images(task, data, preset):
    """ResNet-50's random input images, whatever the data source (timing does not depend
    on pixel values, and there is no real dataset for it): as many as the run uses (a preset's
    inference_batches, else the task's; SPEC's 1280 images are 770 MB)."""
    num_images = task.batch_size * (preset.inference_batches or task.num_batches)
    entry = (
        cache.cache_root(data.cache_dir)
        / "synthetic"
        / f"{task.dataset}-{synthetic.VERSION}-seed{data.seed}-{num_images}"
    )
    manifest = cache.prepared(
        entry,
        lambda: synthetic.images224(num_images, data.seed),
        f"synthetic {task.dataset} (seed {data.seed})",
        verify=data.verify,
        lock_timeout_s=data.lock_timeout_s,
    )
    extra = {"inputs": "random"}
    if data.name != "synthetic":
        extra["note"] = (
            f"data={data.name}: {task.name} has no real dataset; it runs on random "
            "images (its timing does not depend on pixel values)"
        )
    return _result(entry, manifest, {"images": num_images}, **extra)


def prepare(task, data, preset):
    """Arrays for the worker: {"arrays": {key: path}, "limits": {...}, "description": ...}."""
    if data.name not in SOURCES:
        raise DataError(f"data={data.name}: unknown dataset source; known: {', '.join(SOURCES)}")
    if task.kind != "train":
        return _images(task, data, preset)
    # ChestX-ray14's images are stored at the side the task's crop comes from, in proportion
    side = synthetic.stored_size(task.image_size) if task.dataset == "chestxray14" else None
    if data.name == "real":
        entry, manifest = real.prepare(task.name, task.dataset, data, side=side)
        available = (
            manifest["arrays"]["train_x"]["shape"][0],
            manifest["arrays"]["test_x"]["shape"][0],
        )
        num_train, num_test = example_counts(task, preset, available)
        return _result(
            entry, manifest, {"train": num_train, "test": num_test}, source=manifest.get("source")
        )
    num_train, num_test = example_counts(task, preset)
    name = f"{task.dataset}-{synthetic.VERSION}-seed{data.seed}-{num_train}-{num_test}"
    if side:
        name += f"-{side}px"

        def generator(num_train, num_test, seed):
            return synthetic.chestxray_like(num_train, num_test, seed, task.image_size)
    else:
        generator = {"cifar10": synthetic.cifar10, "imdb": synthetic.imdb_like}[task.dataset]
    entry = cache.cache_root(data.cache_dir) / "synthetic" / name
    manifest = cache.prepared(
        entry,
        lambda: generator(num_train, num_test, data.seed),
        f"synthetic {task.dataset} (seed {data.seed})",
        verify=data.verify,
        lock_timeout_s=data.lock_timeout_s,
    )
    return _result(entry, manifest, {"train": num_train, "test": num_test})
