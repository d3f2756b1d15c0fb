"""`python -m bench`: the command line. A benchmark run or a sweep (Hydra: bench.run.main), or
a sub-command: report (bench.report.command), verify, tune, peak, prepare, envs, check,
reproduce (bench.tools).
"""

import difflib
import importlib
import os
import sys
import textwrap

from . import __version__, conf_dir, files, project_dir, signals
from .errors import ConfigError, Interrupted

# name -> (module with main(argv), one line for the help)
SUBCOMMANDS = {
    "run": (None, "one benchmark run, or a sweep with -m (the default: `run` may be left out)"),
    "report": ("bench.report.command", "tables, charts and the HTML page from result files"),
    "verify": ("bench.tools.verify", "every framework against the NumPy reference"),
    "tune": ("bench.tools.tune", "this host's fastest settings for one framework and task"),
    "peak": ("bench.tools.peak", "this host's peak matrix-multiply FLOP/s (for utilisation)"),
    "prepare": ("bench.tools.prepare", "download and prepare data only (a login node)"),
    "envs": ("bench.tools.envs", "every framework's environment: built or not, how to build it"),
    "check": ("bench.tools.check", "is a bundle of results fit to rank: VALID or INVALID, why"),
    "reproduce": ("bench.tools.reproduce", "run a recorded result again and judge the change"),
}
RECIPES = """\
  python -m bench task=cnn framework=torch preset=quick     a one-minute CNN run
  python -m bench -m framework=torch,keras task=cnn,rnn preset=smoke
                                                            a sweep: every combination
  python -m bench -m comparison=smoke                       every installed framework
  python -m bench report results/                           tables of every result
  python -m bench report results/ --baseline old/           what changed since old/
  python -m bench envs                                      which environments exist
  python -m bench check docs/results/<cpu>/                 are these results fit to rank
  python -m bench reproduce results/runs/<run>/result.json  the same run again: same?
  python -m bench run --cfg job task=rnn                    the composed config, no run
  python -m bench run --help                                a run's axes and common overrides"""
USAGE = "usage: python -m bench [sub-command] [key=value ...] [-m] [--help] [--version]"
RUN_USAGE = "usage: python -m bench [run] [key=value ...] [-m] [--cfg job] [--hydra-help]"
# the axes a run's help lists (conf/<group>/), with what each holds beyond its options
AXES = {
    "task": "",
    "framework": "",
    "device": "",
    "precision": "",
    "data": "",
    "preset": "",
    "init": "",
    "comparison": " (a preset sweep: -m comparison=<name>)",
}
COMMON_OVERRIDES = """\
  seed=N                        the seed; -m seed=0,1,2: three repeats, one table cell
  devices=N                     data-parallel devices (task=densenet)
  tuned=true                    this host's tuning profile (python -m bench tune)
  preset.epochs=N               also preset.train_examples, test_examples, timeout_s
  task.batch_size=N             SPEC's hyperparameters: task.epochs, task.optimizer.lr, ...
  framework.options.NAME=VALUE  the framework's switches (its README)
  +framework.env.NAME=VALUE     an environment variable of its workers
  data.cache_dir=DIR            the prepared data (default $BENCH_CACHE_DIR)
  sweep=NAME  redo=true         a sweep's directory; run its finished jobs again
  hydra.run.dir=DIR             the run's directory (a sweep: hydra.sweep.dir=DIR)"""


def help_text():
    width = max(map(len, SUBCOMMANDS))
    lines = [
        USAGE,
        "",
        "Rosetta Bench: the same models in every framework, run under the same rules; time",
        "and accuracy side by side. A run is `key=value` overrides of conf/ (task, framework,",
        "device, precision, preset, data, ...); `-m` sweeps comma-separated values.",
        "",
        "sub-commands:",
    ]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += [
        "",
        "recipes:",
        RECIPES,
        "",
        "`python -m bench <sub-command> --help` for its options. Without arguments, this",
        "help: a run's default is the full-size CNN (25 minutes and more on a CPU).",
    ]
    return "\n".join(lines)


def run_help():
    """`python -m bench run --help`: the axes with their options (read from conf/, without
    Hydra), the common overrides and flags."""
    width = max(map(len, AXES))
    lines = [
        RUN_USAGE,
        "",
        "One benchmark run, its result in results/runs/<time>_<task>_<framework>_.../; with",
        "-m a sweep over comma-separated values, in results/sweeps/<name>/.",
        "",
        "axes (conf/<axis>/<option>.yaml):",
    ]
    for axis, note in AXES.items():
        options = sorted(p.stem for p in (conf_dir() / axis).glob("*.yaml"))
        lines += textwrap.wrap(
            ", ".join(options) + note,
            92,
            initial_indent=f"  {axis:<{width}}  ",
            subsequent_indent=" " * (width + 4),
            break_on_hyphens=False,
        )
    lines += [
        "",
        "common overrides:",
        COMMON_OVERRIDES,
        "",
        "flags:",
        "  -m, --multirun  a sweep",
        "  --cfg job       print the composed config and run nothing (--resolve: resolved)",
        "  --hydra-help    Hydra's help: every config group and the whole composed config",
        "",
        "exit status: 0 ok; 1 failed, invalid or interrupted; 2 unsupported, not "
        "installed or a bad",
        "command line (docs/reports.md).",
    ]
    return "\n".join(lines)


def version_text():
    from .run import sysinfo

    commit = sysinfo.git_commit(project_dir())
    return f"bench {__version__}" + (f" (git {commit})" if commit else "")


