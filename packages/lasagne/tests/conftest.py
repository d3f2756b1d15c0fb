import functools

# before any test module's `import theano`: THEANO_FLAGS and the shims come first (without
# them Theano 1.0.5 does not even import with numpy 1.23: its BLAS probe reads
# numpy.distutils' blas_opt_info, which numpy 1.23's wheels no longer have)
import bench_lasagne  # noqa: F401
from bench import testing

make_run = functools.partial(testing.make_run, "lasagne")
