"""The worker: runs one benchmark in the framework's own interpreter.

    python -m bench_shared.worker run.json

run.json (written by the orchestrator) names the framework package, the task, the device,
the precision, the effective hyperparameters and the prepared arrays. The worker memory-maps
the arrays, seeds, builds the batch order, calls the framework's task module under the
stopwatch and writes the raw result to run["output"]. Exit status: 0 ok, 1 failed,
3 unsupported. Statistics and reports are the orchestrator's job. What run.json holds and
what a framework package provides: bench_shared.contract.
"""

import importlib
import json
import os
import sys
import time
import traceback

import numpy as np

from . import (
    batching,
    calibration,
    contract,
    distributed,
    environment,
    jsonsafe,
    lifeline,
    progress,
    quality,
    reference_train,
    slots,
    spec,
    weights,
    xray,
)
from .timing import Stopwatch, process_age

EXIT_OK, EXIT_FAILED, EXIT_UNSUPPORTED = 0, 1, 3


def load_arrays(data):
    """Memory-map the prepared .npy files, limited to the preset's example counts."""
    arrays = {}
    for key, path in sorted(data["arrays"].items()):
        array = np.load(path, mmap_mode="r")
        limit = data["limits"].get(key.split("_")[0])
        arrays[key] = array[:limit] if limit else array
    return arrays


def native(task, x):
    """The task module's preferred input layout (e.g. NHWC), applied once, before timing."""
    layout = contract.hook(task, "native_layout")
    return layout(x) if layout else x


def initialise(run, fw, task, model, stopwatch, result):
    """init=neutral: SPEC's initial weights drawn by NumPy with the run's seed, loaded through
    the weight protocol in place of the framework's own draw; drawing and loading are timed
    together as timings["init"], apart from "build". init=file: the same from run["init_file"]
    (a missing output layer drawn as neutral's). init=native: nothing to do."""
    mode = run["init"]
    result["init"] = mode
    if mode == "native":
        return
    missing = contract.weight_protocol_missing(fw, task)
    if missing:
        raise ValueError(
            "init=%s loads weights through the weight protocol, which %s lacks "
            "(%s); run it with init=native, or give the package slots() and "
            "tensors() (bench_shared.slots)" % (mode, run["framework"]["name"], ", ".join(missing))
        )
    name = run["task"]["name"]
    with stopwatch.region("init"):
        if mode == "file":
            params, drawn = weights.starting_weights(run["init_file"], name, run["seed"])
            result["init_file"] = {"path": run["init_file"], "drawn": drawn}
        else:
            params = weights.initial_weights(name, run["seed"])
        slots.load_into(fw, task, name, model, params)


def image_transforms(cfg, seed, rank):
    """(epoch -> training batch transform, evaluation transform) of a task whose prepared
    images are not yet the model's input (densenet: bench_shared.xray), else (None, None)."""
    if cfg["name"] != "densenet":
        return None, None
    size = cfg["image_size"]
    if cfg.get("augment", True):

        def training(epoch):
            return xray.TrainingTransform(size, seed, epoch, rank)
    else:

        def training(epoch):
            return lambda images: xray.model_input(images, size)

    return training, (lambda images: xray.model_input(images, size))


