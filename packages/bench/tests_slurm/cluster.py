"""A one-host Slurm cluster for the tests: munged, slurmctld and two slurmd (node names node1
and node2 on this host, each its own port: Debian's slurm-wlm is built to run several per
host), all from a private slurm.conf (SLURM_CONF) under one temporary directory, as root.

Processes are tracked by /proc lineage (proctrack/linuxproc) and not bound to cores
(task/none): cgroups may be unavailable in a container. Finished jobs stay visible to
`scontrol show job` for MinJobAge seconds, so their JobState and ExitCode can be read without
an accounting database."""

import os
import re
import signal
import subprocess
import time
from pathlib import Path

from bench.run.launch import free_ports

NODES = ("node1", "node2")
CPUS = 2  # per node name: two 2-node jobs may run at once (the fake framework mostly waits)
SLURM_CONF = """\
ClusterName=benchci
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
# seconds between a job's SIGTERM and its SIGKILL (scancel, time limit): time for the
# orchestrators to kill their workers and write their results on a loaded machine
KillWait=10
# a finished job stays in `scontrol show job` this long (its JobState, ExitCode)
MinJobAge=900
SlurmdTimeout=120
InactiveLimit=0
{nodes}PartitionName=debug Nodes={node_list} Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    """start() brings the daemons up (or raises, with their logs' tails); stop() cancels every
    job, waits for them to end and stops every daemon it started, whatever state it is in."""

    def __init__(self, root):
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.daemons = []  # (name, Popen), in start order
        path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        self.env.update(PATH=path, SLURM_CONF=str(self.conf))

    def start(self, timeout=60):
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)  # munged refuses a key or socket in a writable directory
        for sub in ("state", "spool", "munge"):
            (self.root / sub).mkdir(exist_ok=True)
        munge = self.root / "munge"
        os.chmod(munge, 0o700)
        socket_path = munge / "munge.socket"
        self._run(["mungekey", "--create", "--force", f"--keyfile={munge / 'munge.key'}"])
        self._daemon(
            "munged",
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={socket_path}",
                f"--key-file={munge / 'munge.key'}",
                f"--pid-file={munge / 'munged.pid'}",
                f"--log-file={munge / 'munged.log'}",
                f"--seed-file={munge / 'munged.seed'}",
            ],
        )
        self._until(socket_path.exists, timeout, "munged's socket")
        ctld_port, *node_ports = free_ports(1 + len(NODES))
        nodes = "".join(
            f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} "
            f"CPUs={CPUS} State=UNKNOWN\n"
            for name, port in zip(NODES, node_ports)
        )
        self.conf.write_text(
            SLURM_CONF.format(
                root=self.root,
                munge_socket=socket_path,
                ctld_port=ctld_port,
                nodes=nodes,
                node_list=",".join(NODES),
            )
        )
        self._daemon("slurmctld", ["slurmctld", "-D", "-i"])  # -i: ignore old state
        self._until(
            lambda: self._run(["scontrol", "ping"], check=False).returncode == 0,
            timeout,
            "slurmctld answering `scontrol ping`",
        )
        for name in NODES:
            self._daemon(f"slurmd {name}", ["slurmd", "-D", "-N", name])
        self._until(self._nodes_idle, timeout, "both nodes idle in `sinfo`")
        return self

    def _nodes_idle(self):
        out = self._run(["sinfo", "-h", "-N", "-o", "%N %t"], check=False).stdout
        states = dict(line.split() for line in out.splitlines() if line.strip())
        return all(states.get(name, "").startswith("idle") for name in NODES)

    def _run(self, command, check=True, timeout=60):
        proc = subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {proc.stderr.strip()}{self.logs()}")
        return proc

    def _daemon(self, name, command):
        log = open(self.root / f"{name.replace(' ', '.')}.out", "w")
        try:
            proc = subprocess.Popen(
                command,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            log.close()
        self.daemons.append((name, proc))

    def _until(self, ready, timeout, what):
        deadline = time.monotonic() + timeout
        while not ready():
            for name, proc in self.daemons:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited with status {proc.returncode} while "
                        f"waiting for {what}{self.logs()}"
                    )
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} after {timeout} s{self.logs()}")
            time.sleep(0.2)

    def logs(self, lines=15):
        """The tail of every daemon's log, for an error message."""
        text = ""
        for path in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")):
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            text += f"\n--- {path.name}\n" + "\n".join(tail)
        return text

    # --- used by the tests

    def job(self, job_id):
        """`scontrol show job`'s fields of a job (its last array element: the whole array's
        JobState is per element) as a dict; {} once Slurm has forgotten it."""
        out = self._run(["scontrol", "show", "job", "-o", str(job_id)], check=False).stdout
        records = [
            dict(re.findall(r"(\w+)=(\S*)", line)) for line in out.splitlines() if line.strip()
        ]
        return records[-1] if records else {}

    def jobs(self):
        """The IDs of the jobs that have not ended."""
        out = self._run(["squeue", "-h", "-o", "%A"], check=False).stdout
        return out.split()

    def wait_ended(self, job_id, timeout):
        """The job's fields once it has ended (JobState neither PENDING, RUNNING, nor
        CONFIGURING/COMPLETING); TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            fields = self.job(job_id)
            if fields.get("JobState") not in (
                "PENDING",
                "RUNNING",
                "CONFIGURING",
                "COMPLETING",
                "SUSPENDED",
                None,
            ):
                return fields
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {fields.get('JobState')} after {timeout} s")
            time.sleep(0.5)

    def stop(self, timeout=30):
        """Cancel every job, wait for their processes to end, stop the daemons (SIGTERM, then
        SIGKILL), newest first."""
        try:
            if any(name == "slurmctld" and proc.poll() is None for name, proc in self.daemons):
                self._run(["scancel", "--full", "--user=root"], check=False)
                deadline = time.monotonic() + timeout
                while self.jobs() and time.monotonic() < deadline:
                    time.sleep(0.5)
        finally:
            for _, proc in reversed(self.daemons):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for _, proc in reversed(self.daemons):
                try:
                    proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            self.daemons = []
