"""One benchmark run, from a composed config to result.json: plain functions, no Hydra."""

import dataclasses
import datetime
import os
import sys
import traceback
from pathlib import Path

from bench_shared import contract, weights

from .. import __version__, data, files, project_dir, signals
from ..errors import BenchError, ConfigError, EnvironmentNotFound, Interrupted, UnsupportedError
from . import (
    canary,
    capabilities,
    environments,
    host_files,
    hostwatch,
    launch,
    locks,
    phases,
    profiles,
    r_worker,
    record,
    sizes,
    slurm,
    summary,
    sysinfo,
    system,
    worker_env,
)
from .config import Config


def effective_task(cfg: Config):
    """The task's hyperparameters with the preset applied: what the worker runs."""
    task = dataclasses.asdict(cfg.task)
    if cfg.task.kind == "train" and cfg.preset.epochs:
        task["epochs"] = cfg.preset.epochs
    if cfg.task.kind == "inference" and cfg.preset.inference_batches:
        task["num_batches"] = cfg.preset.inference_batches
    return task


def worker_run(cfg: Config, prepared):
    """The run.json payload: everything the worker needs, nothing it must not know."""
    declared = {
        "name": cfg.framework.name,
        "package": cfg.framework.package,
        "options": dict(cfg.framework.options),
        "option_choices": dict(cfg.framework.option_choices),
        "capabilities": dataclasses.asdict(cfg.framework.capabilities),
    }
    run = contract.make_run(
        declared,
        cfg.task.name,
        device=cfg.device.name,
        precision=cfg.precision.name,
        seed=cfg.seed,
        init=cfg.init.name,
        data={"arrays": prepared["arrays"], "limits": prepared["limits"]},
    )
    run["task"], run["device"] = effective_task(cfg), dataclasses.asdict(cfg.device)
    run["devices"] = cfg.devices
    if cfg.task.kind == "train":  # the target of the run's data source (None: not declared)
        run["quality_target"] = cfg.task.quality_target.get(cfg.data.name)
    if cfg.framework.r_models:  # the R worker's task files: packages/r/<r_models>/
        run["framework"]["r_models"] = cfg.framework.r_models
    if cfg.init.name == "file":
        run["init_file"] = init_file(cfg)
    return run


def init_file(cfg: Config, read=False):
    """init=file's .npz, absolute (the worker starts elsewhere), or a ConfigError saying why.
    read: also read it as the worker will (bench_shared.weights.file_weights: names, declared
    shapes, finite values), so that a file the worker would refuse is refused up front."""
    if not cfg.init.path:
        raise ConfigError(
            "init=file starts from an .npz in the neutral weight layout: give "
            "init.path=/path/to/weights.npz (see the README's init=file)"
        )
    path = Path(cfg.init.path).expanduser().absolute()
    if not path.is_file():
        raise ConfigError(f"init.path={cfg.init.path}: no such file")
    if read:
        try:
            weights.file_weights(str(path), cfg.task.name)
        except ValueError as exc:
            raise ConfigError(f"init=file: {exc}") from None
    return str(path)


