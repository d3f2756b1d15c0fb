"""The framework contract and the run schema, written once.

A framework package -- ``bench_<fw>``, or a subpackage where one package serves several API
styles (``bench_mxnet.gluon``) -- is declared by ``conf/framework/<fw>.yaml`` (its name,
package, capabilities: tasks -- with `tasks_reason` where some are missing by nature, as an
inference runtime's training tasks, said when one is refused -- devices and precisions, with
`precisions_reason` saying why a precision is missing, and its typed options) and provides:

    setup(run) -> dict          apply the run's device, threads and options; what was applied
    versions() -> dict          the framework's and its libraries' versions
    sync()                      wait for queued device work (the stopwatch calls it)
    count_parameters(model)     trainable parameters in SPEC's convention
    tensors(model)              a bench_shared.slots.Tensors over the model's native tensors
    memory_stats()              device memory peaks, or None
    peak_flops(precision)       optional: measured dense matmul FLOP/s (untimed); None where
                                the framework has no matrix product at that precision

and one module per supported task, ``<package>.<task>``, with the same functions in the same
order in every framework (a reader can put two side by side):

    build_model(run) -> model   the model, its loss and optimiser, SPEC's initialisers
    slots(model)                neutral weight name -> bench_shared.slots.Slot
    train_epoch(model, batches) -> mean loss      (training tasks)
    predict(model, batches) -> numpy outputs      (float32, on the host)
    calibrate(model, batches) -> model            precision=int8 (inference tasks): the model
                                post-training quantized, its activation ranges calibrated on
                                `batches` of the task's images after its weights are loaded
                                (bench_shared.calibration times it apart, as "calibration")
    native_layout(x)            optional: the input layout it prefers (e.g. NHWC), applied
                                once at load time, never per batch
    train(model, epochs)        optional (training tasks): every epoch in one call, where
                                that is the framework's idiom (Keras' one fit), calling
                                epochs.begin(k) and epochs.end(k, loss) around epoch k, which
                                time and evaluate it as the worker's own loop does, and
                                stopping when end() returns True (bench_shared.worker.Epochs)

What the runtime does for every framework, so that no package repeats it: the capability
check before ``setup`` (``check_run``: the orchestrator has checked the same declaration before
starting the worker; packages raise only for facts found at run time, such as no CUDA device),
the option types (typed from the YAML by the orchestrator's config schema), loading, exporting
and the completeness check of weights (bench_shared.slots), batching and timing
(bench_shared.worker), and the conformance checks every framework must pass
(bench_shared.conformance). Adding a framework: its package, one YAML, one entry in the
noxfile's framework table.

run.json, the worker's input (``make_run`` builds one without the orchestrator, for tests):

    task        the task's hyperparameters after the preset (task_config's fields)
    seed, precision (PRECISIONS), device {name: "cpu" | "gpu", index}
    init        "native" (make_run's default: the task module's build_model draws SPEC's
                initialisers with the framework's own generator) or "neutral" (the worker
                loads bench_shared.weights.initial_weights(task, seed), drawn by NumPy, into
                the model through the weight protocol right after build_model; timed apart as
                timings["init"]) or "file" (the same, from the .npz in run["init_file"]:
                bench_shared.weights.starting_weights). Dropout masks stay each framework's
                own in every mode.
    framework   {name, package, options, option_choices, capabilities}
    data        {arrays: name -> .npy path, limits: train/test/images -> example count}
    devices     data-parallel devices of this run (task densenet; 1 elsewhere). With N > 1
                they are started as the framework declares (capabilities.data_parallel_launch,
                LAUNCHES below): N workers as torchrun starts them (RANK, WORLD_SIZE,
                LOCAL_RANK, MASTER_ADDR, MASTER_PORT, BENCH_WORKER_PORTS), N workers from
                mpiexec, or one worker driving N devices; bench_shared.distributed says which
                this worker is, and the package joins them in setup()
    cpus        (mpiexec's ranks on a CPU) the CPUs this worker pins itself to at its start
    mode        "benchmark" (default), "verify" (with ``verify``: weights, inputs, outputs,
                train_steps, train_batch_size) or "peak" (after setup, only the package's
                peak_flops at the run's precision); output: where the worker writes its result
"""

