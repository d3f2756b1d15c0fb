"""`python -m bench`: Hydra turns the command line into typed configs for bench.app (a
multirun, `-m`, is a sweep: bench.sweep); `python -m bench prepare ...` only prepares data
(bench.prepare), `python -m bench verify` runs the equivalence check (bench.verify),
`python -m bench report ...` tabulates result files (bench.report), `python -m bench tune ...`
finds this host's fastest settings (bench.tune), `python -m bench peak` measures its peak
matrix-multiply FLOP/s (bench.peak)."""
import signal
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from . import app, conf_dir, rundirs, slurm, sweep  # noqa: F401 (rundirs: its resolver)
from .config import register
from .errors import Terminated

_statuses = []  # one per job of this process (a multirun with the basic launcher runs them all)
_sweep_dir = []  # the multirun's directory, once a job of this process knows it


def _job(cfg: DictConfig) -> str:
    hydra_cfg = HydraConfig.get()
    run_dir = Path(hydra_cfg.runtime.output_dir)
    config = OmegaConf.to_container(cfg, resolve=True)
    if hydra_cfg.mode == RunMode.RUN and not slurm.secondary_task(cfg.devices) and \
            not rundirs.first_run_in(run_dir):
        print(f"bench: {run_dir} already holds another run; a run never reuses a directory "
              f"(choose another hydra.run.dir)", file=sys.stderr, flush=True)
        _statuses.append("failed")
        return "failed"
    if hydra_cfg.mode == RunMode.MULTIRUN:
        _sweep_dir[:] = [Path(hydra_cfg.sweep.dir)]
        result = sweep.finished_result(run_dir, config, cfg.redo)
        if result is not None:
            print(f"result: {run_dir / 'result.json'}", flush=True)
            _statuses.append(result["status"])
            return result["status"]
    overrides = list(hydra_cfg.overrides.task)  # in full: a job's directory name may be cut
    result = app.run_benchmark(OmegaConf.to_object(cfg), config, run_dir, overrides)
    _statuses.append(result["status"])
    return result["status"]


def _terminate(signum, frame):
    """SIGTERM (kill, Slurm) is handled like Ctrl-C: the worker is killed, the run recorded."""
    raise Terminated()


SUBCOMMANDS = {"verify": "bench.verify", "prepare": "bench.prepare", "report": "bench.report",
               "tune": "bench.tune", "peak": "bench.peak"}


def exit_status(statuses, preset_grid=False) -> int:
    """1: something failed; 2: something was refused, unless the sweep is a preset comparison
    grid (`comparison=...`), whose refused cells are its table's blanks (e.g. an inference
    runtime's training tasks), listed in the summary."""
    if "failed" in statuses or "invalid" in statuses:
        return 1
    return 2 if "unsupported" in statuses and not preset_grid else 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] in SUBCOMMANDS:  # not a benchmark run: no Hydra
        import importlib

        return importlib.import_module(SUBCOMMANDS[sys.argv[1]]).main(sys.argv[2:])
    try:
        sweep.check_command_line(sys.argv[1:])
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    register()
    signal.signal(signal.SIGTERM, _terminate)
    try:
        hydra.main(version_base="1.3", config_path=str(conf_dir()),
                   config_name="config")(_job)()
    except KeyboardInterrupt as exc:
        # every finished job's result.json is complete (written atomically); the interrupted
        # one says `failed`, so the same command runs it again and skips the rest
        what = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        print(f"\ninterrupted ({what}): finished results are kept", flush=True)
        if _sweep_dir:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one: finish the summary
            sweep.summarise(_sweep_dir[0])
            print("the same command resumes the sweep", flush=True)
        return 143 if isinstance(exc, Terminated) else 130
    except Exception as exc:  # e.g. a job directory that cannot be created: Hydra stops the sweep
        print(f"bench: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if _sweep_dir or sweep.current_dir:
            sweep.summarise(_sweep_dir[0] if _sweep_dir else sweep.current_dir)
        return 1
    # a sweep's status is that of every result in its directory (the end-of-sweep summary
    # read them): its jobs may have run in other processes (submitit)
    preset_grid = any(arg.startswith("comparison=") for arg in sys.argv[1:])
    return exit_status(sweep.last_statuses if sweep.last_statuses is not None else _statuses,
                       preset_grid)


def console_main() -> None:
    sys.exit(main())