def run_benchmark(
    cfg: Config, config_dict, run_dir: Path, overrides=None, place=None, single_run=True
):
    """Check, prepare, run the worker, and write result.json; returns the result. place:
    where this process stands in Slurm (bench.run.slurm.place), asked here when not given.

    Whatever goes wrong here (a bad value, an unwritable directory, a full disk, a bug), the
    run leaves a result.json saying `failed` and why, where the disk allows. The result is
    assembled once (record.assemble), from what the run learned on its way and how it ended.
    single_run: the process ran this run alone (its start is the run's: phases.start)."""
    run_dir = Path(run_dir).absolute()
    place = place or slurm.place(cfg.devices)
    clock = phases.Clock(single_run)
    header = record.header(config_dict, overrides, started=_now(), bench_version=__version__)
    # what the run found out on its way: tuning, host, worker, data, node, and its phases so
    # far (the clock's, kept current: a run refused half-way records as far as it got)
    learned = {"phases": clock.found}

    def finish(ended):
        return _finish(record.assemble(header, learned, ended, finished=_now()), run_dir, place)

    try:
        return _run(cfg, run_dir, place, learned, finish, overrides, clock)
    except BenchError as exc:
        ended = {"status": exc.status, "error": str(exc)}
    except KeyboardInterrupt as exc:
        if getattr(exc, "recorded", False):  # while the workers ran: their result is written
            raise
        what = getattr(exc, "what", "Ctrl-C")
        finish(
            {
                "status": "interrupted",
                "interrupted": what,
                "error": f"interrupted ({what}) before the worker ran",
            }
        )
        raise
    except Exception as exc:  # an orchestrator bug or an OS error is this run's result
        ended = {
            "status": "failed",
            "error": _orchestrator_error(exc, cfg, run_dir),
            "traceback": traceback.format_exc(),
        }
    return finish(ended)


def _orchestrator_error(exc, cfg, run_dir):
    """The result's error for an exception of the orchestrator's: a path that cannot be
    written as a sentence naming it (and the option that moves it), anything else by its
    type and message."""
    problem = files.path_problem(exc) if isinstance(exc, OSError) else None
    if problem is None:
        return f"orchestrator error: {type(exc).__name__}: {exc}"
    path = Path(os.fsdecode(exc.filename)).absolute()
    cache = data.cache.cache_root(cfg.data.cache_dir)
    if path.is_relative_to(cache) or cache.is_relative_to(path):
        return (
            f"the data cache {cache} cannot be written: {problem}; data.cache_dir=DIR (or "
            f"BENCH_CACHE_DIR) puts it elsewhere"
        )
    if path.is_relative_to(run_dir) or run_dir.is_relative_to(path):
        return (
            f"the run's directory {run_dir} cannot be written: {problem}; hydra.run.dir=DIR "
            f"(a sweep: hydra.sweep.dir=DIR) puts it elsewhere"
        )
    return f"orchestrator error: {problem}"


def _run(cfg, run_dir, place, learned, finish, overrides, clock):
    """The run's steps in order, each once; `learned` collects what a result records even when
    a later step refuses the run; finish(how it ended) writes the result."""
    run_dir.mkdir(parents=True, exist_ok=True)
    no_profile = None
    if cfg.tuned:  # before anything reads the options or the environment
        try:
            learned["tuning"] = profiles.apply(cfg, overrides)
        except ConfigError as exc:
            no_profile = exc  # raised once the host is recorded: the result says where
    env = worker_env.worker_environment(cfg)
    learned["host"] = sysinfo.host_record(project_dir(), env, cfg.framework.speed_variables)
    if no_profile:
        raise no_profile
    sizes.check(cfg)
    if place.problem:
        raise ConfigError(place.problem)
    capabilities.check(cfg, place.layout)
    how = launch_of(cfg)
    if place.layout:  # a framework whose ranks cannot span nodes, before anything is prepared
        refused = slurm.refusal(cfg.framework, how, place.layout)
        if refused:
            raise UnsupportedError(refused)
    if cfg.init.name == "file":
        init_file(cfg, read=True)  # before preparing data that may take long
    check_system(cfg)
    python, found_by = environments.framework_python(cfg.framework)
    learned["worker"] = {
        "python": python,
        "found_by": found_by,
        "library_path": worker_env.library_path(cfg, python),
    }
    if cfg.framework.r_models:  # R's BLAS is global in the R worker's process: it moves speed
        learned["worker"]["r_blas"] = r_worker.blas(r_worker.rscript())
    env = worker_env.with_interpreter(cfg, env, python)
    clock.lap("checks")
    prepared = data.prepare(cfg.task, cfg.data, cfg.preset)
    clock.lap("prepare")
    learned["data"] = prepared
    sizes.check_batches(cfg, prepared)
    run = worker_run(cfg, prepared)
    # the framework's matmul peak: measured after the run unless kept for these settings
    lock_sha256 = (locks.marker(python) or {}).get("lock_sha256")
    run["measure_peak"] = host_files.load_framework_peak(cfg, lock_sha256) is None
    # from the workers' start to the written result, a signal (a second SIGTERM at a time
    # limit, Ctrl-C) is recorded and acted on once all is written, never in between
    with signals.deferred() as pending:
        raw, canary_times = watched(
            cfg,
            lambda: launch.start(workers_of(cfg, python, env, how, place.layout), run, run_dir),
            clock,
        )
        if place.layout:
            learned["node"] = {
                k: place.layout[k] for k in ("node", "nodes", "master_addr", "master_port")
            }
        result = finish(
            _node_end(raw)
            if place.secondary
            else _measured(cfg, raw, run, python, lock_sha256, canary_times, clock)
        )
    if pending or raw.get("interrupted"):
        interrupted = Interrupted(raw.get("interrupted") or pending.what)
        interrupted.recorded = True
        raise interrupted
    return result


