"""The run layer: from a command line to result.json. The config and its one compose(), the
capability and size checks, environment discovery, run directories, the process supervisor
and launching, Slurm, the result record, the pipeline that ties them, sweeps' resuming and
the Hydra application."""