class Epochs(object):
    """A run's epochs, timed and evaluated the same way whoever drives them.

    Iterating gives each epoch's batches (TrainBatches: the seeded order, complete batches).
    The driver calls begin(epoch) as an epoch starts (a device sync, then the clock) and
    end(epoch, loss) when its last step is done (a sync, the clock stops); end() records the
    epoch, evaluates the test set outside the timed window where a curve point is due, and
    returns True when training is to stop there (the quality target, with stop_at_target).
    The worker drives it epoch by epoch through the task's train_epoch(); a framework whose
    idiom trains every epoch in one call gives its task module train(model, epochs) and calls
    begin and end itself (Keras: one fit, a callback)."""

    def __init__(self, run, fw, task, model, arrays, stopwatch, result):
        self.run, self.fw, self.task, self.model = run, fw, task, model
        self.arrays, self.stopwatch, self.result = arrays, stopwatch, result
        self.cfg = run["task"]
        proc = distributed.process(run)
        self.rank, self.processes = proc["rank"], proc["processes"]
        # each process's share of a global batch: one device's, or all of them (one_process)
        self.batch_size = self.cfg["batch_size"] * proc["world_size"] // self.processes
        self.training_transform, self.eval_transform = image_transforms(
            self.cfg, run["seed"], self.rank
        )
        self.batches, self.started, self.trained, self.stopped = [], None, 0.0, False

    def __len__(self):
        return self.cfg["epochs"]

    def __iter__(self):
        for epoch in range(len(self)):
            if self.stopped:
                return
            yield self.batches_of(epoch)

    def batches_of(self, epoch):
        x, y = self.arrays["train_x"], self.arrays["train_y"]
        while len(self.batches) <= epoch:
            k = len(self.batches)
            total = batching.num_complete_batches(len(x), self.batch_size * self.processes)
            self.batches.append(
                batching.TrainBatches(
                    x,
                    y,
                    self.batch_size,
                    self.run["seed"],
                    k,
                    sync=self.fw.sync if k == 0 else None,
                    on_batch=progress.Throttle("train", total) if self.rank == 0 else None,
                    shard=(self.rank, self.processes),
                    transform=self.training_transform(k) if self.training_transform else None,
                )
            )
            if len(self.batches[k]) == 0:
                raise ValueError(
                    "%d training examples make no complete batch of %d"
                    % (len(x), self.batch_size * self.processes)
                )
        return self.batches[epoch]

    def begin(self, epoch):
        batches = self.batches_of(epoch)
        progress.emit(
            "phase",
            phase="train",
            epoch=epoch + 1,
            epochs=len(self),
            total=len(batches),
            unit="batch",
        )
        self.started = self.stopwatch.start()

    def end(self, epoch, loss):
        self.stopwatch.stop("epoch", self.started)
        seconds, batches, result = self.stopwatch.last("epoch"), self.batches[epoch], self.result
        if epoch == 0:  # a one-batch epoch has no second hand-over: its first step is the epoch
            end = batches.first_step_end
            result["timings"]["first_step"] = end - self.started if end else seconds
        self.trained += seconds
        result["losses"].append(float(loss))
        result["batch_seconds"].append(np.round(np.diff(batches.stamps), 6).tolist())
        progress.emit("phase_end", phase="train", seconds=seconds, loss=float(loss))
        last = epoch == len(self) - 1
        if self.rank != 0 or not (last or curve_point_due(self.run)):
            return False
        point = evaluate(self.task, self.model, self.arrays, self.cfg, self.eval_transform, result)
        point.update(epoch=epoch + 1, step=(epoch + 1) * len(batches), train_seconds=self.trained)
        result["curve"].append(point)
        target = self.run.get("quality_target")
        if (
            not last
            and self.cfg.get("stop_at_target")
            and target is not None
            and point["accuracy"] >= target
        ):
            result["stopped_at_target"] = epoch + 1  # the quality target: training ends
            self.stopped = True
        return self.stopped


def run_training(run, fw, task, arrays, stopwatch, result):
    with stopwatch.region("build"):
        model = task.build_model(run)
    initialise(run, fw, task, model, stopwatch, result)
    result["param_count"] = fw.count_parameters(model)
    result["losses"], result["batch_seconds"], result["curve"] = [], [], []
    result["distributed"] = distributed.process(run)
    epochs = Epochs(run, fw, task, model, arrays, stopwatch, result)
    train = contract.hook(task, "train")
    if train is not None:  # the framework's one call over every epoch
        train(model, epochs)
        if len(result["losses"]) != len(epochs) and not epochs.stopped:
            raise RuntimeError(
                "train() ended %d of %d epochs (begin/end per epoch)"
                % (len(result["losses"]), len(epochs))
            )
    else:
        for epoch, batches in enumerate(epochs):
            epochs.begin(epoch)
            epochs.end(epoch, task.train_epoch(model, batches))
    result["train_examples"] = len(arrays["train_x"])  # every rank's, when data-parallel
    result["batches_per_epoch"] = len(epochs.batches[0])
    return model


def curve_point_due(run):
    """Whether the test set is evaluated at this epoch's end (the last epoch's always is):
    with `curve` on, on one device. Data-parallel runs evaluate at the end only: rank 0 alone
    evaluating mid-run would meet the other ranks' collectives in their next epoch."""
    return bool(run["task"].get("curve", True)) and run.get("devices", 1) == 1


