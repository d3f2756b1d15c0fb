# VGG-style CIFAR-10 CNN in R on Keras 3: a list of layers into keras.Sequential, compile with
# SGD and momentum, fit, predict (NHWC).
CNN <- spec$CNN
native_layout <- channels_last

build_model <- function(run) {
  task <- py_to_r(run)$task
  channels <- py_to_r(CNN$conv_channels)
  dropout <- if (task$dropout) py_to_r(CNN$dropout) else list(0, 0, 0)
  shape <- py_to_r(CNN$input_shape)  # C, H, W
  conv <- function(i, activation = NULL) {  # Keras' defaults: Glorot-uniform, zero biases
    layers$Conv2D(channels[[i]], CNN$kernel_size, padding = "same", activation = activation,
                  name = paste0("conv", i))
  }
  model <- keras$Sequential(list(
    keras$Input(tuple(shape[[2]], shape[[3]], shape[[1]])),
    conv(1, "relu"), conv(2),
    layers$MaxPool2D(2L), layers$Activation("relu"),  # ReLU after the pool: cheaper
    layers$Dropout(dropout[[1]]),
    conv(3, "relu"), conv(4),
    layers$MaxPool2D(2L), layers$Activation("relu"),
    layers$Dropout(dropout[[2]]),
    layers$Flatten(),  # H, W, C order: bench_keras.weights permutes the dense rows
    layers$Dense(CNN$dense_units, activation = "relu", name = "dense1"),
    layers$Dropout(dropout[[3]]),
    layers$Dense(CNN$num_classes, name = "dense2", dtype = "float32")), name = "vgg_cnn")
  sgd <- task$optimizer
  compile(model, keras$optimizers$SGD(sgd$lr, momentum = sgd$momentum))
}

slots <- function(model) {
  places <- lapply(c("conv1", "conv2", "conv3", "conv4", "dense1", "dense2"), function(name) {
    layer <- model$get_layer(name)
    list(tuple(paste0(name, ".weight"), layer$kernel), tuple(paste0(name, ".bias"), layer$bias))
  })
  slot_table("cnn", do.call(c, places))
}

train_epoch <- keras_train_epoch  # loop.R's loops, the same for every task
train <- keras_train  # every epoch in one fit
predict <- keras_predict
