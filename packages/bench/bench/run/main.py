"""The Hydra application behind `python -m bench [overrides]`: Hydra turns the command line
into typed configs, and each job (one run, or each job of a `-m` sweep) is handed to
bench.run.benchmark. `main(argv, outcome)` returns what happened to bench.cli as an Outcome:
no module global carries it."""

import atexit
import dataclasses
import logging
import os
import sys
from pathlib import Path
from typing import Callable, Optional

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from .. import conf_dir, signals
from . import benchmark, config, hydra_hooks, rundirs, slurm, sweep

FULL_ERROR = "HYDRA_FULL_ERROR"  # set: Hydra raises the errors it would print


@dataclasses.dataclass
class Outcome:
    """What one `python -m bench [overrides]` did: the statuses of the jobs this process ran
    and, for a multirun, its directory and the statuses of every result in it (a submitit
    sweep's jobs run in other processes), as on_sweep_end(directory, wall seconds) returned
    them (bench.report.sweep_summary.summarise, handed in by the command line)."""

    on_sweep_end: Optional[Callable] = None
    statuses: list = dataclasses.field(default_factory=list)
    sweep_dir: Optional[Path] = None
    sweep_statuses: Optional[list] = None
    jobs: sweep.JobCounter = dataclasses.field(default_factory=sweep.JobCounter)

    def sweep_started(self, directory, total):
        self.sweep_dir = directory
        self.jobs.start(total)

    def sweep_ended(self):
        if self.on_sweep_end is not None:
            self.sweep_statuses = self.on_sweep_end(self.sweep_dir, self.jobs.wall())

    @property
    def final_statuses(self):
        """Every result of the sweep where there was one, else this process's jobs'."""
        return self.sweep_statuses if self.sweep_statuses is not None else self.statuses


class Job:
    """Hydra's task function: one job, recorded in the Outcome. Submitit pickles it with every
    job; unpickled in the job's own process, it sets that process up as main() does (Hydra's
    hooks, the signal handlers) before Hydra resolves the job's directory, and records into an
    Outcome of that process."""

    def __init__(self, outcome):
        self.outcome = outcome

    def __getstate__(self):
        return {}

    def __setstate__(self, state):
        hydra_hooks.install()
        signals.install()
        self.outcome = Outcome()

    def __call__(self, cfg: DictConfig) -> str:
        hydra_cfg = HydraConfig.get()
        if "submitit" not in str(OmegaConf.select(hydra_cfg, "launcher._target_") or ""):
            return _run_job(cfg, hydra_cfg, self.outcome)
        return _submitit_job(cfg, hydra_cfg, self.outcome)


def _submitit_job(cfg, hydra_cfg, outcome):
    """A submitit job: its process runs this function alone, and Slurm sees it only through its
    exit status. An interruption (scancel, a time limit, submitit's warning signal before
    it) is recorded in result.json by then: it becomes the returned status, so that submitit
    stores it and the sweep's launching process goes on to the summary instead of waiting for
    a result that never comes (or failing the whole sweep on it)."""
    try:
        try:
            status, code = _run_job(cfg, hydra_cfg, outcome), 1
        finally:
            signals.ignore()  # recorded; Slurm's second SIGTERM must not cut submitit's pickling
    except KeyboardInterrupt as exc:  # bench.errors.Interrupted
        status, code = "interrupted", getattr(exc, "exit_status", 130)
        outcome.statuses.append(status)
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


def _run_job(cfg: DictConfig, hydra_cfg, outcome) -> str:
    run_dir = Path(hydra_cfg.runtime.output_dir)
    config = OmegaConf.to_container(cfg, resolve=True)
    place = slurm.place(cfg.devices)  # asked once: the run reads the answer
    if hydra_cfg.mode == RunMode.RUN:
        problem = _claim(run_dir, place, hydra_cfg)
        if problem:  # no result: the directory's files are another run's
            print(f"bench: {problem}", file=sys.stderr, flush=True)
            outcome.statuses.append("failed")
            return "failed"
    overrides = list(hydra_cfg.overrides.task)  # in full: a job's directory name may be cut
    if hydra_cfg.mode == RunMode.MULTIRUN:
        outcome.jobs.job(hydra_cfg.job.num, overrides)
        result = sweep.finished_result(run_dir, config, cfg.redo)
        if result is not None:
            print(f"result: {run_dir / 'result.json'}", flush=True)
            outcome.statuses.append(result["status"])
            outcome.jobs.done()
            return result["status"]
    result = benchmark.run_benchmark(
        OmegaConf.to_object(cfg),
        config,
        run_dir,
        overrides,
        place,
        single_run=hydra_cfg.mode == RunMode.RUN,
    )
    outcome.statuses.append(result["status"])
    outcome.jobs.done()
    return result["status"]


def _claim(run_dir, place, hydra_cfg):
    """Make run_dir this run's, or say why it cannot be (None: it is). A sweep's job
    directories are reused on purpose (resuming) and never claimed."""
    if place.spans_tasks:  # the tasks of an srun step: one run, one directory
        if not any(o.startswith("hydra.run.dir=") for o in hydra_cfg.overrides.hydra):
            return (
                f"a run across {place.slurm_tasks} Slurm tasks writes one directory from every "
                f"task: give hydra.run.dir=<a directory on a shared file system>"
            )
        return slurm.claim_run_dir(run_dir)
    if not rundirs.first_run_in(run_dir):
        return (
            f"{run_dir} already holds another run; a run never reuses a directory "
            f"(choose another hydra.run.dir)"
        )
    return None


def main(argv, outcome: Outcome) -> Outcome:
    """Run Hydra's application on argv (the overrides and Hydra's flags); returns the outcome.
    KeyboardInterrupt (bench.errors.Interrupted) and Hydra's own errors reach the caller, the
    outcome holding what happened before."""
    hydra_hooks.install(config.frameworks_named(argv))
    signals.install()
    sys.argv[1:] = argv  # Hydra reads the command line from sys.argv
    token = sweep.current.set(outcome)
    # Hydra raises its errors (a config it cannot compose, a directory it cannot create)
    # instead of printing them with its search path or a traceback: the caller says them in
    # one line (bench.cli)
    user_setting = os.environ.get(FULL_ERROR)
    os.environ[FULL_ERROR] = "1"
    try:
        hydra.main(version_base="1.3", config_path=str(conf_dir()), config_name="config")(
            Job(outcome)
        )()
    finally:
        sweep.current.reset(token)
        if user_setting is None:
            os.environ.pop(FULL_ERROR, None)
        else:
            os.environ[FULL_ERROR] = user_setting
    return outcome
