"""Data-parallel runs (task densenet, `devices=N`): which process of how many this worker is.

The orchestrator starts N workers the way torchrun does, each with RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT in its environment (and, on a CPU, its own share of the
cores); a framework package joins them into one job in setup() with its own idiom (PyTorch's
process group, ...). Every rank runs the same worker code on its shard of each global batch;
rank 0 reports the run, the others only whether they finished.
"""
import os

VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def process(run):
    """{rank, world_size, local_rank, master_addr, master_port} of this worker; a run of one
    device is rank 0 of 1 whatever the environment says."""
    world = int(run.get("devices", 1))
    if world == 1:
        return {"rank": 0, "world_size": 1, "local_rank": 0, "master_addr": None,
                "master_port": None}
    missing = [name for name in VARIABLES if name not in os.environ]
    if missing:
        raise ValueError("devices=%d needs %s in the worker's environment (the orchestrator "
                         "sets them, as torchrun does)" % (world, ", ".join(missing)))
    if int(os.environ["WORLD_SIZE"]) != world:
        raise ValueError("WORLD_SIZE=%s but run.json says devices=%d"
                         % (os.environ["WORLD_SIZE"], world))
    return {"rank": int(os.environ["RANK"]), "world_size": world,
            "local_rank": int(os.environ["LOCAL_RANK"]),
            "master_addr": os.environ["MASTER_ADDR"], "master_port": int(os.environ["MASTER_PORT"])}
