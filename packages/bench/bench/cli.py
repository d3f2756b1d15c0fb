"""`python -m bench`: the command line. A benchmark run or a sweep (Hydra: bench.run.main), or
a sub-command: report (bench.report.command), verify, tune, peak, prepare, envs, check,
reproduce (bench.tools).
"""
import difflib
import importlib
import os
import sys

from . import __version__, project_dir, signals
from .errors import Interrupted

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
  python -m bench run --cfg job task=rnn                    the composed config, no run
  python -m bench run --help                                Hydra's help: every config group"""
USAGE = "usage: python -m bench [sub-command] [key=value ...] [-m] [--help] [--version]"


def help_text():
    width = max(map(len, SUBCOMMANDS))
    lines = [USAGE, "",
             "Rosetta Bench: the same models in every framework, run under the same rules; time",
             "and accuracy side by side. A run is `key=value` overrides of conf/ (task, framework,",
             "device, precision, preset, data, ...); `-m` sweeps comma-separated values.", "",
             "sub-commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += ["", "recipes:", RECIPES, "",
              "`python -m bench <sub-command> --help` for its options. Without arguments, this",
              "help: a run's default is the full-size CNN (25 minutes and more on a CPU)."]
    return "\n".join(lines)


def version_text():
    from .run import sysinfo

    commit = sysinfo.git_commit(project_dir())
    return f"bench {__version__}" + (f" (git {commit})" if commit else "")


def exit_status(statuses, comparison=False) -> int:
    """1: something failed (or was cut short); 2: something was refused or is not installed,
    unless the sweep is a comparison preset (`comparison=...`), whose refused cells are its
    table's blanks (e.g. an inference runtime's training tasks), listed in the summary."""
    if {"failed", "invalid", "interrupted"} & set(statuses):
        return 1
    refused = {"unsupported", "not_installed"} & set(statuses)
    return 2 if refused and not comparison else 0


def unknown_word(word):
    """The one-line error for a bare word that is neither a sub-command nor key=value."""
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    hint = f"; did you mean `{close[0]}`?" if close else ""
    return (f"bench: {word!r} is not a sub-command{hint} (sub-commands: "
            f"{', '.join(SUBCOMMANDS)}; a run takes key=value overrides, e.g. task=cnn)")


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
    from .report import sweep_summary
    from .run import main as hydra_app
    from .run import sweep

    try:
        sweep.check_command_line(argv)
        hydra_app.check_additions(argv)
        if any(a.startswith("comparison=") for a in argv) and \
                "comparison.require_all=true" not in argv:
            sweep.group_options("framework", require_all=False)  # none installed: say so
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    # the run layer calls summarise when a sweep ends, holding the sweep's lock; its statuses
    # are those of every result in the directory. Hydra does not end a sweep that raised: its
    # summary is asked for here (the lock is still held)
    outcome = hydra_app.Outcome(on_sweep_end=sweep_summary.summarise)
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
        print(f"bench: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if outcome.sweep_dir:
            outcome.sweep_ended()
        return 1
    comparison = any(arg.startswith("comparison=") for arg in argv)
    return exit_status(outcome.final_statuses, comparison)


def console_main() -> None:
    sys.exit(main())
