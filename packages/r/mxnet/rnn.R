# GRU sentiment classifier in R on MXNet Gluon: Embedding, the fused GRU (NTC), the last time
# step, Dense, as one hybridised sequential network; Adam.
RNN <- spec$RNN

# (N, T, H) -> (N, H) at t = T; traced once into the hybridised graph (F: mx.sym)
last_step <- function(F, outputs) {
  F$squeeze(F$slice_axis(outputs, axis = 1L, begin = -1L, end = NULL), axis = 1L)
}

build_model <- function(run) {
  adam <- py_to_r(run)$task$optimizer
  net <- sequential(list(
    nn$Embedding(RNN$vocab_size, RNN$embedding_dim, weight_initializer = initialisers$EMBEDDING,
                 prefix = "embedding_"),
    # MXNet's fused RNN operator is the cuDNN form: gates r, z, n, two bias vectors
    mx$gluon$rnn$GRU(RNN$hidden_units, layout = "NTC", input_size = RNN$embedding_dim,
                     i2h_weight_initializer = initialisers$PerGate(initialisers$GLOROT_UNIFORM),
                     h2h_weight_initializer = initialisers$PerGate(initialisers$ORTHOGONAL),
                     prefix = "gru_"),
    nn$HybridLambda(py_func(last_step)),
    nn$Dense(RNN$num_classes, in_units = RNN$hidden_units,
             weight_initializer = initialisers$GLOROT_UNIFORM, prefix = "dense_")))
  gluon_model(net, tuple(RNN$seq_len), "adam",
              dict(learning_rate = adam$lr, beta1 = adam$beta1, beta2 = adam$beta2,
                   epsilon = adam$eps))
}

slots <- function(model) {
  embedding <- py_get_item(model$net, 0L)
  gru <- py_get_item(model$net, 1L)
  dense <- py_get_item(model$net, 3L)
  slot_table(list("embedding.weight" = embedding$weight,
                  "gru.input_weight" = gru$l0_i2h_weight,
                  "gru.recurrent_weight" = gru$l0_h2h_weight,
                  "gru.input_bias" = gru$l0_i2h_bias,
                  "gru.recurrent_bias" = gru$l0_h2h_bias,
                  "dense.weight" = dense$weight, "dense.bias" = dense$bias))
}

train_epoch <- gluon_train_epoch  # loop.R's loops, the same for every task
predict <- gluon_predict
