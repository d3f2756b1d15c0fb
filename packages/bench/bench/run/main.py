"""The Hydra application behind `python -m bench [overrides]`: Hydra turns the command line
into typed configs, and each job (one run, or each job of a `-m` sweep) is handed to
bench.run.benchmark. bench.cli calls `main()` and turns the statuses into an exit status."""
import atexit
import difflib
import logging
import os
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from .. import conf_dir, signals
from . import benchmark, config, rundirs, slurm, sweep  # noqa: F401 (rundirs, sweep: their resolvers)
from .config import register

statuses = []  # one per job of this process (a multirun with the basic launcher runs them all)
sweep_dirs = []  # the multirun's directory, once a job of this process knows it


def _job(cfg: DictConfig) -> str:
    signals.install()  # here, not only in main(): a submitit job starts with this function
    hydra_cfg = HydraConfig.get()
    if "submitit" not in str(OmegaConf.select(hydra_cfg, "launcher._target_") or ""):
        return _run_job(cfg, hydra_cfg)
    # A submitit job: its process runs this function alone, and Slurm sees it only through its
    # exit status. An interruption (scancel, a time limit, submitit's warning signal before
    # it) is recorded in result.json by then: it becomes the returned status, so that submitit
    # stores it and the sweep's launching process goes on to the summary instead of waiting for
    # a result that never comes (or failing the whole sweep on it).
    try:
        try:
            status, code = _run_job(cfg, hydra_cfg), 1
        finally:
            signals.ignore()  # recorded; Slurm's second SIGTERM must not cut submitit's pickling
    except KeyboardInterrupt as exc:  # bench.errors.Interrupted
        status, code = "interrupted", getattr(exc, "exit_status", 130)
        statuses.append(status)
    if status not in sweep.DONE:  # a run the sweep runs again: the job fails (sacct: FAILED)
        _exit_status_at_exit(code)
    return status


def _exit_status_at_exit(code):
    """Make this process exit with `code` once submitit has stored the job's return value:
    it exits 0 whenever the function returns, and an exit handler can change that only by
    ending the process itself (what it leaves to the other handlers is done first)."""
    def end():
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)

    atexit.register(end)


def _run_job(cfg: DictConfig, hydra_cfg) -> str:
    run_dir = Path(hydra_cfg.runtime.output_dir)
    config = OmegaConf.to_container(cfg, resolve=True)
    if hydra_cfg.mode == RunMode.RUN:
        problem = _claim(run_dir, cfg.devices, hydra_cfg)
        if problem:  # no result: the directory's files are another run's
            print(f"bench: {problem}", file=sys.stderr, flush=True)
            statuses.append("failed")
            return "failed"
    overrides = list(hydra_cfg.overrides.task)  # in full: a job's directory name may be cut
    if hydra_cfg.mode == RunMode.MULTIRUN:
        sweep_dirs[:] = [Path(hydra_cfg.sweep.dir)]
        sweep.progress.job(hydra_cfg.job.num, overrides)
        result = sweep.finished_result(run_dir, config, cfg.redo)
        if result is not None:
            print(f"result: {run_dir / 'result.json'}", flush=True)
            statuses.append(result["status"])
            sweep.progress.done()
            return result["status"]
    result = benchmark.run_benchmark(OmegaConf.to_object(cfg), config, run_dir, overrides)
    statuses.append(result["status"])
    sweep.progress.done()
    return result["status"]


def _claim(run_dir, devices, hydra_cfg):
    """Make run_dir this run's, or say why it cannot be (None: it is). A sweep's job
    directories are reused on purpose (resuming) and never claimed."""
    tasks = slurm.step_tasks()[0]
    if tasks > 1 and devices > 1:  # the tasks of an srun step: one run, one directory
        if not any(o.startswith("hydra.run.dir=") for o in hydra_cfg.overrides.hydra):
            return (f"a run across {tasks} Slurm tasks writes one directory from every task: "
                    f"give hydra.run.dir=<a directory on a shared file system>")
        return slurm.claim_run_dir(run_dir)
    if not rundirs.first_run_in(run_dir):
        return (f"{run_dir} already holds another run; a run never reuses a directory "
                f"(choose another hydra.run.dir)")
    return None


def main():
    """Run Hydra's application on sys.argv; KeyboardInterrupt (bench.errors.Interrupted) and
    Hydra's own errors reach the caller."""
    register()
    signals.install()
    hydra.main(version_base="1.3", config_path=str(conf_dir()), config_name="config")(_job)()


def check_additions(argv):
    """`+key=value` adds a key only where the schema has an open mapping (framework.env, a
    capability's device map, ...): Hydra would add a misspelt key anywhere and the run would
    ignore it (`+precison=bf16` runs at fp32). ValueError naming the keys that exist."""
    overrides = [a for a in argv if "=" in a and not a.startswith("-")
                 and not a.lstrip("+~").startswith("hydra")]
    additions = [a for a in overrides if a.startswith("+")]
    if not additions:
        return
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise ValueError(str(exc)) from None
    groups = {p.name for p in config.conf_dir().iterdir() if p.is_dir()}
    base = []  # one combination of the others: the node each addition goes into
    for text, override in zip(overrides, parsed):
        if text.startswith("+"):
            continue
        if override.is_sweep_override() and override.is_discrete_sweep():
            text = f"{override.get_key_element()}={next(override.sweep_string_iterator())}"
        base.append(text)
    cfg = config.compose(base, typed=False)
    for text in additions:
        key = text.lstrip("+").split("=", 1)[0]
        if key in groups:  # a config group chosen that the defaults leave out
            continue
        parent, _, leaf = key.rpartition(".")
        node = OmegaConf.select(cfg, parent) if parent else cfg
        if not isinstance(node, DictConfig):
            raise ValueError(f"{text}: {parent or 'the config'} has no key {leaf!r} to add to")
        kind = OmegaConf.get_type(node)
        if kind not in (dict, None) and leaf not in node:
            known = [str(k) for k in node.keys()]
            close = difflib.get_close_matches(leaf, known, n=1)
            where = f"{parent}." if parent else ""
            raise ValueError(f"{text}: {where}{leaf} is not a key of the config"
                             + (f"; did you mean {where}{close[0]}?" if close else "")
                             + f" (keys of {parent or 'the config'}: {', '.join(known)})")
