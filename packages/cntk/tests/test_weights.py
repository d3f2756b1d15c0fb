"""CNTK's optimiser conventions: the ones CNTK defaults to must fail the equivalence with the
NumPy reference that bench_cntk's (shared/tests/test_conformance.py) passes, so that check
can tell them apart."""

import numpy as np
import pytest
from conftest import loaded_model

from bench_cntk import cnn, loop, rnn
from bench_shared import conformance, reference_train

MODULES = {"cnn": cnn, "rnn": rnn}


@pytest.mark.parametrize(
    "task,learner",
    [
        (
            "cnn",
            lambda cfg: (
                lambda ps: loop.C.momentum_sgd(  # CNTK's default: unit-gain momentum
                    ps,
                    loop.C.learning_parameter_schedule(cfg["lr"]),
                    loop.C.momentum_schedule(cfg["momentum"]),
                    unit_gain=True,
                )
            ),
        ),
        (
            "rnn",
            lambda cfg: (
                lambda ps: loop.C.adam(  # lr per minibatch: divided by the batch
                    ps,
                    loop.C.learning_parameter_schedule(cfg["lr"]),
                    loop.C.momentum_schedule(cfg["beta1"]),
                    variance_momentum=loop.C.momentum_schedule(cfg["beta2"]),
                    epsilon=cfg["eps"],
                )
            ),
        ),
    ],
)
def test_the_other_optimiser_conventions_fail_the_check(task, learner):
    run, model, params = loaded_model(task)
    model.trainer = loop.C.Trainer(
        model.net,
        model.trainer.loss_function,
        [learner(run["task"]["optimizer"])(model.net.parameters)],
    )
    batches = reference_train.fixed_batches(
        task, conformance.TRAIN_STEPS, batch_size=conformance.TRAIN_BATCH_SIZE
    )
    expected = reference_train.train_steps(task, params, batches, run["task"]["optimizer"])
    losses = [MODULES[task].train_epoch(model, [b]) for b in batches]
    error = np.max(np.abs(np.subtract(losses, expected)) / np.abs(expected))
    assert error > 10 * conformance.TRAIN_TOLERANCE
