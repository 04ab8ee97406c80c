"""libtessera through ctypes: finding the library, the structs of tessera.h
(ctypes structures of the same layout; tests/bindings checks them against the
C compiler's) and the prototypes of the functions the package calls."""
import ctypes
import ctypes.util
import os

c_int, c_double, c_char_p, c_void_p, c_size_t = ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
c_int64, c_uint64 = ctypes.c_int64, ctypes.c_uint64

TESS_ERR_ARG = 1
ROLES = ("in", "out", "scratch", "inout")
ROLE_INPUT, ROLE_OUTPUT, ROLE_SCRATCH, ROLE_INOUT = range(4)
EXTENT_NAME_MAX = 16
KEY_LEN = 320
TESS_ERR_NOTFOUND = 6


class TuneOptions(ctypes.Structure):
    _fields_ = [("strategy", c_char_p), ("budget", c_int), ("seconds", c_double), ("seed", c_uint64),
                ("batch", c_int), ("window", c_int), ("transfer", c_char_p), ("full_timing", c_int),
                ("fix", c_char_p), ("compile_timeout_s", c_double), ("error_budget", c_double),
                ("progress", c_void_p), ("progress_user", c_void_p), ("cancel", c_void_p)]


class TuneReport(ctypes.Structure):
    _fields_ = [("best_config", ctypes.c_char * 512), ("best_ms", c_double), ("best_gbps", c_double),
                ("best_gflops", c_double), ("default_ms", c_double), ("ceiling_gbps", c_double),
                ("ceiling_gflops", c_double), ("bound", ctypes.c_char * 32), ("bound_ms", c_double),
                ("fraction_of_ceiling", c_double), ("evaluations", c_int), ("elapsed_s", c_double),
                ("status_counts", c_int * 6), ("stop_reason", ctypes.c_char * 96), ("device", ctypes.c_char * 320),
                ("warm_configs", c_int), ("transfer_from", ctypes.c_char * 1024), ("best_spread", c_double),
                ("default_spread", c_double), ("working_set_bytes", c_double), ("cache_bytes", c_double),
                ("best_error", c_double), ("best_exact_config", ctypes.c_char * 512), ("best_exact_ms", c_double),
                ("best_exact_error", c_double)]


class DispatchOptions(ctypes.Structure):
    _fields_ = [("online_budget", c_int), ("online_seconds", c_double), ("verify", c_int)]


class BufferInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 24), ("role", c_int), ("dtype", ctypes.c_char * 8),
                ("elem_bytes", c_size_t), ("count", c_int64), ("rank", c_int), ("advances", c_int),
                ("advanced", c_int), ("lo", c_double), ("hi", c_double)]


class OpInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("family", c_char_p), ("summary", c_char_p), ("default_shape", c_char_p),
                ("backends", ctypes.c_char * 64), ("extents", c_char_p), ("attrs", ctypes.c_char * 256)]


class DbTask(ctypes.Structure):
    _fields_ = [("task", ctypes.c_char * KEY_LEN), ("device", ctypes.c_char * KEY_LEN), ("evaluations", c_int),
                ("ok", c_int), ("best_ms", c_double), ("best_config", ctypes.c_char * 1024)]


DB_TASK_FN = ctypes.CFUNCTYPE(c_int, ctypes.POINTER(DbTask), c_void_p)


class Comparison(ctypes.Structure):
    _fields_ = [("max_diff", c_double), ("worst", c_int64), ("nonfinite", c_int64), ("ref_nonfinite", c_int64)]


STRUCTS = {"tess_tune_options": TuneOptions, "tess_tune_report": TuneReport,
           "tess_dispatch_options": DispatchOptions, "tess_buffer_info": BufferInfo,
           "tess_comparison": Comparison, "tess_op_info": OpInfo, "tess_db_task": DbTask}

