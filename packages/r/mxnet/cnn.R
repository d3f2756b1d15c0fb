# VGG-style CIFAR-10 CNN in R on MXNet Gluon: a list of layers, hybridised, SGD with momentum.
CNN <- spec$CNN

build_model <- function(run) {
  task <- py_to_r(run)$task
  channels <- py_to_r(CNN$conv_channels)
  dropout <- if (task$dropout) py_to_r(CNN$dropout) else list(0, 0, 0)
  conv <- function(i, inputs, activation = NULL) {  # zero biases, Glorot-uniform kernels
    nn$Conv2D(channels[[i]], kernel_size = CNN$kernel_size, padding = CNN$padding,
              in_channels = inputs, activation = activation, prefix = sprintf("conv%d_", i),
              weight_initializer = initialisers$GLOROT_UNIFORM)
  }
  net <- sequential(list(
    conv(1, py_get_item(CNN$input_shape, 0L), "relu"), conv(2, channels[[1]]),
    nn$MaxPool2D(2L), nn$Activation("relu"),  # ReLU after the pool: cheaper
    nn$Dropout(dropout[[1]]),
    conv(3, channels[[2]], "relu"), conv(4, channels[[3]]),
    nn$MaxPool2D(2L), nn$Activation("relu"),
    nn$Dropout(dropout[[2]]),
    # Dense flattens its NCHW input in C, H, W order
    nn$Dense(CNN$dense_units, activation = "relu", in_units = CNN$flat_features,
             weight_initializer = initialisers$GLOROT_UNIFORM, prefix = "dense1_"),
    nn$Dropout(dropout[[3]]),
    nn$Dense(CNN$num_classes, in_units = CNN$dense_units,
             weight_initializer = initialisers$GLOROT_UNIFORM, prefix = "dense2_")))
  gluon_model(net, CNN$input_shape, "sgd",
              dict(learning_rate = task$optimizer$lr, momentum = task$optimizer$momentum))
}

# neutral name -> Gluon Parameter: conv1.weight is conv1_weight, and so on
slots <- function(model) {
  parameters <- model$net$collect_params()
  names <- py_to_r(builtins$list(import("bench_shared.weights", convert = FALSE)$layout("cnn")))
  slot_table(setNames(lapply(names, function(name) {
    py_get_item(parameters, gsub(".", "_", name, fixed = TRUE))
  }), names))
}

train_epoch <- gluon_train_epoch  # loop.R's loops, the same for every task
predict <- gluon_predict
