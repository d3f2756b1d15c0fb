"""One benchmark run, from a composed config to result.json: plain functions, no Hydra."""
import dataclasses
import datetime
import platform
import sys
import traceback
from pathlib import Path

from bench_shared import contract, weights

from .. import __version__, data, project_dir, signals
from ..errors import BenchError, ConfigError, EnvironmentNotFound, Interrupted, UnsupportedError
from . import (
    capabilities,
    environments,
    host_files,
    launch,
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
    declared = {"name": cfg.framework.name, "package": cfg.framework.package,
                "options": dict(cfg.framework.options),
                "option_choices": dict(cfg.framework.option_choices),
                "capabilities": dataclasses.asdict(cfg.framework.capabilities)}
    run = contract.make_run(declared, cfg.task.name, device=cfg.device.name,
                            precision=cfg.precision.name, seed=cfg.seed, init=cfg.init.name,
                            data={"arrays": prepared["arrays"], "limits": prepared["limits"]})
    run["task"], run["device"] = effective_task(cfg), dataclasses.asdict(cfg.device)
    run["devices"] = cfg.devices
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
        raise ConfigError("init=file starts from an .npz in the neutral weight layout: give "
                          "init.path=/path/to/weights.npz (see the README's init=file)")
    path = Path(cfg.init.path).expanduser().absolute()
    if not path.is_file():
        raise ConfigError(f"init.path={cfg.init.path}: no such file")
    if read:
        try:
            weights.file_weights(str(path), cfg.task.name)
        except ValueError as exc:
            raise ConfigError(f"init=file: {exc}") from None
    return str(path)


def run_benchmark(cfg: Config, config_dict, run_dir: Path, overrides=None):
    """Check, prepare, run the worker, and write result.json; returns the result.

    Whatever goes wrong here (a bad value, an unwritable directory, a full disk, a bug), the
    run leaves a result.json saying `failed` and why, where the disk allows."""
    run_dir = Path(run_dir).absolute()
    name = slurm.result_name(cfg.devices)  # result.node<k>.json: node k of a multi-node run
    result = {"schema_version": record.SCHEMA_VERSION, "config": config_dict,
              "status": "failed", "started": _now(), "bench_version": __version__,
              "orchestrator": {"python": sys.version.split()[0],
                               "executable": sys.executable,
                               "platform": platform.platform()}}
    if overrides is not None:
        result["overrides"] = overrides
    try:
        return _run(cfg, run_dir, result)
    except BenchError as exc:
        result["status"] = exc.status
        result["error"] = str(exc)
    except KeyboardInterrupt as exc:
        if getattr(exc, "recorded", False):  # while the workers ran: their result is written
            raise
        what = getattr(exc, "what", "Ctrl-C")
        result.update(status="interrupted", interrupted=what,
                      error=f"interrupted ({what}) before the worker ran")
        _finish(result, run_dir, name)
        raise
    except Exception as exc:  # an orchestrator bug or an OS error is this run's result
        result["status"] = "failed"
        result["error"] = f"orchestrator error: {type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    return _finish(result, run_dir, name)


def _run(cfg, run_dir, result):
    run_dir.mkdir(parents=True, exist_ok=True)
    no_profile = None
    if cfg.tuned:  # before anything reads the options or the environment
        try:
            result["tuning"] = profiles.apply(cfg, result.get("overrides"))
        except ConfigError as exc:
            no_profile = exc  # raised once the host is recorded: the result says where
    env = worker_env.worker_environment(cfg)
    result["host"] = sysinfo.host_record(project_dir(), env, cfg.framework.speed_variables)
    if no_profile:
        raise no_profile
    sizes.check(cfg)
    layout = slurm.node_layout(cfg.devices)  # a multi-node Slurm step: this node's ranks
    capabilities.check(cfg, layout)
    if layout:  # a framework whose ranks cannot span nodes, before anything is prepared
        refused = slurm.refusal(cfg.framework, launch_of(cfg), layout)
        if refused:
            raise UnsupportedError(refused)
    if cfg.init.name == "file":
        init_file(cfg, read=True)  # before preparing data that may take long
    check_system(cfg)
    python, found_by = environments.find_python(cfg.framework)
    result["worker"] = {"python": python, "found_by": found_by,
                        "library_path": worker_env.library_path(cfg, python)}
    if cfg.framework.r_models:  # R's BLAS is global in the R worker's process: it moves speed
        result["worker"]["r_blas"] = r_worker.blas(r_worker.rscript())
    env = worker_env.worker_environment(cfg, python)
    prepared = data.prepare(cfg.task, cfg.data, cfg.preset)
    result["data"] = prepared
    sizes.check_batches(cfg, prepared)
    run = worker_run(cfg, prepared)
    # from the workers' start to the written result, a signal (a second SIGTERM at a time
    # limit, Ctrl-C) is recorded and acted on once all is written, never in between
    with signals.deferred() as pending:
        raw = start_workers(cfg, python, run, run_dir, env, layout)
        if layout:
            result["node"] = {k: layout[k] for k in ("node", "nodes", "master_addr",
                                                     "master_port")}
        if layout and layout["node"] > 0:
            _finish_node(result, raw, run_dir)
        else:
            _record(cfg, result, raw, run)
            _finish(result, run_dir)
    if pending or raw.get("interrupted"):
        interrupted = Interrupted(raw.get("interrupted") or pending.what)
        interrupted.recorded = True
        raise interrupted
    return result


def _record(cfg, result, raw, run):
    """Rank 0's raw result as the run's result: validity, statistics, the host peak."""
    result.update(raw)
    result["effective_task"] = run["task"]
    if raw.get("interrupted"):  # a signal ended it: no measurement, and a sweep retries it
        result["status"] = "interrupted"
    invalid = record.invalid_reason(raw, run["task"])
    if invalid is None and raw["status"] == "ok" and raw["exit_code"] != 0:
        invalid = f"the worker reported ok but exited with status {raw['exit_code']}"
    if invalid:
        result["status"], result["error"] = "invalid", invalid
    host_peak = host_files.load_peak(cfg.data.cache_dir, cfg.device.name, cfg.device.index)
    result["host_peak"] = host_files.peak_record(host_peak, cfg.precision.name)
    result["stats"] = record.derive(result, run["task"], result["host_peak"])


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
                f"framework={cfg.framework.name}{what} cannot start: {problem}")