def _measured(cfg, raw, run, python, lock_sha256, canary_times=None, clock=None):
    """How a run ended, from rank 0's raw result: validity, statistics, the host peak, the
    worker's environment against the lock that built it, and the host during its timed
    windows."""
    ended = dict(raw, effective_task=run["task"])
    ended.pop("host_samples", None)  # the samples' record is host_state, made below
    if run["task"]["kind"] == "train":
        ended["quality_target"] = run.get("quality_target")
    if "environment" in raw:
        ended["environment"] = dict(
            raw["environment"],
            **locks.compare(raw["environment"].get("distributions"), locks.marker(python)),
        )
    if raw.get("interrupted"):  # a signal ended it: no measurement, and a sweep retries it
        ended["status"] = "interrupted"
    invalid = record.invalid_reason(raw, run["task"])
    if invalid is None and raw["status"] == "ok" and raw["exit_code"] != 0:
        invalid = f"the worker reported ok but exited with status {raw['exit_code']}"
    if invalid:
        ended["status"], ended["error"] = "invalid", invalid
    if raw.get("peak_flops") and raw.get("status") == "ok":  # measured now: kept for the next
        host_files.store_framework_peak(cfg, raw["peak_flops"], _now(), lock_sha256)
    elif raw.get("status") == "ok" and cfg.devices == 1:
        kept = host_files.load_framework_peak(cfg, lock_sha256)
        if kept:  # the denominator of `utilisation`, from the run that measured it
            ended["peak_flops"] = kept["flops"]
            ended["peak_measured"] = kept["measured"]
    host_peak = host_files.load_peak(cfg.data.cache_dir, cfg.device.name, cfg.device.index)
    ended["host_peak"] = host_files.peak_record(host_peak, cfg.precision.name)
    ended["stats"] = record.derive(ended, run["task"], ended["host_peak"])
    if ended["status"] == "ok":
        ended["host_state"] = host_state(cfg, raw, canary_times)
    if clock is not None:
        ended["phases"] = phases.of(clock, raw)
    return ended


def _node_end(raw):
    """How node k > 0 of a multi-node run ended: its ranks' exits, no statistics (rank 0
    measures)."""
    status = "interrupted" if raw.get("interrupted") else raw["status"]
    raw.pop("host_samples", None)  # rank 0's node records the host state
    ended = {
        "status": status if status in ("ok", "interrupted") else "failed",
        "ranks": raw["ranks"],
        "exit_code": raw.get("exit_code"),
    }
    if raw.get("interrupted"):  # which signal, as rank 0's node records it
        ended["interrupted"] = raw["interrupted"]
    if raw.get("error"):
        ended["error"] = raw["error"]
    return ended


