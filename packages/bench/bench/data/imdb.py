"""IMDB preprocessing exactly as Keras' loader does it (SPEC.md task `rnn`)."""
import numpy as np

from bench_shared.spec import RNN


def preprocess(reviews, seq_len=RNN.seq_len, vocab_size=RNN.vocab_size):
    """Word-rank lists -> (n, seq_len) int32: start token, shift by 3, OOV for >= vocab_size,
    keep the *last* seq_len tokens, zero-pad at the *front* (the last step is a real token)."""
    out = np.full((len(reviews), seq_len), RNN.pad_index, dtype=np.int32)
    for i, review in enumerate(reviews):
        tokens = np.concatenate([[RNN.start_index],
                                 np.asarray(review, dtype=np.int64) + RNN.index_from])
        tokens[tokens >= vocab_size] = RNN.oov_index
        tokens = tokens[-seq_len:]
        out[i, seq_len - len(tokens):] = tokens
    return out
