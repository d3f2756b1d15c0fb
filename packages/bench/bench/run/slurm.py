"""Data-parallel runs across nodes (task densenet, `devices=N`) as a Slurm job step of several
tasks (`srun -N2 ...`, or Hydra's submitit launcher with `hydra.launcher.nodes=2`, which starts
its jobs through srun): every task runs this orchestrator, which starts its node's share of the
N ranks; the ranks meet at the step's first node, on a port every node derives from the job ID
(no node can pick a free port for the others), as torchrun's static rendezvous does. Global
rank 0's node writes result.json; node k's writes result.node<k>.json beside it (a shared file
system is required anyway).

Only a step that srun started is several tasks (SLURM_STEP_ID set, SLURM_STEP_NUM_TASKS > 1):
a batch script or an salloc shell has SLURM_NTASKS of the whole allocation but is one
process, whose run starts all its ranks itself.
"""

import dataclasses
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Optional

from ..errors import ConfigError

PORT_BASE, PORT_SPAN = 20000, 20000  # the rendezvous port: PORT_BASE + job ID % PORT_SPAN


def hostnames(nodelist):
    """Slurm's compressed node list ('gpu[01-03,07],login1') as host names, in order: through
    `scontrol show hostnames` where Slurm is installed and configured, else parsed here."""
    if shutil.which("scontrol"):
        out = subprocess.run(
            ["scontrol", "show", "hostnames", nodelist],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if out.returncode == 0 and out.stdout.split():
            return out.stdout.split()
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


def step_tasks(environ=None):
    """(tasks, this task's index) of the srun step this process is a task of; (1, 0) outside
    one, in a batch script and in an salloc shell (their SLURM_NTASKS is the allocation's)."""
    environ = os.environ if environ is None else environ
    if "SLURM_STEP_ID" not in environ:
        return 1, 0
    return (int(environ.get("SLURM_STEP_NUM_TASKS") or 1), int(environ.get("SLURM_PROCID") or 0))


def node_layout(devices, environ=None):
    """None outside an srun step of several tasks (or for one device); else this task's place:
    {node, nodes, local_devices, rank_offset, local_rank_offset, master_addr, master_port,
    worker_ports}. Each task starts devices / tasks ranks."""
    environ = os.environ if environ is None else environ
    tasks, node = step_tasks(environ)
    if tasks <= 1 or devices <= 1:
        return None
    if devices % tasks:
        raise ConfigError(
            f"devices={devices} across {tasks} Slurm tasks: each task starts the "
            f"same number of ranks, so devices must be a multiple of {tasks}"
        )
    nodelist = (
        environ.get("SLURM_STEP_NODELIST")
        or environ.get("SLURM_JOB_NODELIST")
        or environ.get("SLURM_NODELIST")
    )
    if not nodelist or "SLURM_PROCID" not in environ or "SLURM_JOB_ID" not in environ:
        raise ConfigError(
            "a Slurm step of several tasks without SLURM_PROCID, SLURM_JOB_ID and "
            "SLURM_STEP_NODELIST: run it through srun or the submitit launcher"
        )
    local = devices // tasks
    port = PORT_BASE + int(environ["SLURM_JOB_ID"]) % PORT_SPAN
    return {
        "node": node,
        "nodes": tasks,
        "local_devices": local,
        "rank_offset": node * local,
        # ranks already on this host from earlier tasks (tasks_per_node > 1)
        "local_rank_offset": int(environ.get("SLURM_LOCALID", 0)) * local,
        # task 0 runs on the step's first node, whatever the task distribution
        "master_addr": hostnames(nodelist)[0],
        "master_port": port,
        "worker_ports": [port + 1 + rank for rank in range(devices)],
    }


def refusal(framework, launch, layout):
    """Why `framework` (its config) cannot start its ranks across the nodes of `layout`, whose
    devices start as `launch` (contract.LAUNCHES); None when it can."""
    if launch != "processes":
        return (
            f"devices={layout['nodes'] * layout['local_devices']} across "
            f"{layout['nodes']} Slurm tasks: framework={framework.name} starts its devices "
            f"with {launch}, and only `processes` (torchrun's way) spans nodes here"
        )
    reason = framework.capabilities.multi_node_reason
    if reason:
        return (
            f"framework={framework.name} runs its ranks on one node only ({reason}): "
            f"run it in one Slurm task (srun -n1, hydra.launcher.nodes=1)"
        )
    return None


@dataclasses.dataclass(frozen=True)
class Place:
    """Where one run's process stands in Slurm, asked once per run (`place()`): the tasks of
    its srun step, and for a multi-node data-parallel run this task's share of the ranks."""

    slurm_tasks: int = 1  # Slurm tasks of the srun step this process is one of (1 outside)
    slurm_task: int = 0  # this process's Slurm task index in the step (SLURM_PROCID)
    devices: int = 1
    layout: Optional[dict] = None  # node_layout(): this node's ranks, None on one node
    problem: Optional[str] = None  # why the step cannot run these devices (a ConfigError)

    @property
    def spans_tasks(self):
        """One run across the tasks of a step: every task writes into one directory."""
        return self.slurm_tasks > 1 and self.devices > 1

    @property
    def secondary(self):
        """A task other than the first: it writes result.node<k>.json beside result.json."""
        return self.spans_tasks and self.slurm_task > 0

    @property
    def result_name(self):
        return f"result.node{self.slurm_task}.json" if self.secondary else "result.json"


def place(devices, environ=None) -> Place:
    """This process's Place for a run of `devices` devices."""
    tasks, task = step_tasks(environ)
    try:
        layout, problem = node_layout(devices, environ), None
    except ConfigError as exc:
        layout, problem = None, str(exc)
    return Place(
        slurm_tasks=tasks, slurm_task=task, devices=devices, layout=layout, problem=problem
    )


MARK = ".bench-run"  # a run's claim of its directory (bench.run.rundirs.first_run_in)
CLAIM_WAIT_S = 120  # how long task k waits for task 0's claim (a shared file system's delay)


def step_id(environ=None):
    """The srun step this process is a task of, as `<job ID>.<step ID>`."""
    environ = os.environ if environ is None else environ
    return f"{environ.get('SLURM_JOB_ID')}.{environ.get('SLURM_STEP_ID')}"


def claim_run_dir(run_dir, environ=None, wait_s=CLAIM_WAIT_S):
    """Claim run_dir for a run across the tasks of this srun step, in every task; None when
    this step has it, else why not (one line). Task 0 creates .bench-run naming the step (or
    finds it there: the directory is another run's); every other task waits for that file and
    runs only when it names the same step. So all tasks refuse a directory that another run
    marked (a single run's .bench-run, another step's) before any writes a file there, and no
    task runs while task 0 does not."""
    environ = os.environ if environ is None else environ
    run_dir = Path(run_dir)
    ours, task = step_id(environ), step_tasks(environ)[1]
    mark = run_dir / MARK
    if task == 0:
        claimed = _create(mark, ours)
    else:
        # a shared file system tells no other node when the file appears: look again
        deadline = time.monotonic() + wait_s
        while not mark.exists():
            if time.monotonic() > deadline:
                return (
                    f"task 0 of Slurm step {ours} did not claim {run_dir} within {wait_s} "
                    f"s: every task must be given the same hydra.run.dir (see task 0's "
                    f"output)"
                )
            time.sleep(0.2)
        claimed = _read(mark) == ours
    return (
        None
        if claimed
        else (
            f"{run_dir} already holds another run; a run never reuses a "
            f"directory (choose another hydra.run.dir)"
        )
    )


def _create(path, text):
    """Create `path` holding `text`, complete the moment it appears (a hard link of a written
    temporary file); False when it exists already."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    try:
        os.link(temporary, path)
    except FileExistsError:
        return False
    finally:
        temporary.unlink()
    return True


def _read(path):
    try:
        return path.read_text()
    except FileNotFoundError:
        return None
