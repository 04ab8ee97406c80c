"""The Python package tessera: its ctypes structures against the C layout,
tuning's report, kernels run on NumPy arrays (checked against a NumPy
implementation of hdiff), the checks of arrays against buffers, run() and
reference() over many steps, and the errors, each a tessera.Error with the
library's message.

Runs as a script (CTest: exit 77 when NumPy is missing) or under pytest.
Environment: TESSERA_LIBRARY (the library under test), TESS_LAYOUT_LIBRARY
(tests/bindings/layout.c built), TESSERA_DB (scratch records)."""
import ctypes
import os
import sys

try:
    import numpy as np
except ImportError:
    np = None

SHAPE = (3, 12, 16)       # z, y, x: not tuned
TUNED = (2, 12, 16)       # tuned first, as a process must tune before it runs kernels


def expect(ok, what):
    if not ok:
        raise AssertionError(what)


def raises(fn, *words):
    """fn() raises tessera.Error whose message holds every word; returns it."""
    import tessera
    try:
        fn()
    except tessera.Error as e:
        for w in words:
            expect(w in str(e), f"expected {w!r} in the message: {e}")
        return e
    raise AssertionError(f"no tessera.Error; expected one saying {words}")


def db_path():
    return os.environ.get("TESSERA_DB") or os.path.abspath("python_test.db")


def fields(shape, dtype=np.float32 if np else None, seed=3):
    """A field that varies everywhere and a coefficient in [0.01, 0.016]."""
    z, y, x = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    u = (np.sin(0.7 * x + 0.3 * y * y) + 0.1 * z).astype(dtype)
    coeff = (0.01 + 0.001 * ((x + 2 * y + z + seed) % 7)).astype(dtype)
    return u, coeff


def hdiff_numpy(u, coeff):
    """One step of hdiff in float64: x periodic, two rows at each end of y kept."""
    u = u.astype(np.float64)
    east = lambda a: np.roll(a, -1, axis=2)
    west = lambda a: np.roll(a, 1, axis=2)
    north = lambda a: np.roll(a, -1, axis=1)
    south = lambda a: np.roll(a, 1, axis=1)
    lap = east(u) + west(u) + north(u) + south(u) - 4 * u
    flx = east(lap) - lap
    flx = np.where(flx * (east(u) - u) > 0, 0, flx)
    fly = north(lap) - lap
    fly = np.where(fly * (north(u) - u) > 0, 0, fly)
    out = u - coeff * (flx - west(flx) + fly - south(fly))
    out[:, :2, :] = u[:, :2, :]
    out[:, -2:, :] = u[:, -2:, :]
    return out


def test_tune_report():
    import tessera
    if os.path.exists(db_path()):
        os.remove(db_path())
    r = tessera.tune("hdiff", TUNED, "f32", "cpu", db=db_path(), budget=2, seed=7, transfer="off")
    expect(r["evaluations"] == 2, f"two evaluations: {r}")
    expect(sum(r["status_counts"].values()) == 2 and r["status_counts"]["ok"] >= 1, "status counts")
    expect(r["best_ms"] > 0 and r["default_ms"] > 0 and r["elapsed_s"] > 0, "times")
    expect("tile_y=" in r["best_config"] and r["device"] and r["stop_reason"], "config, device, stop reason")
    with tessera.Context(db_path()) as ctx:
        k = ctx.kernel("hdiff", TUNED, "f32", "cpu")
        expect(k.origin == "exact" and k.config == r["best_config"], f"the tuned config: {k.origin} {k.config}")
        k.close()
        d = ctx.dispatch("hdiff", TUNED, "f32", "cpu")
        expect(d.origin == "exact" and d.config == r["best_config"], "dispatch: the tuned config")
    raises(lambda: d.config, "closed")
    (rec,) = [t for t in tessera.records(db_path()) if t["task"] == "hdiff:f32:2x12x16"]
    expect(rec["evaluations"] == 2 and rec["ok"] >= 1 and rec["best_config"] == r["best_config"], f"records: {rec}")
    expect(rec["device"] == r["device"] and rec["best_ms"] == r["best_ms"], "the record's device and time")


def test_ops():
    import tessera
    ops = {o["name"]: o for o in tessera.ops()}
    expect({"hdiff", "heat3d", "softmax"} <= set(ops), f"operators: {sorted(ops)}")
    h = ops["hdiff"]
    expect(h["family"] == "stencils" and "cpu" in h["backends"] and h["extents"] == ("z", "y", "x"), f"hdiff: {h}")
    expect(h["default_shape"] == (80, 256, 256), "hdiff's default shape")


def test_layout():
    from tessera import _lib
    layout = ctypes.CDLL(os.environ["TESS_LAYOUT_LIBRARY"])
    layout.tess_test_sizeof.restype = ctypes.c_size_t
    layout.tess_test_offsetof.restype = ctypes.c_size_t
    for name, struct in _lib.STRUCTS.items():
        expect(ctypes.sizeof(struct) == layout.tess_test_sizeof(name.encode()), f"sizeof {name}")
        expect(len(struct._fields_) == layout.tess_test_field_count(name.encode()), f"fields of {name}")
        for field, _ in struct._fields_:
            expect(getattr(struct, field).offset == layout.tess_test_offsetof(name.encode(), field.encode()),
                   f"offset of {name}.{field}")


