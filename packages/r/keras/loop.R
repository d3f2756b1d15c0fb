# What the R tasks on Keras 3 share: the imports, compile, fit and predict, as the R keras
# package wrote them (itself a reticulate wrapper around Python Keras). The model is the Keras
# row's kind (a compiled keras.Model with spec_excluded), so that bench_keras's
# count_parameters and tensors apply.
keras <- import("keras", convert = FALSE)
layers <- keras$layers
weights <- import("bench_keras.weights", convert = FALSE)  # neutral name -> variable
spec <- import("bench_shared.spec", convert = FALSE)
keras_options <- py_to_r(import("bench_keras", convert = FALSE)$options())  # r_keras.yaml
# What fit and predict read: framework=keras's input pipelines (bench_keras.loop), so that
# the batches never pass through R and TensorFlow's autotuned pipeline, whose teardown stalls
# every epoch, is not used (bench_tensorflow/pipeline.py)
inputs <- import("bench_keras.loop", convert = FALSE)

# NCHW -> NHWC once, at load time: Keras' image layers default to channels last
channels_last <- function(x) np$ascontiguousarray(np$transpose(x, tuple(0L, 2L, 3L, 1L)))

# Softmax fused into the loss, integer labels; jit_compile (XLA / jax.jit) as the option says.
compile <- function(model, optimizer = NULL) {
  model$compile(optimizer = optimizer, jit_compile = keras_options$jit_compile,
                loss = keras$losses$SparseCategoricalCrossentropy(from_logits = TRUE))
  model$spec_excluded <- tuple()  # weights SPEC's model lacks (count_parameters, tensors)
  model
}

# the items of a Python sequence as an R list of Python objects
items <- function(sequence) {
  lapply(seq_len(py_len(sequence)) - 1L, function(i) py_get_item(sequence, i))
}

# neutral name -> variable (and, for a stacked one, the index of its row)
slot_table <- function(task, places) weights$slots(task, unname(places))

# One epoch of fit over the runtime's batch order; Keras' mean loss of the epoch.
keras_train_epoch <- function(model, batches) {
  history <- model$fit(inputs$fit_input(model, batches), epochs = 1L,
                       steps_per_epoch = py_len(batches), verbose = 0L, shuffle = FALSE)
  py_to_r(builtins$float(py_get_item(py_get_item(history$history, "loss"), -1L)))
}

# Every epoch in one fit, as R's keras scripts train: fit reads the epochs' batches one after
# another in the shared order (epochs_input), and a callback (EpochClock) brackets each epoch
# for the runtime, which times, records and evaluates it, and stops fit at the quality target;
# the first epoch's window opens before fit, as one fit per epoch would open it.
keras_train <- function(model, epochs) {
  given <- builtins$list()  # how many batches of each epoch fit read (EpochClock checks)
  epochs$begin(0L)
  model$fit(inputs$epochs_input(model, epochs, given), epochs = py_len(epochs),
            steps_per_epoch = py_len(epochs$batches_of(0L)), verbose = 0L, shuffle = FALSE,
            callbacks = list(inputs$EpochClock(epochs, given)))
  invisible(NULL)
}

keras_predict <- function(model, batches) {
  batches <- builtins$list(batches)
  model$predict(inputs$predict_input(model, batches), steps = py_len(batches),
                verbose = 0L)$astype("float32")
}
