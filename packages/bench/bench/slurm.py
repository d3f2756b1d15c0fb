"""Data-parallel runs across nodes (task densenet, `devices=N`) as a Slurm job step of several
tasks, e.g. Hydra's submitit launcher with `hydra.launcher.nodes=2`: every task runs this
orchestrator, which starts its node's share of the N ranks; the ranks meet at the first node
of the job, on a port every node derives from the job ID (no node can pick a free port for
the others), as torchrun's static rendezvous does. Global rank 0's node writes result.json;
node k's writes result.node<k>.json beside it (a shared file system is required anyway).
"""
import os
import re
import shutil
import subprocess

from .errors import ConfigError

PORT_BASE, PORT_SPAN = 20000, 20000  # the rendezvous port: PORT_BASE + job ID % PORT_SPAN


def hostnames(nodelist):
    """Slurm's compressed node list ('gpu[01-03,07],login1') as host names, in order: through
    `scontrol show hostnames` where Slurm is installed, else parsed here."""
    if shutil.which("scontrol"):
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True,
                             text=True, check=True).stdout
        return out.split()
    hosts = []
    for prefix, ranges, plain in re.findall(r"([^,\[]+)\[([^\]]+)\]|([^,\[\]]+)", nodelist):
        if plain:
            hosts.append(plain)
            continue
        for part in ranges.split(","):
            first, _, last = part.partition("-")
            for number in range(int(first), int(last or first) + 1):
                hosts.append(f"{prefix}{number:0{len(first)}d}")
    return hosts


def node_layout(devices, environ=None):
    """None outside a Slurm step of several tasks (or for one device); else this task's place:
    {node, nodes, local_devices, rank_offset, local_rank_offset, master_addr, master_port,
    worker_ports}. Each task starts devices / tasks ranks."""
    environ = os.environ if environ is None else environ
    tasks = int(environ.get("SLURM_NTASKS") or environ.get("SLURM_NPROCS") or 1)
    if tasks <= 1 or devices <= 1:
        return None
    if devices % tasks:
        raise ConfigError(f"devices={devices} across {tasks} Slurm tasks: each task starts the "
                          f"same number of ranks, so devices must be a multiple of {tasks}")
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist or "SLURM_PROCID" not in environ or "SLURM_JOB_ID" not in environ:
        raise ConfigError("a Slurm step of several tasks without SLURM_PROCID, SLURM_JOB_ID and "
                          "SLURM_JOB_NODELIST: run it through srun or the submitit launcher")
    local = devices // tasks
    node = int(environ["SLURM_PROCID"])
    port = PORT_BASE + int(environ["SLURM_JOB_ID"]) % PORT_SPAN
    return {"node": node, "nodes": tasks, "local_devices": local, "rank_offset": node * local,
            # ranks already on this host from earlier tasks (tasks_per_node > 1)
            "local_rank_offset": int(environ.get("SLURM_LOCALID", 0)) * local,
            "master_addr": hostnames(nodelist)[0], "master_port": port,
            "worker_ports": [port + 1 + rank for rank in range(devices)]}


def secondary_task(devices, environ=None):
    """True in a Slurm task other than the first of a multi-node data-parallel run: it shares
    the run's directory with the first (which marks it as its run) and writes
    result.node<k>.json there."""
    environ = os.environ if environ is None else environ
    tasks = int(environ.get("SLURM_NTASKS") or environ.get("SLURM_NPROCS") or 1)
    return tasks > 1 and devices > 1 and int(environ.get("SLURM_PROCID") or 0) > 0


def result_name(devices, environ=None):
    """result.json, or result.node<k>.json in Slurm task k > 0 of a multi-node run."""
    environ = os.environ if environ is None else environ
    if secondary_task(devices, environ):
        return f"result.node{int(environ['SLURM_PROCID'])}.json"
    return "result.json"
