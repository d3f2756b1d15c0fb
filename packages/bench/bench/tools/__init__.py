"""The tools: sub-commands that drive the run layer for one purpose each — verify (every
framework against the NumPy reference), tune (this host's fastest settings), peak (this host's
matrix-multiply peak), prepare (data only)."""


def as_flags(argv, flags):
    """A run's `key=value` spelling of a tool's flags, e.g. framework=torch,mxnet for
    `--frameworks torch,mxnet`: `flags` maps key -> flag; anything else is left as it is."""
    out = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and not arg.startswith("-") and key in flags:
            out += [flags[key], value]
        else:
            out.append(arg)
    return out