def launch_of(cfg: Config):
    """How the framework starts `devices` > 1 on the run's device (contract.LAUNCHES)."""
    return contract.data_parallel_launch(dataclasses.asdict(cfg.framework.capabilities),
                                         cfg.device.name)


def start_workers(cfg: Config, python, run, run_dir, env, layout=None):
    """The worker(s) of a run, started as the framework declares for `devices` > 1
    (contract.LAUNCHES); rank 0's raw result (with `layout`, a multi-node Slurm step: this
    node's first rank's)."""
    how = launch_of(cfg)
    if cfg.devices == 1 or how == "one_process":  # one worker (driving every device)
        return launch.run_worker(python, run, run_dir, cfg.preset.timeout_s, env)
    cpus = sysinfo.usable_cpus() if cfg.device.name == "cpu" else None  # a share per rank
    if how == "processes":
        return launch.run_data_parallel(python, run, run_dir, cfg.preset.timeout_s, env,
                                        cfg.devices, cpus, layout)
    return launch.run_mpiexec(python, run, run_dir, cfg.preset.timeout_s, env, cfg.devices,
                              cpus)


def _finish_node(result, raw, run_dir):
    """Node k > 0 of a multi-node run: its ranks' exits, no statistics (rank 0 measures)."""
    node = result["node"]
    status = "interrupted" if raw.get("interrupted") else raw["status"]
    result.update(status="ok" if status == "ok" else status if status == "interrupted"
                  else "failed", ranks=raw["ranks"], exit_code=raw.get("exit_code"))
    if raw.get("interrupted"):  # which signal, as rank 0's node records it
        result["interrupted"] = raw["interrupted"]
    if raw.get("error"):
        result["error"] = raw["error"]
    first, last = raw["ranks"][0]["rank"], raw["ranks"][-1]["rank"]
    print(f"node {node['node']} of {node['nodes']}: ranks {first}..{last} {result['status']}"
          + (f": {result['error']}" if result.get("error") else ""), flush=True)
    return _finish(result, run_dir, slurm.result_name(int(result["config"]["devices"])),
                   one_line=False)


def _now():
    """The time now as result.json records it: ISO 8601, UTC, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _finish(result, run_dir, name="result.json", one_line=True):
    result["finished"] = _now()
    try:
        record.write(run_dir / name, result)
        written = True
    except OSError as exc:  # a full disk or a lost directory: say so, the run is still over
        result.setdefault("error", f"{name} could not be written: {exc}")
        print(f"bench: could not write {run_dir / name}: {exc}", file=sys.stderr, flush=True)
        written = False
    if one_line:
        print(summary.summary_line(result), flush=True)
    if written:
        print(f"result: {run_dir / name}", flush=True)
    return result
