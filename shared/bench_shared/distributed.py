"""Data-parallel runs (task densenet, `devices=N`): which process of how many this worker is.

How the N devices are started is the framework's declaration (contract.LAUNCHES):
- processes: the orchestrator starts N workers the way torchrun does, each with RANK,
  WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in its environment, BENCH_WORKER_PORTS
  (one free port per rank, for frameworks where every rank listens: TensorFlow's gRPC
  servers) and, on a CPU, its own share of the cores;
- one_process: one worker drives the N devices itself (Gluon contexts, MirroredStrategy): it
  is rank 0 of N devices in 1 process, and trains on global batches;
- mpiexec: MPI's launcher starts N workers and says which is which.
A framework package joins them into one job in setup() with its own idiom (PyTorch's process
group, ...). Every process runs the same worker code on its shard of each global batch; rank
0 reports the run, the others only whether they finished.
"""

import os

from . import contract

VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "BENCH_WORKER_PORTS")
# rank, size, local rank as Open MPI's and MPICH's (Hydra's) mpiexec set them
MPI_VARIABLES = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
)


def launch(run):
    """How this run's devices were started: None for one device, else one of LAUNCHES."""
    if int(run.get("devices", 1)) == 1:
        return None
    return contract.data_parallel_launch(run["framework"]["capabilities"], run["device"]["name"])


def process(run):
    """{rank, world_size (devices), processes, local_rank, launch, master_addr, master_port,
    worker_ports} of this worker; a run of one device is rank 0 of 1 whatever the environment
    says. A worker's share of each global batch is world_size // processes devices' worth."""
    world = int(run.get("devices", 1))
    how = launch(run)
    single = {
        "rank": 0,
        "world_size": world,
        "processes": 1,
        "local_rank": 0,
        "launch": how,
        "master_addr": None,
        "master_port": None,
        "worker_ports": [],
    }
    if how is None or how == "one_process":
        return single
    if how == "mpiexec":
        return dict(single, **_mpi_rank(world))
    missing = [name for name in VARIABLES if name not in os.environ]
    if missing:
        raise ValueError(
            "devices=%d needs %s in the worker's environment (the orchestrator "
            "sets them, as torchrun does)" % (world, ", ".join(missing))
        )
    _check_size(int(os.environ["WORLD_SIZE"]), world, "WORLD_SIZE")
    return {
        "rank": int(os.environ["RANK"]),
        "world_size": world,
        "processes": world,
        "local_rank": int(os.environ["LOCAL_RANK"]),
        "launch": how,
        "master_addr": os.environ["MASTER_ADDR"],
        "master_port": int(os.environ["MASTER_PORT"]),
        "worker_ports": [int(p) for p in os.environ["BENCH_WORKER_PORTS"].split(",")],
    }


def joining(run, launch, idiom, declaration):
    """process(run) for a package about to join its ranks with `idiom`, which needs `launch`;
    None for one device. A run started otherwise is a ValueError naming the YAML to fix."""
    proc = process(run)
    if proc["world_size"] == 1:
        return None
    if proc["launch"] != launch:
        raise ValueError(
            "%s: devices=%d needs data_parallel_launch %s (%s), not %s"
            % (idiom, proc["world_size"], launch, declaration, proc["launch"])
        )
    return proc


def _mpi_rank(world):
    for rank, size, local in MPI_VARIABLES:
        if rank in os.environ and size in os.environ:
            _check_size(int(os.environ[size]), world, size)
            return {
                "rank": int(os.environ[rank]),
                "processes": world,
                "local_rank": int(os.environ.get(local, os.environ[rank])),
            }
    raise ValueError(
        "devices=%d with launch mpiexec: no MPI rank in the worker's environment "
        "(%s); it must be started by mpiexec"
        % (world, ", ".join(names[0] for names in MPI_VARIABLES))
    )


def _check_size(size, world, name):
    if size != world:
        raise ValueError("%s=%d but run.json says devices=%d" % (name, size, world))