import copy

from . import spec

PACKAGE_FUNCTIONS = ("setup", "versions", "sync", "count_parameters", "tensors", "memory_stats")
TASK_FUNCTIONS = {
    "train": ("build_model", "slots", "train_epoch", "predict"),
    "inference": ("build_model", "slots", "predict"),
}
OPTIONAL = ("peak_flops", "native_layout", "calibrate", "train")
# every precision a framework may declare: fp32, mixed precision through the framework's own
# AMP (fp16, bf16), and int8 post-training quantization
PRECISIONS = ("fp32", "fp16", "bf16", "int8")
# post-training quantization: a trained model's weights and activations in int8, for inference
# only (a training task at one of these is refused before any declaration is read)
QUANTIZED = ("int8",)
# result.json's status: "invalid" is a run that finished but whose numbers cannot be trusted;
# "not_installed": its environment is not built here; "interrupted": a signal ended it
STATUSES = ("ok", "failed", "unsupported", "invalid", "not_installed", "interrupted")
RUN_FIELDS = ("task", "seed", "precision", "device", "framework", "data", "init", "devices")
# present only where they apply: a training run's target for its data source; init=file's file
OPTIONAL_RUN_FIELDS = ("quality_target", "init_file")
# run["init"]: where the initial weights come from; "file": run["init_file"], an .npz in the
# neutral layout (e.g. ImageNet weights converted to it), loaded like "neutral"'s
INITS = ("native", "neutral", "file")


# The test accuracy a training run must reach, as conf/task/<task>.yaml sets it (test_config
# checks that the two agree; the YAML's comments say where each figure comes from)
QUALITY_TARGETS = {
    "cnn": {"synthetic": 0.85, "real": 0.75},
    "rnn": {"synthetic": 0.85, "real": 0.85},
    "densenet": {"synthetic": 0.54, "real": 0.80},
}


def task_config(name):
    """SPEC's hyperparameters of a task, with the fields of the orchestrator's task schema."""
    if name not in spec.TASKS:
        raise ValueError("unknown task %r; known: %s" % (name, ", ".join(sorted(spec.TASKS))))
    s = spec.TASKS[name]
    if name == "resnet50":
        return {
            "name": name,
            "kind": s.kind,
            "dataset": s.dataset,
            "batch_size": s.batch_size,
            "num_batches": s.num_batches,
            "warmup_passes": s.warmup_passes,
            "description": "",
            "stop_at_target": False,  # an inference task's: nothing to stop
        }
    task = {
        "name": name,
        "kind": s.kind,
        "dataset": s.dataset,
        "batch_size": s.batch_size,
        "epochs": s.epochs,
        "description": "",
        "curve": True,
        "quality_target": dict(QUALITY_TARGETS[name]),
        "stop_at_target": False,
    }
    if name == "cnn":
        task["optimizer"] = {"name": "sgd", "lr": s.learning_rate, "momentum": s.momentum}
        task["dropout"] = True  # off for the equivalence checks (`verify`), never in a benchmark
    elif name == "densenet":
        # lr per device: a package scales it by the number of devices (SPEC: 1e-4 x devices)
        task["optimizer"] = {
            "name": "adam",
            "lr": s.learning_rate,
            "beta1": s.beta1,
            "beta2": s.beta2,
            "eps": s.epsilon,
        }
        task["image_size"] = s.input_shape[1]  # smaller only in tests: the same code path
        task["augment"] = True  # random crop + horizontal flip of the training batches
    else:
        task["optimizer"] = {
            "name": "adam",
            "lr": s.learning_rate,
            "beta1": s.beta1,
            "beta2": s.beta2,
            "eps": s.epsilon,
        }
    return task