def test_errors():
    import tessera
    with open("not_a_directory", "w"):
        pass
    e = raises(lambda: tessera.Context("not_a_directory/records.db"), "not_a_directory")
    expect(e.status == "i/o error" and e.code != 0, f"status of {e}: {e.status}")
    e = raises(lambda: tessera.records("missing.db"), "no records database at missing.db")
    expect(e.status == "not found" and not os.path.exists("missing.db"), "reading creates nothing")
    raises(lambda: tessera.buffers("nosuch", SHAPE), "unknown operator 'nosuch'")
    raises(lambda: tessera.buffers("hdiff", 12), "shape must be a sequence")
    with tessera.Context(db_path()) as ctx:
        raises(lambda: ctx.kernel("hdiff", SHAPE, "f99"), "f99")
    raises(lambda: ctx.kernel("hdiff", SHAPE), "the context is closed")


def test_buffers_and_counts():
    import tessera
    b = tessera.buffers("hdiff", SHAPE)
    expect([x["name"] for x in b] == ["u", "coeff", "u_out"], f"names: {b}")
    expect([x["role"] for x in b] == ["in", "in", "out"], "roles")
    expect(b[2]["advances"] == 0 and b[0]["advanced"] and not b[1]["advanced"], "u_out advances u")
    expect(all(x["shape"] == SHAPE and x["count"] == 3 * 12 * 16 for x in b), "shapes slowest first")
    expect(b[1]["range"][0] == 0 and b[1]["range"][1] > 0, "the coefficient's range")
    expect(tessera.extent_names("hdiff", SHAPE) == ("z", "y", "x"), "extent names")
    c = tessera.counts("hdiff", SHAPE)
    expect(c["bytes"] == 3 * 3 * 12 * 16 * 4 and c["flops"] > 0 and 0 < c["tolerance"] < 1e-3, f"counts: {c}")


def test_kernel_run():
    import tessera
    u, coeff = fields(SHAPE)
    out = np.full(SHAPE, np.nan, np.float32)
    with tessera.Context(db_path()) as ctx, ctx.kernel("hdiff", SHAPE, "f32", "cpu") as k:
        expect(k.origin != "exact", "an untuned task has no exact config")
        k.run(u, coeff, out)
        want = hdiff_numpy(u, coeff)
        tol = tessera.counts("hdiff", SHAPE)["tolerance"]
        diff = np.abs(out - want).max() / (1 + np.abs(want).max())
        expect(diff <= tol, f"one step differs from NumPy's by {diff} (tolerance {tol})")
        expect(np.array_equal(out[:, [0, 1, -2, -1], :], u[:, [0, 1, -2, -1], :]), "the band of y keeps its values")
        expect(np.all(out[:, 2:-2, :] != u[:, 2:-2, :]), "every other point changes")
        flat = np.empty(u.size, np.float32)
        k(u, coeff, flat)
        expect(np.array_equal(flat.reshape(SHAPE), out), "a flat output of as many elements")
        # Memory of the kernel's context (host memory on the cpu) stands for arrays.
        mem = [k.alloc(a.nbytes) for a in (u, coeff, out)]
        mem[0].upload(u)
        mem[1].upload(coeff)
        k.run(*mem)
        back = np.empty_like(out)
        mem[2].download(back)
        expect(np.array_equal(back, out), "a run on Memory")
        for m in mem:
            m.free()
        raises(lambda: k.set_scalar("no_such_scalar", 1), "no scalar argument 'no_such_scalar'")
        raises(lambda: k.set_extent("x", 8), "x")


def test_int32_buffer():
    """cross_entropy's labels are an i32 buffer: an int32 array is taken as it is."""
    import tessera
    rows, cols = 4, 16
    logits = np.sin(np.arange(rows * cols, dtype=np.float32)).reshape(rows, cols) * 3
    labels = np.array([0, 5, 15, 7], np.int32)
    loss, lse = np.full(rows, np.nan, np.float32), np.full(rows, np.nan, np.float32)
    with tessera.Context(db_path()) as ctx, ctx.kernel("cross_entropy", (rows, cols), "f32", "cpu") as k:
        k.run(logits, labels, loss, lse)
        raises(lambda: k.run(logits, labels.astype(np.int64), loss, lse), "the buffer is i32")
    x = logits.astype(np.float64)
    want_lse = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1)
    want = want_lse - x[np.arange(rows), labels]
    expect(np.allclose(lse, want_lse, atol=1e-4) and np.allclose(loss, want, atol=1e-4),
           f"cross-entropy from int32 labels: {loss} against {want}")


class _DeviceArray:
    """Device memory as CuPy and Numba describe it."""
    def __init__(self, shape):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (1 << 40, False), "version": 3}


