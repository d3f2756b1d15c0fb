# What the R tasks on MXNet Gluon share: the imports, the training step and the inference
# loop. The model object is the Gluon row's (bench_mxnet.gluon.loop.Model: contexts,
# hybridisation, loss, gluon.Trainer), so that its count_parameters and tensors apply.
mx <- import("mxnet", convert = FALSE)
nn <- mx$gluon$nn
autograd <- mx$autograd
# SPEC's initialisers, as MXNet's
initialisers <- import("bench_mxnet.initialisers", convert = FALSE)
weights <- import("bench_mxnet.weights", convert = FALSE)  # neutral name -> Parameter
gluon_model <- import("bench_mxnet.gluon.loop", convert = FALSE)$Model
spec <- import("bench_shared.spec", convert = FALSE)

# a sequential network from a list of layers
sequential <- function(layers) {
  net <- nn$HybridSequential(prefix = "")
  for (layer in layers) net$add(layer)
  net
}

# neutral name -> slot of the Gluon Parameter holding it whole
slot_table <- function(parameters) {
  import("collections", convert = FALSE)$OrderedDict(
    unname(Map(function(name, parameter) tuple(name, weights$slot(name, parameter$name)),
               names(parameters), parameters)))
}

# One epoch: forward and loss recorded by autograd, backward, Trainer step; the loss summed on
# the device and read once at the end (reading it every step would stall MXNet's engine).
gluon_train_epoch <- function(model, batches) {
  total <- mx$nd$zeros(list(1L), ctx = model$ctx)
  steps <- 0L
  for_each_batch(batches, function(x, y) {
    data <- model$to_device(x)
    labels <- model$to_device(y)
    with(autograd$record(), {  # train mode: dropout on
      loss <- model$loss_fn(model$net(data), labels)
    })
    loss$backward()
    model$trainer$step(py_len(x))  # gradients of the summed loss / batch = the batch mean
    total <<- mx$nd$add(total, loss$mean())
    steps <<- steps + 1L
  })
  py_to_r(builtins$float(total$asscalar())) / steps
}

# Outputs of every batch in inference mode, copied to the host once all are queued.
gluon_predict <- function(model, batches) {
  outputs <- list()
  for_each_input(batches, function(x) {
    outputs[[length(outputs) + 1L]] <<- model$net(model$to_device(x))
  })
  np$concatenate(lapply(outputs, function(out) out$astype("float32")$asnumpy()))
}
