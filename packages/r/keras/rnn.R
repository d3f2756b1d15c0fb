# GRU sentiment classifier in R on Keras 3: Embedding, GRU(reset_after = TRUE), Dense in
# keras.Sequential; compile with Adam, fit, predict.
RNN <- spec$RNN
initialisers <- import("bench_keras_layers.initialisers", convert = FALSE)
optimizers <- import("bench_keras_layers.optimizers", convert = FALSE)

build_model <- function(run) {
  range <- py_to_r(RNN$embedding_init_range)
  model <- keras$Sequential(list(
    keras$Input(tuple(RNN$seq_len), dtype = "int32"),
    layers$Embedding(RNN$vocab_size, RNN$embedding_dim, name = "embedding",
                     embeddings_initializer = keras$initializers$RandomUniform(-range, range)),
    do.call(layers$GRU, c(list(RNN$hidden_units, reset_after = TRUE, name = "gru"),
                          py_to_r(initialisers$gru()))),
    layers$Dense(RNN$num_classes, name = "dense", dtype = "float32")), name = "gru_classifier")
  # SPEC's Adam (bench_keras_layers.optimizers: Keras' epsilon placement made SPEC's)
  compile(model, optimizers$adam(py_get_item(py_get_item(run, "task"), "optimizer")))
}

slots <- function(model) {
  cell <- model$get_layer("gru")$cell
  dense <- model$get_layer("dense")
  slot_table("rnn", list(
    tuple("embedding.weight", model$get_layer("embedding")$embeddings),
    tuple("gru.input_weight", cell$kernel),
    tuple("gru.recurrent_weight", cell$recurrent_kernel),
    tuple("gru.input_bias", cell$bias, 0L),  # Keras stacks both biases: (2, 3 * units)
    tuple("gru.recurrent_bias", cell$bias, 1L),
    tuple("dense.weight", dense$kernel), tuple("dense.bias", dense$bias)))
}

train_epoch <- keras_train_epoch  # loop.R's loops, the same for every task
train <- keras_train  # every epoch in one fit
predict <- keras_predict
