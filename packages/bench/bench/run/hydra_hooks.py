"""What Rosetta Bench adds to Hydra, installed by one call, never by importing a module:
the typed config schemas (run/config.py), the resolvers that name run and sweep directories
and a comparison's frameworks (run/rundirs.py, run/sweep.py), a one-line message where
Hydra cannot write its record of a run (run/rundirs.py), and the sweeper that runs a sweep in
rounds (run/rounds.py, through hydra_plugins/bench_rounds). `install()` is called where a Hydra
application starts: bench.run.main.main(), and a submitit job's process as it unpickles its
job (bench.run.main.Job)."""

from . import config, rundirs, sweep


def install(frameworks=None):
    """frameworks: those the command line names (bench.run.config.frameworks_named), whose
    schemas alone are registered; None: every framework's."""
    config.register(frameworks)
    rundirs.install()
    sweep.install()
    register_sweeper()


def register_sweeper():
    """bench's sweeper (hydra_plugins.bench_rounds: Hydra's basic sweeper in rounds), which
    conf/config.yaml names, registered with Hydra's plugins by hand: an editable install's
    hydra_plugins namespace is not one Hydra's own scan can walk."""
    from hydra.core.plugins import Plugins
    from hydra_plugins.bench_rounds import RoundsSweeper

    Plugins.instance().register(RoundsSweeper)
