"""Contexts and kernels: tess_open, tess_tune, tess_kernel_get, tess_dispatch
and the runs of a kernel, with every failure raised as tessera.Error."""
import ctypes

from . import _lib
from . import _arrays

_c = None


def lib():
    """The loaded library (loaded on first use, so importing needs none)."""
    global _c
    if _c is None:
        try:
            _c = _lib.load()
        except OSError as e:
            raise Error(str(e)) from None
    return _c


class Error(Exception):
    """A failure of tessera: the library's message (tess_errmsg) or the
    package's own; `status` is the tess_status name ("invalid argument",
    "not found", ...), `code` its number."""

    def __init__(self, message, code=_lib.TESS_ERR_ARG):
        super().__init__(message)
        self.code = code
        self.status = _lib.text(lib().tess_status_name(code)) if _c is not None else ""


def check(status, where):
    """Raises Error with the library's message for a failed call."""
    if status != 0:
        raise Error(f"{where}: {_lib.text(lib().tess_errmsg())}", status)


def _task_text(op, shape, dtype):
    return f"{op} {dtype} {'x'.join(str(int(e)) for e in shape)}"


def _shape(shape):
    try:
        shape = tuple(int(e) for e in shape)
    except TypeError:
        raise Error(f"shape must be a sequence of extents, slowest first (z, y, x), not {shape!r}") from None
    return shape


def buffers(op, shape, dtype="f32"):
    """The buffers of op's kernel for a task, in the order a run takes them:
    a list of dicts (name, role, dtype, count, shape, advances, advanced,
    range); `advances` is the index of the input an output advances, or None."""
    shape = _shape(shape)
    return [{"name": _lib.text(b.name), "role": _lib.ROLES[b.role], "dtype": _lib.text(b.dtype),
             "elem_bytes": b.elem_bytes, "count": b.count, "shape": shape[len(shape) - b.rank:],
             "advances": b.advances if b.advances >= 0 else None, "advanced": bool(b.advanced),
             "range": (b.lo, b.hi)} for b in buffer_infos(op, shape, dtype)]


def buffer_infos(op, shape, dtype):
    """tess_op_list_buffers' array of tess_buffer_info, as tess_op_advance takes it."""
    cap = 64
    info = (_lib.BufferInfo * cap)()
    n = ctypes.c_int()
    sh, nd = _lib.shape_arg(shape)
    check(lib().tess_op_list_buffers(op.encode(), sh, nd, dtype.encode(), info, cap, ctypes.byref(n)),
          f"buffers({_task_text(op, shape, dtype)})")
    return (_lib.BufferInfo * n.value).from_buffer_copy(info)


def counts(op, shape, dtype="f32"):
    """Compulsory bytes and flops of one application and the relative
    tolerance of its outputs per step, as a dict."""
    shape = _shape(shape)
    b, f, t = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    sh, nd = _lib.shape_arg(shape)
    check(lib().tess_op_counts(op.encode(), sh, nd, dtype.encode(), ctypes.byref(b), ctypes.byref(f), ctypes.byref(t)),
          f"counts({_task_text(op, shape, dtype)})")
    return {"bytes": b.value, "flops": f.value, "tolerance": t.value}


def extent_names(op, shape):
    """The names the operator gives a task's extents, slowest first ("z", "y", "x")."""
    shape = _shape(shape)
    names = (ctypes.c_char * _lib.EXTENT_NAME_MAX * len(shape))()
    sh, nd = _lib.shape_arg(shape)
    check(lib().tess_op_extent_names(op.encode(), sh, nd, names), f"extent_names({op})")
    return tuple(_lib.text(n.value) for n in names)


def ops():
    """The operators tessera knows, in registration order: a list of dicts
    (name, family, summary, default_shape, backends, extents, attrs)."""
    out = []
    info = _lib.OpInfo()
    while True:
        st = lib().tess_op_info_at(len(out), ctypes.byref(info))
        if st == _lib.TESS_ERR_NOTFOUND:
            return out
        check(st, "ops()")
        out.append({"name": _lib.text(info.name), "family": _lib.text(info.family),
                    "summary": _lib.text(info.summary),
                    "default_shape": tuple(int(e) for e in _lib.text(info.default_shape).split("x")),
                    "backends": _lib.text(info.backends).split(","),
                    "extents": tuple(_lib.text(info.extents).split(",")), "attrs": _lib.text(info.attrs)})


