"""tessera from Python: tune kernels and run them on NumPy arrays.

    import numpy as np, tessera
    tessera.ops()                                                 # the operators
    report = tessera.tune("hdiff", (8, 64, 64), budget=10)        # a dict
    tessera.records()                                             # what is tuned
    u, coeff = np.random.rand(2, 8, 64, 64).astype(np.float32)
    coeff *= 0.02
    out = tessera.run("hdiff", {"u": u, "coeff": coeff}, steps=100)["u"]

Shapes are slowest axis first (z, y, x), as NumPy's C order lays arrays
out. Every failure raises tessera.Error with the library's message. The
package loads libtessera.so from $TESSERA_LIBRARY, else from beside the
package where `cmake --install` put both, else through the system's loader.
"""
from ._core import Context, Error, Kernel, Memory, buffers, counts, extent_names, ops
from ._run import reference, run

__all__ = ["Context", "Error", "Kernel", "Memory", "buffers", "counts", "extent_names", "ops", "records",
           "reference", "run", "tune"]
__version__ = "0.1.0"


def tune(op, shape, dtype="f32", backend=None, *, db=None, **options):
    """Tunes op on shape (slowest first) and dtype with a fresh context on db
    (None: $TESSERA_DB); options are Context.tune's (budget, seconds,
    strategy, seed, fix, transfer, ...). Returns the report as a dict."""
    with Context(db) as ctx:
        return ctx.tune(op, shape, dtype, backend, **options)


def records(db=None):
    """The tuned tasks of the records at db (None: $TESSERA_DB), read
    without writing or creating anything: Context.records() of a read-only
    context."""
    with Context(db, readonly=True) as ctx:
        return ctx.records()