def framework_section(declared):
    """run["framework"] from a framework's declaration (its YAML as plain data)."""
    caps = declared.get("capabilities") or {}
    return {
        "name": declared["name"],
        "package": declared["package"],
        "options": dict(declared.get("options") or {}),
        "option_choices": dict(declared.get("option_choices") or {}),
        "capabilities": {
            "tasks": list(caps.get("tasks", [])),
            "tasks_reason": caps.get("tasks_reason") or "",
            "precisions": dict(caps.get("precisions", {})),
            "precisions_reason": dict(caps.get("precisions_reason") or {}),
            "task_precisions": dict(caps.get("task_precisions") or {}),
            "data_parallel": dict(caps.get("data_parallel") or {}),
            "data_parallel_launch": dict(caps.get("data_parallel_launch") or {}),
            "data_parallel_reason": caps.get("data_parallel_reason") or "",
        },
    }


def make_run(
    declared,
    task,
    device="cpu",
    precision="fp32",
    seed=0,
    options=None,
    data=None,
    init="native",
    **task_fields,
):
    """A run dict as the orchestrator writes it, from a framework declaration (its YAML)."""
    if init not in INITS:
        raise ValueError("init=%r: choose one of %s" % (init, ", ".join(INITS)))
    run = {
        "task": task_config(task),
        "seed": seed,
        "precision": precision,
        "init": init,
        "device": {"name": device, "index": 0},
        "framework": framework_section(declared),
        "data": copy.deepcopy(data) if data else {"arrays": {}, "limits": {}},
        "devices": 1,
    }
    run["task"].update(task_fields)
    unknown = sorted(set(options or {}) - set(run["framework"]["options"]))
    if unknown:
        raise ValueError(
            "unknown %s options %s; known: %s"
            % (declared["name"], unknown, ", ".join(run["framework"]["options"]))
        )
    run["framework"]["options"].update(options or {})
    return run


def unsupported(capabilities, framework, task, device, precision):
    """None when the declaration covers the combination, else the reason, naming what is."""
    tasks, precisions = capabilities["tasks"], capabilities["precisions"]
    if task not in tasks:
        why = capabilities.get("tasks_reason")  # e.g. an inference runtime's
        return "task=%s is not supported by framework=%s%s; supported tasks: %s" % (
            task,
            framework,
            " (%s)" % why if why else "",
            ", ".join(tasks),
        )
    if precision not in PRECISIONS:
        return "precision=%s is not a precision; known: %s" % (precision, ", ".join(PRECISIONS))
    if precision in QUANTIZED and spec.TASKS[task].kind != "inference":
        return (
            "precision=%s quantizes a trained model for inference: task=%s trains; "
            "inference tasks: %s"
            % (
                precision,
                task,
                ", ".join(name for name, s in sorted(spec.TASKS.items()) if s.kind == "inference"),
            )
        )
    if device not in precisions:
        return "device=%s is not supported by framework=%s; supported devices: %s" % (
            device,
            framework,
            ", ".join(precisions),
        )
    if precision not in precisions[device]:
        why = (capabilities.get("precisions_reason") or {}).get(precision)
        return (
            "precision=%s is not supported by framework=%s on device=%s%s; supported "
            "there: %s"
            % (
                precision,
                framework,
                device,
                " (%s)" % why if why else "",
                ", ".join(precisions[device]),
            )
        )
    for_task = (capabilities.get("task_precisions") or {}).get(task, {}).get(device)
    if for_task is not None and precision not in for_task:
        return (
            "precision=%s is not supported by framework=%s for task=%s on device=%s; "
            "supported there: %s" % (precision, framework, task, device, ", ".join(for_task))
        )
    return None


# how a framework's N devices are started (capabilities.data_parallel_launch: device -> one):
#   processes    N workers, as torchrun starts them (bench_shared.distributed), one per device
#                (on a CPU: per share of the cores)
#   one_process  one worker driving the N devices itself (multi-context, MirroredStrategy)
#   mpiexec      N workers started by MPI's launcher (distributed learners over MPI)
LAUNCHES = ("processes", "one_process", "mpiexec")


def data_parallel_launch(capabilities, device):
    """How `devices=N` is started on `device` (see LAUNCHES); processes unless declared."""
    return (capabilities.get("data_parallel_launch") or {}).get(device, "processes")