def test_array_checks():
    import tessera
    u, coeff = fields(SHAPE)
    out = np.full(SHAPE, -7, np.float32)
    with tessera.Context(db_path()) as ctx, ctx.kernel("hdiff", SHAPE, "f32", "cpu") as k:
        raises(lambda: k.run(u, coeff), "got 2 arrays, the kernel takes 3 (u, coeff, u_out)")
        raises(lambda: k.run(u, coeff.astype(np.float64), out), "array 2 ('coeff') has dtype float64, the buffer is f32")
        raises(lambda: k.run(u, coeff[:, :-1], out), "array 2 ('coeff') has shape (3, 11, 16), the buffer (3, 12, 16)")
        raises(lambda: k.run(u, coeff, np.zeros(10, np.float32)), "has shape (10,)")
        wide = np.zeros((3, 12, 32), np.float32)
        raises(lambda: k.run(u, coeff, wide[:, :, ::2]), "array 3 ('u_out') is not C-contiguous")
        raises(lambda: k.run(u, np.asfortranarray(coeff), out), "array 2 ('coeff') is not C-contiguous")
        frozen = out.copy()
        frozen.flags.writeable = False
        raises(lambda: k.run(u, coeff, frozen), "array 3 ('u_out') is read-only")
        raises(lambda: k.run(u.tolist(), coeff, out), "array 1 ('u') is a list: pass a NumPy array")
        raises(lambda: k.run(u, coeff, _DeviceArray(SHAPE)), "device memory, and a cpu kernel runs on host arrays")
        expect(np.all(out == -7), "a refused run writes nothing")
        e = raises(lambda: k.run(u, coeff), "run(hdiff f32 3x12x16)")
        expect(e.status == "invalid argument", f"status {e.status}")


def test_run_and_reference():
    import tessera
    u, coeff = fields(SHAPE)
    steps = 25
    got = tessera.run("hdiff", {"u": u, "coeff": coeff}, steps=steps, backend="cpu", db=db_path())
    ref = tessera.reference("hdiff", {"u": u, "coeff": coeff}, steps=steps)
    expect(set(got) == {"u"} and got["u"].dtype == np.float32 and got["u"].shape == SHAPE, "the state comes back")
    expect(ref["u"].dtype == np.float64, "the reference is float64")
    want = u.astype(np.float64)
    for _ in range(steps):
        want = hdiff_numpy(want, coeff.astype(np.float64))
    expect(np.abs(ref["u"] - want).max() < 1e-12, "the reference is NumPy's hdiff")
    tol = tessera.counts("hdiff", SHAPE)["tolerance"] * np.sqrt(steps)
    diff = np.abs(got["u"] - ref["u"]).max() / (1 + np.abs(ref["u"]).max())
    expect(diff <= tol, f"{steps} steps differ from the reference by {diff} (tolerance {tol})")
    expect(np.abs(got["u"] - u).max() > 0.01, "the field changed")
    expect(np.array_equal(u, fields(SHAPE)[0]), "the inputs are left alone")

    # float64 fields run the f64 task; an operator of one input takes one array.
    got64 = tessera.run("hdiff", {"u": u.astype(np.float64), "coeff": coeff.astype(np.float64)}, steps=steps,
                        backend="cpu", db=db_path())
    expect(got64["u"].dtype == np.float64 and np.abs(got64["u"] - ref["u"]).max() < 1e-10, "an f64 run")
    heat = np.zeros((8, 8, 8), np.float32)
    heat[3:5, 3:5, 3:5] = 1
    hot = tessera.run("heat3d", heat, steps=4, backend="cpu", db=db_path())
    expect(isinstance(hot, np.ndarray) and hot.shape == heat.shape, "one array in, one out")
    expect(np.abs(hot - tessera.reference("heat3d", heat, steps=4)).max() < 1e-5, "heat3d as its reference")

    raises(lambda: tessera.run("hdiff", {"u": u}, db=db_path()), "no field for coeff (the inputs of hdiff: u, coeff)")
    raises(lambda: tessera.run("hdiff", {"u": u, "coeff": coeff, "v": u}, db=db_path()), "hdiff has no input v")
    raises(lambda: tessera.run("hdiff", u, db=db_path()), "hdiff takes 2 input fields (u, coeff)")
    raises(lambda: tessera.run("hdiff", {"u": u, "coeff": coeff}, steps=0, db=db_path()), "steps must be an integer >= 1")
    raises(lambda: tessera.run("hdiff", {"u": u, "coeff": coeff.astype(np.float64)}, db=db_path()),
           "field 'coeff' has dtype float64, the task is f32")
    raises(lambda: tessera.run("hdiff", {"u": u.astype(np.int32), "coeff": coeff}, db=db_path()),
           "field 'u' has dtype int32")


TESTS = [test_tune_report, test_ops, test_layout, test_errors, test_buffers_and_counts, test_kernel_run, test_array_checks,
         test_run_and_reference]


def main(tests):
    if np is None:
        print("skipped: NumPy is not installed (pip install numpy)")
        return 77
    failures = 0
    for t in tests:
        try:
            t()
            print(f"ok   {t.__name__}")
        except Exception as e:   # report every test, not only the first failure
            failures += 1
            print(f"FAIL {t.__name__}: {type(e).__name__}: {e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(TESTS))