def evaluate(task, model, arrays, cfg, transform, result):
    """Untimed for the benchmark (its duration is recorded, summed over the evaluations), on
    rank 0 only: accuracy, or for multi-label tasks the mean ROC-AUC over the labels (with the
    per-label figures), and the test loss; the run's figures are its last evaluation's.
    Returns the curve point: {accuracy, loss, evaluation_seconds}."""
    test_x, test_y = arrays["test_x"], arrays["test_y"]
    progress.emit("phase", phase="evaluate", total=len(test_x), unit="example")
    start = time.perf_counter()
    logits = task.predict(model, batching.eval_batches(test_x, cfg["batch_size"], transform))
    seconds = time.perf_counter() - start
    result["timings"]["evaluation"] = result["timings"].get("evaluation", 0.0) + seconds
    s = spec.TASKS[cfg["name"]]
    labels = getattr(s, "num_labels", None)
    expected = (len(test_x), labels or s.num_classes)
    if logits.shape != expected:
        raise ValueError("predict returned shape %s, expected %s" % (logits.shape, expected))
    if labels:
        result["accuracy"], result["label_auc"] = quality.mean_roc_auc(logits, test_y)
        result["accuracy_metric"] = "mean_roc_auc"
        loss = quality.binary_cross_entropy(logits, test_y)
    else:
        result["accuracy"] = quality.accuracy(logits, test_y)
        result["accuracy_metric"] = "accuracy"
        loss = quality.softmax_cross_entropy(logits, test_y)
    result["test_examples"] = len(test_x)
    progress.emit("phase_end", phase="evaluate", accuracy=result["accuracy"])
    return {"accuracy": result["accuracy"], "loss": loss, "evaluation_seconds": seconds}


def run_inference(run, fw, task, arrays, stopwatch, result):
    cfg = run["task"]
    with stopwatch.region("build"):
        model = task.build_model(run)
    initialise(run, fw, task, model, stopwatch, result)
    result["param_count"] = fw.count_parameters(model)
    batches = batching.fixed_batches(arrays["images_x"], cfg["batch_size"], cfg["num_batches"])
    # a quantized precision: the fp32 features to agree with, then calibration, both untimed
    fp32 = calibration.fp32_reference(run, task, model, batches)
    model = calibration.calibrate(run, task, model, batches, stopwatch)
    for phase in ["warmup"] * cfg["warmup_passes"] + ["inference"]:
        progress.emit("phase", phase=phase, total=len(batches), unit="batch")
        with stopwatch.region(phase):
            features = task.predict(model, batches)
        progress.emit("phase_end", phase=phase, seconds=stopwatch.last(phase))
    expected = (len(batches) * cfg["batch_size"], spec.ResNet50.features)
    if features.shape != expected:
        raise ValueError("predict returned shape %s, expected %s" % (features.shape, expected))
    result["images"] = expected[0]
    result["features"] = {
        "mean": float(features.mean()),
        "std": float(features.std()),
        "finite": bool(np.isfinite(features).all()),
    }
    if fp32 is not None:
        result["agreement"] = calibration.run_agreement(features, fp32)
    return model


def run_verify(run, fw, task, arrays, stopwatch, result):
    """The equivalence check's side in the framework: load neutral weights, export them back,
    predict a fixed batch, then take training steps on a fixed batch order (dropout off)."""
    v, name = run["verify"], run["task"]["name"]
    params = weights.load(v["weights"], name)
    with stopwatch.region("build"):
        model = task.build_model(run)
    result["param_count"] = fw.count_parameters(model)
    slots.load_into(fw, task, name, model, params)
    exported = slots.export_from(fw, task, name, model)
    result["export_max_abs_diff"] = max(
        float(np.abs(np.asarray(exported[k], np.float64) - params[k]).max()) for k in params
    )
    if calibration.quantized(run):  # the int8 model, calibrated on verify's own images
        model = calibration.calibrate(
            run, task, model, [native(task, np.load(v["calibration"]))], stopwatch
        )
    outputs = task.predict(model, [native(task, np.load(v["inputs"]))])
    np.save(v["outputs"], np.asarray(outputs, np.float32))
    if v.get("train_steps") and run["task"]["kind"] == "train":
        batches = reference_train.fixed_batches(name, v["train_steps"], v["train_batch_size"])
        result["train_losses"] = [
            float(task.train_epoch(model, [(native(task, x), y)])) for x, y in batches
        ]
    return model


def measure_peak(run, fw, result):
    """mode "peak": the package's dense-matmul FLOP/s at the run's precision, nothing else
    (the host peak, bench.tools.peak); a package without the hook says so as `unsupported`."""
    peak_flops = contract.hook(fw, "peak_flops")
    if peak_flops is None:
        raise NotImplementedError(
            "%s has no peak_flops(precision) hook" % run["framework"]["package"]
        )
    result["peak_flops"] = peak_flops(run["precision"])
    result["status"] = "ok"
    return result


