import functools

from bench import testing

make_run = functools.partial(testing.make_run, "flax")
