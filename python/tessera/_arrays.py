"""The arrays of a run: NumPy arrays (host memory) and device memory, each
checked against the buffer it stands for before any pointer reaches C."""
import numpy as np

# NumPy's dtype for each of tessera's; bf16 has none in NumPy itself: its
# buffers take uint16 or int16 arrays of the bits (or ml_dtypes' bfloat16).
_NUMPY = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "f16": np.dtype(np.float16),
          "i32": np.dtype(np.int32), "u8": np.dtype(np.uint8)}
_WRITTEN = ("out", "inout", "scratch")


def numpy_dtype(dtype):
    """The NumPy dtype of a tessera dtype, None for bf16."""
    return _NUMPY.get(dtype)


def tessera_dtype(np_dtype):
    """The task dtype of a NumPy dtype of fields, None when tessera has none
    (an integer type is a buffer's, such as labels, never a task's)."""
    for name, d in _NUMPY.items():
        if d == np_dtype and d.kind == "f":
            return name
    return None


def _dtype_fits(dt, want):
    if want == "bf16":
        return dt.name == "bfloat16" or dt in (np.dtype(np.uint16), np.dtype(np.int16))
    return dt == _NUMPY.get(want)


def _shape_fits(shape, b):
    """The buffer's shape, or any shape of as many elements in another rank
    (a flat array)."""
    shape = tuple(shape)
    if len(shape) == len(b["shape"]):
        return shape == tuple(b["shape"])
    return int(np.prod(shape, dtype=np.int64)) == b["count"]


def _host_pointer(a, b, what, error):
    if not isinstance(a, np.ndarray):
        raise error(f"{what} is a {type(a).__name__}: pass a NumPy array")
    want = b["dtype"]
    if not _dtype_fits(a.dtype, want):
        need = "uint16 (the bits)" if want == "bf16" else str(_NUMPY.get(want))
        raise error(f"{what} has dtype {a.dtype}, the buffer is {want}: pass {need}, e.g. a.astype(np.{need.split()[0]})")
    if not _shape_fits(a.shape, b):
        raise error(f"{what} has shape {tuple(a.shape)}, the buffer {tuple(b['shape'])} ({b['count']} elements)")
    if not a.flags.c_contiguous:
        raise error(f"{what} is not C-contiguous (a transposed or strided view?): pass np.ascontiguousarray(a)")
    if b["role"] in _WRITTEN and not a.flags.writeable:
        raise error(f"{what} is read-only, and the kernel writes it ({b['role']})")
    return a.ctypes.data


def _device_pointer(a, b, what, error):
    cai = a.__cuda_array_interface__
    typestr = np.dtype(cai["typestr"])
    if not _dtype_fits(typestr, b["dtype"]):
        raise error(f"{what} has dtype {typestr}, the buffer is {b['dtype']}")
    if not _shape_fits(cai["shape"], b):
        raise error(f"{what} has shape {tuple(cai['shape'])}, the buffer {tuple(b['shape'])}")
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != tuple(np.empty(cai["shape"], typestr).strides):
        raise error(f"{what} is not C-contiguous (strides {tuple(strides)})")
    if b["role"] in _WRITTEN and cai["data"][1]:
        raise error(f"{what} is read-only, and the kernel writes it ({b['role']})")
    return cai["data"][0]


def pointers(arrays, buffers, backend, where, error):
    """The pointers of arrays for the buffers of a run, after checking each."""
    if len(arrays) != len(buffers):
        names = ", ".join(b["name"] for b in buffers)
        raise error(f"{where}: got {len(arrays)} arrays, the kernel takes {len(buffers)} ({names})")
    ptrs = []
    for i, (a, b) in enumerate(zip(arrays, buffers), 1):
        what = f"{where}: array {i} ('{b['name']}')"
        nbytes = b["count"] * b["elem_bytes"]
        if hasattr(a, "tessera_memory"):   # Memory from Kernel.alloc
            if a.nbytes < nbytes:
                raise error(f"{what} holds {a.nbytes} bytes, the buffer {nbytes}")
            ptrs.append(a.tessera_memory)
        elif hasattr(a, "__cuda_array_interface__"):
            if backend == "cpu":
                raise error(f"{what} is device memory, and a cpu kernel runs on host arrays")
            ptrs.append(_device_pointer(a, b, what, error))
        else:
            if backend == "cuda":
                raise error(f"{what} is host memory, and a cuda kernel runs on device memory "
                            f"(a CuPy array, Kernel.alloc, or tessera.run, which copies)")
            ptrs.append(_host_pointer(a, b, what, error))
    return ptrs