class Context:
    """The records database (tess_open): db is its path, None for
    $TESSERA_DB, else $XDG_DATA_HOME/tessera/records.db, created when
    missing; readonly opens an existing one for reading only and creates
    nothing (tess_open_readonly). Use it in a with block, or close() it;
    the kernels of dispatch() go with it."""

    def __init__(self, db=None, readonly=False):
        self._ptr = ctypes.c_void_p()
        opener = lib().tess_open_readonly if readonly else lib().tess_open
        check(opener(ctypes.byref(self._ptr), db.encode() if db is not None else None),
              f"Context({db!r})" if db is not None else "Context()")
        self.db = _lib.text(lib().tess_db_path(self._ptr))

    def records(self):
        """Every tuned task on every device: a list of dicts (task, device,
        evaluations, ok, best_ms: None when none ran correctly, best_config)."""
        out = []

        def one(t, _user):
            t = t.contents
            out.append({"task": _lib.text(t.task), "device": _lib.text(t.device), "evaluations": t.evaluations,
                        "ok": t.ok, "best_ms": t.best_ms if t.ok else None, "best_config": _lib.text(t.best_config)})
            return 0

        check(lib().tess_db_list(self._handle(), _lib.DB_TASK_FN(one), None), f"records({self.db})")
        return out

    def close(self):
        if self._ptr:
            lib().tess_close(self._ptr)
            self._ptr = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._ptr:
            raise Error("the context is closed")
        return self._ptr

    def tune(self, op, shape, dtype="f32", backend=None, *, budget=None, seconds=None, strategy=None, seed=None,
             batch=None, window=None, transfer=None, fix=None, full_timing=False, compile_timeout=None,
             error_budget=None):
        """Tunes op on shape (slowest first) and dtype on a backend ("cpu",
        "cuda"; None: the best present); every result goes to the records as
        it is measured. Returns the report as a dict. Tune before a kernel
        runs in this process: tuning forks processes that cannot run kernels
        after it."""
        shape = _shape(shape)
        opt = lib().tess_tune_options_default()
        for name, value in (("budget", budget), ("seconds", seconds), ("seed", seed), ("batch", batch),
                            ("window", window), ("compile_timeout_s", compile_timeout),
                            ("error_budget", error_budget)):
            if value is not None:
                setattr(opt, name, value)
        opt.full_timing = 1 if full_timing else 0
        for name, value in (("strategy", strategy), ("transfer", transfer), ("fix", fix)):
            if value is not None:
                setattr(opt, name, value.encode())
        report = _lib.TuneReport()
        sh, nd = _lib.shape_arg(shape)
        check(lib().tess_tune(self._handle(), op.encode(), sh, nd, dtype.encode(), _bytes(backend),
                              ctypes.byref(opt), ctypes.byref(report)),
              f"tune({_task_text(op, shape, dtype)})")
        return _report_dict(report)

    def kernel(self, op, shape, dtype="f32", backend=None):
        """The kernel for a task: the best recorded config for this device,
        else the template's default (tess_kernel_get)."""
        shape = _shape(shape)
        ptr = ctypes.c_void_p()
        sh, nd = _lib.shape_arg(shape)
        check(lib().tess_kernel_get(self._handle(), op.encode(), sh, nd, dtype.encode(), _bytes(backend),
                                    ctypes.byref(ptr)), f"kernel({_task_text(op, shape, dtype)})")
        return Kernel(ptr, op, shape, dtype, backend, owner=None)

    def dispatch(self, op, shape, dtype="f32", backend=None, *, online_budget=0, online_seconds=0.0, verify=True):
        """Run-time dispatch (tess_dispatch): the kernel for a task, cached in
        the context (later calls cost a lookup); with online_budget a task
        never tuned here is tuned lightly first."""
        shape = _shape(shape)
        opt = lib().tess_dispatch_options_default()
        opt.online_budget, opt.online_seconds, opt.verify = online_budget, online_seconds, 1 if verify else 0
        ptr = ctypes.c_void_p()
        sh, nd = _lib.shape_arg(shape)
        check(lib().tess_dispatch(self._handle(), op.encode(), sh, nd, dtype.encode(), _bytes(backend),
                                  ctypes.byref(opt), ctypes.byref(ptr)), f"dispatch({_task_text(op, shape, dtype)})")
        return Kernel(ptr, op, shape, dtype, backend, owner=self)


def _bytes(text):
    return text.encode() if text else None