_P = ctypes.POINTER
_SHAPE = _P(c_int64)
_PROTOTYPES = {
    "tess_errmsg": (c_char_p, []),
    "tess_status_name": (c_char_p, [c_int]),
    "tess_open": (c_int, [_P(c_void_p), c_char_p]),
    "tess_open_readonly": (c_int, [_P(c_void_p), c_char_p]),
    "tess_close": (None, [c_void_p]),
    "tess_db_path": (c_char_p, [c_void_p]),
    "tess_op_info_at": (c_int, [c_int, _P(OpInfo)]),
    "tess_outcome_label": (c_char_p, [c_int]),
    "tess_db_list": (c_int, [c_void_p, DB_TASK_FN, c_void_p]),
    "tess_tune_options_default": (TuneOptions, []),
    "tess_tune": (c_int, [c_void_p, c_char_p, _SHAPE, c_int, c_char_p, c_char_p, _P(TuneOptions), _P(TuneReport)]),
    "tess_kernel_get": (c_int, [c_void_p, c_char_p, _SHAPE, c_int, c_char_p, c_char_p, _P(c_void_p)]),
    "tess_dispatch_options_default": (DispatchOptions, []),
    "tess_dispatch": (c_int, [c_void_p, c_char_p, _SHAPE, c_int, c_char_p, c_char_p, _P(DispatchOptions),
                              _P(c_void_p)]),
    "tess_kernel_config": (c_char_p, [c_void_p]),
    "tess_kernel_origin": (c_char_p, [c_void_p]),
    "tess_kernel_note": (c_char_p, [c_void_p]),
    "tess_kernel_run": (c_int, [c_void_p, _P(c_void_p), c_int]),
    "tess_kernel_run_on_stream": (c_int, [c_void_p, _P(c_void_p), c_int, c_void_p]),
    "tess_kernel_destroy": (None, [c_void_p]),
    "tess_kernel_set_scalar": (c_int, [c_void_p, c_char_p, c_double]),
    "tess_kernel_set_extent": (c_int, [c_void_p, c_char_p, c_int64]),
    "tess_kernel_alloc": (c_int, [c_void_p, c_size_t, _P(c_void_p)]),
    "tess_kernel_free": (None, [c_void_p, c_void_p]),
    "tess_kernel_upload": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t]),
    "tess_kernel_download": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t]),
    "tess_op_check": (c_int, [c_char_p]),
    "tess_op_list_buffers": (c_int, [c_char_p, _SHAPE, c_int, c_char_p, _P(BufferInfo), c_int, _P(c_int)]),
    "tess_op_extent_names": (c_int, [c_char_p, _SHAPE, c_int, _P(ctypes.c_char * EXTENT_NAME_MAX)]),
    "tess_op_counts": (c_int, [c_char_p, _SHAPE, c_int, c_char_p, _P(c_double), _P(c_double), _P(c_double)]),
    "tess_op_advance": (None, [_P(BufferInfo), c_int, _P(c_void_p)]),
    "tess_reference_steps": (c_int, [c_char_p, _SHAPE, c_int, _P(c_void_p), c_int, ctypes.c_long, c_void_p,
                                     c_void_p]),
}


def _candidates():
    """Where to look for libtessera, first match wins."""
    env = os.environ.get("TESSERA_LIBRARY")
    if env:
        return [env]
    found = []
    try:
        from . import _installed   # written by `cmake --install`: the library beside the package
        found.append(os.path.normpath(os.path.join(os.path.dirname(__file__), _installed.LIBRARY)))
    except ImportError:
        pass
    name = ctypes.util.find_library("tessera")
    found.append(name or "libtessera.so.0")
    return found


def load():
    """The library with its prototypes set; OSError naming where it looked."""
    tried = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        return lib
    raise OSError("tessera: cannot load libtessera: tried " + "; ".join(tried) +
                  ". Set TESSERA_LIBRARY to the path of libtessera.so (build/libtessera.so in a build tree)")


def shape_arg(shape):
    """A task's shape as the C API takes it: (int64 array, ndim)."""
    return (c_int64 * len(shape))(*shape), len(shape)


def text(value):
    """A C string (bytes) as str; None as ''."""
    return value.decode() if value else ""