def devices_problem(capabilities, framework, task, device, devices):
    """None when `devices` processes may run the combination, else (kind, reason): kind
    "config" for a device count no task takes or a launch no runtime knows, "unsupported" for
    a task that runs on one device (a combination refused like any other the framework or
    SPEC does not offer) or a framework that declares no data-parallel idiom on that device
    (capabilities.data_parallel: device -> idiom)."""
    if not isinstance(devices, int) or devices < 1:
        return "config", "devices=%r: the number of data-parallel devices, 1 or more" % devices
    if devices == 1:
        return None
    if not getattr(spec.TASKS[task], "data_parallel", False):
        return "unsupported", (
            "devices=%d: task=%s runs on one device (SPEC.md); the "
            "device-count axis is task=densenet's" % (devices, task)
        )
    idioms = capabilities.get("data_parallel") or {}
    if device not in idioms:
        why = capabilities.get("data_parallel_reason")  # e.g. a framework bug, with its link
        return "unsupported", (
            "devices=%d is not supported by framework=%s on device=%s: it declares no "
            "data-parallel training there%s%s"
            % (
                devices,
                framework,
                device,
                " (it does on: %s)" % ", ".join(sorted(idioms)) if idioms else "",
                " (%s)" % why if why else "",
            )
        )
    launch = data_parallel_launch(capabilities, device)
    if launch not in LAUNCHES:
        return "config", (
            "framework=%s declares data_parallel_launch %s=%r: choose one of %s"
            % (framework, device, launch, ", ".join(LAUNCHES))
        )
    return None


def option_problem(framework, options, choices):
    """None when every option with declared choices holds one of them, else the problem.
    (Names and types are checked by the orchestrator's typed config and by make_run.)"""
    for key, allowed in sorted((choices or {}).items()):
        if key in options and options[key] not in allowed:
            return (
                "framework.options.%s=%r is not an option value of framework=%s; "
                "choose one of %s"
                % (key, options[key], framework, ", ".join(repr(a) for a in allowed))
            )
    return None


def check_run(run):
    """Before the package's setup(): a malformed run is a ValueError, an undeclared
    combination a NotImplementedError (the worker's `unsupported`)."""
    missing = [key for key in RUN_FIELDS if key not in run]
    if missing:
        raise ValueError("run.json lacks %s" % ", ".join(missing))
    fw = run["framework"]
    if "capabilities" not in fw:
        raise ValueError("run.json's framework section has no capabilities")
    reason = unsupported(
        fw["capabilities"], fw["name"], run["task"]["name"], run["device"]["name"], run["precision"]
    )
    if reason:
        raise NotImplementedError(reason)
    problem = devices_problem(
        fw["capabilities"],
        fw["name"],
        run["task"]["name"],
        run["device"]["name"],
        run.get("devices", 1),
    )
    if problem:
        raise (NotImplementedError if problem[0] == "unsupported" else ValueError)(problem[1])
    problem = option_problem(fw["name"], fw["options"], fw.get("option_choices"))
    if problem:
        raise ValueError(problem)
    if run["init"] not in INITS:
        raise ValueError("run.json's init is %r; known: %s" % (run["init"], ", ".join(INITS)))
    if run["init"] == "file" and not run.get("init_file"):
        raise ValueError("init=file needs run.json's init_file: the .npz to start from")


def weight_protocol_missing(package, task_module):
    """What a package and its task module lack of the weight protocol (`tensors`, `slots`),
    which init=neutral and `verify` need; an empty list when nothing."""
    return [
        "%s.%s" % (package.__name__, name) for name in missing_functions(package, ["tensors"])
    ] + [
        "%s.%s" % (task_module.__name__, name) for name in missing_functions(task_module, ["slots"])
    ]


def hook(module, name):
    """An optional contract function of a package or task module, or None."""
    if name not in OPTIONAL:
        raise ValueError("%s is not an optional part of the contract" % name)
    return getattr(module, name, None)


def missing_functions(module, names):
    return [name for name in names if not callable(getattr(module, name, None))]