def exit_status(statuses, comparison=False) -> int:
    """1: something failed (or was cut short); 2: something was refused or is not installed.
    In a comparison preset's sweep (`comparison=...`) the unsupported cells are its table's
    blanks (an inference runtime's training tasks, listed in the summary): only a framework
    not installed makes it 2 (comparison.require_all=true runs every one)."""
    if {"failed", "invalid", "interrupted"} & set(statuses):
        return 1
    refused = {"not_installed"} if comparison else {"unsupported", "not_installed"}
    return 2 if refused & set(statuses) else 0


def unknown_word(word):
    """The one-line error for a bare word that is neither a sub-command nor key=value."""
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    hint = f"; did you mean `{close[0]}`?" if close else ""
    return (
        f"bench: {word!r} is not a sub-command{hint} (sub-commands: "
        f"{', '.join(SUBCOMMANDS)}; a run takes key=value overrides, e.g. task=cnn)"
    )


def _guard_broken_pipe(function, *args):
    """Run function; output piped into a command that stops reading (`| head`) ends quietly."""
    try:
        status = function(*args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # Python flushes stdout again at exit
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    return _guard_broken_pipe(_main, argv)


def _main(argv) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(help_text())
        return 0
    if argv[0] == "--version":
        print(version_text())
        return 0
    first = argv[0]
    if first in SUBCOMMANDS and SUBCOMMANDS[first][0]:  # not a benchmark run: no Hydra
        return importlib.import_module(SUBCOMMANDS[first][0]).main(argv[1:])
    if first == "run":
        argv = argv[1:]
    elif not first.startswith("-") and "=" not in first:
        print(unknown_word(first), file=sys.stderr)
        return 2
    return run(argv)


def run(argv) -> int:
    """A run or a sweep through Hydra's application; its exit status."""
    if any(arg in ("-h", "--help") for arg in argv):
        print(run_help())
        return 0
    argv = ["--help" if arg == "--hydra-help" else arg for arg in argv]  # Hydra's app help
    # the overrides after Hydra's flags: its parser takes them in one place only
    # (`task=cnn --cfg job precision=bf16` would be "unrecognized arguments")
    overrides = [arg for arg in argv if "=" in arg and not arg.startswith("-")]
    argv = [arg for arg in argv if arg not in overrides] + overrides
    from .run import main as hydra_app
    from .run import overrides, sweep

    try:
        sweep.check_command_line(argv)
        overrides.check(argv)
        overrides.check_results_dir(argv)
        if (
            any(a.startswith("comparison=") for a in argv)
            and "comparison.require_all=true" not in argv
        ):
            sweep.group_options("framework", require_all=False)  # none installed: say so
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    except files.NotWritable as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    # the run layer calls summarise when a sweep ends, holding the sweep's lock; its statuses
    # are those of every result in the directory. Hydra does not end a sweep that raised: its
    # summary is asked for here (the lock is still held)
    outcome = hydra_app.Outcome(on_sweep_end=summarise_sweep)
    try:
        hydra_app.main(argv, outcome)
    except KeyboardInterrupt as exc:
        # every finished job's result.json is complete (written atomically); the interrupted
        # one says so, and the same command runs it again and skips the rest
        signals.ignore()  # recorded; more signals (Slurm sends two) must not cut the exit
        what = getattr(exc, "what", "Ctrl-C")
        print(f"\ninterrupted ({what}): finished results are kept", flush=True)
        if outcome.sweep_dir:
            outcome.sweep_ended()
            print("the same command resumes the sweep", flush=True)
        return exc.exit_status if isinstance(exc, Interrupted) else 130
    except Exception as exc:  # e.g. a job directory that cannot be created: Hydra stops the sweep
        if os.environ.get(hydra_app.FULL_ERROR) == "1":  # the user asked for Hydra's traceback
            raise
        line, status = failure(exc)
        print(line, file=sys.stderr, flush=True)
        if outcome.sweep_dir and status != 2:  # a refused setting ran nothing to sum up
            outcome.sweep_ended()
        return status
    comparison = any(arg.startswith("comparison=") for arg in argv)
    return exit_status(outcome.final_statuses, comparison)


def summarise_sweep(directory, wall=None):
    """The end of a sweep's summary (bench.report.sweep_summary), imported only when a sweep
    ends: the report layer is a fifth of a run's start-up."""
    from .report import sweep_summary

    return sweep_summary.summarise(directory, wall)


def failure(exc):
    """(one line, exit status) for an exception out of Hydra's application: a path that
    cannot be written, named (1); a config Hydra cannot compose (2); anything else (1)."""
    from .run import overrides

    chain = []
    while exc is not None and len(chain) < 10:
        chain.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    for error in chain:
        problem = files.path_problem(error) if isinstance(error, OSError) else None
        if problem:
            return (
                f"bench: {problem}; hydra.run.dir=DIR puts the run elsewhere (a sweep: "
                f"hydra.sweep.dir=DIR)"
            ), 1
    if str(chain[0]).startswith("bench: "):  # already one line (bench.run.rundirs)
        return str(chain[0]), 1
    config_errors = [e for e in chain if isinstance(e, ConfigError)]
    if config_errors:  # a sweep's setting refused before any job (bench.run.rounds)
        return f"bench: {config_errors[0]}", 2
    config_error = overrides.hydra_error(chain[0])
    if config_error:
        return f"bench: {config_error}", 2
    return f"bench: {type(chain[0]).__name__}: {chain[0]}", 1


def console_main() -> None:
    sys.exit(main())
