"""MXNet's data parallelism in one process (task densenet, devices=2 on this CPU's cpu(0) and
cpu(1)): two training steps over two contexts on one global batch against the NumPy reference
of data-parallel training (each context's half of the batch with its own batch statistics, the
gradients averaged, Adam at twice the learning rate), the contexts' weights identical
afterwards, and context 0's batch-norm statistics the model's."""

import functools
import importlib

import mxnet as mx
import numpy as np
import pytest
from conftest import FRAMEWORKS

from bench import testing
from bench_shared import reference_train, slots, weights

DEVICES, STEPS, GLOBAL_BATCH = 2, 2, 8  # one batch twice: the second loss shows the step


@functools.lru_cache(maxsize=1)  # the same for both API styles
def data_parallel_reference(devices, lr, beta1, beta2, eps):
    """The loss before each step of `devices`-way data-parallel Adam (float64)."""
    params = weights.random_weights("densenet", seed=0)
    batches = reference_train.fixed_batches("densenet", 1, batch_size=GLOBAL_BATCH) * STEPS
    p = {k: np.asarray(v, np.float64) for k, v in params.items() if not weights.is_buffer(k)}
    state = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in p.items()}
    lr, b1, b2 = lr * devices, beta1, beta2
    losses = []
    for step, (x, y) in enumerate(batches, 1):
        halves = [
            reference_train.densenet_loss_and_grads(
                p, np.asarray(xs, np.float64), np.asarray(ys, np.float64)
            )
            for xs, ys in zip(np.split(x, devices), np.split(y, devices))
        ]
        losses.append(np.mean([loss for loss, _ in halves]))
        for k in p:
            g = np.mean([grads[k] for _, grads in halves], axis=0)
            m, v = state[k]
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g**2
            p[k] -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + eps)
    return losses


def per_context(framework, model):
    """Each named tensor's copy on every context: {name: [array on cpu(0), on cpu(1)]}."""
    if framework == "gluon":
        return {
            name: [d.asnumpy() for d in p.list_data()]
            for name, p in model.net.collect_params().items()
        }
    group = model.mod._exec_group  # the executor group: every tensor on every context
    names = group.param_names + group.aux_names
    return dict(
        zip(
            names,
            [[a.asnumpy() for a in arrays] for arrays in group.param_arrays + group.aux_arrays],
        )
    )


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_two_contexts_train_as_the_reference_data_parallel_step(framework):
    run = testing.make_run(
        framework,
        "task=densenet",
        f"devices={DEVICES}",
        f"task.image_size={reference_train.DENSENET_SIDE}",
    )
    package = importlib.import_module(run["framework"]["package"])
    assert package.setup(run)["contexts"] == ["cpu(0)", "cpu(1)"]
    module = importlib.import_module(run["framework"]["package"] + ".densenet")
    model = module.build_model(run)
    params = weights.random_weights("densenet", seed=0)
    slots.load_into(package, module, "densenet", model, params)

    batches = reference_train.fixed_batches("densenet", 1, batch_size=GLOBAL_BATCH) * STEPS
    losses = [module.train_epoch(model, [batch]) for batch in batches]
    adam = run["task"]["optimizer"]
    expected = data_parallel_reference(
        DEVICES, adam["lr"], adam["beta1"], adam["beta2"], adam["eps"]
    )
    np.testing.assert_allclose(losses, expected, rtol=1e-3)

    for name, (first, second) in per_context(framework, model).items():
        # weights: one update from the summed gradients; statistics: context 0's, copied
        assert np.array_equal(first, second), name
    # context 0's statistics are the model's: what predict() runs with and what is exported
    exported = slots.export_from(package, module, "densenet", model)
    assert not np.array_equal(exported["stem.bn.mean"], params["stem.bn.mean"])
    one = module.predict(model, [batches[0][0][:1]])  # a batch of one: the first context alone
    assert one.shape == (1, 14) and np.isfinite(one).all()
    assert mx.context.current_context() == mx.cpu(0)