def peak_rss_bytes():
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def import_task(run):
    """The task module of a Python package: <package>.<task>."""
    return importlib.import_module(run["framework"]["package"] + "." + run["task"]["name"])


def execute(run, load_task=import_task):
    """Run one benchmark; `load_task(run)` gives the task module (build_model, slots,
    train_epoch, predict): the package's Python module, or an object of R functions from the R
    worker (packages/r/worker.R), which drives this same runtime through reticulate."""
    result = {
        "status": "failed",
        "timings": {},
        # where the worker's time went outside its timings (named alike for every framework)
        "phases": {},
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "pid": os.getpid(),
    }
    code = EXIT_FAILED
    if run.get("worker_started_age") is not None:
        result["phases"]["interpreter"] = run["worker_started_age"]
    try:
        np.random.seed(run["seed"])
        contract.check_run(run)  # what the framework declares, before its package loads
        start = time.perf_counter()
        fw = importlib.import_module(run["framework"]["package"])
        result["framework"] = {"versions": fw.versions()}
        result["framework"]["settings"] = fw.setup(run)
        result["phases"]["framework_import"] = time.perf_counter() - start
        if run.get("mode") == "peak":
            return measure_peak(run, fw, result), EXIT_OK
        start = time.perf_counter()
        task = load_task(run)
        result["phases"]["task_import"] = time.perf_counter() - start
        stopwatch = Stopwatch(fw.sync)
        start = time.perf_counter()
        arrays = load_arrays(run["data"])
        for key in ("train_x", "test_x", "images_x"):
            if key in arrays:
                arrays[key] = native(task, arrays[key])
        result["timings"]["data_load"] = time.perf_counter() - start
        if run.get("mode") == "verify":
            runner = run_verify
        else:
            runner = run_training if run["task"]["kind"] == "train" else run_inference
        runner(run, fw, task, arrays, stopwatch, result)
        result["timings"].update(stopwatch.regions)
        result["windows"] = stopwatch.windows  # when the timed regions ran (host watch)
        result["device_memory"] = fw.memory_stats()
        peak_flops = contract.hook(fw, "peak_flops")
        # optional, untimed, and only where the orchestrator has not kept it for this host,
        # framework and settings (run.json `measure_peak`); not beside data-parallel processes
        # (each holds a share of the cores: its peak is not the run's)
        if (
            peak_flops
            and run.get("measure_peak")
            and run.get("mode") != "verify"
            and run.get("devices", 1) == 1
        ):
            progress.emit(
                "phase",
                phase="matmul peak (once per host and settings)",
                total=1,
                unit="measurement",
            )
            start = time.perf_counter()
            result["peak_flops"] = peak_flops(run["precision"])
            result["timings"]["peak"] = time.perf_counter() - start
            progress.emit("phase_end", phase="peak", seconds=result["timings"]["peak"])
        result["status"] = "ok"
        code = EXIT_OK
    except NotImplementedError as exc:
        result["status"] = "unsupported"
        result["error"] = str(exc)
        code = EXIT_UNSUPPORTED
    except Exception as exc:  # a benchmark failure is a result, not a lost run
        result["error"] = "%s: %s" % (type(exc).__name__, exc)
        result["traceback"] = traceback.format_exc()
        traceback.print_exc()
    result["peak_rss_bytes"] = peak_rss_bytes()
    start = time.perf_counter()
    result["environment"] = environment.record()  # after the run: what it loaded
    result["phases"]["environment"] = time.perf_counter() - start
    return result, code


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(jsonsafe.finite(obj), f, indent=1, sort_keys=True, allow_nan=False)
    os.replace(tmp, path)


def pin(run):
    """A data-parallel rank that mpiexec started pins itself to its share of the cores (run.json
    `cpus`, from the orchestrator), before any framework sizes its thread pools by it."""
    if run.get("cpus") and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, run["cpus"])


def main(argv=None, load_task=import_task):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.stderr.write("usage: python -m bench_shared.worker run.json\n")
        return 2
    started = process_age()  # the interpreter's start and the runtime's imports
    with open(argv[0]) as f:
        run = json.load(f)
    run["worker_started_age"] = started
    lifeline.die_with(run.get("orchestrator_pid"))
    pin(run)
    result, code = execute(run, load_task)
    write_json_atomic(run["output"], result)
    return code


if __name__ == "__main__":
    sys.exit(main())
