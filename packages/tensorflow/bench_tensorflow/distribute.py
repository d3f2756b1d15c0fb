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

COLLECTIVES = {"cpu": tf.distribute.experimental.CommunicationImplementation.RING,
               "gpu": tf.distribute.experimental.CommunicationImplementation.NCCL}


def tf_config(proc):
    """TF_CONFIG of this rank: every rank's gRPC server and which of them is this one."""
    workers = ["%s:%d" % (proc["master_addr"], port) for port in proc["worker_ports"]]
    if len(workers) != proc["world_size"]:
        raise ValueError("BENCH_WORKER_PORTS names %d ports for %d ranks"
                         % (len(workers), proc["world_size"]))
    return {"cluster": {"worker": workers}, "task": {"type": "worker", "index": proc["rank"]}}


def make_strategy(run):
    """(strategy, what was joined or None). Call once per process, before any other
    TensorFlow op runs (MultiWorkerMirroredStrategy configures the runtime's cluster)."""
    proc = distributed.joining(run, "processes", "MultiWorkerMirroredStrategy joins processes",
                               "conf/framework/tensorflow.yaml")
    if proc is None:
        return tf.distribute.get_strategy(), None
    config = tf_config(proc)
    os.environ["TF_CONFIG"] = json.dumps(config)
    implementation = COLLECTIVES[run["device"]["name"]]
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            implementation=implementation))
    # (its class is CollectiveAllReduceStrategy, the name MultiWorkerMirroredStrategy aliases)
    return strategy, {"strategy": "MultiWorkerMirroredStrategy", "rank": proc["rank"],
                      "replicas": strategy.num_replicas_in_sync,
                      "collectives": implementation.name, "cluster": config["cluster"]}
