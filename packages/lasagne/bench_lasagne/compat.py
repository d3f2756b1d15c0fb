"""Lasagne 0.1 (2015, PyPI's only release) on Theano 1.0.5: the one module it imports that
Theano has since removed. Import after bench_theano.configure(), before `import lasagne`.

lasagne/layers/pool.py does `from theano.tensor.signal import downsample` and calls
`downsample.max_pool_2d(input, ds=, st=, ignore_border=, padding=, mode=)`; Theano 0.9 renamed
it theano.tensor.signal.pool.pool_2d(input, ws=, stride=, ignore_border=, pad=, mode=) and
1.0 removed the old module. A stand-in module with the old name and signature maps one onto
the other, argument for argument (Lasagne's later releases call pool_2d themselves).
"""

import sys
import types

from theano.tensor.signal import pool


def max_pool_2d(input, ds, ignore_border=None, st=None, padding=(0, 0), mode="max"):
    """Theano 0.8's downsample.max_pool_2d, as theano.tensor.signal.pool.pool_2d."""
    return pool.pool_2d(
        input, ws=ds, ignore_border=ignore_border, stride=st, pad=padding, mode=mode
    )


def install_downsample():
    """Register theano.tensor.signal.downsample (idempotent); returns the module."""
    name = "theano.tensor.signal.downsample"
    if name not in sys.modules:
        module = types.ModuleType(
            name,
            "Theano 0.8's pooling module, mapped onto theano.tensor.signal.pool by bench_lasagne",
        )
        module.max_pool_2d = max_pool_2d
        sys.modules[name] = module
        import theano.tensor.signal

        theano.tensor.signal.downsample = module
    return sys.modules[name]
