"""bench_shared.distributed: which process of how many a worker is, for each way a framework
declares its devices are started (contract.LAUNCHES)."""

import pytest

from bench_shared import contract, distributed

TORCHRUN = {
    "RANK": "1",
    "WORLD_SIZE": "2",
    "LOCAL_RANK": "1",
    "MASTER_ADDR": "127.0.0.1",
    "MASTER_PORT": "29500",
    "BENCH_WORKER_PORTS": "29501,29502",
}


def run_of(devices, launch=None):
    caps = {
        "tasks": ["densenet"],
        "precisions": {"cpu": ["fp32"]},
        "data_parallel": {"cpu": "a test idiom"},
    }
    if launch:
        caps["data_parallel_launch"] = {"cpu": launch}
    run = contract.make_run({"name": "t", "package": "bench_t", "capabilities": caps}, "densenet")
    run["devices"] = devices
    return run


@pytest.fixture
def environ(monkeypatch):
    for name in list(TORCHRUN) + [n for names in distributed.MPI_VARIABLES for n in names]:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_one_device_is_rank_0_of_1_whatever_the_environment(environ):
    for name, value in TORCHRUN.items():
        environ.setenv(name, value)
    proc = distributed.process(run_of(1))
    assert (proc["rank"], proc["world_size"], proc["processes"], proc["launch"]) == (0, 1, 1, None)


def test_processes_read_torchrun_s_variables_and_the_worker_ports(environ):
    for name, value in TORCHRUN.items():
        environ.setenv(name, value)
    proc = distributed.process(run_of(2))
    assert proc == {
        "rank": 1,
        "world_size": 2,
        "processes": 2,
        "local_rank": 1,
        "launch": "processes",
        "master_addr": "127.0.0.1",
        "master_port": 29500,
        "worker_ports": [29501, 29502],
    }
    environ.setenv("WORLD_SIZE", "4")
    with pytest.raises(ValueError, match="WORLD_SIZE=4 but run.json says devices=2"):
        distributed.process(run_of(2))
    environ.delenv("MASTER_PORT")
    with pytest.raises(ValueError, match="needs MASTER_PORT"):
        distributed.process(run_of(2))


def test_one_process_drives_every_device(environ):
    proc = distributed.process(run_of(4, "one_process"))
    assert (proc["rank"], proc["world_size"], proc["processes"]) == (0, 4, 1)


@pytest.mark.parametrize("names", distributed.MPI_VARIABLES)
def test_mpiexec_ranks_come_from_mpi_s_environment(environ, names):
    with pytest.raises(ValueError, match="must be started by mpiexec"):
        distributed.process(run_of(2, "mpiexec"))
    for name, value in zip(names, ("1", "2", "1")):
        environ.setenv(name, value)
    proc = distributed.process(run_of(2, "mpiexec"))
    assert (
        proc["rank"],
        proc["world_size"],
        proc["processes"],
        proc["local_rank"],
        proc["launch"],
    ) == (1, 2, 2, 1, "mpiexec")


def test_joining_checks_the_launch_a_package_s_idiom_needs(environ):
    assert distributed.joining(run_of(1), "mpiexec", "an MPI idiom", "x.yaml") is None
    proc = distributed.joining(run_of(2, "one_process"), "one_process", "contexts", "x.yaml")
    assert proc["world_size"] == 2 and proc["processes"] == 1
    with pytest.raises(
        ValueError,
        match="an MPI idiom: devices=2 needs data_parallel_launch "
        r"mpiexec \(x.yaml\), not one_process",
    ):
        distributed.joining(run_of(2, "one_process"), "mpiexec", "an MPI idiom", "x.yaml")
