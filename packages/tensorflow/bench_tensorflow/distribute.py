"""devices=N the tf.distribute way, for bench_tensorflow and Keras on TensorFlow (bench_keras):
the run's N worker processes (started as torchrun does, bench_shared.distributed) joined into
one tf.distribute.MultiWorkerMirroredStrategy. Each rank runs a gRPC server on its own port
(BENCH_WORKER_PORTS), named in TF_CONFIG; every rank holds a mirror of the variables
(initialised from rank 0's), runs one replica on its share of each global batch, and
gradients are all-reduced by collective ops: ring all-reduce over gRPC on a CPU, NCCL on GPUs
(one GPU per process). One device: TensorFlow's default strategy (no replicas, no
collectives), the same code."""

import json
import os

import tensorflow as tf

from bench_shared import distributed

COLLECTIVES = {
    "cpu": tf.distribute.experimental.CommunicationImplementation.RING,
    "gpu": tf.distribute.experimental.CommunicationImplementation.NCCL,
}


def tf_config(proc):
    """TF_CONFIG of this rank: every rank's gRPC server and which of them is this one. Every
    server is at MASTER_ADDR: the ranks share one host (across Slurm nodes the orchestrator
    refuses TensorFlow, conf/framework/tensorflow.yaml's multi_node_reason)."""
    workers = ["%s:%d" % (proc["master_addr"], port) for port in proc["worker_ports"]]
    if len(workers) != proc["world_size"]:
        raise ValueError(
            "BENCH_WORKER_PORTS names %d ports for %d ranks" % (len(workers), proc["world_size"])
        )
    return {"cluster": {"worker": workers}, "task": {"type": "worker", "index": proc["rank"]}}


def make_strategy(run):
    """(strategy, what was joined or None). Call once per process, before any other
    TensorFlow op runs (both strategies configure the runtime: its cluster, its devices)."""
    if distributed.launch(run) == "one_process":
        return mirrored(run)
    proc = distributed.joining(
        run,
        "processes",
        "MultiWorkerMirroredStrategy joins processes",
        "conf/framework/tensorflow.yaml",
    )
    if proc is None:
        return tf.distribute.get_strategy(), None
    config = tf_config(proc)
    os.environ["TF_CONFIG"] = json.dumps(config)
    implementation = COLLECTIVES[run["device"]["name"]]
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            implementation=implementation
        )
    )
    # (its class is CollectiveAllReduceStrategy, the name MultiWorkerMirroredStrategy aliases)
    return strategy, {
        "strategy": "MultiWorkerMirroredStrategy",
        "rank": proc["rank"],
        "replicas": strategy.num_replicas_in_sync,
        "collectives": implementation.name,
        "cluster": config["cluster"],
    }


def mirrored(run):
    """devices=N in this one process (a framework declaring data_parallel_launch one_process:
    Keras' fit): tf.distribute.MirroredStrategy over N logical CPU devices sharing the cores
    (split before the runtime starts) or N GPUs from device.index, set as the default strategy,
    so that models built from here on are mirrored and fit splits each global batch."""
    proc = distributed.joining(
        run,
        "one_process",
        "MirroredStrategy drives N devices",
        "conf/framework/%s.yaml" % run["framework"]["name"],
    )
    count = proc["world_size"]
    if run["device"]["name"] == "cpu":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
        )
        devices = ["/cpu:%d" % i for i in range(count)]
        # no NCCL between CPU devices: the gradients meet on one device
        reduce = tf.distribute.ReductionToOneDevice(reduce_to_device="/cpu:0")
    else:
        first = run["device"]["index"]
        devices = ["/gpu:%d" % i for i in range(first, first + count)]
        reduce = None  # NCCL
    strategy = tf.distribute.MirroredStrategy(devices=devices, cross_device_ops=reduce)
    tf.distribute.experimental_set_strategy(strategy)
    return strategy, {
        "strategy": "MirroredStrategy",
        "replicas": strategy.num_replicas_in_sync,
        "devices": devices,
    }
