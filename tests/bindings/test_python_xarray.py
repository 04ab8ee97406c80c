"""tessera.run and tessera.reference on xarray objects: a Dataset's fields
are found by name, dimensions named x, y, z in any order are put in the
operator's order and back, coordinates and attributes are kept. Exits 77
(skipped) without NumPy or xarray; runs under pytest too, skipping there."""
import sys

from test_python import db_path, expect, fields, main, np, raises

try:
    import xarray as xr
except ImportError:
    xr = None
    if "pytest" in sys.modules:
        import pytest
        pytest.skip("xarray is not installed", allow_module_level=True)

SHAPE = (3, 12, 16)


def dataset():
    u, coeff = fields(SHAPE)
    coords = {"z": [100.0, 200.0, 300.0], "y": np.linspace(-60, 60, 12), "x": np.arange(16) * 22.5}
    ds = xr.Dataset({"u": (("z", "y", "x"), u, {"units": "K"}),
                     "coeff": (("z", "y", "x"), coeff),
                     "orography": (("y", "x"), np.ones((12, 16)))},
                    coords=coords, attrs={"title": "a test"})
    return ds


def test_dataset():
    import tessera
    ds = dataset()
    out = tessera.run("hdiff", ds, steps=5, backend="cpu", db=db_path())
    expect(isinstance(out, xr.Dataset), "a Dataset comes back")
    expect(out.attrs == ds.attrs and out["u"].attrs == {"units": "K"}, "attributes kept")
    expect(all(np.array_equal(out[c], ds[c]) for c in ds.coords), "coordinates kept")
    expect(np.array_equal(out["coeff"], ds["coeff"]) and "orography" in out, "the other variables kept")
    plain = tessera.run("hdiff", {"u": ds["u"].values, "coeff": ds["coeff"].values}, steps=5, backend="cpu",
                        db=db_path())
    expect(np.array_equal(out["u"].values, plain["u"]), "the same numbers as on NumPy arrays")
    ref = tessera.reference("hdiff", ds, steps=5)
    expect(ref["u"].dtype == np.float64 and ref["u"].dims == ("z", "y", "x"), "the reference as a Dataset")


def test_dimension_order():
    import tessera
    ds = dataset()
    turned = ds.transpose("x", "z", "y")
    out = tessera.run("hdiff", turned, steps=5, backend="cpu", db=db_path())
    expect(out["u"].dims == ("x", "z", "y"), f"the caller's order: {out['u'].dims}")
    straight = tessera.run("hdiff", ds, steps=5, backend="cpu", db=db_path())
    expect(np.array_equal(out["u"].transpose("z", "y", "x").values, straight["u"].values), "the same field")


def test_dataarray():
    import tessera
    heat = xr.DataArray(np.zeros((8, 8, 8), np.float32), dims=("z", "y", "x"), name="u", attrs={"units": "K"})
    heat[3:5, 3:5, 3:5] = 1
    out = tessera.run("heat3d", heat, steps=3, backend="cpu", db=db_path())
    expect(isinstance(out, xr.DataArray) and out.name == "u" and out.attrs == {"units": "K"}, "a DataArray back")
    expect(float(out.max()) < 1 and float(out.sum()) > 0, "diffused")
    raises(lambda: tessera.run("hdiff", dataset()[["u"]], db=db_path()), "no field for coeff")


if __name__ == "__main__":
    if np is not None and xr is None:
        print("skipped: xarray is not installed (pip install xarray)")
        sys.exit(77)
    sys.exit(main([test_dataset, test_dimension_order, test_dataarray]))
