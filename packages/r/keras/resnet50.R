# ResNet-50 v1 features in R on Keras 3: keras.applications.ResNet50(weights = NULL,
# include_top = FALSE, pooling = "avg"), predict. Its convolution biases (SPEC's model has
# none) are zeroed and left out, as the Keras row does.
native_layout <- channels_last

build_model <- function(run) {
  shape <- py_to_r(spec$ResNet50$input_shape)  # C, H, W
  model <- keras$applications$ResNet50(weights = NULL, include_top = FALSE, pooling = "avg",
                                       input_shape = tuple(shape[[2]], shape[[3]], shape[[1]]))
  model$compile(jit_compile = keras_options$jit_compile)
  convs <- Filter(function(layer) py_to_r(builtins$isinstance(layer, layers$Conv2D)),
                  items(model$layers))
  biases <- lapply(convs, function(layer) layer$bias)
  for (bias in biases) bias$assign(np$zeros(bias$shape, "float32"))
  model$spec_excluded <- builtins$tuple(lapply(biases, function(bias) bias$path))
  model
}

# neutral name -> variable, by Keras' layer names: the Keras row's table
slots <- function(model) import("bench_keras.resnet50", convert = FALSE)$slots(model)

predict <- keras_predict  # loop.R's loop, the same for every task