def _report_dict(r):
    d = {}
    for name, _ in r._fields_:
        value = getattr(r, name)
        if isinstance(value, bytes):
            value = value.decode()
        d[name] = value
    d["status_counts"] = {_lib.text(lib().tess_outcome_label(i)): n for i, n in enumerate(r.status_counts)}
    return d


class Kernel:
    """A compiled kernel of a task. Run it on arrays in buffer order
    (kernel.buffers): NumPy arrays for a cpu kernel, device memory for cuda
    (objects with __cuda_array_interface__, such as CuPy arrays, or Memory
    from alloc())."""

    def __init__(self, ptr, op, shape, dtype, backend, owner):
        self._ptr = ptr
        self._owner = owner   # the Context of a dispatched kernel, which owns it
        self.op, self.shape, self.dtype, self.backend = op, shape, dtype, backend
        self.task = _task_text(op, shape, dtype)
        self.buffers = buffers(op, shape, dtype)

    def close(self):
        """Releases a kernel from Context.kernel(); a dispatched one stays in its context."""
        if self._ptr and self._owner is None:
            lib().tess_kernel_destroy(self._ptr)
        self._ptr = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._ptr or (self._owner is not None and not self._owner._ptr):
            raise Error(f"kernel {self.task}: closed (or its context is)")
        return self._ptr

    @property
    def config(self):
        return _lib.text(lib().tess_kernel_config(self._handle()))

    @property
    def origin(self):
        """"exact", "transfer", "default" or "fallback"."""
        return _lib.text(lib().tess_kernel_origin(self._handle()))

    @property
    def note(self):
        return _lib.text(lib().tess_kernel_note(self._handle()))

    def run(self, *arrays, stream=None):
        """One application on the arrays, in buffer order. Each is checked
        against its buffer (dtype, shape, C-contiguity, writeable outputs)
        before anything runs. With stream (cuda: a CUstream as an int) the
        launches are queued without waiting."""
        where = f"run({self.task})"
        ptrs = _arrays.pointers(arrays, self.buffers, self.backend, where, Error)
        arr = (ctypes.c_void_p * len(ptrs))(*ptrs)
        if stream is None:
            check(lib().tess_kernel_run(self._handle(), arr, len(ptrs)), where)
        else:
            check(lib().tess_kernel_run_on_stream(self._handle(), arr, len(ptrs), ctypes.c_void_p(stream)), where)

    __call__ = run

    def set_scalar(self, name, value):
        check(lib().tess_kernel_set_scalar(self._handle(), name.encode(), float(value)),
              f"set_scalar({self.task}, {name})")

    def set_extent(self, name, value):
        check(lib().tess_kernel_set_extent(self._handle(), name.encode(), int(value)),
              f"set_extent({self.task}, {name})")

    def alloc(self, nbytes):
        """Memory in the kernel's execution context (device memory for cuda,
        host memory for cpu), freed with Memory.free() or when collected."""
        ptr = ctypes.c_void_p()
        check(lib().tess_kernel_alloc(self._handle(), nbytes, ctypes.byref(ptr)), f"alloc({self.task})")
        return Memory(self, ptr.value, nbytes)


class Memory:
    """Memory from Kernel.alloc: upload() and download() copy NumPy arrays."""

    def __init__(self, kernel, ptr, nbytes):
        self.kernel, self.ptr, self.nbytes = kernel, ptr, nbytes

    def _copy_check(self, a, where):
        if not a.flags.c_contiguous or a.nbytes != self.nbytes:
            raise Error(f"{where}({self.kernel.task}): the array must be C-contiguous and of {self.nbytes} bytes, "
                        f"not {a.nbytes} bytes{'' if a.flags.c_contiguous else ', non-contiguous'}")

    @property
    def tessera_memory(self):
        """The pointer a run takes (Kernel.run accepts Memory for a buffer)."""
        return self.ptr

    def upload(self, a):
        self._copy_check(a, "upload")
        check(lib().tess_kernel_upload(self.kernel._handle(), self.ptr, a.ctypes.data, self.nbytes),
              f"upload({self.kernel.task})")

    def download(self, a):
        self._copy_check(a, "download")
        if not a.flags.writeable:
            raise Error(f"download({self.kernel.task}): the array is read-only")
        check(lib().tess_kernel_download(self.kernel._handle(), a.ctypes.data, self.ptr, self.nbytes),
              f"download({self.kernel.task})")

    def free(self):
        if self.ptr and self.kernel._ptr:
            lib().tess_kernel_free(self.kernel._ptr, self.ptr)
        self.ptr = None

    def __del__(self):
        self.free()
