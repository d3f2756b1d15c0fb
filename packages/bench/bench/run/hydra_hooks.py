"""What Rosetta Bench adds to Hydra, installed by one call, never by importing a module:
the typed config schemas (run/config.py), the resolvers that name run and sweep directories
and a comparison's frameworks (run/rundirs.py, run/sweep.py), and a one-line message where
Hydra cannot write its record of a run (run/rundirs.py). `install()` is called where a Hydra
application starts: bench.run.main.main(), and a submitit job's process as it unpickles its
job (bench.run.main.Job)."""

from . import config, rundirs, sweep


def install():
    config.register()
    rundirs.install()
    sweep.install()
