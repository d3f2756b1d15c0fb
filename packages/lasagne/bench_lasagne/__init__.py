"""Theano + Lasagne for Rosetta Bench (framework=lasagne). theano_runtime: Theano's set-up on
Python 3.11 (the shims and THEANO_FLAGS), shared with Keras 2 on Theano."""
