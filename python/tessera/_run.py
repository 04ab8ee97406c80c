"""tessera.run and tessera.reference: an operator stepped over fields given
as NumPy arrays (one array, or a dict by buffer name) or xarray objects."""
import ctypes
from collections.abc import Mapping

import numpy as np

from . import _arrays, _xarray
from ._lib import shape_arg
from ._core import Context, Error, buffer_infos, buffers, check, extent_names, lib


class _Fields:
    """The inputs of a run by buffer name, in the operator's axis order; the
    task's shape and dtype; and how the results go back to the caller."""

    def __init__(self, op, arrays, dtype, where):
        self.source = arrays
        if _xarray.is_xarray(arrays):
            given = _xarray.variables(arrays)
        elif isinstance(arrays, Mapping):
            given = dict(arrays)
        else:
            given = {None: arrays}
        widest = max((np.ndim(a) for a in given.values()), default=0)
        if widest == 0:
            raise Error(f"{where}: no field has any dimension")
        first = next(a for a in given.values() if np.ndim(a) == widest)
        self.axis_names = extent_names(op, np.shape(first))
        if _xarray.is_xarray(arrays):
            values = {name: _xarray.in_axis_order(da, self.axis_names) for name, da in given.items()}
        else:
            values = {name: np.asarray(a) for name, a in given.items()}
        self.shape = next(v.shape for v in values.values() if v.ndim == widest)
        inputs = [b for b in buffers(op, self.shape) if b["role"] in ("in", "inout")]
        names = [b["name"] for b in inputs]
        if None in values:
            if len(inputs) != 1:
                raise Error(f"{where}: {op} takes {len(inputs)} input fields ({', '.join(names)}): "
                            f"pass them by name, as a dict or an xarray Dataset")
            values = {names[0]: values[None]}
        missing = [n for n in names if n not in values]
        if missing:
            raise Error(f"{where}: no field for {', '.join(missing)} (the inputs of {op}: {', '.join(names)})")
        unknown = [n for n in values if n not in names]
        if unknown and not _xarray.is_xarray(arrays):   # a Dataset may hold other variables
            raise Error(f"{where}: {op} has no input {', '.join(map(str, unknown))} (its inputs: {', '.join(names)})")
        state = next(b for b in inputs if b["advanced"]) if any(b["advanced"] for b in inputs) else inputs[0]
        self.dtype = dtype or _arrays.tessera_dtype(values[state["name"]].dtype)
        if self.dtype is None:
            raise Error(f"{where}: field '{state['name']}' has dtype {values[state['name']].dtype}: "
                        f"pass float32 or float64 arrays, or dtype=")
        self.values = {n: values[n] for n in names}

    def inputs(self, dtype, where, convert):
        """The input arrays, C-contiguous, in dtype (converted when convert is set)."""
        want = _arrays.numpy_dtype(dtype)
        if want is None:
            raise Error(f"{where}: dtype {dtype} has no NumPy dtype here: run f32, f64 or f16 fields")
        out = {}
        for name, v in self.values.items():
            if v.dtype != want and not convert:
                raise Error(f"{where}: field '{name}' has dtype {v.dtype}, the task is {dtype}: "
                            f"convert it or pass dtype='{_arrays.tessera_dtype(v.dtype) or 'f32'}'")
            out[name] = np.ascontiguousarray(v, dtype=want)
        return out

    def give_back(self, results):
        """results (name -> array) as the caller passed the fields."""
        if _xarray.is_xarray(self.source):
            return _xarray.rewrap(self.source, results, self.axis_names)
        if isinstance(self.source, Mapping):
            return results
        (only,) = results.values()
        return only


def _check_steps(steps, where):
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise Error(f"{where}: steps must be an integer >= 1, not {steps!r}")


def run(op, arrays, steps=1, *, dtype=None, backend=None, db=None, context=None, online_budget=0):
    """Steps op over fields with its tuned kernel, as `tessera run` does.

    arrays: the input fields, by buffer name (a dict of NumPy arrays, an
    xarray Dataset) or one array (or DataArray) for an operator of one input;
    arrays are slowest axis first (z, y, x), or xarray dimensions of those
    names in any order. dtype: the task's ("f32", ...; None: the state
    field's). The kernel comes from tess_dispatch on the context (db: its
    records; None: $TESSERA_DB), on the backend (None: the best present):
    the fields are copied to its memory (the GPU for cuda), stepped there
    and copied back. online_budget tunes a task never tuned here first.

    Returns the last time level of the fields the operator advances: a dict
    by name, one array, or the Dataset/DataArray with those variables
    replaced, coordinates and attributes kept."""
    where = f"run({op})"
    _check_steps(steps, where)
    fields = _Fields(op, arrays, dtype, where)
    inputs = fields.inputs(fields.dtype, where, convert=False)
    ctx = context if context is not None else Context(db)
    try:
        kernel = ctx.dispatch(op, fields.shape, fields.dtype, backend, online_budget=online_budget)
        results = _step(kernel, inputs, steps, where)
    finally:
        if context is None:
            ctx.close()
    return fields.give_back(results)


def _step(kernel, inputs, steps, where):
    bufs = kernel.buffers
    infos = buffer_infos(kernel.op, kernel.shape, kernel.dtype)
    memory = [kernel.alloc(b["count"] * b["elem_bytes"]) for b in bufs]
    try:
        for b, m in zip(bufs, memory):
            if b["name"] in inputs:
                m.upload(inputs[b["name"]])
        ptrs = (ctypes.c_void_p * len(bufs))(*[m.ptr for m in memory])
        for _ in range(steps):
            check(lib().tess_kernel_run(kernel._handle(), ptrs, len(bufs)), where)
            lib().tess_op_advance(infos, len(bufs), ptrs)
        results = {}
        for i, b in enumerate(bufs):
            if b["advanced"]:
                out = np.empty(b["shape"], _arrays.numpy_dtype(b["dtype"]))
                check(lib().tess_kernel_download(kernel._handle(), out.ctypes.data, ptrs[i], out.nbytes), where)
                results[b["name"]] = out
        return results
    finally:
        for m in memory:
            m.free()


def reference(op, arrays, steps=1):
    """The float64 reference of `steps` applications (tess_reference_steps):
    exact and deterministic, on the CPU. Takes and returns fields as run()
    does, in float64."""
    where = f"reference({op})"
    _check_steps(steps, where)
    fields = _Fields(op, arrays, "f64", where)
    inputs = fields.inputs("f64", where, convert=True)
    bufs = buffers(op, fields.shape, "f64")
    host = [inputs[b["name"]].copy() if b["name"] in inputs else np.empty(b["shape"]) for b in bufs]
    ptrs = (ctypes.c_void_p * len(bufs))(*[a.ctypes.data for a in host])
    by_address = {a.ctypes.data: a for a in host}   # advancing swaps the pointers
    sh, nd = shape_arg(fields.shape)
    check(lib().tess_reference_steps(op.encode(), sh, nd, ptrs, len(bufs), steps, None, None), where)
    return fields.give_back({b["name"]: by_address[ptrs[i]] for i, b in enumerate(bufs) if b["advanced"]})
