# ResNet-50 v1 features in R on MXNet Gluon: the model zoo's resnet50_v1(pretrained = FALSE)
# features (no download) and a Flatten, hybridised with a static graph; inference only.
children <- function(block) lapply(seq_len(py_len(block)) - 1L, function(i) py_get_item(block, i))

build_model <- function(run) {
  net <- mx$gluon$model_zoo$vision$resnet50_v1(pretrained = FALSE)$features
  net$add(nn$Flatten())  # (N, 2048, 1, 1) -> (N, 2048)
  model <- gluon_model(net, spec$ResNet50$input_shape)
  # the zoo's bottleneck 1x1 convolutions (body[0], body[6]) carry biases SPEC's ResNet-50
  # has not: zero from here on, not counted, not among the tensors neutral weights fill
  blocks <- unlist(lapply(children(net)[5:8], children))
  biases <- unlist(lapply(blocks, function(block) {
    lapply(list(py_get_item(block$body, 0L), py_get_item(block$body, 6L)),
           function(conv) conv$bias)
  }))
  for (bias in biases) bias$set_data(bias$data()$zeros_like())
  model$spec_excluded <- builtins$set(lapply(biases, function(bias) bias$name))
  model
}

# neutral name -> Parameter, found by the zoo's structure: the Gluon row's table
slots <- function(model) import("bench_mxnet.gluon.resnet50", convert = FALSE)$slots(model)

predict <- gluon_predict  # loop.R's loop, the same for every task