def check_system(cfg: Config):
    """What the run needs beyond its environment (the framework's `system`), before anything
    starts: EnvironmentNotFound with the line that installs it. An old CPython is the built
    environment's own interpreter: environment discovery speaks for it."""
    for name, scope in cfg.framework.system.items():
        if name.startswith("python") or (scope == "devices" and cfg.devices == 1):
            continue
        problem = system.missing(name)
        if problem:
            what = "" if scope == "always" else f" with devices={cfg.devices}"
            raise EnvironmentNotFound(
                f"framework={cfg.framework.name}{what} cannot start: {problem}"
            )


def launch_of(cfg: Config):
    """How the framework starts `devices` > 1 on the run's device (contract.LAUNCHES)."""
    return contract.data_parallel_launch(
        dataclasses.asdict(cfg.framework.capabilities), cfg.device.name
    )


def workers_of(cfg: Config, python, env, how, layout=None) -> launch.Workers:
    """How the run's workers start: `how` the framework declares for `devices` > 1
    (launch_of: contract.LAUNCHES), on a CPU each rank with its share of the usable CPUs,
    with `layout` a multi-node Slurm step."""
    data_parallel = cfg.devices > 1 and how != "one_process"
    return launch.Workers(
        python=python,
        timeout_s=cfg.preset.timeout_s,
        env=env,
        how=how,
        devices=cfg.devices,
        cpus=sysinfo.usable_cpus() if data_parallel and cfg.device.name == "cpu" else None,
        layout=layout,
        watch_interval_s=cfg.watch.interval_s if cfg.watch.enabled else None,
    )


def watched(cfg: Config, start, clock):
    """start() between the canary's two measurements (bench.run.canary): (its raw result,
    the canary's times before and after, or None where it is off); each timed on `clock`."""
    budget = canary_budget(cfg)
    if not (cfg.watch.enabled and budget > 0):
        raw = start()
        clock.lap("worker")
        return raw, None
    before = canary.measure(budget)
    clock.lap("canary")
    raw = start()
    clock.lap("worker")
    if raw.get("status") != "ok" or raw.get("interrupted"):
        return raw, None
    after = canary.measure(budget)
    clock.lap("canary")
    return raw, (before, after)


def canary_budget(cfg: Config):
    """The canary's budget each side: watch.canary_s where set, else the preset's."""
    return cfg.watch.canary_s if cfg.watch.canary_s is not None else cfg.preset.canary_s


def host_state(cfg: Config, raw, canary_times):
    """The result's host_state (bench.run.hostwatch.state) of an ok run."""
    judged = None
    if canary_times:
        try:
            judged = canary.judged(*canary_times, cfg.data.cache_dir, canary_budget(cfg))
        except OSError as exc:  # a cache it cannot write: the run is still measured
            print(f"bench: the canary's reference cannot be kept: {exc}", file=sys.stderr)
    if not cfg.watch.enabled:
        return {"watched": False, "why": "watch.enabled=false", "disturbed": False, "reasons": []}
    return hostwatch.state(
        raw.get("host_samples"), raw.get("windows"), judged, dataclasses.asdict(cfg.watch)
    )


def _now():
    """The time now as result.json records it: ISO 8601, UTC, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _finish(result, run_dir, place):
    """Write the result (result.json, or result.node<k>.json on node k > 0 of a multi-node
    run) and say so: the summary line, or on node k a line of its ranks."""
    name = place.result_name
    try:
        record.write(run_dir / name, result)
        written = True
    except OSError as exc:  # a full disk or a lost directory: say so, the run is still over
        result.setdefault("error", f"{name} could not be written: {exc}")
        print(f"bench: could not write {run_dir / name}: {exc}", file=sys.stderr, flush=True)
        written = False
    if place.secondary and "ranks" in result:
        node, ranks = result["node"], result["ranks"]
        print(
            f"node {node['node']} of {node['nodes']}: ranks {ranks[0]['rank']}.."
            f"{ranks[-1]['rank']} {result['status']}"
            + (f": {result['error']}" if result.get("error") else ""),
            flush=True,
        )
    else:
        print(summary.summary_line(result), flush=True)
    if written:
        print(f"result: {run_dir / name}", flush=True)
    return result
